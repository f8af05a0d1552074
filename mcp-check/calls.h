/* mcp-check: the --calls file, the tool calls to make in place of generated
 * arguments. */
#ifndef MCPC_CALLS_H
#define MCPC_CALLS_H

#include <stddef.h>

#include <cjson/cJSON.h>

/* One call: the tool's name, its arguments (an object), and the line of the
 * file it came from (1-based). */
typedef struct mcpc_call {
  char *name;
  cJSON *arguments;
  unsigned line;
} mcpc_call;

/* The longest line the reader accepts, newline excluded, in bytes. */
#define MCPC_CALLS_MAX_LINE 65536u
/* The most calls one file may hold. */
#define MCPC_CALLS_MAX 4096u

/* mcpc_calls_read: reads path, one JSON object a line
 * {"name": "...", "arguments": {...}} ("arguments" may be left out: an
 * empty object); blank lines and lines whose first non-blank character is #
 * are skipped. On success returns 0 and sets *out to a new array of *n
 * calls (NULL when 0) the caller frees with mcpc_calls_free. On failure
 * returns -1, sets *out to NULL and *n to 0, and writes into why (size
 * bytes) the file and line at fault and what is wrong. Thread-safe. */
int mcpc_calls_read(const char *path, mcpc_call **out, size_t *n, char *why,
                    size_t size);

/* mcpc_calls_free: frees the n calls of c and the array; c may be NULL. */
void mcpc_calls_free(mcpc_call *c, size_t n);

#endif
