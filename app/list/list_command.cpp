#include "app/list/list_command.h"

#include <CLI/CLI.hpp>
#include <iostream>
#include <nlohmann/json.hpp>

#include "app/list/registry_listings.h"
#include "core/registry/registry.h"

namespace gpucal::calibration {

CLI::App* ListCommand::add_to(CLI::App& app) {
  gpucal_ = &app;
  auto* cmd = app.add_subcommand(
      "list",
      "print a registry's rows (the CLI's choices, the docs' tables), or each registry and its row count");
  cmd->add_option("WHAT", what_, "the registry:\n" + registry::help_lines(registry_listings()));
  add_form_option(*cmd, form_);
  cmd->footer(examples_footer({
      {"gpucal list", "each registry, its row count and the file that holds it"},
      {"gpucal list collectives",
       "every collective with its bus factor, size convention and other tools' names"},
      {"gpucal list import-formats --as markdown",
       "the table docs/calibration.md shows (python3 tests/docs/check_docs.py --update rewrites the docs' "
       "copies)"},
  }));
  return cmd;
}

int ListCommand::run() {
  registry::Listing table;
  if (what_.empty()) {
    table.columns = {"registry", "rows", "table", "what it holds"};
    table.code_columns = {2};
    for (const RegistryListing& r : registry_listings())
      table.rows.push_back({std::string(r.name), std::to_string(r.make(*gpucal_).rows.size()),
                            std::string(r.source), std::string(r.help)});
  } else {
    table = registry::lookup(registry_listings(), what_, "registry").make(*gpucal_);
  }
  if (form_ == "json") {
    nlohmann::ordered_json rows = nlohmann::ordered_json::array();
    for (const auto& row : table.rows) {
      nlohmann::ordered_json object = nlohmann::ordered_json::object();
      for (std::size_t c = 0; c < table.columns.size() && c < row.size(); ++c) object[table.columns[c]] = row[c];
      rows.push_back(std::move(object));
    }
    std::cout << rows.dump(2) << "\n" << std::flush;
    return 0;
  }
  std::cout << registry::format_table(table, form_ == "markdown") << std::flush;
  return 0;
}

}  // namespace gpucal::calibration
