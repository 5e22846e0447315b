#include "bench_memory/memory_point.h"

#include <algorithm>

#include "core/measure/stats.h"
#include "core/driver/sweep.h"

namespace gpucal::memory {

int64_t MemoryPoint::array_bytes() const { return dims.n * static_cast<int64_t>(dtype_bytes(dtype)); }

std::string MemoryPoint::key(const std::string& impl, const std::string& regime) const {
  const KernelDesc& k = desc();
  std::string shape;
  if (k.family == Family::stream)
    shape = format_size(array_bytes());
  else if (k.family == Family::vector)
    shape = "n" + format_size(dims.n);
  else if (k.shape == Shape::params)
    shape = "p" + std::to_string(dims.n);
  else
    shape = "r" + std::to_string(dims.rows) + "/c" + std::to_string(dims.cols);
  return "memory/" + impl + "/" + k.name + "/" + to_string(dtype) + "/" + shape + "/" + regime;
}

void MemoryPoint::describe(Row& row) const {
  const KernelDesc& k = desc();
  row.set("kernel", k.name)
      .set("family", k.family == Family::stream ? "stream" : k.family == Family::vector ? "vector" : "op")
      .set("dtype", to_string(dtype))
      .set("elements", main_elements(k, dims))
      .set("working_set_bytes", working_set_bytes(k, dims, dtype))
      .set("bytes", bytes_moved(k, dims, dtype));
  if (k.shape == Shape::rows_cols) row.set("rows", dims.rows).set("cols", dims.cols);
  if (k.shape == Shape::params) row.set("params", dims.n);
  if (k.family == Family::stream) row.set("array_bytes", array_bytes());
  if (k.family == Family::vector) row.set("fma_steps", kFmaSteps).set("flops", fma_chain_flops(dims.n));
}

void RunContext::record_copy(DType t, int64_t working_set, double gbps) {
  if (beyond_llc(working_set)) copy_beyond_llc_gbps[t].push_back(gbps);
}

std::optional<CopyReference> RunContext::copy_reference(DType t, std::string& why) const {
  auto describe = [](const std::vector<double>& v, DType d) {
    return "copy " + to_string(d) + " median of " + std::to_string(v.size()) + " rows >= 4x LLC";
  };
  if (auto it = copy_beyond_llc_gbps.find(t); it != copy_beyond_llc_gbps.end() && !it->second.empty())
    return CopyReference{summarize(it->second).median, describe(it->second, t)};
  // Another dtype's copy moves bytes the same way.
  for (const auto& [d, v] : copy_beyond_llc_gbps)
    if (!v.empty()) return CopyReference{summarize(v).median, describe(v, d)};
  why = llc_bytes > 0 ? "none: no ok copy row with a working set >= 4x the last-level cache (" +
                            format_size(4 * llc_bytes) + ") before this row in the run"
                      : "none: the last-level cache size is unknown";
  return std::nullopt;
}

}  // namespace gpucal::memory
