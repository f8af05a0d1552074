/* The authorization rules of the HTTP transport (lib/http/http_auth.c),
 * called directly: the settings checked at start, the Authorization header
 * read strictly (RFC 6750 §2.1), the WWW-Authenticate challenges (RFC 6750
 * §3, RFC 9728 §5.1) and the scope list a 403 names, the protected
 * resource metadata document and its paths (RFC 9728 §3), and the caller a
 * verified token makes. The tokens here are opaque, checked by a custom
 * verifier; the JWT verifier is test_jwt's, the transport on real sockets
 * tests/http/test_http_auth.c's. */
#include <check.h>
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "http_int.h"
#include "testutil.h"
#include "tools.h"

#define RESOURCE "https://mcp.example.test/mcp"
#define PRM_URL                                                                \
  "https://mcp.example.test/.well-known/oauth-protected-resource/mcp"

static const char *const SERVERS[] = {"https://as.example.test", NULL};

/* ---- the fixture: a server for the log, an mcp_http with its path -------- */

static mcp_server *srv;
static mcp_http http;
static char path[] = "/mcp";
static char logged[4096];

static void keep_log(mcp_log_level level, const char *message, void *ud) {
  (void)level;
  (void)ud;
  size_t n = strlen(logged);
  snprintf(logged + n, sizeof logged - n, "%s\n", message);
}

static void setup(void) {
  static const mcp_server_info info = {.name = "auth", .version = "1"};
  ck_assert_int_eq(mcp_server_new(&info, &srv), 0);
  mcp_server_set_log(srv, keep_log, NULL);
  memset(&http, 0, sizeof http);
  http.srv = srv;
  http.path = path;
  logged[0] = '\0';
}

static void teardown(void) {
  mcp__http_auth_free(http.auth);
  http.auth = NULL;
  mcp_server_free(srv);
}

/* The custom verifier: "good-<scopes>" is valid for alice with those
 * scopes ('+' for a space), "anon..." for nobody, "stale" expired an hour
 * ago; anything else is refused. */
static int verify(const char *token, mcp_token_info *info, void *ud) {
  (void)ud;
  if (strncmp(token, "good-", 5) == 0) {
    snprintf(info->subject, sizeof info->subject, "alice");
    snprintf(info->scopes, sizeof info->scopes, "%s", token + 5);
    for (char *p = info->scopes; *p; p++)
      if (*p == '+')
        *p = ' ';
    return 0;
  }
  if (strncmp(token, "anon", 4) == 0)
    return 0;
  if (strcmp(token, "stale") == 0) {
    snprintf(info->subject, sizeof info->subject, "bob");
    info->expires_at = (long long)time(NULL) - 3600;
    return 0;
  }
  return -1;
}

static mcp_auth_options options(void) {
  return (mcp_auth_options){
      .resource = RESOURCE, .authorization_servers = SERVERS, .verify = verify};
}

/* For tu_alloc_every: a run under a failing allocation must fail as a
 * whole (ok false) whenever an allocation failed. */
static void failed_whole(long n, bool ok, bool clean, void *user) {
  (void)user;
  ck_assert_msg(clean || !ok, "allocation %ld failed, yet the call succeeded",
                n);
}

/* Starts the auth of http with o; asserts it was accepted. */
static void auth_start(const mcp_auth_options *o) {
  int rc = mcp__http_auth_new(&http, o, &http.auth);
  ck_assert_msg(rc == 0, "mcp__http_auth_new: %d\n%s", rc, logged);
  ck_assert_ptr_nonnull(http.auth);
}

/* ---- the Authorization header ---------------------------------------------
 */

START_TEST(bearer_header_read_strictly) {
  static const struct {
    const char *value;
    int rc;            /* 0 token, 1 another scheme, -1 malformed */
    const char *token; /* when rc is 0 */
  } cases[] = {
      {"Bearer abc", 0, "abc"},
      {"bearer abc", 0, "abc"}, /* the scheme's case does not matter */
      {"BEARER a.b-c_d~e+f/g", 0, "a.b-c_d~e+f/g"},
      {"Bearer abc==", 0, "abc=="}, /* token68's padding, at the end only */
      {"Basic dXNlcjpwYXNz", 1, NULL},
      {"Bearerx abc", 1, NULL},
      {"Digest", 1, NULL},
      {"Bearer", -1, NULL},
      {"Bearer ", -1, NULL},
      {"Bearer  abc", -1, NULL}, /* exactly one space */
      {"Bearer\tabc", -1, NULL},
      {" Bearer abc", -1, NULL},
      {"", -1, NULL},
      {"Bearer abc def", -1, NULL},
      {"Bearer abc ", -1, NULL},
      {"Bearer a=b", -1, NULL},
      {"Bearer =", -1, NULL},
      {"Bearer ab\"c", -1, NULL},
      {"Bearer ab,c", -1, NULL},
      {"Bearer t\xc3\xa9", -1, NULL},
  };
  for (size_t i = 0; i < TU_COUNT(cases); i++) {
    const char *tok = NULL;
    size_t len = 0;
    int rc = mcp__http_bearer_parse(cases[i].value, strlen(cases[i].value),
                                    &tok, &len);
    ck_assert_msg(rc == cases[i].rc, "\"%s\": %d, expected %d", cases[i].value,
                  rc, cases[i].rc);
    if (rc == 0) {
      ck_assert_uint_eq(len, strlen(cases[i].token));
      ck_assert_int_eq(memcmp(tok, cases[i].token, len), 0);
    }
  }
  /* The length given is the value's end: what follows is not read. */
  const char *tok = NULL;
  size_t len = 0;
  ck_assert_int_eq(mcp__http_bearer_parse("Bearer abc def", 10, &tok, &len), 0);
  ck_assert_uint_eq(len, 3);
  ck_assert_int_eq(memcmp(tok, "abc", 3), 0);
}
END_TEST

/* ---- challenges and the scope list of a 403 -------------------------------
 */

static void expect_challenge(const char *error, const char *scope,
                             const char *expected) {
  char *v = mcp__http_auth_challenge(http.auth, error, scope);
  ck_assert_ptr_nonnull(v);
  ck_assert_str_eq(v, expected);
  mcp_free(v);
}

START_TEST(challenges) {
  mcp_auth_options o = options();
  auth_start(&o);
  expect_challenge(NULL, NULL, "Bearer resource_metadata=\"" PRM_URL "\"");
  expect_challenge(
      "invalid_token", NULL,
      "Bearer error=\"invalid_token\", resource_metadata=\"" PRM_URL "\"");
  expect_challenge("insufficient_scope", "notes:write notes:admin",
                   "Bearer error=\"insufficient_scope\", scope=\"notes:write "
                   "notes:admin\", resource_metadata=\"" PRM_URL "\"");
  /* An empty scope list names no scope member. */
  expect_challenge(
      "insufficient_scope", "",
      "Bearer error=\"insufficient_scope\", resource_metadata=\"" PRM_URL "\"");
  tu_alloc_install(1);
  ck_assert_ptr_null(
      mcp__http_auth_challenge(http.auth, "invalid_token", NULL));
  tu_assert_no_leak(1);
  tu_alloc_remove();
}
END_TEST

/* The metadata URL inserts the well-known path before the resource's own
 * (RFC 9728 §3.1), and a resource at the root has none after it. */
START_TEST(challenge_for_a_root_resource) {
  mcp_auth_options o = options();
  o.resource = "http://127.0.0.1:8080/";
  auth_start(&o);
  expect_challenge(
      NULL, NULL,
      "Bearer resource_metadata=\"http://127.0.0.1:8080/.well-known/"
      "oauth-protected-resource\"");
  ck_assert_ptr_nonnull(strstr(logged, "http:// URI"));
}
END_TEST

static void expect_scope_list(const char *const *scopes, const char *expected) {
  char *out = (char *)"untouched";
  ck_assert_int_eq(mcp__http_auth_scope_list(scopes, &out), 0);
  if (expected == NULL) {
    ck_assert_ptr_null(out);
  } else {
    ck_assert_ptr_nonnull(out);
    ck_assert_str_eq(out, expected);
    mcp_free(out);
  }
}

START_TEST(scope_lists) {
  expect_scope_list((const char *const[]){"notes:read", NULL}, "notes:read");
  expect_scope_list((const char *const[]){"a", "b:c", "d/e", NULL},
                    "a b:c d/e");
  /* None to name, or one that is no scope token: the challenge names
   * none rather than a header-unsafe one. */
  expect_scope_list(NULL, NULL);
  expect_scope_list((const char *const[]){NULL}, NULL);
  expect_scope_list((const char *const[]){"a", "has space", NULL}, NULL);
  expect_scope_list((const char *const[]){"a", "", NULL}, NULL);
  expect_scope_list((const char *const[]){"quo\"te", NULL}, NULL);
  expect_scope_list((const char *const[]){"back\\slash", NULL}, NULL);
  expect_scope_list((const char *const[]){"line\r\nbreak", NULL}, NULL);
  expect_scope_list((const char *const[]){"caf\xc3\xa9", NULL}, NULL);

  char *out = (char *)"untouched";
  tu_alloc_install(1);
  ck_assert_int_eq(
      mcp__http_auth_scope_list((const char *const[]){"a", NULL}, &out),
      MCP_ENOMEM);
  ck_assert_ptr_null(out);
  tu_assert_no_leak(1);
  tu_alloc_remove();
}
END_TEST

/* ---- settings -------------------------------------------------------------
 */

/* o must be refused with MCP_EINVAL, saying why in the log. */
static void expect_refused(const mcp_auth_options *o, const char *why) {
  logged[0] = '\0';
  mcp__http_auth *a = (void *)logged; /* any pointer: set to NULL */
  ck_assert_int_eq(mcp__http_auth_new(&http, o, &a), MCP_EINVAL);
  ck_assert_ptr_null(a);
  ck_assert_msg(strstr(logged, why) != NULL, "log lacks \"%s\":\n%s", why,
                logged);
}

START_TEST(settings_refused_at_start) {
  static const char *const not_a_url[] = {"as.example.test", NULL};
  static const char *const quoted[] = {"https://as.example.test/\"", NULL};
  static const char *const empty[] = {NULL};
  static const char *const bad_scope[] = {"notes:read", "two words", NULL};
  mcp_auth_options o = options();
  o.resource = NULL;
  expect_refused(&o, "resource must be the endpoint's canonical http(s) URI");
  o.resource = "ftp://mcp.example.test/mcp";
  expect_refused(&o, "resource must be");
  o.resource = "https://mcp.example.test/mcp?x=1";
  expect_refused(&o, "resource must be");
  o.resource = "https://mcp.example.test/mcp#top";
  expect_refused(&o, "resource must be");
  o.resource = "https://user@mcp.example.test/mcp";
  expect_refused(&o, "resource must be");
  o.resource = "https:///mcp";
  expect_refused(&o, "resource must be");
  o.resource = "https://mcp.example.test/m p";
  expect_refused(&o, "resource must be");
  o = options();
  o.authorization_servers = NULL;
  expect_refused(&o, "authorization_servers must name at least one issuer");
  o.authorization_servers = empty;
  expect_refused(&o, "authorization_servers must name at least one issuer");
  o.authorization_servers = not_a_url;
  expect_refused(&o, "authorization_servers entry 0 is not acceptable");
  o.authorization_servers = quoted;
  expect_refused(&o, "authorization_servers entry 0 is not acceptable");
  o = options();
  o.scopes_supported = bad_scope;
  expect_refused(&o, "scopes_supported entry 1 is not acceptable");
  o = options();
  o.verify = NULL;
  expect_refused(&o, "give either a verify callback or the JWT settings");
  o.issuer = "https://as.example.test/\"x";
  expect_refused(&o, "issuer has characters refused");
  /* JWT settings the verifier cannot use: its reason is logged. */
  o.issuer = "https://as.example.test";
  expect_refused(&o, "auth: JWT verification needs keys");
}
END_TEST

START_TEST(settings_warnings) {
  static const char *const supported[] = {"notes:read", "offline_access", NULL};
  mcp_auth_options o = options();
  o.scopes_supported = supported;
  o.issuer = "https://as.example.test"; /* ignored: verify is set */
  auth_start(&o);
  ck_assert_ptr_nonnull(
      strstr(logged, "scopes_supported lists offline_access"));
  ck_assert_ptr_nonnull(strstr(logged, "the JWT settings are ignored"));
  const char *const *s = mcp__http_auth_supported(http.auth);
  ck_assert_ptr_nonnull(s);
  ck_assert_str_eq(s[0], "notes:read");
  ck_assert_str_eq(s[1], "offline_access");
  ck_assert_ptr_null(s[2]);
}
END_TEST

static bool auth_new_run(long n, void *user) {
  (void)n;
  mcp__http_auth *a = NULL;
  int rc = mcp__http_auth_new(&http, user, &a);
  if (rc == 0) {
    mcp__http_auth_free(a);
    return true;
  }
  ck_assert_int_eq(rc, MCP_ENOMEM);
  ck_assert_ptr_null(a);
  return false;
}

START_TEST(settings_out_of_memory) {
  mcp_auth_options o = options();
  tu_alloc_every(100, auth_new_run, failed_whole, &o);
}
END_TEST

/* ---- the metadata document and where it is served ------------------------ */

START_TEST(wellknown_paths) {
  mcp_auth_options o = options();
  auth_start(&o);
  ck_assert(mcp__http_auth_wellknown(http.auth,
                                     "/.well-known/oauth-protected-resource"));
  ck_assert(mcp__http_auth_wellknown(
      http.auth, "/.well-known/oauth-protected-resource/mcp"));
  ck_assert(!mcp__http_auth_wellknown(
      http.auth, "/.well-known/oauth-protected-resource/other"));
  ck_assert(!mcp__http_auth_wellknown(
      http.auth, "/.well-known/oauth-protected-resource/mcp/"));
  ck_assert(!mcp__http_auth_wellknown(http.auth, "/mcp"));
  ck_assert(!mcp__http_auth_wellknown(http.auth, "/.well-known/"));
}
END_TEST

/* Behind a proxy the resource's path differs from the endpoint's: the
 * metadata is served at both. */
START_TEST(wellknown_paths_behind_a_proxy) {
  mcp_auth_options o = options();
  o.resource = "https://proxy.example.test/api/v1/mcp";
  auth_start(&o);
  ck_assert(mcp__http_auth_wellknown(
      http.auth, "/.well-known/oauth-protected-resource/mcp"));
  ck_assert(mcp__http_auth_wellknown(
      http.auth, "/.well-known/oauth-protected-resource/api/v1/mcp"));
  ck_assert(!mcp__http_auth_wellknown(
      http.auth, "/.well-known/oauth-protected-resource/api"));
  expect_challenge(NULL, NULL,
                   "Bearer resource_metadata=\"https://proxy.example.test/"
                   ".well-known/oauth-protected-resource/api/v1/mcp\"");
}
END_TEST

static int tool_fn(mcp_call *call, void *ud) {
  (void)ud;
  return mcp_result_text(call, "ok");
}

static void add_tool(const char *name, const char *const *scopes) {
  mcp_tool t = TC_TOOL_RUN(tool_fn);
  t.name = name;
  t.scopes = scopes;
  ck_assert_int_eq(mcp_server_add_tool(srv, &t, NULL), 0);
}

static void expect_prm(const char *expected) {
  size_t len = 0;
  char *doc = mcp__http_auth_prm(&http, &len);
  ck_assert_ptr_nonnull(doc);
  ck_assert_uint_eq(len, strlen(doc));
  cJSON *m = cJSON_Parse(doc);
  ck_assert_ptr_nonnull(m);
  tu_assert_exact(m, expected);
  cJSON_Delete(m);
  mcp_free(doc);
}

START_TEST(metadata_document) {
  mcp_auth_options o = options();
  auth_start(&o);
  /* No tool needs a scope: scopes_supported is left out. */
  expect_prm("{\"resource\":\"" RESOURCE "\",\"authorization_servers\":["
             "\"https://as.example.test\"],\"bearer_methods_supported\":["
             "\"header\"]}");
  /* The union of the tools' scopes, sorted, without offline_access. */
  add_tool("write",
           (const char *const[]){"notes:write", "offline_access", NULL});
  add_tool("read", (const char *const[]){"notes:read", "notes:write", NULL});
  expect_prm("{\"resource\":\"" RESOURCE "\",\"authorization_servers\":["
             "\"https://as.example.test\"],\"scopes_supported\":["
             "\"notes:read\",\"notes:write\"],\"bearer_methods_supported\":["
             "\"header\"]}");
}
END_TEST

static bool prm_run(long n, void *user) {
  (void)n;
  (void)user;
  size_t len = 0;
  char *doc = mcp__http_auth_prm(&http, &len);
  mcp_free(doc);
  return doc != NULL;
}

START_TEST(metadata_document_configured_scopes) {
  static const char *const servers[] = {"https://a.example.test",
                                        "https://b.example.test", NULL};
  static const char *const supported[] = {"offline_access", "x:y", NULL};
  mcp_auth_options o = options();
  o.authorization_servers = servers;
  o.scopes_supported = supported;
  auth_start(&o);
  add_tool("read", (const char *const[]){"notes:read", NULL});
  expect_prm("{\"resource\":\"" RESOURCE "\",\"authorization_servers\":["
             "\"https://a.example.test\",\"https://b.example.test\"],"
             "\"scopes_supported\":[\"x:y\"],\"bearer_methods_supported\":["
             "\"header\"]}");
  /* Out of memory: no document, nothing left allocated. */
  tu_alloc_every(100, prm_run, failed_whole, NULL);
}
END_TEST

/* ---- the caller a token makes ------------------------------------------- */

static mcp__http_auth_result authenticate(const char *value,
                                          mcp__http_caller *c) {
  *c = (mcp__http_caller){0};
  return mcp__http_authenticate(&http, value, strlen(value), c);
}

START_TEST(caller_from_a_verified_token) {
  mcp_auth_options o = options();
  auth_start(&o);
  mcp__http_caller c;
  ck_assert_int_eq(authenticate("Bearer good-b+a++a", &c), MCP__HTTP_AUTH_OK);
  ck_assert(c.authenticated);
  ck_assert_str_eq(c.principal.subject, "alice");
  ck_assert(!c.principal.all_scopes);
  /* The scopes as granted; the key sorted, without duplicates. */
  ck_assert_str_eq(c.principal.scopes[0], "b");
  ck_assert_str_eq(c.principal.scopes[1], "a");
  ck_assert_str_eq(c.principal.scopes[2], "a");
  ck_assert_ptr_null(c.principal.scopes[3]);
  ck_assert_str_eq(c.scope_key, "a b");
  mcp__http_caller_free(&c);
  ck_assert_ptr_null(c.info);

  ck_assert_int_eq(authenticate("Bearer good-", &c), MCP__HTTP_AUTH_OK);
  ck_assert_ptr_null(c.principal.scopes[0]);
  ck_assert_str_eq(c.scope_key, "");
  mcp__http_caller_free(&c);
}
END_TEST

/* A token that names nobody is known by its digest: two such tokens never
 * share a subject, and the subject says nothing of the token. */
START_TEST(caller_without_subject) {
  mcp_auth_options o = options();
  auth_start(&o);
  mcp__http_caller c, again, other;
  ck_assert_int_eq(authenticate("Bearer anon", &c), MCP__HTTP_AUTH_OK);
  ck_assert_str_eq(c.principal.subject,
                   "token-sha256:VDDu7YWcrWHZJQl-xPUyRhzPGra5gCsJoxO-FHik1hQ");
  ck_assert_ptr_null(strstr(c.principal.subject, "anon"));
  ck_assert_int_eq(authenticate("Bearer anon", &again), MCP__HTTP_AUTH_OK);
  ck_assert_str_eq(again.principal.subject, c.principal.subject);
  ck_assert_int_eq(authenticate("Bearer anon2", &other), MCP__HTTP_AUTH_OK);
  ck_assert_str_ne(other.principal.subject, c.principal.subject);
  mcp__http_caller_free(&c);
  mcp__http_caller_free(&again);
  mcp__http_caller_free(&other);
}
END_TEST

START_TEST(callers_refused) {
  mcp_auth_options o = options();
  auth_start(&o);
  mcp__http_caller c;
  ck_assert_int_eq(authenticate("Basic dXNlcg==", &c), MCP__HTTP_AUTH_MISSING);
  ck_assert_ptr_null(c.info);
  ck_assert_int_eq(authenticate("Bearer", &c), MCP__HTTP_AUTH_MALFORMED);
  ck_assert_int_eq(authenticate("Bearer two words", &c),
                   MCP__HTTP_AUTH_MALFORMED);
  ck_assert_str_eq(logged, "");
  ck_assert_int_eq(authenticate("Bearer forged", &c), MCP__HTTP_AUTH_INVALID);
  ck_assert(!c.authenticated);
  ck_assert_ptr_null(c.info);
  ck_assert_ptr_null(c.scope_key);
  /* The refusal says why, never the token. */
  ck_assert_ptr_nonnull(strstr(logged, "token refused: the verifier said no"));
  ck_assert_ptr_null(strstr(logged, "forged"));
}
END_TEST

/* A custom verifier's expiry is checked too. */
START_TEST(caller_expired_by_the_verifier) {
  mcp_auth_options o = options();
  auth_start(&o);
  mcp__http_caller c;
  ck_assert_int_eq(authenticate("Bearer stale", &c), MCP__HTTP_AUTH_INVALID);
  ck_assert_ptr_null(c.info);
  ck_assert_ptr_nonnull(strstr(logged, "token refused: the token has expired"));
}
END_TEST

/* A token longer than 16 KiB is refused unread. */
START_TEST(caller_token_too_long) {
  mcp_auth_options o = options();
  auth_start(&o);
  size_t n = 7 + ((size_t)16 << 10) + 1;
  char *v = malloc(n + 1);
  ck_assert_ptr_nonnull(v);
  memcpy(v, "Bearer ", 7);
  memset(v + 7, 'g', n - 7);
  v[n] = '\0';
  mcp__http_caller c;
  ck_assert_int_eq(authenticate(v, &c), MCP__HTTP_AUTH_INVALID);
  ck_assert_ptr_null(c.info);
  free(v);
}
END_TEST

static bool authenticate_run(long n, void *user) {
  (void)n;
  (void)user;
  mcp__http_caller c;
  mcp__http_auth_result r = authenticate("Bearer good-x+y", &c);
  if (r == MCP__HTTP_AUTH_OK) {
    mcp__http_caller_free(&c);
    return true;
  }
  ck_assert_int_eq(r, MCP__HTTP_AUTH_NOMEM);
  ck_assert_ptr_null(c.info);
  return false;
}

START_TEST(caller_out_of_memory) {
  mcp_auth_options o = options();
  auth_start(&o);
  tu_alloc_every(100, authenticate_run, failed_whole, NULL);
}
END_TEST

int main(void) {
  Suite *s = suite_create("http_auth_rules");
  TCase *t = tu_tcase(s, "header", setup, teardown, 0);
  tcase_add_test(t, bearer_header_read_strictly);
  t = tu_tcase(s, "challenges", setup, teardown, 0);
  tcase_add_test(t, challenges);
  tcase_add_test(t, challenge_for_a_root_resource);
  tcase_add_test(t, scope_lists);
  t = tu_tcase(s, "settings", setup, teardown, 0);
  tcase_add_test(t, settings_refused_at_start);
  tcase_add_test(t, settings_warnings);
  tcase_add_test(t, settings_out_of_memory);
  t = tu_tcase(s, "metadata", setup, teardown, 0);
  tcase_add_test(t, wellknown_paths);
  tcase_add_test(t, wellknown_paths_behind_a_proxy);
  tcase_add_test(t, metadata_document);
  tcase_add_test(t, metadata_document_configured_scopes);
  t = tu_tcase(s, "callers", setup, teardown, 0);
  tcase_add_test(t, caller_from_a_verified_token);
  tcase_add_test(t, caller_without_subject);
  tcase_add_test(t, callers_refused);
  tcase_add_test(t, caller_expired_by_the_verifier);
  tcase_add_test(t, caller_token_too_long);
  tcase_add_test(t, caller_out_of_memory);
  return tu_run(s);
}
