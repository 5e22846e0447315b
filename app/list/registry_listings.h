// The registries `gpucal list` shows, one row each (a registry of the registries): each row makes
// its table from the registry itself (core/registry/listing.h), so a row added to any of them is
// in `gpucal list WHAT` at once, and in the docs' generated tables once
// `python3 tests/docs/check_docs.py --update` has re-run them (docs/extending.md). The benches'
// own implementation registries are listed by each bench (--list-impls): the app includes no
// bench file.
#pragma once

#include <string_view>
#include <vector>

#include "core/registry/listing.h"

namespace CLI {
class App;
}

namespace gpucal::calibration {

struct RegistryListing {
  std::string_view name;    // gpucal list's WHAT
  std::string_view help;    // what the registry holds, one line
  std::string_view source;  // the file that holds its table
  // Its rows as a table; `gpucal` is the command's CLI, which the verbs' table reads (app/main.cpp
  // makes a subcommand of each row of its verb table).
  registry::Listing (*make)(const CLI::App& gpucal) = nullptr;
};

const std::vector<RegistryListing>& registry_listings();

// The model presets' table (core/model/presets.cpp): every hyper-parameter column and the source.
registry::Listing preset_listing();

// Every long flag of every verb, one row per meaning (app/list/flag_listing.cpp).
registry::Listing list_flags(const CLI::App& gpucal);

}  // namespace gpucal::calibration
