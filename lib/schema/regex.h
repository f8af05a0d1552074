/* Regular expressions for JSON Schema "pattern" and "patternProperties".
 *
 * Private to lib/. JSON Schema names ECMA-262 as the dialect; POSIX regex.h
 * is a different language (no \d, no lazy quantifiers, different classes),
 * so this is a small engine of its own. It compiles a documented subset of
 * ECMA-262 (with the "u" flag's code-point semantics) into a program for a
 * Pike VM, which runs in time linear in the subject (times the program
 * size) whatever the pattern: no backtracking, so no catastrophic cases.
 *
 * The dialect:
 *  - literals, any code point; "." (anything but \n, \r, U+2028, U+2029);
 *  - classes [...] and [^...] with ranges and the escapes below;
 *  - \d \D \w \W \s \S (ASCII digits and word characters, ECMAScript white
 *    space and line terminators), \b \B, \t \n \v \f \r \0, \cX, \xHH,
 *    \uHHHH (surrogate pairs joined), \u{H...}, and "\" before any ASCII
 *    punctuation for that character;
 *  - ^ and $ (start and end of the subject: there is no multiline flag);
 *  - groups (...), (?:...) and (?<name>...), alternation |;
 *  - quantifiers * + ? {n} {n,} {n,m}, greedy or lazy (the difference is
 *    invisible to a yes/no search); bounds up to 1000.
 * Refused when compiled, rather than silently mis-matched: backreferences
 * (\1, \k<name>), lookahead and lookbehind, Unicode property escapes
 * (\p{...}), inline flags, unknown letter escapes, a "{" that does not start
 * a quantifier, and programs beyond the size limit.
 * Matching is a search (unanchored unless ^/$ say otherwise), as ECMA-262's
 * RegExp.prototype.test does. */
#ifndef MCP_REGEX_H
#define MCP_REGEX_H

#include <stddef.h>

typedef struct mcp__regex mcp__regex;

/* Compiles the len bytes of UTF-8 at pattern. max_prog caps the program
 * size in instructions (0 = 4096). Returns 0 and sets *out; MCP_EINVAL with
 * a sentence naming the construct in err; MCP_ENOMEM. */
int mcp__regex_compile(const char *pattern, size_t len, size_t max_prog,
                       mcp__regex **out, char *err, size_t errlen);
void mcp__regex_free(mcp__regex *re);

/* Bytes of scratch memory one search needs (suitably aligned for
 * unsigned int). The compiled program is immutable, so searches from many
 * threads can share it, each with its own scratch. */
size_t mcp__regex_scratch_size(const mcp__regex *re);

/* Searches the len bytes at s (UTF-8) for a match. Adds the work done (VM
 * thread steps) to *steps. Returns 1 on a match, else 0. */
int mcp__regex_search(const mcp__regex *re, const char *s, size_t len,
                      void *scratch, unsigned long *steps);

#endif
