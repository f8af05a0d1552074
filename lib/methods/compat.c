/* The old names of renamed functions (include/mcp/mcp.h and engine.h,
 * "Old names"), kept exported for one minor version so that programs
 * built against them still link and run. Each only calls its new name. */
#include "methods.h"

long mcp_server_timeout(mcp_server *srv) {
  return mcp_server_next_expiry_ms(srv);
}

const char *mcp_call_tool(const mcp_call *call) { return mcp_call_name(call); }

void mcp_completion_total(mcp_completion *completion, unsigned long total) {
  mcp_completion_set_total(completion, total);
}

int mcp_result_structured_json(mcp_call *call, const struct cJSON *value) {
  return mcp_result_structured_cjson(call, value);
}
