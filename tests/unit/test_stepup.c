/* Tests for step-up from a handler (lib/engine/stepup.c,
 * mcp_call_require_scopes): a call refused for a scope its arguments need
 * ends as the admission point's refusal does, in both eras, on the
 * receiving thread and when deferred, audited, with nothing of its result
 * sent. The HTTP answer (403 with the challenge) is tests/http's
 * test_http_auth e22_step_up_from_a_handler_is_the_same_403. */
#include <check.h>
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

static int g_done;
static mcp_decision g_decision;
static char g_missing[128];
static mcp_call *g_parked;

/* purge: another subject's notes need notes:admin. With "later" it
 * answers from mcp_call_finish, after a deferral. */
static int purge(mcp_call *call, void *user_data) {
  (void)user_data;
  const char *owner = "";
  bool later = false;
  mcp_call_arg_string(call, "owner", &owner);
  mcp_call_arg_bool(call, "later", &later);
  if (later && g_parked == NULL) {
    g_parked = call;
    return MCP_DEFERRED;
  }
  ck_assert_int_eq(mcp_result_text(call, "partial"), 0);
  const char *me = mcp_call_principal(call)->subject;
  if (strcmp(owner, me ? me : "") != 0) {
    int rc = mcp_call_require_scopes(call, "notes:admin");
    if (rc)
      return rc;
  }
  g_done++;
  return 0;
}

static void on_audit(const mcp_audit_record *r, void *user_data) {
  (void)user_data;
  g_decision = r->decision;
  g_missing[0] = '\0';
  for (const char *const *m = r->missing_scopes; m && *m; m++)
    snprintf(g_missing + strlen(g_missing),
             sizeof g_missing - strlen(g_missing), "%s ", *m);
}

static const char *const write_scope[] = {"notes:write", NULL};
static const char *const w[] = {"notes:write", NULL};
static const char *const wa[] = {"notes:write", "notes:admin", NULL};
static const mcp_principal writer = {.subject = "ada", .scopes = w};
static const mcp_principal admin = {.subject = "ada", .scopes = wa};

static mcp_server *new_server(void) {
  const mcp_server_info info = {.name = "stepup", .version = "1"};
  mcp_server *srv;
  ck_assert_int_eq(mcp_server_new(&info, &srv), 0);
  mcp_server_set_log(srv, tu_silent_log, NULL);
  mcp_server_set_audit(srv, on_audit, NULL);
  const mcp_tool t = {
      .name = "purge",
      .description = "Purges a subject's notes.",
      .input_schema = "{\"type\":\"object\",\"properties\":{\"owner\":{"
                      "\"type\":\"string\"},\"later\":{\"type\":\"boolean\"}}}",
      .scopes = write_scope,
      .annotations = {.read_only = MCP_HINT_FALSE,
                      .destructive = MCP_HINT_TRUE,
                      .idempotent = MCP_HINT_TRUE,
                      .open_world = MCP_HINT_FALSE},
      .handler = purge};
  ck_assert_int_eq(mcp_server_add_tool(srv, &t, NULL), 0);
  g_done = 0;
  g_parked = NULL;
  return srv;
}

/* The refusal, as the admission point writes it for a tool needing
 * notes:write and notes:admin. */
static void assert_refusal(const cJSON *m) {
  tu_assert_error(m, MCP_RPC_FORBIDDEN,
                  "Forbidden: insufficient scope; this tool needs "
                  "notes:admin");
  tu_assert_exact(tu_jget(m, "error.data"),
                  "{\"requiredScopes\":[\"notes:admin\"],\"scopes\":["
                  "\"notes:write\",\"notes:admin\"]}");
  char *text = cJSON_PrintUnformatted(m);
  ck_assert_ptr_null(strstr(text, "partial"));
  cJSON_free(text);
  ck_assert_int_eq(g_decision, MCP_DECISION_DENIED_SCOPE);
  ck_assert_str_eq(g_missing, "notes:admin ");
}

START_TEST(refused_in_both_eras_as_admission_refuses) {
  mcp_server *srv = new_server();
  tu_peer p;
  tu_peer_open(&p, srv, &writer);
  tu_initialize(&p, "2025-11-25");
  cJSON *m = tu_call_tool(&p, "1", "purge", "{\"owner\":\"bob\"}");
  assert_refusal(m);
  cJSON_Delete(m);
  tu_peer_close(&p);
  tu_peer_open(&p, srv, &writer);
  m = tu_ask(&p, tu_mcall(2, "purge", "{\"owner\":\"bob\"}", TU_META_NONE, NULL,
                          NULL));
  assert_refusal(m);
  cJSON_Delete(m);
  ck_assert_int_eq(g_done, 0);
  /* What needs no more runs; the scope lets it run. */
  m = tu_ask(&p, tu_mcall(3, "purge", "{\"owner\":\"ada\"}", TU_META_NONE, NULL,
                          NULL));
  ck_assert_ptr_nonnull(tu_jget(m, "result"));
  cJSON_Delete(m);
  ck_assert_int_eq(g_decision, MCP_DECISION_ALLOWED);
  tu_peer_close(&p);
  tu_peer_open(&p, srv, &admin);
  m = tu_ask(&p, tu_mcall(4, "purge", "{\"owner\":\"bob\"}", TU_META_NONE, NULL,
                          NULL));
  tu_assert_json(m, "{\"result\":{\"content\":[{\"text\":\"partial\"}]}}");
  cJSON_Delete(m);
  ck_assert_int_eq(g_done, 2);
  tu_peer_close(&p);
  mcp_server_free(srv);
}
END_TEST

START_TEST(refused_after_a_deferral) {
  mcp_server *srv = new_server();
  tu_peer p;
  tu_peer_open(&p, srv, &writer);
  tu_initialize(&p, "2025-11-25");
  tu_clear(&p);
  char *msg =
      tu_call_text("1", "purge", "{\"owner\":\"bob\",\"later\":true}", NULL);
  ck_assert_int_eq(tu_send(&p, msg), 0);
  free(msg);
  ck_assert_ptr_nonnull(g_parked);
  /* Finished from another round of the handler, as a daemon would. */
  ck_assert_int_eq(mcp_call_finish(g_parked, purge(g_parked, NULL)), 0);
  ck_assert_uint_eq(tu_wait(&p, 1, 2000), 1);
  cJSON *m = tu_msg(&p, 0);
  assert_refusal(m);
  cJSON_Delete(m);
  tu_peer_close(&p);
  mcp_server_free(srv);
}
END_TEST

/* Two refusals answered through one sink: a 2025-03-26 batch. */
START_TEST(refused_twice_in_a_batch) {
  mcp_server *srv = new_server();
  tu_peer p;
  tu_peer_open(&p, srv, &writer);
  tu_initialize(&p, "2025-03-26");
  cJSON *m = tu_request(
      &p, "[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":"
          "{\"name\":\"purge\",\"arguments\":{\"owner\":\"bob\"}}},"
          "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":"
          "{\"name\":\"purge\",\"arguments\":{\"owner\":\"eve\"}}}]");
  ck_assert_int_eq(cJSON_GetArraySize(m), 2);
  assert_refusal(cJSON_GetArrayItem(m, 0));
  assert_refusal(cJSON_GetArrayItem(m, 1));
  cJSON_Delete(m);
  tu_peer_close(&p);
  mcp_server_free(srv);
}
END_TEST

static int bad_args(mcp_call *call, void *user_data) {
  (void)user_data;
  ck_assert_int_eq(mcp_call_require_scopes(call, ""), MCP_EINVAL);
  ck_assert_int_eq(mcp_call_require_scopes(call, "   "), MCP_EINVAL);
  ck_assert_int_eq(mcp_call_require_scopes(call, "a\"b"), MCP_EINVAL);
  ck_assert_int_eq(mcp_call_require_scopes(call, NULL), MCP_EINVAL);
  ck_assert_int_eq(mcp_call_require_scopes(NULL, "x"), MCP_EINVAL);
  /* Held: nothing changes; several at once, spaces around. */
  ck_assert_int_eq(mcp_call_require_scopes(call, " notes:write  notes:write "),
                   0);
  return mcp_result_text(call, "kept");
}

START_TEST(bad_scope_lists_change_nothing) {
  mcp_server *srv = new_server();
  const mcp_tool t = {
      .name = "bad",
      .description = "Asks badly.",
      .annotations = {.read_only = MCP_HINT_TRUE, .open_world = MCP_HINT_FALSE},
      .handler = bad_args};
  ck_assert_int_eq(mcp_server_add_tool(srv, &t, NULL), 0);
  tu_peer p;
  tu_peer_open(&p, srv, &writer);
  cJSON *m = tu_ask(&p, tu_mcall(1, "bad", "{}", TU_META_NONE, NULL, NULL));
  tu_assert_json(m, "{\"result\":{\"content\":[{\"text\":\"kept\"}]}}");
  cJSON_Delete(m);
  tu_peer_close(&p);
  mcp_server_free(srv);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("stepup");
  TCase *tc = tcase_create("stepup");
  tcase_add_test(tc, refused_in_both_eras_as_admission_refuses);
  tcase_add_test(tc, refused_after_a_deferral);
  tcase_add_test(tc, refused_twice_in_a_batch);
  tcase_add_test(tc, bad_scope_lists_change_nothing);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return tu_run(suite()); }
