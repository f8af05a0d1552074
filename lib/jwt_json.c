/* Strict JSON read in place, for the JWT verifier.
 *
 * The transport may not call the engine's JSON layer (it is private to
 * libmcp), and a token must be checked without allocating, so that an
 * allocation failure can only come from OpenSSL. So this file checks a
 * document once by the same rules as lib/json.c (RFC 8259; valid UTF-8
 * without overlong forms or encoded surrogates; no raw control characters,
 * no "\u0000", no unpaired surrogate escape; no duplicate member name,
 * compared after unescaping; bounded nesting, members and number length),
 * and the readers below then walk the checked text without re-checking. */
#include <string.h>

#include "jwt_impl.h"

/* ---- checking ------------------------------------------------------------ */

typedef struct scan {
  const unsigned char *s;
  size_t n, pos;
  unsigned depth;
  uint32_t *keys; /* offsets of the member names of the open objects */
  size_t nkeys, cap;
  const char *why;
} scan;

static bool fail(scan *c, const char *why) {
  c->why = why;
  return false;
}

static bool is_ws(unsigned char ch) {
  return ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r';
}

static size_t skip_ws(const unsigned char *s, size_t n, size_t i) {
  while (i < n && is_ws(s[i]))
    i++;
  return i;
}

static int hex(unsigned char ch) {
  if (ch >= '0' && ch <= '9')
    return ch - '0';
  if (ch >= 'a' && ch <= 'f')
    return ch - 'a' + 10;
  if (ch >= 'A' && ch <= 'F')
    return ch - 'A' + 10;
  return -1;
}

/* The four hex digits at s[i..i+4), or -1. */
static long hex4(const unsigned char *s, size_t n, size_t i) {
  if (n < 4 || i > n - 4)
    return -1;
  long v = 0;
  for (size_t k = 0; k < 4; k++) {
    int h = hex(s[i + k]);
    if (h < 0)
      return -1;
    v = v * 16 + h;
  }
  return v;
}

/* Length of the well-formed UTF-8 sequence of two to four bytes at s, or
 * 0 (RFC 3629 table 3-7: no overlong forms, no surrogates, <= U+10FFFF). */
static size_t utf8_seq(const unsigned char *s, size_t avail) {
  unsigned char b = s[0];
  unsigned char lo = 0x80, hi = 0xBF;
  size_t len;
  if (b >= 0xC2 && b <= 0xDF) {
    len = 2;
  } else if (b >= 0xE0 && b <= 0xEF) {
    len = 3;
    if (b == 0xE0)
      lo = 0xA0;
    else if (b == 0xED)
      hi = 0x9F;
  } else if (b >= 0xF0 && b <= 0xF4) {
    len = 4;
    if (b == 0xF0)
      lo = 0x90;
    else if (b == 0xF4)
      hi = 0x8F;
  } else {
    return 0;
  }
  if (avail < len || s[1] < lo || s[1] > hi)
    return 0;
  for (size_t k = 2; k < len; k++)
    if (s[k] < 0x80 || s[k] > 0xBF)
      return 0;
  return len;
}

/* Checks the string literal whose opening quote is at c->pos and moves past
 * it. */
static bool check_string(scan *c) {
  const unsigned char *s = c->s;
  size_t i = c->pos + 1;
  for (;;) {
    if (i >= c->n)
      return fail(c, "unterminated string");
    unsigned char ch = s[i];
    if (ch == '"') {
      c->pos = i + 1;
      return true;
    }
    if (ch < 0x20)
      return fail(c, "control character in a string");
    if (ch < 0x80 && ch != '\\') {
      i++;
      continue;
    }
    if (ch >= 0x80) {
      size_t len = utf8_seq(s + i, c->n - i);
      if (len == 0)
        return fail(c, "invalid UTF-8");
      i += len;
      continue;
    }
    if (i + 1 >= c->n)
      return fail(c, "unterminated string");
    switch (s[i + 1]) {
    case '"':
    case '\\':
    case '/':
    case 'b':
    case 'f':
    case 'n':
    case 'r':
    case 't':
      i += 2;
      continue;
    case 'u':
      break;
    default:
      return fail(c, "invalid escape");
    }
    long u = hex4(s, c->n, i + 2);
    if (u < 0)
      return fail(c, "invalid \\u escape");
    i += 6;
    if (u == 0)
      return fail(c, "\\u0000 in a string");
    if (u >= 0xDC00 && u <= 0xDFFF)
      return fail(c, "unpaired low surrogate");
    if (u >= 0xD800 && u <= 0xDBFF) {
      long lo = (i + 1 < c->n && s[i] == '\\' && s[i + 1] == 'u')
                    ? hex4(s, c->n, i + 2)
                    : -1;
      if (lo < 0xDC00 || lo > 0xDFFF)
        return fail(c, "unpaired high surrogate");
      i += 6;
    }
  }
}

static bool is_digit(unsigned char ch) { return ch >= '0' && ch <= '9'; }

/* -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? */
static bool check_number(scan *c) {
  const unsigned char *s = c->s;
  size_t i = c->pos, n = c->n;
  if (i < n && s[i] == '-')
    i++;
  if (i < n && s[i] == '0') {
    i++;
  } else if (i < n && is_digit(s[i])) {
    while (i < n && is_digit(s[i]))
      i++;
  } else {
    return fail(c, "invalid number");
  }
  if (i < n && s[i] == '.') {
    i++;
    if (i >= n || !is_digit(s[i]))
      return fail(c, "invalid number");
    while (i < n && is_digit(s[i]))
      i++;
  }
  if (i < n && (s[i] == 'e' || s[i] == 'E')) {
    i++;
    if (i < n && (s[i] == '+' || s[i] == '-'))
      i++;
    if (i >= n || !is_digit(s[i]))
      return fail(c, "invalid number");
    while (i < n && is_digit(s[i]))
      i++;
  }
  if (i - c->pos > MCP__JSON_MAX_NUMBER)
    return fail(c, "number too long");
  c->pos = i;
  return true;
}

static bool check_literal(scan *c, const char *word) {
  size_t len = strlen(word);
  if (c->n - c->pos < len || memcmp(c->s + c->pos, word, len) != 0)
    return fail(c, "invalid literal");
  c->pos += len;
  return true;
}

/* Decoding a checked string literal one byte at a time: escapes come out
 * as the UTF-8 bytes of the character they stand for, so two literals are
 * equal exactly when their decoded texts are. */
typedef struct jit {
  const unsigned char *s;
  size_t i;
  unsigned char pend[4];
  unsigned npend, ipend;
} jit;

static void jit_init(jit *it, const unsigned char *lit) {
  it->s = lit;
  it->i = 1;
  it->npend = it->ipend = 0;
}

/* The next decoded byte, or -1 at the closing quote. */
static int jit_next(jit *it) {
  if (it->ipend < it->npend)
    return it->pend[it->ipend++];
  const unsigned char *s = it->s;
  unsigned char ch = s[it->i];
  if (ch == '"')
    return -1;
  if (ch != '\\') {
    it->i++;
    return ch;
  }
  ch = s[it->i + 1];
  it->i += 2;
  switch (ch) {
  case 'b':
    return '\b';
  case 'f':
    return '\f';
  case 'n':
    return '\n';
  case 'r':
    return '\r';
  case 't':
    return '\t';
  case 'u':
    break;
  default:
    return ch; /* '"', '\\', '/' */
  }
  /* The text was checked: four hex digits, and a low surrogate after a
   * high one. */
  unsigned long cp = (unsigned long)hex4(s, it->i + 4, it->i);
  it->i += 4;
  if (cp >= 0xD800 && cp <= 0xDBFF) {
    unsigned long lo = (unsigned long)hex4(s, it->i + 6, it->i + 2);
    it->i += 6;
    cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
  }
  unsigned char *p = it->pend;
  if (cp < 0x80) {
    it->npend = 0;
    return (int)cp;
  }
  if (cp < 0x800) {
    p[0] = (unsigned char)(0xC0 | (cp >> 6));
    p[1] = (unsigned char)(0x80 | (cp & 0x3F));
    it->npend = 2;
  } else if (cp < 0x10000) {
    p[0] = (unsigned char)(0xE0 | (cp >> 12));
    p[1] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
    p[2] = (unsigned char)(0x80 | (cp & 0x3F));
    it->npend = 3;
  } else {
    p[0] = (unsigned char)(0xF0 | (cp >> 18));
    p[1] = (unsigned char)(0x80 | ((cp >> 12) & 0x3F));
    p[2] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
    p[3] = (unsigned char)(0x80 | (cp & 0x3F));
    it->npend = 4;
  }
  it->ipend = 1;
  return p[0];
}

static bool same_literal(const unsigned char *a, const unsigned char *b) {
  jit x, y;
  jit_init(&x, a);
  jit_init(&y, b);
  for (;;) {
    int cx = jit_next(&x), cy = jit_next(&y);
    if (cx != cy)
      return false;
    if (cx < 0)
      return true;
  }
}

static bool check_value(scan *c);

/* Reads the name and ':' of the next member of the object whose names so
 * far are c->keys[base..]; members counts them. */
static bool check_member_name(scan *c, size_t base, size_t *members) {
  if (c->pos >= c->n || c->s[c->pos] != '"')
    return fail(c, "expected a member name");
  size_t key = c->pos;
  if (!check_string(c))
    return false;
  /* Quadratic in the members of one object, which are capped; a JWT
   * payload is only read after its signature was verified. */
  for (size_t k = base; k < c->nkeys; k++)
    if (same_literal(c->s + c->keys[k], c->s + key))
      return fail(c, "duplicate member name");
  if (++*members > MCP__JSON_MAX_MEMBERS || c->nkeys == c->cap)
    return fail(c, "too many members");
  c->keys[c->nkeys++] = (uint32_t)key;
  c->pos = skip_ws(c->s, c->n, c->pos);
  if (c->pos >= c->n || c->s[c->pos] != ':')
    return fail(c, "expected ':'");
  c->pos = skip_ws(c->s, c->n, c->pos + 1);
  return true;
}

/* Checks the object or array that opens at c->pos and moves past it: the
 * two differ only in their brackets and in the name before each value. */
static bool check_container(scan *c) {
  bool object = c->s[c->pos] == '{';
  unsigned char close = object ? '}' : ']';
  if (++c->depth > MCP__JSON_MAX_DEPTH)
    return fail(c, "nested too deeply");
  size_t base = c->nkeys, members = 0;
  c->pos = skip_ws(c->s, c->n, c->pos + 1);
  if (c->pos < c->n && c->s[c->pos] == close) {
    c->pos++;
    c->depth--;
    return true;
  }
  for (;;) {
    if (object && !check_member_name(c, base, &members))
      return false;
    if (!check_value(c))
      return false;
    c->pos = skip_ws(c->s, c->n, c->pos);
    if (c->pos < c->n && c->s[c->pos] == ',') {
      c->pos = skip_ws(c->s, c->n, c->pos + 1);
      continue;
    }
    if (c->pos < c->n && c->s[c->pos] == close)
      break;
    return fail(c, object ? "expected ',' or '}'" : "expected ',' or ']'");
  }
  c->pos++;
  c->nkeys = base;
  c->depth--;
  return true;
}

static bool check_value(scan *c) {
  if (c->pos >= c->n)
    return fail(c, "unexpected end");
  switch (c->s[c->pos]) {
  case '{':
  case '[':
    return check_container(c);
  case '"':
    return check_string(c);
  case 't':
    return check_literal(c, "true");
  case 'f':
    return check_literal(c, "false");
  case 'n':
    return check_literal(c, "null");
  default:
    return check_number(c);
  }
}

bool mcp__jwt_json_check(const char *s, size_t n, uint32_t *scratch, size_t cap,
                         mcp__jspan *root, const char **why) {
  scan c = {(const unsigned char *)s, n, 0, 0, scratch, 0, cap, NULL};
  c.pos = skip_ws(c.s, n, 0);
  if (c.pos >= n || c.s[c.pos] != '{') {
    *why = "not a JSON object";
    return false;
  }
  size_t start = c.pos;
  if (!check_container(&c)) {
    *why = c.why;
    return false;
  }
  root->p = s + start;
  root->n = c.pos - start;
  if (skip_ws(c.s, n, c.pos) != n) {
    *why = "text after the JSON value";
    return false;
  }
  return true;
}

/* ---- reading checked text ----------------------------------------------- */

static size_t skip_string(const unsigned char *s, size_t i) {
  i++;
  while (s[i] != '"')
    i += s[i] == '\\' ? 2 : 1;
  return i + 1;
}

/* The end of the checked value starting at s[i]. */
static size_t skip_value(const unsigned char *s, size_t n, size_t i) {
  if (s[i] == '"')
    return skip_string(s, i);
  if (s[i] == '{' || s[i] == '[') {
    unsigned depth = 0;
    for (;;) {
      unsigned char ch = s[i];
      if (ch == '"') {
        i = skip_string(s, i);
        continue;
      }
      if (ch == '{' || ch == '[') {
        depth++;
      } else if (ch == '}' || ch == ']') {
        if (--depth == 0)
          return i + 1;
      }
      i++;
    }
  }
  while (i < n && s[i] != ',' && s[i] != '}' && s[i] != ']' && !is_ws(s[i]))
    i++;
  return i;
}

mcp__jtype mcp__jwt_json_type(mcp__jspan v) {
  switch (v.n ? v.p[0] : 'n') {
  case '{':
    return MCP__J_OBJECT;
  case '[':
    return MCP__J_ARRAY;
  case '"':
    return MCP__J_STRING;
  case 't':
  case 'f':
  case 'n':
    return MCP__J_LITERAL;
  default:
    return MCP__J_NUMBER;
  }
}

bool mcp__jwt_json_string_is(mcp__jspan v, const char *str, size_t n) {
  if (mcp__jwt_json_type(v) != MCP__J_STRING)
    return false;
  jit it;
  jit_init(&it, (const unsigned char *)v.p);
  for (size_t k = 0;; k++) {
    int ch = jit_next(&it);
    if (ch < 0)
      return k == n;
    if (k == n || (unsigned char)str[k] != ch)
      return false;
  }
}

bool mcp__jwt_json_get(mcp__jspan obj, const char *name, mcp__jspan *val) {
  if (mcp__jwt_json_type(obj) != MCP__J_OBJECT)
    return false;
  const unsigned char *s = (const unsigned char *)obj.p;
  size_t n = obj.n, namelen = strlen(name);
  size_t i = skip_ws(s, n, 1);
  if (s[i] == '}')
    return false;
  for (;;) {
    size_t key = i;
    i = skip_ws(s, n, skip_string(s, i)) + 1; /* past ':' */
    size_t start = skip_ws(s, n, i);
    i = skip_value(s, n, start);
    mcp__jspan k = {obj.p + key, start - key};
    if (mcp__jwt_json_string_is(k, name, namelen)) {
      val->p = obj.p + start;
      val->n = i - start;
      return true;
    }
    i = skip_ws(s, n, i);
    if (s[i] == '}')
      return false;
    i = skip_ws(s, n, i + 1);
  }
}

bool mcp__jwt_json_next(mcp__jspan arr, size_t *pos, mcp__jspan *elem) {
  if (mcp__jwt_json_type(arr) != MCP__J_ARRAY)
    return false;
  const unsigned char *s = (const unsigned char *)arr.p;
  size_t i = *pos == 0 ? skip_ws(s, arr.n, 1) : *pos;
  if (s[i] == ']')
    return false;
  if (s[i] == ',')
    i = skip_ws(s, arr.n, i + 1);
  size_t end = skip_value(s, arr.n, i);
  elem->p = arr.p + i;
  elem->n = end - i;
  *pos = skip_ws(s, arr.n, end);
  return true;
}

bool mcp__jwt_json_string(mcp__jspan v, char *out, size_t cap, size_t *len) {
  if (mcp__jwt_json_type(v) != MCP__J_STRING || cap == 0)
    return false;
  jit it;
  jit_init(&it, (const unsigned char *)v.p);
  size_t k = 0;
  for (int ch; (ch = jit_next(&it)) >= 0;) {
    if (k + 1 >= cap)
      return false;
    out[k++] = (char)ch;
  }
  out[k] = '\0';
  if (len)
    *len = k;
  return true;
}

int mcp__jwt_json_seconds(mcp__jspan v, long long *out) {
  if (mcp__jwt_json_type(v) != MCP__J_NUMBER)
    return -1;
  const char *s = v.p, *end = v.p + v.n;
  if (*s == '-')
    return -2;
  /* The digits of the mantissa without the point, and where the point
   * goes once the exponent is applied; the whole seconds are the digits
   * before it. Text was checked: at most 63 characters. */
  char digits[MCP__JSON_MAX_NUMBER];
  size_t nd = 0;
  long point = 0;
  for (; s < end && is_digit((unsigned char)*s); s++, point++)
    digits[nd++] = *s;
  if (s < end && *s == '.')
    for (s++; s < end && is_digit((unsigned char)*s); s++)
      digits[nd++] = *s;
  if (s < end && (*s == 'e' || *s == 'E')) {
    s++;
    bool neg = *s == '-';
    if (*s == '-' || *s == '+')
      s++;
    long e = 0;
    for (; s < end; s++)
      if (e < 1000) /* beyond any digit count a number here can have */
        e = e * 10 + (*s - '0');
    point += neg ? -e : e;
  }
  const long long max = 9007199254740992LL; /* 2^53 */
  long long value = 0;
  for (long k = 0; k < point; k++) {
    int d = k < (long)nd ? digits[k] - '0' : 0;
    value = value * 10 + d;
    if (value > max)
      return -2;
  }
  *out = value;
  return 0;
}
