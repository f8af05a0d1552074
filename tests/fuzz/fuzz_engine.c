/* libFuzzer target: the engine's message entry (mcp_session_receive and
 * mcp_session_receive_to), both protocol eras, on the fixture server of
 * fixture.h.
 *
 * Input without a newline: one message, fed to a fresh session (through
 * mcp_session_receive) and to a session already initialized in the
 * 2025-11-25 era with every client capability (through
 * mcp_session_receive_to and a sink), so a lone tools/call reaches the
 * handlers in both eras. Input with newlines: a sequence of messages, one a
 * line, to one fresh session, so initialize-then-call paths, answers to the
 * server's own requests and modern retries are reached. In a sequence, a
 * line starting with a tab goes through a sink (JSON allows the leading
 * whitespace), a line starting with '!' is handed to mcp_session_reject
 * instead, and empty lines are skipped as the stdio transport skips them.
 * Deferred calls are finished after each message; those still queued when
 * the sessions are freed are finished afterwards, cancelled.
 *
 * Checked beyond "no crash, no leak": every outgoing message is one strict
 * JSON-RPC object (or a batch of them) without a raw newline; receive
 * returns a documented code; every sink's done runs exactly once. With
 * FUZZ_PRINT set in the environment, outgoing messages are printed to
 * standard error (for writing seeds). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fixture.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static mcp_server *srv;
static bool print;
static long open_sinks;

static int on_send(const char *msg, size_t len, void *user_data) {
  fuzz_check_message(msg, len);
  if (print)
    fprintf(stderr, "%s< %.*s\n", (const char *)user_data, (int)len, msg);
  return 0;
}

typedef struct fuzz_sink {
  mcp_sink sink;
  bool done;
} fuzz_sink;

static void on_done(void *user_data) {
  fuzz_sink *f = user_data;
  if (f->done)
    abort(); /* done twice */
  f->done = true;
  open_sinks--;
  free(f);
}

static int sink_send(const char *msg, size_t len, void *user_data) {
  const fuzz_sink *f = user_data;
  if (f->done)
    abort(); /* a message after done */
  return on_send(msg, len, "sink");
}

static void check_rc(int rc) {
  if (rc != 0 && rc != MCP_ENOMEM)
    abort();
}

static void feed(mcp_session *s, const char *msg, size_t len, bool to_sink) {
  if (print)
    fprintf(stderr, "> %.*s\n", (int)len, msg);
  if (to_sink) {
    fuzz_sink *f = calloc(1, sizeof *f);
    if (f == NULL)
      abort();
    f->sink = (mcp_sink){.send = sink_send, .done = on_done, .user_data = f};
    open_sinks++;
    check_rc(mcp_session_receive_to(s, msg, len, &f->sink));
  } else {
    check_rc(mcp_session_receive(s, msg, len));
  }
  fuzz_finish_deferred();
}

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc;
  (void)argv;
  srv = fuzz_server_new(false);
  print = getenv("FUZZ_PRINT") != NULL;
  return 0;
}

static mcp_session *open_session(const char *label) {
  mcp_session *s = NULL;
  if (mcp_session_new(srv, &fuzz_principal, on_send, (void *)label, &s) != 0)
    abort();
  return s;
}

static void one_message(const char *msg, size_t len) {
  static const char init[] =
      "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{"
      "\"protocolVersion\":\"2025-11-25\",\"capabilities\":{\"elicitation\":"
      "{\"form\":{},\"url\":{}},\"sampling\":{\"tools\":{}},\"roots\":{"
      "\"listChanged\":true}},\"clientInfo\":{\"name\":\"fuzz\",\"version\":"
      "\"1\"}}}";
  static const char initialized[] =
      "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}";
  mcp_session *fresh = open_session("fresh");
  feed(fresh, msg, len, false);
  mcp_session *ready = open_session("ready");
  bool was = print;
  print = false;
  feed(ready, init, sizeof init - 1, false);
  feed(ready, initialized, sizeof initialized - 1, false);
  print = was;
  feed(ready, msg, len, true);
  mcp_session_free(fresh);
  mcp_session_free(ready);
}

static void sequence(const char *text, size_t size) {
  mcp_session *s = open_session("seq");
  const char *end = text + size;
  for (const char *line = text; line < end;) {
    const char *nl = memchr(line, '\n', (size_t)(end - line));
    size_t len = nl ? (size_t)(nl - line) : (size_t)(end - line);
    if (len > 0 && line[0] == '!') {
      /* A reason a transport would give: printable ASCII. */
      char why[64];
      size_t n = 0;
      for (size_t i = 1; i < len && n < sizeof why - 1; i++)
        why[n++] = line[i] >= 0x20 && line[i] < 0x7f ? line[i] : '?';
      why[n] = '\0';
      check_rc(mcp_session_reject(s, why));
    } else if (len > 0) {
      feed(s, line, len, line[0] == '\t');
    }
    line += len + 1;
  }
  mcp_session_free(s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size == 0 || size > (64u << 10))
    return 0;
  const char *text = (const char *)data;
  if (memchr(text, '\n', size) != NULL)
    sequence(text, size);
  else
    one_message(text, size);
  /* Calls deferred past their session: finished now, as cancelled. */
  fuzz_finish_deferred();
  if (open_sinks != 0)
    abort(); /* a sink whose done never came */
  return 0;
}
