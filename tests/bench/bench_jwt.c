/* What verifying a bearer token costs: one RS256 token (RSA 2048) and one
 * ES256 token (P-256), each verified by the built-in JWT verifier
 * (lib/jwt.h) in the same run, keys generated at start.
 *
 *   bench_jwt [iterations]     default 2000
 *
 * Prints microseconds per verification: base64url, the strict JSON of
 * header and payload, the signature through OpenSSL's EVP API and every
 * claim check, as a request pays it. Exits non-zero if a verification
 * fails. */
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/ec.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "jwt.h"

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void b64url(const unsigned char *p, size_t n, char *out) {
  static const char a[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
  size_t o = 0, i = 0;
  for (; i + 3 <= n; i += 3) {
    unsigned long v = (unsigned long)p[i] << 16 | p[i + 1] << 8 | p[i + 2];
    out[o++] = a[v >> 18];
    out[o++] = a[(v >> 12) & 63];
    out[o++] = a[(v >> 6) & 63];
    out[o++] = a[v & 63];
  }
  if (n - i >= 1) {
    unsigned long v = (unsigned long)p[i] << 16;
    if (n - i == 2)
      v |= (unsigned long)p[i + 1] << 8;
    out[o++] = a[v >> 18];
    out[o++] = a[(v >> 12) & 63];
    if (n - i == 2)
      out[o++] = a[(v >> 6) & 63];
  }
  out[o] = '\0';
}

static void b64s(const char *s, char *out) {
  b64url((const unsigned char *)s, strlen(s), out);
}

/* A JWKS with the RSA key as "rsa" and the EC key as "ec". */
static void make_jwks(EVP_PKEY *rsa, EVP_PKEY *ec, char *out, size_t cap) {
  BIGNUM *n = NULL, *e = NULL;
  unsigned char buf[512], pub[65];
  char nb[400], eb[16], xb[64], yb[64];
  size_t publen = 0;
  if (EVP_PKEY_get_bn_param(rsa, OSSL_PKEY_PARAM_RSA_N, &n) != 1 ||
      EVP_PKEY_get_bn_param(rsa, OSSL_PKEY_PARAM_RSA_E, &e) != 1 ||
      EVP_PKEY_get_octet_string_param(ec, OSSL_PKEY_PARAM_PUB_KEY, pub,
                                      sizeof pub, &publen) != 1 ||
      publen != 65) {
    fprintf(stderr, "cannot export the keys\n");
    exit(EXIT_FAILURE);
  }
  b64url(buf, (size_t)BN_bn2bin(n, buf), nb);
  b64url(buf, (size_t)BN_bn2bin(e, buf), eb);
  b64url(pub + 1, 32, xb);
  b64url(pub + 33, 32, yb);
  BN_free(n);
  BN_free(e);
  snprintf(out, cap,
           "{\"keys\":[{\"kty\":\"RSA\",\"kid\":\"rsa\",\"alg\":\"RS256\","
           "\"n\":\"%s\",\"e\":\"%s\"},{\"kty\":\"EC\",\"kid\":\"ec\","
           "\"crv\":\"P-256\",\"x\":\"%s\",\"y\":\"%s\"}]}",
           nb, eb, xb, yb);
}

/* A token of typical size, signed as alg with k. */
static void make_token(const char *alg, const char *kid, EVP_PKEY *k, char *out,
                       size_t cap) {
  char header[128], payload[512], h64[200], p64[700];
  snprintf(header, sizeof header,
           "{\"alg\":\"%s\",\"kid\":\"%s\",\"typ\":\"at+jwt\"}", alg, kid);
  long long t = (long long)time(NULL);
  snprintf(payload, sizeof payload,
           "{\"iss\":\"https://auth.example.com\",\"sub\":\"user-123456\","
           "\"aud\":[\"https://mcp.example.com/mcp\"],\"client_id\":"
           "\"client-abc\",\"iat\":%lld,\"nbf\":%lld,\"exp\":%lld,\"jti\":"
           "\"4f1c2d3e-5a6b-7c8d-9e0f-a1b2c3d4e5f6\",\"scope\":\"files:read "
           "files:write tools:call\"}",
           t, t, t + 3600);
  b64s(header, h64);
  b64s(payload, p64);
  snprintf(out, cap, "%s.%s", h64, p64);
  unsigned char der[512], sig[512];
  size_t len = sizeof der, slen;
  EVP_MD_CTX *c = EVP_MD_CTX_new();
  if (c == NULL ||
      EVP_DigestSignInit_ex(c, NULL, "SHA256", NULL, NULL, k, NULL) != 1 ||
      EVP_DigestSign(c, der, &len, (const unsigned char *)out, strlen(out)) !=
          1) {
    fprintf(stderr, "cannot sign\n");
    exit(EXIT_FAILURE);
  }
  EVP_MD_CTX_free(c);
  if (strcmp(alg, "ES256") == 0) {
    const unsigned char *p = der;
    ECDSA_SIG *es = d2i_ECDSA_SIG(NULL, &p, (long)len);
    BN_bn2binpad(ECDSA_SIG_get0_r(es), sig, 32);
    BN_bn2binpad(ECDSA_SIG_get0_s(es), sig + 32, 32);
    ECDSA_SIG_free(es);
    slen = 64;
  } else {
    memcpy(sig, der, len);
    slen = len;
  }
  size_t used = strlen(out);
  out[used++] = '.';
  b64url(sig, slen, out + used);
}

static double per_verify_us(mcp__jwt *j, const char *token, long iterations) {
  mcp_token_info info;
  char why[128];
  double t0 = now();
  for (long i = 0; i < iterations; i++) {
    if (mcp__jwt_verify(j, token, &info, why, sizeof why) != 0) {
      fprintf(stderr, "verification failed: %s\n", why);
      exit(EXIT_FAILURE);
    }
  }
  return (now() - t0) / (double)iterations * 1e6;
}

int main(int argc, char **argv) {
  long iterations = argc > 1 ? atol(argv[1]) : 2000;
  if (iterations < 1)
    iterations = 1;
  EVP_PKEY *rsa = EVP_PKEY_Q_keygen(NULL, NULL, "RSA", (size_t)2048);
  EVP_PKEY *ec = EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256");
  if (rsa == NULL || ec == NULL) {
    fprintf(stderr, "key generation failed\n");
    return EXIT_FAILURE;
  }
  static char jwks[4096], rs[2048], es[2048];
  make_jwks(rsa, ec, jwks, sizeof jwks);
  make_token("RS256", "rsa", rsa, rs, sizeof rs);
  make_token("ES256", "ec", ec, es, sizeof es);

  mcp_auth_options o = {0};
  o.resource = "https://mcp.example.com/mcp";
  o.issuer = "https://auth.example.com";
  o.jwks = jwks;
  o.require_at_jwt = true;
  mcp__jwt *j = NULL;
  char err[256];
  if (mcp__jwt_new(&o, &j, err, sizeof err) != 0) {
    fprintf(stderr, "mcp__jwt_new: %s\n", err);
    return EXIT_FAILURE;
  }
  /* Warm OpenSSL's algorithm caches once each. */
  per_verify_us(j, rs, 1);
  per_verify_us(j, es, 1);
  double rs_us = per_verify_us(j, rs, iterations);
  double es_us = per_verify_us(j, es, iterations);
  printf("JWT verification, %ld iterations each (token %zu and %zu "
         "bytes):\n",
         iterations, strlen(rs), strlen(es));
  printf("  RS256 (RSA 2048): %8.1f us per token\n", rs_us);
  printf("  ES256 (P-256):    %8.1f us per token\n", es_us);
  mcp__jwt_free(j);
  EVP_PKEY_free(rsa);
  EVP_PKEY_free(ec);
  return EXIT_SUCCESS;
}
