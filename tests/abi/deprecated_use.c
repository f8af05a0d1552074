/* Uses one old name of the public API (the "Old names" sections of
 * mcp/mcp.h and mcp/engine.h), chosen by USE_<name>, or none. Compiled by
 * lint.deprecated_* with -Werror=deprecated-declarations: each old name
 * must fail with its MCP_DEPRECATED message, and the file with none, or
 * with an old name under the documented pragma, must compile. */
#include <mcp/mcp.h>

long use_old_name(mcp_server *srv, mcp_call *call, mcp_completion *c);
long use_old_name(mcp_server *srv, mcp_call *call, mcp_completion *c) {
  long n = mcp_server_next_expiry_ms(srv);
#if defined(USE_mcp_server_timeout)
  n += mcp_server_timeout(srv);
#elif defined(USE_mcp_call_tool)
  n += mcp_call_tool(call) != NULL;
#elif defined(USE_mcp_completion_total)
  mcp_completion_total(c, 1);
#elif defined(USE_mcp_result_structured_json)
  n += mcp_result_structured_json(call, NULL);
#elif defined(USE_SILENCED)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
  n += mcp_server_timeout(srv) + (mcp_call_tool(call) != NULL);
  mcp_completion_total(c, 1);
  n += mcp_result_structured_json(call, NULL);
#pragma GCC diagnostic pop
#endif
  (void)call;
  (void)c;
  return n;
}
