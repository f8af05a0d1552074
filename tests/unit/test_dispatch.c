/* Tests for lib/methods/dispatch.c: the method table and the one admission
 * point (promise 2, docs/architecture.md).
 *
 * The enumeration walks mcp__methods, the table the engine dispatches
 * from, and needs a case below for every row: a method added later fails
 * here until someone says what it may touch. For every row that names
 * something a scope guards, a caller without the scope is refused before
 * the handler runs (a JSON-RPC refusal naming the missing scope; with
 * hide-forbidden on, the very answer an unknown name gets), and a caller
 * with the scope is served, so the refusal is the scope's doing. Lists
 * hide guarded entries with hide-forbidden on. The rest are listed as
 * touching nothing guarded, and run. The tasks methods name a task, which
 * only its creator sees: the caller refused is its creator once it lost
 * the scope (another caller is told the task does not exist). */
#include <check.h>
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "methods.h"
#include "testutil.h"

static mcp_server *srv;
static int runs; /* handler and completion runs of guarded entries */

static int h_guarded(mcp_call *call, void *user_data) {
  (void)user_data;
  runs++;
  return mcp_result_text(call, "secret");
}

static int c_guarded(mcp_completion *c, void *user_data) {
  (void)user_data;
  runs++;
  return mcp_completion_add(c, "secret");
}

static const char *const vault[] = {"vault:read", NULL};

/* vault_job: a task (mcp_call_start_task) that answers at once, or with
 * "hold" keeps running until the teardown finishes it. */
static mcp_call *held[32];
static size_t nheld;

static int h_job(mcp_call *call, void *user_data) {
  (void)user_data;
  runs++;
  bool hold = false;
  mcp_call_arg_bool(call, "hold", &hold);
  ck_assert_int_eq(mcp_call_start_task(call), 0);
  if (hold && nheld < TU_COUNT(held)) {
    held[nheld++] = call;
    return MCP_DEFERRED;
  }
  return mcp_result_text(call, "secret");
}

/* vault_tool's resolver: code of the tool too, counted as a run. */
static int r_guarded(const cJSON *args, const mcp_principal *principal,
                     mcp_tool_annotations *hints, void *user_data) {
  (void)args, (void)principal, (void)hints, (void)user_data;
  runs++;
  return 0;
}

static void setup(void) {
  static const mcp_server_info info = {.name = "dispatch", .version = "1"};
  ck_assert_int_eq(mcp_server_new(&info, &srv), 0);
  mcp_server_set_log(srv, tu_silent_log, NULL);
  static const mcp_tool tool = {
      .name = "vault_tool",
      .description = "Reads the vault.",
      .scopes = vault,
      .annotations = {.read_only = MCP_HINT_TRUE, .open_world = MCP_HINT_FALSE},
      .handler = h_guarded,
      .resolve = r_guarded};
  static const mcp_prompt_argument args[] = {{.name = "x"}, {0}};
  static const mcp_prompt prompt = {.name = "vault_prompt",
                                    .description = "Talks about the vault.",
                                    .arguments = args,
                                    .scopes = vault,
                                    .handler = h_guarded,
                                    .complete = c_guarded};
  static const mcp_resource resource = {.uri = "vault://secret",
                                        .name = "secret",
                                        .scopes = vault,
                                        .handler = h_guarded};
  static const mcp_resource tmpl = {.uri_template = "vault://t/{x}",
                                    .name = "entries",
                                    .scopes = vault,
                                    .handler = h_guarded,
                                    .complete = c_guarded};
  ck_assert_int_eq(mcp_server_add_tool(srv, &tool, NULL), 0);
  ck_assert_int_eq(mcp_server_add_prompt(srv, &prompt, NULL), 0);
  ck_assert_int_eq(mcp_server_add_resource(srv, &resource, NULL), 0);
  ck_assert_int_eq(mcp_server_add_resource(srv, &tmpl, NULL), 0);
  static const char md[] = "---\nname: vault-skill\ndescription: Opens the "
                           "vault.\n---\nAsk first.\n";
  static const mcp_skill_file files[] = {
      {.path = "SKILL.md", .data = md, .size = sizeof md - 1}, {.path = NULL}};
  static const mcp_skill skill = {
      .path = "vault-skill", .files = files, .scopes = vault};
  ck_assert_int_eq(mcp_server_add_skill(srv, &skill), 0);
  static const mcp_tool job = {
      .name = "vault_job",
      .description = "Works on the vault for a while.",
      .input_schema = "{\"type\":\"object\",\"properties\":{\"hold\":{"
                      "\"type\":\"boolean\"}}}",
      .scopes = vault,
      .flags = MCP_TOOL_TASK_OPTIONAL,
      .annotations = {.read_only = MCP_HINT_TRUE, .open_world = MCP_HINT_FALSE},
      .handler = h_job};
  ck_assert_int_eq(mcp_server_add_tool(srv, &job, NULL), 0);
  nheld = 0;
  runs = 0;
}

static void teardown(void) {
  for (size_t i = 0; i < nheld; i++)
    ck_assert_int_eq(mcp_call_finish(held[i], 0), 0);
  mcp_server_free(srv);
}

/* What each method may touch, as this test knows it. For a row that names
 * entries: params that name a guarded one (for "%s", the name), the name
 * of a guarded one and of an unknown one. For a list: the list's member
 * and the guarded entry's name in it. */
typedef struct method_case {
  const char *method;
  mcp__admission admission;
  unsigned eras;
  const char *params; /* a JSON object's members, with %s for the name */
  const char *guarded, *unknown;
  const char *list_member, *list_key; /* lists: result member, entry key */
} method_case;

static const method_case cases[] = {
    {"initialize", MCP__ADMIT_NONE, MCP__ERA_LEGACY, NULL, NULL, NULL, NULL,
     NULL},
    {"ping", MCP__ADMIT_NONE, MCP__ERA_LEGACY, NULL, NULL, NULL, NULL, NULL},
    {"server/discover", MCP__ADMIT_NONE, MCP__ERA_MODERN, NULL, NULL, NULL,
     NULL, NULL},
    {"logging/setLevel", MCP__ADMIT_NONE, MCP__ERA_LEGACY, "\"level\":\"info\"",
     NULL, NULL, NULL, NULL},
    {"resources/unsubscribe", MCP__ADMIT_NONE, MCP__ERA_LEGACY,
     "\"uri\":\"vault://secret\"", NULL, NULL, NULL, NULL},
    {"tools/list", MCP__ADMIT_LIST, MCP__ERA_LEGACY | MCP__ERA_MODERN, NULL,
     "vault_tool", NULL, "tools", "name"},
    {"prompts/list", MCP__ADMIT_LIST, MCP__ERA_LEGACY | MCP__ERA_MODERN, NULL,
     "vault_prompt", NULL, "prompts", "name"},
    {"resources/list", MCP__ADMIT_LIST, MCP__ERA_LEGACY | MCP__ERA_MODERN, NULL,
     "vault://secret", NULL, "resources", "uri"},
    {"resources/templates/list", MCP__ADMIT_LIST,
     MCP__ERA_LEGACY | MCP__ERA_MODERN, NULL, "vault://t/{x}", NULL,
     "resourceTemplates", "uriTemplate"},
    {"tools/call", MCP__ADMIT_ENTRY, MCP__ERA_LEGACY | MCP__ERA_MODERN,
     "\"name\":\"%s\",\"arguments\":{}", "vault_tool", "no_tool", NULL, NULL},
    /* Admitted as a tools/call of its tool (a client declaring tool
     * resolution: ask() declares it). */
    {"tools/resolve", MCP__ADMIT_ENTRY, MCP__ERA_LEGACY | MCP__ERA_MODERN,
     "\"name\":\"%s\",\"arguments\":{}", "vault_tool", "no_tool", NULL, NULL},
    {"prompts/get", MCP__ADMIT_ENTRY, MCP__ERA_LEGACY | MCP__ERA_MODERN,
     "\"name\":\"%s\",\"arguments\":{\"x\":\"1\"}", "vault_prompt", "no_prompt",
     NULL, NULL},
    {"resources/read", MCP__ADMIT_ENTRY, MCP__ERA_LEGACY | MCP__ERA_MODERN,
     "\"uri\":\"%s\"", "vault://secret", "vault://nothing", NULL, NULL},
    {"resources/read", MCP__ADMIT_ENTRY, MCP__ERA_LEGACY | MCP__ERA_MODERN,
     "\"uri\":\"%s\"", "vault://t/1", "vault://nothing", NULL, NULL},
    {"completion/complete", MCP__ADMIT_ENTRY, MCP__ERA_LEGACY | MCP__ERA_MODERN,
     "\"ref\":{\"type\":\"ref/prompt\",\"name\":\"%s\"},\"argument\":{"
     "\"name\":\"x\",\"value\":\"\"}",
     "vault_prompt", "no_prompt", NULL, NULL},
    {"completion/complete", MCP__ADMIT_ENTRY, MCP__ERA_LEGACY | MCP__ERA_MODERN,
     "\"ref\":{\"type\":\"ref/resource\",\"uri\":\"%s\"},\"argument\":{"
     "\"name\":\"x\",\"value\":\"\"}",
     "vault://t/{x}", "vault://n/{x}", NULL, NULL},
    {"resources/subscribe", MCP__ADMIT_ENTRY, MCP__ERA_LEGACY, "\"uri\":\"%s\"",
     "vault://secret", "vault://nothing", NULL, NULL},
    {"subscriptions/listen", MCP__ADMIT_ENTRY, MCP__ERA_MODERN,
     "\"notifications\":{\"resourceSubscriptions\":[\"%s\"]}", "vault://secret",
     "vault://nothing", NULL, NULL},
    {"skills/list", MCP__ADMIT_LIST, MCP__ERA_LEGACY | MCP__ERA_MODERN, NULL,
     "skill://vault-skill/SKILL.md", NULL, "skills", "uri"},
    {"resources/list", MCP__ADMIT_LIST, MCP__ERA_LEGACY | MCP__ERA_MODERN, NULL,
     "skill://vault-skill/SKILL.md", NULL, "resources", "uri"},
    {"skills/get", MCP__ADMIT_ENTRY, MCP__ERA_LEGACY | MCP__ERA_MODERN,
     "\"uri\":\"%s\"", "skill://vault-skill/SKILL.md",
     "skill://nothing/SKILL.md", NULL, NULL},
    /* A skill's files are resources, guarded by its scopes. */
    {"resources/read", MCP__ADMIT_ENTRY, MCP__ERA_LEGACY | MCP__ERA_MODERN,
     "\"uri\":\"%s\"", "skill://vault-skill/SKILL.md",
     "skill://nothing/SKILL.md", NULL, NULL},
    /* "@done" and "@held" name a task of vault_job made for the case, one
     * that finished and one that runs. */
    {"tasks/get", MCP__ADMIT_ENTRY, MCP__ERA_LEGACY | MCP__ERA_MODERN,
     "\"taskId\":\"%s\"", "@done", "no-such-task", NULL, NULL},
    {"tasks/cancel", MCP__ADMIT_ENTRY, MCP__ERA_LEGACY | MCP__ERA_MODERN,
     "\"taskId\":\"%s\"", "@held", "no-such-task", NULL, NULL},
    {"tasks/update", MCP__ADMIT_ENTRY, MCP__ERA_MODERN,
     "\"taskId\":\"%s\",\"inputResponses\":{}", "@held", "no-such-task", NULL,
     NULL},
    {"tasks/result", MCP__ADMIT_ENTRY, MCP__ERA_LEGACY, "\"taskId\":\"%s\"",
     "@done", "no-such-task", NULL, NULL},
    {"tasks/list", MCP__ADMIT_LIST, MCP__ERA_LEGACY, NULL, "@done", NULL,
     "tasks", "taskId"},
};

static const mcp_principal EVE = {.subject = "eve"};
static const char *const vault_scopes[] = {"vault:read", NULL};
static const mcp_principal ALICE = {.subject = "alice", .scopes = vault_scopes};
/* Alice again, with a token that no longer carries the scope. */
static const mcp_principal ALICE_BARE = {.subject = "alice"};

#define TASKS_META                                                             \
  TU_META("{\"extensions\":{\"io.modelcontextprotocol/tasks\":{}}}")
#define RESOLUTION_CAPS                                                        \
  "{\"extensions\":{\"io.modelcontextprotocol/tool-resolution\":{}}}"

/* The client capabilities a request of method declares: the extension a
 * method needs, else none. */
static const char *caps_of(const char *method) {
  if (strncmp(method, "tasks/", 6) == 0)
    return "{\"extensions\":{\"io.modelcontextprotocol/tasks\":{}}}";
  return strcmp(method, "tools/resolve") == 0 ? RESOLUTION_CAPS : "{}";
}

/* Makes a task of vault_job as Alice in era, as "@done" or "@held" says;
 * returns its id (free it). */
static char *make_task(const char *which, unsigned era) {
  const char *args = strcmp(which, "@held") == 0 ? "{\"hold\":true}" : "{}";
  tu_peer p;
  tu_peer_open(&p, srv, &ALICE);
  cJSON *r;
  if (era == MCP__ERA_MODERN) {
    r = tu_ask(&p, tu_mcall(1, "vault_job", args, TASKS_META, NULL, NULL));
  } else {
    tu_legacy_init(&p, "2025-11-25", "{}");
    char *extra = tu_text("{\"name\":\"vault_job\",\"arguments\":%s,"
                          "\"task\":{\"ttl\":60000}}",
                          args);
    /* The reply comes first; notifications/tasks/status may follow. */
    tu_clear(&p);
    ck_assert_int_eq(tu_send_free(&p, tu_req(1, "tools/call", extra)), 0);
    r = tu_msg(&p, 0);
    free(extra);
  }
  const char *id = tu_jstr(r, era == MCP__ERA_MODERN ? "result.taskId"
                                                     : "result.task.taskId");
  ck_assert_msg(id != NULL, "no task made: %s", cJSON_PrintUnformatted(r));
  char *copy = tu_text("%s", id);
  cJSON_Delete(r);
  tu_peer_close(&p);
  return copy;
}

/* One request of c naming name, in era, from a fresh peer of principal;
 * returns the first message it caused (caller frees). */
static cJSON *ask(const method_case *c, unsigned era, const mcp_principal *who,
                  const char *name) {
  tu_peer p;
  tu_peer_open(&p, srv, who);
  char *members = NULL;
  if (c->params) {
    /* c->params holds one "%s", for the name. */
    const char *at = strstr(c->params, "%s");
    members = at ? tu_text("%.*s%s%s", (int)(at - c->params), c->params,
                           name ? name : "", at + 2)
                 : tu_text("%s", c->params);
  }
  char *msg;
  if (era == MCP__ERA_MODERN) {
    char *meta =
        tu_text("{" TU_PV ":\"2026-07-28\"," TU_CC ":%s}", caps_of(c->method));
    msg = tu_mreq(7, c->method, meta, members);
    free(meta);
  } else {
    tu_legacy_init(&p, "2025-11-25", caps_of(c->method));
    char *params = members ? tu_text("{%s}", members) : NULL;
    msg = tu_req(7, c->method, params);
    free(params);
  }
  free(members);
  tu_clear(&p);
  ck_assert_int_eq(tu_send_free(&p, msg), 0);
  ck_assert_msg(p.nout >= 1, "%s: no answer", c->method);
  cJSON *r = tu_msg(&p, 0);
  tu_peer_close(&p);
  return r;
}

static char *text_of(const cJSON *r) {
  char *s = cJSON_PrintUnformatted(r);
  ck_assert_ptr_nonnull(s);
  return s;
}

/* A row that names entries: refused without the scope (or, hidden, the
 * unknown answer), served with it. */
static void check_entry(const method_case *c, unsigned era) {
  mcp_server_set_hide_forbidden(srv, false);
  char *task = c->guarded[0] == '@' ? make_task(c->guarded, era) : NULL;
  const mcp_principal *refused = task ? &ALICE_BARE : &EVE;
  const char *guarded = task ? task : c->guarded;
  if (task) {
    /* Nobody but its creator sees a task: the same answer as none. */
    cJSON *other = ask(c, era, &EVE, guarded);
    tu_assert_error(other, -32602, "Task not found");
    cJSON_Delete(other);
  }
  runs = 0;
  cJSON *r = ask(c, era, refused, guarded);
  ck_assert_msg(tu_get(r, "error") != NULL &&
                    tu_jget(r, "error.code")->valueint == MCP_RPC_FORBIDDEN,
                "%s (%s) of %s was not refused: %s", c->method,
                era == MCP__ERA_MODERN ? "2026-07-28" : "legacy", guarded,
                text_of(r));
  const cJSON *missing = tu_jget(r, "error.data.requiredScopes");
  ck_assert_int_eq(cJSON_GetArraySize(missing), 1);
  ck_assert_str_eq(cJSON_GetArrayItem(missing, 0)->valuestring, "vault:read");
  ck_assert_msg(runs == 0, "%s: the handler ran for a refused caller",
                c->method);
  cJSON_Delete(r);
  ck_assert_int_eq(mcp_server_resource_updated(srv, "vault://secret"), 0);

  /* Hidden: exactly what an unknown name gets (its id and name aside). */
  mcp_server_set_hide_forbidden(srv, true);
  r = ask(c, era, refused, guarded);
  cJSON *u = ask(c, era, refused, c->unknown);
  char *hidden = text_of(r), *none = text_of(u);
  char *swapped = NULL;
  /* The unknown answer names the unknown name: put the guarded one in. */
  const char *at = strstr(none, c->unknown);
  if (at) {
    swapped = tu_text("%.*s%s%s", (int)(at - none), none, guarded,
                      at + strlen(c->unknown));
  }
  ck_assert_msg(strcmp(hidden, swapped ? swapped : none) == 0,
                "%s: hidden and unknown differ:\n  %s\n  %s", c->method, hidden,
                none);
  ck_assert_int_eq(runs, 0);
  ck_assert_int_eq(mcp_server_resource_updated(srv, "vault://secret"), 0);
  free(hidden);
  free(none);
  free(swapped);
  cJSON_Delete(r);
  cJSON_Delete(u);

  /* With the scope the same request is served. */
  mcp_server_set_hide_forbidden(srv, false);
  r = ask(c, era, &ALICE, guarded);
  ck_assert_msg(tu_get(r, "error") == NULL, "%s: refused with the scope: %s",
                c->method, text_of(r));
  cJSON_Delete(r);
  free(task);
}

/* Whether list result r (of c) shows the guarded entry. */
static bool lists_guarded(const method_case *c, const cJSON *r,
                          const char *guarded) {
  const cJSON *list = tu_get(tu_result_of(r), c->list_member);
  ck_assert_msg(cJSON_IsArray(list), "%s: no %s", c->method, c->list_member);
  for (const cJSON *e = list->child; e; e = e->next) {
    const cJSON *k = tu_get(e, c->list_key);
    if (cJSON_IsString(k) && strcmp(k->valuestring, guarded) == 0)
      return true;
  }
  return false;
}

static void check_list(const method_case *c, unsigned era) {
  char *task = c->guarded[0] == '@' ? make_task(c->guarded, era) : NULL;
  const mcp_principal *refused = task ? &ALICE_BARE : &EVE;
  const char *guarded = task ? task : c->guarded;
  mcp_server_set_hide_forbidden(srv, true);
  cJSON *r = ask(c, era, refused, NULL);
  ck_assert_msg(!lists_guarded(c, r, guarded),
                "%s shows %s to a caller without scope", c->method, guarded);
  cJSON_Delete(r);
  r = ask(c, era, &ALICE, NULL);
  ck_assert_msg(lists_guarded(c, r, guarded), "%s hides %s from its owner",
                c->method, guarded);
  cJSON_Delete(r);
  /* Off, a list shows what a step-up would unlock (the call still
   * refuses); never a skill or its files, whose listing shows what the
   * files hold. */
  mcp_server_set_hide_forbidden(srv, false);
  r = ask(c, era, refused, NULL);
  bool skill = strncmp(guarded, "skill://", 8) == 0;
  ck_assert_msg(lists_guarded(c, r, guarded) == !skill, "%s, hide off: %s",
                c->method, guarded);
  cJSON_Delete(r);
  if (task) {
    /* Another caller's tasks are never listed. */
    r = ask(c, era, &EVE, NULL);
    ck_assert(!lists_guarded(c, r, guarded));
    cJSON_Delete(r);
  }
  free(task);
}

START_TEST(every_method_is_admitted) {
  for (size_t i = 0; i < mcp__nmethods; i++) {
    const mcp__method *row = &mcp__methods[i];
    bool known = false;
    for (size_t k = 0; k < TU_COUNT(cases); k++) {
      const method_case *c = &cases[k];
      if (strcmp(c->method, row->name) != 0)
        continue;
      known = true;
      ck_assert_msg(row->admission == c->admission,
                    "%s: the table admits it as %d, this test expects %d",
                    row->name, (int)row->admission, (int)c->admission);
      ck_assert_msg(row->eras == c->eras, "%s: eras %u, expected %u", row->name,
                    row->eras, c->eras);
      for (unsigned era = MCP__ERA_LEGACY; era <= MCP__ERA_MODERN; era <<= 1) {
        if (!(row->eras & era) || c->admission == MCP__ADMIT_NONE)
          continue;
        if (c->admission == MCP__ADMIT_ENTRY)
          check_entry(c, era);
        else
          check_list(c, era);
      }
    }
    ck_assert_msg(known,
                  "method %s has no admission case here: say what it may "
                  "touch, and prove a caller without the scope is refused",
                  row->name);
  }
  /* And every case names a method the engine dispatches. */
  for (size_t k = 0; k < TU_COUNT(cases); k++)
    ck_assert_msg(mcp__method_find(cases[k].method) != NULL,
                  "%s is not dispatched", cases[k].method);
}
END_TEST

/* The rows that touch nothing guarded answer a caller without scopes (the
 * test above would miss a row that crashed without its target). */
START_TEST(unguarded_methods_answer) {
  for (size_t k = 0; k < TU_COUNT(cases); k++) {
    const method_case *c = &cases[k];
    if (c->admission != MCP__ADMIT_NONE || strcmp(c->method, "initialize") == 0)
      continue;
    cJSON *r = ask(c, c->eras, &EVE, NULL);
    ck_assert_msg(tu_get(r, "result") != NULL, "%s: %s", c->method, text_of(r));
    cJSON_Delete(r);
  }
}
END_TEST

/* The session reads each row's era by the table's rule, as routes do: a
 * request without _meta, before any initialize, is served in the modern
 * era (which then requires _meta's protocol version) exactly when
 * mcp__method_era says so, that is for the rows marked modern_bare; the
 * handshake is served before any era is read. */
START_TEST(session_era_is_the_tables) {
  size_t modern = 0;
  for (size_t i = 0; i < mcp__nmethods; i++) {
    const mcp__method *row = &mcp__methods[i];
    if (row->handshake)
      continue;
    bool bare_modern = mcp__method_era(row, NULL) == MCP__ERA_MODERN;
    ck_assert_msg(bare_modern == row->modern_bare, "%s", row->name);
    tu_peer p;
    tu_peer_open(&p, srv, &EVE);
    ck_assert_int_eq(tu_send_free(&p, tu_req(3, row->name, NULL)), 0);
    ck_assert_msg(p.nout >= 1, "%s: no answer", row->name);
    cJSON *r = tu_msg(&p, 0);
    char *text = text_of(r);
    bool asks_version =
        tu_get(r, "error") != NULL && strstr(text, "protocolVersion") != NULL;
    ck_assert_msg(asks_version == bare_modern, "%s: %s", row->name, text);
    modern += bare_modern;
    free(text);
    cJSON_Delete(r);
    tu_peer_close(&p);
  }
  ck_assert_uint_ge(modern, 1);
}
END_TEST

/* A subscription made with the scope hears of updates; one refused never
 * does, and a caller whose session outlives its right hears nothing more
 * (the check is made again at each update). */
START_TEST(updates_reach_only_readers) {
  tu_peer a, e;
  tu_peer_open(&a, srv, &ALICE);
  tu_peer_open(&e, srv, &EVE);
  tu_legacy_init(&a, "2025-11-25", "{}");
  tu_legacy_init(&e, "2025-11-25", "{}");
  cJSON *r = tu_ask(
      &a, tu_req(1, "resources/subscribe", "{\"uri\":\"vault://secret\"}"));
  ck_assert_ptr_nonnull(tu_get(r, "result"));
  cJSON_Delete(r);
  r = tu_ask(&e,
             tu_req(1, "resources/subscribe", "{\"uri\":\"vault://secret\"}"));
  tu_assert_error(r, MCP_RPC_FORBIDDEN, "vault:read");
  cJSON_Delete(r);
  tu_clear(&a);
  tu_clear(&e);
  ck_assert_int_eq(mcp_server_resource_updated(srv, "vault://secret"), 1);
  ck_assert_uint_eq(a.nout, 1);
  ck_assert_uint_eq(e.nout, 0);
  /* The resource is replaced by one needing another scope: alice's old
   * subscription no longer hears of it. */
  ck_assert_int_eq(mcp_server_remove_resource(srv, "vault://secret"), 0);
  static const char *const admin[] = {"vault:admin", NULL};
  static const mcp_resource again = {.uri = "vault://secret",
                                     .name = "secret",
                                     .scopes = admin,
                                     .handler = h_guarded};
  ck_assert_int_eq(mcp_server_add_resource(srv, &again, NULL), 0);
  tu_clear(&a);
  ck_assert_int_eq(mcp_server_resource_updated(srv, "vault://secret"), 0);
  ck_assert_uint_eq(a.nout, 0);
  /* Nothing serves it: nobody is told. */
  ck_assert_int_eq(mcp_server_remove_resource(srv, "vault://secret"), 0);
  ck_assert_int_eq(mcp_server_resource_updated(srv, "vault://secret"), 0);
  tu_peer_close(&a);
  tu_peer_close(&e);
}
END_TEST

/* A listener is refused the resources it may not read, with the missing
 * scope, and honours none of its URIs then. Without hide-forbidden on the
 * refusal names the scope; URIs nothing serves are left out of the
 * acknowledgement. */
START_TEST(listen_admits_each_uri) {
  tu_peer p;
  tu_peer_open(&p, srv, &ALICE);
  cJSON *r = tu_ask(&p, tu_mreq(2, "subscriptions/listen", TU_META_NONE,
                                "\"notifications\":{\"resourceSubscriptions\":"
                                "[\"vault://secret\",\"vault://none\"]}"));
  tu_assert_json(r, "{\"method\":\"notifications/subscriptions/acknowledged\","
                    "\"params\":{\"notifications\":{\"resourceSubscriptions\":"
                    "[\"vault://secret\"]}}}");
  cJSON_Delete(r);
  tu_clear(&p);
  ck_assert_int_eq(mcp_server_resource_updated(srv, "vault://secret"), 1);
  ck_assert_int_eq(mcp_server_resource_updated(srv, "vault://none"), 0);
  tu_peer_close(&p);

  static const char *const admin[] = {"vault:admin", NULL};
  static const mcp_resource other = {.uri = "vault://other",
                                     .name = "other",
                                     .scopes = admin,
                                     .handler = h_guarded};
  ck_assert_int_eq(mcp_server_add_resource(srv, &other, NULL), 0);
  tu_peer_open(&p, srv, &EVE);
  r = tu_ask(&p, tu_mreq(3, "subscriptions/listen", TU_META_NONE,
                         "\"notifications\":{\"toolsListChanged\":true,"
                         "\"resourceSubscriptions\":[\"vault://secret\","
                         "\"vault://other\",\"vault://t/2\"]}"));
  tu_assert_exact(r, "{\"jsonrpc\":\"2.0\",\"id\":3,\"error\":{\"code\":-31403,"
                     "\"message\":\"Forbidden: insufficient scope; this "
                     "subscription needs vault:read vault:admin\",\"data\":{"
                     "\"requiredScopes\":[\"vault:read\",\"vault:admin\"],"
                     "\"scopes\":[\"vault:read\",\"vault:admin\"]}}}");
  cJSON_Delete(r);
  tu_peer_close(&p);
}
END_TEST

/* The authorizer is asked about tools/call only after the scopes, and
 * never about a reused id. */
static int asked;
static int deny_all(const mcp_principal *principal, const char *tool,
                    const cJSON *arguments, char *reason, size_t reason_size,
                    void *user_data) {
  (void)principal;
  (void)tool;
  (void)arguments;
  (void)user_data;
  asked++;
  snprintf(reason, reason_size, "closed today");
  return 1;
}

START_TEST(authorizer_after_scopes) {
  mcp_server_set_authorizer(srv, deny_all, NULL);
  asked = 0;
  tu_peer p;
  tu_peer_open(&p, srv, &EVE);
  tu_legacy_init(&p, "2025-11-25", "{}");
  cJSON *r = tu_ask(&p, tu_text("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
                                "\"tools/call\",\"params\":{\"name\":"
                                "\"vault_tool\"}}"));
  tu_assert_error(r, MCP_RPC_FORBIDDEN, "insufficient scope");
  cJSON_Delete(r);
  ck_assert_int_eq(asked, 0);
  tu_peer_close(&p);
  tu_peer_open(&p, srv, &ALICE);
  tu_legacy_init(&p, "2025-11-25", "{}");
  r = tu_ask(&p, tu_text("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
                         "\"tools/call\",\"params\":{\"name\":"
                         "\"vault_tool\"}}"));
  tu_assert_error(r, MCP_RPC_FORBIDDEN, "policy denied");
  tu_assert_json(r, "{\"error\":{\"data\":{\"reason\":\"closed today\"}}}");
  cJSON_Delete(r);
  ck_assert_int_eq(asked, 1);
  /* Prompts and resources are decided by scopes: the authorizer hook is
   * tools/call's (mcp_authorize_fn). */
  r = tu_ask(&p, tu_req(2, "resources/read", "{\"uri\":\"vault://secret\"}"));
  ck_assert_ptr_nonnull(tu_get(r, "result"));
  cJSON_Delete(r);
  ck_assert_int_eq(asked, 1);
  tu_peer_close(&p);
}
END_TEST

static Suite *dispatch_suite(void) {
  Suite *s = suite_create("dispatch");
  TCase *t = tu_tcase(s, "admission", setup, teardown, 60);
  tcase_add_test(t, every_method_is_admitted);
  tcase_add_test(t, unguarded_methods_answer);
  tcase_add_test(t, session_era_is_the_tables);
  tcase_add_test(t, updates_reach_only_readers);
  tcase_add_test(t, listen_admits_each_uri);
  tcase_add_test(t, authorizer_after_scopes);
  return s;
}

int main(void) { return tu_run(dispatch_suite()); }
