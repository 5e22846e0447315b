// A registry shown as a table: `gpucal list WHAT` (app/list/list_command.h) and the benches'
// --list-impls print one, as aligned plain text for a terminal or, with --markdown, as a GitHub
// markdown table. The docs' tables of choices are such output, pasted between
// `<!-- generated: COMMAND -->` and `<!-- end generated -->` and re-run by
// tests/docs/check_docs.py, so a table in the docs is never retyped from a registry.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace gpucal::registry {

struct Listing {
  std::vector<std::string> columns;  // the headers; the first column holds the row's name
  std::vector<std::vector<std::string>> rows{};
  // Columns whose markdown cells are code spans (names, formulas); the first always is.
  std::vector<size_t> code_columns{};
};

// A header line, then one line per row: each column padded to its widest cell, two spaces
// apart, the last one unpadded. Ends with a newline.
std::string plain_table(const Listing& table);
// "| a | b |", "| --- | --- |", a line per row. Code cells in backticks; '|' escaped in every
// cell, and '\', '*' and '<' in the others, so that a help text renders as it reads. Ends with
// a newline.
std::string markdown_table(const Listing& table);
inline std::string format_table(const Listing& table, bool markdown) {
  return markdown ? markdown_table(table) : plain_table(table);
}

// One row of a bench's implementation registry (bench_gemm, bench_attention, bench_memory), as
// its --list-impls shows it.
struct ImplRow {
  std::string name, backends, help;
  std::string needs{};    // what a build must have found at configure time to have it ("": always built)
  std::string missing{};  // why this build lacks it ("": built)
  std::string extra{};    // the registry's own column, where it has one (bench_memory: the kernels)
};

// What a build must have for an implementation (its registry row's `needs`), one wording each.
namespace needs {
constexpr std::string_view kCuda = "a CUDA build (-DGPUCAL_CUDA=ON)";
constexpr std::string_view kCudaOrHip = "a CUDA or HIP build (-DGPUCAL_CUDA=ON or -DGPUCAL_HIP=ON)";
constexpr std::string_view kCudnn = "a CUDA build (-DGPUCAL_CUDA=ON) with cuDNN found at configure time";
constexpr std::string_view kHipblaslt = "a HIP build (-DGPUCAL_HIP=ON) with hipBLASLt found at configure time";
}  // namespace needs

// The row of an implementation registry's entry (its name, help, needs and missing), with its
// backends as the caller words them.
template <class Impl>
ImplRow impl_row(const Impl& impl, std::string backends) {
  return {.name = std::string(impl.name), .backends = std::move(backends), .help = std::string(impl.help),
          .needs = std::string(impl.needs), .missing = std::string(impl.missing)};
}

// --list-impls: impl, backend, help (and the extra column); plain text then says which rows this
// build has, and why it lacks the others. --markdown gives instead what a build needs for each
// row, so that the docs read the same whichever build generated them.
std::string impl_table(const std::vector<ImplRow>& rows, bool markdown, const std::string& extra_column = "");

// "a, b, c"
std::string join(const std::vector<std::string>& words, const std::string& separator = ", ");

}  // namespace gpucal::registry
