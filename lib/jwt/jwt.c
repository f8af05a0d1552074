/* The JWT access-token verifier (jwt.h): compact JWS tokens checked with
 * OpenSSL 3's EVP API against a key set, then their claims against the
 * configuration.
 *
 * Order of the checks: sizes and shape first, then the header (alg, crit,
 * typ, kid), then the signature, and only then the payload's JSON and
 * claims, so an unsigned payload never costs more than its base64 decode.
 * Every rule refuses what it cannot read; nothing is guessed at. */
#include <errno.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/rsa.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "jwt_int.h"

#define DEFAULT_LEEWAY_S 60
#define DEFAULT_REFRESH_S 60
/* How long a verification waits for another thread's JWKS fetch. */
#define FETCH_WAIT_S 10
/* Decoded signature: RSA up to 8192 bits. */
#define MAX_SIG 1024
#define MIN_SECRET 32

/* ---- algorithms ---------------------------------------------------------- */

typedef struct alg_def {
  const char *name;
  unsigned kinds; /* key types that may verify it (0: the HS256 secret) */
  const char *md; /* digest; NULL for EdDSA, which hashes internally */
  bool pss;
} alg_def;

static const alg_def algs[] = {
    {"RS256", MCP__JWK_RSA, "SHA256", false},
    {"RS384", MCP__JWK_RSA, "SHA384", false},
    {"RS512", MCP__JWK_RSA, "SHA512", false},
    {"PS256", MCP__JWK_RSA, "SHA256", true},
    {"PS384", MCP__JWK_RSA, "SHA384", true},
    {"PS512", MCP__JWK_RSA, "SHA512", true},
    {"ES256", MCP__JWK_P256, "SHA256", false},
    {"ES384", MCP__JWK_P384, "SHA384", false},
    {"ES512", MCP__JWK_P521, "SHA512", false},
    {"EdDSA", MCP__JWK_ED25519, NULL, false},
    {"Ed25519", MCP__JWK_ED25519, NULL, false}, /* RFC 9864's name */
    {"HS256", 0, "SHA256", false},
};

static const alg_def *find_alg(const char *name, size_t len) {
  for (size_t i = 0; i < sizeof algs / sizeof algs[0]; i++)
    if (strlen(algs[i].name) == len && memcmp(algs[i].name, name, len) == 0)
      return &algs[i];
  return NULL;
}

unsigned mcp__jwt_alg_kinds(const char *alg, size_t len) {
  const alg_def *a = find_alg(alg, len);
  return a ? a->kinds : 0;
}

/* ---- the verifier -------------------------------------------------------- */

struct mcp__jwt {
  char *issuer, *resource, *scope_claim, *jwks_file;
  unsigned char *secret;
  size_t secret_len;
  mcp_jwks_fetch_fn fetch;
  void *fetch_data;
  unsigned long long refresh_ms;
  long long leeway_s;
  bool require_at_jwt;

  pthread_mutex_t lock;
  pthread_cond_t fetched; /* a fetch finished (monotonic clock) */
  /* Under lock. */
  mcp__jwks *keys; /* one reference; NULL before any key was loaded */
  bool fetching;
  bool ever_fetched;
  unsigned long long last_fetch_ms;
  unsigned long fetch_gen;
};

static unsigned long long now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (unsigned long long)ts.tv_sec * 1000 +
         (unsigned long long)ts.tv_nsec / 1000000;
}

void mcp__jwt_say(char *err, size_t errlen, const char *fmt, ...) {
  if (err == NULL || errlen == 0)
    return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err, errlen, fmt, ap);
  va_end(ap);
}

static mcp__jwks *keys_get(mcp__jwt *j) {
  pthread_mutex_lock(&j->lock);
  mcp__jwks *set = j->keys;
  if (set)
    set->refs++;
  pthread_mutex_unlock(&j->lock);
  return set;
}

static void keys_put(mcp__jwt *j, mcp__jwks *set) {
  if (set == NULL)
    return;
  pthread_mutex_lock(&j->lock);
  bool last = --set->refs == 0;
  pthread_mutex_unlock(&j->lock);
  if (last)
    mcp__jwks_free(set);
}

/* Makes fresh (one reference, handed over) the current set. */
static void keys_install(mcp__jwt *j, mcp__jwks *fresh) {
  pthread_mutex_lock(&j->lock);
  mcp__jwks *old = j->keys;
  j->keys = fresh;
  bool last = old && --old->refs == 0;
  pthread_mutex_unlock(&j->lock);
  if (last)
    mcp__jwks_free(old);
}

/* Reads a whole file of at most MCP__JWKS_MAX_DOC bytes. */
static int read_file(const char *path, char **out, size_t *len, char *err,
                     size_t errlen) {
  FILE *f = fopen(path, "rb");
  if (f == NULL) {
    mcp__jwt_say(err, errlen, "cannot open %s: %s", path, strerror(errno));
    return MCP_EIO;
  }
  /* One byte more than the cap tells a file that is too large. */
  const size_t most = (size_t)MCP__JWKS_MAX_DOC + 1;
  size_t cap = 16384, n = 0;
  char *buf = OPENSSL_malloc(cap);
  int rc = 0;
  while (buf != NULL) {
    n += fread(buf + n, 1, cap - n, f);
    if (n < cap)
      break;
    if (n == most) {
      mcp__jwt_say(err, errlen, "%s is larger than %u bytes", path,
                   MCP__JWKS_MAX_DOC);
      rc = MCP_EINVAL;
      break;
    }
    size_t bigger_cap = cap * 2 < most ? cap * 2 : most;
    char *bigger = OPENSSL_realloc(buf, bigger_cap);
    if (bigger == NULL)
      OPENSSL_free(buf);
    buf = bigger;
    cap = bigger_cap;
  }
  if (rc == 0 && buf == NULL) {
    mcp__jwt_say(err, errlen, "out of memory reading %s", path);
    rc = MCP_ENOMEM;
  } else if (rc == 0 && ferror(f)) {
    mcp__jwt_say(err, errlen, "cannot read %s", path);
    rc = MCP_EIO;
  }
  fclose(f);
  if (rc != 0) {
    OPENSSL_free(buf);
    return rc;
  }
  *out = buf;
  *len = n;
  return 0;
}

/* Parses a JWKS and makes it current; err gets a prefix naming where the
 * document came from. */
static int load(mcp__jwt *j, const char *json, size_t len, const char *from,
                char *err, size_t errlen) {
  char why[256];
  mcp__jwks *set = NULL;
  int rc = mcp__jwks_parse(json, len, &set, why, sizeof why);
  if (rc == 0)
    keys_install(j, set);
  if (why[0] != '\0')
    mcp__jwt_say(err, errlen, "%s: %s", from, why);
  else
    mcp__jwt_say(err, errlen, "%s", "");
  return rc;
}

void mcp__jwt_free(mcp__jwt *j) {
  if (j == NULL)
    return;
  mcp__jwks_free(j->keys);
  pthread_mutex_destroy(&j->lock);
  pthread_cond_destroy(&j->fetched);
  OPENSSL_free(j->issuer);
  OPENSSL_free(j->resource);
  OPENSSL_free(j->scope_claim);
  OPENSSL_free(j->jwks_file);
  OPENSSL_clear_free(j->secret, j->secret_len);
  OPENSSL_free(j);
}

static bool copy_str(char **dst, const char *src) {
  if (src == NULL)
    return true;
  *dst = OPENSSL_strdup(src);
  return *dst != NULL;
}

/* The options mcp__jwt_new refuses, each with its sentence: no issuer or
 * resource, two key sources, no key source, a short secret, a bad scope
 * claim name. Returns 0 or MCP_EINVAL. */
static int check_options(const mcp_auth_options *opts, char *err,
                         size_t errlen) {
  const char *why = NULL;
  if (opts == NULL || opts->issuer == NULL || opts->issuer[0] == '\0')
    why = "JWT verification needs the issuer (auth.issuer).";
  else if (opts->resource == NULL || opts->resource[0] == '\0')
    why = "JWT verification needs the resource URI tokens are issued for "
          "(auth.resource).";
  else if (opts->jwks != NULL && opts->jwks_file != NULL)
    why = "Give auth.jwks or auth.jwks_file, not both.";
  else if (opts->jwks == NULL && opts->jwks_file == NULL &&
           opts->jwks_fetch == NULL && opts->hs256_secret == NULL)
    why = "JWT verification needs keys: auth.jwks, auth.jwks_file, "
          "auth.jwks_fetch or auth.hs256_secret.";
  else if (opts->hs256_secret != NULL && opts->hs256_secret_len < MIN_SECRET) {
    mcp__jwt_say(err, errlen, "auth.hs256_secret must hold at least %d bytes.",
                 MIN_SECRET);
    return MCP_EINVAL;
  } else if (opts->scope_claim != NULL &&
             (opts->scope_claim[0] == '\0' || strlen(opts->scope_claim) > 64))
    why = "auth.scope_claim must be a claim name.";
  if (why == NULL)
    return 0;
  mcp__jwt_say(err, errlen, "%s", why);
  return MCP_EINVAL;
}

/* A zeroed verifier with its lock and its condition variable, which waits
 * on the monotonic clock; NULL when out of memory. */
static mcp__jwt *jwt_alloc(void) {
  mcp__jwt *j = OPENSSL_zalloc(sizeof *j);
  if (j == NULL)
    return NULL;
  pthread_condattr_t ca;
  bool ca_ok = pthread_condattr_init(&ca) == 0;
  bool sync_ok = ca_ok &&
                 pthread_condattr_setclock(&ca, CLOCK_MONOTONIC) == 0 &&
                 pthread_cond_init(&j->fetched, &ca) == 0;
  if (ca_ok)
    pthread_condattr_destroy(&ca);
  if (sync_ok && pthread_mutex_init(&j->lock, NULL) != 0) {
    pthread_cond_destroy(&j->fetched);
    sync_ok = false;
  }
  if (!sync_ok) {
    OPENSSL_free(j);
    return NULL;
  }
  return j;
}

/* Copies the options j keeps, with their defaults; false when out of
 * memory. */
static bool copy_options(mcp__jwt *j, const mcp_auth_options *opts) {
  j->fetch = opts->jwks_fetch;
  j->fetch_data = opts->jwks_fetch_data;
  j->refresh_ms = 1000ull * (opts->jwks_refresh_s ? opts->jwks_refresh_s
                                                  : DEFAULT_REFRESH_S);
  j->leeway_s = opts->leeway_s ? opts->leeway_s : DEFAULT_LEEWAY_S;
  j->require_at_jwt = opts->require_at_jwt;
  if (!copy_str(&j->issuer, opts->issuer) ||
      !copy_str(&j->resource, opts->resource) ||
      !copy_str(&j->scope_claim, opts->scope_claim) ||
      !copy_str(&j->jwks_file, opts->jwks_file) ||
      (opts->hs256_secret != NULL &&
       (j->secret = OPENSSL_memdup(opts->hs256_secret,
                                   opts->hs256_secret_len)) == NULL))
    return false;
  j->secret_len = j->secret ? opts->hs256_secret_len : 0;
  return true;
}

/* The keys given at creation: the JWKS text or the JWKS file, if any.
 * Returns 0 or an MCP_E* code. */
static int load_initial_keys(mcp__jwt *j, const mcp_auth_options *opts,
                             char *err, size_t errlen) {
  if (opts->jwks != NULL)
    return load(j, opts->jwks, strlen(opts->jwks), "auth.jwks", err, errlen);
  if (opts->jwks_file == NULL)
    return 0;
  char *doc = NULL;
  size_t len = 0;
  int rc = read_file(j->jwks_file, &doc, &len, err, errlen);
  if (rc == 0) {
    rc = load(j, doc, len, j->jwks_file, err, errlen);
    OPENSSL_free(doc);
  }
  return rc;
}

int mcp__jwt_new(const mcp_auth_options *opts, mcp__jwt **out, char *err,
                 size_t errlen) {
  mcp__jwt_say(err, errlen, "%s", "");
  int rc = check_options(opts, err, errlen);
  if (rc != 0)
    return rc;
  mcp__jwt *j = jwt_alloc();
  if (j == NULL) {
    mcp__jwt_say(err, errlen, "Out of memory.");
    return MCP_ENOMEM;
  }
  if (!copy_options(j, opts)) {
    mcp__jwt_free(j);
    mcp__jwt_say(err, errlen, "Out of memory.");
    return MCP_ENOMEM;
  }
  rc = load_initial_keys(j, opts, err, errlen);
  if (rc != 0) {
    /* An unreadable file is a configuration that cannot work, like an
     * unusable JWKS: both are bad options to the caller. */
    mcp__jwt_free(j);
    return rc == MCP_ENOMEM ? MCP_ENOMEM : MCP_EINVAL;
  }
  *out = j;
  return 0;
}

int mcp__jwt_set_jwks(mcp__jwt *j, const char *json, size_t len, char *err,
                      size_t errlen) {
  return load(j, json, len, "JWKS", err, errlen);
}

int mcp__jwt_reload_file(mcp__jwt *j, char *err, size_t errlen) {
  if (j->jwks_file == NULL) {
    mcp__jwt_say(err, errlen, "no JWKS file is configured (auth.jwks_file)");
    return MCP_ESTATE;
  }
  char *doc = NULL;
  size_t len = 0;
  int rc = read_file(j->jwks_file, &doc, &len, err, errlen);
  if (rc != 0)
    return rc;
  rc = load(j, doc, len, j->jwks_file, err, errlen);
  OPENSSL_free(doc);
  return rc;
}

/* Fetches the JWKS after a token named a key the set does not have:
 * seen is the set that lacked it (the caller holds a reference, so the
 * pointer cannot be reused). At most one fetch runs at a time, and one
 * starts at most once per refresh interval, measured from the start of
 * the last, failed or not, so neither a kid spray nor a provider that is
 * down causes more. A verification that finds a fetch running waits for
 * it. Returns true when the set changed since seen and a second look may
 * find the key. */
static bool refresh(mcp__jwt *j, const mcp__jwks *seen) {
  pthread_mutex_lock(&j->lock);
  if (j->keys != seen) {
    pthread_mutex_unlock(&j->lock);
    return true;
  }
  if (j->fetching) {
    unsigned long gen = j->fetch_gen;
    struct timespec until;
    clock_gettime(CLOCK_MONOTONIC, &until);
    until.tv_sec += FETCH_WAIT_S;
    while (j->fetching && gen == j->fetch_gen)
      if (pthread_cond_timedwait(&j->fetched, &j->lock, &until) != 0)
        break;
    bool changed = j->keys != seen;
    pthread_mutex_unlock(&j->lock);
    return changed;
  }
  unsigned long long now = now_ms();
  if (j->ever_fetched && now - j->last_fetch_ms < j->refresh_ms) {
    pthread_mutex_unlock(&j->lock);
    return false;
  }
  j->fetching = true;
  j->ever_fetched = true;
  j->last_fetch_ms = now;
  pthread_mutex_unlock(&j->lock);

  char *json = NULL;
  size_t len = 0;
  mcp__jwks *fresh = NULL;
  if (j->fetch(&json, &len, j->fetch_data) == 0 && json != NULL) {
    char why[8];
    /* An unusable document (too large, not JSON, no usable key) keeps the
     * last good set, and the token is refused as signed by an unknown
     * key. */
    if (mcp__jwks_parse(json, len, &fresh, why, sizeof why) != 0)
      fresh = NULL;
  }
  free(json); /* the callback's buffer, malloc'ed by contract */

  pthread_mutex_lock(&j->lock);
  mcp__jwks *old = NULL;
  if (fresh != NULL) {
    old = j->keys;
    j->keys = fresh;
    if (old && --old->refs != 0)
      old = NULL;
  }
  j->fetching = false;
  j->fetch_gen++;
  /* Also true when the callback itself installed keys (through
   * mcp_http_set_jwks) and returned no document. */
  bool changed = j->keys != seen;
  pthread_cond_broadcast(&j->fetched);
  pthread_mutex_unlock(&j->lock);
  mcp__jwks_free(old);
  return changed;
}

/* ---- signatures ---------------------------------------------------------- */

#define SIG_OK 0
#define SIG_BAD 1
#define SIG_NOMEM 2

/* One DER INTEGER from a big-endian unsigned value of n > 0 bytes that is
 * not zero. */
static size_t der_integer(unsigned char *out, const unsigned char *v,
                          size_t n) {
  while (n > 1 && v[0] == 0) {
    v++;
    n--;
  }
  size_t pad = (v[0] & 0x80) ? 1 : 0;
  out[0] = 0x02;
  out[1] = (unsigned char)(n + pad);
  out[2] = 0;
  memcpy(out + 2 + pad, v, n);
  return 2 + pad + n;
}

static bool all_zero(const unsigned char *v, size_t n) {
  unsigned char acc = 0;
  for (size_t i = 0; i < n; i++)
    acc |= v[i];
  return acc == 0;
}

/* JWS carries ECDSA signatures as r || s of fixed size (RFC 7518 §3.4);
 * OpenSSL verifies DER. r or s zero is refused here, whatever OpenSSL
 * would say (CVE-2022-21449). Returns the DER length, or 0. */
static size_t ecdsa_der(unsigned char *out, const unsigned char *sig,
                        size_t half) {
  unsigned char body[2 * (3 + 66)];
  if (all_zero(sig, half) || all_zero(sig + half, half))
    return 0;
  size_t len = der_integer(body, sig, half);
  len += der_integer(body + len, sig + half, half);
  out[0] = 0x30;
  if (len < 128) {
    out[1] = (unsigned char)len;
    memcpy(out + 2, body, len);
    return len + 2;
  }
  out[1] = 0x81;
  out[2] = (unsigned char)len;
  memcpy(out + 3, body, len);
  return len + 3;
}

/* True when the newest error on the thread's OpenSSL queue is an
 * allocation failure. The token is refused either way; this only picks
 * MCP_ENOMEM over MCP_EINVAL. */
static bool openssl_nomem(void) {
  unsigned long e = ERR_peek_last_error();
  return e != 0 && ERR_GET_REASON(e) == ERR_R_MALLOC_FAILURE;
}

static int verify_with(const mcp__jwk *k, const alg_def *a,
                       const unsigned char *msg, size_t mlen,
                       const unsigned char *sig, size_t slen,
                       const char **why) {
  /* Exact lengths: a short RSA or ECDSA signature never reaches OpenSSL. */
  if (slen != k->sig_len) {
    *why = "signature length does not fit the key";
    return SIG_BAD;
  }
  unsigned char der[3 + 2 * (3 + 66)];
  if (k->kind & (MCP__JWK_P256 | MCP__JWK_P384 | MCP__JWK_P521)) {
    slen = ecdsa_der(der, sig, slen / 2);
    if (slen == 0) {
      *why = "ECDSA signature with r or s zero";
      return SIG_BAD;
    }
    sig = der;
  }
  EVP_MD_CTX *ctx = EVP_MD_CTX_new();
  if (ctx == NULL) {
    *why = "out of memory";
    return SIG_NOMEM;
  }
  EVP_PKEY_CTX *pctx = NULL;
  bool ok = EVP_DigestVerifyInit_ex(ctx, &pctx, a->md, NULL, NULL, k->pkey,
                                    NULL) == 1;
  /* RFC 7518 §3.5: MGF1 with the same hash, salt as long as the hash. */
  if (ok && a->pss)
    ok = EVP_PKEY_CTX_set_rsa_padding(pctx, RSA_PKCS1_PSS_PADDING) == 1 &&
         EVP_PKEY_CTX_set_rsa_pss_saltlen(pctx, RSA_PSS_SALTLEN_DIGEST) == 1;
  if (ok)
    ok = EVP_DigestVerify(ctx, sig, slen, msg, mlen) == 1;
  EVP_MD_CTX_free(ctx);
  if (ok)
    return SIG_OK;
  if (openssl_nomem()) {
    *why = "out of memory";
    return SIG_NOMEM;
  }
  *why = "bad signature";
  return SIG_BAD;
}

#define KEYS_NONE 3 /* no key fits: a refresh may help */

/* Tries the keys of set that fit alg and, when the token has one, its kid:
 * SIG_OK, SIG_BAD (the named key does not fit alg, or no fitting key
 * verified), SIG_NOMEM or KEYS_NONE. */
static int try_keys(const mcp__jwks *set, const alg_def *a, const char *kid,
                    size_t kid_len, bool has_kid, const unsigned char *msg,
                    size_t mlen, const unsigned char *sig, size_t slen,
                    const char **why) {
  bool named = false, tried = false;
  for (size_t i = 0; set != NULL && i < set->n; i++) {
    const mcp__jwk *k = &set->keys[i];
    if (has_kid) {
      if (!k->has_kid || k->kid_len != kid_len ||
          memcmp(k->kid, kid, kid_len) != 0)
        continue;
      named = true;
    }
    /* Pinned: the key's type must fit the alg, and its own "alg", when
     * it has one, must be the token's. */
    if (!(a->kinds & k->kind) || (k->alg[0] && strcmp(k->alg, a->name) != 0))
      continue;
    tried = true;
    int rc = verify_with(k, a, msg, mlen, sig, slen, why);
    if (rc != SIG_BAD)
      return rc;
  }
  if (tried)
    return SIG_BAD;
  if (named) {
    *why = "the key named by kid does not fit alg";
    return SIG_BAD;
  }
  *why = "unknown key";
  return KEYS_NONE;
}

static int verify_hmac(const mcp__jwt *j, const unsigned char *msg, size_t mlen,
                       const unsigned char *sig, size_t slen,
                       const char **why) {
  unsigned char mac[32];
  size_t maclen = 0;
  if (slen != sizeof mac) {
    *why = "signature length does not fit HS256";
    return SIG_BAD;
  }
  if (EVP_Q_mac(NULL, "HMAC", NULL, "SHA256", NULL, j->secret, j->secret_len,
                msg, mlen, mac, sizeof mac, &maclen) == NULL ||
      maclen != sizeof mac) {
    *why = "HMAC failed";
    return openssl_nomem() ? SIG_NOMEM : SIG_BAD;
  }
  /* Constant time over the full length (RFC 8725 §3.2 and E30): a
   * byte-wise compare that stops early leaks the MAC prefix. */
  int diff = CRYPTO_memcmp(mac, sig, sizeof mac);
  OPENSSL_cleanse(mac, sizeof mac);
  if (diff != 0) {
    *why = "bad signature";
    return SIG_BAD;
  }
  return SIG_OK;
}

/* ---- claims -------------------------------------------------------------- */

/* RFC 6749 §3.3: scope-token = 1*( %x21 / %x23-5B / %x5D-7E ). Appends
 * one to out, space-separated. */
static bool add_scope(char *out, size_t cap, size_t *len, const char *s,
                      size_t n) {
  if (n == 0)
    return false;
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)s[i];
    if (!(c == 0x21 || (c >= 0x23 && c <= 0x5B) || (c >= 0x5D && c <= 0x7E)))
      return false;
  }
  size_t sep = *len ? 1 : 0;
  if (*len + sep + n + 1 > cap)
    return false;
  if (sep)
    out[(*len)++] = ' ';
  memcpy(out + *len, s, n);
  *len += n;
  out[*len] = '\0';
  return true;
}

static bool read_scopes(const mcp__jwt *j, const cJSON *pay,
                        mcp_token_info *info) {
  char text[sizeof info->scopes];
  size_t n = 0, len = 0;
  const cJSON *v, *e;
  if ((v = mcp__json_member(pay, j->scope_claim ? j->scope_claim : "scope")) ==
      NULL)
    return true;
  if (cJSON_IsString(v)) {
    /* Space-delimited (RFC 8693 §4.2); runs of spaces are tolerated. */
    if (!mcp__jwt_string(v, text, sizeof text, &n))
      return false;
    for (size_t i = 0; i < n;) {
      size_t end = i;
      while (end < n && text[end] != ' ')
        end++;
      if (end > i && !add_scope(info->scopes, sizeof info->scopes, &len,
                                text + i, end - i))
        return false;
      i = end + 1;
    }
    return true;
  }
  /* An array of scope tokens ("scp" of some providers), only for a claim
   * the application named. */
  if (j->scope_claim == NULL || !cJSON_IsArray(v))
    return false;
  for (e = v->child; e; e = e->next)
    if (!mcp__jwt_string(e, text, sizeof text, &n) ||
        !add_scope(info->scopes, sizeof info->scopes, &len, text, n))
      return false;
  return true;
}

/* A NumericDate claim: absent is fine unless required. Returns false when
 * present and unreadable. */
static bool read_date(const cJSON *pay, const char *name, long long *out,
                      bool *present) {
  const cJSON *v = mcp__json_member(pay, name);
  *present = v != NULL;
  return !*present || mcp__jwt_seconds(v, out) == 0;
}

static int check_claims(const mcp__jwt *j, const cJSON *pay,
                        mcp_token_info *info, const char **why) {
  long long now = (long long)time(NULL), exp = 0, nbf = 0, iat = 0;
  bool has_exp, has_nbf, has_iat;
  const cJSON *v, *e;
  if (!read_date(pay, "exp", &exp, &has_exp) || !has_exp) {
    *why = has_exp ? "exp is not a NumericDate in range" : "no exp";
    return MCP_EINVAL;
  }
  if (!read_date(pay, "nbf", &nbf, &has_nbf) ||
      !read_date(pay, "iat", &iat, &has_iat)) {
    *why = "nbf or iat is not a NumericDate in range";
    return MCP_EINVAL;
  }
  /* Dates are at most 2^53 and the leeway at most 2^32: no overflow. */
  if (exp + j->leeway_s <= now) {
    *why = "expired";
    return MCP_EINVAL;
  }
  if (has_nbf && nbf > now + j->leeway_s) {
    *why = "not valid yet (nbf)";
    return MCP_EINVAL;
  }
  if (has_iat && iat > now + j->leeway_s) {
    *why = "issued in the future (iat)";
    return MCP_EINVAL;
  }
  if ((v = mcp__json_member(pay, "iss")) == NULL ||
      !mcp__jwt_string_is(v, j->issuer, strlen(j->issuer))) {
    *why = "wrong issuer";
    return MCP_EINVAL;
  }
  size_t rlen = strlen(j->resource);
  bool ours = false;
  if ((v = mcp__json_member(pay, "aud")) == NULL) {
    *why = "no aud";
    return MCP_EINVAL;
  }
  if (cJSON_IsArray(v)) {
    for (e = v->child; e; e = e->next) {
      if (!cJSON_IsString(e)) {
        *why = "aud holds something other than strings";
        return MCP_EINVAL;
      }
      ours = ours || mcp__jwt_string_is(e, j->resource, rlen);
    }
  } else {
    ours = mcp__jwt_string_is(v, j->resource, rlen);
  }
  if (!ours) {
    *why = "wrong audience";
    return MCP_EINVAL;
  }
  if ((v = mcp__json_member(pay, "sub")) != NULL) {
    size_t n = 0;
    bool ok = mcp__jwt_string(v, info->subject, sizeof info->subject, &n);
    /* The subject binds sessions and goes to logs: no control
     * characters. */
    for (size_t i = 0; ok && i < n; i++)
      ok = (unsigned char)info->subject[i] >= 0x20 && info->subject[i] != 0x7F;
    if (!ok) {
      *why = "sub is not a string of at most 255 printable bytes";
      return MCP_EINVAL;
    }
  }
  if (!read_scopes(j, pay, info)) {
    *why = "the scope claim is too long or not a list of scope tokens";
    return MCP_EINVAL;
  }
  info->expires_at = exp;
  return 0;
}

/* ---- tokens -------------------------------------------------------------- */

/* Stack space of one verification. */
typedef struct work {
  unsigned char header[MCP__JWT_MAX_HEADER];
  unsigned char payload[MCP__JWT_MAX_PAYLOAD];
  unsigned char sig[MAX_SIG];
  mcp__json_doc hdoc, pdoc; /* the header and payload parsed */
} work;

/* Decodes one segment, telling "too large" from "not base64url". */
static bool segment(const char *s, size_t n, unsigned char *out, size_t cap,
                    size_t *len, const char *what, const char **why) {
  if (mcp__base64_decode(s, n, out, cap, len, MCP__BASE64_URL))
    return true;
  size_t need = n / 4 * 3 + (n % 4 > 1 ? n % 4 - 1 : 0);
  *why = need > cap ? what : "a segment is not strict base64url";
  return false;
}

static bool is_at_jwt(const cJSON *typ) {
  char t[32];
  return mcp__jwt_string(typ, t, sizeof t, NULL) &&
         (strcasecmp(t, "at+jwt") == 0 ||
          strcasecmp(t, "application/at+jwt") == 0);
}

/* The lengths of a token's parts once split and decoded into its work:
 * the signed text (header and payload as sent), then the decoded header,
 * payload and signature. */
typedef struct token_parts {
  size_t mlen, hlen, plen, slen;
} token_parts;

/* The facts of the header that the signature check needs. */
typedef struct header_facts {
  const alg_def *alg;
  char kid[MCP__JWT_MAX_KID + 1];
  size_t kid_len;
  bool has_kid;
} header_facts;

/* Splits token into its three segments (a bounded length, two dots, none
 * empty) and decodes each into w. Returns 0 or MCP_EINVAL. */
static int split_token(const char *token, work *w, token_parts *t,
                       const char **why) {
  *why = "malformed token";
  if (token == NULL)
    return MCP_EINVAL;
  size_t tlen = strnlen(token, MCP__JWT_MAX_TOKEN + 1);
  if (tlen > MCP__JWT_MAX_TOKEN) {
    *why = "token too long";
    return MCP_EINVAL;
  }
  const char *d1 = memchr(token, '.', tlen);
  const char *d2 =
      d1 ? memchr(d1 + 1, '.', tlen - (size_t)(d1 + 1 - token)) : NULL;
  if (d2 == NULL || memchr(d2 + 1, '.', tlen - (size_t)(d2 + 1 - token))) {
    *why = "not a compact JWS of three segments";
    return MCP_EINVAL;
  }
  size_t henc = (size_t)(d1 - token), penc = (size_t)(d2 - d1 - 1);
  size_t senc = tlen - (size_t)(d2 + 1 - token);
  if (henc == 0 || penc == 0) {
    *why = "empty header or payload";
    return MCP_EINVAL;
  }
  if (senc == 0) {
    *why = "empty signature";
    return MCP_EINVAL;
  }
  t->mlen = (size_t)(d2 - token);
  if (!segment(token, henc, w->header, sizeof w->header, &t->hlen,
               "header too large", why) ||
      !segment(d1 + 1, penc, w->payload, sizeof w->payload, &t->plen,
               "payload too large", why) ||
      !segment(d2 + 1, senc, w->sig, sizeof w->sig, &t->slen,
               "signature too large", why))
    return MCP_EINVAL;
  return 0;
}

/* Parses a decoded segment as strict JSON into doc; what names it in the
 * reason. Returns 0, MCP_ENOMEM or MCP_EINVAL. */
static int parse_segment(const unsigned char *text, size_t len,
                         mcp__json_doc *doc, const char *what,
                         const char **why) {
  int rc = mcp__jwt_parse((const char *)text, len, doc);
  if (rc == 0)
    return 0;
  *why = rc == MCP_ENOMEM ? "out of memory" : what;
  return rc == MCP_ENOMEM ? rc : MCP_EINVAL;
}

/* The header: a supported alg (never none), no crit, typ at+jwt when
 * required, and the kid if any, into h. Returns 0 or an MCP_E* code. */
static int read_header(const mcp__jwt *j, work *w, size_t hlen, header_facts *h,
                       const char **why) {
  int rc = parse_segment(w->header, hlen, &w->hdoc, "header is not strict JSON",
                         why);
  if (rc)
    return rc;
  const cJSON *hdr = w->hdoc.root, *v;
  char alg[16];
  size_t alen;
  if ((v = mcp__json_member(hdr, "alg")) == NULL) {
    *why = "no alg";
    return MCP_EINVAL;
  }
  if (!mcp__jwt_string(v, alg, sizeof alg, &alen)) {
    *why = "unsupported alg";
    return MCP_EINVAL;
  }
  if ((h->alg = find_alg(alg, alen)) == NULL) {
    *why =
        strcasecmp(alg, "none") == 0 ? "alg none refused" : "unsupported alg";
    return MCP_EINVAL;
  }
  /* RFC 7515 §4.1.11: an extension the recipient does not understand
   * makes the token invalid, and this verifier understands none. */
  if ((v = mcp__json_member(hdr, "crit")) != NULL) {
    *why = "crit names an extension this verifier does not support";
    return MCP_EINVAL;
  }
  if (j->require_at_jwt &&
      ((v = mcp__json_member(hdr, "typ")) == NULL || !is_at_jwt(v))) {
    *why = "typ is not at+jwt";
    return MCP_EINVAL;
  }
  /* "jku", "x5u", "jwk" and "x5c" are never read: keys come only from the
   * configured set. */
  h->kid_len = 0;
  h->has_kid = (v = mcp__json_member(hdr, "kid")) != NULL;
  if (h->has_kid && !mcp__jwt_string(v, h->kid, sizeof h->kid, &h->kid_len)) {
    *why = "kid is not a string of at most 128 bytes";
    return MCP_EINVAL;
  }
  return 0;
}

/* The signature, over the first two segments as they were sent: by the
 * HS256 secret, or by the key set, fetched again once when no key fits.
 * Returns 0 or an MCP_E* code. */
static int check_signature(mcp__jwt *j, const char *token, const token_parts *t,
                           const header_facts *h, const work *w,
                           const char **why) {
  const unsigned char *msg = (const unsigned char *)token;
  const alg_def *a = h->alg;
  int rc;
  if (a->kinds == 0) {
    if (j->secret == NULL) {
      *why = "HS256 is not enabled";
      return MCP_EINVAL;
    }
    rc = verify_hmac(j, msg, t->mlen, w->sig, t->slen, why);
  } else {
    mcp__jwks *set = keys_get(j);
    rc = try_keys(set, a, h->kid, h->kid_len, h->has_kid, msg, t->mlen, w->sig,
                  t->slen, why);
    if (rc == KEYS_NONE && j->fetch != NULL && refresh(j, set)) {
      keys_put(j, set);
      set = keys_get(j);
      rc = try_keys(set, a, h->kid, h->kid_len, h->has_kid, msg, t->mlen,
                    w->sig, t->slen, why);
    }
    keys_put(j, set);
  }
  if (rc == SIG_NOMEM)
    return MCP_ENOMEM;
  if (rc != SIG_OK)
    return MCP_EINVAL;
  return 0;
}

/* Verifies token: its form, its header, its signature, and only then its
 * payload's claims. Returns 0 or an MCP_E* code, with the reason in *why. */
static int verify_token(mcp__jwt *j, const char *token, mcp_token_info *info,
                        work *w, const char **why) {
  token_parts t;
  header_facts h;
  int rc = split_token(token, w, &t, why);
  if (rc == 0)
    rc = read_header(j, w, t.hlen, &h, why);
  if (rc == 0)
    rc = check_signature(j, token, &t, &h, w, why);
  if (rc == 0)
    rc = parse_segment(w->payload, t.plen, &w->pdoc,
                       "payload is not strict JSON", why);
  if (rc != 0)
    return rc;
  return check_claims(j, w->pdoc.root, info, why);
}

int mcp__jwt_verify(mcp__jwt *j, const char *token, mcp_token_info *info,
                    char *why, size_t whylen) {
  work w;
  const char *reason = "";
  memset(info, 0, sizeof *info);
  memset(&w.hdoc, 0, sizeof w.hdoc);
  memset(&w.pdoc, 0, sizeof w.pdoc);
  /* OpenSSL's errors from a refused token are ours to drop, not the
   * caller's to find later on the thread's queue. */
  ERR_set_mark();
  int rc = verify_token(j, token, info, &w, &reason);
  ERR_pop_to_mark();
  mcp__json_doc_free(&w.hdoc);
  mcp__json_doc_free(&w.pdoc);
  if (rc != 0)
    memset(info, 0, sizeof *info);
  mcp__jwt_say(why, whylen, "%s", rc == 0 ? "" : reason);
  return rc;
}
