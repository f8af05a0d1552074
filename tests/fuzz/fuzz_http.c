/* libFuzzer target: the Streamable HTTP request path, raw bytes on a
 * loopback connection to an in-process mcp_http.
 *
 * One server per process, on 127.0.0.1 and an ephemeral port, in
 * external-loop mode: this thread drives it (mcp_http_run), so no other
 * thread runs and each input is processed the same way every time. It
 * serves the fixture of fixture.h behind the OAuth resource server (the
 * key set of jwt_keys.h and an HS256 secret). Deferred calls are finished
 * between turns of the loop.
 *
 * Input: the bytes of one or more HTTP requests, written as given on one
 * new connection; the reply is read until the server closes it or stays
 * quiet. Placeholders make the deep paths reachable:
 *   @TOKEN@     a valid bearer token with every scope the fixture uses
 *   @TOKEN_RO@  a valid token with scope data:read only (same subject)
 *   @SID@       the id of a legacy session the target initializes first
 *   @NEXT@      separates requests; each part's own
 *   @LEN@       is its body's length (the bytes after its first blank
 *               line)
 * Afterwards every session whose id appeared in a reply is deleted, so
 * inputs do not pile up state.
 *
 * Checked beyond "no crash, no leak": the server answers with HTTP/1.x
 * when it answers at all, and mcp_http_run never fails. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <mcp/http.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "engine.h"
#include "fixture.h"
#include "jwt_keys.h"
#include "jwt_sign.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_INPUT (64u << 10)
#define MAX_REPLY (1u << 20)
#define MAX_SIDS 16

static mcp_server *srv;
static mcp_http *http;
static uint16_t port;
static char *token_all, *token_ro;
static bool print;

/* ---- helpers ------------------------------------------------------------- */

static unsigned long long now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (unsigned long long)ts.tv_sec * 1000 +
         (unsigned long long)ts.tv_nsec / 1000000;
}

/* An HS256 token for the fixture's resource, valid until 2100. */
static char *mint(const char *scope) {
  char payload[512];
  snprintf(payload, sizeof payload,
           "{\"iss\":\"%s\",\"aud\":\"%s\",\"sub\":\"fuzz-user\","
           "\"exp\":4102444800,\"iat\":1700000000,\"scope\":\"%s\"}",
           FUZZ_ISSUER, FUZZ_RESOURCE, scope);
  static const char header[] = "{\"alg\":\"HS256\",\"typ\":\"at+jwt\"}";
  return tc_jwt_hs256(header, sizeof header - 1, payload, strlen(payload),
                      FUZZ_HS256_SECRET, sizeof FUZZ_HS256_SECRET - 1);
}

/* Opens a connection to the server. Each comes from the next of 254
 * loopback source addresses (127.0.1.x): at a thousand inputs a second the
 * connections this side closes would otherwise use up the ephemeral ports
 * of one address while they wait in TIME_WAIT. */
static int connect_client(void) {
  static unsigned next_source;
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    perror("fuzz_http: socket");
    abort();
  }
  struct sockaddr_in from = {.sin_family = AF_INET,
                             .sin_addr.s_addr =
                                 htonl(0x7F000100u + 1 + next_source++ % 254)};
  struct sockaddr_in sa = {.sin_family = AF_INET,
                           .sin_port = htons(port),
                           .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  /* Loopback completes the handshake in the kernel: no accept needed. A
   * signal (libFuzzer's timer) may interrupt connect, which then goes on
   * by itself: wait for it. */
  int rc = bind(fd, (struct sockaddr *)&from, sizeof from);
  if (rc == 0 && (rc = connect(fd, (struct sockaddr *)&sa, sizeof sa)) != 0 &&
      errno == EINTR) {
    struct pollfd p = {.fd = fd, .events = POLLOUT};
    int err = 0;
    socklen_t len = sizeof err;
    while (poll(&p, 1, 1000) < 0 && errno == EINTR)
      ;
    rc = getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) == 0 && err == 0 ? 0
                                                                           : -1;
  }
  if (rc != 0) {
    perror("fuzz_http: connect");
    abort();
  }
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
  return fd;
}

/* Reads what is there; sets *eof when the server closed. */
static bool drain(int fd, mcp__buf *reply, bool *eof) {
  bool got = false;
  char buf[16384];
  for (;;) {
    ssize_t n = recv(fd, buf, sizeof buf, 0);
    if (n > 0) {
      got = true;
      if (reply->len + (size_t)n <= MAX_REPLY)
        mcp__buf_append(reply, buf, (size_t)n);
      continue;
    }
    if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR))
      *eof = true;
    return got;
  }
}

/* Turns the server's loop until the client side has seen the server close,
 * or two turns in a row found nothing to do, or 250 ms passed. fd may be
 * -1 (only the server's work). The server runs on this thread and loopback
 * delivers during send(), so "nothing readable, nothing deferred" means
 * nothing will happen until the client acts: no need to wait. */
static void pump(int fd, mcp__buf *reply) {
  unsigned long long deadline = now_ms() + 250;
  int quiet = 0;
  bool eof = false;
  while (quiet < 2 && !eof && now_ms() < deadline) {
    if (mcp_http_run(http) != 0)
      abort();
    bool busy = fuzz_finish_deferred() > 0;
    if (fd >= 0 && drain(fd, reply, &eof))
      busy = true;
    struct pollfd p[2] = {{.fd = mcp_http_backend_fd(http), .events = POLLIN},
                          {.fd = fd, .events = POLLIN}};
    if (!busy && mcp_http_backend_timeout(http) != 0 &&
        poll(p, fd >= 0 ? 2 : 1, 0) == 0)
      quiet++;
    else
      quiet = 0;
  }
}

static void send_all(int fd, const char *p, size_t n, mcp__buf *reply) {
  unsigned long long deadline = now_ms() + 250;
  while (n > 0 && now_ms() < deadline) {
    ssize_t k = send(fd, p, n, MSG_NOSIGNAL);
    if (k > 0) {
      p += k;
      n -= (size_t)k;
    } else if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      pump(fd, reply); /* let the server read */
    } else if (!(k < 0 && errno == EINTR)) {
      return; /* the server closed: the rest is not read */
    }
  }
}

/* One exchange on a new connection; the reply goes to *reply. */
static void exchange(const char *req, size_t len, mcp__buf *reply) {
  int fd = connect_client();
  send_all(fd, req, len, reply);
  pump(fd, reply);
  close(fd);
  /* Let the server see the close and clean the connection up. */
  pump(-1, NULL);
  if (reply->len > 0 && strncmp(reply->data, "HTTP/1.", 7) != 0)
    abort();
  if (print)
    fprintf(stderr, "> %.*s\n< %.*s\n", (int)len, req, (int)reply->len,
            reply->data ? reply->data : "");
}

/* Collects the Mcp-Session-Id values of a reply. */
static size_t session_ids(const mcp__buf *reply, char ids[][128], size_t n,
                          size_t max) {
  static const char name[] = "\r\nMcp-Session-Id:";
  const char *p = reply->data, *end = p ? p + reply->len : NULL;
  while (p && n < max) {
    const char *hit = NULL;
    for (const char *q = p; q + sizeof name - 1 <= end; q++) {
      if (strncasecmp(q, name, sizeof name - 1) == 0) {
        hit = q;
        break;
      }
    }
    if (hit == NULL)
      break;
    const char *v = hit + sizeof name - 1;
    while (v < end && *v == ' ')
      v++;
    size_t k = 0;
    while (v + k < end && v[k] != '\r' && k < 127)
      k++;
    memcpy(ids[n], v, k);
    ids[n][k] = '\0';
    n++;
    p = v + k;
  }
  return n;
}

static void post(const char *body, const char *sid, mcp__buf *reply) {
  mcp__buf req = {0};
  mcp__buf_printf(&req,
                  "POST /mcp HTTP/1.1\r\nHost: localhost\r\n"
                  "Authorization: Bearer %s\r\n"
                  "Content-Type: application/json\r\n"
                  "Accept: application/json, text/event-stream\r\n",
                  token_all);
  if (sid)
    mcp__buf_printf(&req,
                    "Mcp-Session-Id: %s\r\n"
                    "MCP-Protocol-Version: 2025-11-25\r\n",
                    sid);
  mcp__buf_printf(&req, "Content-Length: %zu\r\n\r\n%s", strlen(body), body);
  if (req.err)
    abort();
  exchange(req.data, req.len, reply);
  mcp__buf_free(&req);
}

/* Initializes a legacy session; its id goes to sid ("" on failure). */
static void new_session(char sid[128]) {
  mcp__buf reply = {0};
  post("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{"
       "\"protocolVersion\":\"2025-11-25\",\"capabilities\":{\"elicitation\":"
       "{},\"sampling\":{},\"roots\":{}},\"clientInfo\":{\"name\":\"fuzz\","
       "\"version\":\"1\"}}}",
       NULL, &reply);
  char ids[1][128];
  sid[0] = '\0';
  if (session_ids(&reply, ids, 0, 1) == 1)
    memcpy(sid, ids[0], 128);
  mcp__buf_free(&reply);
  if (sid[0] == '\0')
    return;
  mcp__buf done = {0};
  post("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}", sid,
       &done);
  mcp__buf_free(&done);
}

static void delete_session(const char *sid) {
  const char *tokens[] = {token_all, token_ro};
  for (int i = 0; i < 2; i++) {
    mcp__buf req = {0}, reply = {0};
    mcp__buf_printf(&req,
                    "DELETE /mcp HTTP/1.1\r\nHost: localhost\r\n"
                    "Authorization: Bearer %s\r\nMcp-Session-Id: %s\r\n\r\n",
                    tokens[i], sid);
    if (req.err)
      abort();
    exchange(req.data, req.len, &reply);
    bool gone = reply.len > 12 && reply.data[9] == '2';
    mcp__buf_free(&req);
    mcp__buf_free(&reply);
    if (gone)
      return;
  }
}

/* ---- placeholders ---------------------------------------------------------
 */

static const char *find(const char *p, const char *end, const char *what) {
  size_t n = strlen(what);
  for (; p + n <= end; p++)
    if (memcmp(p, what, n) == 0)
      return p;
  return NULL;
}

/* Appends src[0..len) to out with @TOKEN@, @TOKEN_RO@ and @SID@ replaced. */
static void expand(mcp__buf *out, const char *src, size_t len,
                   const char *sid) {
  static const struct {
    const char *mark;
    int which;
  } marks[] = {{"@TOKEN_RO@", 1}, {"@TOKEN@", 0}, {"@SID@", 2}};
  const char *end = src + len;
  while (src < end) {
    if (*src == '@') {
      size_t m = 0;
      for (; m < sizeof marks / sizeof marks[0]; m++) {
        size_t n = strlen(marks[m].mark);
        if ((size_t)(end - src) >= n && memcmp(src, marks[m].mark, n) == 0)
          break;
      }
      if (m < sizeof marks / sizeof marks[0]) {
        const char *with = marks[m].which == 0   ? token_all
                           : marks[m].which == 1 ? token_ro
                                                 : sid;
        mcp__buf_puts(out, with);
        src += strlen(marks[m].mark);
        continue;
      }
    }
    mcp__buf_putc(out, *src++);
  }
}

/* Builds the bytes to send: each @NEXT@-separated part expanded, then its
 * @LEN@ replaced by the length of the part's body. */
static void build(mcp__buf *out, const char *in, size_t len, const char *sid) {
  const char *end = in + len;
  while (in <= end) {
    const char *next = find(in, end, "@NEXT@");
    const char *stop = next ? next : end;
    mcp__buf part = {0};
    expand(&part, in, (size_t)(stop - in), sid);
    const char *p = part.data ? part.data : "", *pend = p + part.len;
    const char *blank = find(p, pend, "\r\n\r\n");
    size_t body = blank ? (size_t)(pend - blank - 4) : 0;
    for (const char *q = p; q < pend;) {
      const char *mark = find(q, pend, "@LEN@");
      if (mark == NULL) {
        mcp__buf_append(out, q, (size_t)(pend - q));
        break;
      }
      mcp__buf_append(out, q, (size_t)(mark - q));
      /* The mark is in the body itself: the body loses those 5 bytes. */
      size_t n = blank && mark > blank ? body - 5 : body;
      mcp__buf_printf(out, "%zu", n);
      q = mark + 5;
    }
    mcp__buf_free(&part);
    if (next == NULL)
      break;
    in = next + 6;
  }
}

/* ---- the target ---------------------------------------------------------- */

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc;
  (void)argv;
  signal(SIGPIPE, SIG_IGN);
  print = getenv("FUZZ_PRINT") != NULL;
  srv = fuzz_server_new(false);
  token_all = mint("data:read data:write admin");
  token_ro = mint("data:read");
  static const char *const issuers[] = {FUZZ_ISSUER, NULL};
  static mcp_auth_options auth = {
      .resource = FUZZ_RESOURCE,
      .authorization_servers = issuers,
      .issuer = FUZZ_ISSUER,
      .jwks = fuzz_jwks,
      .hs256_secret = FUZZ_HS256_SECRET,
      .hs256_secret_len = sizeof FUZZ_HS256_SECRET - 1,
  };
  const mcp_http_options opts = {
      .external_loop = true,
      .connection_timeout_s = 3,
      .keepalive_s = 1,
      .max_connections = 1024,
      .per_ip_connections = 1024,
      .max_sessions = 256,
      .session_idle_s = 30,
      .max_body = 1u << 20,
      .auth = &auth,
  };
  if (mcp_http_start(srv, &opts, &http) != 0)
    abort();
  port = mcp_http_port(http);
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size == 0 || size > MAX_INPUT)
    return 0;
  const char *in = (const char *)data;
  char ids[MAX_SIDS][128];
  size_t nids = 0;
  if (find(in, in + size, "@SID@") != NULL) {
    new_session(ids[0]);
    if (ids[0][0] != '\0')
      nids = 1;
  }
  mcp__buf req = {0}, reply = {0};
  build(&req, in, size, nids ? ids[0] : "none");
  if (req.err)
    abort();
  exchange(req.data ? req.data : "", req.len, &reply);
  nids = session_ids(&reply, ids, nids, MAX_SIDS);
  mcp__buf_free(&req);
  mcp__buf_free(&reply);
  for (size_t i = 0; i < nids; i++)
    if (i == 0 || strcmp(ids[i], ids[0]) != 0)
      delete_session(ids[i]);
  return 0;
}
