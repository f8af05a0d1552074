/* Skills (the io.modelcontextprotocol/skills extension): a skill's
 * definition checked against the extension's and the Agent Skills rules,
 * its SKILL.md frontmatter read, and its entries built: the Skill object
 * skills/list and skills/get send (frontmatter as JSON, every file with its
 * SHA-256 and size) and one skill:// resource per file.
 *
 * The frontmatter is read by a strict subset of YAML: `key: value` lines
 * whose values are strings (plain, 'single' or "double" quoted), and maps
 * of such lines one level deep (`metadata:` and its indented lines).
 * Anything else (lists, block scalars, flow collections, anchors, aliases,
 * tags, a plain key or value that any common YAML 1.1 or 1.2 parser could
 * read as something other than the same string, a character on which
 * YAML 1.1 and 1.2 disagree) is refused with its line, rather than read
 * differently from a full YAML parser: the Skill entry must say exactly
 * what the file says, to whichever parser a host uses. */
#include <cjson/cJSON.h>
#include <string.h>

#include "registry.h"

/* The extension's limits (a skill beyond them is not loadable everywhere)
 * and libmcp's own on the frontmatter. */
#define MAX_FILES 512
#define MAX_TOTAL ((size_t)16 << 20)
#define MAX_FRONTMATTER 65536
#define MAX_SEGMENT 255
#define MAX_NAME 64
#define MAX_DESCRIPTION 1024
#define MAX_COMPATIBILITY 500

/* ---- paths --------------------------------------------------------------- */

/* A path segment: [A-Za-z0-9._-], 1-255 bytes, not "." or "..". */
static bool segment_ok(const char *s, size_t n) {
  if (n == 0 || n > MAX_SEGMENT || (n == 1 && s[0] == '.') ||
      (n == 2 && s[0] == '.' && s[1] == '.'))
    return false;
  for (size_t i = 0; i < n; i++) {
    if (!mcp__name_char((unsigned char)s[i]))
      return false;
  }
  return true;
}

/* '/'-separated segments; the last one's start goes to *last. */
static bool path_ok(const char *p, const char **last) {
  if (p == NULL || *p == '\0')
    return false;
  for (const char *s = p;;) {
    const char *slash = strchr(s, '/');
    size_t n = slash ? (size_t)(slash - s) : strlen(s);
    if (!segment_ok(s, n))
      return false;
    if (slash == NULL) {
      *last = s;
      return true;
    }
    s = slash + 1;
  }
}

/* The Agent Skills name rule: 1-64 of [a-z0-9-], no '-' first, last or
 * twice in a row. */
static bool name_ok(const char *s) {
  size_t n = strlen(s);
  if (n == 0 || n > MAX_NAME || s[0] == '-' || s[n - 1] == '-')
    return false;
  for (size_t i = 0; i < n; i++) {
    char c = s[i];
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-') ||
        (c == '-' && s[i + 1] == '-'))
      return false;
  }
  return true;
}

/* ---- the frontmatter ----------------------------------------------------- */

/* What a line holds that this subset does not read. */
#define NOT_READ                                                               \
  "only string values and one level of `key: value` maps are read (no "        \
  "lists, block scalars, flow collections, anchors or tags)"

typedef struct fm {
  const char *p, *end; /* what is left of the frontmatter */
  unsigned line;       /* of the line being read, 1 being "---" */
  char *why;
  size_t whylen;
} fm;

static int fm_fail(fm *f, const char *what) {
  mcp__fmt(f->why, f->whylen, "SKILL.md line %u: %s", f->line, what);
  return MCP_EINVAL;
}

/* ---- one reading: what every YAML parser reads as the same string ------
 * A plain (unquoted) scalar is read by the YAML parsers in use under rules
 * that differ: YAML 1.1 (PyYAML, SnakeYAML, go-yaml, Psych) reads yes, on,
 * y, 0777, 1_000, 1:30 and 2026-12-02 as a boolean, numbers and a date;
 * YAML 1.2 (ruamel, js-yaml, serde_yaml) reads 0o7 and 1e3 as numbers;
 * some go further (Psych: case-insensitive booleans, 1,000 and :symbols;
 * go-yaml: every '_' removed before a number is tried, Go's hex floats).
 * Rather than follow one of them, a plain value is refused when any of
 * them could read it as something other than the same string, with a
 * message that says to quote it; the classes are below, each wider than
 * what one parser reads. */

/* A plain value read as a number is: '_' and ',' between its characters
 * are passed over (go-yaml takes every '_' out before it tries a number,
 * Psych every ','), so they are here too. The value holds no NUL. */
typedef struct num_in {
  const char *s;
  size_t n, i;
} num_in;

/* The next character that counts ('\0' at the end). */
static char num_peek(num_in *d) {
  while (d->i < d->n && (d->s[d->i] == '_' || d->s[d->i] == ','))
    d->i++;
  return d->i < d->n ? d->s[d->i] : '\0';
}

/* Passes over digits of base; returns how many. */
static size_t num_digits(num_in *d, int base) {
  size_t k = 0;
  for (;;) {
    char c = num_peek(d);
    int v = c >= '0' && c <= '9'   ? c - '0'
            : c >= 'a' && c <= 'f' ? c - 'a' + 10
            : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                   : 99;
    if (v >= base)
      return k;
    d->i++;
    k++;
  }
}

/* Passes over c if it comes next. */
static bool num_take(num_in *d, const char *set) {
  char c = num_peek(d);
  if (c == '\0' || strchr(set, c) == NULL)
    return false;
  d->i++;
  return true;
}

/* An exponent's sign and decimal digits, after its letter. */
static bool num_exponent(num_in *d) {
  num_take(d, "+-");
  return num_digits(d, 10) > 0;
}

/* Is [s, s+n), which begins with a digit, a number to some parser: an
 * integer in any base (0x, 0o, 0b, a leading 0 for octal), a float (1.5,
 * 1., 1e3, Go's hex float 0x1.8p3) or a sexagesimal (1:30, 1:30.5)? */
static bool number_like(const char *s, size_t n) {
  num_in d = {.s = s, .n = n};
  if (num_take(&d, "0")) {
    int base = num_take(&d, "xX")   ? 16
               : num_take(&d, "oO") ? 8
               : num_take(&d, "bB") ? 2
                                    : 0;
    if (base) {
      size_t whole = num_digits(&d, base), part = 0;
      /* 0x_ and 0b, match YAML 1.1's integer forms (a prefix, then
       * digits or '_'): PyYAML and Psych take them as integers and then
       * fail on the missing digits. Only a bare 0x is text to all. */
      if (num_peek(&d) == '\0')
        return whole > 0 || n > 2;
      if (base != 16)
        return false;
      if (num_take(&d, "."))
        part = num_digits(&d, 16);
      return whole + part > 0 && num_take(&d, "pP") && num_exponent(&d) &&
             num_peek(&d) == '\0';
    }
    d.i = 0;
  }
  num_digits(&d, 10);
  while (num_take(&d, ":")) {
    if (num_digits(&d, 10) == 0)
      return false;
  }
  if (num_take(&d, "."))
    num_digits(&d, 10);
  if (num_take(&d, "eE") && !num_exponent(&d))
    return false;
  return num_peek(&d) == '\0';
}

/* Does [s, s+n) begin as a YAML 1.1 date or time does (four digits, '-'
 * and a digit: 2026-12-02, 2001-12-14t21:59:43.10-05:00)? */
static bool date_like(const char *s, size_t n) {
  if (n < 6 || s[4] != '-' || s[5] < '0' || s[5] > '9')
    return false;
  for (int i = 0; i < 4; i++) {
    if (s[i] < '0' || s[i] > '9')
      return false;
  }
  return true;
}

/* Does [s, s+n) equal word, ignoring case (Psych reads TrUe as true)? */
static bool word_is(const char *s, size_t n, const char *word) {
  if (strlen(word) != n)
    return false;
  for (size_t i = 0; i < n; i++) {
    char c = s[i] >= 'A' && s[i] <= 'Z' ? (char)(s[i] - 'A' + 'a') : s[i];
    if (c != word[i])
      return false;
  }
  return true;
}

/* What some YAML parser could read the plain scalar [s, s+n) as, if not
 * the same string; NULL when every one reads the string. */
static const char *plain_reading(const char *s, size_t n) {
  static const char *const words[] = {"true", "false", "yes", "no",
                                      "on",   "off",   "y",   "n",
                                      "null", "~",     "<<",  "="};
  if (n == 0)
    return NULL;
  for (size_t i = 0; i < sizeof words / sizeof *words; i++) {
    if (word_is(s, n, words[i]))
      return "a boolean, null or a YAML 1.1 key type (yes/no/on/off/y/n, "
             "true/false, null, ~, <<, =, in any case)";
  }
  if (strchr("-+.", s[0]))
    return "a number (a value that begins with '-', '+' or '.' may be one: "
           "-1, +.inf, .5)";
  if (strchr(":?", s[0]))
    return "something other than text (a value that begins with ':' or '?' "
           "is a symbol or a key to some)";
  if (s[0] < '0' || s[0] > '9')
    return NULL;
  if (date_like(s, n))
    return "a date or a time";
  if (number_like(s, n))
    return "a number (an integer in any base, '_' or ',' between digits, a "
           "float, a sexagesimal such as 1:30)";
  return NULL;
}

/* Is the character at s (UTF-8, n bytes left) one that YAML parsers read
 * differently or refuse raw: a C0 control other than tab and CRLF's CR,
 * DEL, a C1 control (U+0085 a line break to YAML 1.1, not to 1.2), U+2028
 * and U+2029 (the same), U+FEFF, U+FFFE or U+FFFF? Its length to *len. */
static const char *bad_char(const unsigned char *s, size_t n, size_t *len) {
  *len = 1;
  if (s[0] == '\r' && !(n > 1 && s[1] == '\n'))
    return "a carriage return without a line feed (a line break to YAML)";
  if ((s[0] < 0x20 && s[0] != '\t' && s[0] != '\r' && s[0] != '\n') ||
      s[0] == 0x7f)
    return "a control character YAML does not allow raw";
  if (s[0] == 0xc2 && n > 1 && s[1] >= 0x80 && s[1] <= 0x9f) {
    *len = 2;
    return s[1] == 0x85 ? "U+0085 (a line break to YAML 1.1, not to 1.2)"
                        : "a control character YAML does not allow raw";
  }
  if (n > 2 && ((s[0] == 0xe2 && s[1] == 0x80 && (s[2] & 0xfe) == 0xa8) ||
                (s[0] == 0xef && s[1] == 0xbb && s[2] == 0xbf) ||
                (s[0] == 0xef && s[1] == 0xbf && (s[2] & 0xfe) == 0xbe))) {
    *len = 3;
    return s[0] == 0xe2 ? "U+2028 or U+2029 (a line break to YAML 1.1, not "
                          "to 1.2)"
                        : "U+FEFF, U+FFFE or U+FFFF (not allowed raw)";
  }
  return NULL;
}

/* Refuses a line [s, eol) holding a character bad_char names: every
 * reader must see the same lines and the same text. */
static int fm_chars(fm *f, const char *s, const char *eol) {
  for (const char *p = s; p < eol;) {
    size_t len;
    const char *why =
        bad_char((const unsigned char *)p, (size_t)(f->end - p), &len);
    if (why) {
      char msg[300];
      mcp__fmt(msg, sizeof msg,
               "the frontmatter holds %s; write it as an escape (\\uXXXX) "
               "in a double-quoted value",
               why);
      return fm_fail(f, msg);
    }
    p += len;
  }
  return 0;
}

/* Reads the four hex digits of a \\u escape at *pp into b as UTF-8; *pp
 * ends after them. */
static int fm_unicode(fm *f, const char **pp, const char *eol, mcp__buf *b) {
  const char *p = *pp;
  if (eol - p < 4)
    return fm_fail(f, "a \\u escape needs four hex digits");
  unsigned cp = 0;
  for (int k = 0; k < 4; k++) {
    char h = p[k];
    int v = h >= '0' && h <= '9'   ? h - '0'
            : h >= 'a' && h <= 'f' ? h - 'a' + 10
            : h >= 'A' && h <= 'F' ? h - 'A' + 10
                                   : -1;
    if (v < 0)
      return fm_fail(f, "a \\u escape needs four hex digits");
    cp = cp << 4 | (unsigned)v;
  }
  if (cp == 0 || (cp >= 0xd800 && cp <= 0xdfff))
    return fm_fail(f, "a \\u escape names NUL or a surrogate");
  char u[4];
  size_t n = (size_t)(mcp__utf8_put(u, cp) - u);
  mcp__buf_append(b, u, n);
  *pp = p + 4;
  return 0;
}

/* The character a one-letter escape stands for, or 0 for none. */
static char fm_escape(char c) {
  static const char pairs[][2] = {{'"', '"'},  {'\\', '\\'}, {'/', '/'},
                                  {'n', '\n'}, {'t', '\t'},  {'r', '\r'}};
  for (size_t i = 0; i < sizeof pairs / sizeof *pairs; i++) {
    if (pairs[i][0] == c)
      return pairs[i][1];
  }
  return 0;
}

/* Reads a double-quoted scalar at *pp (its opening quote) into b; *pp ends
 * after the closing quote. */
static int fm_double(fm *f, const char **pp, const char *eol, mcp__buf *b) {
  const char *p = *pp + 1;
  int rc = 0;
  while (rc == 0 && p < eol && *p != '"') {
    char c = *p++;
    if (c != '\\') {
      mcp__buf_putc(b, c);
    } else if (p == eol) {
      rc = fm_fail(f, "a double-quoted value ends in a backslash");
    } else if (*p == 'u') {
      p++;
      rc = fm_unicode(f, &p, eol, b);
    } else if ((c = fm_escape(*p++)) != 0) {
      mcp__buf_putc(b, c);
    } else {
      rc = fm_fail(f, "a double-quoted value has an escape libmcp does not "
                      "read (\\\" \\\\ \\/ \\n \\t \\r \\uXXXX)");
    }
  }
  if (rc == 0 && p == eol)
    rc = fm_fail(f, "a double-quoted value does not end on its line");
  *pp = p + 1;
  return rc;
}

/* Reads a single-quoted scalar ('' for a quote) like fm_double. */
static int fm_single(fm *f, const char **pp, const char *eol, mcp__buf *b) {
  const char *p = *pp + 1;
  for (;;) {
    if (p == eol)
      return fm_fail(f, "a single-quoted value does not end on its line");
    if (*p == '\'') {
      if (p + 1 < eol && p[1] == '\'') {
        mcp__buf_putc(b, '\'');
        p += 2;
        continue;
      }
      break;
    }
    mcp__buf_putc(b, *p++);
  }
  *pp = p + 1;
  return 0;
}

/* Reads the plain scalar [p, eol) into b: up to a comment, without the
 * blanks around it, refused when YAML would read it other than as that
 * string. */
static int fm_plain(fm *f, const char *p, const char *eol, mcp__buf *b) {
  const char *e = p;
  while (e < eol && !(*e == '#' && (e[-1] == ' ' || e[-1] == '\t')))
    e++;
  while (e > p && (e[-1] == ' ' || e[-1] == '\t'))
    e--;
  for (const char *q = p; q < e; q++) {
    if (*q == ':' && (q + 1 == e || q[1] == ' ' || q[1] == '\t'))
      return fm_fail(f, "a plain value holds \": \"; quote it");
  }
  const char *other = plain_reading(p, (size_t)(e - p));
  if (other) {
    char msg[300];
    mcp__fmt(msg, sizeof msg,
             "a plain value some YAML parser reads as %s; quote it to make "
             "it a string",
             other);
    return fm_fail(f, msg);
  }
  mcp__buf_append(b, p, (size_t)(e - p));
  return 0;
}

/* Reads the value [p, eol) of a `key: value` line into *out (a string
 * node; NULL when the value is empty). */
static int fm_value(fm *f, const char *p, const char *eol, cJSON **out) {
  *out = NULL;
  while (p < eol && (*p == ' ' || *p == '\t'))
    p++;
  if (p == eol || *p == '#')
    return 0;
  mcp__buf b = {0};
  int rc = 0;
  if (*p == '"' || *p == '\'') {
    rc = *p == '"' ? fm_double(f, &p, eol, &b) : fm_single(f, &p, eol, &b);
    while (rc == 0 && p < eol && (*p == ' ' || *p == '\t'))
      p++;
    if (rc == 0 && p < eol && *p != '#')
      rc = fm_fail(f, "something follows a quoted value");
  } else if (strchr("[]{}&*!|>%@`,", *p) ||
             ((*p == '-' || *p == '?' || *p == ':') &&
              (p + 1 == eol || p[1] == ' '))) {
    rc = fm_fail(f, NOT_READ "; quote a value meant as text");
  } else {
    rc = fm_plain(f, p, eol, &b);
  }
  if (rc == 0 && b.err)
    rc = MCP_ENOMEM;
  if (rc == 0 && !mcp__utf8_valid(b.data ? b.data : "", b.len))
    rc = fm_fail(f, "a value is not UTF-8 (or holds NUL)");
  if (rc == 0 && (*out = cJSON_CreateString(b.data ? b.data : "")) == NULL)
    rc = MCP_ENOMEM;
  mcp__buf_free(&b);
  return rc;
}

/* The next line [*start, *eol) of the frontmatter, its '\r' left out;
 * false at the end. */
static bool fm_line(fm *f, const char **start, const char **eol) {
  if (f->p >= f->end)
    return false;
  const char *e = f->p;
  while (e < f->end && *e != '\n')
    e++;
  const char *next = e < f->end ? e + 1 : e;
  if (e > f->p && e[-1] == '\r')
    e--;
  *start = f->p;
  *eol = e;
  f->p = next;
  f->line++;
  return true;
}

/* Reads `key:` at [p, eol) (after indent spaces); *key_end set. */
static int fm_key(fm *f, const char *p, const char *eol, const char **key_end) {
  const char *k = p;
  while (k < eol && mcp__name_char((unsigned char)*k))
    k++;
  if (k == p || k == eol || *k != ':' || (k + 1 < eol && k[1] != ' '))
    return fm_fail(f, "each line must be `key: value`, the key of letters, "
                      "digits, '_', '-' and '.'");
  /* A key is a plain scalar too: `on:` is true to YAML 1.1. */
  const char *other = plain_reading(p, (size_t)(k - p));
  if (other) {
    char msg[300];
    mcp__fmt(msg, sizeof msg,
             "a key some YAML parser reads as %s; name it otherwise", other);
    return fm_fail(f, msg);
  }
  *key_end = k;
  return 0;
}

/* Adds value under the key [k, ke) to obj, refusing a key seen before. */
static int fm_put(fm *f, cJSON *obj, const char *k, const char *ke,
                  cJSON *value) {
  char key[128];
  if ((size_t)(ke - k) >= sizeof key) {
    cJSON_Delete(value);
    return fm_fail(f, "a key is longer than 127 bytes");
  }
  memcpy(key, k, (size_t)(ke - k));
  key[ke - k] = '\0';
  if (mcp__json_member(obj, key)) {
    cJSON_Delete(value);
    return fm_fail(f, "a key is given twice");
  }
  if (!cJSON_AddItemToObject(obj, key, value)) {
    cJSON_Delete(value);
    return MCP_ENOMEM;
  }
  return 0;
}

/* The lines of the map under a key: indented alike, each `key: value`. */
static int fm_map(fm *f, cJSON **out) {
  cJSON *map = cJSON_CreateObject();
  if (map == NULL)
    return MCP_ENOMEM;
  size_t indent = 0;
  int rc = 0;
  while (rc == 0 && f->p < f->end && (*f->p == ' ' || *f->p == '\t')) {
    const char *s, *eol, *ke;
    fm_line(f, &s, &eol);
    if ((rc = fm_chars(f, s, eol)) != 0)
      break;
    size_t n = 0;
    while (s + n < eol && s[n] == ' ')
      n++;
    if (s + n == eol || s[n] == '#')
      continue; /* blank or comment */
    if (s[n] == '\t' || (indent && n != indent)) {
      rc = fm_fail(f, "a map's lines must be indented alike, with spaces");
      break;
    }
    indent = n;
    cJSON *v = NULL;
    if (s[n] == '-' && (s + n + 1 == eol || s[n + 1] == ' ')) {
      rc = fm_fail(f, NOT_READ); /* a list item */
      break;
    }
    rc = fm_key(f, s + n, eol, &ke);
    if (rc == 0)
      rc = fm_value(f, ke + 1, eol, &v);
    if (rc == 0 && v == NULL)
      rc = fm_fail(f, "maps nest one level deep, with string values");
    if (rc == 0)
      rc = fm_put(f, map, s + n, ke, v);
  }
  if (rc) {
    cJSON_Delete(map);
    return rc;
  }
  *out = map;
  return 0;
}

/* Parses the frontmatter of SKILL.md (text, len bytes) into *out, a JSON
 * object. Returns 0, MCP_EINVAL (why says where and what) or MCP_ENOMEM. */
static int frontmatter_parse(const char *text, size_t len, cJSON **out,
                             char *why, size_t whylen) {
  fm f = {.p = text, .end = text + len, .why = why, .whylen = whylen};
  const char *s, *eol;
  if (!fm_line(&f, &s, &eol) || eol - s != 3 || strncmp(s, "---", 3) != 0) {
    f.line = 1;
    return fm_fail(&f, "SKILL.md must begin with YAML frontmatter (a line "
                       "\"---\")");
  }
  cJSON *obj = cJSON_CreateObject();
  if (obj == NULL)
    return MCP_ENOMEM;
  int rc = 0;
  bool closed = false;
  while (rc == 0 && fm_line(&f, &s, &eol)) {
    if (eol - s == 3 && strncmp(s, "---", 3) == 0) {
      closed = true;
      break;
    }
    if ((size_t)(f.p - text) > MAX_FRONTMATTER) {
      rc = fm_fail(&f, "the frontmatter is longer than 65536 bytes");
      break;
    }
    if ((rc = fm_chars(&f, s, eol)) != 0)
      break;
    if (s == eol || *s == '#')
      continue;
    const char *ke;
    cJSON *v = NULL;
    rc = fm_key(&f, s, eol, &ke);
    if (rc == 0)
      rc = fm_value(&f, ke + 1, eol, &v);
    if (rc == 0 && v == NULL)
      rc = fm_map(&f, &v);
    if (rc == 0 && v->child == NULL && cJSON_IsObject(v)) {
      cJSON_Delete(v);
      rc = fm_fail(&f, "a key has no value");
    }
    if (rc == 0)
      rc = fm_put(&f, obj, s, ke, v);
  }
  if (rc == 0 && !closed)
    rc = fm_fail(&f, "the frontmatter has no closing line \"---\"");
  if (rc) {
    cJSON_Delete(obj);
    return rc;
  }
  *out = obj;
  return 0;
}

/* Characters (code points) of UTF-8 text. */
static size_t chars(const char *s) { return mcp__utf8_count(s, strlen(s)); }

/* The Agent Skills rules on the frontmatter's fields; problems to p. */
static void check_fields(const cJSON *fmo, const char *last, mcp__problems *p) {
  const cJSON *name = mcp__json_member(fmo, "name");
  const cJSON *desc = mcp__json_member(fmo, "description");
  const cJSON *compat = mcp__json_member(fmo, "compatibility");
  const cJSON *meta = mcp__json_member(fmo, "metadata");
  if (!cJSON_IsString(name))
    mcp__problem(p, "SKILL.md's frontmatter needs a name");
  else if (!name_ok(name->valuestring))
    mcp__problem(p, "the name must be 1-64 characters of [a-z0-9-], without "
                    "'-' first, last or twice in a row");
  else if (strcmp(name->valuestring, last) != 0)
    mcp__problem(p, "the name \"%s\" is not the path's last segment",
                 name->valuestring);
  if (!cJSON_IsString(desc) || desc->valuestring[0] == '\0' ||
      chars(desc->valuestring) > MAX_DESCRIPTION)
    mcp__problem(p, "SKILL.md's frontmatter needs a description of 1-1024 "
                    "characters");
  if (compat && (!cJSON_IsString(compat) || compat->valuestring[0] == '\0' ||
                 chars(compat->valuestring) > MAX_COMPATIBILITY))
    mcp__problem(p, "compatibility must be 1-500 characters");
  if (meta && !cJSON_IsObject(meta))
    mcp__problem(p, "metadata must be a map of strings");
  for (const cJSON *f = fmo->child; f; f = f->next) {
    if (f != meta && !cJSON_IsString(f))
      mcp__problem(p, "%s must be a string", f->string);
  }
}

/* ---- the entries --------------------------------------------------------- */

/* The type of a skill file: its own, else by its extension. */
static const char *file_type(const mcp_skill_file *file) {
  if (file->mime_type)
    return file->mime_type;
  const char *dot = strrchr(file->path, '.');
  static const char *const types[][2] = {
      {".md", "text/markdown"},      {".txt", "text/plain"},
      {".py", "text/x-python"},      {".sh", "text/x-shellscript"},
      {".json", "application/json"}, {".yaml", "application/yaml"},
      {".yml", "application/yaml"},  {".html", "text/html"},
      {".csv", "text/csv"},          {".js", "text/javascript"},
  };
  for (size_t i = 0; dot && i < sizeof types / sizeof *types; i++) {
    if (strcmp(dot, types[i][0]) == 0)
      return types[i][1];
  }
  return "application/octet-stream";
}

/* The files of def: every rule on them checked, problems to p; the index
 * of SKILL.md to *main (SIZE_MAX when missing). */
static size_t check_files(const mcp_skill *def, size_t *main,
                          mcp__problems *p) {
  size_t n = 0, total = 0;
  *main = SIZE_MAX;
  for (const mcp_skill_file *f = def->files; f && f->path; f++, n++) {
    const char *last;
    if (n == MAX_FILES) {
      mcp__problem(p, "more than 512 files");
      break;
    }
    if (!path_ok(f->path, &last)) {
      mcp__problem(p,
                   "file \"%.100s\": its path must be '/'-separated "
                   "segments of [A-Za-z0-9._-], none \".\" or \"..\"",
                   mcp__utf8_valid(f->path, strlen(f->path)) ? f->path : "?");
      continue;
    }
    if (f->data == NULL && f->size > 0)
      mcp__problem(p, "file \"%s\": data is NULL", f->path);
    if (f->mime_type && !mcp__utf8_valid(f->mime_type, strlen(f->mime_type)))
      mcp__problem(p, "file \"%s\": mime_type is not UTF-8", f->path);
    total += f->size;
    if (strcmp(f->path, "SKILL.md") == 0)
      *main = n;
    for (const mcp_skill_file *o = def->files; o != f; o++) {
      if (strcmp(o->path, f->path) == 0) {
        mcp__problem(p, "file \"%s\" is listed twice", f->path);
        break;
      }
    }
  }
  if (total > MAX_TOTAL)
    mcp__problem(p, "its files hold more than 16 MiB");
  if (*main == SIZE_MAX)
    mcp__problem(p, "it has no SKILL.md");
  return n;
}

/* Appends "sha256:" and the hex digest of n bytes. */
static void put_digest(mcp__buf *b, const void *data, size_t n) {
  mcp__sha256 s;
  unsigned char d[32];
  mcp__sha256_init(&s);
  mcp__sha256_update(&s, data, n);
  mcp__sha256_final(&s, d);
  mcp__buf_puts(b, "sha256:");
  for (int i = 0; i < 32; i++)
    mcp__buf_printf(b, "%02x", d[i]);
}

void mcp__skill_entries_free(mcp__skill_entries *e) {
  mcp__tool_unref(e->skill);
  for (size_t i = 0; i < e->nfiles; i++)
    mcp__tool_unref(e->files[i]);
  mcp__free(e->files);
  *e = (mcp__skill_entries){0};
}

/* The resource entry of one file, its bytes (and a NUL) kept in it. */
static int file_entry(const mcp_skill *def, const mcp_skill_file *f,
                      const cJSON *fmo, mcp_tool_fn read, mcp__tool **out,
                      char *err, size_t errlen) {
  mcp__buf b = {0};
  mcp__buf_printf(&b, "skill://%s/%s", def->path, f->path);
  char *uri = mcp__buf_take(&b, NULL);
  if (uri == NULL)
    return MCP_ENOMEM;
  bool main = strcmp(f->path, "SKILL.md") == 0;
  const cJSON *name = mcp__json_member(fmo, "name");
  const cJSON *desc = mcp__json_member(fmo, "description");
  const mcp_resource r = {.uri = uri,
                          .name = main ? name->valuestring : f->path,
                          .description = main ? desc->valuestring : NULL,
                          .mime_type = main ? "text/markdown" : file_type(f),
                          .scopes = def->scopes,
                          .handler = read};
  int rc = mcp__resource_new(&r, NULL, out, err, errlen);
  mcp__free(uri);
  if (rc)
    return rc;
  mcp__tool *t = *out;
  if ((t->owned = mcp__malloc(f->size + 1)) == NULL) {
    mcp__tool_unref(t);
    *out = NULL;
    return MCP_ENOMEM;
  }
  if (f->size)
    memcpy(t->owned, f->data, f->size);
  ((char *)t->owned)[f->size] = '\0';
  t->owned_len = f->size;
  t->user_data = t; /* the read handler finds the bytes here */
  /* SKILL.md's entry carries the frontmatter's description: a caller who
   * may not read the file does not see it listed. */
  t->readers_only = true;
  return 0;
}

/* The Skill entry: its wire form (the same to every version), the uris of
 * its files in arg_names. */
static int skill_entry(const mcp_skill *def, const cJSON *fmo,
                       mcp__skill_entries *e, size_t main) {
  mcp__tool *t = mcp__calloc(1, sizeof *t);
  if (t == NULL)
    return MCP_ENOMEM;
  atomic_init(&t->refs, 1);
  t->kind = MCP_CALL_RESOURCE;
  /* The entry shows the frontmatter and each file's digest and size: what
   * skills/get refuses a caller must not reach it through skills/list (a
   * digest of a short secret gives the secret away). */
  t->readers_only = true;
  e->skill = t;
  mcp__buf b = {0};
  mcp__buf_printf(&b, "skill://%s/SKILL.md", def->path);
  if ((t->name = mcp__buf_take(&b, NULL)) == NULL ||
      mcp__scopes_copy(def->scopes, t) != 0 ||
      (t->arg_names = mcp__calloc(e->nfiles + 1, sizeof *t->arg_names)) == NULL)
    return MCP_ENOMEM;
  for (; t->nargs < e->nfiles; t->nargs++) {
    if ((t->arg_names[t->nargs] = mcp__strdup(e->files[t->nargs]->name)) ==
        NULL)
      return MCP_ENOMEM;
  }
  mcp__buf_puts(&b, "{\"uri\":");
  mcp__json_quote(&b, t->name, strlen(t->name));
  mcp__buf_puts(&b, ",\"frontmatter\":");
  mcp__json_write(&b, fmo);
  mcp__buf_puts(&b, ",\"resources\":[");
  /* SKILL.md first, then the others in the order given. */
  for (size_t k = 0; k < e->nfiles; k++) {
    size_t i = k == 0 ? main : (k <= main ? k - 1 : k);
    const mcp__tool *f = e->files[i];
    mcp__buf_puts(&b, k ? ",{\"uri\":" : "{\"uri\":");
    mcp__json_quote(&b, f->name, strlen(f->name));
    mcp__buf_puts(&b, ",\"digest\":\"");
    put_digest(&b, f->owned, f->owned_len);
    mcp__buf_printf(&b, "\",\"size\":%zu}", f->owned_len);
  }
  mcp__buf_puts(&b, "]}");
  /* The same object to every version: one text, shared (as
   * mcp__wire_take shares equal forms). */
  if (mcp__wire_take(t, 0, &b) != 0)
    return MCP_ENOMEM;
  for (int v = 1; v < MCP__VERSION_COUNT; v++) {
    t->wire[v] = t->wire[0];
    t->wire_len[v] = t->wire_len[0];
  }
  return 0;
}

int mcp__skill_new(const mcp_skill *def, mcp_tool_fn read,
                   mcp__skill_entries *out, char *err, size_t errlen) {
  *out = (mcp__skill_entries){0};
  if (def == NULL) {
    mcp__fmt(err, errlen, "the skill definition is NULL");
    return MCP_EINVAL;
  }
  mcp__problems p;
  mcp__problems_init(&p, err, errlen, "skill", def->path);
  const char *last = NULL;
  if (!path_ok(def->path, &last))
    mcp__problem(&p, "the path must be '/'-separated segments of "
                     "[A-Za-z0-9._-], none \".\" or \"..\", the last the "
                     "skill's name");
  size_t main;
  size_t n = check_files(def, &main, &p);
  mcp__scopes_check(def->scopes, &p);
  cJSON *fmo = NULL;
  if (main != SIZE_MAX) {
    char why[300];
    const mcp_skill_file *f = &def->files[main];
    /* Markdown, read as text by every host: UTF-8 without NUL. */
    int rc = f->data && mcp__utf8_valid(f->data, f->size)
                 ? frontmatter_parse(f->data, f->size, &fmo, why, sizeof why)
                 : (mcp__fmt(why, sizeof why,
                             "SKILL.md is not UTF-8 text (or holds NUL)"),
                    MCP_EINVAL);
    if (rc == MCP_ENOMEM) {
      mcp__fmt(err, errlen, "out of memory");
      return rc;
    }
    if (rc)
      mcp__problem(&p, "%s", why);
    else if (last)
      check_fields(fmo, last, &p);
  }
  if (p.n > 0) {
    cJSON_Delete(fmo);
    return MCP_EINVAL;
  }
  int rc = MCP_ENOMEM;
  if ((out->files = mcp__calloc(n, sizeof *out->files)) == NULL)
    goto fail;
  for (; out->nfiles < n; out->nfiles++) {
    rc = file_entry(def, &def->files[out->nfiles], fmo, read,
                    &out->files[out->nfiles], err, errlen);
    if (rc)
      goto fail;
  }
  rc = skill_entry(def, fmo, out, main);
fail:
  cJSON_Delete(fmo);
  if (rc == 0)
    return 0;
  if (rc == MCP_ENOMEM)
    mcp__fmt(err, errlen, "out of memory");
  mcp__skill_entries_free(out);
  return rc;
}
