/* bench_tls: HTTPS against plain HTTP on one server process (issue 20).
 *
 *   bench_tls CALLS SECONDS ROUNDS
 *
 * Starts bench_server (the program beside this one) twice on 127.0.0.1,
 * once plain and once with --tls-cert and --tls-key, with a self-signed
 * P-256 certificate for IP 127.0.0.1 made here in a temporary folder
 * (removed at the end), and drives both with the same client code:
 * stateless 2026-07-28 echo tools/call over keep-alive connections (1 and
 * 16, one call in flight on each), and one call per new connection (for
 * HTTPS, a full handshake each: the client keeps no sessions). The client
 * is one thread on poll(2); for HTTPS it is OpenSSL 3 over the same
 * sockets, checking the certificate and the address it names.
 *
 * Each run stops after CALLS calls (a tenth of them, plus two, for new
 * connections) or SECONDS seconds, whichever comes first; plain and HTTPS
 * take turns, ROUNDS runs each, and each keeps its best. Every reply is
 * checked (status 200, its id and the echoed text); a wrong reply, or none
 * for a minute, fails the program. The figures go to standard output as
 * "KEY VALUE" lines for bench_load: {plain,tls}_{1,16,new}_{rate,p50_us,
 * server_us} (calls/s, µs, server CPU µs per call). MCP_TEST_LAUNCHER,
 * when set (valgrind), is put in front of the servers. */
#define _GNU_SOURCE /* clock_getcpuclockid, mkdtemp (Linux) */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* Seconds without any reply after which a run is declared hung. */
#define STALL_S 60
#define MAX_CONNS 16
#define MODERN_META                                                            \
  "\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\","     \
  "\"io.modelcontextprotocol/clientCapabilities\":{}}"

static char bin_dir[4096];

static void fail(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;

/* Says what went wrong, on standard error, with OpenSSL's queued errors. */
static void fail(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fputs("bench_tls: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
  ERR_print_errors_fp(stderr);
}

/* The monotonic clock in nanoseconds. */
static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The CPU time of a clock in seconds, or 0 when it cannot be read. */
static double cpu_s(clockid_t clock) {
  struct timespec ts;
  if (clock_gettime(clock, &ts) != 0)
    return 0;
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* ---- the certificate ----------------------------------------------------- */

/* Writes a new P-256 key and a self-signed certificate for IP 127.0.0.1,
 * valid for a day, to key_path and cert_path (PEM). Returns 0 or -1. */
static int make_cert(const char *cert_path, const char *key_path) {
  EVP_PKEY *key = EVP_EC_gen("P-256");
  X509 *x = X509_new();
  X509_EXTENSION *san = NULL;
  bool ok = key && x && X509_set_version(x, X509_VERSION_3) &&
            ASN1_INTEGER_set(X509_get_serialNumber(x), 1) &&
            X509_gmtime_adj(X509_getm_notBefore(x), -3600) &&
            X509_gmtime_adj(X509_getm_notAfter(x), 86400) &&
            X509_set_pubkey(x, key);
  X509_NAME *name = ok ? X509_get_subject_name(x) : NULL;
  ok = ok &&
       X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
                                  (const unsigned char *)"127.0.0.1", -1, -1,
                                  0) &&
       X509_set_issuer_name(x, name);
  if (ok) {
    X509V3_CTX ctx;
    X509V3_set_ctx_nodb(&ctx);
    X509V3_set_ctx(&ctx, x, x, NULL, NULL, 0);
    san = X509V3_EXT_conf_nid(NULL, &ctx, NID_subject_alt_name, "IP:127.0.0.1");
    ok = san && X509_add_ext(x, san, -1) && X509_sign(x, key, EVP_sha256());
  }
  mode_t old = umask(077);
  FILE *kf = ok ? fopen(key_path, "w") : NULL;
  FILE *cf = ok ? fopen(cert_path, "w") : NULL;
  umask(old);
  ok = ok && kf && cf &&
       PEM_write_PrivateKey(kf, key, NULL, NULL, 0, NULL, NULL) &&
       PEM_write_X509(cf, x);
  if (kf && fclose(kf) != 0)
    ok = false;
  if (cf && fclose(cf) != 0)
    ok = false;
  X509_EXTENSION_free(san);
  X509_free(x);
  EVP_PKEY_free(key);
  if (!ok)
    fail("cannot make the certificate");
  return ok ? 0 : -1;
}

/* ---- the servers --------------------------------------------------------- */

typedef struct server {
  pid_t pid;
  int err; /* its standard error */
  unsigned port;
  clockid_t clock;
} server;

/* Copies what the server wrote to its standard error to ours, without
 * waiting, so that it never blocks on a full pipe. */
static void server_drain(server *s) {
  char chunk[4096];
  ssize_t r;
  while (s->err >= 0 && (r = read(s->err, chunk, sizeof chunk)) > 0)
    fwrite(chunk, 1, (size_t)r, stderr);
}

/* Starts bin_dir/bench_server with args (NULL-terminated) behind
 * MCP_TEST_LAUNCHER, and reads its standard error until it says where it
 * listens. Returns 0 or -1 (s->pid is then the child to stop, or -1). */
static int server_start(server *s, const char *const *args) {
  *s = (server){.pid = -1, .err = -1};
  char path[4352], *spec = getenv("MCP_TEST_LAUNCHER");
  char *launch = spec && *spec ? strdup(spec) : NULL;
  const char *argv[32];
  size_t n = 0;
  for (char *save = NULL, *tok = launch ? strtok_r(launch, " ", &save) : NULL;
       tok && n < 20; tok = strtok_r(NULL, " ", &save))
    argv[n++] = tok;
  snprintf(path, sizeof path, "%s/bench_server", bin_dir);
  argv[n++] = path;
  for (size_t i = 0; args[i] && n < 31; i++)
    argv[n++] = args[i];
  argv[n] = NULL;
  int err[2];
  if (pipe2(err, O_CLOEXEC) != 0) {
    fail("pipe: %s", strerror(errno));
    free(launch);
    return -1;
  }
  fflush(NULL);
  pid_t pid = fork();
  if (pid == 0) {
    int null = open("/dev/null", O_RDONLY);
    dup2(null, STDIN_FILENO);
    dup2(err[1], STDERR_FILENO);
    execvp(argv[0], (char *const *)argv);
    fprintf(stderr, "bench_tls: cannot run %s: %s\n", argv[0], strerror(errno));
    _exit(127);
  }
  free(launch);
  close(err[1]);
  if (pid < 0) {
    fail("fork: %s", strerror(errno));
    close(err[0]);
    return -1;
  }
  s->pid = pid;
  s->err = err[0];
  if (clock_getcpuclockid(pid, &s->clock) != 0)
    s->clock = (clockid_t)-1;
  char text[4096];
  size_t len = 0;
  uint64_t deadline = now_ns() + (uint64_t)STALL_S * 1000000000u;
  while (now_ns() < deadline && len + 1 < sizeof text) {
    struct pollfd pfd = {.fd = s->err, .events = POLLIN};
    if (poll(&pfd, 1, 1000) <= 0)
      continue;
    ssize_t r = read(s->err, text + len, sizeof text - 1 - len);
    if (r < 0 && errno == EINTR)
      continue;
    if (r <= 0)
      break;
    len += (size_t)r;
    text[len] = '\0';
    const char *at = strstr(text, "listening on http");
    const char *mcp = at ? strstr(at, "/mcp\n") : NULL;
    if (mcp) {
      const char *colon = mcp;
      while (colon > at && *colon != ':')
        colon--;
      s->port = (unsigned)atoi(colon + 1);
      fwrite(text, 1, (size_t)(at - text), stderr);
      fcntl(s->err, F_SETFL, fcntl(s->err, F_GETFL) | O_NONBLOCK);
      return s->port ? 0 : -1;
    }
  }
  fail("bench_server did not say where it listens: %.*s", (int)len, text);
  return -1;
}

/* Stops a server with SIGTERM. Returns 0 when it exited with status 0 (a
 * launcher such as valgrind exits non-zero when it found errors). */
static int server_stop(server *s) {
  if (s->pid <= 0)
    return 0;
  kill(s->pid, SIGTERM);
  int status = 0, rc = -1;
  for (int i = 0; i < STALL_S * 100 && rc != 0; i++) {
    server_drain(s);
    if (waitpid(s->pid, &status, WNOHANG) == s->pid)
      rc = 0;
    else
      nanosleep(&(struct timespec){0, 10 * 1000 * 1000}, NULL);
  }
  server_drain(s);
  if (rc != 0) {
    fail("bench_server %ld did not exit; killing it", (long)s->pid);
    kill(s->pid, SIGKILL);
    waitpid(s->pid, &status, 0);
  } else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    fail("bench_server %ld ended with %s %d", (long)s->pid,
         WIFEXITED(status) ? "status" : "signal",
         WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
    rc = -1;
  }
  if (s->err >= 0)
    close(s->err);
  s->err = -1;
  s->pid = -1;
  return rc;
}

/* ---- the client ---------------------------------------------------------- */

/* Where the calls go: a port, and the TLS context for HTTPS (NULL for
 * plain HTTP, which is the same code without the SSL layer). */
typedef struct target {
  const char *name; /* "plain" or "tls" */
  server *srv;
  SSL_CTX *tls;
} target;

typedef struct conn {
  int fd;
  SSL *ssl;
  char *in;
  size_t in_len, in_cap;
  char out[1024];
  size_t out_len, out_off;
  bool busy; /* a call in flight */
  long id;
  uint64_t t0;
} conn;

/* Connects to t and, for HTTPS, completes the handshake, with blocking
 * calls that give up after STALL_S seconds; the socket is then left
 * non-blocking unless blocking is asked for. Returns 0 or -1. */
static int conn_open(conn *c, const target *t, bool blocking) {
  *c = (conn){.fd = -1};
  c->fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  struct sockaddr_in sa = {.sin_family = AF_INET,
                           .sin_port = htons((uint16_t)t->srv->port)};
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  struct timeval tv = {.tv_sec = STALL_S};
  int one = 1;
  if (c->fd < 0 ||
      setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) != 0 ||
      setsockopt(c->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv) != 0 ||
      setsockopt(c->fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv) != 0 ||
      connect(c->fd, (struct sockaddr *)&sa, sizeof sa) != 0) {
    fail("connect to port %u: %s", t->srv->port, strerror(errno));
    return -1;
  }
  if (t->tls) {
    c->ssl = SSL_new(t->tls);
    if (c->ssl == NULL || SSL_set_fd(c->ssl, c->fd) != 1 ||
        X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(c->ssl), "127.0.0.1") !=
            1 ||
        SSL_connect(c->ssl) != 1) {
      fail("TLS handshake with port %u failed", t->srv->port);
      return -1;
    }
  }
  if (!blocking)
    fcntl(c->fd, F_SETFL, fcntl(c->fd, F_GETFL) | O_NONBLOCK);
  return 0;
}

/* Closes c's connection (without a TLS close_notify: the server closed
 * first or the run is over) and frees its buffers. */
static void conn_close(conn *c) {
  SSL_free(c->ssl);
  if (c->fd >= 0)
    close(c->fd);
  free(c->in);
  *c = (conn){.fd = -1};
}

/* Writes what is left of c's request. Returns 1 when it is all written, 0
 * when the socket takes no more for now, -1 on an error. */
static int io_send(conn *c) {
  while (c->out_off < c->out_len) {
    const char *p = c->out + c->out_off;
    size_t n = c->out_len - c->out_off;
    if (c->ssl) {
      size_t w = 0;
      if (SSL_write_ex(c->ssl, p, n, &w) == 1) {
        c->out_off += w;
        continue;
      }
      int e = SSL_get_error(c->ssl, 0);
      if (e == SSL_ERROR_WANT_WRITE || e == SSL_ERROR_WANT_READ)
        return 0;
      fail("TLS write failed");
      return -1;
    }
    ssize_t w = send(c->fd, p, n, MSG_NOSIGNAL);
    if (w < 0 && errno == EINTR)
      continue;
    if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
      return 0;
    if (w < 0) {
      fail("send: %s", strerror(errno));
      return -1;
    }
    c->out_off += (size_t)w;
  }
  return 1;
}

/* Reads once into c's input. Returns the bytes read, 0 when there are none
 * for now, -1 on an error, -2 at the end of the stream. */
static long io_read(conn *c) {
  if (c->in_cap - c->in_len < 16385) {
    c->in_cap = c->in_cap ? c->in_cap * 2 : 32768;
    c->in = realloc(c->in, c->in_cap);
    if (c->in == NULL) {
      fail("out of memory");
      exit(EXIT_FAILURE);
    }
  }
  char *p = c->in + c->in_len;
  size_t room = c->in_cap - c->in_len - 1, got = 0;
  if (c->ssl) {
    if (SSL_read_ex(c->ssl, p, room, &got) != 1) {
      int e = SSL_get_error(c->ssl, 0);
      if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE)
        return 0;
      if (e == SSL_ERROR_ZERO_RETURN)
        return -2;
      fail("TLS read failed");
      return -1;
    }
  } else {
    ssize_t r;
    do
      r = recv(c->fd, p, room, 0);
    while (r < 0 && errno == EINTR);
    if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
      return 0;
    if (r < 0) {
      fail("recv: %s", strerror(errno));
      return -1;
    }
    if (r == 0)
      return -2;
    got = (size_t)r;
  }
  c->in_len += got;
  c->in[c->in_len] = '\0';
  return (long)got;
}

/* Queues the echo call of this id on c, keep-alive or with Connection:
 * close, and writes what the socket takes. Returns 0 or -1. */
static int send_call(conn *c, unsigned port, long id, bool close_after) {
  char body[512];
  int blen = snprintf(body, sizeof body,
                      "{\"jsonrpc\":\"2.0\",\"id\":%ld,\"method\":\"tools/"
                      "call\",\"params\":{\"name\":\"echo\",\"arguments\":{"
                      "\"text\":\"hello %ld\"}," MODERN_META "}}",
                      id, id);
  int n =
      snprintf(c->out, sizeof c->out,
               "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:%u\r\n"
               "Content-Type: application/json\r\nAccept: "
               "application/json, text/event-stream\r\n"
               "MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: "
               "tools/call\r\nMcp-Name: echo\r\n%sContent-Length: "
               "%d\r\n\r\n%s",
               port, close_after ? "Connection: close\r\n" : "", blen, body);
  if (n < 0 || (size_t)n >= sizeof c->out)
    return -1;
  c->out_len = (size_t)n;
  c->out_off = 0;
  c->busy = true;
  c->id = id;
  c->t0 = now_ns();
  return io_send(c) < 0 ? -1 : 0;
}

/* Looks at the response at the front of c's input. Returns its length
 * once it is whole and right (status 200, Content-Length, the reply to
 * c->id echoing "hello ID"), 0 while it is incomplete, -1 when it is
 * wrong. */
static long take_response(conn *c) {
  const char *p = c->in, *end = c->in_len ? strstr(p, "\r\n\r\n") : NULL;
  if (end == NULL)
    return 0;
  end += 4;
  long length = -1;
  bool ok = strncmp(p, "HTTP/1.1 200 ", 13) == 0;
  for (const char *line = strstr(p, "\r\n") + 2; ok && line < end - 2;) {
    const char *eol = strstr(line, "\r\n");
    if (strncasecmp(line, "Content-Length:", 15) == 0)
      length = atol(line + 15);
    else if (strncasecmp(line, "Transfer-Encoding:", 18) == 0)
      ok = false; /* an event stream: not what this request asks for */
    line = eol + 2;
  }
  if (!ok || length < 0) {
    fail("unexpected HTTP response: %.300s", p);
    return -1;
  }
  if ((size_t)(c->in + c->in_len - end) < (size_t)length)
    return 0;
  /* The body is the JSON reply; compare its parts as text, the way the
   * server prints them (no spaces), so the check costs both modes little
   * and the same. */
  char id[48], text[64];
  snprintf(id, sizeof id, "{\"jsonrpc\":\"2.0\",\"id\":%ld,\"result\":", c->id);
  snprintf(text, sizeof text, "\"text\":\"hello %ld\"}", c->id);
  char *body = c->in + (end - p), save = body[length];
  body[length] = '\0'; /* for strstr; put back below */
  ok = strncmp(body, id, strlen(id)) == 0 && strstr(body, text) != NULL &&
       strstr(body, "\"isError\":true") == NULL;
  if (!ok)
    fail("wrong reply to call %ld: %.300s", c->id, body);
  body[length] = save;
  return ok ? (long)(end - p) + length : -1;
}

/* Drops the first n bytes of c's input. */
static void consume(conn *c, size_t n) {
  memmove(c->in, c->in + n, c->in_len - n);
  c->in_len -= n;
  c->in[c->in_len] = '\0';
}

/* ---- runs ---------------------------------------------------------------- */

typedef struct result {
  long calls;
  double rate, p50_us, server_us;
} result;

/* Latencies of one run, in nanoseconds (saturated). */
typedef struct lats {
  uint32_t *v;
  size_t n, cap;
} lats;

/* Adds one latency. */
static void lats_add(lats *l, uint64_t ns) {
  if (l->n == l->cap) {
    l->cap = l->cap ? l->cap * 2 : 4096;
    l->v = realloc(l->v, l->cap * sizeof *l->v);
    if (l->v == NULL) {
      fail("out of memory");
      exit(EXIT_FAILURE);
    }
  }
  l->v[l->n++] = ns > UINT32_MAX ? UINT32_MAX : (uint32_t)ns;
}

/* Orders two latencies, for qsort. */
static int cmp_u32(const void *a, const void *b) {
  uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
  return x < y ? -1 : x > y;
}

/* Fills r from a run of calls over secs, with the server's CPU seconds;
 * frees the latencies. */
static void finish(result *r, lats *l, double secs, double server_cpu) {
  r->calls = (long)l->n;
  r->rate = secs > 0 ? (double)l->n / secs : 0;
  r->server_us = l->n ? server_cpu / (double)l->n * 1e6 : 0;
  r->p50_us = 0;
  if (l->n) {
    qsort(l->v, l->n, sizeof *l->v, cmp_u32);
    r->p50_us = l->v[l->n / 2] / 1e3;
  }
  free(l->v);
  *l = (lats){0};
}

/* Runs calls over the n open connections cs to t, one in flight on each,
 * until count have started or seconds have passed, then waits for those in
 * flight. With r NULL it only warms up. Returns 0 or -1. */
static int run_keepalive(const target *t, conn *cs, int n, long count,
                         double seconds, long *next_id, result *r) {
  long started = 0, inflight = 0;
  uint64_t t_start = now_ns(), limit = (uint64_t)(seconds * 1e9);
  uint64_t last = t_start;
  double cpu0 = cpu_s(t->srv->clock);
  lats l = {0};
  int rc = 0;
  for (int i = 0; i < n && rc == 0 && started < count; i++, started++) {
    rc = send_call(&cs[i], t->srv->port, (*next_id)++, false);
    inflight++;
  }
  struct pollfd pfd[MAX_CONNS];
  while (rc == 0 && inflight > 0) {
    for (int i = 0; i < n; i++)
      pfd[i] = (struct pollfd){
          .fd = cs[i].fd,
          .events = POLLIN | (cs[i].out_off < cs[i].out_len ? POLLOUT : 0)};
    int ready = poll(pfd, (nfds_t)n, 1000);
    if (ready < 0 && errno != EINTR) {
      fail("poll: %s", strerror(errno));
      rc = -1;
    }
    if (ready <= 0) {
      if (now_ns() - last > (uint64_t)STALL_S * 1000000000u) {
        fail("%s: no answer for a minute", t->name);
        rc = -1;
      }
      continue;
    }
    for (int i = 0; i < n && rc == 0; i++) {
      conn *c = &cs[i];
      if (pfd[i].revents == 0)
        continue;
      if (c->out_off < c->out_len && io_send(c) < 0)
        rc = -1;
      long got = 0;
      while (rc == 0 && (got = io_read(c)) > 0)
        ;
      if (rc == 0 && got < 0) {
        if (got == -2)
          fail("%s: the server closed a connection", t->name);
        rc = -1;
      }
      long used;
      while (rc == 0 && c->busy && (used = take_response(c)) != 0) {
        if (used < 0) {
          rc = -1;
          break;
        }
        last = now_ns();
        if (r)
          lats_add(&l, last - c->t0);
        consume(c, (size_t)used);
        c->busy = false;
        inflight--;
        if (started < count && last - t_start < limit) {
          started++;
          inflight++;
          rc = send_call(c, t->srv->port, (*next_id)++, false);
        }
      }
    }
  }
  if (r)
    finish(r, &l, (double)(now_ns() - t_start) / 1e9,
           cpu_s(t->srv->clock) - cpu0);
  free(l.v);
  return rc;
}

/* One call on a new connection with Connection: close, the server closing
 * first (so that no TIME_WAIT piles up on the client's ports). */
static int fresh_call(const target *t, long id) {
  conn c;
  int rc = conn_open(&c, t, true);
  if (rc == 0)
    rc = send_call(&c, t->srv->port, id, true);
  while (rc == 0 && c.out_off < c.out_len)
    rc = io_send(&c) == 1 ? 0 : -1;
  long used = 0;
  while (rc == 0 && (used = take_response(&c)) == 0) {
    long got = io_read(&c);
    if (got <= 0) {
      fail("%s: no whole answer on a new connection", t->name);
      rc = -1;
    }
  }
  if (rc == 0 && used < 0)
    rc = -1;
  if (rc == 0)
    consume(&c, (size_t)used);
  /* Then the end of the stream, and nothing else. */
  for (long got = 0; rc == 0 && got != -2;) {
    got = io_read(&c);
    if (got == 0 || got == -1 || c.in_len) {
      fail("%s: the server did not close the connection", t->name);
      rc = -1;
    }
  }
  conn_close(&c);
  return rc;
}

/* Runs count calls (or for seconds), each on a new connection, one after
 * the other. With r NULL it only warms up. Returns 0 or -1. */
static int run_fresh(const target *t, long count, double seconds, long *next_id,
                     result *r) {
  uint64_t t_start = now_ns(), limit = (uint64_t)(seconds * 1e9);
  double cpu0 = cpu_s(t->srv->clock);
  lats l = {0};
  int rc = 0;
  for (long i = 0; rc == 0 && i < count && now_ns() - t_start < limit; i++) {
    uint64_t t0 = now_ns();
    rc = fresh_call(t, (*next_id)++);
    if (rc == 0 && r)
      lats_add(&l, now_ns() - t0);
  }
  if (r)
    finish(r, &l, (double)(now_ns() - t_start) / 1e9,
           cpu_s(t->srv->clock) - cpu0);
  free(l.v);
  return rc;
}

/* The keep-alive contest at n connections: both targets' connections
 * opened, warmed up, then rounds runs each in turns; best[i] is target i's
 * best run. Returns 0 or -1. */
static int contest_keepalive(target *t, int n, long count, double seconds,
                             int rounds, long *next_id, result best[2]) {
  conn cs[2][MAX_CONNS];
  int rc = 0, opened[2] = {0, 0};
  for (int k = 0; k < 2 && rc == 0; k++)
    for (; opened[k] < n && rc == 0; opened[k]++)
      rc = conn_open(&cs[k][opened[k]], &t[k], false);
  for (int k = 0; k < 2 && rc == 0; k++)
    rc = run_keepalive(&t[k], cs[k], n, n, STALL_S, next_id, NULL);
  for (int i = 0; i < rounds && rc == 0; i++) {
    for (int k = 0; k < 2 && rc == 0; k++) {
      result r;
      server_drain(t[k].srv);
      rc = run_keepalive(&t[k], cs[k], n, count, seconds, next_id, &r);
      if (rc == 0 && r.rate > best[k].rate)
        best[k] = r;
    }
  }
  for (int k = 0; k < 2; k++)
    for (int i = 0; i < opened[k]; i++)
      conn_close(&cs[k][i]);
  return rc;
}

/* The new-connection contest, as contest_keepalive. */
static int contest_fresh(target *t, long count, double seconds, int rounds,
                         long *next_id, result best[2]) {
  int rc = 0;
  for (int k = 0; k < 2 && rc == 0; k++)
    rc = run_fresh(&t[k], 2, STALL_S, next_id, NULL);
  for (int i = 0; i < rounds && rc == 0; i++) {
    for (int k = 0; k < 2 && rc == 0; k++) {
      result r;
      server_drain(t[k].srv);
      rc = run_fresh(&t[k], count, seconds, next_id, &r);
      if (rc == 0 && r.rate > best[k].rate)
        best[k] = r;
    }
  }
  return rc;
}

/* Prints one shape's figures for both targets. */
static void print_figures(const target *t, const char *shape,
                          const result best[2]) {
  for (int k = 0; k < 2; k++)
    printf("%s_%s_rate %.1f\n%s_%s_p50_us %.1f\n%s_%s_server_us %.2f\n"
           "%s_%s_calls %ld\n",
           t[k].name, shape, best[k].rate, t[k].name, shape, best[k].p50_us,
           t[k].name, shape, best[k].server_us, t[k].name, shape,
           best[k].calls);
}

/* The client's TLS context: TLS 1.2 or later, trusting cert_path alone. */
static SSL_CTX *client_tls(const char *cert_path) {
  SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());
  if (ctx == NULL || SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION) != 1 ||
      SSL_CTX_load_verify_locations(ctx, cert_path, NULL) != 1) {
    fail("cannot set up the TLS client");
    SSL_CTX_free(ctx);
    return NULL;
  }
  SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
  /* A server that closes without close_notify ends the stream, as plain
   * TCP's end does. */
  SSL_CTX_set_options(ctx, SSL_OP_IGNORE_UNEXPECTED_EOF);
  SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE |
                            SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
  return ctx;
}

int main(int argc, char **argv) {
  char *end1 = NULL, *end2 = NULL, *end3 = NULL;
  long calls = argc == 4 ? strtol(argv[1], &end1, 10) : 0;
  double seconds = argc == 4 ? strtod(argv[2], &end2) : 0;
  long rounds = argc == 4 ? strtol(argv[3], &end3, 10) : 0;
  if (argc != 4 || *end1 || *end2 || *end3 || calls < 1 || seconds <= 0 ||
      rounds < 1 || rounds > 100) {
    fprintf(stderr, "usage: bench_tls CALLS SECONDS ROUNDS\n");
    return 2;
  }
  signal(SIGPIPE, SIG_IGN);
  ssize_t n = readlink("/proc/self/exe", bin_dir, sizeof bin_dir - 1);
  bin_dir[n > 0 ? n : 0] = '\0';
  char *slash = strrchr(bin_dir, '/');
  if (slash)
    *slash = '\0';
  const char *tmp = getenv("TMPDIR");
  char dir[4096], cert[4200], key[4200];
  snprintf(dir, sizeof dir, "%s/bench_tls.XXXXXX", tmp && *tmp ? tmp : "/tmp");
  if (mkdtemp(dir) == NULL) {
    fail("mkdtemp: %s", strerror(errno));
    return 1;
  }
  snprintf(cert, sizeof cert, "%s/cert.pem", dir);
  snprintf(key, sizeof key, "%s/key.pem", dir);
  server plain = {.pid = -1, .err = -1}, https = {.pid = -1, .err = -1};
  SSL_CTX *ctx = NULL;
  int rc = make_cert(cert, key);
  const char *plain_args[] = {"--http", "127.0.0.1:0", NULL};
  const char *tls_args[] = {"--http",    "127.0.0.1:0", "--tls-cert", cert,
                            "--tls-key", key,           NULL};
  if (rc == 0)
    rc = server_start(&plain, plain_args);
  if (rc == 0)
    rc = server_start(&https, tls_args);
  if (rc == 0 && (ctx = client_tls(cert)) == NULL)
    rc = -1;
  target t[2] = {{.name = "plain", .srv = &plain},
                 {.name = "tls", .srv = &https, .tls = ctx}};
  long next_id = 1;
  static const int conns[] = {1, MAX_CONNS};
  for (size_t i = 0; i < sizeof conns / sizeof *conns && rc == 0; i++) {
    result best[2] = {{0}};
    char shape[16];
    rc = contest_keepalive(t, conns[i], calls, seconds, (int)rounds, &next_id,
                           best);
    snprintf(shape, sizeof shape, "%d", conns[i]);
    if (rc == 0)
      print_figures(t, shape, best);
  }
  if (rc == 0) {
    result best[2] = {{0}};
    rc = contest_fresh(t, calls / 10 + 2, seconds, (int)rounds, &next_id, best);
    if (rc == 0)
      print_figures(t, "new", best);
  }
  /* Both are stopped whatever the other's verdict. */
  int plain_rc = server_stop(&plain), https_rc = server_stop(&https);
  if (plain_rc != 0 || https_rc != 0)
    rc = -1;
  SSL_CTX_free(ctx);
  unlink(cert);
  unlink(key);
  rmdir(dir);
  return rc == 0 ? 0 : 1;
}
