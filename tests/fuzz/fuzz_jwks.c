/* libFuzzer target: loading a JWKS document (lib/jwt/jwks.c), as the JWT
 * verifier does from auth.jwks, a file or the fetch callback.
 *
 * Input: the document. It goes through mcp__jwks_parse directly, through
 * mcp__jwt_new as auth.jwks (when it holds no NUL byte), and through
 * mcp__jwt_set_jwks on a verifier built from the real key set. The tokens
 * of jwt_keys.h, one signed by each real key, are verified against the
 * set mcp__jwt_new loaded, so key selection runs on fuzzed sets.
 *
 * Checked beyond "no crash, no leak": every path returns a documented
 * code with a valid UTF-8 sentence; the three loaders agree on whether the
 * document is usable; a refused document leaves the previous key set in
 * use (every real token still verifies). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "jwt_int.h"
#include "jwt_keys.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static mcp__jwt *real;

static void check_text(const char *s, size_t cap, bool required) {
  size_t n = strnlen(s, cap);
  if (n == cap || (required && n == 0) || !mcp__utf8_valid(s, n))
    abort();
}

static void check_rc(int rc) {
  if (rc != 0 && rc != MCP_EINVAL && rc != MCP_ENOMEM)
    abort();
}

/* Verifies every real token; returns how many passed. */
static int verify_all(mcp__jwt *j) {
  int ok = 0;
  for (size_t i = 0; fuzz_tokens[i] != NULL; i++) {
    mcp_token_info info;
    char why[200];
    int rc = mcp__jwt_verify(j, fuzz_tokens[i], &info, why, sizeof why);
    check_rc(rc);
    if (rc == 0)
      ok++;
    else
      check_text(why, sizeof why, true);
  }
  return ok;
}

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc;
  (void)argv;
  const mcp_auth_options o = {.issuer = FUZZ_ISSUER,
                              .resource = FUZZ_RESOURCE,
                              .jwks = fuzz_jwks,
                              .hs256_secret = FUZZ_HS256_SECRET,
                              .hs256_secret_len = sizeof FUZZ_HS256_SECRET - 1};
  char err[256];
  if (mcp__jwt_new(&o, &real, err, sizeof err) != 0 ||
      verify_all(real) != (int)(sizeof fuzz_tokens / sizeof *fuzz_tokens) - 1)
    abort(); /* every real token must pass against the real set */
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > MCP__JWKS_MAX_DOC + 16)
    return 0;
  const char *json = (const char *)data;
  char err[512];

  mcp__jwks *set = NULL;
  int parsed = mcp__jwks_parse(json, size, &set, err, sizeof err);
  check_rc(parsed);
  check_text(err, sizeof err, parsed != 0);
  if ((parsed == 0) != (set != NULL))
    abort();
  mcp__jwks_free(set);

  if (memchr(json, '\0', size) == NULL) {
    char *text = malloc(size + 1);
    if (text == NULL)
      abort();
    memcpy(text, json, size);
    text[size] = '\0';
    const mcp_auth_options o = {
        .issuer = FUZZ_ISSUER, .resource = FUZZ_RESOURCE, .jwks = text};
    mcp__jwt *j = NULL;
    int rc = mcp__jwt_new(&o, &j, err, sizeof err);
    check_rc(rc);
    check_text(err, sizeof err, rc != 0);
    if (rc != MCP_ENOMEM && parsed != MCP_ENOMEM && (rc == 0) != (parsed == 0))
      abort();
    if (rc == 0) {
      verify_all(j);
      mcp__jwt_free(j);
    }
    free(text);
  }

  int rc = mcp__jwt_set_jwks(real, json, size, err, sizeof err);
  check_rc(rc);
  check_text(err, sizeof err, rc != 0);
  if (rc != MCP_ENOMEM && parsed != MCP_ENOMEM && (rc == 0) != (parsed == 0))
    abort();
  if (rc != 0) {
    /* A refused set leaves the good one in use. */
    mcp_token_info info;
    if (mcp__jwt_verify(real, fuzz_tokens[0], &info, err, sizeof err) != 0)
      abort();
  } else if (mcp__jwt_set_jwks(real, fuzz_jwks, sizeof fuzz_jwks - 1, err,
                               sizeof err) != 0) {
    abort(); /* back to the real set, so inputs do not depend on each other */
  }
  return 0;
}
