#include "core/world/nccl_log.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <fstream>

namespace gpucal {

namespace {

constexpr std::string_view kNcclInfo = "NCCL INFO ";
constexpr std::string_view kArrow = " Bytes -> Algo ";
// NCCL's numbering (NCCL_ALGO_* and NCCL_PROTO_*, the same in every version that logs numbers).
const std::vector<std::string> kAlgos = {"TREE", "RING", "COLLNET_DIRECT", "COLLNET_CHAIN", "NVLS", "NVLS_TREE", "PAT"};
const std::vector<std::string> kProtos = {"LL", "LL128", "SIMPLE"};

bool consume(std::string_view& s, std::string_view prefix) {
  if (s.substr(0, prefix.size()) != prefix) return false;
  s.remove_prefix(prefix.size());
  return true;
}

// The text up to `stop` (or the end), removed from s.
std::string_view take_until(std::string_view& s, char stop) {
  const size_t n = std::min(s.find(stop), s.size());
  const std::string_view out = s.substr(0, n);
  s.remove_prefix(n);
  return out;
}

template <typename T>
bool whole_integer(std::string_view text, T& out) {
  if (text.empty()) return false;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc() && end == text.data() + text.size();
}

bool is_word(std::string_view text) {
  return !text.empty() && std::all_of(text.begin(), text.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
  });
}

// A name as NCCL prints it, or a number mapped to the name (kept as digits past the table).
bool parse_choice(std::string_view word, const std::vector<std::string>& names, std::string& out, bool& numbered) {
  int n = 0;
  numbered = whole_integer(word, n);
  if (numbered) {
    if (n < 0) return false;
    out = static_cast<size_t>(n) < names.size() ? names[static_cast<size_t>(n)] : std::string(word);
    return true;
  }
  out = std::string(word);
  return is_word(word);
}

}  // namespace

std::optional<NcclTuningRecord> parse_nccl_tuning_line(std::string_view line) {
  const size_t at = line.find(kNcclInfo);
  if (at == std::string_view::npos) return std::nullopt;
  std::string_view s = line.substr(at + kNcclInfo.size());
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  const size_t arrow = s.find(kArrow);
  if (arrow == std::string_view::npos) return std::nullopt;

  NcclTuningRecord r;
  const size_t colon = s.find(": ");
  if (colon < arrow) {
    const std::string_view func = s.substr(0, colon);
    if (!is_word(func)) return std::nullopt;
    r.func = std::string(func);
    s.remove_prefix(colon + 2);
  }
  if (!whole_integer(take_until(s, ' '), r.bytes) || r.bytes < 0 || !consume(s, kArrow)) return std::nullopt;
  bool algo_numbered = false, proto_numbered = false;
  if (!parse_choice(take_until(s, ' '), kAlgos, r.algo, algo_numbered) || !consume(s, " proto ") ||
      !parse_choice(take_until(s, ' '), kProtos, r.proto, proto_numbered) || algo_numbered != proto_numbered)
    return std::nullopt;
  r.numbered = algo_numbered;
  if (s.empty()) return r;
  if (s.front() != ' ') return std::nullopt;  // the proto word ran on
  if (consume(s, " channel{Lo..Hi}={")) {
    if (!whole_integer(take_until(s, '.'), r.channel_lo) || !consume(s, "..") ||
        !whole_integer(take_until(s, '}'), r.channel_hi) || !consume(s, "}"))
      return std::nullopt;
  }
  return r;
}

std::vector<NcclTuningRecord> parse_nccl_tuning_lines(const std::vector<std::string>& lines) {
  std::vector<NcclTuningRecord> out;
  for (const auto& line : lines)
    if (auto r = parse_nccl_tuning_line(line)) out.push_back(std::move(*r));
  return out;
}

NcclTuningSummary summarize_nccl_tuning(const std::vector<NcclTuningRecord>& records, const NcclTuningExpect& expect) {
  NcclTuningSummary s;
  if (expect.func.empty()) return s;
  struct Choice {
    std::string algo, proto;
    int count;
  };
  std::vector<Choice> seen;  // in order of first appearance
  for (const auto& r : records) {
    if (!r.func.empty() && r.func != expect.func) continue;
    if (r.bytes != (r.numbered ? expect.numbered_bytes : expect.bytes)) continue;
    auto it = std::find_if(seen.begin(), seen.end(), [&](const Choice& c) { return c.algo == r.algo && c.proto == r.proto; });
    if (it == seen.end()) seen.push_back({r.algo, r.proto, 1});
    else ++it->count;
    ++s.matched;
  }
  if (seen.empty()) return s;
  std::stable_sort(seen.begin(), seen.end(), [](const Choice& a, const Choice& b) { return a.count > b.count; });
  s.algo = seen.front().algo;
  s.proto = seen.front().proto;
  for (const auto& c : seen)
    s.choices += (s.choices.empty() ? "" : ",") + c.algo + "/" + c.proto + ":" + std::to_string(c.count);
  return s;
}

std::string expand_nccl_debug_file(const std::string& pattern, const std::string& host, long pid) {
  std::string out;
  for (size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] != '%' || i + 1 == pattern.size()) {
      out += pattern[i];
      continue;
    }
    const char code = pattern[++i];
    if (code == '%') out += '%';
    else if (code == 'h') out += host;
    else if (code == 'p') out += std::to_string(pid);
    else out += std::string{'%', code};
  }
  return out;
}

std::string nccl_host_name() {
  char name[1024] = {};
  if (gethostname(name, sizeof(name)) != 0) return "unknown";
  name[sizeof(name) - 1] = '\0';
  std::string host(name);
  return host.substr(0, host.find('.'));
}

std::string nccl_debug_file(const std::string& pattern) {
  return expand_nccl_debug_file(pattern, nccl_host_name(), static_cast<long>(getpid()));
}

std::vector<std::string> LogTail::read_new() {
  std::ifstream in(path_, std::ios::binary);
  if (!in) return {};
  in.seekg(0, std::ios::end);
  const std::streamoff size = in.tellg();
  if (size < 0) return {};
  if (static_cast<uint64_t>(size) < offset_) offset_ = 0;  // rewritten since the last call
  if (static_cast<uint64_t>(size) == offset_) return {};
  std::string data(static_cast<size_t>(static_cast<uint64_t>(size) - offset_), '\0');
  in.seekg(static_cast<std::streamoff>(offset_));
  in.read(data.data(), static_cast<std::streamsize>(data.size()));
  data.resize(static_cast<size_t>(in.gcount()));
  const size_t last = data.rfind('\n');
  if (last == std::string::npos) return {};  // only a partial line so far
  offset_ += last + 1;
  std::vector<std::string> lines;
  for (size_t start = 0; start <= last;) {
    const size_t end = data.find('\n', start);
    lines.emplace_back(data, start, end - start);
    start = end + 1;
  }
  return lines;
}

}  // namespace gpucal
