/* Regular expressions: an ECMA-262 subset compiled for a Pike VM.
 *
 * The pattern is parsed into a small tree, the tree is sized (so counted
 * repetition cannot blow up memory before the limit is checked) and emitted
 * as a program. A search keeps at most one VM thread per instruction per
 * position, which is what makes the cost linear; see regex.h for the
 * dialect and what is refused. */
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base.h"
#include "regex.h"

/* ---- programs ------------------------------------------------------------ */

enum {
  OP_CHAR,  /* x: the code point */
  OP_ANY,   /* anything but a line terminator */
  OP_CLASS, /* x: class index */
  OP_SPLIT, /* continue at x and at y */
  OP_JMP,   /* continue at x */
  OP_MATCH,
  OP_BOL, /* zero-width assertions */
  OP_EOL,
  OP_WORDB,
  OP_NWORDB
};

typedef struct inst {
  unsigned char op;
  unsigned x, y;
} inst;

typedef struct range {
  unsigned lo, hi;
} range;

typedef struct cls {
  size_t first, count; /* sorted, disjoint ranges in ranges[] */
} cls;

struct mcp__regex {
  inst *prog;
  size_t nprog;
  range *ranges;
  cls *classes;
  int anchored; /* the program starts with ^: seed only at position 0 */
};

#define NOCP UINT_MAX /* "no character": before the start, after the end */
#define MAXCP 0x10FFFFu
#define REP_INF UINT_MAX
#define REP_MAX 1000u
#define MAX_NEST 100

/* Decodes one code point, advancing *p. Bytes that are not UTF-8 decode as
 * U+FFFD one at a time, so a search never stalls. */
static unsigned utf8_next(const unsigned char **p, const unsigned char *end) {
  const unsigned char *s = *p;
  unsigned c = s[0];
  size_t n = c < 0x80         ? 1
             : (c >> 5) == 6  ? 2
             : (c >> 4) == 14 ? 3
             : (c >> 3) == 30 ? 4
                              : 0;
  if (n == 0 || (size_t)(end - s) < n) {
    *p = s + 1;
    return 0xFFFD;
  }
  unsigned cp = n == 1 ? c : c & (0x7Fu >> n);
  for (size_t i = 1; i < n; i++) {
    if ((s[i] & 0xC0) != 0x80) {
      *p = s + 1;
      return 0xFFFD;
    }
    cp = (cp << 6) | (s[i] & 0x3F);
  }
  *p = s + n;
  return cp;
}

static int is_word(unsigned c) {
  return (c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z') ||
         (c >= 'a' && c <= 'z') || c == '_';
}

static int is_line_terminator(unsigned c) {
  return c == '\n' || c == '\r' || c == 0x2028 || c == 0x2029;
}

/* ---- the tree ------------------------------------------------------------ */

enum {
  N_EMPTY,
  N_LIT,   /* cp */
  N_ANY,   /* . */
  N_CLASS, /* cp holds the class index */
  N_BOL,
  N_EOL,
  N_WORDB,
  N_NWORDB,
  N_CAT, /* children first..next */
  N_ALT,
  N_REP /* child first, min, max */
};

typedef struct node {
  unsigned char type;
  unsigned cp;
  int first, last, next; /* children (first, last) and the next sibling */
  unsigned min, max;
} node;

typedef struct parser {
  const unsigned char *start, *p, *end;
  node *nodes;
  size_t nn, ncap;
  range *ranges; /* the classes' ranges, class after class */
  size_t nr, rcap;
  cls *classes;
  size_t nc, ccap;
  range *tmp; /* a class being built */
  size_t nt, tcap;
  char *err;
  size_t errlen;
  int rc;
  int depth;
} parser;

/* Records the first error; returns -1 so callers can `return fail(...)`. */
static int fail(parser *ps, const char *what) {
  if (ps->rc == 0) {
    ps->rc = MCP_EINVAL;
    mcp__fmt(ps->err, ps->errlen, "%s (at byte %zu of the pattern)", what,
             (size_t)(ps->p - ps->start));
  }
  return -1;
}

static int oom(parser *ps) {
  if (ps->rc == 0) {
    ps->rc = MCP_ENOMEM;
    mcp__fmt(ps->err, ps->errlen, "out of memory");
  }
  return -1;
}

/* Grows *arr (elements of size sz) to hold one more; returns 0 or -1. */
static int grow(parser *ps, void **arr, size_t *cap, size_t n, size_t sz) {
  if (n < *cap)
    return 0;
  size_t ncap = *cap ? *cap * 2 : 16;
  void *q = mcp__realloc(*arr, ncap * sz);
  if (q == NULL)
    return oom(ps);
  *arr = q;
  *cap = ncap;
  return 0;
}

static int new_node(parser *ps, int type) {
  if (grow(ps, (void **)&ps->nodes, &ps->ncap, ps->nn, sizeof(node)))
    return -1;
  if (ps->nn >= INT_MAX / 2)
    return fail(ps, "the pattern is too long");
  node *n = &ps->nodes[ps->nn];
  memset(n, 0, sizeof *n);
  n->type = (unsigned char)type;
  n->first = n->last = n->next = -1;
  return (int)ps->nn++;
}

static void add_child(parser *ps, int parent, int child) {
  node *p = &ps->nodes[parent];
  if (p->first < 0)
    p->first = child;
  else
    ps->nodes[p->last].next = child;
  p->last = child;
}

/* ---- classes ------------------------------------------------------------- */

static int tmp_add(parser *ps, unsigned lo, unsigned hi) {
  if (grow(ps, (void **)&ps->tmp, &ps->tcap, ps->nt, sizeof(range)))
    return -1;
  ps->tmp[ps->nt++] = (range){lo, hi};
  return 0;
}

static const range digit_set[] = {{'0', '9'}};
static const range word_set[] = {
    {'0', '9'}, {'A', 'Z'}, {'_', '_'}, {'a', 'z'}};
static const range space_set[] = {
    {0x09, 0x0D},     {0x20, 0x20},     {0xA0, 0xA0},     {0x1680, 0x1680},
    {0x2000, 0x200A}, {0x2028, 0x2029}, {0x202F, 0x202F}, {0x205F, 0x205F},
    {0x3000, 0x3000}, {0xFEFF, 0xFEFF}};

/* Adds a predefined set, or its complement, to the class being built. */
static int tmp_add_set(parser *ps, const range *set, size_t n, int negate) {
  if (!negate) {
    for (size_t i = 0; i < n; i++)
      if (tmp_add(ps, set[i].lo, set[i].hi))
        return -1;
    return 0;
  }
  unsigned lo = 0;
  for (size_t i = 0; i < n; i++) {
    if (set[i].lo > lo && tmp_add(ps, lo, set[i].lo - 1))
      return -1;
    lo = set[i].hi + 1;
  }
  return lo <= MAXCP ? tmp_add(ps, lo, MAXCP) : 0;
}

static int range_cmp(const void *a, const void *b) {
  const range *x = a, *y = b;
  return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* Sorts and merges the class being built, complements it when negate, and
 * stores it. Returns the class index or -1. */
static int tmp_commit(parser *ps, int negate) {
  if (ps->nt > 1) /* [] is empty: tmp may still be NULL */
    qsort(ps->tmp, ps->nt, sizeof(range), range_cmp);
  size_t m = 0;
  for (size_t i = 0; i < ps->nt; i++) {
    if (m > 0 && ps->tmp[i].lo <= ps->tmp[m - 1].hi + 1) {
      if (ps->tmp[i].hi > ps->tmp[m - 1].hi)
        ps->tmp[m - 1].hi = ps->tmp[i].hi;
    } else {
      ps->tmp[m++] = ps->tmp[i];
    }
  }
  ps->nt = m;
  if (grow(ps, (void **)&ps->classes, &ps->ccap, ps->nc, sizeof(cls)))
    return -1;
  size_t first = ps->nr;
  if (negate) {
    unsigned lo = 0;
    for (size_t i = 0; i <= m; i++) {
      unsigned hi = i < m ? ps->tmp[i].lo : MAXCP + 1;
      if (hi > lo) {
        if (grow(ps, (void **)&ps->ranges, &ps->rcap, ps->nr, sizeof(range)))
          return -1;
        ps->ranges[ps->nr++] = (range){lo, hi - 1};
      }
      if (i < m)
        lo = ps->tmp[i].hi + 1;
    }
  } else {
    for (size_t i = 0; i < m; i++) {
      if (grow(ps, (void **)&ps->ranges, &ps->rcap, ps->nr, sizeof(range)))
        return -1;
      ps->ranges[ps->nr++] = ps->tmp[i];
    }
  }
  ps->classes[ps->nc] = (cls){first, ps->nr - first};
  ps->nt = 0;
  return (int)ps->nc++;
}

/* ---- escapes ------------------------------------------------------------- */

static int hexval(unsigned c) {
  if (c >= '0' && c <= '9')
    return (int)(c - '0');
  if (c >= 'a' && c <= 'f')
    return (int)(c - 'a' + 10);
  if (c >= 'A' && c <= 'F')
    return (int)(c - 'A' + 10);
  return -1;
}

/* Reads exactly n hex digits; returns the value or -1. */
static long read_hex(parser *ps, int n) {
  long v = 0;
  for (int i = 0; i < n; i++) {
    if (ps->p >= ps->end || hexval(*ps->p) < 0)
      return -1;
    v = v * 16 + hexval(*ps->p++);
  }
  return v;
}

/* \uHHHH (joining a surrogate pair) or \u{H...}, after the "u". */
static long read_unicode_escape(parser *ps) {
  if (ps->p < ps->end && *ps->p == '{') {
    ps->p++;
    long v = 0;
    int digits = 0;
    while (ps->p < ps->end && hexval(*ps->p) >= 0) {
      v = v * 16 + hexval(*ps->p++);
      if (v > (long)MAXCP)
        return -1;
      digits++;
    }
    if (digits == 0 || ps->p >= ps->end || *ps->p != '}')
      return -1;
    ps->p++;
    return v;
  }
  long v = read_hex(ps, 4);
  if (v >= 0xD800 && v <= 0xDBFF && ps->end - ps->p >= 6 && ps->p[0] == '\\' &&
      ps->p[1] == 'u') {
    const unsigned char *save = ps->p;
    ps->p += 2;
    long lo = read_hex(ps, 4);
    if (lo >= 0xDC00 && lo <= 0xDFFF)
      return 0x10000 + ((v - 0xD800) << 10) + (lo - 0xDC00);
    ps->p = save;
  }
  return v;
}

/* What an escape stands for. */
enum { ESC_CHAR, ESC_SET, ESC_WORDB, ESC_NWORDB };

typedef struct esc {
  int kind;
  unsigned cp;      /* ESC_CHAR */
  const range *set; /* ESC_SET */
  size_t nset;
  int negate;
} esc;

/* The escapes a letter settles alone: a class shorthand (set, negated for
 * the capital) or a control character (set NULL, cp). */
static const struct letter_escape {
  unsigned letter;
  const range *set;
  size_t nset;
  int negate;
  unsigned cp;
} letter_escapes[] = {
    {'d', digit_set, sizeof digit_set / sizeof *digit_set, 0, 0},
    {'D', digit_set, sizeof digit_set / sizeof *digit_set, 1, 0},
    {'w', word_set, sizeof word_set / sizeof *word_set, 0, 0},
    {'W', word_set, sizeof word_set / sizeof *word_set, 1, 0},
    {'s', space_set, sizeof space_set / sizeof *space_set, 0, 0},
    {'S', space_set, sizeof space_set / sizeof *space_set, 1, 0},
    {'t', NULL, 0, 0, '\t'},
    {'n', NULL, 0, 0, '\n'},
    {'v', NULL, 0, 0, '\v'},
    {'f', NULL, 0, 0, '\f'},
    {'r', NULL, 0, 0, '\r'},
};

/* Sets e from the row of letter c in letter_escapes; returns 0 when c has
 * one. */
static int letter_escape(unsigned c, esc *e) {
  for (size_t i = 0; i < sizeof letter_escapes / sizeof *letter_escapes; i++) {
    const struct letter_escape *l = &letter_escapes[i];
    if (l->letter != c)
      continue;
    if (l->set != NULL) {
      e->kind = ESC_SET;
      e->set = l->set;
      e->nset = l->nset;
      e->negate = l->negate;
    } else {
      e->cp = l->cp;
    }
    return 0;
  }
  return -1;
}

/* The escapes c that read what follows them: \0 (not an octal escape),
 * \c and a letter, \x with two hex digits, \u with four or {hex}. */
static int value_escape(parser *ps, unsigned c, esc *e) {
  long v;
  switch (c) {
  case '0':
    if (ps->p < ps->end && *ps->p >= '0' && *ps->p <= '9')
      return fail(ps, "octal escapes are not supported");
    e->cp = 0;
    return 0;
  case 'c':
    if (ps->p < ps->end && ((*ps->p >= 'a' && *ps->p <= 'z') ||
                            (*ps->p >= 'A' && *ps->p <= 'Z'))) {
      e->cp = *ps->p++ % 32u;
      return 0;
    }
    return fail(ps, "\\c must be followed by a letter");
  case 'x':
    if ((v = read_hex(ps, 2)) < 0)
      return fail(ps, "\\x must be followed by two hex digits");
    break;
  default: /* 'u' */
    if ((v = read_unicode_escape(ps)) < 0)
      return fail(ps, "\\u must be followed by four hex digits or {hex}");
    break;
  }
  e->cp = (unsigned)v;
  return 0;
}

/* Every other escape c, which started at at: the features left out
 * (property escapes, backreferences) are refused by name, and an escaped
 * punctuation character stands for itself. */
static int other_escape(parser *ps, unsigned c, const unsigned char *at,
                        esc *e) {
  if (c == 'p' || c == 'P')
    return fail(ps, "Unicode property escapes (\\p{...}) are not supported");
  if (c == 'k')
    return fail(ps, "backreferences (\\k<name>) are not supported");
  if (c >= '1' && c <= '9') {
    ps->p = at;
    return fail(ps, "backreferences (\\1 to \\9) are not supported");
  }
  if (c < 0x80 && !is_word(c) && c > 0x20 && c != 0x7F) {
    e->cp = c;
    return 0;
  }
  ps->p = at;
  return fail(ps, "unknown escape sequence");
}

/* Parses the escape after a backslash. in_class changes \b (backspace in a
 * class, a word boundary outside). Returns 0 or -1. */
static int parse_escape(parser *ps, int in_class, esc *e) {
  if (ps->p >= ps->end)
    return fail(ps, "the pattern ends with a lone backslash");
  const unsigned char *at = ps->p;
  unsigned c = utf8_next(&ps->p, ps->end);
  e->kind = ESC_CHAR;
  e->negate = 0;
  if (letter_escape(c, e) == 0)
    return 0;
  if (c == 'b') {
    if (in_class)
      e->cp = 0x08;
    else
      e->kind = ESC_WORDB;
    return 0;
  }
  if (c == 'B') {
    if (in_class)
      return fail(ps, "\\B is not allowed inside a character class");
    e->kind = ESC_NWORDB;
    return 0;
  }
  if (c == '0' || c == 'c' || c == 'x' || c == 'u')
    return value_escape(ps, c, e);
  return other_escape(ps, c, at, e);
}

/* [...] after the "[". Returns the class index or -1. */
static int parse_class(parser *ps) {
  int negate = 0;
  if (ps->p < ps->end && *ps->p == '^') {
    negate = 1;
    ps->p++;
  }
  ps->nt = 0;
  for (;;) {
    if (ps->p >= ps->end)
      return fail(ps, "a character class is not closed with ]");
    if (*ps->p == ']') {
      ps->p++;
      break;
    }
    /* One class atom: a character or a set. */
    unsigned lo;
    esc e = {ESC_CHAR, 0, NULL, 0, 0};
    if (*ps->p == '\\') {
      ps->p++;
      if (parse_escape(ps, 1, &e))
        return -1;
      if (e.kind == ESC_SET) {
        if (tmp_add_set(ps, e.set, e.nset, e.negate))
          return -1;
        if (ps->p < ps->end && *ps->p == '-' && ps->end - ps->p > 1 &&
            ps->p[1] != ']')
          return fail(ps, "a class escape cannot bound a range");
        continue;
      }
      lo = e.cp;
    } else if (*ps->p == '[' && ps->end - ps->p > 1 &&
               (ps->p[1] == ':' || ps->p[1] == '=' || ps->p[1] == '.')) {
      return fail(ps, "POSIX bracket expressions are not ECMA-262");
    } else {
      lo = utf8_next(&ps->p, ps->end);
    }
    unsigned hi = lo;
    if (ps->end - ps->p > 1 && *ps->p == '-' && ps->p[1] != ']') {
      ps->p++;
      if (*ps->p == '\\') {
        ps->p++;
        if (parse_escape(ps, 1, &e))
          return -1;
        if (e.kind != ESC_CHAR)
          return fail(ps, "a class escape cannot bound a range");
        hi = e.cp;
      } else {
        hi = utf8_next(&ps->p, ps->end);
      }
      if (hi < lo)
        return fail(ps, "a range in a character class is out of order");
    }
    if (tmp_add(ps, lo, hi))
      return -1;
  }
  return tmp_commit(ps, negate);
}

/* ---- the grammar ---------------------------------------------------------
 *   alt  := cat ('|' cat)*
 *   cat  := (atom quant?)*
 *   atom := '(' alt ')' | '[' class ']' | '.' | '^' | '$' | escape | char */

static int parse_alt(parser *ps);

/* Reads a decimal bound of a quantifier; -1 when there is none. */
static long read_bound(parser *ps) {
  long v = -1;
  while (ps->p < ps->end && *ps->p >= '0' && *ps->p <= '9') {
    v = (v < 0 ? 0 : v) * 10 + (*ps->p++ - '0');
    if (v > 100000)
      v = 100000; /* saturate; checked against REP_MAX below */
  }
  return v;
}

/* Parses a quantifier if one follows; sets *min, *max. Returns 1 when one
 * was read, 0 when none, -1 on error. */
static int parse_quant(parser *ps, unsigned *min, unsigned *max) {
  if (ps->p >= ps->end)
    return 0;
  unsigned c = *ps->p;
  if (c == '*' || c == '+' || c == '?') {
    ps->p++;
    *min = c == '+' ? 1 : 0;
    *max = c == '?' ? 1 : REP_INF;
  } else if (c == '{') {
    const unsigned char *save = ps->p;
    ps->p++;
    long lo = read_bound(ps), hi = lo;
    if (lo >= 0 && ps->p < ps->end && *ps->p == ',') {
      ps->p++;
      hi = read_bound(ps);
      if (hi < 0)
        hi = -2; /* {n,}: unbounded */
    }
    if (lo < 0 || ps->p >= ps->end || *ps->p != '}') {
      ps->p = save;
      return fail(ps, "a '{' that does not start a quantifier {n,m} must be "
                      "escaped");
    }
    ps->p++;
    if (lo > (long)REP_MAX || hi > (long)REP_MAX)
      return fail(ps, "quantifier bounds above 1000 are not supported");
    if (hi >= 0 && hi < lo)
      return fail(ps, "a quantifier {n,m} has m < n");
    *min = (unsigned)lo;
    *max = hi == -2 ? REP_INF : (unsigned)hi;
  } else {
    return 0;
  }
  if (ps->p < ps->end && *ps->p == '?')
    ps->p++; /* lazy: the same yes/no answer */
  return 1;
}

/* What may follow "(?" at ps->p: ":" (no capture) or a named group's
 * "<name>", whose name only matters to captures; lookaround and inline
 * flags are refused. Returns 0 or -1. */
static int group_prefix(parser *ps) {
  if (ps->end - ps->p >= 2 && ps->p[1] == ':') {
    ps->p += 2;
    return 0;
  }
  if (ps->end - ps->p >= 3 && ps->p[1] == '<' && ps->p[2] != '=' &&
      ps->p[2] != '!') {
    ps->p += 2;
    while (ps->p < ps->end && (is_word(*ps->p) || *ps->p == '$'))
      ps->p++;
    if (ps->p >= ps->end || *ps->p != '>')
      return fail(ps, "a group name is not closed with >");
    ps->p++;
    return 0;
  }
  if (ps->end - ps->p >= 2 &&
      (ps->p[1] == '=' || ps->p[1] == '!' || ps->p[1] == '<'))
    return fail(ps, "lookahead and lookbehind are not supported");
  return fail(ps, "inline flags and other (?...) groups are not supported");
}

/* A group after its "(": its alternatives, up to the ")". Returns the node
 * index or -1. */
static int parse_group(parser *ps) {
  if (ps->p < ps->end && *ps->p == '?' && group_prefix(ps) < 0)
    return -1;
  if (++ps->depth > MAX_NEST)
    return fail(ps, "groups are nested too deeply");
  int n = parse_alt(ps);
  ps->depth--;
  if (n < 0)
    return -1;
  if (ps->p >= ps->end || *ps->p != ')')
    return fail(ps, "a group is not closed with )");
  ps->p++;
  return n;
}

/* A class node for class index ci (or -1 when making the class failed). */
static int class_node(parser *ps, int ci) {
  int n;
  if (ci < 0 || (n = new_node(ps, N_CLASS)) < 0)
    return -1;
  ps->nodes[n].cp = (unsigned)ci;
  return n;
}

/* An escape outside a class, after its backslash: a word boundary, a class
 * shorthand or one character. Returns the node index or -1. */
static int parse_escape_atom(parser *ps) {
  esc e;
  int n;
  if (parse_escape(ps, 0, &e))
    return -1;
  if (e.kind == ESC_WORDB)
    return new_node(ps, N_WORDB);
  if (e.kind == ESC_NWORDB)
    return new_node(ps, N_NWORDB);
  if (e.kind == ESC_SET) {
    ps->nt = 0;
    if (tmp_add_set(ps, e.set, e.nset, e.negate))
      return -1;
    return class_node(ps, tmp_commit(ps, 0));
  }
  if ((n = new_node(ps, N_LIT)) < 0)
    return -1;
  ps->nodes[n].cp = e.cp;
  return n;
}

/* One atom: a group, a class, an escape, one of . ^ $, or a literal
 * character. Returns the node index or -1. */
static int parse_atom(parser *ps) {
  unsigned c = *ps->p;
  int n;
  switch (c) {
  case '(':
    ps->p++;
    return parse_group(ps);
  case '[':
    ps->p++;
    return class_node(ps, parse_class(ps));
  case '\\':
    ps->p++;
    return parse_escape_atom(ps);
  case '.':
    ps->p++;
    return new_node(ps, N_ANY);
  case '^':
    ps->p++;
    return new_node(ps, N_BOL);
  case '$':
    ps->p++;
    return new_node(ps, N_EOL);
  case '*':
  case '+':
  case '?':
    return fail(ps, "a quantifier has nothing to repeat");
  case '{':
    return fail(ps, "a '{' that does not start a quantifier {n,m} must be "
                    "escaped");
  default:
    if ((n = new_node(ps, N_LIT)) < 0)
      return -1;
    ps->nodes[n].cp = utf8_next(&ps->p, ps->end);
    return n;
  }
}

static int parse_cat(parser *ps) {
  int cat = new_node(ps, N_CAT);
  if (cat < 0)
    return -1;
  while (ps->p < ps->end && *ps->p != '|' && *ps->p != ')') {
    int a = parse_atom(ps);
    if (a < 0)
      return -1;
    unsigned min, max;
    int q = parse_quant(ps, &min, &max);
    if (q < 0)
      return -1;
    if (q) {
      int t = ps->nodes[a].type;
      if (t == N_BOL || t == N_EOL || t == N_WORDB || t == N_NWORDB)
        return fail(ps, "an assertion cannot be repeated");
      int r = new_node(ps, N_REP);
      if (r < 0)
        return -1;
      ps->nodes[r].first = ps->nodes[r].last = a;
      ps->nodes[r].min = min;
      ps->nodes[r].max = max;
      a = r;
    }
    add_child(ps, cat, a);
  }
  return cat;
}

static int parse_alt(parser *ps) {
  int first = parse_cat(ps);
  if (first < 0 || ps->p >= ps->end || *ps->p != '|')
    return first;
  int alt = new_node(ps, N_ALT);
  if (alt < 0)
    return -1;
  add_child(ps, alt, first);
  while (ps->p < ps->end && *ps->p == '|') {
    ps->p++;
    int c = parse_cat(ps);
    if (c < 0)
      return -1;
    add_child(ps, alt, c);
  }
  return alt;
}

/* ---- emission ------------------------------------------------------------ */

static size_t sat_add(size_t a, size_t b) {
  return a > SIZE_MAX - b ? SIZE_MAX : a + b;
}

static size_t sat_mul(size_t a, size_t b) {
  return b != 0 && a > SIZE_MAX / b ? SIZE_MAX : a * b;
}

/* Instructions node n emits (saturating). */
static size_t prog_size(const parser *ps, int n) {
  const node *nd = &ps->nodes[n];
  size_t total = 0, k = 0;
  switch (nd->type) {
  case N_EMPTY:
    return 0;
  case N_CAT:
    for (int c = nd->first; c >= 0; c = ps->nodes[c].next)
      total = sat_add(total, prog_size(ps, c));
    return total;
  case N_ALT:
    for (int c = nd->first; c >= 0; c = ps->nodes[c].next, k++)
      total = sat_add(total, prog_size(ps, c));
    return sat_add(total, sat_mul(k - 1, 2));
  case N_REP: {
    size_t x = prog_size(ps, nd->first);
    if (nd->max == REP_INF)
      return nd->min > 0 ? sat_add(sat_mul(x, nd->min), 1) : sat_add(x, 2);
    return sat_add(sat_mul(x, nd->min),
                   sat_mul(nd->max - nd->min, sat_add(x, 1)));
  }
  default:
    return 1;
  }
}

static void emit(const parser *ps, int n, inst *prog, size_t *pc);

/* The nodes that are one instruction, by node type: its opcode, and
 * whether its x is the node's cp (the character or the class index). */
static const struct single_op {
  unsigned char op;
  unsigned char has_cp;
} single_ops[] = {
    [N_LIT] = {OP_CHAR, 1},      [N_ANY] = {OP_ANY, 0},
    [N_CLASS] = {OP_CLASS, 1},   [N_BOL] = {OP_BOL, 0},
    [N_EOL] = {OP_EOL, 0},       [N_WORDB] = {OP_WORDB, 0},
    [N_NWORDB] = {OP_NWORDB, 0},
};

/* An alternation: SPLIT body, next; body; JMP end, for every alternative
 * but the last. The jumps are patched once the end is known, threading the
 * chain through their x fields. */
static void emit_alt(const parser *ps, const node *nd, inst *prog, size_t *pc) {
  size_t chain = SIZE_MAX;
  for (int c = nd->first; c >= 0; c = ps->nodes[c].next) {
    if (ps->nodes[c].next < 0) {
      emit(ps, c, prog, pc);
      break;
    }
    size_t split = (*pc)++;
    emit(ps, c, prog, pc);
    size_t jmp = (*pc)++;
    prog[jmp] = (inst){OP_JMP, (unsigned)chain, 0};
    chain = jmp;
    prog[split] = (inst){OP_SPLIT, (unsigned)(split + 1), (unsigned)*pc};
  }
  while (chain != SIZE_MAX) {
    size_t next = prog[chain].x == UINT_MAX ? SIZE_MAX : prog[chain].x;
    if ((unsigned)chain == UINT_MAX)
      break;
    prog[chain].x = (unsigned)*pc;
    chain = next;
  }
}

/* A repetition {min,max}: min copies of the body, then either a loop (max
 * unbounded; with min > 0 the last copy loops back on itself) or max - min
 * optional copies. */
static void emit_rep(const parser *ps, const node *nd, inst *prog, size_t *pc) {
  unsigned min = nd->min, max = nd->max;
  if (max == REP_INF && min > 0) {
    for (unsigned i = 0; i + 1 < min; i++)
      emit(ps, nd->first, prog, pc);
    size_t top = *pc;
    emit(ps, nd->first, prog, pc);
    prog[*pc] = (inst){OP_SPLIT, (unsigned)top, (unsigned)(*pc + 1)};
    (*pc)++;
    return;
  }
  for (unsigned i = 0; i < min; i++)
    emit(ps, nd->first, prog, pc);
  if (max == REP_INF) {
    size_t split = (*pc)++;
    emit(ps, nd->first, prog, pc);
    prog[*pc] = (inst){OP_JMP, (unsigned)split, 0};
    (*pc)++;
    prog[split] = (inst){OP_SPLIT, (unsigned)(split + 1), (unsigned)*pc};
    return;
  }
  for (unsigned i = min; i < max; i++) {
    size_t split = (*pc)++;
    emit(ps, nd->first, prog, pc);
    prog[split] = (inst){OP_SPLIT, (unsigned)(split + 1), (unsigned)*pc};
  }
}

/* Writes the instructions of node n at prog[*pc], advancing *pc. */
static void emit(const parser *ps, int n, inst *prog, size_t *pc) {
  const node *nd = &ps->nodes[n];
  switch (nd->type) {
  case N_EMPTY:
    return;
  case N_CAT:
    for (int c = nd->first; c >= 0; c = ps->nodes[c].next)
      emit(ps, c, prog, pc);
    return;
  case N_ALT:
    emit_alt(ps, nd, prog, pc);
    return;
  case N_REP:
    emit_rep(ps, nd, prog, pc);
    return;
  default: {
    const struct single_op *s = &single_ops[nd->type];
    prog[(*pc)++] = (inst){s->op, s->has_cp ? nd->cp : 0, 0};
    return;
  }
  }
}

static void parser_free(parser *ps) {
  mcp__free(ps->nodes);
  mcp__free(ps->ranges);
  mcp__free(ps->classes);
  mcp__free(ps->tmp);
}

int mcp__regex_compile(const char *pattern, size_t len, size_t max_prog,
                       mcp__regex **out, char *err, size_t errlen) {
  parser ps;
  memset(&ps, 0, sizeof ps);
  ps.start = ps.p = (const unsigned char *)pattern;
  ps.end = ps.start + len;
  ps.err = err;
  ps.errlen = errlen;
  if (max_prog == 0)
    max_prog = 4096;
  int root = parse_alt(&ps);
  if (root >= 0 && ps.p < ps.end) /* only a stray ')' stops parse_alt */
    root = fail(&ps, "unbalanced ')'");
  size_t size = root >= 0 ? prog_size(&ps, root) : 0;
  if (root >= 0 && size >= max_prog) {
    ps.p = ps.start;
    mcp__fmt(err, errlen,
             "the pattern is too complex (it would need more than %zu "
             "instructions)",
             max_prog);
    ps.rc = MCP_EINVAL;
  }
  if (ps.rc) {
    parser_free(&ps);
    return ps.rc;
  }
  mcp__regex *re = mcp__calloc(1, sizeof *re);
  inst *prog = mcp__calloc(size + 1, sizeof *prog);
  if (re == NULL || prog == NULL) {
    mcp__free(re);
    mcp__free(prog);
    parser_free(&ps);
    mcp__fmt(err, errlen, "out of memory");
    return MCP_ENOMEM;
  }
  size_t pc = 0;
  emit(&ps, root, prog, &pc);
  prog[pc++] = (inst){OP_MATCH, 0, 0};
  re->prog = prog;
  re->nprog = pc;
  re->anchored = prog[0].op == OP_BOL;
  re->ranges = ps.ranges; /* the parser's arrays become the regex's */
  re->classes = ps.classes;
  ps.ranges = NULL;
  ps.classes = NULL;
  parser_free(&ps);
  *out = re;
  return 0;
}

void mcp__regex_free(mcp__regex *re) {
  if (re == NULL)
    return;
  mcp__free(re->prog);
  mcp__free(re->ranges);
  mcp__free(re->classes);
  mcp__free(re);
}

/* ---- the Pike VM --------------------------------------------------------- */

size_t mcp__regex_scratch_size(const mcp__regex *re) {
  return (5 * re->nprog + 2) * sizeof(unsigned);
}

static int class_has(const mcp__regex *re, unsigned ci, unsigned c) {
  size_t lo = 0, hi = re->classes[ci].count;
  if (hi == 0)
    return 0; /* [] ; ranges may be NULL when every class is empty */
  const range *r = re->ranges + re->classes[ci].first;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (c < r[mid].lo)
      hi = mid;
    else if (c > r[mid].hi)
      lo = mid + 1;
    else
      return 1;
  }
  return 0;
}

typedef struct vm {
  const mcp__regex *re;
  unsigned *mark; /* generation that last added each pc */
  unsigned *stack;
  unsigned long steps;
} vm;

/* Adds pc and everything reachable from it without consuming a character
 * to list, at a position between prev and cur (NOCP at the ends). */
static void add_thread(vm *m, unsigned *list, size_t *n, unsigned pc,
                       unsigned gen, unsigned prev, unsigned cur) {
  size_t sp = 0;
  m->stack[sp++] = pc;
  while (sp > 0) {
    pc = m->stack[--sp];
    if (m->mark[pc] == gen)
      continue;
    m->mark[pc] = gen;
    m->steps++;
    const inst *in = &m->re->prog[pc];
    switch (in->op) {
    case OP_JMP:
      m->stack[sp++] = in->x;
      break;
    case OP_SPLIT:
      m->stack[sp++] = in->y;
      m->stack[sp++] = in->x;
      break;
    case OP_BOL:
      if (prev == NOCP)
        m->stack[sp++] = pc + 1;
      break;
    case OP_EOL:
      if (cur == NOCP)
        m->stack[sp++] = pc + 1;
      break;
    case OP_WORDB:
    case OP_NWORDB: {
      int a = prev != NOCP && is_word(prev);
      int b = cur != NOCP && is_word(cur);
      if ((a != b) == (in->op == OP_WORDB))
        m->stack[sp++] = pc + 1;
      break;
    }
    default:
      list[(*n)++] = pc;
      break;
    }
  }
}

int mcp__regex_search(const mcp__regex *re, const char *s, size_t len,
                      void *scratch, unsigned long *steps) {
  size_t np = re->nprog;
  unsigned *clist = scratch, *nlist = clist + np;
  vm m = {re, nlist + np, nlist + 2 * np, 0};
  memset(m.mark, 0, np * sizeof(unsigned));
  const unsigned char *p = (const unsigned char *)s, *end = p + len;
  size_t cn = 0, nn;
  unsigned gen = 1, prev = NOCP;
  const unsigned char *q = p;
  unsigned cur = p < end ? utf8_next(&q, end) : NOCP;
  int matched = 0;
  for (;;) {
    if (!re->anchored || prev == NOCP)
      add_thread(&m, clist, &cn, 0, gen, prev, cur);
    if (cn == 0 && re->anchored)
      break;
    const unsigned char *after = q;
    unsigned next = cur != NOCP && q < end ? utf8_next(&after, end) : NOCP;
    nn = 0;
    for (size_t i = 0; i < cn; i++) {
      const inst *in = &re->prog[clist[i]];
      int take = 0;
      m.steps++;
      switch (in->op) {
      case OP_MATCH:
        matched = 1;
        break;
      case OP_CHAR:
        take = cur == in->x;
        break;
      case OP_ANY:
        take = cur != NOCP && !is_line_terminator(cur);
        break;
      case OP_CLASS:
        take = cur != NOCP && class_has(re, in->x, cur);
        break;
      default:
        break;
      }
      if (matched)
        break;
      if (take)
        add_thread(&m, nlist, &nn, clist[i] + 1, gen + 1, cur, next);
    }
    if (matched || cur == NOCP)
      break;
    unsigned *t = clist;
    clist = nlist;
    nlist = t;
    cn = nn;
    gen++;
    prev = cur;
    cur = next;
    q = after;
  }
  *steps += m.steps;
  return matched;
}
