/* Where handlers run: the executor hook (mcp_server_set_executor,
 * mcp_call_execute, mcp_call_hints). Executors as embedders write them: a
 * pool of worker threads, a daemon's single loop thread, and one that
 * holds calls until the test lets them run, so that cancellation and
 * deadlines can come while a call waits. Each of them gives the same
 * replies, deadlines, cancellation, input rounds (both eras) and audit as
 * running on the session's thread. */
#include <cjson/cJSON.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "testutil.h"
#include "tools.h"

static mcp_server *srv;
static tu_peer P;
static bool gone; /* the test freed the peer and the server itself */

static void sleep_ms(long ms) {
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

/* ---- executors ----------------------------------------------------------- */

/* A queue of calls with the threads that take from it: the pool (several
 * workers) and the loop (one thread, as a daemon's event loop) are both
 * this, with 4 and 1 threads. */
typedef struct queue {
  pthread_mutex_t lock;
  pthread_cond_t ready;
  mcp_call *calls[64];
  size_t n;
  bool stop;
  pthread_t threads[4];
  unsigned nthreads;
  atomic_int submitted, released;
  atomic_int failures; /* executes that failed, read by the test thread */
  atomic_int executed; /* executes returned: their threads hold nothing */
} queue;

static queue Q;
static _Thread_local bool on_executor;

static void *take(void *arg) {
  queue *q = arg;
  on_executor = true;
  pthread_mutex_lock(&q->lock);
  for (;;) {
    while (q->n == 0 && !q->stop)
      pthread_cond_wait(&q->ready, &q->lock);
    if (q->n == 0)
      break;
    mcp_call *c = q->calls[0];
    memmove(q->calls, q->calls + 1, --q->n * sizeof *q->calls);
    pthread_mutex_unlock(&q->lock);
    if (mcp_call_execute(c, q->nthreads > 1 ? "pool" : "loop") != 0)
      atomic_fetch_add(&q->failures, 1);
    atomic_fetch_add(&q->executed, 1);
    pthread_mutex_lock(&q->lock);
  }
  pthread_mutex_unlock(&q->lock);
  return NULL;
}

static int queue_submit(mcp_call *call, void *user_data) {
  queue *q = user_data;
  pthread_mutex_lock(&q->lock);
  if (q->n == TU_COUNT(q->calls)) {
    pthread_mutex_unlock(&q->lock);
    return MCP_ENOMEM; /* the call fails; the test sees a missing reply */
  }
  atomic_fetch_add(&q->submitted, 1);
  q->calls[q->n++] = call;
  pthread_cond_signal(&q->ready);
  pthread_mutex_unlock(&q->lock);
  return 0;
}

static void queue_release(void *user_data) {
  queue *q = user_data;
  atomic_fetch_add(&q->released, 1);
}

static void queue_start(queue *q, unsigned threads) {
  memset(q, 0, sizeof *q);
  pthread_mutex_init(&q->lock, NULL);
  pthread_cond_init(&q->ready, NULL);
  q->nthreads = threads;
  for (unsigned i = 0; i < threads; i++)
    ck_assert_int_eq(pthread_create(&q->threads[i], NULL, take, q), 0);
}

static void queue_stop(queue *q) {
  pthread_mutex_lock(&q->lock);
  q->stop = true;
  pthread_cond_broadcast(&q->ready);
  pthread_mutex_unlock(&q->lock);
  for (unsigned i = 0; i < q->nthreads; i++)
    pthread_join(q->threads[i], NULL);
  q->nthreads = 0;
}

static void use_queue(unsigned threads) {
  queue_start(&Q, threads);
  mcp_executor ex = {
      .submit = queue_submit, .release = queue_release, .user_data = &Q};
  ck_assert_int_eq(mcp_server_set_executor(srv, &ex), 0);
}

/* Holds each call until the test runs it (held_run). */
static mcp_call *held[8];
static int nheld;
static int g_submit_rc; /* what held_submit returns when it does not hold */

static int held_submit(mcp_call *call, void *user_data) {
  (void)user_data;
  if (g_submit_rc)
    return g_submit_rc;
  ck_assert_int_lt(nheld, (int)TU_COUNT(held));
  held[nheld++] = call;
  return 0;
}

static void use_held(void) {
  mcp_executor ex = {.submit = held_submit};
  ck_assert_int_eq(mcp_server_set_executor(srv, &ex), 0);
}

/* ---- tools --------------------------------------------------------------- */

static atomic_int g_runs;
static atomic_bool g_ran_on_executor;
static int g_req_rc;

static int h_where(mcp_call *call, void *user_data) {
  (void)user_data;
  atomic_fetch_add(&g_runs, 1);
  atomic_store(&g_ran_on_executor, on_executor);
  return tc_echo(call, NULL);
}

/* Defers, and a thread of its own finishes the call 20 ms later. */
static void *finish_later(void *arg) {
  mcp_call *call = arg;
  sleep_ms(20);
  mcp_result_text(call, "finished later");
  mcp_call_finish(call, 0);
  return NULL;
}

static int h_defer(mcp_call *call, void *user_data) {
  (void)user_data;
  atomic_fetch_add(&g_runs, 1);
  pthread_t t;
  ck_assert_int_eq(pthread_create(&t, NULL, finish_later, call), 0);
  pthread_detach(t);
  return MCP_DEFERRED;
}

#define FORM                                                                   \
  "{\"mode\":\"form\",\"message\":\"Sure?\",\"requestedSchema\":{\"type\":"    \
  "\"object\",\"properties\":{}}}"

/* Asks "confirm" first; with the answer, says where each round ran. */
static int h_confirm(mcp_call *call, void *user_data) {
  (void)user_data;
  atomic_fetch_add(&g_runs, 1);
  if (!on_executor)
    atomic_store(&g_ran_on_executor, false);
  if (mcp_call_input(call, "confirm") == NULL) {
    g_req_rc =
        mcp_call_request_input(call, "confirm", MCP_INPUT_ELICITATION, FORM);
    return g_req_rc ? g_req_rc : MCP_INPUT_REQUIRED;
  }
  return mcp_result_text(call, "confirmed");
}

/* Calls mcp_call_execute on itself while it runs: refused. */
static int g_self_rc;
static int h_self(mcp_call *call, void *user_data) {
  (void)user_data;
  g_self_rc = mcp_call_execute(call, NULL);
  return mcp_result_text(call, "ran once");
}

static const mcp_tool TOOL_SELF = {.name = "self",
                                   .description = "Executes itself.",
                                   .annotations = TC_READ_ONLY,
                                   .handler = h_self};

static int h_prompt(mcp_call *call, void *user_data) {
  (void)user_data;
  return mcp_result_text(call, "a prompt");
}
static const mcp_prompt PROMPT = {
    .name = "p", .description = "A prompt.", .handler = h_prompt};

static const mcp_tool TOOL_WHERE = {.name = "where",
                                    .description = "Echoes its text.",
                                    .input_schema = TC_TEXT_SCHEMA,
                                    .annotations = TC_READ_ONLY,
                                    .handler = h_where};
static const mcp_tool TOOL_DEFER = {
    .name = "defer",
    .description = "Finishes later.",
    .annotations = {.read_only = MCP_HINT_FALSE,
                    .destructive = MCP_HINT_FALSE,
                    .idempotent = MCP_HINT_TRUE,
                    .open_world = MCP_HINT_TRUE},
    .handler = h_defer};
static const mcp_tool TOOL_CONFIRM = {
    .name = "confirm",
    .description = "Asks first.",
    .annotations = {.read_only = MCP_HINT_FALSE,
                    .destructive = MCP_HINT_TRUE,
                    .idempotent = MCP_HINT_FALSE,
                    .open_world = MCP_HINT_FALSE},
    .handler = h_confirm};

/* ---- audit --------------------------------------------------------------- */

static pthread_mutex_t audit_lock = PTHREAD_MUTEX_INITIALIZER;
static int n_audit;
static mcp_decision last_decision;
static char last_ran_under[64];
static bool last_failed;

static void on_audit(const mcp_audit_record *r, void *user_data) {
  (void)user_data;
  pthread_mutex_lock(&audit_lock);
  n_audit++;
  last_decision = r->decision;
  last_failed = r->failed;
  snprintf(last_ran_under, sizeof last_ran_under, "%s",
           r->ran_under ? r->ran_under : "(null)");
  pthread_mutex_unlock(&audit_lock);
}

static void setup(void) {
  mcp_server_info info = {.name = "exec", .version = "1"};
  ck_assert_int_eq(mcp_server_new(&info, &srv), 0);
  mcp_server_set_log(srv, tu_silent_log, NULL);
  mcp_server_set_audit(srv, on_audit, NULL);
  ck_assert_int_eq(mcp_server_add_tool(srv, &TOOL_WHERE, NULL), 0);
  ck_assert_int_eq(mcp_server_add_tool(srv, &TOOL_DEFER, NULL), 0);
  ck_assert_int_eq(mcp_server_add_tool(srv, &TOOL_CONFIRM, NULL), 0);
  ck_assert_int_eq(mcp_server_add_tool(srv, &TOOL_SELF, NULL), 0);
  ck_assert_int_eq(mcp_server_add_prompt(srv, &PROMPT, NULL), 0);
  tu_peer_open(&P, srv, NULL);
  atomic_store(&g_runs, 0);
  atomic_store(&g_ran_on_executor, false);
  nheld = 0;
  g_submit_rc = 0;
  n_audit = 0;
  last_ran_under[0] = '\0';
}

static void teardown(void) {
  if (!gone)
    tu_peer_close(&P);
  gone = false;
  mcp_server_free(srv);
  srv = NULL;
  if (Q.nthreads)
    queue_stop(&Q);
}

/* Sends a tools/call (as tu_call_text) without waiting for anything. */
static void send_call(const char *id, const char *name, const char *args) {
  char *msg = tu_call_text(id, name, args, NULL);
  ck_assert_int_eq(tu_send(&P, msg), 0);
  free(msg);
}

/* Sends a call and waits for its one reply; returns it parsed. */
static cJSON *call_and_wait(int id, const char *name, const char *args) {
  size_t before = P.nout;
  char idtext[16];
  snprintf(idtext, sizeof idtext, "%d", id);
  send_call(idtext, name, args);
  ck_assert_uint_eq(tu_wait(&P, before + 1, 5000), before + 1);
  return tu_msg(&P, before);
}

/* ---- tests --------------------------------------------------------------- */

START_TEST(pool_runs_every_call_on_its_threads) {
  tu_initialize(&P, "2025-11-25");
  /* The reply without an executor, to compare with. */
  cJSON *inline_reply = call_and_wait(1, "where", "{\"text\":\"hi\"}");
  ck_assert(!atomic_load(&g_ran_on_executor));
  ck_assert_str_eq(last_ran_under, "(null)");
  tu_clear(&P);
  use_queue(4);
  enum { N = 40 };
  for (int i = 0; i < N; i++) {
    char id[16];
    snprintf(id, sizeof id, "%d", 100 + i);
    send_call(id, "where", "{\"text\":\"hi\"}");
  }
  ck_assert_uint_eq(tu_wait(&P, N, 10000), N);
  for (size_t i = 0; i < N; i++) {
    cJSON *r = tu_msg(&P, i);
    ck_assert_msg(cJSON_Compare(tu_get(r, "result"),
                                tu_get(inline_reply, "result"), true),
                  "%s", P.out[i]);
    cJSON_Delete(r);
  }
  cJSON_Delete(inline_reply);
  ck_assert(atomic_load(&g_ran_on_executor));
  ck_assert_int_eq(atomic_load(&Q.submitted), N);
  ck_assert_int_eq(atomic_load(&g_runs), N + 1);
  pthread_mutex_lock(&audit_lock);
  ck_assert_int_eq(n_audit, N + 1);
  ck_assert_str_eq(last_ran_under, "pool");
  ck_assert_int_eq(last_decision, MCP_DECISION_ALLOWED);
  pthread_mutex_unlock(&audit_lock);
  ck_assert_uint_eq(mcp_session_pending(P.session), 0);
  ck_assert_int_eq(atomic_load(&Q.failures), 0);
  /* A reply is out before its worker's mcp_call_execute returns (which
   * lets go of the session last): wait for all of them, at most 5 s. */
  for (int ms = 0; ms < 5000 && atomic_load(&Q.executed) < N; ms++)
    nanosleep(&(struct timespec){.tv_nsec = 1000 * 1000}, NULL);
  ck_assert_int_eq(atomic_load(&Q.executed), N);
  /* The executor is let go when the server is finally freed. */
  tu_peer_close(&P);
  gone = true;
  ck_assert_int_eq(atomic_load(&Q.released), 0);
  mcp_server_free(srv);
  srv = NULL;
  ck_assert_int_eq(atomic_load(&Q.released), 1);
}
END_TEST

START_TEST(loop_thread_runs_calls_and_deferred_ones_finish_elsewhere) {
  tu_initialize(&P, "2025-11-25");
  use_queue(1);
  cJSON *r = call_and_wait(1, "where", "{\"text\":\"on the loop\"}");
  tu_assert_json(r, "{\"id\":1,\"result\":{\"content\":[{\"type\":\"text\","
                    "\"text\":\"on the loop\"}]}}");
  cJSON_Delete(r);
  ck_assert(atomic_load(&g_ran_on_executor));
  ck_assert_str_eq(last_ran_under, "loop");
  /* A handler on the loop defers; another thread finishes it. */
  r = call_and_wait(2, "defer", NULL);
  tu_assert_json(r, "{\"id\":2,\"result\":{\"content\":[{\"type\":\"text\","
                    "\"text\":\"finished later\"}]}}");
  cJSON_Delete(r);
  /* The finishing thread audits after sending; wait for the record. */
  for (int i = 0; i < 500 && mcp_session_pending(P.session); i++)
    sleep_ms(1);
  ck_assert_uint_eq(mcp_session_pending(P.session), 0);
  ck_assert_str_eq(last_ran_under, "loop");
}
END_TEST

START_TEST(declined_calls_run_here_and_refused_ones_fail) {
  tu_initialize(&P, "2025-11-25");
  use_held();
  g_submit_rc = MCP_EXECUTE_HERE;
  cJSON *r = call_and_wait(1, "where", "{\"text\":\"here\"}");
  tu_assert_json(r, "{\"id\":1,\"result\":{\"content\":[{\"type\":\"text\","
                    "\"text\":\"here\"}]}}");
  cJSON_Delete(r);
  ck_assert_int_eq(nheld, 0);
  ck_assert_int_eq(atomic_load(&g_runs), 1);
  /* A negative code fails the call; the handler never runs. */
  g_submit_rc = MCP_ENOMEM;
  r = call_and_wait(2, "where", "{\"text\":\"no\"}");
  tu_assert_error(r, -32603, "Internal error");
  cJSON_Delete(r);
  ck_assert_int_eq(atomic_load(&g_runs), 1);
  ck_assert(last_failed);
  ck_assert_uint_eq(mcp_session_pending(P.session), 0);
}
END_TEST

START_TEST(cancelled_while_queued_never_runs) {
  tu_initialize(&P, "2025-11-25");
  use_held();
  send_call("7", "where", "{\"text\":\"x\"}");
  ck_assert_int_eq(nheld, 1);
  ck_assert_uint_eq(P.nout, 0);
  ck_assert_uint_eq(mcp_session_executing(P.session), 1);
  /* The call is the executor's: mcp_call_finish is not for it. */
  ck_assert_int_eq(mcp_call_finish(held[0], 0), MCP_EINVAL);
  ck_assert_int_eq(tu_send(&P, "{\"jsonrpc\":\"2.0\",\"method\":"
                               "\"notifications/cancelled\",\"params\":{"
                               "\"requestId\":7}}"),
                   0);
  ck_assert_int_eq(mcp_call_execute(held[0], "held"), 0);
  ck_assert_uint_eq(mcp_session_executing(P.session), 0);
  ck_assert_int_eq(atomic_load(&g_runs), 0);
  ck_assert_uint_eq(P.nout, 0);
  ck_assert_int_eq(last_decision, MCP_DECISION_CANCELLED);
  ck_assert_uint_eq(mcp_session_pending(P.session), 0);
}
END_TEST

START_TEST(deadline_passes_while_queued) {
  tu_initialize(&P, "2025-11-25");
  use_held();
  mcp_server_set_call_timeout(srv, 30);
  send_call("8", "where", "{\"text\":\"x\"}");
  ck_assert_int_eq(nheld, 1);
  /* A queued call's deadline is watched like a deferred one's. */
  long ms = mcp_server_next_expiry_ms(srv);
  ck_assert(ms >= 0 && ms <= 30);
  sleep_ms(40);
  ck_assert_int_eq(mcp_server_expire(srv), 1);
  ck_assert_uint_eq(P.nout, 1);
  cJSON *r = tu_msg(&P, 0);
  tu_assert_json(r, "{\"id\":8,\"result\":{\"isError\":true}}");
  ck_assert_ptr_nonnull(strstr(tu_jstr(r, "result.content.0.text"), "timeout"));
  cJSON_Delete(r);
  /* The executor's turn comes: the handler does not run, nothing more is
   * sent, and the audit says timeout. */
  ck_assert_int_eq(mcp_call_execute(held[0], "held"), 0);
  ck_assert_int_eq(atomic_load(&g_runs), 0);
  ck_assert_uint_eq(P.nout, 1);
  ck_assert_int_eq(last_decision, MCP_DECISION_TIMEOUT);
  ck_assert_uint_eq(mcp_session_pending(P.session), 0);
}
END_TEST

START_TEST(late_before_the_timer_is_answered_timeout_at_execute) {
  tu_initialize(&P, "2025-11-25");
  use_held();
  mcp_server_set_call_timeout(srv, 10);
  send_call("9", "where", "{\"text\":\"x\"}");
  sleep_ms(20);
  ck_assert_int_eq(mcp_call_execute(held[0], "held"), 0);
  ck_assert_int_eq(atomic_load(&g_runs), 0);
  ck_assert_uint_eq(P.nout, 1);
  cJSON *r = tu_msg(&P, 0);
  ck_assert_ptr_nonnull(strstr(tu_jstr(r, "result.content.0.text"), "timeout"));
  cJSON_Delete(r);
  ck_assert_int_eq(last_decision, MCP_DECISION_TIMEOUT);
}
END_TEST

START_TEST(legacy_input_rounds_each_go_to_the_executor) {
  tu_legacy_init(&P, "2025-11-25", "{\"elicitation\":{}}");
  use_held();
  atomic_store(&g_ran_on_executor, true);
  send_call("3", "confirm", NULL);
  ck_assert_int_eq(nheld, 1);
  on_executor = true; /* this thread plays the executor's */
  ck_assert_int_eq(mcp_call_execute(held[0], "held"), 0);
  on_executor = false;
  /* Round one asked the client. */
  ck_assert_uint_eq(P.nout, 1);
  cJSON *req = tu_msg(&P, 0);
  ck_assert_str_eq(tu_jstr(req, "method"), "elicitation/create");
  int rid = (int)tu_get(req, "id")->valuedouble;
  cJSON_Delete(req);
  tu_clear(&P);
  char *answer = tu_text("{\"jsonrpc\":\"2.0\",\"id\":%d,\"result\":{"
                         "\"action\":\"accept\",\"content\":{}}}",
                         rid);
  ck_assert_int_eq(tu_send(&P, answer), 0);
  free(answer);
  /* The answer hands round two over again, instead of running it here. */
  ck_assert_int_eq(nheld, 2);
  ck_assert_uint_eq(P.nout, 0);
  on_executor = true;
  ck_assert_int_eq(mcp_call_execute(held[1], "held"), 0);
  on_executor = false;
  ck_assert_uint_eq(P.nout, 1);
  tu_assert_msg(&P, 0,
                "{\"id\":3,\"result\":{\"content\":[{\"type\":\"text\","
                "\"text\":\"confirmed\"}]}}");
  ck_assert_int_eq(atomic_load(&g_runs), 2);
  ck_assert(atomic_load(&g_ran_on_executor));
  ck_assert_str_eq(last_ran_under, "held");
}
END_TEST

START_TEST(modern_input_round_trip_through_a_pool) {
  use_queue(2);
  atomic_store(&g_ran_on_executor, true);
  size_t before = P.nout;
  ck_assert_int_eq(tu_send_free(&P, tu_mcall(1, "confirm", NULL, TU_META_ELICIT,
                                             NULL, NULL)),
                   0);
  ck_assert_uint_eq(tu_wait(&P, before + 1, 5000), before + 1);
  cJSON *r = tu_msg(&P, before);
  tu_assert_json(r,
                 "{\"id\":1,\"result\":{\"resultType\":\"input_required\"}}");
  char *state =
      tu_text("\"%s\"", tu_get(tu_result_of(r), "requestState")->valuestring);
  cJSON_Delete(r);
  ck_assert_int_eq(
      tu_send_free(&P, tu_mcall(2, "confirm", NULL, TU_META_ELICIT, state,
                                "{\"confirm\":{\"action\":\"accept\","
                                "\"content\":{}}}")),
      0);
  free(state);
  ck_assert_uint_eq(tu_wait(&P, before + 2, 5000), before + 2);
  tu_assert_msg(&P, before + 1,
                "{\"id\":2,\"result\":{\"resultType\":\"complete\","
                "\"content\":[{\"type\":\"text\",\"text\":\"confirmed\"}]}}");
  ck_assert_int_eq(atomic_load(&g_runs), 2);
  ck_assert(atomic_load(&g_ran_on_executor));
}
END_TEST

START_TEST(execute_only_what_was_handed_over) {
  tu_initialize(&P, "2025-11-25");
  use_held();
  send_call("1", "where", "{\"text\":\"x\"}");
  ck_assert_int_eq(mcp_call_execute(NULL, NULL), MCP_EINVAL);
  /* One executor per server. */
  mcp_executor other = {.submit = held_submit};
  ck_assert_int_eq(mcp_server_set_executor(srv, &other), MCP_ESTATE);
  ck_assert_ptr_nonnull(strstr(mcp_server_errmsg(srv), "already"));
  ck_assert_int_eq(mcp_server_set_executor(NULL, &other), MCP_EINVAL);
  mcp_executor none = {0};
  ck_assert_int_eq(mcp_server_set_executor(srv, &none), MCP_EINVAL);
  ck_assert_ptr_nonnull(strstr(mcp_server_errmsg(srv), "submit"));
  ck_assert_int_eq(mcp_call_execute(held[0], NULL), 0);
  ck_assert_uint_eq(P.nout, 1);
  ck_assert_str_eq(last_ran_under, "(null)");
  /* A running call is not waiting in the executor. */
  send_call("2", "self", NULL);
  ck_assert_int_eq(nheld, 2);
  ck_assert_int_eq(mcp_call_execute(held[1], NULL), 0);
  ck_assert_int_eq(g_self_rc, MCP_EINVAL);
  ck_assert_uint_eq(P.nout, 2);
  tu_assert_msg(&P, 1,
                "{\"id\":2,\"result\":{\"content\":[{\"text\":"
                "\"ran once\"}]}}");
}
END_TEST

/* Declines after the deadline passed while submit decided: the handler
 * does not run on the session's thread either. */
static int slow_decline(mcp_call *call, void *user_data) {
  (void)call;
  (void)user_data;
  sleep_ms(20);
  return MCP_EXECUTE_HERE;
}

START_TEST(declined_late_never_runs) {
  tu_initialize(&P, "2025-11-25");
  mcp_executor ex = {.submit = slow_decline};
  ck_assert_int_eq(mcp_server_set_executor(srv, &ex), 0);
  mcp_server_set_call_timeout(srv, 10);
  cJSON *r = call_and_wait(1, "where", "{\"text\":\"x\"}");
  ck_assert_ptr_nonnull(strstr(tu_jstr(r, "result.content.0.text"), "timeout"));
  cJSON_Delete(r);
  ck_assert_int_eq(atomic_load(&g_runs), 0);
  ck_assert_int_eq(last_decision, MCP_DECISION_TIMEOUT);
}
END_TEST

/* The server freed while a call waits in the executor: the call keeps it,
 * and the release comes on the thread that finished the last call. */
static atomic_bool released_on_executor;
static void note_release(void *user_data) {
  (void)user_data;
  atomic_store(&released_on_executor, on_executor);
}

START_TEST(release_after_the_last_call_on_its_thread) {
  tu_initialize(&P, "2025-11-25");
  mcp_executor ex = {.submit = held_submit, .release = note_release};
  ck_assert_int_eq(mcp_server_set_executor(srv, &ex), 0);
  send_call("1", "where", "{\"text\":\"x\"}");
  tu_peer_close(&P);
  gone = true;
  mcp_server_free(srv);
  srv = NULL;
  atomic_store(&released_on_executor, false);
  on_executor = true;
  ck_assert_int_eq(mcp_call_execute(held[0], "held"), 0);
  on_executor = false;
  ck_assert(atomic_load(&released_on_executor));
  ck_assert_int_eq(atomic_load(&g_runs), 0); /* its session had ended */
  gone = true;
}
END_TEST

START_TEST(hints_as_stated) {
  tu_initialize(&P, "2025-11-25");
  use_held();
  const char *names[] = {"where", "defer", "confirm"};
  for (size_t i = 0; i < TU_COUNT(names); i++) {
    char id[16];
    snprintf(id, sizeof id, "%zu", i + 1);
    send_call(id, names[i], i ? NULL : "{\"text\":\"x\"}");
  }
  ck_assert_int_eq(nheld, 3);
  /* All four stated: a read-only tool's two derived. */
  mcp_tool_annotations a = mcp_call_hints(held[0]);
  ck_assert_int_eq(a.read_only, MCP_HINT_TRUE);
  ck_assert_int_eq(a.destructive, MCP_HINT_FALSE);
  ck_assert_int_eq(a.idempotent, MCP_HINT_TRUE);
  ck_assert_int_eq(a.open_world, MCP_HINT_FALSE);
  a = mcp_call_hints(held[1]);
  ck_assert_int_eq(a.read_only, MCP_HINT_FALSE);
  ck_assert_int_eq(a.destructive, MCP_HINT_FALSE);
  ck_assert_int_eq(a.idempotent, MCP_HINT_TRUE);
  ck_assert_int_eq(a.open_world, MCP_HINT_TRUE);
  a = mcp_call_hints(held[2]);
  ck_assert_int_eq(a.destructive, MCP_HINT_TRUE);
  ck_assert_int_eq(a.open_world, MCP_HINT_FALSE);
  ck_assert_ptr_null(a.title);
  ck_assert_int_eq(a.idempotent, MCP_HINT_FALSE);
  a = mcp_call_hints(NULL);
  ck_assert_int_eq(a.read_only, MCP_HINT_UNSET);
  /* A prompt states no hints: every member UNSET. */
  ck_assert_int_eq(
      tu_send_free(&P, tu_req(9, "prompts/get", "{\"name\":\"p\"}")), 0);
  ck_assert_int_eq(nheld, 4);
  ck_assert_int_eq(mcp_call_kind_of(held[3]), MCP_CALL_PROMPT);
  a = mcp_call_hints(held[3]);
  ck_assert(a.read_only == MCP_HINT_UNSET && a.destructive == MCP_HINT_UNSET &&
            a.open_world == MCP_HINT_UNSET && a.idempotent == MCP_HINT_UNSET);
  for (int i = 0; i < nheld; i++)
    mcp_call_execute(held[i], NULL);
}
END_TEST

static char lint_text[80];
static int lint_rc;
static int executor_lint(char *buf, size_t size, void *user_data) {
  (void)user_data;
  snprintf(buf, size, "%s", lint_text);
  return lint_rc;
}
static char logged[512];
static void keep_log(mcp_log_level level, const char *message,
                     void *user_data) {
  (void)user_data;
  if (strstr(message, "executor says"))
    snprintf(logged, sizeof logged, "%d %s", (int)level, message);
}

START_TEST(lint_repeats_the_executor_sentence) {
  mcp_server_set_log(srv, keep_log, NULL);
  mcp_executor ex = {.submit = held_submit, .lint = executor_lint};
  ck_assert_int_eq(mcp_server_set_executor(srv, &ex), 0);
  unsigned base = 2; /* defer and confirm are unguarded by scopes */
  snprintf(lint_text, sizeof lint_text, "executor says warn");
  lint_rc = 1;
  ck_assert_uint_eq(mcp_server_lint(srv, NULL), base + 1);
  ck_assert_str_eq(logged, "3 executor says warn");
  snprintf(lint_text, sizeof lint_text, "executor says fine");
  lint_rc = 0;
  ck_assert_uint_eq(mcp_server_lint(srv, NULL), base);
  ck_assert_str_eq(logged, "1 executor says fine");
  lint_rc = -1;
  logged[0] = '\0';
  ck_assert_uint_eq(mcp_server_lint(srv, NULL), base);
  ck_assert_str_eq(logged, "");
}
END_TEST

int main(void) {
  Suite *s = suite_create("executor");
  TCase *t = tu_tcase(s, "executor", setup, teardown, 30);
  tcase_add_test(t, pool_runs_every_call_on_its_threads);
  tcase_add_test(t, loop_thread_runs_calls_and_deferred_ones_finish_elsewhere);
  tcase_add_test(t, declined_calls_run_here_and_refused_ones_fail);
  tcase_add_test(t, cancelled_while_queued_never_runs);
  tcase_add_test(t, deadline_passes_while_queued);
  tcase_add_test(t, late_before_the_timer_is_answered_timeout_at_execute);
  tcase_add_test(t, legacy_input_rounds_each_go_to_the_executor);
  tcase_add_test(t, modern_input_round_trip_through_a_pool);
  tcase_add_test(t, execute_only_what_was_handed_over);
  tcase_add_test(t, declined_late_never_runs);
  tcase_add_test(t, release_after_the_last_call_on_its_thread);
  tcase_add_test(t, hints_as_stated);
  tcase_add_test(t, lint_repeats_the_executor_sentence);
  return tu_run(s);
}
