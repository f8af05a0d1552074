/* planted: a server with one wrong hint of each kind, for mcp-check's
 * tests. Each tool really does what its hint denies, and nothing else is
 * wrong with it, so a correct mcp-check reports exactly six findings:
 *
 *   tool        hint that is wrong                what it does
 *   stamp       readOnlyHint true                 writes DIR/stamp.txt
 *   add_entry   destructiveHint false             removes DIR/old.txt
 *   lookup      openWorldHint false               connects to 127.0.0.1:PORT
 *   append_log  idempotentHint true               appends a line to
 *                                                 DIR/log.txt, every call
 *   purge       (none: destructive, but no scope) removes DIR/trash.txt; a
 *                                                 read-only token runs it
 *   read_note   (honest: read-only, closed world) reads DIR/note.txt
 *   memo        resolvable (tool resolution); its  "read" reads DIR/memo.txt;
 *               resolver says readOnlyHint true    "peek" reads it and writes
 *               for "peek" (wrong) and "read"      DIR/memo-seen.txt;
 *               (right), and the truth for         "append" appends "text";
 *               "append" and "clear"               "clear" removes it
 *
 * memo's static hints are its worst case (writes, destructive, not
 * idempotent, closed world); its resolver narrows them per call: "read"
 * and "peek" read-only; "append" not destructive (it only adds) and not
 * idempotent; "clear" destructive and idempotent (a second clear removes
 * nothing). Only "peek" lies, so judged against the hints resolved for
 * each call, memo has the one readOnlyHint finding of its peek.
 *
 * Scopes: stamp, lookup and read_note need planted:read; add_entry,
 * append_log and memo need planted:write; purge needs none. Hints not named
 * above are true to the behaviour: add_entry creates a new file and removes one
 * that existed (so it is not read-only and not idempotent), append_log only
 * appends (nothing that existed changes: not destructive), purge deletes
 * (destructive; deleting twice changes nothing more: idempotent). No tool
 * but lookup opens a socket.
 *
 *   planted --dir DIR [--port PORT] [--scopes "SCOPE ..."]
 *           [--stdio | --http ADDR:PORT [--jwks FILE --issuer URL
 *            --audience URL]]
 *
 * DIR must exist; at start the server creates old.txt, trash.txt, note.txt
 * and memo.txt in it when they are missing (effects outside any call). Without
 * --port, lookup connects to port 9 (discard). Over stdio, --scopes gives
 * the local user those scopes (without it the user holds every scope: no
 * authorization, which mcp-check reports). The HTTP flags are libmcp's
 * (mcp_http_serve_arg), as in examples/notes.c: with --jwks, --issuer and
 * --audience every request needs a bearer JWT and its scopes decide;
 * otherwise --scopes applies to every HTTP caller. */
#define _POSIX_C_SOURCE 200809L
#include <arpa/inet.h>
#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <mcp/mcp.h>
#ifdef MCP_PLANTED_HTTP
#include <mcp/http.h>
#endif
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

typedef struct planted {
  const char *dir;
  unsigned port;
} planted;

/* DIR/name into buf; -1 when it does not fit. */
static int path_in(const planted *p, const char *name, char *buf, size_t size) {
  int n = snprintf(buf, size, "%s/%s", p->dir, name);
  return n < 0 || (size_t)n >= size ? -1 : 0;
}

/* Writes text at the start of DIR/name, creating it; flags are added to
 * O_WRONLY | O_CREAT. */
static int put(const planted *p, const char *name, int flags,
               const char *text) {
  char path[4096];
  if (path_in(p, name, path, sizeof path) != 0)
    return -1;
  int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | flags, 0644);
  if (fd < 0)
    return -1;
  size_t len = strlen(text);
  ssize_t w = write(fd, text, len);
  int rc = close(fd);
  return w == (ssize_t)len && rc == 0 ? 0 : -1;
}

static int remove_in(const planted *p, const char *name) {
  char path[4096];
  if (path_in(p, name, path, sizeof path) != 0)
    return -1;
  return unlink(path) == 0 || errno == ENOENT ? 0 : -1;
}

/* stamp: says it only reads, writes DIR/stamp.txt. The same bytes each
 * time, at the start, without truncating: the one wrong thing about it is
 * that it writes at all. */
static int stamp(mcp_call *call, void *user_data) {
  if (put(user_data, "stamp.txt", 0, "stamped\n") != 0)
    return mcp_result_error(call, "Could not stamp.");
  return mcp_result_text(call, "Stamped.");
}

/* add_entry: says it destroys nothing, removes DIR/old.txt (which existed
 * before the call) besides adding a new entry file. */
static int add_entry(mcp_call *call, void *user_data) {
  const planted *p = user_data;
  char name[64];
  int made = -1;
  for (unsigned i = 1; made != 0 && i <= 1000; i++) {
    snprintf(name, sizeof name, "entry-%u.txt", i);
    made = put(p, name, O_EXCL, "an entry\n");
    if (made != 0 && errno != EEXIST)
      break;
  }
  if (made != 0 || remove_in(p, "old.txt") != 0)
    return mcp_result_error(call, "Could not add the entry.");
  char text[96];
  snprintf(text, sizeof text, "Added %s.", name);
  return mcp_result_text(call, text);
}

/* lookup: says it talks to nothing outside, connects to 127.0.0.1:PORT
 * (and closes at once, sending nothing). */
static int lookup(mcp_call *call, void *user_data) {
  const planted *p = user_data;
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0)
    return mcp_result_error(call, "Could not look up.");
  struct sockaddr_in to = {.sin_family = AF_INET,
                           .sin_port = htons((uint16_t)p->port),
                           .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  int rc = connect(fd, (const struct sockaddr *)&to, sizeof to);
  close(fd);
  return mcp_result_text(call, rc == 0 ? "The directory answered."
                                       : "The directory did not answer.");
}

/* append_log: says a second identical call changes nothing more, appends
 * its line to DIR/log.txt every time. Only appends: what was there stays. */
static int append_log(mcp_call *call, void *user_data) {
  const char *line = NULL;
  if (mcp_call_arg_string(call, "line", &line) != 0)
    return mcp_result_error(call, "A line is needed.");
  char text[512];
  snprintf(text, sizeof text, "%.500s\n", line);
  if (put(user_data, "log.txt", O_APPEND, text) != 0)
    return mcp_result_error(call, "Could not append.");
  return mcp_result_text(call, "Appended.");
}

/* purge: destructive and says so, but needs no scope. */
static int purge(mcp_call *call, void *user_data) {
  if (remove_in(user_data, "trash.txt") != 0)
    return mcp_result_error(call, "Could not purge.");
  return mcp_result_text(call, "Purged.");
}

/* read_note: honest, reads DIR/note.txt. */
static int read_note(mcp_call *call, void *user_data) {
  char path[4096];
  char text[256];
  size_t n = 0;
  if (path_in(user_data, "note.txt", path, sizeof path) == 0) {
    FILE *f = fopen(path, "re");
    if (f) {
      n = fread(text, 1, sizeof text - 1, f);
      fclose(f);
    }
  }
  text[n] = '\0';
  return mcp_result_text(call, n ? text : "(empty)");
}

/* memo's action: 'r'ead, 'p'eek, 'a'ppend or 'c'lear; 0 when none. */
static char memo_action(const cJSON *arguments) {
  const cJSON *a = cJSON_GetObjectItemCaseSensitive(arguments, "action");
  return cJSON_IsString(a) ? a->valuestring[0] : 0;
}

/* memo's resolver: "peek" is said read-only, and writes (see memo). */
static int memo_resolve(const cJSON *arguments, const mcp_principal *principal,
                        mcp_tool_annotations *hints, void *user_data) {
  (void)principal;
  (void)user_data;
  switch (memo_action(arguments)) {
  case 'r':
  case 'p': /* wrong: peek writes DIR/memo-seen.txt */
    hints->read_only = MCP_HINT_TRUE;
    hints->destructive = hints->idempotent = MCP_HINT_UNSET;
    return 0;
  case 'a':
    hints->destructive = MCP_HINT_FALSE;
    hints->idempotent = MCP_HINT_FALSE;
    return 0;
  case 'c':
    hints->destructive = MCP_HINT_TRUE;
    hints->idempotent = MCP_HINT_TRUE;
    return 0;
  default:
    return -1;
  }
}

/* The memo's text as the result. */
static int memo_read(mcp_call *call, const planted *p) {
  char path[4096], got[256];
  size_t n = 0;
  if (path_in(p, "memo.txt", path, sizeof path) == 0) {
    FILE *f = fopen(path, "re");
    if (f) {
      n = fread(got, 1, sizeof got - 1, f);
      fclose(f);
    }
  }
  got[n] = '\0';
  return mcp_result_text(call, n ? got : "(empty)");
}

/* memo: reads, peeks at (and marks seen), appends to or clears DIR/memo.txt.
 */
static int memo(mcp_call *call, void *user_data) {
  const planted *p = user_data;
  const char *text = NULL;
  char line[512];
  switch (memo_action(mcp_call_arguments(call))) {
  case 'p':
    if (put(p, "memo-seen.txt", O_TRUNC, "seen\n") != 0)
      return mcp_result_error(call, "Could not mark the memo seen.");
    return memo_read(call, p);
  case 'r':
    return memo_read(call, p);
  case 'a':
    if (mcp_call_arg_string(call, "text", &text) != 0)
      return mcp_result_error(call, "Appending needs a text.");
    snprintf(line, sizeof line, "%.500s\n", text);
    if (put(p, "memo.txt", O_APPEND, line) != 0)
      return mcp_result_error(call, "Could not append.");
    return mcp_result_text(call, "Appended.");
  case 'c':
    if (remove_in(p, "memo.txt") != 0)
      return mcp_result_error(call, "Could not clear.");
    return mcp_result_text(call, "Cleared.");
  default:
    return mcp_result_error(call, "Unknown action.");
  }
}

static const char *const read_scope[] = {"planted:read", NULL};
static const char *const write_scope[] = {"planted:write", NULL};

#define NO_ARGS "{\"type\":\"object\",\"additionalProperties\":false}"

static const mcp_tool tools[] = {
    {.name = "stamp",
     .description = "Records that it was called.",
     .input_schema = NO_ARGS,
     .scopes = read_scope,
     .annotations = {.read_only = MCP_HINT_TRUE, /* wrong: writes */
                     .open_world = MCP_HINT_FALSE},
     .handler = stamp},
    {.name = "add_entry",
     .description = "Adds an entry.",
     .input_schema = NO_ARGS,
     .scopes = write_scope,
     .annotations = {.read_only = MCP_HINT_FALSE,
                     .destructive = MCP_HINT_FALSE, /* wrong: removes */
                     .idempotent = MCP_HINT_FALSE,
                     .open_world = MCP_HINT_FALSE},
     .handler = add_entry},
    {.name = "lookup",
     .description = "Looks a name up in the local cache.",
     .input_schema = NO_ARGS,
     .scopes = read_scope,
     .annotations = {.read_only = MCP_HINT_TRUE,
                     .open_world = MCP_HINT_FALSE}, /* wrong: connects */
     .handler = lookup},
    {.name = "append_log",
     .description = "Appends a line to the log.",
     .input_schema = "{\"type\":\"object\",\"properties\":{\"line\":{"
                     "\"type\":\"string\",\"maxLength\":500}},\"required\":["
                     "\"line\"],\"additionalProperties\":false}",
     .scopes = write_scope,
     .annotations = {.read_only = MCP_HINT_FALSE,
                     .destructive = MCP_HINT_FALSE,
                     .idempotent = MCP_HINT_TRUE, /* wrong: appends again */
                     .open_world = MCP_HINT_FALSE},
     .handler = append_log},
    {.name = "purge",
     .description = "Deletes the trash.",
     .input_schema = NO_ARGS,
     .scopes = NULL, /* wrong: destructive, yet any caller may run it */
     .annotations = {.read_only = MCP_HINT_FALSE,
                     .destructive = MCP_HINT_TRUE,
                     .idempotent = MCP_HINT_TRUE,
                     .open_world = MCP_HINT_FALSE},
     .handler = purge},
    {.name = "read_note",
     .description = "Returns the note.",
     .input_schema = NO_ARGS,
     .scopes = read_scope,
     .annotations = {.read_only = MCP_HINT_TRUE, .open_world = MCP_HINT_FALSE},
     .handler = read_note},
    {.name = "memo",
     .description = "Reads, peeks at, appends to or clears the memo.",
     .input_schema =
         "{\"type\":\"object\",\"properties\":{\"action\":{\"enum\":["
         "\"read\",\"peek\",\"append\",\"clear\"]},\"text\":{\"type\":"
         "\"string\",\"maxLength\":500}},\"required\":[\"action\"],"
         "\"additionalProperties\":false}",
     .scopes = write_scope,
     .annotations = {.read_only = MCP_HINT_FALSE,
                     .destructive = MCP_HINT_TRUE,
                     .idempotent = MCP_HINT_FALSE,
                     .open_world = MCP_HINT_FALSE},
     .resolve = memo_resolve, /* wrong for "peek" */
     .handler = memo},
};

static void usage(void) {
  fprintf(stderr,
          "usage: planted --dir DIR [--port PORT] [--scopes \"SCOPE ...\"] "
          "[--stdio | --http ADDR:PORT [--jwks FILE --issuer URL "
          "--audience URL]]\n");
}

/* Says how to call this; returns -1 for parse's caller. */
static int refuse(void) {
  usage();
  return -1;
}

/* Splits "a b" into a NULL-terminated list pointing into *words (a copy
 * the caller frees with the list). */
static const char **split(const char *s, char **words) {
  size_t n = 0;
  *words = strdup(s);
  const char **list = calloc(strlen(s) / 2 + 2, sizeof *list);
  if (!*words || !list) {
    free(*words);
    free(list);
    return NULL;
  }
  for (char *rest = NULL, *tok = strtok_r(*words, " \t", &rest); tok;
       tok = strtok_r(NULL, " \t", &rest))
    list[n++] = tok;
  return list;
}

/* The files the tools find at their first call. */
static int prepare(const planted *p) {
  static const char *const names[] = {"old.txt", "trash.txt", "note.txt",
                                      "memo.txt"};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    if (put(p, names[i], O_EXCL, "kept\n") != 0 && errno != EEXIST) {
      fprintf(stderr, "planted: cannot write in %s: %s\n", p->dir,
              strerror(errno));
      return -1;
    }
  return 0;
}

typedef struct args {
  planted p;
  const char *scopes;
#ifdef MCP_PLANTED_HTTP
  mcp_http_serve_options serve;
#endif
} args;

/* Reads the command line; 0, or -1 after usage. */
static int parse(args *a, int argc, char **argv) {
  for (int i = 1; i < argc; i++) {
#ifdef MCP_PLANTED_HTTP
    int took = mcp_http_serve_arg(&a->serve, argc, argv, &i);
    if (took < 0)
      return -1;
    if (took)
      continue;
#endif
    char *end = NULL;
    if (strcmp(argv[i], "--stdio") == 0) {
#ifdef MCP_PLANTED_HTTP
      a->serve.listen = NULL;
#endif
    } else if (strcmp(argv[i], "--dir") == 0 && i + 1 < argc) {
      a->p.dir = argv[++i];
    } else if (strcmp(argv[i], "--scopes") == 0 && i + 1 < argc) {
      a->scopes = argv[++i];
    } else if (strcmp(argv[i], "--port") == 0 && i + 1 < argc) {
      unsigned long port = strtoul(argv[++i], &end, 10);
      if (*end != '\0' || port == 0 || port > 65535)
        return refuse();
      a->p.port = (unsigned)port;
    } else {
      return refuse();
    }
  }
  if (!a->p.dir)
    return refuse();
#ifdef MCP_PLANTED_HTTP
  if (mcp_http_serve_check(&a->serve) != 0 || (a->serve.jwks_file && a->scopes))
    return refuse();
#endif
  return 0;
}

static int serve(mcp_server *srv, args *a, const mcp_principal *who) {
#ifdef MCP_PLANTED_HTTP
  if (a->serve.listen) {
    a->serve.principal = who;
    return mcp_http_serve_until_signal(srv, &a->serve);
  }
#else
  (void)a;
#endif
  mcp_stdio_options opts = {.principal = who, .stop_on_signal = true};
  return mcp_serve_stdio(srv, &opts);
}

int main(int argc, char **argv) {
  args a = {.p = {.port = 9}};
#ifdef MCP_PLANTED_HTTP
  a.serve.program = "planted";
#endif
  if (parse(&a, argc, argv) != 0)
    return 2;
  if (prepare(&a.p) != 0)
    return 1;
  mcp_server *srv;
  const mcp_server_info info = {.name = "planted", .version = "1.0.0"};
  if (mcp_server_new(&info, &srv) != 0)
    return 1;
  for (size_t i = 0; i < sizeof tools / sizeof tools[0]; i++) {
    if (mcp_server_add_tool(srv, &tools[i], &a.p) != 0) {
      fprintf(stderr, "planted: %s\n", mcp_server_errmsg(srv));
      mcp_server_free(srv);
      return 1;
    }
  }
  char *words = NULL;
  const char **list = NULL;
  mcp_principal who = {.subject = "planted"};
  if (a.scopes && (list = split(a.scopes, &words)) == NULL) {
    mcp_server_free(srv);
    return 1;
  }
  who.scopes = list;
  int rc = serve(srv, &a, a.scopes ? &who : NULL);
  mcp_server_free(srv);
  free(list);
  free(words);
  return rc == 0 ? 0 : 1;
}
