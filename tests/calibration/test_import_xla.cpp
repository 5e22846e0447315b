// gpucal import of XLA's measured GPU performance tables (app/import/import_xla.cpp): the GEMM
// table and the collective table, as textproto and as the C++ header that embeds one, with the
// public H100 tables of tests/fixtures/xla_tables and small hand-written ones.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "app/common/csv_table.h"
#include "app/import/import_writer.h"
#include "tests/calibration/import_test_util.h"

namespace gpucal::calibration {
namespace {

namespace fs = std::filesystem;

std::string xla_fixture(const std::string& name) {
#ifndef GPUCAL_XLA_FIXTURES_RELATIVE
#error "GPUCAL_XLA_FIXTURES_RELATIVE must name tests/fixtures/xla_tables relative to the test binary"
#endif
  return testing::beside_test_binary(GPUCAL_XLA_FIXTURES_RELATIVE) + "/" + name;
}

// The 1-based line of the first line of `path` that equals `text`.
int line_of(const std::string& path, const std::string& text) {
  std::ifstream in(path);
  std::string line;
  for (int n = 1; std::getline(in, line); ++n)
    if (line == text) return n;
  return 0;
}

class ImportXla : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = (fs::temp_directory_path() / ("gpucal_import_xla_" + std::to_string(::getpid()))).string();
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string write(const std::string& name, const std::string& text) {
    return testing::write_file(dir_, name, text);
  }
  std::string dir_;
};

// A collective table by hand: the fields XLA's generator writes, with some gpucal does not read.
const char* kCollectives = R"(# proto-message: xla.gpu.DeviceHloInstructionProfiles
entries {
  key: "sm_90"
  value {
    entries {
      instruction {
        name: "_"
        opcode: "all-reduce"
        shape {
          element_type: F32
          dimensions: 1024
          layout { minor_to_major: 0 tail_padding_alignment_in_elements: 1 }
          is_dynamic_dimension: false
        }
        metadata {}
        channel_id: 1
        iota_collective_device_list { num_replica_groups: 1 num_devices_per_group: 8 iota_reshape_dims: 8 iota_transpose_perm: 0 }
      }
      fingerprint: "0123"
      network_throughput_bytes_per_sec: 4096000000
    }
    entries {
      instruction {
        opcode: "reduce-scatter"
        shape { element_type: BF16 dimensions: 256 }
        iota_collective_device_list { num_replica_groups: 2 num_devices_per_group: 4 }
      }
      network_throughput_bytes_per_sec: 2048000000
    }
    entries {
      instruction {
        opcode: "all-gather"
        shape { element_type: F32 dimensions: 64 dimensions: 16 }
        dimensions: 0
        iota_collective_device_list { num_replica_groups: 4 num_devices_per_group: 2 }
      }
      network_throughput_bytes_per_sec: 1024000000
    }
    entries {
      instruction { opcode: "collective-permute" shape { element_type: F32 dimensions: 8 } }
      network_throughput_bytes_per_sec: 1000
    }
  }
}
)";

TEST_F(ImportXla, PublicH100GemmTableImportsEveryShapeAndTypeWithItsLineAndSource) {
  const std::string path = xla_fixture("xla_matmul_sm90.txtpb");
  ImportOptions options;
  options.source_ref = "openxla/xla@dc66032 default_matmul_perf_table.txtpb";
  const auto runs = import_log(path, options);
  ASSERT_EQ(runs.size(), 1u);
  const ImportedRun& run = runs[0];
  EXPECT_EQ(run.format, "xla");
  EXPECT_EQ(run.device, "sm_90");
  EXPECT_EQ(run.backend, "cuda");
  EXPECT_EQ(run.source_ref, options.source_ref);
  // 3 batches x 5 m x 5 n x 5 k, three type triples each.
  ASSERT_EQ(run.gemms.size(), 375u * 3);
  std::set<std::string> dtypes;
  for (const auto& g : run.gemms) dtypes.insert(g.dtype + ">" + g.out_dtype);
  EXPECT_EQ(dtypes, (std::set<std::string>{"bf16>bf16", "fp32>fp32", "fp8_e4m3>bf16"}));
  const GemmPoint& first = run.gemms.front();
  EXPECT_EQ(first.b, 1);
  EXPECT_EQ(first.m, 256);
  EXPECT_EQ(first.n, 256);
  EXPECT_EQ(first.k, 256);
  EXPECT_EQ(first.source_key, "bf16xbf16->bf16");
  EXPECT_DOUBLE_EQ(first.flops_per_s, 6721641025641.0);
  EXPECT_EQ(first.line, line_of(path, "    entries {"));
  EXPECT_EQ(run.first_line, line_of(path, "entries {"));
}

TEST_F(ImportXla, CollectiveSizesAreNcclTestsSAndOtherOpcodesAreLeftOutWithANote) {
  const auto runs = import_log(write("c.txtpb", kCollectives), {});
  ASSERT_EQ(runs.size(), 3u);
  // all-reduce: S is the buffer; 4096 B at 4.096 GB/s is 1 us.
  EXPECT_EQ(runs[0].collective, "allreduce");
  EXPECT_EQ(runs[0].nranks, 8);
  ASSERT_EQ(runs[0].collectives.size(), 1u);
  EXPECT_DOUBLE_EQ(runs[0].collectives[0].size_bytes, 4096);
  EXPECT_DOUBLE_EQ(runs[0].collectives[0].time_us, 1.0);
  EXPECT_EQ(runs[0].collectives[0].dtype, "fp32");
  EXPECT_EQ(runs[0].collectives[0].line, 5);  // its '    entries {' line
  // reduce-scatter: the shape is the output, S = n x it = 4 x 256 x 2 B.
  EXPECT_EQ(runs[1].collective, "reduce_scatter");
  EXPECT_EQ(runs[1].nranks, 4);
  EXPECT_DOUBLE_EQ(runs[1].collectives[0].size_bytes, 2048);
  EXPECT_DOUBLE_EQ(runs[1].collectives[0].time_us, 1.0);
  EXPECT_EQ(runs[1].collectives[0].dtype, "bf16");
  EXPECT_NE(runs[1].rank_combine.find("2 group(s) of 4 at once"), std::string::npos) << runs[1].rank_combine;
  // all-gather: the shape is the output, which is S; the instruction's own 'dimensions' is no size.
  EXPECT_EQ(runs[2].collective, "allgather");
  EXPECT_DOUBLE_EQ(runs[2].collectives[0].size_bytes, 64 * 16 * 4);
  for (const auto& run : runs) {
    ASSERT_EQ(run.notes.size(), 1u);
    EXPECT_EQ(run.notes[0], "1 collective-permute row(s) left out: gpucal has no such collective");
  }
}

TEST_F(ImportXla, PublicH100CollectiveTableHasTwelveGroupsOfTwentyTwoSizes) {
  const auto runs = import_log(xla_fixture("xla_collective_sm90.txtpb"), {});
  ASSERT_EQ(runs.size(), 12u);
  std::set<std::string> groups;
  for (const auto& run : runs) {
    groups.insert(run.collective + "/" + std::to_string(run.nranks));
    EXPECT_EQ(run.collectives.size(), 22u) << run.collective << " n" << run.nranks;
    for (std::size_t i = 1; i < run.collectives.size(); ++i)
      EXPECT_GT(run.collectives[i].size_bytes, run.collectives[i - 1].size_bytes);
  }
  EXPECT_EQ(groups.size(), 12u);
}

TEST_F(ImportXla, TheCppHeaderFormReadsAsItsTextproto) {
  const std::string table = R"(entries {
  key: "sm_90"
  value {
    entries { b: 2 m: 512 n: 1024 k: 256 flops { key: "BF16xBF16->BF16" value: 1000000000000 } }
  }
}
)";
  const std::string header = "/* licence */\n#ifndef X_H_\nconstexpr char kDefaultMatmulPTable[] = R\"pb(\n" + table +
                             ")pb\";\n#endif\n";
  const auto bare = import_log(write("t.txtpb", table), {});
  const auto embedded = import_log(write("t.h", header), {});
  ASSERT_EQ(bare.size(), 1u);
  ASSERT_EQ(embedded.size(), 1u);
  ASSERT_EQ(embedded[0].gemms.size(), 1u);
  const GemmPoint& g = embedded[0].gemms[0];
  EXPECT_EQ(g.dtype, "bf16");
  EXPECT_EQ(g.b, 2);
  EXPECT_EQ(g.m, 512);
  EXPECT_DOUBLE_EQ(g.flops_per_s, bare[0].gemms[0].flops_per_s);
  EXPECT_EQ(g.line, 7);  // the header's '    entries {' line; the textproto's is 4
  EXPECT_EQ(bare[0].gemms[0].line, 4);
}

TEST_F(ImportXla, BadTablesGetOneLineNamingTheFileLineAndWhatToDo) {
  const auto error_of = [&](const std::string& name, const std::string& text, ImportOptions options = {}) {
    try {
      import_log(write(name, text), options);
    } catch (const ImportError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  const std::string two = "entries { key: \"sm_90\" value { entries { m: 1 n: 1 k: 1 flops { key: \"bf16xbf16->bf16\" "
                          "value: 5 } } } }\nentries { key: \"sm_100_B200\" value { entries { m: 1 n: 1 k: 1 flops { "
                          "key: \"bf16xbf16->bf16\" value: 5 } } } }\n";
  EXPECT_NE(error_of("two.txtpb", two).find("holds the GEMM tables of 2 devices (sm_90, sm_100_B200); pass --table-key KEY"),
            std::string::npos);
  ImportOptions key;
  key.table_key = "sm_9";
  EXPECT_NE(error_of("two.txtpb", two, key).find("did you mean 'sm_90'"), std::string::npos);
  key.table_key = "sm_100_B200";
  EXPECT_EQ(error_of("two.txtpb", two, key), "no error");
  EXPECT_NE(error_of("bad.txtpb", "entries {\n  key: \"sm_90\"\n  value { entries { instruction { opcode: 3 } }\n")
                .find("bad.txtpb:3: not an XLA GEMM or collective table (column"),
            std::string::npos);
  EXPECT_NE(error_of("open.h", "constexpr char kDefaultMatmulPTable[] = R\"pb(\nentries {}\n").find("is not closed by )pb\""),
            std::string::npos);
  EXPECT_NE(error_of("neg.txtpb", "entries { key: \"sm_90\" value { entries { m: 1 n: 1 k: 1 flops { key: "
                                  "\"bf16xbf16->bf16\" value: -5 } } } }\n")
                .find("must be positive FLOP/s, got -5"),
            std::string::npos);
  EXPECT_NE(error_of("dims.txtpb", "entries { key: \"sm_90\" value { entries { m: 0 n: 1 k: 1 } } }\n")
                .find("dims.txtpb:1: b, m, n and k must be positive"),
            std::string::npos);
  EXPECT_NE(error_of("nolist.txtpb",
                     "entries { key: \"sm_90\" value { entries { instruction { opcode: \"all-reduce\" shape { "
                     "element_type: F32 dimensions: 4 } } network_throughput_bytes_per_sec: 5 } } }\n")
                .find("without iota_collective_device_list"),
            std::string::npos);
  EXPECT_NE(error_of("none.txtpb", "entries { key: \"sm_90\" value { } }\n").find("table has no row"),
            std::string::npos);
}

TEST_F(ImportXla, WritesGemmCsvWithTheTimeFromTheFlopsAndTheSourceInEveryRow) {
  ImportOptions options;
  options.source_ref = "openxla/xla@abc PATH";
  const auto runs = import_log(write("t.txtpb", "entries { key: \"sm_90\" value { entries { b: 2 m: 1024 n: 512 k: 256 "
                                                "flops { key: \"f32xf32->f32\" value: 500000000000 } } } }\n"),
                               options);
  const std::string out = dir_ + "/out";
  const ImportSummary summary = write_imported_results(runs, out, {"gpucal", "import"});
  EXPECT_EQ(summary.gemm_rows, 1);
  const CsvTable t = CsvTable::read_file(out + "/gemm.csv");
  ASSERT_EQ(t.row_count(), 1u);
  EXPECT_EQ(t.get_string(0, "dtype"), "fp32");
  EXPECT_EQ(t.get_int(0, "batch"), 2);
  const double flops = 2.0 * 2 * 1024 * 512 * 256;
  EXPECT_DOUBLE_EQ(t.get_double(0, "flops"), flops);
  EXPECT_NEAR(t.get_double(0, "time_us_median"), flops / 5e11 * 1e6, 1e-3);
  EXPECT_NEAR(t.get_double(0, "tflops"), 0.5, 1e-9);
  EXPECT_NE(t.get_string(0, "status_detail").find("source: openxla/xla@abc PATH"), std::string::npos);
  std::ifstream sidecar(out + "/gemm.json");
  std::stringstream text;
  text << sidecar.rdbuf();
  EXPECT_NE(text.str().find("\"source_ref\": \"openxla/xla@abc PATH\""), std::string::npos);
}

}  // namespace
}  // namespace gpucal::calibration
