// gpucal import, fit --report and predict-comm end to end: exit codes, one-line errors, nothing
// half-written, the report's lines, the predictions' provenance.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "tests/calibration/import_test_util.h"
#include "tests/calibration/test_util.h"

namespace gpucal::calibration {
namespace {

namespace fs = std::filesystem;

using testing::run_gpucal;

TEST(GpucalImportCli, ABadLogIsOneLineExitTwoAndNothingIsWritten) {
  const std::string dir = testing::fresh_temp_dir();
  std::ofstream(dir + "/bad.log")
      << "# nThread 1 nGpus 1 minBytes 8 maxBytes 16 step: 2(factor) warmup iters: 5 iters: 20\n"
      << "#       size         count      type   redop    root     time   algbw   busbw #wrong\n"
      << "           8             2     float     sum      -1    12.00\n"
      << "          16             4     float     sum      -1    12.00    0.00    0.00      0\n";
  std::string out;
  // The good log first: still nothing may be written, since the second one is bad.
  EXPECT_EQ(run_gpucal("import " + testing::comm_log("nccl_l40s_tcp_2x1") + " " + dir + "/bad.log --out " + dir + "/res",
                   out, dir),
            2);
  EXPECT_EQ(std::count(out.begin(), out.end(), '\n'), 1) << out;
  EXPECT_NE(out.find("bad.log:3: data row has 6 fields"), std::string::npos) << out;
  EXPECT_FALSE(fs::exists(dir + "/res"));
  // Unknown format, missing file, non-empty output folder.
  std::ofstream(dir + "/notes.txt") << "some notes\n";
  EXPECT_EQ(run_gpucal("import " + dir + "/notes.txt --out " + dir + "/res", out, dir), 2);
  EXPECT_NE(out.find("notes.txt:1: unknown log format"), std::string::npos) << out;
  EXPECT_EQ(run_gpucal("import " + dir + "/none.log --out " + dir + "/res", out, dir), 2);
  fs::create_directories(dir + "/full");
  std::ofstream(dir + "/full/x") << "x";
  EXPECT_EQ(run_gpucal("import " + testing::comm_log("nccl_l40s_tcp_2x1") + " --out " + dir + "/full", out, dir), 2);
  EXPECT_NE(out.find("exists and is not empty"), std::string::npos) << out;
  EXPECT_EQ(std::count(out.begin(), out.end(), '\n'), 1) << out;
}

TEST(GpucalImportCli, ImportFitReportAndPredictOnAPublicLog) {
  const std::string dir = testing::fresh_temp_dir();
  std::string out;
  ASSERT_EQ(run_gpucal("import " + testing::comm_log("nccl_h100_hgx_ib_2x8") + " --out " + dir + "/h100", out, dir), 0)
      << out;
  EXPECT_NE(out.find("16 ranks (rank list) on 2 node(s) (host names), NVIDIA H100 80GB HBM3, 64 rows"),
            std::string::npos)
      << out;
  // An imported folder is a results folder: compare and export take it.
  EXPECT_EQ(run_gpucal("compare " + dir + "/h100 " + dir + "/h100", out, dir), 0) << out;
  EXPECT_EQ(run_gpucal("export " + dir + "/h100 --to vtrain --out " + dir + "/x", out, dir), 0) << out;
  // Only an inter-node group (2 nodes of 8): vTrain's table for 16 GPUs, from the models.
  bool lut16 = false;
  for (const auto& e : fs::recursive_directory_iterator(dir + "/x/vtrain"))
    lut16 |= e.path().filename() == "AR_GPU16_1M_1024M_LUT";
  EXPECT_TRUE(lut16) << out;
  ASSERT_EQ(run_gpucal("fit " + dir + "/h100 --report", out, dir), 0) << out;
  EXPECT_NE(out.find("collectives  allreduce/fp32/n16/nodes2"), std::string::npos) << out;
  // The chosen form is one of the five, with a held-out and a leave-one-out error.
  const auto line = out.substr(out.find("collectives  allreduce"));
  EXPECT_TRUE(line.find(" regime ") != std::string::npos || line.find(" table ") != std::string::npos ||
              line.find(" piecewise ") != std::string::npos || line.find(" sigmoid ") != std::string::npos ||
              line.find(" alpha_beta ") != std::string::npos)
      << line;

  // Measured, between measured sizes, beyond them, and beyond the measured rank count.
  ASSERT_EQ(run_gpucal("predict-comm " + dir +
                       "/h100 --collective allreduce --nranks 16 --nnodes 2 --size 1M,1536K,64G",
                   out, dir),
            0)
      << out;
  EXPECT_NE(out.find("1048576 B: 71.7 us"), std::string::npos) << out;  // median of 71.93 and 71.47
  EXPECT_NE(out.find("[measured]"), std::string::npos) << out;
  EXPECT_NE(out.find("[interpolated]"), std::string::npos) << out;
  // 64 GiB against a largest measured 16 GiB: extrapolated, and by how much.
  EXPECT_NE(out.find("[extrapolated x4 above the largest measured size]"), std::string::npos) << out;
  ASSERT_EQ(run_gpucal("predict-comm " + dir +
                       "/h100/calibration.json --collective allreduce --nranks 64 --nnodes 8 "
                       "--size 256M --as json",
                   out, dir),
            0)
      << out;
  EXPECT_NE(out.find("\"provenance\": \"extrapolated\""), std::string::npos) << out;
  EXPECT_NE(out.find("\"extrapolated_by\": \"x4 beyond the measured rank counts (nearest 16)\""), std::string::npos)
      << out;
  EXPECT_NE(out.find("alpha x"), std::string::npos) << out;
  // A query the data cannot answer: intra-node allreduce from inter-node measurements.
  EXPECT_EQ(run_gpucal("predict-comm " + dir + "/h100 --collective allreduce --nranks 8 --nnodes 1 --size 1M",
                   out, dir),
            2);
  EXPECT_NE(out.find("no intra-node allreduce measurements"), std::string::npos) << out;
  EXPECT_EQ(std::count(out.begin(), out.end(), '\n'), 1) << out;
  EXPECT_EQ(run_gpucal("predict-comm " + dir + "/h100 --collective allreduce --nranks 16 --nnodes 2 --size 12Q",
                   out, dir),
            2);
}

}  // namespace
}  // namespace gpucal::calibration
