# Warning flags and sanitizer options applied to every target of the project.
function(mcp_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic
    -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Wformat=2)
  if(MCP_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
endfunction()

if(MCP_SANITIZE)
  add_compile_options(-fsanitize=address,undefined -fno-sanitize-recover=all
                      -fno-omit-frame-pointer)
  add_link_options(-fsanitize=address,undefined)
endif()
