/* Sessions: their lifetime, the sinks a transport hands in, sending (every
 * message the engine writes leaves through a home's mcp__home_send_locked,
 * call.c, with what it knows of it; a session's home sends to its
 * transport callback here), reply framing, and the listeners a session
 * holds. A session embeds the home its calls live in (engine.h). No I/O
 * happens here; transports frame and move the bytes, and an embedder can
 * drive a session from any event loop. */
#include <cjson/cJSON.h>
#include <string.h>

#include "engine.h"
#include "task.h"

/* ---- lifetime ------------------------------------------------------------ */

static void session_destroy(mcp_session *s) {
  mcp__session_share_drop(s);
  for (size_t i = 0; i < s->nsubscribed; i++)
    mcp__free(s->subscribed[i]);
  mcp__free(s->subscribed);
  mcp__home_fini(&s->home);
  mcp__free(s);
}

static mcp_session *session_of(mcp__home *h) {
  return mcp__container_of(h, mcp_session, home);
}

/* The home's side of a session (mcp__home_ops). */
static int session_send_locked(mcp__home *h, const char *msg, size_t len,
                               const mcp_send_info *info) {
  (void)info; /* a session's callback is told the bytes only */
  mcp_session *s = session_of(h);
  if (s->send(msg, len, s->send_data) != 0) {
    /* A transport that cannot deliver has lost its peer; stop everything
     * on this session rather than let calls run for nobody. */
    h->closed = true;
    mcp__list_each(link, &h->calls)
        mcp__call_cancel_locked(mcp__container_of(link, mcp_call, link));
    return MCP_ECLOSED;
  }
  return 0;
}

static void session_release(mcp__home *h) { session_destroy(session_of(h)); }

static const mcp__home_ops session_ops = {session_send_locked, session_release};

int mcp_session_new(mcp_server *srv, const mcp_principal *principal,
                    mcp_send_fn send, void *user_data, mcp_session **out) {
  if (srv == NULL || send == NULL || out == NULL)
    return MCP_EINVAL;
  mcp_session *s = mcp__calloc(1, sizeof *s);
  if (s == NULL)
    return MCP_ENOMEM;
  if (mcp__home_init(&s->home, &session_ops, srv, principal) != 0) {
    mcp__free(s);
    return MCP_ENOMEM;
  }
  s->send = send;
  s->send_data = user_data;
  s->log_level = -1;
  atomic_init(&s->state, MCP__STATE_NEW);
  atomic_init(&s->modern_seen, false);
  atomic_init(&s->version, MCP__VERSION_LATEST);
  atomic_init(&s->moved, false);
  pthread_mutex_lock(&srv->lock);
  mcp__list_push_front(&srv->sessions, &s->link);
  pthread_mutex_unlock(&srv->lock);
  *out = s;
  return 0;
}

void mcp__session_unref_locked(mcp_session *s) {
  mcp__home_unref_locked(&s->home);
}

void mcp_session_free(mcp_session *s) {
  if (s == NULL)
    return;
  mcp_server *srv = s->home.srv;
  pthread_mutex_lock(&srv->lock);
  mcp__list_remove(&s->link);
  pthread_mutex_unlock(&srv->lock);
  /* Its tasks/result requests waiting for another node's task end now:
   * closed first, so that none starts waiting after (a wait is refused on
   * a closed session, under the lock mcp__task_session_gone takes). */
  atomic_store(&s->home.closed, true);
  mcp__task_session_gone(s);
  /* Calls still running keep the session alive through their references;
   * they see the cancelled flag and their replies go nowhere. Calls parked
   * for the client's answers have no thread of their own: they end here. */
  pthread_mutex_lock(&s->home.lock);
  s->home.closed = true;
  s->home.freed = true;
  mcp__home_cancel_all_locked(&s->home);
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
  pthread_mutex_lock(&s->home.lock);
  mcp__home_cancel_all_locked(&s->home);
  pthread_mutex_unlock(&s->home.lock);
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
  pthread_mutex_lock(&m->home.lock);
  size_t n = m->home.ncalls;
  pthread_mutex_unlock(&m->home.lock);
  return n;
}

size_t mcp_session_executing(const mcp_session *s) {
  return s ? atomic_load(&((mcp_session *)s)->home.executing) : 0;
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
  mcp__stepup_free(k->held);
  mcp__free(k);
}

const mcp_send_info mcp__sent_notification = {.kind = MCP_SENT_NOTIFICATION};
const mcp_send_info mcp__sent_request = {.kind = MCP_SENT_REQUEST};

int mcp__send_locked(mcp_session *s, mcp__sink *k, const char *msg, size_t len,
                     const mcp_send_info *info) {
  return mcp__home_send_locked(&s->home, k, msg, len, info);
}

int mcp__session_send(mcp_session *s, mcp__sink *k, const char *msg, size_t len,
                      const mcp_send_info *info) {
  pthread_mutex_lock(&s->home.lock);
  int rc = mcp__send_locked(s, k, msg, len, info);
  pthread_mutex_unlock(&s->home.lock);
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

void mcp__result_text(mcp_server *srv, const mcp__req *r, mcp__buf *body,
                      const char *type, bool full, mcp__buf *b) {
  mcp__buf res = {0};
  mcp__result_begin_info(&res, srv, r->modern, type, full);
  if (body->err)
    res.err = body->err;
  else
    mcp__buf_append(&res, body->data, body->len);
  mcp__result_end(&res);
  mcp__buf_free(body);
  if (res.err)
    b->err = res.err;
  else
    mcp__rpc_result(b, r->m->id, r->m->id_len, res.data, res.len);
  mcp__buf_free(&res);
}

void mcp__reply_result_info(mcp_session *s, mcp__reply_ctx *ctx,
                            const mcp__req *r, mcp__buf *body, const char *type,
                            bool full) {
  mcp__buf b = {0};
  mcp__result_text(s->home.srv, r, body, type, full, &b);
  mcp__reply_buf(s, ctx, &b);
}

void mcp__reply_result(mcp_session *s, mcp__reply_ctx *ctx, const mcp__req *r,
                       mcp__buf *body) {
  mcp__reply_result_info(s, ctx, r, body, "complete", false);
}

void mcp__reply_result_as(mcp_session *s, mcp__reply_ctx *ctx,
                          const mcp__req *r, const char *result_type,
                          mcp__buf *body) {
  mcp__reply_result_info(s, ctx, r, body, result_type, false);
}

void mcp__reply_call(mcp_session *s, mcp__reply_ctx *ctx, mcp_call *call) {
  mcp__buf out = {0};
  mcp__call_run(call, &out, &ctx->facts);
  if (out.len || out.err)
    mcp__reply_buf(s, ctx, &out);
  else
    mcp__buf_free(&out);
}

void mcp__reply_invalid_params(mcp_session *s, mcp__reply_ctx *ctx,
                               const mcp__req *r, const char *why) {
  char msg[300];
  mcp__fmt(msg, sizeof msg, "Invalid params: %s", why);
  mcp__utf8_trim(msg);
  mcp__req_error(s, ctx, r, MCP__RPC_INVALID_PARAMS, msg, NULL);
}

const char *const mcp__log_levels[8] = {"debug",   "info",     "notice",
                                        "warning", "error",    "critical",
                                        "alert",   "emergency"};

/* ---- subscriptions (the session's listeners) ----------------------------- */

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
