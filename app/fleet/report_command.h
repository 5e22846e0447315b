// `gpucal fleet report FLEET_DIR` (app/history/diagnosis.h, app/fleet/report.h) and
// `gpucal fleet schedule --nodes N` (app/fleet/schedule.h).
#pragma once
#include <ostream>
#include <string>

#include "app/history/diagnosis.h"

namespace gpucal::fleet {

struct ReportOptions {
  std::string fleet_dir;
  std::string markdown, html, json, junit;  // empty: FLEET_DIR/report.md, report.html, report.json, report.junit.xml
  std::string history, cluster;             // record the run in this history file
  std::string prometheus;                   // node_exporter textfile collector (.prom); empty: none
  DiagnosisOptions diagnosis;
  bool drain = false;                // drain the suspect nodes in Slurm (app/fleet/drain.h)
  std::string scontrol = "scontrol";  // the program --drain runs
};

// Exit 1 when the report names a suspect node or link (or a node could not be drained).
int run_report(const ReportOptions& options, std::ostream& out);
// Everything run_report would refuse, checked without reading the fleet folder's figures:
// outputs over inputs, --statistic, --ignore-metrics, an --expect file, a --history file.
// `gpucal fleet run` calls it before its first step, so a bad flag costs no night.
void validate_report_options(const ReportOptions& options);

struct ScheduleOptions {
  std::string nodes;  // counts "4,8,16,64", or names "a,b,c" (one schedule)
  std::string pattern = "round-robin";
  uint64_t seed = 1;
  int group_size = 0;
  bool summary = false;  // the table only
};

int run_schedule(const ScheduleOptions& options, std::ostream& out);

}  // namespace gpucal::fleet
