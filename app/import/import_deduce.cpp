// Which collective an nccl-tests table measured, told from the table itself when the log names
// no *_perf program (a table pasted without its header). nccl-tests prints, for each collective
// (core/formulas/collectives.cpp has each one's facts):
//   redop  the reduction ("sum", ...) for allreduce, reduce_scatter, reduce; "none" for the others
//   root   the root (0, ...) for broadcast, reduce, gather, scatter; -1 for the others
//   size   count x type size where S is per rank (allreduce, broadcast, reduce, sendrecv), and
//          n x count x type size where S is the total over n ranks (allgather, reduce_scatter,
//          alltoall, gather, scatter, hypercube): the printed count is per rank
//   busbw  algbw x bus factor at n ranks: 2(n-1)/n allreduce, (n-1)/n the exchanges, 1 the others
//          (hypercube prints busbw = algbw)
// Old versions printed the redop and root columns only for the collectives they mean something
// for. Allgather and alltoall (and gather and scatter) print alike: the table cannot tell them
// apart, and the import refuses naming both.
// sendrecv prints the reduction it was given ("sum" by default) though it reduces nothing, so at
// 2 ranks (bus factor 1 for both) its table reads like allreduce's. nccl-tests never checks
// sendrecv or alltoall in place (their in-place #wrong prints N/A while the out-of-place one
// prints a count), and always checks the collectives NCCL runs in place: where the run validated,
// the in-place column tells sendrecv and allreduce apart.
#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <set>

#include "app/import/import_numbers.h"
#include "app/common/number_text.h"
#include "app/import/import_parsers.h"
#include "core/formulas/collective_formulas.h"
#include "core/formulas/collectives.h"
#include "core/registry/listing.h"

namespace gpucal::calibration {

namespace {

// busbw / algbw as nccl-tests prints it for `c` at n ranks.
double printed_factor(const CollectiveInfo& c, int nranks) {
  return c.name == "hypercube" ? 1.0 : bus_factor(std::string(c.name), nranks);
}

// S / (count x type size) when every row with a count and a known type gives the same whole
// number; nullopt otherwise.
std::optional<int64_t> size_over_count(const std::vector<CollectivePoint>& points) {
  std::optional<int64_t> ratio;
  for (const auto& p : points) {
    const int esize = dtype_size_bytes_of(p.dtype);
    if (esize <= 0 || p.printed_count <= 0) continue;
    const double r = p.size_bytes / (static_cast<double>(p.printed_count) * esize);
    const auto whole = static_cast<int64_t>(std::llround(r));
    if (std::abs(r - static_cast<double>(whole)) > 1e-9 || whole < 1 || (ratio && *ratio != whole)) return std::nullopt;
    ratio = whole;
  }
  return ratio;
}

// Whether every row's printed busbw fits algbw x a factor in [low, high] (interval arithmetic).
bool rows_fit_factor(const std::vector<CollectivePoint>& points, double low, double high) {
  for (const auto& p : points) {
    if (!p.algbw_gbps || !p.busbw_gbps) continue;
    const double eps = 1e-9 * std::max(1.0, *p.busbw_gbps);
    const double a_lo = *p.algbw_gbps - p.algbw_half_unit, a_hi = *p.algbw_gbps + p.algbw_half_unit;
    const double b_lo = *p.busbw_gbps - p.busbw_half_unit, b_hi = *p.busbw_gbps + p.busbw_half_unit;
    if (a_lo * low > b_hi + eps || b_lo > a_hi * high + eps) return false;
  }
  return true;
}

// The row that says most of the ratio: the largest algbw.
std::string ratio_text(const std::vector<CollectivePoint>& points) {
  const CollectivePoint* best = nullptr;
  for (const auto& p : points)
    if (p.algbw_gbps && p.busbw_gbps && (!best || *p.algbw_gbps > *best->algbw_gbps)) best = &p;
  if (!best || *best->algbw_gbps <= 0) return "";
  return "busbw/algbw " + with_decimals(*best->busbw_gbps / *best->algbw_gbps, 3);
}

// Whether the run checked its in-place results: nullopt where nothing tells (no in-place rows,
// or no validated out-of-place row: -c 0 prints N/A everywhere).
std::optional<bool> in_place_checked(const std::vector<CollectivePoint>& points) {
  bool out_of_place_validated = false, in_place_rows = false, in_place_validated = false;
  for (const auto& p : points) {
    if (!p.in_place) out_of_place_validated = out_of_place_validated || p.wrong.has_value();
    else {
      in_place_rows = true;
      in_place_validated = in_place_validated || p.wrong.has_value();
    }
  }
  if (!out_of_place_validated || !in_place_rows) return std::nullopt;
  return in_place_validated;
}

// Whether a table's in-place check (`checked`: validated, or N/A while the out-of-place column
// was) rules out `name`. nccl-tests never checks sendrecv in place (its InitData turns reporting
// off there) and always checks the collectives NCCL runs in place (allreduce, allgather,
// reduce_scatter, broadcast, reduce); alltoall has been unchecked in place in the versions read,
// and gather, scatter and hypercube are left open.
bool ruled_out_by_in_place(const std::string& name, bool checked) {
  static const std::set<std::string> always = {"allreduce", "allgather", "reduce_scatter", "broadcast", "reduce"};
  return checked ? name == "sendrecv" : always.count(name) > 0;
}

}  // namespace

bool busbw_fits(const CollectivePoint& p, double factor) { return rows_fit_factor({p}, factor, factor); }

Deduction deduce_collective(const std::vector<CollectivePoint>& points, const TableColumns& columns, int nranks) {
  Deduction d;
  std::vector<std::string> evidence;
  std::optional<bool> reduces, rooted;
  if (columns.redop || columns.root) {
    reduces = columns.redop && std::any_of(points.begin(), points.end(), [](const auto& p) { return !p.op.empty(); });
    rooted = columns.root && std::any_of(points.begin(), points.end(), [](const auto& p) { return p.root >= 0; });
    evidence.push_back(*reduces ? "a reduction in 'redop'" : "no reduction");
    evidence.push_back(*rooted ? "a root" : "no root");
  }
  const std::optional<bool> checked_in_place = in_place_checked(points);
  if (checked_in_place)
    evidence.push_back(*checked_in_place ? "in-place results checked" : "in-place #wrong N/A (not checked)");
  const std::optional<int64_t> ratio = size_over_count(points);
  int n = nranks;
  if (ratio) {
    evidence.push_back(*ratio == 1 ? "size = count x type size" : "size = " + std::to_string(*ratio) + " x count x type size");
    if (n == 0 && *ratio > 1 && *ratio <= kMaxRanks) n = d.nranks_from_sizes = static_cast<int>(*ratio);
  }
  if (const std::string r = ratio_text(points); !r.empty())
    evidence.push_back(r + (n > 0 ? " at " + std::to_string(n) + " ranks" : " (rank count unknown)"));
  for (const auto& c : collectives()) {
    if (c.nccl_tests_name.empty()) continue;
    const bool prints_redop = c.reduces || c.name == "sendrecv";  // sendrecv prints its (unused) op
    if (reduces && (*reduces ? !prints_redop : c.reduces)) continue;
    if (rooted && c.rooted != *rooted) continue;
    if (checked_in_place && ruled_out_by_in_place(std::string(c.name), *checked_in_place)) continue;
    if (ratio && (c.size_total_over_ranks ? *ratio != (n > 0 ? n : *ratio) || (*ratio == 1 && n != 1) : *ratio != 1))
      continue;
    const bool unit = c.bus == BusFamily::unit || c.name == "hypercube";
    const bool fits = n > 0 ? rows_fit_factor(points, printed_factor(c, n), printed_factor(c, n))
                      : unit ? rows_fit_factor(points, 1.0, 1.0)
                             : rows_fit_factor(points, 0.0, c.bus == BusFamily::allreduce ? 2.0 : 1.0);
    if (fits) d.candidates.emplace_back(c.name);
  }
  d.evidence = registry::join(evidence, ", ");
  d.nranks_known = n > 0;
  return d;
}

void settle_collective(ImportedRun& run, const TableColumns& columns, const ImportOptions& options, int nranks) {
  const Deduction d = deduce_collective(run.collectives, columns, nranks);
  run.table_candidates = d.candidates;
  const auto fits = [&](const std::string& name) {
    return std::find(d.candidates.begin(), d.candidates.end(), name) != d.candidates.end();
  };
  if (!run.collective.empty()) {
    if (!fits(run.collective))
      run.notes.push_back("the table (" + d.evidence + ") does not look like " + run.collective + "'s" +
                          (d.candidates.empty() ? "" : ": it fits " + registry::join(d.candidates, " or ")));
    return;
  }
  if (!options.collective.empty()) {
    if (!d.candidates.empty() && !fits(options.collective))
      throw ImportError(run.source_file, run.first_line,
                        "--collective " + options.collective + " contradicts the table (" + d.evidence +
                            "): it fits " + registry::join(d.candidates, " or "));
    run.collective = options.collective;
    run.collective_from = "--collective";
    return;
  }
  if (d.candidates.size() == 1) {
    run.collective = d.candidates.front();
    run.collective_from = "the table: " + d.evidence;
    run.notes.push_back("collective " + run.collective + " deduced from the table (" + d.evidence + ")");
    if (nranks == 0 && d.nranks_from_sizes > 0) {
      run.nranks = d.nranks_from_sizes;
      run.nranks_from = "size/count (S = n x count x type size)";
    }
    return;
  }
  const std::string head = "cannot tell which collective this table measured (no '# Collective test starting' line, "
                           "no *_perf command line; the table shows " + d.evidence + "): ";
  throw ImportError(run.source_file, run.first_line,
                    head + (d.candidates.empty() ? "no collective fits it" : "it fits " + registry::join(d.candidates, " or ")) +
                        (d.nranks_known ? "" : "; the rank count is unknown (no rank lines, no 'nranks' in NCCL INFO "
                                               "lines, no launcher count): pass --nranks N or --collective NAME") +
                        (d.nranks_known ? "; pass --collective NAME" : ""));
}

}  // namespace gpucal::calibration
