/* Tests for lib/engine/share.c: legacy sessions kept in the server's store
 * (mcp_session_share) and adopted by another server sharing it
 * (mcp_session_adopt). Two servers share one in-process store, whose
 * answers come at once, as two processes share Redis (tests/redis and the
 * HTTP suites run adoption over a real store and real sockets): srv holds
 * the session through P (the entries fixture, as ALICE), B adopts it
 * through Q. Every argument error, a record of another principal, an
 * ended session, a failing store and every allocation failure. */
#include <check.h>
#include <cjson/cJSON.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "entries.h"
#include "testutil.h"

static mcp_store *g_store;
static mcp_server *B;
static tu_peer Q;
static const mcp_principal EVE = {.subject = "eve"};

static void share_setup(void) {
  setup();
  ck_assert_int_eq(mcp_server_new(&INFO, &B), 0);
  mcp_server_set_log(B, tu_silent_log, NULL);
  ck_assert_int_eq(mcp_server_add_tool(B, &TOOL_RUN, NULL), 0);
  add_surface(B);
  ck_assert(!mcp_server_shares_sessions(B));
  g_store = mcp_store_new_local();
  ck_assert_ptr_nonnull(g_store);
  ck_assert_int_eq(mcp_server_set_store(srv, g_store), 0);
  ck_assert_int_eq(mcp_server_set_store(B, g_store), 0);
  ck_assert(mcp_server_shares_sessions(B));
  tu_peer_open_with(&Q, B, &ALICE, inspect);
}

static void share_teardown(void) {
  tu_peer_close(&Q);
  mcp_server_free(B);
  teardown();
  mcp_store_free(g_store);
}

/* What one adoption answered. */
typedef struct adopted {
  int calls, rc;
} adopted;

static void on_adopted(void *arg, int rc) {
  adopted *a = arg;
  a->calls++;
  a->rc = rc;
}

/* Adopts id into p's session; the in-process store answers at once. */
static int adopt(tu_peer *p, const char *id) {
  adopted a = {0};
  ck_assert_int_eq(mcp_session_adopt(p->session, id, 60000, on_adopted, &a), 0);
  ck_assert_int_eq(a.calls, 1);
  return a.rc;
}

/* What the store keeps under key: the record's text (NULL: none), parsed
 * (caller frees), and whether it is final. */
typedef struct kept {
  cJSON *value;
  bool final, found;
  char holder[32];
} kept;

static void on_got(void *arg, int rc, const mcp_store_record *recs, unsigned n,
                   bool more, const char *why) {
  (void)more;
  (void)why;
  kept *g = arg;
  ck_assert_int_eq(rc, 0);
  if (n == 1 && recs[0].value) {
    g->found = true;
    g->value = cJSON_ParseWithLength(recs[0].value, recs[0].len);
    g->final = recs[0].final;
    snprintf(g->holder, sizeof g->holder, "%s",
             recs[0].holder ? recs[0].holder : "");
  }
}

static kept record_of(const char *key) {
  kept g = {0};
  ck_assert_int_eq(mcp_store_get(g_store, key, on_got, &g), 0);
  return g;
}

START_TEST(another_server_adopts_the_state) {
  tu_legacy_init(&P, "2025-06-18", "{\"sampling\":{}}");
  ck_assert_int_eq(mcp_session_share(P.session, "n1.abc", 60000), 0);
  cJSON_Delete(
      tu_ask(&P, tu_req(2, "logging/setLevel", "{\"level\":\"warning\"}")));
  cJSON_Delete(tu_ask(
      &P, tu_req(3, "resources/subscribe", "{\"uri\":\"file:///readme\"}")));
  kept g = record_of("session:n1.abc");
  ck_assert(g.found && !g.final);
  tu_assert_json(g.value, "{\"state\":2,\"version\":\"2025-06-18\","
                          "\"caps\":{\"sampling\":{}},\"log\":3,"
                          "\"subs\":[\"file:///readme\"],"
                          "\"subject\":\"alice\",\"scopes\":[\"read\"],"
                          "\"all\":false}");
  cJSON_Delete(g.value);
  char first_holder[32];
  snprintf(first_holder, sizeof first_holder, "%s", g.holder);

  ck_assert_int_eq(adopt(&Q, "n1.abc"), 0);
  /* Q goes on without a handshake, in the version it negotiated. */
  ck_assert_str_eq(mcp_session_protocol_version(Q.session), "2025-06-18");
  cJSON *r = tu_ask(&Q, tu_req(4, "tools/list", NULL));
  tu_assert_json(r, "{\"result\":{\"tools\":[{\"name\":\"run\"}]}}");
  cJSON_Delete(r);
  /* Its subscription came along: a change made on B reaches it. */
  tu_clear(&Q);
  ck_assert_int_eq(mcp_server_resource_updated(B, "file:///readme"), 1);
  ck_assert_uint_eq(Q.nout, 1);
  tu_assert_msg(&Q, 0,
                "{\"method\":\"notifications/resources/updated\","
                "\"params\":{\"uri\":\"file:///readme\"}}");
  /* The copy srv held is told (the store's event): it is stale now, and
   * hears no more changes; Q's is not. */
  ck_assert(mcp_session_moved(P.session));
  ck_assert(!mcp_session_moved(Q.session));
  ck_assert(!mcp_session_moved(NULL));
  tu_clear(&P);
  ck_assert_int_eq(mcp_server_resource_updated(srv, "file:///readme"), 0);
  ck_assert_uint_eq(P.nout, 0);
  /* The record now names B, and follows Q's changes. */
  cJSON_Delete(tu_ask(
      &Q, tu_req(5, "resources/unsubscribe", "{\"uri\":\"file:///readme\"}")));
  g = record_of("session:n1.abc");
  ck_assert_str_ne(g.holder, first_holder);
  tu_assert_json(g.value, "{\"subs\":[],\"log\":3}");
  cJSON_Delete(g.value);
  /* Adopted back by srv: now B's copy is the stale one. */
  tu_peer back;
  tu_peer_open(&back, srv, &ALICE);
  ck_assert_int_eq(adopt(&back, "n1.abc"), 0);
  ck_assert(mcp_session_moved(Q.session));
  ck_assert(!mcp_session_moved(back.session));
  /* An adoption event that arrives late (older than this copy), or one
   * that says no time, leaves the newer copy as it is. */
  static const char late[] = "{\"node\":\"elsewhere\",\"session\":"
                             "\"adopted\",\"since\":1,\"key\":"
                             "\"session:n1.abc\"}";
  static const char timeless[] = "{\"node\":\"elsewhere\",\"session\":"
                                 "\"adopted\",\"key\":\"session:n1.abc\"}";
  ck_assert_int_eq(mcp_store_publish(g_store, late, sizeof late - 1), 0);
  ck_assert_int_eq(mcp_store_publish(g_store, timeless, sizeof timeless - 1),
                   0);
  ck_assert(!mcp_session_moved(back.session));
  ck_assert_ptr_nonnull(strstr(g_log, "says nothing known"));
  tu_peer_close(&back);
}
END_TEST

START_TEST(a_session_is_adopted_once_initialized) {
  /* Shared before initialize: nothing is written until it is answered. */
  ck_assert_int_eq(mcp_session_share(P.session, "early", 60000), 0);
  kept g = record_of("session:early");
  ck_assert(!g.found);
  ck_assert_int_eq(adopt(&Q, "early"), MCP_ENOENT);
  cJSON_Delete(tu_ask(&P, tu_text("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
                                  "\"initialize\",\"params\":{"
                                  "\"protocolVersion\":\"2025-03-26\","
                                  "\"capabilities\":{},\"clientInfo\":{"
                                  "\"name\":\"c\",\"version\":\"1\"}}}")));
  g = record_of("session:early");
  tu_assert_json(g.value, "{\"state\":1,\"version\":\"2025-03-26\"}");
  cJSON_Delete(g.value);
  /* Adopted between initialize and notifications/initialized: the
   * client's notification still completes the handshake there. */
  ck_assert_int_eq(adopt(&Q, "early"), 0);
  ck_assert_int_eq(tu_send(&Q,
                           "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/"
                           "initialized\"}"),
                   0);
  g = record_of("session:early");
  tu_assert_json(g.value, "{\"state\":2}");
  cJSON_Delete(g.value);
}
END_TEST

START_TEST(only_its_principal_adopts_it) {
  tu_legacy_init(&P, "2025-06-18", "{}");
  ck_assert_int_eq(mcp_session_share(P.session, "n1.x", 60000), 0);
  tu_peer eve, root, anon;
  tu_peer_open(&eve, B, &EVE);
  tu_peer_open(&root, B, &ROOT);
  tu_peer_open(&anon, B, NULL);
  ck_assert_int_eq(adopt(&eve, "n1.x"), MCP_ENOENT);
  /* The same subject with more scopes is another principal here. */
  ck_assert_int_eq(adopt(&root, "n1.x"), MCP_ENOENT);
  ck_assert_int_eq(adopt(&anon, "n1.x"), MCP_ENOENT);
  ck_assert_int_eq(adopt(&Q, "n1.nosuch"), MCP_ENOENT);
  /* A refused adoption leaves the session new: initialize works. */
  tu_legacy_init(&eve, "2025-06-18", "{}");
  tu_peer_close(&eve);
  tu_peer_close(&root);
  tu_peer_close(&anon);
  ck_assert_int_eq(adopt(&Q, "n1.x"), 0);
}
END_TEST

START_TEST(an_ended_session_is_never_adopted) {
  tu_legacy_init(&P, "2025-06-18", "{}");
  ck_assert_int_eq(mcp_session_share(P.session, "n1.end", 60000), 0);
  mcp_session_unshare(P.session);
  mcp_session_unshare(P.session); /* twice: once is all it does */
  kept g = record_of("session:n1.end");
  ck_assert(g.found && g.final);
  tu_assert_json(g.value, "{\"ended\":true}");
  cJSON_Delete(g.value);
  ck_assert_int_eq(adopt(&Q, "n1.end"), MCP_ENOENT);
  /* A change after the end writes nothing. */
  cJSON_Delete(
      tu_ask(&P, tu_req(2, "logging/setLevel", "{\"level\":\"error\"}")));
  g = record_of("session:n1.end");
  tu_assert_json(g.value, "{\"ended\":true}");
  cJSON_Delete(g.value);
  mcp_session_unshare(NULL);
  /* A session freed without unshare stays adoptable: its process stops
   * and hands it over. */
  tu_peer other;
  tu_peer_open(&other, srv, &ALICE);
  tu_legacy_init(&other, "2025-03-26", "{}");
  ck_assert_int_eq(mcp_session_share(other.session, "n1.left", 60000), 0);
  tu_peer_close(&other);
  ck_assert_int_eq(adopt(&Q, "n1.left"), 0);
}
END_TEST

/* Settled as ended by another process (a DELETE that reached it): the
 * next write here is refused, and the copy here is stale. */
START_TEST(a_session_ended_elsewhere_is_stale_here) {
  tu_legacy_init(&P, "2025-06-18", "{}");
  ck_assert_int_eq(mcp_session_share(P.session, "n1.gone", 60000), 0);
  ck_assert(!mcp_session_moved(P.session));
  static const char ended[] = "{\"ended\":true}";
  mcp_store_record rec = {.key = "session:n1.gone",
                          .value = ended,
                          .len = sizeof ended - 1,
                          .ttl_ms = 60000,
                          .final = true};
  kept g = {0};
  ck_assert_int_eq(mcp_store_put(g_store, &rec, on_got, &g), 0);
  cJSON_Delete(g.value);
  cJSON_Delete(
      tu_ask(&P, tu_req(2, "logging/setLevel", "{\"level\":\"info\"}")));
  ck_assert(mcp_session_moved(P.session));
  ck_assert_int_eq(adopt(&Q, "n1.gone"), MCP_ENOENT);
}
END_TEST

START_TEST(arguments_are_checked) {
  tu_legacy_init(&P, "2025-06-18", "{}");
  char longid[300];
  memset(longid, 'a', sizeof longid - 1);
  longid[sizeof longid - 1] = '\0';
  ck_assert_int_eq(mcp_session_share(NULL, "x", 1), MCP_EINVAL);
  ck_assert_int_eq(mcp_session_share(P.session, NULL, 1), MCP_EINVAL);
  ck_assert_int_eq(mcp_session_share(P.session, "", 1), MCP_EINVAL);
  ck_assert_int_eq(mcp_session_share(P.session, "x", 0), MCP_EINVAL);
  ck_assert_int_eq(mcp_session_share(P.session, longid, 1), MCP_ELIMIT);
  longid[247] = '\0'; /* "session:" and 247 bytes: the most a key holds */
  ck_assert_int_eq(mcp_session_share(P.session, longid, 1000), 0);
  ck_assert_int_eq(mcp_session_share(P.session, "again", 1000), MCP_EINVAL);
  adopted a = {0};
  ck_assert_int_eq(mcp_session_adopt(Q.session, "x", 1000, NULL, &a),
                   MCP_EINVAL);
  ck_assert_int_eq(mcp_session_adopt(NULL, "x", 1000, on_adopted, &a),
                   MCP_EINVAL);
  ck_assert_int_eq(mcp_session_adopt(Q.session, "x", 0, on_adopted, &a),
                   MCP_EINVAL);
  /* An initialized session takes no other's state. */
  ck_assert_int_eq(mcp_session_adopt(P.session, "x", 1000, on_adopted, &a),
                   MCP_EINVAL);
  ck_assert_int_eq(a.calls, 0);
  ck_assert(!mcp_server_shares_sessions(NULL));
  /* A server whose store keeps no records shares nothing. */
  mcp_server_set_store(B, NULL);
  ck_assert(!mcp_server_shares_sessions(B));
  ck_assert_int_eq(mcp_session_share(Q.session, "x", 1000), MCP_ENOTSUP);
  ck_assert_int_eq(mcp_session_adopt(Q.session, "x", 1000, on_adopted, &a),
                   MCP_ENOTSUP);
}
END_TEST

static int sleep_ms(long ms) {
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  return nanosleep(&ts, NULL);
}

START_TEST(a_used_session_outlives_its_ttl) {
  /* Kept 1.5 s from each write; a message after half of that writes it
   * again, so a session in use is never lost to its TTL. */
  tu_legacy_init(&P, "2025-06-18", "{}");
  ck_assert_int_eq(mcp_session_share(P.session, "n1.ttl", 1500), 0);
  sleep_ms(900);
  cJSON_Delete(tu_ask(&P, tu_req(2, "ping", NULL)));
  sleep_ms(900);
  kept g = record_of("session:n1.ttl");
  ck_assert(g.found);
  cJSON_Delete(g.value);
  /* In use without messages (a transport's open stream): the same. */
  sleep_ms(900);
  mcp_session_touch(P.session);
  mcp_session_touch(NULL);
  sleep_ms(900);
  g = record_of("session:n1.ttl");
  ck_assert(g.found);
  cJSON_Delete(g.value);
  /* Unused, it goes. */
  sleep_ms(1700);
  g = record_of("session:n1.ttl");
  ck_assert(!g.found);
}
END_TEST

/* ---- a store that fails every record operation ----------------------------
 */

static int fail_take(void *impl, const char *key, unsigned calls, unsigned per,
                     mcp_store_rate_done done, void *arg) {
  (void)impl;
  (void)key;
  (void)calls;
  (void)per;
  done(arg, MCP_EIO, NULL, "down");
  return 0;
}

static void fail_describe(void *impl, char *buf, unsigned long size) {
  (void)impl;
  snprintf(buf, size, "a failing store");
}

static int fail_put(void *impl, const mcp_store_record *rec,
                    mcp_store_records_done done, void *arg) {
  (void)impl;
  (void)rec;
  done(arg, MCP_EIO, NULL, 0, false, "the store is down");
  return 0;
}

static int fail_get(void *impl, const char *key, mcp_store_records_done done,
                    void *arg) {
  (void)impl;
  (void)key;
  done(arg, MCP_EIO, NULL, 0, false, "the store is down");
  return 0;
}

static int fail_list(void *impl, const char *index, unsigned long long after,
                     const char *after_key, unsigned max,
                     mcp_store_records_done done, void *arg) {
  (void)index;
  (void)after;
  (void)after_key;
  (void)max;
  return fail_get(impl, "", done, arg);
}

static int fail_join(void *impl, const char *node, unsigned lease_ms) {
  (void)impl;
  (void)node;
  (void)lease_ms;
  return 0;
}

static const mcp_store_ops FAILING = {
    .rate_take = fail_take,
    .describe = fail_describe,
    .record_put = fail_put,
    .record_get = fail_get,
    .record_list = fail_list,
    .node_join = fail_join,
};

START_TEST(a_failing_store_is_said) {
  mcp_store *bad = mcp_store_new(&FAILING, NULL);
  ck_assert_ptr_nonnull(bad);
  ck_assert_int_eq(mcp_server_set_store(srv, bad), 0);
  ck_assert_int_eq(mcp_server_set_store(B, bad), 0);
  /* The session goes on where it is; the failed write is logged. */
  tu_legacy_init(&P, "2025-06-18", "{}");
  ck_assert_int_eq(mcp_session_share(P.session, "n1.down", 60000), 0);
  cJSON *r = tu_ask(&P, tu_req(2, "ping", NULL));
  tu_assert_json(r, "{\"result\":{}}");
  cJSON_Delete(r);
  ck_assert_ptr_nonnull(strstr(g_log, "was not kept in the store"));
  ck_assert_int_eq(adopt(&Q, "n1.down"), MCP_EIO);
  mcp_server_set_store(srv, g_store);
  mcp_server_set_store(B, g_store);
  mcp_store_free(bad);
}
END_TEST

/* ---- every allocation failing -------------------------------------------- */

static const char *INIT =
    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{"
    "\"protocolVersion\":\"2025-06-18\",\"capabilities\":{\"roots\":{}},"
    "\"clientInfo\":{\"name\":\"c\",\"version\":\"1\"}}}";

/* A session shared on one server, changed, and adopted on another; run
 * with allocation n failing. Whatever fails is an error, never a crash or
 * a leak. */
static bool oom_run(long n, void *user) {
  (void)n;
  tu_sink *k = user;
  mcp_store *st = mcp_store_new_local();
  mcp_server *a = NULL, *b = NULL;
  mcp_session *m = NULL, *r = NULL;
  bool ok =
      st && mcp_server_new(&INFO, &a) == 0 && mcp_server_new(&INFO, &b) == 0;
  if (ok) {
    mcp_server_set_log(a, tu_silent_log, NULL);
    mcp_server_set_log(b, tu_silent_log, NULL);
  }
  ok = ok && mcp_server_set_store(a, st) == 0 &&
       mcp_server_set_store(b, st) == 0 &&
       mcp_session_new(a, &ALICE, tu_sink_send, k, &m) == 0 &&
       mcp_session_new(b, &ALICE, tu_sink_send, k, &r) == 0;
  adopted got = {0};
  if (ok) {
    ok = mcp_session_share(m, "n1.oom", 60000) == 0;
    mcp_session_receive(m, INIT, strlen(INIT));
    static const char *const more[] = {
        "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}",
        "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"logging/setLevel\","
        "\"params\":{\"level\":\"info\"}}"};
    for (size_t i = 0; i < TU_COUNT(more); i++)
      mcp_session_receive(m, more[i], strlen(more[i]));
    ok = ok && mcp_session_adopt(r, "n1.oom", 60000, on_adopted, &got) == 0 &&
         got.calls == 1 && got.rc == 0 &&
         mcp_session_protocol_version(r) != NULL;
  }
  mcp_session_free(m);
  mcp_session_free(r);
  mcp_server_free(a);
  mcp_server_free(b);
  mcp_store_free(st);
  return ok;
}

static void oom_after(long n, bool ok, bool clean, void *user) {
  tu_sink_free(user, n, NULL);
  if (clean)
    ck_assert_msg(ok, "the run without a failure adopts the session");
  tu_assert_no_leak(n);
}

START_TEST(every_allocation_failing) {
  tu_sink k = {0};
  tu_alloc_every(20000, oom_run, oom_after, &k);
}
END_TEST

int main(void) {
  Suite *s = suite_create("share");
  TCase *t = tu_tcase(s, "share", share_setup, share_teardown, 60);
  tcase_add_test(t, another_server_adopts_the_state);
  tcase_add_test(t, a_session_is_adopted_once_initialized);
  tcase_add_test(t, only_its_principal_adopts_it);
  tcase_add_test(t, an_ended_session_is_never_adopted);
  tcase_add_test(t, a_session_ended_elsewhere_is_stale_here);
  tcase_add_test(t, arguments_are_checked);
  tcase_add_test(t, a_used_session_outlives_its_ttl);
  tcase_add_test(t, a_failing_store_is_said);
  t = tu_tcase(s, "oom", NULL, NULL, 120);
  tcase_add_test(t, every_allocation_failing);
  return tu_run(s);
}
