# Run at build time (cmake -P): writes OUTPUT, a header with the source tree's git revision, only when it changed,
# so a rebuild after a commit names the new revision and an unchanged one recompiles nothing.
# "-dirty" marks a build from uncommitted changes: a before/after comparison must be able to tell.
execute_process(COMMAND git describe --always --dirty
                WORKING_DIRECTORY ${SOURCE_DIR}
                OUTPUT_VARIABLE revision OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE failed)
if(failed OR NOT revision)
    set(revision unknown) # a source tarball, or no git
endif()
set(content "#pragma once\n// Written by cmake/GitRevision.cmake at build time.\n#define RPCSCOPE_GIT_REVISION \"${revision}\"\n")
set(old "")
if(EXISTS ${OUTPUT})
    file(READ ${OUTPUT} old)
endif()
if(NOT old STREQUAL content)
    file(WRITE ${OUTPUT} "${content}")
endif()
