/* notes: the teaching server. A small note store whose six tools show each
 * kind of hint and each kind of scope:
 *
 *   list_notes   read-only                                notes:read
 *   get_note     read-only                                notes:read
 *   add_note     writes, not destructive, not idempotent  notes:write
 *   delete_note  writes, destructive, idempotent          notes:write (*)
 *   manage_note  writes, destructive, not idempotent      notes:write (*)
 *                (its worst case; per call, by tools/resolve:
 *                  read    read-only
 *                  append  writes, not destructive, not idempotent
 *                  delete  writes, destructive, idempotent)
 *   export_notes read-only, may run as a task             notes:read
 *
 *   (*) deleting another subject's note needs notes:admin as well
 *
 * None of them reaches outside this process (open_world is false). The
 * hints tell a client what to ask its user about; the scopes decide what a
 * caller may do, and libmcp checks them before any handler runs. Each note
 * records its owner, the subject of the caller that added it (none when
 * the caller has none: such a note is nobody's in particular). Deleting a
 * note that is not the caller's own needs notes:admin on top of
 * notes:write: the handler asks for it (mcp_call_require_scopes, a
 * step-up) once it knows whose the note is, before anything changes. A
 * caller that holds every scope (stdio without --scopes, HTTP without
 * authorization) may delete any note.
 *
 * manage_note reads, appends or deletes by its argument action. Its
 * static hints are the worst of the three; its resolver
 * (mcp_tool.resolve) gives each call's own hints, which a client asks for
 * with tools/resolve (the io.modelcontextprotocol/tool-resolution
 * extension) and which, under --guard, the kernel keeps: a read is held to
 * the read-only rules. One skill
 * (skill://notes-workflow/SKILL.md, the io.modelcontextprotocol/skills
 * extension) writes down the workflow: list before you act, ask the user
 * before you delete.
 *
 * Each note is also the resource note:///{id} (its id, title and text as
 * JSON; notes:read), which a client reads and subscribes to: an append or
 * a delete tells its subscribers (notifications/resources/updated), and
 * with --redis those on every notes process sharing the store.
 *
 * export_notes is a long job: it returns every note, one at a time, with
 * progress, and runs as a task for a client that takes tasks (both
 * protocol eras), which polls it and may cancel it.
 *
 *   notes [--stdio | --http ADDR:PORT|systemd [--tls-cert FILE --tls-key FILE]
 *         [--node-id ID]] [--scopes "notes:read notes:write"]
 *         [--data FILE | --db FILE | --redis URL] [--state-key FILE]
 *         [--rate-limit N/SECONDS] [--node-lease MS] [--guard]
 *   notes --http ADDR:PORT|systemd [--tls-cert FILE --tls-key FILE]
 *         [--node-id ID] --jwks FILE --issuer URL --audience URL
 *         [--data FILE | --db FILE | --redis URL] [--state-key FILE]
 *         [--rate-limit N/SECONDS] [--node-lease MS] [--guard]
 *
 * Over stdio (the default) it serves until end of input, SIGINT or SIGTERM.
 *
 * With --data the notes live in FILE, rewritten atomically (temporary file,
 * fsync, rename) after every change, so a crash never loses a saved note.
 *
 * With --http the same tools are served over Streamable HTTP at
 * http://ADDR:PORT/mcp (port 0 picks a free one) until SIGINT or SIGTERM;
 * with --tls-cert and --tls-key (PEM files) at https://ADDR:PORT/mcp, and
 * SIGHUP re-reads the certificate. --http systemd serves the socket
 * systemd passed (socket activation: examples/deploy/notes.socket).
 * Behind a proxy with several notes processes, --node-id ID puts ID in
 * front of every session id this one mints (the proxy routes by it) and
 * lets the proxy's one address open as many connections as all clients
 * may, and --state-key FILE signs 2026-07-28 requestStates with the secret
 * in FILE (32 bytes or more), the same in every process, so any of them
 * takes a retry another started. --db FILE keeps the notes in SQLite
 * instead of FILE's JSON, for several processes sharing one store
 * on one machine (examples/deploy/cluster.sh runs them so behind nginx).
 * --redis URL keeps them in Redis instead (redis://[[user]:password@]host
 * [:port][/db], or unix://[[user]:password@]/path[?db=N]), for notes
 * processes on several machines, and gives libmcp's own shared state (its
 * resource and list changes) to the same Redis (mcp/redis.h); while Redis
 * cannot be reached each note tool answers a tool error saying so, and
 * works again once it can (cluster.sh --redis). --data, --db and --redis
 * are three stores: give one.
 *
 * --rate-limit N/SECONDS lets each caller make N tool calls per SECONDS
 * seconds (a burst of N at once; mcp_server_set_rate_limit): a call over
 * it is answered with a tool error beginning "rate limited". A caller is
 * the principal's subject: the token's "sub" with --jwks, "http" or
 * "stdio" with --scopes (every caller alike), and without either each
 * session on its own. With --redis the budget is counted in Redis, one
 * for every notes process sharing it (give them all the same limit);
 * while Redis cannot be reached a call is answered "rate limit
 * unavailable". N and SECONDS are whole numbers from 1 on; anything else
 * is a usage error.
 *
 * With --redis, every notes process sharing the store answers for the
 * tasks of the others (tasks/get, tasks/list, tasks/result, tasks/update,
 * tasks/cancel), while each task runs where it started. --node-lease MS
 * sets how long this process may go without renewing its lease before the
 * others count it lost and fail its unfinished tasks, saying so
 * (mcp_server_set_node_lease; MS from 300 to 3600000, default 10000):
 * shorter finds a dead process sooner, longer forgives a slow one.
 * Anything else is a usage error.
 * The HTTP flags (--http, --tls-cert, --tls-key, --node-id, --jwks,
 * --issuer, --audience) are read, and served, by libmcp itself
 * (mcp_http_serve_arg and mcp_http_serve_until_signal, mcp/http.h), so a
 * daemon of your own takes them and prints the same "listening on URL"
 * line in a few lines of main.
 *
 * With --guard (Linux, when libmcp was built with its guard) the kernel
 * holds each tool to its hints (mcp/guard.h), and each manage_note call to
 * the hints its resolver gave that call: list_notes and get_note cannot
 * write, add_note and an append cannot remove, rename or truncate, a read
 * is held to the read-only rules, and none of them can reach the network.
 * The folder of FILE (or of --db's) stays writable for add_note and
 * manage_note only (they rename a temporary file over FILE there), and
 * not for a manage_note call resolved read-only: a tool's own writable
 * paths are for its writing calls. With --redis, --guard takes a unix://
 * socket only: a closed-world tool may not open a network socket, and the
 * tools connect to Redis again after a failure. What
 * the kernel cannot enforce is said on stderr at start, and each call's
 * audit line there names where its handler ran. The handlers then run on
 * the guard's worker threads, several at once, so the store has a lock.
 *
 * --jwks, --issuer and --audience (all three) make it an OAuth 2.1
 * resource server: every request needs "Authorization: Bearer <JWT>"
 * signed by a key of the JWKS in FILE, issued by URL ("iss") for the
 * audience URL ("aud"), the endpoint's canonical URI (e.g.
 * https://notes.example/mcp when a proxy serves it there); the token's
 * scopes decide, and --scopes does not apply. The protected resource
 * metadata is served at /.well-known/oauth-protected-resource[/mcp], naming
 * the issuer as its authorization server. SIGHUP re-reads FILE. */
#define _XOPEN_SOURCE 700 /* POSIX 2008 with realpath */
#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <mcp/mcp.h>
#ifdef MCP_NOTES_HTTP
#include <mcp/http.h>
#endif
#ifdef MCP_EXAMPLE_GUARD
#include <mcp/guard.h>
#endif
#include <pthread.h>
#ifdef MCP_NOTES_REDIS
#include <hiredis/hiredis.h>
#include <mcp/redis.h>
#endif
#ifdef MCP_NOTES_SQLITE
#include <sqlite3.h>
#endif
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

typedef struct note {
  char *id, *title, *text;
  char *owner; /* the subject that added it; NULL: nobody in particular */
} note;

typedef struct store store;

/* Where the notes live: in this process (and --data's file), in SQLite
 * (--db) or in Redis (--redis). The handlers call these, under the
 * store's lock, and never ask which one it is. Each returns 0, or -1 when
 * it failed; then nothing changed, and st->why may say why (the handler
 * puts it in its tool error). */
typedef struct backend {
  /* Brings st->notes up to date with what every process sharing the
   * store sees. */
  int (*load)(store *st);
  /* Adds a note owned by owner (NULL: nobody); its new id goes to id. */
  int (*add)(store *st, const char *title, const char *text, const char *owner,
             char *id, size_t size);
  /* Deletes the note with id (one that load found). */
  int (*remove)(store *st, const char *id);
  /* Replaces the text of the note with id (one that load found). */
  int (*set_text)(store *st, const char *id, const char *text);
} backend;

#ifdef MCP_NOTES_REDIS
/* --redis URL: where Redis is, as the URL says, and the connection. */
typedef struct redis_conn {
  char *buf;               /* the URL's parts, decoded, point into it */
  const char *host, *path; /* path: a unix socket; else host and port */
  int port;                /* 6379 by default */
  char *user, *password;   /* NULL: none */
  long db;
  redisContext *c; /* NULL until connected, and after a failure */
} redis_conn;
#endif

struct store {
  note *notes;
  size_t n;
  unsigned long next_id;
  const char *path;     /* NULL: in memory only */
  pthread_mutex_t lock; /* held by each handler while it runs */
  const backend *ops;
  mcp_server *srv; /* told when a note changes (note_changed) */
  char why[300];   /* what the last failed operation said, or "" */
#ifdef MCP_NOTES_SQLITE
  sqlite3 *db; /* --db: the notes live in SQLite, shared by processes */
#endif
#ifdef MCP_NOTES_REDIS
  redis_conn redis; /* --redis: the notes live in Redis */
#endif
};

/* ---- storage --------------------------------------------------------------
 */

static void note_free(note *n) {
  free(n->id);
  free(n->title);
  free(n->text);
  free(n->owner);
}

/* A copy of s, or NULL for NULL; *ok becomes false when memory ran out. */
static char *dup_or_null(const char *s, bool *ok) {
  char *d = s ? strdup(s) : NULL;
  if (s && d == NULL)
    *ok = false;
  return d;
}

static note *find(store *st, const char *id) {
  for (size_t i = 0; i < st->n; i++)
    if (strcmp(st->notes[i].id, id) == 0)
      return &st->notes[i];
  return NULL;
}

#ifdef MCP_NOTES_SQLITE
/* ---- the SQLite store (--db FILE) ------------------------------------------
 * For several notes processes behind one proxy: each call reads the notes
 * from the database and each change is one committed statement, so a note
 * whose add_note was answered is on disk, whichever process answered.
 * WAL mode lets readers and the one writer go on at once; a writer waits
 * up to 5 s for another's transaction (busy_timeout). Ids are "n" and the
 * row's number, unique across processes. */

/* Adds the column owner to a database made before notes recorded owners
 * (its notes then belong to nobody in particular). In one IMMEDIATE
 * transaction, so that of several processes starting at once one adds
 * it and the others see it there. Returns SQLITE_OK or an error code. */
static int db_migrate(sqlite3 *db) {
  int rc = sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL);
  if (rc != SQLITE_OK)
    return rc;
  sqlite3_stmt *q = NULL;
  if (sqlite3_prepare_v2(db, "SELECT owner FROM notes LIMIT 0", -1, &q, NULL) !=
      SQLITE_OK) /* no such column */
    rc = sqlite3_exec(db, "ALTER TABLE notes ADD COLUMN owner TEXT", NULL, NULL,
                      NULL);
  sqlite3_finalize(q);
  if (rc == SQLITE_OK)
    rc = sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
  if (rc != SQLITE_OK)
    sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
  return rc;
}

static int db_open(store *st, const char *path) {
  int rc = sqlite3_open_v2(
      path, &st->db,
      SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX, NULL);
  if (rc == SQLITE_OK)
    rc = sqlite3_busy_timeout(st->db, 5000);
  if (rc == SQLITE_OK)
    rc = sqlite3_exec(st->db,
                      "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL;"
                      "CREATE TABLE IF NOT EXISTS notes (n INTEGER PRIMARY "
                      "KEY AUTOINCREMENT, title TEXT NOT NULL, text TEXT NOT "
                      "NULL, owner TEXT);",
                      NULL, NULL, NULL);
  if (rc == SQLITE_OK)
    rc = db_migrate(st->db);
  if (rc != SQLITE_OK) {
    fprintf(stderr, "notes: --db %s: %s\n", path,
            st->db ? sqlite3_errmsg(st->db) : "out of memory");
    sqlite3_close(st->db);
    st->db = NULL;
    return -1;
  }
  return 0;
}

/* Replaces the notes in memory with the database's. */
static int db_load(store *st) {
  sqlite3_stmt *q = NULL;
  if (sqlite3_prepare_v2(st->db,
                         "SELECT n, title, text, owner FROM notes ORDER BY n",
                         -1, &q, NULL) != SQLITE_OK)
    return -1;
  for (size_t i = 0; i < st->n; i++)
    note_free(&st->notes[i]);
  st->n = 0;
  int rc;
  while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
    note *p = realloc(st->notes, (st->n + 1) * sizeof *p);
    if (p == NULL)
      break;
    st->notes = p;
    char id[32];
    snprintf(id, sizeof id, "n%lld", (long long)sqlite3_column_int64(q, 0));
    bool ok = true;
    note n = {strdup(id), strdup((const char *)sqlite3_column_text(q, 1)),
              strdup((const char *)sqlite3_column_text(q, 2)),
              dup_or_null((const char *)sqlite3_column_text(q, 3), &ok)};
    if (!n.id || !n.title || !n.text || !ok) {
      note_free(&n);
      break;
    }
    st->notes[st->n++] = n;
  }
  sqlite3_finalize(q);
  return rc == SQLITE_DONE ? 0 : -1;
}

/* Adds a note owned by owner (NULL: nobody); its id goes to id. Returns 0
 * once it is committed. */
static int db_add(store *st, const char *title, const char *text,
                  const char *owner, char *id, size_t size) {
  sqlite3_stmt *q = NULL;
  int rc = sqlite3_prepare_v2(
      st->db, "INSERT INTO notes (title, text, owner) VALUES (?, ?, ?)", -1, &q,
      NULL);
  if (rc == SQLITE_OK)
    rc = sqlite3_bind_text(q, 1, title, -1, SQLITE_TRANSIENT);
  if (rc == SQLITE_OK)
    rc = sqlite3_bind_text(q, 2, text, -1, SQLITE_TRANSIENT);
  if (rc == SQLITE_OK)
    rc = owner ? sqlite3_bind_text(q, 3, owner, -1, SQLITE_TRANSIENT)
               : sqlite3_bind_null(q, 3);
  if (rc == SQLITE_OK)
    rc = sqlite3_step(q) == SQLITE_DONE ? SQLITE_OK : SQLITE_ERROR;
  if (rc == SQLITE_OK)
    snprintf(id, size, "n%lld", (long long)sqlite3_last_insert_rowid(st->db));
  sqlite3_finalize(q);
  return rc == SQLITE_OK ? 0 : -1;
}

/* Deletes the note with id. Returns 0 once that is committed. */
static int db_delete(store *st, const char *id) {
  sqlite3_stmt *q = NULL;
  int rc =
      sqlite3_prepare_v2(st->db, "DELETE FROM notes WHERE n = ?", -1, &q, NULL);
  if (rc == SQLITE_OK)
    rc = sqlite3_bind_int64(q, 1, strtoll(id + 1, NULL, 10));
  if (rc == SQLITE_OK)
    rc = sqlite3_step(q) == SQLITE_DONE ? SQLITE_OK : SQLITE_ERROR;
  sqlite3_finalize(q);
  return rc == SQLITE_OK ? 0 : -1;
}

/* Sets the text of the note with id. Returns 0 once that is committed. */
static int db_set_text(store *st, const char *id, const char *text) {
  sqlite3_stmt *q = NULL;
  int rc = sqlite3_prepare_v2(st->db, "UPDATE notes SET text = ? WHERE n = ?",
                              -1, &q, NULL);
  if (rc == SQLITE_OK)
    rc = sqlite3_bind_text(q, 1, text, -1, SQLITE_TRANSIENT);
  if (rc == SQLITE_OK)
    rc = sqlite3_bind_int64(q, 2, strtoll(id + 1, NULL, 10));
  if (rc == SQLITE_OK)
    rc = sqlite3_step(q) == SQLITE_DONE ? SQLITE_OK : SQLITE_ERROR;
  sqlite3_finalize(q);
  return rc == SQLITE_OK ? 0 : -1;
}

static const backend sqlite_backend = {db_load, db_add, db_delete, db_set_text};
#endif

#ifdef MCP_NOTES_REDIS
/* ---- the Redis store (--redis URL) -----------------------------------------
 * For notes processes on several machines: the notes live in one Redis
 * server, under keys that start with mcp:notes: (libmcp's own start with
 * mcp:, so one ACL key pattern, ~mcp:*, covers both). A note is a hash
 * (mcp:notes:note:ID: title, text and, when it has one, owner), its id is
 * "n" and a number INCR gave (mcp:notes:next), and mcp:notes:ids is the
 * sorted set of ids, scored by that number, so they list in order. What
 * must change together (a note's hash and its place in the set) changes
 * in one MULTI/EXEC transaction.
 *
 * hiredis's synchronous API, on the handler's thread under the store's
 * lock: a note operation is a round trip or two on one connection. Each
 * connection and command waits 2 s at most; when Redis cannot be reached
 * or a command fails on the connection, it is closed, the call answers a
 * tool error saying Redis is unavailable, and the next call connects
 * again. */
#define REDIS_TIMEOUT_S 2
#define REDIS_IDS "mcp:notes:ids"
#define REDIS_NEXT "mcp:notes:next"
#define REDIS_NOTE "mcp:notes:note:"

/* The value of the hexadecimal digit c, or -1. */
static int hex_digit(char c) {
  const char *digits = "0123456789abcdef";
  const char *at = c ? strchr(digits, c | 0x20) : NULL;
  return at ? (int)(at - digits) : -1;
}

/* Decodes %XX in s, in place; a % without two hex digits stays. */
static void percent_decode(char *s) {
  char *out = s;
  for (; *s; s++) {
    int hi = *s == '%' ? hex_digit(s[1]) : -1;
    int lo = hi >= 0 ? hex_digit(s[2]) : -1;
    if (lo >= 0) {
      *out++ = (char)(hi * 16 + lo);
      s += 2;
    } else
      *out++ = *s;
  }
  *out = '\0';
}

/* Splits "[user]:password" (or "password") at s into r's user and
 * password, decoded. */
static void url_userinfo(redis_conn *r, char *s) {
  char *colon = strchr(s, ':');
  if (colon) {
    *colon = '\0';
    r->user = *s ? s : NULL;
    r->password = colon + 1;
    percent_decode(s);
  } else
    r->password = s;
  percent_decode(r->password);
}

/* redis://[[user]:password@]host[:port][/db], with host in brackets for
 * IPv6; rest is what follows "redis://" (in r->buf). Returns 0 or -1. */
static int url_tcp(redis_conn *r, char *rest) {
  char *slash = strchr(rest, '/');
  if (slash) {
    *slash = '\0';
    char *end;
    r->db = strtol(slash + 1, &end, 10);
    if (*end || r->db < 0)
      return -1;
  }
  char *at = strrchr(rest, '@');
  if (at) {
    *at = '\0';
    url_userinfo(r, rest);
    rest = at + 1;
  }
  char *port = NULL;
  if (*rest == '[') { /* [IPv6]:port */
    char *close = strchr(rest, ']');
    if (close == NULL)
      return -1;
    *close = '\0';
    rest++;
    port = close[1] == ':' ? close + 2 : NULL;
  } else if ((port = strchr(rest, ':')) != NULL)
    *port++ = '\0';
  r->host = rest;
  if (port) {
    char *end;
    long p = strtol(port, &end, 10);
    if (*end || p < 1 || p > 65535)
      return -1;
    r->port = (int)p;
  }
  return *r->host ? 0 : -1;
}

/* unix://[[user]:password@]/path[?db=N], or /path alone. Returns 0 or
 * -1. */
static int url_unix(redis_conn *r, char *rest) {
  char *at = strstr(rest, "@/");
  if (*rest != '/' && at) {
    *at = '\0';
    url_userinfo(r, rest);
    rest = at + 1;
  }
  char *query = strchr(rest, '?');
  if (query) {
    *query = '\0';
    char *end;
    if (strncmp(query + 1, "db=", 3) != 0 ||
        (r->db = strtol(query + 4, &end, 10)) < 0 || *end)
      return -1;
  }
  r->path = rest;
  return *rest == '/' ? 0 : -1;
}

/* Reads url (the forms mcp_redis_store_new takes, mcp/redis.h) into r.
 * Returns 0, or -1 when it is malformed or memory ran out. */
static int redis_url(redis_conn *r, const char *url) {
  *r = (redis_conn){.port = 6379};
  if ((r->buf = strdup(url)) == NULL)
    return -1;
  if (strncmp(url, "redis://", 8) == 0)
    return url_tcp(r, r->buf + 8);
  if (strncmp(url, "unix://", 7) == 0)
    return url_unix(r, r->buf + 7);
  return url_unix(r, r->buf);
}

/* Where Redis is, for messages: never the password. */
static void redis_where(const redis_conn *r, char *out, size_t size) {
  if (r->path)
    snprintf(out, size, "%s", r->path);
  else
    snprintf(out, size, "%s:%d", r->host, r->port);
}

/* Closes the connection after a failure, saying why in st->why; the next
 * operation connects again. */
static void redis_lost(store *st, const char *why) {
  char where[128];
  redis_where(&st->redis, where, sizeof where);
  snprintf(st->why, sizeof st->why, "Redis is unavailable (%.120s: %.100s)",
           where, why);
  if (st->redis.c)
    redisFree(st->redis.c);
  st->redis.c = NULL;
}

/* One command on the connection, as printf formats it (hiredis's %s is
 * one argument, whatever it holds). Returns its reply (freeReplyObject
 * it), or NULL after saying why in st->why. A reply that is an error
 * counts as a failure; the connection stays. */
static redisReply *redis_do(store *st, const char *format, ...) {
  va_list ap;
  va_start(ap, format);
  redisReply *r = redisvCommand(st->redis.c, format, ap);
  va_end(ap);
  if (r == NULL) {
    redis_lost(st, st->redis.c->errstr);
    return NULL;
  }
  if (r->type == REDIS_REPLY_ERROR) {
    snprintf(st->why, sizeof st->why, "Redis answered %.150s", r->str);
    freeReplyObject(r);
    return NULL;
  }
  return r;
}

/* Connects, logs in and selects the database, unless connected already.
 * Returns 0, or -1 after saying why in st->why. */
static int redis_connect(store *st) {
  redis_conn *r = &st->redis;
  if (r->c)
    return 0;
  struct timeval tv = {.tv_sec = REDIS_TIMEOUT_S};
  r->c = r->path ? redisConnectUnixWithTimeout(r->path, tv)
                 : redisConnectWithTimeout(r->host, r->port, tv);
  if (r->c == NULL || r->c->err) {
    redis_lost(st, r->c ? r->c->errstr : "out of memory");
    return -1;
  }
  redisSetTimeout(r->c, tv);
  redisReply *reply = NULL;
  if (r->password && r->user)
    reply = redis_do(st, "AUTH %s %s", r->user, r->password);
  else if (r->password)
    reply = redis_do(st, "AUTH %s", r->password);
  if (r->password && reply == NULL)
    goto refused;
  if (reply)
    freeReplyObject(reply);
  if (r->db && (reply = redis_do(st, "SELECT %ld", r->db)) == NULL)
    goto refused;
  if (r->db)
    freeReplyObject(reply);
  return 0;
refused: /* st->why says why; no use keeping a connection not logged in */
  redisFree(r->c);
  r->c = NULL;
  return -1;
}

/* The note whose hash is reply (HMGET title text owner) as n. Returns 1,
 * 0 when the note is gone (deleted since the ids were read), or -1. */
static int redis_note(const redisReply *reply, const char *id, note *n) {
  if (reply->type != REDIS_REPLY_ARRAY || reply->elements != 3)
    return -1;
  redisReply **f = reply->element;
  if (f[0]->type != REDIS_REPLY_STRING || f[1]->type != REDIS_REPLY_STRING)
    return 0;
  bool ok = true;
  *n = (note){
      strdup(id), strdup(f[0]->str), strdup(f[1]->str),
      dup_or_null(f[2]->type == REDIS_REPLY_STRING ? f[2]->str : NULL, &ok)};
  if (!n->id || !n->title || !n->text || !ok) {
    note_free(n);
    return -1;
  }
  return 1;
}

/* Reads each note of ids (the sorted set's members) into st->notes, their
 * HMGETs sent at once (pipelined) and answered in order. */
static int redis_read_notes(store *st, const redisReply *ids) {
  for (size_t i = 0; i < ids->elements; i++)
    if (redisAppendCommand(st->redis.c,
                           "HMGET " REDIS_NOTE "%s title text owner",
                           ids->element[i]->str) != REDIS_OK) {
      redis_lost(st, "out of memory");
      return -1;
    }
  int rc = 0;
  for (size_t i = 0; i < ids->elements; i++) {
    void *got = NULL;
    if (redisGetReply(st->redis.c, &got) != REDIS_OK) {
      redis_lost(st, st->redis.c->errstr);
      return -1;
    }
    note n;
    int found = rc == 0 ? redis_note(got, ids->element[i]->str, &n) : 0;
    freeReplyObject(got);
    note *p = found == 1 ? realloc(st->notes, (st->n + 1) * sizeof *p) : NULL;
    if (found == 1 && p == NULL)
      note_free(&n);
    if (found < 0 || (found == 1 && p == NULL))
      rc = -1; /* the other replies are still read */
    else if (found == 1) {
      st->notes = p;
      st->notes[st->n++] = n;
    }
  }
  return rc;
}

/* Replaces the notes in memory with Redis's. */
static int redis_load_once(store *st) {
  for (size_t i = 0; i < st->n; i++)
    note_free(&st->notes[i]);
  st->n = 0;
  if (redis_connect(st) != 0)
    return -1;
  redisReply *ids = redis_do(st, "ZRANGE " REDIS_IDS " 0 -1");
  if (ids == NULL)
    return -1;
  int rc = ids->type == REDIS_REPLY_ARRAY ? redis_read_notes(st, ids) : -1;
  freeReplyObject(ids);
  return rc;
}

/* Sends MULTI, the n commands already appended, and EXEC, and reads their
 * replies. Returns 0 once EXEC answered (the transaction ran), or -1. */
static int redis_exec(store *st, size_t n) {
  redisAppendCommand(st->redis.c, "EXEC");
  int rc = 0;
  for (size_t i = 0; i < n + 2; i++) { /* MULTI, QUEUED..., EXEC */
    void *got = NULL;
    if (redisGetReply(st->redis.c, &got) != REDIS_OK) {
      redis_lost(st, st->redis.c->errstr);
      return -1;
    }
    redisReply *r = got;
    if (r->type == REDIS_REPLY_ERROR ||
        (i == n + 1 && r->type != REDIS_REPLY_ARRAY)) {
      snprintf(st->why, sizeof st->why, "Redis answered %.150s",
               r->type == REDIS_REPLY_ERROR ? r->str : "no transaction");
      rc = -1;
    }
    freeReplyObject(r);
  }
  return rc;
}

/* Every call reads first: a connection Redis closed while this process
 * was idle (Redis restarted) fails there, and is made again at once, so
 * that a read (harmless to repeat) rather than the caller pays for it. */
static int redis_load(store *st) {
  bool was_connected = st->redis.c != NULL;
  int rc = redis_load_once(st);
  if (rc != 0 && was_connected && st->redis.c == NULL) {
    st->why[0] = '\0';
    rc = redis_load_once(st);
  }
  return rc;
}

static int redis_add(store *st, const char *title, const char *text,
                     const char *owner, char *id, size_t size) {
  if (redis_connect(st) != 0)
    return -1;
  redisReply *next = redis_do(st, "INCR " REDIS_NEXT);
  if (next == NULL)
    return -1;
  long long number = next->integer;
  freeReplyObject(next);
  snprintf(id, size, "n%lld", number);
  redisAppendCommand(st->redis.c, "MULTI");
  if (owner)
    redisAppendCommand(st->redis.c,
                       "HSET " REDIS_NOTE "%s title %s text %s owner %s", id,
                       title, text, owner);
  else
    redisAppendCommand(st->redis.c, "HSET " REDIS_NOTE "%s title %s text %s",
                       id, title, text);
  redisAppendCommand(st->redis.c, "ZADD " REDIS_IDS " %lld %s", number, id);
  return redis_exec(st, 2);
}

static int redis_remove(store *st, const char *id) {
  if (redis_connect(st) != 0)
    return -1;
  redisAppendCommand(st->redis.c, "MULTI");
  redisAppendCommand(st->redis.c, "DEL " REDIS_NOTE "%s", id);
  redisAppendCommand(st->redis.c, "ZREM " REDIS_IDS " %s", id);
  return redis_exec(st, 2);
}

/* Sets the text only while the note exists, as SQLite's UPDATE does: a
 * note another process deleted meanwhile stays deleted. */
static int redis_set_text(store *st, const char *id, const char *text) {
  if (redis_connect(st) != 0)
    return -1;
  redisReply *r = redis_do(st, "EVAL %s 1 " REDIS_NOTE "%s %s",
                           "if redis.call('EXISTS', KEYS[1]) == 1 then "
                           "redis.call('HSET', KEYS[1], 'text', ARGV[1]) end "
                           "return 0",
                           id, text);
  if (r == NULL)
    return -1;
  freeReplyObject(r);
  return 0;
}

static const backend redis_backend = {redis_load, redis_add, redis_remove,
                                      redis_set_text};

/* --redis URL: reads it and connects once, so that a wrong URL or a
 * Redis that is not there is said at start. Returns 0 or -1. */
static int redis_open(store *st, const char *url) {
  if (redis_url(&st->redis, url) != 0) {
    fprintf(stderr,
            "notes: --redis %s: not a redis://[[user]:password@]host[:port]"
            "[/db] or unix://[[user]:password@]/path[?db=N] URL\n",
            url);
    return -1;
  }
  if (redis_connect(st) != 0) {
    fprintf(stderr, "notes: --redis: %s\n", st->why);
    return -1;
  }
  return 0;
}
#endif

static int fsync_dir(const char *path) {
  char *copy = strdup(path);
  if (copy == NULL)
    return -1;
  int fd = open(dirname(copy), O_RDONLY | O_DIRECTORY);
  free(copy);
  if (fd < 0)
    return -1;
  int rc = fsync(fd);
  close(fd);
  return rc;
}

/* Writes the whole store to a temporary file beside the real one, then
 * renames it over: readers see the old file or the new one, never half. */
static int save(const store *st) {
  if (st->path == NULL)
    return 0;
  cJSON *root = cJSON_CreateObject(),
        *arr = cJSON_AddArrayToObject(root, "notes");
  cJSON_AddNumberToObject(root, "next_id", (double)st->next_id);
  for (size_t i = 0; arr && i < st->n; i++) {
    cJSON *o = cJSON_CreateObject();
    cJSON_AddItemToArray(arr, o);
    cJSON_AddStringToObject(o, "id", st->notes[i].id);
    cJSON_AddStringToObject(o, "title", st->notes[i].title);
    cJSON_AddStringToObject(o, "text", st->notes[i].text);
    if (st->notes[i].owner) /* none: nobody in particular */
      cJSON_AddStringToObject(o, "owner", st->notes[i].owner);
  }
  char *json = cJSON_PrintUnformatted(root);
  cJSON_Delete(root);
  if (json == NULL)
    return -1;
  size_t len = strlen(json);
  char tmp[4096];
  snprintf(tmp, sizeof tmp, "%s.XXXXXX", st->path);
  int fd = mkstemp(tmp);
  int rc = -1;
  if (fd >= 0) {
    ssize_t w = write(fd, json, len);
    rc = (w == (ssize_t)len && fsync(fd) == 0) ? 0 : -1;
    close(fd);
    if (rc == 0)
      rc = rename(tmp, st->path);
    if (rc != 0)
      unlink(tmp);
    else
      fsync_dir(st->path);
  }
  cJSON_free(json);
  return rc;
}

static int load(store *st) {
  FILE *f = fopen(st->path, "rb");
  if (f == NULL)
    return errno == ENOENT ? 0 : -1; /* no file yet: an empty store */
  char *data = NULL;
  size_t len = 0, cap = 0;
  for (;;) {
    if (len == cap) {
      char *p = realloc(data, cap = cap ? cap * 2 : 4096);
      if (p == NULL)
        break;
      data = p;
    }
    size_t r = fread(data + len, 1, cap - len, f);
    if (r == 0)
      break;
    len += r;
  }
  fclose(f);
  cJSON *root = data ? cJSON_ParseWithLength(data, len) : NULL;
  free(data);
  const cJSON *arr = cJSON_GetObjectItemCaseSensitive(root, "notes");
  const cJSON *next = cJSON_GetObjectItemCaseSensitive(root, "next_id");
  if (!cJSON_IsArray(arr) || !cJSON_IsNumber(next)) {
    cJSON_Delete(root);
    return -1;
  }
  st->next_id = (unsigned long)next->valuedouble;
  const cJSON *o;
  cJSON_ArrayForEach(o, arr) {
    const char *id =
        cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, "id"));
    const char *title =
        cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, "title"));
    const char *text =
        cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, "text"));
    /* owner is optional: files written before notes kept it have none. */
    const cJSON *owner = cJSON_GetObjectItemCaseSensitive(o, "owner");
    bool owner_ok = owner == NULL || cJSON_IsString(owner);
    note *p = realloc(st->notes, (st->n + 1) * sizeof *p);
    if (!id || !title || !text || !owner_ok || p == NULL) {
      if (p)
        st->notes = p;
      cJSON_Delete(root);
      return -1;
    }
    st->notes = p;
    st->notes[st->n++] = (note){strdup(id), strdup(title), strdup(text),
                                owner ? strdup(owner->valuestring) : NULL};
  }
  cJSON_Delete(root);
  return 0;
}

/* ---- the store in this process (and --data FILE) --------------------------
 * Each change is made in memory, then saved; one that cannot be saved is
 * undone, so that the notes in memory are always the file's. */

static int mem_load(store *st) {
  (void)st; /* the notes in memory are the only ones */
  return 0;
}

static int mem_add(store *st, const char *title, const char *text,
                   const char *owner, char *id, size_t size) {
  snprintf(id, size, "n%lu", st->next_id);
  note *p = realloc(st->notes, (st->n + 1) * sizeof *p);
  if (p == NULL)
    return -1;
  st->notes = p;
  bool ok = true;
  note n = {strdup(id), strdup(title), strdup(text), dup_or_null(owner, &ok)};
  if (!n.id || !n.title || !n.text || !ok) {
    note_free(&n);
    return -1;
  }
  st->notes[st->n++] = n;
  st->next_id++;
  if (save(st) != 0) { /* not saved means not added */
    note_free(&st->notes[--st->n]);
    st->next_id--;
    return -1;
  }
  return 0;
}

static int mem_remove(store *st, const char *id) {
  note *n = find(st, id);
  note gone = *n;
  size_t i = (size_t)(n - st->notes);
  memmove(n, n + 1, (st->n - i - 1) * sizeof *n);
  st->n--;
  if (save(st) != 0) { /* not saved means not deleted */
    memmove(&st->notes[i + 1], &st->notes[i], (st->n - i) * sizeof *n);
    st->notes[i] = gone;
    st->n++;
    return -1;
  }
  note_free(&gone);
  return 0;
}

static int mem_set_text(store *st, const char *id, const char *text) {
  note *n = find(st, id);
  char *was = n->text;
  if ((n->text = strdup(text)) == NULL || save(st) != 0) {
    free(n->text); /* not saved means not changed */
    n->text = was;
    return -1;
  }
  free(was);
  return 0;
}

static const backend memory_backend = {mem_load, mem_add, mem_remove,
                                       mem_set_text};

/* ---- tools ----------------------------------------------------------------
 * Each handler holds the store's lock while it runs: under --guard the
 * handlers run on several threads (see the top of this file). */

/* A tool error: what failed ("The notes could not be read"), why when
 * the store said (Redis is unavailable, say), and what to do. */
static int store_error(mcp_call *call, store *st, const char *what) {
  char msg[400];
  snprintf(msg, sizeof msg, "%s%s%s; try again.", what, st->why[0] ? ": " : "",
           st->why);
  st->why[0] = '\0';
  return mcp_result_error(call, msg);
}

static int list_notes(mcp_call *call, void *user_data) {
  store *st = user_data;
  pthread_mutex_lock(&st->lock);
  if (st->ops->load(st) != 0) {
    int rc = store_error(call, st, "The notes could not be read");
    pthread_mutex_unlock(&st->lock);
    return rc;
  }
  cJSON *out = cJSON_CreateObject(),
        *arr = cJSON_AddArrayToObject(out, "notes");
  for (size_t i = 0; arr && i < st->n; i++) {
    cJSON *o = cJSON_CreateObject();
    cJSON_AddItemToArray(arr, o);
    cJSON_AddStringToObject(o, "id", st->notes[i].id);
    cJSON_AddStringToObject(o, "title", st->notes[i].title);
  }
  pthread_mutex_unlock(&st->lock);
  int rc = mcp_result_structured_cjson(call, out);
  cJSON_Delete(out);
  return rc;
}

/* The note with id, read from the store just now, or NULL after the tool
 * error that says why. Under the store's lock. */
static note *find_fresh(mcp_call *call, store *st, const char *id, int *rc) {
  if (st->ops->load(st) != 0) {
    *rc = store_error(call, st, "The notes could not be read");
    return NULL;
  }
  note *n = find(st, id);
  if (n == NULL) {
    char msg[300];
    snprintf(msg, sizeof msg,
             "No note has the id \"%.200s\". Call list_notes to see the ids.",
             id);
    *rc = mcp_result_error(call, msg);
  }
  return n;
}

/* The note with id into the result: its title, then its text. Under the
 * store's lock. */
static int get_locked(mcp_call *call, store *st, const char *id) {
  int rc = 0;
  const note *n = find_fresh(call, st, id, &rc);
  if (n == NULL)
    return rc;
  mcp_result_text(call, n->title);
  return mcp_result_text(call, n->text); /* both copied */
}

static int get_note(mcp_call *call, void *user_data) {
  store *st = user_data;
  const char *id;
  mcp_call_arg_string(call, "id", &id); /* "required" in the schema */
  pthread_mutex_lock(&st->lock);
  int rc = get_locked(call, st, id);
  pthread_mutex_unlock(&st->lock);
  return rc;
}

static int add_note(mcp_call *call, void *user_data) {
  store *st = user_data;
  const char *title, *text;
  mcp_call_arg_string(call, "title", &title);
  mcp_call_arg_string(call, "text", &text);
  /* The note is its adder's: the caller's subject, if it has one. */
  const char *owner = mcp_call_principal(call)->subject;
  char id[32];
  pthread_mutex_lock(&st->lock);
  bool added = st->ops->add(st, title, text, owner, id, sizeof id) == 0;
  int rc = added ? 0 : store_error(call, st, "The note could not be saved");
  pthread_mutex_unlock(&st->lock);
  if (!added)
    return rc;
  char json[64];
  snprintf(json, sizeof json, "{\"id\":\"%s\"}", id);
  return mcp_result_structured(call, json);
}

/* Asks the user to confirm a deletion when the client can ask (it declared
 * elicitation); returns 1 to go ahead, 0 when the user said no, or
 * MCP_INPUT_REQUIRED while the question is out. The same code serves both
 * protocol eras: libmcp either sends the question to the client or returns
 * it with a signed requestState, and calls this handler again with the
 * answer. */
static int confirmed(mcp_call *call, const note *n) {
  const cJSON *answer = mcp_call_input(call, "confirm");
  if (answer != NULL) {
    const cJSON *action = cJSON_GetObjectItemCaseSensitive(answer, "action");
    return cJSON_IsString(action) && strcmp(action->valuestring, "accept") == 0;
  }
  char params[512];
  snprintf(params, sizeof params,
           "{\"message\":\"Delete the note \\\"%.100s\\\" for good?\","
           "\"requestedSchema\":{\"type\":\"object\",\"properties\":{}}}",
           n->id);
  int rc =
      mcp_call_request_input(call, "confirm", MCP_INPUT_ELICITATION, params);
  if (rc == MCP_ECAPABILITY)
    return 1; /* the client cannot ask; its destructive hint warned it */
  return rc == 0 ? MCP_INPUT_REQUIRED : rc;
}

/* Whether the caller added n: a note with no owner, or a caller with no
 * subject, is nobody's in particular, so never the caller's own. */
static bool own_note(mcp_call *call, const note *n) {
  const char *who = mcp_call_principal(call)->subject;
  return n->owner && who && strcmp(n->owner, who) == 0;
}

/* Tells the subscribers of note:///id that the note changed (its text, or
 * that it is gone): this server's, and, with --redis, those of every notes
 * process sharing the store (mcp_server_set_store). Called once the change
 * is saved. */
static void note_changed(store *st, const char *id) {
  char uri[128];
  snprintf(uri, sizeof uri, "note:///%s", id);
  if (st->srv)
    mcp_server_resource_updated(st->srv, uri);
}

/* Deletes the note with id, for delete_note and manage_note alike. The
 * tool's scope (notes:write) lets a caller delete its own notes; another
 * subject's needs notes:admin too, a step-up asked before anything is
 * done, whose refusal ends the call as a scope refusal does (its code is
 * returned). A caller holding every scope (stdio without --scopes, HTTP
 * without authorization) always may. Under the store's lock. */
static int delete_locked(mcp_call *call, store *st, const char *id) {
  if (st->ops->load(st) != 0)
    return store_error(call, st, "The notes could not be read");
  note *n = find(st, id);
  if (n == NULL) /* idempotent: deleting twice is not an error */
    return mcp_result_text(call, "No such note; nothing to delete.");
  if (!own_note(call, n)) {
    int rc = mcp_call_require_scopes(call, "notes:admin");
    if (rc != 0)
      return rc;
  }
  int ok = confirmed(call, n);
  if (ok != 1)
    return ok == 0 ? mcp_result_text(call, "Kept the note.") : ok;
  if (st->ops->remove(st, id) != 0)
    return store_error(call, st, "The deletion could not be saved");
  note_changed(st, id);
  return mcp_result_text(call, "Deleted.");
}

static int delete_note(mcp_call *call, void *user_data) {
  store *st = user_data;
  const char *id;
  mcp_call_arg_string(call, "id", &id);
  pthread_mutex_lock(&st->lock);
  int rc = delete_locked(call, st, id);
  pthread_mutex_unlock(&st->lock);
  return rc;
}

/* Adds text at the end of the note with id, on a line of its own. Under
 * the store's lock. */
static int append_locked(mcp_call *call, store *st, const char *id,
                         const char *text) {
  int rc = 0;
  const note *n = find_fresh(call, st, id, &rc);
  if (n == NULL)
    return rc;
  size_t old = strlen(n->text), add = strlen(text);
  char *joined = malloc(old + 1 + add + 1);
  if (joined == NULL)
    return MCP_ENOMEM;
  memcpy(joined, n->text, old);
  joined[old] = '\n';
  memcpy(joined + old + 1, text, add + 1);
  rc = st->ops->set_text(st, id, joined);
  free(joined);
  if (rc != 0)
    return store_error(call, st, "The note could not be saved");
  note_changed(st, id);
  return mcp_result_text(call, "Appended.");
}

/* manage_note: one tool that reads, appends or deletes, by its argument
 * action. Its static hints are the worst case of the three; the resolver
 * below says what each call does, and the guard holds the call to that. */
static int manage_note(mcp_call *call, void *user_data) {
  store *st = user_data;
  const char *action, *id, *text = NULL;
  mcp_call_arg_string(call, "action", &action); /* required, an enum */
  mcp_call_arg_string(call, "id", &id);
  bool append = strcmp(action, "append") == 0;
  if (append && mcp_call_arg_string(call, "text", &text) != 0)
    return mcp_result_error(call, "append needs a text: give \"text\".");
  pthread_mutex_lock(&st->lock);
  int rc = append                        ? append_locked(call, st, id, text)
           : strcmp(action, "read") == 0 ? get_locked(call, st, id)
                                         : delete_locked(call, st, id);
  pthread_mutex_unlock(&st->lock);
  return rc;
}

/* ---- export_notes: a long job, as a task --------------------------------
 * It copies every note (what list_notes shows, with texts and owners),
 * then walks the copy on a thread of its own, pausing delay_ms per note
 * and saying how far it got (the task's statusMessage, and progress for a
 * client that asked for it), and answers the export. The handler returns
 * MCP_DEFERRED, so the call becomes a task for a client that takes tasks
 * (2025-11-25's task param, 2026-07-28's tasks extension) and is an
 * ordinary slow call for any other. A cancellation (tasks/cancel,
 * notifications/cancelled, the server stopping) ends it at the next note.
 * main waits for the last of these threads after freeing the server. */

#define EXPORT_DELAY_MS 20 /* delay_ms's default: each note's pause */

typedef struct export_job {
  mcp_call *call;
  note *notes; /* copies, owned */
  size_t n;
  unsigned delay_ms;
} export_job;

static pthread_mutex_t exports_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t exports_idle = PTHREAD_COND_INITIALIZER;
static unsigned exports; /* export threads still running */

static void export_job_free(export_job *job) {
  for (size_t i = 0; i < job->n; i++)
    note_free(&job->notes[i]);
  free(job->notes);
  free(job);
}

/* The export of the notes job walked: {"notes":[{id,title,text,owner}],
 * "count":N} into the result. */
static int export_result(export_job *job) {
  cJSON *out = cJSON_CreateObject(),
        *arr = cJSON_AddArrayToObject(out, "notes");
  cJSON_AddNumberToObject(out, "count", (double)job->n);
  for (size_t i = 0; arr && i < job->n; i++) {
    const note *n = &job->notes[i];
    cJSON *o = cJSON_CreateObject();
    cJSON_AddItemToArray(arr, o);
    cJSON_AddStringToObject(o, "id", n->id);
    cJSON_AddStringToObject(o, "title", n->title);
    cJSON_AddStringToObject(o, "text", n->text);
    if (n->owner)
      cJSON_AddStringToObject(o, "owner", n->owner);
  }
  int rc = mcp_result_structured_cjson(job->call, out);
  cJSON_Delete(out);
  return rc;
}

static void *run_export(void *arg) {
  export_job *job = arg;
  struct timespec pause = {.tv_sec = job->delay_ms / 1000,
                           .tv_nsec = (job->delay_ms % 1000) * 1000000L};
  for (size_t i = 0; i < job->n && !mcp_call_cancelled(job->call); i++) {
    nanosleep(&pause, NULL);
    char said[96];
    snprintf(said, sizeof said, "exported %zu of %zu notes", i + 1, job->n);
    mcp_call_set_status(job->call, said); /* MCP_ESTATE when not a task */
    mcp_call_progress(job->call, (double)(i + 1), (double)job->n, said);
  }
  int rc = mcp_call_cancelled(job->call) ? MCP_ECANCELED : export_result(job);
  mcp_call_finish(job->call, rc);
  export_job_free(job);
  pthread_mutex_lock(&exports_lock);
  if (--exports == 0)
    pthread_cond_broadcast(&exports_idle);
  pthread_mutex_unlock(&exports_lock);
  return NULL;
}

/* A copy of the notes in memory into job, or -1 when memory ran out. */
static int copy_notes(const store *st, export_job *job) {
  job->notes = calloc(st->n ? st->n : 1, sizeof *job->notes);
  if (job->notes == NULL)
    return -1;
  for (; job->n < st->n; job->n++) {
    const note *from = &st->notes[job->n];
    bool ok = true;
    note *to = &job->notes[job->n];
    *to = (note){strdup(from->id), strdup(from->title), strdup(from->text),
                 dup_or_null(from->owner, &ok)};
    if (!to->id || !to->title || !to->text || !ok) {
      note_free(to);
      return -1;
    }
  }
  return 0;
}

/* Hands job to a thread of its own; returns MCP_DEFERRED, or MCP_ENOMEM
 * after freeing job when no thread could start. */
static int start_export(export_job *job) {
  pthread_mutex_lock(&exports_lock);
  exports++;
  pthread_mutex_unlock(&exports_lock);
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
  pthread_t thread;
  int err = pthread_create(&thread, &attr, run_export, job);
  pthread_attr_destroy(&attr);
  if (err == 0)
    return MCP_DEFERRED;
  export_job_free(job);
  pthread_mutex_lock(&exports_lock);
  exports--;
  pthread_mutex_unlock(&exports_lock);
  return MCP_ENOMEM;
}

static int export_notes(mcp_call *call, void *user_data) {
  store *st = user_data;
  int64_t delay = EXPORT_DELAY_MS;
  mcp_call_arg_int(call, "delay_ms", &delay); /* 0 to 1000: the schema's */
  export_job *job = calloc(1, sizeof *job);
  if (job == NULL)
    return MCP_ENOMEM;
  *job = (export_job){.call = call, .delay_ms = (unsigned)delay};
  pthread_mutex_lock(&st->lock);
  int rc = st->ops->load(st) != 0
               ? store_error(call, st, "The notes could not be read")
           : copy_notes(st, job) != 0 ? MCP_ENOMEM
                                      : MCP_DEFERRED;
  pthread_mutex_unlock(&st->lock);
  if (rc != MCP_DEFERRED) {
    export_job_free(job);
    return rc;
  }
  return start_export(job);
}

/* main: once the server is freed (its calls cancelled), the export threads
 * finish theirs; wait for the last. */
static void wait_for_exports(void) {
  pthread_mutex_lock(&exports_lock);
  while (exports > 0)
    pthread_cond_wait(&exports_idle, &exports_lock);
  pthread_mutex_unlock(&exports_lock);
}

/* manage_note's hints for one call, from its action alone: read changes
 * nothing; append writes without destroying, and twice appends twice;
 * delete destroys, and again changes nothing more. None reaches outside.
 * It reads no note and runs nothing: libmcp calls it for tools/resolve and
 * before each call, whose guard rules it decides. */
static int manage_resolve(const cJSON *arguments,
                          const mcp_principal *principal,
                          mcp_tool_annotations *hints, void *user_data) {
  (void)principal;
  (void)user_data;
  const char *action = cJSON_GetStringValue(
      cJSON_GetObjectItemCaseSensitive(arguments, "action"));
  if (action == NULL)
    return MCP_EINVAL; /* the schema requires it: not reached */
  hints->open_world = MCP_HINT_FALSE;
  if (strcmp(action, "read") == 0) {
    hints->read_only = MCP_HINT_TRUE;
    hints->destructive = MCP_HINT_UNSET; /* follow: false and true */
    hints->idempotent = MCP_HINT_UNSET;
  } else {
    bool del = strcmp(action, "delete") == 0;
    hints->read_only = MCP_HINT_FALSE;
    hints->destructive = del ? MCP_HINT_TRUE : MCP_HINT_FALSE;
    hints->idempotent = del ? MCP_HINT_TRUE : MCP_HINT_FALSE;
  }
  return 0;
}

static const char *const read_scope[] = {"notes:read", NULL};
static const char *const write_scope[] = {"notes:write", NULL};
/* notes:admin is no tool's own scope: delete_locked asks for it (a
 * step-up) when the note to delete is another subject's. The protected
 * resource metadata names it all the same (with every scope notes uses),
 * so that a client can ask for it before a call needs it. */
static const char *const all_scopes[] = {"notes:read", "notes:write",
                                         "notes:admin", NULL};

#define ID_SCHEMA                                                              \
  "{\"type\":\"object\",\"properties\":{\"id\":{\"type\":\"string\","          \
  "\"description\":\"The note's id, as list_notes shows it.\"}},"              \
  "\"required\":[\"id\"],\"additionalProperties\":false}"

static const mcp_tool tools[] = {
    {
        .name = "list_notes",
        .title = "List notes",
        .description = "Lists every note's id and title.",
        .output_schema =
            "{\"type\":\"object\",\"properties\":{\"notes\":{\"type\":"
            "\"array\",\"items\":{\"type\":\"object\",\"properties\":{\"id\":{"
            "\"type\":\"string\"},\"title\":{\"type\":\"string\"}},"
            "\"required\":[\"id\",\"title\"]}}},\"required\":[\"notes\"]}",
        .scopes = read_scope,
        .annotations = {.read_only = MCP_HINT_TRUE,
                        .open_world = MCP_HINT_FALSE},
        .handler = list_notes,
    },
    {
        .name = "get_note",
        .title = "Read a note",
        .description = "Returns the title and text of the note with this id.",
        .input_schema = ID_SCHEMA,
        .scopes = read_scope,
        .annotations = {.read_only = MCP_HINT_TRUE,
                        .open_world = MCP_HINT_FALSE},
        .handler = get_note,
    },
    {
        .name = "add_note",
        .title = "Add a note",
        .description = "Adds a note and returns its new id.",
        .input_schema =
            "{\"type\":\"object\",\"properties\":{\"title\":{\"type\":"
            "\"string\"},\"text\":{\"type\":\"string\"}},\"required\":["
            "\"title\",\"text\"],\"additionalProperties\":false}",
        .output_schema = "{\"type\":\"object\",\"properties\":{\"id\":{"
                         "\"type\":\"string\"}},\"required\":[\"id\"]}",
        .scopes = write_scope,
        /* Adds without touching other notes; calling twice adds twice. */
        .annotations = {.read_only = MCP_HINT_FALSE,
                        .destructive = MCP_HINT_FALSE,
                        .idempotent = MCP_HINT_FALSE,
                        .open_world = MCP_HINT_FALSE},
        .handler = add_note,
    },
    {
        .name = "delete_note",
        .title = "Delete a note",
        .description = "Deletes the note with this id. This cannot be undone. "
                       "Deleting a note another user added needs the scope "
                       "notes:admin.",
        .input_schema = ID_SCHEMA,
        /* Its own notes; another subject's need notes:admin, asked by
         * delete_locked once it knows whose the note is (a step-up). */
        .scopes = write_scope,
        /* Destroys data; deleting the same id again changes nothing more. */
        .annotations = {.read_only = MCP_HINT_FALSE,
                        .destructive = MCP_HINT_TRUE,
                        .idempotent = MCP_HINT_TRUE,
                        .open_world = MCP_HINT_FALSE},
        .handler = delete_note,
    },
    {
        .name = "manage_note",
        .title = "Read, append to or delete a note",
        .description =
            "By action: \"read\" returns the note's title and text; "
            "\"append\" adds text at its end, on a new line; \"delete\" "
            "deletes it for good (another user's note needs the scope "
            "notes:admin). tools/resolve tells which hints a call has.",
        .input_schema =
            "{\"type\":\"object\",\"properties\":{\"action\":{\"type\":"
            "\"string\",\"enum\":[\"read\",\"append\",\"delete\"]},"
            "\"id\":{\"type\":\"string\",\"description\":\"The note's id, "
            "as list_notes shows it.\"},\"text\":{\"type\":\"string\","
            "\"description\":\"For append: the text to add.\"}},"
            "\"required\":[\"action\",\"id\"],"
            "\"additionalProperties\":false}",
        .scopes = write_scope,
        /* The worst of its actions; manage_resolve narrows each call. */
        .annotations = {.read_only = MCP_HINT_FALSE,
                        .destructive = MCP_HINT_TRUE,
                        .idempotent = MCP_HINT_FALSE,
                        .open_world = MCP_HINT_FALSE},
        .handler = manage_note,
        .resolve = manage_resolve,
    },
    {
        .name = "export_notes",
        .title = "Export the notes",
        .description =
            "Returns every note (id, title, text and owner) in one export, "
            "reading them one at a time and reporting its progress; a "
            "client that takes tasks can run it as one, poll it and cancel "
            "it. delay_ms (0 to 1000, default 20) paces each note.",
        .input_schema =
            "{\"type\":\"object\",\"properties\":{\"delay_ms\":{\"type\":"
            "\"integer\",\"minimum\":0,\"maximum\":1000,\"description\":"
            "\"Milliseconds to pause per note (default 20).\"}},"
            "\"additionalProperties\":false}",
        .output_schema =
            "{\"type\":\"object\",\"properties\":{\"count\":{\"type\":"
            "\"integer\"},\"notes\":{\"type\":\"array\",\"items\":{\"type\":"
            "\"object\",\"properties\":{\"id\":{\"type\":\"string\"},"
            "\"title\":{\"type\":\"string\"},\"text\":{\"type\":\"string\"},"
            "\"owner\":{\"type\":\"string\"}},\"required\":[\"id\",\"title\","
            "\"text\"]}}},\"required\":[\"count\",\"notes\"]}",
        .scopes = read_scope,
        /* It reads the notes and changes nothing, reaching nothing outside. */
        .annotations = {.read_only = MCP_HINT_TRUE,
                        .open_world = MCP_HINT_FALSE},
        .flags = MCP_TOOL_TASK_OPTIONAL,
        .handler = export_notes,
    },
};

/* ---- main ---------------------------------------------------------------- */

/* --guard is offered when libmcp's guard was built (MCP_EXAMPLE_GUARD). */
#ifdef MCP_EXAMPLE_GUARD
#define GUARD_USAGE " [--guard]"
#else
#define GUARD_USAGE ""
#endif

static void usage(void) {
#ifdef MCP_NOTES_HTTP
  fprintf(stderr,
          "usage: notes [--stdio | --http ADDR:PORT|systemd [--tls-cert FILE "
          "--tls-key FILE] [--node-id ID]] [--scopes \"SCOPE ...\"] "
          "[--data FILE | --db FILE | --redis URL] [--state-key FILE] "
          "[--rate-limit N/SECONDS] [--node-lease MS]" GUARD_USAGE "\n"
          "       notes --http ADDR:PORT|systemd [--tls-cert FILE --tls-key "
          "FILE] [--node-id ID] --jwks FILE --issuer URL --audience URL "
          "[--data FILE | --db FILE | --redis URL] [--state-key FILE] "
          "[--rate-limit N/SECONDS] [--node-lease MS]" GUARD_USAGE "\n");
#else
  fprintf(stderr,
          "usage: notes [--stdio] [--scopes \"SCOPE ...\"] "
          "[--data FILE | --redis URL] [--state-key FILE] "
          "[--rate-limit N/SECONDS] [--node-lease MS]" GUARD_USAGE "\n");
#endif
}

#ifdef MCP_EXAMPLE_GUARD
/* Passes the library's log lines on to stderr as its default does, the
 * informational ones too: while the guard is enabled, so that its line on
 * what the kernel enforces is shown however good the news. */
static void log_everything(mcp_log_level level, const char *message,
                           void *user_data) {
  (void)level;
  (void)user_data;
  fprintf(stderr, "libmcp: %s\n", message);
}

/* --guard's audit: where each tool call's handler ran. */
static void audit_where(const mcp_audit_record *r, void *user_data) {
  (void)user_data;
  if (r->ran_under)
    fprintf(stderr, "notes: audit: %s ran under \"%s\"\n", r->tool,
            r->ran_under);
  else
    fprintf(stderr, "notes: audit: %s did not run under the guard\n", r->tool);
}

/* --guard: every tool runs on threads the kernel holds to its hints, as far
 * as this kernel can (best effort: what it cannot is logged), manage_note
 * to the hints its resolver gives each call. add_note and manage_note's
 * append save by renaming a temporary file over data, which an additive
 * call may do only where writable paths say: data's folder is writable
 * for those two tools only (tool_paths), so list_notes and get_note, and
 * manage_note's reads (a call resolved read-only gets no tool's own
 * paths), can write nowhere. Returns 0, or 1 after saying why not. */
static int guard(mcp_server *srv, const char *data) {
  char *folder = NULL;
  if (data) {
    char *copy = strdup(data);
    folder = copy ? realpath(dirname(copy), NULL) : NULL;
    free(copy);
    if (folder == NULL) {
      fprintf(stderr, "notes: --guard: the folder of %s: %s\n", data,
              strerror(errno));
      return 1;
    }
  }
  const char *writable[] = {folder, NULL};
  const mcp_guard_tool_paths own[] = {
      {"add_note", writable}, {"manage_note", writable}, {NULL, NULL}};
  const mcp_guard_options opts = {.flags = MCP_GUARD_BEST_EFFORT,
                                  .tool_paths = folder ? own : NULL};
  mcp_server_set_log(srv, log_everything, NULL); /* its line, shown */
  int rc = mcp_guard_enable(srv, &opts);
  mcp_server_set_log(srv, NULL, NULL); /* the default again: warnings */
  if (rc != 0)
    fprintf(stderr, "notes: %s\n", mcp_server_errmsg(srv));
  else
    mcp_server_set_audit(srv, audit_where, NULL);
  free(folder);
  return rc == 0 ? 0 : 1;
}
#endif

/* --state-key FILE: the secret (at least 32 bytes) every process of a
 * deployment shares, so that any of them accepts a 2026-07-28 retry whose
 * requestState another signed. */
static int use_state_key(mcp_server *srv, const char *path) {
  unsigned char key[4096];
  FILE *f = fopen(path, "rb");
  size_t n = f ? fread(key, 1, sizeof key, f) : 0;
  if (f)
    fclose(f);
  int rc = n >= 32 ? mcp_server_set_state_key(srv, key, n) : MCP_EINVAL;
  memset(key, 0, sizeof key);
  if (rc != 0)
    fprintf(stderr, "notes: --state-key %s: %s\n", path,
            f == NULL ? "cannot read it" : "it needs 32 bytes or more");
  return rc;
}

/* --rate-limit N/SECONDS: two whole numbers from 1 on (at most UINT_MAX)
 * into *calls and *per. Returns 0, or -1 when s is anything else. */
static int parse_rate(const char *s, unsigned *calls, unsigned *per) {
  unsigned long v[2];
  const char *p = s;
  for (int k = 0; k < 2; k++) {
    char *end;
    if (*p < '0' || *p > '9')
      return -1; /* no sign, no space, no empty number */
    errno = 0;
    v[k] = strtoul(p, &end, 10);
    if (errno != 0 || v[k] == 0 || v[k] > UINT_MAX ||
        *end != (k == 0 ? '/' : '\0'))
      return -1;
    p = end + 1;
  }
  *calls = (unsigned)v[0];
  *per = (unsigned)v[1];
  return 0;
}

/* --node-lease MS: a whole number from 300 to 3600000 (what
 * mcp_server_set_node_lease takes) into *ms. Returns 0, or -1 when s is
 * anything else. */
static int parse_lease(const char *s, unsigned *ms) {
  char *end;
  if (*s < '0' || *s > '9')
    return -1; /* no sign, no space, no empty number */
  errno = 0;
  unsigned long v = strtoul(s, &end, 10);
  if (errno != 0 || *end != '\0' || v < 300 || v > 3600000)
    return -1;
  *ms = (unsigned)v;
  return 0;
}

/* Splits "a b c" into a NULL-terminated list of words, which are in a copy
 * (*words; the caller frees both): argv stays as it was given, so that ps
 * shows the command line that started this. */
static const char **split_scopes(const char *s, char **words) {
  size_t n = 0;
  *words = strdup(s);
  const char **list = calloc(strlen(s) / 2 + 2, sizeof *list);
  if (*words == NULL || list == NULL) {
    free(*words);
    free(list);
    return NULL;
  }
  for (char *rest = NULL, *tok = strtok_r(*words, " \t", &rest); tok;
       tok = strtok_r(NULL, " \t", &rest))
    list[n++] = tok;
  return list;
}

/* ---- the note resource -----------------------------------------------------
 * Each note is the resource note:///{id} too, so a client can read it and
 * subscribe to it (resources/subscribe, or a 2026-07-28
 * subscriptions/listen stream): an append or a delete tells its
 * subscribers (note_changed), on every notes process sharing the store.
 * Adding or deleting a note sends no notifications/resources/list_changed:
 * the notes are instances of one template, which resources/list does not
 * list and resources/templates/list lists unchanged, and list_changed is
 * about those lists (mcp_server_add_resource sends it for a registration).
 * Its contents are application/json, {"id", "title", "text"}: the title and
 * the text may each hold line breaks, so plain text could not keep them
 * apart, and a client reads both back as they were saved. */
static int read_note(mcp_call *call, void *user_data) {
  store *st = user_data;
  const char *id;
  if (mcp_call_arg_string(call, "id", &id) != 0)
    return MCP_ENOENT;
  pthread_mutex_lock(&st->lock);
  if (st->ops->load(st) != 0) {
    int rc = store_error(call, st, "The notes could not be read");
    pthread_mutex_unlock(&st->lock);
    return rc;
  }
  const note *n = find(st, id);
  cJSON *out = n ? cJSON_CreateObject() : NULL;
  if (out) {
    cJSON_AddStringToObject(out, "id", n->id);
    cJSON_AddStringToObject(out, "title", n->title);
    cJSON_AddStringToObject(out, "text", n->text);
  }
  pthread_mutex_unlock(&st->lock);
  if (n == NULL)
    return MCP_ENOENT; /* the protocol's not-found error */
  char *json = out ? cJSON_PrintUnformatted(out) : NULL;
  cJSON_Delete(out);
  int rc = json ? mcp_result_text(call, json) : MCP_ENOMEM;
  cJSON_free(json);
  return rc;
}

static const mcp_resource note_resource = {
    .uri_template = "note:///{id}",
    .name = "note",
    .title = "A note",
    .description = "The note with this id: {\"id\", \"title\", \"text\"}. "
                   "Subscribe to hear when it changes or is deleted.",
    .mime_type = "application/json",
    .scopes = read_scope,
    .handler = read_note,
};

/* ---- the skill ------------------------------------------------------------
 * How an agent should use these tools, written down where it finds them:
 * the skill skill://notes-workflow/SKILL.md (skills/list, skills/get,
 * resources/read), readable by whoever may list the notes. The hints say
 * what each tool does; the skill says in which order to use them and where
 * to stop and ask. */
static const char workflow_md[] =
    "---\n"
    "name: notes-workflow\n"
    "description: \"How to use the notes tools safely: look before you "
    "change anything, and ask the user before you delete a note.\"\n"
    "metadata:\n"
    "  server: notes\n"
    "---\n"
    "# Working with notes\n"
    "\n"
    "1. Call `list_notes` first. It shows every note's id and title; never\n"
    "   guess an id.\n"
    "2. Read a note with `get_note` before you change or delete it, so that\n"
    "   you act on the note you mean.\n"
    "3. `add_note` takes a title and a text and answers with the new note's\n"
    "   id.\n"
    "4. `delete_note` cannot be undone. Ask the user before you call it,\n"
    "   naming the note by its title. The server asks as well (an\n"
    "   elicitation, or an `input_required` result): pass on the user's\n"
    "   answer, never one of your own.\n"
    "5. `manage_note` reads (`action: \"read\"`), appends to\n"
    "   (`\"append\"`, with `text`) or deletes (`\"delete\"`) a note.\n"
    "   `tools/resolve` tells what one call will do; a delete through it\n"
    "   is a delete: ask first, as in step 4.\n"
    "6. Each tool needs a scope: `notes:read` to list and read,\n"
    "   `notes:write` to add, append and delete your own notes. Deleting a\n"
    "   note someone else added needs `notes:admin` too. A \"Forbidden\"\n"
    "   answer means the user's token lacks it: say so, do not retry.\n";
static const char *const workflow_scopes[] = {"notes:read", NULL};
static const mcp_skill_file workflow_files[] = {
    {.path = "SKILL.md", .data = workflow_md, .size = sizeof workflow_md - 1},
    {.path = NULL}};
static const mcp_skill workflow = {.path = "notes-workflow",
                                   .files = workflow_files,
                                   .scopes = workflow_scopes};

/* The store's backend, as --db and --redis say (--data or memory when
 * neither), opened. Returns 0, or -1 after saying why. */
static int open_store(store *st, const char *db, const char *redis) {
  st->ops = &memory_backend;
#ifdef MCP_NOTES_SQLITE
  if (db) {
    st->ops = &sqlite_backend;
    return db_open(st, db);
  }
#endif
#ifdef MCP_NOTES_REDIS
  if (redis) {
    /* A connection Redis closed must fail a write, not end notes. */
    signal(SIGPIPE, SIG_IGN);
    st->ops = &redis_backend;
    return redis_open(st, redis);
  }
#endif
  (void)db;
  (void)redis;
  if (st->path && load(st) != 0) {
    fprintf(stderr, "notes: cannot read %s\n", st->path);
    return -1;
  }
  return 0;
}

static void close_store(store *st) {
  for (size_t i = 0; i < st->n; i++)
    note_free(&st->notes[i]);
  free(st->notes);
#ifdef MCP_NOTES_SQLITE
  sqlite3_close(st->db);
#endif
#ifdef MCP_NOTES_REDIS
  if (st->redis.c)
    redisFree(st->redis.c);
  free(st->redis.buf);
#endif
  pthread_mutex_destroy(&st->lock);
}

/* --redis URL: libmcp's own shared state (its rate limits, and the
 * resource and list changes every server sharing the store hears) in the
 * same Redis, through libmcp's store (mcp/redis.h); *shared is freed
 * after the server. Nothing without --redis. Returns 0, or -1 after saying
 * why. */
static int share_state(mcp_server *srv, const char *redis, mcp_store **shared) {
#ifdef MCP_NOTES_REDIS
  char err[256];
  if (redis && mcp_redis_store_new(redis, shared, err, sizeof err) != 0) {
    fprintf(stderr, "notes: --redis: %s\n", err);
    return -1;
  }
  if (redis)
    mcp_server_set_store(srv, *shared);
#endif
  (void)srv;
  (void)redis;
  (void)shared;
  return 0;
}

int main(int argc, char **argv) {
  store st = {.next_id = 1, .lock = PTHREAD_MUTEX_INITIALIZER};
  const char *scopes = NULL;             /* --scopes "SCOPE ..." */
  const char *state_key = NULL;          /* --state-key FILE */
  const char *db = NULL;                 /* --db FILE */
  const char *redis = NULL;              /* --redis URL */
  unsigned rate_calls = 0, rate_per = 0; /* --rate-limit N/SECONDS */
  unsigned node_lease = 0;               /* --node-lease MS (0: default) */
#ifdef MCP_EXAMPLE_GUARD
  bool guarded = false;
#endif
#ifdef MCP_NOTES_HTTP
  /* --http and the flags that go with it (mcp/http.h): libmcp reads them,
   * without writing to argv, and serves as they say. */
  mcp_http_serve_options serve = {.program = "notes",
                                  .scopes_supported = all_scopes};
#endif
  for (int i = 1; i < argc; i++) {
#ifdef MCP_NOTES_HTTP
    int took = mcp_http_serve_arg(&serve, argc, argv, &i);
    if (took < 0) {
      usage();
      return 2;
    }
    if (took)
      continue;
#endif
    if (strcmp(argv[i], "--stdio") == 0) {
#ifdef MCP_NOTES_HTTP
      serve.listen = NULL;
#endif
    } else if (strcmp(argv[i], "--scopes") == 0 && i + 1 < argc) {
      scopes = argv[++i];
    } else if (strcmp(argv[i], "--data") == 0 && i + 1 < argc) {
      st.path = argv[++i];
    } else if (strcmp(argv[i], "--state-key") == 0 && i + 1 < argc) {
      state_key = argv[++i];
    } else if (strcmp(argv[i], "--rate-limit") == 0 && i + 1 < argc) {
      if (parse_rate(argv[++i], &rate_calls, &rate_per) != 0) {
        fprintf(stderr, "notes: --rate-limit wants N/SECONDS, two whole "
                        "numbers from 1 on (e.g. 60/60)\n");
        usage();
        return 2;
      }
    } else if (strcmp(argv[i], "--node-lease") == 0 && i + 1 < argc) {
      if (parse_lease(argv[++i], &node_lease) != 0) {
        fprintf(stderr, "notes: --node-lease wants MS, a whole number of "
                        "milliseconds from 300 to 3600000\n");
        usage();
        return 2;
      }
    } else if (strcmp(argv[i], "--db") == 0 && i + 1 < argc) {
#ifdef MCP_NOTES_SQLITE
      db = argv[++i];
#else
      fprintf(stderr, "notes: --db: built without SQLite (libsqlite3-dev)\n");
      return 2;
#endif
    } else if (strcmp(argv[i], "--redis") == 0 && i + 1 < argc) {
#ifdef MCP_NOTES_REDIS
      redis = argv[++i];
#else
      fprintf(stderr, "notes: --redis: this build lacks Redis (libmcp's "
                      "mcp::redis, on libhiredis-dev)\n");
      return 2;
#endif
    } else if (strcmp(argv[i], "--guard") == 0) {
#ifdef MCP_EXAMPLE_GUARD
      guarded = true;
#else
      fprintf(stderr, "notes: --guard: libmcp's guard was not built here "
                      "(it needs Linux and CMake's MCP_GUARD)\n");
      return 2;
#endif
    } else {
      usage();
      return 2;
    }
  }
#ifdef MCP_NOTES_HTTP
  const char *http = serve.listen; /* NULL: stdio */
  if (mcp_http_serve_check(&serve) != 0) {
    usage();
    return 2;
  }
  /* With a token verifier, the token's scopes decide. */
  if (serve.jwks_file && scopes) {
    fprintf(stderr, "notes: --jwks, --issuer and --audience go together, "
                    "with --http and without --scopes\n");
    usage();
    return 2;
  }
#else
  const char *http = NULL;
#endif
  if ((db != NULL) + (st.path != NULL) + (redis != NULL) > 1) {
    fprintf(stderr, "notes: --data, --db and --redis are three stores: give "
                    "one\n");
    usage();
    return 2;
  }
#ifdef MCP_EXAMPLE_GUARD
  /* The guard holds closed-world tools off the network (the kernel refuses
   * them an inet socket), and the note tools reconnect to Redis from their
   * handlers; a unix socket is no network. */
  if (guarded && redis && strncmp(redis, "redis://", 8) == 0) {
    fprintf(stderr, "notes: --guard keeps the note tools (closed world) off "
                    "the network: with it, give --redis a unix:// socket\n");
    return 2;
  }
#endif
  if (open_store(&st, db, redis) != 0) {
    close_store(&st); /* what it opened before it failed */
    return 1;
  }

  mcp_server *srv;
  const mcp_server_info info = {
      .name = "notes",
      .version = mcp_version(),
      .title = "Notes",
      .instructions =
          "A note store. list_notes shows what exists; get_note reads one; "
          "add_note and delete_note change the store; manage_note reads, "
          "appends to or deletes one note, and tools/resolve tells what a "
          "call of it does; export_notes returns every note, as a task "
          "for a client that takes tasks. Anyone who may write deletes "
          "their own notes; "
          "another user's need notes:admin. "
          "skill://notes-workflow/SKILL.md says in which order to use the "
          "tools and when to ask the user.",
  };
  mcp_store *shared = NULL; /* --redis: libmcp's state, in Redis too */
  /* The lease before the store: it applies from mcp_server_set_store. */
  if (mcp_server_new(&info, &srv) != 0 ||
      (node_lease && mcp_server_set_node_lease(srv, node_lease) != 0) ||
      share_state(srv, redis, &shared) != 0) {
    mcp_server_free(srv);
    return 1;
  }
  for (size_t i = 0; i < sizeof tools / sizeof tools[0]; i++) {
    if (mcp_server_add_tool(srv, &tools[i], &st) != 0) {
      fprintf(stderr, "notes: %s\n", mcp_server_errmsg(srv));
      mcp_server_free(srv);
      return 1;
    }
  }
  st.srv = srv; /* note_changed tells its subscribers */
  if (mcp_server_add_resource(srv, &note_resource, &st) != 0 ||
      mcp_server_add_skill(srv, &workflow) != 0) {
    fprintf(stderr, "notes: %s\n", mcp_server_errmsg(srv));
    mcp_server_free(srv);
    return 1;
  }

  /* After the store (share_state), so the limit counts where it says. */
  if (rate_calls && mcp_server_set_rate_limit(srv, rate_calls, rate_per) != 0) {
    fprintf(stderr, "notes: --rate-limit: %s\n", mcp_server_errmsg(srv));
    mcp_server_free(srv);
    return 1;
  }
  if (state_key && use_state_key(srv, state_key) != 0) {
    mcp_server_free(srv);
    return 1;
  }
#ifdef MCP_EXAMPLE_GUARD
  if (guarded && guard(srv, db ? db : st.path) != 0) {
    mcp_server_free(srv);
    return 1;
  }
#endif

  const char **list = NULL;
  char *words = NULL;
  mcp_principal who = {.subject = http ? "http" : "stdio"};
  if (scopes) {
    if ((list = split_scopes(scopes, &words)) == NULL)
      return 1;
    who.scopes = list;
  }
  int rc;
#ifdef MCP_NOTES_HTTP
  if (http) {
    /* Until SIGINT or SIGTERM, saying "listening on URL" on stderr; SIGHUP
     * re-reads the JWKS file and the certificate. */
    serve.principal = scopes ? &who : NULL;
    rc = mcp_http_serve_until_signal(srv, &serve);
  } else
#endif
  {
    /* SIGTERM or Ctrl-C ends serving cleanly, like the end of input. */
    mcp_stdio_options opts = {.principal = scopes ? &who : NULL,
                              .stop_on_signal = true};
    rc = mcp_serve_stdio(srv, &opts);
  }

  mcp_server_free(srv);   /* first the server, which cancels its calls, */
  wait_for_exports();     /* then the exports it cancelled end, */
  mcp_store_free(shared); /* then the store it used */
  free(list);
  free(words);
  close_store(&st);
  return rc == 0 ? 0 : 1;
}
