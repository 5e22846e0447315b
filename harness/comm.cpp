#include "harness/comm.h"

#include <sstream>

#include "harness/errors.h"

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
  std::stringstream in(csv);
  std::string item;
  while (std::getline(in, item, ',')) out.push_back(parse_reduce_op(item));
  if (out.empty()) throw UsageError("empty op list");
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

#if !defined(GPUCAL_HAVE_NCCL) && !defined(GPUCAL_HAVE_RCCL)
std::shared_ptr<Communicator> make_nccl_communicator(std::shared_ptr<World>, Backend& backend) {
  throw UsageError("--impl nccl/rccl: this build has no NCCL or RCCL (backend " + backend.name() + ")");
}
std::vector<std::string> compiled_gpu_communicators() { return {}; }
std::string gpu_communicator_version(const std::string&) { return ""; }
#endif

}  // namespace gpucal
