/* embed_poll: an existing daemon that keeps its own poll() loop and takes
 * an MCP endpoint in without giving that loop up.
 *
 * The daemon already had a timer (it counts seconds) and an admin channel
 * on a unix socket. libmcp adds one descriptor to its poll set, says how
 * long the loop may sleep, and does its work when the loop calls
 * mcp_http_run. No thread is started for HTTP: every tool handler runs
 * here, in the loop, so the handlers can read the daemon's state without a
 * lock.
 *
 *   embed_poll --http ADDR:PORT --admin PATH
 *
 * The admin channel takes one command per line and answers "ok" or
 * "error: ..." on a line:
 *   add     registers the tool "greet" (clients get tools/list_changed)
 *   remove  removes it again
 *   quit    stops the daemon
 * SIGINT and SIGTERM stop it too, through a self-pipe. The tool "ticks"
 * returns the timer's count. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <mcp/http.h>
#include <mcp/mcp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#define MAX_CLIENTS 8
#define TICK_MS 1000

typedef struct admin_client {
  int fd;
  char line[256];
  size_t len;
} admin_client;

typedef struct daemon_state {
  mcp_server *srv;
  unsigned long ticks;
  bool running;
  admin_client clients[MAX_CLIENTS];
} daemon_state;

static int signal_pipe[2] = {-1, -1};

static void on_signal(int sig) {
  int saved = errno;
  unsigned char c = (unsigned char)sig;
  (void)!write(signal_pipe[1], &c, 1);
  errno = saved;
}

static long long now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ---- tools --------------------------------------------------------------- */

static int ticks_tool(mcp_call *call, void *user_data) {
  const daemon_state *d = user_data;
  char text[32];
  snprintf(text, sizeof text, "%lu", d->ticks);
  return mcp_result_text(call, text);
}

static int greet_tool(mcp_call *call, void *user_data) {
  (void)user_data;
  const char *name = "world";
  mcp_call_arg_string(call, "name", &name);
  char text[200];
  snprintf(text, sizeof text, "Hello, %.150s!", name);
  return mcp_result_text(call, text);
}

static const mcp_tool ticks_def = {
    .name = "ticks",
    .title = "Timer ticks",
    .description = "Returns how many seconds the daemon's timer has counted.",
    .annotations = {.read_only = MCP_HINT_TRUE, .open_world = MCP_HINT_FALSE},
    .handler = ticks_tool,
};

static const mcp_tool greet_def = {
    .name = "greet",
    .title = "Greet",
    .description = "Greets someone by name (added at run time by the admin).",
    .input_schema = "{\"type\":\"object\",\"properties\":{\"name\":{\"type\":"
                    "\"string\"}},\"additionalProperties\":false}",
    .annotations = {.read_only = MCP_HINT_TRUE, .open_world = MCP_HINT_FALSE},
    .handler = greet_tool,
};

/* ---- the admin channel ----------------------------------------------------
 */

static void reply(int fd, const char *text) {
  (void)!send(fd, text, strlen(text), MSG_NOSIGNAL);
}

static void admin_command(daemon_state *d, int fd, const char *cmd) {
  char err[300];
  int rc = 0;
  if (strcmp(cmd, "add") == 0) {
    rc = mcp_server_add_tool(d->srv, &greet_def, NULL);
  } else if (strcmp(cmd, "remove") == 0) {
    rc = mcp_server_remove_tool(d->srv, "greet");
  } else if (strcmp(cmd, "quit") == 0) {
    d->running = false;
  } else {
    reply(fd, "error: unknown command (add, remove, quit)\n");
    return;
  }
  if (rc != 0) {
    snprintf(err, sizeof err, "error: %s\n", mcp_server_errmsg(d->srv));
    reply(fd, err);
  } else {
    reply(fd, "ok\n");
  }
}

/* Reads what a client sent and runs each complete line. Returns false when
 * the client is gone. */
static bool admin_read(daemon_state *d, admin_client *c) {
  ssize_t n = read(c->fd, c->line + c->len, sizeof c->line - 1 - c->len);
  if (n < 0 && (errno == EINTR || errno == EAGAIN))
    return true;
  if (n <= 0)
    return false;
  c->len += (size_t)n;
  char *nl;
  while ((nl = memchr(c->line, '\n', c->len)) != NULL) {
    *nl = '\0';
    if (nl > c->line && nl[-1] == '\r')
      nl[-1] = '\0';
    admin_command(d, c->fd, c->line);
    size_t used = (size_t)(nl + 1 - c->line);
    memmove(c->line, nl + 1, c->len - used);
    c->len -= used;
  }
  if (c->len == sizeof c->line - 1) {
    reply(c->fd, "error: line too long\n");
    c->len = 0;
  }
  return true;
}

static int admin_listen(const char *path) {
  struct sockaddr_un sa = {.sun_family = AF_UNIX};
  if (strlen(path) >= sizeof sa.sun_path) {
    fprintf(stderr, "embed_poll: admin path too long\n");
    return -1;
  }
  strcpy(sa.sun_path, path);
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0)
    return -1;
  unlink(path);
  if (bind(fd, (struct sockaddr *)&sa, sizeof sa) != 0 || listen(fd, 4) != 0) {
    perror("embed_poll: admin socket");
    close(fd);
    return -1;
  }
  return fd;
}

static void admin_accept(daemon_state *d, int listen_fd) {
  int fd = accept(listen_fd, NULL, NULL);
  if (fd < 0)
    return;
  for (size_t i = 0; i < MAX_CLIENTS; i++) {
    if (d->clients[i].fd < 0) {
      d->clients[i] = (admin_client){.fd = fd};
      return;
    }
  }
  reply(fd, "error: too many admin clients\n");
  close(fd);
}

/* ---- main ---------------------------------------------------------------- */

static int parse_addr(char *spec, char **addr, uint16_t *port) {
  char *colon = strrchr(spec, ':'), *end = NULL;
  unsigned long p = colon ? strtoul(colon + 1, &end, 10) : 0;
  if (colon == NULL || colon == spec || end == colon + 1 || *end != '\0' ||
      p > 65535)
    return -1;
  *colon = '\0';
  size_t n = strlen(spec);
  if (n >= 2 && spec[0] == '[' && spec[n - 1] == ']') {
    spec[n - 1] = '\0';
    spec++;
  }
  *addr = spec;
  *port = (uint16_t)p;
  return 0;
}

/* One turn of the loop: poll the daemon's own descriptors and libmcp's,
 * sleep no longer than the timer or libmcp allow, then give libmcp its
 * turn whatever woke the loop (libmicrohttpd asks for that). */
static void loop(daemon_state *d, mcp_http *http, int admin_fd) {
  long long next_tick = now_ms() + TICK_MS;
  while (d->running) {
    struct pollfd fds[3 + MAX_CLIENTS];
    admin_client *owner[3 + MAX_CLIENTS] = {0};
    nfds_t n = 0;
    fds[n++] =
        (struct pollfd){.fd = mcp_http_backend_fd(http), .events = POLLIN};
    fds[n++] = (struct pollfd){.fd = admin_fd, .events = POLLIN};
    fds[n++] = (struct pollfd){.fd = signal_pipe[0], .events = POLLIN};
    for (size_t i = 0; i < MAX_CLIENTS; i++) {
      if (d->clients[i].fd >= 0) {
        owner[n] = &d->clients[i];
        fds[n++] = (struct pollfd){.fd = d->clients[i].fd, .events = POLLIN};
      }
    }
    long long until_tick = next_tick - now_ms();
    long mcp_wait = mcp_http_backend_timeout(http);
    long long wait = until_tick < 0 ? 0 : until_tick;
    if (mcp_wait >= 0 && mcp_wait < wait)
      wait = mcp_wait;
    if (poll(fds, n, (int)wait) < 0 && errno != EINTR)
      break;

    mcp_http_run(http);
    if (now_ms() >= next_tick) {
      d->ticks++;
      next_tick += TICK_MS;
    }
    if (fds[2].revents & POLLIN) {
      unsigned char sig;
      while (read(signal_pipe[0], &sig, 1) == 1)
        d->running = false;
    }
    if (fds[1].revents & POLLIN)
      admin_accept(d, admin_fd);
    for (nfds_t i = 3; i < n; i++) {
      if (fds[i].revents && !admin_read(d, owner[i])) {
        close(owner[i]->fd);
        owner[i]->fd = -1;
      }
    }
  }
}

int main(int argc, char **argv) {
  char *http_spec = NULL;
  const char *admin_path = NULL;
  bool bad = false;
  for (int i = 1; i < argc && !bad; i++) {
    if (strcmp(argv[i], "--http") == 0 && i + 1 < argc)
      http_spec = argv[++i];
    else if (strcmp(argv[i], "--admin") == 0 && i + 1 < argc)
      admin_path = argv[++i];
    else
      bad = true;
  }
  char *addr;
  uint16_t port;
  if (bad || http_spec == NULL || admin_path == NULL ||
      parse_addr(http_spec, &addr, &port) != 0) {
    fprintf(stderr, "usage: embed_poll --http ADDR:PORT --admin PATH\n");
    return 2;
  }

  daemon_state d = {.running = true};
  for (size_t i = 0; i < MAX_CLIENTS; i++)
    d.clients[i].fd = -1;
  if (pipe(signal_pipe) != 0)
    return 1;
  for (int i = 0; i < 2; i++)
    fcntl(signal_pipe[i], F_SETFL, O_NONBLOCK);
  struct sigaction sa = {.sa_handler = on_signal};
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);

  const mcp_server_info info = {.name = "embed_poll",
                                .version = mcp_version(),
                                .title = "A daemon with an MCP endpoint"};
  if (mcp_server_new(&info, &d.srv) != 0)
    return 1;
  int rc = 1, admin_fd = -1;
  mcp_http *http = NULL;
  if (mcp_server_add_tool(d.srv, &ticks_def, &d) != 0) {
    fprintf(stderr, "embed_poll: %s\n", mcp_server_errmsg(d.srv));
    goto out;
  }
  if ((admin_fd = admin_listen(admin_path)) < 0)
    goto out;
  mcp_http_options opts = {
      .bind_addr = addr, .port = port, .external_loop = true};
  int err = mcp_http_start(d.srv, &opts, &http);
  if (err != 0) {
    fprintf(stderr, "embed_poll: cannot serve HTTP: %s\n", mcp_strerror(err));
    goto out;
  }
  bool v6 = strchr(addr, ':') != NULL;
  fprintf(stderr, "listening on http://%s%s%s:%u/mcp\n", v6 ? "[" : "", addr,
          v6 ? "]" : "", (unsigned)mcp_http_port(http));
  loop(&d, http, admin_fd);
  rc = 0;
out:
  mcp_http_stop(http);
  for (size_t i = 0; i < MAX_CLIENTS; i++)
    if (d.clients[i].fd >= 0)
      close(d.clients[i].fd);
  if (admin_fd >= 0) {
    close(admin_fd);
    unlink(admin_path);
  }
  mcp_server_free(d.srv);
  close(signal_pipe[0]);
  close(signal_pipe[1]);
  return rc;
}
