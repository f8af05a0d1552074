/* Trust annotations (io.modelcontextprotocol/trust-annotations): labels a
 * handler puts on its result or on single content blocks, and the
 * untrusted label of every open-world call's result. Written where the
 * result's head and each block are written (call.c), never spliced in
 * afterwards, and only for a client that negotiated the extension. */
#include <cjson/cJSON.h>
#include <string.h>

#include "engine.h"

#define KNOWN (MCP_TRUST_SENSITIVE | MCP_TRUST_UNTRUSTED | MCP_TRUST_TRUSTED)

void mcp__trust_clear(mcp_call *c) {
  mcp__free(c->trust_evidence);
  mcp__free(c->next_evidence);
  c->trust_evidence = c->next_evidence = NULL;
  c->trust = c->next_trust = 0;
}

/* Whether c's client declared the extension (its capabilities: the
 * request's in 2026-07-28, initialize's before). */
static bool negotiated(const mcp_call *c) {
  return cJSON_IsObject(mcp__json_member(
      mcp__json_member(c->caps, "extensions"), MCP__TRUST_EXTENSION));
}

/* "sha256:" and 64 lowercase hex digits, or sha384/sha512's lengths. */
static bool digest_valid(const char *d) {
  static const struct {
    const char *alg;
    size_t hex;
  } algs[] = {{"sha256:", 64}, {"sha384:", 96}, {"sha512:", 128}};
  for (size_t i = 0; i < sizeof algs / sizeof *algs; i++) {
    size_t n = strlen(algs[i].alg);
    if (strncmp(d, algs[i].alg, n) != 0)
      continue;
    d += n;
    size_t k = strspn(d, "0123456789abcdef");
    return k == algs[i].hex && d[k] == '\0';
  }
  return false;
}

static bool text_valid(const char *s, bool required) {
  if (s == NULL)
    return !required;
  size_t n = strlen(s);
  return n > 0 && n <= 1024 && mcp__utf8_valid(s, n);
}

static void put_member(mcp__buf *b, const char *key, const char *val,
                       bool *first) {
  if (val == NULL)
    return;
  mcp__buf_printf(b, "%s\"%s\":", *first ? "" : ",", key);
  mcp__json_quote(b, val, strlen(val));
  *first = false;
}

/* Renders e as an evidenceRef object into *out (NULL when e is NULL).
 * Returns 0, MCP_EINVAL or MCP_ENOMEM. */
static int render_evidence(const mcp_evidence_ref *e, char **out) {
  *out = NULL;
  if (e == NULL)
    return 0;
  if (!text_valid(e->type, true) || !text_valid(e->schema, false) ||
      !text_valid(e->ref, false) || e->digest == NULL ||
      !digest_valid(e->digest) || e->canonicalization == NULL ||
      (strcmp(e->canonicalization, "jcs/rfc8785") != 0 &&
       strcmp(e->canonicalization, "cbor/rfc8949") != 0))
    return MCP_EINVAL;
  mcp__buf b = {0};
  bool first = true;
  mcp__buf_putc(&b, '{');
  put_member(&b, "type", e->type, &first);
  put_member(&b, "digest", e->digest, &first);
  put_member(&b, "canonicalization", e->canonicalization, &first);
  put_member(&b, "schema", e->schema, &first);
  put_member(&b, "ref", e->ref, &first);
  mcp__buf_putc(&b, '}');
  size_t len;
  *out = mcp__buf_take(&b, &len);
  return *out ? 0 : MCP_ENOMEM;
}

/* The checks both setters share; 0 with the rendered evidence in *ev. */
static int take(mcp_call *call, unsigned labels, unsigned allowed,
                const mcp_evidence_ref *evidence, char **ev) {
  if (call == NULL || call->kind != MCP_CALL_TOOL || (labels & ~allowed) ||
      ((labels & MCP_TRUST_TRUSTED) && (labels & MCP_TRUST_UNTRUSTED)))
    return MCP_EINVAL;
  return render_evidence(evidence, ev);
}

int mcp_result_trust(mcp_call *call, unsigned labels,
                     const mcp_evidence_ref *evidence) {
  char *ev;
  int rc = take(call, labels, KNOWN, evidence, &ev);
  if (rc)
    return rc;
  if (call->head_len || call->content.len) { /* the head is written */
    mcp__free(ev);
    return MCP_ESTATE;
  }
  mcp__free(call->trust_evidence);
  call->trust = labels;
  call->trust_evidence = ev;
  return 0;
}

int mcp_result_trust_next(mcp_call *call, unsigned labels,
                          const mcp_evidence_ref *evidence) {
  char *ev;
  int rc = take(call, labels, MCP_TRUST_SENSITIVE | MCP_TRUST_UNTRUSTED,
                evidence, &ev);
  if (rc)
    return rc;
  mcp__free(call->next_evidence);
  call->next_trust = labels;
  call->next_evidence = ev;
  return 0;
}

/* The extension's member: "key":{labels, evidenceRef}. */
static void put_labels(mcp__buf *b, unsigned labels, const char *evidence) {
  bool first = true;
  mcp__buf_puts(b, "\"" MCP__TRUST_EXTENSION "\":{");
  if (labels & MCP_TRUST_SENSITIVE) {
    mcp__buf_puts(b, "\"sensitive\":true");
    first = false;
  }
  if (labels & MCP_TRUST_UNTRUSTED) {
    mcp__buf_puts(b, first ? "\"untrusted\":true" : ",\"untrusted\":true");
    first = false;
  }
  if (evidence) {
    mcp__buf_puts(b, first ? "\"evidenceRef\":" : ",\"evidenceRef\":");
    mcp__buf_puts(b, evidence);
  }
  mcp__buf_putc(b, '}');
}

void mcp__trust_result_put(const mcp_call *c, mcp__buf *meta) {
  unsigned labels = c->trust & ~MCP_TRUST_TRUSTED;
  mcp_tool_annotations h = mcp_call_hints(c);
  if (h.open_world == MCP_HINT_TRUE && !(c->trust & MCP_TRUST_TRUSTED))
    labels |= MCP_TRUST_UNTRUSTED;
  if ((labels == 0 && c->trust_evidence == NULL) || !negotiated(c))
    return;
  put_labels(meta, labels, c->trust_evidence);
}

void mcp__trust_block_end(mcp_call *c, mcp__buf *b) {
  if ((c->next_trust || c->next_evidence) && negotiated(c)) {
    mcp__buf_puts(b, ",\"_meta\":{");
    put_labels(b, c->next_trust, c->next_evidence);
    mcp__buf_putc(b, '}');
  }
  mcp__free(c->next_evidence);
  c->next_evidence = NULL;
  c->next_trust = 0;
}
