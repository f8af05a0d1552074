/* The JSON-RPC layer (lib/rpc): classifies one parsed message and frames
 * replies, knowing nothing of sessions. Framing writes compact JSON into an
 * mcp__buf; a NULL id means the id could not be read. Linked into both
 * libraries, like the layers below it. Not installed. */
#ifndef MCP_RPC_H
#define MCP_RPC_H

#include "base.h"
#include "json.h"

/* The limits every JSON-RPC message is parsed with: the default ones, its
 * nodes in a pool (one allocation for a typical request). */
extern const mcp__json_limits mcp__message_limits;

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
  const char *why;      /* for MCP__MSG_INVALID: a static reason */
  mcp__json_pool *pool; /* the pool of the message's document, or NULL */
} mcp__msg;

/* Most messages in one 2025-03-26 batch. */
#define MCP__MAX_BATCH 64

/* Longest method name accepted, in bytes. */
#define MCP__MAX_METHOD 256

/* Classifies node (a message inside doc). An invalid message keeps a usable
 * id when it had one, so the error can be addressed to it. */
void mcp__msg_classify(const mcp__json_doc *doc, const struct cJSON *node,
                       mcp__msg *out);

/* Canonical text of an id: a string as mcp__json_quote writes it, an
 * integer as its exact text. Appended to b. */
int mcp__id_canonical(mcp__buf *b, const struct cJSON *id);

/* The canonical text of m's id (see mcp__id_canonical), or NULL when m has
 * no usable id or memory ran out. Usually that is the raw id itself; only
 * an id with escapes is rewritten, into scratch, which the caller frees. */
const char *mcp__msg_canon_id(const mcp__msg *m, mcp__buf *scratch);

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

/* JSON-RPC and MCP error codes libmcp emits. */
enum {
  MCP__RPC_PARSE_ERROR = -32700,
  MCP__RPC_INVALID_REQUEST = -32600,
  MCP__RPC_METHOD_NOT_FOUND = -32601,
  MCP__RPC_INVALID_PARAMS = -32602,
  MCP__RPC_INTERNAL_ERROR = -32603,
  /* Defined by MCP up to 2025-11-25. */
  MCP__RPC_RESOURCE_NOT_FOUND = -32002,
  /* The range JSON-RPC leaves to implementations: a transport that cannot
   * take a request now (too many sessions, stopping). */
  MCP__RPC_SERVER_BUSY = -32000,
  /* Defined by MCP 2026-07-28. */
  MCP__RPC_HEADER_MISMATCH = -32020,
  MCP__RPC_MISSING_CAPABILITY = -32021,
  MCP__RPC_UNSUPPORTED_VERSION = -32022
};

#endif
