/* Exact decimal numbers and JSON equality for the schema validator.
 *
 * JSON Schema compares numbers by mathematical value. Doubles get that
 * wrong at the edges that matter to a validator: integers beyond 2^53,
 * "1.0 is an integer", and multipleOf with decimal fractions (0.0075 is a
 * multiple of 0.0001, which binary division denies). The strict parser
 * keeps each number's text, so values are read from it into a normalized
 * decimal and compared digit by digit. */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "schema_int.h"

/* Reads decimal number text (JSON grammar, or what printf %g writes). */
static void dec_parse(const char *t, mcp__dec *out) {
  out->neg = 0;
  out->nd = 0;
  out->exp = 0;
  if (*t == '-') {
    out->neg = 1;
    t++;
  } else if (*t == '+') {
    t++;
  }
  long point = 0; /* digits before the decimal point, after leading zeros */
  int seen_nonzero = 0, after_point = 0;
  for (; *t; t++) {
    if (*t == '.') {
      after_point = 1;
      continue;
    }
    if (*t < '0' || *t > '9')
      break;
    if (!seen_nonzero && *t == '0') {
      if (after_point)
        point--; /* a leading zero after the point scales down */
      continue;
    }
    seen_nonzero = 1;
    if (!after_point)
      point++;
    if (out->nd < MCP__DEC_DIGITS)
      out->d[out->nd++] = *t;
  }
  long e = 0;
  if (*t == 'e' || *t == 'E') {
    t++;
    int eneg = 0;
    if (*t == '-' || *t == '+')
      eneg = *t++ == '-';
    for (; *t >= '0' && *t <= '9'; t++)
      if (e < 1000000000L)
        e = e * 10 + (*t - '0');
    if (eneg)
      e = -e;
  }
  while (out->nd > 0 && out->d[out->nd - 1] == '0')
    out->nd--;
  if (out->nd == 0) {
    out->neg = 0;
    out->exp = 0;
    return;
  }
  out->exp = point + e;
}

int mcp__dec_from_json(const cJSON *num, mcp__dec *out) {
  const char *text = mcp__json_number_text(num);
  if (text != NULL) {
    dec_parse(text, out);
    return 0;
  }
  double d = num->valuedouble;
  if (!isfinite(d))
    return -1;
  char tmp[40];
  snprintf(tmp, sizeof tmp, "%.17g", d);
  dec_parse(tmp, out);
  return 0;
}

static int mag_cmp(const mcp__dec *a, const mcp__dec *b) {
  if (a->exp != b->exp)
    return a->exp < b->exp ? -1 : 1;
  int n = a->nd < b->nd ? a->nd : b->nd;
  int c = memcmp(a->d, b->d, (size_t)n);
  if (c != 0)
    return c < 0 ? -1 : 1;
  return a->nd == b->nd ? 0 : a->nd < b->nd ? -1 : 1;
}

int mcp__dec_cmp(const mcp__dec *a, const mcp__dec *b) {
  int sa = a->nd == 0 ? 0 : a->neg ? -1 : 1;
  int sb = b->nd == 0 ? 0 : b->neg ? -1 : 1;
  if (sa != sb)
    return sa < sb ? -1 : 1;
  if (sa == 0)
    return 0;
  int m = mag_cmp(a, b);
  return sa < 0 ? -m : m;
}

int mcp__dec_is_integer(const mcp__dec *a) {
  return a->nd == 0 || a->exp >= a->nd;
}

/* (a * b) mod m without overflow, for m < 2^63. */
static uint64_t mulmod(uint64_t a, uint64_t b, uint64_t m) {
  uint64_t r = 0;
  a %= m;
  while (b) {
    if (b & 1)
      r = r >= m - a ? r - (m - a) : r + a;
    a = a >= m - a ? a - (m - a) : a + a;
    b >>= 1;
  }
  return r;
}

int mcp__dec_multiple_of(const mcp__dec *x, const mcp__dec *m) {
  if (x->nd == 0)
    return 1;
  /* x = X * 10^ex and m = M * 10^em with X, M integers without trailing
   * zeros; x / m = (X / M) * 10^k. */
  long ex = x->exp - x->nd, em = m->exp - m->nd;
  if (m->nd <= 18) {
    uint64_t mm = 0;
    for (int i = 0; i < m->nd; i++)
      mm = mm * 10 + (uint64_t)(m->d[i] - '0');
    long k = ex - em;
    /* With k < 0, M * 10^-k would have to divide X, which would then end
     * in a zero; normalized X does not. */
    if (k < 0)
      return 0;
    uint64_t r = 0;
    for (int i = 0; i < x->nd; i++)
      r = (r * 10 + (uint64_t)(x->d[i] - '0')) % mm;
    uint64_t p = 1 % mm, base = 10 % mm;
    for (unsigned long e = (unsigned long)k; e; e >>= 1) {
      if (e & 1)
        p = mulmod(p, base, mm);
      base = mulmod(base, base, mm);
    }
    return mulmod(r, p, mm) == 0;
  }
  /* A divisor of more than 18 significant digits: fall back to binary. */
  char a[MCP__DEC_DIGITS + 32], b[MCP__DEC_DIGITS + 32];
  snprintf(a, sizeof a, "%s0.%.*se%ld", x->neg ? "-" : "", x->nd, x->d, x->exp);
  snprintf(b, sizeof b, "0.%.*se%ld", m->nd, m->d, m->exp);
  double q = strtod(a, NULL) / strtod(b, NULL);
  return isfinite(q) && q == floor(q);
}

/* ---- JSON equality ------------------------------------------------------- */

static int kind(const cJSON *v) {
  int t = v->type & 0xFF;
  if (t == cJSON_Number && !isfinite(v->valuedouble) &&
      mcp__json_number_text(v) == NULL)
    return cJSON_NULL; /* written as null on the wire */
  return t;
}

/* Equality and hashing recurse once per level of nesting; the decimals
 * live in these out-of-line helpers so they are not part of every
 * recursive frame. */
#if defined(__GNUC__)
#define OUT_OF_LINE __attribute__((noinline))
#else
#define OUT_OF_LINE
#endif

OUT_OF_LINE static int numbers_equal(const cJSON *a, const cJSON *b) {
  mcp__dec x, y;
  mcp__dec_from_json(a, &x);
  mcp__dec_from_json(b, &y);
  return mcp__dec_cmp(&x, &y) == 0;
}

static uint64_t fnv(uint64_t h, const void *p, size_t n);

OUT_OF_LINE static uint64_t number_hash(uint64_t h, const cJSON *v) {
  mcp__dec d;
  mcp__dec_from_json(v, &d);
  h = fnv(h, &d.neg, sizeof d.neg);
  h = fnv(h, &d.exp, sizeof d.exp);
  return fnv(h, d.d, (size_t)d.nd);
}

int mcp__json_equal(const cJSON *a, const cJSON *b, int depth,
                    unsigned long *steps) {
  (*steps)++;
  if (depth <= 0)
    return -1;
  int ka = kind(a), kb = kind(b);
  if (ka != kb)
    return 0;
  switch (ka) {
  case cJSON_Number:
    return numbers_equal(a, b);
  case cJSON_String:
  case cJSON_Raw:
    return strcmp(a->valuestring ? a->valuestring : "",
                  b->valuestring ? b->valuestring : "") == 0;
  case cJSON_Array: {
    const cJSON *x = a->child, *y = b->child;
    for (; x && y; x = x->next, y = y->next) {
      int r = mcp__json_equal(x, y, depth - 1, steps);
      if (r != 1)
        return r;
    }
    return x == NULL && y == NULL;
  }
  case cJSON_Object: {
    size_t na = 0, nb = 0;
    for (const cJSON *x = a->child; x; x = x->next)
      na++;
    for (const cJSON *y = b->child; y; y = y->next)
      nb++;
    if (na != nb)
      return 0;
    for (const cJSON *x = a->child; x; x = x->next) {
      const cJSON *y = b->child;
      for (; y; y = y->next) {
        (*steps)++;
        if (x->string && y->string && strcmp(x->string, y->string) == 0)
          break;
      }
      if (y == NULL)
        return 0;
      int r = mcp__json_equal(x, y, depth - 1, steps);
      if (r != 1)
        return r;
    }
    return 1;
  }
  default:
    return 1; /* null, true, false: the kind says it all */
  }
}

static uint64_t fnv(uint64_t h, const void *p, size_t n) {
  const unsigned char *s = p;
  for (size_t i = 0; i < n; i++)
    h = (h ^ s[i]) * 0x100000001b3ull;
  return h;
}

static uint64_t mix(uint64_t h) {
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdull;
  h ^= h >> 33;
  return h;
}

int mcp__json_hash(const cJSON *v, int depth, unsigned long *steps,
                   uint64_t *out) {
  (*steps)++;
  if (depth <= 0)
    return -1;
  int k = kind(v);
  uint64_t h = fnv(0xcbf29ce484222325ull, &k, sizeof k);
  switch (k) {
  case cJSON_Number:
    h = number_hash(h, v);
    break;
  case cJSON_String:
  case cJSON_Raw:
    if (v->valuestring)
      h = fnv(h, v->valuestring, strlen(v->valuestring));
    break;
  case cJSON_Array:
    for (const cJSON *x = v->child; x; x = x->next) {
      uint64_t c;
      if (mcp__json_hash(x, depth - 1, steps, &c))
        return -1;
      h = mix(h ^ c) * 31;
    }
    break;
  case cJSON_Object: {
    uint64_t sum = 0; /* order-independent */
    for (const cJSON *x = v->child; x; x = x->next) {
      uint64_t c;
      if (mcp__json_hash(x, depth - 1, steps, &c))
        return -1;
      const char *key = x->string ? x->string : "";
      sum += mix(fnv(0xcbf29ce484222325ull, key, strlen(key)) ^ mix(c));
    }
    h = mix(h ^ sum);
    break;
  }
  default:
    break;
  }
  *out = h;
  return 0;
}
