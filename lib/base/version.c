/* The protocol versions libmcp speaks: the one table every layer reads
 * (the engine's negotiation and eras, the HTTP transport's routing). */
#include "base.h"

static const char *const names[MCP__VERSION_COUNT] = {
    "2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"};

const char *mcp__version_name(mcp__version v) { return names[v]; }

int mcp__version_find(const char *s) {
  for (int v = 0; s && v < MCP__VERSION_COUNT; v++)
    if (strcmp(s, names[v]) == 0)
      return v;
  return -1;
}
