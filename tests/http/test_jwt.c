/* The JWT verifier (lib/jwt.h) against the attacks of
 * shared/spec/BAD-INPUTS.md group E.
 *
 * Keys are generated with OpenSSL when the suite starts (RSA 2048 and
 * 1024, EC P-256, P-384 and P-521, Ed25519, and an attacker's P-256); the
 * JWKS documents are built from them, and every token is signed with EVP
 * (tests/common/jwt_sign.c), so no test depends on a key or token fixed in
 * the tree. Tests are named after the rows they cover (e4_..., e12_...);
 * the others cover each algorithm, the scope claims, the strict JSON of
 * header and payload, reloading, threads and allocation failure.
 *
 * Every OpenSSL allocation goes through the counting allocator of
 * tests/common/ossl_count.c (installed before OpenSSL allocates anything),
 * and so does every allocation of the verifier (it uses OPENSSL_malloc);
 * the allocation tests fail each allocation of a verification in turn. */
#include <check.h>
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rsa.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "b64url.h"
#include "jwt_int.h"
#include "jwt_sign.h"
#include "ossl_count.h"
#include "testutil.h"

#define ISS "https://auth.example.com"
#define RES "https://mcp.example.com/mcp"
#define SECRET "0123456789abcdef0123456789abcdef-hs256"

/* ---------------------------------------------------------------------------
 * OpenSSL's allocator (tests/common/ossl_count.c): counts live blocks,
 * fails the fail_at-th allocation after arming.
 * ------------------------------------------------------------------------ */

static long alloc_count, fail_at, failures;
static bool armed;

static bool should_fail(void) {
  if (!armed)
    return false;
  if (++alloc_count == fail_at) {
    failures++;
    return true;
  }
  return false;
}

static bool hooks_installed;

static void arm(long n) {
  alloc_count = 0;
  failures = 0;
  fail_at = n;
  armed = true;
}

static long disarm(void) {
  armed = false;
  return failures;
}

/* ---------------------------------------------------------------------------
 * Strings kept until the end of the test
 * ------------------------------------------------------------------------ */

static char *kept[4096];
static size_t nkept;

static char *keep(char *s) {
  ck_assert_ptr_nonnull(s);
  ck_assert_uint_lt(nkept, TU_COUNT(kept));
  kept[nkept++] = s;
  return s;
}

static char *fmt(const char *f, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;

static char *fmt(const char *f, ...) {
  va_list ap;
  va_start(ap, f);
  char *s = tu_vtext(f, ap);
  va_end(ap);
  return keep(s);
}

/* ---------------------------------------------------------------------------
 * Keys, JWKs and tokens
 * ------------------------------------------------------------------------ */

static EVP_PKEY *rsa, *rsa_small, *ec256, *ec384, *ec521, *ed, *evil;

static char *b64url(const unsigned char *p, size_t n) {
  return keep(tc_b64url(p, n));
}

static char *b64s(const char *s) { return keep(tc_b64url_str(s)); }

static char *bn_param(const EVP_PKEY *k, const char *name) {
  BIGNUM *bn = NULL;
  ck_assert_int_eq(EVP_PKEY_get_bn_param(k, name, &bn), 1);
  unsigned char buf[1024];
  int n = BN_bn2bin(bn, buf);
  BN_free(bn);
  return b64url(buf, (size_t)n);
}

/* A JWK of k's public part: "kid" when kid is not NULL, then the members
 * of extra (JSON text without braces, or NULL). */
static char *jwk(const EVP_PKEY *k, const char *kid, const char *extra) {
  return keep(tc_jwk(k, kid, extra, 0));
}

/* {"keys":[...]} of the NULL-terminated JWKs. */
static char *jwks(const char *first, ...) {
  size_t len = 16;
  va_list ap;
  va_start(ap, first);
  for (const char *k = first; k; k = va_arg(ap, const char *))
    len += strlen(k) + 1;
  va_end(ap);
  char *s = keep(malloc(len));
  strcpy(s, "{\"keys\":[");
  va_start(ap, first);
  for (const char *k = first; k; k = va_arg(ap, const char *)) {
    if (k != first)
      strcat(s, ",");
    strcat(s, k);
  }
  va_end(ap);
  strcat(s, "]}");
  return s;
}

/* The JWKS most tests use. "rsa-rs256" is the RSA key again, pinned to
 * RS256 by its "alg". */
static const char *main_jwks(void) {
  return jwks(jwk(rsa, "rsa", NULL), jwk(rsa, "rsa-rs256", "\"alg\":\"RS256\""),
              jwk(ec256, "ec256", "\"use\":\"sig\""),
              jwk(ec384, "ec384", "\"key_ops\":[\"verify\"]"),
              jwk(ec521, "ec521", NULL), jwk(ed, "ed", "\"alg\":\"EdDSA\""),
              NULL);
}

/* Signs msg with k as alg asks; ECDSA signatures come out as JWS wants
 * them, r || s. Returns the length. */
static size_t sign(const char *alg, EVP_PKEY *k, const char *msg,
                   unsigned char *sig) {
  return tc_jwt_sign(alg, k, msg, strlen(msg), sig);
}

/* header.payload with the given signature bytes. */
static char *with_sig(const char *header, const char *payload,
                      const unsigned char *sig, size_t n) {
  return keep(tc_jwt_with_sig(header, payload, sig, n));
}

/* A token signed with k as alg says (the header's alg may say otherwise,
 * to lie). */
static char *token_k(const char *header, const char *payload, const char *alg,
                     EVP_PKEY *k) {
  return keep(tc_jwt(header, payload, alg, k));
}

/* A token MACed with HMAC-SHA256 under key (keylen bytes, maybe none). */
static char *token_hs(const char *header, const char *payload, const void *key,
                      size_t keylen) {
  return keep(tc_jwt_hs256(header, strlen(header), payload, strlen(payload),
                           key, keylen));
}

static long long now_s(void) { return (long long)time(NULL); }

static void sleep_ms(long ms) {
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  while (nanosleep(&ts, &ts) != 0)
    ;
}

static char *hdr(const char *alg, const char *kid) {
  if (kid == NULL)
    return fmt("{\"alg\":\"%s\",\"typ\":\"at+jwt\"}", alg);
  return fmt("{\"alg\":\"%s\",\"kid\":\"%s\",\"typ\":\"at+jwt\"}", alg, kid);
}

/* The usual claims, plus extra members (JSON text starting with ',' or
 * NULL). */
static char *claims(const char *extra) {
  return fmt("{\"iss\":\"" ISS "\",\"aud\":\"" RES "\",\"sub\":\"alice\","
             "\"iat\":%lld,\"exp\":%lld,\"scope\":\"files:read "
             "files:write\"%s}",
             now_s(), now_s() + 600, extra ? extra : "");
}

/* Claims with iss, aud and exp given as JSON text (NULL = absent). */
static char *claims3(const char *iss, const char *aud, const char *exp) {
  char *s = fmt("{\"sub\":\"bob\"%s%s%s%s%s%s}", iss ? ",\"iss\":" : "",
                iss ? iss : "", aud ? ",\"aud\":" : "", aud ? aud : "",
                exp ? ",\"exp\":" : "", exp ? exp : "");
  return s;
}

static char *future_exp(void) { return fmt("%lld", now_s() + 600); }

/* ---------------------------------------------------------------------------
 * Verifiers
 * ------------------------------------------------------------------------ */

static mcp__jwt *vs[8];
static size_t nvs;

static mcp_auth_options base_opts(void) {
  mcp_auth_options o = {0};
  o.resource = RES;
  o.issuer = ISS;
  o.jwks = main_jwks();
  return o;
}

static mcp__jwt *verifier(const mcp_auth_options *o) {
  char err[256];
  mcp__jwt *j = NULL;
  int rc = mcp__jwt_new(o, &j, err, sizeof err);
  ck_assert_msg(rc == 0, "mcp__jwt_new: %d %s", rc, err);
  ck_assert_uint_lt(nvs, TU_COUNT(vs));
  vs[nvs++] = j;
  return j;
}

static mcp__jwt *std_verifier(void) {
  mcp_auth_options o = base_opts();
  return verifier(&o);
}

static mcp_token_info info;
static char why[128];

#define expect_ok(j, tok) expect_ok_at(__LINE__, (j), (tok))
static void expect_ok_at(int line, mcp__jwt *j, const char *tok) {
  int rc = mcp__jwt_verify(j, tok, &info, why, sizeof why);
  ck_assert_msg(rc == 0, "line %d: rejected (%d): %s", line, rc, why);
  ck_assert_str_eq(why, "");
}

/* Refused, with a reason containing reason (when not NULL). */
#define expect_bad(j, tok, reason) expect_bad_at(__LINE__, (j), (tok), (reason))
static void expect_bad_at(int line, mcp__jwt *j, const char *tok,
                          const char *reason) {
  memset(&info, 0x5A, sizeof info);
  int rc = mcp__jwt_verify(j, tok, &info, why, sizeof why);
  ck_assert_msg(rc == MCP_EINVAL, "line %d: expected MCP_EINVAL, got %d (%s)",
                line, rc, why);
  ck_assert_msg(why[0] != '\0', "line %d: no reason", line);
  ck_assert_msg(reason == NULL || strstr(why, reason) != NULL,
                "line %d: reason \"%s\", expected \"%s\"", line, why, reason);
  /* A refused token leaves nothing behind. */
  ck_assert_str_eq(info.subject, "");
  ck_assert_str_eq(info.scopes, "");
  ck_assert_int_eq(info.expires_at, 0);
  /* The reason never quotes the token. */
  if (tok != NULL && strlen(tok) > 8)
    ck_assert_ptr_null(strstr(why, tok + strlen(tok) - 8));
}

static void teardown(void) {
  for (size_t i = 0; i < nvs; i++)
    mcp__jwt_free(vs[i]);
  nvs = 0;
  for (size_t i = 0; i < nkept; i++)
    free(kept[i]);
  nkept = 0;
}

/* A fetch callback: counts calls, waits delay_ms, serves doc (or fails). */
typedef struct fetcher {
  atomic_int calls;
  const char *doc;
  size_t len; /* 0 = strlen(doc) */
  bool fail;
  unsigned delay_ms;
} fetcher;

static int fetch_cb(char **json, size_t *len, void *user_data) {
  fetcher *f = user_data;
  atomic_fetch_add(&f->calls, 1);
  if (f->delay_ms)
    sleep_ms((long)f->delay_ms);
  if (f->fail || f->doc == NULL)
    return -1;
  size_t n = f->len ? f->len : strlen(f->doc);
  *json = malloc(n ? n : 1);
  if (*json == NULL)
    return -1;
  memcpy(*json, f->doc, n);
  *len = n;
  return 0;
}

/* ---------------------------------------------------------------------------
 * Every algorithm, and what a valid token yields
 * ------------------------------------------------------------------------ */

START_TEST(every_algorithm) {
  mcp_auth_options o = base_opts();
  o.hs256_secret = SECRET;
  o.hs256_secret_len = strlen(SECRET);
  mcp__jwt *j = verifier(&o);
  const struct {
    const char *alg, *kid;
    EVP_PKEY **key;
  } cases[] = {
      {"RS256", "rsa", &rsa},       {"RS384", "rsa", &rsa},
      {"RS512", "rsa", &rsa},       {"PS256", "rsa", &rsa},
      {"PS384", "rsa", &rsa},       {"PS512", "rsa", &rsa},
      {"ES256", "ec256", &ec256},   {"ES384", "ec384", &ec384},
      {"ES512", "ec521", &ec521},   {"EdDSA", "ed", &ed},
      {"RS256", "rsa-rs256", &rsa},
  };
  for (size_t i = 0; i < TU_COUNT(cases); i++) {
    char *p = claims(NULL);
    expect_ok(j, token_k(hdr(cases[i].alg, cases[i].kid), p, cases[i].alg,
                         *cases[i].key));
    ck_assert_str_eq(info.subject, "alice");
    ck_assert_str_eq(info.scopes, "files:read files:write");
    ck_assert_int_ge(info.expires_at, now_s() + 590);
    /* Without a kid, the keys that fit the alg are tried. */
    expect_ok(j,
              token_k(hdr(cases[i].alg, NULL), p, cases[i].alg, *cases[i].key));
  }
  /* RFC 9864's "Ed25519" with a key whose JWK has no "alg". */
  mcp_auth_options o2 = base_opts();
  o2.jwks = jwks(jwk(ed, "ed", NULL), NULL);
  expect_ok(verifier(&o2),
            token_k(hdr("Ed25519", "ed"), claims(NULL), "EdDSA", ed));
  /* The key "ed" is pinned to EdDSA: the other name does not fit it. */
  expect_bad(j, token_k(hdr("Ed25519", "ed"), claims(NULL), "EdDSA", ed),
             "does not fit");
  /* HS256 with the configured secret. */
  expect_ok(j,
            token_hs(hdr("HS256", NULL), claims(NULL), SECRET, strlen(SECRET)));
  ck_assert_str_eq(info.subject, "alice");
  /* A token without sub has no subject; one without scope no scopes. */
  expect_ok(j, token_k(hdr("ES256", "ec256"),
                       claims3("\"" ISS "\"", "\"" RES "\"", future_exp()),
                       "ES256", ec256));
  ck_assert_str_eq(info.subject, "bob");
  ck_assert_str_eq(info.scopes, "");
  char *nosub =
      fmt("{\"iss\":\"" ISS "\",\"aud\":\"" RES "\",\"exp\":%s}", future_exp());
  expect_ok(j, token_k(hdr("ES256", "ec256"), nosub, "ES256", ec256));
  ck_assert_str_eq(info.subject, "");
}
END_TEST

/* ---------------------------------------------------------------------------
 * E4: alg none, empty signature
 * ------------------------------------------------------------------------ */

START_TEST(e4_alg_none) {
  mcp__jwt *j = std_verifier();
  const char *p = claims(NULL);
  const char *names[] = {"none", "None", "nOnE", "NONE"};
  for (size_t i = 0; i < TU_COUNT(names); i++) {
    const char *h = fmt("{\"alg\":\"%s\",\"kid\":\"rsa\"}", names[i]);
    expect_bad(j, fmt("%s.%s.", b64s(h), b64s(p)), "empty signature");
    expect_bad(j, with_sig(h, p, (const unsigned char *)"x", 1),
               "alg none refused");
  }
  /* A valid RS256 token with its signature stripped. */
  char *t = token_k(hdr("RS256", "rsa"), p, "RS256", rsa);
  *strrchr(t, '.') = '\0';
  expect_bad(j, fmt("%s.", t), "empty signature");
  expect_bad(j, t, "three segments");
  /* No alg, or one that is not a string or not supported. */
  unsigned char sig[256] = {1};
  expect_bad(j, with_sig("{\"kid\":\"rsa\"}", p, sig, 256), "no alg");
  expect_bad(j, with_sig("{\"alg\":null}", p, sig, 256), "unsupported alg");
  expect_bad(j, with_sig("{\"alg\":256}", p, sig, 256), "unsupported alg");
  expect_bad(j, with_sig("{\"alg\":\"rs256\"}", p, sig, 256),
             "unsupported alg");
  expect_bad(j, with_sig("{\"alg\":\"HS512\"}", p, sig, 64), "unsupported alg");
  expect_bad(j, with_sig("{\"alg\":\"RS256 \"}", p, sig, 256),
             "unsupported alg");
}
END_TEST

/* ---------------------------------------------------------------------------
 * E5: HS256 with the RSA public key as the secret, or an empty one
 * ------------------------------------------------------------------------ */

static char *rsa_pem(void) {
  BIO *b = BIO_new(BIO_s_mem());
  ck_assert_int_eq(PEM_write_bio_PUBKEY(b, rsa), 1);
  char *data;
  long n = BIO_get_mem_data(b, &data);
  char *s = fmt("%.*s", (int)n, data);
  BIO_free(b);
  return s;
}

START_TEST(e5_hs256_confusion) {
  const char *pem = rsa_pem(), *p = claims(NULL);
  const char *j_rsa = jwk(rsa, "rsa", NULL);
  /* No secret configured: HS256 is refused whatever the MAC key. */
  mcp__jwt *j = std_verifier();
  expect_bad(j, token_hs(hdr("HS256", "rsa"), p, pem, strlen(pem)),
             "HS256 is not enabled");
  expect_bad(j, token_hs(hdr("HS256", NULL), p, j_rsa, strlen(j_rsa)),
             "HS256 is not enabled");
  expect_bad(j, token_hs(hdr("HS256", "rsa"), p, "", 0),
             "HS256 is not enabled");
  /* With a secret, only that secret. */
  mcp_auth_options o = base_opts();
  o.hs256_secret = SECRET;
  o.hs256_secret_len = strlen(SECRET);
  j = verifier(&o);
  expect_bad(j, token_hs(hdr("HS256", "rsa"), p, pem, strlen(pem)),
             "bad signature");
  expect_bad(j, token_hs(hdr("HS256", NULL), p, "", 0), "bad signature");
  expect_bad(j, token_hs(hdr("HS256", NULL), p, SECRET, strlen(SECRET) - 1),
             "bad signature");
  expect_ok(j, token_hs(hdr("HS256", "whatever"), p, SECRET, strlen(SECRET)));
  /* An "oct" JWK in the set never becomes an HMAC key. */
  mcp_auth_options o2 = base_opts();
  const char *k = b64s("another-secret-of-thirty-two-bytes!!");
  o2.jwks =
      jwks(jwk(rsa, "rsa", NULL),
           fmt("{\"kty\":\"oct\",\"kid\":\"oct\",\"k\":\"%s\"}", k), NULL);
  j = verifier(&o2);
  expect_bad(j,
             token_hs(hdr("HS256", "oct"), p,
                      "another-secret-of-thirty-two-bytes!!", 36),
             "HS256 is not enabled");
  /* Secrets under 32 bytes are a configuration error. */
  o.hs256_secret_len = 31;
  mcp__jwt *bad = NULL;
  char err[256];
  ck_assert_int_eq(mcp__jwt_new(&o, &bad, err, sizeof err), MCP_EINVAL);
  ck_assert_ptr_null(bad);
  ck_assert_ptr_nonnull(strstr(err, "32 bytes"));
}
END_TEST

/* ---------------------------------------------------------------------------
 * E6: the key pins the algorithm
 * ------------------------------------------------------------------------ */

START_TEST(e6_alg_pinned_by_key) {
  mcp__jwt *j = std_verifier();
  const char *p = claims(NULL);
  /* "rsa-rs256" has "alg":"RS256". */
  expect_ok(j, token_k(hdr("RS256", "rsa-rs256"), p, "RS256", rsa));
  expect_bad(j, token_k(hdr("RS512", "rsa-rs256"), p, "RS512", rsa),
             "does not fit");
  expect_bad(j, token_k(hdr("PS256", "rsa-rs256"), p, "PS256", rsa),
             "does not fit");
  /* The key type must fit: ES256 naming the RSA key, RS256 naming an EC
   * key, ES384 naming the P-256 key, EdDSA naming an EC key. */
  expect_bad(j, token_k(hdr("ES256", "rsa"), p, "ES256", ec256),
             "does not fit");
  expect_bad(j, token_k(hdr("RS256", "ec256"), p, "RS256", rsa),
             "does not fit");
  expect_bad(j, token_k(hdr("ES384", "ec256"), p, "ES384", ec384),
             "does not fit");
  expect_bad(j, token_k(hdr("EdDSA", "ec256"), p, "EdDSA", ed), "does not fit");
  /* A JWK whose alg its type cannot do is skipped. */
  mcp_auth_options o = base_opts();
  o.jwks =
      jwks(jwk(rsa, "rsa", NULL), jwk(ec256, "odd", "\"alg\":\"RS256\""), NULL);
  char err[256];
  mcp__jwt *j2 = NULL;
  ck_assert_int_eq(mcp__jwt_new(&o, &j2, err, sizeof err), 0);
  vs[nvs++] = j2;
  ck_assert_ptr_nonnull(strstr(err, "1 key(s)"));
  expect_bad(j2, token_k(hdr("ES256", "odd"), p, "ES256", ec256),
             "unknown key");
}
END_TEST

/* ---------------------------------------------------------------------------
 * E7, E8, E9, E20: dates
 * ------------------------------------------------------------------------ */

static char *dated(const char *dates) {
  return fmt("{\"iss\":\"" ISS "\",\"aud\":\"" RES "\"%s}", dates);
}

static char *es(const char *payload) {
  return token_k(hdr("ES256", "ec256"), payload, "ES256", ec256);
}

START_TEST(e7_e8_e9_dates) {
  mcp__jwt *j = std_verifier(); /* leeway 60 s */
  long long t = now_s();
  /* E7: expired beyond the leeway; within it still valid. */
  expect_bad(j, es(dated(fmt(",\"exp\":%lld", t - 120))), "expired");
  expect_bad(j, es(dated(fmt(",\"exp\":%lld", t - 61))), "expired");
  expect_ok(j, es(dated(fmt(",\"exp\":%lld", t - 30))));
  expect_ok(j, es(dated(fmt(",\"exp\":%lld.75", t + 100))));
  ck_assert_int_eq(info.expires_at, t + 100);
  /* A leeway of our own. */
  mcp_auth_options o = base_opts();
  o.leeway_s = 5;
  mcp__jwt *j5 = verifier(&o);
  expect_bad(j5, es(dated(fmt(",\"exp\":%lld", t - 30))), "expired");
  /* E8: exp is required. */
  expect_bad(j, es(dated(fmt(",\"iat\":%lld", t))), "no exp");
  expect_bad(j, es(dated("")), "no exp");
  /* E9: nbf and iat in the future beyond the leeway. */
  expect_bad(j, es(dated(fmt(",\"exp\":%lld,\"nbf\":%lld", t + 600, t + 300))),
             "nbf");
  expect_bad(j, es(dated(fmt(",\"exp\":%lld,\"iat\":%lld", t + 600, t + 300))),
             "iat");
  expect_ok(j, es(dated(fmt(",\"exp\":%lld,\"nbf\":%lld,\"iat\":%lld", t + 600,
                            t + 30, t + 30))));
  expect_bad(j5, es(dated(fmt(",\"exp\":%lld,\"nbf\":%lld", t + 600, t + 30))),
             "nbf");
  expect_bad(j, es(dated(fmt(",\"exp\":%lld,\"nbf\":\"0\"", t + 600))),
             "NumericDate");
  expect_bad(j, es(dated(fmt(",\"exp\":%lld,\"iat\":null", t + 600))),
             "NumericDate");
}
END_TEST

START_TEST(e20_exp_out_of_range) {
  mcp__jwt *j = std_verifier();
  long long t = now_s();
  const char *bad[] = {"99999999999999999999999999",
                       "\"1700000000\"",
                       "1e309",
                       "9007199254740993",
                       "-1",
                       "-0",
                       "1e17",
                       "true",
                       "null",
                       "[1]",
                       "{}"};
  for (size_t i = 0; i < TU_COUNT(bad); i++)
    expect_bad(j, es(dated(fmt(",\"exp\":%s", bad[i]))), "exp");
  /* Exponent and fraction forms are NumericDates too. */
  expect_ok(j, es(dated(",\"exp\":4e9")));
  ck_assert_int_eq(info.expires_at, 4000000000LL);
  expect_ok(j, es(dated(",\"exp\":9007199254740992")));
  expect_ok(j, es(dated(fmt(",\"exp\":%lld0e-1", t + 100))));
  ck_assert_int_eq(info.expires_at, t + 100);
  expect_ok(j, es(dated(fmt(",\"exp\":%lld.999E0", t + 100))));
  ck_assert_int_eq(info.expires_at, t + 100);
  expect_bad(j, es(dated(",\"exp\":1.7e9")), "expired");
  expect_bad(j, es(dated(",\"exp\":0e999999999")), "expired");
  expect_bad(j, es(dated(",\"exp\":4e-999999")), "expired");
  /* 64 characters of number: over the strict layer's cap. */
  expect_bad(j, es(dated(fmt(",\"exp\":%lld.%054d", t + 100, 0))),
             "payload is not strict JSON");
}
END_TEST

/* ---------------------------------------------------------------------------
 * E10, E11: audience and issuer
 * ------------------------------------------------------------------------ */

START_TEST(e10_audience) {
  mcp__jwt *j = std_verifier();
  const char *iss = "\"" ISS "\"", *exp = future_exp();
  expect_bad(j, es(claims3(iss, "\"https://other.example.com/mcp\"", exp)),
             "wrong audience");
  expect_bad(j, es(claims3(iss, NULL, exp)), "no aud");
  expect_bad(
      j, es(claims3(iss, "[\"https://a.example\",\"https://b.example\"]", exp)),
      "wrong audience");
  expect_bad(j, es(claims3(iss, "[]", exp)), "wrong audience");
  expect_ok(j, es(claims3(iss, "[\"https://a.example\",\"" RES "\"]", exp)));
  expect_ok(j, es(claims3(iss, "\"" RES "\"", exp)));
  /* Exact: no trailing slash, no case folding, no prefix. */
  expect_bad(j, es(claims3(iss, "\"" RES "/\"", exp)), "wrong audience");
  expect_bad(j, es(claims3(iss, "\"HTTPS://MCP.EXAMPLE.COM/mcp\"", exp)),
             "wrong audience");
  expect_bad(j, es(claims3(iss, "\"https://mcp.example.com\"", exp)),
             "wrong audience");
  expect_bad(j, es(claims3(iss, "[[\"" RES "\"]]", exp)), "aud");
  expect_bad(j, es(claims3(iss, "[\"" RES "\",1]", exp)), "aud");
  expect_bad(j, es(claims3(iss, "{\"a\":\"" RES "\"}", exp)), "aud");
  /* E15: a second "aud" member, the valid one last or first. */
  expect_bad(j,
             es(fmt("{\"iss\":%s,\"aud\":\"x\",\"aud\":\"" RES "\",\"exp\":%s}",
                    iss, exp)),
             "payload is not strict JSON");
  expect_bad(j,
             es(fmt("{\"iss\":%s,\"aud\":\"" RES "\",\"a\\u0075d\":\"x\","
                    "\"exp\":%s}",
                    iss, exp)),
             "payload is not strict JSON");
}
END_TEST

START_TEST(e11_issuer) {
  mcp__jwt *j = std_verifier();
  const char *aud = "\"" RES "\"", *exp = future_exp();
  expect_bad(j, es(claims3("\"" ISS "/\"", aud, exp)), "wrong issuer");
  expect_bad(j, es(claims3("\"https://evil.example.com\"", aud, exp)),
             "wrong issuer");
  expect_bad(j, es(claims3("\"https://auth.example.co\"", aud, exp)),
             "wrong issuer");
  expect_bad(j, es(claims3("\"HTTPS://auth.example.com\"", aud, exp)),
             "wrong issuer");
  expect_bad(j, es(claims3(NULL, aud, exp)), "wrong issuer");
  expect_bad(j, es(claims3("[\"" ISS "\"]", aud, exp)), "wrong issuer");
  /* Compared after JSON unescaping, as any JSON reader would. */
  expect_ok(j, es(claims3("\"https:\\/\\/auth.example.com\"", aud, exp)));
}
END_TEST

/* ---------------------------------------------------------------------------
 * E12: unknown keys and the JWKS refresh
 * ------------------------------------------------------------------------ */

/* An ES256 token naming kid, with a signature nobody made. */
static char *unknown_kid(const char *kid) {
  unsigned char sig[64];
  memset(sig, 7, sizeof sig);
  return with_sig(hdr("ES256", kid), claims(NULL), sig, sizeof sig);
}

START_TEST(e12_unknown_kid) {
  fetcher f = {0};
  f.doc = main_jwks();
  mcp_auth_options o = base_opts();
  o.jwks_fetch = fetch_cb;
  o.jwks_fetch_data = &f;
  mcp__jwt *j = verifier(&o);
  /* A known kid needs no fetch, valid or not. */
  expect_ok(j, es(claims(NULL)));
  unsigned char zero[64] = {0};
  zero[0] = 1;
  zero[63] = 1;
  expect_bad(j, with_sig(hdr("ES256", "ec256"), claims(NULL), zero, 64),
             "bad signature");
  ck_assert_int_eq(atomic_load(&f.calls), 0);
  /* An unknown kid: one fetch, then refused. */
  expect_bad(j, unknown_kid("rotated"), "unknown key");
  ck_assert_int_eq(atomic_load(&f.calls), 1);
  /* A 1000-kid spray within the window: no further fetch. */
  for (int i = 0; i < 1000; i++) {
    char kid[32];
    size_t mark = nkept;
    snprintf(kid, sizeof kid, "spray-%d", i);
    expect_bad(j, unknown_kid(kid), "unknown key");
    /* Free as we go: 1000 tokens would fill the keep list. */
    while (nkept > mark)
      free(kept[--nkept]);
  }
  ck_assert_int_eq(atomic_load(&f.calls), 1);
  /* A kid-less token that no key fits also counts as unknown. */
  mcp_auth_options o2 = base_opts();
  fetcher f2 = {0};
  o2.jwks = jwks(jwk(rsa, "rsa", NULL), NULL);
  o2.jwks_fetch = fetch_cb;
  o2.jwks_fetch_data = &f2;
  f2.doc = jwks(jwk(rsa, "rsa", NULL), jwk(ec256, NULL, NULL), NULL);
  j = verifier(&o2);
  expect_ok(j, token_k(hdr("ES256", NULL), claims(NULL), "ES256", ec256));
  ck_assert_int_eq(atomic_load(&f2.calls), 1);
}
END_TEST

START_TEST(e12_rotation_and_window) {
  fetcher f = {0};
  mcp_auth_options o = base_opts();
  o.jwks = jwks(jwk(rsa, "old", NULL), NULL);
  o.jwks_fetch = fetch_cb;
  o.jwks_fetch_data = &f;
  o.jwks_refresh_s = 1;
  mcp__jwt *j = verifier(&o);
  const char *p = claims(NULL);
  const char *t_new = token_k(hdr("ES256", "new"), p, "ES256", ec256);
  const char *t_old = token_k(hdr("RS256", "old"), p, "RS256", rsa);
  /* The fetch fails: refused, and the old keys still work. */
  f.fail = true;
  expect_bad(j, t_new, "unknown key");
  ck_assert_int_eq(atomic_load(&f.calls), 1);
  expect_ok(j, t_old);
  /* E26: HTML, an oversized document and an unusable one keep them too,
   * one fetch per window. */
  const char *docs[] = {"<html><body>502 Bad Gateway</body></html>", NULL,
                        "{\"keys\":[]}"};
  char *big = keep(malloc(MCP__JWKS_MAX_DOC + 2));
  memset(big, ' ', MCP__JWKS_MAX_DOC + 1);
  memcpy(big, main_jwks(), strlen(main_jwks()));
  big[MCP__JWKS_MAX_DOC + 1] = '\0';
  docs[1] = big;
  f.fail = false;
  for (int i = 0; i < 3; i++) {
    sleep_ms(1100);
    f.doc = docs[i];
    expect_bad(j, t_new, "unknown key");
    ck_assert_int_eq(atomic_load(&f.calls), 2 + i);
    expect_ok(j, t_old);
  }
  /* Rotation: the next window's fetch brings the new key. */
  f.doc = jwks(jwk(ec256, "new", NULL), NULL);
  expect_bad(j, t_new, "unknown key"); /* still in the window */
  ck_assert_int_eq(atomic_load(&f.calls), 4);
  sleep_ms(1100);
  expect_ok(j, t_new);
  ck_assert_int_eq(atomic_load(&f.calls), 5);
  expect_ok(j, t_new);
  expect_bad(j, t_old, "unknown key"); /* rotated out; window closed */
  ck_assert_int_eq(atomic_load(&f.calls), 5);
}
END_TEST

typedef struct spray_arg {
  mcp__jwt *j;
  const char *token;
  int rc;
} spray_arg;

static void *spray_run(void *arg) {
  spray_arg *a = arg;
  mcp_token_info ti;
  char w[128];
  a->rc = mcp__jwt_verify(a->j, a->token, &ti, w, sizeof w);
  return NULL;
}

START_TEST(e12_single_flight) {
  /* Eight threads meet the same new kid while the fetch takes 300 ms: one
   * fetch, and all eight accept the token it brings. */
  fetcher f = {0};
  f.delay_ms = 300;
  f.doc = jwks(jwk(ec256, "new", NULL), NULL);
  mcp_auth_options o = base_opts();
  o.jwks_fetch = fetch_cb;
  o.jwks_fetch_data = &f;
  mcp__jwt *j = verifier(&o);
  const char *t = token_k(hdr("ES256", "new"), claims(NULL), "ES256", ec256);
  pthread_t th[8];
  spray_arg args[8];
  for (int i = 0; i < 8; i++) {
    args[i] = (spray_arg){j, t, -100};
    ck_assert_int_eq(pthread_create(&th[i], NULL, spray_run, &args[i]), 0);
  }
  for (int i = 0; i < 8; i++) {
    pthread_join(th[i], NULL);
    ck_assert_int_eq(args[i].rc, 0);
  }
  ck_assert_int_eq(atomic_load(&f.calls), 1);
  /* The same with a spray of different unknown kids. */
  fetcher g = {0};
  g.delay_ms = 200;
  g.doc = main_jwks();
  o.jwks_fetch_data = &g;
  j = verifier(&o);
  for (int i = 0; i < 8; i++) {
    args[i] = (spray_arg){j, unknown_kid(fmt("kid-%d", i)), -100};
    ck_assert_int_eq(pthread_create(&th[i], NULL, spray_run, &args[i]), 0);
  }
  for (int i = 0; i < 8; i++) {
    pthread_join(th[i], NULL);
    ck_assert_int_eq(args[i].rc, MCP_EINVAL);
  }
  ck_assert_int_eq(atomic_load(&g.calls), 1);
}
END_TEST

/* ---------------------------------------------------------------------------
 * E13: hostile kid values
 * ------------------------------------------------------------------------ */

START_TEST(e13_kid_injection) {
  /* Keys from a file that is gone by the time tokens arrive: a lookup that
   * touched the file system would fail differently (or find /dev/null). */
  char path[] = "/tmp/test_jwt_XXXXXX";
  int fd = mkstemp(path);
  ck_assert_int_ge(fd, 0);
  const char *doc = main_jwks();
  ck_assert_int_eq(write(fd, doc, strlen(doc)), (ssize_t)strlen(doc));
  close(fd);
  fetcher f = {0};
  f.doc = doc;
  mcp_auth_options o = base_opts();
  o.jwks = NULL;
  o.jwks_file = path;
  o.jwks_fetch = fetch_cb;
  o.jwks_fetch_data = &f;
  mcp__jwt *j = verifier(&o);
  unlink(path);
  const char *p = claims(NULL);
  const char *kids[] = {"../../dev/null", "/dev/null",    "ec256/../ec256",
                        "' OR '1'='1",    "ec256\\u0000", "ec256 ",
                        "EC256"};
  for (size_t i = 0; i < TU_COUNT(kids); i++) {
    int rc =
        mcp__jwt_verify(j, token_k(hdr("ES256", kids[i]), p, "ES256", ec256),
                        &info, why, sizeof why);
    ck_assert_int_eq(rc, MCP_EINVAL);
  }
  /* Only the first unknown kid fetched (the window is 60 s). */
  ck_assert_int_le(atomic_load(&f.calls), 1);
  /* A kid of 129 bytes fetches nothing and is refused; 128 is looked up. */
  char long_kid[130];
  memset(long_kid, 'k', 129);
  long_kid[129] = '\0';
  expect_bad(j, token_k(hdr("ES256", long_kid), p, "ES256", ec256), "kid");
  long_kid[128] = '\0';
  expect_bad(j, token_k(hdr("ES256", long_kid), p, "ES256", ec256),
             "unknown key");
  /* A kid that is no string. */
  expect_bad(
      j, token_k("{\"alg\":\"ES256\",\"kid\":[\"ec256\"]}", p, "ES256", ec256),
      "kid");
  /* 1 MB of kid: over every cap before anything is looked up. */
  char *huge = keep(malloc(1 << 20));
  memset(huge, 'A', (1 << 20) - 1);
  huge[(1 << 20) - 1] = '\0';
  expect_bad(j, fmt("%s.%s.AAAA", b64s(hdr("ES256", huge)), b64s(p)),
             "token too long");
  ck_assert_int_le(atomic_load(&f.calls), 1);
  /* The set read at startup still serves. */
  expect_ok(j, token_k(hdr("ES256", "ec256"), p, "ES256", ec256));
}
END_TEST

/* ---------------------------------------------------------------------------
 * E14: keys named in the header are never used; crit
 * ------------------------------------------------------------------------ */

START_TEST(e14_header_keys_ignored) {
  fetcher f = {0};
  f.doc = main_jwks();
  mcp_auth_options o = base_opts();
  o.jwks_fetch = fetch_cb;
  o.jwks_fetch_data = &f;
  mcp__jwt *j = verifier(&o);
  const char *p = claims(NULL);
  const char *evil_jwk = jwk(evil, "evil", NULL);
  /* Signed by the attacker, whose key rides in "jwk" (with its kid, with
   * our kid, with none), or is pointed to by jku / x5u. */
  const char *headers[] = {
      fmt("{\"alg\":\"ES256\",\"jwk\":%s}", evil_jwk),
      fmt("{\"alg\":\"ES256\",\"kid\":\"ec256\",\"jwk\":%s}", evil_jwk),
      fmt("{\"alg\":\"ES256\",\"kid\":\"ec256\",\"jku\":"
          "\"https://evil.example/jwks.json\"}"),
      fmt("{\"alg\":\"ES256\",\"kid\":\"ec256\",\"x5u\":"
          "\"https://evil.example/cert.pem\"}"),
      fmt("{\"alg\":\"ES256\",\"kid\":\"ec256\",\"x5c\":[\"MIIB\"]}"),
  };
  for (size_t i = 0; i < TU_COUNT(headers); i++)
    expect_bad(j, token_k(headers[i], p, "ES256", evil), "bad signature");
  /* The attacker's own kid is unknown: the refresh asks our provider, never
   * the header's URL. */
  expect_bad(j,
             token_k(fmt("{\"alg\":\"ES256\",\"kid\":\"evil\",\"jwk\":%s,"
                         "\"jku\":\"https://evil.example/jwks.json\"}",
                         evil_jwk),
                     p, "ES256", evil),
             "unknown key");
  ck_assert_int_eq(atomic_load(&f.calls), 1);
  /* The same headers on a token signed by our key: ignored, valid. */
  for (size_t i = 1; i < TU_COUNT(headers); i++)
    expect_ok(j, token_k(headers[i], p, "ES256", ec256));
  /* crit: nothing is understood, so any crit refuses the token. */
  const char *crits[] = {"[\"exp\"]", "[]", "[\"b64\"]", "\"b64\"", "null"};
  for (size_t i = 0; i < TU_COUNT(crits); i++)
    expect_bad(j,
               token_k(fmt("{\"alg\":\"ES256\",\"kid\":\"ec256\",\"b64\":true,"
                           "\"crit\":%s}",
                           crits[i]),
                       p, "ES256", ec256),
               "crit");
}
END_TEST

/* ---------------------------------------------------------------------------
 * E15 and the strict JSON of header and payload
 * ------------------------------------------------------------------------ */

START_TEST(e15_duplicates_and_strict_json) {
  mcp__jwt *j = std_verifier();
  const char *p = claims(NULL);
  /* E15: duplicate alg, either order, and spelled with an escape. */
  const char *dup_headers[] = {
      "{\"alg\":\"ES256\",\"kid\":\"ec256\",\"alg\":\"none\"}",
      "{\"alg\":\"none\",\"kid\":\"ec256\",\"alg\":\"ES256\"}",
      "{\"alg\":\"ES256\",\"kid\":\"ec256\",\"\\u0061lg\":\"ES256\"}",
      "{\"alg\":\"ES256\",\"kid\":\"ec256\",\"kid\":\"ec256\"}",
      "{\"alg\":\"ES256\",\"kid\":\"ec256\",\"x\":{\"a\":1,\"a\":2}}",
  };
  for (size_t i = 0; i < TU_COUNT(dup_headers); i++)
    expect_bad(j, token_k(dup_headers[i], p, "ES256", ec256),
               "header is not strict JSON");
  const char *h = hdr("ES256", "ec256");
  const char *exp = future_exp();
  /* Payloads the strict layer refuses, each correctly signed. */
  const char *bad_payloads[] = {
      fmt("{\"iss\":\"" ISS "\",\"aud\":\"" RES "\",\"exp\":%s,"
          "\"sub\":\"a\",\"sub\":\"b\"}",
          exp),
      fmt("{\"iss\":\"" ISS "\",\"aud\":\"" RES "\",\"exp\":%s,"
          "\"x\":[{\"k\":1,\"k\":1}]}",
          exp),
      fmt("{\"iss\":\"" ISS "\",\"aud\":\"" RES "\",\"exp\":%s} x", exp),
      fmt("{\"iss\":\"" ISS "\",\"aud\":\"" RES "\",\"exp\":%s,}", exp),
      fmt("{\"iss\":\"" ISS "\",\"aud\":\"" RES "\",\"exp\":%s,"
          "\"sub\":\"a\\u0000b\"}",
          exp),
      fmt("{\"iss\":\"" ISS "\",\"aud\":\"" RES "\",\"exp\":%s,"
          "\"sub\":\"\\ud800\"}",
          exp),
      fmt("{\"iss\":\"" ISS "\",\"aud\":\"" RES "\",\"exp\":%s,"
          "\"sub\":\"\xc0\xaf\"}",
          exp),
      fmt("{\"iss\":\"" ISS "\",\"aud\":\"" RES "\",\"exp\":%s,"
          "\"sub\":\"\xed\xa0\x80\"}",
          exp),
      fmt("{\"iss\":\"" ISS "\",\"aud\":\"" RES "\",\"exp\":%s,"
          "\"sub\":\"tab\there\"}",
          exp),
      fmt("{\"iss\":\"" ISS "\",\"aud\":\"" RES "\",\"exp\":0%s}", exp),
      fmt("{\"iss\":\"" ISS "\",\"aud\":\"" RES "\",\"exp\":%s,"
          "\"x\":NaN}",
          exp),
      fmt("{\"iss\":\"" ISS "\",\"aud\":\"" RES "\",\"exp\":%s,'x':1}", exp),
      fmt("[{\"iss\":\"" ISS "\",\"aud\":\"" RES "\",\"exp\":%s}]", exp),
  };
  for (size_t i = 0; i < TU_COUNT(bad_payloads); i++)
    expect_bad(j, token_k(h, bad_payloads[i], "ES256", ec256),
               "payload is not strict JSON");
  /* Nesting: 16 levels pass, 17 do not. */
  char deep[128] = "", close_[32] = "";
  for (int i = 0; i < 15; i++)
    strcat(deep, "[");
  for (int i = 0; i < 15; i++)
    strcat(close_, "]");
  expect_ok(j, token_k(h,
                       fmt("{\"iss\":\"" ISS "\",\"aud\":\"" RES
                           "\",\"exp\":%s,\"x\":%s1%s}",
                           exp, deep, close_),
                       "ES256", ec256));
  expect_bad(j,
             token_k(h,
                     fmt("{\"iss\":\"" ISS "\",\"aud\":\"" RES
                         "\",\"exp\":%s,\"x\":[%s1%s]}",
                         exp, deep, close_),
                     "ES256", ec256),
             "payload is not strict JSON");
  expect_bad(j,
             token_k(fmt("{\"alg\":\"ES256\",\"kid\":\"ec256\",\"x\":[%s1%s]}",
                         deep, close_),
                     p, "ES256", ec256),
             "header is not strict JSON");
  /* Header oddities: not an object, invalid UTF-8, control character. */
  const char *bad_headers[] = {"[\"ES256\"]",
                               "\"ES256\"",
                               "{\"alg\":\"ES256\",\"kid\":\"ec\xff\"}",
                               "{\"alg\":\"ES256\",\"kid\":\"ec\x01\"}",
                               "{\"alg\":\"ES256\" \"kid\":\"ec256\"}",
                               ""};
  for (size_t i = 0; i < TU_COUNT(bad_headers); i++)
    expect_bad(j, token_k(bad_headers[i], p, "ES256", ec256), NULL);
  /* Valid JSON in unusual spelling is fine: whitespace, escapes, UTF-8. */
  expect_ok(j, token_k(" {\n\t\"alg\" : \"ES256\" , \"k\\u0069d\":\"ec256\" } ",
                       fmt("{\"iss\":\"" ISS "\",\"aud\":\"" RES
                           "\",\"exp\":%s,\"sub\":\"j\xc3\xb6rg "
                           "\\ud83d\\ude00\",\"n\":[1.5e3,-0.0,true,null]}",
                           exp),
                       "ES256", ec256));
  ck_assert_str_eq(info.subject, "j\xc3\xb6rg \xf0\x9f\x98\x80");
}
END_TEST

/* ---------------------------------------------------------------------------
 * E17, E18: signature lengths and values
 * ------------------------------------------------------------------------ */

START_TEST(e17_ecdsa_signatures) {
  mcp__jwt *j = std_verifier();
  const char *h = hdr("ES256", "ec256"), *p = claims(NULL);
  char *input = fmt("%s.%s", b64s(h), b64s(p));
  unsigned char sig[132];
  size_t n = sign("ES256", ec256, input, sig);
  ck_assert_uint_eq(n, 64);
  expect_ok(j, with_sig(h, p, sig, 64));
  /* 63 and 65 bytes. */
  expect_bad(j, with_sig(h, p, sig, 63), "signature length");
  unsigned char longer[65];
  memcpy(longer, sig, 64);
  longer[64] = 0;
  expect_bad(j, with_sig(h, p, longer, 65), "signature length");
  /* r = s = 0, r = 0, s = 0 (CVE-2022-21449). */
  unsigned char zero[64] = {0};
  expect_bad(j, with_sig(h, p, zero, 64), "r or s zero");
  memcpy(zero + 32, sig + 32, 32);
  expect_bad(j, with_sig(h, p, zero, 64), "r or s zero");
  memcpy(zero, sig, 32);
  memset(zero + 32, 0, 32);
  expect_bad(j, with_sig(h, p, zero, 64), "r or s zero");
  /* r and s of all ones (above the group order), and a flipped bit. */
  unsigned char ff[64];
  memset(ff, 0xFF, sizeof ff);
  expect_bad(j, with_sig(h, p, ff, 64), "bad signature");
  sig[10] ^= 1;
  expect_bad(j, with_sig(h, p, sig, 64), "bad signature");
  /* The DER form OpenSSL itself produces is not a JWS signature. */
  EVP_MD_CTX *c = EVP_MD_CTX_new();
  unsigned char der[80];
  size_t dlen = sizeof der;
  ck_assert_int_eq(
      EVP_DigestSignInit_ex(c, NULL, "SHA256", NULL, NULL, ec256, NULL), 1);
  ck_assert_int_eq(
      EVP_DigestSign(c, der, &dlen, (unsigned char *)input, strlen(input)), 1);
  EVP_MD_CTX_free(c);
  expect_bad(j, with_sig(h, p, der, dlen), "signature length");
  /* P-384 and P-521 want 96 and 132 bytes. */
  const char *h384 = hdr("ES384", "ec384");
  expect_bad(j, with_sig(h384, p, sig, 64), "signature length");
  unsigned char z132[132] = {0};
  expect_bad(j, with_sig(hdr("ES512", "ec521"), p, z132, 132), "r or s zero");
  expect_bad(j, with_sig(hdr("ES512", "ec521"), p, z132, 131),
             "signature length");
  /* Ed25519: exactly 64 bytes. */
  expect_bad(j, with_sig(hdr("EdDSA", "ed"), p, sig, 63), "signature length");
  expect_bad(j, with_sig(hdr("EdDSA", "ed"), p, ff, 64), "bad signature");
}
END_TEST

START_TEST(e18_rsa_short_signature) {
  mcp__jwt *j = std_verifier();
  const char *h = hdr("RS256", "rsa"), *p = claims(NULL);
  /* "AAAA" is three zero bytes. */
  expect_bad(j, fmt("%s.%s.AAAA", b64s(h), b64s(p)), "signature length");
  expect_bad(j, fmt("%s.%s.AA", b64s(h), b64s(p)), "signature length");
  char *input = fmt("%s.%s", b64s(h), b64s(p));
  unsigned char sig[1024];
  size_t n = sign("RS256", rsa, input, sig);
  ck_assert_uint_eq(n, 256);
  expect_ok(j, with_sig(h, p, sig, n));
  expect_bad(j, with_sig(h, p, sig, 255), "signature length");
  sig[256] = 0;
  expect_bad(j, with_sig(h, p, sig, 257), "signature length");
  /* Leading zero stripped or added: the length is the modulus's. */
  unsigned char shifted[257] = {0};
  memcpy(shifted + 1, sig, 256);
  expect_bad(j, with_sig(h, p, shifted, 257), "signature length");
  sig[255] ^= 1;
  expect_bad(j, with_sig(h, p, sig, 256), "bad signature");
  /* 1025 bytes: over the signature cap. */
  unsigned char huge[1025] = {1};
  expect_bad(j, with_sig(h, p, huge, sizeof huge), "signature too large");
}
END_TEST

/* ---------------------------------------------------------------------------
 * E19: shape and size
 * ------------------------------------------------------------------------ */

START_TEST(e19_shape) {
  mcp__jwt *j = std_verifier();
  const char *h = hdr("ES256", "ec256"), *p = claims(NULL);
  char *t = es(p);
  expect_ok(j, t);
  char *sig = strrchr(t, '.') + 1;
  /* Segments: 2, 4 (extra dot), 5 (a JWE), leading and trailing dots. */
  expect_bad(j, fmt("%s.%s", b64s(h), b64s(p)), "three segments");
  expect_bad(j, fmt("%s.", t), "three segments");
  expect_bad(j, fmt("%s.%s", t, sig), "three segments");
  expect_bad(j, fmt(".%s", t), "three segments");
  expect_bad(j, fmt("%s..%s", b64s(h), sig), "empty header or payload");
  expect_bad(j, fmt(".%s.%s", b64s(p), sig), "empty header or payload");
  expect_bad(j,
             fmt("%s.%s.%s.%s.%s",
                 b64s("{\"alg\":\"RSA-OAEP\",\"enc\":\"A256GCM\"}"),
                 b64url((const unsigned char *)"key-material-0123", 17),
                 b64s("iv-12bytes!!"), b64s("ciphertext"), b64s("tag")),
             "three segments");
  expect_bad(j, "", "three segments");
  expect_bad(j, "..", "empty header or payload");
  expect_bad(j, NULL, NULL);
  /* Strict base64url: padding, the standard alphabet, spaces, trailing
   * bits, a length of 4k+1. */
  char *ph = b64s(h), *pp = b64s(p);
  expect_bad(j, fmt("%s=.%s.%s", ph, pp, sig), "base64url");
  expect_bad(j, fmt("%s.%s.%s==", ph, pp, sig), "base64url");
  expect_bad(j, fmt("%s.%s.%s", ph, pp, fmt("+%s", sig + 1)), "base64url");
  expect_bad(j, fmt("%s.%s.%s", ph, pp, fmt("/%s", sig + 1)), "base64url");
  expect_bad(j, fmt(" %s", t), "base64url");
  expect_bad(j, fmt("%s\n", t), "base64url");
  expect_bad(j, fmt("%s.%s.%sAAA", ph, pp, sig), "base64url");
  /* A header of 29 bytes ends in "n0": the last character carries the low
   * four bits of "}" and two zero bits. "n1" decodes to the same bytes
   * with one of those bits set: a second spelling of the same token. */
  const char *h29 = "{\"alg\":\"ES256\",\"kid\":\"ec256\"}";
  char *t29 = token_k(h29, p, "ES256", ec256);
  expect_ok(j, t29);
  char *q = strchr(t29, '.') - 1;
  ck_assert_int_eq(*q, '0');
  *q = '1';
  expect_bad(j, t29, "base64url");
  /* Over 8 KiB in all. */
  char *pad = keep(malloc(9000));
  memset(pad, 'a', 8999);
  pad[8999] = '\0';
  expect_bad(j, fmt("%s.%s.%s", ph, pp, pad), "token too long");
  /* A header over 1 KiB within 8 KiB in all; a payload over 6 KiB makes
   * a token over 8 KiB. */
  char *filler = keep(malloc(6200));
  memset(filler, 'x', 6199);
  filler[6199] = '\0';
  expect_bad(
      j,
      token_k(fmt("{\"alg\":\"ES256\",\"kid\":\"ec256\",\"x\":\"%.1024s\"}",
                  filler),
              p, "ES256", ec256),
      "header too large");
  expect_bad(
      j, token_k(h, claims(fmt(",\"x\":\"%.6144s\"", filler)), "ES256", ec256),
      "token too long");
  /* Just under the caps passes. */
  expect_ok(
      j, token_k(h, claims(fmt(",\"x\":\"%.5800s\"", filler)), "ES256", ec256));
}
END_TEST

/* ---------------------------------------------------------------------------
 * E21: typ
 * ------------------------------------------------------------------------ */

START_TEST(e21_typ) {
  mcp_auth_options o = base_opts();
  o.require_at_jwt = true;
  mcp__jwt *j = verifier(&o);
  const char *p = claims(NULL);
  const char *good[] = {"at+jwt", "AT+JWT", "application/at+jwt",
                        "Application/AT+JWT"};
  for (size_t i = 0; i < TU_COUNT(good); i++)
    expect_ok(j, token_k(fmt("{\"alg\":\"ES256\",\"kid\":\"ec256\",\"typ\":"
                             "\"%s\"}",
                             good[i]),
                         p, "ES256", ec256));
  const char *bad[] = {"\"JWT\"", "\"jwt\"",      "\"at+jwt \"",        "\"\"",
                       "1",       "[\"at+jwt\"]", "\"application/jwt\""};
  for (size_t i = 0; i < TU_COUNT(bad); i++)
    expect_bad(
        j,
        token_k(fmt("{\"alg\":\"ES256\",\"kid\":\"ec256\",\"typ\":%s}", bad[i]),
                p, "ES256", ec256),
        "typ");
  expect_bad(
      j, token_k("{\"alg\":\"ES256\",\"kid\":\"ec256\"}", p, "ES256", ec256),
      "typ");
  /* Not required: any typ, or none. */
  j = std_verifier();
  expect_ok(j, token_k("{\"alg\":\"ES256\",\"kid\":\"ec256\",\"typ\":\"JWT\"}",
                       p, "ES256", ec256));
  expect_ok(
      j, token_k("{\"alg\":\"ES256\",\"kid\":\"ec256\"}", p, "ES256", ec256));
}
END_TEST

/* ---------------------------------------------------------------------------
 * E27: JWKs that are skipped, and JWKS documents that are refused
 * ------------------------------------------------------------------------ */

START_TEST(e27_unusable_keys) {
  const char *p = claims(NULL);
  const char *skipped[] = {
      jwk(rsa_small, "small", NULL),
      "{\"kty\":\"oct\",\"kid\":\"oct\",\"k\":"
      "\"c2VjcmV0LXNlY3JldC1zZWNyZXQtc2VjcmV0LXNlY3JldA\"}",
      "{\"kty\":\"oct\",\"kid\":\"oct2\"}",
      keep(tc_jwk(ec256, "offcurve", NULL, TC_JWK_OFF_CURVE)),
      keep(tc_jwk(ec256, "withd", NULL, TC_JWK_PRIVATE)),
      keep(tc_jwk(rsa, "rsa-withd", NULL, TC_JWK_PRIVATE)),
      jwk(ec256, "enc", "\"use\":\"enc\""),
      jwk(ec256, "signops", "\"key_ops\":[\"sign\"]"),
      jwk(ec256, "badops", "\"key_ops\":\"verify\""),
      jwk(ec256, "hs", "\"alg\":\"HS256\""),
      jwk(ec256, "none", "\"alg\":\"none\""),
      jwk(ec256, "es384", "\"alg\":\"ES384\""),
      fmt("{\"kty\":\"OKP\",\"kid\":\"x\",\"crv\":\"X25519\",\"x\":\"%s\"}",
          b64s("0123456789abcdef0123456789abcdef")),
      "{\"kty\":\"EC\",\"kid\":\"short\",\"crv\":\"P-256\",\"x\":\"AAAA\","
      "\"y\":\"AAAA\"}",
      "{\"kty\":\"EC\",\"kid\":\"k1\",\"crv\":\"secp256k1\",\"x\":\"AAAA\","
      "\"y\":\"AAAA\"}",
      "{\"kid\":\"nokty\"}",
      "{\"kty\":\"RSA\",\"kid\":\"e0\",\"n\":\"AQAB\",\"e\":\"\"}",
      fmt("{\"kty\":\"RSA\",\"kid\":\"e1\",\"n\":\"%s\",\"e\":\"AQ\"}",
          bn_param(rsa, "n")),
      fmt("{\"kty\":\"RSA\",\"kid\":\"e2\",\"n\":\"%s\",\"e\":\"Ag\"}",
          bn_param(rsa, "n")),
      fmt("{\"kty\":\"RSA\",\"kid\":\"even\",\"n\":\"%sA\",\"e\":\"AQAB\"}",
          bn_param(rsa, "n")),
      "\"not an object\"",
      jwk(ec256, fmt("%0129d", 0), NULL),
  };
  /* Each one alone: nothing usable, refused. */
  for (size_t i = 0; i < TU_COUNT(skipped); i++) {
    mcp__jwks *set = NULL;
    char err[256];
    const char *doc = jwks(skipped[i], NULL);
    ck_assert_msg(mcp__jwks_parse(doc, strlen(doc), &set, err, sizeof err) ==
                      MCP_EINVAL,
                  "key %zu was not skipped", i);
    ck_assert_ptr_null(set);
    ck_assert_ptr_nonnull(strstr(err, "no usable key"));
  }
  /* Among good keys: skipped, the rest serve. */
  mcp_auth_options o = base_opts();
  o.jwks = jwks(skipped[0], skipped[1], skipped[3], skipped[4], skipped[5],
                jwk(ec256, "good", NULL), NULL);
  char err[256];
  mcp__jwt *j = NULL;
  ck_assert_int_eq(mcp__jwt_new(&o, &j, err, sizeof err), 0);
  vs[nvs++] = j;
  ck_assert_msg(strstr(err, "5 key(s)") != NULL, "%s", err);
  ck_assert_ptr_nonnull(strstr(err, "shorter than 2048 bits"));
  expect_ok(j, token_k(hdr("ES256", "good"), p, "ES256", ec256));
  expect_bad(j, token_k(hdr("RS256", "small"), p, "RS256", rsa_small),
             "unknown key");
  expect_bad(j, token_k(hdr("ES256", "offcurve"), p, "ES256", ec256),
             "unknown key");
  expect_bad(j, token_k(hdr("ES256", "withd"), p, "ES256", ec256),
             "unknown key");
  expect_bad(j, token_k(hdr("RS256", "rsa-withd"), p, "RS256", rsa),
             "unknown key");
  expect_bad(j, token_hs(hdr("HS256", "oct"), p, "secret", 6), "HS256");
  /* Without a kid, the 1024-bit key is no candidate either. */
  expect_bad(j, token_k(hdr("RS256", NULL), p, "RS256", rsa_small),
             "unknown key");
  /* The good ones of the list above, for contrast. */
  const char *ok_keys[] = {jwk(ec256, "a", "\"key_ops\":[\"sign\",\"verify\"]"),
                           jwk(ec256, "b", "\"use\":\"sig\",\"alg\":\"ES256\""),
                           jwk(rsa, "c", "\"alg\":\"PS512\"")};
  for (size_t i = 0; i < TU_COUNT(ok_keys); i++) {
    mcp__jwks *set = NULL;
    const char *doc = jwks(ok_keys[i], NULL);
    ck_assert_int_eq(mcp__jwks_parse(doc, strlen(doc), &set, err, sizeof err),
                     0);
    ck_assert_str_eq(err, "");
    ck_assert_uint_eq(set->n, 1);
    mcp__jwks_free(set);
  }
}
END_TEST

START_TEST(e27_documents) {
  mcp__jwt *j = std_verifier();
  const char *p = claims(NULL);
  const char *t = es(p);
  char err[256];
  /* Refused documents keep the last good set. */
  const char *bad[] = {
      "",
      "null",
      "<!DOCTYPE html><html></html>",
      "{\"keys\":{}}",
      "{\"key\":[]}",
      "{\"keys\":[]}",
      "{\"keys\":[],\"keys\":[]}",
      fmt("{\"keys\":[%s]} trailing", jwk(ec256, "x", NULL)),
      fmt("{\"keys\":[%s,%s]}", jwk(rsa_small, "s", NULL),
          "{\"kty\":\"oct\",\"k\":\"AAAA\"}"),
  };
  for (size_t i = 0; i < TU_COUNT(bad); i++) {
    ck_assert_int_eq(
        mcp__jwt_set_jwks(j, bad[i], strlen(bad[i]), err, sizeof err),
        MCP_EINVAL);
    ck_assert_str_ne(err, "");
    expect_ok(j, t);
  }
  /* 65 keys, then 64. */
  const char *one = jwk(ec256, NULL, NULL);
  char *many = keep(malloc(65 * (strlen(one) + 1) + 32));
  for (int count = 65; count >= 64; count--) {
    strcpy(many, "{\"keys\":[");
    for (int i = 0; i < count; i++) {
      if (i)
        strcat(many, ",");
      strcat(many, one);
    }
    strcat(many, "]}");
    int rc = mcp__jwt_set_jwks(j, many, strlen(many), err, sizeof err);
    ck_assert_int_eq(rc, count == 65 ? MCP_EINVAL : 0);
    if (rc)
      ck_assert_ptr_nonnull(strstr(err, "64"));
  }
  expect_ok(j, token_k(hdr("ES256", NULL), p, "ES256", ec256));
  expect_bad(j, t, "unknown key");
  /* Over 1 MiB. */
  size_t n = MCP__JWKS_MAX_DOC + 1;
  char *big = keep(malloc(n));
  memset(big, ' ', n);
  memcpy(big, main_jwks(), strlen(main_jwks()));
  ck_assert_int_eq(mcp__jwt_set_jwks(j, big, n, err, sizeof err), MCP_EINVAL);
  ck_assert_int_eq(mcp__jwt_set_jwks(j, big, n - 1, err, sizeof err), 0);
  expect_ok(j, t);
}
END_TEST

START_TEST(config_errors) {
  char err[256];
  mcp__jwt *j = NULL;
  mcp_auth_options o = base_opts();
  o.issuer = NULL;
  ck_assert_int_eq(mcp__jwt_new(&o, &j, err, sizeof err), MCP_EINVAL);
  ck_assert_ptr_nonnull(strstr(err, "issuer"));
  o = base_opts();
  o.issuer = "";
  ck_assert_int_eq(mcp__jwt_new(&o, &j, err, sizeof err), MCP_EINVAL);
  o = base_opts();
  o.resource = NULL;
  ck_assert_int_eq(mcp__jwt_new(&o, &j, err, sizeof err), MCP_EINVAL);
  ck_assert_ptr_nonnull(strstr(err, "resource"));
  o = base_opts();
  o.jwks = NULL;
  ck_assert_int_eq(mcp__jwt_new(&o, &j, err, sizeof err), MCP_EINVAL);
  ck_assert_ptr_nonnull(strstr(err, "needs keys"));
  o = base_opts();
  o.jwks_file = "/nonexistent/jwks.json";
  ck_assert_int_eq(mcp__jwt_new(&o, &j, err, sizeof err), MCP_EINVAL);
  ck_assert_ptr_nonnull(strstr(err, "not both"));
  o.jwks = NULL;
  ck_assert_int_eq(mcp__jwt_new(&o, &j, err, sizeof err), MCP_EINVAL);
  ck_assert_ptr_nonnull(strstr(err, "/nonexistent/jwks.json"));
  o = base_opts();
  o.jwks = "{\"keys\":[{\"kty\":\"oct\",\"k\":\"AAAA\"}]}";
  ck_assert_int_eq(mcp__jwt_new(&o, &j, err, sizeof err), MCP_EINVAL);
  ck_assert_ptr_nonnull(strstr(err, "auth.jwks"));
  o = base_opts();
  o.scope_claim = "";
  ck_assert_int_eq(mcp__jwt_new(&o, &j, err, sizeof err), MCP_EINVAL);
  ck_assert_ptr_null(j);
  ck_assert_int_eq(mcp__jwt_new(NULL, &j, err, sizeof err), MCP_EINVAL);
  /* Keys from the fetch alone, or an HS256 secret alone, are enough. */
  fetcher f = {0};
  o = base_opts();
  o.jwks = NULL;
  o.jwks_fetch = fetch_cb;
  o.jwks_fetch_data = &f;
  verifier(&o);
  o.jwks_fetch = NULL;
  o.hs256_secret = SECRET;
  o.hs256_secret_len = strlen(SECRET);
  j = verifier(&o);
  expect_ok(j,
            token_hs(hdr("HS256", NULL), claims(NULL), SECRET, strlen(SECRET)));
  expect_bad(j, es(claims(NULL)), "unknown key");
  /* Options are copied. */
  char iss[] = ISS;
  o.issuer = iss;
  j = verifier(&o);
  iss[0] = 'X';
  expect_ok(j,
            token_hs(hdr("HS256", NULL), claims(NULL), SECRET, strlen(SECRET)));
  mcp__jwt_free(NULL);
}
END_TEST

/* ---------------------------------------------------------------------------
 * E30: the MAC comparison
 * ------------------------------------------------------------------------ */

START_TEST(e30_hmac_compare) {
  mcp_auth_options o = base_opts();
  o.hs256_secret = SECRET;
  o.hs256_secret_len = strlen(SECRET);
  mcp__jwt *j = verifier(&o);
  const char *h = hdr("HS256", NULL), *p = claims(NULL);
  char *input = fmt("%s.%s", b64s(h), b64s(p));
  unsigned char mac[33];
  size_t n = 0;
  ck_assert_ptr_nonnull(EVP_Q_mac(NULL, "HMAC", NULL, "SHA256", NULL, SECRET,
                                  strlen(SECRET), (unsigned char *)input,
                                  strlen(input), mac, 32, &n));
  ck_assert_uint_eq(n, 32);
  expect_ok(j, with_sig(h, p, mac, 32));
  /* The whole MAC is compared (CRYPTO_memcmp over 32 bytes): a difference
   * in the last byte, or in the first, is found; a prefix is not enough,
   * nor is a longer MAC. */
  mac[31] ^= 0x01;
  expect_bad(j, with_sig(h, p, mac, 32), "bad signature");
  mac[31] ^= 0x01;
  mac[0] ^= 0x80;
  expect_bad(j, with_sig(h, p, mac, 32), "bad signature");
  mac[0] ^= 0x80;
  expect_bad(j, with_sig(h, p, mac, 31), "signature length");
  expect_bad(j, with_sig(h, p, mac, 16), "signature length");
  mac[32] = 0;
  expect_bad(j, with_sig(h, p, mac, 33), "signature length");
  unsigned char zero[32] = {0};
  expect_bad(j, with_sig(h, p, zero, 32), "bad signature");
  expect_ok(j, with_sig(h, p, mac, 32));
}
END_TEST

/* ---------------------------------------------------------------------------
 * Scopes and subject
 * ------------------------------------------------------------------------ */

static char *with_claim(const char *claim) {
  return fmt("{\"iss\":\"" ISS "\",\"aud\":\"" RES "\",\"exp\":%lld%s}",
             now_s() + 600, claim);
}

START_TEST(scope_claims) {
  mcp__jwt *j = std_verifier();
  expect_ok(j, es(with_claim(",\"scope\":\"a b  c \"")));
  ck_assert_str_eq(info.scopes, "a b c");
  expect_ok(j, es(with_claim(",\"scope\":\"\"")));
  ck_assert_str_eq(info.scopes, "");
  expect_ok(j, es(with_claim(",\"scope\":\"tools:call "
                             "https://api.example/files.read\"")));
  ck_assert_str_eq(info.scopes, "tools:call https://api.example/files.read");
  /* The default "scope" claim is a string; "scp" is not read. */
  expect_bad(j, es(with_claim(",\"scope\":[\"a\",\"b\"]")), "scope");
  expect_ok(j, es(with_claim(",\"scp\":[\"a\",\"b\"]")));
  ck_assert_str_eq(info.scopes, "");
  /* Characters RFC 6749 forbids in a scope token. */
  const char *bad[] = {
      "\"a\\\"b\"",    "\"a\\\\b\"", "\"a\\tb\"", "\"caf\xc3\xa9\"",
      "\"a\\u007fb\"", "1",          "null"};
  for (size_t i = 0; i < TU_COUNT(bad); i++)
    expect_bad(j, es(with_claim(fmt(",\"scope\":%s", bad[i]))), "scope");
  /* Bounded by info->scopes: 2047 characters fit, 2048 do not. */
  char *fill = keep(malloc(2100));
  memset(fill, 's', 2099);
  fill[2099] = '\0';
  expect_ok(j, es(with_claim(fmt(",\"scope\":\"%.2047s\"", fill))));
  ck_assert_uint_eq(strlen(info.scopes), 2047);
  expect_bad(j, es(with_claim(fmt(",\"scope\":\"%.2048s\"", fill))), "scope");
  expect_bad(j, es(with_claim(fmt(",\"scope\":\"a %.2046s\"", fill))), "scope");
  /* A configured claim: a string or an array of strings. */
  mcp_auth_options o = base_opts();
  o.scope_claim = "scp";
  j = verifier(&o);
  expect_ok(j, es(with_claim(",\"scp\":[\"files:read\",\"files:write\"]")));
  ck_assert_str_eq(info.scopes, "files:read files:write");
  expect_ok(j, es(with_claim(",\"scp\":\"x y\",\"scope\":\"z\"")));
  ck_assert_str_eq(info.scopes, "x y");
  expect_ok(j, es(with_claim(",\"scp\":[]")));
  ck_assert_str_eq(info.scopes, "");
  expect_bad(j, es(with_claim(",\"scp\":[\"a b\"]")), "scope");
  expect_bad(j, es(with_claim(",\"scp\":[\"\"]")), "scope");
  expect_bad(j, es(with_claim(",\"scp\":[\"a\",1]")), "scope");
  expect_bad(j, es(with_claim(",\"scp\":[[\"a\"]]")), "scope");
  expect_bad(j, es(with_claim(",\"scp\":{\"a\":1}")), "scope");
  /* Subject: at most 255 bytes, no control characters. */
  j = std_verifier();
  expect_ok(j, es(with_claim(fmt(",\"sub\":\"%.255s\"", fill))));
  ck_assert_uint_eq(strlen(info.subject), 255);
  expect_bad(j, es(with_claim(fmt(",\"sub\":\"%.256s\"", fill))), "sub");
  expect_bad(j, es(with_claim(",\"sub\":\"a\\nb\"")), "sub");
  expect_bad(j, es(with_claim(",\"sub\":\"a\\u007f\"")), "sub");
  expect_bad(j, es(with_claim(",\"sub\":42")), "sub");
}
END_TEST

/* ---------------------------------------------------------------------------
 * Reloading the key set
 * ------------------------------------------------------------------------ */

static void write_file(const char *path, const char *text) {
  FILE *f = fopen(path, "wb");
  ck_assert_ptr_nonnull(f);
  fputs(text, f);
  fclose(f);
}

START_TEST(reload) {
  char path[] = "/tmp/test_jwt_XXXXXX";
  int fd = mkstemp(path);
  ck_assert_int_ge(fd, 0);
  close(fd);
  write_file(path, jwks(jwk(rsa, "one", NULL), NULL));
  mcp_auth_options o = base_opts();
  o.jwks = NULL;
  o.jwks_file = path;
  mcp__jwt *j = verifier(&o);
  const char *p = claims(NULL);
  const char *t1 = token_k(hdr("RS256", "one"), p, "RS256", rsa);
  const char *t2 = token_k(hdr("ES256", "two"), p, "ES256", ec256);
  expect_ok(j, t1);
  expect_bad(j, t2, "unknown key");
  char err[256];
  /* A good file replaces the set. */
  write_file(path, jwks(jwk(ec256, "two", NULL), NULL));
  ck_assert_int_eq(mcp__jwt_reload_file(j, err, sizeof err), 0);
  expect_ok(j, t2);
  expect_bad(j, t1, "unknown key");
  /* A bad one, or none, keeps it. */
  write_file(path, "{\"keys\":[{\"kty\":\"oct\",\"k\":\"AAAA\"}]}");
  ck_assert_int_eq(mcp__jwt_reload_file(j, err, sizeof err), MCP_EINVAL);
  ck_assert_ptr_nonnull(strstr(err, path));
  expect_ok(j, t2);
  unlink(path);
  ck_assert_int_eq(mcp__jwt_reload_file(j, err, sizeof err), MCP_EIO);
  expect_ok(j, t2);
  /* A file over 1 MiB. */
  char *big = keep(malloc(MCP__JWKS_MAX_DOC + 2));
  memset(big, ' ', MCP__JWKS_MAX_DOC + 1);
  big[MCP__JWKS_MAX_DOC + 1] = '\0';
  memcpy(big, main_jwks(), strlen(main_jwks()));
  write_file(path, big);
  ck_assert_int_eq(mcp__jwt_reload_file(j, err, sizeof err), MCP_EINVAL);
  big[MCP__JWKS_MAX_DOC] = '\0';
  write_file(path, big);
  ck_assert_int_eq(mcp__jwt_reload_file(j, err, sizeof err), 0);
  expect_ok(j, es(p));
  unlink(path);
  /* Without a file configured. */
  ck_assert_int_eq(mcp__jwt_reload_file(std_verifier(), err, sizeof err),
                   MCP_ESTATE);
  /* mcp__jwt_set_jwks: the same rules. */
  const char *doc = jwks(jwk(ed, "three", NULL), NULL);
  ck_assert_int_eq(mcp__jwt_set_jwks(j, doc, strlen(doc), err, sizeof err), 0);
  expect_ok(j, token_k(hdr("EdDSA", "three"), p, "EdDSA", ed));
  expect_bad(j, t1, "unknown key");
}
END_TEST

/* ---------------------------------------------------------------------------
 * Threads: verifications while the key set is replaced
 * ------------------------------------------------------------------------ */

typedef struct churn_arg {
  mcp__jwt *j;
  const char *token;
  int loops, failures;
} churn_arg;

static void *churn_verify(void *arg) {
  churn_arg *a = arg;
  for (int i = 0; i < a->loops; i++) {
    mcp_token_info ti;
    if (mcp__jwt_verify(a->j, a->token, &ti, NULL, 0) != 0 ||
        strcmp(ti.subject, "alice") != 0)
      a->failures++;
  }
  return NULL;
}

START_TEST(threads) {
  mcp__jwt *j = std_verifier();
  const char *doc = main_jwks();
  churn_arg args[4];
  pthread_t th[4];
  const char *tokens[4] = {
      es(claims(NULL)),
      token_k(hdr("RS256", "rsa"), claims(NULL), "RS256", rsa),
      token_k(hdr("EdDSA", "ed"), claims(NULL), "EdDSA", ed),
      token_k(hdr("PS256", NULL), claims(NULL), "PS256", rsa)};
  int loops =
      getenv("CK_FORK") && strcmp(getenv("CK_FORK"), "no") == 0 ? 20 : 200;
  for (int i = 0; i < 4; i++) {
    args[i] = (churn_arg){j, tokens[i], loops, 0};
    ck_assert_int_eq(pthread_create(&th[i], NULL, churn_verify, &args[i]), 0);
  }
  char err[256];
  for (int i = 0; i < loops / 2; i++)
    ck_assert_int_eq(mcp__jwt_set_jwks(j, doc, strlen(doc), err, sizeof err),
                     0);
  for (int i = 0; i < 4; i++) {
    pthread_join(th[i], NULL);
    ck_assert_int_eq(args[i].failures, 0);
  }
}
END_TEST

/* ---------------------------------------------------------------------------
 * Allocation failure
 * ------------------------------------------------------------------------ */

/* Fails each allocation of one verification in turn: the token is then
 * refused (or, when OpenSSL recovered, accepted only if it is valid), and
 * no block is left behind. */
static void fail_each(mcp__jwt *j, const char *tok, bool valid) {
  mcp_token_info ti;
  char w[128];
  /* Warm up OpenSSL's caches (fetched algorithms, error state) so what is
   * live afterwards can be compared. */
  mcp__jwt_verify(j, tok, &ti, w, sizeof w);
  mcp__jwt_verify(j, "x.y.z", &ti, w, sizeof w);
  for (long n = 1;; n++) {
    long before = tc_ossl_live();
    arm(n);
    int rc = mcp__jwt_verify(j, tok, &ti, w, sizeof w);
    long failed = disarm();
    ck_assert_msg(tc_ossl_live() == before, "allocation %ld: %ld blocks leaked",
                  n, tc_ossl_live() - before);
    if (!valid)
      ck_assert_int_ne(rc, 0);
    if (failed == 0) {
      ck_assert_int_eq(rc, valid ? 0 : MCP_EINVAL);
      ck_assert_int_gt(n, 1); /* at least one allocation was failed */
      break;
    }
    if (rc == 0)
      ck_assert_str_eq(ti.subject, "alice");
    else
      ck_assert_str_eq(ti.subject, "");
    ck_assert_int_lt(n, 10000);
  }
  ck_assert_int_eq(mcp__jwt_verify(j, tok, &ti, w, sizeof w),
                   valid ? 0 : MCP_EINVAL);
}

START_TEST(alloc_failure) {
  ck_assert_msg(hooks_installed, "CRYPTO_set_mem_functions failed");
  mcp_auth_options o = base_opts();
  o.hs256_secret = SECRET;
  o.hs256_secret_len = strlen(SECRET);
  mcp__jwt *j = verifier(&o);
  const char *p = claims(NULL);
  const struct {
    const char *alg, *kid;
    EVP_PKEY **key;
  } cases[] = {{"RS256", "rsa", &rsa},
               {"PS384", "rsa", &rsa},
               {"ES256", "ec256", &ec256},
               {"ES512", "ec521", &ec521},
               {"EdDSA", "ed", &ed}};
  for (size_t i = 0; i < TU_COUNT(cases); i++) {
    char *t = token_k(hdr(cases[i].alg, cases[i].kid), p, cases[i].alg,
                      *cases[i].key);
    fail_each(j, t, true);
    /* The same token with a flipped signature bit is never accepted. */
    char *sig = strrchr(t, '.') + 1;
    sig[3] = sig[3] == 'A' ? 'B' : 'A';
    fail_each(j, t, false);
  }
  fail_each(j, token_hs(hdr("HS256", NULL), p, SECRET, strlen(SECRET)), true);
  fail_each(j, token_hs(hdr("HS256", NULL), p, "wrong", 5), false);

  /* Loading a key set: each failure leaves the last good set, and
   * nothing behind. */
  const char *doc = jwks(jwk(rsa, "r2", NULL), jwk(ec384, "e2", NULL),
                         jwk(ed, "d2", NULL), NULL);
  const char *t_old = token_k(hdr("RS256", "rsa"), p, "RS256", rsa);
  const char *m = main_jwks();
  char err[256];
  for (long n = 1;; n++) {
    long before = tc_ossl_live();
    arm(n);
    int rc = mcp__jwt_set_jwks(j, doc, strlen(doc), err, sizeof err);
    long failed = disarm();
    if (failed == 0) {
      ck_assert_int_eq(rc, 0);
      break;
    }
    if (rc != 0) {
      ck_assert_msg(tc_ossl_live() == before,
                    "allocation %ld: %ld blocks leaked", n,
                    tc_ossl_live() - before);
      expect_ok(j, t_old);
    } else {
      /* Installed after all (a key skipped, or OpenSSL recovered):
       * restore the old set. */
      ck_assert_int_eq(mcp__jwt_set_jwks(j, m, strlen(m), err, sizeof err), 0);
    }
    ck_assert_int_lt(n, 100000);
  }
  expect_ok(j, token_k(hdr("ES384", "e2"), p, "ES384", ec384));

  /* A verification that fetches the key set: a fresh verifier each time,
   * so the refresh window never stops the fetch. */
  fetcher f = {0};
  f.doc = doc;
  mcp_auth_options fo = base_opts();
  fo.jwks = NULL;
  fo.jwks_fetch = fetch_cb;
  fo.jwks_fetch_data = &f;
  const char *t_fetched = token_k(hdr("EdDSA", "d2"), p, "EdDSA", ed);
  for (long n = 1;; n++) {
    long before = tc_ossl_live();
    mcp__jwt *k = NULL;
    ck_assert_int_eq(mcp__jwt_new(&fo, &k, err, sizeof err), 0);
    mcp_token_info ti;
    arm(n);
    int rc = mcp__jwt_verify(k, t_fetched, &ti, err, sizeof err);
    long failed = disarm();
    mcp__jwt_free(k);
    ck_assert_msg(tc_ossl_live() == before, "allocation %ld: %ld blocks leaked",
                  n, tc_ossl_live() - before);
    if (failed == 0) {
      ck_assert_int_eq(rc, 0);
      break;
    }
    ck_assert_int_lt(n, 100000);
  }
  ck_assert_int_gt(atomic_load(&f.calls), 1);

  /* A verifier's creation. */
  for (long n = 1;; n++) {
    long before = tc_ossl_live();
    mcp__jwt *k = NULL;
    arm(n);
    int rc = mcp__jwt_new(&o, &k, err, sizeof err);
    long failed = disarm();
    if (rc == 0)
      mcp__jwt_free(k);
    else
      ck_assert_ptr_null(k);
    ck_assert_msg(tc_ossl_live() == before, "allocation %ld: %ld blocks leaked",
                  n, tc_ossl_live() - before);
    if (failed == 0) {
      ck_assert_int_eq(rc, 0);
      break;
    }
    ck_assert_int_lt(n, 100000);
  }
}
END_TEST

/* ---------------------------------------------------------------------------
 * The strict JSON reader and base64url on their own
 * ------------------------------------------------------------------------ */

/* The verifier's base64url: the library's one codec, unpadded. */
static bool jwt_b64(const char *in, size_t n, unsigned char *out, size_t cap,
                    size_t *len) {
  return mcp__base64_decode(in, n, out, cap, len, MCP__BASE64_URL);
}

START_TEST(b64url_strict) {
  unsigned char out[16];
  size_t n = 0;
  ck_assert(jwt_b64("", 0, out, sizeof out, &n) && n == 0);
  ck_assert(jwt_b64("AQ", 2, out, sizeof out, &n) && n == 1 && out[0] == 1);
  ck_assert(!jwt_b64("AR", 2, out, sizeof out, &n));
  ck_assert(!jwt_b64("A", 1, out, sizeof out, &n));
  ck_assert(!jwt_b64("AQ==", 4, out, sizeof out, &n));
  ck_assert(jwt_b64("-_-_", 4, out, sizeof out, &n) && n == 3);
  ck_assert(!jwt_b64("+/+/", 4, out, sizeof out, &n));
  ck_assert(!jwt_b64("AAAA", 4, out, 2, &n));
  ck_assert(jwt_b64("AAE", 3, out, 2, &n) && n == 2);
  ck_assert(!jwt_b64("AAF", 3, out, 2, &n));
}
END_TEST

/* A tcase with the suite's fixture and timeout. */
static TCase *tc(Suite *s, const char *name) {
  TCase *t = tcase_create(name);
  tcase_set_timeout(t, 240);
  tcase_add_checked_fixture(t, NULL, teardown);
  suite_add_tcase(s, t);
  return t;
}

int main(void) {
  /* Before OpenSSL allocates anything, or it refuses. */
  hooks_installed = tc_ossl_count_install(should_fail);
  rsa = EVP_PKEY_Q_keygen(NULL, NULL, "RSA", (size_t)2048);
  rsa_small = EVP_PKEY_Q_keygen(NULL, NULL, "RSA", (size_t)1024);
  ec256 = EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256");
  ec384 = EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-384");
  ec521 = EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-521");
  ed = EVP_PKEY_Q_keygen(NULL, NULL, "ED25519");
  evil = EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256");
  if (!rsa || !rsa_small || !ec256 || !ec384 || !ec521 || !ed || !evil) {
    fprintf(stderr, "key generation failed\n");
    return EXIT_FAILURE;
  }
  Suite *s = suite_create("jwt");
  TCase *t = tc(s, "algorithms");
  tcase_add_test(t, every_algorithm);
  tcase_add_test(t, e4_alg_none);
  tcase_add_test(t, e5_hs256_confusion);
  tcase_add_test(t, e6_alg_pinned_by_key);
  tcase_add_test(t, e17_ecdsa_signatures);
  tcase_add_test(t, e18_rsa_short_signature);
  tcase_add_test(t, e30_hmac_compare);
  t = tc(s, "claims");
  tcase_add_test(t, e7_e8_e9_dates);
  tcase_add_test(t, e10_audience);
  tcase_add_test(t, e11_issuer);
  tcase_add_test(t, e20_exp_out_of_range);
  tcase_add_test(t, e21_typ);
  tcase_add_test(t, scope_claims);
  t = tc(s, "structure");
  tcase_add_test(t, e15_duplicates_and_strict_json);
  tcase_add_test(t, e19_shape);
  tcase_add_test(t, b64url_strict);
  t = tc(s, "keys");
  tcase_add_test(t, e13_kid_injection);
  tcase_add_test(t, e27_unusable_keys);
  tcase_add_test(t, e27_documents);
  tcase_add_test(t, config_errors);
  tcase_add_test(t, reload);
  t = tc(s, "refresh");
  tcase_add_test(t, e12_unknown_kid);
  tcase_add_test(t, e12_rotation_and_window);
  tcase_add_test(t, e12_single_flight);
  tcase_add_test(t, e14_header_keys_ignored);
  tcase_add_test(t, threads);
  t = tc(s, "alloc");
  tcase_add_test(t, alloc_failure);
  int rc = tu_run(s);
  EVP_PKEY *keys[] = {rsa, rsa_small, ec256, ec384, ec521, ed, evil};
  for (size_t i = 0; i < TU_COUNT(keys); i++)
    EVP_PKEY_free(keys[i]);
  return rc;
}
