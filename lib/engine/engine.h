/* The engine core's private header (lib/engine): the server, its sessions
 * and calls, results, input rounds, the deadlines and the task record. It
 * sees every layer below (registry, policy, schema, rpc, json, base);
 * above it only the protocol's methods (lib/methods) see it, and the
 * transports (lib/stdio, lib/http) use the public API only. Not
 * installed. */
#ifndef MCP_LIB_ENGINE_H
#define MCP_LIB_ENGINE_H

#include <cjson/cJSON.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <string.h>

#include "mcp/mcp.h"

#include "base.h"

#include "rpc.h"

#include "policy.h"

#include "registry.h"

/* ---- server, sessions and calls (server.c, session.c, call.c) ------------ */
#include <pthread.h>

/* ---- the timer (call.c) ----------------------------------------------------
 * One heap of deadlines (srv->deadlines) holds every deadline of the
 * engine, each with its kind; its owner embeds the node. */
typedef enum mcp__deadline_kind {
  MCP__DEADLINE_CALL, /* a waiting call's timeout (mcp_call) */
  MCP__DEADLINE_TTL   /* a published task's time to live (its owner's) */
} mcp__deadline_kind;

typedef struct mcp__deadline {
  mcp__heap_node node;
  unsigned long long at_us; /* CLOCK_MONOTONIC; fixed while watched */
  mcp__deadline_kind kind;
  bool watched; /* in srv->deadlines: under deadline_lock */
  /* A TTL's owner: pin takes a reference to it (called under deadline_lock,
   * while the node is in the heap), due acts on the passed deadline and
   * drops that reference (no lock held); due must unwatch the node. */
  void (*pin)(struct mcp__deadline *d);
  void (*due)(struct mcp__deadline *d);
} mcp__deadline;

/* Puts d into srv's heap at at_us (if it is not there already), or takes
 * it out. Any lock of the order may be held: deadline_lock comes last. */
void mcp__deadline_watch(mcp_server *srv, mcp__deadline *d,
                         unsigned long long at_us);
void mcp__deadline_unwatch(mcp_server *srv, mcp__deadline *d);
/* The heap's order: the earlier deadline first. */
bool mcp__deadline_less(const mcp__heap_node *a, const mcp__heap_node *b);

struct mcp_server {
  char *name, *version, *title, *instructions;
  char *icons, *website_url;   /* icons rendered (extras.c); or NULL */
  unsigned char state_key[32]; /* HMAC key of requestState */
  pthread_mutex_t lock;        /* guards reg and sessions */
  mcp__registry reg;           /* tools */
  mcp__registry prompts;       /* prompts */
  mcp__registry resources;     /* resources with a fixed uri */
  mcp__registry templates;     /* resource templates, matched in order */
  mcp__registry skills;        /* skill entries, by their SKILL.md uri */
  mcp__list sessions;          /* every live session (mcp_session.link), for
                                  list_changed */
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
  /* Limits (limits.c). */
  _Atomic size_t max_result;        /* bytes one call's result may reach */
  _Atomic unsigned call_timeout_ms; /* each call's deadline; 0 = none */
  /* The one timer (lib/engine/call.c, "the timer"): every deadline the
   * engine keeps (a waiting call's timeout, a published task's TTL), least
   * first, each an mcp__deadline with its kind. mcp_server_next_expiry_ms
   * reads its least; mcp_server_expire drains what is due. deadline_lock
   * guards the heap and is the last lock taken (see the lock order). */
  pthread_mutex_t deadline_lock;
  mcp__heap deadlines;
  /* The heap's least deadline (CLOCK_MONOTONIC microseconds; ULLONG_MAX =
   * none), written under deadline_lock and read without it. */
  _Atomic unsigned long long next_deadline_us;
  _Atomic unsigned long long next_serial; /* of sessions, for rate keys */
  mcp__ratelimit rate;
  /* mcp_server_set_store: where the rate limit's tokens are taken, or NULL
   * for rate's own buckets (borrowed). node names this server in the keys
   * of anonymous callers, so that they differ across processes. */
  mcp_store *_Atomic store;
  char node[17];
  /* Changes go to the other processes sharing the store too (its events:
   * mcp__broadcast publishes, the server's listener hears theirs).
   * store_lock serialises mcp_server_set_store's listen and unlisten; it
   * is taken by nothing else, so never while a store delivers.
   * store_events: the store set has events and the server listens. */
  pthread_mutex_t store_lock;
  _Atomic bool store_events;
  /* Tasks on every node (task.c, task_remote.c): with a store that keeps
   * records, this server joined it as its node (under store_lock) for
   * node_lease_ms (mcp_server_set_node_lease), and keeps a record of each
   * task it runs there. */
  _Atomic unsigned node_lease_ms;
  mcp_store *joined;
  /* Where handlers run (mcp_server_set_executor): written once, before
   * has_executor is set (release), and read after it is seen (acquire). */
  mcp_executor executor;
  _Atomic bool has_executor;
  /* Tasks (lib/engine/task.c): every task record, oldest first. task_lock
   * guards them, the records' state and task_limits (the lock order is
   * below, after struct mcp_server). */
  pthread_mutex_t task_lock;
  mcp__list tasks; /* every record (mcp__task.link), oldest first */
  size_t ntasks;
  unsigned long long next_task_serial;
  mcp_task_limits task_limits;
  _Atomic unsigned task_listeners; /* listeners with taskIds, so that a task
                                      whose status changes looks for them
                                      only when there are some */
  /* 2025-11-25 tasks/result requests waiting for another node's task
   * (task.c's mcp__task_wait_remote), under task_lock. */
  struct mcp__remote_waits *remote_waits;
};

/* The lock order, one for the whole engine: a thread that holds several
 * takes them in this order, never the other way.
 *   1. srv->lock (registries, the session list);
 *   2. one home's lock (mcp__home.lock: a session's, s->home.lock, or a
 *      task record's own, where its call lives): never two homes' at
 *      once, so a task's call's lock and the lock of the session the task
 *      sends to are never held together;
 *   3. srv->task_lock (the task table and records): no home's lock is
 *      taken under it; what a task sends goes out after it, to a session
 *      pinned under it;
 *   4. srv->deadline_lock (the one timer), a leaf: nothing is taken under
 *      it.
 * The locks of the layers below (the rate limiter's, a JSON pool's) are
 * leaves of their own: nothing is taken under them. */

/* Drops a reference to srv (a session ending); the last one frees it. */
void mcp__server_unref(mcp_server *srv);

/* Logs a formatted message through the server's log callback. */
void mcp__log(mcp_server *srv, mcp_log_level level, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

typedef struct mcp__sink mcp__sink;

typedef enum mcp__state {
  MCP__STATE_NEW = 0,     /* waiting for initialize */
  MCP__STATE_INITIALIZED, /* initialize answered */
  MCP__STATE_READY        /* notifications/initialized received */
} mcp__state;

/* A call's home (call.c): what the calls made in one place share, and all
 * the call code reaches of that place. A session embeds one (the calls its
 * requests start); a task record embeds its own (the call that outlives the
 * request and the session that started it), with a copy of the caller's
 * principal and client capabilities. Whatever is truly a session's
 * (its transport, its sinks' framing) stays behind ops. */
typedef struct mcp__home mcp__home;
typedef struct mcp__home_ops {
  /* Sends a message that goes to no sink (the home's own peer), under the
   * home's lock: 0 or MCP_ECLOSED. NULL: the home has no peer, and such a
   * message is dropped. */
  int (*send_locked)(mcp__home *h, const char *msg, size_t len,
                     const mcp_send_info *info);
  /* The last reference went: the home's owner lets go of it. No lock
   * held. */
  void (*release)(mcp__home *h);
} mcp__home_ops;

struct mcp__home {
  const mcp__home_ops *ops;
  mcp_server *srv;
  mcp_principal principal;
  pthread_mutex_t lock;     /* guards sending, calls */
  _Atomic unsigned refs;    /* the owner's plus one per unfinished call;
                               changed under lock, except by
                               mcp_server_expire's pin (lib/engine/call.c),
                               taken while one of those calls holds a
                               reference */
  _Atomic bool closed;      /* its owner let go of it, or sending failed:
                               set under lock, read without it where a
                               stale false is harmless (the send path
                               checks again under lock) */
  bool freed;               /* its owner let go of it (under lock): nothing
                               is sent any more, to a sink either */
  _Atomic size_t executing; /* calls whose round the executor holds
                               (lib/engine/call.c) */
  mcp__list calls;          /* unfinished calls (mcp_call.link) */
  size_t ncalls;
  struct cJSON *client_caps; /* from initialize (legacy era) */
  long long next_request_id; /* ids of requests we send (legacy input) */
};

/* Sets up h for srv (a reference to srv is taken), with a copy of
 * principal and one reference, the owner's. Returns 0 or MCP_ENOMEM. */
int mcp__home_init(mcp__home *h, const mcp__home_ops *ops, mcp_server *srv,
                   const mcp_principal *principal);
/* Frees what h holds (after its last reference, or when it never had a
 * call). */
void mcp__home_fini(mcp__home *h);
/* Drops one reference (a call's, a pin's, the owner's); release comes at
 * zero. Call with h->lock held; it is released. */
void mcp__home_unref_locked(mcp__home *h);
/* The owner lets go of h: nothing more is sent, its calls are cancelled
 * (those parked for input end here) and the owner's reference is dropped.
 * No lock held. */
void mcp__home_close(mcp__home *h);
/* Marks every call of h cancelled and ends those parked for the client's
 * answers. Call with h->lock held; it is held again on return. */
void mcp__home_cancel_all_locked(mcp__home *h);
/* Sends one message to k (NULL: the home's own peer, through its ops),
 * with what a sink is told of it. A failing sink only stops that sink.
 * Call with h->lock held. */
int mcp__home_send_locked(mcp__home *h, mcp__sink *k, const char *msg,
                          size_t len, const mcp_send_info *info);

struct mcp_session {
  mcp__home home; /* its calls, principal, lock and client capabilities */
  mcp_send_fn send;
  void *send_data;
  _Atomic int state;        /* mcp__state */
  _Atomic int version;      /* mcp__version; valid from INITIALIZED */
  _Atomic bool modern_seen; /* a 2026-07-28 request came: omit null ids */
  _Atomic int log_level;    /* legacy logging/setLevel; -1 = not set */
  unsigned announced;       /* MCP__LISTEN_* initialize announced */
  char **subscribed;        /* legacy resources/subscribe URIs */
  size_t nsubscribed;
  struct mcp__listener *listeners;    /* modern subscriptions/listen */
  unsigned long long serial;          /* rate-limit and task-budget key of
                                         an anonymous caller; 0 until needed;
                                         under home.lock */
  mcp__list link;                     /* in srv->sessions */
  _Atomic(struct mcp__share *) share; /* kept in the store (share.c) */
  _Atomic bool moved;                 /* another process adopted it (share.c) */
};

/* A transport's per-request sink (mcp_session_receive_to), shared by the
 * request and the calls it starts; done is called when the last holder lets
 * go. */
struct mcp__sink {
  mcp_sink sink;
  _Atomic unsigned refs;
  bool failed; /* under the session (home) lock */
  /* Refused step-ups of calls answered through it, whose scopes the facts
   * of their replies name after the calls are gone: freed with the sink.
   * Under the session (home) lock. */
  struct mcp__stepup *held;
};

/* A modern subscriptions/listen: its stream stays open (the sink is held)
 * until the client closes it or the session ends. Under s->home.lock. */
typedef struct mcp__listener {
  char *id; /* the listen request's raw id, the subscriptionId */
  size_t id_len;
  char *canon_id;
  mcp__sink *sink;
  unsigned flags; /* MCP__LISTEN_* */
  char **uris;    /* resourceSubscriptions */
  size_t nuris;
  char **task_ids; /* taskIds: the tasks whose status it hears of */
  size_t ntask_ids;
  mcp_server *counted; /* the server whose task_listeners counts it */
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
 * sessions by their callback, modern listeners on their streams; and,
 * when the server's store has events, publishes the change so that the
 * other processes sharing it tell theirs. Returns how many were told here,
 * or MCP_ENOMEM. Never call with a lock held. */
int mcp__broadcast(mcp_server *srv, mcp__change what, const char *uri);
/* Sets how many records the in-process store st keeps (its table's bound,
 * evicted keys included; 65536 otherwise), for tests that meet it. Not
 * for another store (a no-op). Any thread. */
void mcp__store_local_cap(mcp_store *st, size_t max);

/* Makes st the server's store (NULL: none), listening to its events in
 * place of the previous one's. Any thread; not from a store's listener. */
void mcp__server_use_store(mcp_server *srv, mcp_store *st);
/* Sends notifications/tasks with detail (a DetailedTask's members, each
 * followed by a comma) to every listener that asked for task id, of a
 * session of its caller's (subject) that may use its tool. Returns
 * how many were told, or MCP_ENOMEM. Never call with a lock held. */
int mcp__broadcast_task(mcp_server *srv, const char *id, const char *detail,
                        size_t len, const char *subject, const mcp__tool *tool);
/* The same for another node's task (heard from the store), its tool named.
 * Only the listeners of subject's sessions (NULL: anonymous callers') are
 * told, and with hide-forbidden on, only those that may use its tool. */
int mcp__broadcast_remote_task(mcp_server *srv, const char *id,
                               const char *detail, size_t len,
                               const char *subject, const char *tool);
/* The default lease of a server's node in its store
 * (mcp_server_set_node_lease). */
#define MCP__NODE_LEASE_MS 10000u
/* What another server published about a task (an event whose "task" member
 * names what it asks or says: "cancel", "update" for the node running the
 * task; "changed" for listeners; "stored" for tasks/result waiting on
 * another node), done here (task.c). Called on the store's delivering
 * thread. */
void mcp__task_event(mcp_server *srv, const struct cJSON *event);
/* Publishes event (a JSON object's text) to the other processes sharing
 * the server's store, when it has events; logs why not otherwise.
 * Returns 0 or a negative MCP_E* code. No lock held. */
int mcp__publish(mcp_server *srv, const char *what, const char *event,
                 size_t len);
/* The server's store when it keeps records (a borrowed pointer, valid
 * while the embedder keeps it set), else NULL. */
mcp_store *mcp__records(mcp_server *srv);

/* A shared session's record (share.c): mcp__session_changed writes the
 * session's state again after a change (initialize, notifications/
 * initialized, logging/setLevel, resources/subscribe and unsubscribe);
 * mcp__session_touch renews it when half its TTL passed; both do nothing
 * for a session that is not shared. No lock held. mcp__session_share_drop
 * lets go of the share as the session is destroyed. */
typedef struct mcp__share mcp__share;
void mcp__session_changed(mcp_session *s);
void mcp__session_touch(mcp_session *s);
void mcp__session_share_drop(mcp_session *s);
/* What another server published about a shared session (an event whose
 * "session" member says what: "adopted"), done here: a session this server
 * shares under that key is marked moved. Called on the store's delivering
 * thread. */
void mcp__session_event(mcp_server *srv, const struct cJSON *event);

/* Frees a session's subscriptions and ends its listeners (their sinks are
 * released). Call with s->home.lock held; listeners' sinks are handed back in
 * *sinks (NULL-terminated, free with mcp__free) for release after it. */
void mcp__session_drop_subscriptions_locked(mcp_session *s, mcp__sink ***sinks);

void mcp__sink_ref(mcp__sink *k);
/* Drops a reference; at the last one calls done and frees. NULL is fine.
 * Never call with the session lock held (done may re-enter). */
void mcp__sink_release(mcp__sink *k);

/* Sends one message to k (NULL: the session's callback), with what a sink
 * is told of it. A failing session callback closes the session and cancels
 * its calls; a failing sink only stops that sink. Call with s->home.lock
 * held. */
int mcp__send_locked(mcp_session *s, mcp__sink *k, const char *msg, size_t len,
                     const mcp_send_info *info);
/* The same, taking the session lock. */
int mcp__session_send(mcp_session *s, mcp__sink *k, const char *msg, size_t len,
                      const mcp_send_info *info);
/* The facts of the messages that answer nothing. */
extern const mcp_send_info mcp__sent_notification, mcp__sent_request;
/* Drops one reference to s (mcp__home_unref_locked); frees the session at
 * zero. Call with s->home.lock held; it is released. */
void mcp__session_unref_locked(mcp_session *s);

/* A call's owner: what outlives a request through the call (a task), told
 * of the call's life through these functions, each given owner_data. The
 * call machinery (call.c) calls them and knows nothing else of the owner;
 * the call's state machine stays the only one. */
struct mcp__outcome;
typedef struct mcp__call_owner {
  /* The call becomes the owner's (a task): its answer is no longer the
   * request's. Under the call's home's lock. */
  void (*publish_locked)(void *owner_data);
  /* Whether it has (publish_locked came). Any thread. */
  bool (*published)(void *owner_data);
  /* A round of the published call asked for input (c->requests): the
   * owner takes the requests and parks c (mcp__call_park_locked). Returns
   * 0, or an error when c was not parked (then it is completed). No lock
   * held. */
  int (*asks)(void *owner_data, mcp_call *c);
  /* The published call's outcome. Under the call's home's lock. */
  void (*settled_locked)(void *owner_data, const struct mcp__outcome *o);
  /* The task id the related-task _meta of the call's messages names, or
   * NULL for none. Under the call's home's lock. */
  const char *(*related)(void *owner_data);
  /* A notification of the call (progress, log), written: the owner sends it
   * where it goes, or drops it. No lock held. */
  void (*notify)(void *owner_data, const char *msg, size_t len);
  /* The call is gone; the owner's hold on it ends. No lock held. */
  void (*released)(void *owner_data);
} mcp__call_owner;

struct mcp_call {
  mcp__home *home; /* where it lives: a session's, or its task's own */
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
  /* Input required (input.c). */
  struct cJSON *inputs;   /* key -> the client's answer; owned */
  struct cJSON *requests; /* key -> {method, params} asked this round */
  char *state;            /* the handler's state from the previous round */
  char *next_state;       /* set this round */
  unsigned missing_caps;  /* MCP__CAP_* the client did not declare */
  unsigned waiting;       /* legacy: client answers still outstanding */
  unsigned rounds;
  bool lost_input; /* legacy: an answer could not be kept (no memory) */
  int phase;       /* mcp__call_phase, under home->lock */
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
  /* phase, deadline_us, timed_out and watched are written in
   * lib/engine/call.c only (its state machine section). */
  unsigned long long started_us;
  /* 0 = none. Atomic: set when the call is made, and lifted (under
   * home->lock) when it becomes a task, while mcp_call_cancelled, which
   * any thread may call, reads it without a lock. */
  _Atomic unsigned long long deadline_us;
  bool timed_out;         /* under home->lock: mcp_server_expire dealt with the
                             passed deadline (answered it, unless it had no memory
                             to; then the finish answers) */
  mcp__deadline deadline; /* its timeout in srv->deadlines, while it waits
                             on another thread (watched: under
                             home->lock and srv->deadline_lock both) */
  bool too_large;         /* the result passed the server's maximum size */
  int error_code;         /* the JSON-RPC error code of the reply built, or 0 */
  bool reply_is_error;    /* the result built says "isError":true */
  char ran_under[64];     /* mcp_call_execute's name for where it ran */
  /* The hints the call runs under (mcp_call_hints, the guard, the audit
   * record): its tool's resolver's for its arguments, evaluated before it
   * ran (lib/methods/tools.c), when resolved; else its tool's static ones. */
  bool resolved;
  mcp__hints hints;
  /* The rate limit through a store (mcp_server_set_store): the key and
   * limit its token is taken with before the first round, the key freed
   * once the store answered (lib/engine/call.c, "the rate wait"); and a
   * refusal made for the call before its handler ran, answered as a tool
   * error and audited as refusal_decision. */
  char *rate_key;
  unsigned rate_calls, rate_per;
  char *refusal;
  int refusal_decision; /* mcp_decision */
  bool refusal_failed;
  /* Trust annotations (trust.c): the result's labels (MCP_TRUST_*) and
   * evidenceRef (rendered, owned; NULL for none), and those the handler
   * set for the next content block. */
  unsigned trust, next_trust;
  char *trust_evidence, *next_evidence;
  struct mcp__stepup *stepup; /* the handler's refused step-up
                                 (mcp_call_require_scopes), or NULL */
  /* mcp_call_report_effect's lines, newest first, added from any thread;
   * read by the audit, freed with the call. effects_lock is a leaf: held
   * for the list only (the executor that adds may run while the call's
   * worker is stopped holding any other lock). */
  pthread_mutex_t effects_lock;
  struct mcp__effect_line *effects;
  unsigned neffects;
  /* Its owner (a task, for a call that is or may become one: its home is
   * the task's own, its sink the task's), or NULL: see mcp__call_owner. */
  const struct mcp__call_owner *owner;
  void *owner_data;
  mcp__list link; /* in home->calls */
};

typedef enum mcp__call_phase {
  MCP__CALL_RUNNING = 0,   /* the handler has not returned yet */
  MCP__CALL_FINISH_EARLY,  /* mcp_call_finish came before the handler
                              returned MCP_DEFERRED */
  MCP__CALL_DEFERRED,      /* waiting for mcp_call_finish */
  MCP__CALL_WAITING_INPUT, /* legacy: waiting for the client's answers */
  MCP__CALL_QUEUED,        /* handed to the executor, waiting for its
                              mcp_call_execute */
  MCP__CALL_WAITING_RATE   /* waiting for the store's answer to its rate
                              take, before its first round */
} mcp__call_phase;

/* Client capabilities input requests depend on. */
enum {
  MCP__CAP_ELICITATION = 1,
  MCP__CAP_ELICITATION_URL = 2,
  MCP__CAP_SAMPLING = 4,
  MCP__CAP_ROOTS = 8,
  MCP__CAP_SAMPLING_TOOLS = 16
};

/* Builds a call for an allowed tools/call (copies id and progress token),
 * received at started (mcp__now_us), from which its deadline counts. It
 * takes ownership of arguments, or with args_pool (the pool of the message
 * they were detached from) a reference to that pool instead. */
int mcp__call_new(mcp__home *h, mcp__tool *tool, mcp__version v, const char *id,
                  size_t id_len, const char *canon_id,
                  const char *progress_token, struct cJSON *arguments,
                  mcp__json_pool *args_pool, unsigned long long started,
                  mcp_call **out);
/* "tool", "prompt" or "resource", for messages about c. */
const char *mcp__call_noun(const mcp_call *c);
/* The call's state machine (lib/engine/call.c), all under
 * c->home->lock. Marks c cancelled: its client cancelled it, or its
 * session ended or failed. */
void mcp__call_cancel_locked(mcp_call *c);
/* Legacy input: c's requests went to the client; it waits for the
 * answers (and its deadline is watched). */
void mcp__call_park_locked(mcp_call *c);
/* Takes c, if it waits for the client's input, out of waiting: the client
 * is told its unanswered requests are cancelled. Returns whether it was
 * waiting; the caller must then, after the lock, run it again (its answers
 * came) or complete it (mcp__call_complete), as no other thread will. */
bool mcp__call_unpark_locked(mcp_call *c);
/* Has the call's deadline passed? Any thread. */
bool mcp__call_late(const mcp_call *c);
/* Sends a notification of a running call (method, with the members of
 * its params) where its replies go, unless mcp_server_expire answered it
 * already; a 2025-11-25 task's carries the related-task _meta. Returns 0
 * or MCP_ENOMEM. */
int mcp__call_notify(mcp_call *c, const char *method, const mcp__buf *params);
/* How a call that could not give its result is answered: a
 * tool with a result whose isError is true (the model can act on it), a
 * prompt or a resource with a JSON-RPC internal error; both say text. */
void mcp__call_failure_reply(mcp_call *c, mcp__buf *out, const char *text);
/* Bytes of result the handler built so far: its blocks and structured
 * content, without the reply's head. */
static inline size_t mcp__call_result_len(const mcp_call *c) {
  return c->content.len - c->head_len + c->structured.len;
}
/* Logs, for the author, that function refused a request of the handler of
 * c, and why (call.c): the tool (prompt, resource), the function and
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
/* The same with c->home->lock held; the lock is released. */
void mcp__call_discard_locked(mcp_call *c);
/* Answers and frees a call after its handler returned rc (0 or an error).
 * With out NULL the reply is sent on the session (deferred calls); else it
 * is appended to *out for the caller to deliver (the receiving thread, so a
 * reply can join a batch), and what a sink is told of it set in *facts. A
 * cancelled call produces no reply. */
void mcp__call_complete(mcp_call *c, int rc, mcp__buf *out,
                        mcp_send_info *facts);
/* Starts a result object: "{" and, in the modern era, the members every
 * modern result carries ("resultType", "_meta" with serverInfo), each
 * followed by a comma. Members are then written with a trailing comma and
 * mcp__result_end closes the object. */
void mcp__result_begin(mcp__buf *b, const mcp_server *srv, bool modern,
                       const char *result_type);
/* The same, with the whole Implementation object in _meta (full, for
 * server/discover) or its short form (every other result: name, version
 * and title, not the icons). */
void mcp__result_begin_info(mcp__buf *b, const mcp_server *srv, bool modern,
                            const char *result_type, bool full);
/* mcp__result_begin with meta (a member of _meta, without braces, or
 * NULL) in the result's _meta, in either era. */
void mcp__result_begin_meta(mcp__buf *b, const mcp_server *srv, bool modern,
                            const char *result_type, const char *meta);
int mcp__result_end(mcp__buf *b);
/* The ttlMs and cacheScope members of a cacheable modern result, each
 * followed by a comma. */
void mcp__put_cache(mcp__buf *b, const mcp_server *srv, bool private_);
/* Appends srv's Implementation object as version v shows it: title from
 * 2025-06-18; icons and websiteUrl from 2025-11-25, when full (initialize
 * and server/discover; every modern result's _meta carries the rest). */
void mcp__server_info(mcp__buf *b, const mcp_server *srv, mcp__version v,
                      bool full);
/* Appends the error answering request id when uri names no resource:
 * -32002 up to 2025-11-25, -32602 in the modern era (SEP-2164), with
 * {"uri":uri} as data in both (surface.c). Returns the code written
 * (out's error, as always, latches a failure). */
int mcp__rpc_resource_not_found(mcp__buf *out, const char *id, size_t id_len,
                                bool modern, const char *uri);

/* Runs a call's handler (again, for a later round) and deals with what it
 * returns, on the thread that drives the session; out and facts as for
 * mcp__call_complete. */
void mcp__call_run(mcp_call *c, mcp__buf *out, mcp_send_info *facts);
/* Sets c's hints from its tool's resolver, for its arguments and its
 * home's principal (the static ones stay when the resolver refuses). */
void mcp__call_resolve_hints(mcp_call *c);
/* Makes c, which has a task record, a task now (publishes the record) and
 * lifts its call deadline: the task's TTL bounds it instead. Takes its
 * home's lock. */
void mcp__call_become_task(mcp_call *c);

/* ---- input required (input.c) -------------------------------------------- */
/* Checks a modern retry's requestState and inputResponses against the call
 * (tool, arguments, principal, expiry) and loads the verified answers and
 * state into it. Returns 0 or MCP_EINVAL (why in msg) or MCP_ENOMEM. */
int mcp__input_accept(mcp_call *c, const struct cJSON *params, char *msg,
                      size_t msglen);
/* Builds the modern InputRequiredResult reply for a call. */
int mcp__input_result(mcp_call *c, mcp__buf *out);
/* Legacy era: sends the round's requests to the client and parks the call.
 * Call with c->home->lock held. */
int mcp__input_send_locked(mcp_call *c);
/* Routes a client's response, which came on the session whose home is h,
 * to the call waiting for it (or, failing that, to the task that asked:
 * mcp__task_response). Returns the call when that answer was its last
 * outstanding one (the caller then runs it again), else NULL. */
mcp_call *mcp__input_response(mcp__home *h, const mcp__msg *m,
                              const struct cJSON *node);
/* Tells the client (unless the call's home is closed) that the requests a
 * parked call still waits for are cancelled. Call with c->home->lock
 * held. */
void mcp__input_cancel_locked(mcp_call *c);
/* Frees a call's input bookkeeping. */
void mcp__input_clear(mcp_call *c);
/* The one implementation of a round's requests to a client, for a call's
 * legacy round and a 2025-11-25 task's alike (whoever keeps them: the call,
 * or the task record that outlives it).
 * Numbers each entry of requests (key -> {method, params}) with h's next
 * request id, kept in the entry as "id", and writes its text, with the
 * related-task _meta naming related unless it is NULL, into texts, each
 * followed by a NUL; *n counts them. Call with h->lock held. Returns 0 or
 * MCP_ENOMEM. */
int mcp__input_number_locked(mcp__home *h, struct cJSON *requests,
                             const char *related, mcp__buf *texts, size_t *n);
/* Whether entry (numbered by mcp__input_number_locked, not yet answered)
 * was sent under id. */
bool mcp__input_sent_as(const struct cJSON *entry, long long id);
/* The answer a client's response node gives entry: its result when it has
 * the shape entry's method asks for, else NULL (an error, or a wrong shape,
 * is no answer: the handler sees NULL and may ask again). */
const struct cJSON *mcp__input_answer(const struct cJSON *entry,
                                      const struct cJSON *node);
/* notifications/cancelled, for reason, of every entry of requests still
 * numbered (unanswered), each followed by a NUL into b. */
void mcp__input_withdraw(mcp__buf *b, const struct cJSON *requests,
                         const char *reason);
/* NULL when answer has the shape of the result of a request of method
 * (ElicitResult, CreateMessageResult, ListRootsResult), else what is
 * wrong with it. */
const char *mcp__input_problem(const char *method, const struct cJSON *answer);

/* ---- limits (limits.c) ---------------------------------------------------
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

/* One line of mcp_call_report_effect; a call keeps MCP__EFFECT_LINES. */
#define MCP__EFFECT_LINES 64
struct mcp__effect_line {
  struct mcp__effect_line *next;
  char text[];
};

/* Emits the audit record of a tools/call; ran_under names where its
 * handler ran (mcp_call_execute), NULL for the session's thread or not at
 * all; hints are those it ran under, NULL when it did not run; effects,
 * its executor's reports (NULL-terminated; NULL: none). */
void mcp__audit(mcp_server *srv, const char *tool, const mcp_principal *p,
                mcp_decision decision, const char *const *missing,
                bool is_error, bool failed, unsigned long long started_us,
                const char *ran_under, const mcp__hints *hints,
                const char *const *effects);

/* ---- replies (session.c) ------------------------------------------------- */
/* Where replies to one incoming message go: straight to the peer, or into
 * the array answering a 2025-03-26 batch. */
typedef struct mcp__reply_ctx {
  mcp__sink *sink; /* where replies go; NULL: the session's callback */
  mcp__buf *batch; /* NULL when not in a batch */
  size_t nbatch;
  int err; /* first failure to send or to build a reply */
  /* What the sink is told of the reply being built: filled by whoever
   * decides it (the error's code, a refusal's scopes, an audited call's
   * decision), sent with it by mcp__reply_buf, which then clears it. */
  mcp_send_info facts;
} mcp__reply_ctx;

/* mcp__audit for a tools/call of s answered before its handler ran (a
 * refusal, a limit, a failure), which also marks the reply being built in
 * ctx as that audited call's, so its sink is told the decision. */
void mcp__audit_reply(mcp_session *s, mcp__reply_ctx *ctx, const char *tool,
                      mcp_decision decision, const char *const *missing,
                      bool is_error, bool failed,
                      unsigned long long started_us);

/* One request as the engine serves it: its envelope, and the era and
 * version whose schema shapes the reply. Legacy requests take them from
 * the session; modern ones carry them in their own _meta. */
typedef struct mcp__req {
  const mcp__msg *m;
  const cJSON *params; /* never NULL: an empty object stands in */
  cJSON *params_node;  /* the mutable node, NULL when absent */
  mcp__version v;
  bool modern;
  const cJSON *caps;    /* client capabilities */
  int log_level;        /* requested log level, -1 = none: modern from _meta,
                           legacy from logging/setLevel */
  const char *canon_id; /* methods that start a call: the id's
                           canonical text, checked unused */
  unsigned long long started_us; /* when dispatch began (audit, deadline) */
} mcp__req;

/* Sends b (a whole message) where ctx says, or adds it to the batch; frees
 * b. */
void mcp__reply_buf(mcp_session *s, mcp__reply_ctx *ctx, mcp__buf *b);
void mcp__reply_error(mcp_session *s, mcp__reply_ctx *ctx, const char *id,
                      size_t id_len, int code, const char *message,
                      const char *data);
/* An error addressed to r; data is JSON text or NULL. */
void mcp__req_error(mcp_session *s, mcp__reply_ctx *ctx, const mcp__req *r,
                    int code, const char *message, const char *data);
/* Writes into b the whole reply to r whose result's members are in body
 * (freed), with the era's common members of resultType type in front (as
 * mcp__reply_result_info sends it). */
void mcp__result_text(mcp_server *srv, const mcp__req *r, mcp__buf *body,
                      const char *type, bool full, mcp__buf *b);
/* Sends a result whose members (each with a trailing comma) are in body;
 * the era's common members are added in front. Frees body. */
void mcp__reply_result(mcp_session *s, mcp__reply_ctx *ctx, const mcp__req *r,
                       mcp__buf *body);
/* The same, with the era's common members of resultType type in front,
 * and the whole serverInfo when full (server/discover), else its short
 * form. */
void mcp__reply_result_info(mcp_session *s, mcp__reply_ctx *ctx,
                            const mcp__req *r, mcp__buf *body, const char *type,
                            bool full);
/* Runs call (again, for a later round) on this thread and sends its reply,
 * if it has one yet, where ctx says. */
void mcp__reply_call(mcp_session *s, mcp__reply_ctx *ctx, mcp_call *call);
/* The same with another resultType in the modern era ("task"). */
void mcp__reply_result_as(mcp_session *s, mcp__reply_ctx *ctx,
                          const mcp__req *r, const char *result_type,
                          mcp__buf *body);
/* Answers r with a tool result whose isError is true and whose one text
 * block says text (a refusal the model can act on). */
void mcp__reply_tool_error(mcp_session *s, mcp__reply_ctx *ctx,
                           const mcp__req *r, const char *text);
/* -32602 "Invalid params: <why>". */
void mcp__reply_invalid_params(mcp_session *s, mcp__reply_ctx *ctx,
                               const mcp__req *r, const char *why);

/* ---- outcomes and the task wire (call.c, task_wire.c) ---------------------
 * A call's outcome is handed on as facts, never as its reply's text: call.c
 * fills an mcp__outcome where it builds the reply, and the writers of what
 * a task sends (task_wire.c) are pure functions of facts, as a frame packer
 * is: none reads back or splices into a message built elsewhere. */
typedef struct mcp__outcome {
  bool error;    /* a JSON-RPC error object, not a result */
  bool is_error; /* a result whose isError is true (a tool's failure) */
  int code;      /* error: its JSON-RPC code; 0 otherwise */
  /* The result's or the error object's members, as built, without its
   * braces (borrowed: valid while the owner is told of it). */
  const char *members;
  size_t len;
} mcp__outcome;

/* The related-task _meta member (no comma) naming task_id. */
void mcp__wire_related(mcp__buf *b, const char *task_id);
/* A request to the client (method and params of the handler's request,
 * numbered id), with the related-task _meta naming task_id in its params
 * unless task_id is NULL. Sets b->err when out of memory. */
void mcp__wire_request(mcp__buf *b, const char *task_id,
                       const struct cJSON *method, const struct cJSON *params,
                       long long id);
/* An error object's members: code and message. */
void mcp__wire_error_members(mcp__buf *b, int code, const char *message);

/* ---- trust annotations (trust.c) -------------------------------------------
 * The io.modelcontextprotocol/trust-annotations extension's labels. */
#define MCP__TRUST_EXTENSION "io.modelcontextprotocol/trust-annotations"
/* Appends to meta the result-level member of c's _meta, or nothing when
 * there is nothing to say or c's client did not negotiate the extension:
 * the handler's labels, and an open-world call's untrusted unless the
 * handler vouched for its result. */
void mcp__trust_result_put(const mcp_call *c, mcp__buf *meta);
/* Writes the next block's ,"_meta":{...} (its labels) to b when the
 * client negotiated the extension, and forgets them. */
void mcp__trust_block_end(mcp_call *c, mcp__buf *b);
void mcp__trust_clear(mcp_call *c);

/* ---- step-up (stepup.c) ---------------------------------------------------
 * A handler's refused mcp_call_require_scopes: the call's reply, facts and
 * audit record are then the refusal's (call.c). */
typedef struct mcp__stepup {
  mcp__decision d; /* MCP_DECISION_DENIED_SCOPE: d.required is scopes,
                      d.missing points into it */
  char **scopes;   /* every scope the call needs: its tool's, then those
                      the handler asked for; NULL-terminated, owned */
  struct mcp__stepup *next; /* in its sink's held list */
} mcp__stepup;
/* Frees u and every step-up after it in its list. */
void mcp__stepup_free(mcp__stepup *u);

/* ---- the task record, as the rest of the core sees it (task.c, task.h) ----
 * A task is its call's owner (mcp__call_owner); what its record offers the
 * tasks methods, and the writers of its wire, are in task.h. */
typedef struct mcp__task mcp__task;

/* A 2025-11-25 client's response (m) to a task's input request sent on
 * the session whose home is h:
 * takes the answer, and runs the task's next round when it was the last
 * one awaited. Returns whether the response was a task's. No lock held. */
bool mcp__task_response(mcp__home *h, const mcp__msg *m,
                        const struct cJSON *node);
/* Forgets every task, cancelling those still running (mcp_server_free). */
void mcp__tasks_drop_all(mcp_server *srv);
/* The task limits' defaults, and the table's setup and teardown. */
int mcp__tasks_init(mcp_server *srv);
void mcp__tasks_fini(mcp_server *srv);

/* Frees a listener that never joined its session. NULL does nothing. */
void mcp__listener_free(mcp__listener *l);
/* The caller whose view is filtered (hide-forbidden on), or NULL. */
const mcp_principal *mcp__visible_to(mcp_session *s);
/* A new reference to the entry of r named name, or NULL when there is none
 * or it is hidden from visible (non-NULL). */
mcp__tool *mcp__find_visible(mcp_server *srv, const mcp__registry *r,
                             const char *name, const mcp_principal *visible);
/* Finds what serves uri: the resource registered under it, else the first
 * matching template (its variables in *vars unless vars is NULL), passing
 * over what is hidden from visible (non-NULL). A new reference, or NULL
 * with *rc MCP_ENOENT or MCP_ENOMEM (server.c). */
mcp__tool *mcp__find_resource(mcp_server *srv, const char *uri,
                              const mcp_principal *visible, struct cJSON **vars,
                              int *rc);
/* Ends the listener whose canonical id is canon, if any (a client's
 * notifications/cancelled); returns its sink for release, or NULL. Call
 * with s->home.lock held. */
mcp__sink *mcp__listener_cancel_locked(mcp_session *s, const char *canon);
typedef enum mcp__feature {
  MCP__FEATURE_NONE = -1, /* always offered */
  MCP__FEATURE_PROMPTS,
  MCP__FEATURE_RESOURCES,
  MCP__FEATURE_COMPLETIONS,
  MCP__FEATURE_SKILLS,     /* the io.modelcontextprotocol/skills extension */
  MCP__FEATURE_TASKS,      /* a tool with task support: 2025-11-25's tasks, and
                              the io.modelcontextprotocol/tasks extension */
  MCP__FEATURE_RESOLUTION, /* a tool with a resolver: the
                              io.modelcontextprotocol/tool-resolution
                              extension */
  MCP__FEATURE_TRUST       /* a tool, whose results may carry labels: the
                              io.modelcontextprotocol/trust-annotations
                              extension */
} mcp__feature;
/* Does the server offer f now (something of it is registered)? */
bool mcp__offers(mcp_server *srv, mcp__feature f);

/* Log level names of the protocol, indexed by level. */
extern const char *const mcp__log_levels[8];

#endif
