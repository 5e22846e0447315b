// The fp64 host reference of every bench_memory kernel, computed from the tensors as stored
// (inputs converted exactly to double), written from the formulas independently of the
// fp32 implementations. Work is divided in units: an element (elementwise and STREAM
// kernels, AdamW), a partial sum (read), a row (norms, softmax, cross-entropy) and, for
// the norm backward passes, also a column (dgamma, dbeta sum over rows).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "bench_memory/launch_args.h"

namespace gpucal::memory {

// Element i of a tensor as double, read from host memory or from another source (values
// regenerated from their seed, device memory fetched page by page).
class ElementSource {
 public:
  virtual ~ElementSource() = default;
  virtual double at(int64_t i) const = 0;
};

class HostView {
 public:
  HostView() = default;
  HostView(const void* data, DType type) : data_(static_cast<const unsigned char*>(data)), type_(type) {}
  explicit HostView(std::shared_ptr<const ElementSource> source) : source_(std::move(source)) {}
  double at(int64_t i) const;

 private:
  const unsigned char* data_ = nullptr;
  DType type_ = DType::fp32;
  std::shared_ptr<const ElementSource> source_;
};

// The values Backend::fill_random(seed, lo, hi) stores, as the stored type reads them back.
std::shared_ptr<const ElementSource> generated_source(uint64_t seed, double lo, double hi, DType type);

// One expected output element: the exact value and the magnitude of the terms it is made
// of (the scale its rounding errors are measured against), or exact (must match bit for bit
// after conversion to double: copies, masks, fma_chain).
struct Expected {
  int tensor = 0;  // index in the kernel's tensor list
  int64_t index = 0;
  double value = 0, magnitude = 0;
  int64_t reduction_length = 1;  // terms summed into it (for the tolerance)
  bool exact = false;
};

int64_t reference_units(const KernelDesc& k, const Dims& d);
// fp64 operations one unit costs (for the verification budget).
double reference_unit_cost(const KernelDesc& k, const Dims& d, int64_t unit);
// Appends the expected outputs of one unit. `tensors` are all of the kernel's tensors in
// table order, as they were before the launch (inputs) — outputs are not read.
void reference_unit(const KernelDesc& k, const Dims& d, const Scalars& s, const std::vector<HostView>& tensors,
                    int64_t unit, std::vector<Expected>& out);

}  // namespace gpucal::memory
