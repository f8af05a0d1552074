/* What the shared rate limit costs tools/call: the same calls with the
 * limit counted in this process (the server's own buckets) and through a
 * Redis store (mcp_server_set_store, a redis-server the benchmark starts
 * on a unix socket of its own), on the session API (no transport), each
 * of `threads` threads a session of its own principal making its calls
 * one after another. The ratio redis/local is the figure of issue 33
 * (goal: at least 0.7 through a transport; here, without one, the local
 * figure is the engine alone, so the ratio is a floor).
 *
 *   bench_redis_limit [calls per thread] [threads]   default 20000 16
 *
 * Prints calls/s for each, and the ratio. */
#include <mcp/redis.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void sleep_ms(long ms) {
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
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

int main(int argc, char **argv) {
  g_calls = argc > 1 ? atol(argv[1]) : 20000;
  int threads = argc > 2 ? atoi(argv[2]) : 16;
  if (g_calls < 1 || threads < 1 || threads > 64) {
    fprintf(stderr, "usage: bench_redis_limit [calls] [threads 1-64]\n");
    return 2;
  }
  const char *tmp = getenv("TMPDIR");
  char dir[256], sock[300], conf[320];
  snprintf(dir, sizeof dir, "%s/mcp-rbench-XXXXXX", tmp && *tmp ? tmp : "/tmp");
  if (mkdtemp(dir) == NULL)
    return 1;
  snprintf(sock, sizeof sock, "%s/redis.sock", dir);
  snprintf(conf, sizeof conf, "%s/redis.conf", dir);
  FILE *f = fopen(conf, "w");
  if (f == NULL)
    return 1;
  fprintf(f,
          "port 0\nunixsocket %s\ndir %s\nsave \"\"\nappendonly no\n"
          "logfile redis.log\n",
          sock, dir);
  fclose(f);
  pid_t pid = fork();
  if (pid == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    execl(REDIS_SERVER, REDIS_SERVER, conf, (char *)NULL);
    _exit(127);
  }
  struct stat st;
  for (int i = 0; i < 400 && stat(sock, &st) != 0; i++)
    sleep_ms(25);
  mcp_store *store = NULL;
  char err[400];
  int rc = mcp_redis_store_new(sock, &store, err, sizeof err);
  if (rc == 0) {
    double local = run(NULL, threads);
    double shared = run(store, threads);
    printf("tools/call, %d threads x %ld calls, session API\n", threads,
           g_calls);
    printf("  limit in this process: %10.0f calls/s\n", local);
    printf("  limit on Redis:        %10.0f calls/s  (ratio %.3f)\n", shared,
           shared / local);
    mcp_store_free(store);
  } else {
    fprintf(stderr, "bench_redis_limit: %s\n", err);
  }
  kill(pid, SIGTERM);
  waitpid(pid, NULL, 0);
  unlink(sock);
  unlink(conf);
  char log[300];
  snprintf(log, sizeof log, "%s/redis.log", dir);
  unlink(log);
  rmdir(dir);
  return rc == 0 ? 0 : 1;
}
