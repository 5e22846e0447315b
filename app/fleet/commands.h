// The operator's verbs, added to the gpucal command in one call:
//   gpucal fleet run OUT_DIR        measure every node, pairs of nodes, the whole allocation (fleet_run.h)
//   gpucal fleet report FLEET_DIR   suspect nodes and links (diagnosis.h, report.h)
//   gpucal fleet baseline INPUT...  an expectations file from N nodes (baseline.h)
//   gpucal fleet schedule --nodes N the link phase's rounds (schedule.h)
//   gpucal check RESULTS --expect   a results folder against its SKU (app/check/check_command.h)
//   gpucal history import|show|regressions   the history store (app/history/history_commands.h)
#pragma once
#include <CLI/CLI.hpp>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace gpucal::fleet {

// The returned function runs the verb that was parsed and returns its exit code, or nullopt when
// none of these verbs was given. Errors are thrown (std::invalid_argument: bad input, exit 2).
std::function<std::optional<int>()> add_commands(CLI::App& app, const std::string& argv0);

// "fleet", "check", "history": the words add_commands adds.
const std::vector<std::string>& command_names();

}  // namespace gpucal::fleet
