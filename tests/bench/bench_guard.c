/* What the guard costs a call: an echo tools/call of a read-only,
 * closed-world tool answered on the session's thread (no guard) and on a
 * guard worker restricted by Landlock and seccomp, one call at a time,
 * against the ceiling of the same unguarded call plus one thread hand-off
 * (half a mutex and condition variable ping-pong between two threads,
 * measured in the same run): the reply of a call run on another thread
 * must wake the caller at least once. A second guarded figure has the
 * caller spin for its reply instead of sleeping: what the guard's path
 * costs without any wake-up. The same runs on one CPU (the caller, the
 * workers and the ping-pong pinned together) make each wake-up a context
 * switch, not the time a virtual machine takes to wake an idle CPU, which
 * varies tenfold from run to run here.
 *
 *   bench_guard [calls]     default 20000
 *
 * The guarded figures are the guard as it ships, reporting each effect
 * outside a tool's hints; the same call runs under the guard without
 * reporting (MCP_GUARD_QUIET) and observing (MCP_GUARD_OBSERVE), for the
 * ratio of each to the guard without reporting in the same run (the echo
 * makes no effect: what reporting costs a well-behaved call).
 *
 * Prints each figure in µs per call and calls/s, the overhead and the
 * ratio to the ceiling. */
#define _GNU_SOURCE
#include <mcp/guard.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Replies arrive on whichever thread answers; the caller waits for each. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t arrived = PTHREAD_COND_INITIALIZER;
static long replies;
static _Atomic long replies_seen; /* replies, for a caller that spins */
static int bad;

static int on_send(const char *msg, size_t len, void *user_data) {
  (void)user_data;
  pthread_mutex_lock(&lock);
  if (memmem(msg, len, "\"id\":0", 6) == NULL) {
    /* Not initialize's answer: an echo's, which must carry the text. */
    bad += memmem(msg, len, "hello 1", 7) == NULL;
    replies++;
    atomic_store(&replies_seen, replies);
  }
  pthread_cond_signal(&arrived);
  pthread_mutex_unlock(&lock);
  return 0;
}

static int echo(mcp_call *call, void *user_data) {
  (void)user_data;
  const char *text = NULL;
  int rc = mcp_call_arg_string(call, "text", &text);
  return rc ? rc : mcp_result_text(call, text);
}

static const mcp_tool ECHO = {
    .name = "echo",
    .description = "Returns its text.",
    .input_schema = "{\"type\":\"object\",\"properties\":{\"text\":{"
                    "\"type\":\"string\"}},\"required\":[\"text\"]}",
    .annotations = {.read_only = MCP_HINT_TRUE, .open_world = MCP_HINT_FALSE},
    .handler = echo};

/* What the filter costs each system call a handler makes: getppid, which
 * no rule names, timed in the handler, per call in ns. */
#define SYSCALLS 20000
static double syscall_ns;

static int syscalls(mcp_call *call, void *user_data) {
  (void)user_data;
  double start = now();
  for (int i = 0; i < SYSCALLS; i++)
    (void)syscall(SYS_getppid);
  syscall_ns = (now() - start) / SYSCALLS * 1e9;
  return mcp_result_text(call, "hello 1");
}

static const mcp_tool SYSCALLS_TOOL = {
    .name = "syscalls",
    .description = "Makes system calls.",
    .input_schema = "{\"type\":\"object\"}",
    .annotations = {.read_only = MCP_HINT_TRUE, .open_world = MCP_HINT_FALSE},
    .handler = syscalls};

#define SYSCALLS_CALL                                                          \
  "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{"       \
  "\"name\":\"syscalls\",\"arguments\":{}}}"

#define CALL                                                                   \
  "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{"       \
  "\"name\":\"echo\",\"arguments\":{\"text\":\"hello 1\"}}}"

/* How a run is guarded. */
enum { UNGUARDED, GUARDED, QUIET, OBSERVING, MODES };

static double last_syscall_ns[MODES]; /* of each mode's last run */

/* Seconds per call over calls sequential calls, guarded (as mode says) or
 * not; spin: the caller watches for each reply instead of sleeping until
 * it comes. */
static double run_calls(long calls, int mode, bool spin) {
  bool guarded = mode != UNGUARDED;
  mcp_server_info info = {.name = "bench", .version = "1"};
  mcp_server *srv = NULL;
  mcp_session *s = NULL;
  if (mcp_server_new(&info, &srv) || mcp_server_add_tool(srv, &ECHO, NULL) ||
      mcp_server_add_tool(srv, &SYSCALLS_TOOL, NULL)) {
    fprintf(stderr, "bench_guard: server: %s\n", mcp_server_errmsg(srv));
    exit(1);
  }
  mcp_server_set_log(srv, NULL, NULL);
  /* Best effort, so that the smoke run works under valgrind, which shows
   * no Landlock; the figure printed first says which ABI was used. */
  mcp_guard_options opts = {.flags = MCP_GUARD_BEST_EFFORT};
  if (mode == QUIET)
    opts.flags |= MCP_GUARD_QUIET;
  if (mode == OBSERVING)
    opts.flags |= MCP_GUARD_OBSERVE;
  if (guarded && mcp_guard_enable(srv, &opts) != 0) {
    fprintf(stderr, "bench_guard: %s\n", mcp_server_errmsg(srv));
    /* Observing needs seccomp user notification, which valgrind (the
     * smoke run's) and some kernels refuse: that row is not measured. */
    if (mode != OBSERVING)
      exit(1);
    mcp_server_free(srv);
    return -1;
  }
  if (mcp_session_new(srv, NULL, on_send, NULL, &s)) {
    fprintf(stderr, "bench_guard: no session\n");
    exit(1);
  }
  static const char init[] =
      "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{"
      "\"protocolVersion\":\"2025-11-25\",\"capabilities\":{},\"clientInfo\":"
      "{\"name\":\"b\",\"version\":\"1\"}}}";
  static const char ready[] =
      "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}";
  pthread_mutex_lock(&lock);
  replies = 0;
  atomic_store(&replies_seen, 0);
  pthread_mutex_unlock(&lock);
  mcp_session_receive(s, init, strlen(init));
  mcp_session_receive(s, ready, strlen(ready));
  /* The first call starts the worker pool: not timed. */
  double start = 0;
  for (long i = 0; i <= calls; i++) {
    if (i == 1)
      start = now();
    mcp_session_receive(s, CALL, sizeof CALL - 1);
    /* Spinning is bounded: past a second the caller sleeps as usual. */
    double spin_until = spin ? now() + 1 : 0;
    while (spin && atomic_load(&replies_seen) <= i && now() < spin_until)
      ;
    pthread_mutex_lock(&lock);
    while (replies <= i)
      pthread_cond_wait(&arrived, &lock);
    pthread_mutex_unlock(&lock);
  }
  double per = (now() - start) / (double)calls;
  /* One more call: the filter's cost per system call. */
  mcp_session_receive(s, SYSCALLS_CALL, sizeof SYSCALLS_CALL - 1);
  pthread_mutex_lock(&lock);
  while (replies <= calls + 1)
    pthread_cond_wait(&arrived, &lock);
  pthread_mutex_unlock(&lock);
  last_syscall_ns[mode] = syscall_ns;
  mcp_session_free(s);
  mcp_server_free(srv);
  return per;
}

/* The ceiling's hand-off: one signal to another thread and one back. */
static pthread_mutex_t pp_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t pp_cond = PTHREAD_COND_INITIALIZER;
static long pp_turn; /* odd: the other thread's turn */
static long pp_rounds;

static void *pong(void *arg) {
  (void)arg;
  pthread_mutex_lock(&pp_lock);
  for (long i = 0; i < pp_rounds; i++) {
    while (pp_turn % 2 == 0)
      pthread_cond_wait(&pp_cond, &pp_lock);
    pp_turn++;
    pthread_cond_broadcast(&pp_cond);
  }
  pthread_mutex_unlock(&pp_lock);
  return NULL;
}

static double handoff(long rounds) {
  pp_rounds = rounds;
  pp_turn = 0;
  pthread_t t;
  if (pthread_create(&t, NULL, pong, NULL) != 0)
    exit(1);
  double start = now();
  pthread_mutex_lock(&pp_lock);
  for (long i = 0; i < rounds; i++) {
    pp_turn++;
    pthread_cond_broadcast(&pp_cond);
    while (pp_turn % 2 == 1)
      pthread_cond_wait(&pp_cond, &pp_lock);
  }
  pthread_mutex_unlock(&pp_lock);
  double per = (now() - start) / (double)rounds;
  pthread_join(t, NULL);
  return per;
}

/* Best of three of each figure, taken in turns. */
typedef struct figures {
  double plain, guarded, spinning, hand, quiet, observing;
} figures;

static double least(double a, double b) { return a < b ? a : b; }

static void measure(long calls, bool pinned, figures *f) {
  *f = (figures){1e9, 1e9, 1e9, 1e9, 1e9, 1e9};
  for (int r = 0; r < 3; r++) {
    f->plain = least(f->plain, run_calls(calls, UNGUARDED, false));
    f->guarded = least(f->guarded, run_calls(calls, GUARDED, false));
    f->quiet = least(f->quiet, run_calls(calls, QUIET, false));
    double observing = run_calls(calls, OBSERVING, false);
    f->observing = observing < 0 ? -1 : least(f->observing, observing);
    if (!pinned)
      f->spinning = least(f->spinning, run_calls(calls, GUARDED, true));
    f->hand = least(f->hand, handoff(calls) / 2);
  }
}

int main(int argc, char **argv) {
  long calls = argc > 1 ? atol(argv[1]) : 20000;
  if (calls < 1)
    calls = 1;
  int abi = mcp_guard_landlock_abi();
  /* Interleaved, best of three each: the machine's noise hits both. */
  figures f;
  measure(calls, false, &f);
  double plain = f.plain, guarded = f.guarded, spinning = f.spinning,
         hand = f.hand;
  /* On one CPU: threads started from here (the workers) inherit it. */
  cpu_set_t all, one;
  sched_getaffinity(0, sizeof all, &all);
  CPU_ZERO(&one);
  for (int c = 0; c < CPU_SETSIZE; c++)
    if (CPU_ISSET(c, &all)) {
      CPU_SET(c, &one);
      break;
    }
  figures o;
  sched_setaffinity(0, sizeof one, &one);
  measure(calls, true, &o);
  sched_setaffinity(0, sizeof all, &all);
  double ceiling = plain + hand;
  printf("landlock ABI: %d\n", abi);
  printf("unguarded echo: %.2f µs per call, %.0f calls/s\n", plain * 1e6,
         1 / plain);
  printf("guarded echo: %.2f µs per call, %.0f calls/s\n", guarded * 1e6,
         1 / guarded);
  printf("guarded echo, caller spinning: %.2f µs per call, %.0f calls/s\n",
         spinning * 1e6, 1 / spinning);
  printf("guarded echo, no reporting (MCP_GUARD_QUIET): %.2f µs per call\n",
         f.quiet * 1e6);
  if (f.observing < 0) {
    printf("guarded echo, observing (MCP_GUARD_OBSERVE): not measured here "
           "(no seccomp user notification)\n");
  } else {
    printf("guarded echo, observing (MCP_GUARD_OBSERVE): %.2f µs per call\n",
           f.observing * 1e6);
  }
  printf("ratio reporting/no reporting: %.2f\n", guarded / f.quiet);
  if (f.observing >= 0)
    printf("ratio observing/no reporting: %.2f\n", f.observing / f.quiet);
  printf("thread hand-off (half a ping-pong): %.2f µs\n", hand * 1e6);
  printf("a system call no rule names (getppid): unguarded %.0f ns, "
         "guarded %.0f ns, no reporting %.0f ns\n",
         last_syscall_ns[UNGUARDED], last_syscall_ns[GUARDED],
         last_syscall_ns[QUIET]);
  printf("guard overhead: %.2f µs per call\n", (guarded - plain) * 1e6);
  printf("guard overhead without a wake-up: %.2f µs per call\n",
         (spinning - plain) * 1e6);
  printf("ceiling (unguarded + hand-off): %.2f µs per call\n", ceiling * 1e6);
  printf("ratio guarded/ceiling: %.2f\n", guarded / ceiling);
  printf("one CPU, unguarded: %.2f µs per call\n", o.plain * 1e6);
  printf("one CPU, guarded: %.2f µs per call\n", o.guarded * 1e6);
  printf("one CPU, hand-off: %.2f µs\n", o.hand * 1e6);
  printf("one CPU, guard overhead: %.2f µs per call\n",
         (o.guarded - o.plain) * 1e6);
  printf("one CPU, guard overhead, no reporting: %.2f µs per call\n",
         (o.quiet - o.plain) * 1e6);
  printf("one CPU, ratio reporting/no reporting: %.2f\n", o.guarded / o.quiet);
  printf("one CPU, ratio guarded/(unguarded + hand-off): %.2f\n",
         o.guarded / (o.plain + o.hand));
  if (bad) {
    fprintf(stderr, "bench_guard: %d wrong replies\n", bad);
    return 1;
  }
  return 0;
}
