/* The server surface beyond tools: prompts/get, resources/read, resource
 * subscriptions (legacy resources/subscribe and modern
 * subscriptions/listen), logging/setLevel and completion/complete. Prompts
 * and resources run through the same call machinery as tools (call.c),
 * so scopes, input requests, deferral and cancellation work alike. */
#include <cjson/cJSON.h>
#include <string.h>

#include "engine.h"

/* Most URIs one legacy session or one listener may subscribe to. */
#define MAX_SUBSCRIPTIONS 256

/* ---- capabilities -------------------------------------------------------- */

static bool any_complete(const mcp__registry *r) {
  for (size_t i = 0; i < r->n; i++)
    if (r->tools[i]->complete)
      return true;
  return false;
}

/* A feature is offered while the server has something of it registered:
 * announced in the capabilities, its methods served; without it they
 * answer -32601, as for a capability not advertised. Register prompts and
 * resources before serving, so that initialize announces them. */
bool mcp__offers(mcp_server *srv, mcp__feature f) {
  pthread_mutex_lock(&srv->lock);
  bool on = f == MCP__FEATURE_PROMPTS ? srv->prompts.n > 0
            : f == MCP__FEATURE_RESOURCES
                ? srv->resources.n + srv->templates.n > 0
            : f == MCP__FEATURE_SKILLS ? srv->skills.n > 0
            : f == MCP__FEATURE_TASKS
                ? srv->reg.ntask > 0
                : any_complete(&srv->prompts) || any_complete(&srv->templates);
  pthread_mutex_unlock(&srv->lock);
  return on;
}

unsigned mcp__put_capabilities(mcp__buf *b, mcp_server *srv, mcp__version v) {
  bool prompts = mcp__offers(srv, MCP__FEATURE_PROMPTS);
  bool resources = mcp__offers(srv, MCP__FEATURE_RESOURCES);
  bool complete = mcp__offers(srv, MCP__FEATURE_COMPLETIONS);
  if (prompts)
    mcp__buf_puts(b, ",\"prompts\":{\"listChanged\":true}");
  if (resources)
    mcp__buf_puts(b,
                  ",\"resources\":{\"subscribe\":true,\"listChanged\":true}");
  /* completion/complete arrived in 2025-03-26. */
  if (complete && v >= MCP__V2025_03_26)
    mcp__buf_puts(b, ",\"completions\":{}");
  bool tasks = v >= MCP__V2025_11_25 && mcp__offers(srv, MCP__FEATURE_TASKS);
  /* 2025-11-25's tasks are a capability of their own; 2026-07-28 made them
   * an extension. */
  if (tasks && v < MCP__VERSION_MODERN)
    mcp__buf_puts(b, ",\"tasks\":{\"list\":{},\"cancel\":{},\"requests\":"
                     "{\"tools\":{\"call\":{}}}}");
  /* Extensions are declared from 2025-11-25, where capabilities have room
   * for them. */
  bool skills = v >= MCP__V2025_11_25 && mcp__offers(srv, MCP__FEATURE_SKILLS);
  tasks = tasks && v >= MCP__VERSION_MODERN;
  if (skills || tasks)
    mcp__buf_printf(b, ",\"extensions\":{%s%s%s}",
                    skills ? "\"io.modelcontextprotocol/skills\":{}" : "",
                    skills && tasks ? "," : "",
                    tasks ? "\"io.modelcontextprotocol/tasks\":{}" : "");
  return (prompts ? (unsigned)MCP__LISTEN_PROMPTS : 0u) |
         (resources ? (unsigned)MCP__LISTEN_RESOURCES : 0u);
}

/* ---- prompts/get and resources/read -------------------------------------- */

/* Answers -32602 "Invalid params: <what> <name>" for an unknown name. */
static void unknown(mcp_session *s, mcp__reply_ctx *ctx, const mcp__req *r,
                    const char *what, const char *name) {
  char msg[200];
  mcp__fmt(msg, sizeof msg, "Invalid params: unknown %s: %.128s", what, name);
  mcp__utf8_trim(msg);
  mcp__req_error(s, ctx, r, MCP__RPC_INVALID_PARAMS, msg, NULL);
}

bool mcp__target_prompt(mcp_session *s, mcp__reply_ctx *ctx, const mcp__req *r,
                        mcp__target *t) {
  const cJSON *name = mcp__member(r->params, "name");
  if (!cJSON_IsString(name)) {
    mcp__reply_invalid_params(s, ctx, r,
                              "prompts/get needs a prompt name (string)");
    return false;
  }
  t->entry = mcp__find_visible(s->srv, &s->srv->prompts, name->valuestring,
                               mcp__visible_to(s));
  if (t->entry == NULL) {
    unknown(s, ctx, r, "prompt", name->valuestring);
    return false;
  }
  t->args = (cJSON *)mcp__member(r->params, "arguments");
  return true;
}

void mcp__handle_prompts_get(mcp_session *s, mcp__reply_ctx *ctx,
                             const mcp__req *r, mcp__target *t) {
  /* Admitted first, so a caller who may not use the prompt learns nothing
   * of its arguments. */
  char why[300];
  if (mcp__prompt_check_args(t->entry, t->args, why, sizeof why)) {
    mcp__reply_invalid_params(s, ctx, r, why);
    return;
  }
  mcp__json_pool *pool;
  cJSON *args = mcp__take_args(r, t, &pool);
  mcp__tool *prompt = t->entry;
  t->entry = NULL;
  mcp__start_call(s, ctx, r, prompt, args, pool, NULL);
}

/* Finds what serves uri: a resource registered under it, else the first
 * template that matches it, whose variables go to *vars (NULL when vars is
 * NULL). With visible, entries hidden from that caller are passed over, as
 * if absent. Returns a new reference, or NULL with *rc MCP_ENOENT or
 * MCP_ENOMEM. */
mcp__tool *mcp__find_resource(mcp_server *srv, const char *uri,
                              const mcp_principal *visible, cJSON **vars,
                              int *rc) {
  cJSON *found = NULL;
  *rc = MCP_ENOENT;
  pthread_mutex_lock(&srv->lock);
  mcp__tool *t = mcp__registry_find(&srv->resources, uri);
  if (t && visible && !mcp__tool_callable_by(t, visible)) {
    mcp__tool_unref(t);
    t = NULL;
  }
  for (size_t i = 0; t == NULL && i < srv->templates.n; i++) {
    mcp__tool *c = srv->templates.tools[i];
    if (visible && !mcp__tool_callable_by(c, visible))
      continue;
    int m = mcp__uritemplate_match(c->tmpl, uri, &found);
    if (m == 0) {
      t = c;
      mcp__tool_ref(t);
    } else if (m == MCP_ENOMEM) {
      *rc = MCP_ENOMEM;
      break;
    }
  }
  pthread_mutex_unlock(&srv->lock);
  if (t && found == NULL && vars && (found = cJSON_CreateObject()) == NULL) {
    mcp__tool_unref(t);
    *rc = MCP_ENOMEM;
    return NULL;
  }
  if (vars)
    *vars = found;
  else
    cJSON_Delete(found);
  return t;
}

static const char *request_uri(mcp_session *s, mcp__reply_ctx *ctx,
                               const mcp__req *r) {
  const cJSON *uri = mcp__member(r->params, "uri");
  if (!cJSON_IsString(uri)) {
    mcp__reply_invalid_params(s, ctx, r, "uri is required (a string)");
    return NULL;
  }
  if (!mcp__uri_valid(uri->valuestring, MCP__URI_REQUESTED)) {
    mcp__reply_invalid_params(s, ctx, r,
                              "uri must be 1-4096 bytes of UTF-8 without "
                              "control characters");
    return NULL;
  }
  return uri->valuestring;
}

/* Both ways of finding that a resource does not exist end here (nothing
 * serves the URI, or its handler finished with MCP_ENOENT), so a client
 * gets the same answer either way: the protocol's not-found error naming
 * the URI, never an empty contents list. */
int mcp__rpc_resource_not_found(mcp__buf *out, const char *id, size_t id_len,
                                bool modern, const char *uri) {
  mcp__buf data = {0};
  mcp__buf_puts(&data, "{\"uri\":");
  mcp__json_quote(&data, uri, strlen(uri));
  mcp__buf_putc(&data, '}');
  const char *json = mcp__buf_str(&data);
  int code = modern ? MCP__RPC_INVALID_PARAMS : MCP__RPC_RESOURCE_NOT_FOUND;
  if (json)
    mcp__rpc_error(out, id, id_len, MCP__ID_NULL, code, "Resource not found",
                   json);
  else if (!out->err)
    out->err = data.err;
  mcp__buf_free(&data);
  return code;
}

bool mcp__target_resource(mcp_session *s, mcp__reply_ctx *ctx,
                          const mcp__req *r, mcp__target *t) {
  const char *uri = request_uri(s, ctx, r);
  if (uri == NULL)
    return false;
  int rc;
  t->entry = mcp__find_resource(s->srv, uri, mcp__visible_to(s), &t->vars, &rc);
  if (t->entry == NULL) {
    if (rc == MCP_ENOMEM) {
      mcp__req_error(s, ctx, r, MCP__RPC_INTERNAL_ERROR, "Internal error",
                     NULL);
      return false;
    }
    mcp__buf b = {0};
    ctx->facts.kind = MCP_SENT_ERROR;
    ctx->facts.error_code =
        mcp__rpc_resource_not_found(&b, r->m->id, r->m->id_len, r->modern, uri);
    mcp__reply_buf(s, ctx, &b);
    return false;
  }
  t->uri = uri;
  return true;
}

bool mcp__target_skill(mcp_session *s, mcp__reply_ctx *ctx, const mcp__req *r,
                       mcp__target *t) {
  const char *uri = request_uri(s, ctx, r);
  if (uri == NULL)
    return false;
  t->entry =
      mcp__find_visible(s->srv, &s->srv->skills, uri, mcp__visible_to(s));
  if (t->entry == NULL) {
    /* The code resources/read uses for what it does not serve. */
    unknown(s, ctx, r, "skill", uri);
    return false;
  }
  return true;
}

void mcp__handle_skills_get(mcp_session *s, mcp__reply_ctx *ctx,
                            const mcp__req *r, mcp__target *t) {
  mcp__buf b = {0};
  mcp__buf_puts(&b, "\"skill\":");
  mcp__buf_append(&b, t->entry->wire[r->v], t->entry->wire_len[r->v]);
  mcp__buf_putc(&b, ',');
  if (r->modern)
    mcp__put_cache(&b, s->srv, false);
  mcp__reply_result(s, ctx, r, &b);
}

void mcp__handle_resources_read(mcp_session *s, mcp__reply_ctx *ctx,
                                const mcp__req *r, mcp__target *t) {
  mcp__tool *entry = t->entry;
  cJSON *vars = t->vars;
  t->entry = NULL;
  t->vars = NULL;
  mcp__start_call(s, ctx, r, entry, vars, NULL, t->uri);
}

/* ---- legacy subscriptions ------------------------------------------------ */

/* Adds (on) or drops uri from the session's subscriptions. */
static void subscription(mcp_session *s, mcp__reply_ctx *ctx, const mcp__req *r,
                         const char *uri, bool on) {
  int rc = 0;
  pthread_mutex_lock(&s->lock);
  size_t i = 0;
  while (i < s->nsubscribed && strcmp(s->subscribed[i], uri) != 0)
    i++;
  if (on && i == s->nsubscribed) {
    char *copy = NULL;
    char **grown = NULL;
    if (s->nsubscribed >= MAX_SUBSCRIPTIONS)
      rc = MCP_ELIMIT;
    else if ((copy = mcp__strdup(uri)) == NULL ||
             (grown = mcp__realloc(s->subscribed, (s->nsubscribed + 1) *
                                                      sizeof *grown)) == NULL)
      rc = MCP_ENOMEM;
    if (rc == 0) {
      s->subscribed = grown;
      s->subscribed[s->nsubscribed++] = copy;
    } else {
      mcp__free(copy);
    }
  } else if (!on && i < s->nsubscribed) {
    mcp__free(s->subscribed[i]);
    s->subscribed[i] = s->subscribed[--s->nsubscribed];
  }
  pthread_mutex_unlock(&s->lock);
  if (rc == MCP_ELIMIT) {
    mcp__reply_invalid_params(s, ctx, r,
                              "this session already watches 256 resources; "
                              "unsubscribe from some first");
  } else if (rc) {
    mcp__req_error(s, ctx, r, MCP__RPC_INTERNAL_ERROR, "Internal error", NULL);
  } else {
    mcp__buf b = {0};
    mcp__reply_result(s, ctx, r, &b);
  }
}

/* Admitted: the caller may read what it subscribes to, or it would learn
 * of changes to what it may not read. */
void mcp__handle_subscribe(mcp_session *s, mcp__reply_ctx *ctx,
                           const mcp__req *r, mcp__target *t) {
  subscription(s, ctx, r, t->uri, true);
}

/* Dropping a subscription touches nothing guarded. */
void mcp__handle_unsubscribe(mcp_session *s, mcp__reply_ctx *ctx,
                             const mcp__req *r, mcp__target *t) {
  (void)t;
  const char *uri = request_uri(s, ctx, r);
  if (uri)
    subscription(s, ctx, r, uri, false);
}

/* ---- logging/setLevel ---------------------------------------------------- */

void mcp__handle_set_level(mcp_session *s, mcp__reply_ctx *ctx,
                           const mcp__req *r, mcp__target *t) {
  (void)t;
  const cJSON *level = mcp__member(r->params, "level");
  int found = -1;
  for (int i = 0; i < 8 && cJSON_IsString(level); i++)
    if (strcmp(level->valuestring, mcp__log_levels[i]) == 0)
      found = i;
  if (found < 0) {
    mcp__reply_invalid_params(s, ctx, r,
                              "level must be one of debug, info, notice, "
                              "warning, error, critical, alert, emergency");
    return;
  }
  atomic_store(&s->log_level, found);
  mcp__buf b = {0};
  mcp__reply_result(s, ctx, r, &b);
}

/* ---- completion/complete ------------------------------------------------- */

/* Most values one completion answers with (the protocol's limit). */
#define MAX_VALUES 100

struct mcp_completion {
  const char *argument, *value;
  const cJSON *context; /* context.arguments, or NULL */
  const mcp_principal *principal;
  mcp__buf values; /* quoted strings, comma-separated */
  size_t n;
  bool more;
  bool has_total;
  unsigned long total;
};

const char *mcp_completion_argument(const mcp_completion *c) {
  return c->argument;
}

const char *mcp_completion_value(const mcp_completion *c) { return c->value; }

const char *mcp_completion_context(const mcp_completion *c, const char *name) {
  const cJSON *v = name ? mcp__member(c->context, name) : NULL;
  return cJSON_IsString(v) ? v->valuestring : NULL;
}

const mcp_principal *mcp_completion_principal(const mcp_completion *c) {
  return c->principal;
}

int mcp_completion_add(mcp_completion *c, const char *value) {
  if (c == NULL || value == NULL || !mcp__utf8_valid(value, strlen(value)))
    return MCP_EINVAL;
  if (c->n >= MAX_VALUES) {
    c->more = true;
    return MCP_ELIMIT;
  }
  if (c->n)
    mcp__buf_putc(&c->values, ',');
  mcp__json_quote(&c->values, value, strlen(value));
  if (c->values.err)
    return c->values.err;
  c->n++;
  return 0;
}

void mcp_completion_set_total(mcp_completion *c, unsigned long total) {
  if (c) {
    c->has_total = true;
    c->total = total;
  }
}

/* Checks a completion's params and finds the prompt or template its ref
 * names (with hide-forbidden on, one the caller may not use is unknown).
 * Suggestions reveal what a prompt or resource holds, and the names of
 * its arguments what it takes: the caller needs the same scopes as for
 * using it, which the admission point checks before anything else. */
bool mcp__target_completion(mcp_session *s, mcp__reply_ctx *ctx,
                            const mcp__req *r, mcp__target *t) {
  const cJSON *arg = mcp__member(r->params, "argument");
  const cJSON *name = mcp__member(arg, "name"),
              *value = mcp__member(arg, "value");
  const cJSON *context = mcp__member(r->params, "context");
  const cJSON *cargs = mcp__member(context, "arguments");
  if (!cJSON_IsString(name) || !cJSON_IsString(value)) {
    mcp__reply_invalid_params(s, ctx, r,
                              "argument must be {\"name\":string,\"value\":"
                              "string}");
    return false;
  }
  if ((context && !cJSON_IsObject(context)) ||
      (cargs && !cJSON_IsObject(cargs))) {
    mcp__reply_invalid_params(s, ctx, r,
                              "context.arguments must be an object of "
                              "strings");
    return false;
  }
  const cJSON *ref = mcp__member(r->params, "ref");
  const cJSON *type = mcp__member(ref, "type");
  bool prompt =
      cJSON_IsString(type) && strcmp(type->valuestring, "ref/prompt") == 0;
  bool resource =
      cJSON_IsString(type) && strcmp(type->valuestring, "ref/resource") == 0;
  const cJSON *key = mcp__member(ref, prompt ? "name" : "uri");
  if ((!prompt && !resource) || !cJSON_IsString(key)) {
    mcp__reply_invalid_params(s, ctx, r,
                              "ref must be {\"type\":\"ref/prompt\",\"name\":"
                              "...} or {\"type\":\"ref/resource\",\"uri\":"
                              "...}");
    return false;
  }
  mcp_server *srv = s->srv;
  const mcp_principal *visible = mcp__visible_to(s);
  t->entry = mcp__find_visible(srv, prompt ? &srv->prompts : &srv->templates,
                               key->valuestring, visible);
  if (t->entry == NULL && resource)
    t->entry =
        mcp__find_visible(srv, &srv->resources, key->valuestring, visible);
  if (t->entry == NULL) {
    unknown(s, ctx, r, prompt ? "prompt" : "resource", key->valuestring);
    return false;
  }
  return true;
}

void mcp__handle_complete(mcp_session *s, mcp__reply_ctx *ctx,
                          const mcp__req *r, mcp__target *target) {
  const cJSON *arg = mcp__member(r->params, "argument");
  const char *argument = mcp__member(arg, "name")->valuestring;
  const cJSON *cargs =
      mcp__member(mcp__member(r->params, "context"), "arguments");
  const mcp__tool *t = target->entry;
  bool known = false;
  for (size_t i = 0; i < t->nargs && !known; i++)
    known = strcmp(t->arg_names[i], argument) == 0;
  if (t->tmpl)
    known = mcp__uritemplate_has_var(t->tmpl, argument);
  if (!known) {
    char msg[300];
    mcp__fmt(msg, sizeof msg, "%s has no %s named \"%.64s\"", t->name,
             t->kind == MCP_CALL_PROMPT ? "argument" : "variable", argument);
    mcp__utf8_trim(msg);
    mcp__reply_invalid_params(s, ctx, r, msg);
    return;
  }
  mcp_completion c = {.argument = argument,
                      .value = mcp__member(arg, "value")->valuestring,
                      .context = cargs,
                      .principal = &s->principal};
  int rc = t->complete ? t->complete(&c, t->user_data) : 0;
  if (rc < 0 || c.values.err) {
    mcp__log(s->srv, MCP_LOG_ERROR, "completion of \"%s\" failed: %s", t->name,
             mcp_strerror(rc < 0 ? rc : c.values.err));
    mcp__req_error(s, ctx, r, MCP__RPC_INTERNAL_ERROR, "Internal error", NULL);
  } else {
    mcp__buf b = {0};
    mcp__buf_puts(&b, "\"completion\":{\"values\":[");
    mcp__buf_append(&b, c.values.data, c.values.len);
    mcp__buf_putc(&b, ']');
    if (c.has_total)
      mcp__buf_printf(&b, ",\"total\":%lu", c.total);
    mcp__buf_printf(&b, ",\"hasMore\":%s},", c.more ? "true" : "false");
    mcp__reply_result(s, ctx, r, &b);
  }
  mcp__buf_free(&c.values);
}

/* ---- modern subscriptions/listen ----------------------------------------- */

void mcp__listener_free(mcp__listener *l) {
  if (l == NULL)
    return;
  if (l->counted)
    atomic_fetch_sub(&l->counted->task_listeners, 1);
  for (size_t i = 0; i < l->nuris; i++)
    mcp__free(l->uris[i]);
  mcp__free(l->uris);
  for (size_t i = 0; i < l->ntask_ids; i++)
    mcp__free(l->task_ids[i]);
  mcp__free(l->task_ids);
  mcp__free(l->id);
  mcp__free(l->canon_id);
  mcp__free(l);
}

mcp__sink *mcp__listener_cancel_locked(mcp_session *s, const char *canon) {
  for (mcp__listener **p = &s->listeners; *p; p = &(*p)->next) {
    if (strcmp((*p)->canon_id, canon) == 0) {
      mcp__listener *l = *p;
      mcp__sink *sink = l->sink;
      *p = l->next;
      mcp__listener_free(l);
      return sink;
    }
  }
  return NULL;
}

void mcp__session_drop_subscriptions_locked(mcp_session *s,
                                            mcp__sink ***sinks) {
  size_t n = 0;
  for (mcp__listener *l = s->listeners; l; l = l->next)
    n++;
  /* Without memory for the list the sinks are released at once: their
   * done callbacks then run under the lock, which only the transport's
   * own bookkeeping sees. */
  mcp__sink **out = n ? mcp__calloc(n + 1, sizeof *out) : NULL;
  n = 0;
  while (s->listeners) {
    mcp__listener *l = s->listeners;
    s->listeners = l->next;
    if (out)
      out[n++] = l->sink;
    else
      mcp__sink_release(l->sink);
    mcp__listener_free(l);
  }
  *sinks = out;
}

/* Reads a listen request's filter into l; returns NULL or why it is bad. */
/* Copies the strings of array (at most MAX_SUBSCRIPTIONS, each valid as
 * ok says) into *out. Returns 0; 1 when it names too many; 2 when an entry
 * is not a valid string; or MCP_ENOMEM. */
static int read_strings(const cJSON *array, bool (*ok)(const char *),
                        char ***out, size_t *n) {
  int count = cJSON_GetArraySize(array);
  if (count > MAX_SUBSCRIPTIONS)
    return 1;
  if (count && (*out = mcp__calloc((size_t)count, sizeof **out)) == NULL)
    return MCP_ENOMEM;
  for (const cJSON *u = array->child; u; u = u->next) {
    if (!cJSON_IsString(u) || !ok(u->valuestring))
      return 2;
    if (((*out)[*n] = mcp__strdup(u->valuestring)) == NULL)
      return MCP_ENOMEM;
    (*n)++;
  }
  return 0;
}

static bool uri_ok(const char *uri) {
  return mcp__uri_valid(uri, MCP__URI_REQUESTED);
}

static bool task_id_ok(const char *id) {
  size_t n = strlen(id);
  return n > 0 && n <= 64;
}

static const char *read_filter(const cJSON *filter, mcp__listener *l, int *rc) {
  static const struct {
    const char *key;
    unsigned flag;
  } kinds[] = {{"toolsListChanged", MCP__LISTEN_TOOLS},
               {"promptsListChanged", MCP__LISTEN_PROMPTS},
               {"resourcesListChanged", MCP__LISTEN_RESOURCES}};
  if (!cJSON_IsObject(filter))
    return "notifications is required (an object)";
  for (size_t i = 0; i < sizeof kinds / sizeof *kinds; i++) {
    const cJSON *v = mcp__member(filter, kinds[i].key);
    if (v && !cJSON_IsBool(v))
      return "the list-changed members of notifications must be booleans";
    if (cJSON_IsTrue(v))
      l->flags |= kinds[i].flag;
  }
  const cJSON *uris = mcp__member(filter, "resourceSubscriptions");
  int got =
      cJSON_IsArray(uris) ? read_strings(uris, uri_ok, &l->uris, &l->nuris) : 0;
  if (uris && !cJSON_IsArray(uris))
    return "resourceSubscriptions must be an array of URIs";
  if (got == 1)
    return "resourceSubscriptions names more than 256 URIs";
  if (got == 2)
    return "resourceSubscriptions must hold URIs (1-4096 bytes of UTF-8 "
           "without control characters)";
  /* The tasks extension's: the tasks whose status the listener hears of. */
  const cJSON *tasks = mcp__member(filter, "taskIds");
  int ids = got == 0 && cJSON_IsArray(tasks)
                ? read_strings(tasks, task_id_ok, &l->task_ids, &l->ntask_ids)
                : 0;
  if (tasks && !cJSON_IsArray(tasks))
    return "taskIds must be an array of task ids";
  if (ids == 1)
    return "taskIds names more than 256 tasks";
  if (ids == 2)
    return "taskIds must hold task ids (strings of 1-64 bytes)";
  if (got == MCP_ENOMEM || ids == MCP_ENOMEM)
    *rc = MCP_ENOMEM;
  return NULL;
}

/* Reads the listen request's filter into a listener kept in t, and finds
 * what serves each URI it watches: those URIs are admitted (a caller hears
 * of changes only to what it may read), and those nothing serves (or, with
 * hide-forbidden on, the caller may not see) are not honoured. */
bool mcp__target_listen(mcp_session *s, mcp__reply_ctx *ctx, const mcp__req *r,
                        mcp__target *t) {
  mcp__listener *l = mcp__calloc(1, sizeof *l);
  int rc = l ? 0 : MCP_ENOMEM;
  const char *bad =
      l ? read_filter(mcp__member(r->params, "notifications"), l, &rc) : NULL;
  if (bad) {
    mcp__listener_free(l);
    mcp__reply_invalid_params(s, ctx, r, bad);
    return false;
  }
  t->listener = l;
  if (rc == 0 && l->ntask_ids && !mcp__task_listen_allowed(s, ctx, r))
    return false;
  if (rc == 0 && l->nuris &&
      (t->entries = mcp__calloc(l->nuris, sizeof *t->entries)) == NULL)
    rc = MCP_ENOMEM;
  const mcp_principal *visible = mcp__visible_to(s);
  for (size_t i = 0; rc == 0 && i < l->nuris; i++) {
    int found;
    t->entries[i] =
        mcp__find_resource(s->srv, l->uris[i], visible, NULL, &found);
    t->nentries = i + 1;
    if (t->entries[i] == NULL && found == MCP_ENOMEM)
      rc = MCP_ENOMEM;
  }
  if (rc)
    mcp__req_error(s, ctx, r, MCP__RPC_INTERNAL_ERROR, "Internal error", NULL);
  return rc == 0;
}

/* Frees each of the n strings v that keep says no to, and packs the rest;
 * returns how many are kept. */
static size_t keep_strings(char **v, size_t n,
                           bool (*keep)(size_t i, const char *, void *),
                           void *user) {
  size_t kept = 0;
  for (size_t i = 0; i < n; i++) {
    if (keep(i, v[i], user))
      v[kept++] = v[i];
    else
      mcp__free(v[i]);
  }
  return kept;
}

static bool served(size_t i, const char *uri, void *user) {
  (void)uri;
  return ((const mcp__target *)user)->entries[i] != NULL;
}

static bool own_task(size_t i, const char *id, void *user) {
  (void)i;
  mcp_session *s = user;
  return mcp__task_visible(s->srv, id, &s->principal);
}

/* Keeps in l what it may hear of: URIs something serves (t's entries, when
 * the server offers resources), the caller's own tasks, and the lists the
 * server offers (as server/discover announces them: no prompts, no prompt
 * list changes; no resources, neither resource list changes nor resource
 * subscriptions; tools always). */
static void honour(mcp_session *s, const mcp__target *t, mcp__listener *l) {
  l->nuris = keep_strings(l->uris, l->nuris, served, (void *)t);
  l->ntask_ids = keep_strings(l->task_ids, l->ntask_ids, own_task, s);
  if (!mcp__offers(s->srv, MCP__FEATURE_PROMPTS))
    l->flags &= ~(unsigned)MCP__LISTEN_PROMPTS;
  if (!mcp__offers(s->srv, MCP__FEATURE_RESOURCES)) {
    l->flags &= ~(unsigned)MCP__LISTEN_RESOURCES;
    for (size_t i = 0; i < l->nuris; i++)
      mcp__free(l->uris[i]);
    l->nuris = 0;
  }
}

/* Appends, after sep, "key":[the n strings v] when there is any; returns
 * the separator of what follows. */
static const char *put_list(mcp__buf *b, const char *sep, const char *key,
                            char *const *v, size_t n) {
  if (n == 0)
    return sep;
  mcp__buf_printf(b, "%s\"%s\":[", sep, key);
  for (size_t i = 0; i < n; i++) {
    mcp__buf_puts(b, i ? "," : "");
    mcp__json_quote(b, v[i], strlen(v[i]));
  }
  mcp__buf_putc(b, ']');
  return ",";
}

/* The acknowledgement of listener l: what it honours, tagged with its
 * subscriptionId. */
static void put_ack(mcp__buf *ack, const mcp__listener *l) {
  static const struct {
    unsigned flag;
    const char *key;
  } kinds[] = {{MCP__LISTEN_TOOLS, "toolsListChanged"},
               {MCP__LISTEN_PROMPTS, "promptsListChanged"},
               {MCP__LISTEN_RESOURCES, "resourcesListChanged"}};
  mcp__buf_puts(ack, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/"
                     "subscriptions/acknowledged\",\"params\":{"
                     "\"notifications\":{");
  const char *sep = "";
  for (size_t i = 0; i < sizeof kinds / sizeof *kinds; i++) {
    if (l->flags & kinds[i].flag) {
      mcp__buf_printf(ack, "%s\"%s\":true", sep, kinds[i].key);
      sep = ",";
    }
  }
  sep = put_list(ack, sep, "resourceSubscriptions", l->uris, l->nuris);
  put_list(ack, sep, "taskIds", l->task_ids, l->ntask_ids);
  mcp__buf_puts(ack,
                "},\"_meta\":{\"io.modelcontextprotocol/subscriptionId\":");
  mcp__buf_append(ack, l->id, l->id_len);
  mcp__buf_puts(ack, "}}}");
}

void mcp__handle_listen(mcp_session *s, mcp__reply_ctx *ctx, const mcp__req *r,
                        mcp__target *t) {
  mcp__listener *l = t->listener;
  mcp__buf canon = {0}, ack = {0};
  int rc = 0;
  t->listener = NULL;
  honour(s, t, l);
  mcp__id_canonical(&canon, r->m->id_node);
  l->id = mcp__strndup(r->m->id, r->m->id_len);
  l->id_len = r->m->id_len;
  l->canon_id = mcp__buf_take(&canon, NULL);
  if (l->id == NULL || l->canon_id == NULL)
    rc = MCP_ENOMEM;
  if (rc == 0) {
    put_ack(&ack, l);
    rc = ack.err;
  }
  if (rc == 0 && ctx->batch)
    rc = MCP_EINVAL; /* never: modern requests are refused in batches */
  if (rc) {
    if (l)
      mcp__listener_free(l);
    mcp__buf_free(&ack);
    mcp__buf_free(&canon);
    mcp__req_error(s, ctx, r, MCP__RPC_INTERNAL_ERROR, "Internal error", NULL);
    return;
  }
  /* The acknowledgement goes first, then the listener joins: a change
   * between the two is not lost to a listener that never heard it was
   * established, and nothing is sent before the acknowledgement. */
  pthread_mutex_lock(&s->lock);
  bool duplicate = false;
  for (mcp__listener *o = s->listeners; o && !duplicate; o = o->next)
    duplicate = strcmp(o->canon_id, l->canon_id) == 0;
  if (!duplicate && mcp__send_locked(s, ctx->sink, ack.data, ack.len,
                                     &mcp__sent_notification) == 0) {
    l->sink = ctx->sink;
    mcp__sink_ref(l->sink);
    if (l->ntask_ids) {
      /* Counted while it lives, so a task's change looks for listeners
       * only when some exist (mcp__broadcast_task). */
      l->counted = s->srv;
      atomic_fetch_add(&s->srv->task_listeners, 1);
    }
    l->next = s->listeners;
    s->listeners = l;
    l = NULL;
  }
  pthread_mutex_unlock(&s->lock);
  mcp__buf_free(&ack);
  if (l) {
    mcp__listener_free(l);
    if (duplicate)
      mcp__req_error(s, ctx, r, MCP__RPC_INVALID_REQUEST,
                     "Invalid Request: a subscription with this id is open",
                     NULL);
  }
}
