/* Effects: what a thread does to the world outside it (writes, removals,
 * metadata changes, sockets, connections), seen by the kernel's seccomp
 * user notification and decoded into one record each. Shared by the guard
 * (lib/guard), which watches its own workers, and by tools that watch
 * another process and its children (mcp-check --observe). Built as the
 * internal static library mcp_effects: nothing here is exported, and the
 * API below is kept stable (additions only) for those users.
 *
 * The flow: a filter makes the kernel stop each effect system call and
 * queue a notification on a listener fd; a supervisor receives it
 * (mcp__effects_receive or mcp__effects_serve), decodes it
 * (mcp__effects_decode: the target read from the stopped thread's memory
 * with process_vm_readv, paths resolved against its cwd or dirfd through
 * /proc/<tid>), and answers: continue (the call runs as if never stopped)
 * or fail it with an errno. If the listener closes, every pending and
 * later notified call fails with ENOSYS: closed, never hung.
 *
 * Threads: the functions are reentrant; one listener is served by one
 * thread at a time. */
#ifndef MCP_LIB_GUARD_EFFECTS_H
#define MCP_LIB_GUARD_EFFECTS_H

#include <linux/seccomp.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* What an effect does; mcp__effect_op_name gives each its stable
 * lowercase name (in quotes below), the one reports print. */
typedef enum mcp__effect_op {
  MCP__EFFECT_WRITE = 0,  /* "write": a file opened for writing */
  MCP__EFFECT_CREATE,     /* "create": a file, folder or node made */
  MCP__EFFECT_REMOVE,     /* "remove": unlink, rmdir */
  MCP__EFFECT_RENAME,     /* "rename": target moved to target2 */
  MCP__EFFECT_LINK,       /* "link": hard or symbolic link target made,
                             target2 = what it points to */
  MCP__EFFECT_TRUNCATE,   /* "truncate": truncate, ftruncate, O_TRUNC */
  MCP__EFFECT_CHMOD,      /* "chmod": the mode */
  MCP__EFFECT_CHOWN,      /* "chown": the owner or group */
  MCP__EFFECT_TIMES,      /* "times": access or modification times */
  MCP__EFFECT_XATTR,      /* "xattr": extended attributes set or removed */
  MCP__EFFECT_ATTR_IOCTL, /* "attr-ioctl": an ioctl of the filesystems'
                             families, file_setattr (inode flags) */
  MCP__EFFECT_SHRINK,     /* "shrink": fallocate's punching modes,
                             madvise(MADV_REMOVE) */
  MCP__EFFECT_SOCKET,     /* "socket": a socket other than unix */
  MCP__EFFECT_CONNECT,    /* "connect" */
  MCP__EFFECT_BIND,       /* "bind" */
  MCP__EFFECT_LISTEN,     /* "listen" */
  MCP__EFFECT_SEND,       /* "send": sendto/sendmsg with an address */
  MCP__EFFECT_OPS         /* how many */
} mcp__effect_op;

/* Effect classes, to choose what a filter notifies (bit per class). */
enum {
  MCP__EFFECTS_WRITES = 1u << 0,   /* write, create, remove, rename, link */
  MCP__EFFECTS_TRUNCATE = 1u << 1, /* truncate */
  MCP__EFFECTS_METADATA = 1u << 2, /* chmod, chown, times, xattr,
                                      attr-ioctl */
  MCP__EFFECTS_SHRINK = 1u << 3,   /* shrink */
  MCP__EFFECTS_NET = 1u << 4,      /* socket, connect, bind, listen, send */
  MCP__EFFECTS_ALL = 0x1fu
};

/* The longest target kept; a longer one is cut, and truncated says so. */
#define MCP__EFFECT_TARGET 1024

/* One effect, decoded. Plain data: copy it freely. */
typedef struct mcp__effect {
  mcp__effect_op op;
  pid_t tid;       /* the thread that asked (the kernel's notif.pid) */
  int nr;          /* the system call's number */
  char call[24];   /* its name: "openat", "renameat2", "connect"... */
  int flags;       /* write, create, truncate by open: the open flags;
                      0 otherwise */
  int family;      /* socket, connect, bind, send: the address family
                      (AF_INET...); listen: the socket's, when known;
                      -1 otherwise */
  bool unreadable; /* a target could not be read (a bad pointer, a thread
                      gone): its text is "(unreadable)" */
  bool truncated;  /* a target was longer than MCP__EFFECT_TARGET - 1 */
  bool harmless;   /* mcp__effects_receive_all: decoded as no effect (the
                      decoder returned 1); op is the row's */
  char target[MCP__EFFECT_TARGET];  /* the path (absolute when the thread's
                                       cwd or dirfd could be read),
                                       "address:port" ("[v6]:port"),
                                       "unix:/path", or for a socket its
                                       family and type ("inet stream") */
  char target2[MCP__EFFECT_TARGET]; /* rename: the new path; link: what the
                                       link points to; "" otherwise */
} mcp__effect;

/* The stable name of op ("write"...), "?" for a value out of range. */
const char *mcp__effect_op_name(mcp__effect_op op);

/* Loads onto the calling thread (and what it starts and execs, forever) a
 * filter that stops every effect system call of classes (MCP__EFFECTS_*)
 * for a supervisor, and allows everything else; sets no_new_privs first.
 * For a child between fork and exec, or a thread the guard starts; each
 * call stacks a filter and makes a listener of its own.
 * Returns the listener fd (>= 0; the caller closes it), or a negative
 * MCP_E* (MCP_EIO: the kernel or libseccomp refused; MCP_ENOMEM) with why
 * filled. */
int mcp__effects_watch(unsigned classes, char *why, size_t size);

/* mcp__effects_watch(MCP__EFFECTS_ALL, why, size). */
int mcp__effects_watch_self(char *why, size_t size);

/* Loads filter (a libseccomp context whose rules may use SCMP_ACT_NOTIFY)
 * on the calling thread only, asking the kernel for a listener, without
 * going through libseccomp's process-wide notification state (so many
 * threads of one process may each have their own). The caller keeps and
 * releases filter. Returns the listener fd or a negative MCP_E* with why. */
int mcp__effects_load(void *filter, char *why, size_t size);

struct sock_filter;

/* filter (a libseccomp context) as a BPF program: *code (len
 * instructions) is the caller's to free(). Returns 0 or a negative
 * errno. */
int mcp__effects_export(void *filter, struct sock_filter **code, size_t *len);

/* What program code (len instructions) answers for data, as the kernel
 * would run it: SECCOMP_RET_ALLOW, SECCOMP_RET_ERRNO | errno... (a program
 * that reads out of data or runs off its end answers
 * SECCOMP_RET_KILL_PROCESS). For a supervisor that answers as a filter
 * would have. */
uint32_t mcp__effects_bpf_run(const struct sock_filter *code, size_t len,
                              const struct seccomp_data *data);

/* Adds to filter (a libseccomp context) a rule with action for each effect
 * system call of classes. Returns 0 or a negative errno from libseccomp
 * (-ENOSYS: a call neither libseccomp nor the table can name). */
int mcp__effects_add_rules(void *filter, unsigned classes, uint32_t action);

/* Like mcp__effects_add_rules, by effect: ops has bit (1u << op) for each
 * mcp__effect_op to stop. An open is stopped for ops write or create when
 * it writes, creates or truncates, for truncate alone when it has
 * O_TRUNC (creat always). Returns as mcp__effects_add_rules. */
int mcp__effects_add_ops(void *filter, unsigned ops, uint32_t action);

/* Decodes n, a notification about thread pid (0: n->pid), into out.
 * Returns 0 (an effect, out filled), 1 (not an effect: a call the filter
 * stops that turned out harmless, such as sendmsg without an address; out
 * names the call; continue it), or MCP_EINVAL (a system call this table
 * does not know). Never dereferences the thread's pointers: a target that
 * cannot be read is marked unreadable. */
int mcp__effects_decode(pid_t pid, const struct seccomp_notif *n,
                        mcp__effect *out);

/* The answer to a notification. */
#define MCP__EFFECT_CONTINUE 0 /* let the call run */

/* Decides about effect e (decoded from n): returns MCP__EFFECT_CONTINUE or
 * a positive errno for the call to fail with. Called on the supervisor's
 * thread; e is valid during the call only. */
typedef int (*mcp__effects_fn)(const mcp__effect *e,
                               const struct seccomp_notif *n, void *user_data);

/* Receives one notification from listener (blocking unless the fd is
 * non-blocking), decodes it, calls fn (for effects; a harmless call is
 * continued without it; an unknown call is failed with ENOSYS) and sends
 * its answer. Returns 1 when one was handled, 0 when there was none (the
 * thread died before it was read, or EAGAIN), or MCP_EIO (the listener
 * is unusable: every filter user is gone, or it is not one). */
int mcp__effects_receive(int listener, mcp__effects_fn fn, void *user_data);

/* Like mcp__effects_receive, but fn decides every notification: a
 * harmless call too (e->harmless set), and one this table does not know
 * (e->harmless set, e->call "#nr"). For a supervisor that must answer as
 * a filter would (the guard): continuing a call on what was read from its
 * memory would let another thread change it in between. */
int mcp__effects_receive_all(int listener, mcp__effects_fn fn, void *user_data);

/* Serves listener until every thread that could be notified is gone
 * (returns 0), stop_fd (>= 0) becomes readable (returns 0), or an error
 * (MCP_EIO). stop_fd < 0: none. */
int mcp__effects_serve(int listener, int stop_fd, mcp__effects_fn fn,
                       void *user_data);

#endif
