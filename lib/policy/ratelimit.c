/* The rate limit of tools/call as a pure policy: a token bucket per
 * caller, in a bounded table that forgets the least recently used caller
 * first (at most 4096), on CLOCK_MONOTONIC, thread-safe. The engine decides
 * who the caller is and answers a refusal (lib/engine's limits.c). */
#include <string.h>

#include "policy.h"

/* The table: hash chains, and how many callers it remembers. */
#define RATE_HEADS 1024u
#define RATE_MAX 4096u

struct mcp__rate_entry {
  mcp__list chain; /* in its hash chain */
  mcp__list lru;   /* in the LRU list, most recent first */
  unsigned hash;
  unsigned long long serial; /* an anonymous caller's session; 0 = subject */
  double tokens;
  unsigned long long last_us;
  char subject[]; /* "" for an anonymous caller */
};

int mcp__ratelimit_init(mcp__ratelimit *rl) {
  atomic_init(&rl->calls, 0);
  rl->per_s = 0;
  rl->heads = NULL;
  mcp__list_init(&rl->lru);
  rl->n = 0;
  return pthread_mutex_init(&rl->lock, NULL) == 0 ? 0 : MCP_ENOMEM;
}

/* Forgets every caller. Under rl->lock (or when nobody else can look). */
static void rate_clear(mcp__ratelimit *rl) {
  mcp__list_each(link, &rl->lru)
      mcp__free(mcp__container_of(link, mcp__rate_entry, lru));
  mcp__free(rl->heads);
  rl->heads = NULL;
  mcp__list_init(&rl->lru);
  rl->n = 0;
}

void mcp__ratelimit_free(mcp__ratelimit *rl) {
  rate_clear(rl);
  pthread_mutex_destroy(&rl->lock);
}

int mcp__ratelimit_set(mcp__ratelimit *rl, unsigned calls, unsigned per_s) {
  if (calls > 0 && per_s == 0)
    return MCP_EINVAL;
  pthread_mutex_lock(&rl->lock);
  if (calls == 0)
    rate_clear(rl);
  rl->per_s = per_s;
  atomic_store(&rl->calls, calls);
  pthread_mutex_unlock(&rl->lock);
  return 0;
}

/* Drops the caller seen least recently. */
static void evict(mcp__ratelimit *rl) {
  mcp__rate_entry *e = mcp__container_of(rl->lru.prev, mcp__rate_entry, lru);
  mcp__list_remove(&e->chain);
  mcp__list_remove(&e->lru);
  mcp__free(e);
  rl->n--;
}

/* FNV-1a of the subject, or of the serial for an anonymous caller. */
static unsigned key_hash(const char *subject, unsigned long long serial) {
  unsigned h = 2166136261u;
  if (subject)
    for (const unsigned char *p = (const unsigned char *)subject; *p; p++)
      h = (h ^ *p) * 16777619u;
  else
    for (int i = 0; i < 8; i++)
      h = (h ^ (unsigned)((serial >> (8 * i)) & 0xff)) * 16777619u;
  return h;
}

/* Finds or adds the caller's entry and moves it to the front. Returns NULL
 * when memory ran out. Under rl->lock. */
static mcp__rate_entry *rate_entry(mcp__ratelimit *rl, const char *subject,
                                   unsigned long long serial,
                                   unsigned long long now) {
  if (rl->heads == NULL) {
    if ((rl->heads = mcp__malloc(RATE_HEADS * sizeof *rl->heads)) == NULL)
      return NULL;
    for (unsigned i = 0; i < RATE_HEADS; i++)
      mcp__list_init(&rl->heads[i]);
  }
  unsigned h = key_hash(subject, serial);
  mcp__list *head = &rl->heads[h % RATE_HEADS];
  mcp__list_each(link, head) {
    mcp__rate_entry *e = mcp__container_of(link, mcp__rate_entry, chain);
    if (e->hash == h && e->serial == (subject ? 0 : serial) &&
        strcmp(e->subject, subject ? subject : "") == 0) {
      mcp__list_remove(&e->lru);
      mcp__list_push_front(&rl->lru, &e->lru);
      return e;
    }
  }
  mcp__rate_entry *e;
  size_t len = subject ? strlen(subject) : 0;
  if ((e = mcp__malloc(sizeof *e + len + 1)) == NULL)
    return NULL;
  if (rl->n >= RATE_MAX)
    evict(rl);
  *e = (mcp__rate_entry){.hash = h,
                         .serial = subject ? 0 : serial,
                         .tokens = (double)atomic_load(&rl->calls),
                         .last_us = now};
  memcpy(e->subject, subject ? subject : "", len + 1);
  mcp__list_push_front(head, &e->chain);
  mcp__list_push_front(&rl->lru, &e->lru);
  rl->n++;
  return e;
}

int mcp__ratelimit_take(mcp__ratelimit *rl, const char *subject,
                        unsigned long long serial, unsigned *calls_out,
                        unsigned *per_out, unsigned long long *wait_s) {
  if (atomic_load(&rl->calls) == 0)
    return 0;
  pthread_mutex_lock(&rl->lock);
  /* The clock is read under the lock: read before it, a thread that waited
   * would carry a time older than the bucket's last refill, and the
   * unsigned difference would refill the bucket whole. */
  unsigned long long now = mcp__now_us();
  unsigned calls = atomic_load(&rl->calls), per = rl->per_s;
  if (calls == 0) {
    pthread_mutex_unlock(&rl->lock);
    return 0;
  }
  mcp__rate_entry *e = rate_entry(rl, subject, serial, now);
  if (e == NULL) {
    pthread_mutex_unlock(&rl->lock);
    return MCP_ENOMEM;
  }
  /* Tokens come back evenly, calls of them per per seconds, up to a full
   * bucket. */
  double period_us = (double)per * 1e6;
  if (now > e->last_us)
    e->tokens += (double)(now - e->last_us) * calls / period_us;
  if (e->tokens > calls)
    e->tokens = calls;
  e->last_us = now;
  bool allowed = e->tokens >= 1.0;
  double wait_us = 0;
  if (allowed)
    e->tokens -= 1.0;
  else
    wait_us = (1.0 - e->tokens) * period_us / calls;
  pthread_mutex_unlock(&rl->lock);
  if (allowed)
    return 0;
  *calls_out = calls;
  *per_out = per;
  *wait_s = (unsigned long long)(wait_us / 1e6) + 1;
  return 1;
}
