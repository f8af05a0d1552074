/* Tests for lib/redis/ (the Redis store, include/mcp/redis.h) against a
 * real redis-server each test starts in a scratch folder of its own, on a
 * unix socket (and a free loopback port for TCP), and stops at its end:
 * the URL and its every malformation, two stores (as two processes would)
 * sharing one budget per key exactly, under threads; an ACL user and its
 * password, a wrong one and none; Redis stopped mid-run (a clear error at
 * once, never a hang) and restarted (the store reconnects by itself), or
 * hung (answered with an error after the command timeout); the
 * script flushed under a live connection (sent again with EVAL); a store
 * freed with takes in flight answers each once; every allocation failure.
 *
 * Timing: every wait is a bounded loop; nothing asserts a duration. */
#include <check.h>
#include <errno.h>
#include <hiredis/hiredis.h>
#include <mcp/redis.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "redis_int.h"
#include "redis_server.h"
#include "testutil.h"

static void sleep_ms(long ms) {
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

/* ---- a redis-server of the test's own ------------------------------------ */

static rs_server g_srv;

static void server_start(rs_server *s) {
  char err[512];
  ck_assert_msg(rs_start(s, REDIS_SERVER, err, sizeof err) == 0, "%s", err);
}

static void setup_dir(void) {
  char err[512];
  ck_assert_msg(rs_init(&g_srv, "mcp-redis", err, sizeof err) == 0, "%s", err);
}

static void setup(void) {
  setup_dir();
  server_start(&g_srv);
}

static void teardown(void) { rs_remove(&g_srv); }

/* ---- answers, which come on the store's thread ----------------------------
 */

typedef struct waiter {
  pthread_mutex_t lock;
  pthread_cond_t cond;
  int answers, allowed, refused, errors;
  int last_rc;
  unsigned long long last_wait_ms;
  char last_why[512];
} waiter;

static void waiter_init(waiter *w) {
  memset(w, 0, sizeof *w);
  pthread_mutex_init(&w->lock, NULL);
  pthread_cond_init(&w->cond, NULL);
}

static void waiter_free(waiter *w) {
  pthread_cond_destroy(&w->cond);
  pthread_mutex_destroy(&w->lock);
}

static void on_done(void *arg, int rc, const mcp_store_rate_answer *a,
                    const char *why) {
  waiter *w = arg;
  pthread_mutex_lock(&w->lock);
  w->answers++;
  w->last_rc = rc;
  if (rc)
    w->errors++;
  else if (a->allowed)
    w->allowed++;
  else
    w->refused++;
  w->last_wait_ms = a ? a->wait_ms : 0;
  snprintf(w->last_why, sizeof w->last_why, "%s", why);
  pthread_cond_broadcast(&w->cond);
  pthread_mutex_unlock(&w->lock);
}

/* Waits until w has n answers (20 s at most); returns how many it has. */
static int wait_answers(waiter *w, int n) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  ts.tv_sec += 20;
  pthread_mutex_lock(&w->lock);
  while (w->answers < n &&
         pthread_cond_timedwait(&w->cond, &w->lock, &ts) != ETIMEDOUT)
    ;
  int got = w->answers;
  pthread_mutex_unlock(&w->lock);
  return got;
}

/* One take, waited for: the waiter's last_* say its answer. */
static void take(mcp_store *st, waiter *w, const char *key, unsigned calls,
                 unsigned per) {
  int before = w->answers;
  ck_assert_int_eq(mcp_store_rate_take(st, key, calls, per, on_done, w), 0);
  ck_assert_int_eq(wait_answers(w, before + 1), before + 1);
}

static mcp_store *open_store(const char *url) {
  mcp_store *st = NULL;
  char err[512] = "";
  int rc = mcp_redis_store_new(url, &st, err, sizeof err);
  ck_assert_msg(rc == 0, "%s: %s", url, err);
  return st;
}

static void unix_url(char *buf, size_t n, const char *userinfo, int db) {
  snprintf(buf, n, "unix://%s%s%s?db=%d", userinfo ? userinfo : "",
           userinfo ? "@" : "", g_srv.sock, db);
}

/* ---- URLs ------------------------------------------------------------------
 */

static void url_bad(const char *url, const char *expect) {
  mcp__redis_url u;
  char why[256] = "";
  ck_assert_msg(mcp__redis_url_parse(url, &u, why, sizeof why) == MCP_EINVAL,
                "%s parsed", url);
  ck_assert_msg(strstr(why, expect) != NULL, "%s: \"%s\" lacks \"%s\"", url,
                why, expect);
  /* The store says the same, and makes nothing. */
  mcp_store *st = (mcp_store *)&u;
  char err[512] = "";
  ck_assert_int_eq(mcp_redis_store_new(url, &st, err, sizeof err), MCP_EINVAL);
  ck_assert_ptr_null(st);
  ck_assert_msg(strncmp(err, "bad Redis URL: ", 15) == 0 &&
                    strstr(err, expect) != NULL,
                "%s: %s", url, err);
}

START_TEST(url_malformed_each_with_its_reason) {
  url_bad("", "no URL");
  url_bad("http://h", "not a Redis URL");
  url_bad("rediss://h:6380", "no TLS");
  url_bad("redis://", "the host is missing");
  url_bad("redis://:6379", "the host is missing");
  url_bad("redis://h:0", "port must be a number from 1 to 65535");
  url_bad("redis://h:65536", "port must be a number");
  url_bad("redis://h:12x", "port must be a number");
  url_bad("redis://h:", "port must be a number");
  url_bad("redis://h/abc", "database must be a number");
  url_bad("redis://h/2097152", "database must be a number");
  url_bad("redis://h?db=1", "no query");
  url_bad("redis://alice@h", "needs a ':' before the password");
  url_bad("redis://a:%zz@h", "password is malformed");
  url_bad("redis://a:%4@h", "password is malformed");
  url_bad("redis://a%00:p@h", "user name is malformed");
  url_bad("redis://[::1:6379", "lacks its ']'");
  url_bad("redis://[::1]x", "must be followed by ':port'");
  url_bad("unix://relative.sock", "absolute path");
  url_bad("unix://a:b@rel/x", "absolute path");
  url_bad("unix:///s.sock?db=x", "database must be a number");
  url_bad("unix:///s.sock?x=1", "only query is ?db=N");
  char longpath[200];
  memset(longpath, 'a', sizeof longpath - 1);
  longpath[0] = '/';
  longpath[sizeof longpath - 1] = '\0';
  url_bad(longpath, "socket path is longer than");
  mcp_store *st = NULL;
  ck_assert_int_eq(mcp_redis_store_new("redis://h", NULL, NULL, 0), MCP_EINVAL);
  ck_assert_int_eq(mcp_redis_store_new(NULL, &st, NULL, 0), MCP_EINVAL);
}
END_TEST

START_TEST(url_parts_and_shown_without_password) {
  mcp__redis_url u;
  char why[256];
  ck_assert_int_eq(
      mcp__redis_url_parse("redis://al%3Ace:p%40ss:w@10.0.0.1:6380/3", &u, why,
                           sizeof why),
      0);
  ck_assert(!u.is_unix);
  ck_assert_str_eq(u.host, "10.0.0.1");
  ck_assert_int_eq(u.port, 6380);
  ck_assert_str_eq(u.user, "al:ce");
  ck_assert_str_eq(u.pass, "p@ss:w");
  ck_assert_int_eq(u.db, 3);
  ck_assert_str_eq(u.shown, "redis://al:ce@10.0.0.1:6380/3");
  ck_assert_ptr_null(strstr(u.shown, "p@ss"));
  ck_assert_int_eq(mcp__redis_url_parse("redis://h", &u, why, sizeof why), 0);
  ck_assert_int_eq(u.port, 6379);
  ck_assert_int_eq(u.db, 0);
  ck_assert(!u.has_pass);
  ck_assert_str_eq(u.shown, "redis://h:6379/0");
  ck_assert_int_eq(
      mcp__redis_url_parse("redis://:only@[::1]:7000/", &u, why, sizeof why),
      0);
  ck_assert_str_eq(u.host, "::1");
  ck_assert_str_eq(u.user, "");
  ck_assert_str_eq(u.pass, "only");
  ck_assert(u.has_pass);
  ck_assert_str_eq(u.shown, "redis://[::1]:7000/0");
  ck_assert_int_eq(
      mcp__redis_url_parse("unix://u:p@/run/r.sock?db=2", &u, why, sizeof why),
      0);
  ck_assert(u.is_unix);
  ck_assert_str_eq(u.path, "/run/r.sock");
  ck_assert_int_eq(u.db, 2);
  ck_assert_str_eq(u.shown, "unix://u@/run/r.sock?db=2");
  ck_assert_int_eq(mcp__redis_url_parse("/run/r.sock", &u, why, sizeof why), 0);
  ck_assert(u.is_unix);
  ck_assert_str_eq(u.shown, "unix:///run/r.sock?db=0");
}
END_TEST

START_TEST(unreachable_is_a_clear_error) {
  char url[400], err[512] = "";
  snprintf(url, sizeof url, "%s/nobody.sock", g_srv.dir);
  mcp_store *st = NULL;
  ck_assert_int_eq(mcp_redis_store_new(url, &st, err, sizeof err), MCP_EIO);
  ck_assert_ptr_null(st);
  ck_assert_msg(strstr(err, "cannot connect to unix://") != NULL, "%s", err);
  ck_assert_msg(strstr(err, "nobody.sock") != NULL, "%s", err);
}
END_TEST

/* ---- one budget for every store ------------------------------------------ */

START_TEST(two_stores_share_one_budget) {
  char url[400];
  unix_url(url, sizeof url, NULL, 0);
  mcp_store *a = open_store(url), *b = open_store(url);
  ck_assert(mcp_store_shared(a));
  char shown[400];
  mcp_store_describe(a, shown, sizeof shown);
  ck_assert_str_eq(shown, url);
  waiter w;
  waiter_init(&w);
  for (int i = 0; i < 5; i++)
    take(i % 2 ? b : a, &w, "alice", 5, 3600);
  ck_assert_int_eq(w.allowed, 5);
  take(a, &w, "alice", 5, 3600);
  ck_assert_int_eq(w.refused, 1);
  /* One token of five an hour is back in twelve minutes. */
  ck_assert_uint_ge(w.last_wait_ms, 1);
  ck_assert_uint_le(w.last_wait_ms, 720000);
  take(b, &w, "alice", 5, 3600);
  ck_assert_int_eq(w.refused, 2);
  /* Another key, its own bucket. */
  take(b, &w, "bob", 5, 3600);
  ck_assert_int_eq(w.allowed, 6);
  ck_assert_int_eq(w.errors, 0);
  waiter_free(&w);
  mcp_store_free(a);
  mcp_store_free(b);
}
END_TEST

typedef struct burst {
  mcp_store *st;
  waiter *w;
} burst;

static void *burst_run(void *arg) {
  burst *bu = arg;
  for (int i = 0; i < 50; i++)
    ck_assert_int_eq(
        mcp_store_rate_take(bu->st, "carol", 60, 3600, on_done, bu->w), 0);
  return NULL;
}

START_TEST(concurrent_takes_never_overspend) {
  char url[400];
  unix_url(url, sizeof url, NULL, 0);
  mcp_store *st[2] = {open_store(url), open_store(url)};
  waiter w;
  waiter_init(&w);
  pthread_t t[4];
  burst bu[4];
  for (int i = 0; i < 4; i++) {
    bu[i] = (burst){st[i % 2], &w};
    ck_assert_int_eq(pthread_create(&t[i], NULL, burst_run, &bu[i]), 0);
  }
  for (int i = 0; i < 4; i++)
    pthread_join(t[i], NULL);
  ck_assert_int_eq(wait_answers(&w, 200), 200);
  /* 200 takes of a bucket of 60 an hour: exactly 60 allowed. */
  ck_assert_int_eq(w.errors, 0);
  ck_assert_int_eq(w.allowed, 60);
  ck_assert_int_eq(w.refused, 140);
  waiter_free(&w);
  mcp_store_free(st[0]);
  mcp_store_free(st[1]);
}
END_TEST

/* ---- ACL --------------------------------------------------------------------
 */

static void setup_acl(void) {
  setup_dir();
  g_srv.acl_user = "alice";
  g_srv.acl_pass = "p@ss:word";
  g_srv.port = rs_free_port();
  ck_assert_int_gt(g_srv.port, 0);
  server_start(&g_srv);
}

START_TEST(acl_user_and_password) {
  char url[400], err[512] = "";
  unix_url(url, sizeof url, "alice:p%40ss%3Aword", 3);
  mcp_store *st = open_store(url);
  waiter w;
  waiter_init(&w);
  take(st, &w, "dave", 1, 60);
  ck_assert_int_eq(w.allowed, 1);
  mcp_store_free(st);
  /* And over TCP, on the loopback port. */
  snprintf(url, sizeof url, "redis://alice:p%%40ss%%3Aword@127.0.0.1:%d/1",
           g_srv.port);
  st = open_store(url);
  take(st, &w, "dave", 1, 60);
  ck_assert_int_eq(w.allowed, 2);
  mcp_store_free(st);
  /* A wrong password: Redis's refusal, named, and no store. */
  unix_url(url, sizeof url, "alice:wrong", 0);
  st = NULL;
  ck_assert_int_eq(mcp_redis_store_new(url, &st, err, sizeof err), MCP_EIO);
  ck_assert_ptr_null(st);
  ck_assert_msg(strstr(err, "AUTH at unix://alice@") != NULL, "%s", err);
  ck_assert_msg(strstr(err, "WRONGPASS") != NULL, "%s", err);
  ck_assert_ptr_null(strstr(err, "wrong"));
  /* No password where the default user is off. */
  unix_url(url, sizeof url, NULL, 0);
  ck_assert_int_eq(mcp_redis_store_new(url, &st, err, sizeof err), MCP_EIO);
  ck_assert_msg(strstr(err, "NOAUTH") != NULL, "%s", err);
  waiter_free(&w);
}
END_TEST

/* ---- Redis stopped and restarted ----------------------------------------- */

START_TEST(stopped_then_restarted) {
  char url[400];
  unix_url(url, sizeof url, NULL, 0);
  mcp_store *st = open_store(url);
  waiter w;
  waiter_init(&w);
  take(st, &w, "erin", 100, 60);
  ck_assert_int_eq(w.allowed, 1);
  rs_stop(&g_srv);
  /* Every take is answered, with an error saying why; none allowed. */
  for (int i = 0; i < 5; i++) {
    take(st, &w, "erin", 100, 60);
    ck_assert_int_eq(w.last_rc, MCP_EIO);
    ck_assert_msg(strstr(w.last_why, "Redis is unavailable") != NULL, "%s",
                  w.last_why);
    ck_assert_msg(strstr(w.last_why, g_srv.sock) != NULL, "%s", w.last_why);
  }
  ck_assert_int_eq(w.allowed, 1);
  server_start(&g_srv);
  /* It reconnects by itself (the pause is 5 s at most): 20 s at most. */
  for (int i = 0; i < 400; i++) {
    take(st, &w, "erin", 100, 60);
    if (w.last_rc == 0)
      break;
    sleep_ms(50);
  }
  ck_assert_int_eq(w.last_rc, 0);
  ck_assert_int_eq(w.allowed, 2);
  waiter_free(&w);
  mcp_store_free(st);
}
END_TEST

/* Redis hangs (SIGSTOP): a take is answered with an error once the
 * command timeout passes, never left waiting; after SIGCONT the store
 * comes back by itself. */
START_TEST(hung_redis_times_out_then_recovers) {
  char url[400];
  unix_url(url, sizeof url, NULL, 0);
  mcp_store *st = open_store(url);
  waiter w;
  waiter_init(&w);
  take(st, &w, "hal", 100, 60);
  ck_assert_int_eq(w.allowed, 1);
  ck_assert_int_eq(kill(g_srv.pid, SIGSTOP), 0);
  take(st, &w, "hal", 100, 60);
  ck_assert_int_eq(w.last_rc, MCP_EIO);
  ck_assert_msg(strstr(w.last_why, "Redis is unavailable") != NULL, "%s",
                w.last_why);
  ck_assert_int_eq(kill(g_srv.pid, SIGCONT), 0);
  for (int i = 0; i < 400; i++) {
    take(st, &w, "hal", 100, 60);
    if (w.last_rc == 0)
      break;
    sleep_ms(50);
  }
  ck_assert_int_eq(w.last_rc, 0);
  ck_assert_int_eq(w.allowed, 2);
  waiter_free(&w);
  mcp_store_free(st);
}
END_TEST

/* Redis forgets the script (SCRIPT FLUSH, as an operator may) while the
 * store is connected: the takes queued together, each answered NOSCRIPT,
 * are sent again with the script itself, and counted once. */
START_TEST(script_flushed_then_sent_again) {
  char url[400];
  unix_url(url, sizeof url, NULL, 0);
  mcp_store *st = open_store(url);
  struct timeval tv = {5, 0};
  redisContext *c = redisConnectUnixWithTimeout(g_srv.sock, tv);
  ck_assert(c != NULL && c->err == 0);
  redisReply *r = redisCommand(c, "SCRIPT FLUSH");
  ck_assert(r != NULL && r->type == REDIS_REPLY_STATUS);
  freeReplyObject(r);
  waiter w;
  waiter_init(&w);
  for (int i = 0; i < 30; i++)
    ck_assert_int_eq(mcp_store_rate_take(st, "gus", 20, 3600, on_done, &w), 0);
  ck_assert_int_eq(wait_answers(&w, 30), 30);
  ck_assert_int_eq(w.errors, 0);
  ck_assert_int_eq(w.allowed, 20);
  ck_assert_int_eq(w.refused, 10);
  /* The bucket in Redis: one hash, spent. */
  r = redisCommand(c, "HGET mcp:rate:gus tokens");
  ck_assert(r != NULL && r->type == REDIS_REPLY_STRING);
  ck_assert_double_lt(strtod(r->str, NULL), 1.0);
  freeReplyObject(r);
  /* And it went through EVAL: the fallback ran. */
  r = redisCommand(c, "INFO commandstats");
  ck_assert(r != NULL && r->type == REDIS_REPLY_STRING);
  ck_assert_ptr_nonnull(strstr(r->str, "cmdstat_eval:calls="));
  freeReplyObject(r);
  redisFree(c);
  waiter_free(&w);
  mcp_store_free(st);
}
END_TEST

START_TEST(freed_with_takes_in_flight) {
  char url[400];
  unix_url(url, sizeof url, NULL, 0);
  mcp_store *st = open_store(url);
  waiter w;
  waiter_init(&w);
  for (int i = 0; i < 100; i++)
    ck_assert_int_eq(mcp_store_rate_take(st, "frank", 10, 60, on_done, &w), 0);
  mcp_store_free(st);
  /* Each answered exactly once before the free returned. */
  ck_assert_int_eq(w.answers, 100);
  ck_assert_int_le(w.allowed, 10);
  ck_assert_int_eq(w.allowed + w.refused + w.errors, 100);
  waiter_free(&w);
}
END_TEST

/* Every allocation of the store's failing in turn: an error, never a
 * crash, a leak or a take answered twice. */
static bool run_alloc(long n, void *user) {
  (void)n;
  mcp_store *st = NULL;
  char err[512];
  int rc = mcp_redis_store_new(user, &st, err, sizeof err);
  if (rc) {
    ck_assert_int_eq(rc, MCP_ENOMEM);
    ck_assert_ptr_null(st);
    return false;
  }
  waiter w;
  waiter_init(&w);
  rc = mcp_store_rate_take(st, "gina", 5, 60, on_done, &w);
  if (rc)
    ck_assert_int_eq(rc, MCP_ENOMEM);
  else
    ck_assert_int_eq(wait_answers(&w, 1), 1);
  mcp_store_free(st);
  ck_assert_int_eq(w.answers, rc ? 0 : 1);
  bool ok = rc == 0 && w.last_rc == 0;
  waiter_free(&w);
  return ok;
}

START_TEST(every_allocation_failure) {
  char url[400];
  unix_url(url, sizeof url, NULL, 0);
  tu_alloc_every(32, run_alloc, NULL, url);
}
END_TEST

int main(void) {
  Suite *s = suite_create("redis");
  TCase *tc = tu_tcase(s, "url", NULL, NULL, 0);
  tcase_add_test(tc, url_malformed_each_with_its_reason);
  tcase_add_test(tc, url_parts_and_shown_without_password);
  tc = tu_tcase(s, "server", setup, teardown, 60);
  tcase_add_test(tc, unreachable_is_a_clear_error);
  tcase_add_test(tc, two_stores_share_one_budget);
  tcase_add_test(tc, concurrent_takes_never_overspend);
  tcase_add_test(tc, stopped_then_restarted);
  tcase_add_test(tc, hung_redis_times_out_then_recovers);
  tcase_add_test(tc, script_flushed_then_sent_again);
  tcase_add_test(tc, freed_with_takes_in_flight);
  tcase_add_test(tc, every_allocation_failure);
  tc = tu_tcase(s, "acl", setup_acl, teardown, 60);
  tcase_add_test(tc, acl_user_and_password);
  return tu_run(s);
}
