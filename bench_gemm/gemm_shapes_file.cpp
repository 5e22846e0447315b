#include "bench_gemm/gemm_shapes_file.h"

#include "core/errors.h"
#include "core/driver/sweep.h"

namespace gpucal::gemm {

namespace {

const PointsColumns kColumns{{"m", "n", "k", "batch", "dtype", "layout"}, {"m", "n", "k"}};

std::vector<ShapeSpec> shapes_from(const std::vector<std::vector<std::pair<std::string, std::string>>>& rows,
                                   DType default_dtype, const std::string& default_layout) {
  std::vector<ShapeSpec> out;
  for (const auto& row : rows) {
    ShapeSpec s{0, 0, 0, 1, default_dtype, default_layout, ""};
    for (const auto& [col, val] : row) {
      if (col == "m") s.m = parse_size(val, "shapes m", {.min = 1});
      else if (col == "n") s.n = parse_size(val, "shapes n", {.min = 1});
      else if (col == "k") s.k = parse_size(val, "shapes k", {.min = 1});
      else if (col == "batch") s.batch = parse_size(val, "shapes batch", {.min = 1});
      else if (col == "dtype") s.dtype = parse_dtype(val);
      else if (col == "layout") s.layout = parse_word_list(val, "shapes layout", {"NN", "NT", "TN", "TT"}).front();
    }
    out.push_back(s);
  }
  return out;
}

}  // namespace

std::vector<ShapeSpec> parse_shapes_text(const std::string& text, const std::string& source, DType default_dtype,
                                         const std::string& default_layout) {
  return shapes_from(parse_points_text(text, source, kColumns, "--shapes"), default_dtype, default_layout);
}

std::vector<ShapeSpec> read_shapes_file(const std::string& path, DType default_dtype, const std::string& default_layout) {
  return shapes_from(read_points_file(path, kColumns, "--shapes"), default_dtype, default_layout);
}

}  // namespace gpucal::gemm
