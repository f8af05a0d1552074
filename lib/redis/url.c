/* The Redis store's URL: redis://[[user]:password@]host[:port][/db],
 * unix://[[user]:password@]/path[?db=N], or an absolute socket path. Every
 * way a URL can be wrong gets its own sentence. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "base.h"
#include "redis_int.h"

#define DB_MAX (1L << 20)

/* Copies the n bytes at s into dst (size bytes), decoding %XX. Returns
 * false when a % is not followed by two hex digits, a byte decodes to NUL,
 * or dst is too small. */
static bool pct_decode(char *dst, size_t size, const char *s, size_t n) {
  size_t o = 0;
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)s[i];
    if (c == '%') {
      if (i + 2 >= n)
        return false;
      if (!isxdigit((unsigned char)s[i + 1]) ||
          !isxdigit((unsigned char)s[i + 2]))
        return false;
      char hex[3] = {s[i + 1], s[i + 2], '\0'};
      c = (unsigned char)strtol(hex, NULL, 16);
      if (c == 0)
        return false;
      i += 2;
    }
    if (o + 1 >= size)
      return false;
    dst[o++] = (char)c;
  }
  dst[o] = '\0';
  return true;
}

/* Reads a decimal number of at most 7 digits from s (n bytes, all digits).
 * Returns it, or -1. */
static long number(const char *s, size_t n) {
  if (n == 0 || n > 7)
    return -1;
  long v = 0;
  for (size_t i = 0; i < n; i++) {
    if (!isdigit((unsigned char)s[i]))
      return -1;
    v = v * 10 + (s[i] - '0');
  }
  return v;
}

/* The userinfo (n bytes at s, before '@'): user:password. */
static int parse_userinfo(const char *s, size_t n, mcp__redis_url *u, char *why,
                          size_t whylen) {
  const char *colon = memchr(s, ':', n);
  if (colon == NULL) {
    mcp__fmt(why, whylen, "%s",
             "the part before '@' needs a ':' before the password "
             "([user]:password@)");
    return MCP_EINVAL;
  }
  if (!pct_decode(u->user, sizeof u->user, s, (size_t)(colon - s))) {
    mcp__fmt(why, whylen, "%s", "the user name is malformed or too long");
    return MCP_EINVAL;
  }
  if (!pct_decode(u->pass, sizeof u->pass, colon + 1,
                  n - (size_t)(colon - s) - 1)) {
    mcp__fmt(why, whylen, "%s", "the password is malformed or too long");
    return MCP_EINVAL;
  }
  u->has_pass = true;
  return 0;
}

/* host[:port] (n bytes at s). */
static int parse_hostport(const char *s, size_t n, mcp__redis_url *u, char *why,
                          size_t whylen) {
  const char *end = s + n, *port = NULL;
  const char *h = s, *he;
  if (n > 0 && *s == '[') {
    he = memchr(s, ']', n);
    if (he == NULL) {
      mcp__fmt(why, whylen, "%s", "an IPv6 address lacks its ']'");
      return MCP_EINVAL;
    }
    h = s + 1;
    if (he + 1 < end && he[1] != ':') {
      mcp__fmt(why, whylen, "%s", "']' must be followed by ':port' or '/'");
      return MCP_EINVAL;
    }
    port = he + 1 < end ? he + 2 : NULL;
  } else {
    he = memchr(s, ':', n);
    port = he ? he + 1 : NULL;
    if (he == NULL)
      he = end;
  }
  size_t hl = (size_t)(he - h);
  if (hl == 0 || hl >= sizeof u->host) {
    mcp__fmt(why, whylen, "%s",
             hl ? "the host name is too long" : "the host is missing");
    return MCP_EINVAL;
  }
  memcpy(u->host, h, hl);
  u->host[hl] = '\0';
  u->port = 6379;
  if (port) {
    long p = number(port, (size_t)(end - port));
    if (p < 1 || p > 65535) {
      mcp__fmt(why, whylen, "%s", "the port must be a number from 1 to 65535");
      return MCP_EINVAL;
    }
    u->port = (int)p;
  }
  return 0;
}

static int parse_db(const char *s, size_t n, mcp__redis_url *u, char *why,
                    size_t whylen) {
  if (n == 0)
    return 0;
  long db = number(s, n);
  if (db < 0 || db > DB_MAX) {
    mcp__fmt(why, whylen, "the database must be a number from 0 to %ld",
             DB_MAX);
    return MCP_EINVAL;
  }
  u->db = db;
  return 0;
}

/* What follows "redis://". */
static int parse_tcp(const char *s, mcp__redis_url *u, char *why,
                     size_t whylen) {
  size_t alen = strcspn(s, "/?#");
  const char *at = NULL;
  for (const char *p = s; p < s + alen; p++)
    if (*p == '@')
      at = p;
  int rc = 0;
  if (at)
    rc = parse_userinfo(s, (size_t)(at - s), u, why, whylen);
  const char *hp = at ? at + 1 : s;
  if (rc == 0)
    rc = parse_hostport(hp, (size_t)(s + alen - hp), u, why, whylen);
  if (rc)
    return rc;
  const char *rest = s + alen;
  if (*rest == '?' || *rest == '#') {
    mcp__fmt(why, whylen, "%s", "a redis:// URL takes no query or fragment");
    return MCP_EINVAL;
  }
  if (*rest == '/')
    rest++;
  return parse_db(rest, strlen(rest), u, why, whylen);
}

/* What follows "unix://", or a bare path. */
static int parse_unix(const char *s, mcp__redis_url *u, char *why,
                      size_t whylen) {
  const char *slash = strchr(s, '/');
  if (slash == NULL) {
    mcp__fmt(why, whylen, "%s", "a unix:// URL needs an absolute path");
    return MCP_EINVAL;
  }
  if (slash != s) {
    if (slash[-1] != '@') {
      mcp__fmt(why, whylen, "%s",
               "a unix:// URL needs an absolute path (unix:///path)");
      return MCP_EINVAL;
    }
    int rc = parse_userinfo(s, (size_t)(slash - 1 - s), u, why, whylen);
    if (rc)
      return rc;
  }
  size_t pl = strcspn(slash, "?");
  if (pl >= sizeof u->path) {
    mcp__fmt(why, whylen, "the socket path is longer than %zu bytes",
             sizeof u->path - 1);
    return MCP_EINVAL;
  }
  memcpy(u->path, slash, pl);
  u->path[pl] = '\0';
  u->is_unix = true;
  const char *q = slash + pl;
  if (*q == '\0')
    return 0;
  if (strncmp(q, "?db=", 4) != 0) {
    mcp__fmt(why, whylen, "%s", "a unix socket's only query is ?db=N");
    return MCP_EINVAL;
  }
  return parse_db(q + 4, strlen(q + 4), u, why, whylen);
}

static void show(mcp__redis_url *u) {
  const char *user = u->user[0] ? u->user : "";
  const char *at = u->user[0] ? "@" : "";
  if (u->is_unix)
    mcp__fmt(u->shown, sizeof u->shown, "unix://%s%s%s?db=%ld", user, at,
             u->path, u->db);
  else
    mcp__fmt(u->shown, sizeof u->shown, "redis://%s%s%s%s%s:%d/%ld", user, at,
             strchr(u->host, ':') ? "[" : "", u->host,
             strchr(u->host, ':') ? "]" : "", u->port, u->db);
}

int mcp__redis_url_parse(const char *url, mcp__redis_url *u, char *why,
                         size_t whylen) {
  *u = (mcp__redis_url){0};
  int rc;
  if (url == NULL || *url == '\0') {
    mcp__fmt(why, whylen, "%s", "no URL");
    return MCP_EINVAL;
  }
  if (strncmp(url, "redis://", 8) == 0)
    rc = parse_tcp(url + 8, u, why, whylen);
  else if (strncmp(url, "unix://", 7) == 0)
    rc = parse_unix(url + 7, u, why, whylen);
  else if (url[0] == '/')
    rc = parse_unix(url, u, why, whylen);
  else if (strncmp(url, "rediss://", 9) == 0) {
    mcp__fmt(why, whylen, "%s",
             "rediss:// (TLS) is not supported: this hiredis has no TLS; "
             "reach Redis through a tunnel and name its local end");
    rc = MCP_EINVAL;
  } else {
    mcp__fmt(why, whylen, "%s",
             "not a Redis URL: redis://[[user]:password@]host[:port][/db], "
             "unix:///path[?db=N] or an absolute socket path");
    rc = MCP_EINVAL;
  }
  if (rc == 0)
    show(u);
  return rc;
}
