// Helpers shared by the calibration tests: a fresh temporary folder per test, file reading,
// splitting output into lines, running the gpucal binary.
#pragma once
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace gpucal::calibration::testing {

inline std::string fresh_temp_dir(const std::string& tag = "") {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  const std::filesystem::path dir = std::filesystem::temp_directory_path() /
                                    ("gpucal_test_" + std::to_string(::getpid()) + "_" + info->test_suite_name() +
                                     "_" + info->name() + (tag.empty() ? "" : "_" + tag));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir.string();
}

inline std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// The text's lines, without their newlines.
inline std::vector<std::string> text_lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

// Runs a shell command, returns its exit code; stdout+stderr go to `output`.
inline int run_command(const std::string& command, std::string& output, const std::string& log_path) {
  const int raw = std::system((command + " >" + log_path + " 2>&1").c_str());
  output = read_text(log_path);
  return WIFEXITED(raw) ? WEXITSTATUS(raw) : 128;
}

}  // namespace gpucal::calibration::testing
