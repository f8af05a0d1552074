/* What every store's records must do (mcp_store_put, mcp_store_get,
 * mcp_store_list, mcp_store_node_join), checked the same way on the
 * in-process store (unit.test_store) and on Redis (redis.store). */
#ifndef MCP_TEST_STORE_CONTRACT_H
#define MCP_TEST_STORE_CONTRACT_H

#include <stdbool.h>

#include "mcp/mcp.h"

/* One answer, copied out of the callback: at most 8 records. */
typedef struct sc_record {
  char key[256], holder[65], value[512];
  bool has_value, final, holder_alive, written;
  unsigned long long order;
} sc_record;

typedef struct sc_answer {
  int rc;
  unsigned n;
  bool more;
  sc_record recs[8];
  char why[512]; /* the store's why, when rc is not 0 */
} sc_answer;

/* The store's operations, waited for (at most 10 s each). */
sc_answer sc_put(mcp_store *st, const char *key, const char *value,
                 const char *holder, const char *index,
                 unsigned long long order, unsigned long long ttl_ms,
                 bool final);
/* sc_put with count (NULL: as sc_put). */
sc_answer sc_put_counted(mcp_store *st, const char *key, const char *value,
                         const char *holder, const char *index,
                         unsigned long long order, unsigned long long ttl_ms,
                         bool final, const mcp_store_count *count);
sc_answer sc_get(mcp_store *st, const char *key);
sc_answer sc_list(mcp_store *st, const char *index, unsigned long long order,
                  const char *key, unsigned max);

/* Runs the contract on st, whose keys and nodes are named after prefix
 * (so that runs on one Redis do not meet). lease_ms: the lease a node is
 * joined with, and how long the check waits to see one lapse after it
 * left; 0: the store's nodes live until they leave (the in-process one). */
void store_contract_run(mcp_store *st, const char *prefix, unsigned lease_ms);

#endif
