# cmake -DNPM=<npm> -DSRC=<source dir> -DDST=<build dir> -P npm_ci.cmake
# Copies the pinned manifest and lockfile into DST and runs `npm ci` there,
# so node_modules lands in the build directory only.
foreach(var NPM SRC DST)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "npm_ci.cmake: -D${var}=... is required")
  endif()
endforeach()
file(COPY ${SRC}/package.json ${SRC}/package-lock.json DESTINATION ${DST})
execute_process(COMMAND ${NPM} ci --no-audit --no-fund
                WORKING_DIRECTORY ${DST}
                RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "npm ci failed in ${DST} (${rc})")
endif()
