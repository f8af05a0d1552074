/* The records contract (store_contract.h), with Check's assertions. */
#include "store_contract.h"

#include <check.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

typedef struct waiter {
  pthread_mutex_t lock;
  pthread_cond_t cond;
  bool done;
  sc_answer a;
} waiter;

static void copy_text(char *dst, size_t size, const char *src, size_t len) {
  if (len >= size)
    len = size - 1;
  memcpy(dst, src, len);
  dst[len] = '\0';
}

static void on_answer(void *arg, int rc, const mcp_store_record *recs,
                      unsigned n, bool more, const char *why) {
  waiter *w = arg;
  ck_assert_ptr_nonnull(why);
  pthread_mutex_lock(&w->lock);
  w->a.rc = rc;
  w->a.more = more;
  copy_text(w->a.why, sizeof w->a.why, why, strlen(why));
  w->a.n = n;
  ck_assert_uint_le(n, 8);
  for (unsigned i = 0; i < n; i++) {
    sc_record *r = &w->a.recs[i];
    *r = (sc_record){.final = recs[i].final,
                     .holder_alive = recs[i].holder_alive,
                     .written = recs[i].written,
                     .order = recs[i].order,
                     .has_value = recs[i].value != NULL};
    ck_assert_ptr_nonnull(recs[i].key);
    copy_text(r->key, sizeof r->key, recs[i].key, strlen(recs[i].key));
    if (recs[i].holder)
      copy_text(r->holder, sizeof r->holder, recs[i].holder,
                strlen(recs[i].holder));
    if (recs[i].value)
      copy_text(r->value, sizeof r->value, recs[i].value, recs[i].len);
  }
  w->done = true;
  pthread_cond_signal(&w->cond);
  pthread_mutex_unlock(&w->lock);
}

static sc_answer wait_for(waiter *w, int rc) {
  if (rc != 0)
    return (sc_answer){.rc = rc};
  struct timespec until;
  clock_gettime(CLOCK_REALTIME, &until);
  until.tv_sec += 10;
  pthread_mutex_lock(&w->lock);
  while (!w->done && pthread_cond_timedwait(&w->cond, &w->lock, &until) == 0) {
  }
  bool done = w->done;
  pthread_mutex_unlock(&w->lock);
  ck_assert_msg(done, "the store did not answer within 10 s");
  return w->a;
}

#define WAITER                                                                 \
  {                                                                            \
    PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, false, { 0 }          \
  }

sc_answer sc_put_counted(mcp_store *st, const char *key, const char *value,
                         const char *holder, const char *index,
                         unsigned long long order, unsigned long long ttl_ms,
                         bool final, const mcp_store_count *count) {
  waiter w = WAITER;
  mcp_store_record rec = {.key = key,
                          .value = value,
                          .len = value ? strlen(value) : 0,
                          .holder = holder,
                          .index = index,
                          .order = order,
                          .ttl_ms = ttl_ms,
                          .final = final,
                          .count = count};
  return wait_for(&w, mcp_store_put(st, &rec, on_answer, &w));
}

sc_answer sc_put(mcp_store *st, const char *key, const char *value,
                 const char *holder, const char *index,
                 unsigned long long order, unsigned long long ttl_ms,
                 bool final) {
  return sc_put_counted(st, key, value, holder, index, order, ttl_ms, final,
                        NULL);
}

sc_answer sc_get(mcp_store *st, const char *key) {
  waiter w = WAITER;
  return wait_for(&w, mcp_store_get(st, key, on_answer, &w));
}

sc_answer sc_list(mcp_store *st, const char *index, unsigned long long order,
                  const char *key, unsigned max) {
  waiter w = WAITER;
  return wait_for(&w,
                  mcp_store_list(st, index, order, key, max, on_answer, &w));
}

static void sleep_ms(long ms) {
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

/* Puts, gets and deletes; a final record refuses what follows. */
static void check_put_get(mcp_store *st, const char *p, const char *node) {
  char key[128];
  snprintf(key, sizeof key, "%s:one", p);
  sc_answer a = sc_get(st, key);
  ck_assert_int_eq(a.rc, 0);
  ck_assert_uint_eq(a.n, 0);
  a = sc_put(st, key, "{\"v\":1}", node, NULL, 0, 60000, false);
  ck_assert_int_eq(a.rc, 0);
  ck_assert_uint_eq(a.n, 1);
  ck_assert(a.recs[0].written);
  ck_assert_str_eq(a.recs[0].key, key);
  a = sc_get(st, key);
  ck_assert_uint_eq(a.n, 1);
  ck_assert_str_eq(a.recs[0].value, "{\"v\":1}");
  ck_assert_str_eq(a.recs[0].holder, node);
  ck_assert(a.recs[0].holder_alive);
  ck_assert(!a.recs[0].final);
  /* Settled once: the second settling learns the first. */
  a = sc_put(st, key, "{\"v\":2}", node, NULL, 0, 60000, true);
  ck_assert(a.recs[0].written);
  a = sc_put(st, key, "{\"v\":3}", NULL, NULL, 0, 60000, true);
  ck_assert_int_eq(a.rc, 0);
  ck_assert_uint_eq(a.n, 1);
  ck_assert(!a.recs[0].written);
  ck_assert(a.recs[0].final);
  ck_assert_str_eq(a.recs[0].value, "{\"v\":2}");
  /* Nor may a final record be deleted. */
  a = sc_put(st, key, NULL, NULL, NULL, 0, 0, false);
  ck_assert(!a.recs[0].written);
  ck_assert_str_eq(sc_get(st, key).recs[0].value, "{\"v\":2}");
  /* One that is not final may. */
  snprintf(key, sizeof key, "%s:two", p);
  ck_assert(sc_put(st, key, "x", NULL, NULL, 0, 60000, false).recs[0].written);
  a = sc_get(st, key);
  ck_assert(a.recs[0].holder_alive); /* nobody's: nobody to lose */
  ck_assert(sc_put(st, key, NULL, NULL, NULL, 0, 0, false).recs[0].written);
  ck_assert_uint_eq(sc_get(st, key).n, 0);
  /* A record's time runs out. */
  ck_assert(sc_put(st, key, "x", NULL, NULL, 0, 150, false).recs[0].written);
  for (int i = 0; i < 100 && sc_get(st, key).n; i++)
    sleep_ms(50);
  ck_assert_uint_eq(sc_get(st, key).n, 0);
}

/* An index lists in (order, key) order, a page at a time; a record
 * deleted or expired leaves it. */
static void check_list(mcp_store *st, const char *p) {
  char index[128], key[128];
  snprintf(index, sizeof index, "%s:list", p);
  static const struct {
    const char *name;
    unsigned long long order;
  } rows[] = {{"c", 20}, {"a", 10}, {"b", 20}, {"d", 30}, {"e", 40}};
  for (size_t i = 0; i < sizeof rows / sizeof *rows; i++) {
    snprintf(key, sizeof key, "%s:%s", p, rows[i].name);
    ck_assert(
        sc_put(st, key, rows[i].name, NULL, index, rows[i].order, 60000, false)
            .recs[0]
            .written);
  }
  sc_answer a = sc_list(st, index, 0, NULL, 2);
  ck_assert_int_eq(a.rc, 0);
  ck_assert_uint_eq(a.n, 2);
  ck_assert(a.more);
  ck_assert_str_eq(a.recs[0].value, "a");
  ck_assert_str_eq(a.recs[1].value, "b");
  ck_assert_uint_eq(a.recs[1].order, 20);
  a = sc_list(st, index, a.recs[1].order, a.recs[1].key, 2);
  ck_assert_uint_eq(a.n, 2);
  ck_assert_str_eq(a.recs[0].value, "c");
  ck_assert_str_eq(a.recs[1].value, "d");
  snprintf(key, sizeof key, "%s:e", p);
  ck_assert(sc_put(st, key, NULL, NULL, NULL, 0, 0, false).recs[0].written);
  a = sc_list(st, index, a.recs[1].order, a.recs[1].key, 2);
  ck_assert_uint_eq(a.n, 0);
  ck_assert(!a.more);
  snprintf(index, sizeof index, "%s:empty", p);
  a = sc_list(st, index, 0, NULL, 5);
  ck_assert_int_eq(a.rc, 0);
  ck_assert_uint_eq(a.n, 0);
}

/* A node that leaves is no longer alive for its records. */
static void check_nodes(mcp_store *st, const char *p, const char *node,
                        unsigned lease_ms) {
  char key[128];
  snprintf(key, sizeof key, "%s:held", p);
  ck_assert(sc_put(st, key, "w", node, NULL, 0, 60000, false).recs[0].written);
  ck_assert(sc_get(st, key).recs[0].holder_alive);
  ck_assert_int_eq(mcp_store_node_join(st, node, 0), 0);
  bool alive = true;
  for (unsigned waited = 0; alive && waited < 2 * lease_ms + 5000;
       waited += 50) {
    alive = sc_get(st, key).recs[0].holder_alive;
    if (alive)
      sleep_ms(50);
  }
  ck_assert(!alive);
  char other[80];
  snprintf(other, sizeof other, "%.60s-never", node);
  snprintf(key, sizeof key, "%s:orphan", p);
  ck_assert(sc_put(st, key, "w", other, NULL, 0, 60000, false).recs[0].written);
  ck_assert(!sc_get(st, key).recs[0].holder_alive);
}

/* What the store refuses before asking anyone. */
static void check_refusals(mcp_store *st) {
  char big[300];
  memset(big, 'k', sizeof big - 1);
  big[sizeof big - 1] = '\0';
  mcp_store_record rec = {.key = big, .value = "x", .len = 1, .ttl_ms = 1};
  ck_assert_int_eq(mcp_store_put(st, &rec, on_answer, NULL), MCP_ELIMIT);
  rec.key = "k";
  rec.ttl_ms = 0;
  ck_assert_int_eq(mcp_store_put(st, &rec, on_answer, NULL), MCP_EINVAL);
  ck_assert_int_eq(mcp_store_put(st, NULL, on_answer, NULL), MCP_EINVAL);
  ck_assert_int_eq(mcp_store_get(st, NULL, on_answer, NULL), MCP_EINVAL);
  ck_assert_int_eq(mcp_store_list(st, "i", 0, NULL, 0, on_answer, NULL),
                   MCP_EINVAL);
  ck_assert_int_eq(mcp_store_list(st, "i", 0, NULL, 1001, on_answer, NULL),
                   MCP_EINVAL);
  ck_assert_int_eq(mcp_store_node_join(st, "n", 50), MCP_EINVAL);
  ck_assert_int_eq(mcp_store_node_join(st, "", 1000), MCP_EINVAL);
}

/* ---- counted puts ----------------------------------------------------------
 * Each check names its keys and budgets after the prefix and itself. */

typedef struct counted {
  mcp_store *st;
  char p[96];                                 /* the prefix of names */
  char names[MCP_STORE_BUDGETS_MAX + 1][128]; /* the budgets' names */
  mcp_store_budget b[MCP_STORE_BUDGETS_MAX + 1];
} counted;

/* Budget i of c, named <prefix>:<what>, with its limits. */
static void budget_set(counted *c, unsigned i, const char *what,
                       unsigned max_records, unsigned long long max_bytes) {
  snprintf(c->names[i], sizeof c->names[i], "%s:%s", c->p, what);
  c->b[i] = (mcp_store_budget){
      .name = c->names[i], .max_records = max_records, .max_bytes = max_bytes};
}

/* The key <prefix>:<name>, in a buffer of c's (one of four in turn). */
static const char *ck(counted *c, const char *name) {
  static _Thread_local char keys[4][160];
  static _Thread_local unsigned next;
  char *k = keys[next++ % 4];
  snprintf(k, sizeof keys[0], "%s:%s", c->p, name);
  return k;
}

/* A counted put of key name (c's prefix), holder NULL, no index, 60 s,
 * counting bytes in n budgets of c from the first. */
static sc_answer cput(counted *c, const char *name, const char *value,
                      unsigned long long order, bool final,
                      unsigned long long bytes, unsigned first, unsigned n) {
  mcp_store_count count = {
      .bytes = bytes, .budgets = &c->b[first], .nbudgets = n};
  return sc_put_counted(c->st, ck(c, name), value, NULL, NULL, order, 60000,
                        final, &count);
}

static bool stored(counted *c, const char *name) {
  sc_answer a = sc_get(c->st, ck(c, name));
  ck_assert_int_eq(a.rc, 0);
  return a.n == 1;
}

static void expect_full(const sc_answer *a, const counted *c, unsigned i) {
  ck_assert_int_eq(a->rc, MCP_ELIMIT);
  ck_assert_uint_eq(a->n, 0);
  ck_assert_msg(strstr(a->why, c->names[i]) != NULL, "%s", a->why);
}

static void expect_took(const sc_answer *a, unsigned evicted) {
  ck_assert_msg(a->rc == 0, "rc %d: %s", a->rc, a->why);
  ck_assert_uint_eq(a->n, 1 + evicted);
  ck_assert(a->recs[0].written);
}

/* Admission by records: a record joining a full budget is refused and
 * not written; one already in it is not, whatever its limits now. */
static void check_budget_records(counted *c) {
  budget_set(c, 0, "recs", 2, 0);
  sc_answer a = cput(c, "r1", "1", 1, false, 10, 0, 1);
  expect_took(&a, 0);
  ck_assert_str_eq(a.recs[0].key, ck(c, "r1"));
  a = cput(c, "r2", "2", 2, false, 10, 0, 1);
  expect_took(&a, 0);
  a = cput(c, "r3", "3", 3, false, 1, 0, 1);
  expect_full(&a, c, 0);
  ck_assert(!stored(c, "r3"));
  ck_assert(stored(c, "r1") && stored(c, "r2"));
  /* Already in it: the same bytes, or fewer, even under a lower limit. */
  expect_took((a = cput(c, "r1", "1b", 1, false, 10, 0, 1), &a), 0);
  budget_set(c, 0, "recs", 1, 0);
  expect_took((a = cput(c, "r2", "2b", 2, false, 5, 0, 1), &a), 0);
  ck_assert_str_eq(sc_get(c->st, ck(c, "r2")).recs[0].value, "2b");
}

/* Admission by bytes: growth that fits is taken, growth that does not is
 * refused (the record stays as it was), shrinking never is. */
static void check_budget_bytes(counted *c) {
  budget_set(c, 0, "bytes", 0, 100);
  sc_answer a = cput(c, "b1", "60", 1, false, 60, 0, 1);
  expect_took(&a, 0);
  expect_full((a = cput(c, "b2", "50", 2, false, 50, 0, 1), &a), c, 0);
  ck_assert(!stored(c, "b2"));
  expect_took((a = cput(c, "b2", "40", 2, false, 40, 0, 1), &a), 0);
  /* b1 growing past 100 in all: refused, kept as it was. */
  expect_full((a = cput(c, "b1", "61", 1, false, 61, 0, 1), &a), c, 0);
  ck_assert_str_eq(sc_get(c->st, ck(c, "b1")).recs[0].value, "60");
  /* b2 shrinks, so b1 may grow to what is left. */
  expect_took((a = cput(c, "b2", "10", 2, false, 10, 0, 1), &a), 0);
  expect_took((a = cput(c, "b1", "90", 1, false, 90, 0, 1), &a), 0);
  expect_full((a = cput(c, "b1", "91", 1, false, 91, 0, 1), &a), c, 0);
  /* Limits lowered below what is held: keeping or shrinking is taken. */
  budget_set(c, 0, "bytes", 0, 50);
  expect_took((a = cput(c, "b1", "90", 1, false, 90, 0, 1), &a), 0);
  expect_took((a = cput(c, "b1", "80", 1, false, 80, 0, 1), &a), 0);
  /* A record alone above the limit is refused. */
  expect_full((a = cput(c, "b3", "x", 3, false, 51, 0, 1), &a), c, 0);
}

/* A full budget evicts its oldest final records (order, then key), each
 * told in the answer and deleted with its place in its index; with none
 * final, nothing is written and nothing evicted. */
static void check_budget_evicts(counted *c, const char *node) {
  budget_set(c, 0, "evict", 3, 0);
  char index[128];
  snprintf(index, sizeof index, "%s:evict-index", c->p);
  mcp_store_count count = {.bytes = 1, .budgets = c->b, .nbudgets = 1};
  sc_answer a = sc_put_counted(c->st, ck(c, "e-late"), "l", node, index, 9,
                               60000, true, &count);
  expect_took(&a, 0);
  a = sc_put_counted(c->st, ck(c, "e-b"), "b", node, index, 4, 60000, true,
                     &count);
  expect_took(&a, 0);
  expect_took((a = cput(c, "e-a", "a", 4, true, 1, 0, 1), &a), 0);
  /* Full: the oldest final goes, order 4 then key a before b. */
  expect_took((a = cput(c, "e-n1", "n", 1, false, 1, 0, 1), &a), 1);
  ck_assert_str_eq(a.recs[1].key, ck(c, "e-a"));
  ck_assert_uint_eq(a.recs[1].order, 4);
  ck_assert(a.recs[1].final && !a.recs[1].written && !a.recs[1].has_value);
  ck_assert_str_eq(a.recs[1].holder, "");
  ck_assert(!stored(c, "e-a"));
  expect_took((a = cput(c, "e-n2", "n", 2, false, 1, 0, 1), &a), 1);
  ck_assert_str_eq(a.recs[1].key, ck(c, "e-b"));
  ck_assert_str_eq(a.recs[1].holder, node);
  ck_assert_uint_eq(a.recs[1].order, 4);
  ck_assert(a.recs[1].final && !a.recs[1].written && !a.recs[1].has_value);
  ck_assert(!stored(c, "e-b"));
  sc_answer l = sc_list(c->st, index, 0, NULL, 10);
  ck_assert_uint_eq(l.n, 1);
  ck_assert_str_eq(l.recs[0].key, ck(c, "e-late"));
  expect_took((a = cput(c, "e-n3", "n", 3, false, 1, 0, 1), &a), 1);
  ck_assert_str_eq(a.recs[1].key, ck(c, "e-late"));
  ck_assert_uint_eq(a.recs[1].order, 9);
  ck_assert_uint_eq(sc_list(c->st, index, 0, NULL, 10).n, 0);
  /* None final: refused, nothing written, nothing evicted. */
  expect_full((a = cput(c, "e-n4", "n", 4, false, 1, 0, 1), &a), c, 0);
  ck_assert(!stored(c, "e-n4"));
  ck_assert(stored(c, "e-n1") && stored(c, "e-n2") && stored(c, "e-n3"));
  /* Finals that would not make room enough: none of them goes. */
  budget_set(c, 1, "evict2", 0, 100);
  expect_took((a = cput(c, "e-f", "f", 1, true, 30, 1, 1), &a), 0);
  expect_took((a = cput(c, "e-g", "g", 2, false, 60, 1, 1), &a), 0);
  expect_full((a = cput(c, "e-h", "h", 3, false, 50, 1, 1), &a), c, 1);
  ck_assert(stored(c, "e-f") && !stored(c, "e-h"));
  /* Two evicted by one put, when one is not room enough. */
  budget_set(c, 2, "evict3", 0, 10);
  expect_took((a = cput(c, "e-i", "i", 2, true, 4, 2, 1), &a), 0);
  expect_took((a = cput(c, "e-j", "j", 1, true, 4, 2, 1), &a), 0);
  expect_took((a = cput(c, "e-k", "k", 3, false, 9, 2, 1), &a), 2);
  ck_assert_str_eq(a.recs[1].key, ck(c, "e-j"));
  ck_assert_str_eq(a.recs[2].key, ck(c, "e-i"));
  ck_assert(!stored(c, "e-i") && !stored(c, "e-j") && stored(c, "e-k"));
}

/* An evicted record stays settled until it would have expired: a put of
 * its key, of a value (counted or not) or of NULL, writes nothing and
 * answers its key alone, final; a get finds none. A holder that did not
 * hear of the eviction cannot write it anew. */
static void check_budget_gone(counted *c, const char *node) {
  budget_set(c, 0, "gone", 1, 0);
  mcp_store_count count = {.bytes = 1, .budgets = c->b, .nbudgets = 1};
  sc_answer a = sc_put_counted(c->st, ck(c, "g-old"), "cancelled", node, NULL,
                               1, 1500, true, &count);
  expect_took(&a, 0);
  expect_took((a = cput(c, "g-new", "n", 2, false, 1, 0, 1), &a), 1);
  ck_assert_str_eq(a.recs[1].key, ck(c, "g-old"));
  const char *const values[] = {"working", NULL};
  for (unsigned i = 0; i < 3; i++) {
    a = i == 2 ? sc_put_counted(c->st, ck(c, "g-old"), "working", node, NULL, 1,
                                60000, false, &count)
               : sc_put(c->st, ck(c, "g-old"), values[i], node, NULL, 1, 60000,
                        false);
    ck_assert_msg(a.rc == 0, "put %u: rc %d: %s", i, a.rc, a.why);
    ck_assert_uint_eq(a.n, 1);
    ck_assert_str_eq(a.recs[0].key, ck(c, "g-old"));
    ck_assert(!a.recs[0].written && a.recs[0].final && !a.recs[0].has_value);
    ck_assert(a.recs[0].holder_alive && a.recs[0].holder[0] == '\0');
    ck_assert_uint_eq(a.recs[0].order, 0);
    ck_assert(!stored(c, "g-old"));
  }
  /* The key counts nothing: g-new ended, the next put evicts it. */
  expect_took((a = cput(c, "g-new", "n", 2, true, 1, 0, 1), &a), 0);
  expect_took((a = cput(c, "g-next", "n", 3, false, 1, 0, 1), &a), 1);
  ck_assert_str_eq(a.recs[1].key, ck(c, "g-new"));
  /* Once its time passed, the key is free again. */
  sleep_ms(1700);
  a = sc_put(c->st, ck(c, "g-old"), "again", node, NULL, 1, 60000, false);
  ck_assert_msg(a.rc == 0 && a.recs[0].written, "rc %d: %s", a.rc, a.why);
  ck_assert_str_eq(sc_get(c->st, ck(c, "g-old")).recs[0].value, "again");
}

/* A deleted or expired record's room is back; a put without count keeps
 * a record's counting, a counted one replaces it; a put refused by a final
 * record counts nothing. */
static void check_budget_release(counted *c) {
  budget_set(c, 0, "release", 1, 0);
  budget_set(c, 1, "release2", 1, 0);
  sc_answer a = cput(c, "d1", "1", 1, false, 1, 0, 1);
  expect_took(&a, 0);
  expect_full((a = cput(c, "d2", "2", 2, false, 1, 0, 1), &a), c, 0);
  ck_assert(sc_put(c->st, ck(c, "d1"), NULL, NULL, NULL, 0, 0, false)
                .recs[0]
                .written);
  expect_took((a = cput(c, "d2", "2", 2, false, 1, 0, 1), &a), 0);
  /* Without count: d2 still counts. */
  ck_assert(sc_put(c->st, ck(c, "d2"), "2b", NULL, NULL, 2, 60000, false)
                .recs[0]
                .written);
  expect_full((a = cput(c, "d3", "3", 3, false, 1, 0, 1), &a), c, 0);
  /* Counted again, in the other budget only: the first has room. */
  expect_took((a = cput(c, "d2", "2c", 2, false, 1, 1, 1), &a), 0);
  expect_took((a = cput(c, "d3", "3", 3, false, 1, 0, 1), &a), 0);
  /* A final record refuses a counted put, which counts nothing. */
  ck_assert(sc_put(c->st, ck(c, "d4"), "4", NULL, NULL, 4, 60000, true)
                .recs[0]
                .written);
  budget_set(c, 2, "release3", 1, 0);
  a = cput(c, "d4", "4b", 4, false, 1, 2, 1);
  ck_assert_int_eq(a.rc, 0);
  ck_assert_uint_eq(a.n, 1);
  ck_assert(!a.recs[0].written);
  expect_took((a = cput(c, "d5", "5", 5, false, 1, 2, 1), &a), 0);
  /* Expiry: a short record's room comes back with its time. */
  budget_set(c, 3, "expiry", 1, 0);
  mcp_store_count count = {.bytes = 1, .budgets = &c->b[3], .nbudgets = 1};
  a = sc_put_counted(c->st, ck(c, "x1"), "x", NULL, NULL, 1, 150, false,
                     &count);
  expect_took(&a, 0);
  a = cput(c, "x2", "x", 2, false, 1, 3, 1);
  for (int i = 0; i < 100 && a.rc == MCP_ELIMIT; i++) {
    ck_assert(!stored(c, "x2"));
    sleep_ms(50);
    a = cput(c, "x2", "x", 2, false, 1, 3, 1);
  }
  expect_took(&a, 0);
  ck_assert(!stored(c, "x1"));
}

/* Budgets are independent; a record in two is evicted from both. */
static void check_budget_two(counted *c) {
  budget_set(c, 0, "one", 1, 0);
  budget_set(c, 1, "two", 1, 0);
  sc_answer a = cput(c, "t1", "1", 1, true, 1, 0, 2);
  expect_took(&a, 0);
  /* Full "one" and "two": a put in a third budget only is taken. */
  budget_set(c, 2, "three", 1, 0);
  expect_took((a = cput(c, "t2", "2", 2, false, 1, 2, 1), &a), 0);
  /* Evicted from "one", t1 leaves "two" too: its next put evicts none. */
  expect_took((a = cput(c, "t3", "3", 3, false, 1, 0, 1), &a), 1);
  ck_assert_str_eq(a.recs[1].key, ck(c, "t1"));
  expect_took((a = cput(c, "t4", "4", 4, false, 1, 1, 1), &a), 0);
  /* Full in one of its two: refused, and not counted in the other. */
  budget_set(c, 3, "four", 1, 0);
  expect_full((a = cput(c, "t5", "5", 5, false, 1, 0, 4), &a), c, 0);
  ck_assert(!stored(c, "t5"));
  expect_took((a = cput(c, "t6", "6", 6, false, 1, 3, 1), &a), 0);
}

/* What mcp_store_put refuses of a count before asking the store. */
static void check_budget_refusals(counted *c) {
  char big[300];
  memset(big, 'b', sizeof big - 1);
  big[sizeof big - 1] = '\0';
  mcp_store_budget b[MCP_STORE_BUDGETS_MAX + 1] = {{.name = "v"},
                                                   {.name = "w"},
                                                   {.name = "x"},
                                                   {.name = "y"},
                                                   {.name = "z"}};
  mcp_store_count count = {.bytes = 1, .budgets = b, .nbudgets = 1};
  mcp_store_record rec = {
      .key = ck(c, "v"), .value = NULL, .ttl_ms = 1, .count = &count};
  ck_assert_int_eq(mcp_store_put(c->st, &rec, on_answer, NULL), MCP_EINVAL);
  rec.value = "x";
  rec.len = 1;
  count.nbudgets = 0;
  ck_assert_int_eq(mcp_store_put(c->st, &rec, on_answer, NULL), MCP_EINVAL);
  count.nbudgets = MCP_STORE_BUDGETS_MAX + 1;
  ck_assert_int_eq(mcp_store_put(c->st, &rec, on_answer, NULL), MCP_ELIMIT);
  count.nbudgets = 1;
  count.budgets = NULL;
  ck_assert_int_eq(mcp_store_put(c->st, &rec, on_answer, NULL), MCP_EINVAL);
  count.budgets = b;
  b[0].name = NULL;
  ck_assert_int_eq(mcp_store_put(c->st, &rec, on_answer, NULL), MCP_EINVAL);
  b[0].name = "";
  ck_assert_int_eq(mcp_store_put(c->st, &rec, on_answer, NULL), MCP_EINVAL);
  b[0].name = big;
  ck_assert_int_eq(mcp_store_put(c->st, &rec, on_answer, NULL), MCP_ELIMIT);
  b[0].name = "w";
  count.nbudgets = 2;
  ck_assert_int_eq(mcp_store_put(c->st, &rec, on_answer, NULL), MCP_EINVAL);
  /* 255 bytes is a name. */
  memcpy(big, c->p, strlen(c->p));
  big[255] = '\0';
  c->b[0] = (mcp_store_budget){.name = big, .max_records = 1};
  sc_answer a = cput(c, "v", "x", 1, false, 1, 0, 1);
  expect_took(&a, 0);
}

/* Every counted-put check, on names made of prefix. */
static void check_budgets(mcp_store *st, const char *prefix, const char *node) {
  counted c = {.st = st};
  snprintf(c.p, sizeof c.p, "%.80s:bud", prefix);
  check_budget_refusals(&c);
  check_budget_records(&c);
  check_budget_bytes(&c);
  check_budget_evicts(&c, node);
  check_budget_gone(&c, node);
  check_budget_release(&c);
  check_budget_two(&c);
}

void store_contract_run(mcp_store *st, const char *prefix, unsigned lease_ms) {
  ck_assert(mcp_store_has_records(st));
  char node[65];
  snprintf(node, sizeof node, "%.40s-node", prefix);
  ck_assert_int_eq(mcp_store_node_join(st, node, lease_ms ? lease_ms : 1000),
                   0);
  check_refusals(st);
  check_put_get(st, prefix, node);
  check_list(st, prefix);
  check_budgets(st, prefix, node);
  check_nodes(st, prefix, node, lease_ms);
}
