/* Tests for protocol 2026-07-28 (the modern era) and for the dual-era engine
 * (lib/engine/session.c, lib/engine/call.c, lib/engine/input.c,
 * lib/engine/server.c).
 *
 * Each MUST of digest §9 items 10-17 has a test named mustNN_...; the rest
 * covers _meta validation, one session serving both eras, the input-required
 * flow in both eras (InputRequiredResult with a signed requestState in the
 * modern era, real client requests in the legacy era), modern logging,
 * progress and cancellation, and allocation failure.
 *
 * Every message the engine sends is captured, checked to be strict JSON and
 * classified: a message with both "method" and "id" is a server-to-client
 * request, which only the legacy-input tests may produce (teardown checks). */
#include <check.h>
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine.h"
#include "testinternal.h"
#include "testutil.h"
#include "tools.h"

/* ---- requests ------------------------------------------------------------ */

#define LL "\"io.modelcontextprotocol/logLevel\""
#define SI "io.modelcontextprotocol/serverInfo"

#define META_ALL                                                               \
  TU_META("{\"elicitation\":{\"form\":{},\"url\":{}},\"sampling\":{},"         \
          "\"roots\":{}}")

static const char FORM[] =
    "{\"mode\":\"form\",\"message\":\"Delete it?\",\"requestedSchema\":{"
    "\"type\":\"object\",\"properties\":{\"ok\":{\"type\":\"boolean\"}},"
    "\"required\":[\"ok\"]}}";
static const char URL_FORM[] =
    "{\"mode\":\"url\",\"message\":\"Sign in\",\"url\":"
    "\"https://example.com/login\",\"elicitationId\":\"e1\"}";
static const char SAMPLING[] =
    "{\"messages\":[{\"role\":\"user\",\"content\":{\"type\":\"text\","
    "\"text\":\"Summarize\"}}],\"maxTokens\":100}";
static const char ACCEPT[] =
    "{\"action\":\"accept\",\"content\":{\"ok\":true}}";

/* ---- fixture --------------------------------------------------------------
 */

static mcp_server *srv;
static tu_peer P; /* alice */

static int g_server_requests;        /* messages with both method and id */
static bool g_allow_server_requests; /* set by the legacy-input tests */

static int (*g_fn)(mcp_call *call); /* what the tools do; NULL: text "ok" */
static int g_runs;                  /* handler invocations, all tools */
static char g_last_tool[64];
static char g_last_state[256];   /* mcp_call_state, "(null)" for NULL */
static char g_last_confirm[512]; /* mcp_call_input "confirm", "(null)" */
static bool g_last_bogus;        /* mcp_call_input "bogus" was present */
static int g_req_rc;             /* last mcp_call_request_input result */

static const char *const READ_SCOPES[] = {"read", NULL};
static const mcp_principal ALICE = {.subject = "alice", .scopes = READ_SCOPES};
static const mcp_principal BOB = {.subject = "bob", .scopes = READ_SCOPES};

/* The check behind every peer of this suite: strict JSON, and the count of
 * server-to-client requests. */
static void inspect(const char *msg, size_t len) {
  tu_assert_strict(msg, len, "a message sent");
  cJSON *m = cJSON_ParseWithLength(msg, len);
  if (cJSON_IsObject(m) && tu_get(m, "method") && tu_get(m, "id"))
    g_server_requests++;
  cJSON_Delete(m);
}

static void copy_json(char *dst, size_t n, const cJSON *v) {
  if (v == NULL) {
    snprintf(dst, n, "(null)");
    return;
  }
  char *s = cJSON_PrintUnformatted(v);
  snprintf(dst, n, "%s", s ? s : "(no memory)");
  cJSON_free(s);
}

static int tool_handler(mcp_call *call, void *user_data) {
  (void)user_data;
  g_runs++;
  snprintf(g_last_tool, sizeof g_last_tool, "%s", mcp_call_name(call));
  const char *st = mcp_call_state(call);
  snprintf(g_last_state, sizeof g_last_state, "%s", st ? st : "(null)");
  copy_json(g_last_confirm, sizeof g_last_confirm,
            mcp_call_input(call, "confirm"));
  g_last_bogus = mcp_call_input(call, "bogus") != NULL;
  if (g_fn)
    return g_fn(call);
  return mcp_result_text(call, "ok");
}

static const mcp_tool TOOL_RUN = TC_TOOL_RUN(tool_handler);
static const mcp_tool TOOL_OTHER = {.name = "other",
                                    .description = "Another tool.",
                                    .input_schema = "{\"type\":\"object\"}",
                                    .annotations = TC_READ_ONLY,
                                    .handler = tool_handler};
static const char *const ADMIN[] = {"admin", NULL};
static const mcp_tool TOOL_SECRET = {.name = "secret",
                                     .description = "Needs admin.",
                                     .scopes = ADMIN,
                                     .annotations = TC_READ_ONLY,
                                     .handler = tool_handler};
static const mcp_tool TOOL_TYPED = {
    .name = "typed",
    .description = "Takes an integer n.",
    .input_schema = "{\"type\":\"object\",\"properties\":{\"n\":{\"type\":"
                    "\"integer\"}},\"required\":[\"n\"]}",
    .annotations = TC_READ_ONLY,
    .handler = tool_handler};

static const mcp_server_info INFO = {.name = "srv",
                                     .version = "1.2.3",
                                     .title = "Test Server",
                                     .instructions = "Use it wisely."};

static void add_tools(mcp_server *s) {
  mcp_server_set_log(s, tu_silent_log, NULL);
  ck_assert_int_eq(mcp_server_add_tool(s, &TOOL_RUN, NULL), 0);
  ck_assert_int_eq(mcp_server_add_tool(s, &TOOL_OTHER, NULL), 0);
  ck_assert_int_eq(mcp_server_add_tool(s, &TOOL_SECRET, NULL), 0);
  ck_assert_int_eq(mcp_server_add_tool(s, &TOOL_TYPED, NULL), 0);
}

static void setup(void) {
  g_server_requests = 0;
  g_allow_server_requests = false;
  g_fn = NULL;
  g_runs = 0;
  g_last_tool[0] = g_last_state[0] = g_last_confirm[0] = '\0';
  g_last_bogus = false;
  g_req_rc = 0;
  tu_deferred_reset();
  ck_assert_int_eq(mcp_server_new(&INFO, &srv), 0);
  add_tools(srv);
  tu_peer_open_with(&P, srv, &ALICE, inspect);
}

static void teardown(void) {
  tu_peer_close(&P);
  mcp_server_free(srv);
  srv = NULL;
  /* digest §9 item 15: in the modern era a server never sends a request. */
  ck_assert_msg(g_allow_server_requests || g_server_requests == 0,
                "%d server-to-client requests sent", g_server_requests);
}

/* ---- helpers ------------------------------------------------------------ */

/* The requestState of an input_required reply (free with free). */
static char *state_of(const cJSON *reply) {
  const cJSON *s = tu_get(tu_result_of(reply), "requestState");
  ck_assert_msg(cJSON_IsString(s), "no requestState");
  char *copy = strdup(s->valuestring);
  ck_assert_ptr_nonnull(copy);
  return copy;
}

/* A JSON string of s (free with free); s is a token, no escaping needed. */
static char *quote(const char *s) { return tu_text("\"%s\"", s); }

/* Calls the tool name with args in the modern era (TU_META_ELICIT) and
 * returns the requestState of the input_required answer; g_fn must ask. */
static char *obtain_state(tu_peer *p, const char *name, const char *args) {
  cJSON *r = tu_ask(p, tu_mcall(90, name, args, TU_META_ELICIT, NULL, NULL));
  tu_assert_json(r, "{\"result\":{\"resultType\":\"input_required\"}}");
  char *s = state_of(r);
  cJSON_Delete(r);
  return s;
}

/* Retries name(args) with the token (quoted here) and responses. */
static cJSON *retry(tu_peer *p, int id, const char *name, const char *args,
                    const char *token, const char *responses) {
  char *q = quote(token);
  cJSON *r = tu_ask(p, tu_mcall(id, name, args, TU_META_ELICIT, q, responses));
  free(q);
  return r;
}

/* The decoded payload of a token (free with free). */
static char *payload_of(const char *token) {
  const char *dot = strchr(token, '.');
  ck_assert_ptr_nonnull(dot);
  mcp__buf b = {0};
  ck_assert_int_eq(mcp__base64url_decode(token, (size_t)(dot - token), &b), 0);
  const char *s = mcp__buf_str(&b);
  ck_assert_ptr_nonnull(s);
  char *copy = strdup(s);
  mcp__buf_free(&b);
  ck_assert_ptr_nonnull(copy);
  return copy;
}

/* The "exp" of a token's payload. */
static long long exp_of(const char *token) {
  char *p = payload_of(token);
  cJSON *j = cJSON_Parse(p);
  ck_assert_ptr_nonnull(j);
  const cJSON *e = tu_get(j, "exp");
  ck_assert(cJSON_IsNumber(e));
  long long v = (long long)e->valuedouble;
  cJSON_Delete(j);
  free(p);
  return v;
}

/* Re-signs token with key after replacing only the digits of its "exp"
 * with new_exp: the payload stays byte for byte what lib/engine/input.c wrote
 * otherwise (version, tool, argument digest, subject, keys, state). */
static char *forge(const unsigned char *key, size_t key_len, const char *token,
                   long long new_exp) {
  char *p = payload_of(token);
  char *e = strstr(p, "\"exp\":");
  ck_assert_ptr_nonnull(e);
  e += 6;
  char *end = e;
  while (*end == '-' || (*end >= '0' && *end <= '9'))
    end++;
  ck_assert_ptr_ne(end, e);
  char *np = tu_text("%.*s%lld%s", (int)(e - p), p, new_exp, end);
  mcp__buf tok = {0};
  mcp__base64url(&tok, np, strlen(np));
  unsigned char mac[32];
  ck_assert_ptr_nonnull(mcp__buf_str(&tok));
  mcp__hmac_sha256(key, key_len, tok.data, tok.len, mac);
  mcp__buf_putc(&tok, '.');
  mcp__base64url(&tok, mac, sizeof mac);
  const char *s = mcp__buf_str(&tok);
  ck_assert_ptr_nonnull(s);
  char *out = strdup(s);
  ck_assert_ptr_nonnull(out);
  mcp__buf_free(&tok);
  free(np);
  free(p);
  return out;
}

/* Comma-separated tool names of a tools/list reply. */
static void tool_names(const cJSON *reply, char *dst, size_t n) {
  dst[0] = '\0';
  const cJSON *tools = tu_get(tu_result_of(reply), "tools");
  ck_assert(cJSON_IsArray(tools));
  for (const cJSON *t = tools->child; t; t = t->next) {
    size_t k = strlen(dst);
    snprintf(dst + k, n - k, "%s%s", k ? "," : "",
             tu_get(t, "name")->valuestring);
  }
}

/* Handlers. */

/* Asks "confirm" (an elicitation form) and keeps state "asked-once"; with
 * the answer, finishes with "deleted" or "kept". */
static int h_confirm(mcp_call *call) {
  const cJSON *a = mcp_call_input(call, "confirm");
  if (a == NULL) {
    g_req_rc =
        mcp_call_request_input(call, "confirm", MCP_INPUT_ELICITATION, FORM);
    if (g_req_rc)
      return g_req_rc;
    int rc = mcp_call_set_state(call, "asked-once");
    return rc ? rc : MCP_INPUT_REQUIRED;
  }
  const cJSON *action = tu_get(a, "action");
  bool yes =
      cJSON_IsString(action) && strcmp(action->valuestring, "accept") == 0;
  return mcp_result_text(call, yes ? "deleted" : "kept");
}

/* Asks for g_kind with g_params under "need"; returns what it was told. */
static mcp_input_kind g_kind;
static const char *g_params;
static int h_need(mcp_call *call) {
  if (mcp_call_input(call, "need"))
    return mcp_result_text(call, "got it");
  g_req_rc = mcp_call_request_input(call, "need", g_kind, g_params);
  return g_req_rc ? g_req_rc : MCP_INPUT_REQUIRED;
}

/* Asks for an elicitation and does without it when refused. */
static int h_do_without(mcp_call *call) {
  g_req_rc = mcp_call_request_input(call, "need", MCP_INPUT_ELICITATION, FORM);
  if (g_req_rc == MCP_ECAPABILITY)
    return mcp_result_text(call, "did without");
  return g_req_rc ? g_req_rc : MCP_INPUT_REQUIRED;
}

/* ===========================================================================
 * digest §9 item 10: server/discover
 * ======================================================================== */

static bool has_string(const cJSON *array, const char *s) {
  for (const cJSON *e = array ? array->child : NULL; e; e = e->next)
    if (cJSON_IsString(e) && strcmp(e->valuestring, s) == 0)
      return true;
  return false;
}

START_TEST(must10_server_discover_answered_first_with_versions_and_info) {
  /* The very first message on a fresh session. */
  cJSON *r = tu_ask(&P, tu_mreq(1, "server/discover", TU_META_NONE, NULL));
  tu_assert_json(
      r, "{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":\"<absent>\",\"result\":{"
         "\"resultType\":\"complete\",\"supportedVersions\":\"<any>\","
         "\"instructions\":\"Use it wisely.\",\"_meta\":{\"" SI
         "\":{\"name\":\"srv\",\"version\":\"1.2.3\",\"title\":\"Test "
         "Server\"}},\"ttlMs\":0,\"cacheScope\":\"public\"}}");
  const cJSON *res = tu_result_of(r);
  /* list_changed reaches modern clients on subscriptions/listen; nothing
   * is announced that this server lacks. */
  tu_assert_json(tu_get(res, "capabilities"),
                 "{\"tools\":{\"listChanged\":true},\"logging\":{},"
                 "\"prompts\":\"<absent>\",\"resources\":\"<absent>\","
                 "\"completions\":\"<absent>\"}");
  const cJSON *v = tu_get(res, "supportedVersions");
  ck_assert(cJSON_IsArray(v));
  ck_assert_str_eq(v->child->valuestring, "2026-07-28"); /* newest first */
  ck_assert(has_string(v, "2025-11-25"));
  ck_assert(has_string(v, "2025-06-18"));
  ck_assert(has_string(v, "2025-03-26"));
  for (const cJSON *e = v->child; e; e = e->next)
    ck_assert_int_ge(mcp__version_find(e->valuestring), 0);
  cJSON_Delete(r);
  /* discover answers without initializing anything. */
  ck_assert_ptr_null(mcp_session_protocol_version(P.session));

  /* server/discover is modern only: without _meta it is refused. */
  r = tu_ask(&P, strdup("{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":"
                        "\"server/discover\"}"));
  tu_assert_error(r, -32602, "protocolVersion");
  cJSON_Delete(r);
  r = tu_ask(&P, strdup("{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":"
                        "\"server/discover\",\"params\":{\"_meta\":\"x\"}}"));
  tu_assert_error(r, -32602, "protocolVersion");
  cJSON_Delete(r);

  /* A server without instructions leaves the member out; on a session that
   * is also in a legacy handshake, discover answers the same. */
  mcp_server *bare = NULL;
  mcp_server_info info = {.name = "bare", .version = "0"};
  ck_assert_int_eq(mcp_server_new(&info, &bare), 0);
  tu_peer B;
  tu_peer_open_with(&B, bare, NULL, inspect);
  tu_legacy_init(&B, "2025-11-25", "{}");
  r = tu_ask(&B, tu_mreq(4, "server/discover", TU_META_NONE, NULL));
  tu_assert_json(r, "{\"id\":4,\"result\":{\"resultType\":\"complete\","
                    "\"instructions\":\"<absent>\",\"_meta\":{\"" SI
                    "\":{\"name\":\"bare\",\"version\":\"0\",\"title\":"
                    "\"<absent>\"}},\"capabilities\":{\"tools\":\"<any>\"}}}");
  cJSON_Delete(r);
  tu_peer_close(&B);
  mcp_server_free(bare);
}
END_TEST

/* ===========================================================================
 * digest §9 item 11: version and client capabilities from every request
 * ======================================================================== */

START_TEST(must11_version_and_capabilities_from_every_request) {
  static const char *const methods[] = {"server/discover", "tools/list",
                                        "tools/call"};
  static const struct {
    const char *meta, *needle;
  } bad[] = {
      /* protocolVersion missing, or not a string */
      {"{" TU_CC ":{}}", "protocolVersion"},
      {"{" TU_PV ":20260728," TU_CC ":{}}", "protocolVersion"},
      {"{" TU_PV ":null," TU_CC ":{}}", "protocolVersion"},
      /* clientCapabilities missing, or not an object */
      {"{" TU_PV ":\"2026-07-28\"}", "clientCapabilities"},
      {"{" TU_PV ":\"2026-07-28\"," TU_CC ":[]}", "clientCapabilities"},
      {"{" TU_PV ":\"2026-07-28\"," TU_CC ":\"all\"}", "clientCapabilities"},
      {"{" TU_PV ":\"2026-07-28\"," TU_CC ":null}", "clientCapabilities"},
      {"{" TU_PV ":\"2026-07-28\"," TU_CC ":true}", "clientCapabilities"},
      /* a log level that is not one */
      {"{" TU_PV ":\"2026-07-28\"," TU_CC ":{}," LL ":\"loud\"}", "logLevel"},
      {"{" TU_PV ":\"2026-07-28\"," TU_CC ":{}," LL ":\"INFO\"}", "logLevel"},
      {"{" TU_PV ":\"2026-07-28\"," TU_CC ":{}," LL ":\"\"}", "logLevel"},
      {"{" TU_PV ":\"2026-07-28\"," TU_CC ":{}," LL ":3}", "logLevel"},
      {"{" TU_PV ":\"2026-07-28\"," TU_CC ":{}," LL ":null}", "logLevel"},
  };
  for (size_t m = 0; m < TU_COUNT(methods); m++) {
    for (size_t i = 0; i < TU_COUNT(bad); i++) {
      char *msg = strcmp(methods[m], "tools/call") == 0
                      ? tu_mcall(5, "run", "{}", bad[i].meta, NULL, NULL)
                      : tu_mreq(5, methods[m], bad[i].meta, NULL);
      cJSON *r = tu_ask(&P, msg);
      tu_assert_error(r, -32602, bad[i].needle);
      tu_assert_json(r, "{\"id\":5}");
      cJSON_Delete(r);
    }
  }
  ck_assert_int_eq(g_runs, 0);

  /* Every valid log level is accepted. */
  static const char *const levels[] = {"debug",   "info",     "notice",
                                       "warning", "error",    "critical",
                                       "alert",   "emergency"};
  for (size_t i = 0; i < TU_COUNT(levels); i++) {
    char *meta = tu_text(
        "{" TU_PV ":\"2026-07-28\"," TU_CC ":{}," LL ":\"%s\"}", levels[i]);
    cJSON *r = tu_ask(&P, tu_mreq(6, "tools/list", meta, NULL));
    tu_assert_json(r, "{\"result\":{\"resultType\":\"complete\"}}");
    cJSON_Delete(r);
    free(meta);
  }

  /* Capabilities come from this request only: not from an earlier request
   * on the same connection... */
  g_fn = h_confirm;
  cJSON *r = tu_ask(&P, tu_mcall(7, "run", "{}", TU_META_ELICIT, NULL, NULL));
  tu_assert_json(r, "{\"result\":{\"resultType\":\"input_required\"}}");
  cJSON_Delete(r);
  r = tu_ask(&P, tu_mcall(8, "run", "{}", TU_META_NONE, NULL, NULL));
  tu_assert_error(r, -32021, NULL);
  ck_assert_int_eq(g_req_rc, MCP_ECAPABILITY);
  cJSON_Delete(r);
  r = tu_ask(&P, tu_mcall(9, "run", "{}", TU_META_ELICIT, NULL, NULL));
  tu_assert_json(r, "{\"result\":{\"resultType\":\"input_required\"}}");
  cJSON_Delete(r);
  ck_assert_int_eq(g_runs, 3);

  /* ... nor from a legacy initialize on the same session, in either
   * direction. */
  tu_peer L;
  tu_peer_open_with(&L, srv, &ALICE, inspect);
  tu_legacy_init(&L, "2025-11-25", "{\"elicitation\":{}}");
  r = tu_ask(&L, tu_mcall(10, "run", "{}", TU_META_NONE, NULL, NULL));
  tu_assert_error(r, -32021, NULL);
  cJSON_Delete(r);
  tu_peer_close(&L);
  tu_peer_open_with(&L, srv, &ALICE, inspect);
  tu_legacy_init(&L, "2025-11-25", "{}");
  r = tu_ask(&L, tu_mcall(11, "run", "{}", TU_META_ELICIT, NULL, NULL));
  tu_assert_json(r, "{\"result\":{\"resultType\":\"input_required\"}}");
  cJSON_Delete(r);
  ck_assert_uint_eq(mcp_session_pending(L.session), 0);
  tu_peer_close(&L);
}
END_TEST

/* ===========================================================================
 * digest §9 item 12: unsupported version
 * ======================================================================== */

START_TEST(must12_unsupported_version_32022_with_supported_and_requested) {
  cJSON *d = tu_ask(&P, tu_mreq(1, "server/discover", TU_META_NONE, NULL));
  const cJSON *advertised = tu_get(tu_result_of(d), "supportedVersions");
  static const char *const versions[] = {
      "2099-01-01", "2025-11-25", "2025-06-18", "2025-03-26",
      "2024-11-05", "",           "2026-07-29", "latest"};
  static const char *const methods[] = {"server/discover", "tools/list",
                                        "tools/call"};
  for (int legacy = 0; legacy < 2; legacy++) {
    if (legacy)
      tu_legacy_init(&P, "2025-11-25",
                     "{}"); /* same answer on such a session */
    for (size_t m = 0; m < TU_COUNT(methods); m++) {
      for (size_t i = 0; i < TU_COUNT(versions); i++) {
        char *meta = tu_text("{" TU_PV ":\"%s\"," TU_CC ":{}}", versions[i]);
        char *msg = strcmp(methods[m], "tools/call") == 0
                        ? tu_mcall(7, "run", "{}", meta, NULL, NULL)
                        : tu_mreq(7, methods[m], meta, NULL);
        cJSON *r = tu_ask(&P, msg);
        free(meta);
        tu_assert_error(r, -32022, NULL);
        const cJSON *data = tu_get(tu_get(r, "error"), "data");
        tu_assert_json(r, "{\"id\":7}");
        ck_assert_str_eq(tu_get(data, "requested")->valuestring, versions[i]);
        const cJSON *supported = tu_get(data, "supported");
        ck_assert(has_string(supported, "2026-07-28"));
        ck_assert(has_string(supported, "2025-11-25"));
        ck_assert(has_string(supported, "2025-06-18"));
        ck_assert(has_string(supported, "2025-03-26"));
        /* The same list server/discover gives. */
        ck_assert(cJSON_Compare(supported, advertised, 1));
        cJSON_Delete(r);
      }
    }
  }
  ck_assert_int_eq(g_runs, 0);
  /* The version is judged before the capabilities: a client that speaks
   * another version learns which ones to use. */
  cJSON *r =
      tu_ask(&P, tu_mreq(8, "tools/list", "{" TU_PV ":\"2099-01-01\"}", NULL));
  tu_assert_error(r, -32022, NULL);
  cJSON_Delete(r);
  cJSON_Delete(d);
}
END_TEST

/* ===========================================================================
 * digest §9 item 13: needed but undeclared client capability
 * ======================================================================== */

/* Calls h_need asking for kind/params with the client capabilities caps;
 * expects -32021 with exactly required as data.requiredCapabilities. */
#define EXPECT_MISSING(caps, kind, params, required)                           \
  expect_missing_at(__FILE__, __LINE__, (caps), (kind), (params), (required))
static void expect_missing_at(const char *file, int line, const char *caps,
                              mcp_input_kind kind, const char *params,
                              const char *required) {
  g_fn = h_need;
  g_kind = kind;
  g_params = params;
  g_req_rc = 0;
  char *meta = tu_text("{" TU_PV ":\"2026-07-28\"," TU_CC ":%s}", caps);
  cJSON *r = tu_ask(&P, tu_mcall(3, "run", "{}", meta, NULL, NULL));
  free(meta);
  ck_assert_msg(g_req_rc == MCP_ECAPABILITY, "%s:%d: request_input gave %d",
                file, line, g_req_rc);
  tu_assert_error_at(file, line, r, -32021, NULL);
  tu_assert_exact_at(
      file, line,
      tu_get(tu_get(tu_get(r, "error"), "data"), "requiredCapabilities"),
      required);
  cJSON_Delete(r);
  ck_assert_uint_eq(mcp_session_pending(P.session), 0);
}

START_TEST(must13_undeclared_capability_32021_with_required_capabilities) {
  EXPECT_MISSING("{}", MCP_INPUT_ELICITATION, FORM, "{\"elicitation\":{}}");
  EXPECT_MISSING("{\"elicitation\":true}", MCP_INPUT_ELICITATION, FORM,
                 "{\"elicitation\":{}}");
  EXPECT_MISSING("{\"sampling\":{},\"roots\":{}}", MCP_INPUT_ELICITATION, FORM,
                 "{\"elicitation\":{}}");
  /* URL mode needs elicitation.url. */
  EXPECT_MISSING("{\"elicitation\":{}}", MCP_INPUT_ELICITATION, URL_FORM,
                 "{\"elicitation\":{\"url\":{}}}");
  EXPECT_MISSING("{\"elicitation\":{\"form\":{}}}", MCP_INPUT_ELICITATION,
                 URL_FORM, "{\"elicitation\":{\"url\":{}}}");
  EXPECT_MISSING("{}", MCP_INPUT_ELICITATION, URL_FORM,
                 "{\"elicitation\":{\"url\":{}}}");
  /* A client that declared URL mode only lacks form mode: the data names
   * form mode, not the elicitation it already declared. */
  EXPECT_MISSING("{\"elicitation\":{\"url\":{}}}", MCP_INPUT_ELICITATION, FORM,
                 "{\"elicitation\":{\"form\":{}}}");
  EXPECT_MISSING("{}", MCP_INPUT_SAMPLING, SAMPLING, "{\"sampling\":{}}");
  EXPECT_MISSING("{\"elicitation\":{}}", MCP_INPUT_SAMPLING, SAMPLING,
                 "{\"sampling\":{}}");
  EXPECT_MISSING("{\"sampling\":{}}", MCP_INPUT_ROOTS, NULL, "{\"roots\":{}}");
  EXPECT_MISSING("{\"roots\":false}", MCP_INPUT_ROOTS, NULL, "{\"roots\":{}}");
  ck_assert_int_eq(g_server_requests, 0);

  /* Declared: the same requests are asked. */
  static const struct {
    const char *caps;
    mcp_input_kind kind;
    const char *params;
  } ok[] = {
      {"{\"elicitation\":{}}", MCP_INPUT_ELICITATION, FORM},
      {"{\"elicitation\":{\"form\":{}}}", MCP_INPUT_ELICITATION, FORM},
      {"{\"elicitation\":{\"url\":{}}}", MCP_INPUT_ELICITATION, URL_FORM},
      {"{\"sampling\":{}}", MCP_INPUT_SAMPLING, SAMPLING},
      {"{\"roots\":{}}", MCP_INPUT_ROOTS, NULL},
  };
  for (size_t i = 0; i < TU_COUNT(ok); i++) {
    g_fn = h_need;
    g_kind = ok[i].kind;
    g_params = ok[i].params;
    char *meta = tu_text("{" TU_PV ":\"2026-07-28\"," TU_CC ":%s}", ok[i].caps);
    cJSON *r = tu_ask(&P, tu_mcall(4, "run", "{}", meta, NULL, NULL));
    free(meta);
    ck_assert_int_eq(g_req_rc, 0);
    tu_assert_json(r, "{\"result\":{\"resultType\":\"input_required\","
                      "\"inputRequests\":{\"need\":\"<any>\"}}}");
    cJSON_Delete(r);
  }
}
END_TEST

static int h_two_missing(mcp_call *call) {
  int a = mcp_call_request_input(call, "s", MCP_INPUT_SAMPLING, SAMPLING);
  int b = mcp_call_request_input(call, "r", MCP_INPUT_ROOTS, NULL);
  ck_assert_int_eq(a, MCP_ECAPABILITY);
  ck_assert_int_eq(b, MCP_ECAPABILITY);
  return MCP_ECAPABILITY;
}

static int h_form_and_url(mcp_call *call) {
  int a = mcp_call_request_input(call, "f", MCP_INPUT_ELICITATION, FORM);
  int b = mcp_call_request_input(call, "u", MCP_INPUT_ELICITATION, URL_FORM);
  return a ? a : b ? b : MCP_INPUT_REQUIRED;
}

/* One kind declared, one not: the declared one is still refused as a
 * whole round only if the handler gives up; asking what it may works. */
static int h_partial(mcp_call *call) {
  int a = mcp_call_request_input(call, "s", MCP_INPUT_SAMPLING, SAMPLING);
  int b = mcp_call_request_input(call, "r", MCP_INPUT_ROOTS, NULL);
  ck_assert_int_eq(a, MCP_ECAPABILITY);
  ck_assert_int_eq(b, 0);
  return MCP_INPUT_REQUIRED;
}

START_TEST(must13_several_missing_capabilities_named_together) {
  g_fn = h_two_missing;
  cJSON *r = tu_ask(&P, tu_mcall(1, "run", "{}", TU_META_NONE, NULL, NULL));
  tu_assert_error(r, -32021, "sampling");
  tu_assert_exact(
      tu_get(tu_get(tu_get(r, "error"), "data"), "requiredCapabilities"),
      "{\"sampling\":{},\"roots\":{}}");
  cJSON_Delete(r);
  /* Form and URL mode both missing: the client needs both modes. */
  g_fn = h_form_and_url;
  r = tu_ask(&P, tu_mcall(2, "run", "{}", TU_META_NONE, NULL, NULL));
  tu_assert_error(r, -32021, NULL);
  tu_assert_exact(
      tu_get(tu_get(tu_get(r, "error"), "data"), "requiredCapabilities"),
      "{\"elicitation\":{\"form\":{},\"url\":{}}}");
  cJSON_Delete(r);
  /* inputRequests hold only what the client declared. */
  g_fn = h_partial;
  r = tu_ask(&P,
             tu_mcall(3, "run", "{}", TU_META("{\"roots\":{}}"), NULL, NULL));
  tu_assert_json(r, "{\"result\":{\"resultType\":\"input_required\","
                    "\"inputRequests\":{\"r\":{\"method\":\"roots/list\"},"
                    "\"s\":\"<absent>\"}}}");
  cJSON_Delete(r);
  /* A handler may do without what it cannot ask for. */
  g_fn = h_do_without;
  r = tu_ask(&P, tu_mcall(4, "run", "{}", TU_META_NONE, NULL, NULL));
  ck_assert_int_eq(g_req_rc, MCP_ECAPABILITY);
  tu_assert_json(r, "{\"result\":{\"resultType\":\"complete\",\"content\":[{"
                    "\"type\":\"text\",\"text\":\"did without\"}],"
                    "\"isError\":\"<absent>\"}}");
  cJSON_Delete(r);
}
END_TEST

/* In the legacy era the same handler's refusal is a tool error naming the
 * capability, and nothing is asked of the client. */
START_TEST(legacy_missing_capability_is_tool_error) {
  tu_legacy_init(&P, "2025-11-25", "{\"sampling\":{}}");
  g_fn = h_need;
  g_kind = MCP_INPUT_ELICITATION;
  g_params = FORM;
  cJSON *r = tu_ask(&P, tu_mcall(1, "run", "{}", NULL, NULL, NULL));
  ck_assert_int_eq(g_req_rc, MCP_ECAPABILITY);
  tu_assert_json(r, "{\"id\":1,\"error\":\"<absent>\",\"result\":{"
                    "\"isError\":true,\"resultType\":\"<absent>\",\"_meta\":"
                    "\"<absent>\",\"content\":[{\"type\":\"text\",\"text\":"
                    "\"<any>\"}]}}");
  const char *t =
      tu_get(tu_get(tu_result_of(r), "content")->child, "text")->valuestring;
  ck_assert_ptr_nonnull(strstr(t, "elicitation"));
  cJSON_Delete(r);
  g_kind = MCP_INPUT_ROOTS;
  g_params = NULL;
  r = tu_ask(&P, tu_mcall(2, "run", "{}", NULL, NULL, NULL));
  t = tu_get(tu_get(tu_result_of(r), "content")->child, "text")->valuestring;
  ck_assert_ptr_nonnull(strstr(t, "roots"));
  cJSON_Delete(r);
  ck_assert_int_eq(g_server_requests, 0);
  ck_assert_uint_eq(mcp_session_pending(P.session), 0);
}
END_TEST

/* ===========================================================================
 * digest §9 item 14: resultType and serverInfo on every result
 * ======================================================================== */

static int h_rich(mcp_call *call) {
  mcp_result_structured(call, "{\"a\":1}");
  return mcp_result_error(call, "it failed");
}

#define MODERN_RESULT(type)                                                    \
  "{\"error\":\"<absent>\",\"result\":{\"resultType\":\"" type "\","           \
  "\"_meta\":{\"" SI "\":{\"name\":\"srv\",\"version\":\"1.2.3\"}}}}"
#define LEGACY_RESULT                                                          \
  "{\"error\":\"<absent>\",\"result\":{\"resultType\":\"<absent>\","           \
  "\"_meta\":\"<absent>\"}}"

START_TEST(must14_result_type_and_server_info_on_every_result) {
  cJSON *r = tu_ask(&P, tu_mreq(1, "server/discover", TU_META_NONE, NULL));
  tu_assert_json(r, MODERN_RESULT("complete"));
  cJSON_Delete(r);
  r = tu_ask(&P, tu_mreq(2, "tools/list", TU_META_NONE, NULL));
  tu_assert_json(r, MODERN_RESULT("complete"));
  cJSON_Delete(r);
  r = tu_ask(&P, tu_mcall(3, "run", "{}", TU_META_NONE, NULL, NULL));
  tu_assert_json(r, MODERN_RESULT("complete"));
  tu_assert_json(r, "{\"result\":{\"content\":[{\"type\":\"text\",\"text\":"
                    "\"ok\"}]}}");
  cJSON_Delete(r);
  /* A tool error (arguments failing the schema) is a result too. */
  r = tu_ask(&P,
             tu_mcall(4, "typed", "{\"n\":\"x\"}", TU_META_NONE, NULL, NULL));
  tu_assert_json(r, MODERN_RESULT("complete"));
  tu_assert_json(r, "{\"result\":{\"isError\":true}}");
  cJSON_Delete(r);
  /* A handler's own tool error and structured content. */
  g_fn = h_rich;
  r = tu_ask(&P, tu_mcall(5, "run", NULL, TU_META_NONE, NULL, NULL));
  tu_assert_json(r, MODERN_RESULT("complete"));
  tu_assert_json(r, "{\"result\":{\"isError\":true,\"structuredContent\":{"
                    "\"a\":1}}}");
  cJSON_Delete(r);
  g_fn = h_confirm;
  r = tu_ask(&P, tu_mcall(6, "run", "{}", TU_META_ELICIT, NULL, NULL));
  tu_assert_json(r, MODERN_RESULT("input_required"));
  cJSON_Delete(r);
  /* Errors carry no result at all. */
  r = tu_ask(&P, tu_mcall(7, "nope", "{}", TU_META_NONE, NULL, NULL));
  tu_assert_error(r, -32602, "nope");
  cJSON_Delete(r);
  r = tu_ask(&P, tu_mcall(8, "secret", "{}", TU_META_NONE, NULL, NULL));
  tu_assert_error(r, MCP_RPC_FORBIDDEN, "admin");
  cJSON_Delete(r);

  /* Legacy replies on the same session have neither. */
  tu_legacy_init(&P, "2025-11-25", "{}");
  g_fn = NULL;
  r = tu_ask(&P, strdup("{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"tools/"
                        "list\"}"));
  tu_assert_json(r, LEGACY_RESULT);
  tu_assert_json(r, "{\"result\":{\"ttlMs\":\"<absent>\",\"cacheScope\":"
                    "\"<absent>\"}}");
  cJSON_Delete(r);
  r = tu_ask(&P, tu_mcall(10, "run", "{}", NULL, NULL, NULL));
  tu_assert_json(r, LEGACY_RESULT);
  cJSON_Delete(r);
  r = tu_ask(&P, tu_mcall(11, "typed", "{}", NULL, NULL, NULL));
  tu_assert_json(r, LEGACY_RESULT);
  cJSON_Delete(r);
  r = tu_ask(&P, strdup("{\"jsonrpc\":\"2.0\",\"id\":12,\"method\":\"ping\"}"));
  tu_assert_exact(tu_result_of(r), "{}");
  cJSON_Delete(r);
}
END_TEST

/* ===========================================================================
 * digest §9 item 15: no server-to-client requests in the modern era
 * ======================================================================== */

/* Asks for one of each kind in one round; with answers, reports them. */
static int h_everything(mcp_call *call) {
  const cJSON *f = mcp_call_input(call, "form");
  if (f) {
    mcp_call_log(call, MCP_LOG_WARNING, "answered");
    mcp_call_progress(call, 1, 1, "done");
    return mcp_result_text(call, "answered");
  }
  int rc = mcp_call_request_input(call, "form", MCP_INPUT_ELICITATION, FORM);
  if (!rc)
    rc = mcp_call_request_input(call, "url", MCP_INPUT_ELICITATION, URL_FORM);
  if (!rc)
    rc = mcp_call_request_input(call, "model", MCP_INPUT_SAMPLING, SAMPLING);
  if (!rc)
    rc = mcp_call_request_input(call, "roots", MCP_INPUT_ROOTS, NULL);
  return rc ? rc : MCP_INPUT_REQUIRED;
}

/* Every captured message is a response (id, result or error, no method) or
 * a notification (method, no id). */
static void assert_no_requests(const tu_peer *p) {
  for (size_t i = 0; i < p->nout; i++) {
    cJSON *m = tu_msg(p, i);
    ck_assert_ptr_nonnull(m);
    bool method = tu_get(m, "method") != NULL, id = tu_get(m, "id") != NULL;
    ck_assert_msg(method != id, "neither response nor notification: %s",
                  p->out[i]);
    if (id)
      ck_assert_msg((tu_get(m, "result") != NULL) !=
                        (tu_get(m, "error") != NULL),
                    "%s", p->out[i]);
    cJSON_Delete(m);
  }
}

static void modern_flows(tu_peer *p) {
  static const char meta[] = "{" TU_PV ":\"2026-07-28\"," TU_CC
                             ":{\"elicitation\":{\"form\":{},\"url\":{}"
                             "},\"sampling\":{},\"roots\":{}}," LL
                             ":\"debug\",\"progressToken\":\"p\"}";
  tu_clear(p);
  ck_assert_int_eq(
      tu_send_free(p, tu_mreq(1, "server/discover", META_ALL, NULL)), 0);
  ck_assert_int_eq(tu_send_free(p, tu_mreq(2, "tools/list", META_ALL, NULL)),
                   0);
  g_fn = h_everything;
  cJSON *r = tu_ask(p, tu_mcall(3, "run", "{\"a\":1}", meta, NULL, NULL));
  tu_assert_json(
      r, "{\"result\":{\"resultType\":\"input_required\",\"inputRequests\":{"
         "\"form\":{\"method\":\"elicitation/create\"},\"url\":{\"method\":"
         "\"elicitation/create\"},\"model\":{\"method\":\"sampling/"
         "createMessage\"},\"roots\":{\"method\":\"roots/list\"}}}}");
  ck_assert_uint_eq(mcp_session_pending(p->session), 0); /* nothing parked */
  char *st = state_of(r);
  cJSON_Delete(r);
  char *q = quote(st);
  tu_clear(p);
  ck_assert_int_eq(
      tu_send_free(
          p, tu_mcall(4, "run", "{\"a\":1}", meta, q,
                      "{\"form\":{\"action\":\"accept\",\"content\":{\"ok\":"
                      "true}},\"url\":{\"action\":\"accept\"},\"model\":{"
                      "\"role\":\"assistant\",\"content\":{\"type\":\"text\","
                      "\"text\":\"hi\"},\"model\":\"m\"},\"roots\":{\"roots\":"
                      "[]}}")),
      0);
  ck_assert_uint_eq(p->nout, 3); /* log, progress, reply */
  tu_assert_msg(p, 2, "{\"id\":4,\"result\":{\"resultType\":\"complete\"}}");
  assert_no_requests(p);
  free(q);
  free(st);
  ck_assert_uint_eq(mcp_session_pending(p->session), 0);
}

START_TEST(must15_no_server_requests_in_modern_era) {
  /* On a fresh session... */
  modern_flows(&P);
  /* ... and on one that also has a legacy handshake in which the client
   * declared every capability: modern calls still never send requests. */
  tu_peer L;
  tu_peer_open_with(&L, srv, &ALICE, inspect);
  tu_legacy_init(&L, "2025-11-25",
                 "{\"elicitation\":{},\"sampling\":{},\"roots\":{}}");
  modern_flows(&L);
  tu_peer_close(&L);
  ck_assert_int_eq(g_server_requests, 0);
  /* Input is asked for only from tools/call: discover and list are always
   * complete. */
  cJSON *r = tu_ask(&P, tu_mreq(5, "server/discover", META_ALL, NULL));
  tu_assert_json(r, "{\"result\":{\"resultType\":\"complete\"}}");
  cJSON_Delete(r);
  r = tu_ask(&P, tu_mreq(6, "tools/list", META_ALL, NULL));
  tu_assert_json(r, "{\"result\":{\"resultType\":\"complete\"}}");
  cJSON_Delete(r);
}
END_TEST

/* ===========================================================================
 * digest §9 item 16: requestState integrity and binding; inputResponses
 * ======================================================================== */

START_TEST(must16_request_state_round_trip) {
  g_fn = h_confirm;
  cJSON *r = tu_ask(&P, tu_mcall(1, "run", "{\"file\":\"a.txt\"}",
                                 TU_META_ELICIT, NULL, NULL));
  ck_assert_int_eq(g_runs, 1);
  ck_assert_str_eq(g_last_state, "(null)");
  ck_assert_str_eq(g_last_confirm, "(null)");
  tu_assert_json(r, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{"
                    "\"resultType\":\"input_required\",\"requestState\":"
                    "\"<any>\",\"ttlMs\":\"<absent>\",\"cacheScope\":"
                    "\"<absent>\",\"content\":\"<absent>\",\"isError\":"
                    "\"<absent>\"}}");
  char *expected = tu_text("{\"confirm\":{\"method\":\"elicitation/create\","
                           "\"params\":%s}}",
                           FORM);
  tu_assert_exact(tu_get(tu_result_of(r), "inputRequests"), expected);
  free(expected);
  char *st = state_of(r);
  cJSON_Delete(r);
  /* The token is base64url(payload) "." base64url(32-byte MAC). */
  const char *dot = strchr(st, '.');
  ck_assert_ptr_nonnull(dot);
  ck_assert_uint_eq(strlen(dot + 1), 43);
  ck_assert_ptr_null(strchr(dot + 1, '.'));

  /* The retry runs the handler with the answer and the kept state. */
  r = retry(&P, 2, "run", "{\"file\":\"a.txt\"}", st,
            "{\"confirm\":{\"action\":\"accept\",\"content\":{\"ok\":true}}}");
  ck_assert_int_eq(g_runs, 2);
  ck_assert_str_eq(g_last_state, "asked-once");
  ck_assert_str_eq(g_last_confirm,
                   "{\"action\":\"accept\",\"content\":{\"ok\":true}}");
  tu_assert_json(r, "{\"id\":2,\"result\":{\"resultType\":\"complete\","
                    "\"content\":[{\"type\":\"text\",\"text\":\"deleted\"}]}}");
  cJSON_Delete(r);
  /* Stateless: the same token works again, from another connection of the
   * same caller (nothing is bound to a connection). */
  tu_peer A2;
  tu_peer_open_with(&A2, srv, &ALICE, inspect);
  r = retry(&A2, 3, "run", "{\"file\":\"a.txt\"}", st,
            "{\"confirm\":{\"action\":\"decline\"}}");
  tu_assert_json(r, "{\"result\":{\"content\":[{\"text\":\"kept\"}]}}");
  cJSON_Delete(r);
  tu_peer_close(&A2);
  ck_assert_int_eq(g_runs, 3);
  free(st);
}
END_TEST

START_TEST(must16_tampered_request_state_refused_before_handler) {
  g_fn = h_confirm;
  char *st = obtain_state(&P, "run", "{\"x\":1}");
  char *other = obtain_state(&P, "run", "{\"x\":2}");
  ck_assert_int_eq(g_runs, 2);
  size_t n = strlen(st);
  size_t dot = (size_t)(strchr(st, '.') - st);
  size_t odot = (size_t)(strchr(other, '.') - other);
  char *variants[32];
  size_t nv = 0;
  /* One character of the payload part changed. */
  for (size_t at = 0; at < dot; at += dot / 4 + 1) {
    char *v = strdup(st);
    v[at] = v[at] == 'A' ? 'B' : 'A';
    variants[nv++] = v;
  }
  /* One character of the MAC part changed (first, middle, last). */
  static const size_t mac_at[] = {1, 20, 43};
  for (size_t i = 0; i < TU_COUNT(mac_at); i++) {
    char *v = strdup(st);
    v[dot + mac_at[i]] = v[dot + mac_at[i]] == 'A' ? 'Q' : 'A';
    variants[nv++] = v;
  }
  variants[nv++] = strndup(st, n - 1);          /* truncated by one */
  variants[nv++] = strndup(st, n - 4);          /* MAC 4 characters short */
  variants[nv++] = strndup(st, dot + 1);        /* no MAC at all */
  variants[nv++] = strndup(st, dot);            /* no dot, no MAC */
  variants[nv++] = strdup(st + dot);            /* no payload */
  variants[nv++] = tu_text("%s%s", st, "AAAA"); /* MAC too long */
  variants[nv++] = tu_text("%s.%s", st, "x");   /* a third part */
  variants[nv++] = tu_text("%.*s%s", (int)dot, st, st + dot + 1); /* dot gone */
  variants[nv++] = tu_text("%s.%.*s", st + dot + 1, (int)dot, st); /* swapped */
  /* The payload of one token with the MAC of another. */
  variants[nv++] = tu_text("%.*s%s", (int)dot, st, other + odot);
  variants[nv++] = strdup("");
  variants[nv++] = strdup(".");
  variants[nv++] = strdup("not a token");
  ck_assert_uint_le(nv, TU_COUNT(variants));
  for (size_t i = 0; i < nv; i++) {
    ck_assert_ptr_nonnull(variants[i]);
    cJSON *r = retry(&P, 10, "run", "{\"x\":1}", variants[i],
                     "{\"confirm\":{\"action\":\"accept\"}}");
    tu_assert_error(r, -32602, "requestState");
    cJSON_Delete(r);
    free(variants[i]);
  }
  /* Not a string at all. */
  static const char *const nonstrings[] = {"5", "null", "true", "{}",
                                           "[\"x\"]"};
  for (size_t i = 0; i < TU_COUNT(nonstrings); i++) {
    cJSON *r = tu_ask(&P, tu_mcall(11, "run", "{\"x\":1}", TU_META_ELICIT,
                                   nonstrings[i],
                                   "{\"confirm\":{\"action\":\"accept\"}}"));
    tu_assert_error(r, -32602, "requestState");
    cJSON_Delete(r);
    r = tu_ask(&P, tu_mcall(12, "run", "{\"x\":1}", TU_META_ELICIT,
                            nonstrings[i], NULL));
    tu_assert_error(r, -32602, "requestState");
    cJSON_Delete(r);
  }
  ck_assert_int_eq(g_runs, 2); /* the handler never ran */
  ck_assert_uint_eq(mcp_session_pending(P.session), 0);
  /* The genuine token still works. */
  cJSON *r = retry(&P, 13, "run", "{\"x\":1}", st,
                   "{\"confirm\":{\"action\":\"accept\"}}");
  tu_assert_json(r, "{\"result\":{\"resultType\":\"complete\"}}");
  cJSON_Delete(r);
  ck_assert_int_eq(g_runs, 3);
  free(st);
  free(other);
}
END_TEST

/* Retries with a state that must be refused as another call's. */
#define EXPECT_MISMATCH(peer, name, args, token)                               \
  do {                                                                         \
    int runs_ = g_runs;                                                        \
    cJSON *r_ = retry((peer), 20, (name), (args), (token),                     \
                      "{\"confirm\":{\"action\":\"accept\"}}");                \
    tu_assert_error(r_, -32602, "requestState");                               \
    cJSON_Delete(r_);                                                          \
    ck_assert_int_eq(g_runs, runs_);                                           \
  } while (0)

#define EXPECT_ACCEPTED(peer, name, args, token)                               \
  do {                                                                         \
    int runs_ = g_runs;                                                        \
    cJSON *r_ = retry((peer), 21, (name), (args), (token),                     \
                      "{\"confirm\":{\"action\":\"accept\"}}");                \
    tu_assert_json(r_, "{\"result\":{\"resultType\":\"complete\"}}");          \
    cJSON_Delete(r_);                                                          \
    ck_assert_int_eq(g_runs, runs_ + 1);                                       \
    ck_assert_str_eq(g_last_state, "asked-once");                              \
  } while (0)

START_TEST(must16_request_state_bound_to_arguments) {
  g_fn = h_confirm;
  char *st =
      obtain_state(&P, "run", "{\"a\":1,\"b\":[1,\"two\",{\"c\":null}]}");
  EXPECT_MISMATCH(&P, "run", "{\"a\":2,\"b\":[1,\"two\",{\"c\":null}]}", st);
  EXPECT_MISMATCH(&P, "run", "{\"a\":1,\"b\":[\"two\",1,{\"c\":null}]}", st);
  EXPECT_MISMATCH(&P, "run", "{\"a\":1,\"b\":[1,\"two\",{\"c\":0}]}", st);
  EXPECT_MISMATCH(&P, "run", "{\"a\":1,\"b\":[1,\"two\",{\"c\":null}],\"d\":1}",
                  st);
  EXPECT_MISMATCH(&P, "run", "{\"a\":1}", st);
  EXPECT_MISMATCH(&P, "run", "{\"a\":\"1\",\"b\":[1,\"two\",{\"c\":null}]}",
                  st);
  EXPECT_MISMATCH(&P, "run", "{}", st);
  EXPECT_MISMATCH(&P, "run", NULL, st);
  /* The same arguments written differently are the same arguments. */
  EXPECT_ACCEPTED(&P, "run", "{\"b\":[1,\"two\",{\"c\":null}],\"a\":1}", st);
  EXPECT_ACCEPTED(&P, "run", "{\"a\":1.0,\"b\":[1e0,\"two\",{\"c\":null}]}",
                  st);
  EXPECT_ACCEPTED(
      &P, "run", "{ \"a\" : 1 , \"b\" : [ 1 , \"t\\u0077o\" , {\"c\":null} ] }",
      st);
  free(st);
  /* Absent arguments are the empty object. */
  st = obtain_state(&P, "run", NULL);
  EXPECT_ACCEPTED(&P, "run", "{}", st);
  EXPECT_MISMATCH(&P, "run", "{\"x\":null}", st);
  free(st);
  /* Integers the handler reads exactly (mcp_call_arg_int) must not be
   * confused where doubles would round them together. */
  st = obtain_state(&P, "run", "{\"n\":9007199254740992}");
  EXPECT_MISMATCH(&P, "run", "{\"n\":9007199254740993}", st);
  EXPECT_ACCEPTED(&P, "run", "{\"n\":9007199254740992}", st);
  free(st);
  st = obtain_state(&P, "run", "{\"n\":-9223372036854775807}");
  EXPECT_MISMATCH(&P, "run", "{\"n\":-9223372036854775806}", st);
  free(st);
  /* Strings are delimited: moving a character from one string to the next,
   * or adding an empty member, changes the digest. */
  st = obtain_state(&P, "run", "{\"s\":\"abc\",\"t\":\"\"}");
  EXPECT_MISMATCH(&P, "run", "{\"s\":\"ab\",\"t\":\"c\"}", st);
  EXPECT_MISMATCH(&P, "run", "{\"s\":\"abc\",\"t\":\"\",\"\":\"\"}", st);
  free(st);
}
END_TEST

START_TEST(must16_request_state_bound_to_tool_and_principal) {
  g_fn = h_confirm;
  char *st = obtain_state(&P, "run", "{\"x\":1}");
  /* Another tool with the same arguments. */
  EXPECT_MISMATCH(&P, "other", "{\"x\":1}", st);
  /* Another caller (a second connection with another subject)... */
  tu_peer Bob;
  tu_peer_open_with(&Bob, srv, &BOB, inspect);
  EXPECT_MISMATCH(&Bob, "run", "{\"x\":1}", st);
  /* ... an anonymous one... */
  tu_peer Anon;
  tu_peer_open_with(&Anon, srv, NULL, inspect);
  EXPECT_MISMATCH(&Anon, "run", "{\"x\":1}", st);
  /* ... and the other way round: an anonymous caller's state is not
   * alice's, nor bob's. */
  char *anon = obtain_state(&Anon, "run", "{\"x\":1}");
  EXPECT_MISMATCH(&P, "run", "{\"x\":1}", anon);
  EXPECT_MISMATCH(&Bob, "run", "{\"x\":1}", anon);
  EXPECT_ACCEPTED(&Anon, "run", "{\"x\":1}", anon);
  /* A subject that only starts like alice's. */
  static const mcp_principal ALICE2 = {.subject = "alice2"};
  tu_peer A2;
  tu_peer_open_with(&A2, srv, &ALICE2, inspect);
  EXPECT_MISMATCH(&A2, "run", "{\"x\":1}", st);
  tu_peer_close(&A2);
  tu_peer_close(&Anon);
  tu_peer_close(&Bob);
  EXPECT_ACCEPTED(&P, "run", "{\"x\":1}", st);
  free(anon);
  free(st);
  /* A state minted for "other" does not open "run". */
  st = obtain_state(&P, "other", "{\"x\":1}");
  ck_assert_str_eq(g_last_tool, "other");
  EXPECT_MISMATCH(&P, "run", "{\"x\":1}", st);
  EXPECT_ACCEPTED(&P, "other", "{\"x\":1}", st);
  free(st);
}
END_TEST

START_TEST(must16_foreign_request_state_refused) {
  g_fn = h_confirm;
  mcp_server *srv2 = NULL;
  ck_assert_int_eq(mcp_server_new(&INFO, &srv2), 0);
  add_tools(srv2);
  tu_peer F;
  tu_peer_open_with(&F, srv2, &ALICE, inspect);
  /* Same tool, same arguments, same caller: only the key differs. */
  char *foreign = obtain_state(&F, "run", "{\"x\":1}");
  EXPECT_MISMATCH(&P, "run", "{\"x\":1}", foreign);
  char *ours = obtain_state(&P, "run", "{\"x\":1}");
  EXPECT_MISMATCH(&F, "run", "{\"x\":1}", ours);
  free(foreign);
  free(ours);

  /* With one secret, any process of a deployment accepts the others'
   * tokens; a key differing in one byte does not. */
  unsigned char key[64];
  for (size_t i = 0; i < sizeof key; i++)
    key[i] = (unsigned char)(i * 31 + 7);
  ck_assert_int_eq(mcp_server_set_state_key(srv, key, sizeof key), 0);
  ck_assert_int_eq(mcp_server_set_state_key(srv2, key, sizeof key), 0);
  foreign = obtain_state(&F, "run", "{\"x\":1}");
  EXPECT_ACCEPTED(&P, "run", "{\"x\":1}", foreign);
  ours = obtain_state(&P, "run", "{\"x\":1}");
  EXPECT_ACCEPTED(&F, "run", "{\"x\":1}", ours);
  key[63] ^= 1;
  ck_assert_int_eq(mcp_server_set_state_key(srv2, key, sizeof key), 0);
  EXPECT_MISMATCH(&F, "run", "{\"x\":1}", ours);
  free(foreign);
  free(ours);
  /* Exactly 32 bytes works the same way. */
  ck_assert_int_eq(mcp_server_set_state_key(srv, key, 32), 0);
  ck_assert_int_eq(mcp_server_set_state_key(srv2, key, 32), 0);
  foreign = obtain_state(&F, "run", "{\"x\":1}");
  EXPECT_ACCEPTED(&P, "run", "{\"x\":1}", foreign);
  free(foreign);
  tu_peer_close(&F);
  mcp_server_free(srv2);
}
END_TEST

START_TEST(must16_state_key_shorter_than_32_bytes_rejected) {
  g_fn = h_confirm;
  unsigned char key[32] = {1, 2, 3};
  char *st = obtain_state(&P, "run", "{}");
  ck_assert_int_eq(mcp_server_set_state_key(srv, key, 31), MCP_EINVAL);
  ck_assert_ptr_nonnull(strstr(mcp_server_errmsg(srv), "32"));
  ck_assert_int_eq(mcp_server_set_state_key(srv, key, 0), MCP_EINVAL);
  ck_assert_int_eq(mcp_server_set_state_key(srv, NULL, 32), MCP_EINVAL);
  ck_assert_int_eq(mcp_server_set_state_key(NULL, key, 32), MCP_EINVAL);
  /* A refused key changes nothing: the old token still verifies. */
  EXPECT_ACCEPTED(&P, "run", "{}", st);
  /* A new key invalidates tokens signed with the old one. */
  ck_assert_int_eq(mcp_server_set_state_key(srv, key, 32), 0);
  EXPECT_MISMATCH(&P, "run", "{}", st);
  free(st);
}
END_TEST

START_TEST(must16_expired_request_state_refused) {
  static const unsigned char key[32] = {
      0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0a,
      0x0b, 0x0c, 0x0d, 0x0e, 0x0f, 0x10, 0x11, 0x12, 0x13, 0x14, 0x15,
      0x16, 0x17, 0x18, 0x19, 0x1a, 0x1b, 0x1c, 0x1d, 0x1e, 0x1f};
  ck_assert_int_eq(mcp_server_set_state_key(srv, key, sizeof key), 0);
  g_fn = h_confirm;
  char *st = obtain_state(&P, "run", "{\"x\":1}");
  /* Re-signing the untouched payload with the known key gives the very
   * same token: the forgery below differs only in "exp". */
  long long exp = exp_of(st);
  char *same = forge(key, sizeof key, st, exp);
  ck_assert_str_eq(same, st);
  free(same);
  /* A correctly signed token whose time is up. */
  long long now = (long long)time(NULL);
  static const long long ago[] = {2, 60, 86400, 2000000000LL};
  for (size_t i = 0; i < TU_COUNT(ago); i++) {
    char *old = forge(key, sizeof key, st, now - ago[i]);
    int runs = g_runs;
    cJSON *r = retry(&P, 30, "run", "{\"x\":1}", old,
                     "{\"confirm\":{\"action\":\"accept\"}}");
    tu_assert_error(r, -32602, "expired");
    cJSON_Delete(r);
    ck_assert_int_eq(g_runs, runs);
    free(old);
  }
  /* The control: the same forgery with a future expiry is accepted, so the
   * refusals above are about time, not about the signature. */
  char *later = forge(key, sizeof key, st, now + 120);
  EXPECT_ACCEPTED(&P, "run", "{\"x\":1}", later);
  free(later);
  /* Signed with another key: not ours, whatever its expiry. */
  unsigned char wrong[32];
  memcpy(wrong, key, sizeof wrong);
  wrong[0] ^= 0x80;
  char *bad = forge(wrong, sizeof wrong, st, now + 120);
  EXPECT_MISMATCH(&P, "run", "{\"x\":1}", bad);
  free(bad);
  free(st);
}
END_TEST

START_TEST(must16_request_state_expiry_follows_input_ttl) {
  g_fn = h_confirm;
  long long before = (long long)time(NULL);
  char *st = obtain_state(&P, "run", "{}");
  long long after = (long long)time(NULL);
  long long exp = exp_of(st);
  ck_assert_int_ge(exp, before + 600); /* the default, 600 s */
  ck_assert_int_le(exp, after + 600);
  free(st);
  mcp_server_set_input_ttl(srv, 5);
  before = (long long)time(NULL);
  st = obtain_state(&P, "run", "{}");
  after = (long long)time(NULL);
  exp = exp_of(st);
  ck_assert_int_ge(exp, before + 5);
  ck_assert_int_le(exp, after + 5);
  EXPECT_ACCEPTED(&P, "run", "{}", st);
  free(st);
  /* The payload binds what the digest promises and nothing secret. */
  st = obtain_state(&P, "run", "{\"password\":\"hunter2\"}");
  char *p = payload_of(st);
  ck_assert_ptr_null(strstr(p, "hunter2"));
  cJSON *j = cJSON_Parse(p);
  tu_assert_json(j, "{\"tool\":\"run\",\"sub\":\"alice\",\"exp\":\"<any>\","
                    "\"args\":\"<any>\",\"keys\":{\"confirm\":"
                    "\"elicitation/create\"},\"state\":"
                    "\"asked-once\"}");
  cJSON_Delete(j);
  free(p);
  free(st);
}
END_TEST

START_TEST(must16_input_responses_validated) {
  g_fn = h_confirm;
  char *st = obtain_state(&P, "run", "{}");
  char *q = quote(st);
  int runs = g_runs;
  /* inputResponses without requestState: a first round with its answers,
   * taken when each has the shape of a result, refused otherwise. */
  cJSON *r = tu_ask(&P, tu_mcall(40, "run", "{}", TU_META_ELICIT, NULL,
                                 "{\"confirm\":{\"action\":\"accept\"}}"));
  tu_assert_json(r, "{\"result\":{\"resultType\":\"complete\"}}");
  cJSON_Delete(r);
  ck_assert_int_eq(g_runs, runs + 1);
  runs = g_runs;
  r = tu_ask(&P, tu_mcall(40, "run", "{}", TU_META_ELICIT, NULL,
                          "{\"confirm\":{\"action\":\"maybe\"}}"));
  tu_assert_error(r, -32602, "inputResponses");
  cJSON_Delete(r);
  r = tu_ask(&P, tu_mcall(40, "run", "{}", TU_META_ELICIT, NULL,
                          "{\"confirm\":12345}"));
  tu_assert_error(r, -32602, "inputResponses");
  cJSON_Delete(r);
  /* inputResponses not an object. */
  static const char *const not_objects[] = {"\"x\"", "[]", "null", "1"};
  for (size_t i = 0; i < TU_COUNT(not_objects); i++) {
    r = tu_ask(&P,
               tu_mcall(41, "run", "{}", TU_META_ELICIT, q, not_objects[i]));
    tu_assert_error(r, -32602, "inputResponses");
    cJSON_Delete(r);
  }
  /* An answer to a requested key that is not an object. */
  static const char *const bad_answers[] = {
      "{\"confirm\":\"yes\"}", "{\"confirm\":[]}", "{\"confirm\":true}",
      "{\"confirm\":null}", "{\"confirm\":3}",
      /* Objects, but not ElicitResults. */
      "{\"confirm\":{}}", "{\"confirm\":{\"action\":\"maybe\"}}",
      "{\"confirm\":{\"action\":\"accept\",\"content\":[]}}"};
  for (size_t i = 0; i < TU_COUNT(bad_answers); i++) {
    r = tu_ask(&P,
               tu_mcall(42, "run", "{}", TU_META_ELICIT, q, bad_answers[i]));
    tu_assert_error(r, -32602, "confirm");
    cJSON_Delete(r);
  }
  ck_assert_int_eq(g_runs, runs);
  /* Answers to keys that were not asked are ignored, whatever they are. */
  r = tu_ask(&P, tu_mcall(43, "run", "{}", TU_META_ELICIT, q,
                          "{\"bogus\":{\"action\":\"accept\"},\"other\":\"x\","
                          "\"confirm\":{\"action\":\"accept\"}}"));
  tu_assert_json(r, "{\"result\":{\"resultType\":\"complete\",\"content\":[{"
                    "\"text\":\"deleted\"}]}}");
  cJSON_Delete(r);
  ck_assert_int_eq(g_runs, runs + 1);
  ck_assert(!g_last_bogus);
  free(q);
  free(st);
}
END_TEST

START_TEST(must16_reask_instead_of_failing) {
  g_fn = h_confirm;
  char *st = obtain_state(&P, "run", "{}");
  char *q = quote(st);
  /* The answer is missing (no inputResponses, an empty one, or one for
   * another key): the handler sees NULL and asks again. */
  static const char *const missing[] = {NULL, "{}", "{\"bogus\":{}}"};
  for (size_t i = 0; i < TU_COUNT(missing); i++) {
    int runs = g_runs;
    cJSON *r =
        tu_ask(&P, tu_mcall(50, "run", "{}", TU_META_ELICIT, q, missing[i]));
    ck_assert_int_eq(g_runs, runs + 1);
    ck_assert_str_eq(g_last_confirm, "(null)");
    ck_assert_str_eq(g_last_state, "asked-once");
    tu_assert_json(r, "{\"id\":50,\"result\":{\"resultType\":"
                      "\"input_required\",\"inputRequests\":{\"confirm\":"
                      "\"<any>\"},\"requestState\":\"<any>\"}}");
    /* The fresh state works. */
    char *fresh = state_of(r);
    cJSON_Delete(r);
    r = retry(&P, 51, "run", "{}", fresh,
              "{\"confirm\":"
              "{\"action\":\"accept\"}}");
    tu_assert_json(r, "{\"result\":{\"content\":[{\"text\":\"deleted\"}]}}");
    cJSON_Delete(r);
    free(fresh);
  }
  free(q);
  free(st);
}
END_TEST

/* ===========================================================================
 * digest §9 item 17: ttlMs and cacheScope
 * ======================================================================== */

static void expect_cache(const cJSON *reply, long ttl, const char *scope) {
  char expected[200];
  snprintf(expected, sizeof expected,
           "{\"result\":{\"ttlMs\":%ld,\"cacheScope\":\"%s\"}}", ttl, scope);
  tu_assert_json(reply, expected);
}

/* Lists every page; checks ttl and scope on each; names into dst. */
static void list_all(tu_peer *p, long ttl, const char *scope, char *dst,
                     size_t n, int *pages) {
  dst[0] = '\0';
  *pages = 0;
  char *cursor = NULL;
  do {
    char *extra = cursor ? tu_text("\"cursor\":\"%s\"", cursor) : NULL;
    cJSON *r = tu_ask(p, tu_mreq(60, "tools/list", TU_META_NONE, extra));
    free(extra);
    free(cursor);
    cursor = NULL;
    expect_cache(r, ttl, scope);
    char names[256];
    tool_names(r, names, sizeof names);
    size_t k = strlen(dst);
    snprintf(dst + k, n - k, "%s%s", k && names[0] ? "," : "", names);
    const cJSON *next = tu_get(tu_result_of(r), "nextCursor");
    if (next)
      cursor = strdup(next->valuestring);
    cJSON_Delete(r);
    (*pages)++;
  } while (cursor);
}

START_TEST(must17_ttl_and_cache_scope_on_discover_and_lists) {
  char names[256];
  int pages;
  /* Defaults: stale at once (a changed list is never shown from a cache),
   * public. */
  cJSON *r = tu_ask(&P, tu_mreq(1, "server/discover", TU_META_NONE, NULL));
  expect_cache(r, 0, "public");
  cJSON_Delete(r);
  list_all(&P, 0, "public", names, sizeof names, &pages);
  ck_assert_str_eq(names, "run,other,secret,typed");
  /* Configured TTL, 0 included ("stale at once"), on every page. */
  static const unsigned ttls[] = {1234, 3600000, 0};
  mcp_server_set_page_size(srv, 1);
  for (size_t i = 0; i < TU_COUNT(ttls); i++) {
    mcp_server_set_list_ttl(srv, ttls[i]);
    r = tu_ask(&P, tu_mreq(2, "server/discover", TU_META_NONE, NULL));
    expect_cache(r, (long)ttls[i], "public");
    cJSON_Delete(r);
    list_all(&P, (long)ttls[i], "public", names, sizeof names, &pages);
    ck_assert_int_eq(pages, 4);
    ck_assert_str_eq(names, "run,other,secret,typed");
  }
  /* A list filtered for the caller is private, on every page, and leaves
   * out the tool alice may not call. */
  mcp_server_set_list_ttl(srv, 500);
  mcp_server_set_hide_forbidden(srv, true);
  list_all(&P, 500, "private", names, sizeof names, &pages);
  ck_assert_str_eq(names, "run,other,typed");
  mcp_server_set_page_size(srv, 0);
  list_all(&P, 500, "private", names, sizeof names, &pages);
  ck_assert_int_eq(pages, 1);
  ck_assert_str_eq(names, "run,other,typed");
  /* What is hidden is hidden at the call too: the answer an unknown tool
   * gets, so the call reveals nothing the list did not. */
  r = tu_ask(&P, tu_mcall(3, "secret", "{}", TU_META_NONE, NULL, NULL));
  tu_assert_exact(r, "{\"jsonrpc\":\"2.0\",\"id\":3,\"error\":{\"code\":"
                     "-32602,\"message\":\"Unknown tool: secret\"}}");
  cJSON_Delete(r);
  /* A caller holding the scope sees it, still privately. */
  static const char *const admin_scopes[] = {"admin", NULL};
  static const mcp_principal ROOT = {.subject = "root", .scopes = admin_scopes};
  tu_peer R;
  tu_peer_open_with(&R, srv, &ROOT, inspect);
  list_all(&R, 500, "private", names, sizeof names, &pages);
  ck_assert_str_eq(names, "run,other,secret,typed");
  tu_peer_close(&R);
  /* discover does not depend on the caller. */
  r = tu_ask(&P, tu_mreq(4, "server/discover", TU_META_NONE, NULL));
  expect_cache(r, 500, "public");
  cJSON_Delete(r);
  mcp_server_set_hide_forbidden(srv, false);
  list_all(&P, 500, "public", names, sizeof names, &pages);
  ck_assert_str_eq(names, "run,other,secret,typed");
  /* Not on call results, complete or input_required. */
  r = tu_ask(&P, tu_mcall(5, "run", "{}", TU_META_NONE, NULL, NULL));
  tu_assert_json(r, "{\"result\":{\"ttlMs\":\"<absent>\",\"cacheScope\":"
                    "\"<absent>\"}}");
  cJSON_Delete(r);
  g_fn = h_confirm;
  r = tu_ask(&P, tu_mcall(6, "run", "{}", TU_META_ELICIT, NULL, NULL));
  tu_assert_json(r, "{\"result\":{\"resultType\":\"input_required\","
                    "\"ttlMs\":\"<absent>\",\"cacheScope\":\"<absent>\"}}");
  cJSON_Delete(r);
  /* Nor on legacy lists. */
  tu_legacy_init(&P, "2025-11-25", "{}");
  r = tu_ask(&P, strdup("{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/"
                        "list\"}"));
  tu_assert_json(r, "{\"result\":{\"ttlMs\":\"<absent>\",\"cacheScope\":"
                    "\"<absent>\"}}");
  cJSON_Delete(r);
}
END_TEST

/* ===========================================================================
 * Dual era on one session
 * ======================================================================== */

START_TEST(dual_era_modern_requests_do_not_initialize) {
  cJSON *r = tu_ask(&P, tu_mreq(1, "server/discover", TU_META_NONE, NULL));
  tu_assert_json(r, MODERN_RESULT("complete"));
  cJSON_Delete(r);
  r = tu_ask(&P, tu_mreq(2, "tools/list", TU_META_NONE, NULL));
  tu_assert_json(r, MODERN_RESULT("complete"));
  cJSON_Delete(r);
  r = tu_ask(&P, tu_mcall(3, "run", "{}", TU_META_NONE, NULL, NULL));
  tu_assert_json(r, MODERN_RESULT("complete"));
  cJSON_Delete(r);
  ck_assert_ptr_null(mcp_session_protocol_version(P.session));
  /* The legacy era still needs its handshake. */
  r = tu_ask(&P, strdup("{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/"
                        "list\"}"));
  tu_assert_error(r, -32600, "not initialized");
  cJSON_Delete(r);
  r = tu_ask(&P, tu_mcall(5, "run", "{}", NULL, NULL, NULL));
  tu_assert_error(r, -32600, "not initialized");
  cJSON_Delete(r);
  /* _meta without the modern keys is a legacy request. */
  r = tu_ask(&P, tu_mcall(6, "run", "{}", "{\"progressToken\":1}", NULL, NULL));
  tu_assert_error(r, -32600, "not initialized");
  cJSON_Delete(r);
  ck_assert_int_eq(g_runs, 1);
  /* ... which then works, whatever came before. */
  tu_legacy_init(&P, "2025-06-18", "{}");
  ck_assert_str_eq(mcp_session_protocol_version(P.session), "2025-06-18");
  /* A modern request afterwards leaves the negotiated version alone. */
  r = tu_ask(&P, tu_mreq(7, "tools/list", TU_META_NONE, NULL));
  tu_assert_json(r, MODERN_RESULT("complete"));
  cJSON_Delete(r);
  ck_assert_str_eq(mcp_session_protocol_version(P.session), "2025-06-18");
  /* initialize carrying modern _meta is still the legacy handshake (and a
   * second one is refused). */
  r = tu_ask(&P,
             strdup("{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"initialize\","
                    "\"params\":{\"protocolVersion\":\"2025-11-25\","
                    "\"capabilities\":{},\"clientInfo\":{\"name\":\"c\"},"
                    "\"_meta\":" TU_META_NONE "}}"));
  tu_assert_error(r, -32600, "already initialized");
  cJSON_Delete(r);
}
END_TEST

START_TEST(dual_era_interleaved_on_one_session) {
  tu_peer F;
  tu_peer_open_with(&F, srv, &ALICE, inspect);
  cJSON *r =
      tu_ask(&F, strdup("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
                        "\"initialize\",\"params\":{\"protocolVersion\":"
                        "\"2025-11-25\",\"capabilities\":{},\"clientInfo\":"
                        "{\"name\":\"c\"},\"_meta\":" TU_META_NONE "}}"));
  tu_assert_json(r, "{\"result\":{\"protocolVersion\":\"2025-11-25\","
                    "\"resultType\":\"<absent>\",\"_meta\":\"<absent>\"}}");
  cJSON_Delete(r);
  tu_peer_close(&F);

  tu_legacy_init(&P, "2025-11-25", "{}");
  char legacy_names[256], modern_names[256];
  for (int round = 0; round < 3; round++) {
    r = tu_ask(&P,
               strdup("{\"jsonrpc\":\"2.0\",\"id\":\"l\",\"method\":\"tools/"
                      "list\"}"));
    tu_assert_json(r, LEGACY_RESULT);
    tool_names(r, legacy_names, sizeof legacy_names);
    cJSON_Delete(r);
    r = tu_ask(&P, tu_mreq(2, "tools/list", TU_META_NONE, NULL));
    tu_assert_json(r, MODERN_RESULT("complete"));
    tool_names(r, modern_names, sizeof modern_names);
    cJSON_Delete(r);
    /* One tool table, one deterministic order, in both eras. */
    ck_assert_str_eq(legacy_names, modern_names);
    r = tu_ask(&P, tu_mcall(3, "run", "{}", NULL, NULL, NULL));
    tu_assert_json(r, LEGACY_RESULT);
    tu_assert_json(r,
                   "{\"id\":3,\"result\":{\"content\":[{\"text\":\"ok\"}]}}");
    cJSON_Delete(r);
    r = tu_ask(&P, tu_mcall(4, "run", "{}", TU_META_NONE, NULL, NULL));
    tu_assert_json(r, MODERN_RESULT("complete"));
    tu_assert_json(r,
                   "{\"id\":4,\"result\":{\"content\":[{\"text\":\"ok\"}]}}");
    cJSON_Delete(r);
    /* The policy is shared too. */
    r = tu_ask(&P, tu_mcall(5, "secret", "{}", NULL, NULL, NULL));
    tu_assert_error(r, MCP_RPC_FORBIDDEN, NULL);
    cJSON_Delete(r);
    r = tu_ask(&P, tu_mcall(6, "secret", "{}", TU_META_NONE, NULL, NULL));
    tu_assert_error(r, MCP_RPC_FORBIDDEN, NULL);
    cJSON_Delete(r);
    if (round == 0) {
      ck_assert_str_eq(modern_names, "run,other,secret,typed");
      static const mcp_tool late = {.name = "late",
                                    .description = "Added while serving.",
                                    .annotations = TC_READ_ONLY,
                                    .handler = tool_handler};
      tu_clear(&P);
      ck_assert_int_eq(mcp_server_add_tool(srv, &late, NULL), 0);
      tu_assert_msg(&P, 0, "{\"method\":\"notifications/tools/list_changed\"}");
    } else if (round == 1) {
      ck_assert_str_eq(modern_names, "run,other,secret,typed,late");
      ck_assert_int_eq(mcp_server_remove_tool(srv, "other"), 0);
    } else {
      ck_assert_str_eq(modern_names, "run,secret,typed,late");
    }
  }
  ck_assert_int_eq(g_runs, 6);
  /* ping is legacy only. */
  r = tu_ask(&P, strdup("{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"ping\"}"));
  tu_assert_exact(tu_result_of(r), "{}");
  cJSON_Delete(r);
  r = tu_ask(&P, tu_mreq(8, "ping", TU_META_NONE, NULL));
  tu_assert_error(r, -32601, "ping");
  cJSON_Delete(r);
  /* And so is everything else the modern era removed or never had. */
  static const char *const gone[] = {"logging/setLevel", "initialize2",
                                     "resources/list", "tasks/list"};
  for (size_t i = 0; i < TU_COUNT(gone); i++) {
    r = tu_ask(&P, tu_mreq(9, gone[i], TU_META_NONE, NULL));
    tu_assert_error(r, -32601, gone[i]);
    cJSON_Delete(r);
  }
}
END_TEST

START_TEST(modern_ping_method_not_found_even_first) {
  cJSON *r = tu_ask(&P, tu_mreq(1, "ping", TU_META_NONE, NULL));
  tu_assert_error(r, -32601, NULL);
  cJSON_Delete(r);
  /* The version is still judged first. */
  r = tu_ask(
      &P, tu_mreq(2, "ping", "{" TU_PV ":\"2099-01-01\"," TU_CC ":{}}", NULL));
  tu_assert_error(r, -32022, NULL);
  cJSON_Delete(r);
}
END_TEST

START_TEST(deterministic_tool_order_in_both_eras) {
  /* Registration order, whatever the names; identical across requests,
   * pages and eras. */
  mcp_server *s = NULL;
  ck_assert_int_eq(mcp_server_new(&INFO, &s), 0);
  static const char *const order[] = {"zeta", "alpha", "mid", "Beta", "a.b"};
  for (size_t i = 0; i < TU_COUNT(order); i++) {
    mcp_tool t = TOOL_RUN;
    t.name = order[i];
    ck_assert_int_eq(mcp_server_add_tool(s, &t, NULL), 0);
  }
  tu_peer T;
  tu_peer_open_with(&T, s, NULL, inspect);
  char first[256], again[256];
  cJSON *r = tu_ask(&T, tu_mreq(1, "tools/list", TU_META_NONE, NULL));
  tool_names(r, first, sizeof first);
  cJSON_Delete(r);
  ck_assert_str_eq(first, "zeta,alpha,mid,Beta,a.b");
  int pages;
  mcp_server_set_page_size(s, 2);
  list_all(&T, 0, "public", again, sizeof again, &pages);
  ck_assert_str_eq(again, first);
  ck_assert_int_eq(pages, 3);
  tu_legacy_init(&T, "2025-11-25", "{}");
  mcp_server_set_page_size(s, 0);
  r = tu_ask(&T, strdup("{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/"
                        "list\"}"));
  tool_names(r, again, sizeof again);
  cJSON_Delete(r);
  ck_assert_str_eq(again, first);
  tu_peer_close(&T);
  mcp_server_free(s);
}
END_TEST

/* ===========================================================================
 * Input required: the handler API
 * ======================================================================== */

static int h_misuse(mcp_call *call) {
  char long_key[66];
  memset(long_key, 'k', 65);
  long_key[65] = '\0';
  ck_assert_int_eq(
      mcp_call_request_input(call, "", MCP_INPUT_ELICITATION, FORM),
      MCP_EINVAL);
  ck_assert_int_eq(
      mcp_call_request_input(call, NULL, MCP_INPUT_ELICITATION, FORM),
      MCP_EINVAL);
  ck_assert_int_eq(
      mcp_call_request_input(call, long_key, MCP_INPUT_ELICITATION, FORM),
      MCP_EINVAL);
  long_key[64] = '\0'; /* 64 characters is the limit */
  ck_assert_int_eq(
      mcp_call_request_input(call, long_key, MCP_INPUT_ELICITATION, FORM), 0);
  ck_assert_int_eq(
      mcp_call_request_input(call, "a b", MCP_INPUT_ELICITATION, FORM),
      MCP_EINVAL);
  ck_assert_int_eq(
      mcp_call_request_input(call, "a/b", MCP_INPUT_ELICITATION, FORM),
      MCP_EINVAL);
  ck_assert_int_eq(mcp_call_request_input(call, "k", (mcp_input_kind)0, FORM),
                   MCP_EINVAL);
  ck_assert_int_eq(mcp_call_request_input(call, "k", (mcp_input_kind)4, "{}"),
                   MCP_EINVAL);
  ck_assert_int_eq(
      mcp_call_request_input(call, "k", MCP_INPUT_ELICITATION, NULL),
      MCP_EINVAL);
  ck_assert_int_eq(
      mcp_call_request_input(call, "k", MCP_INPUT_ELICITATION, "[]"),
      MCP_EINVAL);
  ck_assert_int_eq(
      mcp_call_request_input(call, "k", MCP_INPUT_ELICITATION, "{"),
      MCP_EINVAL);
  ck_assert_int_eq(mcp_call_request_input(call, "k", MCP_INPUT_ELICITATION,
                                          "{\"a\":1,\"a\":2}"),
                   MCP_EINVAL);
  ck_assert_int_eq(mcp_call_request_input(NULL, "k", MCP_INPUT_ROOTS, NULL),
                   MCP_EINVAL);
  ck_assert_int_eq(
      mcp_call_request_input(call, "A-z_0.9", MCP_INPUT_ELICITATION, FORM), 0);
  /* A key is asked once per round. */
  ck_assert_int_eq(
      mcp_call_request_input(call, "A-z_0.9", MCP_INPUT_SAMPLING, SAMPLING),
      MCP_EINVAL);
  ck_assert_int_eq(mcp_call_request_input(call, "r", MCP_INPUT_ROOTS, NULL), 0);
  ck_assert_int_eq(mcp_call_set_state(call, NULL), MCP_EINVAL);
  ck_assert_int_eq(mcp_call_set_state(call, "\xff"), MCP_EINVAL);
  ck_assert_int_eq(mcp_call_set_state(NULL, "x"), MCP_EINVAL);
  ck_assert_ptr_null(mcp_call_input(call, NULL));
  ck_assert_ptr_null(mcp_call_input(NULL, "k"));
  ck_assert_ptr_null(mcp_call_state(NULL));
  /* The last state set wins. */
  ck_assert_int_eq(mcp_call_set_state(call, "first"), 0);
  ck_assert_int_eq(mcp_call_set_state(call, "second \xc3\xa9"), 0);
  return MCP_INPUT_REQUIRED;
}

START_TEST(input_api_misuse) {
  g_fn = h_misuse;
  cJSON *r = tu_ask(&P, tu_mcall(1, "run", "{}", META_ALL, NULL, NULL));
  tu_assert_json(r, "{\"result\":{\"resultType\":\"input_required\"}}");
  const cJSON *req = tu_get(tu_result_of(r), "inputRequests");
  ck_assert_int_eq(cJSON_GetArraySize(req), 3);
  tu_assert_json(req, "{\"A-z_0.9\":{\"method\":\"elicitation/create\"},"
                      "\"r\":{\"method\":\"roots/list\",\"params\":{}}}");
  char *st = state_of(r);
  char *p = payload_of(st);
  cJSON *j = cJSON_Parse(p);
  tu_assert_json(j, "{\"state\":\"second \xc3\xa9\"}");
  cJSON_Delete(j);
  free(p);
  free(st);
  cJSON_Delete(r);
}
END_TEST

/* Keeps state without asking anything: the next round starts at once
 * (legacy) or when the client retries with the requestState (modern). */
static int h_state_only(mcp_call *call) {
  const char *st = mcp_call_state(call);
  if (st == NULL) {
    mcp_call_set_state(call, "1");
    return MCP_INPUT_REQUIRED;
  }
  if (strcmp(st, "1") == 0) {
    mcp_call_set_state(call, "2");
    return MCP_INPUT_REQUIRED;
  }
  return mcp_result_text(call, st);
}

static int h_nothing_asked(mcp_call *call) {
  (void)call;
  return MCP_INPUT_REQUIRED;
}

START_TEST(input_required_with_state_only_and_with_nothing) {
  g_fn = h_state_only;
  cJSON *r = tu_ask(&P, tu_mcall(1, "run", "{}", TU_META_NONE, NULL, NULL));
  tu_assert_json(r, "{\"result\":{\"resultType\":\"input_required\","
                    "\"inputRequests\":\"<absent>\",\"requestState\":"
                    "\"<any>\"}}");
  char *st = state_of(r);
  cJSON_Delete(r);
  char *q = quote(st);
  r = tu_ask(&P, tu_mcall(2, "run", "{}", TU_META_NONE, q, NULL));
  free(q);
  free(st);
  st = state_of(r);
  cJSON_Delete(r);
  q = quote(st);
  r = tu_ask(&P, tu_mcall(3, "run", "{}", TU_META_NONE, q, NULL));
  tu_assert_json(r, "{\"result\":{\"resultType\":\"complete\",\"content\":[{"
                    "\"text\":\"2\"}]}}");
  cJSON_Delete(r);
  free(q);
  free(st);
  ck_assert_int_eq(g_runs, 3);
  /* Legacy: the rounds run back to back in one request. */
  tu_legacy_init(&P, "2025-11-25", "{}");
  r = tu_ask(&P, tu_mcall(4, "run", "{}", NULL, NULL, NULL));
  tu_assert_json(r, "{\"result\":{\"content\":[{\"text\":\"2\"}]}}");
  cJSON_Delete(r);
  ck_assert_int_eq(g_runs, 6);
  /* Asking nothing and keeping nothing is the handler's bug: an internal
   * error in both eras. */
  g_fn = h_nothing_asked;
  r = tu_ask(&P, tu_mcall(5, "run", "{}", TU_META_NONE, NULL, NULL));
  tu_assert_error(r, -32603, NULL);
  cJSON_Delete(r);
  r = tu_ask(&P, tu_mcall(6, "run", "{}", NULL, NULL, NULL));
  tu_assert_error(r, -32603, NULL);
  cJSON_Delete(r);
  ck_assert_uint_eq(mcp_session_pending(P.session), 0);
}
END_TEST

/* A large state travels in the token and comes back intact. */
static char g_big[16385];
static int h_big_state(mcp_call *call) {
  const char *st = mcp_call_state(call);
  if (st == NULL) {
    ck_assert_int_eq(mcp_call_set_state(call, g_big), 0);
    return MCP_INPUT_REQUIRED;
  }
  ck_assert_str_eq(st, g_big);
  return mcp_result_text(call, "same");
}

START_TEST(large_state_round_trips) {
  for (size_t i = 0; i < sizeof g_big - 1; i++)
    g_big[i] = (char)('a' + i % 26);
  g_big[sizeof g_big - 1] = '\0';
  g_big[100] = '"'; /* needs escaping inside the payload */
  g_big[200] = '\\';
  g_fn = h_big_state;
  cJSON *r = tu_ask(&P, tu_mcall(1, "run", "{}", TU_META_NONE, NULL, NULL));
  char *st = state_of(r);
  cJSON_Delete(r);
  char *q = quote(st);
  r = tu_ask(&P, tu_mcall(2, "run", "{}", TU_META_NONE, q, NULL));
  tu_assert_json(r, "{\"result\":{\"content\":[{\"text\":\"same\"}]}}");
  cJSON_Delete(r);
  free(q);
  free(st);
}
END_TEST

/* ===========================================================================
 * One handler, both eras: each round sees the same state and answers
 * ======================================================================== */

static int g_script;
static char g_trace[1024];

static int h_script(mcp_call *call) {
  const char *st = mcp_call_state(call);
  bool a = mcp_call_input(call, "a") != NULL;
  bool b = mcp_call_input(call, "b") != NULL;
  size_t k = strlen(g_trace);
  snprintf(g_trace + k, sizeof g_trace - k, "[state=%s a=%d b=%d]",
           st ? st : "-", a, b);
  if (g_script == 1) {
    /* Round 1 keeps "s1" and asks a; round 2 asks b and keeps nothing. */
    if (!st && !a && !b) {
      mcp_call_request_input(call, "a", MCP_INPUT_ELICITATION, FORM);
      mcp_call_set_state(call, "s1");
      return MCP_INPUT_REQUIRED;
    }
    if (a) {
      mcp_call_request_input(call, "b", MCP_INPUT_ROOTS, NULL);
      return MCP_INPUT_REQUIRED;
    }
    return mcp_result_text(call, "done");
  }
  /* Script 2: round 1 asks a; round 2 keeps "s2" and asks nothing. */
  if (!st && !a) {
    mcp_call_request_input(call, "a", MCP_INPUT_ELICITATION, FORM);
    return MCP_INPUT_REQUIRED;
  }
  if (!st) {
    mcp_call_set_state(call, "s2");
    return MCP_INPUT_REQUIRED;
  }
  return mcp_result_text(call, "done");
}

#define CAPS_ER "{\"elicitation\":{},\"roots\":{}}"

/* Drives a modern client through every round; returns the final reply. */
static cJSON *drive_modern(tu_peer *p) {
  cJSON *r = tu_ask(p, tu_mcall(1, "run", "{}", TU_META(CAPS_ER), NULL, NULL));
  for (int id = 2; id < 10; id++) {
    const cJSON *res = tu_result_of(r);
    if (strcmp(tu_get(res, "resultType")->valuestring, "input_required") != 0)
      break;
    char answers[512] = "{";
    const cJSON *reqs = tu_get(res, "inputRequests");
    for (const cJSON *q = reqs ? reqs->child : NULL; q; q = q->next) {
      size_t k = strlen(answers);
      snprintf(answers + k, sizeof answers - k, "%s\"%s\":%s", k > 1 ? "," : "",
               q->string,
               strcmp(tu_get(q, "method")->valuestring, "roots/list") == 0
                   ? "{\"roots\":[]}"
                   : ACCEPT);
    }
    strcat(answers, "}");
    char *st = state_of(r);
    char *qs = quote(st);
    cJSON_Delete(r);
    r = tu_ask(p, tu_mcall(id, "run", "{}", TU_META(CAPS_ER), qs, answers));
    free(qs);
    free(st);
  }
  return r;
}

/* Drives a legacy client: answers every request the server sends until the
 * call's reply comes. */
static cJSON *drive_legacy(tu_peer *p, int *requests) {
  tu_clear(p);
  ck_assert_int_eq(tu_send_free(p, tu_mcall(1, "run", "{}", NULL, NULL, NULL)),
                   0);
  *requests = 0;
  for (int guard = 0; guard < 40; guard++) {
    ck_assert_uint_ge(p->nout, 1);
    cJSON *m = tu_msg(p, p->nout - 1);
    if (tu_get(m, "method") == NULL) {
      ck_assert_uint_eq(p->nout, 1);
      return m;
    }
    /* Collect this round's requests, then answer them all. */
    size_t n = p->nout;
    char *answers[8];
    ck_assert_uint_le(n, TU_COUNT(answers));
    for (size_t i = 0; i < n; i++) {
      cJSON *q = tu_msg(p, i);
      const char *method = tu_get(q, "method")->valuestring;
      answers[i] = tu_text("{\"jsonrpc\":\"2.0\",\"id\":%d,\"result\":%s}",
                           tu_get(q, "id")->valueint,
                           strcmp(method, "roots/list") == 0 ? "{\"roots\":[]}"
                                                             : ACCEPT);
      cJSON_Delete(q);
    }
    cJSON_Delete(m);
    tu_clear(p);
    for (size_t i = 0; i < n; i++) {
      ck_assert_int_eq(tu_send_free(p, answers[i]), 0);
      (*requests)++;
    }
  }
  ck_abort_msg("the legacy call never finished");
  return NULL;
}

START_TEST(one_handler_sees_the_same_rounds_in_both_eras) {
  g_allow_server_requests = true; /* the legacy half asks for real */
  g_fn = h_script;
  static const char *const expected[] = {
      NULL, "[state=- a=0 b=0][state=s1 a=1 b=0][state=- a=0 b=1]",
      "[state=- a=0 b=0][state=- a=1 b=0][state=s2 a=0 b=0]"};
  for (g_script = 1; g_script <= 2; g_script++) {
    g_trace[0] = '\0';
    cJSON *r = drive_modern(&P);
    tu_assert_json(r, "{\"result\":{\"content\":[{\"text\":\"done\"}]}}");
    cJSON_Delete(r);
    ck_assert_msg(strcmp(g_trace, expected[g_script]) == 0,
                  "modern, script %d: %s", g_script, g_trace);

    tu_peer L;
    tu_peer_open_with(&L, srv, &ALICE, inspect);
    tu_legacy_init(&L, "2025-11-25", CAPS_ER);
    g_trace[0] = '\0';
    int requests;
    r = drive_legacy(&L, &requests);
    tu_assert_json(r, "{\"result\":{\"content\":[{\"text\":\"done\"}]}}");
    cJSON_Delete(r);
    ck_assert_msg(strcmp(g_trace, expected[g_script]) == 0,
                  "legacy, script %d: %s", g_script, g_trace);
    ck_assert_uint_eq(mcp_session_pending(L.session), 0);
    tu_peer_close(&L);
  }
}
END_TEST

/* ===========================================================================
 * Legacy era: real requests to the client
 * ======================================================================== */

static void legacy_setup(void) {
  setup();
  g_allow_server_requests = true;
}

static void legacy_elicit_session(void) {
  tu_legacy_init(&P, "2025-11-25", "{\"elicitation\":{}}");
  g_fn = h_confirm;
}

START_TEST(legacy_input_request_and_resume) {
  legacy_elicit_session();
  tu_clear(&P);
  ck_assert_int_eq(
      tu_send_free(&P, tu_mcall(7, "run", "{\"f\":1}", NULL, NULL, NULL)), 0);
  /* A real request, and no reply yet. */
  ck_assert_uint_eq(P.nout, 1);
  cJSON *m = tu_msg(&P, 0);
  char *expected = tu_text("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
                           "\"elicitation/create\",\"params\":%s}",
                           FORM);
  tu_assert_exact(m, expected);
  free(expected);
  cJSON_Delete(m);
  ck_assert_uint_eq(mcp_session_pending(P.session), 1);
  ck_assert_int_eq(g_runs, 1);
  /* The answer runs the handler again; the reply follows. */
  cJSON *r = tu_ask(
      &P, tu_text("{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":%s}", ACCEPT));
  ck_assert_int_eq(g_runs, 2);
  ck_assert_str_eq(g_last_confirm, ACCEPT);
  ck_assert_str_eq(g_last_state, "asked-once");
  tu_assert_exact(r, "{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{\"content\":"
                     "[{\"type\":\"text\",\"text\":\"deleted\"}]}}");
  cJSON_Delete(r);
  ck_assert_uint_eq(mcp_session_pending(P.session), 0);
  /* The next request gets a fresh id; the same id answered again finds
   * nothing. */
  tu_clear(&P);
  ck_assert_int_eq(tu_send(&P, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}"),
                   0);
  ck_assert_uint_eq(P.nout, 0);
  ck_assert_int_eq(tu_send_free(&P, tu_mcall(8, "run", "{}", NULL, NULL, NULL)),
                   0);
  tu_assert_msg(&P, 0, "{\"id\":2,\"method\":\"elicitation/create\"}");
  r = tu_ask(&P, strdup("{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"action\":"
                        "\"decline\"}}"));
  tu_assert_json(r,
                 "{\"id\":8,\"result\":{\"content\":[{\"text\":\"kept\"}]}}");
  cJSON_Delete(r);
}
END_TEST

START_TEST(legacy_input_error_response_is_no_answer) {
  legacy_elicit_session();
  tu_clear(&P);
  ck_assert_int_eq(tu_send_free(&P, tu_mcall(7, "run", "{}", NULL, NULL, NULL)),
                   0);
  tu_clear(&P);
  /* An error is no answer: the handler sees NULL and asks again. */
  ck_assert_int_eq(tu_send(&P, "{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{"
                               "\"code\":-1,\"message\":\"user closed it\"}}"),
                   0);
  ck_assert_int_eq(g_runs, 2);
  ck_assert_str_eq(g_last_confirm, "(null)");
  ck_assert_str_eq(g_last_state, "asked-once");
  ck_assert_uint_eq(P.nout, 1);
  tu_assert_msg(&P, 0, "{\"id\":2,\"method\":\"elicitation/create\"}");
  ck_assert_uint_eq(mcp_session_pending(P.session), 1);
  cJSON *r = tu_ask(
      &P, tu_text("{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":%s}", ACCEPT));
  ck_assert_int_eq(g_runs, 3);
  tu_assert_json(r, "{\"id\":7,\"result\":{\"content\":[{\"text\":"
                    "\"deleted\"}]}}");
  cJSON_Delete(r);
  ck_assert_uint_eq(mcp_session_pending(P.session), 0);
}
END_TEST

START_TEST(legacy_input_unknown_response_ignored) {
  legacy_elicit_session();
  tu_clear(&P);
  ck_assert_int_eq(tu_send_free(&P, tu_mcall(7, "run", "{}", NULL, NULL, NULL)),
                   0);
  tu_clear(&P);
  static const char *const strays[] = {
      "{\"jsonrpc\":\"2.0\",\"id\":99,\"result\":{\"action\":\"accept\"}}",
      "{\"jsonrpc\":\"2.0\",\"id\":\"1\",\"result\":{\"action\":\"accept\"}}",
      "{\"jsonrpc\":\"2.0\",\"id\":1000000,\"result\":{}}",
      "{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{\"action\":\"accept\"}}",
      "{\"jsonrpc\":\"2.0\",\"id\":-1,\"error\":{\"code\":1,\"message\":\"\"}}",
  };
  for (size_t i = 0; i < TU_COUNT(strays); i++)
    ck_assert_int_eq(tu_send(&P, strays[i]), 0);
  ck_assert_uint_eq(P.nout, 0);
  ck_assert_int_eq(g_runs, 1);
  ck_assert_uint_eq(mcp_session_pending(P.session), 1);
  /* The call id itself is still taken. */
  cJSON *r = tu_ask(&P, tu_mcall(7, "run", "{}", NULL, NULL, NULL));
  tu_assert_error(r, -32600, NULL);
  cJSON_Delete(r);
  r = tu_ask(&P,
             tu_text("{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":%s}", ACCEPT));
  tu_assert_json(r, "{\"id\":7,\"result\":{\"content\":[{\"text\":"
                    "\"deleted\"}]}}");
  cJSON_Delete(r);
}
END_TEST

/* Asks for an elicitation and the roots in one round. */
static int h_two(mcp_call *call) {
  const cJSON *a = mcp_call_input(call, "confirm");
  const cJSON *roots = mcp_call_input(call, "roots");
  if (a == NULL && roots == NULL) {
    int rc =
        mcp_call_request_input(call, "confirm", MCP_INPUT_ELICITATION, FORM);
    if (!rc)
      rc = mcp_call_request_input(call, "roots", MCP_INPUT_ROOTS, NULL);
    return rc ? rc : MCP_INPUT_REQUIRED;
  }
  ck_assert_ptr_nonnull(a);
  ck_assert_ptr_nonnull(roots);
  return mcp_result_text(call, "both");
}

START_TEST(legacy_input_two_requests_in_one_round) {
  tu_legacy_init(&P, "2025-06-18", "{\"elicitation\":{},\"roots\":{}}");
  g_fn = h_two;
  tu_clear(&P);
  ck_assert_int_eq(tu_send_free(&P, tu_mcall(5, "run", "{}", NULL, NULL, NULL)),
                   0);
  ck_assert_uint_eq(P.nout, 2);
  tu_assert_msg(&P, 0, "{\"id\":1,\"method\":\"elicitation/create\"}");
  tu_assert_msg(&P, 1, "{\"id\":2,\"method\":\"roots/list\",\"params\":{}}");
  tu_clear(&P);
  /* The second answer first: the handler waits for both. */
  ck_assert_int_eq(tu_send(&P, "{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{"
                               "\"roots\":[{\"uri\":\"file:///r\"}]}}"),
                   0);
  ck_assert_uint_eq(P.nout, 0);
  ck_assert_int_eq(g_runs, 1);
  cJSON *r = tu_ask(
      &P, tu_text("{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":%s}", ACCEPT));
  ck_assert_int_eq(g_runs, 2);
  tu_assert_json(r, "{\"id\":5,\"result\":{\"content\":[{\"text\":"
                    "\"both\"}]}}");
  cJSON_Delete(r);
  ck_assert_uint_eq(mcp_session_pending(P.session), 0);
}
END_TEST

START_TEST(legacy_input_cancelled_while_waiting) {
  legacy_elicit_session();
  tu_clear(&P);
  ck_assert_int_eq(tu_send_free(&P, tu_mcall(7, "run", "{}", NULL, NULL, NULL)),
                   0);
  ck_assert_uint_eq(mcp_session_pending(P.session), 1);
  tu_clear(&P);
  ck_assert_int_eq(tu_send(&P, "{\"jsonrpc\":\"2.0\",\"method\":"
                               "\"notifications/cancelled\",\"params\":{"
                               "\"requestId\":7,\"reason\":\"bored\"}}"),
                   0);
  /* No reply to the call; the client hears that our question is moot. */
  ck_assert_uint_eq(P.nout, 1);
  tu_assert_msg(&P, 0,
                "{\"id\":\"<absent>\",\"method\":\"notifications/cancelled\","
                "\"params\":{\"requestId\":1}}");
  ck_assert_uint_eq(mcp_session_pending(P.session), 0);
  /* The late answer finds nothing; no reply ever comes. */
  tu_clear(&P);
  ck_assert_int_eq(
      tu_send_free(
          &P, tu_text("{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":%s}", ACCEPT)),
      0);
  ck_assert_uint_eq(P.nout, 0);
  ck_assert_int_eq(g_runs, 1);
  /* The id is free again. */
  ck_assert_int_eq(tu_send_free(&P, tu_mcall(7, "run", "{}", NULL, NULL, NULL)),
                   0);
  tu_assert_msg(&P, 0, "{\"id\":2,\"method\":\"elicitation/create\"}");
}
END_TEST

/* The session goes away with calls parked for answers: they end there and
 * nothing leaks (the leak check is valgrind's or ASan's). */
START_TEST(legacy_input_session_free_while_waiting_no_leak) {
  tu_peer L;
  tu_peer_open_with(&L, srv, &ALICE, inspect);
  tu_legacy_init(&L, "2025-11-25", "{\"elicitation\":{},\"roots\":{}}");
  g_fn = h_two;
  ck_assert_int_eq(tu_send_free(&L, tu_mcall(1, "run", "{\"big\":[1,2,3]}",
                                             NULL, NULL, NULL)),
                   0);
  g_fn = h_confirm;
  ck_assert_int_eq(tu_send_free(&L, tu_mcall(2, "run", "{}", NULL, NULL, NULL)),
                   0);
  ck_assert_uint_eq(mcp_session_pending(L.session), 2);
  ck_assert_uint_eq(L.nout, 3);
  /* One answer of two arrived for the first call. */
  ck_assert_int_eq(tu_send(&L, "{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{"
                               "\"roots\":[]}}"),
                   0);
  size_t sent = L.nout;
  mcp_session_free(L.session);
  L.session = NULL;
  ck_assert_uint_eq(L.nout, sent); /* nothing more sent */
  ck_assert_int_eq(g_runs, 2);
  tu_clear(&L);
  free(L.out);
}
END_TEST

static int h_forever(mcp_call *call) {
  int rc = mcp_call_request_input(call, "again", MCP_INPUT_ELICITATION, FORM);
  return rc ? rc : MCP_INPUT_REQUIRED;
}

START_TEST(legacy_input_round_cap) {
  tu_legacy_init(&P, "2025-11-25", "{\"elicitation\":{}}");
  g_fn = h_forever;
  tu_clear(&P);
  ck_assert_int_eq(tu_send_free(&P, tu_mcall(7, "run", "{}", NULL, NULL, NULL)),
                   0);
  int requests = 0;
  cJSON *reply = NULL;
  while (reply == NULL && requests < 1000) {
    ck_assert_uint_eq(P.nout, 1);
    cJSON *m = tu_msg(&P, 0);
    if (tu_get(m, "method") == NULL) {
      reply = m;
      break;
    }
    int id = tu_get(m, "id")->valueint;
    cJSON_Delete(m);
    tu_clear(&P);
    requests++;
    ck_assert_int_eq(
        tu_send_free(&P,
                     tu_text("{\"jsonrpc\":\"2.0\",\"id\":%d,\"result\":%s}",
                             id, ACCEPT)),
        0);
  }
  ck_assert_ptr_nonnull(reply);
  tu_assert_error(reply, -32603, NULL);
  tu_assert_json(reply, "{\"id\":7}");
  cJSON_Delete(reply);
  ck_assert_int_ge(requests, 2);
  ck_assert_int_le(requests, 64);
  ck_assert_int_eq(g_runs, requests + 1);
  ck_assert_uint_eq(mcp_session_pending(P.session), 0);
}
END_TEST

static int h_state_forever(mcp_call *call) {
  mcp_call_set_state(call, "again");
  return MCP_INPUT_REQUIRED;
}

START_TEST(legacy_state_only_rounds_capped) {
  tu_legacy_init(&P, "2025-11-25", "{}");
  g_fn = h_state_forever;
  cJSON *r = tu_ask(&P, tu_mcall(7, "run", "{}", NULL, NULL, NULL));
  tu_assert_error(r, -32603, NULL);
  cJSON_Delete(r);
  ck_assert_int_ge(g_runs, 2);
  ck_assert_int_le(g_runs, 64);
  ck_assert_uint_eq(mcp_session_pending(P.session), 0);
}
END_TEST

/* ===========================================================================
 * Modern logging, progress and cancellation
 * ======================================================================== */

static int h_log(mcp_call *call) {
  mcp_call_log(call, MCP_LOG_DEBUG, "d");
  mcp_call_log(call, MCP_LOG_INFO, "i");
  mcp_call_log(call, MCP_LOG_WARNING, "w");
  mcp_call_log(call, MCP_LOG_ERROR, "e");
  return mcp_result_text(call, "logged");
}

/* Sends a modern call with logLevel level (NULL: none); checks that the
 * notifications carry exactly the letters in expect, in order, then the
 * reply. */
static void expect_logs(tu_peer *p, const char *level, const char *expect) {
  char *meta =
      level ? tu_text("{" TU_PV ":\"2026-07-28\"," TU_CC ":{}," LL ":\"%s\"}",
                      level)
            : strdup(TU_META_NONE);
  tu_clear(p);
  ck_assert_int_eq(tu_send_free(p, tu_mcall(3, "run", "{}", meta, NULL, NULL)),
                   0);
  free(meta);
  size_t n = strlen(expect);
  ck_assert_msg(p->nout == n + 1, "level %s: %zu messages", level, p->nout);
  static const char *const names[] = {"debug", "info", "warning", "error"};
  for (size_t i = 0; i < n; i++) {
    const char *name = expect[i] == 'd'   ? names[0]
                       : expect[i] == 'i' ? names[1]
                       : expect[i] == 'w' ? names[2]
                                          : names[3];
    char *want =
        tu_text("{\"jsonrpc\":\"2.0\",\"id\":\"<absent>\",\"method\":"
                "\"notifications/message\",\"params\":{\"level\":\"%s\","
                "\"logger\":\"run\",\"data\":\"%c\"}}",
                name, expect[i]);
    tu_assert_msg(p, i, want);
    free(want);
  }
  tu_assert_msg(p, n,
                "{\"id\":3,\"result\":{\"content\":[{\"text\":"
                "\"logged\"}]}}");
}

START_TEST(modern_log_only_when_asked_at_or_above_level) {
  g_fn = h_log;
  expect_logs(&P, NULL, "");
  expect_logs(&P, "debug", "diwe");
  expect_logs(&P, "info", "iwe");
  expect_logs(&P, "notice", "we");
  expect_logs(&P, "warning", "we");
  expect_logs(&P, "error", "e");
  expect_logs(&P, "critical", "");
  expect_logs(&P, "emergency", "");
  /* Each request stands alone: the previous level is not remembered. */
  expect_logs(&P, NULL, "");
  /* Never in the legacy era. */
  tu_legacy_init(&P, "2025-11-25", "{}");
  tu_clear(&P);
  cJSON *r = tu_ask(&P, tu_mcall(4, "run", "{}", NULL, NULL, NULL));
  tu_assert_json(r, "{\"id\":4,\"result\":{\"content\":[{\"text\":"
                    "\"logged\"}]}}");
  cJSON_Delete(r);
  /* A legacy request carrying a logLevel alone is still legacy. */
  r = tu_ask(&P, tu_mcall(5, "run", "{}", "{" LL ":\"debug\"}", NULL, NULL));
  tu_assert_json(r, "{\"id\":5,\"result\":\"<any>\"}");
  cJSON_Delete(r);
}
END_TEST

static int h_progress(mcp_call *call) {
  ck_assert_int_eq(mcp_call_progress(call, 1, 2, "half"), 0);
  ck_assert_int_eq(mcp_call_progress(call, 1, 2, NULL), MCP_EINVAL);
  ck_assert_int_eq(mcp_call_progress(call, 2, 2, NULL), 0);
  return mcp_result_text(call, "done");
}

static int h_progress_untracked(mcp_call *call) {
  ck_assert_int_eq(mcp_call_progress(call, 1, 2, "half"), 0);
  ck_assert_int_eq(mcp_call_progress(call, 1, 2, NULL), 0);
  return mcp_result_text(call, "done");
}

START_TEST(modern_progress_notifications) {
  g_fn = h_progress;
  static const char *const tokens[] = {"\"p1\"", "7"};
  for (size_t i = 0; i < TU_COUNT(tokens); i++) {
    char *meta =
        tu_text("{" TU_PV ":\"2026-07-28\"," TU_CC ":{},\"progressToken\":%s}",
                tokens[i]);
    tu_clear(&P);
    ck_assert_int_eq(
        tu_send_free(&P, tu_mcall(9, "run", "{}", meta, NULL, NULL)), 0);
    free(meta);
    ck_assert_uint_eq(P.nout, 3);
    char *want = tu_text("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/"
                         "progress\",\"params\":{\"progressToken\":%s,"
                         "\"progress\":1,\"total\":2,\"message\":\"half\"}}",
                         tokens[i]);
    cJSON *m = tu_msg(&P, 0);
    tu_assert_exact(m, want);
    cJSON_Delete(m);
    free(want);
    tu_assert_msg(&P, 1,
                  "{\"params\":{\"progress\":2,\"message\":"
                  "\"<absent>\"}}");
    tu_assert_msg(&P, 2, MODERN_RESULT("complete"));
  }
  /* No token, no notifications: progress does nothing and succeeds. */
  g_fn = h_progress_untracked;
  cJSON *r = tu_ask(&P, tu_mcall(10, "run", "{}", TU_META_NONE, NULL, NULL));
  tu_assert_json(r, "{\"id\":10}");
  cJSON_Delete(r);
}
END_TEST

START_TEST(modern_cancelled_call_sends_nothing) {
  g_fn = tu_defer;
  tu_clear(&P);
  ck_assert_int_eq(
      tu_send_free(&P, tu_mcall(5, "run", "{}", TU_META_NONE, NULL, NULL)), 0);
  ck_assert_uint_eq(P.nout, 0);
  ck_assert_ptr_nonnull(tu_stash);
  ck_assert(!mcp_call_cancelled(tu_stash));
  ck_assert_int_eq(tu_send(&P, "{\"jsonrpc\":\"2.0\",\"method\":"
                               "\"notifications/cancelled\",\"params\":{"
                               "\"requestId\":5,\"_meta\":" TU_META_NONE "}}"),
                   0);
  ck_assert(mcp_call_cancelled(tu_stash));
  mcp_result_text(tu_stash, "too late");
  ck_assert_int_eq(mcp_call_finish(tu_stash, 0), 0);
  ck_assert_uint_eq(P.nout, 0);
  ck_assert_uint_eq(mcp_session_pending(P.session), 0);
  /* A deferred modern call may end in input_required too. */
  ck_assert_int_eq(
      tu_send_free(&P, tu_mcall(6, "run", "{}", TU_META_ELICIT, NULL, NULL)),
      0);
  ck_assert_int_eq(
      mcp_call_request_input(tu_stash, "k", MCP_INPUT_ELICITATION, FORM), 0);
  ck_assert_int_eq(mcp_call_finish(tu_stash, MCP_INPUT_REQUIRED), 0);
  ck_assert_uint_eq(P.nout, 1);
  tu_assert_msg(&P, 0, MODERN_RESULT("input_required"));
  ck_assert_uint_eq(mcp_session_pending(P.session), 0);
}
END_TEST

/* ===========================================================================
 * Allocation failure: a modern input round trip, and a legacy one
 * ======================================================================== */

/* The requestState in an input_required reply, copied into dst. */
static bool find_state(const char *reply, char *dst, size_t n) {
  const char *p = strstr(reply, "\"requestState\":\"");
  if (p == NULL)
    return false;
  p += strlen("\"requestState\":\"");
  const char *end = strchr(p, '"');
  ck_assert_ptr_nonnull(end);
  ck_assert_uint_lt((size_t)(end - p), n);
  memcpy(dst, p, (size_t)(end - p));
  dst[end - p] = '\0';
  return true;
}

static int h_alloc(mcp_call *call) {
  const cJSON *a = mcp_call_input(call, "confirm");
  if (a == NULL) {
    int rc =
        mcp_call_request_input(call, "confirm", MCP_INPUT_ELICITATION, FORM);
    if (rc)
      return rc;
    rc = mcp_call_set_state(call, "s");
    if (rc)
      return rc;
    mcp_call_log(call, MCP_LOG_INFO, "asking");
    return MCP_INPUT_REQUIRED;
  }
  const char *st = mcp_call_state(call);
  ck_assert_ptr_nonnull(st);
  ck_assert_str_eq(st, "s");
  return mcp_result_text(call, "deleted");
}

static int h_alloc_tool(mcp_call *call, void *user_data) {
  (void)user_data;
  return h_alloc(call);
}

static const mcp_tool TOOL_ALLOC = {.name = "ask",
                                    .description = "Asks first.",
                                    .input_schema = "{\"type\":\"object\"}",
                                    .annotations = TC_READ_ONLY,
                                    .handler = h_alloc_tool};

/* Feeds msg; receive returns 0 or MCP_ENOMEM, and a request accepted is
 * answered. */
static bool alloc_step(mcp_session *s, tu_sink *k, char *msg, long n,
                       bool expect_reply) {
  size_t before = k->n;
  int rc = mcp_session_receive(s, msg, strlen(msg));
  ck_assert_msg(rc == 0 || rc == MCP_ENOMEM, "fail_at %ld: rc %d for %s", n, rc,
                msg);
  if (rc == 0 && expect_reply)
    ck_assert_msg(k->n > before, "fail_at %ld: no reply to %s", n, msg);
  free(msg);
  return rc == 0;
}

static bool alloc_scenario(long n, void *user) {
  tu_sink *k = user;
  mcp_server *s = NULL;
  int rc = mcp_server_new(&INFO, &s);
  if (rc) {
    ck_assert_int_eq(rc, MCP_ENOMEM);
    return false;
  }
  mcp_server_set_log(s, tu_silent_log, NULL);
  if ((rc = mcp_server_add_tool(s, &TOOL_ALLOC, NULL)) != 0) {
    ck_assert_int_eq(rc, MCP_ENOMEM);
    mcp_server_free(s);
    return false;
  }
  mcp_session *session = NULL;
  rc = mcp_session_new(s, &ALICE, tu_sink_send, k, &session);
  if (rc) {
    ck_assert_int_eq(rc, MCP_ENOMEM);
    mcp_server_free(s);
    return false;
  }
  static const char meta[] = "{" TU_PV ":\"2026-07-28\"," TU_CC
                             ":{\"elicitation\":{}}," LL ":\"info\"}";
  bool ok = true;
  ok &= alloc_step(session, k,
                   tu_mreq(1, "server/discover", TU_META_NONE, NULL), n, true);
  ok &= alloc_step(
      session, k,
      tu_mcall(2, "ask", "{\"f\":[1,{\"g\":\"h\"}]}", meta, NULL, NULL), n,
      true);
  char state[4096];
  if (find_state(tu_sink_last(k), state, sizeof state)) {
    char *q = quote(state);
    ok &= alloc_step(session, k,
                     tu_mcall(3, "ask", "{\"f\":[1,{\"g\":\"h\"}]}", meta, q,
                              "{\"confirm\":{\"action\":\"accept\"}}"),
                     n, true);
    free(q);
  } else {
    ok = false;
  }
  /* The legacy flow: initialize, a call that asks, the answer. */
  ok &= alloc_step(session, k,
                   strdup("{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":"
                          "\"initialize\",\"params\":{\"protocolVersion\":"
                          "\"2025-11-25\",\"capabilities\":{\"elicitation\":"
                          "{}},\"clientInfo\":{\"name\":\"c\"}}}"),
                   n, true);
  ok &= alloc_step(session, k,
                   strdup("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/"
                          "initialized\"}"),
                   n, false);
  size_t before = k->n;
  ok &= alloc_step(session, k, tu_mcall(5, "ask", "{}", NULL, NULL, NULL), n,
                   true);
  bool asked = k->n > before && strstr(tu_sink_last(k), "elicitation/create");
  if (asked) {
    ck_assert_uint_eq(mcp_session_pending(session), 1);
    ok &= alloc_step(session, k,
                     strdup("{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{"
                            "\"action\":\"accept\"}}"),
                     n, false);
  } else {
    ok = false;
  }
  /* Whatever happened, nothing stays parked once answered (unless the
   * answer was lost to memory and the handler asked again)... */
  if (ok && !strstr(tu_sink_last(k), "elicitation/create"))
    ck_assert_uint_eq(mcp_session_pending(session), 0);
  /* ... and freeing the session ends what might. */
  mcp_session_free(session);
  mcp_server_free(s);
  return ok;
}

/* The run in which nothing failed went all the way, correctly; every run's
 * messages are strict JSON. */
static void alloc_after(long n, bool complete, bool clean, void *user) {
  tu_sink *k = user;
  if (clean) {
    ck_assert(complete);
    ck_assert_uint_eq(k->n, 7);
    ck_assert_ptr_nonnull(strstr(k->msgs[0], "\"supportedVersions\""));
    ck_assert_ptr_nonnull(strstr(k->msgs[1], "notifications/message"));
    ck_assert_ptr_nonnull(strstr(k->msgs[2], "\"input_required\""));
    ck_assert_ptr_nonnull(strstr(k->msgs[3], "\"text\":\"deleted\""));
    ck_assert_ptr_nonnull(strstr(k->msgs[4], "\"protocolVersion\""));
    ck_assert_ptr_nonnull(strstr(k->msgs[5], "elicitation/create"));
    ck_assert_ptr_nonnull(strstr(k->msgs[6], "\"text\":\"deleted\""));
  }
  tu_sink_free(k, n, tu_assert_strict);
}

START_TEST(input_round_trips_under_allocation_failure) {
  tu_sink k = {0};
  ck_assert_int_ge(tu_alloc_every(50000, alloc_scenario, alloc_after, &k), 10);
}
END_TEST

/* ===========================================================================
 * Capability and version gates, batches, state size, audit, cancel_all
 * ======================================================================== */

/* Elicitation arrived in 2025-06-18: a 2025-03-26 session cannot have it,
 * whatever it declares, and nothing is sent to it. */
START_TEST(legacy_old_version_has_no_elicitation) {
  tu_legacy_init(&P, "2025-03-26", "{\"elicitation\":{}}");
  g_fn = h_confirm;
  cJSON *r = tu_ask(&P, tu_mcall(3, "run", "{}", NULL, NULL, NULL));
  ck_assert_int_eq(g_req_rc, MCP_ECAPABILITY);
  tu_assert_json(r, "{\"id\":3,\"result\":{\"isError\":true}}");
  cJSON_Delete(r);
  ck_assert_int_eq(g_server_requests, 0);
}
END_TEST

/* Sampling with tools needs sampling.tools, named precisely in -32021. */
START_TEST(modern_sampling_tools_need_their_capability) {
  g_fn = h_need;
  g_kind = MCP_INPUT_SAMPLING;
  g_params = "{\"messages\":[],\"maxTokens\":10,\"tools\":[]}";
  cJSON *r = tu_ask(
      &P, tu_mcall(4, "run", "{}", TU_META("{\"sampling\":{}}"), NULL, NULL));
  tu_assert_error(r, -32021, "tool use in sampling");
  tu_assert_json(r, "{\"error\":{\"data\":{\"requiredCapabilities\":{"
                    "\"sampling\":{\"tools\":{}}}}}}");
  cJSON_Delete(r);
  r = tu_ask(&P,
             tu_mcall(5, "run", "{}", TU_META("{\"sampling\":{\"tools\":{}}}"),
                      NULL, NULL));
  tu_assert_json(r, "{\"result\":{\"resultType\":\"input_required\"}}");
  cJSON_Delete(r);
}
END_TEST

/* The modern era has no batches, even inside a 2025-03-26 session. */
START_TEST(modern_request_in_batch_refused) {
  tu_legacy_init(&P, "2025-03-26", "{}");
  char *lst = tu_mreq(8, "tools/list", TU_META_NONE, NULL);
  char *batch = tu_text("[%s]", lst);
  ck_assert_int_eq(tu_send(&P, batch), 0);
  free(lst);
  free(batch);
  tu_assert_msg(&P, 0, "[{\"id\":8,\"error\":{\"code\":-32600}}]");
  ck_assert_int_eq(g_runs, 0);
}
END_TEST

static int h_huge_state(mcp_call *call) {
  char *big = malloc(MCP_STATE_MAX + 2);
  ck_assert_ptr_nonnull(big);
  memset(big, 'x', MCP_STATE_MAX + 1);
  big[MCP_STATE_MAX + 1] = '\0';
  ck_assert_int_eq(mcp_call_set_state(call, big), MCP_EINVAL);
  big[MCP_STATE_MAX] = '\0';
  ck_assert_int_eq(mcp_call_set_state(call, big), 0);
  free(big);
  return mcp_result_text(call, "ok");
}

START_TEST(state_is_bounded) {
  g_fn = h_huge_state;
  cJSON *r = tu_ask(&P, tu_mcall(6, "run", "{}", TU_META_NONE, NULL, NULL));
  tu_assert_json(r, "{\"result\":{\"content\":[{\"text\":\"ok\"}]}}");
  cJSON_Delete(r);
}
END_TEST

static int g_audit_decision = -1;
static void audit_last(const mcp_audit_record *rec, void *user_data) {
  (void)user_data;
  g_audit_decision = (int)rec->decision;
}

/* A refused retry is still one tools/call: it is audited as such. */
START_TEST(refused_request_state_is_audited) {
  g_fn = h_confirm;
  mcp_server_set_audit(srv, audit_last, NULL);
  char *token = obtain_state(&P, "run", "{}");
  token[strlen(token) - 1] = token[strlen(token) - 1] == 'A' ? 'B' : 'A';
  int runs = g_runs;
  cJSON *r = retry(&P, 11, "run", "{}", token, NULL);
  tu_assert_error(r, -32602, NULL);
  cJSON_Delete(r);
  free(token);
  ck_assert_int_eq(g_runs, runs);
  ck_assert_int_eq(g_audit_decision, MCP_DECISION_INVALID_STATE);
}
END_TEST

/* A legacy answer without the shape of an ElicitResult counts as no
 * answer: the handler sees NULL and asks again. */
START_TEST(legacy_malformed_answer_is_no_answer) {
  legacy_elicit_session();
  tu_clear(&P);
  ck_assert_int_eq(tu_send_free(&P, tu_mcall(7, "run", "{}", NULL, NULL, NULL)),
                   0);
  tu_clear(&P);
  ck_assert_int_eq(tu_send(&P, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{"
                               "\"action\":\"maybe\"}}"),
                   0);
  ck_assert_int_eq(g_runs, 2);
  ck_assert_str_eq(g_last_confirm, "(null)");
  tu_assert_msg(&P, 0, "{\"id\":2,\"method\":\"elicitation/create\"}");
}
END_TEST

/* cancel_all ends a call parked for answers at once (stdio relies on it at
 * end of input) and tells the client its question is moot. */
START_TEST(cancel_all_ends_parked_calls) {
  legacy_elicit_session();
  tu_clear(&P);
  ck_assert_int_eq(tu_send_free(&P, tu_mcall(7, "run", "{}", NULL, NULL, NULL)),
                   0);
  ck_assert_uint_eq(mcp_session_pending(P.session), 1);
  tu_clear(&P);
  mcp_session_cancel_all(P.session);
  ck_assert_uint_eq(mcp_session_pending(P.session), 0);
  ck_assert_uint_eq(P.nout, 1);
  tu_assert_msg(&P, 0,
                "{\"method\":\"notifications/cancelled\",\"params\":{"
                "\"requestId\":1}}");
}
END_TEST

/* mcp_call_client_capabilities: what the call's client declared, in either
 * era, for a handler that adapts (MCP Apps: does the host render views?). */
static char g_caps_seen[256];

static int h_caps(mcp_call *call) {
  const cJSON *caps = mcp_call_client_capabilities(call);
  char *text = caps ? cJSON_PrintUnformatted(caps) : NULL;
  snprintf(g_caps_seen, sizeof g_caps_seen, "%s", text ? text : "(none)");
  cJSON_free(text);
  return mcp_result_text(call, "ok");
}

START_TEST(client_capabilities_of_either_era) {
  g_fn = h_caps;
  cJSON *r = tu_ask(
      &P, tu_mcall(1, "run", NULL,
                   TU_META("{\"extensions\":{\"io.modelcontextprotocol/ui\":{"
                           "\"mimeTypes\":[\"text/html;profile=mcp-app\"]}}}"),
                   NULL, NULL));
  cJSON_Delete(r);
  ck_assert_str_eq(g_caps_seen, "{\"extensions\":{\"io.modelcontextprotocol/"
                                "ui\":{\"mimeTypes\":[\"text/html;profile="
                                "mcp-app\"]}}}");
  tu_peer L;
  tu_peer_open_with(&L, srv, &ALICE, inspect);
  tu_legacy_init(&L, "2025-11-25", "{\"roots\":{}}");
  r = tu_ask(&L, tu_req(2, "tools/call", "{\"name\":\"run\"}"));
  cJSON_Delete(r);
  ck_assert_str_eq(g_caps_seen, "{\"roots\":{}}");
  tu_peer_close(&L);
  ck_assert_ptr_null(mcp_call_client_capabilities(NULL));
}
END_TEST

/* ===========================================================================
 * Suite
 * ======================================================================== */

static TCase *tcase(Suite *s, const char *name, void (*set)(void)) {
  return tu_tcase(s, name, set, teardown, 120);
}

static Suite *modern_suite(void) {
  Suite *s = suite_create("modern");
  TCase *t = tcase(s, "musts", setup);
  tcase_add_test(t,
                 must10_server_discover_answered_first_with_versions_and_info);
  tcase_add_test(t, must11_version_and_capabilities_from_every_request);
  tcase_add_test(t,
                 must12_unsupported_version_32022_with_supported_and_requested);
  tcase_add_test(t,
                 must13_undeclared_capability_32021_with_required_capabilities);
  tcase_add_test(t, must13_several_missing_capabilities_named_together);
  tcase_add_test(t, must14_result_type_and_server_info_on_every_result);
  tcase_add_test(t, must15_no_server_requests_in_modern_era);
  tcase_add_test(t, must16_request_state_round_trip);
  tcase_add_test(t, must16_tampered_request_state_refused_before_handler);
  tcase_add_test(t, client_capabilities_of_either_era);
  tcase_add_test(t, must16_request_state_bound_to_arguments);
  tcase_add_test(t, must16_request_state_bound_to_tool_and_principal);
  tcase_add_test(t, must16_foreign_request_state_refused);
  tcase_add_test(t, must16_state_key_shorter_than_32_bytes_rejected);
  tcase_add_test(t, must16_expired_request_state_refused);
  tcase_add_test(t, must16_request_state_expiry_follows_input_ttl);
  tcase_add_test(t, must16_input_responses_validated);
  tcase_add_test(t, must16_reask_instead_of_failing);
  tcase_add_test(t, must17_ttl_and_cache_scope_on_discover_and_lists);

  t = tcase(s, "dual_era", setup);
  tcase_add_test(t, dual_era_modern_requests_do_not_initialize);
  tcase_add_test(t, dual_era_interleaved_on_one_session);
  tcase_add_test(t, modern_ping_method_not_found_even_first);
  tcase_add_test(t, deterministic_tool_order_in_both_eras);

  t = tcase(s, "input", setup);
  tcase_add_test(t, input_api_misuse);
  tcase_add_test(t, input_required_with_state_only_and_with_nothing);
  tcase_add_test(t, large_state_round_trips);
  tcase_add_test(t, one_handler_sees_the_same_rounds_in_both_eras);

  t = tcase(s, "legacy_input", legacy_setup);
  tcase_add_test(t, legacy_missing_capability_is_tool_error);
  tcase_add_test(t, legacy_input_request_and_resume);
  tcase_add_test(t, legacy_input_error_response_is_no_answer);
  tcase_add_test(t, legacy_input_unknown_response_ignored);
  tcase_add_test(t, legacy_input_two_requests_in_one_round);
  tcase_add_test(t, legacy_input_cancelled_while_waiting);
  tcase_add_test(t, legacy_input_session_free_while_waiting_no_leak);
  tcase_add_test(t, legacy_input_round_cap);
  tcase_add_test(t, legacy_state_only_rounds_capped);
  tcase_add_test(t, cancel_all_ends_parked_calls);
  tcase_add_test(t, legacy_malformed_answer_is_no_answer);

  t = tcase(s, "gates", setup);
  tcase_add_test(t, legacy_old_version_has_no_elicitation);
  tcase_add_test(t, modern_sampling_tools_need_their_capability);
  tcase_add_test(t, modern_request_in_batch_refused);
  tcase_add_test(t, state_is_bounded);
  tcase_add_test(t, refused_request_state_is_audited);

  t = tcase(s, "notifications", setup);
  tcase_add_test(t, modern_log_only_when_asked_at_or_above_level);
  tcase_add_test(t, modern_progress_notifications);
  tcase_add_test(t, modern_cancelled_call_sends_nothing);

  t = tcase_create("allocation");
  tcase_set_timeout(t, 600);
  tcase_add_test(t, input_round_trips_under_allocation_failure);
  suite_add_tcase(s, t);
  return s;
}

int main(void) { return tu_run(modern_suite()); }
