/* How fast a change reaches the subscribers of other nodes (issue 33):
 * three servers, each on a Redis store of its own (three connections to
 * one redis-server the benchmark starts, as three processes would have),
 * against the same three servers sharing one in-process store (the
 * ceiling: the engine's own fan-out, no network).
 *
 * Latency: one legacy session on node 1 subscribed to mem:///a; node 0
 * calls mcp_server_resource_updated, and the time until node 1's session
 * is sent notifications/resources/updated is one sample. p50 and p99 of
 * `samples` samples (goal: p99 at most 20 ms on Redis).
 *
 * Fan-out: `subscribers` sessions spread evenly over the three nodes, all
 * subscribed to mem:///a; node 0 publishes once, and the time until the
 * last of them was told is the figure (goal: at most 500 ms for 10,000).
 *
 *   bench_redis_events [samples] [subscribers]   default 1000 10000
 *
 * Every wait is bounded (5 s); a notification that does not come, or comes
 * twice, fails the benchmark. */
#include <mcp/mcp.h>
#include <mcp/redis.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "redis_server.h"

#define NODES 3

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int read_r(mcp_call *call, void *user_data) {
  (void)user_data;
  return mcp_result_text(call, "r");
}

static const mcp_resource R = {
    .uri_template = "mem:///{n}", .name = "r", .handler = read_r};

/* What the subscribers were told: how many notifications, and when the
 * last came. */
static atomic_long g_told;
static _Atomic double g_last;
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_cond = PTHREAD_COND_INITIALIZER;

static int on_send(const char *msg, size_t len, void *user_data) {
  (void)len;
  (void)user_data;
  if (strstr(msg, "notifications/resources/updated") == NULL)
    return 0;
  double t = now();
  atomic_store(&g_last, t);
  atomic_fetch_add(&g_told, 1);
  pthread_mutex_lock(&g_lock);
  pthread_cond_broadcast(&g_cond);
  pthread_mutex_unlock(&g_lock);
  return 0;
}

/* Waits until want notifications were told (5 s at most). */
static bool wait_told(long want) {
  struct timespec dl;
  clock_gettime(CLOCK_REALTIME, &dl);
  dl.tv_sec += 5;
  pthread_mutex_lock(&g_lock);
  while (atomic_load(&g_told) < want &&
         pthread_cond_timedwait(&g_cond, &g_lock, &dl) == 0)
    ;
  pthread_mutex_unlock(&g_lock);
  return atomic_load(&g_told) >= want;
}

static void feed(mcp_session *s, const char *text) {
  if (mcp_session_receive(s, text, strlen(text)) < 0) {
    fprintf(stderr, "bench_redis_events: a message was refused\n");
    exit(1);
  }
}

static mcp_session *subscriber(mcp_server *srv) {
  mcp_session *s = NULL;
  if (mcp_session_new(srv, NULL, on_send, NULL, &s) != 0)
    exit(1);
  feed(s, "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":"
          "{\"protocolVersion\":\"2025-11-25\",\"capabilities\":{},"
          "\"clientInfo\":{\"name\":\"b\",\"version\":\"1\"}}}");
  feed(s, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}");
  feed(s, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"resources/subscribe\","
          "\"params\":{\"uri\":\"mem:///a\"}}");
  return s;
}

typedef struct nodes {
  mcp_server *srv[NODES];
  mcp_store *own[NODES]; /* each node's Redis store; NULL: shared local */
  mcp_store *local;
} nodes;

/* Three nodes on url's Redis, each its own store, or (url NULL) on one
 * in-process store. */
static void nodes_start(nodes *n, const char *url) {
  memset(n, 0, sizeof *n);
  if (url == NULL && (n->local = mcp_store_new_local()) == NULL)
    exit(1);
  for (int i = 0; i < NODES; i++) {
    char err[400];
    if (url && mcp_redis_store_new(url, &n->own[i], err, sizeof err) != 0) {
      fprintf(stderr, "bench_redis_events: %s\n", err);
      exit(1);
    }
    const mcp_server_info info = {.name = "node", .version = "1"};
    if (mcp_server_new(&info, &n->srv[i]) != 0 ||
        mcp_server_add_resource(n->srv[i], &R, NULL) != 0 ||
        mcp_server_set_store(n->srv[i], url ? n->own[i] : n->local) != 0)
      exit(1);
  }
}

static void nodes_stop(nodes *n) {
  for (int i = 0; i < NODES; i++) {
    mcp_server_free(n->srv[i]);
    mcp_store_free(n->own[i]);
  }
  mcp_store_free(n->local);
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* p50 and p99 in milliseconds of samples publishes on node 0 heard by one
 * subscriber on node 1. */
static void latency(const char *url, long samples, double *p50, double *p99) {
  nodes n;
  nodes_start(&n, url);
  mcp_session *s = subscriber(n.srv[1]);
  double *ms = malloc((size_t)samples * sizeof *ms);
  if (ms == NULL)
    exit(1);
  atomic_store(&g_told, 0);
  for (long i = 0; i < samples; i++) {
    double t0 = now();
    if (mcp_server_resource_updated(n.srv[0], "mem:///a") < 0 ||
        !wait_told(i + 1)) {
      fprintf(stderr, "bench_redis_events: sample %ld never arrived\n", i);
      exit(1);
    }
    ms[i] = (atomic_load(&g_last) - t0) * 1000.0;
  }
  qsort(ms, (size_t)samples, sizeof *ms, cmp_double);
  *p50 = ms[samples / 2];
  *p99 = ms[samples * 99 / 100];
  free(ms);
  mcp_session_free(s);
  nodes_stop(&n);
  if (atomic_load(&g_told) != samples) {
    fprintf(stderr, "bench_redis_events: a notification came twice\n");
    exit(1);
  }
}

/* Milliseconds from one publish on node 0 until all subscribers, spread
 * over the nodes, were told. */
static double fan_out(const char *url, long subscribers) {
  nodes n;
  nodes_start(&n, url);
  mcp_session **s = malloc((size_t)subscribers * sizeof *s);
  if (s == NULL)
    exit(1);
  for (long i = 0; i < subscribers; i++)
    s[i] = subscriber(n.srv[i % NODES]);
  atomic_store(&g_told, 0);
  double t0 = now();
  if (mcp_server_resource_updated(n.srv[0], "mem:///a") < 0 ||
      !wait_told(subscribers)) {
    fprintf(stderr, "bench_redis_events: %ld of %ld subscribers told\n",
            atomic_load(&g_told), subscribers);
    exit(1);
  }
  double ms = (atomic_load(&g_last) - t0) * 1000.0;
  for (long i = 0; i < subscribers; i++)
    mcp_session_free(s[i]);
  free(s);
  nodes_stop(&n);
  if (atomic_load(&g_told) != subscribers) {
    fprintf(stderr, "bench_redis_events: a subscriber was told twice\n");
    exit(1);
  }
  return ms;
}

int main(int argc, char **argv) {
  long samples = argc > 1 ? atol(argv[1]) : 1000;
  long subscribers = argc > 2 ? atol(argv[2]) : 10000;
  if (samples < 1 || subscribers < NODES || subscribers > 1000000) {
    fprintf(stderr, "usage: bench_redis_events [samples] [subscribers >= 3]\n");
    return 2;
  }
  rs_server redis;
  char err[400];
  if (rs_init(&redis, "mcp-ebench", err, sizeof err) != 0 ||
      rs_start(&redis, REDIS_SERVER, err, sizeof err) != 0) {
    fprintf(stderr, "bench_redis_events: %s\n", err);
    rs_remove(&redis);
    return 1;
  }
  double l50, l99, r50, r99;
  latency(NULL, samples, &l50, &l99);
  latency(redis.sock, samples, &r50, &r99);
  printf("resource updated on node 0, heard on node 1, %ld samples\n", samples);
  printf("  one in-process store: p50 %8.3f ms  p99 %8.3f ms\n", l50, l99);
  printf("  Redis, a store each:  p50 %8.3f ms  p99 %8.3f ms  "
         "(p99 goal <= 20 ms)\n",
         r50, r99);
  double local = fan_out(NULL, subscribers);
  double shared = fan_out(redis.sock, subscribers);
  printf("one update to %ld subscribers over %d nodes\n", subscribers, NODES);
  printf("  one in-process store: %8.3f ms\n", local);
  printf("  Redis, a store each:  %8.3f ms  (ratio %.2f; goal <= 500 ms for "
         "10000)\n",
         shared, shared / local);
  rs_remove(&redis);
  return 0;
}
