// `gpucal list flags`: every long flag of every verb, nested verbs included, grouped by meaning.
// A flag's meaning is what it takes (a switch, or a value of a named kind: FILE, DIR, INT, ...)
// and its default; a flag name that carries two meanings shows as two rows, which
// tests/docs/check_flags.py refuses (docs/flags.md shows the table).
#include <CLI/CLI.hpp>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "app/list/registry_listings.h"

namespace gpucal::calibration {

namespace {

struct FlagUse {
  std::string verb;     // "fleet run"
  std::string takes;    // "switch", or the value's kind ("FILE", "INT", "NAME ...")
  std::string fallback; // the default as --help shows it, "" for none
  std::string help;     // the description's first clause
};

std::string takes_of(const CLI::Option& o) {
  if (o.get_expected_min() == 0 && o.get_expected_max() == 0) return "switch";
  // CLI11 appends a validator's name ("INT:INT", "FLOAT:NUMBER"); a set of choices stays.
  std::string kind = o.get_type_name();
  if (const auto colon = kind.find(':'); colon != std::string::npos)
    kind = kind.compare(colon + 1, 1, "{") == 0 ? kind.substr(colon + 1) : kind.substr(0, colon);
  if (o.get_expected_max() > 1) kind += " ...";
  return kind;
}

// The description up to its first ';' or line end, without a parenthesis that clause leaves open
// ("history file (SQLite; ...)" reads "history file").
std::string first_clause(const std::string& help) {
  const std::size_t end = help.find_first_of(";\n");
  std::string text = help.substr(0, end);
  int depth = 0;
  std::size_t open_at = std::string::npos;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '(' && depth++ == 0) open_at = i;
    if (text[i] == ')' && depth > 0) --depth;
  }
  if (depth > 0) text.erase(open_at);
  while (!text.empty() && (text.back() == ':' || text.back() == ' ')) text.pop_back();
  return text;
}

std::string shortened(std::string text, std::size_t limit = 90) {
  if (text.size() > limit) text = text.substr(0, text.rfind(' ', limit - 3)) + " ...";
  return text;
}

// A default a verb states in its flag's words, "(default: results/SUITE)" or "(default X)", when
// CLI11 holds none (a path made from another argument); "required" for a required flag. Only in
// the first line: a later line's "(default ...)" is one of the value's keys' (--set's).
std::string stated_default(const CLI::Option& o, const std::string& description) {
  if (o.get_required()) return "required";
  const std::string help = description.substr(0, description.find('\n'));
  for (const char* lead : {"(default: ", "(default "}) {
    const std::size_t at = help.find(lead);
    if (at == std::string::npos) continue;
    const std::size_t from = at + std::string(lead).size(), end = help.find(')', from);
    if (end != std::string::npos) return help.substr(from, end - from);
  }
  return "";
}

void collect(const CLI::App& app, const std::string& verb, std::vector<std::pair<std::string, FlagUse>>& out) {
  for (const CLI::Option* o : app.get_options()) {
    if (o->get_lnames().empty()) continue;  // positional, or a short flag alone
    const std::string name = "--" + o->get_lnames().front();
    if (name == "--help") continue;
    std::string fallback = o->get_default_str();
    if (fallback.empty()) fallback = stated_default(*o, o->get_description());
    out.push_back({name, {verb, takes_of(*o), fallback, first_clause(o->get_description())}});
  }
  for (const CLI::App* sub : app.get_subcommands({}))
    collect(*sub, verb.empty() ? sub->get_name() : verb + " " + sub->get_name(), out);
}

}  // namespace

registry::Listing list_flags(const CLI::App& gpucal) {
  std::vector<std::pair<std::string, FlagUse>> uses;
  collect(gpucal, "", uses);
  // One row per (flag, takes, default): the verbs that share it, and their words where they agree,
  // else the first verb's words under its name (the others' are in their --help).
  std::map<std::tuple<std::string, std::string, std::string>, std::pair<std::vector<std::string>, std::string>> rows;
  for (const auto& [name, use] : uses) {
    auto& row = rows[{name, use.takes, use.fallback}];
    const std::string verb = use.verb.empty() ? "gpucal" : use.verb;
    const auto ends_with = [](const std::string& text, const std::string& tail) {
      return text.size() >= tail.size() && text.compare(text.size() - tail.size(), tail.size(), tail) == 0;
    };
    if (row.first.empty() || (use.help.size() > row.second.size() && ends_with(use.help, row.second)))
      row.second = use.help;  // the same words, one verb with a lead ("workload targets: ")
    else if (!ends_with(row.second, use.help) && row.second.rfind(row.first.front() + ": ", 0) != 0)
    {
      const std::string lead = row.first.front() + ": ", tail = "; others: see their --help";
      row.second = lead + shortened(row.second, 90 - lead.size() - tail.size()) + tail;
    }
    row.first.push_back(verb);
  }
  registry::Listing t{.columns = {"flag", "takes", "default", "verbs", "meaning"}, .code_columns = {0}};
  for (const auto& [key, row] : rows) {
    const auto& [name, takes, fallback] = key;
    t.rows.push_back({name, takes, fallback.empty() ? "-" : fallback, registry::join(row.first), shortened(row.second)});
  }
  return t;
}

}  // namespace gpucal::calibration
