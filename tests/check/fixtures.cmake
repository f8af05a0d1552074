# The fixtures mcp-check is tested on: the unit tests of its cJSON-only core
# (label unit).
# mcp_check_unit(name): tests/check/<name>.c, a Check suite linked with
# mcp_check_core and the static library (for the schema validator).
function(mcp_check_unit name)
  add_executable(${name} ${CMAKE_CURRENT_LIST_DIR}/${name}.c)
  target_include_directories(${name} PRIVATE ${MCP_INTERNAL_INCLUDES})
  target_compile_definitions(${name} PRIVATE
    MCP_TEST_DATA="${MCP_TEST_DATA}" _POSIX_C_SOURCE=200809L)
  target_link_libraries(${name} PRIVATE mcp_check_core mcp_test_util mcp_static
                        PkgConfig::CHECK)
  mcp_warnings(${name})
  add_test(NAME check.${name}
           COMMAND ${MCP_TEST_LAUNCHER} $<TARGET_FILE:${name}>)
  set_tests_properties(check.${name} PROPERTIES ENVIRONMENT "${MCP_TEST_ENV}"
                       LABELS unit TIMEOUT 300)
endfunction()

mcp_check_unit(test_calls)

# test_instance checks the instance of every tool of the examples, listed by
# the servers themselves, so it needs them built.
mcp_check_unit(test_instance)
foreach(example hello notes everything)
  if(TARGET ${example})
    string(TOUPPER ${example} upper)
    target_compile_definitions(test_instance PRIVATE
      MCPC_EXAMPLE_${upper}="$<TARGET_FILE:${example}>")
    add_dependencies(test_instance ${example})
  endif()
endforeach()
target_compile_definitions(test_instance PRIVATE
  MCPC_REFERENCE_DIR="${CMAKE_CURRENT_LIST_DIR}/reference")

# mcpc_planted (planted.c): the server with one wrong hint of each kind,
# linked like a user's server; over HTTP too when the transport is built.
add_executable(mcpc_planted ${CMAKE_CURRENT_LIST_DIR}/planted.c)
target_link_libraries(mcpc_planted PRIVATE mcp::mcp PkgConfig::CJSON)
if(TARGET mcp_http)
  target_link_libraries(mcpc_planted PRIVATE mcp::http)
  target_compile_definitions(mcpc_planted PRIVATE MCP_PLANTED_HTTP)
endif()
mcp_warnings(mcpc_planted)

# planted_smoke.py: each planted tool does what its hint denies, and only
# that, over stdio and (when built) HTTP with and without JWT auth.
find_program(PYTHON3 python3 REQUIRED)
add_test(NAME check.planted_smoke
         COMMAND ${PYTHON3} ${CMAKE_CURRENT_LIST_DIR}/planted_smoke.py
                 $<TARGET_FILE:mcpc_planted>)
set_tests_properties(check.planted_smoke PROPERTIES LABELS unit TIMEOUT 300
  ENVIRONMENT "MCP_TEST_LAUNCHER=${MCP_TEST_LAUNCHER_STRING}")

# Formatting of the fixtures' C files and of mcp-check's core (lint, plain
# build only, like lint.clang_format for the rest of the tree).
find_program(CLANG_FORMAT clang-format)
if(CLANG_FORMAT)
  add_test(NAME lint.clang_format_check_fixtures
           COMMAND ${CLANG_FORMAT} --dry-run --Werror
                   ${CMAKE_CURRENT_LIST_DIR}/planted.c
                   ${CMAKE_CURRENT_LIST_DIR}/test_calls.c
                   ${CMAKE_CURRENT_LIST_DIR}/test_instance.c
                   ${PROJECT_SOURCE_DIR}/mcp-check/instance.c
                   ${PROJECT_SOURCE_DIR}/mcp-check/instance.h
                   ${PROJECT_SOURCE_DIR}/mcp-check/calls.c
                   ${PROJECT_SOURCE_DIR}/mcp-check/calls.h)
  set_tests_properties(lint.clang_format_check_fixtures PROPERTIES LABELS lint)
endif()
