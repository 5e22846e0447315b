#include "app/common/output_guard.h"

#include <filesystem>
#include <stdexcept>

namespace gpucal::calibration {

namespace fs = std::filesystem;

namespace {
fs::path resolved(const std::string& path) {
  std::error_code ec;
  const fs::path p = fs::weakly_canonical(fs::absolute(path), ec);
  return ec ? fs::absolute(path).lexically_normal() : p;
}

bool read_by_the_command(const fs::path& file, bool reads_calibration_json) {
  const std::string ext = file.extension().string();
  if (ext == ".csv") return true;
  if (ext != ".json") return false;
  if (file.filename() == "calibration.json") return reads_calibration_json;
  fs::path table = file;
  return fs::exists(table.replace_extension(".csv"));
}
}  // namespace

void refuse_output_over_inputs(const std::string& flag, const std::string& out_path,
                               const std::vector<std::string>& input_folders, bool reads_calibration_json) {
  if (out_path.empty()) return;
  const fs::path out = resolved(out_path);
  for (const std::string& folder : input_folders) {
    // An interrupted run's FILE.csv.partial, read by name with the FILE.*.partial beside it.
    if (fs::is_regular_file(folder) && out.parent_path() == resolved(folder).parent_path() &&
        out.extension() == ".partial")
      throw std::invalid_argument(flag + ": '" + out_path + "' is one of the partial files this command reads (" +
                                  folder + "); write the output elsewhere");
    if (folder.empty() || !fs::is_directory(folder)) continue;
    if (out.parent_path() == resolved(folder) && fs::exists(out) && read_by_the_command(out, reads_calibration_json))
      throw std::invalid_argument(flag + ": '" + out_path + "' is one of the results this command reads (" + folder +
                                  "); write the output elsewhere");
  }
}

void refuse_shared_outputs(const std::vector<std::pair<std::string, std::string>>& outputs) {
  for (std::size_t i = 0; i < outputs.size(); ++i)
    for (std::size_t j = i + 1; j < outputs.size(); ++j)
      if (!outputs[i].second.empty() && !outputs[j].second.empty() &&
          resolved(outputs[i].second) == resolved(outputs[j].second))
        throw std::invalid_argument(outputs[i].first + " and " + outputs[j].first + " name the same file '" +
                                    outputs[i].second + "'");
}

}  // namespace gpucal::calibration
