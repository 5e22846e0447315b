#!/usr/bin/env python3
"""gpucal predict against published training throughput: each dense DGX-H100 pre-training row of
Megatron-Bridge's and NeMo's performance summaries (tests/fixtures/published_runs), predicted from
the public H100 reference calibration (results/reference/public-h100-sxm), never calibrated on.

    published_runs.py GPUCAL REFERENCE_DIR FIXTURE WORK_DIR [--check RESULTS_FILE | --summary]

Each row becomes one `gpucal predict` with the row's layout: dp = GPUs / (tp x pp x cp), its global
and micro batch and sequence, --sp where tp > 1, --zero 3 where the row uses FSDP and 1 (the
distributed optimizer Megatron-Bridge's recipes use) otherwise, --overlap tp,dp, the interleaved
schedule where vp > 1, embedding and loss counted as pipeline layers for 405B (its recipe's split),
8 ranks per node; once with bf16 GEMMs and once with --dtype fp8. The table
gives predicted / published tokens/s per GPU for each. A row predict cannot cost is listed with
predict's own one-line reason, not dropped.

--summary: only the counts and the ratios' median and range, fenced for docs/fidelity.md.
--check: the mechanics (every row either predicted with every op costed, or refused with a reason;
every ratio finite and positive) and the printed table equal to RESULTS_FILE, so the recorded
figures (docs/fidelity.md) stay what the code computes.
"""
import csv
import json
import os
import re
import shutil
import statistics
import subprocess
import sys


def rows_of(path):
    with open(path) as f:
        return list(csv.DictReader(line for line in f if not line.startswith("#")))


def flags_of(row):
    tp, pp, cp, gpus = int(row["tp"]), int(row["pp"]), int(row["cp"]), int(row["gpus"])
    dp = gpus // (tp * pp * cp)
    args = ["--model", row["gpucal_model"], "--tp", str(tp), "--pp", str(pp), "--cp", str(cp), "--dp", str(dp),
            "--global-batch", row["gbs"], "--micro-batch", row["mbs"], "--seq", row["seq"],
            "--zero", "3" if row["fsdp"] not in ("", "0") else "1", "--overlap", "tp,dp", "--ranks-per-node", "8"]
    if tp > 1:
        args.append("--sp")
    if row["gpucal_model"] == "llama3-405b":
        # Megatron-Bridge's Llama 3 recipe for 405B ("large model specific pipeline split
        # configurations"): 126 layers with the embedding and the loss split as 128 over pp.
        args += ["--account-for-embedding-in-pipeline-split", "--account-for-loss-in-pipeline-split"]
    if row["vp"] not in ("", "n/a", "1"):
        args += ["--schedule", "interleaved", "--virtual-stages", row["vp"]]
    return args, gpus


def predict(gpucal, reference, args, dtype, out):
    done = subprocess.run([gpucal, "predict", reference, *args, "--dtype", dtype, "--output", out, "--quiet"],
                          capture_output=True, text=True)
    text = done.stdout + done.stderr
    if done.returncode != 0:
        reason = text.strip().splitlines()[-1] if text.strip() else "exit %d" % done.returncode
        reason = re.sub(r"^gpucal: error: predict: ", "", reason)
        reason = re.sub(r" \(have: [^)]*\)| \(measure it, run gpucal fit, or pass --allow-missing\)", "", reason)
        return None, reason
    tokens = re.search(r"tokens/s\s+(\d+)", text)
    if not tokens or "left out" in text:
        return None, "no tokens/s: " + text.strip().splitlines()[-1]
    return float(tokens.group(1)), ""


def main():
    if len(sys.argv) not in (5, 6, 7):
        sys.exit(__doc__)
    gpucal, reference, fixture, work = sys.argv[1:5]
    check = sys.argv[6] if len(sys.argv) == 7 and sys.argv[5] == "--check" else None
    summary = len(sys.argv) == 6 and sys.argv[5] == "--summary"
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    lines = ["| release | model | GPUs | precision | tp pp cp vp | published tok/s/GPU | bf16 GEMMs | ratio | fp8 GEMMs | ratio |",
             "| --- | --- | --- | --- | --- | ---: | ---: | ---: | ---: | ---: |"]
    ratios = {"bf16": [], "fp8": []}
    refused = {}  # reason -> the dtypes refused for it
    for i, row in enumerate(rows_of(fixture)):
        args, gpus = flags_of(row)
        published = float(row["tokens_per_s_per_gpu"])
        cells = []
        for dtype in ("bf16", "fp8"):
            tokens, why = predict(gpucal, reference, args, dtype, os.path.join(work, "row%d-%s.json" % (i, dtype)))
            if tokens is None:
                cells += ["refused", "-"]
                refused.setdefault("%s %s (%s GPUs): %s" % (row["release"], row["model"], row["gpus"], why), []).append(dtype)
                continue
            ratio = tokens / gpus / published
            if not ratio > 0:
                sys.exit("FAIL: %s: ratio %r" % (row["source"], ratio))
            ratios[dtype].append(ratio)
            cells += ["%.0f" % (tokens / gpus), "%.2f" % ratio]
        lines.append("| %s | %s | %s | %s | %s %s %s %s | %s | %s |" % (
            row["release"], row["model"], row["gpus"], row["precision"], row["tp"], row["pp"], row["cp"], row["vp"],
            row["tokens_per_s_per_gpu"], " | ".join(cells)))
    for dtype, rs in ratios.items():
        if rs:
            lines.append("%s GEMMs: %d rows predicted, predicted / published median %.2f, range %.2f to %.2f" % (
                dtype, len(rs), statistics.median(rs), min(rs), max(rs)))
    lines += ["not predicted (%s): %s" % (" and ".join(refused[r]), r) for r in sorted(refused)]
    table = "\n".join(lines) + "\n"
    if summary:
        rows = len(lines) - 2 - sum(1 for line in lines if not line.startswith("|"))
        predicted = max(len(rs) for rs in ratios.values())
        sys.stdout.write("```text\n%d published rows, %d predicted from the public H100 reference\n" % (rows, predicted))
        sys.stdout.write("".join(line + "\n" for line in lines if " GEMMs: " in line) + "```\n")
        return
    sys.stdout.write(table)
    if check:
        with open(check) as f:
            recorded = f.read()
        if recorded != table:
            sys.exit("FAIL: the table differs from %s (regenerate it with this script's output)" % check)
        print("ok: the table is the one recorded in " + os.path.basename(check))


if __name__ == "__main__":
    main()
