/* Must compile (tests/layers), for every layer: the control of the
 * must-fail probes, showing that a layer's include path holds its own
 * header and those below, so a probe fails for its include alone. LAYER_H
 * names the layer's header. */
#include LAYER_H

int probe(void);
int probe(void) { return 0; }
