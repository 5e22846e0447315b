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
  if (ext == ".csv" || ext == ".partial") return true;
  if (ext != ".json") return false;
  if (file.filename() == "calibration.json") return reads_calibration_json;
  if (file.filename() == "fleet.json") return true;
  fs::path table = file;
  return fs::exists(table.replace_extension(".csv"));
}

// Whether `inner` is `outer` or lies under it (both resolved).
bool under(const fs::path& inner, const fs::path& outer) {
  auto o = outer.begin();
  for (auto i = inner.begin(); o != outer.end(); ++i, ++o)
    if (i == inner.end() || *i != *o) return false;
  return true;
}
}  // namespace

void refuse_shared_outputs(const std::vector<std::pair<std::string, std::string>>& outputs) {
  for (std::size_t i = 0; i < outputs.size(); ++i)
    for (std::size_t j = i + 1; j < outputs.size(); ++j)
      if (!outputs[i].second.empty() && !outputs[j].second.empty() &&
          resolved(outputs[i].second) == resolved(outputs[j].second))
        throw std::invalid_argument(outputs[i].first + " and " + outputs[j].first + " name the same file '" +
                                    outputs[i].second + "'");
}

void refuse_outputs_over_inputs(const std::vector<std::pair<std::string, std::string>>& outputs,
                                const CommandInputs& inputs) {
  for (const auto& [flag, path] : outputs) {
    if (path.empty()) continue;
    const fs::path out = resolved(path);
    for (const std::string& file : inputs.files)
      if (!file.empty() && out == resolved(file))
        throw std::invalid_argument(flag + ": '" + path + "' is " + file +
                                    ", which this command reads; write the output elsewhere");
    for (const std::string& folder : inputs.folders) {
      if (folder.empty()) continue;
      // An interrupted run's FILE.csv.partial, read by name with the FILE.*.partial beside it.
      if (fs::is_regular_file(folder) && out.parent_path() == resolved(folder).parent_path() &&
          out.extension() == ".partial")
        throw std::invalid_argument(flag + ": '" + path + "' is one of the partial files this command reads (" +
                                    folder + "); write the output elsewhere");
      if (!fs::is_directory(folder)) continue;
      if (under(out, resolved(folder)) && fs::is_regular_file(out) &&
          read_by_the_command(out, inputs.reads_calibration_json))
        throw std::invalid_argument(flag + ": '" + path + "' is one of the results this command reads (" + folder +
                                    "); write the output elsewhere");
    }
  }
  refuse_shared_outputs(outputs);
}

void refuse_output_over_inputs(const std::string& flag, const std::string& out_path,
                               const std::vector<std::string>& input_folders, bool reads_calibration_json) {
  refuse_outputs_over_inputs({{flag, out_path}}, {.folders = input_folders, .reads_calibration_json = reads_calibration_json});
}

}  // namespace gpucal::calibration
