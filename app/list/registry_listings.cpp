#include "app/list/registry_listings.h"

#include <CLI/CLI.hpp>
#include <sstream>

#include "app/export/export_registry.h"
#include "app/import/import_formats.h"
#include "app/run/suites.h"
#include "core/formulas/collectives.h"
#include "core/formulas/kernel_table.h"

namespace gpucal::calibration {

namespace {

using registry::Listing;

std::string words_or_dash(const std::vector<std::string_view>& words) {
  std::vector<std::string> out(words.begin(), words.end());
  return out.empty() ? "-" : registry::join(out);
}

Listing list_verbs(const CLI::App& gpucal) {
  Listing t{.columns = {"verb", "what it does"}};
  for (const CLI::App* sub : gpucal.get_subcommands({}))
    t.rows.push_back({sub->get_name(), sub->get_description()});
  return t;
}

std::string bus_factor_text(BusFamily bus) {
  switch (bus) {
    case BusFamily::allreduce:
      return "2(n-1)/n";
    case BusFamily::exchange:
      return "(n-1)/n";
    case BusFamily::unit:
      return "1";
  }
  return "?";
}

Listing list_collectives(const CLI::App&) {
  Listing t{.columns = {"collective", "help", "busbw factor", "nccl-tests S", "kind", "bench_collectives",
                        "nccl-tests", "NCCL log", "OSU title", "aliases"}};
  for (const CollectiveInfo& c : collectives()) {
    std::vector<std::string> kind;
    if (c.reduces) kind.emplace_back("reduces");
    if (c.rooted) kind.emplace_back("rooted");
    t.rows.push_back({std::string(c.name), std::string(c.help), bus_factor_text(c.bus),
                      c.size_total_over_ranks ? "total over ranks" : "per rank",
                      kind.empty() ? "-" : registry::join(kind), c.in_bench ? "measured" : "imported only",
                      c.nccl_tests_name.empty() ? "-" : std::string(c.nccl_tests_name),
                      c.nccl_tuning_name.empty() ? "-" : std::string(c.nccl_tuning_name),
                      words_or_dash(c.osu_words), words_or_dash(c.aliases)});
  }
  return t;
}

Listing list_export_targets(const CLI::App&) {
  Listing t{.columns = {"target", "tool", "writes", "needs --model"}};
  for (const ExportTarget& e : export_targets())
    t.rows.push_back(
        {std::string(e.name), std::string(e.tool), std::string(e.help), e.workload ? "yes" : "no"});
  return t;
}

Listing list_import_formats(const CLI::App&) {
  Listing t{.columns = {"format", "what it reads, and what its rule looks for", "where the rule looks"}};
  for (const ImportFormat& f : import_formats())
    t.rows.push_back(
        {std::string(f.name), std::string(f.help),
         f.scope == FormatScope::whole_file
             ? "the first line that is neither blank nor a '#' comment (the whole file is one run)"
             : "every line (a log may hold several tables)"});
  return t;
}

Listing list_suites(const CLI::App&) {
  Listing t{.columns = {"suite", "purpose", "benches", "max time per point (s)", "predicts"}};
  for (const Suite& s : suites()) {
    std::vector<std::string> benches;
    for (const BenchInvocation& b : s.benches) benches.push_back(b.bench);
    std::ostringstream seconds;
    seconds << s.max_time_per_point_s;
    t.rows.push_back({s.name, s.purpose, registry::join(benches), seconds.str(),
                      s.predict_label.empty() ? "-" : s.predict_label});
  }
  return t;
}

Listing list_memory_kernels(const CLI::App&) {
  Listing t{.columns = {"kernel", "family", "computes", "bytes"}, .code_columns = {2, 3}};
  for (const memory::KernelDesc& k : memory::kernel_table())
    t.rows.push_back({k.name, std::string(memory::family_word(k.family)), k.computes, memory::bytes_formula(k)});
  return t;
}

}  // namespace

const std::vector<RegistryListing>& registry_listings() {
  static const std::vector<RegistryListing> table{
      {.name = "verbs", .help = "the gpucal command's verbs", .source = "app/main.cpp", .make = list_verbs},
      {.name = "collectives",
       .help = "every collective gpucal measures, imports or models, with its conventions",
       .source = "core/formulas/collectives.cpp",
       .make = list_collectives},
      {.name = "export-targets",
       .help = "the consumers gpucal export --to writes inputs for",
       .source = "app/export/export_registry.cpp",
       .make = list_export_targets},
      {.name = "import-formats",
       .help = "the log formats gpucal import reads (--format)",
       .source = "app/import/import_formats.cpp",
       .make = list_import_formats},
      {.name = "suites",
       .help = "the named sweeps of gpucal run --suite",
       .source = "app/run/suites.cpp",
       .make = list_suites},
      {.name = "presets",
       .help = "the model presets of --model, from published hyper-parameters",
       .source = "core/model/presets.cpp",
       .make = [](const CLI::App&) { return preset_listing(); }},
      {.name = "memory-kernels",
       .help = "bench_memory's kernels (--kernel), with the bytes each moves",
       .source = "core/formulas/kernel_table.cpp",
       .make = list_memory_kernels},
      {.name = "flags",
       .help = "every long flag of every verb: what it takes, its default and the verbs that share it",
       .source = "app/list/flag_listing.cpp",
       .make = list_flags},
  };
  return table;
}

}  // namespace gpucal::calibration
