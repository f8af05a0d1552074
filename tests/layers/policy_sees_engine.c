/* Must not compile (tests/layers): a file of the policy layer cannot
 * include the engine's header, which declares the server, its sessions and
 * calls; so access decisions cannot reach a tool or its hints by accident
 * (promise 2, docs/architecture.md). */
#include "engine.h"

int probe(void);
int probe(void) { return 0; }
