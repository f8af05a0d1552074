/* observe.c: the supervisor thread of an observed server. It only ever
 * lets a system call go on (SECCOMP_USER_NOTIF_FLAG_CONTINUE): observation
 * must not change what the server does, only see it. */
#define _GNU_SOURCE
#include "observe.h"

#include "digest.h"

#ifdef MCPC_HAVE_EFFECTS
#include "effects.h"
#endif

#include <errno.h>
#include <fcntl.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* The most effects one run records; the rest are counted, not kept. */
#define MAX_EFFECTS 10000

struct mcpc_observer {
  int listener, wake[2];
  pthread_t thread;
  pthread_mutex_t lock;
  pthread_cond_t settled;
  int call;             /* the call effects are attributed to */
  int want_call;        /* the call set_call asked for */
  unsigned asked, done; /* set_call requests and those settled */
  int stop;
  mcpc_effect *effects;
  size_t n, cap, dropped;
};

const char *const mcpc_observe_limits[] = {
    "sees: every thread and child process of the server (the filter is "
    "inherited and kept across exec): files opened for writing, created, "
    "removed, renamed, linked, truncated, or whose mode, owner, times or "
    "attributes change; sockets other than unix ones; connect, bind, listen, "
    "and sends with an address",
    "cannot see: io_uring operations (they bypass system-call filters), "
    "writes through descriptors opened before the call (only opens are "
    "seen; a file's bytes are compared before and after for files the call "
    "opened for writing), writes through shared memory maps",
    "cannot see: what other processes the server talks to do for it (a "
    "database, a daemon over a unix socket), nor whether a connection "
    "succeeded",
    "does not count: opening a character device (a terminal, /dev/null) "
    "for writing",
    NULL};

int mcpc_observe_watch(char *why, size_t size) {
#ifdef MCPC_HAVE_EFFECTS
  return mcp__effects_watch_self(why, size);
#else
  snprintf(why, size,
           "this mcp-check was built without libmcp's guard "
           "(Linux, libseccomp): --observe is not available");
  return -1;
#endif
}

#ifdef MCPC_HAVE_EFFECTS
/* Which file's bytes an effect may change, taken before it happens. */
static const char *digest_target(const mcpc_effect *e) {
  if (strcmp(e->op, "write") == 0 || strcmp(e->op, "create") == 0 ||
      strcmp(e->op, "truncate") == 0 || strcmp(e->op, "remove") == 0)
    return e->target;
  if (strcmp(e->op, "rename") == 0 || strcmp(e->op, "link") == 0)
    return e->target2;
  return NULL;
}

static void before(mcpc_effect *e) {
  const char *path = digest_target(e);
  struct stat st;
  if (path == NULL || path[0] != '/' || lstat(path, &st) < 0)
    return;
  e->existed =
      S_ISREG(st.st_mode) || S_ISDIR(st.st_mode) || S_ISLNK(st.st_mode);
  e->size = st.st_size;
  if (S_ISREG(st.st_mode) &&
      mcpc_digest_file(path, -1, e->digest, &e->size) == 0)
    e->digested = 1;
}

/* The supervisor's answer to each effect: record it, let it happen. */
static int on_effect(const mcp__effect *raw, const struct seccomp_notif *n,
                     void *user_data) {
  mcpc_observer *o = user_data;
  mcpc_effect e;
  struct stat st;
  (void)n;
  /* Opening a terminal or /dev/null for writing changes no file: a tool
   * that sends a child's output there is not judged for it. */
  if ((raw->op == MCP__EFFECT_WRITE || raw->op == MCP__EFFECT_TRUNCATE ||
       raw->op == MCP__EFFECT_CREATE) &&
      stat(raw->target, &st) == 0 && S_ISCHR(st.st_mode))
    return MCP__EFFECT_CONTINUE;
  memset(&e, 0, sizeof e);
  snprintf(e.op, sizeof e.op, "%s", mcp__effect_op_name(raw->op));
  snprintf(e.syscall, sizeof e.syscall, "%s", raw->call);
  snprintf(e.target, sizeof e.target, "%s", raw->target);
  snprintf(e.target2, sizeof e.target2, "%s", raw->target2);
  e.flags = raw->flags;
  e.tid = raw->tid;
  before(&e);
  pthread_mutex_lock(&o->lock);
  e.call = o->call;
  if (o->n == o->cap && o->cap < MAX_EFFECTS) {
    size_t cap = o->cap ? o->cap * 2 : 64;
    mcpc_effect *grown = realloc(o->effects, cap * sizeof *grown);
    if (grown) {
      o->effects = grown;
      o->cap = cap;
    }
  }
  if (o->n < o->cap)
    o->effects[o->n++] = e;
  else
    o->dropped++;
  pthread_mutex_unlock(&o->lock);
  return MCP__EFFECT_CONTINUE;
}

/* Serves one notification. -1 when the listener is gone (the server and
 * all its processes ended). */
static int serve_one(mcpc_observer *o) {
  return mcp__effects_receive(o->listener, on_effect, o) < 0 ? -1 : 0;
}
#else
static int serve_one(mcpc_observer *o) {
  (void)o;
  return -1;
}
#endif

/* Serves whatever is pending now, without waiting. */
static void drain(mcpc_observer *o) {
  for (int i = 0; i < 100000; i++) {
    struct pollfd p = {.fd = o->listener, .events = POLLIN};
    if (poll(&p, 1, 0) <= 0 || !(p.revents & POLLIN) || serve_one(o) < 0)
      return;
  }
}

static void *run(void *arg) {
  mcpc_observer *o = arg;
  int gone = 0;
  for (;;) {
    struct pollfd p[2] = {{.fd = o->listener, .events = POLLIN},
                          {.fd = o->wake[0], .events = POLLIN}};
    char byte;
    int stop;
    if (poll(p, gone ? 1 : 2, 100) > 0) {
      if (!gone && (p[0].revents & POLLIN) && serve_one(o) < 0)
        gone = 1;
      if (!gone && (p[0].revents & (POLLHUP | POLLERR)))
        gone = 1;
      if (p[1].revents & POLLIN) {
        ssize_t r = read(o->wake[0], &byte, 1);
        (void)r;
      }
    }
    if (!gone)
      drain(o);
    pthread_mutex_lock(&o->lock);
    if (o->asked != o->done) {
      o->call = o->want_call;
      o->done = o->asked;
      pthread_cond_broadcast(&o->settled);
    }
    stop = o->stop;
    pthread_mutex_unlock(&o->lock);
    if (stop)
      return NULL;
  }
}

mcpc_observer *mcpc_observer_start(int listener, char *why, size_t size) {
  mcpc_observer *o = calloc(1, sizeof *o);
  if (o == NULL || pipe2(o->wake, O_CLOEXEC | O_NONBLOCK) < 0) {
    snprintf(why, size, "cannot start observing: %s", strerror(errno));
    free(o);
    close(listener);
    return NULL;
  }
  o->listener = listener;
  o->call = o->want_call = -1;
  pthread_mutex_init(&o->lock, NULL);
  pthread_cond_init(&o->settled, NULL);
  if (pthread_create(&o->thread, NULL, run, o) != 0) {
    snprintf(why, size, "cannot start the observing thread");
    close(o->wake[0]);
    close(o->wake[1]);
    close(listener);
    free(o);
    return NULL;
  }
  return o;
}

void mcpc_observer_set_call(mcpc_observer *o, int call) {
  struct timespec until;
  ssize_t w;
  if (o == NULL)
    return;
  pthread_mutex_lock(&o->lock);
  o->want_call = call;
  o->asked++;
  pthread_mutex_unlock(&o->lock);
  w = write(o->wake[1], "w", 1);
  (void)w;
  clock_gettime(CLOCK_REALTIME, &until);
  until.tv_sec += 5;
  pthread_mutex_lock(&o->lock);
  while (o->done != o->asked &&
         pthread_cond_timedwait(&o->settled, &o->lock, &until) == 0)
    ;
  /* Should the thread be stuck (it never is for long: it only digests
   * files), the call still changes; its effects then land late. */
  o->call = call;
  pthread_mutex_unlock(&o->lock);
}

size_t mcpc_observer_count(mcpc_observer *o) {
  size_t n;
  if (o == NULL)
    return 0;
  pthread_mutex_lock(&o->lock);
  n = o->n;
  pthread_mutex_unlock(&o->lock);
  return n;
}

void mcpc_observer_get(mcpc_observer *o, size_t i, mcpc_effect *out) {
  pthread_mutex_lock(&o->lock);
  if (i < o->n)
    *out = o->effects[i];
  pthread_mutex_unlock(&o->lock);
}

void mcpc_observer_stop(mcpc_observer *o) {
  ssize_t w;
  if (o == NULL)
    return;
  pthread_mutex_lock(&o->lock);
  o->stop = 1;
  pthread_mutex_unlock(&o->lock);
  w = write(o->wake[1], "s", 1);
  (void)w;
  pthread_join(o->thread, NULL);
  close(o->listener);
  close(o->wake[0]);
  close(o->wake[1]);
  pthread_mutex_destroy(&o->lock);
  pthread_cond_destroy(&o->settled);
  free(o->effects);
  free(o);
}
