# Finding cuDNN and NCCL in a CUDA toolkit or in PyTorch's nvidia-* wheels. A wheel ships
# only the versioned library name (libcudnn.so.9, libnccl.so.2) under
# site-packages/nvidia/<package>/lib and its headers under .../include; a plain
# find_library(cudnn) misses it, and building on a machine that has only the wheels would
# silently drop cuDNN and NCCL. Script-mode safe (tests/cmake runs it with cmake -P).

# gpucal_wheel_roots(<var>): site-packages/nvidia of the python3 on PATH ("" without one).
function(gpucal_wheel_roots var)
  find_program(_gpucal_python3 python3)
  set(_roots "")
  if(_gpucal_python3)
    execute_process(
      COMMAND ${_gpucal_python3} -c
              "import importlib.util as u; s = u.find_spec('nvidia'); print(';'.join(s.submodule_search_locations) if s else '')"
      OUTPUT_VARIABLE _roots OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET TIMEOUT 30)
  endif()
  set(${var} "${_roots}" PARENT_SCOPE)
endfunction()

# gpucal_find_vendor(<PREFIX> HEADER <h> NAME <n> SONAME <libn.so.N> WHEEL <package>
#                    [HINTS dir...] [WHEEL_ROOTS dir...]): sets <PREFIX>_INCLUDE_DIR and
# <PREFIX>_LIBRARY (the unversioned name or, failing that, the soname), looking in HINTS,
# then in <root>/<package>/{include,lib} of each wheel root, then the default paths.
function(gpucal_find_vendor prefix)
  cmake_parse_arguments(V "" "HEADER;NAME;SONAME;WHEEL" "HINTS;WHEEL_ROOTS" ${ARGN})
  set(_inc "")
  set(_lib "")
  foreach(_root ${V_WHEEL_ROOTS})
    list(APPEND _inc ${_root}/${V_WHEEL}/include)
    list(APPEND _lib ${_root}/${V_WHEEL}/lib)
  endforeach()
  find_path(${prefix}_INCLUDE_DIR ${V_HEADER} HINTS ${V_HINTS} ${_inc})
  find_library(${prefix}_LIBRARY NAMES ${V_NAME} ${V_SONAME} HINTS ${V_HINTS} ${_lib})
  set(${prefix}_INCLUDE_DIR "${${prefix}_INCLUDE_DIR}" PARENT_SCOPE)
  set(${prefix}_LIBRARY "${${prefix}_LIBRARY}" PARENT_SCOPE)
endfunction()
