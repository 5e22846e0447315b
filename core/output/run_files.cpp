#include "core/output/run_files.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "core/errors.h"
#include "core/output/file_io.h"

namespace gpucal {

RunFiles::RunFiles(const std::string& csv_path, const std::vector<std::string>& bench_columns,
                   const std::string& sidecar_json)
    : csv_path_(csv_path), sidecar_path_(sidecar_path(csv_path, ".json")) {
  csv_ = std::make_unique<CsvSink>(csv_path, bench_columns);
  try {
    samples_ = std::make_unique<SamplesSink>(sidecar_path(csv_path, ".samples.csv"));
    write_file_atomic(partial_path(sidecar_path_), sidecar_json);
  } catch (const OpenError& e) {
    csv_->discard();
    if (samples_) samples_->discard();
    throw UsageError(e.what());
  } catch (...) {
    csv_->discard();
    if (samples_) samples_->discard();
    throw;
  }
}

RunFiles::~RunFiles() {
  if (committed_ || rows() > 0) return;  // a row is worth keeping; a header alone is not
  csv_->discard();
  samples_->discard();
  ::unlink(partial_path(sidecar_path_).c_str());
}

void RunFiles::write(const Row& row, const std::vector<double>* sample_seconds) {
  if (sample_seconds)
    samples_->write(row.get("point"), std::atoi(row.get("repetition").c_str()), *sample_seconds);
  csv_->write(row);
}

namespace {

void rename_or_throw(const std::string& from, const std::string& to) {
  if (std::rename(from.c_str(), to.c_str()) != 0)
    throw WriteError("cannot rename '" + from + "' to '" + to + "': " + std::strerror(errno));
}

}  // namespace

void RunFiles::commit(const std::string& sidecar_json, const Summaries& summaries) {
  // Everything that can fail on a full disk first, under the partial names; then the renames,
  // the rows last: a complete X.csv has its samples, sidecar and summaries beside it.
  samples_->finish();
  csv_->finish();
  std::vector<std::string> finals{sidecar_path_};
  for (const auto& [suffix, text] : summaries) finals.push_back(sidecar_path(csv_path_, suffix));
  for (size_t i = 0; i < finals.size(); ++i) {
    try {
      write_file_atomic(partial_path(finals[i]), i == 0 ? sidecar_json : summaries[i - 1].second);
    } catch (...) {
      for (size_t k = 1; k < i; ++k) ::unlink(partial_path(finals[k]).c_str());  // the summaries written so far
      throw;
    }
  }
  samples_->close();
  for (const auto& path : finals) rename_or_throw(partial_path(path), path);
  csv_->close();
  committed_ = true;
}

std::string RunFiles::leftover() const {
  if (committed_) return "";
  if (rows() == 0) return "no row was written; '" + csv_path_ + "' is unchanged";
  return "the " + std::to_string(rows()) + " row(s) written before it are whole in '" + csv_->written_path() +
         "' (gpucal fit reads that file by name); '" + csv_path_ + "' is unchanged";
}

}  // namespace gpucal
