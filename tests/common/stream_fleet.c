/* A fleet of long-lived event streams on one epoll set (stream_fleet.h).
 *
 * Each connection walks a small script: a legacy stream's requests one
 * after the other on its keep-alive connection, then the request whose
 * answer is the event stream; a deleter (sf_close) sends DELETE for its
 * share of the legacy sessions. Answers before the stream are read whole
 * (Content-Length); the stream itself is chunked (HTTP/1.1, length
 * unknown), de-chunked into the text the stream carried. */
#define _DEFAULT_SOURCE /* IP_BIND_ADDRESS_NO_PORT */
#include "stream_fleet.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "lc_buf.h"

#ifndef IP_BIND_ADDRESS_NO_PORT
#define IP_BIND_ADDRESS_NO_PORT 24 /* Linux 4.2 */
#endif

/* Source addresses used in turn: 127.0.0.1 ... 127.0.0.SOURCES. */
#define SOURCES 4
/* Most text one stream may receive after it opened. */
#define MAX_TEXT ((size_t)64 << 10)
/* Most bytes of one answer's head. */
#define MAX_HEAD ((size_t)16 << 10)
/* epoll data of a deleter: its index with this bit set. */
#define DELETER_BIT ((uint64_t)1 << 32)

#define LEGACY_VERSION "2025-11-25"
#define MODERN_VERSION "2026-07-28"

long sf_now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (long)ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

/* ---- buffers ------------------------------------------------------------- */

/* ---- the fleet ----------------------------------------------------------- */

typedef enum step {
  ST_WAITING,    /* not started */
  ST_CONNECTING, /* connect in progress */
  ST_INIT,       /* legacy: waiting for the answer to initialize */
  ST_NOTIFY,     /* ... to notifications/initialized */
  ST_SUBSCRIBE,  /* ... to resources/subscribe */
  ST_HEAD,       /* the stream's request sent: waiting for its head */
  ST_OPENING,    /* the event stream began: waiting for its first event */
  ST_OPEN,
  ST_DELETE, /* a deleter waiting for the answer to a DELETE */
  ST_DONE,   /* closed by this side */
  ST_FAILED
} step;

typedef enum chunk_state { CH_SIZE, CH_DATA, CH_DATA_END, CH_END } chunk_state;

typedef struct conn {
  int fd;
  sf_kind kind;
  bool deleter;
  step st;
  uint32_t events; /* registered with epoll */
  char id[128];    /* session id, or the listen id as JSON text */
  lc_buf in, out;
  size_t out_off;
  chunk_state chunk;
  size_t chunk_left;
  lc_buf text;      /* the event stream, de-chunked */
  size_t opened_at; /* where the text after the opening event starts */
  bool seen;        /* the needle came */
  size_t job;       /* a deleter: its next entry of todo */
} conn;

struct sf_fleet {
  uint16_t port;
  char uri[208];
  int epfd;
  conn *c;
  size_t n, cap;
  size_t next_start; /* the first stream still ST_WAITING */
  size_t parallel;   /* streams set up at a time */
  size_t setting_up; /* streams between ST_CONNECTING and ST_OPENING */
  size_t nopen;      /* streams ST_OPEN */
  const char *needle;
  size_t nseen; /* open streams that received needle */
  conn *del;    /* deleters */
  size_t ndel, deleting;
  size_t *todo; /* indexes of the legacy streams to DELETE */
  size_t ntodo;
  bool failed;
  unsigned long listen_no;
  char err[512];
};

static const char *kind_name(const conn *c) {
  if (c->deleter)
    return "deleter";
  return c->kind == SF_LEGACY   ? "legacy"
         : c->kind == SF_MODERN ? "modern"
                                : "bare";
}

static const char *const STEP_NAMES[] = {
    "waiting",   "connecting",  "initialize", "notifications/initialized",
    "subscribe", "stream head", "opening",    "open",
    "DELETE",    "done",        "failed"};

static void conn_close(sf_fleet *f, conn *c) {
  if (c->fd >= 0) {
    epoll_ctl(f->epfd, EPOLL_CTL_DEL, c->fd, NULL);
    close(c->fd);
  }
  c->fd = -1;
}

/* Leaves step st (for the counts) as c moves to next. */
static void conn_leave(sf_fleet *f, conn *c, step next) {
  if (!c->deleter) {
    bool was_setting = c->st >= ST_CONNECTING && c->st <= ST_OPENING;
    bool will_set = next >= ST_CONNECTING && next <= ST_OPENING;
    if (was_setting && !will_set)
      f->setting_up--;
    if (!was_setting && will_set)
      f->setting_up++;
    if (c->st == ST_OPEN && next != ST_OPEN) {
      f->nopen--;
      if (c->seen)
        f->nseen--;
    }
    if (c->st != ST_OPEN && next == ST_OPEN)
      f->nopen++;
  } else if (c->st != ST_DONE && c->st != ST_FAILED &&
             (next == ST_DONE || next == ST_FAILED)) {
    f->deleting--;
  }
  c->st = next;
}

/* Fails c: the first failure is what sf_error reports. */
static void conn_fail(sf_fleet *f, conn *c, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
static void conn_fail(sf_fleet *f, conn *c, const char *fmt, ...) {
  if (!f->failed) {
    size_t i = c->deleter ? (size_t)(c - f->del) : (size_t)(c - f->c);
    int n =
        snprintf(f->err, sizeof f->err, "%s %s %zu, at %s: ", kind_name(c),
                 c->deleter ? "connection" : "stream", i, STEP_NAMES[c->st]);
    va_list ap;
    va_start(ap, fmt);
    if (n > 0 && (size_t)n < sizeof f->err)
      vsnprintf(f->err + n, sizeof f->err - (size_t)n, fmt, ap);
    va_end(ap);
  }
  f->failed = true;
  conn_close(f, c);
  conn_leave(f, c, ST_FAILED);
}

static int watch(sf_fleet *f, conn *c, uint32_t events) {
  if (c->events == events)
    return 0;
  struct epoll_event ev = {.events = events,
                           .data.u64 =
                               c->deleter ? DELETER_BIT | (uint64_t)(c - f->del)
                                          : (uint64_t)(c - f->c)};
  int op = c->events ? EPOLL_CTL_MOD : EPOLL_CTL_ADD;
  if (epoll_ctl(f->epfd, op, c->fd, &ev) != 0)
    return -1;
  c->events = events;
  return 0;
}

/* Writes what the socket takes of c's pending bytes; watches for room
 * while some are left. */
static void conn_flush(sf_fleet *f, conn *c) {
  while (c->out_off < c->out.n) {
    ssize_t w =
        send(c->fd, c->out.p + c->out_off, c->out.n - c->out_off, MSG_NOSIGNAL);
    if (w < 0 && errno == EINTR)
      continue;
    if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
      break;
    if (w <= 0) {
      conn_fail(f, c, "send: %s", strerror(errno));
      return;
    }
    c->out_off += (size_t)w;
  }
  if (c->out_off == c->out.n) {
    c->out.n = c->out_off = 0;
  }
  if (watch(f, c, c->out.n ? EPOLLIN | EPOLLOUT : EPOLLIN) != 0)
    conn_fail(f, c, "epoll_ctl: %s", strerror(errno));
}

/* Queues one request on c and sends it: method on /mcp with the headers
 * every request of its era carries, extra header lines, and body (JSON;
 * NULL for none). */
static void conn_request(sf_fleet *f, conn *c, const char *method,
                         const char *extra, const char *body) {
  lc_buf_fmt(&c->out,
             "%s /mcp HTTP/1.1\r\nHost: 127.0.0.1:%u\r\nAccept: %s\r\n%s",
             method, (unsigned)f->port,
             body ? "application/json, text/event-stream" : "text/event-stream",
             extra);
  if (body)
    lc_buf_fmt(
        &c->out,
        "Content-Type: application/json\r\nContent-Length: %zu\r\n\r\n%s",
        strlen(body), body);
  else
    lc_buf_add(&c->out, "\r\n", 2);
  conn_flush(f, c);
}

/* The header lines that name c's session. */
static const char *session_headers(const conn *c, char *buf, size_t size) {
  snprintf(buf, size,
           "MCP-Protocol-Version: " LEGACY_VERSION "\r\nMcp-Session-Id: %s\r\n",
           c->id);
  return buf;
}

/* The next request of c's script, for the step it has just finished. */
static void conn_next(sf_fleet *f, conn *c) {
  char h[256], body[1024];
  if (c->deleter) {
    if (c->job >= f->ntodo) {
      conn_close(f, c);
      conn_leave(f, c, ST_DONE);
      return;
    }
    conn_leave(f, c, ST_DELETE);
    conn_request(f, c, "DELETE",
                 session_headers(&f->c[f->todo[c->job]], h, sizeof h), NULL);
    return;
  }
  switch (c->st) {
  case ST_CONNECTING:
    if (c->kind == SF_LEGACY) {
      conn_leave(f, c, ST_INIT);
      conn_request(f, c, "POST", "",
                   "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\","
                   "\"params\":{\"protocolVersion\":\"" LEGACY_VERSION
                   "\",\"capabilities\":{},\"clientInfo\":{\"name\":"
                   "\"stream_fleet\",\"version\":\"1\"}}}");
    } else if (c->kind == SF_MODERN) {
      conn_leave(f, c, ST_HEAD);
      snprintf(c->id, sizeof c->id, "\"L%lu\"", ++f->listen_no);
      snprintf(body, sizeof body,
               "{\"jsonrpc\":\"2.0\",\"id\":%s,\"method\":\"subscriptions/"
               "listen\",\"params\":{\"_meta\":{\"io.modelcontextprotocol/"
               "protocolVersion\":\"" MODERN_VERSION
               "\",\"io.modelcontextprotocol/clientCapabilities\":{}},"
               "\"notifications\":{\"resourceSubscriptions\":[\"%s\"]}}}",
               c->id, f->uri);
      conn_request(f, c, "POST",
                   "MCP-Protocol-Version: " MODERN_VERSION
                   "\r\nMcp-Method: subscriptions/listen\r\n",
                   body);
    } else {
      conn_leave(f, c, ST_HEAD);
      conn_request(f, c, "GET", "", NULL);
    }
    break;
  case ST_INIT:
    conn_leave(f, c, ST_NOTIFY);
    conn_request(f, c, "POST", session_headers(c, h, sizeof h),
                 "{\"jsonrpc\":\"2.0\",\"method\":"
                 "\"notifications/initialized\"}");
    break;
  case ST_NOTIFY:
    conn_leave(f, c, ST_SUBSCRIBE);
    snprintf(body, sizeof body,
             "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"resources/"
             "subscribe\",\"params\":{\"uri\":\"%s\"}}",
             f->uri);
    conn_request(f, c, "POST", session_headers(c, h, sizeof h), body);
    break;
  case ST_SUBSCRIBE:
    conn_leave(f, c, ST_HEAD);
    conn_request(f, c, "GET", session_headers(c, h, sizeof h), NULL);
    break;
  default:
    break;
  }
}

/* Starts c's connection from its source address. */
static void conn_start(sf_fleet *f, conn *c, size_t i) {
  *c = (conn){.fd = -1, .kind = c->kind, .deleter = c->deleter, .job = c->job};
  conn_leave(f, c, ST_CONNECTING);
  c->fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (c->fd < 0) {
    conn_fail(f, c, "socket: %s%s", strerror(errno),
              errno == EMFILE ? " (raise RLIMIT_NOFILE)" : "");
    return;
  }
  int one = 1;
  struct sockaddr_in src = {.sin_family = AF_INET};
  src.sin_addr.s_addr = htonl(INADDR_LOOPBACK + (uint32_t)(i % SOURCES));
  struct sockaddr_in dst = {.sin_family = AF_INET, .sin_port = htons(f->port)};
  dst.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (setsockopt(c->fd, IPPROTO_IP, IP_BIND_ADDRESS_NO_PORT, &one,
                 sizeof one) != 0 ||
      bind(c->fd, (struct sockaddr *)&src, sizeof src) != 0) {
    conn_fail(f, c, "bind to 127.0.0.%zu: %s", 1 + i % SOURCES,
              strerror(errno));
    return;
  }
  if (connect(c->fd, (struct sockaddr *)&dst, sizeof dst) != 0 &&
      errno != EINPROGRESS) {
    conn_fail(f, c, "connect: %s%s", strerror(errno),
              errno == EADDRNOTAVAIL ? " (no ephemeral port left)" : "");
    return;
  }
  if (watch(f, c, EPOLLOUT) != 0)
    conn_fail(f, c, "epoll_ctl: %s", strerror(errno));
}

/* ---- answers ------------------------------------------------------------- */

typedef struct head {
  int status;
  long length; /* -1: none given */
  bool chunked, sse;
  char sid[128];
  size_t size; /* of the head, with its blank line */
} head;

/* The value of header line (len bytes) when it is called name, else NULL. */
static const char *header_value(const char *line, size_t len,
                                const char *name) {
  size_t n = strlen(name);
  if (len <= n || strncasecmp(line, name, n) != 0 || line[n] != ':')
    return NULL;
  const char *v = line + n + 1;
  while (*v == ' ' || *v == '\t')
    v++;
  return v;
}

/* Reads the answer's head at the front of in: 1 when whole, 0 when more
 * must come, -1 when it is no HTTP/1.1 answer. */
static int parse_head(const lc_buf *in, head *h) {
  *h = (head){.length = -1};
  const char *end = in->n ? strstr(in->p, "\r\n\r\n") : NULL;
  if (end == NULL)
    return in->n > MAX_HEAD ? -1 : 0;
  if (strncmp(in->p, "HTTP/1.1 ", 9) != 0)
    return -1;
  h->status = atoi(in->p + 9);
  h->size = (size_t)(end - in->p) + 4;
  for (const char *line = strstr(in->p, "\r\n") + 2; line < end;) {
    const char *eol = strstr(line, "\r\n");
    size_t len = (size_t)(eol - line);
    const char *v;
    if ((v = header_value(line, len, "Content-Length")))
      h->length = atol(v);
    else if ((v = header_value(line, len, "Transfer-Encoding")))
      h->chunked = strncasecmp(v, "chunked", 7) == 0;
    else if ((v = header_value(line, len, "Content-Type")))
      h->sse = strncasecmp(v, "text/event-stream", 17) == 0;
    else if ((v = header_value(line, len, "Mcp-Session-Id")))
      snprintf(h->sid, sizeof h->sid, "%.*s", (int)(eol - v), v);
    line = eol + 2;
  }
  return 1;
}

/* An answer read whole (the steps before the stream, and DELETE): checks
 * its status and moves c on. Returns 1 when one was taken, 0 when more
 * must come. */
static int take_answer(sf_fleet *f, conn *c) {
  head h;
  int rc = parse_head(&c->in, &h);
  if (rc < 0) {
    conn_fail(f, c, "not an HTTP/1.1 answer: %.120s", c->in.p);
    return 0;
  }
  if (rc == 0)
    return 0;
  size_t body = h.status == 204 || h.status == 304
                    ? 0
                    : (h.length >= 0 ? (size_t)h.length : (size_t)-1);
  if (body == (size_t)-1) {
    conn_fail(f, c, "HTTP %d without Content-Length: %.120s", h.status,
              c->in.p);
    return 0;
  }
  if (c->in.n < h.size + body)
    return 0;
  const char *text = c->in.p + h.size;
  int want = c->st == ST_NOTIFY ? 202 : c->st == ST_DELETE ? 204 : 200;
  bool ok = h.status == want;
  if (ok && (c->st == ST_INIT || c->st == ST_SUBSCRIBE))
    ok = strstr(text, "\"result\"") != NULL;
  if (ok && c->st == ST_INIT) {
    ok = h.sid[0] != '\0';
    snprintf(c->id, sizeof c->id, "%s", h.sid);
  }
  if (!ok) {
    conn_fail(f, c, "HTTP %d (wanted %d): %.200s", h.status, want, text);
    return 0;
  }
  lc_buf_drop(&c->in, h.size + body);
  if (c->deleter)
    c->job += f->ndel;
  conn_next(f, c);
  return 1;
}

/* De-chunks what came of the event stream into c->text. Returns 1 when
 * the stream ended (its last chunk came), 0 when it goes on, -1 when the
 * framing is wrong. */
static int dechunk(conn *c) {
  size_t pos = 0;
  int ended = 0;
  while (pos < c->in.n && !ended) {
    if (c->chunk == CH_SIZE || c->chunk == CH_DATA_END) {
      char *eol = strstr(c->in.p + pos, "\r\n");
      if (eol == NULL)
        break;
      if (c->chunk == CH_DATA_END) {
        if (eol != c->in.p + pos)
          return -1;
        c->chunk = CH_SIZE;
      } else {
        char *end;
        unsigned long size = strtoul(c->in.p + pos, &end, 16);
        if (end == c->in.p + pos)
          return -1;
        c->chunk_left = size;
        c->chunk = size ? CH_DATA : CH_END;
        ended = size == 0;
      }
      pos = (size_t)(eol - c->in.p) + 2;
    } else {
      size_t take =
          c->in.n - pos < c->chunk_left ? c->in.n - pos : c->chunk_left;
      lc_buf_add(&c->text, c->in.p + pos, take);
      pos += take;
      c->chunk_left -= take;
      if (c->chunk_left == 0)
        c->chunk = CH_DATA_END;
    }
  }
  lc_buf_drop(&c->in, pos);
  return ended;
}

static void check_seen(sf_fleet *f, conn *c) {
  if (c->st == ST_OPEN && f->needle && !c->seen &&
      strstr(c->text.p + c->opened_at, f->needle)) {
    c->seen = true;
    f->nseen++;
  }
}

/* The event stream of c: its head, then its events. */
static void take_stream(sf_fleet *f, conn *c) {
  if (c->st == ST_HEAD) {
    head h;
    int rc = parse_head(&c->in, &h);
    if (rc == 0)
      return;
    if (rc < 0 || h.status != 200 || !h.sse || !h.chunked) {
      conn_fail(f, c, "no chunked event stream: %.200s", c->in.p);
      return;
    }
    lc_buf_drop(&c->in, h.size);
    lc_buf_add(&c->text, "", 0);
    c->chunk = CH_SIZE;
    conn_leave(f, c, ST_OPENING);
  }
  int ended = dechunk(c);
  if (ended < 0) {
    conn_fail(f, c, "bad chunked framing: %.80s", c->in.p);
    return;
  }
  if (c->st == ST_OPENING) {
    const char *first = strstr(c->text.p, "\n\n");
    if (first) {
      if (c->kind == SF_MODERN &&
          (strstr(c->text.p, "notifications/subscriptions/acknowledged") ==
               NULL ||
           strstr(c->text.p, "notifications/subscriptions/acknowledged") >
               first)) {
        conn_fail(f, c, "the first event is no acknowledgement: %.200s",
                  c->text.p);
        return;
      }
      c->opened_at = (size_t)(first - c->text.p) + 2;
      conn_leave(f, c, ST_OPEN);
    }
  }
  check_seen(f, c);
  if (c->text.n > MAX_TEXT)
    conn_fail(f, c, "more than %zu bytes received", MAX_TEXT);
  else if (ended)
    conn_fail(f, c, "the server ended the stream: %.200s",
              c->text.p + c->opened_at);
}

/* Reads what came on c and acts on it. */
static void conn_readable(sf_fleet *f, conn *c) {
  char chunk[16384];
  bool closed = false;
  for (int i = 0; i < 64; i++) {
    ssize_t r = recv(c->fd, chunk, sizeof chunk, 0);
    if (r < 0 && errno == EINTR)
      continue;
    if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
      break;
    if (r <= 0) {
      closed = true;
      break;
    }
    lc_buf_add(&c->in, chunk, (size_t)r);
  }
  /* Several answers may have come at once. */
  for (int i = 0; i < 8 && c->in.n > 0; i++) {
    if (c->st >= ST_HEAD && c->st <= ST_OPEN)
      take_stream(f, c);
    else if (c->st == ST_INIT || c->st == ST_NOTIFY || c->st == ST_SUBSCRIBE ||
             c->st == ST_DELETE) {
      if (take_answer(f, c) == 1)
        continue;
    }
    break;
  }
  if (closed && c->st != ST_DONE && c->st != ST_FAILED)
    conn_fail(f, c, "the server closed the connection%s%.200s",
              c->in.n ? " after: " : "", c->in.p ? c->in.p : "");
}

static void conn_event(sf_fleet *f, conn *c, uint32_t events) {
  if (c->st == ST_CONNECTING) {
    int err = 0;
    socklen_t len = sizeof err;
    if (getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0)
      err = errno;
    if (err != 0) {
      conn_fail(f, c, "connect: %s", strerror(err));
      return;
    }
    if (!(events & EPOLLOUT))
      return;
    conn_next(f, c);
    return;
  }
  if ((events & EPOLLOUT) && c->out.n)
    conn_flush(f, c);
  if (c->fd >= 0 && (events & (EPOLLIN | EPOLLHUP | EPOLLERR)))
    conn_readable(f, c);
}

/* ---- the loop ------------------------------------------------------------ */

typedef bool done_fn(const sf_fleet *f, void *arg);

/* Serves every connection until done says so, a stream failed or
 * deadline (ms) passed. Returns 0 when done, -1 otherwise. */
static int pump(sf_fleet *f, long deadline, done_fn *done, void *arg) {
  struct epoll_event evs[256];
  for (;;) {
    while (f->parallel && f->setting_up < f->parallel && !f->failed &&
           f->next_start < f->n && f->c[f->next_start].st == ST_WAITING) {
      conn_start(f, &f->c[f->next_start], f->next_start);
      f->next_start++;
    }
    if (f->failed)
      return -1;
    if (done(f, arg))
      return 0;
    long left = deadline - sf_now_ms();
    if (left <= 0)
      return -1;
    int n = epoll_wait(f->epfd, evs, 256, left < 100 ? (int)left : 100);
    if (n < 0 && errno != EINTR) {
      snprintf(f->err, sizeof f->err, "epoll_wait: %s", strerror(errno));
      f->failed = true;
      return -1;
    }
    for (int i = 0; i < n; i++) {
      uint64_t d = evs[i].data.u64;
      conn *c = d & DELETER_BIT ? &f->del[d & ~DELETER_BIT] : &f->c[d];
      if (c->fd >= 0)
        conn_event(f, c, evs[i].events);
    }
  }
}

sf_fleet *sf_new(uint16_t port, const char *uri) {
  sf_fleet *f = calloc(1, sizeof *f);
  if (f == NULL)
    abort();
  f->port = port;
  snprintf(f->uri, sizeof f->uri, "%s", uri);
  if ((f->epfd = epoll_create1(EPOLL_CLOEXEC)) < 0)
    abort();
  return f;
}

void sf_free(sf_fleet *f) {
  if (f == NULL)
    return;
  for (size_t i = 0; i < f->n; i++) {
    conn_close(f, &f->c[i]);
    lc_buf_free(&f->c[i].in);
    lc_buf_free(&f->c[i].out);
    lc_buf_free(&f->c[i].text);
  }
  for (size_t i = 0; i < f->ndel; i++) {
    conn_close(f, &f->del[i]);
    lc_buf_free(&f->del[i].in);
    lc_buf_free(&f->del[i].out);
  }
  free(f->c);
  free(f->del);
  free(f->todo);
  close(f->epfd);
  free(f);
}

const char *sf_error(const sf_fleet *f) { return f->err; }

size_t sf_count(const sf_fleet *f) { return f->n; }

size_t sf_open_count(const sf_fleet *f) { return f->nopen; }

static bool all_open(const sf_fleet *f, void *arg) {
  (void)arg;
  return f->next_start == f->n && f->setting_up == 0;
}

int sf_open(sf_fleet *f, sf_kind kind, size_t n, size_t parallel,
            long timeout_ms) {
  f->err[0] = '\0';
  if (f->failed)
    return -1;
  if (f->n + n > f->cap) {
    size_t cap = f->cap ? f->cap : 64;
    while (cap < f->n + n)
      cap *= 2;
    conn *c = realloc(f->c, cap * sizeof *c);
    if (c == NULL)
      abort();
    f->c = c;
    f->cap = cap;
  }
  for (size_t i = 0; i < n; i++)
    f->c[f->n + i] = (conn){.fd = -1, .kind = kind};
  f->n += n;
  f->parallel = parallel ? parallel : 1;
  long t0 = sf_now_ms();
  int rc = pump(f, t0 + timeout_ms, all_open, NULL);
  f->parallel = 0;
  if (rc != 0 && !f->failed) {
    snprintf(f->err, sizeof f->err,
             "timed out after %ld ms: %zu streams open, %zu being set up, "
             "%zu not started",
             timeout_ms, f->nopen, f->setting_up, f->n - f->next_start);
    f->failed = true;
  }
  return rc;
}

static bool all_seen(const sf_fleet *f, void *arg) {
  (void)arg;
  return f->nseen == f->nopen;
}

size_t sf_wait(sf_fleet *f, const char *needle, long timeout_ms) {
  f->err[0] = '\0';
  f->needle = needle;
  f->nseen = 0;
  for (size_t i = 0; i < f->n; i++) {
    f->c[i].seen = false;
    if (f->c[i].st == ST_OPEN)
      check_seen(f, &f->c[i]);
  }
  if (pump(f, sf_now_ms() + timeout_ms, all_seen, NULL) != 0 && !f->failed)
    snprintf(f->err, sizeof f->err,
             "timed out after %ld ms: %zu of %zu open streams received %s",
             timeout_ms, f->nseen, f->nopen, needle);
  size_t seen = f->nseen;
  f->needle = NULL;
  return seen;
}

sf_kind sf_kind_of(const sf_fleet *f, size_t i) { return f->c[i].kind; }

const char *sf_id(const sf_fleet *f, size_t i) { return f->c[i].id; }

const char *sf_received(const sf_fleet *f, size_t i) {
  const conn *c = &f->c[i];
  return c->text.p ? c->text.p + c->opened_at : "";
}

static bool all_deleted(const sf_fleet *f, void *arg) {
  (void)arg;
  return f->deleting == 0;
}

int sf_close(sf_fleet *f, size_t parallel, long timeout_ms) {
  f->err[0] = '\0';
  free(f->todo);
  f->todo = malloc((f->n ? f->n : 1) * sizeof *f->todo);
  if (f->todo == NULL)
    abort();
  f->ntodo = 0;
  for (size_t i = 0; i < f->n; i++) {
    conn *c = &f->c[i];
    if (c->kind == SF_LEGACY && c->id[0])
      f->todo[f->ntodo++] = i;
    if (c->fd >= 0) {
      conn_close(f, c);
      conn_leave(f, c, ST_DONE);
    }
  }
  f->failed = false;
  size_t k = parallel < f->ntodo ? parallel : f->ntodo;
  free(f->del);
  f->del = calloc(k ? k : 1, sizeof *f->del);
  if (f->del == NULL)
    abort();
  f->ndel = k;
  for (size_t i = 0; i < k; i++) {
    f->del[i] = (conn){.fd = -1, .deleter = true, .job = i};
    f->deleting++;
    conn_start(f, &f->del[i], i);
  }
  int rc = pump(f, sf_now_ms() + timeout_ms, all_deleted, NULL);
  if (rc != 0 && !f->failed)
    snprintf(f->err, sizeof f->err,
             "timed out after %ld ms with %zu of %zu connections still "
             "deleting sessions",
             timeout_ms, f->deleting, k);
  for (size_t i = 0; i < k; i++)
    conn_close(f, &f->del[i]);
  return rc;
}
