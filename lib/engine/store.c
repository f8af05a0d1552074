/* The shared-state store (include/mcp/store.h): the object every store is,
 * a table of operations and its implementation, and the in-process store,
 * whose buckets are the policy layer's (lib/policy/ratelimit.c). Nothing
 * here does I/O: a store that talks to a server is another library's. */
#include <string.h>

#include "engine.h"

struct mcp_store {
  const mcp_store_ops *ops;
  void *impl;
};

mcp_store *mcp_store_new(const mcp_store_ops *ops, void *impl) {
  if (ops == NULL || ops->rate_take == NULL || ops->describe == NULL)
    return NULL;
  mcp_store *st = mcp__malloc(sizeof *st);
  if (st == NULL)
    return NULL;
  st->ops = ops;
  st->impl = impl;
  return st;
}

int mcp_store_rate_take(mcp_store *st, const char *key, unsigned calls,
                        unsigned per_seconds, mcp_store_rate_done done,
                        void *arg) {
  if (st == NULL || key == NULL || done == NULL || calls == 0 ||
      per_seconds == 0)
    return MCP_EINVAL;
  return st->ops->rate_take(st->impl, key, calls, per_seconds, done, arg);
}

bool mcp_store_shared(const mcp_store *st) {
  return st != NULL && st->ops->shared;
}

void mcp_store_describe(const mcp_store *st, char *buf, unsigned long size) {
  if (buf == NULL || size == 0)
    return;
  buf[0] = '\0';
  if (st != NULL)
    st->ops->describe(st->impl, buf, size);
  buf[size - 1] = '\0';
}

void mcp_store_free(mcp_store *st) {
  if (st == NULL)
    return;
  if (st->ops->free)
    st->ops->free(st->impl);
  mcp__free(st);
}

/* ---- the in-process store -------------------------------------------------
 * One bounded table of buckets; the limit a take names is the table's
 * (changing it keeps the buckets, as mcp_server_set_rate_limit does). */

typedef struct local_store {
  pthread_mutex_t lock; /* guards calls and per_s; a leaf, like rate's */
  unsigned calls, per_s;
  mcp__ratelimit rate;
} local_store;

static int local_take(void *impl, const char *key, unsigned calls,
                      unsigned per_seconds, mcp_store_rate_done done,
                      void *arg) {
  local_store *ls = impl;
  int rc = 0;
  pthread_mutex_lock(&ls->lock);
  if (ls->calls != calls || ls->per_s != per_seconds) {
    rc = mcp__ratelimit_set(&ls->rate, calls, per_seconds);
    ls->calls = calls;
    ls->per_s = per_seconds;
  }
  pthread_mutex_unlock(&ls->lock);
  if (rc)
    return rc;
  unsigned c = 0, per = 0;
  unsigned long long wait_s = 0;
  rc = mcp__ratelimit_take(&ls->rate, key, 0, &c, &per, &wait_s);
  if (rc < 0) {
    done(arg, rc, NULL, "out of memory");
    return 0;
  }
  mcp_store_rate_answer a = {.allowed = rc == 0,
                             .wait_ms = rc == 0 ? 0 : wait_s * 1000};
  done(arg, 0, &a, "");
  return 0;
}

static void local_describe(void *impl, char *buf, unsigned long size) {
  (void)impl;
  mcp__fmt(buf, size, "%s", "this process");
}

static void local_free(void *impl) {
  local_store *ls = impl;
  mcp__ratelimit_free(&ls->rate);
  pthread_mutex_destroy(&ls->lock);
  mcp__free(ls);
}

static const mcp_store_ops local_ops = {.rate_take = local_take,
                                        .describe = local_describe,
                                        .free = local_free,
                                        .shared = false};

mcp_store *mcp_store_new_local(void) {
  local_store *ls = mcp__calloc(1, sizeof *ls);
  if (ls == NULL)
    return NULL;
  if (pthread_mutex_init(&ls->lock, NULL) != 0) {
    mcp__free(ls);
    return NULL;
  }
  if (mcp__ratelimit_init(&ls->rate) != 0) {
    pthread_mutex_destroy(&ls->lock);
    mcp__free(ls);
    return NULL;
  }
  mcp_store *st = mcp_store_new(&local_ops, ls);
  if (st == NULL)
    local_free(ls);
  return st;
}
