/* A minimal valid instance of a tool's inputSchema, so mcp-check can call a
 * tool nobody wrote a --calls line for.
 *
 * Two halves: a generator that builds a candidate from the keywords, and a
 * small checker of the same keywords that accepts or rejects it (and every
 * "default", "examples" or "enum" value the schema offers, which are
 * preferred because the author chose them). Anything the checker cannot
 * decide (a pattern outside the subset below, an unknown keyword) is left
 * to the server's own validation: the instance is the best effort of a
 * client, not a proof. Every recursion is bounded by MAX_DEPTH, which also
 * ends $ref cycles; every generated size by MAX_ITEMS and MAX_LEN.
 *
 * Patterns are ECMA-262; the checker translates the common subset (\d \w
 * \s and their negations, classes, groups, (?:, lazy quantifiers) to POSIX
 * extended expressions and matches with regexec; the generator reads the
 * same subset and takes the first alternative and the fewest repetitions.
 * Lookarounds, backreferences, \b and \p are refused. */
#include "instance.h"

#include <math.h>
#include <regex.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <arpa/inet.h>

#define MAX_DEPTH 32
#define MAX_ITEMS 64
#define MAX_LEN 4096
#define MAX_PATTERN 1024
#define MAX_STEPS 200000ul

typedef struct ctx {
  const cJSON *root;
  char *why;
  size_t size;
  int said;       /* why holds the first reason */
  char path[256]; /* JSON pointer of the instance being built */
  size_t plen;
  unsigned long steps; /* gen and check calls so far, up to MAX_STEPS */
  const cJSON *outer;  /* the object schema whose subschema is being built */
} ctx;

/* ---- small helpers ------------------------------------------------------ */

static const cJSON *kw(const cJSON *s, const char *name) {
  return cJSON_IsObject(s) ? cJSON_GetObjectItemCaseSensitive(s, name) : NULL;
}

/* Latches the first reason generation failed, with where. */
static void fail(ctx *c, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

static void fail(ctx *c, const char *fmt, ...) {
  if (c->said || c->size == 0)
    return;
  c->said = 1;
  char msg[256];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  if (c->plen)
    snprintf(c->why, c->size, "at %s: %s", c->path, msg);
  else
    snprintf(c->why, c->size, "%s", msg);
}

static size_t push(ctx *c, const char *seg) {
  size_t old = c->plen;
  int n = snprintf(c->path + old, sizeof c->path - old, "/%s", seg);
  if (n > 0)
    c->plen =
        old + (size_t)n < sizeof c->path ? old + (size_t)n : sizeof c->path - 1;
  return old;
}

static void pop(ctx *c, size_t old) {
  c->plen = old;
  c->path[old] = '\0';
}

static size_t utf8_len(const char *s) {
  size_t n = 0;
  for (; *s; s++)
    n += ((unsigned char)*s & 0xC0) != 0x80;
  return n;
}

static int is_integer(const cJSON *v) {
  return cJSON_IsNumber(v) && isfinite(v->valuedouble) &&
         floor(v->valuedouble) == v->valuedouble;
}

/* A number rounded to 15 significant digits, so 7 * 0.01 prints 0.07. */
static cJSON *number(double d) {
  char buf[64];
  snprintf(buf, sizeof buf, "%.15g", d);
  return cJSON_CreateNumber(strtod(buf, NULL));
}

/* ---- $ref ---------------------------------------------------------------- */

/* The subschema of the document named name by "$anchor" (2020-12) or by
 * an "$id" of "#name" (draft-07), searched depth first; NULL if none. */
static const cJSON *anchor(const cJSON *at, const char *name, int depth) {
  if (depth > MAX_DEPTH || !(cJSON_IsObject(at) || cJSON_IsArray(at)))
    return NULL;
  const cJSON *a = kw(at, "$anchor");
  const cJSON *id = kw(at, "$id");
  if ((cJSON_IsString(a) && strcmp(a->valuestring, name) == 0) ||
      (cJSON_IsString(id) && id->valuestring[0] == '#' &&
       strcmp(id->valuestring + 1, name) == 0))
    return at;
  for (const cJSON *m = at->child; m; m = m->next) {
    /* Values that are data, not schemas, name nothing. */
    if (m->string &&
        (strcmp(m->string, "enum") == 0 || strcmp(m->string, "const") == 0 ||
         strcmp(m->string, "default") == 0 ||
         strcmp(m->string, "examples") == 0))
      continue;
    const cJSON *found = anchor(m, name, depth + 1);
    if (found)
      return found;
  }
  return NULL;
}

/* Follows a reference within the document: "#", a JSON pointer after "#",
 * or "#name" for an anchor. NULL for anything else (other documents are
 * never fetched). */
static const cJSON *resolve(const ctx *c, const char *ref) {
  if (ref[0] != '#')
    return NULL;
  if (ref[1] != '/' && ref[1] != '\0')
    return anchor(c->root, ref + 1, 0);
  const cJSON *at = c->root;
  const char *p = ref + 1;
  while (*p == '/' && at) {
    char seg[128];
    size_t n = 0;
    for (p++; *p && *p != '/' && n + 1 < sizeof seg; p++) {
      char ch = *p;
      if (ch == '~' && (p[1] == '0' || p[1] == '1'))
        ch = *++p == '0' ? '~' : '/';
      seg[n++] = ch;
    }
    seg[n] = '\0';
    if (cJSON_IsArray(at)) {
      char *end = NULL;
      long i = strtol(seg, &end, 10);
      at = *end == '\0' && n > 0 ? cJSON_GetArrayItem(at, (int)i) : NULL;
    } else {
      at = kw(at, seg);
    }
  }
  return *p == '\0' ? at : NULL;
}

/* ---- patterns ------------------------------------------------------------ */

typedef struct out {
  char *s;
  size_t n, cap;
  int bad;
} out;

static void put(out *o, const char *text) {
  size_t len = strlen(text);
  if (o->n + len >= o->cap) {
    o->bad = 1;
    return;
  }
  memcpy(o->s + o->n, text, len + 1);
  o->n += len;
}

/* The POSIX text of an ECMA-262 class escape (d w s D W S), in or out of a
 * bracket; NULL when letter is none of them. */
static const char *class_escape(char letter, int in_bracket) {
  static const char *const table[][3] = {
      {"d", "[0-9]", "0-9"},
      {"w", "[A-Za-z0-9_]", "A-Za-z0-9_"},
      {"s", "[[:space:]]", "[:space:]"},
      {"D", "[^0-9]", NULL},
      {"W", "[^A-Za-z0-9_]", NULL},
      {"S", "[^[:space:]]", NULL},
  };
  for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
    if (table[i][0][0] == letter)
      return table[i][in_bracket ? 2 : 1];
  return NULL;
}

/* Translates one escape at p (after the backslash), outside a class;
 * returns the bytes of the pattern used, 0 when it is outside the subset. */
static size_t ere_escape(const char *p, out *o) {
  const char *cls = class_escape(*p, 0);
  if (cls) {
    put(o, cls);
    return 1;
  }
  char lit[3] = {0};
  if (*p == 'n' || *p == 't' || *p == 'r') {
    lit[0] = *p == 'n' ? '\n' : *p == 't' ? '\t' : '\r';
  } else if (*p != '\0' && strchr(".^$|?*+()[]{}\\/-:,=!<>#&~'\"@%", *p)) {
    lit[0] = strchr(".^$|?*+()[]{}\\", *p) ? '\\' : *p;
    lit[1] = lit[0] == '\\' ? *p : '\0';
  } else {
    return 0;
  }
  put(o, lit);
  return 1;
}

/* The literal an escape stands for inside a class ('\0' outside the
 * subset). */
static char class_literal(char e) {
  if (e == 'n' || e == 't' || e == 'r')
    return e == 'n' ? '\n' : e == 't' ? '\t' : '\r';
  return e != '\0' && strchr("]\\-^.[/{}()*+?|$:,=!<>#&~'\"@%", e) ? e : '\0';
}

/* The specials of a class, which POSIX wants in fixed places: ']' first,
 * '^' anywhere but first, '-' last. */
typedef struct specials {
  int rbracket, caret, hyphen;
} specials;

/* Reads one item of a class at *pp (a character, a range, \d \w \s) into
 * body or sp; 0, or -1 outside the subset. */
static int class_item(const char **pp, out *body, specials *sp) {
  const char *p = *pp;
  char ch = *p++;
  if (ch == '\\') {
    const char *cls = class_escape(*p, 1);
    if (cls) {
      put(body, cls);
      *pp = p + 1;
      return 0;
    }
    if ((ch = class_literal(*p++)) == '\0')
      return -1;
  }
  char hi = *p == '-' ? p[1] : '\0';
  if (hi != '\0' && hi != ']') {
    /* An escaped range end, or a special as its start, is not kept. */
    if (hi == '\\' || strchr("]^-[", ch))
      return -1;
    char range[4] = {ch, '-', hi, 0};
    put(body, range);
    *pp = p + 2;
    return 0;
  }
  if (ch == '[' && *p != '\0' && strchr(":.=", *p))
    return -1;
  sp->rbracket |= ch == ']';
  sp->caret |= ch == '^';
  sp->hyphen |= ch == '-';
  if (!strchr("]^-", ch)) {
    char one[2] = {ch, 0};
    put(body, one);
  }
  *pp = p;
  return 0;
}

/* Translates the class at p (after '[') to a POSIX bracket expression;
 * returns the bytes used up to its ']', 0 outside the subset. */
static size_t ere_bracket(const char *p, out *o) {
  const char *start = p;
  int negated = *p == '^';
  p += negated;
  char buf[512];
  out body = {buf, 0, sizeof buf, 0};
  buf[0] = '\0';
  specials sp = {0, 0, 0};
  while (*p && *p != ']')
    if (class_item(&p, &body, &sp) != 0)
      return 0;
  if (*p != ']' || body.bad)
    return 0;
  if (body.n == 0 && !sp.rbracket && !sp.hyphen && !sp.caret)
    return 0; /* [] matches nothing, [^] anything: not in the subset */
  if (body.n == 0 && !sp.rbracket && !sp.hyphen && !negated) {
    put(o, "\\^"); /* [\^]: "[^]" would be a negation */
    return (size_t)(p + 1 - start);
  }
  /* With nothing before it, '-' goes first so '^' is not. */
  int lead_hyphen = body.n == 0 && !sp.rbracket && sp.hyphen;
  put(o, negated ? "[^" : "[");
  put(o, sp.rbracket ? "]" : lead_hyphen ? "-" : "");
  put(o, buf);
  put(o, sp.caret ? "^" : "");
  put(o, sp.hyphen && !lead_hyphen ? "-" : "");
  put(o, "]");
  return (size_t)(p + 1 - start);
}

/* ECMA-262 pattern to POSIX ERE; 0, or -1 outside the subset. */
static int ere(const char *p, out *o) {
  while (*p && !o->bad) {
    size_t used = 1;
    if (*p == '\\') {
      used += ere_escape(p + 1, o);
      if (used == 1)
        return -1;
    } else if (*p == '[') {
      used += ere_bracket(p + 1, o);
      if (used == 1)
        return -1;
    } else if (*p == '(' && p[1] == '?') {
      if (p[2] != ':')
        return -1;
      put(o, "(");
      used = 3;
    } else {
      char one[2] = {*p, 0};
      put(o, one);
      /* A lazy quantifier matches the same strings as the greedy one. */
      if (strchr("*+?}", *p) && p[1] == '?')
        used = 2;
    }
    p += used;
  }
  return o->bad ? -1 : 0;
}

/* Whether s matches pattern: 1, 0, or -1 when the pattern is outside the
 * subset (the caller decides what that means). */
static int pattern_match(const char *pattern, const char *s) {
  char buf[4 * MAX_PATTERN];
  out o = {buf, 0, sizeof buf, 0};
  buf[0] = '\0';
  if (strlen(pattern) > MAX_PATTERN || ere(pattern, &o) != 0)
    return -1;
  regex_t re;
  if (regcomp(&re, buf, REG_EXTENDED | REG_NOSUB) != 0)
    return -1;
  int r = regexec(&re, s, 0, NULL, 0) == 0;
  regfree(&re);
  return r;
}

/* The generator's reading of a pattern: one function per level. */
typedef struct pgen {
  const char *p;
  out *o;
  int bad;
} pgen;

static void pg_alt(pgen *g, int depth);

/* Skips to the end of the current group (or pattern), after the first
 * alternative was taken. */
static void pg_skip_alternatives(pgen *g) {
  int level = 0;
  for (; *g->p; g->p++) {
    if (*g->p == '\\' && g->p[1]) {
      g->p++;
    } else if (*g->p == '(') {
      level++;
    } else if (*g->p == ')') {
      if (level-- == 0)
        return;
    }
  }
}

/* Reads a bracket class at g->p (after '['); returns one character in it. */
static char pg_class(pgen *g) {
  int negated = *g->p == '^';
  g->p += negated;
  char first = 0;
  const char *set = g->p;
  if (*g->p == ']')
    g->p++;
  while (*g->p && *g->p != ']')
    g->p += *g->p == '\\' && g->p[1] ? 2 : 1;
  if (!*g->p) {
    g->bad = 1;
    return 0;
  }
  size_t len = (size_t)(g->p - set);
  g->p++;
  if (negated) {
    /* A character the class does not name; the final match decides. */
    for (const char *c = "aZ0_x9 "; *c; c++)
      if (!memchr(set, *c, len))
        return *c;
    g->bad = 1;
    return 0;
  }
  if (set[0] == '\\') {
    first = set[1] == 'd' ? '0' : set[1] == 'w' ? 'a' : set[1] == 's' ? ' ' : 0;
    if (!first && set[1] && !strchr("DWSbBpPu", set[1]))
      first = set[1];
  } else {
    first = set[0];
  }
  if (!first)
    g->bad = 1;
  return first;
}

/* One atom: appends one instance of it to buf; returns 0 or sets bad. */
static void pg_atom(pgen *g, char *buf, size_t cap, int depth) {
  char ch = 0;
  if (*g->p == '(') {
    g->p += g->p[1] == '?' && g->p[2] == ':' ? 3 : 1;
    if (*g->p == '?') {
      g->bad = 1;
      return;
    }
    out sub = {buf, 0, cap, 0};
    buf[0] = '\0';
    out *saved = g->o;
    g->o = &sub;
    pg_alt(g, depth + 1);
    g->o = saved;
    if (*g->p != ')' || sub.bad)
      g->bad = 1;
    else
      g->p++;
    return;
  }
  if (*g->p == '[') {
    g->p++;
    ch = pg_class(g);
  } else if (*g->p == '\\') {
    char e = g->p[1];
    ch = e == 'd' ? '0' : e == 'w' ? 'a' : e == 's' ? ' ' : 0;
    if (!ch && e && strchr("DWS", e))
      ch = e == 'D' ? 'a' : e == 'W' ? '-' : 'a';
    if (!ch && e && strchr(".^$|?*+()[]{}\\/-:,=!<>#&~'\"@%", e))
      ch = e;
    if (!ch)
      g->bad = 1;
    g->p += e ? 2 : 1;
  } else if (*g->p == '.') {
    ch = 'a';
    g->p++;
  } else {
    ch = *g->p++;
  }
  buf[0] = ch;
  buf[1] = '\0';
}

/* The fewest repetitions the quantifier at g->p allows (1 when there is
 * none), consuming it. */
static long pg_quantifier(pgen *g) {
  long min = 1;
  if (*g->p == '*' || *g->p == '?') {
    min = 0;
    g->p++;
  } else if (*g->p == '+') {
    g->p++;
  } else if (*g->p == '{') {
    char *end = NULL;
    min = strtol(g->p + 1, &end, 10);
    const char *close = strchr(g->p, '}');
    if (end == g->p + 1 || !close || min < 0 || min > MAX_LEN) {
      g->bad = 1;
      return 0;
    }
    g->p = close + 1;
  }
  if (*g->p == '?')
    g->p++;
  return min;
}

/* A sequence up to '|', ')' or the end; at '|' the rest of the group's
 * alternatives are skipped. */
static void pg_alt(pgen *g, int depth) {
  if (depth > MAX_DEPTH) {
    g->bad = 1;
    return;
  }
  while (*g->p && *g->p != ')' && !g->bad) {
    if (*g->p == '|') {
      pg_skip_alternatives(g);
      return;
    }
    if (*g->p == '^' || *g->p == '$') {
      g->p++;
      continue;
    }
    char piece[MAX_LEN + 1];
    pg_atom(g, piece, sizeof piece, depth);
    long reps = g->bad ? 0 : pg_quantifier(g);
    for (long i = 0; i < reps && !g->bad; i++) {
      put(g->o, piece);
      g->bad |= g->o->bad;
    }
  }
}

/* A string matching pattern, checked by pattern_match, at least min code
 * points long (padded with 'a' at the end, then the start); NULL if the
 * subset cannot make one. */
static char *pattern_string(const char *pattern, size_t min, size_t max) {
  char *buf = malloc(MAX_LEN + 1);
  if (!buf || strlen(pattern) > MAX_PATTERN)
    return free(buf), NULL;
  buf[0] = '\0';
  out o = {buf, 0, MAX_LEN + 1, 0};
  pgen g = {pattern, &o, 0};
  pg_alt(&g, 0);
  if (g.bad || *g.p != '\0')
    return free(buf), NULL;
  for (int side = 0; side < 2 && utf8_len(buf) < min; side++) {
    size_t need = min - utf8_len(buf);
    if (o.n + need > MAX_LEN)
      break;
    char *t = malloc(o.n + need + 1);
    if (!t)
      break;
    if (side == 0)
      memcpy(t, buf, o.n), memset(t + o.n, 'a', need);
    else
      memset(t, 'a', need), memcpy(t + need, buf, o.n);
    t[o.n + need] = '\0';
    if (pattern_match(pattern, t) == 1) {
      free(buf);
      return t;
    }
    free(t);
  }
  size_t len = utf8_len(buf);
  if (len < min || len > max || pattern_match(pattern, buf) != 1)
    return free(buf), NULL;
  return buf;
}

/* ---- formats ------------------------------------------------------------- */

static const struct {
  const char *name, *example;
} formats[] = {
    {"date-time", "2025-01-31T09:30:00Z"},
    {"date", "2025-01-31"},
    {"time", "09:30:00Z"},
    {"email", "name@example.com"},
    {"idn-email", "name@example.com"},
    {"hostname", "example.com"},
    {"idn-hostname", "example.com"},
    {"ipv4", "192.0.2.1"},
    {"ipv6", "2001:db8::1"},
    {"uri", "https://example.com/path"},
    {"iri", "https://example.com/path"},
    {"uri-reference", "https://example.com/path"},
    {"iri-reference", "https://example.com/path"},
    {"uri-template", "https://example.com/{id}"},
    {"uuid", "123e4567-e89b-12d3-a456-426614174000"},
    {"duration", "P1D"},
    {"json-pointer", "/a"},
    {"relative-json-pointer", "0"},
    {"regex", "a"},
};

/* The variant-th example of a format (distinct items of an array): the
 * example with a number worked into it where the format allows; NULL when
 * it does not. */
static char *format_variant(const char *name, int variant) {
  /* The number goes between head and tail: in decimal, or as digits says
   * (1: decimal from 1, as the example ends in 1; 2: two decimal digits
   * from 1, for a day; 'x': hex from 1; 'u': twelve hex digits, the last
   * group of a UUID); mod bounds it before the 1 is added. */
  static const struct {
    const char *name, *head, *tail;
    char digits;
    unsigned mod;
  } table[] = {
      {"email", "name", "@example.com", 0, 0},
      {"idn-email", "name", "@example.com", 0, 0},
      {"hostname", "h", ".example.com", 0, 0},
      {"idn-hostname", "h", ".example.com", 0, 0},
      {"uri", "https://example.com/path/", "", 0, 0},
      {"iri", "https://example.com/path/", "", 0, 0},
      {"uri-reference", "https://example.com/path/", "", 0, 0},
      {"iri-reference", "https://example.com/path/", "", 0, 0},
      {"ipv4", "192.0.2.", "", 1, 255},
      {"ipv6", "2001:db8::", "", 'x', 65535},
      {"uuid", "123e4567-e89b-12d3-a456-", "", 'u', 0},
      {"date", "2025-01-", "", 2, 28},
      {"date-time", "2025-01-", "T09:30:00Z", 2, 28},
  };
  for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
    if (strcmp(table[i].name, name) != 0)
      continue;
    unsigned v = (unsigned)variant;
    if (table[i].mod)
      v %= table[i].mod;
    char num[16];
    if (table[i].digits == 1)
      snprintf(num, sizeof num, "%u", 1 + v);
    else if (table[i].digits == 2)
      snprintf(num, sizeof num, "%02u", 1 + v);
    else if (table[i].digits == 'x')
      snprintf(num, sizeof num, "%x", 1 + v);
    else if (table[i].digits == 'u')
      snprintf(num, sizeof num, "%012x", v);
    else
      snprintf(num, sizeof num, "%u", v);
    char buf[96];
    snprintf(buf, sizeof buf, "%s%s%s", table[i].head, num, table[i].tail);
    return strdup(buf);
  }
  return NULL;
}

static const char *format_example(const char *name) {
  for (size_t i = 0; i < sizeof formats / sizeof formats[0]; i++)
    if (strcmp(formats[i].name, name) == 0)
      return formats[i].example;
  return NULL;
}

static int digits(const char *s, const char *shape) {
  for (; *shape; s++, shape++)
    if (*shape == '9' ? !(*s >= '0' && *s <= '9') : *s != *shape)
      return 0;
  return 1;
}

/* A light check of the formats validators assert, so a "default" that is
 * not one is not preferred; the generated examples pass it. */
static int format_ok(const char *format, const char *s) {
  unsigned char addr[16];
  if (strcmp(format, "date") == 0)
    return strlen(s) == 10 && digits(s, "9999-99-99");
  if (strcmp(format, "date-time") == 0)
    return strlen(s) >= 20 && digits(s, "9999-99-99T99:99:99") &&
           strchr("Zz+-.", s[19]);
  if (strcmp(format, "email") == 0) {
    const char *at = strchr(s, '@');
    return at && at != s && at[1] && !strchr(at + 1, '@');
  }
  if (strcmp(format, "uri") == 0) {
    size_t scheme = strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQ"
                              "RSTUVWXYZ0123456789+-.");
    return scheme > 0 && s[scheme] == ':' && !strchr(s, ' ');
  }
  if (strcmp(format, "uuid") == 0)
    return strlen(s) == 36 && s[8] == '-' && s[13] == '-' && s[18] == '-' &&
           s[23] == '-' && strspn(s, "0123456789abcdefABCDEF-") == 36;
  if (strcmp(format, "ipv4") == 0)
    return inet_pton(AF_INET, s, addr) == 1;
  if (strcmp(format, "ipv6") == 0)
    return inet_pton(AF_INET6, s, addr) == 1;
  return 1;
}

/* ---- the checker --------------------------------------------------------- */

static int check(ctx *c, const cJSON *s, const cJSON *v, int depth);

static int type_is(const char *t, const cJSON *v) {
  if (strcmp(t, "null") == 0)
    return cJSON_IsNull(v);
  if (strcmp(t, "boolean") == 0)
    return cJSON_IsBool(v);
  if (strcmp(t, "object") == 0)
    return cJSON_IsObject(v);
  if (strcmp(t, "array") == 0)
    return cJSON_IsArray(v);
  if (strcmp(t, "string") == 0)
    return cJSON_IsString(v);
  if (strcmp(t, "number") == 0)
    return cJSON_IsNumber(v);
  if (strcmp(t, "integer") == 0)
    return is_integer(v);
  return 0;
}

static int check_type(const cJSON *s, const cJSON *v) {
  const cJSON *t = kw(s, "type");
  if (cJSON_IsString(t))
    return type_is(t->valuestring, v);
  if (!cJSON_IsArray(t))
    return 1;
  for (const cJSON *e = t->child; e; e = e->next)
    if (cJSON_IsString(e) && type_is(e->valuestring, v))
      return 1;
  return 0;
}

static int check_enum(const cJSON *s, const cJSON *v) {
  const cJSON *k = kw(s, "const");
  if (k && !cJSON_Compare(k, v, 1))
    return 0;
  const cJSON *e = kw(s, "enum");
  if (!cJSON_IsArray(e))
    return 1;
  for (const cJSON *x = e->child; x; x = x->next)
    if (cJSON_Compare(x, v, 1))
      return 1;
  return 0;
}

/* The bounds of a number: both the 2020-12 form (exclusiveMinimum a
 * number) and the draft-04 form (a boolean beside minimum). */
typedef struct bounds {
  double lo, hi;
  int lox, hix;
} bounds;

static bounds bounds_of(const cJSON *s) {
  bounds b = {-INFINITY, INFINITY, 0, 0};
  const cJSON *x = kw(s, "minimum");
  if (cJSON_IsNumber(x))
    b.lo = x->valuedouble;
  x = kw(s, "exclusiveMinimum");
  if (cJSON_IsTrue(x))
    b.lox = 1;
  else if (cJSON_IsNumber(x) && x->valuedouble >= b.lo)
    b.lo = x->valuedouble, b.lox = 1;
  x = kw(s, "maximum");
  if (cJSON_IsNumber(x))
    b.hi = x->valuedouble;
  x = kw(s, "exclusiveMaximum");
  if (cJSON_IsTrue(x))
    b.hix = 1;
  else if (cJSON_IsNumber(x) && x->valuedouble <= b.hi)
    b.hi = x->valuedouble, b.hix = 1;
  return b;
}

static int multiple(double d, double m) {
  double q = d / m;
  return fabs(q - round(q)) <= 1e-9 * fmax(1.0, fabs(q));
}

static int check_number(const cJSON *s, const cJSON *v) {
  if (!cJSON_IsNumber(v))
    return 1;
  double d = v->valuedouble;
  bounds b = bounds_of(s);
  if (d < b.lo || (b.lox && d == b.lo) || d > b.hi || (b.hix && d == b.hi))
    return 0;
  const cJSON *m = kw(s, "multipleOf");
  return !(cJSON_IsNumber(m) && m->valuedouble > 0 &&
           !multiple(d, m->valuedouble));
}

static int check_string(const cJSON *s, const cJSON *v) {
  if (!cJSON_IsString(v))
    return 1;
  size_t len = utf8_len(v->valuestring);
  const cJSON *x = kw(s, "minLength");
  if (cJSON_IsNumber(x) && (double)len < x->valuedouble)
    return 0;
  x = kw(s, "maxLength");
  if (cJSON_IsNumber(x) && (double)len > x->valuedouble)
    return 0;
  x = kw(s, "format");
  if (cJSON_IsString(x) && !format_ok(x->valuestring, v->valuestring))
    return 0;
  x = kw(s, "pattern");
  /* A pattern outside the subset cannot be decided here: a default or an
   * example the author wrote is trusted, a generated string never is
   * (the generator refuses such patterns itself). */
  return !cJSON_IsString(x) ||
         pattern_match(x->valuestring, v->valuestring) != 0;
}

/* The schema of array element i: prefixItems (or draft-07's items array),
 * then items (or additionalItems). NULL: anything. */
static const cJSON *item_schema(const cJSON *s, int i) {
  const cJSON *prefix = kw(s, "prefixItems");
  const cJSON *items = kw(s, "items");
  const cJSON *rest = items;
  if (cJSON_IsArray(items)) {
    prefix = items;
    rest = kw(s, "additionalItems");
  }
  if (cJSON_IsArray(prefix) && i < cJSON_GetArraySize(prefix))
    return cJSON_GetArrayItem(prefix, i);
  return rest;
}

static int check_unique(const cJSON *v) {
  for (const cJSON *a = v->child; a; a = a->next)
    for (const cJSON *b = a->next; b; b = b->next)
      if (cJSON_Compare(a, b, 1))
        return 0;
  return 1;
}

static int check_array(ctx *c, const cJSON *s, const cJSON *v, int depth) {
  if (!cJSON_IsArray(v))
    return 1;
  int n = cJSON_GetArraySize(v);
  const cJSON *x = kw(s, "minItems");
  if (cJSON_IsNumber(x) && n < x->valuedouble)
    return 0;
  x = kw(s, "maxItems");
  if (cJSON_IsNumber(x) && n > x->valuedouble)
    return 0;
  if (cJSON_IsTrue(kw(s, "uniqueItems")) && !check_unique(v))
    return 0;
  int i = 0;
  int contained = 0;
  const cJSON *contains = kw(s, "contains");
  for (const cJSON *e = v->child; e; e = e->next, i++) {
    const cJSON *sub = item_schema(s, i);
    if (sub && !check(c, sub, e, depth + 1))
      return 0;
    contained += contains && check(c, contains, e, depth + 1);
  }
  return !contains || contained > 0;
}

/* Whether key is named by properties or matches a patternProperties key,
 * checking its value against each schema that applies. */
static int check_member(ctx *c, const cJSON *s, const cJSON *m, int depth) {
  int named = 0;
  const cJSON *sub = kw(kw(s, "properties"), m->string);
  if (sub) {
    named = 1;
    if (!check(c, sub, m, depth + 1))
      return 0;
  }
  const cJSON *pp = kw(s, "patternProperties");
  for (const cJSON *p = pp ? pp->child : NULL; p; p = p->next) {
    if (pattern_match(p->string, m->string) == 1) {
      named = 1;
      if (!check(c, p, m, depth + 1))
        return 0;
    }
  }
  const cJSON *add = kw(s, "additionalProperties");
  return named || !add || check(c, add, m, depth + 1);
}

/* dependentRequired, or draft-07 dependencies in its array form. */
static const cJSON *dependents(const cJSON *s, const char *key) {
  const cJSON *d = kw(kw(s, "dependentRequired"), key);
  if (!d) {
    d = kw(kw(s, "dependencies"), key);
    d = cJSON_IsArray(d) ? d : NULL;
  }
  return d;
}

static int check_object(ctx *c, const cJSON *s, const cJSON *v, int depth) {
  if (!cJSON_IsObject(v))
    return 1;
  int n = cJSON_GetArraySize(v);
  const cJSON *x = kw(s, "minProperties");
  if (cJSON_IsNumber(x) && n < x->valuedouble)
    return 0;
  x = kw(s, "maxProperties");
  if (cJSON_IsNumber(x) && n > x->valuedouble)
    return 0;
  const cJSON *req = kw(s, "required");
  for (const cJSON *r = cJSON_IsArray(req) ? req->child : NULL; r; r = r->next)
    if (cJSON_IsString(r) && !kw(v, r->valuestring))
      return 0;
  for (const cJSON *m = v->child; m; m = m->next) {
    if (!check_member(c, s, m, depth))
      return 0;
    const cJSON *d = dependents(s, m->string);
    for (const cJSON *r = d ? d->child : NULL; r; r = r->next)
      if (cJSON_IsString(r) && !kw(v, r->valuestring))
        return 0;
  }
  return 1;
}

static int check_logic(ctx *c, const cJSON *s, const cJSON *v, int depth) {
  const cJSON *x = kw(s, "$ref");
  if (cJSON_IsString(x)) {
    const cJSON *t = resolve(c, x->valuestring);
    if (!t || !check(c, t, v, depth + 1))
      return 0;
  }
  x = kw(s, "allOf");
  for (const cJSON *b = x ? x->child : NULL; b; b = b->next)
    if (!check(c, b, v, depth + 1))
      return 0;
  x = kw(s, "anyOf");
  if (cJSON_IsArray(x)) {
    int any = 0;
    for (const cJSON *b = x->child; b && !any; b = b->next)
      any = check(c, b, v, depth + 1);
    if (!any)
      return 0;
  }
  x = kw(s, "oneOf");
  if (cJSON_IsArray(x)) {
    int count = 0;
    for (const cJSON *b = x->child; b; b = b->next)
      count += check(c, b, v, depth + 1);
    if (count != 1)
      return 0;
  }
  x = kw(s, "not");
  if (x && check(c, x, v, depth + 1))
    return 0;
  x = kw(s, "if");
  if (x) {
    const cJSON *branch = kw(s, check(c, x, v, depth + 1) ? "then" : "else");
    if (branch && !check(c, branch, v, depth + 1))
      return 0;
  }
  return 1;
}

/* The keywords of s alone, without its subschemas' combinators. */
static int check_own(ctx *c, const cJSON *s, const cJSON *v, int depth) {
  return check_type(s, v) && check_enum(s, v) && check_number(s, v) &&
         check_string(s, v) && check_array(c, s, v, depth) &&
         check_object(c, s, v, depth);
}

static int check(ctx *c, const cJSON *s, const cJSON *v, int depth) {
  if (cJSON_IsBool(s))
    return cJSON_IsTrue(s);
  if (!cJSON_IsObject(s))
    return 1;
  if (depth > MAX_DEPTH || ++c->steps > MAX_STEPS)
    return 0;
  return check_own(c, s, v, depth) && check_logic(c, s, v, depth);
}

/* ---- the generator ------------------------------------------------------- */

static cJSON *gen(ctx *c, const cJSON *s, int depth, int variant);

static cJSON *gen_number(ctx *c, const cJSON *s, int integer, int variant) {
  bounds b = bounds_of(s);
  const cJSON *mj = kw(s, "multipleOf");
  double m = cJSON_IsNumber(mj) && mj->valuedouble > 0 ? mj->valuedouble : 0;
  double step = m ? m : 1;
  double d = 0;
  if (d < b.lo || (b.lox && d == b.lo)) {
    d = m ? ceil(b.lo / m) * m : integer ? ceil(b.lo) : b.lo;
    if (b.lox && d <= b.lo)
      d = m || integer                         ? d + step
          : isfinite(b.hi) && b.hi - b.lo <= 1 ? (b.lo + b.hi) / 2
                                               : b.lo + 1;
  } else if (d > b.hi || (b.hix && d == b.hi)) {
    d = m ? floor(b.hi / m) * m : integer ? floor(b.hi) : b.hi;
    if (b.hix && d >= b.hi)
      d = m || integer                         ? d - step
          : isfinite(b.lo) && b.hi - b.lo <= 1 ? (b.lo + b.hi) / 2
                                               : b.hi - 1;
    step = -step;
  }
  /* Variants (distinct array items) go away from the bound, or down when
   * up leaves the range. */
  double up = d + variant * step;
  d = up > b.hi || (b.hix && up == b.hi) ? d - variant * step : up;
  /* A fractional multipleOf of an integer: walk to the first integer. */
  for (int i = 0; integer && floor(d) != d && i < 1000; i++)
    d += step;
  cJSON *v = number(d);
  if (v && check_number(s, v) && (!integer || is_integer(v)))
    return v;
  cJSON_Delete(v);
  fail(c, "no %s satisfies the bounds and multipleOf",
       integer ? "integer" : "number");
  return NULL;
}

/* A string of n code points of letter. */
static char *fill(size_t n, char letter) {
  char *t = malloc(n + 1);
  if (t) {
    memset(t, letter, n);
    t[n] = '\0';
  }
  return t;
}

/* The format's example, padded to min code points where the format allows
 * it (a longer path, a longer local part). */
static char *format_string(const char *format, size_t min) {
  const char *ex = format_example(format);
  if (!ex)
    return NULL;
  size_t len = strlen(ex);
  if (len >= min)
    return strdup(ex);
  int tail = strcmp(format, "uri") == 0 || strcmp(format, "iri") == 0 ||
             strcmp(format, "uri-reference") == 0;
  int head = strcmp(format, "email") == 0 || strcmp(format, "hostname") == 0;
  if ((!tail && !head) || min > MAX_LEN)
    return NULL;
  char *t = fill(min, 'a');
  if (t)
    memcpy(tail ? t : t + (min - len), ex, len);
  return t;
}

static size_t size_kw(const cJSON *s, const char *name, size_t dflt) {
  const cJSON *x = kw(s, name);
  if (!cJSON_IsNumber(x) || x->valuedouble < 0)
    return dflt;
  return x->valuedouble > (double)MAX_LEN * 4 ? MAX_LEN * 4
                                              : (size_t)x->valuedouble;
}

static cJSON *gen_string(ctx *c, const cJSON *s, int variant) {
  size_t min = size_kw(s, "minLength", 0);
  size_t max = size_kw(s, "maxLength", (size_t)-1);
  const cJSON *pattern = kw(s, "pattern");
  const cJSON *format = kw(s, "format");
  char *t = NULL;
  if (min > MAX_LEN) {
    fail(c, "minLength %zu is more than mcp-check builds (%d)", min, MAX_LEN);
    return NULL;
  }
  if (cJSON_IsString(pattern)) {
    t = pattern_string(pattern->valuestring, min, max);
    if (!t) {
      fail(c,
           "cannot build a string for pattern \"%s\": give the schema a "
           "default or examples, or the call in --calls",
           pattern->valuestring);
      return NULL;
    }
  } else if (cJSON_IsString(format) && format_example(format->valuestring)) {
    t = variant ? format_variant(format->valuestring, variant) : NULL;
    if (!t || utf8_len(t) < min) {
      free(t);
      t = format_string(format->valuestring, min);
    }
  } else {
    size_t n = min > 0 ? min : max > 0 ? 1 : 0;
    t = fill(n, (char)('a' + variant % 26));
    if (t && variant >= 26 && n > 0)
      t[0] = (char)('A' + variant / 26 % 26);
  }
  cJSON *v = t ? cJSON_CreateString(t) : NULL;
  free(t);
  if (v && check_string(s, v))
    return v;
  cJSON_Delete(v);
  fail(c, "no string satisfies minLength, maxLength and format together");
  return NULL;
}

static cJSON *gen_array(ctx *c, const cJSON *s, int depth, int variant) {
  size_t n = size_kw(s, "minItems", 0);
  const cJSON *contains = kw(s, "contains");
  if (n > MAX_ITEMS) {
    fail(c, "minItems %zu is more than mcp-check builds (%d)", n, MAX_ITEMS);
    return NULL;
  }
  if (contains && n == 0)
    n = 1;
  int unique = cJSON_IsTrue(kw(s, "uniqueItems"));
  cJSON *a = cJSON_CreateArray();
  for (size_t i = 0; a && i < n; i++) {
    char seg[24];
    snprintf(seg, sizeof seg, "%zu", i);
    size_t old = push(c, seg);
    const cJSON *sub = i == 0 && contains ? contains : item_schema(s, (int)i);
    int var = unique ? (int)i + variant : variant;
    const cJSON *outer = c->outer;
    c->outer = NULL;
    cJSON *e = sub ? gen(c, sub, depth + 1, var) : cJSON_CreateNumber(var);
    c->outer = outer;
    pop(c, old);
    if (!e) {
      cJSON_Delete(a);
      return NULL;
    }
    cJSON_AddItemToArray(a, e);
  }
  return a;
}

/* Adds member key to o, generated from the schemas that apply to it. */
static int gen_member(ctx *c, const cJSON *s, cJSON *o, const char *key,
                      int depth, int variant) {
  const cJSON *sub = kw(kw(s, "properties"), key);
  if (!sub) {
    const cJSON *pp = kw(s, "patternProperties");
    for (const cJSON *p = pp ? pp->child : NULL; p && !sub; p = p->next)
      if (pattern_match(p->string, key) == 1)
        sub = p;
  }
  if (!sub && c->outer != s)
    sub = kw(kw(c->outer, "properties"), key);
  if (!sub)
    sub = kw(s, "additionalProperties");
  if (cJSON_IsFalse(sub)) {
    fail(c, "\"%s\" is required but no property schema allows it", key);
    return -1;
  }
  size_t old = push(c, key);
  const cJSON *outer = c->outer;
  c->outer = NULL;
  cJSON *v = sub ? gen(c, sub, depth + 1, variant) : cJSON_CreateString("a");
  c->outer = outer;
  pop(c, old);
  if (!v)
    return -1;
  cJSON_AddItemToObject(o, key, v);
  return 0;
}

/* Adds the required members, their dependents (to a fixed point, bounded),
 * then optional properties in order until minProperties. */
static int gen_members(ctx *c, const cJSON *s, cJSON *o, int depth,
                       int variant) {
  const cJSON *req = kw(s, "required");
  for (const cJSON *r = cJSON_IsArray(req) ? req->child : NULL; r; r = r->next)
    if (cJSON_IsString(r) && !kw(o, r->valuestring) &&
        gen_member(c, s, o, r->valuestring, depth, variant) != 0)
      return -1;
  for (int round = 0; round < MAX_ITEMS; round++) {
    int added = 0;
    for (const cJSON *m = o->child; m; m = m->next) {
      const cJSON *d = dependents(s, m->string);
      for (const cJSON *r = d ? d->child : NULL; r; r = r->next) {
        if (!cJSON_IsString(r) || kw(o, r->valuestring))
          continue;
        if (gen_member(c, s, o, r->valuestring, depth, variant) != 0)
          return -1;
        added = 1;
      }
    }
    if (!added)
      break;
  }
  size_t min = size_kw(s, "minProperties", 0);
  const cJSON *props = kw(s, "properties");
  for (const cJSON *p = props ? props->child : NULL;
       p && (size_t)cJSON_GetArraySize(o) < min; p = p->next)
    if (!kw(o, p->string) &&
        gen_member(c, s, o, p->string, depth, variant) != 0)
      return -1;
  for (size_t i = 0; (size_t)cJSON_GetArraySize(o) < min && i < MAX_ITEMS;
       i++) {
    char key[24];
    snprintf(key, sizeof key, "p%zu", i);
    if (!kw(o, key) && gen_member(c, s, o, key, depth, variant) != 0)
      return -1;
  }
  return 0;
}

static cJSON *gen_object(ctx *c, const cJSON *s, int depth, int variant) {
  cJSON *o = cJSON_CreateObject();
  if (o && gen_members(c, s, o, depth, variant) != 0) {
    cJSON_Delete(o);
    return NULL;
  }
  return o;
}

static cJSON *gen_type(ctx *c, const cJSON *s, const char *t, int depth,
                       int variant) {
  if (strcmp(t, "null") == 0)
    return cJSON_CreateNull();
  if (strcmp(t, "boolean") == 0)
    return cJSON_CreateBool(variant % 2);
  if (strcmp(t, "integer") == 0 || strcmp(t, "number") == 0)
    return gen_number(c, s, t[0] == 'i', variant);
  if (strcmp(t, "string") == 0)
    return gen_string(c, s, variant);
  if (strcmp(t, "array") == 0)
    return gen_array(c, s, depth, variant);
  if (strcmp(t, "object") == 0)
    return gen_object(c, s, depth, variant);
  fail(c, "unknown type \"%s\"", t);
  return NULL;
}

/* The type the keywords imply when "type" is absent; NULL: any. */
static const char *implied_type(const cJSON *s) {
  static const struct {
    const char *keyword, *type;
  } table[] = {
      {"properties", "object"},
      {"required", "object"},
      {"additionalProperties", "object"},
      {"minProperties", "object"},
      {"patternProperties", "object"},
      {"items", "array"},
      {"prefixItems", "array"},
      {"minItems", "array"},
      {"contains", "array"},
      {"minLength", "string"},
      {"maxLength", "string"},
      {"pattern", "string"},
      {"format", "string"},
      {"minimum", "number"},
      {"maximum", "number"},
      {"exclusiveMinimum", "number"},
      {"exclusiveMaximum", "number"},
      {"multipleOf", "number"},
  };
  for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
    if (kw(s, table[i].keyword))
      return table[i].type;
  return NULL;
}

/* The type names s allows, at most cap, null last (a client would rather
 * send something); 0 when s says nothing of type. */
static int type_names(const cJSON *s, const char **names, int cap) {
  const cJSON *t = kw(s, "type");
  int n = 0;
  if (cJSON_IsString(t)) {
    names[n++] = t->valuestring;
  } else if (cJSON_IsArray(t)) {
    for (int pass = 0; pass < 2; pass++)
      for (const cJSON *e = t->child; e && n < cap; e = e->next)
        if (cJSON_IsString(e) && (strcmp(e->valuestring, "null") == 0) == pass)
          names[n++] = e->valuestring;
  } else if ((names[0] = implied_type(s)) != NULL) {
    n = 1;
  }
  return n;
}

/* A value from the keywords of s itself: each allowed type in turn, the
 * first the own keywords accept. NULL with *none set when s says nothing
 * of type. */
static cJSON *gen_own(ctx *c, const cJSON *s, int depth, int variant,
                      int *none) {
  const char *names[8];
  int n = type_names(s, names, 8);
  *none = n == 0;
  for (int i = 0; i < n; i++) {
    cJSON *v = gen_type(c, s, names[i], depth, variant);
    if (v && check_own(c, s, v, depth))
      return v;
    cJSON_Delete(v);
  }
  if (n > 0)
    fail(c, "no value of the allowed types satisfies the schema");
  return NULL;
}

/* b merged into a: members of both objects (recursively), else b. Frees
 * what it does not return. */
static cJSON *merge(cJSON *a, cJSON *b) {
  if (!a)
    return b;
  if (!b)
    return a;
  if (!cJSON_IsObject(a) || !cJSON_IsObject(b)) {
    cJSON_Delete(a);
    return b;
  }
  while (b->child) {
    cJSON *m = cJSON_DetachItemViaPointer(b, b->child);
    cJSON *have = cJSON_GetObjectItemCaseSensitive(a, m->string);
    if (!have) {
      cJSON_AddItemToObject(a, m->string, m);
      continue;
    }
    cJSON *detached = cJSON_DetachItemViaPointer(a, have);
    char *key = strdup(m->string);
    cJSON *joined = merge(detached, m);
    if (key && joined)
      cJSON_AddItemToObject(a, key, joined);
    else
      cJSON_Delete(joined);
    free(key);
  }
  cJSON_Delete(b);
  return a;
}

/* The schema's own "default", then each of its "examples", the first the
 * whole schema accepts. */
static cJSON *gen_offered(ctx *c, const cJSON *s, int depth) {
  const cJSON *d = kw(s, "default");
  if (d && check(c, s, d, depth))
    return cJSON_Duplicate(d, 1);
  const cJSON *ex = kw(s, "examples");
  for (const cJSON *e = cJSON_IsArray(ex) ? ex->child : NULL; e; e = e->next)
    if (check(c, s, e, depth))
      return cJSON_Duplicate(e, 1);
  return NULL;
}

/* const, else the enum values (from the variant-th on), the first the
 * whole schema accepts. *listed says whether s had any. */
static cJSON *gen_listed(ctx *c, const cJSON *s, int depth, int variant,
                         int *listed) {
  const cJSON *k = kw(s, "const");
  const cJSON *e = kw(s, "enum");
  *listed = k != NULL || cJSON_IsArray(e);
  if (k)
    return check(c, s, k, depth) ? cJSON_Duplicate(k, 1) : NULL;
  int n = cJSON_IsArray(e) ? cJSON_GetArraySize(e) : 0;
  for (int i = 0; i < n; i++) {
    const cJSON *x = cJSON_GetArrayItem(e, (i + variant) % n);
    if (check(c, s, x, depth))
      return cJSON_Duplicate(x, 1);
  }
  return NULL;
}

/* The branch combinators: the base merged with each anyOf / oneOf branch's
 * value in turn, the first the whole schema accepts. */
static cJSON *gen_branches(ctx *c, const cJSON *s, cJSON *base, int depth,
                           int variant) {
  static const char *const names[] = {"anyOf", "oneOf"};
  for (int k = 0; k < 2; k++) {
    const cJSON *list = kw(s, names[k]);
    if (!cJSON_IsArray(list))
      continue;
    for (const cJSON *b = list->child; b; b = b->next) {
      cJSON *v = gen(c, b, depth + 1, variant);
      cJSON *w = v ? merge(base ? cJSON_Duplicate(base, 1) : NULL, v) : NULL;
      if (w && check(c, s, w, depth)) {
        cJSON_Delete(base);
        return w;
      }
      cJSON_Delete(w);
    }
    cJSON_Delete(base);
    fail(c, "no branch of %s gives a value the whole schema accepts", names[k]);
    return NULL;
  }
  return base;
}

/* Builds the subschema sub's value and merges it into *v; 0, or -1 with
 * *v freed. */
static int merge_gen(ctx *c, const cJSON *sub, cJSON **v, int depth,
                     int variant) {
  cJSON *r = gen(c, sub, depth + 1, variant);
  if (!r) {
    cJSON_Delete(*v);
    *v = NULL;
    return -1;
  }
  *v = merge(*v, r);
  return 0;
}

/* The rest of the value after the own keywords: $ref and allOf merged in,
 * then a branch of anyOf / oneOf, then then or else as "if" decides. */
static cJSON *gen_parts(ctx *c, const cJSON *s, cJSON *v, int depth,
                        int variant) {
  const cJSON *ref = kw(s, "$ref");
  if (cJSON_IsString(ref)) {
    const cJSON *t = resolve(c, ref->valuestring);
    if (!t) {
      fail(c, "cannot resolve $ref \"%s\" within the schema", ref->valuestring);
      cJSON_Delete(v);
      return NULL;
    }
    if (merge_gen(c, t, &v, depth, variant) != 0)
      return NULL;
  }
  const cJSON *all = kw(s, "allOf");
  for (const cJSON *b = all ? all->child : NULL; b; b = b->next)
    if (merge_gen(c, b, &v, depth, variant) != 0)
      return NULL;
  v = gen_branches(c, s, v, depth, variant);
  const cJSON *cond = kw(s, "if");
  if (v && cond) {
    const cJSON *b = kw(s, check(c, cond, v, depth + 1) ? "then" : "else");
    if (b && merge_gen(c, b, &v, depth, variant) != 0)
      return NULL;
  }
  return v;
}

/* The value from the keywords. The subschemas of an object schema
 * (a branch saying only "required": ["phone"]) build their members from
 * the properties of s, which c->outer lends them. *none: s constrains
 * nothing. */
static cJSON *gen_keywords(ctx *c, const cJSON *s, int depth, int variant,
                           int *none) {
  cJSON *v = gen_own(c, s, depth, variant, none);
  if (!v && !*none)
    return NULL;
  static const char *const parts[] = {"$ref", "allOf", "anyOf", "oneOf", "if"};
  for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++)
    if (kw(s, parts[i]))
      *none = 0;
  const cJSON *outer = c->outer;
  if (kw(s, "properties"))
    c->outer = s;
  v = gen_parts(c, s, v, depth, variant);
  c->outer = outer;
  return v;
}

static cJSON *gen(ctx *c, const cJSON *s, int depth, int variant) {
  if (++c->steps > MAX_STEPS) {
    fail(c, "schema too costly to build a value for");
    return NULL;
  }
  if (depth > MAX_DEPTH) {
    fail(c, "schema nested more than %d deep (or a $ref cycle)", MAX_DEPTH);
    return NULL;
  }
  if (cJSON_IsBool(s)) {
    if (cJSON_IsFalse(s))
      fail(c, "schema false accepts nothing");
    if (cJSON_IsFalse(s))
      return NULL;
    return depth == 0 ? cJSON_CreateObject() : cJSON_CreateString("a");
  }
  if (!cJSON_IsObject(s)) {
    fail(c, "schema is neither an object nor a boolean");
    return NULL;
  }
  int listed = 0;
  cJSON *v = variant == 0 ? gen_offered(c, s, depth) : NULL;
  if (!v)
    v = gen_listed(c, s, depth, variant, &listed);
  if (v)
    return v;
  if (listed) {
    fail(c, "no const or enum value satisfies the rest of the schema");
    return NULL;
  }
  /* A few variants: "not", "oneOf" and "uniqueItems" reject the first
   * value built but often accept the next. */
  for (int tries = 0; tries < 4; tries++) {
    int none = 0;
    v = gen_keywords(c, s, depth, variant + tries, &none);
    if (!v && none)
      v = depth == 0 ? cJSON_CreateObject() : cJSON_CreateString("a");
    if (!v)
      break;
    if (check(c, s, v, depth))
      return v;
    cJSON_Delete(v);
  }
  fail(c, "the value built does not satisfy every keyword together");
  return NULL;
}

cJSON *mcpc_instance(const cJSON *schema, char *why, size_t size) {
  ctx c = {.root = schema, .why = why, .size = size};
  if (size > 0)
    why[0] = '\0';
  cJSON *v = gen(&c, schema, 0, 0);
  if (!v)
    fail(&c, "cannot build a value (out of memory)");
  return v;
}
