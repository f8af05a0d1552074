/* session.h: MCP as a client speaks it, over a conn: the 2026-07-28 era
 * (server/discover, then every request with its _meta) when the server
 * offers it, else the legacy handshake (initialize, then
 * notifications/initialized); tools/list page by page; tools/call and
 * tools/resolve. Every session declares the tool-resolution extension
 * (MCPC_RESOLUTION: in initialize's capabilities, and in the client
 * capabilities of every 2026-07-28 request), so that a server marks its
 * resolvable tools and answers tools/resolve. */
#ifndef MCPC_SESSION_H
#define MCPC_SESSION_H

#include "conn.h"

struct cJSON;

/* The tool-resolution extension's name. */
#define MCPC_RESOLUTION "io.modelcontextprotocol/tool-resolution"

/* The versions mcp-check speaks, newest first. */
extern const char *const mcpc_versions[];

/* The most pages and tools mcp-check reads from tools/list. */
#define MCPC_MAX_PAGES 100
#define MCPC_MAX_TOOLS 10000

typedef struct mcpc_session {
  mcpc_conn *conn;   /* borrowed */
  const char *token; /* borrowed; bearer token of every request, or NULL */
  unsigned timeout_ms;
  int modern;       /* 2026-07-28: no handshake, _meta on every request */
  int resolution;   /* the server offers tool resolution (its capabilities
                       list the extension) */
  char version[16]; /* the version in use */
  char name[128], server_version[64];
  long next_id;
} mcpc_session;

/* mcpc_session_open's answers besides 0 and -1. */
#define MCPC_UNAUTHORIZED 1 /* HTTP 401: a token is needed */

/* Opens a session: want (NULL: the newest) is tried first; a modern want
 * is probed with server/discover and falls back to initialize with the
 * newest legacy version when the server does not speak it. Returns 0, -1
 * with why (unreachable, not MCP, no common version), or
 * MCPC_UNAUTHORIZED. */
int mcpc_session_open(mcpc_session *s, mcpc_conn *conn, const char *token,
                      const char *want, unsigned timeout_ms, char *why,
                      size_t size);

/* Every tool, across pages (bounded): a cJSON array the caller frees, or
 * NULL with why. */
struct cJSON *mcpc_session_tools(mcpc_session *s, char *why, size_t size);

/* How a tools/call ended. */
typedef enum mcpc_outcome {
  MCPC_RAN = 0,   /* a result (isError false) */
  MCPC_RAN_ERROR, /* a result with isError true */
  MCPC_INPUT,     /* 2026-07-28: input_required, or a task created */
  MCPC_SCOPE,     /* refused on scope: HTTP 403 insufficient_scope or
                     JSON-RPC -31403 */
  MCPC_NO_TOKEN,  /* HTTP 401 */
  MCPC_RPC_ERROR, /* another JSON-RPC error */
  MCPC_NO_ANSWER  /* timed out, or the server went away */
} mcpc_outcome;

/* Calls a tool with arguments (may be NULL: {}). token overrides the
 * session's when not NULL. detail gets the error's code and message, or
 * the transport's reason. */
mcpc_outcome mcpc_session_call(mcpc_session *s, const char *name,
                               const struct cJSON *arguments, const char *token,
                               char *detail, size_t size);

/* Asks for the hints of a call of name with arguments (tools/resolve),
 * without running it; token as for mcpc_session_call. The outcome is
 * MCPC_RAN when the answer is a result, which *result then holds (a copy
 * the caller frees; NULL otherwise), else the error's, with detail as for
 * mcpc_session_call. */
mcpc_outcome mcpc_session_resolve(mcpc_session *s, const char *name,
                                  const struct cJSON *arguments,
                                  const char *token, struct cJSON **result,
                                  char *detail, size_t size);

/* A word for an outcome ("ran", "refused on scope", ...). */
const char *mcpc_outcome_name(mcpc_outcome o);

#endif
