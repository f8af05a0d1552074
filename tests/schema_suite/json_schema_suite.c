/* Runs the official JSON-Schema-Test-Suite (draft2020-12) through the
 * schema module: every file of tests/draft2020-12/ except optional/, each
 * schema compiled once and every test's data validated against it.
 *
 *   json_schema_suite [-v] [--seeds DIR] SUITE/tests/draft2020-12
 *
 * Prints "N passed, N failed, N skipped" on one line, then each skipped
 * file with its reason (and, with -v, each failure). Exits non-zero when
 * fewer than 97% of the cases it ran passed. The optional format files for
 * the formats libmcp can assert are run too, with assertion on, and
 * reported on a line of their own that does not decide the exit status.
 * With --seeds, every (schema, instance) pair is also written to DIR in
 * the input format of tests/fuzz/fuzz_schema.c, as a seed corpus.
 *
 * The suite's files are parsed with the library's strict parser, which by
 * design refuses U+0000 in strings (docs/architecture.md). The two groups that
 * test NUL characters in strings are run with U+0001 in its place, which
 * keeps what they test: that a control character inside a string takes
 * part in equality.
 *
 * The library never fetches a "$ref". The suite's remote documents (its
 * remotes/ folder, which it expects served at http://localhost:1234/) are
 * read by this runner and handed to the compiler as documents the caller
 * already holds, the way an embedder would share definitions. */
#include <cjson/cJSON.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "json.h"

/* Files not run, and why. Each is about something libmcp refuses by
 * design, not something it gets wrong. */
static const struct {
  const char *file, *why;
} skipped[] = {
    {"vocabulary.json",
     "its schemas declare custom meta-schemas fetched from "
     "http://localhost:1234; libmcp implements the 2020-12 dialect only and "
     "refuses any other \"$schema\""},
};

static const char *skip_reason(const char *file) {
  for (size_t i = 0; i < sizeof skipped / sizeof *skipped; i++)
    if (strcmp(file, skipped[i].file) == 0)
      return skipped[i].why;
  return NULL;
}

typedef struct tally {
  long passed, failed, skipped;
} tally;

static int verbose;
static const char *seed_dir;
static unsigned long nseeds;

/* One fuzz_schema input: an options byte, the schema, NUL, the instance. */
static void write_seed(const cJSON *schema, const cJSON *data, unsigned flags) {
  mcp__buf b = {0};
  mcp__buf_putc(&b, (char)flags);
  mcp__json_write(&b, schema);
  mcp__buf_append(&b, "", 1);
  mcp__json_write(&b, data);
  char path[4096];
  snprintf(path, sizeof path, "%s/suite-%05lu", seed_dir, nseeds++);
  FILE *f = fopen(path, "wb");
  if (f && b.err == 0) {
    fwrite(b.data, 1, b.len, f);
  }
  if (f)
    fclose(f);
  mcp__buf_free(&b);
}

/* The suite's remotes/, parsed once. */
static mcp__json_doc remote_docs[256];
static mcp__schema_doc remotes[256];
static size_t nremotes;

static char *read_file(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (f == NULL)
    return NULL;
  size_t cap = 1 << 16, n = 0;
  char *buf = malloc(cap);
  while (buf) {
    size_t got = fread(buf + n, 1, cap - n, f);
    n += got;
    if (n < cap)
      break;
    char *bigger = realloc(buf, cap * 2);
    if (bigger == NULL) {
      free(buf);
      buf = NULL;
      break;
    }
    buf = bigger;
    cap *= 2;
  }
  fclose(f);
  *len = n;
  return buf;
}

/* Replaces the escape \u0000 by \u0001 (see the header comment). */
static void replace_nul_escapes(char *buf, size_t len) {
  for (size_t i = 0; i + 6 <= len; i++)
    if (memcmp(buf + i, "\\u0000", 6) == 0 && (i == 0 || buf[i - 1] != '\\'))
      buf[i + 5] = '1';
}

static void run_file(const char *dir, const char *name, unsigned flags,
                     tally *t) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  size_t len = 0;
  char *text = read_file(path, &len);
  if (text == NULL) {
    printf("cannot read %s\n", path);
    t->failed++;
    return;
  }
  replace_nul_escapes(text, len);
  mcp__json_doc doc;
  char why[512];
  if (mcp__json_parse(text, len, NULL, &doc, why, sizeof why) != 0) {
    printf("cannot parse %s: %s\n", path, why);
    free(text);
    t->failed++;
    return;
  }
  free(text);
  mcp__schema_options opt = {
      .flags = flags, .docs = remotes, .ndocs = nremotes};
  for (const cJSON *g = doc.root->child; g; g = g->next) {
    const cJSON *schema = cJSON_GetObjectItemCaseSensitive(g, "schema");
    const cJSON *tests = cJSON_GetObjectItemCaseSensitive(g, "tests");
    const cJSON *gdesc = cJSON_GetObjectItemCaseSensitive(g, "description");
    mcp__schema *s = NULL;
    int crc = mcp__schema_compile(schema, &opt, &s, why, sizeof why);
    for (const cJSON *c = tests ? tests->child : NULL; c; c = c->next) {
      const cJSON *data = cJSON_GetObjectItemCaseSensitive(c, "data");
      int expect = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(c, "valid"));
      const cJSON *cdesc = cJSON_GetObjectItemCaseSensitive(c, "description");
      if (seed_dir)
        write_seed(schema, data, flags);
      char msg[512] = "";
      int ok;
      if (crc != 0) {
        ok = 0;
        snprintf(msg, sizeof msg, "schema refused: %.400s", why);
      } else {
        int rc = mcp__schema_validate(s, data, "instance", msg, sizeof msg);
        ok = (rc == 0) == expect;
      }
      if (ok) {
        t->passed++;
      } else {
        t->failed++;
        if (verbose)
          printf("FAIL %s: %s / %s (expected %s): %s\n", name,
                 gdesc ? gdesc->valuestring : "?",
                 cdesc ? cdesc->valuestring : "?", expect ? "valid" : "invalid",
                 msg[0] ? msg : "accepted");
      }
    }
    mcp__schema_free(s);
  }
  mcp__json_doc_free(&doc);
}

/* Loads every .json file under dir as http://localhost:1234/<rel>. */
static void load_remotes(const char *dir, const char *rel) {
  char path[4096];
  snprintf(path, sizeof path, "%s%s%s", dir, rel[0] ? "/" : "", rel);
  DIR *d = opendir(path);
  if (d == NULL)
    return;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    if (e->d_name[0] == '.')
      continue;
    char sub[4096], file[8192];
    snprintf(sub, sizeof sub, "%s%s%s", rel, rel[0] ? "/" : "", e->d_name);
    snprintf(file, sizeof file, "%s/%s", dir, sub);
    size_t l = strlen(e->d_name);
    if (l < 6 || strcmp(e->d_name + l - 5, ".json") != 0) {
      load_remotes(dir, sub); /* a folder, or ignored */
      continue;
    }
    size_t len;
    char *text = read_file(file, &len);
    if (text == NULL || nremotes == sizeof remotes / sizeof *remotes) {
      free(text);
      continue;
    }
    if (mcp__json_parse(text, len, NULL, &remote_docs[nremotes], NULL, 0) ==
        0) {
      char uri[8192];
      snprintf(uri, sizeof uri, "http://localhost:1234/%s", sub);
      remotes[nremotes].uri = strdup(uri);
      remotes[nremotes].json = remote_docs[nremotes].root;
      nremotes++;
    }
    free(text);
  }
  closedir(d);
}

static int name_cmp(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The .json files of dir, sorted; NULL-terminated, malloc'd. */
static char **list_json(const char *dir) {
  DIR *d = opendir(dir);
  if (d == NULL)
    return NULL;
  size_t n = 0, cap = 64;
  char **names = malloc(cap * sizeof *names);
  if (names == NULL) {
    closedir(d);
    return NULL;
  }
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    size_t l = strlen(e->d_name);
    if (l < 6 || strcmp(e->d_name + l - 5, ".json") != 0)
      continue;
    if (n + 1 >= cap) {
      char **bigger = realloc(names, cap * 2 * sizeof *names);
      if (bigger == NULL)
        break;
      names = bigger;
      cap *= 2;
    }
    names[n++] = strdup(e->d_name);
  }
  closedir(d);
  qsort(names, n, sizeof *names, name_cmp);
  names[n] = NULL;
  return names;
}

int main(int argc, char **argv) {
  int argi = 1;
  for (; argi < argc && argv[argi][0] == '-'; argi++) {
    if (strcmp(argv[argi], "-v") == 0)
      verbose = 1;
    else if (strcmp(argv[argi], "--seeds") == 0 && argi + 1 < argc)
      seed_dir = argv[++argi];
    else
      break;
  }
  if (argi >= argc) {
    fprintf(stderr, "usage: %s [-v] [--seeds DIR] SUITE/tests/draft2020-12\n",
            argv[0]);
    return 2;
  }
  const char *dir = argv[argi];
  char **names = list_json(dir);
  if (names == NULL || names[0] == NULL) {
    fprintf(stderr,
            "json_schema_suite: no test files in %s; install the Debian "
            "package libtest-json-schema-acceptance-perl (make test-deps)\n",
            dir);
    return 1;
  }
  char rdir[4096];
  snprintf(rdir, sizeof rdir, "%s/../../remotes", dir);
  load_remotes(rdir, "");
  tally t = {0, 0, 0};
  for (size_t i = 0; names[i]; i++) {
    if (skip_reason(names[i])) {
      /* Count the skipped cases, so the totals cover the whole folder. */
      tally none = {0, 0, 0};
      int save = verbose;
      verbose = 0;
      run_file(dir, names[i], 0, &none);
      verbose = save;
      t.skipped += none.passed + none.failed;
      continue;
    }
    run_file(dir, names[i], 0, &t);
  }
  printf("%ld passed, %ld failed, %ld skipped\n", t.passed, t.failed,
         t.skipped);
  for (size_t i = 0; names[i]; i++) {
    const char *why = skip_reason(names[i]);
    if (why)
      printf("skipped %s: %s\n", names[i], why);
  }

  /* Format assertion, from optional/format: informational. */
  static const char *const formats[] = {
      "date-time.json", "date.json", "email.json", "uri.json",
      "uuid.json",      "ipv4.json", "ipv6.json"};
  char fdir[4096];
  snprintf(fdir, sizeof fdir, "%s/optional/format", dir);
  tally f = {0, 0, 0};
  for (size_t i = 0; i < sizeof formats / sizeof *formats; i++)
    run_file(fdir, formats[i], MCP__SCHEMA_ASSERT_FORMAT, &f);
  printf("format assertion (optional/format, %zu formats): %ld passed, %ld "
         "failed\n",
         sizeof formats / sizeof *formats, f.passed, f.failed);

  for (size_t i = 0; names[i]; i++)
    free(names[i]);
  free(names);
  for (size_t i = 0; i < nremotes; i++) {
    free((char *)remotes[i].uri);
    mcp__json_doc_free(&remote_docs[i]);
  }
  long ran = t.passed + t.failed;
  double rate = ran ? (double)t.passed / (double)ran : 0;
  printf("pass rate: %.2f%% of the cases run (threshold 97%%)\n", rate * 100);
  return rate >= 0.97 ? 0 : 1;
}
