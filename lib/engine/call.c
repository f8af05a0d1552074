/* The call context a handler sees: arguments, principal, progress,
 * cancellation, and the result builder. The result is assembled as JSON
 * text for the call's protocol version as the handler goes, so finishing a
 * call is one concatenation. */
#include <cjson/cJSON.h>
#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <string.h>

#include "engine.h"

/* "tool", "prompt" or "resource", for log lines. */
const char *mcp__call_noun(const mcp_call *c) {
  return c->kind == MCP_CALL_PROMPT     ? "prompt"
         : c->kind == MCP_CALL_RESOURCE ? "resource"
                                        : "tool";
}

/* ---- the home ------------------------------------------------------------
 * Where calls live (engine.h's mcp__home): a session's, or a task's own.
 * Nothing here knows which. */

int mcp__home_init(mcp__home *h, const mcp__home_ops *ops, mcp_server *srv,
                   const mcp_principal *principal) {
  if (mcp__principal_copy(&h->principal, principal) != 0)
    return MCP_ENOMEM;
  if (pthread_mutex_init(&h->lock, NULL) != 0) {
    mcp__principal_free(&h->principal);
    return MCP_ENOMEM;
  }
  h->ops = ops;
  h->srv = srv;
  atomic_fetch_add(&srv->refs, 1);
  atomic_init(&h->refs, 1);
  atomic_init(&h->closed, false);
  atomic_init(&h->executing, 0);
  mcp__list_init(&h->calls);
  return 0;
}

void mcp__home_fini(mcp__home *h) {
  mcp_server *srv = h->srv;
  cJSON_Delete(h->client_caps);
  h->client_caps = NULL;
  mcp__principal_free(&h->principal);
  pthread_mutex_destroy(&h->lock);
  /* Last: the home held the server (a call that ends after
   * mcp_server_free frees the server here). */
  mcp__server_unref(srv);
}

void mcp__home_unref_locked(mcp__home *h) {
  unsigned left = atomic_fetch_sub(&h->refs, 1) - 1;
  pthread_mutex_unlock(&h->lock);
  if (left == 0)
    h->ops->release(h);
}

void mcp__home_cancel_all_locked(mcp__home *h) {
  for (;;) {
    mcp_call *parked = NULL;
    mcp__list_each(link, &h->calls) {
      mcp_call *c = mcp__container_of(link, mcp_call, link);
      mcp__call_cancel_locked(c);
      if (parked == NULL && mcp__call_unpark_locked(c))
        parked = c;
    }
    if (parked == NULL)
      return;
    pthread_mutex_unlock(&h->lock);
    mcp__call_complete(parked, MCP_ECANCELED, NULL, NULL);
    pthread_mutex_lock(&h->lock);
  }
}

void mcp__home_close(mcp__home *h) {
  /* Calls still running keep the home through their references; they see
   * the cancelled flag and their replies go nowhere. Calls parked for the
   * client's answers have no thread of their own: they end here. */
  pthread_mutex_lock(&h->lock);
  h->closed = true;
  h->freed = true;
  mcp__home_cancel_all_locked(h);
  mcp__home_unref_locked(h);
}

int mcp__home_send_locked(mcp__home *h, mcp__sink *k, const char *msg,
                          size_t len, const mcp_send_info *info) {
  /* Once let go of by its owner, a home sends nothing more, to its peer or
   * to a sink. */
  if (k != NULL && h->freed)
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
  if (h->closed)
    return MCP_ECLOSED;
  return h->ops->send_locked ? h->ops->send_locked(h, msg, len, info) : 0;
}

/* ---- making a call ---------------------------------------------------------
 */

int mcp__call_new(mcp__home *h, mcp__tool *tool, mcp__version v, const char *id,
                  size_t id_len, const char *canon_id,
                  const char *progress_token, cJSON *arguments,
                  mcp__json_pool *args_pool, unsigned long long started,
                  mcp_call **out) {
  /* The call and the texts it keeps share one block: one allocation per
   * call instead of four. */
  size_t canon_len = strlen(canon_id) + 1;
  size_t token_len = progress_token ? strlen(progress_token) + 1 : 0;
  mcp_call *c = mcp__calloc(1, sizeof *c + id_len + 1 + canon_len + token_len);
  if (c == NULL) {
    if (args_pool == NULL)
      cJSON_Delete(arguments);
    return MCP_ENOMEM;
  }
  c->arguments = arguments;
  c->args_pool = mcp__json_pool_ref(args_pool);
  c->version = v;
  c->id = (char *)(c + 1);
  memcpy(c->id, id, id_len);
  c->id_len = id_len;
  c->canon_id = c->id + id_len + 1;
  memcpy(c->canon_id, canon_id, canon_len);
  if (progress_token) {
    c->progress_token = c->canon_id + canon_len;
    memcpy(c->progress_token, progress_token, token_len);
  }
  c->log_level = -1;
  /* Set once: the heap's readers look at it under its own lock only. */
  c->deadline.kind = MCP__DEADLINE_CALL;
  pthread_mutex_init(&c->effects_lock, NULL);
  atomic_init(&c->cancelled, false);
  c->tool = tool;
  c->kind = tool->kind;
  c->home = h;
  c->started_us = started;
  unsigned ms = atomic_load(&h->srv->call_timeout_ms);
  atomic_init(&c->deadline_us,
              ms ? started + (unsigned long long)ms * 1000u : 0);
  pthread_mutex_lock(&h->lock);
  mcp__list_push_front(&h->calls, &c->link);
  h->ncalls++;
  atomic_fetch_add(&h->refs, 1);
  if (h->closed)
    atomic_store(&c->cancelled, true);
  pthread_mutex_unlock(&h->lock);
  *out = c;
  return 0;
}

void mcp__call_free(mcp_call *c) {
  mcp__input_clear(c);
  if (c->modern)
    cJSON_Delete(c->caps);
  if (c->args_pool)
    mcp__json_pool_release(c->args_pool);
  else
    cJSON_Delete(c->arguments);
  mcp__free(c->uri);
  mcp__free(c->description);
  mcp__free(c->error_text);
  mcp__free(c->rate_key);
  mcp__free(c->refusal);
  mcp__stepup_free(c->stepup);
  mcp__trust_clear(c);
  mcp__call_clear_result(c);
  /* Taken once more: whoever added a line is done with the call. */
  pthread_mutex_lock(&c->effects_lock);
  struct mcp__effect_line *e = c->effects;
  c->effects = NULL;
  pthread_mutex_unlock(&c->effects_lock);
  pthread_mutex_destroy(&c->effects_lock);
  while (e) {
    struct mcp__effect_line *next = e->next;
    mcp__free(e);
    e = next;
  }
  mcp__free(c);
}

void mcp__call_clear_result(mcp_call *c) {
  mcp__buf_free(&c->content);
  c->head_len = 0;
  mcp__buf_free(&c->structured);
}

/* ---- replies that are not the handler's ----------------------------------
 * Every JSON-RPC error answering a call is written by call_error, which
 * keeps its code for the facts the sink is told (mcp__call_complete). */

static void call_error(mcp_call *c, mcp__buf *out, int code, const char *msg,
                       const char *data) {
  mcp__rpc_error(out, c->id, c->id_len, MCP__ID_NULL, code, msg, data);
  c->error_code = code;
}

/* {"jsonrpc":"2.0","id":ID,"result":{content:[text],isError:true}} for a
 * call, in its era's shape. */
static void tool_error(mcp_call *c, mcp__buf *out, const char *text) {
  c->reply_is_error = true;
  mcp__buf_puts(out, "{\"jsonrpc\":\"2.0\",\"id\":");
  mcp__buf_append(out, c->id, c->id_len);
  mcp__buf_puts(out, ",\"result\":");
  mcp__result_begin(out, c->home->srv, c->modern, "complete");
  mcp__buf_puts(out, "\"content\":[{\"type\":\"text\",\"text\":");
  mcp__json_quote(out, text, strlen(text));
  mcp__buf_puts(out, "}],\"isError\":true,");
  mcp__result_end(out);
  mcp__buf_putc(out, '}');
}

void mcp__call_failure_reply(mcp_call *c, mcp__buf *out, const char *text) {
  if (c->kind == MCP_CALL_TOOL) {
    tool_error(c, out, text);
    return;
  }
  char msg[160];
  mcp__fmt(msg, sizeof msg, "Internal error: %s", text);
  call_error(c, out, MCP__RPC_INTERNAL_ERROR, msg, NULL);
}

/* c's outcome, as facts, from its reply as built: every reply to a call
 * is {"jsonrpc":"2.0","id":ID,"result":{...}} or the same with "error"
 * (reply_head, tool_error, missing_capability, mcp__rpc_error with the
 * call's id), so the object's members are where the builders put them. */
static mcp__outcome outcome_of(const mcp_call *c, const mcp__buf *reply) {
  static const char head[] = "{\"jsonrpc\":\"2.0\",\"id\":";
  static const char result[] = ",\"result\":", error[] = ",\"error\":";
  mcp__outcome o = {.error = c->error_code != 0,
                    .is_error = c->reply_is_error && c->error_code == 0,
                    .code = c->error_code};
  size_t at = sizeof head - 1 + c->id_len +
              (o.error ? sizeof error - 1 : sizeof result - 1) + 1;
  /* The members end before the object's brace and the envelope's. */
  if (reply->len >= at + 2) {
    o.members = reply->data + at;
    o.len = reply->len - at - 2;
  }
  return o;
}

/* The hints c runs under: its resolver's for its arguments, else its
 * tool's. */
static mcp__hints hints_of(const mcp_call *c) {
  return c->resolved ? c->hints : mcp__tool_hints(c->tool);
}

/* What a sink is told of the reply c's handler (or its deadline) gave. A
 * refused step-up names its scopes, as the admission point's refusal does,
 * so that an HTTP transport answers 403 with its challenge. */
static mcp_send_info reply_facts(const mcp_call *c, mcp_decision decision) {
  bool stepup = c->stepup && c->error_code == MCP_RPC_FORBIDDEN;
  return (mcp_send_info){
      .kind = c->error_code ? MCP_SENT_ERROR : MCP_SENT_RESULT,
      .error_code = c->error_code,
      .scopes = stepup ? c->stepup->d.required : NULL,
      .missing_scopes =
          stepup ? (const char *const *)c->stepup->d.missing : NULL,
      .audited = c->kind == MCP_CALL_TOOL,
      .decision = decision};
}

/* A refused step-up's scopes are named by the facts of a reply its caller
 * sends after the call is gone (facts, when given): its sink keeps them
 * until it is done. Without a sink (the session's own callback, which
 * takes no facts) those facts name none. Under the session lock. */
static void keep_stepup_locked(mcp_call *c, mcp_send_info *facts) {
  if (c->stepup == NULL)
    return;
  if (c->sink == NULL) {
    if (facts)
      facts->scopes = facts->missing_scopes = NULL;
    return;
  }
  c->stepup->next = c->sink->held;
  c->sink->held = c->stepup;
  c->stepup = NULL;
}

/* The refusal of a handler's step-up: the admission point's words. */
static void stepup_refusal(mcp_call *c, mcp__buf *out) {
  mcp__buf msg = {0}, data = {0};
  mcp__decision_message(&msg, &c->stepup->d, "tool");
  mcp__decision_data(&data, &c->stepup->d);
  const char *text = mcp__buf_str(&msg), *json = mcp__buf_str(&data);
  if (text && json)
    call_error(c, out, MCP_RPC_FORBIDDEN, text, json);
  else
    out->err = MCP_ENOMEM;
  mcp__buf_free(&msg);
  mcp__buf_free(&data);
}

/* ---- the call's state machine ---------------------------------------------
 * This section alone writes a call's phase, its deadline (mcp__call_new)
 * and its timed_out flag; docs/architecture.md has the table of phases. A
 * call whose answer waits on another thread (DEFERRED: on mcp_call_finish;
 * WAITING_INPUT: on the client) and that has a deadline is watched: it is
 * in the server's deadline heap, whose root is the least deadline, so
 * mcp_server_next_expiry_ms reads one number and mcp_server_expire takes the
 * due calls from the root, never walking the homes. A running call is not
 * watched: its handler answers for itself when it returns. The engine does
 * no I/O and owns no thread, so a deadline is noticed by whoever looks at
 * the clock: the handler (mcp_call_cancelled), the thread that completes
 * the call, and the transport's timer. Locks: the call's home's, then
 * srv->deadline_lock. */

#define NONE ULLONG_MAX

static mcp__deadline *deadline_of(const mcp__heap_node *n) {
  return (mcp__deadline *)(void *)((char *)n - offsetof(mcp__deadline, node));
}

static mcp_call *watched_call(mcp__heap_node *n) {
  return (mcp_call *)(void *)((char *)deadline_of(n) -
                              offsetof(mcp_call, deadline));
}

bool mcp__deadline_less(const mcp__heap_node *a, const mcp__heap_node *b) {
  return deadline_of(a)->at_us < deadline_of(b)->at_us;
}

/* Publishes the least deadline for mcp_server_next_expiry_ms, which reads it
 * without the lock. Under srv->deadline_lock. */
static void publish_next_locked(mcp_server *srv) {
  mcp__heap_node *min = srv->deadlines.min;
  atomic_store(&srv->next_deadline_us, min ? deadline_of(min)->at_us : NONE);
}

void mcp__deadline_watch(mcp_server *srv, mcp__deadline *d,
                         unsigned long long at_us) {
  pthread_mutex_lock(&srv->deadline_lock);
  if (!d->watched) {
    d->at_us = at_us;
    mcp__heap_insert(&srv->deadlines, &d->node);
    d->watched = true;
    publish_next_locked(srv);
  }
  pthread_mutex_unlock(&srv->deadline_lock);
}

void mcp__deadline_unwatch(mcp_server *srv, mcp__deadline *d) {
  pthread_mutex_lock(&srv->deadline_lock);
  if (d->watched) {
    mcp__heap_remove(&srv->deadlines, &d->node);
    d->watched = false;
    publish_next_locked(srv);
  }
  pthread_mutex_unlock(&srv->deadline_lock);
}

/* Puts c into the deadline heap, or takes it out. Under c->home->lock. */
static void watch_locked(mcp_call *c, bool on) {
  if (c->deadline.watched == on)
    return; /* written under the home's lock too: stable here */
  mcp_server *srv = c->home->srv;
  if (on)
    mcp__deadline_watch(srv, &c->deadline, atomic_load(&c->deadline_us));
  else
    mcp__deadline_unwatch(srv, &c->deadline);
}

/* Moves c to phase, watching its deadline while another thread owes the
 * answer. The one place a published call's phase is written. */
/* The phases: what entering one does, and why mcp_call_finish is refused
 * in it (NULL where it is not). */
static const struct phase_row {
  bool waits; /* its answer is owed by another thread: entering it watches
                 the call's deadline, leaving it unwatches */
  const char *no_finish;
} phases[] = {
    [MCP__CALL_RUNNING] = {false, NULL},
    [MCP__CALL_FINISH_EARLY] = {false, "the call was finished already "
                                       "(exactly once)"},
    [MCP__CALL_DEFERRED] = {true, NULL},
    [MCP__CALL_WAITING_INPUT] = {true, "the call is waiting for the client's "
                                       "input, not for mcp_call_finish"},
    [MCP__CALL_QUEUED] = {true, "the call waits in the executor, for "
                                "mcp_call_execute, not for mcp_call_finish"},
    [MCP__CALL_WAITING_RATE] = {true, "the call waits for the rate limit's "
                                      "store, its handler has not run"},
};

static void set_phase_locked(mcp_call *c, mcp__call_phase phase) {
  c->phase = phase;
  watch_locked(c, phases[phase].waits && atomic_load(&c->deadline_us) != 0 &&
                      !c->timed_out && !atomic_load(&c->cancelled));
}

void mcp__call_cancel_locked(mcp_call *c) {
  atomic_store(&c->cancelled, true);
  watch_locked(c, false); /* nobody is owed a timeout answer any more */
}

void mcp__call_park_locked(mcp_call *c) {
  set_phase_locked(c, MCP__CALL_WAITING_INPUT);
}

bool mcp__call_unpark_locked(mcp_call *c) {
  if (c->phase != MCP__CALL_WAITING_INPUT)
    return false;
  mcp__input_cancel_locked(c);
  set_phase_locked(c, MCP__CALL_RUNNING);
  return true;
}

bool mcp__call_late(const mcp_call *c) {
  /* Read once: a call that becomes a task has its deadline lifted by
   * another thread while its handler (or anyone) asks. */
  unsigned long long deadline = atomic_load(&((mcp_call *)c)->deadline_us);
  return deadline != 0 && mcp__now_us() >= deadline;
}

/* Publishes c's task record; the call deadline then no longer applies (the
 * task's TTL does), so it is lifted and unwatched. */
static void become_task_locked(mcp_call *c) {
  c->owner->publish_locked(c->owner_data);
  /* Out of the heap first: its order is by this deadline. */
  watch_locked(c, false);
  atomic_store(&c->deadline_us, 0);
}

void mcp__call_become_task(mcp_call *c) {
  pthread_mutex_lock(&c->home->lock);
  become_task_locked(c);
  pthread_mutex_unlock(&c->home->lock);
}

int mcp_call_start_task(mcp_call *call) {
  if (call == NULL)
    return MCP_EINVAL;
  if (call->kind != MCP_CALL_TOOL || !call->tool->task_support) {
    mcp__call_refused(call, "mcp_call_start_task",
                      "the tool declares no task support (flags "
                      "MCP_TOOL_TASK_OPTIONAL or MCP_TOOL_TASK_REQUIRED)");
    return MCP_EINVAL;
  }
  if (call->owner == NULL)
    return MCP_ECAPABILITY; /* this client takes no tasks: run as usual */
  mcp__call_become_task(call);
  return 0;
}

/* The timeout answer, without the log line (it may be built under the
 * home's lock, where no callback may run). */
static void timeout_reply(mcp_call *c, mcp__buf *out, char *text, size_t size) {
  unsigned long long deadline = atomic_load(&c->deadline_us);
  unsigned long long ms =
      deadline > c->started_us ? (deadline - c->started_us) / 1000u : 0;
  mcp__fmt(text, size, "timeout: the %s did not finish within %llu ms",
           mcp__call_noun(c), ms);
  mcp__call_failure_reply(c, out, text);
}

/* The reply to a call that missed its deadline (isError "timeout" for a
 * tool, a JSON-RPC error otherwise), with the log line for the author. */
static void timeout_answer(mcp_call *c, mcp__buf *out) {
  char text[120];
  timeout_reply(c, out, text, sizeof text);
  mcp__log(c->home->srv, MCP_LOG_WARNING, "%s \"%s\": %s", mcp__call_noun(c),
           c->tool->name, text);
}

int mcp__call_notify(mcp_call *c, const char *method, const mcp__buf *params) {
  mcp__home *h = c->home;
  mcp__buf b = {0};
  /* Written under the lock: mcp_server_expire lets go of the sink when it
   * answers a deferred call, and whether the message carries the
   * related-task _meta changes, under the same lock, when the call becomes
   * its owner's task. A call's own is sent under it too; an owned call's
   * goes to its owner after it, so that no other home's lock is ever
   * taken under this one. */
  bool owned = false;
  pthread_mutex_lock(&h->lock);
  if (!c->timed_out) {
    mcp__buf_printf(&b, "{\"jsonrpc\":\"2.0\",\"method\":\"%s\",\"params\":{",
                    method);
    const char *related = c->owner ? c->owner->related(c->owner_data) : NULL;
    if (related) {
      mcp__wire_related(&b, related);
      if (params->len)
        mcp__buf_putc(&b, ',');
    }
    mcp__buf_append(&b, params->data, params->len);
    mcp__buf_puts(&b, "}}");
    owned = c->owner != NULL;
    if (b.err == 0 && !owned)
      mcp__home_send_locked(h, c->sink, b.data, b.len, &mcp__sent_notification);
  }
  pthread_mutex_unlock(&h->lock);
  if (owned && b.err == 0)
    c->owner->notify(c->owner_data, b.data, b.len);
  int rc = b.err;
  mcp__buf_free(&b);
  return rc;
}

/* Takes out of the heap, and returns, its least call if that is due at
 * now and a call of h; NULL otherwise. Under h->lock. */
static mcp_call *take_due_locked(mcp__home *h, unsigned long long now) {
  mcp_server *srv = h->srv;
  mcp_call *c = NULL;
  pthread_mutex_lock(&srv->deadline_lock);
  mcp__heap_node *min = srv->deadlines.min;
  if (min && deadline_of(min)->at_us <= now &&
      deadline_of(min)->kind == MCP__DEADLINE_CALL &&
      watched_call(min)->home == h) {
    c = watched_call(min);
    mcp__heap_remove(&srv->deadlines, min);
    c->deadline.watched = false;
    publish_next_locked(srv);
  }
  pthread_mutex_unlock(&srv->deadline_lock);
  return c;
}

/* Answers c, whose deadline passed while it waited. Under h->lock, which
 * is released meanwhile and held again on return. */
static void expire_locked(mcp_call *c) {
  mcp__home *h = c->home;
  if (mcp__call_unpark_locked(c)) {
    /* Nobody else will finish a parked call: complete it here, which
     * answers the timeout (its deadline has passed) and frees it. */
    pthread_mutex_unlock(&h->lock);
    mcp__call_complete(c, MCP_ECANCELED, NULL, NULL);
    pthread_mutex_lock(&h->lock);
    return;
  }
  /* A deferred call belongs to the thread that will finish it: answer now,
   * mark it so that its finish only frees, and let go of its sink, so a
   * transport with a stream per request can end that stream. */
  char text[120], name[160];
  mcp__buf reply = {0};
  timeout_reply(c, &reply, text, sizeof text);
  mcp__fmt(name, sizeof name, "%s \"%s\"", mcp__call_noun(c), c->tool->name);
  c->timed_out = true;
  mcp__sink *k = NULL;
  if (reply.err == 0) {
    mcp_send_info facts = reply_facts(c, MCP_DECISION_TIMEOUT);
    mcp__home_send_locked(h, c->sink, reply.data, reply.len, &facts);
    atomic_store(&c->cancelled, true);
    k = c->sink;
    c->sink = NULL;
  }
  /* Without memory for the answer, the call keeps its sink and the finish
   * answers the timeout instead. */
  pthread_mutex_unlock(&h->lock);
  mcp__buf_free(&reply);
  mcp__log(h->srv, MCP_LOG_WARNING, "%s: %s", name, text);
  mcp__sink_release(k);
  pthread_mutex_lock(&h->lock);
}

long mcp_server_next_expiry_ms(mcp_server *srv) {
  if (srv == NULL)
    return -1;
  unsigned long long next = atomic_load(&srv->next_deadline_us);
  if (next == NONE)
    return -1;
  unsigned long long now = mcp__now_us();
  if (next <= now)
    return 0;
  /* Rounded up: waking before the deadline would only wait again. */
  unsigned long long ms = (next - now + 999u) / 1000u;
  return ms > INT_MAX ? INT_MAX : (long)ms;
}

/* Takes the due deadline at the heap's root, if any: a call's home
 * pinned in *h, or an owner's deadline pinned (its pin called) in *d.
 * Returns false when nothing is due at now. */
static bool take_due(mcp_server *srv, unsigned long long now, mcp__home **h,
                     mcp__deadline **d) {
  *h = NULL;
  *d = NULL;
  pthread_mutex_lock(&srv->deadline_lock);
  mcp__heap_node *min = srv->deadlines.min;
  if (min && deadline_of(min)->at_us <= now) {
    if (deadline_of(min)->kind == MCP__DEADLINE_CALL) {
      /* The call's own reference keeps its home alive here. */
      *h = watched_call(min)->home;
      atomic_fetch_add(&(*h)->refs, 1);
    } else {
      *d = deadline_of(min);
      (*d)->pin(*d);
    }
  }
  pthread_mutex_unlock(&srv->deadline_lock);
  return *h || *d;
}

int mcp_server_expire(mcp_server *srv) {
  if (srv == NULL)
    return MCP_EINVAL;
  int answered = 0;
  for (;;) {
    unsigned long long now = mcp__now_us();
    if (atomic_load(&srv->next_deadline_us) > now)
      return answered;
    /* The due deadline's owner is pinned under the heap's lock and acted
     * on after it, in the lock order. A call's home is locked, and its
     * due calls are taken from the root one by one; when the root is
     * another's, the outer loop moves there. */
    mcp__home *h;
    mcp__deadline *d;
    if (!take_due(srv, now, &h, &d))
      return answered;
    if (d) {
      d->due(d); /* unwatches it */
      answered++;
      continue;
    }
    pthread_mutex_lock(&h->lock);
    for (mcp_call *c; (c = take_due_locked(h, now)) != NULL; answered++)
      expire_locked(c);
    mcp__home_unref_locked(h);
  }
}

/* ---- reading the call ---------------------------------------------------- */

const cJSON *mcp_call_arguments(const mcp_call *call) {
  return call->arguments;
}

const char *mcp_call_name(const mcp_call *call) { return call->tool->name; }

mcp_call_kind mcp_call_kind_of(const mcp_call *call) {
  return (mcp_call_kind)call->kind;
}

const char *mcp_call_uri(const mcp_call *call) { return call->uri; }

const mcp_principal *mcp_call_principal(const mcp_call *call) {
  return &call->home->principal;
}

const cJSON *mcp_call_client_capabilities(const mcp_call *call) {
  return call ? call->caps : NULL;
}

static const cJSON *arg(const mcp_call *call, const char *name) {
  const cJSON *a = mcp__json_member(call->arguments, name);
  return cJSON_IsNull(a) ? NULL : a;
}

int mcp_call_arg_string(const mcp_call *call, const char *name,
                        const char **out) {
  const cJSON *a = arg(call, name);
  if (a == NULL)
    return MCP_ENOENT;
  if (!cJSON_IsString(a))
    return MCP_ETYPE;
  *out = a->valuestring;
  return 0;
}

int mcp_call_arg_int(const mcp_call *call, const char *name, int64_t *out) {
  const cJSON *a = arg(call, name);
  if (a == NULL)
    return MCP_ENOENT;
  long long v;
  int overflow = 0;
  if (!cJSON_IsNumber(a) || !mcp__json_integer(a, &v, &overflow))
    return MCP_ETYPE;
  if (overflow)
    return MCP_ERANGE;
  *out = (int64_t)v;
  return 0;
}

int mcp_call_arg_number(const mcp_call *call, const char *name, double *out) {
  const cJSON *a = arg(call, name);
  if (a == NULL)
    return MCP_ENOENT;
  if (!cJSON_IsNumber(a))
    return MCP_ETYPE;
  if (!isfinite(a->valuedouble))
    return MCP_ERANGE;
  *out = a->valuedouble;
  return 0;
}

int mcp_call_arg_bool(const mcp_call *call, const char *name, bool *out) {
  const cJSON *a = arg(call, name);
  if (a == NULL)
    return MCP_ENOENT;
  if (!cJSON_IsBool(a))
    return MCP_ETYPE;
  *out = cJSON_IsTrue(a);
  return 0;
}

bool mcp_call_cancelled(const mcp_call *call) {
  return atomic_load(&((mcp_call *)call)->cancelled) || mcp__call_late(call);
}

void mcp_call_log(mcp_call *call, mcp_log_level level, const char *message) {
  const char *text =
      message && mcp__utf8_valid(message, strlen(message)) ? message : "";
  mcp__log(call->home->srv, level, "%s \"%s\": %s", mcp__call_noun(call),
           call->tool->name, text);
  /* The modern era sends log messages only to a request that asked for
   * them, at its level or above, on that request's own stream. */
  static const char *const names[] = {"debug", "info", "notice", "warning",
                                      "error"};
  if (call->log_level < 0 || (int)level < call->log_level ||
      (unsigned)level >= sizeof names / sizeof *names ||
      mcp_call_cancelled(call))
    return;
  mcp__buf b = {0};
  mcp__buf_printf(&b, "\"level\":\"%s\",\"logger\":", names[level]);
  mcp__json_quote(&b, call->tool->name, strlen(call->tool->name));
  mcp__buf_puts(&b, ",\"data\":");
  mcp__json_quote(&b, text, strlen(text));
  if (b.err == 0)
    mcp__call_notify(call, "notifications/message", &b);
  mcp__buf_free(&b);
}

int mcp_call_progress(mcp_call *call, double progress, double total,
                      const char *message) {
  if (call == NULL || !isfinite(progress) || !isfinite(total) ||
      (message && !mcp__utf8_valid(message, strlen(message))))
    return MCP_EINVAL;
  if (call->progress_token == NULL || mcp_call_cancelled(call))
    return 0;
  if (call->progressed && progress <= call->last_progress)
    return MCP_EINVAL; /* the spec requires progress to grow every time */
  mcp__buf b = {0};
  mcp__buf_printf(&b, "\"progressToken\":%s,\"progress\":%.17g",
                  call->progress_token, progress);
  if (total > 0)
    mcp__buf_printf(&b, ",\"total\":%.17g", total);
  if (message && call->version >= MCP__V2025_03_26) {
    mcp__buf_puts(&b, ",\"message\":");
    mcp__json_quote(&b, message, strlen(message));
  }
  int rc = b.err ? b.err : mcp__call_notify(call, "notifications/progress", &b);
  if (rc == 0) {
    call->progressed = true;
    call->last_progress = progress;
  }
  mcp__buf_free(&b);
  return rc;
}

/* ---- result builder ------------------------------------------------------ */

/* "key":"val" with val escaped; key is one of ours and needs none. */
static void put_str(mcp__buf *b, const char *key, const char *val) {
  mcp__buf_putc(b, '"');
  mcp__buf_puts(b, key);
  mcp__buf_puts(b, "\":");
  mcp__json_quote(b, val, strlen(val));
}

/* The reply to a call that succeeded, up to its first block: the
 * envelope, the result's common members and the opening of its list. */
static void reply_head(const mcp_call *c, mcp__buf *b) {
  mcp__buf_puts(b, "{\"jsonrpc\":\"2.0\",\"id\":");
  mcp__buf_append(b, c->id, c->id_len);
  mcp__buf_puts(b, ",\"result\":");
  /* A label that cannot be written fails the reply: it is never dropped. */
  mcp__buf trust = {0};
  if (c->kind == MCP_CALL_TOOL)
    mcp__trust_result_put(c, &trust);
  if (trust.err && !b->err)
    b->err = trust.err;
  mcp__result_begin_meta(b, c->home->srv, c->modern, "complete",
                         trust.len ? mcp__buf_str(&trust) : NULL);
  mcp__buf_free(&trust);
  if (c->kind == MCP_CALL_PROMPT) {
    if (c->description) {
      put_str(b, "description", c->description);
      mcp__buf_putc(b, ',');
    }
    mcp__buf_puts(b, "\"messages\":[");
  } else {
    mcp__buf_puts(b, c->kind == MCP_CALL_RESOURCE ? "\"contents\":["
                                                  : "\"content\":[");
  }
}

/* Opens a content block: "{" after a separating comma; for a prompt, the
 * message around it. Returns nonzero when a failure is latched. The first
 * block of a tool or a resource comes after the reply's head, so that a
 * success is sent from this buffer without another copy (a prompt's head
 * holds a description the handler may set after its messages). */
static int begin_block(mcp_call *c) {
  if (c->latched)
    return c->latched;
  if (c->content.len > c->head_len) {
    mcp__buf_putc(&c->content, ',');
  } else if (c->content.len == 0 && c->kind != MCP_CALL_PROMPT) {
    reply_head(c, &c->content);
    c->head_len = c->content.len;
  }
  if (c->kind == MCP_CALL_PROMPT)
    mcp__buf_printf(&c->content, "{\"role\":\"%s\",\"content\":{",
                    c->role == MCP_ROLE_ASSISTANT ? "assistant" : "user");
  else
    mcp__buf_putc(&c->content, '{');
  /* A failed write is latched here too, so the builder reports it. */
  if (c->content.err)
    c->latched = c->content.err;
  return c->latched;
}

static int end_block(mcp_call *c) {
  if (c->kind == MCP_CALL_PROMPT)
    mcp__buf_putc(&c->content, '}');
  mcp__trust_block_end(c, &c->content);
  mcp__buf_putc(&c->content, '}');
  if (c->content.err && !c->latched)
    c->latched = c->content.err;
  /* Escapes and the members around the text count too. */
  return c->latched ? c->latched : mcp__call_room(c, 0);
}

static int latch(mcp_call *c, int rc) {
  if (!c->latched)
    c->latched = rc;
  return c->latched;
}

void mcp__call_refused(const mcp_call *c, const char *function,
                       const char *why) {
  mcp__log(c->home->srv, MCP_LOG_ERROR, "%s \"%s\": %s refused: %s",
           mcp__call_noun(c), c->tool->name, function, why);
}

/* A builder that refuses latches its code and, the first time, says in the
 * log which builder refused, why and for which tool: "invalid argument"
 * alone teaches nothing. */
static int refuse(mcp_call *c, int rc, const char *builder, const char *why) {
  if (!c->latched && rc != MCP_ENOMEM)
    mcp__call_refused(c, builder, why);
  return latch(c, rc);
}

/* Why text was refused: NULL, or not UTF-8. */
static const char *bad_text(const char *what_text, const char *h, char *buf,
                            size_t size) {
  mcp__fmt(buf, size, "%s is %s", what_text,
           h == NULL ? "NULL" : "not valid UTF-8");
  return buf;
}

static int valid_text(const char *h) {
  return h && mcp__utf8_valid(h, strlen(h));
}

/* A ReadResourceResult item for the URI asked for, in the resource's
 * mime type (or mime): the members before "text" or "blob", the resource's
 * _meta among them, as mcp_result_resource_text gives it for that URI (MCP
 * Apps hosts look for a view's ui.csp there first). */
static void contents_head(mcp_call *c, const char *mime) {
  put_str(&c->content, "uri", c->uri);
  mime = mime ? mime : c->tool->mime_type;
  if (mime) {
    mcp__buf_putc(&c->content, ',');
    put_str(&c->content, "mimeType", mime);
  }
  mcp__put_extras(&c->content, NULL, c->tool->meta, c->version);
  mcp__buf_putc(&c->content, ',');
}

int mcp_result_text(mcp_call *call, const char *text) {
  if (!valid_text(text)) {
    char why[64];
    return refuse(call, MCP_EINVAL, "mcp_result_text",
                  bad_text("the text", text, why, sizeof why));
  }
  if (mcp__call_room_text(call, text) || begin_block(call))
    return call->latched;
  if (call->kind == MCP_CALL_RESOURCE)
    contents_head(call, NULL);
  else
    mcp__buf_puts(&call->content, "\"type\":\"text\",");
  put_str(&call->content, "text", text);
  return end_block(call);
}

/* The checks of a binary block's input; NULL when it is acceptable. */
static const char *bad_binary(const void *data, size_t size, const char *mime,
                              char *buf, size_t n) {
  if (data == NULL && size)
    return "data is NULL while size is not 0";
  if (!valid_text(mime))
    return bad_text("the mime_type (required)", mime, buf, n);
  return NULL;
}

static int binary(mcp_call *c, const char *type, const void *data, size_t size,
                  const char *mime) {
  char buf[64];
  const char *why = bad_binary(data, size, mime, buf, sizeof buf);
  if (why)
    return refuse(c, MCP_EINVAL,
                  strcmp(type, "image") == 0 ? "mcp_result_image"
                                             : "mcp_result_audio",
                  why);
  /* The base64 text is 4 bytes for every 3, checked before it is made. */
  if (mcp__call_room(c, size / 3 * 4 + 4) || begin_block(c))
    return c->latched;
  if (c->kind == MCP_CALL_RESOURCE) {
    contents_head(c, mime);
    mcp__buf_puts(&c->content, "\"blob\":\"");
    mcp__base64(&c->content, data, size);
    mcp__buf_putc(&c->content, '"');
    return end_block(c);
  }
  mcp__buf_printf(&c->content, "\"type\":\"%s\",\"data\":\"", type);
  mcp__base64(&c->content, data, size);
  mcp__buf_puts(&c->content, "\",");
  put_str(&c->content, "mimeType", mime);
  return end_block(c);
}

int mcp_result_image(mcp_call *call, const void *data, size_t size,
                     const char *mime_type) {
  return binary(call, "image", data, size, mime_type);
}

int mcp_result_audio(mcp_call *call, const void *data, size_t size,
                     const char *mime_type) {
  if (call->version < MCP__V2025_03_26 && call->kind != MCP_CALL_RESOURCE) {
    /* Audio content arrived in 2025-03-26; tell older clients what they
     * are missing rather than send a block their schema rejects. */
    char buf[64];
    const char *why = bad_binary(data, size, mime_type, buf, sizeof buf);
    if (why)
      return refuse(call, MCP_EINVAL, "mcp_result_audio", why);
    char mime[65];
    mcp__fmt(mime, sizeof mime, "%s", mime_type);
    /* Do not let the cut split a UTF-8 sequence of a valid mime type. */
    mcp__utf8_trim(mime);
    char note[160];
    mcp__fmt(note, sizeof note, "[audio omitted: %s, %zu bytes]", mime, size);
    return mcp_result_text(call, note);
  }
  return binary(call, "audio", data, size, mime_type);
}

int mcp_result_resource_link(mcp_call *call, const char *uri, const char *name,
                             const char *mime_type, const char *description) {
  char buf[64];
  const char *why =
      call->kind == MCP_CALL_RESOURCE
          ? "a resource's contents cannot hold a link (use "
            "mcp_result_resource_text)"
      : !valid_text(uri)  ? bad_text("the uri", uri, buf, sizeof buf)
      : !valid_text(name) ? bad_text("the name", name, buf, sizeof buf)
      : mime_type && !valid_text(mime_type) ? "the mime_type is not valid UTF-8"
      : description && !valid_text(description)
          ? "the description is not valid UTF-8"
          : NULL;
  if (why)
    return refuse(call, MCP_EINVAL, "mcp_result_resource_link", why);
  if (call->version < MCP__V2025_06_18) {
    /* resource_link arrived in 2025-06-18; older clients get the same
     * facts as text. */
    mcp__buf t = {0};
    mcp__buf_printf(&t, "%s: %s", name, uri);
    const char *s = mcp__buf_str(&t);
    int rc = s ? mcp_result_text(call, s) : latch(call, MCP_ENOMEM);
    mcp__buf_free(&t);
    return rc;
  }
  if (begin_block(call))
    return call->latched;
  mcp__buf *b = &call->content;
  mcp__buf_puts(b, "\"type\":\"resource_link\",");
  put_str(b, "uri", uri);
  mcp__buf_putc(b, ',');
  put_str(b, "name", name);
  if (mime_type) {
    mcp__buf_putc(b, ',');
    put_str(b, "mimeType", mime_type);
  }
  if (description) {
    mcp__buf_putc(b, ',');
    put_str(b, "description", description);
  }
  return end_block(call);
}

static int resource(mcp_call *c, const char *builder, const char *uri,
                    const char *mime, const char *text, const void *data,
                    size_t size) {
  char buf[64];
  const char *why = !valid_text(uri) ? bad_text("the uri", uri, buf, sizeof buf)
                    : mime && !valid_text(mime)
                        ? "the mime_type is not valid UTF-8"
                    : text && !valid_text(text) ? "the text is not valid UTF-8"
                    : data == NULL && text == NULL && size
                        ? "data is NULL while size is not 0"
                        : NULL;
  if (why)
    return refuse(c, MCP_EINVAL, builder, why);
  if ((text ? mcp__call_room_text(c, text)
            : mcp__call_room(c, size / 3 * 4 + 4)) ||
      begin_block(c))
    return c->latched;
  mcp__buf *b = &c->content;
  bool item = c->kind == MCP_CALL_RESOURCE; /* a contents item, unwrapped */
  if (!item)
    mcp__buf_puts(b, "\"type\":\"resource\",\"resource\":{");
  put_str(b, "uri", uri);
  if (mime) {
    mcp__buf_putc(b, ',');
    put_str(b, "mimeType", mime);
  }
  mcp__buf_putc(b, ',');
  if (text) {
    put_str(b, "text", text);
  } else {
    mcp__buf_puts(b, "\"blob\":\"");
    mcp__base64(b, data, size);
    mcp__buf_putc(b, '"');
  }
  /* The contents of the URI read carry the resource's _meta, as its
   * listing does (MCP Apps puts a view's ui.csp there). */
  if (item && c->uri && strcmp(uri, c->uri) == 0)
    mcp__put_extras(b, NULL, c->tool->meta, c->version);
  if (!item)
    mcp__buf_putc(b, '}');
  return end_block(c);
}

int mcp_result_resource_text(mcp_call *call, const char *uri,
                             const char *mime_type, const char *text) {
  if (text == NULL)
    return refuse(call, MCP_EINVAL, "mcp_result_resource_text",
                  "the text is NULL");
  return resource(call, "mcp_result_resource_text", uri, mime_type, text, NULL,
                  0);
}

int mcp_result_resource_blob(mcp_call *call, const char *uri,
                             const char *mime_type, const void *data,
                             size_t size) {
  if (data == NULL && size)
    return refuse(call, MCP_EINVAL, "mcp_result_resource_blob",
                  "data is NULL while size is not 0");
  return resource(call, "mcp_result_resource_blob", uri, mime_type, NULL,
                  data ? data : "", size);
}

int mcp_result_structured_cjson(mcp_call *call, const cJSON *value) {
  if (call->latched)
    return call->latched;
  if (call->has_structured)
    return refuse(call, MCP_ESTATE, "mcp_result_structured",
                  "structured content was set already (once per call)");
  if (call->kind != MCP_CALL_TOOL)
    return refuse(call, MCP_EINVAL, "mcp_result_structured",
                  "only a tool's result has structured content");
  if (!cJSON_IsObject(value))
    return refuse(call, MCP_EINVAL, "mcp_result_structured",
                  "the value is not a JSON object");
  mcp_server *srv = call->home->srv;
  if (call->tool->output && atomic_load(&srv->check_output)) {
    /* The author promised this shape in outputSchema; a result that breaks
     * the promise is the server's bug, reported to the author in the log
     * and to the client only as an internal error. */
    char why[512];
    int rc = mcp__schema_validate(call->tool->output, value,
                                  "structuredContent does not match "
                                  "outputSchema",
                                  why, sizeof why);
    if (rc) {
      mcp__log(srv, MCP_LOG_ERROR, "tool \"%s\": %s", call->tool->name, why);
      return latch(call, rc == MCP_ENOMEM ? MCP_ENOMEM : MCP_EINTERNAL);
    }
  }
  mcp__json_write(&call->structured, value);
  if (mcp__call_room(call, 0))
    return call->latched;
  const char *json = mcp__buf_str(&call->structured);
  if (json == NULL)
    return latch(call, MCP_ENOMEM);
  call->has_structured = true;
  /* The same JSON as text: the mirror clients without structuredContent
   * (and models reading only text) rely on. */
  return mcp_result_text(call, json);
}

int mcp_result_structured(mcp_call *call, const char *json) {
  if (call->latched)
    return call->latched;
  if (json == NULL)
    return refuse(call, MCP_EINVAL, "mcp_result_structured",
                  "the JSON text is NULL");
  /* Its compact form is no longer than the text: refuse before parsing. */
  if (mcp__call_room(call, strlen(json)))
    return call->latched;
  mcp__json_doc doc = {0};
  char why[200];
  int rc = mcp__json_parse(json, strlen(json), NULL, &doc, why, sizeof why);
  if (rc) {
    char msg[240];
    mcp__fmt(msg, sizeof msg, "the text is not strict JSON: %s", why);
    return refuse(call, rc == MCP_ENOMEM ? MCP_ENOMEM : MCP_EINVAL,
                  "mcp_result_structured", msg);
  }
  rc = mcp_result_structured_cjson(call, doc.root);
  mcp__json_doc_free(&doc);
  return rc;
}

int mcp_result_error(mcp_call *call, const char *text) {
  if (call->kind != MCP_CALL_TOOL) {
    /* Prompts and resources have no error result: the request fails with
     * this text. */
    if (call->latched)
      return call->latched;
    if (!valid_text(text)) {
      char why[64];
      return refuse(call, MCP_EINVAL, "mcp_result_error",
                    bad_text("the text", text, why, sizeof why));
    }
    mcp__free(call->error_text);
    if ((call->error_text = mcp__strdup(text)) == NULL)
      return latch(call, MCP_ENOMEM);
    call->is_error = true;
    return 0;
  }
  if (!valid_text(text)) {
    char why[64];
    return refuse(call, MCP_EINVAL, "mcp_result_error",
                  bad_text("the text", text, why, sizeof why));
  }
  int rc = mcp_result_text(call, text);
  if (rc == 0)
    call->is_error = true;
  return rc;
}

int mcp_result_role(mcp_call *call, mcp_role role) {
  if (call->kind != MCP_CALL_PROMPT)
    return refuse(call, MCP_EINVAL, "mcp_result_role",
                  "only a prompt's messages have roles");
  if (role != MCP_ROLE_USER && role != MCP_ROLE_ASSISTANT)
    return refuse(call, MCP_EINVAL, "mcp_result_role",
                  "the role is neither MCP_ROLE_USER nor MCP_ROLE_ASSISTANT");
  call->role = role;
  return call->latched;
}

int mcp_result_description(mcp_call *call, const char *text) {
  if (call->kind != MCP_CALL_PROMPT)
    return refuse(call, MCP_EINVAL, "mcp_result_description",
                  "only a prompt's result has a description");
  if (!valid_text(text)) {
    char why[64];
    return refuse(call, MCP_EINVAL, "mcp_result_description",
                  bad_text("the text", text, why, sizeof why));
  }
  if (call->latched)
    return call->latched;
  mcp__free(call->description);
  if ((call->description = mcp__strdup(text)) == NULL)
    return latch(call, MCP_ENOMEM);
  return 0;
}

/* ---- finishing ----------------------------------------------------------- */

/* A legacy call may go round this many times asking for input. */
#define MAX_ROUNDS 16

/* The reply to a call the client cannot serve because it lacks a
 * capability: the modern era has an error for it (-32021); in the legacy
 * era the tool result says so, for the model to pass on. */
static void missing_capability(mcp_call *c, mcp__buf *out) {
  static const struct {
    unsigned bit;
    const char *json, *name;
  } caps[] = {
      {MCP__CAP_SAMPLING, "\"sampling\":{}", "sampling"},
      {MCP__CAP_SAMPLING_TOOLS, "\"sampling\":{\"tools\":{}}",
       "tool use in sampling"},
      {MCP__CAP_ROOTS, "\"roots\":{}", "roots"},
  };
  mcp__buf list = {0}, data = {0};
  mcp__buf_puts(&data, "{\"requiredCapabilities\":{");
  bool first = true;
  bool form = c->missing_caps & MCP__CAP_ELICITATION;
  bool url = c->missing_caps & MCP__CAP_ELICITATION_URL;
  if (form || url) {
    /* An empty elicitation object declares form mode only; a client that
     * declared some elicitation, or must add URL mode too, needs "form"
     * spelled out. */
    bool declared = cJSON_IsObject(mcp__json_member(c->caps, "elicitation"));
    mcp__buf_printf(&data, "\"elicitation\":{%s%s%s}",
                    form && (url || declared) ? "\"form\":{}" : "",
                    form && url ? "," : "", url ? "\"url\":{}" : "");
    mcp__buf_puts(&list, form && url ? "form and URL elicitation"
                         : url       ? "URL elicitation"
                                     : "elicitation");
    first = false;
  }
  for (size_t i = 0; i < sizeof caps / sizeof *caps; i++) {
    /* "sampling":{"tools":{}} already asks for sampling itself. */
    if (!(c->missing_caps & caps[i].bit) ||
        (caps[i].bit == MCP__CAP_SAMPLING &&
         (c->missing_caps & MCP__CAP_SAMPLING_TOOLS)))
      continue;
    mcp__buf_printf(&data, "%s%s", first ? "" : ",", caps[i].json);
    mcp__buf_printf(&list, "%s%s", first ? "" : ", ", caps[i].name);
    first = false;
  }
  mcp__buf_puts(&data, "}}");
  const char *names = mcp__buf_str(&list);
  if (c->modern) {
    const char *json = mcp__buf_str(&data);
    if (json && names) {
      char msg[160];
      mcp__fmt(msg, sizeof msg, "Missing required client capability: %s",
               names);
      call_error(c, out, MCP__RPC_MISSING_CAPABILITY, msg, json);
    } else {
      out->err = MCP_ENOMEM;
    }
  } else if (names && c->kind != MCP_CALL_TOOL) {
    char msg[200];
    mcp__fmt(msg, sizeof msg,
             "This %s needs the client to support %s, which it did not "
             "declare",
             mcp__call_noun(c), names);
    call_error(c, out, MCP__RPC_INVALID_PARAMS, msg, NULL);
  } else if (names) {
    char msg[200];
    mcp__fmt(msg, sizeof msg,
             "This tool needs the client to support %s, which it did not "
             "declare.",
             names);
    mcp__buf_puts(out, "{\"jsonrpc\":\"2.0\",\"id\":");
    mcp__buf_append(out, c->id, c->id_len);
    mcp__buf_puts(out,
                  ",\"result\":{\"content\":[{\"type\":\"text\",\"text\":");
    mcp__json_quote(out, msg, strlen(msg));
    mcp__buf_puts(out, "}],\"isError\":true}}");
    c->reply_is_error = true;
  } else {
    out->err = MCP_ENOMEM;
  }
  mcp__buf_free(&list);
  mcp__buf_free(&data);
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

/* The reply of a call that succeeded: its blocks, and the members that
 * close its result. */
static void success_reply(mcp_call *c, mcp__buf *out) {
  mcp_server *srv = c->home->srv;
  if (c->head_len && out->data == NULL && out->err == 0) {
    /* The blocks follow the head already: their buffer is the reply. */
    *out = c->content;
    c->content = (mcp__buf){0};
    c->head_len = 0;
  } else {
    reply_head(c, out);
    if (c->content.len > c->head_len)
      mcp__buf_append(out, c->content.data + c->head_len,
                      c->content.len - c->head_len);
  }
  mcp__buf_puts(out, "],");
  if (c->kind == MCP_CALL_RESOURCE && c->modern)
    mcp__put_cache(out, srv, c->tool->nscopes > 0);
  if (c->has_structured && c->version >= MCP__V2025_06_18) {
    mcp__buf_puts(out, "\"structuredContent\":");
    mcp__buf_append(out, c->structured.data, c->structured.len);
    mcp__buf_putc(out, ',');
  }
  if (c->is_error)
    mcp__buf_puts(out, "\"isError\":true,");
  c->reply_is_error = c->is_error;
  mcp__result_end(out);
  mcp__buf_putc(out, '}');
}

static void build_reply(mcp_call *c, int rc, mcp__buf *out) {
  mcp_server *srv = c->home->srv;
  /* A result buffer that failed is never sent as a (truncated) success,
   * whatever the handler made of its builders' return values. */
  if (!c->latched && (c->content.err || c->structured.err))
    c->latched = c->content.err ? c->content.err : c->structured.err;
  /* Whatever the handler returned after a builder said MCP_ELIMIT, the
   * reason the client must hear is the size. */
  if (c->refusal) { /* refused before its handler ran (the rate wait) */
    tool_error(c, out, c->refusal);
    return;
  }
  if (c->stepup) { /* whatever the handler built or returned */
    stepup_refusal(c, out);
    return;
  }
  if (c->too_large) {
    mcp__call_too_large(c, out);
    return;
  }
  if (rc < 0 && c->missing_caps && !c->latched) {
    missing_capability(c, out);
    return;
  }
  if (rc == MCP_INPUT_REQUIRED && !c->latched) {
    if (mcp__input_result(c, out) == MCP_EINVAL) {
      mcp__buf_free(out);
      mcp__log(srv, MCP_LOG_ERROR,
               "%s \"%s\" returned MCP_INPUT_REQUIRED without asking for "
               "input or keeping state",
               mcp__call_noun(c), c->tool->name);
      rc = MCP_EINVAL;
    } else {
      return;
    }
  }
  if (rc == MCP_ENOENT && c->kind == MCP_CALL_RESOURCE && !c->latched) {
    c->error_code =
        mcp__rpc_resource_not_found(out, c->id, c->id_len, c->modern, c->uri);
    return;
  }
  if (rc == 0 && c->is_error && c->kind != MCP_CALL_TOOL && !c->latched) {
    char msg[512];
    mcp__fmt(msg, sizeof msg, "%s", c->error_text);
    mcp__utf8_trim(msg);
    call_error(c, out, MCP__RPC_INVALID_PARAMS, msg, NULL);
    return;
  }
  if (rc == 0 && !c->latched && c->kind == MCP_CALL_TOOL && !c->is_error &&
      c->tool->output && !c->has_structured &&
      atomic_load(&srv->check_output)) {
    /* The outputSchema promises structured content in every successful
     * result (a tool error needs none); without it a client's SDK rejects
     * the result, so it is the server's failure, not the model's. */
    mcp__log(srv, MCP_LOG_ERROR,
             "tool \"%s\": declares an outputSchema but returned no "
             "structuredContent (build it with mcp_result_structured, or "
             "report a failure with mcp_result_error)",
             c->tool->name);
    c->latched = MCP_EINTERNAL;
    call_error(c, out, MCP__RPC_INTERNAL_ERROR, "Internal error", NULL);
    return;
  }
  if (rc < 0 || c->latched) {
    /* The detail is for the author (the log), never for the client. */
    mcp__log(srv, MCP_LOG_ERROR, "%s \"%s\" failed: %s", mcp__call_noun(c),
             c->tool->name, mcp_strerror(rc < 0 ? rc : c->latched));
    call_error(c, out, MCP__RPC_INTERNAL_ERROR, "Internal error", NULL);
    return;
  }
  success_reply(c, out);
}

/* Legacy era: asks the client for the round's input and parks the call.
 * Returns true when the call is parked (nothing more to do now). */
static bool park_for_input(mcp_call *c) {
  mcp__home *h = c->home;
  pthread_mutex_lock(&h->lock);
  bool parked = false;
  if (!h->closed && !mcp_call_cancelled(c))
    parked = mcp__input_send_locked(c) == 0;
  pthread_mutex_unlock(&h->lock);
  return parked;
}

/* A round that returned MCP_INPUT_REQUIRED, kept while the client answers
 * (the legacy era, and tasks of both eras; task: the call is its owner's):
 * returns true when the call went on (its next round ran, or it is parked
 * for the answers); false with *rc the failure to complete it with. */
static bool ask_for_input(mcp_call *c, bool task, int *rc, mcp__buf *out,
                          mcp_send_info *facts) {
  if (c->requests == NULL && c->next_state != NULL && c->rounds < MAX_ROUNDS) {
    /* State but nothing to ask: the next round can start at once, with no
     * answers, as a modern retry of that round would. */
    cJSON_Delete(c->inputs);
    c->inputs = NULL;
    mcp__call_run(c, out, facts);
    return true;
  }
  if (c->requests != NULL && c->rounds < MAX_ROUNDS &&
      (task ? c->owner->asks(c->owner_data, c) == 0 : park_for_input(c)))
    return true;
  if (c->rounds >= MAX_ROUNDS)
    mcp__log(c->home->srv, MCP_LOG_ERROR,
             "%s \"%s\" asked for input %d times; giving up", mcp__call_noun(c),
             c->tool->name, MAX_ROUNDS);
  *rc = c->requests ? MCP_EIO : MCP_EINVAL;
  return false;
}

/* The lines mcp_call_report_effect added to c, oldest first,
 * NULL-terminated; NULL for none (or no memory: the record then has none). */
static const char **effect_lines(mcp_call *c) {
  pthread_mutex_lock(&c->effects_lock);
  struct mcp__effect_line *e = c->effects;
  size_t n = 0;
  for (struct mcp__effect_line *i = e; i; i = i->next)
    n++;
  const char **out = n ? mcp__calloc(n + 1, sizeof *out) : NULL;
  /* Newest first: filled from the end. The lines stay until the call is
   * freed; one added after this is in no record. */
  for (size_t k = 0; out && e; e = e->next, k++)
    out[n - 1 - k] = e->text;
  pthread_mutex_unlock(&c->effects_lock);
  return out;
}

/* Audits a tool call's end (late: its deadline passed; cancelled: nobody
 * is answered) and returns the decision its reply's facts carry. */
static mcp_decision audit_end(mcp_call *c, int rc, bool late, bool cancelled) {
  mcp__home *h = c->home;
  /* A missing client capability is the client's limit, not our failure:
   * the legacy era reports it as a tool error. */
  bool capability = rc < 0 && c->missing_caps && !c->latched && !late;
  bool failed = !cancelled && !capability && !late && !c->too_large &&
                (rc < 0 || c->latched);
  bool refused = c->stepup && !late && !cancelled;
  bool before = c->refusal && !late && !cancelled; /* the rate wait's */
  mcp_decision decision = late        ? MCP_DECISION_TIMEOUT
                          : cancelled ? MCP_DECISION_CANCELLED
                          : before    ? (mcp_decision)c->refusal_decision
                          : refused   ? MCP_DECISION_DENIED_SCOPE
                                      : MCP_DECISION_ALLOWED;
  if (refused)
    failed = false;
  if (before)
    failed = c->refusal_failed;
  mcp__hints ran = hints_of(c);
  if (c->kind == MCP_CALL_TOOL) {
    const char **effects = effect_lines(c);
    mcp__audit(h->srv, c->tool->name, &h->principal, decision,
               refused ? (const char *const *)c->stepup->d.missing : NULL,
               before || (!refused &&
                          (late || c->is_error || (capability && !c->modern))),
               failed, c->started_us, c->ran_under[0] ? c->ran_under : NULL,
               &ran, effects);
    mcp__free(effects);
  }
  return decision;
}

/* Hands reply to out (the caller's buffer), taking its buffer when out is
 * empty. */
static void give_reply(mcp__buf *out, mcp__buf *reply) {
  if (reply->err) {
    out->err = out->err ? out->err : reply->err;
  } else if (out->data == NULL && out->err == 0) {
    *out = *reply;
    *reply = (mcp__buf){0};
  } else {
    mcp__buf_append(out, reply->data, reply->len);
  }
}

void mcp__call_complete(mcp_call *c, int rc, mcp__buf *out,
                        mcp_send_info *facts) {
  mcp__home *h = c->home;
  bool cancelled = mcp_call_cancelled(c);
  /* A task's result is the task's, kept for tasks/get, never the reply of
   * the request that started it: its owner receives it. */
  bool task = c->owner && c->owner->published(c->owner_data);
  if (task) {
    out = NULL;
    facts = NULL;
  }
  /* A modern call answers with an InputRequiredResult instead. */
  if (rc == MCP_INPUT_REQUIRED && !cancelled && (!c->modern || task) &&
      !c->latched && !c->stepup) {
    if (ask_for_input(c, task, &rc, out, facts))
      return;
    cancelled = mcp_call_cancelled(c);
  }
  mcp__buf reply = {0};
  /* Past its deadline, a call its client did not cancel is owed the
   * timeout answer instead of its result, unless mcp_server_expire gave
   * that already (and then marked it cancelled). */
  bool timeout = cancelled && !atomic_load(&c->cancelled);
  bool late = timeout || c->timed_out;
  if (timeout) {
    cancelled = false;
    timeout_answer(c, &reply);
  } else if (!cancelled) {
    build_reply(c, rc, &reply);
  }
  mcp_decision decision = audit_end(c, rc, late, cancelled);
  if (reply.err) {
    mcp__log(h->srv, MCP_LOG_ERROR,
             "%s \"%s\": out of memory building the reply", mcp__call_noun(c),
             c->tool->name);
    /* The request is still owed an answer, and a deferred call has nobody
     * to return an error to: send the short internal error instead. */
    mcp__buf_free(&reply);
    call_error(c, &reply, MCP__RPC_INTERNAL_ERROR, "Internal error", NULL);
  }
  mcp_send_info said = reply_facts(c, decision);
  if (out != NULL && !cancelled) {
    if (facts)
      *facts = said;
    give_reply(out, &reply);
  }
  pthread_mutex_lock(&h->lock);
  keep_stepup_locked(c, out != NULL && !cancelled ? facts : NULL);
  if (task && !cancelled && !reply.err && !h->freed) {
    /* The owner receives the outcome as facts. */
    mcp__outcome o = outcome_of(c, &reply);
    c->owner->settled_locked(c->owner_data, &o);
  } else if (out == NULL && !cancelled && !reply.err) {
    mcp__home_send_locked(h, c->sink, reply.data, reply.len, &said);
  }
  mcp__buf_free(&reply);
  mcp__call_discard_locked(c);
}

/* Unlinks and frees a call; releases h->lock through the home's unref. */
void mcp__call_discard_locked(mcp_call *c) {
  mcp__home *h = c->home;
  mcp__sink *sink = c->sink;
  const mcp__call_owner *owner = c->owner;
  void *owner_data = c->owner_data;
  mcp__list_remove(&c->link);
  h->ncalls--;
  mcp__tool_unref(c->tool);
  mcp__call_free(c);
  mcp__home_unref_locked(h);
  /* After the lock is gone: done may call back into the transport, and a
   * owner hears that its call ended. */
  mcp__sink_release(sink);
  if (owner)
    owner->released(owner_data);
}

void mcp__call_discard(mcp_call *c) {
  pthread_mutex_lock(&c->home->lock);
  mcp__call_discard_locked(c);
}

/* Forgets what the previous round built: a round that asked for input
 * produced no result, and the next one starts clean. */
static void reset_round(mcp_call *c) {
  mcp__call_clear_result(c);
  mcp__free(c->description);
  c->description = NULL;
  mcp__free(c->error_text);
  c->error_text = NULL;
  c->role = MCP_ROLE_USER;
  c->has_structured = false;
  c->is_error = false;
  c->latched = 0;
  c->missing_caps = 0;
  c->error_code = 0;
  c->reply_is_error = false;
  cJSON_Delete(c->requests);
  c->requests = NULL;
  /* mcp_call_state is what the previous round kept, as in the modern era,
   * where only that travels in the requestState: NULL if it kept nothing. */
  mcp__free(c->state);
  c->state = c->next_state;
  c->next_state = NULL;
}

/* Runs the handler of c's round on this thread and completes the call,
 * unless the handler deferred it. */
static void invoke(mcp_call *c, mcp__buf *out, mcp_send_info *facts) {
  mcp__home *h = c->home;
  int rc = c->tool->handler(c, c->tool->user_data);
  if (rc == MCP_DEFERRED) {
    /* The handler may have handed the call to another thread that already
     * finished it; whichever side comes second completes the call. */
    pthread_mutex_lock(&h->lock);
    if (c->phase == MCP__CALL_FINISH_EARLY) {
      pthread_mutex_unlock(&h->lock);
      mcp__call_complete(c, c->finish_rc, out, facts);
    } else {
      /* A call that may become a task becomes one when it waits on
       * another thread: that is what a task is for. */
      if (c->owner)
        become_task_locked(c);
      set_phase_locked(c, MCP__CALL_DEFERRED);
      pthread_mutex_unlock(&h->lock);
    }
    return;
  }
  if (rc > 0 && rc != MCP_INPUT_REQUIRED)
    rc = MCP_EINVAL; /* not a valid handler return; treat as a failure */
  mcp__call_complete(c, rc, out, facts);
}

/* Hands c's round to the server's executor, if it has one that takes it.
 * Returns true when c is no longer this thread's (taken, or completed
 * because the executor failed it); false to run it here. The call waits
 * QUEUED meanwhile, its deadline watched, so a backlog in the executor is
 * answered "timeout" like any other wait. */
static bool hand_over(mcp_call *c, mcp__buf *out, mcp_send_info *facts) {
  mcp_server *srv = c->home->srv;
  if (!atomic_load_explicit(&srv->has_executor, memory_order_acquire))
    return false;
  mcp__home *h = c->home;
  pthread_mutex_lock(&h->lock);
  /* Run elsewhere, a call that may become a task is one: its answer no
   * longer comes back to this thread. */
  if (c->owner)
    become_task_locked(c);
  set_phase_locked(c, MCP__CALL_QUEUED);
  atomic_fetch_add(&h->executing, 1);
  pthread_mutex_unlock(&h->lock);
  int rc = srv->executor.submit(c, srv->executor.user_data);
  if (rc == 0)
    return true; /* c may be finished and freed already */
  pthread_mutex_lock(&h->lock);
  set_phase_locked(c, MCP__CALL_RUNNING);
  atomic_fetch_sub(&h->executing, 1);
  pthread_mutex_unlock(&h->lock);
  if (rc == MCP_EXECUTE_HERE) {
    /* Cancelled or late while submit decided: never run, as if queued. */
    if (!mcp_call_cancelled(c))
      return false;
    mcp__call_complete(c, MCP_ECANCELED, out, facts);
    return true;
  }
  mcp__log(srv, MCP_LOG_ERROR, "%s \"%s\": the executor refused it: %s",
           mcp__call_noun(c), c->tool->name, mcp_strerror(rc));
  mcp__call_complete(c, rc < 0 ? rc : MCP_EINTERNAL, out, facts);
  return true;
}

/* ---- the rate wait ---------------------------------------------------------
 * With a store (mcp_server_set_store), a tools/call's rate token is taken
 * here, before its first round: the call waits WAITING_RATE, its deadline
 * watched, for the store's answer, and goes on on the thread that delivers
 * it (the caller's own, when the store answered at once). The call's
 * existence keeps its home, and the home the server: the answer callback
 * holds the call, which nothing else completes or frees while it waits
 * (mcp_server_expire answers its timeout and marks it; the session's end
 * cancels it; the answer then ends it). */

/* An answer given on the thread that asked, before the take returned: kept
 * on that thread's stack for it to go on with. tl_taking is the take this
 * thread is making, if any. */
struct mcp__rate_inline {
  const mcp_call *call;
  bool answered;
  int rc;
  mcp_store_rate_answer answer;
  char why[256];
};

static _Thread_local struct mcp__rate_inline *tl_taking;

void mcp__call_resolve_hints(mcp_call *c) {
  if (c->kind != MCP_CALL_TOOL || c->tool->resolve == NULL)
    return;
  char why[256];
  if (mcp__tool_resolve(c->tool, c->arguments, &c->home->principal, &c->hints,
                        why, sizeof why) == 0) {
    c->resolved = true;
    return;
  }
  mcp__log(c->home->srv, MCP_LOG_ERROR,
           "tools/call \"%s\": runs under its static hints: %s", c->tool->name,
           why);
}

/* Ends c, before its handler ran, with a tool error text audited as
 * decision (failed: the server's failure, not the caller's). */
static void refuse_before(mcp_call *c, const char *text, mcp_decision decision,
                          bool failed, mcp__buf *out, mcp_send_info *facts) {
  c->refusal = mcp__strdup(text);
  c->refusal_decision = decision;
  c->refusal_failed = failed;
  mcp__call_complete(c, c->refusal ? 0 : MCP_ENOMEM, out, facts);
}

/* Goes on with c once the store answered its take (rc, a, why as
 * mcp_store_rate_done's): refused, or the store failed, it ends as a tool
 * error; allowed, its arguments are validated and its first round runs. */
static void rate_answered(mcp_call *c, int rc, const mcp_store_rate_answer *a,
                          const char *why, mcp__buf *out,
                          mcp_send_info *facts) {
  mcp__home *h = c->home;
  pthread_mutex_lock(&h->lock);
  set_phase_locked(c, MCP__CALL_RUNNING);
  pthread_mutex_unlock(&h->lock);
  mcp__free(c->rate_key);
  c->rate_key = NULL;
  char text[512];
  if (mcp_call_cancelled(c)) {
    /* Cancelled, or late: answers the timeout (or nothing) and frees. */
    mcp__call_complete(c, MCP_ECANCELED, out, facts);
  } else if (rc != 0 || a == NULL) {
    /* Never unlimited: a limit that cannot be checked refuses. */
    mcp__fmt(text, sizeof text, "rate limit unavailable: %s", why);
    mcp__utf8_trim(text);
    mcp__log(h->srv, MCP_LOG_ERROR, "tools/call \"%s\": %s", c->tool->name,
             text);
    refuse_before(c, text, MCP_DECISION_RATE_LIMITED, true, out, facts);
  } else if (!a->allowed) {
    mcp__fmt(text, sizeof text,
             "rate limited: at most %u calls every %u s; try again in %llu s",
             c->rate_calls, c->rate_per, (a->wait_ms + 999u) / 1000u);
    refuse_before(c, text, MCP_DECISION_RATE_LIMITED, false, out, facts);
  } else {
    int vrc = mcp__schema_validate(c->tool->input, c->arguments,
                                   "Invalid arguments", text, sizeof text);
    if (vrc == MCP_ENOMEM) {
      mcp__call_complete(c, MCP_ENOMEM, out, facts);
    } else if (vrc != 0) {
      refuse_before(c, text, MCP_DECISION_INVALID_ARGUMENTS, false, out, facts);
    } else {
      mcp__call_resolve_hints(c);
      mcp__call_run(c, out, facts);
    }
  }
}

/* The store's answer: kept for the asking thread when it comes on that
 * thread before the take returned, else acted on here. */
static void rate_done(void *arg, int rc, const mcp_store_rate_answer *a,
                      const char *why) {
  mcp_call *c = arg;
  struct mcp__rate_inline *in = tl_taking;
  if (in != NULL && in->call == c && !in->answered) {
    in->answered = true;
    in->rc = a ? rc : (rc ? rc : MCP_EIO);
    if (a)
      in->answer = *a;
    mcp__fmt(in->why, sizeof in->why, "%s", why ? why : "no reason given");
    return;
  }
  rate_answered(c, rc, a, why ? why : "no reason given", NULL, NULL);
}

/* Takes c's rate token through the server's store. c is then no longer
 * this thread's, unless the store answered at once: then it goes on here
 * with out and facts. */
static void rate_wait(mcp_call *c, mcp__buf *out, mcp_send_info *facts) {
  mcp__home *h = c->home;
  mcp_store *st = atomic_load(&h->srv->store);
  struct mcp__rate_inline in = {.call = c};
  pthread_mutex_lock(&h->lock);
  /* A call that may become a task is one while it waits, as when its
   * handler defers: its answer no longer comes back to this thread. */
  if (c->owner)
    become_task_locked(c);
  set_phase_locked(c, MCP__CALL_WAITING_RATE);
  pthread_mutex_unlock(&h->lock);
  struct mcp__rate_inline *outer = tl_taking; /* a take within a take */
  tl_taking = &in;
  int rc = st ? mcp_store_rate_take(st, c->rate_key, c->rate_calls, c->rate_per,
                                    rate_done, c)
              : MCP_EINVAL;
  tl_taking = outer;
  if (rc != 0) {
    /* The store took nothing: nobody else holds c. */
    char why[160];
    mcp__fmt(why, sizeof why, "the store refused the take: %s",
             mcp_strerror(rc));
    rate_answered(c, rc, NULL, why, out, facts);
    return;
  }
  /* Only this thread's stack says whether c is still ours: an answer on
   * another thread may have ended it already. */
  if (in.answered)
    rate_answered(c, in.rc, in.rc == 0 ? &in.answer : NULL, in.why, out, facts);
}

void mcp__call_run(mcp_call *c, mcp__buf *out, mcp_send_info *facts) {
  mcp__home *h = c->home;
  if (c->rate_key != NULL) {
    rate_wait(c, out, facts);
    return;
  }
  if (c->lost_input) {
    mcp__call_complete(c, MCP_ENOMEM, out, facts);
    return;
  }
  if (c->rounds++ > 0) {
    reset_round(c);
    /* Under the lock: cancellation reads the phase from other threads. A
     * new call needs none: it is RUNNING from its creation (published with
     * it under the lock), and only its handler can move it on. */
    pthread_mutex_lock(&h->lock);
    set_phase_locked(c, MCP__CALL_RUNNING);
    pthread_mutex_unlock(&h->lock);
  }
  if (!hand_over(c, out, facts))
    invoke(c, out, facts);
}

int mcp_call_execute(mcp_call *call, const char *ran_under) {
  if (call == NULL)
    return MCP_EINVAL;
  mcp__home *h = call->home;
  pthread_mutex_lock(&h->lock);
  if (call->phase != MCP__CALL_QUEUED) {
    pthread_mutex_unlock(&h->lock);
    mcp__call_refused(call, "mcp_call_execute",
                      "the call is not waiting in an executor (it was not "
                      "handed over, or was executed already)");
    return MCP_EINVAL;
  }
  set_phase_locked(call, MCP__CALL_RUNNING);
  /* Pinned: the round's end is counted on the home after the call,
   * which completing may free, is gone. */
  atomic_fetch_add(&h->refs, 1);
  pthread_mutex_unlock(&h->lock);
  if (ran_under)
    mcp__fmt(call->ran_under, sizeof call->ran_under, "%s", ran_under);
  /* Cancelled, or late, while it waited: the handler does not run, and
   * completing answers the timeout (or nothing) and frees the call. */
  if (mcp_call_cancelled(call))
    mcp__call_complete(call, MCP_ECANCELED, NULL, NULL);
  else
    invoke(call, NULL, NULL);
  /* The reply is out (or the call deferred, or parked for input): the
   * executor holds this round no more. */
  pthread_mutex_lock(&h->lock);
  atomic_fetch_sub(&h->executing, 1);
  mcp__home_unref_locked(h);
  return 0;
}

int mcp_call_report_effect(mcp_call *call, const char *line) {
  if (call == NULL || line == NULL)
    return MCP_EINVAL;
  size_t len = strlen(line) + 1;
  struct mcp__effect_line *e = mcp__malloc(sizeof *e + len);
  if (e == NULL)
    return MCP_ENOMEM;
  memcpy(e->text, line, len);
  pthread_mutex_lock(&call->effects_lock);
  bool kept = call->neffects < MCP__EFFECT_LINES; /* the first ones */
  if (kept) {
    call->neffects++;
    e->next = call->effects;
    call->effects = e;
  }
  pthread_mutex_unlock(&call->effects_lock);
  if (!kept)
    mcp__free(e);
  return 0;
}

const char *mcp_call_request_id(const mcp_call *call) {
  return call ? call->id : NULL;
}

mcp_tool_annotations mcp_call_hints(const mcp_call *call) {
  mcp_tool_annotations a = {0};
  if (call == NULL || call->kind != MCP_CALL_TOOL)
    return a;
  mcp__hints h = hints_of(call);
  return mcp__hints_annotations(&h);
}

bool mcp_call_hints_resolved(const mcp_call *call) {
  return call && call->kind == MCP_CALL_TOOL && call->resolved;
}

static int finish_code(int rc) {
  return rc > 0 && rc != MCP_INPUT_REQUIRED ? MCP_EINVAL : rc;
}

int mcp_call_finish(mcp_call *call, int rc) {
  if (call == NULL)
    return MCP_EINVAL;
  mcp__home *h = call->home;
  pthread_mutex_lock(&h->lock);
  if (call->phase == MCP__CALL_RUNNING) {
    /* The handler has not returned MCP_DEFERRED yet; it completes the call
     * when it does. */
    set_phase_locked(call, MCP__CALL_FINISH_EARLY);
    call->finish_rc = finish_code(rc);
    pthread_mutex_unlock(&h->lock);
    return 0;
  }
  if (call->phase != MCP__CALL_DEFERRED) {
    int phase = call->phase;
    pthread_mutex_unlock(&h->lock);
    mcp__call_refused(call, "mcp_call_finish", phases[phase].no_finish);
    return MCP_EINVAL;
  }
  set_phase_locked(call, MCP__CALL_RUNNING);
  pthread_mutex_unlock(&h->lock);
  mcp__call_complete(call, finish_code(rc), NULL, NULL);
  return 0;
}
