/* Tests for the engine (lib/engine/session.c, lib/engine/call.c): sessions
 * driven with strings, replies checked field by field (and byte by byte where
 * the spec asks for exact echoes). Every captured message is also checked to be
 * strict JSON (valid UTF-8, no duplicates, ...), so nothing the engine sends
 * could be refused by a strict client. */
#include <check.h>
#include <cjson/cJSON.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "engine_fixture.h"
#include "testinternal.h"
#include "testutil.h"
#include "tools.h"

/* ===========================================================================
 * Item 5 via the engine: strict JSON and ids
 * ======================================================================== */

/* One input the strict layer must refuse, with its length (so NUL bytes
 * can be part of it). */
typedef struct bad_input {
  const char *what;
  const char *bytes;
  size_t len; /* 0: strlen */
} bad_input;

static char *repeat(const char *open, size_t n, const char *mid,
                    const char *close) {
  size_t lo = strlen(open), lm = strlen(mid), lc = strlen(close);
  char *s = malloc(n * (lo + lc) + lm + 1);
  ck_assert_ptr_nonnull(s);
  char *p = s;
  for (size_t i = 0; i < n; i++, p += lo)
    memcpy(p, open, lo);
  memcpy(p, mid, lm);
  p += lm;
  for (size_t i = 0; i < n; i++, p += lc)
    memcpy(p, close, lc);
  *p = '\0';
  return s;
}

static void check_parse_errors(const char *id_expect) {
  char *deep = repeat("[", 100, "1", "]");
  char deep_msg[600];
  snprintf(deep_msg, sizeof deep_msg,
           "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\","
           "\"params\":{\"name\":\"run\",\"arguments\":{\"a\":%s}}}",
           deep);
  free(deep);
  static const char raw_nul[] =
      "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"pi\0ng\"}";
  const bad_input bad[] = {
      {"invalid UTF-8 (C3 28)",
       "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"p\xC3\x28ng\"}", 0},
      {"overlong C0 AF",
       "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"params\":{\"a\":"
       "\"\xC0\xAF\"}}",
       0},
      {"byte F5", "{\"jsonrpc\":\"2.0\",\"id\":\"\xF5\",\"method\":\"ping\"}",
       0},
      {"CESU surrogate",
       "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"params\":{\"a\":"
       "\"\xED\xA0\x80\"}}",
       0},
      {"raw control 0x01",
       "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"pi\x01ng\"}", 0},
      {"raw NUL", raw_nul, sizeof raw_nul - 1},
      {"escaped NUL",
       "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\\u0000\"}", 0},
      {"duplicate method",
       "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"method\":"
       "\"tools/list\"}",
       0},
      {"duplicate name in params",
       "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{"
       "\"name\":\"run\",\"name\":\"typed\"}}",
       0},
      {"trailing garbage",
       "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"} x", 0},
      {"two messages", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}{}",
       0},
      {"depth 100", deep_msg, 0},
      {"70-digit number",
       "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{"
       "\"name\":\"run\",\"arguments\":{\"n\":"
       "1234567890123456789012345678901234567890123456789012345678901234567890"
       "}}}",
       0},
      {"truncated", "{\"jsonrpc\":", 0},
      {"empty", "", 0},
      {"whitespace only", " \n", 0},
  };
  for (size_t i = 0; i < TU_COUNT(bad); i++) {
    tu_clear(&P);
    size_t len = bad[i].len ? bad[i].len : strlen(bad[i].bytes);
    int rc = send_n(bad[i].bytes, len);
    ck_assert_msg(rc == 0, "%s: receive returned %d", bad[i].what, rc);
    ck_assert_msg(P.nout == 1, "%s: %zu replies", bad[i].what, P.nout);
    char expected[200];
    snprintf(expected, sizeof expected,
             "{\"jsonrpc\":\"2.0\",\"id\":%s,\"error\":{\"code\":-32700,"
             "\"message\":\"<any>\"}}",
             id_expect);
    EXPECT(0, expected);
    cJSON *m = tu_msg(&P, 0);
    const cJSON *msg = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(m, "error"), "message");
    ck_assert_msg(strncmp(msg->valuestring, "Parse error", 11) == 0,
                  "%s: message %s", bad[i].what, msg->valuestring);
    cJSON_Delete(m);
  }
  ck_assert_int_eq(g_runs, 0);
  /* The session is still usable. */
  tu_clear(&P);
  send_ok(PING1);
  EXPECT_RAW(0, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}");
  tu_clear(&P);
}

START_TEST(parse_errors_before_initialize) { check_parse_errors("null"); }
END_TEST

START_TEST(parse_errors_after_initialize) {
  /* 2025-11-25 omits the id it could not read. */
  tu_initialize(&P, "2025-11-25");
  check_parse_errors("\"<absent>\"");
}
END_TEST

START_TEST(parse_error_id_by_version) {
  static const char garbage[] = "{\"jsonrpc\":";
  /* Before initialize: null. */
  send_ok(garbage);
  EXPECT(0, "{\"id\":null,\"error\":{\"code\":-32700}}");
  for (size_t v = 0; v < TU_COUNT(VERSIONS); v++) {
    reopen(VERSIONS[v]);
    send_ok(garbage);
    bool omit = strcmp(VERSIONS[v], "2025-11-25") == 0;
    EXPECT(0, omit ? "{\"jsonrpc\":\"2.0\",\"id\":\"<absent>\",\"error\":{"
                     "\"code\":-32700}}"
                   : "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":"
                     "-32700}}");
    /* Same for an invalid request whose id is unreadable. */
    tu_clear(&P);
    send_ok("{\"jsonrpc\":\"2.0\",\"id\":null,\"method\":\"ping\"}");
    EXPECT(0, omit ? "{\"id\":\"<absent>\",\"error\":{\"code\":-32600}}"
                   : "{\"id\":null,\"error\":{\"code\":-32600}}");
    /* The raw text really has "id":null, not just a missing member. */
    if (!omit)
      ck_assert_ptr_nonnull(strstr(P.out[0], "\"id\":null"));
    else
      ck_assert_ptr_null(strstr(P.out[0], "\"id\""));
  }
}
END_TEST

START_TEST(invalid_envelopes) {
  tu_initialize(&P, "2025-06-18");
  typedef struct {
    const char *msg, *expect;
  } row;
  char longm[600];
  char method[MCP__MAX_METHOD + 2];
  memset(method, 'x', sizeof method - 1);
  method[sizeof method - 1] = '\0';
  snprintf(longm, sizeof longm,
           "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"%s\"}", method);
  const row rows[] = {
      /* A2: valid JSON but not an object. */
      {"42", "{\"id\":null,\"error\":{\"code\":-32600}}"},
      {"\"x\"", "{\"id\":null,\"error\":{\"code\":-32600}}"},
      {"null", "{\"id\":null,\"error\":{\"code\":-32600}}"},
      {"true", "{\"id\":null,\"error\":{\"code\":-32600}}"},
      /* A15: jsonrpc missing, "1.0", 2.0 as a number; the id is kept. */
      {"{\"id\":1,\"method\":\"ping\"}",
       "{\"id\":1,\"error\":{\"code\":-32600}}"},
      {"{\"jsonrpc\":\"1.0\",\"id\":1,\"method\":\"ping\"}",
       "{\"id\":1,\"error\":{\"code\":-32600}}"},
      {"{\"jsonrpc\":2.0,\"id\":\"s\",\"method\":\"ping\"}",
       "{\"id\":\"s\",\"error\":{\"code\":-32600}}"},
      /* A13, A14: null and unusable ids. */
      {"{\"jsonrpc\":\"2.0\",\"id\":null,\"method\":\"ping\"}",
       "{\"id\":null,\"error\":{\"code\":-32600}}"},
      {"{\"jsonrpc\":\"2.0\",\"id\":{},\"method\":\"ping\"}",
       "{\"id\":null,\"error\":{\"code\":-32600}}"},
      {"{\"jsonrpc\":\"2.0\",\"id\":[1],\"method\":\"ping\"}",
       "{\"id\":null,\"error\":{\"code\":-32600}}"},
      {"{\"jsonrpc\":\"2.0\",\"id\":true,\"method\":\"ping\"}",
       "{\"id\":null,\"error\":{\"code\":-32600}}"},
      {"{\"jsonrpc\":\"2.0\",\"id\":1.5,\"method\":\"ping\"}",
       "{\"id\":null,\"error\":{\"code\":-32600}}"},
      /* A16: method missing, not a string, too long. */
      {"{\"jsonrpc\":\"2.0\",\"id\":2}",
       "{\"id\":2,\"error\":{\"code\":-32600}}"},
      {"{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":5}",
       "{\"id\":2,\"error\":{\"code\":-32600}}"},
      {longm, "{\"id\":3,\"error\":{\"code\":-32600}}"},
      /* params not an object. */
      {"{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"ping\",\"params\":[]}",
       "{\"id\":4,\"error\":{\"code\":-32600}}"},
      /* A response carrying both result and error. */
      {"{\"jsonrpc\":\"2.0\",\"id\":5,\"result\":{},\"error\":{\"code\":1,"
       "\"message\":\"x\"}}",
       "{\"id\":5,\"error\":{\"code\":-32600}}"},
  };
  for (size_t i = 0; i < TU_COUNT(rows); i++) {
    tu_clear(&P);
    ck_assert_msg(tu_send(&P, rows[i].msg) == 0, "row %zu", i);
    ck_assert_msg(P.nout == 1, "row %zu (%s): %zu replies", i, rows[i].msg,
                  P.nout);
    EXPECT(0, rows[i].expect);
    EXPECT(0, "{\"jsonrpc\":\"2.0\",\"result\":\"<absent>\",\"error\":{"
              "\"message\":\"<any>\",\"data\":\"<absent>\"}}");
  }
  /* The 257-byte method is not echoed back. */
  tu_clear(&P);
  send_ok(longm);
  ck_assert_ptr_null(strstr(P.out[0], method));
}
END_TEST

START_TEST(case_variant_keys) {
  tu_initialize(&P, "2025-11-25");
  /* A8: "Method" is not the method. */
  send_ok("{\"jsonrpc\":\"2.0\",\"id\":1,\"Method\":\"ping\"}");
  EXPECT(0, "{\"id\":1,\"error\":{\"code\":-32600}}");
  tu_clear(&P);
  /* "PARAMS" is an unknown member: ping is answered. */
  send_ok("{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\",\"PARAMS\":[1]}");
  EXPECT_RAW(0, "{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{}}");
  tu_clear(&P);
  /* "ID" is not an id: this is a notification, never answered. */
  send_ok("{\"jsonrpc\":\"2.0\",\"ID\":3,\"method\":\"ping\"}");
  EXPECT_COUNT(0);
  /* "JSONRPC" does not count as "jsonrpc". */
  send_ok("{\"JSONRPC\":\"2.0\",\"id\":4,\"method\":\"ping\"}");
  EXPECT(0, "{\"id\":4,\"error\":{\"code\":-32600}}");
  tu_clear(&P);
  /* Inside params: "Name" is not the tool name. */
  send_ok("{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"tools/call\",\"params\":"
          "{\"Name\":\"run\"}}");
  EXPECT(0, "{\"id\":6,\"error\":{\"code\":-32602}}");
  tu_clear(&P);
  /* "Arguments" is not the arguments: the handler sees {}. */
  send_ok("{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":"
          "{\"name\":\"run\",\"Arguments\":{\"a\":1}}}");
  EXPECT(0, "{\"id\":7,\"result\":{\"content\":[{\"type\":\"text\","
            "\"text\":\"ok\"}]}}");
  ck_assert_str_eq(g_args, "{}");
  tu_clear(&P);
  /* A required argument under another case is missing. */
  call_ok("8", "typed", "{\"N\":1}", NULL);
  EXPECT(0, "{\"id\":8,\"result\":{\"isError\":true}}");
  ck_assert_int_eq(g_runs, 1);
  /* "ProgressToken" is not a progress token. */
  tu_clear(&P);
  g_fn = NULL;
  call_ok("9", "run", NULL, "{\"ProgressToken\":{}}");
  EXPECT_COUNT(1);
  EXPECT(0, "{\"id\":9,\"result\":{}}");
}
END_TEST

START_TEST(id_echoed_exactly) {
  tu_initialize(&P, "2025-06-18");
  send_ok("{\"jsonrpc\":\"2.0\",\"id\":123456789012345678901234567890,"
          "\"method\":\"ping\"}");
  EXPECT_RAW(0, "{\"jsonrpc\":\"2.0\",\"id\":123456789012345678901234567890,"
                "\"result\":{}}");
  tu_clear(&P);
  send_ok("{\"jsonrpc\":\"2.0\",\"id\":\"a\\u00e9\\/b\",\"method\":\"ping\"}");
  EXPECT_RAW(0, "{\"jsonrpc\":\"2.0\",\"id\":\"a\\u00e9\\/b\",\"result\":{}}");
  tu_clear(&P);
  send_ok("{\"jsonrpc\":\"2.0\",\"id\":-0,\"method\":\"ping\"}");
  EXPECT_RAW(0, "{\"jsonrpc\":\"2.0\",\"id\":-0,\"result\":{}}");
  tu_clear(&P);
  /* Errors echo it too, and so do tool results. */
  send_ok(
      "{\"jsonrpc\":\"2.0\",\"id\":\"\\ud83d\\ude00\",\"method\":\"nope\"}");
  EXPECT_COUNT(1);
  ck_assert_ptr_nonnull(strstr(P.out[0], "\"id\":\"\\ud83d\\ude00\""));
  EXPECT(0, "{\"error\":{\"code\":-32601}}");
  tu_clear(&P);
  call_ok("98765432109876543210987654321", "run", NULL, NULL);
  EXPECT_RAW(0, "{\"jsonrpc\":\"2.0\",\"id\":98765432109876543210987654321,"
                "\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"ok\"}]"
                "}}");
  tu_clear(&P);
  call_ok("\"x\\ty\"", "nope", NULL, NULL);
  ck_assert_ptr_nonnull(strstr(P.out[0], "\"id\":\"x\\ty\""));
  tu_clear(&P);
  /* Type preserved: 7 and "7" are different ids. */
  send_ok("{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"ping\"}");
  send_ok("{\"jsonrpc\":\"2.0\",\"id\":\"7\",\"method\":\"ping\"}");
  EXPECT(0, "{\"id\":7,\"result\":{}}");
  EXPECT(1, "{\"id\":\"7\",\"result\":{}}");
}
END_TEST

/* ===========================================================================
 * Item 6: lifecycle
 * ======================================================================== */

START_TEST(before_initialize) {
  /* ping is answered at any time. */
  send_ok(PING1);
  EXPECT_RAW(0, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}");
  tu_clear(&P);
  send_ok("{\"jsonrpc\":\"2.0\",\"id\":\"l\",\"method\":\"tools/list\"}");
  EXPECT(0, "{\"id\":\"l\",\"result\":\"<absent>\",\"error\":{\"code\":-32600,"
            "\"message\":\"<any>\"}}");
  tu_clear(&P);
  call_ok("3", "run", NULL, NULL);
  EXPECT(0, "{\"id\":3,\"result\":\"<absent>\",\"error\":{\"code\":-32600}}");
  ck_assert_int_eq(g_runs, 0);
  tu_clear(&P);
  send_ok("{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"nope\"}");
  EXPECT(0, "{\"id\":4,\"error\":{\"code\":-32601}}");
  tu_clear(&P);
  /* notifications/initialized before initialize changes nothing. */
  send_ok("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}");
  EXPECT_COUNT(0);
  send_ok("{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/list\"}");
  EXPECT(0, "{\"id\":5,\"error\":{\"code\":-32600}}");
  ck_assert_ptr_null(mcp_session_protocol_version(P.session));
}
END_TEST

START_TEST(between_initialize_and_initialized) {
  /* After the initialize reply, tools work even before the client's
   * notifications/initialized (the client may pipeline). */
  send_ok("{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":"
          "{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},"
          "\"clientInfo\":{\"name\":\"c\"}}}");
  tu_clear(&P);
  send_ok("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}");
  EXPECT(0, "{\"id\":1,\"result\":{\"tools\":\"<any>\"}}");
}
END_TEST

START_TEST(unknown_method) {
  tu_initialize(&P, "2025-11-25");
  static const char *const methods[] = {"nope", "resources/list",
                                        "prompts/list", "tools/List", ""};
  for (size_t i = 0; i < TU_COUNT(methods); i++) {
    char msg[200];
    snprintf(msg, sizeof msg,
             "{\"jsonrpc\":\"2.0\",\"id\":%zu,\"method\":\"%s\"}", i,
             methods[i]);
    tu_clear(&P);
    send_ok(msg);
    char expected[200];
    snprintf(expected, sizeof expected,
             "{\"id\":%zu,\"result\":\"<absent>\",\"error\":{\"code\":-32601,"
             "\"message\":\"<any>\"}}",
             i);
    EXPECT(0, expected);
  }
}
END_TEST

START_TEST(notifications_never_answered) {
  static const char *const notes[] = {
      "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/unknown\"}",
      "{\"jsonrpc\":\"2.0\",\"method\":\"ping\"}",
      "{\"jsonrpc\":\"2.0\",\"method\":\"tools/call\",\"params\":{\"name\":"
      "\"run\"}}",
      "{\"jsonrpc\":\"2.0\",\"method\":\"initialize\"}",
      "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}",
      "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\","
      "\"params\":{\"x\":1}}",
      /* malformed: a method, but bad params / bad envelope */
      "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\","
      "\"params\":[1]}",
      "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\","
      "\"params\":\"x\"}",
      "{\"jsonrpc\":\"1.0\",\"method\":\"notifications/initialized\"}",
      "{\"method\":\"notifications/initialized\"}",
      "{\"jsonrpc\":\"2.0\",\"method\":42}",
      "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\","
      "\"params\":{\"progressToken\":1,\"progress\":1}}",
  };
  for (int round = 0; round < 2; round++) {
    for (size_t i = 0; i < TU_COUNT(notes); i++) {
      ck_assert_int_eq(tu_send(&P, notes[i]), 0);
      ck_assert_msg(P.nout == 0, "answered %s: %s", notes[i], P.out[0]);
    }
    tu_initialize(&P, "2025-06-18");
  }
  ck_assert_int_eq(g_runs, 0);
  /* A19: a response nobody asked for is dropped silently too. */
  send_ok("{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}");
  send_ok("{\"jsonrpc\":\"2.0\",\"id\":\"x\",\"error\":{\"code\":-1,"
          "\"message\":\"m\"}}");
  /* Error responses without a readable id are responses too: answering
   * them could start an endless exchange of errors. */
  send_ok("{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32700,"
          "\"message\":\"Parse error\"}}");
  send_ok("{\"jsonrpc\":\"2.0\",\"error\":{\"code\":-32600,"
          "\"message\":\"Invalid Request\"}}");
  EXPECT_COUNT(0);
}
END_TEST

START_TEST(list_changed_after_initialized) {
  static const mcp_tool extra = {.name = "extra",
                                 .description = "Added while serving.",
                                 .annotations = TC_READ_ONLY,
                                 .handler = run_handler};
  /* Not yet initialized: nothing. */
  ck_assert_int_eq(mcp_server_add_tool(srv, &extra, NULL), 0);
  EXPECT_COUNT(0);
  tu_initialize(&P, "2025-06-18");
  ck_assert_int_eq(mcp_server_remove_tool(srv, "extra"), 0);
  EXPECT_RAW(0, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/tools/"
                "list_changed\"}");
}
END_TEST

/* ---- batches ------------------------------------------------------------ */

START_TEST(batch_2025_03_26) {
  tu_initialize(&P, "2025-03-26");
  send_ok("[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"},"
          "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/whatever\"},"
          "{\"jsonrpc\":\"2.0\",\"id\":\"b\",\"method\":\"tools/call\","
          "\"params\":{\"name\":\"run\"}},"
          "42,"
          "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"nope\"},"
          "{\"jsonrpc\":\"2.0\",\"id\":4,\"result\":{}}]");
  EXPECT_COUNT(1);
  EXPECT(0, "[{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}},"
            "{\"jsonrpc\":\"2.0\",\"id\":\"b\",\"result\":{\"content\":[{"
            "\"type\":\"text\",\"text\":\"ok\"}]}},"
            "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32600}},"
            "{\"jsonrpc\":\"2.0\",\"id\":3,\"error\":{\"code\":-32601}}]");
  ck_assert_int_eq(g_runs, 1);
  tu_clear(&P);
  /* Only notifications: nothing at all is sent. */
  send_ok("[{\"jsonrpc\":\"2.0\",\"method\":\"notifications/a\"},"
          "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/b\"}]");
  EXPECT_COUNT(0);
  /* Empty batch. */
  send_ok("[]");
  EXPECT_COUNT(1);
  EXPECT(0, "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32600}}");
  tu_clear(&P);
  /* Nested arrays are invalid elements. */
  send_ok("[[]]");
  EXPECT(0, "[{\"id\":null,\"error\":{\"code\":-32600}}]");
}
END_TEST

/* A deferred call reads its arguments after the message that carried them
 * is gone: they are nodes of the message's pool, which the call holds. Two
 * deferred calls of one batch share that pool: the second still reads its
 * arguments after the first has finished. The first's long argument makes
 * the pool take more than one block. */
START_TEST(deferred_arguments_outlive_their_message) {
  reopen("2025-03-26");
  tu_deferred_reset();
  g_fn = tu_defer;
  char pad[3001];
  memset(pad, 'x', sizeof pad - 1);
  pad[sizeof pad - 1] = '\0';
  static char msg[4096];
  snprintf(msg, sizeof msg,
           "[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\","
           "\"params\":{\"name\":\"run\",\"arguments\":{\"s\":\"first\","
           "\"pad\":\"%s\"}}},"
           "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\","
           "\"params\":{\"name\":\"run\",\"arguments\":{\"s\":\"second\"}}}]",
           pad);
  send_ok(msg);
  memset(msg, 0, sizeof msg); /* nothing may point into the input */
  ck_assert_int_eq(tu_ndeferred, 2);
  const char *s;
  ck_assert_int_eq(mcp_call_arg_string(tu_deferred[0], "s", &s), 0);
  ck_assert_str_eq(s, "first");
  ck_assert_int_eq(mcp_call_arg_string(tu_deferred[0], "pad", &s), 0);
  ck_assert_str_eq(s, pad);
  ck_assert_int_eq(mcp_result_text(tu_deferred[0], s), 0);
  ck_assert_int_eq(mcp_call_finish(tu_deferred[0], 0), 0);
  ck_assert_int_eq(mcp_call_arg_string(tu_deferred[1], "s", &s), 0);
  ck_assert_str_eq(s, "second");
  ck_assert_int_eq(mcp_result_text(tu_deferred[1], s), 0);
  ck_assert_int_eq(mcp_call_finish(tu_deferred[1], 0), 0);
  ck_assert_uint_eq(mcp_session_pending(P.session), 0);
  ck_assert_ptr_nonnull(strstr(P.out[P.nout - 1], "\"text\":\"second\""));
}
END_TEST

static void check_batch_refused(const char *version) {
  reopen(version);
  g_runs = 0;
  send_ok("[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"},"
          "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\","
          "\"params\":{\"name\":\"run\"}}]");
  EXPECT_COUNT(1);
  bool omit = version && strcmp(version, "2025-11-25") == 0;
  EXPECT(0, omit ? "{\"jsonrpc\":\"2.0\",\"id\":\"<absent>\",\"error\":{"
                   "\"code\":-32600,\"message\":\"<any>\"}}"
                 : "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":"
                   "-32600,\"message\":\"<any>\"}}");
  ck_assert_int_eq(g_runs, 0); /* nothing executed */
  tu_clear(&P);
  send_ok("[]");
  EXPECT(0, "{\"error\":{\"code\":-32600}}");
  tu_clear(&P);
}

START_TEST(batch_refused) {
  check_batch_refused(NULL);
  check_batch_refused("2024-11-05");
  check_batch_refused("2025-06-18");
  check_batch_refused("2025-11-25");
}
END_TEST

START_TEST(batch_before_initialize_even_with_initialize) {
  /* A batch cannot smuggle initialize in before the session exists. */
  send_ok("[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\","
          "\"params\":{\"protocolVersion\":\"2025-03-26\",\"capabilities\":"
          "{},\"clientInfo\":{\"name\":\"c\"}}}]");
  EXPECT(0, "{\"id\":null,\"error\":{\"code\":-32600}}");
  ck_assert_ptr_null(mcp_session_protocol_version(P.session));
}
END_TEST

/* ---- tools/list --------------------------------------------------------- */

START_TEST(tools_list_pages) {
  tu_initialize(&P, "2025-11-25");
  mcp_server_set_page_size(srv, 2);
  send_ok("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}");
  EXPECT(0, "{\"id\":1,\"result\":{\"tools\":[{\"name\":\"run\"},{\"name\":"
            "\"typed\"}],\"nextCursor\":\"<any>\"}}");
  cJSON *m = tu_msg(&P, 0);
  const cJSON *cur = cJSON_GetObjectItemCaseSensitive(
      cJSON_GetObjectItemCaseSensitive(m, "result"), "nextCursor");
  ck_assert(cJSON_IsString(cur));
  ck_assert_str_ne(cur->valuestring, "");
  char msg[300];
  snprintf(msg, sizeof msg,
           "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\","
           "\"params\":{\"cursor\":\"%s\"}}",
           cur->valuestring);
  cJSON_Delete(m);
  tu_clear(&P);
  send_ok(msg);
  EXPECT(0, "{\"id\":2,\"result\":{\"tools\":[{\"name\":\"noargs\","
            "\"inputSchema\":{\"type\":\"object\",\"additionalProperties\":"
            "false}}],\"nextCursor\":\"<absent>\"}}");
  tu_clear(&P);
  /* Bad cursors. */
  send_ok("{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/list\","
          "\"params\":{\"cursor\":\"zzz\"}}");
  send_ok("{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/list\","
          "\"params\":{\"cursor\":5}}");
  EXPECT(0, "{\"id\":3,\"error\":{\"code\":-32602}}");
  EXPECT(1, "{\"id\":4,\"error\":{\"code\":-32602}}");
  tu_clear(&P);
  /* Default page size again: one page. */
  mcp_server_set_page_size(srv, 0);
  send_ok("{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/list\","
          "\"params\":{}}");
  EXPECT(0, "{\"id\":5,\"result\":{\"tools\":[{\"name\":\"run\"},{\"name\":"
            "\"typed\"},{\"name\":\"noargs\"}],\"nextCursor\":\"<absent>\"}}");
}
END_TEST

/* ===========================================================================
 * tools/call: protocol errors vs tool errors
 * ======================================================================== */

START_TEST(call_unknown_tool) {
  tu_initialize(&P, "2025-11-25");
  call_ok("1", "nope", "{}", NULL);
  EXPECT(0, "{\"id\":1,\"result\":\"<absent>\",\"error\":{\"code\":-32602,"
            "\"message\":\"Unknown tool: nope\"}}");
  tu_clear(&P);
  /* Names are case-sensitive. */
  call_ok("2", "RUN", NULL, NULL);
  EXPECT(0, "{\"id\":2,\"error\":{\"code\":-32602}}");
  ck_assert_int_eq(g_runs, 0);
}
END_TEST

START_TEST(call_unknown_tool_long_utf8_name) {
  /* The name is echoed in the message, cut to a bounded length; the cut
   * must not split a UTF-8 sequence (the reply must stay valid UTF-8). */
  tu_initialize(&P, "2025-11-25");
  char name[400];
  for (size_t pad = 120; pad < 135; pad++) {
    memset(name, 'a', pad);
    strcpy(name + pad, "\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80");
    tu_clear(&P);
    call_ok("1", name, NULL, NULL);
    EXPECT_COUNT(1);
    strict_at(__FILE__, __LINE__, 0);
    EXPECT(0, "{\"id\":1,\"error\":{\"code\":-32602}}");
  }
}
END_TEST

START_TEST(call_malformed_params) {
  tu_initialize(&P, "2025-11-25");
  static const char *const bad[] = {
      "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\"}",
      "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{}}",
      "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{"
      "\"name\":5}}",
      "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{"
      "\"name\":null}}",
      "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{"
      "\"name\":[\"run\"]}}",
      "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{"
      "\"name\":\"run\",\"arguments\":[]}}",
      "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{"
      "\"name\":\"run\",\"arguments\":\"{}\"}}",
      "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{"
      "\"name\":\"run\",\"arguments\":null}}",
      "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{"
      "\"name\":\"run\",\"arguments\":3}}",
  };
  for (size_t i = 0; i < TU_COUNT(bad); i++) {
    tu_clear(&P);
    send_ok(bad[i]);
    ck_assert_msg(P.nout == 1, "%s: %zu replies", bad[i], P.nout);
    EXPECT(0, "{\"id\":1,\"result\":\"<absent>\",\"error\":{\"code\":-32602,"
              "\"message\":\"<any>\"}}");
  }
  ck_assert_int_eq(g_runs, 0);
}
END_TEST

START_TEST(call_missing_arguments_is_empty_object) {
  tu_initialize(&P, "2025-11-25");
  call_ok("1", "run", NULL, NULL);
  EXPECT_RAW(0, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"content\":[{"
                "\"type\":\"text\",\"text\":\"ok\"}]}}");
  ck_assert_str_eq(g_args, "{}");
  /* A tool without arguments accepts a call without them. */
  tu_clear(&P);
  call_ok("2", "noargs", NULL, NULL);
  EXPECT(0, "{\"id\":2,\"result\":{\"isError\":\"<absent>\"}}");
  ck_assert_int_eq(g_runs, 2);
  /* Arguments reach the handler. */
  tu_clear(&P);
  call_ok("3", "typed", "{\"n\":5,\"s\":\"x\"}", NULL);
  ck_assert_str_eq(g_args, "{\"n\":5,\"s\":\"x\"}");
}
END_TEST

START_TEST(call_schema_failure_is_tool_error) {
  tu_initialize(&P, "2025-11-25");
  static const char *const bad[] = {"{}", "{\"n\":\"5\"}", "{\"n\":1.5}",
                                    "{\"n\":1,\"s\":2}",
                                    "{\"n\":1,\"extra\":true}"};
  for (size_t i = 0; i < TU_COUNT(bad); i++) {
    tu_clear(&P);
    call_ok("1", "typed", bad[i], NULL);
    EXPECT_COUNT(1);
    EXPECT(0, "{\"id\":1,\"error\":\"<absent>\",\"result\":{\"content\":[{"
              "\"type\":\"text\",\"text\":\"<any>\"}],\"isError\":true}}");
  }
  /* A tool without arguments refuses some. */
  tu_clear(&P);
  call_ok("2", "noargs", "{\"a\":1}", NULL);
  EXPECT(0, "{\"id\":2,\"result\":{\"isError\":true}}");
  ck_assert_int_eq(g_runs, 0);
  /* Before 2025-11-25 it is a tool error too (allowed either way). */
  reopen("2025-03-26");
  call_ok("3", "typed", "{}", NULL);
  EXPECT(0, "{\"id\":3,\"result\":{\"isError\":true}}");
}
END_TEST

static int h_fail_with_secret(mcp_call *call) {
  mcp_result_text(call, "secret detail");
  return MCP_EIO;
}

START_TEST(call_handler_failure) {
  tu_initialize(&P, "2025-11-25");
  g_fn = h_fail_with_secret;
  call_ok("1", "run", NULL, NULL);
  EXPECT_RAW(0, "{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":-32603,"
                "\"message\":\"Internal error\"}}");
  /* The detail goes to the log, with the tool's name. */
  ck_assert(logged("run"));
  ck_assert(logged(mcp_strerror(MCP_EIO)));
  ck_assert_ptr_null(strstr(P.out[0], "secret"));
  ck_assert_uint_eq(mcp_session_pending(P.session), 0);
}
END_TEST

static int h_latch(mcp_call *call) {
  g_rc[0] = mcp_result_text(call, "bad \xFF utf-8");
  g_rc[1] = mcp_result_text(call, "fine");
  g_rc[2] = mcp_result_image(call, "x", 1, "image/png");
  g_rc[3] = mcp_result_structured(call, "{}");
  g_rc[4] = mcp_result_error(call, "fine");
  return 0;
}

START_TEST(call_builder_latch) {
  tu_initialize(&P, "2025-11-25");
  g_fn = h_latch;
  call_ok("1", "run", NULL, NULL);
  for (int i = 0; i < 5; i++)
    ck_assert_msg(g_rc[i] == MCP_EINVAL, "builder %d returned %d", i, g_rc[i]);
  EXPECT_RAW(0, "{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":-32603,"
                "\"message\":\"Internal error\"}}");
}
END_TEST

static int h_positive(mcp_call *call) {
  mcp_result_text(call, "looks fine");
  return g_rc[0];
}

START_TEST(call_positive_return) {
  tu_initialize(&P, "2025-11-25");
  g_fn = h_positive;
  static const int values[] = {2, 3, 100, INT_MAX};
  for (size_t i = 0; i < TU_COUNT(values); i++) {
    g_rc[0] = values[i];
    tu_clear(&P);
    call_ok("1", "run", NULL, NULL);
    EXPECT(0, "{\"id\":1,\"result\":\"<absent>\",\"error\":{\"code\":-32603,"
              "\"message\":\"Internal error\"}}");
  }
  ck_assert_uint_eq(mcp_session_pending(P.session), 0);
}
END_TEST

static int h_tool_error(mcp_call *call) {
  ck_assert_int_eq(mcp_result_text(call, "partial output"), 0);
  ck_assert_int_eq(mcp_result_error(call, "The file does not exist."), 0);
  return 0;
}

START_TEST(call_result_error) {
  tu_initialize(&P, "2025-11-25");
  g_fn = h_tool_error;
  call_ok("1", "run", NULL, NULL);
  EXPECT_RAW(0, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"content\":[{"
                "\"type\":\"text\",\"text\":\"partial output\"},{\"type\":"
                "\"text\",\"text\":\"The file does not exist.\"}],"
                "\"isError\":true}}");
}
END_TEST

START_TEST(call_empty_result) {
  tu_initialize(&P, "2025-11-25");
  g_fn = h_nothing;
  call_ok("1", "run", NULL, NULL);
  EXPECT_RAW(0, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"content\":[]}}");
}
END_TEST

static int h_getters(mcp_call *call) {
  const char *s = NULL;
  int64_t i = 0;
  double d = 0;
  bool b = false;
  ck_assert_str_eq(mcp_call_name(call), "run");
  const mcp_principal *p = mcp_call_principal(call);
  ck_assert_ptr_nonnull(p);
  ck_assert_str_eq(p->subject, "alice");
  ck_assert_int_eq(mcp_call_arg_string(call, "s", &s), 0);
  ck_assert_str_eq(s, "t\xC3\xA9xt");
  ck_assert_int_eq(mcp_call_arg_int(call, "i", &i), 0);
  ck_assert(i == INT64_C(-9007199254740993));
  ck_assert_int_eq(mcp_call_arg_int(call, "max", &i), 0);
  ck_assert(i == INT64_MAX);
  ck_assert_int_eq(mcp_call_arg_int(call, "big", &i), MCP_ERANGE);
  ck_assert_int_eq(mcp_call_arg_int(call, "f", &i), MCP_ETYPE);
  ck_assert_int_eq(mcp_call_arg_int(call, "s", &i), MCP_ETYPE);
  ck_assert_int_eq(mcp_call_arg_number(call, "f", &d), 0);
  ck_assert(d == 2.5);
  ck_assert_int_eq(mcp_call_arg_number(call, "i", &d), 0);
  ck_assert_int_eq(mcp_call_arg_number(call, "s", &d), MCP_ETYPE);
  ck_assert_int_eq(mcp_call_arg_bool(call, "b", &b), 0);
  ck_assert(b);
  ck_assert_int_eq(mcp_call_arg_bool(call, "i", &b), MCP_ETYPE);
  ck_assert_int_eq(mcp_call_arg_string(call, "nul", &s), MCP_ENOENT);
  ck_assert_int_eq(mcp_call_arg_string(call, "absent", &s), MCP_ENOENT);
  ck_assert_int_eq(mcp_call_arg_int(call, "absent", &i), MCP_ENOENT);
  ck_assert_int_eq(mcp_call_arg_number(call, "absent", &d), MCP_ENOENT);
  ck_assert_int_eq(mcp_call_arg_bool(call, "absent", &b), MCP_ENOENT);
  /* Case-sensitive. */
  ck_assert_int_eq(mcp_call_arg_string(call, "S", &s), MCP_ENOENT);
  ck_assert(!mcp_call_cancelled(call));
  return mcp_result_text(call, "checked");
}

START_TEST(call_argument_getters) {
  static const char *const scopes[] = {"a", NULL};
  mcp_principal alice = {.subject = "alice", .scopes = scopes};
  tu_peer_close(&P);
  tu_peer_open(&P, srv, &alice);
  tu_initialize(&P, "2025-11-25");
  g_fn = h_getters;
  call_ok("1", "run",
          "{\"s\":\"t\\u00e9xt\",\"i\":-9007199254740993,\"max\":"
          "9223372036854775807,\"big\":9223372036854775808,\"f\":2.5,"
          "\"b\":true,\"nul\":null}",
          NULL);
  EXPECT(0, "{\"id\":1,\"result\":{\"content\":[{\"text\":\"checked\"}]}}");
}
END_TEST

/* ===========================================================================
 * Content blocks and per-version shaping
 * ======================================================================== */

static int h_all_blocks(mcp_call *call) {
  static const unsigned char audio[] = {0x00, 0x01, 0x02, 0xFF};
  ck_assert_int_eq(mcp_result_text(call, "hello \"world\"\n"), 0);
  ck_assert_int_eq(mcp_result_image(call, "hi", 2, "image/png"), 0);
  ck_assert_int_eq(mcp_result_audio(call, audio, sizeof audio, "audio/wav"), 0);
  ck_assert_int_eq(
      mcp_result_resource_text(call, "file:///a.txt", "text/plain", "body"), 0);
  ck_assert_int_eq(mcp_result_resource_text(call, "file:///c.txt", NULL, ""),
                   0);
  ck_assert_int_eq(
      mcp_result_resource_blob(call, "file:///b.bin", NULL, "foo", 3), 0);
  ck_assert_int_eq(mcp_result_resource_blob(call, "file:///e.bin",
                                            "application/octet-stream", NULL,
                                            0),
                   0);
  ck_assert_int_eq(mcp_result_resource_link(call, "https://x.example/y", "y",
                                            "text/html", "the y page"),
                   0);
  ck_assert_int_eq(mcp_result_resource_link(call, "u:1", "n", NULL, NULL), 0);
  return 0;
}

START_TEST(content_all_blocks) {
  tu_initialize(&P, "2025-11-25");
  g_fn = h_all_blocks;
  call_ok("1", "run", NULL, NULL);
  EXPECT_COUNT(1);
  EXPECT(0,
         "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"isError\":\"<absent>\","
         "\"structuredContent\":\"<absent>\",\"content\":["
         "{\"type\":\"text\",\"text\":\"hello \\\"world\\\"\\n\"},"
         "{\"type\":\"image\",\"data\":\"aGk=\",\"mimeType\":\"image/png\"},"
         "{\"type\":\"audio\",\"data\":\"AAEC/w==\",\"mimeType\":"
         "\"audio/wav\"},"
         "{\"type\":\"resource\",\"resource\":{\"uri\":\"file:///a.txt\","
         "\"mimeType\":\"text/plain\",\"text\":\"body\",\"blob\":"
         "\"<absent>\"}},"
         "{\"type\":\"resource\",\"resource\":{\"uri\":\"file:///c.txt\","
         "\"mimeType\":\"<absent>\",\"text\":\"\"}},"
         "{\"type\":\"resource\",\"resource\":{\"uri\":\"file:///b.bin\","
         "\"mimeType\":\"<absent>\",\"blob\":\"Zm9v\",\"text\":"
         "\"<absent>\"}},"
         "{\"type\":\"resource\",\"resource\":{\"uri\":\"file:///e.bin\","
         "\"mimeType\":\"application/octet-stream\",\"blob\":\"\"}},"
         "{\"type\":\"resource_link\",\"uri\":\"https://x.example/y\","
         "\"name\":\"y\",\"mimeType\":\"text/html\",\"description\":"
         "\"the y page\"},"
         "{\"type\":\"resource_link\",\"uri\":\"u:1\",\"name\":\"n\","
         "\"mimeType\":\"<absent>\",\"description\":\"<absent>\"}]}}");
}
END_TEST

static int h_base64(mcp_call *call) {
  static const char *const in[] = {"",     "f",     "fo",    "foo",
                                   "foob", "fooba", "foobar"};
  for (size_t i = 0; i < TU_COUNT(in); i++)
    ck_assert_int_eq(mcp_result_image(call, in[i], strlen(in[i]), "image/x"),
                     0);
  static const unsigned char all[] = {0xFB, 0xFF, 0xBF, 0x00, 0x10, 0x83};
  return mcp_result_image(call, all, sizeof all, "image/x");
}

START_TEST(content_base64_vectors) {
  /* RFC 4648 §10 test vectors, plus the two non-alphanumeric symbols. */
  tu_initialize(&P, "2025-11-25");
  g_fn = h_base64;
  call_ok("1", "run", NULL, NULL);
  EXPECT(0, "{\"result\":{\"content\":["
            "{\"data\":\"\"},{\"data\":\"Zg==\"},{\"data\":\"Zm8=\"},"
            "{\"data\":\"Zm9v\"},{\"data\":\"Zm9vYg==\"},"
            "{\"data\":\"Zm9vYmE=\"},{\"data\":\"Zm9vYmFy\"},"
            "{\"data\":\"+/+/ABCD\"}]}}");
}
END_TEST

/* Each builder called wrongly latches MCP_EINVAL and the call answers
 * -32603. */
static int h_misuse(mcp_call *call) {
  int rc = 0;
  switch (g_rc[1]) {
  case 0:
    rc = mcp_result_text(call, NULL);
    break;
  case 1:
    rc = mcp_result_image(call, NULL, 3, "image/png");
    break;
  case 2:
    rc = mcp_result_image(call, "x", 1, NULL);
    break;
  case 3:
    rc = mcp_result_audio(call, "x", 1, "audio/\xFF");
    break;
  case 4:
    rc = mcp_result_resource_text(call, "u:1", NULL, NULL);
    break;
  case 5:
    rc = mcp_result_resource_text(call, NULL, NULL, "t");
    break;
  case 6:
    rc = mcp_result_resource_blob(call, "u:1", NULL, NULL, 4);
    break;
  case 7:
    rc = mcp_result_resource_link(call, "u:1", NULL, NULL, NULL);
    break;
  case 8:
    rc = mcp_result_resource_link(call, NULL, "n", NULL, NULL);
    break;
  case 9:
    rc = mcp_result_resource_link(call, "u:1", "n", NULL, "\xC3");
    break;
  case 10:
    rc = mcp_result_error(call, NULL);
    break;
  case 11:
    rc = mcp_result_structured(call, NULL);
    break;
  case 12:
    rc = mcp_result_structured_cjson(call, NULL);
    break;
  default:
    ck_abort();
  }
  g_rc[0] = rc;
  return 0;
}

START_TEST(content_builder_misuse) {
  /* What the log says for each case of h_misuse: the tool, the builder
   * and the rule, never only "invalid argument". */
  static const char *const said[] = {
      "mcp_result_text refused: the text is NULL",
      "mcp_result_image refused: data is NULL while size is not 0",
      "mcp_result_image refused: the mime_type (required) is NULL",
      "mcp_result_audio refused: the mime_type (required) is not valid UTF-8",
      "mcp_result_resource_text refused: the text is NULL",
      "mcp_result_resource_text refused: the uri is NULL",
      "mcp_result_resource_blob refused: data is NULL while size is not 0",
      "mcp_result_resource_link refused: the name is NULL",
      "mcp_result_resource_link refused: the uri is NULL",
      "mcp_result_resource_link refused: the description is not valid UTF-8",
      "mcp_result_error refused: the text is NULL",
      "mcp_result_structured refused: the JSON text is NULL",
      "mcp_result_structured refused: the value is not a JSON object",
  };
  tu_initialize(&P, "2025-11-25");
  g_fn = h_misuse;
  for (int i = 0; i <= 12; i++) {
    g_rc[1] = i;
    tu_clear(&P);
    g_log[0] = '\0';
    call_ok("1", "run", NULL, NULL);
    ck_assert_msg(g_rc[0] == MCP_EINVAL, "case %d returned %d", i, g_rc[0]);
    EXPECT(0, "{\"id\":1,\"error\":{\"code\":-32603,\"message\":"
              "\"Internal error\"}}");
    char *want = tu_text("tool \"run\": %s", said[i]);
    ck_assert_msg(strstr(g_log, want) != NULL, "case %d: log lacks \"%s\": %s",
                  i, want, g_log);
    free(want);
  }
}
END_TEST

/* A prompt's and a resource's builders say so too, and so do the input
 * functions and a second mcp_call_finish. */
static int h_misuse_more(mcp_call *call) {
  switch (g_rc[1]) {
  case 0:
    g_rc[0] = mcp_result_role(call, MCP_ROLE_USER);
    break;
  case 1:
    g_rc[0] = mcp_result_description(call, "d");
    break;
  case 2:
    g_rc[0] =
        mcp_call_request_input(call, "bad key", MCP_INPUT_ELICITATION, "{}");
    return mcp_result_text(call, "asked badly");
  case 3:
    g_rc[0] = mcp_call_request_input(call, "k", MCP_INPUT_ELICITATION, "[1]");
    return mcp_result_text(call, "asked badly");
  case 4:
    g_rc[0] = mcp_call_set_state(call, "\xff");
    return mcp_result_text(call, "kept badly");
  default: {
    /* Finished twice before returning: the second is refused. */
    mcp_result_text(call, "done");
    g_rc[2] = mcp_call_finish(call, 0);
    g_rc[0] = mcp_call_finish(call, 0);
    return MCP_DEFERRED;
  }
  }
  return g_rc[0];
}

START_TEST(builder_refusals_logged) {
  static const char *const said[] = {
      "mcp_result_role refused: only a prompt's messages have roles",
      "mcp_result_description refused: only a prompt's result has a "
      "description",
      "mcp_call_request_input refused: the key must be 1-64 characters",
      "mcp_call_request_input refused: params must be a JSON object",
      "mcp_call_set_state refused: the state is not valid UTF-8",
      "mcp_call_finish refused: the call was finished already (exactly "
      "once)"};
  tu_initialize(&P, "2025-11-25");
  g_fn = h_misuse_more;
  for (int i = 0; i < (int)TU_COUNT(said); i++) {
    g_rc[1] = i;
    tu_clear(&P);
    g_log[0] = '\0';
    call_ok("1", "run", NULL, NULL);
    ck_assert_msg(g_rc[0] == MCP_EINVAL, "case %d returned %d", i, g_rc[0]);
    char *want = tu_text("tool \"run\": %s", said[i]);
    ck_assert_msg(strstr(g_log, want) != NULL, "case %d: log lacks \"%s\": %s",
                  i, want, g_log);
    free(want);
  }
  ck_assert_int_eq(g_rc[2], 0); /* the first finish was fine */
}
END_TEST

/* mcp_server_new says which member is wrong, through
 * mcp_server_errmsg(NULL). */
START_TEST(server_new_names_the_member) {
  static const struct {
    mcp_server_info info;
    const char *want;
  } bad[] = {
      {{.version = "1"}, "mcp_server_new: info.name is required"},
      {{.name = "n"}, "mcp_server_new: info.version is required"},
      {{.name = "\xff", .version = "1"}, "info.name is not valid UTF-8"},
      {{.name = "n", .version = "\xc3"}, "info.version is not valid UTF-8"},
      {{.name = "n", .version = "1", .title = "\xff"},
       "info.title is not valid UTF-8"},
      {{.name = "n", .version = "1", .instructions = "\xed\xa0\x80"},
       "info.instructions is not valid UTF-8"},
  };
  for (size_t i = 0; i < TU_COUNT(bad); i++) {
    mcp_server *s = (mcp_server *)&bad; /* must stay untouched */
    ck_assert_int_eq(mcp_server_new(&bad[i].info, &s), MCP_EINVAL);
    ck_assert_ptr_eq(s, (mcp_server *)&bad);
    ck_assert_msg(strstr(mcp_server_errmsg(NULL), bad[i].want) != NULL,
                  "%zu: %s", i, mcp_server_errmsg(NULL));
  }
  ck_assert_int_eq(mcp_server_new(NULL, NULL), MCP_EINVAL);
  ck_assert_str_eq(mcp_server_errmsg(NULL), "mcp_server_new: info is NULL");
  /* A server's own errors are its own. */
  ck_assert_str_eq(mcp_server_errmsg(srv), "no error");
  mcp_server_set_errmsg(srv, "a transport's sentence");
  ck_assert_str_eq(mcp_server_errmsg(srv), "a transport's sentence");
}
END_TEST

static int h_structured(mcp_call *call) {
  g_rc[0] = mcp_result_structured(call, "{ \"a\" : 1, \"b\":[true,null] }");
  return g_rc[0];
}

START_TEST(structured_by_version) {
  g_fn = h_structured;
  for (size_t v = 0; v < TU_COUNT(VERSIONS); v++) {
    reopen(VERSIONS[v]);
    call_ok("1", "run", NULL, NULL);
    ck_assert_int_eq(g_rc[0], 0);
    bool structured = strcmp(VERSIONS[v], "2025-06-18") >= 0;
    /* The text mirror is always there, compact. */
    EXPECT(0, structured
                  ? "{\"id\":1,\"result\":{\"content\":[{\"type\":\"text\","
                    "\"text\":\"{\\\"a\\\":1,\\\"b\\\":[true,null]}\"}],"
                    "\"structuredContent\":{\"a\":1,\"b\":[true,null]}}}"
                  : "{\"id\":1,\"result\":{\"content\":[{\"type\":\"text\","
                    "\"text\":\"{\\\"a\\\":1,\\\"b\\\":[true,null]}\"}],"
                    "\"structuredContent\":\"<absent>\"}}");
  }
}
END_TEST

static int h_structured_twice(mcp_call *call) {
  g_rc[0] = mcp_result_structured(call, "{\"a\":1}");
  g_rc[1] = mcp_result_structured(call, "{\"b\":2}");
  return 0;
}

static int h_structured_bad(mcp_call *call) {
  g_rc[0] = mcp_result_structured(call, g_rc[2] == 0   ? "[1]"
                                        : g_rc[2] == 1 ? "{\"a\":1"
                                        : g_rc[2] == 2 ? "\"s\""
                                                       : "{\"a\":1,\"a\":2}");
  return 0;
}

static int h_structured_json(mcp_call *call) {
  cJSON *o = cJSON_CreateObject();
  cJSON_AddNumberToObject(o, "n", 3);
  cJSON_AddStringToObject(o, "s", "x");
  g_rc[0] = mcp_result_structured_cjson(call, o);
  cJSON_Delete(o); /* copied */
  cJSON *arr = cJSON_CreateArray();
  g_rc[1] = mcp_result_structured_cjson(call, arr); /* latched: ESTATE */
  cJSON_Delete(arr);
  return 0;
}

START_TEST(structured_rejects) {
  tu_initialize(&P, "2025-06-18");
  g_fn = h_structured_twice;
  call_ok("1", "run", NULL, NULL);
  ck_assert_int_eq(g_rc[0], 0);
  ck_assert_int_eq(g_rc[1], MCP_ESTATE);
  EXPECT(0, "{\"id\":1,\"error\":{\"code\":-32603}}");
  g_fn = h_structured_bad;
  for (int i = 0; i < 4; i++) {
    g_rc[2] = i;
    tu_clear(&P);
    call_ok("2", "run", NULL, NULL);
    ck_assert_msg(g_rc[0] == MCP_EINVAL, "case %d: %d", i, g_rc[0]);
    EXPECT(0, "{\"id\":2,\"result\":\"<absent>\",\"error\":{\"code\":"
              "-32603}}");
  }
  g_fn = h_structured_json;
  tu_clear(&P);
  call_ok("3", "run", NULL, NULL);
  ck_assert_int_eq(g_rc[0], 0);
  ck_assert_int_eq(g_rc[1], MCP_ESTATE);
  EXPECT(0, "{\"id\":3,\"error\":{\"code\":-32603}}");
}
END_TEST

static int h_resource_link(mcp_call *call) {
  return mcp_result_resource_link(call, "file:///r.txt", "r.txt", "text/plain",
                                  "a file");
}

START_TEST(resource_link_by_version) {
  g_fn = h_resource_link;
  for (size_t v = 0; v < TU_COUNT(VERSIONS); v++) {
    reopen(VERSIONS[v]);
    call_ok("1", "run", NULL, NULL);
    if (strcmp(VERSIONS[v], "2025-06-18") >= 0)
      EXPECT(0, "{\"result\":{\"content\":[{\"type\":\"resource_link\","
                "\"uri\":\"file:///r.txt\",\"name\":\"r.txt\",\"mimeType\":"
                "\"text/plain\",\"description\":\"a file\"}]}}");
    else
      EXPECT(0, "{\"result\":{\"content\":[{\"type\":\"text\",\"text\":"
                "\"r.txt: file:///r.txt\"}]}}");
  }
}
END_TEST

static int h_audio(mcp_call *call) {
  return mcp_result_audio(call, "hi", 2, "audio/wav");
}

START_TEST(audio_by_version) {
  g_fn = h_audio;
  for (size_t v = 0; v < TU_COUNT(VERSIONS); v++) {
    reopen(VERSIONS[v]);
    call_ok("1", "run", NULL, NULL);
    if (v == 0) {
      EXPECT(0, "{\"result\":{\"content\":[{\"type\":\"text\",\"text\":"
                "\"<any>\",\"data\":\"<absent>\"}]}}");
      ck_assert_ptr_nonnull(strstr(P.out[0], "audio/wav"));
      ck_assert_ptr_nonnull(strstr(P.out[0], "2 bytes"));
    } else {
      EXPECT(0, "{\"result\":{\"content\":[{\"type\":\"audio\",\"data\":"
                "\"aGk=\",\"mimeType\":\"audio/wav\"}]}}");
    }
  }
}
END_TEST

static int h_audio_long_mime(mcp_call *call) {
  /* A valid, long, non-ASCII mime type: the note quoting it must remain
   * valid UTF-8, so the call succeeds. */
  char mime[200] = "audio/";
  for (int i = 0; i < g_rc[1]; i++)
    strcat(mime, "x");
  for (int i = 0; i < 30; i++)
    strcat(mime, "\xE2\x82\xAC");
  g_rc[0] = mcp_result_audio(call, "hi", 2, mime);
  return g_rc[0];
}

START_TEST(audio_note_long_mime) {
  tu_initialize(&P, "2024-11-05");
  g_fn = h_audio_long_mime;
  for (int pad = 0; pad < 3; pad++) {
    g_rc[1] = pad;
    tu_clear(&P);
    call_ok("1", "run", NULL, NULL);
    ck_assert_int_eq(g_rc[0], 0);
    EXPECT(0, "{\"result\":{\"content\":[{\"type\":\"text\"}]}}");
  }
}
END_TEST

/* ===========================================================================
 * Progress
 * ======================================================================== */

static int h_progress(mcp_call *call) {
  g_rc[0] = mcp_call_progress(call, 1, 10, "half");
  g_rc[1] = mcp_call_progress(call, 2.5, 0, NULL);
  return mcp_result_text(call, "done");
}

START_TEST(progress_string_token) {
  tu_initialize(&P, "2025-11-25");
  g_fn = h_progress;
  call_ok("1", "run", NULL, "{\"progressToken\":\"tok\"}");
  ck_assert_int_eq(g_rc[0], 0);
  ck_assert_int_eq(g_rc[1], 0);
  EXPECT_COUNT(3);
  EXPECT(0, "{\"jsonrpc\":\"2.0\",\"id\":\"<absent>\",\"method\":"
            "\"notifications/progress\",\"params\":{\"progressToken\":\"tok\","
            "\"progress\":1,\"total\":10,\"message\":\"half\"}}");
  EXPECT(1, "{\"method\":\"notifications/progress\",\"params\":{"
            "\"progressToken\":\"tok\",\"progress\":2.5,\"total\":\"<absent>\","
            "\"message\":\"<absent>\"}}");
  EXPECT(2, "{\"id\":1,\"result\":{\"content\":[{\"text\":\"done\"}]}}");
}
END_TEST

START_TEST(progress_integer_token) {
  tu_initialize(&P, "2025-11-25");
  g_fn = h_progress;
  call_ok("1", "run", NULL, "{\"progressToken\":42}");
  EXPECT_COUNT(3);
  EXPECT(0, "{\"params\":{\"progressToken\":42}}");
  /* A big integer token is echoed exactly, as a number. */
  tu_clear(&P);
  call_ok("2", "run", NULL,
          "{\"progressToken\":123456789012345678901234567890}");
  EXPECT_COUNT(3);
  ck_assert_ptr_nonnull(
      strstr(P.out[0], "\"progressToken\":123456789012345678901234567890,"));
  /* Escaped string tokens stay strings, written validly. */
  tu_clear(&P);
  call_ok("3", "run", NULL, "{\"progressToken\":\"a\\\"b\\u00e9\"}");
  EXPECT(0, "{\"params\":{\"progressToken\":\"a\\\"b\\u00e9\"}}");
}
END_TEST

static int h_progress_order(mcp_call *call) {
  g_rc[0] = mcp_call_progress(call, 5, 0, NULL);
  g_rc[1] = mcp_call_progress(call, 5, 0, NULL);
  g_rc[2] = mcp_call_progress(call, 4, 0, NULL);
  g_rc[3] = mcp_call_progress(call, 6, 0, NULL);
  g_rc[4] = mcp_call_progress(call, NAN, 0, NULL);
  g_rc[5] = mcp_call_progress(call, 7, INFINITY, NULL);
  g_rc[6] = mcp_call_progress(call, 8, 0, "bad \xC3");
  return 0;
}

START_TEST(progress_must_increase) {
  tu_initialize(&P, "2025-11-25");
  g_fn = h_progress_order;
  call_ok("1", "run", NULL, "{\"progressToken\":\"t\"}");
  ck_assert_int_eq(g_rc[0], 0);
  ck_assert_int_eq(g_rc[1], MCP_EINVAL);
  ck_assert_int_eq(g_rc[2], MCP_EINVAL);
  ck_assert_int_eq(g_rc[3], 0);
  ck_assert_int_eq(g_rc[4], MCP_EINVAL);
  ck_assert_int_eq(g_rc[5], MCP_EINVAL);
  ck_assert_int_eq(g_rc[6], MCP_EINVAL);
  EXPECT_COUNT(3);
  EXPECT(0, "{\"params\":{\"progress\":5}}");
  EXPECT(1, "{\"params\":{\"progress\":6}}");
  EXPECT(2, "{\"id\":1,\"result\":{}}");
}
END_TEST

START_TEST(progress_without_token) {
  tu_initialize(&P, "2025-11-25");
  g_fn = h_progress;
  call_ok("1", "run", NULL, NULL);
  ck_assert_int_eq(g_rc[0], 0);
  ck_assert_int_eq(g_rc[1], 0);
  EXPECT_COUNT(1);
  EXPECT(0, "{\"id\":1,\"result\":{}}");
  /* _meta without a token, or not an object: the same. */
  tu_clear(&P);
  call_ok("2", "run", NULL, "{\"other\":1}");
  EXPECT_COUNT(1);
}
END_TEST

START_TEST(progress_bad_token) {
  tu_initialize(&P, "2025-11-25");
  g_fn = h_progress;
  static const char *const bad[] = {"{}", "[]", "1.5", "true", "null", "1e3"};
  for (size_t i = 0; i < TU_COUNT(bad); i++) {
    char meta[100];
    snprintf(meta, sizeof meta, "{\"progressToken\":%s}", bad[i]);
    tu_clear(&P);
    call_ok("1", "run", NULL, meta);
    EXPECT_COUNT(1);
    EXPECT(0, "{\"id\":1,\"result\":\"<absent>\",\"error\":{\"code\":"
              "-32602}}");
  }
  ck_assert_int_eq(g_runs, 0);
}
END_TEST

START_TEST(progress_message_by_version) {
  g_fn = h_progress;
  for (size_t v = 0; v < TU_COUNT(VERSIONS); v++) {
    reopen(VERSIONS[v]);
    call_ok("1", "run", NULL, "{\"progressToken\":\"t\"}");
    EXPECT_COUNT(3);
    EXPECT(0, v == 0 ? "{\"params\":{\"progress\":1,\"total\":10,"
                       "\"message\":\"<absent>\"}}"
                     : "{\"params\":{\"progress\":1,\"total\":10,"
                       "\"message\":\"half\"}}");
  }
}
END_TEST

/* ===========================================================================
 * Cancellation
 * ======================================================================== */

static void cancel(const char *request_id) {
  char msg[200];
  snprintf(msg, sizeof msg,
           "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\","
           "\"params\":{\"requestId\":%s,\"reason\":\"user\"}}",
           request_id);
  send_ok(msg);
}

static void check_cancel(const char *id, const char *request_id) {
  reopen("2025-11-25");
  tu_deferred_reset();
  g_fn = tu_defer;
  call_ok(id, "run", NULL, "{\"progressToken\":\"pt\"}");
  EXPECT_COUNT(0);
  ck_assert_uint_eq(mcp_session_pending(P.session), 1);
  ck_assert(!mcp_call_cancelled(tu_deferred[0]));
  ck_assert_int_eq(mcp_call_progress(tu_deferred[0], 1, 0, NULL), 0);
  EXPECT_COUNT(1);
  tu_clear(&P);
  cancel(request_id);
  EXPECT_COUNT(0);
  ck_assert(mcp_call_cancelled(tu_deferred[0]));
  /* Nothing more is sent for that id: no progress... */
  ck_assert_int_eq(mcp_call_progress(tu_deferred[0], 2, 0, NULL), 0);
  EXPECT_COUNT(0);
  /* The handler's late result goes nowhere. */
  ck_assert_int_eq(mcp_result_text(tu_deferred[0], "too late"), 0);
  ck_assert_int_eq(mcp_call_finish(tu_deferred[0], 0), 0);
  EXPECT_COUNT(0);
  ck_assert_uint_eq(mcp_session_pending(P.session), 0);
  /* The session goes on. */
  send_ok(PING1);
  EXPECT_COUNT(1);
}

START_TEST(cancel_deferred) {
  check_cancel("\"abc\"", "\"abc\"");
  check_cancel("5", "5");
  check_cancel("123456789012345678901234567890",
               "123456789012345678901234567890");
  /* The same string value written differently is the same id. */
  check_cancel("\"\\u0061b\"", "\"ab\"");
  check_cancel("\"a\\/b\"", "\"a/b\"");
}
END_TEST

/* A cancellation that must not touch the deferred call id. */
static void check_not_cancelled(const char *id, const char *notification) {
  reopen("2025-11-25");
  tu_deferred_reset();
  g_fn = tu_defer;
  call_ok(id, "run", NULL, NULL);
  send_ok(notification);
  EXPECT_COUNT(0);
  ck_assert_msg(!mcp_call_cancelled(tu_deferred[0]), "cancelled by %s",
                notification);
  ck_assert_int_eq(mcp_result_text(tu_deferred[0], "answered"), 0);
  ck_assert_int_eq(mcp_call_finish(tu_deferred[0], 0), 0);
  EXPECT_COUNT(1);
  EXPECT(0, "{\"result\":{\"content\":[{\"text\":\"answered\"}]}}");
}

START_TEST(cancel_ignored) {
  static const char *const notes[] = {
      /* unknown ids, including other types for the same text */
      "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\","
      "\"params\":{\"requestId\":6}}",
      "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\","
      "\"params\":{\"requestId\":\"5\"}}",
      "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\","
      "\"params\":{\"requestId\":5.0}}",
      "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\","
      "\"params\":{\"requestId\":50e-1}}",
      /* malformed */
      "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\"}",
      "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\","
      "\"params\":{}}",
      "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\","
      "\"params\":{\"requestId\":null}}",
      "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\","
      "\"params\":{\"requestId\":{\"id\":5}}}",
      "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\","
      "\"params\":{\"requestId\":[5]}}",
      "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\","
      "\"params\":{\"RequestId\":5}}",
      "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\","
      "\"params\":[5]}",
      "{\"jsonrpc\":\"1.0\",\"method\":\"notifications/cancelled\","
      "\"params\":{\"requestId\":5}}",
      "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/Cancelled\","
      "\"params\":{\"requestId\":5}}",
  };
  for (size_t i = 0; i < TU_COUNT(notes); i++)
    check_not_cancelled("5", notes[i]);
  /* A cancellation sent as a request is not a cancellation. */
  reopen("2025-11-25");
  tu_deferred_reset();
  call_ok("5", "run", NULL, NULL);
  send_ok("{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"notifications/"
          "cancelled\",\"params\":{\"requestId\":5}}");
  EXPECT(0, "{\"id\":9,\"error\":{\"code\":-32601}}");
  ck_assert(!mcp_call_cancelled(tu_deferred[0]));
  mcp_call_finish(tu_deferred[0], 0);
  EXPECT_COUNT(2);
}
END_TEST

START_TEST(cancel_initialize_ignored) {
  send_ok("{\"jsonrpc\":\"2.0\",\"id\":\"init\",\"method\":\"initialize\","
          "\"params\":{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},"
          "\"clientInfo\":{\"name\":\"c\"}}}");
  EXPECT_COUNT(1);
  cancel("\"init\"");
  /* Before the reply could even matter: also ignored. */
  send_ok("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}");
  EXPECT_COUNT(1);
  ck_assert_str_eq(mcp_session_protocol_version(P.session), "2025-06-18");
  send_ok("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}");
  EXPECT(1, "{\"id\":1,\"result\":{\"tools\":\"<any>\"}}");
  /* A cancellation arriving before initialize changes nothing either. */
  reopen(NULL);
  cancel("0");
  EXPECT_COUNT(0);
  tu_initialize(&P, "2025-06-18");
  ck_assert_str_eq(mcp_session_protocol_version(P.session), "2025-06-18");
}
END_TEST

START_TEST(duplicate_id_in_flight) {
  tu_initialize(&P, "2025-11-25");
  g_fn = tu_defer;
  call_ok("7", "run", NULL, NULL);
  EXPECT_COUNT(0);
  /* Same id again while the first is unfinished. */
  call_ok("7", "run", NULL, NULL);
  EXPECT_COUNT(1);
  EXPECT(0, "{\"id\":7,\"result\":\"<absent>\",\"error\":{\"code\":-32600}}");
  ck_assert_int_eq(g_runs, 1);
  ck_assert_int_eq(tu_ndeferred, 1);
  ck_assert_uint_eq(mcp_session_pending(P.session), 1);
  ck_assert(!mcp_call_cancelled(tu_deferred[0]));
  /* A string "7" is another id. */
  call_ok("\"7\"", "run", NULL, NULL);
  ck_assert_int_eq(tu_ndeferred, 2);
  /* ...but "\u0037" is the same as "7". */
  call_ok("\"\\u0037\"", "run", NULL, NULL);
  EXPECT_COUNT(2);
  EXPECT(1, "{\"id\":\"7\",\"error\":{\"code\":-32600}}");
  ck_assert_int_eq(tu_ndeferred, 2);
  /* The first is unaffected and answerable. */
  tu_clear(&P);
  ck_assert_int_eq(mcp_result_text(tu_deferred[0], "first"), 0);
  ck_assert_int_eq(mcp_call_finish(tu_deferred[0], 0), 0);
  EXPECT_RAW(0, "{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{\"content\":[{"
                "\"type\":\"text\",\"text\":\"first\"}]}}");
  ck_assert_int_eq(mcp_call_finish(tu_deferred[1], 0), 0);
  EXPECT(1, "{\"id\":\"7\",\"result\":{}}");
  /* After finishing, the id can be used again. */
  tu_clear(&P);
  g_fn = NULL;
  call_ok("7", "run", NULL, NULL);
  EXPECT(0, "{\"id\":7,\"result\":{\"content\":[{\"text\":\"ok\"}]}}");
  ck_assert_int_eq(g_runs, 3);
}
END_TEST

START_TEST(cancel_all) {
  tu_initialize(&P, "2025-11-25");
  g_fn = tu_defer;
  call_ok("1", "run", NULL, NULL);
  call_ok("2", "run", NULL, NULL);
  ck_assert_uint_eq(mcp_session_pending(P.session), 2);
  mcp_session_cancel_all(P.session);
  ck_assert(mcp_call_cancelled(tu_deferred[0]));
  ck_assert(mcp_call_cancelled(tu_deferred[1]));
  mcp_call_finish(tu_deferred[1], 0);
  mcp_call_finish(tu_deferred[0], MCP_EIO);
  EXPECT_COUNT(0);
  ck_assert_uint_eq(mcp_session_pending(P.session), 0);
  /* The session stays usable, and new calls are not cancelled. */
  send_ok(PING1);
  g_fn = NULL;
  call_ok("3", "run", NULL, NULL);
  EXPECT_COUNT(2);
  EXPECT(1, "{\"id\":3,\"result\":{}}");
  mcp_session_cancel_all(NULL);
}
END_TEST

/* ===========================================================================
 * Deferred completion
 * ======================================================================== */

static void *finisher(void *arg) {
  mcp_call *call = arg;
  mcp_result_text(call, "from a thread");
  mcp_call_finish(call, 0);
  return NULL;
}

START_TEST(deferred_finished_by_thread) {
  tu_initialize(&P, "2025-11-25");
  g_fn = tu_defer;
  call_ok("\"d\"", "run", NULL, NULL);
  EXPECT_COUNT(0);
  ck_assert_uint_eq(mcp_session_pending(P.session), 1);
  pthread_t t;
  ck_assert_int_eq(pthread_create(&t, NULL, finisher, tu_deferred[0]), 0);
  pthread_join(t, NULL);
  EXPECT_RAW(0, "{\"jsonrpc\":\"2.0\",\"id\":\"d\",\"result\":{\"content\":[{"
                "\"type\":\"text\",\"text\":\"from a thread\"}]}}");
  ck_assert_uint_eq(mcp_session_pending(P.session), 0);
}
END_TEST

static int h_finish_early(mcp_call *call) {
  mcp_result_text(call, "early");
  g_rc[0] = mcp_call_finish(call, g_rc[1]);
  return MCP_DEFERRED;
}

START_TEST(deferred_finished_before_return) {
  /* The other thread won the race: mcp_call_finish came before the handler
   * returned MCP_DEFERRED. The reply is sent once, by receive. */
  tu_initialize(&P, "2025-11-25");
  g_fn = h_finish_early;
  call_ok("1", "run", NULL, NULL);
  ck_assert_int_eq(g_rc[0], 0);
  EXPECT_COUNT(1);
  EXPECT(0, "{\"id\":1,\"result\":{\"content\":[{\"text\":\"early\"}]}}");
  ck_assert_uint_eq(mcp_session_pending(P.session), 0);
  /* With an error code, it answers -32603. */
  tu_clear(&P);
  g_rc[1] = MCP_EIO;
  call_ok("2", "run", NULL, NULL);
  EXPECT(0, "{\"id\":2,\"error\":{\"code\":-32603,\"message\":"
            "\"Internal error\"}}");
  /* And a positive code is no valid result either. */
  tu_clear(&P);
  g_rc[1] = 7;
  call_ok("3", "run", NULL, NULL);
  EXPECT(0, "{\"id\":3,\"error\":{\"code\":-32603}}");
  ck_assert_uint_eq(mcp_session_pending(P.session), 0);
}
END_TEST

static int h_spawn(mcp_call *call) {
  ck_assert_int_eq(pthread_create(&g_thread, NULL, finisher, call), 0);
  g_thread_started = true;
  return MCP_DEFERRED;
}

START_TEST(deferred_race) {
  /* Whichever side comes second sends the reply, exactly once. */
  tu_initialize(&P, "2025-11-25");
  g_fn = h_spawn;
  for (int i = 0; i < 300; i++) {
    char id[32];
    snprintf(id, sizeof id, "%d", i);
    tu_clear(&P);
    call_ok(id, "run", NULL, NULL);
    ck_assert(g_thread_started);
    pthread_join(g_thread, NULL);
    g_thread_started = false;
    EXPECT_COUNT(1);
    char expected[100];
    snprintf(expected, sizeof expected,
             "{\"id\":%d,\"result\":{\"content\":[{\"text\":"
             "\"from a thread\"}]}}",
             i);
    EXPECT(0, expected);
    ck_assert_uint_eq(mcp_session_pending(P.session), 0);
  }
}
END_TEST

START_TEST(deferred_finish_codes) {
  tu_initialize(&P, "2025-11-25");
  g_fn = tu_defer;
  call_ok("1", "run", NULL, NULL);
  call_ok("2", "run", NULL, NULL);
  call_ok("3", "run", NULL, NULL);
  ck_assert_uint_eq(mcp_session_pending(P.session), 3);
  mcp_result_text(tu_deferred[1], "two");
  ck_assert_int_eq(mcp_call_finish(tu_deferred[1], 0), 0);
  ck_assert_uint_eq(mcp_session_pending(P.session), 2);
  mcp_result_text(tu_deferred[0], "hidden");
  ck_assert_int_eq(mcp_call_finish(tu_deferred[0], MCP_ENOENT), 0);
  ck_assert_int_eq(mcp_call_finish(tu_deferred[2], 5), 0);
  ck_assert_uint_eq(mcp_session_pending(P.session), 0);
  EXPECT_COUNT(3);
  EXPECT(0, "{\"id\":2,\"result\":{\"content\":[{\"text\":\"two\"}]}}");
  EXPECT(1, "{\"id\":1,\"error\":{\"code\":-32603,\"message\":"
            "\"Internal error\"}}");
  EXPECT(2, "{\"id\":3,\"error\":{\"code\":-32603}}");
  ck_assert_ptr_null(strstr(P.out[1], "hidden"));
  ck_assert_int_eq(mcp_call_finish(NULL, 0), MCP_EINVAL);
}
END_TEST

static void *progress_then_finish(void *arg) {
  mcp_call *call = arg;
  mcp_call_progress(call, 1, 2, "one");
  mcp_call_progress(call, 2, 2, "two");
  mcp_result_structured(call, "{\"k\":\"v\"}");
  mcp_call_finish(call, 0);
  return NULL;
}

START_TEST(deferred_progress_from_thread) {
  tu_initialize(&P, "2025-06-18");
  g_fn = tu_defer;
  call_ok("1", "run", NULL, "{\"progressToken\":\"p\"}");
  pthread_t t;
  ck_assert_int_eq(
      pthread_create(&t, NULL, progress_then_finish, tu_deferred[0]), 0);
  pthread_join(t, NULL);
  EXPECT_COUNT(3);
  EXPECT(0, "{\"method\":\"notifications/progress\",\"params\":{"
            "\"progressToken\":\"p\",\"progress\":1,\"message\":\"one\"}}");
  EXPECT(1, "{\"params\":{\"progress\":2,\"total\":2}}");
  EXPECT(2, "{\"id\":1,\"result\":{\"structuredContent\":{\"k\":\"v\"}}}");
}
END_TEST

START_TEST(deferred_in_batch) {
  /* A deferred call in a 2025-03-26 batch answers on its own later; the
   * batch carries the other replies. */
  tu_initialize(&P, "2025-03-26");
  g_fn = tu_defer;
  send_ok("[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\","
          "\"params\":{\"name\":\"run\"}},{\"jsonrpc\":\"2.0\",\"id\":2,"
          "\"method\":\"ping\"}]");
  EXPECT_COUNT(1);
  EXPECT(0, "[{\"id\":2,\"result\":{}}]");
  mcp_call_finish(tu_deferred[0], 0);
  EXPECT_COUNT(2);
  EXPECT(1, "{\"id\":1,\"result\":{\"content\":[]}}");
  /* A call finished early inside a batch joins the batch. */
  tu_clear(&P);
  g_fn = h_finish_early;
  send_ok("[{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\","
          "\"params\":{\"name\":\"run\"}}]");
  EXPECT_COUNT(1);
  EXPECT(0, "[{\"id\":3,\"result\":{\"content\":[{\"text\":\"early\"}]}}]");
}
END_TEST

START_TEST(deferred_outlives_session) {
  tu_initialize(&P, "2025-11-25");
  g_fn = tu_defer;
  call_ok("1", "run", NULL, "{\"progressToken\":1}");
  call_ok("2", "run", NULL, NULL);
  mcp_session *s = P.session;
  P.session = NULL; /* so that tu_peer_close does not free it again */
  mcp_session_free(s);
  /* The calls see the session gone; nothing is sent; memory is released
   * when the last call finishes. */
  ck_assert(mcp_call_cancelled(tu_deferred[0]));
  ck_assert(mcp_call_cancelled(tu_deferred[1]));
  ck_assert_int_eq(mcp_call_progress(tu_deferred[0], 1, 0, NULL), 0);
  ck_assert_int_eq(mcp_result_text(tu_deferred[0], "nobody listens"), 0);
  ck_assert_int_eq(mcp_call_finish(tu_deferred[0], 0), 0);
  pthread_t t;
  ck_assert_int_eq(pthread_create(&t, NULL, finisher, tu_deferred[1]), 0);
  pthread_join(t, NULL);
  EXPECT_COUNT(0);
}
END_TEST

START_TEST(session_free_with_nothing_pending) {
  mcp_session_free(NULL);
  tu_initialize(&P, "2025-11-25");
  ck_assert_uint_eq(mcp_session_pending(P.session), 0);
}
END_TEST

/* ===========================================================================
 * Session odds and ends
 * ======================================================================== */

START_TEST(send_failure_closes) {
  tu_initialize(&P, "2025-11-25");
  g_fn = tu_defer;
  call_ok("1", "run", NULL, NULL);
  P.fail_send = 1;
  ck_assert_int_eq(tu_send(&P, PING1), MCP_ECLOSED);
  EXPECT_COUNT(0);
  /* Calls in flight are cancelled; later messages send nothing. */
  ck_assert(mcp_call_cancelled(tu_deferred[0]));
  P.fail_send = 0;
  ck_assert_int_eq(tu_send(&P, PING1), MCP_ECLOSED);
  ck_assert_int_eq(tu_send(&P, "{\"jsonrpc\":"), MCP_ECLOSED);
  ck_assert_int_eq(mcp_session_reject(P.session, "x"), MCP_ECLOSED);
  /* No tool runs for a peer that cannot get its result. */
  g_fn = NULL;
  ck_assert_int_eq(call_tool("2", "run", NULL, NULL), MCP_ECLOSED);
  ck_assert_int_eq(g_runs, 1);
  mcp_call_finish(tu_deferred[0], 0);
  EXPECT_COUNT(0);
  ck_assert_int_eq(
      tu_send(&P, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/x\"}"),
      MCP_ECLOSED);
}
END_TEST

static int h_progress_then_note(mcp_call *call) {
  g_rc[g_nrc++] = mcp_call_cancelled(call);
  mcp_call_progress(call, 1, 0, NULL);
  return 0;
}

START_TEST(send_failure_in_batch) {
  /* The first call of a batch loses the peer (its progress cannot be
   * sent); the second call starts already cancelled. */
  tu_initialize(&P, "2025-03-26");
  g_fn = h_progress_then_note;
  P.fail_send = 1;
  int rc = tu_send(&P, "[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
                       "\"tools/call\",\"params\":{\"name\":\"run\","
                       "\"_meta\":{\"progressToken\":1}}},{\"jsonrpc\":"
                       "\"2.0\",\"id\":2,\"method\":\"tools/call\","
                       "\"params\":{\"name\":\"run\"}}]");
  ck_assert_int_eq(g_nrc, 2);
  ck_assert_int_eq(g_rc[0], 0);
  ck_assert_int_eq(g_rc[1], 1);
  ck_assert_int_eq(rc, MCP_ECLOSED);
  P.fail_send = 0;
  ck_assert_int_eq(tu_send(&P, PING1), MCP_ECLOSED);
  EXPECT_COUNT(0);
  /* Outside a batch too: the transport learns at once. */
  reopen("2025-11-25");
  g_nrc = 0;
  P.fail_send = 1;
  ck_assert_int_eq(call_tool("3", "run", NULL, "{\"progressToken\":1}"),
                   MCP_ECLOSED);
  ck_assert_int_eq(g_nrc, 1);
  P.fail_send = 0;
  EXPECT_COUNT(0);
}
END_TEST

START_TEST(send_failure_on_deferred_reply) {
  tu_initialize(&P, "2025-11-25");
  g_fn = tu_defer;
  call_ok("1", "run", NULL, NULL);
  call_ok("2", "run", NULL, NULL);
  P.fail_send = 1;
  mcp_call_finish(tu_deferred[0], 0);
  /* The failed delivery closed the session: the other call is cancelled. */
  ck_assert(mcp_call_cancelled(tu_deferred[1]));
  P.fail_send = 0;
  mcp_call_finish(tu_deferred[1], 0);
  ck_assert_int_eq(tu_send(&P, PING1), MCP_ECLOSED);
  EXPECT_COUNT(0);
}
END_TEST

START_TEST(reject) {
  ck_assert_int_eq(mcp_session_reject(P.session, "line longer than 4 MiB"), 0);
  EXPECT(0, "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32700,"
            "\"message\":\"<any>\"}}");
  ck_assert_ptr_nonnull(strstr(P.out[0], "line longer than 4 MiB"));
  tu_clear(&P);
  ck_assert_int_eq(mcp_session_reject(P.session, NULL), 0);
  ck_assert_int_eq(mcp_session_reject(P.session, "bad \xFF"), 0);
  EXPECT_COUNT(2);
  EXPECT(0, "{\"id\":null,\"error\":{\"code\":-32700}}");
  ck_assert_ptr_null(strstr(P.out[1], "bad"));
  tu_clear(&P);
  /* A long non-ASCII reason is cut without breaking UTF-8. */
  char reason[1000] = "";
  for (int i = 0; i < 150; i++)
    strcat(reason, "\xE2\x82\xAC"); /* € */
  for (int shift = 0; shift < 3; shift++) {
    char r[1100];
    snprintf(r, sizeof r, "%.*s%s", shift, "ab", reason);
    ck_assert_int_eq(mcp_session_reject(P.session, r), 0);
  }
  EXPECT_COUNT(3);
  for (size_t i = 0; i < 3; i++)
    strict_at(__FILE__, __LINE__, i);
  /* Addressed as the version requires. */
  reopen("2025-11-25");
  ck_assert_int_eq(mcp_session_reject(P.session, "too long"), 0);
  EXPECT(0, "{\"id\":\"<absent>\",\"error\":{\"code\":-32700}}");
  reopen("2025-06-18");
  ck_assert_int_eq(mcp_session_reject(P.session, "too long"), 0);
  EXPECT(0, "{\"id\":null,\"error\":{\"code\":-32700}}");
  ck_assert_int_eq(mcp_session_reject(NULL, "x"), MCP_EINVAL);
}
END_TEST

START_TEST(api_misuse) {
  mcp_session *s = NULL;
  ck_assert_int_eq(mcp_session_new(NULL, NULL, NULL, NULL, &s), MCP_EINVAL);
  ck_assert_ptr_null(s);
  ck_assert_int_eq(mcp_session_receive(NULL, "{}", 2), MCP_EINVAL);
  ck_assert_int_eq(mcp_session_receive(P.session, NULL, 3), MCP_EINVAL);
  EXPECT_COUNT(0);
  /* NULL with length 0 is an empty message: a parse error. */
  ck_assert_int_eq(mcp_session_receive(P.session, NULL, 0), 0);
  EXPECT(0, "{\"error\":{\"code\":-32700}}");
  ck_assert_ptr_null(mcp_session_protocol_version(NULL));
  ck_assert_uint_eq(mcp_session_pending(NULL), 0);
  /* Only len bytes are read. */
  tu_clear(&P);
  char buf[100];
  snprintf(buf, sizeof buf, "%sgarbage", PING1);
  ck_assert_int_eq(mcp_session_receive(P.session, buf, strlen(PING1)), 0);
  EXPECT(0, "{\"id\":1,\"result\":{}}");
}
END_TEST

START_TEST(strerror_every_code) {
  static const struct {
    int code;
    const char *text;
  } codes[] = {
#define ROW_(name, value, text) {value, text},
      MCP_ERROR_LIST(ROW_)
#undef ROW_
  };
  for (size_t i = 0; i < TU_COUNT(codes); i++) {
    const char *t = mcp_strerror(codes[i].code);
    ck_assert_ptr_nonnull(t);
    ck_assert_str_eq(t, codes[i].text);
    ck_assert_str_ne(t, "unknown error");
    for (size_t j = 0; j < i; j++)
      ck_assert_str_ne(t, codes[j].text);
  }
  ck_assert_str_eq(mcp_strerror(MCP_EINVAL), "invalid argument");
  ck_assert_str_eq(mcp_strerror(MCP_ECLOSED), "session closed");
  ck_assert_str_ne(mcp_strerror(MCP_DEFERRED), "unknown error");
  ck_assert_str_ne(mcp_strerror(MCP_INPUT_REQUIRED), "unknown error");
  ck_assert_str_ne(mcp_strerror(MCP_EXECUTE_HERE), "unknown error");
  static const int unknown[] = {-17, -100, 4, 42, INT_MIN, INT_MAX};
  for (size_t i = 0; i < TU_COUNT(unknown); i++)
    ck_assert_str_eq(mcp_strerror(unknown[i]), "unknown error");
}
END_TEST

START_TEST(library_version) {
  ck_assert_str_eq(mcp_version(), MCP_VERSION_STRING);
  int a, b, c;
  char tail;
  ck_assert_int_eq(sscanf(mcp_version(), "%d.%d.%d%c", &a, &b, &c, &tail), 3);
}
END_TEST

/* ===========================================================================
 * Allocation failure at every allocation
 * ======================================================================== */

static int h_alloc(mcp_call *call) {
  static const unsigned char png[] = {0x89, 'P', 'N', 'G'};
  mcp_call_progress(call, 1, 2, "working");
  mcp_result_text(call, "text");
  mcp_result_image(call, png, sizeof png, "image/png");
  mcp_result_resource_link(call, "file:///x", "x", "text/plain", "x");
  mcp_result_structured(call, "{\"a\":[1,2,{\"b\":\"c\"}]}");
  return 0;
}

static mcp_call *alloc_deferred;
static int h_alloc_defer(mcp_call *call) {
  alloc_deferred = call;
  return MCP_DEFERRED;
}

static const mcp_tool TOOL_ALLOC = {
    .name = "alloc",
    .description = "Exercises the builders.",
    .input_schema = "{\"type\":\"object\",\"properties\":{\"q\":{\"type\":"
                    "\"string\"}},\"required\":[\"q\"]}",
    .scopes = (const char *const[]){"read", NULL},
    .annotations = TC_READ_ONLY,
    .handler = run_handler};

static const mcp_tool TOOL_LATER = {.name = "later",
                                    .description = "Finishes later.",
                                    .annotations = TC_READ_ONLY,
                                    .handler = run_handler};

/* Feeds msg; a request must get exactly one reply unless receive reports
 * MCP_ENOMEM. Returns false when receive failed. */
static bool alloc_step(mcp_session *s, tu_sink *k, const char *msg,
                       bool request, long n) {
  size_t before = k->n;
  int rc = mcp_session_receive(s, msg, strlen(msg));
  ck_assert_msg(rc == 0 || rc == MCP_ENOMEM, "fail_at %ld: rc %d for %s", n, rc,
                msg);
  if (rc == 0 && request)
    ck_assert_msg(k->n >= before + 1, "fail_at %ld: no reply to %s", n, msg);
  return rc == 0;
}

/* One whole life under allocation failure number n. Returns whether
 * everything succeeded (then the replies are checked by the caller). */
static bool alloc_scenario(long n, void *user) {
  tu_sink *k = user;
  mcp_server *s = NULL;
  mcp_server_info info = {
      .name = "a", .version = "1", .title = "A", .instructions = "i"};
  int rc = mcp_server_new(&info, &s);
  if (rc) {
    ck_assert_int_eq(rc, MCP_ENOMEM);
    return false;
  }
  mcp_server_set_log(s, log_capture, NULL);
  if ((rc = mcp_server_add_tool(s, &TOOL_ALLOC, NULL)) != 0 ||
      (rc = mcp_server_add_tool(s, &TOOL_LATER, NULL)) != 0) {
    ck_assert_int_eq(rc, MCP_ENOMEM);
    mcp_server_free(s);
    return false;
  }
  static const char *const scopes[] = {"read", NULL};
  mcp_principal who = {.subject = "me", .scopes = scopes};
  mcp_session *session = NULL;
  rc = mcp_session_new(s, &who, tu_sink_send, k, &session);
  if (rc) {
    ck_assert_int_eq(rc, MCP_ENOMEM);
    mcp_server_free(s);
    return false;
  }
  bool ok = true;
  ok &= alloc_step(session, k,
                   "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\","
                   "\"params\":{\"protocolVersion\":\"2025-11-25\","
                   "\"capabilities\":{},\"clientInfo\":{\"name\":\"c\"}}}",
                   true, n);
  ok &= alloc_step(session, k,
                   "{\"jsonrpc\":\"2.0\",\"method\":"
                   "\"notifications/initialized\"}",
                   false, n);
  ok &= alloc_step(session, k,
                   "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}",
                   true, n);
  g_fn = h_alloc;
  ok &= alloc_step(session, k,
                   "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\","
                   "\"params\":{\"name\":\"alloc\",\"arguments\":{\"q\":"
                   "\"x\"},\"_meta\":{\"progressToken\":\"t\"}}}",
                   true, n);
  ok &= alloc_step(session, k,
                   "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\","
                   "\"params\":{\"name\":\"alloc\",\"arguments\":{}}}",
                   true, n);
  g_fn = h_alloc_defer;
  alloc_deferred = NULL;
  size_t before = k->n;
  bool deferred_ok =
      alloc_step(session, k,
                 "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/call\","
                 "\"params\":{\"name\":\"later\"}}",
                 false, n);
  ok &= deferred_ok;
  if (alloc_deferred != NULL) {
    ck_assert_uint_eq(k->n, before);
    ck_assert_uint_eq(mcp_session_pending(session), 1);
    mcp_result_text(alloc_deferred, "later");
    mcp_call_finish(alloc_deferred, 0);
    /* A deferred call has nobody to return an error to: its reply (or
     * the -32603 standing in for it) must be sent. */
    ck_assert_msg(k->n == before + 1, "fail_at %ld: deferred reply lost", n);
  } else if (deferred_ok) {
    ck_assert_uint_eq(k->n, before + 1); /* refused with an error */
  }
  ck_assert_uint_eq(mcp_session_pending(session), 0);
  ok &= alloc_step(session, k, "{\"jsonrpc\":", true, n);
  ok &= alloc_step(session, k, "{\"jsonrpc\":\"2.0\",\"id\":5}", true, n);
  mcp_session_free(session);
  mcp_server_free(s);
  g_fn = NULL;
  return ok;
}

/* The run in which nothing failed went all the way, correctly; whatever
 * any run sent is strict JSON. */
static void alloc_after(long n, bool complete, bool clean, void *user) {
  tu_sink *k = user;
  if (clean) {
    ck_assert(complete);
    ck_assert_uint_eq(k->n, 8);
    ck_assert_ptr_nonnull(strstr(k->msgs[0], "\"protocolVersion\""));
    ck_assert_ptr_nonnull(strstr(k->msgs[1], "\"tools\":[{"));
    ck_assert_ptr_nonnull(strstr(k->msgs[2], "notifications/progress"));
    ck_assert_ptr_nonnull(strstr(k->msgs[3], "\"structuredContent\""));
    ck_assert_ptr_nonnull(strstr(k->msgs[4], "\"isError\":true"));
    ck_assert_ptr_nonnull(strstr(k->msgs[5], "\"text\":\"later\""));
    ck_assert_ptr_nonnull(strstr(k->msgs[6], "-32700"));
    ck_assert_ptr_nonnull(strstr(k->msgs[7], "-32600"));
  }
  tu_sink_free(k, n, tu_assert_strict);
}

START_TEST(allocation_failure) {
  tu_sink k = {0};
  tu_alloc_every(20000, alloc_scenario, alloc_after, &k);
}
END_TEST

/* The one timer: an owner's deadline (a TTL) and the calls' deadlines
 * share srv->deadlines; mcp_server_expire pins a due owner under the heap's
 * lock and calls its due after, and the least deadline left is what
 * mcp_server_next_expiry_ms reads. */
typedef struct ttl_owner {
  mcp__deadline d;
  int pins, dues;
} ttl_owner;

static mcp_server *g_timer_srv;

static void ttl_owner_pin(mcp__deadline *d) {
  mcp__container_of(d, ttl_owner, d)->pins++;
}

static void ttl_owner_due(mcp__deadline *d) {
  mcp__container_of(d, ttl_owner, d)->dues++;
  mcp__deadline_unwatch(g_timer_srv, d);
}

START_TEST(one_timer_holds_every_kind) {
  g_timer_srv = srv;
  ttl_owner due = {.d = {.kind = MCP__DEADLINE_TTL,
                         .pin = ttl_owner_pin,
                         .due = ttl_owner_due}};
  ttl_owner later = due;
  ck_assert_int_eq(mcp_server_next_expiry_ms(srv), -1);
  unsigned long long now = mcp__now_us();
  mcp__deadline_watch(srv, &later.d, now + 3600u * 1000000u);
  long ms = mcp_server_next_expiry_ms(srv);
  ck_assert(ms > 3000 * 1000 && ms <= 3600 * 1000);
  mcp__deadline_watch(srv, &due.d, now > 0 ? now - 1 : 0);
  mcp__deadline_watch(srv, &due.d, now + 1); /* watched already: kept */
  ck_assert_int_eq(mcp_server_next_expiry_ms(srv), 0);
  ck_assert_int_eq(mcp_server_expire(srv), 1);
  ck_assert_int_eq(due.pins, 1);
  ck_assert_int_eq(due.dues, 1);
  ck_assert(!due.d.watched);
  ck_assert_int_eq(later.pins + later.dues, 0);
  ms = mcp_server_next_expiry_ms(srv);
  ck_assert(ms > 3000 * 1000 && ms <= 3600 * 1000);
  mcp__deadline_unwatch(srv, &later.d);
  mcp__deadline_unwatch(srv, &later.d); /* not watched: nothing */
  ck_assert_int_eq(mcp_server_next_expiry_ms(srv), -1);
  ck_assert_int_eq(mcp_server_expire(srv), 0);
}
END_TEST

/* ===========================================================================
 * Suite
 * ======================================================================== */

static Suite *engine_suite(void) {
  Suite *s = suite_create("engine");
  TCase *t = tcase(s, "strict");
  tcase_add_test(t, parse_errors_before_initialize);
  tcase_add_test(t, parse_errors_after_initialize);
  tcase_add_test(t, parse_error_id_by_version);
  tcase_add_test(t, invalid_envelopes);
  tcase_add_test(t, case_variant_keys);
  tcase_add_test(t, id_echoed_exactly);
  tcase_add_test(t, one_timer_holds_every_kind);

  t = tcase(s, "lifecycle");
  tcase_add_test(t, before_initialize);
  tcase_add_test(t, between_initialize_and_initialized);
  tcase_add_test(t, unknown_method);
  tcase_add_test(t, notifications_never_answered);
  tcase_add_test(t, list_changed_after_initialized);
  tcase_add_test(t, batch_2025_03_26);
  tcase_add_test(t, deferred_arguments_outlive_their_message);
  tcase_add_test(t, batch_refused);
  tcase_add_test(t, batch_before_initialize_even_with_initialize);
  tcase_add_test(t, tools_list_pages);

  t = tcase(s, "call");
  tcase_add_test(t, call_unknown_tool);
  tcase_add_test(t, call_unknown_tool_long_utf8_name);
  tcase_add_test(t, call_malformed_params);
  tcase_add_test(t, call_missing_arguments_is_empty_object);
  tcase_add_test(t, call_schema_failure_is_tool_error);
  tcase_add_test(t, call_handler_failure);
  tcase_add_test(t, call_builder_latch);
  tcase_add_test(t, call_positive_return);
  tcase_add_test(t, call_result_error);
  tcase_add_test(t, call_empty_result);
  tcase_add_test(t, call_argument_getters);

  t = tcase(s, "content");
  tcase_add_test(t, content_all_blocks);
  tcase_add_test(t, content_base64_vectors);
  tcase_add_test(t, content_builder_misuse);
  tcase_add_test(t, builder_refusals_logged);
  tcase_add_test(t, server_new_names_the_member);
  tcase_add_test(t, structured_by_version);
  tcase_add_test(t, structured_rejects);
  tcase_add_test(t, resource_link_by_version);
  tcase_add_test(t, audio_by_version);
  tcase_add_test(t, audio_note_long_mime);

  t = tcase(s, "progress");
  tcase_add_test(t, progress_string_token);
  tcase_add_test(t, progress_integer_token);
  tcase_add_test(t, progress_must_increase);
  tcase_add_test(t, progress_without_token);
  tcase_add_test(t, progress_bad_token);
  tcase_add_test(t, progress_message_by_version);

  t = tcase(s, "cancel");
  tcase_add_test(t, cancel_deferred);
  tcase_add_test(t, cancel_ignored);
  tcase_add_test(t, cancel_initialize_ignored);
  tcase_add_test(t, duplicate_id_in_flight);
  tcase_add_test(t, cancel_all);

  t = tcase(s, "deferred");
  tcase_add_test(t, deferred_finished_by_thread);
  tcase_add_test(t, deferred_finished_before_return);
  tcase_add_test(t, deferred_race);
  tcase_add_test(t, deferred_finish_codes);
  tcase_add_test(t, deferred_progress_from_thread);
  tcase_add_test(t, deferred_in_batch);
  tcase_add_test(t, deferred_outlives_session);
  tcase_add_test(t, session_free_with_nothing_pending);

  t = tcase(s, "session");
  tcase_add_test(t, send_failure_closes);
  tcase_add_test(t, send_failure_on_deferred_reply);
  tcase_add_test(t, send_failure_in_batch);
  tcase_add_test(t, reject);
  tcase_add_test(t, api_misuse);
  tcase_add_test(t, strerror_every_code);
  tcase_add_test(t, library_version);

  t = tcase(s, "alloc");
  tcase_set_timeout(t, 300);
  tcase_add_test(t, allocation_failure);
  return s;
}

int main(void) { return tu_run(engine_suite()); }
