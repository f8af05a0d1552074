/* What one call may cost: the size of its result, how often a caller may
 * call tools, and how long a call may take. The engine does no I/O and
 * owns no thread, so a deadline is noticed by whoever looks at the clock:
 * the handler (mcp_call_cancelled), the thread that completes the call,
 * and the transport's timer (mcp_server_timeout, mcp_server_expire). */
#include <cjson/cJSON.h>
#include <limits.h>
#include <string.h>

#include "engine.h"

/* No deadline to watch. */
#define NONE ULLONG_MAX

static const char *what(const mcp_call *c) {
  return c->kind == MCP_CALL_PROMPT     ? "prompt"
         : c->kind == MCP_CALL_RESOURCE ? "resource"
                                        : "tool";
}

/* {"jsonrpc":"2.0","id":ID,"result":{content:[text],isError:true}} for a
 * call, in its era's shape. */
static void tool_error(const mcp_call *c, mcp__buf *out, const char *text) {
  mcp__buf_puts(out, "{\"jsonrpc\":\"2.0\",\"id\":");
  mcp__buf_append(out, c->id, c->id_len);
  mcp__buf_puts(out, ",\"result\":");
  mcp__result_begin(out, c->session->srv, c->modern, "complete");
  mcp__buf_puts(out, "\"content\":[{\"type\":\"text\",\"text\":");
  mcp__json_quote(out, text, strlen(text));
  mcp__buf_puts(out, "}],\"isError\":true,");
  mcp__result_end(out);
  mcp__buf_putc(out, '}');
}

/* ---- result size --------------------------------------------------------- */

size_t mcp__quoted_len(const char *s) {
  size_t n = 2;
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    unsigned char c = *p;
    if (c == '"' || c == '\\' || c == '\b' || c == '\f' || c == '\n' ||
        c == '\r' || c == '\t')
      n += 2;
    else if (c < 0x20 || c == 0x7f)
      n += 6;
    else
      n++;
  }
  return n;
}

int mcp__call_room_text(mcp_call *c, const char *text) {
  /* Quoting writes at most six bytes for one, and two quotes: a text that
   * fits even so needs no count (the usual case, where the maximum is
   * megabytes and the text a line). */
  size_t max = atomic_load(&c->session->srv->max_result);
  size_t have = mcp__call_result_len(c);
  if (!c->latched && have <= max && max - have >= 2 &&
      strlen(text) <= (max - have - 2) / 6)
    return 0;
  return mcp__call_room(c, mcp__quoted_len(text));
}

int mcp__call_room(mcp_call *c, size_t more) {
  if (c->latched)
    return c->latched;
  size_t max = atomic_load(&c->session->srv->max_result);
  size_t have = mcp__call_result_len(c);
  if (have <= max && more <= max - have)
    return 0;
  /* Nothing of an oversized result is ever sent: let go of it now rather
   * than hold it until the handler returns. */
  c->too_large = true;
  c->latched = MCP_ELIMIT;
  mcp__call_clear_result(c);
  return MCP_ELIMIT;
}

/* How a call that could not give its result is answered: a tool with a
 * result whose isError is true (the model can act on it), a prompt or a
 * resource with a JSON-RPC internal error; both say text. */
static void failure_reply(const mcp_call *c, mcp__buf *out, const char *text) {
  if (c->kind == MCP_CALL_TOOL) {
    tool_error(c, out, text);
    return;
  }
  char msg[160];
  mcp__fmt(msg, sizeof msg, "Internal error: %s", text);
  mcp__rpc_error(out, c->id, c->id_len, MCP__ID_NULL, MCP__RPC_INTERNAL_ERROR,
                 msg, NULL);
}

void mcp__call_too_large(mcp_call *c, mcp__buf *out) {
  mcp_server *srv = c->session->srv;
  size_t max = atomic_load(&srv->max_result);
  char text[120];
  mcp__fmt(text, sizeof text, "result too large: limit %zu bytes", max);
  mcp__log(srv, MCP_LOG_ERROR, "%s \"%s\": %s", what(c), c->tool->name, text);
  /* The model can act on this (ask for less), so for a tool it is a tool
   * error. */
  if (c->kind == MCP_CALL_TOOL)
    c->is_error = true;
  failure_reply(c, out, text);
}

/* ---- deadlines ----------------------------------------------------------- */

void mcp__call_set_deadline(mcp_call *c, unsigned long long started) {
  mcp_session *s = c->session;
  unsigned ms = atomic_load(&s->srv->call_timeout_ms);
  if (ms == 0)
    return;
  /* Under the lock: mcp_server_expire reads it from another thread. */
  pthread_mutex_lock(&s->lock);
  c->deadline_us = started + (unsigned long long)ms * 1000u;
  pthread_mutex_unlock(&s->lock);
  atomic_fetch_add(&s->srv->timed_calls, 1);
  atomic_store(&s->srv->deadline_dirty, true);
}

bool mcp__call_late(const mcp_call *c) {
  return c->deadline_us != 0 && mcp__now_us() >= c->deadline_us;
}

/* The timeout answer, without the log line (it may be built under the
 * session lock, where no callback may run). */
static void timeout_reply(const mcp_call *c, mcp__buf *out, char *text,
                          size_t size) {
  unsigned long long ms = (c->deadline_us - c->started_us) / 1000u;
  mcp__fmt(text, size, "timeout: the %s did not finish within %llu ms", what(c),
           ms);
  failure_reply(c, out, text);
}

void mcp__call_timeout(mcp_call *c, mcp__buf *out) {
  char text[120];
  timeout_reply(c, out, text, sizeof text);
  mcp__log(c->session->srv, MCP_LOG_WARNING, "%s \"%s\": %s", what(c),
           c->tool->name, text);
}

void mcp__call_send(mcp_call *c, const char *msg, size_t len) {
  mcp_session *s = c->session;
  /* The sink is read under the lock: mcp_server_expire lets go of it when
   * it answers a deferred call. */
  pthread_mutex_lock(&s->lock);
  if (!c->timed_out)
    mcp__send_locked(s, c->sink, msg, len);
  pthread_mutex_unlock(&s->lock);
}

/* Must mcp_server_expire answer c now? A deferred call, or one parked for
 * the client's input, past its deadline and neither cancelled nor dealt
 * with. Calls whose handler is running answer for themselves. Under
 * c->session->lock. */
static bool due_locked(const mcp_call *c, unsigned long long now) {
  return c->deadline_us != 0 && now >= c->deadline_us && !c->timed_out &&
         !atomic_load(&c->cancelled) &&
         (c->phase == MCP__CALL_DEFERRED ||
          c->phase == MCP__CALL_WAITING_INPUT);
}

/* Answers the due calls of s, which the caller pinned (a reference), and
 * drops that reference. Returns how many were answered. */
static int expire_session(mcp_session *s, unsigned long long now) {
  int n = 0;
  pthread_mutex_lock(&s->lock);
  for (;;) {
    mcp_call *c = s->calls;
    while (c && !due_locked(c, now))
      c = c->next;
    if (c == NULL)
      break;
    n++;
    if (c->phase == MCP__CALL_WAITING_INPUT) {
      /* Nobody else will finish a parked call: complete it here, which
       * answers the timeout (its deadline has passed) and frees it. */
      mcp__input_cancel_locked(c);
      c->phase = MCP__CALL_RUNNING;
      pthread_mutex_unlock(&s->lock);
      mcp__call_complete(c, MCP_ECANCELED, NULL);
      pthread_mutex_lock(&s->lock);
      continue;
    }
    /* A deferred call belongs to the thread that will finish it: answer
     * now, mark it so that its finish only frees, and let go of its sink,
     * so a transport with a stream per request can end that stream. */
    char text[120], name[160];
    mcp__buf reply = {0};
    timeout_reply(c, &reply, text, sizeof text);
    mcp__fmt(name, sizeof name, "%s \"%s\"", what(c), c->tool->name);
    c->timed_out = true;
    mcp__sink *k = NULL;
    if (reply.err == 0) {
      mcp__send_locked(s, c->sink, reply.data, reply.len);
      atomic_store(&c->cancelled, true);
      k = c->sink;
      c->sink = NULL;
    }
    /* Without memory for the answer, the call keeps its sink and the
     * finish answers the timeout instead. */
    pthread_mutex_unlock(&s->lock);
    mcp__buf_free(&reply);
    mcp__log(s->srv, MCP_LOG_WARNING, "%s: %s", name, text);
    mcp__sink_release(k);
    pthread_mutex_lock(&s->lock);
  }
  mcp__session_unref_locked(s);
  return n;
}

/* Walks every call of srv: computes the earliest deadline still to watch
 * into the hint and, with act, answers the due calls. Returns how many it
 * answered. */
static int scan(mcp_server *srv, bool act) {
  int answered = 0;
  /* Cleared before the walk: a call deferred meanwhile sets it again, and
   * the next look walks once more. */
  atomic_store(&srv->deadline_dirty, false);
  for (;;) {
    unsigned long long now = mcp__now_us(), next = NONE;
    mcp_session *pinned = NULL;
    /* Sessions are pinned under the server lock and served after it is
     * released, so a send callback may call back into the server. */
    pthread_mutex_lock(&srv->lock);
    for (mcp_session *s = srv->sessions; s && !pinned; s = s->next) {
      pthread_mutex_lock(&s->lock);
      for (mcp_call *c = s->calls; c; c = c->next) {
        if (c->deadline_us == 0 || c->timed_out || atomic_load(&c->cancelled))
          continue;
        if (c->deadline_us > now) {
          next = c->deadline_us < next ? c->deadline_us : next;
        } else if (due_locked(c, now)) {
          next = now;
          if (act) {
            s->refs++;
            pinned = s;
            break;
          }
        }
      }
      pthread_mutex_unlock(&s->lock);
    }
    pthread_mutex_unlock(&srv->lock);
    if (pinned == NULL) {
      atomic_store(&srv->deadline_hint_us, next);
      return answered;
    }
    answered += expire_session(pinned, now);
  }
}

/* Is a walk needed: a call added or deferred since the last, or the
 * earliest deadline reached? */
static bool must_look(mcp_server *srv, unsigned long long *hint) {
  if (atomic_load(&srv->timed_calls) == 0) {
    *hint = NONE;
    return false;
  }
  *hint = atomic_load(&srv->deadline_hint_us);
  return atomic_load(&srv->deadline_dirty) ||
         (*hint != NONE && *hint <= mcp__now_us());
}

long mcp_server_timeout(mcp_server *srv) {
  if (srv == NULL)
    return -1;
  unsigned long long hint;
  if (must_look(srv, &hint)) {
    scan(srv, false);
    hint = atomic_load(&srv->deadline_hint_us);
  }
  if (hint == NONE)
    return -1;
  unsigned long long now = mcp__now_us();
  if (hint <= now)
    return 0;
  /* Rounded up: waking before the deadline would only wait again. */
  unsigned long long ms = (hint - now + 999u) / 1000u;
  return ms > INT_MAX ? INT_MAX : (long)ms;
}

int mcp_server_expire(mcp_server *srv) {
  if (srv == NULL)
    return MCP_EINVAL;
  unsigned long long hint;
  return must_look(srv, &hint) ? scan(srv, true) : 0;
}

/* ---- rate limit ----------------------------------------------------------
 * The buckets are the policy layer's (lib/policy/ratelimit.c); here the
 * caller is named and a refusal answered. */

int mcp_server_set_rate_limit(mcp_server *srv, unsigned calls,
                              unsigned per_seconds) {
  if (srv == NULL)
    return MCP_EINVAL;
  return mcp__ratelimit_set(&srv->rate, calls, per_seconds);
}

int mcp__rate_take(mcp_session *s, mcp__reply_ctx *ctx, const mcp__req *r,
                   const char *tool, unsigned long long started) {
  mcp_server *srv = s->srv;
  if (atomic_load(&srv->rate.calls) == 0)
    return 0;
  /* An anonymous caller is known only by its session: give the session a
   * number of its own, never reused as a freed session's address could
   * be. */
  unsigned long long serial = 0;
  if (s->principal.subject == NULL) {
    pthread_mutex_lock(&s->lock);
    if (s->serial == 0)
      s->serial = atomic_fetch_add(&srv->next_serial, 1) + 1;
    serial = s->serial;
    pthread_mutex_unlock(&s->lock);
  }
  unsigned calls = 0, per = 0;
  unsigned long long wait_s = 0;
  int rc = mcp__ratelimit_take(&srv->rate, s->principal.subject, serial, &calls,
                               &per, &wait_s);
  if (rc != 1)
    return rc;
  char text[200];
  mcp__fmt(text, sizeof text,
           "rate limited: at most %u calls every %u s; try again in %llu s",
           calls, per, wait_s);
  mcp__audit(srv, tool, &s->principal, MCP_DECISION_RATE_LIMITED, NULL, true,
             false, started);
  mcp__reply_tool_error(s, ctx, r, text);
  return 1;
}
