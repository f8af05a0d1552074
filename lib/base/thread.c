/* The library's own threads: none of them takes a signal sent to the
 * process. */
#include <pthread.h>
#include <signal.h>

#include "base.h"

void mcp__signals_quiet(sigset_t *old) {
  /* The faults stay open: a thread raises them itself, and blocking one
   * would only turn a crash into a hang. */
  static const int faults[] = {SIGSEGV, SIGBUS,  SIGFPE,
                               SIGILL,  SIGTRAP, SIGSYS};
  sigset_t all;
  sigfillset(&all);
  for (size_t i = 0; i < sizeof faults / sizeof *faults; i++)
    sigdelset(&all, faults[i]);
  pthread_sigmask(SIG_BLOCK, &all, old);
}

int mcp__thread_start(pthread_t *t, const pthread_attr_t *attr,
                      void *(*fn)(void *), void *arg) {
  sigset_t old;
  mcp__signals_quiet(&old);
  int err = pthread_create(t, attr, fn, arg);
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  return err;
}
