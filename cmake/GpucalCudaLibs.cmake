# Vendor libraries beside the CUDA toolkit: cuDNN and NCCL are optional (their benches
# record a skip without them); cuBLASLt comes with the toolkit. Found in the toolkit's
# folders or in PyTorch's nvidia-* wheels (cmake/GpucalVendorLibs.cmake).
include(GpucalVendorLibs)
gpucal_wheel_roots(_gpucal_wheel_roots)
gpucal_find_vendor(GPUCAL_CUDNN HEADER cudnn.h NAME cudnn SONAME libcudnn.so.9 WHEEL cudnn
                   HINTS ${CUDAToolkit_INCLUDE_DIRS} ${CUDAToolkit_LIBRARY_DIR} WHEEL_ROOTS ${_gpucal_wheel_roots})
gpucal_find_vendor(GPUCAL_NCCL HEADER nccl.h NAME nccl SONAME libnccl.so.2 WHEEL nccl
                   HINTS ${CUDAToolkit_INCLUDE_DIRS} ${CUDAToolkit_LIBRARY_DIR} WHEEL_ROOTS ${_gpucal_wheel_roots})
set(GPUCAL_HAVE_CUDNN OFF)
if(GPUCAL_CUDNN_INCLUDE_DIR AND GPUCAL_CUDNN_LIBRARY)
  set(GPUCAL_HAVE_CUDNN ON)
endif()
set(GPUCAL_HAVE_NCCL OFF)
if(GPUCAL_NCCL_INCLUDE_DIR AND GPUCAL_NCCL_LIBRARY)
  set(GPUCAL_HAVE_NCCL ON)
endif()
message(STATUS "gpucal CUDA libraries: cuDNN=${GPUCAL_HAVE_CUDNN} (${GPUCAL_CUDNN_LIBRARY}) "
               "NCCL=${GPUCAL_HAVE_NCCL} (${GPUCAL_NCCL_LIBRARY})")
