/* The registry layer (lib/registry): tools, prompts, resources and
 * templates, the rules their definitions meet, their cached wire forms and
 * the ordered tables the lists page through; URI templates and the
 * x-mcp-header marks. Not installed. */
#ifndef MCP_REGISTRY_H
#define MCP_REGISTRY_H

#include <stdatomic.h>

#include "base.h"
#include "json.h"
#include "policy.h"
#include "schema.h"
#include "uritemplate.h"

/* Is s 1 to max characters of [A-Za-z0-9_.-]? The rule of tool names
 * (MCP 2025-11-25), also used for input-request keys. */
int mcp__name_valid(const char *s, size_t max);
/* Is c one of [A-Za-z0-9_.-], the characters of those names (also of skill
 * path segments and frontmatter keys)? */
bool mcp__name_char(unsigned char c);
/* Is c an RFC 9110 token character (header names; MIME type names)? */
bool mcp__tchar(unsigned char c);

/* The problems of one definition, gathered into one message in err:
 * "<what> \"<name>\": <first>; <second>; ...", so that registration names
 * every broken rule at once (registry.c). */
typedef struct mcp__problems {
  char *err;
  size_t errlen;
  size_t len;
  unsigned n; /* problems recorded */
} mcp__problems;
/* Starts the message for the definition called name (NULL, or text that is
 * not UTF-8, is shown safely). */
void mcp__problems_init(mcp__problems *p, char *err, size_t errlen,
                        const char *what, const char *name);
/* Records one problem (a phrase without the definition's name). */
void mcp__problem(mcp__problems *p, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* ---- entries and tables (registry.c, catalog.c) --------------------------
 * One entry type serves tools, prompts and resources: each has a name (a
 * resource's is its uri or uri_template), required scopes, a handler run
 * through mcp_call, and a wire form per protocol version. */

typedef struct mcp__tool {
  _Atomic unsigned refs;
  unsigned long long seq; /* registration order; the list order and cursor */
  int kind;               /* mcp_call_kind */
  char *name;
  char **scopes; /* NULL-terminated */
  size_t nscopes;
  struct cJSON *input_schema;
  struct cJSON *output_schema; /* NULL if none */
  mcp__schema *input;          /* input_schema compiled */
  mcp__schema *output;         /* output_schema compiled; NULL if none */
  mcp_tool_fn handler;
  void *user_data;
  /* The stated hints kept for mcp_server_lint's warnings and for
   * mcp_call_hints (an executor narrowing what a handler may do), and
   * nothing else: access never reads them (promise 2,
   * docs/architecture.md). */
  bool read_only, destructive, idempotent, open_world;
  /* Per-call hints (tool resolution, resolve.c); NULL for none. Its
   * answers are held to the static hints above. */
  mcp_tool_resolve_fn resolve;
  /* MCP_TOOL_TASK_OPTIONAL, MCP_TOOL_TASK_REQUIRED or 0: whether a call
   * may run as a task (lib/engine/task.c). */
  unsigned task_support;
  struct mcp__param *params; /* x-mcp-header marks (params.c) */
  size_t nparams;
  mcp_complete_fn complete;      /* prompts and templates; may be NULL */
  char *mime_type;               /* resources; NULL if none */
  struct mcp__uritemplate *tmpl; /* resource templates only */
  char **arg_names;              /* prompts: NULL-terminated; a skill: the
                                    uris of its files */
  bool *arg_required;
  size_t nargs;
  char *icons; /* rendered (extras.c) while the wire forms are built */
  char *meta;  /* rendered _meta, for the wire forms and a resource's
                  contents (resources/read); or NULL */
  void *owned; /* a skill file's bytes and a NUL (skills.c); or NULL */
  size_t owned_len;
  /* Listed only to a caller who holds its scopes, whatever hide-forbidden
   * says: a skill's entry and its files, whose listing shows what the
   * files hold (frontmatter, digests, sizes; skills.c). */
  bool readers_only;
  /* The Tool (Prompt, Resource, ResourceTemplate) object as sent to each
   * protocol version, built once; a version whose form is the one before
   * it shares that one's text (mcp__wire_take). */
  char *wire[MCP__VERSION_COUNT];
  size_t wire_len[MCP__VERSION_COUNT];
  /* A resolvable tool's form for a request that declared the
   * tool-resolution extension: the same with its _meta marker (versions
   * with _meta only); NULL for the others. */
  char *marked[MCP__VERSION_COUNT];
  size_t marked_len[MCP__VERSION_COUNT];
} mcp__tool;

typedef struct mcp__registry {
  mcp__tool **tools; /* in registration order */
  size_t n, cap;
  size_t *index; /* by name: an open-addressing table of positions in tools
                    plus one (0: empty), so that a call finds its tool and
                    an add checks the name in constant time, whatever
                    the number of tools */
  size_t nindex; /* slots: 0, or a power of two, at least twice n */
  unsigned long long next_seq;
  size_t ntask;    /* entries with task support: whether the server offers
                      tasks, known without a walk */
  size_t nresolve; /* entries with a resolver: whether it offers tool
                      resolution */
  const char *key; /* the list's member: "tools", "prompts", ... */
  char tag;        /* first character of its cursors */
} mcp__registry;

/* Validates def and builds a tool with one reference. On MCP_EINVAL, err
 * names the tool and the rule broken. */
int mcp__tool_new(const mcp_tool *def, void *user_data, mcp__tool **out,
                  char *err, size_t errlen);
/* The same for prompts and resources (catalog.c). */
int mcp__prompt_new(const mcp_prompt *def, void *user_data, mcp__tool **out,
                    char *err, size_t errlen);
int mcp__resource_new(const mcp_resource *def, void *user_data, mcp__tool **out,
                      char *err, size_t errlen);
/* Checks a prompts/get's arguments against the prompt: an object of
 * strings, every name known, every required one present. Returns 0 or
 * MCP_EINVAL with the reason in msg. */
int mcp__prompt_check_args(const mcp__tool *t, const struct cJSON *args,
                           char *msg, size_t msglen);
/* Reads and checks a tool's x-mcp-header marks (SEP-2243) from its input
 * schema; MCP_EINVAL with the rule recorded in p, or MCP_ENOMEM. */
int mcp__params_collect(mcp__tool *t, mcp__problems *p);
void mcp__params_free(mcp__tool *t);
/* Checks the Mcp-Param-* headers of a tools/call of t against its
 * arguments, as mcp_server_check_param_headers documents (0 or MCP_EINVAL
 * with the sentence in why). */
int mcp__params_check(const mcp__tool *t, const struct cJSON *arguments,
                      mcp_header_fn header, void *user_data, char *why,
                      size_t why_size);
/* Shared checks of registry.c and catalog.c: every problem of a
 * scope list recorded in p; then the copy (0 or MCP_ENOMEM). */
void mcp__scopes_check(const char *const *scopes, mcp__problems *p);
int mcp__scopes_copy(const char *const *scopes, mcp__tool *t);
void mcp__put_string_member(mcp__buf *b, const char *key, const char *val);

/* ---- icons and _meta (extras.c) ------------------------------------------
 * Checked against mcp.h's rules (every problem recorded in p) and, when
 * they pass, rendered into *out as the JSON text sent (an array of Icon
 * objects; the _meta object re-serialized), or NULL when there is none.
 * Return 0 (problems or not) or MCP_ENOMEM; *out is the caller's
 * (mcp__free). With out NULL they only check. */
int mcp__icons_render(const mcp_icon *icons, mcp__problems *p, char **out);
int mcp__meta_render(const char *meta, int kind, mcp__problems *p, char **out);
/* kind (mcp_call_kind) says what carries the _meta: its "ui" member (MCP
 * Apps) is checked as ext-apps defines it for a tool (resourceUri a ui://
 * URI, visibility "model"/"app") or a resource (csp domain lists,
 * permissions objects, domain, prefersBorder); unknown members pass. */
#define MCP__UI_SCHEME "ui://"
#define MCP__UI_MIME "text/html;profile=mcp-app"
/* MCP Apps' deprecated flat key for a tool's view, which hosts still
 * honour: checked exactly as ui.resourceUri, and refused when the two
 * name different views. */
#define MCP__UI_FLAT_KEY "ui/resourceUri"
/* The view a tool's _meta (parsed; NULL gives NULL) names: ui.resourceUri,
 * else the flat key, whose name (as a message shows it) goes to *key; NULL
 * when neither is a string. Borrowed from meta. */
const char *mcp__ui_view_uri(const struct cJSON *meta, const char **key);
/* A resource (or template) under ui:// is an MCP App view: records a
 * problem unless its mime_type is MCP__UI_MIME. */
void mcp__ui_mime_check(const char *uri, const char *mime_type,
                        mcp__problems *p);
/* Appends ",\"icons\":..." for 2025-11-25 and later and ",\"_meta\":..."
 * for 2025-06-18 and later; NULL adds nothing. */
void mcp__put_extras(mcp__buf *b, const char *icons, const char *meta,
                     mcp__version v);

/* ---- skills (skills.c) ---------------------------------------------------
 * A skill's entries: the Skill entry (named by its SKILL.md uri, its wire
 * form the Skill object, the uris of its files in arg_names) and a
 * resource entry per file (SKILL.md first is not implied: in the order
 * given), each holding its bytes in owned and itself as user_data, read by
 * read. */
typedef struct mcp__skill_entries {
  mcp__tool *skill;
  mcp__tool **files;
  size_t nfiles;
} mcp__skill_entries;
/* Checks def (every problem named in err) and builds its entries into
 * *out. Returns 0, MCP_EINVAL or MCP_ENOMEM. */
int mcp__skill_new(const mcp_skill *def, mcp_tool_fn read,
                   mcp__skill_entries *out, char *err, size_t errlen);
/* Lets go of the references in e and empties it. */
void mcp__skill_entries_free(mcp__skill_entries *e);

bool mcp__tool_callable_by(const mcp__tool *t, const mcp_principal *p);
void mcp__tool_ref(mcp__tool *t);
void mcp__tool_unref(mcp__tool *t);

/* Takes b's text as t's wire form for version v (versions in order),
 * sharing version v-1's text when the bytes are the same. Returns 0 or
 * MCP_ENOMEM (b's failure). */
int mcp__wire_take(mcp__tool *t, int v, mcp__buf *b);

/* The registry takes the reference of t on success. */
int mcp__registry_add(mcp__registry *r, mcp__tool *t);
int mcp__registry_remove(mcp__registry *r, const char *name);
/* Returns a new reference, or NULL. */
mcp__tool *mcp__registry_find(const mcp__registry *r, const char *name);
/* Who a page is for: an entry is listed when caller holds its scopes, or
 * when hide is false and the entry is not readers_only. per_caller is set
 * when the page depends on who asks (an entry it examined is listed to
 * some callers only), so it must not be cached for anyone else. */
typedef struct mcp__page_reader {
  const mcp_principal *caller;
  bool hide;
  bool resolution;          /* the request declared tool resolution: resolvable
                               entries are listed with their marker */
  bool per_caller;          /* out */
  const unsigned char *key; /* MCP__CURSOR_KEY bytes: the cursors' cipher
                               key (cursor.c) */
} mcp__page_reader;
#define MCP__CURSOR_KEY 32
/* Characters of a cursor: the list's tag and 16 lowercase hex digits. */
#define MCP__CURSOR_LEN 17
/* The one cursor codec (cursor.c). Writes into out (MCP__CURSOR_LEN + 1
 * bytes, NUL-terminated) the cursor that continues the list tagged tag
 * after its entry numbered v: the tag and v enciphered under key, in 16
 * lowercase hex digits. */
void mcp__cursor_encode(const unsigned char *key, char tag,
                        unsigned long long v, char out[MCP__CURSOR_LEN + 1]);
/* Reads a client's cursor for the list tagged tag, strictly: exactly the tag
 * and 16 lowercase hex digits, whose number, deciphered under key, is one
 * the list could have given (1 to newest, the highest number it has
 * handed out). Returns 0 with the number in *v, or MCP_EINVAL (NULL cursor
 * too) leaving *v untouched. */
int mcp__cursor_decode(const unsigned char *key, char tag, const char *cursor,
                       unsigned long long newest, unsigned long long *v);
/* Appends the members "tools":[...],["nextCursor":"...",] of one page, each
 * followed by a comma (see mcp__result_begin). cursor is the client's (NULL
 * for the first page), opaque: it shows nothing of the entries it passed. Only
 * the entries who may see are listed. Returns 0, MCP_EINVAL for a bad cursor,
 * or MCP_ENOMEM. */
int mcp__registry_page(const mcp__registry *r, mcp__version v,
                       const char *cursor, unsigned page_size,
                       mcp__page_reader *who, mcp__buf *b);
void mcp__registry_clear(mcp__registry *r);

/* ---- tool resolution (resolve.c) -----------------------------------------
 * The io.modelcontextprotocol/tool-resolution extension's facts. */
#define MCP__RESOLUTION "io.modelcontextprotocol/tool-resolution"
/* The four hints of a call as booleans, every one stated or derived. */
typedef struct mcp__hints {
  bool read_only, destructive, idempotent, open_world;
} mcp__hints;
/* The static hints of t, with a read-only tool's derived ones. */
mcp__hints mcp__tool_hints(const mcp__tool *t);
/* h as the public struct: all four stated, no title. */
mcp_tool_annotations mcp__hints_annotations(const mcp__hints *h);
/* Runs t's resolver (t->resolve must be set) for args and principal and
 * holds its answer to t's static hints. Returns 0 with *out; MCP_EINVAL
 * when the answer is not a valid set of hints or looser than the static
 * ones (why names the rule), MCP_EIO when the resolver failed (why says
 * so). Never runs the handler. */
int mcp__tool_resolve(const mcp__tool *t, const struct cJSON *args,
                      const mcp_principal *principal, mcp__hints *out,
                      char *why, size_t why_len);

#endif
