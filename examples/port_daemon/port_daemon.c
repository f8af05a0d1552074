/* port_daemon: a small daemon of the kind many C shops already run. Worker
 * threads try a TCP connection to each configured port on this machine
 * (127.0.0.1 only) every interval, and it logs when a port goes up or down.
 * With mcp_listen set, it also serves MCP over HTTP from its own poll()
 * loop: list_ports reads the table, check_port has a worker check a port
 * now, reload_config re-reads FILE.
 *
 *   port_daemon -c FILE
 *
 * FILE holds one setting per line ('#' starts a comment):
 *   interval_ms 2000   how often each port is checked; 100..3600000
 *   timeout_ms 500     how long a connection may take; 10..60000
 *   workers 2          checker threads; 1..8 (read at start only)
 *   port NAME PORT     a port to watch, up to 32; NAME is [A-Za-z0-9_-]
 *   mcp_listen 127.0.0.1:8080   serve MCP at http://ADDR:PORT/mcp (port 0
 *                      picks a free one); unset = no MCP (read at start)
 *   mcp_scopes ports:read ports:admin   what MCP callers may do; default
 *                      ports:read (read at start)
 *
 * SIGHUP re-reads FILE; SIGINT and SIGTERM stop the daemon. Signals reach
 * the main loop through a self-pipe, so a handler does nothing but write. */
#define _POSIX_C_SOURCE 200809L
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <mcp/http.h>
#include <mcp/mcp.h>
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
  char mcp_listen[64]; /* ADDR:PORT; empty = no MCP endpoint */
  char mcp_scopes[256];
} config;

/* One check for a worker to make. */
typedef struct job {
  size_t slot;    /* the target's index when the job was queued */
  unsigned port;  /* and its port, in case a reload moved it */
  mcp_call *call; /* check_port's call, finished by the worker; or NULL */
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
  mcp_server *srv; /* NULL without mcp_listen */
  mcp_http *http;
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
  *cfg = (config){.interval_ms = 2000,
                  .timeout_ms = 500,
                  .workers = 2,
                  .mcp_scopes = "ports:read"};
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
    if (strcmp(word[0], "mcp_scopes") == 0) {
      cfg->mcp_scopes[0] = '\0';
      for (size_t i = 1; i < n; i++) /* up to three scopes */
        snprintf(cfg->mcp_scopes + strlen(cfg->mcp_scopes),
                 sizeof cfg->mcp_scopes - strlen(cfg->mcp_scopes), "%s%s",
                 i > 1 ? " " : "", word[i]);
      continue;
    }
    if (strcmp(word[0], "interval_ms") == 0 && n == 2) {
      if (!number(word[1], 100, 3600000, &cfg->interval_ms))
        bad = "interval_ms wants 100..3600000";
    } else if (strcmp(word[0], "timeout_ms") == 0 && n == 2) {
      if (!number(word[1], 10, 60000, &cfg->timeout_ms))
        bad = "timeout_ms wants 10..60000";
    } else if (strcmp(word[0], "workers") == 0 && n == 2) {
      if (!number(word[1], 1, MAX_WORKERS, &cfg->workers))
        bad = "workers wants 1..8";
    } else if (strcmp(word[0], "mcp_listen") == 0 && n == 2) {
      if (strlen(word[1]) >= sizeof cfg->mcp_listen)
        bad = "mcp_listen wants ADDR:PORT";
      else
        strcpy(cfg->mcp_listen, word[1]);
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
  next.workers = d->cfg.workers;              /* the threads stay as they are */
  strcpy(next.mcp_listen, d->cfg.mcp_listen); /* and so does the endpoint */
  strcpy(next.mcp_scopes, d->cfg.mcp_scopes);
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

/* Finishes a check_port call with what the check found (any thread). */
static void answer_check(mcp_call *call, port_state s, long latency) {
  char text[64];
  if (s == PORT_UP)
    snprintf(text, sizeof text, "up (connected in %ld us)", latency);
  else
    snprintf(text, sizeof text, "down (no connection)");
  mcp_result_text(call, text);
  mcp_call_finish(call, 0);
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
    if (j.call) /* before taking the lock: finishing sends the reply */
      answer_check(j.call, s, latency);
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
  /* Checks still queued were asked for by clients that are gone now. */
  for (; d->count > 0; d->count--, d->head = (d->head + 1) % QUEUE_SIZE)
    if (d->queue[d->head].call)
      mcp_call_finish(d->queue[d->head].call, MCP_ECANCELED);
}

/* ---- the MCP endpoint --------------------------------------------------- */

static int list_ports(mcp_call *call, void *user_data) {
  daemon_state *d = user_data;
  char json[MAX_PORTS * 112 + 16] = "{\"ports\":[";
  size_t len = strlen(json);
  pthread_mutex_lock(&d->lock); /* names are [A-Za-z0-9_-]: no escaping */
  for (size_t i = 0; i < d->cfg.n; i++) {
    const target *t = &d->cfg.targets[i];
    len += (size_t)snprintf(json + len, sizeof json - len,
                            "%s{\"name\":\"%s\",\"port\":%u,\"state\":\"%s\","
                            "\"latency_us\":%ld}",
                            i ? "," : "", t->name, t->port,
                            state_name(t->state), t->latency_us);
  }
  pthread_mutex_unlock(&d->lock);
  snprintf(json + len, sizeof json - len, "]}");
  return mcp_result_structured(call, json);
}

/* Hands the check to a worker and returns at once: the loop that serves
 * HTTP never waits for a connection. The worker finishes the call. */
static int check_port(mcp_call *call, void *user_data) {
  daemon_state *d = user_data;
  const char *name;
  mcp_call_arg_string(call, "name", &name); /* required by the schema */
  pthread_mutex_lock(&d->lock);
  size_t i = 0;
  while (i < d->cfg.n && strcmp(d->cfg.targets[i].name, name) != 0)
    i++;
  bool known = i < d->cfg.n;
  bool queued =
      known &&
      enqueue(d,
              (job){.slot = i, .port = d->cfg.targets[i].port, .call = call});
  pthread_mutex_unlock(&d->lock);
  if (!known)
    return mcp_result_error(call, "No port has that name; list_ports shows "
                                  "the names.");
  if (!queued)
    return mcp_result_error(call, "Too many checks are waiting; try again.");
  return MCP_DEFERRED;
}

static int reload_config(mcp_call *call, void *user_data) {
  char msg[300];
  if (reload(user_data, msg, sizeof msg) != 0)
    return mcp_result_error(call, msg); /* e.g. "FILE:3: unknown setting" */
  fprintf(stderr, "port_daemon: %s (asked over MCP)\n", msg);
  return mcp_result_text(call, msg);
}

static const char *const read_scope[] = {"ports:read", NULL};
static const char *const admin_scope[] = {"ports:admin", NULL};

static const mcp_tool tools[] = {
    {
        .name = "list_ports",
        .title = "List watched ports",
        .description = "Lists each watched port on 127.0.0.1 with its last "
                       "state (up, down or unknown) and connection time.",
        .output_schema =
            "{\"type\":\"object\",\"properties\":{\"ports\":{\"type\":"
            "\"array\"}},\"required\":[\"ports\"]}",
        .scopes = read_scope,
        /* Reads the daemon's table; touches nothing outside it. */
        .annotations = {.read_only = MCP_HINT_TRUE,
                        .open_world = MCP_HINT_FALSE},
        .handler = list_ports,
    },
    {
        .name = "check_port",
        .title = "Check a port now",
        .description = "Tries a TCP connection to one watched port now and "
                       "says whether it is up.",
        .input_schema =
            "{\"type\":\"object\",\"properties\":{\"name\":{\"type\":"
            "\"string\",\"description\":\"The port's name, as list_ports "
            "shows it.\"}},\"required\":[\"name\"],"
            "\"additionalProperties\":false}",
        .scopes = read_scope,
        /* Opens and closes one connection: it observes, changes nothing,
         * and only ever reaches the configured ports on 127.0.0.1. */
        .annotations = {.read_only = MCP_HINT_TRUE,
                        .open_world = MCP_HINT_FALSE},
        .handler = check_port,
    },
    {
        .name = "reload_config",
        .title = "Re-read the configuration",
        .description = "Re-reads the daemon's configuration file, as SIGHUP "
                       "does. Ports no longer listed are forgotten.",
        .scopes = admin_scope,
        /* Forgets the state of removed ports: destructive. Reading the same
         * file twice ends in the same place: idempotent. */
        .annotations = {.read_only = MCP_HINT_FALSE,
                        .destructive = MCP_HINT_TRUE,
                        .idempotent = MCP_HINT_TRUE,
                        .open_world = MCP_HINT_FALSE},
        .handler = reload_config,
    },
};

/* Serves MCP at http://ADDR:PORT/mcp from the main loop (external_loop: no
 * thread of its own). Callers get the scopes of mcp_scopes; the endpoint
 * binds loopback only unless told otherwise, and checks Host and Origin. */
static int start_mcp(daemon_state *d) {
  char spec[64], *colon, *end = NULL;
  strcpy(spec, d->cfg.mcp_listen);
  colon = strrchr(spec, ':');
  unsigned long port = colon ? strtoul(colon + 1, &end, 10) : 0;
  if (colon == NULL || end == colon + 1 || *end || port > 65535) {
    fprintf(stderr, "port_daemon: mcp_listen wants ADDR:PORT\n");
    return -1;
  }
  *colon = '\0';
  const mcp_server_info info = {
      .name = "port_daemon", .version = mcp_version(), .title = "Port watcher"};
  if (mcp_server_new(&info, &d->srv) != 0)
    return -1;
  for (size_t i = 0; i < sizeof tools / sizeof tools[0]; i++) {
    if (mcp_server_add_tool(d->srv, &tools[i], d) != 0) {
      fprintf(stderr, "port_daemon: %s\n", mcp_server_errmsg(d->srv));
      return -1;
    }
  }
  /* The scopes of mcp_scopes, split in place (mcp_http_start copies). */
  char scope_text[sizeof d->cfg.mcp_scopes];
  const char *scopes[4] = {0};
  strcpy(scope_text, d->cfg.mcp_scopes);
  size_t n = 0;
  for (char *rest = NULL, *w = strtok_r(scope_text, " ", &rest); w && n < 3;
       w = strtok_r(NULL, " ", &rest))
    scopes[n++] = w;
  const mcp_principal local = {.subject = "local", .scopes = scopes};
  mcp_http_options opts = {.bind_addr = spec,
                           .port = (uint16_t)port,
                           .external_loop = true,
                           .principal = &local};
  int rc = mcp_http_start(d->srv, &opts, &d->http);
  if (rc != 0) {
    fprintf(stderr, "port_daemon: cannot serve MCP on %s: %s\n",
            d->cfg.mcp_listen, mcp_strerror(rc));
    return -1;
  }
  fprintf(stderr, "port_daemon: MCP at http://%s:%u/mcp for %s\n", spec,
          (unsigned)mcp_http_port(d->http), d->cfg.mcp_scopes);
  return 0;
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
    struct pollfd fds[] = {{.fd = signal_pipe[0], .events = POLLIN},
                           {.fd = -1, .events = POLLIN}};
    if (d->http) { /* libmcp's one descriptor, and how long it may wait */
      fds[1].fd = mcp_http_backend_fd(d->http);
      long mcp_wait = mcp_http_backend_timeout(d->http);
      if (mcp_wait >= 0 && mcp_wait < wait_ms)
        wait_ms = mcp_wait;
    }
    if (poll(fds, 2, wait_ms < 0 ? 0 : (int)wait_ms) < 0 && errno != EINTR)
      break;
    if (d->http)
      mcp_http_run(d->http); /* accepts, reads, runs handlers, writes */
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
  int rc = 0;
  if (d.cfg.mcp_listen[0] && start_mcp(&d) != 0)
    rc = 1;
  else
    run(&d);

  mcp_http_stop(d.http); /* first: no new calls; deferred ones cancelled */
  stop_workers(&d);
  mcp_server_free(d.srv);
  pthread_cond_destroy(&d.wake);
  pthread_mutex_destroy(&d.lock);
  close(signal_pipe[0]);
  close(signal_pipe[1]);
  fprintf(stderr, "port_daemon: stopped\n");
  return rc;
}
