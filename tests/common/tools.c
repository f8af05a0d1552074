#include "tools.h"

int tc_echo(mcp_call *call, void *user_data) {
  (void)user_data;
  const char *text = NULL;
  int rc = mcp_call_arg_string(call, "text", &text);
  return rc ? rc : mcp_result_text(call, text);
}
