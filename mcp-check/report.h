/* report.h: what mcp-check found, and the three ways it says it (a table
 * for people, JSON, JUnit XML). The report owns every string in it. */
#ifndef MCPC_REPORT_H
#define MCPC_REPORT_H

#include <stddef.h>
#include <stdio.h>

struct cJSON;

/* The three checks, in the order they run. */
typedef enum mcpc_check {
  MCPC_HINTS = 0,
  MCPC_SCOPES = 1,
  MCPC_BEHAVIOUR = 2,
  MCPC_CHECKS = 3
} mcpc_check;

/* What became of one check for one tool. */
typedef enum mcpc_state {
  MCPC_NOT_RUN = 0, /* not asked for, or nothing to check */
  MCPC_PASSED,
  MCPC_FAILED, /* at least one finding */
  MCPC_SKIPPED /* asked for but impossible: the reason is in the notes */
} mcpc_state;

/* One finding: the tool (NULL for the server as a whole), the hint or rule
 * it breaks ("readOnlyHint", ..., "scopes", "authorization"), how sure the
 * evidence is ("certain", "possible", "static"), what was seen, the fix. */
typedef struct mcpc_finding {
  mcpc_check check;
  char *tool, *hint, *grade, *evidence, *fix;
  int resolved; /* judged against the hints tools/resolve gave the call,
                   not the tool's static ones (0 unless set after adding) */
} mcpc_finding;

/* One tool as listed: its name, the hints as advertised (1 true, 0 false,
 * -1 absent, -2 not a boolean), the values a client falls back to, the
 * approval tier those give, the state of each check, and what its calls
 * under observation did (a JSON array of {"op", "target", "target2"?,
 * "syscall", "call"}, or NULL); whether tools/list marks it resolvable,
 * and what tools/resolve answered for its calls (a JSON array of {"call",
 * "arguments", "resolved", "hints"?, "detail"?}, or NULL). */
typedef struct mcpc_tool_row {
  char *name;
  int hint[4];      /* MCPC_HINT_* order, see hints.h */
  int effective[4]; /* after the spec's fallbacks */
  const char *tier; /* static string */
  mcpc_state state[MCPC_CHECKS];
  struct cJSON *effects;
  int resolvable;
  struct cJSON *resolutions;
} mcpc_tool_row;

typedef struct mcpc_report {
  char *server_name, *server_version, *protocol_version;
  const char *transport; /* "stdio" or "http" */
  mcpc_tool_row *tools;
  size_t n_tools;
  mcpc_finding *findings;
  size_t n_findings, cap_findings;
  char **notes; /* what the run could and could not see or do */
  size_t n_notes, cap_notes;
  char **outside; /* effects outside any call, one line each */
  size_t n_outside, cap_outside;
  int oom; /* an allocation failed: the report is incomplete */
} mcpc_report;

/* The name of a check ("hints", "scopes", "behaviour"). */
const char *mcpc_check_name(mcpc_check c);

/* Adds a finding; every string is copied (tool may be NULL). Returns 0, or
 * -1 when out of memory (the report remembers it in oom). */
int mcpc_report_add(mcpc_report *r, mcpc_check check, const char *tool,
                    const char *hint, const char *grade, const char *evidence,
                    const char *fix);

/* Adds a line to the notes, or to the effects outside any call; printf
 * formatted, copied. Returns 0 or -1 (out of memory). */
int mcpc_report_note(mcpc_report *r, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
int mcpc_report_outside(mcpc_report *r, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Sets a tool's row for the check to failed when it has a finding there,
 * else to passed when the check ran for it (ran != 0). */
void mcpc_report_settle(mcpc_report *r, mcpc_check check, size_t tool, int ran);

/* The number of findings of a tool (NULL: of the server as a whole) in a
 * check. */
size_t mcpc_report_count(const mcpc_report *r, mcpc_check check,
                         const char *tool);

/* The table for people on out; colour (ANSI) when color is non-zero. */
void mcpc_report_print(const mcpc_report *r, FILE *out, int color);

/* The report as JSON (shape in mcp-check(1)); NULL when out of memory. The
 * caller frees it with cJSON_Delete. exit_code goes into it. */
struct cJSON *mcpc_report_json(const mcpc_report *r, int exit_code);

/* JUnit XML: one testsuite per check, one testcase per tool and check (and
 * one for the server as a whole), a failure per finding. Returns 0 or -1
 * when out cannot be written. */
int mcpc_report_junit(const mcpc_report *r, FILE *out);

/* Frees everything the report holds and zeroes it. */
void mcpc_report_clear(mcpc_report *r);

#endif
