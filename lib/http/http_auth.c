/* The OAuth 2.1 resource-server duties of the HTTP transport: the
 * authorization settings checked at start, the Authorization header read
 * strictly (RFC 6750 §2.1), the token verified (the built-in JWT verifier
 * of lib/jwt/jwt.c, or the application's own), the caller it names, the
 * WWW-Authenticate challenges (RFC 6750 §3, RFC 9728 §5.1) and the
 * protected resource metadata document (RFC 9728 §3).
 *
 * The transport decides nothing about tools here: which scopes a call
 * needs is the engine's policy, the same as on stdio; http.c turns the
 * engine's refusal into a 403 with the challenge built below. Tokens are
 * never logged, never kept past the request that carried them, and never
 * reach a handler (it sees the principal: subject and scopes). */
#include <cjson/cJSON.h>
#include <openssl/crypto.h>
#include <openssl/sha.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "http_int.h"
#include "jwt.h"

#define WELL_KNOWN "/.well-known/oauth-protected-resource"
/* Longest bearer token read; a longer one is refused unread. */
#define MAX_TOKEN ((size_t)16 << 10)

struct mcp__http_auth {
  char *resource; /* exactly as configured: PRM's "resource" */
  char *prm_url;  /* the path-inserted metadata URL of the resource */
  /* Local paths the metadata is served at: the root form, the
   * path-inserted form for the endpoint, and for the resource's path when
   * that differs (a proxy in front). NULL when not needed. */
  char *wk_endpoint, *wk_resource;
  char **servers;   /* authorization_servers */
  char **supported; /* scopes_supported as configured; NULL = the union
                       of the tools' scopes */
  mcp_token_verify_fn verify;
  void *verify_data;
  mcp__jwt *jwt;
  /* Refusals are logged at most once a second, the rest counted, so a
   * flood of bad tokens cannot flood the log. */
  pthread_mutex_t refusals;
  uint64_t refused_ms; /* when the last refusal was logged; 0 = never */
  unsigned suppressed; /* refusals not logged since */
};

/* ---- small helpers ------------------------------------------------------- */

static char *dup_n(const char *s, size_t n) {
  char *d = mcp_malloc(n + 1);
  if (d) {
    memcpy(d, s, n);
    d[n] = '\0';
  }
  return d;
}

/* A RFC 6749 §3.3 scope token: %x21 / %x23-5B / %x5D-7E, at least one. */
static bool scope_token(const char *s) {
  if (*s == '\0')
    return false;
  for (const unsigned char *p = (const unsigned char *)s; *p; p++)
    if (*p < 0x21 || *p > 0x7e || *p == '"' || *p == '\\')
      return false;
  return true;
}

/* Text that may stand inside a quoted-string of a header and a JSON string
 * unescaped: visible ASCII without '"' and '\', no space, no control
 * character (no CR/LF: no header injection). */
static bool header_safe(const char *s) { return scope_token(s); }

/* Splits an http(s) URL without query or fragment into its origin
 * (scheme://authority) and path. Returns false for anything else. */
static bool split_url(const char *url, size_t *origin_len, const char **path) {
  size_t scheme;
  if (strncmp(url, "https://", 8) == 0)
    scheme = 8;
  else if (strncmp(url, "http://", 7) == 0)
    scheme = 7;
  else
    return false;
  if (!header_safe(url) || strpbrk(url, "?#") != NULL)
    return false;
  const char *authority = url + scheme;
  size_t n = strcspn(authority, "/");
  if (n == 0 || memchr(authority, '@', n) != NULL)
    return false;
  *origin_len = scheme + n;
  *path = authority + n;
  return true;
}

/* ---- configuration ------------------------------------------------------- */

/* Copies list after checking each entry with ok; a refused entry is named
 * in the log. Returns 0, MCP_EINVAL or MCP_ENOMEM. */
static int copy_checked(mcp_http *h, const char *const *list, const char *what,
                        bool (*ok)(const char *), char ***out) {
  *out = NULL;
  for (size_t i = 0; list && list[i]; i++) {
    if (!ok(list[i])) {
      mcp__http_log(h, MCP_LOG_ERROR,
                    "auth: %s entry %zu is not acceptable (quotes, "
                    "backslashes, spaces and control characters are "
                    "refused)",
                    what, i);
      return MCP_EINVAL;
    }
  }
  return mcp__http_list_copy(list, out);
}

static bool url_ok(const char *s) {
  size_t origin;
  const char *path;
  return split_url(s, &origin, &path);
}

void mcp__http_auth_free(mcp__http_auth *a) {
  if (a == NULL)
    return;
  pthread_mutex_destroy(&a->refusals);
  mcp__jwt_free(a->jwt);
  mcp_free(a->resource);
  mcp_free(a->prm_url);
  mcp_free(a->wk_endpoint);
  mcp_free(a->wk_resource);
  mcp__http_list_free(a->servers);
  mcp__http_list_free(a->supported);
  mcp_free(a);
}

/* "/.well-known/oauth-protected-resource" + path, or NULL for a path that
 * is empty or "/" (the root form covers it). */
static int well_known(const char *path, size_t n, char **out) {
  *out = NULL;
  if (n == 0 || (n == 1 && path[0] == '/'))
    return 0;
  size_t k = sizeof WELL_KNOWN - 1;
  if ((*out = mcp_malloc(k + n + 1)) == NULL)
    return MCP_ENOMEM;
  memcpy(*out, WELL_KNOWN, k);
  memcpy(*out + k, path, n);
  (*out)[k + n] = '\0';
  return 0;
}

/* The options mcp__http_auth_new refuses, each logged with its sentence: a
 * resource that is not a canonical http(s) URI, no authorization server,
 * no way to verify tokens, an issuer unfit for a header. Sets the
 * resource's origin length and path. Returns 0 or MCP_EINVAL. */
static int check_auth_options(mcp_http *h, const mcp_auth_options *o,
                              size_t *origin_len, const char **rpath) {
  const char *why = NULL;
  if (o->resource == NULL || !split_url(o->resource, origin_len, rpath))
    why = "auth: resource must be the endpoint's canonical http(s) URI, "
          "without query, fragment, quotes, backslashes, spaces or control "
          "characters";
  else if (o->authorization_servers == NULL ||
           o->authorization_servers[0] == NULL)
    why = "auth: authorization_servers must name at least one issuer";
  else if (o->verify == NULL && o->issuer == NULL)
    why = "auth: give either a verify callback or the JWT settings (issuer "
          "and keys)";
  else if (o->issuer && !header_safe(o->issuer))
    why = "auth: issuer has characters refused (quotes, backslashes, "
          "spaces, control characters)";
  if (why == NULL)
    return 0;
  mcp__http_log(h, MCP_LOG_ERROR, "%s", why);
  return MCP_EINVAL;
}

/* Copies the authorization servers and the supported scopes, each checked;
 * warns about offline_access, which the metadata leaves out. Returns 0 or
 * an MCP_E* code. */
static int copy_lists(mcp_http *h, const mcp_auth_options *o,
                      mcp__http_auth *a) {
  int rc = copy_checked(h, o->authorization_servers, "authorization_servers",
                        url_ok, &a->servers);
  if (rc == 0)
    rc = copy_checked(h, o->scopes_supported, "scopes_supported", scope_token,
                      &a->supported);
  if (rc)
    return rc;
  for (size_t i = 0; a->supported && a->supported[i]; i++)
    if (strcmp(a->supported[i], "offline_access") == 0)
      mcp__http_log(h, MCP_LOG_WARNING,
                    "auth: scopes_supported lists offline_access, which the "
                    "metadata leaves out (a resource never needs it)");
  return 0;
}

/* The resource and the addresses of its metadata: the URL the challenge
 * names (origin, well-known prefix, resource path) and the well-known
 * paths served for the endpoint and for the resource, the latter dropped
 * when it is the same. Returns 0 or MCP_ENOMEM. */
static int metadata_urls(mcp_http *h, const mcp_auth_options *o,
                         mcp__http_auth *a, size_t origin_len,
                         const char *rpath) {
  size_t wkn = sizeof WELL_KNOWN - 1, pn = strlen(rpath);
  if (pn == 1) /* "https://host/" is the root */
    pn = 0;
  if ((a->resource = mcp__strdup(o->resource)) == NULL ||
      (a->prm_url = mcp_malloc(origin_len + wkn + pn + 1)) == NULL ||
      well_known(h->path, strlen(h->path), &a->wk_endpoint) != 0 ||
      well_known(rpath, pn, &a->wk_resource) != 0)
    return MCP_ENOMEM;
  memcpy(a->prm_url, o->resource, origin_len);
  memcpy(a->prm_url + origin_len, WELL_KNOWN, wkn);
  memcpy(a->prm_url + origin_len + wkn, rpath, pn);
  a->prm_url[origin_len + wkn + pn] = '\0';
  if (a->wk_resource && a->wk_endpoint &&
      strcmp(a->wk_resource, a->wk_endpoint) == 0) {
    mcp_free(a->wk_resource);
    a->wk_resource = NULL;
  }
  return 0;
}

/* How tokens are verified: the caller's callback (the JWT settings are
 * then ignored, with a warning) or the JWT verifier, whose skipped keys
 * are logged. Returns 0, MCP_EINVAL or MCP_ENOMEM. */
static int set_verifier(mcp_http *h, const mcp_auth_options *o,
                        mcp__http_auth *a) {
  if (o->verify) {
    a->verify = o->verify;
    a->verify_data = o->verify_data;
    if (o->issuer || o->jwks || o->jwks_file || o->jwks_fetch ||
        o->hs256_secret)
      mcp__http_log(h, MCP_LOG_WARNING,
                    "auth: a verify callback is set, so the JWT settings "
                    "are ignored");
    return 0;
  }
  char err[256] = "";
  int rc = mcp__jwt_new(o, &a->jwt, err, sizeof err);
  if (rc) {
    if (rc != MCP_ENOMEM)
      mcp__http_log(h, MCP_LOG_ERROR, "auth: %s",
                    err[0] ? err : "the JWT settings are not usable");
    return rc == MCP_ENOMEM ? MCP_ENOMEM : MCP_EINVAL;
  }
  if (err[0]) /* keys it skipped, and why */
    mcp__http_log(h, MCP_LOG_WARNING, "auth: %s", err);
  return 0;
}

int mcp__http_auth_new(mcp_http *h, const mcp_auth_options *o,
                       mcp__http_auth **out) {
  *out = NULL;
  size_t origin_len;
  const char *rpath;
  int rc = check_auth_options(h, o, &origin_len, &rpath);
  if (rc)
    return rc;
  mcp__http_auth *a = mcp_calloc(1, sizeof *a);
  if (a == NULL)
    return MCP_ENOMEM;
  if (pthread_mutex_init(&a->refusals, NULL) != 0) {
    mcp_free(a);
    return MCP_ENOMEM;
  }
  if ((rc = copy_lists(h, o, a)) != 0 ||
      (rc = metadata_urls(h, o, a, origin_len, rpath)) != 0 ||
      (rc = set_verifier(h, o, a)) != 0) {
    mcp__http_auth_free(a);
    return rc;
  }
  if (strncmp(o->resource, "http://", 7) == 0)
    mcp__http_log(h, MCP_LOG_INFO,
                  "auth: the resource is an http:// URI; deployments serve "
                  "it over https");
  *out = a;
  return 0;
}

const char *const *mcp__http_auth_supported(const mcp__http_auth *a) {
  return (const char *const *)a->supported;
}

/* ---- the metadata document ----------------------------------------------- */

bool mcp__http_auth_wellknown(const mcp__http_auth *a, const char *url) {
  return strcmp(url, WELL_KNOWN) == 0 ||
         (a->wk_endpoint && strcmp(url, a->wk_endpoint) == 0) ||
         (a->wk_resource && strcmp(url, a->wk_resource) == 0);
}

/* Adds the union of the tools' scopes (the default scopes_supported). */
static int add_tool_scopes(mcp_server *srv, cJSON *arr) {
  char small[1024];
  long need = mcp_server_scopes(srv, small, sizeof small);
  if (need < 0)
    return (int)need;
  char *all = small;
  if ((size_t)need >= sizeof small) {
    if ((all = mcp_malloc((size_t)need + 1)) == NULL)
      return MCP_ENOMEM;
    /* Tools added meanwhile may make it longer: a truncated list is
     * still a list of whole scopes only up to the last space. */
    long again = mcp_server_scopes(srv, all, (size_t)need + 1);
    if (again < 0) {
      mcp_free(all);
      return (int)again;
    }
    if (again > need) {
      char *sp = strrchr(all, ' ');
      if (sp)
        *sp = '\0';
    }
  }
  int rc = 0;
  for (char *save = NULL, *tok = strtok_r(all, " ", &save); tok && rc == 0;
       tok = strtok_r(NULL, " ", &save)) {
    if (strcmp(tok, "offline_access") == 0)
      continue;
    if (!cJSON_AddItemToArray(arr, cJSON_CreateString(tok)))
      rc = MCP_ENOMEM;
  }
  if (all != small)
    mcp_free(all);
  return rc;
}

char *mcp__http_auth_prm(const mcp_http *h, size_t *len) {
  const mcp__http_auth *a = h->auth;
  cJSON *doc = cJSON_CreateObject();
  cJSON *servers = cJSON_CreateArray();
  cJSON *scopes = cJSON_CreateArray();
  cJSON *methods = cJSON_CreateArray();
  char *text = NULL;
  if (doc == NULL || servers == NULL || scopes == NULL || methods == NULL)
    goto done;
  /* cJSON_AddStringToObject frees the string when the member cannot be
   * added; cJSON_AddItemToObject would leave it to the caller. */
  cJSON *server_list = servers; /* doc's from here on */
  if (!cJSON_AddStringToObject(doc, "resource", a->resource) ||
      !cJSON_AddItemToObject(doc, "authorization_servers", servers))
    goto done;
  servers = NULL;
  for (size_t i = 0; a->servers[i]; i++)
    if (!cJSON_AddItemToArray(server_list, cJSON_CreateString(a->servers[i])))
      goto done;
  if (a->supported) {
    for (size_t i = 0; a->supported[i]; i++)
      if (strcmp(a->supported[i], "offline_access") != 0 &&
          !cJSON_AddItemToArray(scopes, cJSON_CreateString(a->supported[i])))
        goto done;
  } else if (add_tool_scopes(h->srv, scopes) != 0) {
    goto done;
  }
  /* No scopes at all: the member is left out, so a client asks for none
   * rather than for an empty list. */
  if (cJSON_GetArraySize(scopes) > 0) {
    if (!cJSON_AddItemToObject(doc, "scopes_supported", scopes))
      goto done;
    scopes = NULL;
  }
  if (!cJSON_AddItemToArray(methods, cJSON_CreateString("header")) ||
      !cJSON_AddItemToObject(doc, "bearer_methods_supported", methods))
    goto done;
  methods = NULL;
  text = cJSON_PrintUnformatted(doc);
done:
  cJSON_Delete(doc);
  cJSON_Delete(servers);
  cJSON_Delete(scopes);
  cJSON_Delete(methods);
  if (text == NULL)
    return NULL;
  /* The body goes to libmicrohttpd, which frees it with mcp_free: a copy
   * of cJSON's text, which is cJSON_free's to free. */
  *len = strlen(text);
  char *copy = dup_n(text, *len);
  cJSON_free(text);
  return copy;
}

/* ---- challenges ---------------------------------------------------------- */

char *mcp__http_auth_challenge(const mcp__http_auth *a, const char *error,
                               const char *scope) {
  /* Every piece was checked to be header-safe: the resource URL at start,
   * error is a constant, scope is made of scope tokens. */
  size_t cap = 64 + strlen(a->prm_url) + (error ? strlen(error) : 0) +
               (scope ? strlen(scope) : 0);
  char *v = mcp_malloc(cap);
  if (v == NULL)
    return NULL;
  int n = snprintf(v, cap, "Bearer ");
  if (error)
    n += snprintf(v + n, cap - (size_t)n, "error=\"%s\", ", error);
  if (scope && *scope)
    n += snprintf(v + n, cap - (size_t)n, "scope=\"%s\", ", scope);
  snprintf(v + n, cap - (size_t)n, "resource_metadata=\"%s\"", a->prm_url);
  return v;
}

/* Writes the n words at words into out, separated by single spaces and
 * NUL-terminated, skipping a word equal to the one before it when
 * skip_repeats (a sorted list then comes out without duplicates). out has
 * room for every word, a separator each and the NUL. */
static void join_words(char *out, const char *const *words, size_t n,
                       bool skip_repeats) {
  size_t o = 0;
  for (size_t i = 0; i < n; i++) {
    if (skip_repeats && i && strcmp(words[i], words[i - 1]) == 0)
      continue;
    size_t len = strlen(words[i]);
    if (o)
      out[o++] = ' ';
    memcpy(out + o, words[i], len);
    o += len;
  }
  out[o] = '\0';
}

int mcp__http_auth_scope_list(const char *const *scopes, char **out) {
  *out = NULL;
  size_t need = 1;
  for (size_t i = 0; scopes && scopes[i]; i++) {
    if (!scope_token(scopes[i]))
      return 0;
    need += strlen(scopes[i]) + 1;
  }
  if (need == 1)
    return 0;
  char *list = mcp_malloc(need);
  if (list == NULL)
    return MCP_ENOMEM;
  size_t n = 0;
  while (scopes[n])
    n++;
  join_words(list, scopes, n, false);
  *out = list;
  return 0;
}

/* ---- the Authorization header -------------------------------------------- */

static bool token68_char(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
         (c >= '0' && c <= '9') || c == '-' || c == '.' || c == '_' ||
         c == '~' || c == '+' || c == '/';
}

/* Reads "Bearer" SP token68 (RFC 6750 §2.1; the scheme's case does not
 * matter, exactly one space, nothing after). Returns 0 with the token, 1
 * for another scheme (no bearer token was presented), -1 when malformed. */
int mcp__http_bearer_parse(const char *v, size_t n, const char **token,
                           size_t *token_len) {
  size_t scheme = 0;
  while (scheme < n && v[scheme] != ' ' && v[scheme] != '\t')
    scheme++;
  if (scheme == 0)
    return -1;
  if (scheme != 6 || strncasecmp(v, "Bearer", 6) != 0)
    return 1;
  if (scheme + 1 >= n || v[scheme] != ' ')
    return -1; /* "Bearer" alone, or a tab */
  const char *t = v + scheme + 1;
  size_t tn = n - scheme - 1, i = 0;
  while (i < tn && token68_char(t[i]))
    i++;
  if (i == 0)
    return -1; /* a second space, or nothing usable */
  while (i < tn && t[i] == '=')
    i++;
  if (i != tn)
    return -1;
  *token = t;
  *token_len = tn;
  return 0;
}

/* Sorted, without duplicates, joined by single spaces: the same set of
 * scopes always gives the same text. */
static int cmp_str(const void *x, const void *y) {
  return strcmp(*(const char *const *)x, *(const char *const *)y);
}

void mcp__http_caller_free(mcp__http_caller *c) {
  mcp_free(c->info);
  mcp_free(c->scopes);
  mcp_free(c->scope_key);
  *c = (mcp__http_caller){0};
}

/* The subject a token without "sub" is known by: a digest of the token
 * itself, so that no other token (sub-less ones included) shares its
 * sessions, requestStates or rate limit, and nothing of the token can be
 * read from it. */
#define TOKEN_SUBJECT_PREFIX "token-sha256:"
static void token_subject(const char *token, size_t len, char *out,
                          size_t size) {
  unsigned char digest[SHA256_DIGEST_LENGTH];
  char text[48];
  SHA256((const unsigned char *)token, len, digest);
  mcp__base64_encode(text, digest, sizeof digest, MCP__BASE64_URL);
  snprintf(out, size, "%s%s", TOKEN_SUBJECT_PREFIX, text);
  OPENSSL_cleanse(digest, sizeof digest);
}

/* Builds the principal from a verified token's info. */
static int caller_from_info(mcp__http_caller *c) {
  mcp_token_info *info = c->info;
  info->subject[sizeof info->subject - 1] = '\0';
  info->scopes[sizeof info->scopes - 1] = '\0';
  size_t n = 0;
  for (char *p = info->scopes; *p;) {
    while (*p == ' ')
      p++;
    if (*p == '\0')
      break;
    n++;
    while (*p && *p != ' ')
      p++;
  }
  const char **list = mcp_calloc(n + 1, sizeof *list);
  const char **sorted = mcp_calloc(n + 1, sizeof *sorted);
  size_t keylen = strlen(info->scopes) + 1;
  char *key = mcp_malloc(keylen);
  if (list == NULL || sorted == NULL || key == NULL) {
    mcp_free(list);
    mcp_free(sorted);
    mcp_free(key);
    return MCP_ENOMEM;
  }
  size_t k = 0;
  for (char *p = info->scopes; *p;) {
    while (*p == ' ')
      *p++ = '\0';
    if (*p == '\0')
      break;
    list[k++] = p;
    while (*p && *p != ' ')
      p++;
  }
  memcpy(sorted, list, n * sizeof *list);
  qsort(sorted, n, sizeof *sorted, cmp_str);
  join_words(key, sorted, n, true);
  mcp_free(sorted);
  c->scopes = list;
  c->scope_key = key;
  c->principal = (mcp_principal){
      .subject = info->subject[0] ? info->subject : NULL,
      .scopes = list,
      .all_scopes = false,
  };
  c->expires_at = info->expires_at;
  return 0;
}

/* Says why a token was refused (never the token) at a level a developer
 * sees with the default log: a wrong audience or an unknown key is the
 * usual first-day mistake. At most one line a second; the others are
 * counted into the next line. */
static void refused(mcp_http *h, const char *why) {
  mcp__http_auth *a = h->auth;
  uint64_t now = mcp__http_now_ms();
  pthread_mutex_lock(&a->refusals);
  bool say = a->refused_ms == 0 || now - a->refused_ms >= 1000;
  unsigned more = 0;
  if (say) {
    more = a->suppressed;
    a->suppressed = 0;
    a->refused_ms = now ? now : 1;
  } else {
    a->suppressed++;
  }
  pthread_mutex_unlock(&a->refusals);
  if (!say)
    return;
  char expected[300];
  if (strcmp(why, "wrong audience") == 0) {
    snprintf(expected, sizeof expected,
             "wrong audience (this server takes tokens whose aud is \"%s\")",
             a->resource);
    why = expected;
  }
  if (more)
    mcp__http_log(h, MCP_LOG_WARNING,
                  "token refused: %s (and %u more refusals in the last "
                  "second or so)",
                  why, more);
  else
    mcp__http_log(h, MCP_LOG_WARNING, "token refused: %s", why);
}

mcp__http_auth_result mcp__http_authenticate(mcp_http *h, const char *value,
                                             size_t len, mcp__http_caller *c) {
  const mcp__http_auth *a = h->auth;
  const char *tok;
  size_t tok_len;
  int parsed = mcp__http_bearer_parse(value, len, &tok, &tok_len);
  if (parsed > 0)
    return MCP__HTTP_AUTH_MISSING;
  if (parsed < 0)
    return MCP__HTTP_AUTH_MALFORMED;
  if (tok_len > MAX_TOKEN)
    return MCP__HTTP_AUTH_INVALID;
  char *token = dup_n(tok, tok_len);
  c->info = mcp_calloc(1, sizeof *c->info);
  if (token == NULL || c->info == NULL) {
    mcp_free(token);
    mcp__http_caller_free(c);
    return MCP__HTTP_AUTH_NOMEM;
  }
  int rc;
  char why[256] = "";
  if (a->verify)
    rc = a->verify(token, c->info, a->verify_data) == 0 ? 0 : -1;
  else
    rc = mcp__jwt_verify(a->jwt, token, c->info, why, sizeof why);
  /* A valid token that names nobody is named by its digest. */
  if (rc == 0 && c->info->subject[0] == '\0')
    token_subject(token, tok_len, c->info->subject, sizeof c->info->subject);
  /* The token is not needed past this point: wipe it. */
  OPENSSL_cleanse(token, tok_len);
  mcp_free(token);
  /* A custom verifier's word on expiry is checked too (the JWT verifier
   * checks "exp" itself, with its leeway). */
  if (rc == 0 && a->verify && c->info->expires_at > 0 &&
      (long long)time(NULL) >= c->info->expires_at) {
    rc = -1;
    snprintf(why, sizeof why, "the token has expired");
  }
  if (rc != 0) {
    why[sizeof why - 1] = '\0';
    refused(h, why[0] ? why : "the verifier said no");
    mcp__http_caller_free(c);
    return rc == MCP_ENOMEM ? MCP__HTTP_AUTH_NOMEM : MCP__HTTP_AUTH_INVALID;
  }
  if (caller_from_info(c) != 0) {
    mcp__http_caller_free(c);
    return MCP__HTTP_AUTH_NOMEM;
  }
  c->authenticated = true;
  return MCP__HTTP_AUTH_OK;
}

/* ---- keys at run time ---------------------------------------------------- */

int mcp_http_set_jwks(mcp_http *h, const char *jwks) {
  if (h == NULL)
    return MCP_EINVAL;
  if (h->auth == NULL || h->auth->jwt == NULL)
    return MCP_ESTATE;
  char err[256] = "";
  int rc = jwks ? mcp__jwt_set_jwks(h->auth->jwt, jwks, strlen(jwks), err,
                                    sizeof err)
                : mcp__jwt_reload_file(h->auth->jwt, err, sizeof err);
  if (rc != 0)
    mcp__http_log(h, MCP_LOG_WARNING,
                  "auth: the new key set is not used (the last good one "
                  "stays): %s",
                  err[0] ? err : mcp_strerror(rc));
  else if (err[0])
    mcp__http_log(h, MCP_LOG_WARNING, "auth: %s", err);
  return rc;
}
