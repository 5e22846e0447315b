// One bench_memory point: a kernel, a storage dtype and its dimensions; its stable key and
// its parameter cells. Also what the points of one run share (RunContext): the device's
// cache levels and the copy bandwidth measured so far, which the later rows divide by.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "bench_memory/cache_levels.h"
#include "core/formulas/kernel_table.h"
#include "core/output/row.h"

namespace gpucal::memory {

struct MemoryPoint {
  Kernel kernel = Kernel::copy;
  DType dtype = DType::fp32;
  Dims dims;
  const KernelDesc& desc() const { return kernel_desc(kernel); }
  // memory/<impl>/<kernel>/<dtype>/<shape>/<regime>; shape: STREAM <array bytes> (4K, 1M),
  // fma_chain n<elements>, row kernels r<rows>/c<cols>, AdamW p<params>.
  std::string key(const std::string& impl, const std::string& regime) const;
  // Bytes per array of the STREAM kernels (n x element size).
  int64_t array_bytes() const;
  void describe(Row& row) const;
};

// The copy bandwidth an op row is compared with: the median of this run's `copy` rows whose
// working set is at least 4x the last-level cache (the memory plateau), same dtype first.
struct CopyReference {
  double gbps = 0;
  std::string describe;
};

struct RunContext {
  std::vector<CacheLevel> caches;
  int64_t llc_bytes = 0;
  std::map<DType, std::vector<double>> copy_beyond_llc_gbps;
  void record_copy(DType t, int64_t working_set, double gbps);
  // nullopt with `why` set when no copy row qualifies.
  std::optional<CopyReference> copy_reference(DType t, std::string& why) const;
  bool beyond_llc(int64_t working_set) const { return llc_bytes > 0 && working_set >= 4 * llc_bytes; }
};

}  // namespace gpucal::memory
