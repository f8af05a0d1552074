/* port_daemon: a small daemon of the kind many C shops already run. Worker
 * threads try a TCP connection to each configured port on this machine
 * (127.0.0.1 only) every interval, and it logs when a port goes up or down.
 *
 *   port_daemon -c FILE
 *
 * FILE holds one setting per line ('#' starts a comment):
 *   interval_ms 2000   how often each port is checked; 100..3600000
 *   timeout_ms 500     how long a connection may take; 10..60000
 *   workers 2          checker threads; 1..8 (read at start only)
 *   port NAME PORT     a port to watch, up to 32; NAME is [A-Za-z0-9_-]
 *
 * SIGHUP re-reads FILE; SIGINT and SIGTERM stop the daemon. Signals reach
 * the main loop through a self-pipe, so a handler does nothing but write. */
#define _POSIX_C_SOURCE 200809L
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MAX_PORTS 32
#define MAX_WORKERS 8
#define QUEUE_SIZE 64

typedef enum port_state { PORT_UNKNOWN, PORT_UP, PORT_DOWN } port_state;

typedef struct target {
  char name[32];
  unsigned port;
  port_state state;
  long latency_us; /* of the last connection that succeeded */
} target;

typedef struct config {
  unsigned interval_ms, timeout_ms, workers;
  target targets[MAX_PORTS];
  size_t n;
} config;

/* One check for a worker to make. */
typedef struct job {
  size_t slot;   /* the target's index when the job was queued */
  unsigned port; /* and its port, in case a reload moved it */
} job;

typedef struct daemon_state {
  const char *config_path;
  pthread_mutex_t lock; /* guards cfg, the queue and stopping */
  pthread_cond_t wake;  /* a job was queued, or stopping was set */
  config cfg;
  job queue[QUEUE_SIZE];
  size_t head, count;
  bool stopping;
  pthread_t workers[MAX_WORKERS];
  unsigned nworkers;
} daemon_state;

static int signal_pipe[2] = {-1, -1};

static void on_signal(int sig) {
  int saved = errno;
  unsigned char c = (unsigned char)sig;
  (void)!write(signal_pipe[1], &c, 1);
  errno = saved;
}

static long long now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (long long)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static const char *state_name(port_state s) {
  return s == PORT_UP ? "up" : s == PORT_DOWN ? "down" : "unknown";
}

/* ---- configuration ------------------------------------------------------ */

static bool number(const char *s, unsigned lo, unsigned hi, unsigned *out) {
  char *end;
  errno = 0;
  unsigned long v = strtoul(s, &end, 10);
  if (errno || end == s || *end || v < lo || v > hi)
    return false;
  *out = (unsigned)v;
  return true;
}

static bool valid_name(const char *s) {
  size_t n = strlen(s);
  if (n == 0 || n >= sizeof(((target *)0)->name))
    return false;
  return strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                   "0123456789_-") == n;
}

/* Reads path into *cfg. Returns 0, or -1 with a sentence in err. */
static int config_read(const char *path, config *cfg, char *err,
                       size_t err_size) {
  FILE *f = fopen(path, "r");
  if (f == NULL) {
    snprintf(err, err_size, "%s: %s", path, strerror(errno));
    return -1;
  }
  *cfg = (config){.interval_ms = 2000, .timeout_ms = 500, .workers = 2};
  char line[256];
  unsigned lineno = 0;
  const char *bad = NULL;
  while (bad == NULL && fgets(line, sizeof line, f)) {
    lineno++;
    line[strcspn(line, "#\r\n")] = '\0';
    char *word[4], *rest = NULL;
    size_t n = 0;
    for (char *w = strtok_r(line, " \t", &rest); w && n < 4;
         w = strtok_r(NULL, " \t", &rest))
      word[n++] = w;
    if (n == 0)
      continue;
    if (strcmp(word[0], "interval_ms") == 0 && n == 2) {
      if (!number(word[1], 100, 3600000, &cfg->interval_ms))
        bad = "interval_ms wants 100..3600000";
    } else if (strcmp(word[0], "timeout_ms") == 0 && n == 2) {
      if (!number(word[1], 10, 60000, &cfg->timeout_ms))
        bad = "timeout_ms wants 10..60000";
    } else if (strcmp(word[0], "workers") == 0 && n == 2) {
      if (!number(word[1], 1, MAX_WORKERS, &cfg->workers))
        bad = "workers wants 1..8";
    } else if (strcmp(word[0], "port") == 0 && n == 3) {
      target *t = &cfg->targets[cfg->n];
      if (cfg->n == MAX_PORTS)
        bad = "at most 32 ports";
      else if (!valid_name(word[1]))
        bad = "a port's name is 1-31 characters of [A-Za-z0-9_-]";
      else if (!number(word[2], 1, 65535, &t->port))
        bad = "a port is 1..65535";
      else {
        snprintf(t->name, sizeof t->name, "%s", word[1]);
        cfg->n++;
      }
    } else {
      bad = "unknown setting";
    }
  }
  fclose(f);
  if (bad) {
    snprintf(err, err_size, "%s:%u: %s", path, lineno, bad);
    return -1;
  }
  return 0;
}

/* Re-reads the configuration file; ports that stay keep their state. */
static int reload(daemon_state *d, char *err, size_t err_size) {
  config next;
  if (config_read(d->config_path, &next, err, err_size) != 0)
    return -1;
  pthread_mutex_lock(&d->lock);
  for (size_t i = 0; i < next.n; i++) {
    for (size_t j = 0; j < d->cfg.n; j++) {
      const target *old = &d->cfg.targets[j];
      if (strcmp(old->name, next.targets[i].name) == 0 &&
          old->port == next.targets[i].port)
        next.targets[i] = *old;
    }
  }
  next.workers = d->cfg.workers; /* the threads stay as they are */
  d->cfg = next;
  pthread_mutex_unlock(&d->lock);
  snprintf(err, err_size, "re-read %s: %zu ports", d->config_path, next.n);
  return 0;
}

/* ---- the workers -------------------------------------------------------- */

/* Tries a TCP connection to 127.0.0.1:port for at most timeout_ms. */
static port_state check(unsigned port, unsigned timeout_ms, long *latency_us) {
  struct sockaddr_in sa = {.sin_family = AF_INET,
                           .sin_port = htons((uint16_t)port)};
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0)
    return PORT_DOWN;
  long long start = now_us();
  int rc = connect(fd, (struct sockaddr *)&sa, sizeof sa);
  if (rc != 0 && errno == EINPROGRESS) {
    struct pollfd p = {.fd = fd, .events = POLLOUT};
    int soerr = -1;
    socklen_t len = sizeof soerr;
    if (poll(&p, 1, (int)timeout_ms) == 1)
      getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &len);
    rc = soerr == 0 ? 0 : -1;
  }
  close(fd);
  *latency_us = (long)(now_us() - start);
  return rc == 0 ? PORT_UP : PORT_DOWN;
}

/* Queues a check; false when the queue is full. Called with the lock. */
static bool enqueue(daemon_state *d, job j) {
  if (d->count == QUEUE_SIZE)
    return false;
  d->queue[(d->head + d->count++) % QUEUE_SIZE] = j;
  pthread_cond_signal(&d->wake);
  return true;
}

/* Stores what a check found and logs a change. Called with the lock. */
static void record(daemon_state *d, const job *j, port_state s, long latency) {
  if (j->slot >= d->cfg.n || d->cfg.targets[j->slot].port != j->port)
    return; /* a reload removed or moved the port meanwhile */
  target *t = &d->cfg.targets[j->slot];
  if (t->state != s)
    fprintf(stderr, "port_daemon: %s (127.0.0.1:%u) is %s\n", t->name, t->port,
            state_name(s));
  t->state = s;
  if (s == PORT_UP)
    t->latency_us = latency;
}

static void *worker_main(void *arg) {
  daemon_state *d = arg;
  pthread_mutex_lock(&d->lock);
  for (;;) {
    while (d->count == 0 && !d->stopping)
      pthread_cond_wait(&d->wake, &d->lock);
    if (d->stopping)
      break;
    job j = d->queue[d->head];
    d->head = (d->head + 1) % QUEUE_SIZE;
    d->count--;
    unsigned timeout_ms = d->cfg.timeout_ms;
    pthread_mutex_unlock(&d->lock);
    long latency = 0;
    port_state s = check(j.port, timeout_ms, &latency);
    pthread_mutex_lock(&d->lock);
    record(d, &j, s, latency);
  }
  pthread_mutex_unlock(&d->lock);
  return NULL;
}

static void stop_workers(daemon_state *d) {
  pthread_mutex_lock(&d->lock);
  d->stopping = true;
  pthread_cond_broadcast(&d->wake);
  pthread_mutex_unlock(&d->lock);
  for (unsigned i = 0; i < d->nworkers; i++)
    pthread_join(d->workers[i], NULL);
}

/* ---- the main loop ------------------------------------------------------ */

static void queue_round(daemon_state *d) {
  pthread_mutex_lock(&d->lock);
  for (size_t i = 0; i < d->cfg.n; i++)
    if (!enqueue(d, (job){.slot = i, .port = d->cfg.targets[i].port}))
      break; /* the workers are behind; the next round catches up */
  pthread_mutex_unlock(&d->lock);
}

static void run(daemon_state *d) {
  long long next_round = now_us();
  for (bool running = true; running;) {
    long long wait_ms = (next_round - now_us()) / 1000;
    struct pollfd fds[] = {{.fd = signal_pipe[0], .events = POLLIN}};
    if (poll(fds, 1, wait_ms < 0 ? 0 : (int)wait_ms) < 0 && errno != EINTR)
      break;
    unsigned char sig;
    while (read(signal_pipe[0], &sig, 1) == 1) {
      if (sig == SIGHUP) {
        char msg[300];
        int rc = reload(d, msg, sizeof msg);
        fprintf(stderr, "port_daemon: %s%s\n", msg,
                rc ? "; the old settings stay" : "");
      } else {
        running = false;
      }
    }
    if (now_us() >= next_round) {
      queue_round(d);
      pthread_mutex_lock(&d->lock);
      next_round = now_us() + (long long)d->cfg.interval_ms * 1000;
      pthread_mutex_unlock(&d->lock);
    }
  }
}

int main(int argc, char **argv) {
  if (argc != 3 || strcmp(argv[1], "-c") != 0) {
    fprintf(stderr, "usage: port_daemon -c FILE\n");
    return 2;
  }
  daemon_state d = {.config_path = argv[2]};
  char err[300];
  if (config_read(d.config_path, &d.cfg, err, sizeof err) != 0) {
    fprintf(stderr, "port_daemon: %s\n", err);
    return 1;
  }
  if (pipe(signal_pipe) != 0)
    return 1;
  for (int i = 0; i < 2; i++)
    fcntl(signal_pipe[i], F_SETFL, O_NONBLOCK);
  struct sigaction sa = {.sa_handler = on_signal};
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);
  sigaction(SIGHUP, &sa, NULL);

  pthread_mutex_init(&d.lock, NULL);
  pthread_cond_init(&d.wake, NULL);
  for (; d.nworkers < d.cfg.workers; d.nworkers++)
    if (pthread_create(&d.workers[d.nworkers], NULL, worker_main, &d) != 0)
      break;
  fprintf(stderr, "port_daemon: watching %zu ports with %u workers\n", d.cfg.n,
          d.nworkers);

  run(&d);

  stop_workers(&d);
  pthread_cond_destroy(&d.wake);
  pthread_mutex_destroy(&d.lock);
  close(signal_pipe[0]);
  close(signal_pipe[1]);
  fprintf(stderr, "port_daemon: stopped\n");
  return 0;
}
