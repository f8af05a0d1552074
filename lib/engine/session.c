/* The engine: one session turns whole JSON-RPC messages into replies handed
 * to its send callback. No I/O happens here; transports frame and move the
 * bytes, and an embedder can drive a session from any event loop. */
#include <cjson/cJSON.h>
#include <string.h>

#include "engine.h"

/* ---- lifetime ------------------------------------------------------------ */

int mcp_session_new(mcp_server *srv, const mcp_principal *principal,
                    mcp_send_fn send, void *user_data, mcp_session **out) {
  if (srv == NULL || send == NULL || out == NULL)
    return MCP_EINVAL;
  mcp_session *s = mcp__calloc(1, sizeof *s);
  if (s == NULL)
    return MCP_ENOMEM;
  if (mcp__principal_copy(&s->principal, principal) != 0) {
    mcp__free(s);
    return MCP_ENOMEM;
  }
  if (pthread_mutex_init(&s->lock, NULL) != 0) {
    mcp__principal_free(&s->principal);
    mcp__free(s);
    return MCP_ENOMEM;
  }
  s->srv = srv;
  atomic_fetch_add(&srv->refs, 1);
  s->send = send;
  s->send_data = user_data;
  atomic_init(&s->refs, 1);
  s->log_level = -1;
  atomic_init(&s->state, MCP__STATE_NEW);
  atomic_init(&s->modern_seen, false);
  atomic_init(&s->version, MCP__VERSION_LATEST);
  pthread_mutex_lock(&srv->lock);
  s->next = srv->sessions;
  if (s->next)
    s->next->prev = s;
  srv->sessions = s;
  pthread_mutex_unlock(&srv->lock);
  *out = s;
  return 0;
}

static void session_destroy(mcp_session *s) {
  mcp_server *srv = s->srv;
  for (size_t i = 0; i < s->nsubscribed; i++)
    mcp__free(s->subscribed[i]);
  mcp__free(s->subscribed);
  cJSON_Delete(s->client_caps);
  mcp__principal_free(&s->principal);
  pthread_mutex_destroy(&s->lock);
  mcp__free(s);
  mcp__server_unref(srv);
}

void mcp__session_unref_locked(mcp_session *s) {
  unsigned left = atomic_fetch_sub(&s->refs, 1) - 1;
  pthread_mutex_unlock(&s->lock);
  if (left == 0)
    session_destroy(s);
}

/* Marks every call cancelled and ends the calls parked for the client's
 * answers, which have no thread of their own to notice. Call with s->lock
 * held; it is held again on return. */
static void cancel_all_locked(mcp_session *s) {
  for (;;) {
    mcp_call *parked = NULL;
    for (mcp_call *c = s->calls; c; c = c->next) {
      mcp__call_cancel_locked(c);
      if (parked == NULL && mcp__call_unpark_locked(c))
        parked = c;
    }
    if (parked == NULL)
      return;
    pthread_mutex_unlock(&s->lock);
    mcp__call_complete(parked, MCP_ECANCELED, NULL, NULL);
    pthread_mutex_lock(&s->lock);
  }
}

void mcp_session_free(mcp_session *s) {
  if (s == NULL)
    return;
  mcp_server *srv = s->srv;
  pthread_mutex_lock(&srv->lock);
  if (s->prev)
    s->prev->next = s->next;
  else
    srv->sessions = s->next;
  if (s->next)
    s->next->prev = s->prev;
  pthread_mutex_unlock(&srv->lock);
  /* Calls still running keep the session alive through their references;
   * they see the cancelled flag and their replies go nowhere. Calls parked
   * for the client's answers have no thread of their own: they end here. */
  pthread_mutex_lock(&s->lock);
  s->closed = true;
  s->freed = true;
  cancel_all_locked(s);
  /* Listeners hold their streams open; ending the session ends them. */
  mcp__sink **sinks = NULL;
  mcp__session_drop_subscriptions_locked(s, &sinks);
  mcp__session_unref_locked(s);
  for (size_t i = 0; sinks && sinks[i]; i++)
    mcp__sink_release(sinks[i]);
  mcp__free(sinks);
}

void mcp_session_cancel_all(mcp_session *s) {
  if (s == NULL)
    return;
  pthread_mutex_lock(&s->lock);
  cancel_all_locked(s);
  pthread_mutex_unlock(&s->lock);
}

const char *mcp_session_protocol_version(const mcp_session *s) {
  if (s == NULL || atomic_load(&s->state) == MCP__STATE_NEW)
    return NULL;
  return mcp__version_name((mcp__version)atomic_load(&s->version));
}

size_t mcp_session_pending(const mcp_session *s) {
  if (s == NULL)
    return 0;
  mcp_session *m = (mcp_session *)s;
  pthread_mutex_lock(&m->lock);
  size_t n = m->ncalls;
  pthread_mutex_unlock(&m->lock);
  return n;
}

size_t mcp_session_executing(const mcp_session *s) {
  return s ? atomic_load(&((mcp_session *)s)->executing) : 0;
}

void mcp__sink_ref(mcp__sink *k) {
  if (k)
    atomic_fetch_add(&k->refs, 1);
}

void mcp__sink_release(mcp__sink *k) {
  if (k == NULL || atomic_fetch_sub(&k->refs, 1) != 1)
    return;
  if (k->sink.done)
    k->sink.done(k->sink.user_data);
  mcp__free(k);
}

const mcp_send_info mcp__sent_notification = {.kind = MCP_SENT_NOTIFICATION};
const mcp_send_info mcp__sent_request = {.kind = MCP_SENT_REQUEST};

int mcp__send_locked(mcp_session *s, mcp__sink *k, const char *msg, size_t len,
                     const mcp_send_info *info) {
  /* Once freed by its owner, a session sends nothing more, to its callback
   * or to a sink (mcp_session_free). */
  if (k != NULL && s->freed)
    return MCP_ECLOSED;
  if (k != NULL) {
    void *u = k->sink.user_data;
    if (k->failed || (k->sink.send_info ? k->sink.send_info(msg, len, info, u)
                                        : k->sink.send(msg, len, u)) != 0) {
      k->failed = true;
      return MCP_ECLOSED;
    }
    return 0;
  }
  if (s->closed)
    return MCP_ECLOSED;
  if (s->send(msg, len, s->send_data) != 0) {
    /* A transport that cannot deliver has lost its peer; stop everything
     * on this session rather than let calls run for nobody. */
    s->closed = true;
    for (mcp_call *c = s->calls; c; c = c->next)
      mcp__call_cancel_locked(c);
    return MCP_ECLOSED;
  }
  return 0;
}

int mcp__session_send(mcp_session *s, mcp__sink *k, const char *msg, size_t len,
                      const mcp_send_info *info) {
  pthread_mutex_lock(&s->lock);
  int rc = mcp__send_locked(s, k, msg, len, info);
  pthread_mutex_unlock(&s->lock);
  return rc;
}

/* ---- replies ------------------------------------------------------------- */

void mcp__reply_buf(mcp_session *s, mcp__reply_ctx *ctx, mcp__buf *b) {
  if (b->err) {
    if (!ctx->err)
      ctx->err = b->err;
  } else if (ctx->batch) {
    /* The batch's array is one message, whose facts are its own. */
    mcp__buf_putc(ctx->batch, ctx->nbatch++ ? ',' : '[');
    mcp__buf_append(ctx->batch, b->data, b->len);
  } else {
    /* A sink that fails stops only itself, not the session. */
    int rc = mcp__session_send(s, ctx->sink, b->data, b->len, &ctx->facts);
    if (rc && !ctx->err && ctx->sink == NULL)
      ctx->err = rc;
  }
  ctx->facts = (mcp_send_info){0};
  mcp__buf_free(b);
}

static mcp__null_id null_id_style(const mcp_session *s) {
  /* 2025-11-25 and 2026-07-28 omit an unreadable id; older versions (and
   * JSON-RPC 2.0, before we know the peer) write null. */
  if ((atomic_load(&s->state) != MCP__STATE_NEW &&
       atomic_load(&s->version) >= MCP__V2025_11_25) ||
      atomic_load(&s->modern_seen))
    return MCP__ID_OMIT;
  return MCP__ID_NULL;
}

void mcp__reply_error(mcp_session *s, mcp__reply_ctx *ctx, const char *id,
                      size_t id_len, int code, const char *message,
                      const char *data) {
  mcp__buf b = {0};
  mcp__rpc_error(&b, id, id_len, null_id_style(s), code, message, data);
  ctx->facts.kind = MCP_SENT_ERROR;
  ctx->facts.error_code = code;
  mcp__reply_buf(s, ctx, &b);
}

void mcp__req_error(mcp_session *s, mcp__reply_ctx *ctx, const mcp__req *r,
                    int code, const char *message, const char *data) {
  mcp__reply_error(s, ctx, r->m->id, r->m->id_len, code, message, data);
}

/* Sends a result whose members (each with a trailing comma) are in body;
 * the era's common members are added in front (resultType type), with the
 * whole serverInfo when full (server/discover) and its short form
 * otherwise. */
static void reply_result(mcp_session *s, mcp__reply_ctx *ctx, const mcp__req *r,
                         mcp__buf *body, const char *type, bool full) {
  mcp__buf res = {0}, b = {0};
  mcp__result_begin_info(&res, s->srv, r->modern, type, full);
  if (body->err)
    res.err = body->err;
  else
    mcp__buf_append(&res, body->data, body->len);
  mcp__result_end(&res);
  mcp__buf_free(body);
  if (res.err)
    b.err = res.err;
  else
    mcp__rpc_result(&b, r->m->id, r->m->id_len, res.data, res.len);
  mcp__buf_free(&res);
  mcp__reply_buf(s, ctx, &b);
}

void mcp__reply_result(mcp_session *s, mcp__reply_ctx *ctx, const mcp__req *r,
                       mcp__buf *body) {
  reply_result(s, ctx, r, body, "complete", false);
}

void mcp__reply_result_as(mcp_session *s, mcp__reply_ctx *ctx,
                          const mcp__req *r, const char *result_type,
                          mcp__buf *body) {
  reply_result(s, ctx, r, body, result_type, false);
}

void mcp__reply_invalid_params(mcp_session *s, mcp__reply_ctx *ctx,
                               const mcp__req *r, const char *why) {
  char msg[300];
  mcp__fmt(msg, sizeof msg, "Invalid params: %s", why);
  mcp__utf8_trim(msg);
  mcp__req_error(s, ctx, r, MCP__RPC_INVALID_PARAMS, msg, NULL);
}

const cJSON *mcp__member(const cJSON *obj, const char *key) {
  if (obj == NULL || key == NULL)
    return NULL;
  for (const cJSON *e = obj->child; e; e = e->next)
    if (e->string && mcp__streq(e->string, key))
      return e;
  return NULL;
}

/* ---- initialize and server/discover -------------------------------------- */

static void handle_initialize(mcp_session *s, mcp__reply_ctx *ctx,
                              const mcp__req *r) {
  if (ctx->batch) {
    mcp__req_error(s, ctx, r, MCP__RPC_INVALID_REQUEST,
                   "Invalid Request: initialize must not be part of a batch",
                   NULL);
    return;
  }
  if (atomic_load(&s->state) != MCP__STATE_NEW) {
    mcp__req_error(s, ctx, r, MCP__RPC_INVALID_REQUEST,
                   "Invalid Request: the session is already initialized", NULL);
    return;
  }
  const cJSON *version = mcp__member(r->params, "protocolVersion");
  const cJSON *caps = mcp__member(r->params, "capabilities");
  const cJSON *client = mcp__member(r->params, "clientInfo");
  if (!cJSON_IsString(version) || !cJSON_IsObject(caps) ||
      !cJSON_IsObject(client) || !cJSON_IsString(mcp__member(client, "name"))) {
    mcp__reply_invalid_params(
        s, ctx, r,
        "initialize needs protocolVersion (string), "
        "capabilities (object) and clientInfo (object with "
        "a name)");
    return;
  }
  /* The client's version if initialize can serve it, else our latest: the
   * client then decides whether it can go on. */
  int v = mcp__version_find(version->valuestring);
  if (v < 0 || v > MCP__VERSION_LATEST)
    v = MCP__VERSION_LATEST;
  cJSON *copy = cJSON_Duplicate(caps, 1);
  mcp_server *srv = s->srv;
  mcp__buf b = {0};
  mcp__buf_printf(&b,
                  "\"protocolVersion\":\"%s\",\"capabilities\":{\"tools\":{"
                  "\"listChanged\":true},\"logging\":{}",
                  mcp__version_name((mcp__version)v));
  unsigned announced =
      MCP__LISTEN_TOOLS | mcp__put_capabilities(&b, srv, (mcp__version)v);
  mcp__buf_puts(&b, "},\"serverInfo\":");
  mcp__server_info(&b, srv, (mcp__version)v, true);
  mcp__buf_putc(&b, ',');
  if (srv->instructions) {
    mcp__buf_puts(&b, "\"instructions\":");
    mcp__json_quote(&b, srv->instructions, strlen(srv->instructions));
    mcp__buf_putc(&b, ',');
  }
  if (b.err || copy == NULL) {
    mcp__buf_free(&b);
    cJSON_Delete(copy);
    mcp__req_error(s, ctx, r, MCP__RPC_INTERNAL_ERROR, "Internal error", NULL);
    return;
  }
  pthread_mutex_lock(&s->lock);
  cJSON_Delete(s->client_caps);
  s->client_caps = copy;
  s->announced = announced;
  pthread_mutex_unlock(&s->lock);
  atomic_store(&s->version, v);
  atomic_store(&s->state, MCP__STATE_INITIALIZED);
  int before = ctx->err;
  mcp__reply_result(s, ctx, r, &b);
  if (ctx->err == MCP_ENOMEM && before != MCP_ENOMEM) {
    /* The answer could not be built, so the client never heard of this
     * handshake: it may try again. */
    atomic_store(&s->state, MCP__STATE_NEW);
    pthread_mutex_lock(&s->lock);
    cJSON_Delete(s->client_caps);
    s->client_caps = NULL;
    s->announced = 0;
    pthread_mutex_unlock(&s->lock);
  }
}

void mcp__handle_discover(mcp_session *s, mcp__reply_ctx *ctx,
                          const mcp__req *r, mcp__target *t) {
  (void)t;
  mcp_server *srv = s->srv;
  mcp__buf b = {0};
  mcp__buf_puts(&b, "\"supportedVersions\":[");
  for (int v = MCP__VERSION_COUNT - 1; v >= 0; v--)
    mcp__buf_printf(&b, "\"%s\"%s", mcp__version_name((mcp__version)v),
                    v ? "," : "");
  /* list_changed reaches modern clients through subscriptions/listen. Log
   * messages go to requests that ask for them (_meta logLevel), which the
   * logging capability announces. */
  mcp__buf_puts(&b, "],\"capabilities\":{\"tools\":{\"listChanged\":true},"
                    "\"logging\":{}");
  mcp__put_capabilities(&b, srv, MCP__VERSION_MODERN);
  mcp__buf_puts(&b, "},");
  if (srv->instructions) {
    mcp__buf_puts(&b, "\"instructions\":");
    mcp__json_quote(&b, srv->instructions, strlen(srv->instructions));
    mcp__buf_putc(&b, ',');
  }
  mcp__put_cache(&b, srv, false);
  /* server/discover says all the server says of itself. */
  reply_result(s, ctx, r, &b, "complete", true);
}

/* ---- tools --------------------------------------------------------------- */

void mcp__handle_list(mcp_session *s, mcp__reply_ctx *ctx, const mcp__req *r,
                      mcp__registry *table) {
  const cJSON *cursor = mcp__member(r->params, "cursor");
  if (cursor && !cJSON_IsString(cursor)) {
    mcp__reply_invalid_params(s, ctx, r, "cursor must be a string");
    return;
  }
  mcp_server *srv = s->srv;
  bool hide = atomic_load(&srv->hide_forbidden);
  mcp__buf b = {0};
  pthread_mutex_lock(&srv->lock);
  /* Hidden or not, an entry marked readers_only (a skill, its files) is
   * listed only to a caller who may read it. */
  _Static_assert(sizeof srv->state_key == MCP__CURSOR_KEY, "a cursor key");
  mcp__page_reader who = {
      .caller = &s->principal, .hide = hide, .key = srv->state_key};
  int rc = mcp__registry_page(table, r->v, cursor ? cursor->valuestring : NULL,
                              atomic_load(&srv->page_size), &who, &b);
  pthread_mutex_unlock(&srv->lock);
  if (rc == MCP_EINVAL) {
    mcp__buf_free(&b);
    mcp__reply_invalid_params(s, ctx, r, "unknown cursor");
    return;
  }
  if (r->modern)
    mcp__put_cache(&b, srv, hide || who.per_caller); /* this caller's own */
  mcp__reply_result(s, ctx, r, &b);
}

/* Sends an isError result without running the handler. */
void mcp__reply_tool_error(mcp_session *s, mcp__reply_ctx *ctx,
                           const mcp__req *r, const char *text) {
  mcp__buf b = {0};
  mcp__buf_puts(&b, "\"content\":[{\"type\":\"text\",\"text\":");
  mcp__json_quote(&b, text, strlen(text));
  mcp__buf_puts(&b, "}],\"isError\":true,");
  mcp__reply_result(s, ctx, r, &b);
}

/* Runs a call on the receiving thread, so its reply can join a batch. */
static void run_here(mcp_session *s, mcp__reply_ctx *ctx, mcp_call *call) {
  mcp__buf out = {0};
  mcp__call_run(call, &out, &ctx->facts);
  if (out.len || out.err)
    mcp__reply_buf(s, ctx, &out);
  else
    mcp__buf_free(&out);
}

bool mcp__target_tool(mcp_session *s, mcp__reply_ctx *ctx, const mcp__req *r,
                      mcp__target *t) {
  cJSON *params = r->params_node;
  const cJSON *name = mcp__member(params, "name");
  cJSON *args = (cJSON *)mcp__member(params, "arguments");
  if (params == NULL) {
    mcp__reply_invalid_params(s, ctx, r, "tools/call needs params");
    return false;
  }
  if (!cJSON_IsString(name)) {
    mcp__reply_invalid_params(s, ctx, r,
                              "tools/call needs a tool name (string)");
    return false;
  }
  if (args != NULL && !cJSON_IsObject(args)) {
    mcp__reply_invalid_params(s, ctx, r, "arguments must be an object");
    return false;
  }
  t->entry = mcp__find_visible(s->srv, &s->srv->reg, name->valuestring,
                               mcp__visible_to(s));
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
 * arguments against the input schema. Returns 0 to go on, 1 when the
 * request was answered (a refusal), or MCP_ENOMEM. */
static int vet_call(mcp_session *s, mcp__reply_ctx *ctx, const mcp__req *r,
                    const mcp__tool *tool, const cJSON *args, mcp__buf *tok) {
  const cJSON *meta = mcp__member(r->params, "_meta");
  const cJSON *token =
      cJSON_IsObject(meta) ? mcp__member(meta, "progressToken") : NULL;
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

static void start_call(mcp_session *s, mcp__reply_ctx *ctx, const mcp__req *r,
                       mcp__tool *tool, cJSON *args, mcp__json_pool *args_pool,
                       const char *uri, mcp__task_mode mode, unsigned ttl_ms) {
  bool is_tool = tool->kind == MCP_CALL_TOOL;
  unsigned long long started = r->started_us;
  mcp__buf tok = {0};
  mcp_call *call = NULL;
  mcp__task *task = NULL;
  char why[512];
  /* One ladder: before the call exists a failure frees what it was given;
   * after, the call is discarded, never run. */
  int rc = vet_call(s, ctx, r, tool, args, &tok);
  if (rc == 1)
    goto done;
  if (rc)
    goto oom;
  /* A call that is or may become a task is made on the task's runner
   * session, which outlives this request and this session. */
  if (mode != MCP__TASK_NONE) {
    rc = mcp__task_new(s, ctx, r, tool, args, mode, ttl_ms, &task);
    if (rc == 1)
      goto done;
    if (rc)
      goto oom;
  }
  rc = mcp__call_new(task ? mcp__task_runner(task) : s, tool, r->v, r->m->id,
                     r->m->id_len, r->canon_id, tok.len ? tok.data : NULL, args,
                     args_pool, started, &call);
  args = NULL; /* the call owns them now, or freed them on failure */
  if (rc)
    goto oom;
  call->modern = r->modern;
  call->sink = task ? mcp__task_sink(task) : ctx->sink;
  call->task = task;
  mcp__sink_ref(call->sink);
  call->log_level = r->log_level;
  tool = NULL; /* the call holds the reference */
  mcp__buf_free(&tok);
  if (uri && (call->uri = mcp__strdup(uri)) == NULL) {
    rc = MCP_ENOMEM;
    goto discard;
  }
  if (r->modern) {
    /* A modern call owns a copy of the capabilities it may use, and a
     * retry's requestState is checked before the handler sees anything. */
    call->caps = cJSON_Duplicate(r->caps, 1);
    rc = call->caps ? mcp__input_accept(call, r->params, why, sizeof why)
                    : MCP_ENOMEM;
    if (rc)
      goto discard;
  } else {
    /* The runner keeps a copy of the session's capabilities: a task may
     * outlive the session. */
    call->caps = task ? mcp__task_runner(task)->client_caps : s->client_caps;
  }
  if (task) {
    mcp__task_start(s, ctx, r, call, task);
    return;
  }
  run_here(s, ctx, call);
  return;

discard:
  if (call->kind == MCP_CALL_TOOL)
    mcp__audit_reply(s, ctx, call->tool->name,
                     rc == MCP_EINVAL ? MCP_DECISION_INVALID_STATE
                                      : MCP_DECISION_ALLOWED,
                     NULL, false, rc != MCP_EINVAL, started);
  mcp__call_discard(call);
  mcp__task_unref(task);
  if (rc == MCP_EINVAL)
    mcp__reply_invalid_params(s, ctx, r, why);
  else
    mcp__req_error(s, ctx, r, MCP__RPC_INTERNAL_ERROR, "Internal error", NULL);
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
  mcp__task_unref(task);
}

static void handle_cancelled(mcp_session *s, const cJSON *params) {
  const cJSON *id = mcp__member(params, "requestId");
  if (id == NULL || !(cJSON_IsString(id) || cJSON_IsNumber(id)))
    return; /* malformed cancellations are ignored, as the spec asks */
  mcp__buf canon = {0};
  mcp_call *parked = NULL;
  mcp__sink *listener = NULL;
  if (mcp__id_canonical(&canon, id) == 0 && mcp__buf_str(&canon)) {
    pthread_mutex_lock(&s->lock);
    listener = mcp__listener_cancel_locked(s, canon.data);
    mcp_call *c = mcp__find_call(s, canon.data);
    if (c) {
      mcp__call_cancel_locked(c);
      /* A call parked for the client's answers has no thread to notice:
       * finish it here. */
      if (mcp__call_unpark_locked(c))
        parked = c;
    }
    pthread_mutex_unlock(&s->lock);
  }
  mcp__buf_free(&canon);
  mcp__sink_release(listener);
  if (parked)
    mcp__call_complete(parked, MCP_ECANCELED, NULL, NULL);
}

/* ---- dispatch ------------------------------------------------------------ */

const char *const mcp__log_levels[8] = {"debug",   "info",     "notice",
                                        "warning", "error",    "critical",
                                        "alert",   "emergency"};

/* Fills r's era from the request's _meta. A request is modern when its
 * _meta names a protocol version or client capabilities; then both are
 * required, the version must be a modern one, and a log level, if any, must
 * be valid. Returns false after answering the request with the error. */
static bool read_era(mcp_session *s, mcp__reply_ctx *ctx, mcp__req *r) {
  const cJSON *meta = mcp__member(r->params, "_meta");
  const cJSON *version =
      cJSON_IsObject(meta)
          ? mcp__member(meta, "io.modelcontextprotocol/protocolVersion")
          : NULL;
  const cJSON *caps =
      cJSON_IsObject(meta)
          ? mcp__member(meta, "io.modelcontextprotocol/clientCapabilities")
          : NULL;
  const cJSON *level =
      cJSON_IsObject(meta)
          ? mcp__member(meta, "io.modelcontextprotocol/logLevel")
          : NULL;
  r->log_level = -1;
  if (version == NULL && caps == NULL &&
      !mcp__streq(r->m->method, "server/discover")) {
    r->v = (mcp__version)atomic_load(&s->version);
    r->caps = s->client_caps;
    r->log_level = atomic_load(&s->log_level);
    return true;
  }
  r->modern = true;
  atomic_store(&s->modern_seen, true);
  r->v = MCP__VERSION_MODERN;
  if (!cJSON_IsString(version)) {
    mcp__reply_invalid_params(
        s, ctx, r,
        "_meta[\"io.modelcontextprotocol/protocolVersion\"] "
        "is required (a string)");
    return false;
  }
  int v = mcp__version_find(version->valuestring);
  if (v < MCP__VERSION_MODERN) {
    mcp__buf data = {0};
    mcp__buf_puts(&data, "{\"supported\":[");
    for (int i = MCP__VERSION_COUNT - 1; i >= 0; i--)
      mcp__buf_printf(&data, "\"%s\"%s", mcp__version_name((mcp__version)i),
                      i ? "," : "");
    mcp__buf_puts(&data, "],\"requested\":");
    mcp__json_quote(&data, version->valuestring, strlen(version->valuestring));
    mcp__buf_putc(&data, '}');
    const char *json = mcp__buf_str(&data);
    if (json)
      mcp__req_error(s, ctx, r, MCP__RPC_UNSUPPORTED_VERSION,
                     "Unsupported protocol version", json);
    else if (!ctx->err)
      ctx->err = MCP_ENOMEM;
    mcp__buf_free(&data);
    return false;
  }
  if (!cJSON_IsObject(caps)) {
    mcp__reply_invalid_params(
        s, ctx, r,
        "_meta[\"io.modelcontextprotocol/clientCapabilities\"]"
        " is required (an object)");
    return false;
  }
  r->caps = caps;
  if (level != NULL) {
    for (int i = 0; i < 8 && cJSON_IsString(level); i++)
      if (strcmp(level->valuestring, mcp__log_levels[i]) == 0)
        r->log_level = i;
    if (r->log_level < 0) {
      mcp__reply_invalid_params(
          s, ctx, r,
          "_meta[\"io.modelcontextprotocol/logLevel\"] is not "
          "a log level");
      return false;
    }
  }
  return true;
}

static void method_not_found(mcp_session *s, mcp__reply_ctx *ctx,
                             const mcp__req *r) {
  char msg[MCP__MAX_METHOD + 40];
  mcp__fmt(msg, sizeof msg, "Method not found: %s", r->m->method);
  mcp__utf8_trim(msg);
  mcp__req_error(s, ctx, r, MCP__RPC_METHOD_NOT_FOUND, msg, NULL);
}

/* An initialize without the handshake's protocolVersion whose _meta names a
 * modern version is a 2026-07-28 request for a method that era lacks. */
static bool modern_initialize(const cJSON *params) {
  if (mcp__member(params, "protocolVersion") != NULL)
    return false;
  const cJSON *meta = mcp__member(params, "_meta");
  const cJSON *v = mcp__member(meta, "io.modelcontextprotocol/protocolVersion");
  return cJSON_IsString(v) &&
         mcp__version_find(v->valuestring) >= MCP__VERSION_MODERN;
}

static void handle_request(mcp_session *s, mcp__reply_ctx *ctx,
                           const mcp__msg *m, cJSON *params) {
  static const cJSON empty = {.type = cJSON_Object};
  mcp__req r = {
      .m = m, .params = params ? params : &empty, .params_node = params};
  const char *method = m->method;
  /* initialize starts the legacy era, whatever _meta it carries, unless it
   * is a modern request (see modern_initialize). */
  bool initialize = mcp__streq(method, "initialize");
  if (initialize && modern_initialize(r.params)) {
    r.modern = true;
    method_not_found(s, ctx, &r);
    return;
  }
  if (initialize) {
    r.v = (mcp__version)atomic_load(&s->version);
    handle_initialize(s, ctx, &r);
    return;
  }
  if (!read_era(s, ctx, &r))
    return;
  if (r.modern && ctx->batch) {
    mcp__req_error(s, ctx, &r, MCP__RPC_INVALID_REQUEST,
                   "Invalid Request: 2026-07-28 requests are single messages, "
                   "never part of a batch",
                   NULL);
    return;
  }
  const mcp__method *row = mcp__method_find(method);
  unsigned era = r.modern ? MCP__ERA_MODERN : MCP__ERA_LEGACY;
  /* Methods of another era, or of a feature the server does not offer,
   * are unknown here. */
  if (row == NULL || !(row->eras & era) ||
      (row->feature != MCP__FEATURE_NONE &&
       !mcp__offers(s->srv, (mcp__feature)row->feature))) {
    method_not_found(s, ctx, &r);
    return;
  }
  if (!r.modern && row->needs_init &&
      atomic_load(&s->state) == MCP__STATE_NEW) {
    mcp__req_error(s, ctx, &r, MCP__RPC_INVALID_REQUEST,
                   "Invalid Request: the session is not initialized; send "
                   "initialize first",
                   NULL);
    return;
  }
  mcp__dispatch(s, ctx, &r, row);
}

static void handle_notification(mcp_session *s, const mcp__msg *m) {
  if (strcmp(m->method, "notifications/initialized") == 0) {
    int expected = MCP__STATE_INITIALIZED;
    atomic_compare_exchange_strong(&s->state, &expected, MCP__STATE_READY);
  } else if (strcmp(m->method, "notifications/cancelled") == 0) {
    handle_cancelled(s, m->params);
  }
  /* Other notifications need no action; none is ever answered. */
}

static void handle_message(mcp_session *s, mcp__reply_ctx *ctx,
                           const mcp__json_doc *doc, cJSON *node) {
  mcp__msg m;
  mcp__msg_classify(doc, node, &m);
  switch (m.kind) {
  case MCP__MSG_REQUEST:
    /* The member classify found; node is ours to change, so dropping the
     * const again is sound (tools/call detaches its arguments). */
    handle_request(s, ctx, &m, (cJSON *)m.params);
    break;
  case MCP__MSG_NOTIFICATION:
    handle_notification(s, &m);
    break;
  case MCP__MSG_RESPONSE: {
    /* The client's answer to a request of ours; once a parked call has
     * every answer it runs again, here. Anything else is dropped. */
    mcp_call *ready = mcp__input_response(s, &m, node);
    if (ready) {
      /* The call answers where it was asked (its own sink), not on the
       * stream that carried the client's answer. */
      mcp__sink *k = ready->sink;
      mcp__reply_ctx own = {.sink = k};
      mcp__sink_ref(k);
      run_here(s, &own, ready);
      mcp__sink_release(k);
      if (own.err && !ctx->err)
        ctx->err = own.err;
    }
    break;
  }
  case MCP__MSG_INVALID: {
    /* A message with a method but no id was meant as a notification, and a
     * notification is never answered, even when malformed. */
    if (cJSON_IsObject(node) && m.id_node == NULL &&
        cJSON_GetObjectItemCaseSensitive(node, "method")) {
      mcp__log(s->srv, MCP_LOG_DEBUG, "ignored a malformed notification: %s",
               m.why);
      break;
    }
    char msg[160];
    mcp__fmt(msg, sizeof msg, "Invalid Request: %s", m.why);
    mcp__reply_error(s, ctx, m.id, m.id_len, MCP__RPC_INVALID_REQUEST, msg,
                     NULL);
    break;
  }
  }
}

int mcp_session_reject(mcp_session *s, const char *reason) {
  if (s == NULL)
    return MCP_EINVAL;
  char msg[240];
  mcp__reply_ctx ctx = {0};
  mcp__fmt(msg, sizeof msg, "Parse error: %s",
           reason && mcp__utf8_valid(reason, strlen(reason)) ? reason
                                                             : "unreadable");
  mcp__utf8_trim(msg);
  mcp__reply_error(s, &ctx, NULL, 0, MCP__RPC_PARSE_ERROR, msg, NULL);
  return ctx.err;
}

/* Whether sending failed before: then nobody can read a reply, so nothing
 * is run (a tool could have effects) and the transport keeps hearing it. */
static bool session_closed(mcp_session *s) { return atomic_load(&s->closed); }

/* What receiving one message returns, once its replies are out. */
static int receive_end(mcp_session *s, const mcp__reply_ctx *ctx) {
  int err = ctx->err;
  /* A send that failed on the way (a progress notification, say) closed
   * the session even if no reply of this message was due. */
  if (err == 0 && session_closed(s))
    err = MCP_ECLOSED;
  if (err == MCP_ENOMEM)
    mcp__log(s->srv, MCP_LOG_ERROR, "out of memory while answering a message");
  return err;
}

/* Handles one parsed message. */
static int receive_doc(mcp_session *s, mcp__json_doc *doc, mcp__sink *sink) {
  if (session_closed(s))
    return MCP_ECLOSED;
  mcp__reply_ctx ctx = {.sink = sink};
  if (cJSON_IsArray(doc->root)) {
    /* Batches exist only in 2025-03-26, and never before initialize. */
    bool batches = atomic_load(&s->state) != MCP__STATE_NEW &&
                   atomic_load(&s->version) == MCP__V2025_03_26;
    /* A bounded batch keeps the reply bounded too (each element's reply is
     * built before anything is sent) and every id within raw capture. */
    int n = cJSON_GetArraySize(doc->root);
    if (!batches || n == 0 || n > MCP__MAX_BATCH) {
      mcp__reply_error(s, &ctx, NULL, 0, MCP__RPC_INVALID_REQUEST,
                       !batches
                           ? "Invalid Request: batches are not supported in "
                             "this protocol version"
                       : n == 0 ? "Invalid Request: empty batch"
                                : "Invalid Request: a batch holds at most 64 "
                                  "messages",
                       NULL);
    } else {
      mcp__buf batch = {0};
      ctx.batch = &batch;
      for (cJSON *e = doc->root->child; e; e = e->next)
        handle_message(s, &ctx, doc, e);
      ctx.batch = NULL;
      if (batch.len || batch.err) {
        mcp__buf_putc(&batch, ']');
        ctx.facts = (mcp_send_info){.kind = MCP_SENT_BATCH};
        mcp__reply_buf(s, &ctx, &batch);
      }
    }
  } else {
    handle_message(s, &ctx, doc, doc->root);
  }
  return receive_end(s, &ctx);
}

/* Parses message into doc. One the session cannot read is answered here
 * (*rc says how that went, 0 is returned); in a frame of its own, so that
 * the buffers of the reason are off the stack while a parsed message is
 * handled: deep arguments run the validator recursively, and an embedder
 * may drive sessions from threads with small stacks. Returns 1 when doc
 * holds a message to handle. */
#if defined(__GNUC__)
__attribute__((noinline))
#endif
static int
parse_or_answer(mcp_session *s, const char *message, size_t len,
                mcp__json_doc *doc, mcp__sink *sink, int *rc) {
  char why[200];
  int prc = mcp__json_parse(message ? message : "", len, &mcp__message_limits,
                            doc, why, sizeof why);
  if (prc == 0)
    return 1;
  if (session_closed(s)) {
    *rc = MCP_ECLOSED;
    return 0;
  }
  mcp__reply_ctx ctx = {.sink = sink};
  if (prc == MCP_ENOMEM) {
    ctx.err = MCP_ENOMEM;
  } else {
    char msg[240];
    mcp__fmt(msg, sizeof msg, "Parse error: %s", why);
    mcp__reply_error(s, &ctx, NULL, 0, MCP__RPC_PARSE_ERROR, msg, NULL);
  }
  *rc = receive_end(s, &ctx);
  return 0;
}

/* The sink record of a transport's sink (NULL for none). With no memory
 * for it, done fires at once, since it must fire exactly once whatever
 * happens, and *rc is MCP_ENOMEM. */
static mcp__sink *sink_new(const mcp_sink *sink, int *rc) {
  *rc = 0;
  if (sink == NULL)
    return NULL;
  mcp__sink *k = mcp__calloc(1, sizeof *k);
  if (k == NULL) {
    if (sink->done)
      sink->done(sink->user_data);
    *rc = MCP_ENOMEM;
    return NULL;
  }
  k->sink = *sink;
  atomic_init(&k->refs, 1);
  return k;
}

int mcp_session_receive_to(mcp_session *s, const char *message, size_t len,
                           const mcp_sink *sink) {
  if (s == NULL || (message == NULL && len > 0) ||
      (sink && !sink->send && !sink->send_info))
    return MCP_EINVAL;
  int rc;
  mcp__sink *k = sink_new(sink, &rc);
  if (rc)
    return rc;
  mcp__json_doc doc = {0};
  if (parse_or_answer(s, message, len, &doc, k, &rc))
    rc = receive_doc(s, &doc, k);
  mcp__json_doc_free(&doc);
  /* The calls this message started hold their own references; done comes
   * when the last of them (or this) lets go. */
  mcp__sink_release(k);
  return rc;
}

/* A parsed message: the document stays where it is (its raw ids may point
 * into it), so it lives in a block of its own. */
struct mcp_message {
  mcp__json_doc doc;
};

int mcp_message_parse(const char *text, size_t len, mcp_message **out) {
  if (out == NULL || (text == NULL && len > 0))
    return MCP_EINVAL;
  mcp_message *m = mcp__calloc(1, sizeof *m);
  if (m == NULL)
    return MCP_ENOMEM;
  int rc = mcp__json_parse(text ? text : "", len, &mcp__message_limits, &m->doc,
                           NULL, 0);
  if (rc) {
    mcp__free(m);
    return rc;
  }
  *out = m;
  return 0;
}

const cJSON *mcp_message_json(const mcp_message *msg) {
  return msg ? msg->doc.root : NULL;
}

const char *mcp_message_id(const mcp_message *msg, size_t *len) {
  const cJSON *id = cJSON_IsObject(mcp_message_json(msg))
                        ? cJSON_GetObjectItemCaseSensitive(msg->doc.root, "id")
                        : NULL;
  return id ? mcp__json_raw_text(&msg->doc, id, len) : NULL;
}

void mcp_message_free(mcp_message *msg) {
  if (msg == NULL)
    return;
  mcp__json_doc_free(&msg->doc);
  mcp__free(msg);
}

int mcp_session_receive_message(mcp_session *s, mcp_message *msg,
                                const mcp_sink *sink) {
  if (s == NULL || msg == NULL || (sink && !sink->send && !sink->send_info)) {
    mcp_message_free(msg);
    return MCP_EINVAL;
  }
  int rc;
  mcp__sink *k = sink_new(sink, &rc);
  if (rc == 0)
    rc = receive_doc(s, &msg->doc, k);
  mcp_message_free(msg);
  mcp__sink_release(k);
  return rc;
}

int mcp_session_receive(mcp_session *s, const char *message, size_t len) {
  return mcp_session_receive_to(s, message, len, NULL);
}
