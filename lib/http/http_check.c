/* Header checks of the HTTP transport: pure functions on header values,
 * so every rule can be tested with strings. They are strict on purpose:
 * anything they cannot read is refused, never guessed at. */
#include <ctype.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "http_int.h"

const char *const mcp__http_default_hosts[] = {"localhost", "127.0.0.1",
                                               "[::1]", NULL};

static bool is_ows(char c) { return c == ' ' || c == '\t'; }

static bool is_digit(char c) { return c >= '0' && c <= '9'; }

/* Case-insensitive comparison of two counted ASCII strings. */
static bool same_ci(const char *a, size_t an, const char *b, size_t bn) {
  return an == bn && strncasecmp(a, b, an) == 0;
}

/* Splits "name[:port]" or "[v6][:port]" into its host (brackets removed)
 * and port (NULL when absent). Returns false when the text is not of that
 * shape: an empty host, a bad port, characters no host name has. */
static bool split_host(const char *v, size_t n, const char **host,
                       size_t *host_len, const char **port, size_t *port_len) {
  const char *end = v + n, *colon = NULL;
  *port = NULL;
  *port_len = 0;
  if (n > 0 && v[0] == '[') {
    const char *close = memchr(v, ']', n);
    if (close == NULL || close == v + 1)
      return false;
    for (const char *p = v + 1; p < close; p++)
      if (!(is_digit(*p) || (*p >= 'a' && *p <= 'f') ||
            (*p >= 'A' && *p <= 'F') || *p == ':' || *p == '.'))
        return false;
    *host = v + 1;
    *host_len = (size_t)(close - v - 1);
    if (close + 1 == end)
      return true;
    if (close[1] != ':')
      return false;
    colon = close + 1;
  } else {
    for (const char *p = v; p < end; p++) {
      if (*p == ':') {
        if (colon)
          return false; /* a bare IPv6 literal is no Host value */
        colon = p;
      } else if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
                   is_digit(*p) || *p == '-' || *p == '.' || *p == '_')) {
        return false;
      }
    }
    *host = v;
    *host_len = colon ? (size_t)(colon - v) : n;
    if (*host_len == 0)
      return false;
  }
  if (colon) {
    *port = colon + 1;
    *port_len = (size_t)(end - colon - 1);
    if (*port_len == 0 || *port_len > 5)
      return false;
    unsigned value = 0;
    for (size_t i = 0; i < *port_len; i++) {
      if (!is_digit((*port)[i]))
        return false;
      value = value * 10 + (unsigned)((*port)[i] - '0');
    }
    /* A port is a 16-bit number, and 0 names none. */
    if (value == 0 || value > 65535)
      return false;
  }
  return true;
}

/* An allowlist entry: a host, with an optional port. A bare IPv6 literal
 * ("::1") is accepted as well as the bracketed form. */
static bool entry_matches(const char *entry, const char *host, size_t host_len,
                          const char *port, size_t port_len) {
  size_t n = strlen(entry);
  const char *eh, *ep;
  size_t ehn, epn;
  if (!split_host(entry, n, &eh, &ehn, &ep, &epn)) {
    if (memchr(entry, ':', n) == NULL)
      return false;
    eh = entry; /* "::1" */
    ehn = n;
    ep = NULL;
    epn = 0;
  }
  if (!same_ci(eh, ehn, host, host_len))
    return false;
  return ep == NULL || (port != NULL && same_ci(ep, epn, port, port_len));
}

bool mcp__http_host_allowed(const char *const *list, const char *value,
                            size_t len) {
  const char *host, *port;
  size_t host_len, port_len;
  if (list == NULL || value == NULL || memchr(value, '\0', len) ||
      !split_host(value, len, &host, &host_len, &port, &port_len))
    return false;
  for (size_t i = 0; list[i]; i++)
    if (entry_matches(list[i], host, host_len, port, port_len))
      return true;
  return false;
}

bool mcp__http_origin_allowed(const char *const *list, const char *value,
                              size_t len) {
  if (list == NULL || value == NULL || memchr(value, '\0', len))
    return false;
  const char *sep = NULL;
  for (size_t i = 0; i + 2 < len; i++) {
    if (value[i] == ':' && value[i + 1] == '/' && value[i + 2] == '/') {
      sep = value + i;
      break;
    }
  }
  if (sep == NULL || sep == value)
    return false; /* "null" and anything that is not scheme://host */
  for (const char *p = value; p < sep; p++)
    if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
          (p > value && (is_digit(*p) || *p == '+' || *p == '-' || *p == '.'))))
      return false;
  const char *authority = sep + 3;
  size_t alen = len - (size_t)(authority - value);
  const char *host, *port;
  size_t host_len, port_len;
  if (!split_host(authority, alen, &host, &host_len, &port, &port_len))
    return false; /* a path, user info or junk after the host */
  for (size_t i = 0; list[i]; i++) {
    const char *e = list[i];
    if (strstr(e, "://") != NULL) {
      size_t en = strlen(e);
      while (en > 0 && e[en - 1] == '/')
        en--;
      if (same_ci(e, en, value, len))
        return true;
    } else if (entry_matches(e, host, host_len, port, port_len)) {
      return true;
    }
  }
  return false;
}

/* Trims optional white space around [*s, *e). */
static void trim(const char **s, const char **e) {
  while (*s < *e && is_ows(**s))
    (*s)++;
  while (*e > *s && is_ows((*e)[-1]))
    (*e)--;
}

/* Reads the parameter list after a media type: reports whether a q of
 * zero excludes it, and the charset (unquoted) if one is named. */
static void media_params(const char *p, const char *end, bool *q_zero,
                         const char **charset, size_t *charset_len) {
  *q_zero = false;
  if (charset)
    *charset = NULL;
  while (p < end) {
    const char *semi = memchr(p, ';', (size_t)(end - p));
    const char *s = p, *e = semi ? semi : end;
    trim(&s, &e);
    const char *eq = memchr(s, '=', (size_t)(e - s));
    if (eq) {
      const char *ks = s, *ke = eq, *vs = eq + 1, *ve = e;
      trim(&ks, &ke);
      trim(&vs, &ve);
      if (ve - vs >= 2 && *vs == '"' && ve[-1] == '"') {
        vs++;
        ve--;
      }
      if (same_ci(ks, (size_t)(ke - ks), "q", 1)) {
        /* q=0, 0.0, 0.00 or 0.000 */
        bool zero = vs < ve && *vs == '0';
        for (const char *c = vs + 1; zero && c < ve; c++)
          zero = *c == '.' || *c == '0';
        *q_zero = zero;
      } else if (charset && same_ci(ks, (size_t)(ke - ks), "charset", 7)) {
        *charset = vs;
        *charset_len = (size_t)(ve - vs);
      }
    }
    p = semi ? semi + 1 : end;
  }
}

bool mcp__http_content_type_json(const char *value) {
  if (value == NULL)
    return false;
  const char *end = value + strlen(value);
  const char *semi = memchr(value, ';', (size_t)(end - value));
  const char *s = value, *e = semi ? semi : end;
  trim(&s, &e);
  if (!same_ci(s, (size_t)(e - s), "application/json", 16))
    return false;
  if (semi == NULL)
    return true;
  bool q_zero;
  const char *cs;
  size_t csn = 0;
  media_params(semi + 1, end, &q_zero, &cs, &csn);
  return cs == NULL || same_ci(cs, csn, "utf-8", 5) ||
         same_ci(cs, csn, "utf8", 4);
}

unsigned mcp__http_accept(const char *value) {
  unsigned mask = 0;
  if (value == NULL)
    return 0;
  const char *p = value, *end = value + strlen(value);
  while (p < end) {
    const char *comma = memchr(p, ',', (size_t)(end - p));
    const char *item_end = comma ? comma : end;
    const char *semi = memchr(p, ';', (size_t)(item_end - p));
    const char *s = p, *e = semi ? semi : item_end;
    trim(&s, &e);
    bool q_zero = false;
    if (semi)
      media_params(semi + 1, item_end, &q_zero, NULL, NULL);
    size_t n = (size_t)(e - s);
    if (!q_zero) {
      if (same_ci(s, n, "*/*", 3))
        mask |= MCP__HTTP_ACCEPT_JSON | MCP__HTTP_ACCEPT_SSE;
      else if (same_ci(s, n, "application/json", 16) ||
               same_ci(s, n, "application/*", 13))
        mask |= MCP__HTTP_ACCEPT_JSON;
      else if (same_ci(s, n, "text/event-stream", 17) ||
               same_ci(s, n, "text/*", 6))
        mask |= MCP__HTTP_ACCEPT_SSE;
    }
    p = comma ? comma + 1 : end;
  }
  return mask;
}

bool mcp__http_visible_ascii(const char *value, size_t len, size_t max) {
  if (value == NULL || len == 0 || len > max)
    return false;
  for (size_t i = 0; i < len; i++)
    if ((unsigned char)value[i] < 0x21 || (unsigned char)value[i] > 0x7e)
      return false;
  return true;
}

int mcp__http_header_decode(const char *value, size_t len, char **out,
                            size_t *out_len) {
  static const char pre[] = "=?base64?", post[] = "?=";
  size_t npre = sizeof pre - 1, npost = sizeof post - 1;
  if (value == NULL)
    return MCP_EINVAL;
  /* The value is checked whole before anything is allocated, so running
   * out of memory (MCP_ENOMEM: a 500) is never taken for a malformed
   * value (a 400). */
  if (len >= npre + npost && memcmp(value, pre, npre) == 0 &&
      memcmp(value + len - npost, post, npost) == 0) {
    /* Canonical base64 only (SEP-2243): whole quanta, padding at the end
     * and nowhere else. */
    const char *in = value + npre;
    size_t n = len - npre - npost, o;
    /* A decoded NUL could not be compared with JSON text. */
    if (!mcp__base64_decode(in, n, NULL, 0, &o, MCP__BASE64_NO_NUL))
      return MCP_EINVAL;
    if ((*out = mcp_malloc(o + 1)) == NULL)
      return MCP_ENOMEM;
    mcp__base64_decode(in, n, (unsigned char *)*out, o, NULL, 0);
    (*out)[o] = '\0';
    *out_len = o;
    return 0;
  }
  /* A plain value: visible ASCII and spaces only. */
  for (size_t i = 0; i < len; i++)
    if ((unsigned char)value[i] < 0x20 || (unsigned char)value[i] > 0x7e)
      return MCP_EINVAL;
  if ((*out = mcp_malloc(len + 1)) == NULL)
    return MCP_ENOMEM;
  memcpy(*out, value, len);
  (*out)[len] = '\0';
  *out_len = len;
  return 0;
}

bool mcp__http_event_id_parse(const char *value, unsigned *stream,
                              unsigned long long *seq) {
  if (value == NULL || !is_digit(value[0]))
    return false;
  char *end;
  unsigned long no = strtoul(value, &end, 10);
  if (*end != '-' || no == 0 || no > UINT_MAX || end - value > 10 ||
      !is_digit(end[1]))
    return false;
  const char *s = end + 1;
  unsigned long long n = strtoull(s, &end, 10);
  if (*end != '\0' || end - s > 19)
    return false;
  *stream = (unsigned)no;
  *seq = n;
  return true;
}

bool mcp__http_legacy_version(const char *value) {
  int v = mcp__version_find(value);
  return v >= 0 && v < MCP__VERSION_MODERN;
}
