#!/usr/bin/env python3
"""Promise 3, checked on the objects: the engine and the layers below it
do no I/O.

Usage: no_io.py OBJECT... (an argument may hold several, joined by ";")

Every function or variable an object of libmcp's core (lib/base, json,
rpc, schema, policy, registry, engine, methods) takes from outside
libmcp and cJSON must be in ALLOWED: memory, strings, numbers, locks, clocks and
the kernel's CSPRNG. Nothing that reads or writes a descriptor, opens a
file or a socket, or waits on one. The one exception is the default log
sink (a warning on stderr when the application set no log callback),
which lives in lib/engine/server.c alone, and lib/base/thread.c, which
starts the threads of the layers above (it does no I/O).
"""
import subprocess
import sys

ALLOWED = {
    # memory and strings
    "malloc", "calloc", "realloc", "free", "memcpy", "memmove", "memset",
    "memcmp", "memchr", "strlen", "strcmp", "strncmp", "strcasecmp",
    "strchr", "strrchr", "strcspn", "strspn", "strstr", "qsort", "bsearch",
    # numbers and formatting into memory
    "snprintf", "vsnprintf", "strtod", "strtol", "strtoul", "strtoll",
    "strtoull", "floor", "ceil", "trunc", "fmod", "localeconv",
    # threads and clocks
    "pthread_mutex_init", "pthread_mutex_destroy", "pthread_mutex_lock",
    "pthread_mutex_unlock", "pthread_mutex_trylock", "pthread_once",
    "pthread_rwlock_init", "pthread_rwlock_destroy", "pthread_rwlock_rdlock",
    "pthread_rwlock_wrlock", "pthread_rwlock_unlock",
    "pthread_key_create", "pthread_getspecific", "pthread_setspecific",
    "clock_gettime", "time",
    # the kernel's CSPRNG (session-independent keys; no descriptor)
    "getrandom",
    # the toolchain's own
    "_GLOBAL_OFFSET_TABLE_", "__errno_location", "__tls_get_addr",
    "__stack_chk_fail", "__assert_fail",
}
# (name, the one source file that may use it): the default log sink, and
# the one place that starts a thread, with the process's signals blocked
# (lib/base/thread.c; the core itself starts none).
ONE_FILE = {"fprintf": "server.c", "stderr": "server.c",
            "pthread_create": "thread.c", "pthread_sigmask": "thread.c",
            "sigfillset": "thread.c", "sigdelset": "thread.c"}


def main():
    problems = []
    # CMake hands a list of objects as one argument, joined by ';'.
    objects = [o for arg in sys.argv[1:] for o in arg.split(";") if o]
    for obj in objects:
        out = subprocess.run(["nm", "-u", obj], check=True,
                             capture_output=True, text=True).stdout
        for line in out.splitlines():
            name = line.split()[-1]
            base = name
            if name.startswith("__") and name.endswith("_chk"):
                base = name[2:-4]  # a fortified call: judged as the call
            if (name.startswith(("mcp_", "cJSON_")) or base in ALLOWED):
                continue
            src = obj.rsplit("/", 1)[-1].removesuffix(".o")
            if ONE_FILE.get(name) == src:
                continue
            problems.append(f"{obj.split('/lib/', 1)[-1]}: uses {name}")
    for p in problems:
        print("no_io:", p)
    print(f"no_io: {len(objects)} objects, {len(problems)} problems")
    return 1 if problems or not objects else 0


if __name__ == "__main__":
    sys.exit(main())
