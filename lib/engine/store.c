/* The shared-state store (include/mcp/store.h): the object every store is,
 * a table of operations and its implementation, and the in-process store,
 * whose buckets are the policy layer's (lib/policy/ratelimit.c). Nothing
 * here does I/O: a store that talks to a server is another library's. */
#include <stdlib.h>
#include <string.h>

#include "engine.h"

typedef struct listener {
  struct listener *next;
  mcp_store_event fn;
  void *arg;
} listener;

/* Leases (mcp_store_ops.rate_lease): what this process took of a bucket
 * ahead and may still spend. A slot per hash of the key; a key that
 * lands on a slot another holds simply replaces it (what the other had
 * left is lost, as when it expires). */
#define LEASE_SLOTS 256
#define LEASE_US 100000ull
#define LEASE_MAX 64u

typedef struct lease {
  char *key; /* NULL: empty */
  unsigned calls, per_s;
  unsigned left;
  unsigned long long until_us;
} lease;

struct mcp_store {
  const mcp_store_ops *ops;
  void *impl;
  pthread_mutex_t lease_lock; /* a leaf */
  lease leases[LEASE_SLOTS];
  /* The listeners: a delivery holds the read lock while it calls them, so
   * that mcp_store_unlisten (the write lock) returns only once none of
   * them runs. subscribed: ops->subscribe was called (under the write
   * lock). */
  pthread_rwlock_t listeners_lock;
  listener *listeners;
  bool subscribed;
};

mcp_store *mcp_store_new(const mcp_store_ops *ops, void *impl) {
  bool records = ops && ops->record_put;
  if (ops == NULL || ops->rate_take == NULL || ops->describe == NULL ||
      (ops->publish == NULL) != (ops->subscribe == NULL) ||
      records != (ops->record_get != NULL) ||
      records != (ops->record_list != NULL) ||
      records != (ops->node_join != NULL))
    return NULL;
  mcp_store *st = mcp__calloc(1, sizeof *st);
  if (st == NULL)
    return NULL;
  if (pthread_rwlock_init(&st->listeners_lock, NULL) != 0) {
    mcp__free(st);
    return NULL;
  }
  if (pthread_mutex_init(&st->lease_lock, NULL) != 0) {
    pthread_rwlock_destroy(&st->listeners_lock);
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

/* How many tokens one lease of a calls per per_s bucket asks for: 64, 1%
 * of calls and 100 ms of refill at most; below 2, none is taken. */
static unsigned lease_size(unsigned calls, unsigned per_s) {
  unsigned long long want = LEASE_MAX;
  if (calls / 100 < want)
    want = calls / 100;
  unsigned long long refill = (unsigned long long)calls * LEASE_US /
                              ((unsigned long long)per_s * 1000000ull);
  if (refill < want)
    want = refill;
  return (unsigned)want;
}

static lease *lease_slot(mcp_store *st, const char *key) {
  unsigned h = 2166136261u;
  for (const unsigned char *p = (const unsigned char *)key; *p; p++)
    h = (h ^ *p) * 16777619u;
  return &st->leases[h % LEASE_SLOTS];
}

/* Spends one token of key's lease, if it has one for this limit still
 * valid. */
static bool lease_spend(mcp_store *st, const char *key, unsigned calls,
                        unsigned per_s) {
  bool spent = false;
  pthread_mutex_lock(&st->lease_lock);
  lease *l = lease_slot(st, key);
  if (l->key && l->left > 0 && l->calls == calls && l->per_s == per_s &&
      mcp__now_us() < l->until_us && strcmp(l->key, key) == 0) {
    l->left--;
    spent = true;
  }
  pthread_mutex_unlock(&st->lease_lock);
  return spent;
}

/* Keeps n more tokens of key's lease (without memory for the key, they
 * are lost: the next take asks the store). */
static void lease_keep(mcp_store *st, const char *key, unsigned calls,
                       unsigned per_s, unsigned n) {
  char *copy = NULL;
  pthread_mutex_lock(&st->lease_lock);
  lease *l = lease_slot(st, key);
  unsigned long long now = mcp__now_us();
  bool same = l->key && strcmp(l->key, key) == 0 && l->calls == calls &&
              l->per_s == per_s && now < l->until_us;
  /* Added to a lease still valid, the tokens expire with it (sooner than
   * their own 100 ms, never later). */
  if (!same && (copy = mcp__strdup(key)) != NULL) {
    mcp__free(l->key);
    *l = (lease){.key = copy,
                 .calls = calls,
                 .per_s = per_s,
                 .until_us = now + LEASE_US};
    same = true;
  }
  if (same)
    l->left += n;
  pthread_mutex_unlock(&st->lease_lock);
}

/* A lease in flight: what its answer needs. */
typedef struct lease_wait {
  mcp_store *st;
  mcp_store_rate_done done;
  void *arg;
  unsigned calls, per_s;
  char key[];
} lease_wait;

static void lease_done(void *arg, int rc, const mcp_store_rate_answer *a,
                       const char *why) {
  lease_wait *w = arg;
  if (rc == 0 && a->allowed && a->granted > 1)
    lease_keep(w->st, w->key, w->calls, w->per_s, a->granted - 1);
  mcp_store_rate_answer one = {0};
  if (rc == 0)
    one = (mcp_store_rate_answer){.allowed = a->allowed,
                                  .wait_ms = a->allowed ? 0 : a->wait_ms};
  mcp_store_rate_done done = w->done;
  void *done_arg = w->arg;
  mcp__free(w);
  done(done_arg, rc, rc == 0 ? &one : NULL, why);
}

int mcp_store_rate_take(mcp_store *st, const char *key, unsigned calls,
                        unsigned per_seconds, mcp_store_rate_done done,
                        void *arg) {
  if (st == NULL || key == NULL || done == NULL || calls == 0 ||
      per_seconds == 0)
    return MCP_EINVAL;
  unsigned want = st->ops->rate_lease ? lease_size(calls, per_seconds) : 0;
  if (want < 2)
    return st->ops->rate_take(st->impl, key, calls, per_seconds, done, arg);
  if (lease_spend(st, key, calls, per_seconds)) {
    done(arg, 0, &(mcp_store_rate_answer){.allowed = true}, "");
    return 0;
  }
  size_t n = strlen(key);
  lease_wait *w = mcp__malloc(sizeof *w + n + 1);
  if (w == NULL)
    return MCP_ENOMEM;
  *w = (lease_wait){
      .st = st, .done = done, .arg = arg, .calls = calls, .per_s = per_seconds};
  memcpy(w->key, key, n + 1);
  int rc = st->ops->rate_lease(st->impl, key, calls, per_seconds, want,
                               lease_done, w);
  if (rc != 0)
    mcp__free(w);
  return rc;
}

/* ---- records --------------------------------------------------------------
 * The checks every store shares; the work is the implementation's. */

#define NAME_MAX_BYTES 255u
#define NODE_MAX_BYTES 64u

bool mcp_store_has_records(const mcp_store *st) {
  return st != NULL && st->ops->record_put != NULL;
}

/* The checks of a put's count: 0, MCP_EINVAL or MCP_ELIMIT. */
static int count_check(const mcp_store_record *rec) {
  const mcp_store_count *c = rec->count;
  if (rec->value == NULL || c->nbudgets == 0 || c->budgets == NULL)
    return MCP_EINVAL;
  if (c->nbudgets > MCP_STORE_BUDGETS_MAX)
    return MCP_ELIMIT;
  for (unsigned i = 0; i < c->nbudgets; i++) {
    const char *name = c->budgets[i].name;
    if (name == NULL || name[0] == '\0')
      return MCP_EINVAL;
    if (strlen(name) > NAME_MAX_BYTES)
      return MCP_ELIMIT;
    for (unsigned j = 0; j < i; j++)
      if (strcmp(c->budgets[j].name, name) == 0)
        return MCP_EINVAL;
  }
  return 0;
}

int mcp_store_put(mcp_store *st, const mcp_store_record *rec,
                  mcp_store_records_done done, void *arg) {
  if (st == NULL || rec == NULL || rec->key == NULL || done == NULL ||
      (rec->value != NULL && rec->ttl_ms == 0))
    return MCP_EINVAL;
  int rc = rec->count ? count_check(rec) : 0;
  if (rc != 0)
    return rc;
  if (strlen(rec->key) > NAME_MAX_BYTES ||
      (rec->index && strlen(rec->index) > NAME_MAX_BYTES) ||
      (rec->holder && strlen(rec->holder) > NODE_MAX_BYTES) ||
      (rec->value && rec->len > MCP_STORE_RECORD_MAX) ||
      rec->order >= (1ull << 53))
    return MCP_ELIMIT;
  if (st->ops->record_put == NULL)
    return MCP_ENOTSUP;
  return st->ops->record_put(st->impl, rec, done, arg);
}

int mcp_store_get(mcp_store *st, const char *key, mcp_store_records_done done,
                  void *arg) {
  if (st == NULL || key == NULL || done == NULL)
    return MCP_EINVAL;
  if (strlen(key) > NAME_MAX_BYTES)
    return MCP_ELIMIT;
  if (st->ops->record_get == NULL)
    return MCP_ENOTSUP;
  return st->ops->record_get(st->impl, key, done, arg);
}

int mcp_store_list(mcp_store *st, const char *index,
                   unsigned long long after_order, const char *after_key,
                   unsigned max, mcp_store_records_done done, void *arg) {
  if (st == NULL || index == NULL || done == NULL || max == 0 || max > 1000)
    return MCP_EINVAL;
  if (strlen(index) > NAME_MAX_BYTES ||
      (after_key && strlen(after_key) > NAME_MAX_BYTES))
    return MCP_ELIMIT;
  if (st->ops->record_list == NULL)
    return MCP_ENOTSUP;
  return st->ops->record_list(st->impl, index, after_order,
                              after_key ? after_key : "", max, done, arg);
}

int mcp_store_node_join(mcp_store *st, const char *node, unsigned lease_ms) {
  if (st == NULL || node == NULL || node[0] == '\0' ||
      strlen(node) > NODE_MAX_BYTES || (lease_ms != 0 && lease_ms < 100))
    return MCP_EINVAL;
  if (st->ops->node_join == NULL)
    return MCP_ENOTSUP;
  return st->ops->node_join(st->impl, node, lease_ms);
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
  for (size_t i = 0; i < LEASE_SLOTS; i++)
    mcp__free(st->leases[i].key);
  pthread_mutex_destroy(&st->lease_lock);
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

/* A budget of the in-process store (mcp_store_count): what its records
 * count, kept as they come and go. One with no record is dropped at the
 * end of the operation that emptied it (budgets_sweep_locked). marked_*:
 * a put's scratch, what the records it is about to evict count here. */
typedef struct local_budget {
  struct local_budget *next;
  unsigned long long bytes, marked_bytes;
  unsigned records, marked_records;
  char name[];
} local_budget;

/* A record of the in-process store. Counted (nbudgets > 0): it counts
 * cbytes bytes and one record in each of budgets. evict: a put is about to
 * evict it (then it is on that put's evicted list, through evict_next).
 * gone: it was evicted, and only its key is kept, final, until it would
 * have expired (mcp_store_put): no value, holder, index or counting. */
typedef struct local_record {
  struct local_record *next;
  char *key, *value, *holder, *index; /* value: len bytes */
  size_t len;
  unsigned long long order, until_us;
  bool final;
  bool evict;
  bool gone;
  struct local_record *evict_next;
  unsigned long long cbytes;
  unsigned nbudgets;
  local_budget *budgets[MCP_STORE_BUDGETS_MAX];
} local_record;

/* A node that joined (it lives as long as it does not leave). */
typedef struct local_node {
  struct local_node *next;
  char name[];
} local_node;

/* The most records the in-process store keeps, evicted keys (gone)
 * included: a new key meeting a full table takes the place of the oldest
 * gone one, if any (so evicted keys never fill it). */
#define LOCAL_RECORDS_MAX 65536u

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
  /* Records and nodes: under records_lock, a leaf (answers are given
   * after it). */
  pthread_mutex_t records_lock;
  local_record *records;
  size_t nrecords, max_records; /* LOCAL_RECORDS_MAX (mcp__store_local_cap) */
  local_node *nodes;
  local_budget *budgets;
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

/* An event published by a listener while it is delivered to: it follows
 * the one being delivered, on the same thread. */
typedef struct queued_event {
  struct queued_event *next;
  unsigned long len;
  char event[];
} queued_event;

/* The in-process store this thread delivers for, and what its listeners
 * published meanwhile (oldest first). */
static _Thread_local struct local_store *tl_delivering;
static _Thread_local queued_event *tl_queue, **tl_queue_tail;

static int local_publish(void *impl, const char *event, unsigned long len) {
  local_store *ls = impl;
  if (tl_delivering == ls) {
    queued_event *q = mcp__malloc(sizeof *q + len);
    if (q == NULL)
      return MCP_ENOMEM;
    q->next = NULL;
    q->len = len;
    memcpy(q->event, event, len);
    *tl_queue_tail = q;
    tl_queue_tail = &q->next;
    return 0;
  }
  pthread_mutex_lock(&ls->events);
  mcp_store_event deliver = atomic_load(&ls->deliver);
  tl_delivering = ls;
  tl_queue = NULL;
  tl_queue_tail = &tl_queue;
  if (deliver)
    deliver(ls->deliver_arg, event, len);
  while (tl_queue) {
    queued_event *q = tl_queue;
    tl_queue = q->next;
    if (tl_queue == NULL)
      tl_queue_tail = &tl_queue;
    if (deliver)
      deliver(ls->deliver_arg, q->event, q->len);
    mcp__free(q);
  }
  tl_delivering = NULL;
  pthread_mutex_unlock(&ls->events);
  return 0;
}

static int local_subscribe(void *impl, mcp_store_event deliver, void *arg) {
  local_store *ls = impl;
  ls->deliver_arg = arg;
  atomic_store(&ls->deliver, deliver);
  return 0;
}

static void record_free(local_record *r) {
  if (r == NULL)
    return;
  mcp__free(r->key);
  mcp__free(r->value);
  mcp__free(r->holder);
  mcp__free(r->index);
  mcp__free(r);
}

/* r stops counting in its budgets. Under records_lock. */
static void record_uncount_locked(local_record *r) {
  for (unsigned i = 0; i < r->nbudgets; i++) {
    r->budgets[i]->records--;
    r->budgets[i]->bytes -= r->cbytes;
  }
  r->nbudgets = 0;
}

/* Drops the budgets no record counts in. Under records_lock. */
static void budgets_sweep_locked(local_store *ls) {
  for (local_budget **p = &ls->budgets; *p;) {
    local_budget *b = *p;
    if (b->records == 0) {
      *p = b->next;
      mcp__free(b);
    } else {
      p = &b->next;
    }
  }
}

static local_budget *budget_find_locked(const local_store *ls,
                                        const char *name) {
  local_budget *b = ls->budgets;
  while (b && strcmp(b->name, name) != 0)
    b = b->next;
  return b;
}

/* Drops the records whose time passed, and their counting. Under
 * records_lock. */
static void records_expire_locked(local_store *ls, unsigned long long now) {
  bool uncounted = false;
  for (local_record **p = &ls->records; *p;) {
    local_record *r = *p;
    if (r->until_us <= now) {
      *p = r->next;
      uncounted = uncounted || r->nbudgets > 0;
      record_uncount_locked(r);
      record_free(r);
      ls->nrecords--;
    } else {
      p = &r->next;
    }
  }
  if (uncounted)
    budgets_sweep_locked(ls);
}

static local_record **record_find_locked(local_store *ls, const char *key) {
  local_record **p = &ls->records;
  while (*p && strcmp((*p)->key, key) != 0)
    p = &(*p)->next;
  return p;
}

static bool node_alive_locked(const local_store *ls, const char *holder) {
  if (holder == NULL)
    return true;
  for (const local_node *n = ls->nodes; n; n = n->next)
    if (strcmp(n->name, holder) == 0)
      return true;
  return false;
}

/* The answer's view of r. Under records_lock. */
static mcp_store_record record_view_locked(const local_store *ls,
                                           const local_record *r) {
  return (mcp_store_record){.key = r->key,
                            .value = r->value,
                            .len = r->len,
                            .holder = r->holder,
                            .index = r->index,
                            .order = r->order,
                            .final = r->final,
                            .holder_alive = node_alive_locked(ls, r->holder)};
}

/* A copy of what the answers hold, so that they are given after the lock
 * (a callback may put again). recs: one, or (a put that evicted)
 * allocated. why: a refusal's, when not empty. */
typedef struct local_answer {
  mcp_store_record *recs;
  unsigned n;
  bool oom;
  char why[512];
} local_answer;

static char *dup_or_null(const char *s, bool *oom) {
  if (s == NULL)
    return NULL;
  char *d = mcp__strdup(s);
  *oom = *oom || d == NULL;
  return d;
}

static void answer_add_locked(const local_store *ls, local_answer *a,
                              const local_record *r) {
  mcp_store_record v = record_view_locked(ls, r);
  v.key = dup_or_null(v.key, &a->oom);
  v.holder = dup_or_null(v.holder, &a->oom);
  v.index = dup_or_null(v.index, &a->oom);
  if (v.value) {
    char *copy = mcp__malloc(v.len + 1);
    if (copy) {
      memcpy(copy, v.value, v.len);
      copy[v.len] = '\0';
    }
    a->oom = a->oom || copy == NULL;
    v.value = copy;
  }
  a->recs[a->n++] = v;
}

static void answer_give(local_answer *a, int rc, bool more,
                        mcp_store_records_done done, void *arg) {
  if (rc == 0 && a->oom)
    rc = MCP_ENOMEM;
  done(arg, rc, rc ? NULL : a->recs, rc ? 0 : a->n, more,
       rc == MCP_ENOMEM ? "out of memory"
       : a->why[0]      ? a->why
       : rc             ? "the record table is full"
                        : "");
  for (unsigned i = 0; i < a->n; i++) {
    mcp__free((char *)a->recs[i].key);
    mcp__free((char *)a->recs[i].holder);
    mcp__free((char *)a->recs[i].index);
    mcp__free((char *)a->recs[i].value);
  }
}

/* The record rec writes, not yet counted; NULL when out of memory. */
static local_record *record_new(const mcp_store_record *rec,
                                unsigned long long now) {
  bool oom = false;
  local_record *r = mcp__calloc(1, sizeof *r);
  if (r == NULL)
    return NULL;
  r->key = dup_or_null(rec->key, &oom);
  r->holder = dup_or_null(rec->holder, &oom);
  r->index = dup_or_null(rec->index, &oom);
  r->value = mcp__malloc(rec->len + 1);
  oom = oom || r->value == NULL;
  if (r->value) {
    memcpy(r->value, rec->value, rec->len);
    r->value[rec->len] = '\0';
  }
  r->len = rec->len;
  r->order = rec->order;
  r->final = rec->final;
  r->until_us = now + rec->ttl_ms * 1000ull;
  if (oom) {
    record_free(r);
    return NULL;
  }
  return r;
}

static bool record_in(const local_record *r, const local_budget *b) {
  for (unsigned i = 0; r && b && i < r->nbudgets; i++)
    if (r->budgets[i] == b)
      return true;
  return false;
}

/* ---- counted puts ---------------------------------------------------------
 * Admission first, changing nothing but marks (the records to evict, on a
 * list in the order they are evicted, and what they count in each budget);
 * then every allocation; then the changes, which cannot fail. */

typedef struct evict_list {
  local_record *head, **tail;
  unsigned n;
} evict_list;

static void evict_mark(evict_list *l, local_record *r) {
  r->evict = true;
  r->evict_next = NULL;
  *l->tail = r;
  l->tail = &r->evict_next;
  l->n++;
  for (unsigned i = 0; i < r->nbudgets; i++) {
    r->budgets[i]->marked_records++;
    r->budgets[i]->marked_bytes += r->cbytes;
  }
}

/* Forgets the marks (the records stay where they are). */
static void evict_unmark(evict_list *l) {
  for (local_record *r = l->head; r; r = r->evict_next) {
    r->evict = false;
    for (unsigned i = 0; i < r->nbudgets; i++) {
      r->budgets[i]->marked_records = 0;
      r->budgets[i]->marked_bytes = 0;
    }
  }
}

static int by_order_key(const void *x, const void *y) {
  const local_record *a = *(local_record *const *)x;
  const local_record *b = *(local_record *const *)y;
  if (a->order != b->order)
    return a->order < b->order ? -1 : 1;
  return strcmp(a->key, b->key);
}

/* What a budget holds besides the record being put and those marked. */
typedef struct budget_room {
  unsigned long long bytes;
  unsigned long long records;
} budget_room;

static bool room_fits(const budget_room *o, const mcp_store_budget *bd,
                      unsigned long long bytes) {
  return (bd->max_records == 0 || o->records + 1 <= bd->max_records) &&
         (bd->max_bytes == 0 ||
          (bytes <= bd->max_bytes && o->bytes <= bd->max_bytes - bytes));
}

/* Says why a counted put does not fit bd (its records and bytes now;
 * finals: how many of them are final). */
static void budget_why(char *why, size_t size, const mcp_store_budget *bd,
                       unsigned long long records, unsigned long long bytes,
                       unsigned long long finals, unsigned long long want) {
  char limits[64];
  if (bd->max_records && bd->max_bytes)
    mcp__fmt(limits, sizeof limits, "%u records, %llu bytes", bd->max_records,
             bd->max_bytes);
  else if (bd->max_records)
    mcp__fmt(limits, sizeof limits, "%u records", bd->max_records);
  else
    mcp__fmt(limits, sizeof limits, "%llu bytes", bd->max_bytes);
  if (bd->max_bytes && want > bd->max_bytes)
    mcp__fmt(why, size,
             "the budget \"%s\" holds at most %llu bytes, and the record "
             "counts %llu",
             bd->name, bd->max_bytes, want);
  else
    mcp__fmt(why, size,
             "the budget \"%s\" is full (%llu records, %llu bytes; at most "
             "%s), and %s",
             bd->name, records, bytes, limits,
             finals ? "evicting its final records would not make room"
                    : "none of them is final");
}

/* Makes room in bd (b: its budget, or NULL when it has none) for old (the
 * record stored under the key put, or NULL) counting bytes: marks its
 * oldest final records on l until it fits. Returns 0, MCP_ENOMEM or
 * MCP_ELIMIT (with why). Under records_lock. */
static int budget_room_locked(local_store *ls, const mcp_store_budget *bd,
                              local_budget *b, const local_record *old,
                              unsigned long long bytes, evict_list *l,
                              char *why, size_t whysize) {
  budget_room o = {0};
  if (b) {
    o.records = b->records - b->marked_records;
    o.bytes = b->bytes - b->marked_bytes;
  }
  if (record_in(old, b)) {
    o.records--;
    o.bytes -= old->cbytes;
  }
  if (room_fits(&o, bd, bytes))
    return 0;
  local_record **c = NULL;
  size_t nc = 0;
  if (b && b->records > 0) {
    c = mcp__malloc(b->records * sizeof *c);
    if (c == NULL)
      return MCP_ENOMEM;
    for (local_record *r = ls->records; r && nc < b->records; r = r->next)
      if (r != old && r->final && !r->evict && record_in(r, b))
        c[nc++] = r;
    qsort(c, nc, sizeof *c, by_order_key);
  }
  unsigned long long finals = nc + (b ? b->marked_records : 0);
  for (size_t i = 0; i < nc && !room_fits(&o, bd, bytes); i++) {
    evict_mark(l, c[i]);
    o.records--;
    o.bytes -= c[i]->cbytes;
  }
  mcp__free(c);
  if (room_fits(&o, bd, bytes))
    return 0;
  budget_why(why, whysize, bd, b ? b->records : 0, b ? b->bytes : 0, finals,
             bytes);
  return MCP_ELIMIT;
}

/* Admits a put of count over old (NULL: none): marks on l what it evicts.
 * Returns 0, MCP_ENOMEM or MCP_ELIMIT (with why). Under records_lock. */
static int count_admit_locked(local_store *ls, const mcp_store_count *count,
                              const local_record *old, evict_list *l, char *why,
                              size_t whysize) {
  for (unsigned i = 0; i < count->nbudgets; i++) {
    const mcp_store_budget *bd = &count->budgets[i];
    local_budget *b = budget_find_locked(ls, bd->name);
    if (record_in(old, b) && count->bytes <= old->cbytes)
      continue; /* neither joins nor grows: never refused */
    int rc = budget_room_locked(ls, bd, b, old, count->bytes, l, why, whysize);
    if (rc)
      return rc;
  }
  return 0;
}

/* Makes the budgets of count the store does not have yet, into fresh
 * (not linked). Returns 0 or MCP_ENOMEM (none made). */
static int budgets_make_locked(const local_store *ls,
                               const mcp_store_count *count,
                               local_budget **fresh) {
  for (unsigned i = 0; i < count->nbudgets; i++) {
    const char *name = count->budgets[i].name;
    if (budget_find_locked(ls, name))
      continue;
    size_t n = strlen(name);
    fresh[i] = mcp__calloc(1, sizeof *fresh[i] + n + 1);
    if (fresh[i] == NULL) {
      for (unsigned j = 0; j < i; j++)
        mcp__free(fresh[j]);
      return MCP_ENOMEM;
    }
    memcpy(fresh[i]->name, name, n + 1);
  }
  return 0;
}

/* Evicts the records marked on l into a's answer after the record
 * written (whose room holds their keys' copies already): each leaves its
 * index and its counting, and is kept gone, its key only. Under
 * records_lock. */
static void evict_apply_locked(local_store *ls, evict_list *l,
                               local_answer *a) {
  evict_unmark(l);
  for (local_record *r = l->head; r; r = r->evict_next) {
    mcp_store_record *e = &a->recs[a->n++];
    e->holder = r->holder; /* the answer's now */
    e->order = r->order;
    e->final = true;
    e->holder_alive = node_alive_locked(ls, r->holder);
    r->holder = NULL;
    r->order = 0;
    mcp__free(r->value);
    r->value = NULL;
    r->len = 0;
    mcp__free(r->index);
    r->index = NULL;
    record_uncount_locked(r);
    r->final = r->gone = true;
  }
}

/* Writes r in place of what is stored under its key: counted in count's
 * budgets (all of them the store's now), or, without count, as the record
 * it replaces was. Under records_lock. */
static void record_install_locked(local_store *ls, local_record *r,
                                  const mcp_store_count *count) {
  local_record **p = record_find_locked(ls, r->key);
  local_record *old = *p;
  if (old) {
    r->next = old->next;
    if (count) {
      record_uncount_locked(old);
    } else {
      r->cbytes = old->cbytes;
      r->nbudgets = old->nbudgets;
      memcpy(r->budgets, old->budgets, sizeof r->budgets);
      old->nbudgets = 0;
    }
    record_free(old);
  } else {
    ls->nrecords++;
  }
  *p = r;
  for (unsigned i = 0; count && i < count->nbudgets; i++) {
    local_budget *b = budget_find_locked(ls, count->budgets[i].name);
    b->records++;
    b->bytes += count->bytes;
    r->budgets[r->nbudgets++] = b;
  }
  if (count)
    r->cbytes = count->bytes;
}

/* The answer's room for the records on l, after the one written: each
 * with a copy of its key (the record keeps its own). 0 or MCP_ENOMEM
 * (nothing kept). */
static int evicted_room(const evict_list *l, local_answer *a) {
  mcp_store_record *recs = mcp__calloc(1 + (size_t)l->n, sizeof *recs);
  if (recs == NULL)
    return MCP_ENOMEM;
  size_t i = 1;
  for (const local_record *r = l->head; r; r = r->evict_next, i++)
    if ((recs[i].key = mcp__strdup(r->key)) == NULL) {
      while (--i > 0)
        mcp__free((char *)recs[i].key);
      mcp__free(recs);
      return MCP_ENOMEM;
    }
  a->recs = recs;
  return 0;
}

/* Writes rec (a value, over no final record): admitted, with room made,
 * when counted. Returns 0 (a holds the answer), MCP_ENOMEM or MCP_ELIMIT.
 * Under records_lock. */
static int local_write_locked(local_store *ls, const mcp_store_record *rec,
                              unsigned long long now, local_answer *a) {
  local_record *r = record_new(rec, now);
  char *key = mcp__strdup(rec->key);
  if (r == NULL || key == NULL) {
    record_free(r);
    mcp__free(key);
    return MCP_ENOMEM;
  }
  evict_list l = {.tail = &l.head};
  local_budget *fresh[MCP_STORE_BUDGETS_MAX] = {0};
  int rc = 0;
  if (rec->count) {
    const local_record *old = *record_find_locked(ls, rec->key);
    rc = count_admit_locked(ls, rec->count, old, &l, a->why, sizeof a->why);
    if (rc == 0)
      rc = budgets_make_locked(ls, rec->count, fresh);
    if (rc == 0 && l.n > 0 && evicted_room(&l, a) != 0) {
      for (unsigned i = 0; i < MCP_STORE_BUDGETS_MAX; i++)
        mcp__free(fresh[i]);
      rc = MCP_ENOMEM;
    }
  }
  if (rc) {
    evict_unmark(&l);
    record_free(r);
    mcp__free(key);
    return rc;
  }
  for (unsigned i = 0; i < MCP_STORE_BUDGETS_MAX; i++)
    if (fresh[i]) {
      fresh[i]->next = ls->budgets;
      ls->budgets = fresh[i];
    }
  a->recs[a->n++] = (mcp_store_record){.key = key, .written = true};
  evict_apply_locked(ls, &l, a);
  record_install_locked(ls, r, rec->count);
  budgets_sweep_locked(ls);
  return 0;
}

/* Forgets the oldest evicted key (the table keeps records in the order
 * they were first written), for room. Returns whether there was one.
 * Under records_lock. */
static bool gone_dropped_locked(local_store *ls) {
  for (local_record **p = &ls->records; *p; p = &(*p)->next)
    if ((*p)->gone) {
      local_record *r = *p;
      *p = r->next;
      record_free(r);
      ls->nrecords--;
      return true;
    }
  return false;
}

static int local_put(void *impl, const mcp_store_record *rec,
                     mcp_store_records_done done, void *arg) {
  local_store *ls = impl;
  mcp_store_record one;
  local_answer a = {.recs = &one};
  int rc = 0;
  unsigned long long now = mcp__now_us();
  pthread_mutex_lock(&ls->records_lock);
  records_expire_locked(ls, now);
  local_record **p = record_find_locked(ls, rec->key);
  if (*p && (*p)->final) { /* one gone answers its key alone */
    answer_add_locked(ls, &a, *p);
  } else if (rec->value == NULL) {
    if (*p) {
      local_record *gone = *p;
      *p = gone->next;
      record_uncount_locked(gone);
      record_free(gone);
      ls->nrecords--;
      budgets_sweep_locked(ls);
    }
    a.recs[a.n++] =
        (mcp_store_record){.key = mcp__strdup(rec->key), .written = true};
    a.oom = a.recs[0].key == NULL;
  } else if (*p == NULL && ls->nrecords >= ls->max_records &&
             !gone_dropped_locked(ls)) { /* p is not read again */
    rc = MCP_ELIMIT;
  } else {
    rc = local_write_locked(ls, rec, now, &a);
  }
  pthread_mutex_unlock(&ls->records_lock);
  answer_give(&a, rc, false, done, arg);
  if (a.recs != &one)
    mcp__free(a.recs);
  return 0;
}

static int local_get(void *impl, const char *key, mcp_store_records_done done,
                     void *arg) {
  local_store *ls = impl;
  mcp_store_record one;
  local_answer a = {.recs = &one};
  pthread_mutex_lock(&ls->records_lock);
  records_expire_locked(ls, mcp__now_us());
  local_record **p = record_find_locked(ls, key);
  if (*p && !(*p)->gone)
    answer_add_locked(ls, &a, *p);
  pthread_mutex_unlock(&ls->records_lock);
  answer_give(&a, 0, false, done, arg);
  return 0;
}

/* Whether a comes after (order, key). */
static bool record_after(const local_record *a, unsigned long long order,
                         const char *key) {
  return a->order > order || (a->order == order && strcmp(a->key, key) > 0);
}

static int local_list(void *impl, const char *index,
                      unsigned long long after_order, const char *after_key,
                      unsigned max, mcp_store_records_done done, void *arg) {
  local_store *ls = impl;
  local_answer a = {.recs = mcp__calloc(max, sizeof *a.recs)};
  if (a.recs == NULL)
    return MCP_ENOMEM;
  bool more = false;
  pthread_mutex_lock(&ls->records_lock);
  records_expire_locked(ls, mcp__now_us());
  /* The next one each time: max passes over the table, each taking the
   * least record after the one taken before. */
  unsigned long long order = after_order;
  const char *key = after_key;
  for (unsigned i = 0; i <= max; i++) {
    const local_record *next = NULL;
    for (const local_record *r = ls->records; r; r = r->next)
      if (r->index && strcmp(r->index, index) == 0 &&
          record_after(r, order, key) &&
          (next == NULL || !record_after(r, next->order, next->key)))
        next = r;
    if (next == NULL)
      break;
    if (i == max) {
      more = true;
      break;
    }
    answer_add_locked(ls, &a, next);
    order = next->order;
    key = next->key;
  }
  pthread_mutex_unlock(&ls->records_lock);
  answer_give(&a, 0, more, done, arg);
  mcp__free(a.recs);
  return 0;
}

static int local_join(void *impl, const char *node, unsigned lease_ms) {
  local_store *ls = impl;
  int rc = 0;
  pthread_mutex_lock(&ls->records_lock);
  local_node **p = &ls->nodes;
  while (*p && strcmp((*p)->name, node) != 0)
    p = &(*p)->next;
  if (lease_ms == 0 && *p) {
    local_node *gone = *p;
    *p = gone->next;
    mcp__free(gone);
  } else if (lease_ms != 0 && *p == NULL) {
    size_t n = strlen(node);
    local_node *j = mcp__malloc(sizeof *j + n + 1);
    if (j) {
      memcpy(j->name, node, n + 1);
      j->next = ls->nodes;
      ls->nodes = j;
    } else {
      rc = MCP_ENOMEM;
    }
  }
  pthread_mutex_unlock(&ls->records_lock);
  return rc;
}

static void local_describe(void *impl, char *buf, unsigned long size) {
  (void)impl;
  mcp__fmt(buf, size, "%s", "this process");
}

static void local_free(void *impl) {
  local_store *ls = impl;
  while (ls->records) {
    local_record *r = ls->records;
    ls->records = r->next;
    record_free(r);
  }
  while (ls->nodes) {
    local_node *n = ls->nodes;
    ls->nodes = n->next;
    mcp__free(n);
  }
  while (ls->budgets) {
    local_budget *b = ls->budgets;
    ls->budgets = b->next;
    mcp__free(b);
  }
  pthread_mutex_destroy(&ls->records_lock);
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
                                        .subscribe = local_subscribe,
                                        .record_put = local_put,
                                        .record_get = local_get,
                                        .record_list = local_list,
                                        .node_join = local_join};

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
  if (pthread_mutex_init(&ls->records_lock, NULL) != 0) {
    pthread_mutex_destroy(&ls->events);
    pthread_mutex_destroy(&ls->lock);
    mcp__free(ls);
    return NULL;
  }
  if (mcp__ratelimit_init(&ls->rate) != 0) {
    pthread_mutex_destroy(&ls->records_lock);
    pthread_mutex_destroy(&ls->events);
    pthread_mutex_destroy(&ls->lock);
    mcp__free(ls);
    return NULL;
  }
  ls->max_records = LOCAL_RECORDS_MAX;
  mcp_store *st = mcp_store_new(&local_ops, ls);
  if (st == NULL)
    local_free(ls);
  return st;
}

void mcp__store_local_cap(mcp_store *st, size_t max) {
  if (st == NULL || st->ops != &local_ops)
    return;
  local_store *ls = st->impl;
  pthread_mutex_lock(&ls->records_lock);
  ls->max_records = max;
  pthread_mutex_unlock(&ls->records_lock);
}
