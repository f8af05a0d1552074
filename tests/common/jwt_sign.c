#include "jwt_sign.h"

#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/rsa.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "b64url.h"

/* Ends the test run: the signer cannot do what it was asked. */
static void fail(const char *what) {
  fprintf(stderr, "jwt_sign: %s failed\n", what);
  abort();
}

/* printf into a new string. */
static char *text(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;

static char *text(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  char *s = n < 0 ? NULL : malloc((size_t)n + 1);
  if (s == NULL)
    fail("formatting");
  va_start(ap, fmt);
  vsnprintf(s, (size_t)n + 1, fmt, ap);
  va_end(ap);
  return s;
}

/* A big-number parameter of k, unpadded, base64url-encoded. */
static char *bn_param(const EVP_PKEY *k, const char *name) {
  BIGNUM *bn = NULL;
  unsigned char buf[1024];
  if (EVP_PKEY_get_bn_param(k, name, &bn) != 1 ||
      BN_num_bytes(bn) > (int)sizeof buf)
    fail("reading a key parameter");
  int n = BN_bn2bin(bn, buf);
  BN_clear_free(bn);
  return tc_b64url(buf, (size_t)n);
}

/* The coordinate size of an EC key, and its JWK curve name. */
static size_t ec_size(const EVP_PKEY *k, const char **crv) {
  int bits = EVP_PKEY_get_bits(k);
  *crv = bits == 256 ? "P-256" : bits == 384 ? "P-384" : "P-521";
  return bits == 256 ? 32 : bits == 384 ? 48 : 66;
}

/* The members of an EC key's JWK after "kty" (crv, x, y, maybe d). */
static char *ec_members(const EVP_PKEY *k, unsigned flags) {
  const char *crv;
  size_t len = ec_size(k, &crv);
  unsigned char pub[1 + 2 * 66];
  size_t publen = 0;
  if (EVP_PKEY_get_octet_string_param(k, OSSL_PKEY_PARAM_PUB_KEY, pub,
                                      sizeof pub, &publen) != 1 ||
      publen != 1 + 2 * len)
    fail("reading an EC point");
  if (flags & TC_JWK_OFF_CURVE)
    pub[publen - 1] ^= 1;
  char *x = tc_b64url(pub + 1, len), *y = tc_b64url(pub + 1 + len, len);
  char *d = NULL;
  if (flags & TC_JWK_PRIVATE) {
    BIGNUM *bn = NULL;
    unsigned char priv[66];
    if (EVP_PKEY_get_bn_param(k, OSSL_PKEY_PARAM_PRIV_KEY, &bn) != 1 ||
        BN_bn2binpad(bn, priv, (int)len) != (int)len)
      fail("reading an EC private key");
    BN_clear_free(bn);
    d = tc_b64url(priv, len);
  }
  char *m = text("\"crv\":\"%s\",\"x\":\"%s\",\"y\":\"%s\"%s%s%s", crv, x, y,
                 d ? ",\"d\":\"" : "", d ? d : "", d ? "\"" : "");
  free(x);
  free(y);
  free(d);
  return m;
}

char *tc_jwk(const EVP_PKEY *k, const char *kid, const char *extra,
             unsigned flags) {
  char *kidm = kid ? text("\"kid\":\"%s\",", kid) : text("%s", "");
  const char *kty;
  char *members;
  if (EVP_PKEY_is_a(k, "RSA")) {
    kty = "RSA";
    char *n = bn_param(k, OSSL_PKEY_PARAM_RSA_N);
    char *e = bn_param(k, OSSL_PKEY_PARAM_RSA_E);
    char *d =
        flags & TC_JWK_PRIVATE ? bn_param(k, OSSL_PKEY_PARAM_RSA_D) : NULL;
    members = text("\"n\":\"%s\",\"e\":\"%s\"%s%s%s", n, e,
                   d ? ",\"d\":\"" : "", d ? d : "", d ? "\"" : "");
    free(n);
    free(e);
    free(d);
  } else if (EVP_PKEY_is_a(k, "EC")) {
    kty = "EC";
    members = ec_members(k, flags);
  } else {
    kty = "OKP";
    unsigned char x[32];
    size_t xlen = sizeof x;
    if (EVP_PKEY_get_raw_public_key(k, x, &xlen) != 1)
      fail("reading an Ed25519 key");
    char *xs = tc_b64url(x, xlen);
    members = text("\"crv\":\"Ed25519\",\"x\":\"%s\"", xs);
    free(xs);
  }
  char *jwk = text("{%s\"kty\":\"%s\",%s%s%s}", kidm, kty, members,
                   extra ? "," : "", extra ? extra : "");
  free(kidm);
  free(members);
  return jwk;
}

/* The digest of alg (NULL for EdDSA, which takes none). */
static const char *digest_of(const char *alg) {
  if (strstr(alg, "256"))
    return "SHA256";
  if (strstr(alg, "384"))
    return "SHA384";
  if (strstr(alg, "512"))
    return "SHA512";
  return NULL;
}

size_t tc_jwt_sign(const char *alg, EVP_PKEY *k, const void *msg, size_t len,
                   unsigned char *sig) {
  EVP_MD_CTX *c = EVP_MD_CTX_new();
  EVP_PKEY_CTX *pc = NULL;
  if (c == NULL ||
      EVP_DigestSignInit_ex(c, &pc, digest_of(alg), NULL, NULL, k, NULL) != 1)
    fail("EVP_DigestSignInit_ex");
  if (alg[0] == 'P' &&
      (EVP_PKEY_CTX_set_rsa_padding(pc, RSA_PKCS1_PSS_PADDING) != 1 ||
       EVP_PKEY_CTX_set_rsa_pss_saltlen(pc, RSA_PSS_SALTLEN_DIGEST) != 1))
    fail("setting PSS padding");
  unsigned char der[TC_JWT_SIG_MAX];
  size_t n = sizeof der;
  if (EVP_DigestSign(c, der, &n, msg, len) != 1)
    fail("EVP_DigestSign");
  EVP_MD_CTX_free(c);
  if (alg[0] != 'E' || alg[1] != 'S') {
    memcpy(sig, der, n);
    return n;
  }
  /* ECDSA: OpenSSL's DER SEQUENCE { r, s } becomes JWS's r || s. */
  const char *crv;
  size_t half = ec_size(k, &crv);
  const unsigned char *p = der;
  ECDSA_SIG *es = d2i_ECDSA_SIG(NULL, &p, (long)n);
  if (es == NULL ||
      BN_bn2binpad(ECDSA_SIG_get0_r(es), sig, (int)half) != (int)half ||
      BN_bn2binpad(ECDSA_SIG_get0_s(es), sig + half, (int)half) != (int)half)
    fail("reading an ECDSA signature");
  ECDSA_SIG_free(es);
  return 2 * half;
}

/* base64url(header) "." base64url(payload): the signing input. */
static char *signing_input(const char *header, size_t hlen, const char *payload,
                           size_t plen) {
  char *h = tc_b64url(header, hlen), *p = tc_b64url(payload, plen);
  char *in = text("%s.%s", h, p);
  free(h);
  free(p);
  return in;
}

/* input "." base64url(sig); frees input. */
static char *with_signature(char *input, const unsigned char *sig, size_t n) {
  char *s = tc_b64url(sig, n);
  char *token = text("%s.%s", input, s);
  free(s);
  free(input);
  return token;
}

char *tc_jwt(const char *header, const char *payload, const char *alg,
             EVP_PKEY *k) {
  char *input = signing_input(header, strlen(header), payload, strlen(payload));
  unsigned char sig[TC_JWT_SIG_MAX];
  size_t n = tc_jwt_sign(alg, k, input, strlen(input), sig);
  return with_signature(input, sig, n);
}

char *tc_jwt_hs256(const char *header, size_t hlen, const char *payload,
                   size_t plen, const void *key, size_t keylen) {
  char *input = signing_input(header, hlen, payload, plen);
  unsigned char mac[32];
  size_t n = 0;
  /* EVP_Q_mac wants a key pointer even when the key is empty. */
  static const unsigned char none[1];
  if (EVP_Q_mac(NULL, "HMAC", NULL, "SHA256", NULL, keylen ? key : none, keylen,
                (const unsigned char *)input, strlen(input), mac, sizeof mac,
                &n) == NULL)
    fail("EVP_Q_mac");
  return with_signature(input, mac, n);
}

char *tc_jwt_with_sig(const char *header, const char *payload,
                      const unsigned char *sig, size_t n) {
  return with_signature(
      signing_input(header, strlen(header), payload, strlen(payload)), sig, n);
}
