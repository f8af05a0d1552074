/* The "format" values libmcp can assert: date-time, date, email, uri, uuid,
 * ipv4 and ipv6.
 *
 * JSON Schema 2020-12 makes "format" an annotation unless the user opts in
 * to assertion; these checkers are used only then. Each follows the RFC the
 * specification names, and accepts ASCII only where the RFC says so (a
 * Bengali digit is not a digit in a date). Other format names stay
 * annotations even when assertion is on. */
#include <string.h>

#include "schema_int.h"

static const struct {
  const char *name, *example;
} formats[] = {
    [MCP__FMT_NONE] = {"", ""},
    [MCP__FMT_DATE_TIME] = {"date-time", "an RFC 3339 date-time such as "
                                         "2025-01-31T09:30:00Z"},
    [MCP__FMT_DATE] = {"date", "an RFC 3339 full-date such as 2025-01-31"},
    [MCP__FMT_EMAIL] = {"email", "an RFC 5321 address such as "
                                 "name@example.com"},
    [MCP__FMT_URI] = {"uri", "an absolute RFC 3986 URI such as "
                             "https://example.com/path"},
    [MCP__FMT_UUID] = {"uuid", "an RFC 4122 UUID such as "
                               "123e4567-e89b-12d3-a456-426614174000"},
    [MCP__FMT_IPV4] = {"ipv4", "a dotted-quad IPv4 address such as "
                               "192.0.2.1"},
    [MCP__FMT_IPV6] = {"ipv6", "an RFC 4291 IPv6 address such as 2001:db8::1"},
};

mcp__format mcp__format_find(const char *name) {
  for (int f = MCP__FMT_DATE_TIME; f <= MCP__FMT_IPV6; f++)
    if (strcmp(name, formats[f].name) == 0)
      return (mcp__format)f;
  return MCP__FMT_NONE;
}

const char *mcp__format_name(mcp__format f) { return formats[f].name; }

const char *mcp__format_example(mcp__format f) { return formats[f].example; }

static int digit(char c) { return c >= '0' && c <= '9'; }

static int hex(char c) {
  return digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

static int alpha(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

/* Reads exactly n ASCII digits as a number; -1 if they are not there. */
static int num(const char **p, int n) {
  int v = 0;
  for (int i = 0; i < n; i++) {
    if (!digit((*p)[i]))
      return -1;
    v = v * 10 + ((*p)[i] - '0');
  }
  *p += n;
  return v;
}

/* ---- RFC 3339 ------------------------------------------------------------ */

static int full_date(const char **p) {
  int y = num(p, 4);
  if (y < 0 || **p != '-')
    return 0;
  (*p)++;
  int m = num(p, 2);
  if (m < 1 || m > 12 || **p != '-')
    return 0;
  (*p)++;
  int d = num(p, 2);
  static const int days[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  int leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
  int max = days[m - 1] + (m == 2 && leap);
  return d >= 1 && d <= max;
}

static int date_time(const char *s) {
  if (!full_date(&s) || (*s != 'T' && *s != 't'))
    return 0;
  s++;
  int h = num(&s, 2);
  if (h < 0 || h > 23 || *s++ != ':')
    return 0;
  int mi = num(&s, 2);
  if (mi < 0 || mi > 59 || *s++ != ':')
    return 0;
  int sec = num(&s, 2);
  if (sec < 0 || sec > 60)
    return 0;
  if (*s == '.') {
    s++;
    if (!digit(*s))
      return 0;
    while (digit(*s))
      s++;
  }
  int offset = 0; /* minutes east of UTC */
  if (*s == 'Z' || *s == 'z') {
    s++;
  } else if (*s == '+' || *s == '-') {
    int sign = *s++ == '-' ? -1 : 1;
    int oh = num(&s, 2);
    if (oh < 0 || oh > 23 || *s++ != ':')
      return 0;
    int om = num(&s, 2);
    if (om < 0 || om > 59)
      return 0;
    offset = sign * (oh * 60 + om);
  } else {
    return 0;
  }
  if (*s != '\0')
    return 0;
  /* A leap second exists only at 23:59:60 UTC. */
  if (sec == 60) {
    int utc = ((h * 60 + mi - offset) % 1440 + 1440) % 1440;
    if (utc != 23 * 60 + 59)
      return 0;
  }
  return 1;
}

static int date(const char *s) { return full_date(&s) && *s == '\0'; }

/* ---- addresses ----------------------------------------------------------- */

/* A dotted-quad IPv4 address of exactly the n bytes at s. */
static int ipv4_n(const char *s, size_t n) {
  size_t i = 0;
  for (int part = 0; part < 4; part++) {
    if (part > 0) {
      if (i >= n || s[i] != '.')
        return 0;
      i++;
    }
    size_t start = i;
    int v = 0;
    while (i < n && digit(s[i]) && i - start < 3)
      v = v * 10 + (s[i++] - '0');
    if (i == start || v > 255 || (s[start] == '0' && i - start > 1))
      return 0;
  }
  return i == n;
}

static int ipv6_n(const char *s, size_t n) {
  size_t i = 0;
  int groups = 0, gap = 0;
  if (n >= 2 && s[0] == ':' && s[1] == ':') {
    gap = 1;
    i = 2;
    if (n == 2)
      return 1;
  }
  for (;;) {
    size_t start = i;
    while (i < n && hex(s[i]) && i - start < 4)
      i++;
    if (i == start)
      return 0;
    if (i < n && s[i] == '.') {
      /* An IPv4 tail stands for the last two groups. */
      if (groups > 6 || !ipv4_n(s + start, n - start))
        return 0;
      groups += 2;
      break;
    }
    groups++;
    if (i == n)
      break;
    if (s[i] != ':' || groups > 8)
      return 0;
    i++;
    if (i < n && s[i] == ':') {
      if (gap)
        return 0;
      gap = 1;
      i++;
      if (i == n)
        break;
    }
  }
  return gap ? groups <= 7 : groups == 8;
}

static int ipv4(const char *s) { return ipv4_n(s, strlen(s)); }

static int ipv6(const char *s) { return ipv6_n(s, strlen(s)); }

/* An RFC 1123 host name: dot-separated labels of letters, digits and
 * hyphens, not starting or ending with a hyphen. */
static int hostname_n(const char *s, size_t n) {
  if (n == 0 || n > 253)
    return 0;
  size_t label = 0;
  for (size_t i = 0; i <= n; i++) {
    if (i == n || s[i] == '.') {
      if (label == 0 || label > 63 || s[i - 1] == '-')
        return 0;
      label = 0;
      continue;
    }
    if (!(alpha(s[i]) || digit(s[i]) || (s[i] == '-' && label > 0)))
      return 0;
    label++;
  }
  return 1;
}

static int atext(char c) {
  return alpha(c) || digit(c) ||
         (c != '\0' && strchr("!#$%&'*+-/=?^_`{|}~", c));
}

/* RFC 5321 Mailbox: a dot-atom or quoted local part, "@", and a domain or
 * an address literal. */
static int email(const char *s) {
  const char *p = s;
  if (*p == '"') {
    for (p++; *p != '"'; p++) {
      if (*p == '\\')
        p++;
      if (*p < 0x20 || *p > 0x7e)
        return 0;
    }
    p++;
  } else {
    int prev_dot = 1; /* no dot first */
    for (; *p && *p != '@'; p++) {
      if (*p == '.') {
        if (prev_dot)
          return 0;
        prev_dot = 1;
      } else if (atext(*p)) {
        prev_dot = 0;
      } else {
        return 0;
      }
    }
    if (prev_dot)
      return 0; /* empty, or ending with a dot */
  }
  if (*p != '@' || p - s > 64)
    return 0;
  const char *d = p + 1;
  size_t n = strlen(d);
  if (n >= 2 && d[0] == '[' && d[n - 1] == ']') {
    if (n > 7 && strncmp(d + 1, "IPv6:", 5) == 0)
      return ipv6_n(d + 6, n - 7);
    return ipv4_n(d + 1, n - 2);
  }
  return hostname_n(d, n);
}

/* ---- RFC 3986 ------------------------------------------------------------ */

static int unreserved(char c) {
  return alpha(c) || digit(c) || c == '-' || c == '.' || c == '_' || c == '~';
}

static int sub_delim(char c) { return c != '\0' && strchr("!$&'()*+,;=", c); }

/* Skips characters allowed by kind (plus percent-encodings); returns the
 * end, or NULL at a malformed percent-encoding. */
static const char *span_chars(const char *p, const char *extra) {
  for (;;) {
    if (*p == '%') {
      if (!hex(p[1]) || !hex(p[2]))
        return NULL;
      p += 3;
    } else if (unreserved(*p) || sub_delim(*p) ||
               (*p != '\0' && strchr(extra, *p))) {
      p++;
    } else {
      return p;
    }
  }
}

static int uri(const char *s) {
  const char *p = s;
  if (!alpha(*p))
    return 0;
  while (alpha(*p) || digit(*p) || *p == '+' || *p == '-' || *p == '.')
    p++;
  if (*p++ != ':')
    return 0;
  if (p[0] == '/' && p[1] == '/') {
    p += 2;
    const char *end = p + strcspn(p, "/?#");
    const char *at = memchr(p, '@', (size_t)(end - p));
    if (at) {
      const char *u = span_chars(p, ":");
      if (u != at)
        return 0;
      p = at + 1;
    }
    if (*p == '[') {
      const char *close = memchr(p, ']', (size_t)(end - p));
      if (close == NULL)
        return 0;
      int ok = (p[1] == 'v' || p[1] == 'V')
                   ? close - p > 3 && span_chars(p + 2, ":") == close
                   : ipv6_n(p + 1, (size_t)(close - p - 1));
      if (!ok)
        return 0;
      p = close + 1;
    } else {
      p = span_chars(p, "");
      if (p == NULL)
        return 0;
    }
    if (*p == ':') {
      p++;
      while (digit(*p))
        p++;
    }
    if (p != end)
      return 0;
  }
  p = span_chars(p, ":@/");
  if (p == NULL)
    return 0;
  if (*p == '?' && (p = span_chars(p + 1, ":@/?")) == NULL)
    return 0;
  if (*p == '#' && (p = span_chars(p + 1, ":@/?")) == NULL)
    return 0;
  return *p == '\0';
}

static int uuid(const char *s) {
  for (int i = 0; i < 36; i++) {
    int dash = i == 8 || i == 13 || i == 18 || i == 23;
    if (dash ? s[i] != '-' : !hex(s[i]))
      return 0;
  }
  return s[36] == '\0';
}

int mcp__format_check(mcp__format f, const char *s) {
  switch (f) {
  case MCP__FMT_DATE_TIME:
    return date_time(s);
  case MCP__FMT_DATE:
    return date(s);
  case MCP__FMT_EMAIL:
    return email(s);
  case MCP__FMT_URI:
    return uri(s);
  case MCP__FMT_UUID:
    return uuid(s);
  case MCP__FMT_IPV4:
    return ipv4(s);
  case MCP__FMT_IPV6:
    return ipv6(s);
  default:
    return 1;
  }
}
