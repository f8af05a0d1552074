/* mcp-check: a minimal JSON value valid against a tool's inputSchema. */
#ifndef MCPC_INSTANCE_H
#define MCPC_INSTANCE_H

#include <stddef.h>

#include <cjson/cJSON.h>

/* mcpc_instance: a small JSON value that validates against schema (JSON
 * Schema 2020-12 or draft-07 as tools' inputSchemas use them), preferring a
 * valid "default" or "examples" entry where the schema offers one.
 * Returns a new cJSON tree the caller frees with cJSON_Delete, or NULL when
 * it cannot build one (a pattern with no valid example, a contradiction, a
 * $ref it cannot follow, no memory), with the reason in why (size bytes,
 * always terminated when size > 0). schema is only read. Thread-safe: no
 * shared state. */
cJSON *mcpc_instance(const cJSON *schema, char *why, size_t size);

#endif
