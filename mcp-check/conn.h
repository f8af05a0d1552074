/* conn.h: one JSON-RPC exchange with the server: over the pipes of a stdio
 * server (one message a line), or a Streamable HTTP POST through libcurl
 * (a JSON or an event-stream answer). Every wait is bounded by the
 * exchange's timeout, every message by MCPC_MAX_MESSAGE bytes. */
#ifndef MCPC_CONN_H
#define MCPC_CONN_H

#include <stddef.h>

struct cJSON;

/* The largest message (a line, or an HTTP body) mcp-check reads. */
#define MCPC_MAX_MESSAGE (8u << 20)
/* The most messages that may come before the answer to a request. */
#define MCPC_MAX_INTERLEAVED 10000u

typedef struct mcpc_conn mcpc_conn;

/* One exchange: what to send with it (HTTP only but timeout_ms), and what
 * came back. */
typedef struct mcpc_exchange {
  const char *token;            /* bearer token, or NULL */
  const char *protocol_version; /* MCP-Protocol-Version header, or NULL */
  const char *method;           /* Mcp-Method header (2026-07-28), or NULL */
  const char *name;             /* Mcp-Name header (2026-07-28), or NULL */
  unsigned timeout_ms;
  long status;            /* HTTP status; 0 on stdio */
  char *www_authenticate; /* the header's value, or NULL; owned */
  struct cJSON *response; /* the answer to the request, or NULL; owned */
} mcpc_exchange;

/* A connection over a stdio server's pipes (borrowed descriptors). NULL
 * when out of memory. */
mcpc_conn *mcpc_conn_stdio(int to_server, int from_server);

/* A connection to a Streamable HTTP endpoint. NULL with why when libcurl
 * cannot be set up. */
mcpc_conn *mcpc_conn_http(const char *url, char *why, size_t size);

/* Sends msg (a request when it has an "id", else a notification) and, for
 * a request, reads until its answer: requests the server sends meanwhile
 * are answered (ping with {}, anything else with -32601), notifications
 * skipped. Returns 0 (x->response set for a request answered with JSON;
 * on HTTP x->status is set and response may be NULL for an answer without
 * JSON, e.g. 401), or -1 with why: time out, end of stream, a message that
 * is not JSON or too long. Clears x's outputs first. */
int mcpc_conn_exchange(mcpc_conn *c, const struct cJSON *msg, mcpc_exchange *x,
                       char *why, size_t size);

/* Frees x's outputs. */
void mcpc_exchange_clear(mcpc_exchange *x);

/* After a failed exchange: non-zero when the connection may carry more
 * (HTTP, whose every request stands alone; stdio when only time ran out:
 * a late answer is skipped by its id), zero when the stream is broken (end
 * of file, a line too long or not JSON, a write refused). */
int mcpc_conn_usable(const mcpc_conn *c);

/* Forgets the HTTP session id (a new session begins with the next
 * initialize). */
void mcpc_conn_reset_session(mcpc_conn *c);

/* Frees the connection (not the descriptors it borrowed). */
void mcpc_conn_free(mcpc_conn *c);

#endif
