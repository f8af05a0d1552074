/* Must not compile (tests/layers): the transports (stdio, http) and the
 * Redis store are built on the public API only, like any an embedder writes
 * (promise 3, docs/architecture.md): the engine's header is not on their
 * include path. */
#include "engine.h"

int probe(void);
int probe(void) { return 0; }
