/* Reading the JSON of tokens and key sets: parsed by the library's strict
 * JSON layer (lib/json), then read member by member. */
#include <string.h>

#include "jwt_int.h"

const mcp__json_limits mcp__jwt_json_limits = {
    .max_depth = 16, .max_members = 256, .max_number = 63, .pooled = 1};

int mcp__jwt_parse(const char *s, size_t n, mcp__json_doc *doc) {
  int rc = mcp__json_parse(s, n, &mcp__jwt_json_limits, doc, NULL, 0);
  if (rc == MCP_ENOMEM)
    return rc;
  if (rc != 0 || !cJSON_IsObject(doc->root)) {
    mcp__json_doc_free(doc);
    return MCP_EINVAL;
  }
  return 0;
}

bool mcp__jwt_string(const cJSON *v, char *out, size_t cap, size_t *len) {
  if (!cJSON_IsString(v))
    return false;
  size_t n = strlen(v->valuestring);
  if (n >= cap)
    return false;
  memcpy(out, v->valuestring, n + 1);
  if (len)
    *len = n;
  return true;
}

bool mcp__jwt_string_is(const cJSON *v, const char *s, size_t n) {
  return cJSON_IsString(v) && strlen(v->valuestring) == n &&
         memcmp(v->valuestring, s, n) == 0;
}

static bool is_digit(char c) { return c >= '0' && c <= '9'; }

int mcp__jwt_seconds(const cJSON *v, long long *out) {
  const char *s = cJSON_IsNumber(v) ? mcp__json_number_text(v) : NULL;
  if (s == NULL)
    return -1;
  if (*s == '-')
    return -2;
  /* The digits of the mantissa without the point, and where the point
   * goes once the exponent is applied; the whole seconds are the digits
   * before it. The parser's limit holds the text to 63 characters. */
  char digits[64];
  size_t nd = 0;
  long point = 0;
  for (; is_digit(*s) && nd < sizeof digits; s++, point++)
    digits[nd++] = *s;
  if (*s == '.')
    for (s++; is_digit(*s) && nd < sizeof digits; s++)
      digits[nd++] = *s;
  if (*s == 'e' || *s == 'E') {
    s++;
    bool neg = *s == '-';
    if (*s == '-' || *s == '+')
      s++;
    long e = 0;
    for (; is_digit(*s); s++)
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
