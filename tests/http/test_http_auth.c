/* The HTTP transport as an OAuth 2.1 resource server (include/mcp/http.h,
 * "Authorization"): bearer tokens, the WWW-Authenticate challenges, the
 * protected resource metadata, per-tool scopes decided by the engine's
 * policy, sessions bound to the token's subject, keys reloaded at run
 * time.
 *
 * Tokens are real: RS256 and ES256 keys are generated with OpenSSL when
 * the test starts, their JWKS is written to a temporary file, and every
 * token is signed with EVP (tests/common/jwt_sign.c). Tests are named
 * after the rows of shared/spec/BAD-INPUTS.md they cover (c15_..., e1_...,
 * e22_...) or the digest items (§7, §9 items 42-48). The JWT verifier's
 * own attacks (alg confusion, kid injection...) are the JWT suite's; here
 * the transport is under test.
 *
 * Every tcase is its own ctest test (CK_RUN_CASE). Loopback only; with
 * MCP_VALGRIND_RUN set waits are longer. */
#include <check.h>
#include <cjson/cJSON.h>
#include <curl/curl.h>
#include <errno.h>
#include <mcp/http.h>
#include <mcp/mcp.h>
#include <openssl/evp.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "http_client.h"
#include "jwt_sign.h"
#include "testutil.h"

#define V "2025-11-25"
#define MODERN "2026-07-28"
#define RESOURCE "https://mcp.example.test/mcp"
#define ISSUER "https://as.example.test"
#define PRM_URL                                                                \
  "https://mcp.example.test/.well-known/oauth-protected-resource/mcp"
#define PRM_PATH "/.well-known/oauth-protected-resource/mcp"
#define PRM_ROOT "/.well-known/oauth-protected-resource"

static long T(long ms) { return lc_slow_run() ? ms * 5 : ms; }

/* ---------------------------------------------------------------------------
 * Keys and tokens
 * ------------------------------------------------------------------------ */

typedef struct key {
  EVP_PKEY *pkey;
  const char *kid, *alg;
  char *jwk; /* the public JWK, JSON text */
} key;

/* Generated once in main (before any fork), freed at its end. */
static key RSA_A = {.kid = "rsa-a", .alg = "RS256"};
/* Not in the JWKS file: an unknown key, then a replacement set. ES256,
 * because an RSA key takes seconds to make under valgrind. */
static key EC_B = {.kid = "ec-b", .alg = "ES256"};
static key EC_A = {.kid = "ec-a", .alg = "ES256"};
static char jwks_path[64]; /* RSA_A and EC_A */

static void key_make(key *k) {
  bool rsa = k->alg[0] == 'R';
  k->pkey = rsa ? EVP_PKEY_Q_keygen(NULL, NULL, "RSA", (size_t)2048)
                : EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256");
  if (k->pkey == NULL)
    abort();
  char extra[64];
  snprintf(extra, sizeof extra, "\"use\":\"sig\",\"alg\":\"%s\"", k->alg);
  k->jwk = tc_jwk(k->pkey, k->kid, extra, 0);
}

/* A JWKS of the given keys (JSON text; free it). */
static char *jwks_of(const key *a, const key *b) {
  lc_buf j = {0};
  lc_buf_fmt(&j, "{\"keys\":[%s%s%s]}", a->jwk, b ? "," : "", b ? b->jwk : "");
  return j.p;
}

static void write_file(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  ck_assert_ptr_nonnull(f);
  ck_assert_uint_eq(fwrite(text, 1, strlen(text), f), strlen(text));
  ck_assert_int_eq(fclose(f), 0);
}

/* Signs header.payload with k (RS256: PKCS#1 v1.5; ES256: r||s). */
static char *sign_jwt(const key *k, const char *header, const char *payload) {
  return tc_jwt(header, payload, k->alg, k->pkey);
}

/* A token by k for sub with scope (NULL = no scope claim), valid for
 * ttl seconds from now (negative: expired that long ago), for aud (NULL =
 * RESOURCE). */
static char *token_full(const key *k, const char *sub, const char *scope,
                        long ttl, const char *aud) {
  long long now = (long long)time(NULL);
  char header[128];
  snprintf(header, sizeof header,
           "{\"alg\":\"%s\",\"typ\":\"at+jwt\",\"kid\":\"%s\"}", k->alg,
           k->kid);
  lc_buf p = {0};
  lc_buf_fmt(&p, "{\"iss\":\"%s\",\"aud\":\"%s\",", ISSUER,
             aud ? aud : RESOURCE);
  if (sub) /* NULL: a token naming nobody (client credentials, say) */
    lc_buf_fmt(&p, "\"sub\":\"%s\",", sub);
  if (scope)
    lc_buf_fmt(&p, "\"scope\":\"%s\",", scope);
  lc_buf_fmt(&p, "\"iat\":%lld,\"exp\":%lld,\"jti\":\"%lld-%d\"}",
             ttl < 0 ? now + ttl - 600 : now, now + ttl, now, rand());
  char *t = sign_jwt(k, header, p.p);
  lc_buf_free(&p);
  return t;
}

static char *token(const char *sub, const char *scope) {
  return token_full(&RSA_A, sub, scope, 600, NULL);
}

/* ---------------------------------------------------------------------------
 * The fixture: a server with scoped tools, served with auth
 * ------------------------------------------------------------------------ */

typedef struct fixture {
  mcp_server *srv;
  mcp_http *http;
  uint16_t port;
  pthread_mutex_t mu;
  int runs[8]; /* handler runs per tool index */
  int warnings;
  lc_buf log;
  lc_buf seen; /* what handlers saw of their principal */
} fixture;

static fixture F;
static CURL *G;

static void fx_log(mcp_log_level level, const char *message, void *ud) {
  (void)ud;
  pthread_mutex_lock(&F.mu);
  if (level >= MCP_LOG_WARNING)
    F.warnings++;
  if (F.log.n < 65536) {
    lc_buf_str(&F.log, message);
    lc_buf_str(&F.log, "\n");
  }
  pthread_mutex_unlock(&F.mu);
}

static bool log_has(const char *needle) {
  pthread_mutex_lock(&F.mu);
  bool yes = F.log.p && strstr(F.log.p, needle) != NULL;
  pthread_mutex_unlock(&F.mu);
  return yes;
}

enum { T_READ, T_WRITE, T_WIPE, T_WHOAMI, NTOOLS };
static const char *const tool_names[NTOOLS] = {"read", "write", "wipe",
                                               "whoami"};

static int runs(int tool) {
  pthread_mutex_lock(&F.mu);
  int n = F.runs[tool];
  pthread_mutex_unlock(&F.mu);
  return n;
}

static int total_runs(void) {
  int n = 0;
  for (int i = 0; i < NTOOLS; i++)
    n += runs(i);
  return n;
}

/* Every tool records its run and its caller. */
static int tool_run(mcp_call *call, void *ud) {
  int idx = (int)(intptr_t)ud;
  const mcp_principal *p = mcp_call_principal(call);
  lc_buf who = {0};
  lc_buf_fmt(&who, "%s|", p->subject ? p->subject : "(anonymous)");
  for (const char *const *s = p->scopes; s && *s; s++)
    lc_buf_fmt(&who, "%s%s", s == p->scopes ? "" : " ", *s);
  pthread_mutex_lock(&F.mu);
  F.runs[idx]++;
  lc_buf_str(&F.seen, who.p);
  lc_buf_str(&F.seen, "\n");
  pthread_mutex_unlock(&F.mu);
  int rc = mcp_result_text(call, who.p);
  lc_buf_free(&who);
  return rc;
}

static const char *const S_READ[] = {"notes:read", NULL};
static const char *const S_WRITE[] = {"notes:write", NULL};
static const char *const S_ADMIN[] = {"notes:admin", "notes:write", NULL};

/* The tools with honest hints, or (rewritten) every hint turned around:
 * access must not change (promise 2). */
static void fx_add_tools(bool rewritten) {
  const mcp_tool_annotations honest[NTOOLS] = {
      {.read_only = MCP_HINT_TRUE, .open_world = MCP_HINT_FALSE},
      {.read_only = MCP_HINT_FALSE,
       .destructive = MCP_HINT_FALSE,
       .idempotent = MCP_HINT_FALSE,
       .open_world = MCP_HINT_FALSE},
      {.read_only = MCP_HINT_FALSE,
       .destructive = MCP_HINT_TRUE,
       .idempotent = MCP_HINT_TRUE,
       .open_world = MCP_HINT_FALSE},
      {.read_only = MCP_HINT_TRUE, .open_world = MCP_HINT_FALSE},
  };
  const mcp_tool_annotations turned[NTOOLS] = {
      {.read_only = MCP_HINT_FALSE,
       .destructive = MCP_HINT_TRUE,
       .idempotent = MCP_HINT_FALSE,
       .open_world = MCP_HINT_TRUE},
      {.read_only = MCP_HINT_TRUE, .open_world = MCP_HINT_TRUE},
      {.read_only = MCP_HINT_TRUE, .open_world = MCP_HINT_TRUE},
      {.read_only = MCP_HINT_FALSE,
       .destructive = MCP_HINT_TRUE,
       .idempotent = MCP_HINT_TRUE,
       .open_world = MCP_HINT_TRUE},
  };
  const char *const *scopes[NTOOLS] = {S_READ, S_WRITE, S_ADMIN, NULL};
  for (int i = 0; i < NTOOLS; i++) {
    mcp_tool t = {
        .name = tool_names[i],
        .description = "A tool of the auth fixture.",
        .input_schema = "{\"type\":\"object\"}",
        .scopes = scopes[i],
        .annotations = rewritten ? turned[i] : honest[i],
        .handler = tool_run,
    };
    ck_assert_msg(mcp_server_add_tool(F.srv, &t, (void *)(intptr_t)i) == 0,
                  "%s", mcp_server_errmsg(F.srv));
  }
}

static const char *const SERVERS[] = {ISSUER, NULL};

/* The JWT settings of most tests. */
static mcp_auth_options auth_jwt(void) {
  return (mcp_auth_options){.resource = RESOURCE,
                            .authorization_servers = SERVERS,
                            .issuer = ISSUER,
                            .jwks_file = jwks_path};
}

static void fx_server(bool rewritten) {
  mcp_server_info info = {.name = "authtest", .version = "1.0.0"};
  ck_assert_int_eq(mcp_server_new(&info, &F.srv), 0);
  mcp_server_set_log(F.srv, fx_log, NULL);
  fx_add_tools(rewritten);
}

/* Starts HTTP with auth (and o's other options when given). */
static void fx_start_with(const mcp_auth_options *auth, mcp_http_options *o) {
  mcp_http_options def = {0};
  if (o == NULL)
    o = &def;
  o->auth = auth;
  int rc = mcp_http_start(F.srv, o, &F.http);
  ck_assert_msg(rc == 0, "mcp_http_start: %s; log: %s", mcp_strerror(rc),
                F.log.p ? F.log.p : "");
  F.port = mcp_http_port(F.http);
}

static void fx_start(void) {
  fx_server(false);
  mcp_auth_options a = auth_jwt();
  fx_start_with(&a, NULL);
}

static void setup(void) {
  memset(&F, 0, sizeof F);
  pthread_mutex_init(&F.mu, NULL);
  G = curl_easy_init();
  ck_assert_ptr_nonnull(G);
}

static void teardown(void) {
  curl_easy_cleanup(G);
  G = NULL;
  mcp_http_stop(F.http);
  F.http = NULL;
  mcp_server_free(F.srv);
  F.srv = NULL;
  lc_buf_free(&F.log);
  lc_buf_free(&F.seen);
  pthread_mutex_destroy(&F.mu);
}

/* ---------------------------------------------------------------------------
 * HTTP with libcurl
 * ------------------------------------------------------------------------ */

/* The value of header name (first one), or NULL; count says how many. */
static const char *resp_header(const lc_resp *r, const char *name, char *out,
                               size_t size, int *count) {
  size_t nl = strlen(name);
  const char *found = NULL;
  int k = 0;
  for (const char *p = r->head.p; p && *p;) {
    const char *eol = strchr(p, '\n');
    size_t len = eol ? (size_t)(eol - p) : strlen(p);
    if (len > nl && strncasecmp(p, name, nl) == 0 && p[nl] == ':') {
      if (k++ == 0) {
        const char *v = p + nl + 1, *ve = p + len;
        while (v < ve && *v == ' ')
          v++;
        while (ve > v && (ve[-1] == '\r' || ve[-1] == ' '))
          ve--;
        size_t vl = (size_t)(ve - v) < size - 1 ? (size_t)(ve - v) : size - 1;
        memcpy(out, v, vl);
        out[vl] = '\0';
        found = out;
      }
    }
    p = eol ? eol + 1 : NULL;
  }
  if (count)
    *count = k;
  return found;
}

#define MAXH 8

typedef struct req {
  const char *method; /* NULL = POST */
  const char *path;   /* NULL = /mcp; may carry a query */
  const char *body;
  const char *token;   /* "Authorization: Bearer <token>" */
  const char *session; /* Mcp-Session-Id */
  const char *version; /* MCP-Protocol-Version */
  const char *h[MAXH]; /* more header lines */
} req;

/* q as an lc_req, its token an Authorization header before q's own. */
static void http(const req *q, lc_resp *r) {
  lc_req lq = {.method = q->method,
               .path = q->path,
               .body = q->body,
               .session = q->session,
               .version = q->version};
  lc_buf auth = {0};
  int k = 0;
  if (q->token) {
    lc_buf_fmt(&auth, "Authorization: Bearer %s", q->token);
    lq.headers[k++] = auth.p;
  }
  for (int i = 0; i < MAXH && q->h[i]; i++)
    lq.headers[k++] = q->h[i];
  lc_http(G, F.port, &lq, r);
  lc_buf_free(&auth);
}

/* The JSON-RPC message of a response: its JSON body, or the last data
 * line of its event stream. */
static cJSON *reply_of(const lc_resp *r) {
  if (r->body.n == 0)
    return NULL;
  if (r->body.p[0] == '{' || r->body.p[0] == '[')
    return cJSON_ParseWithLength(r->body.p, r->body.n);
  cJSON *last = NULL;
  for (const char *p = r->body.p; (p = strstr(p, "data: ")) != NULL;) {
    p += 6;
    const char *e = strchr(p, '\n');
    size_t n = e ? (size_t)(e - p) : strlen(p);
    if (n) {
      cJSON_Delete(last);
      last = cJSON_ParseWithLength(p, n);
    }
  }
  return last;
}

/* Asserts the exact WWW-Authenticate value (and that there is one). */
#define assert_challenge(r, expected)                                          \
  assert_challenge_at(__LINE__, (r), (expected))
static void assert_challenge_at(int line, const lc_resp *r,
                                const char *expected) {
  char v[1024];
  int count = 0;
  const char *got = resp_header(r, "WWW-Authenticate", v, sizeof v, &count);
  ck_assert_msg(got != NULL && count == 1,
                "line %d: HTTP %ld has %d WWW-Authenticate headers (want 1)",
                line, r->status, count);
  ck_assert_msg(strcmp(got, expected) == 0,
                "line %d: WWW-Authenticate is\n  %s\nexpected\n  %s", line, got,
                expected);
}

static void assert_no_challenge(const lc_resp *r) {
  char v[16];
  ck_assert_ptr_null(resp_header(r, "WWW-Authenticate", v, sizeof v, NULL));
}

/* Asserts HTTP status with a JSON-RPC error body of code (0 = any). */
#define assert_rpc_error(r, status, code)                                      \
  assert_rpc_error_at(__LINE__, (r), (status), (code))
static void assert_rpc_error_at(int line, const lc_resp *r, long status,
                                int code) {
  ck_assert_msg(r->status == status, "line %d: HTTP %ld, expected %ld: %s",
                line, r->status, status, r->body.p ? r->body.p : "");
  cJSON *m = reply_of(r);
  const cJSON *c = tu_jget(m, "error.code");
  ck_assert_msg(cJSON_IsNumber(c), "line %d: not a JSON-RPC error: %s", line,
                r->body.p ? r->body.p : "");
  if (code)
    ck_assert_msg(c->valueint == code, "line %d: code %d, expected %d", line,
                  c->valueint, code);
  cJSON_Delete(m);
}

#define CHALLENGE_401 "Bearer resource_metadata=\"" PRM_URL "\""
#define CHALLENGE_INVALID                                                      \
  "Bearer error=\"invalid_token\", resource_metadata=\"" PRM_URL "\""
#define CHALLENGE_400                                                          \
  "Bearer error=\"invalid_request\", resource_metadata=\"" PRM_URL "\""
#define CHALLENGE_403(scope)                                                   \
  "Bearer error=\"insufficient_scope\", scope=\"" scope                        \
  "\", resource_metadata=\"" PRM_URL "\""

/* ---------------------------------------------------------------------------
 * Requests of both eras
 * ------------------------------------------------------------------------ */

#define INIT                                                                   \
  "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{"       \
  "\"protocolVersion\":\"" V "\",\"capabilities\":{},\"clientInfo\":{"         \
  "\"name\":\"test_http_auth\",\"version\":\"1\"}}}"
#define INITIALIZED                                                            \
  "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}"
#define PING "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}"
#define TOOLS_LIST "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}"
#define META                                                                   \
  "\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"" MODERN "\","     \
  "\"io.modelcontextprotocol/clientInfo\":{\"name\":\"test_http_auth\","       \
  "\"version\":\"1\"},\"io.modelcontextprotocol/clientCapabilities\":{}}"

/* Opens a legacy session with token; returns its id (free it). */
static char *open_session(const char *tok) {
  lc_resp r;
  req q = {.body = INIT, .token = tok};
  http(&q, &r);
  ck_assert_msg(r.status == 200, "initialize: HTTP %ld %s", r.status,
                r.body.p ? r.body.p : "");
  char sid[512];
  ck_assert_ptr_nonnull(
      resp_header(&r, "Mcp-Session-Id", sid, sizeof sid, NULL));
  lc_resp_free(&r);
  req q2 = {.body = INITIALIZED, .token = tok, .session = sid, .version = V};
  http(&q2, &r);
  ck_assert_int_eq(r.status, 202);
  lc_resp_free(&r);
  char *copy = strdup(sid);
  ck_assert_ptr_nonnull(copy);
  return copy;
}

/* tools/call of tool in a legacy session. */
static void call_legacy(const char *tok, const char *sid, const char *tool,
                        lc_resp *r) {
  char body[256];
  snprintf(body, sizeof body,
           "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\","
           "\"params\":{\"name\":\"%s\",\"arguments\":{}}}",
           tool);
  req q = {.body = body, .token = tok, .session = sid, .version = V};
  http(&q, r);
}

/* A stateless 2026-07-28 tools/call of tool. */
static void call_modern(const char *tok, const char *tool, lc_resp *r) {
  char body[512], hn[128];
  snprintf(body, sizeof body,
           "{\"jsonrpc\":\"2.0\",\"id\":\"m\",\"method\":\"tools/call\","
           "\"params\":{\"name\":\"%s\",\"arguments\":{}," META "}}",
           tool);
  snprintf(hn, sizeof hn, "Mcp-Name: %s", tool);
  req q = {.body = body,
           .token = tok,
           .version = MODERN,
           .h = {"Mcp-Method: tools/call", hn}};
  http(&q, r);
}

static void list_modern(const char *tok, lc_resp *r) {
  req q = {.body = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\","
                   "\"params\":{" META "}}",
           .token = tok,
           .version = MODERN,
           .h = {"Mcp-Method: tools/list"}};
  http(&q, r);
}

/* Asserts a tools/call answered 200 with a result that is no error. */
#define assert_ran(r) assert_ran_at(__LINE__, (r))
static void assert_ran_at(int line, const lc_resp *r) {
  ck_assert_msg(r->status == 200, "line %d: HTTP %ld: %s", line, r->status,
                r->body.p ? r->body.p : "");
  cJSON *m = reply_of(r);
  ck_assert_msg(tu_jget(m, "result") != NULL && tu_jget(m, "error") == NULL,
                "line %d: no result: %s", line, r->body.p);
  cJSON_Delete(m);
}

/* Asserts the 403 of a refusal on scope: the exact challenge naming every
 * scope the tool needs, and the engine's JSON-RPC error kept as the body
 * (requiredScopes: the missing ones). */
#define assert_forbidden(r, challenge_scope, missing_json)                     \
  assert_forbidden_at(__LINE__, (r), CHALLENGE_403(challenge_scope),           \
                      (missing_json))
static void assert_forbidden_at(int line, const lc_resp *r,
                                const char *challenge,
                                const char *missing_json) {
  ck_assert_msg(r->status == 403, "line %d: HTTP %ld, expected 403: %s", line,
                r->status, r->body.p ? r->body.p : "");
  char type[128];
  ck_assert_ptr_nonnull(
      resp_header(r, "Content-Type", type, sizeof type, NULL));
  ck_assert_msg(strncmp(type, "application/json", 16) == 0,
                "line %d: a 403 is application/json, not %s", line, type);
  assert_challenge_at(line, r, challenge);
  cJSON *m = reply_of(r);
  const cJSON *code = tu_jget(m, "error.code");
  ck_assert_msg(cJSON_IsNumber(code) && code->valueint == MCP_RPC_FORBIDDEN,
                "line %d: body is not the -31403 refusal: %s", line, r->body.p);
  char *missing =
      cJSON_PrintUnformatted(tu_jget(m, "error.data.requiredScopes"));
  ck_assert_msg(missing && strcmp(missing, missing_json) == 0,
                "line %d: requiredScopes %s, expected %s", line,
                missing ? missing : "(none)", missing_json);
  cJSON_free(missing);
  cJSON_Delete(m);
}

/* ===========================================================================
 * E1, E2, E3: no token, a token in the query, malformed headers
 * ======================================================================== */

START_TEST(e1_no_authorization_401) {
  fx_start();
  const char *methods[] = {"POST", "GET", "DELETE", "PUT"};
  for (size_t i = 0; i < TU_COUNT(methods); i++) {
    lc_resp r;
    req q = {.method = methods[i], .body = INIT};
    http(&q, &r);
    assert_rpc_error(&r, 401, 0);
    assert_challenge(&r, CHALLENGE_401);
    lc_resp_free(&r);
  }
  /* Both eras, and with a session id that is not even known. */
  lc_resp r;
  call_modern(NULL, "read", &r);
  assert_rpc_error(&r, 401, 0);
  assert_challenge(&r, CHALLENGE_401);
  lc_resp_free(&r);
  call_legacy(NULL, "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", "read", &r);
  assert_rpc_error(&r, 401, 0);
  assert_challenge(&r, CHALLENGE_401);
  lc_resp_free(&r);
  ck_assert_int_eq(total_runs(), 0);
}
END_TEST

START_TEST(e2_token_in_query_never_accepted) {
  fx_start();
  char *tok = token("alice", "notes:read");
  lc_buf path = {0};
  lc_buf_fmt(&path, "/mcp?access_token=%s", tok);
  /* Alone: as if there were no token. */
  lc_resp r;
  req q = {.path = path.p, .body = INIT};
  http(&q, &r);
  assert_rpc_error(&r, 401, 0);
  assert_challenge(&r, CHALLENGE_401);
  lc_resp_free(&r);
  /* Beside the header: two methods at once (RFC 6750 §2), refused. */
  req q2 = {.path = path.p, .body = INIT, .token = tok};
  http(&q2, &r);
  assert_rpc_error(&r, 400, 0);
  assert_challenge(&r, CHALLENGE_400);
  lc_resp_free(&r);
  /* The header alone works. */
  req q3 = {.body = INIT, .token = tok};
  http(&q3, &r);
  ck_assert_int_eq(r.status, 200);
  lc_resp_free(&r);
  ck_assert_msg(!log_has(tok), "the token was logged");
  lc_buf_free(&path);
  free(tok);
}
END_TEST

START_TEST(e3_malformed_authorization) {
  fx_start();
  char *tok = token("alice", "notes:read");
  lc_buf two_spaces = {0}, tab = {0}, trailing = {0}, lower = {0}, both = {0},
         comma = {0};
  lc_buf_fmt(&two_spaces, "Authorization: Bearer  %s", tok);
  lc_buf_fmt(&tab, "Authorization: Bearer\t%s", tok);
  lc_buf_fmt(&trailing, "Authorization: Bearer %s extra", tok);
  lc_buf_fmt(&comma, "Authorization: Bearer %s,x", tok);
  lc_buf_fmt(&lower, "Authorization: bEARER %s", tok);
  lc_buf_fmt(&both, "Authorization: Bearer %s", tok);
  struct {
    const char *h1, *h2;
    long status;
    const char *challenge;
  } cases[] = {
      {"Authorization: Bearer", NULL, 400, CHALLENGE_400},
      {"Authorization: Bearer ", NULL, 400, CHALLENGE_400},
      {two_spaces.p, NULL, 400, CHALLENGE_400},
      {tab.p, NULL, 400, CHALLENGE_400},
      {trailing.p, NULL, 400, CHALLENGE_400},
      {comma.p, NULL, 400, CHALLENGE_400},
      {both.p, both.p, 400, CHALLENGE_400}, /* two headers, both valid */
      {"Authorization: Basic YWxpY2U6c2VjcmV0", NULL, 401, CHALLENGE_401},
      {"Authorization: Digest username=\"alice\"", NULL, 401, CHALLENGE_401},
      {"Authorization: Bearer not-a-jwt", NULL, 401, CHALLENGE_INVALID},
      {"Authorization: Bearer a.b.c", NULL, 401, CHALLENGE_INVALID},
  };
  for (size_t i = 0; i < TU_COUNT(cases); i++) {
    lc_resp r;
    req q = {.body = INIT, .h = {cases[i].h1, cases[i].h2}};
    http(&q, &r);
    ck_assert_msg(r.status == cases[i].status, "case %zu: HTTP %ld, not %ld", i,
                  r.status, cases[i].status);
    assert_challenge(&r, cases[i].challenge);
    char sid[64];
    ck_assert_msg(resp_header(&r, "Mcp-Session-Id", sid, sizeof sid, NULL) ==
                      NULL,
                  "case %zu: a session was created", i);
    lc_resp_free(&r);
  }
  /* The scheme's case does not matter (RFC 7235 §2.1). */
  lc_resp r;
  req q = {.body = INIT, .h = {lower.p}};
  http(&q, &r);
  ck_assert_int_eq(r.status, 200);
  lc_resp_free(&r);
  ck_assert_int_eq(total_runs(), 0);
  lc_buf_free(&two_spaces);
  lc_buf_free(&tab);
  lc_buf_free(&trailing);
  lc_buf_free(&comma);
  lc_buf_free(&lower);
  lc_buf_free(&both);
  free(tok);
}
END_TEST

/* ===========================================================================
 * Tokens: RS256 and ES256 accepted; expired, foreign or forged refused
 * ======================================================================== */

START_TEST(valid_rs256_and_es256_tokens) {
  fx_start();
  char *rs = token_full(&RSA_A, "alice", "notes:read", 600, NULL);
  char *es = token_full(&EC_A, "bob", "notes:read notes:write", 600, NULL);
  lc_resp r;
  call_modern(rs, "read", &r);
  assert_ran(&r);
  cJSON *m = reply_of(&r);
  ck_assert_str_eq(tu_jstr(m, "result.content.0.text"), "alice|notes:read");
  cJSON_Delete(m);
  lc_resp_free(&r);
  call_modern(es, "write", &r);
  assert_ran(&r);
  m = reply_of(&r);
  ck_assert_str_eq(tu_jstr(m, "result.content.0.text"),
                   "bob|notes:read notes:write");
  cJSON_Delete(m);
  lc_resp_free(&r);
  /* Legacy sessions too. */
  char *sid = open_session(es);
  call_legacy(es, sid, "write", &r);
  assert_ran(&r);
  lc_resp_free(&r);
  ck_assert_int_eq(runs(T_WRITE), 2);
  free(sid);
  free(rs);
  free(es);
}
END_TEST

START_TEST(e7_expired_or_foreign_token_401_invalid_token) {
  fx_start();
  char *expired = token_full(&RSA_A, "alice", "notes:read", -3600, NULL);
  char *other_aud =
      token_full(&RSA_A, "alice", "notes:read", 600, "https://other.test/mcp");
  char *unknown_key = token_full(&EC_B, "alice", "notes:read", 600, NULL);
  char *good = token("alice", "notes:read");
  /* The same token with its signature's last character changed. */
  char *forged = strdup(good);
  ck_assert_ptr_nonnull(forged);
  char *last = forged + strlen(forged) - 2;
  *last = *last == 'A' ? 'B' : 'A';
  const char *bad[] = {expired, other_aud, unknown_key, forged};
  for (size_t i = 0; i < TU_COUNT(bad); i++) {
    lc_resp r;
    call_modern(bad[i], "read", &r);
    ck_assert_msg(r.status == 401, "token %zu: HTTP %ld", i, r.status);
    assert_challenge(&r, CHALLENGE_INVALID);
    lc_resp_free(&r);
    req q = {.body = INIT, .token = bad[i]};
    http(&q, &r);
    ck_assert_int_eq(r.status, 401);
    assert_challenge(&r, CHALLENGE_INVALID);
    lc_resp_free(&r);
    ck_assert_msg(!log_has(bad[i]), "token %zu was logged", i);
  }
  ck_assert_int_eq(total_runs(), 0);
  lc_resp r;
  call_modern(good, "read", &r);
  assert_ran(&r);
  lc_resp_free(&r);
  free(expired);
  free(other_aud);
  free(unknown_key);
  free(good);
  free(forged);
}
END_TEST

/* ===========================================================================
 * E22, E24: scopes decide, annotations never do
 * ======================================================================== */

/* Why a token was refused reaches the default log level (a warning), so
 * a developer sees "wrong audience" on the first day; the token itself
 * never appears; and a flood of refusals is one line a second. */
START_TEST(token_refusals_logged_without_the_token) {
  fx_start();
  char *foreign = token_full(&RSA_A, "alice", "notes:read", 600,
                             "https://other.example.test/mcp");
  char *expired = token_full(&RSA_A, "alice", "notes:read", -3600, NULL);
  lc_resp r;
  req q = {.body = PING, .token = foreign};
  pthread_mutex_lock(&F.mu);
  lc_buf_free(&F.log);
  int before = F.warnings;
  pthread_mutex_unlock(&F.mu);
  http(&q, &r);
  ck_assert_int_eq(r.status, 401);
  lc_resp_free(&r);
  ck_assert_msg(log_has("token refused: wrong audience (this server takes "
                        "tokens whose aud is \"" RESOURCE "\")"),
                "%s", F.log.p ? F.log.p : "");
  ck_assert_int_eq(F.warnings, before + 1);
  /* The next refusals within the second are counted, not written. */
  q.token = expired;
  long t0 = lc_now_ms();
  for (int i = 0; i < 5; i++) {
    http(&q, &r);
    ck_assert_int_eq(r.status, 401);
    lc_resp_free(&r);
  }
  pthread_mutex_lock(&F.mu);
  int now = F.warnings;
  bool leaked = F.log.p && (strstr(F.log.p, foreign) != NULL ||
                            strstr(F.log.p, expired) != NULL);
  pthread_mutex_unlock(&F.mu);
  long took = lc_now_ms() - t0;
  ck_assert_msg(now - before <= 2 + took / 1000,
                "%d warnings for 6 refusals in %ld ms", now - before, took);
  ck_assert(!leaked);
  lc_sleep_ms(1100);
  http(&q, &r);
  lc_resp_free(&r);
  ck_assert_msg(log_has("token refused: expired"), "%s", F.log.p);
  ck_assert_msg(log_has("more refusals"), "%s", F.log.p);
  free(foreign);
  free(expired);
}
END_TEST

START_TEST(e22_insufficient_scope_403_exact_header) {
  fx_start();
  char *ro = token("alice", "notes:read");
  char *w = token("alice", "notes:write");
  lc_resp r;
  /* Stateless. */
  call_modern(ro, "write", &r);
  assert_forbidden(&r, "notes:write", "[\"notes:write\"]");
  lc_resp_free(&r);
  /* Every scope the call needs, though the token holds one of them. */
  call_modern(w, "wipe", &r);
  assert_forbidden(&r, "notes:admin notes:write", "[\"notes:admin\"]");
  lc_resp_free(&r);
  call_modern(ro, "wipe", &r);
  assert_forbidden(&r, "notes:admin notes:write",
                   "[\"notes:admin\",\"notes:write\"]");
  lc_resp_free(&r);
  /* In a session. */
  char *sid = open_session(ro);
  call_legacy(ro, sid, "write", &r);
  assert_forbidden(&r, "notes:write", "[\"notes:write\"]");
  lc_resp_free(&r);
  call_legacy(ro, sid, "wipe", &r);
  assert_forbidden(&r, "notes:admin notes:write",
                   "[\"notes:admin\",\"notes:write\"]");
  lc_resp_free(&r);
  ck_assert_int_eq(runs(T_WRITE), 0);
  ck_assert_int_eq(runs(T_WIPE), 0);
  /* What the token allows runs, in the same session. */
  call_legacy(ro, sid, "read", &r);
  assert_ran(&r);
  lc_resp_free(&r);
  /* Other refusals keep their status: an unknown tool is a JSON-RPC
   * error in a 200, and no challenge. */
  call_legacy(ro, sid, "nosuch", &r);
  assert_rpc_error(&r, 200, -32602);
  assert_no_challenge(&r);
  lc_resp_free(&r);
  free(sid);
  free(ro);
  free(w);
}
END_TEST

/* Step-up from a handler (mcp_call_require_scopes): purging a note of
 * another subject needs notes:admin on top of the tool's notes:write. */
static _Atomic int purged;
static int purge_run(mcp_call *call, void *ud) {
  (void)ud;
  const char *owner = "";
  mcp_call_arg_string(call, "owner", &owner);
  /* Built before the refusal: never sent. */
  ck_assert_int_eq(mcp_result_text(call, "partial"), 0);
  const char *me = mcp_call_principal(call)->subject;
  if (strcmp(owner, me ? me : "") != 0) {
    int rc = mcp_call_require_scopes(call, "notes:admin");
    if (rc)
      return rc;
  }
  purged++;
  return 0;
}

static void purge_call(const char *tok, const char *sid, const char *owner,
                       lc_resp *r) {
  char body[512];
  if (sid) {
    snprintf(body, sizeof body,
             "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\","
             "\"params\":{\"name\":\"purge\",\"arguments\":{\"owner\":"
             "\"%s\"}}}",
             owner);
    req q = {.body = body, .token = tok, .session = sid, .version = V};
    http(&q, r);
    return;
  }
  snprintf(body, sizeof body,
           "{\"jsonrpc\":\"2.0\",\"id\":\"m\",\"method\":\"tools/call\","
           "\"params\":{\"name\":\"purge\",\"arguments\":{\"owner\":"
           "\"%s\"}," META "}}",
           owner);
  req q = {.body = body,
           .token = tok,
           .version = MODERN,
           .h = {"Mcp-Method: tools/call", "Mcp-Name: purge"}};
  http(&q, r);
}

START_TEST(e22_step_up_from_a_handler_is_the_same_403) {
  fx_server(false);
  const mcp_tool t = {.name = "purge",
                      .description = "Purges a subject's notes.",
                      .input_schema = "{\"type\":\"object\"}",
                      .scopes = S_WRITE,
                      .annotations = {.read_only = MCP_HINT_FALSE,
                                      .destructive = MCP_HINT_TRUE,
                                      .idempotent = MCP_HINT_TRUE,
                                      .open_world = MCP_HINT_FALSE},
                      .handler = purge_run};
  ck_assert_int_eq(mcp_server_add_tool(F.srv, &t, NULL), 0);
  mcp_auth_options a = auth_jwt();
  fx_start_with(&a, NULL);
  purged = 0;
  char *w = token("alice", "notes:write");
  char *admin = token("alice", "notes:write notes:admin");
  lc_resp r;
  /* Stateless, and in a session: the challenge names every scope the call
   * needs (the tool's, then the step-up's), requiredScopes the missing
   * one. */
  purge_call(w, NULL, "bob", &r);
  assert_forbidden(&r, "notes:write notes:admin", "[\"notes:admin\"]");
  ck_assert_ptr_null(strstr(r.body.p, "partial"));
  lc_resp_free(&r);
  char *sid = open_session(w);
  purge_call(w, sid, "bob", &r);
  assert_forbidden(&r, "notes:write notes:admin", "[\"notes:admin\"]");
  ck_assert_ptr_null(strstr(r.body.p, "partial"));
  lc_resp_free(&r);
  ck_assert_int_eq(purged, 0);
  /* One's own notes need no more; with the scope, anyone's. */
  purge_call(w, sid, "alice", &r);
  assert_ran(&r);
  lc_resp_free(&r);
  purge_call(admin, NULL, "bob", &r);
  assert_ran(&r);
  lc_resp_free(&r);
  ck_assert_int_eq(purged, 2);
  free(sid);
  free(w);
  free(admin);
}
END_TEST

START_TEST(e22_decided_before_any_stream_opens) {
  /* A server that prefers text/event-stream still answers the refusal as
   * a 403 with a JSON body: no stream was opened for it. */
  fx_server(false);
  mcp_auth_options a = auth_jwt();
  mcp_http_options o = {.prefer_sse = true};
  fx_start_with(&a, &o);
  char *ro = token("alice", "notes:read");
  lc_resp r;
  call_modern(ro, "wipe", &r);
  assert_forbidden(&r, "notes:admin notes:write",
                   "[\"notes:admin\",\"notes:write\"]");
  lc_resp_free(&r);
  char *sid = open_session(ro);
  call_legacy(ro, sid, "write", &r);
  assert_forbidden(&r, "notes:write", "[\"notes:write\"]");
  lc_resp_free(&r);
  /* An allowed call does stream. */
  call_legacy(ro, sid, "read", &r);
  assert_ran(&r);
  char type[128];
  resp_header(&r, "Content-Type", type, sizeof type, NULL);
  ck_assert_msg(strncmp(type, "text/event-stream", 17) == 0, "%s", type);
  lc_resp_free(&r);
  ck_assert_int_eq(runs(T_WIPE) + runs(T_WRITE), 0);
  free(sid);
  free(ro);
}
END_TEST

/* The check the spec's authors recommend: list the tools, then with a
 * read-only token call a tool annotated destructive; the refusal is on
 * scope. */
START_TEST(e24_recommended_check_readonly_token_vs_destructive_tool) {
  fx_start();
  char *ro = token("alice", "notes:read");
  char *sid = open_session(ro);
  lc_resp r;
  req q = {.body = TOOLS_LIST, .token = ro, .session = sid, .version = V};
  http(&q, &r);
  ck_assert_int_eq(r.status, 200);
  cJSON *m = reply_of(&r);
  const cJSON *tools = tu_jget(m, "result.tools");
  const char *destructive = NULL;
  const cJSON *t;
  cJSON_ArrayForEach(t, tools) {
    if (cJSON_IsTrue(tu_jget(t, "annotations.destructiveHint")))
      destructive = tu_jstr(t, "name");
  }
  ck_assert_msg(destructive != NULL, "no tool is annotated destructive: %s",
                r.body.p);
  ck_assert_str_eq(destructive, "wipe");
  cJSON_Delete(m);
  lc_resp_free(&r);
  call_legacy(ro, sid, "wipe", &r);
  assert_forbidden(&r, "notes:admin notes:write",
                   "[\"notes:admin\",\"notes:write\"]");
  lc_resp_free(&r);
  ck_assert_int_eq(runs(T_WIPE), 0);
  free(sid);
  free(ro);
}
END_TEST

/* Every (token, tool) decision on a server, as text: "status/ran". */
static void decisions(lc_buf *out) {
  static const char *const scopes[] = {NULL,
                                       "",
                                       "notes:read",
                                       "notes:write",
                                       "notes:admin",
                                       "notes:read notes:write",
                                       "notes:admin notes:write",
                                       "notes:read notes:write notes:admin"};
  for (size_t i = 0; i < TU_COUNT(scopes); i++) {
    char *tok = token("alice", scopes[i]);
    for (int k = 0; k < NTOOLS; k++) {
      int before = runs(k);
      lc_resp r;
      call_modern(tok, tool_names[k], &r);
      char v[512] = "";
      resp_header(&r, "WWW-Authenticate", v, sizeof v, NULL);
      lc_buf_fmt(out, "[%s] %s: %ld ran=%d %s\n",
                 scopes[i] ? scopes[i] : "(no scope claim)", tool_names[k],
                 r.status, runs(k) - before, v);
      lc_resp_free(&r);
    }
    free(tok);
  }
}

START_TEST(e24_rewritten_annotations_change_no_decision) {
  fx_start();
  lc_buf honest = {0}, turned = {0};
  decisions(&honest);
  mcp_http_stop(F.http);
  F.http = NULL;
  mcp_server_free(F.srv);
  F.srv = NULL;
  memset(F.runs, 0, sizeof F.runs);
  fx_server(true); /* every hint turned around */
  mcp_auth_options a = auth_jwt();
  fx_start_with(&a, NULL);
  decisions(&turned);
  ck_assert_msg(strcmp(honest.p, turned.p) == 0,
                "decisions changed with the hints:\n%s\nvs\n%s", honest.p,
                turned.p);
  /* And the decisions are the scopes': spot checks. */
  ck_assert_ptr_nonnull(strstr(honest.p, "[notes:read] read: 200 ran=1"));
  ck_assert_ptr_nonnull(strstr(honest.p, "[notes:read] wipe: 403 ran=0"));
  ck_assert_ptr_nonnull(
      strstr(honest.p, "[notes:admin notes:write] wipe: 200 ran=1"));
  ck_assert_ptr_nonnull(strstr(honest.p, "[] whoami: 200 ran=1"));
  lc_buf_free(&honest);
  lc_buf_free(&turned);
}
END_TEST

START_TEST(hide_forbidden_tools_lists_only_callable) {
  fx_server(false);
  mcp_auth_options a = auth_jwt();
  a.hide_forbidden_tools = true;
  fx_start_with(&a, NULL);
  char *ro = token("alice", "notes:read");
  lc_resp r;
  list_modern(ro, &r);
  ck_assert_int_eq(r.status, 200);
  cJSON *m = reply_of(&r);
  const cJSON *tools = tu_jget(m, "result.tools");
  ck_assert_int_eq(cJSON_GetArraySize(tools), 2); /* read, whoami */
  ck_assert_str_eq(tu_jstr(m, "result.cacheScope"), "private");
  cJSON_Delete(m);
  lc_resp_free(&r);
  /* Hidden is hidden at the call too: the answer of an unknown tool, with
   * no challenge naming what would unlock it. */
  call_modern(ro, "wipe", &r);
  lc_resp unknown;
  call_modern(ro, "no_such_tool", &unknown);
  ck_assert_int_eq(r.status, 200);
  ck_assert_int_eq(unknown.status, 200);
  cJSON *hidden = reply_of(&r), *none = reply_of(&unknown);
  ck_assert_int_eq(tu_jget(hidden, "error.code")->valueint, -32602);
  ck_assert_str_eq(tu_jstr(hidden, "error.message"), "Unknown tool: wipe");
  ck_assert_int_eq(tu_jget(none, "error.code")->valueint, -32602);
  ck_assert_ptr_null(strstr(r.head.p, "insufficient_scope"));
  cJSON_Delete(hidden);
  cJSON_Delete(none);
  lc_resp_free(&r);
  lc_resp_free(&unknown);
  /* A caller holding the scopes sees the tool and calls it. */
  char *admin = token("alice", "notes:read notes:write notes:admin");
  call_modern(admin, "wipe", &r);
  ck_assert_int_eq(r.status, 200);
  lc_resp_free(&r);
  free(admin);
  free(ro);
}
END_TEST

/* ===========================================================================
 * E28, C15: the protected resource metadata, and what needs auth
 * ======================================================================== */

static void assert_prm(const lc_resp *r, const char *scopes_json) {
  ck_assert_msg(r->status == 200, "HTTP %ld: %s", r->status,
                r->body.p ? r->body.p : "");
  char type[128];
  ck_assert_ptr_nonnull(
      resp_header(r, "Content-Type", type, sizeof type, NULL));
  ck_assert_str_eq(type, "application/json");
  /* resource byte-identical to the configured URI, in the raw text too. */
  ck_assert_msg(strstr(r->body.p, "\"resource\":\"" RESOURCE "\"") != NULL,
                "%s", r->body.p);
  cJSON *m = cJSON_ParseWithLength(r->body.p, r->body.n);
  ck_assert_ptr_nonnull(m);
  ck_assert_str_eq(tu_jstr(m, "resource"), RESOURCE);
  const cJSON *as = tu_jget(m, "authorization_servers");
  ck_assert(cJSON_IsArray(as));
  ck_assert_int_eq(cJSON_GetArraySize(as), 1);
  ck_assert_str_eq(tu_jstr(m, "authorization_servers.0"), ISSUER);
  char *s = cJSON_PrintUnformatted(tu_jget(m, "scopes_supported"));
  ck_assert_msg(s && strcmp(s, scopes_json) == 0, "scopes_supported %s",
                s ? s : "(absent)");
  cJSON_free(s);
  s = cJSON_PrintUnformatted(tu_jget(m, "bearer_methods_supported"));
  ck_assert_str_eq(s, "[\"header\"]");
  cJSON_free(s);
  ck_assert_int_eq(cJSON_GetArraySize(m), 4);
  cJSON_Delete(m);
}

START_TEST(e28_c15_metadata_without_auth) {
  fx_start();
  /* Both well-known forms, without any Authorization. The default
   * scopes_supported is the union of the tools' scopes. */
  const char *paths[] = {PRM_PATH, PRM_ROOT};
  for (size_t i = 0; i < TU_COUNT(paths); i++) {
    lc_resp r;
    req q = {.method = "GET", .path = paths[i]};
    http(&q, &r);
    assert_prm(&r, "[\"notes:admin\",\"notes:read\",\"notes:write\"]");
    assert_no_challenge(&r);
    lc_resp_free(&r);
    /* Even with a bad token: the document is public. */
    req q2 = {.method = "GET",
              .path = paths[i],
              .h = {"Authorization: Bearer x.y.z"}};
    http(&q2, &r);
    ck_assert_int_eq(r.status, 200);
    lc_resp_free(&r);
    req q3 = {.method = "POST", .path = paths[i], .body = "{}"};
    http(&q3, &r);
    ck_assert_int_eq(r.status, 405);
    lc_resp_free(&r);
  }
  /* The resource_metadata URL of the challenge names one of them. */
  ck_assert_ptr_nonnull(strstr(PRM_URL, PRM_PATH));
  /* Host and Origin checks still apply. */
  lc_resp r;
  req q = {.method = "GET", .path = PRM_PATH, .h = {"Host: evil.example"}};
  http(&q, &r);
  ck_assert_int_eq(r.status, 403);
  lc_resp_free(&r);
  req q2 = {
      .method = "GET", .path = PRM_PATH, .h = {"Origin: https://evil.example"}};
  http(&q2, &r);
  ck_assert_int_eq(r.status, 403);
  lc_resp_free(&r);
  /* A tool added later is in the next document. */
  static const char *const extra[] = {"notes:export", NULL};
  mcp_tool t = {
      .name = "export",
      .description = "Exports.",
      .scopes = extra,
      .annotations = {.read_only = MCP_HINT_TRUE, .open_world = MCP_HINT_FALSE},
      .handler = tool_run};
  ck_assert_int_eq(mcp_server_add_tool(F.srv, &t, (void *)(intptr_t)0), 0);
  req q3 = {.method = "GET", .path = PRM_PATH};
  http(&q3, &r);
  assert_prm(&r, "[\"notes:admin\",\"notes:export\",\"notes:read\","
                 "\"notes:write\"]");
  lc_resp_free(&r);
}
END_TEST

START_TEST(e28_configured_scopes_supported) {
  fx_server(false);
  static const char *const supported[] = {"notes:read", "notes:write",
                                          "offline_access", NULL};
  mcp_auth_options a = auth_jwt();
  a.scopes_supported = supported;
  fx_start_with(&a, NULL);
  lc_resp r;
  req q = {.method = "GET", .path = PRM_PATH};
  http(&q, &r);
  /* As configured, without offline_access (digest §9 item 47). */
  assert_prm(&r, "[\"notes:read\",\"notes:write\"]");
  lc_resp_free(&r);
  /* The lint: a tool scope no client can obtain. */
  ck_assert_msg(log_has("notes:admin"), "no warning about notes:admin: %s",
                F.log.p ? F.log.p : "");
}
END_TEST

START_TEST(c15_every_other_route_needs_auth) {
  fx_start();
  char *tok = token("alice", "notes:read");
  struct {
    const char *method, *path;
    long with_token; /* status with a valid token */
  } routes[] = {
      {"POST", "/mcp", 200},
      {"GET", "/mcp", 400}, /* no session header */
      {"DELETE", "/mcp", 400},
      {"PUT", "/mcp", 405},
      {"GET", "/", 404},
      {"GET", "/mcp/", 404},
      {"POST", "/messages", 404},
      {"GET", "/.well-known/oauth-authorization-server", 404},
      {"GET", "/.well-known/oauth-protected-resource/other", 404},
      {"GET", "/.well-known/oauth-protected-resource/mcp/x", 404},
      {"GET", "/.well-known/oauth-protected-resourc", 404},
  };
  for (size_t i = 0; i < TU_COUNT(routes); i++) {
    lc_resp r;
    req q = {.method = routes[i].method, .path = routes[i].path, .body = INIT};
    http(&q, &r);
    ck_assert_msg(r.status == 401, "%s %s without a token: HTTP %ld",
                  routes[i].method, routes[i].path, r.status);
    assert_challenge(&r, CHALLENGE_401);
    lc_resp_free(&r);
    req q2 = {.method = routes[i].method,
              .path = routes[i].path,
              .body = INIT,
              .token = tok};
    http(&q2, &r);
    ck_assert_msg(r.status == routes[i].with_token,
                  "%s %s with a token: HTTP %ld, expected %ld",
                  routes[i].method, routes[i].path, r.status,
                  routes[i].with_token);
    lc_resp_free(&r);
  }
  free(tok);
}
END_TEST

/* ===========================================================================
 * E29: settings that would inject into a header are refused at start
 * ======================================================================== */

START_TEST(e29_bad_settings_refused_at_start) {
  fx_server(false);
  static const char *const quote_as[] = {"https://as.test/\"x", NULL};
  static const char *const crlf_as[] = {"https://as.test/\r\nX: y", NULL};
  static const char *const empty[] = {NULL};
  static const char *const quote_scope[] = {"notes:read", "a\"b", NULL};
  static const char *const crlf_scope[] = {"a\r\nSet-Cookie: x", NULL};
  static const char *const space_scope[] = {"a b", NULL};
  static const char *const ctl_scope[] = {"a\x01", NULL};
  static const char *const bs_scope[] = {"a\\b", NULL};
  static const char *const empty_scope[] = {"", NULL};
  struct {
    const char *resource;
    const char *const *servers, *const *supported;
    const char *issuer;
    const char *why;
  } bad[] = {
      {NULL, SERVERS, NULL, ISSUER, "no resource"},
      {"https://mcp.example.test/mcp?x=1", SERVERS, NULL, ISSUER, "query"},
      {"https://mcp.example.test/mcp#f", SERVERS, NULL, ISSUER, "fragment"},
      {"https://mcp.example.test/m\"cp", SERVERS, NULL, ISSUER, "quote"},
      {"https://mcp.example.test/m\\cp", SERVERS, NULL, ISSUER, "backslash"},
      {"https://mcp.example.test/\r\nX: y", SERVERS, NULL, ISSUER, "CR/LF"},
      {"https://mcp.example.test/m cp", SERVERS, NULL, ISSUER, "space"},
      {"mcp.example.test/mcp", SERVERS, NULL, ISSUER, "not absolute"},
      {"ftp://mcp.example.test/mcp", SERVERS, NULL, ISSUER, "not http(s)"},
      {RESOURCE, NULL, NULL, ISSUER, "no authorization_servers"},
      {RESOURCE, empty, NULL, ISSUER, "empty authorization_servers"},
      {RESOURCE, quote_as, NULL, ISSUER, "quote in an issuer URL"},
      {RESOURCE, crlf_as, NULL, ISSUER, "CR/LF in an issuer URL"},
      {RESOURCE, SERVERS, quote_scope, ISSUER, "quote in a scope"},
      {RESOURCE, SERVERS, crlf_scope, ISSUER, "CR/LF in a scope"},
      {RESOURCE, SERVERS, space_scope, ISSUER, "space in a scope"},
      {RESOURCE, SERVERS, ctl_scope, ISSUER, "control in a scope"},
      {RESOURCE, SERVERS, bs_scope, ISSUER, "backslash in a scope"},
      {RESOURCE, SERVERS, empty_scope, ISSUER, "empty scope"},
      {RESOURCE, SERVERS, NULL, NULL, "neither verify nor issuer"},
      {RESOURCE, SERVERS, NULL, "https://as.test/\r\n", "CR/LF in issuer"},
  };
  for (size_t i = 0; i < TU_COUNT(bad); i++) {
    mcp_auth_options a = {.resource = bad[i].resource,
                          .authorization_servers = bad[i].servers,
                          .scopes_supported = bad[i].supported,
                          .issuer = bad[i].issuer,
                          .jwks_file = jwks_path};
    mcp_http_options o = {.auth = &a};
    mcp_http *h = NULL;
    int errors_before = F.warnings;
    int rc = mcp_http_start(F.srv, &o, &h);
    ck_assert_msg(rc == MCP_EINVAL, "%s: mcp_http_start gave %s", bad[i].why,
                  mcp_strerror(rc));
    ck_assert_ptr_null(h);
    ck_assert_msg(F.warnings > errors_before, "%s: nothing logged", bad[i].why);
    ck_assert_msg(
        strncmp(mcp_server_errmsg(F.srv), "mcp_http_start: auth: ", 22) == 0,
        "%s: %s", bad[i].why, mcp_server_errmsg(F.srv));
  }
  /* A JWT setting without keys is refused too (the verifier says why). */
  mcp_auth_options nokeys = {
      .resource = RESOURCE, .authorization_servers = SERVERS, .issuer = ISSUER};
  mcp_http_options o = {.auth = &nokeys};
  mcp_http *h = NULL;
  ck_assert_int_eq(mcp_http_start(F.srv, &o, &h), MCP_EINVAL);
  /* And a good one starts. */
  mcp_auth_options good = auth_jwt();
  fx_start_with(&good, NULL);
}
END_TEST

/* ===========================================================================
 * Sessions bound to the token's subject (§8, §9 item 48)
 * ======================================================================== */

START_TEST(sessions_bound_to_subject_404) {
  fx_start();
  char *alice = token("alice", "notes:read");
  char *alice2 = token("alice", "notes:read"); /* another token, same grant */
  char *bob = token("bob", "notes:read");
  char *alice_more = token("alice", "notes:read notes:write");
  char *sid = open_session(alice);
  lc_resp r;
  /* Bob's valid token on Alice's session: as if it did not exist. */
  const char *methods[] = {"POST", "GET", "DELETE"};
  for (size_t i = 0; i < TU_COUNT(methods); i++) {
    req q = {.method = methods[i],
             .body = PING,
             .token = bob,
             .session = sid,
             .version = V};
    http(&q, &r);
    assert_rpc_error(&r, 404, 0);
    lc_resp_free(&r);
  }
  call_legacy(bob, sid, "read", &r);
  assert_rpc_error(&r, 404, 0);
  lc_resp_free(&r);
  ck_assert_int_eq(runs(T_READ), 0);
  /* Alice's next token (same subject, same scopes) goes on. */
  call_legacy(alice2, sid, "read", &r);
  assert_ran(&r);
  lc_resp_free(&r);
  /* A token of Alice's with other scopes does not drive a session the
   * engine decides for with the old ones: she starts a new one. */
  call_legacy(alice_more, sid, "write", &r);
  assert_rpc_error(&r, 404, 0);
  lc_resp_free(&r);
  char *sid2 = open_session(alice_more);
  call_legacy(alice_more, sid2, "write", &r);
  assert_ran(&r);
  lc_resp_free(&r);
  /* Bob cannot end Alice's session; Alice can. */
  req del = {.method = "DELETE", .token = alice, .session = sid, .version = V};
  http(&del, &r);
  ck_assert_int_eq(r.status, 204);
  lc_resp_free(&r);
  call_legacy(alice, sid, "read", &r);
  assert_rpc_error(&r, 404, 0);
  lc_resp_free(&r);
  free(sid);
  free(sid2);
  free(alice);
  free(alice2);
  free(bob);
  free(alice_more);
}
END_TEST

/* Every verb on a legacy session (POST, GET, GET resuming with
 * Last-Event-ID, DELETE) needs the principal that created it, subject and
 * scopes; anyone else gets exactly the answer an unknown session gets. Two
 * tokens without "sub" are two callers. */
static void expect_unknown_session(const req *q, const char *why) {
  static const char unknown_sid[] = "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA";
  req other = *q;
  other.session = unknown_sid;
  lc_resp r, u;
  http(q, &r);
  http(&other, &u);
  ck_assert_msg(r.status == 404, "%s %s: HTTP %ld, expected 404: %s",
                q->method ? q->method : "POST", why, r.status,
                r.body.p ? r.body.p : "");
  ck_assert_int_eq(u.status, 404);
  ck_assert_msg(r.body.n == u.body.n &&
                    memcmp(r.body.p, u.body.p, r.body.n) == 0,
                "%s %s: the answer differs from an unknown session's:\n%s\n%s",
                q->method ? q->method : "POST", why, r.body.p, u.body.p);
  char a[128], b[128];
  ck_assert_ptr_nonnull(resp_header(&r, "Content-Type", a, sizeof a, NULL));
  ck_assert_ptr_nonnull(resp_header(&u, "Content-Type", b, sizeof b, NULL));
  ck_assert_str_eq(a, b);
  lc_resp_free(&r);
  lc_resp_free(&u);
}

START_TEST(sessions_bound_to_principal_every_verb) {
  fx_server(false);
  mcp_http_options o = {.prefer_sse = true}; /* every answer an event stream */
  mcp_auth_options a = auth_jwt();
  fx_start_with(&a, &o);
  char *owner = token("alice", "notes:read notes:write");
  char *fewer = token("alice", "notes:read");
  char *bob = token("bob", "notes:read notes:write");
  char *anon1 = token(NULL, "notes:read notes:write");
  char *anon2 = token(NULL, "notes:read notes:write");
  char *sid = open_session(owner);
  char *sid_anon = open_session(anon1);
  /* A stream with an event to resume from. */
  lc_resp r;
  req ping = {.body = PING, .token = owner, .session = sid, .version = V};
  http(&ping, &r);
  ck_assert_int_eq(r.status, 200);
  const char *idline = strstr(r.body.p, "id: ");
  ck_assert_ptr_nonnull(idline);
  char last[48];
  ck_assert_int_eq(sscanf(idline + 4, "%47[0-9-]", last), 1);
  lc_resp_free(&r);
  char last_h[80];
  snprintf(last_h, sizeof last_h, "Last-Event-ID: %s", last);
  struct {
    const char *tok, *sid, *why;
  } strangers[] = {{bob, sid, "another subject"},
                   {fewer, sid, "the same subject with fewer scopes"},
                   {anon2, sid_anon, "another token without sub"},
                   {anon1, sid, "a token without sub"}};
  for (size_t i = 0; i < TU_COUNT(strangers); i++) {
    const char *tok = strangers[i].tok, *s_id = strangers[i].sid;
    req post = {.body = PING, .token = tok, .session = s_id, .version = V};
    req get = {.method = "GET",
               .token = tok,
               .session = s_id,
               .version = V,
               .h = {"Accept: text/event-stream"}};
    req resume = get;
    resume.h[1] = last_h;
    req del = {.method = "DELETE", .token = tok, .session = s_id, .version = V};
    expect_unknown_session(&post, strangers[i].why);
    expect_unknown_session(&resume, strangers[i].why);
    expect_unknown_session(&get, strangers[i].why);
    expect_unknown_session(&del, strangers[i].why);
  }
  /* The owners go on: a replay, a call, and the end. */
  req resume = {.method = "GET",
                .token = owner,
                .session = sid,
                .version = V,
                .h = {"Accept: text/event-stream", last_h}};
  http(&resume, &r);
  ck_assert_int_eq(r.status, 200);
  ck_assert_ptr_nonnull(strstr(r.body.p, "\"result\":{}"));
  lc_resp_free(&r);
  call_legacy(anon1, sid_anon, "read", &r);
  ck_assert_int_eq(r.status, 200);
  lc_resp_free(&r);
  req del = {.method = "DELETE", .token = owner, .session = sid, .version = V};
  http(&del, &r);
  ck_assert_int_eq(r.status, 204);
  lc_resp_free(&r);
  free(sid);
  free(sid_anon);
  free(owner);
  free(fewer);
  free(bob);
  free(anon1);
  free(anon2);
}
END_TEST

/* The standalone GET stream lasts no longer than the token that opened
 * it: the connection ends at expiry, and the client resumes it with a
 * fresh token. */
START_TEST(get_stream_ends_when_its_token_expires) {
  fx_start();
  char *longer = token("alice", "notes:read");
  char *sid = open_session(longer);
  char *brief = token_full(&RSA_A, "alice", "notes:read", 2, NULL);
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  lc_resp r;
  req q = {.method = "GET", .token = brief, .session = sid, .version = V};
  http(&q, &r);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  long ms =
      (t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000;
  ck_assert_int_eq(r.status, 200);
  ck_assert_msg(r.curl_rc == CURLE_OK, "curl: %s",
                curl_easy_strerror(r.curl_rc));
  ck_assert_msg(ms >= 1000 && ms <= T(6000), "the stream lasted %ld ms", ms);
  lc_resp_free(&r);
  /* The session is still there. */
  call_legacy(longer, sid, "read", &r);
  assert_ran(&r);
  lc_resp_free(&r);
  free(sid);
  free(longer);
  free(brief);
}
END_TEST

/* ===========================================================================
 * H5: the wall clock jumps. ctest runs this tcase alone under libfaketime
 * (faketime.h5_clock_jumps): the wall clock is real time plus the offset
 * in FAKETIME_TIMESTAMP_FILE, re-read on every call, and CLOCK_MONOTONIC
 * stays real, as when an administrator or NTP steps the clock.
 * ======================================================================== */

/* Moves the wall clock to real time plus s seconds. The file is replaced
 * whole (rename), so a server thread never reads it half written. */
static void clock_offset(long s) {
  const char *path = getenv("FAKETIME_TIMESTAMP_FILE");
  ck_assert_msg(path && *path, "FAKETIME_TIMESTAMP_FILE is not set: run "
                               "this through ctest -R faketime");
  char tmp[4096], text[32];
  snprintf(tmp, sizeof tmp, "%s.new", path);
  snprintf(text, sizeof text, "%+ld\n", s);
  write_file(tmp, text);
  ck_assert_int_eq(rename(tmp, path), 0);
}

static long long mono_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (long long)ts.tv_sec;
}

/* A token for alice (notes:read) with these dates (nbf 0 = none). */
static char *token_dates(long long iat, long long nbf, long long exp) {
  char header[128], payload[512], nbf_member[40] = "";
  snprintf(header, sizeof header,
           "{\"alg\":\"RS256\",\"typ\":\"at+jwt\",\"kid\":\"%s\"}", RSA_A.kid);
  if (nbf)
    snprintf(nbf_member, sizeof nbf_member, "\"nbf\":%lld,", nbf);
  snprintf(payload, sizeof payload,
           "{\"iss\":\"%s\",\"aud\":\"%s\",\"sub\":\"alice\","
           "\"scope\":\"notes:read\",\"iat\":%lld,%s\"exp\":%lld}",
           ISSUER, RESOURCE, iat, nbf_member, exp);
  return sign_jwt(&RSA_A, header, payload);
}

/* The last request on G reused the connection of the one before. */
static bool same_connection(void) {
  long made = -1;
  curl_easy_getinfo(G, CURLINFO_NUM_CONNECTS, &made);
  return made == 0;
}

/* Token checks follow the wall clock, so a jump may flip a token's
 * validity (by design: "exp" and "nbf" are wall-clock dates). Session idle
 * expiry and connection timeouts run on CLOCK_MONOTONIC, so neither a jump
 * of +1 h (past session_idle_s, 600 s by default, and the 30 s connection
 * timeout) nor one of -1 h ends a session or an open connection. */
START_TEST(h5_wall_clock_jumps) {
  /* First, that the clock can be moved at all: without libfaketime this
   * test would prove nothing, so it fails. */
  clock_offset(0);
  long long wall0 = (long long)time(NULL), mono0 = mono_s();
  clock_offset(3600);
  long long jumped = (long long)time(NULL) - wall0;
  clock_offset(0);
  ck_assert_msg(jumped > 3500 && jumped < 3700,
                "the wall clock moved %lld s, not 3600: libfaketime is not "
                "preloaded (install the Debian package faketime: "
                "cmake/deps.sh --test)",
                jumped);
  ck_assert_msg(mono_s() - mono0 < 60, "CLOCK_MONOTONIC jumped too");

  fx_start();
  long long now = (long long)time(NULL), old = now - 7200;
  char *soon = token_dates(old, 0, now + 600);            /* 10 minutes */
  char *later = token_dates(old, now + 1800, now + 7200); /* in 30 min */
  char *day = token_dates(old, 0, now + 86400);           /* a day */
  lc_resp r;
  call_modern(soon, "read", &r);
  assert_ran(&r);
  lc_resp_free(&r);
  call_modern(later, "read", &r);
  ck_assert_int_eq(r.status, 401);
  assert_challenge(&r, CHALLENGE_INVALID);
  lc_resp_free(&r);
  char *sid = open_session(day);
  call_legacy(day, sid, "read", &r);
  assert_ran(&r);
  lc_resp_free(&r);

  static const long offsets[] = {3600, -3600};
  for (size_t i = 0; i < TU_COUNT(offsets); i++) {
    clock_offset(offsets[i]);
    /* Let the server's housekeeping (once a second) run on the new time:
     * it is what would end idle sessions and quiet connections. */
    long ms = T(2500);
    nanosleep(&(struct timespec){ms / 1000, (ms % 1000) * 1000000}, NULL);
    /* The session and the connection that served it are still there. */
    call_legacy(day, sid, "read", &r);
    assert_ran(&r);
    ck_assert_msg(same_connection(),
                  "the open connection was closed by a "
                  "jump of %+ld s",
                  offsets[i]);
    lc_resp_free(&r);
    /* +1 h: the 10-minute token has expired and the early one is valid;
     * -1 h: the other way round. */
    call_modern(offsets[i] > 0 ? soon : later, "read", &r);
    ck_assert_msg(r.status == 401, "after %+ld s: HTTP %ld", offsets[i],
                  r.status);
    assert_challenge(&r, CHALLENGE_INVALID);
    lc_resp_free(&r);
    call_modern(offsets[i] > 0 ? later : soon, "read", &r);
    assert_ran(&r);
    lc_resp_free(&r);
  }
  clock_offset(0);
  free(sid);
  free(soon);
  free(later);
  free(day);
}
END_TEST

/* ===========================================================================
 * Keys at run time: mcp_http_set_jwks
 * ======================================================================== */

START_TEST(jwks_replaced_and_reloaded_at_run_time) {
  fx_start();
  char *a = token_full(&RSA_A, "alice", "notes:read", 600, NULL);
  char *b = token_full(&EC_B, "bob", "notes:read", 600, NULL);
  lc_resp r;
  call_modern(b, "read", &r);
  ck_assert_int_eq(r.status, 401);
  lc_resp_free(&r);
  /* A new set holding B only. */
  char *only_b = jwks_of(&EC_B, NULL);
  ck_assert_int_eq(mcp_http_set_jwks(F.http, only_b), 0);
  call_modern(b, "read", &r);
  assert_ran(&r);
  lc_resp_free(&r);
  call_modern(a, "read", &r);
  ck_assert_int_eq(r.status, 401);
  lc_resp_free(&r);
  /* Something unusable: refused, and the last good set stays. */
  ck_assert_int_eq(mcp_http_set_jwks(F.http, "{\"keys\":[]}"), MCP_EINVAL);
  ck_assert_int_eq(mcp_http_set_jwks(F.http, "not json"), MCP_EINVAL);
  call_modern(b, "read", &r);
  assert_ran(&r);
  lc_resp_free(&r);
  /* Re-reading the file (it still holds A and EC): A again. */
  ck_assert_int_eq(mcp_http_set_jwks(F.http, NULL), 0);
  call_modern(a, "read", &r);
  assert_ran(&r);
  lc_resp_free(&r);
  call_modern(b, "read", &r);
  ck_assert_int_eq(r.status, 401);
  lc_resp_free(&r);
  /* The file rewritten with B and read again. */
  char path[64];
  snprintf(path, sizeof path, "/tmp/libmcp-auth-reload-%ld.json",
           (long)getpid());
  write_file(path, only_b);
  mcp_http_stop(F.http);
  F.http = NULL;
  mcp_auth_options opts = auth_jwt();
  opts.jwks_file = path;
  fx_start_with(&opts, NULL);
  call_modern(b, "read", &r);
  assert_ran(&r);
  lc_resp_free(&r);
  char *ab = jwks_of(&RSA_A, &EC_B);
  write_file(path, ab);
  ck_assert_int_eq(mcp_http_set_jwks(F.http, NULL), 0);
  call_modern(a, "read", &r);
  assert_ran(&r);
  lc_resp_free(&r);
  unlink(path);
  ck_assert_int_eq(mcp_http_set_jwks(F.http, NULL), MCP_EIO);
  call_modern(a, "read", &r);
  assert_ran(&r);
  lc_resp_free(&r);
  free(ab);
  free(only_b);
  free(a);
  free(b);
}
END_TEST

/* ===========================================================================
 * A custom verifier (introspection, opaque tokens); E25
 * ======================================================================== */

typedef struct opaque {
  const char *token, *subject, *scopes;
  long long expires_at;
} opaque;

static const opaque OPAQUE[] = {
    {"opaque-alice-0123456789", "alice", "notes:read", 0},
    {"opaque-bob-0123456789", "bob", "notes:read notes:write notes:admin", 0},
    {"opaque-expired-0123456789", "carol", "notes:read", 1000},
};

static int verify_opaque(const char *tok, mcp_token_info *info, void *ud) {
  int *calls = ud;
  __atomic_add_fetch(calls, 1, __ATOMIC_SEQ_CST);
  for (size_t i = 0; i < TU_COUNT(OPAQUE); i++) {
    if (strcmp(tok, OPAQUE[i].token) == 0) {
      snprintf(info->subject, sizeof info->subject, "%s", OPAQUE[i].subject);
      snprintf(info->scopes, sizeof info->scopes, "%s", OPAQUE[i].scopes);
      info->expires_at = OPAQUE[i].expires_at;
      return 0;
    }
  }
  return -1;
}

START_TEST(custom_verifier_and_e25_no_token_passthrough) {
  fx_server(false);
  static int calls;
  calls = 0;
  mcp_auth_options a = {.resource = RESOURCE,
                        .authorization_servers = SERVERS,
                        .verify = verify_opaque,
                        .verify_data = &calls};
  fx_start_with(&a, NULL);
  lc_resp r;
  call_modern(OPAQUE[0].token, "whoami", &r);
  assert_ran(&r);
  lc_resp_free(&r);
  call_modern(OPAQUE[0].token, "write", &r);
  assert_forbidden(&r, "notes:write", "[\"notes:write\"]");
  lc_resp_free(&r);
  call_modern(OPAQUE[1].token, "wipe", &r);
  assert_ran(&r);
  lc_resp_free(&r);
  /* A verifier that says the token expired long ago is not believed. */
  call_modern(OPAQUE[2].token, "read", &r);
  ck_assert_int_eq(r.status, 401);
  assert_challenge(&r, CHALLENGE_INVALID);
  lc_resp_free(&r);
  call_modern("opaque-unknown", "read", &r);
  ck_assert_int_eq(r.status, 401);
  assert_challenge(&r, CHALLENGE_INVALID);
  lc_resp_free(&r);
  ck_assert_int_ge(__atomic_load_n(&calls, __ATOMIC_SEQ_CST), 5);
  /* E25: what handlers saw is the principal, never the token; nothing
   * logged it either. */
  ck_assert_ptr_nonnull(strstr(F.seen.p, "alice|notes:read\n"));
  ck_assert_ptr_nonnull(
      strstr(F.seen.p, "bob|notes:read notes:write notes:admin\n"));
  for (size_t i = 0; i < TU_COUNT(OPAQUE); i++) {
    ck_assert_msg(strstr(F.seen.p, OPAQUE[i].token) == NULL,
                  "a handler saw a token");
    ck_assert_msg(!log_has(OPAQUE[i].token), "a token was logged");
  }
  /* No JWT here: no key set to replace. */
  ck_assert_int_eq(mcp_http_set_jwks(F.http, "{\"keys\":[]}"), MCP_ESTATE);
}
END_TEST

/* ===========================================================================
 * The startup lint
 * ======================================================================== */

static int tool_noop(mcp_call *call, void *ud) {
  (void)ud;
  return mcp_result_text(call, "ok");
}

START_TEST(lint_unguarded_destructive_tool) {
  fx_server(false);
  mcp_tool t = {.name = "drop_everything",
                .description = "Destroys, and needs no scope.",
                .annotations = {.read_only = MCP_HINT_FALSE,
                                .destructive = MCP_HINT_TRUE,
                                .idempotent = MCP_HINT_TRUE,
                                .open_world = MCP_HINT_FALSE},
                .handler = tool_noop};
  ck_assert_int_eq(mcp_server_add_tool(F.srv, &t, NULL), 0);
  mcp_auth_options a = auth_jwt();
  fx_start_with(&a, NULL);
  ck_assert_msg(log_has("drop_everything"), "no lint warning: %s",
                F.log.p ? F.log.p : "");
  /* The warning decided nothing: any valid token may call it. */
  char *tok = token("alice", "");
  lc_resp r;
  call_modern(tok, "drop_everything", &r);
  assert_ran(&r);
  lc_resp_free(&r);
  free(tok);
}
END_TEST

/* ===========================================================================
 * The suite
 * ======================================================================== */

static TCase *tc(Suite *s, const char *name) {
  return tu_tcase(s, name, setup, teardown, 240);
}

int main(void) {
  signal(SIGPIPE, SIG_IGN);
  setvbuf(stdout, NULL, _IOLBF, 0);
  if (curl_global_init(CURL_GLOBAL_ALL) != CURLE_OK)
    return EXIT_FAILURE;
  srand((unsigned)time(NULL));
  key_make(&RSA_A);
  key_make(&EC_B);
  key_make(&EC_A);
  snprintf(jwks_path, sizeof jwks_path, "/tmp/libmcp-auth-jwks-%ld.json",
           (long)getpid());
  char *jwks = jwks_of(&RSA_A, &EC_A);
  FILE *f = fopen(jwks_path, "w");
  if (f == NULL || fputs(jwks, f) < 0 || fclose(f) != 0)
    return EXIT_FAILURE;
  free(jwks);

  Suite *s = suite_create("http_auth");
  TCase *t = tc(s, "unauthenticated");
  tcase_add_test(t, e1_no_authorization_401);
  tcase_add_test(t, e2_token_in_query_never_accepted);
  tcase_add_test(t, e3_malformed_authorization);
  t = tc(s, "tokens");
  tcase_add_test(t, valid_rs256_and_es256_tokens);
  tcase_add_test(t, e7_expired_or_foreign_token_401_invalid_token);
  tcase_add_test(t, token_refusals_logged_without_the_token);
  tcase_add_test(t, custom_verifier_and_e25_no_token_passthrough);
  t = tc(s, "scopes");
  tcase_add_test(t, e22_insufficient_scope_403_exact_header);
  tcase_add_test(t, e22_step_up_from_a_handler_is_the_same_403);
  tcase_add_test(t, e22_decided_before_any_stream_opens);
  tcase_add_test(t, e24_recommended_check_readonly_token_vs_destructive_tool);
  tcase_add_test(t, hide_forbidden_tools_lists_only_callable);
  t = tc(s, "annotations");
  tcase_add_test(t, e24_rewritten_annotations_change_no_decision);
  t = tc(s, "metadata");
  tcase_add_test(t, e28_c15_metadata_without_auth);
  tcase_add_test(t, e28_configured_scopes_supported);
  tcase_add_test(t, c15_every_other_route_needs_auth);
  t = tc(s, "config");
  tcase_add_test(t, e29_bad_settings_refused_at_start);
  tcase_add_test(t, lint_unguarded_destructive_tool);
  t = tc(s, "sessions");
  tcase_add_test(t, sessions_bound_to_subject_404);
  tcase_add_test(t, sessions_bound_to_principal_every_verb);
  tcase_add_test(t, get_stream_ends_when_its_token_expires);
  t = tc(s, "keys");
  tcase_add_test(t, jwks_replaced_and_reloaded_at_run_time);
  /* Only where ctest preloads libfaketime (tests/http/CMakeLists.txt). */
  if (getenv("FAKETIME_TIMESTAMP_FILE")) {
    t = tc(s, "clock");
    tcase_add_test(t, h5_wall_clock_jumps);
  }
  int rc = tu_run(s);
  unlink(jwks_path);
  EVP_PKEY_free(RSA_A.pkey);
  EVP_PKEY_free(EC_B.pkey);
  EVP_PKEY_free(EC_A.pkey);
  free(RSA_A.jwk);
  free(EC_B.jwk);
  free(EC_A.jwk);
  curl_global_cleanup();
  return rc;
}
