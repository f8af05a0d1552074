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

#endif
