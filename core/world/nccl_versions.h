// NCCL features by the version of the library loaded at run time (ncclGetVersion), never by
// the headers a binary was built with: a binary built against NCCL 2.28 headers may load an
// older libnccl.so.2 from a PyTorch wheel or a cluster module.
#pragma once

#include <string>

namespace gpucal {

// ncclGetVersion's code: major*10000 + minor*100 + patch since NCCL 2.9, major*1000 +
// minor*100 + patch before. "2.28.3".
std::string nccl_version_text(int code);
// fp8 (ncclFloat8e4m3, ncclFloat8e5m2) arrived in NCCL 2.24.
bool nccl_has_fp8(int code);
// ncclAlltoAll arrived in NCCL 2.28.
bool nccl_has_alltoall(int code);

}  // namespace gpucal
