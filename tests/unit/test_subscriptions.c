/* Tests for lib/methods/subscriptions.c: the legacy era's
 * resources/subscribe and unsubscribe with notifications/resources/updated,
 * the modern era's subscriptions/listen with its acknowledgement and tagged
 * notifications, list_changed to the sessions and listeners that asked for
 * it (server.c's broadcasts), and changes made from another thread while
 * listeners come and go. Prompts and resources themselves are
 * unit/test_prompts_resources.c's; the fixture both share is
 * common/entries.c.
 *
 * Only the public API is used: sessions are driven with strings and every
 * reply is parsed with cJSON and compared member by member. Every captured
 * message is checked to be JSON (an object, or a batch's array) without a
 * raw newline. */
#include <check.h>
#include <cjson/cJSON.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "entries.h"

/* ---- requests ------------------------------------------------------------ */

#define SUB "io.modelcontextprotocol/subscriptionId"

/* ---- a sink, for receive_to -------------------------------------------- */

typedef struct sink {
  char *msgs[300];
  size_t n;
  int done;
} sink;

static int sink_send(const char *msg, size_t len, void *user_data) {
  sink *k = user_data;
  ck_assert_msg(k->done == 0, "a message after done: %.*s",
                (int)(len > 200 ? 200 : len), msg);
  ck_assert_uint_lt(k->n, TU_COUNT(k->msgs));
  char *c = malloc(len + 1);
  ck_assert_ptr_nonnull(c);
  memcpy(c, msg, len);
  c[len] = '\0';
  k->msgs[k->n++] = c;
  return 0;
}

static void sink_done(void *user_data) {
  sink *k = user_data;
  k->done++;
}

/* Frees what k captured and makes it new. */
static void sink_free(sink *k) {
  for (size_t i = 0; i < k->n; i++)
    free(k->msgs[i]);
  *k = (sink){0};
}

/* Feeds msg (freed) to p's session with its messages going to k. */
static int send_to(tu_peer *p, char *msg, sink *k) {
  mcp_sink s = {.send = sink_send, .done = sink_done, .user_data = k};
  int rc = mcp_session_receive_to(p->session, msg, strlen(msg), &s);
  free(msg);
  return rc;
}

/* Asserts the i-th message of k matches expected. */
#define EXPECT_SINK(k, i, expected)                                            \
  expect_sink_at(__FILE__, __LINE__, (k), (i), (expected))
static void expect_sink_at(const char *file, int line, const sink *k, size_t i,
                           const char *expected) {
  ck_assert_msg(i < k->n, "%s:%d: message %zu not sent (%zu sent)", file, line,
                i, k->n);
  cJSON *m = cJSON_Parse(k->msgs[i]);
  ck_assert_msg(m != NULL, "%s:%d: not JSON: %s", file, line, k->msgs[i]);
  tu_assert_exact_at(file, line, m, expected);
  cJSON_Delete(m);
}

/* ===========================================================================
 * Legacy subscriptions
 * ======================================================================== */

#define SUBSCRIBE(id, uri)                                                     \
  tu_req((id), "resources/subscribe", "{\"uri\":\"" uri "\"}")
#define UNSUBSCRIBE(id, uri)                                                   \
  tu_req((id), "resources/unsubscribe", "{\"uri\":\"" uri "\"}")

static const char UPDATED_README[] =
    "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/resources/updated\","
    "\"params\":{\"uri\":\"file:///readme\"}}";

START_TEST(legacy_subscribe_and_updated) {
  /* Before initialize, and in the modern era, there is no such method. */
  cJSON *r = tu_ask(&P, SUBSCRIBE(1, "file:///readme"));
  tu_assert_error(r, -32600, "initialize");
  cJSON_Delete(r);
  r = tu_ask(&P, tu_mreq(2, "resources/subscribe", TU_META_NONE,
                         "\"uri\":\"file:///readme\""));
  tu_assert_error(r, -32601, "resources/subscribe");
  cJSON_Delete(r);
  tu_legacy_init(&P, "2025-11-25", "{}");
  tu_peer q, fresh;
  tu_peer_open_with(&q, srv, &ALICE, inspect);
  tu_legacy_init(&q, "2025-06-18", "{}");
  tu_peer_open_with(&fresh, srv, &ALICE, inspect);

  r = tu_ask(&P, SUBSCRIBE(3, "file:///readme"));
  tu_assert_exact(r, "{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{}}");
  cJSON_Delete(r);
  /* Twice is once. */
  r = tu_ask(&P, SUBSCRIBE(4, "file:///readme"));
  tu_assert_exact(r, "{\"jsonrpc\":\"2.0\",\"id\":4,\"result\":{}}");
  cJSON_Delete(r);
  tu_clear(&P);
  ck_assert_int_eq(mcp_server_resource_updated(srv, "file:///readme"), 1);
  ck_assert_uint_eq(P.nout, 1);
  cJSON *m = tu_msg(&P, 0);
  tu_assert_exact(m, UPDATED_README);
  cJSON_Delete(m);
  ck_assert_uint_eq(q.nout, 0);
  ck_assert_uint_eq(fresh.nout, 0);
  /* Another URI reaches nobody. */
  tu_clear(&P);
  ck_assert_int_eq(mcp_server_resource_updated(srv, "file:///logo.png"), 0);
  ck_assert_int_eq(mcp_server_resource_updated(srv, "file:///readme/"), 0);
  ck_assert_uint_eq(P.nout, 0);
  /* A URI of a template, or of nothing registered, may be watched. */
  r = tu_ask(&q, SUBSCRIBE(5, "file:///readme"));
  cJSON_Delete(r);
  r = tu_ask(&q, SUBSCRIBE(6, "file:///notes/a"));
  cJSON_Delete(r);
  tu_clear(&P);
  tu_clear(&q);
  ck_assert_int_eq(mcp_server_resource_updated(srv, "file:///readme"), 2);
  ck_assert_uint_eq(P.nout, 1);
  ck_assert_uint_eq(q.nout, 1);
  m = tu_msg(&q, 0);
  tu_assert_exact(m, UPDATED_README);
  cJSON_Delete(m);
  ck_assert_int_eq(mcp_server_resource_updated(srv, "file:///notes/a"), 1);
  /* Unsubscribing stops it; unsubscribing what is not watched is fine. */
  r = tu_ask(&P, UNSUBSCRIBE(7, "file:///readme"));
  tu_assert_exact(r, "{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{}}");
  cJSON_Delete(r);
  r = tu_ask(&P, UNSUBSCRIBE(8, "file:///readme"));
  tu_assert_exact(r, "{\"jsonrpc\":\"2.0\",\"id\":8,\"result\":{}}");
  cJSON_Delete(r);
  tu_clear(&P);
  tu_clear(&q);
  ck_assert_int_eq(mcp_server_resource_updated(srv, "file:///readme"), 1);
  ck_assert_uint_eq(P.nout, 0);
  ck_assert_uint_eq(q.nout, 1);
  /* A closed session is told nothing. */
  tu_peer_close(&q);
  ck_assert_int_eq(mcp_server_resource_updated(srv, "file:///readme"), 0);
  /* Bad URIs. */
  static const char *const bad[] = {"{}", "{\"uri\":1}", "{\"uri\":\"\"}",
                                    "{\"uri\":\"a\\u0007\"}"};
  for (size_t i = 0; i < TU_COUNT(bad); i++) {
    r = tu_ask(&P, tu_req(9, "resources/subscribe", bad[i]));
    tu_assert_error(r, -32602, "uri");
    cJSON_Delete(r);
  }
  ck_assert_int_eq(mcp_server_resource_updated(srv, "file:///\xff"),
                   MCP_EINVAL);
  tu_peer_close(&fresh);
}
END_TEST

/* Serves file:///r/<n>, the URIs of the limit tests: a subscription needs
 * a resource behind it. */
static void serve_r(void) {
  static const mcp_resource r = {
      .uri_template = "file:///r/{n}", .name = "r", .handler = h_entry};
  ck_assert_int_eq(mcp_server_add_resource(srv, &r, NULL), 0);
}

START_TEST(legacy_subscribe_limit) {
  serve_r();
  tu_legacy_init(&P, "2025-11-25", "{}");
  for (int i = 0; i < 256; i++) {
    char *params = tu_text("{\"uri\":\"file:///r/%d\"}", i);
    cJSON *r = tu_ask(&P, tu_req(i + 1, "resources/subscribe", params));
    free(params);
    tu_assert_json(r, "{\"result\":{}}");
    cJSON_Delete(r);
  }
  cJSON *r = tu_ask(&P, SUBSCRIBE(1000, "file:///r/256"));
  tu_assert_error(r, -32602, "256");
  cJSON_Delete(r);
  /* What is watched stays watched; a repeat is no new one. */
  r = tu_ask(&P, SUBSCRIBE(1001, "file:///r/7"));
  tu_assert_json(r, "{\"result\":{}}");
  cJSON_Delete(r);
  tu_clear(&P);
  ck_assert_int_eq(mcp_server_resource_updated(srv, "file:///r/255"), 1);
  ck_assert_int_eq(mcp_server_resource_updated(srv, "file:///r/256"), 0);
  /* Room again after an unsubscribe. */
  r = tu_ask(&P, UNSUBSCRIBE(1002, "file:///r/0"));
  cJSON_Delete(r);
  r = tu_ask(&P, SUBSCRIBE(1003, "file:///r/256"));
  tu_assert_json(r, "{\"result\":{}}");
  cJSON_Delete(r);
  r = tu_ask(&P, SUBSCRIBE(1004, "file:///r/257"));
  tu_assert_error(r, -32602, NULL);
  cJSON_Delete(r);
  tu_clear(&P);
  ck_assert_int_eq(mcp_server_resource_updated(srv, "file:///r/0"), 0);
  ck_assert_int_eq(mcp_server_resource_updated(srv, "file:///r/256"), 1);
}
END_TEST

/* ===========================================================================
 * list_changed
 * ======================================================================== */

/* Checks that P received exactly the notification method (NULL: nothing)
 * and the other peers nothing, then forgets P's messages. */
static void expect_changed(tu_peer *others[], size_t nothers,
                           const char *method) {
  if (method == NULL) {
    ck_assert_uint_eq(P.nout, 0);
  } else {
    ck_assert_uint_eq(P.nout, 1);
    cJSON *m = tu_msg(&P, 0);
    char *expected = tu_text("{\"jsonrpc\":\"2.0\",\"method\":\"%s\"}", method);
    tu_assert_exact(m, expected);
    free(expected);
    cJSON_Delete(m);
  }
  for (size_t i = 0; i < nothers; i++)
    ck_assert_uint_eq(others[i]->nout, 0);
  tu_clear(&P);
}

START_TEST(list_changed_to_ready_legacy_sessions) {
  tu_legacy_init(&P, "2025-11-25", "{}");
  tu_peer half, fresh, modern;
  /* Initialized without notifications/initialized: not ready yet. */
  tu_peer_open_with(&half, srv, &ALICE, inspect);
  ck_assert_int_eq(
      tu_send(&half, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\","
                     "\"params\":{\"protocolVersion\":\"2025-11-25\","
                     "\"capabilities\":{},\"clientInfo\":{\"name\":\"c\"}}}"),
      0);
  tu_clear(&half);
  tu_peer_open_with(&fresh, srv, &ALICE, inspect);
  tu_peer_open_with(&modern, srv, &ALICE, inspect);
  cJSON *r = tu_ask(&modern, tu_mreq(1, "server/discover", TU_META_NONE, NULL));
  cJSON_Delete(r);
  tu_clear(&modern);
  tu_peer *others[] = {&half, &fresh, &modern};
  size_t n = TU_COUNT(others);

  mcp_tool tool = TOOL_RUN;
  tool.name = "extra";
  ck_assert_int_eq(mcp_server_add_tool(srv, &tool, NULL), 0);
  expect_changed(others, n, "notifications/tools/list_changed");
  ck_assert_int_eq(mcp_server_add_tool(srv, &tool, NULL), MCP_EEXIST);
  expect_changed(others, n, NULL);
  ck_assert_int_eq(mcp_server_remove_tool(srv, "extra"), 0);
  expect_changed(others, n, "notifications/tools/list_changed");
  ck_assert_int_eq(mcp_server_remove_tool(srv, "extra"), MCP_ENOENT);
  expect_changed(others, n, NULL);

  mcp_prompt prompt = {.name = "p9", .description = "d", .handler = h_entry};
  ck_assert_int_eq(mcp_server_add_prompt(srv, &prompt, &g_runs), 0);
  expect_changed(others, n, "notifications/prompts/list_changed");
  prompt.description = NULL;
  ck_assert_int_eq(mcp_server_add_prompt(srv, &prompt, &g_runs), MCP_EINVAL);
  expect_changed(others, n, NULL);
  ck_assert_int_eq(mcp_server_remove_prompt(srv, "p9"), 0);
  expect_changed(others, n, "notifications/prompts/list_changed");
  ck_assert_int_eq(mcp_server_remove_prompt(srv, "p9"), MCP_ENOENT);
  expect_changed(others, n, NULL);

  mcp_resource res = {.uri = "file:///new", .name = "new", .handler = h_entry};
  ck_assert_int_eq(mcp_server_add_resource(srv, &res, &g_runs), 0);
  expect_changed(others, n, "notifications/resources/list_changed");
  mcp_resource tmpl = {
      .uri_template = "file:///new/{x}", .name = "new", .handler = h_entry};
  ck_assert_int_eq(mcp_server_add_resource(srv, &tmpl, &g_runs), 0);
  expect_changed(others, n, "notifications/resources/list_changed");
  ck_assert_int_eq(mcp_server_add_resource(srv, &tmpl, &g_runs), MCP_EEXIST);
  expect_changed(others, n, NULL);
  ck_assert_int_eq(mcp_server_remove_resource(srv, "file:///new"), 0);
  expect_changed(others, n, "notifications/resources/list_changed");
  ck_assert_int_eq(mcp_server_remove_resource(srv, "file:///new/{x}"), 0);
  expect_changed(others, n, "notifications/resources/list_changed");
  ck_assert_int_eq(mcp_server_remove_resource(srv, "file:///new/{x}"),
                   MCP_ENOENT);
  expect_changed(others, n, NULL);
  /* A contents change without subscribers tells nobody. */
  ck_assert_int_eq(mcp_server_resource_updated(srv, "file:///readme"), 0);
  expect_changed(others, n, NULL);

  /* Once ready, the half-initialized session is told too. */
  ck_assert_int_eq(tu_send(&half, "{\"jsonrpc\":\"2.0\",\"method\":"
                                  "\"notifications/initialized\"}"),
                   0);
  ck_assert_int_eq(mcp_server_remove_prompt(srv, "plain"), 0);
  ck_assert_uint_eq(half.nout, 1);
  tu_peer_close(&half);
  tu_peer_close(&fresh);
  tu_peer_close(&modern);
}
END_TEST

/* A legacy session is sent notifications/prompts/list_changed and
 * resources/list_changed only when initialize announced the prompts or
 * resources capability to it: a server uses only the capabilities it
 * negotiated, and emits list changes only where it declared listChanged. */
START_TEST(list_changed_only_for_announced_capabilities) {
  tu_legacy_init(&P, "2025-11-25", "{}"); /* told tools and logging only */
  mcp_prompt prompt = {.name = "p9", .description = "d", .handler = h_entry};
  ck_assert_int_eq(mcp_server_add_prompt(srv, &prompt, &g_runs), 0);
  mcp_resource res = {.uri = "file:///new", .name = "new", .handler = h_entry};
  ck_assert_int_eq(mcp_server_add_resource(srv, &res, &g_runs), 0);
  ck_assert_msg(P.nout == 0,
                "%zu notifications for capabilities never "
                "announced, first %s",
                P.nout, P.nout ? P.out[0] : "");
  /* Tools were announced: their changes are sent. */
  ck_assert_int_eq(mcp_server_remove_tool(srv, "run"), 0);
  ck_assert_uint_eq(P.nout, 1);
  tu_clear(&P);
  /* A session told of prompts and resources hears of them. */
  tu_peer q;
  tu_peer_open_with(&q, srv, &ALICE, inspect);
  tu_legacy_init(&q, "2025-11-25", "{}");
  ck_assert_int_eq(mcp_server_remove_prompt(srv, "p9"), 0);
  ck_assert_int_eq(mcp_server_remove_resource(srv, "file:///new"), 0);
  ck_assert_uint_eq(q.nout, 2);
  ck_assert_uint_eq(P.nout, 0);
  tu_peer_close(&q);
}
END_TEST

/* ===========================================================================
 * subscriptions/listen (modern)
 * ======================================================================== */

#define LISTEN(id, filter)                                                     \
  tu_mreq((id), "subscriptions/listen", TU_META_NONE,                          \
          "\"notifications\":" filter)

START_TEST(listen_acknowledged_then_tagged_notifications) {
  sink k = {0};
  ck_assert_int_eq(
      send_to(&P,
              LISTEN(42, "{\"toolsListChanged\":true,\"promptsListChanged\":"
                         "true,\"resourcesListChanged\":false,"
                         "\"resourceSubscriptions\":[\"file:///readme\","
                         "\"file:///notes/a\"]}"),
              &k),
      0);
  /* The acknowledgement first, and no reply: the stream stays open. */
  ck_assert_uint_eq(k.n, 1);
  ck_assert_int_eq(k.done, 0);
  EXPECT_SINK(&k, 0,
              "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/"
              "subscriptions/acknowledged\",\"params\":{\"notifications\":{"
              "\"toolsListChanged\":true,\"promptsListChanged\":true,"
              "\"resourceSubscriptions\":[\"file:///readme\","
              "\"file:///notes/a\"]},\"_meta\":{\"" SUB "\":42}}}");
  ck_assert_uint_eq(P.nout, 0);

  mcp_tool tool = TOOL_RUN;
  tool.name = "extra";
  ck_assert_int_eq(mcp_server_add_tool(srv, &tool, NULL), 0);
  ck_assert_uint_eq(k.n, 2);
  EXPECT_SINK(&k, 1,
              "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/tools/"
              "list_changed\",\"params\":{\"_meta\":{\"" SUB "\":42}}}");
  ck_assert_int_eq(mcp_server_remove_prompt(srv, "plain"), 0);
  ck_assert_uint_eq(k.n, 3);
  EXPECT_SINK(&k, 2,
              "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/prompts/"
              "list_changed\",\"params\":{\"_meta\":{\"" SUB "\":42}}}");
  /* Not asked for: resource list changes. */
  mcp_resource res = {.uri = "file:///new", .name = "new", .handler = h_entry};
  ck_assert_int_eq(mcp_server_add_resource(srv, &res, &g_runs), 0);
  ck_assert_uint_eq(k.n, 3);
  /* Contents changes of the URIs named, and only those. */
  ck_assert_int_eq(mcp_server_resource_updated(srv, "file:///readme"), 1);
  ck_assert_uint_eq(k.n, 4);
  EXPECT_SINK(&k, 3,
              "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/resources/"
              "updated\",\"params\":{\"uri\":\"file:///readme\",\"_meta\":{"
              "\"" SUB "\":42}}}");
  ck_assert_int_eq(mcp_server_resource_updated(srv, "file:///logo.png"), 0);
  ck_assert_int_eq(mcp_server_resource_updated(srv, "file:///notes/a"), 1);
  ck_assert_uint_eq(k.n, 5);
  /* Nothing went to the session's own callback. */
  ck_assert_uint_eq(P.nout, 0);

  /* A second listener, on its own stream, asking for other things. */
  sink k2 = {0};
  ck_assert_int_eq(
      send_to(&P,
              tu_mreq(7, "subscriptions/listen", TU_META_NONE,
                      "\"notifications\":{\"resourcesListChanged\":true}"),
              &k2),
      0);
  EXPECT_SINK(&k2, 0,
              "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/"
              "subscriptions/acknowledged\",\"params\":{\"notifications\":{"
              "\"resourcesListChanged\":true},\"_meta\":{\"" SUB "\":7}}}");
  ck_assert_int_eq(mcp_server_remove_resource(srv, "file:///new"), 0);
  ck_assert_uint_eq(k.n, 5);
  ck_assert_uint_eq(k2.n, 2);
  EXPECT_SINK(&k2, 1,
              "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/resources/"
              "list_changed\",\"params\":{\"_meta\":{\"" SUB "\":7}}}");

  /* A cancellation naming another id ("42" is not 42) ends nothing. */
  ck_assert_int_eq(tu_send(&P, "{\"jsonrpc\":\"2.0\",\"method\":"
                               "\"notifications/cancelled\",\"params\":{"
                               "\"requestId\":\"42\"}}"),
                   0);
  ck_assert_int_eq(k.done, 0);
  /* notifications/cancelled with the listen's id ends it, answering
   * nothing. */
  ck_assert_int_eq(tu_send(&P, "{\"jsonrpc\":\"2.0\",\"method\":"
                               "\"notifications/cancelled\",\"params\":{"
                               "\"requestId\":42}}"),
                   0);
  ck_assert_int_eq(k.done, 1);
  ck_assert_uint_eq(k.n, 5);
  ck_assert_uint_eq(P.nout, 0);
  ck_assert_int_eq(mcp_server_add_tool(srv, &TOOL_RUN, NULL), MCP_EEXIST);
  ck_assert_int_eq(mcp_server_remove_tool(srv, "extra"), 0);
  ck_assert_int_eq(mcp_server_resource_updated(srv, "file:///readme"), 0);
  ck_assert_uint_eq(k.n, 5);
  ck_assert_int_eq(k.done, 1);
  ck_assert_int_eq(k2.done, 0);
  /* Its id is free again. */
  sink k3 = {0};
  ck_assert_int_eq(send_to(&P, LISTEN(42, "{\"toolsListChanged\":true}"), &k3),
                   0);
  ck_assert_int_eq(k3.done, 0);
  ck_assert_uint_eq(k3.n, 1);
  ck_assert_int_eq(tu_send(&P, "{\"jsonrpc\":\"2.0\",\"method\":"
                               "\"notifications/cancelled\",\"params\":{"
                               "\"requestId\":42}}"),
                   0);
  ck_assert_int_eq(k3.done, 1);
  ck_assert_int_eq(tu_send(&P, "{\"jsonrpc\":\"2.0\",\"method\":"
                               "\"notifications/cancelled\",\"params\":{"
                               "\"requestId\":7}}"),
                   0);
  ck_assert_int_eq(k2.done, 1);
  ck_assert_uint_eq(k2.n, 2);
  ck_assert_uint_eq(P.nout, 0);
  sink_free(&k);
  sink_free(&k2);
  sink_free(&k3);
}
END_TEST

START_TEST(listen_string_id_and_duplicate) {
  sink k = {0}, dup = {0};
  ck_assert_int_eq(
      send_to(
          &P,
          tu_text("{\"jsonrpc\":\"2.0\",\"id\":\"s-1\",\"method\":"
                  "\"subscriptions/listen\",\"params\":{\"_meta\":" TU_META_NONE
                  ",\"notifications\":{\"toolsListChanged\":true}}}"),
          &k),
      0);
  EXPECT_SINK(&k, 0,
              "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/"
              "subscriptions/acknowledged\",\"params\":{\"notifications\":{"
              "\"toolsListChanged\":true},\"_meta\":{\"" SUB "\":\"s-1\"}}}");
  /* The same id again while it is open is refused on its own stream. */
  ck_assert_int_eq(
      send_to(
          &P,
          tu_text("{\"jsonrpc\":\"2.0\",\"id\":\"s-1\",\"method\":"
                  "\"subscriptions/listen\",\"params\":{\"_meta\":" TU_META_NONE
                  ",\"notifications\":{\"toolsListChanged\":true}}}"),
          &dup),
      0);
  ck_assert_uint_eq(dup.n, 1);
  ck_assert_int_eq(dup.done, 1);
  EXPECT_SINK(&dup, 0,
              "{\"jsonrpc\":\"2.0\",\"id\":\"s-1\",\"error\":{\"code\":-32600,"
              "\"message\":\"Invalid Request: a subscription with this id is "
              "open\"}}");
  ck_assert_int_eq(mcp_server_remove_tool(srv, "run"), 0);
  ck_assert_uint_eq(k.n, 2);
  EXPECT_SINK(&k, 1,
              "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/tools/"
              "list_changed\",\"params\":{\"_meta\":{\"" SUB "\":\"s-1\"}}}");
  ck_assert_int_eq(tu_send(&P, "{\"jsonrpc\":\"2.0\",\"method\":"
                               "\"notifications/cancelled\",\"params\":{"
                               "\"requestId\":\"s-1\"}}"),
                   0);
  ck_assert_int_eq(k.done, 1);
  sink_free(&k);
  sink_free(&dup);
}
END_TEST

START_TEST(listen_honours_only_what_the_server_has) {
  /* No prompts and no resources: only tools. */
  sink k = {0};
  ck_assert_int_eq(
      send_to(&P,
              LISTEN(1, "{\"toolsListChanged\":true,\"promptsListChanged\":"
                        "true,\"resourcesListChanged\":true,"
                        "\"resourceSubscriptions\":[\"file:///x\"]}"),
              &k),
      0);
  EXPECT_SINK(&k, 0,
              "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/"
              "subscriptions/acknowledged\",\"params\":{\"notifications\":{"
              "\"toolsListChanged\":true},\"_meta\":{\"" SUB "\":1}}}");
  /* Not honoured, so not sent, even once prompts appear. */
  ck_assert_int_eq(mcp_server_add_prompt(srv, &PROMPT_PLAIN, &g_runs), 0);
  ck_assert_uint_eq(k.n, 1);
  ck_assert_int_eq(mcp_server_resource_updated(srv, "file:///x"), 0);
  ck_assert_uint_eq(k.n, 1);
  /* Nothing asked: an empty acknowledgement, and nothing ever after. */
  sink k2 = {0};
  ck_assert_int_eq(send_to(&P, LISTEN(2, "{}"), &k2), 0);
  EXPECT_SINK(&k2, 0,
              "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/"
              "subscriptions/acknowledged\",\"params\":{\"notifications\":{}"
              ",\"_meta\":{\"" SUB "\":2}}}");
  ck_assert_int_eq(mcp_server_remove_tool(srv, "run"), 0);
  ck_assert_uint_eq(k2.n, 1);
  ck_assert_uint_eq(k.n, 2);
  /* Ending the session ends both streams. */
  tu_peer_close(&P);
  ck_assert_int_eq(k.done, 1);
  ck_assert_int_eq(k2.done, 1);
  ck_assert_int_eq(mcp_server_resource_updated(srv, "file:///x"), 0);
  ck_assert_uint_eq(k.n, 2);
  tu_peer_open_with(&P, srv, &ALICE, inspect); /* for teardown */
  sink_free(&k);
  sink_free(&k2);
}
END_TEST

/* Without a sink (stdio), everything goes to the session's callback. */
START_TEST(listen_without_a_sink) {
  cJSON *r =
      tu_ask(&P, LISTEN(3, "{\"toolsListChanged\":true,"
                           "\"resourceSubscriptions\":[\"file:///readme\"]}"));
  tu_assert_exact(r, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/"
                     "subscriptions/acknowledged\",\"params\":{"
                     "\"notifications\":{\"toolsListChanged\":true,"
                     "\"resourceSubscriptions\":[\"file:///readme\"]},"
                     "\"_meta\":{\"" SUB "\":3}}}");
  cJSON_Delete(r);
  tu_clear(&P);
  ck_assert_int_eq(mcp_server_resource_updated(srv, "file:///readme"), 1);
  ck_assert_int_eq(mcp_server_remove_tool(srv, "run"), 0);
  ck_assert_uint_eq(P.nout, 2);
  tu_assert_msg(&P, 0,
                "{\"method\":\"notifications/resources/updated\",\"params\":"
                "{\"uri\":\"file:///readme\",\"_meta\":{\"" SUB "\":3}}}");
  tu_assert_msg(&P, 1,
                "{\"method\":\"notifications/tools/list_changed\",\"params\":"
                "{\"_meta\":{\"" SUB "\":3}}}");
  tu_clear(&P);
  ck_assert_int_eq(tu_send(&P, "{\"jsonrpc\":\"2.0\",\"method\":"
                               "\"notifications/cancelled\",\"params\":{"
                               "\"requestId\":3}}"),
                   0);
  ck_assert_int_eq(mcp_server_resource_updated(srv, "file:///readme"), 0);
  ck_assert_uint_eq(P.nout, 0);
  /* A listener left open is ended by teardown's mcp_session_free. */
  r = tu_ask(&P, LISTEN(4, "{\"toolsListChanged\":true}"));
  cJSON_Delete(r);
}
END_TEST

START_TEST(listen_session_free_ends_it) {
  tu_peer q;
  tu_peer_open_with(&q, srv, &ALICE, inspect);
  sink k = {0};
  ck_assert_int_eq(
      send_to(&q, LISTEN(5, "{\"resourceSubscriptions\":[\"file:///readme\"]}"),
              &k),
      0);
  ck_assert_uint_eq(k.n, 1);
  ck_assert_int_eq(mcp_server_resource_updated(srv, "file:///readme"), 1);
  ck_assert_uint_eq(k.n, 2);
  ck_assert_int_eq(k.done, 0);
  tu_peer_close(&q);
  ck_assert_int_eq(k.done, 1);
  ck_assert_int_eq(mcp_server_resource_updated(srv, "file:///readme"), 0);
  ck_assert_uint_eq(k.n, 2);
  sink_free(&k);
}
END_TEST

START_TEST(listen_bad_filters) {
  serve_r();
  struct {
    const char *params, *needle;
  } cases[] = {
      {"", "notifications is required"},
      {",\"notifications\":[]", "notifications is required"},
      {",\"notifications\":true", "notifications is required"},
      {",\"notifications\":{\"toolsListChanged\":\"yes\"}", "booleans"},
      {",\"notifications\":{\"promptsListChanged\":1}", "booleans"},
      {",\"notifications\":{\"resourcesListChanged\":null}", "booleans"},
      {",\"notifications\":{\"resourceSubscriptions\":\"file:///a\"}",
       "must be an array"},
      {",\"notifications\":{\"resourceSubscriptions\":{}}", "must be an array"},
      {",\"notifications\":{\"resourceSubscriptions\":[5]}", "must hold URIs"},
      {",\"notifications\":{\"resourceSubscriptions\":[\"\"]}",
       "must hold URIs"},
      {",\"notifications\":{\"resourceSubscriptions\":[\"file:///a\",null]}",
       "must hold URIs"},
      {",\"notifications\":{\"resourceSubscriptions\":[\"a\\u0001b\"]}",
       "must hold URIs"},
  };
  for (size_t i = 0; i < TU_COUNT(cases); i++) {
    sink k = {0};
    char *msg = tu_text(
        "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":"
        "\"subscriptions/listen\",\"params\":{\"_meta\":" TU_META_NONE "%s}}",
        (int)i + 1, cases[i].params);
    ck_assert_int_eq(send_to(&P, msg, &k), 0);
    ck_assert_msg(k.n == 1, "%s: %zu messages", cases[i].params, k.n);
    ck_assert_int_eq(k.done, 1);
    cJSON *r = cJSON_Parse(k.msgs[0]);
    tu_assert_error(r, -32602, cases[i].needle);
    ck_assert_int_eq((int)tu_get(r, "id")->valuedouble, (int)i + 1);
    cJSON_Delete(r);
    sink_free(&k);
  }
  /* 256 URIs are fine; 257 are not. */
  char *uris = malloc(257 * 24);
  ck_assert_ptr_nonnull(uris);
  uris[0] = '\0';
  for (int i = 0; i < 257; i++)
    sprintf(uris + strlen(uris), "%s\"file:///r/%d\"", i ? "," : "", i);
  char *msg =
      tu_text("{\"jsonrpc\":\"2.0\",\"id\":300,\"method\":"
              "\"subscriptions/listen\",\"params\":{\"_meta\":" TU_META_NONE
              ",\"notifications\":{\"resourceSubscriptions\":[%s]}}}",
              uris);
  sink k = {0};
  ck_assert_int_eq(send_to(&P, msg, &k), 0);
  cJSON *r = cJSON_Parse(k.msgs[0]);
  tu_assert_error(r, -32602, "more than 256");
  cJSON_Delete(r);
  ck_assert_int_eq(k.done, 1);
  sink_free(&k);
  *strrchr(uris, ',') = '\0';
  msg = tu_text("{\"jsonrpc\":\"2.0\",\"id\":301,\"method\":"
                "\"subscriptions/listen\",\"params\":{\"_meta\":" TU_META_NONE
                ",\"notifications\":{\"resourceSubscriptions\":[%s]}}}",
                uris);
  ck_assert_int_eq(send_to(&P, msg, &k), 0);
  ck_assert_uint_eq(k.n, 1);
  ck_assert_int_eq(k.done, 0);
  r = cJSON_Parse(k.msgs[0]);
  ck_assert_int_eq(
      cJSON_GetArraySize(tu_get(tu_get(tu_get(r, "params"), "notifications"),
                                "resourceSubscriptions")),
      256);
  cJSON_Delete(r);
  ck_assert_int_eq(mcp_server_resource_updated(srv, "file:///r/255"), 1);
  ck_assert_int_eq(mcp_server_resource_updated(srv, "file:///r/256"), 0);
  ck_assert_uint_eq(k.n, 2);
  ck_assert_int_eq(tu_send(&P, "{\"jsonrpc\":\"2.0\",\"method\":"
                               "\"notifications/cancelled\",\"params\":{"
                               "\"requestId\":301}}"),
                   0);
  ck_assert_int_eq(k.done, 1);
  sink_free(&k);
  free(uris);
  /* Nothing was left listening. */
  ck_assert_int_eq(mcp_server_resource_updated(srv, "file:///r/1"), 0);
  ck_assert_uint_eq(P.nout, 0);
}
END_TEST

START_TEST(listen_is_modern_only) {
  tu_legacy_init(&P, "2025-11-25", "{}");
  sink k = {0};
  ck_assert_int_eq(
      send_to(&P,
              tu_req(1, "subscriptions/listen",
                     "{\"notifications\":{\"toolsListChanged\":true}}"),
              &k),
      0);
  ck_assert_uint_eq(k.n, 1);
  ck_assert_int_eq(k.done, 1);
  EXPECT_SINK(&k, 0,
              "{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":-32601,"
              "\"message\":\"Method not found: subscriptions/listen\"}}");
  sink_free(&k);
  /* Nor before initialize. */
  tu_peer q;
  tu_peer_open_with(&q, srv, &ALICE, inspect);
  cJSON *r =
      tu_ask(&q, tu_req(2, "subscriptions/listen",
                        "{\"notifications\":{\"toolsListChanged\":true}}"));
  tu_assert_error(r, -32601, "subscriptions/listen");
  cJSON_Delete(r);
  tu_peer_close(&q);
  /* The legacy session gets its list_changed on its callback. */
  ck_assert_int_eq(mcp_server_remove_tool(srv, "run"), 0);
  ck_assert_uint_eq(P.nout, 1);
}
END_TEST

/* ===========================================================================
 * Changes from another thread while listeners come and go
 * ======================================================================== */

/* A stream that only counts, safe to call from any thread. */
typedef struct counting {
  atomic_int sent, done, late; /* late: messages after done */
} counting;

static int counting_send(const char *msg, size_t len, void *user_data) {
  (void)msg;
  (void)len;
  counting *c = user_data;
  if (atomic_load(&c->done))
    atomic_fetch_add(&c->late, 1);
  atomic_fetch_add(&c->sent, 1);
  return 0;
}

static void counting_done(void *user_data) {
  counting *c = user_data;
  atomic_fetch_add(&c->done, 1);
}

static atomic_int g_changer_errors;

static void *changer(void *arg) {
  (void)arg;
  mcp_prompt p = {.name = "tmp", .description = "d", .handler = h_entry};
  for (int i = 0; i < 200; i++) {
    if (mcp_server_add_prompt(srv, &p, &g_runs) != 0 ||
        mcp_server_resource_updated(srv, "file:///readme") < 0 ||
        mcp_server_remove_prompt(srv, "tmp") != 0)
      atomic_fetch_add(&g_changer_errors, 1);
  }
  return NULL;
}

START_TEST(changes_from_another_thread) {
  atomic_store(&g_changer_errors, 0);
  tu_legacy_init(&P, "2025-11-25", "{}");
  pthread_t th;
  ck_assert_int_eq(pthread_create(&th, NULL, changer, NULL), 0);
  counting c[100];
  for (int i = 0; i < 100; i++) {
    atomic_init(&c[i].sent, 0);
    atomic_init(&c[i].done, 0);
    atomic_init(&c[i].late, 0);
    mcp_sink k = {
        .send = counting_send, .done = counting_done, .user_data = &c[i]};
    char *msg = LISTEN(1000 + i, "{\"promptsListChanged\":true,"
                                 "\"resourceSubscriptions\":["
                                 "\"file:///readme\"]}");
    ck_assert_int_eq(mcp_session_receive_to(P.session, msg, strlen(msg), &k),
                     0);
    free(msg);
    char *cancel = tu_text("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/"
                           "cancelled\",\"params\":{\"requestId\":%d}}",
                           1000 + i);
    ck_assert_int_eq(tu_send(&P, cancel), 0);
    free(cancel);
  }
  ck_assert_int_eq(pthread_join(th, NULL), 0);
  ck_assert_int_eq(atomic_load(&g_changer_errors), 0);
  for (int i = 0; i < 100; i++) {
    ck_assert_int_eq(atomic_load(&c[i].done), 1);
    ck_assert_int_eq(atomic_load(&c[i].late), 0);
    ck_assert_int_ge(atomic_load(&c[i].sent), 1); /* the acknowledgement */
  }
  /* The legacy session heard every prompt change, in pairs. */
  size_t prompts = 0;
  for (size_t i = 0; i < P.nout; i++)
    prompts += strstr(P.out[i], "prompts/list_changed") != NULL;
  ck_assert_uint_eq(prompts, 400);
}
END_TEST

/* ===========================================================================
 * Suite
 * ======================================================================== */

static Suite *subscriptions_suite(void) {
  Suite *s = suite_create("subscriptions");
  TCase *t = tcase(s, "registration", setup_bare);
  tcase_add_test(t, listen_honours_only_what_the_server_has);
  tcase_add_test(t, list_changed_only_for_announced_capabilities);

  t = tcase(s, "subscriptions", setup);
  tcase_add_test(t, legacy_subscribe_and_updated);
  tcase_add_test(t, legacy_subscribe_limit);
  tcase_add_test(t, list_changed_to_ready_legacy_sessions);
  tcase_add_test(t, listen_acknowledged_then_tagged_notifications);
  tcase_add_test(t, listen_string_id_and_duplicate);
  tcase_add_test(t, listen_session_free_ends_it);
  tcase_add_test(t, listen_without_a_sink);
  tcase_add_test(t, listen_bad_filters);
  tcase_add_test(t, listen_is_modern_only);

  tcase_add_test(t, changes_from_another_thread);
  return s;
}

int main(void) { return tu_run(subscriptions_suite()); }
