/* The server the protocol-level fuzz targets (fuzz_engine, fuzz_stdio,
 * fuzz_http) serve, and the checks they share.
 *
 * Tools:
 *   echo     {text: string, required}; "error" answers isError, "fail"
 *            makes the handler fail; logs at info
 *   add      {a, b: integers} -> structuredContent {sum} with an
 *            outputSchema; reads a number and a bool too
 *   wipe     destructive, needs scope "admin" (the fuzz principal lacks it)
 *   slow     reports progress twice, watches for cancellation
 *   confirm  asks the user (elicitation) and keeps a state between rounds
 *   ask      asks the model (sampling) and the client's roots in one round
 *   later    defers: queued and finished by fuzz_finish_deferred(), or at
 *            once from inside the handler when the fixture was built with
 *            defer_early (transports whose thread the harness cannot
 *            drive) or the argument "early" is true
 *   media    image, audio, resource link, embedded text and blob
 *   stamp    formats asserted (date-time, email, uri, uuid, ipv4)
 * Prompts: greet (name required, style; completion), secret (scope admin).
 * Resources: file:///readme (text), file:///logo.png (blob), the templates
 * file:///notes/{name} (completion; "missing" is not found),
 * file:///docs/{+path} and file:///search{?q,lang}.
 * The log callback insists on one UTF-8 line per message (no CR or LF: no
 * forged log lines). An authorizer denies arguments holding "deny": true.
 * tools/list pages hold two tools, so cursors are fuzzed too. The
 * requestState key is fixed and states live ten years, so a committed
 * modern-era retry stays valid. */
#ifndef FUZZ_FIXTURE_H
#define FUZZ_FIXTURE_H

#include <mcp/mcp.h>
#include <stdbool.h>
#include <stddef.h>

/* The scopes of the principal the targets use. */
extern const mcp_principal fuzz_principal;

/* Builds the fixture server; aborts when it cannot. */
mcp_server *fuzz_server_new(bool defer_early);

/* Finishes, in order, every deferred call still queued (any thread).
 * Returns how many it finished. */
size_t fuzz_finish_deferred(void);

/* Checks one outgoing JSON-RPC message: one strict JSON object, valid
 * UTF-8, no raw newline. Aborts otherwise. */
void fuzz_check_message(const char *msg, size_t len);

#endif
