// libFuzzer target: `gpucal import`'s readers (app/import/import_log.h): nccl-tests /
// rccl-tests text and -J JSON, OSU output, CSV, XLA's performance tables. Any bytes import or throw ImportError (a one-line
// error naming the file and line), never anything else; what imports has positive sizes and
// positive finite times, and rank and node counts that agree.
#include <unistd.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include "app/import/import_log.h"

using gpucal::calibration::ImportError;
using gpucal::calibration::ImportOptions;
using gpucal::calibration::ImportedRun;

namespace {

void check(const ImportedRun& run) {
  // nnodes 0: a collectives log that names no hosts (ranks per node unknown); never else.
  if (run.nranks < 1 || run.nnodes < 0 || run.nnodes > run.nranks) std::abort();
  if (run.nnodes == 0 && (run.collectives.empty() || run.ranks_per_node != 0)) std::abort();
  for (const auto& p : run.collectives)
    if (!(p.size_bytes > 0) || !std::isfinite(p.time_us) || !(p.time_us > 0)) std::abort();
  for (const auto& p : run.p2p)
    if (!(p.size_bytes > 0) || !std::isfinite(p.time_us) || !(p.time_us > 0)) std::abort();
  for (const auto& g : run.gemms)
    if (g.b < 1 || g.m < 1 || g.n < 1 || g.k < 1 || !std::isfinite(g.flops_per_s) || !(g.flops_per_s > 0)) std::abort();
}

}  // namespace

// The importer reads files: each input goes through one scratch file, removed at exit.
struct ScratchFile {
  std::string path = "/tmp/gpucal_fuzz_import_" + std::to_string(getpid()) + ".log";
  ~ScratchFile() { std::remove(path.c_str()); }
};

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const ScratchFile scratch;
  const std::string& path = scratch.path;
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  }
  ImportOptions told;  // the flags a user adds when the log does not say
  told.ranks_per_node = 2;
  told.nranks = 4;
  told.collective = "allreduce";
  for (const ImportOptions& options : {ImportOptions{}, told}) {
    try {
      for (const auto& run : gpucal::calibration::import_log(path, options)) check(run);
    } catch (const ImportError&) {
    }
  }
  return 0;
}
