/* libFuzzer target: JWT parse and verify (lib/jwt.h) against the fixed key
 * set of jwt_keys.h (RSA, RSA-PSS, EC P-256/384/521, Ed25519) and an HS256
 * secret.
 *
 * Input: one options byte, then
 *  - bit 7 clear: a compact token, verified as given;
 *  - bit 7 set: header JSON, a NUL byte, payload JSON. The target encodes
 *    both and signs them with the HS256 secret, so the fuzzer reaches the
 *    header and claim checks behind a valid signature.
 * Bits 0-1 pick the verifier: 0 keys and secret; 1 the same with the RFC
 * 9068 profile required (typ at+jwt), scopes in "scp" and a one-second
 * leeway; 2 keys only; 3 secret only. The verifiers are built once; no
 * fetch callback is set, so an unknown key never waits.
 *
 * Checked beyond "no crash, no leak": verify returns a documented code;
 * a refusal leaves info zeroed and gives a reason that is valid UTF-8 and
 * quotes no part of the token; an acceptance fills NUL-terminated UTF-8
 * subject and scopes and an expiry; verifying again gives the same
 * answer. With FUZZ_PRINT set in the environment, each verdict is
 * printed to standard error. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "json.h"
#include "jwt.h"
#include "jwt_keys.h"
#include "jwt_sign.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static mcp__jwt *verifiers[4];
static bool print;

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc;
  (void)argv;
  print = getenv("FUZZ_PRINT") != NULL;
  for (int i = 0; i < 4; i++) {
    mcp_auth_options o = {.issuer = FUZZ_ISSUER, .resource = FUZZ_RESOURCE};
    if (i != 3)
      o.jwks = fuzz_jwks;
    if (i != 2) {
      o.hs256_secret = FUZZ_HS256_SECRET;
      o.hs256_secret_len = sizeof FUZZ_HS256_SECRET - 1;
    }
    if (i == 1) {
      o.require_at_jwt = true;
      o.scope_claim = "scp";
      o.leeway_s = 1;
    }
    char err[256];
    if (mcp__jwt_new(&o, &verifiers[i], err, sizeof err) != 0 || err[0])
      abort(); /* every key of the set must be usable */
  }
  return 0;
}

static bool text_ok(const char *s, size_t cap) {
  size_t n = strnlen(s, cap);
  return n < cap && mcp__utf8_valid(s, n);
}

/* True when why holds 12 or more characters of one of the token's
 * segments. */
static bool quotes_token(const char *why, const char *token) {
  const char *seg = token;
  for (;;) {
    const char *dot = strchr(seg, '.');
    size_t n = dot ? (size_t)(dot - seg) : strlen(seg);
    for (size_t at = 0; n >= 12 && at + 12 <= n; at += 12) {
      char piece[13];
      memcpy(piece, seg + at, 12);
      piece[12] = '\0';
      if (strstr(why, piece) != NULL)
        return true;
    }
    if (dot == NULL)
      return false;
    seg = dot + 1;
  }
}

static void check(mcp__jwt *j, const char *token) {
  mcp_token_info info, again;
  char why[200], why2[200];
  memset(&info, 0xA5, sizeof info);
  int rc = mcp__jwt_verify(j, token, &info, why, sizeof why);
  if (rc != 0 && rc != MCP_EINVAL && rc != MCP_ENOMEM)
    abort();
  if (print)
    fprintf(stderr, "verify: %d %s\n", rc, rc ? why : info.subject);
  if (rc != 0) {
    static const mcp_token_info zero;
    if (memcmp(&info, &zero, sizeof info) != 0)
      abort();
    if (why[0] == '\0' || !text_ok(why, sizeof why) || quotes_token(why, token))
      abort();
  } else if (!text_ok(info.subject, sizeof info.subject) ||
             !text_ok(info.scopes, sizeof info.scopes) ||
             info.expires_at <= 0) {
    abort();
  }
  if (mcp__jwt_verify(j, token, &again, why2, sizeof why2) != rc)
    abort();
}

/* b64url(header) "." b64url(payload) "." b64url(HMAC-SHA-256), by the
 * suites' one signer (tests/common/jwt_sign.c). */
static char *sign(const char *header, size_t hlen, const char *payload,
                  size_t plen) {
  return tc_jwt_hs256(header, hlen, payload, plen, FUZZ_HS256_SECRET,
                      sizeof FUZZ_HS256_SECRET - 1);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1 || size > 3 * MCP__JWT_MAX_TOKEN)
    return 0;
  unsigned options = data[0];
  const char *text = (const char *)data + 1;
  size--;
  mcp__jwt *j = verifiers[options & 3];
  char *token;
  if (options & 0x80) {
    const char *nul = memchr(text, '\0', size);
    size_t hlen = nul ? (size_t)(nul - text) : size;
    token = nul ? sign(text, hlen, nul + 1, size - hlen - 1)
                : sign(text, hlen, "{}", 2);
  } else {
    token = strndup(text, size);
    if (token == NULL)
      abort();
  }
  check(j, token);
  free(token);
  return 0;
}
