/* Access control: the scopes a tool requires, then the authorizer hook.
 * Nothing here can see a tool's annotations; that is deliberate (promise
 * 2, docs/architecture.md), and test_policy proves flipping them changes
 * no decision. */
#include <cjson/cJSON.h>
#include <string.h>

#include "policy.h"

bool mcp_principal_has_scope(const mcp_principal *principal,
                             const char *scope) {
  if (principal == NULL || scope == NULL)
    return false;
  if (principal->all_scopes)
    return true;
  for (const char *const *s = principal->scopes; s && *s; s++)
    if (strcmp(*s, scope) == 0)
      return true;
  return false;
}

bool mcp__scope_token_valid(const char *s) {
  if (s == NULL || *s == '\0')
    return false;
  for (; *s; s++) {
    unsigned char c = (unsigned char)*s;
    if (c < 0x21 || c > 0x7e || c == '"' || c == '\\')
      return false;
  }
  return true;
}

int mcp__principal_copy(mcp_principal *dst, const mcp_principal *src) {
  mcp_principal p = {0};
  if (src != NULL) {
    size_t n = 0;
    while (src->scopes && src->scopes[n])
      n++;
    char **scopes = mcp__calloc(n + 1, sizeof *scopes);
    if (scopes == NULL)
      return MCP_ENOMEM;
    p.scopes = (const char *const *)scopes;
    for (size_t i = 0; i < n; i++) {
      if ((scopes[i] = mcp__strdup(src->scopes[i])) == NULL) {
        mcp__principal_free(&p);
        return MCP_ENOMEM;
      }
    }
    if (src->subject && (p.subject = mcp__strdup(src->subject)) == NULL) {
      mcp__principal_free(&p);
      return MCP_ENOMEM;
    }
    p.all_scopes = src->all_scopes;
  }
  *dst = p;
  return 0;
}

void mcp__principal_free(mcp_principal *p) {
  if (p->scopes) {
    for (size_t i = 0; p->scopes[i]; i++)
      mcp__free((void *)p->scopes[i]);
    mcp__free((void *)p->scopes);
  }
  mcp__free((void *)p->subject);
  *p = (mcp_principal){0};
}

/* The missing scopes of a decision that lacks none. */
static const char *no_scopes[1];

int mcp__policy_decide(const mcp__policy *policy,
                       const mcp_principal *principal, const char *tool,
                       const char *const *required, size_t nrequired,
                       const cJSON *arguments, mcp__decision *out) {
  *out = (mcp__decision){.decision = MCP_DECISION_ALLOWED,
                         .missing = no_scopes,
                         .required = required,
                         .nrequired = nrequired};
  /* Every required scope is checked, so a denial names all that are missing
   * and the client can ask for them in one step. The list is allocated only
   * then: an allowed call costs no allocation here. */
  size_t n = 0;
  for (size_t i = 0; i < nrequired; i++)
    n += !mcp_principal_has_scope(principal, required[i]);
  if (n > 0) {
    if ((out->missing = mcp__calloc(n + 1, sizeof *out->missing)) == NULL) {
      out->missing = no_scopes;
      return MCP_ENOMEM;
    }
    n = 0;
    for (size_t i = 0; i < nrequired; i++)
      if (!mcp_principal_has_scope(principal, required[i]))
        out->missing[n++] = required[i];
    out->decision = MCP_DECISION_DENIED_SCOPE;
    return 0;
  }
  if (policy->authorize != NULL &&
      policy->authorize(principal, tool, arguments, out->reason,
                        sizeof out->reason, policy->authorize_data) != 0) {
    out->reason[sizeof out->reason - 1] = '\0';
    /* The reason reaches the client inside JSON, which must be UTF-8, and
     * an authorizer that truncated it (snprintf into reason_size bytes) may
     * have cut a character in half: keep the longest valid prefix. */
    mcp__utf8_trim(out->reason);
    out->decision = MCP_DECISION_DENIED_AUTHORIZER;
  }
  return 0;
}

void mcp__decision_free(mcp__decision *d) {
  if (d->missing != no_scopes)
    mcp__free(d->missing);
  d->missing = NULL;
}

static void put_list(mcp__buf *b, const char *const *list, size_t n) {
  mcp__buf_putc(b, '[');
  for (size_t i = 0; list && i < n && list[i]; i++) {
    if (i)
      mcp__buf_putc(b, ',');
    mcp__json_quote(b, list[i], strlen(list[i]));
  }
  mcp__buf_putc(b, ']');
}

int mcp__decision_data(mcp__buf *b, const mcp__decision *d) {
  /* The missing scopes say what to ask for; all of them let an HTTP
   * transport name every scope the call needs in one challenge. */
  mcp__buf_puts(b, "{\"requiredScopes\":");
  put_list(b, d->missing, d->nrequired);
  mcp__buf_puts(b, ",\"scopes\":");
  put_list(b, d->required, d->nrequired);
  if (d->decision == MCP_DECISION_DENIED_AUTHORIZER && d->reason[0]) {
    mcp__buf_puts(b, ",\"reason\":");
    mcp__json_quote(b, d->reason, strlen(d->reason));
  }
  return mcp__buf_putc(b, '}');
}

int mcp__decision_message(mcp__buf *b, const mcp__decision *d,
                          const char *what) {
  if (d->decision != MCP_DECISION_DENIED_SCOPE) {
    mcp__buf_puts(b, "Forbidden: the server's policy denied this call");
    return b->err;
  }
  mcp__buf_printf(b, "Forbidden: insufficient scope; this %s needs", what);
  for (size_t i = 0; d->missing[i]; i++)
    mcp__buf_printf(b, " %s", d->missing[i]);
  return b->err;
}
