/* The Streamable HTTP transport on libmicrohttpd: the daemon, the checks
 * every request passes before its body is read, and the routing of POST,
 * GET and DELETE to the two protocol eras.
 *
 * Built on the public API of mcp.h only. Each POST is handed to an engine
 * session with mcp_session_receive_to and a sink of its own (a stream,
 * http_stream.c); its reply goes out as application/json when it was ready
 * at once and alone, else as text/event-stream. Legacy clients (2025-03-26
 * to 2025-11-25) live in sessions created by initialize (http_session.c);
 * 2026-07-28 requests get a session of their own that ends with the
 * request, so nothing is shared between them. */
#include <arpa/inet.h>
#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "http_int.h"

#define DEFAULT_BIND "127.0.0.1"
#define DEFAULT_PATH "/mcp"
#define DEFAULT_MAX_BODY ((size_t)4 << 20)
#define DEFAULT_HEADER_MEMORY ((size_t)32 << 10)
#define DEFAULT_TIMEOUT_S 30
#define DEFAULT_MAX_CONNECTIONS 512
#define DEFAULT_PER_IP 64
#define DEFAULT_MAX_SESSIONS 1024
#define DEFAULT_IDLE_S 600
#define DEFAULT_MAX_INFLIGHT 64
#define DEFAULT_REPLAY 64
#define TICK_MS 1000
/* Unsent bytes one SSE stream may hold before its client counts as gone. */
#define MIN_STREAM_BUFFER ((size_t)16 << 20)

/* ---- small helpers ------------------------------------------------------- */

/* Messages go where the library's own go: the server's log callback, or
 * standard error for warnings and errors. */
void mcp__http_log(const mcp_http *http, mcp_log_level level, const char *fmt,
                   ...) {
  char line[512];
  int n = snprintf(line, sizeof line, "http: ");
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(line + n, sizeof line - (size_t)n, fmt, ap);
  va_end(ap);
  /* The server's log callback, like the engine's own messages. */
  if (http && http->srv)
    mcp_server_log(http->srv, level, line);
  else if (level >= MCP_LOG_WARNING)
    fprintf(stderr, "libmcp: %s\n", line);
  /* An error that makes mcp_http_start fail is the caller's to read too
   * (mcp_server_errmsg): the first one, which says why. */
  mcp_http *h = (mcp_http *)http;
  if (h && h->starting && level >= MCP_LOG_ERROR && !h->start_reported &&
      pthread_equal(pthread_self(), h->starter)) {
    snprintf(h->start_message, sizeof h->start_message, "mcp_http_start: %s",
             line + n);
    h->start_reported = true;
  }
}

/* libmicrohttpd's own messages (a client that vanished, a malformed
 * request) are routine on a server; they are not worth a warning. Those
 * given on the thread inside mcp_http_start say why starting failed (an
 * address in use, a thread that cannot be created), so the last one is
 * kept for the error logged then. */
static void mhd_log(void *cls, const char *fmt, va_list ap)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 0)))
#endif
    ;
static void mhd_log(void *cls, const char *fmt, va_list ap) {
  mcp_http *h = cls;
  if (pthread_equal(pthread_self(), h->starter))
    vsnprintf(h->start_error, sizeof h->start_error, fmt, ap);
}

void mcp__http_list_free(char **list) {
  for (size_t i = 0; list && list[i]; i++)
    mcp_free(list[i]);
  mcp_free(list);
}

int mcp__http_list_copy(const char *const *list, char ***out) {
  *out = NULL;
  if (list == NULL)
    return 0;
  size_t n = 0;
  while (list[n])
    n++;
  char **copy = mcp_calloc(n + 1, sizeof *copy);
  if (copy == NULL)
    return MCP_ENOMEM;
  for (size_t i = 0; i < n; i++) {
    if ((copy[i] = mcp__strdup(list[i])) == NULL) {
      mcp__http_list_free(copy);
      return MCP_ENOMEM;
    }
  }
  *out = copy;
  return 0;
}

/* ---- responses ----------------------------------------------------------- */

typedef struct header_pair {
  const char *name, *value;
} header_pair;

/* Queues a response with body (from mcp_malloc, taken over; NULL for
 * none). */
static enum MHD_Result respond(mcp__http_req *r, unsigned status,
                               const char *content_type, char *body, size_t len,
                               const header_pair *extra, size_t nextra) {
  /* MHD_RESPMEM_MUST_FREE would free the body with free(): it came from
   * the embedder's allocator, so it goes back through mcp_free. */
  struct MHD_Response *resp =
      body ? MHD_create_response_from_buffer_with_free_callback(len, body,
                                                                mcp_free)
           : MHD_create_response_from_buffer(0, (void *)"",
                                             MHD_RESPMEM_PERSISTENT);
  if (resp == NULL) { /* then libmicrohttpd did not take the body */
    mcp_free(body);
    return MHD_NO;
  }
  if (content_type)
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, content_type);
  for (size_t i = 0; i < nextra; i++)
    if (extra[i].value)
      MHD_add_response_header(resp, extra[i].name, extra[i].value);
  enum MHD_Result ret = MHD_queue_response(r->conn, status, resp);
  MHD_destroy_response(resp);
  r->answered = true;
  return ret;
}

/* Whether an id-less error omits "id" (2025-11-25 and later) or says
 * "id": null (earlier versions, and when the version is unknown: a missing
 * MCP-Protocol-Version means 2025-03-26). */
static bool omit_id(const char *version) {
  return version &&
         (mcp__http_legacy_version(version) ||
          strcmp(version, MCP__HTTP_MODERN_VERSION) == 0) &&
         strcmp(version, "2025-11-25") >= 0;
}

/* Answers with a JSON-RPC error, framed as the engine frames its own
 * (lib/rpc). id is the request's id as JSON text, or NULL when it could not
 * be read (then omitted or null, as version asks). */
static enum MHD_Result respond_error(mcp__http_req *r, unsigned status,
                                     int code, const char *message,
                                     const char *id, const char *version,
                                     const header_pair *extra, size_t nextra) {
  mcp__buf b = {0};
  mcp__rpc_error(&b, id, id ? strlen(id) : 0,
                 omit_id(version) ? MCP__ID_OMIT : MCP__ID_NULL, code, message,
                 NULL);
  size_t len = 0;
  char *body = mcp__buf_take(&b, &len);
  if (body == NULL)
    return MHD_NO;
  return respond(r, status, "application/json", body, len, extra, nextra);
}

static const char *header(mcp__http_req *r, const char *name) {
  return MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND, name);
}

/* A header's value without the optional white space around it, as a
 * pointer and a length; false when the header is absent. */
static bool header_span(mcp__http_req *r, const char *name, const char **v,
                        size_t *n) {
  if (MHD_lookup_connection_value_n(r->conn, MHD_HEADER_KIND, name,
                                    strlen(name), v, n) != MHD_YES ||
      *v == NULL)
    return false;
  while (*n > 0 && (**v == ' ' || **v == '\t')) {
    (*v)++;
    (*n)--;
  }
  while (*n > 0 && ((*v)[*n - 1] == ' ' || (*v)[*n - 1] == '\t'))
    (*n)--;
  return true;
}

/* Copies a trimmed header value into buf; NULL when absent, "" when it
 * does not fit (no valid value of the headers read this way is long). */
static const char *header_copy(mcp__http_req *r, const char *name, char *buf,
                               size_t size) {
  const char *v;
  size_t n;
  if (!header_span(r, name, &v, &n))
    return NULL;
  if (n >= size)
    n = 0;
  memcpy(buf, v, n);
  buf[n] = '\0';
  return buf;
}

static enum MHD_Result method_not_allowed(mcp__http_req *r, const char *allow,
                                          const char *version) {
  const header_pair h = {MHD_HTTP_HEADER_ALLOW, allow};
  return respond_error(r, MHD_HTTP_METHOD_NOT_ALLOWED, MCP__RPC_INVALID_REQUEST,
                       "Method Not Allowed", NULL, version, &h, 1);
}

/* ---- checks before the body ---------------------------------------------- */

/* Headers that may appear once, and must not carry a NUL. */
static const char *const critical[] = {
    "Content-Length", "Content-Type",  "Mcp-Session-Id", "MCP-Protocol-Version",
    "Authorization",  "Last-Event-ID", "Mcp-Method",     "Mcp-Name"};
#define NCRITICAL (sizeof critical / sizeof critical[0])

/* What one pass over the request headers found. */
typedef struct header_scan {
  /* The header block as libmicrohttpd holds it, and where the previous
   * value ended and what it was (see hidden_bytes). */
  const char *base;
  size_t size;
  const char *prev_end;
  int prev_class;
  const char *host, *origin, *transfer_encoding, *fetch_site;
  size_t host_len, origin_len, te_len, fetch_site_len;
  unsigned nhost, norigin, nte, ncritical_dup, nfetch_site;
  unsigned counts[NCRITICAL];
  bool nul;        /* a NUL inside a critical header */
  bool host_nul;   /* in Host or Origin: refused as not allowed */
  unsigned accept; /* union of every Accept header */
  bool has_content_length;
} header_scan;

/* Header classes for hidden-byte checks. */
#define CLASS_OTHER 0
#define CLASS_ORIGIN_HOST 1
#define CLASS_CRITICAL 2

/* libmicrohttpd 0.9.75 ends a header value at its first NUL and keeps the
 * rest of the line out of sight ("Host: localhost\0.evil" reads as
 * "localhost"). It parses the header block in place, so between the end
 * of one value and the next name there is only the line end it zeroed (1
 * or 2 bytes; 4 after the last value, with the empty line). Anything else
 * there was hidden from us: the header is refused. A layout other than
 * that (an obs-fold continuation line, say) counts as hidden too. This
 * reads libmicrohttpd's buffer as 0.9.75 lays it out, so it is done only
 * with that version (see hidden_check_applies). */
static bool hidden_bytes(const header_scan *s, const char *to, size_t max) {
  const char *from = s->prev_end;
  if (s->base == NULL)
    return false; /* the block's size is unknown: nothing to compare */
  if (from < s->base || to > s->base + s->size || to <= from ||
      (size_t)(to - from) > max)
    return true;
  for (const char *p = from; p < to; p++)
    if (*p != '\0')
      return true;
  return false;
}

static void mark_hidden(header_scan *s) {
  if (s->prev_class == CLASS_ORIGIN_HOST)
    s->host_nul = true;
  else if (s->prev_class == CLASS_CRITICAL)
    s->nul = true;
}

static enum MHD_Result scan_header(void *cls, enum MHD_ValueKind kind,
                                   const char *key, size_t key_size,
                                   const char *value, size_t value_size) {
  header_scan *s = cls;
  (void)kind;
  if (s->prev_end && hidden_bytes(s, key, 2))
    mark_hidden(s);
  s->prev_end = value ? value + value_size : key + key_size;
  s->prev_class = CLASS_CRITICAL;
  bool nul = memchr(key, '\0', key_size) != NULL ||
             (value && memchr(value, '\0', value_size) != NULL);
  /* Optional white space around a value is not part of it. */
  while (value && value_size > 0 && (*value == ' ' || *value == '\t')) {
    value++;
    value_size--;
  }
  while (value && value_size > 0 &&
         (value[value_size - 1] == ' ' || value[value_size - 1] == '\t'))
    value_size--;
  if (key_size == 4 && strncasecmp(key, "Host", 4) == 0) {
    s->prev_class = CLASS_ORIGIN_HOST;
    s->nhost++;
    s->host = value;
    s->host_len = value_size;
    s->host_nul |= nul;
  } else if (key_size == 6 && strncasecmp(key, "Origin", 6) == 0) {
    s->prev_class = CLASS_ORIGIN_HOST;
    s->norigin++;
    s->origin = value;
    s->origin_len = value_size;
    s->host_nul |= nul;
  } else if (key_size == 17 && strncasecmp(key, "Transfer-Encoding", 17) == 0) {
    s->nte++;
    s->transfer_encoding = value;
    s->te_len = value_size;
    s->nul |= nul;
  } else if (key_size == 6 && strncasecmp(key, "Accept", 6) == 0) {
    s->accept |= mcp__http_accept(value);
  } else if (key_size == 14 && strncasecmp(key, "Sec-Fetch-Site", 14) == 0) {
    s->nfetch_site++;
    s->fetch_site = value;
    s->fetch_site_len = value ? value_size : 0;
  } else {
    s->prev_class = CLASS_OTHER;
    for (size_t i = 0; i < NCRITICAL; i++) {
      if (key_size == strlen(critical[i]) &&
          strncasecmp(key, critical[i], key_size) == 0) {
        if (++s->counts[i] > 1)
          s->ncritical_dup++;
        s->nul |= nul;
        s->prev_class = CLASS_CRITICAL;
        if (i == 0)
          s->has_content_length = true;
      }
    }
  }
  return MHD_YES;
}

/* ---- authorization ------------------------------------------------------- */

/* The index of Authorization in critical[]. */
#define AUTHORIZATION 4

/* Answers a request that did not authenticate: status with the
 * WWW-Authenticate challenge (error NULL for none). */
static enum MHD_Result respond_challenge(mcp_http *h, mcp__http_req *r,
                                         unsigned status, const char *error,
                                         const char *message,
                                         const char *version) {
  char *challenge = mcp__http_auth_challenge(h->auth, error, NULL);
  if (challenge == NULL)
    return MHD_NO;
  const header_pair hp = {MHD_HTTP_HEADER_WWW_AUTHENTICATE, challenge};
  enum MHD_Result ret = respond_error(r, status, MCP__RPC_INVALID_REQUEST,
                                      message, NULL, version, &hp, 1);
  mcp_free(challenge);
  return ret;
}

/* How a request authenticates by its bearer token (RFC 6750 §2.1: the
 * header only, exactly once); r->caller is filled when it does. */
static mcp__http_auth_result authenticate(mcp_http *h, mcp__http_req *r,
                                          const header_scan *s) {
  unsigned n = s->counts[AUTHORIZATION];
  /* A token in the query string is never read; beside a header it makes
   * two methods at once, which RFC 6750 §2 forbids. */
  bool in_query = MHD_lookup_connection_value(r->conn, MHD_GET_ARGUMENT_KIND,
                                              "access_token") != NULL;
  const char *v;
  size_t len;
  if (n == 0)
    return MCP__HTTP_AUTH_MISSING;
  if (n > 1 || s->nul || in_query || !header_span(r, "Authorization", &v, &len))
    return MCP__HTTP_AUTH_MALFORMED;
  return mcp__http_authenticate(h, v, len, &r->caller);
}

/* Answers a request that did not authenticate (res is not
 * MCP__HTTP_AUTH_OK). */
static enum MHD_Result respond_unauthenticated(mcp_http *h, mcp__http_req *r,
                                               mcp__http_auth_result res,
                                               const char *version) {
  switch (res) {
  case MCP__HTTP_AUTH_MISSING:
    return respond_challenge(h, r, MHD_HTTP_UNAUTHORIZED, NULL,
                             "Unauthorized: a bearer token is required",
                             version);
  case MCP__HTTP_AUTH_MALFORMED:
    return respond_challenge(h, r, MHD_HTTP_BAD_REQUEST, "invalid_request",
                             "Bad Request: malformed Authorization (send "
                             "exactly one header 'Authorization: Bearer "
                             "<token>', and no token in the query)",
                             version);
  case MCP__HTTP_AUTH_INVALID:
    return respond_challenge(h, r, MHD_HTTP_UNAUTHORIZED, "invalid_token",
                             "Unauthorized: the bearer token is invalid or "
                             "expired",
                             version);
  case MCP__HTTP_AUTH_OK:
  case MCP__HTTP_AUTH_NOMEM:
  default:
    return respond_error(r, MHD_HTTP_INTERNAL_SERVER_ERROR,
                         MCP__RPC_INTERNAL_ERROR, "Internal error", NULL,
                         version, NULL, 0);
  }
}

/* Serves the protected resource metadata (RFC 9728 §3) to anyone. */
static enum MHD_Result respond_metadata(mcp_http *h, mcp__http_req *r,
                                        const char *method,
                                        const char *version) {
  if (strcmp(method, MHD_HTTP_METHOD_GET) != 0 &&
      strcmp(method, MHD_HTTP_METHOD_HEAD) != 0) {
    const header_pair allow = {MHD_HTTP_HEADER_ALLOW, "GET, HEAD"};
    return respond_error(r, MHD_HTTP_METHOD_NOT_ALLOWED,
                         MCP__RPC_INVALID_REQUEST, "Method Not Allowed", NULL,
                         version, &allow, 1);
  }
  size_t len = 0;
  char *doc = mcp__http_auth_prm(h, &len);
  if (doc == NULL)
    return respond_error(r, MHD_HTTP_INTERNAL_SERVER_ERROR,
                         MCP__RPC_INTERNAL_ERROR, "Internal error", NULL,
                         version, NULL, 0);
  return respond(r, MHD_HTTP_OK, "application/json", doc, len, NULL, 0);
}

/* ---- the checks before the body, as a table ----------------------------- */

/* What the checks read: the request, the scan of its headers, and what
 * earlier checks found. */
typedef struct precheck_ctx {
  mcp_http *h;
  mcp__http_req *r;
  const char *url, *method, *version;
  header_scan s;
  const char *const *hosts, *const *origins;
  mcp__http_auth_result auth; /* the authorize row's finding */
  unsigned long long content_length;
  bool has_content_length;
} precheck_ctx;

/* One check: refuses() returns NULL when the request passes it, else the
 * message of the refusal it answers, sent as a JSON-RPC error (code) with
 * the HTTP status. A row whose refusal is not such an error (a challenge,
 * the metadata, an Allow header, no answer at all) answers it with its own
 * answer(), given the message. post_only rows look at POST requests only;
 * the rows before them have set the request's method. */
typedef struct precheck_row {
  const char *(*refuses)(precheck_ctx *c);
  unsigned status;
  int code;
  enum MHD_Result (*answer)(precheck_ctx *c, const char *message);
  bool post_only;
} precheck_row;

static const char *refuses_stopping(precheck_ctx *c) {
  pthread_mutex_lock(&c->h->lock);
  bool stopping = c->h->stopping;
  pthread_mutex_unlock(&c->h->lock);
  return stopping ? "Service Unavailable: the server is stopping" : NULL;
}

static const char *refuses_host_count(precheck_ctx *c) {
  if (c->s.nhost == 1)
    return NULL;
  return c->s.nhost ? "Bad Request: more than one Host header"
                    : "Bad Request: a Host header is required";
}

static bool host_allowed(const precheck_ctx *c) {
  return !c->s.host_nul &&
         mcp__http_host_allowed(c->hosts, c->s.host, c->s.host_len);
}

static const char *refuses_host_origin(precheck_ctx *c) {
  const header_scan *s = &c->s;
  if (host_allowed(c) && s->norigin <= 1 &&
      (s->norigin == 0 ||
       mcp__http_origin_allowed(c->origins, s->origin, s->origin_len)))
    return NULL;
  return s->norigin && host_allowed(c) ? "Forbidden: this Origin is not allowed"
                                       : "Forbidden: this Host is not allowed";
}

/* A browser says where a request comes from in Sec-Fetch-Site; one from
 * another site that carries no Origin (a navigation, an image, a form:
 * requests the Origin check cannot judge) is refused, as a foreign Origin
 * would be. A request the user made (none) or the server's own page made
 * (same-origin) goes on, and so does any request with an Origin, which the
 * allowlist has judged. */
static const char *refuses_fetch_site(precheck_ctx *c) {
  const header_scan *s = &c->s;
  if (s->norigin != 0 || s->nfetch_site == 0)
    return NULL;
  if (s->nfetch_site == 1 &&
      ((s->fetch_site_len == 11 &&
        strncasecmp(s->fetch_site, "same-origin", 11) == 0) ||
       (s->fetch_site_len == 4 && strncasecmp(s->fetch_site, "none", 4) == 0)))
    return NULL;
  return "Forbidden: a browser request from another site without Origin";
}

/* The metadata is public (RFC 9728): its path is answered before any
 * token is asked for. */
static const char *refuses_metadata_path(precheck_ctx *c) {
  return c->h->auth && mcp__http_auth_wellknown(c->h->auth, c->url)
             ? "protected resource metadata"
             : NULL;
}

static enum MHD_Result answer_metadata(precheck_ctx *c, const char *message) {
  (void)message;
  return respond_metadata(c->h, c->r, c->method, c->version);
}

/* Every other path, the endpoint and unknown ones alike, needs a valid
 * token first; without auth the caller is the configured principal. */
static const char *refuses_unauthenticated(precheck_ctx *c) {
  if (c->h->auth == NULL) {
    c->r->caller.principal = c->h->principal;
    return NULL;
  }
  c->auth = authenticate(c->h, c->r, &c->s);
  return c->auth == MCP__HTTP_AUTH_OK ? NULL : "unauthenticated";
}

static enum MHD_Result answer_unauthenticated(precheck_ctx *c,
                                              const char *message) {
  (void)message;
  return respond_unauthenticated(c->h, c->r, c->auth, c->version);
}

static const char *refuses_path(precheck_ctx *c) {
  return strcmp(c->url, c->h->path) != 0 ? "Not Found" : NULL;
}

/* Sets the request's method, or refuses one the endpoint does not serve. */
static const char *refuses_method(precheck_ctx *c) {
  static const struct {
    const char *name;
    int method;
  } served[] = {{MHD_HTTP_METHOD_POST, MCP__HTTP_POST},
                {MHD_HTTP_METHOD_GET, MCP__HTTP_GET},
                {MHD_HTTP_METHOD_DELETE, MCP__HTTP_DELETE}};
  for (size_t i = 0; i < sizeof served / sizeof served[0]; i++)
    if (strcmp(c->method, served[i].name) == 0) {
      c->r->method = served[i].method;
      return NULL;
    }
  return "Method Not Allowed";
}

static enum MHD_Result answer_method(precheck_ctx *c, const char *message) {
  (void)message;
  return method_not_allowed(
      c->r, c->h->disable_get ? "POST, DELETE" : "GET, POST, DELETE",
      c->version);
}

/* Shapes libmicrohttpd 0.9.75 lets through: two headers that decide
 * routing or framing, a NUL hidden in one, Content-Length beside chunked
 * (request smuggling). */
static const char *refuses_header_shapes(precheck_ctx *c) {
  const header_scan *s = &c->s;
  bool chunked = s->nte == 1 && s->te_len == 7 &&
                 strncasecmp(s->transfer_encoding, "chunked", 7) == 0;
  if (s->ncritical_dup || s->nul || s->nte > 1 || (s->nte && !chunked) ||
      (s->nte && s->has_content_length))
    return "Bad Request: duplicate, malformed or conflicting headers";
  return NULL;
}

static const char *refuses_content_type(precheck_ctx *c) {
  return mcp__http_content_type_json(header(c->r, "Content-Type"))
             ? NULL
             : "Unsupported Media Type: the body must be application/json";
}

static const char *refuses_accept(precheck_ctx *c) {
  unsigned both = MCP__HTTP_ACCEPT_JSON | MCP__HTTP_ACCEPT_SSE;
  return (c->s.accept & both) == both
             ? NULL
             : "Not Acceptable: the client must accept both "
               "application/json and text/event-stream";
}

/* Reads Content-Length when there is one: decimal digits only. */
static const char *refuses_content_length(precheck_ctx *c) {
  char cl_buf[24];
  const char *cl = header_copy(c->r, "Content-Length", cl_buf, sizeof cl_buf);
  if (cl == NULL)
    return NULL;
  char *end;
  errno = 0;
  unsigned long long n = strtoull(cl, &end, 10);
  if (*cl < '0' || *cl > '9' || *end != '\0' || errno == ERANGE)
    return "Bad Request: malformed Content-Length";
  c->content_length = n;
  c->has_content_length = true;
  return NULL;
}

static const char *refuses_body_size(precheck_ctx *c) {
  return c->has_content_length && c->content_length > c->h->max_body
             ? "Content Too Large"
             : NULL;
}

/* A body of announced length gets its buffer now; without memory the
 * connection is dropped unanswered. */
static const char *refuses_body_memory(precheck_ctx *c) {
  if (!c->has_content_length)
    return NULL;
  size_t n = (size_t)c->content_length;
  if (n > 0 && (c->r->body = mcp_malloc(n)) == NULL)
    return "out of memory";
  c->r->cap = n;
  return NULL;
}

static enum MHD_Result answer_nothing(precheck_ctx *c, const char *message) {
  (void)c;
  (void)message;
  return MHD_NO;
}

/* The checks that need no body, in the order their refusals must come:
 * DNS rebinding first, so a foreign Host or Origin learns nothing else. */
static const precheck_row prechecks[] = {
    {refuses_stopping, MHD_HTTP_SERVICE_UNAVAILABLE, MCP__RPC_SERVER_BUSY, NULL,
     false},
    {refuses_host_count, MHD_HTTP_BAD_REQUEST, MCP__RPC_INVALID_REQUEST, NULL,
     false},
    {refuses_host_origin, MHD_HTTP_FORBIDDEN, MCP__RPC_INVALID_REQUEST, NULL,
     false},
    {refuses_fetch_site, MHD_HTTP_FORBIDDEN, MCP__RPC_INVALID_REQUEST, NULL,
     false},
    {refuses_metadata_path, 0, 0, answer_metadata, false},
    {refuses_unauthenticated, 0, 0, answer_unauthenticated, false},
    {refuses_path, MHD_HTTP_NOT_FOUND, MCP__RPC_INVALID_REQUEST, NULL, false},
    {refuses_method, 0, 0, answer_method, false},
    {refuses_header_shapes, MHD_HTTP_BAD_REQUEST, MCP__RPC_INVALID_REQUEST,
     NULL, false},
    {refuses_content_type, MHD_HTTP_UNSUPPORTED_MEDIA_TYPE,
     MCP__RPC_INVALID_REQUEST, NULL, true},
    {refuses_accept, MHD_HTTP_NOT_ACCEPTABLE, MCP__RPC_INVALID_REQUEST, NULL,
     true},
    {refuses_content_length, MHD_HTTP_BAD_REQUEST, MCP__RPC_INVALID_REQUEST,
     NULL, true},
    {refuses_body_size, MHD_HTTP_CONTENT_TOO_LARGE, MCP__RPC_INVALID_REQUEST,
     NULL, true},
    {refuses_body_memory, 0, 0, answer_nothing, true},
};

/* One pass over the headers (with the hidden-byte check where it
 * applies), and the protocol version they name. */
static void scan_headers(mcp_http *h, mcp__http_req *r, const char *method,
                         header_scan *s) {
  const union MHD_ConnectionInfo *info =
      h->find_hidden ? MHD_get_connection_info(
                           r->conn, MHD_CONNECTION_INFO_REQUEST_HEADER_SIZE)
                     : NULL;
  if (info && info->header_size > 0) {
    s->base = method; /* the request line starts the block */
    s->size = info->header_size;
  }
  MHD_get_connection_values_n(r->conn, MHD_HEADER_KIND, scan_header, s);
  if (s->prev_end && s->base && hidden_bytes(s, s->base + s->size, 4))
    mark_hidden(s);
  r->version = header_copy(r, "MCP-Protocol-Version", r->version_buf,
                           sizeof r->version_buf);
}

/* Runs every check that needs no body (prechecks, in order). Returns true
 * when the request may go on; otherwise the first refusal is queued (*ret
 * says how that went). */
static bool precheck(mcp_http *h, mcp__http_req *r, const char *url,
                     const char *method, enum MHD_Result *ret) {
  precheck_ctx c = {
      .h = h,
      .r = r,
      .url = url,
      .method = method,
      .hosts =
          h->hosts ? (const char *const *)h->hosts : mcp__http_default_hosts,
      .origins = h->origins ? (const char *const *)h->origins
                            : mcp__http_default_hosts,
  };
  scan_headers(h, r, method, &c.s);
  c.version = r->version;
  for (size_t i = 0; i < sizeof prechecks / sizeof prechecks[0]; i++) {
    const precheck_row *row = &prechecks[i];
    if (row->post_only && r->method != MCP__HTTP_POST)
      continue;
    const char *why = row->refuses(&c);
    if (why == NULL)
      continue;
    *ret = row->answer ? row->answer(&c, why)
                       : respond_error(r, row->status, row->code, why, NULL,
                                       c.version, NULL, 0);
    return false;
  }
  return true;
}

/* Appends a piece of the body; false when it would pass the cap (the
 * connection is then closed: 0.9.75 cannot answer in the middle of an
 * upload) or memory ran out. */
static bool collect(mcp_http *h, mcp__http_req *r, const char *data, size_t n) {
  if (n > h->max_body - r->len)
    return false;
  if (r->len + n > r->cap) {
    size_t cap = r->cap ? r->cap : 4096;
    while (cap < r->len + n)
      cap *= 2;
    if (cap > h->max_body)
      cap = h->max_body;
    char *p = mcp_realloc(r->body, cap);
    if (p == NULL)
      return false;
    r->body = p;
    r->cap = cap;
  }
  memcpy(r->body + r->len, data, n);
  r->len += n;
  return true;
}

/* ---- reading the body ahead of the engine -------------------------------- */

/* What routing and the header checks need to know about a POST body. It
 * is parsed once, strictly, by the engine's own parser
 * (mcp_message_parse), and the message read here is the one handed to the
 * session: routing and the checks of the headers against the body can
 * never see the bytes otherwise than the engine does. A body that does not
 * parse goes to the engine as bytes, and it answers the error. */
#define PEEK_ID_INLINE 72

typedef struct peek {
  mcp_message *msg; /* owned until handed to the session */
  const cJSON *root;
  const char *method;
  char *id; /* the id as JSON text, when it can be echoed exactly: it
               outlives msg, so it is a copy (in id_inline when short) */
  char id_inline[PEEK_ID_INLINE];
  bool has_id;
  bool initialize;
  size_t ncalls; /* requests that start a call (mcp_route.calls) */
  bool modern;   /* served in the modern era (mcp_route.era) */
  const char *meta_version;
  bool meta_ok; /* the _meta the modern era requires is there */
  /* When the method needs Mcp-Name: the params member it must equal, what
   * that is, and the member itself (mcp_route.name_*). */
  const char *name_member, *name_description;
  const cJSON *name;
  bool oom; /* JSON that could not be read, or an id that could
               not be printed, for lack of memory */
} peek;

/* Keeps a copy of the message's raw id (which lives in the message). */
static void peek_id(peek *p) {
  size_t n;
  const char *raw = mcp_message_id(p->msg, &n);
  if (raw == NULL)
    return;
  p->id = n < sizeof p->id_inline ? p->id_inline : mcp_malloc(n + 1);
  if (p->id == NULL) {
    p->oom = true; /* the transport's own answers must echo it */
    return;
  }
  memcpy(p->id, raw, n + 1);
}

static void peek_body(const char *body, size_t len, peek *p) {
  *p = (peek){0};
  if (len == 0)
    return;
  int rc = mcp_message_parse(body, len, &p->msg);
  if (rc) {
    p->oom = rc == MCP_ENOMEM;
    return;
  }
  p->root = mcp_message_json(p->msg);
  /* The engine says what the message is: its method, era, the calls it
   * starts (what max_inflight bounds) and the name its Mcp-Name carries. */
  mcp_route route;
  if (mcp_message_route(p->msg, &route) != 0)
    return;
  p->ncalls = route.calls;
  if (route.method == NULL)
    return;
  const cJSON *id = mcp__json_member(p->root, "id");
  p->method = route.method;
  p->has_id = route.request;
  if (cJSON_IsString(id) ||
      (cJSON_IsNumber(id) && id->valuedouble <= 9007199254740991.0 &&
       id->valuedouble >= -9007199254740991.0 &&
       /* the range first: converting a larger double is undefined */
       id->valuedouble == (double)(long long)id->valuedouble))
    peek_id(p);
  p->initialize = route.initialize;
  p->modern = route.era == MCP_ERA_MODERN;
  p->meta_version = route.meta_version;
  p->meta_ok = route.meta_complete;
  p->name_member = route.name_member;
  p->name_description = route.name_description;
  p->name = route.name;
}

static void peek_free(peek *p) {
  if (p->id != p->id_inline)
    mcp_free(p->id);
  mcp_message_free(p->msg);
}

/* ---- answering a POST ---------------------------------------------------- */

/* The live list is newest first, as the stop and housekeeping walks have
 * always seen it. */
static void live_link(mcp_http *h, mcp__http_stream *st) {
  mcp__list_push_front(&h->live, &st->live);
}

/* Removing a stream that is not live does nothing. */
static void live_unlink(mcp__http_stream *st) { mcp__list_remove(&st->live); }

static ssize_t sse_reader(void *cls, uint64_t pos, char *buf, size_t max) {
  (void)pos;
  return mcp__http_stream_read(cls, buf, max);
}

/* Queues the text/event-stream response of a stream attached to r. */
static enum MHD_Result respond_sse(mcp__http_req *r, const char *session_id) {
  struct MHD_Response *resp = MHD_create_response_from_callback(
      MHD_SIZE_UNKNOWN, 16 * 1024, sse_reader, r, NULL);
  if (resp == NULL)
    return MHD_NO;
  MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE,
                          "text/event-stream");
  MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL, "no-cache");
  MHD_add_response_header(resp, "X-Accel-Buffering", "no");
  if (session_id)
    MHD_add_response_header(resp, "Mcp-Session-Id", session_id);
  enum MHD_Result ret = MHD_queue_response(r->conn, MHD_HTTP_OK, resp);
  MHD_destroy_response(resp);
  r->answered = true;
  return ret;
}

/* Attaches r to st in the live list; a server that is stopping ends the
 * stream at once so no connection stays suspended. Call with h->lock. */
static void attach_live(mcp_http *h, mcp__http_req *r, mcp__http_stream *st) {
  live_link(h, st);
  if (r->session)
    r->session->attached++;
  if (h->stopping)
    mcp__http_stream_end(st); /* not suspended yet: nothing to resume */
}

/* Keeps what answering needs while r waits (its id is the peek's, which
 * goes with the request's first call). Returns false when memory ran
 * out: r then does not wait. */
static bool keep_reply(mcp__http_req *r, const mcp__http_reply *f) {
  if (r->reply_id || &r->reply == f)
    return true;
  if (f->id && (r->reply_id = mcp__strdup(f->id)) == NULL)
    return false;
  r->reply = *f;
  r->reply.id = r->reply_id;
  return true;
}

/* What settling a POST's stream gave: its mode and, for one message, the
 * message and its JSON-RPC error code. */
typedef struct post_outcome {
  mcp__http_mode mode;
  char *json;
  size_t len;
  int code;
} post_outcome;

/* Settles r's stream into a mode (see mcp__http_stream_settle), attaching
 * it to the live list when it waits or streams. forbidden: the engine
 * refused the request for a scope. */
static post_outcome settle_post(mcp_http *h, mcp__http_req *r,
                                const mcp__http_reply *f, bool forbidden) {
  /* A reply the engine gives later (a call deferred, or run by an
   * executor) is awaited, so that one message is still application/json;
   * not when the server is asked for event streams. */
  bool may_wait = !h->prefer_sse && !mcp__http_stream_engine_done(r->stream) &&
                  keep_reply(r, f);
  post_outcome o = {0};
  pthread_mutex_lock(&h->lock);
  bool waited = r->waiting;
  mcp__http_mode mode = mcp__http_stream_settle(
      r->stream, r, h->prefer_sse && !forbidden, may_wait && !h->stopping,
      f->priming, &o.json, &o.len, &o.code);
  o.mode = mode;
  r->waiting = mode == MCP__HTTP_MODE_PENDING;
  /* A waiting request is attached (and live, so that a stop or a
   * keep-alive interval resumes it) from its first wait until its
   * connection completes, whatever it becomes. */
  if (r->waiting && !waited)
    attach_live(h, r, r->stream);
  bool unkept = false;
  if (mode == MCP__HTTP_MODE_SSE) {
    if (!waited)
      attach_live(h, r, r->stream);
    /* An event stream has ids a client may resume from. */
    unkept = r->session &&
             !mcp__http_session_keep_stream_locked(r->session, r->stream);
  }
  pthread_mutex_unlock(&h->lock);
  if (unkept)
    mcp__http_log(h, MCP_LOG_DEBUG,
                  "an event stream of a session cannot be resumed: every "
                  "kept stream is still live");
  return o;
}

/* One message's HTTP status, after the digest's mapping of its JSON-RPC
 * error code. */
static unsigned message_status(int code, const mcp__http_reply *f) {
  if (code == MCP__RPC_PARSE_ERROR || code == MCP__RPC_INVALID_REQUEST)
    return MHD_HTTP_BAD_REQUEST;
  if (!f->modern)
    return MHD_HTTP_OK;
  if (code == MCP__RPC_METHOD_NOT_FOUND)
    return MHD_HTTP_NOT_FOUND;
  if (code == MCP__RPC_HEADER_MISMATCH || code == MCP__RPC_MISSING_CAPABILITY ||
      code == MCP__RPC_UNSUPPORTED_VERSION ||
      (code == MCP__RPC_INVALID_PARAMS && !f->meta_ok))
    return MHD_HTTP_BAD_REQUEST;
  return MHD_HTTP_OK;
}

/* Answers a request refused for a missing scope: 403 with the engine's
 * message and the challenge naming the scopes (forbidden). Takes json. */
static enum MHD_Result respond_forbidden(mcp_http *h, mcp__http_req *r,
                                         const char *session_id,
                                         const char *forbidden, char *json,
                                         size_t len) {
  char *challenge =
      mcp__http_auth_challenge(h->auth, "insufficient_scope", forbidden);
  if (challenge == NULL) {
    mcp_free(json);
    return MHD_NO;
  }
  const header_pair hp[] = {{"Mcp-Session-Id", session_id},
                            {MHD_HTTP_HEADER_WWW_AUTHENTICATE, challenge}};
  enum MHD_Result ret =
      respond(r, MHD_HTTP_FORBIDDEN, "application/json", json, len, hp, 2);
  mcp_free(challenge);
  return ret;
}

/* Turns the engine's answer to a POST into the HTTP response, or leaves
 * the request waiting for it: on_request calls again, with r->reply,
 * once the stream can settle. */
static enum MHD_Result finish_post(mcp_http *h, mcp__http_req *r, int rc,
                                   const mcp__http_reply *f) {
  const char *version = f->version;
  if (rc == MCP_ENOMEM || rc == MCP_ECLOSED)
    return respond_error(r, MHD_HTTP_INTERNAL_SERVER_ERROR,
                         MCP__RPC_INTERNAL_ERROR, "Internal error", f->id,
                         version, NULL, 0);
  /* A request the policy refused for a missing scope is answered 403 with
   * the challenge the client steps up with (RFC 6750 §3.1), before any
   * stream opens: the engine refused it at once, alone, so its one message
   * is here already, with the scopes the engine said it names. */
  char *forbidden = h->auth ? mcp__http_stream_refusal(r->stream) : NULL;
  post_outcome o = settle_post(h, r, f, forbidden != NULL);
  mcp__http_mode mode = o.mode;
  if (mode == MCP__HTTP_MODE_PENDING) {
    mcp_free(forbidden);
    return MHD_YES; /* no response yet: the connection is suspended */
  }
  const char *session_id = f->session_id;
  if (mode == MCP__HTTP_MODE_FAILED) {
    mcp_free(forbidden);
    mcp_free(o.json);
    /* A reply past the stream's bound closes the connection, as an
     * overflowing event stream does. */
    const header_pair closing = {MHD_HTTP_HEADER_CONNECTION, "close"};
    bool overflow = mcp__http_stream_ended(r->stream);
    return respond_error(r, MHD_HTTP_INTERNAL_SERVER_ERROR,
                         MCP__RPC_INTERNAL_ERROR, "Internal error", f->id,
                         version, &closing, overflow ? 1 : 0);
  }
  const header_pair sid = {"Mcp-Session-Id", session_id};
  if (mode == MCP__HTTP_MODE_JSON && forbidden) {
    enum MHD_Result ret =
        respond_forbidden(h, r, session_id, forbidden, o.json, o.len);
    mcp_free(forbidden);
    return ret;
  }
  mcp_free(forbidden);
  if (mode == MCP__HTTP_MODE_EMPTY)
    return respond(r, MHD_HTTP_ACCEPTED, NULL, NULL, 0, &sid, 1);
  if (mode == MCP__HTTP_MODE_SSE)
    return respond_sse(r, session_id);
  /* One message: its status follows the digest's mapping. */
  return respond(r, message_status(o.code, f), "application/json", o.json,
                 o.len, &sid, 1);
}

/* A modern session's own messages (none are expected: nothing is
 * broadcast to a request's session) are dropped. */
static int drop_message(const char *message, size_t len, void *user_data) {
  (void)message;
  (void)len;
  (void)user_data;
  return 0;
}

/* Gives the stream to the engine as the sink of this message: the
 * message parsed by peek_body when there is one (the session takes it, and
 * what the peek read inside it is gone, but for its copy of the id), else
 * the bytes, for the engine to answer as unreadable. */
static int receive(mcp_session *s, mcp__http_req *r, peek *p) {
  mcp__http_stream_ref(r->stream); /* the sink's, dropped by done */
  const mcp_sink sink = {.send_info = mcp__http_stream_send,
                         .done = mcp__http_stream_done,
                         .user_data = r->stream};
  if (p->msg == NULL)
    return mcp_session_receive_to(s, r->body ? r->body : "", r->len, &sink);
  mcp_message *msg = p->msg;
  p->msg = NULL;
  p->root = p->name = NULL;
  p->method = p->meta_version = NULL;
  return mcp_session_receive_message(s, msg, &sink);
}

/* Checks the modern headers against the body: MCP-Protocol-Version,
 * Mcp-Method and Mcp-Name must say what the body says. Returns NULL or the
 * reason to refuse (in why, size bytes, when it names the method); *oom is
 * set when memory ran out before knowing. */
static const char *modern_mismatch(mcp__http_req *r, const peek *p, char *why,
                                   size_t size, bool *oom) {
  const char *version = r->version;
  if (version == NULL || strcmp(version, p->meta_version) != 0)
    return "Header mismatch: MCP-Protocol-Version must equal "
           "_meta.io.modelcontextprotocol/protocolVersion";
  const char *method;
  size_t method_len;
  if (!header_span(r, "Mcp-Method", &method, &method_len) ||
      method_len != strlen(p->method) ||
      memcmp(method, p->method, method_len) != 0)
    return "Header mismatch: Mcp-Method must equal the body's method";
  if (p->name_member == NULL || !p->has_id)
    return NULL;
  const char *raw;
  size_t raw_len;
  if (!header_span(r, "Mcp-Name", &raw, &raw_len)) {
    snprintf(why, size,
             "Header mismatch: Mcp-Name is required for %s: its value is %s "
             "(params.%s of the body)",
             p->method, p->name_description, p->name_member);
    return why;
  }
  char *name = NULL;
  size_t n = 0;
  if (mcp__http_header_decode(raw, raw_len, &name, &n) == MCP_ENOMEM) {
    *oom = true;
    return NULL;
  }
  bool same = name && cJSON_IsString(p->name) &&
              strlen(p->name->valuestring) == n &&
              memcmp(name, p->name->valuestring, n) == 0;
  mcp_free(name);
  if (same)
    return NULL;
  snprintf(why, size,
           "Header mismatch: Mcp-Name must equal params.%s of the body (%s) "
           "for %s",
           p->name_member, p->name_description, p->method);
  return why;
}

/* The Mcp-Param-* headers of one request, decoded (SEP-2243). */
#define MAX_PARAM_HEADERS 32
typedef struct params {
  struct {
    char *name; /* after "Mcp-Param-" */
    char *value;
  } h[MAX_PARAM_HEADERS];
  size_t n;
  const char *why; /* why the headers are refused, or NULL */
  bool oom;        /* memory ran out: neither agreed nor refused */
} params;

static enum MHD_Result collect_param(void *cls, enum MHD_ValueKind kind,
                                     const char *key, const char *value) {
  static const char prefix[] = "Mcp-Param-";
  params *ps = cls;
  (void)kind;
  if (key == NULL || strncasecmp(key, prefix, sizeof prefix - 1) != 0)
    return MHD_YES;
  const char *name = key + sizeof prefix - 1;
  for (size_t i = 0; i < ps->n; i++)
    if (strcasecmp(ps->h[i].name, name) == 0) {
      ps->why = "Header mismatch: an Mcp-Param header is repeated";
      return MHD_NO;
    }
  if (ps->n == MAX_PARAM_HEADERS) {
    ps->why = "Header mismatch: too many Mcp-Param headers";
    return MHD_NO;
  }
  /* Optional white space around the value is not part of it. */
  size_t len = value ? strlen(value) : 0;
  while (len && (*value == ' ' || *value == '\t')) {
    value++;
    len--;
  }
  while (len && (value[len - 1] == ' ' || value[len - 1] == '\t'))
    len--;
  char *decoded = NULL;
  size_t n;
  int rc =
      value ? mcp__http_header_decode(value, len, &decoded, &n) : MCP_EINVAL;
  char *copy = rc == 0 ? mcp__strdup(name) : NULL;
  if (copy == NULL) {
    mcp_free(decoded);
    if (rc == MCP_EINVAL)
      ps->why = "Header mismatch: an Mcp-Param header is neither plain "
                "visible ASCII nor canonical =?base64?...?=";
    else
      ps->oom = true;
    return MHD_NO;
  }
  ps->h[ps->n].name = copy;
  ps->h[ps->n++].value = decoded;
  return MHD_YES;
}

static const char *param_lookup(const char *name, void *user_data) {
  const params *ps = user_data;
  for (size_t i = 0; i < ps->n; i++)
    if (strcasecmp(ps->h[i].name, name) == 0)
      return ps->h[i].value;
  return NULL;
}

/* Checks a modern tools/call's Mcp-Param-* headers against its arguments;
 * NULL when they agree (or the tool is unknown: the engine answers that),
 * else the reason to refuse, written into why. *oom is set when memory ran
 * out before knowing. */
static const char *param_mismatch(mcp_http *h, mcp__http_req *r, const peek *p,
                                  char *why, size_t size, bool *oom) {
  if (p->method == NULL || strcmp(p->method, "tools/call") != 0 ||
      !cJSON_IsString(p->name))
    return NULL;
  params ps = {0};
  MHD_get_connection_values(r->conn, MHD_HEADER_KIND, collect_param, &ps);
  const char *bad = ps.why;
  *oom = ps.oom;
  if (bad == NULL && !ps.oom) {
    const cJSON *args =
        mcp__json_member(mcp__json_member(p->root, "params"), "arguments");
    int rc = mcp_server_check_param_headers(h->srv, p->name->valuestring, args,
                                            param_lookup, &ps, why, size);
    if (rc == MCP_EINVAL)
      bad = why;
  }
  for (size_t i = 0; i < ps.n; i++) {
    mcp_free(ps.h[i].name);
    mcp_free(ps.h[i].value);
  }
  return bad;
}

static enum MHD_Result post_modern(mcp_http *h, mcp__http_req *r, peek *p) {
  const char *version = MCP__HTTP_MODERN_VERSION;
  if (p->method && p->has_id && p->meta_version == NULL)
    return respond_error(
        r, MHD_HTTP_BAD_REQUEST, MCP__RPC_INVALID_PARAMS,
        "Invalid params: _meta[io.modelcontextprotocol/protocolVersion] is "
        "required (a string)",
        p->id, version, NULL, 0);
  /* The header rules (SEP-2243) are rules of requests: a notification is
   * taken without Mcp-Method (the official v2 client sends none when it
   * closes a subscription). */
  if (p->method && p->has_id && p->meta_version) {
    char buf[200];
    bool oom = false;
    const char *why = modern_mismatch(r, p, buf, sizeof buf, &oom);
    why = (why || oom) ? why : param_mismatch(h, r, p, buf, sizeof buf, &oom);
    if (oom)
      return respond_error(r, MHD_HTTP_INTERNAL_SERVER_ERROR,
                           MCP__RPC_INTERNAL_ERROR, "Internal error", p->id,
                           version, NULL, 0);
    if (why)
      return respond_error(r, MHD_HTTP_BAD_REQUEST, MCP__RPC_HEADER_MISMATCH,
                           why, p->id, version, NULL, 0);
  }
  size_t out_cap =
      h->max_body > MIN_STREAM_BUFFER ? h->max_body : MIN_STREAM_BUFFER;
  if (mcp_session_new(h->srv, &r->caller.principal, drop_message, NULL,
                      &r->ephemeral) != 0 ||
      (r->stream = mcp__http_stream_new(h->hub, MCP__HTTP_STREAM_MODERN, 0, 0,
                                        out_cap)) == NULL)
    return respond_error(r, MHD_HTTP_INTERNAL_SERVER_ERROR,
                         MCP__RPC_INTERNAL_ERROR, "Internal error", p->id,
                         version, NULL, 0);
  int rc = receive(r->ephemeral, r, p);
  const mcp__http_reply f = {
      .id = p->id, .version = version, .modern = true, .meta_ok = p->meta_ok};
  return finish_post(h, r, rc, &f);
}

/* A legacy POST without a session id: an initialize gets a new session
 * in r->session (true); anything else is refused (false, *ret). */
static bool create_session(mcp_http *h, mcp__http_req *r, const peek *p,
                           enum MHD_Result *ret) {
  const char *version = r->version;
  if (p->root == NULL) {
    *ret = respond_error(r, MHD_HTTP_BAD_REQUEST, MCP__RPC_PARSE_ERROR,
                         "Parse error: the body is not valid JSON", NULL,
                         version, NULL, 0);
    return false;
  }
  if (!p->initialize) {
    *ret = respond_error(r, MHD_HTTP_BAD_REQUEST, MCP__RPC_INVALID_REQUEST,
                         "Bad Request: Mcp-Session-Id header is required",
                         p->id, version, NULL, 0);
    return false;
  }
  int rc = mcp__http_session_create(h, &r->caller, NULL, 0, &r->session);
  if (rc == MCP_ELIMIT) {
    const header_pair retry = {MHD_HTTP_HEADER_RETRY_AFTER, "5"};
    *ret = respond_error(r, MHD_HTTP_SERVICE_UNAVAILABLE, MCP__RPC_SERVER_BUSY,
                         "Service Unavailable: too many sessions", p->id,
                         version, &retry, 1);
    return false;
  }
  if (rc) {
    *ret = respond_error(
        r, MHD_HTTP_INTERNAL_SERVER_ERROR, MCP__RPC_INTERNAL_ERROR,
        rc == MCP_EIO ? "Internal error: no session id could be made"
                      : "Internal error",
        p->id, version, NULL, 0);
    return false;
  }
  return true;
}

/* The caller's session sid names, in r->session (true): found here, or
 * adopted from the node that held it. Otherwise false with *ret: the
 * refusal queued, or MHD_YES while the adoption waits (the request is
 * called again once it is answered). id is the request's, for the
 * refusal. */
static bool session_for(mcp_http *h, mcp__http_req *r, const char *sid,
                        size_t sid_len, const char *id, enum MHD_Result *ret) {
  const char *version = r->version;
  /* The engine session decides with the scopes it was created with, so
   * only a token with those same scopes may drive it. */
  r->session = mcp__http_session_find(h, sid, sid_len, &r->caller, true);
  if (r->session)
    return true;
  switch (mcp__http_adopt(h, r, sid, sid_len)) {
  case MCP__HTTP_ADOPTED:
    r->session = mcp__http_session_find(h, sid, sid_len, &r->caller, true);
    if (r->session)
      return true;
    break; /* gone again at once (deleted): unknown */
  case MCP__HTTP_ADOPT_WAIT:
    *ret = MHD_YES;
    return false;
  case MCP__HTTP_ADOPT_DOWN:
  case MCP__HTTP_ADOPT_FULL: {
    const header_pair retry = {MHD_HTTP_HEADER_RETRY_AFTER, "1"};
    *ret = respond_error(r, MHD_HTTP_SERVICE_UNAVAILABLE, MCP__RPC_SERVER_BUSY,
                         "Service Unavailable: the session cannot be taken "
                         "over now; try again",
                         id, version, &retry, 1);
    return false;
  }
  case MCP__HTTP_ADOPT_FAILED:
    *ret = respond_error(r, MHD_HTTP_INTERNAL_SERVER_ERROR,
                         MCP__RPC_INTERNAL_ERROR, "Internal error", id, version,
                         NULL, 0);
    return false;
  case MCP__HTTP_ADOPT_GONE:
    break;
  }
  *ret = respond_error(r, MHD_HTTP_NOT_FOUND, MCP__RPC_INVALID_REQUEST,
                       "Not Found: no such session", id, version, NULL, 0);
  return false;
}

/* A legacy POST naming session sid: the caller's own session in
 * r->session, with room for the request's calls (true); otherwise a
 * refusal (false, *ret). */
static bool join_session(mcp_http *h, mcp__http_req *r, const peek *p,
                         const char *sid, size_t sid_len,
                         enum MHD_Result *ret) {
  const char *version = r->version;
  if (!mcp__http_visible_ascii(sid, sid_len, 256)) {
    *ret = respond_error(r, MHD_HTTP_BAD_REQUEST, MCP__RPC_INVALID_REQUEST,
                         "Bad Request: malformed Mcp-Session-Id", p->id,
                         version, NULL, 0);
    return false;
  }
  if (version && !mcp__http_legacy_version(version)) {
    *ret = respond_error(r, MHD_HTTP_BAD_REQUEST, MCP__RPC_INVALID_REQUEST,
                         "Bad Request: unsupported MCP-Protocol-Version", p->id,
                         NULL, NULL, 0);
    return false;
  }
  if (!session_for(h, r, sid, sid_len, p->id, ret))
    return false;
  if (p->ncalls &&
      mcp_session_pending(r->session->mcp) + p->ncalls > h->max_inflight) {
    const header_pair retry = {MHD_HTTP_HEADER_RETRY_AFTER, "1"};
    *ret =
        respond_error(r, MHD_HTTP_TOO_MANY_REQUESTS, MCP__RPC_SERVER_BUSY,
                      "too many requests in flight", p->id, version, &retry, 1);
    return false;
  }
  return true;
}

/* Shares a new session through the server's store when it keeps
 * records, so that another node can adopt it (http_adopt.c). A session
 * that cannot be shared is served here all the same. */
static void share(mcp_http *h, mcp__http_session *hs) {
  if (!mcp_server_shares_sessions(h->srv))
    return;
  int rc = mcp_session_share(hs->mcp, hs->id, mcp__http_share_ttl_ms(h));
  if (rc)
    mcp__http_log(h, MCP_LOG_WARNING,
                  "a session is not shared through the store (%s): no other "
                  "node can take it over",
                  mcp_strerror(rc));
}

static enum MHD_Result post_legacy(mcp_http *h, mcp__http_req *r, peek *p) {
  const char *version = r->version;
  const char *sid;
  size_t sid_len;
  enum MHD_Result ret;
  bool created = !header_span(r, "Mcp-Session-Id", &sid, &sid_len);
  if (created ? !create_session(h, r, p, &ret)
              : !join_session(h, r, p, sid, sid_len, &ret))
    return ret;
  mcp__http_session *hs = r->session;
  pthread_mutex_lock(&h->lock);
  r->stream = mcp__http_session_stream_locked(hs, MCP__HTTP_STREAM_POST);
  bool stopping = h->stopping;
  pthread_mutex_unlock(&h->lock);
  if (r->stream == NULL)
    return respond_error(r,
                         stopping ? MHD_HTTP_SERVICE_UNAVAILABLE
                                  : MHD_HTTP_INTERNAL_SERVER_ERROR,
                         stopping ? MCP__RPC_SERVER_BUSY
                                  : MCP__RPC_INTERNAL_ERROR,
                         stopping ? "Service Unavailable" : "Internal error",
                         p->id, version, NULL, 0);
  pthread_mutex_lock(&hs->drive);
  int rc = receive(hs->mcp, r, p);
  pthread_mutex_unlock(&hs->drive);
  /* The session's version decides the SSE framing when the request did
   * not name one (an initialize has just negotiated it). */
  const char *negotiated = mcp_session_protocol_version(hs->mcp);
  const char *effective = version ? version : negotiated;
  bool priming = effective && strcmp(effective, "2025-11-25") >= 0;
  const char *session_id = NULL;
  /* A session whose initialize failed, or whose reply was lost (the
   * client gets no id), is never published: it is released with this
   * request. */
  if (created && negotiated && rc == 0 && !mcp__http_stream_failed(r->stream)) {
    mcp__http_session_publish(h, hs); /* a fresh id: never published yet */
    session_id = hs->id;
    share(h, hs);
  }
  const mcp__http_reply f = {.id = p->id,
                             .version = effective,
                             .session_id = session_id,
                             .priming = priming,
                             .meta_ok = p->meta_ok};
  return finish_post(h, r, rc, &f);
}

static enum MHD_Result dispatch_post(mcp_http *h, mcp__http_req *r) {
  peek p;
  peek_body(r->body, r->len, &p);
  const char *version = r->version;
  bool modern =
      (version && strcmp(version, MCP__HTTP_MODERN_VERSION) == 0) || p.modern;
  enum MHD_Result ret;
  if (p.oom)
    ret = respond_error(r, MHD_HTTP_INTERNAL_SERVER_ERROR,
                        MCP__RPC_INTERNAL_ERROR, "Internal error", NULL,
                        version, NULL, 0);
  else
    ret = modern ? post_modern(h, r, &p) : post_legacy(h, r, &p);
  peek_free(&p);
  return ret;
}

/* ---- GET and DELETE ------------------------------------------------------ */

/* Finds the session a GET or DELETE names; on failure a response is
 * queued. */
static bool find_session(mcp_http *h, mcp__http_req *r, const char *version,
                         enum MHD_Result *ret) {
  const char *sid;
  size_t sid_len;
  if (!header_span(r, "Mcp-Session-Id", &sid, &sid_len)) {
    *ret = respond_error(r, MHD_HTTP_BAD_REQUEST, MCP__RPC_INVALID_REQUEST,
                         "Bad Request: Mcp-Session-Id header is required", NULL,
                         version, NULL, 0);
    return false;
  }
  if (!mcp__http_visible_ascii(sid, sid_len, 256) ||
      (version && !mcp__http_legacy_version(version))) {
    *ret = respond_error(r, MHD_HTTP_BAD_REQUEST, MCP__RPC_INVALID_REQUEST,
                         "Bad Request: malformed Mcp-Session-Id or "
                         "unsupported MCP-Protocol-Version",
                         NULL, NULL, NULL, 0);
    return false;
  }
  /* Every verb on a session needs the principal that created it, subject
   * and scopes: a stream replayed (Last-Event-ID) or a session ended is as
   * much the session's as a call. Anyone else gets the unknown session's
   * answer. */
  return session_for(h, r, sid, sid_len, NULL, ret);
}

/* Attaches r to its session's GET stream: the one Last-Event-ID (last)
 * names, or the standalone stream. Returns 0 when attached (*old is then a
 * connection the stream left, to resume), -1 when another connection
 * holds it, -3 when the server is stopping, another value when there is no
 * such stream or none could be made. */
static int attach_get(mcp_http *h, mcp__http_req *r, const char *last,
                      bool priming, struct MHD_Connection **old) {
  mcp__http_session *hs = r->session;
  unsigned no;
  unsigned long long seq = 0;
  int rc = -2;
  pthread_mutex_lock(&h->lock);
  if (h->stopping) {
    rc = -3;
  } else if (last) {
    /* Resumption: only this session's streams are searched, so a foreign
     * or forged id finds nothing. */
    r->stream = mcp__http_event_id_parse(last, &no, &seq)
                    ? mcp__http_session_find_stream_locked(hs, no)
                    : NULL;
  } else {
    /* A standalone stream that overflowed (its client stopped reading) is
     * replaced: the session may open a new one. */
    if (hs->standalone && mcp__http_stream_ended(hs->standalone)) {
      mcp__http_session_forget_stream_locked(hs, hs->standalone);
      hs->standalone = NULL;
    }
    if (hs->standalone == NULL &&
        (hs->standalone =
             mcp__http_session_stream_locked(hs, MCP__HTTP_STREAM_GET)))
      mcp__http_stream_unref(hs->standalone); /* streams[] keeps it */
    r->stream = hs->standalone;
    if (r->stream)
      mcp__http_stream_ref(r->stream);
  }
  if (r->stream) {
    rc = mcp__http_stream_attach_get(r->stream, r, last != NULL, seq, priming,
                                     old);
    if (rc == 0)
      attach_live(h, r, r->stream);
    else if (rc == 1)
      rc = 0; /* already live and counted, under the old connection */
    if (rc == 0 && r->caller.expires_at > 0) {
      /* The connection lasts no longer than the token that opened it. */
      pthread_mutex_lock(&r->stream->lock);
      r->stream->expires_at = r->caller.expires_at;
      pthread_mutex_unlock(&r->stream->lock);
    }
  }
  pthread_mutex_unlock(&h->lock);
  return rc;
}

static enum MHD_Result handle_get(mcp_http *h, mcp__http_req *r) {
  const char *version = r->version;
  enum MHD_Result ret;
  if (version && strcmp(version, MCP__HTTP_MODERN_VERSION) == 0)
    return method_not_allowed(r, "POST", version);
  if (h->disable_get)
    return method_not_allowed(r, "POST, DELETE", version);
  if (!(mcp__http_accept(header(r, "Accept")) & MCP__HTTP_ACCEPT_SSE))
    return respond_error(r, MHD_HTTP_NOT_ACCEPTABLE, MCP__RPC_INVALID_REQUEST,
                         "Not Acceptable: GET opens a text/event-stream", NULL,
                         version, NULL, 0);
  if (!find_session(h, r, version, &ret))
    return ret;
  mcp__http_session *hs = r->session;
  const char *negotiated = mcp_session_protocol_version(hs->mcp);
  const char *effective = version ? version : negotiated;
  bool priming = effective && strcmp(effective, "2025-11-25") >= 0;
  char last_buf[48];
  const char *last = header_copy(r, "Last-Event-ID", last_buf, sizeof last_buf);
  struct MHD_Connection *old = NULL;
  int rc = attach_get(h, r, last, priming, &old);
  mcp__http_resume(h->hub, old);
  if (rc == -2 && last && hs->adopted) {
    /* Adopted from a node that is gone, whose streams went with it: the
     * client's resumption opens the session's stream here instead. */
    last = NULL;
    old = NULL;
    rc = attach_get(h, r, NULL, priming, &old);
    mcp__http_resume(h->hub, old);
  }
  if (rc == -1)
    return respond_error(r, MHD_HTTP_CONFLICT, MCP__RPC_INVALID_REQUEST,
                         "Conflict: this stream is already open", NULL, version,
                         NULL, 0);
  if (rc == -3)
    return respond_error(r, MHD_HTTP_SERVICE_UNAVAILABLE, MCP__RPC_SERVER_BUSY,
                         "Service Unavailable", NULL, version, NULL, 0);
  if (rc != 0 && last)
    return respond_error(r, MHD_HTTP_NOT_FOUND, MCP__RPC_INVALID_REQUEST,
                         "Not Found: no such event stream", NULL, version, NULL,
                         0);
  if (rc != 0) /* no standalone stream could be made */
    return respond_error(r, MHD_HTTP_INTERNAL_SERVER_ERROR,
                         MCP__RPC_INTERNAL_ERROR, "Internal error", NULL,
                         version, NULL, 0);
  return respond_sse(r, NULL);
}

static enum MHD_Result handle_delete(mcp_http *h, mcp__http_req *r) {
  const char *version = r->version;
  enum MHD_Result ret;
  if (version && strcmp(version, MCP__HTTP_MODERN_VERSION) == 0)
    return method_not_allowed(r, "POST", version);
  if (!find_session(h, r, version, &ret))
    return ret;
  mcp__http_session_delete(h, r->session);
  return respond(r, MHD_HTTP_NO_CONTENT, NULL, NULL, 0, NULL, 0);
}

/* ---- libmicrohttpd callbacks --------------------------------------------- */

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn,
                                  const char *url, const char *method,
                                  const char *version, const char *upload,
                                  size_t *upload_size, void **con_cls) {
  mcp_http *h = cls;
  mcp__http_req *r = *con_cls;
  (void)version;
  if (r == NULL) {
    if ((r = mcp_calloc(1, sizeof *r)) == NULL)
      return MHD_NO;
    r->http = h;
    r->conn = conn;
    *con_cls = r;
    enum MHD_Result ret = MHD_YES;
    if (!precheck(h, r, url, method, &ret))
      return ret;   /* refused: the body is never read, the connection closes */
    return MHD_YES; /* the body (if any) comes next, then the last call */
  }
  if (r->answered) {
    *upload_size = 0;
    return MHD_YES;
  }
  if (*upload_size > 0) {
    if (!collect(h, r, upload, *upload_size))
      return MHD_NO;
    *upload_size = 0;
    return MHD_YES;
  }
  /* A POST that waited for a deferred reply, resumed: answer it now, or
   * wait on. */
  if (r->waiting)
    return finish_post(h, r, 0, &r->reply);
  /* The request is complete: answering now keeps the connection alive. */
  if (r->method == MCP__HTTP_GET)
    return handle_get(h, r);
  if (r->method == MCP__HTTP_DELETE)
    return handle_delete(h, r);
  return dispatch_post(h, r);
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
                         enum MHD_RequestTerminationCode toe) {
  mcp_http *h = cls;
  mcp__http_req *r = *con_cls;
  (void)conn;
  if (r == NULL)
    return;
  *con_cls = NULL;
  if (r->stream) {
    pthread_mutex_lock(&h->lock);
    bool attached;
    bool left_early = mcp__http_stream_detach(r->stream, r, &attached);
    if (attached) {
      live_unlink(r->stream);
      if (r->session)
        r->session->attached--;
    }
    if (r->session)
      r->session->last_ms = mcp__http_now_ms();
    pthread_mutex_unlock(&h->lock);
    if (left_early && r->ephemeral &&
        toe != MHD_REQUEST_TERMINATED_COMPLETED_OK)
      mcp__http_log(h, MCP_LOG_DEBUG,
                    "a 2026-07-28 client closed its stream: call cancelled");
  }
  /* A modern request's session ends with it: closing the response stream
   * is how a 2026-07-28 client cancels, and freeing the session cancels
   * whatever still runs. A legacy client's leaving cancels nothing. */
  mcp_session_free(r->ephemeral);
  mcp__http_stream_unref(r->stream);
  mcp__http_session_release(h, r->session);
  mcp__http_session_release(h, r->adopting); /* stopped before it was used */
  mcp__http_caller_free(&r->caller);
  mcp_free(r->reply_id);
  mcp_free(r->body);
  mcp_free(r);
}

/* ---- housekeeping -------------------------------------------------------- */

/* Answers the calls whose deadline passed, sends keep-alive comments on
 * quiet streams and ends idle sessions. */
static void housekeeping(mcp_http *h) {
  mcp_server_expire(h->srv);
  uint64_t now = mcp__http_now_ms();
  struct MHD_Connection **wake = NULL;
  size_t nwake = 0, n = 0;
  pthread_mutex_lock(&h->lock);
  mcp__list_each(link, &h->live) n++;
  long long wall = (long long)time(NULL);
  if (n && (wake = mcp_malloc(n * sizeof *wake)) != NULL) {
    mcp__list_each(link, &h->live) {
      mcp__http_stream *st = mcp__container_of(link, mcp__http_stream, live);
      struct MHD_Connection *c = mcp__http_stream_expire(st, wall);
      if (c == NULL)
        c = mcp__http_stream_keepalive(st, now,
                                       (uint64_t)h->keepalive_s * 1000);
      if (c)
        wake[nwake++] = c;
    }
  }
  pthread_mutex_unlock(&h->lock);
  for (size_t i = 0; i < nwake; i++)
    mcp__http_resume(h->hub, wake[i]);
  mcp_free(wake);
  mcp__http_sessions_expire(h, now);
  mcp__http_sessions_tend(h);
}

static void *timer_main(void *arg) {
  mcp_http *h = arg;
  pthread_mutex_lock(&h->lock);
  while (!h->stopping) {
    /* A call deadline nearer than the tick shortens the wait. The engine
     * is asked without http->lock held (the lock order above). */
    pthread_mutex_unlock(&h->lock);
    long due = mcp_server_next_expiry_ms(h->srv);
    pthread_mutex_lock(&h->lock);
    if (h->stopping)
      break;
    long wait = due >= 0 && due < TICK_MS ? due : TICK_MS;
    struct timespec until;
    clock_gettime(CLOCK_MONOTONIC, &until);
    until.tv_sec += wait / 1000;
    until.tv_nsec += (wait % 1000) * 1000000L;
    if (until.tv_nsec >= 1000000000L) {
      until.tv_sec++;
      until.tv_nsec -= 1000000000L;
    }
    pthread_cond_timedwait(&h->wake, &h->lock, &until);
    if (h->stopping)
      break;
    pthread_mutex_unlock(&h->lock);
    housekeeping(h);
    pthread_mutex_lock(&h->lock);
  }
  pthread_mutex_unlock(&h->lock);
  return NULL;
}

/* ---- start and stop ------------------------------------------------------ */

static void http_free(mcp_http *h) {
  if (h->loop_fd >= 0)
    close(h->loop_fd);
  mcp__http_hub_unref(h->hub);
  mcp_free(h->path);
  mcp__http_list_free(h->hosts);
  mcp__http_list_free(h->origins);
  mcp_free(h->principal_subject);
  mcp__http_list_free(h->principal_scopes);
  mcp__http_auth_free(h->auth);
  mcp__http_tls_free(h);
  mcp_free(h->buckets);
  mcp_free(h);
}

/* Reads where listen_fd is bound into sa, and whether that is loopback.
 * Returns 0, or MCP_EINVAL (logged) for what is not a listening TCP
 * socket. */
static int inherited_socket(mcp_http *h, int fd, struct sockaddr_storage *sa,
                            bool *loopback) {
  socklen_t len = sizeof *sa;
  int type = 0, listening = 0;
  socklen_t tl = sizeof type, ll = sizeof listening;
  memset(sa, 0, sizeof *sa);
  if (getsockname(fd, (struct sockaddr *)sa, &len) != 0 ||
      getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &tl) != 0 ||
      getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &ll) != 0 ||
      (sa->ss_family != AF_INET && sa->ss_family != AF_INET6) ||
      type != SOCK_STREAM || !listening) {
    mcp__http_log(h, MCP_LOG_ERROR,
                  "listen_fd %d is not a listening TCP socket", fd);
    return MCP_EINVAL;
  }
  if (sa->ss_family == AF_INET) {
    const struct sockaddr_in *v4 = (const struct sockaddr_in *)sa;
    *loopback = (ntohl(v4->sin_addr.s_addr) >> 24) == 127;
  } else {
    const struct sockaddr_in6 *v6 = (const struct sockaddr_in6 *)sa;
    *loopback =
        memcmp(&v6->sin6_addr, &in6addr_loopback, sizeof in6addr_loopback) == 0;
  }
  return 0;
}

/* Where to listen: the inherited listen_fd's address, or bind_addr and
 * port; *loopback says whether that is loopback. Returns 0 or MCP_EINVAL
 * (logged). */
static int configure_address(mcp_http *h, const mcp_http_options *o,
                             struct sockaddr_storage *sa, bool *loopback) {
  const char *bind = o->bind_addr ? o->bind_addr : DEFAULT_BIND;
  memset(sa, 0, sizeof *sa);
  if (o->listen_fd > 0) {
    if (o->bind_addr || o->port) {
      mcp__http_log(h, MCP_LOG_ERROR,
                    "listen_fd is a socket bound already: leave bind_addr "
                    "and port unset");
      return MCP_EINVAL;
    }
    int rc = inherited_socket(h, o->listen_fd, sa, loopback);
    if (rc)
      return rc;
  } else {
    struct sockaddr_in *v4 = (struct sockaddr_in *)sa;
    struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)sa;
    if (inet_pton(AF_INET, bind, &v4->sin_addr) == 1) {
      v4->sin_family = AF_INET;
      v4->sin_port = htons(o->port);
      *loopback = (ntohl(v4->sin_addr.s_addr) >> 24) == 127;
    } else if (inet_pton(AF_INET6, bind, &v6->sin6_addr) == 1) {
      v6->sin6_family = AF_INET6;
      v6->sin6_port = htons(o->port);
      *loopback = memcmp(&v6->sin6_addr, &in6addr_loopback,
                         sizeof in6addr_loopback) == 0;
    } else {
      mcp__http_log(h, MCP_LOG_ERROR,
                    "bind_addr is not an IPv4 or IPv6 literal");
      return MCP_EINVAL;
    }
  }
  return 0;
}

/* The caller of every request without auth: a copy of o->principal, or
 * one with every scope. Returns 0 or MCP_ENOMEM. */
static int configure_principal(mcp_http *h, const mcp_http_options *o) {
  if (o->principal == NULL) {
    h->principal.all_scopes = true;
    return 0;
  }
  h->principal.all_scopes = o->principal->all_scopes;
  if ((o->principal->subject &&
       (h->principal_subject = mcp__strdup(o->principal->subject)) == NULL) ||
      mcp__http_list_copy(o->principal->scopes, &h->principal_scopes))
    return MCP_ENOMEM;
  h->principal.subject = h->principal_subject;
  h->principal.scopes = (const char *const *)h->principal_scopes;
  return 0;
}

/* The session ids' length, and their "NODE." prefix when o->node_id names
 * this process. Returns 0 or MCP_EINVAL (logged). */
static int configure_node(mcp_http *h, const mcp_http_options *o) {
  h->sid_len = MCP__HTTP_SID_LEN;
  if (o->node_id == NULL)
    return 0;
  size_t n = strlen(o->node_id);
  bool ok = n >= 1 && n <= MCP__HTTP_NODE_MAX;
  for (size_t i = 0; ok && i < n; i++)
    ok = mcp__http_id_char(o->node_id[i]);
  if (!ok) {
    mcp__http_log(h, MCP_LOG_ERROR,
                  "node_id must be 1-32 characters of [A-Za-z0-9_-]");
    return MCP_EINVAL;
  }
  snprintf(h->node, sizeof h->node, "%s.", o->node_id);
  h->sid_len += n + 1;
  return 0;
}

/* Copies and defaults the options; MCP_EINVAL names the bad one. */
static int configure(mcp_http *h, const mcp_http_options *o,
                     struct sockaddr_storage *sa, bool *loopback) {
  int rc = configure_address(h, o, sa, loopback);
  if (rc)
    return rc;
  const char *path = o->path ? o->path : DEFAULT_PATH;
  if (path[0] != '/') {
    mcp__http_log(h, MCP_LOG_ERROR, "path must start with '/'");
    return MCP_EINVAL;
  }
  unsigned timeout =
      o->connection_timeout_s ? o->connection_timeout_s : DEFAULT_TIMEOUT_S;
  h->keepalive_s = o->keepalive_s ? o->keepalive_s : timeout / 3;
  if (h->keepalive_s == 0)
    h->keepalive_s = 1;
  if (h->keepalive_s >= timeout && timeout > 1) {
    mcp__http_log(h, MCP_LOG_ERROR,
                  "keepalive_s must be shorter than connection_timeout_s");
    return MCP_EINVAL;
  }
  h->max_body = o->max_body ? o->max_body : DEFAULT_MAX_BODY;
  h->idle_s = o->session_idle_s ? o->session_idle_s : DEFAULT_IDLE_S;
  h->max_sessions = o->max_sessions ? o->max_sessions : DEFAULT_MAX_SESSIONS;
  h->max_inflight = o->max_inflight ? o->max_inflight : DEFAULT_MAX_INFLIGHT;
  h->replay_events = o->replay_events ? o->replay_events : DEFAULT_REPLAY;
  h->prefer_sse = o->prefer_sse;
  h->disable_get = o->disable_get;
  h->external = o->external_loop;
  if ((h->path = mcp__strdup(path)) == NULL ||
      mcp__http_list_copy(o->allowed_hosts, &h->hosts) ||
      mcp__http_list_copy(o->allowed_origins, &h->origins))
    return MCP_ENOMEM;
  if ((rc = configure_principal(h, o)) != 0 || (rc = configure_node(h, o)) != 0)
    return rc;
  if (o->tls) {
    char why[400];
    rc = mcp__http_tls_open(h, o->tls, why, sizeof why);
    if (rc) {
      mcp__http_log(h, MCP_LOG_ERROR, "tls: %s", why);
      return rc;
    }
  }
  if (o->auth)
    return mcp__http_auth_new(h, o->auth, &h->auth);
  return 0;
}

/* Whether the hidden-byte check knows this libmicrohttpd's buffer layout:
 * the 0.9.7x releases up to 0.9.75, which the check was written against.
 * Later releases parse headers strictly themselves. */
static bool hidden_check_applies(void) {
  unsigned major = 0, minor = 0, patch = 0;
  const char *v = MHD_get_version();
  if (v == NULL || sscanf(v, "%u.%u.%u", &major, &minor, &patch) != 3)
    return false;
  return major == 0 && minor == 9 && patch >= 70 && patch <= 75;
}

/* External loop: one descriptor for the embedder, an epoll set holding
 * libmicrohttpd's epoll descriptor and the hub's eventfd (written when a
 * thread finishing a call resumes a connection). */
static int loop_fd_open(mcp_http *h) {
  const union MHD_DaemonInfo *info =
      MHD_get_daemon_info(h->daemon, MHD_DAEMON_INFO_EPOLL_FD);
  if (info == NULL || (h->loop_fd = epoll_create1(EPOLL_CLOEXEC)) < 0)
    return MCP_EIO;
  struct epoll_event mhd = {.events = EPOLLIN, .data.fd = info->epoll_fd};
  struct epoll_event hub = {.events = EPOLLIN, .data.fd = h->hub->event_fd};
  if (epoll_ctl(h->loop_fd, EPOLL_CTL_ADD, info->epoll_fd, &mhd) != 0 ||
      epoll_ctl(h->loop_fd, EPOLL_CTL_ADD, h->hub->event_fd, &hub) != 0)
    return MCP_EIO;
  return 0;
}

static void *probe_main(void *arg) { return arg; }

/* Starts and joins one thread with a stack of size bytes: 0, or the
 * pthread error. libmicrohttpd (0.9.75) leaks a descriptor when a thread of
 * its pool fails to start, so a stack size the system refuses is found
 * here first, before anything is allocated. */
static int stack_probe(size_t size) {
  pthread_attr_t attr;
  int err = pthread_attr_init(&attr);
  if (err != 0)
    return err;
  pthread_t t;
  if ((err = pthread_attr_setstacksize(&attr, size)) == 0 &&
      (err = mcp__thread_start(&t, &attr, probe_main, NULL)) == 0)
    pthread_join(t, NULL);
  pthread_attr_destroy(&attr);
  return err;
}

/* Ends a failed mcp_http_start: the caller reads why with
 * mcp_server_errmsg(srv), from the error logged on the way or, when none
 * was (memory, a thread, an epoll set), from a sentence made here. */
static int start_failed(mcp_http *h, int rc) {
  if (!h->start_reported)
    mcp__http_log(h, MCP_LOG_ERROR, "%s",
                  rc == MCP_ENOMEM ? "out of memory"
                                   : "cannot start the server's thread or "
                                     "its epoll set");
  mcp_server *srv = h->srv;
  char why[sizeof h->start_message];
  snprintf(why, sizeof why, "%s", h->start_message);
  http_free(h);
  mcp_server_set_errmsg(srv, why);
  return rc;
}

/* Makes h's lock and its timer's condition (on CLOCK_MONOTONIC). Returns
 * 0 or MCP_ENOMEM, with nothing made. */
static int sync_init(mcp_http *h) {
  pthread_condattr_t ca;
  pthread_condattr_init(&ca);
  pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
  bool cond_ok = pthread_cond_init(&h->wake, &ca) == 0;
  pthread_condattr_destroy(&ca);
  if (cond_ok && pthread_mutex_init(&h->lock, NULL) == 0)
    return 0;
  if (cond_ok)
    pthread_cond_destroy(&h->wake);
  return MCP_ENOMEM;
}

/* Starts libmicrohttpd on sa with o's limits and learns the bound port.
 * Returns 0, or MCP_EIO after logging why. */
static int daemon_start(mcp_http *h, const mcp_http_options *o,
                        struct sockaddr_storage *sa) {
  unsigned flags = MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME | MHD_USE_ERROR_LOG;
  if (!h->external)
    flags |= MHD_USE_INTERNAL_POLLING_THREAD;
  if (sa->ss_family == AF_INET6)
    flags |= MHD_USE_IPv6;
  unsigned timeout =
      o->connection_timeout_s ? o->connection_timeout_s : DEFAULT_TIMEOUT_S;
  unsigned threads = o->threads ? o->threads : 1;
  struct MHD_OptionItem items[] = {
      o->listen_fd > 0 ? (struct MHD_OptionItem){MHD_OPTION_LISTEN_SOCKET,
                                                 o->listen_fd, NULL}
                       : (struct MHD_OptionItem){MHD_OPTION_SOCK_ADDR, 0, sa},
      {MHD_OPTION_CONNECTION_TIMEOUT, (intptr_t)timeout, NULL},
      {MHD_OPTION_CONNECTION_LIMIT,
       (intptr_t)(o->max_connections ? o->max_connections
                                     : DEFAULT_MAX_CONNECTIONS),
       NULL},
      {MHD_OPTION_PER_IP_CONNECTION_LIMIT,
       (intptr_t)(o->per_ip_connections ? o->per_ip_connections
                                        : DEFAULT_PER_IP),
       NULL},
      {MHD_OPTION_CONNECTION_MEMORY_LIMIT,
       (intptr_t)(o->header_memory ? o->header_memory : DEFAULT_HEADER_MEMORY),
       NULL},
      /* Refuse malformed requests (no Host in HTTP/1.1, bad framing). */
      {MHD_OPTION_STRICT_FOR_CLIENT, 1, NULL},
      /* 0 keeps libmicrohttpd's (the system's) default. */
      {MHD_OPTION_THREAD_STACK_SIZE, (intptr_t)o->thread_stack_size, NULL},
      {threads > 1 && !h->external ? MHD_OPTION_THREAD_POOL_SIZE
                                   : MHD_OPTION_END,
       (intptr_t)threads, NULL},
      {MHD_OPTION_END, 0, NULL},
  };
  int err = o->thread_stack_size && !h->external
                ? stack_probe(o->thread_stack_size)
                : 0;
  if (err != 0) {
    mcp__http_log(h, MCP_LOG_ERROR,
                  "cannot start a thread with a stack of %zu bytes "
                  "(thread_stack_size): %s",
                  o->thread_stack_size,
                  err == EINVAL ? "the system refuses that size"
                                : "no memory for such a stack");
    return MCP_EIO;
  }
  if (h->tls)
    h->daemon = mcp__http_tls_daemon(h, flags, o->port, on_request,
                                     on_completed, mhd_log, items);
  else
    h->daemon = MHD_start_daemon(flags, o->port, NULL, NULL, on_request, h,
                                 MHD_OPTION_NOTIFY_COMPLETED, on_completed, h,
                                 MHD_OPTION_EXTERNAL_LOGGER, mhd_log, h,
                                 MHD_OPTION_ARRAY, items, MHD_OPTION_END);
  if (h->daemon == NULL) {
    size_t n = strlen(h->start_error);
    while (n > 0 &&
           (h->start_error[n - 1] == '\n' || h->start_error[n - 1] == '.'))
      h->start_error[--n] = '\0';
    mcp__http_log(h, MCP_LOG_ERROR, "cannot start serving on %s port %u: %s",
                  o->bind_addr ? o->bind_addr : DEFAULT_BIND, (unsigned)o->port,
                  n ? h->start_error : "libmicrohttpd gave no reason");
    return MCP_EIO;
  }
  const union MHD_DaemonInfo *info =
      MHD_get_daemon_info(h->daemon, MHD_DAEMON_INFO_BIND_PORT);
  h->port = info ? info->port : o->port;
  return 0;
}

/* What the author should hear about a configuration that serves, and the
 * settings auth implies. */
static void started(mcp_http *h, const mcp_http_options *o, bool loopback) {
  if (!loopback && h->auth == NULL)
    mcp__http_log(h, MCP_LOG_WARNING,
                  "listening on a non-loopback address: anyone who can reach "
                  "it can call the tools unless a token verifier protects it");
  if (h->hosts && h->hosts[0] == NULL)
    mcp__http_log(h, MCP_LOG_WARNING,
                  "allowed_hosts is empty: every request will be refused");
  if (h->origins && h->origins[0] == NULL)
    mcp__http_log(h, MCP_LOG_WARNING,
                  "allowed_origins is empty: every request with an Origin "
                  "will be refused");
  if (h->auth) {
    if (o->principal)
      mcp__http_log(h, MCP_LOG_WARNING,
                    "auth is on, so the configured principal is ignored: "
                    "each request's bearer token names its caller");
    if (o->auth->hide_forbidden_tools)
      mcp_server_set_hide_forbidden(h->srv, true);
    /* Tools whose hints say they need guarding but which need no scope,
     * and scopes no client can obtain: warnings for the author. */
    mcp_server_lint(h->srv, mcp__http_auth_supported(h->auth));
  } else if (o->principal == NULL) {
    mcp__http_log(h, loopback ? MCP_LOG_INFO : MCP_LOG_WARNING,
                  "no principal configured, so every caller holds every "
                  "scope");
  }
}

int mcp_http_systemd_socket(void) {
  const char *pid = getenv("LISTEN_PID"), *fds = getenv("LISTEN_FDS");
  if (pid == NULL || fds == NULL)
    return MCP_ENOENT;
  char *end = NULL;
  errno = 0;
  unsigned long p = strtoul(pid, &end, 10);
  if (errno || *end != '\0' || p != (unsigned long)getpid())
    return MCP_ENOENT; /* meant for another process (a parent of ours) */
  unsigned long n = strtoul(fds, &end, 10);
  bool one = *end == '\0' && n == 1;
  unsetenv("LISTEN_PID");
  unsetenv("LISTEN_FDS");
  unsetenv("LISTEN_FDNAMES");
  if (!one)
    return MCP_EINVAL;
  /* SD_LISTEN_FDS_START: the first passed descriptor. */
  const int fd = 3;
  int type = 0, listening = 0;
  socklen_t tl = sizeof type, ll = sizeof listening;
  if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &tl) != 0 ||
      getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &ll) != 0 ||
      type != SOCK_STREAM || !listening)
    return MCP_EINVAL;
  fcntl(fd, F_SETFD, FD_CLOEXEC);
  return fd;
}

/* After daemon_start: the external loop's descriptor, or the timer. */
static int timer_start(mcp_http *h) {
  if (h->external && loop_fd_open(h) != 0)
    return MCP_EIO;
  h->next_tick_ms = mcp__http_now_ms() + TICK_MS;
  if (h->external)
    return 0;
  if (mcp__thread_start(&h->timer, NULL, timer_main, h) != 0)
    return MCP_EIO;
  h->timer_started = true;
  return 0;
}

int mcp_http_start(mcp_server *srv, const mcp_http_options *opts,
                   mcp_http **out) {
  if (srv == NULL || out == NULL) {
    mcp_server_set_errmsg(srv, "mcp_http_start: out is NULL");
    return MCP_EINVAL;
  }
  const mcp_http_options o = opts ? *opts : (mcp_http_options){0};
  mcp_http *h = mcp_calloc(1, sizeof *h);
  if (h == NULL) {
    mcp_server_set_errmsg(srv, "mcp_http_start: out of memory");
    return MCP_ENOMEM;
  }
  h->srv = srv;
  mcp__list_init(&h->live);
  h->starter = pthread_self();
  h->starting = true;
  h->loop_fd = -1;
  h->find_hidden = hidden_check_applies();
  struct sockaddr_storage sa;
  bool loopback = false;
  /* One step each; a failure undoes, in reverse, what the steps before it
   * made (start_failed frees the rest). */
  int rc = configure(h, &o, &sa, &loopback);
  if (rc)
    goto fail;
  if ((rc = mcp__http_sessions_init(h)) != 0)
    goto fail;
  if ((h->hub = mcp__http_hub_new(h->external)) == NULL) {
    rc = MCP_ENOMEM;
    goto fail;
  }
  if ((rc = sync_init(h)) != 0)
    goto fail;
  /* libmicrohttpd's threads, the timer and the stack probe inherit a
   * quiet mask: no signal sent to the process reaches them (base.h). */
  sigset_t mask;
  mcp__signals_quiet(&mask);
  rc = daemon_start(h, &o, &sa);
  if (rc == 0)
    rc = timer_start(h);
  pthread_sigmask(SIG_SETMASK, &mask, NULL);
  if (rc != 0 && h->daemon == NULL)
    goto no_daemon;
  if (rc != 0)
    goto no_loop;
  started(h, &o, loopback);
  h->starting = false;
  *out = h;
  return 0;

no_loop:
  MHD_stop_daemon(h->daemon);
no_daemon:
  pthread_cond_destroy(&h->wake);
  pthread_mutex_destroy(&h->lock);
fail:
  return start_failed(h, rc);
}

void mcp_http_stop(mcp_http *h) {
  if (h == NULL)
    return;
  pthread_mutex_lock(&h->lock);
  h->stopping = true;
  pthread_cond_signal(&h->wake);
  pthread_mutex_unlock(&h->lock);
  if (h->timer_started)
    pthread_join(h->timer, NULL);
  MHD_socket listen_fd = MHD_quiesce_daemon(h->daemon);
  /* libmicrohttpd must not be stopped with a suspended connection: end
   * every stream, so each reader finishes instead of suspending again. */
  struct MHD_Connection **wake = NULL;
  size_t n = 0, nwake = 0;
  pthread_mutex_lock(&h->lock);
  mcp__list_each(link, &h->live) n++;
  if (n)
    wake = mcp_malloc(n * sizeof *wake);
  mcp__list_each(link, &h->live) {
    mcp__http_stream *st = mcp__container_of(link, mcp__http_stream, live);
    struct MHD_Connection *c = mcp__http_stream_end(st);
    if (c && wake)
      wake[nwake++] = c;
    else if (c)
      mcp__http_resume(h->hub, c); /* no memory for the list: here */
  }
  pthread_mutex_unlock(&h->lock);
  for (size_t i = 0; i < nwake; i++)
    mcp__http_resume(h->hub, wake[i]);
  mcp_free(wake);
  /* A thread finishing a call may be between taking a resume and doing
   * it; no new one can start now that every stream has ended. */
  mcp__http_hub_wait_idle(h->hub);
  MHD_stop_daemon(h->daemon);
  if (listen_fd != MHD_INVALID_SOCKET)
    close(listen_fd);
  mcp__http_sessions_free_all(h);
  pthread_cond_destroy(&h->wake);
  pthread_mutex_destroy(&h->lock);
  http_free(h);
}

uint16_t mcp_http_port(const mcp_http *h) { return h ? h->port : 0; }

int mcp_http_backend_fd(const mcp_http *h) {
  return h && h->external ? h->loop_fd : -1;
}

long mcp_http_backend_timeout(const mcp_http *h) {
  if (h == NULL || !h->external)
    return -1;
  MHD_UNSIGNED_LONG_LONG t;
  long ms = -1;
  if (MHD_get_timeout(h->daemon, &t) == MHD_YES)
    ms = t > (MHD_UNSIGNED_LONG_LONG)1 << 30 ? 1L << 30 : (long)t;
  /* Housekeeping runs at least every tick while anything may need it. */
  mcp_http *m = (mcp_http *)h;
  pthread_mutex_lock(&m->lock);
  bool busy = m->nsessions > 0 || !mcp__list_empty(&m->live);
  pthread_mutex_unlock(&m->lock);
  if (busy) {
    uint64_t now = mcp__http_now_ms();
    long tick = now >= h->next_tick_ms ? 0 : (long)(h->next_tick_ms - now);
    if (ms < 0 || tick < ms)
      ms = tick;
  }
  /* mcp_http_run answers the calls whose deadline passed. */
  long due = mcp_server_next_expiry_ms(h->srv);
  if (due >= 0 && (ms < 0 || due < ms))
    ms = due;
  return ms;
}

int mcp_http_run(mcp_http *h) {
  if (h == NULL || !h->external)
    return MCP_EINVAL;
  /* Drain the eventfd (one read resets its counter): the resumes it
   * announced are MHD_run's work now. */
  uint64_t wakeups;
  (void)!read(h->hub->event_fd, &wakeups, sizeof wakeups);
  if (MHD_run(h->daemon) != MHD_YES)
    return MCP_EIO;
  mcp_server_expire(h->srv);
  uint64_t now = mcp__http_now_ms();
  if (now >= h->next_tick_ms) {
    h->next_tick_ms = now + TICK_MS;
    housekeeping(h);
  }
  return 0;
}
