/* Tests for lib/methods/lifecycle.c's initialize, the legacy era's
 * handshake: the version agreed, serverInfo and instructions, the
 * capabilities this server announces, the params it refuses, and a second
 * initialize or one in a batch refused (server/discover is
 * unit/test_modern.c's; logging/setLevel unit/test_prompts_resources.c's).
 * The fixture is the engine suite's (engine_fixture.c): every captured
 * message is checked to be strict JSON. */
#include <check.h>
#include <cjson/cJSON.h>
#include <stdio.h>
#include <string.h>

#include "engine_fixture.h"

static void check_initialize(const char *asked, const char *answered) {
  char msg[400];
  snprintf(msg, sizeof msg,
           "{\"jsonrpc\":\"2.0\",\"id\":\"init\",\"method\":\"initialize\","
           "\"params\":{\"protocolVersion\":\"%s\",\"capabilities\":{},"
           "\"clientInfo\":{\"name\":\"c\",\"version\":\"0\"}}}",
           asked);
  reopen(NULL);
  ck_assert_ptr_null(mcp_session_protocol_version(P.session));
  send_ok(msg);
  EXPECT_COUNT(1);
  bool titled = strcmp(answered, "2025-06-18") >= 0;
  /* Extensions are declared from 2025-11-25: a server with a tool offers
   * trust annotations there. */
  bool extensions = strcmp(answered, "2025-11-25") >= 0;
  char expected[800];
  snprintf(expected, sizeof expected,
           "{\"jsonrpc\":\"2.0\",\"id\":\"init\",\"error\":\"<absent>\","
           "\"result\":{\"protocolVersion\":\"%s\",\"capabilities\":{"
           "\"tools\":{\"listChanged\":true},\"logging\":{}%s},"
           "\"serverInfo\":{\"name\":"
           "\"srv\",\"version\":\"1.2.3\",\"title\":%s},\"instructions\":"
           "\"Use it wisely.\"}}",
           answered,
           extensions ? ",\"extensions\":{\"io.modelcontextprotocol/"
                        "trust-annotations\":{}}"
                      : "",
           titled ? "\"Test Server\"" : "\"<absent>\"");
  EXPECT(0, expected);
  /* Only tools, with only listChanged, and logging (and the extension):
   * this server has no prompts, resources or completions to announce. */
  cJSON *m = tu_msg(&P, 0);
  const cJSON *r = cJSON_GetObjectItemCaseSensitive(m, "result");
  const cJSON *caps = cJSON_GetObjectItemCaseSensitive(r, "capabilities");
  ck_assert_int_eq(cJSON_GetArraySize(caps), extensions ? 3 : 2);
  ck_assert_int_eq(
      cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(caps, "tools")), 1);
  ck_assert_int_eq(cJSON_GetArraySize(r), 4);
  ck_assert_int_eq(
      cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(r, "serverInfo")),
      titled ? 3 : 2);
  cJSON_Delete(m);
  ck_assert_str_eq(mcp_session_protocol_version(P.session), answered);
  tu_clear(&P);
}

START_TEST(initialize_versions) {
  for (size_t v = 0; v < TU_COUNT(VERSIONS); v++)
    check_initialize(VERSIONS[v], VERSIONS[v]);
  /* Unknown versions get the latest. */
  check_initialize("1.0.0", "2025-11-25");
  check_initialize("2026-07-28", "2025-11-25");
  check_initialize("2025-11-2", "2025-11-25");
  check_initialize("", "2025-11-25");
}
END_TEST

START_TEST(initialize_without_optional_info) {
  mcp_server *bare;
  mcp_server_info info = {.name = "bare", .version = "0.1"};
  ck_assert_int_eq(mcp_server_new(&info, &bare), 0);
  tu_peer p2;
  tu_peer_open(&p2, bare, NULL);
  ck_assert_int_eq(
      tu_send(&p2, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\","
                   "\"params\":{\"protocolVersion\":\"2025-11-25\","
                   "\"capabilities\":{},\"clientInfo\":{\"name\":\"c\"}}}"),
      0);
  tu_assert_msg(&p2, 0,
                "{\"result\":{\"protocolVersion\":\"2025-11-25\","
                "\"serverInfo\":{\"name\":\"bare\",\"version\":\"0.1\","
                "\"title\":\"<absent>\"},\"instructions\":\"<absent>\"}}");
  tu_peer_close(&p2);
  mcp_server_free(bare);
}
END_TEST

START_TEST(initialize_bad_params) {
  static const char *const params[] = {
      NULL, /* no params at all */
      "{}",
      "{\"capabilities\":{},\"clientInfo\":{\"name\":\"c\"}}",
      "{\"protocolVersion\":20250618,\"capabilities\":{},\"clientInfo\":{"
      "\"name\":\"c\"}}",
      "{\"protocolVersion\":\"2025-06-18\",\"clientInfo\":{\"name\":\"c\"}}",
      "{\"protocolVersion\":\"2025-06-18\",\"capabilities\":[],\"clientInfo\":"
      "{\"name\":\"c\"}}",
      "{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{}}",
      "{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},\"clientInfo\":"
      "\"c\"}",
      "{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},\"clientInfo\":"
      "{}}",
      "{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},\"clientInfo\":"
      "{\"name\":7}}",
      "{\"ProtocolVersion\":\"2025-06-18\",\"capabilities\":{},\"clientInfo\":"
      "{\"name\":\"c\"}}",
  };
  for (size_t i = 0; i < TU_COUNT(params); i++) {
    char msg[400];
    snprintf(msg, sizeof msg,
             "{\"jsonrpc\":\"2.0\",\"id\":%zu,\"method\":\"initialize\"%s%s}",
             i + 10, params[i] ? ",\"params\":" : "",
             params[i] ? params[i] : "");
    tu_clear(&P);
    send_ok(msg);
    EXPECT_COUNT(1);
    char expected[120];
    snprintf(expected, sizeof expected,
             "{\"id\":%zu,\"result\":\"<absent>\",\"error\":{\"code\":-32602}}",
             i + 10);
    EXPECT(0, expected);
    /* Still not initialized. */
    ck_assert_ptr_null(mcp_session_protocol_version(P.session));
  }
  tu_clear(&P);
  send_ok("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}");
  EXPECT(0, "{\"id\":1,\"error\":{\"code\":-32600}}");
  /* The server is alive: a good initialize works. */
  tu_clear(&P);
  tu_initialize(&P, "2025-06-18");
  ck_assert_str_eq(mcp_session_protocol_version(P.session), "2025-06-18");
}
END_TEST

START_TEST(initialize_twice) {
  tu_initialize(&P, "2025-06-18");
  send_ok("{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"initialize\",\"params\":"
          "{\"protocolVersion\":\"2025-03-26\",\"capabilities\":{},"
          "\"clientInfo\":{\"name\":\"c\"}}}");
  EXPECT(0, "{\"id\":2,\"result\":\"<absent>\",\"error\":{\"code\":-32600}}");
  ck_assert_str_eq(mcp_session_protocol_version(P.session), "2025-06-18");
  /* Even a malformed second initialize is refused as a second one or for
   * its params, never accepted. */
  tu_clear(&P);
  send_ok("{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"initialize\"}");
  EXPECT(0, "{\"id\":3,\"result\":\"<absent>\",\"error\":\"<any>\"}");
}
END_TEST

START_TEST(initialize_in_batch) {
  tu_initialize(&P, "2025-03-26");
  send_ok("[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"},{\"jsonrpc\":"
          "\"2.0\",\"id\":2,\"method\":\"initialize\",\"params\":{"
          "\"protocolVersion\":\"2025-03-26\",\"capabilities\":{},"
          "\"clientInfo\":{\"name\":\"c\"}}}]");
  EXPECT_COUNT(1);
  EXPECT(0, "[{\"id\":1,\"result\":{}},{\"id\":2,\"error\":{\"code\":-32600,"
            "\"message\":\"<any>\"}}]");
  /* Refused because it is in a batch (the rule that also holds before the
   * session is initialized), not merely because it is a second one. */
  ck_assert_ptr_nonnull(strstr(P.out[0], "batch"));
}
END_TEST

static Suite *lifecycle_suite(void) {
  Suite *s = suite_create("lifecycle");
  TCase *t = tcase(s, "lifecycle");
  tcase_add_test(t, initialize_versions);
  tcase_add_test(t, initialize_without_optional_info);
  tcase_add_test(t, initialize_bad_params);
  tcase_add_test(t, initialize_twice);
  tcase_add_test(t, initialize_in_batch);
  return s;
}

int main(void) { return tu_run(lifecycle_suite()); }
