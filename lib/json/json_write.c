/* Compact JSON output straight into an mcp__buf. Kept apart from cJSON's
 * printer so numbers keep the exact text they arrived with and nothing is
 * printed into a temporary string only to be copied again. */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"

static int write_number(mcp__buf *b, const cJSON *node) {
  const char *text = mcp__json_number_text(node);
  if (text != NULL)
    return mcp__buf_puts(b, text);
  double d = node->valuedouble;
  if (!isfinite(d))
    return mcp__buf_puts(b, "null");
  /* The magnitude first: converting a double beyond long long's range is
   * undefined behaviour. */
  if (fabs(d) < 1e15 && d == (double)(long long)d)
    return mcp__buf_printf(b, "%lld", (long long)d);
  char tmp[32];
  snprintf(tmp, sizeof tmp, "%1.15g", d);
  if (strtod(tmp, NULL) != d)
    snprintf(tmp, sizeof tmp, "%1.17g", d);
  return mcp__buf_puts(b, tmp);
}

int mcp__json_write(mcp__buf *b, const cJSON *node) {
  switch (node->type & 0xff) {
  case cJSON_False:
    return mcp__buf_puts(b, "false");
  case cJSON_True:
    return mcp__buf_puts(b, "true");
  case cJSON_NULL:
    return mcp__buf_puts(b, "null");
  case cJSON_Number:
    return write_number(b, node);
  case cJSON_String:
    return mcp__json_quote(b, node->valuestring ? node->valuestring : "",
                           node->valuestring ? strlen(node->valuestring) : 0);
  case cJSON_Raw:
    return mcp__buf_puts(b, node->valuestring ? node->valuestring : "null");
  case cJSON_Array:
  case cJSON_Object: {
    int object = (node->type & 0xff) == cJSON_Object;
    mcp__buf_putc(b, object ? '{' : '[');
    for (const cJSON *c = node->child; c; c = c->next) {
      if (c != node->child)
        mcp__buf_putc(b, ',');
      if (object) {
        const char *k = c->string ? c->string : "";
        mcp__json_quote(b, k, strlen(k));
        mcp__buf_putc(b, ':');
      }
      if (mcp__json_write(b, c))
        return b->err;
    }
    return mcp__buf_putc(b, object ? '}' : ']');
  }
  default:
    return mcp__buf_puts(b, "null");
  }
}

size_t mcp__utf8_count(const char *s, size_t len) {
  size_t n = 0;
  for (size_t i = 0; i < len; i++)
    n += ((unsigned char)s[i] & 0xC0) != 0x80;
  return n;
}

int mcp__utf8_valid(const char *str, size_t len) {
  const unsigned char *s = (const unsigned char *)str, *end = s + len;
  const uint64_t ones = 0x0101010101010101u, highs = 0x8080808080808080u;
  while (s < end) {
    /* Eight ASCII bytes, none of them zero, at a time. */
    if (end - s >= 8) {
      uint64_t v;
      memcpy(&v, s, 8);
      if (((v | ((v - ones) & ~v)) & highs) == 0) {
        s += 8;
        continue;
      }
    }
    unsigned c = *s;
    if (c == 0)
      return 0;
    if (c < 0x80) {
      s++;
      continue;
    }
    size_t n;
    unsigned min, cp;
    if (c >= 0xc2 && c <= 0xdf) {
      n = 1, min = 0x80, cp = c & 0x1f;
    } else if (c >= 0xe0 && c <= 0xef) {
      n = 2, min = 0x800, cp = c & 0x0f;
    } else if (c >= 0xf0 && c <= 0xf4) {
      n = 3, min = 0x10000, cp = c & 0x07;
    } else {
      return 0;
    }
    if ((size_t)(end - s) <= n)
      return 0;
    for (size_t i = 1; i <= n; i++) {
      if ((s[i] & 0xc0) != 0x80)
        return 0;
      cp = cp << 6 | (s[i] & 0x3f);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
      return 0;
    s += n + 1;
  }
  return 1;
}

int mcp__json_integral(const cJSON *node, long long *out, int *overflow) {
  if (overflow)
    *overflow = 0;
  if (!cJSON_IsNumber(node))
    return 0;
  if (mcp__json_integer(node, out, overflow))
    return 1;
  double d = node->valuedouble;
  if (!isfinite(d) || d != trunc(d))
    return 0;
  if (fabs(d) >= 9223372036854775808.0) {
    if (overflow)
      *overflow = 1;
  } else if (out) {
    *out = (long long)d;
  }
  return 1;
}

void mcp__utf8_trim(char *s) {
  size_t n = strlen(s);
  while (n > 0 && !mcp__utf8_valid(s, n))
    n--;
  s[n] = '\0';
}
