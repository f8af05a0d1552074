/* observe.h: the server under observation. The child loads the guard's
 * effect filter (lib/guard/effects.h: seccomp user notification, inherited
 * by every thread and child, kept across exec) before it execs; a thread
 * here receives each notification, records the effect against the call in
 * flight and lets the system call go on. Before a file is opened for
 * writing, truncated, renamed over or removed, its size and SHA-256 are
 * taken, so that what a call did to bytes that existed can be judged. */
#ifndef MCPC_OBSERVE_H
#define MCPC_OBSERVE_H

#include <stddef.h>
#include <sys/types.h>

#define MCPC_PATH 4096

/* One effect as recorded. */
typedef struct mcpc_effect {
  int call;                /* index of the call in flight, -1 outside any */
  char op[16];             /* "write", "create", "remove", "rename", ... */
  char syscall[24];        /* the system call's name */
  char target[MCPC_PATH];  /* path, or address:port */
  char target2[MCPC_PATH]; /* rename and link: the new name */
  int flags;               /* open flags of write and create */
  pid_t tid;
  /* The file at the moment of the system call (target, or target2 for a
   * rename over an existing file): whether it existed as a regular file,
   * its size and, when digested, the SHA-256 of its bytes. */
  int existed, digested;
  long long size;
  unsigned char digest[32];
} mcpc_effect;

typedef struct mcpc_observer mcpc_observer;

/* The mcpc_watch_fn for proc.h: the guard's effect filter. */
int mcpc_observe_watch(char *why, size_t size);

/* Starts serving the listener (taken: closed at stop). NULL with why. */
mcpc_observer *mcpc_observer_start(int listener, char *why, size_t size);

/* The call in flight from now on (-1: none); o may be NULL (nothing). Before it
 * changes, every notification already pending is served under the old call. */
void mcpc_observer_set_call(mcpc_observer *o, int call);

/* How many effects so far (0 for a NULL o); a copy of effect i. */
size_t mcpc_observer_count(mcpc_observer *o);
void mcpc_observer_get(mcpc_observer *o, size_t i, mcpc_effect *out);

/* Stops the thread and frees everything (NULL: nothing). The listener
 * closes: any system call still waiting on it fails (the kernel answers
 * ENOSYS), none hangs. */
void mcpc_observer_stop(mcpc_observer *o);

/* What observation sees and what it cannot, one sentence each, NULL-ended
 * (static strings). */
extern const char *const mcpc_observe_limits[];

#endif
