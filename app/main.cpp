// gpucal: the calibration front end. One verb per row of the verb registry below; each verb's
// flags, help and examples live with it (app/<family>/<verb>_command.h). `gpucal --help`,
// `gpucal VERB --help`.
// Exit codes: 0 ok; 1 regression (compare), a failed bench or a suite that measured nothing
// (run), or a failed write (disk full: the previous file stays); 2 bad input.
#include <CLI/CLI.hpp>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "app/common/command.h"
#include "app/compare/compare_command.h"
#include "app/export/export_command.h"
#include "app/fit/fit_command.h"
#include "app/fleet/commands.h"
#include "app/import/import_command.h"
#include "app/list/list_command.h"
#include "app/predict/predict_comm_command.h"
#include "app/predict/predict_command.h"
#include "app/run/run_command.h"
#include "core/driver/flag_checks.h"
#include "core/output/file_io.h"
#include "core/output/metadata.h"
#include "core/registry/registry.h"

namespace {

using namespace gpucal::calibration;

constexpr int kExitBadInput = 2;
constexpr int kExitFailure = 1;

struct Verb {
  std::string_view name;
  std::unique_ptr<Command> (*make)(const std::vector<std::string>& argv);
};

// The verb registry, in the order `gpucal --help` lists them.
const std::vector<Verb>& verbs() {
  static const std::vector<Verb> table{
      {.name = "run", .make = [](const auto& argv) -> std::unique_ptr<Command> {
         return std::make_unique<RunCommand>(argv.front());
       }},
      {.name = "fit", .make = [](const auto&) -> std::unique_ptr<Command> { return std::make_unique<FitCommand>(); }},
      {.name = "export",
       .make = [](const auto&) -> std::unique_ptr<Command> { return std::make_unique<ExportCommand>(); }},
      {.name = "compare",
       .make = [](const auto&) -> std::unique_ptr<Command> { return std::make_unique<CompareCommand>(); }},
      {.name = "import",
       .make = [](const auto& argv) -> std::unique_ptr<Command> { return std::make_unique<ImportCommand>(argv); }},
      {.name = "predict-comm",
       .make = [](const auto&) -> std::unique_ptr<Command> { return std::make_unique<PredictCommCommand>(); }},
      {.name = "predict",
       .make = [](const auto&) -> std::unique_ptr<Command> {
         return std::make_unique<gpucal::predict::PredictCommand>();
       }},
      {.name = "fleet",
       .make = [](const auto& argv) { return gpucal::fleet::make_operator_command("fleet", argv.front()); }},
      {.name = "check",
       .make = [](const auto& argv) { return gpucal::fleet::make_operator_command("check", argv.front()); }},
      {.name = "history",
       .make = [](const auto& argv) { return gpucal::fleet::make_operator_command("history", argv.front()); }},
      {.name = "list", .make = [](const auto&) -> std::unique_ptr<Command> { return std::make_unique<ListCommand>(); }},
  };
  return table;
}

// The first --flag of argv that `sub` does not take, and the nearest one it does, for CLI11's
// "The following arguments were not expected" (which names no alternative).
std::string suggest_flag(const CLI::App& sub, const std::vector<std::string>& argv) {
  std::vector<std::string> known;
  for (const CLI::Option* o : sub.get_options())
    for (const auto& name : o->get_lnames()) known.push_back("--" + name);
  for (const auto& arg : argv) {
    if (arg.rfind("--", 0) != 0 || arg == "--") continue;
    const std::string flag = arg.substr(0, arg.find('='));
    if (std::find(known.begin(), known.end(), flag) != known.end()) continue;
    const std::string guess = gpucal::registry::nearest(flag, known);
    return "unknown flag " + flag + (guess.empty() ? "" : " (did you mean " + guess + "?)");
  }
  return "";
}

// CLI11's "Could not convert: --micro-batch = 1G" as one line naming the flag and what it takes.
std::string conversion_message(const CLI::App& app, const std::string& what) {
  const std::string lead = "Could not convert: ";
  const auto eq = what.find(" = ");
  if (what.rfind(lead, 0) != 0 || eq == std::string::npos) return what;
  const std::string flag = what.substr(lead.size(), eq - lead.size()), value = what.substr(eq + 3);
  std::string type;
  std::vector<const CLI::App*> apps{&app};
  for (std::size_t i = 0; i < apps.size(); ++i) {
    for (const CLI::App* sub : apps[i]->get_subcommands()) apps.push_back(sub);
    if (!apps[i]->parsed() && apps[i] != &app) continue;
    for (const CLI::Option* o : apps[i]->get_options())
      for (const auto& name : o->get_lnames())
        if ("--" + name == flag) type = o->get_type_name();
  }
  const std::string expected = type == "INT" || type == "UINT" ? "an integer that fits the flag"
                               : type == "FLOAT"                ? "a number"
                                                                : "a value of its kind (see --help)";
  return flag + ": expected " + expected + ", got '" + value + "'";
}

int parse(CLI::App& app, int argc, char** argv, const std::vector<std::string>& args) {
  if (const std::string why = gpucal::missing_option_value(app, argc, argv); !why.empty()) {
    gpucal::write_stderr_line("gpucal: error: " + why);
    return kExitBadInput;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& e) {
    return app.exit(e);  // --help
  } catch (const CLI::ParseError& e) {
    std::string line = e.what();
    if (dynamic_cast<const CLI::ConversionError*>(&e) != nullptr) line = conversion_message(app, line);
    if (dynamic_cast<const CLI::ExtrasError*>(&e) != nullptr)
      for (const CLI::App* sub : app.get_subcommands()) {
        while (!sub->get_subcommands().empty()) sub = sub->get_subcommands().front();  // `fleet report`: report's flags
        if (const std::string s = suggest_flag(*sub, args); !s.empty()) line = s;
      }
    gpucal::write_stderr_line("gpucal: error: " + line);  // one line, exit 2 like every bad input
    return kExitBadInput;
  }
  return -1;
}


}  // namespace

int main(int argc, char** argv) {
  // A file-size limit (ulimit -f) would kill gpucal with SIGXFSZ, silently; ignored, the write
  // fails with EFBIG and the command names the file (core/output/file_io.h).
  std::signal(SIGXFSZ, SIG_IGN);
  const std::vector<std::string> args(argv, argv + argc);
  CLI::App app{"gpucal: run benchmark suites, fit calibration models, compare runs, export for modelers"};
  app.require_subcommand(1);
  app.set_version_flag("--version", gpucal::version_text("gpucal"), "print the version and the commit it was built from");
  app.footer(examples_footer({
      {"gpucal run --suite smoke", "every bench on a few points, then fit, exports, plots and summary.md"},
      {"gpucal import nccl-tests.log --out h100/ && gpucal export h100/ --to vtrain",
       "simulator inputs from existing nccl-tests logs"},
      {"gpucal predict results/smoke --model llama3-8b --tp 2 --dp 2",
       "a training step's time from a calibration"},
  }));
  // CLI11 would call an unknown word "not expected" or ask for a subcommand: name the nearest.
  const std::vector<std::string> names = gpucal::registry::names(verbs());
  if (argc > 1 && argv[1][0] != '-' && gpucal::registry::find(verbs(), argv[1]) == nullptr) {
    gpucal::write_stderr_line("gpucal: error: " + gpucal::registry::unknown_message("subcommand", argv[1], names));
    return kExitBadInput;
  }
  std::vector<std::pair<std::unique_ptr<Command>, CLI::App*>> commands;
  for (const Verb& verb : verbs()) {
    auto command = verb.make(args);
    CLI::App* sub = command->add_to(app);
    commands.emplace_back(std::move(command), sub);
  }
  if (const int status = parse(app, argc, argv, args); status >= 0) return status;
  // GPUCAL_PARSE_ONLY: stop once the command line parses, before any file is read (the test that
  // runs every --help example, tests/e2e/check_help_examples.py).
  if (const char* only = std::getenv("GPUCAL_PARSE_ONLY"); only != nullptr && std::string(only) == "1") {
    try {
      for (auto& [command, sub] : commands)
        if (*sub) command->check_without_inputs();
    } catch (const std::exception& e) {
      gpucal::write_stderr_line(std::string("gpucal: error: ") + e.what());
      return kExitBadInput;
    }
    gpucal::write_stderr_line("gpucal: GPUCAL_PARSE_ONLY=1: the flags parse; nothing was run");
    return 0;
  }
  try {
    for (auto& [command, sub] : commands)
      if (*sub) return gpucal::stdout_written(command->run(), "gpucal");
  } catch (const gpucal::WriteError& e) {
    gpucal::write_stderr_line(std::string("gpucal: error: ") + e.what());  // the inputs were fine; the output failed
    return kExitFailure;
  } catch (const std::filesystem::filesystem_error& e) {
    gpucal::write_stderr_line("gpucal: error: " + gpucal::filesystem_error_text(e));
    return kExitBadInput;
  } catch (const std::exception& e) {
    gpucal::write_stderr_line(std::string("gpucal: error: ") + e.what());
    return kExitBadInput;
  }
  return kExitBadInput;
}
