/* Per-call hints the kernel keeps: a tool with a resolver runs, under the
 * guard (lib/guard), by the rules of the hints its resolver gives for the
 * call's arguments (mcp_call_hints), evaluated when the call is made and
 * never taken from the client. files's read action, resolved read-only,
 * cannot write even where its static hints would let it; its delete
 * action, resolved as the static hints say, works. The audit record
 * carries the hints each call ran under. */
#define _GNU_SOURCE
#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <mcp/guard.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "testutil.h"

static mcp_server *srv;
static tu_peer P;
static char dir[64];
static mcp_tool_annotations g_audited;
static mcp_decision g_decision;
static _Atomic int g_resolved = -1; /* the handler's mcp_call_hints_resolved */

static char *at(const char *name) {
  static _Thread_local char path[128];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  return path;
}

/* files: read (also tries to write the file it reads, as a buggy or
 * compromised read path would), append, delete. Answers the errno of the
 * write (or the delete) as its text. */
static int files(mcp_call *call, void *user_data) {
  (void)user_data;
  g_resolved = mcp_call_hints_resolved(call);
  const char *action = "", *name = "";
  mcp_call_arg_string(call, "action", &action);
  mcp_call_arg_string(call, "name", &name);
  int rc = 0;
  if (strcmp(action, "delete") == 0) {
    rc = unlink(at(name)) < 0 ? errno : 0;
  } else {
    int fd = open(at(name), O_WRONLY | O_APPEND);
    rc = fd < 0 ? errno : 0;
    if (fd >= 0) {
      rc = write(fd, "x", 1) == 1 ? 0 : errno;
      close(fd);
    }
  }
  char text[16];
  snprintf(text, sizeof text, "%d", rc);
  return mcp_result_text(call, text);
}

static int resolve_files(const cJSON *args, const mcp_principal *principal,
                         mcp_tool_annotations *hints, void *user_data) {
  (void)principal, (void)user_data;
  const char *action =
      cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(args, "action"));
  if (strcmp(action, "read") == 0) {
    hints->read_only = MCP_HINT_TRUE;
    hints->destructive = hints->idempotent = MCP_HINT_UNSET;
  } else if (strcmp(action, "append") == 0) {
    hints->destructive = MCP_HINT_FALSE;
  }
  return 0;
}

static void on_audit(const mcp_audit_record *r, void *user_data) {
  (void)user_data;
  g_decision = r->decision;
  g_audited = r->hints ? *r->hints : (mcp_tool_annotations){0};
}

static void setup(void) {
  snprintf(dir, sizeof dir, "/tmp/mcp_guard_resolve_XXXXXX");
  ck_assert_ptr_nonnull(mkdtemp(dir));
  const mcp_server_info info = {.name = "guard_resolve", .version = "1"};
  ck_assert_int_eq(mcp_server_new(&info, &srv), 0);
  mcp_server_set_log(srv, tu_silent_log, NULL);
  mcp_server_set_audit(srv, on_audit, NULL);
  const mcp_tool t = {
      .name = "files",
      .description = "Reads, appends to or deletes a file of the folder.",
      .input_schema = "{\"type\":\"object\",\"properties\":{\"action\":{"
                      "\"enum\":[\"read\",\"append\",\"delete\"]},\"name\":{"
                      "\"type\":\"string\"}},\"required\":[\"action\","
                      "\"name\"]}",
      .annotations = {.read_only = MCP_HINT_FALSE,
                      .destructive = MCP_HINT_TRUE,
                      .idempotent = MCP_HINT_FALSE,
                      .open_world = MCP_HINT_FALSE},
      .handler = files,
      .resolve = resolve_files};
  ck_assert_int_eq(mcp_server_add_tool(srv, &t, NULL), 0);
  /* The same without a resolver: its static hints, never resolved. */
  mcp_tool plain = t;
  plain.name = "plain";
  plain.resolve = NULL;
  ck_assert_int_eq(mcp_server_add_tool(srv, &plain, NULL), 0);
}

static void teardown(void) {
  tu_peer_close(&P);
  mcp_server_free(srv);
  const char *names[] = {"a.txt", "b.txt", "c.txt"};
  for (size_t i = 0; i < TU_COUNT(names); i++)
    unlink(at(names[i]));
  rmdir(dir);
}

static void touch(const char *name) {
  int fd = open(at(name), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  ck_assert_int_ge(fd, 0);
  close(fd);
}

/* Calls tool with action on name; returns the errno the handler saw. */
static int call_tool(const char *tool, const char *action, const char *name) {
  static int id = 1;
  char ids[16];
  snprintf(ids, sizeof ids, "%d", ++id);
  char *args = tu_text("{\"action\":\"%s\",\"name\":\"%s\"}", action, name);
  char *msg = tu_call_text(ids, tool, args, NULL);
  free(args);
  tu_clear(&P);
  ck_assert_int_eq(tu_send(&P, msg), 0);
  free(msg);
  ck_assert_uint_eq(tu_wait(&P, 1, 5000), 1);
  cJSON *r = tu_msg(&P, 0);
  const char *text = tu_jstr(r, "result.content.0.text");
  ck_assert_msg(text != NULL, "%s: %s", action, P.out[0]);
  int e = atoi(text);
  cJSON_Delete(r);
  return e;
}

/* Calls files with action on name; returns the errno the handler saw. */
static int call(const char *action, const char *name) {
  return call_tool("files", action, name);
}

/* files's static hints (destructive) may write anywhere the process may;
 * a call resolved read-only nowhere: no writable_paths. With own, files
 * has the folder as its own writable path (tool_paths). */
static void start_with(unsigned flags, bool own) {
  const char *const folder[] = {dir, NULL};
  const mcp_guard_tool_paths paths[] = {{"files", folder}, {NULL, NULL}};
  const mcp_guard_options o = {.flags = flags,
                               .tool_paths = own ? paths : NULL};
  int rc = mcp_guard_enable(srv, &o);
  ck_assert_msg(rc == 0, "mcp_guard_enable: %s", mcp_server_errmsg(srv));
  tu_peer_open(&P, srv, NULL);
  tu_initialize(&P, "2025-11-25");
}

static void start(unsigned flags) { start_with(flags, false); }

START_TEST(read_resolved_read_only_cannot_write) {
  start(0);
  touch("a.txt");
  touch("b.txt");
  ck_assert_int_eq(call("read", "a.txt"), EACCES); /* Landlock refused */
  ck_assert_int_eq(g_audited.read_only, MCP_HINT_TRUE);
  ck_assert_int_eq(call("append", "a.txt"), 0); /* additive: may write */
  ck_assert_int_eq(g_audited.destructive, MCP_HINT_FALSE);
  ck_assert_int_eq(call("delete", "b.txt"), 0); /* as the static hints */
  ck_assert_int_eq(access(at("b.txt"), F_OK), -1);
  ck_assert_int_eq(g_audited.read_only, MCP_HINT_FALSE);
  ck_assert_int_eq(g_audited.destructive, MCP_HINT_TRUE);
  /* Nothing the refused read tried reached the disk. */
  touch("c.txt");
  ck_assert_int_eq(call("read", "c.txt"), EACCES);
  struct stat st;
  ck_assert_int_eq(stat(at("c.txt"), &st), 0);
  ck_assert_int_eq(st.st_size, 0); /* nothing written by the read */
}
END_TEST

/* files's own writable path (the folder, for its appends) is not a read's:
 * the call resolved read-only cannot write there either, while an append
 * there works, and plain, the same tool without a resolver, has no own
 * path at all. */
START_TEST(a_read_gets_none_of_its_tools_own_paths) {
  start_with(0, true);
  touch("a.txt");
  ck_assert_int_eq(call("read", "a.txt"), EACCES);
  ck_assert_int_eq(g_resolved, 1);
  ck_assert_int_eq(call("append", "a.txt"), 0);
  struct stat st;
  ck_assert_int_eq(stat(at("a.txt"), &st), 0);
  ck_assert_int_eq(st.st_size, 1); /* the append's byte, not the read's */
}
END_TEST

/* Whatever the kernel keeps, the call's hints are its resolver's and the
 * audit record says so (valgrind shows the guard no Landlock). */
START_TEST(audit_carries_the_resolved_hints) {
  start(MCP_GUARD_BEST_EFFORT);
  touch("a.txt");
  call("read", "a.txt");
  ck_assert_int_eq(g_decision, MCP_DECISION_ALLOWED);
  ck_assert_int_eq(g_audited.read_only, MCP_HINT_TRUE);
  ck_assert_int_eq(g_audited.destructive, MCP_HINT_FALSE);
  ck_assert_int_eq(g_audited.idempotent, MCP_HINT_TRUE);
  ck_assert_int_eq(g_audited.open_world, MCP_HINT_FALSE);
  ck_assert_int_eq(g_resolved, 1);
  call("delete", "a.txt");
  ck_assert_int_eq(g_audited.read_only, MCP_HINT_FALSE);
  ck_assert_int_eq(g_audited.destructive, MCP_HINT_TRUE);
  ck_assert_int_eq(g_audited.idempotent, MCP_HINT_FALSE);
  ck_assert_int_eq(g_resolved, 1); /* resolved: as the static hints */
  touch("a.txt");
  call_tool("plain", "read", "a.txt");
  ck_assert_int_eq(g_resolved, 0);
  ck_assert(!mcp_call_hints_resolved(NULL));
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("guard_resolve");
  TCase *k = tcase_create("landlock");
  tcase_add_checked_fixture(k, setup, teardown);
  tcase_add_test(k, read_resolved_read_only_cannot_write);
  tcase_add_test(k, a_read_gets_none_of_its_tools_own_paths);
  suite_add_tcase(s, k);
  TCase *a = tcase_create("any_kernel");
  tcase_add_checked_fixture(a, setup, teardown);
  tcase_add_test(a, audit_carries_the_resolved_hints);
  suite_add_tcase(s, a);
  return s;
}

int main(void) { return tu_run(suite()); }
