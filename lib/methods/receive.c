/* Receiving: a transport hands a session whole JSON-RPC messages
 * (mcp_session_receive and friends); each is parsed, its era read, and
 * routed: a request to its row of the dispatch table, a notification
 * (cancellation, initialized) to its effect, a response to the input
 * round waiting for it. */
#include <cjson/cJSON.h>
#include <string.h>

#include "methods.h"

/* ---- dispatch ------------------------------------------------------------ */

static void handle_cancelled(mcp_session *s, const cJSON *params) {
  const cJSON *id = mcp__json_member(params, "requestId");
  if (id == NULL || !(cJSON_IsString(id) || cJSON_IsNumber(id)))
    return; /* malformed cancellations are ignored, as the spec asks */
  mcp__buf canon = {0};
  mcp_call *parked = NULL;
  mcp__sink *listener = NULL;
  if (mcp__id_canonical(&canon, id) == 0 && mcp__buf_str(&canon)) {
    pthread_mutex_lock(&s->home.lock);
    listener = mcp__listener_cancel_locked(s, canon.data);
    mcp_call *c = mcp__find_call(s, canon.data);
    if (c) {
      mcp__call_cancel_locked(c);
      /* A call parked for the client's answers has no thread to notice:
       * finish it here. */
      if (mcp__call_unpark_locked(c))
        parked = c;
    }
    pthread_mutex_unlock(&s->home.lock);
  }
  mcp__buf_free(&canon);
  mcp__sink_release(listener);
  if (parked)
    mcp__call_complete(parked, MCP_ECANCELED, NULL, NULL);
}

/* Fills r's era from the request's _meta, by the table's era rule
 * (mcp__method_era). A modern request requires both a protocol version and
 * client capabilities, the version must be a modern one, and a log level,
 * if any, must be valid. Returns false after answering the request with the
 * error. */
static bool read_era(mcp_session *s, mcp__reply_ctx *ctx, mcp__req *r,
                     const mcp__method *row) {
  const cJSON *meta = mcp__json_member(r->params, "_meta");
  const cJSON *version =
      mcp__json_member(meta, "io.modelcontextprotocol/protocolVersion");
  const cJSON *caps =
      mcp__json_member(meta, "io.modelcontextprotocol/clientCapabilities");
  const cJSON *level =
      mcp__json_member(meta, "io.modelcontextprotocol/logLevel");
  r->log_level = -1;
  if (mcp__method_era(row, r->params) == MCP__ERA_LEGACY) {
    r->v = (mcp__version)atomic_load(&s->version);
    r->caps = s->home.client_caps;
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
  if (mcp__json_member(params, "protocolVersion") != NULL)
    return false;
  const cJSON *meta = mcp__json_member(params, "_meta");
  const cJSON *v =
      mcp__json_member(meta, "io.modelcontextprotocol/protocolVersion");
  return cJSON_IsString(v) &&
         mcp__version_find(v->valuestring) >= MCP__VERSION_MODERN;
}

static void handle_request(mcp_session *s, mcp__reply_ctx *ctx,
                           const mcp__msg *m, cJSON *params) {
  static const cJSON empty = {.type = cJSON_Object};
  mcp__req r = {
      .m = m, .params = params ? params : &empty, .params_node = params};
  const mcp__method *row = mcp__method_find(m->method);
  /* initialize starts the legacy era, whatever _meta it carries, unless it
   * is a modern request (see modern_initialize). */
  bool initialize = row && row->handshake;
  if (initialize && modern_initialize(r.params)) {
    r.modern = true;
    method_not_found(s, ctx, &r);
    return;
  }
  if (initialize) {
    r.v = (mcp__version)atomic_load(&s->version);
    mcp__handle_initialize(s, ctx, &r);
    return;
  }
  if (!read_era(s, ctx, &r, row))
    return;
  if (r.modern && ctx->batch) {
    mcp__req_error(s, ctx, &r, MCP__RPC_INVALID_REQUEST,
                   "Invalid Request: 2026-07-28 requests are single messages, "
                   "never part of a batch",
                   NULL);
    return;
  }
  unsigned era = r.modern ? MCP__ERA_MODERN : MCP__ERA_LEGACY;
  /* Methods of another era, or of a feature the server does not offer,
   * are unknown here. */
  if (row == NULL || !(row->eras & era) ||
      (row->feature != MCP__FEATURE_NONE &&
       !mcp__offers(s->home.srv, (mcp__feature)row->feature))) {
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
    if (atomic_compare_exchange_strong(&s->state, &expected, MCP__STATE_READY))
      mcp__session_changed(s);
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
    mcp_call *ready = mcp__input_response(&s->home, &m, node);
    if (ready) {
      /* The call answers where it was asked (its own sink), not on the
       * stream that carried the client's answer. */
      mcp__sink *k = ready->sink;
      mcp__reply_ctx own = {.sink = k};
      mcp__sink_ref(k);
      mcp__reply_call(s, &own, ready);
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
        mcp__json_member(node, "method")) {
      mcp__log(s->home.srv, MCP_LOG_DEBUG,
               "ignored a malformed notification: %s", m.why);
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
static bool session_closed(mcp_session *s) {
  return atomic_load(&s->home.closed);
}

/* What receiving one message returns, once its replies are out. */
static int receive_end(mcp_session *s, const mcp__reply_ctx *ctx) {
  int err = ctx->err;
  /* A send that failed on the way (a progress notification, say) closed
   * the session even if no reply of this message was due. */
  if (err == 0 && session_closed(s))
    err = MCP_ECLOSED;
  if (err == MCP_ENOMEM)
    mcp__log(s->home.srv, MCP_LOG_ERROR,
             "out of memory while answering a message");
  return err;
}

/* Handles one parsed message. */
static int receive_doc(mcp_session *s, mcp__json_doc *doc, mcp__sink *sink) {
  if (session_closed(s))
    return MCP_ECLOSED;
  mcp__session_touch(s); /* a shared session's record lives on */
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
                        ? mcp__json_member(msg->doc.root, "id")
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
