#include "bench_memory/memory_verify.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <sstream>

#include "core/backend/element_convert.h"
#include "core/output/row.h"

namespace gpucal::memory {

VerifyPlan plan_verification(const KernelDesc& k, const Dims& d, uint64_t seed, double budget) {
  VerifyPlan plan;
  const int64_t units = reference_units(k, d);
  double total = 0, worst = 0;
  // Units of one kind cost the same; the first and the last unit cover both kinds.
  for (int64_t u : {int64_t{0}, units - 1}) worst = std::max(worst, reference_unit_cost(k, d, u));
  if (k.id == Kernel::layernorm_bwd || k.id == Kernel::rmsnorm_bwd)
    total = 3.0 * static_cast<double>(d.rows) * static_cast<double>(d.cols) +
            static_cast<double>(d.cols) * static_cast<double>(d.rows);
  else
    total = static_cast<double>(units) * reference_unit_cost(k, d, 0);
  if (total <= budget) {
    plan.all = true;
    plan.units.resize(static_cast<size_t>(units));
    for (int64_t u = 0; u < units; ++u) plan.units[static_cast<size_t>(u)] = u;
    return plan;
  }
  // Corners (unit 0 holds element 0, where --inject-fault writes; the last unit the tail),
  // the first column unit of the norm backward passes, then a seeded uniform sample.
  std::set<int64_t> picked{0, units - 1};
  if (k.id == Kernel::layernorm_bwd || k.id == Kernel::rmsnorm_bwd) picked.insert(d.rows);
  const auto n = static_cast<size_t>(std::clamp(budget / std::max(worst, 1.0), 16.0, 65536.0));
  for (size_t i = 0; i < n; ++i)
    picked.insert(std::min(units - 1, static_cast<int64_t>(elem::uniform01(seed ^ 0x6d656d, i) * static_cast<double>(units))));
  plan.units.assign(picked.begin(), picked.end());
  return plan;
}

double subnormal_spacing(DType stored) {
  switch (stored) {
    case DType::fp16: return std::ldexp(1.0, -24);
    case DType::bf16: return std::ldexp(1.0, -133);
    case DType::fp32: return std::ldexp(1.0, -149);
    default: return 0;
  }
}

double element_tolerance(DType stored, int64_t reduction_length) {
  const double u32 = dtype_unit_roundoff(DType::fp32);
  return 2 * dtype_unit_roundoff(stored) + (8 + 16 * std::sqrt(static_cast<double>(reduction_length))) * u32;
}

Verification check_outputs(const KernelDesc& k, const Dims& d, DType data, const Scalars& s,
                           const std::vector<HostView>& inputs, const std::vector<HostView>& outputs,
                           const VerifyPlan& plan, int64_t* checked_elements) {
  double max_err = 0;
  int64_t checked = 0, bad = 0;
  std::map<std::string, int64_t> bad_by_tensor;
  std::string first_bad;
  std::vector<Expected> expected;
  for (int64_t unit : plan.units) {
    expected.clear();
    reference_unit(k, d, s, inputs, unit, expected);
    for (const Expected& e : expected) {
      const TensorSpec& spec = k.tensors[static_cast<size_t>(e.tensor)];
      const double got = outputs[static_cast<size_t>(e.tensor)].at(e.index);
      double err;
      bool ok;
      if (e.exact) {
        ok = got == e.value;
        err = ok ? 0.0 : std::numeric_limits<double>::infinity();
      } else {
        const DType stored = elem_dtype(spec.elem, data);
        // Values below the normal range are rounded to a fixed absolute spacing.
        const double diff = std::max(0.0, std::fabs(got - e.value) - subnormal_spacing(stored));
        err = diff / std::max(std::fabs(e.value) + e.magnitude, 1e-300);
        if (std::isnan(got)) err = std::numeric_limits<double>::infinity();
        ok = err <= element_tolerance(stored, e.reduction_length);
      }
      ++checked;
      max_err = std::max(max_err, err);
      if (!ok) {
        ++bad;
        ++bad_by_tensor[spec.name];
        if (first_bad.empty()) {
          std::ostringstream m;
          m << spec.name << "[" << e.index << "] = " << format_number(got) << ", expected " << format_number(e.value);
          first_bad = m.str();
        }
      }
    }
  }
  if (checked_elements) *checked_elements = checked;
  Verification v;
  v.max_rel_err = max_err;
  v.status = bad == 0 ? "ok" : "fail";
  if (bad) {
    std::ostringstream m;
    m << bad << " of " << checked << " checked elements outside tolerance (";
    bool first = true;
    for (const auto& [name, count] : bad_by_tensor) m << (first ? "" : ", ") << name << ": " << count, first = false;
    m << "; first: " << first_bad << ")";
    v.detail = m.str();
  }
  return v;
}

}  // namespace gpucal::memory
