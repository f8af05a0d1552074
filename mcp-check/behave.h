/* behave.h: the behaviour check: the effects one call had, judged against
 * the hints of its tool. Findings are one per tool and hint, with up to a
 * few effects as evidence. */
#ifndef MCPC_BEHAVE_H
#define MCPC_BEHAVE_H

#include "observe.h"
#include "report.h"

/* Judges the effects of one call of tool against hints (hints.h order):
 * the tool's effective hints, or, when resolved is non-zero, those
 * tools/resolve gave this call (the findings then say so, and carry
 * resolved):
 * a read-only tool that changed any file; a tool that is not destructive
 * and removed a file that existed (certain), changed bytes of one in place
 * (certain) or replaced one by a truncate and rewrite or a rename over it
 * whose earlier bytes are not all kept (possible: the author judges); a
 * closed-world tool that opened a non-unix socket, connected, bound,
 * listened or sent to an address. what names the call in the evidence.
 * Returns the findings added, or -1 when out of memory. */
int mcpc_behaviour_judge(mcpc_report *r, const char *tool, const int hints[4],
                         int resolved, const char *what, const mcpc_effect *e,
                         size_t n);

/* Judges the second of two identical calls of an idempotent tool (or of
 * a call resolved idempotent: resolved non-zero): each file it touched
 * must end as it was before that call (digests). Returns the findings
 * added (0 or 1), or -1. */
int mcpc_behaviour_repeat(mcpc_report *r, const char *tool, int resolved,
                          const char *what, const mcpc_effect *e, size_t n);

/* Whether the state of a file before a call (before) survives in the file
 * at path now: it did not exist, was empty, or its bytes are a prefix of
 * the file now (an append). Exposed for its unit test. */
int mcpc_kept(const mcpc_effect *before, const char *path);

#endif
