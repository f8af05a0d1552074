/* The Redis store: mcp/store.h's interface over hiredis's synchronous API,
 * on one thread of the store's own that owns the connection and serves a
 * queue. A caller only queues (mcp_store_rate_take returns at once); the
 * thread answers through the caller's callback. Synchronous hiredis on a
 * thread of its own rather than its asynchronous API, which needs an event
 * loop adapter: one connection serves one request at a time, each bounded
 * by the command timeout, and the code stays a plain loop; the takes queued
 * meanwhile go out together (pipelined) and their answers are read in
 * order, one round trip for all. While the
 * connection is down the thread answers every request at once with an
 * error and reconnects with a growing pause. */
#include <errno.h>
#include <hiredis/hiredis.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <time.h>

#include "base.h"
#include "redis_int.h"

#define TIMEOUT_MS 2000
#define BACKOFF_MIN_MS 100
#define BACKOFF_MAX_MS 5000
/* The most takes sent to Redis at once, before their answers are read. */
#define BATCH 64
/* The threads that deliver answers (see "the answers" below). */
#define ANSWER_THREADS 2

/* The token bucket, atomic in Redis: KEYS[1] the bucket (a hash of tokens
 * and ts, Redis's clock in milliseconds), ARGV calls and per seconds.
 * Returns {allowed, wait_ms}. The hash expires once a full bucket would be
 * back. */
static const char SCRIPT[] =
    "if redis.replicate_commands then redis.replicate_commands() end\n"
    "local calls = tonumber(ARGV[1])\n"
    "local per_ms = tonumber(ARGV[2]) * 1000\n"
    "local t = redis.call('TIME')\n"
    "local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)\n"
    "local b = redis.call('HMGET', KEYS[1], 'tokens', 'ts')\n"
    "local tokens = tonumber(b[1])\n"
    "local ts = tonumber(b[2])\n"
    "if tokens == nil or ts == nil then tokens = calls; ts = now end\n"
    "if now > ts then tokens = tokens + (now - ts) * calls / per_ms end\n"
    "if tokens > calls then tokens = calls end\n"
    "local allowed, wait = 0, 0\n"
    "if tokens >= 1 then\n"
    "  tokens = tokens - 1; allowed = 1\n"
    "else\n"
    "  wait = math.ceil((1 - tokens) * per_ms / calls)\n"
    "  if wait < 1 then wait = 1 end\n"
    "end\n"
    "redis.call('HSET', KEYS[1], 'tokens', string.format('%.17g', tokens),\n"
    "           'ts', string.format('%d', now))\n"
    "redis.call('PEXPIRE', KEYS[1], per_ms + 1000)\n"
    "return {allowed, wait}\n";

#define KEY_PREFIX "mcp:rate:"

typedef struct request {
  struct request *next;
  unsigned calls, per_s;
  mcp_store_rate_done done;
  void *arg;
  /* The answer, once Redis gave it (or failed), for an answer thread. */
  int rc;
  mcp_store_rate_answer answer;
  char *why; /* owned; NULL: why_const */
  const char *why_const;
  char key[]; /* KEY_PREFIX and the caller's key */
} request;

typedef struct rstore {
  mcp__redis_url url;
  pthread_t thread;
  pthread_mutex_t lock; /* guards the queue and stop */
  pthread_cond_t cond;  /* on CLOCK_MONOTONIC */
  request *head, **tail;
  bool stop;
  /* The thread's own, and new()'s before it starts: */
  redisContext *c; /* NULL while down */
  char sha[41];
  unsigned long long retry_at_us;
  unsigned backoff_ms;
  char down_why[400];
  /* The answers (rs->lock too): answered requests, oldest first, and the
   * threads that deliver them. */
  pthread_cond_t answered;
  request *ahead, **atail;
  bool astop;
  pthread_t answerers[ANSWER_THREADS];
  unsigned nanswerers;
} rstore;

/* A write to a connection Redis closed raises SIGPIPE, which would end the
 * process: the store's thread blocks it for good (a pending one dies with
 * the thread), and the caller's thread while new() talks to Redis, taking
 * back a SIGPIPE it raised. */
static void pipe_block(sigset_t *old) {
  sigset_t s;
  sigemptyset(&s);
  sigaddset(&s, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &s, old);
}

static void pipe_restore(const sigset_t *old) {
  if (sigismember(old, SIGPIPE))
    return; /* it was blocked before: nothing of ours to take back */
  sigset_t s, pending;
  sigemptyset(&s);
  sigaddset(&s, SIGPIPE);
  if (sigpending(&pending) == 0 && sigismember(&pending, SIGPIPE)) {
    struct timespec zero = {0, 0};
    sigtimedwait(&s, NULL, &zero);
  }
  pthread_sigmask(SIG_SETMASK, old, NULL);
}

static struct timeval tv_of(unsigned ms) {
  return (struct timeval){.tv_sec = ms / 1000, .tv_usec = (ms % 1000) * 1000};
}

/* Runs one command of argc arguments; the reply, or NULL when the
 * connection failed (c->errstr says why). */
static redisReply *command(redisContext *c, int argc, const char **argv,
                           const size_t *lens) {
  return redisCommandArgv(c, argc, argv, lens);
}

/* One command with NUL-terminated arguments that must answer without an
 * error. Returns 0, or MCP_EIO with why set ("what: the reason"). */
static int expect_ok(rstore *rs, const char *what, int argc, const char **argv,
                     redisReply **out) {
  size_t lens[4];
  for (int i = 0; i < argc; i++)
    lens[i] = strlen(argv[i]);
  redisReply *r = command(rs->c, argc, argv, lens);
  if (r == NULL) {
    mcp__fmt(rs->down_why, sizeof rs->down_why, "%s %s: %s", what,
             rs->url.shown, rs->c->errstr);
    return MCP_EIO;
  }
  if (r->type == REDIS_REPLY_ERROR) {
    mcp__fmt(rs->down_why, sizeof rs->down_why, "%s %s refused: %s", what,
             rs->url.shown, r->str);
    freeReplyObject(r);
    return MCP_EIO;
  }
  if (out)
    *out = r;
  else
    freeReplyObject(r);
  return 0;
}

/* Logs in, selects the database and loads the script. */
static int handshake(rstore *rs) {
  const mcp__redis_url *u = &rs->url;
  int rc = 0;
  if (u->has_pass) {
    /* AUTH user password (an ACL user, Redis 6), or AUTH password. */
    const char *with_user[] = {"AUTH", u->user, u->pass};
    const char *alone[] = {"AUTH", u->pass};
    rc = u->user[0] ? expect_ok(rs, "AUTH at", 3, with_user, NULL)
                    : expect_ok(rs, "AUTH at", 2, alone, NULL);
  }
  if (rc == 0 && u->db != 0) {
    char db[24];
    mcp__fmt(db, sizeof db, "%ld", u->db);
    rc = expect_ok(rs, "SELECT at", 2, (const char *[]){"SELECT", db}, NULL);
  }
  redisReply *r = NULL;
  if (rc == 0)
    rc = expect_ok(rs, "SCRIPT LOAD at", 3,
                   (const char *[]){"SCRIPT", "LOAD", SCRIPT}, &r);
  if (rc == 0) {
    if (r->type != REDIS_REPLY_STRING || r->len != 40) {
      mcp__fmt(rs->down_why, sizeof rs->down_why,
               "SCRIPT LOAD at %s: an unexpected answer", u->shown);
      rc = MCP_EIO;
    } else {
      memcpy(rs->sha, r->str, 40);
      rs->sha[40] = '\0';
    }
    freeReplyObject(r);
  }
  return rc;
}

/* Connects (bounded by the timeout). Returns 0, or MCP_EIO with
 * down_why set and the next attempt scheduled. */
static int connect_now(rstore *rs) {
  const mcp__redis_url *u = &rs->url;
  struct timeval tv = tv_of(TIMEOUT_MS);
  rs->c = u->is_unix ? redisConnectUnixWithTimeout(u->path, tv)
                     : redisConnectWithTimeout(u->host, u->port, tv);
  int rc = 0;
  if (rs->c == NULL) {
    mcp__fmt(rs->down_why, sizeof rs->down_why,
             "cannot connect to %s: out of memory", u->shown);
    rc = MCP_EIO;
  } else if (rs->c->err) {
    mcp__fmt(rs->down_why, sizeof rs->down_why, "cannot connect to %s: %s",
             u->shown, rs->c->errstr);
    rc = MCP_EIO;
  } else if (redisSetTimeout(rs->c, tv) != REDIS_OK) {
    mcp__fmt(rs->down_why, sizeof rs->down_why, "cannot set a timeout on %s",
             u->shown);
    rc = MCP_EIO;
  } else {
    rc = handshake(rs);
  }
  if (rc == 0) {
    rs->backoff_ms = BACKOFF_MIN_MS;
    return 0;
  }
  if (rs->c)
    redisFree(rs->c);
  rs->c = NULL;
  rs->retry_at_us = mcp__now_us() + rs->backoff_ms * 1000ull;
  rs->backoff_ms =
      rs->backoff_ms * 2 > BACKOFF_MAX_MS ? BACKOFF_MAX_MS : rs->backoff_ms * 2;
  return MCP_EIO;
}

/* The connection failed: drop it, retry at once (the next attempt then
 * backs off). */
static void lost(rstore *rs) {
  mcp__fmt(rs->down_why, sizeof rs->down_why, "lost %s: %s", rs->url.shown,
           rs->c->errstr[0] ? rs->c->errstr : "connection closed");
  redisFree(rs->c);
  rs->c = NULL;
  rs->retry_at_us = mcp__now_us();
}

/* Appends the script's command for q to the connection's output (EVALSHA,
 * or EVAL with the script itself). Returns false when hiredis ran out of
 * memory (c->err says so). */
static bool append_script(rstore *rs, const request *q, bool eval) {
  char calls[16], per[16];
  mcp__fmt(calls, sizeof calls, "%u", q->calls);
  mcp__fmt(per, sizeof per, "%u", q->per_s);
  const char *argv[] = {eval ? "EVAL" : "EVALSHA",
                        eval ? SCRIPT : rs->sha,
                        "1",
                        q->key,
                        calls,
                        per};
  size_t lens[6];
  for (int i = 0; i < 6; i++)
    lens[i] = strlen(argv[i]);
  return redisAppendCommandArgv(rs->c, 6, argv, lens) == REDIS_OK;
}

/* ---- the answers -----------------------------------------------------------
 * The engine goes on with a call on the thread that delivers its answer,
 * running the handler there when no executor is installed: the I/O thread
 * only queues answers, and ANSWER_THREADS threads of the store's deliver
 * them, so that a slow handler delays neither Redis's round trips nor
 * (up to their number) other answers. */

/* Hands q, answered (rc, a, why as mcp_store_rate_done's), to the answer
 * threads, which free it. The text is copied; without memory for it, a
 * fixed one says the store failed. */
static void deliver(rstore *rs, request *q, int rc,
                    const mcp_store_rate_answer *a, const char *why) {
  q->next = NULL;
  q->rc = rc;
  if (a)
    q->answer = *a;
  q->why = why[0] ? mcp__strdup(why) : NULL;
  q->why_const = why[0] ? "the Redis store failed (out of memory)" : "";
  pthread_mutex_lock(&rs->lock);
  *rs->atail = q;
  rs->atail = &q->next;
  pthread_cond_signal(&rs->answered);
  pthread_mutex_unlock(&rs->lock);
}

/* An answer thread: delivers answers until told to stop and none is left. */
static void *answerer(void *arg) {
  rstore *rs = arg;
  for (;;) {
    pthread_mutex_lock(&rs->lock);
    while (rs->ahead == NULL && !rs->astop)
      pthread_cond_wait(&rs->answered, &rs->lock);
    request *q = rs->ahead;
    if (q) {
      rs->ahead = q->next;
      if (rs->ahead == NULL)
        rs->atail = &rs->ahead;
    }
    pthread_mutex_unlock(&rs->lock);
    if (q == NULL)
      return NULL;
    q->done(q->arg, q->rc, q->rc == 0 ? &q->answer : NULL,
            q->why ? q->why : q->why_const);
    mcp__free(q->why);
    mcp__free(q);
  }
}

/* Answers q with an error: Redis cannot be reached. */
static void unavailable(rstore *rs, request *q) {
  char why[512];
  mcp__fmt(why, sizeof why, "Redis is unavailable (%s)", rs->down_why);
  deliver(rs, q, MCP_EIO, NULL, why);
}

/* Answers q from the script's reply r, which it frees. */
static void answer(rstore *rs, request *q, redisReply *r) {
  if (r->type == REDIS_REPLY_ARRAY && r->elements == 2 &&
      r->element[0]->type == REDIS_REPLY_INTEGER &&
      r->element[1]->type == REDIS_REPLY_INTEGER) {
    bool allowed = r->element[0]->integer == 1;
    mcp_store_rate_answer a = {
        .allowed = allowed,
        .wait_ms = allowed ? 0 : (unsigned long long)r->element[1]->integer};
    freeReplyObject(r);
    deliver(rs, q, 0, &a, "");
    return;
  }
  char why[512];
  mcp__fmt(why, sizeof why, "Redis at %s answered the rate script with %s",
           rs->url.shown,
           r->type == REDIS_REPLY_ERROR ? r->str : "an unexpected reply");
  freeReplyObject(r);
  deliver(rs, q, MCP_EIO, NULL, why);
}

static bool noscript(const redisReply *r) {
  return r->type == REDIS_REPLY_ERROR && strncmp(r->str, "NOSCRIPT", 8) == 0;
}

/* Sends the script for every request of the chain q at once, then reads
 * the replies in order (one round trip for all) and answers each, freeing
 * it; without a connection, or once it fails, the rest are answered with
 * an error. Returns the chain of those whose script Redis had lost (a
 * restart, SCRIPT FLUSH), to send again with eval; none when eval. */
static request *serve_round(rstore *rs, request *q, bool eval) {
  for (const request *p = q; p && rs->c; p = p->next)
    if (!append_script(rs, p, eval))
      lost(rs);
  request *again = NULL, **tail = &again;
  while (q) {
    request *next = q->next;
    void *r = NULL;
    if (rs->c && redisGetReply(rs->c, &r) != REDIS_OK)
      lost(rs);
    if (rs->c == NULL) {
      unavailable(rs, q);
    } else if (!eval && noscript(r)) {
      freeReplyObject(r);
      q->next = NULL;
      *tail = q;
      tail = &q->next;
    } else {
      answer(rs, q, r);
    }
    q = next;
  }
  return again;
}

/* Takes up to BATCH requests off the queue, as a chain, or NULL when it is
 * time to reconnect (or to stop: *stop). Under no lock; takes rs->lock. */
static request *next_batch(rstore *rs, bool *stop) {
  pthread_mutex_lock(&rs->lock);
  while (rs->head == NULL && !rs->stop) {
    if (rs->c != NULL) {
      pthread_cond_wait(&rs->cond, &rs->lock);
      continue;
    }
    unsigned long long now = mcp__now_us();
    if (now >= rs->retry_at_us)
      break;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    unsigned long long wait = rs->retry_at_us - now;
    ts.tv_sec += (time_t)(wait / 1000000);
    ts.tv_nsec += (long)(wait % 1000000) * 1000;
    if (ts.tv_nsec >= 1000000000L) {
      ts.tv_sec++;
      ts.tv_nsec -= 1000000000L;
    }
    pthread_cond_timedwait(&rs->cond, &rs->lock, &ts);
  }
  request *q = rs->head, *last = NULL;
  int n = 0;
  for (request *p = q; p && n < BATCH; p = p->next, n++)
    last = p;
  if (last) {
    rs->head = last->next;
    last->next = NULL;
    if (rs->head == NULL)
      rs->tail = &rs->head;
  }
  *stop = rs->stop;
  pthread_mutex_unlock(&rs->lock);
  return q;
}

static void *worker(void *arg) {
  rstore *rs = arg;
  sigset_t old;
  pipe_block(&old);
  for (;;) {
    bool stop;
    request *q = next_batch(rs, &stop);
    if (q == NULL && stop)
      break;
    if (stop) {
      while (q) {
        request *next = q->next;
        deliver(rs, q, MCP_EIO, NULL, "the Redis store is being freed");
        q = next;
      }
      continue;
    }
    if (rs->c == NULL && mcp__now_us() >= rs->retry_at_us)
      connect_now(rs);
    request *again = serve_round(rs, q, false);
    if (again)
      serve_round(rs, again, true);
  }
  return NULL;
}

static int rs_take(void *impl, const char *key, unsigned calls,
                   unsigned per_seconds, mcp_store_rate_done done, void *arg) {
  rstore *rs = impl;
  size_t n = strlen(key);
  request *q = mcp__malloc(sizeof *q + sizeof KEY_PREFIX + n);
  if (q == NULL)
    return MCP_ENOMEM;
  *q =
      (request){.calls = calls, .per_s = per_seconds, .done = done, .arg = arg};
  memcpy(q->key, KEY_PREFIX, sizeof KEY_PREFIX - 1);
  memcpy(q->key + sizeof KEY_PREFIX - 1, key, n + 1);
  pthread_mutex_lock(&rs->lock);
  *rs->tail = q;
  rs->tail = &q->next;
  pthread_cond_signal(&rs->cond);
  pthread_mutex_unlock(&rs->lock);
  return 0;
}

static void rs_describe(void *impl, char *buf, unsigned long size) {
  const rstore *rs = impl;
  mcp__fmt(buf, size, "%s", rs->url.shown);
}

/* Stops the answer threads once every answer queued is delivered. */
static void answerers_stop(rstore *rs) {
  pthread_mutex_lock(&rs->lock);
  rs->astop = true;
  pthread_cond_broadcast(&rs->answered);
  pthread_mutex_unlock(&rs->lock);
  for (unsigned i = 0; i < rs->nanswerers; i++)
    pthread_join(rs->answerers[i], NULL);
  rs->nanswerers = 0;
}

static void rs_destroy(rstore *rs) {
  answerers_stop(rs);
  if (rs->c)
    redisFree(rs->c);
  pthread_cond_destroy(&rs->answered);
  pthread_cond_destroy(&rs->cond);
  pthread_mutex_destroy(&rs->lock);
  mcp__free(rs);
}

static void rs_free(void *impl) {
  rstore *rs = impl;
  pthread_mutex_lock(&rs->lock);
  rs->stop = true;
  pthread_cond_signal(&rs->cond);
  pthread_mutex_unlock(&rs->lock);
  pthread_join(rs->thread, NULL);
  rs_destroy(rs);
}

static const mcp_store_ops redis_ops = {.rate_take = rs_take,
                                        .describe = rs_describe,
                                        .free = rs_free,
                                        .shared = true};

/* The lock, the condition on the monotonic clock. */
static int rs_sync_init(rstore *rs) {
  pthread_condattr_t ca;
  if (pthread_condattr_init(&ca) != 0)
    return MCP_ENOMEM;
  int ok = pthread_condattr_setclock(&ca, CLOCK_MONOTONIC) == 0 &&
           pthread_cond_init(&rs->cond, &ca) == 0;
  pthread_condattr_destroy(&ca);
  if (!ok)
    return MCP_ENOMEM;
  if (pthread_cond_init(&rs->answered, NULL) != 0) {
    pthread_cond_destroy(&rs->cond);
    return MCP_ENOMEM;
  }
  if (pthread_mutex_init(&rs->lock, NULL) != 0) {
    pthread_cond_destroy(&rs->answered);
    pthread_cond_destroy(&rs->cond);
    return MCP_ENOMEM;
  }
  rs->atail = &rs->ahead;
  return 0;
}

int mcp_redis_store_new(const char *url, mcp_store **out, char *err,
                        size_t errlen) {
  char why[512], scratch[600];
  char *e = err ? err : scratch; /* never why: it is formatted into e */
  size_t el = err ? errlen : sizeof scratch;
  if (out == NULL) {
    mcp__fmt(e, el, "%s", "no place for the store");
    return MCP_EINVAL;
  }
  *out = NULL;
  rstore *rs = mcp__calloc(1, sizeof *rs);
  if (rs == NULL) {
    mcp__fmt(e, el, "%s", "out of memory");
    return MCP_ENOMEM;
  }
  int rc = mcp__redis_url_parse(url, &rs->url, why, sizeof why);
  if (rc) {
    mcp__free(rs);
    mcp__fmt(e, el, "bad Redis URL: %s", why);
    return rc;
  }
  if ((rc = rs_sync_init(rs)) != 0) {
    mcp__free(rs);
    mcp__fmt(e, el, "%s", "out of memory");
    return rc;
  }
  rs->tail = &rs->head;
  rs->backoff_ms = BACKOFF_MIN_MS;
  sigset_t old;
  pipe_block(&old);
  rc = connect_now(rs);
  pipe_restore(&old);
  if (rc != 0) {
    mcp__fmt(e, el, "%s", rs->down_why);
    rs_destroy(rs);
    return MCP_EIO;
  }
  for (; rs->nanswerers < ANSWER_THREADS; rs->nanswerers++)
    if (pthread_create(&rs->answerers[rs->nanswerers], NULL, answerer, rs) !=
        0) {
      mcp__fmt(e, el, "%s", "cannot start the store's answer threads");
      rs_destroy(rs);
      return MCP_ENOMEM;
    }
  if (pthread_create(&rs->thread, NULL, worker, rs) != 0) {
    mcp__fmt(e, el, "%s", "cannot start the store's thread");
    rs_destroy(rs);
    return MCP_ENOMEM;
  }
  mcp_store *st = mcp_store_new(&redis_ops, rs);
  if (st == NULL) {
    rs_free(rs);
    mcp__fmt(e, el, "%s", "out of memory");
    return MCP_ENOMEM;
  }
  *out = st;
  return 0;
}
