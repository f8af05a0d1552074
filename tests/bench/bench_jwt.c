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
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "jwt.h"
#include "jwt_sign.h"

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* A JWKS with the RSA key as "rsa" and the EC key as "ec" (free it). */
static char *make_jwks(EVP_PKEY *rsa, EVP_PKEY *ec) {
  char *r = tc_jwk(rsa, "rsa", "\"alg\":\"RS256\"", 0);
  char *e = tc_jwk(ec, "ec", NULL, 0);
  size_t n = strlen(r) + strlen(e) + 16;
  char *jwks = malloc(n);
  if (jwks == NULL) {
    fprintf(stderr, "out of memory\n");
    exit(EXIT_FAILURE);
  }
  snprintf(jwks, n, "{\"keys\":[%s,%s]}", r, e);
  free(r);
  free(e);
  return jwks;
}

/* A token of typical size, signed as alg with k (free it). */
static char *make_token(const char *alg, const char *kid, EVP_PKEY *k) {
  char header[128], payload[512];
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
  return tc_jwt(header, payload, alg, k);
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
  char *jwks = make_jwks(rsa, ec);
  char *rs = make_token("RS256", "rsa", rsa);
  char *es = make_token("ES256", "ec", ec);

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
  free(jwks);
  free(rs);
  free(es);
  EVP_PKEY_free(rsa);
  EVP_PKEY_free(ec);
  return EXIT_SUCCESS;
}
