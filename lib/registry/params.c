/* x-mcp-header (SEP-2243): a tool's input schema may mark an argument to be
 * mirrored in an HTTP header, Mcp-Param-<Name>, so that proxies can route
 * on it. The marks are checked once, at registration, and kept as a list of
 * (header, argument path, type); a transport asks the server to compare a
 * request's headers with its arguments before anything runs. */
#include <cjson/cJSON.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "registry.h"

/* Most marked arguments per tool, and their deepest nesting. */
#define MAX_PARAMS 32
#define MAX_DEPTH 8

/* JavaScript's safe integers: beyond them a client cannot say the value
 * exactly. */
#define MAX_SAFE 9007199254740991.0

struct mcp__param {
  char *header;              /* the Name of Mcp-Param-Name */
  char *path[MAX_DEPTH + 1]; /* property names from the root, NULL-ended */
  int type;                  /* cJSON_String, cJSON_Number or cJSON_True */
  bool integer;
};

bool mcp__tchar(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
         (c >= '0' && c <= '9') || (c && strchr("!#$%&'*+-.^_`|~", c));
}

static bool token_valid(const char *s) {
  if (*s == '\0' || strlen(s) > 64)
    return false;
  for (; *s; s++)
    if (!mcp__tchar((unsigned char)*s))
      return false;
  return true;
}

void mcp__params_free(mcp__tool *t) {
  for (size_t i = 0; i < t->nparams; i++) {
    mcp__free(t->params[i].header);
    for (size_t k = 0; t->params[i].path[k]; k++)
      mcp__free(t->params[i].path[k]);
  }
  mcp__free(t->params);
  t->params = NULL;
  t->nparams = 0;
}

typedef struct walk {
  mcp__tool *t;
  const char *names[MAX_DEPTH]; /* the properties chain of this node */
  size_t depth;
  mcp__problems *problems;
  int rc;
} walk;

static int fail(walk *w, const char *why) {
  mcp__problem(w->problems, "x-mcp-header: %s", why);
  return w->rc = MCP_EINVAL;
}

/* Records the mark on node (a property schema reached through properties
 * keys only). */
static int add_mark(walk *w, const cJSON *node, const cJSON *mark) {
  if (!cJSON_IsString(mark) || !token_valid(mark->valuestring))
    return fail(w, "the header name must be an RFC 9110 token of 1-64 "
                   "characters");
  const cJSON *type = mcp__json_member(node, "type");
  const char *ty = cJSON_IsString(type) ? type->valuestring : "";
  int kind = strcmp(ty, "string") == 0    ? cJSON_String
             : strcmp(ty, "integer") == 0 ? cJSON_Number
             : strcmp(ty, "boolean") == 0 ? cJSON_True
                                          : 0;
  if (kind == 0)
    return fail(w, "only a property of type string, integer or boolean can "
                   "be sent as a header");
  for (size_t i = 0; i < w->t->nparams; i++)
    if (strcasecmp(w->t->params[i].header, mark->valuestring) == 0)
      return fail(w, "two properties name the same header (names are "
                     "case-insensitive)");
  if (w->t->nparams == MAX_PARAMS)
    return fail(w, "more than 32 properties are marked");
  if (w->t->params == NULL &&
      (w->t->params = mcp__calloc(MAX_PARAMS, sizeof *w->t->params)) == NULL)
    return w->rc = MCP_ENOMEM;
  struct mcp__param *p = &w->t->params[w->t->nparams++];
  p->type = kind;
  p->integer = kind == cJSON_Number;
  if ((p->header = mcp__strdup(mark->valuestring)) == NULL)
    return w->rc = MCP_ENOMEM;
  for (size_t k = 0; k < w->depth; k++)
    if ((p->path[k] = mcp__strdup(w->names[k])) == NULL)
      return w->rc = MCP_ENOMEM;
  return 0;
}

/* Visits every object of the schema. A mark counts only on a property
 * schema reached from the root through "properties" alone (chain is then
 * true); anywhere else (items, composition, $defs) it makes the tool
 * invalid, as the spec asks. */
static int visit(walk *w, const cJSON *node, bool chain) {
  if (w->rc)
    return w->rc;
  if (cJSON_IsArray(node)) {
    for (const cJSON *e = node->child; e && !w->rc; e = e->next)
      visit(w, e, false);
    return w->rc;
  }
  if (!cJSON_IsObject(node))
    return 0;
  const cJSON *mark = mcp__json_member(node, "x-mcp-header");
  if (mark) {
    if (!chain || w->depth == 0) /* the root is no property */
      return fail(w, "allowed only on a property reached through "
                     "\"properties\" from the root of the input schema");
    if (add_mark(w, node, mark))
      return w->rc;
  }
  for (const cJSON *m = node->child; m && !w->rc; m = m->next) {
    if (strcmp(m->string, "properties") == 0 && cJSON_IsObject(m) && chain &&
        w->depth < MAX_DEPTH) {
      for (const cJSON *p = m->child; p && !w->rc; p = p->next) {
        w->names[w->depth++] = p->string;
        visit(w, p, true);
        w->depth--;
      }
    } else if (strcmp(m->string, "x-mcp-header") != 0) {
      visit(w, m, false);
    }
  }
  return w->rc;
}

int mcp__params_collect(mcp__tool *t, mcp__problems *p) {
  walk w = {.t = t, .problems = p};
  /* The root itself is the start of every chain. */
  visit(&w, t->input_schema, true);
  return w.rc;
}

/* ---- checking a request -------------------------------------------------- */

static const cJSON *argument(const cJSON *args, char *const *path) {
  const cJSON *v = args;
  for (size_t k = 0; path[k] && v; k++)
    v = cJSON_IsObject(v) ? mcp__json_member(v, path[k]) : NULL;
  return v;
}

/* Does the header's (decoded) text say the same as the argument? */
static bool same_value(const struct mcp__param *p, const cJSON *v,
                       const char *text) {
  switch (p->type) {
  case cJSON_String:
    return cJSON_IsString(v) && strcmp(v->valuestring, text) == 0;
  case cJSON_True:
    return cJSON_IsBool(v) &&
           strcmp(text, cJSON_IsTrue(v) ? "true" : "false") == 0;
  default: {
    /* Integers compare as numbers: "007" and 7 agree, "7.0" does not. */
    if (!cJSON_IsNumber(v) || *text == '\0')
      return false;
    const char *s = text + (*text == '-');
    for (const char *c = s; *c; c++)
      if (*c < '0' || *c > '9')
        return false;
    if (*s == '\0' || strlen(s) > 16)
      return false;
    errno = 0;
    double h = strtod(text, NULL);
    return errno == 0 && h == v->valuedouble && h <= MAX_SAFE && h >= -MAX_SAFE;
  }
  }
}

int mcp__params_check(const mcp__tool *t, const cJSON *arguments,
                      mcp_header_fn header, void *user_data, char *why,
                      size_t why_size) {
  int rc = 0;
  for (size_t i = 0; i < t->nparams && rc == 0; i++) {
    const struct mcp__param *p = &t->params[i];
    const cJSON *v = argument(arguments, p->path);
    const char *text = header(p->header, user_data);
    bool given = v != NULL && !cJSON_IsNull(v);
    if (!given && text == NULL)
      continue;
    rc = MCP_EINVAL;
    if (!given)
      mcp__fmt(why, why_size,
               "Header mismatch: Mcp-Param-%s is sent but its argument is "
               "absent",
               p->header);
    else if (text == NULL)
      mcp__fmt(why, why_size,
               "Header mismatch: Mcp-Param-%s is required when the argument "
               "it mirrors is present",
               p->header);
    else if (!same_value(p, v, text))
      mcp__fmt(why, why_size,
               "Header mismatch: Mcp-Param-%s must equal the argument it "
               "mirrors",
               p->header);
    else
      rc = 0;
  }
  return rc;
}
