/* Prompts and resources: the rules their definitions must meet and their
 * wire forms. They share the tools' entry type (registry.c), so the
 * same table, the same paging and the same call machinery serve them. */
#include <cjson/cJSON.h>
#include <stdatomic.h>
#include <string.h>

#include "registry.h"

static int text_ok(const char *s) {
  return s == NULL || mcp__utf8_valid(s, strlen(s));
}

static const char *shown(const char *s) {
  return s && mcp__utf8_valid(s, strlen(s)) ? s : "(invalid UTF-8)";
}

/* Builds the wire form of every protocol version with print. */
static int build_all(mcp__tool *t, const void *def,
                     void (*print)(const void *def, const mcp__tool *t,
                                   mcp__version v, mcp__buf *b)) {
  for (int v = 0; v < MCP__VERSION_COUNT; v++) {
    mcp__buf b = {0};
    print(def, t, (mcp__version)v, &b);
    if (mcp__wire_take(t, v, &b) != 0)
      return MCP_ENOMEM;
  }
  return 0;
}

/* The common end of building an entry: its scopes and wire forms, then
 * either *out or, on failure (rc, or a later one), the entry freed and err
 * saying why (the problems recorded, or "out of memory"). */
static int finish_entry(int rc, mcp__problems *p, const void *def,
                        const char *const *scopes, const mcp_icon *icons,
                        const char *meta,
                        void (*print)(const void *def, const mcp__tool *t,
                                      mcp__version v, mcp__buf *b),
                        mcp__tool *t, mcp__tool **out) {
  /* Checked with the rest already: with a problem, nothing to render. */
  if (rc == 0 && p->n == 0)
    rc = mcp__icons_render(icons, p, &t->icons);
  if (rc == 0 && p->n == 0)
    rc = mcp__meta_render(meta, t->kind, p, &t->meta);
  if (rc == 0 && p->n > 0)
    rc = MCP_EINVAL;
  if (rc == 0)
    rc = mcp__scopes_copy(scopes, t);
  if (rc == 0)
    rc = build_all(t, def, print);
  if (rc == 0) {
    mcp__free(t->icons); /* in the wire forms now, needed nowhere else */
    t->icons = NULL;
    *out = t;
    return 0;
  }
  if (rc == MCP_ENOMEM)
    mcp__fmt(p->err, p->errlen, "out of memory");
  mcp__tool_unref(t);
  return rc;
}

/* ---- prompts ------------------------------------------------------------- */

/* The Prompt object: title and _meta from 2025-06-18, icons from
 * 2025-11-25. */
static void print_prompt(const void *d, const mcp__tool *t, mcp__version v,
                         mcp__buf *b) {
  const mcp_prompt *def = d;
  mcp__buf_puts(b, "{\"name\":");
  mcp__json_quote(b, t->name, strlen(t->name));
  if (v >= MCP__V2025_06_18)
    mcp__put_string_member(b, "title", def->title);
  mcp__put_string_member(b, "description", def->description);
  if (t->nargs) {
    mcp__buf_puts(b, ",\"arguments\":[");
    for (size_t i = 0; i < t->nargs; i++) {
      const mcp_prompt_argument *a = &def->arguments[i];
      mcp__buf_puts(b, i ? ",{\"name\":" : "{\"name\":");
      mcp__json_quote(b, a->name, strlen(a->name));
      if (v >= MCP__V2025_06_18)
        mcp__put_string_member(b, "title", a->title);
      mcp__put_string_member(b, "description", a->description);
      mcp__buf_printf(b, ",\"required\":%s}", a->required ? "true" : "false");
    }
    mcp__buf_putc(b, ']');
  }
  mcp__put_extras(b, t->icons, t->meta, v);
  mcp__buf_putc(b, '}');
}

static void check_prompt(const mcp_prompt *def, mcp__problems *p) {
  if (!mcp__name_valid(def->name, 128))
    mcp__problem(p, "the name must be 1-128 characters of [A-Za-z0-9_.-]");
  if (def->handler == NULL)
    mcp__problem(p, "a handler is required");
  if (def->description == NULL || def->description[0] == '\0')
    mcp__problem(p, "a description is required (clients show it when "
                    "offering the prompt)");
  if (!text_ok(def->title) || !text_ok(def->description))
    mcp__problem(p, "title and description must be UTF-8");
  for (const mcp_prompt_argument *a = def->arguments; a && a->name; a++) {
    if (!mcp__name_valid(a->name, 128)) {
      mcp__problem(p,
                   "argument \"%.140s\": the name must be 1-128 characters "
                   "of [A-Za-z0-9_.-]",
                   shown(a->name));
      continue;
    }
    if (!text_ok(a->title) || !text_ok(a->description))
      mcp__problem(p, "argument \"%s\": title and description must be UTF-8",
                   a->name);
    for (const mcp_prompt_argument *o = def->arguments; o != a; o++) {
      if (strcmp(o->name, a->name) == 0) {
        mcp__problem(p, "argument \"%s\" is listed twice", a->name);
        break;
      }
    }
  }
  mcp__scopes_check(def->scopes, p);
  (void)mcp__icons_render(def->icons, p, NULL); /* checks only */
  (void)mcp__meta_render(def->meta, MCP_CALL_PROMPT, p, NULL);
}

static mcp__tool *entry_new(int kind, mcp_tool_fn handler,
                            mcp_complete_fn complete, void *user_data) {
  mcp__tool *t = mcp__calloc(1, sizeof *t);
  if (t == NULL)
    return NULL;
  atomic_init(&t->refs, 1);
  t->kind = kind;
  t->handler = handler;
  t->complete = complete;
  t->user_data = user_data;
  return t;
}

int mcp__prompt_new(const mcp_prompt *def, void *user_data, mcp__tool **out,
                    char *err, size_t errlen) {
  if (def == NULL) {
    mcp__fmt(err, errlen, "the prompt definition is NULL");
    return MCP_EINVAL;
  }
  mcp__problems p;
  mcp__problems_init(&p, err, errlen, "prompt", def->name);
  check_prompt(def, &p);
  if (p.n > 0)
    return MCP_EINVAL;
  mcp__tool *t =
      entry_new(MCP_CALL_PROMPT, def->handler, def->complete, user_data);
  size_t n = 0;
  while (def->arguments && def->arguments[n].name)
    n++;
  int rc = MCP_ENOMEM;
  if (t == NULL) {
    mcp__fmt(err, errlen, "out of memory");
    return rc;
  }
  if ((t->name = mcp__strdup(def->name)) == NULL ||
      (t->arg_names = mcp__calloc(n + 1, sizeof *t->arg_names)) == NULL ||
      (t->arg_required = mcp__calloc(n + 1, sizeof *t->arg_required)) == NULL)
    goto fail;
  for (; t->nargs < n; t->nargs++) {
    t->arg_required[t->nargs] = def->arguments[t->nargs].required;
    if ((t->arg_names[t->nargs] = mcp__strdup(def->arguments[t->nargs].name)) ==
        NULL)
      goto fail;
  }
  rc = 0;
fail:
  return finish_entry(rc, &p, def, def->scopes, def->icons, def->meta,
                      print_prompt, t, out);
}

int mcp__prompt_check_args(const mcp__tool *t, const cJSON *args, char *msg,
                           size_t msglen) {
  if (args != NULL && !cJSON_IsObject(args)) {
    mcp__fmt(msg, msglen, "arguments must be an object of strings");
    return MCP_EINVAL;
  }
  for (const cJSON *a = args ? args->child : NULL; a; a = a->next) {
    size_t i = 0;
    while (i < t->nargs && strcmp(t->arg_names[i], a->string) != 0)
      i++;
    if (i == t->nargs) {
      mcp__fmt(msg, msglen, "prompt \"%s\" has no argument \"%.64s\"", t->name,
               a->string);
      mcp__utf8_trim(msg);
      return MCP_EINVAL;
    }
    if (!cJSON_IsString(a)) {
      mcp__fmt(msg, msglen, "argument \"%s\" must be a string", a->string);
      return MCP_EINVAL;
    }
  }
  for (size_t i = 0; i < t->nargs; i++) {
    if (t->arg_required[i] && !mcp__json_member(args, t->arg_names[i])) {
      mcp__fmt(msg, msglen, "prompt \"%s\" needs argument \"%s\"", t->name,
               t->arg_names[i]);
      return MCP_EINVAL;
    }
  }
  return 0;
}

/* ---- resources ----------------------------------------------------------- */

/* The Resource or ResourceTemplate object: title and _meta from
 * 2025-06-18, icons from 2025-11-25. */
static void print_resource(const void *d, const mcp__tool *t, mcp__version v,
                           mcp__buf *b) {
  const mcp_resource *def = d;
  mcp__buf_puts(b, t->tmpl ? "{\"uriTemplate\":" : "{\"uri\":");
  mcp__json_quote(b, t->name, strlen(t->name));
  mcp__put_string_member(b, "name", def->name);
  if (v >= MCP__V2025_06_18)
    mcp__put_string_member(b, "title", def->title);
  mcp__put_string_member(b, "description", def->description);
  mcp__put_string_member(b, "mimeType", def->mime_type);
  mcp__put_extras(b, t->icons, t->meta, v);
  mcp__buf_putc(b, '}');
}

static void check_resource(const mcp_resource *def, mcp__problems *p) {
  const char *id = def->uri ? def->uri : def->uri_template;
  if ((def->uri == NULL) == (def->uri_template == NULL))
    mcp__problem(p, "give exactly one of uri and uri_template");
  else if (!mcp__utf8_valid(id, strlen(id)))
    mcp__problem(p, "the uri is not UTF-8");
  else if (def->uri && !mcp__uri_valid(def->uri, MCP__URI_REGISTERED))
    mcp__problem(p, "the uri must be an absolute URI (scheme, ':', printable "
                    "ASCII without spaces, at most 2048 bytes)");
  if (def->handler == NULL)
    mcp__problem(p, "a handler is required");
  if (def->name == NULL || def->name[0] == '\0')
    mcp__problem(p, "a name is required");
  if (def->uri && def->complete)
    mcp__problem(p, "complete applies to templates only (a fixed uri has no "
                    "variables)");
  if (!text_ok(def->name) || !text_ok(def->title) ||
      !text_ok(def->description) || !text_ok(def->mime_type))
    mcp__problem(p, "name, title, description and mime_type must be UTF-8");
  mcp__scopes_check(def->scopes, p);
  (void)mcp__icons_render(def->icons, p, NULL); /* checks only */
  (void)mcp__meta_render(def->meta, MCP_CALL_RESOURCE, p, NULL);
  mcp__ui_mime_check(def->uri ? def->uri : def->uri_template, def->mime_type,
                     p);
}

int mcp__resource_new(const mcp_resource *def, void *user_data, mcp__tool **out,
                      char *err, size_t errlen) {
  if (def == NULL) {
    mcp__fmt(err, errlen, "the resource definition is NULL");
    return MCP_EINVAL;
  }
  const char *id = def->uri ? def->uri : def->uri_template;
  /* A definition without its uri is named by its name. */
  mcp__problems p;
  mcp__problems_init(&p, err, errlen,
                     def->uri_template && !def->uri ? "resource template"
                                                    : "resource",
                     id && !(def->uri && def->uri_template) ? id : def->name);
  check_resource(def, &p);
  if (p.n > 0 && (id == NULL || (def->uri && def->uri_template) ||
                  !mcp__utf8_valid(id, strlen(id))))
    return MCP_EINVAL;
  mcp__tool *t =
      entry_new(MCP_CALL_RESOURCE, def->handler, def->complete, user_data);
  int rc = MCP_ENOMEM;
  if (t == NULL) {
    mcp__fmt(err, errlen, "out of memory");
    return rc;
  }
  if ((t->name = mcp__strdup(id)) == NULL ||
      (def->mime_type && (t->mime_type = mcp__strdup(def->mime_type)) == NULL))
    goto fail;
  rc = 0;
  if (def->uri_template) {
    char why[200];
    rc = mcp__uritemplate_compile(def->uri_template, &t->tmpl, why, sizeof why);
    if (rc == MCP_EINVAL) {
      mcp__problem(&p, "%s", why);
      rc = 0;
    }
  }
fail:
  return finish_entry(rc, &p, def, def->scopes, def->icons, def->meta,
                      print_resource, t, out);
}
