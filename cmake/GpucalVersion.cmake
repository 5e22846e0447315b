# The git commit travels into every JSON sidecar and fleet run. It is read on every build, not
# only at configure time, so a build after a commit records that commit: the gpucal_version
# target runs cmake/GpucalVersionWrite.cmake, which rewrites generated/gpucal/version.h only when
# the commit or the dirty state changed (then only the files including it recompile).
set(_gpucal_version_args -DSOURCE_DIR=${CMAKE_SOURCE_DIR} -DOUT=${CMAKE_BINARY_DIR}/generated/gpucal/version.h
    -DVERSION=${PROJECT_VERSION} -DTEMPLATE=${CMAKE_SOURCE_DIR}/core/version.h.in)
execute_process(COMMAND ${CMAKE_COMMAND} ${_gpucal_version_args} -P ${CMAKE_CURRENT_LIST_DIR}/GpucalVersionWrite.cmake)
add_custom_target(gpucal_version
  COMMAND ${CMAKE_COMMAND} ${_gpucal_version_args} -P ${CMAKE_CURRENT_LIST_DIR}/GpucalVersionWrite.cmake
  BYPRODUCTS ${CMAKE_BINARY_DIR}/generated/gpucal/version.h
  VERBATIM)
