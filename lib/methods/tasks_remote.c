/* Tasks another node runs: with a store that keeps records (a cluster's
 * Redis), a tasks method naming a task this server does not have asks the
 * store for the task's record (lib/engine/task.c keeps one for each task
 * it runs) and is served from it once the store answered, on the store's
 * thread: the request (copied) goes through dispatch again, its target the
 * record, so it is admitted as any other (the tool's scopes, the
 * authorizer, the caller's principal against the record's). tasks/get
 * answers from the record; tasks/cancel settles it in the store (the first
 * node to settle a record wins) and tells the owner, which stops the call;
 * tasks/update hands the answers to the owner. A record whose node's lease
 * lapsed (the node is gone) and which is not settled is failed here, with
 * an error saying the node was lost, so no task stays working forever.
 * tasks/result (2025-11-25) of a task that has not ended blocks, as on the
 * node running it: the request is kept (its session and sink held) and
 * waits (mcp__task_wait_remote) until a node says it stored the record
 * ended, or about every node lease (a lost node's task is then failed
 * here), then reads the record again and goes through dispatch again.
 * Nothing here blocks a thread: a request that needs the store is
 * answered when the store answers. */
#include <cjson/cJSON.h>
#include <string.h>

#include "methods.h"

#define LOST "the node running this task was lost"

static bool same_caller(const char *a, const char *b) {
  return a == NULL ? b == NULL : b != NULL && strcmp(a, b) == 0;
}

/* A request waiting for the store: what dispatch needs again. */
typedef struct remote {
  mcp_session *s;  /* a reference */
  mcp__sink *sink; /* a reference; NULL: the session's callback */
  const mcp__method *row;
  cJSON *params, *id_node, *caps; /* copies */
  char *id;                       /* the raw id's text */
  size_t id_len;
  mcp__version v;
  bool modern;
  int log_level;
  unsigned long long started_us;
  char task_id[32];
  mcp__task_view *view; /* once the store answered */
  /* tasks/result: it waits for its task to end (then a record gone has
   * expired), and the "stored" events heard when it last asked the store
   * (mcp__task_stored_seen) */
  bool waiting;
  unsigned long long seen;
  /* tasks/list: where the page began (the record key after which) */
  unsigned long long after_order;
  char after[48];
  /* The request's own, and a handler's that answers it later (when the
   * store answers: maybe at once, on this thread, maybe on another). */
  _Atomic unsigned refs;
} remote;

/* The request being dispatched again on this thread, with its record. */
static _Thread_local remote *tl_remote;

static void remote_free(remote *q) {
  if (q == NULL || atomic_fetch_sub(&q->refs, 1) != 1)
    return;
  mcp__task_view_free(q->view);
  cJSON_Delete(q->params);
  cJSON_Delete(q->id_node);
  cJSON_Delete(q->caps);
  mcp__free(q->id);
  mcp__sink_release(q->sink);
  if (q->s) {
    pthread_mutex_lock(&q->s->home.lock);
    mcp__session_unref_locked(q->s);
  }
  mcp__free(q);
}

/* The request and its envelope again, pointing into q. */
static void remote_req(remote *q, mcp__msg *m, mcp__req *r) {
  *m = (mcp__msg){.kind = MCP__MSG_REQUEST,
                  .method = q->row->name,
                  .params = q->params,
                  .id_node = q->id_node,
                  .id = q->id,
                  .id_len = q->id_len};
  *r = (mcp__req){.m = m,
                  .params = q->params,
                  .params_node = q->params,
                  .v = q->v,
                  .modern = q->modern,
                  .caps = q->caps,
                  .log_level = q->log_level,
                  .started_us = q->started_us};
}

static void remote_error(remote *q, int code, const char *message) {
  mcp__msg m;
  mcp__req r;
  remote_req(q, &m, &r);
  mcp__reply_ctx ctx = {.sink = q->sink};
  mcp__req_error(q->s, &ctx, &r, code, message, NULL);
}

/* Serves q again, its record found: dispatch, admission and the handler,
 * here. Frees q unless a handler kept it. */
static void redispatch(remote *q) {
  mcp__msg m;
  mcp__req r;
  remote_req(q, &m, &r);
  mcp__reply_ctx ctx = {.sink = q->sink};
  remote *outer = tl_remote;
  tl_remote = q;
  mcp__dispatch(q->s, &ctx, &r, q->row);
  tl_remote = outer;
  remote_free(q);
}

static void not_found(remote *q) {
  remote_error(q, MCP__RPC_INVALID_PARAMS,
               "Failed to retrieve task: Task not found");
  remote_free(q);
}

static void expired(remote *q) {
  remote_error(q, MCP__RPC_INVALID_PARAMS,
               "Failed to retrieve task: Task has expired");
  remote_free(q);
}

static void unreachable(remote *q, const char *why) {
  char msg[300];
  mcp__fmt(msg, sizeof msg,
           "Internal error: the store of this cluster's tasks cannot be "
           "reached (%s); try again",
           why);
  mcp__utf8_trim(msg);
  remote_error(q, MCP__RPC_INTERNAL_ERROR, msg);
  remote_free(q);
}

/* The answer to a record put by this file: the record as settled (ours,
 * or the one another node settled first). */
static mcp__task_view *settled_view(const mcp_store_record *rec,
                                    const mcp__buf *ours) {
  if (rec->written)
    return mcp__task_view_parse(ours->data, ours->len, true, false);
  return rec->value ? mcp__task_view_parse(rec->value, rec->len, true, false)
                    : NULL;
}

/* A put settling q's record: what it wrote (to read back when it took). */
typedef struct settle {
  remote *q;
  mcp__buf text;
  void (*then)(remote *q, mcp__task_view *settled, bool written);
} settle;

static void settle_done(void *arg, int rc, const mcp_store_record *recs,
                        unsigned n, bool more, const char *why) {
  (void)more;
  settle *st = arg;
  remote *q = st->q;
  mcp__task_view *v =
      rc == 0 && n == 1 ? settled_view(&recs[0], &st->text) : NULL;
  bool written = rc == 0 && n == 1 && recs[0].written;
  if (written && v)
    mcp__task_stored(q->s->home.srv, q->task_id, v->rec.f.status);
  mcp__buf_free(&st->text);
  void (*then)(remote *, mcp__task_view *, bool) = st->then;
  mcp__free(st);
  if (rc != 0) {
    mcp__task_view_free(v);
    unreachable(q, why);
    return;
  }
  if (v == NULL) {
    not_found(q);
    return;
  }
  then(q, v, written);
}

/* Puts rec (q's record, changed to status with message and outcome o,
 * final) in the store, then calls then with the record as settled. */
static void settle_record(remote *q, const char *status, const char *message,
                          const mcp__outcome *o,
                          void (*then)(remote *q, mcp__task_view *settled,
                                       bool written)) {
  mcp_store *stor = mcp__records(q->s->home.srv);
  settle *st = mcp__calloc(1, sizeof *st);
  if (stor == NULL || st == NULL) {
    mcp__free(st);
    unreachable(q, stor ? "out of memory" : "no store is set");
    return;
  }
  st->q = q;
  st->then = then;
  const mcp__task_record *was = &q->view->rec;
  mcp__task_record r = *was;
  r.f.status = status;
  r.f.status_message = message;
  r.f.updated_ms = mcp__wall_ms();
  r.requests = NULL;
  r.outcome = o;
  mcp__wire_record(&st->text, &r);
  char key[48], index[48];
  mcp__fmt(key, sizeof key, "task:%s", q->task_id);
  mcp__task_index(index, sizeof index, was->subject);
  long long left =
      was->f.created_ms + (long long)was->f.ttl_ms - r.f.updated_ms;
  mcp_store_record rec = {.key = key,
                          .value = st->text.data,
                          .len = st->text.len,
                          .holder = was->node,
                          .index = index,
                          .order = (unsigned long long)was->f.created_ms,
                          .ttl_ms = left > 0 ? (unsigned long long)left : 1,
                          .final = true};
  int rc =
      st->text.err ? MCP_ENOMEM : mcp_store_put(stor, &rec, settle_done, st);
  if (rc != 0) {
    mcp__buf_free(&st->text);
    mcp__free(st);
    unreachable(q, mcp_strerror(rc));
  }
}

static void lost_settled(remote *q, mcp__task_view *v, bool written) {
  if (written)
    mcp__log(q->s->home.srv, MCP_LOG_WARNING,
             "task %s failed: %s (node %s, no lease)", q->task_id, LOST,
             v->rec.node ? v->rec.node : "?");
  mcp__task_view_free(q->view);
  q->view = v;
  redispatch(q);
}

/* The error members of a task whose node was lost. */
#define LOST_ERROR "\"code\":-32603,\"message\":\"Internal error: " LOST "\""

static void on_record(void *arg, int rc, const mcp_store_record *recs,
                      unsigned n, bool more, const char *why) {
  (void)more;
  remote *q = arg;
  if (rc != 0) {
    unreachable(q, why);
    return;
  }
  if ((n == 0 || recs[0].value == NULL) && q->waiting) {
    expired(q); /* it was there when the request came */
    return;
  }
  if (n == 0 || recs[0].value == NULL) {
    not_found(q);
    return;
  }
  /* A waiting tasks/result reads it again: the record it read before is
   * no one's any more. */
  mcp__task_view_free(q->view);
  q->view = mcp__task_view_parse(recs[0].value, recs[0].len, recs[0].final,
                                 recs[0].holder_alive);
  if (q->view == NULL || strcmp(q->view->rec.f.id, q->task_id) != 0) {
    mcp__log(q->s->home.srv, MCP_LOG_WARNING,
             "the store's record of task %s is not one: ignored", q->task_id);
    not_found(q);
    return;
  }
  if (!q->view->final && !q->view->holder_alive) {
    /* Its node stopped renewing its lease: it is gone, and so is the
     * call. The first node to read it says so, once, for every node. */
    static const mcp__outcome lost = {.error = true,
                                      .code = MCP__RPC_INTERNAL_ERROR,
                                      .members = LOST_ERROR,
                                      .len = sizeof LOST_ERROR - 1};
    settle_record(q, "failed", LOST, &lost, lost_settled);
    return;
  }
  redispatch(q);
}

/* A copy of r, to answer it later; NULL when out of memory. */
static remote *remote_new(mcp_session *s, mcp__reply_ctx *ctx,
                          const mcp__req *r, const char *task_id) {
  remote *q = mcp__calloc(1, sizeof *q);
  if (q == NULL)
    return NULL;
  *q = (remote){.sink = ctx->sink,
                .row = mcp__method_find(r->m->method),
                .v = r->v,
                .modern = r->modern,
                .log_level = r->log_level,
                .started_us = r->started_us};
  atomic_init(&q->refs, 1);
  memcpy(q->task_id, task_id, strlen(task_id) + 1);
  q->params = cJSON_Duplicate(r->params, true);
  q->id_node = r->m->id_node ? cJSON_Duplicate(r->m->id_node, true) : NULL;
  q->caps = r->caps ? cJSON_Duplicate(r->caps, true) : NULL;
  q->id = r->m->id ? mcp__strndup(r->m->id, r->m->id_len) : NULL;
  q->id_len = r->m->id_len;
  if (q->row == NULL || q->params == NULL ||
      (r->m->id_node && q->id_node == NULL) || (r->caps && q->caps == NULL) ||
      (r->m->id && q->id == NULL)) {
    q->sink = NULL;
    remote_free(q);
    return NULL;
  }
  mcp__sink_ref(q->sink);
  pthread_mutex_lock(&s->home.lock);
  atomic_fetch_add(&s->home.refs, 1);
  pthread_mutex_unlock(&s->home.lock);
  q->s = s;
  return q;
}

/* Asks the store for q's record (q's reference goes with the request). */
static void ask_store(remote *q) {
  mcp_server *srv = q->s->home.srv;
  mcp_store *st = mcp__records(srv);
  if (st == NULL) {
    unreachable(q, "no store is set");
    return;
  }
  q->seen = mcp__task_stored_seen(srv, q->task_id);
  char key[48];
  mcp__fmt(key, sizeof key, "task:%s", q->task_id);
  int rc = mcp_store_get(st, key, on_record, q);
  if (rc != 0)
    unreachable(q, mcp_strerror(rc));
}

bool mcp__task_remote_ask(mcp_session *s, mcp__reply_ctx *ctx,
                          const mcp__req *r, const char *task_id) {
  mcp_store *st = mcp__records(s->home.srv);
  if (st == NULL || ctx->batch || tl_remote || strlen(task_id) >= 32)
    return false;
  remote *q = remote_new(s, ctx, r, task_id);
  if (q == NULL)
    return false;
  ask_store(q);
  return true;
}

const mcp__task_view *mcp__task_remote_view(const char *task_id) {
  remote *q = tl_remote;
  return q && q->view && strcmp(q->task_id, task_id) == 0 ? q->view : NULL;
}

/* ---- the methods, served from a record ---------------------------------- */

void mcp__remote_get(mcp_session *s, mcp__reply_ctx *ctx, const mcp__req *r,
                     const mcp__task_view *v) {
  mcp__buf b = {0};
  const mcp__task_record *rec = &v->rec;
  bool cancelled = strcmp(rec->f.status, "cancelled") == 0;
  if (r->modern)
    mcp__wire_detail(
        &b, &rec->f,
        strcmp(rec->f.status, "input_required") == 0 ? rec->requests : NULL,
        cancelled ? NULL : rec->outcome);
  else
    mcp__wire_task(&b, &rec->f, false);
  mcp__reply_result(s, ctx, r, &b);
}

/* After tasks/cancel settled the record: the owner stops the call, the
 * request hears how it went. */
static void cancel_settled(remote *q, mcp__task_view *v, bool written) {
  mcp_server *srv = q->s->home.srv;
  if (written && v->rec.node) {
    mcp__buf e = {0};
    mcp__task_event_start(&e, srv, "cancel", q->task_id, v->rec.node);
    mcp__buf_putc(&e, '}');
    if (e.err == 0)
      mcp__publish(srv, "tasks/cancel", e.data, e.len);
    mcp__buf_free(&e);
  }
  mcp__msg m;
  mcp__req r;
  remote_req(q, &m, &r);
  mcp__reply_ctx ctx = {.sink = q->sink};
  mcp__buf b = {0};
  if (written && !r.modern)
    mcp__wire_task(&b, &v->rec.f, false);
  mcp__reply_cancel(q->s, &ctx, &r, v->rec.f.status, !written, &b);
  mcp__task_view_free(v);
  remote_free(q);
}

void mcp__remote_cancel(mcp_session *s, mcp__reply_ctx *ctx, const mcp__req *r,
                        const mcp__task_view *v) {
  remote *q = tl_remote;
  if (v->final) {
    mcp__buf b = {0};
    mcp__reply_cancel(s, ctx, r, v->rec.f.status, true, &b);
    return;
  }
  atomic_fetch_add(&q->refs, 1);
  settle_record(q, "cancelled", NULL, NULL, cancel_settled);
}

void mcp__remote_update(mcp_session *s, mcp__reply_ctx *ctx, const mcp__req *r,
                        const mcp__task_view *v, const cJSON *answers) {
  const cJSON *requests = v->rec.requests;
  /* Checked here as the owner would: an answer must be an object; keys
   * not outstanding are ignored there. */
  for (const cJSON *a = answers->child; a; a = a->next)
    if (!cJSON_IsObject(a)) {
      char why[200];
      mcp__fmt(why, sizeof why, "inputResponses[%.64s] must be an object",
               a->string);
      mcp__utf8_trim(why);
      mcp__reply_invalid_params(s, ctx, r, why);
      return;
    }
  mcp_server *srv = s->home.srv;
  int rc = 0;
  if (requests && requests->child && v->rec.node && !v->final) {
    mcp__buf e = {0};
    mcp__task_event_start(&e, srv, "update", v->rec.f.id, v->rec.node);
    mcp__buf_puts(&e, ",\"answers\":");
    mcp__json_write(&e, answers);
    mcp__buf_putc(&e, '}');
    rc = e.err ? MCP_ENOMEM
         : e.len > MCP_STORE_EVENT_MAX
             ? MCP_ELIMIT
             : mcp__publish(srv, "tasks/update", e.data, e.len);
    mcp__buf_free(&e);
  }
  if (rc == MCP_ELIMIT) {
    mcp__req_error(s, ctx, r, MCP__RPC_SERVER_BUSY,
                   "Server busy: inputResponses too large to hand to the "
                   "node running the task",
                   NULL);
    return;
  }
  if (rc) {
    mcp__req_error(s, ctx, r, MCP__RPC_INTERNAL_ERROR,
                   "Internal error: the node running the task cannot be "
                   "reached; try again",
                   NULL);
    return;
  }
  mcp__buf b = {0};
  mcp__reply_result(s, ctx, r, &b);
}

/* What is left of the TTL of the task v records (0: none). */
static long long ttl_left(const mcp__task_view *v) {
  long long left =
      v->rec.f.created_ms + (long long)v->rec.f.ttl_ms - mcp__wall_ms();
  return left > 0 ? left : 0;
}

#define STOPPED                                                                \
  "Internal error: this server stopped before the task ended; ask "            \
  "tasks/result again"

/* A waiting tasks/result is woken (mcp__task_wait_remote): it reads the
 * record again and goes through dispatch again, unless nobody can hear
 * the answer any more, or the task's TTL passed. */
static void result_woken(void *arg, mcp__remote_wake why) {
  remote *q = arg;
  if (why == MCP__WAKE_CLOSED) {
    remote_error(q, MCP__RPC_INTERNAL_ERROR, STOPPED);
    remote_free(q);
  } else if (why == MCP__WAKE_SESSION || atomic_load(&q->s->home.closed)) {
    remote_free(q); /* its session is gone: nobody to answer */
  } else if (why == MCP__WAKE_TIMER && ttl_left(q->view) == 0) {
    expired(q);
  } else {
    ask_store(q);
  }
}

/* Keeps the request being served (tl_remote) waiting for its task to end:
 * until a node stores the record ended, and at most a node lease (its
 * node may be lost) or what is left of its TTL. */
static void result_wait(mcp_session *s, mcp__reply_ctx *ctx, const mcp__req *r,
                        const mcp__task_view *v) {
  remote *q = tl_remote;
  mcp_server *srv = s->home.srv;
  unsigned long long ms = atomic_load(&srv->node_lease_ms);
  long long left = ttl_left(v);
  if ((unsigned long long)left < ms)
    ms = (unsigned long long)left;
  atomic_fetch_add(&q->refs, 1); /* the wait's */
  q->waiting = true;
  int rc = mcp__task_wait_remote(q->s, q->task_id, q->seen,
                                 mcp__now_us() + ms * 1000, result_woken, q);
  if (rc == 0)
    return;                      /* answered when it is woken */
  atomic_fetch_sub(&q->refs, 1); /* redispatch holds its own */
  if (rc == MCP_ECLOSED && atomic_load(&q->s->home.closed))
    return; /* its session ended: nobody to answer */
  if (rc == MCP_ELIMIT)
    mcp__req_error(s, ctx, r, MCP__RPC_SERVER_BUSY,
                   "Server busy: too many tasks/result requests wait on this "
                   "task",
                   NULL);
  else
    mcp__req_error(s, ctx, r, MCP__RPC_INTERNAL_ERROR,
                   rc == MCP_ECLOSED ? STOPPED : "Internal error", NULL);
}

void mcp__remote_result(mcp_session *s, mcp__reply_ctx *ctx, const mcp__req *r,
                        const mcp__task_view *v) {
  if (!v->final && strcmp(v->rec.f.status, "input_required") == 0) {
    /* Its input requests went to the session that made it, on its node,
     * which takes their answers: this node cannot relay them. */
    mcp__req_error(s, ctx, r, MCP__RPC_SERVER_BUSY,
                   "Server busy: the task runs on another node and waits for "
                   "input, asked of the session that created it; answer it "
                   "there (or call tasks/result on that session), then call "
                   "tasks/result again",
                   NULL);
    return;
  }
  if (!v->final) {
    result_wait(s, ctx, r, v);
    return;
  }
  mcp__buf b = {0};
  bool cancelled = strcmp(v->rec.f.status, "cancelled") == 0;
  mcp__wire_task_result(&b, r->m->id, r->m->id_len, v->rec.f.id,
                        cancelled ? NULL : v->rec.outcome);
  ctx->facts.kind = MCP_SENT_RESULT;
  mcp__reply_buf(s, ctx, &b);
}

/* ---- tasks/list from the store -------------------------------------------
 * The caller's tasks on every node: the store's index of its principal's
 * records, a page at a time. The cursor is the last record's place,
 * "s1.<order>.<task id>" (no secret: the caller's own task). */

#define CURSOR_PREFIX "s1."

static bool cursor_read(const char *c, unsigned long long *order, char *id,
                        size_t idsize) {
  if (c == NULL || strncmp(c, CURSOR_PREFIX, 3) != 0)
    return false;
  const char *p = c + 3;
  unsigned long long v = 0;
  size_t digits = 0;
  for (; *p >= '0' && *p <= '9' && digits < 16; p++, digits++)
    v = v * 10 + (unsigned long long)(*p - '0');
  if (digits == 0 || *p++ != '.')
    return false;
  size_t n = strlen(p);
  if (n == 0 || n >= idsize)
    return false;
  for (size_t i = 0; i < n; i++)
    if (!(p[i] == '-' || p[i] == '_' || (p[i] >= '0' && p[i] <= '9') ||
          (p[i] >= 'a' && p[i] <= 'z') || (p[i] >= 'A' && p[i] <= 'Z')))
      return false;
  *order = v;
  memcpy(id, p, n + 1);
  return true;
}

static void on_page(void *arg, int rc, const mcp_store_record *recs, unsigned n,
                    bool more, const char *why) {
  remote *q = arg;
  if (rc != 0) {
    unreachable(q, why);
    return;
  }
  mcp_session *s = q->s;
  const mcp_principal *visible = mcp__visible_to(s);
  mcp__buf b = {0};
  mcp__buf_puts(&b, "\"tasks\":[");
  unsigned shown = 0;
  for (unsigned i = 0; i < n; i++) {
    mcp__task_view *v =
        recs[i].value
            ? mcp__task_view_parse(recs[i].value, recs[i].len, recs[i].final,
                                   recs[i].holder_alive)
            : NULL;
    mcp__tool *tool = NULL;
    if (v && same_caller(v->rec.subject, s->home.principal.subject))
      tool = mcp__find_visible(s->home.srv, &s->home.srv->reg, v->rec.tool,
                               visible);
    if (tool) {
      mcp__buf_puts(&b, shown++ ? ",{" : "{");
      mcp__task_facts f = v->rec.f;
      /* A node that died: its unsettled task is shown as the next
       * tasks/get will settle it. */
      if (!v->final && !v->holder_alive) {
        f.status = "failed";
        f.status_message = LOST;
      }
      mcp__wire_task(&b, &f, false);
      mcp__result_end(&b);
    }
    mcp__tool_unref(tool);
    mcp__task_view_free(v);
  }
  mcp__buf_puts(&b, "],");
  if (more) {
    /* From the last record read; with none (the store cleared expired
     * ones on the way), from where this page began. */
    const char *key = n ? recs[n - 1].key : q->after;
    const char *id = strncmp(key, "task:", 5) == 0 ? key + 5 : key;
    if (id[0])
      mcp__buf_printf(&b, "\"nextCursor\":\"" CURSOR_PREFIX "%llu.%s\",",
                      n ? recs[n - 1].order : q->after_order, id);
    else
      mcp__buf_printf(&b, "\"nextCursor\":\"" CURSOR_PREFIX "%llu.-\",",
                      q->after_order);
  }
  mcp__msg m;
  mcp__req r;
  remote_req(q, &m, &r);
  mcp__reply_ctx ctx = {.sink = q->sink};
  mcp__reply_result(s, &ctx, &r, &b);
  remote_free(q);
}

bool mcp__remote_list(mcp_session *s, mcp__reply_ctx *ctx, const mcp__req *r) {
  mcp_store *st = mcp__records(s->home.srv);
  if (st == NULL)
    return false;
  const cJSON *cursor = mcp__json_member(r->params, "cursor");
  unsigned long long order = 0;
  char id[40] = "";
  if (cursor &&
      !cursor_read(cJSON_GetStringValue(cursor), &order, id, sizeof id)) {
    mcp__reply_invalid_params(s, ctx, r, "cursor is not one this server gave");
    return true;
  }
  remote *q = remote_new(s, ctx, r, "");
  if (q == NULL) {
    mcp__req_error(s, ctx, r, MCP__RPC_INTERNAL_ERROR, "Internal error", NULL);
    return true;
  }
  char index[48];
  mcp__task_index(index, sizeof index, s->home.principal.subject);
  /* "-" (no task id has one) stands for the start of order's band. */
  if (id[0] && strcmp(id, "-") != 0)
    mcp__fmt(q->after, sizeof q->after, "task:%s", id);
  q->after_order = order;
  unsigned page = atomic_load(&s->home.srv->page_size);
  int rc = mcp_store_list(st, index, order, q->after, page > 1000 ? 1000 : page,
                          on_page, q);
  if (rc != 0)
    unreachable(q, mcp_strerror(rc));
  return true;
}
