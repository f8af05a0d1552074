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
 * comes). Every run is bounded by its count and by 20 s.
 *
 *   bench_redis_tasks [requests] [window]   default 20000 16
 *
 * Prints requests/s for each, and the ratios. Any reply that is not the
 * task, working (an error, "Task not found"), fails the benchmark; no
 * figure does. */
#include <cjson/cJSON.h>
#include <mcp/redis.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "redis_server.h"

#define META                                                                   \
  "{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\","               \
  "\"io.modelcontextprotocol/clientCapabilities\":{\"extensions\":{"           \
  "\"io.modelcontextprotocol/tasks\":{}}}}"
#define RUN_S 20 /* each run's bound */

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

static void bench(mcp_store *sa, mcp_store *sb, long total, long window) {
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
  printf("  %-16s other B (Redis)  %10.0f req/s  (ratio %.3f, goal >= 0.5)\n",
         "", bw, bw / aw);
  fflush(stdout);
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
  if (total < 1 || window < 1 || window > 1024) {
    fprintf(stderr, "usage: bench_redis_tasks [requests] [window 1-1024]\n");
    return 2;
  }
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
    bench(sa, sb, total, window);
  else
    fprintf(stderr, "bench_redis_tasks: %s\n", err);
  mcp_store_free(sa);
  mcp_store_free(sb);
  rs_remove(&redis);
  return rc == 0 ? 0 : 1;
}
