// `gpucal check --health`: this node's health checks (app/check/health.h) as a table and a
// verdict, exit 1 on a failure or when nothing could be checked. As Slurm's HealthCheckProgram or
// prolog, `--drain` drains the node with the first failure as the reason (app/report/slurm_drain.h:
// scontrol update NodeName=NODE State=DRAIN Reason="gpucal health: ..."). docs/operators.md, "Health checks".
#pragma once
#include <ostream>
#include <string>

namespace gpucal::check {

struct HealthOptions {
  std::string sysfs = "/sys";  // where PCIe, EDAC and CPU throttle counters are read
  std::string from;            // a recorded readings file (the --json output) judged instead
  std::string kernel_log;      // Xids from this kernel log text instead of the ring buffer
  std::string node;            // the node's name; "" = SLURMD_NODENAME, else the short host name
  bool drain = false;
  std::string scontrol = "scontrol";  // the program --drain runs
  std::string json, junit, prometheus;
};

int run_health(const HealthOptions& options, std::ostream& out);

}  // namespace gpucal::check
