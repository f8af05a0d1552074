/* bench_streams: what an open event stream costs a libmcp server, against
 * what libmicrohttpd alone costs per connection holding a stream, and how
 * long one resource update takes to reach every subscriber (issue 20).
 *
 *   bench_streams [N]     N streams per server (default 10000)
 *
 * Two servers run in turn as children of this program (itself run again
 * with a mode flag, under MCP_TEST_LAUNCHER when that is set):
 *   --bare N   a bare libmicrohttpd daemon started the way lib/http/http.c
 *              starts it (epoll, one internal polling thread, suspend and
 *              resume, a 32 KiB connection memory pool, STRICT_FOR_CLIENT,
 *              connection limits N + 64) that answers each GET with a
 *              text/event-stream: a first ": primed" comment, then the
 *              connection suspended and resumed only for a keep-alive
 *              comment every KEEPALIVE_S seconds, as libmcp's are (and the
 *              fleet's legacy and modern exchanges with fixed answers, the
 *              last of them such a stream);
 *   --serve N  the libmcp server of load.streams (tests/common/
 *              stream_server.c: the public API, one resource, limits raised
 *              for N streams, its allocations counted).
 * This process holds N streams against each on loopback with one thread
 * (tests/common/stream_fleet.c): half legacy GET streams (initialize,
 * notifications/initialized and resources/subscribe first on the same
 * connection) and half 2026-07-28 subscriptions/listen streams against
 * libmcp; against the bare daemon N plain GETs, and in another bare process
 * the same exchanges as against libmcp, since the requests before a legacy
 * stream make libmicrohttpd itself touch more of each connection's pool.
 * Each server's
 * VmRSS is read after a warm-up round and again with the N streams open,
 * both after malloc_trim; then one update is published on the libmcp
 * server and timed until all N streams have it. It prints one figure a
 * line:
 *   bare libmicrohttpd RSS per connection: X KiB
 *   bare libmicrohttpd RSS per connection, same exchanges: X2 KiB (...)
 *   libmcp RSS per stream: Y KiB
 *   libmcp beyond libmicrohttpd: Z KiB                (Y - X)
 *   libmcp beyond libmicrohttpd, same exchanges: Z2 KiB (Y - X2) (...)
 *   libmcp allocations per stream: B bytes in K blocks (...)
 *   fan-out to N subscribers: T ms
 * and a few more lines that break the figures down. The exit status is 0,
 * or 1 when a stream did not open, an update went missing or a server did
 * not stop cleanly. Every wait has a deadline. */
#define _DEFAULT_SOURCE /* malloc_trim */
#include <arpa/inet.h>
#include <errno.h>
#include <malloc.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "stream_fleet.h"
#include "stream_server.h"

/* The resource the libmcp server's streams watch. */
#define URI "test://feed"
/* Seconds between keep-alive comments on quiet streams, on both servers
 * (how soon a server notices a client that closed a suspended stream). */
#define KEEPALIVE_S 2
/* Streams set up at a time. */
#define PARALLEL 100
/* Most streams this program measures. */
#define MAX_STREAMS 200000L
#define BARE "--bare"
#define SERVE "--serve"

/* ===========================================================================
 * The bare libmicrohttpd server (--bare N)
 * ======================================================================== */

/* One stream the bare server holds open. */
typedef struct bare_stream {
  struct bare_stream *prev, *next;
  struct MHD_Connection *conn;
  const char *send; /* what the next read sends, or NULL */
  bool suspended;   /* by its reader; whoever clears this resumes it */
} bare_stream;

/* The bare server's streams, and what stops it. */
static struct {
  pthread_mutex_t lock;
  pthread_cond_t wake;
  bare_stream *live;
  size_t count;
  bool ending;                         /* every read ends its stream */
  bool ticker_stop;                    /* the keep-alive thread returns */
  struct MHD_Response *empty, *result; /* fixed answers */
} bare = {.lock = PTHREAD_MUTEX_INITIALIZER, .wake = PTHREAD_COND_INITIALIZER};

/* The content reader of a bare stream: what is pending, else the
 * connection suspended until a keep-alive or the stop resumes it. */
static ssize_t bare_read(void *cls, uint64_t pos, char *buf, size_t max) {
  bare_stream *st = cls;
  (void)pos;
  ssize_t n;
  pthread_mutex_lock(&bare.lock);
  if (bare.ending) {
    n = MHD_CONTENT_READER_END_OF_STREAM;
  } else if (st->send) {
    size_t len = strlen(st->send);
    len = len < max ? len : max;
    memcpy(buf, st->send, len);
    st->send = NULL;
    n = (ssize_t)len;
  } else {
    MHD_suspend_connection(st->conn);
    st->suspended = true;
    n = 0;
  }
  pthread_mutex_unlock(&bare.lock);
  return n;
}

/* The response's free callback: the connection is done with the stream. */
static void bare_free(void *cls) {
  bare_stream *st = cls;
  pthread_mutex_lock(&bare.lock);
  if (st->prev)
    st->prev->next = st->next;
  else
    bare.live = st->next;
  if (st->next)
    st->next->prev = st->prev;
  bare.count--;
  pthread_mutex_unlock(&bare.lock);
  free(st);
}

/* Resumes every suspended stream: with a keep-alive comment queued, or,
 * when end is set, for its reader to end it. */
static void bare_wake(bool end) {
  pthread_mutex_lock(&bare.lock);
  if (end)
    bare.ending = true;
  struct MHD_Connection **wake =
      malloc((bare.count ? bare.count : 1) * sizeof *wake);
  size_t n = 0;
  for (bare_stream *st = bare.live; st && wake; st = st->next) {
    if (!end && st->send == NULL)
      st->send = ": keep-alive\n\n";
    if (st->suspended) {
      st->suspended = false;
      wake[n++] = st->conn;
    }
  }
  pthread_mutex_unlock(&bare.lock);
  /* A connection cannot finish while it is suspended, and only the thread
   * that cleared its flag resumes it: each is still there. */
  for (size_t i = 0; i < n; i++)
    MHD_resume_connection(wake[i]);
  free(wake);
}

/* The keep-alive thread: wakes every stream every KEEPALIVE_S seconds. */
static void *bare_ticker(void *arg) {
  (void)arg;
  pthread_mutex_lock(&bare.lock);
  while (!bare.ticker_stop) {
    struct timespec at;
    clock_gettime(CLOCK_REALTIME, &at);
    at.tv_sec += KEEPALIVE_S;
    int rc = 0;
    while (!bare.ticker_stop && rc != ETIMEDOUT)
      rc = pthread_cond_timedwait(&bare.wake, &bare.lock, &at);
    if (bare.ticker_stop)
      break;
    pthread_mutex_unlock(&bare.lock);
    bare_wake(false);
    pthread_mutex_lock(&bare.lock);
  }
  pthread_mutex_unlock(&bare.lock);
  return NULL;
}

static pthread_t bare_starter; /* the thread that starts the daemon */

/* libmicrohttpd's log, kept to what it says while starting (as libmcp
 * does): a client that closes a stream is no error here. */
static void bare_log(void *cls, const char *fmt, va_list ap)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 0)))
#endif
    ;
static void bare_log(void *cls, const char *fmt, va_list ap) {
  (void)cls;
  if (pthread_equal(pthread_self(), bare_starter)) {
    fputs("bare server: ", stderr);
    vfprintf(stderr, fmt, ap);
  }
}

/* Whether the n bytes at p hold needle. */
static bool holds(const char *p, size_t n, const char *needle) {
  size_t len = strlen(needle);
  for (size_t i = 0; i + len <= n; i++)
    if (memcmp(p + i, needle, len) == 0)
      return true;
  return false;
}

/* Queues a new stream on conn whose first event is first. */
static enum MHD_Result bare_stream_start(struct MHD_Connection *conn,
                                         const char *first) {
  bare_stream *st = calloc(1, sizeof *st);
  if (st == NULL)
    return MHD_NO;
  st->conn = conn;
  st->send = first;
  /* The block size and the headers libmcp's streams have. */
  struct MHD_Response *resp = MHD_create_response_from_callback(
      MHD_SIZE_UNKNOWN, 16 * 1024, bare_read, st, bare_free);
  if (resp == NULL) {
    free(st);
    return MHD_NO;
  }
  pthread_mutex_lock(&bare.lock);
  st->next = bare.live;
  if (bare.live)
    bare.live->prev = st;
  bare.live = st;
  bare.count++;
  pthread_mutex_unlock(&bare.lock);
  MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE,
                          "text/event-stream");
  MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL, "no-cache");
  MHD_add_response_header(resp, "X-Accel-Buffering", "no");
  enum MHD_Result ret = MHD_queue_response(conn, MHD_HTTP_OK, resp);
  MHD_destroy_response(resp);
  return ret;
}

/* The bare server's request handler. It answers the exchanges the stream
 * fleet makes with fixed answers, so that libmicrohttpd carries the same
 * requests on each connection as against libmcp: a GET, or a POST naming
 * subscriptions/listen in Mcp-Method, gets a stream (the latter opened
 * with an acknowledgement); any other POST a fixed JSON result with an
 * Mcp-Session-Id (202 and no body when it carries no "id": a
 * notification); a DELETE 204. The body is looked at, never kept. */
static enum MHD_Result bare_request(void *cls, struct MHD_Connection *conn,
                                    const char *url, const char *method,
                                    const char *version, const char *upload,
                                    size_t *upload_size, void **state) {
  /* *state: the head came; a body with an "id" came; one without. */
  static int head, request, notification;
  (void)cls;
  (void)url;
  (void)version;
  if (*state == NULL) {
    *state = &head;
    return MHD_YES;
  }
  if (*upload_size > 0) {
    if (*state != &request)
      *state = holds(upload, *upload_size, "\"id\"") ? &request : &notification;
    *upload_size = 0;
    return MHD_YES;
  }
  if (strcmp(method, MHD_HTTP_METHOD_GET) == 0)
    return bare_stream_start(conn, ": primed\n\n");
  if (strcmp(method, MHD_HTTP_METHOD_DELETE) == 0)
    return MHD_queue_response(conn, MHD_HTTP_NO_CONTENT, bare.empty);
  if (strcmp(method, MHD_HTTP_METHOD_POST) != 0)
    return MHD_NO;
  const char *mcp_method =
      MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Mcp-Method");
  if (mcp_method && strcmp(mcp_method, "subscriptions/listen") == 0)
    return bare_stream_start(
        conn, "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/"
              "subscriptions/acknowledged\"}\n\n");
  if (*state == &notification)
    return MHD_queue_response(conn, MHD_HTTP_ACCEPTED, bare.empty);
  return MHD_queue_response(conn, MHD_HTTP_OK, bare.result);
}

/* Serves the bare streams until standard input closes; answers "stats"
 * with the streams it holds and libmicrohttpd's connection count (after
 * malloc_trim). Returns the exit status. */
static int bare_serve(long n) {
  ss_heap_fixed();
  if (ss_raise_nofile() < n + 64) {
    fprintf(stderr, "bare server: %ld streams need %ld descriptors\n", n,
            n + 64);
    return 2;
  }
  bare_starter = pthread_self();
  struct sockaddr_in sa = {.sin_family = AF_INET};
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  static const char result[] = "{\"jsonrpc\":\"2.0\",\"id\":0,\"result\":{}}";
  bare.empty = MHD_create_response_from_buffer(0, NULL, MHD_RESPMEM_PERSISTENT);
  bare.result = MHD_create_response_from_buffer(strlen(result), (void *)result,
                                                MHD_RESPMEM_PERSISTENT);
  if (bare.empty == NULL || bare.result == NULL)
    return 1;
  MHD_add_response_header(bare.result, MHD_HTTP_HEADER_CONTENT_TYPE,
                          "application/json");
  MHD_add_response_header(bare.result, "Mcp-Session-Id", "bare");
  /* As lib/http/http.c's daemon_start, with libmcp's defaults (a 30 s
   * connection timeout, the 32 KiB memory pool) and load.streams' limits. */
  unsigned flags = MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME |
                   MHD_USE_ERROR_LOG | MHD_USE_INTERNAL_POLLING_THREAD;
  struct MHD_Daemon *d = MHD_start_daemon(
      flags, 0, NULL, NULL, bare_request, NULL, MHD_OPTION_EXTERNAL_LOGGER,
      bare_log, NULL, MHD_OPTION_SOCK_ADDR, &sa, MHD_OPTION_CONNECTION_TIMEOUT,
      (unsigned)30, MHD_OPTION_CONNECTION_LIMIT, (unsigned)n + 64,
      MHD_OPTION_PER_IP_CONNECTION_LIMIT, (unsigned)n + 64,
      MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)32 << 10,
      MHD_OPTION_STRICT_FOR_CLIENT, 1, MHD_OPTION_END);
  if (d == NULL) {
    fprintf(stderr, "bare server: cannot listen on 127.0.0.1\n");
    return 1;
  }
  pthread_t ticker;
  if (pthread_create(&ticker, NULL, bare_ticker, NULL) != 0) {
    MHD_stop_daemon(d);
    return 1;
  }
  const union MHD_DaemonInfo *info =
      MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
  printf("port %u\n", info ? (unsigned)info->port : 0u);
  fflush(stdout);
  char line[64];
  for (int i = 0; i < 100000 && fgets(line, sizeof line, stdin); i++) {
    if (strncmp(line, "stats", 5) == 0) {
      malloc_trim(0);
      info = MHD_get_daemon_info(d, MHD_DAEMON_INFO_CURRENT_CONNECTIONS);
      pthread_mutex_lock(&bare.lock);
      size_t streams = bare.count;
      pthread_mutex_unlock(&bare.lock);
      printf("streams %zu connections %u\n", streams,
             info ? info->num_connections : 0u);
    }
    fflush(stdout);
  }
  /* libmicrohttpd must not be stopped with a suspended connection: end
   * every stream and wait (10 s at most) until each has finished. */
  MHD_socket listen_fd = MHD_quiesce_daemon(d);
  pthread_mutex_lock(&bare.lock);
  bare.ticker_stop = true;
  pthread_cond_signal(&bare.wake);
  pthread_mutex_unlock(&bare.lock);
  pthread_join(ticker, NULL);
  bare_wake(true);
  size_t left = 1;
  long deadline = sf_now_ms() + 10000;
  while (sf_now_ms() < deadline) {
    pthread_mutex_lock(&bare.lock);
    left = bare.count;
    pthread_mutex_unlock(&bare.lock);
    if (left == 0)
      break;
    nanosleep(&(struct timespec){0, 10 * 1000 * 1000}, NULL);
  }
  MHD_stop_daemon(d);
  if (listen_fd != MHD_INVALID_SOCKET)
    close(listen_fd);
  MHD_destroy_response(bare.empty);
  MHD_destroy_response(bare.result);
  if (left != 0) {
    fprintf(stderr, "bare server: %zu streams did not end\n", left);
    return 1;
  }
  return 0;
}

/* ===========================================================================
 * The driver
 * ======================================================================== */

static const char *self_path; /* argv[0] */

/* Reports what failed on standard error; returns -1. */
static int failed(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;
static int failed(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fputs("bench_streams: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
  return -1;
}

/* A server's state at one moment: RSS, and its own two counts (the bare
 * server's streams and connections, libmcp's live blocks and bytes), read
 * after the server trimmed its heap. */
typedef struct snapshot {
  long rss_kib, a, b;
} snapshot;

/* Asks s for "stats" and reads its RSS. Returns 0, or -1. */
static int snap(ss_child *s, bool bare_server, snapshot *out) {
  char line[128];
  if (!ss_ask(s, "stats\n", line, sizeof line, 60000))
    return failed("the server did not answer \"stats\"");
  if (sscanf(line,
             bare_server ? "streams %ld connections %ld"
                         : "blocks %ld bytes %ld",
             &out->a, &out->b) != 2)
    return failed("stats: %s", line);
  out->rss_kib = ss_status_kib(s->pid, "VmRSS:");
  return out->rss_kib > 0 ? 0
                          : failed("no VmRSS for process %ld", (long)s->pid);
}

/* Polls s until its first count is at most a, or ms passed; the last
 * snapshot in *out. Returns 0 when the count came down, else -1. */
static int settle(ss_child *s, bool bare_server, long a, long ms,
                  snapshot *out) {
  long deadline = sf_now_ms() + ms;
  for (int round = 0; round < 10000; round++) {
    if (snap(s, bare_server, out) != 0)
      return -1;
    if (out->a <= a)
      return 0;
    if (sf_now_ms() >= deadline)
      break;
    nanosleep(&(struct timespec){0, 100 * 1000 * 1000}, NULL);
  }
  return failed("the server still holds %ld (wanted %ld) after %ld ms", out->a,
                a, ms);
}

/* Opens n streams of kind on f; 0 or -1. */
static int open_kind(sf_fleet *f, sf_kind kind, long n) {
  if (n > 0 && sf_open(f, kind, (size_t)n, PARALLEL, 180000) != 0)
    return failed("opening %ld streams: %s", n, sf_error(f));
  return 0;
}

/* Closes every stream of f (and ends its legacy sessions), then frees it;
 * 0 or -1. */
static int close_fleet(sf_fleet *f) {
  int rc = sf_close(f, 16, 120000);
  if (rc != 0)
    failed("closing the streams: %s", sf_error(f));
  sf_free(f);
  return rc;
}

/* Publishes one update on the libmcp server and waits until every open
 * stream of f has it: *ms from the command to the last stream, *call_us
 * what mcp_server_resource_updated took. 0 when all want streams had it
 * and the server told want, else -1. */
static int fan_out(ss_child *s, sf_fleet *f, long want, long *ms,
                   long *call_us) {
  long t0 = sf_now_ms();
  if (!ss_tell(s, "publish\n"))
    return failed("the libmcp server is gone");
  size_t got = sf_wait(f, "notifications/resources/updated", 60000);
  *ms = sf_now_ms() - t0;
  char line[128];
  long told = -1;
  if (!ss_line(s, line, sizeof line, 60000) ||
      sscanf(line, "told %ld us %ld", &told, call_us) != 2)
    return failed("publish: no answer");
  if (got != (size_t)want || sf_open_count(f) != (size_t)want)
    return failed("%zu of %ld subscribers got the update (%zu open): %s", got,
                  want, sf_open_count(f), sf_error(f));
  if (told != want)
    return failed("mcp_server_resource_updated told %ld of %ld", told, want);
  return 0;
}

/* Stops s and checks it exited 0. */
static int stop_server(ss_child *s, const char *name) {
  int status = ss_stop(s, 30000);
  if (status == -1 || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
    return failed("the %s server ended with status %d", name, status);
  return 0;
}

/* What a server held before a round of streams, with its legacy half
 * open, and with all of them open. */
typedef struct round {
  snapshot base, legacy, full;
} round;

/* The figures of a run. */
typedef struct figures {
  long n;
  round bare_get;   /* the bare server, n plain GET streams */
  round bare_mixed; /* the bare server, the same exchanges as libmcp's */
  round mcp;        /* the libmcp server */
  long fan_ms, call_us;
} figures;

/* Opens n/2 legacy streams, then n - n/2 modern ones, on a new fleet
 * against s, reading s after each half. Returns the fleet, or NULL (its
 * streams closed) when a stream did not open. */
static sf_fleet *open_mixed(ss_child *s, bool bare_server, long n, round *r) {
  sf_fleet *f = sf_new(s->port, URI);
  int rc = open_kind(f, SF_LEGACY, n / 2);
  if (rc == 0 && r)
    rc = snap(s, bare_server, &r->legacy);
  if (rc == 0)
    rc = open_kind(f, SF_MODERN, n - n / 2);
  if (rc == 0 && r)
    rc = snap(s, bare_server, &r->full);
  if (rc == 0)
    return f;
  close_fleet(f);
  return NULL;
}

/* The bare server, a process of its own for each kind of round, as the
 * libmcp server has: after a warm-up round of the same kind, its RSS with
 * n plain GET streams (mixed false, into fig->bare_get), or with n streams
 * opened by the same exchanges as against libmcp (into fig->bare_mixed).
 * A round after another in one process would start from the heap the
 * first left behind, and measure how much of it the second reuses. */
static int measure_bare(figures *fig, long warm, bool mixed) {
  ss_child s;
  if (ss_start(&s, self_path, BARE, fig->n, 60000) != 0)
    return failed("the bare server did not start (see its standard error)");
  round *r = mixed ? &fig->bare_mixed : &fig->bare_get;
  long settle_ms = 3000 + KEEPALIVE_S * 3000L;
  int rc = 0;
  sf_fleet *f;
  if (mixed) {
    f = open_mixed(&s, true, warm, NULL);
    if (f == NULL || close_fleet(f) != 0)
      rc = -1;
  } else {
    f = sf_new(s.port, URI);
    rc = open_kind(f, SF_BARE, warm);
    if (close_fleet(f) != 0)
      rc = -1;
  }
  if (rc == 0)
    rc = settle(&s, true, 0, settle_ms, &r->base);
  if (rc == 0 && mixed) {
    f = open_mixed(&s, true, fig->n, r);
    if (f == NULL || close_fleet(f) != 0)
      rc = -1;
  } else if (rc == 0) {
    f = sf_new(s.port, URI);
    rc = open_kind(f, SF_BARE, fig->n);
    if (rc == 0)
      rc = snap(&s, true, &r->full);
    if (close_fleet(f) != 0)
      rc = -1;
  }
  if (rc == 0 && r->full.a != fig->n)
    rc =
        failed("the bare server holds %ld streams, not %ld", r->full.a, fig->n);
  if (stop_server(&s, "bare") != 0)
    rc = -1;
  return rc;
}

/* The libmcp server: after a warm-up round, its RSS and the library's
 * blocks with n/2 legacy streams and with n/2 modern ones more; then the
 * fan-out of one update to all n, and every block back once they closed. */
static int measure_libmcp(figures *fig, long warm) {
  ss_child s;
  if (ss_start(&s, self_path, SERVE, fig->n, 60000) != 0)
    return failed("the libmcp server did not start (see its standard error)");
  snapshot start = {0}, after = {0};
  long ms, us;
  int rc = snap(&s, false, &start);
  sf_fleet *f = rc == 0 ? open_mixed(&s, false, warm, NULL) : NULL;
  if (f == NULL)
    rc = -1;
  if (rc == 0)
    rc = fan_out(&s, f, warm, &ms, &us);
  if (f && close_fleet(f) != 0)
    rc = -1;
  if (rc == 0)
    rc = settle(&s, false, start.a, 3000 + KEEPALIVE_S * 3000L, &fig->mcp.base);
  f = rc == 0 ? open_mixed(&s, false, fig->n, &fig->mcp) : NULL;
  if (f == NULL)
    rc = -1;
  if (rc == 0)
    rc = fan_out(&s, f, fig->n, &fig->fan_ms, &fig->call_us);
  if (f && close_fleet(f) != 0)
    rc = -1;
  /* Every stream closed: the library is back to what it held before. */
  if (rc == 0)
    rc =
        settle(&s, false, fig->mcp.base.a, 30000 + KEEPALIVE_S * 3000L, &after);
  if (stop_server(&s, "libmcp") != 0)
    rc = -1;
  return rc;
}

/* KiB of RSS per stream of a round: all of them (0), the legacy half
 * (1), the modern half (2). */
static double per_kib(const round *r, long n, int part) {
  long legacy = n / 2, modern = n - n / 2;
  if (part == 1)
    return (double)(r->legacy.rss_kib - r->base.rss_kib) / (double)legacy;
  if (part == 2)
    return (double)(r->full.rss_kib - r->legacy.rss_kib) / (double)modern;
  return (double)(r->full.rss_kib - r->base.rss_kib) / (double)n;
}

/* Prints the figures, one a line. */
static void report(const figures *g) {
  long n = g->n;
  double per_conn = per_kib(&g->bare_get, n, 0);
  double same = per_kib(&g->bare_mixed, n, 0);
  double mcp = per_kib(&g->mcp, n, 0);
  printf("streams per server: %ld\n", n);
  printf("bare libmicrohttpd RSS: %ld KiB before, %ld KiB with the GET "
         "streams; %ld KiB before, %ld KiB with the legacy half, %ld KiB "
         "with all streams of the same exchanges as libmcp's\n",
         g->bare_get.base.rss_kib, g->bare_get.full.rss_kib,
         g->bare_mixed.base.rss_kib, g->bare_mixed.legacy.rss_kib,
         g->bare_mixed.full.rss_kib);
  printf("libmcp RSS: %ld KiB before, %ld KiB with the legacy half, %ld KiB "
         "with all streams\n",
         g->mcp.base.rss_kib, g->mcp.legacy.rss_kib, g->mcp.full.rss_kib);
  printf("bare libmicrohttpd RSS per connection: %.2f KiB\n", per_conn);
  printf("bare libmicrohttpd RSS per connection, same exchanges: %.2f KiB "
         "(legacy %.2f KiB, modern %.2f KiB)\n",
         same, per_kib(&g->bare_mixed, n, 1), per_kib(&g->bare_mixed, n, 2));
  printf("libmcp RSS per stream: %.2f KiB\n", mcp);
  printf("libmcp RSS per legacy stream (session + GET stream): %.2f KiB\n",
         per_kib(&g->mcp, n, 1));
  printf("libmcp RSS per modern stream (subscriptions/listen): %.2f KiB\n",
         per_kib(&g->mcp, n, 2));
  printf("libmcp beyond libmicrohttpd: %.2f KiB\n", mcp - per_conn);
  printf("libmcp beyond libmicrohttpd, same exchanges: %.2f KiB (legacy "
         "%.2f KiB, modern %.2f KiB)\n",
         mcp - same, per_kib(&g->mcp, n, 1) - per_kib(&g->bare_mixed, n, 1),
         per_kib(&g->mcp, n, 2) - per_kib(&g->bare_mixed, n, 2));
  long legacy = n / 2, modern = n - n / 2;
  printf("libmcp allocations per stream: %.0f bytes in %.1f blocks (legacy "
         "%.0f bytes, modern %.0f bytes)\n",
         (double)(g->mcp.full.b - g->mcp.base.b) / (double)n,
         (double)(g->mcp.full.a - g->mcp.base.a) / (double)n,
         (double)(g->mcp.legacy.b - g->mcp.base.b) / (double)legacy,
         (double)(g->mcp.full.b - g->mcp.legacy.b) / (double)modern);
  printf("fan-out to %ld subscribers: %ld ms\n", n, g->fan_ms);
  printf("mcp_server_resource_updated call: %ld us\n", g->call_us);
  fflush(stdout);
}

int main(int argc, char **argv) {
  self_path = argv[0];
  if (argc == 3 && strcmp(argv[1], BARE) == 0)
    return bare_serve(atol(argv[2]));
  if (argc == 3 && strcmp(argv[1], SERVE) == 0)
    return ss_serve("bench_streams", atol(argv[2]), URI, KEEPALIVE_S);
  char *end = NULL;
  long n = argc >= 2 ? strtol(argv[1], &end, 10) : 10000;
  if (argc > 2 || (end && *end) || n < 2 || n > MAX_STREAMS) {
    fprintf(stderr, "usage: bench_streams [N]  (2 to %ld streams)\n",
            MAX_STREAMS);
    return 2;
  }
  signal(SIGPIPE, SIG_IGN);
  /* This process holds a descriptor per stream, and so does each server,
   * which inherits the limit raised here. */
  long fds = ss_raise_nofile();
  if (fds < n + 128) {
    failed("%ld streams need %ld open descriptors, and RLIMIT_NOFILE allows "
           "%ld (raise the hard limit: ulimit -Hn)",
           n, n + 128, fds);
    return 1;
  }
  figures fig = {.n = n};
  long warm = n / 20 > 20 ? n / 20 : 20;
  if (measure_bare(&fig, warm, false) != 0 ||
      measure_bare(&fig, warm, true) != 0 || measure_libmcp(&fig, warm) != 0)
    return 1;
  report(&fig);
  return 0;
}
