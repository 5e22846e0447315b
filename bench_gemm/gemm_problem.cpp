#include "bench_gemm/gemm_problem.h"

#include <cmath>

#include "bench_gemm/gemm_formulas.h"
#include "core/errors.h"

namespace gpucal::gemm {

DType GemmProblem::compute_type() const {
  if (math == DType::fp64) return DType::fp64;
  if (math == DType::int8) return DType::int32;
  return DType::fp32;
}

double GemmProblem::flops() const {
  return 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k) * static_cast<double>(batch);
}

double GemmProblem::bytes() const {
  // Products in doubles: m*k of a huge shape overflows 64-bit integers (a_elems() is for
  // shapes that passed the memory check).
  const double md = static_cast<double>(m), nd = static_cast<double>(n), kd = static_cast<double>(k);
  const double out = static_cast<double>(dtype_bytes(output));
  const double per = static_cast<double>(dtype_bytes(input)) * md * kd +
                     static_cast<double>(dtype_bytes(input_b)) * kd * nd + out * md * nd * (beta != 0.0 ? 2.0 : 1.0);
  return per * static_cast<double>(batch);
}

std::string GemmProblem::point(const std::string& impl, const std::string& regime, const std::string& variant) const {
  std::string p = "gemm/" + impl + "/" + to_string(user_dtype()) + "/" + layout + "/m" + std::to_string(m) + "/n" +
                  std::to_string(n) + "/k" + std::to_string(k) + "/b" + std::to_string(batch);
  if (output != default_output(user_dtype())) p += "/out" + to_string(output);
  if (beta != 0.0) p += "/beta" + format_number(beta);
  if (alpha != 1.0) p += "/alpha" + format_number(alpha);
  if (!variant.empty()) p += "/" + variant;
  return p + "/" + regime;
}

void GemmProblem::describe(Row& row) const {
  row.set("dtype", to_string(user_dtype()))
      .set("compute_type", to_string(compute_type()))
      .set("math_type", to_string(math))
      .set("out_dtype", to_string(output))
      .set("layout", layout)
      .set("m", m)
      .set("n", n)
      .set("k", k)
      .set("batch", batch)
      .set("alpha", alpha)
      .set("beta", beta)
      .set("flops", flops())
      .set("flop_convention", "2mnk")
      .set("bytes", bytes())
      .set("arith_intensity_flop_per_byte", arithmetic_intensity());
  if (is_fp8()) {
    row.set("b_dtype", to_string(input_b)).set("scale_a", scale_a).set("scale_b", scale_b);
  }
}

DType default_output(DType requested) {
  switch (requested) {
    case DType::tf32: return DType::fp32;
    case DType::fp8_e4m3:
    case DType::fp8_e5m2: return DType::bf16;
    case DType::int8: return DType::int32;
    default: return requested;
  }
}

GemmProblem make_problem(DType requested, const std::string& layout, int64_t m, int64_t n, int64_t k,
                         int64_t batch, double alpha, double beta, std::optional<DType> output) {
  if (layout.size() != 2 || (layout[0] != 'N' && layout[0] != 'T') || (layout[1] != 'N' && layout[1] != 'T'))
    throw UsageError("--layout: expected NN, NT, TN or TT, got '" + layout + "'");
  if (m < 1 || n < 1 || k < 1 || batch < 1) throw UsageError("GEMM dimensions and batch must be at least 1");
  GemmProblem p;
  p.layout = layout;
  p.m = m;
  p.n = n;
  p.k = k;
  p.batch = batch;
  p.alpha = alpha;
  p.beta = beta;
  const DType out = output.value_or(default_output(requested));
  auto bad_output = [&](const char* allowed) {
    return UsageError("--out-dtype " + to_string(out) + " is not offered for " + to_string(requested) + " (allowed: " +
                      allowed + ")");
  };
  switch (requested) {
    case DType::tf32:
      p.input = p.input_b = DType::fp32;
      p.math = DType::tf32;
      if (out != DType::fp32) throw bad_output("fp32");
      break;
    case DType::fp64:
    case DType::fp32:
      p.input = p.input_b = p.math = requested;
      if (out != requested) throw bad_output(to_string(requested).c_str());
      break;
    case DType::fp16:
    case DType::bf16:
      p.input = p.input_b = p.math = requested;
      if (out != requested && out != DType::fp32) throw bad_output((to_string(requested) + ", fp32").c_str());
      break;
    case DType::fp8_e4m3:
    case DType::fp8_e5m2:
      p.input = p.math = requested;
      p.input_b = DType::fp8_e4m3;
      if (out != DType::bf16 && out != DType::fp16 && out != DType::fp32) throw bad_output("bf16, fp16, fp32");
      // Rounded to float: the libraries read fp32 scales, and the reference uses the same values.
      p.scale_a = static_cast<float>(fp8_scale(kFp8InputAmax, p.input));
      p.scale_b = static_cast<float>(fp8_scale(kFp8InputAmax, p.input_b));
      break;
    case DType::int8:
      p.input = p.input_b = p.math = DType::int8;
      if (out != DType::int32) throw bad_output("int32");
      if (alpha != std::floor(alpha) || beta != std::floor(beta))
        throw UsageError("int8 GEMM scales by integers (int32 compute): --alpha and --beta must be whole numbers");
      break;
    default:
      throw UsageError("bench_gemm: dtype " + to_string(requested) +
                       " is not a GEMM input (fp64, fp32, tf32, fp16, bf16, fp8_e4m3, fp8_e5m2, int8)");
  }
  p.output = out;
  return p;
}

double tolerance(const GemmProblem& p, bool gpu_reference) {
  if (p.math == DType::int8) return 0.0;  // integer products and sums are exact in int32 and double
  const double u_out = dtype_unit_roundoff(p.output);
  // Inputs are rounded to the math type only for tf32; fp8 inputs are exact as stored.
  const double u_math = p.math == DType::tf32 ? dtype_unit_roundoff(DType::tf32) : 0.0;
  const double u_acc = p.math == DType::fp64 ? dtype_unit_roundoff(DType::fp64)
                       : p.is_fp8()          ? std::ldexp(1.0, -14)
                                             : dtype_unit_roundoff(DType::fp32);
  const double sqrt_k = std::sqrt(static_cast<double>(p.k));
  double tol = 2 * u_out + 2 * u_math + 4 * sqrt_k * u_acc;
  if (gpu_reference) tol += 4 * sqrt_k * dtype_unit_roundoff(p.math == DType::fp64 ? DType::fp64 : DType::fp32);
  return tol;
}

}  // namespace gpucal::gemm
