#include "bench_gemm/gemm_problem.h"

#include <cmath>

#include "harness/errors.h"

namespace gpucal::gemm {

double GemmProblem::flops() const {
  return 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k) * static_cast<double>(batch);
}

double GemmProblem::bytes() const {
  const double in = static_cast<double>(dtype_bytes(input)), out = static_cast<double>(dtype_bytes(output));
  const double per = in * static_cast<double>(a_elems() + b_elems()) + out * static_cast<double>(c_elems()) *
                                                                          (beta != 0.0 ? 2.0 : 1.0);
  return per * static_cast<double>(batch);
}

std::string GemmProblem::point(const std::string& impl, const std::string& regime) const {
  std::string p = "gemm/" + impl + "/" + to_string(math == DType::tf32 ? DType::tf32 : input) + "/" + layout + "/m" +
                  std::to_string(m) + "/n" + std::to_string(n) + "/k" + std::to_string(k) + "/b" +
                  std::to_string(batch);
  if (beta != 0.0) p += "/beta" + format_number(beta);
  if (alpha != 1.0) p += "/alpha" + format_number(alpha);
  return p + "/" + regime;
}

void GemmProblem::describe(Row& row) const {
  row.set("dtype", to_string(math == DType::tf32 ? DType::tf32 : input))
      .set("compute_type", to_string(math == DType::fp64 ? DType::fp64 : (math == DType::int8 ? DType::int32 : DType::fp32)))
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
}

GemmProblem make_problem(DType requested, const std::string& layout, int64_t m, int64_t n, int64_t k,
                         int64_t batch, double alpha, double beta) {
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
  switch (requested) {
    case DType::tf32:
      p.input = p.output = DType::fp32;
      p.math = DType::tf32;
      break;
    case DType::fp64:
    case DType::fp32:
    case DType::fp16:
    case DType::bf16:
      p.input = p.output = p.math = requested;
      break;
    default:
      throw UsageError("bench_gemm: dtype " + to_string(requested) + " is not supported yet (fp64, fp32, tf32, fp16, bf16)");
  }
  return p;
}

double tolerance(const GemmProblem& p) {
  const double u_out = dtype_unit_roundoff(p.output);
  const double u_math = p.math == p.input ? 0.0 : dtype_unit_roundoff(p.math);
  const double u_acc = dtype_unit_roundoff(p.math == DType::fp64 ? DType::fp64 : DType::fp32);
  return 2 * u_out + 2 * u_math + 4 * std::sqrt(static_cast<double>(p.k)) * u_acc;
}

}  // namespace gpucal::gemm
