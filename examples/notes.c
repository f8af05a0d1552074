/* notes: the teaching server. A small note store whose five tools show each
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
 *   notes [--stdio | --http ADDR:PORT|systemd [--tls-cert FILE --tls-key FILE]
 *         [--node-id ID]] [--scopes "notes:read notes:write"]
 *         [--data FILE | --db FILE] [--state-key FILE] [--guard]
 *   notes --http ADDR:PORT|systemd [--tls-cert FILE --tls-key FILE]
 *         [--node-id ID] --jwks FILE --issuer URL --audience URL
 *         [--data FILE | --db FILE] [--state-key FILE] [--guard]
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
 * (examples/deploy/cluster.sh runs them so behind nginx).
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
 * paths are for its writing calls. What
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
#include <mcp/mcp.h>
#ifdef MCP_NOTES_HTTP
#include <mcp/http.h>
#endif
#ifdef MCP_EXAMPLE_GUARD
#include <mcp/guard.h>
#endif
#include <pthread.h>
#ifdef MCP_NOTES_SQLITE
#include <sqlite3.h>
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct note {
  char *id, *title, *text;
  char *owner; /* the subject that added it; NULL: nobody in particular */
} note;

typedef struct store {
  note *notes;
  size_t n;
  unsigned long next_id;
  const char *path;     /* NULL: in memory only */
  pthread_mutex_t lock; /* held by each handler while it runs */
#ifdef MCP_NOTES_SQLITE
  sqlite3 *db; /* --db: the notes live in SQLite, shared by processes */
#endif
} store;

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
#endif

/* Brings the notes in memory up to date (with --db, from the database).
 * Returns 0, or -1 when they could not be read. */
static int refresh(store *st) {
#ifdef MCP_NOTES_SQLITE
  if (st->db)
    return db_load(st);
#endif
  (void)st;
  return 0;
}

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

/* ---- tools ----------------------------------------------------------------
 * Each handler holds the store's lock while it runs: under --guard the
 * handlers run on several threads (see the top of this file). */

static int list_notes(mcp_call *call, void *user_data) {
  store *st = user_data;
  pthread_mutex_lock(&st->lock);
  if (refresh(st) != 0) {
    pthread_mutex_unlock(&st->lock);
    return mcp_result_error(call, "The notes could not be read; try again.");
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

/* The note with id into the result: its title, then its text. Under the
 * store's lock. */
static int get_locked(mcp_call *call, store *st, const char *id) {
  if (refresh(st) != 0)
    return mcp_result_error(call, "The notes could not be read; try again.");
  const note *n = find(st, id);
  if (n == NULL) {
    char msg[300];
    snprintf(msg, sizeof msg,
             "No note has the id \"%.200s\". Call list_notes to see the ids.",
             id);
    return mcp_result_error(call, msg);
  }
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

static int add_locked(mcp_call *call, store *st) {
  const char *title, *text;
  mcp_call_arg_string(call, "title", &title);
  mcp_call_arg_string(call, "text", &text);
  /* The note is its adder's: the caller's subject, if it has one. */
  const char *owner = mcp_call_principal(call)->subject;
  char id[32];
#ifdef MCP_NOTES_SQLITE
  if (st->db) {
    if (db_add(st, title, text, owner, id, sizeof id) != 0)
      return mcp_result_error(call, "The note could not be saved; try again.");
    char json[64];
    snprintf(json, sizeof json, "{\"id\":\"%s\"}", id);
    return mcp_result_structured(call, json);
  }
#endif
  snprintf(id, sizeof id, "n%lu", st->next_id);
  note *p = realloc(st->notes, (st->n + 1) * sizeof *p);
  if (p == NULL)
    return MCP_ENOMEM;
  st->notes = p;
  bool ok = true;
  note n = {strdup(id), strdup(title), strdup(text), dup_or_null(owner, &ok)};
  if (!n.id || !n.title || !n.text || !ok) {
    note_free(&n);
    return MCP_ENOMEM;
  }
  st->notes[st->n++] = n;
  st->next_id++;
  if (save(st) != 0) {
    /* Not saved means not added: undo, and say so. */
    note_free(&st->notes[--st->n]);
    st->next_id--;
    return mcp_result_error(call, "The note could not be saved; try again.");
  }
  char json[64];
  snprintf(json, sizeof json, "{\"id\":\"%s\"}", id);
  return mcp_result_structured(call, json);
}

static int add_note(mcp_call *call, void *user_data) {
  store *st = user_data;
  pthread_mutex_lock(&st->lock);
  int rc = add_locked(call, st);
  pthread_mutex_unlock(&st->lock);
  return rc;
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

/* Deletes the note with id, for delete_note and manage_note alike. The
 * tool's scope (notes:write) lets a caller delete its own notes; another
 * subject's needs notes:admin too, a step-up asked before anything is
 * done, whose refusal ends the call as a scope refusal does (its code is
 * returned). A caller holding every scope (stdio without --scopes, HTTP
 * without authorization) always may. Under the store's lock. */
static int delete_locked(mcp_call *call, store *st, const char *id) {
  if (refresh(st) != 0)
    return mcp_result_error(call, "The notes could not be read; try again.");
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
#ifdef MCP_NOTES_SQLITE
  if (st->db)
    return db_delete(st, id) == 0
               ? mcp_result_text(call, "Deleted.")
               : mcp_result_error(
                     call, "The deletion could not be saved; try again.");
#endif
  note gone = *n;
  size_t i = (size_t)(n - st->notes);
  memmove(n, n + 1, (st->n - i - 1) * sizeof *n);
  st->n--;
  if (save(st) != 0) {
    memmove(&st->notes[i + 1], &st->notes[i], (st->n - i) * sizeof *n);
    st->notes[i] = gone;
    st->n++;
    return mcp_result_error(call,
                            "The deletion could not be saved; try again.");
  }
  note_free(&gone);
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
  if (refresh(st) != 0)
    return mcp_result_error(call, "The notes could not be read; try again.");
  note *n = find(st, id);
  if (n == NULL) {
    char msg[300];
    snprintf(msg, sizeof msg,
             "No note has the id \"%.200s\". Call list_notes to see the ids.",
             id);
    return mcp_result_error(call, msg);
  }
  size_t old = strlen(n->text), add = strlen(text);
  char *joined = malloc(old + 1 + add + 1);
  if (joined == NULL)
    return MCP_ENOMEM;
  memcpy(joined, n->text, old);
  joined[old] = '\n';
  memcpy(joined + old + 1, text, add + 1);
#ifdef MCP_NOTES_SQLITE
  if (st->db) {
    int rc = db_set_text(st, id, joined);
    free(joined);
    return rc == 0 ? mcp_result_text(call, "Appended.")
                   : mcp_result_error(
                         call, "The note could not be saved; try again.");
  }
#endif
  char *was = n->text;
  n->text = joined;
  if (save(st) != 0) { /* not saved means not appended */
    n->text = was;
    free(joined);
    return mcp_result_error(call, "The note could not be saved; try again.");
  }
  free(was);
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
          "[--data FILE | --db FILE] [--state-key FILE]" GUARD_USAGE "\n"
          "       notes --http ADDR:PORT|systemd [--tls-cert FILE --tls-key "
          "FILE] [--node-id ID] --jwks FILE --issuer URL --audience URL "
          "[--data FILE | --db FILE] [--state-key FILE]" GUARD_USAGE "\n");
#else
  fprintf(stderr, "usage: notes [--stdio] [--scopes \"SCOPE ...\"] "
                  "[--data FILE] [--state-key FILE]" GUARD_USAGE "\n");
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

int main(int argc, char **argv) {
  store st = {.next_id = 1, .lock = PTHREAD_MUTEX_INITIALIZER};
  const char *scopes = NULL;    /* --scopes "SCOPE ..." */
  const char *state_key = NULL; /* --state-key FILE */
  const char *db = NULL;        /* --db FILE */
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
    } else if (strcmp(argv[i], "--db") == 0 && i + 1 < argc) {
#ifdef MCP_NOTES_SQLITE
      db = argv[++i];
#else
      fprintf(stderr, "notes: --db: built without SQLite (libsqlite3-dev)\n");
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
  if (db && st.path) {
    fprintf(stderr, "notes: --db and --data are two stores: give one\n");
    return 2;
  }
#ifdef MCP_NOTES_SQLITE
  if (db && db_open(&st, db) != 0)
    return 1;
#endif
  if (st.path && load(&st) != 0) {
    fprintf(stderr, "notes: cannot read %s\n", st.path);
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
          "call of it does. Anyone who may write deletes their own notes; "
          "another user's need notes:admin. "
          "skill://notes-workflow/SKILL.md says in which order to use the "
          "tools and when to ask the user.",
  };
  if (mcp_server_new(&info, &srv) != 0)
    return 1;
  for (size_t i = 0; i < sizeof tools / sizeof tools[0]; i++) {
    if (mcp_server_add_tool(srv, &tools[i], &st) != 0) {
      fprintf(stderr, "notes: %s\n", mcp_server_errmsg(srv));
      mcp_server_free(srv);
      return 1;
    }
  }
  if (mcp_server_add_skill(srv, &workflow) != 0) {
    fprintf(stderr, "notes: %s\n", mcp_server_errmsg(srv));
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

  mcp_server_free(srv);
  free(list);
  free(words);
  for (size_t i = 0; i < st.n; i++)
    note_free(&st.notes[i]);
  free(st.notes);
#ifdef MCP_NOTES_SQLITE
  sqlite3_close(st.db);
#endif
  pthread_mutex_destroy(&st.lock);
  return rc == 0 ? 0 : 1;
}
