/* The tools the benchmarks serve, shared by the server (bench_server.c) and
 * bench_alloc.c, which register them through the public API, and by the
 * ceiling (bench_load.c), which builds the same tools/list from scratch
 * with bare cJSON. Plain data and snprintf, so either side can include it;
 * bench_gen_hints only where mcp.h was included first. */
#ifndef BENCH_TOOLS_H
#define BENCH_TOOLS_H

#include <stdio.h>
#include <string.h>

/* Every server has echo and wide; --tools N fills up to N tools in all
 * with generated ones named tool_00000, tool_00001, ... */
#define BENCH_BUILTIN_TOOLS 2

#define BENCH_ECHO_DESCRIPTION "Answers with the text it was given."
#define BENCH_ECHO_SCHEMA                                                      \
  "{\"type\":\"object\",\"properties\":{\"text\":{\"type\":\"string\"}},"      \
  "\"required\":[\"text\"],\"additionalProperties\":false}"

#define BENCH_WIDE_DESCRIPTION                                                 \
  "Checks a record of 100 fields and says how many it got."

/* The properties of the wide tool: the mix bench_schema validates (strings
 * with bounds, integers, numbers, booleans, enums, patterns). */
#define BENCH_WIDE_PROPS 100

/* A generated tool, as a real server's might be: a title, a sentence of
 * description, three typed arguments, and hints that vary with i. */
#define BENCH_GEN_SCHEMA                                                       \
  "{\"type\":\"object\",\"properties\":{\"id\":{\"type\":\"string\","          \
  "\"description\":\"Record identifier\",\"maxLength\":64},\"limit\":{"        \
  "\"type\":\"integer\",\"minimum\":1,\"maximum\":100},\"verbose\":{"          \
  "\"type\":\"boolean\"}},\"required\":[\"id\"],\"additionalProperties\":"     \
  "false}"

typedef struct bench_gen_tool {
  char name[32], title[32], description[160];
  /* 0 = read-only; 1 = writes, idempotent; 2 = writes, destructive, open
   * world. */
  int kind;
} bench_gen_tool;

static inline void bench_gen_tool_make(unsigned i, bench_gen_tool *t) {
  snprintf(t->name, sizeof t->name, "tool_%05u", i);
  snprintf(t->title, sizeof t->title, "Tool %u", i);
  snprintf(t->description, sizeof t->description,
           "Looks up record set %u in the inventory and reports each "
           "record's status, owner and last change.",
           i);
  t->kind = (int)(i % 3);
}

#ifdef MCP_MCP_H
/* The hints of a generated tool of kind 0, 1 or 2 (bench_gen_tool). */
static inline mcp_tool_annotations bench_gen_hints(int kind) {
  const mcp_tool_annotations hints[3] = {
      {.read_only = MCP_HINT_TRUE, .open_world = MCP_HINT_FALSE},
      {.read_only = MCP_HINT_FALSE,
       .destructive = MCP_HINT_FALSE,
       .idempotent = MCP_HINT_TRUE,
       .open_world = MCP_HINT_FALSE},
      {.read_only = MCP_HINT_FALSE,
       .destructive = MCP_HINT_TRUE,
       .idempotent = MCP_HINT_FALSE,
       .open_world = MCP_HINT_TRUE},
  };
  return hints[kind];
}
#endif

/* Writes the wide tool's input schema (when schema is not NULL) and a
 * conforming argument object (when args is not NULL). Returns 0, or -1 when
 * a buffer is too small. */
static inline int bench_wide_make(char *schema, size_t schema_cap, char *args,
                                  size_t args_cap) {
  size_t s = 0, a = 0;
#define BENCH_PUT(buf, cap, at, ...)                                           \
  do {                                                                         \
    if (buf) {                                                                 \
      int n_ = snprintf(buf + at, cap - at, __VA_ARGS__);                      \
      if (n_ < 0 || (size_t)n_ >= cap - at)                                    \
        return -1;                                                             \
      at += (size_t)n_;                                                        \
    }                                                                          \
  } while (0)
  BENCH_PUT(schema, schema_cap, s, "{\"type\":\"object\",\"properties\":{");
  BENCH_PUT(args, args_cap, a, "{");
  for (int i = 0; i < BENCH_WIDE_PROPS; i++) {
    const char *sep = i ? "," : "";
    switch (i % 6) {
    case 0:
      BENCH_PUT(schema, schema_cap, s,
                "%s\"name_%d\":{\"type\":\"string\",\"minLength\":1,"
                "\"maxLength\":64}",
                sep, i);
      BENCH_PUT(args, args_cap, a, "%s\"name_%d\":\"value number %d\"", sep, i,
                i);
      break;
    case 1:
      BENCH_PUT(schema, schema_cap, s,
                "%s\"count_%d\":{\"type\":\"integer\",\"minimum\":0,"
                "\"maximum\":1000000}",
                sep, i);
      BENCH_PUT(args, args_cap, a, "%s\"count_%d\":%d", sep, i, i * 37);
      break;
    case 2:
      BENCH_PUT(schema, schema_cap, s,
                "%s\"ratio_%d\":{\"type\":\"number\",\"exclusiveMinimum\":0}",
                sep, i);
      BENCH_PUT(args, args_cap, a, "%s\"ratio_%d\":%d.25", sep, i, i);
      break;
    case 3:
      BENCH_PUT(schema, schema_cap, s, "%s\"flag_%d\":{\"type\":\"boolean\"}",
                sep, i);
      BENCH_PUT(args, args_cap, a, "%s\"flag_%d\":%s", sep, i,
                i % 2 ? "true" : "false");
      break;
    case 4:
      BENCH_PUT(schema, schema_cap, s,
                "%s\"mode_%d\":{\"enum\":[\"fast\",\"safe\",\"auto\"]}", sep,
                i);
      BENCH_PUT(args, args_cap, a, "%s\"mode_%d\":\"safe\"", sep, i);
      break;
    default:
      BENCH_PUT(schema, schema_cap, s,
                "%s\"id_%d\":{\"type\":\"string\",\"pattern\":"
                "\"^[a-z]+-[0-9]+$\"}",
                sep, i);
      BENCH_PUT(args, args_cap, a, "%s\"id_%d\":\"item-%d\"", sep, i, i);
      break;
    }
  }
  BENCH_PUT(schema, schema_cap, s, "},\"required\":[");
  for (int i = 0; i < BENCH_WIDE_PROPS; i += 6)
    BENCH_PUT(schema, schema_cap, s, "%s\"name_%d\"", i ? "," : "", i);
  BENCH_PUT(schema, schema_cap, s, "],\"additionalProperties\":false}");
  BENCH_PUT(args, args_cap, a, "}");
#undef BENCH_PUT
  return 0;
}

#endif
