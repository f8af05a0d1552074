/* What a definition may carry besides its own members: icons (MCP
 * 2025-11-25) and _meta (2025-06-18), on tools, prompts, resources,
 * templates and, for icons, the server itself. Each is checked at
 * registration against the rules mcp.h states and rendered once as the
 * JSON text the versions that define it are sent, so that nothing of the
 * caller's is kept and the wire forms are built from copies. */
#include <cjson/cJSON.h>
#include <string.h>

#include "registry.h"

/* Limits: what a definition's icons and _meta may take at most. */
#define MAX_ICONS 16
#define MAX_ICON_SRC 65536
#define MAX_SIZES 16
#define MAX_META 65536

static bool is_alpha(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static bool is_alnum(char c) { return is_alpha(c) || (c >= '0' && c <= '9'); }

/* Does [s, s+n) read "image/" and a non-empty subtype (RFC 9110 token
 * characters, as media types are)? */
static bool image_type(const char *s, size_t n) {
  if (n <= 6 || strncmp(s, "image/", 6) != 0)
    return false;
  for (size_t i = 6; i < n; i++) {
    if (!mcp__tchar((unsigned char)s[i]))
      return false;
  }
  return true;
}

/* A positive decimal without a leading zero, [s, s+n). */
static bool pixels(const char *s, size_t n) {
  if (n == 0 || n > 5 || s[0] == '0')
    return false;
  for (size_t i = 0; i < n; i++) {
    if (s[i] < '0' || s[i] > '9')
      return false;
  }
  return true;
}

/* "WxH" or "any" (the sizes attribute of HTML's link element). */
static bool size_valid(const char *s) {
  if (strcmp(s, "any") == 0)
    return true;
  const char *x = strchr(s, 'x');
  return x && pixels(s, (size_t)(x - s)) && pixels(x + 1, strlen(x + 1));
}

/* Why src is not an icon libmcp publishes (NULL when it is). A data: URI's
 * media type goes to *type, *type_len. */
static const char *bad_src(const char *src, const char **type,
                           size_t *type_len) {
  size_t n = strlen(src);
  *type = NULL;
  if (n > MAX_ICON_SRC)
    return "src is longer than 65536 bytes";
  if (strncmp(src, "https://", 8) == 0) {
    /* The syntax of a registered URI: printable ASCII, no spaces. */
    if (n == 8 || !mcp__uri_valid(src, MCP__URI_REGISTERED) || src[8] == '/')
      return "src is not a valid https: URL (printable ASCII without "
             "spaces, a host, at most 2048 bytes)";
    return NULL;
  }
  if (strncmp(src, "data:", 5) == 0) {
    const char *comma = strchr(src + 5, ',');
    const char *b64 = comma ? strstr(src + 5, ";base64,") : NULL;
    if (b64 == NULL || b64 + 7 != comma)
      return "a data: src must be \"data:image/TYPE;base64,DATA\"";
    if (!image_type(src + 5, (size_t)(b64 - src - 5)))
      return "a data: src must hold an image/ type";
    const char *data = comma + 1;
    if (*data == '\0' ||
        !mcp__base64_decode(data, strlen(data), NULL, 0, NULL, 0))
      return "a data: src's data is not canonical base64";
    *type = src + 5;
    *type_len = (size_t)(b64 - src - 5);
    return NULL;
  }
  return "src must be an https: URL or a data: URI (other schemes, http: "
         "and file: among them, are refused: a client would fetch them in "
         "the clear, or from its own disk)";
}

/* Checks one icon, recording what is wrong with it in p. */
static void check_icon(const mcp_icon *ic, size_t i, mcp__problems *p) {
  const char *type = NULL;
  size_t type_len = 0;
  const char *why = mcp__utf8_valid(ic->src, strlen(ic->src))
                        ? bad_src(ic->src, &type, &type_len)
                        : "src is not UTF-8";
  if (why)
    mcp__problem(p, "icon %zu: %s", i, why);
  if (ic->mime_type) {
    if (!image_type(ic->mime_type, strlen(ic->mime_type)))
      mcp__problem(p,
                   "icon %zu: mime_type must be \"image/\" and a subtype "
                   "(\"image/png\")",
                   i);
    else if (type && (strlen(ic->mime_type) != type_len ||
                      strncmp(type, ic->mime_type, type_len) != 0))
      mcp__problem(p, "icon %zu: mime_type is not the data: URI's own type", i);
  }
  size_t n = 0;
  for (const char *const *s = ic->sizes; s && *s; s++, n++) {
    if (!size_valid(*s)) {
      mcp__problem(p,
                   "icon %zu: size \"%.40s\" is neither \"WxH\" in pixels "
                   "(\"48x48\") nor \"any\"",
                   i, mcp__utf8_valid(*s, strlen(*s)) ? *s : "?");
      break;
    }
  }
  if (n > MAX_SIZES)
    mcp__problem(p, "icon %zu: more than %d sizes", i, MAX_SIZES);
  if (ic->theme && strcmp(ic->theme, "light") != 0 &&
      strcmp(ic->theme, "dark") != 0)
    mcp__problem(p, "icon %zu: theme must be \"light\" or \"dark\"", i);
}

/* Appends one icon's JSON object. */
static void print_icon(mcp__buf *b, const mcp_icon *ic) {
  mcp__buf_puts(b, "{\"src\":");
  mcp__json_quote(b, ic->src, strlen(ic->src));
  mcp__put_string_member(b, "mimeType", ic->mime_type);
  if (ic->sizes && ic->sizes[0]) {
    mcp__buf_puts(b, ",\"sizes\":[");
    for (const char *const *s = ic->sizes; *s; s++) {
      if (s != ic->sizes)
        mcp__buf_putc(b, ',');
      mcp__json_quote(b, *s, strlen(*s));
    }
    mcp__buf_putc(b, ']');
  }
  mcp__put_string_member(b, "theme", ic->theme);
  mcp__buf_putc(b, '}');
}

int mcp__icons_render(const mcp_icon *icons, mcp__problems *p, char **out) {
  if (out)
    *out = NULL;
  size_t n = 0;
  while (icons && icons[n].src && n <= MAX_ICONS)
    n++;
  if (n > MAX_ICONS) {
    mcp__problem(p, "more than %d icons", MAX_ICONS);
    return 0;
  }
  unsigned before = p->n;
  for (size_t i = 0; i < n; i++)
    check_icon(&icons[i], i, p);
  if (n == 0 || p->n > before || out == NULL)
    return 0;
  mcp__buf b = {0};
  mcp__buf_putc(&b, '[');
  for (size_t i = 0; i < n; i++) {
    if (i)
      mcp__buf_putc(&b, ',');
    print_icon(&b, &icons[i]);
  }
  mcp__buf_putc(&b, ']');
  return (*out = mcp__buf_take(&b, NULL)) ? 0 : MCP_ENOMEM;
}

/* A prefix label: a letter first, a letter or digit last, letters, digits
 * and '-' between. */
static bool label_valid(const char *s, size_t n) {
  if (n == 0 || !is_alpha(s[0]) || !is_alnum(s[n - 1]))
    return false;
  for (size_t i = 1; i + 1 < n; i++) {
    if (!is_alnum(s[i]) && s[i] != '-')
      return false;
  }
  return true;
}

/* Why key is not a _meta key a definition may carry (NULL when it is). */
static const char *bad_key(const char *key) {
  const char *slash = strrchr(key, '/');
  const char *name = slash ? slash + 1 : key;
  size_t n = strlen(name);
  if (n > 0 && (!is_alnum(name[0]) || !is_alnum(name[n - 1])))
    return "its name must begin and end with a letter or digit";
  for (size_t i = 0; i < n; i++) {
    if (!is_alnum(name[i]) && !strchr("-_.", name[i]))
      return "its name may hold only letters, digits, '-', '_' and '.'";
  }
  if (slash == NULL)
    return n ? NULL : "it is empty";
  /* The prefix: labels separated by dots, before the slash. */
  unsigned label = 0;
  bool reserved = false;
  for (const char *l = key; l < slash; label++) {
    const char *dot = memchr(l, '.', (size_t)(slash - l));
    size_t len = (size_t)((dot ? dot : slash) - l);
    if (!label_valid(l, len))
      return "its prefix must be dot-separated labels (a letter first, a "
             "letter or digit last, '-' between) and a '/'";
    if (label == 1 &&
        ((len == 20 && strncmp(l, "modelcontextprotocol", 20) == 0) ||
         (len == 3 && strncmp(l, "mcp", 3) == 0)))
      reserved = true;
    l = dot ? dot + 1 : slash;
    if (dot && l == slash)
      return "its prefix must not end with a dot";
  }
  return reserved ? "its prefix is reserved for the protocol (libmcp writes "
                    "those keys itself)"
                  : NULL;
}

/* ---- MCP Apps (io.modelcontextprotocol/ui): the "ui" member of _meta --- */

static bool strings_only(const cJSON *a) {
  if (!cJSON_IsArray(a))
    return false;
  for (const cJSON *e = a->child; e; e = e->next)
    if (!cJSON_IsString(e) || e->valuestring[0] == '\0')
      return false;
  return true;
}

#define UI_SCHEME_LEN (sizeof MCP__UI_SCHEME - 1)

/* Is uri a tool's view: a string, ui:// and something after it? */
static bool view_uri_ok(const cJSON *uri) {
  return cJSON_IsString(uri) &&
         strncmp(uri->valuestring, MCP__UI_SCHEME, UI_SCHEME_LEN) == 0 &&
         uri->valuestring[UI_SCHEME_LEN] != '\0';
}

/* A tool's view under MCP Apps' deprecated flat key, which hosts still
 * honour: checked exactly as ui.resourceUri (ui, an object or NULL), and
 * when both are given they must name the same view, since a host reads
 * one or the other. */
static void ui_flat_check(const cJSON *root, const cJSON *ui,
                          mcp__problems *p) {
  const cJSON *flat = mcp__json_member(root, MCP__UI_FLAT_KEY);
  if (flat == NULL)
    return;
  if (!view_uri_ok(flat)) {
    mcp__problem(p, "meta \"" MCP__UI_FLAT_KEY "\" (MCP Apps' deprecated "
                    "form of ui.resourceUri) must be a ui:// URI naming the "
                    "tool's view (a resource registered under it)");
    return;
  }
  const cJSON *uri = mcp__json_member(ui, "resourceUri");
  if (view_uri_ok(uri) && strcmp(uri->valuestring, flat->valuestring) != 0) {
    char a[104], b[104];
    mcp__fmt(a, sizeof a, "%.100s", uri->valuestring);
    mcp__fmt(b, sizeof b, "%.100s", flat->valuestring);
    mcp__utf8_trim(a);
    mcp__utf8_trim(b);
    mcp__problem(p,
                 "meta ui.resourceUri (\"%s\") and \"" MCP__UI_FLAT_KEY
                 "\" (\"%s\") name different views: a host shows the one "
                 "it reads; give the same URI in both, or only ui.resourceUri",
                 a, b);
  }
}

/* A tool's ui: the view it opens (resourceUri, a ui:// URI) and who may
 * call it (visibility: "model" and/or "app", each once). */
static void ui_tool_check(const cJSON *ui, mcp__problems *p) {
  const cJSON *uri = mcp__json_member(ui, "resourceUri");
  if (uri && !view_uri_ok(uri))
    mcp__problem(p, "meta ui.resourceUri must be a ui:// URI naming the "
                    "tool's view (a resource registered under it)");
  const cJSON *vis = mcp__json_member(ui, "visibility");
  if (vis == NULL)
    return;
  unsigned seen = 0;
  bool ok = cJSON_IsArray(vis) && vis->child != NULL;
  for (const cJSON *e = ok ? vis->child : NULL; e && ok; e = e->next) {
    unsigned bit = !cJSON_IsString(e)                     ? 0
                   : strcmp(e->valuestring, "model") == 0 ? 1
                   : strcmp(e->valuestring, "app") == 0   ? 2
                                                          : 0;
    ok = bit != 0 && (seen & bit) == 0;
    seen |= bit;
  }
  if (!ok)
    mcp__problem(p, "meta ui.visibility must be a non-empty array of "
                    "\"model\" and \"app\", each at most once");
}

/* A resource's ui: the view's sandbox (csp domain lists, permissions),
 * its origin (domain) and border preference. */
static void ui_resource_check(const cJSON *ui, mcp__problems *p) {
  static const char *const lists[] = {"connectDomains", "resourceDomains",
                                      "frameDomains", "baseUriDomains"};
  static const char *const perms[] = {"camera", "microphone", "geolocation",
                                      "clipboardWrite"};
  const cJSON *csp = mcp__json_member(ui, "csp");
  if (csp && !cJSON_IsObject(csp))
    mcp__problem(p, "meta ui.csp must be an object");
  for (size_t i = 0; csp && cJSON_IsObject(csp) && i < 4; i++) {
    const cJSON *l = mcp__json_member(csp, lists[i]);
    if (l && !strings_only(l))
      mcp__problem(p, "meta ui.csp.%s must be an array of origins (strings)",
                   lists[i]);
  }
  const cJSON *pm = mcp__json_member(ui, "permissions");
  if (pm && !cJSON_IsObject(pm))
    mcp__problem(p, "meta ui.permissions must be an object");
  for (size_t i = 0; pm && cJSON_IsObject(pm) && i < 4; i++) {
    const cJSON *one = mcp__json_member(pm, perms[i]);
    if (one && !cJSON_IsObject(one))
      mcp__problem(p,
                   "meta ui.permissions.%s must be an object ({} asks "
                   "for it)",
                   perms[i]);
  }
  const cJSON *domain = mcp__json_member(ui, "domain");
  if (domain && (!cJSON_IsString(domain) || domain->valuestring[0] == '\0'))
    mcp__problem(p, "meta ui.domain must be a non-empty string");
  const cJSON *border = mcp__json_member(ui, "prefersBorder");
  if (border && !cJSON_IsBool(border))
    mcp__problem(p, "meta ui.prefersBorder must be true or false");
}

static void ui_check(const cJSON *root, int kind, mcp__problems *p) {
  const cJSON *ui = mcp__json_member(root, "ui");
  if (kind == MCP_CALL_TOOL)
    ui_flat_check(root, cJSON_IsObject(ui) ? ui : NULL, p);
  if (ui == NULL || kind == MCP_CALL_PROMPT)
    return;
  if (!cJSON_IsObject(ui))
    mcp__problem(p, "meta ui (MCP Apps) must be an object");
  else if (kind == MCP_CALL_TOOL)
    ui_tool_check(ui, p);
  else
    ui_resource_check(ui, p);
}

const char *mcp__ui_view_uri(const cJSON *meta, const char **key) {
  const cJSON *uri =
      mcp__json_member(mcp__json_member(meta, "ui"), "resourceUri");
  *key = "ui.resourceUri";
  if (!cJSON_IsString(uri)) {
    uri = mcp__json_member(meta, MCP__UI_FLAT_KEY);
    *key = "\"" MCP__UI_FLAT_KEY "\"";
  }
  return cJSON_IsString(uri) ? uri->valuestring : NULL;
}

void mcp__ui_mime_check(const char *uri, const char *mime_type,
                        mcp__problems *p) {
  if (uri != NULL && strncmp(uri, MCP__UI_SCHEME, UI_SCHEME_LEN) == 0 &&
      (mime_type == NULL || strcmp(mime_type, MCP__UI_MIME) != 0))
    mcp__problem(p, "a ui:// resource is an MCP App view: its mime_type "
                    "must be \"" MCP__UI_MIME "\"");
}

int mcp__meta_render(const char *meta, int kind, mcp__problems *p, char **out) {
  if (out)
    *out = NULL;
  if (meta == NULL)
    return 0;
  size_t len = strlen(meta);
  if (len > MAX_META) {
    mcp__problem(p, "meta is longer than %d bytes", MAX_META);
    return 0;
  }
  mcp__json_doc doc = {0};
  char why[320];
  int rc = mcp__json_parse(meta, len, NULL, &doc, why, sizeof why);
  if (rc == MCP_ENOMEM)
    return rc;
  if (rc != 0) {
    mcp__problem(p, "meta is not valid JSON: %s", why);
    return 0;
  }
  unsigned before = p->n;
  if (!cJSON_IsObject(doc.root)) {
    mcp__problem(p, "meta must be a JSON object");
  } else {
    for (const cJSON *m = doc.root->child; m; m = m->next) {
      const char *bad = bad_key(m->string);
      if (bad) {
        char shown[84]; /* the key, cut at a character's end */
        mcp__fmt(shown, sizeof shown, "%.80s", m->string);
        mcp__utf8_trim(shown);
        mcp__problem(p, "meta key \"%s\": %s", shown, bad);
        break;
      }
    }
    ui_check(doc.root, kind, p);
  }
  if (p->n == before && out) {
    mcp__buf b = {0};
    mcp__json_write(&b, doc.root);
    if ((*out = mcp__buf_take(&b, NULL)) == NULL)
      rc = MCP_ENOMEM;
  }
  mcp__json_doc_free(&doc);
  return rc;
}

void mcp__put_extras(mcp__buf *b, const char *icons, const char *meta,
                     mcp__version v) {
  if (icons && v >= MCP__V2025_11_25) {
    mcp__buf_puts(b, ",\"icons\":");
    mcp__buf_puts(b, icons);
  }
  if (meta && v >= MCP__V2025_06_18) {
    mcp__buf_puts(b, ",\"_meta\":");
    mcp__buf_puts(b, meta);
  }
}
