// XLA's measured GPU performance tables (openxla/xla, xla/service/gpu/model/): the GEMM table
// (xla.GemmPerfTable: FLOP/s per b, m, n, k and type triple, default_matmul_perf_table.txtpb, earlier
// matmul_interpolator_data.h) and the collective table (xla.gpu.DeviceHloInstructionProfiles:
// network_throughput_bytes_per_sec per collective instruction, default_collective_perf_table.txtpb,
// earlier collective_interpolator_data.h). Either as the bare textproto XLA's generators write or
// as the C++ header that embeds it in a raw string (R"pb( ... )pb"). Parsed by protobuf's text
// format against app/import/xla_perf_table.proto; fields the generators add that gpucal does not
// read (layout, metadata, ids) are skipped.
//
// One device per results folder: a file holding several devices' tables needs --table-key.
// The collective table's tensor_size_bytes is nccl-tests' S (XLA's collective_perf_table_gen:
// the all-reduce buffer, the all-gather output, the reduce-scatter input, the all-to-all buffer),
// and its throughput is S / time; collective-permute rows have no gpucal counterpart and are
// left out, with a note.
#include <google/protobuf/io/tokenizer.h>
#include <google/protobuf/text_format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>

#include "app/import/import_numbers.h"
#include "app/import/import_parsers.h"
#include "app/import/xla_names.h"
#include "app/import/xla_perf_table.pb.h"
#include "core/registry/registry.h"

namespace gpucal::calibration {

bool detects_xla_table(const std::string& line);

namespace {

namespace pb = google::protobuf;

// The table text and the file line its first line is on.
struct TableText {
  std::string text;
  int first_line = 1;
};

// The textproto: the whole section, or what a C++ header embeds between R"pb( and )pb".
TableText table_text(const std::string& path, const std::vector<LogLine>& lines) {
  TableText t;
  // The table starts at the line that told its format (what a section holds before it, a C++
  // header's licence and include guard, is not the table's).
  auto start = std::find_if(lines.begin(), lines.end(), [](const LogLine& l) { return detects_xla_table(l.text); });
  if (start == lines.end()) start = lines.begin();
  if (start == lines.end()) throw ImportError(path, 0, "empty file");
  t.first_line = start->number;
  const auto open = start->text.find("R\"pb(");
  const bool embedded = open != std::string::npos;
  bool closed = false;
  for (auto l = start; l != lines.end() && !closed; ++l) {
    std::string text = l == start && embedded ? l->text.substr(open + 5) : l->text;
    if (embedded) {
      const auto end = text.find(")pb\"");
      if (end != std::string::npos) {
        text = text.substr(0, end);
        closed = true;
      }
    }
    t.text += text + "\n";
  }
  if (embedded && !closed) throw ImportError(path, t.first_line, "the raw string R\"pb( is not closed by )pb\"");
  return t;
}

// Protobuf's parse errors as one ImportError naming the file line.
class Errors : public pb::io::ErrorCollector {
 public:
  Errors(std::string path, int first_line) : path_(std::move(path)), first_line_(first_line) {}
  void AddError(int line, pb::io::ColumnNumber column, const std::string& message) override {
    if (first_.empty()) {
      first_ = message;
      line_ = first_line_ + line;
      column_ = column + 1;
    }
  }
  void AddWarning(int, pb::io::ColumnNumber, const std::string&) override {}
  [[noreturn]] void raise(const std::string& what) const {
    throw ImportError(path_, line_,
                      "not an XLA " + what + " table (column " + std::to_string(column_) + ": " + first_ + ")");
  }
  bool any() const { return !first_.empty(); }

 private:
  std::string path_;
  int first_line_;
  std::string first_;
  int line_ = 0, column_ = 0;
};

// Parses `text` as `message`; the locations of its fields go to `tree`. `skip_unknown`: fields the
// schema does not declare are skipped (the collective table's instructions carry many).
bool parse(const TableText& t, pb::Message& message, pb::TextFormat::ParseInfoTree& tree, bool skip_unknown,
           Errors& errors) {
  pb::TextFormat::Parser parser;
  parser.RecordErrorsTo(&errors);
  parser.WriteLocationsTo(&tree);
  parser.AllowUnknownField(skip_unknown);
  return parser.ParseFromString(t.text, &message);
}

int line_of(const pb::TextFormat::ParseInfoTree* tree, const pb::Message& parent, const char* field, int index,
            int first_line) {
  if (!tree) return first_line;
  const pb::FieldDescriptor* f = parent.GetDescriptor()->FindFieldByName(field);
  const pb::TextFormat::ParseLocation at = tree->GetLocation(f, index);
  return at.line < 0 ? first_line : first_line + at.line;
}

const pb::TextFormat::ParseInfoTree* nested(const pb::TextFormat::ParseInfoTree* tree, const pb::Message& parent,
                                            const char* field, int index) {
  if (!tree) return nullptr;
  return tree->GetTreeForNested(parent.GetDescriptor()->FindFieldByName(field), index);
}

std::string lower_text(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

// XLA's type names (f32, bf16, f8e4m3fn, ...; upper case in older tables) -> gpucal's.
std::string dtype_of_xla(const std::string& name) {
  static const std::map<std::string, std::string> names{
      {"f64", "fp64"},          {"f32", "fp32"},          {"f16", "fp16"}, {"bf16", "bf16"},
      {"f8e4m3fn", "fp8_e4m3"}, {"f8e5m2", "fp8_e5m2"},   {"s8", "int8"},  {"s32", "int32"},
      {"u8", "uint8"},          {"s16", "int16"},         {"pred", "bool"}};
  const auto it = names.find(lower_text(name));
  return it == names.end() ? "" : it->second;
}

// "bf16xbf16->bf16" -> {bf16, bf16, bf16}; nullopt when it is not of that form.
std::optional<std::array<std::string, 3>> type_triple(const std::string& key) {
  const auto arrow = key.find("->");
  if (arrow == std::string::npos) return std::nullopt;
  const std::string operands = key.substr(0, arrow);
  const auto x = operands.find('x');
  if (x == std::string::npos) return std::nullopt;
  std::array<std::string, 3> t{dtype_of_xla(operands.substr(0, x)), dtype_of_xla(operands.substr(x + 1)),
                               dtype_of_xla(key.substr(arrow + 2))};
  for (const auto& d : t)
    if (d.empty()) return std::nullopt;
  return t;
}

// The device key to import: --table-key, or the only one. Refuses a file holding several.
template <class Entries>
int pick_device(const std::string& path, int first_line, const Entries& entries, const ImportOptions& options,
                const std::string& what) {
  if (entries.empty()) throw ImportError(path, first_line, "an XLA " + what + " table with no device entry");
  std::vector<std::string> keys;
  for (const auto& e : entries) keys.push_back(e.key());
  if (!options.table_key.empty()) {
    for (int i = 0; i < entries.size(); ++i)
      if (entries.Get(i).key() == options.table_key) return i;
    throw ImportError(path, first_line,
                      "--table-key: " + registry::unknown_message("device key", options.table_key, keys));
  }
  if (entries.size() == 1) return 0;
  std::string list;
  for (const auto& k : keys) list += (list.empty() ? "" : ", ") + k;
  throw ImportError(path, first_line,
                    "holds the " + what + " tables of " + std::to_string(keys.size()) + " devices (" + list +
                        "); pass --table-key KEY (a results folder holds one device)");
}

// sm_90 -> cuda, gfx950 -> hip.
std::string backend_of_key(const std::string& key) {
  if (key.rfind("gfx", 0) == 0) return "hip";
  if (key.rfind("sm_", 0) == 0) return "cuda";
  return "";
}

ImportedRun run_base(const std::string& path, int line, const std::string& key, const ImportOptions& options) {
  ImportedRun run;
  run.source_file = path;
  run.first_line = line;
  run.format = "xla";
  run.impl = "xla-table";
  run.backend = backend_of_key(key);
  run.device = options.device.empty() ? key : options.device;
  run.hardware_lines.push_back("XLA device key: " + key);
  run.validated = false;
  return run;
}

std::vector<ImportedRun> gemm_runs(const std::string& path, const TableText& t, const ::xla::GemmPerfTable& table,
                                   const pb::TextFormat::ParseInfoTree& tree, const ImportOptions& options) {
  const int d = pick_device(path, t.first_line, table.entries(), options, "GEMM");
  const auto& device = table.entries(d);
  const int device_line = line_of(&tree, table, "entries", d, t.first_line);
  ImportedRun run = run_base(path, device_line, device.key(), options);
  run.program = "XLA GemmPerfTable";
  run.rank_combine = "one device";
  run.nranks = 1;
  run.nnodes = 1;
  run.ranks_per_node = 1;
  run.unknown.push_back("how each FLOP/s figure was made (XLA's matmul_perf_table_gen: its own timing loop)");
  run.unknown.push_back("operand layouts and the GEMM library XLA chose");
  const auto* device_tree = nested(&tree, table, "entries", d);
  const auto* values_tree = nested(device_tree, device, "value", -1);
  std::map<std::string, int> skipped;
  for (int i = 0; i < device.value().entries_size(); ++i) {
    const auto& e = device.value().entries(i);
    const int line = line_of(values_tree, device.value(), "entries", i, t.first_line);
    if (e.m() <= 0 || e.n() <= 0 || e.k() <= 0 || e.b() < 0)
      throw ImportError(path, line, "b, m, n and k must be positive (b may be left out for 1)");
    if (2.0 * std::max<double>(1, e.b()) * e.m() * e.n() * e.k() > 9e18)
      throw ImportError(path, line, "b x m x n x k is beyond any GEMM (2bmnk over 9e18 FLOP)");
    for (int f = 0; f < e.flops_size(); ++f) {
      const auto& fl = e.flops(f);
      const auto types = type_triple(fl.key());
      if (!types) {
        ++skipped[fl.key()];
        continue;
      }
      if (fl.value() <= 0)
        throw ImportError(path, line, "flops { key: \"" + fl.key() + "\" } must be positive FLOP/s, got " +
                                          std::to_string(fl.value()));
      GemmPoint p;
      p.b = e.b() == 0 ? 1 : e.b();
      p.m = e.m();
      p.n = e.n();
      p.k = e.k();
      p.dtype = (*types)[0];
      p.b_dtype = (*types)[1];
      p.out_dtype = (*types)[2];
      p.source_key = fl.key();
      p.flops_per_s = static_cast<double>(fl.value());
      p.line = line;
      run.gemms.push_back(p);
    }
  }
  for (const auto& [key, count] : skipped)
    run.notes.push_back(std::to_string(count) + " figure(s) of type '" + key + "' left out: gpucal has no such type");
  if (run.gemms.empty()) throw ImportError(path, device_line, "the '" + device.key() + "' GEMM table has no row");
  return {run};
}

// XLA's opcode -> gpucal's collective name; "" for those gpucal does not measure.
std::string collective_of_opcode(const std::string& opcode) {
  for (const auto& [collective, xla] : xla_collective_opcodes())
    if (xla == opcode) return collective;
  return "";
}

// What one collective profile measured: S (nccl-tests' convention), its type and its groups.
struct CollectiveShape {
  int64_t n = 0, groups = 1;
  std::string dtype;
  double size_bytes = 0;
};

CollectiveShape collective_shape(const std::string& path, int line, const ::xla::HloInstructionProfile& profile,
                                 const std::string& collective) {
  const auto& instr = profile.instruction();
  if (!instr.has_iota_collective_device_list())
    throw ImportError(path, line,
                      instr.opcode() + " without iota_collective_device_list: its group size is unknown to gpucal");
  CollectiveShape c;
  const auto& groups = instr.iota_collective_device_list();
  c.n = groups.num_devices_per_group();
  c.groups = std::max<int64_t>(1, groups.num_replica_groups());
  if (c.n < 1 || c.n > kMaxRanks)
    throw ImportError(path, line, "num_devices_per_group must be 1 to " + std::to_string(kMaxRanks));
  c.dtype = dtype_of_xla(::xla::PrimitiveType_Name(instr.shape().element_type()));
  const int esize = dtype_size_bytes_of(c.dtype);
  if (esize <= 0)
    throw ImportError(path, line, "element_type " + ::xla::PrimitiveType_Name(instr.shape().element_type()) +
                                      " has no size gpucal knows");
  if (instr.shape().dimensions().empty()) throw ImportError(path, line, "the instruction's shape has no dimensions");
  double elements = 1;
  for (int64_t dim : instr.shape().dimensions()) {
    if (dim <= 0) throw ImportError(path, line, "shape dimensions must be positive");
    elements *= static_cast<double>(dim);
  }
  // The instruction's shape is its output: S is n times it for reduce-scatter.
  c.size_bytes = elements * esize * (collective == "reduce_scatter" ? static_cast<double>(c.n) : 1.0);
  if (profile.network_throughput_bytes_per_sec() <= 0)
    throw ImportError(path, line, "network_throughput_bytes_per_sec must be positive");
  return c;
}

std::vector<ImportedRun> collective_runs(const std::string& path, const TableText& t,
                                         const ::xla::DeviceHloInstructionProfiles& table,
                                         const pb::TextFormat::ParseInfoTree& tree, const ImportOptions& options) {
  const int d = pick_device(path, t.first_line, table.entries(), options, "collective");
  const auto& device = table.entries(d);
  const int device_line = line_of(&tree, table, "entries", d, t.first_line);
  const auto* device_tree = nested(&tree, table, "entries", d);
  const auto* list_tree = nested(device_tree, device, "value", -1);
  // One run per collective, group size and group count, in the order they first appear.
  std::vector<ImportedRun> runs;
  std::map<std::tuple<std::string, int64_t, int64_t>, std::size_t> run_of;
  std::map<std::string, int> left_out;
  for (int i = 0; i < device.value().entries_size(); ++i) {
    const auto& profile = device.value().entries(i);
    const int line = line_of(list_tree, device.value(), "entries", i, t.first_line);
    const auto& instr = profile.instruction();
    const std::string collective = collective_of_opcode(instr.opcode());
    if (collective.empty()) {
      ++left_out[instr.opcode().empty() ? "(no opcode)" : instr.opcode()];
      continue;
    }
    const CollectiveShape shape = collective_shape(path, line, profile, collective);
    const int64_t n = shape.n, count = shape.groups;
    const std::string& dtype = shape.dtype;
    const double size = shape.size_bytes;
    const auto key = std::make_tuple(collective, n, count);
    auto [it, fresh] = run_of.emplace(key, runs.size());
    if (fresh) {
      ImportedRun run = run_base(path, line, device.key(), options);
      run.program = "XLA collective table (" + instr.opcode() + ")";
      run.collective = collective;
      run.collective_from = "opcode '" + instr.opcode() + "'";
      run.nranks = static_cast<int>(n);
      run.nranks_from = "num_devices_per_group";
      run.nnodes = 1;
      run.ranks_per_node = static_cast<int>(n);
      run.nodes_from = "XLA table (one NVLink domain assumed)";
      run.rank_combine = std::to_string(count) + " group(s) of " + std::to_string(n) +
                         " at once; XLA's collective_perf_table_gen: median of its runs, S / time";
      run.unknown.push_back("node count: XLA's table does not say; taken as one NVLink domain");
      runs.push_back(std::move(run));
    }
    CollectivePoint p;
    p.dtype = dtype;
    p.op = collective == "allreduce" || collective == "reduce_scatter" ? "sum" : "";
    p.size_bytes = size;
    p.time_us = size / static_cast<double>(profile.network_throughput_bytes_per_sec()) * 1e6;
    p.p50_us = p.time_us;  // XLA records the median of its runs
    p.line = line;
    runs[it->second].collectives.push_back(p);
  }
  for (const auto& [opcode, count] : left_out)
    for (auto& run : runs)
      run.notes.push_back(std::to_string(count) + " " + opcode + " row(s) left out: gpucal has no such collective");
  if (runs.empty()) throw ImportError(path, device_line, "the '" + device.key() + "' collective table has no row gpucal reads");
  for (auto& run : runs) {
    std::sort(run.collectives.begin(), run.collectives.end(),
              [](const CollectivePoint& a, const CollectivePoint& b) { return a.size_bytes < b.size_bytes; });
    for (std::size_t i = 1; i < run.collectives.size(); ++i)
      if (run.collectives[i].size_bytes == run.collectives[i - 1].size_bytes)
        throw ImportError(path, run.collectives[i].line,
                          run.collective + " at " + std::to_string(run.nranks) + " ranks has the size of line " +
                              std::to_string(run.collectives[i - 1].line) + " twice");
  }
  return runs;
}

}  // namespace

bool detects_xla_table(const std::string& line) {
  return line.rfind("entries {", 0) == 0 || line.find("PTable[] = R\"pb(") != std::string::npos;
}

std::vector<ImportedRun> parse_xla_table(const std::string& path, const std::vector<LogLine>& lines,
                                         const ImportOptions& options) {
  const TableText t = table_text(path, lines);
  // A GEMM table parses strictly; anything else is read as a collective table, whose
  // instructions carry fields gpucal does not declare.
  {
    ::xla::GemmPerfTable table;
    pb::TextFormat::ParseInfoTree tree;
    Errors errors(path, t.first_line);
    if (parse(t, table, tree, false, errors) && table.entries_size() > 0) return gemm_runs(path, t, table, tree, options);
  }
  ::xla::DeviceHloInstructionProfiles table;
  pb::TextFormat::ParseInfoTree tree;
  Errors errors(path, t.first_line);
  if (!parse(t, table, tree, true, errors)) errors.raise("GEMM or collective");
  return collective_runs(path, t, table, tree, options);
}

}  // namespace gpucal::calibration
