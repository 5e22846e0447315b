// The operator's verbs, one Command each for app/main.cpp's verb registry:
//   gpucal fleet run OUT_DIR        measure every node, pairs of nodes, the whole allocation (fleet_run.h)
//   gpucal fleet report FLEET_DIR   suspect nodes and links (diagnosis.h, report.h)
//   gpucal fleet baseline INPUT...  an expectations file from N nodes (baseline.h)
//   gpucal fleet schedule --nodes N the link phase's rounds (schedule.h)
//   gpucal check RESULTS --expect   a results folder against its SKU (app/check/check_command.h)
//   gpucal history import|show|regressions   the history store (app/history/history_commands.h)
#pragma once
#include <memory>
#include <string>

#include "app/common/command.h"

namespace gpucal::fleet {

// `verb`: "fleet", "check" or "history". Errors are thrown (std::invalid_argument: bad input, exit 2).
std::unique_ptr<calibration::Command> make_operator_command(const std::string& verb, const std::string& argv0);

}  // namespace gpucal::fleet
