# mcp_check_core: the parts of mcp-check that need only cJSON, so their unit
# tests (tests/check) link them without the command: the minimal valid
# instance of a tool's inputSchema (instance.c) and the --calls reader
# (calls.c).
add_library(mcp_check_core STATIC
  ${CMAKE_CURRENT_LIST_DIR}/instance.c
  ${CMAKE_CURRENT_LIST_DIR}/calls.c)
target_include_directories(mcp_check_core PUBLIC ${CMAKE_CURRENT_LIST_DIR})
target_compile_definitions(mcp_check_core PRIVATE _POSIX_C_SOURCE=200809L)
target_link_libraries(mcp_check_core PUBLIC PkgConfig::CJSON m)
mcp_warnings(mcp_check_core)
