/* The fixture of the engine's session suites (test_engine.c,
 * test_lifecycle.c), shared so that neither keeps a copy: a server (srv,
 * named "srv" 1.2.3, titled, with instructions) with the tools run (any
 * object of arguments; does g_fn), typed (n an integer, s a string) and
 * noargs, whose handler records what it saw; one peer P on it, without a
 * principal, whose every captured message is checked to be strict JSON at
 * teardown; and the helpers that send to P and check what it was sent.
 * Links with the static library (testinternal.h). Not thread-safe but for
 * g_log, which the server's log writes under a lock. */
#ifndef MCP_TEST_ENGINE_FIXTURE_H
#define MCP_TEST_ENGINE_FIXTURE_H

#include <check.h>
#include <mcp/mcp.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

#include "testutil.h"

/* The legacy protocol versions, oldest first. */
extern const char *const VERSIONS[4];

extern mcp_server *srv;
extern tu_peer P;

/* What the "run" tool does; NULL answers the text "ok". */
extern int (*g_fn)(mcp_call *call);
extern int g_runs;        /* handler invocations */
extern char g_args[2048]; /* the arguments the last handler saw */
extern int g_rc[8];       /* return codes recorded by handlers */
extern int g_nrc;
extern pthread_t g_thread; /* started by a handler */
extern bool g_thread_started;
/* The server's log lines, one a line. */
extern char g_log[8192];

/* The server's log callback: appends the line to g_log. */
void log_capture(mcp_log_level level, const char *message, void *user_data);
/* The handler of the three tools: counts the run, keeps the arguments in
 * g_args, then does g_fn (NULL: the text "ok"). */
int run_handler(mcp_call *call, void *user_data);

void setup(void);
/* Checks every message P was sent is strict JSON, then frees P and srv. */
void teardown(void);
/* A tcase of the suite, with setup and teardown. */
TCase *tcase(Suite *s, const char *name);

/* The i-th captured message must be strict JSON (the library's own strict
 * parser, which refuses invalid UTF-8, raw controls, duplicates...). */
void strict_at(const char *file, int line, size_t i);

/* The i-th message matches expected and is strict JSON. */
#define EXPECT(i, expected) expect_at(__FILE__, __LINE__, (i), (expected))
void expect_at(const char *file, int line, size_t i, const char *expected);

/* Exactly n messages were sent. */
#define EXPECT_COUNT(n) expect_count_at(__FILE__, __LINE__, (n))
void expect_count_at(const char *file, int line, size_t n);

/* The i-th message, byte for byte. */
#define EXPECT_RAW(i, text)                                                    \
  do {                                                                         \
    EXPECT_COUNT((i) + 1);                                                     \
    ck_assert_str_eq(P.out[(i)], (text));                                      \
  } while (0)

/* Sends json to P's session, which must take it. */
void send_ok(const char *json);
/* Sends n bytes to P's session; returns what mcp_session_receive returned. */
int send_n(const char *bytes, size_t n);
/* Sends tools/call (see tu_call_text); unlike tu_call_tool it expects no
 * particular reply, since deferred calls answer later. Returns what
 * mcp_session_receive returned. */
int call_tool(const char *id, const char *name, const char *args,
              const char *meta);
/* call_tool, which must be taken. */
void call_ok(const char *id, const char *name, const char *args,
             const char *meta);
/* Starts over on a fresh session, initialized for version (NULL: not). */
void reopen(const char *version);
/* Whether the server logged a line holding needle. */
bool logged(const char *needle);

/* A handler that answers nothing and returns 0. */
int h_nothing(mcp_call *call);
/* A ping with id 1. */
extern const char PING1[];

#endif
