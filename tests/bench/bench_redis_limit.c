/* What the shared rate limit costs tools/call: the same calls with the
 * limit counted in this process (the server's own buckets) and through a
 * Redis store (mcp_server_set_store, a redis-server the benchmark starts
 * on a unix socket of its own), on the session API (no transport), each
 * of `threads` threads a session of its own principal making its calls
 * one after another. The ratio redis/local is the figure of issue 33
 * (goal: at least 0.7 through a transport; here, without one, the local
 * figure is the engine alone, so the ratio is a floor). The limit is high
 * (10^9 a second), so the store leases 64 tokens a round trip
 * (mcp_store_rate_take).
 *
 * Then the same over HTTP, the figure issue 33 asks for: the server served
 * by mcp_http_start on 127.0.0.1 (one polling thread per client thread, up
 * to 8), one principal (subject "bench") for every request, and
 * `http threads` client threads, each a libcurl easy handle on one
 * keep-alive connection POSTing 2026-07-28 tools/call requests one after
 * another. Local and Redis runs alternate, three of each; the best of
 * each is printed.
 *
 *   bench_redis_limit [calls per thread] [threads] [http calls per thread]
 *                     [http threads]   default 20000 16 2000 16
 *
 * Prints calls/s for each, and the ratio. Any wrong reply (status, id or
 * content) fails the benchmark. */
#include <curl/curl.h>
#include <mcp/http.h>
#include <mcp/redis.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench_body.h"
#include "redis_server.h"

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int work(mcp_call *call, void *user_data) {
  (void)user_data;
  return mcp_result_text(call, "ok");
}

static const mcp_tool WORK = {
    .name = "work",
    .description = "Works.",
    .annotations = {.read_only = MCP_HINT_TRUE, .open_world = MCP_HINT_FALSE},
    .handler = work};

/* A session's replies: counted, for its thread to wait on. */
typedef struct replies {
  pthread_mutex_t lock;
  pthread_cond_t more;
  long n;
} replies;

static int on_send(const char *msg, size_t len, void *user_data) {
  (void)msg;
  (void)len;
  replies *r = user_data;
  pthread_mutex_lock(&r->lock);
  r->n++;
  pthread_cond_signal(&r->more);
  pthread_mutex_unlock(&r->lock);
  return 0;
}

static mcp_server *g_srv;
static long g_calls;

static void feed(mcp_session *s, const char *text) {
  if (mcp_session_receive(s, text, strlen(text)) < 0) {
    fprintf(stderr, "bench_redis_limit: a message was refused\n");
    exit(1);
  }
}

/* One thread: a session of principal user<N>, initialized, then g_calls
 * tools/call, each waited for (60 s at most). */
static void *caller(void *arg) {
  char subject[32];
  snprintf(subject, sizeof subject, "user%ld", (long)(intptr_t)arg);
  const mcp_principal p = {.subject = subject};
  replies r = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0};
  mcp_session *s = NULL;
  if (mcp_session_new(g_srv, &p, on_send, &r, &s) != 0)
    exit(1);
  feed(s, "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":"
          "{\"protocolVersion\":\"2025-11-25\",\"capabilities\":{},"
          "\"clientInfo\":{\"name\":\"b\",\"version\":\"1\"}}}");
  feed(s, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}");
  for (long i = 1; i <= g_calls; i++) {
    char msg[200];
    snprintf(msg, sizeof msg,
             "{\"jsonrpc\":\"2.0\",\"id\":%ld,\"method\":\"tools/call\","
             "\"params\":{\"name\":\"work\",\"arguments\":{}}}",
             i);
    feed(s, msg);
    struct timespec dl;
    clock_gettime(CLOCK_REALTIME, &dl);
    dl.tv_sec += 60;
    pthread_mutex_lock(&r.lock);
    while (r.n < i + 1 && pthread_cond_timedwait(&r.more, &r.lock, &dl) == 0)
      ;
    bool late = r.n < i + 1;
    pthread_mutex_unlock(&r.lock);
    if (late) {
      fprintf(stderr, "bench_redis_limit: no reply in 60 s\n");
      exit(1);
    }
  }
  mcp_session_free(s);
  return NULL;
}

/* calls/s of threads callers on a server with st (NULL: its own). */
static double run(mcp_store *st, int threads) {
  const mcp_server_info info = {.name = "bench", .version = "1"};
  if (mcp_server_new(&info, &g_srv) != 0 ||
      mcp_server_add_tool(g_srv, &WORK, NULL) != 0 ||
      mcp_server_set_store(g_srv, st) != 0 ||
      mcp_server_set_rate_limit(g_srv, 1000000000u, 1) != 0)
    exit(1);
  pthread_t t[64];
  double t0 = now();
  for (int i = 0; i < threads; i++)
    pthread_create(&t[i], NULL, caller, (void *)(intptr_t)i);
  for (int i = 0; i < threads; i++)
    pthread_join(t[i], NULL);
  double dt = now() - t0;
  mcp_server_free(g_srv);
  return (double)threads * (double)g_calls / dt;
}

/* ---- over HTTP ---------------------------------------------------------- */

static uint16_t g_port;
static long g_http_calls;

/* One client thread: g_http_calls tools/call POSTs on one easy handle
 * (one keep-alive connection), each checked: 200, the id it was sent
 * with, the tool's text, no error. */
static void *http_caller(void *arg) {
  (void)arg;
  CURL *c = curl_easy_init();
  if (c == NULL)
    exit(1);
  char url[64];
  snprintf(url, sizeof url, "http://127.0.0.1:%u/mcp", (unsigned)g_port);
  struct curl_slist *h = NULL;
  h = curl_slist_append(h, "Content-Type: application/json");
  h = curl_slist_append(h, "Accept: application/json, text/event-stream");
  h = curl_slist_append(h, "MCP-Protocol-Version: 2026-07-28");
  h = curl_slist_append(h, "Mcp-Method: tools/call");
  h = curl_slist_append(h, "Mcp-Name: work");
  h = curl_slist_append(h, "Expect:");
  body b;
  curl_easy_setopt(c, CURLOPT_URL, url);
  curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, &b);
  curl_easy_setopt(c, CURLOPT_TIMEOUT, 60L);
  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(c, CURLOPT_TCP_NODELAY, 1L);
  for (long i = 1; i <= g_http_calls; i++) {
    char msg[400], id[32];
    snprintf(msg, sizeof msg,
             "{\"jsonrpc\":\"2.0\",\"id\":%ld,\"method\":\"tools/call\","
             "\"params\":{\"name\":\"work\",\"arguments\":{},\"_meta\":{"
             "\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\","
             "\"io.modelcontextprotocol/clientInfo\":{\"name\":\"b\","
             "\"version\":\"1\"},"
             "\"io.modelcontextprotocol/clientCapabilities\":{}}}}",
             i);
    snprintf(id, sizeof id, "\"id\":%ld", i);
    b.len = 0;
    b.p[0] = '\0';
    b.over = false;
    curl_easy_setopt(c, CURLOPT_POSTFIELDS, msg);
    CURLcode rc = curl_easy_perform(c);
    long status = 0;
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
    if (rc != CURLE_OK)
      http_fail("bench_redis_limit", curl_easy_strerror(rc), i, &b);
    if (status != 200)
      http_fail("bench_redis_limit", "status not 200", i, &b);
    const char *at = strstr(b.p, id);
    if (b.over || at == NULL ||
        (at[strlen(id)] != ',' && at[strlen(id)] != '}'))
      http_fail("bench_redis_limit", "not the reply to this call", i, &b);
    if (strstr(b.p, "\"text\":\"ok\"") == NULL ||
        strstr(b.p, "\"error\"") != NULL ||
        strstr(b.p, "\"isError\":true") != NULL)
      http_fail("bench_redis_limit", "not the tool's answer", i, &b);
  }
  curl_slist_free_all(h);
  curl_easy_cleanup(c);
  return NULL;
}

/* calls/s of threads HTTP clients on a server with st (NULL: its own),
 * served by mcp_http_start on 127.0.0.1, every request the principal
 * "bench". */
static double run_http(mcp_store *st, int threads) {
  const mcp_server_info info = {.name = "bench", .version = "1"};
  mcp_server *srv = NULL;
  if (mcp_server_new(&info, &srv) != 0 ||
      mcp_server_add_tool(srv, &WORK, NULL) != 0 ||
      mcp_server_set_store(srv, st) != 0 ||
      mcp_server_set_rate_limit(srv, 1000000000u, 1) != 0)
    exit(1);
  const mcp_principal who = {.subject = "bench"};
  const mcp_http_options opts = {
      .principal = &who, .threads = (unsigned)(threads < 8 ? threads : 8)};
  mcp_http *http = NULL;
  if (mcp_http_start(srv, &opts, &http) != 0) {
    fprintf(stderr, "bench_redis_limit: %s\n", mcp_server_errmsg(srv));
    exit(1);
  }
  g_port = mcp_http_port(http);
  pthread_t t[64];
  double t0 = now();
  for (int i = 0; i < threads; i++)
    pthread_create(&t[i], NULL, http_caller, NULL);
  for (int i = 0; i < threads; i++)
    pthread_join(t[i], NULL);
  double dt = now() - t0;
  mcp_http_stop(http);
  mcp_server_free(srv);
  return (double)threads * (double)g_http_calls / dt;
}

/* The HTTP figures: local and Redis alternating, the best of three each. */
static void bench_http(mcp_store *store, int threads) {
  double local = 0, shared = 0;
  for (int round = 0; round < 3; round++) {
    double l = run_http(NULL, threads);
    double s = run_http(store, threads);
    local = l > local ? l : local;
    shared = s > shared ? s : shared;
  }
  printf("tools/call, %d threads x %ld calls, over HTTP (best of 3)\n", threads,
         g_http_calls);
  printf("  limit in this process, over HTTP: %10.0f calls/s\n", local);
  printf("  limit on Redis, over HTTP:        %10.0f calls/s  (ratio %.3f)\n",
         shared, shared / local);
}

int main(int argc, char **argv) {
  g_calls = argc > 1 ? atol(argv[1]) : 20000;
  int threads = argc > 2 ? atoi(argv[2]) : 16;
  g_http_calls = argc > 3 ? atol(argv[3]) : 2000;
  int http_threads = argc > 4 ? atoi(argv[4]) : 16;
  if (g_calls < 1 || threads < 1 || threads > 64 || g_http_calls < 1 ||
      http_threads < 1 || http_threads > 64) {
    fprintf(stderr, "usage: bench_redis_limit [calls] [threads 1-64] "
                    "[http calls] [http threads 1-64]\n");
    return 2;
  }
  if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
    return 1;
  rs_server redis;
  char err[400];
  if (rs_init(&redis, "mcp-rbench", err, sizeof err) != 0 ||
      rs_start(&redis, REDIS_SERVER, err, sizeof err) != 0) {
    fprintf(stderr, "bench_redis_limit: %s\n", err);
    rs_remove(&redis);
    return 1;
  }
  mcp_store *store = NULL;
  int rc = mcp_redis_store_new(redis.sock, &store, err, sizeof err);
  if (rc == 0) {
    double local = run(NULL, threads);
    double shared = run(store, threads);
    printf("tools/call, %d threads x %ld calls, session API\n", threads,
           g_calls);
    printf("  limit in this process: %10.0f calls/s\n", local);
    printf("  limit on Redis:        %10.0f calls/s  (ratio %.3f)\n", shared,
           shared / local);
    fflush(stdout);
    bench_http(store, http_threads);
    mcp_store_free(store);
  } else {
    fprintf(stderr, "bench_redis_limit: %s\n", err);
  }
  rs_remove(&redis);
  curl_global_cleanup();
  return rc == 0 ? 0 : 1;
}
