# HIP sources are compiled by hipcc directly. Debian's HIP (5.2) does not ship the ROCm
# directory layout that CMake's HIP language support expects, so each .hip file becomes
# a custom command producing an object that the owning target links like any other.
find_library(GPUCAL_AMDHIP64_LIBRARY amdhip64 REQUIRED)
find_path(GPUCAL_HIPBLASLT_INCLUDE_DIR hipblaslt/hipblaslt.h PATHS /opt/rocm/include)
find_library(GPUCAL_HIPBLASLT_LIBRARY hipblaslt PATHS /opt/rocm/lib)
find_path(GPUCAL_RCCL_INCLUDE_DIR rccl/rccl.h PATHS /opt/rocm/include)
find_library(GPUCAL_RCCL_LIBRARY rccl PATHS /opt/rocm/lib)
set(GPUCAL_HAVE_HIPBLASLT OFF)
if(GPUCAL_HIPBLASLT_INCLUDE_DIR AND GPUCAL_HIPBLASLT_LIBRARY)
  set(GPUCAL_HAVE_HIPBLASLT ON)
endif()
set(GPUCAL_HAVE_RCCL OFF)
if(GPUCAL_RCCL_INCLUDE_DIR AND GPUCAL_RCCL_LIBRARY)
  set(GPUCAL_HAVE_RCCL ON)
endif()

# Offload targets. GPUCAL_HIP_ARCHITECTURES, when set, is used as given. Otherwise: MI200
# (gfx90a), MI300 (gfx942), MI350 (gfx950) and the local GPU's arch (amdgpu-arch, else
# rocminfo), each kept only if this hipcc compiles for it: a binary without a code object
# for the GPU aborts at its first HIP call, and Debian's hipcc 5.2 rejects gfx942 and gfx950
# (MI300X needs a ROCm >= 6 hipcc).
set(_gpucal_hip_candidates gfx90a gfx942 gfx950)
find_program(GPUCAL_AMDGPU_ARCH amdgpu-arch)
find_program(GPUCAL_ROCMINFO rocminfo)
set(_gpucal_local_archs "")
if(GPUCAL_AMDGPU_ARCH)
  execute_process(COMMAND ${GPUCAL_AMDGPU_ARCH} OUTPUT_VARIABLE _out ERROR_QUIET RESULT_VARIABLE _rc TIMEOUT 30)
  if(_rc EQUAL 0)
    string(REGEX MATCHALL "gfx[0-9a-f]+" _gpucal_local_archs "${_out}")
  endif()
endif()
if(NOT _gpucal_local_archs AND GPUCAL_ROCMINFO)
  execute_process(COMMAND ${GPUCAL_ROCMINFO} OUTPUT_VARIABLE _out ERROR_QUIET RESULT_VARIABLE _rc TIMEOUT 30)
  if(_rc EQUAL 0)
    string(REGEX MATCHALL "Name: +gfx[0-9a-f]+" _names "${_out}")
    foreach(_name ${_names})
      string(REGEX REPLACE "Name: +" "" _name "${_name}")
      list(APPEND _gpucal_local_archs ${_name})
    endforeach()
  endif()
endif()
list(APPEND _gpucal_hip_candidates ${_gpucal_local_archs})
list(REMOVE_DUPLICATES _gpucal_hip_candidates)

# gpucal_hip_accepts(<var> <arch>): whether hipcc compiles a kernel for <arch> (cached per
# compiler and arch: a probe takes seconds).
function(gpucal_hip_accepts var arch)
  string(MAKE_C_IDENTIFIER "GPUCAL_HIP_PROBE_${GPUCAL_HIPCC}_${arch}" _key)
  if(NOT DEFINED ${_key})
    set(_dir ${CMAKE_BINARY_DIR}/CMakeFiles/gpucal_hip_probe)
    file(WRITE ${_dir}/probe.hip "#include <hip/hip_runtime.h>\n__global__ void probe(float* x) { atomicAdd(x, 1.0f); }\n")
    execute_process(COMMAND ${GPUCAL_HIPCC} --offload-arch=${arch} -c ${_dir}/probe.hip -o ${_dir}/probe_${arch}.o
                    RESULT_VARIABLE _rc OUTPUT_QUIET ERROR_QUIET TIMEOUT 120)
    set(_ok OFF)
    if(_rc EQUAL 0)
      set(_ok ON)
    endif()
    set(${_key} ${_ok} CACHE INTERNAL "hipcc compiles for ${arch}")
  endif()
  set(${var} ${${_key}} PARENT_SCOPE)
endfunction()

if(GPUCAL_HIP_ARCHITECTURES)
  set(GPUCAL_HIP_ARCHS ${GPUCAL_HIP_ARCHITECTURES})
  set(_gpucal_hip_arch_note "as set")
else()
  set(GPUCAL_HIP_ARCHS "")
  set(_rejected "")
  foreach(_arch ${_gpucal_hip_candidates})
    gpucal_hip_accepts(_ok ${_arch})
    if(_ok)
      list(APPEND GPUCAL_HIP_ARCHS ${_arch})
    else()
      list(APPEND _rejected ${_arch})
    endif()
  endforeach()
  if(NOT GPUCAL_HIP_ARCHS)
    message(FATAL_ERROR "gpucal: ${GPUCAL_HIPCC} compiles for none of ${_gpucal_hip_candidates}; set GPUCAL_HIP_ARCHITECTURES "
                        "or GPUCAL_HIP=OFF")
  endif()
  set(_gpucal_hip_arch_note "probed; local GPU: ${_gpucal_local_archs}; this hipcc rejects: ${_rejected}")
endif()
message(STATUS "gpucal HIP: hipcc=${GPUCAL_HIPCC} archs=${GPUCAL_HIP_ARCHS} (${_gpucal_hip_arch_note}) "
               "hipBLASLt=${GPUCAL_HAVE_HIPBLASLT} RCCL=${GPUCAL_HAVE_RCCL}")

# gpucal_add_hip_sources(<target> <file.hip>... [COMPILE_OPTIONS <opt>...]): compile with
# hipcc for GPUCAL_HIP_ARCHS, add the objects to <target>.
function(gpucal_add_hip_sources target)
  cmake_parse_arguments(H "" "" "COMPILE_OPTIONS" ${ARGN})
  set(_archs "")
  foreach(_arch ${GPUCAL_HIP_ARCHS})
    list(APPEND _archs --offload-arch=${_arch})
  endforeach()
  set(_opt -O3)
  if(CMAKE_BUILD_TYPE STREQUAL "Debug")
    set(_opt -O0 -g)
  endif()
  foreach(_src ${H_UNPARSED_ARGUMENTS})
    get_filename_component(_abs ${_src} ABSOLUTE)
    get_filename_component(_name ${_src} NAME_WE)
    set(_obj ${CMAKE_CURRENT_BINARY_DIR}/${target}_${_name}.hip.o)
    add_custom_command(
      OUTPUT ${_obj}
      COMMAND ${GPUCAL_HIPCC} -std=c++17 ${_opt} -fPIC ${_archs} ${H_COMPILE_OPTIONS} -DGPUCAL_GPU_HIP
              -I${CMAKE_SOURCE_DIR} -I${CMAKE_BINARY_DIR}/generated
              "$<$<BOOL:${GPUCAL_HIPBLASLT_INCLUDE_DIR}>:-I${GPUCAL_HIPBLASLT_INCLUDE_DIR}>"
              "$<$<BOOL:${GPUCAL_RCCL_INCLUDE_DIR}>:-I${GPUCAL_RCCL_INCLUDE_DIR}>"
              -MD -MF ${_obj}.d -c ${_abs} -o ${_obj}
      DEPFILE ${_obj}.d
      DEPENDS ${_abs}
      COMMENT "hipcc ${_name}.hip"
      COMMAND_EXPAND_LISTS VERBATIM)
    target_sources(${target} PRIVATE ${_obj})
  endforeach()
  target_link_libraries(${target} PUBLIC ${GPUCAL_AMDHIP64_LIBRARY})
endfunction()
