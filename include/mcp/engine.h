/* libmcp for transports and embedders: the I/O-free protocol engine.
 *
 * mcp/mcp.h is for someone writing a server: tools, their handlers and
 * results, policy. This header is for whoever moves the bytes: a transport
 * (the stdio and HTTP transports of libmcp are built on it and nothing
 * else), or a daemon that embeds MCP in its own event loop. A session
 * turns one whole JSON-RPC message into the replies it causes, handed to a
 * callback; no function here reads or writes a descriptor. The server's
 * errors, log, scopes and mirrored headers, as a transport reports and
 * checks them, are here too; where handlers run is mcp/executor.h.
 *
 * mcp/mcp.h includes this header, so including either is enough; the
 * declarations are part of libmcp under the same conventions (see the top
 * of mcp/mcp.h: return codes, ownership, threads).
 */
#ifndef MCP_ENGINE_H
#define MCP_ENGINE_H

#include "mcp/mcp.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------------------
 * Deadlines: the transport's timer
 * ------------------------------------------------------------------------ */

/** For transports and embedders with their own event loop, as
 * mcp_http_backend_timeout is for HTTP: how long, in milliseconds, the loop
 * may wait before calling mcp_server_expire: 0 when a deadline has passed
 * and a call waits for its answer (or a task's TTL has passed, or a
 * tasks/result waiting for another node's task is due for a look), -1 when
 * no call of srv has a deadline to watch, no task a TTL and no such
 * tasks/result waits. Cheap when no call timeout is set and no task lives.
 * Any thread. */
MCP_API long mcp_server_next_expiry_ms(mcp_server *srv);

/** Answers, with the timeout answer described at mcp_server_set_call_timeout,
 * every deferred call of srv (on any session) whose deadline has passed,
 * and every call waiting for the client's input whose deadline has passed
 * (the client is told the requests are cancelled). The answers go where the
 * calls' replies go, through the sessions' send callbacks or sinks, from
 * the calling thread. Calls whose handler is still running answer for
 * themselves when it returns. It also forgets every task whose TTL has
 * passed (mcp_server_set_task_limits), cancelling its call if it still
 * runs, and looks again at the records of other nodes' tasks that a
 * tasks/result waits for (a task whose node was lost is failed, one whose
 * TTL passed answered as expired; docs/deployment.md, "tasks on every
 * node"). Call it when mcp_server_next_expiry_ms's time is up; calling it
 * early or often is harmless and cheap. Returns how many calls it answered,
 * tasks it forgot and waiting tasks/result it looked at again, or
 * MCP_EINVAL for srv NULL. Any thread, but not from a send callback or a
 * handler. */
MCP_API int mcp_server_expire(mcp_server *srv);

/* ---------------------------------------------------------------------------
 * Sessions
 * ------------------------------------------------------------------------ */

/** Receives one complete outgoing JSON-RPC message (compact JSON without a
 * newline; len bytes, not NUL-terminated in general; borrowed for the call).
 * Return 0, or a negative code if it cannot be delivered (the session then
 * treats itself as closed). Calls are serialized per session (never two at
 * once) but may come from a thread finishing a deferred call: a program
 * with its own event loop queues the message and wakes its loop (an
 * eventfd or a self-pipe) rather than write from that thread. It runs with
 * the session's lock held: it must not call back into this session or its
 * calls (queue the message and return).
 *
 * libmcp writes to no descriptor of yours. A transport that writes to a
 * socket or a pipe whose peer may vanish sends with MSG_NOSIGNAL, or
 * ignores SIGPIPE (signal(SIGPIPE, SIG_IGN) at start), or the process dies
 * on the first write after the peer left. mcp_serve_stdio ignores SIGPIPE
 * itself while it runs, and the HTTP transport never raises it. */
typedef int (*mcp_send_fn)(const char *message, size_t len, void *user_data);

/** Creates a session: one client connection (a stdio process, an HTTP
 * session, a socket). principal is copied; NULL means anonymous with no
 * scopes. send receives every outgoing message. Returns 0 and sets *out,
 * MCP_EINVAL or MCP_ENOMEM. Any thread. */
MCP_API int mcp_session_new(mcp_server *srv, const mcp_principal *principal,
                            mcp_send_fn send, void *user_data,
                            mcp_session **out);

/** Feeds one whole incoming message (len bytes of JSON; no framing). All
 * replies it produces are sent before it returns, except those of deferred
 * calls. Returns 0 when the message was handled (including when it was
 * answered with a JSON-RPC error), MCP_ECLOSED after a send failure,
 * MCP_ENOMEM when even the error reply could not be built. One thread at a
 * time per session. */
MCP_API int mcp_session_receive(mcp_session *session, const char *message,
                                size_t len);

/** What a message sent to a sink is (mcp_send_info.kind). */
typedef enum mcp_sent_kind {
  MCP_SENT_RESULT = 0,   /**< a result answering a request (a tool's
                              isError result included) */
  MCP_SENT_ERROR,        /**< a JSON-RPC error answering a request, or a
                              message that could not be read */
  MCP_SENT_BATCH,        /**< the array of answers to a batch (2025-03-26) */
  MCP_SENT_NOTIFICATION, /**< progress, a log message, a list_changed, the
                              ack of a subscription, a cancellation */
  MCP_SENT_REQUEST       /**< a request to the client (legacy input:
                              elicitation, sampling, roots) */
} mcp_sent_kind;

/** What the engine knows of one message it sends to a sink, so that a
 * transport decides its own answer (an HTTP status, a WWW-Authenticate
 * challenge) from facts instead of reading the message's bytes. Pointers
 * are borrowed for the duration of the callback. */
typedef struct mcp_send_info {
  mcp_sent_kind kind; /**< what the message is */
  int error_code;     /**< MCP_SENT_ERROR: the error's code (MCP_RPC_* or a
                           JSON-RPC one such as -32601); 0 otherwise */
  /** A refusal for want of scopes (error_code MCP_RPC_FORBIDDEN): every
   * scope the refused entries need, NULL-terminated. NULL for every other
   * message, an authorizer's denial included (it names no scope). */
  const char *const *scopes;
  /** With scopes: the ones of them the caller lacks, NULL-terminated. */
  const char *const *missing_scopes;
  /** The message answers a tools/call that was audited: decision is what
   * its audit record says. False for every other message. */
  bool audited;
  /** With audited: MCP_DECISION_RATE_LIMITED for a caller over its rate,
   * MCP_DECISION_TIMEOUT for a call answered at its deadline, and so on. */
  mcp_decision decision;
  void *reserved[4]; /**< zero; room for facts to come */
} mcp_send_info;

/** A sink's send with the facts of the message (mcp_send_info); otherwise
 * as mcp_send_fn, and under the same rules. */
typedef int (*mcp_send_info_fn)(const char *message, size_t len,
                                const mcp_send_info *info, void *user_data);

/** Where the messages caused by one incoming message go. */
typedef struct mcp_sink {
  mcp_send_fn send;              /**< each message, in order */
  void (*done)(void *user_data); /**< once: nothing more will be sent here
                                      (called without any engine lock) */
  void *user_data;               /**< for all three; valid until done */
  /** Optional: when set, called for each message instead of send (which
   * may then be NULL), with what the engine knows of it. */
  mcp_send_info_fn send_info;
  void *reserved[4]; /**< zero (a designated initializer leaves it so) */
} mcp_sink;

/** Like mcp_session_receive, but every message this one causes goes to
 * sink instead of the session's callback: its reply, and for a tools/call it
 * starts, the progress and log notifications, the requests asking the client
 * for input (legacy era) and the final reply, also when the call finishes
 * later on another thread. Messages nobody asked for (list_changed) still go
 * to the session's callback. sink->done is called exactly once, after the
 * last message for this sink, on whichever thread sent it: possibly before
 * this function returns (everything answered at once), possibly much later.
 * done is called even when this function fails for lack of memory (but
 * not for MCP_EINVAL: session NULL, message NULL with len > 0, or a sink
 * with neither send nor send_info). A sink whose send fails gets nothing
 * more, and the session stays open: this is how a transport with one
 * stream per request (Streamable HTTP) routes replies, and with send_info
 * how it learns each reply's error code and a refusal's scopes without
 * reading the reply. sink NULL is mcp_session_receive. Returns as
 * mcp_session_receive. */
MCP_API int mcp_session_receive_to(mcp_session *session, const char *message,
                                   size_t len, const mcp_sink *sink);

/** One incoming message, parsed once (mcp_message_parse). */
typedef struct mcp_message mcp_message;

/** Parses len bytes as one incoming JSON-RPC message (or batch), with the
 * same strict JSON rules a session applies (RFC 8259 exactly: valid UTF-8,
 * no duplicate keys, nothing after the value; the session's limits on
 * depth, string and number size). For a transport that must read a message
 * before it hands it to a session, to route it or to check its headers
 * against it: it reads the very tree the session will act on, instead of a
 * second parse that could see the bytes differently, and the message is
 * parsed once. Returns 0 and sets *out, to be handed to
 * mcp_session_receive_message or freed with mcp_message_free; MCP_EPARSE or
 * MCP_ELIMIT when the bytes are not a message a session would read (hand
 * them to mcp_session_receive_to, which answers with the JSON-RPC error the
 * protocol wants); MCP_EINVAL for out NULL or text NULL with len > 0;
 * MCP_ENOMEM. *out is untouched on failure. Any thread. */
MCP_API int mcp_message_parse(const char *text, size_t len, mcp_message **out);

/** The parsed JSON of msg (an object, or an array for a batch), read-only
 * (test node types with cJSON_Is*, as at mcp_call_arguments); valid until
 * msg is freed or handed to a session. NULL for msg NULL. Any thread. */
MCP_API const struct cJSON *mcp_message_json(const mcp_message *msg);

/** The exact text of msg's top-level "id" member as it was received (a
 * JSON string with its quotes, or a number), NUL-terminated, so an answer
 * can echo it byte for byte; *len receives its length when len is not
 * NULL. NULL when msg is not an object whose id is a string or a number
 * (null is not an id a reply can echo). Valid as
 * mcp_message_json. Any thread. */
MCP_API const char *mcp_message_id(const mcp_message *msg, size_t *len);

/** Frees msg. NULL does nothing. Any thread. */
MCP_API void mcp_message_free(mcp_message *msg);

/** The eras of the protocol, as bits (mcp_route): the legacy era
 * (2025-03-26 to 2025-11-25: an initialize handshake, sessions) and the
 * modern era (2026-07-28: stateless requests that carry their version and
 * client capabilities in _meta). */
#define MCP_ERA_LEGACY 1u
#define MCP_ERA_MODERN 2u /**< see MCP_ERA_LEGACY */

/** What the engine says of a parsed message's route: the facts a transport
 * needs before it hands the message to a session (where to send it, what
 * to count, which headers must agree with it), from the engine's own
 * table of methods, so that no transport keeps a copy of that table.
 * Filled by mcp_message_route; pointers are borrowed from the message and
 * valid as mcp_message_json. */
typedef struct mcp_route {
  /** The method of a single request or notification; NULL for a batch, a
   * response, or a message whose method is not a string. */
  const char *method;
  bool request; /**< a single message with an id (a request) */
  bool batch;   /**< an array of messages (2025-03-26 batches) */
  /** The eras the engine serves method in (MCP_ERA_* bits); 0 for a
   * method it does not serve. */
  unsigned method_eras;
  /** The era the message is served in, for a single message with a
   * method: MCP_ERA_MODERN when its _meta names a protocol version or
   * client capabilities, or for server/discover (for initialize, only a
   * named protocol version counts); MCP_ERA_LEGACY otherwise. 0 for a
   * batch or a message without a method. */
  unsigned era;
  bool initialize;  /**< a request to initialize: it starts a session of
                         the legacy era */
  bool starts_call; /**< a request that starts a call (tools/call,
                         prompts/get, resources/read): a handler that may
                         stay in flight */
  size_t calls;     /**< how many requests of the message start a call:
                         0 or 1, or for a batch its elements that do */
  /** _meta's io.modelcontextprotocol/protocolVersion when it is a string,
   * else NULL. */
  const char *meta_version;
  /** The _meta the modern era requires is there: a version (a string),
   * client capabilities (an object), and a log level that, if present,
   * is a string. */
  bool meta_complete;
  /** For a method whose modern requests carry the Mcp-Name header: the
   * member of params the header must equal ("name", "uri", "taskId");
   * NULL for every other method. */
  const char *name_member;
  /** With name_member: what that member is, for a refusal ("the tool's
   * name"). */
  const char *name_description;
  /** With name_member: that member of the message's params, NULL when it
   * is absent (compare it as a string). */
  const struct cJSON *name;
  void *reserved[4]; /**< zero; room for facts to come */
} mcp_route;

/** Fills *route with what the engine says of msg's route (see mcp_route):
 * which era serves it, whether it starts calls, the name its Mcp-Name
 * header must carry. A transport asks this instead of reading the
 * message's methods itself; the session that receives msg decides by the
 * same table. Returns 0, or MCP_EINVAL for msg or route NULL (route is
 * then untouched). Allocates nothing. Any thread. */
MCP_API int mcp_message_route(const mcp_message *msg, mcp_route *route);

/** mcp_session_receive_to for a message parsed with mcp_message_parse:
 * the same replies, sink rules and return values. Takes ownership of msg,
 * also when it fails (MCP_EINVAL for session or msg NULL or a sink with
 * neither send nor send_info; then sink->done is not called). Same thread
 * rule as receive. */
MCP_API int mcp_session_receive_message(mcp_session *session, mcp_message *msg,
                                        const mcp_sink *sink);

/** Answers a message the transport could not hand over whole (for example
 * a line longer than its limit) with a JSON-RPC parse error (-32700) whose
 * message includes reason, addressed as the negotiated version requires.
 * Returns 0, MCP_ECLOSED or MCP_ENOMEM. Same thread rule as receive. */
MCP_API int mcp_session_reject(mcp_session *session, const char *reason);

/** Returns the protocol version negotiated by initialize (static string), or
 * NULL before it. */
MCP_API const char *mcp_session_protocol_version(const mcp_session *session);

/** Number of tools/call on this session that have started and not yet been
 * finished (deferred ones included). */
MCP_API size_t mcp_session_pending(const mcp_session *session);

/** Number of those calls whose current round the server's executor holds
 * (mcp_server_set_executor): waiting for mcp_call_execute, or whose
 * handler runs there and has not returned. Such a call would have
 * finished on the receiving thread without an executor, so a transport
 * that stops at end of input waits for these before it cancels the rest
 * (mcp_serve_stdio does). Any thread. */
MCP_API size_t mcp_session_executing(const mcp_session *session);

/** Marks every unfinished call of the session cancelled (their handlers see
 * mcp_call_cancelled() and their replies are dropped), for example when the
 * peer went away. The session stays usable. Any thread. */
MCP_API void mcp_session_cancel_all(mcp_session *session);

/** Closes and frees a session: calls still running are marked cancelled and
 * their replies dropped; they finish normally through mcp_call_finish and
 * the memory is released then. Once it returns, nothing more is sent for
 * the session, from any thread: neither the send callback of
 * mcp_session_new nor a sink's send is called again (every send happens
 * under the session's lock, after checking that the session is open, and
 * this function waits for a send in progress on another thread to end), so
 * the callback's user_data may be freed at once. A sink's done callback
 * still comes, exactly once, when the last call holding the sink lets go:
 * possibly later, on the thread that finishes a deferred call. NULL does
 * nothing. Not from a send callback of this session. */
MCP_API void mcp_session_free(mcp_session *session);

/* ---------------------------------------------------------------------------
 * Legacy sessions shared through the server's store: another process
 * sharing it adopts a session whose process is gone (the HTTP transport
 * does this for Mcp-Session-Id; docs/deployment.md, "Several machines")
 * ------------------------------------------------------------------------ */

/** Returns true when srv's store keeps records (mcp_server_set_store with a
 * store for which mcp_store_has_records is true), so that sessions can be
 * shared and adopted. false for NULL. Any thread. */
MCP_API bool mcp_server_shares_sessions(mcp_server *srv);

/** Keeps session's state in the server's store as the record
 * "session:<id>" (id: the transport's name for the session, 1 to 247
 * bytes, copied), so that another process sharing the store can adopt it
 * with mcp_session_adopt: the protocol version, client capabilities and
 * what initialize announced, the log level, the resource subscriptions,
 * and the principal the session was created for. The record is written
 * once the session is initialized and after each change, names this
 * process's node as its holder, and is kept ttl_ms (above 0) after the
 * last write; each message received more than half of ttl_ms after the
 * last write writes it again. Writes go out in the background; one that
 * fails is logged (the session goes on here). Returns 0, MCP_EINVAL (NULL
 * session or id, empty id, ttl_ms 0, a session already shared),
 * MCP_ELIMIT (id too long), MCP_ENOTSUP (the store keeps no records:
 * mcp_server_shares_sessions) or MCP_ENOMEM. Same thread rule as
 * mcp_session_receive. */
MCP_API int mcp_session_share(mcp_session *session, const char *id,
                              unsigned long long ttl_ms);

/** Ends a shared session for good (the client deleted it): its record is
 * settled as ended, so no process adopts it. Without this
 * call, mcp_session_free leaves the record adoptable until it expires, so
 * that a process that stops hands its sessions over. Does nothing for a
 * session that is not shared, or NULL. Same thread rule as
 * mcp_session_receive. */
MCP_API void mcp_session_unshare(mcp_session *session);

/** Returns true once another process sharing the store adopted session
 * (mcp_session_adopt announces it through the store's events), or ended it
 * (a write of its record was refused: it was settled as ended there): this
 * copy is stale, and the transport should let go of it (free it without
 * mcp_session_unshare). A request naming it afterwards adopts it back with
 * the state of the record, or finds it ended. false for NULL or a session
 * never shared. Any thread. */
MCP_API bool mcp_session_moved(const mcp_session *session);

/** Tells the engine that session is in use though no message came (a
 * transport keeps its event stream open, or a call of it runs long): a
 * shared session's record is written again once half its TTL passed, as
 * a message received would. Cheap; does nothing for a session that is not
 * shared, or NULL. Any thread. */
MCP_API void mcp_session_touch(mcp_session *session);

/** Called once per mcp_session_adopt that returned 0, with its arg and
 * rc: 0 (the session now has the shared state and is shared under the
 * same id, with this process's node as holder), MCP_ENOENT (no such
 * record, expired, ended, not written by this library, or another
 * principal's: the session stays new), MCP_EIO (the store failed: try
 * again later), MCP_ECLOSED (the session was freed meanwhile) or
 * MCP_ENOMEM. It runs on the thread that called mcp_session_adopt, before
 * that returns, or on a thread of the store's. */
typedef void (*mcp_session_adopted_fn)(void *arg, int rc);

/** Adopts the shared session id (see mcp_session_share) into session, a
 * session made with mcp_session_new that has not received initialize: its
 * record is read from the server's store and, when it belongs to the
 * principal session was created for (the same subject and the same set of
 * scopes), its state is taken and session is shared under id with ttl_ms
 * as mcp_session_share does. Calls that were in flight in the process that
 * held it are not carried over; their clients see those requests fail.
 * Requests this session sends the client (sampling, elicitation) get ids
 * that the previous holder's cannot meet. done(arg, rc) comes exactly once
 * when this returns 0; receive nothing on session before it came. Returns
 * 0, MCP_EINVAL (NULL session, id or done, ttl_ms 0, a session already
 * initialized or shared), MCP_ELIMIT, MCP_ENOTSUP (the store keeps no
 * records) or MCP_ENOMEM; done is then not called. An adoption is
 * published through the store's events, so that a process still holding a
 * copy learns it (mcp_session_moved). Any thread. */
MCP_API int mcp_session_adopt(mcp_session *session, const char *id,
                              unsigned long long ttl_ms,
                              mcp_session_adopted_fn done, void *arg);

/* ---------------------------------------------------------------------------
 * What a transport needs of the server: its errors, its log, its scopes,
 * the headers a request mirrors
 * ------------------------------------------------------------------------ */

/** Records message (one sentence, copied, at most 2047 bytes) as the
 * calling thread's last failure on srv, the text mcp_server_errmsg(srv)
 * then returns. For transports and embedders built on the public API, so
 * that their own failures (mcp_http_start's, say) are read where the
 * library's are. NULL srv or message does nothing. Any thread. */
MCP_API void mcp_server_set_errmsg(mcp_server *srv, const char *message);

/** Writes message (one sentence) through the server's log callback (see
 * mcp_server_set_log), as the library's own messages go. For transports and
 * embedders. Any thread. */
MCP_API void mcp_server_log(mcp_server *srv, mcp_log_level level,
                            const char *message);

/** Writes the union of every registered tool's, prompt's and resource's scopes
 * into buf (size bytes), sorted, without duplicates, separated by single spaces
 * and NUL-terminated (truncated if size is too small). Returns the length the
 * whole list needs, excluding the NUL, or a negative code. For a transport's
 * "scopes_supported". Any thread. */
MCP_API long mcp_server_scopes(mcp_server *srv, char *buf, size_t size);

/** Gives a transport the value of the request header "Mcp-Param-<name>"
 * (name compared case-insensitively), already decoded from its
 * "=?base64?...?=" form, or NULL when the request has no such header. The
 * string stays valid until mcp_server_check_param_headers returns. */
typedef const char *(*mcp_header_fn)(const char *name, void *user_data);

/** For transports with headers (Streamable HTTP, 2026-07-28; SEP-2243): a
 * tool's input schema may mark a property of type string, integer or
 * boolean with "x-mcp-header": "Name" (checked at registration: an RFC 9110
 * token, unique case-insensitively, only on properties reached through
 * "properties" from the root), and a client then mirrors that argument in
 * the header Mcp-Param-Name. This checks a tools/call of tool: for every
 * marked argument present in arguments (a borrowed JSON object, or NULL),
 * header(name) must give the same value (integers compare as numbers);
 * for an absent or null one, no header. Returns 0 when they agree;
 * MCP_ENOENT for an unknown tool (nothing to check: the engine answers
 * the call); MCP_EINVAL with a sentence (starting "Header mismatch:") in
 * why (why_size bytes, NUL-terminated) when they do not, which the
 * transport answers with HTTP 400 and JSON-RPC error -32020 before the
 * request reaches the engine; MCP_EINVAL for NULL srv, tool or header.
 * Any thread. */
MCP_API int mcp_server_check_param_headers(mcp_server *srv, const char *tool,
                                           const struct cJSON *arguments,
                                           mcp_header_fn header,
                                           void *user_data, char *why,
                                           size_t why_size);

/* ---------------------------------------------------------------------------
 * Old names
 *
 * Kept, as exported functions, for one minor version after the names that
 * replace them; they do exactly what the new ones do. New code uses the
 * new names.
 * ------------------------------------------------------------------------ */

/** Deprecated name of mcp_server_next_expiry_ms (it read as if it returned
 * the call timeout of mcp_server_set_call_timeout). */
MCP_API long mcp_server_timeout(mcp_server *srv)
    MCP_DEPRECATED("use mcp_server_next_expiry_ms");

#ifdef __cplusplus
}
#endif

#endif
