/* test_check.c: mcp-check's own modules, driven directly: the hints check
 * and the tiers, and tool resolution read from tools/list and tools/resolve
 * (hints.c), the session declaring resolution and asking tools/resolve
 * (session.c), the report and its JSON and JUnit forms
 * (report.c), the command line (opts.c), the behaviour judgement on real
 * files (behave.c, digest.c), the child process and its group (proc.c),
 * and one stdio exchange (conn.c). */
#define _GNU_SOURCE
#include "behave.h"
#include "conn.h"
#include "digest.h"
#include "hints.h"
#include "opts.h"
#include "proc.h"
#include "report.h"
#include "session.h"

#include <check.h>
#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

static void read_hints(const char *json, int hint[4], int eff[4]) {
  cJSON *t = cJSON_Parse(json);
  ck_assert_ptr_nonnull(t);
  mcpc_hints_read(t, hint, eff);
  cJSON_Delete(t);
}

START_TEST(hints_absent_fall_back) {
  int h[4], e[4];
  read_hints("{\"name\":\"t\"}", h, e);
  for (int i = 0; i < 4; i++)
    ck_assert_int_eq(h[i], MCPC_HINT_ABSENT);
  ck_assert_int_eq(e[MCPC_READ_ONLY], 0);
  ck_assert_int_eq(e[MCPC_DESTRUCTIVE], 1);
  ck_assert_int_eq(e[MCPC_IDEMPOTENT], 0);
  ck_assert_int_eq(e[MCPC_OPEN_WORLD], 1);
  ck_assert_str_eq(mcpc_hints_tier(e), "block unless pre-authorized");
}
END_TEST

START_TEST(hints_read_only_derives) {
  int h[4], e[4];
  read_hints("{\"annotations\":{\"readOnlyHint\":true,\"openWorldHint\":"
             "false,\"destructiveHint\":\"yes\"}}",
             h, e);
  ck_assert_int_eq(h[MCPC_READ_ONLY], 1);
  ck_assert_int_eq(h[MCPC_DESTRUCTIVE], MCPC_HINT_INVALID);
  ck_assert_int_eq(e[MCPC_DESTRUCTIVE], 0);
  ck_assert_int_eq(e[MCPC_IDEMPOTENT], 1);
  ck_assert_str_eq(mcpc_hints_tier(e), "run silently");
}
END_TEST

START_TEST(hints_tiers) {
  static const struct {
    int e[4];
    const char *tier;
  } rows[] = {
      {{0, 0, 1, 0}, "ask once"},
      {{0, 0, 0, 0}, "ask once"},
      {{0, 1, 1, 0}, "always ask"},
      {{0, 0, 1, 1}, "always ask"},
      {{0, 1, 0, 1}, "block unless pre-authorized"},
      {{1, 0, 1, 1}, "run silently"},
  };
  for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
    ck_assert_str_eq(mcpc_hints_tier(rows[i].e), rows[i].tier);
}
END_TEST

/* How many findings the hints check gives each set of annotations. */
START_TEST(hints_findings) {
  static const struct {
    const char *annotations;
    int findings;
  } rows[] = {
      {"{\"readOnlyHint\":false,\"destructiveHint\":false,\"idempotentHint\":"
       "true,\"openWorldHint\":false}",
       0},
      {"{\"readOnlyHint\":true,\"destructiveHint\":false,\"idempotentHint\":"
       "true,\"openWorldHint\":false}",
       0},
      {"{\"readOnlyHint\":true,\"openWorldHint\":false}", 2},
      {"{}", 4},
      {"{\"readOnlyHint\":true,\"destructiveHint\":true,\"idempotentHint\":"
       "true,\"openWorldHint\":false}",
       1},
      {"{\"readOnlyHint\":true,\"destructiveHint\":false,\"idempotentHint\":"
       "false,\"openWorldHint\":false}",
       1},
      {"{\"readOnlyHint\":1,\"destructiveHint\":false,\"idempotentHint\":"
       "false,\"openWorldHint\":false}",
       1},
  };
  for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
    char json[512];
    int h[4], e[4];
    mcpc_report r = {0};
    snprintf(json, sizeof json, "{\"annotations\":%s}", rows[i].annotations);
    read_hints(json, h, e);
    ck_assert_int_eq(mcpc_hints_check(&r, "t", h), rows[i].findings);
    ck_assert_uint_eq(r.n_findings, (size_t)rows[i].findings);
    for (size_t k = 0; k < r.n_findings; k++) {
      ck_assert_str_eq(r.findings[k].tool, "t");
      ck_assert_ptr_nonnull(strstr(r.findings[k].fix, "Hint"));
    }
    mcpc_report_clear(&r);
  }
}
END_TEST

static void one_tool(mcpc_report *r, const char *name) {
  r->tools = calloc(1, sizeof *r->tools);
  ck_assert_ptr_nonnull(r->tools);
  r->tools[0].name = strdup(name);
  r->tools[0].tier = "ask once";
  for (int i = 0; i < 4; i++)
    r->tools[0].hint[i] = r->tools[0].effective[i] = 0;
  r->n_tools = 1;
}

START_TEST(report_json_shape) {
  mcpc_report r = {0};
  cJSON *j, *f;
  one_tool(&r, "w<r>i&te");
  r.transport = "stdio";
  ck_assert_int_eq(mcpc_report_add(&r, MCPC_SCOPES, "w<r>i&te", "scopes",
                                   "certain", "ran \"anyway\"", "scope it"),
                   0);
  ck_assert_int_eq(mcpc_report_add(&r, MCPC_SCOPES, NULL, "authorization",
                                   "certain", "none", "add it"),
                   0);
  ck_assert_int_eq(mcpc_report_note(&r, "note %d", 1), 0);
  ck_assert_int_eq(mcpc_report_outside(&r, "create %s", "/x"), 0);
  mcpc_report_settle(&r, MCPC_SCOPES, 0, 1);
  mcpc_report_settle(&r, MCPC_HINTS, 0, 1);
  ck_assert_int_eq(r.tools[0].state[MCPC_SCOPES], MCPC_FAILED);
  ck_assert_int_eq(r.tools[0].state[MCPC_HINTS], MCPC_PASSED);
  ck_assert_uint_eq(mcpc_report_count(&r, MCPC_SCOPES, NULL), 1);
  j = mcpc_report_json(&r, 1);
  ck_assert_ptr_nonnull(j);
  ck_assert(cJSON_IsNull(
      cJSON_GetObjectItem(cJSON_GetObjectItem(j, "server"), "name")));
  f = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "findings"), 1);
  ck_assert(cJSON_IsNull(cJSON_GetObjectItem(f, "tool")));
  ck_assert_str_eq(cJSON_GetObjectItem(f, "hint")->valuestring,
                   "authorization");
  ck_assert_str_eq(
      cJSON_GetObjectItem(
          cJSON_GetObjectItem(
              cJSON_GetArrayItem(cJSON_GetObjectItem(j, "tools"), 0), "checks"),
          "scopes")
          ->valuestring,
      "failed");
  ck_assert_int_eq(cJSON_GetObjectItem(j, "exitCode")->valueint, 1);
  ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(j, "notes")), 1);
  cJSON_Delete(j);
  mcpc_report_clear(&r);
  ck_assert_ptr_null(r.findings);
}
END_TEST

START_TEST(report_junit_escapes) {
  mcpc_report r = {0};
  char buf[8192];
  size_t n;
  FILE *f = tmpfile();
  ck_assert_ptr_nonnull(f);
  one_tool(&r, "a<b");
  mcpc_report_add(&r, MCPC_HINTS, "a<b", "readOnlyHint", "certain",
                  "x & \"y\"\001", "fix");
  ck_assert_int_eq(mcpc_report_junit(&r, f), 0);
  rewind(f);
  n = fread(buf, 1, sizeof buf - 1, f);
  buf[n] = '\0';
  fclose(f);
  ck_assert_ptr_nonnull(strstr(buf, "name=\"a&lt;b\""));
  ck_assert_ptr_nonnull(strstr(buf, "x &amp; &quot;y&quot;?"));
  ck_assert_ptr_null(strchr(buf, '\001'));
  ck_assert_ptr_nonnull(strstr(buf, "<testsuite name=\"behaviour\""));
  mcpc_report_print(&r, stdout, 1);
  mcpc_report_clear(&r);
}
END_TEST

/* The words stay in a static argv: the options point into it. */
static int parse(mcpc_opts *o, char *why, const char *const *words) {
  static char *argv[16];
  int argc = 0;
  argv[argc++] = "mcp-check";
  for (; *words; words++)
    argv[argc++] = (char *)*words;
  argv[argc] = NULL;
  return mcpc_opts_parse(argc, argv, o, why, 256);
}

START_TEST(opts_rules) {
  mcpc_opts o;
  char why[256];
  const char *ok1[] = {"--observe", "--timeout", "3", "--",
                       "srv",       "--token",   NULL};
  const char *ok2[] = {"--token",      "T", "--read-token-cmd", "c",
                       "http://h/mcp", NULL};
  const char *bad[][6] = {
      {"--timeout", "x", "--", "s", NULL},
      {"--timeout", NULL},
      {"--launch", "c", "--", "s", NULL},
      {"a", "b", NULL},
      {"--read-token", "a", "--read-token-cmd", "b", "http://h", NULL},
  };
  ck_assert_int_eq(parse(&o, why, ok1), 0);
  ck_assert(o.observe);
  ck_assert_uint_eq(o.timeout_s, 3);
  ck_assert_str_eq(o.command[0], "srv");
  ck_assert_str_eq(o.command[1], "--token"); /* the server's, untouched */
  ck_assert_int_eq(parse(&o, why, ok2), 0);
  ck_assert_str_eq(o.read_token_cmd, "c");
  ck_assert_uint_eq(o.launch_timeout_s, 30);
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    ck_assert_int_eq(parse(&o, why, bad[i]), -1);
  ck_assert_ptr_nonnull(strstr(mcpc_usage, "exit status"));
}
END_TEST

/* ---- behaviour, on real files ------------------------------------------ */

static char dir[256];

/* A scratch folder under $TMPDIR (else the system's). */
static void make_dir(void) {
  const char *tmp = getenv("TMPDIR");
  snprintf(dir, sizeof dir, "%s/mcpc-test-XXXXXX",
           tmp && *tmp && strlen(tmp) < 200 ? tmp : P_tmpdir);
  ck_assert_ptr_nonnull(mkdtemp(dir));
}

static void put(const char *name, const char *text) {
  char path[512];
  FILE *f;
  snprintf(path, sizeof path, "%s/%s", dir, name);
  f = fopen(path, "w");
  ck_assert_ptr_nonnull(f);
  fputs(text, f);
  fclose(f);
}

static void rm_dir(void) {
  char cmd[512];
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  ck_assert_int_eq(system(cmd), 0);
}

/* An effect on dir/name as the observer records it: the file's state
 * taken before. */
static mcpc_effect effect(const char *op, const char *name, const char *name2,
                          int flags) {
  mcpc_effect e;
  const char *path;
  memset(&e, 0, sizeof e);
  snprintf(e.op, sizeof e.op, "%s", op);
  snprintf(e.syscall, sizeof e.syscall, "test");
  snprintf(e.target, sizeof e.target, "%s/%s", dir, name);
  if (name2)
    snprintf(e.target2, sizeof e.target2, "%s/%s", dir, name2);
  e.flags = flags;
  path = name2 ? e.target2 : e.target;
  if (access(path, F_OK) == 0) {
    e.existed = 1;
    e.digested = mcpc_digest_file(path, -1, e.digest, &e.size) == 0;
  }
  return e;
}

static const int additive[4] = {0, 0, 0, 0}, read_only[4] = {1, 0, 1, 0};

START_TEST(behaviour_judged) {
  mcpc_report r = {0};
  mcpc_effect e[2];
  make_dir();
  /* Read-only that writes: certain. */
  e[0] = effect("create", "new", NULL, O_CREAT | O_WRONLY);
  ck_assert_int_eq(mcpc_behaviour_judge(&r, "t", read_only, 0, "c", e, 1), 1);
  ck_assert_str_eq(r.findings[0].hint, "readOnlyHint");
  /* Additive that removes what existed: certain. */
  put("old", "data");
  e[0] = effect("remove", "old", NULL, 0);
  unlink(e[0].target);
  ck_assert_int_eq(mcpc_behaviour_judge(&r, "t", additive, 0, "c", e, 1), 1);
  ck_assert_str_eq(r.findings[1].hint, "destructiveHint");
  ck_assert_str_eq(r.findings[1].grade, "certain");
  /* Additive that removes what it created in the same call: nothing. */
  e[0] = effect("remove", "never", NULL, 0);
  ck_assert_int_eq(mcpc_behaviour_judge(&r, "t", additive, 0, "c", e, 1), 0);
  /* The safe-write idiom keeping the old bytes at the start: nothing. */
  put("log", "one\n");
  put("tmp", "");
  e[0] = effect("create", "tmp", NULL, O_CREAT | O_WRONLY);
  e[1] = effect("rename", "tmp", "log", 0);
  put("log", "one\ntwo\n");
  ck_assert_int_eq(mcpc_behaviour_judge(&r, "t", additive, 0, "c", e, 2), 0);
  /* The same losing the old bytes: possible. */
  e[1] = effect("rename", "tmp", "log", 0);
  put("log", "two\n");
  ck_assert_int_eq(mcpc_behaviour_judge(&r, "t", additive, 0, "c", e, 2), 1);
  ck_assert_str_eq(r.findings[2].grade, "possible");
  /* Bytes changed in place: certain. */
  e[0] = effect("write", "log", NULL, O_WRONLY);
  put("log", "TWO\n");
  ck_assert_int_eq(mcpc_behaviour_judge(&r, "t", additive, 0, "c", e, 1), 1);
  ck_assert_str_eq(r.findings[3].grade, "certain");
  /* Closed world that connects; an open-world one may. */
  e[0] = effect("connect", "x", NULL, 0);
  snprintf(e[0].target, sizeof e[0].target, "127.0.0.1:9");
  ck_assert_int_eq(mcpc_behaviour_judge(&r, "t", additive, 0, "c", e, 1), 1);
  ck_assert_str_eq(r.findings[4].hint, "openWorldHint");
  {
    const int open[4] = {0, 0, 0, 1};
    ck_assert_int_eq(mcpc_behaviour_judge(&r, "t", open, 0, "c", e, 1), 0);
  }
  mcpc_report_clear(&r);
  rm_dir();
}
END_TEST

START_TEST(behaviour_repeat) {
  mcpc_report r = {0};
  mcpc_effect e;
  make_dir();
  /* Rewritten with the same bytes: idempotent. */
  put("state", "on\n");
  e = effect("write", "state", NULL, O_WRONLY | O_TRUNC);
  put("state", "on\n");
  ck_assert_int_eq(mcpc_behaviour_repeat(&r, "t", 0, "c", &e, 1), 0);
  /* Appended again: not. */
  e = effect("write", "state", NULL, O_WRONLY | O_APPEND);
  put("state", "on\non\n");
  ck_assert_int_eq(mcpc_behaviour_repeat(&r, "t", 0, "c", &e, 1), 1);
  ck_assert_str_eq(r.findings[0].hint, "idempotentHint");
  /* Created anew where there was nothing: changed. */
  e = effect("create", "fresh", NULL, O_CREAT | O_WRONLY);
  put("fresh", "x");
  ck_assert_int_eq(mcpc_behaviour_repeat(&r, "t", 0, "c", &e, 1), 1);
  ck_assert(mcpc_kept(&e, "/nonexistent") == 1); /* it did not exist */
  mcpc_report_clear(&r);
  rm_dir();
}
END_TEST

START_TEST(digest_bounds) {
  unsigned char d[32];
  long long size;
  make_dir();
  put("f", "abc");
  {
    char path[512];
    snprintf(path, sizeof path, "%s/f", dir);
    ck_assert_int_eq(mcpc_digest_file(path, -1, d, &size), 0);
    ck_assert_int_eq(size, 3);
    /* SHA-256("abc") begins ba7816bf. */
    ck_assert_uint_eq(d[0], 0xba);
    ck_assert_uint_eq(d[1], 0x78);
    ck_assert_int_eq(mcpc_digest_file(path, 4, d, &size), -1);
    ck_assert_int_eq(mcpc_digest_file(dir, -1, d, &size), -1);
  }
  rm_dir();
}
END_TEST

/* ---- the child process --------------------------------------------------- */

/* What the server left behind goes with it: the test is the subreaper of
 * its orphans, so it sees them killed and reaps them. */
START_TEST(proc_group_stopped) {
  char *argv[] = {"/bin/sh", "-c", "sleep 100 & exec sleep 100", NULL};
  char why[256], how[64];
  mcpc_proc p;
  int status = 0;
  pid_t orphan;
  ck_assert_int_eq(prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0), 0);
  ck_assert_int_eq(mcpc_proc_start(argv, 1, NULL, &p, why, sizeof why), 0);
  ck_assert(mcpc_proc_alive(&p));
  mcpc_proc_stop(&p, 100);
  mcpc_proc_describe(&p, how, sizeof how);
  ck_assert_str_eq(how, "killed by signal 15");
  orphan = waitpid(-1, &status, 0);
  ck_assert_int_gt(orphan, 0);
  ck_assert(WIFSIGNALED(status));
  ck_assert_int_eq(waitpid(-1, NULL, WNOHANG), -1);
  ck_assert_int_eq(errno, ECHILD);
  mcpc_proc_stop(&p, 100); /* twice is harmless */
}
END_TEST

START_TEST(proc_exec_fails) {
  char *argv[] = {"/nonexistent/server", NULL};
  char why[256];
  mcpc_proc p;
  ck_assert_int_eq(mcpc_proc_start(argv, 1, NULL, &p, why, sizeof why), -1);
  ck_assert_ptr_nonnull(strstr(why, "No such file"));
  ck_assert_int_eq(waitpid(-1, NULL, WNOHANG), -1);
}
END_TEST

static int failing_watch(char *why, size_t size) {
  snprintf(why, size, "watch refused");
  return -1;
}

START_TEST(proc_watch_fails) {
  char *argv[] = {"/bin/true", NULL};
  char why[256];
  mcpc_proc p;
  ck_assert_int_eq(mcpc_proc_start(argv, 1, failing_watch, &p, why, sizeof why),
                   -1);
  ck_assert_ptr_nonnull(strstr(why, "watch refused"));
}
END_TEST

/* One exchange over pipes: the server pings us first, says something
 * that is not our answer, then answers; then a server that never does. */
START_TEST(conn_stdio_exchange) {
  char *argv[] = {
      "/bin/sh", "-c",
      "read l; echo '{\"jsonrpc\":\"2.0\",\"id\":\"s\",\"method\":\"ping\"}';"
      " read pong; echo \"$pong\" >&2; echo;"
      " echo '{\"jsonrpc\":\"2.0\",\"id\":9,\"result\":{}}';"
      " echo '{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"ok\":true}}';"
      " sleep 100",
      NULL};
  char why[256], tail[256];
  mcpc_proc p;
  mcpc_conn *c;
  mcpc_exchange x = {.timeout_ms = 5000};
  cJSON *req = cJSON_Parse("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"m\"}");
  ck_assert_int_eq(mcpc_proc_start(argv, 1, NULL, &p, why, sizeof why), 0);
  c = mcpc_conn_stdio(p.in_fd, p.out_fd);
  ck_assert_int_eq(mcpc_conn_exchange(c, req, &x, why, sizeof why), 0);
  ck_assert(cJSON_IsTrue(
      cJSON_GetObjectItem(cJSON_GetObjectItem(x.response, "result"), "ok")));
  mcpc_proc_log_tail(&p, tail, sizeof tail);
  ck_assert_ptr_nonnull(strstr(tail, "\"result\":{}")); /* our pong */
  x.timeout_ms = 200;
  ck_assert_int_eq(mcpc_conn_exchange(c, req, &x, why, sizeof why), -1);
  ck_assert_ptr_nonnull(strstr(why, "no answer"));
  mcpc_exchange_clear(&x);
  mcpc_conn_free(c);
  cJSON_Delete(req);
  mcpc_proc_stop(&p, 100);
}
END_TEST

/* ---- tool resolution ---------------------------------------------------- */

#define EXT "io.modelcontextprotocol/tool-resolution"

static int resolvable(const char *json) {
  cJSON *t = cJSON_Parse(json);
  int rc;
  ck_assert_ptr_nonnull(t);
  rc = mcpc_hints_resolvable(t);
  cJSON_Delete(t);
  return rc;
}

START_TEST(hints_resolvable_marker) {
  ck_assert_int_eq(resolvable("{\"name\":\"m\",\"_meta\":{\"" EXT
                              "\":{\"resolvable\":true},"
                              "\"x/y\":1}}"),
                   1);
  ck_assert_int_eq(resolvable("{\"name\":\"m\"}"), 0);
  ck_assert_int_eq(resolvable("{\"name\":\"m\",\"_meta\":[]}"), 0);
  ck_assert_int_eq(resolvable("{\"name\":\"m\",\"_meta\":{\"" EXT "\":true}}"),
                   0);
  ck_assert_int_eq(resolvable("{\"name\":\"m\",\"_meta\":{\"" EXT
                              "\":{\"resolvable\":"
                              "false}}}"),
                   0);
  ck_assert_int_eq(resolvable("{\"name\":\"m\",\"_meta\":{\"" EXT
                              "\":{\"resolvable\":"
                              "\"true\"}}}"),
                   0);
  ck_assert_int_eq(
      resolvable("{\"name\":\"m\",\"_meta\":{\"other\":{\"resolvable\":"
                 "true}}}"),
      0);
}
END_TEST

/* A tools/resolve result read against static hints. */
static int resolved(const char *json, const int statik[4], int out[4],
                    char *why) {
  cJSON *res = cJSON_Parse(json);
  int rc;
  ck_assert_ptr_nonnull(res);
  rc = mcpc_hints_resolved(res, "manage", statik, out, why, 256);
  cJSON_Delete(res);
  return rc;
}

START_TEST(hints_resolved_read) {
  /* manage: writes, destructive, not idempotent, closed world. */
  static const int manage[4] = {0, 1, 0, 0};
  static const struct {
    const char *json;
    int rc, out[4];
    const char *why;
  } rows[] = {
      {"{\"resultType\":\"complete\",\"name\":\"manage\",\"annotations\":{"
       "\"readOnlyHint\":true,\"destructiveHint\":false,\"idempotentHint\":"
       "true,\"openWorldHint\":false}}",
       0,
       {1, 0, 1, 0},
       NULL},
      /* Read-only derives the other two, whatever is written. */
      {"{\"annotations\":{\"readOnlyHint\":true,\"destructiveHint\":true,"
       "\"idempotentHint\":false}}",
       0,
       {1, 0, 1, 0},
       NULL},
      /* A hint left out keeps its static value. */
      {"{\"annotations\":{\"destructiveHint\":false}}", 0, {0, 0, 0, 0}, NULL},
      {"{\"annotations\":{}}", 0, {0, 1, 0, 0}, NULL},
      {"{\"annotations\":{\"readOnlyHint\":false,\"destructiveHint\":false,"
       "\"idempotentHint\":true,\"openWorldHint\":null}}",
       MCPC_RESOLVE_MALFORMED,
       {0},
       "openWorldHint is not a boolean"},
      {"{\"name\":\"manage\"}", MCPC_RESOLVE_MALFORMED, {0}, "no annotations"},
      {"{\"annotations\":[]}", MCPC_RESOLVE_MALFORMED, {0}, "no annotations"},
      {"{\"name\":\"other\",\"annotations\":{}}",
       MCPC_RESOLVE_MALFORMED,
       {0},
       "another tool"},
      {"{\"name\":7,\"annotations\":{}}",
       MCPC_RESOLVE_MALFORMED,
       {0},
       "another tool"},
      /* Looser than the static hints: closed world resolved open. */
      {"{\"annotations\":{\"openWorldHint\":true}}",
       MCPC_RESOLVE_LOOSER,
       {0},
       "openWorldHint: the tool is closed-world"},
  };
  for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
    int out[4] = {-9, -9, -9, -9};
    char why[256] = "";
    ck_assert_int_eq(resolved(rows[i].json, manage, out, why), rows[i].rc);
    if (rows[i].rc == 0)
      ck_assert_mem_eq(out, rows[i].out, sizeof out);
    else
      ck_assert_msg(strstr(why, rows[i].why) != NULL, "row %zu: %s", i, why);
  }
}
END_TEST

/* Each rule of the draft's bound, against the static hints it binds. */
START_TEST(hints_resolved_bound) {
  static const struct {
    int statik[4];
    const char *json, *rule;
  } rows[] = {
      {{1, 0, 1, 0},
       "{\"annotations\":{\"readOnlyHint\":false}}",
       "readOnlyHint"},
      {{0, 0, 0, 0},
       "{\"annotations\":{\"openWorldHint\":true}}",
       "openWorldHint"},
      {{0, 0, 0, 1},
       "{\"annotations\":{\"destructiveHint\":true}}",
       "destructiveHint"},
      {{0, 1, 1, 1},
       "{\"annotations\":{\"idempotentHint\":false}}",
       "idempotentHint"},
  };
  for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
    int out[4];
    char why[256] = "";
    ck_assert_int_eq(resolved(rows[i].json, rows[i].statik, out, why),
                     MCPC_RESOLVE_LOOSER);
    ck_assert_msg(strstr(why, rows[i].rule) != NULL, "row %zu: %s", i, why);
  }
  /* An idempotent tool resolved read-only is idempotent still. */
  {
    static const int st[4] = {0, 1, 1, 0};
    int out[4];
    char why[256];
    ck_assert_int_eq(
        resolved("{\"annotations\":{\"readOnlyHint\":true,\"idempotentHint\":"
                 "false}}",
                 st, out, why),
        0);
    ck_assert_int_eq(out[MCPC_IDEMPOTENT], 1);
  }
}
END_TEST

START_TEST(hints_describe_words) {
  static const int ro[4] = {1, 0, 1, 1}, w[4] = {0, 1, 0, 0};
  char buf[96];
  ck_assert_str_eq(mcpc_hints_describe(ro, buf, sizeof buf),
                   "read-only, open world");
  ck_assert_str_eq(mcpc_hints_describe(w, buf, sizeof buf),
                   "writes, destructive, not idempotent, closed world");
}
END_TEST

/* A finding judged against resolved hints says so, in every output. */
START_TEST(report_resolved_outputs) {
  mcpc_report r = {0};
  mcpc_effect e;
  cJSON *j, *t, *f;
  char buf[8192];
  size_t n;
  FILE *x = tmpfile();
  ck_assert_ptr_nonnull(x);
  one_tool(&r, "manage");
  r.tools[0].resolvable = 1;
  r.tools[0].resolutions = cJSON_Parse(
      "[{\"call\":\"c\",\"arguments\":{},\"resolved\":true,\"hints\":{}}]");
  memset(&e, 0, sizeof e);
  snprintf(e.op, sizeof e.op, "create");
  snprintf(e.syscall, sizeof e.syscall, "openat");
  snprintf(e.target, sizeof e.target, "/nowhere/seen");
  {
    static const int ro[4] = {1, 0, 1, 0};
    ck_assert_int_eq(mcpc_behaviour_judge(&r, "manage", ro, 1, "c", &e, 1), 1);
    ck_assert_int_eq(mcpc_behaviour_judge(&r, "manage", ro, 0, "c", &e, 1), 1);
  }
  ck_assert_int_eq(r.findings[0].resolved, 1);
  ck_assert_int_eq(r.findings[1].resolved, 0);
  ck_assert_ptr_nonnull(strstr(r.findings[0].evidence, "resolved read-only"));
  ck_assert_ptr_nonnull(strstr(r.findings[0].fix, "resolver"));
  ck_assert_ptr_null(strstr(r.findings[1].evidence, "resolved"));
  j = mcpc_report_json(&r, 1);
  ck_assert_ptr_nonnull(j);
  t = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "tools"), 0);
  ck_assert(cJSON_IsTrue(cJSON_GetObjectItem(t, "resolvable")));
  ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(t, "resolutions")),
                   1);
  f = cJSON_GetObjectItem(j, "findings");
  ck_assert(
      cJSON_IsTrue(cJSON_GetObjectItem(cJSON_GetArrayItem(f, 0), "resolved")));
  ck_assert(
      cJSON_IsFalse(cJSON_GetObjectItem(cJSON_GetArrayItem(f, 1), "resolved")));
  cJSON_Delete(j);
  ck_assert_int_eq(mcpc_report_junit(&r, x), 0);
  rewind(x);
  n = fread(buf, 1, sizeof buf - 1, x);
  buf[n] = '\0';
  fclose(x);
  ck_assert_ptr_nonnull(
      strstr(buf, "<property name=\"resolvable\" value=\"true\"/>"));
  ck_assert_ptr_nonnull(strstr(buf, ">certain (resolved hints): c: "));
  mcpc_report_clear(&r);
}
END_TEST

/* The session declares tool resolution at initialize, reads the server's
 * offer, and sends tools/resolve with the call's name and arguments. The
 * peer writes what it received to its standard error. */
START_TEST(session_resolve_wire) {
  char *argv[] = {
      "/bin/sh", "-c",
      "read l; echo \"$l\" >&2;"
      " echo '{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"protocolVersion\":"
      "\"2025-11-25\",\"capabilities\":{\"tools\":{},\"extensions\":{\"" EXT
      "\":{}}},\"serverInfo\":{\"name\":\"p\",\"version\":\"1\"}}}';"
      " read n; read l; echo \"$l\" >&2;"
      " echo '{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"resultType\":"
      "\"complete\",\"name\":\"m\",\"annotations\":{\"readOnlyHint\":true}}}';"
      " read l; echo '{\"jsonrpc\":\"2.0\",\"id\":3,\"error\":{\"code\":"
      "-32602,\"message\":\"tool m is not resolvable\"}}'; sleep 100",
      NULL};
  char why[256], tail[2048];
  mcpc_proc p;
  mcpc_conn *c;
  mcpc_session s;
  cJSON *args = cJSON_Parse("{\"action\":\"read\"}"), *res = NULL;
  ck_assert_int_eq(mcpc_proc_start(argv, 1, NULL, &p, why, sizeof why), 0);
  c = mcpc_conn_stdio(p.in_fd, p.out_fd);
  ck_assert_int_eq(
      mcpc_session_open(&s, c, NULL, "2025-11-25", 5000, why, sizeof why), 0);
  ck_assert_int_eq(s.resolution, 1);
  ck_assert_int_eq(
      mcpc_session_resolve(&s, "m", args, NULL, &res, why, sizeof why),
      MCPC_RAN);
  ck_assert_ptr_nonnull(res);
  ck_assert(cJSON_IsTrue(cJSON_GetObjectItem(
      cJSON_GetObjectItem(res, "annotations"), "readOnlyHint")));
  cJSON_Delete(res);
  ck_assert_int_eq(
      mcpc_session_resolve(&s, "m", args, NULL, &res, why, sizeof why),
      MCPC_RPC_ERROR);
  ck_assert_ptr_null(res);
  ck_assert_ptr_nonnull(strstr(why, "JSON-RPC -32602: tool m is not"));
  mcpc_proc_log_tail(&p, tail, sizeof tail);
  ck_assert_ptr_nonnull(
      strstr(tail, "\"capabilities\":{\"extensions\":{\"" EXT "\":{}}}"));
  ck_assert_ptr_nonnull(strstr(tail, "\"method\":\"tools/resolve\",\"params\":"
                                     "{\"name\":\"m\",\"arguments\":{"
                                     "\"action\":\"read\"}}"));
  cJSON_Delete(args);
  mcpc_conn_free(c);
  mcpc_proc_stop(&p, 100);
}
END_TEST

int main(void) {
  Suite *s = suite_create("mcp-check");
  TCase *tc = tcase_create("check");
  SRunner *sr;
  int failed;
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, hints_absent_fall_back);
  tcase_add_test(tc, hints_read_only_derives);
  tcase_add_test(tc, hints_tiers);
  tcase_add_test(tc, hints_findings);
  tcase_add_test(tc, report_json_shape);
  tcase_add_test(tc, report_junit_escapes);
  tcase_add_test(tc, opts_rules);
  tcase_add_test(tc, hints_resolvable_marker);
  tcase_add_test(tc, hints_resolved_read);
  tcase_add_test(tc, hints_resolved_bound);
  tcase_add_test(tc, hints_describe_words);
  tcase_add_test(tc, report_resolved_outputs);
  tcase_add_test(tc, session_resolve_wire);
  tcase_add_test(tc, behaviour_judged);
  tcase_add_test(tc, behaviour_repeat);
  tcase_add_test(tc, digest_bounds);
  tcase_add_test(tc, proc_group_stopped);
  tcase_add_test(tc, proc_exec_fails);
  tcase_add_test(tc, proc_watch_fails);
  tcase_add_test(tc, conn_stdio_exchange);
  suite_add_tcase(s, tc);
  sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
