/* URI-reference resolution (RFC 3986 section 5) for "$id" and "$ref".
 *
 * Schema identifiers are compared as resolved strings: every "$id" and
 * every "$ref" is resolved against the base URI in force where it appears,
 * so "#/$defs/a", "other.json" and absolute URIs all meet in one key space.
 * Nothing here ever dereferences a URI. */
#include <string.h>

#include "schema_int.h"

typedef struct span {
  const char *p;
  size_t n;
  int has;
} span;

typedef struct uri {
  span scheme, authority, path, query, fragment;
} uri;

static void uri_parse(const char *s, uri *u) {
  memset(u, 0, sizeof *u);
  const char *p = s;
  /* scheme = ALPHA *( ALPHA / DIGIT / "+" / "-" / "." ) ":" */
  const char *q = p;
  if ((*q >= 'a' && *q <= 'z') || (*q >= 'A' && *q <= 'Z')) {
    while ((*q >= 'a' && *q <= 'z') || (*q >= 'A' && *q <= 'Z') ||
           (*q >= '0' && *q <= '9') || *q == '+' || *q == '-' || *q == '.')
      q++;
    if (*q == ':') {
      u->scheme = (span){p, (size_t)(q - p), 1};
      p = q + 1;
    }
  }
  if (p[0] == '/' && p[1] == '/') {
    p += 2;
    size_t n = strcspn(p, "/?#");
    u->authority = (span){p, n, 1};
    p += n;
  }
  size_t n = strcspn(p, "?#");
  u->path = (span){p, n, 1};
  p += n;
  if (*p == '?') {
    p++;
    n = strcspn(p, "#");
    u->query = (span){p, n, 1};
    p += n;
  }
  if (*p == '#')
    u->fragment = (span){p + 1, strlen(p + 1), 1};
}

/* Removes the last segment (and its "/") from what was written at start. */
static void drop_segment(mcp__buf *b, size_t start) {
  size_t i = b->len;
  while (i > start && b->data[i - 1] != '/')
    i--;
  if (i > start)
    i--; /* the "/" before the segment */
  b->len = i;
}

static int starts(const char *p, size_t n, const char *lit) {
  size_t m = strlen(lit);
  return n >= m && memcmp(p, lit, m) == 0;
}

static int equals(const char *p, size_t n, const char *lit) {
  return n == strlen(lit) && memcmp(p, lit, n) == 0;
}

/* RFC 3986 5.2.4 on the n bytes at p, appended to b. */
static void remove_dots(mcp__buf *b, const char *p, size_t n) {
  size_t start = b->len;
  while (n > 0 && b->err == 0) {
    if (starts(p, n, "../")) {
      p += 3, n -= 3;
    } else if (starts(p, n, "./")) {
      p += 2, n -= 2;
    } else if (starts(p, n, "/./")) {
      p += 2, n -= 2;
    } else if (equals(p, n, "/.")) {
      mcp__buf_putc(b, '/');
      break;
    } else if (starts(p, n, "/../")) {
      p += 3, n -= 3;
      drop_segment(b, start);
    } else if (equals(p, n, "/..")) {
      drop_segment(b, start);
      mcp__buf_putc(b, '/');
      break;
    } else if (equals(p, n, ".") || equals(p, n, "..")) {
      break;
    } else {
      size_t seg = 1; /* up to, not including, the next "/" */
      while (seg < n && p[seg] != '/')
        seg++;
      mcp__buf_append(b, p, seg);
      p += seg, n -= seg;
    }
  }
}

int mcp__uri_resolve(mcp__buf *b, const char *base_text, const char *ref) {
  uri base, r;
  uri_parse(base_text, &base);
  uri_parse(ref, &r);
  const span *scheme = r.scheme.has ? &r.scheme : &base.scheme;
  const span *auth, *query;
  if (scheme->has) {
    mcp__buf_append(b, scheme->p, scheme->n);
    mcp__buf_putc(b, ':');
  }
  if (r.scheme.has || r.authority.has) {
    auth = &r.authority;
    query = &r.query;
  } else {
    auth = &base.authority;
    query = r.path.n == 0 && !r.query.has ? &base.query : &r.query;
  }
  if (auth->has) {
    mcp__buf_puts(b, "//");
    mcp__buf_append(b, auth->p, auth->n);
  }
  if (r.scheme.has || r.authority.has || (r.path.n > 0 && r.path.p[0] == '/')) {
    remove_dots(b, r.path.p, r.path.n);
  } else if (r.path.n == 0) {
    mcp__buf_append(b, base.path.p, base.path.n);
  } else {
    /* Merge (5.2.3): the base path up to its last "/", then the ref. */
    mcp__buf merged = {0};
    if (base.authority.has && base.path.n == 0) {
      mcp__buf_putc(&merged, '/');
    } else {
      size_t keep = base.path.n;
      while (keep > 0 && base.path.p[keep - 1] != '/')
        keep--;
      mcp__buf_append(&merged, base.path.p, keep);
    }
    mcp__buf_append(&merged, r.path.p, r.path.n);
    if (merged.err) {
      mcp__buf_free(&merged);
      b->err = MCP_ENOMEM;
      return MCP_ENOMEM;
    }
    remove_dots(b, merged.data, merged.len);
    mcp__buf_free(&merged);
  }
  if (query->has) {
    mcp__buf_putc(b, '?');
    mcp__buf_append(b, query->p, query->n);
  }
  if (r.fragment.has && r.fragment.n > 0) {
    mcp__buf_putc(b, '#');
    mcp__buf_append(b, r.fragment.p, r.fragment.n);
  }
  return mcp__buf_str(b) ? 0 : MCP_ENOMEM;
}
