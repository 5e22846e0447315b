// The JSON sidecar: what a reader needs to trust and reproduce a CSV. Written when the run
// starts (X.json.partial, beside the partial rows: core/output/run_files.h) and written again
// with the end time and row counts when the run is complete.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/backend/backend.h"
#include "core/driver/run_config.h"

namespace gpucal {

nlohmann::json device_json(const DeviceInfo& d);
nlohmann::json host_json();
// The library-shaping variables of this process: OPENBLAS_* (GOTO_*), OMP_* (GOMP_*),
// OMPI_*, PMIX_MCA_*, UCX_*, NCCL_*, RCCL_*, CUDA_*, HIP_*, HSA_*, ROCR_*, MV2_*, I_MPI_*,
// MPICH_*, and the Slurm job's identity.
nlohmann::json environment_json();
// One line per setting that changes what a library measures here (OPENBLAS_CORETYPE).
std::vector<std::string> environment_warnings(const nlohmann::json& environment);
std::string iso8601_now();
// What `PROGRAM --version` prints: "PROGRAM 0.1.0 (commit 1a2b3c4d5e6f)", ", with uncommitted
// changes" when the tree differed from the commit at build time.
std::string version_text(const std::string& program);
// Google Benchmark's version and build type ({"version", "build_type": "debug" | "release", "role"}).
nlohmann::json google_benchmark_json();
// The shared libraries this process loaded, [{name, path}] (core/backend/loaded_libraries.h).
nlohmann::json loaded_libraries_json();

class Metadata {
 public:
  Metadata(const RunConfig& config, const Backend& backend);
  nlohmann::json& doc() { return doc_; }
  // Library name -> version, e.g. {"cublasLt", "13.0.0"}.
  void add_library(const std::string& name, const std::string& version);
  std::string text() const { return doc_.dump(2) + "\n"; }
  // Atomic: throws UsageError when the path cannot be created, WriteError when writing fails.
  void write(const std::string& path) const;
  void finish(int rows, int failures, int exit_code);

 private:
  nlohmann::json doc_;
};

}  // namespace gpucal
