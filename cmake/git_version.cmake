# Writes OUTPUT (a header defining EVENTKV_GIT_VERSION, the version recorded
# with every experiment run) from `git describe` at build time, touching it
# only when the version changed, so a commit never leaves a stale label.
execute_process(COMMAND git describe --always --dirty WORKING_DIRECTORY ${SOURCE_DIR}
                OUTPUT_VARIABLE version OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
if(NOT version)
  set(version "unknown")
endif()
set(content "#pragma once\n#define EVENTKV_GIT_VERSION \"${version}\"\n")
if(EXISTS ${OUTPUT})
  file(READ ${OUTPUT} old)
endif()
if(NOT old STREQUAL content)
  file(WRITE ${OUTPUT} "${content}")
endif()
