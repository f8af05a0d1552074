/* The stream tests' server child and its driver (stream_server.h). */
#define _DEFAULT_SOURCE /* mallopt, malloc_trim */
#include "stream_server.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <mcp/http.h>
#include <mcp/mcp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "stream_fleet.h"
#include "testutil.h"

long ss_raise_nofile(void) {
  struct rlimit rl;
  if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
    return -1;
  if (rl.rlim_cur < rl.rlim_max) {
    rl.rlim_cur = rl.rlim_max;
    setrlimit(RLIMIT_NOFILE, &rl);
    getrlimit(RLIMIT_NOFILE, &rl);
  }
  return rl.rlim_cur == RLIM_INFINITY ? 1L << 30 : (long)rl.rlim_cur;
}

void ss_heap_fixed(void) {
  /* One arena, trimmed to the last free page on "stats", and fixed
   * thresholds. */
  mallopt(M_ARENA_MAX, 1);
  mallopt(M_TRIM_THRESHOLD, 128 * 1024);
  mallopt(M_MMAP_THRESHOLD, 128 * 1024);
}

/* ===========================================================================
 * The libmcp server
 * ======================================================================== */

/* Passes the library's warnings and errors to standard error, after the
 * server's name. */
static void serve_log(mcp_log_level level, const char *message, void *ud) {
  if (level >= MCP_LOG_WARNING)
    fprintf(stderr, "%s server: %s\n", (const char *)ud, message);
}

/* The resource's handler: a fixed text. */
static int read_feed(mcp_call *call, void *ud) {
  (void)ud;
  return mcp_result_text(call, "the feed");
}

int ss_serve(const char *name, long n, const char *uri, unsigned keepalive_s) {
  ss_heap_fixed();
  if (ss_raise_nofile() < n + 64) {
    fprintf(stderr, "%s server: %ld streams need %ld descriptors\n", name, n,
            n + 64);
    return 2;
  }
  if (tu_alloc_count() != 0)
    return 1;
  mcp_server *srv;
  const mcp_server_info info = {.name = name, .version = "1.0.0"};
  const mcp_resource feed = {.uri = uri,
                             .name = "feed",
                             .mime_type = "text/plain",
                             .handler = read_feed};
  if (mcp_server_new(&info, &srv) != 0)
    return 1;
  mcp_server_set_log(srv, serve_log, (void *)name);
  mcp_http *http = NULL;
  const mcp_http_options o = {.max_connections = (unsigned)n + 64,
                              .per_ip_connections = (unsigned)n + 64,
                              .max_sessions = (unsigned)n + 64,
                              .keepalive_s = keepalive_s};
  int rc = mcp_server_add_resource(srv, &feed, NULL);
  if (rc == 0)
    rc = mcp_http_start(srv, &o, &http);
  if (rc != 0) {
    fprintf(stderr, "%s server: %s\n", name, mcp_server_errmsg(srv));
    mcp_server_free(srv);
    return 1;
  }
  printf("port %u\n", (unsigned)mcp_http_port(http));
  fflush(stdout);
  char line[64];
  for (int i = 0; i < 100000 && fgets(line, sizeof line, stdin); i++) {
    if (strncmp(line, "publish", 7) == 0) {
      struct timespec a, b;
      clock_gettime(CLOCK_MONOTONIC, &a);
      int told = mcp_server_resource_updated(srv, uri);
      clock_gettime(CLOCK_MONOTONIC, &b);
      printf("told %d us %ld\n", told,
             (long)(b.tv_sec - a.tv_sec) * 1000000L +
                 (b.tv_nsec - a.tv_nsec) / 1000L);
    } else if (strncmp(line, "stats", 5) == 0) {
      malloc_trim(0);
      long blocks, bytes;
      tu_alloc_counts(&blocks, &bytes);
      printf("blocks %ld bytes %ld\n", blocks, bytes);
    }
    fflush(stdout);
  }
  mcp_http_stop(http);
  mcp_server_free(srv);
  long blocks, bytes;
  tu_alloc_counts(&blocks, &bytes);
  if (blocks != 0) {
    fprintf(stderr, "%s server: %ld blocks (%ld bytes) still held\n", name,
            blocks, bytes);
    return 1;
  }
  return 0;
}

/* ===========================================================================
 * A server as a child
 * ======================================================================== */

/* Keeps n bytes the child printed for the next ss_line. */
static void pending_add(ss_child *c, const char *data, size_t n) {
  if (c->npending + n > c->cap) {
    size_t cap = c->cap ? c->cap : 512;
    while (cap < c->npending + n)
      cap *= 2;
    char *p = realloc(c->pending, cap);
    if (p == NULL)
      abort();
    c->pending = p;
    c->cap = cap;
  }
  memcpy(c->pending + c->npending, data, n);
  c->npending += n;
}

bool ss_line(ss_child *c, char *out, size_t size, long ms) {
  long deadline = sf_now_ms() + ms;
  for (int rounds = 0; rounds < 100000; rounds++) {
    char *nl = c->npending ? memchr(c->pending, '\n', c->npending) : NULL;
    if (nl) {
      size_t len = (size_t)(nl - c->pending);
      snprintf(out, size, "%.*s", (int)len, c->pending);
      c->npending -= len + 1;
      memmove(c->pending, nl + 1, c->npending);
      return true;
    }
    long left = deadline - sf_now_ms();
    struct pollfd p = {.fd = c->out, .events = POLLIN};
    if (left <= 0 || poll(&p, 1, (int)left) <= 0)
      return false;
    char chunk[512];
    ssize_t r = read(c->out, chunk, sizeof chunk);
    if (r <= 0)
      return false;
    pending_add(c, chunk, (size_t)r);
  }
  return false;
}

bool ss_tell(ss_child *c, const char *command) {
  /* A pipe: its reader is gone only when the child died. */
  size_t n = strlen(command);
  return write(c->in, command, n) == (ssize_t)n;
}

bool ss_ask(ss_child *c, const char *command, char *out, size_t size, long ms) {
  return ss_tell(c, command) && ss_line(c, out, size, ms);
}

int ss_start(ss_child *c, const char *self, const char *mode, long n, long ms) {
  *c = (ss_child){.pid = -1, .in = -1, .out = -1};
  int in[2], out[2];
  if (pipe(in) != 0)
    return -1;
  if (pipe(out) != 0) {
    close(in[0]);
    close(in[1]);
    return -1;
  }
  char count[32];
  snprintf(count, sizeof count, "%ld", n);
  const char *spec = getenv("MCP_TEST_LAUNCHER");
  char *words = strdup(spec ? spec : "");
  if (words == NULL)
    abort();
  char *argv[64];
  int argc = 0;
  for (char *save = NULL, *w = strtok_r(words, " ", &save); w && argc < 60;
       w = strtok_r(NULL, " ", &save))
    argv[argc++] = w;
  argv[argc++] = (char *)self;
  argv[argc++] = (char *)mode;
  argv[argc++] = count;
  argv[argc] = NULL;
  fflush(NULL);
  c->pid = fork();
  if (c->pid == 0) {
    dup2(in[0], 0);
    dup2(out[1], 1);
    close(in[1]);
    close(out[0]);
    execvp(argv[0], argv);
    _exit(127);
  }
  int fork_errno = errno;
  free(words);
  close(in[0]);
  close(out[1]);
  c->in = in[1];
  c->out = out[0];
  fcntl(c->in, F_SETFD, FD_CLOEXEC);
  fcntl(c->out, F_SETFD, FD_CLOEXEC);
  char line[64];
  unsigned port = 0;
  if (c->pid < 0) {
    fprintf(stderr, "fork: %s\n", strerror(fork_errno));
  } else if (ss_line(c, line, sizeof line, ms) &&
             sscanf(line, "port %u", &port) == 1 && port > 0 && port <= 65535) {
    c->port = (uint16_t)port;
    return 0;
  }
  ss_stop(c, 0);
  return -1;
}

int ss_stop(ss_child *c, long ms) {
  close(c->in);
  c->in = -1;
  long deadline = sf_now_ms() + ms;
  int status = 0;
  pid_t w = 0;
  while (c->pid > 0 && (w = waitpid(c->pid, &status, WNOHANG)) == 0 &&
         sf_now_ms() < deadline)
    nanosleep(&(struct timespec){0, 20 * 1000 * 1000}, NULL);
  if (c->pid > 0 && w != c->pid) {
    kill(c->pid, SIGKILL);
    waitpid(c->pid, &status, 0);
    status = -1;
  } else if (c->pid <= 0) {
    status = -1;
  }
  close(c->out);
  c->out = -1;
  c->pid = -1;
  free(c->pending);
  c->pending = NULL;
  c->npending = c->cap = 0;
  return status;
}

long ss_status_kib(pid_t pid, const char *field) {
  char path[64], line[256];
  snprintf(path, sizeof path, "/proc/%ld/status", (long)pid);
  FILE *f = fopen(path, "r");
  long v = -1;
  size_t n = strlen(field);
  while (f && fgets(line, sizeof line, f))
    if (strncmp(line, field, n) == 0)
      v = strtol(line + n, NULL, 10);
  if (f)
    fclose(f);
  return v;
}

long ss_threads(pid_t pid) {
  char path[64];
  snprintf(path, sizeof path, "/proc/%ld/task", (long)pid);
  DIR *d = opendir(path);
  long n = 0;
  for (struct dirent *e; d && (e = readdir(d));)
    n += e->d_name[0] != '.';
  if (d)
    closedir(d);
  return n;
}
