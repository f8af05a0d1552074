/* What answering for another node's task costs tasks/get (issue 33): two
 * servers in this process, each with a Redis store of its own on one
 * redis-server (started on a unix socket of its own), as two nodes would
 * be. A 2026-07-28 task runs on A (its handler defers and stays running);
 * then the same tasks/get of it, on the session API (no transport), is
 * answered by A, its owner, from memory, and by B, which reads the task's
 * record from Redis and answers from the store's thread. The ratio B/A is
 * the figure of issue 33 (goal: at least 0.5).
 *
 * Each is measured two ways, on one session of the task's principal:
 * one request at a time (each reply waited for before the next is sent),
 * and with `window` requests in flight (a new one sent as each reply
 * comes). There the owner's figure is the engine alone, no transport, so
 * the ratio is a floor. Then over HTTP, the figure issue 33 asks for:
 * each server served by mcp_http_start on 127.0.0.1 (8 polling threads),
 * every request the task's principal; `clients` client threads, each a
 * libcurl easy handle on one keep-alive connection POSTing 2026-07-28
 * tasks/get one after another (each waited for), share the run's
 * requests, to A's port and then to B's, three times. Printed: the
 * median of A's runs and of B's, each with the share of this machine's
 * CPU time left idle during its runs (from /proc/stat, the median too),
 * and the median of the three ratios of a B run to the A run just before
 * it (this machine's speed drifts over seconds: a pair run back to back
 * sees the same machine, and a best of three keeps its luckiest moment).
 *
 * The same is done with twice and four times as many clients. B's answer
 * waits on a round trip to Redis and on two threads, so with few clients
 * B leaves CPU idle: its throughput there is its latency, not what it can
 * serve. With four times as many clients both nodes keep the CPU busy
 * (the idle shares say so): the ratio there is the figure. Every run is
 * bounded by its count and by 20 s.
 *
 *   bench_redis_tasks [requests] [window] [http requests per run]
 *                     [http clients, at first]   default 20000 16 32000 16
 *
 * Prints requests/s for each, and the ratios. Any reply that is not the
 * task, working (an error, "Task not found"), fails the benchmark; no
 * figure does. */
#include <cjson/cJSON.h>
#include <curl/curl.h>
#include <mcp/http.h>
#include <mcp/redis.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_body.h"
#include "redis_server.h"

#define META                                                                   \
  "{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\","               \
  "\"io.modelcontextprotocol/clientCapabilities\":{\"extensions\":{"           \
  "\"io.modelcontextprotocol/tasks\":{}}}}"
#define RUN_S 20 /* each run's bound */
/* The most HTTP clients of one run (four times the first level's). */
#define MAX_CLIENTS 256

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static mcp_call *g_job; /* the task's call, deferred until the end */

static int job(mcp_call *call, void *user_data) {
  (void)user_data;
  g_job = call;
  return MCP_DEFERRED;
}

static const mcp_tool JOB = {
    .name = "job",
    .description = "Runs until the benchmark ends.",
    .flags = MCP_TOOL_TASK_OPTIONAL,
    .annotations = {.read_only = MCP_HINT_TRUE, .open_world = MCP_HINT_FALSE},
    .handler = job};

/* A session's replies: counted, the last kept, and any wrong one kept for
 * the report. want, when set, is what each reply must contain. */
typedef struct replies {
  pthread_mutex_t lock;
  pthread_cond_t more;
  long n;
  char last[4096];
  const char *want;
  char wrong[600];
} replies;

static int on_send(const char *msg, size_t len, void *user_data) {
  replies *r = user_data;
  pthread_mutex_lock(&r->lock);
  r->n++;
  snprintf(r->last, sizeof r->last, "%.*s", (int)len, msg);
  if (r->want && r->wrong[0] == '\0' &&
      (strstr(r->last, r->want) == NULL || strstr(r->last, "\"error\"")))
    snprintf(r->wrong, sizeof r->wrong, "%.*s", (int)len, msg);
  pthread_cond_signal(&r->more);
  pthread_mutex_unlock(&r->lock);
  return 0;
}

static void feed(mcp_session *s, const char *text) {
  if (mcp_session_receive(s, text, strlen(text)) < 0) {
    fprintf(stderr, "bench_redis_tasks: a message was refused\n");
    exit(1);
  }
}

/* Waits (until deadline, CLOCK_REALTIME) for r's count to reach n; returns
 * whether it did. */
static bool wait_for(replies *r, long n, const struct timespec *deadline) {
  pthread_mutex_lock(&r->lock);
  while (r->n < n && pthread_cond_timedwait(&r->more, &r->lock, deadline) == 0)
    ;
  bool ok = r->n >= n;
  pthread_mutex_unlock(&r->lock);
  return ok;
}

static struct timespec in_seconds(long s) {
  struct timespec dl;
  clock_gettime(CLOCK_REALTIME, &dl);
  dl.tv_sec += s;
  return dl;
}

static void send_get(mcp_session *s, long id, const char *task) {
  char msg[600];
  snprintf(msg, sizeof msg,
           "{\"jsonrpc\":\"2.0\",\"id\":%ld,\"method\":\"tasks/get\","
           "\"params\":{\"_meta\":" META ",\"taskId\":\"%s\"}}",
           id, task);
  feed(s, msg);
}

/* tasks/get of task on s, total requests with window in flight (1: one at
 * a time), bounded by RUN_S; returns requests/s, exits on a wrong reply. */
static double run(mcp_session *s, replies *r, const char *task, long total,
                  long window, const char *who) {
  static long next_id = 1000;
  pthread_mutex_lock(&r->lock);
  long base = r->n;
  r->wrong[0] = '\0';
  pthread_mutex_unlock(&r->lock);
  struct timespec dl = in_seconds(RUN_S);
  double t0 = now();
  long sent = 0;
  while (sent < total) {
    pthread_mutex_lock(&r->lock);
    long room = window - (sent - (r->n - base)); /* free places in flight */
    pthread_mutex_unlock(&r->lock);
    for (; room > 0 && sent < total; room--, sent++)
      send_get(s, next_id++, task);
    if (!wait_for(r, base + sent - window + 1, &dl) || now() - t0 > RUN_S)
      break;
  }
  bool all = wait_for(r, base + sent, &dl);
  double dt = now() - t0;
  pthread_mutex_lock(&r->lock);
  long got = r->n - base;
  bool wrong = r->wrong[0] != '\0';
  pthread_mutex_unlock(&r->lock);
  if (wrong || !all) {
    fprintf(stderr, "bench_redis_tasks: %s: %s: %.600s\n", who,
            wrong ? "a reply that is not the task working" : "no reply",
            wrong ? r->wrong : "");
    exit(1);
  }
  return (double)got / dt;
}

/* Creates the task on s (a session of server A); returns its id (owned). */
static char *create_task(mcp_session *s, replies *r) {
  struct timespec dl = in_seconds(20);
  feed(s, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":"
          "{\"name\":\"job\",\"arguments\":{},\"_meta\":" META "}}");
  if (!wait_for(r, 1, &dl)) {
    fprintf(stderr, "bench_redis_tasks: tools/call: no reply in 20 s\n");
    exit(1);
  }
  cJSON *m = cJSON_Parse(r->last);
  const char *id = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(
      cJSON_GetObjectItemCaseSensitive(m, "result"), "taskId"));
  if (id == NULL) {
    fprintf(stderr, "bench_redis_tasks: the call is no task: %s\n", r->last);
    exit(1);
  }
  char *copy = strdup(id);
  cJSON_Delete(m);
  return copy;
}

/* Until B answers the task working (its record is in Redis): 10 s at
 * most. */
static void until_b_sees(mcp_session *s, replies *r, const char *task) {
  for (int i = 0; i < 100; i++) {
    pthread_mutex_lock(&r->lock);
    long n = r->n;
    pthread_mutex_unlock(&r->lock);
    struct timespec dl = in_seconds(10);
    send_get(s, 100 + i, task);
    if (!wait_for(r, n + 1, &dl))
      break;
    pthread_mutex_lock(&r->lock);
    bool seen = strstr(r->last, "\"working\"") != NULL;
    pthread_mutex_unlock(&r->lock);
    if (seen)
      return;
    struct timespec pause = {0, 100000000L};
    nanosleep(&pause, NULL);
  }
  fprintf(stderr, "bench_redis_tasks: B never answered the task working: %s\n",
          r->last);
  exit(1);
}

static mcp_server *node(mcp_store *st) {
  const mcp_server_info info = {.name = "bench", .version = "1"};
  mcp_server *srv = NULL;
  if (mcp_server_new(&info, &srv) != 0 ||
      mcp_server_add_tool(srv, &JOB, NULL) != 0 ||
      mcp_server_set_store(srv, st) != 0)
    exit(1);
  return srv;
}

/* ---- over HTTP ---------------------------------------------------------- */

static long g_http_calls;  /* each client's requests in a run */
static const char *g_task; /* the task's id */

/* One client thread on the port in arg: g_http_calls tasks/get POSTs on
 * one easy handle (one keep-alive connection), each checked: 200, the id
 * it was sent with, the task working, no error. */
static void *http_getter(void *arg) {
  CURL *c = curl_easy_init();
  if (c == NULL)
    exit(1);
  char url[64];
  snprintf(url, sizeof url, "http://127.0.0.1:%u/mcp",
           (unsigned)(uintptr_t)arg);
  struct curl_slist *h = NULL;
  h = curl_slist_append(h, "Content-Type: application/json");
  h = curl_slist_append(h, "Accept: application/json, text/event-stream");
  h = curl_slist_append(h, "MCP-Protocol-Version: 2026-07-28");
  h = curl_slist_append(h, "Mcp-Method: tasks/get");
  char name[200];
  snprintf(name, sizeof name, "Mcp-Name: %s", g_task); /* the task id */
  h = curl_slist_append(h, name);
  h = curl_slist_append(h, "Expect:");
  body b;
  curl_easy_setopt(c, CURLOPT_URL, url);
  curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, &b);
  curl_easy_setopt(c, CURLOPT_TIMEOUT, 60L);
  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(c, CURLOPT_TCP_NODELAY, 1L);
  double t0 = now();
  for (long i = 1; i <= g_http_calls && now() - t0 < RUN_S; i++) {
    char msg[600], id[32];
    snprintf(msg, sizeof msg,
             "{\"jsonrpc\":\"2.0\",\"id\":%ld,\"method\":\"tasks/get\","
             "\"params\":{\"_meta\":" META ",\"taskId\":\"%s\"}}",
             i, g_task);
    snprintf(id, sizeof id, "\"id\":%ld", i);
    b.len = 0;
    b.p[0] = '\0';
    b.over = false;
    curl_easy_setopt(c, CURLOPT_POSTFIELDS, msg);
    CURLcode rc = curl_easy_perform(c);
    long status = 0;
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
    if (rc != CURLE_OK)
      http_fail("bench_redis_tasks", curl_easy_strerror(rc), i, &b);
    if (status != 200)
      http_fail("bench_redis_tasks", "status not 200", i, &b);
    const char *at = strstr(b.p, id);
    if (b.over || at == NULL ||
        (at[strlen(id)] != ',' && at[strlen(id)] != '}'))
      http_fail("bench_redis_tasks", "not the reply to this request", i, &b);
    if (strstr(b.p, "\"status\":\"working\"") == NULL ||
        strstr(b.p, "\"error\"") != NULL)
      http_fail("bench_redis_tasks", "not the task working", i, &b);
  }
  curl_slist_free_all(h);
  curl_easy_cleanup(c);
  return NULL;
}

/* This machine's CPU time so far, all of it and the idle part (/proc/stat's
 * first line, in ticks); both 0 when it cannot be read. */
static void cpu_ticks(unsigned long long *all, unsigned long long *idle) {
  *all = *idle = 0;
  FILE *f = fopen("/proc/stat", "r");
  if (f == NULL)
    return;
  unsigned long long v[8] = {0};
  if (fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1],
             &v[2], &v[3], &v[4], &v[5], &v[6], &v[7]) == 8) {
    for (int i = 0; i < 8; i++)
      *all += v[i];
    *idle = v[3] + v[4]; /* idle and iowait */
  }
  fclose(f);
}

/* One run's figures: tasks/get/s (0: over RUN_S), and the share of the
 * CPU time left idle meanwhile (-1: unknown, as in a run too short for
 * the clock's ticks). */
typedef struct http_run {
  double rate, idle;
} http_run;

/* A run of clients HTTP clients on port, each with g_http_calls requests
 * (each bounded by RUN_S). */
static http_run run_http(uint16_t port, int clients) {
  pthread_t t[MAX_CLIENTS];
  unsigned long long all0, idle0, all1, idle1;
  cpu_ticks(&all0, &idle0);
  double t0 = now();
  for (int i = 0; i < clients; i++)
    if (pthread_create(&t[i], NULL, http_getter, (void *)(uintptr_t)port)) {
      fprintf(stderr, "bench_redis_tasks: a client thread cannot start\n");
      exit(1);
    }
  for (int i = 0; i < clients; i++)
    pthread_join(t[i], NULL);
  double dt = now() - t0;
  cpu_ticks(&all1, &idle1);
  http_run r = {
      .rate = dt < RUN_S ? (double)clients * (double)g_http_calls / dt : 0,
      .idle =
          all1 > all0 ? (double)(idle1 - idle0) / (double)(all1 - all0) : -1};
  return r;
}

/* The middle one of three numbers. */
static double median3(double x, double y, double z) {
  if ((x <= y && y <= z) || (z <= y && y <= x))
    return y;
  if ((y <= x && x <= z) || (z <= x && x <= y))
    return x;
  return z;
}

static void print_idle(double idle) {
  if (idle < 0)
    printf("     ?");
  else
    printf("  %3.0f%%", idle * 100);
}

/* The HTTP figures, A and B served each on a port of its own, with
 * clients, twice and four times as many clients: three pairs of runs
 * each, A's then B's (see the top of this file). total: a run's
 * requests, shared by its clients. */
static void bench_http(mcp_server *a, mcp_server *b, long total, int clients) {
  const mcp_principal alice = {.subject = "alice"};
  const mcp_http_options opts = {
      .principal = &alice, .threads = 8, .per_ip_connections = 2 * MAX_CLIENTS};
  mcp_http *ha = NULL, *hb = NULL;
  if (mcp_http_start(a, &opts, &ha) != 0 ||
      mcp_http_start(b, &opts, &hb) != 0) {
    fprintf(stderr, "bench_redis_tasks: %s %s\n", mcp_server_errmsg(a),
            mcp_server_errmsg(b));
    exit(1);
  }
  printf("tasks/get over HTTP, %ld requests a run shared by its clients "
         "(medians of 3, A and B alternating; 0: over %d s)\n",
         total, RUN_S);
  printf("  %7s  %20s  %5s  %19s  %5s  %6s\n", "clients", "owner A (memory)",
         "idle", "other B (Redis)", "idle", "ratio");
  double ratio = 0;
  int at = 0;
  for (int level = 0, n = clients; level < 3; level++, n *= 2) {
    g_http_calls = total / n > 0 ? total / n : 1;
    http_run ra[3], rb[3];
    double r[3];
    for (int round = 0; round < 3; round++) {
      ra[round] = run_http(mcp_http_port(ha), n);
      rb[round] = run_http(mcp_http_port(hb), n);
      r[round] = ra[round].rate > 0 ? rb[round].rate / ra[round].rate : 0;
    }
    ratio = median3(r[0], r[1], r[2]);
    at = n;
    printf("  %7d  %14.0f req/s", n,
           median3(ra[0].rate, ra[1].rate, ra[2].rate));
    print_idle(median3(ra[0].idle, ra[1].idle, ra[2].idle));
    printf("  %13.0f req/s", median3(rb[0].rate, rb[1].rate, rb[2].rate));
    print_idle(median3(rb[0].idle, rb[1].idle, rb[2].idle));
    printf("  %6.3f\n", ratio);
    fflush(stdout);
  }
  mcp_http_stop(ha);
  mcp_http_stop(hb);
  printf("  with the most clients, %d: ratio %.3f (goal >= 0.5)\n", at, ratio);
}

static void bench(mcp_store *sa, mcp_store *sb, long total, long window,
                  long http_total, int http_clients) {
  mcp_server *a = node(sa), *b = node(sb);
  const mcp_principal alice = {.subject = "alice"};
  replies ra = {
      PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, "", NULL, ""};
  replies rb = {
      PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, "", NULL, ""};
  mcp_session *pa = NULL, *pb = NULL;
  if (mcp_session_new(a, &alice, on_send, &ra, &pa) != 0 ||
      mcp_session_new(b, &alice, on_send, &rb, &pb) != 0)
    exit(1);
  char *task = create_task(pa, &ra);
  until_b_sees(pb, &rb, task);
  ra.want = rb.want = "\"status\":\"working\"";
  double a1 = run(pa, &ra, task, total, 1, "A, one at a time");
  double b1 = run(pb, &rb, task, total, 1, "B, one at a time");
  double aw = run(pa, &ra, task, total, window, "A, in flight");
  double bw = run(pb, &rb, task, total, window, "B, in flight");
  char inflight[32];
  snprintf(inflight, sizeof inflight, "%ld in flight:", window);
  printf("tasks/get of a task running on A, %ld requests, session API\n",
         total);
  printf("  %-16s owner A (memory) %10.0f req/s\n", "one at a time:", a1);
  printf("  %-16s other B (Redis)  %10.0f req/s  (ratio %.3f)\n", "", b1,
         b1 / a1);
  printf("  %-16s owner A (memory) %10.0f req/s\n", inflight, aw);
  printf("  %-16s other B (Redis)  %10.0f req/s  (ratio %.3f: the engine "
         "alone, a floor)\n",
         "", bw, bw / aw);
  fflush(stdout);
  g_task = task;
  bench_http(a, b, http_total, http_clients);
  mcp_result_text(g_job, "done");
  mcp_call_finish(g_job, 0);
  mcp_session_free(pa);
  mcp_session_free(pb);
  mcp_server_free(a);
  mcp_server_free(b);
  free(task);
}

int main(int argc, char **argv) {
  long total = argc > 1 ? atol(argv[1]) : 20000;
  long window = argc > 2 ? atol(argv[2]) : 16;
  long http_total = argc > 3 ? atol(argv[3]) : 32000;
  int http_clients = argc > 4 ? atoi(argv[4]) : 16;
  if (total < 1 || window < 1 || window > 1024 || http_total < 1 ||
      http_clients < 1 || http_clients > MAX_CLIENTS / 4) {
    fprintf(stderr,
            "usage: bench_redis_tasks [requests] [window 1-1024] "
            "[http requests a run] [http clients 1-%d]\n",
            MAX_CLIENTS / 4);
    return 2;
  }
  if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
    return 1;
  rs_server redis;
  char err[400];
  if (rs_init(&redis, "mcp-tbench", err, sizeof err) != 0 ||
      rs_start(&redis, REDIS_SERVER, err, sizeof err) != 0) {
    fprintf(stderr, "bench_redis_tasks: %s\n", err);
    rs_remove(&redis);
    return 1;
  }
  mcp_store *sa = NULL, *sb = NULL;
  int rc = mcp_redis_store_new(redis.sock, &sa, err, sizeof err);
  if (rc == 0)
    rc = mcp_redis_store_new(redis.sock, &sb, err, sizeof err);
  if (rc == 0)
    bench(sa, sb, total, window, http_total, http_clients);
  else
    fprintf(stderr, "bench_redis_tasks: %s\n", err);
  mcp_store_free(sa);
  mcp_store_free(sb);
  rs_remove(&redis);
  curl_global_cleanup();
  return rc == 0 ? 0 : 1;
}
