/* JWKS documents (RFC 7517) into key sets for the JWT verifier.
 *
 * Every JWK becomes an EVP_PKEY through EVP_PKEY_fromdata, which refuses
 * an EC point that is not on its curve; EC and Ed25519 keys then pass
 * EVP_PKEY_public_check, RSA keys a cheaper check of their own.
 * A JWK that cannot serve to verify signatures safely is skipped, not
 * fatal, so one odd key in a provider's set does not take the others down;
 * a document with no usable key at all is refused, so the last good set
 * stays in use. Symmetric ("oct") keys are never taken from a JWKS: HS256
 * is only verified with the secret the application configured. */
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/param_build.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "jwt_int.h"

/* What became of one JWK. */
#define JWK_OK 0
#define JWK_SKIP 1
#define JWK_NOMEM 2

/* Largest RSA modulus taken (bytes): 8192 bits bounds the cost of a
 * verification. */
#define MAX_RSA_BYTES 1024

/* Members that only a private or symmetric JWK has (RFC 7518 §6.2.2,
 * §6.3.2, §6.4; "priv" of the draft OKP private form). A key published
 * with them was leaked by mistake, and using it would bless the mistake. */
static const char *const private_members[] = {"d",  "p",   "q", "dp",   "dq",
                                              "qi", "oth", "k", "priv", NULL};

/* The bytes of the base64url string member name of jwk. */
static bool member_bytes(const cJSON *jwk, const char *name, unsigned char *out,
                         size_t cap, size_t *len) {
  const cJSON *v = mcp__json_member(jwk, name);
  return cJSON_IsString(v) &&
         mcp__base64_decode(v->valuestring, strlen(v->valuestring), out, cap,
                            len, MCP__BASE64_URL);
}

/* A public key from OSSL_PARAMs, checked by OpenSSL when check is set
 * (EVP_PKEY_public_check: an EC point on its curve and of the right order,
 * an Ed25519 point that decodes). */
static int from_data(const char *type, OSSL_PARAM *params, bool check,
                     EVP_PKEY **out) {
  EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new_from_name(NULL, type, NULL);
  if (ctx == NULL)
    return JWK_NOMEM;
  EVP_PKEY *pkey = NULL;
  bool ok = EVP_PKEY_fromdata_init(ctx) == 1 &&
            EVP_PKEY_fromdata(ctx, &pkey, EVP_PKEY_PUBLIC_KEY, params) == 1;
  EVP_PKEY_CTX_free(ctx);
  if (!ok) {
    EVP_PKEY_free(pkey);
    return JWK_SKIP;
  }
  if (check) {
    ctx = EVP_PKEY_CTX_new_from_pkey(NULL, pkey, NULL);
    ok = ctx != NULL && EVP_PKEY_public_check(ctx) == 1;
    EVP_PKEY_CTX_free(ctx);
  }
  if (!ok) {
    EVP_PKEY_free(pkey);
    return JWK_SKIP;
  }
  *out = pkey;
  return JWK_OK;
}

static int load_rsa(const cJSON *jwk, mcp__jwk *k, const char **why) {
  unsigned char n[MAX_RSA_BYTES + 1], e[8];
  size_t nlen, elen;
  if (!member_bytes(jwk, "n", n, sizeof n, &nlen) ||
      !member_bytes(jwk, "e", e, sizeof e, &elen) || nlen == 0 || elen == 0) {
    *why = "an RSA key without a readable \"n\" and \"e\" (or over 8192 bits)";
    return JWK_SKIP;
  }
  /* What makes RSA signatures forgeable whoever holds the key: an even
   * modulus, or an exponent that is even or 1. OpenSSL's own public check
   * adds a primality test of n that costs milliseconds per key, and a key
   * set comes from the application's own authorization server. */
  unsigned long long ev = 0;
  for (size_t i = 0; i < elen; i++)
    ev = ev << 8 | e[i];
  if (!(n[nlen - 1] & 1) || !(ev & 1) || ev < 3) {
    *why = "an RSA key with an even modulus or a weak exponent";
    return JWK_SKIP;
  }
  int rc = JWK_NOMEM;
  BIGNUM *bn = BN_bin2bn(n, (int)nlen, NULL);
  BIGNUM *be = BN_bin2bn(e, (int)elen, NULL);
  OSSL_PARAM_BLD *bld = OSSL_PARAM_BLD_new();
  OSSL_PARAM *params = NULL;
  if (bn != NULL && be != NULL && bld != NULL &&
      OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_RSA_N, bn) == 1 &&
      OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_RSA_E, be) == 1 &&
      (params = OSSL_PARAM_BLD_to_param(bld)) != NULL) {
    rc = from_data("RSA", params, false, &k->pkey);
    if (rc == JWK_SKIP)
      *why = "an RSA key OpenSSL refused";
  }
  OSSL_PARAM_free(params);
  OSSL_PARAM_BLD_free(bld);
  BN_free(bn);
  BN_free(be);
  if (rc != JWK_OK)
    return rc;
  int bits = EVP_PKEY_get_bits(k->pkey);
  /* RFC 7518 §3.3: 2048 bits or more. */
  if (bits < 2048 || bits > 8 * MAX_RSA_BYTES) {
    *why = "an RSA key shorter than 2048 bits";
    EVP_PKEY_free(k->pkey);
    k->pkey = NULL;
    return JWK_SKIP;
  }
  k->kind = MCP__JWK_RSA;
  k->sig_len = (size_t)EVP_PKEY_get_size(k->pkey);
  return JWK_OK;
}

static int load_ec(const cJSON *jwk, mcp__jwk *k, const char **why) {
  static const struct {
    const char *crv;
    unsigned kind;
    size_t len;
  } curves[] = {{"P-256", MCP__JWK_P256, 32},
                {"P-384", MCP__JWK_P384, 48},
                {"P-521", MCP__JWK_P521, 66}};
  const cJSON *crv;
  size_t c = 3;
  if ((crv = mcp__json_member(jwk, "crv")) != NULL)
    for (c = 0; c < 3; c++)
      if (mcp__jwt_string_is(crv, curves[c].crv, strlen(curves[c].crv)))
        break;
  if (c == 3) {
    *why = "an EC key on an unsupported curve";
    return JWK_SKIP;
  }
  /* RFC 7518 §6.2.1.2: coordinates are exactly the curve's size. */
  unsigned char pub[1 + 2 * 66];
  size_t xlen, ylen, len = curves[c].len;
  pub[0] = 0x04; /* uncompressed point */
  if (!member_bytes(jwk, "x", pub + 1, len, &xlen) ||
      !member_bytes(jwk, "y", pub + 1 + len, len, &ylen) || xlen != len ||
      ylen != len) {
    *why = "an EC key without coordinates of its curve's size";
    return JWK_SKIP;
  }
  OSSL_PARAM params[] = {
      OSSL_PARAM_construct_utf8_string(OSSL_PKEY_PARAM_GROUP_NAME,
                                       (char *)curves[c].crv, 0),
      OSSL_PARAM_construct_octet_string(OSSL_PKEY_PARAM_PUB_KEY, pub,
                                        1 + 2 * len),
      OSSL_PARAM_construct_end()};
  int rc = from_data("EC", params, true, &k->pkey);
  if (rc == JWK_SKIP)
    *why = "an EC key whose point is not on its curve";
  k->kind = curves[c].kind;
  k->sig_len = 2 * len;
  return rc;
}

static int load_okp(const cJSON *jwk, mcp__jwk *k, const char **why) {
  const cJSON *crv;
  unsigned char x[32];
  size_t xlen;
  if ((crv = mcp__json_member(jwk, "crv")) == NULL ||
      !mcp__jwt_string_is(crv, "Ed25519", 7)) {
    *why = "an OKP key on a curve other than Ed25519";
    return JWK_SKIP;
  }
  if (!member_bytes(jwk, "x", x, sizeof x, &xlen) || xlen != sizeof x) {
    *why = "an Ed25519 key without a 32-byte \"x\"";
    return JWK_SKIP;
  }
  OSSL_PARAM params[] = {
      OSSL_PARAM_construct_octet_string(OSSL_PKEY_PARAM_PUB_KEY, x, xlen),
      OSSL_PARAM_construct_end()};
  int rc = from_data("ED25519", params, true, &k->pkey);
  if (rc == JWK_SKIP)
    *why = "an Ed25519 key OpenSSL refused";
  k->kind = MCP__JWK_ED25519;
  k->sig_len = 64;
  return rc;
}

/* True when key_ops (RFC 7517 §4.3) is an array of strings with
 * "verify". */
static bool ops_verify(const cJSON *ops) {
  bool verify = false;
  if (!cJSON_IsArray(ops))
    return false;
  for (const cJSON *op = ops->child; op; op = op->next) {
    if (!cJSON_IsString(op))
      return false;
    if (mcp__jwt_string_is(op, "verify", 6))
      verify = true;
  }
  return verify;
}

static int parse_jwk(const cJSON *jwk, mcp__jwk *k, const char **why) {
  const cJSON *v;
  if (!cJSON_IsObject(jwk)) {
    *why = "a key that is not an object";
    return JWK_SKIP;
  }
  for (size_t i = 0; private_members[i] != NULL; i++) {
    if ((v = mcp__json_member(jwk, private_members[i])) != NULL) {
      *why = "a key with private or secret parts";
      return JWK_SKIP;
    }
  }
  if ((v = mcp__json_member(jwk, "use")) != NULL &&
      !mcp__jwt_string_is(v, "sig", 3)) {
    *why = "a key whose \"use\" is not \"sig\"";
    return JWK_SKIP;
  }
  if ((v = mcp__json_member(jwk, "key_ops")) != NULL && !ops_verify(v)) {
    *why = "a key whose \"key_ops\" lacks \"verify\"";
    return JWK_SKIP;
  }
  unsigned kinds = ~0u;
  if ((v = mcp__json_member(jwk, "alg")) != NULL) {
    size_t len;
    if (!mcp__jwt_string(v, k->alg, sizeof k->alg, &len) ||
        (kinds = mcp__jwt_alg_kinds(k->alg, len)) == 0) {
      *why = "a key with an unsupported \"alg\"";
      return JWK_SKIP;
    }
  }
  if ((v = mcp__json_member(jwk, "kid")) != NULL) {
    if (!mcp__jwt_string(v, k->kid, sizeof k->kid, &k->kid_len)) {
      *why = "a key whose \"kid\" is not a string of at most 128 bytes";
      return JWK_SKIP;
    }
    k->has_kid = true;
  }
  int rc;
  if ((v = mcp__json_member(jwk, "kty")) == NULL) {
    *why = "a key without \"kty\"";
    return JWK_SKIP;
  } else if (mcp__jwt_string_is(v, "RSA", 3)) {
    rc = load_rsa(jwk, k, why);
  } else if (mcp__jwt_string_is(v, "EC", 2)) {
    rc = load_ec(jwk, k, why);
  } else if (mcp__jwt_string_is(v, "OKP", 3)) {
    rc = load_okp(jwk, k, why);
  } else if (mcp__jwt_string_is(v, "oct", 3)) {
    *why = "a symmetric (\"oct\") key";
    return JWK_SKIP;
  } else {
    *why = "a key of an unsupported \"kty\"";
    return JWK_SKIP;
  }
  if (rc == JWK_OK && !(kinds & k->kind)) {
    *why = "a key whose \"alg\" does not fit its type";
    rc = JWK_SKIP;
  }
  if (rc != JWK_OK) {
    EVP_PKEY_free(k->pkey);
    k->pkey = NULL;
  }
  return rc;
}

void mcp__jwks_free(mcp__jwks *set) {
  if (set == NULL)
    return;
  for (size_t i = 0; i < set->n; i++)
    EVP_PKEY_free(set->keys[i].pkey);
  OPENSSL_free(set);
}

/* Parses the JWKS document into doc and finds its "keys" array (at most
 * MCP__JWKS_MAX_KEYS of them). On failure doc is freed and err says why.
 * Returns 0, MCP_EINVAL or MCP_ENOMEM. */
static int read_keys_array(const char *json, size_t len, mcp__json_doc *doc,
                           const cJSON **keys, char *err, size_t errlen) {
  char jwhy[200];
  int prc =
      mcp__json_parse(json, len, &mcp__jwt_json_limits, doc, jwhy, sizeof jwhy);
  if (prc == MCP_ENOMEM) {
    mcp__jwt_say(err, errlen, "out of memory reading the JWKS");
    return MCP_ENOMEM;
  }
  if (prc != 0 || !cJSON_IsObject(doc->root)) {
    if (prc != 0)
      mcp__jwt_say(err, errlen, "the JWKS is not strict JSON: %s", jwhy);
    else
      mcp__jwt_say(err, errlen, "the JWKS is not a JSON object");
    mcp__json_doc_free(doc);
    return MCP_EINVAL;
  }
  *keys = mcp__json_member(doc->root, "keys");
  if (!cJSON_IsArray(*keys)) {
    mcp__json_doc_free(doc);
    mcp__jwt_say(err, errlen, "the JWKS has no \"keys\" array");
    return MCP_EINVAL;
  }
  if ((size_t)cJSON_GetArraySize(*keys) > MCP__JWKS_MAX_KEYS) {
    mcp__json_doc_free(doc);
    mcp__jwt_say(err, errlen, "the JWKS has more than %d keys",
                 MCP__JWKS_MAX_KEYS);
    return MCP_EINVAL;
  }
  return 0;
}

/* Adds to set every usable key of keys; counts the others in *skipped,
 * with the reason of the first in *first. Returns JWK_OK or JWK_NOMEM. */
static int add_keys(mcp__jwks *set, const cJSON *keys, size_t *skipped,
                    const char **first) {
  const char *why = NULL;
  for (const cJSON *jwk = keys->child; jwk; jwk = jwk->next) {
    mcp__jwk *k = &set->keys[set->n];
    int rc = parse_jwk(jwk, k, &why);
    if (rc == JWK_NOMEM)
      return JWK_NOMEM;
    if (rc == JWK_OK) {
      set->n++;
    } else {
      memset(k, 0, sizeof *k);
      if ((*skipped)++ == 0)
        *first = why;
    }
  }
  return JWK_OK;
}

int mcp__jwks_parse(const char *json, size_t len, mcp__jwks **out, char *err,
                    size_t errlen) {
  mcp__jwt_say(err, errlen, "%s", "");
  if (json == NULL || len > MCP__JWKS_MAX_DOC) {
    mcp__jwt_say(err, errlen, "the JWKS is larger than %u bytes",
                 MCP__JWKS_MAX_DOC);
    return MCP_EINVAL;
  }
  mcp__json_doc doc = {0};
  const cJSON *keys = NULL;
  int rc = read_keys_array(json, len, &doc, &keys, err, errlen);
  if (rc != 0)
    return rc;
  size_t count = (size_t)cJSON_GetArraySize(keys), skipped = 0;
  mcp__jwks *set = OPENSSL_zalloc(sizeof *set + count * sizeof set->keys[0]);
  const char *first = NULL;
  if (set == NULL || add_keys(set, keys, &skipped, &first) == JWK_NOMEM) {
    mcp__json_doc_free(&doc);
    mcp__jwks_free(set);
    mcp__jwt_say(err, errlen, "out of memory reading the JWKS");
    return MCP_ENOMEM;
  }
  /* The reasons are static texts: the document may go now. */
  mcp__json_doc_free(&doc);
  if (set->n == 0) {
    mcp__jwks_free(set);
    if (skipped)
      mcp__jwt_say(
          err, errlen,
          "the JWKS has no usable key (%zu skipped, the first being %s)",
          skipped, first);
    else
      mcp__jwt_say(err, errlen, "the JWKS has no keys");
    return MCP_EINVAL;
  }
  if (skipped)
    mcp__jwt_say(err, errlen,
                 "%zu key(s) of the JWKS skipped, the first being %s", skipped,
                 first);
  set->refs = 1;
  *out = set;
  return 0;
}
