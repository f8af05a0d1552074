/* mcp-check's --calls reader (mcp-check/calls.c): JSON lines of name and
 * arguments, comments and blank lines skipped, every error naming the file
 * and line, and its bounds (line length, number of calls). */
#include <check.h>
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "calls.h"
#include "testutil.h"

static char path[64];

static void make_path(void) {
  snprintf(path, sizeof path, "/tmp/mcpc-calls-XXXXXX");
  int fd = mkstemp(path);
  ck_assert_int_ge(fd, 0);
  close(fd);
}

static void drop_path(void) { unlink(path); }

/* Writes len bytes of text as the file. */
static void put(const char *text, size_t len) {
  FILE *f = fopen(path, "wb");
  ck_assert_ptr_nonnull(f);
  ck_assert_uint_eq(fwrite(text, 1, len, f), len);
  ck_assert_int_eq(fclose(f), 0);
}

static void put_str(const char *text) { put(text, strlen(text)); }

/* Reads the file expecting failure; asserts why names the file at line
 * (0: no line) and contains what. */
static void fails(unsigned line, const char *what) {
  mcpc_call *c = (mcpc_call *)&c;
  size_t n = 7;
  char why[256];
  ck_assert_int_eq(mcpc_calls_read(path, &c, &n, why, sizeof why), -1);
  ck_assert_ptr_null(c);
  ck_assert_uint_eq(n, 0);
  char want[128];
  if (line)
    snprintf(want, sizeof want, "%s:%u: ", path, line);
  else
    snprintf(want, sizeof want, "%s: ", path);
  ck_assert_msg(strncmp(why, want, strlen(want)) == 0, "why: %s", why);
  ck_assert_msg(strstr(why, what) != NULL, "why: %s", why);
}

START_TEST(reads_lines_skipping_comments) {
  put_str("# the calls\n"
          "\n"
          "{\"name\": \"write_file\", \"arguments\": {\"path\": \"@DIR@/a\"}}\n"
          "   \t\n"
          "  # indented comment\n"
          "{\"arguments\": {\"n\": 1}, \"name\": \"count\"}\r\n"
          "{\"name\": \"noargs\"}");
  mcpc_call *c = NULL;
  size_t n = 0;
  char why[256] = "";
  ck_assert_int_eq(mcpc_calls_read(path, &c, &n, why, sizeof why), 0);
  ck_assert_uint_eq(n, 3);
  ck_assert_str_eq(c[0].name, "write_file");
  ck_assert_uint_eq(c[0].line, 3);
  ck_assert_str_eq(
      cJSON_GetObjectItemCaseSensitive(c[0].arguments, "path")->valuestring,
      "@DIR@/a");
  ck_assert_str_eq(c[1].name, "count");
  ck_assert_uint_eq(c[1].line, 6);
  ck_assert_int_eq(
      cJSON_GetObjectItemCaseSensitive(c[1].arguments, "n")->valueint, 1);
  ck_assert_str_eq(c[2].name, "noargs");
  ck_assert_uint_eq(c[2].line, 7);
  ck_assert(cJSON_IsObject(c[2].arguments));
  ck_assert_ptr_null(c[2].arguments->child);
  mcpc_calls_free(c, n);
}
END_TEST

START_TEST(empty_file_has_no_calls) {
  put_str("# nothing\n\n");
  mcpc_call *c = (mcpc_call *)&c;
  size_t n = 9;
  char why[64];
  ck_assert_int_eq(mcpc_calls_read(path, &c, &n, why, sizeof why), 0);
  ck_assert_ptr_null(c);
  ck_assert_uint_eq(n, 0);
  mcpc_calls_free(NULL, 0);
}
END_TEST

START_TEST(missing_file) {
  drop_path();
  fails(0, "No such file");
}
END_TEST

START_TEST(bad_lines_name_their_line) {
  static const struct {
    const char *text;
    unsigned line;
    const char *what;
  } cases[] = {
      {"{\"name\":\"a\"}\n{\"name\": \n", 2, "not valid JSON"},
      {"{\"name\":\"a\"} x\n", 1, "not valid JSON"},
      {"\n\n[1]\n", 3, "not a JSON object"},
      {"\"x\"\n", 1, "not a JSON object"},
      {"{}\n", 1, "\"name\" must be"},
      {"{\"name\": \"\"}\n", 1, "\"name\" must be"},
      {"{\"name\": 3}\n", 1, "\"name\" must be"},
      {"{\"name\": \"a\", \"arguments\": []}\n", 1, "\"arguments\" must be"},
      {"{\"name\": \"a\", \"arguments\": null}\n", 1, "\"arguments\" must be"},
      {"{\"name\": \"a\", \"argument\": {}}\n", 1, "unknown or repeated"},
      {"{\"name\": \"a\", \"name\": \"b\"}\n", 1, "unknown or repeated"},
      {"{\"name\":\"a\"}\n{\"name\":\"b\"}\n{\"name\":\"c\",\"arguments\":1}",
       3, "\"arguments\" must be"},
  };
  for (size_t i = 0; i < TU_COUNT(cases); i++) {
    put_str(cases[i].text);
    fails(cases[i].line, cases[i].what);
  }
}
END_TEST

START_TEST(nul_byte_refused) {
  put("{\"name\":\"a\"}\n{\"name\":\"b\0\"}\n", 28);
  fails(2, "NUL byte");
}
END_TEST

/* A line of exactly the maximum is read; one byte more is refused with its
 * line number, the rest of the file unread. */
START_TEST(line_length_bound) {
  size_t max = MCPC_CALLS_MAX_LINE;
  char *text = malloc(2 * max + 64);
  ck_assert_ptr_nonnull(text);
  const char *head = "{\"name\":\"a\",\"arguments\":{\"s\":\"";
  const char *tail = "\"}}";
  size_t fill = max - strlen(head) - strlen(tail);
  size_t n = 0;
  memcpy(text, head, strlen(head));
  n += strlen(head);
  memset(text + n, 'x', fill);
  n += fill;
  memcpy(text + n, tail, strlen(tail));
  n += strlen(tail);
  text[n++] = '\n';
  put(text, n);
  mcpc_call *c = NULL;
  size_t count = 0;
  char why[256] = "";
  ck_assert_int_eq(mcpc_calls_read(path, &c, &count, why, sizeof why), 0);
  ck_assert_uint_eq(count, 1);
  mcpc_calls_free(c, count);
  /* The same line one byte longer, as the second line. */
  memmove(text + 14, text, n);
  memcpy(text, "{\"name\":\"b\"}\n", 13);
  text[13] = ' ';
  put(text, n + 14);
  fails(2, "line longer than");
  free(text);
}
END_TEST

START_TEST(call_count_bound) {
  FILE *f = fopen(path, "w");
  ck_assert_ptr_nonnull(f);
  for (unsigned i = 0; i < MCPC_CALLS_MAX; i++)
    fprintf(f, "{\"name\":\"t%u\"}\n", i);
  ck_assert_int_eq(fclose(f), 0);
  mcpc_call *c = NULL;
  size_t n = 0;
  char why[256] = "";
  ck_assert_int_eq(mcpc_calls_read(path, &c, &n, why, sizeof why), 0);
  ck_assert_uint_eq(n, MCPC_CALLS_MAX);
  ck_assert_str_eq(c[MCPC_CALLS_MAX - 1].name, "t4095");
  mcpc_calls_free(c, n);
  f = fopen(path, "a");
  ck_assert_ptr_nonnull(f);
  fputs("# one more\n{\"name\":\"over\"}\n", f);
  ck_assert_int_eq(fclose(f), 0);
  fails(MCPC_CALLS_MAX + 2, "more than 4096 calls");
}
END_TEST

/* A why of size 0 is never written; a short one is cut, terminated. */
START_TEST(why_buffer_bounds) {
  put_str("[1]\n");
  mcpc_call *c = NULL;
  size_t n = 0;
  char why[8] = "keep";
  ck_assert_int_eq(mcpc_calls_read(path, &c, &n, why, 0), -1);
  ck_assert_str_eq(why, "keep");
  ck_assert_int_eq(mcpc_calls_read(path, &c, &n, why, sizeof why), -1);
  ck_assert_uint_eq(strlen(why), sizeof why - 1);
}
END_TEST

int main(void) {
  Suite *s = suite_create("calls");
  TCase *t = tu_tcase(s, "read", make_path, drop_path, 0);
  tcase_add_test(t, reads_lines_skipping_comments);
  tcase_add_test(t, empty_file_has_no_calls);
  tcase_add_test(t, missing_file);
  t = tu_tcase(s, "errors", make_path, drop_path, 0);
  tcase_add_test(t, bad_lines_name_their_line);
  tcase_add_test(t, nul_byte_refused);
  tcase_add_test(t, why_buffer_bounds);
  t = tu_tcase(s, "bounds", make_path, drop_path, 0);
  tcase_add_test(t, line_length_bound);
  tcase_add_test(t, call_count_bound);
  return tu_run(s);
}
