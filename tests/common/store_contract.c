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

sc_answer sc_put(mcp_store *st, const char *key, const char *value,
                 const char *holder, const char *index,
                 unsigned long long order, unsigned long long ttl_ms,
                 bool final) {
  waiter w = WAITER;
  mcp_store_record rec = {.key = key,
                          .value = value,
                          .len = value ? strlen(value) : 0,
                          .holder = holder,
                          .index = index,
                          .order = order,
                          .ttl_ms = ttl_ms,
                          .final = final};
  return wait_for(&w, mcp_store_put(st, &rec, on_answer, &w));
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

void store_contract_run(mcp_store *st, const char *prefix, unsigned lease_ms) {
  ck_assert(mcp_store_has_records(st));
  char node[65];
  snprintf(node, sizeof node, "%.40s-node", prefix);
  ck_assert_int_eq(mcp_store_node_join(st, node, lease_ms ? lease_ms : 1000),
                   0);
  check_refusals(st);
  check_put_get(st, prefix, node);
  check_list(st, prefix);
  check_nodes(st, prefix, node, lease_ms);
}
