/* Must not compile (tests/layers): the policy layer cannot include the
 * registry's header either, where the tool entries and their hints are
 * declared. */
#include "registry.h"

int probe(void);
int probe(void) { return 0; }
