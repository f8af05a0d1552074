/* Per-request sinks (mcp_session_receive_to): the routing a transport with
 * one stream per request relies on. Every message a request causes reaches
 * its sink, done comes exactly once after the last one, and nothing else
 * leaks into it. */
#include <check.h>
#include <cjson/cJSON.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "testutil.h"

typedef struct sink_log {
  char *msgs[16];
  int n;
  int done;
  int fail; /* make send fail */
} sink_log;

static int sink_send(const char *msg, size_t len, void *user_data) {
  sink_log *l = user_data;
  if (l->fail)
    return MCP_EIO;
  ck_assert_int_lt(l->n, 16);
  ck_assert_int_eq(l->done, 0); /* nothing after done */
  l->msgs[l->n] = strndup(msg, len);
  ck_assert_ptr_nonnull(l->msgs[l->n]);
  l->n++;
  return 0;
}

static void sink_done(void *user_data) {
  sink_log *l = user_data;
  l->done++;
}

static void sink_clear(sink_log *l) {
  for (int i = 0; i < l->n; i++)
    free(l->msgs[i]);
  memset(l, 0, sizeof *l);
}

static void assert_sink_msg(const sink_log *l, int i, const char *expected) {
  ck_assert_msg(i < l->n, "sink message %d missing (%d)", i, l->n);
  cJSON *m = cJSON_Parse(l->msgs[i]);
  ck_assert_ptr_nonnull(m);
  tu_assert_json(m, expected);
  cJSON_Delete(m);
}

static mcp_call *parked;
static int run(mcp_call *call, void *user_data) {
  (void)user_data;
  const char *mode = "";
  mcp_call_arg_string(call, "mode", &mode);
  if (strcmp(mode, "defer") == 0) {
    mcp_call_progress(call, 1, 2, NULL);
    parked = call;
    return MCP_DEFERRED;
  }
  if (strcmp(mode, "ask") == 0) {
    const cJSON *a = mcp_call_input(call, "q");
    if (a == NULL) {
      int rc = mcp_call_request_input(
          call, "q", MCP_INPUT_ELICITATION,
          "{\"message\":\"ok?\",\"requestedSchema\":{\"type\":\"object\","
          "\"properties\":{}}}");
      return rc ? rc : MCP_INPUT_REQUIRED;
    }
    return mcp_result_text(call, "answered");
  }
  return mcp_result_text(call, "done");
}

static mcp_server *srv;
static tu_peer P;

static void setup(void) {
  mcp_server_info info = {.name = "sink", .version = "1"};
  ck_assert_int_eq(mcp_server_new(&info, &srv), 0);
  mcp_tool t = {
      .name = "run",
      .description = "Runs as asked.",
      .input_schema = "{\"type\":\"object\"}",
      .annotations = {.read_only = MCP_HINT_TRUE, .open_world = MCP_HINT_FALSE},
      .handler = run};
  ck_assert_int_eq(mcp_server_add_tool(srv, &t, NULL), 0);
  tu_peer_open(&P, srv, NULL);
  ck_assert_int_eq(
      tu_send(&P,
              "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\","
              "\"params\":{\"protocolVersion\":\"2025-11-25\",\"capabilities\":"
              "{\"elicitation\":{}},\"clientInfo\":{\"name\":\"t\"}}}"),
      0);
  ck_assert_int_eq(tu_send(&P, "{\"jsonrpc\":\"2.0\",\"method\":"
                               "\"notifications/initialized\"}"),
                   0);
  tu_clear(&P);
  parked = NULL;
}

static void teardown(void) {
  tu_peer_close(&P);
  mcp_server_free(srv);
}

static int send_to(const char *msg, sink_log *l) {
  mcp_sink k = {.send = sink_send, .done = sink_done, .user_data = l};
  return mcp_session_receive_to(P.session, msg, strlen(msg), &k);
}

#define CALL(id, mode)                                                         \
  "{\"jsonrpc\":\"2.0\",\"id\":" #id ",\"method\":\"tools/call\",\"params\":{" \
  "\"name\":\"run\",\"arguments\":{\"mode\":\"" mode "\"},\"_meta\":{"         \
  "\"progressToken\":\"p\"}}}"

START_TEST(sync_reply_goes_to_the_sink_and_done_comes_first) {
  sink_log l = {0};
  ck_assert_int_eq(send_to(CALL(1, "now"), &l), 0);
  ck_assert_int_eq(l.n, 1);
  ck_assert_int_eq(l.done, 1);
  assert_sink_msg(&l, 0,
                  "{\"id\":1,\"result\":{\"content\":[{\"text\":"
                  "\"done\"}]}}");
  ck_assert_uint_eq(P.nout, 0); /* nothing on the session's callback */
  sink_clear(&l);
  /* A notification causes nothing: done at once, no message. */
  ck_assert_int_eq(
      send_to("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/x\"}", &l), 0);
  ck_assert_int_eq(l.n, 0);
  ck_assert_int_eq(l.done, 1);
}
END_TEST

static void *finish_later(void *arg) {
  mcp_call *c = arg;
  mcp_call_progress(c, 2, 2, NULL);
  mcp_result_text(c, "late");
  mcp_call_finish(c, 0);
  return NULL;
}

START_TEST(deferred_call_keeps_its_sink_until_it_ends) {
  sink_log l = {0};
  ck_assert_int_eq(send_to(CALL(2, "defer"), &l), 0);
  ck_assert_ptr_nonnull(parked);
  ck_assert_int_eq(l.n, 1); /* the first progress notification */
  ck_assert_int_eq(l.done, 0);
  /* Tool list changes are nobody's reply: the session's callback. */
  mcp_tool t = {
      .name = "more",
      .description = "More.",
      .annotations = {.read_only = MCP_HINT_TRUE, .open_world = MCP_HINT_FALSE},
      .handler = run};
  ck_assert_int_eq(mcp_server_add_tool(srv, &t, NULL), 0);
  ck_assert_uint_eq(P.nout, 1);
  ck_assert_int_eq(l.n, 1);
  pthread_t th;
  ck_assert_int_eq(pthread_create(&th, NULL, finish_later, parked), 0);
  pthread_join(th, NULL);
  ck_assert_int_eq(l.n, 3);
  ck_assert_int_eq(l.done, 1);
  assert_sink_msg(&l, 1, "{\"method\":\"notifications/progress\"}");
  assert_sink_msg(&l, 2,
                  "{\"id\":2,\"result\":{\"content\":[{\"text\":"
                  "\"late\"}]}}");
  sink_clear(&l);
}
END_TEST

/* Legacy input over two requests: the question and the final reply go to
 * the sink of the call; the client's answer arrives on its own sink, which
 * gets nothing and is done at once. */
START_TEST(input_round_trip_across_two_sinks) {
  sink_log call_sink = {0}, answer_sink = {0};
  ck_assert_int_eq(send_to(CALL(3, "ask"), &call_sink), 0);
  ck_assert_int_eq(call_sink.n, 1);
  ck_assert_int_eq(call_sink.done, 0);
  assert_sink_msg(&call_sink, 0,
                  "{\"id\":1,\"method\":\"elicitation/create\"}");
  ck_assert_int_eq(send_to("{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{"
                           "\"action\":\"accept\",\"content\":{}}}",
                           &answer_sink),
                   0);
  ck_assert_int_eq(answer_sink.n, 0);
  ck_assert_int_eq(answer_sink.done, 1);
  ck_assert_int_eq(call_sink.n, 2);
  ck_assert_int_eq(call_sink.done, 1);
  assert_sink_msg(&call_sink, 1,
                  "{\"id\":3,\"result\":{\"content\":[{\"text\":"
                  "\"answered\"}]}}");
  ck_assert_uint_eq(P.nout, 0);
  sink_clear(&call_sink);
}
END_TEST

/* A sink that cannot deliver stops only itself: the session stays open and
 * done still comes. */
START_TEST(failing_sink_does_not_close_the_session) {
  sink_log l = {.fail = 1};
  ck_assert_int_eq(send_to(CALL(4, "now"), &l), 0);
  ck_assert_int_eq(l.done, 1);
  ck_assert_int_eq(tu_send(&P, "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":"
                               "\"ping\"}"),
                   0);
  tu_assert_msg(&P, 0, "{\"id\":5,\"result\":{}}");
}
END_TEST

/* Closing the session with a call still holding a sink: done comes when
 * the call finishes, and its reply goes nowhere. */
START_TEST(session_freed_before_the_call_ends) {
  sink_log l = {0};
  ck_assert_int_eq(send_to(CALL(6, "defer"), &l), 0);
  ck_assert_int_eq(l.done, 0);
  tu_peer_close(&P);
  ck_assert_int_eq(l.done, 0);
  /* Nothing more is sent once the session is freed: not progress, not a
   * log message, not the reply (mcp_session_free). */
  ck_assert_int_eq(mcp_call_progress(parked, 2, 2, "late"), 0);
  mcp_call_log(parked, MCP_LOG_ERROR, "late");
  ck_assert_int_eq(l.n, 1);
  mcp_call_finish(parked, 0);
  ck_assert_int_eq(l.done, 1);
  ck_assert_int_eq(l.n, 1); /* only the progress sent before */
  sink_clear(&l);
  tu_peer_open(&P, srv, NULL); /* for teardown */
}
END_TEST

/* The natural shutdown order (close the session, free the server) while a
 * deferred call is still out: the call still finds both, and the last one
 * out frees the server. ASan or valgrind would see a use after free. */
START_TEST(server_freed_before_a_deferred_call_ends) {
  sink_log l = {0};
  ck_assert_int_eq(send_to(CALL(7, "defer"), &l), 0);
  tu_peer_close(&P);
  mcp_server_free(srv);
  srv = NULL;
  ck_assert_int_eq(mcp_call_finish(parked, 0), 0);
  ck_assert_int_eq(l.done, 1);
  sink_clear(&l);
  /* For teardown. */
  mcp_server_info info = {.name = "again", .version = "1"};
  ck_assert_int_eq(mcp_server_new(&info, &srv), 0);
  tu_peer_open(&P, srv, NULL);
}
END_TEST

static char last_log[256];
static void keep_log(mcp_log_level level, const char *message,
                     void *user_data) {
  (void)level;
  (void)user_data;
  snprintf(last_log, sizeof last_log, "%s", message);
}

static int log_args(mcp_call *call, void *user_data) {
  (void)user_data;
  const char *text = "";
  mcp_call_arg_string(call, "text", &text);
  mcp_call_log(call, MCP_LOG_WARNING, text);
  return mcp_result_text(call, "logged");
}

/* Client text cannot forge a log line: control characters are neutered. */
START_TEST(client_text_cannot_forge_log_lines) {
  mcp_tool t = {
      .name = "logs",
      .description = "Logs its text.",
      .input_schema = "{\"type\":\"object\"}",
      .annotations = {.read_only = MCP_HINT_TRUE, .open_world = MCP_HINT_FALSE},
      .handler = log_args};
  ck_assert_int_eq(mcp_server_add_tool(srv, &t, NULL), 0);
  mcp_server_set_log(srv, keep_log, NULL);
  tu_clear(&P);
  ck_assert_int_eq(
      tu_send(&P, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\","
                  "\"params\":{\"name\":\"logs\",\"arguments\":{\"text\":"
                  "\"hi\\nFAKE LINE\\r\\u001b[31m\"}}}"),
      0);
  ck_assert_ptr_null(strchr(last_log, '\n'));
  ck_assert_ptr_null(strchr(last_log, '\r'));
  ck_assert_ptr_null(strchr(last_log, 0x1b));
  ck_assert_msg(strstr(last_log, "hi?FAKE LINE?") != NULL, "log: %s", last_log);
}
END_TEST

/* A 2025-03-26 batch of n pings (free with free). */
static char *ping_batch(int n) {
  char *b = malloc((size_t)n * 64 + 16);
  ck_assert_ptr_nonnull(b);
  strcpy(b, "[");
  for (int i = 0; i < n; i++)
    sprintf(b + strlen(b),
            "%s{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"ping\"}",
            i ? "," : "", i);
  strcat(b, "]");
  return b;
}

/* A 2025-03-26 batch is bounded. */
START_TEST(batches_are_bounded) {
  tu_peer B;
  tu_peer_open(&B, srv, NULL);
  tu_initialize(&B, "2025-03-26");
  char *big = ping_batch(65);
  ck_assert_int_eq(tu_send(&B, big), 0);
  free(big);
  tu_assert_msg(&B, 0, "{\"id\":null,\"error\":{\"code\":-32600}}");
  tu_clear(&B);
  char *fine = ping_batch(64);
  ck_assert_int_eq(tu_send(&B, fine), 0);
  free(fine);
  cJSON *r = tu_msg(&B, 0);
  ck_assert_int_eq(cJSON_GetArraySize(r), 64);
  cJSON_Delete(r);
  tu_peer_close(&B);
}
END_TEST

START_TEST(misuse_and_allocation_failure) {
  mcp_sink bad = {.send = NULL, .done = NULL, .user_data = NULL};
  ck_assert_int_eq(mcp_session_receive_to(P.session, "{}", 2, &bad),
                   MCP_EINVAL);
  sink_log l = {0};
  tu_alloc_install(1); /* the sink itself cannot be allocated */
  mcp_sink k = {.send = sink_send, .done = sink_done, .user_data = &l};
  const char *ping = "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"ping\"}";
  ck_assert_int_eq(mcp_session_receive_to(P.session, ping, strlen(ping), &k),
                   MCP_ENOMEM);
  tu_alloc_remove();
  ck_assert_int_eq(l.done, 1); /* done comes even then, exactly once */
  ck_assert_int_eq(l.n, 0);
}
END_TEST

/* ---- what a sink is told of each message (mcp_send_info) ---------------
 * Each message's facts are copied as it arrives; a transport decides its
 * answer from these alone (lib/http never reads the bytes). */

typedef struct fact {
  mcp_sent_kind kind;
  int code;
  char scopes[128], missing[128]; /* space-joined, "-" for NULL */
  bool audited;
  mcp_decision decision;
} fact;

typedef struct fact_log {
  fact f[8];
  int n;
  int done;
} fact_log;

static void join(char *out, size_t size, const char *const *list) {
  if (list == NULL) {
    snprintf(out, size, "-");
    return;
  }
  out[0] = '\0';
  for (size_t i = 0; list[i]; i++)
    snprintf(out + strlen(out), size - strlen(out), "%s%s", i ? " " : "",
             list[i]);
}

static int fact_send(const char *msg, size_t len, const mcp_send_info *info,
                     void *user_data) {
  (void)msg, (void)len;
  fact_log *l = user_data;
  ck_assert_int_lt(l->n, 8);
  fact *f = &l->f[l->n++];
  f->kind = info->kind;
  f->code = info->error_code;
  join(f->scopes, sizeof f->scopes, info->scopes);
  join(f->missing, sizeof f->missing, info->missing_scopes);
  f->audited = info->audited;
  f->decision = info->decision;
  return 0;
}

static void fact_done(void *user_data) { ((fact_log *)user_data)->done++; }

/* Sends msg on session with a send_info sink (and no send at all) that
 * logs into *l, which must outlive what msg starts. */
static void facts_of(mcp_session *session, const char *msg, fact_log *l) {
  memset(l, 0, sizeof *l);
  const mcp_sink k = {
      .send_info = fact_send, .done = fact_done, .user_data = l};
  ck_assert_int_eq(mcp_session_receive_to(session, msg, strlen(msg), &k), 0);
}

static void assert_fact(const fact *f, mcp_sent_kind kind, int code,
                        const char *scopes, const char *missing) {
  ck_assert_int_eq(f->kind, kind);
  ck_assert_int_eq(f->code, code);
  ck_assert_str_eq(f->scopes, scopes);
  ck_assert_str_eq(f->missing, missing);
}

static int deny_all(const mcp_principal *p, const char *tool, const cJSON *args,
                    char *reason, size_t size, void *user_data) {
  (void)p, (void)args, (void)user_data;
  if (strcmp(tool, "guarded") != 0)
    return 0;
  snprintf(reason, size, "not today");
  return 1;
}

static const char *const ADMIN_SCOPES[] = {"admin.read", "admin.write", NULL};
static const char *const READER_SCOPES[] = {"admin.read", NULL};

/* Results, errors by code, refusals with their scopes, audited decisions,
 * notifications and requests to the client, in the legacy era. */
START_TEST(facts_of_every_kind_of_message) {
  mcp_tool admin = {
      .name = "admin",
      .description = "Needs two scopes.",
      .annotations = {.read_only = MCP_HINT_TRUE, .open_world = MCP_HINT_FALSE},
      .scopes = ADMIN_SCOPES,
      .handler = run};
  mcp_tool guarded = admin;
  guarded.name = "guarded";
  guarded.scopes = NULL;
  ck_assert_int_eq(mcp_server_add_tool(srv, &admin, NULL), 0);
  ck_assert_int_eq(mcp_server_add_tool(srv, &guarded, NULL), 0);
  mcp_server_set_authorizer(srv, deny_all, NULL);
  mcp_server_set_log(srv, tu_silent_log, NULL);
  const mcp_principal reader = {.subject = "r", .scopes = READER_SCOPES};
  tu_peer R;
  tu_peer_open(&R, srv, &reader);
  ck_assert_int_eq(
      tu_send(&R,
              "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\","
              "\"params\":{\"protocolVersion\":\"2025-11-25\",\"capabilities\":"
              "{\"elicitation\":{}},\"clientInfo\":{\"name\":\"t\"}}}"),
      0);
  tu_clear(&R);

  fact_log l;
  facts_of(R.session, CALL(1, "now"), &l);
  ck_assert_int_eq(l.n, 1);
  ck_assert_int_eq(l.done, 1);
  assert_fact(&l.f[0], MCP_SENT_RESULT, 0, "-", "-");
  ck_assert(l.f[0].audited);
  ck_assert_int_eq(l.f[0].decision, MCP_DECISION_ALLOWED);

  facts_of(R.session, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"no/such\"}",
           &l);
  assert_fact(&l.f[0], MCP_SENT_ERROR, -32601, "-", "-");
  ck_assert(!l.f[0].audited);

  facts_of(R.session,
           "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":"
           "\"tools/call\",\"params\":{\"name\":\"admin\"}}",
           &l);
  assert_fact(&l.f[0], MCP_SENT_ERROR, MCP_RPC_FORBIDDEN,
              "admin.read admin.write", "admin.write");
  ck_assert(l.f[0].audited);
  ck_assert_int_eq(l.f[0].decision, MCP_DECISION_DENIED_SCOPE);

  /* The authorizer's denial names no scope. */
  facts_of(R.session,
           "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":"
           "\"tools/call\",\"params\":{\"name\":\"guarded\"}}",
           &l);
  assert_fact(&l.f[0], MCP_SENT_ERROR, MCP_RPC_FORBIDDEN, "-", "-");
  ck_assert_int_eq(l.f[0].decision, MCP_DECISION_DENIED_AUTHORIZER);

  /* Unreadable bytes: an error with no request behind it. */
  facts_of(R.session, "{\"jsonrpc\":", &l);
  assert_fact(&l.f[0], MCP_SENT_ERROR, -32700, "-", "-");

  /* Over the rate: a tool error (a result), audited so. */
  ck_assert_int_eq(mcp_server_set_rate_limit(srv, 1, 3600), 0);
  facts_of(R.session, CALL(5, "now"), &l);
  assert_fact(&l.f[0], MCP_SENT_RESULT, 0, "-", "-");
  ck_assert_int_eq(l.f[0].decision, MCP_DECISION_ALLOWED);
  facts_of(R.session, CALL(6, "now"), &l);
  assert_fact(&l.f[0], MCP_SENT_RESULT, 0, "-", "-");
  ck_assert(l.f[0].audited);
  ck_assert_int_eq(l.f[0].decision, MCP_DECISION_RATE_LIMITED);
  ck_assert_int_eq(mcp_server_set_rate_limit(srv, 0, 0), 0);

  /* A deferred call: its progress is a notification; answered at its
   * deadline, the reply says so (a tool's timeout is a result). */
  mcp_server_set_call_timeout(srv, 50);
  fact_log d;
  facts_of(R.session, CALL(7, "defer"), &d);
  ck_assert_int_eq(d.n, 1);
  ck_assert_int_eq(d.done, 0);
  assert_fact(&d.f[0], MCP_SENT_NOTIFICATION, 0, "-", "-");
  ck_assert(!d.f[0].audited);
  for (int i = 0; i < 2000 && mcp_server_next_expiry_ms(srv) != 0; i++) {
    struct timespec ts = {0, 5000000};
    nanosleep(&ts, NULL);
  }
  ck_assert_int_eq(mcp_server_expire(srv), 1);
  ck_assert_int_eq(d.n, 2);
  ck_assert_int_eq(d.done, 1);
  assert_fact(&d.f[1], MCP_SENT_RESULT, 0, "-", "-");
  ck_assert(d.f[1].audited);
  ck_assert_int_eq(d.f[1].decision, MCP_DECISION_TIMEOUT);
  ck_assert_int_eq(mcp_call_finish(parked, 0), 0);
  mcp_server_set_call_timeout(srv, 0);

  /* Legacy input: a request to the client. The session ending sends
   * nothing more (its owner let go of it) but lets go of the sink. */
  fact_log a;
  facts_of(R.session, CALL(8, "ask"), &a);
  ck_assert_int_eq(a.n, 1);
  assert_fact(&a.f[0], MCP_SENT_REQUEST, 0, "-", "-");
  ck_assert_int_eq(a.done, 0);
  tu_peer_close(&R);
  ck_assert_int_eq(a.n, 1);
  ck_assert_int_eq(a.done, 1);
}
END_TEST

/* A batch's array is one message; a modern resource not found is
 * -32602, a legacy one -32002. */
START_TEST(facts_of_batches_and_eras) {
  const mcp_resource r = {.uri = "file:///r",
                          .name = "r",
                          .mime_type = "text/plain",
                          .handler = run};
  ck_assert_int_eq(mcp_server_add_resource(srv, &r, NULL), 0);
  tu_peer B;
  tu_peer_open(&B, srv, NULL);
  tu_initialize(&B, "2025-03-26");
  fact_log l;
  facts_of(B.session,
           "[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"},"
           "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"no/such\"}]",
           &l);
  ck_assert_int_eq(l.n, 1);
  assert_fact(&l.f[0], MCP_SENT_BATCH, 0, "-", "-");
  facts_of(B.session,
           "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"resources/read\","
           "\"params\":{\"uri\":\"file:///none\"}}",
           &l);
  assert_fact(&l.f[0], MCP_SENT_ERROR, -32002, "-", "-");
  tu_peer_close(&B);
  tu_peer M;
  tu_peer_open(&M, srv, NULL);
  char *msg = tu_text("{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":"
                      "\"resources/read\",\"params\":{\"uri\":"
                      "\"file:///none\",\"_meta\":%s}}",
                      TU_META_NONE);
  facts_of(M.session, msg, &l);
  free(msg);
  assert_fact(&l.f[0], MCP_SENT_ERROR, -32602, "-", "-");
  tu_peer_close(&M);
}
END_TEST

int main(void) {
  Suite *s = suite_create("sink");
  TCase *t = tcase_create("routing");
  tcase_add_checked_fixture(t, setup, teardown);
  tcase_add_test(t, sync_reply_goes_to_the_sink_and_done_comes_first);
  tcase_add_test(t, deferred_call_keeps_its_sink_until_it_ends);
  tcase_add_test(t, input_round_trip_across_two_sinks);
  tcase_add_test(t, failing_sink_does_not_close_the_session);
  tcase_add_test(t, session_freed_before_the_call_ends);
  tcase_add_test(t, misuse_and_allocation_failure);
  tcase_add_test(t, server_freed_before_a_deferred_call_ends);
  tcase_add_test(t, client_text_cannot_forge_log_lines);
  tcase_add_test(t, batches_are_bounded);
  tcase_add_test(t, facts_of_every_kind_of_message);
  tcase_add_test(t, facts_of_batches_and_eras);
  suite_add_tcase(s, t);
  return tu_run(s);
}
