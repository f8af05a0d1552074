/* mcp_message: a message parsed once, strictly, read by a transport and
 * then handed to a session (mcp_session_receive_message). The session must
 * answer it exactly as it answers the same bytes. */
#include <check.h>
#include <cjson/cJSON.h>
#include <mcp/mcp.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "tools.h"

/* ---- a server with one tool, and sessions whose output is captured ---- */

static const mcp_tool ECHO = TC_TOOL_ECHO;

static mcp_server *server(void) {
  mcp_server_info info = {.name = "message", .version = "1.0.0"};
  mcp_server *srv = NULL;
  if (mcp_server_new(&info, &srv) != 0)
    return NULL;
  mcp_server_set_log(srv, tu_silent_log, NULL);
  if (mcp_server_add_tool(srv, &ECHO, NULL) != 0) {
    mcp_server_free(srv);
    return NULL;
  }
  return srv;
}

/* Everything one session or sink sent, one message a line. */
typedef struct capture {
  char *text;
  size_t len;
  int done;
  bool failed; /* no memory to capture */
} capture;

static int capture_send(const char *msg, size_t len, void *user_data) {
  capture *c = user_data;
  char *p = realloc(c->text, c->len + len + 2);
  if (p == NULL) {
    c->failed = true;
    return MCP_EIO;
  }
  memcpy(p + c->len, msg, len);
  c->len += len;
  p[c->len++] = '\n';
  p[c->len] = '\0';
  c->text = p;
  return 0;
}

static void capture_done(void *user_data) { ((capture *)user_data)->done++; }

static void capture_free(capture *c) {
  free(c->text);
  *c = (capture){0};
}

#define LEGACY_INIT                                                            \
  "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{"       \
  "\"protocolVersion\":\"2025-03-26\",\"capabilities\":{},\"clientInfo\":{"    \
  "\"name\":\"t\",\"version\":\"1\"}}}"
#define MODERN_META                                                            \
  "\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\","     \
  "\"io.modelcontextprotocol/clientInfo\":{\"name\":\"t\",\"version\":"        \
  "\"1\"},\"io.modelcontextprotocol/clientCapabilities\":{}}"

/* A legacy conversation (2025-03-26, so batches are allowed), then
 * stateless 2026-07-28 requests on a session of their own: good, bad and
 * odd messages. */
static const char *const LEGACY[] = {
    LEGACY_INIT,
    "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}",
    "{\"jsonrpc\":\"2.0\",\"id\":\"a\\u0041\",\"method\":\"ping\"}",
    "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{"
    "\"name\":\"echo\",\"arguments\":{\"text\":\"h\\u00e9llo\"}}}",
    "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{"
    "\"name\":\"echo\",\"arguments\":{\"text\":7}}}",
    "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"no/such\"}",
    "[{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"ping\"},{\"jsonrpc\":\"2.0\","
    "\"id\":6,\"method\":\"tools/list\"}]",
    "{\"jsonrpc\":\"2.0\",\"id\":1e2,\"method\":\"ping\"}",
    "{\"jsonrpc\":\"2.0\",\"id\":7}",
};
static const char *const MODERN[] = {
    "{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"tools/call\",\"params\":{"
    "\"name\":\"echo\",\"arguments\":{\"text\":\"x\"}," MODERN_META "}}",
    "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"server/"
    "discover\",\"params\":{" MODERN_META "}}",
    "{\"jsonrpc\":\"2.0\",\"id\":10,\"method\":\"tools/list\"}",
};

/* Feeds msgs to a new session over srv, as bytes or as parsed messages.
 * Returns what it sent, one message a line (caller frees). */
static char *converse(mcp_server *srv, const char *const *msgs, size_t n,
                      bool parsed) {
  capture out = {0};
  mcp_session *s = NULL;
  ck_assert_int_eq(mcp_session_new(srv, NULL, capture_send, &out, &s), 0);
  for (size_t i = 0; i < n; i++) {
    int rc;
    if (parsed) {
      mcp_message *m = NULL;
      ck_assert_int_eq(mcp_message_parse(msgs[i], strlen(msgs[i]), &m), 0);
      rc = mcp_session_receive_message(s, m, NULL);
    } else {
      rc = mcp_session_receive(s, msgs[i], strlen(msgs[i]));
    }
    ck_assert_int_eq(rc, 0);
  }
  mcp_session_free(s);
  ck_assert(!out.failed);
  return out.text;
}

START_TEST(same_answers_as_the_bytes) {
  mcp_server *srv = server();
  ck_assert_ptr_nonnull(srv);
  struct {
    const char *const *msgs;
    size_t n;
  } runs[] = {{LEGACY, TU_COUNT(LEGACY)}, {MODERN, TU_COUNT(MODERN)}};
  for (size_t r = 0; r < TU_COUNT(runs); r++) {
    char *bytes = converse(srv, runs[r].msgs, runs[r].n, false);
    char *parsed = converse(srv, runs[r].msgs, runs[r].n, true);
    ck_assert_ptr_nonnull(bytes);
    ck_assert_str_eq(parsed, bytes);
    free(bytes);
    free(parsed);
  }
  mcp_server_free(srv);
}
END_TEST

START_TEST(the_tree_and_the_exact_id) {
  static const char text[] =
      " {\"jsonrpc\":\"2.0\",\"id\":\"a\\u0041\",\"method\":\"tools/call\","
      "\"params\":{\"name\":\"echo\"}} \n";
  mcp_message *m = NULL;
  ck_assert_int_eq(mcp_message_parse(text, sizeof text - 1, &m), 0);
  const cJSON *root = mcp_message_json(m);
  ck_assert(cJSON_IsObject(root));
  const cJSON *method = cJSON_GetObjectItemCaseSensitive(root, "method");
  ck_assert(cJSON_IsString(method));
  ck_assert_str_eq(method->valuestring, "tools/call");
  const cJSON *id = cJSON_GetObjectItemCaseSensitive(root, "id");
  ck_assert_str_eq(id->valuestring, "aA"); /* decoded in the tree */
  size_t len = 0;
  const char *raw = mcp_message_id(m, &len);
  ck_assert_str_eq(raw, "\"a\\u0041\""); /* as received in the id */
  ck_assert_uint_eq(len, strlen(raw));
  mcp_message_free(m);

  struct {
    const char *text, *id;
  } ids[] = {
      {"{\"id\":12,\"method\":\"ping\"}", "12"},
      {"{\"id\":-3,\"method\":\"ping\"}", "-3"},
      {"{\"id\":1E2,\"method\":\"ping\"}", "1E2"},
      {"{\"id\":null,\"method\":\"ping\"}", NULL}, /* not an id */
      {"{\"method\":\"ping\"}", NULL},
      {"[{\"id\":1,\"method\":\"ping\"}]", NULL}, /* a batch has none */
      {"\"id\"", NULL},
  };
  for (size_t i = 0; i < TU_COUNT(ids); i++) {
    ck_assert_int_eq(mcp_message_parse(ids[i].text, strlen(ids[i].text), &m),
                     0);
    raw = mcp_message_id(m, NULL);
    if (ids[i].id)
      ck_assert_msg(raw && strcmp(raw, ids[i].id) == 0, "%s: id %s",
                    ids[i].text, raw ? raw : "(none)");
    else
      ck_assert_msg(raw == NULL, "%s: id %s", ids[i].text, raw);
    mcp_message_free(m);
  }
  ck_assert_ptr_null(mcp_message_json(NULL));
  ck_assert_ptr_null(mcp_message_id(NULL, &len));
  mcp_message_free(NULL);
}
END_TEST

START_TEST(the_session_rules_of_json) {
  char deep[200];
  size_t n = 0;
  for (int i = 0; i < 70; i++)
    deep[n++] = '[';
  for (int i = 0; i < 70; i++)
    deep[n++] = ']';
  struct {
    const char *text;
    size_t len;
    int rc;
  } bad[] = {
      {"", 0, MCP_EPARSE},
      {"{\"id\":1,\"id\":2}", 0, MCP_EPARSE},            /* duplicate key */
      {"{\"method\":\"\xff\"}", 0, MCP_EPARSE},          /* not UTF-8 */
      {"{\"method\":\"ping\"} x", 0, MCP_EPARSE},        /* after the value */
      {"{\"method\":\"a\\u0000b\"}", 0, MCP_EPARSE},     /* a NUL */
      {"{\"method\":\"ping\",}", 0, MCP_EPARSE},         /* trailing comma */
      {"{\"id\":01}", 0, MCP_EPARSE},                    /* number grammar */
      {"{\"method\":\"a\nb\"}", 0, MCP_EPARSE},          /* raw control */
      {"{\"method\":\"ping\"}\0{}", 17 + 3, MCP_EPARSE}, /* a NUL byte */
      {deep, n, MCP_ELIMIT},
  };
  mcp_message *const sentinel = (mcp_message *)&n;
  for (size_t i = 0; i < TU_COUNT(bad); i++) {
    mcp_message *m = sentinel;
    size_t len = bad[i].len ? bad[i].len : strlen(bad[i].text);
    ck_assert_int_eq(mcp_message_parse(bad[i].text, len, &m), bad[i].rc);
    ck_assert_ptr_eq(m, sentinel); /* untouched on failure */
  }
  mcp_message *m = sentinel;
  ck_assert_int_eq(mcp_message_parse("{}", 2, NULL), MCP_EINVAL);
  ck_assert_int_eq(mcp_message_parse(NULL, 2, &m), MCP_EINVAL);
  ck_assert_ptr_eq(m, sentinel);
  ck_assert_int_eq(mcp_message_parse(NULL, 0, &m), MCP_EPARSE);
}
END_TEST

START_TEST(handed_over_even_when_refused) {
  tu_alloc_install(0);
  mcp_server *srv = server();
  ck_assert_ptr_nonnull(srv);
  capture out = {0};
  mcp_session *s = NULL;
  ck_assert_int_eq(mcp_session_new(srv, NULL, capture_send, &out, &s), 0);
  long before = tu_alloc.live;
  mcp_message *m = NULL;
  /* A NULL session or a sink without send: refused, and freed. */
  ck_assert_int_eq(mcp_message_parse(LEGACY_INIT, strlen(LEGACY_INIT), &m), 0);
  ck_assert_int_eq(mcp_session_receive_message(NULL, m, NULL), MCP_EINVAL);
  ck_assert_int_eq(mcp_message_parse(LEGACY_INIT, strlen(LEGACY_INIT), &m), 0);
  capture k = {0};
  const mcp_sink no_send = {
      .send = NULL, .done = capture_done, .user_data = &k};
  ck_assert_int_eq(mcp_session_receive_message(s, m, &no_send), MCP_EINVAL);
  ck_assert_int_eq(k.done, 0);
  ck_assert_int_eq(mcp_session_receive_message(s, NULL, NULL), MCP_EINVAL);
  ck_assert_int_eq(tu_alloc.live, before);
  ck_assert_ptr_null(out.text); /* nothing answered */
  mcp_session_free(s);
  mcp_server_free(srv);
  capture_free(&out);
  ck_assert_int_eq(tu_alloc.live, 0);
  tu_alloc_remove();
}
END_TEST

START_TEST(a_sink_gets_the_reply_and_done_once) {
  mcp_server *srv = server();
  ck_assert_ptr_nonnull(srv);
  capture out = {0}, k = {0};
  mcp_session *s = NULL;
  ck_assert_int_eq(mcp_session_new(srv, NULL, capture_send, &out, &s), 0);
  const mcp_sink sink = {
      .send = capture_send, .done = capture_done, .user_data = &k};
  for (size_t i = 0; i < 4; i++) {
    mcp_message *m = NULL;
    ck_assert_int_eq(mcp_message_parse(LEGACY[i], strlen(LEGACY[i]), &m), 0);
    ck_assert_int_eq(mcp_session_receive_message(s, m, &sink), 0);
    ck_assert_int_eq(k.done, (int)i + 1);
  }
  ck_assert_ptr_null(out.text); /* everything went to the sink */
  ck_assert_ptr_nonnull(strstr(k.text, "\"id\":\"a\\u0041\""));
  ck_assert_ptr_nonnull(strstr(k.text, "h\xc3\xa9llo")); /* the echo */
  mcp_session_free(s);
  mcp_server_free(srv);
  capture_free(&out);
  capture_free(&k);
}
END_TEST

/* Parses and hands over every message of LEGACY with the n-th allocation
 * failing; returns true when nothing failed. */
static bool alloc_run(int *done_ok) {
  *done_ok = 1;
  mcp_server *srv = server();
  if (srv == NULL)
    return false;
  capture out = {0}, k = {0};
  mcp_session *s = NULL;
  bool ok = true;
  if (mcp_session_new(srv, NULL, capture_send, &out, &s) != 0) {
    mcp_server_free(srv);
    return false;
  }
  const mcp_sink sink = {
      .send = capture_send, .done = capture_done, .user_data = &k};
  for (size_t i = 0; i < TU_COUNT(LEGACY); i++) {
    mcp_message *m = NULL;
    int rc = mcp_message_parse(LEGACY[i], strlen(LEGACY[i]), &m);
    ck_assert_msg(rc == 0 || rc == MCP_ENOMEM, "parse: %d", rc);
    if (rc) {
      ok = false;
      continue;
    }
    int before = k.done;
    rc = mcp_session_receive_message(s, m, &sink);
    ck_assert_msg(rc == 0 || rc == MCP_ENOMEM, "receive: %d", rc);
    ok &= rc == 0;
    if (k.done != before + 1)
      *done_ok = 0;
  }
  mcp_session_free(s);
  mcp_server_free(srv);
  ok &= !out.failed && !k.failed;
  capture_free(&out);
  capture_free(&k);
  return ok;
}

START_TEST(every_allocation_failing_leaks_nothing) {
  bool finished = false;
  for (long n = 1; n < 5000 && !finished; n++) {
    int done_ok = 0;
    tu_alloc_install(n);
    bool ok = alloc_run(&done_ok);
    long failures = tu_alloc.failures;
    tu_assert_no_leak(n);
    tu_alloc_remove();
    ck_assert_msg(done_ok, "fail_at %ld: done not called exactly once", n);
    if (failures == 0) {
      finished = true;
      ck_assert_msg(ok, "the run failed without a failed allocation");
    }
  }
  ck_assert(finished);
}
END_TEST

int main(void) {
  Suite *s = suite_create("message");
  TCase *t = tcase_create("message");
  tcase_set_timeout(t, 300);
  tcase_add_test(t, same_answers_as_the_bytes);
  tcase_add_test(t, the_tree_and_the_exact_id);
  tcase_add_test(t, the_session_rules_of_json);
  tcase_add_test(t, handed_over_even_when_refused);
  tcase_add_test(t, a_sink_gets_the_reply_and_done_once);
  tcase_add_test(t, every_allocation_failing_leaks_nothing);
  suite_add_tcase(s, t);
  return tu_run(s);
}
