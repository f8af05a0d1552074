/* Private declarations of the Streamable HTTP transport (lib/http).
 *
 * The transport is built on the public API of mcp.h only, like a transport
 * an embedder could write: its include path holds the base, json and rpc
 * layers and the JWT verifier, never the engine's header. Its memory comes
 * from mcp_malloc, mcp_calloc and mcp_realloc (the base layer's copy in
 * libmcp_http allocates through them too) and goes back with mcp_free, so
 * the embedder's allocator (mcp_set_allocator) sees every block and a test
 * can fail any.
 *
 * Objects:
 *  - mcp_http: the daemon, its options, the session table and the list of
 *    streams attached to a connection (for keep-alives and stop).
 *  - mcp__http_session: one legacy-era session (Mcp-Session-Id): its engine
 *    session, the SSE streams kept for Last-Event-ID resumption and the
 *    standalone GET stream.
 *  - mcp__http_stream: where the messages caused by one POST go (the
 *    engine's sink), or the standalone GET stream. It outlives its HTTP
 *    connection while the engine may still send to it.
 *  - mcp__http_req: one HTTP request (libmicrohttpd's con_cls).
 *
 * Locks, always taken in this order, never the other way round:
 *   session->drive  (one thread drives an engine session at a time)
 *   engine locks    (inside mcp_session_* calls)
 *   http->lock      (session table, session counters and stream lists,
 *                    live stream list, stopping)
 *   stream->lock    (one stream's state and buffers)
 *   libmicrohttpd's own locks (MHD_suspend_connection)
 * So: no engine function is called while http->lock or a stream lock is
 * held, and MHD_resume_connection is called with no lock of ours held. */
#ifndef MCP_HTTP_INT_H
#define MCP_HTTP_INT_H

#include <microhttpd.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "base.h"
#include "mcp/http.h"
#include "rpc.h"

struct MHD_Connection;
struct MHD_Daemon;

typedef struct mcp__http_hub mcp__http_hub;
typedef struct mcp__http_session mcp__http_session;
typedef struct mcp__http_stream mcp__http_stream;
typedef struct mcp__http_req mcp__http_req;
typedef struct mcp__http_auth mcp__http_auth;

/* ---- the server ---------------------------------------------------------- */

/* The longest node id (mcp_http_options.node_id). */
#define MCP__HTTP_NODE_MAX 32

/* Whether c may be in a session id: base64url, the alphabet of its random
 * part, and of a node id (its "NODE." prefix). */
static inline bool mcp__http_id_char(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
         (c >= '0' && c <= '9') || c == '_' || c == '-';
}

struct mcp_http {
  mcp_server *srv;
  struct MHD_Daemon *daemon;
  mcp__http_hub *hub;
  int loop_fd; /* external loop: epoll set of libmicrohttpd's and the hub's
                  descriptors; -1 otherwise */

  /* Options, copied and defaulted. */
  char *path;
  char **hosts, **origins; /* NULL-terminated */
  size_t max_body;
  unsigned idle_s, max_sessions, max_inflight, keepalive_s;
  size_t replay_events;
  bool prefer_sse, disable_get, external;
  bool find_hidden;        /* look for header bytes libmicrohttpd hid (NUL) */
  mcp_principal principal; /* every caller's, without auth */
  char *principal_subject;
  char **principal_scopes;
  mcp__http_auth *auth; /* OAuth resource server (http_auth.c); NULL = off */
  struct mcp__http_tls *tls; /* HTTPS (http_tls.c); NULL = plain */
  uint16_t port;
  char node[MCP__HTTP_NODE_MAX + 2]; /* "NODE." prefix of session ids, or "" */
  size_t sid_len;                    /* of every session id minted here */

  pthread_mutex_t lock;
  /* Session table: chained hash of published sessions. nsessions also
   * counts sessions reserved by an initialize in progress. */
  mcp__list *buckets; /* heads of mcp__http_session.link */
  size_t nbuckets, nsessions;
  mcp__list live; /* streams attached to a connection, by their live link */
  bool stopping;

  /* Housekeeping (keep-alives, idle expiry): a timer thread, or
   * mcp_http_run in external-loop mode. */
  pthread_t timer;
  bool timer_started;
  pthread_cond_t wake;
  uint64_t next_tick_ms;

  /* The thread in mcp_http_start, and the last message libmicrohttpd gave
   * on it: why starting failed. Only that thread writes or reads them,
   * while starting is true; start_message is the first error logged then,
   * for mcp_server_errmsg. */
  pthread_t starter;
  bool starting, start_reported;
  char start_error[160];
  char start_message[512];
};

/* Milliseconds of CLOCK_MONOTONIC (the base layer's clock). */
static inline uint64_t mcp__http_now_ms(void) { return mcp__now_us() / 1000; }

/* Writes a log line through the transport's logger (standard error for
 * warnings and errors). */
void mcp__http_log(const mcp_http *http, mcp_log_level level, const char *fmt,
                   ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* ---- HTTPS (http_tls.c) ----------------------------------------------------
 */

/* Certificates in one chain, at most. */
#define MCP__HTTP_TLS_CHAIN 8

typedef struct mcp__http_tls mcp__http_tls;

/* Loads tls's pair into h->tls. Returns 0, or MCP_EINVAL, MCP_EIO or
 * MCP_ENOMEM with why (n bytes) saying which. */
int mcp__http_tls_open(mcp_http *h, const mcp_http_tls *tls, char *why,
                       size_t n);
/* Frees h->tls and every pair it held. */
void mcp__http_tls_free(mcp_http *h);
/* Starts h's daemon speaking TLS, as MHD_start_daemon with these
 * callbacks (h is each one's cls) and items would: the certificate is
 * chosen at each handshake, from the connection's server. */
struct MHD_Daemon *mcp__http_tls_daemon(mcp_http *h, unsigned flags,
                                        uint16_t port,
                                        MHD_AccessHandlerCallback on_request,
                                        MHD_RequestCompletedCallback done,
                                        MHD_LogCallback log,
                                        struct MHD_OptionItem *items);

/* ---- header checks (http_check.c): pure functions on header values ------- */

/* The allowlists used when the options give none. */
extern const char *const mcp__http_default_hosts[];

/* True when a Host header value (name or literal, optional port) matches an
 * entry of list. Entries without a port allow any port. */
bool mcp__http_host_allowed(const char *const *list, const char *value,
                            size_t len);

/* True when an Origin header value matches list: an entry with "://" is a
 * whole origin; any other entry is a host, as for Host. "null" never
 * matches. */
bool mcp__http_origin_allowed(const char *const *list, const char *value,
                              size_t len);

/* True when a Content-Type value is application/json, with parameters
 * allowed (a charset other than UTF-8 is refused). */
bool mcp__http_content_type_json(const char *value);

/* Which of application/json and text/event-stream an Accept value admits,
 * wildcards and q=0 included: a mask of the two flags below. */
#define MCP__HTTP_ACCEPT_JSON 1u
#define MCP__HTTP_ACCEPT_SSE 2u
unsigned mcp__http_accept(const char *value);

/* True for a session id made of 1-256 visible ASCII characters. */
bool mcp__http_visible_ascii(const char *value, size_t len, size_t max);

/* Decodes an Mcp-Name or Mcp-Param-* value: plain visible ASCII, or
 * "=?base64?...?=" (canonical standard base64: length a multiple of four,
 * padding only at the end; no NUL decoded). Returns 0 with *out, a
 * NUL-terminated copy (freed with mcp_free), and its length *out_len;
 * MCP_EINVAL when the value is malformed (nothing allocated), MCP_ENOMEM
 * when memory ran out. */
int mcp__http_header_decode(const char *value, size_t len, char **out,
                            size_t *out_len);

/* Parses a Last-Event-ID "STREAM-SEQ". Returns false when malformed. */
bool mcp__http_event_id_parse(const char *value, unsigned *stream,
                              unsigned long long *seq);

/* Protocol versions this transport routes, from the one table of
 * lib/base: the legacy ones an HTTP session may use, and the modern one. */
#define MCP__HTTP_MODERN_VERSION (mcp__version_name(MCP__VERSION_MODERN))
bool mcp__http_legacy_version(const char *value);

/* ---- authorization (http_auth.c) ----------------------------------------- */

/* Who sent one request: the configured principal, or the one a verified
 * bearer token names. */
typedef struct mcp__http_caller {
  mcp_principal principal; /* what the engine sees; points into the rest */
  bool authenticated;      /* from a verified token */
  mcp_token_info *info;    /* the verifier's answer (mcp_free) */
  const char **scopes;     /* NULL-terminated, into info->scopes */
  char *scope_key;         /* the scopes sorted, without duplicates, joined
                              by spaces: the same set gives the same text */
  long long expires_at;    /* unix seconds; 0 = unknown */
} mcp__http_caller;

typedef enum mcp__http_auth_result {
  MCP__HTTP_AUTH_OK,        /* *caller is filled */
  MCP__HTTP_AUTH_MISSING,   /* no bearer token: 401 without an error */
  MCP__HTTP_AUTH_MALFORMED, /* 400 invalid_request */
  MCP__HTTP_AUTH_INVALID,   /* 401 invalid_token */
  MCP__HTTP_AUTH_NOMEM,     /* memory ran out: 500 */
} mcp__http_auth_result;

/* Checks and copies the authorization settings (the endpoint path h->path
 * is already set). MCP_EINVAL says why through the log. Returns 0,
 * MCP_EINVAL or MCP_ENOMEM. */
int mcp__http_auth_new(mcp_http *h, const mcp_auth_options *o,
                       mcp__http_auth **out);
void mcp__http_auth_free(mcp__http_auth *a);
/* scopes_supported as configured, or NULL (the tools' union). */
const char *const *mcp__http_auth_supported(const mcp__http_auth *a);
/* True when url is one of the paths the metadata is served at. */
bool mcp__http_auth_wellknown(const mcp__http_auth *a, const char *url);
/* The protected resource metadata document (JSON, freed with mcp_free),
 * or NULL when memory ran out. */
char *mcp__http_auth_prm(const mcp_http *h, size_t *len);
/* A WWW-Authenticate value: Bearer [error="...", ][scope="...", ]
 * resource_metadata="..." (freed with mcp_free; NULL when memory ran
 * out). */
char *mcp__http_auth_challenge(const mcp__http_auth *a, const char *error,
                               const char *scope);
/* The scope list of a 403 challenge: scopes (NULL-terminated, as the
 * engine names them with a refusal) joined by spaces into *out (freed with
 * mcp_free). *out is NULL when scopes is NULL or empty, or a scope is not a
 * header-safe scope token (never the case for registered scopes; the
 * challenge then names none). Returns 0 or MCP_ENOMEM. */
int mcp__http_auth_scope_list(const char *const *scopes, char **out);
/* Reads an Authorization value "Bearer <token68>": 0 with the token, 1 for
 * another scheme, -1 when malformed. */
int mcp__http_bearer_parse(const char *v, size_t n, const char **token,
                           size_t *token_len);
/* Verifies the bearer token of an Authorization value (len bytes) and
 * fills *caller. The token itself is kept nowhere. */
mcp__http_auth_result mcp__http_authenticate(mcp_http *h, const char *value,
                                             size_t len,
                                             mcp__http_caller *caller);
void mcp__http_caller_free(mcp__http_caller *caller);

/* ---- resuming connections (http_stream.c) -------------------------------- */

/* What every stream of one server shares, and may outlive the server (a
 * deferred call can finish after mcp_http_stop): the count of resumes in
 * progress, which mcp_http_stop waits for before stopping libmicrohttpd,
 * and in external-loop mode an eventfd written after each resume, since
 * libmicrohttpd then has no channel of its own to wake the embedder's
 * loop. */
struct mcp__http_hub {
  pthread_mutex_t lock;
  pthread_cond_t idle;
  unsigned refs;
  unsigned resuming;
  int event_fd;
};

/* A hub with one reference; with_event_fd for external-loop mode. NULL
 * when resources run out. */
mcp__http_hub *mcp__http_hub_new(bool with_event_fd);
void mcp__http_hub_unref(mcp__http_hub *hub);
/* Waits until no resume is in progress. */
void mcp__http_hub_wait_idle(mcp__http_hub *hub);
/* Resumes a connection that a stream function handed out (see below):
 * exactly once for each, with no lock of ours held. NULL does nothing. */
void mcp__http_resume(mcp__http_hub *hub, struct MHD_Connection *conn);
/* Drops a resume counted (hub->resuming) that turned out not to be needed:
 * the connection was never suspended. */
void mcp__http_hub_settle(mcp__http_hub *hub);

/* ---- streams (http_stream.c) --------------------------------------------- */

typedef enum mcp__http_stream_kind {
  MCP__HTTP_STREAM_POST,   /* a legacy POST: events have ids, replayable */
  MCP__HTTP_STREAM_GET,    /* a session's standalone GET stream */
  MCP__HTTP_STREAM_MODERN, /* a 2026-07-28 POST: no ids, no replay */
} mcp__http_stream_kind;

/* What a POST's reply became once the engine had its say. */
typedef enum mcp__http_mode {
  MCP__HTTP_MODE_PENDING, /* not decided: messages are held (from settle:
                             the request waits, its connection suspended) */
  MCP__HTTP_MODE_EMPTY,   /* nothing to send: 202 */
  MCP__HTTP_MODE_JSON,    /* one message: application/json */
  MCP__HTTP_MODE_SSE,     /* text/event-stream */
  MCP__HTTP_MODE_FAILED,  /* a message was lost before deciding (no memory,
                             or past out_cap): 500 */
} mcp__http_mode;

struct mcp__http_stream {
  pthread_mutex_t lock;
  unsigned refs;
  mcp__http_hub *hub; /* a reference */
  mcp__http_stream_kind kind;
  unsigned no;            /* number within the session (event ids) */
  unsigned long long seq; /* last event number */
  mcp__http_mode mode;
  bool engine_done; /* the engine's sink is done */
  bool ended;       /* closed by the server: session gone, stop, overflow */
  bool overflow;    /* the client did not read fast enough */
  size_t out_cap;   /* bound of the unsent bytes */

  /* The connection carrying the stream, when one does. */
  mcp__http_req *attached;
  struct MHD_Connection *conn;
  bool suspended;       /* conn suspended by the content reader */
  bool hold_open;       /* a GET attachment: open until the client leaves */
  uint64_t last_ms;     /* last bytes handed to the connection */
  long long expires_at; /* a GET attachment: when the bearer token that
                           opened it expires (unix seconds; 0 = never) */
  bool expired;         /* ... and it has: the connection ends */
  bool waited_long;     /* a request waiting for one reply waited a
                           keep-alive interval: it becomes an event stream */

  /* Messages that arrived before the mode was decided. */
  mcp__list pending; /* mcp__http_msg.link (http_stream.c), oldest first */
  size_t npending, pending_bytes;

  /* Bytes not yet handed to the connection. */
  char *out;
  size_t out_size, out_len, out_pos;

  /* The last events, for Last-Event-ID (POST and GET streams). */
  struct mcp__http_event *ring;
  size_t ring_cap, ring_len, ring_start, ring_bytes;

  /* Link in http->live (attached streams), under http->lock; in no list
   * while the stream is not attached. */
  mcp__list live;
};

/* A new stream with one reference. ring_cap 0 keeps no events. Returns
 * NULL when memory runs out. */
mcp__http_stream *mcp__http_stream_new(mcp__http_hub *hub,
                                       mcp__http_stream_kind kind, unsigned no,
                                       size_t ring_cap, size_t out_cap);
void mcp__http_stream_ref(mcp__http_stream *st);
void mcp__http_stream_unref(mcp__http_stream *st);

/* The engine's sink callbacks (user_data is the stream; the sink owns one
 * reference, dropped by done). */
int mcp__http_stream_send(const char *message, size_t len,
                          const mcp_send_info *info, void *user_data);
void mcp__http_stream_done(void *user_data);

/* Adds one message to the stream (also used for the session's messages on
 * the standalone stream, with info NULL), keeping what the reply's status
 * needs of info while the mode is undecided. Returns 0, or -1 when the
 * stream cannot take it. */
int mcp__http_stream_push(mcp__http_stream *st, const char *message, size_t len,
                          const mcp_send_info *info);

/* Decides a POST's reply after mcp_session_receive_to returned, and again
 * each time a waiting request is resumed: EMPTY when nothing was sent and
 * nothing will be, JSON when exactly one message was sent and nothing will
 * follow (unless prefer_sse; *json receives it, freed with mcp_free, and
 * *code its JSON-RPC error code, 0 for none), FAILED when a message was
 * lost. PENDING (only with may_wait, and not prefer_sse) when the engine
 * is not done but may still answer with one reply: r is attached and its
 * connection suspended without a response, to be resumed (and settled
 * again) by done, by a message that is not that reply, by a second
 * message, by a wait of a keep-alive interval (mcp__http_stream_keepalive)
 * or by the end of the stream. Else SSE: the held messages become events
 * (after a priming event when priming) and the stream is attached to r.
 * A single reply is thus JSON whether the engine answered at once or
 * later. Call with http->lock held. */
mcp__http_mode mcp__http_stream_settle(mcp__http_stream *st, mcp__http_req *r,
                                       bool prefer_sse, bool may_wait,
                                       bool priming, char **json,
                                       size_t *json_len, int *code);

/* Attaches a GET to the stream: with replay (Last-Event-ID) it replays
 * the kept events after after_seq and takes the stream over from a
 * connection still attached (*old is then the connection to resume, so
 * its reader fails); without, it starts with a priming event when priming.
 * Returns 0 (attached), 1 (taken over), -1 when another connection is
 * attached and this is no resumption (409), -2 when the stream has no
 * events to resume (404). Call with http->lock held. */
int mcp__http_stream_attach_get(mcp__http_stream *st, mcp__http_req *r,
                                bool replay, unsigned long long after_seq,
                                bool priming, struct MHD_Connection **old);

/* Detaches r if it is attached: unsent bytes are dropped (kept events stay
 * for replay). *was_attached says whether r was attached. Returns true when
 * it was and the engine was not done: the client left before the end. Call
 * with http->lock held. */
bool mcp__http_stream_detach(mcp__http_stream *st, const mcp__http_req *r,
                             bool *was_attached);

/* The content reader of an SSE response whose cls is r. */
ssize_t mcp__http_stream_read(mcp__http_req *r, char *buf, size_t max);

/* Ends the stream from the server side (nothing more is sent; an attached
 * connection finishes what it has). Returns the connection to resume, if
 * any: pass it to mcp__http_resume after releasing every lock. */
struct MHD_Connection *mcp__http_stream_end(mcp__http_stream *st);

/* When the engine is done and sent exactly one message, and the engine
 * said it is a refusal on scope, the scopes its challenge names
 * (space-separated, moved to the caller, freed with mcp_free); NULL
 * otherwise. Allocates nothing. Call before settling. */
char *mcp__http_stream_refusal(mcp__http_stream *st);

/* Ends the connection of a GET attachment whose bearer token expired by
 * now_s (unix seconds); the stream stays, so the client resumes it with a
 * fresh token (Last-Event-ID). Returns the connection to resume, if any. */
struct MHD_Connection *mcp__http_stream_expire(mcp__http_stream *st,
                                               long long now_s);

/* True once a message was lost before the reply was decided (the reply
 * is then FAILED). */
bool mcp__http_stream_failed(mcp__http_stream *st);

/* True once the engine's sink is done: nothing more will come. */
bool mcp__http_stream_engine_done(mcp__http_stream *st);

/* True once the stream was ended (by the server, or by an overflow). */
bool mcp__http_stream_ended(mcp__http_stream *st);

/* Adds a keep-alive comment when nothing was written for interval_ms; a
 * request waiting for one reply that long is resumed to become an event
 * stream. Returns the connection to resume, if any. */
struct MHD_Connection *mcp__http_stream_keepalive(mcp__http_stream *st,
                                                  uint64_t now_ms,
                                                  uint64_t interval_ms);

/* ---- sessions (http_session.c) ------------------------------------------- */

/* Characters of a minted session id's random part: 24 bytes of CSPRNG
 * output in base64url. With a node id the session id is "NODE.RANDOM". */
#define MCP__HTTP_SID_LEN 32

/* Finished streams a session keeps for Last-Event-ID beyond max_inflight
 * (streams still being sent to are always kept). */
#define MCP__HTTP_KEPT_FINISHED 16

struct mcp__http_session {
  char id[MCP__HTTP_NODE_MAX + 1 + MCP__HTTP_SID_LEN + 1];
  size_t id_len;   /* minted here, or adopted with another node's prefix */
  bool adopted;    /* taken over from another node (http_adopt.c) */
  char *subject;   /* the creating principal's subject; NULL = anonymous */
  char *scope_key; /* with auth: the creating token's scopes (see
                      mcp__http_caller); NULL without */
  mcp_session *mcp;
  mcp_http *http;
  pthread_mutex_t drive;

  /* Under http->lock. */
  unsigned refs;
  unsigned attached; /* connections carrying this session's streams */
  uint64_t last_ms;  /* last request or detach */
  unsigned next_stream;
  mcp__http_stream **streams; /* kept for Last-Event-ID (references) */
  size_t nstreams, cap;
  mcp__http_stream *standalone;
  mcp__list link; /* in its bucket of http->buckets while published */
};

/* Creates a session for an initialize by caller: reserves a slot
 * (MCP_ELIMIT when max_sessions are in use), mints its id (MCP_EIO when the
 * CSPRNG fails), creates the engine session with the caller's principal.
 * With id (len bytes, at most MCP__HTTP_ID_MAX) the session takes that id
 * instead, to adopt it (http_adopt.c). The caller holds the one reference;
 * publish or abandon it. Returns 0, MCP_ELIMIT, MCP_EIO or MCP_ENOMEM. */
int mcp__http_session_create(mcp_http *http, const mcp__http_caller *caller,
                             const char *id, size_t len,
                             mcp__http_session **out);
/* The longest session id a session holds (minted or adopted). */
#define MCP__HTTP_ID_MAX (MCP__HTTP_NODE_MAX + 1 + MCP__HTTP_SID_LEN)
/* Makes the session findable by its id (initialize succeeded, or it was
 * adopted). Returns hs, or the session published with the same id
 * meanwhile (adopted by another request at the same time), with a
 * reference taken for the caller; hs is then not published. */
mcp__http_session *mcp__http_session_publish(mcp_http *http,
                                             mcp__http_session *hs);

/* Finds a published session bound to the caller's subject and takes a
 * reference; NULL when unknown, expired, deleted or someone else's. With
 * same_scopes, a session created by a token holding other scopes is not
 * found either: its engine session decides with the scopes it was created
 * with, so a token with fewer must not use it, and one with more gets a
 * new session. A session another node adopted since (mcp_session_moved) is
 * let go of and not found: the caller adopts it back. Never allocates.
 * Call with no lock held. */
mcp__http_session *mcp__http_session_find(mcp_http *http, const char *id,
                                          size_t len,
                                          const mcp__http_caller *caller,
                                          bool same_scopes);
/* Drops a reference; the last one (after unlinking) frees the session.
 * Call with no lock held. */
void mcp__http_session_release(mcp_http *http, mcp__http_session *hs);
/* Unlinks a session (DELETE). Returns false when it was not linked. Call
 * with no lock held; the caller still holds its reference. */
bool mcp__http_session_delete(mcp_http *http, mcp__http_session *hs);

/* A new stream of a legacy session with the next stream number. A GET
 * stream is kept for resumption at once; a POST stream only when its reply
 * becomes an event stream (mcp__http_session_keep_stream_locked), so that
 * answers and notifications, which make no stream, are never refused for
 * want of room. Returns NULL when memory runs out or the server is
 * stopping. Call with http->lock held. */
mcp__http_stream *mcp__http_session_stream_locked(mcp__http_session *hs,
                                                  mcp__http_stream_kind kind);
/* Keeps st for Last-Event-ID (a reference of its own), making room by
 * dropping the oldest finished stream once max_inflight +
 * MCP__HTTP_KEPT_FINISHED are kept. Returns false when st could not be kept
 * (every kept stream still live, or no memory): it is then served, but
 * cannot be resumed. Call with http->lock held. */
bool mcp__http_session_keep_stream_locked(mcp__http_session *hs,
                                          mcp__http_stream *st);
/* Stops keeping a stream that has nothing to resume (its reply went out
 * as application/json, or there was none). Call with http->lock held. */
void mcp__http_session_forget_stream_locked(mcp__http_session *hs,
                                            mcp__http_stream *st);
/* Finds a kept stream by number, with a reference. Call with http->lock
 * held. */
mcp__http_stream *mcp__http_session_find_stream_locked(mcp__http_session *hs,
                                                       unsigned no);

/* Ends sessions idle for idle_s (no request, no connection attached). A
 * shared one's record expires on its own, up to idle_s later. */
void mcp__http_sessions_expire(mcp_http *http, uint64_t now_ms);
/* With sessions shared through the store: ends each copy another node
 * adopted (mcp_session_moved) and renews the records of the others, which
 * an open stream or a long call keeps in use without messages. Once per
 * housekeeping tick. */
void mcp__http_sessions_tend(mcp_http *http);
/* Ends every session (stop); shared ones stay adoptable elsewhere. */
void mcp__http_sessions_free_all(mcp_http *http);
/* Allocates the table. Returns 0 or MCP_ENOMEM. */
int mcp__http_sessions_init(mcp_http *http);

/* ---- requests (http.c) --------------------------------------------------- */

/* What answering a POST needs besides its stream, kept while the request
 * waits for a deferred reply. */
typedef struct mcp__http_reply {
  const char *id;         /* the request's id as JSON text, or NULL */
  const char *version;    /* the errors' and events' protocol version */
  const char *session_id; /* a legacy session's, for its header */
  bool modern, priming, meta_ok;
} mcp__http_reply;

struct mcp__http_req {
  mcp_http *http;
  struct MHD_Connection *conn;
  int method;    /* MCP__HTTP_POST, _GET, _DELETE */
  bool answered; /* a response is queued */
  bool waiting;  /* suspended until its stream settles (settle PENDING) */
  mcp__http_reply reply; /* while waiting; its id in reply_id */
  char *reply_id;
  char *body;
  size_t len, cap;
  mcp__http_session *session; /* a reference, legacy requests */
  /* Adopting the session another node held (http_adopt.c): the state
   * (under http->lock), its outcome, and the session being adopted (a
   * reference). */
  int adopt; /* mcp__http_adopt_state */
  int adopt_rc;
  mcp__http_session *adopting;
  mcp_session *ephemeral;   /* modern requests */
  mcp__http_stream *stream; /* a reference, when a stream was made */
  const char *version;      /* MCP-Protocol-Version, trimmed; NULL when
                               absent, "" when unreadable */
  char version_buf[24];
  mcp__http_caller caller; /* who sent it */
};

/* ---- adoption (http_adopt.c) ---------------------------------------------
 * A legacy request naming a session this server does not have, when the
 * server shares sessions through its store (mcp_server_shares_sessions),
 * adopts it: a session with that id is made for the caller and given the
 * shared state (mcp_session_adopt); the request waits, its connection
 * suspended when the store answers later, and runs once it is adopted. */

typedef enum mcp__http_adopt_state {
  MCP__HTTP_ADOPT_NONE = 0,  /* not tried */
  MCP__HTTP_ADOPT_RUNNING,   /* asked; the answer may come on any thread */
  MCP__HTTP_ADOPT_SUSPENDED, /* asked, and the connection waits for it */
  MCP__HTTP_ADOPT_DONE,      /* answered (adopt_rc) */
  MCP__HTTP_ADOPT_USED       /* answered and acted on: never again */
} mcp__http_adopt_state;

typedef enum mcp__http_adopted {
  MCP__HTTP_ADOPTED,     /* published: look the session up again */
  MCP__HTTP_ADOPT_WAIT,  /* the connection is suspended: return MHD_YES */
  MCP__HTTP_ADOPT_GONE,  /* no such session anywhere: 404 */
  MCP__HTTP_ADOPT_DOWN,  /* the store failed: 503, try again */
  MCP__HTTP_ADOPT_FULL,  /* max_sessions are in use: 503 */
  MCP__HTTP_ADOPT_FAILED /* no memory: 500 */
} mcp__http_adopted;

/* Adopts the session id (len bytes) names for r, or says how the adoption
 * r started before ended (call again after the connection resumed). Never
 * adopts twice for one request. Call with no lock held. */
mcp__http_adopted mcp__http_adopt(mcp_http *http, mcp__http_req *r,
                                  const char *id, size_t len);
/* How long a shared session's record is kept after its last write: twice
 * the idle timeout, so it outlives the session it describes. */
unsigned long long mcp__http_share_ttl_ms(const mcp_http *http);

#define MCP__HTTP_POST 1
#define MCP__HTTP_GET 2
#define MCP__HTTP_DELETE 3

/* Small copies shared by the transport's files (http.c); single strings
 * are the base layer's mcp__strdup, through mcp_malloc. */
/* Copies a NULL-terminated list; *out stays NULL for a NULL list. Returns 0
 * or MCP_ENOMEM. */
int mcp__http_list_copy(const char *const *list, char ***out);
void mcp__http_list_free(char **list);

#endif
