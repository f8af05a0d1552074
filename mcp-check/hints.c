/* hints.c: the hints check. A finding here needs no call: it is what
 * tools/list says, read the way the spec tells a client to read it. */
#include "hints.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <string.h>

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

/* ---- tool resolution --------------------------------------------------- */

#define RESOLUTION "io.modelcontextprotocol/tool-resolution"

int mcpc_hints_resolvable(const cJSON *tool) {
  const cJSON *meta = cJSON_GetObjectItemCaseSensitive(tool, "_meta");
  const cJSON *ext = cJSON_IsObject(meta)
                         ? cJSON_GetObjectItemCaseSensitive(meta, RESOLUTION)
                         : NULL;
  return cJSON_IsObject(ext) &&
         cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(ext, "resolvable"));
}

/* The draft's bound: the rule the answer h breaks against the static
 * hints st, or NULL. */
static const char *looser(const int st[4], const int h[4]) {
  if (st[MCPC_READ_ONLY] && !h[MCPC_READ_ONLY])
    return "readOnlyHint: the tool is read-only, the call resolved writing";
  if (!st[MCPC_OPEN_WORLD] && h[MCPC_OPEN_WORLD])
    return "openWorldHint: the tool is closed-world, the call resolved "
           "open-world";
  if (!st[MCPC_DESTRUCTIVE] && h[MCPC_DESTRUCTIVE])
    return "destructiveHint: the tool is not destructive, the call resolved "
           "destructive";
  if (st[MCPC_IDEMPOTENT] && !h[MCPC_IDEMPOTENT])
    return "idempotentHint: the tool is idempotent, the call resolved not "
           "idempotent";
  return NULL;
}

int mcpc_hints_resolved(const cJSON *result, const char *name,
                        const int statik[4], int out[4], char *why,
                        size_t size) {
  const cJSON *ann = cJSON_GetObjectItemCaseSensitive(result, "annotations");
  const cJSON *got = cJSON_GetObjectItemCaseSensitive(result, "name");
  const char *rule;
  if (!cJSON_IsObject(ann)) {
    snprintf(why, size, "the result has no annotations object");
    return MCPC_RESOLVE_MALFORMED;
  }
  if (got && (!cJSON_IsString(got) || strcmp(got->valuestring, name) != 0)) {
    snprintf(why, size, "the result names another tool");
    return MCPC_RESOLVE_MALFORMED;
  }
  for (int i = 0; i < 4; i++) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(ann, names[i]);
    out[i] = statik[i];
    if (v == NULL)
      continue;
    if (!cJSON_IsBool(v)) {
      snprintf(why, size, "%s is not a boolean", names[i]);
      return MCPC_RESOLVE_MALFORMED;
    }
    out[i] = cJSON_IsTrue(v) ? 1 : 0;
  }
  if (out[MCPC_READ_ONLY]) {
    out[MCPC_DESTRUCTIVE] = 0;
    out[MCPC_IDEMPOTENT] = 1;
  }
  if ((rule = looser(statik, out)) != NULL) {
    snprintf(why, size, "looser than the static hints (%s)", rule);
    return MCPC_RESOLVE_LOOSER;
  }
  return 0;
}

const char *mcpc_hints_describe(const int effective[4], char *buf,
                                size_t size) {
  const char *world =
      effective[MCPC_OPEN_WORLD] ? "open world" : "closed world";
  if (effective[MCPC_READ_ONLY])
    snprintf(buf, size, "read-only, %s", world);
  else
    snprintf(buf, size, "writes, %sdestructive, %sidempotent, %s",
             effective[MCPC_DESTRUCTIVE] ? "" : "not ",
             effective[MCPC_IDEMPOTENT] ? "" : "not ", world);
  return buf;
}
