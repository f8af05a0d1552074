/* Tests for lib/engine/store.c: the store object (include/mcp/store.h)
 * over an implementation's operations, and the in-process store whose
 * buckets are lib/policy/ratelimit.c's: its answers come at once, on the
 * calling thread; every argument error and allocation failure. Events:
 * the listeners of a store hear each event published once, in order;
 * servers sharing a store tell each other's sessions of a changed resource
 * or list, never their own twice. Records: the in-process store keeps
 * the contract every store's records keep (common/store_contract.c), and
 * answers every allocation failure with a code. The Redis store has its
 * own suite
 * (tests/redis). */
#include <check.h>
#include <cjson/cJSON.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "engine.h"
#include "store_contract.h"
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
  int refuse;     /* what rate_take returns */
  int publish_rc; /* what publish returns */
  int subscribed;
  /* Leases: how many were asked for, the last want, how many tokens the
   * fake's bucket still has (it grants what it has, up to want), and what
   * rate_lease returns (0: it answers). */
  int leases;
  unsigned last_want, bucket;
  int lease_rc;
} fake;

static int fake_lease(void *impl, const char *key, unsigned calls, unsigned per,
                      unsigned want, mcp_store_rate_done done, void *arg) {
  (void)key;
  (void)calls;
  (void)per;
  fake *f = impl;
  if (f->lease_rc)
    return f->lease_rc;
  f->leases++;
  f->last_want = want;
  unsigned granted = f->bucket < want ? f->bucket : want;
  f->bucket -= granted;
  mcp_store_rate_answer a = {
      .allowed = granted > 0, .wait_ms = granted ? 0 : 9, .granted = granted};
  done(arg, 0, &a, "");
  return 0;
}

static int fake_publish(void *impl, const char *event, unsigned long len) {
  (void)event;
  (void)len;
  return ((fake *)impl)->publish_rc;
}

static int fake_subscribe(void *impl, mcp_store_event deliver, void *arg) {
  (void)deliver;
  (void)arg;
  ((fake *)impl)->subscribed++;
  return 0;
}

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

/* ---- leases ----------------------------------------------------------------
 */

static void sleep_ms(long ms) {
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

/* A high limit leases: one round trip for several takes, the rest
 * answered from the lease on this thread, never more than the bucket
 * gave; a low one takes one token a time. */
START_TEST(leases_spend_what_the_store_gave) {
  fake f = {.bucket = 100};
  mcp_store_ops ops = fake_ops;
  ops.rate_lease = fake_lease;
  mcp_store *st = mcp_store_new(&ops, &f);
  ck_assert_ptr_nonnull(st);
  /* 1,000,000 a second: 64 at once (the most). */
  int allowed = 0;
  for (int i = 0; i < 130; i++) {
    answer a = take(st, "ann", 1000000, 1);
    ck_assert_int_eq(a.rc, 0);
    allowed += a.allowed;
  }
  ck_assert_uint_eq(f.last_want, 64);
  /* 64 + 36 given, and no more: the rest refused with the store's wait. */
  ck_assert_int_eq(allowed, 100);
  ck_assert_int_eq(f.leases, 2 + 30);
  answer a = take(st, "ann", 1000000, 1);
  ck_assert(!a.allowed);
  ck_assert_uint_eq(a.wait_ms, 9);
  ck_assert_int_eq(f.takes, 0);
  /* 1% of calls, and 100 ms of refill, bound a lease. */
  f.bucket = 1000;
  take(st, "bo", 500, 1); /* 1%: 5; 100 ms: 50 */
  ck_assert_uint_eq(f.last_want, 5);
  take(st, "cy", 100000, 1000); /* 1%: 1000; 100 ms: 10 */
  ck_assert_uint_eq(f.last_want, 10);
  /* Below 2: every take is the store's rate_take. */
  take(st, "di", 150, 1);
  take(st, "di", 10000, 1000);
  ck_assert_int_eq(f.takes, 2);
  /* Another limit for the same key: the lease is not spent. */
  f.bucket = 1000;
  int before = f.leases;
  take(st, "eve", 1000000, 1);
  take(st, "eve", 1000000, 2);
  ck_assert_int_eq(f.leases, before + 2);
  /* A lease is spent within 100 ms, or lost. */
  before = f.leases;
  take(st, "fay", 1000000, 1);
  take(st, "fay", 1000000, 1);
  ck_assert_int_eq(f.leases, before + 1);
  sleep_ms(150);
  take(st, "fay", 1000000, 1);
  ck_assert_int_eq(f.leases, before + 2);
  /* The implementation's refusal comes back, without an answer. */
  f.lease_rc = MCP_EIO;
  answer none = {0};
  ck_assert_int_eq(mcp_store_rate_take(st, "gil", 1000000, 1, on_done, &none),
                   MCP_EIO);
  ck_assert_int_eq(none.calls, 0);
  mcp_store_free(st);
}
END_TEST

/* Out of memory: a lease that cannot wait is a code and no answer; one
 * whose rest cannot be kept loses the rest, never the answer. */
static bool run_lease(long n, void *user) {
  (void)n;
  (void)user;
  fake f = {.bucket = 1000};
  mcp_store_ops ops = fake_ops;
  ops.rate_lease = fake_lease;
  mcp_store *st = mcp_store_new(&ops, &f);
  if (st == NULL)
    return false;
  bool ok = true;
  for (int i = 0; i < 3; i++) {
    answer a = {0};
    int rc = mcp_store_rate_take(st, "hal", 1000000, 1, on_done, &a);
    if (rc != 0) {
      ck_assert_int_eq(rc, MCP_ENOMEM);
      ck_assert_int_eq(a.calls, 0);
      ok = false;
      continue;
    }
    ck_assert_int_eq(a.calls, 1);
    ck_assert(a.allowed);
  }
  /* Never more taken from the bucket than three leases. */
  ck_assert_uint_ge(f.bucket, 1000 - 3 * 64);
  ok = ok && f.leases == 1;
  mcp_store_free(st);
  return ok;
}

START_TEST(leases_every_allocation_failure) {
  tu_alloc_every(64, run_lease, NULL, NULL);
}
END_TEST

/* ---- events ----------------------------------------------------------------
 */

/* What a listener heard: the events' texts joined by '|'. */
typedef struct heard {
  int n;
  char text[512];
} heard;

static void on_event(void *arg, const char *event, unsigned long len) {
  heard *h = arg;
  size_t used = strlen(h->text);
  snprintf(h->text + used, sizeof h->text - used, "%s%.*s", h->n ? "|" : "",
           (int)len, event);
  h->n++;
}

START_TEST(local_events_reach_every_listener) {
  mcp_store *st = mcp_store_new_local();
  ck_assert_ptr_nonnull(st);
  heard a = {0}, b = {0};
  ck_assert_int_eq(mcp_store_listen(st, on_event, &a), 0);
  ck_assert_int_eq(mcp_store_listen(st, on_event, &a), MCP_EEXIST);
  ck_assert_int_eq(mcp_store_listen(st, on_event, &b), 0);
  ck_assert_int_eq(mcp_store_publish(st, "one", 3), 0);
  /* Bytes, not a string: a NUL inside arrives, and len bounds it. */
  ck_assert_int_eq(mcp_store_publish(st, "two!", 3), 0);
  ck_assert_int_eq(a.n, 2);
  ck_assert_str_eq(a.text, "one|two");
  ck_assert_str_eq(b.text, "one|two");
  ck_assert_int_eq(mcp_store_unlisten(st, on_event, &a), 0);
  ck_assert_int_eq(mcp_store_unlisten(st, on_event, &a), MCP_ENOENT);
  ck_assert_int_eq(mcp_store_publish(st, "three", 5), 0);
  ck_assert_int_eq(a.n, 2);
  ck_assert_int_eq(b.n, 3);
  /* Every argument error, and nothing heard of them. */
  ck_assert_int_eq(mcp_store_publish(NULL, "x", 1), MCP_EINVAL);
  ck_assert_int_eq(mcp_store_publish(st, NULL, 1), MCP_EINVAL);
  ck_assert_int_eq(mcp_store_publish(st, "x", 0), MCP_EINVAL);
  static char big[MCP_STORE_EVENT_MAX + 1];
  ck_assert_int_eq(mcp_store_publish(st, big, sizeof big), MCP_ELIMIT);
  ck_assert_int_eq(mcp_store_listen(NULL, on_event, &a), MCP_EINVAL);
  ck_assert_int_eq(mcp_store_listen(st, NULL, &a), MCP_EINVAL);
  ck_assert_int_eq(mcp_store_unlisten(NULL, on_event, &a), MCP_EINVAL);
  ck_assert_int_eq(mcp_store_unlisten(st, NULL, &a), MCP_EINVAL);
  ck_assert_int_eq(b.n, 3);
  /* Freed with a listener: the store forgets it. */
  mcp_store_free(st);
  /* A store without events says so. */
  fake f = {0};
  st = mcp_store_new(&fake_ops, &f);
  ck_assert_int_eq(mcp_store_publish(st, "x", 1), MCP_ENOTSUP);
  ck_assert_int_eq(mcp_store_listen(st, on_event, &a), MCP_ENOTSUP);
  mcp_store_free(st);
  /* publish without subscribe (or the reverse) is no store. */
  mcp_store_ops half = fake_ops;
  half.publish = fake_publish;
  ck_assert_ptr_null(mcp_store_new(&half, &f));
}
END_TEST

static int read_r(mcp_call *call, void *user_data) {
  (void)user_data;
  return mcp_result_text(call, "r");
}

/* Two servers on one in-process store, as two processes on one Redis. */
static mcp_server *g_one, *g_two;
static char g_warned[512];

static void keep_warning(mcp_log_level level, const char *message,
                         void *user_data) {
  (void)user_data;
  if (level <= MCP_LOG_WARNING)
    snprintf(g_warned, sizeof g_warned, "%s", message);
}

static mcp_server *node_on(mcp_store *st) {
  const mcp_server_info info = {.name = "node", .version = "1"};
  mcp_server *srv = NULL;
  ck_assert_int_eq(mcp_server_new(&info, &srv), 0);
  mcp_server_set_log(srv, keep_warning, NULL);
  static const mcp_resource R = {
      .uri_template = "mem:///{n}", .name = "r", .handler = read_r};
  ck_assert_int_eq(mcp_server_add_resource(srv, &R, NULL), 0);
  ck_assert_int_eq(mcp_server_set_store(srv, st), 0);
  return srv;
}

/* p, on its server, a legacy session subscribed to mem:///a. */
static void subscriber(tu_peer *p, mcp_server *srv) {
  tu_peer_open(p, srv, NULL);
  tu_legacy_init(p, "2025-11-25", "{}");
  cJSON *r =
      tu_ask(p, tu_req(2, "resources/subscribe", "{\"uri\":\"mem:///a\"}"));
  tu_assert_json(r, "{\"result\":{}}");
  cJSON_Delete(r);
  tu_clear(p);
}

/* p received exactly the notifications methods (joined by '|'); forgets
 * them. */
static void expect_told(tu_peer *p, const char *methods) {
  char got[512] = "";
  for (size_t i = 0; i < p->nout; i++) {
    cJSON *m = tu_msg(p, i);
    const char *method = tu_jstr(m, "method");
    size_t used = strlen(got);
    snprintf(got + used, sizeof got - used, "%s%s", i ? "|" : "",
             method ? method : "(a reply)");
    cJSON_Delete(m);
  }
  ck_assert_str_eq(got, methods);
  tu_clear(p);
}

START_TEST(servers_sharing_a_store_tell_each_other) {
  mcp_store *st = mcp_store_new_local();
  g_one = node_on(st);
  g_two = node_on(st);
  tu_peer on_one, on_two;
  subscriber(&on_one, g_one);
  subscriber(&on_two, g_two);
  /* A change on one: its own subscriber once (counted), the other's once
   * (heard through the store, not counted here). */
  ck_assert_int_eq(mcp_server_resource_updated(g_one, "mem:///a"), 1);
  expect_told(&on_one, "notifications/resources/updated");
  expect_told(&on_two, "notifications/resources/updated");
  cJSON *m = NULL;
  ck_assert_int_eq(mcp_server_resource_updated(g_two, "mem:///a"), 1);
  tu_wait(&on_one, 1, 0);
  m = tu_msg(&on_one, 0);
  tu_assert_json(m, "{\"method\":\"notifications/resources/updated\","
                    "\"params\":{\"uri\":\"mem:///a\"}}");
  cJSON_Delete(m);
  expect_told(&on_one, "notifications/resources/updated");
  expect_told(&on_two, "notifications/resources/updated");
  /* A resource nobody subscribed to: nobody. */
  ck_assert_int_eq(mcp_server_resource_updated(g_one, "mem:///b"), 0);
  expect_told(&on_two, "");
  /* A list changed on one reaches the other's sessions. */
  static const mcp_resource R2 = {
      .uri = "mem:///fixed", .name = "fixed", .handler = read_r};
  ck_assert_int_eq(mcp_server_add_resource(g_one, &R2, NULL), 0);
  expect_told(&on_one, "notifications/resources/list_changed");
  expect_told(&on_two, "notifications/resources/list_changed");
  /* An event that is no change: ignored, and said. */
  g_warned[0] = '\0';
  ck_assert_int_eq(mcp_store_publish(st, "{\"node\":1}", 10), 0);
  ck_assert_ptr_nonnull(strstr(g_warned, "not a change"));
  static const char NO_URI[] = "{\"node\":\"x\",\"change\":\"resource\"}";
  g_warned[0] = '\0';
  ck_assert_int_eq(mcp_store_publish(st, NO_URI, sizeof NO_URI - 1), 0);
  ck_assert_ptr_nonnull(strstr(g_warned, "not a change"));
  expect_told(&on_one, "");
  expect_told(&on_two, "");
  /* Off the store: the other hears nothing more, and tells nobody else. */
  ck_assert_int_eq(mcp_server_set_store(g_two, NULL), 0);
  ck_assert_int_eq(mcp_server_resource_updated(g_one, "mem:///a"), 1);
  expect_told(&on_one, "notifications/resources/updated");
  expect_told(&on_two, "");
  ck_assert_int_eq(mcp_server_resource_updated(g_two, "mem:///a"), 1);
  expect_told(&on_one, "");
  expect_told(&on_two, "notifications/resources/updated");
  /* Freed first, the server stops listening: the store outlives it. */
  tu_peer_close(&on_one);
  mcp_server_free(g_one);
  ck_assert_int_eq(mcp_store_publish(st, "{}", 2), 0);
  tu_peer_close(&on_two);
  mcp_server_free(g_two);
  mcp_store_free(st);
}
END_TEST

/* A store whose publish fails: the change is told here and the failure
 * logged, naming the store. */
START_TEST(server_on_a_store_that_cannot_publish) {
  fake f = {.publish_rc = MCP_EIO};
  mcp_store_ops ops = fake_ops;
  ops.publish = fake_publish;
  ops.subscribe = fake_subscribe;
  mcp_store *st = mcp_store_new(&ops, &f);
  mcp_server *srv = node_on(st);
  ck_assert_int_eq(f.subscribed, 1);
  tu_peer p;
  subscriber(&p, srv);
  g_warned[0] = '\0';
  ck_assert_int_eq(mcp_server_resource_updated(srv, "mem:///a"), 1);
  expect_told(&p, "notifications/resources/updated");
  ck_assert_msg(strstr(g_warned, "notifications/resources/updated of "
                                 "mem:///a not published to the other "
                                 "processes sharing the store a store of "
                                 "the test's") != NULL,
                "%s", g_warned);
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

/* Listening and publishing: a failure is a code, never an event heard
 * twice or a listener kept. */
static bool run_events(long n, void *user) {
  (void)n;
  (void)user;
  mcp_store *st = mcp_store_new_local();
  if (st == NULL)
    return false;
  heard h = {0};
  int rc = mcp_store_listen(st, on_event, &h);
  if (rc == 0)
    ck_assert_int_eq(mcp_store_publish(st, "e", 1), 0);
  else
    ck_assert_int_eq(rc, MCP_ENOMEM);
  ck_assert_int_eq(h.n, rc == 0 ? 1 : 0);
  ck_assert_int_eq(mcp_store_unlisten(st, on_event, &h),
                   rc == 0 ? 0 : MCP_ENOENT);
  mcp_store_free(st);
  return rc == 0;
}

START_TEST(events_every_allocation_failure) {
  tu_alloc_every(64, run_events, NULL, NULL);
}
END_TEST

/* ---- records --------------------------------------------------------------
 */

START_TEST(local_records_keep_the_contract) {
  mcp_store *st = mcp_store_new_local();
  store_contract_run(st, "local", 0);
  mcp_store_free(st);
}
END_TEST

/* The in-process table's bound: a new key meeting it full takes the place
 * of the oldest evicted key (which is then free again), and is refused
 * only when there is none (MCP_ELIMIT); a key stored is always
 * rewritten. */
START_TEST(local_table_full_takes_an_evicted_place) {
  mcp_store *st = mcp_store_new_local();
  mcp__store_local_cap(st, 3);
  mcp_store_budget b = {.name = "t", .max_records = 1};
  mcp_store_count c = {.bytes = 1, .budgets = &b, .nbudgets = 1};
  sc_answer a = sc_put_counted(st, "a", "1", NULL, NULL, 1, 60000, true, &c);
  ck_assert_int_eq(a.rc, 0);
  ck_assert_int_eq(sc_put(st, "x", "x", NULL, NULL, 2, 60000, false).rc, 0);
  /* b evicts a: three in the table, a gone among them. */
  a = sc_put_counted(st, "b", "2", NULL, NULL, 3, 60000, false, &c);
  ck_assert_int_eq(a.rc, 0);
  ck_assert_uint_eq(a.n, 2);
  ck_assert(!sc_put(st, "a", "1", NULL, NULL, 1, 60000, false).recs[0].written);
  /* y takes a's place; a is free again. */
  ck_assert(sc_put(st, "y", "y", NULL, NULL, 4, 60000, false).recs[0].written);
  ck_assert_uint_eq(sc_get(st, "y").n, 1);
  /* Full with live records: a new key is refused, a stored one is not. */
  a = sc_put(st, "a", "again", NULL, NULL, 1, 60000, false);
  ck_assert_int_eq(a.rc, MCP_ELIMIT);
  ck_assert_msg(strstr(a.why, "table is full") != NULL, "%s", a.why);
  a = sc_put(st, "x", "x2", NULL, NULL, 2, 60000, false);
  ck_assert(a.rc == 0 && a.recs[0].written);
  mcp_store_free(st);
}
END_TEST

static bool run_records(long n, void *user) {
  (void)n;
  (void)user;
  mcp_store *st = mcp_store_new_local();
  if (st == NULL)
    return false;
  int rc = mcp_store_node_join(st, "n1", 1000);
  bool ok = rc == 0;
  sc_answer a = sc_put(st, "k", "v", "n1", "i", 1, 60000, false);
  ok = ok && a.rc == 0;
  if (a.rc)
    ck_assert_int_eq(a.rc, MCP_ENOMEM);
  a = sc_list(st, "i", 0, NULL, 3);
  if (a.rc == 0 && ok)
    ck_assert_uint_eq(a.n, 1);
  ok = ok && a.rc == 0;
  a = sc_get(st, "k");
  ok = ok && a.rc == 0;
  mcp_store_free(st);
  return ok;
}

START_TEST(records_every_allocation_failure) {
  tu_alloc_every(64, run_records, NULL, NULL);
}
END_TEST

/* Counted puts: one that fails for memory changes nothing (nothing
 * written, nothing evicted, nothing counted); an evicted key stays
 * refused. */
static bool run_counted(long n, void *user) {
  (void)n;
  (void)user;
  mcp_store *st = mcp_store_new_local();
  if (st == NULL)
    return false;
  mcp_store_budget b[2] = {{.name = "tasks", .max_records = 1},
                           {.name = "bytes", .max_bytes = 10}};
  mcp_store_count c = {.bytes = 4, .budgets = b, .nbudgets = 2};
  sc_answer a = sc_put_counted(st, "a", "1", "n1", "i", 1, 60000, true, &c);
  bool ok = a.rc == 0;
  if (a.rc) {
    ck_assert_int_eq(a.rc, MCP_ENOMEM);
    ck_assert_uint_eq(sc_get(st, "a").n, 0);
  }
  /* b evicts a (when a was written). */
  a = sc_put_counted(st, "b", "2", NULL, "i", 2, 60000, false, &c);
  if (a.rc == 0 && ok) {
    ck_assert_uint_eq(a.n, 2);
    ck_assert_str_eq(a.recs[1].key, "a");
    ck_assert_str_eq(a.recs[1].holder, "n1");
  }
  if (a.rc) {
    ck_assert_int_eq(a.rc, MCP_ENOMEM);
    sc_answer g = sc_get(st, "b");
    if (g.rc == 0)
      ck_assert_uint_eq(g.n, 0);
    g = sc_get(st, "a");
    if (g.rc == 0)
      ck_assert_uint_eq(g.n, ok ? 1 : 0);
  }
  ok = ok && a.rc == 0;
  /* a, evicted, stays settled: its put is refused, or fails for memory. */
  a = sc_put(st, "a", "5", "n1", "i", 1, 60000, false);
  if (a.rc == 0 && ok)
    ck_assert(a.n == 1 && !a.recs[0].written && !a.recs[0].has_value);
  if (a.rc)
    ck_assert_int_eq(a.rc, MCP_ENOMEM);
  ok = ok && a.rc == 0;
  /* b grows within both budgets, then a put without count keeps it. */
  c.bytes = 9;
  a = sc_put_counted(st, "b", "3", NULL, "i", 2, 60000, false, &c);
  ok = ok && a.rc == 0;
  a = sc_put(st, "b", "4", NULL, "i", 2, 60000, false);
  ok = ok && a.rc == 0;
  mcp_store_free(st);
  return ok;
}

START_TEST(counted_every_allocation_failure) {
  tu_alloc_every(128, run_counted, NULL, NULL);
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
  tc = tu_tcase(s, "leases", NULL, NULL, 0);
  tcase_add_test(tc, leases_spend_what_the_store_gave);
  tcase_add_test(tc, leases_every_allocation_failure);
  tc = tu_tcase(s, "events", NULL, NULL, 0);
  tcase_add_test(tc, local_events_reach_every_listener);
  tcase_add_test(tc, servers_sharing_a_store_tell_each_other);
  tcase_add_test(tc, server_on_a_store_that_cannot_publish);
  tcase_add_test(tc, events_every_allocation_failure);
  tc = tu_tcase(s, "records", NULL, NULL, 0);
  tcase_add_test(tc, local_records_keep_the_contract);
  tcase_add_test(tc, local_table_full_takes_an_evicted_place);
  tcase_add_test(tc, records_every_allocation_failure);
  tcase_add_test(tc, counted_every_allocation_failure);
  return tu_run(s);
}
