/* The guard's private header (lib/guard): rule sets, what the kernel can
 * enforce of them, and the worker pools that run calls under them. Built on
 * the public API (mcp_server_set_executor) and the base layer only. Not
 * installed. */
#ifndef MCP_LIB_GUARD_INT_H
#define MCP_LIB_GUARD_INT_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

#include "mcp/guard.h"

/* What a rule set does to the filesystem. */
typedef enum mcp__guard_fs {
  MCP__GUARD_FS_ANY = 0,  /* nothing promised: destructive */
  MCP__GUARD_FS_ADDITIVE, /* destructiveHint false: no remove, truncate */
  MCP__GUARD_FS_READ_ONLY /* readOnlyHint true: no write of any kind */
} mcp__guard_fs;

/* The rule sets: fs * 2 + closed-world. */
#define MCP__GUARD_SETS 6

/* What the kernel offers, probed once at enable. */
typedef struct mcp__guard_kernel {
  int kernel_abi;   /* Landlock ABI the kernel answers; 0 = none */
  int abi;          /* the one used: kernel_abi, capped by the options */
  bool landlock;    /* landlock_restrict_self worked on a trial thread */
  bool seccomp;     /* a seccomp filter loaded on a trial thread */
  bool best_effort; /* MCP_GUARD_BEST_EFFORT */
  bool notify;      /* a seccomp listener could be made (user notification:
                       Linux 5.0; not under valgrind, which lacks seccomp()) */
} mcp__guard_kernel;

/* One rule set as the kernel will apply it to a worker thread. */
typedef struct mcp__guard_plan {
  mcp__guard_fs fs;
  bool closed;      /* openWorldHint false */
  int ruleset_fd;   /* Landlock ruleset; -1 = none */
  bool sockets;     /* seccomp: only unix (and, with Landlock's TCP
                       rules, TCP) sockets */
  bool inet;        /* those sockets include TCP (Landlock guards it) */
  bool no_truncate; /* seccomp refuses truncation (Landlock cannot) */
  bool no_metadata; /* seccomp refuses chmod, chown, utimes, xattrs,
                       inode attributes and the filesystems' ioctls that
                       change a file (read-only) */
  bool no_shrink;   /* seccomp refuses what removes bytes from a file:
                       fallocate's modes, MADV_REMOVE, ioctls (additive) */
  bool few_ioctls;  /* seccomp refuses every ioctl but a short list
                       (read-only before Landlock ABI 5, which cannot
                       refuse a device's ioctls) */
  bool filtered;    /* seccomp refuses io_uring, Landlock's calls, other
                       architectures and every call newer than the filter
                       (every guarded rule set); false = no filter */
  bool partial;     /* a rule is not (fully) enforced: best effort */
  bool observe;     /* MCP_GUARD_OBSERVE: the reporting filter also stops
                       what a closed-world tool's sockets do (connect,
                       bind, listen, send), since they are let be made */
  char name[64];    /* "guard: read-only, closed-world" */
} mcp__guard_plan;

/* Whether what k offers keeps the filesystem rules of fs, and the network
 * rules of a closed-world tool (with tcp_ports: ported). The one judgement
 * of both a plan's "best effort" mark and mcp_guard_enable's refusal. */
bool mcp__guard_fs_kept(const mcp__guard_kernel *k, mcp__guard_fs fs);
bool mcp__guard_net_kept(const mcp__guard_kernel *k, bool ported);

/* The Landlock ABI the kernel answers, 0 when it has none. */
int mcp__guard_landlock_abi(void);

/* Builds plan for (fs, closed) from what k offers: its Landlock ruleset,
 * with writable (NULL-terminated, opened O_PATH: fds) and ports
 * (0-terminated) allowed. Returns 0 or MCP_EIO with why. */
int mcp__guard_plan_build(mcp__guard_plan *plan, const mcp__guard_kernel *k,
                          mcp__guard_fs fs, bool closed, const int *writable,
                          const unsigned short *ports, char *why,
                          size_t why_size);

/* Closes plan's ruleset. */
void mcp__guard_plan_free(mcp__guard_plan *plan);

/* Restricts the calling thread (and the threads it starts) by plan: no new
 * privileges, the Landlock domain, the seccomp filter. Returns 0, or
 * MCP_EIO with why; the thread must then not run a call. */
int mcp__guard_apply(const mcp__guard_plan *plan, char *why, size_t why_size);

/* The same for a reporting guard: every refusal of plan's filter (but the
 * EPERM ones, no effect) and every effect Landlock refuses stop the call
 * for a supervisor, on the listener returned in *listener (-1 when plan
 * has no filter). The supervisor answers each with what
 * mcp__guard_program says the refusal would. */
int mcp__guard_apply_watched(const mcp__guard_plan *plan, int *listener,
                             char *why, size_t why_size);

struct sock_filter;
struct seccomp_data;

/* What the short ioctl list (plan->few_ioctls) answers data: EACCES for an
 * ioctl it does not keep, 0 otherwise. The reporting filter stops every
 * ioctl instead of loading the list's own filter. */
int mcp__guard_few_ioctls(const mcp__guard_plan *plan,
                          const struct seccomp_data *data);

/* plan's seccomp filter with each refusal failing (as mcp__guard_apply
 * loads it), as a program for mcp__effects_bpf_run: what the kernel would
 * have answered a stopped call. *code is the caller's to free(). Returns
 * 0 or MCP_EIO with why. */
int mcp__guard_program(const mcp__guard_plan *plan, struct sock_filter **code,
                       size_t *len, char *why, size_t why_size);

/* Tries, on a thread of its own, what k claims: a Landlock domain and a
 * seccomp filter. Clears k->landlock or k->seccomp for what failed. */
void mcp__guard_trial(mcp__guard_kernel *k);

#endif
