/* Helpers shared by the suites (unit, http, load, torture): running a
 * suite, a session whose output is captured, request builders of both
 * eras, reply lookups, JSON comparison field by field or exact, deferred
 * calls, and a failing allocator with a driver that fails each allocation
 * in turn. */
#ifndef MCP_TESTUTIL_H
#define MCP_TESTUTIL_H

#include <check.h>
#include <mcp/mcp.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

struct cJSON;

/* The number of elements of array a. */
#define TU_COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* Runs every test of s (CK_NORMAL output), frees the runner and returns
 * EXIT_SUCCESS when none failed, else EXIT_FAILURE: a whole main(). */
int tu_run(Suite *s);

/* A suite's own check of every message a peer captures (strict JSON, a
 * count...), run before the message is kept. */
typedef void tu_inspect_fn(const char *msg, size_t len);

/* Adds to s a tcase called name with the checked fixture setup and
 * teardown (none when setup is NULL) and a timeout of timeout seconds (0:
 * Check's default). */
TCase *tu_tcase(Suite *s, const char *name, void (*setup)(void),
                void (*teardown)(void), double timeout);

/* A session wired to a capture of everything it sends. */
typedef struct tu_peer {
  mcp_server *srv;
  mcp_session *session;
  char **out; /* captured messages, NUL-terminated, without raw newline */
  size_t nout, cap;
  int fail_send;          /* make the send callback fail */
  tu_inspect_fn *inspect; /* NULL: no check beyond the raw newline */
  /* The capture may run on other threads (deferred calls, executors):
   * it appends under lock and signals more; tu_wait waits for it. */
  pthread_mutex_t lock;
  pthread_cond_t more;
} tu_peer;

/* Creates a peer over srv with principal (NULL = anonymous). Aborts the
 * test on failure. */
void tu_peer_open(tu_peer *p, mcp_server *srv, const mcp_principal *principal);
/* tu_peer_open whose capture runs inspect on every message. */
void tu_peer_open_with(tu_peer *p, mcp_server *srv,
                       const mcp_principal *principal, tu_inspect_fn *inspect);
void tu_peer_close(tu_peer *p);
/* Feeds one message; returns what mcp_session_receive returned. */
int tu_send(tu_peer *p, const char *json);
/* Sends initialize for version and notifications/initialized; clears the
 * capture. */
void tu_initialize(tu_peer *p, const char *version);
/* Forgets captured messages. */
void tu_clear(tu_peer *p);
/* Waits until p has captured at least n messages, at most ms
 * milliseconds; returns how many it has. Read them afterwards only while
 * no other thread can send more. */
size_t tu_wait(tu_peer *p, size_t n, int ms);
/* The i-th captured message parsed (caller frees with cJSON_Delete), or
 * NULL if there is none. */
struct cJSON *tu_msg(const tu_peer *p, size_t i);
/* Clears the capture, sends msg, asserts it was accepted and answered by
 * exactly one message, and returns that reply parsed (caller frees). */
struct cJSON *tu_request(tu_peer *p, const char *msg);
/* tu_request of msg, which it frees (msg from tu_text, tu_mreq...). */
struct cJSON *tu_ask(tu_peer *p, char *msg);
/* tu_send of msg, which it frees. */
int tu_send_free(tu_peer *p, char *msg);
/* initialize (legacy era, id "init") at version declaring the capabilities
 * caps (JSON text), asserting the reply agrees on version and carries no
 * resultType; then notifications/initialized (no answer). Clears the
 * capture. */
void tu_legacy_init(tu_peer *p, const char *version, const char *caps);
/* The text of a tools/call request (caller frees with free): id is JSON
 * text such as "1" or "\"a\"", name goes between quotes as is, and args
 * and meta are JSON text or NULL to send no "arguments" or "_meta". */
char *tu_call_text(const char *id, const char *name, const char *args,
                   const char *meta);
/* tu_request of a tools/call of name with id and args (as tu_call_text). */
struct cJSON *tu_call_tool(tu_peer *p, const char *id, const char *name,
                           const char *args);

/* printf into a new buffer (free with free). */
char *tu_text(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;
/* tu_text for a va_list (for helpers that take a format themselves). */
char *tu_vtext(const char *fmt, va_list ap)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 0)))
#endif
    ;
/* A request with params (JSON object text), or without when NULL. */
char *tu_req(int id, const char *method, const char *params);

/* Stateless requests of protocol 2026-07-28: the _meta members naming the
 * version and the client's capabilities caps (JSON text). */
#define TU_PV "\"io.modelcontextprotocol/protocolVersion\""
#define TU_CC "\"io.modelcontextprotocol/clientCapabilities\""
#define TU_META(caps) "{" TU_PV ":\"2026-07-28\"," TU_CC ":" caps "}"
#define TU_META_NONE TU_META("{}")
#define TU_META_ELICIT TU_META("{\"elicitation\":{}}")
/* A request whose params are {"_meta":meta, extra...}; extra is members
 * without braces, or NULL. */
char *tu_mreq(int id, const char *method, const char *meta, const char *extra);
/* A tools/call. args, meta, state (JSON text of requestState) and
 * responses (JSON text of inputResponses) may each be NULL to leave the
 * member out. */
char *tu_mcall(int id, const char *name, const char *args, const char *meta,
               const char *state, const char *responses);

/* Member key of o (NULL when o is not an object or lacks it). */
const struct cJSON *tu_get(const struct cJSON *o, const char *key);
/* The member or element at path in o: names and array indexes joined by
 * dots ("result.content.0.text"); NULL when there is none. */
const struct cJSON *tu_jget(const struct cJSON *o, const char *path);
/* The string at path in o, or NULL when it is absent or not a string. */
const char *tu_jstr(const struct cJSON *o, const char *path);
/* The "result" of a reply. */
const struct cJSON *tu_result_of(const struct cJSON *reply);
/* Asserts reply is a JSON-RPC error with code (and no result, no method)
 * whose message contains needle (when not NULL). */
#define tu_assert_error(reply, code, needle)                                   \
  tu_assert_error_at(__FILE__, __LINE__, (reply), (code), (needle))
void tu_assert_error_at(const char *file, int line, const struct cJSON *reply,
                        int code, const char *needle);

/* Deferred calls: a handler that returns tu_defer(call) leaves call
 * unfinished; tu_stash is the latest, tu_deferred[i] the i-th since
 * tu_deferred_reset (the first TU_MAX_DEFERRED), tu_ndeferred counts them
 * all. */
#define TU_MAX_DEFERRED 8
extern mcp_call *tu_stash;
extern mcp_call *tu_deferred[TU_MAX_DEFERRED];
extern int tu_ndeferred;
int tu_defer(mcp_call *call);
void tu_deferred_reset(void);

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
  long bytes; /* usable bytes of the live blocks (malloc_usable_size) */
  long count;
  long fail_at;
  long failures;
} tu_alloc_state;
extern tu_alloc_state tu_alloc;
void tu_alloc_install(long fail_at);
/* Installs it counting only (no failure), outside a Check test (a server
 * process a test started); returns what mcp_set_allocator returned. */
int tu_alloc_count(void);
void tu_alloc_remove(void);
/* The live blocks and their bytes, read under the allocator's lock (other
 * threads may be allocating). */
void tu_alloc_counts(long *blocks, long *bytes);
/* Restarts the count: the fail_at-th allocation from now fails. */
void tu_alloc_arm(long fail_at);
/* No more failures; returns how many allocations have failed so far. */
long tu_alloc_disarm(void);
/* Fails allocation n of run(n, user) for n = 1, 2, ... below max. After
 * each run the failing allocator is removed and nothing may be left
 * allocated; then after(n, ok, clean, user) is called (when not NULL) with
 * what run returned and whether no allocation failed. Stops after the first
 * clean run and returns its n; asserts there was one. */
long tu_alloc_every(long max, bool (*run)(long n, void *user),
                    void (*after)(long n, bool ok, bool clean, void *user),
                    void *user);

/* A send callback for runs under allocation failure: keeps a copy of the
 * first TU_COUNT(msgs) messages (with malloc, not through the failing
 * allocator) and counts them all. */
typedef struct tu_sink {
  char *msgs[32];
  size_t n;
} tu_sink;
int tu_sink_send(const char *msg, size_t len, void *user_data);
/* The last message, or "" when it was not kept. */
const char *tu_sink_last(const tu_sink *k);
/* Frees the copies of the run that failed allocation n, passing each to
 * check first when not NULL (about names the run). */
void tu_sink_free(tu_sink *k, long n,
                  void (*check)(const char *msg, size_t len,
                                const char *about));

/* Asserts no block is live after the run that failed allocation attempt. */
#define tu_assert_no_leak(attempt)                                             \
  ck_assert_msg(tu_alloc.live == 0, "allocation %ld: %ld blocks leaked",       \
                (long)(attempt), tu_alloc.live)

/* The ids of this process's threads, into ids (at most n); their count
 * (from /proc/self/task). */
size_t tu_thread_ids(long *ids, size_t n);

/* Of this process's threads now (their count into *now), the first that
 * is not among before (nbefore ids from tu_thread_ids) and leaves SIGHUP,
 * SIGINT or SIGTERM unblocked (its SigBlk line); 0 when there is none. */
long tu_new_thread_taking_stop_signals(const long *before, size_t nbefore,
                                       size_t *now);

#endif
