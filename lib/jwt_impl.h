/* Declarations shared by the files of the JWT verifier (jwt.c, jwks.c,
 * jwt_json.c); the verifier's own API is in jwt.h.
 *
 * JSON here is read in place: a document is first checked against the
 * library's strict rules (RFC 8259, valid UTF-8, no "\u0000", no unpaired
 * surrogate, no duplicate member name, nesting at most 16), then values are
 * found as spans of its text. Nothing is allocated, so verifying a token
 * needs no allocation of ours. */
#ifndef MCP_JWT_IMPL_H
#define MCP_JWT_IMPL_H

#include <openssl/types.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base.h"
#include "jwt.h"

/* ---- strict JSON over a byte span (jwt_json.c) --------------------------- */

#define MCP__JSON_MAX_DEPTH 16
#define MCP__JSON_MAX_MEMBERS 256 /* members of one object */
#define MCP__JSON_MAX_NUMBER 63   /* characters of one number */

/* Entries of the scratch array mcp__jwt_json_check needs for a document of
 * n bytes: a member takes at least 4 bytes ("":0 and a separator), and at
 * most MAX_DEPTH objects of MAX_MEMBERS are open at once. */
#define MCP__JSON_SCRATCH(n)                                                   \
  ((n) / 4 + 1 < (size_t)MCP__JSON_MAX_DEPTH * MCP__JSON_MAX_MEMBERS           \
       ? (n) / 4 + 1                                                           \
       : (size_t)MCP__JSON_MAX_DEPTH * MCP__JSON_MAX_MEMBERS)

/* A JSON value: the span of its text inside a checked document. */
typedef struct mcp__jspan {
  const char *p;
  size_t n;
} mcp__jspan;

typedef enum mcp__jtype {
  MCP__J_OBJECT,
  MCP__J_ARRAY,
  MCP__J_STRING,
  MCP__J_NUMBER,
  MCP__J_LITERAL, /* true, false, null */
} mcp__jtype;

/* Checks that s[0..n) is exactly one JSON object (whitespace around it
 * allowed) under the strict rules above. scratch holds cap entries (see
 * MCP__JSON_SCRATCH). Returns true and sets *root to the object; false
 * with *why set to a static phrase. */
bool mcp__jwt_json_check(const char *s, size_t n, uint32_t *scratch, size_t cap,
                         mcp__jspan *root, const char **why);

mcp__jtype mcp__jwt_json_type(mcp__jspan v);

/* The value of the member called name (compared after unescaping) of a
 * checked object. Returns false when absent or when obj is no object. */
bool mcp__jwt_json_get(mcp__jspan obj, const char *name, mcp__jspan *val);

/* Walks a checked array: *pos starts at 0. Returns false after the last
 * element. */
bool mcp__jwt_json_next(mcp__jspan arr, size_t *pos, mcp__jspan *elem);

/* Decodes a string value into out (cap bytes, NUL-terminated; a checked
 * string never holds NUL). Returns false when v is no string or its text
 * does not fit. *len (may be NULL) receives the length. */
bool mcp__jwt_json_string(mcp__jspan v, char *out, size_t cap, size_t *len);

/* True when v is a string whose decoded text is the n bytes at s. */
bool mcp__jwt_json_string_is(mcp__jspan v, const char *s, size_t n);

/* Reads a NumericDate: a non-negative JSON number, truncated to whole
 * seconds, computed exactly from its digits (no floating point, no locale).
 * Returns 0 and sets *out; -1 when v is no number; -2 when it is negative
 * or above 2^53. */
int mcp__jwt_json_seconds(mcp__jspan v, long long *out);

/* ---- key sets (jwks.c) -----------------------------------------------------
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
 * NULL or errlen 0). Shared by lib/jwt.c and lib/jwks.c. */
void mcp__jwt_say(char *err, size_t errlen, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

#endif
