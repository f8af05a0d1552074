/* Declarations shared by the files of the JWT verifier (jwt.c, jwks.c,
 * jwt_read.c); the verifier's own API is in jwt.h. */
#ifndef MCP_JWT_INT_H
#define MCP_JWT_INT_H

#include <openssl/types.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "base.h"
#include "json.h"
#include "jwt.h"

/* ---- reading the JSON of tokens and key sets (jwt_read.c) ----------------
 * Headers, payloads and JWKS documents are parsed by the library's one
 * strict JSON layer (lib/json: RFC 8259, valid UTF-8, no duplicate
 * member), into a pooled document freed when the token or set is done. */

/* The limits they are parsed with: nesting at most 16, at most 256 members
 * or elements, numbers of at most 63 characters; pooled. */
extern const mcp__json_limits mcp__jwt_json_limits;

/* Parses n bytes into doc as one JSON object. Returns 0; MCP_EINVAL when
 * it is not strict JSON or not an object (doc is then empty); MCP_ENOMEM. */
int mcp__jwt_parse(const char *s, size_t n, mcp__json_doc *doc);

/* Copies a string value into out (cap bytes, NUL-terminated; a parsed
 * string never holds NUL). Returns false when v is no string or its text
 * does not fit. *len (may be NULL) receives the length. */
bool mcp__jwt_string(const cJSON *v, char *out, size_t cap, size_t *len);

/* True when v is a string whose text is the n bytes at s. */
bool mcp__jwt_string_is(const cJSON *v, const char *s, size_t n);

/* Reads a NumericDate: a non-negative JSON number, truncated to whole
 * seconds, computed exactly from its digits as written (no floating point,
 * no locale). Returns 0 and sets *out; -1 when v is no number; -2 when it
 * is negative or above 2^53. */
int mcp__jwt_seconds(const cJSON *v, long long *out);

/* ---- key sets (jwks.c) ---------------------------------------------------
 */

/* Key types, as a bit each so an algorithm can name the ones it fits. */
#define MCP__JWK_RSA 1u
#define MCP__JWK_P256 2u
#define MCP__JWK_P384 4u
#define MCP__JWK_P521 8u
#define MCP__JWK_ED25519 16u

typedef struct mcp__jwk {
  EVP_PKEY *pkey;
  unsigned kind;  /* one MCP__JWK_* */
  size_t sig_len; /* exact signature length: the RSA modulus, 2 x the EC
                     coordinate, 64 for Ed25519 */
  char alg[16];   /* the JWK's "alg"; "" when absent */
  bool has_kid;   /* a JWK without "kid" only serves kid-less tokens */
  size_t kid_len;
  char kid[MCP__JWT_MAX_KID + 1];
} mcp__jwk;

/* A key set; shared by reference between the verifier and the
 * verifications using it (the count is protected by the verifier's lock). */
typedef struct mcp__jwks {
  unsigned refs;
  size_t n;
  mcp__jwk keys[];
} mcp__jwks;

/* Builds a key set (with one reference) from a JWKS document: {"keys":
 * [...]}, at most MCP__JWKS_MAX_DOC bytes and MCP__JWKS_MAX_KEYS keys.
 * Unusable JWKs are skipped: RSA under 2048 bits, "oct", private parts,
 * an EC point off its curve, "use" other than "sig", "key_ops" without
 * "verify", an "alg" the key type cannot do or that is not supported,
 * a "kid" over MCP__JWT_MAX_KID bytes. Returns 0 (err: "" or the skipped
 * keys), MCP_EINVAL (err says why) or MCP_ENOMEM. */
int mcp__jwks_parse(const char *json, size_t len, mcp__jwks **out, char *err,
                    size_t errlen);

void mcp__jwks_free(mcp__jwks *set);

/* The key types an "alg" of a JWK or a token fits (0 when the name is not
 * a supported asymmetric algorithm). */
unsigned mcp__jwt_alg_kinds(const char *alg, size_t len);

/* Writes a formatted reason into err (errlen bytes; nothing when err is
 * NULL or errlen 0). Shared by jwt.c and jwks.c. */
void mcp__jwt_say(char *err, size_t errlen, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

#endif
