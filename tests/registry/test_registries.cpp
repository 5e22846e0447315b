// The registry walk: every extension point's table, every row. A row without help, without its
// formulas, or without what runs it (or a stated reason this build lacks it) fails here, so a
// half-added extension never reaches a user's --help.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <set>
#include <string>

#include "app/export/export_registry.h"
#include "app/import/import_formats.h"
#include "app/run/suites.h"
#include "bench_attention/attention_impls.h"
#include "bench_collectives/collective_list.h"
#include "bench_gemm/gemm_impls.h"
#include "bench_memory/memory_impls.h"
#include "core/formulas/collectives.h"
#include "core/formulas/kernel_table.h"
#include "core/model/model_spec.h"
#include "tests/calibration/conformance_calibration.h"

namespace gpucal {
namespace {

const std::set<std::string_view> kBackends{"host", "cuda", "hip"};

// Built (something runs it) or not built with the reason: never neither, never both.
template <class Row>
void expect_built_or_reasoned(const Row& row, bool built) {
  EXPECT_NE(built, !row.missing.empty()) << row.name << ": built and a reason it is missing, or neither";
  // A row some build lacks says what a build needs for it (--list-impls --markdown, the docs).
  if (!row.missing.empty()) EXPECT_FALSE(row.needs.empty()) << row.name << ": missing here, but needs nothing";
}

// A backend may have several libraries; --impl auto takes its first row.
TEST(Registries, GemmLibraries) {
  std::map<std::string_view, const gemm::GemmImpl*> auto_pick;
  for (const auto& impl : gemm::gemm_impls()) {
    EXPECT_FALSE(impl.help.empty()) << impl.name;
    EXPECT_TRUE(kBackends.count(impl.backend)) << impl.name;
    auto_pick.emplace(impl.backend, &impl);
    expect_built_or_reasoned(impl, impl.make_op != nullptr && impl.default_workspace != nullptr);
  }
  ASSERT_TRUE(auto_pick.count("host")) << "the host backend needs a GEMM library (CI runs it)";
  EXPECT_TRUE(auto_pick.at("host")->missing.empty()) << "--impl auto on the host needs its first row built";
}

TEST(Registries, AttentionImplementations) {
  for (const auto& impl : attention::attention_impls()) {
    EXPECT_FALSE(impl.help.empty()) << impl.name;
    EXPECT_FALSE(impl.backends.empty()) << impl.name;
    for (const auto b : impl.backends) EXPECT_TRUE(kBackends.count(b)) << impl.name << ": " << b;
    expect_built_or_reasoned(impl, impl.make_op != nullptr);
  }
}

TEST(Registries, MemoryImplementationsAndKernels) {
  for (const auto& impl : memory::memory_impls()) {
    EXPECT_FALSE(impl.help.empty()) << impl.name;
    EXPECT_FALSE(impl.backends.empty()) << impl.name;
    expect_built_or_reasoned(impl, impl.make != nullptr);
  }
  for (const auto& k : memory::kernel_table()) {
    EXPECT_NE(std::string(k.computes), "") << k.name;  // the kernel's help
    EXPECT_FALSE(k.tensors.empty()) << k.name;
    EXPECT_FALSE(memory::output_tensors(k).empty()) << k.name << ": a kernel writes something to check";
    const memory::Dims d{1 << 16, 64, 1024};
    EXPECT_GT(memory::bytes_moved(k, d, DType::fp32), 0) << k.name << ": no byte formula";
    EXPECT_GE(memory::working_set_bytes(k, d, DType::fp32), memory::bytes_moved(k, d, DType::fp32) / 2) << k.name;
  }
}

TEST(Registries, Collectives) {
  for (const auto& c : collectives()) {
    EXPECT_FALSE(c.help.empty()) << c.name;
    EXPECT_FALSE(c.nccl_tests_name.empty()) << c.name;
  }
  for (const auto* d : coll::all_collectives()) EXPECT_TRUE(d->info().in_bench) << d->name;
}

// Every export target writes its files from a full calibration, or refuses naming each missing
// figure; and each has its test: a hardware target's conformance test against its tool's reader,
// a workload target's trace checks.
TEST(Registries, ExportTargets) {
  const std::string dir = (std::filesystem::temp_directory_path() / "gpucal_registry_walk").string();
  std::filesystem::remove_all(dir);
  for (const auto& t : calibration::export_targets()) {
    EXPECT_FALSE(t.help.empty()) << t.name;
    EXPECT_FALSE(t.tool.empty()) << t.name;
    ASSERT_NE(t.write, nullptr) << t.name;
    const calibration::ExportReport r = t.write(calibration::testing::conformance_calibration(), {}, dir);
    EXPECT_TRUE(r.ok() ? !r.files_written.empty() : !r.refused.front().empty()) << t.name;
    const std::filesystem::path sources(GPUCAL_SOURCE_DIR);  // absent where the build was carried away
    // A hardware target's conformance test reads its files with the tool's reader; a workload
    // target's test decodes its traces and checks them against the prediction (tests/export).
    const auto test = t.workload ? sources / "tests/export" / ("test_" + std::string(t.name) + "_export.cpp")
                                 : sources / "tests/calibration" / ("test_conformance_" + std::string(t.name) + ".cpp");
    if (std::filesystem::exists(sources / "core")) EXPECT_TRUE(std::filesystem::exists(test)) << t.name << ": no " << test;
  }
  std::filesystem::remove_all(dir);
}

// Every import format has help, a rule and a reader, and a sample it recognizes and reads: a
// public log of tests/fixtures/comm_logs, a public table of tests/fixtures/xla_tables or a
// hand-written one in tests/fixtures/import_formats.
TEST(Registries, ImportFormats) {
  const std::map<std::string, std::string> samples{
      {"nccl-tests", "tests/fixtures/comm_logs/nccl_l40s_tcp_2x1.log"},
      {"osu", "tests/fixtures/comm_logs/osu_bw_alps_slingshot_ompi.log"},
      {"nccl-tests-json", "tests/fixtures/import_formats/nccl-tests-json.json"},
      {"csv", "tests/fixtures/import_formats/csv.csv"},
      {"xla", "tests/fixtures/xla_tables/xla_matmul_excerpt.h"}};
  const std::filesystem::path sources(GPUCAL_SOURCE_DIR);
  for (const auto& f : calibration::import_formats()) {
    EXPECT_FALSE(f.help.empty()) << f.name;
    ASSERT_NE(f.detects, nullptr) << f.name;
    ASSERT_NE(f.parse, nullptr) << f.name;
    EXPECT_EQ(calibration::check_import_format(std::string(f.name)), "") << f.name;
    const auto sample = samples.find(std::string(f.name));
    ASSERT_NE(sample, samples.end()) << f.name << ": no sample to import (add one above)";
    if (!std::filesystem::exists(sources / "core")) continue;  // the build was carried away
    calibration::ImportOptions options;
    options.ranks_per_node = 8;
    const auto detected = calibration::import_log((sources / sample->second).string(), options);
    options.format = std::string(f.name);
    const auto named = calibration::import_log((sources / sample->second).string(), options);
    EXPECT_FALSE(detected.empty()) << f.name;
    EXPECT_EQ(detected.size(), named.size()) << f.name << ": detection chose another format";
  }
  EXPECT_NE(calibration::check_import_format("ncl-tests").find("did you mean 'nccl-tests'"), std::string::npos);
}

TEST(Registries, SuitesAndPresets) {
  const std::set<std::string> benches{"gemm", "attention", "collectives", "p2p", "memory", "step"};
  for (const auto& s : calibration::suites()) {
    EXPECT_FALSE(s.purpose.empty()) << s.name;
    EXPECT_FALSE(s.benches.empty()) << s.name;
    for (const auto& b : s.benches) EXPECT_TRUE(benches.count(b.bench)) << s.name << ": " << b.bench;
  }
  for (const auto& m : model::presets()) {
    EXPECT_FALSE(m.source.empty()) << m.name << ": a preset cites where its hyper-parameters come from";
    EXPECT_GT(m.layers, 0) << m.name;
  }
}

}  // namespace
}  // namespace gpucal
