/* Must not compile (tests/layers): a lower layer (json) cannot include a
 * layer above it (rpc). */
#include "rpc.h"

int probe(void);
int probe(void) { return 0; }
