/* hints.h: a tool's annotations read as a client and a directory scan read
 * them: what is missing or contradictory, what a client falls back to, and
 * the approval tier that follows. Pure functions of the tool's JSON. */
#ifndef MCPC_HINTS_H
#define MCPC_HINTS_H

#include "report.h"

struct cJSON;

/* The four hints, in this order everywhere. */
enum {
  MCPC_READ_ONLY = 0,
  MCPC_DESTRUCTIVE = 1,
  MCPC_IDEMPOTENT = 2,
  MCPC_OPEN_WORLD = 3
};
#define MCPC_HINT_ABSENT (-1)
#define MCPC_HINT_INVALID (-2)

/* The wire name of hint i ("readOnlyHint", ...). */
const char *mcpc_hint_name(int i);

/* Reads the four hints of a tool (its "annotations" member) into hint[]
 * (1, 0, MCPC_HINT_ABSENT or MCPC_HINT_INVALID) and the values a client
 * uses into effective[] (the spec's defaults for absent or invalid ones:
 * readOnlyHint false, destructiveHint true, idempotentHint false,
 * openWorldHint true; and for a read-only tool destructive false and
 * idempotent true whatever is written, as the spec says they are then
 * meaningless). */
void mcpc_hints_read(const struct cJSON *tool, int hint[4], int effective[4]);

/* The approval tier of effective hints: "run silently" (read-only), "ask
 * once" (writes, not destructive, closed world), "always ask" (destructive
 * or open world), "block unless pre-authorized" (destructive and open
 * world). A static string. */
const char *mcpc_hints_tier(const int effective[4]);

/* Adds to r the hint findings of the tool named name: each hint absent
 * (with its fallback value, and that a directory scan requires all four),
 * each one not a boolean, and each contradiction (read-only and
 * destructive; read-only and not idempotent). Returns how many it added,
 * or -1 when out of memory. */
int mcpc_hints_check(mcpc_report *r, const char *name, const int hint[4]);

/* Whether tools/list marks the tool resolvable (its _meta member
 * "io.modelcontextprotocol/tool-resolution" is an object whose
 * "resolvable" is true): a server does so only for a client that declared
 * tool resolution, as mcp-check does. 1 or 0. */
int mcpc_hints_resolvable(const struct cJSON *tool);

/* mcpc_hints_resolved's answers besides 0 (hints that keep the bound). */
#define MCPC_RESOLVE_MALFORMED (-1) /* not a tools/resolve result */
#define MCPC_RESOLVE_LOOSER 1       /* looser than the static hints */

/* Reads a tools/resolve result for the tool named name, whose static
 * effective hints are statik[]: out[] gets the resolved values a client
 * uses (each hint as answered; one left out keeps its static value; for a
 * call resolved read-only destructive false and idempotent true).
 * Returns 0; MCPC_RESOLVE_MALFORMED when the result has no annotations
 * object, a hint that is not a boolean, or another tool's name; or
 * MCPC_RESOLVE_LOOSER when the answer is looser than the static hints
 * (the draft's bound: a read-only tool resolved writing, a closed-world
 * one open-world, a non-destructive one destructive, an idempotent one
 * writing and not idempotent). why (size bytes) says what is wrong. */
int mcpc_hints_resolved(const struct cJSON *result, const char *name,
                        const int statik[4], int out[4], char *why,
                        size_t size);

/* Effective hints in words ("read-only, closed world"; "writes, not
 * destructive, not idempotent, open world") into buf; returns buf. */
const char *mcpc_hints_describe(const int effective[4], char *buf, size_t size);

#endif
