#include "core/world/comm.h"

#include <sstream>

#include "core/errors.h"
#include "core/driver/sweep.h"

namespace gpucal {

std::string to_string(ReduceOp op) {
  switch (op) {
    case ReduceOp::sum: return "sum";
    case ReduceOp::max: return "max";
    case ReduceOp::min: return "min";
    case ReduceOp::avg: return "avg";
  }
  return "?";
}

ReduceOp parse_reduce_op(const std::string& name) {
  for (ReduceOp op : {ReduceOp::sum, ReduceOp::max, ReduceOp::min, ReduceOp::avg})
    if (name == to_string(op)) return op;
  throw UsageError("unknown reduction op '" + name + "' (expected one of: sum max min avg)");
}

std::vector<ReduceOp> parse_reduce_op_list(const std::string& csv) {
  std::vector<ReduceOp> out;
  for (const auto& item : parse_word_list(csv, "op")) out.push_back(parse_reduce_op(item));  // the list path
  return out;
}

bool collective_dtype(DType t) {
  switch (t) {
    case DType::fp64: case DType::fp32: case DType::fp16: case DType::bf16:
    case DType::fp8_e4m3: case DType::fp8_e5m2: case DType::int32:
      return true;
    default:
      return false;
  }
}

// Each vendor build of core/world/comm_nccl.cuh (comm_nccl.cu, comm_rccl.hip) defines these
// in its namespace; the backend's name picks one.
#if defined(GPUCAL_HAVE_NCCL)
namespace cuda {
std::shared_ptr<Communicator> make_ccl_communicator(std::shared_ptr<World> group, Backend& backend);
std::string ccl_version();
}  // namespace cuda
#endif
#if defined(GPUCAL_HAVE_RCCL)
namespace hip {
std::shared_ptr<Communicator> make_ccl_communicator(std::shared_ptr<World> group, Backend& backend);
std::string ccl_version();
}  // namespace hip
#endif

std::shared_ptr<Communicator> make_nccl_communicator(std::shared_ptr<World> group, Backend& backend) {
#if defined(GPUCAL_HAVE_NCCL)
  if (backend.name() == "cuda") return cuda::make_ccl_communicator(std::move(group), backend);
#endif
#if defined(GPUCAL_HAVE_RCCL)
  if (backend.name() == "hip") return hip::make_ccl_communicator(std::move(group), backend);
#endif
  (void)group;
  throw UsageError("this build has no NCCL/RCCL for the " + backend.name() + " backend");
}

std::vector<std::string> compiled_gpu_communicators() {
  std::vector<std::string> out;
#if defined(GPUCAL_HAVE_NCCL)
  out.push_back("nccl");
#endif
#if defined(GPUCAL_HAVE_RCCL)
  out.push_back("rccl");
#endif
  return out;
}

std::string gpu_communicator_version(const std::string& backend) {
#if defined(GPUCAL_HAVE_NCCL)
  if (backend == "cuda") return cuda::ccl_version();
#endif
#if defined(GPUCAL_HAVE_RCCL)
  if (backend == "hip") return hip::ccl_version();
#endif
  (void)backend;
  return "";
}

}  // namespace gpucal
