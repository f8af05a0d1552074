/* hints.c: the hints check. A finding here needs no call: it is what
 * tools/list says, read the way the spec tells a client to read it. */
#include "hints.h"

#include <cjson/cJSON.h>
#include <stdio.h>

static const char *const names[4] = {"readOnlyHint", "destructiveHint",
                                     "idempotentHint", "openWorldHint"};
/* The spec's defaults: what a client assumes of a tool that says nothing. */
static const int fallback[4] = {0, 1, 0, 1};

const char *mcpc_hint_name(int i) { return i >= 0 && i < 4 ? names[i] : "?"; }

void mcpc_hints_read(const cJSON *tool, int hint[4], int effective[4]) {
  const cJSON *ann = cJSON_GetObjectItemCaseSensitive(tool, "annotations");
  for (int i = 0; i < 4; i++) {
    const cJSON *v = cJSON_IsObject(ann)
                         ? cJSON_GetObjectItemCaseSensitive(ann, names[i])
                         : NULL;
    if (v == NULL || cJSON_IsNull(v))
      hint[i] = MCPC_HINT_ABSENT;
    else if (cJSON_IsBool(v))
      hint[i] = cJSON_IsTrue(v) ? 1 : 0;
    else
      hint[i] = MCPC_HINT_INVALID;
    effective[i] = hint[i] >= 0 ? hint[i] : fallback[i];
  }
  /* destructiveHint and idempotentHint mean something only when the tool
   * writes: a client reading a read-only tool treats it as neither. */
  if (effective[MCPC_READ_ONLY]) {
    effective[MCPC_DESTRUCTIVE] = 0;
    effective[MCPC_IDEMPOTENT] = 1;
  }
}

const char *mcpc_hints_tier(const int effective[4]) {
  int destructive = effective[MCPC_DESTRUCTIVE];
  int open = effective[MCPC_OPEN_WORLD];
  if (effective[MCPC_READ_ONLY])
    return "run silently";
  if (destructive && open)
    return "block unless pre-authorized";
  if (destructive || open)
    return "always ask";
  return "ask once";
}

static int absent(mcpc_report *r, const char *tool, const int hint[4], int i) {
  char evidence[256], fix[256];
  int meaningful =
      i == MCPC_READ_ONLY || i == MCPC_OPEN_WORLD || hint[MCPC_READ_ONLY] != 1;
  if (meaningful)
    snprintf(evidence, sizeof evidence,
             "%s is absent: a client falls back to %s, and a directory "
             "scan requires all four hints explicit",
             names[i], fallback[i] ? "true" : "false");
  else
    snprintf(evidence, sizeof evidence,
             "%s is absent on a read-only tool: a client derives %s, but a "
             "directory scan requires all four hints explicit",
             names[i], i == MCPC_DESTRUCTIVE ? "false" : "true");
  snprintf(fix, sizeof fix, "state %s explicitly in the tool's annotations",
           names[i]);
  return mcpc_report_add(r, MCPC_HINTS, tool, names[i], "certain", evidence,
                         fix);
}

static int invalid(mcpc_report *r, const char *tool, int i) {
  char evidence[200], fix[100];
  snprintf(evidence, sizeof evidence,
           "%s is not a boolean: a client ignores it and falls back to %s",
           names[i], fallback[i] ? "true" : "false");
  snprintf(fix, sizeof fix, "write %s as true or false", names[i]);
  return mcpc_report_add(r, MCPC_HINTS, tool, names[i], "certain", evidence,
                         fix);
}

int mcpc_hints_check(mcpc_report *r, const char *name, const int hint[4]) {
  int added = 0;
  for (int i = 0; i < 4; i++) {
    int rc = 0;
    if (hint[i] == MCPC_HINT_ABSENT)
      rc = absent(r, name, hint, i);
    else if (hint[i] == MCPC_HINT_INVALID)
      rc = invalid(r, name, i);
    else
      continue;
    if (rc < 0)
      return -1;
    added++;
  }
  if (hint[MCPC_READ_ONLY] == 1 && hint[MCPC_DESTRUCTIVE] == 1) {
    if (mcpc_report_add(r, MCPC_HINTS, name, "destructiveHint", "certain",
                        "readOnlyHint and destructiveHint are both true: "
                        "a tool that modifies nothing cannot destroy",
                        "set destructiveHint false, or readOnlyHint false "
                        "if the tool writes") < 0)
      return -1;
    added++;
  }
  if (hint[MCPC_READ_ONLY] == 1 && hint[MCPC_IDEMPOTENT] == 0) {
    if (mcpc_report_add(r, MCPC_HINTS, name, "idempotentHint", "certain",
                        "readOnlyHint is true and idempotentHint false: "
                        "repeating a call that modifies nothing changes "
                        "nothing",
                        "set idempotentHint true, or readOnlyHint false if "
                        "the tool writes") < 0)
      return -1;
    added++;
  }
  return added;
}
