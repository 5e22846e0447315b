#include "core/driver/run_sinks.h"

#include "core/driver/driver.h"
#include "core/output/file_io.h"

namespace gpucal {

void RunSinks::open(const RunConfig& config, const std::vector<std::string>& columns, const Metadata& meta,
                    bool write) {
  json_path_ = config.out.empty() ? "" : sidecar_path(config.out, ".json");
  if (!write) return;
  files_ = std::make_unique<RunFiles>(config.out, columns, meta.text());
}

void RunSinks::write(const Row& row, const Measurement* m) {
  if (!write_failure_.empty() || !files_) return;
  try {
    files_->write(row, m ? &m->sample_seconds : nullptr);
  } catch (const WriteError& e) {
    write_failure_ = e.what();
  }
}

int RunSinks::finish(Metadata& meta, const RunTally& tally, Watchdog& watchdog, const Summaries& summaries) {
  int code = tally.failures > 0 || !write_failure_.empty() ? 1 : 0;
  if (!files_) return code;
  watchdog.arm("writing the sidecar " + json_path_);
  meta.finish(tally.rows, tally.failures, code);
  try {
    if (write_failure_.empty()) files_->commit(meta.text(), summaries);
  } catch (const WriteError& e) {
    write_failure_ = e.what();
    code = 1;
  }
  return code;
}

std::string RunSinks::leftover() const {
  return files_ ? files_->leftover() : "rows written before the failure are whole";
}

}  // namespace gpucal
