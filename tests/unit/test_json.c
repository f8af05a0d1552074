/* Tests for lib/json/json.c: the strict parser, raw id capture, number text,
 * integer reading, quoting, and allocation failure at every allocation. */
#include <check.h>
#include <cjson/cJSON.h>
#include <limits.h>
#include <locale.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "json.h"
#include "testutil.h"

/* ---- helpers ------------------------------------------------------------ */

static char errbuf[256];

/* Parses n bytes with the given limits and frees the result; returns the
 * code, leaving the message in errbuf. */
static int parse_n_once(const char *s, size_t n, const mcp__json_limits *lim) {
  mcp__json_doc doc;
  /* An exact-size heap copy lets ASan and valgrind see any read past the
   * end, which a string literal's NUL would hide. */
  char *copy = NULL;
  if (s != NULL) {
    copy = malloc(n ? n : 1);
    ck_assert_ptr_nonnull(copy);
    memcpy(copy, s, n);
  }
  int rc = mcp__json_parse(copy, n, lim, &doc, errbuf, sizeof errbuf);
  free(copy);
  if (rc == 0) {
    ck_assert_ptr_nonnull(doc.root);
  } else {
    ck_assert_ptr_null(doc.root);
    ck_assert_ptr_null(doc.more);
    ck_assert_uint_eq(doc.nraws, 0);
    ck_assert_msg(errbuf[0] != '\0', "no message for rc %d", rc);
    ck_assert_msg(strchr(errbuf, '\n') == NULL, "message not one line");
    ck_assert_msg(strstr(errbuf, " at byte ") != NULL, "no offset: %s", errbuf);
  }
  mcp__json_doc_free(&doc);
  ck_assert_ptr_null(doc.pool);
  return rc;
}

/* parse_n_once with lim, then again with the nodes in a pool (as messages
 * are parsed): both must give the same answer and the same message. */
static int parse_n(const char *s, size_t n, const mcp__json_limits *lim) {
  int rc = parse_n_once(s, n, lim);
  char first[sizeof errbuf];
  memcpy(first, errbuf, sizeof first);
  mcp__json_limits pooled = lim ? *lim : (mcp__json_limits){0};
  pooled.pooled = 1;
  ck_assert_int_eq(parse_n_once(s, n, &pooled), rc);
  ck_assert_str_eq(errbuf, first);
  return rc;
}

static int parse(const char *s) { return parse_n(s, strlen(s), NULL); }

/* Parses a document that must be valid; the caller frees it. */
static mcp__json_doc parse_ok(const char *s) {
  mcp__json_doc doc;
  int rc = mcp__json_parse(s, strlen(s), NULL, &doc, errbuf, sizeof errbuf);
  ck_assert_msg(rc == 0, "rejected %s: %s", s, errbuf);
  return doc;
}

/* Each string must be refused with the given code. */
static void expect_all(const char *const *inputs, size_t count, int code) {
  for (size_t i = 0; i < count; i++) {
    int rc = parse(inputs[i]);
    ck_assert_msg(rc == code, "input %zu (%s): got %d, want %d (%s)", i,
                  inputs[i], rc, code, errbuf);
  }
}

static void expect_valid(const char *const *inputs, size_t count) {
  for (size_t i = 0; i < count; i++) {
    int rc = parse(inputs[i]);
    ck_assert_msg(rc == 0, "input %zu (%s) rejected: %s", i, inputs[i], errbuf);
  }
}

/* Wraps s in a JSON string literal inside an array, as bytes. */
static int parse_in_string(const char *body, size_t len) {
  char tmp[256];
  ck_assert_uint_lt(len + 4, sizeof tmp);
  tmp[0] = '[';
  tmp[1] = '"';
  memcpy(tmp + 2, body, len);
  tmp[len + 2] = '"';
  tmp[len + 3] = ']';
  return parse_n(tmp, len + 4, NULL);
}

/* The decoded value of the single string in ["..."]. */
static char *decoded(const char *json) {
  mcp__json_doc doc = parse_ok(json);
  const cJSON *s = cJSON_GetArrayItem(doc.root, 0);
  ck_assert_ptr_nonnull(s);
  ck_assert(cJSON_IsString(s));
  char *copy = strdup(s->valuestring);
  mcp__json_doc_free(&doc);
  return copy;
}

/* n nested arrays, closed or not. */
static char *nested(size_t n, int closed) {
  char *s = malloc(2 * n + 1);
  ck_assert_ptr_nonnull(s);
  memset(s, '[', n);
  if (closed)
    memset(s + n, ']', n);
  s[closed ? 2 * n : n] = '\0';
  return s;
}

/* ---- A4, A5: empty input and trailing garbage ---------------------------- */

START_TEST(empty_input) {
  static const char *const bad[] = {"", " ", "\n\t\r ", "\t"};
  expect_all(bad, TU_COUNT(bad), MCP_EPARSE);
  ck_assert_int_eq(parse_n(NULL, 0, NULL), MCP_EPARSE);
  ck_assert_str_eq(errbuf, "empty input at byte 0");
}
END_TEST

START_TEST(trailing_garbage) {
  static const char *const bad[] = {
      "{} x",        "{}}",        "[1] [2]",   "1 2",
      "\"a\"b",      "nullx",      "truefalse", "0x10",
      "1.5.3",       "{\"a\":1},", "[]]",       "{}{}",
      "\"a\" \"b\"", "1 /* c */",  "{} //",     "[] \xEF\xBB\xBF"};
  expect_all(bad, TU_COUNT(bad), MCP_EPARSE);
  ck_assert_int_eq(parse("{\"a\":1}  x"), MCP_EPARSE);
  ck_assert_str_eq(errbuf, "unexpected character after the JSON value at "
                           "byte 9");
  /* A NUL byte after the value is garbage too: the length decides. */
  ck_assert_int_eq(parse_n("{}\0", 3, NULL), MCP_EPARSE);
  ck_assert_int_eq(parse_n("{}\0", 2, NULL), 0);
  static const char *const good[] = {" {} ", "\r\n[]\r\n", "\t1\t", "null "};
  expect_valid(good, TU_COUNT(good));
}
END_TEST

/* ---- structure errors -----------------------------------------------------
 */

START_TEST(structure_errors) {
  static const char *const bad[] = {
      "{",         "[",          "[1,]",    "{\"a\":1,}", "{\"a\"}",
      "{\"a\" 1}", "{1:2}",      "{'a':1}", "[1 2]",      "{\"a\":1 \"b\":2}",
      "]",         "}",          ":",       ",",          "[,1]",
      "tru",       "nul",        "True",    "\"abc",      "'single'",
      "{\"a\":}",  "{\"a\"::1}", "[1,,2]",  "{,}",        "{\"a\",1}",
      "[\"a\":1]", "{\"a\":1]",  "[1}",     "\"",         "fals",
      "undefined", "[\"a\\",     "{\"a",    "{\"a\":",    "[1,"};
  expect_all(bad, TU_COUNT(bad), MCP_EPARSE);
}
END_TEST

START_TEST(whitespace) {
  static const char *const good[] = {
      " { \"a\" : [ 1 , 2 ] , \"b\" : { } } ",
      "\n{\n\t\"a\"\r\n:\r\n1\n}\n",
      "[\t]",
      "{ }",
  };
  expect_valid(good, TU_COUNT(good));
  /* Only space, tab, CR and LF are JSON whitespace. */
  static const char *const bad[] = {"\f{}",           "{}\v",
                                    "[1,\f2]",        "\xC2\xA0{}",
                                    "{}\xE2\x80\xA8", "[1\xE3\x80\x80]"};
  expect_all(bad, TU_COUNT(bad), MCP_EPARSE);
}
END_TEST

/* ---- A6: nesting -------------------------------------------------------- */

START_TEST(depth_10000) {
  char *s = nested(10000, 0);
  ck_assert_int_eq(parse(s), MCP_ELIMIT);
  ck_assert_str_eq(errbuf, "nesting deeper than 64 at byte 64");
  free(s);
  s = nested(10000, 1);
  ck_assert_int_eq(parse(s), MCP_ELIMIT);
  free(s);

  /* Objects nest the same way. */
  size_t n = 10000;
  char *o = malloc(5 * n + 2);
  ck_assert_ptr_nonnull(o);
  for (size_t i = 0; i < n; i++)
    memcpy(o + 5 * i, "{\"a\":", 5);
  o[5 * n] = '1';
  o[5 * n + 1] = '\0';
  ck_assert_int_eq(parse(o), MCP_ELIMIT);
  free(o);
}
END_TEST

START_TEST(depth_64_vs_65) {
  char *s = nested(64, 1);
  ck_assert_int_eq(parse(s), 0);
  free(s);
  s = nested(65, 1);
  ck_assert_int_eq(parse(s), MCP_ELIMIT);
  free(s);

  /* 63 arrays around one object: depth 64 counts objects too. */
  char buf[256];
  memset(buf, '[', 63);
  strcpy(buf + 63, "{\"a\":1}");
  memset(buf + 70, ']', 63);
  buf[133] = '\0';
  ck_assert_int_eq(parse(buf), 0);
  strcpy(buf + 63, "{\"a\":[]}");
  memset(buf + 71, ']', 63);
  buf[134] = '\0';
  ck_assert_int_eq(parse(buf), MCP_ELIMIT);

  /* A custom limit above the parser's inline stack. */
  mcp__json_limits lim = {.max_depth = 300};
  s = nested(300, 1);
  ck_assert_int_eq(parse_n(s, strlen(s), &lim), 0);
  free(s);
  s = nested(301, 1);
  ck_assert_int_eq(parse_n(s, strlen(s), &lim), MCP_ELIMIT);
  ck_assert_str_eq(errbuf, "nesting deeper than 300 at byte 300");
  free(s);
  lim.max_depth = 1;
  ck_assert_int_eq(parse_n("[1]", 3, &lim), 0);
  ck_assert_int_eq(parse_n("[[]]", 4, &lim), MCP_ELIMIT);
  ck_assert_int_eq(parse_n("7", 1, &lim), 0);
}
END_TEST

/* ---- A7: duplicate keys ---------------------------------------------------
 */

START_TEST(duplicate_keys) {
  static const char *const bad[] = {
      "{\"a\":1,\"a\":2}",
      "{\"a\":1,\"\\u0061\":2}",
      "{\"ab\":1,\"a\\u0062\":2}",
      "{\"\\/\":1,\"/\":2}",
      "{\"\xC3\xA9\":1,\"\\u00e9\":2}",
      "{\"\xF0\x9F\x98\x80\":1,\"\\ud83d\\ude00\":2}",
      "{\"method\":\"x\",\"params\":{},\"method\":\"y\"}",
      "{\"params\":{\"name\":\"a\",\"arguments\":{},\"name\":\"b\"}}",
      "[{\"id\":1},{\"id\":1,\"id\":2}]",
      "{\"\":1,\"\":2}",
      "{\"a\":1,\"b\":2,\"c\":3,\"b\":4}",
  };
  expect_all(bad, TU_COUNT(bad), MCP_EPARSE);
  ck_assert_int_eq(
      parse("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"a\",\"method\":\"b\"}"),
      MCP_EPARSE);
  ck_assert_str_eq(errbuf, "duplicate key \"method\" at byte 37");

  static const char *const good[] = {
      "{\"a\":1,\"A\":2}",
      "{\"a\":{\"a\":1},\"b\":{\"a\":2}}",
      "[{\"a\":1},{\"a\":1}]",
      "{\"a\":1,\"a \":2,\" a\":3}",
      "{\"ab\":1,\"ba\":2,\"a\":3,\"b\":4}",
  };
  expect_valid(good, TU_COUNT(good));
}
END_TEST

/* Builds {"k0":0,...,"k<n-1>":n-1} with key number dup_of repeated as the
 * last member when dup_of < n. */
static char *many_keys(size_t n, size_t dup_of) {
  size_t cap = n * 24 + 64;
  char *s = malloc(cap);
  ck_assert_ptr_nonnull(s);
  size_t o = 0;
  s[o++] = '{';
  for (size_t i = 0; i < n; i++)
    o += (size_t)snprintf(s + o, cap - o, "%s\"k%zu\":%zu", i ? "," : "", i, i);
  if (dup_of < n)
    o += (size_t)snprintf(s + o, cap - o, ",\"k%zu\":0", dup_of);
  s[o++] = '}';
  s[o] = '\0';
  return s;
}

START_TEST(duplicate_keys_large_object) {
  char *s = many_keys(1000, (size_t)-1);
  ck_assert_int_eq(parse(s), 0);
  free(s);
  s = many_keys(1000, 0);
  ck_assert_int_eq(parse(s), MCP_EPARSE);
  /* The repeated key is the last member; the message points at it. */
  char want[64];
  snprintf(want, sizeof want, "duplicate key \"k0\" at byte %zu",
           strlen(s) - strlen("\"k0\":0}"));
  ck_assert_str_eq(errbuf, want);
  free(s);
  s = many_keys(1000, 999);
  ck_assert_int_eq(parse(s), MCP_EPARSE);
  free(s);
  s = many_keys(17, 16);
  ck_assert_int_eq(parse(s), MCP_EPARSE);
  free(s);
  s = many_keys(16, 3);
  ck_assert_int_eq(parse(s), MCP_EPARSE);
  free(s);

  /* Large objects nested in large objects keep their key sets apart. */
  char *inner = many_keys(100, (size_t)-1);
  size_t cap = 3 * strlen(inner) + 64;
  char *outer = malloc(cap);
  ck_assert_ptr_nonnull(outer);
  snprintf(outer, cap, "{\"k0\":%s,\"k1\":%s,\"x\":[%s]}", inner, inner, inner);
  ck_assert_int_eq(parse(outer), 0);
  snprintf(outer, cap, "{\"k0\":%s,\"k1\":%s,\"k0\":[%s]}", inner, inner,
           inner);
  ck_assert_int_eq(parse(outer), MCP_EPARSE);
  free(outer);
  free(inner);
}
END_TEST

/* ---- A9: UTF-8 ---------------------------------------------------------- */

START_TEST(invalid_utf8) {
  static const char *const bad[] = {
      "\xC3\x28",                 /* bad continuation */
      "\xC0\xAF",                 /* overlong '/' */
      "\xC1\xBF",                 /* overlong */
      "\xE0\x80\xAF",             /* overlong, three bytes */
      "\xE0\x9F\xBF",             /* overlong U+07FF */
      "\xF0\x80\x80\xAF",         /* overlong, four bytes */
      "\xF0\x8F\xBF\xBF",         /* overlong U+FFFF */
      "\xED\xA0\x80",             /* CESU: U+D800 */
      "\xED\xBF\xBF",             /* CESU: U+DFFF */
      "\xED\xA0\xBD\xED\xB8\x80", /* CESU pair for U+1F600 */
      "\xF4\x90\x80\x80",         /* U+110000 */
      "\xF5\x80\x80\x80",         /* 0xF5 */
      "\xF7\xBF\xBF\xBF",
      "\xF8\x88\x80\x80\x80", /* five-byte form */
      "\xFE",
      "\xFF",
      "\x80",             /* lone continuation */
      "a\xBF",            /* lone continuation */
      "\xE2\x82",         /* truncated before the quote */
      "\xF0\x9F\x98",     /* truncated */
      "\xC3",             /* truncated */
      "\xE2\x28\xA1",     /* bad second byte */
      "\xE2\x82\x28",     /* bad third byte */
      "\xF0\x9F\x98\x28", /* bad fourth byte */
  };
  for (size_t i = 0; i < TU_COUNT(bad); i++) {
    int rc = parse_in_string(bad[i], strlen(bad[i]));
    ck_assert_msg(rc == MCP_EPARSE, "input %zu accepted", i);
    ck_assert_msg(strncmp(errbuf, "invalid UTF-8 at byte ", 22) == 0,
                  "input %zu: %s", i, errbuf);
    /* The same bytes in a key. */
    char key[64];
    int n = snprintf(key, sizeof key, "{\"%s\":1}", bad[i]);
    ck_assert_int_eq(parse_n(key, (size_t)n, NULL), MCP_EPARSE);
  }
  ck_assert_int_eq(parse("[\"ok\",\"x\xC0\xAF\"]"), MCP_EPARSE);
  ck_assert_str_eq(errbuf, "invalid UTF-8 at byte 8");
  /* Truncated at the very end of the buffer. */
  ck_assert_int_eq(parse_n("\"\xE2\x82", 3, NULL), MCP_EPARSE);
  ck_assert_int_eq(parse_n("\"\xF0", 2, NULL), MCP_EPARSE);
  ck_assert_int_eq(parse_n("\"\xC3", 2, NULL), MCP_EPARSE);
  ck_assert_int_eq(parse_n("\"\xE2\x82", 3, NULL), MCP_EPARSE);

  /* Outside strings any non-ASCII byte is refused, including a BOM. */
  static const char *const outside[] = {"\xEF\xBB\xBF{}", "[1,\xC3\xA9]",
                                        "{\xC3\xA9:1}", "\xFF"};
  expect_all(outside, TU_COUNT(outside), MCP_EPARSE);
  /* And the message never carries the raw byte. */
  ck_assert_int_eq(parse("[\xFF]"), MCP_EPARSE);
  for (const char *c = errbuf; *c; c++)
    ck_assert_msg((unsigned char)*c < 0x80, "raw byte in %s", errbuf);

  static const char *const good[] = {
      "\xC2\x80",
      "\xC3\xA9",
      "\xDF\xBF",
      "\xE0\xA0\x80",
      "\xE2\x82\xAC",
      "\xED\x9F\xBF",
      "\xEE\x80\x80",
      "\xEF\xBF\xBF",
      "\xF0\x90\x80\x80",
      "\xF0\x9F\x98\x80",
      "\xF3\xBF\xBF\xBF",
      "\xF4\x8F\xBF\xBF",
      "\x7F",
  };
  for (size_t i = 0; i < TU_COUNT(good); i++) {
    ck_assert_msg(parse_in_string(good[i], strlen(good[i])) == 0,
                  "input %zu rejected: %s", i, errbuf);
    char key[64];
    int n = snprintf(key, sizeof key, "{\"%s\":1}", good[i]);
    ck_assert_int_eq(parse_n(key, (size_t)n, NULL), 0);
  }
}
END_TEST

/* ---- A11: raw control characters ------------------------------------------
 */

START_TEST(raw_controls) {
  for (unsigned c = 0; c < 0x20; c++) {
    char body[3] = {'a', (char)c, 'b'};
    ck_assert_msg(parse_in_string(body, 3) == MCP_EPARSE, "0x%02X accepted", c);
    char key[16] = "{\"k?\":1}";
    key[3] = (char)c;
    ck_assert_int_eq(parse_n(key, 8, NULL), MCP_EPARSE);
  }
  /* A raw NUL in the middle of the buffer, inside and outside a string. */
  static const char nul_in[] = "{\"a\":\"x\0y\",\"b\":1}";
  ck_assert_int_eq(parse_n(nul_in, sizeof nul_in - 1, NULL), MCP_EPARSE);
  ck_assert_str_eq(errbuf, "raw control character 0x00 in a string at byte 7");
  static const char nul_out[] = "[1,\0 2]";
  ck_assert_int_eq(parse_n(nul_out, sizeof nul_out - 1, NULL), MCP_EPARSE);
  ck_assert_int_eq(parse("\"line\nbreak\""), MCP_EPARSE);
  ck_assert_int_eq(parse("\"tab\there\""), MCP_EPARSE);
  /* DEL is not a JSON control character. */
  ck_assert_int_eq(parse("\"\x7F\""), 0);
}
END_TEST

/* ---- escapes ------------------------------------------------------------ */

START_TEST(bad_escapes) {
  static const char *const bad[] = {
      "[\"\\x41\"]",   "[\"\\a\"]",     "[\"\\'\"]",        "[\"\\U0041\"]",
      "[\"\\u12\"]",   "[\"\\u12G4\"]", "[\"\\u\"]",        "[\"\\0\"]",
      "[\"\\v\"]",     "[\"abc\\\"]",   "[\"\\ \"]",        "[\"\\u-123\"]",
      "[\"\\u 123\"]", "{\"\\q\":1}",   "[\"\\\xC3\xA9\"]", "\"\\u004\"",
      "\"\\u00\"",     "\"\\",
  };
  expect_all(bad, TU_COUNT(bad), MCP_EPARSE);
  /* Escapes cut off by the end of the buffer. */
  static const char *const cut[] = {"\"\\",    "\"\\u",    "\"\\u0",
                                    "\"\\u00", "\"\\u004", "\"\\uD83D\\uDE0"};
  expect_all(cut, TU_COUNT(cut), MCP_EPARSE);
}
END_TEST

START_TEST(lone_surrogates) {
  static const char *const bad[] = {
      "[\"\\uD800\"]",        "[\"\\uDC00\"]",        "[\"\\uDFFF\"]",
      "[\"\\uD800\\u0041\"]", "[\"\\uD800x\"]",       "[\"\\uDBFF\\uDBFF\"]",
      "[\"\\uDC00\\uD800\"]", "[\"\\uD83D\\n\"]",     "[\"\\uD800\\uE000\"]",
      "[\"\\ud83d\"]",        "[\"a\\ude00b\"]",      "{\"\\uD800\":1}",
      "[\"\\uD800\\\"]",      "[\"\\uD800\\u\"]",     "[\"\\uD800\\uDC0\"]",
      "[\"\\uD83Dxude00\"]",  "[\"\\uD83D\\xDE00\"]", "[\"\\uD83D\\\\uDE00\"]",
      "\"\\uD800\\uDC",
  };
  expect_all(bad, TU_COUNT(bad), MCP_EPARSE);
}
END_TEST

START_TEST(nul_escape) {
  static const char *const bad[] = {"[\"\\u0000\"]", "[\"a\\u0000b\"]",
                                    "{\"\\u0000\":1}", "{\"a\\u0000\":1}",
                                    "\"\\u0000\""};
  expect_all(bad, TU_COUNT(bad), MCP_EPARSE);
  ck_assert_int_eq(parse("[\"a\\u0000\"]"), MCP_EPARSE);
  ck_assert_str_eq(errbuf, "\\u0000 is not allowed in a string at byte 3");
}
END_TEST

START_TEST(unicode_escapes_decode) {
  static const struct {
    const char *json;
    const char *want;
  } cases[] = {
      {"[\"\\u0041\"]", "A"},
      {"[\"\\u00e9\"]", "\xC3\xA9"},
      {"[\"\\u00E9\"]", "\xC3\xA9"},
      {"[\"\\u007f\"]", "\x7F"},
      {"[\"\\u0080\"]", "\xC2\x80"},
      {"[\"\\u07FF\"]", "\xDF\xBF"},
      {"[\"\\u0800\"]", "\xE0\xA0\x80"},
      {"[\"\\u20AC\"]", "\xE2\x82\xAC"},
      {"[\"\\uD7FF\"]", "\xED\x9F\xBF"},
      {"[\"\\uE000\"]", "\xEE\x80\x80"},
      {"[\"\\uFFFF\"]", "\xEF\xBF\xBF"},
      {"[\"\\uD800\\uDC00\"]", "\xF0\x90\x80\x80"},
      {"[\"\\uD83D\\uDE00\"]", "\xF0\x9F\x98\x80"},
      {"[\"\\ud83d\\ude00\"]", "\xF0\x9F\x98\x80"},
      {"[\"\\uDBFF\\uDFFF\"]", "\xF4\x8F\xBF\xBF"},
      {"[\"\\u001f\"]", "\x1F"},
      {"[\"\\\"\\\\\\/\\b\\f\\n\\r\\t\"]", "\"\\/\b\f\n\r\t"},
      {"[\"a\\nb\xC3\xA9\\u00e9c\\uD83D\\uDE00d\"]", "a\nb\xC3\xA9\xC3\xA9"
                                                     "c\xF0\x9F\x98\x80"
                                                     "d"},
      {"[\"\"]", ""},
      {"[\"\\\\u0041\"]", "\\u0041"},
  };
  for (size_t i = 0; i < TU_COUNT(cases); i++) {
    char *got = decoded(cases[i].json);
    ck_assert_msg(strcmp(got, cases[i].want) == 0, "case %zu", i);
    free(got);
  }
  /* Keys are decoded too. */
  mcp__json_doc doc = parse_ok("{\"caf\\u00e9\":1,\"\\ud83d\\ude00\":2}");
  ck_assert_ptr_nonnull(
      cJSON_GetObjectItemCaseSensitive(doc.root, "caf\xC3\xA9"));
  ck_assert_ptr_nonnull(
      cJSON_GetObjectItemCaseSensitive(doc.root, "\xF0\x9F\x98\x80"));
  mcp__json_doc_free(&doc);
}
END_TEST

/* ---- numbers ------------------------------------------------------------ */

START_TEST(number_grammar) {
  static const char *const bad[] = {
      "01",   "-01",      "00",         "+1",     ".5",    "1.",
      "-",    "-.5",      "1e",         "1e+",    "1E-",   "0x1F",
      "NaN",  "Infinity", "-Infinity",  "1.e5",   "--1",   "1ee5",
      "0.",   "[01]",     "{\"a\":+1}", "[.5]",   "[1.]",  "[-]",
      "[1e]", "[0x0]",    "[nan]",      "[-inf]", "1e5.5", "- 1",
      "1 .5", "[1.5e]",   "[0e+]",      "0b1",    "1_000", "\xD9\xA1",
  };
  expect_all(bad, TU_COUNT(bad), MCP_EPARSE);
  ck_assert_int_eq(parse("[-012]"), MCP_EPARSE);
  ck_assert_str_eq(errbuf, "invalid number: leading zero at byte 1");
  static const char *const good[] = {
      "0",     "-0",      "1",      "-1",           "0.5",    "-0.5",
      "1e5",   "1E5",     "1e+5",   "1e-5",         "1.5e10", "123456789",
      "0e0",   "-0.0e-0", "10",     "[0,1,-0]",     "1E+05",  "0.000001",
      "1e400", "-1e400",  "1e-400", "[1,2.5,-3e2]",
  };
  expect_valid(good, TU_COUNT(good));
}
END_TEST

START_TEST(number_values) {
  static const struct {
    const char *text;
    double value;
    int valueint;
  } cases[] = {
      {"0", 0.0, 0},
      {"1", 1.0, 1},
      {"-1", -1.0, -1},
      {"0.1", 0.1, 0},
      {"3.7", 3.7, 3},
      {"-3.7", -3.7, -3},
      {"1e5", 1e5, 100000},
      {"1E+05", 1e5, 100000},
      {"2.5e-3", 2.5e-3, 0},
      {"9007199254740993", 9007199254740993.0, INT_MAX},
      {"1e10", 1e10, INT_MAX},
      {"-1e10", -1e10, INT_MIN},
      {"2147483647", 2147483647.0, INT_MAX},
      {"-2147483648", -2147483648.0, INT_MIN},
      {"1.7976931348623157e308", 1.7976931348623157e308, INT_MAX},
      {"5e-324", 5e-324, 0},
      {"2.2250738585072014e-308", 2.2250738585072014e-308, 0},
      {"123456789012345678901234567890", 123456789012345678901234567890.0,
       INT_MAX},
      {"0.30000000000000004", 0.30000000000000004, 0},
      {"1234567.891e-3", 1234.567891, 1234},
      {"100000000000000000000000", 1e23, INT_MAX},
      {"8.98846567431158e307", 8.98846567431158e307, INT_MAX},
      /* Above 2^53 the mantissa would be rounded twice on the fast path. */
      {"84180317993626089e-5", 84180317993626089e-5, INT_MAX},
  };
  for (size_t i = 0; i < TU_COUNT(cases); i++) {
    char json[128];
    snprintf(json, sizeof json, "[%s]", cases[i].text);
    mcp__json_doc doc = parse_ok(json);
    const cJSON *n = doc.root->child;
    ck_assert(cJSON_IsNumber(n));
    ck_assert_msg(n->valuedouble == cases[i].value, "case %zu: %.17g", i,
                  n->valuedouble);
    ck_assert_msg(n->valueint == cases[i].valueint, "case %zu valueint %d", i,
                  n->valueint);
    ck_assert_str_eq(mcp__json_number_text(n), cases[i].text);
    /* The value is what strtod gives in the C locale. */
    ck_assert(n->valuedouble == strtod(cases[i].text, NULL));
    mcp__json_doc_free(&doc);
  }
  mcp__json_doc doc = parse_ok("[-0, 1e400, -1e400]");
  ck_assert(signbit(doc.root->child->valuedouble));
  ck_assert(isinf(doc.root->child->next->valuedouble));
  ck_assert_int_eq(doc.root->child->next->valueint, INT_MAX);
  ck_assert_int_eq(doc.root->child->next->next->valueint, INT_MIN);
  mcp__json_doc_free(&doc);
}
END_TEST

/* Numbers must not depend on LC_NUMERIC. Runs only where a locale with a
 * comma decimal point is installed. */
START_TEST(number_locale) {
  static const char *const locales[] = {"de_DE.UTF-8", "de_DE.utf8",
                                        "fr_FR.UTF-8", "de_DE"};
  const char *set = NULL;
  for (size_t i = 0; i < TU_COUNT(locales) && set == NULL; i++)
    set = setlocale(LC_NUMERIC, locales[i]);
  if (set == NULL)
    return;
  mcp__json_doc doc = parse_ok("[1.5, 1.5e-300, 0.1e30, "
                               "3.14159265358979323846264338327950288]");
  const cJSON *n = doc.root->child;
  double want[] = {1.5, 1.5e-300, 0.1e30, 3.14159265358979323846};
  for (size_t i = 0; i < TU_COUNT(want); i++, n = n->next)
    ck_assert_msg(n->valuedouble == want[i], "%zu: %g", i, n->valuedouble);
  mcp__json_doc_free(&doc);
  setlocale(LC_NUMERIC, "C");
}
END_TEST

/* The one member lookup: case-sensitive, first of a parsed object's
 * members, nothing for NULL, for a key that is absent or differs in case,
 * and for anything that is not an object (an array's elements, even one
 * that kept the name it had in an object, are not members). */
START_TEST(member_lookup) {
  mcp__json_doc doc = parse_ok("{\"a\":1,\"Name\":\"x\",\"name\":\"y\","
                               "\"\":true,\"nested\":{\"k\":[1,2]},"
                               "\"list\":[{\"a\":2}],\"s\":\"a\"}");
  const cJSON *root = doc.root;
  const cJSON *m = mcp__json_member(root, "name");
  ck_assert_ptr_nonnull(m);
  ck_assert_str_eq(m->valuestring, "y");
  ck_assert_str_eq(mcp__json_member(root, "Name")->valuestring, "x");
  ck_assert_ptr_null(mcp__json_member(root, "NAME"));
  ck_assert_ptr_null(mcp__json_member(root, "nam"));
  ck_assert_ptr_null(mcp__json_member(root, "names"));
  ck_assert(cJSON_IsTrue(mcp__json_member(root, "")));
  ck_assert_int_eq(mcp__json_member(root, "a")->valueint, 1);
  const cJSON *k = mcp__json_member(mcp__json_member(root, "nested"), "k");
  ck_assert(cJSON_IsArray(k));
  ck_assert_ptr_null(mcp__json_member(NULL, "a"));
  ck_assert_ptr_null(mcp__json_member(root, NULL));
  ck_assert_ptr_null(mcp__json_member(NULL, NULL));
  ck_assert_ptr_null(mcp__json_member(mcp__json_member(root, "s"), "a"));
  ck_assert_ptr_null(mcp__json_member(mcp__json_member(root, "list"), "a"));
  mcp__json_doc_free(&doc);

  /* An element moved from an object into an array keeps its name, and is
   * still no member of the array. */
  cJSON *arr = cJSON_CreateArray(), *obj = cJSON_CreateObject();
  ck_assert_ptr_nonnull(arr);
  ck_assert_ptr_nonnull(obj);
  ck_assert_ptr_nonnull(cJSON_AddNumberToObject(obj, "v", 3));
  cJSON *v = cJSON_DetachItemFromObjectCaseSensitive(obj, "v");
  ck_assert_ptr_nonnull(v);
  ck_assert(cJSON_AddItemToArray(arr, v));
  ck_assert_str_eq(v->string, "v");
  ck_assert_ptr_null(mcp__json_member(arr, "v"));
  ck_assert_ptr_null(mcp__json_member(obj, "v"));
  cJSON_Delete(arr);
  cJSON_Delete(obj);
}
END_TEST

START_TEST(number_text_and_integer) {
  mcp__json_doc doc = parse_ok(
      "[9223372036854775807, -9223372036854775808, 9223372036854775808,"
      " -9223372036854775809, 123456789012345678901234567890, 1.0, 1e2,"
      " -0, 0, 42, -42, \"7\", 1E2, 0.5]");
  const cJSON *n = doc.root->child;
  long long v = 0;
  int ov = -1;

  ck_assert_int_ne(mcp__json_integer(n, &v, &ov), 0);
  ck_assert(v == LLONG_MAX);
  ck_assert_int_eq(ov, 0);
  n = n->next;
  ck_assert_int_ne(mcp__json_integer(n, &v, &ov), 0);
  ck_assert(v == LLONG_MIN);
  ck_assert_int_eq(ov, 0);
  n = n->next;
  v = 5;
  ck_assert_int_ne(mcp__json_integer(n, &v, &ov), 0);
  ck_assert_int_eq(ov, 1);
  ck_assert(v == 5);
  n = n->next;
  ck_assert_int_ne(mcp__json_integer(n, &v, &ov), 0);
  ck_assert_int_eq(ov, 1);
  n = n->next;
  ck_assert_str_eq(mcp__json_number_text(n), "123456789012345678901234567890");
  ck_assert_int_ne(mcp__json_integer(n, NULL, &ov), 0);
  ck_assert_int_eq(ov, 1);
  ck_assert_int_ne(mcp__json_integer(n, NULL, NULL), 0);
  n = n->next;
  ck_assert_str_eq(mcp__json_number_text(n), "1.0");
  ck_assert_int_eq(mcp__json_integer(n, &v, &ov), 0);
  n = n->next;
  ck_assert_int_eq(mcp__json_integer(n, &v, &ov), 0);
  n = n->next;
  ck_assert_int_ne(mcp__json_integer(n, &v, &ov), 0);
  ck_assert(v == 0);
  n = n->next;
  ck_assert_int_ne(mcp__json_integer(n, &v, NULL), 0);
  ck_assert(v == 0);
  n = n->next;
  ck_assert_int_ne(mcp__json_integer(n, &v, &ov), 0);
  ck_assert(v == 42);
  ck_assert_int_eq(ov, 0);
  n = n->next;
  ck_assert_int_ne(mcp__json_integer(n, &v, &ov), 0);
  ck_assert(v == -42);
  n = n->next; /* a string */
  ck_assert_ptr_null(mcp__json_number_text(n));
  ck_assert_int_eq(mcp__json_integer(n, &v, &ov), 0);
  n = n->next;
  ck_assert_str_eq(mcp__json_number_text(n), "1E2");
  ck_assert_int_eq(mcp__json_integer(n, &v, &ov), 0);
  n = n->next;
  ck_assert_int_eq(mcp__json_integer(n, &v, &ov), 0);
  /* Asked only whether it is one, every answer is the same. */
  for (n = doc.root->child; n; n = n->next)
    ck_assert_int_eq(mcp__json_integer(n, NULL, NULL) != 0,
                     mcp__json_integer(n, &v, &ov) != 0);
  mcp__json_doc_free(&doc);

  ck_assert_ptr_null(mcp__json_number_text(NULL));
  ck_assert_int_eq(mcp__json_integer(NULL, &v, &ov), 0);
  /* A number built elsewhere has no text. */
  cJSON *other = cJSON_CreateNumber(5);
  ck_assert_ptr_null(mcp__json_number_text(other));
  ck_assert_int_eq(mcp__json_integer(other, &v, &ov), 0);
  cJSON_Delete(other);
}
END_TEST

/* ---- limits ------------------------------------------------------------- */

START_TEST(limits) {
  mcp__json_limits lim = {.max_string = 10};
  ck_assert_int_eq(parse_n("[\"0123456789\"]", 14, &lim), 0);
  ck_assert_int_eq(parse_n("[\"0123456789a\"]", 15, &lim), MCP_ELIMIT);
  ck_assert_int_eq(parse_n("{\"0123456789a\":1}", 17, &lim), MCP_ELIMIT);
  /* Decoded bytes count, not input bytes. */
  lim.max_string = 2;
  ck_assert_int_eq(parse_n("[\"\\u00e9\"]", 10, &lim), 0);
  ck_assert_int_eq(parse_n("[\"\\u20ac\"]", 10, &lim), MCP_ELIMIT);

  lim = (mcp__json_limits){.max_members = 3};
  ck_assert_int_eq(parse_n("[1,2,3]", 7, &lim), 0);
  ck_assert_int_eq(parse_n("[1,2,3,4]", 9, &lim), MCP_ELIMIT);
  ck_assert_int_eq(parse_n("{\"a\":1,\"b\":2,\"c\":3}", 19, &lim), 0);
  ck_assert_int_eq(parse_n("{\"a\":1,\"b\":2,\"c\":3,\"d\":4}", 25, &lim),
                   MCP_ELIMIT);
  ck_assert_int_eq(parse_n("[[1,2,3],[1,2,3],{\"a\":[1,2,3]}]", 31, &lim), 0);

  lim = (mcp__json_limits){.max_number = 3};
  ck_assert_int_eq(parse_n("[123]", 5, &lim), 0);
  ck_assert_int_eq(parse_n("[-123]", 6, &lim), MCP_ELIMIT);
  ck_assert_int_eq(parse_n("[1.5e1]", 7, &lim), MCP_ELIMIT);

  /* Default number limit: 63 characters. */
  char num[80];
  memset(num, '1', 63);
  num[63] = '\0';
  ck_assert_int_eq(parse(num), 0);
  num[63] = '1';
  num[64] = '\0';
  ck_assert_int_eq(parse(num), MCP_ELIMIT);
  ck_assert_str_eq(errbuf, "number longer than 63 characters at byte 0");
  /* A 70-digit number (A20) is refused as a whole, not misread. */
  memset(num, '9', 70);
  num[70] = '\0';
  ck_assert_int_eq(parse(num), MCP_ELIMIT);
}
END_TEST

START_TEST(default_limits) {
  /* A string of exactly 4 MiB is fine, one byte more is not. */
  size_t n = (size_t)4 << 20;
  char *s = malloc(n + 4);
  ck_assert_ptr_nonnull(s);
  s[0] = '"';
  memset(s + 1, 'x', n + 1);
  s[n + 1] = '"';
  ck_assert_int_eq(parse_n(s, n + 2, NULL), 0);
  s[n + 1] = 'x';
  s[n + 2] = '"';
  ck_assert_int_eq(parse_n(s, n + 3, NULL), MCP_ELIMIT);
  free(s);

  /* 100000 members are fine, one more is not. */
  char *arr = malloc(2 * 100001 + 2);
  ck_assert_ptr_nonnull(arr);
  arr[0] = '[';
  for (size_t i = 0; i < 100001; i++) {
    arr[1 + 2 * i] = '0';
    arr[2 + 2 * i] = ',';
  }
  arr[2 * 100000] = ']';
  ck_assert_int_eq(parse_n(arr, 2 * 100000 + 1, NULL), 0);
  arr[2 * 100000] = ',';
  arr[2 * 100001] = ']';
  ck_assert_int_eq(parse_n(arr, 2 * 100001 + 1, NULL), MCP_ELIMIT);
  free(arr);

  char *obj = many_keys(100000, (size_t)-1);
  ck_assert_int_eq(parse(obj), 0);
  free(obj);
  obj = many_keys(100001, (size_t)-1);
  ck_assert_int_eq(parse(obj), MCP_ELIMIT);
  free(obj);
  obj = many_keys(99999, 5);
  ck_assert_int_eq(parse(obj), MCP_EPARSE);
  free(obj);
}
END_TEST

/* ---- valid documents ---------------------------------------------------- */

START_TEST(valid_documents) {
  static const struct {
    const char *in, *out;
  } cases[] = {
      {"{}", "{}"},
      {"[]", "[]"},
      {" { } ", "{}"},
      {"[ ]", "[]"},
      {"null", "null"},
      {"true", "true"},
      {"false", "false"},
      {"\"s\"", "\"s\""},
      {"42", "42"},
      {"[[],{},[[]],{\"a\":{}}]", "[[],{},[[]],{\"a\":{}}]"},
      {"{\"a\":[1,2,{\"b\":null}],\"c\":true,\"d\":false,\"e\":\"x\"}",
       "{\"a\":[1,2,{\"b\":null}],\"c\":true,\"d\":false,\"e\":\"x\"}"},
      {"[1.5,-2,3e2,\"\\u00e9\"]", "[1.5,-2,300,\"\xC3\xA9\"]"},
      {"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":"
       "{\"name\":\"echo\",\"arguments\":{\"text\":\"hi\"}}}",
       "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":"
       "{\"name\":\"echo\",\"arguments\":{\"text\":\"hi\"}}}"},
  };
  for (size_t i = 0; i < TU_COUNT(cases); i++) {
    mcp__json_doc doc = parse_ok(cases[i].in);
    char *out = cJSON_PrintUnformatted(doc.root);
    ck_assert_ptr_nonnull(out);
    ck_assert_msg(strcmp(out, cases[i].out) == 0, "case %zu: %s", i, out);
    cJSON_free(out);
    mcp__json_doc_free(&doc);
  }

  /* The sibling links follow cJSON's conventions, so its functions work. */
  mcp__json_doc doc = parse_ok("{\"a\":1,\"b\":[10,20,30],\"c\":\"z\"}");
  ck_assert(cJSON_IsObject(doc.root));
  ck_assert_int_eq(cJSON_GetArraySize(doc.root), 3);
  const cJSON *b = cJSON_GetObjectItemCaseSensitive(doc.root, "b");
  ck_assert(cJSON_IsArray(b));
  ck_assert_int_eq(cJSON_GetArraySize(b), 3);
  ck_assert_int_eq(cJSON_GetArrayItem(b, 2)->valueint, 30);
  ck_assert_ptr_eq(b->child->prev, cJSON_GetArrayItem(b, 2));
  ck_assert_ptr_null(cJSON_GetArrayItem(b, 2)->next);
  for (const cJSON *el = doc.root->child; el; el = el->next)
    if (el != doc.root->child)
      ck_assert_ptr_eq(el->prev->next, el);
  for (const cJSON *el = b->child->next; el; el = el->next)
    ck_assert_ptr_eq(el->prev->next, el);
  ck_assert_ptr_eq(doc.root->child->prev,
                   cJSON_GetObjectItemCaseSensitive(doc.root, "c"));
  ck_assert_str_eq(cJSON_GetObjectItemCaseSensitive(doc.root, "c")->valuestring,
                   "z");
  ck_assert_ptr_null(doc.root->string);
  /* And the tree can be extended and duplicated with cJSON itself. */
  cJSON_AddItemToArray((cJSON *)b, cJSON_CreateNumber(40));
  ck_assert_int_eq(cJSON_GetArraySize(b), 4);
  cJSON *dup = cJSON_Duplicate(doc.root, 1);
  ck_assert_ptr_nonnull(dup);
  ck_assert(cJSON_Compare(dup, doc.root, 1));
  cJSON_Delete(dup);
  mcp__json_doc_free(&doc);

  /* Strings may contain anything valid, DEL and U+FFFF included. */
  doc = parse_ok("[\"\x7F\xEF\xBF\xBF \\u2028\"]");
  ck_assert_str_eq(doc.root->child->valuestring,
                   "\x7F\xEF\xBF\xBF \xE2\x80\xA8");
  mcp__json_doc_free(&doc);
}
END_TEST

/* ---- raw capture -------------------------------------------------------- */

START_TEST(raw_big_integer_id) {
  mcp__json_doc doc =
      parse_ok("{\"jsonrpc\":\"2.0\",\"id\":123456789012345678901234567890,"
               "\"method\":\"ping\"}");
  const cJSON *id = cJSON_GetObjectItemCaseSensitive(doc.root, "id");
  size_t len = 0;
  const char *raw = mcp__json_raw_text(&doc, id, &len);
  ck_assert_ptr_nonnull(raw);
  ck_assert_str_eq(raw, "123456789012345678901234567890");
  ck_assert_uint_eq(len, 30);
  ck_assert_uint_eq(doc.nraws, 1);
  ck_assert_ptr_null(mcp__json_raw_text(&doc, doc.root, &len));
  ck_assert_ptr_null(mcp__json_raw_text(&doc, NULL, &len));
  ck_assert_ptr_null(mcp__json_raw_text(NULL, id, &len));
  ck_assert_ptr_nonnull(mcp__json_raw_text(&doc, id, NULL));
  mcp__json_doc_free(&doc);

  doc = parse_ok("{\"id\":-1.50E+3}");
  id = doc.root->child;
  ck_assert_str_eq(mcp__json_raw_text(&doc, id, NULL), "-1.50E+3");
  mcp__json_doc_free(&doc);
}
END_TEST

START_TEST(raw_string_id) {
  mcp__json_doc doc =
      parse_ok("{\"method\":\"x\",\"id\":\"a\\u0062\\n\\\"\xC3\xA9\"}");
  const cJSON *id = cJSON_GetObjectItemCaseSensitive(doc.root, "id");
  ck_assert_str_eq(id->valuestring, "ab\n\"\xC3\xA9");
  size_t len = 0;
  const char *raw = mcp__json_raw_text(&doc, id, &len);
  ck_assert_ptr_nonnull(raw);
  ck_assert_str_eq(raw, "\"a\\u0062\\n\\\"\xC3\xA9\"");
  ck_assert_uint_eq(len, strlen(raw));
  mcp__json_doc_free(&doc);
}
END_TEST

START_TEST(raw_request_id_in_params) {
  mcp__json_doc doc =
      parse_ok("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\","
               "\"params\":{\"requestId\":  \"r-1\"  ,\"reason\":\"x\"}}");
  const cJSON *params = cJSON_GetObjectItemCaseSensitive(doc.root, "params");
  const cJSON *rid = cJSON_GetObjectItemCaseSensitive(params, "requestId");
  ck_assert_str_eq(mcp__json_raw_text(&doc, rid, NULL), "\"r-1\"");
  mcp__json_doc_free(&doc);

  doc = parse_ok("{\"params\":{\"requestId\":18446744073709551616}}");
  rid = doc.root->child->child;
  ck_assert_str_eq(mcp__json_raw_text(&doc, rid, NULL), "18446744073709551616");
  mcp__json_doc_free(&doc);
}
END_TEST

START_TEST(raw_batch_ids) {
  mcp__json_doc doc = parse_ok(
      "[{\"id\":1,\"method\":\"a\"},{\"id\":\"two\"},{\"id\":3.0},"
      "{\"method\":\"n\",\"params\":{\"requestId\":4}},{\"id\":5},{\"id\":6}]");
  ck_assert_uint_eq(doc.nraws, 6);
  static const char *const want[] = {"1", "\"two\"", "3.0", "4", "5", "6"};
  size_t i = 0;
  for (const cJSON *el = doc.root->child; el; el = el->next, i++) {
    const cJSON *id = cJSON_GetObjectItemCaseSensitive(el, "id");
    if (id == NULL)
      id = cJSON_GetObjectItemCaseSensitive(
          cJSON_GetObjectItemCaseSensitive(el, "params"), "requestId");
    ck_assert_ptr_nonnull(id);
    ck_assert_str_eq(mcp__json_raw_text(&doc, id, NULL), want[i]);
  }
  mcp__json_doc_free(&doc);
}
END_TEST

START_TEST(raw_not_captured) {
  static const char *const none[] = {
      "{\"a\":{\"b\":{\"c\":{\"id\":1}}}}", /* object depth 4 */
      "[[[{\"id\":1}]]]",                   /* depth 4 inside arrays */
      "{\"id\":null}",
      "{\"id\":true}",
      "{\"id\":{\"x\":1}}",
      "{\"id\":[1]}",
      "{\"ID\":1,\"Id\":2,\"requestid\":3,\"ids\":4,\"i\":5}",
      "[\"id\",1]",
      "{\"x\":\"id\"}",
  };
  for (size_t i = 0; i < TU_COUNT(none); i++) {
    mcp__json_doc doc = parse_ok(none[i]);
    ck_assert_msg(doc.nraws == 0, "case %zu captured", i);
    ck_assert_ptr_null(doc.more);
    mcp__json_doc_free(&doc);
  }
  /* Depth 3 is still captured; so is an escaped spelling of "id". */
  mcp__json_doc doc = parse_ok("{\"a\":{\"b\":{\"id\":7}}}");
  ck_assert_uint_eq(doc.nraws, 1);
  ck_assert_str_eq(mcp__json_raw_at(&doc, 0, NULL, NULL), "7");
  mcp__json_doc_free(&doc);
  doc = parse_ok("{\"\\u0069d\":\"q\"}");
  ck_assert_uint_eq(doc.nraws, 1);
  ck_assert_str_eq(mcp__json_raw_text(&doc, doc.root->child, NULL), "\"q\"");
  mcp__json_doc_free(&doc);
}
END_TEST

START_TEST(raw_cap) {
  size_t n = 5000;
  char *s = malloc(n * 16 + 2);
  ck_assert_ptr_nonnull(s);
  size_t o = 0;
  s[o++] = '[';
  for (size_t i = 0; i < n; i++)
    o += (size_t)sprintf(s + o, "%s{\"id\":%zu}", i ? "," : "", i);
  s[o++] = ']';
  s[o] = '\0';
  mcp__json_doc doc = parse_ok(s);
  ck_assert_uint_eq(doc.nraws, 4096);
  ck_assert_str_eq(mcp__json_raw_at(&doc, 4095, NULL, NULL), "4095");
  ck_assert_ptr_null(mcp__json_raw_at(&doc, 4096, NULL, NULL));
  mcp__json_doc_free(&doc);
  free(s);
}
END_TEST

/* Raw texts up to 39 bytes live in the capture, longer ones on the heap;
 * the first two captures live in the document, the rest in doc.more. */
START_TEST(raw_inline_and_heap) {
  char s39[40], s40[41];
  memset(s39, 'a', 37);
  s39[37] = '\0';
  memset(s40, 'b', 38);
  s40[38] = '\0';
  char json[512];
  snprintf(json, sizeof json,
           "[{\"id\":\"%s\"},{\"id\":\"%s\"},{\"id\":\"%s\"},{\"id\":\"%s\"},"
           "{\"params\":{\"requestId\":7}},{\"id\":-1.5e3}]",
           s39, s40, s40, s39);
  mcp__json_doc doc = parse_ok(json);
  ck_assert_uint_eq(doc.nraws, 6);
  ck_assert_ptr_nonnull(doc.more);
  static const size_t want_len[] = {39, 40, 40, 39, 1, 6};
  size_t i = 0;
  for (const cJSON *el = doc.root->child; el; el = el->next, i++) {
    const cJSON *id = cJSON_GetObjectItemCaseSensitive(el, "id");
    if (id == NULL)
      id = cJSON_GetObjectItemCaseSensitive(
          cJSON_GetObjectItemCaseSensitive(el, "params"), "requestId");
    const cJSON *node = NULL;
    size_t len = 0, len2 = 0;
    const char *text = mcp__json_raw_at(&doc, i, &node, &len);
    ck_assert_ptr_nonnull(text);
    ck_assert_ptr_eq(node, id);
    ck_assert_uint_eq(len, want_len[i]);
    ck_assert_uint_eq(strlen(text), len);
    ck_assert_ptr_eq(mcp__json_raw_text(&doc, id, &len2), text);
    ck_assert_uint_eq(len2, len);
    if (id->valuestring && cJSON_IsString(id)) {
      ck_assert_int_eq(text[0], '"');
      ck_assert_int_eq(memcmp(text + 1, id->valuestring, len - 2), 0);
    }
  }
  ck_assert_str_eq(mcp__json_raw_at(&doc, 5, NULL, NULL), "-1.5e3");
  ck_assert_ptr_null(mcp__json_raw_at(&doc, 6, NULL, NULL));
  ck_assert_ptr_null(mcp__json_raw_at(NULL, 0, NULL, NULL));
  /* A node that is not captured leaves *len alone. */
  size_t untouched = 12345;
  ck_assert_ptr_null(mcp__json_raw_text(&doc, doc.root, &untouched));
  ck_assert_uint_eq(untouched, 12345);
  mcp__json_doc_free(&doc);
  ck_assert_uint_eq(doc.nraws, 0);
  ck_assert_ptr_null(doc.more);
  ck_assert_ptr_null(doc.root);

  /* One or two captures need no array. */
  doc = parse_ok("[{\"id\":1},{\"id\":2}]");
  ck_assert_uint_eq(doc.nraws, 2);
  ck_assert_ptr_null(doc.more);
  ck_assert_str_eq(mcp__json_raw_at(&doc, 1, NULL, NULL), "2");
  mcp__json_doc_free(&doc);
}
END_TEST

/* Parses json (len bytes, limits lim) with allocation n failing, for
 * n = 1, 2, ... until a parse succeeds: each failed one must say
 * MCP_ENOMEM, leak nothing and leave *doc empty. Returns the n that
 * succeeded, its document in *doc and the counting allocator still in
 * place. */
static long parse_each_failing(const char *json, size_t len,
                               const mcp__json_limits *lim,
                               mcp__json_doc *doc) {
  for (long n = 1; n < 1000; n++) {
    tu_alloc_install(n);
    int rc = mcp__json_parse(json, len, lim, doc, errbuf, sizeof errbuf);
    if (rc == 0)
      return n;
    ck_assert_int_eq(rc, MCP_ENOMEM);
    tu_assert_no_leak(n);
    ck_assert_ptr_null(doc->root);
    ck_assert_ptr_null(doc->pool);
    ck_assert_ptr_null(doc->more);
    ck_assert_uint_eq(doc->nraws, 0);
  }
  ck_abort_msg("no parse succeeded");
  return 0;
}

/* Every allocation of a document with captures beyond the inline slots,
 * some too long to be kept inline, fails in turn without a leak. */
START_TEST(raw_allocation_failure) {
  static const char json[] =
      "[{\"id\":\"0123456789012345678901234567890123456789\"},{\"id\":2},"
      "{\"id\":3},{\"id\":\"4\"},{\"params\":{\"requestId\":"
      "\"0123456789012345678901234567890123456789xyz\"}},{\"id\":6},"
      "{\"id\":7},{\"id\":8},{\"id\":9},{\"id\":10},{\"id\":11}]";
  mcp__json_doc doc;
  parse_each_failing(json, sizeof json - 1, NULL, &doc);
  ck_assert_uint_eq(doc.nraws, 11);
  ck_assert_str_eq(mcp__json_raw_at(&doc, 4, NULL, NULL),
                   "\"0123456789012345678901234567890123456789xyz\"");
  ck_assert_str_eq(mcp__json_raw_at(&doc, 10, NULL, NULL), "11");
  mcp__json_doc_free(&doc);
  ck_assert_int_eq(tu_alloc.live, 0);
  tu_alloc_remove();
}
END_TEST

/* ---- allocations saved -------------------------------------------------- */

static const char echo_request[] =
    "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":{"
    "\"name\":\"echo\",\"arguments\":{\"text\":\"hello 7\"}}}";

/* A tools/call costs one allocation per node: common keys are static, a
 * leaf's text shares its node's block, the id is kept in the document. */
START_TEST(echo_request_allocations) {
  mcp__json_doc doc;
  /* A failure point never reached makes the allocator count. */
  tu_alloc_install(LONG_MAX);
  long before = tu_alloc.count;
  ck_assert_int_eq(mcp__json_parse(echo_request, sizeof echo_request - 1, NULL,
                                   &doc, errbuf, sizeof errbuf),
                   0);
  ck_assert_int_eq(tu_alloc.count - before, 8);
  ck_assert_int_eq(tu_alloc.live, 8);
  mcp__json_doc_free(&doc);
  ck_assert_int_eq(tu_alloc.live, 0);
  tu_alloc_remove();
}
END_TEST

/* Parsed as messages are, into a pool, the same request costs one
 * allocation, and freeing the document frees it. */
START_TEST(echo_request_pooled) {
  mcp__json_doc doc;
  tu_alloc_install(LONG_MAX);
  long before = tu_alloc.count;
  ck_assert_int_eq(mcp__json_parse(echo_request, sizeof echo_request - 1,
                                   &mcp__message_limits, &doc, errbuf,
                                   sizeof errbuf),
                   0);
  ck_assert_int_eq(tu_alloc.count - before, 1);
  ck_assert_ptr_nonnull(doc.pool);
  mcp__json_doc_free(&doc);
  ck_assert_int_eq(tu_alloc.live, 0);
  tu_alloc_remove();
}
END_TEST

/* A pooled tree is the same tree: same members, same texts, same flags a
 * reader may test, for documents that fill several blocks (a long string,
 * a long array, escaped keys that are copied, literals, deep nesting). */
START_TEST(pooled_tree_matches) {
  static char big[5000];
  memset(big, 'y', sizeof big - 1);
  char *arr = malloc(20000);
  ck_assert_ptr_nonnull(arr);
  size_t o = 0;
  arr[o++] = '[';
  for (int i = 0; i < 2000; i++)
    o += (size_t)snprintf(arr + o, 20000 - o, "%s%d", i ? "," : "", i);
  arr[o++] = ']';
  arr[o] = '\0';
  char *docs[] = {
      "{\"a\":true,\"b\":false,\"c\":null,\"d\":[1,2.5,-3e2,\"x\"],"
      "\"k\\u0065y\":{\"unusual key\":{\"\":[[[{}]]]}},\"id\":\"q\"}",
      big, arr};
  char *wrapped = malloc(sizeof big + 16);
  ck_assert_ptr_nonnull(wrapped);
  snprintf(wrapped, sizeof big + 16, "{\"text\":\"%s\"}", big);
  docs[1] = wrapped;
  for (size_t i = 0; i < TU_COUNT(docs); i++) {
    mcp__json_doc heap, pool;
    ck_assert_int_eq(mcp__json_parse(docs[i], strlen(docs[i]), NULL, &heap,
                                     errbuf, sizeof errbuf),
                     0);
    ck_assert_int_eq(mcp__json_parse(docs[i], strlen(docs[i]),
                                     &mcp__message_limits, &pool, errbuf,
                                     sizeof errbuf),
                     0);
    ck_assert_ptr_nonnull(pool.pool);
    ck_assert_ptr_null(heap.pool);
    ck_assert(cJSON_Compare(heap.root, pool.root, 1));
    char *a = cJSON_PrintUnformatted(heap.root);
    char *b = cJSON_PrintUnformatted(pool.root);
    ck_assert_str_eq(a, b);
    cJSON_free(a);
    cJSON_free(b);
    ck_assert_uint_eq(heap.nraws, pool.nraws);
    /* A copy of a pooled subtree is independent of the pool. */
    cJSON *copy = cJSON_Duplicate(pool.root, 1);
    mcp__json_doc_free(&pool);
    ck_assert(cJSON_Compare(heap.root, copy, 1));
    cJSON_Delete(copy);
    mcp__json_doc_free(&heap);
  }
  free(wrapped);
  free(arr);
}
END_TEST

/* A detached pooled subtree lives while a reference to its pool does. */
START_TEST(pool_outlives_document) {
  mcp__json_doc doc;
  ck_assert_int_eq(mcp__json_parse(echo_request, sizeof echo_request - 1,
                                   &mcp__message_limits, &doc, errbuf,
                                   sizeof errbuf),
                   0);
  cJSON *params = cJSON_GetObjectItemCaseSensitive(doc.root, "params");
  cJSON *args = cJSON_DetachItemFromObjectCaseSensitive(params, "arguments");
  ck_assert_ptr_nonnull(args);
  mcp__json_pool *pool = mcp__json_pool_ref(doc.pool);
  ck_assert_ptr_eq(pool, doc.pool);
  mcp__json_doc_free(&doc);
  ck_assert_str_eq(
      cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(args, "text")),
      "hello 7");
  mcp__json_pool_release(pool);
  mcp__json_pool_release(NULL);
  ck_assert_ptr_null(mcp__json_pool_ref(NULL));
}
END_TEST

/* Every allocation of a pooled parse that needs several blocks, and keeps
 * copied keys and long captures, fails in turn without a leak. */
START_TEST(pooled_allocation_failure) {
  static char json[4400];
  char pad[2049];
  memset(pad, 'p', sizeof pad - 1);
  pad[sizeof pad - 1] = '\0';
  snprintf(json, sizeof json,
           "{\"id\":\"0123456789012345678901234567890123456789\","
           "\"a\\u0062\":\"%s\",\"c\":[%s],\"d\":\"%s\"}",
           pad, "1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20", pad);
  mcp__json_doc doc;
  long n = parse_each_failing(json, strlen(json), &mcp__message_limits, &doc);
  ck_assert_int_gt(n, 3); /* several blocks and the long capture */
  mcp__json_doc_free(&doc);
  ck_assert_int_eq(tu_alloc.live, 0);
  tu_alloc_remove();
}
END_TEST

START_TEST(interned_keys) {
  static const char *const common[] = {
      "jsonrpc",
      "id",
      "method",
      "params",
      "result",
      "error",
      "name",
      "arguments",
      "_meta",
      "cursor",
      "uri",
      "progressToken",
      "requestId",
      "text",
      "type",
      "content",
      "properties",
      "additionalProperties",
      "$schema",
      "$comment",
      "required",
      "io.modelcontextprotocol/protocolVersion",
      "io.modelcontextprotocol/clientCapabilities"};
  for (size_t i = 0; i < TU_COUNT(common); i++) {
    size_t len = strlen(common[i]);
    const char *k = mcp__json_intern(common[i], len);
    ck_assert_msg(k != NULL, "%s is not interned", common[i]);
    ck_assert_str_eq(k, common[i]);
    ck_assert_ptr_eq(mcp__json_intern(common[i], len), k);
    /* The bytes need no terminator: a longer buffer cut at len. */
    char buf[64];
    memcpy(buf, common[i], len);
    memcpy(buf + len, "xyz", 4);
    ck_assert_ptr_eq(mcp__json_intern(buf, len), k);
    /* The parser compares eight bytes at a time where it may read them:
     * a key at the very end of the input has fewer after it. */
    for (int tail = 0; tail < 2; tail++) {
      char *json =
          tu_text("{\"%s\":1%s}", common[i], tail ? ",\"zzzzzzzzzzzz\":2" : "");
      mcp__json_doc d = parse_ok(json);
      ck_assert_ptr_eq(d.root->child->string, k);
      ck_assert(d.root->child->type & cJSON_StringIsConst);
      mcp__json_doc_free(&d);
      free(json);
    }
  }
  /* Keys that match a common one in length and in the bytes the table
   * hashes (first, middle, last) are not it, whether they differ within
   * the first eight bytes or after them. */
  static const char *const near[] = {"jxonrpc",
                                     "mxthod",
                                     "progressTaken",
                                     "propertixs",
                                     "additionalPrxperties",
                                     "io.modelcontextprotocol/protocXlVersion"};
  for (size_t i = 0; i < TU_COUNT(near); i++) {
    ck_assert_msg(mcp__json_intern(near[i], strlen(near[i])) == NULL,
                  "%s is interned", near[i]);
    char *json = tu_text("{\"%s\":1,\"zzzzzzzzzzzz\":2}", near[i]);
    mcp__json_doc d = parse_ok(json);
    ck_assert_str_eq(d.root->child->string, near[i]);
    ck_assert(!(d.root->child->type & cJSON_StringIsConst));
    mcp__json_doc_free(&d);
    free(json);
  }
  static const char *const rare[] = {"",
                                     "i",
                                     "Id",
                                     "ID",
                                     "idx",
                                     "jsonrpc ",
                                     "texts",
                                     "hello",
                                     "\xC3\xA9",
                                     "io.modelcontextprotocol/",
                                     "zzzzzzzzzzzzzzzzz",
                                     "argument\xC3\xA9"};
  for (size_t i = 0; i < TU_COUNT(rare); i++)
    ck_assert_msg(mcp__json_intern(rare[i], strlen(rare[i])) == NULL,
                  "%s is interned", rare[i]);

  /* Two parses share the static keys; other keys are copies of their own,
   * and so is an escaped spelling of a common key. */
  mcp__json_doc a = parse_ok("{\"jsonrpc\":\"2.0\",\"params\":{\"zzz\":1,"
                             "\"text\":\"t\"},\"\\u0069d\":1}");
  mcp__json_doc b = parse_ok("{\"jsonrpc\":\"2.0\",\"params\":{\"zzz\":1,"
                             "\"text\":\"t\"}}");
  const cJSON *ja = a.root->child, *jb = b.root->child;
  ck_assert_ptr_eq(ja->string, jb->string);
  ck_assert(ja->type & cJSON_StringIsConst);
  ck_assert(cJSON_IsString(ja));
  const cJSON *pa = cJSON_GetObjectItemCaseSensitive(a.root, "params");
  const cJSON *pb = cJSON_GetObjectItemCaseSensitive(b.root, "params");
  ck_assert_ptr_eq(pa->string, pb->string);
  ck_assert(cJSON_IsObject(pa));
  ck_assert_ptr_ne(pa->child->string, pb->child->string);
  ck_assert(!(pa->child->type & cJSON_StringIsConst));
  ck_assert_ptr_eq(pa->child->next->string, pb->child->next->string);
  const cJSON *id = cJSON_GetObjectItemCaseSensitive(a.root, "id");
  ck_assert_ptr_nonnull(id);
  ck_assert(!(id->type & cJSON_StringIsConst));
  ck_assert_ptr_ne(id->string, mcp__json_intern("id", 2));
  ck_assert_str_eq(mcp__json_raw_text(&a, id, NULL), "1");
  mcp__json_doc_free(&a);
  mcp__json_doc_free(&b);
}
END_TEST

/* Strings and numbers carry their text in their own block; every reader
 * of the tree sees ordinary nodes. */
START_TEST(leaf_nodes) {
  mcp__json_doc doc =
      parse_ok("{\"s\":\"caf\\u00e9\",\"e\":\"\",\"n\":-12.50e1,"
               "\"big\":123456789012345678901234567890,\"t\":true}");
  const cJSON *s = cJSON_GetObjectItemCaseSensitive(doc.root, "s");
  const cJSON *e = cJSON_GetObjectItemCaseSensitive(doc.root, "e");
  const cJSON *n = cJSON_GetObjectItemCaseSensitive(doc.root, "n");
  const cJSON *big = cJSON_GetObjectItemCaseSensitive(doc.root, "big");
  ck_assert(cJSON_IsString(s) && cJSON_IsString(e));
  ck_assert_str_eq(cJSON_GetStringValue(s), "caf\xC3\xA9");
  ck_assert_str_eq(e->valuestring, "");
  ck_assert(cJSON_IsNumber(n) && cJSON_IsNumber(big));
  ck_assert_str_eq(mcp__json_number_text(n), "-12.50e1");
  ck_assert(n->valuedouble == -125.0);
  ck_assert_str_eq(mcp__json_number_text(big),
                   "123456789012345678901234567890");
  /* The library's own writer and cJSON's printer read them alike. */
  mcp__buf b = {0};
  ck_assert_int_eq(mcp__json_write(&b, doc.root), 0);
  ck_assert_str_eq(mcp__buf_str(&b),
                   "{\"s\":\"caf\xC3\xA9\",\"e\":\"\",\"n\":-12.50e1,"
                   "\"big\":123456789012345678901234567890,\"t\":true}");
  mcp__buf_free(&b);
  char *printed = cJSON_PrintUnformatted(doc.root);
  ck_assert_ptr_nonnull(printed);
  ck_assert_ptr_nonnull(strstr(printed, "\"s\":\"caf\xC3\xA9\""));
  cJSON_free(printed);
  /* A parsed string is read-only, as the header says. */
  ck_assert_ptr_null(cJSON_SetValuestring((cJSON *)s, "x"));
  ck_assert_str_eq(s->valuestring, "caf\xC3\xA9");
  mcp__json_doc_free(&doc);
}
END_TEST

/* Number text is kept whole at every length, around every threshold a
 * shortcut might use (15 and 17 digits, 2^53, int64). */
START_TEST(number_text_boundaries) {
  static const char *const texts[] = {
      "0",
      "-0",
      "7",
      "-7",
      "999999999999999",
      "-999999999999999",
      "1000000000000000",
      "9007199254740992",
      "9007199254740993",
      "-9007199254740993",
      "99999999999999999",
      "9223372036854775807",
      "-9223372036854775808",
      "9223372036854775808",
      "18446744073709551616",
      "1.0",
      "1e2",
      "0.000001",
      "1E+400",
      "123456789012345678901234567890123456789012345678901234567890123"};
  for (size_t i = 0; i < TU_COUNT(texts); i++) {
    char json[128];
    snprintf(json, sizeof json, "[%s]", texts[i]);
    mcp__json_doc doc = parse_ok(json);
    const cJSON *n = doc.root->child;
    ck_assert_str_eq(mcp__json_number_text(n), texts[i]);
    mcp__buf b = {0};
    mcp__json_write(&b, doc.root);
    ck_assert_str_eq(mcp__buf_str(&b), json);
    mcp__buf_free(&b);
    /* A duplicate keeps the exact text too, in a block of its own. */
    cJSON *dup = cJSON_Duplicate(n, 0);
    mcp__json_doc_free(&doc);
    ck_assert_ptr_nonnull(dup);
    ck_assert_str_eq(mcp__json_number_text(dup), texts[i]);
    cJSON_Delete(dup);
  }
}
END_TEST

/* A member with an interned key detached from its tree, the tree freed,
 * and the member put in other trees (as the engine does with
 * "arguments"), renamed, replaced and deleted: nothing leaks, nothing is
 * freed twice (ASan and valgrind runs check). */
START_TEST(interned_key_moved) {
  tu_alloc_install(0);
  mcp__json_doc doc =
      parse_ok("{\"params\":{\"name\":\"n\",\"arguments\":{\"text\":\"hi\","
               "\"type\":7,\"zzz\":\"z\"},\"_meta\":{\"progressToken\":1}}}");
  cJSON *params = cJSON_GetObjectItemCaseSensitive(doc.root, "params");
  cJSON *args = cJSON_GetObjectItemCaseSensitive(params, "arguments");
  cJSON *meta = cJSON_GetObjectItemCaseSensitive(params, "_meta");
  cJSON_DetachItemViaPointer(params, args);
  cJSON_DetachItemViaPointer(params, meta);
  mcp__json_doc_free(&doc);
  ck_assert_str_eq(args->string, "arguments");
  ck_assert_str_eq(cJSON_GetObjectItemCaseSensitive(args, "text")->valuestring,
                   "hi");

  /* Into another object under a new, copied key... */
  cJSON *other = cJSON_CreateObject();
  ck_assert(cJSON_AddItemToObject(other, "args", args));
  ck_assert_str_eq(args->string, "args");
  ck_assert(!(args->type & cJSON_StringIsConst));
  /* ...or keeping its static key in an array. */
  cJSON *list = cJSON_CreateArray();
  ck_assert(cJSON_AddItemToArray(list, meta));
  ck_assert_str_eq(meta->string, "_meta");
  /* Members of the moved object are replaced and deleted. */
  ck_assert(cJSON_ReplaceItemInObjectCaseSensitive(args, "text",
                                                   cJSON_CreateString("new")));
  ck_assert_str_eq(cJSON_GetObjectItemCaseSensitive(args, "text")->valuestring,
                   "new");
  cJSON_DeleteItemFromObjectCaseSensitive(args, "type");
  cJSON *zzz = cJSON_DetachItemFromObjectCaseSensitive(args, "zzz");
  cJSON *text = cJSON_GetObjectItemCaseSensitive(args, "text");
  cJSON *copy = cJSON_Duplicate(zzz, 1);
  ck_assert_str_eq(copy->string, "zzz");
  ck_assert(cJSON_ReplaceItemViaPointer(args, text, copy));
  cJSON_Delete(zzz);
  ck_assert_str_eq(cJSON_GetObjectItemCaseSensitive(args, "zzz")->valuestring,
                   "z");

  /* A parsed member with an interned key replaces one in another tree. */
  doc = parse_ok("{\"name\":\"echo\"}");
  cJSON *name = doc.root->child;
  cJSON_DetachItemViaPointer(doc.root, name);
  mcp__json_doc_free(&doc);
  cJSON_AddItemToObject(other, "name", cJSON_CreateNull());
  ck_assert(cJSON_ReplaceItemInObjectCaseSensitive(other, "name", name));
  ck_assert_str_eq(cJSON_GetObjectItemCaseSensitive(other, "name")->valuestring,
                   "echo");

  cJSON_Delete(other);
  cJSON_Delete(list);
  ck_assert_int_eq(tu_alloc.live, 0);
  tu_alloc_remove();
}
END_TEST

/* A deep copy of a parsed tree outlives it: it shares only the static
 * keys, owns every other text, and compares and writes the same. */
START_TEST(duplicate_tree) {
  tu_alloc_install(0);
  mcp__json_doc doc = parse_ok(
      "{\"jsonrpc\":\"2.0\",\"id\":9007199254740993,\"method\":\"tools/call\","
      "\"params\":{\"name\":\"echo\",\"arguments\":{\"text\":\"h\\u00e9\","
      "\"zzz\":[1.50,\"x\",null,{\"type\":false}]}}}");
  mcp__buf want = {0};
  mcp__json_write(&want, doc.root);
  cJSON *dup = cJSON_Duplicate(doc.root, 1);
  ck_assert_ptr_nonnull(dup);
  ck_assert(cJSON_Compare(dup, doc.root, 1));
  cJSON *again = cJSON_Duplicate(dup, 1);
  mcp__json_doc_free(&doc);
  ck_assert_ptr_nonnull(again);

  const cJSON *jsonrpc = cJSON_GetObjectItemCaseSensitive(dup, "jsonrpc");
  ck_assert_ptr_eq(jsonrpc->string, mcp__json_intern("jsonrpc", 7));
  ck_assert(!(jsonrpc->type & cJSON_IsReference));
  ck_assert_str_eq(
      mcp__json_number_text(cJSON_GetObjectItemCaseSensitive(dup, "id")),
      "9007199254740993");
  mcp__buf got = {0};
  mcp__json_write(&got, dup);
  ck_assert_str_eq(mcp__buf_str(&got), mcp__buf_str(&want));
  mcp__buf_free(&got);
  ck_assert(cJSON_Compare(dup, again, 1));
  cJSON_Delete(dup);
  mcp__json_write(&got, again);
  ck_assert_str_eq(mcp__buf_str(&got), mcp__buf_str(&want));
  mcp__buf_free(&got);
  cJSON_Delete(again);
  mcp__buf_free(&want);
  ck_assert_int_eq(tu_alloc.live, 0);
  tu_alloc_remove();
}
END_TEST

/* ---- error messages and arguments ------------------------------------- */

START_TEST(error_messages) {
  ck_assert_int_eq(parse("{\"k\\n\xC3\xA9\\\"\":1,\"k\\n\xC3\xA9\\\"\":2}"),
                   MCP_EPARSE);
  ck_assert_str_eq(errbuf, "duplicate key \"k\\x0A\\xC3\\xA9\\\"\" at byte 13");

  /* A long key is cut. */
  char doc[420];
  char key[200];
  memset(key, 'x', 150);
  key[150] = '\0';
  snprintf(doc, sizeof doc, "{\"%s\":1,\"%s\":2}", key, key);
  ck_assert_int_eq(parse(doc), MCP_EPARSE);
  ck_assert_msg(strlen(errbuf) < 100, "long message: %s", errbuf);
  ck_assert_ptr_nonnull(strstr(errbuf, "...\" at byte 156"));

  /* Small and absent message buffers. */
  mcp__json_doc d;
  char tiny[8];
  memset(tiny, 'z', sizeof tiny);
  ck_assert_int_eq(mcp__json_parse("[1,", 3, NULL, &d, tiny, sizeof tiny),
                   MCP_EPARSE);
  ck_assert_uint_eq(strlen(tiny), 7);
  ck_assert_int_eq(mcp__json_parse("[1,", 3, NULL, &d, NULL, 0), MCP_EPARSE);
  ck_assert_int_eq(mcp__json_parse("[1]", 3, NULL, &d, NULL, 0), 0);
  mcp__json_doc_free(&d);
  ck_assert_int_eq(mcp__json_parse("[1]", 3, NULL, NULL, NULL, 0), MCP_EINVAL);

  /* A failed parse leaves the doc empty whatever it held. */
  memset(&d, 0x5A, sizeof d);
  ck_assert_int_eq(mcp__json_parse("[1,", 3, NULL, &d, NULL, 0), MCP_EPARSE);
  ck_assert_ptr_null(d.root);
  ck_assert_ptr_null(d.more);
  ck_assert_uint_eq(d.nraws, 0);
  mcp__json_doc_free(&d);
  mcp__json_doc_free(NULL);

  ck_assert_int_eq(parse("[1,]"), MCP_EPARSE);
  ck_assert_str_eq(errbuf, "expected a value, found ']' at byte 3");
  ck_assert_int_eq(parse("{\"a\":1"), MCP_EPARSE);
  ck_assert_str_eq(errbuf, "unexpected end of input at byte 6");
  ck_assert_int_eq(parse("\"\\uD800\""), MCP_EPARSE);
  ck_assert_str_eq(errbuf, "unpaired high surrogate at byte 1");
}
END_TEST

/* ---- quoting ------------------------------------------------------------ */

static char *quoted(const char *s, size_t len) {
  mcp__buf b = {0};
  ck_assert_int_eq(mcp__json_quote(&b, s, len), 0);
  return mcp__buf_take(&b, NULL);
}

START_TEST(quote) {
  static const struct {
    const char *in, *out;
  } cases[] = {
      {"", "\"\""},
      {"plain", "\"plain\""},
      {"a\"b\\c", "\"a\\\"b\\\\c\""},
      {"/", "\"/\""},
      {"\b\f\n\r\t", "\"\\b\\f\\n\\r\\t\""},
      {"\x01\x1f", "\"\\u0001\\u001f\""},
      {"\x7F", "\"\x7F\""},
      {"caf\xC3\xA9 \xF0\x9F\x98\x80", "\"caf\xC3\xA9 \xF0\x9F\x98\x80\""},
      {"\xE2\x80\xA8", "\"\xE2\x80\xA8\""},
  };
  for (size_t i = 0; i < TU_COUNT(cases); i++) {
    char *q = quoted(cases[i].in, strlen(cases[i].in));
    ck_assert_msg(strcmp(q, cases[i].out) == 0, "case %zu: %s", i, q);
    mcp_free(q);
  }
  /* A NUL byte is escaped, not dropped. */
  char *q = quoted("a\0b", 3);
  ck_assert_str_eq(q, "\"a\\u0000b\"");
  mcp_free(q);

  /* Appends to what the buffer holds. */
  mcp__buf b = {0};
  mcp__buf_puts(&b, "x=");
  mcp__json_quote(&b, "y", 1);
  ck_assert_str_eq(mcp__buf_str(&b), "x=\"y\"");
  mcp__buf_free(&b);

  /* Round trip: every byte 0x01..0x7F plus some UTF-8 survives. */
  char all[200];
  size_t n = 0;
  for (int c = 1; c < 0x80; c++)
    all[n++] = (char)c;
  memcpy(all + n, "\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80", 9);
  n += 9;
  q = quoted(all, n);
  mcp__json_doc doc;
  ck_assert_int_eq(
      mcp__json_parse(q, strlen(q), NULL, &doc, errbuf, sizeof errbuf), 0);
  ck_assert(cJSON_IsString(doc.root));
  ck_assert_uint_eq(strlen(doc.root->valuestring), n);
  ck_assert_mem_eq(doc.root->valuestring, all, n);
  mcp__json_doc_free(&doc);
  mcp_free(q);
}
END_TEST

/* Every byte at every position of a run longer than the eight bytes the
 * scanners take at once: each lane of a word and the tail after it. */
START_TEST(quote_each_byte_everywhere) {
  for (int c = 0; c < 256; c++) {
    /* What JSON escapes: a quote and a backslash by themselves, five
     * controls by a letter, the other controls as \u00XX. */
    static const char named[] = "\b\f\n\r\t";
    const char *letter = c ? strchr(named, c) : NULL;
    char esc[8];
    if (c == '"' || c == '\\')
      snprintf(esc, sizeof esc, "\\%c", c);
    else if (letter)
      snprintf(esc, sizeof esc, "\\%c", "bfnrt"[letter - named]);
    else if (c < 0x20)
      snprintf(esc, sizeof esc, "\\u%04x", (unsigned)c);
    else
      snprintf(esc, sizeof esc, "%c", c);
    for (size_t pos = 0; pos < 20; pos++) {
      char in[20];
      memset(in, 'a', sizeof in);
      in[pos] = (char)c;
      char *want = tu_text("\"%.*s%s%.*s\"", (int)pos, in, esc,
                           (int)(sizeof in - pos - 1), in + pos + 1);
      char *q = quoted(in, sizeof in);
      ck_assert_msg(strcmp(q, want) == 0, "byte 0x%02X at %zu: %s", c, pos, q);
      mcp_free(q);
      free(want);
      /* UTF-8: a zero byte or a lone byte above 0x7F is invalid wherever
       * it stands; a whole two-byte sequence is fine. */
      ck_assert_int_eq(mcp__utf8_valid(in, sizeof in), c > 0 && c < 0x80);
      char two[21];
      memset(two, 'a', sizeof two);
      memcpy(two + pos, "\xC3\xA9", 2);
      ck_assert(mcp__utf8_valid(two, sizeof two));
      two[pos + 1] = 'a'; /* the lead byte alone */
      ck_assert(!mcp__utf8_valid(two, sizeof two));
    }
  }
}
END_TEST

/* ---- allocation failure ------------------------------------------------- */

/* Exercises every allocation site: nodes of each kind, keys, escaped and
 * plain strings, slow-path numbers, more than four raw ids, a key stack and a
 * frame stack beyond their inline sizes. */
static char *complex_document(void) {
  mcp__buf b = {0};
  mcp__buf_puts(&b, "[{\"jsonrpc\":\"2.0\",\"id\":\"a\\u00e9\\ud83d\\ude00\","
                    "\"method\":\"tools/call\",\"params\":{\"name\":\"x\","
                    "\"arguments\":{\"n\":[1,-2.5,1e300,0.1e-30,true,false,"
                    "null,{},[]],\"s\":\"caf\xC3\xA9\\n\"}}}");
  for (int i = 0; i < 6; i++)
    mcp__buf_printf(&b, ",{\"id\":%d,\"params\":{\"requestId\":%d}}", i, i);
  /* A raw id too long to be kept inline. */
  mcp__buf_puts(&b, ",{\"id\":\"0123456789abcdef0123456789abcdef0123456789\"}");
  mcp__buf_puts(&b, ",{");
  for (int i = 0; i < 70; i++)
    mcp__buf_printf(&b, "%s\"key%d\":%d", i ? "," : "", i, i);
  mcp__buf_puts(&b, "},");
  for (int i = 0; i < 80; i++)
    mcp__buf_putc(&b, '[');
  for (int i = 0; i < 80; i++)
    mcp__buf_putc(&b, ']');
  mcp__buf_putc(&b, ']');
  return mcp__buf_take(&b, NULL);
}

/* Numbers an application builds (not parsed, so no text is kept) are
 * written exactly, whatever their magnitude: converting a double beyond
 * long long's range used to be undefined behaviour (found by fuzz_engine;
 * UBSan builds abort on it). */
START_TEST(write_built_numbers) {
  static const struct {
    double d;
    const char *want;
  } cases[] = {{0, "0"},
               {-7, "-7"},
               {1e14, "100000000000000"},
               {0.5, "0.5"},
               {1e15, "1e+15"},
               {3e300, "3e+300"},
               {-1.7976931348623157e308, "-1.7976931348623157e+308"},
               {9223372036854775808.0, "9.2233720368547758e+18"}};
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    cJSON *n = cJSON_CreateNumber(cases[i].d);
    mcp__buf b = {0};
    ck_assert_int_eq(mcp__json_write(&b, n), 0);
    ck_assert_str_eq(mcp__buf_str(&b), cases[i].want);
    /* It reads back as the same double. */
    ck_assert(strtod(b.data, NULL) == cases[i].d);
    mcp__buf_free(&b);
    cJSON_Delete(n);
  }
}
END_TEST

/* The public allocators transports use: through the hook, size 0 still a
 * block, calloc's count * size checked for overflow. */
START_TEST(public_allocators) {
  ck_assert_ptr_null(mcp_calloc(SIZE_MAX / 2, 4));
  ck_assert_ptr_null(mcp_calloc(4, SIZE_MAX / 2));
  char *p = mcp_calloc(3, 5);
  ck_assert_ptr_nonnull(p);
  for (int i = 0; i < 15; i++)
    ck_assert_int_eq(p[i], 0);
  char *q = mcp_realloc(p, 4096);
  ck_assert_ptr_nonnull(q);
  void *z = mcp_malloc(0);
  ck_assert_ptr_nonnull(z);
  mcp_free(z);
  mcp_free(q);
  mcp_free(NULL);
  tu_alloc_install(1);
  ck_assert_ptr_null(mcp_malloc(8));
  ck_assert_int_eq(tu_alloc.live, 0);
  tu_alloc_remove();
}
END_TEST

START_TEST(allocation_failure) {
  char *text = complex_document();
  ck_assert_ptr_nonnull(text);
  size_t len = strlen(text);
  char *copy = malloc(len + 1);
  ck_assert_ptr_nonnull(copy);
  memcpy(copy, text, len + 1);
  mcp_free(text);

  mcp__json_limits lim = {.max_depth = 100};
  mcp__json_doc doc;
  int rc = -1;
  long n;
  for (n = 1; n < 100000; n++) {
    tu_alloc_install(n);
    rc = mcp__json_parse(copy, len, &lim, &doc, errbuf, sizeof errbuf);
    if (rc == 0)
      break;
    ck_assert_msg(rc == MCP_ENOMEM, "allocation %ld: rc %d (%s)", n, rc,
                  errbuf);
    tu_assert_no_leak(n);
    ck_assert_ptr_null(doc.root);
    ck_assert_ptr_null(doc.more);
    ck_assert_uint_eq(doc.nraws, 0);
    ck_assert_ptr_nonnull(strstr(errbuf, "out of memory"));
  }
  ck_assert_int_eq(rc, 0);
  ck_assert_msg(n > 100, "only %ld allocations", n);
  ck_assert_uint_eq(doc.nraws, 14);
  ck_assert_str_eq(mcp__json_raw_at(&doc, 13, NULL, NULL),
                   "\"0123456789abcdef0123456789abcdef0123456789\"");
  mcp__json_doc_free(&doc);
  ck_assert_int_eq(tu_alloc.live, 0);

  /* Quoting reports a failed buffer. */
  tu_alloc_install(1);
  mcp__buf b = {0};
  ck_assert_int_eq(mcp__json_quote(&b, "abc\n", 4), MCP_ENOMEM);
  mcp__buf_free(&b);
  ck_assert_int_eq(tu_alloc.live, 0);

  tu_alloc_remove();
  free(copy);
}
END_TEST

/* ---- suite -------------------------------------------------------------- */

static Suite *json_suite(void) {
  Suite *s = suite_create("json");
  TCase *t = tcase_create("reject");
  tcase_add_test(t, empty_input);
  tcase_add_test(t, trailing_garbage);
  tcase_add_test(t, structure_errors);
  tcase_add_test(t, whitespace);
  tcase_add_test(t, depth_10000);
  tcase_add_test(t, depth_64_vs_65);
  tcase_add_test(t, duplicate_keys);
  tcase_add_test(t, duplicate_keys_large_object);
  tcase_add_test(t, invalid_utf8);
  tcase_add_test(t, raw_controls);
  tcase_add_test(t, bad_escapes);
  tcase_add_test(t, lone_surrogates);
  tcase_add_test(t, nul_escape);
  tcase_add_test(t, number_grammar);
  tcase_add_test(t, limits);
  tcase_add_test(t, error_messages);
  suite_add_tcase(s, t);

  t = tcase_create("accept");
  tcase_add_test(t, valid_documents);
  tcase_add_test(t, unicode_escapes_decode);
  tcase_add_test(t, number_values);
  tcase_add_test(t, number_locale);
  tcase_add_test(t, number_text_and_integer);
  tcase_add_test(t, member_lookup);
  tcase_add_test(t, quote);
  tcase_add_test(t, quote_each_byte_everywhere);
  tcase_add_test(t, write_built_numbers);
  tcase_add_test(t, public_allocators);
  suite_add_tcase(s, t);

  t = tcase_create("raw");
  tcase_add_test(t, raw_big_integer_id);
  tcase_add_test(t, raw_string_id);
  tcase_add_test(t, raw_request_id_in_params);
  tcase_add_test(t, raw_batch_ids);
  tcase_add_test(t, raw_not_captured);
  tcase_add_test(t, raw_cap);
  tcase_add_test(t, raw_inline_and_heap);
  tcase_add_test(t, raw_allocation_failure);
  suite_add_tcase(s, t);

  t = tcase_create("saving");
  tcase_add_test(t, echo_request_allocations);
  tcase_add_test(t, echo_request_pooled);
  tcase_add_test(t, pooled_tree_matches);
  tcase_add_test(t, pool_outlives_document);
  tcase_add_test(t, pooled_allocation_failure);
  tcase_add_test(t, interned_keys);
  tcase_add_test(t, leaf_nodes);
  tcase_add_test(t, number_text_boundaries);
  tcase_add_test(t, interned_key_moved);
  tcase_add_test(t, duplicate_tree);
  suite_add_tcase(s, t);

  /* Large inputs run long under valgrind. */
  t = tcase_create("heavy");
  tcase_set_timeout(t, 120);
  tcase_add_test(t, default_limits);
  tcase_add_test(t, allocation_failure);
  suite_add_tcase(s, t);
  return s;
}

int main(void) { return tu_run(json_suite()); }
