/* The allocator hook, libmcp's own (libmcp_http allocates through it with
 * lib/base/alloc_client.c). cJSON's hooks are pointed at the same
 * functions so that every byte the library holds is counted by one
 * allocator, and a test can fail any single allocation. */
#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

#include "base.h"

static void *default_malloc(size_t n, void *user_data) {
  (void)user_data;
  return malloc(n);
}

static void *default_realloc(void *p, size_t n, void *user_data) {
  (void)user_data;
  return realloc(p, n);
}

static void default_free(void *p, void *user_data) {
  (void)user_data;
  free(p);
}

static mcp_allocator current = {.malloc_fn = default_malloc,
                                .realloc_fn = default_realloc,
                                .free_fn = default_free};

static void *cjson_malloc(size_t n) { return mcp__malloc(n); }
static void cjson_free(void *p) { mcp__free(p); }

int mcp_set_allocator(const mcp_allocator *alloc) {
  if (alloc == NULL) {
    current = (mcp_allocator){.malloc_fn = default_malloc,
                              .realloc_fn = default_realloc,
                              .free_fn = default_free};
  } else {
    if (!alloc->malloc_fn || !alloc->realloc_fn || !alloc->free_fn)
      return MCP_EINVAL;
    current = *alloc;
  }
  cJSON_Hooks hooks = {cjson_malloc, cjson_free};
  cJSON_InitHooks(&hooks);
  return 0;
}

/* With the default allocator the C library is called directly, without
 * the hook's indirect call, on the path every message takes. */
void *mcp__malloc(size_t n) {
  if (current.malloc_fn == default_malloc)
    return malloc(n ? n : 1);
  return current.malloc_fn(n ? n : 1, current.user_data);
}

void *mcp__calloc(size_t count, size_t n) {
  if (n != 0 && count > (size_t)-1 / n)
    return NULL;
  void *p = mcp__malloc(count * n);
  if (p)
    memset(p, 0, count * n);
  return p;
}

void *mcp__realloc(void *p, size_t n) {
  if (current.realloc_fn == default_realloc)
    return realloc(p, n ? n : 1);
  return current.realloc_fn(p, n ? n : 1, current.user_data);
}

void mcp__free(void *p) {
  /* Most frees on a request's path are of members never allocated. */
  if (p == NULL)
    return;
  if (current.free_fn == default_free)
    free(p);
  else
    current.free_fn(p, current.user_data);
}

void mcp_free(void *ptr) { mcp__free(ptr); }

/* The public face of the hook, for code built on the public API only (the
 * HTTP transport): mcp__ symbols are hidden from it. */
void *mcp_malloc(size_t size) { return mcp__malloc(size); }

void *mcp_calloc(size_t count, size_t size) { return mcp__calloc(count, size); }

void *mcp_realloc(void *ptr, size_t size) { return mcp__realloc(ptr, size); }
