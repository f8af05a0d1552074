/* The JSON Schema 2020-12 layer (lib/schema): what the layers above see of
 * it. Not installed.
 *
 * A schema is compiled once (at registration) into an immutable form that
 * any number of threads may validate with at once; validating allocates
 * nothing for all but very large objects and arrays. References resolve
 * within the same document only: nothing is ever fetched. Every cost is
 * bounded (subschemas, nesting, regular expression size, validation steps),
 * so a pathological schema or instance fails closed, in bounded time.
 * Validation recurses: at its depth limit it needs about 130 KB of stack.
 * Patterns use the ECMA-262 subset documented in lib/schema/regex.h. */
#ifndef MCP_SCHEMA_H
#define MCP_SCHEMA_H

#include "base.h"
#include "json.h"

typedef struct mcp__schema mcp__schema;

/* Assert "format" for date-time, date, email, uri, uuid, ipv4 and ipv6
 * (other formats stay annotations, as 2020-12 makes all of them by
 * default). */
#define MCP__SCHEMA_ASSERT_FORMAT 1u

/* A document the caller already holds, which references may point into
 * under its absolute URI (say, shared definitions). The library never
 * looks anywhere else. */
typedef struct mcp__schema_doc {
  const char *uri;          /* absolute, without fragment */
  const struct cJSON *json; /* borrowed, like the schema */
} mcp__schema_doc;

typedef struct mcp__schema_options {
  unsigned flags;              /* MCP__SCHEMA_* bits; 0 = none */
  size_t max_subschemas;       /* subschemas in one schema; 0 = 10000 */
  unsigned long max_steps;     /* work units per validation; 0 = 1000000 */
  const mcp__schema_doc *docs; /* other documents; may be NULL */
  size_t ndocs;
} mcp__schema_options;

/* Compiles schema (opt NULL for the defaults). The compiled form borrows
 * the document and opt->docs, which must outlive it. Returns 0 and sets *out;
 * MCP_EINVAL when the schema is invalid or unsupported, with err naming the
 * JSON pointer and the rule ("at /properties/n/minimum: must be a number");
 * MCP_ENOMEM. */
int mcp__schema_compile(const struct cJSON *schema,
                        const mcp__schema_options *opt, mcp__schema **out,
                        char *err, size_t errlen);
void mcp__schema_free(mcp__schema *s);

/* Validates instance. Returns 0 when it conforms; MCP_EINVAL with, in msg,
 * "<label> at <instance path>: <keyword>: <sentence a model can act on>"
 * (no " at ..." for the top level); MCP_ELIMIT when the instance is too
 * costly to check (msg says so; treat it as invalid); MCP_ENOMEM. */
int mcp__schema_validate(const mcp__schema *s, const struct cJSON *instance,
                         const char *label, char *msg, size_t msglen);

#endif
