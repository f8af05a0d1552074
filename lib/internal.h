/* Private declarations shared by the modules of lib/. Not installed. */
#ifndef MCP_INTERNAL_H
#define MCP_INTERNAL_H

#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <string.h>

#include "mcp/mcp.h"

#include "base.h"

#include "rpc.h"

#include "policy.h"

#include "registry.h"

/* ---- server, sessions and calls (lib/server.c, session.c, call.c) -------- */
#include <pthread.h>

struct mcp_server {
  char *name, *version, *title, *instructions;
  unsigned char state_key[32]; /* HMAC key of requestState */
  pthread_mutex_t lock;        /* guards reg and sessions */
  mcp__registry reg;           /* tools */
  mcp__registry prompts;       /* prompts */
  mcp__registry resources;     /* resources with a fixed uri */
  mcp__registry templates;     /* resource templates, matched in order */
  mcp_session *sessions;       /* every live session, for list_changed */
  mcp_log_fn log;
  void *log_data;
  mcp__policy policy;
  mcp_audit_fn audit;
  void *audit_data;
  _Atomic unsigned refs; /* the owner's plus one per live session */
  _Atomic unsigned page_size;
  _Atomic unsigned list_ttl_ms; /* ttlMs of modern list results */
  _Atomic unsigned input_ttl_s; /* lifetime of a requestState */
  _Atomic bool hide_forbidden;  /* tools/list shows callable tools only */
  _Atomic bool check_output;    /* validate structuredContent */
  /* Limits (lib/limits.c). */
  _Atomic size_t max_result;        /* bytes one call's result may reach */
  _Atomic unsigned call_timeout_ms; /* each call's deadline; 0 = none */
  /* No call deadline needs a look before this time (CLOCK_MONOTONIC
   * microseconds; ULLONG_MAX = none), unless dirty says a call was added
   * or deferred since it was computed. */
  _Atomic unsigned long long deadline_hint_us;
  _Atomic bool deadline_dirty;
  _Atomic unsigned long timed_calls;      /* live calls with a deadline */
  _Atomic unsigned long long next_serial; /* of sessions, for rate keys */
  mcp__ratelimit rate;
};

/* Drops a reference to srv (a session ending); the last one frees it. */
void mcp__server_unref(mcp_server *srv);

/* Logs a formatted message through the server's log callback. */
void mcp__log(mcp_server *srv, mcp_log_level level, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

typedef enum mcp__state {
  MCP__STATE_NEW = 0,     /* waiting for initialize */
  MCP__STATE_INITIALIZED, /* initialize answered */
  MCP__STATE_READY        /* notifications/initialized received */
} mcp__state;

struct mcp_session {
  mcp_server *srv;
  mcp_principal principal;
  mcp_send_fn send;
  void *send_data;
  pthread_mutex_t lock;     /* guards sending, calls, refs */
  unsigned refs;            /* the owner's plus one per unfinished call */
  _Atomic bool closed;      /* freed by its owner, or sending failed: set
                               under lock, read without it where a stale
                               false is harmless (the send path checks
                               again under lock) */
  bool freed;               /* mcp_session_free was called (under lock) */
  _Atomic int state;        /* mcp__state */
  _Atomic int version;      /* mcp__version; valid from INITIALIZED */
  _Atomic bool modern_seen; /* a 2026-07-28 request came: omit null ids */
  mcp_call *calls;          /* unfinished calls */
  size_t ncalls;
  struct cJSON *client_caps; /* from initialize (legacy era) */
  long long next_request_id; /* ids of requests we send (legacy input) */
  _Atomic int log_level;     /* legacy logging/setLevel; -1 = not set */
  unsigned announced;        /* MCP__LISTEN_* initialize announced */
  char **subscribed;         /* legacy resources/subscribe URIs */
  size_t nsubscribed;
  struct mcp__listener *listeners; /* modern subscriptions/listen */
  unsigned long long serial;       /* rate-limit key of an anonymous
                                      caller; 0 until needed; under lock */
  mcp_session *next, *prev;        /* in srv->sessions */
};

/* A transport's per-request sink (mcp_session_receive_to), shared by the
 * request and the calls it starts; done is called when the last holder lets
 * go. */
typedef struct mcp__sink {
  mcp_sink sink;
  _Atomic unsigned refs;
  bool failed; /* under the session lock */
} mcp__sink;

/* A modern subscriptions/listen: its stream stays open (the sink is held)
 * until the client closes it or the session ends. Under s->lock. */
typedef struct mcp__listener {
  char *id; /* the listen request's raw id, the subscriptionId */
  size_t id_len;
  char *canon_id;
  mcp__sink *sink;
  unsigned flags; /* MCP__LISTEN_* */
  char **uris;    /* resourceSubscriptions */
  size_t nuris;
  struct mcp__listener *next;
} mcp__listener;

enum {
  MCP__LISTEN_TOOLS = 1,
  MCP__LISTEN_PROMPTS = 2,
  MCP__LISTEN_RESOURCES = 4
};

/* What changed, for mcp__broadcast. */
typedef enum mcp__change {
  MCP__CHANGED_TOOLS = MCP__LISTEN_TOOLS,
  MCP__CHANGED_PROMPTS = MCP__LISTEN_PROMPTS,
  MCP__CHANGED_RESOURCES = MCP__LISTEN_RESOURCES,
  MCP__CHANGED_RESOURCE = 8 /* one resource's contents (uri given) */
} mcp__change;

/* Tells every session that asked for it that something changed: legacy
 * sessions by their callback, modern listeners on their streams. Returns
 * how many were told, or MCP_ENOMEM. Never call with a lock held. */
int mcp__broadcast(mcp_server *srv, mcp__change what, const char *uri);

/* Frees a session's subscriptions and ends its listeners (their sinks are
 * released). Call with s->lock held; listeners' sinks are handed back in
 * *sinks (NULL-terminated, free with mcp__free) for release after it. */
void mcp__session_drop_subscriptions_locked(mcp_session *s, mcp__sink ***sinks);

void mcp__sink_ref(mcp__sink *k);
/* Drops a reference; at the last one calls done and frees. NULL is fine.
 * Never call with the session lock held (done may re-enter). */
void mcp__sink_release(mcp__sink *k);

/* Sends one message to k (NULL: the session's callback). A failing session
 * callback closes the session and cancels its calls; a failing sink only
 * stops that sink. Call with s->lock held. */
int mcp__send_locked(mcp_session *s, mcp__sink *k, const char *msg, size_t len);
/* The same, taking the session lock. */
int mcp__session_send(mcp_session *s, mcp__sink *k, const char *msg,
                      size_t len);
/* Drops one reference taken for a call; frees the session at zero. Call
 * with s->lock held; it is released. */
void mcp__session_unref_locked(mcp_session *s);

struct mcp_call {
  mcp_session *session;
  mcp__tool *tool;
  mcp__version version;
  char *id; /* raw request id, echoed as received; it, canon_id and
               progress_token live in the call's own block */
  size_t id_len;
  char *canon_id; /* canonical form, to match cancellations and duplicates */
  char *progress_token; /* raw JSON, NULL when the client asked for none */
  double last_progress;
  bool progressed;
  struct cJSON *arguments;   /* owned, unless args_pool is set */
  mcp__json_pool *args_pool; /* a reference to the pool of the message
                                arguments came from, or NULL */
  _Atomic bool cancelled;
  bool modern;        /* answered in the modern era's shapes */
  mcp__sink *sink;    /* where its messages go; NULL: the session's */
  int log_level;      /* modern: the request's logLevel, -1 = none */
  int kind;           /* mcp_call_kind */
  char *uri;          /* resources/read: the URI asked for */
  int role;           /* prompts: mcp_role of the next message */
  char *description;  /* prompts: the result's description */
  char *error_text;   /* prompts, resources: mcp_result_error's text */
  struct cJSON *caps; /* the client capabilities this call may use;
                         owned in the modern era, borrowed otherwise */
  /* Input required (lib/input.c). */
  struct cJSON *inputs;   /* key -> the client's answer; owned */
  struct cJSON *requests; /* key -> {method, params} asked this round */
  char *state;            /* the handler's state from the previous round */
  char *next_state;       /* set this round */
  unsigned missing_caps;  /* MCP__CAP_* the client did not declare */
  unsigned waiting;       /* legacy: client answers still outstanding */
  unsigned rounds;
  bool lost_input; /* legacy: an answer could not be kept (no memory) */
  int phase;       /* mcp__call_phase, under session->lock */
  int finish_rc;   /* rc given to an early mcp_call_finish */
  bool is_error;
  bool has_structured;
  int latched;      /* first builder error */
  mcp__buf content; /* content blocks, comma-separated; for a tool or a
                       resource they follow the reply's first head_len
                       bytes, written with the first block (see
                       mcp__call_result_len) */
  size_t head_len;
  mcp__buf structured;
  unsigned long long started_us;
  unsigned long long deadline_us; /* 0 = none; set under session->lock */
  bool timed_out; /* under session->lock: mcp_server_expire dealt with the
                     passed deadline (answered it, unless it had no memory
                     to; then the finish answers) */
  bool too_large; /* the result passed the server's maximum size */
  mcp_call *next, *prev; /* in session->calls */
};

typedef enum mcp__call_phase {
  MCP__CALL_RUNNING = 0,  /* the handler has not returned yet */
  MCP__CALL_FINISH_EARLY, /* mcp_call_finish came before the handler
                             returned MCP_DEFERRED */
  MCP__CALL_DEFERRED,     /* waiting for mcp_call_finish */
  MCP__CALL_WAITING_INPUT /* legacy: waiting for the client's answers */
} mcp__call_phase;

/* Client capabilities input requests depend on. */
enum {
  MCP__CAP_ELICITATION = 1,
  MCP__CAP_ELICITATION_URL = 2,
  MCP__CAP_SAMPLING = 4,
  MCP__CAP_ROOTS = 8,
  MCP__CAP_SAMPLING_TOOLS = 16
};

/* Builds a call for an allowed tools/call (copies id and progress token).
 * It takes ownership of arguments, or with args_pool (the pool of the
 * message they were detached from) a reference to that pool instead. */
int mcp__call_new(mcp_session *s, mcp__tool *tool, mcp__version v,
                  const char *id, size_t id_len, const char *canon_id,
                  const char *progress_token, struct cJSON *arguments,
                  mcp__json_pool *args_pool, mcp_call **out);
/* Bytes of result the handler built so far: its blocks and structured
 * content, without the reply's head. */
static inline size_t mcp__call_result_len(const mcp_call *c) {
  return c->content.len - c->head_len + c->structured.len;
}
/* Logs, for the author, that function refused a request of the handler of
 * c, and why (lib/call.c): the tool (prompt, resource), the function and
 * the rule, since an error code alone teaches nothing. */
void mcp__call_refused(const mcp_call *c, const char *function,
                       const char *why);
/* Lets go of what the handler built (blocks and structured content). */
void mcp__call_clear_result(mcp_call *c);
/* Frees a call that never ran (registration in the session failed). */
void mcp__call_free(mcp_call *c);
/* Unregisters and frees a call that was registered but never run (a
 * modern retry refused before its handler). */
void mcp__call_discard(mcp_call *c);
/* The same with s->lock held; the lock is released. */
void mcp__call_discard_locked(mcp_call *c);
/* Answers and frees a call after its handler returned rc (0 or an error).
 * With out NULL the reply is sent on the session (deferred calls); else it
 * is appended to *out for the caller to deliver (the receiving thread, so a
 * reply can join a batch). A cancelled call produces no reply. */
void mcp__call_complete(mcp_call *c, int rc, mcp__buf *out);
/* Starts a result object: "{" and, in the modern era, the members every
 * modern result carries ("resultType", "_meta" with serverInfo), each
 * followed by a comma. Members are then written with a trailing comma and
 * mcp__result_end closes the object. */
void mcp__result_begin(mcp__buf *b, const mcp_server *srv, bool modern,
                       const char *result_type);
int mcp__result_end(mcp__buf *b);
/* The ttlMs and cacheScope members of a cacheable modern result, each
 * followed by a comma. */
void mcp__put_cache(mcp__buf *b, const mcp_server *srv, bool private_);
/* Appends srv's Implementation object as version v shows it. */
void mcp__server_info(mcp__buf *b, const mcp_server *srv, mcp__version v);
/* Appends the error answering request id when uri names no resource:
 * -32002 up to 2025-11-25, -32602 in the modern era (SEP-2164), with
 * {"uri":uri} as data in both (lib/surface.c). Returns out's error. */
int mcp__rpc_resource_not_found(mcp__buf *out, const char *id, size_t id_len,
                                bool modern, const char *uri);

/* Runs a call's handler (again, for a later round) and deals with what it
 * returns, on the thread that drives the session; out as for
 * mcp__call_complete. */
void mcp__call_run(mcp_call *c, mcp__buf *out);

/* ---- input required (lib/input.c) ---------------------------------------- */
/* Checks a modern retry's requestState and inputResponses against the call
 * (tool, arguments, principal, expiry) and loads the verified answers and
 * state into it. Returns 0 or MCP_EINVAL (why in msg) or MCP_ENOMEM. */
int mcp__input_accept(mcp_call *c, const struct cJSON *params, char *msg,
                      size_t msglen);
/* Builds the modern InputRequiredResult reply for a call. */
int mcp__input_result(mcp_call *c, mcp__buf *out);
/* Legacy era: sends the round's requests to the client and parks the call.
 * Call with the session lock held. */
int mcp__input_send_locked(mcp_call *c);
/* Routes a client's response to the call waiting for it. Returns the call
 * when that answer was its last outstanding one (the caller then runs it
 * again), else NULL. */
mcp_call *mcp__input_response(mcp_session *s, const mcp__msg *m,
                              const struct cJSON *node);
/* Tells the client (unless the session is closed) that the requests a
 * parked call still waits for are cancelled. Call with the session lock
 * held. */
void mcp__input_cancel_locked(mcp_call *c);
/* Frees a call's input bookkeeping. */
void mcp__input_clear(mcp_call *c);

/* ---- limits (lib/limits.c) ------------------------------------------------
 * Result size: builders ask for room before they copy, so an oversized
 * result is refused before it is built, and what was built is freed. */
/* Bytes mcp__json_quote writes for s, quotes included (an upper bound). */
size_t mcp__quoted_len(const char *s);
/* Latches MCP_ELIMIT (and frees the result built so far) when more bytes
 * would take the call's result past the server's maximum. Returns 0 or the
 * latched code. */
int mcp__call_room(mcp_call *c, size_t more);
/* mcp__call_room for text once quoted, counted only when the room left is
 * less than six times its length (a bound for the quoted form). */
int mcp__call_room_text(mcp_call *c, const char *text);
/* The reply to a call whose result was too large: an isError result for a
 * tool, a JSON-RPC error otherwise. Logs for the author. */
void mcp__call_too_large(mcp_call *c, mcp__buf *out);
/* Deadlines: sets a new call's deadline from the server's call timeout,
 * counted from started (its receipt). */
void mcp__call_set_deadline(mcp_call *c, unsigned long long started);
/* Has the call's deadline passed? Any thread. */
bool mcp__call_late(const mcp_call *c);
/* The reply to a call that missed its deadline (isError "timeout" for a
 * tool, a JSON-RPC error otherwise), with the log line for the author. */
void mcp__call_timeout(mcp_call *c, mcp__buf *out);
/* Sends a notification of a running call (progress, log) where its
 * replies go, unless mcp_server_expire answered it already. */
void mcp__call_send(mcp_call *c, const char *msg, size_t len);

/* Emits the audit record of a call that was refused before it ran. */
void mcp__audit(mcp_server *srv, const char *tool, const mcp_principal *p,
                mcp_decision decision, const char *const *missing,
                bool is_error, bool failed, unsigned long long started_us);

#endif
