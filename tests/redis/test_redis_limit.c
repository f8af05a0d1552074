/* Tests for the rate limit through a shared store (mcp_server_set_store,
 * the rate wait of lib/engine/call.c) against a real redis-server each test
 * starts in a scratch folder of its own: two servers sharing one Redis
 * store share each principal's budget (on the session API and over HTTP),
 * anonymous callers never share one across servers; Redis stopped is a
 * clear "rate limit unavailable" with no handler run, and calls work again
 * once it is back; a call cancelled, or past its deadline, while its take
 * is in flight ends properly and its late answer is ignored; with an
 * executor, allowed calls are handed to it, refused ones never; the HTTP
 * transport stopped with a take in flight.
 *
 * Timing: every wait is a bounded loop; nothing asserts a duration. */
#include <check.h>
#include <cjson/cJSON.h>
#include <errno.h>
#include <mcp/redis.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "redis_server.h"
#include "testutil.h"
#ifdef MCP_TEST_HTTP
#include <curl/curl.h>
#include <mcp/http.h>

#include "http_client.h"
#endif

static void sleep_ms(long ms) {
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

/* ---- a redis-server of the test's own, on a unix socket ------------------ */

static rs_server g_redis;

static void redis_start(void) {
  char err[512];
  ck_assert_msg(rs_start(&g_redis, REDIS_SERVER, err, sizeof err) == 0, "%s",
                err);
}

static void redis_stop(void) { rs_stop(&g_redis); }

/* ---- two servers on one store ---------------------------------------------
 */

static mcp_store *g_store;
static mcp_server *g_a, *g_b;
static atomic_int g_runs;
static char g_log[1024];
static pthread_mutex_t g_log_lock = PTHREAD_MUTEX_INITIALIZER;

static int work(mcp_call *call, void *user_data) {
  (void)user_data;
  atomic_fetch_add(&g_runs, 1);
  return mcp_result_text(call, "done");
}

static const mcp_tool WORK = {
    .name = "work",
    .description = "Works.",
    .input_schema = "{\"type\":\"object\",\"properties\":{\"n\":{\"type\":"
                    "\"integer\"}},\"additionalProperties\":false}",
    .annotations = {.read_only = MCP_HINT_TRUE, .open_world = MCP_HINT_FALSE},
    .handler = work};

static void keep_log(mcp_log_level level, const char *message,
                     void *user_data) {
  (void)level;
  (void)user_data;
  pthread_mutex_lock(&g_log_lock);
  if (strstr(message, "rate limit:") != NULL)
    snprintf(g_log, sizeof g_log, "%s", message);
  pthread_mutex_unlock(&g_log_lock);
}

static mcp_server *server_on_store(unsigned calls) {
  const mcp_server_info info = {.name = "limited", .version = "1"};
  mcp_server *s = NULL;
  ck_assert_int_eq(mcp_server_new(&info, &s), 0);
  mcp_server_set_log(s, keep_log, NULL);
  ck_assert_msg(mcp_server_add_tool(s, &WORK, NULL) == 0, "%s",
                mcp_server_errmsg(s));
  ck_assert_int_eq(mcp_server_set_store(s, g_store), 0);
  ck_assert_int_eq(mcp_server_set_rate_limit(s, calls, 60), 0);
  return s;
}

static void setup(void) {
  char err[600];
  ck_assert_msg(rs_init(&g_redis, "mcp-rlimit", err, sizeof err) == 0, "%s",
                err);
  redis_start();
  int rc = mcp_redis_store_new(g_redis.sock, &g_store, err, sizeof err);
  ck_assert_msg(rc == 0, "%s", err);
  atomic_store(&g_runs, 0);
  g_log[0] = '\0';
  g_a = server_on_store(5);
  g_b = server_on_store(5);
}

static void teardown(void) {
  /* The servers first, then the store (which answers what is in flight),
   * as mcp_server_set_store says. */
  mcp_server_free(g_a);
  mcp_server_free(g_b);
  mcp_store_free(g_store);
  rs_remove(&g_redis);
}

static const mcp_principal ALICE = {.subject = "alice"};
static const mcp_principal BOB = {.subject = "bob"};

/* Sends a tools/call of work with id (args: JSON text) and waits (20 s at
 * most) for its one answer, which it returns (caller frees). */
static cJSON *call_wait(tu_peer *p, int id, const char *args) {
  tu_clear(p);
  char idt[16];
  snprintf(idt, sizeof idt, "%d", id);
  ck_assert_int_eq(tu_send_free(p, tu_call_text(idt, "work", args, NULL)), 0);
  ck_assert_uint_eq(tu_wait(p, 1, 20000), 1);
  cJSON *m = tu_msg(p, 0);
  ck_assert_ptr_nonnull(m);
  return m;
}

static const char *text_of(const cJSON *m) {
  const char *t = tu_jstr(m, "result.content.0.text");
  return t ? t : "";
}

static bool is_error(const cJSON *m) {
  return cJSON_IsTrue(tu_jget(m, "result.isError"));
}

/* The answer's text begins with prefix, in an isError result. */
static void assert_refused(cJSON *m, const char *prefix) {
  ck_assert_msg(is_error(m) && strncmp(text_of(m), prefix, strlen(prefix)) == 0,
                "expected \"%s...\", got %s", prefix, text_of(m));
  cJSON_Delete(m);
}

static void assert_done(cJSON *m) {
  ck_assert_msg(!is_error(m) && strcmp(text_of(m), "done") == 0,
                "expected done, got %s", text_of(m));
  cJSON_Delete(m);
}

/* One budget across both servers: 3 calls on one and 2 on the other are
 * allowed, the 6th is refused on either; bob has his own; anonymous
 * sessions never share a bucket across servers. */
START_TEST(one_budget_across_two_servers) {
  pthread_mutex_lock(&g_log_lock);
  ck_assert_msg(strstr(g_log, "across every process sharing the store") &&
                    strstr(g_log, "unix://"),
                "%s", g_log);
  pthread_mutex_unlock(&g_log_lock);
  tu_peer a, b, bob, anon_a, anon_b;
  tu_peer_open(&a, g_a, &ALICE);
  tu_peer_open(&b, g_b, &ALICE);
  tu_peer_open(&bob, g_a, &BOB);
  tu_peer_open(&anon_a, g_a, NULL);
  tu_peer_open(&anon_b, g_b, NULL);
  tu_peer *all[] = {&a, &b, &bob, &anon_a, &anon_b};
  for (int i = 0; i < 5; i++)
    tu_initialize(all[i], "2025-11-25");
  for (int i = 0; i < 3; i++)
    assert_done(call_wait(&a, 10 + i, "{}"));
  for (int i = 0; i < 2; i++)
    assert_done(call_wait(&b, 20 + i, "{}"));
  assert_refused(call_wait(&b, 30, "{}"), "rate limited: at most 5 calls "
                                          "every 60 s; try again in ");
  assert_refused(call_wait(&a, 31, "{}"), "rate limited");
  ck_assert_int_eq(atomic_load(&g_runs), 5);
  /* Validation comes after the token: an invalid call of bob's counts. */
  assert_refused(call_wait(&bob, 40, "{\"n\":\"x\"}"), "Invalid arguments");
  for (int i = 0; i < 4; i++)
    assert_done(call_wait(&bob, 41 + i, "{}"));
  assert_refused(call_wait(&bob, 45, "{}"), "rate limited");
  for (int i = 0; i < 5; i++)
    assert_done(call_wait(&anon_a, 50 + i, "{}"));
  assert_refused(call_wait(&anon_a, 55, "{}"), "rate limited");
  assert_done(call_wait(&anon_b, 56, "{}"));
  ck_assert_int_eq(atomic_load(&g_runs), 5 + 4 + 5 + 1);
  for (int i = 0; i < 5; i++)
    tu_peer_close(all[i]);
}
END_TEST

/* Redis stopped: the call is answered "rate limit unavailable", its
 * handler never runs; once Redis is back, calls work again. */
START_TEST(redis_stopped_then_back) {
  tu_peer a;
  tu_peer_open(&a, g_a, &ALICE);
  tu_initialize(&a, "2025-11-25");
  assert_done(call_wait(&a, 1, "{}"));
  redis_stop();
  assert_refused(call_wait(&a, 2, "{}"), "rate limit unavailable: Redis is "
                                         "unavailable");
  ck_assert_int_eq(atomic_load(&g_runs), 1);
  redis_start();
  bool back = false;
  for (int i = 0; i < 400 && !back; i++) {
    cJSON *m = call_wait(&a, 100 + i, "{}");
    back = !is_error(m);
    if (!back) {
      ck_assert_msg(strncmp(text_of(m), "rate limit unavailable", 22) == 0,
                    "%s", text_of(m));
      sleep_ms(50);
    }
    cJSON_Delete(m);
  }
  ck_assert(back);
  ck_assert_int_eq(atomic_load(&g_runs), 2);
  tu_peer_close(&a);
}
END_TEST

/* Waits (20 s at most) until the store has answered: a call of bob's made
 * after it is answered. */
static void store_answers(void) {
  tu_peer bob;
  tu_peer_open(&bob, g_b, &BOB);
  tu_initialize(&bob, "2025-11-25");
  assert_done(call_wait(&bob, 900, "{}"));
  tu_peer_close(&bob);
}

/* A call cancelled while its take is in flight (Redis hung): no answer,
 * the handler never runs, and the late answer is ignored. */
START_TEST(cancelled_while_taking) {
  tu_peer a;
  tu_peer_open(&a, g_a, &ALICE);
  tu_initialize(&a, "2025-11-25");
  ck_assert_int_eq(kill(g_redis.pid, SIGSTOP), 0);
  tu_clear(&a);
  ck_assert_int_eq(tu_send_free(&a, tu_call_text("7", "work", "{}", NULL)), 0);
  ck_assert_int_eq(tu_send(&a,
                           "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/"
                           "cancelled\",\"params\":{\"requestId\":7}}"),
                   0);
  ck_assert_int_eq(kill(g_redis.pid, SIGCONT), 0);
  store_answers();
  /* The take of id 7 was queued before bob's: it is answered, and so was
   * ignored, by now. */
  ck_assert_uint_eq(a.nout, 0);
  ck_assert_int_eq(atomic_load(&g_runs), 1);
  tu_peer_close(&a);
}
END_TEST

/* A call whose deadline passes while its take is in flight is answered
 * "timeout" by mcp_server_expire; its late answer is ignored. And a session
 * closed with a take in flight ends its call when the answer comes. */
START_TEST(deadline_while_taking) {
  mcp_server_set_call_timeout(g_a, 50);
  tu_peer a;
  tu_peer_open(&a, g_a, &ALICE);
  tu_initialize(&a, "2025-11-25");
  ck_assert_int_eq(kill(g_redis.pid, SIGSTOP), 0);
  tu_clear(&a);
  ck_assert_int_eq(tu_send_free(&a, tu_call_text("8", "work", "{}", NULL)), 0);
  for (int i = 0; i < 400 && tu_wait(&a, 1, 0) == 0; i++) {
    mcp_server_expire(g_a);
    sleep_ms(25);
  }
  ck_assert_uint_eq(tu_wait(&a, 1, 0), 1);
  cJSON *m = tu_msg(&a, 0);
  assert_refused(m, "timeout");
  /* Another call in flight, then its session closed. */
  ck_assert_int_eq(tu_send_free(&a, tu_call_text("9", "work", "{}", NULL)), 0);
  tu_peer_close(&a);
  ck_assert_int_eq(kill(g_redis.pid, SIGCONT), 0);
  store_answers();
  ck_assert_int_eq(atomic_load(&g_runs), 1);
}
END_TEST

/* The store freed with a take in flight (the server freed first, as
 * mcp_server_set_store asks): the call ends, its handler never runs. */
START_TEST(store_freed_with_a_take_in_flight) {
  tu_peer a;
  tu_peer_open(&a, g_a, &ALICE);
  tu_initialize(&a, "2025-11-25");
  ck_assert_int_eq(kill(g_redis.pid, SIGSTOP), 0);
  tu_clear(&a);
  ck_assert_int_eq(tu_send_free(&a, tu_call_text("5", "work", "{}", NULL)), 0);
  mcp_server_free(g_a);
  g_a = NULL;
  mcp_server_free(g_b); /* every server that has the store, first */
  g_b = NULL;
  mcp_store_free(g_store); /* answers the take with an error */
  g_store = NULL;
  ck_assert_uint_eq(tu_wait(&a, 1, 0), 1);
  assert_refused(tu_msg(&a, 0), "rate limit unavailable");
  ck_assert_int_eq(atomic_load(&g_runs), 0);
  tu_peer_close(&a);
}
END_TEST

/* With an executor installed, an allowed call is handed to it from the
 * thread that delivered the store's answer; a refused one never is. */
static atomic_int g_submits;

static int submit_at_once(mcp_call *call, void *user_data) {
  (void)user_data;
  atomic_fetch_add(&g_submits, 1);
  return mcp_call_execute(call, "test executor");
}

START_TEST(allowed_calls_go_to_the_executor) {
  static const mcp_executor ex = {.submit = submit_at_once};
  ck_assert_int_eq(mcp_server_set_executor(g_a, &ex), 0);
  mcp_server_set_rate_limit(g_a, 2, 60);
  atomic_store(&g_submits, 0);
  tu_peer a;
  tu_peer_open(&a, g_a, &ALICE);
  tu_initialize(&a, "2025-11-25");
  assert_done(call_wait(&a, 1, "{}"));
  assert_done(call_wait(&a, 2, "{}"));
  assert_refused(call_wait(&a, 3, "{}"), "rate limited");
  ck_assert_int_eq(atomic_load(&g_submits), 2);
  ck_assert_int_eq(atomic_load(&g_runs), 2);
  tu_peer_close(&a);
}
END_TEST

#ifdef MCP_TEST_HTTP
/* A legacy session made on the HTTP server at port, initialized; its id
 * in sid. */
static void legacy_session(uint16_t port, char *sid, size_t size) {
  CURL *c = curl_easy_init();
  ck_assert_ptr_nonnull(c);
  lc_resp r = {0};
  lc_req q = {.body = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\","
                      "\"params\":{\"protocolVersion\":\"" LC_LEGACY "\","
                      "\"capabilities\":{},\"clientInfo\":{\"name\":\"c\","
                      "\"version\":\"1\"}}}"};
  lc_http(c, port, &q, &r);
  ck_assert_int_eq(r.status, 200);
  ck_assert(lc_resp_header(&r, "Mcp-Session-Id", sid, size));
  lc_resp_free(&r);
  lc_req n = {.body = "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/"
                      "initialized\"}",
              .session = sid,
              .version = LC_LEGACY};
  lc_http(c, port, &n, &r);
  ck_assert_int_eq(r.status, 202);
  lc_resp_free(&r);
  curl_easy_cleanup(c);
}

/* Over Streamable HTTP (a legacy session, anonymous): the calls wait for
 * Redis on the store's threads and are answered on their requests. */
START_TEST(over_http) {
  mcp_server_set_rate_limit(g_a, 2, 60);
  mcp_http *http = NULL;
  mcp_http_options o = {0};
  ck_assert_int_eq(mcp_http_start(g_a, &o, &http), 0);
  uint16_t port = mcp_http_port(http);
  char sid[200];
  legacy_session(port, sid, sizeof sid);
  CURL *c = curl_easy_init();
  ck_assert_ptr_nonnull(c);
  lc_resp r = {0};
  const char *want[] = {"done", "done", "rate limited"};
  for (int i = 0; i < 3; i++) {
    char body[200];
    snprintf(body, sizeof body,
             "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"tools/call\","
             "\"params\":{\"name\":\"work\",\"arguments\":{}}}",
             10 + i);
    lc_req call = {.body = body, .session = sid, .version = LC_LEGACY};
    lc_http(c, port, &call, &r);
    ck_assert_int_eq(r.status, 200);
    cJSON *msgs = lc_messages(&r);
    ck_assert_ptr_nonnull(msgs);
    ck_assert_int_eq(cJSON_GetArraySize(msgs), 1);
    const char *t = text_of(cJSON_GetArrayItem(msgs, 0));
    ck_assert_msg(strncmp(t, want[i], strlen(want[i])) == 0, "%s", t);
    cJSON_Delete(msgs);
    lc_resp_free(&r);
  }
  curl_easy_cleanup(c);
  mcp_http_stop(http);
  ck_assert_int_eq(atomic_load(&g_runs), 2);
}
END_TEST

/* A store of the test's that hands each take to the Redis store, counting
 * them: the test sees when a take is in flight. */
static atomic_int g_forwarded;

static int counting_take(void *impl, const char *key, unsigned calls,
                         unsigned per, mcp_store_rate_done done, void *arg) {
  atomic_fetch_add(&g_forwarded, 1);
  return mcp_store_rate_take(impl, key, calls, per, done, arg);
}

static void counting_describe(void *impl, char *buf, unsigned long size) {
  mcp_store_describe(impl, buf, size);
}

static const mcp_store_ops COUNTING = {
    .rate_take = counting_take, .describe = counting_describe, .shared = true};

typedef struct http_call {
  uint16_t port;
  const char *sid;
  long status;
  int id; /* the request's id (0: 5) */
} http_call;

/* A tools/call on the session, on a thread of its own (it waits). */
static void *post_call(void *arg) {
  http_call *h = arg;
  CURL *c = curl_easy_init();
  lc_resp r = {0};
  char body[160];
  snprintf(body, sizeof body,
           "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"tools/call\","
           "\"params\":{\"name\":\"work\",\"arguments\":{}}}",
           h->id ? h->id : 5);
  lc_req q = {.body = body, .session = h->sid, .version = LC_LEGACY};
  lc_http(c, h->port, &q, &r);
  h->status = r.status;
  lc_resp_free(&r);
  curl_easy_cleanup(c);
  return NULL;
}

/* The transport stopped while a call's take is in flight: the call ends
 * when the answer comes, its handler never runs. */
START_TEST(http_stopped_with_a_take_in_flight) {
  mcp_store *counting = mcp_store_new(&COUNTING, g_store);
  ck_assert_ptr_nonnull(counting);
  ck_assert_int_eq(mcp_server_set_store(g_a, counting), 0);
  atomic_store(&g_forwarded, 0);
  mcp_http *http = NULL;
  mcp_http_options o = {0};
  ck_assert_int_eq(mcp_http_start(g_a, &o, &http), 0);
  http_call h = {.port = mcp_http_port(http)};
  CURL *c = curl_easy_init();
  lc_resp r = {0};
  lc_req q = {.body = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\","
                      "\"params\":{\"protocolVersion\":\"" LC_LEGACY "\","
                      "\"capabilities\":{},\"clientInfo\":{\"name\":\"c\","
                      "\"version\":\"1\"}}}"};
  lc_http(c, h.port, &q, &r);
  char sid[200];
  ck_assert(lc_resp_header(&r, "Mcp-Session-Id", sid, sizeof sid));
  lc_resp_free(&r);
  curl_easy_cleanup(c);
  h.sid = sid;
  ck_assert_int_eq(kill(g_redis.pid, SIGSTOP), 0);
  pthread_t t;
  ck_assert_int_eq(pthread_create(&t, NULL, post_call, &h), 0);
  for (int i = 0; i < 800 && atomic_load(&g_forwarded) == 0; i++)
    sleep_ms(25);
  ck_assert_int_eq(atomic_load(&g_forwarded), 1);
  mcp_http_stop(http);
  pthread_join(t, NULL);
  ck_assert_int_eq(kill(g_redis.pid, SIGCONT), 0);
  store_answers(); /* the take was queued first: answered by now */
  ck_assert_int_eq(atomic_load(&g_runs), 1); /* store_answers' own */
  mcp_server_free(g_a);                      /* before the store it borrows */
  g_a = NULL;
  mcp_store_free(counting); /* frees nothing of the Redis store's */
}
END_TEST

/* A legacy session made on a's HTTP server goes on on b's, which adopts
 * it from Redis: the store answers on its own thread, so each request
 * waits suspended. Four requests adopting it at once leave one copy; a
 * session made while Redis cannot answer is a 503 to adopt, and b stops
 * cleanly with an adoption in flight. */
START_TEST(a_session_adopted_over_redis) {
  mcp_server_set_rate_limit(g_a, 1000, 60);
  mcp_server_set_rate_limit(g_b, 1000, 60);
  mcp_http *ha = NULL, *hb = NULL;
  mcp_http_options o = {0};
  ck_assert_int_eq(mcp_http_start(g_a, &o, &ha), 0);
  ck_assert_int_eq(mcp_http_start(g_b, &o, &hb), 0);
  char sid[200];
  legacy_session(mcp_http_port(ha), sid, sizeof sid);
  http_call calls[4];
  pthread_t t[4];
  for (int i = 0; i < 4; i++) {
    calls[i] = (http_call){.port = mcp_http_port(hb), .sid = sid, .id = 20 + i};
    ck_assert_int_eq(pthread_create(&t[i], NULL, post_call, &calls[i]), 0);
  }
  for (int i = 0; i < 4; i++) {
    pthread_join(t[i], NULL);
    ck_assert_int_eq(calls[i].status, 200);
  }
  ck_assert_int_eq(atomic_load(&g_runs), 4); /* all four ran on b */
  /* Redis hung: the adoption waits for the store's timeout, then 503. */
  char other[200];
  legacy_session(mcp_http_port(ha), other, sizeof other);
  ck_assert_int_eq(kill(g_redis.pid, SIGSTOP), 0);
  http_call late = {.port = mcp_http_port(hb), .sid = other};
  post_call(&late);
  ck_assert_int_eq(late.status, 503);
  /* And b stopped with one in flight: the stop waits for its answer. */
  pthread_t hung;
  ck_assert_int_eq(pthread_create(&hung, NULL, post_call, &late), 0);
  sleep_ms(200);
  mcp_http_stop(hb);
  pthread_join(hung, NULL);
  ck_assert_int_eq(kill(g_redis.pid, SIGCONT), 0);
  mcp_http_stop(ha);
  ck_assert_int_eq(atomic_load(&g_runs), 4);
}
END_TEST
#endif

int main(void) {
  signal(SIGPIPE, SIG_IGN);
  Suite *s = suite_create("redis_limit");
  TCase *tc = tu_tcase(s, "engine", setup, teardown, 120);
  tcase_add_test(tc, one_budget_across_two_servers);
  tcase_add_test(tc, redis_stopped_then_back);
  tcase_add_test(tc, cancelled_while_taking);
  tcase_add_test(tc, deadline_while_taking);
  tcase_add_test(tc, store_freed_with_a_take_in_flight);
  tcase_add_test(tc, allowed_calls_go_to_the_executor);
#ifdef MCP_TEST_HTTP
  tcase_add_test(tc, over_http);
  tcase_add_test(tc, http_stopped_with_a_take_in_flight);
  tcase_add_test(tc, a_session_adopted_over_redis);
#endif
  return tu_run(s);
}
