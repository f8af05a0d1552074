/* The fuzz targets' server: see fixture.h. */
#include "fixture.h"

#include <cjson/cJSON.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "tools.h"

static const char *const fuzz_scopes[] = {"data:read", "data:write", NULL};
const mcp_principal fuzz_principal = {.subject = "fuzz", .scopes = fuzz_scopes};

/* ---- deferred calls -------------------------------------------------------
 */

#define MAX_DEFERRED 256

static pthread_mutex_t deferred_lock = PTHREAD_MUTEX_INITIALIZER;
static mcp_call *deferred[MAX_DEFERRED];
static size_t ndeferred;
static bool defer_early;

static void finish(mcp_call *call) {
  bool fail = false;
  mcp_call_arg_bool(call, "fail", &fail);
  if (!mcp_call_cancelled(call))
    mcp_call_progress(call, 1, 1, "finishing");
  int rc = fail ? MCP_EINTERNAL : mcp_result_text(call, "finished later");
  if (mcp_call_finish(call, rc < 0 ? rc : 0) != 0)
    abort();
}

size_t fuzz_finish_deferred(void) {
  size_t done = 0;
  for (;;) {
    pthread_mutex_lock(&deferred_lock);
    mcp_call *call = NULL;
    if (ndeferred > 0) {
      call = deferred[0];
      memmove(deferred, deferred + 1, --ndeferred * sizeof *deferred);
    }
    pthread_mutex_unlock(&deferred_lock);
    if (call == NULL)
      return done;
    finish(call);
    done++;
  }
}

/* ---- tools ------------------------------------------------------------- */

static int t_echo(mcp_call *call, void *user_data) {
  (void)user_data;
  const char *text;
  if (mcp_call_arg_string(call, "text", &text) != 0)
    return mcp_result_error(call, "text is required");
  mcp_call_log(call, MCP_LOG_INFO, "echoing");
  if (strcmp(text, "error") == 0)
    return mcp_result_error(call, "asked to fail");
  if (strcmp(text, "fail") == 0)
    return MCP_EINTERNAL;
  return mcp_result_text(call, text);
}

static int t_add(mcp_call *call, void *user_data) {
  (void)user_data;
  int64_t a = 0, b = 0;
  double scale = 1;
  bool as_number = false;
  mcp_call_arg_int(call, "a", &a);
  mcp_call_arg_int(call, "b", &b);
  mcp_call_arg_number(call, "scale", &scale);
  mcp_call_arg_bool(call, "number", &as_number);
  /* Unsigned arithmetic: the sum of two fuzzed int64 may overflow. */
  long long sum = (long long)((uint64_t)a + (uint64_t)b);
  if (as_number) {
    /* As a handler that computes a double would: a cJSON number. */
    cJSON *out = cJSON_CreateObject();
    if (out == NULL ||
        !cJSON_AddNumberToObject(out, "sum", (double)sum * scale))
      abort();
    int rc = mcp_result_structured_cjson(call, out);
    cJSON_Delete(out);
    return rc;
  }
  char json[64];
  snprintf(json, sizeof json, "{\"sum\":%lld}", sum);
  return mcp_result_structured(call, json);
}

static int t_wipe(mcp_call *call, void *user_data) {
  (void)user_data;
  return mcp_result_text(call, "wiped");
}

static int t_slow(mcp_call *call, void *user_data) {
  (void)user_data;
  mcp_call_progress(call, 1, 2, "half way");
  if (mcp_call_cancelled(call))
    return 0;
  mcp_call_progress(call, 2, 2, NULL);
  mcp_call_log(call, MCP_LOG_DEBUG, "slow is done");
  return mcp_result_text(call, "done");
}

static int t_confirm(mcp_call *call, void *user_data) {
  (void)user_data;
  const cJSON *answer = mcp_call_input(call, "ok");
  if (answer == NULL) {
    const char *state = mcp_call_state(call);
    char next[32];
    snprintf(next, sizeof next, "round %zu", state ? strlen(state) : 0);
    int rc = mcp_call_set_state(call, next);
    if (rc == 0)
      rc = mcp_call_request_input(
          call, "ok", MCP_INPUT_ELICITATION,
          "{\"message\":\"Proceed?\",\"requestedSchema\":{\"type\":"
          "\"object\",\"properties\":{\"sure\":{\"type\":\"boolean\"}}}}");
    if (rc == MCP_ECAPABILITY)
      return rc;
    return rc == 0 ? MCP_INPUT_REQUIRED : rc;
  }
  const cJSON *action = cJSON_GetObjectItemCaseSensitive(answer, "action");
  return mcp_result_text(call, cJSON_IsString(action) ? action->valuestring
                                                      : "no action");
}

static int t_ask(mcp_call *call, void *user_data) {
  (void)user_data;
  const cJSON *reply = mcp_call_input(call, "model");
  const cJSON *roots = mcp_call_input(call, "roots");
  if (reply == NULL && roots == NULL) {
    int rc = mcp_call_request_input(
        call, "model", MCP_INPUT_SAMPLING,
        "{\"messages\":[{\"role\":\"user\",\"content\":{\"type\":\"text\","
        "\"text\":\"Hi\"}}],\"maxTokens\":10}");
    if (rc == 0)
      rc = mcp_call_request_input(call, "roots", MCP_INPUT_ROOTS, NULL);
    if (rc == MCP_ECAPABILITY)
      return mcp_result_error(call, "the client cannot answer");
    return rc == 0 ? MCP_INPUT_REQUIRED : rc;
  }
  char text[64];
  snprintf(text, sizeof text, "model %s, roots %d", reply ? "yes" : "no",
           roots ? cJSON_GetArraySize(
                       cJSON_GetObjectItemCaseSensitive(roots, "roots"))
                 : -1);
  return mcp_result_text(call, text);
}

static int t_later(mcp_call *call, void *user_data) {
  (void)user_data;
  bool early = false;
  mcp_call_arg_bool(call, "early", &early);
  if (defer_early || early) {
    finish(call); /* before returning MCP_DEFERRED: allowed */
    return MCP_DEFERRED;
  }
  pthread_mutex_lock(&deferred_lock);
  bool full = ndeferred == MAX_DEFERRED;
  if (!full)
    deferred[ndeferred++] = call;
  pthread_mutex_unlock(&deferred_lock);
  if (full)
    return mcp_result_error(call, "too many deferred calls");
  return MCP_DEFERRED;
}

static int t_media(mcp_call *call, void *user_data) {
  (void)user_data;
  static const unsigned char png[] = {0x89, 'P', 'N', 'G', 0, 1, 2, 0xff};
  mcp_result_image(call, png, sizeof png, "image/png");
  mcp_result_audio(call, png, 3, "audio/wav");
  mcp_result_resource_link(call, "file:///readme", "readme", "text/plain",
                           NULL);
  mcp_result_resource_text(call, "file:///notes/a", NULL, "note a");
  return mcp_result_resource_blob(call, "file:///logo.png", "image/png", png,
                                  sizeof png);
}

static int t_stamp(mcp_call *call, void *user_data) {
  (void)user_data;
  const char *when = "";
  mcp_call_arg_string(call, "when", &when);
  return mcp_result_text(call, when);
}

static const char *const admin[] = {"admin", NULL};
static const char *const write_scope[] = {"data:write", NULL};

static const mcp_tool tools[] = {
    {.name = "echo",
     .title = "Echo",
     .description = "Returns its text.",
     .input_schema = TC_TEXT_SCHEMA,
     .annotations = TC_READ_ONLY,
     .handler = t_echo},
    {.name = "add",
     .description = "Adds two integers.",
     .input_schema =
         "{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"integer\"},"
         "\"b\":{\"type\":\"integer\"},\"scale\":{\"type\":\"number\"},"
         "\"number\":{\"type\":\"boolean\"}},\"required\":[\"a\",\"b\"]}",
     .output_schema = "{\"type\":\"object\",\"properties\":{\"sum\":{"
                      "\"type\":\"integer\"}},\"required\":[\"sum\"]}",
     .scopes = write_scope,
     .annotations = {.title = "Adder",
                     .read_only = MCP_HINT_TRUE,
                     .open_world = MCP_HINT_FALSE},
     .handler = t_add},
    {.name = "wipe",
     .title = "Wipe",
     .description = "Erases everything.",
     .scopes = admin,
     .annotations = {.read_only = MCP_HINT_FALSE,
                     .destructive = MCP_HINT_TRUE,
                     .idempotent = MCP_HINT_TRUE,
                     .open_world = MCP_HINT_TRUE},
     .handler = t_wipe},
    {.name = "slow",
     .description = "Reports progress twice.",
     .annotations = TC_READ_ONLY,
     .handler = t_slow},
    {.name = "confirm",
     .title = "Confirm",
     .description = "Asks the user to confirm.",
     .annotations = TC_READ_ONLY,
     .flags = MCP_TOOL_TASK_OPTIONAL,
     .handler = t_confirm},
    {.name = "ask",
     .description = "Asks the model and the client's roots.",
     .annotations = {.read_only = MCP_HINT_TRUE, .open_world = MCP_HINT_TRUE},
     .handler = t_ask},
    {.name = "later",
     .description = "Answers later.",
     .input_schema = "{\"type\":\"object\",\"properties\":{\"early\":{"
                     "\"type\":\"boolean\"},\"fail\":{\"type\":\"boolean\"}}}",
     .annotations = {.read_only = MCP_HINT_FALSE,
                     .destructive = MCP_HINT_FALSE,
                     .idempotent = MCP_HINT_TRUE,
                     .open_world = MCP_HINT_FALSE},
     /* A task for a client that takes them (it defers). */
     .flags = MCP_TOOL_TASK_OPTIONAL,
     .handler = t_later},
    {.name = "media",
     .description = "Returns every kind of content.",
     .annotations = TC_READ_ONLY,
     .handler = t_media},
    {.name = "stamp",
     .description = "Checks formats.",
     .input_schema =
         "{\"type\":\"object\",\"properties\":{\"when\":{\"type\":\"string\","
         "\"format\":\"date-time\"},\"mail\":{\"format\":\"email\"},"
         "\"site\":{\"format\":\"uri\"},\"id\":{\"format\":\"uuid\"},"
         "\"ip\":{\"format\":\"ipv4\"},\"code\":{\"type\":\"string\","
         "\"pattern\":\"^[a-z]+(-[0-9]{1,3})?$\"}}}",
     .annotations = TC_READ_ONLY,
     .handler = t_stamp,
     .flags = MCP_TOOL_ASSERT_FORMATS},
};

/* ---- prompts, resources, completions ------------------------------------ */

static int h_prompt(mcp_call *call, void *user_data) {
  (void)user_data;
  const char *name = "world", *style = NULL;
  mcp_call_arg_string(call, "name", &name);
  mcp_call_arg_string(call, "style", &style);
  if (style != NULL && strcmp(style, "rude") == 0)
    return mcp_result_error(call, "no rude greetings");
  mcp_result_description(call, "A greeting");
  mcp_result_text(call, name);
  mcp_result_role(call, MCP_ROLE_ASSISTANT);
  mcp_result_resource_link(call, "file:///readme", "readme", NULL, NULL);
  return mcp_result_text(call, style ? style : "plain");
}

static int h_resource(mcp_call *call, void *user_data) {
  (void)user_data;
  const char *uri = mcp_call_uri(call), *name = NULL;
  if (mcp_call_arg_string(call, "name", &name) == 0 &&
      strcmp(name, "missing") == 0)
    return MCP_ENOENT;
  if (uri != NULL && strcmp(uri, "file:///logo.png") == 0) {
    static const unsigned char logo[] = {0x89, 'P', 'N', 'G'};
    return mcp_result_image(call, logo, sizeof logo, "image/png");
  }
  const char *q = NULL;
  if (mcp_call_arg_string(call, "q", &q) == 0)
    return mcp_result_resource_text(call, uri, "text/plain", q);
  return mcp_result_text(call, uri ? uri : "?");
}

static int c_suggest(mcp_completion *c, void *user_data) {
  (void)user_data;
  static const char *const names[] = {"alice", "albert", "bob"};
  const char *value = mcp_completion_value(c);
  const char *style = mcp_completion_context(c, "style");
  if (mcp_completion_principal(c) == NULL)
    abort();
  if (style != NULL && strcmp(style, "many") == 0) {
    for (int i = 0; i < 120; i++) {
      char v[16];
      snprintf(v, sizeof v, "v%d", i);
      int rc = mcp_completion_add(c, v);
      if (rc == MCP_ELIMIT)
        break;
      if (rc)
        return rc;
    }
    mcp_completion_set_total(c, 1000);
    return 0;
  }
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
    if (strncmp(names[i], value, strlen(value)) == 0) {
      int rc = mcp_completion_add(c, names[i]);
      if (rc)
        return rc;
    }
  }
  return strcmp(mcp_completion_argument(c), "fail") == 0 ? MCP_EINTERNAL : 0;
}

static const mcp_prompt_argument greet_args[] = {
    {.name = "name", .title = "Name", .description = "Who", .required = true},
    {.name = "style", .description = "formal or casual"},
    {.name = NULL}};
static const mcp_prompt_argument secret_args[] = {
    {.name = "topic", .required = true}, {.name = NULL}};
static const mcp_prompt prompts[] = {
    {.name = "greet",
     .title = "Greeting",
     .description = "Greets someone.",
     .arguments = greet_args,
     .handler = h_prompt,
     .complete = c_suggest},
    {.name = "secret",
     .description = "Needs admin.",
     .arguments = secret_args,
     .scopes = admin,
     .handler = h_prompt,
     .complete = c_suggest},
};

static const mcp_resource resources[] = {
    {.uri = "file:///readme",
     .name = "readme",
     .title = "Read me",
     .description = "The read-me.",
     .mime_type = "text/plain",
     .handler = h_resource},
    {.uri = "file:///logo.png",
     .name = "logo",
     .mime_type = "image/png",
     .handler = h_resource},
    {.uri = "file:///private",
     .name = "private",
     .scopes = admin,
     .handler = h_resource},
    {.uri_template = "file:///notes/{name}",
     .name = "notes",
     .mime_type = "text/markdown",
     .handler = h_resource,
     .complete = c_suggest},
    {.uri_template = "file:///docs/{+path}",
     .name = "docs",
     .handler = h_resource},
    {.uri_template = "file:///search{?q,lang}",
     .name = "search",
     .handler = h_resource,
     .complete = c_suggest},
};

/* ---- the server ---------------------------------------------------------- */

static void quiet(mcp_log_level level, const char *message, void *user_data) {
  (void)level;
  (void)user_data;
  /* One sentence, as documented: never a line a client could forge. */
  if (message == NULL || !mcp__utf8_valid(message, strlen(message)) ||
      strpbrk(message, "\r\n") != NULL)
    abort();
}

static void audit(const mcp_audit_record *r, void *user_data) {
  (void)user_data;
  if (r->tool == NULL || r->missing_scopes == NULL)
    abort();
}

static int authorize(const mcp_principal *principal, const char *tool,
                     const cJSON *arguments, char *reason, size_t reason_size,
                     void *user_data) {
  (void)principal;
  (void)user_data;
  if (tool == NULL)
    abort();
  if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(arguments, "deny"))) {
    snprintf(reason, reason_size, "denied by the fuzz authorizer");
    return 1;
  }
  return 0;
}

mcp_server *fuzz_server_new(bool early) {
  defer_early = early;
  const mcp_server_info info = {.name = "fuzz",
                                .version = "1.0.0",
                                .title = "Fuzz fixture",
                                .instructions = "Anything goes."};
  mcp_server *srv = NULL;
  if (mcp_server_new(&info, &srv) != 0)
    abort();
  mcp_server_set_log(srv, quiet, NULL);
  mcp_server_set_audit(srv, audit, NULL);
  mcp_server_set_authorizer(srv, authorize, NULL);
  mcp_server_set_page_size(srv, 2);
  mcp_server_set_input_ttl(srv, 10u * 366 * 24 * 3600);
  static const char key[] = "fuzz-fixture-request-state-key-0123456789";
  if (mcp_server_set_state_key(srv, key, sizeof key - 1) != 0)
    abort();
  for (size_t i = 0; i < sizeof tools / sizeof tools[0]; i++)
    if (mcp_server_add_tool(srv, &tools[i], NULL) != 0)
      abort();
  for (size_t i = 0; i < sizeof prompts / sizeof prompts[0]; i++)
    if (mcp_server_add_prompt(srv, &prompts[i], NULL) != 0)
      abort();
  for (size_t i = 0; i < sizeof resources / sizeof resources[0]; i++)
    if (mcp_server_add_resource(srv, &resources[i], NULL) != 0)
      abort();
  return srv;
}

static void check_reply(const cJSON *m) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(m, "jsonrpc");
  if (!cJSON_IsObject(m) || !cJSON_IsString(v) ||
      strcmp(v->valuestring, "2.0") != 0)
    abort();
}

void fuzz_check_message(const char *msg, size_t len) {
  if (len == 0 || memchr(msg, '\n', len) != NULL)
    abort();
  mcp__json_doc doc;
  if (mcp__json_parse(msg, len, NULL, &doc, NULL, 0) != 0)
    abort();
  /* A 2025-03-26 batch is answered with an array of replies. */
  if (cJSON_IsArray(doc.root)) {
    if (doc.root->child == NULL)
      abort();
    for (const cJSON *m = doc.root->child; m; m = m->next)
      check_reply(m);
  } else {
    check_reply(doc.root);
  }
  mcp__json_doc_free(&doc);
}
