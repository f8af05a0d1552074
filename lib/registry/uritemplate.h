/* RFC 6570 URI templates, used backwards: matching a resources/read URI
 * against a registered resource template and reading its variables.
 *
 * Private to lib/. A template is compiled once (at registration) into an
 * immutable form that any number of threads may match with at once. A
 * match runs in time linear in the length of the URI plus the size of the
 * template: every expression ends at a place found by one forward scan, and
 * nothing is ever retried with another split, so no input can make it
 * backtrack.
 *
 * ---- What compiles ----
 * Literals and expressions, RFC 6570 level 4 syntax:
 *  - literal characters as RFC 6570 section 2.1 allows them: no controls,
 *    space, '"', "'", '<', '>', '\', '^', '`', '|', and '%' only as the
 *    start of a percent-encoded octet; any non-ASCII character;
 *  - expressions "{" [operator] varspec *( "," varspec ) "}" with the
 *    operators none, +, #, ., /, ;, ? and &;
 *  - variable names of ALPHA, DIGIT, "_" and percent-encoded octets, with
 *    single dots between them ("a.b", not ".a", "a." or "a..b"), compared
 *    and reported as written (no decoding);
 *  - modifiers: a prefix ":N" (N from 1 to 9999) or an explode "*".
 * Refused with MCP_EINVAL, err naming the byte offset and the rule: an
 * unbalanced "{" or "}", a "{" inside an expression, an empty or malformed
 * variable name or modifier, an operator reserved for future use ("=", ",",
 * "!", "@", "|"), a variable name used twice in the template, more than
 * MCP__URITEMPLATE_MAX_VARS variables, more than MCP__URITEMPLATE_MAX_LEN
 * bytes, bytes that are not UTF-8, control characters (C0, DEL, C1), two
 * exploded variables in one expression of the operators none, +, #, . or /
 * (the items between them could be shared out in more than one way), and
 * expressions that cannot be told apart (below).
 *
 * ---- Adjacent expressions ----
 * An expression ends where the literal after it begins, so a literal
 * between two expressions tells them apart. With no literal between them,
 * the second expression must begin with its operator's character ("#", ".",
 * "/", ";", "?" or "&") and that character must be one that cannot occur in
 * the first expression's match after its own leading character; the first
 * one then ends at the first such character. Values of none, ".", "/", ";",
 * "?" and "&" never contain a raw "/", "?" or "#" (see below) but may
 * contain ".", ";" and "&", so after one of them the next expression must
 * begin with "/" (not after "/", whose separator it is), "?" or "#":
 * "{a}{/b}", "{name}{?q}", "{/path}{?q}" and "{a}{#f}" compile, while
 * "{a}{b}", "{a}{+b}", "{a}{.ext}", "{/a}{/b}" and "{?a}{&b}" do not (write
 * "{/a,b}" and "{?a,b}"). Values of "+" and "#" may contain anything, so
 * they may be followed by any expression that has a leading character:
 * "{+path}{?q}" ends the path at the first "?". Because the ";", "?" and
 * "&" expressions may match nothing, the rule holds across them too: in
 * "{a}{?q}{.x}" the "." could directly follow {a}, so it is refused.
 *
 * ---- How a URI matches ----
 * Matching walks the template from left to right:
 *  - a literal must appear at that point of the URI, byte for byte (no case
 *    folding, no percent-encoding normalisation: MCP compares URIs as
 *    strings);
 *  - an expression's match ends at the first occurrence, after at least one
 *    character of value, of the literal that follows it, or of the leading
 *    character of a directly following expression, whichever starts first;
 *    an expression that ends the template takes the rest of the URI. There
 *    is no backtracking: "{+path}/x" matches "a/x" but not "a/x/b/x",
 *    because the path ends at the first "/x".
 * Inside its match, an expression reads as follows (RFC 6570's expansion
 * run backwards):
 *  - none, "+", "#", "." and "/" are required: the match is the operator's
 *    character ("#", "." or "/"; none for none and "+") followed by one item
 *    per variable, separated by "," (none, "+", "#"), "." or "/", and every
 *    variable gets its item, which must not be empty. An expression with a
 *    single variable without explode takes the whole match as one item, so
 *    "{name}" reads "a,b" as "a,b". A variable with explode takes as many
 *    items as are left over (at least one), joined with the separator:
 *    "{/path*}" reads "/a/b/c" as "a/b/c", each segment checked as below.
 *  - ";", "?" and "&" are optional: when the URI does not have the
 *    operator's character at that point, the expression matches nothing
 *    and its variables are absent. Otherwise the match is that character
 *    followed by one or more name=value pairs separated by ";" (for ";") or
 *    "&" (for "?" and "&"), in any order; the name ends at the first "=",
 *    and "name" alone means an empty value.
 *    Each name must be a variable of that expression and appear once: an
 *    unknown name, a repeated name or an empty pair means no match (a
 *    template lists the parameters it accepts; a client adding others is
 *    asking for something else). Variables without a pair are absent from
 *    the result. Explode has no effect on these operators (a string value
 *    explodes to itself).
 * Values are percent-decoded. Raw bytes that are not ASCII pass as they
 * are (a client may send an IRI). A "%" not followed by two hexadecimal
 * digits means no match, and so does a decoded value that is not UTF-8 or
 * contains NUL, and one longer than a prefix modifier's N characters (code
 * points, counted after decoding).
 *
 * ---- Path traversal ----
 * Values go to handlers that often turn them into file names, so matching
 * refuses the values that would climb out of a directory, whatever the
 * encoding:
 *  - for none, ".", "/", ";", "?" and "&", whose values RFC 6570 never
 *    leaves reserved characters in, a value containing "/", "?", "#" or
 *    "\" raw, or "/" or "\" once decoded ("%2F", "%5C"), does not match, so
 *    "file:///notes/{name}" matches neither "file:///notes/a/b" nor
 *    "file:///notes/a%2Fb"; "\" counts because Windows file APIs treat it as
 *    a separator;
 *  - for every operator, a decoded value that is "." or "..", or for "+"
 *    and "#" (whose values may hold "/") has "." or ".." as a segment
 *    between "/" or "\" separators, does not match: "file:///notes/.." and
 *    "file:///notes/%2e%2e" do not match "file:///notes/{name}", nor does
 *    "file:///a/../b" match "file:///{+path}".
 * This is a defence, not a sandbox: a "+" value may still be an absolute
 * path ("file:////etc/passwd" gives "/etc/passwd"), and a handler must still
 * confine what it opens. */
#ifndef MCP_URITEMPLATE_H
#define MCP_URITEMPLATE_H

#include <stdbool.h>
#include <stddef.h>

struct cJSON;

/* Longest template compiled, in bytes, and most variables in one. */
#define MCP__URITEMPLATE_MAX_LEN 1024
#define MCP__URITEMPLATE_MAX_VARS 32

typedef struct mcp__uritemplate mcp__uritemplate;

/* Compiles the NUL-terminated template tmpl. Returns 0 and sets *out (free
 * with mcp__uritemplate_free); MCP_EINVAL for a template that breaks a rule
 * above, with a sentence naming the rule and the byte offset in err (err
 * may be NULL when errlen is 0); MCP_ENOMEM. *out is untouched on failure.
 * The template is copied: tmpl need not outlive the call. */
int mcp__uritemplate_compile(const char *tmpl, mcp__uritemplate **out,
                             char *err, size_t errlen);
/* Frees t; NULL does nothing. */
void mcp__uritemplate_free(mcp__uritemplate *t);

/* Matches the NUL-terminated uri against t. Returns 0 and sets *vars to a
 * new cJSON object (the caller frees it with cJSON_Delete) holding, in the
 * template's order, {"name": "decoded value"} for every variable that
 * matched (optional ones absent from the uri are absent from it);
 * MCP_ENOENT when uri does not match (*vars untouched); MCP_ENOMEM;
 * MCP_EINVAL for a NULL argument. Time linear in strlen(uri) plus the
 * template's size; allocates one buffer of about strlen(uri) bytes and the
 * result. */
int mcp__uritemplate_match(const mcp__uritemplate *t, const char *uri,
                           struct cJSON **vars);

/* The number of variables of t, and the name of the i-th (in the order
 * they appear; NULL when i is out of range), valid until t is freed. */
size_t mcp__uritemplate_nvars(const mcp__uritemplate *t);
const char *mcp__uritemplate_var(const mcp__uritemplate *t, size_t i);
/* Does t declare a variable called name (compared byte for byte)? */
bool mcp__uritemplate_has_var(const mcp__uritemplate *t, const char *name);

/* ---- Plain URIs ----
 * A resource's URI is checked twice, by different rules: when a server
 * registers it and when a client names it (resources/read,
 * resources/subscribe and unsubscribe, subscriptions/listen). Both refuse
 * what cannot be a URI at all: nothing, control characters (C0 and DEL),
 * bytes that are not UTF-8, and more than a length that bounds the work one
 * URI costs. A registered URI is published in resources/list for clients
 * to send back unchanged and is compared with what they send as a string,
 * so it must also be an absolute URI that every client carries the same
 * way: a scheme (a letter, then letters, digits, "+", "-" or "."), ":",
 * then printable ASCII without spaces, at most 2048 bytes. A URI a client
 * names is only looked up and matched against templates, which take raw
 * non-ASCII (a client may send an IRI); a subscription may name a URI that
 * nothing serves yet. Holding it to the registration rules would turn "no
 * such resource" (-32002 with the URI in data) into a malformed request,
 * so it only has to be text of up to 4096 bytes: no scheme is needed, and
 * spaces and non-ASCII are allowed. */
#define MCP__URI_MAX_REGISTERED 2048
#define MCP__URI_MAX_REQUESTED 4096

typedef enum mcp__uri_rules {
  MCP__URI_REGISTERED, /* a server's mcp_resource uri */
  MCP__URI_REQUESTED   /* a uri a client names */
} mcp__uri_rules;

/* Does the NUL-terminated uri meet the rules above? */
bool mcp__uri_valid(const char *uri, mcp__uri_rules rules);

#endif
