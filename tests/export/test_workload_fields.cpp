// gpucal export --to nersc|calculon|astrasim|vtrain --model ...: the workload-aware single-number
// fields (app/export/workload_fit.h) on the synthetic calibration. The residual table in NOTES.md
// exists, its ratios are the tool's formula (tests/calibration/tool_formulas_reference.h) on the
// written fields ÷ our time, our time is `gpucal predict`'s, and the share-weighted error is not
// larger than with the reference-shape fields. Without --model every file is byte for byte what
// the exporters wrote before the workload-aware fields (hashes recorded from that build).
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <sstream>

#include "app/export/export_common.h"
#include "app/export/workload_fit.h"
#include "tests/calibration/synthetic_results.h"
#include "tests/calibration/test_util.h"
#include "tests/calibration/tool_formulas_reference.h"
#include "tests/export/workload_fixture.h"

namespace gpucal::calibration::testing {
namespace {

using nlohmann::json;

const char* kFlags = "--model-config dense.json --dtype bf16 --tp 2 --dp 2 --ranks-per-node 2";
const char* kSets =
    " --set processor_usage=0.05 --set offload_gbps=50 --set offload_gib=512 --set nodes=2 --set vector_tflops=45";

struct Row {
  std::string op, roles, shape;
  double share = 0, ours_us = 0, before = 0, after = 0;
  std::map<std::string, std::string> cells;  // the shape text's key=value pairs
};
struct Section {
  double rms_before = -1, rms_after = -1;
  std::vector<Row> rows;
};

std::vector<std::string> split(const std::string& line, char sep) {
  std::vector<std::string> out;
  std::stringstream s(line);
  for (std::string cell; std::getline(s, cell, sep);) {
    cell.erase(0, cell.find_first_not_of(' '));
    cell.erase(cell.find_last_not_of(' ') + 1);
    out.push_back(cell);
  }
  return out;
}

Section read_section(const std::string& notes) {
  Section s;
  const auto at = notes.find("## Workload-aware fields");
  if (at == std::string::npos) return s;
  std::stringstream in(notes.substr(at));
  for (std::string line; std::getline(in, line);) {
    if (const auto p = line.find("reference-shape fields "); p != std::string::npos) {
      s.rms_before = std::stod(line.substr(p + 23));
      s.rms_after = std::stod(line.substr(line.find("workload-aware ") + 15));
    }
    const auto c = split(line, '|');
    if (c.size() != 9 || c[1] == "operation" || c[1].rfind("---", 0) == 0) continue;
    Row r{c[1], c[2], c[3], std::stod(c[4]), std::stod(c[5]), std::stod(c[7]), std::stod(c[8]), {}};
    for (const auto& kv : split(r.shape, ' '))
      if (const auto eq = kv.find('='); eq != std::string::npos) r.cells[kv.substr(0, eq)] = kv.substr(eq + 1);
    s.rows.push_back(r);
  }
  return s;
}

// E recomputed from the table: sum share·ln(ratio)^2 / sum share.
double rms(const Section& s, bool after) {
  double e = 0, w = 0;
  for (const Row& r : s.rows) {
    const double l = std::log(after ? r.after : r.before);
    e += r.share * l * l;
    w += r.share;
  }
  return std::sqrt(e / w);
}

Section export_section(const std::string& dir, const std::string& tool, const std::string& sets = "") {
  std::string log;
  EXPECT_EQ(run_gpucal("export results --to " + tool + " " + kFlags + kSets + sets + " --out out", log, dir), 0) << log;
  const Section s = read_section(read_text(dir + "/out/" + tool + "/NOTES.md"));
  EXPECT_FALSE(s.rows.empty()) << tool;
  EXPECT_NEAR(s.rms_before, rms(s, false), 1e-3 + 1e-3 * s.rms_before) << tool;
  EXPECT_NEAR(s.rms_after, rms(s, true), 1e-3 + 1e-3 * s.rms_after) << tool;
  EXPECT_LE(s.rms_after, s.rms_before + 1e-9) << tool;
  return s;
}

int nodes_of(const Row& r) {
  const auto p = r.op.find(" nodes)");
  return p == std::string::npos ? 1 : std::stoi(r.op.substr(r.op.rfind('(', p) + 1));
}

TEST(WorkloadFields, NerscRatiosAreItsFormulaOverPredictsTimes) {
  const std::string dir = workload_fixture_dir();
  const Section s = export_section(dir, "nersc");
  EXPECT_LT(s.rms_after, s.rms_before);  // the synthetic GEMM shapes run at different rates
  const json sys = json::parse(read_text(dir + "/out/nersc/system.json"));
  const json predict = predict_stages(dir, kFlags, 1)[0];
  int gemms = 0, messages = 0;
  for (const Row& r : s.rows) {
    double tool_s = 0;
    if (r.cells.count("m")) {
      ++gemms;
      tool_s = nersc_gemm_s(sys, std::stod(r.cells.at("m")), std::stod(r.cells.at("n")), std::stod(r.cells.at("k")));
    } else {
      ++messages;
      const int n = std::stoi(r.cells.at("nranks"));
      const std::string c = r.cells.at("collective");
      tool_s = nersc_comm_s(sys, std::stod(r.cells.at("size_bytes")) / 1e9, n,
                            c == "reduce_scatter" ? "reducescatter" : c, n / nodes_of(r));
    }
    EXPECT_NEAR(tool_s * 1e6 / r.ours_us / r.after, 1.0, 1e-4) << r.op;
    // Our time is predict's for the operation's first role.
    const std::string role = r.roles.substr(0, r.roles.find('+'));
    bool found = false;
    for (const auto& op : predict["ops"])
      if (op["op_role"] == role && !found) {
        found = true;
        EXPECT_NEAR(op["time_us_per_call"].get<double>() / r.ours_us, 1.0, 1e-5) << role;
      }
    EXPECT_TRUE(found) << role;
  }
  EXPECT_GT(gemms, 0);
  EXPECT_GT(messages, 0);
}

TEST(WorkloadFields, CalculonRatiosAreItsNetworkTimeOverOurs) {
  const std::string dir = workload_fixture_dir();
  // The fixture measures only allreduce across nodes: Calculon's inter-node tier by hand.
  const Section s = export_section(dir, "calculon", " --set inter_busbw_gbps=20 --set inter_alpha_us=25");
  const json sys = json::parse(read_text(dir + "/out/calculon/system.json"));
  for (const Row& r : s.rows) {
    const bool p2p = r.cells.count("pattern") > 0;
    const std::string c = p2p ? "p2p" : r.cells.at("collective");
    const std::string op = p2p ? "p2p" : c == "allreduce" ? "all_reduce" : c == "allgather" ? "all_gather" : "reduce_scatter";
    const int n = p2p ? 2 : std::stoi(r.cells.at("nranks"));
    const json& net = sys["networks"][nodes_of(r) > 1 ? 1 : 0];
    EXPECT_NEAR(calculon_time_s(net, op, std::stod(r.cells.at("size_bytes")), n) * 1e6 / r.ours_us / r.after, 1.0,
                1e-4)
        << r.op;
  }
}

TEST(WorkloadFields, AstraSimAndVTrainFitNoWorseThanTheReferenceShape) {
  const std::string dir = workload_fixture_dir();
  const Section a = export_section(dir, "astrasim");
  const json sys = json::parse(read_text(dir + "/out/astrasim/system.json"));
  for (const Row& r : a.rows)
    if (r.cells.count("m")) {  // the roofline: flops / peak-perf
      const double flops = 2 * std::stod(r.cells.at("m")) * std::stod(r.cells.at("n")) * std::stod(r.cells.at("k")) *
                           std::stod(r.cells.at("batch"));
      EXPECT_NEAR(flops / (sys["peak-perf"].get<double>() * 1e12) * 1e6 / r.ours_us / r.after, 1.0, 1e-4) << r.op;
    }
  const Section v = export_section(dir, "vtrain");
  const json config = json::parse(read_text(dir + "/out/vtrain/system_config.json"));
  for (const Row& r : v.rows) {
    const bool inter = nodes_of(r) > 1;
    const double n = std::stod(r.cells.at("nranks"));
    // predictor.py compute_comm_time's fallbacks: GiB/s within a node, Gbit/s (2^30) across nodes.
    const double bytes_per_s = inter ? config["inter_node_bandwidth"].get<double>() * 1073741824.0 / 8
                                     : config["intra_node_bandwidth"].get<double>() * 1073741824.0;
    const double t = std::stod(r.cells.at("size_bytes")) / bytes_per_s * 2 * (n - 1) / n;
    EXPECT_NEAR(t * 1e6 / r.ours_us / r.after, 1.0, 1e-4) << r.op;
  }
}

// FNV-1a 64 of a file's bytes, the export folder's absolute path replaced by "OUT".
uint64_t fnv1a(std::string text, const std::string& out) {
  for (std::size_t at; (at = text.find(out)) != std::string::npos;) text.replace(at, out.size(), "OUT");
  uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : text) h = (h ^ c) * 0x100000001b3ULL;
  return h;
}

TEST(WorkloadFields, WithoutModelEveryFileIsAsBefore) {
  const std::string dir = fresh_temp_dir();
  write_synthetic_results(dir + "/results");
  std::string log;
  run_gpucal("export results --to all --out out --set processor_usage=0.05 --set offload_gbps=50 --set offload_gib=512 "
             "--set nodes=4",
             log, dir);
  // The tools' files, recorded with the exporters before the workload-aware fields (calculon
  // refuses: the synthetic folder has no reduce_scatter). NOTES.md is ours, not a tool's input,
  // and says more as the exporters learn more (the fits' intervals): it is checked for what it
  // must not say.
  const std::map<std::string, uint64_t> before{
      {"astrasim/network.yml", 0x960d47304b6da988ULL},
      {"astrasim/system.json", 0xa88ea2245eff7672ULL},
      {"nersc/system.json", 0x46747f8b0c41eb90ULL},
      {"vtrain/system_config.json", 0xa1b69582f3311cfdULL},
      {"vtrain/synthetic_gpu/AR_GPU16_1M_1024M_LUT", 0x70347f1840c66861ULL},
      {"vtrain/synthetic_gpu/AR_GPU2_1M_1024M_LUT", 0x18d2f1576eea0409ULL},
      {"vtrain/synthetic_gpu/AR_GPU4_1M_1024M_LUT", 0x595699bbd2598e33ULL},
      {"vtrain/synthetic_gpu/AR_GPU8_1M_1024M_LUT", 0x497e2b04fc4ce1ffULL}};
  const std::string out = std::filesystem::canonical(dir + "/out").string();
  for (const auto& [file, hash] : before)
    EXPECT_EQ(fnv1a(read_text(dir + "/out/" + file), out), hash) << file;
  EXPECT_FALSE(std::filesystem::exists(dir + "/out/calculon")) << log;
  for (const char* notes : {"astrasim/NOTES.md", "nersc/NOTES.md", "vtrain/NOTES.md"})
    EXPECT_EQ(read_text(dir + "/out/" + notes).find("Workload-aware"), std::string::npos) << notes;
}


// The latency scan starts at the export's reference value (guess x 2^-20..2^6); a step whose
// messages cost far more per call than that must still get its own latency, not the scan's top.
TEST(WorkloadFields, LatencyFitGoesPastTheScansTopWhenTheMinimumIsThere) {
  const double latency = 1e-2, per_byte = 1e-9, guess = 1e-6;  // the minimum at 10^4 x the guess
  std::vector<FitTerm> terms;
  for (double bytes : {2e3, 1e6, 9e7, 1.6e8})
    terms.push_back({.weight = 1, .ours_s = latency + per_byte * bytes, .key = 0,
                     .tool_s = [bytes](double l, double slope) { return l + slope * bytes; }});
  const LatencySlopes fit = fit_latency_slopes(terms, guess, {per_byte * 3});
  EXPECT_NEAR(fit.latency / latency, 1.0, 0.01) << fit.latency;
  ASSERT_EQ(fit.slopes.size(), 1u);
  EXPECT_NEAR(fit.slopes[0] / per_byte, 1.0, 0.01) << fit.slopes[0];
  EXPECT_LT(weighted_log_error(terms, fit.latency, fit.slopes), 1e-4);
  // Inside the first scan the answer is as before.
  const LatencySlopes near = fit_latency_slopes(terms, latency / 3, {per_byte * 3});
  EXPECT_NEAR(near.latency / latency, 1.0, 0.01) << near.latency;
}

// The terminal gets what was written and a count; NOTES.md holds the notes (--verbose prints them).
// A refused export writes no NOTES.md: its count says --verbose prints them.
TEST(ExportTerminal, NotesStayInNotesMdUnlessVerbose) {
  ExportReport r;
  r.consumer = "vtrain";
  r.files_written = {"out/vtrain/system_config.json", "out/vtrain/NOTES.md"};
  r.notes = {"16 GPUs: from allreduce/fp32/n16", "system_config.json: merge these keys"};
  r.assumed = {"gpus_per_node = 8: from the rank lines"};
  const std::string brief = terminal_export_report(r, false);
  EXPECT_EQ(brief.find("note: "), std::string::npos) << brief;
  EXPECT_EQ(brief.find("assumed: "), std::string::npos) << brief;
  EXPECT_NE(brief.find("2 note(s), 1 assumption(s): out/vtrain/NOTES.md"), std::string::npos) << brief;
  const std::string verbose = terminal_export_report(r, true);
  EXPECT_NE(verbose.find("  note: 16 GPUs: from allreduce/fp32/n16\n"), std::string::npos) << verbose;
  EXPECT_NE(verbose.find("  assumed: gpus_per_node = 8"), std::string::npos) << verbose;
  r.files_written.clear();
  r.refused = {"AR_GPU<N>_1M_1024M_LUT: no allreduce group"};
  const std::string refused = terminal_export_report(r, false);
  EXPECT_NE(refused.find("REFUSED"), std::string::npos) << refused;
  EXPECT_NE(refused.find("  2 note(s), 1 assumption(s) (--verbose prints them)"), std::string::npos) << refused;
  EXPECT_NE(terminal_export_report(r, true).find("  note: system_config.json: merge these keys"), std::string::npos);
}

}  // namespace
}  // namespace gpucal::calibration::testing
