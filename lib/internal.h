/* Private declarations shared by the modules of lib/. Not installed. */
#ifndef MCP_INTERNAL_H
#define MCP_INTERNAL_H

#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>

#include "mcp/mcp.h"

/* ---- allocator (lib/alloc.c) --------------------------------------------
 * Every allocation of the library, cJSON's included, goes through these, so
 * the allocator hook sees all of them and a test can fail any one. */
void *mcp__malloc(size_t n);
void *mcp__calloc(size_t count, size_t n);
void *mcp__realloc(void *p, size_t n);
void mcp__free(void *p);
char *mcp__strdup(const char *s); /* NULL for NULL or on failure */
char *mcp__strndup(const char *s, size_t n);

/* ---- growable byte buffer (lib/buf.c) -----------------------------------
 * Latches its first failure: after an allocation fails every later append is
 * a no-op returning MCP_ENOMEM, so a sequence of appends needs one check. */
typedef struct mcp__buf {
  char *data; /* NUL-terminated when len > 0 or after mcp__buf_str */
  size_t len;
  size_t cap;
  int err; /* 0 or the first error */
} mcp__buf;

int mcp__buf_append(mcp__buf *b, const void *p, size_t n);
int mcp__buf_puts(mcp__buf *b, const char *s);
int mcp__buf_putc(mcp__buf *b, char c);
int mcp__buf_printf(mcp__buf *b, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* Returns the NUL-terminated contents ("" for an empty buffer), or NULL if
 * the buffer failed. The buffer still owns it. */
const char *mcp__buf_str(mcp__buf *b);
/* Hands the contents to the caller (free with mcp__free) and empties b. */
char *mcp__buf_take(mcp__buf *b, size_t *len);
void mcp__buf_free(mcp__buf *b);

/* ---- small helpers (lib/util.c) ------------------------------------------ */
/* Formats into a fixed buffer, truncating; used for error messages. */
void mcp__fmt(char *dst, size_t n, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
/* Base64 (RFC 4648 §4, with padding) of n bytes appended to b. */
int mcp__base64(mcp__buf *b, const void *p, size_t n);
/* Monotonic microseconds. */
unsigned long long mcp__now_us(void);

#endif

/* ---- JSON-RPC envelope (lib/jsonrpc.c) -----------------------------------
 * Classifies one parsed message and frames replies. Framing writes compact
 * JSON into an mcp__buf; a NULL id means the id could not be read. */
#include "json.h"

typedef enum mcp__msg_kind {
  MCP__MSG_INVALID = 0,
  MCP__MSG_REQUEST,
  MCP__MSG_NOTIFICATION,
  MCP__MSG_RESPONSE
} mcp__msg_kind;

typedef struct mcp__msg {
  mcp__msg_kind kind;
  const char *method;          /* requests and notifications */
  const struct cJSON *params;  /* NULL when absent */
  const struct cJSON *id_node; /* NULL when absent */
  const char *id;              /* raw id text; NULL if absent or unusable */
  size_t id_len;
  const char *why; /* for MCP__MSG_INVALID: a static reason */
} mcp__msg;

/* Longest method name accepted, in bytes. */
#define MCP__MAX_METHOD 256

/* Classifies node (a message inside doc). An invalid message keeps a usable
 * id when it had one, so the error can be addressed to it. */
void mcp__msg_classify(const mcp__json_doc *doc, const struct cJSON *node,
                       mcp__msg *out);

/* How to write an id that could not be read. */
typedef enum mcp__null_id {
  MCP__ID_NULL = 0, /* "id":null, JSON-RPC 2.0 and MCP <= 2025-06-18 */
  MCP__ID_OMIT      /* no id member, MCP 2025-11-25 and later */
} mcp__null_id;

/* {"jsonrpc":"2.0","id":ID,"result":RESULT} with RESULT given as JSON. */
int mcp__rpc_result(mcp__buf *b, const char *id, size_t id_len,
                    const char *result, size_t result_len);
/* {"jsonrpc":"2.0","id":ID,"error":{"code":C,"message":M[,"data":D]}}.
 * data is JSON text or NULL. */
int mcp__rpc_error(mcp__buf *b, const char *id, size_t id_len,
                   mcp__null_id null_id, int code, const char *message,
                   const char *data);
/* {"jsonrpc":"2.0","method":M[,"params":P]} with P JSON text or NULL. */
int mcp__rpc_notification(mcp__buf *b, const char *method, const char *params);

/* JSON-RPC and MCP error codes the engine emits. */
enum {
  MCP__RPC_PARSE_ERROR = -32700,
  MCP__RPC_INVALID_REQUEST = -32600,
  MCP__RPC_METHOD_NOT_FOUND = -32601,
  MCP__RPC_INVALID_PARAMS = -32602,
  MCP__RPC_INTERNAL_ERROR = -32603
};

/* ---- policy (lib/policy.c) -----------------------------------------------
 * Decides a call from the principal's scopes and the authorizer hook. It is
 * given the tool's name and required scopes and nothing else about the tool:
 * annotations never reach this layer, so they cannot decide access. */

/* Deep copy of a principal; free with mcp__principal_free. src NULL gives
 * the anonymous principal. */
int mcp__principal_copy(mcp_principal *dst, const mcp_principal *src);
void mcp__principal_free(mcp_principal *p);

/* Is s an RFC 6750 scope-token: 1*( %x21 / %x23-5B / %x5D-7E )? */
bool mcp__scope_token_valid(const char *s);

typedef struct mcp__policy {
  mcp_authorize_fn authorize;
  void *authorize_data;
} mcp__policy;

typedef struct mcp__decision {
  mcp_decision decision;
  const char **missing; /* NULL-terminated, points into the tool's scopes;
                           owned (free with mcp__decision_free) */
  char reason[256];     /* the authorizer's reason, if it gave one */
} mcp__decision;

/* Fills *out. Returns 0 or MCP_ENOMEM (then the call must be refused). */
int mcp__policy_decide(const mcp__policy *policy,
                       const mcp_principal *principal, const char *tool,
                       const char *const *required, size_t nrequired,
                       const struct cJSON *arguments, mcp__decision *out);
void mcp__decision_free(mcp__decision *d);
/* The JSON-RPC error data for a denial: {"requiredScopes":[...]} plus
 * "reason" when the authorizer gave one. Appended to b. */
int mcp__decision_data(mcp__buf *b, const mcp__decision *d);

/* ---- protocol versions (lib/registry.c) ---------------------------------
 * Ordered oldest to newest, so feature checks are comparisons. */
typedef enum mcp__version {
  MCP__V2024_11_05 = 0,
  MCP__V2025_03_26,
  MCP__V2025_06_18,
  MCP__V2025_11_25,
  MCP__VERSION_COUNT
} mcp__version;
#define MCP__VERSION_LATEST MCP__V2025_11_25

const char *mcp__version_name(mcp__version v);
/* Returns the version named s, or -1. */
int mcp__version_find(const char *s);

/* ---- argument check (lib/schema.c) ---------------------------------------
 * The one place arguments are checked against a tool's inputSchema. For now
 * it covers "required", top-level property "type"s and
 * "additionalProperties": false; the [schema] issue replaces the inside with
 * full JSON Schema 2020-12 behind the same call.
 * Returns 0 when args conform, else MCP_EINVAL with a sentence a model can
 * act on in msg. */
int mcp__schema_check_args(const struct cJSON *schema, const struct cJSON *args,
                           char *msg, size_t msglen);

/* ---- registry (lib/registry.c) --------------------------------------------
 */
typedef struct mcp__tool {
  _Atomic unsigned refs;
  unsigned long long seq; /* registration order; the list order and cursor */
  char *name;
  char **scopes; /* NULL-terminated */
  size_t nscopes;
  struct cJSON *input_schema;
  struct cJSON *output_schema; /* NULL if none */
  mcp_tool_fn handler;
  void *user_data;
  /* The Tool object as sent to each protocol version, built once. */
  char *wire[MCP__VERSION_COUNT];
  size_t wire_len[MCP__VERSION_COUNT];
} mcp__tool;

typedef struct mcp__registry {
  mcp__tool **tools; /* in registration order */
  size_t n, cap;
  unsigned long long next_seq;
} mcp__registry;

/* Validates def and builds a tool with one reference. On MCP_EINVAL, err
 * names the tool and the rule broken. */
int mcp__tool_new(const mcp_tool *def, void *user_data, mcp__tool **out,
                  char *err, size_t errlen);
void mcp__tool_ref(mcp__tool *t);
void mcp__tool_unref(mcp__tool *t);

/* The registry takes the reference of t on success. */
int mcp__registry_add(mcp__registry *r, mcp__tool *t);
int mcp__registry_remove(mcp__registry *r, const char *name);
/* Returns a new reference, or NULL. */
mcp__tool *mcp__registry_find(const mcp__registry *r, const char *name);
/* Appends {"tools":[...][,"nextCursor":"..."]} for one page. cursor is the
 * client's (NULL for the first page). Returns 0, MCP_EINVAL for a bad cursor,
 * or MCP_ENOMEM. */
int mcp__registry_page(const mcp__registry *r, mcp__version v,
                       const char *cursor, unsigned page_size, mcp__buf *b);
void mcp__registry_clear(mcp__registry *r);

/* ---- server, sessions and calls (lib/server.c, session.c, call.c) -------- */
#include <pthread.h>

struct mcp_server {
  char *name, *version, *title, *instructions;
  pthread_mutex_t lock; /* guards reg and sessions */
  mcp__registry reg;
  mcp_session *sessions; /* every live session, for list_changed */
  mcp_log_fn log;
  void *log_data;
  mcp__policy policy;
  mcp_audit_fn audit;
  void *audit_data;
  _Atomic unsigned page_size;
};

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
  pthread_mutex_t lock; /* guards sending, calls, refs, closed */
  unsigned refs;        /* the owner's plus one per unfinished call */
  bool closed;          /* freed by its owner, or sending failed */
  _Atomic int state;    /* mcp__state */
  _Atomic int version;  /* mcp__version; valid from INITIALIZED */
  mcp_call *calls;      /* unfinished calls */
  size_t ncalls;
  mcp_session *next, *prev; /* in srv->sessions */
};

/* Sends one message unless the session is closed. Takes the session lock. */
int mcp__session_send(mcp_session *s, const char *msg, size_t len);
/* Drops one reference taken for a call; frees the session at zero. Call
 * with s->lock held; it is released. */
void mcp__session_unref_locked(mcp_session *s);

struct mcp_call {
  mcp_session *session;
  mcp__tool *tool;
  mcp__version version;
  char *id; /* raw request id, echoed as received */
  size_t id_len;
  char *canon_id; /* canonical form, to match cancellations and duplicates */
  char *progress_token; /* raw JSON, NULL when the client asked for none */
  double last_progress;
  bool progressed;
  struct cJSON *arguments; /* owned */
  _Atomic bool cancelled;
  int phase;     /* mcp__call_phase, under session->lock */
  int finish_rc; /* rc given to an early mcp_call_finish */
  bool is_error;
  bool has_structured;
  int latched;      /* first builder error */
  mcp__buf content; /* content blocks, comma-separated */
  mcp__buf structured;
  unsigned long long started_us;
  mcp_call *next, *prev; /* in session->calls */
};

typedef enum mcp__call_phase {
  MCP__CALL_RUNNING = 0,  /* the handler has not returned yet */
  MCP__CALL_FINISH_EARLY, /* mcp_call_finish came before the handler
                             returned MCP_DEFERRED */
  MCP__CALL_DEFERRED      /* waiting for mcp_call_finish */
} mcp__call_phase;

/* Canonical text of an id: a string as mcp__json_quote writes it, an
 * integer as its exact text. Appended to b. */
int mcp__id_canonical(mcp__buf *b, const struct cJSON *id);

/* Builds a call for an allowed tools/call (takes ownership of arguments,
 * copies id and progress token). */
int mcp__call_new(mcp_session *s, mcp__tool *tool, mcp__version v,
                  const char *id, size_t id_len, const char *canon_id,
                  const char *progress_token, struct cJSON *arguments,
                  mcp_call **out);
/* Frees a call that never ran (registration in the session failed). */
void mcp__call_free(mcp_call *c);
/* Answers and frees a call after its handler returned rc (0 or an error).
 * With out NULL the reply is sent on the session (deferred calls); else it
 * is appended to *out for the caller to deliver (the receiving thread, so a
 * reply can join a batch). A cancelled call produces no reply. */
void mcp__call_complete(mcp_call *c, int rc, mcp__buf *out);
/* Emits the audit record of a call that was refused before it ran. */
void mcp__audit(mcp_server *srv, const char *tool, const mcp_principal *p,
                mcp_decision decision, const char *const *missing,
                bool is_error, bool failed, unsigned long long started_us);
