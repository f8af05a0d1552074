/* behave.c: the behaviour check's judgement (DESIGN §8: say which evidence
 * is certain and which only possible; do not cry wolf on the safe-write
 * idiom of a temporary file renamed over the old one when the old bytes
 * are kept). */
#define _POSIX_C_SOURCE 200809L
#include "behave.h"

#include "digest.h"
#include "hints.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

static int is(const mcpc_effect *e, const char *op) {
  return strcmp(e->op, op) == 0;
}

static int file_op(const mcpc_effect *e) {
  static const char *const ops[] = {
      "write", "create", "remove", "rename",     "link",   "truncate", "chmod",
      "chown", "times",  "xattr",  "attr-ioctl", "shrink", NULL};
  for (size_t i = 0; ops[i]; i++)
    if (is(e, ops[i]))
      return 1;
  return 0;
}

static int net_op(const mcpc_effect *e) {
  return is(e, "socket") || is(e, "connect") || is(e, "bind") ||
         is(e, "listen") || is(e, "send");
}

/* Evidence: up to three effects, then how many more. */
typedef struct evidence {
  char text[900];
  size_t shown, more;
} evidence;

static void cite(evidence *ev, const mcpc_effect *e, const char *why) {
  size_t len = strlen(ev->text);
  if (ev->shown == 3) {
    ev->more++;
    return;
  }
  snprintf(ev->text + len, sizeof ev->text - len, "%s%s %s%s%s (%s)%s%s",
           ev->shown ? "; " : "", e->op, e->target, e->target2[0] ? " -> " : "",
           e->target2, e->syscall, why ? ", " : "", why ? why : "");
  ev->shown++;
}

/* A claim and its fix, as the static hints make it and as the hints
 * tools/resolve gave the call make it. */
typedef struct claim {
  const char *hint, *grade, *text, *fix, *resolved_text, *resolved_fix;
} claim;

static int emit(mcpc_report *r, const char *tool, int resolved,
                const char *what, const claim *c, evidence *ev) {
  char text[1200];
  size_t len;
  if (ev->shown == 0)
    return 0;
  snprintf(text, sizeof text, "%s: %s: %s", what,
           resolved ? c->resolved_text : c->text, ev->text);
  len = strlen(text);
  if (ev->more)
    snprintf(text + len, sizeof text - len, "; and %zu more", ev->more);
  if (mcpc_report_add(r, MCPC_BEHAVIOUR, tool, c->hint, c->grade, text,
                      resolved ? c->resolved_fix : c->fix) < 0)
    return -1;
  r->findings[r->n_findings - 1].resolved = resolved;
  return 1;
}

/* ---- is what was there still there? ------------------------------------ */

int mcpc_kept(const mcpc_effect *before, const char *path) {
  unsigned char now[32];
  long long size;
  if (!before->existed)
    return 1;
  if (!before->digested)
    return 0;
  if (before->size == 0)
    return 1;
  return mcpc_digest_file(path, before->size, now, &size) == 0 &&
         memcmp(now, before->digest, 32) == 0;
}

/* The first effect of the call on path (the state before the call). */
static const mcpc_effect *first_on(const mcpc_effect *e, size_t n,
                                   const char *path) {
  for (size_t i = 0; i < n; i++) {
    const char *t =
        (is(&e[i], "rename") || is(&e[i], "link")) ? e[i].target2 : e[i].target;
    if (strcmp(t, path) == 0)
      return &e[i];
  }
  return NULL;
}

/* A non-destructive tool: what did it do to what existed? */
static void destroyed(const mcpc_effect *e, size_t n, evidence *certain,
                      evidence *possible) {
  for (size_t i = 0; i < n; i++) {
    const mcpc_effect *x = &e[i], *first;
    const char *path;
    if (is(x, "remove")) {
      if (x->existed)
        cite(certain, x, "it existed before the call");
      continue;
    }
    if (!(is(x, "rename") || is(x, "truncate") || is(x, "write") ||
          is(x, "create")))
      continue;
    path = is(x, "rename") ? x->target2 : x->target;
    first = first_on(e, n, path);
    if (first != x || !first->existed || mcpc_kept(first, path))
      continue;
    if (is(x, "write") && !(x->flags & O_TRUNC))
      cite(certain, x, "bytes that existed before the call changed");
    else
      cite(possible, x,
           "the file was replaced and its earlier bytes are not all kept "
           "(the new content may still hold the old data in its own "
           "format: only you can judge)");
  }
}

static const claim wrote_claim = {
    "readOnlyHint",
    "certain",
    "a read-only tool changed files",
    "set readOnlyHint false (and state destructiveHint and idempotentHint), "
    "or stop the tool from writing",
    "a call resolved read-only for these arguments (tools/resolve answered "
    "readOnlyHint true) changed files",
    "make the resolver answer readOnlyHint false for these arguments, or stop "
    "the call from writing"};
static const claim sure_claim = {
    "destructiveHint",
    "certain",
    "a tool that is not destructive removed or overwrote what existed",
    "set destructiveHint true, or make the tool only add",
    "a call resolved not destructive for these arguments (tools/resolve "
    "answered destructiveHint false) removed or overwrote what existed",
    "make the resolver answer destructiveHint true for these arguments, or "
    "make the call only add"};
static const claim maybe_claim = {
    "destructiveHint",
    "possible",
    "a tool that is not destructive replaced a file",
    "if the earlier data is not all in the new file, set destructiveHint true",
    "a call resolved not destructive for these arguments (tools/resolve "
    "answered destructiveHint false) replaced a file",
    "if the earlier data is not all in the new file, make the resolver answer "
    "destructiveHint true for these arguments"};
static const claim net_claim = {
    "openWorldHint",
    "certain",
    "a closed-world tool used the network",
    "set openWorldHint true, or keep the tool off the network",
    "a call resolved closed-world for these arguments (tools/resolve answered "
    "openWorldHint false) used the network",
    "make the resolver answer openWorldHint true for these arguments, or keep "
    "the call off the network"};
static const claim again_claim = {
    "idempotentHint",
    "certain",
    "the second identical call changed files again",
    "set idempotentHint false, or make a repeated call leave the same state",
    "the second identical call, resolved idempotent for these arguments "
    "(tools/resolve answered idempotentHint true), changed files again",
    "make the resolver answer idempotentHint false for these arguments, or "
    "make a repeated call leave the same state"};

int mcpc_behaviour_judge(mcpc_report *r, const char *tool, const int hints[4],
                         int resolved, const char *what, const mcpc_effect *e,
                         size_t n) {
  evidence wrote = {0}, sure = {0}, maybe = {0}, net = {0};
  int added = 0, rc;
  for (size_t i = 0; i < n; i++) {
    if (hints[MCPC_READ_ONLY] && file_op(&e[i]))
      cite(&wrote, &e[i], NULL);
    if (!hints[MCPC_OPEN_WORLD] && net_op(&e[i]))
      cite(&net, &e[i], NULL);
  }
  if (!hints[MCPC_READ_ONLY] && !hints[MCPC_DESTRUCTIVE])
    destroyed(e, n, &sure, &maybe);
  if ((rc = emit(r, tool, resolved, what, &wrote_claim, &wrote)) < 0)
    return -1;
  added += rc;
  if ((rc = emit(r, tool, resolved, what, &sure_claim, &sure)) < 0)
    return -1;
  added += rc;
  if (sure.shown == 0 &&
      (rc = emit(r, tool, resolved, what, &maybe_claim, &maybe)) < 0)
    return -1;
  added += sure.shown == 0 ? rc : 0;
  if ((rc = emit(r, tool, resolved, what, &net_claim, &net)) < 0)
    return -1;
  return added + rc;
}

int mcpc_behaviour_repeat(mcpc_report *r, const char *tool, int resolved,
                          const char *what, const mcpc_effect *e, size_t n) {
  evidence again = {0};
  for (size_t i = 0; i < n; i++) {
    const mcpc_effect *x = &e[i], *first;
    const char *path;
    unsigned char now[32];
    long long size;
    struct stat st;
    int exists, same;
    if (!(is(x, "write") || is(x, "create") || is(x, "truncate") ||
          is(x, "rename") || is(x, "remove") || is(x, "link")))
      continue;
    path = (is(x, "rename") || is(x, "link")) ? x->target2 : x->target;
    first = first_on(e, n, path);
    if (first != x)
      continue;
    exists = lstat(path, &st) == 0;
    if (!first->existed)
      same = !exists;
    else if (!first->digested || !S_ISREG(st.st_mode))
      same = exists; /* a folder or a link: its presence is its state */
    else
      same = exists && mcpc_digest_file(path, -1, now, &size) == 0 &&
             size == first->size && memcmp(now, first->digest, 32) == 0;
    if (!same)
      cite(&again, x, "it changed again");
  }
  return emit(r, tool, resolved, what, &again_claim, &again);
}
