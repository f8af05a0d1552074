/* The stdio transport over real pipes: framing, limits, end of input, write
 * errors, and the guard that keeps handler output off the protocol stream. */
#include <check.h>
#include <cjson/cJSON.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "testinternal.h"
#include "testutil.h"

#define INIT                                                                   \
  "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{"       \
  "\"protocolVersion\":\"2025-11-25\",\"capabilities\":{},\"clientInfo\":{"    \
  "\"name\":\"t\",\"version\":\"1\"}}}"

static int echo(mcp_call *call, void *user_data) {
  (void)user_data;
  const char *text = "";
  mcp_call_arg_string(call, "text", &text);
  return mcp_result_text(call, text);
}

static int noisy(mcp_call *call, void *user_data) {
  (void)user_data;
  printf("stray output from a handler\n");
  fflush(stdout);
  return mcp_result_text(call, "ok");
}

/* A handler's printf that nobody flushes: it sits in stdio's buffer
 * while the server runs. */
static int unflushed(mcp_call *call, void *user_data) {
  (void)user_data;
  printf("unflushed stray output\n");
  return mcp_result_text(call, "ok");
}

/* Set on the server's thread, read on the test's. */
static mcp_call *_Atomic parked;
static int park(mcp_call *call, void *user_data) {
  (void)user_data;
  parked = call;
  return MCP_DEFERRED;
}

static void sleep_us(long us) {
  struct timespec ts = {us / 1000000, (us % 1000000) * 1000};
  nanosleep(&ts, NULL);
}

static const char *const secret_scope[] = {"secret", NULL};

static mcp_server *make_server(void) {
  mcp_server *srv;
  mcp_server_info info = {.name = "stdio-test", .version = "1"};
  ck_assert_int_eq(mcp_server_new(&info, &srv), 0);
  mcp_tool t = {
      .name = "echo",
      .description = "Echoes text.",
      .input_schema = "{\"type\":\"object\",\"properties\":{"
                      "\"text\":{\"type\":\"string\"}}}",
      .annotations = {.read_only = MCP_HINT_TRUE, .open_world = MCP_HINT_FALSE},
      .handler = echo};
  ck_assert_int_eq(mcp_server_add_tool(srv, &t, NULL), 0);
  t.name = "noisy";
  t.handler = noisy;
  ck_assert_int_eq(mcp_server_add_tool(srv, &t, NULL), 0);
  t.name = "unflushed";
  t.handler = unflushed;
  ck_assert_int_eq(mcp_server_add_tool(srv, &t, NULL), 0);
  t.name = "park";
  t.handler = park;
  ck_assert_int_eq(mcp_server_add_tool(srv, &t, NULL), 0);
  t.name = "secret";
  t.handler = echo;
  t.scopes = secret_scope;
  ck_assert_int_eq(mcp_server_add_tool(srv, &t, NULL), 0);
  return srv;
}

typedef struct run {
  mcp_server *srv;
  mcp_stdio_options opts;
  int in_w;  /* test writes requests here */
  int out_r; /* test reads replies here */
  pthread_t thread;
  int rc;
} run;

static void *serve(void *arg) {
  run *r = arg;
  r->rc = mcp_serve_stdio(r->srv, &r->opts);
  close(r->opts.in_fd);
  close(r->opts.out_fd);
  return NULL;
}

static void start(run *r, mcp_server *srv, const mcp_principal *p,
                  size_t max_line) {
  int in[2], out[2];
  ck_assert_int_eq(pipe(in), 0);
  ck_assert_int_eq(pipe(out), 0);
  *r = (run){.srv = srv,
             .opts = {.principal = p,
                      .in_fd = in[0],
                      .out_fd = out[1],
                      .max_line = max_line},
             .in_w = in[1],
             .out_r = out[0]};
  ck_assert_int_eq(pthread_create(&r->thread, NULL, serve, r), 0);
}

/* Like start, with the options in o (its descriptors are replaced). */
static void start_with(run *r, mcp_server *srv, const mcp_stdio_options *o) {
  int in[2], out[2];
  ck_assert_int_eq(pipe(in), 0);
  ck_assert_int_eq(pipe(out), 0);
  *r = (run){.srv = srv, .opts = *o, .in_w = in[1], .out_r = out[0]};
  r->opts.in_fd = in[0];
  r->opts.out_fd = out[1];
  ck_assert_int_eq(pthread_create(&r->thread, NULL, serve, r), 0);
}

static void put(run *r, const char *bytes) {
  size_t n = strlen(bytes);
  ck_assert_int_eq(write(r->in_w, bytes, n), (ssize_t)n);
}

/* Everything readable from fd until end of file, NUL-terminated; the
 * caller frees it. */
static char *read_all(int fd) {
  size_t len = 0, cap = 4096;
  char *all = malloc(cap);
  ck_assert_ptr_nonnull(all);
  for (;;) {
    if (len + 1 == cap) {
      all = realloc(all, cap *= 2);
      ck_assert_ptr_nonnull(all);
    }
    ssize_t n = read(fd, all + len, cap - len - 1);
    if (n <= 0)
      break;
    len += (size_t)n;
  }
  all[len] = '\0';
  return all;
}

/* Reads from fd until n whole lines have come (the server keeps running);
 * the caller frees the result. */
static char *read_lines(int fd, int n) {
  size_t len = 0, cap = 4096;
  char *all = malloc(cap);
  ck_assert_ptr_nonnull(all);
  while (n > 0) {
    if (len + 1 == cap) {
      all = realloc(all, cap *= 2);
      ck_assert_ptr_nonnull(all);
    }
    ck_assert_int_eq(read(fd, all + len, 1), 1);
    n -= all[len++] == '\n';
  }
  all[len] = '\0';
  return all;
}

/* Closes input, waits for the server, and returns everything it wrote. */
static char *finish(run *r) {
  close(r->in_w);
  char *all = read_all(r->out_r);
  pthread_join(r->thread, NULL);
  close(r->out_r);
  return all;
}

/* Serves input, all in one write, on a fresh run r (principal p, default
 * line limit) and returns everything the server wrote. */
static char *serve_input(run *r, mcp_server *srv, const mcp_principal *p,
                         const char *input) {
  start(r, srv, p, 0);
  put(r, input);
  return finish(r);
}

/* Splits output into lines and checks line i against expected. */
static void assert_line(const char *all, int i, const char *expected) {
  const char *p = all;
  for (int k = 0; k < i && p; k++) {
    p = strchr(p, '\n');
    if (p)
      p++;
  }
  ck_assert_msg(p && *p, "line %d missing in output:\n%s", i, all);
  const char *nl = strchr(p, '\n');
  ck_assert_msg(nl != NULL, "line %d has no newline", i);
  cJSON *j = cJSON_ParseWithLength(p, (size_t)(nl - p));
  ck_assert_msg(j != NULL, "line %d is not JSON", i);
  tu_assert_json(j, expected);
  cJSON_Delete(j);
}

static int count_lines(const char *all) {
  int n = 0;
  for (; *all; all++)
    n += *all == '\n';
  return n;
}

START_TEST(several_messages_in_one_write) {
  mcp_server *srv = make_server();
  run r;
  char *out =
      serve_input(&r, srv, NULL,
                  INIT "\n{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}\n"
                       "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"ping\"}\n");
  ck_assert_int_eq(r.rc, 0);
  ck_assert_int_eq(count_lines(out), 3);
  assert_line(out, 0,
              "{\"id\":1,\"result\":{\"protocolVersion\":\"2025-11-25\"}}");
  assert_line(out, 1, "{\"id\":2,\"result\":{}}");
  assert_line(out, 2, "{\"id\":3,\"result\":{}}");
  free(out);
  mcp_server_free(srv);
}
END_TEST

/* Pipelined requests: replies wait while more lines are queued and leave
 * together when the queue ends (the input arrives in several reads, so
 * over several flushes): every one arrives, once, in order. The replies
 * stay under a pipe's capacity, as the test reads them only at the end. */
START_TEST(pipelined_requests_answered_in_order) {
  mcp_server *srv = make_server();
  enum { N = 1400 };
  size_t cap = (size_t)N * 64 + 512, len = 0;
  char *in = malloc(cap);
  ck_assert_ptr_nonnull(in);
  len += (size_t)snprintf(in + len, cap - len, "%s\n", INIT);
  for (int i = 0; i < N; i++)
    len += (size_t)snprintf(in + len, cap - len,
                            "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":"
                            "\"ping\"}\n",
                            i + 2);
  run r;
  char *out = serve_input(&r, srv, NULL, in);
  ck_assert_int_eq(r.rc, 0);
  ck_assert_int_eq(count_lines(out), N + 1);
  const char *p = strchr(out, '\n') + 1;
  for (int i = 0; i < N; i++) {
    char want[64];
    int n =
        snprintf(want, sizeof want, "{\"jsonrpc\":\"2.0\",\"id\":%d,", i + 2);
    ck_assert_msg(strncmp(p, want, (size_t)n) == 0, "reply %d: %.60s", i, p);
    p = strchr(p, '\n') + 1;
  }
  free(out);
  free(in);
  mcp_server_free(srv);
}
END_TEST

START_TEST(one_message_split_across_writes) {
  mcp_server *srv = make_server();
  run r;
  start(&r, srv, NULL, 0);
  const char *msg = INIT "\n";
  for (const char *p = msg; *p; p++) {
    ck_assert_int_eq(write(r.in_w, p, 1), 1);
    if ((p - msg) % 7 == 0)
      sleep_us(100);
  }
  char *out = finish(&r);
  ck_assert_int_eq(count_lines(out), 1);
  assert_line(
      out, 0,
      "{\"id\":1,\"result\":{\"serverInfo\":{\"name\":\"stdio-test\"}}}");
  free(out);
  mcp_server_free(srv);
}
END_TEST

START_TEST(crlf_and_blank_lines) {
  mcp_server *srv = make_server();
  run r;
  char *out = serve_input(&r, srv, NULL,
                          "\r\n\n   \n" INIT
                          "\r\n\r\n{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":"
                          "\"ping\"}\r\n");
  ck_assert_int_eq(count_lines(out), 2);
  assert_line(out, 1, "{\"id\":2,\"result\":{}}");
  free(out);
  mcp_server_free(srv);
}
END_TEST

START_TEST(last_line_without_newline) {
  mcp_server *srv = make_server();
  run r;
  char *out = serve_input(&r, srv, NULL,
                          "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"ping\"}");
  ck_assert_int_eq(count_lines(out), 1);
  assert_line(out, 0, "{\"id\":7,\"result\":{}}");
  free(out);
  mcp_server_free(srv);
}
END_TEST

START_TEST(oversized_line_is_refused_then_stream_recovers) {
  mcp_server *srv = make_server();
  run r;
  start(&r, srv, NULL, 256);
  char big[2000];
  memset(big, 'x', sizeof big - 1);
  big[sizeof big - 1] = '\0';
  put(&r, big);
  put(&r, big); /* still the same line: answered once */
  put(&r, "\n{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}\n");
  char *out = finish(&r);
  ck_assert_int_eq(count_lines(out), 2);
  assert_line(out, 0, "{\"id\":null,\"error\":{\"code\":-32700}}");
  ck_assert_ptr_nonnull(strstr(out, "longer than 256 bytes"));
  assert_line(out, 1, "{\"id\":2,\"result\":{}}");
  free(out);
  mcp_server_free(srv);
}
END_TEST

START_TEST(raw_newline_inside_a_message_splits_it) {
  mcp_server *srv = make_server();
  run r;
  char *out =
      serve_input(&r, srv, NULL,
                  "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\n\"ping\"}\n"
                  "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}\n");
  ck_assert_int_eq(count_lines(out), 3);
  assert_line(out, 0, "{\"id\":null,\"error\":{\"code\":-32700}}");
  assert_line(out, 1, "{\"id\":null,\"error\":{\"code\":-32700}}");
  assert_line(out, 2, "{\"id\":2,\"result\":{}}");
  free(out);
  mcp_server_free(srv);
}
END_TEST

START_TEST(no_principal_means_every_scope) {
  mcp_server *srv = make_server();
  run r;
  char *out = serve_input(
      &r, srv, NULL,
      INIT "\n{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\","
           "\"params\":{\"name\":\"secret\",\"arguments\":{\"text\":\"s\"}"
           "}}\n");
  assert_line(out, 1, "{\"id\":2,\"result\":{\"content\":[{\"text\":\"s\"}]}}");
  free(out);
  mcp_server_free(srv);
}
END_TEST

START_TEST(configured_principal_is_enforced) {
  mcp_server *srv = make_server();
  const char *const scopes[] = {"other", NULL};
  mcp_principal who = {.subject = "u", .scopes = scopes};
  run r;
  char *out = serve_input(
      &r, srv, &who,
      INIT "\n{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\","
           "\"params\":{\"name\":\"secret\",\"arguments\":{}}}\n");
  assert_line(out, 1,
              "{\"id\":2,\"error\":{\"code\":-31403,\"data\":{"
              "\"requiredScopes\":[\"secret\"]}}}");
  free(out);
  mcp_server_free(srv);
}
END_TEST

START_TEST(end_of_input_cancels_deferred_calls) {
  mcp_server *srv = make_server();
  run r;
  parked = NULL;
  start(&r, srv, NULL, 0);
  put(&r, INIT "\n{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\","
               "\"params\":{\"name\":\"park\"}}\n");
  /* Give the server time to park the call before input ends. */
  for (int i = 0; i < 1000 && parked == NULL; i++)
    sleep_us(1000);
  ck_assert_ptr_nonnull(parked);
  close(r.in_w);
  /* The server waits for the parked call; finish it once cancelled. */
  for (int i = 0; i < 5000 && !mcp_call_cancelled(parked); i++)
    sleep_us(1000);
  ck_assert(mcp_call_cancelled(parked));
  ck_assert_int_eq(mcp_call_finish(parked, 0), 0);
  r.in_w = open("/dev/null", O_WRONLY);
  char *out = finish(&r);
  ck_assert_int_eq(r.rc, 0);
  ck_assert_int_eq(count_lines(out), 1); /* no reply to the cancelled call */
  free(out);
  mcp_server_free(srv);
}
END_TEST

/* An executor whose calls each run on a thread of their own 50 ms after
 * they were handed over: at end of input the call is still in its hands. */
static void *execute_later(void *arg) {
  sleep_us(50000);
  mcp_call_execute(arg, "later");
  return NULL;
}
static int submit_later(mcp_call *call, void *user_data) {
  (void)user_data;
  pthread_t t;
  ck_assert_int_eq(pthread_create(&t, NULL, execute_later, call), 0);
  pthread_detach(t);
  return 0;
}

START_TEST(end_of_input_waits_for_calls_an_executor_holds) {
  mcp_server *srv = make_server();
  mcp_executor ex = {.submit = submit_later};
  ck_assert_int_eq(mcp_server_set_executor(srv, &ex), 0);
  run r;
  /* Input ends right after the call, as in `printf ... | server`. */
  char *out = serve_input(
      &r, srv, NULL,
      INIT "\n{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\","
           "\"params\":{\"name\":\"echo\",\"arguments\":{\"text\":\"late\"}}}"
           "\n");
  ck_assert_int_eq(r.rc, 0);
  ck_assert_int_eq(count_lines(out), 2);
  assert_line(out, 1,
              "{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"content\":[{"
              "\"type\":\"text\",\"text\":\"late\"}]}}");
  free(out);
  mcp_server_free(srv);
}
END_TEST

/* F18 through the poll loop: a deferred call is answered with the timeout
 * while the client stays silent, and its late finish sends nothing. */
START_TEST(f18_deadline_answered_by_the_poll_loop) {
  mcp_server *srv = make_server();
  mcp_server_set_call_timeout(srv, 50);
  mcp_server_set_log(srv, tu_silent_log, NULL);
  run r;
  parked = NULL;
  start(&r, srv, NULL, 0);
  put(&r, INIT "\n{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\","
               "\"params\":{\"name\":\"park\"}}\n");
  /* The initialize answer, then (no more input) the timeout. */
  char *lines = read_lines(r.out_r, 2);
  assert_line(lines, 1, "{\"id\":2,\"result\":{\"isError\":true}}");
  ck_assert_ptr_nonnull(strstr(lines, "timeout: the tool did not finish "
                                      "within 50 ms"));
  free(lines);
  ck_assert_ptr_nonnull(parked);
  ck_assert(mcp_call_cancelled(parked));
  ck_assert_int_eq(mcp_call_finish(parked, 0), 0);
  char *out = finish(&r);
  ck_assert_int_eq(r.rc, 0);
  ck_assert_str_eq(out, ""); /* the finish sent nothing */
  free(out);
  mcp_server_free(srv);
}
END_TEST

/* Reads one line from fd into line (cap bytes) if one comes within a
 * second; returns its length with the newline, or 0. */
static size_t line_within_a_second(int fd, char *line, size_t cap) {
  struct pollfd p = {.fd = fd, .events = POLLIN};
  size_t len = 0;
  while (len + 1 < cap && poll(&p, 1, 1000) == 1 &&
         read(fd, line + len, 1) == 1)
    if (line[len++] == '\n')
      break;
  line[len] = '\0';
  return len;
}

/* A short session, one message at a time, with allocation n failing, for
 * every n: whatever the transport writes is whole lines, each a strict
 * JSON-RPC message answering a different request; nothing leaks and the
 * transport ends. Among the points hit: the read buffer, and the pending
 * buffer a reply joins for its single write (the reply then goes out in
 * pieces). The first run without a failure answers all three requests. */
START_TEST(allocation_failure_keeps_lines_whole) {
  static const char *const input[] = {
      "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":"
      "{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},"
      "\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}}\n",
      "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n",
      "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":"
      "{\"name\":\"echo\",\"arguments\":{\"text\":\"a\"}}}\n",
      "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":"
      "{\"name\":\"echo\",\"arguments\":{\"text\":\"b\"}}}\n"};
  for (long n = 1;; n++) {
    ck_assert_msg(n < 2000, "no run without a failed allocation");
    tu_alloc_install(0);
    mcp_server *srv = make_server();
    tu_alloc_arm(n);
    run r;
    start(&r, srv, NULL, 0);
    char got[3][4096];
    int lines = 0;
    for (size_t i = 0; i < TU_COUNT(input); i++) {
      /* The transport may have ended already (no memory for its buffer). */
      if (write(r.in_w, input[i], strlen(input[i])) < 0)
        break;
      if (i != 1 && lines < 3 &&
          line_within_a_second(r.out_r, got[lines], sizeof got[lines]))
        lines++;
    }
    char *rest = finish(&r);
    long failures = tu_alloc_disarm();
    ck_assert_msg(*rest == '\0', "fail_at %ld: more lines: %s", n, rest);
    free(rest);
    ck_assert_msg(r.rc == 0 || r.rc == MCP_ENOMEM, "fail_at %ld: rc %d", n,
                  r.rc);
    /* Checked once the allocator fails no more: the check parses too. */
    bool seen[3] = {false, false, false};
    for (int k = 0; k < lines; k++) {
      size_t len = strlen(got[k]);
      ck_assert_msg(got[k][len - 1] == '\n', "fail_at %ld: a cut line: %s", n,
                    got[k]);
      tu_assert_strict(got[k], len - 1, "a reply");
      cJSON *j = cJSON_ParseWithLength(got[k], len - 1);
      const cJSON *id = cJSON_GetObjectItemCaseSensitive(j, "id");
      ck_assert_msg(cJSON_IsNumber(id) && id->valueint >= 0 &&
                        id->valueint < 3 && !seen[id->valueint],
                    "fail_at %ld: an id answered twice or never asked: %s", n,
                    got[k]);
      seen[id->valueint] = true;
      cJSON_Delete(j);
    }
    mcp_server_free(srv);
    ck_assert_msg(tu_alloc.live == 0, "fail_at %ld: %ld blocks leaked", n,
                  tu_alloc.live);
    tu_alloc_remove();
    if (failures == 0) {
      ck_assert_int_eq(lines, 3);
      ck_assert_int_eq(r.rc, 0);
      break;
    }
  }
}
END_TEST

START_TEST(write_error_ends_serving) {
  mcp_server *srv = make_server();
  run r;
  start(&r, srv, NULL, 0);
  close(r.out_r); /* the peer is gone: writes fail with EPIPE */
  put(&r, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}\n");
  close(r.in_w);
  pthread_join(r.thread, NULL);
  ck_assert_int_eq(r.rc, MCP_EIO);
  mcp_server_free(srv);
}
END_TEST

/* A handler the stop signals must never reach while mcp_serve_stdio holds
 * them. */
static _Atomic int marker_runs;
static void marker(int sig) {
  (void)sig;
  marker_runs++;
}

static void (*handler_now(int sig))(int) {
  struct sigaction now;
  ck_assert_int_eq(sigaction(sig, NULL, &now), 0);
  return now.sa_handler;
}

/* I5: SIGTERM (and SIGINT) with stop_on_signal. A real signal to this
 * process, input left open: serving stops, the deferred call sees the
 * cancellation, the replies already made are on the pipe, the return is 0,
 * and the handler that was there before is back. */
START_TEST(signal_stops_serving_gracefully) {
  const int sig = _i == 0 ? SIGTERM : SIGINT;
  struct sigaction mark = {.sa_handler = marker}, before;
  sigemptyset(&mark.sa_mask);
  ck_assert_int_eq(sigaction(sig, &mark, &before), 0);
  marker_runs = 0;
  mcp_server *srv = make_server();
  run r;
  parked = NULL;
  start_with(&r, srv, &(mcp_stdio_options){.stop_on_signal = true});
  put(&r, INIT "\n{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\","
               "\"params\":{\"name\":\"echo\",\"arguments\":{\"text\":"
               "\"before\"}}}\n{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":"
               "\"tools/call\",\"params\":{\"name\":\"park\"}}\n");
  /* Both answers that can be made are made before the signal. */
  char *got = read_lines(r.out_r, 2);
  for (int i = 0; i < 5000 && parked == NULL; i++)
    sleep_us(1000);
  ck_assert_ptr_nonnull(parked);
  ck_assert_int_eq(kill(getpid(), sig), 0);
  /* The server waits (bounded) for the parked call; its owner sees the
   * cancellation and finishes it, as a worker thread would. */
  for (int i = 0; i < 20000 && !mcp_call_cancelled(parked); i++)
    sleep_us(1000);
  ck_assert(mcp_call_cancelled(parked));
  ck_assert_int_eq(mcp_call_finish(parked, 0), 0);
  /* Input is still open: the signal alone ended serving. */
  pthread_join(r.thread, NULL);
  char *rest = read_all(r.out_r);
  ck_assert_int_eq(r.rc, 0);
  assert_line(got, 1,
              "{\"id\":2,\"result\":{\"content\":[{\"text\":\"before\"}]}}");
  ck_assert_str_eq(rest, ""); /* no reply to the cancelled call */
  ck_assert_int_eq(marker_runs, 0);
  ck_assert(handler_now(sig) == marker);
  free(got);
  free(rest);
  close(r.in_w);
  close(r.out_r);
  mcp_server_free(srv);
  sigaction(sig, &before, NULL);
}
END_TEST

/* A zeroed options struct leaves the signals alone; with stop_on_signal
 * they are taken while serving, by one call at a time. */
START_TEST(stop_on_signal_is_opt_in_and_one_at_a_time) {
  struct sigaction mark = {.sa_handler = marker}, before;
  sigemptyset(&mark.sa_mask);
  ck_assert_int_eq(sigaction(SIGTERM, &mark, &before), 0);
  mcp_server *srv = make_server();
  run a, b;
  start(&a, srv, NULL, 0);
  put(&a, INIT "\n");
  free(read_lines(a.out_r, 1));
  ck_assert(handler_now(SIGTERM) == marker);
  free(finish(&a));
  ck_assert_int_eq(a.rc, 0);

  start_with(&b, srv, &(mcp_stdio_options){.stop_on_signal = true});
  put(&b, INIT "\n");
  free(read_lines(b.out_r, 1));
  ck_assert(handler_now(SIGTERM) != marker);
  ck_assert(handler_now(SIGINT) != SIG_DFL);
  int in[2], out[2];
  ck_assert_int_eq(pipe(in), 0);
  ck_assert_int_eq(pipe(out), 0);
  mcp_stdio_options second = {
      .in_fd = in[0], .out_fd = out[1], .stop_on_signal = true};
  ck_assert_int_eq(mcp_serve_stdio(srv, &second), MCP_ESTATE);
  for (int i = 0; i < 2; i++) {
    close(in[i]);
    close(out[i]);
  }
  free(finish(&b));
  ck_assert_int_eq(b.rc, 0);
  ck_assert(handler_now(SIGTERM) == marker);
  mcp_server_free(srv);
  sigaction(SIGTERM, &before, NULL);
}
END_TEST

/* In a child whose stdin/stdout are pipes, a handler's printf must land on
 * stderr, never between protocol lines. */
START_TEST(stdout_is_reserved_for_the_protocol) {
  int in[2], out[2], err[2];
  ck_assert_int_eq(pipe(in), 0);
  ck_assert_int_eq(pipe(out), 0);
  ck_assert_int_eq(pipe(err), 0);
  pid_t pid = fork();
  ck_assert_int_ge(pid, 0);
  if (pid == 0) {
    dup2(in[0], 0);
    dup2(out[1], 1);
    dup2(err[1], 2);
    close(in[1]);
    close(out[0]);
    close(err[0]);
    mcp_server *srv = make_server();
    int rc = mcp_serve_stdio(srv, NULL);
    mcp_server_free(srv);
    /* As exit() would: whatever stdio still buffers goes out now. */
    fflush(stdout);
    _exit(rc == 0 ? 0 : 1);
  }
  close(in[0]);
  close(out[1]);
  close(err[1]);
  const char *req =
      INIT "\n{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\","
           "\"params\":{\"name\":\"noisy\"}}\n"
           "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\","
           "\"params\":{\"name\":\"unflushed\"}}\n";
  ck_assert_int_eq(write(in[1], req, strlen(req)), (ssize_t)strlen(req));
  close(in[1]);
  char *buf = read_all(out[0]);
  char *ebuf = read_all(err[0]);
  int status;
  waitpid(pid, &status, 0);
  ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  ck_assert_ptr_null(strstr(buf, "stray output"));
  ck_assert_int_eq(count_lines(buf), 3);
  assert_line(buf, 1,
              "{\"id\":2,\"result\":{\"content\":[{\"text\":\"ok\"}]}}");
  ck_assert_ptr_nonnull(strstr(ebuf, "stray output from a handler"));
  /* Even unflushed, it lands on stderr, not after the replies. */
  ck_assert_ptr_nonnull(strstr(ebuf, "unflushed stray output"));
  ck_assert_ptr_nonnull(strstr(ebuf, "holds every scope"));
  free(buf);
  free(ebuf);
  close(out[0]);
  close(err[0]);
}
END_TEST

/* The note that the local user holds every scope, as a log callback sees
 * it: counted when its level is at least *(mcp_log_level *)user_data. */
static int scope_notes;
static void count_scope_notes(mcp_log_level level, const char *message,
                              void *user_data) {
  if (strstr(message, "holds every scope") &&
      level >= *(const mcp_log_level *)user_data)
    scope_notes++;
}

/* Serves srv once on an input already at its end, as principal p. */
static int serve_empty(mcp_server *srv, const mcp_principal *p) {
  int in[2], out[2];
  if (pipe(in) != 0 || pipe(out) != 0)
    return -1;
  close(in[1]);
  const mcp_stdio_options o = {
      .principal = p, .in_fd = in[0], .out_fd = out[1]};
  int rc = mcp_serve_stdio(srv, &o);
  close(in[0]);
  close(out[0]);
  close(out[1]);
  return rc;
}

/* In a fresh process (the note is said once per process), with stderr on
 * a pipe: five runs on two servers, the first with a principal, the others
 * without; a log callback counting notes at keep (or none when keep is
 * negative). At warning level, a process forked at the end must count one
 * more. Returns the child's exit status (the notes counted, or 100 when a
 * run failed) and fills *err with its stderr. */
static int scope_note_runs(int keep, char **err) {
  int e[2];
  ck_assert_int_eq(pipe(e), 0);
  fflush(NULL);
  pid_t pid = fork();
  ck_assert_int_ge(pid, 0);
  if (pid == 0) {
    dup2(e[1], STDERR_FILENO);
    close(e[0]);
    close(e[1]);
    mcp_log_level level = keep < 0 ? MCP_LOG_DEBUG : (mcp_log_level)keep;
    const mcp_principal who = {.subject = "someone"};
    int failed = 0;
    for (int i = 0; i < 2; i++) {
      mcp_server *srv = make_server();
      if (keep >= 0)
        mcp_server_set_log(srv, count_scope_notes, &level);
      if (i == 0)
        failed |= serve_empty(srv, &who);
      failed |= serve_empty(srv, NULL) | serve_empty(srv, NULL);
      if (i == 1 && keep == MCP_LOG_WARNING) {
        /* A process forked from this one is a process of its own. */
        pid_t child = fork();
        if (child == 0)
          _exit(serve_empty(srv, NULL) ? 100 : scope_notes);
        int status;
        failed |= child < 0 || waitpid(child, &status, 0) != child ||
                  !WIFEXITED(status) || WEXITSTATUS(status) != scope_notes + 1;
      }
      mcp_server_free(srv);
    }
    _exit(failed ? 100 : scope_notes);
  }
  close(e[1]);
  *err = read_all(e[0]);
  close(e[0]);
  int status;
  ck_assert_int_eq(waitpid(pid, &status, 0), pid);
  ck_assert(WIFEXITED(status));
  return WEXITSTATUS(status);
}

static int occurrences(const char *text, const char *what) {
  int n = 0;
  for (const char *p = text; (p = strstr(p, what)) != NULL; p += strlen(what))
    n++;
  return n;
}

START_TEST(every_scope_note_said_once_and_can_be_silenced) {
  char *err;
  /* The default log: a warning on stderr, once in a process. */
  ck_assert_int_eq(scope_note_runs(-1, &err), 0);
  ck_assert_int_eq(occurrences(err, "libmcp: stdio: no principal configured, "
                                    "so the local user holds every scope\n"),
                   1);
  ck_assert_int_eq(occurrences(err, "holds every scope"), 1);
  free(err);
  /* Through the server's log callback, at warning level, once. */
  ck_assert_int_eq(scope_note_runs(MCP_LOG_WARNING, &err), 1);
  ck_assert_ptr_null(strstr(err, "holds every scope"));
  free(err);
  /* A callback keeping only errors: silent, on stderr too. */
  ck_assert_int_eq(scope_note_runs(MCP_LOG_ERROR, &err), 0);
  ck_assert_ptr_null(strstr(err, "holds every scope"));
  free(err);
}
END_TEST

static Suite *stdio_suite(void) {
  Suite *s = suite_create("stdio");
  TCase *tc = tcase_create("framing");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, several_messages_in_one_write);
  tcase_add_test(tc, pipelined_requests_answered_in_order);
  tcase_add_test(tc, one_message_split_across_writes);
  tcase_add_test(tc, crlf_and_blank_lines);
  tcase_add_test(tc, last_line_without_newline);
  tcase_add_test(tc, oversized_line_is_refused_then_stream_recovers);
  tcase_add_test(tc, raw_newline_inside_a_message_splits_it);
  tcase_add_test(tc, no_principal_means_every_scope);
  tcase_add_test(tc, configured_principal_is_enforced);
  tcase_add_test(tc, end_of_input_cancels_deferred_calls);
  tcase_add_test(tc, end_of_input_waits_for_calls_an_executor_holds);
  tcase_add_test(tc, f18_deadline_answered_by_the_poll_loop);
  tcase_add_test(tc, allocation_failure_keeps_lines_whole);
  tcase_add_test(tc, write_error_ends_serving);
  tcase_add_test(tc, stdout_is_reserved_for_the_protocol);
  tcase_add_test(tc, every_scope_note_said_once_and_can_be_silenced);
  tcase_add_loop_test(tc, signal_stops_serving_gracefully, 0, 2);
  tcase_add_test(tc, stop_on_signal_is_opt_in_and_one_at_a_time);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  signal(SIGPIPE, SIG_IGN);
  return tu_run(stdio_suite());
}
