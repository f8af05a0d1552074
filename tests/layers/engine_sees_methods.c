/* Must not compile (tests/layers): a file of the engine's core cannot
 * include the methods layer's header, so calls, sessions and the task
 * record cannot reach up into a protocol method or the dispatch table
 * (docs/architecture.md, the floors). */
#include "methods.h"

int probe(void);
int probe(void) { return 0; }
