/* Tests for lib/rpc/jsonrpc.c: envelope classification of every valid and
 * invalid message shape, and the exact bytes of result, error and
 * notification framing. */
#include <check.h>
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "testutil.h"

/* ---- helpers ------------------------------------------------------------ */

/* A parsed message and its classification; free with done(). */
typedef struct classified {
  mcp__json_doc doc;
  mcp__msg m;
} classified;

static void classify(classified *c, const char *json) {
  char err[200];
  memset(c, 0, sizeof *c);
  int rc = mcp__json_parse(json, strlen(json), NULL, &c->doc, err, sizeof err);
  ck_assert_msg(rc == 0, "not strict JSON: %s: %s", json, err);
  mcp__msg_classify(&c->doc, c->doc.root, &c->m);
}

static void done(classified *c) { mcp__json_doc_free(&c->doc); }

/* The raw id of a classified message as a NUL-terminated string ("" when
 * it has none). */
static const char *id_text(const classified *c) {
  static char buf[256];
  if (c->m.id == NULL)
    return "";
  ck_assert_uint_lt(c->m.id_len, sizeof buf);
  memcpy(buf, c->m.id, c->m.id_len);
  buf[c->m.id_len] = '\0';
  return buf;
}

/* json must be classified invalid; returns nothing, checks a reason exists
 * and that the id was kept exactly when expected_id is not NULL (or dropped
 * when it is NULL). */
static void expect_invalid(const char *json, const char *expected_id) {
  classified c;
  classify(&c, json);
  ck_assert_msg(c.m.kind == MCP__MSG_INVALID, "accepted (kind %d): %s",
                (int)c.m.kind, json);
  ck_assert_msg(c.m.why != NULL && c.m.why[0] != '\0', "no reason for %s",
                json);
  ck_assert_ptr_null(c.m.method);
  if (expected_id == NULL)
    ck_assert_msg(c.m.id == NULL, "kept id %s for %s", id_text(&c), json);
  else
    ck_assert_msg(c.m.id && strcmp(id_text(&c), expected_id) == 0,
                  "id of %s: got '%s', want '%s'", json, id_text(&c),
                  expected_id);
  done(&c);
}

/* Frames with f into a fresh buffer and compares the exact text. */
#define EXPECT_FRAME(call, expected)                                           \
  do {                                                                         \
    mcp__buf b_ = {0};                                                         \
    mcp__buf *b = &b_;                                                         \
    ck_assert_int_eq((call), 0);                                               \
    ck_assert_str_eq(mcp__buf_str(b), (expected));                             \
    mcp__buf_free(b);                                                          \
  } while (0)

/* ---- requests, notifications, responses --------------------------------- */

START_TEST(request_integer_id) {
  classified c;
  classify(&c, "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/list\","
               "\"params\":{\"cursor\":\"x\"}}");
  ck_assert_int_eq(c.m.kind, MCP__MSG_REQUEST);
  ck_assert_str_eq(c.m.method, "tools/list");
  ck_assert_ptr_nonnull(c.m.params);
  ck_assert(cJSON_IsObject(c.m.params));
  ck_assert_ptr_nonnull(cJSON_GetObjectItemCaseSensitive(c.m.params, "cursor"));
  ck_assert_ptr_nonnull(c.m.id_node);
  ck_assert_str_eq(id_text(&c), "7");
  ck_assert_uint_eq(c.m.id_len, 1);
  ck_assert_ptr_null(c.m.why);
  done(&c);
}
END_TEST

START_TEST(request_string_id_raw) {
  classified c;
  /* The raw text is kept, escapes included, so the reply echoes it. */
  classify(&c, "{\"method\":\"ping\",\"id\":\"a\\u00e9\\/b\","
               "\"jsonrpc\":\"2.0\"}");
  ck_assert_int_eq(c.m.kind, MCP__MSG_REQUEST);
  ck_assert_str_eq(c.m.method, "ping");
  ck_assert_ptr_null(c.m.params);
  ck_assert_str_eq(id_text(&c), "\"a\\u00e9\\/b\"");
  done(&c);
}
END_TEST

START_TEST(request_big_and_negative_ids) {
  static const char *const ids[] = {"0",
                                    "-1",
                                    "9007199254740993",
                                    "123456789012345678901234567890",
                                    "-123456789012345678901234567890",
                                    "\"\"",
                                    "\"1\""};
  for (size_t i = 0; i < TU_COUNT(ids); i++) {
    char json[200];
    snprintf(json, sizeof json,
             "{\"jsonrpc\":\"2.0\",\"id\":%s,\"method\":\"m\"}", ids[i]);
    classified c;
    classify(&c, json);
    ck_assert_msg(c.m.kind == MCP__MSG_REQUEST, "%s not a request", json);
    ck_assert_str_eq(id_text(&c), ids[i]);
    done(&c);
  }
}
END_TEST

START_TEST(notification) {
  classified c;
  classify(&c,
           "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}");
  ck_assert_int_eq(c.m.kind, MCP__MSG_NOTIFICATION);
  ck_assert_str_eq(c.m.method, "notifications/initialized");
  ck_assert_ptr_null(c.m.params);
  ck_assert_ptr_null(c.m.id_node);
  ck_assert_ptr_null(c.m.id);
  done(&c);

  classify(&c, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\","
               "\"params\":{\"requestId\":3}}");
  ck_assert_int_eq(c.m.kind, MCP__MSG_NOTIFICATION);
  ck_assert_ptr_nonnull(c.m.params);
  done(&c);
}
END_TEST

START_TEST(method_length_limit) {
  char json[MCP__MAX_METHOD + 100];
  char method[MCP__MAX_METHOD + 2];
  memset(method, 'm', MCP__MAX_METHOD);
  method[MCP__MAX_METHOD] = '\0';
  snprintf(json, sizeof json,
           "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"%s\"}", method);
  classified c;
  classify(&c, json);
  ck_assert_int_eq(c.m.kind, MCP__MSG_REQUEST);
  ck_assert_uint_eq(strlen(c.m.method), MCP__MAX_METHOD);
  done(&c);

  method[MCP__MAX_METHOD] = 'm';
  method[MCP__MAX_METHOD + 1] = '\0';
  snprintf(json, sizeof json,
           "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"%s\"}", method);
  expect_invalid(json, "1");
  /* A notification too. */
  snprintf(json, sizeof json, "{\"jsonrpc\":\"2.0\",\"method\":\"%s\"}",
           method);
  expect_invalid(json, NULL);
}
END_TEST

START_TEST(responses) {
  static const char *const ok[] = {
      "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}",
      "{\"jsonrpc\":\"2.0\",\"id\":\"x\",\"result\":{\"a\":[1]}}",
      "{\"jsonrpc\":\"2.0\",\"id\":2,\"error\":{\"code\":-32601,"
      "\"message\":\"no\"}}",
      /* An error about a request whose id could not be read: null id
       * (JSON-RPC 2.0) or none (MCP 2025-11-25). Still a response. */
      "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32700,"
      "\"message\":\"Parse error\"}}",
      "{\"jsonrpc\":\"2.0\",\"error\":{\"code\":-32700,\"message\":"
      "\"Parse error\"}}"};
  for (size_t i = 0; i < TU_COUNT(ok); i++) {
    classified c;
    classify(&c, ok[i]);
    ck_assert_msg(c.m.kind == MCP__MSG_RESPONSE, "not a response: %s", ok[i]);
    ck_assert_ptr_null(c.m.method);
    ck_assert_ptr_null(c.m.why);
    ck_assert(i >= 3 || c.m.id != NULL);
    ck_assert(i < 3 || c.m.id == NULL);
    done(&c);
  }
  /* Both result and error, neither, no id, non-object payloads. */
  expect_invalid("{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{},\"error\":{"
                 "\"code\":1,\"message\":\"x\"}}",
                 "1");
  expect_invalid("{\"jsonrpc\":\"2.0\",\"id\":1}", "1");
  /* A result always needs a real id; an id-less error needs an error. */
  expect_invalid("{\"jsonrpc\":\"2.0\",\"result\":{}}", NULL);
  expect_invalid("{\"jsonrpc\":\"2.0\",\"id\":null,\"result\":{}}", NULL);
  expect_invalid("{\"jsonrpc\":\"2.0\",\"id\":null,\"result\":{},"
                 "\"error\":{\"code\":1,\"message\":\"x\"}}",
                 NULL);
  expect_invalid("{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":\"x\"}", NULL);
  expect_invalid("{\"jsonrpc\":\"2.0\",\"id\":1.5,\"error\":{\"code\":1,"
                 "\"message\":\"x\"}}",
                 NULL);
  expect_invalid("{\"jsonrpc\":\"1.0\",\"id\":null,\"error\":{\"code\":1,"
                 "\"message\":\"x\"}}",
                 NULL);
  /* With a method it is a request whose id is null: invalid. */
  expect_invalid("{\"jsonrpc\":\"2.0\",\"id\":null,\"method\":\"m\","
                 "\"error\":{\"code\":1,\"message\":\"x\"}}",
                 NULL);
  expect_invalid("{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":5}", "1");
  expect_invalid("{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":\"bad\"}", "1");
  /* "Result" is not "result". */
  expect_invalid("{\"jsonrpc\":\"2.0\",\"id\":1,\"Result\":{}}", "1");
}
END_TEST

/* ---- invalid shapes ----------------------------------------------------- */

START_TEST(not_an_object) {
  static const char *const bad[] = {"42",    "\"x\"", "null", "true",
                                    "false", "[]",    "[{}]", "1.5"};
  for (size_t i = 0; i < TU_COUNT(bad); i++) {
    classified c;
    classify(&c, bad[i]);
    ck_assert_int_eq(c.m.kind, MCP__MSG_INVALID);
    ck_assert_ptr_nonnull(c.m.why);
    ck_assert_ptr_null(c.m.id_node);
    ck_assert_ptr_null(c.m.id);
    done(&c);
  }
}
END_TEST

START_TEST(jsonrpc_member) {
  expect_invalid("{\"id\":1,\"method\":\"ping\"}", "1");
  expect_invalid("{\"jsonrpc\":\"1.0\",\"id\":1,\"method\":\"ping\"}", "1");
  expect_invalid("{\"jsonrpc\":2.0,\"id\":1,\"method\":\"ping\"}", "1");
  expect_invalid("{\"jsonrpc\":2,\"id\":1,\"method\":\"ping\"}", "1");
  expect_invalid("{\"jsonrpc\":\"2.0 \",\"id\":1,\"method\":\"ping\"}", "1");
  expect_invalid("{\"jsonrpc\":\"2\",\"id\":1,\"method\":\"ping\"}", "1");
  expect_invalid("{\"jsonrpc\":null,\"id\":1,\"method\":\"ping\"}", "1");
  expect_invalid("{\"JSONRPC\":\"2.0\",\"id\":1,\"method\":\"ping\"}", "1");
}
END_TEST

START_TEST(bad_ids) {
  static const char *const bad[] = {"null", "{}",   "{\"a\":1}", "[]",
                                    "[1]",  "true", "false",     "1.5",
                                    "1.0",  "1e3",  "-0.5",      "1E2"};
  for (size_t i = 0; i < TU_COUNT(bad); i++) {
    char json[200];
    snprintf(json, sizeof json,
             "{\"jsonrpc\":\"2.0\",\"id\":%s,\"method\":\"ping\"}", bad[i]);
    classified c;
    classify(&c, json);
    ck_assert_msg(c.m.kind == MCP__MSG_INVALID, "accepted id %s", bad[i]);
    ck_assert_ptr_null(c.m.id);
    ck_assert_ptr_nonnull(c.m.id_node); /* present, but unusable */
    ck_assert_ptr_nonnull(c.m.why);
    if (strcmp(bad[i], "null") == 0)
      ck_assert_msg(strstr(c.m.why, "null") != NULL, "why: %s", c.m.why);
    done(&c);
    /* The same ids as a response are refused too. */
    snprintf(json, sizeof json, "{\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{}}",
             bad[i]);
    expect_invalid(json, NULL);
  }
}
END_TEST

START_TEST(bad_methods) {
  expect_invalid("{\"jsonrpc\":\"2.0\",\"id\":1}", "1");
  expect_invalid("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":5}", "1");
  expect_invalid("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":null}", "1");
  expect_invalid("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":[\"ping\"]}", "1");
  expect_invalid("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":{}}", "1");
  expect_invalid("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":true}", "1");
  expect_invalid("{\"jsonrpc\":\"2.0\",\"method\":7}", NULL);
}
END_TEST

START_TEST(bad_params) {
  static const char *const bad[] = {"[]",   "[1,2]", "\"x\"", "1",
                                    "null", "true",  "false"};
  for (size_t i = 0; i < TU_COUNT(bad); i++) {
    char json[200];
    snprintf(json, sizeof json,
             "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"m\",\"params\":%s}",
             bad[i]);
    expect_invalid(json, "1");
    snprintf(json, sizeof json,
             "{\"jsonrpc\":\"2.0\",\"method\":\"m\",\"params\":%s}", bad[i]);
    expect_invalid(json, NULL);
  }
}
END_TEST

START_TEST(case_variant_keys) {
  classified c;
  /* "Method" is an unknown member, not the method. */
  expect_invalid("{\"jsonrpc\":\"2.0\",\"id\":1,\"Method\":\"ping\"}", "1");
  expect_invalid("{\"jsonrpc\":\"2.0\",\"id\":1,\"METHOD\":\"ping\"}", "1");

  /* "PARAMS" is ignored: no params, and its bad type does not matter. */
  classify(&c, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\","
               "\"PARAMS\":[1]}");
  ck_assert_int_eq(c.m.kind, MCP__MSG_REQUEST);
  ck_assert_ptr_null(c.m.params);
  done(&c);
  classify(&c, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\","
               "\"Params\":{\"a\":1},\"params\":{\"b\":2}}");
  ck_assert_int_eq(c.m.kind, MCP__MSG_REQUEST);
  ck_assert_ptr_nonnull(cJSON_GetObjectItemCaseSensitive(c.m.params, "b"));
  done(&c);

  /* "ID" is not an id: the message is a notification. */
  classify(&c, "{\"jsonrpc\":\"2.0\",\"ID\":5,\"method\":\"ping\"}");
  ck_assert_int_eq(c.m.kind, MCP__MSG_NOTIFICATION);
  ck_assert_ptr_null(c.m.id_node);
  ck_assert_ptr_null(c.m.id);
  done(&c);
  /* ...and "Id" with a bad type does not make the message invalid. */
  classify(&c, "{\"jsonrpc\":\"2.0\",\"Id\":null,\"method\":\"x\"}");
  ck_assert_int_eq(c.m.kind, MCP__MSG_NOTIFICATION);
  done(&c);
}
END_TEST

START_TEST(invalid_keeps_id) {
  /* An invalid message keeps its id, raw, when the id itself is usable. */
  expect_invalid("{\"jsonrpc\":\"1.0\",\"id\":\"r\\u0031\",\"method\":\"x\"}",
                 "\"r\\u0031\"");
  expect_invalid("{\"jsonrpc\":\"2.0\",\"id\":99999999999999999999999,"
                 "\"method\":1}",
                 "99999999999999999999999");
}
END_TEST

START_TEST(classify_resets_output) {
  classified c;
  classify(&c, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}");
  mcp__msg m = c.m;
  /* Reuse the filled struct for an invalid message: nothing stale stays. */
  mcp__msg_classify(&c.doc,
                    cJSON_GetObjectItemCaseSensitive(c.doc.root, "method"), &m);
  ck_assert_int_eq(m.kind, MCP__MSG_INVALID);
  ck_assert_ptr_null(m.method);
  ck_assert_ptr_null(m.id);
  ck_assert_ptr_null(m.id_node);
  ck_assert_ptr_null(m.params);
  done(&c);
}
END_TEST

/* ---- framing ------------------------------------------------------------ */

START_TEST(frame_result) {
  EXPECT_FRAME(mcp__rpc_result(b, "1", 1, "{}", 2),
               "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}");
  EXPECT_FRAME(
      mcp__rpc_result(b, "\"a\\/b\"", 6, "{\"x\":[1,2]}", 11),
      "{\"jsonrpc\":\"2.0\",\"id\":\"a\\/b\",\"result\":{\"x\":[1,2]}}");
  /* Only id_len and result_len bytes are taken. */
  EXPECT_FRAME(mcp__rpc_result(b, "123456", 3, "{}garbage", 2),
               "{\"jsonrpc\":\"2.0\",\"id\":123,\"result\":{}}");
  /* A NULL id is written as null. */
  EXPECT_FRAME(mcp__rpc_result(b, NULL, 0, "{}", 2),
               "{\"jsonrpc\":\"2.0\",\"id\":null,\"result\":{}}");
}
END_TEST

START_TEST(frame_error) {
  EXPECT_FRAME(mcp__rpc_error(b, "5", 1, MCP__ID_NULL, -32601,
                              "Method not found: x", NULL),
               "{\"jsonrpc\":\"2.0\",\"id\":5,\"error\":{\"code\":-32601,"
               "\"message\":\"Method not found: x\"}}");
  /* A known id is written whatever the null-id style. */
  EXPECT_FRAME(mcp__rpc_error(b, "\"q\"", 3, MCP__ID_OMIT, -32602, "bad", NULL),
               "{\"jsonrpc\":\"2.0\",\"id\":\"q\",\"error\":{\"code\":-32602,"
               "\"message\":\"bad\"}}");
  /* Unknown id: null or omitted. */
  EXPECT_FRAME(
      mcp__rpc_error(b, NULL, 0, MCP__ID_NULL, -32700, "Parse error", NULL),
      "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32700,"
      "\"message\":\"Parse error\"}}");
  EXPECT_FRAME(
      mcp__rpc_error(b, NULL, 0, MCP__ID_OMIT, -32700, "Parse error", NULL),
      "{\"jsonrpc\":\"2.0\",\"error\":{\"code\":-32700,"
      "\"message\":\"Parse error\"}}");
  /* data is inserted as JSON. */
  EXPECT_FRAME(mcp__rpc_error(b, "2", 1, MCP__ID_NULL, MCP_RPC_FORBIDDEN,
                              "Forbidden", "{\"requiredScopes\":[\"a\"]}"),
               "{\"jsonrpc\":\"2.0\",\"id\":2,\"error\":{\"code\":-31403,"
               "\"message\":\"Forbidden\",\"data\":{\"requiredScopes\":["
               "\"a\"]}}}");
  /* The message is quoted: quotes, backslashes, controls. */
  EXPECT_FRAME(mcp__rpc_error(b, "3", 1, MCP__ID_NULL, -32603,
                              "a \"b\" \\ c\nd\x01", NULL),
               "{\"jsonrpc\":\"2.0\",\"id\":3,\"error\":{\"code\":-32603,"
               "\"message\":\"a \\\"b\\\" \\\\ c\\nd\\u0001\"}}");
  /* Any int code, positive too. */
  EXPECT_FRAME(mcp__rpc_error(b, "4", 1, MCP__ID_NULL, 42, "", NULL),
               "{\"jsonrpc\":\"2.0\",\"id\":4,\"error\":{\"code\":42,"
               "\"message\":\"\"}}");
}
END_TEST

START_TEST(frame_notification) {
  EXPECT_FRAME(
      mcp__rpc_notification(b, "notifications/tools/list_changed", NULL),
      "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/tools/"
      "list_changed\"}");
  EXPECT_FRAME(mcp__rpc_notification(b, "notifications/progress",
                                     "{\"progressToken\":1,\"progress\":2}"),
               "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\","
               "\"params\":{\"progressToken\":1,\"progress\":2}}");
  EXPECT_FRAME(mcp__rpc_notification(b, "a\"b", NULL),
               "{\"jsonrpc\":\"2.0\",\"method\":\"a\\\"b\"}");
}
END_TEST

START_TEST(frames_are_strict_json) {
  /* Everything framed parses under the strict layer and classifies back. */
  mcp__buf b = {0};
  mcp__rpc_error(&b, NULL, 0, MCP__ID_NULL, -32600, "x\ty", "[1,{\"a\":null}]");
  mcp__json_doc doc;
  char err[200];
  ck_assert_int_eq(mcp__json_parse(b.data, b.len, NULL, &doc, err, sizeof err),
                   0);
  mcp__msg m;
  mcp__msg_classify(&doc, doc.root, &m);
  /* Our own id-less error reads back as a response (never answered). */
  ck_assert_int_eq(m.kind, MCP__MSG_RESPONSE);
  ck_assert_ptr_null(m.id);
  mcp__json_doc_free(&doc);
  mcp__buf_free(&b);

  mcp__rpc_result(&b, "\"i\"", 3, "{}", 2);
  ck_assert_int_eq(mcp__json_parse(b.data, b.len, NULL, &doc, err, sizeof err),
                   0);
  mcp__msg_classify(&doc, doc.root, &m);
  ck_assert_int_eq(m.kind, MCP__MSG_RESPONSE);
  ck_assert_uint_eq(m.id_len, 3);
  ck_assert_int_eq(memcmp(m.id, "\"i\"", 3), 0);
  mcp__json_doc_free(&doc);
  mcp__buf_free(&b);
}
END_TEST

START_TEST(frame_out_of_memory) {
  /* Every failing allocation is reported, nothing leaks, and a buffer that
   * failed stays failed (latched). */
  for (long n = 1; n < 10; n++) {
    tu_alloc_install(n);
    mcp__buf b = {0};
    int r1 = mcp__rpc_result(&b, "1", 1, "{}", 2);
    mcp__buf_free(&b);
    int r2 = mcp__rpc_error(&b, NULL, 0, MCP__ID_NULL, -32700, "x", "{}");
    mcp__buf_free(&b);
    int r3 = mcp__rpc_notification(&b, "m", "{}");
    mcp__buf_free(&b);
    long failures = tu_alloc.failures, live = tu_alloc.live;
    tu_alloc_remove();
    ck_assert_int_eq(live, 0);
    if (failures == 0) {
      ck_assert_int_eq(r1 | r2 | r3, 0);
      break;
    }
    ck_assert(r1 == MCP_ENOMEM || r2 == MCP_ENOMEM || r3 == MCP_ENOMEM);
    ck_assert(r1 == 0 || r1 == MCP_ENOMEM);
    ck_assert(r2 == 0 || r2 == MCP_ENOMEM);
    ck_assert(r3 == 0 || r3 == MCP_ENOMEM);
  }
}
END_TEST

/* ---- canonical ids ----------------------------------------------------- */

/* The canonical id is the raw text itself unless the raw text has escapes;
 * only then is scratch written. */
START_TEST(canon_id) {
  static const struct {
    const char *id, *canon;
    int rewritten;
  } cases[] = {
      {"7", "7", 0},
      {"-0", "-0", 0},
      {"123456789012345678901234567890", "123456789012345678901234567890", 0},
      {"\"abc\"", "\"abc\"", 0},
      {"\"caf\xC3\xA9 x\"", "\"caf\xC3\xA9 x\"", 0},
      {"\"\"", "\"\"", 0},
      {"\"\\u0061b\"", "\"ab\"", 1},
      {"\"a\\/b\"", "\"a/b\"", 1},
      {"\"a\\\"b\\n\"", "\"a\\\"b\\n\"", 1},
  };
  for (size_t i = 0; i < TU_COUNT(cases); i++) {
    char json[200];
    snprintf(json, sizeof json,
             "{\"jsonrpc\":\"2.0\",\"id\":%s,\"method\":\"x\"}", cases[i].id);
    classified c;
    classify(&c, json);
    ck_assert_int_eq(c.m.kind, MCP__MSG_REQUEST);
    mcp__buf scratch = {0};
    const char *canon = mcp__msg_canon_id(&c.m, &scratch);
    ck_assert_msg(canon && strcmp(canon, cases[i].canon) == 0,
                  "case %zu: got %s", i, canon ? canon : "NULL");
    if (cases[i].rewritten)
      ck_assert_ptr_eq(canon, scratch.data);
    else
      ck_assert_ptr_null(scratch.data);
    mcp__buf_free(&scratch);

    /* With no memory a rewritten id is NULL, never a wrong text. */
    tu_alloc_install(1);
    canon = mcp__msg_canon_id(&c.m, &scratch);
    if (cases[i].rewritten)
      ck_assert_ptr_null(canon);
    else
      ck_assert_ptr_eq(canon, c.m.id);
    mcp__buf_free(&scratch);
    ck_assert_int_eq(tu_alloc.live, 0);
    tu_alloc_remove();
    done(&c);
  }
  /* No usable id, no canonical one. */
  classified c;
  mcp__buf scratch = {0};
  classify(&c, "{\"jsonrpc\":\"2.0\",\"id\":1.5,\"method\":\"x\"}");
  ck_assert_ptr_null(mcp__msg_canon_id(&c.m, &scratch));
  done(&c);
  classify(&c, "{\"jsonrpc\":\"2.0\",\"method\":\"x\"}");
  ck_assert_ptr_null(mcp__msg_canon_id(&c.m, &scratch));
  ck_assert_ptr_null(scratch.data);
  done(&c);
}
END_TEST

/* ---- suite -------------------------------------------------------------- */

static Suite *jsonrpc_suite(void) {
  Suite *s = suite_create("jsonrpc");
  TCase *t = tcase_create("classify");
  tcase_add_test(t, request_integer_id);
  tcase_add_test(t, request_string_id_raw);
  tcase_add_test(t, request_big_and_negative_ids);
  tcase_add_test(t, notification);
  tcase_add_test(t, method_length_limit);
  tcase_add_test(t, responses);
  tcase_add_test(t, not_an_object);
  tcase_add_test(t, jsonrpc_member);
  tcase_add_test(t, bad_ids);
  tcase_add_test(t, bad_methods);
  tcase_add_test(t, bad_params);
  tcase_add_test(t, case_variant_keys);
  tcase_add_test(t, invalid_keeps_id);
  tcase_add_test(t, classify_resets_output);
  tcase_add_test(t, canon_id);
  suite_add_tcase(s, t);

  t = tcase_create("frame");
  tcase_add_test(t, frame_result);
  tcase_add_test(t, frame_error);
  tcase_add_test(t, frame_notification);
  tcase_add_test(t, frames_are_strict_json);
  tcase_add_test(t, frame_out_of_memory);
  suite_add_tcase(s, t);
  return s;
}

int main(void) { return tu_run(jsonrpc_suite()); }
