/* Dispatch: the table of every method the engine serves, and the one
 * admission point each request passes before its handler runs.
 *
 * A row says in which era a method exists, which feature it belongs to
 * (a feature the server does not offer is an unknown method), whether a
 * legacy session must be initialized first, and what the request may
 * touch that a scope guards. For a method that names an entry (a tool, a
 * prompt, a resource, a completion's target, the resources a listener
 * watches), the row's target function finds it, and admit() decides from
 * the caller's scopes (and for tools/call the authorizer hook) before the
 * handler is given anything: a handler for such a method cannot be reached
 * without its entry admitted. test_dispatch enumerates this table and shows
 * every row refusing a caller without the scope. */
#include <cjson/cJSON.h>
#include <string.h>

#include "methods.h"

void mcp__target_free(mcp__target *t) {
  mcp__tool_unref(t->entry);
  for (size_t i = 0; i < t->nentries; i++)
    mcp__tool_unref(t->entries[i]);
  mcp__free(t->entries);
  cJSON_Delete(t->vars);
  mcp__listener_free(t->listener);
  mcp__task_unref(t->task);
  *t = (mcp__target){0};
}

/* ---- admission ----------------------------------------------------------- */

/* Every scope the entries of t need, without repeats: t->entry's own list,
 * or for several entries a list made here (*owned, freed by the caller). */
static int required_scopes(const mcp__target *t, const char ***list, size_t *n,
                           const char ***owned) {
  *owned = NULL;
  if (t->entry) {
    *list = (const char **)t->entry->scopes;
    *n = t->entry->nscopes;
    return 0;
  }
  size_t cap = 0;
  for (size_t i = 0; i < t->nentries; i++)
    cap += t->entries[i] ? t->entries[i]->nscopes : 0;
  *list = NULL;
  *n = 0;
  if (cap == 0)
    return 0;
  const char **all = mcp__calloc(cap + 1, sizeof *all);
  if (all == NULL)
    return MCP_ENOMEM;
  size_t k = 0;
  for (size_t i = 0; i < t->nentries; i++) {
    for (size_t j = 0; t->entries[i] && j < t->entries[i]->nscopes; j++) {
      const char *scope = t->entries[i]->scopes[j];
      bool seen = false;
      for (size_t q = 0; q < k && !seen; q++)
        seen = strcmp(all[q], scope) == 0;
      if (!seen)
        all[k++] = scope;
    }
  }
  *list = *owned = all;
  *n = k;
  return 0;
}

/* What the refusal calls the thing refused. */
static const char *kind_name(const mcp__target *t) {
  const mcp__tool *e = t->entry;
  if (e == NULL)
    return "subscription";
  return e->kind == MCP_CALL_PROMPT     ? "prompt"
         : e->kind == MCP_CALL_RESOURCE ? "resource"
                                        : "tool";
}

/* Answers a refusal: MCP_RPC_FORBIDDEN with the missing scopes (or the
 * authorizer's word) in data, which an HTTP transport turns into 403. */
static void deny(mcp_session *s, mcp__reply_ctx *ctx, const mcp__req *r,
                 const mcp__decision *d, const char *what) {
  mcp__buf msg = {0}, data = {0};
  mcp__decision_message(&msg, d, what);
  mcp__decision_data(&data, d);
  const char *text = mcp__buf_str(&msg), *json = mcp__buf_str(&data);
  if (d->decision == MCP_DECISION_DENIED_SCOPE) {
    /* The transport's challenge names these (an HTTP 403). */
    ctx->facts.scopes = d->required;
    ctx->facts.missing_scopes = (const char *const *)d->missing;
  }
  if (text && json)
    mcp__req_error(s, ctx, r, MCP_RPC_FORBIDDEN, text, json);
  else if (!ctx->err)
    ctx->err = MCP_ENOMEM;
  mcp__buf_free(&msg);
  mcp__buf_free(&data);
}

void mcp__reply_missing_extension(mcp_session *s, mcp__reply_ctx *ctx,
                                  const mcp__req *r, const char *extension,
                                  const char *why) {
  char msg[300];
  mcp__fmt(msg, sizeof msg, "Missing required client capability: %s", why);
  mcp__utf8_trim(msg);
  mcp__buf data = {0};
  mcp__buf_puts(&data, "{\"requiredCapabilities\":{\"extensions\":{");
  mcp__json_quote(&data, extension, strlen(extension));
  mcp__buf_puts(&data, ":{}}}}");
  const char *json = mcp__buf_str(&data);
  if (json)
    mcp__req_error(s, ctx, r, MCP__RPC_MISSING_CAPABILITY, msg, json);
  else if (!ctx->err)
    ctx->err = MCP_ENOMEM;
  mcp__buf_free(&data);
}

/* The admission point (promise 2, docs/architecture.md): every entry the
 * request names needs every scope it lists; a tools/call then also needs the
 * authorizer hook's consent (it sees the tool's name and arguments, never its
 * hints). Returns true to go on; false after answering the refusal (audited for
 * a tool). */
static bool admit(mcp_session *s, mcp__reply_ctx *ctx, const mcp__req *r,
                  const mcp__target *t, unsigned long long started) {
  static const mcp__policy scopes_only = {0};
  mcp_server *srv = s->home.srv;
  const mcp__tool *tool =
      t->entry && t->entry->kind == MCP_CALL_TOOL ? t->entry : NULL;
  const char **required, **owned;
  size_t n;
  mcp__decision d = {0};
  int rc = required_scopes(t, &required, &n, &owned);
  /* The authorizer sees the arguments as the handler will: an empty
   * object when the client sent none. */
  static const cJSON none = {.type = cJSON_Object};
  if (rc == 0)
    rc = mcp__policy_decide(
        tool ? &srv->policy : &scopes_only, &s->home.principal,
        t->entry ? t->entry->name : r->m->method, (const char *const *)required,
        n, t->args ? t->args : &none, &d);
  bool allowed = rc == 0 && d.decision == MCP_DECISION_ALLOWED;
  if (tool && !allowed) {
    mcp__audit_reply(s, ctx, tool->name, rc ? MCP_DECISION_ALLOWED : d.decision,
                     rc ? NULL : (const char *const *)d.missing, false, rc != 0,
                     started);
  }
  if (rc)
    mcp__req_error(s, ctx, r, MCP__RPC_INTERNAL_ERROR, "Internal error", NULL);
  else if (!allowed)
    deny(s, ctx, r, &d, kind_name(t));
  mcp__decision_free(&d);
  mcp__free(owned);
  return allowed;
}

/* ---- the table ----------------------------------------------------------- */

static void handle_ping(mcp_session *s, mcp__reply_ctx *ctx, const mcp__req *r,
                        mcp__target *t) {
  (void)t;
  mcp__buf b = {0};
  mcp__reply_result(s, ctx, r, &b);
}

static void list_tools(mcp_session *s, mcp__reply_ctx *ctx, const mcp__req *r,
                       mcp__target *t) {
  (void)t;
  mcp__handle_list(s, ctx, r, &s->home.srv->reg);
}

static void list_prompts(mcp_session *s, mcp__reply_ctx *ctx, const mcp__req *r,
                         mcp__target *t) {
  (void)t;
  mcp__handle_list(s, ctx, r, &s->home.srv->prompts);
}

static void list_resources(mcp_session *s, mcp__reply_ctx *ctx,
                           const mcp__req *r, mcp__target *t) {
  (void)t;
  mcp__handle_list(s, ctx, r, &s->home.srv->resources);
}

static void list_skills(mcp_session *s, mcp__reply_ctx *ctx, const mcp__req *r,
                        mcp__target *t) {
  (void)t;
  mcp__handle_list(s, ctx, r, &s->home.srv->skills);
}

static void list_templates(mcp_session *s, mcp__reply_ctx *ctx,
                           const mcp__req *r, mcp__target *t) {
  (void)t;
  mcp__handle_list(s, ctx, r, &s->home.srv->templates);
}

#define LEGACY MCP__ERA_LEGACY
#define MODERN MCP__ERA_MODERN
#define BOTH (MCP__ERA_LEGACY | MCP__ERA_MODERN)
#define NONE MCP__FEATURE_NONE

/* Looked up in order, so tools/call, the busiest, comes first. initialize
 * is dispatched before the era is known (it starts the legacy era); its
 * row is here so that the table names every method served. */
const mcp__method mcp__methods[] = {
    {.name = "tools/call",
     .handle = mcp__handle_tools_call,
     .target = mcp__target_tool,
     .feature = NONE,
     .eras = BOTH,
     .needs_init = true,
     .admission = MCP__ADMIT_ENTRY,
     .calls = true,
     .name_member = "name",
     .name_what = "the tool's name"},
    {.name = "tools/resolve",
     .handle = mcp__handle_tools_resolve,
     .target = mcp__target_resolve,
     .feature = MCP__FEATURE_RESOLUTION,
     .eras = BOTH,
     .needs_init = true,
     .admission = MCP__ADMIT_ENTRY},
    {.name = "initialize",
     .feature = NONE,
     .eras = LEGACY,
     .admission = MCP__ADMIT_NONE,
     .handshake = true},
    {.name = "ping",
     .handle = handle_ping,
     .feature = NONE,
     .eras = LEGACY,
     .admission = MCP__ADMIT_NONE},
    {.name = "server/discover",
     .handle = mcp__handle_discover,
     .feature = NONE,
     .eras = MODERN,
     .admission = MCP__ADMIT_NONE,
     .modern_bare = true},
    {.name = "tools/list",
     .handle = list_tools,
     .feature = NONE,
     .eras = BOTH,
     .needs_init = true,
     .admission = MCP__ADMIT_LIST},
    {.name = "prompts/list",
     .handle = list_prompts,
     .feature = MCP__FEATURE_PROMPTS,
     .eras = BOTH,
     .needs_init = true,
     .admission = MCP__ADMIT_LIST},
    {.name = "prompts/get",
     .handle = mcp__handle_prompts_get,
     .target = mcp__target_prompt,
     .feature = MCP__FEATURE_PROMPTS,
     .eras = BOTH,
     .needs_init = true,
     .admission = MCP__ADMIT_ENTRY,
     .calls = true,
     .name_member = "name",
     .name_what = "the prompt's name"},
    {.name = "resources/list",
     .handle = list_resources,
     .feature = MCP__FEATURE_RESOURCES,
     .eras = BOTH,
     .needs_init = true,
     .admission = MCP__ADMIT_LIST},
    {.name = "resources/templates/list",
     .handle = list_templates,
     .feature = MCP__FEATURE_RESOURCES,
     .eras = BOTH,
     .needs_init = true,
     .admission = MCP__ADMIT_LIST},
    {.name = "resources/read",
     .handle = mcp__handle_resources_read,
     .target = mcp__target_resource,
     .feature = MCP__FEATURE_RESOURCES,
     .eras = BOTH,
     .needs_init = true,
     .admission = MCP__ADMIT_ENTRY,
     .calls = true,
     .name_member = "uri",
     .name_what = "the resource's URI"},
    {.name = "completion/complete",
     .handle = mcp__handle_complete,
     .target = mcp__target_completion,
     .feature = MCP__FEATURE_COMPLETIONS,
     .eras = BOTH,
     .needs_init = true,
     .admission = MCP__ADMIT_ENTRY},
    {.name = "resources/subscribe",
     .handle = mcp__handle_subscribe,
     .target = mcp__target_resource,
     .feature = MCP__FEATURE_RESOURCES,
     .eras = LEGACY,
     .needs_init = true,
     .admission = MCP__ADMIT_ENTRY},
    {.name = "resources/unsubscribe",
     .handle = mcp__handle_unsubscribe,
     .feature = MCP__FEATURE_RESOURCES,
     .eras = LEGACY,
     .needs_init = true,
     .admission = MCP__ADMIT_NONE},
    {.name = "logging/setLevel",
     .handle = mcp__handle_set_level,
     .feature = NONE,
     .eras = LEGACY,
     .needs_init = true,
     .admission = MCP__ADMIT_NONE},
    {.name = "subscriptions/listen",
     .handle = mcp__handle_listen,
     .target = mcp__target_listen,
     .feature = NONE,
     .eras = MODERN,
     .admission = MCP__ADMIT_ENTRY},
    {.name = "skills/list",
     .handle = list_skills,
     .feature = MCP__FEATURE_SKILLS,
     .eras = BOTH,
     .needs_init = true,
     .admission = MCP__ADMIT_LIST},
    {.name = "skills/get",
     .handle = mcp__handle_skills_get,
     .target = mcp__target_skill,
     .feature = MCP__FEATURE_SKILLS,
     .eras = BOTH,
     .needs_init = true,
     .admission = MCP__ADMIT_ENTRY},
    {.name = "tasks/get",
     .handle = mcp__handle_tasks_get,
     .target = mcp__target_task,
     .feature = MCP__FEATURE_TASKS,
     .eras = BOTH,
     .needs_init = true,
     .admission = MCP__ADMIT_ENTRY,
     .name_member = "taskId",
     .name_what = "the task id"},
    {.name = "tasks/cancel",
     .handle = mcp__handle_tasks_cancel,
     .target = mcp__target_task,
     .feature = MCP__FEATURE_TASKS,
     .eras = BOTH,
     .needs_init = true,
     .admission = MCP__ADMIT_ENTRY,
     .name_member = "taskId",
     .name_what = "the task id"},
    {.name = "tasks/update",
     .handle = mcp__handle_tasks_update,
     .target = mcp__target_task,
     .feature = MCP__FEATURE_TASKS,
     .eras = MODERN,
     .needs_init = true,
     .admission = MCP__ADMIT_ENTRY,
     .name_member = "taskId",
     .name_what = "the task id"},
    {.name = "tasks/result",
     .handle = mcp__handle_tasks_result,
     .target = mcp__target_task,
     .feature = MCP__FEATURE_TASKS,
     .eras = LEGACY,
     .needs_init = true,
     .admission = MCP__ADMIT_ENTRY},
    {.name = "tasks/list",
     .handle = mcp__handle_tasks_list,
     .feature = MCP__FEATURE_TASKS,
     .eras = LEGACY,
     .needs_init = true,
     .admission = MCP__ADMIT_LIST},
};
const size_t mcp__nmethods = sizeof mcp__methods / sizeof *mcp__methods;

const mcp__method *mcp__method_find(const char *name) {
  for (size_t i = 0; i < mcp__nmethods; i++)
    if (mcp__streq(name, mcp__methods[i].name))
      return &mcp__methods[i];
  return NULL;
}

unsigned mcp__method_era(const mcp__method *row, const cJSON *params) {
  const cJSON *meta = mcp__json_member(params, "_meta");
  bool version =
      mcp__json_member(meta, "io.modelcontextprotocol/protocolVersion") != NULL;
  bool caps = mcp__json_member(
                  meta, "io.modelcontextprotocol/clientCapabilities") != NULL;
  bool modern = row && row->handshake
                    ? version
                    : version || caps || (row && row->modern_bare);
  return modern ? MCP__ERA_MODERN : MCP__ERA_LEGACY;
}

/* ---- one request --------------------------------------------------------- */

/* Finds an unfinished call by canonical id. Call with s->home.lock held. */
mcp_call *mcp__find_call(mcp_session *s, const char *canon) {
  mcp__list_each(link, &s->home.calls) {
    mcp_call *c = mcp__container_of(link, mcp_call, link);
    if (strcmp(c->canon_id, canon) == 0)
      return c;
  }
  return NULL;
}

/* A new call must not reuse the id of one in progress: refused before
 * anything else is asked (the authorizer included), since it is not a new
 * call. Returns false after answering. */
static bool fresh_id(mcp_session *s, mcp__reply_ctx *ctx, mcp__req *r,
                     mcp__buf *scratch) {
  r->canon_id = mcp__msg_canon_id(r->m, scratch);
  if (r->canon_id == NULL) {
    mcp__req_error(s, ctx, r, MCP__RPC_INTERNAL_ERROR, "Internal error", NULL);
    return false;
  }
  pthread_mutex_lock(&s->home.lock);
  bool duplicate = mcp__find_call(s, r->canon_id) != NULL;
  pthread_mutex_unlock(&s->home.lock);
  if (duplicate)
    mcp__req_error(s, ctx, r, MCP__RPC_INVALID_REQUEST,
                   "Invalid Request: a call with this id is still in progress",
                   NULL);
  return !duplicate;
}

void mcp__dispatch(mcp_session *s, mcp__reply_ctx *ctx, mcp__req *r,
                   const mcp__method *row) {
  unsigned long long started = mcp__now_us();
  if (row->admission != MCP__ADMIT_ENTRY) {
    row->handle(s, ctx, r, NULL);
    return;
  }
  mcp__buf canon = {0};
  mcp__target t = {0};
  if ((!row->calls || fresh_id(s, ctx, r, &canon)) &&
      row->target(s, ctx, r, &t) && admit(s, ctx, r, &t, started)) {
    r->started_us = started;
    row->handle(s, ctx, r, &t);
  }
  mcp__target_free(&t);
  mcp__buf_free(&canon);
}
