/* Tests for lib/engine/compat.c: each old name of a renamed function does
 * what its new name does, so a program written against the old names
 * keeps working for the minor version they are kept. */
#include <check.h>
#include <cjson/cJSON.h>
#include <string.h>

#include "testutil.h"

/* This suite calls the old names on purpose, to prove they still work;
 * their declarations carry MCP_DEPRECATED, so the warning every other
 * caller must see is silenced here, and only here. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

static char g_new_name[64], g_old_name[64];

/* Tool "new" builds its result with the new name, "old" with the old. */
static int handler(mcp_call *call, void *user_data) {
  (void)user_data;
  strncpy(g_new_name, mcp_call_name(call), sizeof g_new_name - 1);
  strncpy(g_old_name, mcp_call_tool(call), sizeof g_old_name - 1);
  cJSON *v = cJSON_CreateObject();
  cJSON_AddNumberToObject(v, "n", strcmp(g_new_name, "old") == 0 ? 1 : 2);
  int rc = strcmp(g_new_name, "old") == 0
               ? mcp_result_structured_json(call, v)
               : mcp_result_structured_cjson(call, v);
  cJSON_Delete(v);
  return rc;
}

static int complete(mcp_completion *c, void *user_data) {
  bool old = *(bool *)user_data;
  if (old)
    mcp_completion_total(c, 7);
  else
    mcp_completion_set_total(c, 9);
  return mcp_completion_add(c, "x");
}

static bool g_old;

START_TEST(old_names_do_what_new_names_do) {
  const mcp_server_info info = {.name = "compat", .version = "1"};
  mcp_server *srv;
  ck_assert_int_eq(mcp_server_new(&info, &srv), 0);
  mcp_server_set_log(srv, tu_silent_log, NULL);
  for (int i = 0; i < 2; i++) {
    const mcp_tool t = {.name = i ? "old" : "new",
                        .description = "Returns structured content.",
                        .annotations = {.read_only = MCP_HINT_TRUE,
                                        .open_world = MCP_HINT_FALSE},
                        .handler = handler};
    ck_assert_int_eq(mcp_server_add_tool(srv, &t, NULL), 0);
  }
  static const mcp_prompt_argument args[] = {{.name = "a"}, {.name = NULL}};
  const mcp_prompt p = {.name = "p",
                        .description = "A prompt.",
                        .arguments = args,
                        .handler = handler,
                        .complete = complete};
  ck_assert_int_eq(mcp_server_add_prompt(srv, &p, &g_old), 0);
  tu_peer P;
  tu_peer_open(&P, srv, NULL);
  tu_initialize(&P, "2025-11-25");

  cJSON *m = tu_ask(&P, tu_call_text("1", "new", "{}", NULL));
  tu_assert_json(m, "{\"result\":{\"structuredContent\":{\"n\":2}}}");
  cJSON_Delete(m);
  ck_assert_str_eq(g_old_name, "new");
  m = tu_ask(&P, tu_call_text("2", "old", "{}", NULL));
  tu_assert_json(m, "{\"result\":{\"structuredContent\":{\"n\":1}}}");
  cJSON_Delete(m);
  ck_assert_str_eq(g_new_name, "old");
  ck_assert_str_eq(g_old_name, "old");

  for (int old = 0; old < 2; old++) {
    g_old = old;
    m = tu_ask(&P, tu_text("{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":"
                           "\"completion/complete\",\"params\":{\"ref\":{"
                           "\"type\":\"ref/prompt\",\"name\":\"p\"},"
                           "\"argument\":{\"name\":\"a\",\"value\":\"\"}}}"));
    tu_assert_json(m, old ? "{\"result\":{\"completion\":{\"total\":7}}}"
                          : "{\"result\":{\"completion\":{\"total\":9}}}");
    cJSON_Delete(m);
  }

  /* No deadline anywhere: both names say there is nothing to wait for. */
  ck_assert_int_eq(mcp_server_next_expiry_ms(srv), -1);
  ck_assert_int_eq(mcp_server_timeout(srv), -1);
  ck_assert_int_eq(mcp_server_next_expiry_ms(NULL), -1);
  ck_assert_int_eq(mcp_server_timeout(NULL), -1);
  tu_peer_close(&P);
  mcp_server_free(srv);
}
END_TEST

#pragma GCC diagnostic pop

int main(void) {
  Suite *s = suite_create("compat");
  TCase *t = tcase_create("compat");
  tcase_add_test(t, old_names_do_what_new_names_do);
  suite_add_tcase(s, t);
  return tu_run(s);
}
