# The git commit travels into every JSON sidecar; read at configure time, refreshed by
# re-running cmake (the sidecar also records whether the tree was dirty then).
find_package(Git QUIET)
set(GPUCAL_GIT_COMMIT "unknown")
set(GPUCAL_GIT_DIRTY "unknown")
if(GIT_FOUND AND EXISTS ${CMAKE_SOURCE_DIR}/.git)
  execute_process(COMMAND ${GIT_EXECUTABLE} rev-parse HEAD WORKING_DIRECTORY ${CMAKE_SOURCE_DIR}
                  OUTPUT_VARIABLE _commit OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE _rc)
  if(_rc EQUAL 0)
    set(GPUCAL_GIT_COMMIT ${_commit})
    execute_process(COMMAND ${GIT_EXECUTABLE} status --porcelain --untracked-files=no
                    WORKING_DIRECTORY ${CMAKE_SOURCE_DIR} OUTPUT_VARIABLE _status ERROR_QUIET)
    if(_status STREQUAL "")
      set(GPUCAL_GIT_DIRTY "false")
    else()
      set(GPUCAL_GIT_DIRTY "true")
    endif()
  endif()
endif()
configure_file(${CMAKE_SOURCE_DIR}/core/version.h.in ${CMAKE_BINARY_DIR}/generated/gpucal/version.h @ONLY)
