/* The guard: an executor (mcp_server_set_executor) that runs each tool on
 * worker threads restricted by the rule set of its stated hints. One pool
 * per rule set, started by the first call that needs it; the workers
 * restrict themselves before they take a call, and a pool whose workers
 * could not be restricted takes none. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "base.h"

#include "effects.h"
#include "guard_int.h"

#define DEFAULT_THREADS 2u
#define MAX_THREADS 64u
/* How long an idle worker watches its queue before it sleeps: a call that
 * comes meanwhile costs no wake-up (measured here, waking a sleeping
 * thread on the other core cost up to 40 µs, more than the call). */
#define SPIN_NS 50000L

typedef struct mcp__guard mcp__guard;

/* What the supervisor knows of a worker: its thread, and the call it runs
 * (copied: a report may come from a thread the handler left running after
 * the call ended). Under the guard's calls lock. */
typedef struct slot {
  pid_t tid;
  bool busy;
  mcp_call *call; /* while busy: lives while its worker is stopped */
  char tool[128];
  char id[96];
} slot;

/* Writable paths: those of mcp_guard_options for every tool (the first
 * set), or those and a tool's own (tool_paths). */
typedef struct pathset {
  char *tool;    /* NULL: every tool without a set of its own */
  int *fds;      /* opened O_PATH; -1-terminated */
  char **wpaths; /* reporting: as opened, for the supervisor; NULL-ended */
} pathset;

typedef struct pool {
  mcp__guard *g;
  pathset *set;
  mcp__guard_plan plan;
  pthread_mutex_t lock;
  pthread_cond_t cond;
  mcp_call **ring; /* queued calls, count from head, cap a power of two */
  size_t cap, head, count;
  _Atomic size_t queued; /* count, readable without the lock */
  _Atomic bool spinning; /* a worker watches the queue (one at a time) */
  unsigned sleepers;     /* workers waiting on cond */
  pthread_t *threads;
  unsigned nthreads;           /* started (restricted, as their spawner is) */
  unsigned reported;           /* workers that are ready */
  pthread_t spawner;           /* starts the workers of a guarded rule set */
  pthread_cond_t spawner_cond; /* its own: cond's signal wakes a worker */
  unsigned spawned; /* workers the spawner started, once spawn is done */
  int spawner_rc;   /* whether the spawner could restrict itself */
  char start_why[160];
  slot *slots;              /* one per worker (g->threads) */
  int listener;             /* reporting: where its calls are stopped; -1 */
  struct sock_filter *prog; /* reporting: its filter as it refuses */
  size_t prog_len;
  bool has_spawner, spawner_ready, spawn, spawn_done, quit;
  bool started, go, stop;
} pool;

struct mcp__guard {
  mcp_server *srv;
  mcp__guard_kernel kernel;
  unsigned threads;
  int level; /* of the sentence: 1 warning, 0 information */
  char sentence[480];
  pthread_t freeing;     /* the worker that let go of the server, if one did */
  unsigned short *ports; /* tcp_ports; 0-terminated, or NULL */
  pathset *sets;         /* [0]: writable_paths; then one per tool_paths */
  size_t nsets;
  bool free_on_exit;
  bool report, observe; /* reporting (not MCP_GUARD_QUIET); observing */
  mcp_guard_report_fn hook;
  void *hook_data;
  pthread_mutex_t calls; /* the pools' slots */
  pthread_t supervisor;
  bool has_supervisor;
  int stop[2];        /* the supervisor's stop pipe; -1 */
  struct rate *rates; /* the log's rate limit, the supervisor's */
  size_t nrates;
  struct pollfd *pfds; /* the supervisor's: npools + 1 */
  pool **pof;          /* the pool of each of pfds */
  pool *pools;         /* MCP__GUARD_SETS per set: set k's rule set i is
                          pools[k * MCP__GUARD_SETS + i] */
  size_t npools;
};

static void close_paths(int *fds);

static void guard_free(mcp__guard *g) {
  for (size_t k = 0; k < g->nsets; k++) {
    pathset *set = &g->sets[k];
    close_paths(set->fds);
    for (size_t i = 0; set->wpaths && set->wpaths[i]; i++)
      mcp__free(set->wpaths[i]);
    mcp__free(set->wpaths);
    mcp__free(set->tool);
  }
  mcp__free(g->sets);
  mcp__free(g->ports);
  mcp__free(g->rates);
  mcp__free(g->pfds);
  mcp__free(g->pof);
  for (int i = 0; i < 2; i++)
    if (g->stop[i] >= 0)
      close(g->stop[i]);
  pthread_mutex_destroy(&g->calls);
  for (size_t i = 0; i < g->npools; i++) {
    pool *p = &g->pools[i];
    if (p->listener >= 0)
      close(p->listener);
    free(p->prog); /* mcp__effects_export's, from malloc */
    mcp__free(p->slots);
    mcp__guard_plan_free(&p->plan);
    pthread_cond_destroy(&p->cond);
    pthread_cond_destroy(&p->spawner_cond);
    pthread_mutex_destroy(&p->lock);
    mcp__free(p->ring);
    mcp__free(p->threads);
  }
  mcp__free(g->pools);
  mcp__free(g);
}

/* ---- workers ------------------------------------------------------------- */

static long elapsed_ns(const struct timespec *since) {
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return (now.tv_sec - since->tv_sec) * 1000000000L +
         (now.tv_nsec - since->tv_nsec);
}

/* Whether this thread may run on more than one CPU: spinning on the only
 * one would keep the thread it waits for from running. */
static bool may_spin(void) {
  cpu_set_t set;
  return sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 1;
}

/* Watches the queue for at most SPIN_NS, without the lock. */
static void watch(pool *p) {
  struct timespec start;
  clock_gettime(CLOCK_MONOTONIC, &start);
  for (unsigned i = 1;; i++) {
    if (atomic_load_explicit(&p->queued, memory_order_relaxed))
      return;
    if (i % 64 == 0 && elapsed_ns(&start) > SPIN_NS)
      return;
  }
}

/* Watches the queue unless another worker of the pool does already: two
 * spinning on two CPUs would leave none for the thread that is to send
 * the next call. */
static void spin(pool *p) {
  bool idle = false;
  if (!atomic_compare_exchange_strong(&p->spinning, &idle, true))
    return;
  watch(p);
  atomic_store(&p->spinning, false);
}

/* Marks slot s as running call (NULL: idle), for the supervisor. */
static void occupy(mcp__guard *g, slot *s, mcp_call *call) {
  pthread_mutex_lock(&g->calls);
  s->busy = call != NULL;
  s->call = call;
  if (call) {
    mcp__fmt(s->tool, sizeof s->tool, "%s", mcp_call_name(call));
    const char *id = mcp_call_request_id(call);
    mcp__fmt(s->id, sizeof s->id, "%s", id ? id : "");
  }
  pthread_mutex_unlock(&g->calls);
}

/* A worker of a guarded rule set was started by its pool's spawner and
 * holds its restrictions from birth: it has nothing to apply. */
static void *worker(void *arg) {
  pool *p = arg;
  mcp__guard *g = p->g;
  bool spins = may_spin();
  pthread_mutex_lock(&p->lock);
  slot *me = &p->slots[p->reported];
  pthread_mutex_lock(&g->calls);
  me->tid = (pid_t)syscall(SYS_gettid);
  pthread_mutex_unlock(&g->calls);
  p->reported++;
  pthread_cond_broadcast(&p->cond);
  while (!p->go && !p->stop)
    pthread_cond_wait(&p->cond, &p->lock);
  while (p->go) {
    if (spins && p->count == 0 && !p->stop) {
      pthread_mutex_unlock(&p->lock);
      spin(p);
      pthread_mutex_lock(&p->lock);
    }
    while (p->count == 0 && !p->stop) {
      p->sleepers++;
      pthread_cond_wait(&p->cond, &p->lock);
      p->sleepers--;
    }
    if (p->count == 0)
      break; /* stopping, and nothing left */
    mcp_call *call = p->ring[p->head];
    p->head = (p->head + 1) & (p->cap - 1);
    p->count--;
    atomic_store_explicit(&p->queued, p->count, memory_order_relaxed);
    pthread_mutex_unlock(&p->lock);
    if (g->report)
      occupy(g, me, call);
    mcp_call_execute(call, p->plan.name);
    if (g->report)
      occupy(g, me, NULL);
    pthread_mutex_lock(&p->lock);
  }
  pthread_mutex_unlock(&p->lock);
  /* The release ran on this thread (it finished the server's last call):
   * every other worker is joined, and the guard is this thread's to free.
   * Only this thread wrote these, so reading them here is no race. */
  if (g->free_on_exit && pthread_equal(g->freeing, pthread_self()))
    guard_free(g);
  return NULL;
}

/* Stops and joins what start_pool started. Under p->lock, released
 * meanwhile. */
static void stop_pool_locked(pool *p, unsigned started) {
  p->stop = true;
  pthread_cond_broadcast(&p->cond);
  pthread_mutex_unlock(&p->lock);
  for (unsigned i = 0; i < started; i++)
    pthread_join(p->threads[i], NULL);
  pthread_mutex_lock(&p->lock);
  p->stop = false;
  p->reported = 0;
}

/* Starts up to g->threads workers of p into p->threads; returns how many. */
static unsigned create_workers(pool *p) {
  unsigned n = 0;
  while (n < p->g->threads &&
         mcp__thread_start(&p->threads[n], NULL, worker, p) == 0)
    n++;
  return n;
}

/* The spawner of a guarded rule set, started at mcp_guard_enable before
 * any guarded thread runs: it builds the pool's Landlock ruleset,
 * restricts itself with it and closes it, then starts the pool's workers
 * when the first call needs them, and they inherit its restrictions. So
 * no ruleset descriptor exists while this guard's guarded threads run,
 * for them to widen, swap or keep (and seccomp refuses them Landlock's
 * calls besides). */
static void *spawner(void *arg) {
  pool *p = arg;
  mcp__guard *g = p->g;
  char why[160] = "";
  int rc =
      mcp__guard_plan_build(&p->plan, &g->kernel, p->plan.fs, p->plan.closed,
                            p->set->fds, g->ports, why, sizeof why);
  p->plan.observe = g->observe;
  /* Reporting: the answers the supervisor gives are the filter's own. */
  if (rc == 0 && g->report && p->plan.filtered)
    rc = mcp__guard_program(&p->plan, &p->prog, &p->prog_len, why, sizeof why);
  if (g->observe) /* observing: what Landlock would refuse happens */
    mcp__guard_plan_free(&p->plan);
  if (rc == 0)
    rc = g->report
             ? mcp__guard_apply_watched(&p->plan, &p->listener, why, sizeof why)
             : mcp__guard_apply(&p->plan, why, sizeof why);
  mcp__guard_plan_free(&p->plan);
  pthread_mutex_lock(&p->lock);
  p->spawner_rc = rc;
  mcp__fmt(p->start_why, sizeof p->start_why, "%s", why);
  p->spawner_ready = true;
  pthread_cond_broadcast(&p->spawner_cond);
  /* A thread the kernel did not restrict starts no worker. */
  while (rc == 0 && !p->quit) {
    if (p->spawn) {
      p->spawned = create_workers(p);
      p->spawn = false;
      p->spawn_done = true;
      pthread_cond_broadcast(&p->spawner_cond);
    } else {
      pthread_cond_wait(&p->spawner_cond, &p->lock);
    }
  }
  pthread_mutex_unlock(&p->lock);
  return NULL;
}

/* Has p's spawner start the workers; under p->lock. Returns how many. */
static unsigned spawn_locked(pool *p) {
  p->spawn = true;
  p->spawn_done = false;
  pthread_cond_broadcast(&p->spawner_cond);
  while (!p->spawn_done)
    pthread_cond_wait(&p->spawner_cond, &p->lock);
  return p->spawned;
}

/* Starts p's workers (through its spawner, for a guarded rule set) and
 * waits until each is ready. Under p->lock. Returns 0, or a negative code
 * after logging why. */
static int start_pool_locked(pool *p) {
  mcp__guard *g = p->g;
  if (p->threads == NULL &&
      (p->threads = mcp__calloc(g->threads, sizeof *p->threads)) == NULL)
    return MCP_ENOMEM;
  unsigned started = p->has_spawner ? spawn_locked(p) : create_workers(p);
  while (p->reported < started)
    pthread_cond_wait(&p->cond, &p->lock);
  if (started < g->threads) {
    char line[300];
    mcp__fmt(line, sizeof line,
             "%s: could not start its workers: no thread for a worker",
             p->plan.name);
    stop_pool_locked(p, started);
    mcp_server_log(g->srv, MCP_LOG_ERROR, line);
    return MCP_ENOMEM;
  }
  p->nthreads = started;
  p->go = p->started = true;
  pthread_cond_broadcast(&p->cond);
  return 0;
}

static int push_locked(pool *p, mcp_call *call) {
  if (p->count == p->cap) {
    size_t cap = p->cap ? p->cap * 2 : 16;
    mcp_call **ring = mcp__calloc(cap, sizeof *ring);
    if (ring == NULL)
      return MCP_ENOMEM;
    for (size_t i = 0; i < p->count; i++)
      ring[i] = p->ring[(p->head + i) & (p->cap - 1)];
    mcp__free(p->ring);
    p->ring = ring;
    p->cap = cap;
    p->head = 0;
  }
  p->ring[(p->head + p->count) & (p->cap - 1)] = call;
  p->count++;
  atomic_store_explicit(&p->queued, p->count, memory_order_relaxed);
  /* A spinning worker sees it without a wake-up. */
  if (p->sleepers)
    pthread_cond_signal(&p->cond);
  return 0;
}

/* ---- reports -------------------------------------------------------------
 * One supervisor thread per reporting guard serves every pool's listener:
 * it decodes each stopped call (effects.c), ties it to the call its thread
 * runs, judges it, reports it (hook, log) and answers as the pool's filter
 * would (mcp__effects_bpf_run on the program the filter was built from),
 * or, observing, lets it go on. */

/* The log's limit: LOG_PER_SECOND lines per tool per second; the rest of
 * that second are counted and said in one line ("... n more") with the
 * tool's next report. At most RATE_TOOLS tools are told apart; the others
 * share one count. Written by the supervisor only. */
#define LOG_PER_SECOND 10u
#define RATE_TOOLS 64u

struct rate {
  char tool[128];
  time_t second;
  unsigned lines, dropped;
};

static struct rate *rate_of(mcp__guard *g, const char *tool) {
  for (size_t i = 0; i < g->nrates; i++)
    if (strcmp(g->rates[i].tool, tool) == 0)
      return &g->rates[i];
  if (g->nrates == RATE_TOOLS)
    return &g->rates[RATE_TOOLS]; /* the shared one */
  struct rate *r = &g->rates[g->nrates++];
  mcp__fmt(r->tool, sizeof r->tool, "%s", tool);
  return r;
}

static const char *const verdicts[] = {"refused", "observed",
                                       "allowed by configuration"};

static void log_effect(mcp__guard *g, const mcp_guard_effect *e) {
  if (g->rates == NULL)
    return;
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  struct rate *r = rate_of(g, e->tool ? e->tool : "");
  char line[2600];
  if (r->second != now.tv_sec) {
    if (r->dropped) {
      mcp__fmt(line, sizeof line, "guard: tool \"%s\": ... %u more",
               e->tool ? e->tool : "(unattributed)", r->dropped);
      mcp_server_log(g->srv, MCP_LOG_WARNING, line);
    }
    r->second = now.tv_sec;
    r->lines = r->dropped = 0;
  }
  if (r->lines >= LOG_PER_SECOND) {
    r->dropped++;
    return;
  }
  r->lines++;
  mcp__fmt(line, sizeof line,
           "guard: tool \"%s\" (request %s) breaks %s: %s %s%s%s (%s): %s",
           e->tool ? e->tool : "(unattributed)",
           e->request_id ? e->request_id : "?", e->hint, e->operation,
           e->target, e->target2[0] ? " -> " : "", e->target2, e->syscall,
           verdicts[e->verdict]);
  mcp_server_log(
      g->srv, e->verdict == MCP_GUARD_ALLOWED ? MCP_LOG_INFO : MCP_LOG_WARNING,
      line);
}

/* Whether path is beneath a writable path (as it reads: Landlock, which
 * follows the real hierarchy, has the last word). */
static bool writable(const pool *p, const char *path) {
  char *const *wpaths = p->set->wpaths;
  for (size_t i = 0; wpaths && wpaths[i]; i++) {
    const char *w = wpaths[i];
    size_t n = strlen(w);
    if (strncmp(path, w, n) == 0 &&
        (path[n] == '\0' || path[n] == '/' || (n == 1 && w[0] == '/')))
      return true;
  }
  return false;
}

/* The hint an effect of fs plan p breaks, NULL for none. */
static const char *broken_hint(const pool *p, const mcp__effect *e) {
  switch (e->op) {
  case MCP__EFFECT_SOCKET:
  case MCP__EFFECT_CONNECT:
  case MCP__EFFECT_BIND:
  case MCP__EFFECT_LISTEN:
  case MCP__EFFECT_SEND:
    return p->plan.closed && e->family != AF_UNIX ? "openWorldHint" : NULL;
  case MCP__EFFECT_REMOVE:
  case MCP__EFFECT_RENAME:
  case MCP__EFFECT_TRUNCATE:
  case MCP__EFFECT_SHRINK:
  case MCP__EFFECT_ATTR_IOCTL:
    if (p->plan.fs == MCP__GUARD_FS_ADDITIVE)
      return "destructiveHint";
    break;
  default:
    break;
  }
  return p->plan.fs == MCP__GUARD_FS_READ_ONLY ? "readOnlyHint" : NULL;
}

/* The port of "a.b.c.d:port" or "[v6]:port", 0 for none. */
static unsigned short port_of(const char *target) {
  const char *colon = strrchr(target, ':');
  return colon ? (unsigned short)strtoul(colon + 1, NULL, 10) : 0;
}

/* What a call that passed seccomp meets next: allowed by configuration,
 * or refused (by Landlock, as the call goes on). */
static mcp_guard_verdict after_seccomp(const mcp__guard *g, const pool *p,
                                       const mcp__effect *e) {
  if (e->op == MCP__EFFECT_SOCKET)
    return MCP_GUARD_ALLOWED; /* TCP, for tcp_ports */
  if (e->op == MCP__EFFECT_CONNECT || e->op == MCP__EFFECT_BIND) {
    unsigned short port = port_of(e->target);
    for (size_t i = 0; port && g->ports && g->ports[i]; i++)
      if (g->ports[i] == port)
        return MCP_GUARD_ALLOWED;
    return MCP_GUARD_REFUSED;
  }
  if (!g->kernel.landlock)
    return MCP_GUARD_OBSERVED; /* best effort: nothing refuses it */
  bool under = !e->unreadable && writable(p, e->target) &&
               (e->op != MCP__EFFECT_RENAME || writable(p, e->target2));
  return under ? MCP_GUARD_ALLOWED : MCP_GUARD_REFUSED;
}

/* Ties effect r to the call of the thread that made it (see
 * mcp_guard_attribution). Copies the call's texts into tool and id. */
static void attribute(mcp__guard *g, const pool *p, pid_t tid,
                      mcp_guard_effect *r, char *tool, char *id, size_t size,
                      const char *line) {
  const slot *only = NULL, *mine = NULL;
  unsigned busy = 0;
  pthread_mutex_lock(&g->calls);
  for (unsigned i = 0; i < g->threads; i++) {
    const slot *s = &p->slots[i];
    if (s->tid == tid)
      mine = s;
    if (s->busy) {
      busy++;
      only = s;
    }
  }
  const slot *s = mine && mine->busy ? mine : busy == 1 ? only : NULL;
  r->attribution = s == NULL   ? MCP_GUARD_UNATTRIBUTED
                   : s == mine ? MCP_GUARD_BY_THREAD
                               : MCP_GUARD_BY_POOL;
  if (s) {
    mcp__fmt(tool, size, "%s", s->tool);
    mcp__fmt(id, size, "%s", s->id);
  }
  /* The worker is stopped in this system call, inside the handler: its
   * call lives. A thread the handler started may outlive its call. */
  if (s && s == mine)
    (void)mcp_call_report_effect(s->call, line);
  pthread_mutex_unlock(&g->calls);
  r->tool = s ? tool : NULL;
  r->request_id = s ? id : NULL;
}

static int on_effect(const mcp__effect *e, const struct seccomp_notif *n,
                     void *user_data) {
  pool *p = user_data;
  mcp__guard *g = p->g;
  uint32_t answer = p->prog
                        ? mcp__effects_bpf_run(p->prog, p->prog_len, &n->data)
                        : SECCOMP_RET_ALLOW;
  int err = 0;
  if ((answer & SECCOMP_RET_ACTION_FULL) == SECCOMP_RET_ERRNO)
    err = (int)(answer & SECCOMP_RET_DATA);
  else if ((answer & SECCOMP_RET_ACTION_FULL) != SECCOMP_RET_ALLOW)
    err = ENOSYS; /* no such answer in these filters: fail closed */
  /* An ioctl the short list refuses is reported, whatever its number
   * says of it: the list refuses it because seccomp cannot tell a device
   * from a file. */
  bool listed = false;
  if (err == 0)
    listed = (err = mcp__guard_few_ioctls(&p->plan, &n->data)) != 0;
  /* The answer comes from the registers alone, as the filter's would:
   * what was read from the thread's memory is for the report only. */
  const char *hint = e->harmless && !listed ? NULL : broken_hint(p, e);
  if (hint == NULL)
    return g->observe ? MCP__EFFECT_CONTINUE : err;
  mcp_guard_effect r = {
      .hint = hint,
      .operation = mcp__effect_op_name(e->op),
      .target = e->target,
      .target2 = e->target2,
      .syscall = e->call,
      .open_flags = e->flags,
      .tid = (long)e->tid,
  };
  r.verdict = err ? MCP_GUARD_REFUSED : after_seccomp(g, p, e);
  if (g->observe && r.verdict == MCP_GUARD_REFUSED)
    r.verdict = MCP_GUARD_OBSERVED;
  char tool[128], id[128], line[2600];
  mcp__fmt(line, sizeof line, "%s %s%s%s (%s) breaks %s: %s", r.operation,
           r.target, r.target2[0] ? " -> " : "", r.target2, r.syscall, hint,
           verdicts[r.verdict]);
  attribute(g, p, e->tid, &r, tool, id, sizeof tool, line);
  if (g->hook)
    g->hook(&r, g->hook_data);
  log_effect(g, &r);
  return g->observe ? MCP__EFFECT_CONTINUE : err;
}

static void *supervise(void *arg) {
  mcp__guard *g = arg;
  struct pollfd *fds = g->pfds;
  pool **of = g->pof;
  for (;;) {
    nfds_t n = 0;
    for (size_t i = 0; i < g->npools; i++)
      if (g->pools[i].listener >= 0) {
        of[n] = &g->pools[i];
        fds[n++] =
            (struct pollfd){.fd = g->pools[i].listener, .events = POLLIN};
      }
    fds[n] = (struct pollfd){.fd = g->stop[0], .events = POLLIN};
    if (poll(fds, n + 1, -1) < 0)
      continue; /* EINTR: every signal is blocked here, but for faults */
    if (fds[n].revents)
      return NULL;
    for (nfds_t i = 0; i < n; i++) {
      if (fds[i].revents & POLLIN)
        (void)mcp__effects_receive_all(fds[i].fd, on_effect, of[i]);
      else if (fds[i].revents & (POLLHUP | POLLERR | POLLNVAL)) {
        /* Every thread of the rule set is gone: the pool is done. */
        close(of[i]->listener);
        of[i]->listener = -1;
      }
    }
  }
}

/* Starts the supervisor (reporting only). Returns 0 or MCP_ENOMEM. */
static int start_supervisor(mcp__guard *g, char *why, size_t size) {
  if (!g->report)
    return 0;
  g->pfds = mcp__calloc(g->npools + 1, sizeof *g->pfds);
  g->pof = mcp__calloc(g->npools, sizeof *g->pof);
  if (g->pfds == NULL || g->pof == NULL || pipe2(g->stop, O_CLOEXEC) != 0 ||
      mcp__thread_start(&g->supervisor, NULL, supervise, g) != 0) {
    mcp__fmt(why, size, "mcp_guard_enable: no thread for the supervisor");
    return MCP_ENOMEM;
  }
  g->has_supervisor = true;
  return 0;
}

static void stop_supervisor(mcp__guard *g) {
  if (!g->has_supervisor)
    return;
  ssize_t w;
  do
    w = write(g->stop[1], "x", 1);
  while (w < 0 && errno == EINTR);
  pthread_join(g->supervisor, NULL);
  g->has_supervisor = false;
}

/* ---- the executor -------------------------------------------------------- */

static int rule_set(const mcp_call *call) {
  mcp_tool_annotations h = mcp_call_hints(call);
  mcp__guard_fs fs = h.read_only == MCP_HINT_TRUE      ? MCP__GUARD_FS_READ_ONLY
                     : h.destructive == MCP_HINT_FALSE ? MCP__GUARD_FS_ADDITIVE
                                                       : MCP__GUARD_FS_ANY;
  return (int)fs * 2 + (h.open_world == MCP_HINT_FALSE);
}

/* The set of writable paths of the tool named name: its own, or 0. */
static size_t set_of(const mcp__guard *g, const char *name) {
  for (size_t k = 1; name && k < g->nsets; k++)
    if (strcmp(g->sets[k].tool, name) == 0)
      return k;
  return 0;
}

static int submit(mcp_call *call, void *user_data) {
  mcp__guard *g = user_data;
  /* Prompts and resources state no hints: they run where they would. */
  if (mcp_call_kind_of(call) != MCP_CALL_TOOL)
    return MCP_EXECUTE_HERE;
  int set = rule_set(call);
  /* A tool's own writable paths matter to the rule sets that restrict
   * writing (additive, read-only). They are there for the tool's writing:
   * a call its resolver made read-only for its arguments gets
   * writable_paths only, so that a read cannot write where an append of
   * the same tool may. */
  bool resolved_read_only =
      set / 2 == MCP__GUARD_FS_READ_ONLY && mcp_call_hints_resolved(call);
  size_t k =
      set >= 2 && !resolved_read_only ? set_of(g, mcp_call_name(call)) : 0;
  pool *p = &g->pools[k * MCP__GUARD_SETS + (size_t)set];
  pthread_mutex_lock(&p->lock);
  int rc = p->started ? 0 : start_pool_locked(p);
  if (rc == 0)
    rc = push_locked(p, call);
  pthread_mutex_unlock(&p->lock);
  return rc;
}

static void release(void *user_data) {
  mcp__guard *g = user_data;
  pthread_t self = pthread_self();
  bool mine = false;
  for (size_t i = 0; i < g->npools; i++) {
    pool *p = &g->pools[i];
    pthread_mutex_lock(&p->lock);
    p->stop = p->quit = true;
    pthread_cond_broadcast(&p->cond);
    pthread_cond_broadcast(&p->spawner_cond);
    pthread_mutex_unlock(&p->lock);
    if (p->has_spawner)
      pthread_join(p->spawner, NULL);
    for (unsigned k = 0; k < p->nthreads; k++) {
      if (pthread_equal(p->threads[k], self)) {
        mine = true;
        pthread_detach(self);
      } else {
        pthread_join(p->threads[k], NULL);
      }
    }
  }
  /* Last: a worker joined above may have waited on it. A thread the
   * handler left running has its calls failed (ENOSYS) from now on. */
  stop_supervisor(g);
  if (!mine) {
    guard_free(g);
    return;
  }
  g->freeing = self;
  g->free_on_exit = true;
}

/* ---- what the kernel can do ---------------------------------------------- */

/* Appends one clause to the sentence. */
static void say(mcp__guard *g, const char *clause) {
  size_t n = strlen(g->sentence);
  mcp__fmt(g->sentence + n, sizeof g->sentence - n, "%s%s", n ? "; " : "",
           clause);
}

/* Writes what the kernel enforces into g->sentence and returns 0, or the
 * first rule it cannot keep (MCP_ENOTSUP, why) when not best effort. */
static int judge(mcp__guard *g, bool ports, char *why, size_t size) {
  const mcp__guard_kernel *k = &g->kernel;
  char clause[240];
  int abi = k->landlock ? k->abi : 0;
  g->level = 0;
  if (!k->landlock) {
    if (k->kernel_abi)
      mcp__fmt(clause, sizeof clause,
               "filesystem rules need Landlock; found ABI %d, which refused "
               "a domain: read-only and additive tools are not guarded",
               k->kernel_abi);
    else
      mcp__fmt(clause, sizeof clause,
               "filesystem rules need Landlock; found none: read-only and "
               "additive tools are not guarded");
    say(g, clause);
  } else if (abi < 3) {
    mcp__fmt(clause, sizeof clause,
             "truncation rules need Landlock ABI 3; found %d: %s", abi,
             k->seccomp ? "truncate, ftruncate and O_TRUNC are refused by "
                          "seccomp"
                        : "read-only and additive tools may truncate");
    say(g, clause);
  }
  if (abi < 4) {
    mcp__fmt(clause, sizeof clause,
             "network rules need Landlock ABI 4; found %d: %s", abi,
             !k->seccomp ? "closed-world tools are not guarded"
             : ports     ? "closed-world tools are guarded by seccomp only "
                           "(no TCP at all, tcp_ports stay closed)"
                         : "closed-world tools are guarded by seccomp only "
                           "(no TCP at all)");
    say(g, clause);
  }
  if (!k->seccomp)
    say(g, "seccomp filters are not available: closed-world tools may open "
           "any socket, read-only ones change file metadata, additive ones "
           "remove bytes, and no system call is refused");
  else if (g->report && !k->notify)
    say(g, "reports need seccomp user notification, which this system "
           "refused: refusals are silent");
  if (g->report && !k->notify) {
    if (g->observe) {
      mcp__fmt(why, size,
               "mcp_guard_enable: MCP_GUARD_OBSERVE needs seccomp user "
               "notification, which this system refused");
      return MCP_ENOTSUP;
    }
    g->report = false; /* the silent filter, as MCP_GUARD_QUIET */
  }
  if (g->sentence[0] == '\0') {
    mcp__fmt(g->sentence, sizeof g->sentence,
             "guard: Landlock ABI %d and seccomp keep every rule: read-only, "
             "additive and closed-world tools are held to their hints",
             abi);
    return 0;
  }
  char all[sizeof g->sentence];
  mcp__fmt(all, sizeof all, "guard: %s", g->sentence);
  memcpy(g->sentence, all, sizeof all);
  g->level = 1;
  /* Refused when a rule is not kept, for the first reason that holds. */
  bool kept = mcp__guard_fs_kept(k, MCP__GUARD_FS_READ_ONLY) &&
              mcp__guard_net_kept(k, ports);
  const char *refusal = kept           ? NULL
                        : !k->landlock ? "filesystem rules need Landlock"
                        : !k->seccomp  ? "socket and file-metadata rules need "
                                         "seccomp filters"
                                       : "tcp_ports need Landlock ABI 4";
  if (refusal && !k->best_effort) {
    char found[80];
    if (k->kernel_abi != k->abi)
      mcp__fmt(found, sizeof found,
               "ABI %d (landlock_abi_max; the kernel "
               "has %d)",
               k->abi, k->kernel_abi);
    else
      mcp__fmt(found, sizeof found, "ABI %d", k->kernel_abi);
    mcp__fmt(why, size,
             "mcp_guard_enable: %s; found %s (MCP_GUARD_BEST_EFFORT enforces "
             "the rest and logs what it cannot)",
             refusal, k->kernel_abi ? found : "no Landlock");
    return MCP_ENOTSUP;
  }
  return 0;
}

/* ---- enabling ------------------------------------------------------------ */

static int refuse(mcp_server *srv, int rc, const char *why) {
  mcp_server_set_errmsg(srv, why);
  return rc;
}

/* Opens each writable path (O_PATH) into fds (-1-terminated). */
static int open_paths(mcp_server *srv, const char *const *paths, int **fds) {
  size_t n = 0;
  while (paths && paths[n])
    n++;
  *fds = mcp__calloc(n + 1, sizeof **fds);
  if (*fds == NULL)
    return MCP_ENOMEM;
  for (size_t i = 0; i <= n; i++)
    (*fds)[i] = -1;
  char why[600];
  for (size_t i = 0; i < n; i++) {
    if (paths[i][0] != '/') {
      mcp__fmt(why, sizeof why,
               "mcp_guard_enable: writable path \"%.400s\" is not absolute",
               paths[i]);
      return refuse(srv, MCP_EINVAL, why);
    }
    (*fds)[i] = open(paths[i], O_PATH | O_CLOEXEC);
    if ((*fds)[i] < 0) {
      int err = errno;
      mcp__fmt(why, sizeof why,
               "mcp_guard_enable: writable path \"%.400s\": %s", paths[i],
               strerror(err));
      return refuse(srv, err == ENOENT ? MCP_ENOENT : MCP_EINVAL, why);
    }
  }
  return 0;
}

static void close_paths(int *fds) {
  for (size_t i = 0; fds && fds[i] >= 0; i++)
    close(fds[i]);
  mcp__free(fds);
}

/* A guard with nsets sets of writable paths (not yet opened) and their
 * pools; NULL when out of memory. */
static mcp__guard *guard_new(mcp_server *srv, size_t nsets) {
  mcp__guard *g = mcp__calloc(1, sizeof *g);
  if (g == NULL)
    return NULL;
  g->srv = srv;
  g->stop[0] = g->stop[1] = -1;
  pthread_mutex_init(&g->calls, NULL);
  g->sets = mcp__calloc(nsets, sizeof *g->sets);
  g->pools = mcp__calloc(nsets * MCP__GUARD_SETS, sizeof *g->pools);
  if (g->sets == NULL || g->pools == NULL) {
    guard_free(g);
    return NULL;
  }
  g->nsets = nsets;
  g->npools = nsets * MCP__GUARD_SETS;
  for (size_t i = 0; i < g->npools; i++) {
    pool *p = &g->pools[i];
    p->g = g;
    p->set = &g->sets[i / MCP__GUARD_SETS];
    p->plan.fs = (mcp__guard_fs)(i % MCP__GUARD_SETS / 2);
    p->plan.closed = i % 2 == 1;
    p->listener = -1;
    p->plan.ruleset_fd = -1;
    pthread_mutex_init(&p->lock, NULL);
    pthread_cond_init(&p->cond, NULL);
    pthread_cond_init(&p->spawner_cond, NULL);
  }
  return g;
}

/* Whether pool i takes calls: a tool's own writable paths matter to the
 * rule sets that write (read-only, additive) only; its other calls go to
 * the pools of every tool. */
static bool pool_used(size_t i) {
  return i < MCP__GUARD_SETS || i % MCP__GUARD_SETS >= 2;
}

/* Builds every rule set's plan, to refuse at enable what the kernel
 * refuses; each pool builds its ruleset again when it starts. */
static int build_plans(mcp__guard *g, char *why, size_t size) {
  int rc = 0;
  for (size_t i = 0; i < g->npools && rc == 0; i++) {
    pool *p = &g->pools[i];
    if (!pool_used(i))
      continue;
    rc = mcp__guard_plan_build(&p->plan, &g->kernel, p->plan.fs, p->plan.closed,
                               p->set->fds, g->ports, why, size);
    mcp__guard_plan_free(&p->plan);
  }
  return rc;
}

/* Stops the spawners start_spawners started. */
static void stop_spawners(mcp__guard *g) {
  for (size_t i = 0; i < g->npools; i++) {
    pool *p = &g->pools[i];
    if (!p->has_spawner)
      continue;
    pthread_mutex_lock(&p->lock);
    p->quit = true;
    pthread_cond_broadcast(&p->spawner_cond);
    pthread_mutex_unlock(&p->lock);
    pthread_join(p->spawner, NULL);
    p->has_spawner = false;
  }
}

/* Starts the spawner of each guarded rule set (every set but the first,
 * destructive and open-world) and waits until each has restricted
 * itself. Returns 0, or MCP_ENOMEM or MCP_EIO with why. */
static int start_spawners(mcp__guard *g, char *why, size_t size) {
  int rc = 0;
  for (size_t i = 1; i < g->npools && rc == 0; i++) {
    pool *p = &g->pools[i];
    if (i % MCP__GUARD_SETS == 0 || !pool_used(i))
      continue; /* destructive and open-world: unguarded */
    if (mcp__thread_start(&p->spawner, NULL, spawner, p) != 0) {
      mcp__fmt(why, size, "mcp_guard_enable: no thread for a spawner");
      rc = MCP_ENOMEM;
      break;
    }
    pthread_mutex_lock(&p->lock);
    p->has_spawner = true;
    while (!p->spawner_ready)
      pthread_cond_wait(&p->spawner_cond, &p->lock);
    if (p->spawner_rc) {
      mcp__fmt(why, size, "mcp_guard_enable: %s: %s", p->plan.name,
               p->start_why);
      rc = MCP_EIO;
    }
    pthread_mutex_unlock(&p->lock);
  }
  if (rc)
    stop_spawners(g);
  return rc;
}

/* The writable paths as the supervisor compares them (each one's path as
 * opened), and the log's rate table. Returns 0 or MCP_ENOMEM. */
static int resolve_set(pathset *set) {
  size_t n = 0;
  while (set->fds[n] >= 0)
    n++;
  set->wpaths = mcp__calloc(n + 1, sizeof *set->wpaths);
  if (set->wpaths == NULL)
    return MCP_ENOMEM;
  for (size_t i = 0; i < n; i++) {
    char link[64], path[4096];
    mcp__fmt(link, sizeof link, "/proc/self/fd/%d", set->fds[i]);
    ssize_t len = readlink(link, path, sizeof path - 1);
    path[len > 0 ? len : 0] = '\0';
    if ((set->wpaths[i] = mcp__strdup(path)) == NULL)
      return MCP_ENOMEM;
  }
  return 0;
}

static int resolve_paths(mcp__guard *g) {
  g->rates = mcp__calloc(RATE_TOOLS + 1, sizeof *g->rates);
  int rc = g->rates ? 0 : MCP_ENOMEM;
  for (size_t k = 0; k < g->nsets && rc == 0; k++)
    rc = resolve_set(&g->sets[k]);
  return rc;
}

/* Opens the writable paths of every set: the first, writable_paths; each
 * other, those and its tool's own. Returns 0, or a code with the reason
 * left for mcp_server_errmsg. */
static int open_sets(mcp__guard *g, const mcp_guard_options *opts) {
  int rc = open_paths(g->srv, opts->writable_paths, &g->sets[0].fds);
  size_t nglobal = 0;
  while (opts->writable_paths && opts->writable_paths[nglobal])
    nglobal++;
  for (size_t k = 1; k < g->nsets && rc == 0; k++) {
    const mcp_guard_tool_paths *t = &opts->tool_paths[k - 1];
    size_t nown = 0;
    while (t->writable_paths && t->writable_paths[nown])
      nown++;
    const char **all = mcp__calloc(nglobal + nown + 1, sizeof *all);
    g->sets[k].tool = mcp__strdup(t->tool);
    if (all == NULL || g->sets[k].tool == NULL) {
      mcp__free(all);
      return MCP_ENOMEM;
    }
    for (size_t i = 0; i < nglobal; i++)
      all[i] = opts->writable_paths[i];
    for (size_t i = 0; i < nown; i++)
      all[nglobal + i] = t->writable_paths[i];
    rc = open_paths(g->srv, all, &g->sets[k].fds);
    mcp__free(all);
  }
  return rc;
}

/* A copy of the 0-terminated ports, or NULL for none. */
static int copy_ports(const unsigned short *ports, unsigned short **out) {
  size_t n = 0;
  while (ports && ports[n])
    n++;
  *out = NULL;
  if (n == 0)
    return 0;
  if ((*out = mcp__calloc(n + 1, sizeof **out)) == NULL)
    return MCP_ENOMEM;
  memcpy(*out, ports, n * sizeof **out);
  return 0;
}

int mcp_guard_landlock_abi(void) { return mcp__guard_landlock_abi(); }

int mcp_guard_enable(mcp_server *srv, const mcp_guard_options *opts) {
  static const mcp_guard_options none = {0};
  if (srv == NULL)
    return MCP_EINVAL;
  if (opts == NULL)
    opts = &none;
  if (opts->flags &
      ~(MCP_GUARD_BEST_EFFORT | MCP_GUARD_OBSERVE | MCP_GUARD_QUIET))
    return refuse(srv, MCP_EINVAL,
                  "mcp_guard_enable: unknown bits in flags (only "
                  "MCP_GUARD_BEST_EFFORT, MCP_GUARD_OBSERVE and "
                  "MCP_GUARD_QUIET are defined)");
  if ((opts->flags & MCP_GUARD_OBSERVE) && (opts->flags & MCP_GUARD_QUIET))
    return refuse(srv, MCP_EINVAL,
                  "mcp_guard_enable: MCP_GUARD_OBSERVE reports, "
                  "MCP_GUARD_QUIET does not: choose one");
  if (opts->threads > MAX_THREADS)
    return refuse(srv, MCP_EINVAL,
                  "mcp_guard_enable: threads is at most 64 per rule set");
  size_t ntools = 0;
  while (opts->tool_paths && opts->tool_paths[ntools].tool)
    ntools++;
  mcp__guard *g = guard_new(srv, 1 + ntools);
  if (g == NULL)
    return refuse(srv, MCP_ENOMEM, "mcp_guard_enable: out of memory");
  int rc = open_sets(g, opts);
  if (rc) {
    guard_free(g);
    return rc == MCP_ENOMEM ? refuse(srv, rc, "mcp_guard_enable: out of memory")
                            : rc;
  }
  g->report = !(opts->flags & MCP_GUARD_QUIET);
  g->observe = opts->flags & MCP_GUARD_OBSERVE;
  g->hook = opts->report;
  g->hook_data = opts->report_user_data;
  if ((g->report && resolve_paths(g) != 0) ||
      copy_ports(opts->tcp_ports, &g->ports) != 0) {
    guard_free(g);
    return refuse(srv, MCP_ENOMEM, "mcp_guard_enable: out of memory");
  }
  g->threads = opts->threads ? opts->threads : DEFAULT_THREADS;
  /* The slots exist before any thread that reads them. */
  for (size_t i = 0; i < g->npools; i++)
    if ((g->pools[i].slots = mcp__calloc(g->threads, sizeof(slot))) == NULL) {
      guard_free(g);
      return refuse(srv, MCP_ENOMEM, "mcp_guard_enable: out of memory");
    }
  mcp__guard_kernel *k = &g->kernel;
  k->kernel_abi = mcp__guard_landlock_abi();
  k->abi = k->kernel_abi;
  if (opts->landlock_abi_max && (unsigned)k->abi > opts->landlock_abi_max)
    k->abi = (int)opts->landlock_abi_max;
  k->best_effort = opts->flags & MCP_GUARD_BEST_EFFORT;
  mcp__guard_trial(k);

  char why[600] = "";
  rc = judge(g, g->ports != NULL, why, sizeof why);
  if (rc == 0 && build_plans(g, why, sizeof why) != 0)
    rc = MCP_EIO;
  if (rc == 0)
    rc = start_spawners(g, why, sizeof why);
  if (rc == 0 && (rc = start_supervisor(g, why, sizeof why)) != 0)
    stop_spawners(g);
  if (rc == 0) {
    mcp_executor ex = {.submit = submit, .release = release, .user_data = g};
    rc = mcp_server_set_executor(srv, &ex);
    if (rc) {
      mcp__fmt(why, sizeof why, "%s", mcp_server_errmsg(srv));
      stop_spawners(g);
      stop_supervisor(g);
    }
  }
  if (rc) {
    guard_free(g);
    if (why[0] == '\0')
      mcp__fmt(why, sizeof why, "mcp_guard_enable: %s", mcp_strerror(rc));
    return refuse(srv, rc, why);
  }
  mcp_server_log(srv, g->level ? MCP_LOG_WARNING : MCP_LOG_INFO, g->sentence);
  return 0;
}
