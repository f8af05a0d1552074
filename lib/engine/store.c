/* The shared-state store (include/mcp/store.h): the object every store is,
 * a table of operations and its implementation, and the in-process store,
 * whose buckets are the policy layer's (lib/policy/ratelimit.c). Nothing
 * here does I/O: a store that talks to a server is another library's. */
#include <string.h>

#include "engine.h"

typedef struct listener {
  struct listener *next;
  mcp_store_event fn;
  void *arg;
} listener;

struct mcp_store {
  const mcp_store_ops *ops;
  void *impl;
  /* The listeners: a delivery holds the read lock while it calls them, so
   * that mcp_store_unlisten (the write lock) returns only once none of
   * them runs. subscribed: ops->subscribe was called (under the write
   * lock). */
  pthread_rwlock_t listeners_lock;
  listener *listeners;
  bool subscribed;
};

mcp_store *mcp_store_new(const mcp_store_ops *ops, void *impl) {
  if (ops == NULL || ops->rate_take == NULL || ops->describe == NULL ||
      (ops->publish == NULL) != (ops->subscribe == NULL))
    return NULL;
  mcp_store *st = mcp__calloc(1, sizeof *st);
  if (st == NULL)
    return NULL;
  if (pthread_rwlock_init(&st->listeners_lock, NULL) != 0) {
    mcp__free(st);
    return NULL;
  }
  st->ops = ops;
  st->impl = impl;
  return st;
}

/* What the implementation calls with each event: every listener in turn. */
static void deliver_all(void *arg, const char *event, unsigned long len) {
  mcp_store *st = arg;
  pthread_rwlock_rdlock(&st->listeners_lock);
  for (listener *l = st->listeners; l; l = l->next)
    l->fn(l->arg, event, len);
  pthread_rwlock_unlock(&st->listeners_lock);
}

int mcp_store_publish(mcp_store *st, const char *event, unsigned long len) {
  if (st == NULL || event == NULL || len == 0)
    return MCP_EINVAL;
  if (len > MCP_STORE_EVENT_MAX)
    return MCP_ELIMIT;
  if (st->ops->publish == NULL)
    return MCP_ENOTSUP;
  return st->ops->publish(st->impl, event, len);
}

int mcp_store_listen(mcp_store *st, mcp_store_event fn, void *arg) {
  if (st == NULL || fn == NULL)
    return MCP_EINVAL;
  if (st->ops->subscribe == NULL)
    return MCP_ENOTSUP;
  listener *l = mcp__malloc(sizeof *l);
  if (l == NULL)
    return MCP_ENOMEM;
  *l = (listener){.fn = fn, .arg = arg};
  int rc = 0;
  pthread_rwlock_wrlock(&st->listeners_lock);
  for (const listener *p = st->listeners; p && rc == 0; p = p->next)
    if (p->fn == fn && p->arg == arg)
      rc = MCP_EEXIST;
  if (rc == 0 && !st->subscribed) {
    rc = st->ops->subscribe(st->impl, deliver_all, st);
    st->subscribed = rc == 0;
  }
  if (rc == 0) {
    l->next = st->listeners;
    st->listeners = l;
  }
  pthread_rwlock_unlock(&st->listeners_lock);
  if (rc)
    mcp__free(l);
  return rc;
}

int mcp_store_unlisten(mcp_store *st, mcp_store_event fn, const void *arg) {
  if (st == NULL || fn == NULL)
    return MCP_EINVAL;
  listener *gone = NULL;
  pthread_rwlock_wrlock(&st->listeners_lock);
  for (listener **p = &st->listeners; *p; p = &(*p)->next)
    if ((*p)->fn == fn && (*p)->arg == arg) {
      gone = *p;
      *p = gone->next;
      break;
    }
  pthread_rwlock_unlock(&st->listeners_lock);
  mcp__free(gone);
  return gone ? 0 : MCP_ENOENT;
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
  /* The implementation delivers nothing once free returned. */
  while (st->listeners) {
    listener *l = st->listeners;
    st->listeners = l->next;
    mcp__free(l);
  }
  pthread_rwlock_destroy(&st->listeners_lock);
  mcp__free(st);
}

/* ---- the in-process store -------------------------------------------------
 * One bounded table of buckets; the limit a take names is the table's
 * (changing it keeps the buckets, as mcp_server_set_rate_limit does). Its
 * events go to its own listeners: the servers sharing it are its
 * "processes". */

typedef struct local_store {
  pthread_mutex_t lock; /* guards calls and per_s; a leaf, like rate's */
  unsigned calls, per_s;
  mcp__ratelimit rate;
  /* Events: handed to deliver on the publisher's thread. A publisher
   * holds events while it delivers, so that two publishers' events reach
   * every listener in one order. */
  pthread_mutex_t events;
  _Atomic(mcp_store_event) deliver;
  void *deliver_arg;
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

static int local_publish(void *impl, const char *event, unsigned long len) {
  local_store *ls = impl;
  pthread_mutex_lock(&ls->events);
  mcp_store_event deliver = atomic_load(&ls->deliver);
  if (deliver)
    deliver(ls->deliver_arg, event, len);
  pthread_mutex_unlock(&ls->events);
  return 0;
}

static int local_subscribe(void *impl, mcp_store_event deliver, void *arg) {
  local_store *ls = impl;
  ls->deliver_arg = arg;
  atomic_store(&ls->deliver, deliver);
  return 0;
}

static void local_describe(void *impl, char *buf, unsigned long size) {
  (void)impl;
  mcp__fmt(buf, size, "%s", "this process");
}

static void local_free(void *impl) {
  local_store *ls = impl;
  mcp__ratelimit_free(&ls->rate);
  pthread_mutex_destroy(&ls->events);
  pthread_mutex_destroy(&ls->lock);
  mcp__free(ls);
}

static const mcp_store_ops local_ops = {.rate_take = local_take,
                                        .describe = local_describe,
                                        .free = local_free,
                                        .shared = false,
                                        .publish = local_publish,
                                        .subscribe = local_subscribe};

mcp_store *mcp_store_new_local(void) {
  local_store *ls = mcp__calloc(1, sizeof *ls);
  if (ls == NULL)
    return NULL;
  if (pthread_mutex_init(&ls->lock, NULL) != 0) {
    mcp__free(ls);
    return NULL;
  }
  if (pthread_mutex_init(&ls->events, NULL) != 0) {
    pthread_mutex_destroy(&ls->lock);
    mcp__free(ls);
    return NULL;
  }
  if (mcp__ratelimit_init(&ls->rate) != 0) {
    pthread_mutex_destroy(&ls->events);
    pthread_mutex_destroy(&ls->lock);
    mcp__free(ls);
    return NULL;
  }
  mcp_store *st = mcp_store_new(&local_ops, ls);
  if (st == NULL)
    local_free(ls);
  return st;
}
