/* Tests for lib/registry/uritemplate.c: what compiles and every rule that
 * refuses a template (with its offset), every operator read backwards, percent
 * decoding, the path-traversal refusals, URIs that are not UTF-8, URIs that
 * do not match, megabyte URIs (the match must stay linear), and allocation
 * failure at every allocation. */
#include <check.h>
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "testutil.h"
#include "uritemplate.h"

/* ---- helpers ------------------------------------------------------------- */

static mcp__uritemplate *compile_ok_at(int line, const char *tmpl) {
  mcp__uritemplate *t = NULL;
  char err[200] = "";
  int rc = mcp__uritemplate_compile(tmpl, &t, err, sizeof err);
  ck_assert_msg(rc == 0, "line %d: \"%s\" refused: %d (%s)", line, tmpl, rc,
                err);
  ck_assert_ptr_nonnull(t);
  return t;
}
#define compile_ok(tmpl) compile_ok_at(__LINE__, (tmpl))

/* Compiling tmpl must fail with MCP_EINVAL, leave the output alone, and
 * name fragment and byte offset at. */
static void expect_refused_at(int line, const char *tmpl, const char *fragment,
                              size_t at) {
  mcp__uritemplate *t = (mcp__uritemplate *)&t;
  char err[200] = "";
  int rc = mcp__uritemplate_compile(tmpl, &t, err, sizeof err);
  ck_assert_msg(rc == MCP_EINVAL, "line %d: \"%s\" gave %d, want MCP_EINVAL",
                line, tmpl, rc);
  ck_assert_msg(t == (mcp__uritemplate *)&t, "line %d: output touched", line);
  ck_assert_msg(strstr(err, fragment) != NULL,
                "line %d: message lacks \"%s\": %s", line, fragment, err);
  char where[64];
  snprintf(where, sizeof where, "(at byte %zu of the template)", at);
  ck_assert_msg(strstr(err, where) != NULL, "line %d: message lacks \"%s\": %s",
                line, where, err);
}
#define expect_refused(tmpl, fragment, at)                                     \
  expect_refused_at(__LINE__, (tmpl), (fragment), (at))

/* uri must match t with exactly the variables of expected (JSON text). */
static void expect_match_t(int line, const mcp__uritemplate *t, const char *uri,
                           const char *expected) {
  cJSON *vars = NULL;
  int rc = mcp__uritemplate_match(t, uri, &vars);
  ck_assert_msg(rc == 0, "line %d: \"%s\" did not match: %d", line, uri, rc);
  ck_assert_ptr_nonnull(vars);
  tu_assert_exact_at(__FILE__, line, vars, expected);
  cJSON_Delete(vars);
}

static void expect_match_at(int line, const char *tmpl, const char *uri,
                            const char *expected) {
  mcp__uritemplate *t = compile_ok_at(line, tmpl);
  expect_match_t(line, t, uri, expected);
  mcp__uritemplate_free(t);
}
#define expect_match(tmpl, uri, expected)                                      \
  expect_match_at(__LINE__, (tmpl), (uri), (expected))

/* uri must not match t, and *vars must stay untouched. */
static void expect_nomatch_t(int line, const mcp__uritemplate *t,
                             const char *uri) {
  cJSON *vars = (cJSON *)&vars;
  int rc = mcp__uritemplate_match(t, uri, &vars);
  ck_assert_msg(rc == MCP_ENOENT, "line %d: \"%s\" gave %d, want MCP_ENOENT",
                line, uri, rc);
  ck_assert_msg(vars == (cJSON *)&vars, "line %d: output touched", line);
}

static void expect_nomatch_at(int line, const char *tmpl, const char *uri) {
  mcp__uritemplate *t = compile_ok_at(line, tmpl);
  expect_nomatch_t(line, t, uri);
  mcp__uritemplate_free(t);
}
#define expect_nomatch(tmpl, uri) expect_nomatch_at(__LINE__, (tmpl), (uri))

/* A string of n copies of unit (n * strlen(unit) bytes), with prefix and
 * suffix around it. Caller frees. */
static char *repeat(const char *prefix, const char *unit, size_t n,
                    const char *suffix) {
  size_t lp = strlen(prefix), lu = strlen(unit), ls = strlen(suffix);
  char *s = malloc(lp + n * lu + ls + 1);
  ck_assert_ptr_nonnull(s);
  memcpy(s, prefix, lp);
  for (size_t i = 0; i < n; i++)
    memcpy(s + lp + i * lu, unit, lu);
  memcpy(s + lp + n * lu, suffix, ls + 1);
  return s;
}

/* ---- compiling ----------------------------------------------------------- */

START_TEST(compile_accepts_level4) {
  static const char *const ok[] = {
      "",
      "file:///notes/readme.md",
      "test://template/{id}/data",
      "file:///{+path}",
      "doc://x{#frag}",
      "file:///f{.ext}",
      "repo://r{/owner,name}",
      "m:{;x,y}",
      "s://search{?q,lang}",
      "s://x?fixed=1{&a,b}",
      "p:{a:3}{/b*}{?c:9999,d*}",
      "v:{a.b_c,A9,%41%2e}",
      "w://{city}{?units}",
      "file:///{+path}{?v}{#f}",
      "x:{a}{/b}",
      "x:{a}{#f}",
      "x:{/p}{?q}",
      "x:{+a}{.b}",
      "x:{#a}{;b}",
      "x:{?a}{?b}",
      "x:{a}{?q}{#f}",
      "x:{;a}{/b}",
      "x:{?a*,b*}",
      "caf\xc3\xa9://{x}/\xe2\x82\xac!$&()*+,;=:@[]~-._%20",
  };
  for (size_t i = 0; i < TU_COUNT(ok); i++) {
    mcp__uritemplate *t = compile_ok(ok[i]);
    mcp__uritemplate_free(t);
  }
}
END_TEST

START_TEST(compile_accessors) {
  mcp__uritemplate *t = compile_ok("x:{a}/{+b.c}{?d:3,e*}");
  ck_assert_uint_eq(mcp__uritemplate_nvars(t), 4);
  ck_assert_str_eq(mcp__uritemplate_var(t, 0), "a");
  ck_assert_str_eq(mcp__uritemplate_var(t, 1), "b.c");
  ck_assert_str_eq(mcp__uritemplate_var(t, 2), "d");
  ck_assert_str_eq(mcp__uritemplate_var(t, 3), "e");
  ck_assert_ptr_null(mcp__uritemplate_var(t, 4));
  ck_assert(mcp__uritemplate_has_var(t, "b.c"));
  ck_assert(mcp__uritemplate_has_var(t, "e"));
  ck_assert(!mcp__uritemplate_has_var(t, "b"));
  ck_assert(!mcp__uritemplate_has_var(t, "d:3"));
  ck_assert(!mcp__uritemplate_has_var(t, NULL));
  mcp__uritemplate_free(t);

  t = compile_ok("file:///x");
  ck_assert_uint_eq(mcp__uritemplate_nvars(t), 0);
  ck_assert_ptr_null(mcp__uritemplate_var(t, 0));
  mcp__uritemplate_free(t);

  ck_assert_uint_eq(mcp__uritemplate_nvars(NULL), 0);
  ck_assert_ptr_null(mcp__uritemplate_var(NULL, 0));
  ck_assert(!mcp__uritemplate_has_var(NULL, "a"));
  mcp__uritemplate_free(NULL);
}
END_TEST

START_TEST(compile_copies_template) {
  char text[] = "x:{name}";
  mcp__uritemplate *t = compile_ok(text);
  memset(text, 'z', sizeof text - 1);
  ck_assert_str_eq(mcp__uritemplate_var(t, 0), "name");
  expect_match_t(__LINE__, t, "x:n", "{\"name\":\"n\"}");
  mcp__uritemplate_free(t);
}
END_TEST

START_TEST(compile_braces) {
  expect_refused("{a", "a \"{\" without \"}\"", 0);
  expect_refused("x:{", "a \"{\" without \"}\"", 2);
  expect_refused("x:{a,", "a \"{\" without \"}\"", 2);
  expect_refused("x:{+", "a \"{\" without \"}\"", 2);
  expect_refused("a}", "a \"}\" without \"{\"", 1);
  expect_refused("{a}}", "a \"}\" without \"{\"", 3);
  expect_refused("x{a{b}}", "a \"{\" inside an expression", 3);
}
END_TEST

START_TEST(compile_names) {
  expect_refused("{}", "an empty variable name", 1);
  expect_refused("x{a,}", "an empty variable name", 4);
  expect_refused("x{a,,b}", "an empty variable name", 4);
  expect_refused("x{?}", "an empty variable name", 3);
  expect_refused("{a-b}", "not allowed in a variable name", 2);
  expect_refused("{a b}", "not allowed in a variable name", 2);
  expect_refused("{\xc3\xa9}", "not allowed in a variable name", 1);
  expect_refused("{/a.}", "a \".\" not between", 3);
  expect_refused("{a..b}", "a \".\" not between", 2);
  expect_refused("{..a}", "a \".\" not between", 2);
  expect_refused("{a%2}", "a \"%\" not followed by two hexadecimal", 2);
  expect_refused("{%zz}", "a \"%\" not followed by two hexadecimal", 1);
  expect_refused("x{a}/{a}", "the variable \"a\" appears twice", 6);
  expect_refused("x{a,b,a}", "the variable \"a\" appears twice", 6);
  expect_refused("x{/a}{?a}", "the variable \"a\" appears twice", 7);
}
END_TEST

START_TEST(compile_operators_and_modifiers) {
  static const char reserved[] = "=,!@|";
  for (size_t i = 0; reserved[i]; i++) {
    char tmpl[16];
    snprintf(tmpl, sizeof tmpl, "x:{%ca}", reserved[i]);
    expect_refused(tmpl, "an operator reserved for future use", 3);
  }
  expect_refused("{a:0}", "a prefix length that is not 1 to 9999", 3);
  expect_refused("{a:}", "a prefix length that is not 1 to 9999", 3);
  expect_refused("{a:10000}", "a prefix length that is not 1 to 9999", 3);
  expect_refused("{a:x}", "a prefix length that is not 1 to 9999", 3);
  expect_refused("{a:3*}", "a modifier not followed by", 4);
  expect_refused("{a*:3}", "a modifier not followed by", 3);
  expect_refused("{a**}", "a modifier not followed by", 3);
  expect_refused("x:{/a*,b*}", "two exploded variables", 7);
  expect_refused("x:{a*,b,c*}", "two exploded variables", 8);
  mcp__uritemplate *t = compile_ok("x:{a:9999,b:1}");
  mcp__uritemplate_free(t);
}
END_TEST

START_TEST(compile_adjacent_expressions) {
  expect_refused("{a}{b}", "nothing between them", 3);
  expect_refused("x:{a}{+b}", "nothing between them", 5);
  expect_refused("x:{#a}{b}", "nothing between them", 6);
  expect_refused("x:{a}{.b}", "starting with \".\" cannot be told apart", 5);
  expect_refused("x:{a}{;b}", "starting with \";\" cannot be told apart", 5);
  expect_refused("x:{a}{&b}", "starting with \"&\" cannot be told apart", 5);
  expect_refused("x:{/a}{/b}", "starting with \"/\" cannot be told apart", 6);
  expect_refused("x:{.a}{.b}", "starting with \".\" cannot be told apart", 6);
  expect_refused("x:{;a}{;b}", "starting with \";\" cannot be told apart", 6);
  expect_refused("x:{?a}{&b}", "starting with \"&\" cannot be told apart", 6);
  /* Through an optional expression that may match nothing. */
  expect_refused("x:{a}{?q}{.x}", "starting with \".\" cannot be told apart",
                 9);
  expect_refused("x:{a}{?q}{b}", "nothing between them", 9);
}
END_TEST

START_TEST(compile_limits) {
  char tmpl[MCP__URITEMPLATE_MAX_LEN + 2];
  memset(tmpl, 'a', sizeof tmpl - 1);
  tmpl[sizeof tmpl - 1] = '\0';
  expect_refused(tmpl, "longer than 1024 bytes", 1024);
  tmpl[MCP__URITEMPLATE_MAX_LEN] = '\0';
  mcp__uritemplate *t = compile_ok(tmpl);
  expect_match_t(__LINE__, t, tmpl, "{}");
  mcp__uritemplate_free(t);

  /* 32 variables compile, in one expression or in many; 33 do not. */
  char buf[512] = "x:{v0";
  for (int i = 1; i < 32; i++)
    snprintf(buf + strlen(buf), sizeof buf - strlen(buf), ",v%d", i);
  strcat(buf, "}");
  t = compile_ok(buf);
  ck_assert_uint_eq(mcp__uritemplate_nvars(t), 32);
  mcp__uritemplate_free(t);
  buf[strlen(buf) - 1] = '\0';
  size_t at = strlen(buf) + 1;
  strcat(buf, ",v32}");
  expect_refused(buf, "more than 32 variables", at);

  buf[0] = '\0';
  for (int i = 0; i < 32; i++)
    snprintf(buf + strlen(buf), sizeof buf - strlen(buf), "/{v%d}", i);
  t = compile_ok(buf);
  mcp__uritemplate_free(t);
  at = strlen(buf) + 2;
  strcat(buf, "/{v32}");
  expect_refused(buf, "more than 32 variables", at);
}
END_TEST

START_TEST(compile_bad_bytes) {
  expect_refused("a\xff", "not UTF-8", 1);
  expect_refused("\xc0\xaf", "not UTF-8", 0);         /* overlong "/" */
  expect_refused("ab\xed\xa0\x80", "not UTF-8", 2);   /* a surrogate */
  expect_refused("a\xe2\x82", "not UTF-8", 1);        /* cut short */
  expect_refused("\xf4\x90\x80\x80", "not UTF-8", 0); /* past U+10FFFF */
  expect_refused("{a}\x80", "not UTF-8", 3);
  expect_refused("a\tb", "a control character", 1);
  expect_refused("a\nb", "a control character", 1);
  expect_refused("ab\x7f", "a control character", 2);
  expect_refused("a\xc2\x85", "a control character", 1); /* C1 NEL */
  expect_refused("{a\x01}", "a control character", 2);
}
END_TEST

START_TEST(compile_literals) {
  static const char *const bad[] = {"a b",  "a\"b", "a'b", "a<b", "a>b",
                                    "a\\b", "a^b",  "a`b", "a|b"};
  for (size_t i = 0; i < TU_COUNT(bad); i++)
    expect_refused(bad[i], "does not allow in a literal", 1);
  expect_refused("a%zz", "a \"%\" not followed by two hexadecimal", 1);
  expect_refused("a%4", "a \"%\" not followed by two hexadecimal", 1);
  expect_refused("a%", "a \"%\" not followed by two hexadecimal", 1);
}
END_TEST

START_TEST(compile_bad_arguments) {
  mcp__uritemplate *t = NULL;
  char err[64];
  ck_assert_int_eq(mcp__uritemplate_compile(NULL, &t, err, sizeof err),
                   MCP_EINVAL);
  ck_assert_ptr_null(t);
  ck_assert_int_eq(mcp__uritemplate_compile("x", NULL, err, sizeof err),
                   MCP_EINVAL);
  /* No room for a message is fine. */
  ck_assert_int_eq(mcp__uritemplate_compile("{", &t, NULL, 0), MCP_EINVAL);
  ck_assert_ptr_null(t);
  /* A short buffer gets a truncated message. */
  ck_assert_int_eq(mcp__uritemplate_compile("{", &t, err, 8), MCP_EINVAL);
  ck_assert_uint_eq(strlen(err), 7);

  t = compile_ok("x:{a}");
  cJSON *vars = NULL;
  ck_assert_int_eq(mcp__uritemplate_match(NULL, "x:1", &vars), MCP_EINVAL);
  ck_assert_int_eq(mcp__uritemplate_match(t, NULL, &vars), MCP_EINVAL);
  ck_assert_int_eq(mcp__uritemplate_match(t, "x:1", NULL), MCP_EINVAL);
  ck_assert_ptr_null(vars);
  mcp__uritemplate_free(t);
}
END_TEST

/* ---- operators ----------------------------------------------------------- */

START_TEST(match_simple) {
  expect_match("test://template/{id}/data", "test://template/123/data",
               "{\"id\":\"123\"}");
  expect_match("file:///notes/{name}", "file:///notes/a%20b",
               "{\"name\":\"a b\"}");
  expect_match("x:{name}", "x:a,b", "{\"name\":\"a,b\"}");
  expect_match("x:{name}", "x:a.b", "{\"name\":\"a.b\"}");
  expect_match("x:{name}", "x:...", "{\"name\":\"...\"}");
  expect_match("x:{name}", "x:.hidden", "{\"name\":\".hidden\"}");
  expect_match("x:{a,b}", "x:1,2", "{\"a\":\"1\",\"b\":\"2\"}");
  expect_match("x:{a*}", "x:1,2", "{\"a\":\"1,2\"}");
  expect_match("x:{a*,b}", "x:1,2,3", "{\"a\":\"1,2\",\"b\":\"3\"}");
  expect_match("users://{email}/profile", "users://a@b.c/profile",
               "{\"email\":\"a@b.c\"}");
  expect_match("x:{a}-{b}", "x:1-2-3", "{\"a\":\"1\",\"b\":\"2-3\"}");
  expect_match("gh://{owner}/{repo}/issues/{n}", "gh://me/lib/issues/42",
               "{\"owner\":\"me\",\"repo\":\"lib\",\"n\":\"42\"}");
  expect_match("{a}", "anything", "{\"a\":\"anything\"}");
  expect_match("x:{a%2eb}", "x:v", "{\"a%2eb\":\"v\"}");

  expect_nomatch("x:{a,b}", "x:1");
  expect_nomatch("x:{a,b}", "x:1,2,3");
  expect_nomatch("x:{a,b}", "x:1,");
  expect_nomatch("x:{a}", "x:");
  expect_nomatch("test://template/{id}/data", "test://template//data");
  expect_nomatch("test://template/{id}/data", "test://template/1/2/data");
  expect_nomatch("test://template/{id}/data", "test://template/1?x/data");
  expect_nomatch("test://template/{id}/data", "test://template/1#x/data");
}
END_TEST

START_TEST(match_reserved) {
  expect_match("file:///{+path}", "file:///a/b/c", "{\"path\":\"a/b/c\"}");
  expect_match("file:///{+path}", "file:///a/b%2Fc?d#e",
               "{\"path\":\"a/b/c?d#e\"}");
  expect_match("file:///{+path}", "file:///.hidden/.../x",
               "{\"path\":\".hidden/.../x\"}");
  expect_match("x:{+a,b}", "x:1/2,3", "{\"a\":\"1/2\",\"b\":\"3\"}");
  expect_match("x:{+a*}", "x:1,2,3", "{\"a\":\"1,2,3\"}");
  expect_match("x:{+path}/x", "x:a/x", "{\"path\":\"a\"}");
  /* Leftmost: the path ends at the first "/x", so no backtracking. */
  expect_nomatch("x:{+path}/x", "x:a/x/b/x");
  expect_nomatch("file:///{+path}", "file:///");
  expect_nomatch("x:{+a,b}", "x:1,2,3");
  expect_nomatch("x:{+a,b}", "x:1,");
}
END_TEST

START_TEST(match_fragment) {
  expect_match("doc://x{#frag}", "doc://x#sec/1", "{\"frag\":\"sec/1\"}");
  expect_match("doc://x{#a,b}", "doc://x#1,2", "{\"a\":\"1\",\"b\":\"2\"}");
  expect_match("x:{#a}{#b}", "x:#1#2", "{\"a\":\"1\",\"b\":\"2\"}");
  expect_nomatch("doc://x{#frag}", "doc://x");
  expect_nomatch("doc://x{#frag}", "doc://x#");
  expect_nomatch("doc://x{#frag}", "doc://xsec");
  expect_nomatch("doc://x{#frag}", "doc://x#a/../b");
}
END_TEST

START_TEST(match_label) {
  expect_match("file:///f{.ext}", "file:///f.txt", "{\"ext\":\"txt\"}");
  expect_match("file:///f{.ext}", "file:///f.tar.gz", "{\"ext\":\"tar.gz\"}");
  expect_match("x{.a,b}", "x.1.2", "{\"a\":\"1\",\"b\":\"2\"}");
  expect_match("x{.a*}", "x.1.2.3", "{\"a\":\"1.2.3\"}");
  expect_nomatch("x{.a,b}", "x.1");
  expect_nomatch("x{.a,b}", "x.1.2.3");
  expect_nomatch("x{.a,b}", "x.1.");
  expect_nomatch("file:///f{.ext}", "file:///f");
  expect_nomatch("file:///f{.ext}", "file:///f.");
  expect_nomatch("file:///f{.ext}", "file:///ftxt");
  expect_nomatch("file:///f{.ext}", "file:///f.a/b");
  expect_nomatch("file:///f{.ext}", "file:///f..");
  expect_nomatch("file:///f{.ext}", "file:///f.%2E");
}
END_TEST

START_TEST(match_path_segments) {
  expect_match("repo://r{/owner,name}", "repo://r/me/lib",
               "{\"owner\":\"me\",\"name\":\"lib\"}");
  expect_match("repo://r{/path*}", "repo://r/a/b/c", "{\"path\":\"a/b/c\"}");
  expect_match("repo://r{/path*}", "repo://r/a", "{\"path\":\"a\"}");
  expect_match("x:{/a,b*,c}", "x:/1/2/3/4",
               "{\"a\":\"1\",\"b\":\"2/3\",\"c\":\"4\"}");
  expect_match("x:{/a,b*,c}", "x:/1/2/3",
               "{\"a\":\"1\",\"b\":\"2\",\"c\":\"3\"}");
  expect_match("x:{/a}/end", "x:/1/end", "{\"a\":\"1\"}");
  expect_nomatch("repo://r{/owner,name}", "repo://r/me");
  expect_nomatch("repo://r{/owner,name}", "repo://r/me/lib/x");
  expect_nomatch("repo://r{/owner,name}", "repo://r/me/");
  expect_nomatch("repo://r{/owner,name}", "repo://r//lib");
  expect_nomatch("repo://r{/owner,name}", "repo://r");
  expect_nomatch("repo://r{/owner,name}", "repo://rme/lib");
  expect_nomatch("repo://r{/path*}", "repo://r/a//c");
  expect_nomatch("repo://r{/path*}", "repo://r/a/../c");
  expect_nomatch("repo://r{/path*}", "repo://r/a/%2e/c");
  expect_nomatch("repo://r{/path*}", "repo://r/a%2Fb");
  expect_nomatch("x:{/a,b*,c}", "x:/1/2");
}
END_TEST

START_TEST(match_path_params) {
  expect_match("m:{;x,y}", "m:;x=1;y=2", "{\"x\":\"1\",\"y\":\"2\"}");
  expect_match("m:{;x,y}", "m:;y=2;x=1", "{\"x\":\"1\",\"y\":\"2\"}");
  expect_match("m:{;x,y}", "m:;y=2", "{\"y\":\"2\"}");
  expect_match("m:{;x,y}", "m:", "{}");
  expect_match("m:{;x,y}", "m:;x", "{\"x\":\"\"}");
  expect_match("m:{;x,y}", "m:;x=", "{\"x\":\"\"}");
  expect_match("m:{;x}", "m:;x=a=b", "{\"x\":\"a=b\"}");
  expect_match("m:{;x}/end", "m:;x=1/end", "{\"x\":\"1\"}");
  expect_match("m:{;x}/end", "m:/end", "{}");
  expect_nomatch("m:{;x,y}", "m:;z=1");
  expect_nomatch("m:{;x,y}", "m:;x=1;x=2");
  expect_nomatch("m:{;x,y}", "m:;");
  expect_nomatch("m:{;x,y}", "m:;x=1;");
  expect_nomatch("m:{;x,y}", "m:;;x=1");
  expect_nomatch("m:{;x,y}", "m:;=1");
  expect_nomatch("m:{;x,y}", "m:x=1");
  expect_nomatch("m:{;x}", "m:;x=a/b");
  expect_nomatch("m:{;x}", "m:;x=..");
}
END_TEST

START_TEST(match_query) {
  static const char *const tmpl = "s://search{?q,lang}";
  expect_match(tmpl, "s://search?q=a%20b&lang=en",
               "{\"q\":\"a b\",\"lang\":\"en\"}");
  expect_match(tmpl, "s://search?lang=en&q=x", "{\"q\":\"x\",\"lang\":\"en\"}");
  expect_match(tmpl, "s://search?lang=en", "{\"lang\":\"en\"}");
  expect_match(tmpl, "s://search", "{}");
  expect_match(tmpl, "s://search?q=", "{\"q\":\"\"}");
  expect_match(tmpl, "s://search?q", "{\"q\":\"\"}");
  expect_match(tmpl, "s://search?q=a,b;c=d", "{\"q\":\"a,b;c=d\"}");
  expect_match(tmpl, "s://search?q=%3F%23%26", "{\"q\":\"?#&\"}");
  expect_match("s://x?fixed=1{&a,b}", "s://x?fixed=1&b=2", "{\"b\":\"2\"}");
  expect_match("s://x?fixed=1{&a,b}", "s://x?fixed=1", "{}");
  expect_match("x:{?a%2Eb}", "x:?a%2Eb=1", "{\"a%2Eb\":\"1\"}");

  expect_nomatch(tmpl, "s://search?q=1&other=2");
  expect_nomatch(tmpl, "s://search?q=1&q=2");
  expect_nomatch(tmpl, "s://search?");
  expect_nomatch(tmpl, "s://search?&q=1");
  expect_nomatch(tmpl, "s://search?q=1&");
  expect_nomatch(tmpl, "s://search?q=1&&lang=2");
  expect_nomatch(tmpl, "s://search?Q=1");
  expect_nomatch(tmpl, "s://search?q=a/b");
  expect_nomatch(tmpl, "s://search?q=a%2Fb");
  expect_nomatch(tmpl, "s://search?q=a?b");
  expect_nomatch(tmpl, "s://search?q=a#b");
  expect_nomatch(tmpl, "s://search?q=..");
  expect_nomatch(tmpl, "s://search?q=%2E");
  expect_nomatch(tmpl, "s://searchx");
  expect_nomatch("s://x?fixed=1{&a,b}", "s://x?fixed=1&");
  expect_nomatch("s://x?fixed=1{&a,b}", "s://x?fixed=1&c=1");
  /* Explode has no effect on named operators: a key still comes once. */
  expect_match("x:{?list*}", "x:?list=a", "{\"list\":\"a\"}");
  expect_nomatch("x:{?list*}", "x:?list=a&list=b");
}
END_TEST

START_TEST(match_prefix) {
  expect_match("p:{a:3}", "p:abc", "{\"a\":\"abc\"}");
  expect_match("p:{a:3}", "p:a", "{\"a\":\"a\"}");
  expect_match("p:{a:3}", "p:%C3%A9%C3%A9%C3%A9",
               "{\"a\":\"\xc3\xa9\xc3\xa9\xc3\xa9\"}");
  expect_match("p:{?q:2}", "p:?q=ab", "{\"q\":\"ab\"}");
  expect_nomatch("p:{a:3}", "p:abcd");
  expect_nomatch("p:{a:3}", "p:%C3%A9%C3%A9%C3%A9%C3%A9");
  expect_nomatch("p:{?q:2}", "p:?q=abc");
}
END_TEST

START_TEST(match_adjacent) {
  expect_match("w://{city}{?units}", "w://paris", "{\"city\":\"paris\"}");
  expect_match("w://{city}{?units}", "w://paris?units=c",
               "{\"city\":\"paris\",\"units\":\"c\"}");
  expect_match("file:///{+path}{?v}", "file:///a/b?v=2",
               "{\"path\":\"a/b\",\"v\":\"2\"}");
  expect_match("file:///{+path}{?v}", "file:///a/b", "{\"path\":\"a/b\"}");
  expect_match("x:{a}{/b}", "x:1/2", "{\"a\":\"1\",\"b\":\"2\"}");
  expect_match("x:{a}{#f}", "x:1#2", "{\"a\":\"1\",\"f\":\"2\"}");
  expect_match("x:{/p}{?q}", "x:/1?q=2", "{\"p\":\"1\",\"q\":\"2\"}");
  expect_match("x:{+a}{.b}", "x:1/2.3", "{\"a\":\"1/2\",\"b\":\"3\"}");
  expect_match("x:{a}{?q}{#f}", "x:1#z", "{\"a\":\"1\",\"f\":\"z\"}");
  expect_match("x:{a}{?q}{#f}", "x:1?q=2#z",
               "{\"a\":\"1\",\"q\":\"2\",\"f\":\"z\"}");
  expect_match("x:{a}{?q}/end", "x:1/end", "{\"a\":\"1\"}");
  expect_match("x:{a}{?q}/end", "x:1?q=2/end", "{\"a\":\"1\",\"q\":\"2\"}");
  expect_match("x:{?a}{?b}", "x:?a=1?b=2", "{\"a\":\"1\",\"b\":\"2\"}");
  /* An optional expression is absent only when its character is: here
   * "?" begins {?a}, which has no "b". */
  expect_nomatch("x:{?a}{?b}", "x:?b=2");
  /* The literal after the optional part starts before the first "?": the
   * earlier of the two ends {+a}. */
  expect_match("x:{+a}{?q}b?c", "x:1b?c", "{\"a\":\"1\"}");
  expect_match("x:{+a}{?q}b?c", "x:1?q=2b?c", "{\"a\":\"1\",\"q\":\"2\"}");
  expect_nomatch("x:{a}{?q}{#f}", "x:1");
  expect_nomatch("x:{a}{?q}{#f}", "x:1?q=2");
  expect_nomatch("x:{a}{/b}", "x:1");
  expect_nomatch("x:{a}{/b}", "x:1/2/3");
  expect_nomatch("x:{?a}{?b}", "x:?b=2?a=1");
}
END_TEST

START_TEST(match_literals_exact) {
  expect_match("file:///x", "file:///x", "{}");
  expect_match("", "", "{}");
  expect_match("caf\xc3\xa9:{a}", "caf\xc3\xa9:1", "{\"a\":\"1\"}");
  expect_nomatch("file:///x", "FILE:///x");
  expect_nomatch("file:///x", "file:///x/");
  expect_nomatch("file:///x", "file:///");
  expect_nomatch("file:///x", "");
  expect_nomatch("", "x");
  expect_nomatch("caf\xc3\xa9:{a}", "caf%C3%A9:1");
  expect_nomatch("a%2Fb{x}", "a/b1");
  expect_match("a%2Fb{x}", "a%2Fb1", "{\"x\":\"1\"}");
  expect_nomatch("x:{a}/data", "y:1/data");
  expect_nomatch("x:{a}/data", "x:1/dat");
  expect_nomatch("x:{a}/data", "x:1/data/");
}
END_TEST

/* ---- decoding and refusals ----------------------------------------------- */

START_TEST(decoding) {
  static const char *const tmpl = "x:{v}";
  expect_match(tmpl, "x:%41%62", "{\"v\":\"Ab\"}");
  expect_match(tmpl, "x:%c3%a9", "{\"v\":\"\xc3\xa9\"}");
  expect_match(tmpl, "x:%C3%A9", "{\"v\":\"\xc3\xa9\"}");
  expect_match(tmpl, "x:\xc3\xa9", "{\"v\":\"\xc3\xa9\"}");
  expect_match(tmpl, "x:%F0%9F%98%80", "{\"v\":\"\xf0\x9f\x98\x80\"}");
  expect_match(tmpl, "x:%25", "{\"v\":\"%\"}");
  expect_match(tmpl, "x:%3F%23", "{\"v\":\"?#\"}");
  expect_match(tmpl, "x:a+b", "{\"v\":\"a+b\"}");
  expect_nomatch(tmpl, "x:%");
  expect_nomatch(tmpl, "x:%4");
  expect_nomatch(tmpl, "x:%4g");
  expect_nomatch(tmpl, "x:%g4");
  expect_nomatch(tmpl, "x:a%");
}
END_TEST

START_TEST(traversal_refused) {
  static const char *const tmpl = "file:///notes/{name}";
  expect_match(tmpl, "file:///notes/a", "{\"name\":\"a\"}");
  expect_nomatch(tmpl, "file:///notes/a/b");
  expect_nomatch(tmpl, "file:///notes/..");
  expect_nomatch(tmpl, "file:///notes/.");
  expect_nomatch(tmpl, "file:///notes/%2e%2e");
  expect_nomatch(tmpl, "file:///notes/%2E%2E");
  expect_nomatch(tmpl, "file:///notes/.%2e");
  expect_nomatch(tmpl, "file:///notes/%2e");
  expect_nomatch(tmpl, "file:///notes/a%2Fb");
  expect_nomatch(tmpl, "file:///notes/a%2fb");
  expect_nomatch(tmpl, "file:///notes/%2F");
  expect_nomatch(tmpl, "file:///notes/..%2F..%2Fetc");
  expect_nomatch(tmpl, "file:///notes/a%5Cb");
  expect_nomatch(tmpl, "file:///notes/a\\b");
  expect_nomatch(tmpl, "file:///notes/..%5C..");
  expect_nomatch(tmpl, "file:///notes/a?b");
  expect_nomatch(tmpl, "file:///notes/a#b");

  static const char *const rtmpl = "file:///{+path}";
  expect_match(rtmpl, "file:///a/b/c", "{\"path\":\"a/b/c\"}");
  expect_match(rtmpl, "file:///a%2Fb", "{\"path\":\"a/b\"}");
  expect_nomatch(rtmpl, "file:///..");
  expect_nomatch(rtmpl, "file:///.");
  expect_nomatch(rtmpl, "file:///../etc/passwd");
  expect_nomatch(rtmpl, "file:///a/../../etc/passwd");
  expect_nomatch(rtmpl, "file:///a/..");
  expect_nomatch(rtmpl, "file:///a/./b");
  expect_nomatch(rtmpl, "file:///a/%2e%2e/b");
  expect_nomatch(rtmpl, "file:///a%2F..%2Fb");
  expect_nomatch(rtmpl, "file:///a\\..\\b");
  expect_nomatch(rtmpl, "file:///a%5C..%5Cb");
  expect_match(rtmpl, "file:///a/..?x", "{\"path\":\"a/..?x\"}");
  expect_match(rtmpl, "file:///a/..x/b", "{\"path\":\"a/..x/b\"}");
}
END_TEST

START_TEST(non_utf8_refused) {
  static const char *const tmpl = "x:{v}";
  expect_nomatch(tmpl, "x:%FF");
  expect_nomatch(tmpl, "x:%C3");
  expect_nomatch(tmpl, "x:%C3%28");
  expect_nomatch(tmpl, "x:%C0%AF");       /* overlong "/" */
  expect_nomatch(tmpl, "x:%ED%A0%80");    /* a surrogate */
  expect_nomatch(tmpl, "x:%F4%90%80%80"); /* past U+10FFFF */
  expect_nomatch(tmpl, "x:\xff");
  expect_nomatch(tmpl, "x:a\xc3");
  expect_nomatch(tmpl, "x:%00");
  expect_nomatch(tmpl, "x:a%00b");
  expect_nomatch("x:{+v}", "x:%00");
  expect_nomatch("x:{?v}", "x:?v=%FF");
  expect_nomatch("x:{/v*}", "x:/a/%FF");
}
END_TEST

START_TEST(reused_template) {
  /* One compiled template, many matches, none leaking into the next. */
  mcp__uritemplate *t = compile_ok("s://{a}/x{?q,r}");
  expect_match_t(__LINE__, t, "s://1/x?q=2", "{\"a\":\"1\",\"q\":\"2\"}");
  expect_match_t(__LINE__, t, "s://3/x?r=4", "{\"a\":\"3\",\"r\":\"4\"}");
  expect_nomatch_t(__LINE__, t, "s://3/x?r=4&r=5");
  expect_match_t(__LINE__, t, "s://5/x", "{\"a\":\"5\"}");
  mcp__uritemplate_free(t);
}
END_TEST

/* ---- linear time --------------------------------------------------------- */

#define MB (1024 * 1024)

/* uri must match tmpl, giving variable name the value want. */
static void expect_value_at(int line, const char *tmpl, const char *uri,
                            const char *name, const char *want) {
  mcp__uritemplate *t = compile_ok_at(line, tmpl);
  cJSON *vars = NULL;
  int rc = mcp__uritemplate_match(t, uri, &vars);
  ck_assert_msg(rc == 0, "line %d: no match: %d", line, rc);
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(vars, name);
  ck_assert_msg(cJSON_IsString(v), "line %d: no %s", line, name);
  ck_assert_msg(strcmp(v->valuestring, want) == 0,
                "line %d: %s is not the expected %zu bytes", line, name,
                strlen(want));
  cJSON_Delete(vars);
  mcp__uritemplate_free(t);
}
#define expect_value(tmpl, uri, name, want)                                    \
  expect_value_at(__LINE__, (tmpl), (uri), (name), (want))

/* Megabyte URIs against templates with several expressions: each match
 * must return (there is no timing assertion; a backtracking or quadratic
 * matcher would not finish within the test's timeout). */
START_TEST(linear_long_inputs) {
  /* A literal that almost occurs everywhere: a naive search compares 20
   * bytes at each of a million positions, a backtracking one far more. */
  char *want, *uri = repeat("k://", "a", MB, "");
  expect_nomatch("k://{+a}aaaaaaaaaaaaaaaaaaab{b}", uri);
  expect_nomatch("k://{a}/{b}/{c}{?q,r}", uri);
  expect_nomatch("k://{a}{?q}{#f}", uri);
  expect_value("k://{+a}", uri, "a", uri + 4);
  expect_value("k://{a}{?q}", uri, "a", uri + 4);
  free(uri);

  uri = repeat("k://", "a", MB, "aaaaaaaaaaaaaaaaaaab/x");
  want = repeat("", "a", MB, "");
  expect_value("k://{+a}aaaaaaaaaaaaaaaaaaab{/b}", uri, "a", want);
  free(want);
  free(uri);

  uri = repeat("big://", "seg/", MB / 4, "end");
  expect_value("big://{+path}", uri, "path", uri + 6);
  expect_nomatch("big://{path}", uri);
  free(uri);

  /* Many separators: items, path segments and a near-miss literal. */
  uri = repeat("r://r", "/a", MB / 2, "");
  expect_value("r://r{/p*}", uri, "p", uri + 6);
  expect_nomatch("r://r{/a,b,c}", uri);
  expect_nomatch("r://r{/a}/a/b", uri);
  free(uri);
  uri = repeat("t:", "/y", MB / 2, "/x");
  want = repeat("", "/y", MB / 2, "");
  expect_value("t:{+p}/x", uri, "p", want);
  free(want);
  free(uri);

  /* Many stop characters and pairs. */
  uri = repeat("x:", "a?", MB / 2, "");
  expect_nomatch("x:{+a}{?q}{#f}", uri);
  free(uri);
  uri = repeat("q://x?", "a=1&", MB / 4, "b=2");
  expect_nomatch("q://x{?a,b}", uri);
  free(uri);
  uri = repeat("q://x?", "z=1&", MB / 4, "b=2");
  expect_nomatch("q://x{?a,b}", uri);
  free(uri);

  /* A match spread over several expressions. */
  uri = repeat("m://1/2/", "c", MB, "/end?q=3");
  want = repeat("", "c", MB, "");
  expect_value("m://{a}/{b}/{+c}/end{?q}", uri, "c", want);
  expect_value("m://{a}/{b}/{+c}/end{?q}", uri, "q", "3");
  free(want);
  free(uri);
}
END_TEST

/* ---- allocation failure -------------------------------------------------- */

START_TEST(compile_out_of_memory) {
  for (long n = 1;; n++) {
    tu_alloc_install(n);
    mcp__uritemplate *t = NULL;
    char err[100] = "";
    int rc = mcp__uritemplate_compile("s://{a}/x{?q,r}", &t, err, sizeof err);
    long failures = tu_alloc_disarm();
    if (failures) {
      ck_assert_int_eq(rc, MCP_ENOMEM);
      ck_assert_ptr_null(t);
      ck_assert_str_eq(err, "out of memory");
    } else {
      ck_assert_int_eq(rc, 0);
      ck_assert_uint_eq(mcp__uritemplate_nvars(t), 3);
    }
    mcp__uritemplate_free(t);
    tu_alloc_remove();
    tu_assert_no_leak(n);
    if (failures == 0)
      break;
  }
}
END_TEST

START_TEST(match_out_of_memory) {
  mcp__uritemplate *t = compile_ok("s://{a}/{+b}/x{?q,r}");
  long n;
  for (n = 1;; n++) {
    tu_alloc_install(n);
    cJSON *vars = NULL;
    int rc = mcp__uritemplate_match(t, "s://1/2/3/x?r=%C3%A9&q=4", &vars);
    long failures = tu_alloc_disarm();
    if (failures) {
      ck_assert_int_eq(rc, MCP_ENOMEM);
      ck_assert_ptr_null(vars);
    } else {
      ck_assert_int_eq(rc, 0);
      tu_assert_exact(vars, "{\"a\":\"1\",\"b\":\"2/3\",\"q\":\"4\","
                            "\"r\":\"\xc3\xa9\"}");
    }
    cJSON_Delete(vars);
    tu_alloc_remove();
    tu_assert_no_leak(n);
    if (failures == 0)
      break;
  }
  /* The buffer, the object, and a value and a key for each variable. */
  ck_assert_int_ge(n, 1 + 1 + 2 * 4);

  /* A URI refused by the template's first literal allocates nothing; one
   * refused later finds its allocation failure first. */
  tu_alloc_install(1);
  cJSON *vars = NULL;
  ck_assert_int_eq(mcp__uritemplate_match(t, "http://1/2/x", &vars),
                   MCP_ENOENT);
  ck_assert_int_eq(tu_alloc_disarm(), 0);
  tu_alloc_arm(1);
  ck_assert_int_eq(mcp__uritemplate_match(t, "s://1/2/y", &vars), MCP_ENOMEM);
  ck_assert_int_eq(tu_alloc_disarm(), 1);
  ck_assert_ptr_null(vars);
  tu_alloc_remove();
  tu_assert_no_leak(0);
  mcp__uritemplate_free(t);
}
END_TEST

static Suite *uritemplate_suite(void) {
  Suite *s = suite_create("uritemplate");
  TCase *t = tcase_create("compile");
  tcase_add_test(t, compile_accepts_level4);
  tcase_add_test(t, compile_accessors);
  tcase_add_test(t, compile_copies_template);
  tcase_add_test(t, compile_braces);
  tcase_add_test(t, compile_names);
  tcase_add_test(t, compile_operators_and_modifiers);
  tcase_add_test(t, compile_adjacent_expressions);
  tcase_add_test(t, compile_limits);
  tcase_add_test(t, compile_bad_bytes);
  tcase_add_test(t, compile_literals);
  tcase_add_test(t, compile_bad_arguments);
  suite_add_tcase(s, t);

  t = tcase_create("operators");
  tcase_add_test(t, match_simple);
  tcase_add_test(t, match_reserved);
  tcase_add_test(t, match_fragment);
  tcase_add_test(t, match_label);
  tcase_add_test(t, match_path_segments);
  tcase_add_test(t, match_path_params);
  tcase_add_test(t, match_query);
  tcase_add_test(t, match_prefix);
  tcase_add_test(t, match_adjacent);
  tcase_add_test(t, match_literals_exact);
  suite_add_tcase(s, t);

  t = tcase_create("values");
  tcase_add_test(t, decoding);
  tcase_add_test(t, traversal_refused);
  tcase_add_test(t, non_utf8_refused);
  tcase_add_test(t, reused_template);
  suite_add_tcase(s, t);

  t = tcase_create("limits");
  tcase_set_timeout(t, 120);
  tcase_add_test(t, linear_long_inputs);
  tcase_add_test(t, compile_out_of_memory);
  tcase_add_test(t, match_out_of_memory);
  suite_add_tcase(s, t);
  return s;
}

int main(void) { return tu_run(uritemplate_suite()); }
