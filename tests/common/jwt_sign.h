/* Signed JWTs and public JWKs for the suites that test token
 * verification (tests/http test_http_auth and test_jwt, tests/torture,
 * tests/bench bench_jwt, the HS256 fuzz targets): one signer on OpenSSL's
 * EVP API, so every suite's tokens are made the same way and no test
 * depends on a key or a token fixed in the tree. Keys are the suite's
 * (EVP_PKEY_Q_keygen). Test code: each function aborts, saying why on
 * standard error, when OpenSSL or memory fails it. Strings returned are
 * new (free with free). */
#ifndef MCP_TEST_JWT_SIGN_H
#define MCP_TEST_JWT_SIGN_H

#include <stddef.h>

/* OpenSSL's key type, declared as <openssl/types.h> does, so that a file
 * including this header gets none of OpenSSL's headers (and their
 * macros). */
typedef struct evp_pkey_st EVP_PKEY;

/* Room for the longest signature tc_jwt_sign makes (RSA up to 8192 bits). */
#define TC_JWT_SIG_MAX 1024

/* What tc_jwk changes in the JWK of a key, for tests of unusable keys. */
#define TC_JWK_OFF_CURVE 1u /* an EC point moved off its curve */
#define TC_JWK_PRIVATE 2u   /* the private part ("d") added */

/* The public JWK of k (RSA, EC P-256/384/521 or Ed25519) as JSON text:
 * {"kid":kid (left out when kid is NULL), "kty", the key's members, then
 * the members of extra (JSON text without braces, such as
 * "\"use\":\"sig\",\"alg\":\"RS256\"", or NULL)}; flags are TC_JWK_*. */
char *tc_jwk(const EVP_PKEY *k, const char *kid, const char *extra,
             unsigned flags);

/* Signs the len bytes of msg with k as the JWS algorithm alg does it
 * (RS256/384/512: PKCS#1 v1.5; PS256/384/512: PSS, salt of the digest's
 * length; ES256/384/512: r || s of the curve's size; EdDSA), into sig,
 * which TC_JWT_SIG_MAX bytes always hold. Returns the signature's
 * length. */
size_t tc_jwt_sign(const char *alg, EVP_PKEY *k, const void *msg, size_t len,
                   unsigned char *sig);

/* A compact JWT: base64url(header) "." base64url(payload) "." the
 * signature of those two parts by k as alg says (the header's "alg" may
 * say otherwise, to lie). */
char *tc_jwt(const char *header, const char *payload, const char *alg,
             EVP_PKEY *k);

/* A compact JWT MACed with HMAC-SHA-256 under the keylen bytes of key
 * (none at all is allowed); header and payload are hlen and plen bytes. */
char *tc_jwt_hs256(const char *header, size_t hlen, const char *payload,
                   size_t plen, const void *key, size_t keylen);

/* base64url(header) "." base64url(payload) "." base64url of the n bytes of
 * sig, whatever they are. */
char *tc_jwt_with_sig(const char *header, const char *payload,
                      const unsigned char *sig, size_t n);

#endif
