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
 * Events: two stores each hearing every event of both once, in one order;
 * databases apart; binary and largest events intact; a listener removed;
 * Redis stopped (MCP_EIO) and restarted, or down at the first listen; a
 * reader cut off (its client killed, its login refused for a while) that
 * catches up; a store freed with listeners and publishes queued, also
 * while Redis hangs.
 * Records: the stores' contract (store_contract.c), plain and as an ACL
 * user; two stores seeing each other's records; a put while Redis is down
 * (MCP_EIO, then answered once it is back); a node's lease renewed, and
 * dropped when its store is freed; expired records leaving an index, a
 * page at a time; orders up to 2^53 exact; every allocation failure.
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
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "redis_int.h"
#include "redis_server.h"
#include "store_contract.h"
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

/* ---- events ---------------------------------------------------------------
 * Heard on the store's reader thread. Each test ends a run with an event
 * of its own and waits for it: the stream has one order, so once it is
 * heard, everything published before it was too, and a count is exact
 * without waiting on the clock. */

#define HEARD_MAX 4096

typedef struct heard {
  char head[32];     /* the first bytes */
  unsigned long len; /* all of them */
  unsigned hash;     /* FNV-1a of all of them */
} heard;

typedef struct hearer {
  pthread_mutex_t lock;
  pthread_cond_t cond;
  int n; /* events heard (only the first HEARD_MAX kept) */
  heard ev[HEARD_MAX];
} hearer;

static hearer *hearer_new(void) {
  hearer *h = calloc(1, sizeof *h);
  ck_assert_ptr_nonnull(h);
  pthread_mutex_init(&h->lock, NULL);
  pthread_cond_init(&h->cond, NULL);
  return h;
}

static void hearer_free(hearer *h) {
  pthread_cond_destroy(&h->cond);
  pthread_mutex_destroy(&h->lock);
  free(h);
}

static unsigned fnv(const char *b, unsigned long len) {
  unsigned x = 2166136261u;
  for (unsigned long i = 0; i < len; i++)
    x = (x ^ (unsigned char)b[i]) * 16777619u;
  return x;
}

static void on_event(void *arg, const char *event, unsigned long len) {
  hearer *h = arg;
  pthread_mutex_lock(&h->lock);
  if (h->n < HEARD_MAX) {
    heard *e = &h->ev[h->n];
    size_t keep = len < sizeof e->head - 1 ? len : sizeof e->head - 1;
    memcpy(e->head, event, keep);
    e->head[keep] = '\0';
    e->len = len;
    e->hash = fnv(event, len);
  }
  h->n++;
  pthread_cond_broadcast(&h->cond);
  pthread_mutex_unlock(&h->lock);
}

/* Index of the event whose text is text in h (from 0), or -1. */
static int heard_at(hearer *h, const char *text) {
  int at = -1;
  pthread_mutex_lock(&h->lock);
  for (int i = 0; i < h->n && i < HEARD_MAX && at < 0; i++)
    if (strcmp(h->ev[i].head, text) == 0)
      at = i;
  pthread_mutex_unlock(&h->lock);
  return at;
}

/* Waits until h heard text (secs at most); returns heard_at's answer. */
static int wait_heard(hearer *h, const char *text, int secs) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  ts.tv_sec += secs;
  int at;
  while ((at = heard_at(h, text)) < 0) {
    pthread_mutex_lock(&h->lock);
    int rc = pthread_cond_timedwait(&h->cond, &h->lock, &ts);
    pthread_mutex_unlock(&h->lock);
    if (rc == ETIMEDOUT)
      return heard_at(h, text);
  }
  return at;
}

static int heard_count(hearer *h) {
  pthread_mutex_lock(&h->lock);
  int n = h->n;
  pthread_mutex_unlock(&h->lock);
  return n;
}

static void publish(mcp_store *st, const char *text) {
  ck_assert_int_eq(mcp_store_publish(st, text, strlen(text)), 0);
}

/* h heard exactly texts, in that order. */
static void heard_exactly(hearer *h, const char *const *texts, int n) {
  ck_assert_int_eq(heard_count(h), n);
  for (int i = 0; i < n; i++)
    ck_assert_str_eq(h->ev[i].head, texts[i]);
}

typedef struct publisher {
  mcp_store *st;
  char name;
  int count;
} publisher;

static void *publish_run(void *arg) {
  publisher *p = arg;
  for (int i = 0; i < p->count; i++) {
    char ev[32];
    snprintf(ev, sizeof ev, "%c:%d", p->name, i);
    ck_assert_int_eq(mcp_store_publish(p->st, ev, strlen(ev)), 0);
  }
  return NULL;
}

/* h heard count events of each publisher named in names, in the order each
 * published them, then its "X:end", and nothing else. */
static void heard_in_order(hearer *h, const char *names, int count) {
  size_t k = strlen(names);
  int next[8] = {0};
  bool ended[8] = {false};
  ck_assert_int_eq(heard_count(h), (int)k * (count + 1));
  for (int i = 0; i < h->n; i++) {
    const char *e = h->ev[i].head;
    const char *at = strchr(names, e[0]);
    ck_assert_msg(at && e[0] && e[1] == ':', "event %d: %s", i, e);
    size_t p = (size_t)(at - names);
    ck_assert_msg(!ended[p], "%s after %c:end", e, e[0]);
    if (strcmp(e + 2, "end") == 0) {
      ck_assert_int_eq(next[p], count);
      ended[p] = true;
    } else {
      ck_assert_msg(atoi(e + 2) == next[p], "%s where %c:%d was due", e, e[0],
                    next[p]);
      next[p]++;
    }
  }
}

/* Takes of key (100 a minute) until one is answered without an error: the
 * store reconnected (20 s at most). */
static void take_until_answered(mcp_store *st, waiter *w, const char *key) {
  for (int i = 0; i < 400; i++) {
    take(st, w, key, 100, 60);
    if (w->last_rc == 0)
      break;
    sleep_ms(50);
  }
  ck_assert_int_eq(w->last_rc, 0);
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

/* A connection of the test's own to the Redis under test. */
static redisContext *admin_link(void) {
  struct timeval tv = {5, 0};
  redisContext *c = redisConnectUnixWithTimeout(g_srv.sock, tv);
  ck_assert(c != NULL && c->err == 0);
  return c;
}

/* Runs cmd on c: anything but an error. */
static void admin(redisContext *c, const char *cmd) {
  redisReply *r = redisCommand(c, cmd);
  ck_assert_msg(r != NULL && r->type != REDIS_REPLY_ERROR, "%s: %s", cmd,
                r ? r->str : c->errstr);
  freeReplyObject(r);
}

/* How many times Redis ran the command cmd (lower case), scripts' calls
 * included. */
static long long command_calls(const char *cmd) {
  redisContext *c = admin_link();
  redisReply *r = redisCommand(c, "INFO commandstats");
  ck_assert(r != NULL && r->type == REDIS_REPLY_STRING);
  char name[64];
  snprintf(name, sizeof name, "cmdstat_%s:calls=", cmd);
  const char *at = strstr(r->str, name);
  long long n = at ? atoll(at + strlen(name)) : 0;
  freeReplyObject(r);
  redisFree(c);
  return n;
}

/* How many times Redis ran a script by its hash (EVALSHA). */
static long long evalsha_calls(void) { return command_calls("evalsha"); }

typedef struct leaser {
  mcp_store *st;
  waiter w;
} leaser;

static void *lease_run(void *arg) {
  leaser *l = arg;
  for (int i = 0; i < 700; i++)
    take(l->st, &l->w, "lee", 2000, 100);
  return NULL;
}

/* A high limit leases (2 tokens at a time here: 100 ms of refill): two
 * stores, two threads each, take together no more than the bucket held
 * and refilled meanwhile, and no fewer than it held but the rests a lease
 * may leave, in fewer round trips than takes. */
START_TEST(leases_never_take_more_than_the_bucket) {
  char url[400];
  unix_url(url, sizeof url, NULL, 0);
  mcp_store *st[2] = {open_store(url), open_store(url)};
  leaser l[4];
  pthread_t t[4];
  long long scripts = evalsha_calls();
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  for (int i = 0; i < 4; i++) {
    l[i].st = st[i % 2];
    waiter_init(&l[i].w);
    ck_assert_int_eq(pthread_create(&t[i], NULL, lease_run, &l[i]), 0);
  }
  int allowed = 0, errors = 0;
  for (int i = 0; i < 4; i++) {
    pthread_join(t[i], NULL);
    allowed += l[i].w.allowed;
    errors += l[i].w.errors;
    waiter_free(&l[i].w);
  }
  clock_gettime(CLOCK_MONOTONIC, &t1);
  double elapsed =
      (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
  ck_assert_int_eq(errors, 0);
  /* 20 tokens a second come back while the takes run. */
  ck_assert_msg(allowed <= 2000 + (int)(20 * elapsed) + 1,
                "%d allowed in %.2f s", allowed, elapsed);
  ck_assert_msg(allowed >= 2000 - 4, "%d allowed", allowed);
  ck_assert_int_lt(evalsha_calls() - scripts, 4 * 700);
  mcp_store_free(st[0]);
  mcp_store_free(st[1]);
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
  /* Events, published and heard (its reader logs in too) as that user. */
  hearer *h = hearer_new();
  ck_assert_int_eq(mcp_store_listen(st, on_event, h), 0);
  publish(st, "as alice");
  ck_assert_int_eq(wait_heard(h, "as alice", 20), 0);
  hearer_free(h);
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

/* The records' contract as that user: every command their scripts and
 * leases use is allowed by the ACL of docs/deployment.md. */
START_TEST(acl_records_contract) {
  char url[400];
  unix_url(url, sizeof url, "alice:p%40ss%3Aword", 0);
  mcp_store *st = open_store(url);
  store_contract_run(st, "acl", 300);
  mcp_store_free(st);
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
  /* It reconnects by itself (the pause is 5 s at most). */
  take_until_answered(st, &w, "erin");
  ck_assert_int_eq(w.allowed, 2);
  waiter_free(&w);
  mcp_store_free(st);
}
END_TEST

/* The store's connection closed by the other end while idle (Redis's
 * timeout, a tunnel's idle limit; here CLIENT KILL): the next take is
 * answered, on a new connection, not failed. */
START_TEST(idle_connection_closed_then_take_answered) {
  char url[400];
  unix_url(url, sizeof url, NULL, 0);
  mcp_store *st = open_store(url);
  waiter w;
  waiter_init(&w);
  take(st, &w, "ida", 100, 60);
  ck_assert_int_eq(w.allowed, 1);
  redisContext *c = admin_link();
  redisReply *r = redisCommand(c, "CLIENT KILL TYPE normal SKIPME yes");
  ck_assert(r != NULL && r->type == REDIS_REPLY_INTEGER && r->integer >= 1);
  freeReplyObject(r);
  redisFree(c);
  sleep_ms(1100); /* idle past the store's threshold */
  take(st, &w, "ida", 100, 60);
  ck_assert_msg(w.last_rc == 0, "%s", w.last_why);
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
  take_until_answered(st, &w, "hal");
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
  redisContext *c = admin_link();
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

/* ---- events ---------------------------------------------------------------
 */

/* Two stores (as two processes would be) both listening, each publishing a
 * thousand events from a thread of its own at once: each hears all two
 * thousand, once each, every publisher's in its order. */
START_TEST(events_heard_by_every_store_once_in_order) {
  char url[400];
  unix_url(url, sizeof url, NULL, 0);
  mcp_store *st[2] = {open_store(url), open_store(url)};
  hearer *h[2] = {hearer_new(), hearer_new()};
  for (int i = 0; i < 2; i++)
    ck_assert_int_eq(mcp_store_listen(st[i], on_event, h[i]), 0);
  ck_assert_int_eq(mcp_store_listen(st[0], on_event, h[0]), MCP_EEXIST);
  publisher p[2] = {{st[0], 'a', 1000}, {st[1], 'b', 1000}};
  pthread_t t[2];
  for (int i = 0; i < 2; i++)
    ck_assert_int_eq(pthread_create(&t[i], NULL, publish_run, &p[i]), 0);
  for (int i = 0; i < 2; i++)
    pthread_join(t[i], NULL);
  publish(st[0], "a:end");
  publish(st[1], "b:end");
  for (int i = 0; i < 2; i++) {
    ck_assert_int_ge(wait_heard(h[i], "a:end", 20), 0);
    ck_assert_int_ge(wait_heard(h[i], "b:end", 20), 0);
  }
  /* Both stores heard the same one order. */
  for (int i = 0; i < 2; i++)
    heard_in_order(h[i], "ab", 1000);
  for (int i = 0; i < h[0]->n; i++)
    ck_assert_str_eq(h[0]->ev[i].head, h[1]->ev[i].head);
  for (int i = 0; i < 2; i++) {
    mcp_store_free(st[i]);
    hearer_free(h[i]);
  }
}
END_TEST

/* A daemon that waits for SIGTERM in sigwait, with the signal blocked
 * elsewhere, must get it there: a thread of the store with the signal open
 * would take it instead, and its default action would end the process (a
 * server on Redis killed by the SIGTERM meant to stop it cleanly). The
 * store's threads (the worker, the answerers, the events reader) block the
 * process's signals whatever the caller's mask, and the signal sent here
 * stays pending for the caller. */
START_TEST(store_threads_take_no_signal) {
  char url[400];
  unix_url(url, sizeof url, NULL, 0);
  sigset_t none, term, old;
  sigemptyset(&none);
  pthread_sigmask(SIG_SETMASK, &none, &old);
  long before[256];
  size_t nbefore = tu_thread_ids(before, TU_COUNT(before)), nafter = 0;
  mcp_store *st = open_store(url);
  hearer *h = hearer_new();
  ck_assert_int_eq(mcp_store_listen(st, on_event, h), 0);
  long open = tu_new_thread_taking_stop_signals(before, nbefore, &nafter);
  ck_assert_uint_ge(nafter,
                    nbefore + 2); /* a worker and the reader, at least */
  ck_assert_msg(open == 0, "thread %ld of the store takes SIGTERM", open);
  sigemptyset(&term);
  sigaddset(&term, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &term, NULL);
  ck_assert_int_eq(kill(getpid(), SIGTERM), 0);
  struct timespec wait = {5, 0};
  ck_assert_int_eq(sigtimedwait(&term, NULL, &wait), SIGTERM);
  publish(st, "still:here");
  ck_assert_int_ge(wait_heard(h, "still:here", 20), 0);
  mcp_store_free(st);
  hearer_free(h);
  pthread_sigmask(SIG_SETMASK, &old, NULL);
}
END_TEST

/* Stores on two databases of one server: each hears its own events only. */
START_TEST(events_stay_in_their_database) {
  char url[400];
  unix_url(url, sizeof url, NULL, 1);
  mcp_store *one = open_store(url);
  unix_url(url, sizeof url, NULL, 2);
  mcp_store *two = open_store(url);
  hearer *h1 = hearer_new(), *h2 = hearer_new();
  ck_assert_int_eq(mcp_store_listen(one, on_event, h1), 0);
  ck_assert_int_eq(mcp_store_listen(two, on_event, h2), 0);
  publish(two, "in two");
  ck_assert_int_eq(wait_heard(h2, "in two", 20), 0);
  /* Published to one after two's was in Redis: a shared stream would hand
   * two's to one first. */
  publish(one, "in one");
  ck_assert_int_eq(wait_heard(h1, "in one", 20), 0);
  heard_exactly(h1, (const char *[]){"in one"}, 1);
  heard_exactly(h2, (const char *[]){"in two"}, 1);
  mcp_store_free(one);
  mcp_store_free(two);
  hearer_free(h1);
  hearer_free(h2);
}
END_TEST

/* An event's bytes arrive as they were: a NUL inside, bytes above 127,
 * and the largest one allowed. */
START_TEST(events_binary_and_largest_intact) {
  char url[400];
  unix_url(url, sizeof url, NULL, 0);
  mcp_store *st = open_store(url);
  hearer *h = hearer_new();
  ck_assert_int_eq(mcp_store_listen(st, on_event, h), 0);
  static const char bin[] = {'a', '\0', 'b', '\xff', '\r', '\n'};
  ck_assert_int_eq(mcp_store_publish(st, bin, sizeof bin), 0);
  char *big = malloc(MCP_STORE_EVENT_MAX);
  ck_assert_ptr_nonnull(big);
  for (int i = 0; i < MCP_STORE_EVENT_MAX; i++)
    big[i] = (char)(i * 7 + i / 256);
  big[0] = 'B';
  big[1] = '\0';
  ck_assert_int_eq(mcp_store_publish(st, big, MCP_STORE_EVENT_MAX), 0);
  ck_assert_int_eq(mcp_store_publish(st, big, MCP_STORE_EVENT_MAX + 1),
                   MCP_ELIMIT);
  publish(st, "end");
  ck_assert_int_eq(wait_heard(h, "end", 20), 2);
  ck_assert_uint_eq(h->ev[0].len, sizeof bin);
  ck_assert_int_eq(memcmp(h->ev[0].head, bin, sizeof bin), 0);
  ck_assert_uint_eq(h->ev[1].len, MCP_STORE_EVENT_MAX);
  ck_assert_uint_eq(h->ev[1].hash, fnv(big, MCP_STORE_EVENT_MAX));
  free(big);
  mcp_store_free(st);
  hearer_free(h);
}
END_TEST

/* A listener removed hears nothing more; the others go on. */
START_TEST(events_listener_removed_hears_nothing_more) {
  char url[400];
  unix_url(url, sizeof url, NULL, 0);
  mcp_store *st = open_store(url);
  hearer *h1 = hearer_new(), *h2 = hearer_new();
  ck_assert_int_eq(mcp_store_listen(st, on_event, h1), 0);
  ck_assert_int_eq(mcp_store_listen(st, on_event, h2), 0);
  publish(st, "both");
  ck_assert_int_eq(wait_heard(h1, "both", 20), 0);
  ck_assert_int_eq(wait_heard(h2, "both", 20), 0);
  ck_assert_int_eq(mcp_store_unlisten(st, on_event, h1), 0);
  ck_assert_int_eq(mcp_store_unlisten(st, on_event, h1), MCP_ENOENT);
  publish(st, "two only");
  ck_assert_int_eq(wait_heard(h2, "two only", 20), 1);
  heard_exactly(h1, (const char *[]){"both"}, 1);
  /* Listening again: from then on, without a second reader. */
  ck_assert_int_eq(mcp_store_listen(st, on_event, h1), 0);
  publish(st, "again");
  ck_assert_int_eq(wait_heard(h1, "again", 20), 1);
  ck_assert_int_eq(wait_heard(h2, "again", 20), 2);
  heard_exactly(h2, (const char *[]){"both", "two only", "again"}, 3);
  mcp_store_free(st);
  hearer_free(h1);
  hearer_free(h2);
}
END_TEST

/* Redis stopped: once the store noticed, publish says MCP_EIO at once;
 * restarted: the listener hears again, without being added again. */
START_TEST(events_redis_stopped_then_restarted) {
  char url[400];
  unix_url(url, sizeof url, NULL, 0);
  mcp_store *st = open_store(url);
  hearer *h = hearer_new();
  ck_assert_int_eq(mcp_store_listen(st, on_event, h), 0);
  publish(st, "before");
  ck_assert_int_eq(wait_heard(h, "before", 20), 0);
  rs_stop(&g_srv);
  /* The first publishes may be queued (then dropped) until the store's
   * thread sees the connection gone. */
  int rc = 0;
  for (int i = 0; i < 400 && rc == 0; i++) {
    rc = mcp_store_publish(st, "lost", 4);
    if (rc == 0)
      sleep_ms(50);
  }
  ck_assert_int_eq(rc, MCP_EIO);
  ck_assert_int_eq(mcp_store_publish(st, "lost", 4), MCP_EIO);
  server_start(&g_srv);
  /* It reconnects by itself (the pause is 5 s at most): 20 s at most. */
  for (int i = 0; i < 400 && (rc = mcp_store_publish(st, "after", 5)) != 0;
       i++) {
    ck_assert_int_eq(rc, MCP_EIO);
    sleep_ms(50);
  }
  ck_assert_int_eq(rc, 0);
  ck_assert_int_eq(wait_heard(h, "after", 20), 1);
  heard_exactly(h, (const char *[]){"before", "after"}, 2);
  mcp_store_free(st);
  hearer_free(h);
}
END_TEST

/* The first listen while Redis is down: the listener is added, and hears
 * what is published once the store's reader reached Redis again (what it
 * missed before it knew where the stream ended is gone: publish until one
 * is heard). */
START_TEST(events_listen_while_redis_down) {
  char url[400];
  unix_url(url, sizeof url, NULL, 0);
  mcp_store *st = open_store(url);
  hearer *h = hearer_new();
  rs_stop(&g_srv);
  ck_assert_int_eq(mcp_store_listen(st, on_event, h), 0);
  server_start(&g_srv);
  int i = 0;
  for (; i < 400 && heard_count(h) == 0; i++) {
    char ev[32];
    snprintf(ev, sizeof ev, "k:%d", i);
    int rc = mcp_store_publish(st, ev, strlen(ev));
    ck_assert_msg(rc == 0 || rc == MCP_EIO, "%d", rc);
    sleep_ms(50);
  }
  ck_assert_int_gt(heard_count(h), 0);
  publish(st, "k:end");
  int at = wait_heard(h, "k:end", 20);
  ck_assert_int_gt(at, 0);
  ck_assert_int_eq(heard_count(h), at + 1);
  mcp_store_free(st);
  hearer_free(h);
}
END_TEST

/* The id of the one client whose last command was XREAD: a store's
 * reader. */
static long long reader_client(redisContext *c) {
  redisReply *r = redisCommand(c, "CLIENT LIST");
  ck_assert(r != NULL && r->type == REDIS_REPLY_STRING);
  long long id = -1;
  int found = 0;
  for (const char *line = r->str; line && *line;) {
    const char *end = strchr(line, '\n');
    const char *cmd = strstr(line, " cmd=xread ");
    if (cmd && (end == NULL || cmd < end) && strncmp(line, "id=", 3) == 0) {
      id = atoll(line + 3);
      found++;
    }
    line = end ? end + 1 : NULL;
  }
  freeReplyObject(r);
  ck_assert_int_eq(found, 1);
  return id;
}

/* The reader's link is cut (Redis kills its client) and it cannot come
 * back for a while (the default user, which it logs in as, gets a
 * password): the events published meanwhile by another store are heard
 * once it is back, once each, in order. */
START_TEST(events_reader_catches_up_after_lost_link) {
  char url[400];
  unix_url(url, sizeof url, NULL, 0);
  mcp_store *reading = open_store(url), *writing = open_store(url);
  hearer *h = hearer_new();
  ck_assert_int_eq(mcp_store_listen(reading, on_event, h), 0);
  publish(writing, "w:-1");
  ck_assert_int_eq(wait_heard(h, "w:-1", 20), 0);
  redisContext *c = admin_link();
  admin(c, "ACL SETUSER default resetpass >gap");
  long long id = reader_client(c);
  redisReply *r = redisCommand(c, "CLIENT KILL ID %lld", id);
  ck_assert(r != NULL && r->type == REDIS_REPLY_INTEGER && r->integer == 1);
  freeReplyObject(r);
  /* The writing store's connection logged in before: it goes on. */
  publisher p = {writing, 'w', 100};
  publish_run(&p);
  long long len = 0;
  for (int i = 0; i < 400 && len < 101; i++) {
    r = redisCommand(c, "XLEN mcp:events");
    ck_assert(r != NULL && r->type == REDIS_REPLY_INTEGER);
    len = r->integer;
    freeReplyObject(r);
    if (len < 101)
      sleep_ms(50);
  }
  ck_assert_int_eq(len, 101);
  ck_assert_int_eq(heard_count(h), 1); /* none while cut off */
  admin(c, "ACL SETUSER default nopass");
  publish(writing, "w:end");
  ck_assert_int_eq(wait_heard(h, "w:end", 30), 101);
  /* w:-1 first, then w:0..w:99, then w:end. */
  ck_assert_str_eq(h->ev[0].head, "w:-1");
  pthread_mutex_lock(&h->lock);
  memmove(&h->ev[0], &h->ev[1], (size_t)(h->n - 1) * sizeof h->ev[0]);
  h->n--;
  pthread_mutex_unlock(&h->lock);
  heard_in_order(h, "w", 100);
  redisFree(c);
  mcp_store_free(reading);
  mcp_store_free(writing);
  hearer_free(h);
}
END_TEST

/* Freed with listeners and publishes still queued: it returns (the
 * reader stopped, the queued events dropped), and nothing leaks. Also
 * while Redis hangs, the reader blocked on it. */
START_TEST(events_freed_with_listeners_and_queued_publishes) {
  char url[400];
  unix_url(url, sizeof url, NULL, 0);
  hearer *h = hearer_new(), *h2 = hearer_new();
  for (int hang = 0; hang < 2; hang++) {
    mcp_store *st = open_store(url);
    ck_assert_int_eq(mcp_store_listen(st, on_event, h), 0);
    ck_assert_int_eq(mcp_store_listen(st, on_event, h2), 0);
    if (hang)
      ck_assert_int_eq(kill(g_srv.pid, SIGSTOP), 0);
    for (int i = 0; i < 500; i++) {
      char ev[32];
      snprintf(ev, sizeof ev, "x:%d", i);
      int rc = mcp_store_publish(st, ev, strlen(ev));
      ck_assert_msg(rc == 0 || (hang && rc == MCP_EIO), "%d", rc);
    }
    mcp_store_free(st);
    if (hang)
      ck_assert_int_eq(kill(g_srv.pid, SIGCONT), 0);
  }
  /* Whatever was heard was heard by both, once. */
  ck_assert_int_le(heard_count(h), 1000);
  ck_assert_int_eq(heard_count(h), heard_count(h2));
  hearer_free(h);
  hearer_free(h2);
}
END_TEST

/* ---- records ----------------------------------------------------------------
 */

START_TEST(records_contract) {
  char url[400];
  unix_url(url, sizeof url, NULL, 0);
  mcp_store *st = open_store(url);
  store_contract_run(st, "plain", 300);
  mcp_store_free(st);
}
END_TEST

/* A budget full of running records refuses a put without reading them
 * (only its final records are ranked for eviction), passes over a member
 * ranked there that is not final (as a version before this one left
 * them), and evicts a record once it is settled, by an uncounted put. */
START_TEST(records_full_budget_refused_without_reading_it) {
  char url[400];
  unix_url(url, sizeof url, NULL, 0);
  mcp_store *st = open_store(url);
  enum { N = 200 };
  mcp_store_budget b = {.name = "scan", .max_records = N};
  mcp_store_count c = {.bytes = 1, .budgets = &b, .nbudgets = 1};
  char key[32];
  for (int i = 0; i < N; i++) {
    snprintf(key, sizeof key, "scan-%03d", i);
    sc_answer a = sc_put_counted(st, key, "working", NULL, NULL,
                                 (unsigned long long)i, 60000, false, &c);
    ck_assert_msg(a.rc == 0 && a.recs[0].written, "%d: %s", i, a.why);
  }
  redisContext *rc = admin_link();
  admin(rc, "ZADD mcp:bud:o:scan 0 scan-000");
  redisFree(rc);
  long long reads = command_calls("hmget");
  sc_answer a = sc_put_counted(st, "scan-new", "working", NULL, NULL, N, 60000,
                               false, &c);
  ck_assert_int_eq(a.rc, MCP_ELIMIT);
  ck_assert_msg(strstr(a.why, "none of them is final") != NULL, "%s", a.why);
  ck_assert_int_lt(command_calls("hmget") - reads, 20);
  ck_assert_uint_eq(sc_get(st, "scan-000").n, 1);
  /* scan-150 settled (uncounted: it keeps its counting): evicted next. */
  a = sc_put(st, "scan-150", "failed", NULL, NULL, 150, 60000, true);
  ck_assert(a.rc == 0 && a.recs[0].written);
  a = sc_put_counted(st, "scan-new", "working", NULL, NULL, N, 60000, false,
                     &c);
  ck_assert_msg(a.rc == 0 && a.n == 2, "rc %d n %u: %s", a.rc, a.n, a.why);
  ck_assert_str_eq(a.recs[1].key, "scan-150");
  mcp_store_free(st);
}
END_TEST

/* One store's records are another's: as two processes on one Redis. */
START_TEST(records_two_stores_see_each_other) {
  char url[400];
  unix_url(url, sizeof url, NULL, 0);
  mcp_store *a = open_store(url), *b = open_store(url);
  ck_assert_int_eq(mcp_store_node_join(a, "node-a", 5000), 0);
  ck_assert(sc_put(a, "task:1", "{\"s\":1}", "node-a", "tasks", 1, 60000, false)
                .recs[0]
                .written);
  sc_answer g = sc_get(b, "task:1");
  ck_assert_int_eq(g.rc, 0);
  ck_assert_uint_eq(g.n, 1);
  ck_assert_str_eq(g.recs[0].value, "{\"s\":1}");
  ck_assert_str_eq(g.recs[0].holder, "node-a");
  ck_assert(g.recs[0].holder_alive); /* a's lease, seen by b */
  /* b settles it first; a learns what it was settled as. */
  ck_assert(sc_put(b, "task:1", "{\"s\":2}", NULL, "tasks", 1, 60000, true)
                .recs[0]
                .written);
  sc_answer p =
      sc_put(a, "task:1", "{\"s\":3}", "node-a", "tasks", 1, 60000, true);
  ck_assert_uint_eq(p.n, 1);
  ck_assert(!p.recs[0].written);
  ck_assert(p.recs[0].final);
  ck_assert_str_eq(p.recs[0].value, "{\"s\":2}");
  ck_assert_str_eq(p.recs[0].holder, "");
  ck_assert(sc_put(b, "task:2", "two", NULL, "tasks", 2, 60000, false)
                .recs[0]
                .written);
  sc_answer l = sc_list(a, "tasks", 0, NULL, 10);
  ck_assert_uint_eq(l.n, 2);
  ck_assert(!l.more);
  ck_assert_str_eq(l.recs[0].key, "task:1");
  ck_assert_str_eq(l.recs[1].value, "two");
  /* Another database is another state. */
  unix_url(url, sizeof url, NULL, 1);
  mcp_store *c = open_store(url);
  ck_assert_uint_eq(sc_get(c, "task:1").n, 0);
  mcp_store_free(c);
  mcp_store_free(a);
  mcp_store_free(b);
}
END_TEST

typedef struct rec_waiter {
  pthread_mutex_t lock;
  pthread_cond_t cond;
  int answers, rc;
  unsigned n;
  bool alive; /* the first record's holder_alive */
  char why[512];
} rec_waiter;

static void on_records(void *arg, int rc, const mcp_store_record *recs,
                       unsigned n, bool more, const char *why) {
  (void)more;
  rec_waiter *w = arg;
  ck_assert_ptr_nonnull(why);
  ck_assert(rc != 0 || recs != NULL || n == 0);
  pthread_mutex_lock(&w->lock);
  w->answers++;
  w->rc = rc;
  w->n = n;
  w->alive = n > 0 && recs[0].holder_alive;
  snprintf(w->why, sizeof w->why, "%s", why);
  pthread_cond_broadcast(&w->cond);
  pthread_mutex_unlock(&w->lock);
}

static void rec_waiter_init(rec_waiter *w) {
  memset(w, 0, sizeof *w);
  pthread_mutex_init(&w->lock, NULL);
  pthread_cond_init(&w->cond, NULL);
}

static void rec_waiter_free(rec_waiter *w) {
  pthread_cond_destroy(&w->cond);
  pthread_mutex_destroy(&w->lock);
}

/* Waits (10 s at most) until w has n answers; returns how many it has. */
static int rec_wait(rec_waiter *w, int n) {
  struct timespec until;
  clock_gettime(CLOCK_REALTIME, &until);
  until.tv_sec += 10;
  pthread_mutex_lock(&w->lock);
  while (w->answers < n &&
         pthread_cond_timedwait(&w->cond, &w->lock, &until) == 0) {
  }
  int got = w->answers;
  pthread_mutex_unlock(&w->lock);
  return got;
}

/* A put while Redis is down: MCP_EIO with Redis's whereabouts, never a
 * hang; once it is back the store reconnects and the put takes. */
START_TEST(records_put_while_redis_down) {
  char url[400];
  unix_url(url, sizeof url, NULL, 0);
  mcp_store *st = open_store(url);
  ck_assert(
      sc_put(st, "k", "before", NULL, NULL, 0, 60000, false).recs[0].written);
  rs_stop(&g_srv);
  rec_waiter w;
  rec_waiter_init(&w);
  mcp_store_record rec = {.key = "k", .value = "down", .len = 4, .ttl_ms = 1};
  for (int i = 1; i <= 3; i++) {
    ck_assert_int_eq(mcp_store_put(st, &rec, on_records, &w), 0);
    ck_assert_int_eq(rec_wait(&w, i), i);
    ck_assert_int_eq(w.rc, MCP_EIO);
    ck_assert_msg(strstr(w.why, "Redis is unavailable") != NULL, "%s", w.why);
    ck_assert_msg(strstr(w.why, g_srv.sock) != NULL, "%s", w.why);
  }
  ck_assert_int_eq(mcp_store_get(st, "k", on_records, &w), 0);
  ck_assert_int_eq(rec_wait(&w, 4), 4);
  ck_assert_int_eq(w.rc, MCP_EIO);
  server_start(&g_srv); /* no persistence: Redis is empty again */
  rec.ttl_ms = 60000;
  rec.value = "after";
  rec.len = 5;
  int rc = MCP_EIO;
  for (int i = 0; i < 200 && rc != 0; i++) {
    int before = w.answers;
    ck_assert_int_eq(mcp_store_put(st, &rec, on_records, &w), 0);
    ck_assert_int_eq(rec_wait(&w, before + 1), before + 1);
    rc = w.rc;
    if (rc)
      sleep_ms(50);
  }
  ck_assert_int_eq(rc, 0);
  ck_assert_str_eq(sc_get(st, "k").recs[0].value, "after");
  rec_waiter_free(&w);
  mcp_store_free(st);
}
END_TEST

/* A node's lease outlives several of its length while its store renews
 * it; once its store is freed another store sees it gone. */
START_TEST(records_node_lease_renewed_then_gone_with_store) {
  char url[400];
  unix_url(url, sizeof url, NULL, 0);
  mcp_store *a = open_store(url), *b = open_store(url);
  ck_assert_int_eq(mcp_store_node_join(a, "worker-1", 1000), 0);
  ck_assert_int_eq(mcp_store_node_join(a, "worker-2", 1000), 0);
  ck_assert(sc_put(a, "held", "x", "worker-1", NULL, 0, 60000, false)
                .recs[0]
                .written);
  ck_assert(sc_put(a, "held2", "x", "worker-2", NULL, 0, 60000, false)
                .recs[0]
                .written);
  redisContext *c = redisConnectUnix(g_srv.sock);
  ck_assert(c != NULL && c->err == 0);
  /* Set with its lease (PX), and set again: still there after four. */
  for (int i = 0; i < 4; i++) {
    redisReply *r = redisCommand(c, "PTTL mcp:node:worker-1");
    ck_assert(r != NULL && r->type == REDIS_REPLY_INTEGER);
    ck_assert_int_gt(r->integer, 0);
    ck_assert_int_le(r->integer, 1000);
    freeReplyObject(r);
    sleep_ms(400);
  }
  ck_assert(sc_get(b, "held").recs[0].holder_alive);
  /* One leaves: the other is still renewed. */
  ck_assert_int_eq(mcp_store_node_join(a, "worker-2", 0), 0);
  ck_assert(!sc_get(a, "held2").recs[0].holder_alive);
  sleep_ms(1200);
  ck_assert(sc_get(b, "held").recs[0].holder_alive);
  mcp_store_free(a);
  bool alive = true;
  for (int i = 0; i < 250 && alive; i++) {
    alive = sc_get(b, "held").recs[0].holder_alive;
    if (alive)
      sleep_ms(20);
  }
  ck_assert(!alive);
  redisReply *r = redisCommand(c, "EXISTS mcp:node:worker-1");
  ck_assert(r != NULL && r->type == REDIS_REPLY_INTEGER);
  ck_assert_int_eq(r->integer, 0);
  freeReplyObject(r);
  redisFree(c);
  mcp_store_free(b);
}
END_TEST

/* A process that dies with a node joined (no free, nobody to drop its
 * lease): the lease runs out and its records' holder is no longer alive. */
START_TEST(records_node_of_dead_process_lapses) {
  char url[400];
  unix_url(url, sizeof url, NULL, 0);
  int fds[2];
  ck_assert_int_eq(pipe(fds), 0);
  pid_t pid = fork();
  ck_assert_int_ge(pid, 0);
  if (pid == 0) {
    close(fds[0]);
    mcp_store *st = NULL;
    char err[512], said = 'n';
    /* Its record, read back with its holder alive: the lease was set. */
    rec_waiter w;
    rec_waiter_init(&w);
    mcp_store_record rec = {.key = "orphan",
                            .value = "o",
                            .len = 1,
                            .holder = "dies",
                            .ttl_ms = 60000};
    if (mcp_redis_store_new(url, &st, err, sizeof err) == 0 &&
        mcp_store_node_join(st, "dies", 3000) == 0 &&
        mcp_store_put(st, &rec, on_records, &w) == 0 && rec_wait(&w, 1) == 1 &&
        mcp_store_get(st, "orphan", on_records, &w) == 0 &&
        rec_wait(&w, 2) == 2 && w.n == 1 && w.alive)
      said = 'y';
    ssize_t n = write(fds[1], &said, 1);
    (void)n;
    sleep(60); /* until killed */
    _exit(1);
  }
  close(fds[1]);
  char said = 0;
  ck_assert_int_eq(read(fds[0], &said, 1), 1);
  close(fds[0]);
  /* It dies as kill -9 does: nothing freed, no lease dropped. */
  ck_assert_int_eq(kill(pid, SIGKILL), 0);
  int status = 0;
  ck_assert_int_eq(waitpid(pid, &status, 0), pid);
  ck_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
  ck_assert_int_eq(said, 'y');
  mcp_store *st = open_store(url);
  bool alive = true;
  for (int i = 0; i < 200 && alive; i++) {
    alive = sc_get(st, "orphan").recs[0].holder_alive;
    if (alive)
      sleep_ms(50);
  }
  ck_assert(!alive);
  mcp_store_free(st);
}
END_TEST

static long long zcard(redisContext *c, const char *key) {
  redisReply *r = redisCommand(c, "ZCARD %s", key);
  ck_assert(r != NULL && r->type == REDIS_REPLY_INTEGER);
  long long n = r->integer;
  freeReplyObject(r);
  return n;
}

/* Records that expired leave their index as a list meets them; a list
 * meeting more of them than it may read at once answers none yet and more,
 * and the next goes on from there. */
START_TEST(records_list_skips_expired) {
  char url[400], key[32];
  unix_url(url, sizeof url, NULL, 0);
  mcp_store *st = open_store(url);
  redisContext *c = redisConnectUnix(g_srv.sock);
  ck_assert(c != NULL && c->err == 0);
  ck_assert(
      sc_put(st, "first", "1", NULL, "ix", 1, 60000, false).recs[0].written);
  for (int i = 0; i < 100; i++) {
    snprintf(key, sizeof key, "short-%03d", i);
    ck_assert(sc_put(st, key, "s", NULL, "ix", 2, 100, false).recs[0].written);
  }
  ck_assert(
      sc_put(st, "last", "3", NULL, "ix", 3, 60000, false).recs[0].written);
  ck_assert_int_eq(zcard(c, "mcp:idx:ix"), 102);
  for (int i = 0; i < 100 && sc_get(st, "short-099").n; i++)
    sleep_ms(50);
  ck_assert_uint_eq(sc_get(st, "short-099").n, 0);
  sc_answer a = sc_list(st, "ix", 0, NULL, 1);
  ck_assert_uint_eq(a.n, 1);
  ck_assert_str_eq(a.recs[0].key, "first");
  ck_assert(a.more); /* 68 read, all expired: perhaps more */
  ck_assert_int_lt(zcard(c, "mcp:idx:ix"), 102);
  unsigned long long order = a.recs[0].order;
  char after[256];
  snprintf(after, sizeof after, "%s", a.recs[0].key);
  int pages = 0;
  do {
    a = sc_list(st, "ix", order, after, 1);
    ck_assert_int_eq(a.rc, 0);
    pages++;
  } while (a.n == 0 && a.more && pages < 10);
  ck_assert_uint_eq(a.n, 1);
  ck_assert_str_eq(a.recs[0].key, "last");
  ck_assert(!a.more);
  ck_assert_int_eq(zcard(c, "mcp:idx:ix"), 2);
  /* A record moved to another index leaves the first. */
  ck_assert(
      sc_put(st, "last", "3", NULL, "other", 3, 60000, false).recs[0].written);
  ck_assert_int_eq(zcard(c, "mcp:idx:ix"), 1);
  ck_assert_uint_eq(sc_list(st, "other", 0, NULL, 5).n, 1);
  redisFree(c);
  mcp_store_free(st);
}
END_TEST

/* Orders up to 2^53 - 1 come back exact, in their order, and a page goes
 * on after a key among several of one order. */
START_TEST(records_orders_exact) {
  char url[400];
  unix_url(url, sizeof url, NULL, 0);
  mcp_store *st = open_store(url);
  const unsigned long long top = (1ull << 53) - 1;
  ck_assert(
      sc_put(st, "z", "z", NULL, "big", top, 60000, false).recs[0].written);
  ck_assert(
      sc_put(st, "y", "y", NULL, "big", top - 1, 60000, false).recs[0].written);
  static const char *const same[] = {"b\xc3\xa9", "b", "ba", "a", "bz"};
  for (int i = 0; i < 5; i++)
    ck_assert(
        sc_put(st, same[i], "s", NULL, "big", 7, 60000, false).recs[0].written);
  sc_answer a = sc_list(st, "big", 0, NULL, 8);
  ck_assert_uint_eq(a.n, 7);
  static const char *const want[] = {"a", "b", "ba", "bz", "b\xc3\xa9"};
  for (int i = 0; i < 5; i++)
    ck_assert_str_eq(a.recs[i].key, want[i]);
  ck_assert_uint_eq(a.recs[5].order, top - 1);
  ck_assert_uint_eq(a.recs[6].order, top);
  a = sc_list(st, "big", 7, "b", 2);
  ck_assert_uint_eq(a.n, 2);
  ck_assert_str_eq(a.recs[0].key, "ba");
  ck_assert_str_eq(a.recs[1].key, "bz");
  ck_assert(a.more);
  a = sc_list(st, "big", 7, "bb", 8); /* a key that is not there */
  ck_assert_uint_eq(a.n, 4);
  ck_assert_str_eq(a.recs[0].key, "bz");
  ck_assert_uint_eq(sc_get(st, "z").recs[0].order, top);
  mcp_store_free(st);
}
END_TEST

/* A store freed with records in flight answers each once. */
START_TEST(records_freed_in_flight) {
  char url[400];
  unix_url(url, sizeof url, NULL, 0);
  mcp_store *st = open_store(url);
  rec_waiter w;
  rec_waiter_init(&w);
  mcp_store_record rec = {.key = "f", .value = "v", .len = 1, .ttl_ms = 100};
  ck_assert_int_eq(mcp_store_node_join(st, "leaving", 1000), 0);
  for (int i = 0; i < 50; i++) {
    ck_assert_int_eq(mcp_store_put(st, &rec, on_records, &w), 0);
    ck_assert_int_eq(mcp_store_get(st, "f", on_records, &w), 0);
    ck_assert_int_eq(mcp_store_list(st, "i", 0, NULL, 3, on_records, &w), 0);
  }
  mcp_store_free(st);
  ck_assert_int_eq(w.answers, 150);
  rec_waiter_free(&w);
}
END_TEST

/* Every allocation of a store's records failing in turn: an error, never
 * a crash, a leak or an answer given twice. */
static bool run_alloc_records(long n, void *user) {
  (void)n;
  mcp_store *st = NULL;
  char err[512];
  int rc = mcp_redis_store_new(user, &st, err, sizeof err);
  if (rc) {
    ck_assert_int_eq(rc, MCP_ENOMEM);
    return false;
  }
  bool ok = true;
  int asked = 0;
  rec_waiter w;
  rec_waiter_init(&w);
  mcp_store_record rec = {
      .key = "m", .value = "v", .len = 1, .index = "mi", .ttl_ms = 60000};
  int rcs[4] = {mcp_store_node_join(st, "mnode", 1000),
                mcp_store_put(st, &rec, on_records, &w),
                mcp_store_get(st, "m", on_records, &w),
                mcp_store_list(st, "mi", 0, NULL, 5, on_records, &w)};
  for (int i = 0; i < 4; i++) {
    ck_assert_msg(rcs[i] == 0 || rcs[i] == MCP_ENOMEM, "%d", rcs[i]);
    ok = ok && rcs[i] == 0;
    asked += i > 0 && rcs[i] == 0;
  }
  ck_assert_int_eq(rec_wait(&w, asked), asked);
  ok = ok && w.rc == 0;
  mcp_store_free(st);
  ck_assert_int_eq(w.answers, asked);
  rec_waiter_free(&w);
  return ok;
}

START_TEST(records_every_allocation_failure) {
  char url[400];
  unix_url(url, sizeof url, NULL, 0);
  tu_alloc_every(64, run_alloc_records, NULL, url);
}
END_TEST

/* Every allocation of the store's failing in turn: an error, never a
 * crash, a leak or a take answered twice. */
static bool run_alloc(long n, void *user) {
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
  bool ok = rc == 0 && w.last_rc == 0;
  /* Events: listening (the first starts the reader), publishing, heard. */
  hearer *h = hearer_new();
  char ev[32];
  snprintf(ev, sizeof ev, "run %ld", n);
  int lrc = mcp_store_listen(st, on_event, h);
  ck_assert_msg(lrc == 0 || lrc == MCP_ENOMEM, "%d", lrc);
  int prc = mcp_store_publish(st, ev, strlen(ev));
  ck_assert_msg(prc == 0 || prc == MCP_ENOMEM, "%d", prc);
  if (lrc == 0 && prc == 0)
    ck_assert_int_ge(wait_heard(h, ev, 20), 0);
  ok = ok && lrc == 0 && prc == 0;
  mcp_store_free(st);
  ck_assert_int_eq(w.answers, rc ? 0 : 1);
  waiter_free(&w);
  hearer_free(h);
  return ok;
}

START_TEST(every_allocation_failure) {
  char url[400];
  unix_url(url, sizeof url, NULL, 0);
  tu_alloc_every(64, run_alloc, NULL, url);
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
  tcase_add_test(tc, leases_never_take_more_than_the_bucket);
  tcase_add_test(tc, concurrent_takes_never_overspend);
  tcase_add_test(tc, stopped_then_restarted);
  tcase_add_test(tc, hung_redis_times_out_then_recovers);
  tcase_add_test(tc, idle_connection_closed_then_take_answered);
  tcase_add_test(tc, script_flushed_then_sent_again);
  tcase_add_test(tc, freed_with_takes_in_flight);
  tcase_add_test(tc, events_heard_by_every_store_once_in_order);
  tcase_add_test(tc, events_stay_in_their_database);
  tcase_add_test(tc, events_binary_and_largest_intact);
  tcase_add_test(tc, events_listener_removed_hears_nothing_more);
  tcase_add_test(tc, events_redis_stopped_then_restarted);
  tcase_add_test(tc, events_listen_while_redis_down);
  tcase_add_test(tc, events_reader_catches_up_after_lost_link);
  tcase_add_test(tc, events_freed_with_listeners_and_queued_publishes);
  tcase_add_test(tc, store_threads_take_no_signal);
  tcase_add_test(tc, every_allocation_failure);
  tcase_add_test(tc, records_contract);
  tcase_add_test(tc, records_full_budget_refused_without_reading_it);
  tcase_add_test(tc, records_two_stores_see_each_other);
  tcase_add_test(tc, records_put_while_redis_down);
  tcase_add_test(tc, records_node_lease_renewed_then_gone_with_store);
  tcase_add_test(tc, records_node_of_dead_process_lapses);
  tcase_add_test(tc, records_list_skips_expired);
  tcase_add_test(tc, records_orders_exact);
  tcase_add_test(tc, records_freed_in_flight);
  tcase_add_test(tc, records_every_allocation_failure);
  tc = tu_tcase(s, "acl", setup_acl, teardown, 60);
  tcase_add_test(tc, acl_user_and_password);
  tcase_add_test(tc, acl_records_contract);
  return tu_run(s);
}
