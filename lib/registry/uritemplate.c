/* RFC 6570 URI templates, matched against URIs in linear time.
 *
 * Compiling checks the template in one pass into parts (literals and
 * expressions) and variables, then decides once, for every expression, what
 * ends its match: the literal after it, searched with a Knuth-Morris-Pratt
 * table so the search never steps back in the URI, or the leading
 * characters of the expressions directly after it. Everything lives in one
 * allocation. Matching is a single left-to-right walk over the parts with
 * no retries; uritemplate.h gives the rules.
 *
 * The rules a plain resource URI meets live here too, beside the only
 * other code that reads URIs, so that registering a resource and naming
 * one share a single definition of each rule. */
#include <cjson/cJSON.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "registry.h"

/* ---- the compiled form --------------------------------------------------- */

enum { PART_LITERAL, PART_EXPR };

/* What ends an expression's match. */
enum {
  FOLLOW_END,     /* the end of the URI (or a stop character) */
  FOLLOW_LITERAL, /* the literal part lit (or a stop character) */
  FOLLOW_EXPR     /* a stop character: a required expression follows */
};

/* One literal or expression of the template. */
typedef struct part {
  unsigned char kind;     /* PART_* */
  unsigned char op;       /* expressions: the operator, 0 for none */
  unsigned char follow;   /* expressions: FOLLOW_* */
  bool any_stop;          /* expressions: stop has a bit set */
  size_t at;              /* byte offset in the template, for messages */
  size_t off, len;        /* literals: the bytes, at text + off */
  size_t var0, nvars;     /* expressions: the variables, at vars + var0 */
  size_t lit;             /* FOLLOW_LITERAL: the literal's part index */
  unsigned char stop[32]; /* expressions: bit set of the leading characters
                             of the expressions directly after it */
} part;

typedef struct var {
  const char *name; /* NUL-terminated */
  size_t len;
  unsigned prefix; /* the ":N" modifier; 0 = none */
  bool explode;
} var;

struct mcp__uritemplate {
  part *parts;
  size_t nparts;
  var *vars;
  size_t nvars;
  uint16_t *kmp; /* failure tables: kmp[off + i] for literal byte off + i */
  char *text;    /* the template, NUL-terminated */
};

#define MAX_VARS MCP__URITEMPLATE_MAX_VARS
#define MAX_LEN MCP__URITEMPLATE_MAX_LEN
/* Each expression has a variable, and literals alternate with expressions
 * (the count is checked one expression late, hence the slack). */
#define MAX_PARTS (2 * MAX_VARS + 3)

/* How an operator expands (RFC 6570 appendix A), read backwards. */
typedef struct opinfo {
  char lead;     /* the character the expansion starts with; 0 = none */
  char sep;      /* between items or name=value pairs */
  bool named;    /* ; ? &: name=value pairs, and optional */
  bool reserved; /* + #: values may hold any character */
} opinfo;

static opinfo op_info(unsigned char op) {
  switch (op) {
  case '+':
    return (opinfo){0, ',', false, true};
  case '#':
    return (opinfo){'#', ',', false, true};
  case '.':
    return (opinfo){'.', '.', false, false};
  case '/':
    return (opinfo){'/', '/', false, false};
  case ';':
    return (opinfo){';', ';', true, false};
  case '?':
    return (opinfo){'?', '&', true, false};
  case '&':
    return (opinfo){'&', '&', true, false};
  default:
    return (opinfo){0, ',', false, false};
  }
}

/* Can an expression beginning with lead directly follow one of operator op?
 * Only when lead cannot occur in op's match after its own leading
 * character: values of the unreserved operators hold no raw "/", "?" or
 * "#", but may hold ".", ";" and "&"; "/" separates "/" items. Values of
 * "+" and "#" may hold anything, and simply end at the first lead. */
static bool can_follow(unsigned char op, char lead) {
  if (op_info(op).reserved)
    return true;
  return (lead == '/' && op != '/') || lead == '?' || lead == '#';
}

static int hexval(unsigned char c) {
  if (c >= '0' && c <= '9')
    return c - '0';
  if (c >= 'A' && c <= 'F')
    return c - 'A' + 10;
  if (c >= 'a' && c <= 'f')
    return c - 'a' + 10;
  return -1;
}

/* Length (1 to 4) of the valid UTF-8 sequence at s, with its code point in
 * *cp, or 0 when there is none: overlong forms, surrogates and values past
 * U+10FFFF are not valid. */
static size_t utf8_seq(const unsigned char *s, const unsigned char *end,
                       unsigned *cp) {
  unsigned c = s[0];
  size_t n;
  unsigned min;
  if (c < 0x80) {
    *cp = c;
    return 1;
  }
  if (c >= 0xC2 && c <= 0xDF)
    n = 2, min = 0x80, c &= 0x1F;
  else if (c >= 0xE0 && c <= 0xEF)
    n = 3, min = 0x800, c &= 0x0F;
  else if (c >= 0xF0 && c <= 0xF4)
    n = 4, min = 0x10000, c &= 0x07;
  else
    return 0;
  if ((size_t)(end - s) < n)
    return 0;
  for (size_t i = 1; i < n; i++) {
    if ((s[i] & 0xC0) != 0x80)
      return 0;
    c = c << 6 | (s[i] & 0x3F);
  }
  if (c < min || c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF))
    return 0;
  *cp = c;
  return n;
}

/* ---- compiling ----------------------------------------------------------- */

typedef struct parser {
  const char *s; /* the template, n bytes and a NUL */
  size_t n;
  part parts[MAX_PARTS];
  size_t nparts;
  var vars[MAX_VARS]; /* names point into s until they are copied */
  size_t nvars;
  size_t names; /* bytes the names take, NULs included */
  char *err;
  size_t errlen;
} parser;

/* Writes err; returns MCP_EINVAL so callers can `return fail(...)`. */
static int fail(parser *ps, size_t at, const char *what) {
  if (ps->err != NULL)
    mcp__fmt(ps->err, ps->errlen, "%s (at byte %zu of the template)", what, at);
  return MCP_EINVAL;
}

/* Refuses bytes that are not UTF-8 and control characters anywhere. */
static int check_text(parser *ps) {
  const unsigned char *s = (const unsigned char *)ps->s, *end = s + ps->n;
  for (const unsigned char *p = s; p < end;) {
    unsigned cp;
    size_t k = utf8_seq(p, end, &cp);
    if (k == 0)
      return fail(ps, (size_t)(p - s), "bytes that are not UTF-8");
    if (cp < 0x20 || (cp >= 0x7F && cp <= 0x9F))
      return fail(ps, (size_t)(p - s), "a control character");
    p += k;
  }
  return 0;
}

/* Is c allowed in a literal (RFC 6570 section 2.1, "%" aside)? Bytes of
 * non-ASCII characters are: check_text has vetted them. */
static bool literal_char(unsigned char c) {
  return c >= 0x80 ||
         (c > 0x20 && c < 0x7F && strchr("\"%'<>\\^`{|}", c) == NULL);
}

/* Is a percent-encoded octet at s (NUL-terminated)? */
static bool pct_at(const char *s) {
  return s[0] == '%' && hexval((unsigned char)s[1]) >= 0 &&
         hexval((unsigned char)s[2]) >= 0;
}

/* Length of the varchar at s (ALPHA / DIGIT / "_" / pct-encoded), or 0. */
static size_t varchar_at(const char *s) {
  unsigned char c = (unsigned char)s[0];
  if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
      (c >= '0' && c <= '9') || c == '_')
    return 1;
  return pct_at(s) ? 3 : 0;
}

static part *add_part(parser *ps, int kind, size_t at) {
  part *p = &ps->parts[ps->nparts++];
  memset(p, 0, sizeof *p);
  p->kind = (unsigned char)kind;
  p->at = at;
  return p;
}

/* A literal from s[*i] to the next "{" or the end. */
static int parse_literal(parser *ps, size_t *i) {
  const char *s = ps->s;
  size_t start = *i, j = *i;
  while (j < ps->n && s[j] != '{') {
    unsigned char c = (unsigned char)s[j];
    if (c == '}')
      return fail(ps, j, "unbalanced braces: a \"}\" without \"{\"");
    if (c == '%') {
      if (!pct_at(s + j))
        return fail(ps, j, "a \"%\" not followed by two hexadecimal digits");
      j += 3;
      continue;
    }
    if (!literal_char(c))
      return fail(ps, j, "a character RFC 6570 does not allow in a literal");
    j++;
  }
  part *p = add_part(ps, PART_LITERAL, start);
  p->off = start;
  p->len = j - start;
  *i = j;
  return 0;
}

/* Explains why the character at s[i] cannot continue an expression that
 * began at open. */
static int bad_in_expr(parser *ps, size_t open, size_t i) {
  switch (ps->s[i]) {
  case '\0':
    return fail(ps, open, "unbalanced braces: a \"{\" without \"}\"");
  case '{':
    return fail(ps, i, "a \"{\" inside an expression");
  case '%':
    return fail(ps, i, "a \"%\" not followed by two hexadecimal digits");
  case '.':
    return fail(ps, i, "a \".\" not between two characters of a name");
  default:
    return fail(ps, i, "a character not allowed in a variable name");
  }
}

/* One varspec at s[*i]: a name and an optional modifier. */
static int parse_varspec(parser *ps, size_t open, unsigned char op,
                         size_t *nexplode, size_t *i) {
  const char *s = ps->s;
  size_t start = *i, j = *i, k = varchar_at(s + j);
  if (k == 0) {
    if (s[j] == ',' || s[j] == '}')
      return fail(ps, j, "an empty variable name");
    return bad_in_expr(ps, open, j);
  }
  for (j += k;; j += k) {
    if ((k = varchar_at(s + j)) != 0)
      continue;
    if (s[j] != '.' || (k = varchar_at(s + j + 1)) == 0)
      break;
    k++;
  }
  size_t len = j - start;
  var v = {.name = s + start, .len = len};
  if (s[j] == ':') {
    size_t d = ++j;
    while (s[j] >= '0' && s[j] <= '9' && j - d < 5)
      v.prefix = v.prefix * 10 + (unsigned)(s[j++] - '0');
    if (j == d || s[d] == '0' || j - d > 4)
      return fail(ps, d, "a prefix length that is not 1 to 9999");
  } else if (s[j] == '*') {
    v.explode = true;
    j++;
  }
  if (s[j] != ',' && s[j] != '}') {
    if (v.prefix || v.explode)
      return fail(ps, j, "a modifier not followed by \",\" or \"}\"");
    return bad_in_expr(ps, open, j);
  }
  if (ps->nvars == MAX_VARS)
    return fail(ps, start, "more than 32 variables");
  for (size_t q = 0; q < ps->nvars; q++) {
    if (ps->vars[q].len == len && memcmp(ps->vars[q].name, v.name, len) == 0) {
      char what[120];
      snprintf(what, sizeof what, "the variable \"%.*s\" appears twice",
               (int)(len < 64 ? len : 64), v.name);
      return fail(ps, start, what);
    }
  }
  if (v.explode && !op_info(op).named && ++*nexplode > 1)
    return fail(ps, start,
                "two exploded variables in one expression cannot be told "
                "apart");
  ps->vars[ps->nvars++] = v;
  ps->names += len + 1;
  *i = j;
  return 0;
}

/* An expression from the "{" at s[*i] to its "}". */
static int parse_expr(parser *ps, size_t *i) {
  const char *s = ps->s;
  size_t open = *i, j = *i + 1;
  unsigned char op = 0;
  if (s[j] != '\0' && strchr("+#./;?&", s[j]) != NULL)
    op = (unsigned char)s[j++];
  else if (s[j] != '\0' && strchr("=,!@|", s[j]) != NULL)
    return fail(ps, j, "an operator reserved for future use");
  part *e = add_part(ps, PART_EXPR, open);
  e->op = op;
  e->var0 = ps->nvars;
  size_t nexplode = 0;
  for (;;) {
    int rc = parse_varspec(ps, open, op, &nexplode, &j);
    if (rc)
      return rc;
    if (s[j++] == '}')
      break;
  }
  e->nvars = ps->nvars - e->var0;
  *i = j;
  return 0;
}

/* Decides what ends each expression's match, refusing expressions that
 * cannot be told apart (see uritemplate.h). */
static int link_parts(parser *ps) {
  for (size_t i = 0; i < ps->nparts; i++) {
    part *e = &ps->parts[i];
    if (e->kind != PART_EXPR)
      continue;
    e->follow = FOLLOW_END;
    for (size_t j = i + 1; j < ps->nparts; j++) {
      const part *next = &ps->parts[j];
      if (next->kind == PART_LITERAL) {
        e->follow = FOLLOW_LITERAL;
        e->lit = j;
        break;
      }
      opinfo o = op_info(next->op);
      if (o.lead == 0)
        return fail(ps, next->at,
                    "two expressions with nothing between them cannot be "
                    "told apart");
      if (!can_follow(e->op, o.lead)) {
        char what[120];
        snprintf(what, sizeof what,
                 "an expression starting with \"%c\" cannot be told apart "
                 "from the one before it",
                 o.lead);
        return fail(ps, next->at, what);
      }
      unsigned char c = (unsigned char)o.lead;
      e->stop[c >> 3] |= (unsigned char)(1u << (c & 7));
      e->any_stop = true;
      if (!o.named) {
        e->follow = FOLLOW_EXPR;
        break;
      }
    }
  }
  return 0;
}

/* Fills f with the Knuth-Morris-Pratt failure function of the n bytes at p:
 * f[i] is the length of the longest proper prefix of p[0..i] that is also
 * its suffix. */
static void kmp_table(const char *p, size_t n, uint16_t *f) {
  size_t k = 0;
  f[0] = 0;
  for (size_t i = 1; i < n; i++) {
    while (k > 0 && p[i] != p[k])
      k = f[k - 1];
    if (p[i] == p[k])
      k++;
    f[i] = (uint16_t)k;
  }
}

static size_t align_up(size_t n) {
  size_t a = _Alignof(max_align_t);
  return (n + a - 1) / a * a;
}

/* Copies the parsed template into one allocation. */
static int build(const parser *ps, mcp__uritemplate **out) {
  size_t o_parts = align_up(sizeof(mcp__uritemplate));
  size_t o_vars = align_up(o_parts + ps->nparts * sizeof(part));
  size_t o_kmp = align_up(o_vars + ps->nvars * sizeof(var));
  size_t o_text = o_kmp + ps->n * sizeof(uint16_t);
  size_t o_names = o_text + ps->n + 1;
  char *block = mcp__malloc(o_names + ps->names);
  if (block == NULL)
    return MCP_ENOMEM;
  mcp__uritemplate *t = (mcp__uritemplate *)(void *)block;
  t->parts = (part *)(void *)(block + o_parts);
  t->nparts = ps->nparts;
  t->vars = (var *)(void *)(block + o_vars);
  t->nvars = ps->nvars;
  t->kmp = (uint16_t *)(void *)(block + o_kmp);
  t->text = block + o_text;
  if (ps->nparts)
    memcpy(t->parts, ps->parts, ps->nparts * sizeof(part));
  memcpy(t->text, ps->s, ps->n + 1);
  char *name = block + o_names;
  for (size_t i = 0; i < ps->nvars; i++) {
    t->vars[i] = ps->vars[i];
    memcpy(name, ps->vars[i].name, ps->vars[i].len);
    name[ps->vars[i].len] = '\0';
    t->vars[i].name = name;
    name += ps->vars[i].len + 1;
  }
  for (size_t i = 0; i < t->nparts; i++) {
    const part *p = &t->parts[i];
    if (p->kind == PART_LITERAL)
      kmp_table(t->text + p->off, p->len, t->kmp + p->off);
  }
  *out = t;
  return 0;
}

int mcp__uritemplate_compile(const char *tmpl, mcp__uritemplate **out,
                             char *err, size_t errlen) {
  if (err != NULL && errlen > 0)
    err[0] = '\0';
  if (tmpl == NULL || out == NULL) {
    if (err != NULL)
      mcp__fmt(err, errlen, "no template, or nowhere to put it");
    return MCP_EINVAL;
  }
  /* The parser is about 7 KB: the limits keep it small enough for the
   * stack, and compiling allocates exactly once. */
  parser ps;
  ps.s = tmpl;
  ps.nparts = ps.nvars = ps.names = 0;
  ps.err = err;
  ps.errlen = errlen;
  for (ps.n = 0; ps.n <= MAX_LEN && tmpl[ps.n] != '\0';)
    ps.n++;
  if (ps.n > MAX_LEN)
    return fail(&ps, MAX_LEN, "a template longer than 1024 bytes");
  int rc = check_text(&ps);
  for (size_t i = 0; rc == 0 && i < ps.n;) {
    if (ps.nparts == MAX_PARTS)
      return fail(&ps, i, "more than 32 variables");
    rc = tmpl[i] == '{' ? parse_expr(&ps, &i) : parse_literal(&ps, &i);
  }
  if (rc == 0)
    rc = link_parts(&ps);
  if (rc == 0)
    rc = build(&ps, out);
  if (rc == MCP_ENOMEM && err != NULL)
    mcp__fmt(err, errlen, "out of memory");
  return rc;
}

void mcp__uritemplate_free(mcp__uritemplate *t) { mcp__free(t); }

size_t mcp__uritemplate_nvars(const mcp__uritemplate *t) {
  return t ? t->nvars : 0;
}

const char *mcp__uritemplate_var(const mcp__uritemplate *t, size_t i) {
  return t && i < t->nvars ? t->vars[i].name : NULL;
}

bool mcp__uritemplate_has_var(const mcp__uritemplate *t, const char *name) {
  if (t == NULL || name == NULL)
    return false;
  for (size_t i = 0; i < t->nvars; i++)
    if (strcmp(t->vars[i].name, name) == 0)
      return true;
  return false;
}

/* ---- matching ------------------------------------------------------------ */

typedef struct matcher {
  const mcp__uritemplate *t;
  const char *uri;
  size_t n;  /* strlen(uri) */
  char *buf; /* decoded values, each NUL-terminated: never longer than the
                URI bytes they come from, plus the NULs */
  size_t used;
  size_t off[MAX_VARS]; /* where each variable's value starts in buf */
  bool set[MAX_VARS];
} matcher;

/* Where the match of expression e, starting at pos, ends (see
 * uritemplate.h): the first occurrence of the literal after it or of a stop
 * character, after at least one character of value. The literal's
 * occurrences are found with its failure table, so every byte is looked at
 * once, plus at most the literal's length after a stop character (an
 * occurrence that starts before the stop character is still the earlier
 * one). */
static size_t region_end(const matcher *m, const part *e, size_t pos) {
  const unsigned char *u = (const unsigned char *)m->uri;
  opinfo o = op_info(e->op);
  size_t from = pos;
  if (o.lead) {
    /* Absent: nothing for an optional expression, no match for another. */
    if (pos >= m->n || u[pos] != (unsigned char)o.lead)
      return pos;
    from++;
  }
  const part *lit = e->follow == FOLLOW_LITERAL ? &m->t->parts[e->lit] : NULL;
  if (from >= m->n || (lit == NULL && !e->any_stop))
    return m->n;
  const unsigned char *l =
      lit ? (const unsigned char *)m->t->text + lit->off : NULL;
  const uint16_t *f = lit ? m->t->kmp + lit->off : NULL;
  size_t limit = m->n, stop = m->n, k = 0;
  for (size_t q = from + 1; q < limit; q++) {
    unsigned char c = u[q];
    if (stop == m->n && (e->stop[c >> 3] >> (c & 7)) & 1) {
      if (lit == NULL)
        return q;
      stop = q;
      if (q + lit->len < limit)
        limit = q + lit->len;
    }
    if (lit != NULL) {
      while (k > 0 && c != l[k])
        k = f[k - 1];
      if (c == l[k])
        k++;
      if (k == lit->len)
        return q + 1 - lit->len;
    }
  }
  return stop;
}

/* Is the value (or, with split, one of its "/" or "\" separated segments)
 * "." or ".."? */
static bool dot_segment(const char *v, size_t n, bool split) {
  for (size_t i = 0; i <= n;) {
    size_t j = i;
    if (split)
      while (j < n && v[j] != '/' && v[j] != '\\')
        j++;
    else
      j = n;
    if ((j - i == 1 || j - i == 2) && v[i] == '.' && v[j - 1] == '.')
      return true;
    i = j + 1;
  }
  return false;
}

/* Appends the item raw[0..len) to buf percent-decoded and checks it (see
 * "Path traversal" in uritemplate.h). Returns 0 or MCP_ENOENT. */
static int decode(matcher *m, const opinfo *o, const char *raw, size_t len) {
  size_t start = m->used;
  for (size_t i = 0; i < len; i++) {
    unsigned char c = (unsigned char)raw[i];
    if (!o->reserved && (c == '/' || c == '\\' || c == '?' || c == '#'))
      return MCP_ENOENT;
    if (c == '%') {
      int hi = len - i < 3 ? -1 : hexval((unsigned char)raw[i + 1]);
      int lo = hi < 0 ? -1 : hexval((unsigned char)raw[i + 2]);
      if (lo < 0)
        return MCP_ENOENT;
      c = (unsigned char)(hi << 4 | lo);
      i += 2;
      if (!o->reserved && (c == '/' || c == '\\'))
        return MCP_ENOENT;
    }
    m->buf[m->used++] = (char)c;
  }
  const char *v = m->buf + start;
  size_t n = m->used - start;
  if (!mcp__utf8_valid(v, n) || dot_segment(v, n, o->reserved))
    return MCP_ENOENT;
  return 0;
}

/* Ends the value of variable vi, begun at start in buf, and checks its
 * prefix modifier (a length in characters). */
static int finish(matcher *m, size_t vi, size_t start) {
  unsigned prefix = m->t->vars[vi].prefix;
  if (prefix) {
    size_t chars = 0;
    for (size_t i = start; i < m->used; i++)
      chars += ((unsigned char)m->buf[i] & 0xC0) != 0x80;
    if (chars > prefix)
      return MCP_ENOENT;
  }
  m->buf[m->used++] = '\0';
  m->off[vi] = start;
  m->set[vi] = true;
  return 0;
}

/* none, +, #, . and /: one item per variable, an exploded one taking the
 * items left over. */
static int match_positional(matcher *m, const part *e, const opinfo *o,
                            const char *r, size_t len) {
  const var *vs = m->t->vars + e->var0;
  size_t nv = e->nvars, ex = nv, items = 1;
  for (size_t i = 0; i < nv; i++)
    if (vs[i].explode)
      ex = i;
  bool whole = nv == 1 && ex == nv;
  if (!whole)
    for (size_t i = 0; i < len; i++)
      items += r[i] == o->sep;
  if (items < nv || (ex == nv && items > nv))
    return MCP_ENOENT;
  const char *p = r, *end = r + len;
  for (size_t i = 0; i < nv; i++) {
    size_t start = m->used, count = i == ex ? items - nv + 1 : 1;
    for (size_t k = 0; k < count; k++) {
      const char *q = whole ? NULL : memchr(p, o->sep, (size_t)(end - p));
      if (q == NULL)
        q = end;
      if (q == p)
        return MCP_ENOENT;
      if (k > 0)
        m->buf[m->used++] = o->sep;
      if (decode(m, o, p, (size_t)(q - p)))
        return MCP_ENOENT;
      p = q + 1;
    }
    if (finish(m, e->var0 + i, start))
      return MCP_ENOENT;
  }
  return 0;
}

/* ;, ? and &: name=value pairs naming the expression's variables, each at
 * most once, in any order. */
static int match_named(matcher *m, const part *e, const opinfo *o,
                       const char *r, size_t len) {
  const char *p = r, *end = r + len;
  for (;;) {
    const char *q = memchr(p, o->sep, (size_t)(end - p));
    if (q == NULL)
      q = end;
    if (q == p)
      return MCP_ENOENT;
    const char *eq = memchr(p, '=', (size_t)(q - p));
    size_t klen = (size_t)((eq ? eq : q) - p), vi = e->var0 + e->nvars;
    for (size_t i = e->var0; i < e->var0 + e->nvars; i++) {
      const var *v = &m->t->vars[i];
      if (v->len == klen && memcmp(v->name, p, klen) == 0) {
        vi = i;
        break;
      }
    }
    if (vi == e->var0 + e->nvars || m->set[vi])
      return MCP_ENOENT;
    size_t start = m->used;
    if (eq != NULL && decode(m, o, eq + 1, (size_t)(q - eq - 1)))
      return MCP_ENOENT;
    if (finish(m, vi, start))
      return MCP_ENOENT;
    if (q == end)
      return 0;
    p = q + 1;
  }
}

/* Reads the match r[0..len) of expression e. */
static int match_expr(matcher *m, const part *e, const char *r, size_t len) {
  opinfo o = op_info(e->op);
  if (len == 0)
    return o.named ? 0 : MCP_ENOENT;
  if (o.lead) { /* region_end saw it */
    r++;
    len--;
  }
  if (len == 0)
    return MCP_ENOENT;
  return o.named ? match_named(m, e, &o, r, len)
                 : match_positional(m, e, &o, r, len);
}

static int walk(matcher *m) {
  const mcp__uritemplate *t = m->t;
  size_t pos = 0;
  for (size_t i = 0; i < t->nparts; i++) {
    const part *p = &t->parts[i];
    if (p->kind == PART_LITERAL) {
      if (m->n - pos < p->len || memcmp(m->uri + pos, t->text + p->off, p->len))
        return MCP_ENOENT;
      pos += p->len;
      continue;
    }
    size_t end = region_end(m, p, pos);
    int rc = match_expr(m, p, m->uri + pos, end - pos);
    if (rc)
      return rc;
    pos = end;
  }
  return pos == m->n ? 0 : MCP_ENOENT;
}

int mcp__uritemplate_match(const mcp__uritemplate *t, const char *uri,
                           struct cJSON **vars) {
  if (t == NULL || uri == NULL || vars == NULL)
    return MCP_EINVAL;
  matcher m;
  m.t = t;
  m.uri = uri;
  m.n = strlen(uri);
  m.used = 0;
  memset(m.set, 0, sizeof m.set);
  /* Most templates begin with a literal (a scheme) that most URIs tried
   * against them lack: refuse those before allocating. */
  const part *first = t->nparts ? &t->parts[0] : NULL;
  if (first && first->kind == PART_LITERAL &&
      (m.n < first->len || memcmp(uri, t->text + first->off, first->len)))
    return MCP_ENOENT;
  m.buf = mcp__malloc(m.n + t->nvars + 1);
  if (m.buf == NULL)
    return MCP_ENOMEM;
  int rc = walk(&m);
  cJSON *obj = NULL;
  if (rc == 0 && (obj = cJSON_CreateObject()) == NULL)
    rc = MCP_ENOMEM;
  for (size_t i = 0; rc == 0 && i < t->nvars; i++) {
    if (m.set[i] && cJSON_AddStringToObject(obj, t->vars[i].name,
                                            m.buf + m.off[i]) == NULL) {
      cJSON_Delete(obj);
      rc = MCP_ENOMEM;
    }
  }
  mcp__free(m.buf);
  if (rc == 0)
    *vars = obj;
  return rc;
}

/* ---- plain URIs ---------------------------------------------------------- */

static bool is_alpha(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

/* RFC 3986 section 3.1: ALPHA *( ALPHA / DIGIT / "+" / "-" / "." ) ":". */
static bool has_scheme(const char *uri) {
  const unsigned char *p = (const unsigned char *)uri;
  if (!is_alpha(*p))
    return false;
  while (is_alpha(*p) || (*p >= '0' && *p <= '9') || *p == '+' || *p == '-' ||
         *p == '.')
    p++;
  return *p == ':';
}

bool mcp__uri_valid(const char *uri, mcp__uri_rules rules) {
  bool registered = rules == MCP__URI_REGISTERED;
  size_t n = strlen(uri);
  if (n == 0 ||
      n > (registered ? MCP__URI_MAX_REGISTERED : MCP__URI_MAX_REQUESTED) ||
      !mcp__utf8_valid(uri, n))
    return false;
  for (const unsigned char *p = (const unsigned char *)uri; *p; p++)
    if (*p < 0x20 || *p == 0x7f || (registered && (*p == ' ' || *p >= 0x80)))
      return false;
  return !registered || has_scheme(uri);
}
