/* load.streams: ten thousand concurrent long-lived streams on one server
 * process (issue 20), half of them legacy GET streams (each on its own
 * session, subscribed to a resource with resources/subscribe) and half
 * 2026-07-28 subscriptions/listen streams naming the same resource, all on
 * real loopback sockets held by this process's one thread (non-blocking,
 * epoll: tests/common/stream_fleet.c).
 *
 * The server is this program run again with --serve N (under
 * MCP_TEST_LAUNCHER when set, so valgrind watches the library too): a
 * small server on the public API, its limits raised for N streams,
 * counting the library's blocks through mcp_set_allocator, driven over its
 * standard input ("publish", "stats") so that measuring it makes no HTTP
 * request of its own. The test checks that
 *  - every stream opens (priming event, or acknowledgement);
 *  - the server's thread count (/proc/PID/task) does not grow with them;
 *  - its RSS grows by no more than RSS_BOUND_KIB per stream (plain builds;
 *    sanitizers and valgrind make RSS say nothing);
 *  - one mcp_server_resource_updated reaches all N subscribers, each with
 *    exactly that notification (the fan-out time is printed, never
 *    asserted);
 *  - once the client closes every stream and DELETEs the legacy sessions,
 *    the library's live blocks and bytes are exactly what they were before
 *    the streams opened, nobody is subscribed any more, and RSS (after
 *    malloc_trim) is back near its baseline.
 * Sizes shrink under valgrind (MCP_VALGRIND_RUN) and ThreadSanitizer
 * (MCP_TSAN_RUN); MCP_LOAD_SCALE scales them further. */
#include <check.h>
#include <cjson/cJSON.h>
#include <errno.h>
#include <mcp/mcp.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "http_client.h"
#include "stream_fleet.h"
#include "stream_server.h"
#include "testutil.h"

/* The resource every stream watches. */
#define URI "test://feed"
/* Keep-alive comments on quiet streams: how soon the server notices a
 * client that closed a suspended stream (libmicrohttpd sees nothing of a
 * suspended connection until it is resumed). */
#define KEEPALIVE_S 2
/* What one open stream may cost the server in RSS: libmicrohttpd's
 * connection (its memory pool, the library's default header_memory of
 * 32 KiB, which a stream's request fills, the connection and the response)
 * and the library's stream, request and session. Measured at 10,000
 * streams: about 45 KiB (see tests/README.md); the bench's streams scenario
 * sets it against a bare libmicrohttpd server holding as many. */
#define RSS_BOUND_KIB 64
/* What the library itself allocates per open stream (counted through
 * mcp_set_allocator, the same on every build): its stream, the request it
 * answers and, for a legacy stream, the session and its subscription. */
#define LIB_BOUND_BYTES 4096
/* Streams set up at a time (connections in their handshake). */
#define PARALLEL 100
#define SERVE "--serve"

static const char *self_path; /* argv[0]: under valgrind /proc/self/exe is
                                 valgrind */

/* Milliseconds, stretched under valgrind. */
static long T(long ms) { return lc_slow_run() ? ms * 5 : ms; }

/* ===========================================================================
 * The server (--serve N, tests/common/stream_server.c) as a child
 * ======================================================================== */

typedef ss_child server;

/* The next line the server printed, within ms; false at its end or at the
 * deadline. */
static bool server_line(server *s, char *out, size_t size, long ms) {
  return ss_line(s, out, size, ms);
}

/* Writes one command line to the server (a pipe: its reader is gone only
 * when it died, which the next read reports). */
static void server_tell(server *s, const char *command) {
  ck_assert_msg(ss_tell(s, command), "the server is gone: %s", strerror(errno));
}

/* Sends one command and reads its answer line. */
static void server_ask(server *s, const char *command, char *out, size_t size) {
  server_tell(s, command);
  ck_assert_msg(server_line(s, out, size, T(60000)),
                "the server did not answer \"%.*s\"",
                (int)strcspn(command, "\n"), command);
}

/* The library's live blocks and bytes in the server, after it trimmed its
 * heap. */
static void server_stats(server *s, long *blocks, long *bytes) {
  char line[128];
  server_ask(s, "stats\n", line, sizeof line);
  ck_assert_msg(sscanf(line, "blocks %ld bytes %ld", blocks, bytes) == 2,
                "stats: %s", line);
}

/* Starts self_path --serve n (under MCP_TEST_LAUNCHER when set) and reads
 * its port. */
static void server_start(server *s, long n) {
  ck_assert_msg(ss_start(s, self_path, SERVE, n, T(60000)) == 0,
                "the server did not start (see its standard error)");
}

/* Ends the server (end of its input) and returns its exit status; kills
 * it when it has not exited within ms. */
static int server_stop(server *s, long ms) { return ss_stop(s, ms); }

/* ===========================================================================
 * The streams
 * ======================================================================== */

/* What the server holds at one moment: the library's blocks and bytes,
 * RSS and threads. */
typedef struct snapshot {
  long blocks, bytes, rss_kib, threads;
} snapshot;

static snapshot snap(server *s) {
  snapshot n;
  server_stats(s, &n.blocks, &n.bytes);
  n.rss_kib = ss_status_kib(s->pid, "VmRSS:");
  n.threads = ss_threads(s->pid);
  return n;
}

/* Publishes one update and waits until every open stream of f has it.
 * Returns the milliseconds from the command to the last stream; *told is
 * what mcp_server_resource_updated returned, *call_us how long it took. */
static long fan_out(server *s, sf_fleet *f, long *told, long *call_us) {
  long t0 = lc_now_ms();
  server_tell(s, "publish\n");
  size_t got = sf_wait(f, "notifications/resources/updated", T(60000));
  long took = lc_now_ms() - t0;
  ck_assert_msg(got == sf_open_count(f),
                "%zu of %zu subscribers got the update: %s", got,
                sf_open_count(f), sf_error(f));
  char line[128];
  ck_assert_msg(server_line(s, line, sizeof line, T(60000)) &&
                    sscanf(line, "told %ld us %ld", told, call_us) == 2,
                "publish: no answer");
  return took;
}

/* Each stream received exactly one event since it opened (keep-alive
 * comments aside): the update of URI, tagged with the stream's
 * subscription id on a modern stream, with an event id on a legacy one. */
static void check_events(const sf_fleet *f) {
  for (size_t i = 0; i < sf_count(f); i++) {
    const char *text = sf_received(f, i);
    int events = 0;
    bool has_id = false;
    cJSON *m = NULL;
    for (const char *ev = text; *ev && events < 8;) {
      const char *end = strstr(ev, "\n\n");
      size_t len = end ? (size_t)(end - ev) : strlen(ev);
      const char *data = NULL;
      for (const char *l = ev; l < ev + len; l = strchr(l, '\n') + 1) {
        if (strncmp(l, "data: ", 6) == 0)
          data = l + 6;
        if (strncmp(l, "id: ", 4) == 0)
          has_id = true;
        if (memchr(l, '\n', (size_t)(ev + len - l)) == NULL)
          break;
      }
      if (data) {
        events++;
        cJSON_Delete(m);
        m = cJSON_ParseWithLength(data, strcspn(data, "\n"));
      }
      ev = end ? end + 2 : ev + len;
    }
    ck_assert_msg(events == 1 && m, "stream %zu received %d events: %.300s", i,
                  events, text);
    ck_assert_str_eq(tu_jstr(m, "method"), "notifications/resources/updated");
    ck_assert_str_eq(tu_jstr(m, "params.uri"), URI);
    ck_assert_ptr_null(tu_get(m, "id"));
    const cJSON *sub = tu_get(tu_jget(m, "params._meta"),
                              "io.modelcontextprotocol/subscriptionId");
    if (sf_kind_of(f, i) == SF_MODERN) {
      char *want = cJSON_PrintUnformatted(sub);
      ck_assert_msg(want && strcmp(want, sf_id(f, i)) == 0,
                    "stream %zu: subscriptionId %s, not %s", i,
                    want ? want : "(none)", sf_id(f, i));
      free(want);
    } else {
      ck_assert_msg(has_id && sub == NULL,
                    "legacy stream %zu: an event id, no subscriptionId: %s", i,
                    text);
    }
    cJSON_Delete(m);
  }
}

/* Polls the server until the library holds no more blocks than blocks, up
 * to ms; returns the last snapshot. */
static snapshot wait_blocks(server *s, long blocks, long ms) {
  long deadline = lc_now_ms() + ms;
  snapshot n = snap(s);
  while (n.blocks > blocks && lc_now_ms() < deadline) {
    lc_sleep_ms(250);
    n = snap(s);
  }
  return n;
}

/* Opens half legacy and half modern streams, n in all. */
static void open_streams(sf_fleet *f, long n) {
  ck_assert_msg(sf_open(f, SF_LEGACY, (size_t)(n / 2), PARALLEL, T(120000)) ==
                    0,
                "legacy streams: %s", sf_error(f));
  ck_assert_msg(
      sf_open(f, SF_MODERN, (size_t)(n - n / 2), PARALLEL, T(120000)) == 0,
      "modern streams: %s", sf_error(f));
  ck_assert_int_eq(sf_open_count(f), n);
}

START_TEST(ten_thousand_streams) {
  long n = lc_scaled(10000, 500);
  long warm = n / 20 > 20 ? n / 20 : 20;
  /* This process holds a descriptor per stream, and so does the server,
   * which inherits the limit raised here. */
  long fds = ss_raise_nofile();
  ck_assert_msg(fds >= n + 128,
                "%ld streams need %ld open descriptors, and RLIMIT_NOFILE "
                "allows %ld (raise the hard limit: ulimit -Hn)",
                n, n + 128, fds);
  server s;
  server_start(&s, n);

  /* A first round, so that what grows once (the allocator's arenas, the
   * server's tables) has grown before the baseline. */
  snapshot start = snap(&s);
  sf_fleet *f = sf_new(s.port, URI);
  open_streams(f, warm);
  long told, call_us;
  fan_out(&s, f, &told, &call_us);
  ck_assert_int_eq(told, warm);
  ck_assert_msg(sf_close(f, 16, T(60000)) == 0, "%s", sf_error(f));
  sf_free(f);
  snapshot base = wait_blocks(&s, start.blocks, T(3000) + KEEPALIVE_S * 3000L);

  long t0 = lc_now_ms();
  f = sf_new(s.port, URI);
  open_streams(f, n);
  long open_ms = lc_now_ms() - t0;
  snapshot full = snap(&s);
  ck_assert_msg(full.threads <= base.threads,
                "the server went from %ld to %ld threads with %ld streams",
                base.threads, full.threads, n);

  long fan_ms = fan_out(&s, f, &told, &call_us);
  ck_assert_msg(told == n, "mcp_server_resource_updated told %ld of %ld", told,
                n);
  check_events(f);
  ck_assert_int_eq(sf_open_count(f), n);

  ck_assert_msg(sf_close(f, 16, T(120000)) == 0, "%s", sf_error(f));
  sf_free(f);
  /* The server notices a closed stream at its next keep-alive. */
  snapshot after = wait_blocks(&s, base.blocks, T(30000) + KEEPALIVE_S * 3000L);
  /* Nobody is subscribed any more. */
  sf_fleet *none = sf_new(s.port, URI);
  fan_out(&s, none, &told, &call_us);
  sf_free(none);

  double per_stream = (double)(full.rss_kib - base.rss_kib) / (double)n;
  printf("streams: %ld streams (%ld legacy, %ld modern) open in %ld ms; "
         "server threads %ld before, %ld with them; RSS %ld KiB before, "
         "%ld KiB open (%.2f KiB per stream), %ld KiB after closing; "
         "libmcp %.0f bytes in %.1f blocks per stream; fan-out of one "
         "update to %ld subscribers %ld ms (the call %ld µs); after closing "
         "libmcp holds %ld blocks / %ld bytes more than before\n",
         n, n / 2, n - n / 2, open_ms, base.threads, full.threads, base.rss_kib,
         full.rss_kib, per_stream, after.rss_kib,
         (double)(full.bytes - base.bytes) / (double)n,
         (double)(full.blocks - base.blocks) / (double)n, n, fan_ms, call_us,
         after.blocks - base.blocks, after.bytes - base.bytes);
  fflush(stdout);
  ck_assert_msg(after.blocks == base.blocks && after.bytes == base.bytes,
                "after closing every stream the library holds %ld blocks "
                "(%ld bytes) more than before they opened",
                after.blocks - base.blocks, after.bytes - base.bytes);
  ck_assert_int_eq(told, 0);
  double lib_bytes = (double)(full.bytes - base.bytes) / (double)n;
  ck_assert_msg(lib_bytes <= LIB_BOUND_BYTES,
                "the library holds %.0f bytes per open stream (bound %d)",
                lib_bytes, LIB_BOUND_BYTES);
  ck_assert_msg(after.threads <= base.threads, "%ld threads after closing",
                after.threads);
  if (!lc_slow_run() && !lc_sanitized()) {
    ck_assert_msg(per_stream <= RSS_BOUND_KIB,
                  "%.2f KiB of server RSS per open stream (bound %d KiB)",
                  per_stream, RSS_BOUND_KIB);
    /* Back near the baseline: within a tenth of the growth, or 4 MiB. */
    long growth = full.rss_kib - base.rss_kib;
    long slack = growth / 10 > 4096 ? growth / 10 : 4096;
    ck_assert_msg(after.rss_kib <= base.rss_kib + slack,
                  "server RSS stayed at %ld KiB after closing (%ld before, "
                  "%ld open)",
                  after.rss_kib, base.rss_kib, full.rss_kib);
  }
  int status = server_stop(&s, T(30000));
  ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
                "the server ended with status %d", status);
}
END_TEST

int main(int argc, char **argv) {
  self_path = argv[0];
  if (argc == 3 && strcmp(argv[1], SERVE) == 0)
    return ss_serve("streams", atol(argv[2]), URI, KEEPALIVE_S);
  signal(SIGPIPE, SIG_IGN);
  Suite *s = suite_create("streams");
  tcase_add_test(tu_tcase(s, "streams", NULL, NULL, 600), ten_thousand_streams);
  return tu_run(s);
}
