/* The guard: an executor (mcp_server_set_executor) that runs each tool on
 * worker threads restricted by the rule set of its stated hints. One pool
 * per rule set, started by the first call that needs it; the workers
 * restrict themselves before they take a call, and a pool whose workers
 * could not be restricted takes none. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base.h"

#include "guard_int.h"

#define DEFAULT_THREADS 2u
#define MAX_THREADS 64u
/* How long an idle worker watches its queue before it sleeps: a call that
 * comes meanwhile costs no wake-up (measured here, waking a sleeping
 * thread on the other core cost up to 40 µs, more than the call). */
#define SPIN_NS 50000L

typedef struct mcp__guard mcp__guard;

typedef struct pool {
  mcp__guard *g;
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
  int *fds;              /* writable_paths, opened O_PATH; -1-terminated */
  unsigned short *ports; /* tcp_ports; 0-terminated, or NULL */
  bool free_on_exit;
  pool pools[MCP__GUARD_SETS];
};

static void close_paths(int *fds);

static void guard_free(mcp__guard *g) {
  close_paths(g->fds);
  mcp__free(g->ports);
  for (int i = 0; i < MCP__GUARD_SETS; i++) {
    pool *p = &g->pools[i];
    mcp__guard_plan_free(&p->plan);
    pthread_cond_destroy(&p->cond);
    pthread_cond_destroy(&p->spawner_cond);
    pthread_mutex_destroy(&p->lock);
    mcp__free(p->ring);
    mcp__free(p->threads);
  }
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

/* A worker of a guarded rule set was started by its pool's spawner and
 * holds its restrictions from birth: it has nothing to apply. */
static void *worker(void *arg) {
  pool *p = arg;
  bool spins = may_spin();
  pthread_mutex_lock(&p->lock);
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
    mcp_call_execute(call, p->plan.name);
    pthread_mutex_lock(&p->lock);
  }
  pthread_mutex_unlock(&p->lock);
  /* The release ran on this thread (it finished the server's last call):
   * every other worker is joined, and the guard is this thread's to free.
   * Only this thread wrote these, so reading them here is no race. */
  mcp__guard *g = p->g;
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

int mcp__guard_thread(pthread_t *t, void *(*fn)(void *), void *arg) {
  static const int faults[] = {SIGSEGV, SIGBUS,  SIGFPE,
                               SIGILL,  SIGTRAP, SIGSYS};
  sigset_t all, old;
  sigfillset(&all);
  for (size_t i = 0; i < sizeof faults / sizeof *faults; i++)
    sigdelset(&all, faults[i]);
  pthread_sigmask(SIG_BLOCK, &all, &old);
  int err = pthread_create(t, NULL, fn, arg);
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  return err;
}

/* Starts up to g->threads workers of p into p->threads; returns how many. */
static unsigned create_workers(pool *p) {
  unsigned n = 0;
  while (n < p->g->threads && mcp__guard_thread(&p->threads[n], worker, p) == 0)
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
                            g->fds, g->ports, why, sizeof why);
  if (rc == 0)
    rc = mcp__guard_apply(&p->plan, why, sizeof why);
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

/* ---- the executor -------------------------------------------------------- */

static int rule_set(const mcp_call *call) {
  mcp_tool_annotations h = mcp_call_hints(call);
  mcp__guard_fs fs = h.read_only == MCP_HINT_TRUE      ? MCP__GUARD_FS_READ_ONLY
                     : h.destructive == MCP_HINT_FALSE ? MCP__GUARD_FS_ADDITIVE
                                                       : MCP__GUARD_FS_ANY;
  return (int)fs * 2 + (h.open_world == MCP_HINT_FALSE);
}

static int submit(mcp_call *call, void *user_data) {
  mcp__guard *g = user_data;
  /* Prompts and resources state no hints: they run where they would. */
  if (mcp_call_kind_of(call) != MCP_CALL_TOOL)
    return MCP_EXECUTE_HERE;
  pool *p = &g->pools[rule_set(call)];
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
  for (int i = 0; i < MCP__GUARD_SETS; i++) {
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

static mcp__guard *guard_new(mcp_server *srv) {
  mcp__guard *g = mcp__calloc(1, sizeof *g);
  if (g == NULL)
    return NULL;
  g->srv = srv;
  for (int i = 0; i < MCP__GUARD_SETS; i++) {
    pool *p = &g->pools[i];
    p->g = g;
    p->plan.ruleset_fd = -1;
    pthread_mutex_init(&p->lock, NULL);
    pthread_cond_init(&p->cond, NULL);
    pthread_cond_init(&p->spawner_cond, NULL);
  }
  return g;
}

/* Builds every rule set's plan, to refuse at enable what the kernel
 * refuses; each pool builds its ruleset again when it starts. */
static int build_plans(mcp__guard *g, char *why, size_t size) {
  int rc = 0;
  for (int i = 0; i < MCP__GUARD_SETS && rc == 0; i++) {
    rc = mcp__guard_plan_build(&g->pools[i].plan, &g->kernel,
                               (mcp__guard_fs)(i / 2), i % 2 == 1, g->fds,
                               g->ports, why, size);
    mcp__guard_plan_free(&g->pools[i].plan);
  }
  return rc;
}

/* Stops the spawners start_spawners started. */
static void stop_spawners(mcp__guard *g) {
  for (int i = 0; i < MCP__GUARD_SETS; i++) {
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
  for (int i = 1; i < MCP__GUARD_SETS && rc == 0; i++) {
    pool *p = &g->pools[i];
    if (mcp__guard_thread(&p->spawner, spawner, p) != 0) {
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
  if (opts->flags & ~MCP_GUARD_BEST_EFFORT)
    return refuse(srv, MCP_EINVAL,
                  "mcp_guard_enable: unknown bits in flags (only "
                  "MCP_GUARD_BEST_EFFORT is defined)");
  if (opts->threads > MAX_THREADS)
    return refuse(srv, MCP_EINVAL,
                  "mcp_guard_enable: threads is at most 64 per rule set");
  int *fds = NULL;
  int rc = open_paths(srv, opts->writable_paths, &fds);
  if (rc) {
    close_paths(fds);
    return rc == MCP_ENOMEM ? refuse(srv, rc, "mcp_guard_enable: out of memory")
                            : rc;
  }
  mcp__guard *g = guard_new(srv);
  if (g == NULL) {
    close_paths(fds);
    return refuse(srv, MCP_ENOMEM, "mcp_guard_enable: out of memory");
  }
  g->fds = fds;
  if (copy_ports(opts->tcp_ports, &g->ports) != 0) {
    guard_free(g);
    return refuse(srv, MCP_ENOMEM, "mcp_guard_enable: out of memory");
  }
  g->threads = opts->threads ? opts->threads : DEFAULT_THREADS;
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
  if (rc == 0) {
    mcp_executor ex = {.submit = submit, .release = release, .user_data = g};
    rc = mcp_server_set_executor(srv, &ex);
    if (rc) {
      mcp__fmt(why, sizeof why, "%s", mcp_server_errmsg(srv));
      stop_spawners(g);
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
