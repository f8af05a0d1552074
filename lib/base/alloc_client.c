/* The base layer's allocator in libmcp_http: every block goes through
 * libmcp's public mcp_malloc family, so the one hook an embedder sets with
 * mcp_set_allocator sees the HTTP transport's allocations too. (libmcp
 * itself owns the hook: lib/base/alloc.c.) */
#include "base.h"

void *mcp__malloc(size_t n) { return mcp_malloc(n); }

void *mcp__calloc(size_t count, size_t n) { return mcp_calloc(count, n); }

void *mcp__realloc(void *p, size_t n) { return mcp_realloc(p, n); }

void mcp__free(void *p) { mcp_free(p); }
