/* Tests for the two sets of rules a resource URI meets (mcp__uri_valid in
 * lib/registry/uritemplate.c): the strict ones for a URI a server registers and
 * the lenient ones for a URI a client names in resources/read,
 * resources/subscribe and subscriptions/listen, and for the one not-found
 * reply both ways of missing a resource share. test_prompts_resources.c and
 * test_subscriptions.c cover the common cases; these pin the rules they
 * leave open: DEL, the length limits at their edges, the scheme's
 * characters, and the spaces, non-ASCII and scheme-less URIs a client may
 * name.
 *
 * Only the public API is used: sessions are driven with strings and every
 * reply is compared member by member. */
#include <check.h>
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

/* The error a refused uri gets: -32602 naming the parameter. */
#define BAD_URI_MESSAGE                                                        \
  "Invalid params: uri must be 1-4096 bytes of UTF-8 without control "         \
  "characters"

static mcp_server *srv;
static tu_peer P;
static int g_runs;       /* handler runs */
static char g_name[256]; /* the template variable "name" of the last run */

/* "file:///" followed by as many 'a' as make the URI len bytes long. */
static char *long_uri(size_t len) {
  ck_assert_uint_gt(len, 8);
  char *s = malloc(len + 1);
  ck_assert_ptr_nonnull(s);
  memcpy(s, "file:///", 8);
  memset(s + 8, 'a', len - 8);
  s[len] = '\0';
  return s;
}

/* The whole error reply to request id, data JSON text or NULL. */
static char *error_text(int id, int code, const char *message,
                        const char *data) {
  return tu_text("{\"jsonrpc\":\"2.0\",\"id\":%d,\"error\":{\"code\":%d,"
                 "\"message\":\"%s\"%s%s}}",
                 id, code, message, data ? ",\"data\":" : "", data ? data : "");
}

/* Asserts reply is exactly expected (freed), and frees reply. */
static void expect_exact(cJSON *reply, char *expected) {
  tu_assert_exact(reply, expected);
  free(expected);
  cJSON_Delete(reply);
}

/* Serves every resource: "no such note" for a template value starting
 * with "gone", else the text "ok". */
static int h_read(mcp_call *call, void *user_data) {
  (void)user_data;
  g_runs++;
  const char *name = NULL;
  if (mcp_call_arg_string(call, "name", &name) == 0) {
    snprintf(g_name, sizeof g_name, "%s", name);
    if (strncmp(name, "gone", 4) == 0)
      return MCP_ENOENT;
  }
  return mcp_result_text(call, "ok");
}

static const mcp_resource RES_README = {
    .uri = "file:///readme", .name = "readme", .handler = h_read};
static const mcp_resource TMPL_NOTES = {
    .uri_template = "file:///n/{name}", .name = "notes", .handler = h_read};

static void setup(void) {
  static const mcp_server_info info = {.name = "srv", .version = "1"};
  g_runs = 0;
  g_name[0] = '\0';
  ck_assert_int_eq(mcp_server_new(&info, &srv), 0);
  mcp_server_set_log(srv, tu_silent_log, NULL);
  ck_assert_int_eq(mcp_server_add_resource(srv, &RES_README, NULL), 0);
  ck_assert_int_eq(mcp_server_add_resource(srv, &TMPL_NOTES, NULL), 0);
  tu_peer_open(&P, srv, NULL);
}

static void teardown(void) {
  tu_peer_close(&P);
  mcp_server_free(srv);
  srv = NULL;
}

/* ---- URIs a server registers --------------------------------------------- */

START_TEST(registered_accepts_any_scheme_and_2048_bytes) {
  char *edge = long_uri(2048);
  const char *const good[] = {"HTTPS://EXAMPLE.COM/X", "git+ssh://host/repo",
                              "x-y.z1:opaque", "urn:isbn:0451450523", edge};
  for (size_t i = 0; i < TU_COUNT(good); i++) {
    mcp_resource r = {.uri = good[i], .name = "r", .handler = h_read};
    ck_assert_msg(mcp_server_add_resource(srv, &r, NULL) == 0, "%.40s: %s",
                  good[i], mcp_server_errmsg(srv));
  }
  free(edge);
}
END_TEST

START_TEST(registered_refuses_del_bad_scheme_and_2049_bytes) {
  char *over = long_uri(2049);
  const char *const bad[] = {"file:///a\x7f", "fi_le:x", "+x:y", "x y:z", over};
  for (size_t i = 0; i < TU_COUNT(bad); i++) {
    mcp_resource r = {.uri = bad[i], .name = "r", .handler = h_read};
    ck_assert_msg(mcp_server_add_resource(srv, &r, NULL) == MCP_EINVAL, "%.40s",
                  bad[i]);
    ck_assert_msg(strstr(mcp_server_errmsg(srv),
                         "the uri must be an absolute URI (scheme, ':', "
                         "printable ASCII without spaces, at most 2048 "
                         "bytes)") != NULL,
                  "%s", mcp_server_errmsg(srv));
  }
  free(over);
}
END_TEST

/* ---- URIs a client names ------------------------------------------------- */

START_TEST(read_refuses_del_and_4097_bytes) {
  tu_initialize(&P, "2025-11-25");
  expect_exact(tu_ask(&P, tu_req(1, "resources/read",
                                 "{\"uri\":\"file:///readme\\u007f\"}")),
               error_text(1, -32602, BAD_URI_MESSAGE, NULL));
  char *over = long_uri(4097);
  char *params = tu_text("{\"uri\":\"%s\"}", over);
  expect_exact(tu_ask(&P, tu_req(2, "resources/read", params)),
               error_text(2, -32602, BAD_URI_MESSAGE, NULL));
  free(params);
  /* The modern era refuses them alike. */
  expect_exact(tu_ask(&P, tu_mreq(3, "resources/read", TU_META_NONE,
                                  "\"uri\":\"file:///readme\\u007f\"")),
               error_text(3, -32602, BAD_URI_MESSAGE, NULL));
  free(over);
  ck_assert_int_eq(g_runs, 0);
}
END_TEST

START_TEST(read_looks_up_4096_bytes_spaces_and_iris) {
  tu_initialize(&P, "2025-11-25");
  /* Anything that is text is looked up: what nothing serves is "not
   * found", naming the URI, never a malformed request. */
  char *edge = long_uri(4096);
  char *data = tu_text("{\"uri\":\"%s\"}", edge);
  char *params = tu_text("{\"uri\":\"%s\"}", edge);
  expect_exact(tu_ask(&P, tu_req(1, "resources/read", params)),
               error_text(1, -32002, "Resource not found", data));
  free(params);
  free(data);
  free(edge);
  static const char *const lenient[] = {"readme", "file:///read me",
                                        "file:///caf\xc3\xa9", "1x:y"};
  for (size_t i = 0; i < TU_COUNT(lenient); i++) {
    char *quoted = tu_text("{\"uri\":\"%s\"}", lenient[i]);
    expect_exact(tu_ask(&P, tu_req((int)i + 2, "resources/read", quoted)),
                 error_text((int)i + 2, -32002, "Resource not found", quoted));
    free(quoted);
  }
  ck_assert_int_eq(g_runs, 0);
  /* A template serves what registration would refuse. */
  cJSON *r = tu_ask(&P, tu_req(10, "resources/read",
                               "{\"uri\":\"file:///n/caf\xc3\xa9 au lait\"}"));
  tu_assert_json(r, "{\"id\":10,\"result\":{\"contents\":[{\"uri\":"
                    "\"file:///n/caf\xc3\xa9 au lait\",\"text\":\"ok\"}]}}");
  cJSON_Delete(r);
  ck_assert_str_eq(g_name, "caf\xc3\xa9 au lait");
}
END_TEST

START_TEST(not_found_is_the_same_from_lookup_and_handler) {
  tu_initialize(&P, "2025-11-25");
  /* The URI goes back escaped, whichever way the resource was missed. */
  static const char uri_json[] = "\"file:///n/gone \\\"caf\xc3\xa9\\\"\"";
  static const char missing_json[] = "\"file:///m/ \\\"caf\xc3\xa9\\\"\"";
  char *handler = tu_text("{\"uri\":%s}", uri_json);
  char *lookup = tu_text("{\"uri\":%s}", missing_json);
  expect_exact(tu_ask(&P, tu_req(1, "resources/read", handler)),
               error_text(1, -32002, "Resource not found", handler));
  ck_assert_int_eq(g_runs, 1);
  ck_assert_str_eq(g_name, "gone \"caf\xc3\xa9\"");
  expect_exact(tu_ask(&P, tu_req(2, "resources/read", lookup)),
               error_text(2, -32002, "Resource not found", lookup));
  /* The modern era: -32602, the same message and data. */
  char *members = tu_text("\"uri\":%s", uri_json);
  expect_exact(tu_ask(&P, tu_mreq(3, "resources/read", TU_META_NONE, members)),
               error_text(3, -32602, "Resource not found", handler));
  free(members);
  members = tu_text("\"uri\":%s", missing_json);
  expect_exact(tu_ask(&P, tu_mreq(4, "resources/read", TU_META_NONE, members)),
               error_text(4, -32602, "Resource not found", lookup));
  free(members);
  ck_assert_int_eq(g_runs, 2);
  free(handler);
  free(lookup);
}
END_TEST

/* A template serving every URI a client may name: subscriptions need a
 * resource behind them. */
static void serve_everything(void) {
  static const mcp_resource any = {
      .uri_template = "{+uri}", .name = "any", .handler = h_read};
  ck_assert_int_eq(mcp_server_add_resource(srv, &any, NULL), 0);
}

START_TEST(subscribe_follows_the_request_rules) {
  serve_everything();
  tu_initialize(&P, "2025-11-25");
  char *over = long_uri(4097);
  char *edge = long_uri(4096);
  char *bad[] = {tu_text("{\"uri\":\"file:///readme\\u007f\"}"),
                 tu_text("{\"uri\":\"%s\"}", over)};
  for (size_t i = 0; i < TU_COUNT(bad); i++) {
    expect_exact(tu_ask(&P, tu_req((int)i + 1, "resources/subscribe", bad[i])),
                 error_text((int)i + 1, -32602, BAD_URI_MESSAGE, NULL));
    free(bad[i]);
  }
  char *good[] = {tu_text("{\"uri\":\"%s\"}", edge),
                  tu_text("{\"uri\":\"file:///caf\xc3\xa9 menu\"}"),
                  tu_text("{\"uri\":\"readme\"}")};
  for (size_t i = 0; i < TU_COUNT(good); i++) {
    expect_exact(
        tu_ask(&P, tu_req((int)i + 10, "resources/subscribe", good[i])),
        tu_text("{\"jsonrpc\":\"2.0\",\"id\":%d,\"result\":{}}", (int)i + 10));
    free(good[i]);
  }
  tu_clear(&P);
  ck_assert_int_eq(mcp_server_resource_updated(srv, edge), 1);
  ck_assert_int_eq(mcp_server_resource_updated(srv, "file:///caf\xc3\xa9 menu"),
                   1);
  ck_assert_int_eq(mcp_server_resource_updated(srv, "readme"), 1);
  ck_assert_uint_eq(P.nout, 3);
  free(over);
  free(edge);
}
END_TEST

START_TEST(listen_follows_the_request_rules) {
  static const char refused[] =
      "Invalid params: resourceSubscriptions must hold URIs (1-4096 bytes of "
      "UTF-8 without control characters)";
  serve_everything();
  char *over = long_uri(4097);
  char *edge = long_uri(4096);
  char *bad[] = {tu_text("\"file:///readme\\u007f\""), tu_text("\"%s\"", over)};
  for (size_t i = 0; i < TU_COUNT(bad); i++) {
    char *members =
        tu_text("\"notifications\":{\"resourceSubscriptions\":[%s]}", bad[i]);
    expect_exact(tu_ask(&P, tu_mreq((int)i + 1, "subscriptions/listen",
                                    TU_META_NONE, members)),
                 error_text((int)i + 1, -32602, refused, NULL));
    free(members);
    free(bad[i]);
  }
  char *uris = tu_text("\"%s\",\"file:///caf\xc3\xa9 menu\",\"readme\"", edge);
  char *members =
      tu_text("\"notifications\":{\"resourceSubscriptions\":[%s]}", uris);
  cJSON *r =
      tu_ask(&P, tu_mreq(10, "subscriptions/listen", TU_META_NONE, members));
  char *expected = tu_text("{\"method\":\"notifications/subscriptions/"
                           "acknowledged\",\"params\":{\"notifications\":{"
                           "\"resourceSubscriptions\":[%s]}}}",
                           uris);
  tu_assert_json(r, expected);
  cJSON_Delete(r);
  free(expected);
  free(members);
  free(uris);
  free(over);
  free(edge);
}
END_TEST

static Suite *uri_rules_suite(void) {
  Suite *s = suite_create("uri_rules");
  TCase *tc = tcase_create("core");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, registered_accepts_any_scheme_and_2048_bytes);
  tcase_add_test(tc, registered_refuses_del_bad_scheme_and_2049_bytes);
  tcase_add_test(tc, read_refuses_del_and_4097_bytes);
  tcase_add_test(tc, read_looks_up_4096_bytes_spaces_and_iris);
  tcase_add_test(tc, not_found_is_the_same_from_lookup_and_handler);
  tcase_add_test(tc, subscribe_follows_the_request_rules);
  tcase_add_test(tc, listen_follows_the_request_rules);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return tu_run(uri_rules_suite()); }
