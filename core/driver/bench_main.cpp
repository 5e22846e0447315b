// A bench's program, as a sequence of named steps: the allocator policy, the World, the
// command line (the bench's options, the World's, Google Benchmark's), then one run_rank
// per rank (core/driver/run_rank.h).
#include <benchmark/benchmark.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <thread>

#include "core/driver/driver.h"
#include "core/driver/flag_checks.h"
#include "core/driver/gbench_flags.h"
#include "core/driver/point_filter.h"
#include "core/driver/rank_agreement.h"
#include "core/driver/rank_placement.h"
#include "core/driver/run_rank.h"
#include "core/measure/malloc_policy.h"
#include "core/output/csv_sink.h"
#include "core/output/file_io.h"
#include "core/output/metadata.h"
#include "core/world/team.h"
#include "core/world/thread_world.h"

namespace gpucal {

namespace {

// Before MPI or any library allocates: every point then sees the same allocator
// (malloc_policy.h). False (after its one line) for a malformed policy.
bool apply_malloc_env(const std::string& prog, MallocPolicy& in_effect) {
  try {
    const MallocPolicy asked = malloc_policy_from_env(std::getenv);
    in_effect = apply_malloc_policy(asked);
    if (asked.sets_mallopt && !in_effect.sets_mallopt)
      write_stderr_line(prog + ": warning: " + in_effect.reason);
    return true;
  } catch (const UsageError& e) {
    write_stderr_line(prog + ": error: " + e.what());
    return false;
  }
}

RunConfig initial_config(const BenchSpec& spec, const MallocPolicy& malloc_in_effect, int argc, char** argv) {
  RunConfig config;
  config.malloc = malloc_in_effect;
  config.bench = spec.bench;
  for (int i = 0; i < argc; ++i) config.command_line.push_back(argv[i]);
  return config;
}

// The text of the options a bench across ranks adds, read after parsing.
struct RankOptionText {
  std::string rank_fault, threads;
};

// The options of benches that run across ranks (collectives, p2p).
void add_rank_options(CLI::App& app, RunConfig& config, Launch& launch, RankOptionText& text) {
  add_number(
      app, "--timeout", launch.timeout_s,
      "seconds without progress (a collective that does not finish, a row write that hangs) before the "
      "watchdog reports, aborts the communicators and exits non-zero; 0: off",
      {.min = 0, .max = 1e6})
      ->capture_default_str();
  app.add_option("--threads", text.threads,
                 "single-process launch: N ranks as threads of this process, one GPU each from --device on "
                 "(all: every visible GPU; host backend: threads on host memory); not under mpirun");
  app.add_option("--inject-rank-fault", text.rank_fault, "test only: hang-rank=R[@P] or kill-rank=R[@P]")
      ->group("");
  app.add_option(
         "--combine", config.combine,
         "each sample across ranks: max (the slowest rank), avg (nccl-tests -a 1, OSU's average), min")
      ->capture_default_str();
}

std::string examples_text(const std::vector<std::pair<std::string, std::string>>& examples) {
  std::string out = examples.empty() ? "" : "\nExamples:\n";
  for (const auto& [command, what] : examples) out += "  " + command + "\n      " + what + "\n";
  return out;
}

// Every option, in --help's order: the common ones, the World's, the bench's, and a footer on
// Google Benchmark's flags and the bench's worked examples.
void add_options(CLI::App& app, RunConfig& config, Launch& launch, RankOptionText& text,
                 const BenchSpec& spec) {
  add_common_options(app, config);
  if (spec.make_world_ops) add_rank_options(app, config, launch, text);
  if (spec.add_options) spec.add_options(app);
  app.add_flag("--version", "print the version and the commit it was built from, then exit");  // asks_for_version
  if (spec.list_impls) {
    auto* list = app.add_flag("--list-impls", launch.list_impls,
                              "print the implementations --impl chooses from (backend, help, whether this build has "
                              "each and why not) and exit without running");
    app.add_flag("--markdown", launch.list_impls_markdown,
                 "with --list-impls: a GitHub markdown table, giving what a build needs for each instead of what "
                 "this build has (the docs' tables are this output)")
        ->needs(list);
  }
  app.footer(
      "Google Benchmark flags also apply: --benchmark_filter=REGEX, --benchmark_list_tests (runs and writes "
      "nothing), --benchmark_format=console|json|csv, --benchmark_out=FILE (not a file --out writes), "
      "--benchmark_out_format=json|console|csv, --benchmark_time_unit=ns|us|ms|s, "
      "--benchmark_repetitions=N >= 1 (rows keep the point key, with a repetition column), "
      "--benchmark_min_time=S|Ss (= --min-time-per-point S) or Nx (= --min-samples N), "
      "--benchmark_min_warmup_time=S (= --warmup-time S).\n" +
      examples_text(spec.examples));
}

bool asks_for_help(int argc, char** argv) {
  for (int i = 1; i < argc; ++i)
    if (!std::strcmp(argv[i], "--help") || !std::strcmp(argv[i], "-h")) return true;
  return false;
}

bool asks_for_version(int argc, char** argv) {
  for (int i = 1; i < argc; ++i)
    if (!std::strcmp(argv[i], "--version")) return true;
  return false;
}

// The arguments after Google Benchmark's flags are taken: `args` owns the strings `argv`
// points into (the library keeps argv[0]), so it lives as long as the program.
struct BenchArgs {
  GbenchFlags gb;
  std::vector<std::string> args;
  std::vector<char*> argv;
  int argc = 0;
};

// Google Benchmark's flags, read as the library reads them; the ones the driver takes over
// are removed before the library sees the arguments (core/driver/gbench_flags.h).
void take_benchmark_args(int argc, char** argv, Launch& launch, BenchArgs& out) {
  out.args.assign(argv, argv + argc);
  out.gb = take_gbench_flags(out.args, [](const char* name) { return std::getenv(name); });
  launch.filter = out.gb.filter;
  launch.filter_source = out.gb.filter_source;
  launch.listing = out.gb.list_tests;
  for (auto& a : out.args) out.argv.push_back(a.data());
  out.argc = static_cast<int>(out.argv.size());
  // Not on a value the library would answer with its usage text (and exit 0) or its own
  // message: the error below is the one line.
  if (out.gb.error.empty()) benchmark::Initialize(&out.argc, out.argv.data());
}

// Google Benchmark's --benchmark_out must not be a file --out writes (the sidecar would
// overwrite its JSON, or it the sidecar).
void refuse_output_clash(const std::string& gbench_out, const std::string& out) {
  if (gbench_out.empty() || out.empty()) return;
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path theirs = fs::weakly_canonical(gbench_out, ec);
  for (const char* suffix : {"", ".json", ".samples.csv"}) {
    const std::string ours = *suffix ? sidecar_path(out, suffix) : out;
    if (fs::weakly_canonical(ours, ec) == theirs)
      throw UsageError("--benchmark_out=" + gbench_out + " is " +
                       (*suffix ? "the " + std::string(suffix) + " file written beside --out " + out
                                : std::string("the --out CSV itself")) +
                       ": give Google Benchmark's output another name");
  }
}

void parse_options(CLI::App& app, BenchArgs& args) {
  if (!args.gb.error.empty()) throw UsageError(args.gb.error);
  try {
    if (const std::string why = missing_option_value(app, args.argc, args.argv.data()); !why.empty())
      throw UsageError(why);
    app.parse(args.argc, args.argv.data());
  } catch (const CLI::ParseError& e) {
    throw UsageError(e.what());
  }
}

// What the command line asks for beyond the RunConfig.
struct ParsedRun {
  int threads = 0;             // rank threads of this process (0: one rank per process)
  bool informational = false;  // answered already (e.g. --list): exit 0
};

// The command line into config and launch, checked; throws UsageError for bad input.
ParsedRun parse_command_line(CLI::App& app, BenchArgs& args, RunConfig& config, Launch& launch,
                             const RankOptionText& text, World& world) {
  parse_options(app, args);
  const GbenchFlags& gb = args.gb;
  if (gb.min_time_s) config.measure.min_time_s = *gb.min_time_s;
  if (gb.min_iterations)
    config.measure.min_samples = std::max(config.measure.min_samples, *gb.min_iterations);
  if (gb.min_warmup_time_s) config.measure.warmup_time_s = *gb.min_warmup_time_s;
  finalize_config(config);
  check_filter(launch.filter);  // an invalid regex is bad input, before anything runs
  parse_combine(config.combine);
  if (!launch.listing) refuse_output_clash(gb.out, config.out);
  launch.fault = parse_rank_fault(text.rank_fault);
  ParsedRun parsed;
  parsed.threads = resolve_threads(text.threads, config, world);
  if (launch.list_impls) {
    if (world.is_root()) std::cout << launch.spec.list_impls(launch.list_impls_markdown) << std::flush;
    parsed.informational = true;
    return parsed;
  }
  parsed.informational = launch.spec.before_run && launch.spec.before_run(config);  // e.g. --list: exit 0
  return parsed;
}

// One run_rank per rank: this process's own, or one thread per rank (this thread is rank 0,
// which Google Benchmark drives). The exit code is the worst rank's.
int run_ranks(World& world, const RunConfig& config, const Launch& launch, int threads) {
  if (threads == 0) return run_rank(world, config, launch);
  auto worlds = make_thread_worlds(threads);
  std::vector<int> codes(static_cast<size_t>(threads), 0);
  std::vector<std::thread> others;
  for (int r = 1; r < threads; ++r)
    others.emplace_back([&, r] {
      codes[static_cast<size_t>(r)] = run_rank(*worlds[static_cast<size_t>(r)], config, launch);
    });
  codes[0] = run_rank(*worlds[0], config, launch);
  for (auto& t : others) t.join();
  return *std::max_element(codes.begin(), codes.end());
}

}  // namespace

namespace {
int bench_main_checked(int argc, char** argv, const BenchSpec& spec, const std::string& prog) {
  // A file-size limit (ulimit -f) would kill the bench with SIGXFSZ, silently; ignored, the
  // write fails with EFBIG and the bench says which file, keeping the rows (file_io.h).
  std::signal(SIGXFSZ, SIG_IGN);
  MallocPolicy malloc_in_effect;
  if (!apply_malloc_env(prog, malloc_in_effect)) return 2;
  std::unique_ptr<World> world_owner = make_world(&argc, &argv);
  World& world = *world_owner;
  RunConfig config = initial_config(spec, malloc_in_effect, argc, argv);
  CLI::App app(spec.description, prog);
  Launch launch{spec, prog, "", "", false, spec.default_timeout_s, {}, false, false};
  RankOptionText rank_text;
  add_options(app, config, launch, rank_text, spec);
  if (asks_for_help(argc, argv)) {
    if (world.is_root()) std::cout << app.help();
    return 0;
  }
  if (asks_for_version(argc, argv)) {
    if (world.is_root()) std::cout << version_text(prog) << "\n";
    return 0;
  }
  BenchArgs args;
  take_benchmark_args(argc, argv, launch, args);
  // GPUCAL_PARSE_ONLY: stop once the command line parses, before any device or file is looked at
  // (the test that runs every --help example, tests/e2e/check_help_examples.py).
  if (const char* only = std::getenv("GPUCAL_PARSE_ONLY"); only != nullptr && std::string(only) == "1") {
    try {
      parse_options(app, args);
    } catch (const UsageError& e) {
      std::cerr << prog << ": error: " << e.what() << "\n";
      return 2;
    }
    std::cerr << prog << ": GPUCAL_PARSE_ONLY=1: the flags parse; nothing was run\n";
    return 0;
  }
  // Parsing, on each process; every rank learns whether any rank failed.
  Steps step;
  ParsedRun parsed;
  step([&] { parsed = parse_command_line(app, args, config, launch, rank_text, world); });
  if (step.code == 0 && parsed.informational) return 0;
  if (const int code = agreed_exit_code(world, step.code, step.message, prog); code != 0) return code;
  const int code = run_ranks(world, config, launch, parsed.threads);
  benchmark::Shutdown();
  return code;
}
}  // namespace

int bench_main(int argc, char** argv, const BenchSpec& spec) {
  const std::string prog = "bench_" + spec.bench;
  // A listing, the help or the console table written to a full disk or a closed pipe fails the
  // command (the rows' CSV and sidecar report their own write errors).
  return stdout_written(bench_main_checked(argc, argv, spec, prog), prog);
}

}  // namespace gpucal
