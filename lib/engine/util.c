/* The error texts and the library version. */
#include "engine.h"

const char *mcp_strerror(int rc) {
  switch (rc) {
#define MCP_ERROR_CASE_(name, value, text)                                     \
  case value:                                                                  \
    return text;
    MCP_ERROR_LIST(MCP_ERROR_CASE_)
#undef MCP_ERROR_CASE_
  case MCP_DEFERRED:
    return "deferred: the handler will finish later";
  case MCP_INPUT_REQUIRED:
    return "input required: the handler asked the client for input";
  case MCP_EXECUTE_HERE:
    return "execute here: the executor declined the call";
  default:
    return "unknown error";
  }
}

const char *mcp_version(void) { return MCP_VERSION_STRING; }
