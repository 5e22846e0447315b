#include "core/formulas/kernel_table.h"

#include <algorithm>
#include <utility>

#include "core/errors.h"

namespace gpucal::memory {

namespace {

using E = Extent;
using A = Access;

// Input ranges: [-1, 1) for activations and gradients; logits in [-4, 4) so a softmax row is
// peaked; statistics where their meaning asks (rstd > 0, v > 0, lse above log(vocab)).
constexpr double kSigned = 1.0;

TensorSpec in(const char* name, Extent e, double lo = -kSigned, double hi = kSigned, Elem el = Elem::data) {
  return {name, e, el, A::read, lo, hi};
}
TensorSpec out(const char* name, Extent e, Elem el = Elem::data) { return {name, e, el, A::write, 0, 0}; }
TensorSpec inout(const char* name, Extent e, double lo, double hi) { return {name, e, Elem::data, A::read_write, lo, hi}; }

static_assert(kFmaSteps == 4097, "fma_chain's computes text below names the step count");

std::vector<KernelDesc> build_table() {
  return {
      {.id = Kernel::copy, .name = "copy", .family = Family::stream, .shape = Shape::elements,
       .tensors = {in("a", E::n), out("c", E::n)}, .computes = "c = a"},
      {.id = Kernel::scale, .name = "scale", .family = Family::stream, .shape = Shape::elements,
       .tensors = {in("c", E::n), out("b", E::n)}, .computes = "b = q*c (q = 3)"},
      {.id = Kernel::add, .name = "add", .family = Family::stream, .shape = Shape::elements,
       .tensors = {in("a", E::n), in("b", E::n), out("c", E::n)}, .computes = "c = a + b"},
      {.id = Kernel::triad, .name = "triad", .family = Family::stream, .shape = Shape::elements,
       .tensors = {in("b", E::n), in("c", E::n), out("a", E::n)}, .computes = "a = b + q*c (q = 3)"},
      {.id = Kernel::read, .name = "read", .family = Family::stream, .shape = Shape::elements,
       .tensors = {in("a", E::n), out("sums", E::read_slots, Elem::f32)},
       .computes = "sums[p] = sum of a over chunk p of ceil(n/slots) elements, slots = min(1024, max(1, n/4096)) "
                   "(fp32 accumulation)"},
      {.id = Kernel::fma_chain, .name = "fma_chain", .family = Family::vector, .shape = Shape::elements,
       .tensors = {in("x", E::n), out("y", E::n)},
       .computes = "y = x after kFmaSteps (4097) dependent x = x*m + c (m = -1, c = 0 at run time: exact in every "
                   "dtype); 2 flop per step"},
      {.id = Kernel::layernorm_fwd, .name = "layernorm_fwd", .family = Family::op, .shape = Shape::rows_cols,
       .tensors = {in("x", E::rows_cols), in("gamma", E::cols, 0.5, 1.5), in("beta", E::cols), out("y", E::rows_cols),
                   out("mean", E::rows, Elem::f32), out("rstd", E::rows, Elem::f32)},
       .computes = "y = (x - mean) * rstd * gamma + beta per row; mean, rstd = 1/sqrt(var + eps) saved"},
      {.id = Kernel::layernorm_bwd, .name = "layernorm_bwd", .family = Family::op, .shape = Shape::rows_cols,
       .tensors = {in("dy", E::rows_cols), in("x", E::rows_cols), in("gamma", E::cols, 0.5, 1.5),
                   in("mean", E::rows, -0.1, 0.1, Elem::f32), in("rstd", E::rows, 0.5, 2.0, Elem::f32),
                   out("dx", E::rows_cols), out("dgamma", E::cols), out("dbeta", E::cols)},
       .computes = "dx = rstd*(g - mean(g) - xhat*mean(g*xhat)), g = dy*gamma; dgamma = sum_rows dy*xhat; "
                   "dbeta = sum_rows dy"},
      {.id = Kernel::rmsnorm_fwd, .name = "rmsnorm_fwd", .family = Family::op, .shape = Shape::rows_cols,
       .tensors = {in("x", E::rows_cols), in("gamma", E::cols, 0.5, 1.5), out("y", E::rows_cols),
                   out("rstd", E::rows, Elem::f32)},
       .computes = "y = x * rstd * gamma, rstd = 1/sqrt(mean(x^2) + eps) saved"},
      {.id = Kernel::rmsnorm_bwd, .name = "rmsnorm_bwd", .family = Family::op, .shape = Shape::rows_cols,
       .tensors = {in("dy", E::rows_cols), in("x", E::rows_cols), in("gamma", E::cols, 0.5, 1.5),
                   in("rstd", E::rows, 0.5, 2.0, Elem::f32), out("dx", E::rows_cols), out("dgamma", E::cols)},
       .computes = "dx = rstd*(g - xhat*mean(g*xhat)), g = dy*gamma, xhat = x*rstd; dgamma = sum_rows dy*xhat"},
      {.id = Kernel::softmax_fwd, .name = "softmax_fwd", .family = Family::op, .shape = Shape::rows_cols,
       .tensors = {in("x", E::rows_cols, -4, 4), out("y", E::rows_cols)}, .computes = "y = softmax(x) per row"},
      {.id = Kernel::softmax_bwd, .name = "softmax_bwd", .family = Family::op, .shape = Shape::rows_cols,
       .tensors = {in("y", E::rows_cols, 0, 1), in("dy", E::rows_cols), out("dx", E::rows_cols)},
       .computes = "dx = y * (dy - sum(dy*y)) per row"},
      {.id = Kernel::gelu_fwd, .name = "gelu_fwd", .family = Family::op, .shape = Shape::rows_cols,
       .tensors = {in("x", E::rows_cols, -4, 4), out("y", E::rows_cols)},
       .computes = "y = x * Phi(x) (exact erf form, torch's default)"},
      {.id = Kernel::gelu_bwd, .name = "gelu_bwd", .family = Family::op, .shape = Shape::rows_cols,
       .tensors = {in("x", E::rows_cols, -4, 4), in("dy", E::rows_cols), out("dx", E::rows_cols)},
       .computes = "dx = dy * (Phi(x) + x*phi(x))"},
      {.id = Kernel::swiglu_fwd, .name = "swiglu_fwd", .family = Family::op, .shape = Shape::rows_cols,
       .tensors = {in("a", E::rows_cols, -4, 4), in("b", E::rows_cols), out("y", E::rows_cols)},
       .computes = "y = silu(a) * b (a: gate, b: up)"},
      {.id = Kernel::swiglu_bwd, .name = "swiglu_bwd", .family = Family::op, .shape = Shape::rows_cols,
       .tensors = {in("a", E::rows_cols, -4, 4), in("b", E::rows_cols), in("dy", E::rows_cols), out("da", E::rows_cols),
                   out("db", E::rows_cols)},
       .computes = "da = dy*b*sigmoid(a)*(1 + a*(1 - sigmoid(a))), db = dy*silu(a)"},
      {.id = Kernel::residual_add, .name = "residual_add", .family = Family::op, .shape = Shape::rows_cols,
       .tensors = {in("x", E::rows_cols), in("r", E::rows_cols), out("y", E::rows_cols)}, .computes = "y = x + r"},
      {.id = Kernel::dropout_residual_add, .name = "dropout_residual_add", .family = Family::op,
       .shape = Shape::rows_cols,
       .tensors = {in("x", E::rows_cols), in("r", E::rows_cols), out("y", E::rows_cols),
                   out("mask", E::rows_cols, Elem::u8)},
       .computes = "y = r + x * mask / (1 - p), mask = keep(seed, i) (p = 0.1), mask saved as bytes"},
      {.id = Kernel::cross_entropy_fwd, .name = "cross_entropy_fwd", .family = Family::op, .shape = Shape::rows_cols,
       .tensors = {in("logits", E::rows_cols, -4, 4), in("target", E::rows, 0, 0, Elem::i32),
                   out("loss", E::rows, Elem::f32), out("lse", E::rows, Elem::f32)},
       .computes = "lse = logsumexp(logits row), loss = lse - logits[target] (per row; cols = vocabulary)"},
      {.id = Kernel::cross_entropy_bwd, .name = "cross_entropy_bwd", .family = Family::op, .shape = Shape::rows_cols,
       .tensors = {in("logits", E::rows_cols, -4, 4), in("target", E::rows, 0, 0, Elem::i32),
                   in("lse", E::rows, 11, 12, Elem::f32), out("dlogits", E::rows_cols)},
       .computes = "dlogits = (exp(logits - lse) - onehot(target)) / rows (mean reduction, upstream grad 1)"},
      {.id = Kernel::adamw_step, .name = "adamw_step", .family = Family::op, .shape = Shape::params,
       .tensors = {inout("p", E::n, -1, 1), in("g", E::n), inout("m", E::n, -0.1, 0.1), inout("v", E::n, 0.01, 0.1)},
       .computes = "m = b1 m + (1-b1) g; v = b2 v + (1-b2) g^2; p -= lr (m/bc1 / (sqrt(v/bc2) + eps) + wd p), in place "
                   "(torch.optim.AdamW; lr 0.02, b1 0.9, b2 0.95, eps 1e-8, wd 0.1, step 10)"},
  };
}

}  // namespace

const std::vector<KernelDesc>& kernel_table() {
  static const std::vector<KernelDesc> t = build_table();
  return t;
}

const KernelDesc& kernel_desc(Kernel k) {
  for (const auto& d : kernel_table())
    if (d.id == k) return d;
  throw std::logic_error("kernel_desc: kernel missing from the table");
}

std::vector<std::string> kernel_names() {
  std::vector<std::string> names;
  for (const auto& d : kernel_table()) names.push_back(d.name);
  return names;
}

const KernelDesc& find_kernel(const std::string& name) {
  for (const auto& d : kernel_table())
    if (name == d.name) return d;
  std::string known;
  for (const auto& n : kernel_names()) known += (known.empty() ? "" : ", ") + n;
  throw UsageError("--kernel: unknown kernel '" + name + "' (known: " + known + ")");
}

namespace {
constexpr std::pair<Family, std::string_view> kFamilyWords[] = {
    {Family::stream, "stream"}, {Family::vector, "vector"}, {Family::op, "ops"}};
}  // namespace

std::string_view family_word(Family f) {
  for (const auto& [family, word] : kFamilyWords)
    if (family == f) return word;
  throw std::logic_error("family_word: family missing from the table");
}

std::optional<Family> family_of_word(std::string_view word) {
  for (const auto& [family, w] : kFamilyWords)
    if (w == word) return family;
  return std::nullopt;
}

int64_t read_slots(int64_t n) { return std::clamp<int64_t>(n / 4096, 1, 1024); }
int64_t read_chunk(int64_t n) { return (n + read_slots(n) - 1) / read_slots(n); }

int64_t extent_elements(Extent e, const Dims& d) {
  switch (e) {
    case Extent::n: return d.n;
    case Extent::rows_cols: return d.rows * d.cols;
    case Extent::cols: return d.cols;
    case Extent::rows: return d.rows;
    case Extent::read_slots: return read_slots(d.n);
  }
  return 0;
}

DType elem_dtype(Elem e, DType data) {
  switch (e) {
    case Elem::data: return data;
    case Elem::f32: return DType::fp32;
    case Elem::i32: return DType::int32;
    case Elem::u8: return DType::uint8;
  }
  return data;
}

size_t elem_bytes(Elem e, DType data) { return dtype_bytes(elem_dtype(e, data)); }

int64_t bytes_moved(const KernelDesc& k, const Dims& d, DType data) {
  int64_t total = 0;
  for (const auto& t : k.tensors) {
    const int64_t bytes = extent_elements(t.extent, d) * static_cast<int64_t>(elem_bytes(t.elem, data));
    total += bytes * (t.access == Access::read_write ? 2 : 1);
  }
  return total;
}

std::string bytes_formula(const KernelDesc& k) {
  // One term per (extent, dtype-sized or not), in the order of the Extent enum, dtype-sized first.
  struct Term {
    Extent extent;
    bool data;
    int64_t coefficient;
  };
  std::vector<Term> terms;
  for (const auto& t : k.tensors) {
    const bool data = t.elem == Elem::data;
    const int64_t times = (t.access == Access::read_write ? 2 : 1) *
                          (data ? 1 : static_cast<int64_t>(elem_bytes(t.elem, DType::fp32)));
    auto same = [&](const Term& x) { return x.extent == t.extent && x.data == data; };
    if (auto it = std::find_if(terms.begin(), terms.end(), same); it != terms.end())
      it->coefficient += times;
    else
      terms.push_back({t.extent, data, times});
  }
  std::stable_sort(terms.begin(), terms.end(), [](const Term& a, const Term& b) {
    return a.extent != b.extent ? a.extent < b.extent : a.data > b.data;
  });
  std::string out;
  for (const Term& t : terms) {
    static const char* const kSymbols[] = {"n", "RC", "C", "R", "slots"};
    std::string symbol = kSymbols[static_cast<int>(t.extent)];
    if (t.data) symbol += t.extent == Extent::read_slots ? "*s" : "s";
    const bool word = t.extent == Extent::read_slots;
    out += (out.empty() ? "" : " + ") +
           (t.coefficient == 1 ? symbol : std::to_string(t.coefficient) + (word ? "*" : "") + symbol);
  }
  return out;
}

int64_t working_set_bytes(const KernelDesc& k, const Dims& d, DType data) {
  int64_t total = 0;
  for (const auto& t : k.tensors)
    total += extent_elements(t.extent, d) * static_cast<int64_t>(elem_bytes(t.elem, data));
  return total;
}

int64_t main_elements(const KernelDesc& k, const Dims& d) { return k.shape == Shape::rows_cols ? d.rows * d.cols : d.n; }

double fma_chain_flops(int64_t n) { return 2.0 * static_cast<double>(n) * kFmaSteps; }

std::vector<int> output_tensors(const KernelDesc& k) {
  std::vector<int> outs;
  for (size_t i = 0; i < k.tensors.size(); ++i)
    if (k.tensors[i].access != Access::read) outs.push_back(static_cast<int>(i));
  return outs;
}

StreamOperands stream_operands(const KernelDesc& k) {
  StreamOperands o;
  for (size_t i = 0; i < k.tensors.size(); ++i) {
    const int t = static_cast<int>(i);
    if (k.tensors[i].access != Access::write) (o.x < 0 ? o.x : o.y) = t;
    if (k.tensors[i].access != Access::read) o.out = t;
  }
  return o;
}

}  // namespace gpucal::memory
