#include "core/driver/run_sinks.h"

#include <cstdlib>

#include "core/driver/driver.h"
#include "core/output/file_io.h"

namespace gpucal {

void RunSinks::open(const RunConfig& config, const std::vector<std::string>& columns, const Metadata& meta,
                    bool write) {
  json_path_ = config.out.empty() ? "" : sidecar_path(config.out, ".json");
  if (!write) return;
  csv_ = std::make_unique<CsvSink>(config.out, columns);
  samples_ = std::make_unique<SamplesSink>(sidecar_path(config.out, ".samples.csv"));
  meta.write(json_path_);
}

void RunSinks::write(const Row& row, const Measurement* m) {
  if (!write_failure_.empty()) return;
  try {
    if (samples_ && m)
      samples_->write(row.get("point"), std::atoi(row.get("repetition").c_str()), m->sample_seconds);
    if (csv_) csv_->write(row);
  } catch (const WriteError& e) {
    write_failure_ = e.what();
  }
}

int RunSinks::finish(Metadata& meta, const RunTally& tally, Watchdog& watchdog) {
  int code = tally.failures > 0 || !write_failure_.empty() ? 1 : 0;
  if (!csv_) return code;
  watchdog.arm("writing the sidecar " + json_path_);
  meta.finish(tally.rows, tally.failures, code);
  try {
    if (write_failure_.empty()) meta.write(json_path_);
    csv_->close();
    samples_->close();
  } catch (const WriteError& e) {
    write_failure_ = e.what();
    code = 1;
  }
  return code;
}

}  // namespace gpucal
