/* mcp_server_add_skill_dir: a skill read from a directory, on the public
 * API only (the engine does no I/O: this layer reads the files, then
 * mcp_server_add_skill checks and registers them as from memory).
 *
 * The walk publishes only what the directory holds: regular files with a
 * single link, never through a symbolic link (O_NOFOLLOW, fstatat
 * AT_SYMLINK_NOFOLLOW), so no link in a skill publishes a file from
 * elsewhere on the machine; a link (symbolic or hard), a FIFO, a device
 * or a socket in the tree refuses the skill, naming it. Each file is
 * opened without blocking and checked again on its descriptor (the same
 * regular file as was checked by name), so a file swapped between the
 * check and the open is refused, not read, and a FIFO cannot hang the
 * registration. Names starting with '.' are skipped (.git, editor files).
 * It stops at the extension's limits (512 files, 16 MiB) and 16 levels of
 * directories, so a huge tree costs no more than a refusal. */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base.h" /* allocator and buffers only */

#define MAX_FILES 512
#define MAX_TOTAL ((size_t)16 << 20)
#define MAX_DEPTH 16

typedef struct walk {
  mcp_skill_file *files;
  size_t n;
  size_t total;
  int rc; /* the first failure, its sentence in why */
  char why[600];
} walk;

/* Records the first failure. */
static void walk_fail(walk *w, int rc, const char *rel, const char *what) {
  if (w->rc)
    return;
  w->rc = rc;
  mcp__fmt(w->why, sizeof w->why, "\"%.300s\": %s", rel[0] ? rel : ".", what);
}

/* Opens name in the directory dfd as the regular file st describes, its
 * path in the skill rel: without blocking (a FIFO swapped in after the
 * check opens at once, to be refused, rather than waiting for a writer),
 * never through a symbolic link, not as a controlling terminal; then
 * fstat must find the very file checked (same device and inode, regular,
 * the same size) with a single link, since a hard link can publish a file
 * from elsewhere on the machine that the directory does not hold. Returns
 * the descriptor, or -1 after recording why. */
static int open_checked(walk *w, int dfd, const char *name, const char *rel,
                        const struct stat *st) {
  int fd = openat(dfd, name,
                  O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) {
    int e = errno;
    walk_fail(w, e == ELOOP ? MCP_EINVAL : MCP_EIO, rel,
              e == ELOOP ? "it became a symbolic link (links are never "
                           "followed)"
                         : strerror(e));
    return -1;
  }
  struct stat now;
  int rc = MCP_EINVAL;
  const char *why = NULL;
  if (fstat(fd, &now) != 0) {
    rc = MCP_EIO;
    why = strerror(errno);
  } else if (!S_ISREG(now.st_mode) || now.st_dev != st->st_dev ||
             now.st_ino != st->st_ino) {
    why = "it was replaced while it was read (what was opened is not the "
          "regular file checked)";
  } else if (now.st_nlink > 1) {
    why = "it has more than one hard link (a link may publish a file from "
          "elsewhere on the machine); copy the file into the skill instead";
  } else if (now.st_size != st->st_size) {
    rc = MCP_EIO;
    why = "it changed size while it was read";
  }
  if (why == NULL)
    return fd;
  close(fd);
  walk_fail(w, rc, rel, why);
  return -1;
}

/* Is fd at its end (a file that grew after it was checked is not)? */
static bool at_end(int fd) {
  char c;
  ssize_t r;
  do
    r = read(fd, &c, 1);
  while (r < 0 && errno == EINTR);
  return r == 0;
}

/* Reads the regular file name in the directory dfd into a new file of w
 * whose path is rel. */
static void read_file(walk *w, int dfd, const char *name, const char *rel,
                      const struct stat *st) {
  if (w->n == MAX_FILES) {
    walk_fail(w, MCP_EINVAL, rel, "more than 512 files");
    return;
  }
  if ((size_t)st->st_size > MAX_TOTAL - w->total) {
    walk_fail(w, MCP_EINVAL, rel, "the skill's files hold more than 16 MiB");
    return;
  }
  /* Memory first: a failed allocation then leaves no descriptor open. */
  size_t size = (size_t)st->st_size, got = 0;
  char *data = mcp__malloc(size ? size : 1);
  char *path = mcp__strdup(rel);
  if (data == NULL || path == NULL) {
    walk_fail(w, MCP_ENOMEM, rel, "out of memory");
    mcp__free(data);
    mcp__free(path);
    return;
  }
  int fd = open_checked(w, dfd, name, rel, st);
  while (fd >= 0 && got < size) {
    ssize_t r = read(fd, data + got, size - got);
    if (r < 0 && errno == EINTR)
      continue;
    if (r <= 0)
      break;
    got += (size_t)r;
  }
  bool whole = fd >= 0 && got == size && at_end(fd);
  if (fd >= 0)
    close(fd);
  if (whole) {
    w->files[w->n++] =
        (mcp_skill_file){.path = path, .data = data, .size = size};
    w->total += size;
    return;
  }
  if (fd >= 0)
    walk_fail(w, MCP_EIO, rel, "it changed size while it was read");
  mcp__free(data);
  mcp__free(path);
}

/* Opens the directory name in dfd as the one st describes (never through
 * a link); -1 after recording why. */
static int open_dir_checked(walk *w, int dfd, const char *name, const char *rel,
                            const struct stat *st) {
  int fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  struct stat now;
  if (fd < 0) {
    walk_fail(w, MCP_EIO, rel, strerror(errno));
  } else if (fstat(fd, &now) != 0 || now.st_dev != st->st_dev ||
             now.st_ino != st->st_ino) {
    close(fd);
    fd = -1;
    walk_fail(w, MCP_EINVAL, rel,
              "it was replaced while it was read (what was opened is not "
              "the directory checked)");
  }
  return fd;
}

/* Walks the directory open as dfd (which it closes), whose path in the
 * skill is rel ("" for the root). */
static void walk_dir(walk *w, int dfd, const char *rel, int depth) {
  DIR *d = fdopendir(dfd);
  if (d == NULL) {
    close(dfd);
    walk_fail(w, MCP_EIO, rel, strerror(errno));
    return;
  }
  const struct dirent *e;
  while (w->rc == 0 && (e = readdir(d)) != NULL) {
    if (e->d_name[0] == '.')
      continue; /* ".", "..", and hidden files */
    char sub[1024];
    int n =
        snprintf(sub, sizeof sub, "%s%s%s", rel, rel[0] ? "/" : "", e->d_name);
    if (n < 0 || (size_t)n >= sizeof sub) {
      walk_fail(w, MCP_EINVAL, rel, "a path in it is too long");
      break;
    }
    struct stat st;
    if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
      walk_fail(w, MCP_EIO, sub, strerror(errno));
    } else if (S_ISREG(st.st_mode)) {
      read_file(w, dirfd(d), e->d_name, sub, &st);
    } else if (!S_ISDIR(st.st_mode)) {
      walk_fail(w, MCP_EINVAL, sub,
                "not a regular file or a directory (symbolic links are "
                "never followed)");
    } else if (depth == MAX_DEPTH) {
      walk_fail(w, MCP_EINVAL, sub, "directories nest more than 16 deep");
    } else {
      int sfd = open_dir_checked(w, dirfd(d), e->d_name, sub, &st);
      if (sfd >= 0)
        walk_dir(w, sfd, sub, depth + 1);
    }
  }
  closedir(d);
}

/* qsort's order of skill files: by path. */
static int by_path(const void *a, const void *b) {
  return strcmp(((const mcp_skill_file *)a)->path,
                ((const mcp_skill_file *)b)->path);
}

/* The last segment of dir (a trailing '/' left out), into out. */
static void base_name(const char *dir, char *out, size_t size) {
  size_t n = strlen(dir);
  while (n > 1 && dir[n - 1] == '/')
    n--;
  size_t start = n;
  while (start > 0 && dir[start - 1] != '/')
    start--;
  mcp__fmt(out, size, "%.*s", (int)(n - start), dir + start);
}

int mcp_server_add_skill_dir(mcp_server *srv, const char *dir, const char *path,
                             const char *const *scopes) {
  if (srv == NULL || dir == NULL)
    return MCP_EINVAL;
  char own[256];
  base_name(dir, own, sizeof own);
  walk w = {0};
  w.files = mcp__calloc(MAX_FILES + 1, sizeof *w.files);
  if (w.files == NULL) {
    mcp_server_set_errmsg(srv, "skill: out of memory");
    return MCP_ENOMEM;
  }
  int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd < 0)
    walk_fail(&w, MCP_EIO, "", strerror(errno));
  else
    walk_dir(&w, dfd, "", 0);
  int rc = w.rc;
  if (rc == 0) {
    /* Files in the order of their paths, so that the entry is the same
     * whatever order the directory lists them in. */
    qsort(w.files, w.n, sizeof *w.files, by_path);
    const mcp_skill skill = {
        .path = path ? path : own, .files = w.files, .scopes = scopes};
    rc = mcp_server_add_skill(srv, &skill);
  } else {
    char msg[sizeof w.why + 300];
    mcp__fmt(msg, sizeof msg, "skill directory \"%.250s\": %s", dir, w.why);
    mcp_server_set_errmsg(srv, msg);
  }
  for (size_t i = 0; i < w.n; i++) {
    mcp__free((void *)w.files[i].data);
    mcp__free((void *)w.files[i].path);
  }
  mcp__free(w.files);
  return rc;
}
