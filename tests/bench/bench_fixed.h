/* The fixed reply of ceilings (b) and (c): what libmcp answers to an echo
 * tools/call, byte for byte the same size, so that moving it costs the
 * ceiling what it costs the library. */
#ifndef BENCH_FIXED_H
#define BENCH_FIXED_H

#define BENCH_FIXED_BODY                                                       \
  "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"content\":[{\"type\":"          \
  "\"text\",\"text\":\"hello 1\"}]}}"

#endif
