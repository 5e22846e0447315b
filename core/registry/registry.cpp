#include "core/registry/registry.h"

#include <algorithm>
#include <limits>

namespace gpucal::registry {

namespace {

// Optimal string alignment distance (Damerau-Levenshtein without repeated edits of a substring).
size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::vector<size_t>> d(a.size() + 1, std::vector<size_t>(b.size() + 1));
  for (size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (size_t i = 1; i <= a.size(); ++i)
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  return d[a.size()][b.size()];
}

}  // namespace

std::string nearest(std::string_view word, const std::vector<std::string>& candidates) {
  const size_t limit = std::max<size_t>(2, word.size() / 3);
  size_t best = std::numeric_limits<size_t>::max();
  std::string choice;
  for (const auto& c : candidates) {
    const size_t d = edit_distance(word, c);
    if (d < best) {
      best = d;
      choice = c;
    }
  }
  return best <= limit ? choice : "";
}

std::string unknown_message(std::string_view what, std::string_view word, const std::vector<std::string>& names) {
  std::string out = "unknown " + std::string(what) + " '" + std::string(word) + "' (";
  if (const std::string guess = nearest(word, names); !guess.empty()) out += "did you mean '" + guess + "'? ";
  out += "choices: ";
  for (size_t i = 0; i < names.size(); ++i) out += (i ? ", " : "") + names[i];
  return out + ")";
}

}  // namespace gpucal::registry
