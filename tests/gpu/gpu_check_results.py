"""gpu-check's results after every step: the ratio table and summary-partN.json in the results
folder, and the copies in --export for whatever carries them off the machine."""
import json
import os
import shutil
import tarfile
import time

import ratios

SAMPLES_SUFFIX = ".samples.csv"
EXPORT_FILE_LIMIT = 15 * 2**20  # each exported file stays under 16 MiB, so a file-size-limited copy takes it


def export(ctx, part, summary_path):
    """Copies the results into --export (5 files per part, each under 16 MiB): a
    tarball of the results and logs without the per-sample CSVs, those in a second one (left
    out, and said, when over the limit), the ratio table and the summary."""
    if not ctx.a.export:
        return
    os.makedirs(ctx.a.export, exist_ok=True)
    tar_path = os.path.join(ctx.a.export, f"gpu-check-part{part}.tar.gz")
    samples_path = os.path.join(ctx.a.export, f"gpu-check-part{part}-samples.tar.xz")
    without_samples = lambda info: None if info.name.endswith(SAMPLES_SUFFIX) else info  # noqa: E731
    with tarfile.open(tar_path + ".tmp", "w:gz") as tar:
        tar.add(ctx.out, arcname=os.path.basename(ctx.out), filter=without_samples)
        tar.add(ctx.work, arcname=f"gpu-check-part{part}-logs")
    os.replace(tar_path + ".tmp", tar_path)
    samples = [os.path.join(d, f) for d, _, files in os.walk(ctx.out) for f in files if f.endswith(SAMPLES_SUFFIX)]
    note = ""
    if samples:
        with tarfile.open(samples_path + ".tmp", "w:xz") as tar:
            for f in samples:
                tar.add(f, arcname=os.path.join(os.path.basename(ctx.out), os.path.relpath(f, ctx.out)))
        if os.path.getsize(samples_path + ".tmp") > EXPORT_FILE_LIMIT:
            os.remove(samples_path + ".tmp")
            note = f"; the per-sample CSVs ({len(samples)}) are over {EXPORT_FILE_LIMIT >> 20} MiB packed: left out"
        else:
            os.replace(samples_path + ".tmp", samples_path)
            note = f", {os.path.basename(samples_path)} ({os.path.getsize(samples_path) / 2**20:.1f} MiB)"
    size = os.path.getsize(tar_path)
    if size > EXPORT_FILE_LIMIT:
        note += f"; WARNING: {os.path.basename(tar_path)} is over {EXPORT_FILE_LIMIT >> 20} MiB and may not come back"
    for src, name in ((os.path.join(ctx.out, "ratios.md"), f"ratios-part{part}.md"),
                      (summary_path, f"summary-part{part}.json")):
        if os.path.exists(src):
            shutil.copy(src, os.path.join(ctx.a.export, name))
    ctx.log.save(os.path.join(ctx.a.export, f"gpu-check-part{part}.log"))
    return f"{os.path.basename(tar_path)} ({size / 2**20:.1f} MiB){note}, ratios-part{part}.md, " \
           f"summary-part{part}.json, gpu-check-part{part}.log"


def write_summary(ctx, part, gpus, results, t_start, steps):
    """The ratio table and summary-partN.json as they stand (after every step, and at the end)."""
    rows, _ = ratios.write(ctx.out, stream=None)
    predictions = ratios.step_predictions(ctx.out)
    failed = [r for r in results if r["status"] in ("failed", "not run")]
    summary = {"part": part, "gpus": gpus, "build": ctx.manifest.get("git_commit"), "results": ctx.out,
               "time_limit_s": ctx.a.time_limit, "steps": results, "seconds": round(time.monotonic() - t_start),
               "failed_steps": [r["step"] for r in failed]}
    if any(s.name == "step_predict" for s in steps):
        summary["step_predictions"] = predictions
    summary_path = os.path.join(ctx.out, f"summary-part{part}.json")
    with open(summary_path + ".tmp", "w") as f:
        json.dump(summary, f, indent=2)
    os.replace(summary_path + ".tmp", summary_path)
    return rows, predictions, summary, summary_path
