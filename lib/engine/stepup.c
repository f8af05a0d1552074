/* Step-up from a handler (mcp_call_require_scopes): access that depends on
 * a call's arguments, decided by its handler and answered exactly as the
 * admission point (lib/methods/dispatch.c) answers a refusal for the tool's
 * own scopes. The reply, facts and audit record of such a call are built
 * in call.c from what is kept here. */
#include <string.h>

#include "engine.h"

/* Scope tokens a call may ask for at once, and their length in all. */
#define MAX_SCOPES 32
#define MAX_TEXT 2048

void mcp__stepup_free(mcp__stepup *u) {
  while (u) {
    mcp__stepup *next = u->next;
    mcp__decision_free(&u->d);
    for (size_t i = 0; u->scopes && u->scopes[i]; i++)
      mcp__free(u->scopes[i]);
    mcp__free(u->scopes);
    mcp__free(u);
    u = next;
  }
}

/* Splits text at spaces into list (at most MAX_SCOPES, each a scope token);
 * returns how many, or 0 when text is not a scope list. list's entries
 * point into copy. */
static size_t split(const char *text, char *copy, const char *list[]) {
  size_t n = 0, len = strlen(text);
  if (len == 0 || len >= MAX_TEXT)
    return 0;
  memcpy(copy, text, len + 1);
  for (char *p = copy; *p;) {
    while (*p == ' ')
      p++;
    if (*p == '\0')
      break;
    if (n == MAX_SCOPES)
      return 0;
    list[n++] = p;
    p += strcspn(p, " ");
    if (*p)
      *p++ = '\0';
  }
  for (size_t i = 0; i < n; i++)
    if (!mcp__scope_token_valid(list[i]))
      return 0;
  return n;
}

/* The tool's scopes, then those asked for that it does not list, copied:
 * every scope the call needs, for the refusal's challenge. */
static char **union_of(const mcp__tool *t, const char *const asked[],
                       size_t n) {
  char **all = mcp__calloc(t->nscopes + n + 1, sizeof *all);
  size_t k = 0;
  for (size_t i = 0; all && i < t->nscopes + n; i++) {
    const char *s = i < t->nscopes ? t->scopes[i] : asked[i - t->nscopes];
    bool seen = false;
    for (size_t j = 0; j < k && !seen; j++)
      seen = strcmp(all[j], s) == 0;
    if (!seen && (all[k++] = mcp__strdup(s)) == NULL) {
      for (size_t j = 0; j + 1 < k; j++)
        mcp__free(all[j]);
      mcp__free(all);
      return NULL;
    }
  }
  return all;
}

int mcp_call_require_scopes(mcp_call *call, const char *scopes) {
  if (call == NULL || scopes == NULL || call->kind != MCP_CALL_TOOL)
    return MCP_EINVAL;
  char copy[MAX_TEXT];
  const char *asked[MAX_SCOPES];
  size_t n = split(scopes, copy, asked);
  if (n == 0)
    return MCP_EINVAL;
  if (call->stepup) /* refused already: the refusal stands */
    return MCP_EFORBIDDEN;
  const mcp_principal *who = mcp_call_principal(call);
  bool held = true;
  for (size_t i = 0; i < n && held; i++)
    held = mcp_principal_has_scope(who, asked[i]);
  if (held)
    return 0;
  mcp__stepup *u = mcp__calloc(1, sizeof *u);
  if (u == NULL || (u->scopes = union_of(call->tool, asked, n)) == NULL) {
    mcp__free(u);
    return MCP_ENOMEM;
  }
  size_t all = 0;
  while (u->scopes[all])
    all++;
  /* The decision is the admission point's, on every scope the call needs,
   * with no authorizer: the handler's own refusal. */
  static const mcp__policy scopes_only = {0};
  if (mcp__policy_decide(&scopes_only, who, call->tool->name,
                         (const char *const *)u->scopes, all, NULL,
                         &u->d) != 0) {
    mcp__stepup_free(u);
    return MCP_ENOMEM;
  }
  /* Nothing built so far is sent, and nothing built later. */
  mcp__call_clear_result(call);
  call->stepup = u;
  return MCP_EFORBIDDEN;
}
