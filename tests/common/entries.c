/* The fixture of the suites of lib/methods' prompts, resources and
 * subscriptions (unit/test_prompts_resources.c, unit/test_subscriptions.c):
 * a server with the tool "run", three prompts, three resources and three
 * templates whose handlers record what they saw, the peer P on it, and its
 * setups. Only the public API is used. See entries.h. */
#include "entries.h"

#include <check.h>
#include <cjson/cJSON.h>
#include <stdio.h>
#include <string.h>

mcp_server *srv;
tu_peer P;

int (*g_fn)(mcp_call *call); /* what handlers do; NULL: a default */
int g_runs;                  /* prompt and resource handler runs */
int g_tool_runs;             /* tool handler runs */
mcp_call_kind g_kind;        /* of the last call */
char g_tool[256];            /* mcp_call_name of the last call */
char g_uri[256];             /* mcp_call_uri, "(null)" for NULL */
char g_name[256];            /* argument or variable "name" */
int g_name_rc;               /* mcp_call_arg_string's result */
char g_state[64];            /* mcp_call_state, "(null)" for NULL */
int g_req_rc;                /* mcp_call_request_input's result */

int g_c_runs;  /* completion callback runs */
int g_c_rc;    /* what the completion callback returns */
int g_c_count; /* values it adds; 0: filter NAMES by prefix */
unsigned long g_c_total;
int g_c_last_add; /* the last mcp_completion_add result */
char g_c_arg[64], g_c_value[64], g_c_context[64], g_c_subject[64];

char g_log[8192];

static const char *const READ[] = {"read", NULL};
static const char *const ADMIN[] = {"admin", NULL};
static const char *const READ_ADMIN[] = {"read", "admin", NULL};
const mcp_principal ALICE = {.subject = "alice", .scopes = READ};
const mcp_principal ROOT = {.subject = "root", .scopes = READ_ADMIN};

static void copy(char *dst, size_t n, const char *s) {
  snprintf(dst, n, "%s", s ? s : "(null)");
}

static void log_capture(mcp_log_level level, const char *message,
                        void *user_data) {
  (void)level;
  (void)user_data;
  size_t n = strlen(g_log);
  snprintf(g_log + n, sizeof g_log - n, "%s\n", message);
}

/* The check behind every peer of this suite: each message is JSON, an
 * object (or a batch's array). */
void inspect(const char *msg, size_t len) {
  cJSON *doc = cJSON_ParseWithLength(msg, len);
  ck_assert_msg(cJSON_IsObject(doc) || cJSON_IsArray(doc),
                "not a JSON message: %.*s", (int)(len > 200 ? 200 : len), msg);
  cJSON_Delete(doc);
}

/* Every prompt and resource of the suite runs this. */
int h_entry(mcp_call *call, void *user_data) {
  ck_assert_ptr_eq(user_data, &g_runs);
  g_runs++;
  g_kind = mcp_call_kind_of(call);
  copy(g_tool, sizeof g_tool, mcp_call_name(call));
  copy(g_uri, sizeof g_uri, mcp_call_uri(call));
  const char *v = NULL;
  g_name_rc = mcp_call_arg_string(call, "name", &v);
  copy(g_name, sizeof g_name, v);
  copy(g_state, sizeof g_state, mcp_call_state(call));
  if (g_fn)
    return g_fn(call);
  return mcp_result_text(call, g_kind == MCP_CALL_PROMPT ? "Hello" : "data");
}

int h_tool(mcp_call *call, void *user_data) {
  (void)user_data;
  g_tool_runs++;
  if (g_fn)
    return g_fn(call);
  return mcp_result_text(call, "ok");
}

static const char *const NAMES[] = {"alice", "albert", "bob"};

int c_suggest(mcp_completion *c, void *user_data) {
  ck_assert_ptr_eq(user_data, &g_runs);
  g_c_runs++;
  copy(g_c_arg, sizeof g_c_arg, mcp_completion_argument(c));
  copy(g_c_value, sizeof g_c_value, mcp_completion_value(c));
  copy(g_c_context, sizeof g_c_context, mcp_completion_context(c, "style"));
  const mcp_principal *who = mcp_completion_principal(c);
  ck_assert_ptr_nonnull(who);
  copy(g_c_subject, sizeof g_c_subject, who->subject);
  if (g_c_rc)
    return g_c_rc;
  const char *value = mcp_completion_value(c);
  if (g_c_count == 0) {
    for (size_t i = 0; i < TU_COUNT(NAMES); i++) {
      if (strncmp(NAMES[i], value, strlen(value)) != 0)
        continue;
      int rc = mcp_completion_add(c, NAMES[i]);
      if (rc)
        return rc;
    }
  }
  for (int i = 0; i < g_c_count; i++) {
    char v[32];
    snprintf(v, sizeof v, "v%d", i);
    g_c_last_add = mcp_completion_add(c, v);
    if (g_c_last_add && g_c_last_add != MCP_ELIMIT)
      return g_c_last_add;
  }
  if (g_c_total)
    mcp_completion_set_total(c, g_c_total);
  return 0;
}

const mcp_tool TOOL_RUN = TC_TOOL_RUN(h_tool);

static const mcp_prompt_argument GREET_ARGS[] = {
    {.name = "name",
     .title = "Name",
     .description = "Who to greet",
     .required = true},
    {.name = "style", .description = "formal or casual"},
    {.name = NULL}};
const mcp_prompt PROMPT_GREET = {.name = "greet",
                                 .title = "Greeting",
                                 .description = "Greets someone.",
                                 .arguments = GREET_ARGS,
                                 .handler = h_entry,
                                 .complete = c_suggest};
static const mcp_prompt_argument PLAIN_ARGS[] = {{.name = "text"},
                                                 {.name = NULL}};
const mcp_prompt PROMPT_PLAIN = {.name = "plain",
                                 .description = "No completion.",
                                 .arguments = PLAIN_ARGS,
                                 .handler = h_entry};
static const mcp_prompt_argument SECRET_ARGS[] = {
    {.name = "topic", .required = true}, {.name = NULL}};
const mcp_prompt PROMPT_SECRET = {.name = "secret",
                                  .description = "Needs admin.",
                                  .arguments = SECRET_ARGS,
                                  .scopes = ADMIN,
                                  .handler = h_entry,
                                  .complete = c_suggest};

const mcp_resource RES_README = {.uri = "file:///readme",
                                 .name = "readme",
                                 .title = "Read me",
                                 .description = "The read-me.",
                                 .mime_type = "text/plain",
                                 .handler = h_entry};
static const mcp_resource RES_LOGO = {.uri = "file:///logo.png",
                                      .name = "logo",
                                      .mime_type = "image/png",
                                      .handler = h_entry};
static const mcp_resource RES_PRIVATE = {.uri = "file:///private",
                                         .name = "private",
                                         .scopes = ADMIN,
                                         .handler = h_entry};
const mcp_resource TMPL_NOTES = {.uri_template = "file:///notes/{name}",
                                 .name = "notes",
                                 .title = "Notes",
                                 .description = "One note.",
                                 .mime_type = "text/markdown",
                                 .handler = h_entry,
                                 .complete = c_suggest};
static const mcp_resource TMPL_DOCS = {
    .uri_template = "file:///docs/{+path}", .name = "docs", .handler = h_entry};
static const mcp_resource TMPL_VAULT = {.uri_template = "file:///vault/{key}",
                                        .name = "vault",
                                        .scopes = ADMIN,
                                        .handler = h_entry,
                                        .complete = c_suggest};

const mcp_server_info INFO = {
    .name = "srv", .version = "1.2.3", .title = "Test Server"};

static void reset_globals(void) {
  g_fn = NULL;
  g_runs = g_tool_runs = 0;
  g_kind = MCP_CALL_TOOL;
  g_tool[0] = g_uri[0] = g_name[0] = g_state[0] = '\0';
  g_name_rc = 0;
  g_req_rc = 0;
  tu_deferred_reset();
  g_c_runs = g_c_rc = g_c_count = 0;
  g_c_total = 0;
  g_c_last_add = 0;
  g_c_arg[0] = g_c_value[0] = g_c_context[0] = g_c_subject[0] = '\0';
  g_log[0] = '\0';
}

void add_surface(mcp_server *s) {
  ck_assert_int_eq(mcp_server_add_prompt(s, &PROMPT_GREET, &g_runs), 0);
  ck_assert_int_eq(mcp_server_add_prompt(s, &PROMPT_PLAIN, &g_runs), 0);
  ck_assert_int_eq(mcp_server_add_prompt(s, &PROMPT_SECRET, &g_runs), 0);
  ck_assert_int_eq(mcp_server_add_resource(s, &RES_README, &g_runs), 0);
  ck_assert_int_eq(mcp_server_add_resource(s, &RES_LOGO, &g_runs), 0);
  ck_assert_int_eq(mcp_server_add_resource(s, &RES_PRIVATE, &g_runs), 0);
  ck_assert_int_eq(mcp_server_add_resource(s, &TMPL_NOTES, &g_runs), 0);
  ck_assert_int_eq(mcp_server_add_resource(s, &TMPL_DOCS, &g_runs), 0);
  ck_assert_int_eq(mcp_server_add_resource(s, &TMPL_VAULT, &g_runs), 0);
}

/* A server with one tool and nothing else. */
void setup_bare(void) {
  reset_globals();
  ck_assert_int_eq(mcp_server_new(&INFO, &srv), 0);
  mcp_server_set_log(srv, log_capture, NULL);
  ck_assert_int_eq(mcp_server_add_tool(srv, &TOOL_RUN, NULL), 0);
  tu_peer_open_with(&P, srv, &ALICE, inspect);
}

/* The tool, three prompts, three resources and three templates. */
void setup(void) {
  setup_bare();
  add_surface(srv);
}

void teardown(void) {
  tu_peer_close(&P);
  mcp_server_free(srv);
  srv = NULL;
}

/* A tcase of the suite run with set as its setup and teardown after. */
TCase *tcase(Suite *s, const char *name, void (*set)(void)) {
  return tu_tcase(s, name, set, teardown, 120);
}
