/* The HTTP transport's header checks (lib/http/http_check.c), called
 * directly with strings: Host and Origin against allowlists, Content-Type,
 * Accept, session ids, Mcp-Name/Mcp-Param-* values, Last-Event-ID and the
 * MCP-Protocol-Version routing. The socket suite (tests/http/test_http.c)
 * shows the transport applies them; here every rule of each check is
 * pinned, refusals first: they are strict on purpose, so anything they
 * cannot read must be refused. */
#include <check.h>
#include <stdbool.h>
#include <string.h>

#include "http_int.h"
#include "testutil.h"

/* ---- Host ---------------------------------------------------------------- */

typedef struct verdict {
  const char *value;
  bool allowed;
} verdict;

/* Checks each case against list with check (Host or Origin), naming the
 * case that fails. */
static void
expect_verdicts(bool (*check)(const char *const *, const char *, size_t),
                const char *const *list, const verdict *v, size_t n) {
  for (size_t i = 0; i < n; i++)
    ck_assert_msg(check(list, v[i].value, strlen(v[i].value)) == v[i].allowed,
                  "\"%s\" should be %s", v[i].value,
                  v[i].allowed ? "allowed" : "refused");
}

START_TEST(default_hosts_are_loopback_names) {
  const char *const *d = mcp__http_default_hosts;
  ck_assert_str_eq(d[0], "localhost");
  ck_assert_str_eq(d[1], "127.0.0.1");
  ck_assert_str_eq(d[2], "[::1]");
  ck_assert_ptr_null(d[3]);
}
END_TEST

START_TEST(host_against_the_defaults) {
  static const verdict cases[] = {
      {"localhost", true},
      {"LocalHost", true}, /* host names are case-insensitive */
      {"localhost:8080", true},
      {"127.0.0.1", true},
      {"127.0.0.1:1", true},
      {"127.0.0.1:65535", true},
      {"[::1]", true},
      {"[::1]:3000", true},
      /* Refused: another host, or one the loopback name only starts. */
      {"evil.example", false},
      {"localhost.evil.example", false},
      {"127.0.0.1.nip.io", false},
      {"127.0.0.2", false},
      /* Refused: not a host[:port] at all. */
      {"", false},
      {":8080", false},
      {"127.0.0.1:", false},
      {"127.0.0.1:0", false},
      {"127.0.0.1:65536", false},
      {"127.0.0.1:123456", false},
      {"127.0.0.1:80a", false},
      {"127.0.0.1:8:8", false},
      {"::1", false}, /* a bare IPv6 literal is no Host value */
      {"[]", false},
      {"[::1", false},
      {"[::1]x", false},
      {"[::1]:", false},
      {"[::g]", false},
      {"local host", false},
      {"localhost/", false},
      {"user@localhost", false},
  };
  expect_verdicts(mcp__http_host_allowed, mcp__http_default_hosts, cases,
                  TU_COUNT(cases));
}
END_TEST

START_TEST(host_entries_with_ports_and_bare_v6) {
  static const char *const list[] = {"api.example:8443", "::1",
                                     "[fe80::2]:9000", NULL};
  static const verdict cases[] = {
      {"api.example:8443", true},
      {"API.EXAMPLE:8443", true},
      {"api.example", false}, /* the entry names a port: it is required */
      {"api.example:443", false},
      {"[::1]", true}, /* the bare entry "::1" is the bracketed host */
      {"[::1]:1234", true},
      {"[fe80::2]:9000", true},
      {"[fe80::2]", false},
      {"[fe80::2]:9001", false},
      {"localhost", false}, /* the list replaces the defaults */
  };
  expect_verdicts(mcp__http_host_allowed, list, cases, TU_COUNT(cases));
}
END_TEST

START_TEST(host_refused_without_list_value_or_with_nul) {
  static const char *const empty[] = {NULL};
  ck_assert(!mcp__http_host_allowed(empty, "localhost", 9));
  ck_assert(!mcp__http_host_allowed(NULL, "localhost", 9));
  ck_assert(!mcp__http_host_allowed(mcp__http_default_hosts, NULL, 0));
  /* The length, not a NUL, ends the value: a NUL inside is refused. */
  ck_assert(
      !mcp__http_host_allowed(mcp__http_default_hosts, "localhost\0.x", 12));
  ck_assert(
      mcp__http_host_allowed(mcp__http_default_hosts, "localhost:80xx", 12));
}
END_TEST

/* ---- Origin -------------------------------------------------------------- */

START_TEST(origin_whole_origins_and_hosts) {
  static const char *const list[] = {"http://localhost:3000",
                                     "https://app.example/", "127.0.0.1", NULL};
  static const verdict cases[] = {
      {"http://localhost:3000", true},
      {"HTTP://LOCALHOST:3000", true},
      {"https://app.example", true}, /* the entry's trailing '/' is dropped */
      {"http://127.0.0.1", true},    /* a host entry: any scheme and port */
      {"https://127.0.0.1:5555", true},
      {"chrome-extension://127.0.0.1", true},
      /* Refused: another origin. */
      {"http://localhost:3001", false},
      {"https://localhost:3000", false},
      {"http://app.example", false},
      {"http://localhost", false},
      /* Refused: "null" and what is not scheme://host[:port]. */
      {"null", false},
      {"", false},
      {"localhost:3000", false},
      {"://127.0.0.1", false},
      {"1http://127.0.0.1", false},
      {"ht tp://127.0.0.1", false},
      {"http://", false},
      {"http://127.0.0.1/", false},
      {"http://127.0.0.1/path", false},
      {"http://user@127.0.0.1", false},
      {"http://127.0.0.1:0", false},
  };
  expect_verdicts(mcp__http_origin_allowed, list, cases, TU_COUNT(cases));
}
END_TEST

START_TEST(origin_refused_without_list_value_or_with_nul) {
  static const char *const list[] = {"127.0.0.1", NULL};
  static const char *const empty[] = {NULL};
  ck_assert(mcp__http_origin_allowed(list, "http://127.0.0.1", 16));
  ck_assert(!mcp__http_origin_allowed(empty, "http://127.0.0.1", 16));
  ck_assert(!mcp__http_origin_allowed(NULL, "http://127.0.0.1", 16));
  ck_assert(!mcp__http_origin_allowed(list, NULL, 0));
  ck_assert(!mcp__http_origin_allowed(list, "http://127.0.0.1\0", 17));
}
END_TEST

/* ---- Content-Type and Accept --------------------------------------------- */

START_TEST(content_type_json_only) {
  static const verdict cases[] = {
      {"application/json", true},
      {"Application/JSON", true},
      {" application/json ", true},
      {"application/json; charset=utf-8", true},
      {"application/json;charset=UTF-8", true},
      {"application/json; charset=\"utf-8\"", true},
      {"application/json; charset=utf8", true},
      {"application/json; foo=bar", true},
      /* Refused: another charset, another type, or a type it only starts. */
      {"application/json; charset=latin1", false},
      {"application/json; charset=utf-16", false},
      {"application/jsonx", false},
      {"application/json-patch+json", false},
      {"text/json", false},
      {"text/plain", false},
      {"application/x-www-form-urlencoded", false},
      {"", false},
  };
  for (size_t i = 0; i < TU_COUNT(cases); i++)
    ck_assert_msg(mcp__http_content_type_json(cases[i].value) ==
                      cases[i].allowed,
                  "Content-Type \"%s\" should be %s", cases[i].value,
                  cases[i].allowed ? "taken" : "refused");
  ck_assert(!mcp__http_content_type_json(NULL));
}
END_TEST

START_TEST(accept_masks) {
  static const unsigned J = MCP__HTTP_ACCEPT_JSON, S = MCP__HTTP_ACCEPT_SSE;
  static const struct {
    const char *value;
    unsigned mask;
  } cases[] = {
      {"application/json", J},
      {"text/event-stream", S},
      {"application/json, text/event-stream", J | S},
      {"TEXT/EVENT-STREAM ,APPLICATION/JSON", J | S},
      {"*/*", J | S},
      {"application/*", J},
      {"text/*", S},
      {"application/json;q=0.5", J},
      {"application/json;q=0.01", J},
      /* q=0 in any spelling takes a type out. */
      {"application/json;q=0, text/event-stream", S},
      {"application/json; q=0.000", 0},
      {"*/*;q=0", 0},
      {"text/event-stream;q=\"0\", application/json", J},
      {"text/html", 0},
      {"application/jsonx", 0},
      {"", 0},
  };
  for (size_t i = 0; i < TU_COUNT(cases); i++)
    ck_assert_msg(mcp__http_accept(cases[i].value) == cases[i].mask,
                  "Accept \"%s\": mask %u, expected %u", cases[i].value,
                  mcp__http_accept(cases[i].value), cases[i].mask);
  ck_assert_uint_eq(mcp__http_accept(NULL), 0);
}
END_TEST

/* ---- session ids, Mcp-Name, Last-Event-ID, versions --------------------- */

START_TEST(visible_ascii_session_ids) {
  ck_assert(mcp__http_visible_ascii("abc", 3, 256));
  ck_assert(mcp__http_visible_ascii("!~", 2, 2)); /* the whole range, at max */
  ck_assert(!mcp__http_visible_ascii("abc", 3, 2));
  ck_assert(!mcp__http_visible_ascii("", 0, 256));
  ck_assert(!mcp__http_visible_ascii(NULL, 0, 256));
  ck_assert(!mcp__http_visible_ascii("a b", 3, 256));
  ck_assert(!mcp__http_visible_ascii("a\tb", 3, 256));
  ck_assert(!mcp__http_visible_ascii("a\x7f", 2, 256));
  ck_assert(!mcp__http_visible_ascii("\xc3\xa9", 2, 256));
  ck_assert(!mcp__http_visible_ascii("a\0b", 3, 256));
}
END_TEST

/* Decodes value: 0 with the text expected, or the refusal's code. */
static void expect_decoded(const char *value, int rc, const char *expected) {
  char *out = NULL;
  size_t len = 0;
  int got = mcp__http_header_decode(value, strlen(value), &out, &len);
  ck_assert_msg(got == rc, "\"%s\": %d, expected %d", value, got, rc);
  if (rc == 0) {
    ck_assert_uint_eq(len, strlen(expected));
    ck_assert_str_eq(out, expected);
    mcp_free(out);
  } else {
    ck_assert_ptr_null(out);
  }
}

START_TEST(header_values_plain_or_base64) {
  expect_decoded("tools/call", 0, "tools/call");
  expect_decoded("a name with spaces", 0, "a name with spaces");
  expect_decoded("", 0, "");
  expect_decoded("=?base64?SGVsbG8=?=", 0, "Hello");
  expect_decoded("=?base64?w6k=?=", 0, "\xc3\xa9");
  expect_decoded("=?base64?"
                 "?=",
                 0, ""); /* apart: "??=" is a trigraph */
  /* Refused: control characters and raw UTF-8 in a plain value... */
  expect_decoded("tab\there", MCP_EINVAL, NULL);
  expect_decoded("caf\xc3\xa9", MCP_EINVAL, NULL);
  expect_decoded("line\r\nbreak", MCP_EINVAL, NULL);
  /* ... and base64 that is not canonical, or decodes a NUL. */
  expect_decoded("=?base64?SGVsbG8?=", MCP_EINVAL, NULL);
  expect_decoded("=?base64?SGV=bG8=?=", MCP_EINVAL, NULL);
  expect_decoded("=?base64?SGVsbG8-?=", MCP_EINVAL, NULL);
  expect_decoded("=?base64?AA==?=", MCP_EINVAL, NULL);
  char *out = NULL;
  size_t len = 0;
  ck_assert_int_eq(mcp__http_header_decode(NULL, 0, &out, &len), MCP_EINVAL);
}
END_TEST

/* Out of memory is a 500, a malformed value a 400: the value is judged
 * whole before anything is allocated, so no allocation failure is ever
 * taken for a malformed value. */
START_TEST(header_decode_out_of_memory) {
  static const char *const good[] = {"plain", "=?base64?SGVsbG8=?="};
  static const char *const bad[] = {"tab\there", "=?base64?AA==?="};
  char *out = NULL;
  size_t len = 0;
  for (size_t i = 0; i < TU_COUNT(good); i++) {
    tu_alloc_install(1);
    ck_assert_int_eq(
        mcp__http_header_decode(good[i], strlen(good[i]), &out, &len),
        MCP_ENOMEM);
    ck_assert_int_eq(tu_alloc_disarm(), 1);
    tu_assert_no_leak(1);
    tu_alloc_remove();
  }
  for (size_t i = 0; i < TU_COUNT(bad); i++) {
    tu_alloc_install(1);
    ck_assert_int_eq(
        mcp__http_header_decode(bad[i], strlen(bad[i]), &out, &len),
        MCP_EINVAL);
    ck_assert_int_eq(tu_alloc_disarm(), 0);
    tu_alloc_remove();
  }
}
END_TEST

START_TEST(last_event_ids) {
  static const struct {
    const char *value;
    bool ok;
    unsigned stream;
    unsigned long long seq;
  } cases[] = {
      {"1-0", true, 1, 0},
      {"7-42", true, 7, 42},
      {"4294967295-9999999999999999999", true, 4294967295u,
       9999999999999999999ull},
      /* At most 19 digits of sequence: 2^64 - 1 has 20. */
      {"1-18446744073709551615", false, 0, 0},
      {"0-1", false, 0, 0}, /* stream numbers start at 1 */
      {"4294967296-1", false, 0, 0},
      {"12345678901-1", false, 0, 0},
      {"1-18446744073709551616", false, 0, 0},
      {"1-", false, 0, 0},
      {"-1", false, 0, 0},
      {"1", false, 0, 0},
      {"1-+2", false, 0, 0},
      {"1-2x", false, 0, 0},
      {"1-2 ", false, 0, 0},
      {" 1-2", false, 0, 0},
      {"a-1", false, 0, 0},
      {"", false, 0, 0},
  };
  for (size_t i = 0; i < TU_COUNT(cases); i++) {
    unsigned stream = 99;
    unsigned long long seq = 99;
    bool ok = mcp__http_event_id_parse(cases[i].value, &stream, &seq);
    ck_assert_msg(ok == cases[i].ok, "Last-Event-ID \"%s\" should be %s",
                  cases[i].value, cases[i].ok ? "read" : "refused");
    if (ok) {
      ck_assert_uint_eq(stream, cases[i].stream);
      ck_assert(seq == cases[i].seq);
    } else { /* nothing written on a refusal */
      ck_assert_uint_eq(stream, 99);
      ck_assert(seq == 99);
    }
  }
  unsigned stream;
  unsigned long long seq;
  ck_assert(!mcp__http_event_id_parse(NULL, &stream, &seq));
}
END_TEST

/* Which versions the transport routes as a legacy session's: the rows of
 * the one version table below the modern one (which of them a session may
 * negotiate is the engine's to say). */
START_TEST(protocol_version_routing) {
  ck_assert(mcp__http_legacy_version("2025-11-25"));
  ck_assert(mcp__http_legacy_version("2025-06-18"));
  ck_assert(mcp__http_legacy_version("2025-03-26"));
  ck_assert(mcp__http_legacy_version("2024-11-05"));
  ck_assert(!mcp__http_legacy_version("2026-07-28"));
  ck_assert_str_eq(MCP__HTTP_MODERN_VERSION, "2026-07-28");
  ck_assert(!mcp__http_legacy_version("2025-11-26"));
  ck_assert(!mcp__http_legacy_version("2025-11-25 "));
  ck_assert(!mcp__http_legacy_version(""));
  ck_assert(!mcp__http_legacy_version(NULL));
}
END_TEST

int main(void) {
  Suite *s = suite_create("http_check");
  TCase *t = tu_tcase(s, "host", NULL, NULL, 0);
  tcase_add_test(t, default_hosts_are_loopback_names);
  tcase_add_test(t, host_against_the_defaults);
  tcase_add_test(t, host_entries_with_ports_and_bare_v6);
  tcase_add_test(t, host_refused_without_list_value_or_with_nul);
  t = tu_tcase(s, "origin", NULL, NULL, 0);
  tcase_add_test(t, origin_whole_origins_and_hosts);
  tcase_add_test(t, origin_refused_without_list_value_or_with_nul);
  t = tu_tcase(s, "media_types", NULL, NULL, 0);
  tcase_add_test(t, content_type_json_only);
  tcase_add_test(t, accept_masks);
  t = tu_tcase(s, "values", NULL, NULL, 0);
  tcase_add_test(t, visible_ascii_session_ids);
  tcase_add_test(t, header_values_plain_or_base64);
  tcase_add_test(t, header_decode_out_of_memory);
  tcase_add_test(t, last_event_ids);
  tcase_add_test(t, protocol_version_routing);
  return tu_run(s);
}
