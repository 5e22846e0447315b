// One registry per extension point (collectives, GEMM, attention and memory implementations,
// export targets, import formats, suites, model presets): a table of descriptors, each with a
// `name` and a one-line `help`. A CLI's choices, its help text, its validation and its
// "unknown name" messages are made here from the table, never retyped; so are the tables
// `gpucal list` and the benches' --list-impls print for the docs (core/registry/listing.h).
#pragma once

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "core/errors.h"

namespace gpucal::registry {

// The candidate closest to `word` by edit distance (insertions, deletions, substitutions and
// swaps of neighbours), or "" when none is within max(2, |word| / 3) edits: a typo, not
// another word.
std::string nearest(std::string_view word, const std::vector<std::string>& candidates);

// "unknown <what> 'word' (did you mean 'x'? choices: a, b, c)", one line.
std::string unknown_message(std::string_view what, std::string_view word, const std::vector<std::string>& names);

template <class Table>
std::vector<std::string> names(const Table& table) {
  std::vector<std::string> out;
  for (const auto& entry : table) out.emplace_back(entry.name);
  return out;
}

// "a | b | c", for a flag's help and the CLI's choices.
template <class Table>
std::string choices(const Table& table, std::string_view separator = " | ") {
  std::string out;
  for (const auto& entry : table) {
    if (!out.empty()) out += separator;
    out += entry.name;
  }
  return out;
}

// One line per entry, "  name  help", names padded to one column; no newline after the last.
template <class Table>
std::string help_lines(const Table& table) {
  size_t width = 0;
  for (const auto& entry : table) width = std::max(width, std::string_view(entry.name).size());
  std::string out;
  for (const auto& entry : table) {
    const std::string_view name = entry.name;
    if (!out.empty()) out += "\n";
    out += "  " + std::string(name) + std::string(width - name.size() + 2, ' ') + std::string(entry.help);
  }
  return out;
}

template <class Table>
auto find(const Table& table, std::string_view name) -> decltype(&*std::begin(table)) {
  for (const auto& entry : table)
    if (std::string_view(entry.name) == name) return &entry;
  return nullptr;
}

// For implementation registries whose rows list the backends they run on (`.backends`).
template <class Entry>
bool runs_on(const Entry& entry, std::string_view backend) {
  return std::find(entry.backends.begin(), entry.backends.end(), backend) != entry.backends.end();
}
// "cuda or hip"
template <class Entry>
std::string backends_text(const Entry& entry) {
  std::string out;
  for (const auto b : entry.backends) out += (out.empty() ? "" : " or ") + std::string(b);
  return out;
}

// The entry named `name`; UsageError with the nearest name and the choices otherwise.
template <class Table>
const auto& lookup(const Table& table, std::string_view name, std::string_view what) {
  if (const auto* entry = find(table, name)) return *entry;
  throw UsageError(unknown_message(what, name, names(table)));
}

}  // namespace gpucal::registry
