/* The --calls reader: one JSON object a line, read with fixed bounds so a
 * wrong file (a binary, a huge single line) fails with its line number
 * instead of exhausting memory. */
#include "calls.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What read_line found. */
enum { LINE_OK = 0, LINE_EOF = 1, LINE_LONG = -1, LINE_NUL = -2 };

/* Reads one line of f into buf (cap bytes, cap > MCPC_CALLS_MAX_LINE),
 * without its newline or a trailing CR. At a line too long it consumes the
 * rest of the line so the caller can still name it. */
static int read_line(FILE *f, char *buf, size_t *len) {
  size_t n = 0;
  int c = EOF;
  int status = LINE_OK;
  while ((c = fgetc(f)) != EOF && c != '\n') {
    if (c == '\0')
      status = LINE_NUL;
    if (n < MCPC_CALLS_MAX_LINE)
      buf[n] = (char)c;
    else
      status = status == LINE_OK ? LINE_LONG : status;
    n++;
  }
  if (c == EOF && n == 0)
    return LINE_EOF;
  if (status != LINE_OK)
    return status;
  if (n > 0 && buf[n - 1] == '\r')
    n--;
  buf[n] = '\0';
  *len = n;
  return LINE_OK;
}

static void say(char *why, size_t size, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

static void say(char *why, size_t size, const char *fmt, ...) {
  if (size == 0)
    return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(why, size, fmt, ap);
  va_end(ap);
}

/* A line to skip: empty, blank, or a comment. */
static int skipped(const char *s) {
  s += strspn(s, " \t");
  return *s == '\0' || *s == '#';
}

/* Checks one parsed line and moves it into *c. Returns NULL or what is
 * wrong with it. */
static const char *take(cJSON *v, mcpc_call *c) {
  if (!cJSON_IsObject(v))
    return "not a JSON object";
  cJSON *name = NULL;
  cJSON *args = NULL;
  for (cJSON *m = v->child; m; m = m->next) {
    if (strcmp(m->string, "name") == 0 && !name)
      name = m;
    else if (strcmp(m->string, "arguments") == 0 && !args)
      args = m;
    else
      return "unknown or repeated member (only \"name\" and \"arguments\")";
  }
  if (!cJSON_IsString(name) || name->valuestring[0] == '\0')
    return "\"name\" must be a non-empty string";
  if (args && !cJSON_IsObject(args))
    return "\"arguments\" must be an object";
  c->name = strdup(name->valuestring);
  if (args)
    c->arguments = cJSON_DetachItemViaPointer(v, args);
  else
    c->arguments = cJSON_CreateObject();
  if (!c->name || !c->arguments)
    return "out of memory";
  return NULL;
}

/* Appends the call on the line buf to *calls. Returns 0 or -1 with why. */
static int add(const char *path, unsigned line, const char *buf,
               mcpc_call **calls, size_t *n, size_t *cap, char *why,
               size_t size) {
  if (*n == MCPC_CALLS_MAX) {
    say(why, size, "%s:%u: more than %u calls", path, line, MCPC_CALLS_MAX);
    return -1;
  }
  if (*n == *cap) {
    size_t next = *cap ? *cap * 2 : 16;
    mcpc_call *grown = realloc(*calls, next * sizeof *grown);
    if (!grown) {
      say(why, size, "%s:%u: out of memory", path, line);
      return -1;
    }
    *calls = grown;
    *cap = next;
  }
  const char *end = NULL;
  cJSON *v = cJSON_ParseWithOpts(buf, &end, 1);
  if (!v) {
    say(why, size, "%s:%u: not valid JSON (near column %zu)", path, line,
        (size_t)(end ? end - buf : 0) + 1);
    return -1;
  }
  mcpc_call *c = &(*calls)[*n];
  memset(c, 0, sizeof *c);
  c->line = line;
  const char *bad = take(v, c);
  cJSON_Delete(v);
  if (bad) {
    free(c->name);
    cJSON_Delete(c->arguments);
    say(why, size, "%s:%u: %s", path, line, bad);
    return -1;
  }
  (*n)++;
  return 0;
}

/* Reads every line of f; 0 or -1 with why. */
static int read_all(FILE *f, const char *path, char *buf, mcpc_call **calls,
                    size_t *n, char *why, size_t size) {
  size_t cap = 0;
  for (unsigned line = 1;; line++) {
    size_t len = 0;
    int r = read_line(f, buf, &len);
    if (r == LINE_EOF)
      break;
    if (r == LINE_LONG) {
      say(why, size, "%s:%u: line longer than %u bytes", path, line,
          MCPC_CALLS_MAX_LINE);
      return -1;
    }
    if (r == LINE_NUL) {
      say(why, size, "%s:%u: NUL byte in line", path, line);
      return -1;
    }
    if (skipped(buf))
      continue;
    if (add(path, line, buf, calls, n, &cap, why, size) != 0)
      return -1;
  }
  if (ferror(f)) {
    say(why, size, "%s: read error", path);
    return -1;
  }
  return 0;
}

int mcpc_calls_read(const char *path, mcpc_call **out, size_t *n, char *why,
                    size_t size) {
  *out = NULL;
  *n = 0;
  FILE *f = fopen(path, "r");
  if (!f) {
    say(why, size, "%s: %s", path, strerror(errno));
    return -1;
  }
  char *buf = malloc(MCPC_CALLS_MAX_LINE + 1);
  mcpc_call *calls = NULL;
  size_t count = 0;
  int rc = -1;
  if (!buf)
    say(why, size, "%s: out of memory", path);
  else
    rc = read_all(f, path, buf, &calls, &count, why, size);
  free(buf);
  fclose(f);
  if (rc != 0) {
    mcpc_calls_free(calls, count);
    return -1;
  }
  if (count == 0) {
    free(calls);
    calls = NULL;
  }
  *out = calls;
  *n = count;
  return 0;
}

void mcpc_calls_free(mcpc_call *c, size_t n) {
  for (size_t i = 0; c && i < n; i++) {
    free(c[i].name);
    cJSON_Delete(c[i].arguments);
  }
  free(c);
}
