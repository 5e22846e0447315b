# Relocatable tests: a build folder can be moved, or carried to another machine
# (.ci/gpu-bundle), and `ctest` still runs there. Three rules make that so:
#  - every path a test names is relative to the test's own directory (ctest's working
#    directory, and where it resolves a relative command);
#  - test scripts are copied into the build tree (gpucal_test_script), so nothing points
#    into the source tree;
#  - interpreters come from PATH when ctest runs (`python3`, `sh`), not from this machine.
# gpucal_add_test() rewrites absolute build-tree paths and $<TARGET_FILE:...> into relative
# ones; gpucal_gtest() registers each Google Test case with a relative command. The test
# `relocation_moved_build` (tests/relocation) copies the test tree elsewhere, fails on any
# absolute path left in the generated test files, and runs tests from the copy.

# The executable of `target` as a path in the build tree (our executables keep CMake's
# default output location and name).
function(gpucal_target_path out target)
  get_target_property(_dir ${target} BINARY_DIR)
  get_target_property(_name ${target} OUTPUT_NAME)
  get_target_property(_rdir ${target} RUNTIME_OUTPUT_DIRECTORY)
  if(_name OR _rdir)
    message(FATAL_ERROR "gpucal_target_path: ${target} sets OUTPUT_NAME or RUNTIME_OUTPUT_DIRECTORY; tests "
                        "assume the default location")
  endif()
  set(${out} "${_dir}/${target}" PARENT_SCOPE)
endfunction()

# `path` (absolute, in the build tree) relative to the current binary directory, always
# with a slash (./x, ../x) so that shells and subprocess do not search PATH for it.
function(gpucal_relative_path out path)
  file(RELATIVE_PATH _rel "${CMAKE_CURRENT_BINARY_DIR}" "${path}")
  if(NOT _rel MATCHES "^\\.\\./")
    set(_rel "./${_rel}")
  endif()
  set(${out} "${_rel}" PARENT_SCOPE)
endfunction()

# Arguments with build-tree paths made relative to the current binary directory: a bare
# target name as the command, $<TARGET_FILE:t>, and any occurrence of CMAKE_BINARY_DIR.
function(gpucal_relative_args out)
  file(RELATIVE_PATH _root "${CMAKE_CURRENT_BINARY_DIR}" "${CMAKE_BINARY_DIR}")
  if(_root STREQUAL "")
    set(_root ".")
  endif()
  set(_result "")
  set(_first TRUE)
  foreach(_arg IN LISTS ARGN)
    if(_first AND TARGET "${_arg}")
      set(_arg "$<TARGET_FILE:${_arg}>")
    endif()
    set(_first FALSE)
    while(_arg MATCHES "\\$<TARGET_FILE:([A-Za-z0-9_.+-]+)>")
      gpucal_target_path(_path ${CMAKE_MATCH_1})
      string(REPLACE "$<TARGET_FILE:${CMAKE_MATCH_1}>" "${_path}" _arg "${_arg}")
    endwhile()
    string(REPLACE "${CMAKE_BINARY_DIR}/" "${_root}/" _arg "${_arg}")
    if(_arg STREQUAL CMAKE_BINARY_DIR)
      set(_arg "${_root}")
    endif()
    list(APPEND _result "${_arg}")
  endforeach()
  set(${out} "${_result}" PARENT_SCOPE)
endfunction()

# gpucal_add_test(NAME name COMMAND cmd args...): add_test with relative paths.
function(gpucal_add_test)
  cmake_parse_arguments(T "" "NAME" "COMMAND" ${ARGN})
  gpucal_relative_args(_cmd ${T_COMMAND})
  add_test(NAME ${T_NAME} COMMAND ${_cmd})
endfunction()

# gpucal_test_script(<var> <path relative to the source root>): copies the script to the
# same place in the build tree (re-copied when it changes) and sets <var> to that copy. The
# copies are listed in test_scripts.txt (gpucal_write_test_script_list) for the bundle.
function(gpucal_test_script var path)
  configure_file("${PROJECT_SOURCE_DIR}/${path}" "${PROJECT_BINARY_DIR}/${path}" COPYONLY)
  set_property(GLOBAL APPEND PROPERTY GPUCAL_TEST_SCRIPTS "${path}")
  set(${var} "${PROJECT_BINARY_DIR}/${path}" PARENT_SCOPE)
endfunction()

# Writes build/test_scripts.txt: every file gpucal_test_script copied (call once, last).
function(gpucal_write_test_script_list)
  get_property(_scripts GLOBAL PROPERTY GPUCAL_TEST_SCRIPTS)
  list(REMOVE_DUPLICATES _scripts)
  list(SORT _scripts)
  string(REPLACE ";" "\n" _text "${_scripts}")
  file(WRITE "${PROJECT_BINARY_DIR}/test_scripts.txt" "${_text}\n")
endfunction()

# gpucal_gtest(<target> [TEST_PREFIX p] [LABELS l...] [TIMEOUT s]): one ctest test per
# Google Test case, listed after each build (POST_BUILD, as gtest_discover_tests does) into
# a file whose commands are relative to this directory; ctest includes it through a stub
# that names it relative to itself, so the list moves with the build. A GTEST_SKIP() case
# reports skipped.
function(gpucal_gtest target)
  cmake_parse_arguments(G "" "TEST_PREFIX;TIMEOUT" "LABELS" ${ARGN})
  gpucal_target_path(_exe ${target})
  gpucal_relative_path(_rel "${_exe}")
  set(_list "${CMAKE_CURRENT_BINARY_DIR}/${target}_gtests.cmake")
  string(REPLACE ";" "," _labels "${G_LABELS}")
  add_custom_command(TARGET ${target} POST_BUILD
    COMMAND ${CMAKE_COMMAND} -D "EXE=$<TARGET_FILE:${target}>" -D "COMMAND_PATH=${_rel}" -D "OUT=${_list}"
            -D "PREFIX=${G_TEST_PREFIX}" -D "LABELS=${_labels}" -D "TIMEOUT=${G_TIMEOUT}"
            -P "${PROJECT_SOURCE_DIR}/cmake/GpucalGtestList.cmake"
    BYPRODUCTS "${_list}"
    VERBATIM)
  file(WRITE "${CMAKE_CURRENT_BINARY_DIR}/${target}_gtests_include.cmake"
    "if(EXISTS \"\${CMAKE_CURRENT_LIST_DIR}/${target}_gtests.cmake\")\n"
    "  include(\"\${CMAKE_CURRENT_LIST_DIR}/${target}_gtests.cmake\")\n"
    "else()\n"
    "  add_test(${target}_NOT_BUILT ${target}_NOT_BUILT)\n"
    "endif()\n")
  set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES "\${CMAKE_CURRENT_LIST_DIR}/${target}_gtests_include.cmake")
endfunction()
