/* tools/call: finds and vets the tool, takes the caller's rate token, and
 * starts the call (lib/engine/call.c) that runs its handler, or the task
 * that owns it. Prompts and resources start their calls here too. */
#include <cjson/cJSON.h>
#include <string.h>

#include "methods.h"

/* Sends an isError result without running the handler. */
void mcp__reply_tool_error(mcp_session *s, mcp__reply_ctx *ctx,
                           const mcp__req *r, const char *text) {
  mcp__buf b = {0};
  mcp__buf_puts(&b, "\"content\":[{\"type\":\"text\",\"text\":");
  mcp__json_quote(&b, text, strlen(text));
  mcp__buf_puts(&b, "}],\"isError\":true,");
  mcp__reply_result(s, ctx, r, &b);
}

/* Finds the tool a tools/call or tools/resolve names, as its caller may
 * see it. */
bool mcp__target_tool(mcp_session *s, mcp__reply_ctx *ctx, const mcp__req *r,
                      mcp__target *t) {
  cJSON *params = r->params_node;
  const cJSON *name = mcp__json_member(params, "name");
  cJSON *args = (cJSON *)mcp__json_member(params, "arguments");
  if (params == NULL || !cJSON_IsString(name)) {
    /* tools/call's and tools/resolve's */
    char why[96];
    mcp__fmt(why, sizeof why, "%s needs %s", r->m->method,
             params ? "a tool name (string)" : "params");
    mcp__reply_invalid_params(s, ctx, r, why);
    return false;
  }
  if (args != NULL && !cJSON_IsObject(args)) {
    mcp__reply_invalid_params(s, ctx, r, "arguments must be an object");
    return false;
  }
  t->entry = mcp__find_visible(s->home.srv, &s->home.srv->reg,
                               name->valuestring, mcp__visible_to(s));
  if (t->entry == NULL) {
    char msg[200];
    mcp__fmt(msg, sizeof msg, "Unknown tool: %.128s", name->valuestring);
    mcp__utf8_trim(msg);
    mcp__req_error(s, ctx, r, MCP__RPC_INVALID_PARAMS, msg, NULL);
    return false;
  }
  t->args = args;
  return true;
}

cJSON *mcp__take_args(const mcp__req *r, mcp__target *t,
                      mcp__json_pool **pool) {
  /* The call owns its arguments: they outlive this message when the
   * handler defers (holding the message's pool, when it has one). A
   * missing "arguments" is an empty object. */
  cJSON *args = t->args;
  *pool = args ? r->m->pool : NULL;
  if (args)
    cJSON_DetachItemViaPointer(r->params_node, args);
  else
    args = cJSON_CreateObject();
  t->args = NULL;
  return args;
}

static void start_call(mcp_session *s, mcp__reply_ctx *ctx, const mcp__req *r,
                       mcp__tool *tool, cJSON *args, mcp__json_pool *args_pool,
                       const char *uri, mcp__task_mode mode, unsigned ttl_ms);

/* What a call asks of the store's rate limit: its key (owned) and limit. */
typedef struct rate_ask {
  char *key;
  unsigned calls, per;
} rate_ask;

static int rate_key_of(mcp_session *s, rate_ask *rate);

void mcp__handle_tools_call(mcp_session *s, mcp__reply_ctx *ctx,
                            const mcp__req *r, mcp__target *t) {
  /* Whether it may run as a task is settled before anything else of the
   * call: a tool that requires a task is refused to a client that cannot
   * take one before its arguments are even looked at. */
  unsigned ttl_ms = 0;
  int mode = mcp__task_mode_of(s, ctx, r, t->entry, &ttl_ms);
  if (mode < 0)
    return;
  mcp__json_pool *pool;
  cJSON *args = mcp__take_args(r, t, &pool);
  mcp__tool *tool = t->entry;
  t->entry = NULL;
  start_call(s, ctx, r, tool, args, pool, NULL, (mcp__task_mode)mode, ttl_ms);
}

/* Checks what a call asks before it is made: the progress token's type
 * (its JSON goes to tok), and for a tool the caller's rate and the
 * arguments against the input schema; with a store, those two wait for the
 * call (rate: its key and limit, when limited). Returns 0 to go on, 1 when
 * the request was answered (a refusal), or MCP_ENOMEM. */
static int vet_call(mcp_session *s, mcp__reply_ctx *ctx, const mcp__req *r,
                    const mcp__tool *tool, const cJSON *args, mcp__buf *tok,
                    rate_ask *rate) {
  const cJSON *meta = mcp__json_member(r->params, "_meta");
  const cJSON *token =
      cJSON_IsObject(meta) ? mcp__json_member(meta, "progressToken") : NULL;
  if (token && !cJSON_IsString(token) &&
      !(cJSON_IsNumber(token) && mcp__json_integer(token, NULL, NULL))) {
    mcp__reply_invalid_params(
        s, ctx, r, "_meta.progressToken must be a string or an integer");
    return 1;
  }
  if (token)
    mcp__json_write(tok, token);
  if (args == NULL || (token && !mcp__buf_str(tok)))
    return MCP_ENOMEM;
  if (tool->kind != MCP_CALL_TOOL)
    return 0;
  /* With a store, the token is taken once the call exists (the rate wait
   * of lib/engine/call.c), and the arguments validated after it. */
  if (rate != NULL && atomic_load(&s->home.srv->store) != NULL)
    return rate_key_of(s, rate);
  /* Access was decided before (dispatch.c), so a caller refused access
   * learns nothing from the limiter; before validation, so every allowed
   * call counts. */
  int lim = mcp__rate_take(s, ctx, r, tool->name, r->started_us);
  if (lim)
    return lim;
  char why[512];
  int vrc = mcp__schema_validate(tool->input, args, "Invalid arguments", why,
                                 sizeof why);
  if (vrc == 0 || vrc == MCP_ENOMEM)
    return vrc;
  /* Failing the schema, or too costly to check (fail closed), is a tool
   * error the model can act on (SEP-1303). */
  mcp__audit_reply(s, ctx, tool->name, MCP_DECISION_INVALID_ARGUMENTS, NULL,
                   true, false, r->started_us);
  mcp__reply_tool_error(s, ctx, r, why);
  return 1;
}

void mcp__start_call(mcp_session *s, mcp__reply_ctx *ctx, const mcp__req *r,
                     mcp__tool *tool, cJSON *args, mcp__json_pool *args_pool,
                     const char *uri) {
  start_call(s, ctx, r, tool, args, args_pool, uri, MCP__TASK_NONE, 0);
}

/* Settles what a new call of r takes from its request: its era, sink
 * (the task's, when a task owns it), log level, the URI read, and its
 * client capabilities; a modern retry's requestState and answers are
 * checked here, before the handler sees anything. Returns 0, MCP_EINVAL
 * (why says what is wrong) or MCP_ENOMEM. */
static int setup_call(mcp__reply_ctx *ctx, const mcp__req *r, mcp_call *call,
                      mcp__task *task, const char *uri, char *why,
                      size_t whylen) {
  call->modern = r->modern;
  call->sink = task ? mcp__task_sink(task) : ctx->sink;
  if (task)
    mcp__task_own(call, task);
  mcp__sink_ref(call->sink);
  call->log_level = r->log_level;
  if (uri && (call->uri = mcp__strdup(uri)) == NULL)
    return MCP_ENOMEM;
  if (r->modern) {
    /* A modern call owns a copy of the capabilities it may use. */
    call->caps = cJSON_Duplicate(r->caps, 1);
    return call->caps ? mcp__input_accept(call, r->params, why, whylen)
                      : MCP_ENOMEM;
  }
  /* Its home's: a task's keeps a copy of the session's, since a task may
   * outlive the session. */
  call->caps = call->home->client_caps;
  return 0;
}

/* Answers r for a call made but refused before its handler ran (rc from
 * setup_call), audits it, and discards it with its task. */
static void discard_call(mcp_session *s, mcp__reply_ctx *ctx, const mcp__req *r,
                         mcp_call *call, mcp__task *task, int rc,
                         const char *why) {
  if (call->kind == MCP_CALL_TOOL)
    mcp__audit_reply(s, ctx, call->tool->name,
                     rc == MCP_EINVAL ? MCP_DECISION_INVALID_STATE
                                      : MCP_DECISION_ALLOWED,
                     NULL, false, rc != MCP_EINVAL, r->started_us);
  mcp__call_discard(call);
  mcp__task_unref(task);
  if (rc == MCP_EINVAL)
    mcp__reply_invalid_params(s, ctx, r, why);
  else
    mcp__req_error(s, ctx, r, MCP__RPC_INTERNAL_ERROR, "Internal error", NULL);
}

static void start_call(mcp_session *s, mcp__reply_ctx *ctx, const mcp__req *r,
                       mcp__tool *tool, cJSON *args, mcp__json_pool *args_pool,
                       const char *uri, mcp__task_mode mode, unsigned ttl_ms) {
  bool is_tool = tool->kind == MCP_CALL_TOOL;
  unsigned long long started = r->started_us;
  mcp__buf tok = {0};
  mcp_call *call = NULL;
  mcp__task *task = NULL;
  char why[512];
  rate_ask rate = {0};
  /* One ladder: before the call exists a failure frees what it was given;
   * after, the call is discarded, never run. */
  int rc = vet_call(s, ctx, r, tool, args, &tok, &rate);
  if (rc == 1)
    goto done;
  if (rc)
    goto oom;
  /* A call that is or may become a task is made in the task's own home,
   * which outlives this request and this session. */
  if (mode != MCP__TASK_NONE) {
    rc = mcp__task_new(s, ctx, r, tool, args, mode, ttl_ms, &task);
    if (rc == 1)
      goto done;
    if (rc)
      goto oom;
  }
  rc =
      mcp__call_new(task ? mcp__task_home(task) : &s->home, tool, r->v,
                    r->m->id, r->m->id_len, r->canon_id,
                    tok.len ? tok.data : NULL, args, args_pool, started, &call);
  args = NULL; /* the call owns them now, or freed them on failure */
  if (rc)
    goto oom;
  tool = NULL; /* the call holds the reference */
  mcp__buf_free(&tok);
  call->rate_key = rate.key; /* the call's now: its rate wait comes first */
  call->rate_calls = rate.calls;
  call->rate_per = rate.per;
  rate.key = NULL;
  rc = setup_call(ctx, r, call, task, uri, why, sizeof why);
  if (rc) {
    discard_call(s, ctx, r, call, task, rc, why);
    return;
  }
  /* The hints it runs under are its resolver's for these arguments and
   * this caller, never the client's (a tools/resolve before is advice to
   * the client, not to us); with a store, once the arguments are
   * validated. */
  if (call->rate_key == NULL)
    mcp__call_resolve_hints(call);
  if (task) {
    mcp__task_start(s, ctx, r, call, task);
    return;
  }
  mcp__reply_call(s, ctx, call);
  return;

oom:
  if (is_tool)
    mcp__audit_reply(s, ctx, tool->name, MCP_DECISION_ALLOWED, NULL, false,
                     true, started);
  mcp__req_error(s, ctx, r, MCP__RPC_INTERNAL_ERROR, "Internal error", NULL);
done:
  if (args_pool == NULL) /* pooled ones go with their message */
    cJSON_Delete(args);
  if (tool)
    mcp__tool_unref(tool);
  mcp__buf_free(&tok);
  mcp__free(rate.key);
  mcp__task_unref(task);
}

/* ---- rate limit ----------------------------------------------------------
 * The buckets are the policy layer's (lib/policy/ratelimit.c); here the
 * caller is named and a refusal answered. */

/* Logs where the limit counts: in this process, or across every process
 * sharing the store (named by its describe text, never a password). */
static void log_rate(mcp_server *srv) {
  unsigned calls = atomic_load(&srv->rate.calls);
  if (calls == 0)
    return;
  pthread_mutex_lock(&srv->rate.lock);
  unsigned per = srv->rate.per_s;
  pthread_mutex_unlock(&srv->rate.lock);
  mcp_store *st = atomic_load(&srv->store);
  if (st == NULL) /* the default: said nothing before stores existed */
    return;
  char where[200];
  mcp_store_describe(st, where, sizeof where);
  if (mcp_store_shared(st))
    mcp__log(srv, MCP_LOG_INFO,
             "rate limit: at most %u calls every %u s per caller, counted "
             "across every process sharing the store %s (a caller with a "
             "subject everywhere; an anonymous one per session)",
             calls, per, where);
  else
    mcp__log(srv, MCP_LOG_INFO,
             "rate limit: at most %u calls every %u s per caller, counted in "
             "this process only (%s)",
             calls, per, where);
}

int mcp_server_set_rate_limit(mcp_server *srv, unsigned calls,
                              unsigned per_seconds) {
  if (srv == NULL)
    return MCP_EINVAL;
  int rc = mcp__ratelimit_set(&srv->rate, calls, per_seconds);
  if (rc == 0)
    log_rate(srv);
  return rc;
}

int mcp_server_set_store(mcp_server *srv, mcp_store *st) {
  if (srv == NULL)
    return MCP_EINVAL;
  mcp__server_use_store(srv, st);
  log_rate(srv);
  return 0;
}

/* The anonymous caller's number: its session's, given on first need, never
 * reused as a freed session's address could be. */
static unsigned long long session_serial(mcp_session *s) {
  mcp_server *srv = s->home.srv;
  pthread_mutex_lock(&s->home.lock);
  if (s->serial == 0)
    s->serial = atomic_fetch_add(&srv->next_serial, 1) + 1;
  unsigned long long serial = s->serial;
  pthread_mutex_unlock(&s->home.lock);
  return serial;
}

/* The caller's key in the store, and the limit, when a limit is set:
 * "p:" and the principal's subject, the same in every process; or, for
 * an anonymous caller, "a:", this server's random node name and its
 * session's number, so that two processes' sessions never share a bucket.
 * Returns 0 or MCP_ENOMEM. */
static int rate_key_of(mcp_session *s, rate_ask *rate) {
  mcp_server *srv = s->home.srv;
  rate->calls = atomic_load(&srv->rate.calls);
  if (rate->calls == 0)
    return 0;
  pthread_mutex_lock(&srv->rate.lock);
  rate->per = srv->rate.per_s;
  pthread_mutex_unlock(&srv->rate.lock);
  if (rate->per == 0) /* cleared meanwhile */
    return 0;
  const char *subject = s->home.principal.subject;
  mcp__buf b = {0};
  if (subject)
    mcp__buf_printf(&b, "p:%s", subject);
  else
    mcp__buf_printf(&b, "a:%s:%llu", srv->node, session_serial(s));
  if (mcp__buf_str(&b) == NULL) {
    mcp__buf_free(&b);
    return MCP_ENOMEM;
  }
  rate->key = b.data;
  return 0;
}

int mcp__rate_take(mcp_session *s, mcp__reply_ctx *ctx, const mcp__req *r,
                   const char *tool, unsigned long long started) {
  mcp_server *srv = s->home.srv;
  if (atomic_load(&srv->rate.calls) == 0)
    return 0;
  /* An anonymous caller is known only by its session. */
  unsigned long long serial =
      s->home.principal.subject == NULL ? session_serial(s) : 0;
  unsigned calls = 0, per = 0;
  unsigned long long wait_s = 0;
  int rc = mcp__ratelimit_take(&srv->rate, s->home.principal.subject, serial,
                               &calls, &per, &wait_s);
  if (rc != 1)
    return rc;
  char text[200];
  mcp__fmt(text, sizeof text,
           "rate limited: at most %u calls every %u s; try again in %llu s",
           calls, per, wait_s);
  mcp__audit_reply(s, ctx, tool, MCP_DECISION_RATE_LIMITED, NULL, true, false,
                   started);
  mcp__reply_tool_error(s, ctx, r, text);
  return 1;
}
