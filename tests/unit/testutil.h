/* Helpers shared by the unit suites: running a suite, a session whose
 * output is captured, request helpers, JSON comparison field by field or
 * exact, and a failing allocator. */
#ifndef MCP_TESTUTIL_H
#define MCP_TESTUTIL_H

#include <check.h>
#include <mcp/mcp.h>
#include <stddef.h>

struct cJSON;

/* The number of elements of array a. */
#define TU_COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* Runs every test of s (CK_NORMAL output), frees the runner and returns
 * EXIT_SUCCESS when none failed, else EXIT_FAILURE: a whole main(). */
int tu_run(Suite *s);

/* A session wired to a capture of everything it sends. */
typedef struct tu_peer {
  mcp_server *srv;
  mcp_session *session;
  char **out; /* captured messages, NUL-terminated */
  size_t nout, cap;
  int fail_send; /* make the send callback fail */
} tu_peer;

/* Creates a peer over srv with principal (NULL = anonymous). Aborts the
 * test on failure. */
void tu_peer_open(tu_peer *p, mcp_server *srv, const mcp_principal *principal);
void tu_peer_close(tu_peer *p);
/* Feeds one message; returns what mcp_session_receive returned. */
int tu_send(tu_peer *p, const char *json);
/* Sends initialize for version and notifications/initialized; clears the
 * capture. */
void tu_initialize(tu_peer *p, const char *version);
/* Forgets captured messages. */
void tu_clear(tu_peer *p);
/* The i-th captured message parsed (caller frees with cJSON_Delete), or
 * NULL if there is none. */
struct cJSON *tu_msg(const tu_peer *p, size_t i);
/* Clears the capture, sends msg, asserts it was accepted and answered by
 * exactly one message, and returns that reply parsed (caller frees). */
struct cJSON *tu_request(tu_peer *p, const char *msg);
/* The text of a tools/call request (caller frees with free): id is JSON
 * text such as "1" or "\"a\"", name goes between quotes as is, and args
 * and meta are JSON text or NULL to send no "arguments" or "_meta". */
char *tu_call_text(const char *id, const char *name, const char *args,
                   const char *meta);
/* tu_request of a tools/call of name with id and args (as tu_call_text). */
struct cJSON *tu_call_tool(tu_peer *p, const char *id, const char *name,
                           const char *args);
/* A log callback that drops every message. */
void tu_silent_log(mcp_log_level level, const char *message, void *user_data);

/* Checks that actual contains every member of expected (JSON text) with an
 * equal value, recursively; arrays must have the same length. The string
 * "<any>" in expected matches any present value; "<absent>" requires the
 * member to be absent. Returns NULL when it matches, else a static
 * description of the first difference. */
const char *tu_json_match(const struct cJSON *actual, const char *expected);
/* Asserts, with the message and the actual JSON on failure. */
#define tu_assert_json(actual, expected)                                       \
  tu_assert_json_at(__FILE__, __LINE__, (actual), (expected))
void tu_assert_json_at(const char *file, int line, const struct cJSON *actual,
                       const char *expected);
/* Asserts the i-th captured message matches expected. */
#define tu_assert_msg(peer, i, expected)                                       \
  tu_assert_msg_at(__FILE__, __LINE__, (peer), (i), (expected))
void tu_assert_msg_at(const char *file, int line, const tu_peer *p, size_t i,
                      const char *expected);
/* Asserts actual equals expected (JSON text) exactly: no member more, none
 * less. */
#define tu_assert_exact(actual, expected)                                      \
  tu_assert_exact_at(__FILE__, __LINE__, (actual), (expected))
void tu_assert_exact_at(const char *file, int line, const struct cJSON *actual,
                        const char *expected);

/* An allocator that counts live blocks and fails the fail_at-th allocation
 * from now (0 = never). Install with tu_alloc_install. */
typedef struct tu_alloc_state {
  long live;
  long count;
  long fail_at;
  long failures;
} tu_alloc_state;
extern tu_alloc_state tu_alloc;
void tu_alloc_install(long fail_at);
void tu_alloc_remove(void);
/* Restarts the count: the fail_at-th allocation from now fails. */
void tu_alloc_arm(long fail_at);
/* No more failures; returns how many allocations have failed so far. */
long tu_alloc_disarm(void);
/* Asserts no block is live after the run that failed allocation attempt. */
#define tu_assert_no_leak(attempt)                                             \
  ck_assert_msg(tu_alloc.live == 0, "allocation %ld: %ld blocks leaked",       \
                (long)(attempt), tu_alloc.live)

#endif
