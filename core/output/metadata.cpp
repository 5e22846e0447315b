#include "core/output/metadata.h"

#include <sys/utsname.h>
#include <unistd.h>

#include <benchmark/benchmark.h>
#include <cblas.h>
// A weak reference: a program that calls no BLAS routine (the gpucal command, linked as needed)
// does not load OpenBLAS, and its sidecar names no OpenBLAS.
#pragma weak openblas_get_config
#include <chrono>
#include <ctime>
#include <fstream>
#include <sstream>

#include "gpucal/version.h"
#include "core/errors.h"
#include "core/measure/preemption.h"
#include "core/output/csv_sink.h"
#include "core/output/file_io.h"
#include "core/backend/loaded_libraries.h"
#include "core/measure/malloc_policy.h"

extern char** environ;

namespace gpucal {

nlohmann::json device_json(const DeviceInfo& d) {
  return {{"backend", d.backend},
          {"index", d.index},
          {"name", d.name},
          {"arch", d.arch},
          {"compute_units", d.compute_units},
          {"clock_mhz", d.clock_mhz},
          {"clock_source", d.clock_source},
          {"memory_clock_mhz", d.memory_clock_mhz},
          {"memory_bus_bits", d.memory_bus_bits},
          {"memory_bytes", d.memory_bytes},
          {"l2_bytes", d.l2_bytes},
          {"llc_bytes", d.llc_bytes},
          {"llc_source", d.llc_source},
          {"uuid", d.uuid},
          {"pci_bus_id", d.pci_bus_id},
          {"driver_version", d.driver_version},
          {"runtime_version", d.runtime_version}};
}

nlohmann::json host_json() {
  nlohmann::json h;
  char name[256] = {0};
  gethostname(name, sizeof name - 1);
  h["hostname"] = name;
  struct utsname u;
  if (uname(&u) == 0) {
    h["kernel"] = std::string(u.sysname) + " " + u.release;
    h["machine"] = u.machine;
  }
  std::ifstream os("/etc/os-release");
  std::string line;
  while (std::getline(os, line))
    if (line.rfind("PRETTY_NAME=", 0) == 0) h["os"] = line.substr(13, line.size() > 14 ? line.size() - 14 : 0);
  h["cpu_cores_online"] = sysconf(_SC_NPROCESSORS_ONLN);
  return h;
}

// Prefixes of the variables that shape what the libraries under a measurement do (thread
// counts, kernel choice, transports, algorithms), plus the job's identity.
const std::vector<std::string>& recorded_environment_prefixes() {
  static const std::vector<std::string> prefixes = {
      "OPENBLAS_", "GOTO_", "OMP_",  "GOMP_", "OMPI_", "PMIX_MCA_", "UCX_",   "NCCL_",      "RCCL_",
      "CUDA_",     "HIP_",  "HSA_",  "ROCR_", "MV2_",  "I_MPI_",    "MPICH_", "SLURM_JOB", "SLURM_NNODES",
      "SLURM_NTASKS", "MALLOC_", "GLIBC_TUNABLES", "GPUCAL_MALLOC"};
  return prefixes;
}

nlohmann::json environment_json() {
  nlohmann::json env = nlohmann::json::object();
  for (char** e = environ; e && *e; ++e) {
    std::string kv(*e);
    auto eq = kv.find('=');
    if (eq == std::string::npos) continue;
    for (const auto& p : recorded_environment_prefixes())
      if (kv.compare(0, p.size(), p) == 0) env[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  return env;
}

std::vector<std::string> environment_warnings(const nlohmann::json& env) {
  // OpenBLAS overrides of its own CPU detection: the kernels of another core type, a
  // cache size that sets its blocking (a tiny OPENBLAS_L2_SIZE slows sgemm severalfold).
  std::string set;
  for (const char* name : {"OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE"})
    if (env.contains(name)) set += std::string(set.empty() ? "" : " ") + name + "=" + env[name].get<std::string>();
  if (!env.contains("OPENBLAS_CORETYPE")) return {};
  return {set + " set: OpenBLAS runs with these instead of what it detects on this CPU, so host BLAS figures "
                "(and their efficiency against this CPU's peak) reflect them; unset to measure the library's own "
                "choice (recorded in the sidecar's environment)"};
}

std::string version_text(const std::string& program) {
  const std::string commit = GPUCAL_GIT_COMMIT;
  const std::string dirty = GPUCAL_GIT_DIRTY;
  std::string text = program + " " + GPUCAL_VERSION + " (commit " +
                     (commit == "unknown" ? std::string("unknown: built outside a git checkout") : commit.substr(0, 12));
  if (dirty == "true") text += ", with uncommitted changes";
  return text + ")";
}

std::string iso8601_now() {
  std::time_t t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

nlohmann::json google_benchmark_json() {
  // Its build type shows only in its context block (core/driver/gbench_context.h).
  std::ostringstream context;
  benchmark::BenchmarkReporter::PrintBasicContext(&context, benchmark::BenchmarkReporter::Context());
  const bool debug = context.str().find("Library was built as DEBUG") != std::string::npos;
  return {{"version", GPUCAL_GBENCH_VERSION},
          {"build_type", debug ? "debug" : "release"},
          {"role", "registers, filters and reports the points; the times are gpucal's own (events or "
                   "steady_clock per sample), so its build type does not affect them"}};
}

Metadata::Metadata(const RunConfig& c, const Backend& backend) {
  doc_["metadata_schema_version"] = 1;
  doc_["csv_schema_version"] = kCsvSchemaVersion;
  doc_["bench"] = c.bench;
  doc_["gpucal"] = {{"version", GPUCAL_VERSION}, {"git_commit", GPUCAL_GIT_COMMIT}, {"git_dirty", GPUCAL_GIT_DIRTY}};
  doc_["command_line"] = c.command_line;
  doc_["start_time"] = iso8601_now();
  doc_["device"] = device_json(backend.info());
  doc_["host"] = host_json();
  doc_["environment"] = environment_json();
  doc_["malloc"] = malloc_policy_json(c.malloc);
  doc_["measurement"] = {{"regime", c.regime},
                         {"min_samples", c.measure.min_samples},
                         {"noise_target", c.measure.noise_target},
                         {"max_time_per_point_s", c.measure.max_time_s},
                         {"min_time_per_point_s", c.measure.min_time_s},
                         {"combine", c.combine},
                         {"warmup_time_s", c.measure.warmup_time_s},
                         {"min_sample_s", c.measure.min_sample_s},
                         {"min_sample_multi_rank_s", c.measure.min_sample_multi_rank_s},
                         {"timer", backend.is_host() ? "host steady_clock" : "device events"},
                         // The ticks the preemption detector tries, the kernel's (1/CONFIG_HZ) included.
                         {"scheduler_ticks_s", candidate_ticks()},
                         {"seed", c.seed}};
  doc_["libraries"] = nlohmann::json::object();
  if (openblas_get_config != nullptr) doc_["libraries"]["openblas"] = openblas_get_config();
  doc_["libraries"]["google_benchmark"] = google_benchmark_json();
}

void Metadata::add_library(const std::string& name, const std::string& version) { doc_["libraries"][name] = version; }

void Metadata::write(const std::string& path) const {
  // Readers never see a half-written sidecar, and a failed write keeps the previous one.
  try {
    write_file_atomic(path, text());
  } catch (const OpenError& e) {
    throw UsageError(e.what());
  }
}

nlohmann::json loaded_libraries_json() {
  nlohmann::json list = nlohmann::json::array();
  for (const LoadedLibrary& l : loaded_libraries()) list.push_back({{"name", l.name}, {"path", l.path}});
  return list;
}

void Metadata::finish(int rows, int failures, int exit_code) {
  doc_["end_time"] = iso8601_now();
  doc_["loaded_libraries"] = loaded_libraries_json();  // after the run: dlopen'ed ones included
  doc_["rows"] = rows;
  doc_["failed_rows"] = failures;
  doc_["exit_code"] = exit_code;
}

}  // namespace gpucal
