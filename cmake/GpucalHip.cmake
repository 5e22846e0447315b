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
message(STATUS "gpucal HIP: hipcc=${GPUCAL_HIPCC} archs=${GPUCAL_HIP_ARCHITECTURES} hipBLASLt=${GPUCAL_HAVE_HIPBLASLT} RCCL=${GPUCAL_HAVE_RCCL}")

# gpucal_add_hip_sources(<target> <file.hip>...): compile with hipcc, add objects to <target>.
function(gpucal_add_hip_sources target)
  set(_archs "")
  foreach(_arch ${GPUCAL_HIP_ARCHITECTURES})
    list(APPEND _archs --offload-arch=${_arch})
  endforeach()
  set(_opt -O3)
  if(CMAKE_BUILD_TYPE STREQUAL "Debug")
    set(_opt -O0 -g)
  endif()
  foreach(_src ${ARGN})
    get_filename_component(_abs ${_src} ABSOLUTE)
    get_filename_component(_name ${_src} NAME_WE)
    set(_obj ${CMAKE_CURRENT_BINARY_DIR}/${target}_${_name}.hip.o)
    add_custom_command(
      OUTPUT ${_obj}
      COMMAND ${GPUCAL_HIPCC} -std=c++17 ${_opt} -fPIC ${_archs} -DGPUCAL_GPU_HIP
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
