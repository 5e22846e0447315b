# Writes OUT (gpucal/version.h) from the source tree's git commit and whether the tracked files
# differ from it; run by the gpucal_version target on every build (cmake/GpucalVersion.cmake).
# configure_file leaves OUT untouched when its text is unchanged, so nothing recompiles then.
# Inputs: SOURCE_DIR, OUT, VERSION, TEMPLATE.
set(GPUCAL_GIT_COMMIT "unknown")
set(GPUCAL_GIT_DIRTY "unknown")
find_package(Git QUIET)
if(GIT_FOUND AND EXISTS ${SOURCE_DIR}/.git)
  execute_process(COMMAND ${GIT_EXECUTABLE} rev-parse HEAD WORKING_DIRECTORY ${SOURCE_DIR}
                  OUTPUT_VARIABLE _commit OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE _rc)
  if(_rc EQUAL 0)
    set(GPUCAL_GIT_COMMIT ${_commit})
    execute_process(COMMAND ${GIT_EXECUTABLE} status --porcelain --untracked-files=no
                    WORKING_DIRECTORY ${SOURCE_DIR} OUTPUT_VARIABLE _status ERROR_QUIET)
    if(_status STREQUAL "")
      set(GPUCAL_GIT_DIRTY "false")
    else()
      set(GPUCAL_GIT_DIRTY "true")
    endif()
  endif()
endif()
set(PROJECT_VERSION ${VERSION})
configure_file(${TEMPLATE} ${OUT} @ONLY)
