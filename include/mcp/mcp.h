/* libmcp: Model Context Protocol servers in C, with honest tool annotations.
 *
 * This header is the reference. Every declaration says what it does, what it
 * returns, who owns what, and from which threads it may be called.
 *
 * The three promises (the README's "The three promises" says more):
 *  1. A tool cannot be registered without stating its hints; contradictory or
 *     meaningless hints are refused with a message naming the tool and rule.
 *  2. Access control never reads a hint: each tool's scopes, checked against
 *     the caller's principal, and an optional authorizer hook decide.
 *  3. The protocol engine does no I/O: mcp_session turns one whole JSON-RPC
 *     message into replies handed to a callback. The stdio transport below is
 *     built on that same public API, so an embedder can do what it does.
 *
 * This header reads top to bottom for someone writing a server: errors, the
 * server, tools, the call context and results, input, prompts and
 * resources, policy and audit, tuning, memory, stdio. The session, message
 * and sink API for transports and embedders is in mcp/engine.h, and the
 * executor API (where handlers run) in mcp/executor.h; this header
 * includes both.
 *
 * Conventions:
 *  - Functions that can fail return int: 0 on success, a negative MCP_E*
 *    code on failure (mcp_strerror names it). Objects keep a last-error
 *    message for the details.
 *  - _new(&out) leaves *out untouched on failure; _free(NULL) does nothing.
 *  - The library copies every string and struct it is given, except
 *    user_data pointers, which it stores and never dereferences.
 *  - Memory the library hands out to be freed is freed with mcp_free().
 *  - Threads: an mcp_server may be shared by any number of threads and
 *    sessions; tools may be added and removed while serving. One mcp_session
 *    is driven by one thread at a time, except mcp_call_finish and the
 *    mcp_result_* / mcp_call_progress calls on a deferred call, which may come
 *    from any thread.
 */
#ifndef MCP_MCP_H
#define MCP_MCP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mcp/export.h"
#include "mcp/version.h"

/** Marks a declaration of this library as deprecated, with msg naming what
 * replaces it: with gcc and clang a program that uses it still builds and
 * runs, and gets a -Wdeprecated-declarations warning quoting msg (as curl's
 * CURL_DEPRECATED does); with other compilers it expands to nothing. Every
 * declaration under "Old names" (here and in mcp/engine.h) carries it. A
 * program that must keep an old name for a while silences the warning
 * where it calls it, between
 * `#pragma GCC diagnostic push` and `#pragma GCC diagnostic pop`, with
 * `#pragma GCC diagnostic ignored "-Wdeprecated-declarations"`. */
#if defined(__GNUC__) || defined(__clang__)
#define MCP_DEPRECATED(msg) __attribute__((__deprecated__(msg)))
#else
#define MCP_DEPRECATED(msg)
#endif

#ifdef __cplusplus
extern "C" {
#endif

struct cJSON;

/* ---------------------------------------------------------------------------
 * Errors
 * ------------------------------------------------------------------------ */

/** Every error code with its text, defined once so mcp_strerror cannot drift.
 * X(name, value, text). */
#define MCP_ERROR_LIST(X)                                                      \
  X(MCP_OK, 0, "success")                                                      \
  X(MCP_EINVAL, -1, "invalid argument")                                        \
  X(MCP_ENOMEM, -2, "out of memory")                                           \
  X(MCP_EEXIST, -3, "already exists")                                          \
  X(MCP_ENOENT, -4, "not found")                                               \
  X(MCP_EPARSE, -5, "malformed JSON")                                          \
  X(MCP_ELIMIT, -6, "limit exceeded")                                          \
  X(MCP_ESTATE, -7, "not allowed in the current state")                        \
  X(MCP_EIO, -8, "input/output error")                                         \
  X(MCP_ETYPE, -9, "wrong JSON type")                                          \
  X(MCP_ERANGE, -10, "value out of range")                                     \
  X(MCP_ECANCELED, -11, "cancelled by the client")                             \
  X(MCP_ECLOSED, -12, "session closed")                                        \
  X(MCP_EINTERNAL, -13, "internal error")                                      \
  X(MCP_ECAPABILITY, -14,                                                      \
    "the client did not declare a capability this needs")                      \
  X(MCP_ENOTSUP, -15, "not supported by this system")                          \
  X(MCP_EFORBIDDEN, -16, "the caller lacks a scope this needs")

/** Error codes returned by libmcp functions (the names, values and texts
 * are those of MCP_ERROR_LIST). */
typedef enum mcp_error {
/** @cond */
#define MCP_ERROR_ENUM_(name, value, text) name = value,
  MCP_ERROR_LIST(MCP_ERROR_ENUM_)
#undef MCP_ERROR_ENUM_
  /** @endcond */
} mcp_error;

/** A handler's return value meaning "I will finish this call later with
 * mcp_call_finish()". Positive, so it never collides with an error code. */
#define MCP_DEFERRED 1

/** A handler's return value meaning "I asked the client for input with
 * mcp_call_request_input(); call me again with the answers". */
#define MCP_INPUT_REQUIRED 2

/** Returns a static, never NULL, English text for an MCP_E* code (or for
 * MCP_DEFERRED, MCP_INPUT_REQUIRED and MCP_EXECUTE_HERE); "unknown error"
 * for anything else.
 * Any thread. */
MCP_API const char *mcp_strerror(int rc);

/** JSON-RPC error code sent on stdio (and by any transport without its own
 * status codes) when the caller lacks a scope a tool needs, or the
 * authorizer hook denies the call. Chosen outside -32768..-32000, the range
 * JSON-RPC and MCP reserve, as the spec's code-range policy asks of
 * application codes. error.data is {"requiredScopes":[the missing scopes],
 * "scopes":[every scope the tool needs]} (requiredScopes empty when only the
 * authorizer denied) and, when the authorizer denied, "reason". */
#define MCP_RPC_FORBIDDEN (-31403)

/* ---------------------------------------------------------------------------
 * The server
 * ------------------------------------------------------------------------ */

/** A server: the registered tools, prompts and resources and the policy
 * that guards them, served to any number of sessions and transports. Created
 * with mcp_server_new and freed with mcp_server_free. Any number of threads
 * and sessions may share it; tools may be added and removed while serving. */
typedef struct mcp_server mcp_server;

/** One request being served (a tools/call, prompts/get or resources/read),
 * handed to its handler. The library creates it and frees it when the call
 * is finished (for a deferred call, in mcp_call_finish); the caller never
 * frees it. Used by the thread that runs the handler, except that
 * mcp_call_finish and the mcp_result_* / mcp_call_progress calls on a
 * deferred call may come from any thread. */
typedef struct mcp_call mcp_call;

/** One client connection (a stdio process, an HTTP session, a socket): the
 * I/O-free protocol engine. Created with mcp_session_new and freed with
 * mcp_session_free. Driven by one thread at a time, except where a function
 * says otherwise. */
typedef struct mcp_session mcp_session;

/** Who is calling: its subject and scopes (defined with the policy, below).
 * Filled by the transport; the library copies it. */
typedef struct mcp_principal mcp_principal;

/** Returns the library version as "MAJOR.MINOR.PATCH" (static). Any thread.
 * Compare with MCP_VERSION_STRING from mcp/version.h to detect a mismatch
 * between headers and the shared library. */
MCP_API const char *mcp_version(void);

/** Log levels, in the order of RFC 5424 as MCP uses them. */
typedef enum mcp_log_level {
  MCP_LOG_DEBUG = 0,
  MCP_LOG_INFO,
  MCP_LOG_NOTICE,
  MCP_LOG_WARNING,
  MCP_LOG_ERROR
} mcp_log_level;

/** Receives the library's log lines (one sentence, no newline). Called from
 * whatever thread hit the event; must be thread-safe. */
typedef void (*mcp_log_fn)(mcp_log_level level, const char *message,
                           void *user_data);

/** An icon a client may show for the server, a tool, a prompt, a resource
 * or a template (MCP 2025-11-25 and later; earlier versions are sent
 * none). Plain data, copied at registration; a definition's icons are an
 * array ended by an entry whose src is NULL. Registration refuses an icon
 * that breaks the rule given with a member, naming it. */
typedef struct mcp_icon {
  const char *src;          /**< required: an https: URL, or a data: URI
                                 of an image/ type in base64
                                 ("data:image/png;base64,..."); at most
                                 65536 bytes. Other schemes (http:, file:,
                                 javascript:) are refused: a client would
                                 fetch them in the clear or run them */
  const char *mime_type;    /**< optional: "image/" and a subtype
                                 ("image/png", "image/svg+xml"); for a
                                 data: URI, its own type */
  const char *const *sizes; /**< optional, NULL-terminated: each "WxH"
                                 in pixels ("48x48") or "any" (scalable) */
  const char *theme;        /**< optional: "light" (drawn for a light
                                 background) or "dark" */
  void *reserved[2]; /**< zero: room to grow (see the README, Versioning) */
} mcp_icon;

/** What the server says about itself in initialize (serverInfo, the
 * Implementation object) and in every 2026-07-28 result. */
typedef struct mcp_server_info {
  const char *name;         /**< the server's name; required */
  const char *version;      /**< the server's version; required */
  const char *title;        /**< display name; optional */
  const char *instructions; /**< how to use the server; optional */
  const mcp_icon *icons;    /**< optional, see mcp_icon (2025-11-25+) */
  const char *website_url;  /**< optional: the server's home page, an
                                 https: URL (websiteUrl, 2025-11-25+) */
  void *reserved[2]; /**< zero: room to grow (see the README, Versioning) */
} mcp_server_info;

/** Creates a server. info is copied. Returns 0 and sets *out, or
 * MCP_EINVAL (name or version missing, or text not UTF-8), MCP_ENOMEM, or
 * MCP_EIO when the kernel's CSPRNG cannot seed the requestState key; then
 * mcp_server_errmsg(NULL) names the member or the cause ("mcp_server_new:
 * info.version is required ..."). Free with mcp_server_free. Any thread. */
MCP_API int mcp_server_new(const mcp_server_info *info, mcp_server **out);

/** Lets go of a server: it and its tools are freed at once, or, while
 * sessions are still alive (a deferred call finishing late keeps its
 * session), when the last of them is freed. Call it after stopping the
 * transports; do not use srv afterwards. NULL does nothing. */
MCP_API void mcp_server_free(mcp_server *srv);

/** Returns a sentence describing the last failure of a call on srv made by
 * the calling thread (static "no error" if there was none); with srv NULL,
 * the last failure of mcp_server_new on this thread. Messages are kept per
 * thread, so threads sharing a server each read their own. The pointer
 * stays valid until the thread's next failing call. */
MCP_API const char *mcp_server_errmsg(const mcp_server *srv);

/** Sets the log callback; NULL (the default) writes warnings and errors to
 * stderr prefixed with "libmcp: ". Set it before serving. */
MCP_API void mcp_server_set_log(mcp_server *srv, mcp_log_fn fn,
                                void *user_data);

/* ---------------------------------------------------------------------------
 * Tools
 * ------------------------------------------------------------------------ */

/** A hint's state: unset, false or true.
 *
 * The stated values are the letters 'F' and 'T', so neither 0 nor 1 is a
 * stated hint: a C `false` (0) reads as unset, and a C `true` (1) as no
 * hint at all. Writing `.read_only = true` is therefore refused at
 * registration ("read_only is 1 (C true?)"), never published as a hint
 * it does not mean. Always write the names. clang's -Wassign-enum warns
 * when an integer other than these values is assigned to a member. */
typedef enum mcp_hint {
  MCP_HINT_UNSET = 0,    /**< not stated */
  MCP_HINT_FALSE = 0x46, /**< stated false ('F') */
  MCP_HINT_TRUE = 0x54   /**< stated true ('T') */
} mcp_hint;

/** The hints a client may use to decide what to ask its user about. They
 * are claims, not guarantees: clients must not trust them and libmcp never
 * reads them to decide access. Registration refuses hints that break the
 * rule given with each member. tools/list sends all four explicitly: for a
 * read-only tool, destructiveHint false and idempotentHint true, which
 * follow from it (a directory scan requires every hint on every tool). */
typedef struct mcp_tool_annotations {
  const char *title;    /**< optional; falls back to the tool's title */
  mcp_hint read_only;   /**< readOnlyHint; always stated; never TRUE together
                             with destructive TRUE */
  mcp_hint destructive; /**< destructiveHint; stated when read_only is FALSE,
                             and left UNSET when read_only is TRUE (it is
                             meaningless there) */
  mcp_hint idempotent;  /**< idempotentHint; stated when read_only is FALSE,
                             and left UNSET when read_only is TRUE (it is
                             meaningless there) */
  mcp_hint open_world;  /**< openWorldHint; always stated */
  void *reserved[2];    /**< zero: room to grow (see the README, Versioning) */
} mcp_tool_annotations;

/** A tool handler. It reads its arguments and principal from call, builds
 * the result with the mcp_result_* functions and returns 0 (the result is
 * sent), MCP_DEFERRED (it will call mcp_call_finish later, from any thread),
 * or a negative code (the client gets a JSON-RPC internal error; the detail
 * goes to the log, never to the client). Runs on the thread that drives the
 * session, or where the server's executor runs it (mcp_server_set_executor).
 *
 * A handler runs inside the server's process, on a server thread: if it
 * crashes (dereferences NULL, aborts, overflows its stack), the whole
 * server dies with it, with every session and every call in flight. libmcp
 * cannot catch that, and does not try. Its own code never aborts on
 * anything a client sends (the fuzz targets check that); a handler's code
 * must hold to the same rule. For code that may crash or that you do not
 * trust (a parser of uploaded files, a third-party plugin), run the work
 * in a child process: start it from the handler (or from a thread after
 * returning MCP_DEFERRED), pass the arguments on its standard input, build
 * the result from its output, and answer with mcp_result_error when it
 * dies or times out. The child can then also get its own resource limits
 * and sandbox. */
typedef int (*mcp_tool_fn)(mcp_call *call, void *user_data);

/** Resolves the hints of one call of a tool (the
 * io.modelcontextprotocol/tool-resolution extension): a tool that reads,
 * appends or deletes by its arguments states its worst case at
 * registration, and its resolver says what this call does, so that a
 * client asks only about the calls that need it, and so that the guard
 * (mcp/guard.h) holds the call to the hints resolved for it.
 *
 * arguments is the call's arguments object, already valid against the
 * tool's input schema; principal is the caller's. hints arrives filled
 * with the tool's static hints (read_only and open_world stated; for a
 * tool that is not read-only destructive and idempotent stated too) and
 * the resolver narrows them: it sets read_only (and then may leave
 * destructive and idempotent UNSET, which a read-only call derives as
 * false and true), destructive, idempotent and open_world to what this
 * call does. title is ignored. The engine, not the resolver, keeps the
 * bound: an answer looser than the static hints (a read-only tool
 * resolved writing, a closed-world one open, a non-destructive one
 * destructive, an idempotent one not idempotent) or not a valid set of
 * hints is a server error, logged with the tool and the rule and never
 * sent (and a call then runs under its static hints).
 *
 * Must not run the tool or have any effect a client could observe (no
 * write, no message, no lock held past it); reads needed to classify the
 * call are fine. Returns 0, or a negative code when it cannot tell (the
 * client gets a JSON-RPC internal error for tools/resolve; a call runs
 * under its static hints). Runs on the thread serving the request, for
 * tools/resolve and before each tools/call, possibly on several threads
 * at once: it must be thread-safe. */
typedef int (*mcp_tool_resolve_fn)(const struct cJSON *arguments,
                                   const mcp_principal *principal,
                                   mcp_tool_annotations *hints,
                                   void *user_data);

/** A tool definition: plain data, typically a static const struct with
 * designated initializers. Everything is copied at registration.
 * Schemas are JSON Schema 2020-12, compiled once here; arguments are checked
 * against input_schema before the handler runs, so a handler can trust
 * them. $ref resolves within the same schema only; nothing is ever fetched.
 * Regular expressions ("pattern", "patternProperties") use a linear-time
 * ECMA-262 subset; constructs outside it (backreferences, lookaround) refuse
 * the tool rather than mis-match.
 *
 * meta, here and on prompts and resources, is the definition's _meta
 * object as JSON text: at most 65536 bytes whose root is an object, each
 * top-level key an optional prefix (dot-separated labels, each a letter
 * first, a letter or digit last, letters, digits and '-' between, then
 * '/') and a name (a letter or digit at each end, letters, digits, '-',
 * '_' and '.' between), as MCP 2025-06-18 names them. A prefix whose
 * second label is "modelcontextprotocol" or "mcp"
 * ("io.modelcontextprotocol/") is the protocol's own and refused: libmcp
 * writes those keys itself. It is sent re-serialized compactly to
 * 2025-06-18 and later, and to no earlier version.
 *
 * A "ui" member is MCP Apps' (the io.modelcontextprotocol/ui extension)
 * and checked as ext-apps defines it: on a tool, an object whose
 * resourceUri (optional) is a ui:// URI, the view the host renders for
 * the tool, and whose visibility (optional) is a non-empty array of
 * "model" and "app", each at most once; on a resource, an object whose
 * csp members connectDomains, resourceDomains, frameDomains and
 * baseUriDomains are arrays of non-empty strings, whose permissions
 * members camera, microphone, geolocation and clipboardWrite are objects,
 * whose domain is a non-empty string and prefersBorder a boolean. Members
 * it does not name pass unchecked; a prompt's "ui" is not checked. A
 * tool's "ui/resourceUri" (MCP Apps' deprecated flat form of
 * ui.resourceUri, which hosts still honour) is checked exactly as
 * ui.resourceUri is, and a tool that gives both with different URIs is
 * refused; the flat key is a tool's only, and passes unchecked elsewhere. */
typedef struct mcp_tool {
  const char *name;                 /**< 1-128 characters of [A-Za-z0-9_.-],
                                         unique per server */
  const char *title;                /**< display name (optional) */
  const char *description;          /**< what it does, for the model
                                         (required) */
  const char *input_schema;         /**< JSON Schema text whose root is an
                                         object schema
                                         ({"type":"object",...}); NULL means
                                         a tool without arguments
                                         ({"type":"object",
                                         "additionalProperties":false}) */
  const char *output_schema;        /**< JSON Schema text of
                                         structuredContent (optional; an
                                         object schema) */
  const char *const *scopes;        /**< NULL-terminated list of scopes the
                                         caller must all hold (RFC 6750
                                         scope tokens); NULL = none */
  mcp_tool_annotations annotations; /**< the hints, see
                                         mcp_tool_annotations */
  mcp_tool_fn handler;              /**< required */
  unsigned flags;                   /**< MCP_TOOL_* options (bits); 0 = none */
  const mcp_icon *icons;            /**< optional, see mcp_icon (2025-11-25+) */
  const char *meta;                 /**< optional _meta (2025-06-18+): JSON
                                         object text, see above */
  mcp_tool_resolve_fn resolve;      /**< optional: per-call hints, see
                                         mcp_tool_resolve_fn; user_data is
                                         the tool's */
  void *reserved[1]; /**< zero: room to grow (see the README, Versioning) */
} mcp_tool;

/** mcp_tool.flags: check "format" in the schemas (date-time, date, email,
 * uri, uuid, ipv4, ipv6) instead of treating it as an annotation, as JSON
 * Schema 2020-12 does by default. */
#define MCP_TOOL_ASSERT_FORMATS 1u

/** mcp_tool.flags: the tool may run as a task (see "Tasks" below) for a
 * client that takes tasks: in 2025-11-25 tools/list says taskSupport
 * "optional", and a tools/call with a task param becomes one; in
 * 2026-07-28 (the io.modelcontextprotocol/tasks extension) a call whose
 * client declared the extension becomes a task when its handler defers
 * or calls mcp_call_start_task. Without either flag a tool never runs as
 * a task ("forbidden"). */
#define MCP_TOOL_TASK_OPTIONAL 2u

/** mcp_tool.flags: the tool runs only as a task (taskSupport "required"):
 * a call from a client that did not ask for a task (2025-11-25: no task
 * param) or does not take them (2026-07-28: the extension not declared)
 * is refused before the handler runs, with -32601 and -32021 (naming the
 * extension in data.requiredCapabilities) respectively. Registration
 * refuses it together with MCP_TOOL_TASK_OPTIONAL. */
#define MCP_TOOL_TASK_REQUIRED 4u

/** Registers tool with its user_data (stored, never dereferenced). Returns
 * 0; MCP_EINVAL when the definition breaks a rule (mcp_server_errmsg names
 * the tool and the rule); MCP_EEXIST when a tool of that name exists;
 * MCP_ENOMEM. Any thread, also while serving: initialized sessions then get
 * notifications/tools/list_changed. */
MCP_API int mcp_server_add_tool(mcp_server *srv, const mcp_tool *tool,
                                void *user_data);

/** Warns, through the server's log, about tools whose access is not
 * guarded: a tool stated destructive or open-world that needs no scope,
 * and (when supported is not NULL) a tool scope missing from supported, the
 * scopes an authorization server issues; a tool whose MCP Apps view
 * (meta ui.resourceUri, or its deprecated flat key "ui/resourceUri") no
 * registered resource or template serves; a tool with a resolver whose
 * static hints are already the tightest (read-only and closed-world:
 * nothing to resolve); and, with an executor that has a lint callback
 * (mcp_executor), its sentence (the guard has none: it says what the kernel
 * enforces once, when it is enabled). A warning for the author, never an access
 * decision. Returns how many warnings it wrote. Any thread. */
MCP_API unsigned mcp_server_lint(mcp_server *srv, const char *const *supported);

/** Removes the tool named name. Calls already running finish normally.
 * Returns 0 or MCP_ENOENT. Any thread; sends list_changed like add. */
MCP_API int mcp_server_remove_tool(mcp_server *srv, const char *name);

/* ---------------------------------------------------------------------------
 * Inside a handler: the call context
 * ------------------------------------------------------------------------ */

/** The call's arguments, a JSON object (borrowed; an empty object when the
 * client sent none). Valid until the call is finished. Read it with
 * cJSON's getters and test types with cJSON_IsString() and its kin: the
 * strict parser's nodes carry cJSON's flag bits (constant keys, texts kept
 * in the node's own block), so `node->type == cJSON_String` is not a valid
 * test, and the tree must not be modified. */
MCP_API const struct cJSON *mcp_call_arguments(const mcp_call *call);

/** The tool's name (borrowed, valid until the call is finished); for a
 * prompt, the prompt's name; for a resource, the registered uri or
 * uri_template. */
MCP_API const char *mcp_call_name(const mcp_call *call);

/** What a call serves. */
typedef enum mcp_call_kind {
  MCP_CALL_TOOL = 0, /**< tools/call */
  MCP_CALL_PROMPT,   /**< prompts/get */
  MCP_CALL_RESOURCE  /**< resources/read */
} mcp_call_kind;

/** Which request the call serves. */
MCP_API mcp_call_kind mcp_call_kind_of(const mcp_call *call);

/** For a resources/read, the URI the client asked for (borrowed, valid
 * until the call is finished); NULL for tools and prompts. */
MCP_API const char *mcp_call_uri(const mcp_call *call);

/** The caller (borrowed, valid until the call is finished; never NULL). */
MCP_API const mcp_principal *mcp_call_principal(const mcp_call *call);

/** Step-up from a handler: access that depends on the arguments (deleting
 * a note another subject created needs "notes:admin"). scopes is one or
 * more scope tokens separated by spaces (RFC 6749's scope syntax), which
 * this call needs on top of its tool's own.
 *
 * Returns 0 when the caller holds them all: go on. Otherwise returns
 * MCP_EFORBIDDEN and the call ends exactly as a refusal for want of the
 * tool's own scopes would have ended it, whatever the handler returns
 * after (return this code): the client gets MCP_RPC_FORBIDDEN with
 * data.requiredScopes naming the missing ones (and, over HTTP, 403
 * insufficient_scope with a challenge naming every scope the call needs),
 * the audit record says MCP_DECISION_DENIED_SCOPE with the missing
 * scopes, and no part of a result built before or after is sent. Ask
 * before doing anything the scopes guard. MCP_EINVAL for a NULL call, a
 * call that is not a tool's, or scopes that are empty or not scope tokens
 * (then nothing changes); MCP_ENOMEM. Same thread rule as the result
 * builders. */
MCP_API int mcp_call_require_scopes(mcp_call *call, const char *scopes);

/** The capabilities the call's client declared: its ClientCapabilities
 * object (initialize's in the 2025 versions, the request's own _meta in
 * 2026-07-28), borrowed and valid until the call is finished; NULL when it
 * declared none. For a handler that adapts to its client, as MCP Apps asks
 * of a tool with a view (the host's extensions["io.modelcontextprotocol/ui"]
 * says which view types it renders). Access is never decided from it: the
 * client states it, unchecked. Any thread, while the call lives. */
MCP_API const struct cJSON *mcp_call_client_capabilities(const mcp_call *call);

/** Reads the argument called name, a JSON string, into *out (borrowed, valid
 * until the call is finished). Returns 0 and stores the value, MCP_ENOENT when
 * the argument is absent (or null), MCP_ETYPE when it has another JSON type.
 * Same thread rule as mcp_call_progress. */
MCP_API int mcp_call_arg_string(const mcp_call *call, const char *name,
                                const char **out);

/** Reads the argument called name, an integer, into *out. Returns 0 and stores
 * the value, MCP_ENOENT when the argument is absent (or null), MCP_ETYPE when
 * it has another JSON type (or is a number that is not an integer), MCP_ERANGE
 * when the integer does not fit. Same thread rule as mcp_call_progress. */
MCP_API int mcp_call_arg_int(const mcp_call *call, const char *name,
                             int64_t *out);

/** Reads the argument called name, a JSON number, into *out. Returns 0 and
 * stores the value, MCP_ENOENT when the argument is absent (or null), MCP_ETYPE
 * when it has another JSON type, MCP_ERANGE when it does not fit a finite
 * double. Same thread rule as mcp_call_progress. */
MCP_API int mcp_call_arg_number(const mcp_call *call, const char *name,
                                double *out);

/** Reads the argument called name, a JSON boolean, into *out. Returns 0 and
 * stores the value, MCP_ENOENT when the argument is absent (or null), MCP_ETYPE
 * when it has another JSON type. Same thread rule as mcp_call_progress. */
MCP_API int mcp_call_arg_bool(const mcp_call *call, const char *name,
                              bool *out);

/** Returns true once the client cancelled the call (notifications/cancelled),
 * its session closed, or its deadline passed (mcp_server_set_call_timeout).
 * A long handler should poll it and stop; whatever it returns afterwards is
 * discarded (after a deadline, the client gets the timeout answer instead).
 * Any thread. */
MCP_API bool mcp_call_cancelled(const mcp_call *call);

/** Reports progress when the client asked for it (a progressToken); does
 * nothing and returns 0 otherwise. progress must grow with every report;
 * total <= 0 means unknown; message may be NULL. Returns 0, MCP_EINVAL
 * (progress did not grow, or a value is not finite) or MCP_ENOMEM; a
 * notification the transport could not deliver closes the session, which
 * the handler then sees as cancellation. Call it from the thread that owns
 * the call (the handler, or the one that will finish a deferred call). */
MCP_API int mcp_call_progress(mcp_call *call, double progress, double total,
                              const char *message);

/** Logs through the server's log callback, naming the tool (prompt,
 * resource). When the client asked for log messages at or below level
 * (legacy era: logging/setLevel on the session; modern era: the request's
 * _meta logLevel), the message also goes to the client as
 * notifications/message on that request's stream; otherwise the client
 * receives nothing. Same thread rule as mcp_call_progress. */
MCP_API void mcp_call_log(mcp_call *call, mcp_log_level level,
                          const char *message);

/* Result builders. Each appends to the call's result and copies its input.
 * The first failure is latched: later builders do nothing and return it, and
 * finishing a call with a latched failure answers a JSON-RPC internal error
 * (except MCP_ELIMIT: see mcp_server_set_max_result).
 * Returns 0, MCP_EINVAL, MCP_ENOMEM, MCP_ELIMIT (the result would pass the
 * server's maximum size), or the latched code. */

/** Appends a text block. */
MCP_API int mcp_result_text(mcp_call *call, const char *text);

/** Trust labels (the io.modelcontextprotocol/trust-annotations extension):
 * what a client should know of what a result holds before it shows it to
 * a model or sends it on. Claims, like hints: a label's absence is "no
 * claim", never "false". */
/** The result (or block) holds data its reader must not leak. */
#define MCP_TRUST_SENSITIVE 1u
/** It comes from outside the server (the web, a user's upload, another
 * system): treat it as untrusted input, instructions in it included. */
#define MCP_TRUST_UNTRUSTED 2u
/** Result only: the handler vouches for it, which lifts the untrusted
 * label libmcp gives every result of an open-world call by default. */
#define MCP_TRUST_TRUSTED 4u

/** A pointer to the record behind a label, kept out of band (a policy
 * decision, a data classification): its type, the digest of its
 * canonical form, which canonical form, and optionally the schema and a
 * reference to fetch it. Strings are copied. */
typedef struct mcp_evidence_ref {
  const char *type;             /**< required, e.g. "data-class.v1" */
  const char *digest;           /**< required: "sha256:" and 64 lowercase
                                     hex digits (or sha384:, sha512:) */
  const char *canonicalization; /**< required: "jcs/rfc8785" or
                                     "cbor/rfc8949" */
  const char *schema;           /**< optional: the record's schema URI */
  const char *ref;              /**< optional: where the record is kept */
  void *reserved[2]; /**< zero: room to grow (see the README, Versioning) */
} mcp_evidence_ref;

/** Labels the whole result of a tool call: labels (MCP_TRUST_*) and
 * evidence (NULL for none). Call it before the first content block (the
 * labels open the result); calling it again replaces them. Sent, in the
 * result's _meta, only to a client that declared the extension (on the
 * request in 2026-07-28, at initialize before); every result of an
 * open-world call (mcp_call_hints) is labelled untrusted unless labels has
 * MCP_TRUST_TRUSTED. Returns 0 (also when nothing will be sent);
 * MCP_EINVAL (an unknown label, TRUSTED with UNTRUSTED, an evidence
 * member missing or malformed, not a tool's call); MCP_ESTATE after the
 * first block; MCP_ENOMEM. Same thread rule as the other builders. */
MCP_API int mcp_result_trust(mcp_call *call, unsigned labels,
                             const mcp_evidence_ref *evidence);

/** Labels the next content block appended (one of a search's results
 * that is private, say): MCP_TRUST_SENSITIVE and MCP_TRUST_UNTRUSTED
 * only, since a block's label may strengthen the result's, never weaken
 * it. Sent in the block's _meta under the same rule as mcp_result_trust.
 * Returns as mcp_result_trust (MCP_EINVAL for MCP_TRUST_TRUSTED). */
MCP_API int mcp_result_trust_next(mcp_call *call, unsigned labels,
                                  const mcp_evidence_ref *evidence);
/** Appends an image block; data (size bytes) is base64-encoded by the
 * library; mime_type such as "image/png" is required. */
MCP_API int mcp_result_image(mcp_call *call, const void *data, size_t size,
                             const char *mime_type);
/** Appends an audio block (as mcp_result_image, e.g. "audio/wav"). */
MCP_API int mcp_result_audio(mcp_call *call, const void *data, size_t size,
                             const char *mime_type);
/** Appends a resource_link block; uri and name required, the rest may be
 * NULL. Sent as text ("name: uri") to 2025-03-26 clients, which lack it. */
MCP_API int mcp_result_resource_link(mcp_call *call, const char *uri,
                                     const char *name, const char *mime_type,
                                     const char *description);
/** Appends an embedded text resource; uri and text required. */
MCP_API int mcp_result_resource_text(mcp_call *call, const char *uri,
                                     const char *mime_type, const char *text);
/** Appends an embedded binary resource (base64 done by the library). */
MCP_API int mcp_result_resource_blob(mcp_call *call, const char *uri,
                                     const char *mime_type, const void *data,
                                     size_t size);
/** Sets structuredContent from JSON text (a JSON object; strict parsing) and
 * appends its serialized form as a text block, the mirror older clients
 * read. Clients before 2025-06-18 receive only the mirror. At most once per
 * call (MCP_ESTATE after). */
MCP_API int mcp_result_structured(mcp_call *call, const char *json);
/** As mcp_result_structured, from a cJSON object (borrowed; copied). */
MCP_API int mcp_result_structured_cjson(mcp_call *call,
                                        const struct cJSON *value);
/** Marks the result as a tool error (isError: true) and appends text, a
 * sentence the model can act on. The call still succeeds at the protocol
 * level: this is how a handler reports failure. */
MCP_API int mcp_result_error(mcp_call *call, const char *text);

/* How the builders serve prompts and resources:
 *  - prompts/get: every content builder (text, image, audio, resource_link,
 *    resource_text/blob) appends one message whose role is the current one
 *    (user until mcp_result_role changes it); mcp_result_description sets the
 *    result's description; mcp_result_error answers a JSON-RPC error with its
 *    text instead of the messages; mcp_result_structured is MCP_EINVAL.
 *  - resources/read: mcp_result_text appends {uri, mimeType, text} for the
 *    URI asked for with the resource's mime type; mcp_result_resource_text
 *    and _blob append an item for any uri (a directory listing its files,
 *    say); mcp_result_image/audio append a blob item for the asked URI;
 *    mcp_result_error answers a JSON-RPC error with its text; the others
 *    are MCP_EINVAL. */

/** Who speaks the messages a prompt handler appends next. */
typedef enum mcp_role { MCP_ROLE_USER = 0, MCP_ROLE_ASSISTANT } mcp_role;

/** Sets the role of the messages appended next (prompts only; MCP_EINVAL
 * for other calls). */
MCP_API int mcp_result_role(mcp_call *call, mcp_role role);

/** Sets the description of a prompts/get result (copied; prompts only). */
MCP_API int mcp_result_description(mcp_call *call, const char *text);

/** Finishes a call whose handler returned MCP_DEFERRED, with rc as the
 * handler's return value (0 or a negative code). Sends the reply (nothing if
 * the call was cancelled) and frees the call: call is invalid afterwards.
 * Any thread, exactly once. Returns 0, or MCP_EINVAL if the call was not
 * deferred. */
MCP_API int mcp_call_finish(mcp_call *call, int rc);

/* ---------------------------------------------------------------------------
 * Asking the client for input
 *
 * One handler serves both protocol eras. It asks for what it needs and
 * returns MCP_INPUT_REQUIRED; it is called again with the answers:
 *
 *   const cJSON *answer = mcp_call_input(call, "confirm");
 *   if (answer == NULL) {
 *     mcp_call_request_input(call, "confirm", MCP_INPUT_ELICITATION,
 *                            "{\"message\":\"Delete it?\",...}");
 *     return MCP_INPUT_REQUIRED;
 *   }
 *
 * In the modern era (2026-07-28) the call answers with an InputRequiredResult
 * and the client retries the request with the answers; the library signs the
 * requestState (HMAC-SHA-256, bound to the tool, the arguments, the caller
 * and an expiry) and refuses a tampered, expired or foreign one before the
 * handler runs. In the legacy era the library sends real elicitation/create,
 * sampling/createMessage or roots/list requests to the client and calls the
 * handler again when every answer has arrived. No thread waits meanwhile.
 * ------------------------------------------------------------------------ */

/** What a handler can ask the client for. */
typedef enum mcp_input_kind {
  MCP_INPUT_ELICITATION = 1, /**< elicitation/create: ask the user */
  MCP_INPUT_SAMPLING,        /**< sampling/createMessage: ask the model */
  MCP_INPUT_ROOTS            /**< roots/list: the client's roots */
} mcp_input_kind;

/** Asks for input under key (1-64 characters of [A-Za-z0-9_.-], unique per
 * round) with params, the JSON text of that request's params (for example
 * an ElicitRequestFormParams object; NULL for roots). Returns 0;
 * MCP_ECAPABILITY when the client did not declare the capability this needs
 * (nothing is asked: return an error, or do without; returning
 * MCP_ECAPABILITY answers -32021 in the modern era and an isError result in
 * the legacy era); MCP_EINVAL; MCP_ENOMEM. */
MCP_API int mcp_call_request_input(mcp_call *call, const char *key,
                                   mcp_input_kind kind, const char *params);

/** The client's answer to the request asked under key in an earlier round
 * (an ElicitResult, CreateMessageResult or ListRootsResult object;
 * borrowed, valid until the call is finished), or NULL when there is none. */
MCP_API const struct cJSON *mcp_call_input(const mcp_call *call,
                                           const char *key);

/** The most bytes of text mcp_call_set_state keeps for the next round. */
#define MCP_STATE_MAX 16384

/** Keeps text (at most MCP_STATE_MAX bytes) for the handler's next round
 * (copied). In the modern era it travels inside the signed requestState, so
 * it is tamper-proof but not secret: never put a credential in it. For more,
 * keep the data server-side under a handle and keep the handle here.
 * Returns 0, MCP_EINVAL (too long, or not UTF-8) or MCP_ENOMEM. */
MCP_API int mcp_call_set_state(mcp_call *call, const char *state);

/** The text the previous round kept with mcp_call_set_state, or NULL. */
MCP_API const char *mcp_call_state(const mcp_call *call);

/* ---------------------------------------------------------------------------
 * Tasks
 *
 * A call of a tool flagged MCP_TOOL_TASK_OPTIONAL or MCP_TOOL_TASK_REQUIRED
 * can outlive its request: the client gets a task id at once, polls
 * tasks/get, answers the task's input requests, reads the result and may
 * cancel it with tasks/cancel. The engine keeps the task table, in both
 * forms of the protocol (2025-11-25's experimental tasks: tasks/get,
 * tasks/result, tasks/list, tasks/cancel and notifications/tasks/status;
 * 2026-07-28's io.modelcontextprotocol/tasks extension: tasks/get,
 * tasks/update, tasks/cancel), and the handler needs no change: it builds
 * its result, asks for input (mcp_call_request_input and
 * MCP_INPUT_REQUIRED), defers and reads mcp_call_cancelled as for any call.
 *
 * When a call becomes a task: in 2025-11-25, before the handler runs, when
 * the client asked for one (a task param). In 2026-07-28, where the server
 * decides, when the handler returns MCP_DEFERRED or calls
 * mcp_call_start_task, or when the call is handed to the server's executor
 * (mcp_server_set_executor: its answer no longer comes back to the request,
 * even if the executor declines it): a handler that answers at once gives
 * its result directly, and one that asks for input before either answers
 * with an InputRequiredResult (the input the task needs before it starts).
 * Once a task, its input requests are the task's (status input_required:
 * inputRequests on tasks/get and tasks/update in 2026-07-28; requests
 * carrying the related-task _meta on the session in 2025-11-25), progress
 * and log notifications reach 2025-11-25 clients only, and the server's
 * call timeout no longer applies: the task lives until its TTL.
 *
 * A 2025-11-25 task's input requests go to the session that made it: on
 * the stream of a tasks/result waiting on that session when there is one,
 * else on the session's own channel (Streamable HTTP: the GET stream).
 * Since that stream may not be open, a tasks/result that comes on that
 * session while the task is input_required (as the specification tells
 * clients to do) gets every request still unanswered on its own response
 * stream (a transport's per-request sink; on stdio there is one channel,
 * which had them already), with the related-task _meta and the id it was
 * first sent under, and the client answers as usual; a client that reads
 * both streams may so see a request twice, under one id, and its second
 * answer is ignored.
 *
 * Every task method passes the admission of a tools/call of the task's
 * tool (its scopes, the authorizer), and a task is visible only to the
 * principal that created it (the same subject; anonymous callers share
 * one). Task ids are 128 bits from the kernel's CSPRNG. How many tasks
 * exist, how many bytes they hold, and for how long, is bounded
 * (mcp_server_set_task_limits).
 * ------------------------------------------------------------------------ */

/** Makes call a task now, from its handler (2026-07-28; in 2025-11-25 a
 * call the client asked to run as a task is one from the start): the
 * client is answered with a CreateTaskResult when the handler returns,
 * whatever it returns, and the result becomes the task's. Returns 0 (also
 * when call is a task already); MCP_ECAPABILITY when the client does not
 * take tasks (then go on as an ordinary call); MCP_EINVAL (logged) when
 * the tool declares no task support. The handler's thread, while it
 * runs. */
MCP_API int mcp_call_start_task(mcp_call *call);

/** The id of the task call runs as, or NULL when it is not (yet) a task.
 * Valid while the call lives. Any thread. */
MCP_API const char *mcp_call_task_id(const mcp_call *call);

/** Sets the statusMessage of call's task (copied; UTF-8, at most 1024
 * bytes): what tasks/get says it is doing. Returns 0, MCP_ESTATE when the
 * call is not a task or its task has ended (cancelled, say: the message
 * it ended with stays), MCP_EINVAL or MCP_ENOMEM. Any thread, while the
 * call lives. */
MCP_API int mcp_call_set_status(mcp_call *call, const char *message);

/* ---------------------------------------------------------------------------
 * Prompts, resources and completions
 *
 * Prompt and resource handlers are mcp_tool_fn handlers too: they receive an
 * mcp_call, read their arguments with mcp_call_arg_string (a prompt's
 * arguments; a template's variables), may ask for input with
 * mcp_call_request_input, may defer, and build their result with the
 * mcp_result_* functions, which then build a GetPromptResult or a
 * ReadResourceResult (see each builder). Access works as for tools: every
 * scope in scopes is required, checked before the handler runs, on every
 * transport alike.
 * ------------------------------------------------------------------------ */

/** One completion/complete request, handed to a mcp_complete_fn: read what
 * is being completed and add suggestions with the mcp_completion_*
 * functions. The library creates it and frees it when the callback returns;
 * it is valid only during the callback, on the callback's thread. */
typedef struct mcp_completion mcp_completion;

/** Suggests values for one argument of a prompt or one variable of a
 * resource template (completion/complete). Add at most 100 values with
 * mcp_completion_add; return 0, or a negative code (the client gets a
 * JSON-RPC internal error). Runs on the thread that drives the session;
 * it cannot defer. */
typedef int (*mcp_complete_fn)(mcp_completion *completion, void *user_data);

/** One argument of a prompt. */
typedef struct mcp_prompt_argument {
  const char *name;        /**< 1-128 characters of [A-Za-z0-9_.-] */
  const char *title;       /**< display name (optional) */
  const char *description; /**< what the argument is (optional) */
  bool required;           /**< prompts/get without it is refused (-32602) */
  void *reserved[2]; /**< zero: room to grow (see the README, Versioning) */
} mcp_prompt_argument;

/** A prompt definition, plain data like mcp_tool; everything is copied. */
typedef struct mcp_prompt {
  const char *name;                     /**< 1-128 characters of
                                             [A-Za-z0-9_.-], unique among
                                             prompts */
  const char *title;                    /**< display name (optional) */
  const char *description;              /**< required (clients show it when
                                             choosing a prompt) */
  const mcp_prompt_argument *arguments; /**< array ended by an entry whose
                                             name is NULL; NULL = none.
                                             Arguments are strings; unknown
                                             ones are refused. */
  const char *const *scopes;            /**< as for tools */
  mcp_tool_fn handler;                  /**< required; builds the messages
                                             (see mcp_result_role) */
  mcp_complete_fn complete;             /**< optional, suggests argument
                                             values */
  const mcp_icon *icons;                /**< optional, see mcp_icon
                                             (2025-11-25+) */
  const char *meta;                     /**< optional _meta, as for
                                             tools (mcp_tool) */
  void *reserved[2]; /**< zero: room to grow (see the README, Versioning) */
} mcp_prompt;

/** Registers prompt with its user_data (handed to handler and complete).
 * Returns 0, MCP_EINVAL (mcp_server_errmsg says why), MCP_EEXIST or
 * MCP_ENOMEM. Any thread; initialized sessions get
 * notifications/prompts/list_changed. */
MCP_API int mcp_server_add_prompt(mcp_server *srv, const mcp_prompt *prompt,
                                  void *user_data);

/** Removes the prompt named name. Returns 0 or MCP_ENOENT. Any thread. */
MCP_API int mcp_server_remove_prompt(mcp_server *srv, const char *name);

/** A resource definition: either one resource (uri) or a family of them
 * (uri_template), never both. Everything is copied.
 * A resources/read names a registered uri exactly, or else the first
 * template (in registration order) that matches it. */
typedef struct mcp_resource {
  const char *uri;           /**< one resource */
  const char *uri_template;  /**< a family of them: an RFC 6570 template such
                                  as "file:///notes/{name}"; expressions
                                  `{var}`, `{+var}`, `{#var}`, `{/var}`,
                                  `{.var}`, `{?a,b}`, `{&a}`, matched in
                                  linear time */
  const char *name;          /**< required, a short human-readable name */
  const char *title;         /**< display name (optional) */
  const char *description;   /**< what it is (optional) */
  const char *mime_type;     /**< the default type of the contents
                                  (optional; under a ui:// uri or
                                  template, an MCP App view, it must be
                                  "text/html;profile=mcp-app") */
  const char *const *scopes; /**< as for tools */
  mcp_tool_fn handler;       /**< required; reads the resource
                                  (mcp_call_uri, and mcp_call_arg_string for
                                  a template's variables), answers with
                                  mcp_result_text or
                                  mcp_result_resource_text/blob, or returns
                                  MCP_ENOENT when there is no such resource
                                  (the client gets the protocol's not-found
                                  error) */
  mcp_complete_fn complete;  /**< templates only, optional: suggests
                                  variable values */
  const mcp_icon *icons;     /**< optional, see mcp_icon (2025-11-25+) */
  const char *meta;          /**< optional _meta of the Resource or
                                  ResourceTemplate, as for tools
                                  (mcp_tool); sent in its listing and on
                                  the contents item resources/read returns
                                  for the URI read (MCP Apps puts a view's
                                  ui.csp there) */
  void *reserved[2]; /**< zero: room to grow (see the README, Versioning) */
} mcp_resource;

/** Registers a resource or a template with its user_data. Returns 0,
 * MCP_EINVAL (mcp_server_errmsg says why), MCP_EEXIST (same uri or same
 * template) or MCP_ENOMEM. Any thread; initialized sessions get
 * notifications/resources/list_changed. */
MCP_API int mcp_server_add_resource(mcp_server *srv,
                                    const mcp_resource *resource,
                                    void *user_data);

/** Removes the resource registered under uri, or the template registered as
 * uri (its template text). Returns 0 or MCP_ENOENT. Any thread. */
MCP_API int mcp_server_remove_resource(mcp_server *srv, const char *uri);

/** One file of a skill (mcp_skill), plain data; its bytes are copied at
 * registration. */
typedef struct mcp_skill_file {
  const char *path;      /**< relative to the skill's root: '/'-separated
                              segments of [A-Za-z0-9._-], none "." or ".."
                              ("SKILL.md", "references/FORMS.md") */
  const void *data;      /**< its bytes (NULL only when size is 0) */
  size_t size;           /**< how many */
  const char *mime_type; /**< optional; by default text/markdown for .md,
                              text/plain for .txt, and so on by extension,
                              else application/octet-stream (SKILL.md is
                              always text/markdown) */
  void *reserved[2];     /**< zero: room to grow (see the README, Versioning) */
} mcp_skill_file;

/** A skill (the io.modelcontextprotocol/skills extension, over the Agent
 * Skills format): a SKILL.md whose YAML frontmatter names it and says what
 * it is for, and the files it refers to. Each file is served as the
 * resource skill://PATH/FILE (read with resources/read, through the same
 * scope admission as any resource); skills/list and skills/get answer with
 * its entry: the frontmatter as JSON and every file's SHA-256 and size.
 * Since the entry and SKILL.md's resource show what the files hold, a
 * caller without the skill's scopes is never shown them: skills/list and
 * resources/list leave the skill and its files out for that caller,
 * whatever mcp_server_set_hide_forbidden says (modern-era lists then say
 * cacheScope "private").
 * The frontmatter is read by a strict subset of YAML: `key: value` lines
 * whose values are strings (plain, 'single' or "double" quoted) and maps
 * one level deep (`metadata:` with indented `key: value` lines), read the
 * same way by every common YAML 1.1 and 1.2 parser or refused with its
 * line: a plain value any of them could read as something else (a
 * boolean or null such as yes, on, y, ~, Null in any case; a number in
 * any base or with '_' or ',' between digits, a float, a sexagesimal
 * such as 1:30; a date or time; anything beginning with '-', '+', '.',
 * ':' or '?'; the key types << and =) must be quoted, and keys follow
 * the same rule; the characters YAML 1.1 reads as line breaks and 1.2 does
 * not (U+0085, U+2028, U+2029), controls, U+FEFF and a lone CR are
 * refused raw (write them as \\uXXXX escapes in double quotes); anything else
 * YAML has (lists, block scalars, flow collections, anchors, aliases, tags) is
 * refused. It needs name (1-64 of [a-z0-9-], no '-' first, last or twice
 * in a row, equal to the path's last segment) and description (1-1024
 * characters); compatibility, when given, is 1-500 characters. At most 512
 * files and 16 MiB in all, as the extension bounds a skill. */
typedef struct mcp_skill {
  const char *path;            /**< the skill's path: '/'-separated
                                    segments as for files, the last its
                                    name ("notes-workflow",
                                    "acme/billing/refunds") */
  const mcp_skill_file *files; /**< array ended by an entry whose path is
                                    NULL; one of them "SKILL.md" */
  const char *const *scopes;   /**< as for resources: every one required
                                    to read its files and to get its
                                    entry; NULL = none */
  void *reserved[4]; /**< zero: room to grow (see the README, Versioning) */
} mcp_skill;

/** Registers skill: its entry and a resource per file, all or nothing.
 * From then on initialize (2025-11-25 and later) and server/discover
 * declare the extension (capabilities.extensions
 * "io.modelcontextprotocol/skills"). Returns 0; MCP_EINVAL when the
 * definition breaks a rule above (mcp_server_errmsg names every one);
 * MCP_EEXIST when a skill of that path, or a resource under one of its
 * files' uris, is registered; MCP_ENOMEM. Any thread; initialized sessions
 * get notifications/resources/list_changed. */
MCP_API int mcp_server_add_skill(mcp_server *srv, const mcp_skill *skill);

/** Reads the skill in directory dir (its SKILL.md and every file under it)
 * and registers it as mcp_server_add_skill does, at path (NULL: dir's own
 * last segment) with scopes (NULL = none). It publishes only what the
 * directory holds: regular files with a single link. A symbolic link
 * under dir is never followed (dir itself may be one), and one in the
 * tree refuses the skill, as does a file with more than one hard link (a
 * link to a file elsewhere, which the directory does not hold: copy it
 * in), a FIFO, a device or a socket; names starting with '.' are skipped.
 * Each file is opened without blocking and without following a link
 * (O_NONBLOCK | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC), and what was opened
 * must be the file checked (fstat: the same device and inode, regular,
 * one link, the same size), so a file swapped for a link or a FIFO
 * between the check and the open is refused and never blocks the call.
 * The files are read at once and copied, so later changes to them are not
 * served (register the skill again to publish them). Returns what
 * mcp_server_add_skill returns, or MCP_EIO when dir or a file in it cannot
 * be read (or changed size while it was read), MCP_EINVAL for a tree
 * beyond the limits (512 files, 16 MiB, 16 levels) or holding a link or a
 * file that is not regular, or a file replaced while it was read;
 * mcp_server_errmsg names the file. Reads on the calling thread; any
 * thread. */
MCP_API int mcp_server_add_skill_dir(mcp_server *srv, const char *dir,
                                     const char *path,
                                     const char *const *scopes);

/** Removes the skill at path and the resources of its files. Returns 0 or
 * MCP_ENOENT. Any thread. */
MCP_API int mcp_server_remove_skill(mcp_server *srv, const char *path);

/** Tells the clients subscribed to uri that it changed:
 * notifications/resources/updated to legacy sessions that sent
 * resources/subscribe, and to 2026-07-28 subscriptions/listen streams that
 * named it. With a store that has events (mcp_server_set_store), the
 * change is published too, and every server sharing the store tells its
 * own subscribers (list changes travel the same way). Returns how many
 * were told in this server, or a negative code. Any thread. */
MCP_API int mcp_server_resource_updated(mcp_server *srv, const char *uri);

/** Inside a completion callback: the name of the argument or variable being
 * completed (borrowed, valid until the callback returns; never NULL). Only
 * on the callback's thread. */
MCP_API const char *mcp_completion_argument(const mcp_completion *completion);

/** Inside a completion callback: the partial value of the argument or
 * variable being completed (borrowed, valid until the callback returns;
 * never NULL). Only on the callback's thread. */
MCP_API const char *mcp_completion_value(const mcp_completion *completion);

/** The value the client already chose for another argument (the request's
 * context.arguments), or NULL. Borrowed. */
MCP_API const char *mcp_completion_context(const mcp_completion *completion,
                                           const char *name);

/** The caller (borrowed; never NULL). */
MCP_API const mcp_principal *
mcp_completion_principal(const mcp_completion *completion);

/** Adds a suggestion (copied). Returns 0, MCP_EINVAL (not UTF-8) or
 * MCP_ENOMEM; past the 100th value it returns MCP_ELIMIT and the reply says
 * hasMore. */
MCP_API int mcp_completion_add(mcp_completion *completion, const char *value);

/** States how many values exist in all (sent as completion.total). */
MCP_API void mcp_completion_set_total(mcp_completion *completion,
                                      unsigned long total);

/* ---------------------------------------------------------------------------
 * Policy and audit
 * ------------------------------------------------------------------------ */

/** Who is calling. Filled by the transport: from a verified token over HTTP,
 * from the embedder's configuration on stdio. */
struct mcp_principal {
  const char *subject;       /**< who; NULL = anonymous */
  const char *const *scopes; /**< NULL-terminated list; NULL = none */
  bool all_scopes;           /**< holds every scope (the local user on a
                                  stdio server configured with none) */
  void *reserved[2]; /**< zero: room to grow (see the README, Versioning) */
};

/** Returns true when principal holds scope (exact, case-sensitive match).
 * NULL principal holds nothing. Any thread. */
MCP_API bool mcp_principal_has_scope(const mcp_principal *principal,
                                     const char *scope);

/** An authorizer: called for each tools/call that passed the scope check,
 * before arguments are validated. It sees who calls, which tool (by name
 * only: it is never given the tool's annotations, because hints must not
 * decide access) and the arguments (borrowed). Return 0 to allow; any other
 * value denies. To deny with a reason, write up to reason_size bytes of a
 * NUL-terminated sentence into reason (it reaches the client).
 * May run on any thread that drives a session; must be thread-safe. */
typedef int (*mcp_authorize_fn)(const mcp_principal *principal,
                                const char *tool, const struct cJSON *arguments,
                                char *reason, size_t reason_size,
                                void *user_data);

/** The decision taken for one tools/call. */
typedef enum mcp_decision {
  MCP_DECISION_ALLOWED = 0,
  MCP_DECISION_DENIED_SCOPE,      /**< a required scope was missing */
  MCP_DECISION_DENIED_AUTHORIZER, /**< the authorizer hook said no */
  MCP_DECISION_INVALID_ARGUMENTS, /**< allowed, but arguments failed the
                                       schema */
  MCP_DECISION_CANCELLED,         /**< allowed, then cancelled by the client */
  MCP_DECISION_INVALID_STATE,     /**< a modern retry whose requestState was
                                       tampered with, expired or foreign */
  MCP_DECISION_RATE_LIMITED,      /**< allowed, but the caller was over its
                                       rate (mcp_server_set_rate_limit) or
                                       a new task would pass a task count
                                       or byte budget
                                       (mcp_server_set_task_limits); the
                                       handler did not run */
  MCP_DECISION_TIMEOUT            /**< allowed, then answered "timeout" at
                                       the server's call deadline
                                       (mcp_server_set_call_timeout) */
} mcp_decision;

/** One audit record per tools/call of a known tool. All pointers are
 * borrowed for the duration of the callback. */
typedef struct mcp_audit_record {
  const char *tool;                  /**< the tool's name */
  const char *subject;               /**< NULL = anonymous */
  mcp_decision decision;             /**< what was decided */
  const char *const *missing_scopes; /**< NULL-terminated; empty unless
                                          DENIED_SCOPE */
  bool is_error;                     /**< the result had isError: true */
  bool failed;                       /**< answered with a JSON-RPC internal
                                          error: the handler returned a
                                          negative code, a builder failed,
                                          or memory ran out; or, with
                                          MCP_DECISION_RATE_LIMITED, the
                                          rate limit's store failed (a
                                          "rate limit unavailable" tool
                                          error, mcp_server_set_store) */
  uint64_t duration_us;              /**< from receipt to reply */
  const char *ran_under;             /**< where the handler ran, as its
                                          executor named it
                                          (mcp_call_execute); NULL when it
                                          ran on the session's thread or
                                          did not run */
  const mcp_tool_annotations *hints; /**< the hints the call ran under
                                          (mcp_call_hints: its resolver's
                                          for its arguments, or its
                                          tool's), all four stated; NULL
                                          when it was refused before it
                                          was made */
  const char *const *effects;        /**< what the call did outside its
                                          tool's hints, one line each as
                                          its executor reported them
                                          (mcp_call_report_effect, e.g. the
                                          guard's "remove /srv/a (unlinkat)
                                          breaks readOnlyHint: refused"),
                                          oldest first, the first 64;
                                          NULL-terminated, empty when none.
                                          Valid during the hook's call */
  void *reserved[1]; /**< zero: room to grow (see the README, Versioning) */
} mcp_audit_record;

/** Receives audit records. Called on the thread that finished the call;
 * must be thread-safe. */
typedef void (*mcp_audit_fn)(const mcp_audit_record *record, void *user_data);

/** Sets the authorizer hook (see mcp_authorize_fn); NULL removes it. Set it
 * before serving. */
MCP_API void mcp_server_set_authorizer(mcp_server *srv, mcp_authorize_fn fn,
                                       void *user_data);

/** Sets the audit hook (see mcp_audit_fn); NULL removes it. Set it before
 * serving. */
MCP_API void mcp_server_set_audit(mcp_server *srv, mcp_audit_fn fn,
                                  void *user_data);

/** When on, tools/list shows each caller only the tools whose scopes it
 * holds, and modern-era lists say cacheScope "private". Off by default, so a
 * client can discover what a step-up would unlock (skills are the
 * exception: see mcp_skill). This never replaces the check at tools/call.
 * Any thread. */
MCP_API void mcp_server_set_hide_forbidden(mcp_server *srv, bool hide);

/* ---------------------------------------------------------------------------
 * Tuning
 * ------------------------------------------------------------------------ */

/** Sets how many tools one tools/list page holds (0 restores the default,
 * 100). Any thread. */
MCP_API void mcp_server_set_page_size(mcp_server *srv, unsigned tools);

/** Whether the results of a tool that declares output_schema are checked
 * (on by default, in every build, NDEBUG or not). When on, the
 * structuredContent a handler builds is validated against the schema as
 * mcp_result_structured receives it, and a successful result without
 * structuredContent is refused too (a result marked with mcp_result_error
 * needs none). Either failure is logged for the author, naming the tool
 * and, for a mismatch, the instance path and the keyword ("tool \"t\":
 * structuredContent does not match outputSchema at /n: type: ..."); the
 * client gets a JSON-RPC internal error (-32603), not an isError result:
 * the fault is the server's, which the model cannot correct, and the
 * official SDKs' clients reject such a result anyway. Turn it off only for
 * a tool whose output is checked elsewhere. Any thread. */
MCP_API void mcp_server_set_check_output(mcp_server *srv, bool on);

/** Sets the ttlMs that modern-era (2026-07-28) results of server/discover,
 * the lists and resources/read carry: how long a client may cache them, in
 * milliseconds. The default is 0 ("stale at once"), so a client never
 * shows a list the server has since changed (tools added or removed at run
 * time reach a 2026-07-28 client only through a subscriptions/listen
 * stream it may not have opened). An application whose lists are static
 * may set a TTL to spare its clients the requests. Any thread. */
MCP_API void mcp_server_set_list_ttl(mcp_server *srv, unsigned ttl_ms);

/** Sets how long a requestState handed to a client stays valid, in seconds
 * (default 600). Any thread. */
MCP_API void mcp_server_set_input_ttl(mcp_server *srv, unsigned seconds);

/** The default of mcp_server_set_max_result: 16 MiB. */
#define MCP_DEFAULT_MAX_RESULT ((size_t)16 << 20)

/** Sets the most bytes one call's result may reach: the JSON text of its
 * content blocks (prompt messages, resource contents) plus its
 * structuredContent, as the mcp_result_* builders write it; 0 restores the
 * default, MCP_DEFAULT_MAX_RESULT (SIZE_MAX turns the cap off). The builders
 * check before they copy (mcp_result_structured_cjson, given a cJSON tree,
 * serializes it first and then checks), so a handler adding 50 MB never
 * makes the library build a 50 MB reply: the builder that would pass the
 * cap returns
 * MCP_ELIMIT (latched, as any builder failure), what was built is freed,
 * and the client gets, for a tool, a result with isError and the text
 * "result too large: limit N bytes"; for prompts/get and resources/read a
 * JSON-RPC internal error (-32603) saying the same. The server's log names
 * the call. Any thread; calls already running may see either value. */
MCP_API void mcp_server_set_max_result(mcp_server *srv, size_t bytes);

/** Limits how often each caller may call tools: a token bucket of calls
 * tokens per caller, refilled evenly over per_seconds (so up to calls at
 * once, and calls per per_seconds on average). calls 0 turns the limit off
 * (the default) and forgets every caller.
 *
 * A caller is the principal's subject; anonymous callers (subject NULL)
 * are counted per session, so on Streamable HTTP without authentication
 * give the transport a principal with a subject, or a 2026-07-28 client
 * (one session per request) is never limited. The table of callers holds
 * at most 4096 of them; past that the least recently seen is forgotten
 * (it starts again with a full bucket).
 *
 * Only tools/call counts: prompts/get, resources/read and
 * completion/complete are reads a client makes in bursts to fill its
 * interface, and are not limited. Each request counts, so a 2026-07-28
 * input-required retry is a call of its own. The limit is checked after
 * the scope check and the authorizer, so a caller refused access gets that
 * refusal, learns nothing about the limiter and spends no token; and
 * before the arguments are validated, so every call the caller may make
 * counts, valid or not. A call over the limit never reaches its handler:
 * it is answered, alike on every transport, with a result whose isError is
 * true and whose text begins "rate limited" and says how many seconds to
 * wait, and audited as MCP_DECISION_RATE_LIMITED. Time is CLOCK_MONOTONIC.
 *
 * The buckets are this process's own unless a store is set
 * (mcp_server_set_store): then every token is taken through the store, so
 * that processes sharing it share each caller's budget; with a store set,
 * this logs (at info) whether the limit counts in this process or across
 * every process sharing the store, and the store's description.
 * Returns 0, or MCP_EINVAL (srv NULL, or calls without per_seconds). Any
 * thread. */
MCP_API int mcp_server_set_rate_limit(mcp_server *srv, unsigned calls,
                                      unsigned per_seconds);

/** A shared-state store (declared again here; see mcp/store.h, included
 * at the end). */
typedef struct mcp_store mcp_store;

/** Makes the rate limit (mcp_server_set_rate_limit) take its tokens
 * through st, a store (mcp/store.h) such as the Redis store of mcp/redis.h
 * that every process of a deployment shares, so that a caller's budget is
 * one across the cluster; NULL (the default) goes back to the server's own
 * buckets, in this process.
 *
 * The bucket of a caller with a subject is named by the subject alone, the
 * same in every process; an anonymous caller's by this server's random
 * node name and its session, so anonymous callers are counted per session
 * as before, never sharing a bucket with another process's session. The
 * limit a take names is this server's: give every process the same.
 *
 * Admission keeps its order: the scope check and the authorizer, then the
 * token, then the arguments' validation. A store that answers later (one
 * that talks to a server) does not hold the transport's thread: the call
 * waits for the answer (its deadline and cancellation apply as to any
 * waiting call; the answer that comes after them is ignored), then goes on
 * on the thread that delivers the answer, which runs its handler unless an
 * executor is installed (mcp_server_set_executor). A call that may become a
 * task becomes one while it waits. Refused, the call is answered as
 * mcp_server_set_rate_limit says. When the store fails (Redis unreachable),
 * the handler never runs: the call is answered with a result whose isError
 * is true and whose text begins "rate limit unavailable" and says why,
 * audited as MCP_DECISION_RATE_LIMITED with failed set. With a store, a
 * task asked for by the client is created before its token is taken, and
 * its result carries the refusal.
 *
 * When st has events (mcp_store_publish: the in-process store and the
 * Redis store do), the server listens to them and publishes its changes:
 * notifications/resources/updated (mcp_server_resource_updated) and the
 * tools, prompts and resources list_changed notifications. Every server
 * sharing the store tells its own sessions of a change made on another,
 * once, in the order the store received them; a server never hears its
 * own twice. A change the store cannot publish (Redis unreachable) is
 * still told in this server, and logged at warning. When st keeps
 * records too (mcp_store_has_records: both do), tasks are kept in it and
 * every server sharing it answers for every task, and a task's changes
 * reach the listeners of its caller on every server (see
 * mcp_server_set_node_lease). Listening may
 * block once: the first server given a Redis store makes it open its
 * event connection (mcp_store_listen; see mcp/redis.h).
 *
 * st is borrowed, not taken: it must stay alive while the server may take
 * tokens through it or publish to it, i.e. until mcp_server_free(srv)
 * returned (or until mcp_server_set_store(srv, NULL) returned and no
 * request is being received and no change published). Free it after:
 * mcp_store_free answers every take still in flight with an error, and the
 * calls waiting for them end (their handlers never run). One store may serve
 * several servers. Returns 0, or MCP_EINVAL (srv NULL). Any thread; requests
 * being received meanwhile may use either store. */
MCP_API int mcp_server_set_store(mcp_server *srv, mcp_store *st);

/** Sets the lease of this server's node in its store's records (see
 * "Tasks on every node" in docs/deployment.md): with a store that keeps
 * records (mcp_store_has_records), the server joins it as its node
 * (mcp_store_node_join) and keeps a record of each task it runs there;
 * every server sharing the store then answers tasks/get, tasks/list,
 * tasks/result, tasks/update and tasks/cancel for it, and a task whose
 * node stopped renewing its lease for ms milliseconds is failed, with an
 * error saying its node was lost, by the first server that reads it.
 * ms from 300 to 3600000; 0 restores the default, 10000. Applies from the
 * next mcp_server_set_store. Returns 0, or MCP_EINVAL (srv NULL, ms out of
 * range). Any thread. */
MCP_API int mcp_server_set_node_lease(mcp_server *srv, unsigned ms);

/** Sets a deadline for every tools/call, prompts/get and resources/read:
 * ms milliseconds from the request's receipt (0, the default, means none).
 * It covers the whole request, including, in the 2025 protocol versions,
 * rounds waiting for the client's answers to input requests. A C handler
 * cannot be stopped from outside, so the deadline is cooperative: once it
 * passes, mcp_call_cancelled() returns true, and the handler should stop.
 * A call that finishes after its deadline is answered, instead of with its
 * result, for a tool with a result whose isError is true and whose text
 * begins "timeout"; for a prompt or a resource with a JSON-RPC internal
 * error (-32603) whose message says the same. A deferred call (or one
 * waiting for the client's input) is answered so when the transport next
 * calls mcp_server_expire after the deadline, and its later
 * mcp_call_finish only frees it. Audited as MCP_DECISION_TIMEOUT. The
 * server's log names the call. The stdio and HTTP transports call
 * mcp_server_expire themselves; an embedder's own transport must (see
 * there). A call that becomes a task (see "Tasks") is no longer bound by
 * it: the task's TTL is. Applies to calls received afterwards. Any
 * thread. */
MCP_API void mcp_server_set_call_timeout(mcp_server *srv, unsigned ms);

/** How many tasks a server keeps, how many bytes they hold, and for how
 * long (see "Tasks"). Plain data, copied by mcp_server_set_task_limits;
 * zero members keep their default.
 *
 * Bytes: a task holds its call's arguments while the call runs, the
 * client's answers until its next round takes them, its outstanding input
 * requests, and its result (or error) until its TTL passes; with a status
 * message and its bookkeeping that is what its budgets count. The result
 * alone may be as large as mcp_server_set_max_result allows (16 MiB by
 * default), so the defaults let one caller keep two of the largest, and
 * the whole table about a quarter of a GiB: what a small VM can spare. The
 * call's own copy of its arguments is freed with the call, once its
 * handler has finished its last round (the task completed, failed or was
 * cancelled); the task keeps a copy for its whole life only when the
 * server has an authorizer (mcp_server_set_authorizer), which every task
 * method shows them to, and then counts it.
 *
 * Anonymous callers (subject NULL) cannot be told apart except by their
 * session, so each anonymous session has budgets of its own, far smaller
 * than a principal's (max_bytes_anonymous, and an eighth of
 * max_per_caller tasks, at least one), and anonymous callers together may
 * hold no more than one principal's (max_per_caller tasks,
 * max_bytes_per_caller bytes): no anonymous session can fill the room of
 * the others, and none can crowd out the callers who authenticate. A
 * 2026-07-28 client over Streamable HTTP has a session per request, so
 * only that joint budget bounds it: a server that offers tasks beyond
 * loopback should authenticate its callers (mcp_http_options.auth) or
 * name them (mcp_http_options.principal). */
typedef struct mcp_task_limits {
  unsigned ttl_ms;             /**< a task's lifetime from its creation,
                                    running or finished: after it the task
                                    is cancelled and forgotten (ms; 0 =
                                    3600000, one hour) */
  unsigned max_ttl_ms;         /**< the most a 2025-11-25 client's task.ttl
                                    may ask for (ms; 0 = 86400000, one
                                    day) */
  unsigned poll_interval_ms;   /**< the pollInterval suggested to clients
                                    (ms; 0 = 500) */
  unsigned max_per_caller;     /**< tasks one principal may hold, running
                                    or finished (0 = 64) */
  unsigned max_total;          /**< tasks on the server (0 = 1024) */
  size_t max_bytes_per_caller; /**< bytes one principal's tasks may hold
                                    (0 = 32 MiB) */
  size_t max_bytes_total;      /**< bytes all tasks on the server may hold
                                    (0 = 256 MiB) */
  size_t max_bytes_anonymous;  /**< bytes the tasks of one anonymous
                                    session may hold (0 = 4 MiB; at most
                                    max_bytes_per_caller) */
  void *reserved[1];           /**< zero: room to grow (see the README,
                                    Versioning) */
} mcp_task_limits;

/** Sets srv's task limits (copied). A call that may become a task counts
 * from before its handler runs; one that would pass a count or a byte
 * budget (the caller's, the anonymous callers' together, the server's)
 * first makes room by forgetting the oldest finished tasks of that budget,
 * and when every one still runs it is refused before its handler runs
 * with -32000 ("Server busy: ...", naming the budget). A task that would
 * pass a budget later, with its result, its input requests or the
 * answers to them, first makes room the same way; when that is not
 * enough its result or its input requests make it fail (its error and
 * statusMessage name the budget: -32000 "Server busy: ..."), and answers
 * are refused (tasks/update answers -32000; a 2025-11-25 response counts
 * as no answer).
 *
 * With a store that keeps records (mcp_server_set_store: a cluster's
 * Redis), the caller's budget (anonymous callers: their joint one) and
 * the server's hold across every node sharing the store as well: each
 * node counts its tasks' records in the store (mcp_store_record.count),
 * with its own limits, so give every node the same. A new task the
 * cluster has no room for, once the store forgot that budget's oldest
 * finished tasks (on whichever node: it forgets them too), fails at once
 * (statusMessage "Server busy: a new task would pass the cluster's ...";
 * its call is cancelled); one that already ended by the time the store
 * refused it (a quick one: the store answers after its handler started)
 * is forgotten, as a finished task the budget needs the room of: a
 * 2026-07-28 call whose CreateTaskResult was still waiting for the store
 * is answered with its result (or error) instead, as a call that never
 * became a task, and any later tasks/get of it answers "Task not found".
 * A task admitted whose record grows past
 * a budget of the cluster keeps it, counted as before: its node's own
 * budget bounds it.
 *
 * Applies to tasks created afterwards. Returns 0 or MCP_EINVAL (srv or
 * limits NULL, or max_ttl_ms below ttl_ms). Any thread. */
MCP_API int mcp_server_set_task_limits(mcp_server *srv,
                                       const mcp_task_limits *limits);

/** Replaces the server's requestState signing key (by default 32 bytes from
 * the kernel's CSPRNG, drawn by mcp_server_new); a key longer than 32 bytes
 * is first reduced to 32 with SHA-256. Give every process of a
 * load-balanced deployment the same secret so any of them accepts a retry.
 * The key also enciphers the lists' cursors (nextCursor), which show a
 * caller nothing of the entries it may not see: with the same key, any
 * process continues a listing another began. key_len must be at least 32.
 * Returns 0 or MCP_EINVAL. Call before serving. */
MCP_API int mcp_server_set_state_key(mcp_server *srv, const void *key,
                                     size_t key_len);

/* ---------------------------------------------------------------------------
 * Memory
 * ------------------------------------------------------------------------ */

/** An allocator. All three functions are required. */
typedef struct mcp_allocator {
  /** Allocates size bytes, as malloc does; NULL on failure. */
  void *(*malloc_fn)(size_t size, void *user_data);
  /** Resizes ptr to size bytes, as realloc does; NULL on failure. */
  void *(*realloc_fn)(void *ptr, size_t size, void *user_data);
  /** Frees ptr, as free does. */
  void (*free_fn)(void *ptr, void *user_data);
  void *user_data;   /**< handed to each of the three functions */
  void *reserved[4]; /**< zero: room to grow (see the README, Versioning) */
} mcp_allocator;

/** Routes every allocation of libmcp (and of cJSON, whose hooks are global)
 * through alloc; NULL restores malloc/realloc/free. Call it once, before any
 * other libmcp call and before any other thread uses libmcp or cJSON; memory
 * allocated before the switch must not be freed after it.
 * Returns 0, or MCP_EINVAL if a function pointer is missing. */
MCP_API int mcp_set_allocator(const mcp_allocator *alloc);

/** Frees memory that libmcp handed to the caller. NULL does nothing. */
MCP_API void mcp_free(void *ptr);

/** Allocates size bytes (at least one, so 0 gives a block too) through the
 * allocator set with mcp_set_allocator, as libmcp's own allocations are;
 * for code built on the public API, such as a transport, whose memory the
 * embedder's allocator should see. Returns the block, uninitialised, or
 * NULL when memory ran out. The caller owns it and frees it with mcp_free.
 * Any thread. */
MCP_API void *mcp_malloc(size_t size);

/** Allocates count elements of size bytes each, zeroed, as mcp_malloc does.
 * Returns the block, or NULL when memory ran out or count * size does not
 * fit in a size_t. The caller owns it and frees it with mcp_free. Any
 * thread. */
MCP_API void *mcp_calloc(size_t count, size_t size);

/** Resizes ptr (NULL, or a block from mcp_malloc, mcp_calloc or
 * mcp_realloc) to size bytes, as realloc does, through the same allocator;
 * size 0 keeps a block of one byte and never frees ptr. Returns the block,
 * which may have moved, or NULL when memory ran out: ptr is then unchanged
 * and still the caller's. The caller owns the result and frees it with
 * mcp_free. Any thread. */
MCP_API void *mcp_realloc(void *ptr, size_t size);

/* ---------------------------------------------------------------------------
 * stdio transport
 * ------------------------------------------------------------------------ */

/** Options of mcp_serve_stdio; a zeroed struct (or NULL) means defaults. */
typedef struct mcp_stdio_options {
  const mcp_principal *principal; /**< the caller's scopes; NULL = the local
                                       user holds every scope (said once
                                       per process, a warning through the
                                       server's log: mcp_server_set_log) */
  int in_fd;                      /**< 0 = standard input */
  int out_fd;                     /**< 0 = standard output */
  size_t max_line;                /**< bytes in one message; 0 = 4 MiB */
  bool stop_on_signal;            /**< true = SIGTERM and SIGINT end serving
                                       gracefully (see mcp_serve_stdio);
                                       false = they keep their current
                                       action (by default, the process
                                       dies) */
  void *reserved[4]; /**< zero: room to grow (see the README, Versioning) */
} mcp_stdio_options;

/** Serves srv on a stream of newline-delimited JSON-RPC messages until end
 * of input, then lets the calls an executor holds finish (they would have
 * finished before the end was read without one: mcp_session_executing),
 * cancels what is still running and returns. When out_fd is
 * standard output, standard output is redirected to standard error for the
 * duration, so a stray printf in a handler cannot corrupt the protocol.
 * SIGPIPE is ignored. A line longer than max_line is answered with a parse
 * error and skipped. Deferred calls may finish from other threads while it
 * runs; it waits for them (they see the cancelled flag) before returning.
 *
 * With stop_on_signal, SIGTERM and SIGINT are handled (sigaction) for the
 * duration of the call and the previous handlers are restored before it
 * returns. On either signal it stops reading input (a message not yet read
 * is never handled), then ends as at end of input: calls still running are
 * cancelled, replies already produced are written, and it waits at most 5
 * seconds for deferred calls before returning 0. This is the graceful stop a
 * client's shutdown sequence (close input, SIGTERM, SIGKILL) expects. The
 * signals must not be blocked in every thread. One call at a time per
 * process may set stop_on_signal; another gets MCP_ESTATE.
 *
 * Returns 0 at end of input or on the stop signal, MCP_EIO on a read or
 * write error, MCP_ESTATE (see stop_on_signal), MCP_ENOMEM. Blocks the
 * calling thread. */
MCP_API int mcp_serve_stdio(mcp_server *srv, const mcp_stdio_options *opts);

/* ---------------------------------------------------------------------------
 * Old names
 *
 * Kept, as exported functions, for one minor version after the names that
 * replace them; each does exactly what its new name does. New code uses the
 * new names: a use of an old one warns (MCP_DEPRECATED).
 * ------------------------------------------------------------------------ */

/** Deprecated name of mcp_call_name (it returns a prompt's name and a
 * resource's URI too, not only a tool's name). */
MCP_API const char *mcp_call_tool(const mcp_call *call)
    MCP_DEPRECATED("use mcp_call_name");

/** Deprecated name of mcp_completion_set_total (it is a setter). */
MCP_API void mcp_completion_total(mcp_completion *completion,
                                  unsigned long total)
    MCP_DEPRECATED("use mcp_completion_set_total");

/** Deprecated name of mcp_result_structured_cjson (it takes a cJSON tree,
 * not JSON text). */
MCP_API int mcp_result_structured_json(mcp_call *call,
                                       const struct cJSON *value)
    MCP_DEPRECATED("use mcp_result_structured_cjson");

#ifdef __cplusplus
}
#endif

/* The session, message and sink API for transports and embedders, and the
 * deadline timer they drive. */
#include "mcp/engine.h"
/* Where handlers run: executors. */
#include "mcp/executor.h"
/* The shared-state store: the in-process one, and the interface of others. */
#include "mcp/store.h"

#endif
