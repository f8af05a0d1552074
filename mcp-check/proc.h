/* proc.h: the server as a child process: started in a process group of
 * its own, optionally under observation, stopped with bounded waits and
 * reaped, so that no run leaves a process or a zombie behind. */
#ifndef MCPC_PROC_H
#define MCPC_PROC_H

#include <stddef.h>
#include <sys/types.h>

/* Called in the child between fork and exec to put it under observation:
 * returns a descriptor the parent receives (the listener), or a negative
 * number with why filled in. */
typedef int (*mcpc_watch_fn)(char *why, size_t size);

typedef struct mcpc_proc {
  pid_t pid;    /* also the process group; 0 when not running */
  int in_fd;    /* the child's standard input (pipes mode), else -1 */
  int out_fd;   /* the child's standard output (pipes mode), else -1 */
  int log_fd;   /* a temporary file holding the child's standard error */
  int listener; /* from watch, or -1 */
  int status;   /* wait status once reaped */
  int reaped;
  int stopped; /* mcpc_proc_stop ran */
} mcpc_proc;

/* Starts argv[0] (searched in PATH) with argv. pipes: standard input and
 * output are pipes to us (a stdio server); else /dev/null and the log.
 * watch (may be NULL) runs in the child before exec. Waits (bounded, 10 s)
 * until the exec happened. Returns 0, or -1 with why (exec failed, watch
 * failed, no process could be made). */
int mcpc_proc_start(char *const argv[], int pipes, mcpc_watch_fn watch,
                    mcpc_proc *p, char *why, size_t size);

/* Waits up to ms for the child to exit and reaps it; non-zero when it
 * has. */
int mcpc_proc_wait(mcpc_proc *p, unsigned ms);

/* Non-zero while the child has not exited (reaps it when it has). */
int mcpc_proc_alive(mcpc_proc *p);

/* Copies the last bytes (at most size - 1) of the child's standard error
 * into buf, one line per line, for a message that says why. */
void mcpc_proc_log_tail(const mcpc_proc *p, char *buf, size_t size);

/* Describes how the child ended ("exited with status 3", "killed by signal
 * 9", "still running"). */
void mcpc_proc_describe(const mcpc_proc *p, char *buf, size_t size);

/* Stops it: closes its input, waits up to grace_ms for it to exit, then
 * SIGTERM to its group, waits up to grace_ms again, then SIGKILL; reaps
 * it, and kills whatever is left of its group. Closes every descriptor.
 * Safe on a zeroed or stopped proc. */
void mcpc_proc_stop(mcpc_proc *p, unsigned grace_ms);

/* Milliseconds of a monotonic clock. */
long long mcpc_now_ms(void);

#endif
