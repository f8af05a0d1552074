/* Tests for lib/engine/task.c: tasks in both forms of the protocol.
 *
 * 2026-07-28 (the io.modelcontextprotocol/tasks extension): a call becomes a
 * task when its handler defers or calls mcp_call_start_task, and only for a
 * request that declared the extension; tasks/get inlines the input
 * requests, the result or the error; tasks/update answers (partly, keys
 * unique over the task's life); tasks/cancel acknowledges. 2025-11-25: the
 * client asks with a task param; tasks/get, the blocking tasks/result,
 * tasks/list and tasks/cancel; input requests and notifications carry the
 * related-task _meta. Then the limits, the TTL, the wire forms, and every
 * allocation failing in turn. Admission of the tasks methods (scopes, and a
 * task seen by its creator alone) is test_dispatch's. */
#include <check.h>
#include <cjson/cJSON.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "store_contract.h"
#include "task.h"
#include "testutil.h"

#define EXT "io.modelcontextprotocol/tasks"
#define TASKS_META TU_META("{\"extensions\":{\"" EXT "\":{}}}")
#define TASKS_ELICIT_META                                                      \
  TU_META("{\"elicitation\":{},\"extensions\":{\"" EXT "\":{}}}")
#define RELATED "io.modelcontextprotocol/related-task"

static const char YES[] = "{\"action\":\"accept\",\"content\":{\"ok\":true}}";
static const char ASK[] =
    "{\"message\":\"Go on?\",\"requestedSchema\":{\"type\":\"object\","
    "\"properties\":{\"ok\":{\"type\":\"boolean\"}}}}";

static mcp_server *srv;
static tu_peer P; /* alice, serving both eras */
static const mcp_principal ALICE = {.subject = "alice"};
static int g_seen_ok; /* answers the handler saw under "ok" */
static int race_handler(mcp_call *call);

/* ---- the tools ------------------------------------------------------------
 * job (optional task support) does what its "do" argument says; must
 * (required) answers; plain (no task support) answers. */

static int ask(mcp_call *call, const char *key) {
  int rc = mcp_call_request_input(call, key, MCP_INPUT_ELICITATION, ASK);
  return rc == 0 ? MCP_INPUT_REQUIRED : rc;
}

/* Gives call a text result of n bytes. Returns mcp_result_text's code. */
static int result_of_size(mcp_call *call, size_t n) {
  char *text = malloc(n + 1);
  ck_assert_ptr_nonnull(text);
  memset(text, 'x', n);
  text[n] = '\0';
  int rc = mcp_result_text(call, text);
  free(text);
  return rc;
}

static int h_job(mcp_call *call, void *user_data) {
  (void)user_data;
  const char *what = "now";
  mcp_call_arg_string(call, "do", &what);
  if (strcmp(what, "now") == 0)
    return mcp_result_text(call, "done now");
  if (strcmp(what, "defer") == 0)
    return tu_defer(call);
  if (strcmp(what, "task") == 0) {
    ck_assert_int_eq(mcp_call_start_task(call), 0);
    return mcp_result_text(call, "done as a task");
  }
  if (strcmp(what, "taskfail") == 0) {
    ck_assert_int_eq(mcp_call_start_task(call), 0);
    return MCP_EIO; /* -32603 */
  }
  if (strcmp(what, "status") == 0) {
    ck_assert_int_eq(mcp_call_start_task(call), 0);
    ck_assert_int_eq(mcp_call_set_status(call, "halfway there"), 0);
    return tu_defer(call);
  }
  if (strcmp(what, "progress") == 0) {
    ck_assert_int_eq(mcp_call_progress(call, 1, 2, "one of two"), 0);
    return mcp_result_error(call, "it went wrong");
  }
  if (strcmp(what, "ask") == 0 || strcmp(what, "again") == 0) {
    /* "again" asks under the same key in a second round. */
    const cJSON *a = mcp_call_input(call, "ok");
    const char *st = mcp_call_state(call);
    if (a == NULL) {
      mcp_call_start_task(call);
      return ask(call, "ok");
    }
    g_seen_ok++;
    if (strcmp(what, "again") == 0 && st == NULL) {
      ck_assert_int_eq(mcp_call_set_state(call, "second"), 0);
      return ask(call, "ok");
    }
    return mcp_result_text(call, "answered");
  }
  if (strcmp(what, "race") == 0)
    return race_handler(call);
  if (strcmp(what, "big") == 0) {
    /* A result of "n" bytes of text, as a task. */
    int64_t n = 0;
    mcp_call_arg_int(call, "n", &n);
    mcp_call_start_task(call);
    return result_of_size(call, (size_t)n);
  }
  if (strcmp(what, "askbig") == 0) {
    /* Asks with a message of "n" bytes, as a task. */
    if (mcp_call_input(call, "ok") != NULL)
      return mcp_result_text(call, "answered");
    int64_t n = 0;
    mcp_call_arg_int(call, "n", &n);
    char *params = malloc((size_t)n + 64);
    ck_assert_ptr_nonnull(params);
    int at = snprintf(params, 64, "{\"message\":\"");
    memset(params + at, 'q', (size_t)n);
    strcpy(params + at + n, "\",\"requestedSchema\":{\"type\":\"object\"}}");
    mcp_call_start_task(call);
    int rc = mcp_call_request_input(call, "ok", MCP_INPUT_ELICITATION, params);
    free(params);
    return rc == 0 ? MCP_INPUT_REQUIRED : rc;
  }
  if (strcmp(what, "ask2") == 0) {
    if (mcp_call_input(call, "a") == NULL &&
        mcp_call_input(call, "b") == NULL) {
      mcp_call_start_task(call);
      int rc = ask(call, "a");
      return rc == MCP_INPUT_REQUIRED ? ask(call, "b") : rc;
    }
    ck_assert_ptr_nonnull(mcp_call_input(call, "a"));
    ck_assert_ptr_nonnull(mcp_call_input(call, "b"));
    return mcp_result_text(call, "both answered");
  }
  ck_abort_msg("unknown do: %s", what);
  return MCP_EINVAL;
}

static int h_must(mcp_call *call, void *user_data) {
  (void)user_data;
  return mcp_result_text(call, "must done");
}

static int h_plain(mcp_call *call, void *user_data) {
  (void)user_data;
  /* A tool without task support cannot become one. */
  ck_assert_int_eq(mcp_call_start_task(call), MCP_EINVAL);
  return mcp_result_text(call, "plain");
}

/* A server with the three tools. */
static mcp_server *tasks_server(void) {
  static const mcp_server_info info = {.name = "tasks", .version = "1"};
  mcp_server *one;
  ck_assert_int_eq(mcp_server_new(&info, &one), 0);
  mcp_server_set_log(one, tu_silent_log, NULL);
  static const mcp_tool job = {
      .name = "job",
      .description = "Does what it is told, maybe as a task.",
      .input_schema = "{\"type\":\"object\",\"properties\":{\"do\":{"
                      "\"type\":\"string\"}}}",
      .flags = MCP_TOOL_TASK_OPTIONAL,
      .annotations = {.read_only = MCP_HINT_TRUE, .open_world = MCP_HINT_FALSE},
      .handler = h_job};
  static const mcp_tool must = {
      .name = "must",
      .description = "Runs only as a task.",
      .flags = MCP_TOOL_TASK_REQUIRED,
      .annotations = {.read_only = MCP_HINT_TRUE, .open_world = MCP_HINT_FALSE},
      .handler = h_must};
  static const mcp_tool plain = {
      .name = "plain",
      .description = "Never a task.",
      .annotations = {.read_only = MCP_HINT_TRUE, .open_world = MCP_HINT_FALSE},
      .handler = h_plain};
  ck_assert_int_eq(mcp_server_add_tool(one, &job, NULL), 0);
  ck_assert_int_eq(mcp_server_add_tool(one, &must, NULL), 0);
  ck_assert_int_eq(mcp_server_add_tool(one, &plain, NULL), 0);
  return one;
}

static void setup(void) {
  srv = tasks_server();
  tu_peer_open(&P, srv, &ALICE);
  tu_deferred_reset();
  g_seen_ok = 0;
}

static void teardown(void) {
  tu_peer_close(&P);
  mcp_server_free(srv);
}

/* ---- requests -------------------------------------------------------------
 */

static int next_id = 100;

/* A 2026-07-28 tools/call of tool with args, declaring the extension. */
static cJSON *mcall(const char *tool, const char *args) {
  return tu_ask(&P,
                tu_mcall(next_id++, tool, args, TASKS_ELICIT_META, NULL, NULL));
}

/* A 2026-07-28 tasks method naming id, with more members (or NULL). */
static cJSON *mtask(const char *method, const char *id, const char *more) {
  char *extra =
      tu_text("\"taskId\":\"%s\"%s%s", id, more ? "," : "", more ? more : "");
  cJSON *r = tu_ask(&P, tu_mreq(next_id++, method, TASKS_META, extra));
  free(extra);
  return r;
}

static char *task_id(const cJSON *r, const char *path) {
  const char *id = tu_jstr(r, path);
  ck_assert_msg(id != NULL, "no %s in %s", path, cJSON_PrintUnformatted(r));
  return tu_text("%s", id);
}

/* Asserts a timestamp is RFC 3339 UTC with milliseconds. */
static void assert_time(const cJSON *r, const char *path) {
  const char *t = tu_jstr(r, path);
  ck_assert_ptr_nonnull(t);
  int y, mo, d, h, mi, s, ms;
  char z;
  ck_assert_int_eq(strlen(t), 24);
  ck_assert_int_eq(sscanf(t, "%4d-%2d-%2dT%2d:%2d:%2d.%3d%c", &y, &mo, &d, &h,
                          &mi, &s, &ms, &z),
                   8);
  ck_assert(y >= 2024 && mo >= 1 && mo <= 12 && d >= 1 && d <= 31);
  ck_assert(h < 24 && mi < 60 && s < 61 && z == 'Z');
}

/* ===========================================================================
 * Registration and the wire forms
 * ======================================================================== */

START_TEST(flags_are_checked_at_registration) {
  mcp_tool t = {
      .name = "both",
      .description = "d",
      .flags = MCP_TOOL_TASK_OPTIONAL | MCP_TOOL_TASK_REQUIRED,
      .annotations = {.read_only = MCP_HINT_TRUE, .open_world = MCP_HINT_FALSE},
      .handler = h_must};
  ck_assert_int_eq(mcp_server_add_tool(srv, &t, NULL), MCP_EINVAL);
  ck_assert_ptr_nonnull(strstr(mcp_server_errmsg(srv), "optional or required"));
  t.flags = 64;
  ck_assert_int_eq(mcp_server_add_tool(srv, &t, NULL), MCP_EINVAL);
  ck_assert_ptr_nonnull(strstr(mcp_server_errmsg(srv), "no MCP_TOOL_"));
}
END_TEST

START_TEST(task_support_listed_in_2025_11_25_only) {
  static const char *const versions[] = {"2025-06-18", "2025-11-25"};
  for (int v = 0; v < 2; v++) {
    tu_peer L;
    tu_peer_open(&L, srv, &ALICE);
    tu_legacy_init(&L, versions[v], "{}");
    cJSON *r = tu_ask(&L, tu_req(1, "tools/list", NULL));
    /* Task support is a field of 2025-11-25 alone. */
    char *want =
        v ? tu_text("{\"result\":{\"tools\":[{\"name\":\"job\",\"execution\":{"
                    "\"taskSupport\":\"optional\"}},{\"name\":\"must\","
                    "\"execution\":{\"taskSupport\":\"required\"}},{\"name\":"
                    "\"plain\",\"execution\":\"<absent>\"}]}}")
          : tu_text("{\"result\":{\"tools\":[{\"execution\":\"<absent>\"},"
                    "{\"execution\":\"<absent>\"},{\"execution\":"
                    "\"<absent>\"}]}}");
    tu_assert_json(r, want);
    free(want);
    cJSON_Delete(r);
    tu_peer_close(&L);
  }
  /* 2026-07-28 moved tasks to an extension that lists nothing per tool. */
  cJSON *r = tu_ask(&P, tu_mreq(1, "tools/list", TASKS_META, NULL));
  tu_assert_json(r, "{\"result\":{\"tools\":[{\"execution\":\"<absent>\"},"
                    "{\"execution\":\"<absent>\"},{\"execution\":"
                    "\"<absent>\"}]}}");
  cJSON_Delete(r);
}
END_TEST

START_TEST(capability_in_both_eras) {
  tu_peer L;
  tu_peer_open(&L, srv, &ALICE);
  cJSON *r = tu_ask(&L, tu_req(1, "initialize",
                               "{\"protocolVersion\":\"2025-11-25\","
                               "\"capabilities\":{},\"clientInfo\":{\"name\":"
                               "\"c\"}}"));
  tu_assert_exact(tu_jget(r, "result.capabilities.tasks"),
                  "{\"list\":{},\"cancel\":{},\"requests\":{\"tools\":{"
                  "\"call\":{}}}}");
  /* 2026-07-28's tasks extension is not a legacy session's. */
  ck_assert_ptr_null(tu_get(tu_jget(r, "result.capabilities.extensions"),
                            "io.modelcontextprotocol/tasks"));
  cJSON_Delete(r);
  tu_peer_close(&L);
  tu_peer_open(&L, srv, &ALICE);
  r = tu_ask(&L,
             tu_req(1, "initialize",
                    "{\"protocolVersion\":\"2025-06-18\","
                    "\"capabilities\":{},\"clientInfo\":{\"name\":\"c\"}}"));
  ck_assert_ptr_null(tu_jget(r, "result.capabilities.tasks"));
  cJSON_Delete(r);
  tu_peer_close(&L);
  r = tu_ask(&P, tu_mreq(1, "server/discover", TU_META_NONE, NULL));
  ck_assert_ptr_null(tu_jget(r, "result.capabilities.tasks"));
  tu_assert_exact(tu_jget(r, "result.capabilities.extensions"),
                  "{\"" EXT "\":{},\"io.modelcontextprotocol/"
                  "trust-annotations\":{}}");
  cJSON_Delete(r);
  /* Offered while a tool with task support is registered, and no longer. */
  ck_assert_int_eq(mcp_server_remove_tool(srv, "job"), 0);
  r = tu_ask(&P, tu_mreq(2, "server/discover", TU_META_NONE, NULL));
  ck_assert_ptr_nonnull(
      tu_get(tu_jget(r, "result.capabilities.extensions"), EXT));
  cJSON_Delete(r);
  ck_assert_int_eq(mcp_server_remove_tool(srv, "must"), 0);
  r = tu_ask(&P, tu_mreq(3, "server/discover", TU_META_NONE, NULL));
  ck_assert_ptr_null(tu_get(tu_jget(r, "result.capabilities.extensions"), EXT));
  cJSON_Delete(r);
  r = tu_ask(&P, tu_mreq(4, "tasks/get", TASKS_META, "\"taskId\":\"x\""));
  tu_assert_error(r, -32601, NULL);
  cJSON_Delete(r);
}
END_TEST

/* ===========================================================================
 * 2026-07-28
 * ======================================================================== */

START_TEST(an_answer_at_once_is_no_task) {
  cJSON *r = mcall("job", "{\"do\":\"now\"}");
  tu_assert_json(r, "{\"result\":{\"resultType\":\"complete\",\"taskId\":"
                    "\"<absent>\",\"content\":[{\"text\":\"done now\"}]}}");
  cJSON_Delete(r);
  /* Without the extension a call that defers is an ordinary deferred one. */
  tu_clear(&P);
  ck_assert_int_eq(tu_send_free(&P, tu_mcall(1, "job", "{\"do\":\"defer\"}",
                                             TU_META_NONE, NULL, NULL)),
                   0);
  ck_assert_uint_eq(P.nout, 0);
  ck_assert_ptr_null(mcp_call_task_id(tu_stash));
  ck_assert_int_eq(mcp_call_start_task(tu_stash), MCP_ECAPABILITY);
  ck_assert_int_eq(mcp_call_set_status(tu_stash, "x"), MCP_ESTATE);
  mcp_result_text(tu_stash, "later");
  ck_assert_int_eq(mcp_call_finish(tu_stash, 0), 0);
  tu_assert_msg(&P, 0,
                "{\"id\":1,\"result\":{\"content\":[{\"text\":"
                "\"later\"}]}}");
}
END_TEST

START_TEST(a_deferred_call_becomes_a_task) {
  cJSON *r = mcall("job", "{\"do\":\"defer\"}");
  tu_assert_json(r, "{\"result\":{\"resultType\":\"task\",\"status\":"
                    "\"working\",\"ttlMs\":3600000,\"pollIntervalMs\":500,"
                    "\"ttl\":\"<absent>\",\"pollInterval\":\"<absent>\","
                    "\"task\":\"<absent>\",\"requestState\":\"<absent>\","
                    "\"result\":\"<absent>\",\"content\":\"<absent>\"}}");
  assert_time(r, "result.createdAt");
  assert_time(r, "result.lastUpdatedAt");
  char *id = task_id(r, "result.taskId");
  ck_assert_int_eq(strlen(id), 22); /* 128 bits, base64url */
  ck_assert_str_eq(mcp_call_task_id(tu_stash), id);
  cJSON_Delete(r);

  r = mtask("tasks/get", id, NULL);
  char *want = tu_text("{\"result\":{\"resultType\":\"complete\",\"taskId\":"
                       "\"%s\",\"status\":\"working\",\"result\":"
                       "\"<absent>\",\"inputRequests\":\"<absent>\"}}",
                       id);
  tu_assert_json(r, want);
  free(want);
  cJSON_Delete(r);

  mcp_result_text(tu_stash, "finished");
  ck_assert_int_eq(mcp_call_finish(tu_stash, 0), 0);
  r = mtask("tasks/get", id, NULL);
  tu_assert_json(r, "{\"result\":{\"status\":\"completed\",\"result\":{"
                    "\"content\":[{\"type\":\"text\",\"text\":\"finished\"}],"
                    "\"_meta\":{\"" RELATED "\":\"<absent>\"}}}}");
  cJSON_Delete(r);
  free(id);
}
END_TEST

START_TEST(tool_error_completes_and_protocol_error_fails) {
  cJSON *r = mcall("job", "{\"do\":\"defer\"}");
  char *id = task_id(r, "result.taskId");
  cJSON_Delete(r);
  mcp_result_error(tu_stash, "no good");
  mcp_call_finish(tu_stash, 0);
  r = mtask("tasks/get", id, NULL);
  tu_assert_json(r, "{\"result\":{\"status\":\"completed\",\"result\":{"
                    "\"isError\":true,\"content\":[{\"text\":\"no good\"}]}}}");
  cJSON_Delete(r);
  free(id);

  r = mcall("job", "{\"do\":\"defer\"}");
  id = task_id(r, "result.taskId");
  cJSON_Delete(r);
  mcp_call_finish(tu_stash, MCP_EINTERNAL);
  r = mtask("tasks/get", id, NULL);
  tu_assert_json(r, "{\"result\":{\"status\":\"failed\",\"result\":"
                    "\"<absent>\",\"error\":{\"code\":-32603,\"message\":"
                    "\"Internal error\"}}}");
  cJSON_Delete(r);
  free(id);
}
END_TEST

START_TEST(start_task_then_answer_at_once) {
  cJSON *r = mcall("job", "{\"do\":\"task\"}");
  /* The handler answered, but the call was a task by then: the client
   * gets the task, finished already, and its result through tasks/get. */
  tu_assert_json(r, "{\"result\":{\"resultType\":\"task\",\"status\":"
                    "\"completed\",\"content\":\"<absent>\"}}");
  char *id = task_id(r, "result.taskId");
  cJSON_Delete(r);
  r = mtask("tasks/get", id, NULL);
  tu_assert_json(r, "{\"result\":{\"status\":\"completed\",\"result\":{"
                    "\"content\":[{\"text\":\"done as a task\"}]}}}");
  cJSON_Delete(r);
  free(id);
}
END_TEST

START_TEST(input_through_tasks_update) {
  cJSON *r = mcall("job", "{\"do\":\"ask\"}");
  tu_assert_json(r, "{\"result\":{\"resultType\":\"task\",\"status\":"
                    "\"input_required\",\"inputRequests\":\"<absent>\"}}");
  char *id = task_id(r, "result.taskId");
  cJSON_Delete(r);
  r = mtask("tasks/get", id, NULL);
  tu_assert_exact(tu_jget(r, "result.inputRequests"),
                  "{\"ok\":{\"method\":\"elicitation/create\",\"params\":{"
                  "\"message\":\"Go on?\",\"requestedSchema\":{\"type\":"
                  "\"object\",\"properties\":{\"ok\":{\"type\":"
                  "\"boolean\"}}}}}}");
  cJSON_Delete(r);
  /* An answer of the wrong shape is refused, and changes nothing. */
  r = mtask("tasks/update", id, "\"inputResponses\":{\"ok\":{\"x\":1}}");
  tu_assert_error(r, -32602, "inputResponses[\"ok\"]");
  cJSON_Delete(r);
  r = mtask("tasks/update", id, NULL);
  tu_assert_error(r, -32602, "inputResponses");
  cJSON_Delete(r);
  /* A key never issued is ignored: acknowledged, still waiting. */
  r = mtask("tasks/update", id, "\"inputResponses\":{\"nope\":{}}");
  tu_assert_exact(tu_jget(r, "result.resultType"), "\"complete\"");
  ck_assert_ptr_null(tu_jget(r, "result.status"));
  cJSON_Delete(r);
  r = mtask("tasks/get", id, NULL);
  tu_assert_json(r, "{\"result\":{\"status\":\"input_required\"}}");
  cJSON_Delete(r);
  char *yes = tu_text("\"inputResponses\":{\"ok\":%s}", YES);
  r = mtask("tasks/update", id, yes);
  tu_assert_json(r, "{\"result\":{\"resultType\":\"complete\",\"taskId\":"
                    "\"<absent>\",\"status\":\"<absent>\"}}");
  cJSON_Delete(r);
  r = mtask("tasks/get", id, NULL);
  tu_assert_json(r, "{\"result\":{\"status\":\"completed\",\"result\":{"
                    "\"content\":[{\"text\":\"answered\"}]}}}");
  cJSON_Delete(r);
  ck_assert_int_eq(g_seen_ok, 1);
  /* Answered already: a second answer is ignored. */
  r = mtask("tasks/update", id, yes);
  tu_assert_json(r, "{\"result\":{\"resultType\":\"complete\"}}");
  cJSON_Delete(r);
  ck_assert_int_eq(g_seen_ok, 1);
  free(yes);
  free(id);
}
END_TEST

/* A 2026-07-28 task's input round after the session that made it ended:
 * the answers come by tasks/update on another session of its caller, and
 * the next round runs in the task's own home. */
START_TEST(input_through_tasks_update_after_its_session) {
  cJSON *r = mcall("job", "{\"do\":\"ask\"}");
  char *id = task_id(r, "result.taskId");
  cJSON_Delete(r);
  tu_peer_close(&P);
  tu_peer_open(&P, srv, &ALICE);
  r = mtask("tasks/get", id, NULL);
  tu_assert_json(r, "{\"result\":{\"status\":\"input_required\"}}");
  cJSON_Delete(r);
  char *yes = tu_text("\"inputResponses\":{\"ok\":%s}", YES);
  r = mtask("tasks/update", id, yes);
  tu_assert_json(r, "{\"result\":{\"resultType\":\"complete\"}}");
  cJSON_Delete(r);
  ck_assert_int_eq(g_seen_ok, 1);
  r = mtask("tasks/get", id, NULL);
  tu_assert_json(r, "{\"result\":{\"status\":\"completed\",\"result\":{"
                    "\"content\":[{\"text\":\"answered\"}]}}}");
  cJSON_Delete(r);
  free(yes);
  free(id);
}
END_TEST

START_TEST(partial_answers_and_keys_unique_over_the_task) {
  cJSON *r = mcall("job", "{\"do\":\"ask2\"}");
  char *id = task_id(r, "result.taskId");
  cJSON_Delete(r);
  char *one = tu_text("\"inputResponses\":{\"a\":%s}", YES);
  r = mtask("tasks/update", id, one);
  cJSON_Delete(r);
  r = mtask("tasks/get", id, NULL);
  tu_assert_json(r, "{\"result\":{\"status\":\"input_required\","
                    "\"inputRequests\":{\"a\":\"<absent>\",\"b\":{\"method\":"
                    "\"elicitation/create\"}}}}");
  cJSON_Delete(r);
  char *two = tu_text("\"inputResponses\":{\"b\":%s}", YES);
  r = mtask("tasks/update", id, two);
  cJSON_Delete(r);
  r = mtask("tasks/get", id, NULL);
  tu_assert_json(r, "{\"result\":{\"status\":\"completed\",\"result\":{"
                    "\"content\":[{\"text\":\"both answered\"}]}}}");
  cJSON_Delete(r);
  free(one);
  free(two);
  free(id);

  /* The same key asked in a later round is issued under a new key. */
  r = mcall("job", "{\"do\":\"again\"}");
  id = task_id(r, "result.taskId");
  cJSON_Delete(r);
  char *first = tu_text("\"inputResponses\":{\"ok\":%s}", YES);
  cJSON_Delete(mtask("tasks/update", id, first));
  r = mtask("tasks/get", id, NULL);
  tu_assert_json(r, "{\"result\":{\"status\":\"input_required\","
                    "\"inputRequests\":{\"ok\":\"<absent>\",\"ok.2\":{"
                    "\"method\":\"elicitation/create\"}}}}");
  cJSON_Delete(r);
  cJSON_Delete(mtask("tasks/update", id, first)); /* the old key: ignored */
  r = mtask("tasks/get", id, NULL);
  tu_assert_json(r, "{\"result\":{\"status\":\"input_required\"}}");
  cJSON_Delete(r);
  char *second = tu_text("\"inputResponses\":{\"ok.2\":%s}", YES);
  cJSON_Delete(mtask("tasks/update", id, second));
  r = mtask("tasks/get", id, NULL);
  tu_assert_json(r, "{\"result\":{\"status\":\"completed\"}}");
  cJSON_Delete(r);
  ck_assert_int_eq(g_seen_ok, 2); /* the handler read both under "ok" */
  free(first);
  free(second);
  free(id);
}
END_TEST

START_TEST(cancel_acknowledges_and_settles) {
  cJSON *r = mcall("job", "{\"do\":\"defer\"}");
  char *id = task_id(r, "result.taskId");
  cJSON_Delete(r);
  mcp_call *held = tu_stash;
  r = mtask("tasks/cancel", id, NULL);
  tu_assert_json(r, "{\"result\":{\"resultType\":\"complete\",\"taskId\":"
                    "\"<absent>\",\"status\":\"<absent>\"}}");
  cJSON_Delete(r);
  ck_assert(mcp_call_cancelled(held));
  /* An ended task keeps the message it ended with. */
  ck_assert_int_eq(mcp_call_set_status(held, "still going"), MCP_ESTATE);
  r = mtask("tasks/get", id, NULL);
  tu_assert_json(r, "{\"result\":{\"status\":\"cancelled\",\"result\":"
                    "\"<absent>\",\"statusMessage\":\"<absent>\"}}");
  cJSON_Delete(r);
  /* Its result, should it come, is not kept; a second cancel is the same
   * acknowledgement. */
  mcp_result_text(held, "too late");
  mcp_call_finish(held, 0);
  r = mtask("tasks/cancel", id, NULL);
  tu_assert_json(r, "{\"result\":{\"resultType\":\"complete\"}}");
  cJSON_Delete(r);
  r = mtask("tasks/get", id, NULL);
  tu_assert_json(r, "{\"result\":{\"status\":\"cancelled\"}}");
  cJSON_Delete(r);
  free(id);

  /* A task waiting for input has no thread: cancelling ends its call. */
  r = mcall("job", "{\"do\":\"ask\"}");
  id = task_id(r, "result.taskId");
  cJSON_Delete(r);
  cJSON_Delete(mtask("tasks/cancel", id, NULL));
  r = mtask("tasks/get", id, NULL);
  tu_assert_json(r, "{\"result\":{\"status\":\"cancelled\","
                    "\"inputRequests\":\"<absent>\"}}");
  cJSON_Delete(r);
  free(id);
}
END_TEST

START_TEST(modern_refusals) {
  /* The tasks methods need the extension on the request. */
  cJSON *r =
      tu_ask(&P, tu_mreq(1, "tasks/get", TU_META_NONE, "\"taskId\":\"x\""));
  tu_assert_error(r, -32021, EXT);
  tu_assert_json(r, "{\"error\":{\"data\":{\"requiredCapabilities\":{"
                    "\"extensions\":{\"" EXT "\":{}}}}}}");
  cJSON_Delete(r);
  r = mtask("tasks/get", "unknown", NULL);
  tu_assert_error(r, -32602, "Task not found");
  cJSON_Delete(r);
  r = tu_ask(&P, tu_mreq(1, "tasks/get", TASKS_META, NULL));
  tu_assert_error(r, -32602, "taskId");
  cJSON_Delete(r);
  /* 2025-11-25's methods do not exist here. */
  r = mtask("tasks/result", "x", NULL);
  tu_assert_error(r, -32601, NULL);
  cJSON_Delete(r);
  r = tu_ask(&P, tu_mreq(1, "tasks/list", TASKS_META, NULL));
  tu_assert_error(r, -32601, NULL);
  cJSON_Delete(r);
  /* A tool that runs only as a task, for a client that takes none. */
  r = tu_ask(&P, tu_mcall(1, "must", NULL, TU_META_NONE, NULL, NULL));
  tu_assert_error(r, -32021, "must");
  cJSON_Delete(r);
  /* ... and one that takes them: the server decides (here, at once). */
  r = mcall("must", NULL);
  tu_assert_json(r, "{\"result\":{\"resultType\":\"complete\"}}");
  cJSON_Delete(r);
  /* 2025-11-25's task param means nothing in 2026-07-28. */
  r = tu_ask(&P, tu_text("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
                         "\"tools/call\",\"params\":{\"name\":\"plain\","
                         "\"task\":{\"ttl\":5},\"_meta\":%s}}",
                         TASKS_META));
  tu_assert_json(r, "{\"result\":{\"resultType\":\"complete\"}}");
  cJSON_Delete(r);
}
END_TEST

START_TEST(status_reaches_listeners_that_asked) {
  cJSON *r = mcall("job", "{\"do\":\"defer\"}");
  char *id = task_id(r, "result.taskId");
  cJSON_Delete(r);
  /* taskIds need the extension on the listen request. */
  char *filter = tu_text("\"notifications\":{\"taskIds\":[\"%s\"]}", id);
  r = tu_ask(&P, tu_mreq(5, "subscriptions/listen", TU_META_NONE, filter));
  tu_assert_error(r, -32021, EXT);
  cJSON_Delete(r);
  /* At most 256 of them, each a string of 1-64 bytes. */
  cJSON *big = cJSON_CreateArray();
  for (int i = 0; i < 257; i++)
    cJSON_AddItemToArray(big, cJSON_CreateString("t"));
  char *list = cJSON_PrintUnformatted(big);
  cJSON_Delete(big);
  char *many = tu_text("\"notifications\":{\"taskIds\":%s}", list);
  cJSON_free(list);
  r = tu_ask(&P, tu_mreq(8, "subscriptions/listen", TASKS_META, many));
  tu_assert_error(r, -32602, "more than 256");
  cJSON_Delete(r);
  free(many);
  r = tu_ask(&P, tu_mreq(9, "subscriptions/listen", TASKS_META,
                         "\"notifications\":{\"taskIds\":[\"\"]}"));
  tu_assert_error(r, -32602, "taskIds must hold task ids");
  cJSON_Delete(r);
  /* Another caller's task is not heard of: not acknowledged. */
  static const mcp_principal BOB = {.subject = "bob"};
  tu_peer B;
  tu_peer_open(&B, srv, &BOB);
  r = tu_ask(&B, tu_mreq(6, "subscriptions/listen", TASKS_META, filter));
  tu_assert_json(r, "{\"method\":\"notifications/subscriptions/acknowledged\","
                    "\"params\":{\"notifications\":{\"taskIds\":"
                    "\"<absent>\"}}}");
  cJSON_Delete(r);
  free(filter);
  /* Its creator's listener is told each change, with the whole task. */
  filter = tu_text("\"notifications\":{\"taskIds\":[\"%s\",\"nope\"]}", id);
  r = tu_ask(&P, tu_mreq(7, "subscriptions/listen", TASKS_META, filter));
  char *want =
      tu_text("{\"method\":\"notifications/subscriptions/"
              "acknowledged\",\"params\":{\"notifications\":{"
              "\"taskIds\":[\"%s\"]},\"_meta\":{\"io.modelcontextprotocol/"
              "subscriptionId\":7}}}",
              id);
  tu_assert_json(r, want);
  free(want);
  cJSON_Delete(r);
  free(filter);
  tu_clear(&P);
  tu_clear(&B);
  mcp_result_text(tu_stash, "heard");
  mcp_call_finish(tu_stash, 0);
  ck_assert_uint_eq(P.nout, 1);
  ck_assert_uint_eq(B.nout, 0);
  want = tu_text("{\"method\":\"notifications/tasks\",\"params\":{\"taskId\":"
                 "\"%s\",\"status\":\"completed\",\"result\":{\"content\":[{"
                 "\"text\":\"heard\"}]},\"_meta\":{\"io.modelcontextprotocol/"
                 "subscriptionId\":7}}}",
                 id);
  tu_assert_msg(&P, 0, want);
  free(want);
  tu_peer_close(&B);
  free(id);
}
END_TEST

/* ===========================================================================
 * 2025-11-25
 * ======================================================================== */

static tu_peer L;

static void legacy_setup(void) {
  setup();
  tu_peer_open(&L, srv, &ALICE);
  tu_legacy_init(&L, "2025-11-25", "{\"elicitation\":{}}");
}

static void legacy_teardown(void) {
  tu_peer_close(&L);
  teardown();
}

/* A 2025-11-25 tools/call of tool asking for a task: returns the reply
 * (the first message; notifications may follow). */
static cJSON *lcall(const char *tool, const char *args, const char *task) {
  tu_clear(&L);
  char *params = tu_text("{\"name\":\"%s\",\"arguments\":%s,\"task\":%s}", tool,
                         args, task);
  ck_assert_int_eq(tu_send_free(&L, tu_req(next_id++, "tools/call", params)),
                   0);
  free(params);
  ck_assert_uint_ge(L.nout, 1);
  return tu_msg(&L, 0);
}

static cJSON *ltask(const char *method, const char *id) {
  char *params = tu_text("{\"taskId\":\"%s\"}", id);
  cJSON *r = tu_ask(&L, tu_req(next_id++, method, params));
  free(params);
  return r;
}

/* Asserts the i-th captured message is notifications/tasks/status saying
 * status for task id. */
static void assert_status_note(size_t i, const char *id, const char *status) {
  char *want = tu_text("{\"method\":\"notifications/tasks/status\","
                       "\"params\":{\"taskId\":\"%s\",\"status\":\"%s\","
                       "\"ttl\":\"<any>\",\"_meta\":\"<absent>\"}}",
                       id, status);
  tu_assert_msg(&L, i, want);
  free(want);
}

START_TEST(legacy_lifecycle) {
  cJSON *r = lcall("job", "{\"do\":\"defer\"}", "{\"ttl\":5000}");
  tu_assert_json(r, "{\"result\":{\"task\":{\"status\":\"working\",\"ttl\":"
                    "5000,\"pollInterval\":500,\"ttlMs\":\"<absent>\"},"
                    "\"resultType\":\"<absent>\"}}");
  assert_time(r, "result.task.createdAt");
  char *id = task_id(r, "result.task.taskId");
  cJSON_Delete(r);
  mcp_call *held = tu_stash;

  r = ltask("tasks/get", id);
  tu_assert_json(r, "{\"result\":{\"status\":\"working\",\"ttl\":5000,"
                    "\"task\":\"<absent>\"}}");
  cJSON_Delete(r);
  /* tasks/result waits for the end. */
  tu_clear(&L);
  char *params = tu_text("{\"taskId\":\"%s\"}", id);
  ck_assert_int_eq(tu_send_free(&L, tu_req(77, "tasks/result", params)), 0);
  ck_assert_uint_eq(L.nout, 0);
  mcp_result_text(held, "finished");
  mcp_call_finish(held, 0);
  ck_assert_uint_eq(L.nout, 2);
  char *want = tu_text("{\"id\":77,\"result\":{\"content\":[{\"text\":"
                       "\"finished\"}],\"_meta\":{\"" RELATED "\":{\"taskId\":"
                       "\"%s\"}}}}",
                       id);
  tu_assert_msg(&L, 0, want);
  free(want);
  assert_status_note(1, id, "completed");
  /* Ended: tasks/result answers at once. */
  r = tu_ask(&L, tu_req(78, "tasks/result", params));
  tu_assert_json(r, "{\"result\":{\"content\":[{\"text\":\"finished\"}]}}");
  cJSON_Delete(r);
  free(params);
  /* A task that ended cannot be cancelled. */
  r = ltask("tasks/cancel", id);
  tu_assert_error(r, -32602, "completed already");
  cJSON_Delete(r);
  r = tu_ask(&L, tu_req(1, "tasks/list", NULL));
  want = tu_text("{\"result\":{\"tasks\":[{\"taskId\":\"%s\",\"status\":"
                 "\"completed\"}],\"nextCursor\":\"<absent>\"}}",
                 id);
  tu_assert_json(r, want);
  free(want);
  cJSON_Delete(r);
  free(id);
}
END_TEST

START_TEST(legacy_waiters_are_bounded) {
  cJSON *r = lcall("job", "{\"do\":\"defer\"}", "{}");
  char *id = task_id(r, "result.task.taskId");
  cJSON_Delete(r);
  char *params = tu_text("{\"taskId\":\"%s\"}", id);
  tu_clear(&L);
  /* Eight tasks/result wait; the ninth is told the server is busy. */
  for (int i = 0; i < 9; i++)
    ck_assert_int_eq(tu_send_free(&L, tu_req(200 + i, "tasks/result", params)),
                     0);
  ck_assert_uint_eq(L.nout, 1);
  tu_assert_msg(&L, 0, "{\"id\":208,\"error\":{\"code\":-32000}}");
  tu_clear(&L);
  mcp_result_text(tu_stash, "done");
  mcp_call_finish(tu_stash, 0);
  ck_assert_uint_eq(L.nout, 9); /* eight answers and the status */
  for (int i = 0; i < 8; i++) {
    cJSON *m = tu_msg(&L, (size_t)i);
    ck_assert_str_eq(tu_jstr(m, "result.content.0.text"), "done");
    cJSON_Delete(m);
  }
  free(params);
  free(id);
}
END_TEST

START_TEST(legacy_list_pages_and_cancel) {
  mcp_server_set_page_size(srv, 1);
  cJSON *r = lcall("job", "{\"do\":\"defer\"}", "{}");
  char *a = task_id(r, "result.task.taskId");
  cJSON_Delete(r);
  mcp_call *first = tu_stash;
  r = lcall("job", "{\"do\":\"defer\"}", "{}");
  char *b = task_id(r, "result.task.taskId");
  cJSON_Delete(r);
  r = tu_ask(&L, tu_req(1, "tasks/list", NULL));
  char *want = tu_text("{\"result\":{\"tasks\":[{\"taskId\":\"%s\"}],"
                       "\"nextCursor\":\"<any>\"}}",
                       a);
  tu_assert_json(r, want);
  free(want);
  ck_assert_uint_eq(strlen(tu_jstr(r, "result.nextCursor")), 17);
  char *params =
      tu_text("{\"cursor\":\"%s\"}", tu_jstr(r, "result.nextCursor"));
  cJSON_Delete(r);
  r = tu_ask(&L, tu_req(2, "tasks/list", params));
  want = tu_text("{\"result\":{\"tasks\":[{\"taskId\":\"%s\"}],"
                 "\"nextCursor\":\"<absent>\"}}",
                 b);
  tu_assert_json(r, want);
  free(want);
  free(params);
  cJSON_Delete(r);
  /* Serials count every caller's tasks: the cursor shows none (the gap
   * between two would count another caller's tasks), and one made up
   * from a serial is refused. */
  static const char *const bad[] = {"bogus", "k1", "k2", "k0000000000000001"};
  for (size_t i = 0; i < TU_COUNT(bad); i++) {
    char *p = tu_text("{\"cursor\":\"%s\"}", bad[i]);
    r = tu_ask(&L, tu_req(3, "tasks/list", p));
    free(p);
    tu_assert_error(r, -32602, "cursor");
    cJSON_Delete(r);
  }
  /* Cancelling answers the task, cancelled; a waiting tasks/result hears
   * there is no result. */
  tu_clear(&L);
  params = tu_text("{\"taskId\":\"%s\"}", a);
  ck_assert_int_eq(tu_send_free(&L, tu_req(50, "tasks/result", params)), 0);
  free(params);
  ck_assert_uint_eq(L.nout, 0);
  tu_clear(&L);
  params = tu_text("{\"taskId\":\"%s\"}", a);
  ck_assert_int_eq(tu_send_free(&L, tu_req(51, "tasks/cancel", params)), 0);
  free(params);
  ck_assert_uint_eq(L.nout, 3);
  tu_assert_msg(&L, 0, "{\"id\":51,\"result\":{\"status\":\"cancelled\"}}");
  tu_assert_msg(&L, 1, "{\"id\":50,\"error\":{\"code\":-32602}}");
  assert_status_note(2, a, "cancelled");
  ck_assert(mcp_call_cancelled(first));
  mcp_call_finish(first, 0);
  mcp_call_finish(tu_stash, 0);
  free(a);
  free(b);
}
END_TEST

/* The one cursor codec tags each list: a page of tools/list does not go
 * on in tasks/list, nor a page of tasks/list in tools/list. */
START_TEST(legacy_list_cursors_stay_in_their_list) {
  mcp_server_set_page_size(srv, 1);
  cJSON *r = lcall("job", "{\"do\":\"defer\"}", "{}");
  cJSON_Delete(r);
  mcp_call *first = tu_stash;
  r = lcall("job", "{\"do\":\"defer\"}", "{}");
  cJSON_Delete(r);
  r = tu_ask(&L, tu_req(1, "tools/list", NULL));
  char *tools = tu_text("{\"cursor\":\"%s\"}", tu_jstr(r, "result.nextCursor"));
  cJSON_Delete(r);
  r = tu_ask(&L, tu_req(2, "tasks/list", NULL));
  char *tasks = tu_text("{\"cursor\":\"%s\"}", tu_jstr(r, "result.nextCursor"));
  cJSON_Delete(r);
  /* Each goes on in its own list... */
  r = tu_ask(&L, tu_req(3, "tools/list", tools));
  tu_assert_json(r, "{\"result\":{\"tools\":[{\"name\":\"<any>\"}]}}");
  cJSON_Delete(r);
  r = tu_ask(&L, tu_req(4, "tasks/list", tasks));
  tu_assert_json(r, "{\"result\":{\"tasks\":[{\"taskId\":\"<any>\"}]}}");
  cJSON_Delete(r);
  /* ...and is refused by the other. */
  r = tu_ask(&L, tu_req(5, "tasks/list", tools));
  tu_assert_error(r, -32602, "cursor");
  cJSON_Delete(r);
  r = tu_ask(&L, tu_req(6, "tools/list", tasks));
  tu_assert_error(r, -32602, "cursor");
  cJSON_Delete(r);
  free(tools);
  free(tasks);
  mcp_call_finish(first, 0);
  mcp_call_finish(tu_stash, 0);
}
END_TEST

START_TEST(legacy_input_requests_carry_the_task) {
  cJSON *r = lcall("job", "{\"do\":\"ask\"}", "{}");
  char *id = task_id(r, "result.task.taskId");
  cJSON_Delete(r);
  /* After the reply: the status, then the request. */
  ck_assert_uint_eq(L.nout, 3);
  char *want =
      tu_text("{\"method\":\"elicitation/create\",\"id\":\"<any>\","
              "\"params\":{\"message\":\"Go on?\",\"_meta\":{\"" RELATED
              "\":{\"taskId\":\"%s\"}}}}",
              id);
  tu_assert_msg(&L, 2, want);
  free(want);
  assert_status_note(1, id, "input_required");
  cJSON *req = tu_msg(&L, 2);
  int rid = tu_jget(req, "id")->valueint;
  cJSON_Delete(req);
  r = ltask("tasks/get", id);
  tu_assert_json(r, "{\"result\":{\"status\":\"input_required\","
                    "\"inputRequests\":\"<absent>\"}}");
  cJSON_Delete(r);
  tu_clear(&L);
  char *answer =
      tu_text("{\"jsonrpc\":\"2.0\",\"id\":%d,\"result\":%s}", rid, YES);
  ck_assert_int_eq(tu_send_free(&L, answer), 0);
  assert_status_note(0, id, "working");
  assert_status_note(1, id, "completed");
  r = ltask("tasks/result", id);
  tu_assert_json(r, "{\"result\":{\"content\":[{\"text\":\"answered\"}]}}");
  cJSON_Delete(r);
  free(id);
}
END_TEST

/* A tasks/result sent with a stream of its own (a sink), as Streamable
 * HTTP sends each POST; what reaches that stream is kept in k. */
static void result_on_stream(const char *id, int rid, tu_sink *k) {
  const mcp_sink sink = {.send = tu_sink_send, .user_data = k};
  char *params = tu_text("{\"taskId\":\"%s\"}", id);
  char *msg = tu_req(rid, "tasks/result", params);
  ck_assert_int_eq(mcp_session_receive_to(L.session, msg, strlen(msg), &sink),
                   0);
  free(msg);
  free(params);
}

START_TEST(legacy_tasks_result_carries_input_requests) {
  /* The task asks while no tasks/result waits: its request goes to the
   * session's own channel, a GET stream that may well not be open. */
  cJSON *r = lcall("job", "{\"do\":\"again\"}", "{}");
  char *id = task_id(r, "result.task.taskId");
  cJSON_Delete(r);
  ck_assert_uint_eq(L.nout, 3);
  cJSON *sent = tu_msg(&L, 2);
  int rid = tu_jget(sent, "id")->valueint;
  cJSON_Delete(sent);
  /* The client sees input_required and calls tasks/result: its own stream
   * carries the request, with the task and the same id, before the
   * result. */
  tu_sink k = {0};
  tu_clear(&L);
  result_on_stream(id, 90, &k);
  ck_assert_uint_eq(k.n, 1);
  cJSON *m = cJSON_Parse(k.msgs[0]);
  char *want =
      tu_text("{\"method\":\"elicitation/create\",\"id\":%d,\"params\":{"
              "\"message\":\"Go on?\",\"_meta\":{\"" RELATED
              "\":{\"taskId\":\"%s\"}}}}",
              rid, id);
  tu_assert_json(m, want);
  free(want);
  cJSON_Delete(m);
  ck_assert_uint_eq(L.nout, 0); /* nothing more on the session's channel */
  /* A second tasks/result (the first stream gone, say) carries it too. */
  tu_sink k2 = {0};
  result_on_stream(id, 91, &k2);
  ck_assert_uint_eq(k2.n, 1);
  ck_assert_ptr_nonnull(strstr(k2.msgs[0], "elicitation/create"));
  /* The answer comes back as any: the next round asks again, on the
   * stream of the tasks/result that waits (the latest), then the task
   * completes and both waiting requests get its result. */
  ck_assert_int_eq(
      tu_send_free(&L, tu_text("{\"jsonrpc\":\"2.0\",\"id\":%d,\"result\":%s}",
                               rid, YES)),
      0);
  ck_assert_uint_eq(k2.n, 2);
  m = cJSON_Parse(k2.msgs[1]);
  tu_assert_json(m, "{\"method\":\"elicitation/create\",\"id\":\"<any>\"}");
  rid = tu_jget(m, "id")->valueint;
  cJSON_Delete(m);
  ck_assert_int_eq(
      tu_send_free(&L, tu_text("{\"jsonrpc\":\"2.0\",\"id\":%d,\"result\":%s}",
                               rid, YES)),
      0);
  ck_assert_uint_eq(k.n, 2);
  ck_assert_uint_eq(k2.n, 3);
  want = tu_text("{\"id\":90,\"result\":{\"content\":[{\"text\":\"answered\"}],"
                 "\"_meta\":{\"" RELATED "\":{\"taskId\":\"%s\"}}}}",
                 id);
  m = cJSON_Parse(k.msgs[1]);
  tu_assert_json(m, want);
  cJSON_Delete(m);
  free(want);
  ck_assert_ptr_nonnull(strstr(k2.msgs[2], "\"id\":91"));
  ck_assert_int_eq(g_seen_ok, 2);
  /* A tasks/result without a stream of its own shares the session's
   * channel, which had the requests already: nothing is sent twice. */
  r = lcall("job", "{\"do\":\"ask\"}", "{}");
  char *other = task_id(r, "result.task.taskId");
  cJSON_Delete(r);
  tu_clear(&L);
  char *params = tu_text("{\"taskId\":\"%s\"}", other);
  ck_assert_int_eq(tu_send_free(&L, tu_req(92, "tasks/result", params)), 0);
  free(params);
  ck_assert_uint_eq(L.nout, 0);
  tu_sink_free(&k, 0, NULL);
  tu_sink_free(&k2, 0, NULL);
  free(other);
  free(id);
}
END_TEST

START_TEST(legacy_tool_error_fails_and_progress_is_related) {
  tu_clear(&L);
  ck_assert_int_eq(
      tu_send_free(&L, tu_text("{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":"
                               "\"tools/call\",\"params\":{\"name\":\"job\","
                               "\"arguments\":{\"do\":\"progress\"},\"task\":"
                               "{},\"_meta\":{\"progressToken\":\"p\"}}}")),
      0);
  ck_assert_uint_eq(L.nout, 3);
  cJSON *r = tu_msg(&L, 0);
  char *id = task_id(r, "result.task.taskId");
  cJSON_Delete(r);
  char *want = tu_text("{\"method\":\"notifications/progress\",\"params\":{"
                       "\"progressToken\":\"p\",\"progress\":1,\"_meta\":{"
                       "\"" RELATED "\":{\"taskId\":\"%s\"}}}}",
                       id);
  tu_assert_msg(&L, 1, want);
  free(want);
  /* A tool result whose isError is true is a failed task in 2025-11-25. */
  assert_status_note(2, id, "failed");
  r = ltask("tasks/result", id);
  tu_assert_json(r, "{\"result\":{\"isError\":true}}");
  cJSON_Delete(r);
  free(id);
}
END_TEST

START_TEST(legacy_refusals) {
  cJSON *r = tu_ask(&L, tu_req(1, "tools/call", "{\"name\":\"must\"}"));
  tu_assert_error(r, -32601, "only as a task");
  cJSON_Delete(r);
  r = lcall("plain", "{}", "{}");
  tu_assert_error(r, -32601, "does not run as a task");
  cJSON_Delete(r);
  r = lcall("job", "{}", "5");
  tu_assert_error(r, -32602, "task must be an object");
  cJSON_Delete(r);
  r = lcall("job", "{}", "{\"ttl\":-1}");
  tu_assert_error(r, -32602, "ttl");
  cJSON_Delete(r);
  /* A requested TTL is kept within bounds. */
  r = lcall("must", "{}", "{\"ttl\":10}");
  tu_assert_json(r, "{\"result\":{\"task\":{\"ttl\":1000}}}");
  cJSON_Delete(r);
  r = lcall("must", "{}", "{\"ttl\":1000000000000}");
  tu_assert_json(r, "{\"result\":{\"task\":{\"ttl\":86400000}}}");
  cJSON_Delete(r);
  r = ltask("tasks/get", "unknown");
  tu_assert_error(r, -32602, "Task not found");
  cJSON_Delete(r);
  /* tasks/update is 2026-07-28's. */
  r = ltask("tasks/update", "unknown");
  tu_assert_error(r, -32601, NULL);
  cJSON_Delete(r);
  /* Before 2025-11-25 there are no tasks: the param is ignored. */
  tu_peer old;
  tu_peer_open(&old, srv, &ALICE);
  tu_legacy_init(&old, "2025-06-18", "{}");
  r = tu_ask(&old, tu_req(1, "tools/call",
                          "{\"name\":\"job\",\"arguments\":{},\"task\":{}}"));
  tu_assert_json(r, "{\"result\":{\"task\":\"<absent>\",\"content\":[{"
                    "\"text\":\"done now\"}]}}");
  cJSON_Delete(r);
  r = tu_ask(&old, tu_req(2, "tasks/get", "{\"taskId\":\"x\"}"));
  tu_assert_error(r, -32601, NULL);
  cJSON_Delete(r);
  tu_peer_close(&old);
}
END_TEST

START_TEST(a_task_outlives_its_session) {
  cJSON *r = lcall("job", "{\"do\":\"defer\"}", "{}");
  char *id = task_id(r, "result.task.taskId");
  cJSON_Delete(r);
  tu_peer_close(&L);
  ck_assert(!mcp_call_cancelled(tu_stash));
  mcp_result_text(tu_stash, "kept");
  mcp_call_finish(tu_stash, 0);
  tu_peer_open(&L, srv, &ALICE);
  tu_legacy_init(&L, "2025-11-25", "{}");
  r = ltask("tasks/result", id);
  tu_assert_json(r, "{\"result\":{\"content\":[{\"text\":\"kept\"}]}}");
  cJSON_Delete(r);
  free(id);
}
END_TEST

/* The call of a task lives in the record's own home: once the session that
 * made it is freed, the call still sees its caller and the client's
 * capabilities (the record's copies), and its result is the task's. */
START_TEST(a_task_call_keeps_its_caller_after_its_session) {
  cJSON *r = lcall("job", "{\"do\":\"defer\"}", "{}");
  char *id = task_id(r, "result.task.taskId");
  cJSON_Delete(r);
  mcp_call *held = tu_stash;
  tu_peer_close(&L);
  const mcp_principal *p = mcp_call_principal(held);
  ck_assert_ptr_nonnull(p);
  ck_assert_str_eq(p->subject, "alice");
  tu_assert_exact(mcp_call_client_capabilities(held), "{\"elicitation\":{}}");
  ck_assert(!mcp_call_cancelled(held));
  ck_assert_int_eq(mcp_call_progress(held, 1, 2, "nobody hears it"), 0);
  mcp_result_text(held, "kept");
  ck_assert_int_eq(mcp_call_finish(held, 0), 0);
  tu_peer_open(&L, srv, &ALICE);
  tu_legacy_init(&L, "2025-11-25", "{}");
  r = ltask("tasks/get", id);
  tu_assert_json(r, "{\"result\":{\"status\":\"completed\"}}");
  cJSON_Delete(r);
  free(id);
}
END_TEST

/* tasks/cancel of a task whose session is gone, from another session of
 * the same caller: the call, which lives on in the task, is cancelled. */
START_TEST(a_task_is_cancelled_after_its_session) {
  cJSON *r = lcall("job", "{\"do\":\"defer\"}", "{}");
  char *id = task_id(r, "result.task.taskId");
  cJSON_Delete(r);
  mcp_call *held = tu_stash;
  tu_peer_close(&L);
  ck_assert(!mcp_call_cancelled(held));
  tu_peer_open(&L, srv, &ALICE);
  tu_legacy_init(&L, "2025-11-25", "{}");
  r = ltask("tasks/cancel", id);
  tu_assert_json(r, "{\"result\":{\"status\":\"cancelled\"}}");
  cJSON_Delete(r);
  ck_assert(mcp_call_cancelled(held));
  ck_assert_str_eq(mcp_call_principal(held)->subject, "alice");
  mcp_result_text(held, "too late");
  ck_assert_int_eq(mcp_call_finish(held, 0), 0);
  r = ltask("tasks/get", id);
  tu_assert_json(r, "{\"result\":{\"status\":\"cancelled\"}}");
  cJSON_Delete(r);
  free(id);
}
END_TEST

/* A 2025-11-25 task waiting for input when its session ends: the answers
 * could only come on that session, so it waits (parked, no thread) until
 * another session of its caller cancels it, which ends its call. */
START_TEST(a_legacy_task_asking_outlives_its_session) {
  cJSON *r = lcall("job", "{\"do\":\"ask\"}", "{}");
  char *id = task_id(r, "result.task.taskId");
  cJSON_Delete(r);
  tu_peer_close(&L);
  tu_peer_open(&L, srv, &ALICE);
  tu_legacy_init(&L, "2025-11-25", "{\"elicitation\":{}}");
  r = ltask("tasks/get", id);
  tu_assert_json(r, "{\"result\":{\"status\":\"input_required\"}}");
  cJSON_Delete(r);
  /* An answer on this session is to no request of it. */
  ck_assert_int_eq(
      tu_send_free(
          &L, tu_text("{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":%s}", YES)),
      0);
  r = ltask("tasks/get", id);
  tu_assert_json(r, "{\"result\":{\"status\":\"input_required\"}}");
  cJSON_Delete(r);
  ck_assert_int_eq(g_seen_ok, 0);
  r = ltask("tasks/cancel", id);
  tu_assert_json(r, "{\"result\":{\"status\":\"cancelled\"}}");
  cJSON_Delete(r);
  r = ltask("tasks/get", id);
  tu_assert_json(r, "{\"result\":{\"status\":\"cancelled\"}}");
  cJSON_Delete(r);
  free(id);
}
END_TEST

/* ===========================================================================
 * Limits and the TTL
 * ======================================================================== */

/* Starts two tasks of alice's through P whose calls run on (one, the
 * first, and two); returns the first's id (free with free). */
static char *two_running(mcp_call **one, mcp_call **two) {
  cJSON *r = mcall("job", "{\"do\":\"defer\"}");
  char *first = task_id(r, "result.taskId");
  cJSON_Delete(r);
  *one = tu_stash;
  cJSON_Delete(mcall("job", "{\"do\":\"defer\"}"));
  *two = tu_stash;
  return first;
}

START_TEST(limits_refuse_and_make_room) {
  ck_assert_int_eq(mcp_server_set_task_limits(NULL, NULL), MCP_EINVAL);
  ck_assert_int_eq(mcp_server_set_task_limits(
                       srv, &(mcp_task_limits){.ttl_ms = 10, .max_ttl_ms = 5}),
                   MCP_EINVAL);
  ck_assert_int_eq(
      mcp_server_set_task_limits(
          srv, &(mcp_task_limits){.max_per_caller = 2, .max_total = 3}),
      0);
  mcp_call *one, *two;
  char *first = two_running(&one, &two);
  cJSON *r;
  /* Both still run: a third is refused before its handler runs. */
  r = mcall("job", "{\"do\":\"now\"}");
  tu_assert_error(r, -32000, "too many tasks");
  cJSON_Delete(r);
  /* Another caller has room of its own, up to the server's total. */
  static const mcp_principal BOB = {.subject = "bob"};
  tu_peer B;
  tu_peer_open(&B, srv, &BOB);
  r = tu_ask(&B,
             tu_mcall(1, "job", "{\"do\":\"defer\"}", TASKS_META, NULL, NULL));
  tu_assert_json(r, "{\"result\":{\"resultType\":\"task\"}}");
  cJSON_Delete(r);
  mcp_call *three = tu_stash;
  r = tu_ask(&B,
             tu_mcall(2, "job", "{\"do\":\"now\"}", TASKS_META, NULL, NULL));
  tu_assert_error(r, -32000, NULL);
  cJSON_Delete(r);
  /* Once one has finished, the oldest finished one makes room. */
  mcp_call_finish(one, 0);
  r = mcall("job", "{\"do\":\"now\"}");
  tu_assert_json(r, "{\"result\":{\"content\":[{\"text\":\"done now\"}]}}");
  cJSON_Delete(r);
  r = mtask("tasks/get", first, NULL);
  tu_assert_error(r, -32602, "Task not found");
  cJSON_Delete(r);
  mcp_call_finish(two, 0);
  mcp_call_finish(three, 0);
  tu_peer_close(&B);
  free(first);
}
END_TEST

/* {"do":what,"pad":"ppp..."} with size bytes of padding (free with free). */
static char *padded(const char *what, size_t size) {
  char *pad = malloc(size + 1);
  ck_assert_ptr_nonnull(pad);
  memset(pad, 'p', size);
  pad[size] = '\0';
  char *args = tu_text("{\"do\":\"%s\",\"pad\":\"%s\"}", what, pad);
  free(pad);
  return args;
}

/* A 2026-07-28 tools/call of job with args (freed) on peer p. */
static cJSON *pcall(tu_peer *p, char *args) {
  cJSON *r = tu_ask(
      p, tu_mcall(next_id++, "job", args, TASKS_ELICIT_META, NULL, NULL));
  free(args);
  return r;
}

START_TEST(bytes_budget_refuses_and_makes_room) {
  ck_assert_int_eq(
      mcp_server_set_task_limits(
          srv, &(mcp_task_limits){.max_bytes_per_caller = 256 * 1024}),
      0);
  /* Two running tasks with 100 KiB of arguments each fit; a third does
   * not, and no finished task can make room. */
  cJSON *r = pcall(&P, padded("defer", 100 * 1024));
  char *first = task_id(r, "result.taskId");
  cJSON_Delete(r);
  mcp_call *one = tu_stash;
  cJSON_Delete(pcall(&P, padded("defer", 100 * 1024)));
  mcp_call *two = tu_stash;
  r = pcall(&P, padded("defer", 100 * 1024));
  tu_assert_error(r, -32000, "per-caller task memory budget (262144 bytes)");
  cJSON_Delete(r);
  /* Once the first has finished, its arguments are gone with its call: a
   * third fits beside it, and the first is still there to read. */
  mcp_result_text(one, "small");
  mcp_call_finish(one, 0);
  r = pcall(&P, padded("defer", 100 * 1024));
  tu_assert_json(r, "{\"result\":{\"resultType\":\"task\"}}");
  cJSON_Delete(r);
  mcp_call *three = tu_stash;
  r = mtask("tasks/get", first, NULL);
  tu_assert_json(r, "{\"result\":{\"status\":\"completed\"}}");
  cJSON_Delete(r);
  /* The second ends with 100 KiB of result: a fourth then needs room,
   * which the finished ones make, the oldest first, and are forgotten. */
  ck_assert_int_eq(result_of_size(two, 100 * 1024), 0);
  mcp_call_finish(two, 0);
  r = pcall(&P, padded("defer", 100 * 1024));
  tu_assert_json(r, "{\"result\":{\"resultType\":\"task\"}}");
  cJSON_Delete(r);
  r = mtask("tasks/get", first, NULL);
  tu_assert_error(r, -32602, "Task not found");
  cJSON_Delete(r);
  /* Another caller has a budget of its own. */
  static const mcp_principal BOB = {.subject = "bob"};
  tu_peer B;
  tu_peer_open(&B, srv, &BOB);
  r = pcall(&B, padded("now", 100 * 1024));
  tu_assert_json(r, "{\"result\":{\"content\":[{\"text\":\"done now\"}]}}");
  cJSON_Delete(r);
  tu_peer_close(&B);
  mcp_call_finish(three, 0);
  mcp_call_finish(tu_stash, 0);
  free(first);
}
END_TEST

START_TEST(a_result_over_budget_fails_its_task) {
  ck_assert_int_eq(
      mcp_server_set_task_limits(
          srv, &(mcp_task_limits){.max_bytes_per_caller = 160 * 1024}),
      0);
  /* 200 KiB of result cannot be kept: the task fails, saying why. */
  cJSON *r = mcall("job", "{\"do\":\"big\",\"n\":204800}");
  char *id = task_id(r, "result.taskId");
  cJSON_Delete(r);
  r = mtask("tasks/get", id, NULL);
  tu_assert_json(r, "{\"result\":{\"status\":\"failed\",\"result\":"
                    "\"<absent>\",\"error\":{\"code\":-32000}}}");
  ck_assert_ptr_nonnull(strstr(tu_jstr(r, "result.error.message"),
                               "would pass the per-caller task memory "
                               "budget (163840 bytes)"));
  ck_assert_ptr_nonnull(
      strstr(tu_jstr(r, "result.statusMessage"), "memory budget"));
  cJSON_Delete(r);
  free(id);
  /* 60 KiB fits; a second result of 100 KiB then needs the first's room,
   * which it takes, the first finished task being forgotten. */
  r = mcall("job", "{\"do\":\"big\",\"n\":61440}");
  char *small = task_id(r, "result.taskId");
  cJSON_Delete(r);
  r = mtask("tasks/get", small, NULL);
  tu_assert_json(r, "{\"result\":{\"status\":\"completed\"}}");
  cJSON_Delete(r);
  r = mcall("job", "{\"do\":\"big\",\"n\":102400}");
  char *large = task_id(r, "result.taskId");
  cJSON_Delete(r);
  r = mtask("tasks/get", large, NULL);
  tu_assert_json(r, "{\"result\":{\"status\":\"completed\"}}");
  cJSON_Delete(r);
  r = mtask("tasks/get", small, NULL);
  tu_assert_error(r, -32602, "Task not found");
  cJSON_Delete(r);
  free(small);
  free(large);
}
END_TEST

START_TEST(input_over_budget_fails_or_is_refused) {
  ck_assert_int_eq(
      mcp_server_set_task_limits(
          srv, &(mcp_task_limits){.max_bytes_per_caller = 64 * 1024}),
      0);
  /* Input requests the budget has no room for fail their task. */
  cJSON *r = mcall("job", "{\"do\":\"askbig\",\"n\":102400}");
  char *id = task_id(r, "result.taskId");
  cJSON_Delete(r);
  r = mtask("tasks/get", id, NULL);
  tu_assert_json(r, "{\"result\":{\"status\":\"failed\",\"error\":{"
                    "\"code\":-32000}}}");
  ck_assert_ptr_nonnull(
      strstr(tu_jstr(r, "result.statusMessage"), "input requests ("));
  cJSON_Delete(r);
  free(id);
  /* Answers it has no room for are refused, and change nothing. */
  r = mcall("job", "{\"do\":\"ask\"}");
  id = task_id(r, "result.taskId");
  cJSON_Delete(r);
  char *pad = malloc(100 * 1024 + 1);
  ck_assert_ptr_nonnull(pad);
  memset(pad, 'a', 100 * 1024);
  pad[100 * 1024] = '\0';
  char *more = tu_text("\"inputResponses\":{\"ok\":{\"action\":\"accept\","
                       "\"content\":{\"ok\":true,\"pad\":\"%s\"}}}",
                       pad);
  free(pad);
  r = mtask("tasks/update", id, more);
  free(more);
  tu_assert_error(r, -32000, "answers (");
  cJSON_Delete(r);
  r = mtask("tasks/get", id, NULL);
  tu_assert_json(r, "{\"result\":{\"status\":\"input_required\"}}");
  cJSON_Delete(r);
  more = tu_text("\"inputResponses\":{\"ok\":%s}", YES);
  cJSON_Delete(mtask("tasks/update", id, more));
  free(more);
  r = mtask("tasks/get", id, NULL);
  tu_assert_json(r, "{\"result\":{\"status\":\"completed\"}}");
  cJSON_Delete(r);
  free(id);
}
END_TEST

START_TEST(count_refusals_name_their_limit) {
  ck_assert_int_eq(
      mcp_server_set_task_limits(
          srv, &(mcp_task_limits){.max_per_caller = 4, .max_total = 1}),
      0);
  cJSON_Delete(mcall("job", "{\"do\":\"defer\"}"));
  mcp_call *held = tu_stash;
  static const mcp_principal BOB = {.subject = "bob"};
  tu_peer B;
  tu_peer_open(&B, srv, &BOB);
  cJSON *r = tu_ask(
      &B, tu_mcall(1, "job", "{\"do\":\"defer\"}", TASKS_META, NULL, NULL));
  /* The server's limit is no caller's. */
  tu_assert_error(r, -32000, "at most 1 on the server");
  ck_assert_ptr_null(strstr(tu_jstr(r, "error.message"), "per caller"));
  cJSON_Delete(r);
  tu_peer_close(&B);
  mcp_call_finish(held, 0);
}
END_TEST

START_TEST(anonymous_sessions_have_budgets_of_their_own) {
  /* An anonymous session may hold an eighth of a caller's tasks (2 of
   * 16); anonymous callers together, a caller's (16). */
  ck_assert_int_eq(
      mcp_server_set_task_limits(srv, &(mcp_task_limits){.max_per_caller = 16}),
      0);
  tu_peer anon[9];
  mcp_call *held[20];
  size_t nheld = 0;
  for (int i = 0; i < 9; i++) {
    tu_peer_open(&anon[i], srv, NULL);
    for (int j = 0; j < 3; j++) {
      cJSON *r = pcall(&anon[i], tu_text("{\"do\":\"defer\"}"));
      if (i < 8 && j < 2) {
        tu_assert_json(r, "{\"result\":{\"resultType\":\"task\"}}");
        held[nheld++] = tu_stash;
      } else if (i < 8) {
        tu_assert_error(r, -32000, "at most 2 per anonymous session");
      } else {
        tu_assert_error(r, -32000, "for anonymous callers together");
      }
      cJSON_Delete(r);
    }
  }
  /* A caller who is named is not crowded out. */
  cJSON *r = mcall("job", "{\"do\":\"defer\"}");
  tu_assert_json(r, "{\"result\":{\"resultType\":\"task\"}}");
  cJSON_Delete(r);
  held[nheld++] = tu_stash;
  /* Bytes likewise: an anonymous session's budget is its own. */
  ck_assert_int_eq(
      mcp_server_set_task_limits(
          srv, &(mcp_task_limits){.max_bytes_anonymous = 64 * 1024}),
      0);
  tu_peer other;
  tu_peer_open(&other, srv, NULL);
  r = pcall(&other, padded("now", 100 * 1024));
  tu_assert_error(r, -32000, "per-anonymous-session task memory budget");
  cJSON_Delete(r);
  tu_peer_close(&other);
  for (size_t i = 0; i < nheld; i++)
    mcp_call_finish(held[i], 0);
  for (int i = 0; i < 9; i++)
    tu_peer_close(&anon[i]);
}
END_TEST

START_TEST(a_refused_retry_frees_its_room) {
  ck_assert_int_eq(
      mcp_server_set_task_limits(srv, &(mcp_task_limits){.max_per_caller = 1}),
      0);
  /* A retry whose requestState is refused never runs: its record, made
   * before the state was checked, holds no room afterwards. */
  for (int i = 0; i < 3; i++) {
    cJSON *r = tu_ask(&P, tu_mcall(next_id++, "job", "{\"do\":\"ask\"}",
                                   TASKS_ELICIT_META, "\"forged\"", NULL));
    tu_assert_error(r, -32602, NULL);
    cJSON_Delete(r);
  }
  cJSON *r = mcall("job", "{\"do\":\"defer\"}");
  tu_assert_json(r, "{\"result\":{\"resultType\":\"task\"}}");
  cJSON_Delete(r);
  mcp_call_finish(tu_stash, 0);
}
END_TEST

static bool g_deny_pad; /* the authorizer refuses arguments with a pad */

static int authorize_pad(const mcp_principal *principal, const char *tool,
                         const cJSON *arguments, char *reason,
                         size_t reason_size, void *user_data) {
  (void)principal;
  (void)tool;
  (void)user_data;
  if (!g_deny_pad || !cJSON_GetObjectItemCaseSensitive(arguments, "pad"))
    return 0;
  snprintf(reason, reason_size, "no pads now");
  return 1;
}

START_TEST(an_authorizer_sees_the_arguments_kept) {
  /* With an authorizer, a task keeps its arguments for the tasks methods'
   * admission, after its call has ended too. */
  mcp_server_set_authorizer(srv, authorize_pad, NULL);
  g_deny_pad = false;
  cJSON *r = pcall(&P, padded("now", 10));
  tu_assert_json(r, "{\"result\":{\"content\":[{\"text\":\"done now\"}]}}");
  cJSON_Delete(r);
  r = pcall(&P, padded("task", 10));
  char *id = task_id(r, "result.taskId");
  cJSON_Delete(r);
  r = mtask("tasks/get", id, NULL);
  tu_assert_json(r, "{\"result\":{\"status\":\"completed\"}}");
  cJSON_Delete(r);
  g_deny_pad = true;
  r = mtask("tasks/get", id, NULL);
  ck_assert_ptr_nonnull(tu_get(r, "error"));
  char *text = cJSON_PrintUnformatted(r);
  ck_assert_ptr_nonnull(strstr(text, "no pads now"));
  free(text);
  cJSON_Delete(r);
  g_deny_pad = false;
  free(id);
}
END_TEST

START_TEST(ttl_expiry_cancels_and_forgets) {
  ck_assert_int_eq(mcp_server_next_expiry_ms(srv), -1);
  ck_assert_int_eq(
      mcp_server_set_task_limits(srv, &(mcp_task_limits){.ttl_ms = 30}), 0);
  cJSON *r = mcall("job", "{\"do\":\"defer\"}");
  tu_assert_json(r, "{\"result\":{\"ttlMs\":30}}");
  char *id = task_id(r, "result.taskId");
  cJSON_Delete(r);
  long due = mcp_server_next_expiry_ms(srv);
  ck_assert(due >= 0 && due <= 30);
  ck_assert_int_eq(mcp_server_expire(srv), 0); /* not yet */
  nanosleep(&(struct timespec){.tv_nsec = 40 * 1000 * 1000}, NULL);
  ck_assert_int_eq(mcp_server_expire(srv), 1);
  ck_assert_int_eq(mcp_server_next_expiry_ms(srv), -1);
  ck_assert(mcp_call_cancelled(tu_stash));
  r = mtask("tasks/get", id, NULL);
  tu_assert_error(r, -32602, "Task not found");
  cJSON_Delete(r);
  mcp_call_finish(tu_stash, 0);
  free(id);
}
END_TEST

START_TEST(status_message_and_misuse) {
  cJSON *r = mcall("job", "{\"do\":\"status\"}");
  tu_assert_json(r, "{\"result\":{\"statusMessage\":\"halfway there\"}}");
  char *id = task_id(r, "result.taskId");
  cJSON_Delete(r);
  ck_assert_int_eq(mcp_call_set_status(tu_stash, NULL), MCP_EINVAL);
  ck_assert_int_eq(mcp_call_set_status(tu_stash, "\xff"), MCP_EINVAL);
  mcp_call_finish(tu_stash, 0);
  r = mtask("tasks/get", id, NULL);
  tu_assert_json(r, "{\"result\":{\"statusMessage\":\"halfway there\"}}");
  cJSON_Delete(r);
  free(id);
  ck_assert_int_eq(mcp_call_start_task(NULL), MCP_EINVAL);
  ck_assert_ptr_null(mcp_call_task_id(NULL));
  /* A tool without task support cannot become one (h_plain checks). */
  r = tu_ask(&P, tu_mcall(1, "plain", NULL, TASKS_META, NULL, NULL));
  tu_assert_json(r, "{\"result\":{\"content\":[{\"text\":\"plain\"}]}}");
  cJSON_Delete(r);
}
END_TEST

/* ===========================================================================
 * Threads: executors, and finishes racing reads and cancels
 * ======================================================================== */

static mcp_call *queued;

static int queue_submit(mcp_call *call, void *user_data) {
  (void)user_data;
  queued = call;
  return 0;
}

START_TEST(handed_to_an_executor_it_is_a_task) {
  static const mcp_executor ex = {.submit = queue_submit};
  ck_assert_int_eq(mcp_server_set_executor(srv, &ex), 0);
  /* Run elsewhere, the answer no longer comes back to the request: the
   * client gets the task at once. */
  cJSON *r = mcall("job", "{\"do\":\"now\"}");
  tu_assert_json(r, "{\"result\":{\"resultType\":\"task\",\"status\":"
                    "\"working\"}}");
  char *id = task_id(r, "result.taskId");
  cJSON_Delete(r);
  ck_assert_ptr_nonnull(queued);
  ck_assert_int_eq(mcp_call_execute(queued, "test pool"), 0);
  r = mtask("tasks/get", id, NULL);
  tu_assert_json(r, "{\"result\":{\"status\":\"completed\",\"result\":{"
                    "\"content\":[{\"text\":\"done now\"}]}}}");
  cJSON_Delete(r);
  free(id);
  /* Without the extension it is an ordinary call, answered when run. */
  tu_clear(&P);
  ck_assert_int_eq(tu_send_free(&P, tu_mcall(1, "job", "{\"do\":\"now\"}",
                                             TU_META_NONE, NULL, NULL)),
                   0);
  ck_assert_uint_eq(P.nout, 0);
  ck_assert_int_eq(mcp_call_execute(queued, NULL), 0);
  tu_assert_msg(&P, 0,
                "{\"id\":1,\"result\":{\"content\":[{\"text\":"
                "\"done now\"}]}}");
}
END_TEST

START_TEST(a_task_call_outlives_its_server) {
  /* The server is freed while a task's call still runs (its runner holds
   * the server); the call's end then frees what is left, the server last. */
  cJSON *r = mcall("job", "{\"do\":\"defer\"}");
  cJSON_Delete(r);
  mcp_call *held = tu_stash;
  tu_peer_close(&P);
  mcp_server_free(srv);
  ck_assert(mcp_call_cancelled(held)); /* forgotten with its server */
  mcp_result_text(held, "nobody hears");
  ck_assert_int_eq(mcp_call_finish(held, 0), 0);
  /* teardown frees again: a fresh pair for it */
  static const mcp_server_info info = {.name = "again", .version = "1"};
  ck_assert_int_eq(mcp_server_new(&info, &srv), 0);
  tu_peer_open(&P, srv, &ALICE);
}
END_TEST

static void *finish_all(void *arg) {
  (void)arg;
  for (int i = 0; i < TU_MAX_DEFERRED; i++) {
    mcp_result_text(tu_deferred[i], "raced");
    mcp_call_finish(tu_deferred[i], 0);
  }
  return NULL;
}

START_TEST(finishes_race_reads_and_cancels) {
  char *ids[TU_MAX_DEFERRED];
  for (int i = 0; i < TU_MAX_DEFERRED; i++) {
    cJSON *r = mcall("job", "{\"do\":\"defer\"}");
    ids[i] = task_id(r, "result.taskId");
    cJSON_Delete(r);
  }
  pthread_t t;
  ck_assert_int_eq(pthread_create(&t, NULL, finish_all, NULL), 0);
  /* Each task ends completed or cancelled, whichever came first, and is
   * read whole meanwhile. */
  for (int i = 0; i < TU_MAX_DEFERRED; i++) {
    cJSON_Delete(mtask(i % 2 ? "tasks/cancel" : "tasks/get", ids[i], NULL));
    cJSON_Delete(mtask("tasks/get", ids[i], NULL));
  }
  pthread_join(t, NULL);
  for (int i = 0; i < TU_MAX_DEFERRED; i++) {
    cJSON *r = mtask("tasks/get", ids[i], NULL);
    const char *st = tu_jstr(r, "result.status");
    ck_assert_msg(st && (strcmp(st, "completed") == 0 ||
                         (i % 2 && strcmp(st, "cancelled") == 0)),
                  "task %d ended %s", i, st ? st : "(none)");
    cJSON_Delete(r);
    free(ids[i]);
  }
}
END_TEST

/* ---- a call becoming a task while another thread asks about it ----------
 * The handler hands its call to a watcher thread, which asks
 * mcp_call_cancelled and mcp_call_task_id (documented any-thread) without
 * pause, and meanwhile makes the call a task, which lifts its deadline:
 * the watcher has asked before the change, and asks on after it until it
 * sees the task id. Nothing orders the two but the engine's own atomics
 * and locks: under ThreadSanitizer an unsynchronized field is a reported
 * race. */

static pthread_mutex_t race_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t race_cond = PTHREAD_COND_INITIALIZER;
static mcp_call *race_call; /* handed to the watcher, under race_lock */
static int race_phase;      /* 1 watching, 3 stopped, -1 quit */
static _Atomic bool race_stop;
static _Atomic unsigned long race_reads, race_task_ids;

/* Waits under race_lock until race_phase is want (or the watcher quits),
 * at most 10 s. */
static void race_wait(int want) {
  struct timespec until;
  clock_gettime(CLOCK_REALTIME, &until);
  until.tv_sec += 10;
  while (race_phase != want && race_phase != -1)
    ck_assert_int_eq(pthread_cond_timedwait(&race_cond, &race_lock, &until), 0);
}

/* Spins until *counter passes floor, at most 10 s. */
static void race_until(_Atomic unsigned long *counter, unsigned long floor) {
  for (long spins = 0; atomic_load(counter) <= floor; spins++) {
    ck_assert_msg(spins < 10L * 1000 * 1000, "the watcher did not read");
    nanosleep(&(struct timespec){.tv_nsec = 1000}, NULL);
  }
}

static void *race_watch(void *arg) {
  (void)arg;
  pthread_mutex_lock(&race_lock);
  for (;;) {
    while (race_call == NULL && race_phase != -1)
      pthread_cond_wait(&race_cond, &race_lock);
    if (race_phase == -1)
      break;
    mcp_call *c = race_call;
    race_phase = 1;
    pthread_cond_broadcast(&race_cond);
    pthread_mutex_unlock(&race_lock);
    /* Bounded: the handler stops it soon after the change. */
    for (long i = 0; i < 100L * 1000 * 1000 && !atomic_load(&race_stop); i++) {
      ck_assert(!mcp_call_cancelled(c));
      atomic_fetch_add(&race_reads, 1);
      if (mcp_call_task_id(c) != NULL)
        atomic_fetch_add(&race_task_ids, 1);
    }
    pthread_mutex_lock(&race_lock);
    race_call = NULL;
    race_phase = 3;
    pthread_cond_broadcast(&race_cond);
  }
  pthread_mutex_unlock(&race_lock);
  return NULL;
}

static int race_handler(mcp_call *call) {
  unsigned long ids = atomic_load(&race_task_ids);
  pthread_mutex_lock(&race_lock);
  atomic_store(&race_stop, false);
  race_call = call;
  race_phase = 0;
  pthread_cond_broadcast(&race_cond);
  race_wait(1);
  pthread_mutex_unlock(&race_lock);
  race_until(&race_reads, atomic_load(&race_reads));
  /* The watcher reads while the call becomes a task, and after. */
  ck_assert_int_eq(mcp_call_start_task(call), 0);
  race_until(&race_task_ids, ids);
  atomic_store(&race_stop, true);
  pthread_mutex_lock(&race_lock);
  race_wait(3);
  pthread_mutex_unlock(&race_lock);
  return mcp_result_text(call, "raced");
}

START_TEST(becoming_a_task_races_cancellation_checks) {
  /* A call deadline, so that becoming a task has one to lift. */
  mcp_server_set_call_timeout(srv, 60000);
  race_phase = 0;
  pthread_t watcher;
  ck_assert_int_eq(pthread_create(&watcher, NULL, race_watch, NULL), 0);
  for (int i = 0; i < 50; i++) {
    cJSON *r = mcall("job", "{\"do\":\"race\"}");
    tu_assert_json(r, "{\"result\":{\"resultType\":\"task\"}}");
    char *id = task_id(r, "result.taskId");
    cJSON_Delete(r);
    r = mtask("tasks/get", id, NULL);
    tu_assert_json(r, "{\"result\":{\"status\":\"completed\"}}");
    cJSON_Delete(r);
    free(id);
  }
  pthread_mutex_lock(&race_lock);
  race_phase = -1;
  pthread_cond_broadcast(&race_cond);
  pthread_mutex_unlock(&race_lock);
  pthread_join(watcher, NULL);
  /* Each became a task while watched, never cancelled nor late. */
  ck_assert_uint_ge(atomic_load(&race_task_ids), 50);
}
END_TEST

/* ===========================================================================
 * Every allocation failing in turn
 * ======================================================================== */

static bool oom_run(long n, void *user) {
  (void)n;
  tu_sink *k = user;
  mcp_server *s;
  static const mcp_server_info info = {.name = "oom", .version = "1"};
  if (mcp_server_new(&info, &s) != 0)
    return false;
  mcp_server_set_log(s, tu_silent_log, NULL);
  static const mcp_tool job = {
      .name = "job",
      .description = "Asks, then answers.",
      .input_schema = "{\"type\":\"object\",\"properties\":{\"do\":{"
                      "\"type\":\"string\"}}}",
      .flags = MCP_TOOL_TASK_OPTIONAL,
      .annotations = {.read_only = MCP_HINT_TRUE, .open_world = MCP_HINT_FALSE},
      .handler = h_job};
  mcp_session *m = NULL, *l = NULL;
  if (mcp_server_add_tool(s, &job, NULL) != 0 ||
      mcp_session_new(s, &ALICE, tu_sink_send, k, &m) != 0 ||
      mcp_session_new(s, &ALICE, tu_sink_send, k, &l) != 0) {
    mcp_session_free(m);
    mcp_server_free(s);
    return false;
  }
  size_t before = k->n;
  /* 2026-07-28: a task that asks, is answered, and is read. */
  char *msg =
      tu_mcall(1, "job", "{\"do\":\"ask\"}", TASKS_ELICIT_META, NULL, NULL);
  mcp_session_receive(m, msg, strlen(msg));
  free(msg);
  const char *reply = tu_sink_last(k);
  const char *at = strstr(reply, "\"taskId\":\"");
  char id[32] = "";
  if (at && k->n == before + 1)
    snprintf(id, sizeof id, "%.22s", at + 10);
  char *extra =
      tu_text("\"taskId\":\"%s\",\"inputResponses\":{\"ok\":%s}", id, YES);
  msg = tu_mreq(2, "tasks/update", TASKS_META, extra);
  mcp_session_receive(m, msg, strlen(msg));
  free(msg);
  free(extra);
  extra = tu_text("\"taskId\":\"%s\"", id);
  msg = tu_mreq(3, "tasks/get", TASKS_META, extra);
  mcp_session_receive(m, msg, strlen(msg));
  free(msg);
  free(extra);
  bool ok = strstr(tu_sink_last(k), "\"answered\"") != NULL;
  /* 2025-11-25: the same task, its request answered on the session. */
  msg = tu_req(0, "initialize",
               "{\"protocolVersion\":\"2025-11-25\",\"capabilities\":{"
               "\"elicitation\":{}},\"clientInfo\":{\"name\":\"c\"}}");
  mcp_session_receive(l, msg, strlen(msg));
  free(msg);
  msg = tu_req(4, "tools/call",
               "{\"name\":\"job\",\"arguments\":{\"do\":\"ask\"},\"task\":{}}");
  mcp_session_receive(l, msg, strlen(msg));
  free(msg);
  /* The elicitation/create went out with id 1 (the session's first). */
  msg = tu_text("{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":%s}", YES);
  mcp_session_receive(l, msg, strlen(msg));
  free(msg);
  ok = ok && strstr(tu_sink_last(k), "\"completed\"") != NULL;
  mcp_session_free(m);
  mcp_session_free(l);
  mcp_server_free(s);
  return ok;
}

static void oom_after(long n, bool ok, bool clean, void *user) {
  if (clean)
    ck_assert_msg(ok, "the run without failures did not go through");
  tu_sink_free(user, n, NULL);
}

START_TEST(every_allocation_failing) {
  tu_sink k = {0};
  tu_alloc_every(20000, oom_run, oom_after, &k);
}
END_TEST

/* A server with job, on st; NULL when an allocation failed. */
static mcp_server *oom_node(mcp_store *st) {
  static const mcp_server_info info = {.name = "oom", .version = "1"};
  static const mcp_tool job = {
      .name = "job",
      .description = "Asks, then answers.",
      .input_schema = "{\"type\":\"object\",\"properties\":{\"do\":{"
                      "\"type\":\"string\"}}}",
      .flags = MCP_TOOL_TASK_OPTIONAL,
      .annotations = {.read_only = MCP_HINT_TRUE, .open_world = MCP_HINT_FALSE},
      .handler = h_job};
  mcp_server *s = NULL;
  if (mcp_server_new(&info, &s) != 0)
    return NULL;
  mcp_server_set_log(s, tu_silent_log, NULL);
  if (mcp_server_add_tool(s, &job, NULL) != 0 ||
      mcp_server_set_store(s, st) != 0) {
    mcp_server_free(s);
    return NULL;
  }
  return s;
}

static void oom_send(mcp_session *s, char *msg) {
  mcp_session_receive(s, msg, strlen(msg));
  free(msg);
}

/* 2025-11-25 on two nodes: a task on a, whose tasks/result waits on b
 * until a finishes it. Whether b answered with its result. */
static bool oom_remote_result(mcp_server *a, mcp_server *b, tu_sink *k) {
  mcp_session *lm = NULL, *lr = NULL;
  bool ok = mcp_session_new(a, &ALICE, tu_sink_send, k, &lm) == 0 &&
            mcp_session_new(b, &ALICE, tu_sink_send, k, &lr) == 0;
  int held = -1;
  if (ok) {
    static const char init[] =
        "{\"protocolVersion\":\"2025-11-25\",\"capabilities\":{},"
        "\"clientInfo\":{\"name\":\"c\"}}";
    oom_send(lm, tu_req(20, "initialize", init));
    oom_send(lr, tu_req(21, "initialize", init));
    int before = tu_ndeferred;
    oom_send(lm, tu_req(22, "tools/call",
                        "{\"name\":\"job\",\"arguments\":{\"do\":"
                        "\"defer\"},\"task\":{}}"));
    const char *at = strstr(tu_sink_last(k), "\"taskId\":\"");
    char id[32] = "";
    if (at)
      snprintf(id, sizeof id, "%.22s", at + 10);
    if (tu_ndeferred > before && tu_ndeferred <= TU_MAX_DEFERRED)
      held = tu_ndeferred - 1;
    char *params = tu_text("{\"taskId\":\"%s\"}", id);
    oom_send(lr, tu_req(23, "tasks/result", params));
    free(params);
    if (held >= 0) {
      mcp_result_text(tu_deferred[held], "waited");
      mcp_call_finish(tu_deferred[held], 0);
      tu_deferred[held] = NULL; /* finished */
    }
  }
  const char *last = tu_sink_last(k);
  ok = ok && strstr(last, "\"id\":23") && strstr(last, "waited");
  mcp_session_free(lm);
  mcp_session_free(lr);
  return ok;
}

/* Tasks on every node with every allocation failing in turn: a task on
 * one server, read, answered and cancelled through another sharing its
 * store; a 2025-11-25 tasks/result that waits on one for a task of the
 * other. A failure is an error answered, never a crash or a leak. */
/* Two servers sharing an in-process store, with alice's session m on a and
 * r on b. */
typedef struct oom_pair {
  mcp_store *st;
  mcp_server *a, *b;
  mcp_session *m, *r;
} oom_pair;

/* Opens p, both servers with limits lim when not NULL; whether it did. */
static bool oom_pair_open(oom_pair *p, tu_sink *k, const mcp_task_limits *lim) {
  *p = (oom_pair){.st = mcp_store_new_local()};
  p->a = p->st ? oom_node(p->st) : NULL;
  p->b = p->a ? oom_node(p->st) : NULL;
  return p->b &&
         (lim == NULL || (mcp_server_set_task_limits(p->a, lim) == 0 &&
                          mcp_server_set_task_limits(p->b, lim) == 0)) &&
         mcp_session_new(p->a, &ALICE, tu_sink_send, k, &p->m) == 0 &&
         mcp_session_new(p->b, &ALICE, tu_sink_send, k, &p->r) == 0;
}

/* Finishes the calls still deferred, then frees what p holds. */
static void oom_pair_close(oom_pair *p) {
  for (int i = 0; i < tu_ndeferred && i < TU_MAX_DEFERRED; i++)
    if (tu_deferred[i])
      mcp_call_finish(tu_deferred[i], 0);
  tu_deferred_reset();
  mcp_session_free(p->m);
  mcp_session_free(p->r);
  mcp_server_free(p->a);
  mcp_server_free(p->b);
  mcp_store_free(p->st);
}

static bool oom_cluster_run(long n, void *user) {
  (void)n;
  tu_sink *k = user;
  oom_pair p;
  bool ok = oom_pair_open(&p, k, NULL);
  mcp_server *a = p.a, *b = p.b;
  mcp_session *m = p.m, *r = p.r;
  char id[32] = "";
  if (ok) {
    size_t before = k->n;
    oom_send(m, tu_mcall(1, "job", "{\"do\":\"ask\"}", TASKS_ELICIT_META, NULL,
                         NULL));
    const char *at = strstr(tu_sink_last(k), "\"taskId\":\"");
    if (at && k->n == before + 1)
      snprintf(id, sizeof id, "%.22s", at + 10);
    char *extra =
        tu_text("\"taskId\":\"%s\",\"inputResponses\":{\"ok\":%s}", id, YES);
    oom_send(r, tu_mreq(2, "tasks/update", TASKS_META, extra));
    free(extra);
    mcp_server_expire(a);
    extra = tu_text("\"taskId\":\"%s\"", id);
    oom_send(r, tu_mreq(3, "tasks/get", TASKS_META, extra));
    ok = strstr(tu_sink_last(k), "\"answered\"") != NULL;
    oom_send(r, tu_mreq(4, "tasks/cancel", TASKS_META, extra));
    free(extra);
    oom_send(m, tu_mcall(5, "job", "{\"do\":\"defer\"}", TASKS_ELICIT_META,
                         NULL, NULL));
    at = strstr(tu_sink_last(k), "\"taskId\":\"");
    if (at)
      snprintf(id, sizeof id, "%.22s", at + 10);
    extra = tu_text("\"taskId\":\"%s\"", id);
    oom_send(r, tu_mreq(6, "tasks/cancel", TASKS_META, extra));
    oom_send(r, tu_mreq(7, "tasks/get", TASKS_META, extra));
    free(extra);
    ok = ok && strstr(tu_sink_last(k), "\"cancelled\"") != NULL;
    ok = oom_remote_result(a, b, k) && ok;
  }
  oom_pair_close(&p);
  return ok;
}

/* The cluster's budget full (a's task holds alice's one place), b's quick
 * task is forgotten and its call answered with its result, with every
 * allocation failing in turn: an error answered, or the task's creation
 * when there is no memory for the result's answer, never a crash or a
 * leak. Whether the result came back. */
static bool oom_forgotten_run(long n, void *user) {
  (void)n;
  tu_sink *k = user;
  static const mcp_task_limits one = {.max_per_caller = 1};
  oom_pair p;
  bool ok = oom_pair_open(&p, k, &one);
  if (ok) {
    oom_send(p.m,
             tu_mcall(1, "job", "{\"do\":\"defer\"}", TASKS_META, NULL, NULL));
    oom_send(p.r,
             tu_mcall(2, "job", "{\"do\":\"task\"}", TASKS_META, NULL, NULL));
    ok = strstr(tu_sink_last(k), "\"done as a task\"") != NULL;
  }
  oom_pair_close(&p);
  return ok;
}

START_TEST(every_allocation_failing_across_nodes) {
  tu_sink k = {0};
  tu_deferred_reset();
  tu_alloc_every(20000, oom_cluster_run, oom_after, &k);
  tu_alloc_every(20000, oom_forgotten_run, oom_after, &k);
}
END_TEST

/* ===========================================================================
 * The task wire (task_wire.c): pure writers of facts
 * ======================================================================== */

static void assert_wire(mcp__buf *b, const char *want) {
  ck_assert_int_eq(b->err, 0);
  ck_assert_str_eq(mcp__buf_str(b), want);
  mcp__buf_free(b);
}

static const mcp__task_facts FACTS = {.id = "T1",
                                      .status = "completed",
                                      .status_message = "a \"quote\"",
                                      .created_ms = 0,
                                      .updated_ms = 86400000 + 61001,
                                      .ttl_ms = 5,
                                      .poll_ms = 7};

START_TEST(wire_writes_tasks_from_facts) {
  mcp__buf b = {0};
  mcp__wire_task(&b, &FACTS, true);
  assert_wire(&b, "\"taskId\":\"T1\",\"status\":\"completed\","
                  "\"statusMessage\":\"a \\\"quote\\\"\","
                  "\"createdAt\":\"1970-01-01T00:00:00.000Z\","
                  "\"lastUpdatedAt\":\"1970-01-02T00:01:01.001Z\","
                  "\"ttlMs\":5,\"pollIntervalMs\":7,");
  mcp__task_facts plain = FACTS;
  plain.status_message = NULL;
  mcp__wire_created(&b, &plain, false);
  assert_wire(&b, "\"task\":{\"taskId\":\"T1\",\"status\":\"completed\","
                  "\"createdAt\":\"1970-01-01T00:00:00.000Z\","
                  "\"lastUpdatedAt\":\"1970-01-02T00:01:01.001Z\","
                  "\"ttl\":5,\"pollInterval\":7},");
  mcp__wire_status_note(&b, &plain);
  ck_assert_ptr_nonnull(strstr(mcp__buf_str(&b), "\"pollInterval\":7}}"));
  cJSON *note = cJSON_Parse(mcp__buf_str(&b));
  tu_assert_json(note, "{\"method\":\"notifications/tasks/status\","
                       "\"params\":{\"taskId\":\"T1\"}}");
  cJSON_Delete(note);
  mcp__buf_free(&b);
}
END_TEST

/* The one implementation of a round's requests (input.c), which a call's
 * legacy round and a task's both use: numbering on a session, writing (with
 * or without the related-task _meta), matching answers, withdrawing. */
START_TEST(input_rounds_number_write_match_and_withdraw) {
  mcp__home *h = &P.session->home;
  cJSON *asks =
      cJSON_Parse("{\"a\":{\"method\":\"elicitation/create\",\"params\":{}},"
                  "\"b\":{\"method\":\"roots/list\",\"params\":{\"x\":1}}}");
  mcp__buf texts = {0};
  size_t n = 9;
  pthread_mutex_lock(&h->lock);
  long long first = h->next_request_id + 1;
  ck_assert_int_eq(mcp__input_number_locked(h, asks, NULL, &texts, &n), 0);
  pthread_mutex_unlock(&h->lock);
  ck_assert_uint_eq(n, 2);
  char want[200];
  snprintf(want, sizeof want,
           "{\"jsonrpc\":\"2.0\",\"id\":%lld,\"method\":\"elicitation/"
           "create\",\"params\":{}}",
           first);
  ck_assert_str_eq(texts.data, want);
  snprintf(want, sizeof want,
           "{\"jsonrpc\":\"2.0\",\"id\":%lld,\"method\":\"roots/list\","
           "\"params\":{\"x\":1}}",
           first + 1);
  ck_assert_str_eq(texts.data + strlen(texts.data) + 1, want);
  mcp__buf_free(&texts);
  ck_assert(mcp__input_sent_as(asks->child, first));
  ck_assert(!mcp__input_sent_as(asks->child, first + 1));
  cJSON *ok = cJSON_Parse("{\"result\":{\"action\":\"decline\"}}");
  cJSON *bad = cJSON_Parse("{\"result\":{\"action\":7}}");
  cJSON *err = cJSON_Parse("{\"error\":{\"code\":1}}");
  ck_assert_ptr_eq(mcp__input_answer(asks->child, ok), ok->child);
  ck_assert_ptr_null(mcp__input_answer(asks->child, bad));
  ck_assert_ptr_null(mcp__input_answer(asks->child, err));
  cJSON_DeleteItemFromObject(asks->child, "id"); /* answered */
  mcp__input_withdraw(&texts, asks, "gone \"now\"");
  snprintf(want, sizeof want,
           "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\","
           "\"params\":{\"requestId\":%lld,\"reason\":\"gone \\\"now\\\"\"}}",
           first + 1);
  ck_assert_str_eq(texts.data, want);
  ck_assert_uint_eq(texts.len, strlen(want) + 1);
  mcp__buf_free(&texts);
  pthread_mutex_lock(&h->lock);
  ck_assert_int_eq(mcp__input_number_locked(h, asks, "T9", &texts, &n), 0);
  pthread_mutex_unlock(&h->lock);
  ck_assert_ptr_nonnull(strstr(texts.data,
                               "\"_meta\":{\"io.modelcontextprotocol/"
                               "related-task\":{\"taskId\":\"T9\"}}"));
  mcp__buf_free(&texts);
  cJSON_Delete(ok);
  cJSON_Delete(bad);
  cJSON_Delete(err);
  cJSON_Delete(asks);
}
END_TEST

START_TEST(wire_writes_outcomes_between_its_own_braces) {
  mcp__buf b = {0};
  mcp__outcome ok = {.members = "\"content\":[]", .len = 12};
  mcp__wire_task_result(&b, "7", 1, "T1", &ok);
  assert_wire(&b, "{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{\"content\":[],"
                  "\"_meta\":{\"io.modelcontextprotocol/related-task\":"
                  "{\"taskId\":\"T1\"}}}}");
  mcp__outcome empty = {.members = "", .len = 0};
  mcp__wire_task_result(&b, "7", 1, "T1", &empty);
  assert_wire(&b, "{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{\"_meta\":{"
                  "\"io.modelcontextprotocol/related-task\":"
                  "{\"taskId\":\"T1\"}}}}");
  mcp__outcome err = {
      .error = true, .code = -32603, .members = "\"code\":1", .len = 8};
  mcp__wire_task_result(&b, "\"x\"", 3, "T1", &err);
  assert_wire(&b, "{\"jsonrpc\":\"2.0\",\"id\":\"x\",\"error\":{\"code\":1}}");
  mcp__wire_task_result(&b, "7", 1, "T1", NULL);
  ck_assert_ptr_nonnull(strstr(mcp__buf_str(&b), "has no result"));
  mcp__buf_free(&b);
  mcp__task_facts f = FACTS;
  f.status_message = NULL;
  mcp__wire_detail(&b, &f, NULL, &err);
  ck_assert_ptr_nonnull(strstr(mcp__buf_str(&b), ",\"error\":{\"code\":1},"));
  mcp__buf_free(&b);
  cJSON *asks = cJSON_Parse("{\"k\":{\"method\":\"m\",\"params\":{}}}");
  mcp__wire_detail(&b, &f, asks, &err);
  ck_assert_ptr_nonnull(
      strstr(mcp__buf_str(&b),
             "\"inputRequests\":{\"k\":{\"method\":\"m\",\"params\":{}}},"));
  ck_assert_ptr_null(strstr(mcp__buf_str(&b), "error"));
  mcp__buf_free(&b);
  mcp__wire_request(&b, "T1", cJSON_GetObjectItem(asks->child, "method"),
                    cJSON_GetObjectItem(asks->child, "params"), 3);
  assert_wire(&b, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"m\",\"params\":{"
                  "\"_meta\":{\"io.modelcontextprotocol/related-task\":"
                  "{\"taskId\":\"T1\"}}}}");
  cJSON_Delete(asks);
  mcp__wire_error_members(&b, -32000, "busy \"now\"");
  assert_wire(&b, "\"code\":-32000,\"message\":\"busy \\\"now\\\"\"");
}
END_TEST

/* ===========================================================================
 * Tasks on every node: two servers sharing one store (the in-process one,
 * whose answers come at once; tests/redis runs the same over Redis). srv
 * runs the tasks, made through P; B answers for them through Q (alice)
 * and E (eve), from the records srv keeps in the store.
 * ======================================================================== */

static mcp_store *g_store;
static mcp_server *B;
static tu_peer Q, E;
static const mcp_principal EVE = {.subject = "eve"};

static void cluster_setup(void) {
  setup();
  B = tasks_server();
  g_store = mcp_store_new_local();
  ck_assert_ptr_nonnull(g_store);
  ck_assert_int_eq(mcp_server_set_store(srv, g_store), 0);
  ck_assert_int_eq(mcp_server_set_store(B, g_store), 0);
  tu_peer_open(&Q, B, &ALICE);
  tu_peer_open(&E, B, &EVE);
}

static void cluster_teardown(void) {
  tu_peer_close(&Q);
  tu_peer_close(&E);
  mcp_server_free(B);
  teardown();
  mcp_store_free(g_store);
}

/* A 2026-07-28 tasks method through peer p. */
static cJSON *ptask(tu_peer *p, const char *method, const char *id,
                    const char *more) {
  char *extra =
      tu_text("\"taskId\":\"%s\"%s%s", id, more ? "," : "", more ? more : "");
  cJSON *r = tu_ask(p, tu_mreq(next_id++, method, TASKS_META, extra));
  free(extra);
  return r;
}

/* Asserts that neither node knows the task id (any more). */
static void assert_gone_everywhere(const char *id) {
  cJSON *r = mtask("tasks/get", id, NULL);
  tu_assert_error(r, -32602, "Task not found");
  cJSON_Delete(r);
  r = ptask(&Q, "tasks/get", id, NULL);
  tu_assert_error(r, -32602, "Task not found");
  cJSON_Delete(r);
}

START_TEST(another_node_answers_for_a_task) {
  cJSON *r = mcall("job", "{\"do\":\"defer\"}");
  char *id = task_id(r, "result.taskId");
  cJSON_Delete(r);
  r = ptask(&Q, "tasks/get", id, NULL);
  char *want = tu_text("{\"result\":{\"resultType\":\"complete\",\"taskId\":"
                       "\"%s\",\"status\":\"working\",\"ttlMs\":3600000,"
                       "\"result\":\"<absent>\"}}",
                       id);
  tu_assert_json(r, want);
  free(want);
  assert_time(r, "result.createdAt");
  cJSON_Delete(r);
  /* Another principal's task does not exist for it, on any node. */
  r = ptask(&E, "tasks/get", id, NULL);
  tu_assert_error(r, -32602, "Task not found");
  cJSON_Delete(r);
  r = ptask(&Q, "tasks/get", "nosuchtask", NULL);
  tu_assert_error(r, -32602, "Task not found");
  cJSON_Delete(r);
  /* Its end is seen everywhere, with its result. */
  mcp_result_text(tu_stash, "finished");
  ck_assert_int_eq(mcp_call_finish(tu_stash, 0), 0);
  r = ptask(&Q, "tasks/get", id, NULL);
  tu_assert_json(r,
                 "{\"result\":{\"status\":\"completed\",\"result\":{"
                 "\"content\":[{\"type\":\"text\",\"text\":\"finished\"}]}}}");
  cJSON_Delete(r);
  /* tasks/cancel of an ended task acknowledges, and changes nothing. */
  r = ptask(&Q, "tasks/cancel", id, NULL);
  tu_assert_json(r, "{\"result\":{\"resultType\":\"complete\"}}");
  cJSON_Delete(r);
  r = mtask("tasks/get", id, NULL);
  tu_assert_json(r, "{\"result\":{\"status\":\"completed\"}}");
  cJSON_Delete(r);
  free(id);
}
END_TEST

START_TEST(another_node_cancels_and_answers_input) {
  cJSON *r = mcall("job", "{\"do\":\"defer\"}");
  char *id = task_id(r, "result.taskId");
  cJSON_Delete(r);
  mcp_call *held = tu_stash;
  /* Cancelled through B: the call on srv hears it, every node says so. */
  r = ptask(&Q, "tasks/cancel", id, NULL);
  tu_assert_json(r, "{\"result\":{\"resultType\":\"complete\",\"status\":"
                    "\"<absent>\"}}");
  cJSON_Delete(r);
  ck_assert(mcp_call_cancelled(held));
  r = mtask("tasks/get", id, NULL);
  tu_assert_json(r, "{\"result\":{\"status\":\"cancelled\"}}");
  cJSON_Delete(r);
  r = ptask(&Q, "tasks/get", id, NULL);
  tu_assert_json(r, "{\"result\":{\"status\":\"cancelled\",\"result\":"
                    "\"<absent>\"}}");
  cJSON_Delete(r);
  /* Its result, when it comes after, changes nothing anywhere. */
  mcp_result_text(held, "too late");
  mcp_call_finish(held, 0);
  r = ptask(&Q, "tasks/get", id, NULL);
  tu_assert_json(r, "{\"result\":{\"status\":\"cancelled\"}}");
  cJSON_Delete(r);
  free(id);

  /* Input asked on srv, answered through B. */
  r = mcall("job", "{\"do\":\"ask\"}");
  id = task_id(r, "result.taskId");
  cJSON_Delete(r);
  r = ptask(&Q, "tasks/get", id, NULL);
  tu_assert_json(r, "{\"result\":{\"status\":\"input_required\"}}");
  tu_assert_exact(tu_jget(r, "result.inputRequests.ok.method"),
                  "\"elicitation/create\"");
  cJSON_Delete(r);
  r = ptask(&Q, "tasks/update", id, "\"inputResponses\":{\"ok\":1}");
  tu_assert_error(r, -32602, "inputResponses[ok]");
  cJSON_Delete(r);
  char *yes = tu_text("\"inputResponses\":{\"ok\":%s}", YES);
  r = ptask(&Q, "tasks/update", id, yes);
  tu_assert_json(r, "{\"result\":{\"resultType\":\"complete\"}}");
  cJSON_Delete(r);
  free(yes);
  /* The next round runs where the task lives, on its timer's thread. */
  ck_assert_int_eq(g_seen_ok, 0);
  ck_assert_int_eq(mcp_server_next_expiry_ms(srv), 0);
  ck_assert_int_eq(mcp_server_expire(srv), 1);
  ck_assert_int_eq(g_seen_ok, 1);
  r = ptask(&Q, "tasks/get", id, NULL);
  tu_assert_json(r, "{\"result\":{\"status\":\"completed\",\"result\":{"
                    "\"content\":[{\"text\":\"answered\"}]}}}");
  cJSON_Delete(r);
  free(id);
}
END_TEST

START_TEST(listeners_on_another_node_hear_their_callers_tasks) {
  cJSON *r = mcall("job", "{\"do\":\"defer\"}");
  char *id = task_id(r, "result.taskId");
  cJSON_Delete(r);
  /* On B, where the task is not: kept for the caller, and for eve too (B
   * cannot tell whose it is until it changes), who never hears of it. */
  char *filter = tu_text("\"notifications\":{\"taskIds\":[\"%s\"]}", id);
  char *ack = tu_text("{\"method\":\"notifications/subscriptions/"
                      "acknowledged\",\"params\":{\"notifications\":{"
                      "\"taskIds\":[\"%s\"]}}}",
                      id);
  r = tu_ask(&Q, tu_mreq(7, "subscriptions/listen", TASKS_META, filter));
  tu_assert_json(r, ack);
  cJSON_Delete(r);
  r = tu_ask(&E, tu_mreq(8, "subscriptions/listen", TASKS_META, filter));
  tu_assert_json(r, ack);
  cJSON_Delete(r);
  free(ack);
  free(filter);
  tu_clear(&Q);
  tu_clear(&E);
  ck_assert_int_eq(mcp_call_set_status(tu_stash, "halfway"), 0);
  mcp_result_text(tu_stash, "heard");
  mcp_call_finish(tu_stash, 0);
  ck_assert_uint_eq(E.nout, 0);
  ck_assert_uint_eq(Q.nout, 1);
  char *want =
      tu_text("{\"method\":\"notifications/tasks\",\"params\":{\"taskId\":"
              "\"%s\",\"status\":\"completed\",\"result\":{\"content\":[{"
              "\"text\":\"heard\"}]},\"_meta\":{\"io.modelcontextprotocol/"
              "subscriptionId\":7}}}",
              id);
  tu_assert_msg(&Q, 0, want);
  free(want);
  free(id);
}
END_TEST

/* A 2025-11-25 request through peer p. */
static cJSON *lask(tu_peer *p, const char *method, const char *params) {
  return tu_ask(p, tu_req(next_id++, method, params));
}

START_TEST(legacy_sessions_on_another_node_list_and_read_tasks) {
  tu_peer_open(&L, srv, &ALICE);
  tu_legacy_init(&L, "2025-11-25", "{\"elicitation\":{}}");
  tu_peer LB;
  tu_peer_open(&LB, B, &ALICE);
  tu_legacy_init(&LB, "2025-11-25", "{\"elicitation\":{}}");
  mcp_server_set_page_size(B, 2);
  char *ids[3];
  mcp_call *held[3];
  for (int i = 0; i < 3; i++) {
    cJSON *r = lcall("job", "{\"do\":\"defer\"}", "{}");
    ids[i] = task_id(r, "result.task.taskId");
    held[i] = tu_stash;
    cJSON_Delete(r);
  }
  /* B lists the caller's tasks srv runs, a page at a time. */
  cJSON *r = lask(&LB, "tasks/list", "{}");
  ck_assert_int_eq(cJSON_GetArraySize(tu_jget(r, "result.tasks")), 2);
  const char *next = tu_jstr(r, "result.nextCursor");
  ck_assert_ptr_nonnull(next);
  char *params = tu_text("{\"cursor\":\"%s\"}", next);
  cJSON_Delete(r);
  r = lask(&LB, "tasks/list", params);
  free(params);
  ck_assert_int_eq(cJSON_GetArraySize(tu_jget(r, "result.tasks")), 1);
  ck_assert_ptr_null(tu_jget(r, "result.nextCursor"));
  cJSON_Delete(r);
  r = lask(&LB, "tasks/list", "{\"cursor\":\"s1.x.y\"}");
  tu_assert_error(r, -32602, "cursor");
  cJSON_Delete(r);
  /* tasks/get and tasks/result of a task that runs on srv. */
  char *get = tu_text("{\"taskId\":\"%s\"}", ids[0]);
  r = lask(&LB, "tasks/get", get);
  tu_assert_json(r, "{\"result\":{\"status\":\"working\",\"ttl\":3600000}}");
  cJSON_Delete(r);
  /* tasks/result blocks until the task ends, on B as on srv. */
  tu_clear(&LB);
  ck_assert_int_eq(tu_send_free(&LB, tu_req(next_id++, "tasks/result", get)),
                   0);
  ck_assert_uint_eq(LB.nout, 0);
  mcp_result_text(held[0], "listed");
  mcp_call_finish(held[0], 0);
  ck_assert_uint_eq(LB.nout, 1);
  tu_assert_msg(&LB, 0,
                "{\"result\":{\"content\":[{\"text\":\"listed\"}],"
                "\"_meta\":{\"" RELATED "\":{}}}}");
  r = lask(&LB, "tasks/result", get);
  tu_assert_json(r, "{\"result\":{\"content\":[{\"text\":\"listed\"}],"
                    "\"_meta\":{\"" RELATED "\":{}}}}");
  cJSON_Delete(r);
  /* Ended: 2025-11-25 says it cannot be cancelled; a running one is. */
  r = lask(&LB, "tasks/cancel", get);
  tu_assert_error(r, -32602, "completed already");
  cJSON_Delete(r);
  free(get);
  get = tu_text("{\"taskId\":\"%s\"}", ids[1]);
  r = lask(&LB, "tasks/cancel", get);
  tu_assert_json(r, "{\"result\":{\"status\":\"cancelled\"}}");
  cJSON_Delete(r);
  ck_assert(mcp_call_cancelled(held[1]));
  free(get);
  for (int i = 1; i < 3; i++) {
    mcp_call_finish(held[i], 0);
    free(ids[i]);
  }
  free(ids[0]);
  tu_peer_close(&LB);
  tu_peer_close(&L);
}
END_TEST

START_TEST(a_lost_node_fails_its_tasks) {
  cJSON *r = mcall("job", "{\"do\":\"defer\"}");
  char *id = task_id(r, "result.taskId");
  cJSON_Delete(r);
  mcp_call *held = tu_stash;
  /* srv leaves the store as a dead process would: its lease ends, its
   * record stays as it was. */
  ck_assert_int_eq(mcp_server_set_store(srv, NULL), 0);
  r = ptask(&Q, "tasks/get", id, NULL);
  tu_assert_json(r, "{\"result\":{\"status\":\"failed\",\"statusMessage\":"
                    "\"the node running this task was lost\",\"error\":{"
                    "\"code\":-32603,\"message\":\"Internal error: the node "
                    "running this task was lost\"}}}");
  cJSON_Delete(r);
  /* Settled once for every node: a second reader reads the same. */
  r = ptask(&Q, "tasks/cancel", id, NULL);
  tu_assert_json(r, "{\"result\":{\"resultType\":\"complete\"}}");
  cJSON_Delete(r);
  r = ptask(&Q, "tasks/get", id, NULL);
  tu_assert_json(r, "{\"result\":{\"status\":\"failed\"}}");
  cJSON_Delete(r);
  mcp_call_finish(held, 0);
  free(id);
  ck_assert_int_eq(mcp_server_set_node_lease(srv, 299), MCP_EINVAL);
  ck_assert_int_eq(mcp_server_set_node_lease(srv, 3600001), MCP_EINVAL);
  ck_assert_int_eq(mcp_server_set_node_lease(NULL, 1000), MCP_EINVAL);
  ck_assert_int_eq(mcp_server_set_node_lease(srv, 0), 0);
  ck_assert_int_eq(mcp_server_set_node_lease(srv, 300), 0);
}
END_TEST

/* ---- a 2025-11-25 tasks/result waiting on another node --------------------
 */

/* A 2025-11-25 peer on s. */
static void legacy_peer(tu_peer *p, mcp_server *s) {
  tu_peer_open(p, s, &ALICE);
  tu_legacy_init(p, "2025-11-25", "{\"elicitation\":{}}");
}

/* Sends a tasks/result of task id through p, which waits: no reply yet.
 * Returns the request's id. */
static int lwait(tu_peer *p, const char *id) {
  tu_clear(p);
  int rid = next_id++;
  char *params = tu_text("{\"taskId\":\"%s\"}", id);
  ck_assert_int_eq(tu_send_free(p, tu_req(rid, "tasks/result", params)), 0);
  free(params);
  ck_assert_uint_eq(p->nout, 0);
  return rid;
}

/* Drives s's timer as a transport would until done(p) holds: at most
 * 500 rounds 20 ms apart. Everything answers on this thread. */
static bool has_reply(tu_peer *p) { return p->nout > 0; }
static void drive_until(tu_peer *p, bool (*done)(tu_peer *p)) {
  for (int i = 0; i < 500 && !done(p); i++) {
    mcp_server_expire(p->srv);
    if (!done(p))
      nanosleep(&(struct timespec){.tv_nsec = 20000000}, NULL);
  }
  ck_assert(done(p));
}

/* A task started on srv through L, its call in *held; its id (free). */
static char *legacy_task(const char *task, mcp_call **held) {
  cJSON *r = lcall("job", "{\"do\":\"defer\"}", task);
  char *id = task_id(r, "result.task.taskId");
  cJSON_Delete(r);
  *held = tu_stash;
  return id;
}

START_TEST(a_result_waits_on_another_node_until_the_task_ends) {
  legacy_peer(&L, srv);
  tu_peer LB, LC;
  legacy_peer(&LB, B);
  legacy_peer(&LC, B);
  /* Completed: the waiting request gets the result when it ends on srv,
   * and B keeps no timer for it after. */
  mcp_call *held;
  char *id = legacy_task("{}", &held);
  int rid = lwait(&LB, id);
  ck_assert_int_ge(mcp_server_next_expiry_ms(B), 0);
  mcp_result_text(held, "waited for");
  ck_assert_int_eq(mcp_call_finish(held, 0), 0);
  ck_assert_uint_eq(LB.nout, 1);
  char *want = tu_text("{\"id\":%d,\"result\":{\"content\":[{\"text\":"
                       "\"waited for\"}],\"_meta\":{\"" RELATED "\":{"
                       "\"taskId\":\"%s\"}}}}",
                       rid, id);
  tu_assert_msg(&LB, 0, want);
  free(want);
  ck_assert_int_eq(mcp_server_next_expiry_ms(B), -1);
  free(id);
  /* Failed (a tool error, in 2025-11-25): its result, isError true. */
  id = legacy_task("{}", &held);
  lwait(&LB, id);
  lwait(&LC, id); /* two wait on B */
  mcp_result_error(held, "it broke");
  mcp_call_finish(held, 0);
  ck_assert_uint_eq(LB.nout, 1);
  ck_assert_uint_eq(LC.nout, 1);
  tu_assert_msg(&LB, 0,
                "{\"result\":{\"isError\":true,\"content\":[{\"text\":"
                "\"it broke\"}]}}");
  tu_assert_msg(&LC, 0, "{\"result\":{\"isError\":true}}");
  free(id);
  /* Cancelled from a third place, another session on B: the node that
   * settled the record wakes the waiting request. */
  id = legacy_task("{}", &held);
  lwait(&LB, id);
  char *get = tu_text("{\"taskId\":\"%s\"}", id);
  cJSON *r = lask(&LC, "tasks/cancel", get);
  tu_assert_json(r, "{\"result\":{\"status\":\"cancelled\"}}");
  cJSON_Delete(r);
  ck_assert(mcp_call_cancelled(held));
  ck_assert_uint_eq(LB.nout, 1);
  tu_assert_msg(&LB, 0,
                "{\"error\":{\"code\":-32602,\"message\":\"Invalid "
                "params: the task was cancelled and has no result\"}}");
  mcp_call_finish(held, 0);
  free(get);
  free(id);
  /* Cancelled on the node running it. */
  id = legacy_task("{}", &held);
  lwait(&LB, id);
  tu_clear(&L);
  get = tu_text("{\"taskId\":\"%s\"}", id);
  ck_assert_int_eq(tu_send_free(&L, tu_req(next_id++, "tasks/cancel", get)), 0);
  free(get);
  tu_assert_msg(&L, 0, "{\"result\":{\"status\":\"cancelled\"}}");
  ck_assert_uint_eq(LB.nout, 1);
  tu_assert_msg(&LB, 0, "{\"error\":{\"code\":-32602}}");
  mcp_call_finish(held, 0);
  free(id);
  /* Waiting for input: only srv asks the session that made it; B says so
   * at once. Answered there, the task ends and B reads its result. */
  r = lcall("job", "{\"do\":\"ask\"}", "{}");
  id = task_id(r, "result.task.taskId");
  cJSON_Delete(r);
  cJSON *sent = tu_msg(&L, 2);
  ck_assert_str_eq(tu_jstr(sent, "method"), "elicitation/create");
  int ask_id = tu_jget(sent, "id")->valueint;
  cJSON_Delete(sent);
  get = tu_text("{\"taskId\":\"%s\"}", id);
  r = lask(&LB, "tasks/result", get);
  tu_assert_error(r, -32000, "waits for input");
  cJSON_Delete(r);
  ck_assert_int_eq(
      tu_send_free(&L, tu_text("{\"jsonrpc\":\"2.0\",\"id\":%d,\"result\":%s}",
                               ask_id, YES)),
      0);
  r = lask(&LB, "tasks/result", get);
  tu_assert_json(r, "{\"result\":{\"content\":[{\"text\":\"answered\"}]}}");
  cJSON_Delete(r);
  free(get);
  free(id);
  tu_peer_close(&LC);
  tu_peer_close(&LB);
  tu_peer_close(&L);
}
END_TEST

START_TEST(a_result_waiting_on_another_node_sees_it_lost_or_expire) {
  legacy_peer(&L, srv);
  tu_peer LB;
  legacy_peer(&LB, B);
  /* Its TTL passes: expired, as on the node that ran it. */
  mcp_call *held;
  char *id = legacy_task("{\"ttl\":1000}", &held);
  lwait(&LB, id);
  drive_until(&LB, has_reply);
  tu_assert_msg(&LB, 0,
                "{\"error\":{\"code\":-32602,\"message\":\"Failed to "
                "retrieve task: Task has expired\"}}");
  mcp_call_finish(held, 0);
  free(id);
  /* Its node is lost (srv leaves the store as a dead process would):
   * within B's node lease the request reads the record again, fails the
   * task for every node, and answers. */
  ck_assert_int_eq(mcp_server_set_node_lease(B, 300), 0);
  id = legacy_task("{}", &held);
  lwait(&LB, id);
  ck_assert_int_eq(mcp_server_set_store(srv, NULL), 0);
  drive_until(&LB, has_reply);
  tu_assert_msg(&LB, 0,
                "{\"error\":{\"code\":-32603,\"message\":\"Internal error: the "
                "node running this task was lost\"}}");
  cJSON *r = ptask(&Q, "tasks/get", id, NULL);
  tu_assert_json(r, "{\"result\":{\"status\":\"failed\"}}");
  cJSON_Delete(r);
  mcp_call_finish(held, 0);
  free(id);
  tu_peer_close(&LB);
  tu_peer_close(&L);
}
END_TEST

START_TEST(a_result_waiting_on_another_node_ends_with_its_session) {
  legacy_peer(&L, srv);
  tu_peer LB;
  /* Closed while the task runs on: let go at once, not at the next look
   * (a node lease of a minute); the task then ends, and nothing is left to
   * wake or answer. */
  ck_assert_int_eq(mcp_server_set_node_lease(B, 60000), 0);
  legacy_peer(&LB, B);
  mcp_call *held;
  char *id = legacy_task("{}", &held);
  lwait(&LB, id);
  ck_assert_int_ge(mcp_server_next_expiry_ms(B), 0);
  tu_peer_close(&LB);
  ck_assert_int_eq(mcp_server_next_expiry_ms(B), -1);
  mcp_result_text(held, "unheard");
  mcp_call_finish(held, 0);
  ck_assert_int_eq(mcp_server_next_expiry_ms(B), -1);
  free(id);
  tu_peer_close(&L);
}
END_TEST

/* The budgets hold across the nodes: each node counts its tasks in the
 * store's budgets (its caller's, the total), so a new task on one node is
 * refused while another node's tasks of the same caller fill the room,
 * and admitted once one of them finished, that one then forgotten on its
 * node too. */
START_TEST(the_budgets_hold_across_nodes) {
  const mcp_task_limits lim = {.max_per_caller = 2, .max_total = 3};
  ck_assert_int_eq(mcp_server_set_task_limits(srv, &lim), 0);
  ck_assert_int_eq(mcp_server_set_task_limits(B, &lim), 0);
  mcp_call *one, *two;
  char *first = two_running(&one, &two);
  cJSON *r;
  /* B holds none of alice's tasks, but the cluster holds two: B's new one
   * fails at once, its call cancelled, and every node says why. */
  r = tu_ask(&Q, tu_mcall(next_id++, "job", "{\"do\":\"defer\"}", TASKS_META,
                          NULL, NULL));
  char *refused = task_id(r, "result.taskId");
  cJSON_Delete(r);
  ck_assert(mcp_call_cancelled(tu_stash));
  mcp_call_finish(tu_stash, 0);
  static const char *const busy =
      "{\"result\":{\"status\":\"failed\",\"statusMessage\":\"Server busy: a "
      "new task would pass the cluster's per-caller task budget (2 tasks, "
      "33554432 bytes), and no finished task there can make room; try again "
      "when one has finished\"}}";
  r = ptask(&Q, "tasks/get", refused, NULL);
  tu_assert_json(r, busy);
  cJSON_Delete(r);
  r = mtask("tasks/get", refused, NULL);
  tu_assert_json(r, busy);
  cJSON_Delete(r);
  /* Another caller has room, up to the cluster's total. */
  r = tu_ask(&E, tu_mcall(next_id++, "job", "{\"do\":\"defer\"}", TASKS_META,
                          NULL, NULL));
  tu_assert_json(r, "{\"result\":{\"resultType\":\"task\"}}");
  cJSON_Delete(r);
  mcp_call *eve = tu_stash;
  ck_assert(!mcp_call_cancelled(eve));
  r = tu_ask(&E, tu_mcall(next_id++, "job", "{\"do\":\"defer\"}", TASKS_META,
                          NULL, NULL));
  char *over = task_id(r, "result.taskId");
  cJSON_Delete(r);
  mcp_call_finish(tu_stash, 0);
  r = ptask(&E, "tasks/get", over, NULL);
  tu_assert_json(r, "{\"result\":{\"status\":\"failed\",\"statusMessage\":"
                    "\"Server busy: a new task would pass the cluster's total "
                    "task budget (3 tasks, 268435456 bytes), and no finished "
                    "task there can make room; try again when one has "
                    "finished\"}}");
  cJSON_Delete(r);
  /* One of srv's ends: B's next is admitted, and srv forgets the oldest
   * finished one, whose room it took. */
  mcp_result_text(one, "finished");
  mcp_call_finish(one, 0);
  r = tu_ask(&Q, tu_mcall(next_id++, "job", "{\"do\":\"defer\"}", TASKS_META,
                          NULL, NULL));
  char *admitted = task_id(r, "result.taskId");
  cJSON_Delete(r);
  mcp_call *three = tu_stash;
  ck_assert(!mcp_call_cancelled(three));
  r = ptask(&Q, "tasks/get", admitted, NULL);
  tu_assert_json(r, "{\"result\":{\"status\":\"working\"}}");
  cJSON_Delete(r);
  assert_gone_everywhere(first);
  /* Full again (two and three run): a task that ends before the cluster
   * refused it is not kept beyond the budget either: it is forgotten, as
   * a finished task the budget needs the room of would be, and its call
   * is answered with its result, as a call that never became a task (the
   * client never heard of the task). */
  r = tu_ask(&Q, tu_mcall(next_id++, "job", "{\"do\":\"task\"}", TASKS_META,
                          NULL, NULL));
  tu_assert_json(r, "{\"result\":{\"resultType\":\"complete\",\"content\":[{"
                    "\"type\":\"text\",\"text\":\"done as a task\"}]}}");
  ck_assert_ptr_null(tu_jget(r, "result.taskId"));
  ck_assert_ptr_null(
      cJSON_GetObjectItemCaseSensitive(tu_jget(r, "result._meta"), RELATED));
  cJSON_Delete(r);
  /* A call that failed so answers its error. */
  r = tu_ask(&Q, tu_mcall(next_id++, "job", "{\"do\":\"taskfail\"}", TASKS_META,
                          NULL, NULL));
  tu_assert_error(r, -32603, "Internal error");
  cJSON_Delete(r);
  mcp_call_finish(two, 0);
  mcp_call_finish(three, 0);
  mcp_call_finish(eve, 0);
  free(first);
  free(refused);
  free(over);
  free(admitted);
}
END_TEST

/* Gives both nodes the limits lim, then starts a task of alice's on srv
 * whose call is deferred (*held); returns its id (free with free). */
static char *limited_and_deferred(const mcp_task_limits *lim, mcp_call **held) {
  ck_assert_int_eq(mcp_server_set_task_limits(srv, lim), 0);
  ck_assert_int_eq(mcp_server_set_task_limits(B, lim), 0);
  cJSON *r = mcall("job", "{\"do\":\"defer\"}");
  char *id = task_id(r, "result.taskId");
  cJSON_Delete(r);
  *held = tu_stash;
  return id;
}

/* How the node of a task settled elsewhere and evicted learns of it. */
typedef enum evicted_news {
  NEWS_TOLD,  /* the record named its holder: the evicting put tells it */
  NEWS_PUT,   /* nobody told: its next put (a status) is refused */
  NEWS_ASKED, /* the same, its put made as the call asks for input */
} evicted_news;

/* A task settled elsewhere (as a lost node's tasks are failed), whose
 * record the cluster's budget then evicted, is forgotten by its node, its
 * call cancelled, as the cluster forgot it: at once when the record named
 * its holder, or at its next put otherwise (the store refuses the evicted
 * key rather than let it seem to run again). */
static void settled_elsewhere_then_evicted(evicted_news news) {
  bool holder_told = news == NEWS_TOLD;
  mcp_call *held;
  char *id = limited_and_deferred(&(mcp_task_limits){.max_total = 2}, &held);
  cJSON *r;
  char key[64];
  snprintf(key, sizeof key, "task:%s", id);
  sc_answer kept = sc_get(g_store, key);
  ck_assert_uint_eq(kept.n, 1);
  ck_assert(kept.recs[0].holder[0] != '\0');
  /* Settled by the test, a node that tells nobody. */
  sc_answer a =
      sc_put(g_store, key, "{\"status\":\"failed\"}",
             holder_told ? kept.recs[0].holder : NULL, NULL, 0, 60000, true);
  ck_assert(a.rc == 0 && a.recs[0].written);
  /* Eve's tasks on B fill the cluster's total: the second evicts it. */
  mcp_call *eve[2];
  for (int i = 0; i < 2; i++) {
    r = tu_ask(&E, tu_mcall(next_id++, "job", "{\"do\":\"defer\"}", TASKS_META,
                            NULL, NULL));
    tu_assert_json(r, "{\"result\":{\"resultType\":\"task\"}}");
    cJSON_Delete(r);
    eve[i] = tu_stash;
    ck_assert(!mcp_call_cancelled(eve[i]));
  }
  ck_assert(mcp_call_cancelled(held) == holder_told);
  if (news == NEWS_PUT) /* srv's next put of it is refused */
    ck_assert_int_eq(mcp_call_set_status(held, "still going"), 0);
  if (news == NEWS_ASKED) {
    /* The call parks, asking; the put of input_required is refused, and
     * the parked call ends cancelled there: held is gone. */
    ck_assert_int_eq(
        mcp_call_request_input(held, "ok", MCP_INPUT_ELICITATION, ASK), 0);
    ck_assert_int_eq(mcp_call_finish(held, MCP_INPUT_REQUIRED), 0);
    held = NULL;
  }
  ck_assert(held == NULL || mcp_call_cancelled(held));
  assert_gone_everywhere(id);
  if (held)
    mcp_call_finish(held, 0);
  mcp_call_finish(eve[0], 0);
  mcp_call_finish(eve[1], 0);
  free(id);
}

START_TEST(a_task_settled_elsewhere_and_evicted_is_forgotten) {
  settled_elsewhere_then_evicted(NEWS_TOLD);
}
END_TEST

START_TEST(an_evicted_key_is_not_written_anew) {
  settled_elsewhere_then_evicted(NEWS_PUT);
  settled_elsewhere_then_evicted(NEWS_ASKED);
}
END_TEST

/* A task admitted whose result then passes the cluster's budget (the
 * caller's other task, on B, holds most of it) keeps its result: it was
 * admitted, and its node's own budget, which it fits, bounds it; every
 * node reads it completed. */
START_TEST(an_admitted_task_grows_past_the_clusters_budget) {
  mcp_call *one;
  char *id = limited_and_deferred(
      &(mcp_task_limits){.max_bytes_per_caller = 150 * 1024}, &one);
  cJSON *r = pcall(&Q, padded("defer", 100 * 1024));
  tu_assert_json(r, "{\"result\":{\"resultType\":\"task\"}}");
  cJSON_Delete(r);
  mcp_call *big = tu_stash;
  ck_assert(!mcp_call_cancelled(big));
  ck_assert_int_eq(result_of_size(one, 60 * 1024), 0);
  mcp_call_finish(one, 0);
  r = ptask(&Q, "tasks/get", id, NULL);
  tu_assert_json(r, "{\"result\":{\"status\":\"completed\"}}");
  cJSON_Delete(r);
  r = mtask("tasks/get", id, NULL);
  tu_assert_json(r, "{\"result\":{\"status\":\"completed\"}}");
  cJSON_Delete(r);
  mcp_call_finish(big, 0);
  free(id);
}
END_TEST

START_TEST(a_result_waiting_on_another_node_ends_with_its_server) {
  legacy_peer(&L, srv);
  mcp_server *b2 = tasks_server();
  ck_assert_int_eq(mcp_server_set_store(b2, g_store), 0);
  tu_peer LB;
  legacy_peer(&LB, b2);
  mcp_call *held;
  char *id = legacy_task("{}", &held);
  lwait(&LB, id);
  mcp_server_free(b2);
  ck_assert_uint_eq(LB.nout, 1);
  cJSON *r = tu_msg(&LB, 0);
  tu_assert_error(r, -32603, "stopped");
  cJSON_Delete(r);
  /* The task ends after: nothing is left to wake. */
  mcp_result_text(held, "late");
  mcp_call_finish(held, 0);
  free(id);
  tu_peer_close(&LB);
  tu_peer_close(&L);
}
END_TEST

/* ===========================================================================
 * Suite
 * ======================================================================== */

int main(void) {
  Suite *s = suite_create("task");
  TCase *t = tu_tcase(s, "wire", setup, teardown, 60);
  tcase_add_test(t, flags_are_checked_at_registration);
  tcase_add_test(t, task_support_listed_in_2025_11_25_only);
  tcase_add_test(t, capability_in_both_eras);
  tcase_add_test(t, wire_writes_tasks_from_facts);
  tcase_add_test(t, wire_writes_outcomes_between_its_own_braces);
  tcase_add_test(t, input_rounds_number_write_match_and_withdraw);
  t = tu_tcase(s, "modern", setup, teardown, 60);
  tcase_add_test(t, an_answer_at_once_is_no_task);
  tcase_add_test(t, a_deferred_call_becomes_a_task);
  tcase_add_test(t, tool_error_completes_and_protocol_error_fails);
  tcase_add_test(t, start_task_then_answer_at_once);
  tcase_add_test(t, input_through_tasks_update);
  tcase_add_test(t, input_through_tasks_update_after_its_session);
  tcase_add_test(t, partial_answers_and_keys_unique_over_the_task);
  tcase_add_test(t, cancel_acknowledges_and_settles);
  tcase_add_test(t, modern_refusals);
  tcase_add_test(t, status_reaches_listeners_that_asked);
  t = tu_tcase(s, "legacy", legacy_setup, legacy_teardown, 60);
  tcase_add_test(t, legacy_lifecycle);
  tcase_add_test(t, legacy_list_pages_and_cancel);
  tcase_add_test(t, legacy_list_cursors_stay_in_their_list);
  tcase_add_test(t, legacy_waiters_are_bounded);
  tcase_add_test(t, legacy_input_requests_carry_the_task);
  tcase_add_test(t, legacy_tasks_result_carries_input_requests);
  tcase_add_test(t, legacy_tool_error_fails_and_progress_is_related);
  tcase_add_test(t, legacy_refusals);
  tcase_add_test(t, a_task_outlives_its_session);
  tcase_add_test(t, a_task_call_keeps_its_caller_after_its_session);
  tcase_add_test(t, a_task_is_cancelled_after_its_session);
  tcase_add_test(t, a_legacy_task_asking_outlives_its_session);
  t = tu_tcase(s, "limits", setup, teardown, 60);
  tcase_add_test(t, limits_refuse_and_make_room);
  tcase_add_test(t, ttl_expiry_cancels_and_forgets);
  tcase_add_test(t, bytes_budget_refuses_and_makes_room);
  tcase_add_test(t, a_result_over_budget_fails_its_task);
  tcase_add_test(t, input_over_budget_fails_or_is_refused);
  tcase_add_test(t, count_refusals_name_their_limit);
  tcase_add_test(t, anonymous_sessions_have_budgets_of_their_own);
  tcase_add_test(t, a_refused_retry_frees_its_room);
  tcase_add_test(t, an_authorizer_sees_the_arguments_kept);
  tcase_add_test(t, status_message_and_misuse);
  t = tu_tcase(s, "threads", setup, teardown, 60);
  tcase_add_test(t, handed_to_an_executor_it_is_a_task);
  tcase_add_test(t, finishes_race_reads_and_cancels);
  tcase_add_test(t, becoming_a_task_races_cancellation_checks);
  tcase_add_test(t, a_task_call_outlives_its_server);
  t = tu_tcase(s, "cluster", cluster_setup, cluster_teardown, 60);
  tcase_add_test(t, another_node_answers_for_a_task);
  tcase_add_test(t, another_node_cancels_and_answers_input);
  tcase_add_test(t, listeners_on_another_node_hear_their_callers_tasks);
  tcase_add_test(t, legacy_sessions_on_another_node_list_and_read_tasks);
  tcase_add_test(t, a_lost_node_fails_its_tasks);
  tcase_add_test(t, a_result_waits_on_another_node_until_the_task_ends);
  tcase_add_test(t, a_result_waiting_on_another_node_sees_it_lost_or_expire);
  tcase_add_test(t, a_result_waiting_on_another_node_ends_with_its_session);
  tcase_add_test(t, a_result_waiting_on_another_node_ends_with_its_server);
  tcase_add_test(t, the_budgets_hold_across_nodes);
  tcase_add_test(t, an_admitted_task_grows_past_the_clusters_budget);
  tcase_add_test(t, a_task_settled_elsewhere_and_evicted_is_forgotten);
  tcase_add_test(t, an_evicted_key_is_not_written_anew);
  t = tu_tcase(s, "oom", NULL, NULL, 600);
  tcase_add_test(t, every_allocation_failing);
  tcase_add_test(t, every_allocation_failing_across_nodes);
  return tu_run(s);
}
