/* report.c: the findings and the three ways of printing them. */
#define _POSIX_C_SOURCE 200809L
#include "report.h"

#include "hints.h"

#include <cjson/cJSON.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

static const char *const check_names[MCPC_CHECKS] = {"hints", "scopes",
                                                     "behaviour"};
static const char *const state_names[] = {"not run", "passed", "failed",
                                          "skipped"};

const char *mcpc_check_name(mcpc_check c) {
  return (unsigned)c < MCPC_CHECKS ? check_names[c] : "?";
}

static char *dup_or_null(const char *s, int *oom) {
  char *d;
  if (s == NULL)
    return NULL;
  d = strdup(s);
  if (d == NULL)
    *oom = 1;
  return d;
}

int mcpc_report_add(mcpc_report *r, mcpc_check check, const char *tool,
                    const char *hint, const char *grade, const char *evidence,
                    const char *fix) {
  mcpc_finding *f;
  int oom = 0;
  if (r->n_findings == r->cap_findings) {
    size_t cap = r->cap_findings ? r->cap_findings * 2 : 16;
    mcpc_finding *grown = realloc(r->findings, cap * sizeof *grown);
    if (grown == NULL) {
      r->oom = 1;
      return -1;
    }
    r->findings = grown;
    r->cap_findings = cap;
  }
  f = &r->findings[r->n_findings];
  f->check = check;
  f->resolved = 0;
  f->tool = dup_or_null(tool, &oom);
  f->hint = dup_or_null(hint, &oom);
  f->grade = dup_or_null(grade, &oom);
  f->evidence = dup_or_null(evidence, &oom);
  f->fix = dup_or_null(fix, &oom);
  r->n_findings++;
  if (oom)
    r->oom = 1;
  return oom ? -1 : 0;
}

/* Appends a formatted line to a list of strings. */
__attribute__((format(printf, 5, 0))) static int
push_line(mcpc_report *r, char ***list, size_t *n, size_t *cap, const char *fmt,
          va_list ap) {
  char line[1024];
  char *copy;
  vsnprintf(line, sizeof line, fmt, ap);
  if (*n == *cap) {
    size_t grown_cap = *cap ? *cap * 2 : 8;
    char **grown = realloc(*list, grown_cap * sizeof *grown);
    if (grown == NULL) {
      r->oom = 1;
      return -1;
    }
    *list = grown;
    *cap = grown_cap;
  }
  if ((copy = strdup(line)) == NULL) {
    r->oom = 1;
    return -1;
  }
  (*list)[(*n)++] = copy;
  return 0;
}

int mcpc_report_note(mcpc_report *r, const char *fmt, ...) {
  va_list ap;
  int rc;
  va_start(ap, fmt);
  rc = push_line(r, &r->notes, &r->n_notes, &r->cap_notes, fmt, ap);
  va_end(ap);
  return rc;
}

int mcpc_report_outside(mcpc_report *r, const char *fmt, ...) {
  va_list ap;
  int rc;
  va_start(ap, fmt);
  rc = push_line(r, &r->outside, &r->n_outside, &r->cap_outside, fmt, ap);
  va_end(ap);
  return rc;
}

static int same_tool(const char *a, const char *b) {
  return (a == NULL && b == NULL) || (a && b && strcmp(a, b) == 0);
}

size_t mcpc_report_count(const mcpc_report *r, mcpc_check check,
                         const char *tool) {
  size_t n = 0;
  for (size_t i = 0; i < r->n_findings; i++)
    if (r->findings[i].check == check && same_tool(r->findings[i].tool, tool))
      n++;
  return n;
}

void mcpc_report_settle(mcpc_report *r, mcpc_check check, size_t tool,
                        int ran) {
  mcpc_tool_row *t;
  if (tool >= r->n_tools)
    return;
  t = &r->tools[tool];
  if (mcpc_report_count(r, check, t->name) > 0)
    t->state[check] = MCPC_FAILED;
  else if (ran)
    t->state[check] = MCPC_PASSED;
}

/* ---- the table --------------------------------------------------------- */

static const char *hint_cell(int v) {
  switch (v) {
  case 1:
    return "true";
  case 0:
    return "false";
  case MCPC_HINT_ABSENT:
    return "-";
  default:
    return "?";
  }
}

static void print_tools(const mcpc_report *r, FILE *out, int color) {
  const char *red = color ? "\033[31m" : "", *green = color ? "\033[32m" : "";
  const char *off = color ? "\033[0m" : "";
  fprintf(out, "%-28s %-5s %-5s %-5s %-5s %-5s %-28s %-9s %-9s %s\n", "TOOL",
          "RO", "DESTR", "IDEMP", "OPEN", "RESOL", "TIER", "HINTS", "SCOPES",
          "BEHAVIOUR");
  for (size_t i = 0; i < r->n_tools; i++) {
    const mcpc_tool_row *t = &r->tools[i];
    fprintf(out, "%-28s %-5s %-5s %-5s %-5s %-5s %-28s", t->name,
            hint_cell(t->hint[0]), hint_cell(t->hint[1]), hint_cell(t->hint[2]),
            hint_cell(t->hint[3]), t->resolvable ? "yes" : "-", t->tier);
    for (int c = 0; c < MCPC_CHECKS; c++) {
      const char *col = t->state[c] == MCPC_FAILED   ? red
                        : t->state[c] == MCPC_PASSED ? green
                                                     : "";
      fprintf(out, " %s%-9s%s", col, state_names[t->state[c]], off);
    }
    fputc('\n', out);
  }
}

void mcpc_report_print(const mcpc_report *r, FILE *out, int color) {
  const char *bold = color ? "\033[1m" : "", *off = color ? "\033[0m" : "";
  const char *red = color ? "\033[31m" : "";
  fprintf(out, "%sserver%s %s %s, protocol %s over %s\n\n", bold, off,
          r->server_name ? r->server_name : "?",
          r->server_version ? r->server_version : "?",
          r->protocol_version ? r->protocol_version : "?",
          r->transport ? r->transport : "?");
  print_tools(r, out, color);
  if (r->n_notes) {
    fprintf(out, "\n%snotes%s\n", bold, off);
    for (size_t i = 0; i < r->n_notes; i++)
      fprintf(out, "  - %s\n", r->notes[i]);
  }
  if (r->n_outside) {
    fprintf(out, "\n%seffects outside any call%s\n", bold, off);
    for (size_t i = 0; i < r->n_outside; i++)
      fprintf(out, "  - %s\n", r->outside[i]);
  }
  fprintf(out, "\n%s%zu finding%s%s\n", bold, r->n_findings,
          r->n_findings == 1 ? "" : "s", off);
  for (size_t i = 0; i < r->n_findings; i++) {
    const mcpc_finding *f = &r->findings[i];
    fprintf(out, "%s[%s]%s %s: %s (%s%s)\n    evidence: %s\n    fix: %s\n", red,
            mcpc_check_name(f->check), off, f->tool ? f->tool : "(server)",
            f->hint, f->grade, f->resolved ? ", resolved hints" : "",
            f->evidence, f->fix);
  }
}

/* ---- JSON -------------------------------------------------------------- */

static cJSON *hints_json(const int v[4]) {
  cJSON *o = cJSON_CreateObject();
  for (int i = 0; o && i < 4; i++) {
    cJSON *item = v[i] >= 0 ? cJSON_CreateBool(v[i]) : cJSON_CreateNull();
    if (item == NULL || !cJSON_AddItemToObject(o, mcpc_hint_name(i), item)) {
      cJSON_Delete(item);
      cJSON_Delete(o);
      return NULL;
    }
  }
  return o;
}

/* Adds a copy of v (nothing when NULL) under key. */
static int add_copy(cJSON *o, const char *key, const cJSON *v) {
  cJSON *copy;
  if (v == NULL)
    return 0;
  copy = cJSON_Duplicate(v, 1);
  if (copy == NULL || !cJSON_AddItemToObject(o, key, copy)) {
    cJSON_Delete(copy);
    return -1;
  }
  return 0;
}

static cJSON *tool_json(const mcpc_tool_row *t) {
  cJSON *o = cJSON_CreateObject(), *checks;
  if (o == NULL || !cJSON_AddStringToObject(o, "name", t->name) ||
      !cJSON_AddItemToObject(o, "hints", hints_json(t->hint)) ||
      !cJSON_AddItemToObject(o, "effective", hints_json(t->effective)) ||
      !cJSON_AddStringToObject(o, "tier", t->tier) ||
      (checks = cJSON_AddObjectToObject(o, "checks")) == NULL) {
    cJSON_Delete(o);
    return NULL;
  }
  for (int c = 0; c < MCPC_CHECKS; c++)
    if (!cJSON_AddStringToObject(checks, check_names[c],
                                 state_names[t->state[c]])) {
      cJSON_Delete(o);
      return NULL;
    }
  if (!cJSON_AddBoolToObject(o, "resolvable", t->resolvable) ||
      add_copy(o, "effects", t->effects) < 0 ||
      add_copy(o, "resolutions", t->resolutions) < 0) {
    cJSON_Delete(o);
    return NULL;
  }
  return o;
}

static cJSON *finding_json(const mcpc_finding *f) {
  cJSON *o = cJSON_CreateObject();
  cJSON *tool = f->tool ? cJSON_CreateString(f->tool) : cJSON_CreateNull();
  if (o == NULL || tool == NULL ||
      !cJSON_AddStringToObject(o, "check", mcpc_check_name(f->check)) ||
      !cJSON_AddItemToObject(o, "tool", tool)) {
    cJSON_Delete(tool);
    cJSON_Delete(o);
    return NULL;
  }
  if (!cJSON_AddStringToObject(o, "hint", f->hint) ||
      !cJSON_AddStringToObject(o, "grade", f->grade) ||
      !cJSON_AddStringToObject(o, "evidence", f->evidence) ||
      !cJSON_AddStringToObject(o, "fix", f->fix) ||
      !cJSON_AddBoolToObject(o, "resolved", f->resolved)) {
    cJSON_Delete(o);
    return NULL;
  }
  return o;
}

static int add_strings(cJSON *o, const char *key, char *const *s, size_t n) {
  cJSON *a = cJSON_AddArrayToObject(o, key);
  if (a == NULL)
    return -1;
  for (size_t i = 0; i < n; i++) {
    cJSON *item = cJSON_CreateString(s[i]);
    if (item == NULL || !cJSON_AddItemToArray(a, item)) {
      cJSON_Delete(item);
      return -1;
    }
  }
  return 0;
}

static int add_or_null(cJSON *o, const char *key, const char *v) {
  cJSON *item = v ? cJSON_CreateString(v) : cJSON_CreateNull();
  if (item == NULL || !cJSON_AddItemToObject(o, key, item)) {
    cJSON_Delete(item);
    return -1;
  }
  return 0;
}

cJSON *mcpc_report_json(const mcpc_report *r, int exit_code) {
  cJSON *o = cJSON_CreateObject(), *server, *tools, *findings;
  if (o == NULL || (server = cJSON_AddObjectToObject(o, "server")) == NULL ||
      add_or_null(server, "name", r->server_name) < 0 ||
      add_or_null(server, "version", r->server_version) < 0 ||
      add_or_null(server, "protocolVersion", r->protocol_version) < 0 ||
      add_or_null(server, "transport", r->transport) < 0 ||
      (tools = cJSON_AddArrayToObject(o, "tools")) == NULL ||
      (findings = cJSON_AddArrayToObject(o, "findings")) == NULL)
    goto fail;
  for (size_t i = 0; i < r->n_tools; i++) {
    cJSON *t = tool_json(&r->tools[i]);
    if (t == NULL || !cJSON_AddItemToArray(tools, t)) {
      cJSON_Delete(t);
      goto fail;
    }
  }
  for (size_t i = 0; i < r->n_findings; i++) {
    cJSON *f = finding_json(&r->findings[i]);
    if (f == NULL || !cJSON_AddItemToArray(findings, f)) {
      cJSON_Delete(f);
      goto fail;
    }
  }
  if (add_strings(o, "outsideCalls", r->outside, r->n_outside) < 0 ||
      add_strings(o, "notes", r->notes, r->n_notes) < 0 ||
      !cJSON_AddNumberToObject(o, "exitCode", exit_code))
    goto fail;
  return o;
fail:
  cJSON_Delete(o);
  return NULL;
}

/* ---- JUnit XML --------------------------------------------------------- */

static void xml_text(FILE *out, const char *s) {
  for (; s && *s; s++) {
    unsigned char c = (unsigned char)*s;
    switch (c) {
    case '&':
      fputs("&amp;", out);
      break;
    case '<':
      fputs("&lt;", out);
      break;
    case '>':
      fputs("&gt;", out);
      break;
    case '"':
      fputs("&quot;", out);
      break;
    default:
      /* XML 1.0 has no place for other control characters. */
      if (c < 0x20 && c != '\t' && c != '\n')
        fputc('?', out);
      else
        fputc(c, out);
    }
  }
}

static void junit_case(const mcpc_report *r, FILE *out, int c, const char *tool,
                       mcpc_state state, int resolvable) {
  fputs("    <testcase classname=\"mcp-check.", out);
  fputs(check_names[c], out);
  fputs("\" name=\"", out);
  xml_text(out, tool ? tool : "(server)");
  fputs("\">\n", out);
  if (resolvable)
    fputs("      <properties><property name=\"resolvable\" value=\"true\"/>"
          "</properties>\n",
          out);
  for (size_t i = 0; i < r->n_findings; i++) {
    const mcpc_finding *f = &r->findings[i];
    if ((int)f->check != c || !same_tool(f->tool, tool))
      continue;
    fputs("      <failure type=\"", out);
    xml_text(out, f->hint);
    fputs("\" message=\"", out);
    xml_text(out, f->evidence);
    fputs("\">", out);
    xml_text(out, f->grade);
    fputs(f->resolved ? " (resolved hints): " : ": ", out);
    xml_text(out, f->evidence);
    fputs("\nfix: ", out);
    xml_text(out, f->fix);
    fputs("</failure>\n", out);
  }
  if (state == MCPC_SKIPPED || state == MCPC_NOT_RUN)
    fputs("      <skipped/>\n", out);
  fputs("    </testcase>\n", out);
}

int mcpc_report_junit(const mcpc_report *r, FILE *out) {
  fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites "
        "name=\"mcp-check\">\n",
        out);
  for (int c = 0; c < MCPC_CHECKS; c++) {
    size_t failures = 0, server = mcpc_report_count(r, c, NULL);
    for (size_t i = 0; i < r->n_findings; i++)
      failures += (int)r->findings[i].check == c;
    fprintf(out, "  <testsuite name=\"%s\" tests=\"%zu\" failures=\"%zu\">\n",
            check_names[c], r->n_tools + 1, failures);
    junit_case(r, out, c, NULL, server ? MCPC_FAILED : MCPC_PASSED, 0);
    for (size_t i = 0; i < r->n_tools; i++)
      junit_case(r, out, c, r->tools[i].name, r->tools[i].state[c],
                 r->tools[i].resolvable);
    fputs("  </testsuite>\n", out);
  }
  fputs("</testsuites>\n", out);
  return ferror(out) ? -1 : 0;
}

static void free_lines(char **s, size_t n) {
  for (size_t i = 0; i < n; i++)
    free(s[i]);
  free(s);
}

void mcpc_report_clear(mcpc_report *r) {
  for (size_t i = 0; i < r->n_findings; i++) {
    mcpc_finding *f = &r->findings[i];
    free(f->tool);
    free(f->hint);
    free(f->grade);
    free(f->evidence);
    free(f->fix);
  }
  free(r->findings);
  for (size_t i = 0; i < r->n_tools; i++) {
    free(r->tools[i].name);
    cJSON_Delete(r->tools[i].effects);
    cJSON_Delete(r->tools[i].resolutions);
  }
  free(r->tools);
  free_lines(r->notes, r->n_notes);
  free_lines(r->outside, r->n_outside);
  free(r->server_name);
  free(r->server_version);
  free(r->protocol_version);
  memset(r, 0, sizeof *r);
}
