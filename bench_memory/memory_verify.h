// Verification of one launch against the fp64 reference: which units to check (all of
// them when the reference is cheap, else corners plus a seeded sample), the tolerance of
// each output element, and the comparison.
//
// Error of an element: |got - ref| / (|ref| + magnitude), magnitude being the size of the
// terms the value is made of (memory_reference.h); NaN (poison left in place) is infinite.
// Tolerance: 2 u_out + (8 + 16 sqrt(L)) u_fp32, u_out the unit roundoff of the stored type
// (bf16 2^-8, fp16 2^-11, fp32 2^-24), L the number of terms summed into the element (1 for
// elementwise kernels, cols for row reductions, rows for dgamma/dbeta): rounding of the
// output, a few fp32 operations, and the statistical growth of an fp32 sum. Copies, masks and
// fma_chain are exact and must match bit for bit. An error is first reduced by the spacing of
// the stored type's subnormals (fp16: 2^-24), which tiny values are rounded to.
#pragma once

#include <cstdint>
#include <vector>

#include "bench_memory/memory_reference.h"
#include "core/driver/op.h"

namespace gpucal::memory {

struct VerifyPlan {
  std::vector<int64_t> units;
  bool all = false;
};
// budget: fp64 reference operations allowed per point.
VerifyPlan plan_verification(const KernelDesc& k, const Dims& d, uint64_t seed, double budget = 3e7);

double element_tolerance(DType stored, int64_t reduction_length);
// The spacing of the stored type's subnormals, subtracted from an error before it is
// normalized (a tiny value rounds to it whatever its relative error).
double subnormal_spacing(DType stored);

// `inputs`: every tensor as it was before the launch (outputs are not read from it);
// `outputs`: every tensor after the launch (inputs are not read from it).
Verification check_outputs(const KernelDesc& k, const Dims& d, DType data, const Scalars& s,
                           const std::vector<HostView>& inputs, const std::vector<HostView>& outputs,
                           const VerifyPlan& plan, int64_t* checked_elements = nullptr);

}  // namespace gpucal::memory
