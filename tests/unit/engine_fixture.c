/* The fixture of the engine's session suites (test_engine.c,
 * test_lifecycle.c): a server with the tools run, typed and noargs whose
 * handlers record what they saw, one peer P on it whose every message is
 * checked to be strict JSON, and the helpers that send to it and check
 * what it was sent. See engine_fixture.h. */
#include "engine_fixture.h"

#include <check.h>
#include <cjson/cJSON.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testinternal.h"
#include "tools.h"

const char *const VERSIONS[4] = {"2024-11-05", "2025-03-26", "2025-06-18",
                                 "2025-11-25"};

/* ---- fixture ------------------------------------------------------------ */

mcp_server *srv;
tu_peer P;

/* What the "run" tool does; NULL answers the text "ok". */
int (*g_fn)(mcp_call *call);
int g_runs;        /* handler invocations */
char g_args[2048]; /* the arguments the last handler saw */
int g_rc[8];       /* return codes recorded by handlers */
int g_nrc;
pthread_t g_thread; /* started by a handler */
bool g_thread_started;

static pthread_mutex_t g_log_lock = PTHREAD_MUTEX_INITIALIZER;
char g_log[8192];

void log_capture(mcp_log_level level, const char *message, void *user_data) {
  (void)level;
  (void)user_data;
  pthread_mutex_lock(&g_log_lock);
  size_t n = strlen(g_log);
  snprintf(g_log + n, sizeof g_log - n, "%s\n", message);
  pthread_mutex_unlock(&g_log_lock);
}

int run_handler(mcp_call *call, void *user_data) {
  (void)user_data;
  g_runs++;
  const cJSON *a = mcp_call_arguments(call);
  ck_assert(cJSON_IsObject(a));
  /* May fail in the allocation-failure test, which does not look. */
  char *args = cJSON_PrintUnformatted(a);
  snprintf(g_args, sizeof g_args, "%s", args ? args : "(no memory)");
  cJSON_free(args);
  if (g_fn)
    return g_fn(call);
  return mcp_result_text(call, "ok");
}

static const mcp_tool TOOL_RUN = TC_TOOL_RUN(run_handler);

static const mcp_tool TOOL_TYPED = {
    .name = "typed",
    .description = "Takes typed arguments.",
    .input_schema = "{\"type\":\"object\",\"properties\":{\"n\":{\"type\":"
                    "\"integer\"},\"s\":{\"type\":\"string\"}},\"required\":["
                    "\"n\"],\"additionalProperties\":false}",
    .annotations = TC_READ_ONLY,
    .handler = run_handler};

static const mcp_tool TOOL_NOARGS = {.name = "noargs",
                                     .description = "Takes no arguments.",
                                     .annotations = TC_READ_ONLY,
                                     .handler = run_handler};

static const mcp_server_info INFO = {.name = "srv",
                                     .version = "1.2.3",
                                     .title = "Test Server",
                                     .instructions = "Use it wisely."};

void setup(void) {
  g_fn = NULL;
  g_runs = 0;
  g_args[0] = '\0';
  tu_deferred_reset();
  memset(g_rc, 0, sizeof g_rc);
  g_nrc = 0;
  g_thread_started = false;
  g_log[0] = '\0';
  ck_assert_int_eq(mcp_server_new(&INFO, &srv), 0);
  mcp_server_set_log(srv, log_capture, NULL);
  ck_assert_int_eq(mcp_server_add_tool(srv, &TOOL_RUN, NULL), 0);
  ck_assert_int_eq(mcp_server_add_tool(srv, &TOOL_TYPED, NULL), 0);
  ck_assert_int_eq(mcp_server_add_tool(srv, &TOOL_NOARGS, NULL), 0);
  tu_peer_open(&P, srv, NULL);
}

void teardown(void) {
  for (size_t i = 0; i < P.nout; i++)
    strict_at(__FILE__, __LINE__, i);
  tu_peer_close(&P);
  mcp_server_free(srv);
  srv = NULL;
}

/* ---- helpers ------------------------------------------------------------ */

/* The i-th captured message must be strict JSON (the library's own strict
 * parser, which refuses invalid UTF-8, raw controls, duplicates...). */
void strict_at(const char *file, int line, size_t i) {
  char about[300];
  snprintf(about, sizeof about, "%s:%d: message %zu", file, line, i);
  tu_assert_strict(P.out[i], strlen(P.out[i]), about);
}

/* The i-th message matches expected and is strict JSON. */
void expect_at(const char *file, int line, size_t i, const char *expected) {
  tu_assert_msg_at(file, line, &P, i, expected);
  strict_at(file, line, i);
}

/* Exactly n messages were sent. */
void expect_count_at(const char *file, int line, size_t n) {
  if (P.nout != n) {
    char all[4096] = "";
    for (size_t i = 0; i < P.nout; i++) {
      size_t k = strlen(all);
      snprintf(all + k, sizeof all - k, "\n  [%zu] %.600s", i, P.out[i]);
    }
    ck_assert_msg(0, "%s:%d: %zu messages sent, expected %zu:%s", file, line,
                  P.nout, n, all);
  }
}

void send_ok(const char *json) { ck_assert_int_eq(tu_send(&P, json), 0); }

int send_n(const char *bytes, size_t n) {
  return mcp_session_receive(P.session, bytes, n);
}

/* Sends tools/call (see tu_call_text); unlike tu_call_tool it expects no
 * particular reply, since deferred calls answer later. Returns what
 * mcp_session_receive returned. */
int call_tool(const char *id, const char *name, const char *args,
              const char *meta) {
  char *msg = tu_call_text(id, name, args, meta);
  int rc = tu_send(&P, msg);
  free(msg);
  return rc;
}

void call_ok(const char *id, const char *name, const char *args,
             const char *meta) {
  ck_assert_int_eq(call_tool(id, name, args, meta), 0);
}

/* Starts over on a fresh session, initialized for version (NULL: not). */
void reopen(const char *version) {
  tu_peer_close(&P);
  tu_peer_open(&P, srv, NULL);
  if (version)
    tu_initialize(&P, version);
}

bool logged(const char *needle) {
  pthread_mutex_lock(&g_log_lock);
  bool found = strstr(g_log, needle) != NULL;
  pthread_mutex_unlock(&g_log_lock);
  return found;
}

/* Handlers used by several tests. */
int h_nothing(mcp_call *call) {
  (void)call;
  return 0;
}

const char PING1[] = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}";

/* A tcase of the suite, with setup and teardown. */
TCase *tcase(Suite *s, const char *name) {
  return tu_tcase(s, name, setup, teardown, 0);
}
