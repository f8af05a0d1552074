/* Streams of the HTTP transport: where the messages a POST causes go, and
 * the session's standalone GET stream.
 *
 * A stream is filled by the engine's sink (from whichever thread sends:
 * the libmicrohttpd thread that received the POST, or a thread finishing a
 * deferred call) and drained by libmicrohttpd's content reader. When the
 * reader finds nothing to send it suspends the connection and returns 0;
 * the next message resumes it. The "suspended" flag is set under the
 * stream's lock right after MHD_suspend_connection, so a sender resumes
 * only a connection that really is suspended, and exactly once: whoever
 * clears the flag owns the resume, and the connection cannot finish (or be
 * reused) while it is suspended. A POST whose call the engine deferred
 * (MCP_DEFERRED, or an executor) is suspended the same way before any
 * response, so that its one reply can still go out as application/json;
 * whatever must go before that reply turns it into an event stream. No
 * thread ever waits for a call. */
#include <microhttpd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "http_int.h"

/* The kept events of one stream may not exceed this many bytes. */
#define RING_MAX_BYTES (4u << 20)

/* A message held until the reply's mode is decided, with the facts the
 * engine gave with it (mcp_send_info) that the reply's status needs. */
typedef struct mcp__http_msg {
  mcp__list link; /* in its stream's pending queue */
  char *data;
  size_t len;
  int code;     /* its JSON-RPC error code, 0 when it is no error */
  bool reply;   /* it answers a request (a result, an error, a batch) */
  char *scopes; /* a refusal on scope: the scopes for the challenge */
} mcp__http_msg;

typedef struct mcp__http_event {
  unsigned long long seq;
  char *text;
  size_t len;
} mcp__http_event;

/* ---- the hub --------------------------------------------------------------
 */

mcp__http_hub *mcp__http_hub_new(bool with_event_fd) {
  mcp__http_hub *hub = mcp_calloc(1, sizeof *hub);
  if (hub == NULL)
    return NULL;
  hub->refs = 1;
  hub->event_fd = -1;
  if (with_event_fd &&
      (hub->event_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) < 0) {
    mcp_free(hub);
    return NULL;
  }
  if (pthread_mutex_init(&hub->lock, NULL) != 0) {
    if (hub->event_fd >= 0)
      close(hub->event_fd);
    mcp_free(hub);
    return NULL;
  }
  if (pthread_cond_init(&hub->idle, NULL) != 0) {
    pthread_mutex_destroy(&hub->lock);
    if (hub->event_fd >= 0)
      close(hub->event_fd);
    mcp_free(hub);
    return NULL;
  }
  return hub;
}

static void hub_ref(mcp__http_hub *hub) {
  pthread_mutex_lock(&hub->lock);
  hub->refs++;
  pthread_mutex_unlock(&hub->lock);
}

void mcp__http_hub_unref(mcp__http_hub *hub) {
  if (hub == NULL)
    return;
  pthread_mutex_lock(&hub->lock);
  unsigned left = --hub->refs;
  pthread_mutex_unlock(&hub->lock);
  if (left)
    return;
  if (hub->event_fd >= 0)
    close(hub->event_fd);
  pthread_cond_destroy(&hub->idle);
  pthread_mutex_destroy(&hub->lock);
  mcp_free(hub);
}

void mcp__http_hub_wait_idle(mcp__http_hub *hub) {
  pthread_mutex_lock(&hub->lock);
  while (hub->resuming > 0)
    pthread_cond_wait(&hub->idle, &hub->lock);
  pthread_mutex_unlock(&hub->lock);
}

void mcp__http_hub_settle(mcp__http_hub *hub) {
  pthread_mutex_lock(&hub->lock);
  if (--hub->resuming == 0)
    pthread_cond_broadcast(&hub->idle);
  pthread_mutex_unlock(&hub->lock);
}

void mcp__http_resume(mcp__http_hub *hub, struct MHD_Connection *conn) {
  if (conn == NULL)
    return;
  MHD_resume_connection(conn);
  if (hub->event_fd >= 0) {
    uint64_t one = 1;
    (void)!write(hub->event_fd, &one, sizeof one);
  }
  pthread_mutex_lock(&hub->lock);
  if (--hub->resuming == 0)
    pthread_cond_broadcast(&hub->idle);
  pthread_mutex_unlock(&hub->lock);
}

/* ---- streams ------------------------------------------------------------- */

mcp__http_stream *mcp__http_stream_new(mcp__http_hub *hub,
                                       mcp__http_stream_kind kind, unsigned no,
                                       size_t ring_cap, size_t out_cap) {
  mcp__http_stream *st = mcp_calloc(1, sizeof *st);
  if (st == NULL)
    return NULL;
  if (pthread_mutex_init(&st->lock, NULL) != 0) {
    mcp_free(st);
    return NULL;
  }
  st->refs = 1;
  mcp__list_init(&st->live);
  st->hub = hub;
  hub_ref(hub);
  st->kind = kind;
  st->no = no;
  st->ring_cap = ring_cap;
  st->out_cap = out_cap;
  mcp__list_init(&st->pending);
  st->mode = kind == MCP__HTTP_STREAM_GET ? MCP__HTTP_MODE_SSE
                                          : MCP__HTTP_MODE_PENDING;
  return st;
}

void mcp__http_stream_ref(mcp__http_stream *st) {
  pthread_mutex_lock(&st->lock);
  st->refs++;
  pthread_mutex_unlock(&st->lock);
}

/* The oldest message held; the queue is not empty. */
static mcp__http_msg *first_pending(const mcp__http_stream *st) {
  return mcp__container_of(st->pending.next, mcp__http_msg, link);
}

static void free_pending(mcp__http_stream *st) {
  mcp__list_each(link, &st->pending) {
    mcp__http_msg *m = mcp__container_of(link, mcp__http_msg, link);
    mcp_free(m->data);
    mcp_free(m->scopes);
    mcp_free(m);
  }
  mcp__list_init(&st->pending);
  st->npending = st->pending_bytes = 0;
}

void mcp__http_stream_unref(mcp__http_stream *st) {
  if (st == NULL)
    return;
  pthread_mutex_lock(&st->lock);
  unsigned left = --st->refs;
  pthread_mutex_unlock(&st->lock);
  if (left)
    return;
  free_pending(st);
  for (size_t i = 0; i < st->ring_len; i++)
    mcp_free(st->ring[(st->ring_start + i) % st->ring_cap].text);
  mcp_free(st->ring);
  mcp_free(st->out);
  mcp__http_hub_unref(st->hub);
  pthread_mutex_destroy(&st->lock);
  mcp_free(st);
}

/* ---- buffers (stream lock held) ------------------------------------------ */

/* Appends to the unsent bytes; past out_cap the stream overflows: the
 * client is not reading, and its connection is closed rather than letting
 * memory grow. Returns 0 or -1. */
static int out_append(mcp__http_stream *st, const char *p, size_t n) {
  size_t unsent = st->out_len - st->out_pos;
  if (st->overflow || unsent + n > st->out_cap) {
    st->overflow = st->ended = true;
    return -1;
  }
  /* What the reader took is dropped once it is half the buffer, so a
   * slow reader costs no quadratic copying. */
  if (st->out_pos > 0 && st->out_pos >= st->out_size / 2) {
    memmove(st->out, st->out + st->out_pos, unsent);
    st->out_len = unsent;
    st->out_pos = 0;
  }
  size_t need = st->out_len + n;
  if (need > st->out_size) {
    size_t cap = st->out_size ? st->out_size : 256;
    while (cap < need)
      cap *= 2;
    char *q = mcp_realloc(st->out, cap);
    if (q == NULL) {
      st->overflow = st->ended = true;
      return -1;
    }
    st->out = q;
    st->out_size = cap;
  }
  memcpy(st->out + st->out_len, p, n);
  st->out_len = need;
  return 0;
}

/* Formats one SSE event: an id line when the stream has ids, the event
 * type (message, the default, named as the official SDKs do), the message
 * as data lines (engine messages are compact JSON without line breaks, but
 * a break would still be framed correctly), and the blank line. */
static char *format_event(const mcp__http_stream *st, unsigned long long seq,
                          const char *msg, size_t len, size_t *out_len) {
  size_t lines = 1;
  for (size_t i = 0; i < len; i++)
    lines += msg[i] == '\n' || msg[i] == '\r';
  static const char type[] = "event: message\n";
  size_t cap = 48 + sizeof type + len + 7 * lines + 2;
  char *ev = mcp_malloc(cap);
  if (ev == NULL)
    return NULL;
  size_t o = 0;
  if (st->kind != MCP__HTTP_STREAM_MODERN)
    o = (size_t)snprintf(ev, cap, "id: %u-%llu\n", st->no, seq);
  memcpy(ev + o, type, sizeof type - 1);
  o += sizeof type - 1;
  size_t start = 0;
  for (size_t i = 0; i <= len; i++) {
    if (i < len && msg[i] != '\n' && msg[i] != '\r')
      continue;
    memcpy(ev + o, "data: ", 6);
    o += 6;
    memcpy(ev + o, msg + start, i - start);
    o += i - start;
    ev[o++] = '\n';
    if (i + 1 < len && msg[i] == '\r' && msg[i + 1] == '\n')
      i++;
    start = i + 1;
  }
  ev[o++] = '\n';
  *out_len = o;
  return ev;
}

/* Keeps an event for Last-Event-ID; the oldest go first when the count or
 * the byte bound is reached. Takes ownership of text. */
static void ring_add(mcp__http_stream *st, unsigned long long seq, char *text,
                     size_t len) {
  /* The ring is allocated with the first event: most streams never have
   * one (their reply went out as application/json). */
  if (st->ring_cap == 0 || len > RING_MAX_BYTES ||
      (st->ring == NULL &&
       (st->ring = mcp_calloc(st->ring_cap, sizeof *st->ring)) == NULL)) {
    mcp_free(text);
    return;
  }
  while (st->ring_len > 0 && (st->ring_len == st->ring_cap ||
                              st->ring_bytes + len > RING_MAX_BYTES)) {
    mcp__http_event *old = &st->ring[st->ring_start];
    st->ring_bytes -= old->len;
    mcp_free(old->text);
    st->ring_start = (st->ring_start + 1) % st->ring_cap;
    st->ring_len--;
  }
  st->ring[(st->ring_start + st->ring_len) % st->ring_cap] =
      (mcp__http_event){seq, text, len};
  st->ring_len++;
  st->ring_bytes += len;
}

/* Turns one message into an event: kept (streams with ids) and queued when
 * a connection carries the stream. Returns 0 or -1. */
static int emit(mcp__http_stream *st, const char *msg, size_t len) {
  bool ids = st->kind != MCP__HTTP_STREAM_MODERN;
  if (!ids && st->attached == NULL)
    return -1; /* a modern client that left cancelled its request */
  size_t n;
  char *ev = format_event(st, st->seq + 1, msg, len, &n);
  if (ev == NULL) {
    st->overflow = st->ended = true;
    return -1;
  }
  st->seq++;
  int rc = st->attached ? out_append(st, ev, n) : 0;
  if (ids)
    ring_add(st, st->seq, ev, n);
  else
    mcp_free(ev);
  return rc;
}

static void priming(mcp__http_stream *st) {
  char ev[48];
  int n = snprintf(ev, sizeof ev, "id: %u-%llu\ndata: \n\n", st->no, st->seq);
  out_append(st, ev, (size_t)n);
}

/* Clears the suspended flag and returns the connection to resume: the
 * caller now owns that resume, and the hub counts it until it is done. */
static struct MHD_Connection *wake(mcp__http_stream *st) {
  if (!st->suspended)
    return NULL;
  st->suspended = false;
  pthread_mutex_lock(&st->hub->lock);
  st->hub->resuming++;
  pthread_mutex_unlock(&st->hub->lock);
  return st->conn;
}

/* ---- producers ------------------------------------------------------------
 */

int mcp__http_stream_push(mcp__http_stream *st, const char *message, size_t len,
                          const mcp_send_info *info) {
  int rc = 0;
  struct MHD_Connection *conn = NULL;
  int code = info && info->kind == MCP_SENT_ERROR ? info->error_code : 0;
  bool reply =
      info && (info->kind == MCP_SENT_RESULT || info->kind == MCP_SENT_ERROR ||
               info->kind == MCP_SENT_BATCH);
  pthread_mutex_lock(&st->lock);
  if (st->mode == MCP__HTTP_MODE_PENDING) {
    /* Held messages count against the same bound as unsent bytes. */
    bool fits = st->pending_bytes + len <= st->out_cap;
    mcp__http_msg *m = fits ? mcp_malloc(sizeof *m) : NULL;
    char *copy = m ? mcp_malloc(len ? len : 1) : NULL;
    char *scopes = NULL;
    if (copy && code == MCP_RPC_FORBIDDEN &&
        mcp__http_auth_scope_list(info->scopes, &scopes) != 0) {
      mcp_free(copy);
      copy = NULL;
    }
    if (copy == NULL) {
      mcp_free(m);
      /* A message lost before the reply was decided: answering without it
       * (a 202, or one message fewer) would be a wrong answer. Past the
       * bound, the stream overflowed: its connection closes too. */
      if (!fits)
        st->overflow = st->ended = true;
      st->mode = MCP__HTTP_MODE_FAILED;
      free_pending(st);
      rc = -1;
    } else {
      memcpy(copy, message, len);
      *m = (mcp__http_msg){.data = copy,
                           .len = len,
                           .code = code,
                           .reply = reply,
                           .scopes = scopes};
      mcp__list_push(&st->pending, &m->link);
      st->npending++;
      st->pending_bytes += len;
    }
    /* A request waiting for its one reply (mcp__http_stream_settle) goes
     * on when that is no longer what it will get: anything but a reply
     * comes first (a progress or log notification, a request to the
     * client), or a second message, or a lost one. Its reply itself
     * waits for done. */
    if (st->attached && (rc != 0 || !reply || st->npending > 1))
      conn = wake(st);
  } else if (st->mode != MCP__HTTP_MODE_SSE || st->ended) {
    rc = -1;
  } else {
    rc = emit(st, message, len);
    conn = wake(st);
  }
  pthread_mutex_unlock(&st->lock);
  mcp__http_resume(st->hub, conn);
  return rc;
}

int mcp__http_stream_send(const char *message, size_t len,
                          const mcp_send_info *info, void *user_data) {
  return mcp__http_stream_push(user_data, message, len, info);
}

void mcp__http_stream_done(void *user_data) {
  mcp__http_stream *st = user_data;
  pthread_mutex_lock(&st->lock);
  st->engine_done = true;
  struct MHD_Connection *conn = wake(st);
  pthread_mutex_unlock(&st->lock);
  mcp__http_resume(st->hub, conn);
  mcp__http_stream_unref(st);
}

char *mcp__http_stream_refusal(mcp__http_stream *st) {
  char *scopes = NULL;
  pthread_mutex_lock(&st->lock);
  if (st->mode == MCP__HTTP_MODE_PENDING && st->engine_done &&
      st->npending == 1) {
    mcp__http_msg *m = first_pending(st);
    scopes = m->scopes;
    m->scopes = NULL;
  }
  pthread_mutex_unlock(&st->lock);
  return scopes;
}

struct MHD_Connection *mcp__http_stream_expire(mcp__http_stream *st,
                                               long long now_s) {
  struct MHD_Connection *conn = NULL;
  pthread_mutex_lock(&st->lock);
  if (st->attached && st->hold_open && st->expires_at > 0 &&
      now_s >= st->expires_at && !st->expired) {
    /* Only this connection ends: the stream stays for Last-Event-ID. */
    st->expired = true;
    conn = wake(st);
  }
  pthread_mutex_unlock(&st->lock);
  return conn;
}

bool mcp__http_stream_failed(mcp__http_stream *st) {
  pthread_mutex_lock(&st->lock);
  bool failed = st->mode == MCP__HTTP_MODE_FAILED;
  pthread_mutex_unlock(&st->lock);
  return failed;
}

bool mcp__http_stream_engine_done(mcp__http_stream *st) {
  pthread_mutex_lock(&st->lock);
  bool done = st->engine_done;
  pthread_mutex_unlock(&st->lock);
  return done;
}

bool mcp__http_stream_ended(mcp__http_stream *st) {
  pthread_mutex_lock(&st->lock);
  bool ended = st->ended;
  pthread_mutex_unlock(&st->lock);
  return ended;
}

struct MHD_Connection *mcp__http_stream_end(mcp__http_stream *st) {
  pthread_mutex_lock(&st->lock);
  st->ended = true;
  struct MHD_Connection *conn = wake(st);
  pthread_mutex_unlock(&st->lock);
  return conn;
}

struct MHD_Connection *mcp__http_stream_keepalive(mcp__http_stream *st,
                                                  uint64_t now_ms,
                                                  uint64_t interval_ms) {
  static const char comment[] = ": keep-alive\n\n";
  struct MHD_Connection *conn = NULL;
  pthread_mutex_lock(&st->lock);
  if (st->attached && st->mode == MCP__HTTP_MODE_SSE && !st->ended &&
      now_ms - st->last_ms >= interval_ms) {
    st->last_ms = now_ms;
    out_append(st, comment, sizeof comment - 1);
    conn = wake(st);
  } else if (st->attached && st->mode == MCP__HTTP_MODE_PENDING &&
             !st->waited_long && now_ms - st->last_ms >= interval_ms) {
    /* A reply awaited this long may take longer still: the request goes
     * on as an event stream, whose keep-alives tell a proxy (and the
     * client) that it is alive, and tell us when the client has left. */
    st->waited_long = true;
    conn = wake(st);
  }
  pthread_mutex_unlock(&st->lock);
  return conn;
}

/* ---- attaching connections ----------------------------------------------- */

static void attach(mcp__http_stream *st, mcp__http_req *r, bool hold_open) {
  st->attached = r;
  st->conn = r->conn;
  st->suspended = false;
  st->hold_open = hold_open;
  st->expires_at = 0;
  st->expired = false;
  st->last_ms = mcp__http_now_ms();
  st->out_len = st->out_pos = 0;
  st->overflow = false;
}

/* Whether the engine, not done with st, may still answer it with one
 * message: nothing came yet, or only a reply. */
static bool one_reply_possible(const mcp__http_stream *st) {
  return st->npending == 0 || (st->npending == 1 && first_pending(st)->reply);
}

mcp__http_mode mcp__http_stream_settle(mcp__http_stream *st, mcp__http_req *r,
                                       bool prefer_sse, bool may_wait,
                                       bool with_priming, char **json,
                                       size_t *json_len, int *code) {
  pthread_mutex_lock(&st->lock);
  /* A request that waited and then got nothing (its call was cancelled,
   * or its reply lost) is not answered 202, which says "no request here":
   * it gets an event stream that ends at once, as it did before waiting
   * was possible. */
  bool waited = st->attached == r && st->mode == MCP__HTTP_MODE_PENDING;
  mcp__http_mode mode;
  if (st->mode == MCP__HTTP_MODE_FAILED) {
    mode = MCP__HTTP_MODE_FAILED;
  } else if (st->engine_done && st->npending == 0 && !waited) {
    mode = MCP__HTTP_MODE_EMPTY;
  } else if (!st->engine_done && may_wait && !prefer_sse && !st->ended &&
             !st->waited_long && one_reply_possible(st)) {
    /* The engine deferred (a handler on an executor, or one that finishes
     * later): the request waits, its connection suspended without a
     * response, until the messages that follow decide (see push and
     * done). The held messages stay held. */
    st->attached = r;
    st->conn = r->conn;
    st->hold_open = false;
    st->last_ms = mcp__http_now_ms();
    MHD_suspend_connection(r->conn);
    st->suspended = true;
    pthread_mutex_unlock(&st->lock);
    return MCP__HTTP_MODE_PENDING;
  } else if (st->engine_done && st->npending == 1 && !prefer_sse) {
    mode = MCP__HTTP_MODE_JSON;
    mcp__http_msg *m = first_pending(st);
    *json = m->data;
    *json_len = m->len;
    *code = m->code;
    m->data = NULL;
  } else {
    mode = MCP__HTTP_MODE_SSE;
    st->mode = mode;
    attach(st, r, false);
    if (with_priming && st->kind != MCP__HTTP_STREAM_MODERN)
      priming(st);
    mcp__list_each(link, &st->pending) {
      mcp__http_msg *m = mcp__container_of(link, mcp__http_msg, link);
      emit(st, m->data, m->len);
    }
  }
  st->mode = mode;
  free_pending(st);
  pthread_mutex_unlock(&st->lock);
  return mode;
}

int mcp__http_stream_attach_get(mcp__http_stream *st, mcp__http_req *r,
                                bool replay, unsigned long long after_seq,
                                bool with_priming,
                                struct MHD_Connection **old) {
  int rc = 0;
  *old = NULL;
  pthread_mutex_lock(&st->lock);
  if (st->mode != MCP__HTTP_MODE_SSE || st->ended) {
    rc = -2;
  } else if (st->attached && !replay) {
    rc = -1;
  } else {
    if (st->attached) {
      /* A client resuming a stream that still looks attached lost that
       * connection (a suspended connection's close goes unnoticed until
       * the next write): the new one takes over, and the old one's reader
       * fails as soon as it runs. */
      *old = wake(st);
      rc = 1;
    }
    /* Only the standalone GET stream stays open indefinitely; a resumed
     * POST stream ends once its call has answered, as the original would. */
    attach(st, r, st->kind == MCP__HTTP_STREAM_GET);
    if (replay) {
      for (size_t i = 0; i < st->ring_len; i++) {
        const mcp__http_event *e =
            &st->ring[(st->ring_start + i) % st->ring_cap];
        if (e->seq > after_seq)
          out_append(st, e->text, e->len);
      }
    } else if (with_priming) {
      priming(st);
    }
  }
  pthread_mutex_unlock(&st->lock);
  return rc;
}

bool mcp__http_stream_detach(mcp__http_stream *st, const mcp__http_req *r,
                             bool *was_attached) {
  bool left_early = false;
  pthread_mutex_lock(&st->lock);
  *was_attached = st->attached == r;
  if (*was_attached) {
    left_early = !st->engine_done;
    st->attached = NULL;
    st->conn = NULL;
    st->suspended = false;
    st->hold_open = false;
    st->expires_at = 0;
    st->expired = false;
    mcp_free(st->out);
    st->out = NULL;
    st->out_size = st->out_len = st->out_pos = 0;
  }
  pthread_mutex_unlock(&st->lock);
  return left_early;
}

/* ---- the consumer ---------------------------------------------------------
 */

ssize_t mcp__http_stream_read(mcp__http_req *r, char *buf, size_t max) {
  mcp__http_stream *st = r->stream;
  ssize_t n;
  pthread_mutex_lock(&st->lock);
  if (st->attached != r || st->overflow) {
    n = MHD_CONTENT_READER_END_WITH_ERROR;
  } else if (st->out_pos < st->out_len) {
    size_t avail = st->out_len - st->out_pos;
    size_t take = avail < max ? avail : max;
    memcpy(buf, st->out + st->out_pos, take);
    st->out_pos += take;
    if (st->out_pos == st->out_len)
      st->out_pos = st->out_len = 0;
    st->last_ms = mcp__http_now_ms();
    n = (ssize_t)take;
  } else if (st->ended || st->expired || (!st->hold_open && st->engine_done)) {
    n = MHD_CONTENT_READER_END_OF_STREAM;
  } else {
    /* Nothing to send yet: park the connection until a message, the end,
     * a keep-alive or the server's stop resumes it. */
    MHD_suspend_connection(st->conn);
    st->suspended = true;
    n = 0;
  }
  pthread_mutex_unlock(&st->lock);
  return n;
}
