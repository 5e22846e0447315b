// Which shared-library files this process actually loaded (the dynamic loader's list, so
// libraries opened with dlopen count too: cuDNN's sub-libraries, NVRTC, NVML): the sidecar
// records them with their versions, because on a machine with several copies (a CUDA
// toolkit, PyTorch's nvidia-* wheels, a bundle) the header version says nothing.
#pragma once

#include <string>
#include <vector>

namespace gpucal {

struct LoadedLibrary {
  std::string name;  // file name as loaded, e.g. "libcublasLt.so.13"
  std::string path;  // real path of the file
};

// Loaded libraries except the C runtime (libc, libm, ld.so, libpthread, libdl, librt,
// libgcc_s, libstdc++, vdso), in load order.
std::vector<LoadedLibrary> loaded_libraries();

}  // namespace gpucal
