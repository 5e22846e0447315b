// --shapes FILE.csv: GEMM shapes as rows instead of axes. Columns m, n, k (required),
// batch, dtype, layout (optional: 1 and the first --dtype / --layout). Every cell is
// checked as its flag would be; unknown or repeated columns and empty files are errors.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/backend/dtype.h"

namespace gpucal::gemm {

struct ShapeSpec {
  int64_t m, n, k, batch;
  DType dtype;
  std::string layout;
  std::string note;
};

// Throws UsageError naming the file, line and cell.
std::vector<ShapeSpec> parse_shapes_text(const std::string& text, const std::string& source, DType default_dtype,
                                         const std::string& default_layout);
std::vector<ShapeSpec> read_shapes_file(const std::string& path, DType default_dtype, const std::string& default_layout);

}  // namespace gpucal::gemm
