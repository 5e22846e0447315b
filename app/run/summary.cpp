#include "app/run/summary.h"

#include <algorithm>
#include <cstdio>
#include <sstream>

#include "app/export/export_figures.h"
#include "app/run/bench_runner.h"
#include "app/run/verdict.h"

namespace gpucal::calibration {

using nlohmann::json;

namespace {

std::string ratio(double value) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", value);
  return buf;
}

void title_and_verdict(const RunRecord& r, std::ostream& s) {
  const std::string device = r.device_field("name"), backend = r.device_field("backend");
  s << "# gpucal run: suite `" << r.suite->name << "`"
    << (device.empty() ? "" : " on " + device + " (" + backend + " backend)")
    << (r.stopped_by.empty() ? "" : " (stopped by " + r.stopped_by + ")") << "\n\n";
  if (!r.stopped_by.empty()) return;
  s << "## Verdict\n\n";
  for (const auto& line : verdict_lines(r)) s << "- " << line << "\n";
  s << "\n" << r.suite->purpose << ". Communication benches: " << r.launch << ".\n";
}

void fits_table(const RunRecord& r, std::ostream& s) {
  const auto fits = fit_verdicts(r.calibration);
  if (fits.empty()) return;
  s << "\n## Fits against log-log interpolation\n\n"
    << "Each communication group's form chosen on the training split (every third measured size held out) "
       "predicts the held-out sizes (fit error, mean absolute % error); the baseline draws straight lines in "
       "log time against log size between the same points. The exports use the form chosen on every size "
       "(calibration.json's `best`), which can differ. A ratio below 1: the fit predicts sizes it was not "
       "fitted to better than interpolating its own points; above: worse. \"as good\" allows a fit error up "
       "to "
    << ratio(kAsGoodRatio) << "x interpolation's or " << number(kAsGoodPoints)
    << " points above it, whichever is larger, so a ratio up to " << ratio(kAsGoodRatio)
    << " (more where both errors are small) still counts.\n\n"
    << "| group | sizes | form on the training split | exported form (calibration.json best) | fit error | "
       "interpolation error | ratio | verdict |\n"
    << "| --- | ---: | --- | --- | ---: | ---: | ---: | --- |\n";
  for (const auto& f : fits)
    s << "| " << f.group << " | " << f.sizes << " | " << f.form << " | " << f.exported_form << " | "
      << error_pct(f.fit_pct) << " | " << error_pct(f.loglog_pct) << " | "
      << (f.loglog_pct > 0 ? ratio(f.fit_pct / f.loglog_pct) : "-") << " | "
      << (!f.as_good()                    ? "worse"
          : f.fit_pct <= f.loglog_pct ? "as good or better"
                                          : "as good (within the tolerance above)")
      << " |\n";
}

void peaks_table(const RunRecord& r, std::ostream& s) {
  const auto peaks = peak_verdicts(r.calibration, r.out_dir);
  if (peaks.empty()) return;
  s << "\n## Against what this device should do\n\n"
    << "Best measured figure beside the device's peak for it (as the bench recorded it). The smoke suite's "
       "shapes are small; the calibration suite measures the large ones.\n\n"
    << "| figure | best | peak | fraction | below half | peak from |\n| --- | ---: | ---: | ---: | --- | --- "
       "|\n";
  for (const auto& p : peaks)
    s << "| " << p.figure << " | " << number(p.best) << " " << p.unit << " | "
      << (p.peak > 0 ? number(p.peak) + " " + p.unit : "-") << " | "
      << (p.peak > 0 ? percent(p.best / p.peak) : "-") << " | "
      << (p.peak > 0 ? (p.below_half() ? "yes" : "no") : "no peak recorded") << " | "
      << (p.peak_source.empty() ? "-" : p.peak_source) << " |\n";
}

// On the host backend each export figure is a CPU's, standing in for a GPU's.
void stand_ins_section(const RunRecord& r, std::ostream& s) {
  const bool host = r.device_field("backend") == "host";
  if (!host && r.stand_ins.empty()) return;
  s << "\n## Stand-ins\n\n";
  if (host)
    s << "Host backend: every figure below was measured on this CPU and stands in, at host scale, for the "
         "GPU "
         "figure the exports carry. The files load in their tools; their numbers describe this host.\n\n"
      << "| export figures | measured here as | stands in for |\n| --- | --- | --- |\n"
      << "| Calculon matrix, NERSC matrix_flops_fp16, ASTRA-sim peak-perf | OpenBLAS GEMM on the CPU cores | "
         "tensor-core GEMM |\n"
      << "| Calculon vector, NERSC vector_flops_fp16 | fma_chain on the CPU cores | the GPU's vector units "
         "|\n"
      << "| Calculon mem1, NERSC hbm_bandwidth, ASTRA-sim local-mem-bw | DRAM copy beyond the last-level "
         "cache | "
         "HBM bandwidth |\n"
      << "| Calculon mem1.GiB, NERSC hbm_capacity | this machine's RAM | HBM capacity |\n"
      << "| Calculon networks[0], NERSC nvlink_*, ASTRA-sim dimension 0, vTrain tables | rank threads over "
         "shared memory ("
      << r.launch << ") | NVLink / xGMI within a node |\n"
      << "| attention rows of `gpucal predict` | the host attention implementation | flash attention |\n\n";
  if (r.stand_ins.empty()) return;
  s << "Figures no bench of this run measures, supplied by `gpucal run` to the export named (replace one "
       "with "
       "`gpucal export RESULTS --to TOOL --set KEY=VALUE`):\n\n";
  for (const auto& st : r.stand_ins)
    s << "- " << st.consumer << ": `" << st.key << " = " << st.value << "`: " << st.source << "\n";
}

void benches_table(const RunRecord& r, std::ostream& s) {
  s << "\n## Benches\n\n| bench | status | points | wall time | command |\n| --- | --- | ---: | --- | --- "
       "|\n";
  double total = 0;
  for (const auto& b : r.benches) {
    s << "| " << b.bench << " | " << b.status << (b.detail.empty() ? "" : ": " + b.detail) << " | "
      << (b.seconds < 0 ? "-" : std::to_string(b.rows) + " (" + std::to_string(b.ok_rows) + " ok)") << " | "
      << format_seconds(b.seconds) << " | `" << b.command << "` |\n";
    total += std::max(0.0, b.seconds);
  }
  s << "\nThe benches took " << format_seconds(total) << " together.\n";
  if (r.suspect_rows == 0)
    s << "\nNo row's timings are suspect (preemption-dominated).\n";
  else
    s << "\n" << r.suspect_rows << " ok row(s) have suspect timings (preemption-dominated: their `suspect` column "
      << "says why); " << (r.allow_suspect ? "the fit used them (--allow-suspect).\n" : "the fit left them out.\n");
}

void calibration_section(const RunRecord& r, std::ostream& s) {
  s << "\n## Calibration (`calibration.json`)\n\n";
  if (r.calibration.is_null()) {
    s << "No results to fit: " << r.fit_error << "\n";
    return;
  }
  const json& c = r.calibration;
  for (const auto& [dtype, t] : member(member(c, "compute"), "gemm").items())
    s << "- GEMM " << dtype << ": best " << number(t["best_tflops"].get<double>()) << " TFLOP/s ("
      << text_of(t, "regime", "") << ", `" << text_of(t, "best_point", "") << "`)\n";
  if (const auto bw = memory_bandwidth_gbps(c, ExportSettings{}))
    s << "- memory bandwidth: " << number(bw->value) << " GB/s (" << bw->source << ")\n";
  for (const char* dtype : {"fp32", "fp16", "bf16"})
    if (const auto v = vector_tflops(c, ExportSettings{}, {dtype}))
      s << "- vector " << dtype << ": best " << number(v->value) << " TFLOP/s (fma_chain)\n";
  for (const auto& m : member(c, "missing")) s << "- missing: " << m.get<std::string>() << "\n";
  const json& collectives = member(member(c, "communication"), "collectives");
  if (collectives.empty()) return;
  s << "\n| collective | dtype | nranks | nnodes | alpha_us | bus bandwidth GB/s | exported form (best) |\n"
    << "| --- | --- | ---: | ---: | ---: | ---: | --- |\n";
  for (const json& g : collectives) {
    const json& ab = member(g, "alpha_beta");
    s << "| " << text_of(g, "collective", "") << " | " << text_of(g, "dtype", "") << " | " << g.value("nranks", 0)
      << " | " << g.value("nnodes", 0) << " | "
      << (ab.contains("alpha_us") ? number(ab["alpha_us"].get<double>()) : "-") << " | "
      << (ab.contains("beta_gbps") ? number(ab["beta_gbps"].get<double>()) : "-") << " | "
      << text_of(member(g, "best"), "form", "-") << " |\n";
  }
}

void exports_section(const RunRecord& r, std::ostream& s) {
  s << "\n## Exports (`export/`)\n\n";
  if (!r.export_error.empty()) s << "Failed: " << r.export_error << "\n";
  if (!r.exports_for_step.empty()) {
    std::string targets;
    for (const auto& t : r.exports_for_step) targets += (targets.empty() ? "" : ", ") + t;
    s << "Written for the suite's step (" << r.predict_label << "), as predict.json: " << targets
      << "; the others for no particular model or layout (each NOTES.md says which).\n";
  }
  for (const auto& e : r.exports) {
    const auto listed = [&](const std::vector<std::string>& v) {
      return std::find(v.begin(), v.end(), e.consumer) != v.end();
    };
    const char* state = e.ok()                                   ? "written"
                        : listed(r.exports_not_for_host)        ? "not applicable on the host backend, nothing written"
                        : listed(r.exports_not_applicable)      ? "not applicable with one rank, nothing written"
                                                                : "refused, nothing written";
    s << "\n### " << e.consumer << ": " << state << "\n\n";
    if (e.ok() && !e.lead.empty()) s << e.lead << "\n\n";
    for (const auto& f : e.files_written) s << "- wrote `" << f << "`\n";
    for (const auto& m : e.refused) s << "- missing: " << m << "\n";
    for (const auto& a : e.assumed) s << "- assumed: " << a << "\n";
    for (const auto& l : stand_in_lines(r.stand_ins, e.consumer))
      s << "- supplied by gpucal run: " << l << "\n";
    for (const auto& n : e.notes) s << "- note: " << n << "\n";
  }
}

void predict_and_plots(const RunRecord& r, std::ostream& s) {
  if (!r.predict_args.empty()) {
    s << "\n## Predicted step (`predict.json`)\n\n"
      << r.predict_label << ": `" << r.predict.command << "`\n\n";
    if (r.predict.path.empty()) {
      s << "No step predicted: " << r.predict.why_not << "\n";
    } else {
      const json& b = r.predict.result["breakdown"];
      s << "- step time " << duration(b["step"]["time_s"].get<double>()) << ", "
        << tokens_per_s_text(b) << ", MFU " << mfu_text(b)
        << "\n";
      for (const auto& m : member(r.predict.result, "missing"))
        s << "- left out: " << m.get<std::string>() << "\n";
    }
  }
  s << "\n## Plots\n\n" << r.plots << "\n";
}

}  // namespace

std::string summary_markdown(const RunRecord& r) {
  std::ostringstream s;
  title_and_verdict(r, s);
  if (!r.stopped_by.empty()) {
    benches_table(r, s);
    s << "\nStopped by " << r.stopped_by
      << ": the benches after the last one above, the fit and the exports were "
      << "not run.\n";
    return s.str();
  }
  fits_table(r, s);
  peaks_table(r, s);
  stand_ins_section(r, s);
  benches_table(r, s);
  calibration_section(r, s);
  exports_section(r, s);
  predict_and_plots(r, s);
  return s.str();
}

}  // namespace gpucal::calibration
