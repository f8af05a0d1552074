/* The libcurl client of the suites that drive an in-process mcp_http
 * (tests/http, tests/torture, tests/load): HTTP requests with libcurl (one
 * response read whole, its JSON-RPC messages parsed from a JSON body or
 * from SSE events), raw loopback sockets, and the clock, process and scale
 * helpers those suites need. Test code only: it aborts when the test
 * process itself runs out of memory. */
#ifndef MCP_TEST_HTTP_CLIENT_H
#define MCP_TEST_HTTP_CLIENT_H

#include <curl/curl.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lc_buf.h"

struct cJSON;

/* The protocol versions the suites speak. */
#define LC_LEGACY "2025-11-25"
#define LC_MODERN "2026-07-28"

/* _meta members of a 2026-07-28 request declaring capabilities caps (JSON
 * object text), without the braces around _meta's value. */
#define LC_META(caps)                                                          \
  "\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\","     \
  "\"io.modelcontextprotocol/clientInfo\":{\"name\":\"load\",\"version\":"     \
  "\"1\"},\"io.modelcontextprotocol/clientCapabilities\":" caps "}"

/* The most extra header lines of one request. */
#define LC_MAXH 12

/* One HTTP request. Zero members mean: POST, the MCP endpoint /mcp on
 * 127.0.0.1, no session, no MCP-Protocol-Version, 15 s (75 s under
 * valgrind). POSTs get "Accept: application/json, text/event-stream" and
 * GETs "Accept: text/event-stream", POSTs a JSON Content-Type, unless
 * headers name their own ("Accept:" alone removes it). HEAD asks for no
 * body. */
typedef struct lc_req {
  const char *method;
  const char *path;
  const char *body;
  size_t body_len; /* 0 = strlen(body) */
  const char *session;
  const char *version;
  const char *headers[LC_MAXH]; /* "Name: value", NULL-terminated */
  const char *host;             /* the URL's host (e.g. "[::1]") */
  const char *source;           /* local address to bind (e.g. "127.0.0.2") */
  const char *ca_file;          /* https, trusting this PEM certificate */
  long timeout_ms;
} lc_req;

/* The answer: status 0 when none came (curl_rc says why). */
typedef struct lc_resp {
  long status;
  bool headers_done; /* the final response's header block has ended */
  lc_buf head;       /* the header lines of the final response */
  lc_buf body;
  CURLcode curl_rc;
} lc_resp;

/* Performs q on c (a handle reused for keep-alive) against 127.0.0.1:port;
 * r is reset first. */
void lc_http(CURL *c, uint16_t port, const lc_req *q, lc_resp *r);
/* Sets c up for q as lc_http does, without performing it, for a caller
 * that replaces callbacks or options; r is reset first. Returns the header
 * list to free with curl_slist_free_all once the transfer is over. */
struct curl_slist *lc_prepare(CURL *c, uint16_t port, const lc_req *q,
                              lc_resp *r);
/* Takes one header line into r as lc_http's header callback does: a status
 * line starts a new response (after an interim one), the blank line ends
 * its header block. */
void lc_head_line(lc_resp *r, const char *p, size_t len);
void lc_resp_free(lc_resp *r);
/* The status of a status line ("HTTP/1.1 200 OK": 200), or 0 when line (len
 * bytes) is none. */
long lc_status_of(const char *line, size_t len);
/* Copies the value of the first header called name (case-insensitive) in
 * the header block head (n bytes, one header a line) into out, without the
 * white space around it and truncated to size; false when absent. */
bool lc_header_in(const char *head, size_t n, const char *name, char *out,
                  size_t size);
/* lc_header_in of the final response's header block. */
bool lc_resp_header(const lc_resp *r, const char *name, char *out, size_t size);
/* The JSON-RPC messages of a response, as a cJSON array (caller deletes):
 * the body when it is application/json, the data of each SSE event when it
 * is text/event-stream; NULL when the body is neither or does not parse. An
 * empty body gives an empty array. */
struct cJSON *lc_messages(const lc_resp *r);

/* A TCP connection to 127.0.0.1:port from source (NULL = any), blocking,
 * or -1. */
int lc_connect(uint16_t port, const char *source);
/* Sends all n bytes; false on error. MSG_NOSIGNAL: a closed peer is
 * EPIPE, never SIGPIPE. */
bool lc_send_all(int fd, const void *data, size_t n);
/* Closes fd with a reset (SO_LINGER 0) instead of an orderly FIN. */
void lc_close_reset(int fd);

long lc_now_ms(void);
void lc_sleep_ms(long ms);
/* Resident set size of this process in KiB (-1 when unknown). */
long lc_rss_kib(void);
/* True under valgrind (MCP_VALGRIND_RUN set, as tests/http does). */
bool lc_slow_run(void);
/* True in sanitizer builds, where RSS says little. */
bool lc_sanitized(void);
/* normal, or small under valgrind; under ThreadSanitizer (MCP_TSAN_RUN set)
 * the middle of the two. An environment variable MCP_LOAD_SCALE, a
 * percentage, scales the result further (minimum 1). */
long lc_scaled(long normal, long small);

#endif
