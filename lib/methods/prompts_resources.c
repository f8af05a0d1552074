/* prompts/get, resources/read, skills/get and completion/complete: each
 * finds the entry its request names for admission; prompts and resources
 * then run through the same call machinery as tools (lib/engine/call.c),
 * so scopes, input requests, deferral and cancellation work alike. */
#include <cjson/cJSON.h>
#include <string.h>

#include "methods.h"

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
  const cJSON *name = mcp__json_member(r->params, "name");
  if (!cJSON_IsString(name)) {
    mcp__reply_invalid_params(s, ctx, r,
                              "prompts/get needs a prompt name (string)");
    return false;
  }
  t->entry = mcp__find_visible(s->home.srv, &s->home.srv->prompts,
                               name->valuestring, mcp__visible_to(s));
  if (t->entry == NULL) {
    unknown(s, ctx, r, "prompt", name->valuestring);
    return false;
  }
  t->args = (cJSON *)mcp__json_member(r->params, "arguments");
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

const char *mcp__request_uri(mcp_session *s, mcp__reply_ctx *ctx,
                             const mcp__req *r) {
  const cJSON *uri = mcp__json_member(r->params, "uri");
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

bool mcp__target_resource(mcp_session *s, mcp__reply_ctx *ctx,
                          const mcp__req *r, mcp__target *t) {
  const char *uri = mcp__request_uri(s, ctx, r);
  if (uri == NULL)
    return false;
  int rc;
  t->entry =
      mcp__find_resource(s->home.srv, uri, mcp__visible_to(s), &t->vars, &rc);
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
  const char *uri = mcp__request_uri(s, ctx, r);
  if (uri == NULL)
    return false;
  t->entry = mcp__find_visible(s->home.srv, &s->home.srv->skills, uri,
                               mcp__visible_to(s));
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
    mcp__put_cache(&b, s->home.srv, false);
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
  const cJSON *v = name ? mcp__json_member(c->context, name) : NULL;
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
  const cJSON *arg = mcp__json_member(r->params, "argument");
  const cJSON *name = mcp__json_member(arg, "name"),
              *value = mcp__json_member(arg, "value");
  const cJSON *context = mcp__json_member(r->params, "context");
  const cJSON *cargs = mcp__json_member(context, "arguments");
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
  const cJSON *ref = mcp__json_member(r->params, "ref");
  const cJSON *type = mcp__json_member(ref, "type");
  bool prompt =
      cJSON_IsString(type) && strcmp(type->valuestring, "ref/prompt") == 0;
  bool resource =
      cJSON_IsString(type) && strcmp(type->valuestring, "ref/resource") == 0;
  const cJSON *key = mcp__json_member(ref, prompt ? "name" : "uri");
  if ((!prompt && !resource) || !cJSON_IsString(key)) {
    mcp__reply_invalid_params(s, ctx, r,
                              "ref must be {\"type\":\"ref/prompt\",\"name\":"
                              "...} or {\"type\":\"ref/resource\",\"uri\":"
                              "...}");
    return false;
  }
  mcp_server *srv = s->home.srv;
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
  const cJSON *arg = mcp__json_member(r->params, "argument");
  const char *argument = mcp__json_member(arg, "name")->valuestring;
  const cJSON *cargs =
      mcp__json_member(mcp__json_member(r->params, "context"), "arguments");
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
                      .value = mcp__json_member(arg, "value")->valuestring,
                      .context = cargs,
                      .principal = &s->home.principal};
  int rc = t->complete ? t->complete(&c, t->user_data) : 0;
  if (rc < 0 || c.values.err) {
    mcp__log(s->home.srv, MCP_LOG_ERROR, "completion of \"%s\" failed: %s",
             t->name, mcp_strerror(rc < 0 ? rc : c.values.err));
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
