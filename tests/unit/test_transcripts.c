/* Golden transcripts: tests/data/<name>.jsonl files of messages sent to a
 * session and the replies expected back, compared field by field.
 *
 * Format, one item per line:
 *   # comment               ignored
 *   @scopes a b c           the session's principal (before any message;
 *                           default: anonymous with every scope)
 *   > {json}                a message fed to the session
 *   < {json}                the next reply, matched with tu_json_match
 *                           ("<any>" and "<absent>" work as there)
 *   <raw text               the next reply must contain this text verbatim
 * Every reply must be expected: when the next "> " line (or the end) comes,
 * no unread reply may remain, so silence is checked too. */
#include <check.h>
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

/* ---- the fixture server ------------------------------------------------- */

static int echo(mcp_call *call, void *user_data) {
  (void)user_data;
  const char *text;
  if (mcp_call_arg_string(call, "text", &text) != 0)
    return mcp_result_error(call, "text is required");
  return mcp_result_text(call, text);
}

static int add(mcp_call *call, void *user_data) {
  (void)user_data;
  int64_t a = 0, b = 0;
  mcp_call_arg_int(call, "a", &a);
  mcp_call_arg_int(call, "b", &b);
  char json[64];
  snprintf(json, sizeof json, "{\"sum\":%lld}", (long long)(a + b));
  return mcp_result_structured(call, json);
}

static int wipe(mcp_call *call, void *user_data) {
  (void)user_data;
  return mcp_result_text(call, "wiped");
}

static int slow(mcp_call *call, void *user_data) {
  (void)user_data;
  mcp_call_progress(call, 1, 2, "half way");
  mcp_call_progress(call, 2, 2, NULL);
  return mcp_result_text(call, "done");
}

/* Asks the user to confirm through elicitation (the same handler serves
 * both eras), logging at two levels before it asks; answers with the
 * action the user took. */
static int confirm(mcp_call *call, void *user_data) {
  (void)user_data;
  const cJSON *answer = mcp_call_input(call, "ok");
  if (answer == NULL) {
    mcp_call_log(call, MCP_LOG_DEBUG, "no answer yet");
    mcp_call_log(call, MCP_LOG_INFO, "asking the user");
    int rc = mcp_call_request_input(
        call, "ok", MCP_INPUT_ELICITATION,
        "{\"message\":\"Proceed?\",\"requestedSchema\":{\"type\":"
        "\"object\",\"properties\":{}}}");
    return rc == 0 ? MCP_INPUT_REQUIRED : rc;
  }
  const cJSON *action = cJSON_GetObjectItemCaseSensitive(answer, "action");
  return mcp_result_text(call, cJSON_IsString(action) ? action->valuestring
                                                      : "no action");
}

static const char *const admin[] = {"admin", NULL};
static const char *const read_write[] = {"data:read", "data:write", NULL};

static const mcp_tool fixture_tools[] = {
    {.name = "echo",
     .title = "Echo",
     .description = "Returns its text.",
     .input_schema = "{\"type\":\"object\",\"properties\":{\"text\":{"
                     "\"type\":\"string\"}},\"required\":[\"text\"]}",
     .annotations = {.read_only = MCP_HINT_TRUE, .open_world = MCP_HINT_FALSE},
     .handler = echo},
    {.name = "add",
     .description = "Adds two integers.",
     .input_schema = "{\"type\":\"object\",\"properties\":{\"a\":{\"type\":"
                     "\"integer\"},\"b\":{\"type\":\"integer\"}},"
                     "\"required\":[\"a\",\"b\"]}",
     .output_schema = "{\"type\":\"object\",\"properties\":{\"sum\":{"
                      "\"type\":\"integer\"}}}",
     .scopes = read_write,
     .annotations = {.title = "Adder",
                     .read_only = MCP_HINT_TRUE,
                     .open_world = MCP_HINT_FALSE},
     .handler = add},
    {.name = "wipe",
     .title = "Wipe",
     .description = "Erases everything.",
     .scopes = admin,
     .annotations = {.read_only = MCP_HINT_FALSE,
                     .destructive = MCP_HINT_TRUE,
                     .idempotent = MCP_HINT_TRUE,
                     .open_world = MCP_HINT_TRUE},
     .handler = wipe},
    {.name = "slow",
     .description = "Reports progress twice.",
     .annotations = {.read_only = MCP_HINT_TRUE, .open_world = MCP_HINT_FALSE},
     .handler = slow},
    {.name = "confirm",
     .title = "Confirm",
     .description = "Asks the user to confirm and reports the answer.",
     .annotations = {.read_only = MCP_HINT_TRUE, .open_world = MCP_HINT_FALSE},
     .handler = confirm},
};

static mcp_server *fixture(void) {
  mcp_server *srv;
  mcp_server_info info = {.name = "fixture",
                          .version = "1.2.3",
                          .title = "Fixture",
                          .instructions = "Use echo."};
  ck_assert_int_eq(mcp_server_new(&info, &srv), 0);
  /* A fixed key, so that the opaque cursors a transcript echoes are the
   * same on every run (as in a deployment whose processes share it). */
  ck_assert_int_eq(
      mcp_server_set_state_key(srv, "transcripts: a fixed state key..", 32), 0);
  for (size_t i = 0; i < TU_COUNT(fixture_tools); i++)
    ck_assert_msg(mcp_server_add_tool(srv, &fixture_tools[i], NULL) == 0, "%s",
                  mcp_server_errmsg(srv));
  return srv;
}

/* ---- the runner ---------------------------------------------------------- */

typedef struct runner {
  const char *file;
  int line;
  mcp_server *srv;
  tu_peer peer;
  bool open;
  size_t next; /* next unread reply */
  char *scope_text;
  const char *scopes[16];
  mcp_principal who;
} runner;

static void open_session(runner *r) {
  if (r->open)
    return;
  tu_peer_open(&r->peer, r->srv,
               r->scope_text ? &r->who
                             : &(mcp_principal){.subject = "transcript",
                                                .all_scopes = true});
  r->open = true;
}

static void check_all_read(runner *r) {
  ck_assert_msg(r->next == r->peer.nout,
                "%s:%d: %zu unexpected reply(ies), first: %s", r->file, r->line,
                r->peer.nout - r->next,
                r->next < r->peer.nout ? r->peer.out[r->next] : "");
  tu_clear(&r->peer);
  r->next = 0;
}

static void run_line(runner *r, char *text) {
  size_t n = strlen(text);
  while (n && (text[n - 1] == '\n' || text[n - 1] == '\r'))
    text[--n] = '\0';
  if (n == 0 || text[0] == '#')
    return;
  if (strncmp(text, "@scopes", 7) == 0) {
    ck_assert_msg(!r->open, "%s:%d: @scopes after the first message", r->file,
                  r->line);
    r->scope_text = strdup(text + 7);
    size_t k = 0;
    for (char *save = NULL, *tok = strtok_r(r->scope_text, " ", &save);
         tok && k < 15; tok = strtok_r(NULL, " ", &save))
      r->scopes[k++] = tok;
    r->scopes[k] = NULL;
    r->who = (mcp_principal){.subject = "transcript", .scopes = r->scopes};
    return;
  }
  open_session(r);
  if (strncmp(text, "> ", 2) == 0) {
    check_all_read(r);
    ck_assert_int_eq(tu_send(&r->peer, text + 2), 0);
    return;
  }
  if (strncmp(text, "< ", 2) == 0) {
    ck_assert_msg(r->next < r->peer.nout, "%s:%d: expected a reply, got none",
                  r->file, r->line);
    cJSON *m = tu_msg(&r->peer, r->next);
    ck_assert_msg(m != NULL, "%s:%d: reply is not JSON", r->file, r->line);
    tu_assert_json_at(r->file, r->line, m, text + 2);
    cJSON_Delete(m);
    r->next++;
    return;
  }
  if (strncmp(text, "<raw ", 5) == 0) {
    ck_assert_msg(r->next < r->peer.nout, "%s:%d: expected a reply, got none",
                  r->file, r->line);
    ck_assert_msg(strstr(r->peer.out[r->next], text + 5) != NULL,
                  "%s:%d: reply lacks %s: %s", r->file, r->line, text + 5,
                  r->peer.out[r->next]);
    r->next++;
    return;
  }
  ck_abort_msg("%s:%d: cannot read this line", r->file, r->line);
}

static void run_transcript(const char *name) {
  char path[1024];
  snprintf(path, sizeof path, "%s/transcripts/%s.jsonl", MCP_TEST_DATA, name);
  FILE *f = fopen(path, "r");
  ck_assert_msg(f != NULL, "cannot open %s", path);
  runner r = {.file = name, .srv = fixture()};
  char *line = NULL;
  size_t cap = 0;
  while (getline(&line, &cap, f) > 0) {
    r.line++;
    run_line(&r, line);
  }
  open_session(&r);
  check_all_read(&r);
  free(line);
  fclose(f);
  tu_peer_close(&r.peer);
  free(r.scope_text);
  mcp_server_free(r.srv);
}

#define TRANSCRIPT(name)                                                       \
  START_TEST(transcript_##name) { run_transcript(#name); }                     \
  END_TEST

TRANSCRIPT(lifecycle_2025_11_25)
TRANSCRIPT(lifecycle_2025_06_18)
TRANSCRIPT(lifecycle_2025_03_26)
TRANSCRIPT(lifecycle_2024_11_05)
TRANSCRIPT(before_initialize)
TRANSCRIPT(scopes_denied)
TRANSCRIPT(bad_input)
TRANSCRIPT(tools_call)
TRANSCRIPT(modern_discover)
TRANSCRIPT(modern_tools_list)
TRANSCRIPT(modern_tools_call)
TRANSCRIPT(modern_errors)
TRANSCRIPT(modern_input_required)
TRANSCRIPT(modern_logging)
TRANSCRIPT(modern_scopes)
TRANSCRIPT(modern_dual_era)

int main(void) {
  Suite *s = suite_create("transcripts");
  TCase *tc = tcase_create("golden");
  tcase_add_test(tc, transcript_lifecycle_2025_11_25);
  tcase_add_test(tc, transcript_lifecycle_2025_06_18);
  tcase_add_test(tc, transcript_lifecycle_2025_03_26);
  tcase_add_test(tc, transcript_lifecycle_2024_11_05);
  tcase_add_test(tc, transcript_before_initialize);
  tcase_add_test(tc, transcript_scopes_denied);
  tcase_add_test(tc, transcript_bad_input);
  tcase_add_test(tc, transcript_tools_call);
  tcase_add_test(tc, transcript_modern_discover);
  tcase_add_test(tc, transcript_modern_tools_list);
  tcase_add_test(tc, transcript_modern_tools_call);
  tcase_add_test(tc, transcript_modern_errors);
  tcase_add_test(tc, transcript_modern_input_required);
  tcase_add_test(tc, transcript_modern_logging);
  tcase_add_test(tc, transcript_modern_scopes);
  tcase_add_test(tc, transcript_modern_dual_era);
  suite_add_tcase(s, tc);
  return tu_run(s);
}
