/* The tool table: tool definitions and handlers that several suites
 * register, as constant initializers, so that
 *   static const mcp_tool TOOL_RUN = TC_TOOL_RUN(run_handler);
 * is the same "run" tool in every suite that has one. A suite whose tool
 * differs in a way its tests rely on (a schema, a description in a golden
 * transcript) keeps its own definition. */
#ifndef MCP_TEST_TOOLS_H
#define MCP_TEST_TOOLS_H

#include <mcp/mcp.h>

/* The hints of a tool that only reads, in a closed world. */
#define TC_READ_ONLY                                                           \
  { .read_only = MCP_HINT_TRUE, .open_world = MCP_HINT_FALSE }

/* Arguments of one required string "text" of at most 200 characters, and
 * nothing else. */
#define TC_TEXT_SCHEMA                                                         \
  "{\"type\":\"object\",\"properties\":{\"text\":{\"type\":\"string\","        \
  "\"maxLength\":200}},\"required\":[\"text\"],\"additionalProperties\":"      \
  "false}"

/* echo: answers with its "text" argument as the text result. */
#define TC_TOOL_ECHO                                                           \
  {                                                                            \
    .name = "echo", .description = "Returns its text.",                        \
    .input_schema = TC_TEXT_SCHEMA, .annotations = TC_READ_ONLY,               \
    .handler = tc_echo                                                         \
  }

/* run: takes any object of arguments; fn does what the test asks. */
#define TC_TOOL_RUN(fn)                                                        \
  {                                                                            \
    .name = "run", .description = "Does what the test asks.",                  \
    .input_schema = "{\"type\":\"object\"}", .annotations = TC_READ_ONLY,      \
    .handler = (fn)                                                            \
  }

/* The handler of echo: the text result of the string argument "text", or
 * the code of mcp_call_arg_string when there is none. */
int tc_echo(mcp_call *call, void *user_data);

#endif
