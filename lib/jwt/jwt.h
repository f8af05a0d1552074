/* The built-in JWT access-token verifier of the HTTP transport (private).
 *
 * A verifier holds a copy of the JWT part of mcp_auth_options and the
 * current key set (a JWKS from a string, a file or the application's fetch
 * callback). It checks compact JWS tokens on OpenSSL 3's EVP API only:
 * RS256/384/512, PS256/384/512, ES256/384/512, EdDSA (Ed25519) and, only
 * when a shared secret is configured, HS256. The algorithm is pinned by the
 * key: the key type must fit the token's "alg", and a JWK's own "alg", "use"
 * and "key_ops" are honoured. Tokens are bearer secrets: no function here
 * logs them, and no reason it writes quotes any part of one.
 *
 * Thread-safe: any number of threads may verify at once while another
 * replaces the key set. A token naming an unknown key makes at most one
 * call of the fetch callback at a time, and at most one per
 * jwks_refresh_s (counted from the start of the last fetch, failed or
 * not); verifications that need the fetch in progress wait for it, at most
 * 10 seconds, then look once more. The fetch runs on the verifying
 * thread.
 *
 * Memory: a verification decodes the token into buffers on the stack
 * (about 17 KiB) and parses its header and payload with the library's
 * strict JSON layer, one pooled block each, through the allocator hook
 * (mcp_set_allocator); OpenSSL allocates through CRYPTO_malloc, and the key
 * sets are allocated with OPENSSL_malloc (CRYPTO_set_mem_functions sees
 * those). */
#ifndef MCP_JWT_H
#define MCP_JWT_H

#include <stddef.h>

#include "mcp/http.h"

typedef struct mcp__jwt mcp__jwt;

/* Caps on what a verifier reads. */
#define MCP__JWT_MAX_TOKEN 8192      /* characters of a token */
#define MCP__JWT_MAX_HEADER 1024     /* bytes of the decoded header */
#define MCP__JWT_MAX_PAYLOAD 6144    /* bytes of the decoded payload */
#define MCP__JWT_MAX_KID 128         /* bytes of a "kid" */
#define MCP__JWKS_MAX_DOC (1u << 20) /* bytes of a JWKS document */
#define MCP__JWKS_MAX_KEYS 64        /* JWKs in one document */

/* Creates a verifier from opts (only its JWT members and "resource" are
 * read; everything needed is copied). The key set comes from opts->jwks or
 * opts->jwks_file (not both), or later from opts->jwks_fetch; HS256 needs
 * opts->hs256_secret of at least 32 bytes. Returns 0 and sets *out, or
 * MCP_EINVAL with one sentence in err for a configuration that cannot work
 * (no issuer or resource, no source of keys, a short secret, a JWKS or file
 * that is unreadable or holds no usable key), or MCP_ENOMEM; *out is then
 * untouched. On success err holds "" or a warning worth logging (keys of the
 * JWKS that were skipped, and why). */
int mcp__jwt_new(const mcp_auth_options *opts, mcp__jwt **out, char *err,
                 size_t errlen);

/* Frees a verifier. NULL does nothing. No verification may be running. */
void mcp__jwt_free(mcp__jwt *j);

/* Verifies a bearer token (NUL-terminated). Returns 0 and fills *info for a
 * valid token for this resource; otherwise the token is rejected (answer
 * 401): MCP_EINVAL for an invalid token (malformed, bad signature, unknown
 * key, expired, wrong issuer or audience...) or MCP_ENOMEM when memory ran
 * out, with a short reason in why (whylen bytes, may be 0) that never
 * quotes the token. info is zeroed on failure. May call the fetch callback
 * (see above). Any thread. */
int mcp__jwt_verify(mcp__jwt *j, const char *token, mcp_token_info *info,
                    char *why, size_t whylen);

/* Replaces the key set with the JWKS document json (len bytes, no NUL
 * needed). Returns 0 (err then holds "" or a warning about skipped keys),
 * or MCP_EINVAL (not a JWKS, too large, no usable key) or MCP_ENOMEM with a
 * sentence in err; on failure the last good set stays in use. Any thread. */
int mcp__jwt_set_jwks(mcp__jwt *j, const char *json, size_t len, char *err,
                      size_t errlen);

/* Re-reads opts->jwks_file into the key set, as mcp__jwt_set_jwks.
 * Returns MCP_EIO when the file cannot be read, MCP_ESTATE when no file was
 * configured. Any thread. */
int mcp__jwt_reload_file(mcp__jwt *j, char *err, size_t errlen);

#endif
