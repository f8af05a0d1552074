/* Tests for lib/methods/route.c: mcp_message_route, what the engine says
 * of a message's route to a transport. Its facts must be the dispatch
 * table's (walked row by row here, so a row added or changed there is
 * seen here without a copy to update), the era rule the session applies,
 * and the Mcp-Name rules of the modern transport. */
#include <check.h>
#include <cjson/cJSON.h>
#include <stdio.h>
#include <string.h>

#include "methods.h"
#include "testutil.h"

#define META_V "\"io.modelcontextprotocol/protocolVersion\""
#define META_CAPS "\"io.modelcontextprotocol/clientCapabilities\""
#define META_LEVEL "\"io.modelcontextprotocol/logLevel\""
#define MODERN_META "\"_meta\":{" META_V ":\"2026-07-28\"," META_CAPS ":{}}"

/* Parses text (which must parse) and routes it. */
static mcp_route route_of(const char *text, mcp_message **msg) {
  ck_assert_int_eq(mcp_message_parse(text, strlen(text), msg), 0);
  mcp_route r;
  memset(&r, 0xA5, sizeof r);
  ck_assert_int_eq(mcp_message_route(*msg, &r), 0);
  return r;
}

/* Every method of the table: its eras and whether it starts a call are
 * the row's, for a request; a notification of it starts nothing. */
START_TEST(every_row_of_the_table) {
  for (size_t i = 0; i < mcp__nmethods; i++) {
    const mcp__method *row = &mcp__methods[i];
    char text[256];
    snprintf(text, sizeof text,
             "{\"jsonrpc\":\"2.0\",\"id\":%zu,\"method\":\"%s\"}", i,
             row->name);
    mcp_message *msg;
    mcp_route r = route_of(text, &msg);
    ck_assert_str_eq(r.method, row->name);
    ck_assert(r.request);
    ck_assert(!r.batch);
    ck_assert_uint_eq(r.method_eras, row->eras);
    ck_assert_msg(r.starts_call == row->calls, "%s", row->name);
    ck_assert_uint_eq(r.calls, row->calls ? 1 : 0);
    ck_assert(r.initialize == (strcmp(row->name, "initialize") == 0));
    mcp_message_free(msg);

    snprintf(text, sizeof text, "{\"jsonrpc\":\"2.0\",\"method\":\"%s\"}",
             row->name);
    r = route_of(text, &msg);
    ck_assert(!r.request);
    ck_assert(!r.starts_call);
    ck_assert(!r.initialize);
    ck_assert_uint_eq(r.calls, 0);
    ck_assert_uint_eq(r.method_eras, row->eras);
    mcp_message_free(msg);
  }
}
END_TEST

/* A method the engine does not serve exists in no era and starts nothing;
 * a message without a string method has no route. */
START_TEST(unknown_and_methodless) {
  mcp_message *msg;
  mcp_route r = route_of(
      "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/Call\"}", &msg);
  ck_assert_str_eq(r.method, "tools/Call");
  ck_assert_uint_eq(r.method_eras, 0);
  ck_assert(!r.starts_call);
  ck_assert_uint_eq(r.era, MCP_ERA_LEGACY);
  ck_assert_ptr_null(r.name_member);
  mcp_message_free(msg);

  const char *none[] = {
      "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}",
      "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":7}",
      "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":null}",
      "{\"jsonrpc\":\"2.0\",\"id\":1}",
      "\"tools/call\"",
      "42",
  };
  for (size_t i = 0; i < TU_COUNT(none); i++) {
    r = route_of(none[i], &msg);
    ck_assert_ptr_null(r.method);
    ck_assert(!r.request && !r.batch && !r.starts_call && !r.initialize);
    ck_assert_uint_eq(r.era, 0);
    ck_assert_uint_eq(r.method_eras, 0);
    ck_assert_uint_eq(r.calls, 0);
    ck_assert_ptr_null(r.meta_version);
    ck_assert_ptr_null(r.name_member);
    ck_assert_ptr_null(r.name);
    mcp_message_free(msg);
  }
}
END_TEST

/* The era a message is served in, as the session decides it. */
START_TEST(eras) {
  static const struct {
    const char *params; /* NULL: no params */
    const char *method;
    unsigned era;
  } cases[] = {
      {NULL, "tools/list", MCP_ERA_LEGACY},
      {"{}", "tools/list", MCP_ERA_LEGACY},
      {"{\"_meta\":{}}", "tools/list", MCP_ERA_LEGACY},
      {"{\"_meta\":[]}", "tools/list", MCP_ERA_LEGACY},
      {"{\"_meta\":{" META_LEVEL ":\"info\"}}", "tools/list", MCP_ERA_LEGACY},
      {"{\"_meta\":{" META_V ":\"2026-07-28\"}}", "tools/list", MCP_ERA_MODERN},
      {"{\"_meta\":{" META_V ":\"2025-06-18\"}}", "tools/list", MCP_ERA_MODERN},
      {"{\"_meta\":{" META_V ":1}}", "tools/list", MCP_ERA_MODERN},
      {"{\"_meta\":{" META_CAPS ":{}}}", "tools/list", MCP_ERA_MODERN},
      {"{" MODERN_META "}", "tools/call", MCP_ERA_MODERN},
      {NULL, "server/discover", MCP_ERA_MODERN},
      /* A method of the modern era alone is not modern without _meta. */
      {NULL, "subscriptions/listen", MCP_ERA_LEGACY},
      {NULL, "tasks/update", MCP_ERA_LEGACY},
      /* initialize is legacy unless its _meta names a version. */
      {"{\"protocolVersion\":\"2025-11-25\"}", "initialize", MCP_ERA_LEGACY},
      {"{\"_meta\":{" META_CAPS ":{}}}", "initialize", MCP_ERA_LEGACY},
      {"{\"_meta\":{" META_V ":\"2026-07-28\"}}", "initialize", MCP_ERA_MODERN},
  };
  for (size_t i = 0; i < TU_COUNT(cases); i++) {
    char text[512];
    if (cases[i].params)
      snprintf(text, sizeof text,
               "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"%s\","
               "\"params\":%s}",
               cases[i].method, cases[i].params);
    else
      snprintf(text, sizeof text,
               "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"%s\"}",
               cases[i].method);
    mcp_message *msg;
    mcp_route r = route_of(text, &msg);
    ck_assert_msg(r.era == cases[i].era, "case %zu (%s): era %u", i, text,
                  r.era);
    mcp_message_free(msg);
  }
}
END_TEST

/* The era rule reads the table, row by row: a request without _meta is
 * modern exactly when its row is modern_bare; client capabilities alone
 * make it modern unless the row is the handshake; a named version always
 * does. The handshake is one row, initialize's. A column set on another
 * row changes what this expects with it, never a list kept here. */
START_TEST(eras_from_the_table) {
  size_t handshakes = 0, bare = 0;
  for (size_t i = 0; i < mcp__nmethods; i++) {
    const mcp__method *row = &mcp__methods[i];
    static const char *const params[] = {NULL, "{\"_meta\":{" META_CAPS ":{}}}",
                                         "{\"_meta\":{" META_V
                                         ":\"2026-07-28\"}}"};
    const unsigned want[] = {
        row->modern_bare && !row->handshake ? MCP_ERA_MODERN : MCP_ERA_LEGACY,
        row->handshake ? MCP_ERA_LEGACY : MCP_ERA_MODERN, MCP_ERA_MODERN};
    for (size_t k = 0; k < TU_COUNT(params); k++) {
      char text[512];
      snprintf(text, sizeof text,
               "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"%s\"%s%s}",
               row->name, params[k] ? ",\"params\":" : "",
               params[k] ? params[k] : "");
      mcp_message *msg;
      mcp_route r = route_of(text, &msg);
      ck_assert_msg(r.era == want[k], "%s, case %zu: era %u", row->name, k,
                    r.era);
      ck_assert_uint_eq(mcp__method_era(row, NULL) == MCP__ERA_MODERN,
                        want[0] == MCP_ERA_MODERN);
      ck_assert(r.initialize == row->handshake);
      mcp_message_free(msg);
    }
    handshakes += row->handshake;
    bare += want[0] == MCP_ERA_MODERN;
  }
  ck_assert_uint_eq(handshakes, 1);
  ck_assert(mcp__method_find("initialize")->handshake);
  ck_assert_uint_ge(bare, 1);
  /* A method the table does not hold: modern only by its _meta. */
  ck_assert_uint_eq(mcp__method_era(NULL, NULL), MCP__ERA_LEGACY);
}
END_TEST

/* The modern era's _meta: the version when a string, and whether all it
 * requires is there. */
START_TEST(modern_meta) {
  static const struct {
    const char *meta;
    const char *version; /* NULL: none */
    bool complete;
  } cases[] = {
      {META_V ":\"2026-07-28\"," META_CAPS ":{}", "2026-07-28", true},
      {META_V ":\"2026-07-28\"," META_CAPS ":{}," META_LEVEL ":\"debug\"",
       "2026-07-28", true},
      {META_V ":\"2026-07-28\"," META_CAPS ":{}," META_LEVEL ":3", "2026-07-28",
       false},
      {META_V ":\"2026-07-28\"," META_CAPS ":[]", "2026-07-28", false},
      {META_V ":\"2026-07-28\"", "2026-07-28", false},
      {META_V ":7," META_CAPS ":{}", NULL, false},
      {META_CAPS ":{}", NULL, false},
      {"", NULL, false},
  };
  for (size_t i = 0; i < TU_COUNT(cases); i++) {
    char text[512];
    snprintf(text, sizeof text,
             "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\","
             "\"params\":{\"_meta\":{%s}}}",
             cases[i].meta);
    mcp_message *msg;
    mcp_route r = route_of(text, &msg);
    if (cases[i].version)
      ck_assert_str_eq(r.meta_version, cases[i].version);
    else
      ck_assert_ptr_null(r.meta_version);
    ck_assert_msg(r.meta_complete == cases[i].complete, "case %zu", i);
    mcp_message_free(msg);
  }
}
END_TEST

/* The Mcp-Name rules: the member each method's header carries, found in
 * the message; every such method is served by the table in the modern
 * era; other methods carry none. */
START_TEST(mcp_name_rules) {
  static const struct {
    const char *method, *member, *description;
  } rules[] = {
      {"tools/call", "name", "the tool's name"},
      {"prompts/get", "name", "the prompt's name"},
      {"resources/read", "uri", "the resource's URI"},
      {"tasks/get", "taskId", "the task id"},
      {"tasks/update", "taskId", "the task id"},
      {"tasks/cancel", "taskId", "the task id"},
  };
  for (size_t i = 0; i < TU_COUNT(rules); i++) {
    const mcp__method *row = mcp__method_find(rules[i].method);
    ck_assert_ptr_nonnull(row);
    ck_assert(row->eras & MCP__ERA_MODERN);
    char text[512];
    snprintf(text, sizeof text,
             "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"%s\",\"params\":{"
             "\"%s\":\"x-%zu\"," MODERN_META "}}",
             rules[i].method, rules[i].member, i);
    mcp_message *msg;
    mcp_route r = route_of(text, &msg);
    ck_assert_str_eq(r.name_member, rules[i].member);
    ck_assert_str_eq(r.name_description, rules[i].description);
    ck_assert(cJSON_IsString(r.name));
    char want[16];
    snprintf(want, sizeof want, "x-%zu", i);
    ck_assert_str_eq(r.name->valuestring, want);
    mcp_message_free(msg);

    /* Absent, or not a string: the rule stands, the name is what is
     * there. */
    snprintf(text, sizeof text,
             "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"%s\",\"params\":{"
             "\"%s\":5}}",
             rules[i].method,
             strcmp(rules[i].member, "name") == 0 ? "Name" : rules[i].member);
    r = route_of(text, &msg);
    ck_assert_str_eq(r.name_member, rules[i].member);
    if (strcmp(rules[i].member, "name") == 0)
      ck_assert_ptr_null(r.name);
    else
      ck_assert(cJSON_IsNumber(r.name));
    mcp_message_free(msg);
  }
  size_t with_rule = 0;
  for (size_t i = 0; i < mcp__nmethods; i++) {
    char text[256];
    snprintf(text, sizeof text,
             "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"%s\","
             "\"params\":{\"name\":\"n\",\"uri\":\"u\",\"taskId\":\"t\"}}",
             mcp__methods[i].name);
    mcp_message *msg;
    mcp_route r = route_of(text, &msg);
    bool listed = false;
    for (size_t k = 0; k < TU_COUNT(rules); k++)
      listed |= strcmp(rules[k].method, mcp__methods[i].name) == 0;
    ck_assert_msg(listed == (r.name_member != NULL), "%s",
                  mcp__methods[i].name);
    with_rule += listed;
    if (!listed) {
      ck_assert_ptr_null(r.name_description);
      ck_assert_ptr_null(r.name);
    }
    mcp_message_free(msg);
  }
  ck_assert_uint_eq(with_rule, TU_COUNT(rules));
  /* The table holds these rules and no other. */
  size_t named = 0;
  for (size_t k = 0; k < mcp__nmethods; k++)
    named += mcp__methods[k].name_member != NULL;
  ck_assert_uint_eq(named, TU_COUNT(rules));
}
END_TEST

/* A batch: no method or era of its own; the calls of its elements are
 * counted (requests only). */
START_TEST(batches) {
  mcp_message *msg;
  mcp_route r =
      route_of("[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\"},"
               "{\"jsonrpc\":\"2.0\",\"method\":\"tools/call\"},"
               "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"prompts/get\"},"
               "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"resources/read\"},"
               "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/list\"},"
               "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"Tools/call\"},"
               "{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":1},"
               "{\"jsonrpc\":\"2.0\",\"id\":null,\"method\":\"tools/call\"},"
               "7]",
               &msg);
  ck_assert(r.batch);
  ck_assert_ptr_null(r.method);
  ck_assert(!r.request && !r.starts_call && !r.initialize);
  ck_assert_uint_eq(r.era, 0);
  ck_assert_uint_eq(r.calls, 4);
  mcp_message_free(msg);

  r = route_of("[]", &msg);
  ck_assert(r.batch);
  ck_assert_uint_eq(r.calls, 0);
  mcp_message_free(msg);
}
END_TEST

/* A request whose id is null still has an id (an invalid one the session
 * answers): it is a request, and starts a call as the session sees it. */
START_TEST(null_id_is_a_request) {
  mcp_message *msg;
  mcp_route r = route_of(
      "{\"jsonrpc\":\"2.0\",\"id\":null,\"method\":\"tools/call\"}", &msg);
  ck_assert(r.request);
  ck_assert(r.starts_call);
  ck_assert_uint_eq(r.calls, 1);
  mcp_message_free(msg);
}
END_TEST

START_TEST(invalid_arguments) {
  mcp_message *msg;
  mcp_route r;
  memset(&r, 0x5A, sizeof r);
  mcp_route before = r;
  ck_assert_int_eq(mcp_message_route(NULL, &r), MCP_EINVAL);
  ck_assert(memcmp(&r, &before, sizeof r) == 0);
  ck_assert_int_eq(mcp_message_parse("{}", 2, &msg), 0);
  ck_assert_int_eq(mcp_message_route(msg, NULL), MCP_EINVAL);
  mcp_message_free(msg);
}
END_TEST

static Suite *route_suite(void) {
  Suite *s = suite_create("route");
  TCase *t = tcase_create("route");
  tcase_add_test(t, every_row_of_the_table);
  tcase_add_test(t, unknown_and_methodless);
  tcase_add_test(t, eras);
  tcase_add_test(t, eras_from_the_table);
  tcase_add_test(t, modern_meta);
  tcase_add_test(t, mcp_name_rules);
  tcase_add_test(t, batches);
  tcase_add_test(t, null_id_is_a_request);
  tcase_add_test(t, invalid_arguments);
  suite_add_tcase(s, t);
  return s;
}

int main(void) { return tu_run(route_suite()); }
