/* Tests for tasks on every node (lib/engine/task.c's records,
 * lib/methods/tasks_remote.c) over a real redis-server: two servers, each
 * with a Redis store of its own on one Redis, as two processes would be.
 * A task runs on A; B answers tasks/get, tasks/cancel and tasks/update for
 * it, on the store's thread, once Redis answered; A's node leaving the
 * store (its lease lapsing, as when its process dies) fails the task for
 * every reader; Redis stopped is a clear error, and B answers again once
 * it is back. A 2025-11-25 tasks/result on B waits until the task ends on
 * A, and ends with a clear error when Redis stops meanwhile.
 *
 * Timing: every wait is a bounded loop; nothing asserts a duration. */
#include <check.h>
#include <cjson/cJSON.h>
#include <mcp/redis.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "redis_server.h"
#include "testutil.h"

#define EXT "io.modelcontextprotocol/tasks"
#define TASKS_META TU_META("{\"extensions\":{\"" EXT "\":{}}}")
#define CALL_META                                                              \
  TU_META("{\"elicitation\":{},\"extensions\":{\"" EXT "\":{}}}")
#define ASK "{\"message\":\"Go on?\",\"requestedSchema\":{\"type\":\"object\"}}"

static rs_server g_redis;
static mcp_store *g_sa, *g_sb;
static mcp_server *g_a, *g_b;
static tu_peer P, Q, E; /* alice on A, alice and eve on B */
static const mcp_principal ALICE = {.subject = "alice"};
static const mcp_principal EVE = {.subject = "eve"};
static int next_id = 10;

static int job(mcp_call *call, void *user_data) {
  (void)user_data;
  if (mcp_call_input(call, "ok") != NULL)
    return mcp_result_text(call, "answered");
  const char *what = "defer";
  mcp_call_arg_string(call, "do", &what);
  if (strcmp(what, "ask") == 0) {
    mcp_call_start_task(call);
    int rc = mcp_call_request_input(call, "ok", MCP_INPUT_ELICITATION, ASK);
    return rc == 0 ? MCP_INPUT_REQUIRED : rc;
  }
  if (strcmp(what, "quick") == 0) { /* a task that ends at once */
    mcp_call_start_task(call);
    return mcp_result_text(call, "quick");
  }
  if (strcmp(what, "broken") == 0) { /* the same, failing: -32603 */
    mcp_call_start_task(call);
    return MCP_EIO;
  }
  return tu_defer(call);
}

static mcp_server *node(mcp_store *st) {
  static const mcp_tool tool = {
      .name = "job",
      .description = "Runs as a task.",
      .input_schema = "{\"type\":\"object\",\"properties\":{\"do\":{"
                      "\"type\":\"string\"}}}",
      .flags = MCP_TOOL_TASK_OPTIONAL,
      .annotations = {.read_only = MCP_HINT_TRUE, .open_world = MCP_HINT_FALSE},
      .handler = job};
  static const mcp_server_info info = {.name = "node", .version = "1"};
  mcp_server *s = NULL;
  ck_assert_int_eq(mcp_server_new(&info, &s), 0);
  mcp_server_set_log(s, tu_silent_log, NULL);
  ck_assert_int_eq(mcp_server_add_tool(s, &tool, NULL), 0);
  ck_assert_int_eq(mcp_server_set_node_lease(s, 300), 0);
  ck_assert_int_eq(mcp_server_set_store(s, st), 0);
  return s;
}

static void setup(void) {
  char err[600];
  ck_assert_msg(rs_init(&g_redis, "mcp-rtasks", err, sizeof err) == 0, "%s",
                err);
  ck_assert_msg(rs_start(&g_redis, REDIS_SERVER, err, sizeof err) == 0, "%s",
                err);
  ck_assert_msg(mcp_redis_store_new(g_redis.sock, &g_sa, err, sizeof err) == 0,
                "%s", err);
  ck_assert_msg(mcp_redis_store_new(g_redis.sock, &g_sb, err, sizeof err) == 0,
                "%s", err);
  tu_deferred_reset();
  g_a = node(g_sa);
  g_b = node(g_sb);
  tu_peer_open(&P, g_a, &ALICE);
  tu_peer_open(&Q, g_b, &ALICE);
  tu_peer_open(&E, g_b, &EVE);
}

static void teardown(void) {
  tu_peer_close(&P);
  tu_peer_close(&Q);
  tu_peer_close(&E);
  mcp_server_free(g_a);
  mcp_server_free(g_b);
  mcp_store_free(g_sa);
  mcp_store_free(g_sb);
  rs_remove(&g_redis);
}

static void sleep_ms(long ms) {
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

/* A 2026-07-28 request through p, and its one answer (20 s at most). */
static cJSON *ask_wait(tu_peer *p, char *msg) {
  tu_clear(p);
  ck_assert_int_eq(tu_send_free(p, msg), 0);
  ck_assert_uint_eq(tu_wait(p, 1, 20000), 1);
  cJSON *m = tu_msg(p, 0);
  ck_assert_ptr_nonnull(m);
  return m;
}

static cJSON *task_req(tu_peer *p, const char *method, const char *id,
                       const char *more) {
  char *extra =
      tu_text("\"taskId\":\"%s\"%s%s", id, more ? "," : "", more ? more : "");
  cJSON *r = ask_wait(p, tu_mreq(next_id++, method, TASKS_META, extra));
  free(extra);
  return r;
}

static char *start(const char *what) {
  char *args = tu_text("{\"do\":\"%s\"}", what);
  cJSON *r =
      ask_wait(&P, tu_mcall(next_id++, "job", args, CALL_META, NULL, NULL));
  free(args);
  const char *id = tu_jstr(r, "result.taskId");
  ck_assert_msg(id != NULL, "no task in %s", cJSON_PrintUnformatted(r));
  char *copy = tu_text("%s", id);
  cJSON_Delete(r);
  return copy;
}

START_TEST(another_node_answers_over_redis) {
  char *id = start("defer");
  mcp_call *held = tu_stash;
  cJSON *r = task_req(&Q, "tasks/get", id, NULL);
  tu_assert_json(r, "{\"result\":{\"status\":\"working\"}}");
  cJSON_Delete(r);
  r = task_req(&E, "tasks/get", id, NULL);
  tu_assert_error(r, -32602, "Task not found");
  cJSON_Delete(r);
  mcp_result_text(held, "finished");
  ck_assert_int_eq(mcp_call_finish(held, 0), 0);
  /* The record is put after the call ends: read until it shows. */
  bool done = false;
  for (int i = 0; i < 200 && !done; i++) {
    r = task_req(&Q, "tasks/get", id, NULL);
    done = strcmp(tu_jstr(r, "result.status"), "completed") == 0;
    if (done)
      tu_assert_json(r, "{\"result\":{\"result\":{\"content\":[{\"text\":"
                        "\"finished\"}]}}}");
    cJSON_Delete(r);
    if (!done)
      sleep_ms(10);
  }
  ck_assert(done);
  free(id);

  /* Cancelled through B: A's call hears it. */
  id = start("defer");
  held = tu_stash;
  r = task_req(&Q, "tasks/cancel", id, NULL);
  tu_assert_json(r, "{\"result\":{\"resultType\":\"complete\"}}");
  cJSON_Delete(r);
  for (int i = 0; i < 500 && !mcp_call_cancelled(held); i++)
    sleep_ms(10);
  ck_assert(mcp_call_cancelled(held));
  r = task_req(&Q, "tasks/get", id, NULL);
  tu_assert_json(r, "{\"result\":{\"status\":\"cancelled\"}}");
  cJSON_Delete(r);
  mcp_call_finish(held, 0);
  free(id);
}
END_TEST

START_TEST(input_answered_through_another_node) {
  char *id = start("ask");
  cJSON *r = task_req(&Q, "tasks/get", id, NULL);
  tu_assert_json(r, "{\"result\":{\"status\":\"input_required\"}}");
  cJSON_Delete(r);
  r = task_req(&Q, "tasks/update", id,
               "\"inputResponses\":{\"ok\":{\"action\":\"accept\"}}");
  tu_assert_json(r, "{\"result\":{\"resultType\":\"complete\"}}");
  cJSON_Delete(r);
  /* The next round runs on A, when its timer is driven. */
  bool done = false;
  for (int i = 0; i < 500 && !done; i++) {
    mcp_server_expire(g_a);
    r = task_req(&Q, "tasks/get", id, NULL);
    done = strcmp(tu_jstr(r, "result.status"), "completed") == 0;
    cJSON_Delete(r);
    if (!done)
      sleep_ms(10);
  }
  ck_assert(done);
  free(id);
}
END_TEST

START_TEST(a_node_gone_fails_its_task_and_redis_gone_is_an_error) {
  char *id = start("defer");
  mcp_call *held = tu_stash;
  /* A leaves its store as a dead process stops renewing: after the lease,
   * the first reader fails the task, for every reader. */
  ck_assert_int_eq(mcp_server_set_store(g_a, NULL), 0);
  bool failed = false;
  for (int i = 0; i < 500 && !failed; i++) {
    cJSON *r = task_req(&Q, "tasks/get", id, NULL);
    const char *st = tu_jstr(r, "result.status");
    ck_assert_msg(st != NULL, "%s", cJSON_PrintUnformatted(r));
    failed = strcmp(st, "failed") == 0;
    if (failed)
      tu_assert_json(r, "{\"result\":{\"statusMessage\":\"the node running "
                        "this task was lost\",\"error\":{\"code\":-32603}}}");
    else
      ck_assert_str_eq(st, "working");
    cJSON_Delete(r);
    if (!failed)
      sleep_ms(20);
  }
  ck_assert(failed);
  mcp_call_finish(held, 0);
  /* Redis stopped: a clear error, never "not found"; then back. */
  rs_stop(&g_redis);
  cJSON *r = task_req(&Q, "tasks/get", id, NULL);
  tu_assert_error(r, -32603, "cannot be reached");
  cJSON_Delete(r);
  char err[600];
  ck_assert_msg(rs_start(&g_redis, REDIS_SERVER, err, sizeof err) == 0, "%s",
                err);
  /* A fresh Redis (no persistence): the task is gone with it. */
  bool answered = false;
  for (int i = 0; i < 500 && !answered; i++) {
    r = task_req(&Q, "tasks/get", id, NULL);
    answered = tu_jget(r, "error.message") &&
               strstr(tu_jstr(r, "error.message"), "Task not found");
    cJSON_Delete(r);
    if (!answered)
      sleep_ms(20);
  }
  ck_assert(answered);
  free(id);
}
END_TEST

/* A 2025-11-25 request through p, without waiting for its answer. */
static void legacy_send(tu_peer *p, const char *method, const char *params) {
  tu_clear(p);
  ck_assert_int_eq(tu_send_free(p, tu_req(next_id++, method, params)), 0);
}

/* A 2025-11-25 task started on A through l, its call in *held, and once B
 * reads it through lb; its id (free). */
static char *legacy_start(tu_peer *l, tu_peer *lb, mcp_call **held) {
  legacy_send(l, "tools/call",
              "{\"name\":\"job\",\"arguments\":{},\"task\":{}}");
  ck_assert_uint_ge(tu_wait(l, 1, 20000), 1);
  cJSON *r = tu_msg(l, 0);
  char *id = tu_text("%s", tu_jstr(r, "result.task.taskId"));
  cJSON_Delete(r);
  *held = tu_stash;
  char *get = tu_text("{\"taskId\":\"%s\"}", id);
  bool seen = false;
  for (int i = 0; i < 500 && !seen; i++) {
    legacy_send(lb, "tasks/get", get);
    ck_assert_uint_eq(tu_wait(lb, 1, 20000), 1);
    r = tu_msg(lb, 0);
    seen = tu_jget(r, "result.status") != NULL;
    cJSON_Delete(r);
    if (!seen)
      sleep_ms(10);
  }
  ck_assert(seen);
  free(get);
  return id;
}

/* A 2026-07-28 task of job on B through p: its id (freed by the caller),
 * and its call in *held. */
static char *start_on(tu_peer *p, mcp_call **held) {
  tu_stash = NULL;
  cJSON *r = ask_wait(p, tu_mcall(next_id++, "job", "{\"do\":\"defer\"}",
                                  CALL_META, NULL, NULL));
  const char *id = tu_jstr(r, "result.taskId");
  ck_assert_msg(id != NULL, "no task in %s", cJSON_PrintUnformatted(r));
  char *copy = tu_text("%s", id);
  cJSON_Delete(r);
  *held = tu_stash;
  ck_assert_ptr_nonnull(*held);
  return copy;
}

/* The status tasks/get on p shows for id, once it is want (5 s at most);
 * the last answer is returned. */
static cJSON *status_once(tu_peer *p, const char *id, const char *want) {
  cJSON *r = NULL;
  for (int i = 0; i < 500; i++) {
    cJSON_Delete(r);
    r = task_req(p, "tasks/get", id, NULL);
    const char *st = tu_jstr(r, "result.status");
    if (want == NULL ? st == NULL : st && strcmp(st, want) == 0)
      break;
    sleep_ms(10);
  }
  return r;
}

/* The per-caller budget holds across the nodes over Redis: B refuses
 * alice's new task while A runs her one, and admits the next once A's
 * has finished, A then forgetting it. */
START_TEST(budgets_hold_across_nodes_over_redis) {
  const mcp_task_limits lim = {.max_per_caller = 1};
  ck_assert_int_eq(mcp_server_set_task_limits(g_a, &lim), 0);
  ck_assert_int_eq(mcp_server_set_task_limits(g_b, &lim), 0);
  char *first = start("defer");
  mcp_call *held = tu_stash;
  mcp_call *refused_call;
  char *refused = start_on(&Q, &refused_call);
  for (int i = 0; i < 500 && !mcp_call_cancelled(refused_call); i++)
    sleep_ms(10);
  ck_assert(mcp_call_cancelled(refused_call));
  mcp_call_finish(refused_call, 0);
  cJSON *r = status_once(&P, refused, "failed");
  tu_assert_json(r, "{\"result\":{\"status\":\"failed\",\"statusMessage\":"
                    "\"Server busy: a new task would pass the cluster's "
                    "per-caller task budget (1 task, 33554432 bytes), and no "
                    "finished task there can make room; try again when one "
                    "has finished\"}}");
  cJSON_Delete(r);
  mcp_result_text(held, "finished");
  mcp_call_finish(held, 0);
  cJSON_Delete(status_once(&Q, first, "completed"));
  mcp_call *admitted_call;
  char *admitted = start_on(&Q, &admitted_call);
  ck_assert(!mcp_call_cancelled(admitted_call));
  r = status_once(&P, admitted, "working");
  tu_assert_json(r, "{\"result\":{\"status\":\"working\"}}");
  cJSON_Delete(r);
  r = status_once(&P, first, NULL);
  tu_assert_error(r, -32602, "Task not found");
  cJSON_Delete(r);
  /* Full again (the admitted one runs on B): a task on A that ends before
   * Redis refused to count it is forgotten, and its call answers as one
   * that never became a task: its result, or its error, never a task
   * nobody keeps. */
  r = ask_wait(&P, tu_mcall(next_id++, "job", "{\"do\":\"quick\"}", CALL_META,
                            NULL, NULL));
  tu_assert_json(r, "{\"result\":{\"resultType\":\"complete\",\"content\":[{"
                    "\"text\":\"quick\"}]}}");
  ck_assert_ptr_null(tu_jget(r, "result.taskId"));
  cJSON_Delete(r);
  r = ask_wait(&P, tu_mcall(next_id++, "job", "{\"do\":\"broken\"}", CALL_META,
                            NULL, NULL));
  tu_assert_error(r, -32603, "Internal error");
  cJSON_Delete(r);
  mcp_call_finish(admitted_call, 0);
  free(first);
  free(refused);
  free(admitted);
}
END_TEST

static void put_seen(void *arg, int rc, const mcp_store_record *recs,
                     unsigned n, bool more, const char *why) {
  (void)more;
  (void)why;
  atomic_store((_Atomic int *)arg,
               rc == 0 && n == 1 && recs[0].written ? 1 : -1);
}

/* A task settled elsewhere without A hearing of it (as a lost node's are
 * failed), whose record the cluster's budget then evicted, is not written
 * anew by A over Redis: A forgets it and cancels its call. */
START_TEST(a_task_settled_elsewhere_and_evicted_over_redis) {
  const mcp_task_limits lim = {.max_total = 2};
  ck_assert_int_eq(mcp_server_set_task_limits(g_a, &lim), 0);
  ck_assert_int_eq(mcp_server_set_task_limits(g_b, &lim), 0);
  mcp_call *held;
  char *id = start_on(&P, &held);
  char key[64];
  snprintf(key, sizeof key, "task:%s", id);
  static const char failed[] = "{\"status\":\"failed\"}";
  mcp_store_record rec = {.key = key,
                          .value = failed,
                          .len = sizeof failed - 1,
                          .ttl_ms = 60000,
                          .final = true};
  _Atomic int seen = 0;
  ck_assert_int_eq(mcp_store_put(g_sb, &rec, put_seen, (void *)&seen), 0);
  for (int i = 0; i < 500 && atomic_load(&seen) == 0; i++)
    sleep_ms(10);
  ck_assert_int_eq(atomic_load(&seen), 1);
  /* Eve's tasks on B fill the cluster's total: the second evicts it. */
  mcp_call *eve[2];
  char *eve_id[2];
  for (int i = 0; i < 2; i++) {
    eve_id[i] = start_on(&E, &eve[i]);
    ck_assert(!mcp_call_cancelled(eve[i]));
  }
  ck_assert(!mcp_call_cancelled(held));
  ck_assert_int_eq(mcp_call_set_status(held, "still going"), 0);
  for (int i = 0; i < 500 && !mcp_call_cancelled(held); i++)
    sleep_ms(10);
  ck_assert(mcp_call_cancelled(held));
  cJSON *r = status_once(&P, id, NULL);
  tu_assert_error(r, -32602, "Task not found");
  cJSON_Delete(r);
  r = status_once(&Q, id, NULL);
  tu_assert_error(r, -32602, "Task not found");
  cJSON_Delete(r);
  mcp_call_finish(held, 0);
  for (int i = 0; i < 2; i++) {
    mcp_call_finish(eve[i], 0);
    free(eve_id[i]);
  }
  free(id);
}
END_TEST

START_TEST(a_result_waits_on_another_node_over_redis) {
  tu_peer l, lb;
  tu_peer_open(&l, g_a, &ALICE);
  tu_legacy_init(&l, "2025-11-25", "{}");
  tu_peer_open(&lb, g_b, &ALICE);
  tu_legacy_init(&lb, "2025-11-25", "{}");
  /* B waits for the task's end on A, then answers its result. */
  mcp_call *held;
  char *id = legacy_start(&l, &lb, &held);
  char *get = tu_text("{\"taskId\":\"%s\"}", id);
  legacy_send(&lb, "tasks/result", get);
  for (int i = 0; i < 500 && mcp_server_next_expiry_ms(g_b) < 0; i++)
    sleep_ms(10); /* until the request waits (its timer is set) */
  ck_assert_int_ge(mcp_server_next_expiry_ms(g_b), 0);
  ck_assert_uint_eq(lb.nout, 0);
  mcp_result_text(held, "over redis");
  ck_assert_int_eq(mcp_call_finish(held, 0), 0);
  ck_assert_uint_eq(tu_wait(&lb, 1, 20000), 1);
  tu_assert_msg(&lb, 0,
                "{\"result\":{\"content\":[{\"text\":\"over redis\"}],"
                "\"_meta\":{\"io.modelcontextprotocol/related-task\":{}}}}");
  free(get);
  free(id);
  /* Redis stops while one waits: at its next look, a clear error. */
  id = legacy_start(&l, &lb, &held);
  get = tu_text("{\"taskId\":\"%s\"}", id);
  legacy_send(&lb, "tasks/result", get);
  for (int i = 0; i < 500 && mcp_server_next_expiry_ms(g_b) < 0; i++)
    sleep_ms(10);
  ck_assert_int_ge(mcp_server_next_expiry_ms(g_b), 0);
  rs_stop(&g_redis);
  for (int i = 0; i < 500 && tu_wait(&lb, 1, 20) == 0; i++)
    mcp_server_expire(g_b);
  ck_assert_uint_eq(tu_wait(&lb, 1, 20000), 1);
  cJSON *r = tu_msg(&lb, 0);
  tu_assert_error(r, -32603, "cannot be reached");
  cJSON_Delete(r);
  mcp_call_finish(held, 0);
  char err[600];
  ck_assert_msg(rs_start(&g_redis, REDIS_SERVER, err, sizeof err) == 0, "%s",
                err);
  free(get);
  free(id);
  tu_peer_close(&lb);
  tu_peer_close(&l);
}
END_TEST

int main(void) {
  Suite *s = suite_create("redis_tasks");
  TCase *tc = tu_tcase(s, "tasks", setup, teardown, 120);
  tcase_add_test(tc, another_node_answers_over_redis);
  tcase_add_test(tc, input_answered_through_another_node);
  tcase_add_test(tc, a_node_gone_fails_its_task_and_redis_gone_is_an_error);
  tcase_add_test(tc, a_result_waits_on_another_node_over_redis);
  tcase_add_test(tc, budgets_hold_across_nodes_over_redis);
  tcase_add_test(tc, a_task_settled_elsewhere_and_evicted_over_redis);
  return tu_run(s);
}
