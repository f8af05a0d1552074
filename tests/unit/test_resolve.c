/* Tests for tool resolution (io.modelcontextprotocol/tool-resolution):
 * lib/methods/resolve.c (tools/resolve, its admission and error rows),
 * lib/registry/resolve.c (the conservative bound) and the marker and
 * capability it adds to tools/list, initialize and server/discover. */
#include <check.h>
#include <cjson/cJSON.h>
#include <stdio.h>
#include <string.h>

#include "testutil.h"

#define EXT "io.modelcontextprotocol/tool-resolution"
#define DECLARED "{\"extensions\":{\"" EXT "\":{}}}"
#define META_EXT TU_META(DECLARED)

static int g_handler_runs;
static int g_resolver_runs;
static char g_subject[64];
/* When set, the resolver answers this instead of reading the action. */
static const mcp_tool_annotations *g_answer;
static int g_resolver_rc;

static int handler(mcp_call *call, void *user_data) {
  (void)user_data;
  g_handler_runs++;
  return mcp_result_text(call, "done");
}

/* manage: read is read-only, append additive, delete destructive. */
static int resolve_manage(const cJSON *args, const mcp_principal *principal,
                          mcp_tool_annotations *hints, void *user_data) {
  (void)user_data;
  g_resolver_runs++;
  snprintf(g_subject, sizeof g_subject, "%s",
           principal->subject ? principal->subject : "");
  if (g_resolver_rc)
    return g_resolver_rc;
  if (g_answer) {
    *hints = *g_answer;
    return 0;
  }
  const char *action =
      cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(args, "action"));
  if (strcmp(action, "read") == 0) {
    hints->read_only = MCP_HINT_TRUE;
    hints->destructive = MCP_HINT_UNSET;
    hints->idempotent = MCP_HINT_UNSET;
  } else if (strcmp(action, "append") == 0) {
    hints->destructive = MCP_HINT_FALSE;
  }
  return 0;
}

static const char *const write_scope[] = {"files:write", NULL};

static const mcp_tool manage = {
    .name = "manage",
    .description = "Reads, appends to or deletes a file.",
    .input_schema =
        "{\"type\":\"object\",\"properties\":{\"action\":{\"enum\":[\"read\","
        "\"append\",\"delete\"]},\"path\":{\"type\":\"string\"}},"
        "\"required\":[\"action\",\"path\"],\"additionalProperties\":false}",
    .scopes = write_scope,
    .annotations = {.read_only = MCP_HINT_FALSE,
                    .destructive = MCP_HINT_TRUE,
                    .idempotent = MCP_HINT_FALSE,
                    .open_world = MCP_HINT_FALSE},
    .handler = handler,
    .meta = "{\"example.com/owner\":\"files\"}",
    .resolve = resolve_manage};

static const mcp_tool plain = {
    .name = "plain",
    .description = "A tool without a resolver.",
    .annotations = {.read_only = MCP_HINT_TRUE, .open_world = MCP_HINT_FALSE},
    .handler = handler};

static char g_log[512], g_warned[512];
static void keep_log(mcp_log_level level, const char *message, void *data) {
  (void)data;
  if (level >= MCP_LOG_ERROR)
    snprintf(g_log, sizeof g_log, "%s", message);
  else if (level == MCP_LOG_WARNING)
    snprintf(g_warned, sizeof g_warned, "%s", message);
}

static mcp_server *new_server(bool resolvable) {
  const mcp_server_info info = {.name = "resolve", .version = "1"};
  mcp_server *srv;
  ck_assert_int_eq(mcp_server_new(&info, &srv), 0);
  mcp_server_set_log(srv, keep_log, NULL);
  ck_assert_int_eq(mcp_server_add_tool(srv, &plain, NULL), 0);
  if (resolvable)
    ck_assert_int_eq(mcp_server_add_tool(srv, &manage, NULL), 0);
  g_handler_runs = g_resolver_runs = g_resolver_rc = 0;
  g_answer = NULL;
  g_log[0] = '\0';
  return srv;
}

static const char *const all[] = {"files:write", NULL};
static const mcp_principal writer = {.subject = "ada", .scopes = all};
static const mcp_principal reader = {.subject = "bob", .scopes = NULL};

/* A modern tools/resolve of manage with args, declaring the extension. */
static cJSON *resolve(tu_peer *p, const char *name, const char *args) {
  char extra[256];
  snprintf(extra, sizeof extra, "\"name\":\"%s\"%s%s", name,
           args ? ",\"arguments\":" : "", args ? args : "");
  return tu_ask(p, tu_mreq(1, "tools/resolve", META_EXT, extra));
}

START_TEST(resolves_each_action_without_running_the_tool) {
  mcp_server *srv = new_server(true);
  tu_peer p;
  tu_peer_open(&p, srv, &writer);
  static const struct {
    const char *args, *want;
  } rows[] = {
      {"{\"action\":\"read\",\"path\":\"a\"}",
       "{\"readOnlyHint\":true,\"destructiveHint\":false,"
       "\"idempotentHint\":true,\"openWorldHint\":false}"},
      {"{\"action\":\"append\",\"path\":\"a\"}",
       "{\"readOnlyHint\":false,\"destructiveHint\":false,"
       "\"idempotentHint\":false,\"openWorldHint\":false}"},
      {"{\"action\":\"delete\",\"path\":\"a\"}",
       "{\"readOnlyHint\":false,\"destructiveHint\":true,"
       "\"idempotentHint\":false,\"openWorldHint\":false}"},
  };
  for (size_t i = 0; i < TU_COUNT(rows); i++) {
    cJSON *m = resolve(&p, "manage", rows[i].args);
    tu_assert_json(m, "{\"result\":{\"resultType\":\"complete\","
                      "\"name\":\"manage\"}}");
    tu_assert_exact(tu_jget(m, "result.annotations"), rows[i].want);
    ck_assert_ptr_null(tu_jget(m, "result.annotations.title"));
    cJSON_Delete(m);
  }
  ck_assert_int_eq(g_resolver_runs, 3);
  ck_assert_int_eq(g_handler_runs, 0); /* never run */
  ck_assert_str_eq(g_subject, "ada");  /* the caller's principal */
  tu_peer_close(&p);
  mcp_server_free(srv);
}
END_TEST

START_TEST(legacy_session_negotiates_at_initialize) {
  mcp_server *srv = new_server(true);
  tu_peer p;
  tu_peer_open(&p, srv, &writer);
  tu_send(&p, "{\"jsonrpc\":\"2.0\",\"id\":\"init\",\"method\":\"initialize\","
              "\"params\":{\"protocolVersion\":\"2025-11-25\","
              "\"capabilities\":" DECLARED
              ",\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}}");
  cJSON *init = tu_msg(&p, 0);
  tu_assert_json(init, "{\"result\":{\"capabilities\":{\"extensions\":{\"" EXT
                       "\":{}}}}}");
  cJSON_Delete(init);
  tu_send(&p, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}");
  cJSON *m = tu_ask(&p, tu_req(2, "tools/resolve",
                               "{\"name\":\"manage\",\"arguments\":{\"action\":"
                               "\"read\",\"path\":\"x\"}}"));
  tu_assert_json(m, "{\"result\":{\"resultType\":\"complete\",\"name\":"
                    "\"manage\",\"annotations\":{\"readOnlyHint\":true}}}");
  cJSON_Delete(m);
  /* The session's declaration marks resolvable tools, and only those. */
  m = tu_ask(&p, tu_req(3, "tools/list", NULL));
  tu_assert_json(m, "{\"result\":{\"tools\":[{\"name\":\"plain\",\"_meta\":"
                    "\"<absent>\"},{\"name\":\"manage\",\"_meta\":{\"" EXT
                    "\":{\"resolvable\":true},\"example.com/owner\":"
                    "\"files\"}}]}}");
  cJSON_Delete(m);
  tu_peer_close(&p);
  mcp_server_free(srv);
}
END_TEST

START_TEST(undeclared_requests_get_missing_capability) {
  mcp_server *srv = new_server(true);
  tu_peer p;
  tu_peer_open(&p, srv, &writer);
  const char *extra = "\"name\":\"manage\",\"arguments\":{\"action\":\"read\","
                      "\"path\":\"x\"}";
  /* Modern: declared on an earlier request does not count. */
  cJSON *m = tu_ask(&p, tu_mreq(1, "tools/list", META_EXT, NULL));
  cJSON_Delete(m);
  m = tu_ask(&p, tu_mreq(2, "tools/resolve", TU_META_NONE, extra));
  tu_assert_error(m, -32021, EXT);
  tu_assert_json(m, "{\"error\":{\"data\":{\"requiredCapabilities\":{"
                    "\"extensions\":{\"" EXT "\":{}}}}}}");
  cJSON_Delete(m);
  /* A settings object this revision does not know. */
  m = tu_ask(
      &p, tu_mreq(3, "tools/resolve",
                  TU_META("{\"extensions\":{\"" EXT "\":{\"future\":true}}}"),
                  extra));
  tu_assert_error(m, -32021, NULL);
  cJSON_Delete(m);
  /* Without the declaration, tools/list carries no marker. */
  m = tu_ask(&p, tu_mreq(4, "tools/list", TU_META_NONE, NULL));
  const cJSON *meta = tu_jget(m, "result.tools.1._meta");
  ck_assert_ptr_null(tu_get(meta, EXT));
  ck_assert_str_eq(cJSON_GetStringValue(tu_get(meta, "example.com/owner")),
                   "files");
  cJSON_Delete(m);
  tu_peer_close(&p);
  /* Legacy: a session that did not declare it at initialize. */
  tu_peer_open(&p, srv, &writer);
  tu_initialize(&p, "2025-11-25");
  m = tu_ask(&p, tu_req(5, "tools/resolve",
                        "{\"name\":\"manage\","
                        "\"arguments\":{\"action\":"
                        "\"read\",\"path\":\"x\"}}"));
  tu_assert_error(m, -32021, NULL);
  cJSON_Delete(m);
  tu_peer_close(&p);
  ck_assert_int_eq(g_resolver_runs, 0);
  mcp_server_free(srv);
}
END_TEST

START_TEST(invalid_params_rows) {
  mcp_server *srv = new_server(true);
  tu_peer p;
  tu_peer_open(&p, srv, &writer);
  static const struct {
    const char *name, *args, *needle;
  } rows[] = {
      {"nope", "{}", "Unknown tool: nope"},
      {"plain", "{}", "tool plain is not resolvable"},
      {"manage", NULL, "needs arguments"},
      {"manage", "[]", "must be an object"},
      {"manage", "{\"action\":\"read\"}", "path"},
      {"manage", "{\"action\":\"burn\",\"path\":\"a\"}", "action"},
      {"manage", "{\"action\":\"read\",\"path\":\"a\",\"x\":1}", "x"},
  };
  for (size_t i = 0; i < TU_COUNT(rows); i++) {
    cJSON *m = resolve(&p, rows[i].name, rows[i].args);
    tu_assert_error(m, -32602, rows[i].needle);
    cJSON_Delete(m);
  }
  cJSON *m = tu_ask(&p, tu_mreq(9, "tools/resolve", META_EXT, NULL));
  tu_assert_error(m, -32602, "tools/resolve needs");
  cJSON_Delete(m);
  ck_assert_int_eq(g_resolver_runs, 0);
  ck_assert_int_eq(g_handler_runs, 0);
  tu_peer_close(&p);
  mcp_server_free(srv);
}
END_TEST

START_TEST(no_resolvable_tool_no_method) {
  mcp_server *srv = new_server(false);
  tu_peer p;
  tu_peer_open(&p, srv, &writer);
  cJSON *m = resolve(&p, "plain", "{}");
  tu_assert_error(m, -32601, NULL);
  cJSON_Delete(m);
  m = tu_ask(&p, tu_mreq(2, "server/discover", META_EXT, NULL));
  ck_assert_ptr_nonnull(tu_jget(m, "result.capabilities"));
  ck_assert_ptr_null(tu_get(tu_jget(m, "result.capabilities.extensions"), EXT));
  cJSON_Delete(m);
  tu_peer_close(&p);
  mcp_server_free(srv);
  /* With one, discovery advertises it. */
  srv = new_server(true);
  tu_peer_open(&p, srv, &writer);
  m = tu_ask(&p, tu_mreq(2, "server/discover", META_EXT, NULL));
  ck_assert_ptr_nonnull(
      tu_get(tu_jget(m, "result.capabilities.extensions"), EXT));
  cJSON_Delete(m);
  tu_peer_close(&p);
  mcp_server_free(srv);
}
END_TEST

/* Each answer looser than manage's static hints (writing, destructive,
 * not idempotent, closed-world), or not a set of hints at all. */
START_TEST(bound_refuses_looser_answers) {
  /* A second tool whose static hints are the tightest writing ones. */
  static const mcp_tool careful = {
      .name = "careful",
      .description = "Appends, idempotently.",
      .annotations = {.read_only = MCP_HINT_FALSE,
                      .destructive = MCP_HINT_FALSE,
                      .idempotent = MCP_HINT_TRUE,
                      .open_world = MCP_HINT_FALSE},
      .handler = handler,
      .resolve = resolve_manage};
  static const mcp_tool looker = {
      .name = "looker",
      .description = "Reads.",
      .annotations = {.read_only = MCP_HINT_TRUE, .open_world = MCP_HINT_FALSE},
      .handler = handler,
      .resolve = resolve_manage};
  static const struct {
    const char *tool;
    mcp_tool_annotations answer;
    const char *rule;
  } rows[] = {
      {"looker",
       {.read_only = MCP_HINT_FALSE,
        .destructive = MCP_HINT_FALSE,
        .idempotent = MCP_HINT_TRUE,
        .open_world = MCP_HINT_FALSE},
       "a read-only tool resolved writing"},
      {"careful",
       {.read_only = MCP_HINT_FALSE,
        .destructive = MCP_HINT_FALSE,
        .idempotent = MCP_HINT_TRUE,
        .open_world = MCP_HINT_TRUE},
       "a closed-world tool resolved open-world"},
      {"careful",
       {.read_only = MCP_HINT_FALSE,
        .destructive = MCP_HINT_TRUE,
        .idempotent = MCP_HINT_TRUE,
        .open_world = MCP_HINT_FALSE},
       "a non-destructive tool resolved destructive"},
      {"careful",
       {.read_only = MCP_HINT_FALSE,
        .destructive = MCP_HINT_FALSE,
        .idempotent = MCP_HINT_FALSE,
        .open_world = MCP_HINT_FALSE},
       "an idempotent tool resolved not idempotent"},
      {"careful",
       {.read_only = (mcp_hint)1,
        .destructive = MCP_HINT_FALSE,
        .idempotent = MCP_HINT_TRUE,
        .open_world = MCP_HINT_FALSE},
       "read_only and open_world must be"},
      {"careful",
       {.read_only = MCP_HINT_FALSE,
        .idempotent = MCP_HINT_TRUE,
        .open_world = MCP_HINT_FALSE},
       "a writing answer must state destructive and idempotent"},
      {"careful",
       {.read_only = MCP_HINT_TRUE,
        .destructive = MCP_HINT_TRUE,
        .open_world = MCP_HINT_FALSE},
       "a read-only answer cannot be destructive"},
      {"careful",
       {.read_only = MCP_HINT_TRUE,
        .idempotent = MCP_HINT_FALSE,
        .open_world = MCP_HINT_FALSE},
       "a read-only answer is idempotent"},
  };
  mcp_server *srv = new_server(true);
  ck_assert_int_eq(mcp_server_add_tool(srv, &careful, NULL), 0);
  ck_assert_int_eq(mcp_server_add_tool(srv, &looker, NULL), 0);
  tu_peer p;
  tu_peer_open(&p, srv, &writer);
  for (size_t i = 0; i < TU_COUNT(rows); i++) {
    g_answer = &rows[i].answer;
    g_log[0] = '\0';
    cJSON *m = resolve(&p, rows[i].tool, "{}");
    tu_assert_error(m, -32603, "Internal error");
    ck_assert_ptr_null(tu_jget(m, "error.data")); /* never sent */
    cJSON_Delete(m);
    ck_assert_msg(strstr(g_log, rows[i].tool) && strstr(g_log, rows[i].rule),
                  "row %zu: log %s", i, g_log);
  }
  /* A tighter answer than the static hints is fine. */
  static const mcp_tool_annotations tighter = {.read_only = MCP_HINT_TRUE,
                                               .open_world = MCP_HINT_FALSE};
  g_answer = &tighter;
  cJSON *m = resolve(&p, "careful", "{}");
  tu_assert_json(m, "{\"result\":{\"annotations\":{\"readOnlyHint\":true,"
                    "\"idempotentHint\":true}}}");
  cJSON_Delete(m);
  /* A resolver that cannot tell. */
  g_answer = NULL;
  g_resolver_rc = -5;
  m = resolve(&p, "manage", "{\"action\":\"read\",\"path\":\"a\"}");
  tu_assert_error(m, -32603, NULL);
  cJSON_Delete(m);
  ck_assert_ptr_nonnull(strstr(g_log, "resolver failed"));
  ck_assert_int_eq(g_handler_runs, 0);
  tu_peer_close(&p);
  mcp_server_free(srv);
}
END_TEST

/* Admitted as a tools/call of the tool: the same refusal, word for word. */
START_TEST(scope_refusal_is_the_calls) {
  mcp_server *srv = new_server(true);
  tu_peer p;
  tu_peer_open(&p, srv, &reader);
  const char *args = "{\"action\":\"read\",\"path\":\"a\"}";
  cJSON *r = resolve(&p, "manage", args);
  cJSON *c = tu_ask(&p, tu_mcall(1, "manage", args, META_EXT, NULL, NULL));
  tu_assert_error(r, MCP_RPC_FORBIDDEN, NULL);
  ck_assert(cJSON_Compare(tu_get(r, "error"), tu_get(c, "error"), true));
  cJSON_Delete(r);
  cJSON_Delete(c);
  ck_assert_int_eq(g_resolver_runs, 0);
  ck_assert_int_eq(g_handler_runs, 0);
  tu_peer_close(&p);
  mcp_server_free(srv);
}
END_TEST

/* A resolver on a read-only, closed-world tool has nothing to narrow. */
START_TEST(lint_warns_of_nothing_to_resolve) {
  mcp_server *srv = new_server(true);
  ck_assert_uint_eq(mcp_server_lint(srv, NULL), 0); /* manage writes */
  static const mcp_tool looker = {
      .name = "looker",
      .description = "Reads.",
      .annotations = {.read_only = MCP_HINT_TRUE, .open_world = MCP_HINT_FALSE},
      .handler = handler,
      .resolve = resolve_manage};
  ck_assert_int_eq(mcp_server_add_tool(srv, &looker, NULL), 0);
  g_warned[0] = '\0';
  ck_assert_uint_eq(mcp_server_lint(srv, NULL), 1);
  ck_assert_ptr_nonnull(strstr(g_warned, "\"looker\" has a resolver"));
  ck_assert_ptr_nonnull(strstr(g_warned, "nothing to resolve"));
  mcp_server_free(srv);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("resolve");
  TCase *tc = tcase_create("resolve");
  tcase_add_test(tc, resolves_each_action_without_running_the_tool);
  tcase_add_test(tc, legacy_session_negotiates_at_initialize);
  tcase_add_test(tc, undeclared_requests_get_missing_capability);
  tcase_add_test(tc, invalid_params_rows);
  tcase_add_test(tc, no_resolvable_tool_no_method);
  tcase_add_test(tc, bound_refuses_looser_answers);
  tcase_add_test(tc, scope_refusal_is_the_calls);
  tcase_add_test(tc, lint_warns_of_nothing_to_resolve);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return tu_run(suite()); }
