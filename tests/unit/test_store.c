/* Tests for lib/engine/store.c: the store object (include/mcp/store.h)
 * over an implementation's operations, and the in-process store whose
 * buckets are lib/policy/ratelimit.c's: its answers come at once, on the
 * calling thread; every argument error and allocation failure. The Redis
 * store has its own suite (tests/redis). */
#include <check.h>
#include <cjson/cJSON.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "testutil.h"

/* What one take answered. */
typedef struct answer {
  int calls; /* how many times done ran */
  int rc;
  bool allowed;
  unsigned long long wait_ms;
  char why[256];
  pthread_t thread;
} answer;

static void on_done(void *arg, int rc, const mcp_store_rate_answer *a,
                    const char *why) {
  answer *ans = arg;
  ans->calls++;
  ans->rc = rc;
  ans->allowed = a ? a->allowed : false;
  ans->wait_ms = a ? a->wait_ms : 0;
  snprintf(ans->why, sizeof ans->why, "%s", why ? why : "(null)");
  ans->thread = pthread_self();
}

/* One take of key on st, which must answer before it returns. */
static answer take(mcp_store *st, const char *key, unsigned calls,
                   unsigned per) {
  answer a = {0};
  ck_assert_int_eq(mcp_store_rate_take(st, key, calls, per, on_done, &a), 0);
  ck_assert_int_eq(a.calls, 1);
  ck_assert(pthread_equal(a.thread, pthread_self()));
  return a;
}

START_TEST(local_burst_then_refused_per_key) {
  mcp_store *st = mcp_store_new_local();
  ck_assert_ptr_nonnull(st);
  for (int i = 0; i < 3; i++) {
    answer a = take(st, "alice", 3, 3600);
    ck_assert_int_eq(a.rc, 0);
    ck_assert(a.allowed);
    ck_assert_uint_eq(a.wait_ms, 0);
  }
  answer a = take(st, "alice", 3, 3600);
  ck_assert_int_eq(a.rc, 0);
  ck_assert(!a.allowed);
  /* One token of three per hour comes back in twenty minutes. */
  ck_assert_uint_ge(a.wait_ms, 1000);
  ck_assert_uint_le(a.wait_ms, 1201000);
  /* Another key has a bucket of its own. */
  a = take(st, "bob", 3, 3600);
  ck_assert(a.allowed);
  mcp_store_free(st);
}
END_TEST

START_TEST(local_describe_and_shared) {
  mcp_store *st = mcp_store_new_local();
  char buf[64];
  mcp_store_describe(st, buf, sizeof buf);
  ck_assert_str_eq(buf, "this process");
  ck_assert(!mcp_store_shared(st));
  char small[5];
  mcp_store_describe(st, small, sizeof small);
  ck_assert_str_eq(small, "this");
  mcp_store_describe(NULL, buf, sizeof buf);
  ck_assert_str_eq(buf, "");
  mcp_store_describe(st, NULL, 10);
  ck_assert(!mcp_store_shared(NULL));
  mcp_store_free(st);
  mcp_store_free(NULL);
}
END_TEST

START_TEST(arguments_refused_without_answer) {
  mcp_store *st = mcp_store_new_local();
  answer a = {0};
  ck_assert_int_eq(mcp_store_rate_take(NULL, "k", 1, 1, on_done, &a),
                   MCP_EINVAL);
  ck_assert_int_eq(mcp_store_rate_take(st, NULL, 1, 1, on_done, &a),
                   MCP_EINVAL);
  ck_assert_int_eq(mcp_store_rate_take(st, "k", 1, 1, NULL, &a), MCP_EINVAL);
  ck_assert_int_eq(mcp_store_rate_take(st, "k", 0, 1, on_done, &a), MCP_EINVAL);
  ck_assert_int_eq(mcp_store_rate_take(st, "k", 1, 0, on_done, &a), MCP_EINVAL);
  ck_assert_int_eq(a.calls, 0);
  mcp_store_free(st);
}
END_TEST

/* ---- a store of the test's own, through mcp_store_new ------------------- */

typedef struct fake {
  int takes, frees;
  char last_key[64];
  int refuse; /* what rate_take returns */
} fake;

static int fake_take(void *impl, const char *key, unsigned calls, unsigned per,
                     mcp_store_rate_done done, void *arg) {
  fake *f = impl;
  if (f->refuse)
    return f->refuse;
  f->takes++;
  snprintf(f->last_key, sizeof f->last_key, "%s", key);
  mcp_store_rate_answer a = {.allowed = calls > per, .wait_ms = 7};
  done(arg, 0, &a, "");
  return 0;
}
static void fake_describe(void *impl, char *buf, unsigned long size) {
  (void)impl;
  snprintf(buf, size, "a store of the test's");
}
static void fake_free(void *impl) { ((fake *)impl)->frees++; }

static const mcp_store_ops fake_ops = {.rate_take = fake_take,
                                       .describe = fake_describe,
                                       .free = fake_free,
                                       .shared = true};

START_TEST(custom_store_gets_its_operations) {
  fake f = {0};
  mcp_store *st = mcp_store_new(&fake_ops, &f);
  ck_assert_ptr_nonnull(st);
  ck_assert(mcp_store_shared(st));
  char buf[64];
  mcp_store_describe(st, buf, sizeof buf);
  ck_assert_str_eq(buf, "a store of the test's");
  answer a = take(st, "carol", 5, 2);
  ck_assert(a.allowed);
  ck_assert_uint_eq(a.wait_ms, 7);
  ck_assert_int_eq(f.takes, 1);
  ck_assert_str_eq(f.last_key, "carol");
  /* An implementation's refusal comes back, without an answer. */
  f.refuse = MCP_EIO;
  answer b = {0};
  ck_assert_int_eq(mcp_store_rate_take(st, "carol", 5, 2, on_done, &b),
                   MCP_EIO);
  ck_assert_int_eq(b.calls, 0);
  mcp_store_free(st);
  ck_assert_int_eq(f.frees, 1);
  /* Operations it cannot do without. */
  mcp_store_ops partial = fake_ops;
  partial.describe = NULL;
  ck_assert_ptr_null(mcp_store_new(&partial, &f));
  partial = fake_ops;
  partial.rate_take = NULL;
  ck_assert_ptr_null(mcp_store_new(&partial, &f));
  ck_assert_ptr_null(mcp_store_new(NULL, &f));
  /* No free operation: nothing is called at the end. */
  partial = fake_ops;
  partial.free = NULL;
  st = mcp_store_new(&partial, &f);
  mcp_store_free(st);
  ck_assert_int_eq(f.frees, 1);
}
END_TEST

/* ---- the server's rate limit through a store (synchronous ones) ---------
 * A store that answers at once, on the caller's thread: the call goes on
 * on that thread, its answer the request's own reply. */

static int runs;

static int work(mcp_call *call, void *user_data) {
  (void)user_data;
  runs++;
  return mcp_result_text(call, "done");
}

static const mcp_tool WORK = {
    .name = "work",
    .description = "Works.",
    .input_schema = "{\"type\":\"object\",\"properties\":{\"n\":{\"type\":"
                    "\"integer\"}},\"additionalProperties\":false}",
    .annotations = {.read_only = MCP_HINT_TRUE, .open_world = MCP_HINT_FALSE},
    .handler = work};

/* The last audit record's decision and flags. */
static mcp_decision last_decision;
static bool last_failed, last_is_error;

static void keep_audit(const mcp_audit_record *r, void *user_data) {
  (void)user_data;
  last_decision = r->decision;
  last_failed = r->failed;
  last_is_error = r->is_error;
}

static mcp_server *limited_server(mcp_store *st, unsigned calls) {
  const mcp_server_info info = {.name = "s", .version = "1"};
  mcp_server *srv = NULL;
  ck_assert_int_eq(mcp_server_new(&info, &srv), 0);
  mcp_server_set_log(srv, tu_silent_log, NULL);
  ck_assert_int_eq(mcp_server_add_tool(srv, &WORK, NULL), 0);
  ck_assert_int_eq(mcp_server_set_store(srv, st), 0);
  ck_assert_int_eq(mcp_server_set_rate_limit(srv, calls, 60), 0);
  mcp_server_set_audit(srv, keep_audit, NULL);
  return srv;
}

static const char *text_of(const cJSON *m) {
  const char *t = tu_jstr(m, "result.content.0.text");
  return t ? t : "";
}

/* The reply's text begins with prefix; frees it. */
static void expect(cJSON *m, const char *prefix) {
  ck_assert_msg(strncmp(text_of(m), prefix, strlen(prefix)) == 0,
                "expected \"%s...\", got %s", prefix, text_of(m));
  cJSON_Delete(m);
}

START_TEST(server_on_a_local_store) {
  ck_assert_int_eq(mcp_server_set_store(NULL, NULL), MCP_EINVAL);
  mcp_store *st = mcp_store_new_local();
  ck_assert_ptr_nonnull(st);
  mcp_server *srv = limited_server(st, 2);
  static const mcp_principal ERIN = {.subject = "erin"};
  tu_peer p;
  tu_peer_open(&p, srv, &ERIN);
  tu_initialize(&p, "2025-11-25");
  runs = 0;
  /* Validation after the token: the invalid call counts. */
  expect(tu_call_tool(&p, "1", "work", "{\"n\":\"x\"}"), "Invalid arguments");
  ck_assert_int_eq(last_decision, MCP_DECISION_INVALID_ARGUMENTS);
  expect(tu_call_tool(&p, "2", "work", "{}"), "done");
  expect(tu_call_tool(&p, "3", "work", "{}"),
         "rate limited: at most 2 calls every 60 s; try again in ");
  ck_assert_int_eq(runs, 1);
  /* The store is the server's no more: the server's own buckets. */
  ck_assert_int_eq(mcp_server_set_store(srv, NULL), 0);
  expect(tu_call_tool(&p, "4", "work", "{}"), "done");
  tu_peer_close(&p);
  mcp_server_free(srv);
  mcp_store_free(st);
}
END_TEST

/* A store that fails, by its answer or by its return: "rate limit
 * unavailable", and the handler never runs. */
START_TEST(server_on_a_failing_store) {
  fake f = {.refuse = MCP_EIO};
  mcp_store *st = mcp_store_new(&fake_ops, &f);
  mcp_server *srv = limited_server(st, 100); /* the fake allows: 100 > 60 */
  tu_peer p;
  tu_peer_open(&p, srv, NULL);
  tu_initialize(&p, "2025-11-25");
  runs = 0;
  expect(tu_call_tool(&p, "1", "work", "{}"),
         "rate limit unavailable: the store refused the take");
  ck_assert_int_eq(last_decision, MCP_DECISION_RATE_LIMITED);
  ck_assert(last_failed && last_is_error);
  /* Anonymous: the key names the server and the session. */
  f.refuse = 0;
  expect(tu_call_tool(&p, "2", "work", "{}"), "done");
  ck_assert_msg(strncmp(f.last_key, "a:", 2) == 0 && strlen(f.last_key) >= 20,
                "%s", f.last_key);
  ck_assert_int_eq(runs, 1);
  ck_assert_int_eq(mcp_server_set_rate_limit(srv, 1, 60), 0);
  expect(tu_call_tool(&p, "3", "work", "{}"), "rate limited");
  ck_assert_int_eq(last_decision, MCP_DECISION_RATE_LIMITED);
  ck_assert(!last_failed && last_is_error);
  tu_peer_close(&p);
  mcp_server_free(srv);
  mcp_store_free(st);
}
END_TEST

/* ---- allocation failure -------------------------------------------------- */

static bool run_local(long n, void *user) {
  (void)n;
  (void)user;
  mcp_store *st = mcp_store_new_local();
  if (st == NULL)
    return false;
  answer a = {0};
  int rc = mcp_store_rate_take(st, "dave", 2, 60, on_done, &a);
  bool ok = rc == 0 && a.calls == 1 && a.rc == 0 && a.allowed;
  /* A failure is an answer saying so, never a silent allowance. */
  if (rc == 0 && a.rc != 0) {
    ck_assert_int_eq(a.rc, MCP_ENOMEM);
    ck_assert(!a.allowed);
  }
  mcp_store_free(st);
  return ok;
}

START_TEST(local_every_allocation_failure) {
  tu_alloc_every(64, run_local, NULL, NULL);
}
END_TEST

int main(void) {
  Suite *s = suite_create("store");
  TCase *tc = tu_tcase(s, "local", NULL, NULL, 0);
  tcase_add_test(tc, local_burst_then_refused_per_key);
  tcase_add_test(tc, local_describe_and_shared);
  tcase_add_test(tc, arguments_refused_without_answer);
  tcase_add_test(tc, custom_store_gets_its_operations);
  tcase_add_test(tc, local_every_allocation_failure);
  tc = tu_tcase(s, "server", NULL, NULL, 0);
  tcase_add_test(tc, server_on_a_local_store);
  tcase_add_test(tc, server_on_a_failing_store);
  return tu_run(s);
}
