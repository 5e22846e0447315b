#!/usr/bin/env python3
"""The reference targets in ratios.md / targets.json (ratio_targets.py, harness_targets.py) on
synthetic results folders: gpucal-shaped CSVs with the benches' real point keys, PyTorch
baselines and the harness files, each target met, missed, incomplete and not measured; the
summary's grouping by dtype and variant. Standard library only (no torch, no GPU).

  test_ratios_targets.py [TestCaseName ...]
"""
import csv
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import ratios  # noqa: E402

H100 = "NVIDIA H100 80GB HBM3"
SQ = 8192 ** 3 * 2  # flops of 8192^3


def gemm(dtype, m, n, k, extra="", regime="cold", layout="TN"):
    return f"gemm/cublaslt/{dtype}/{layout}/m{m}/n{n}/k{k}/b1{extra}/{regime}"


def attention(impl, pas, seq=4096, d=128, causal=0):
    return f"attention/{impl}/bf16/{pas}/BSHD/b4/h16/kv16/sq{seq}/skv{seq}/d{d}/causal{causal}/cold"


def copy(engine, direction, size):
    memory = "device" if direction == "d2d" else "pinned"
    return f"p2p/copy/{engine}/{direction}/{memory}/{size}/hot"


SIZES = {"4K": 4096, "1M": 1 << 20, "1G": 1 << 30}


def ours(bench, point, t, status="ok", **cols):
    row = {"schema_version": "1", "bench": bench, "impl": point.split("/")[1], "device": H100, "point": point,
           "status": status, "status_detail": "", "time_us_median": t, "time_us_p10": t * 0.99,
           "time_us_p90": t * 1.01, "verified": "ok", "sm_clock_mhz": "1980", "power_w": "650"}
    row.update(cols)
    return row


def theirs(bench, point, op, t, status="ok", detail=""):
    return {"bench": bench, "point": point, "torch_op": op, "status": status, "detail": detail,
            "time_us_median": t if status == "ok" else "", "time_us_p10": t * 0.99 if status == "ok" else "",
            "time_us_p90": t * 1.01 if status == "ok" else "", "samples": 20}


def write_csv(path, rows):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    fields = []
    for r in rows:
        fields += [k for k in r if k not in fields]
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields)
        w.writeheader()
        w.writerows(rows)


class Results:
    """A results folder whose every target is met; the tests spoil one piece at a time."""

    def __init__(self, path):
        self.path = path
        self.files = {}
        shapes = [(4096, 14336, 4096), (4096, 4096, 4096), (8192, 8192, 8192)]
        for dtype in ("bf16", "fp16"):
            # ours_vs_torch 1.00, 0.99, 1.05 (8192^3 at 1300 us: 845.8 TFLOP/s, 0.855 of 989)
            times = [(500.0, 500.0), (300.0, 297.0), (1300.0, 1365.0)]
            self.files[f"gemm_{dtype}.csv"] = [ours("gemm", gemm(dtype, *s), o) for s, (o, _) in zip(shapes, times)]
            self.files.setdefault("torch_gemm.csv", []).extend(
                theirs("gemm", gemm(dtype, *s), "torch.matmul", t) for s, (_, t) in zip(shapes, times))
        fp8 = gemm("fp8_e4m3", 8192, 8192, 8192)
        self.files["gemm_fp8_e4m3.csv"] = [ours("gemm", fp8, 700.0)]
        self.files["torch_gemm.csv"].append(theirs("gemm", fp8, "torch._scaled_mm", 693.0))  # 0.99
        tuned = [gemm("bf16", *s, extra="/autotune4") for s in shapes]
        self.files["gemm_bf16_autotune.csv"] = [ours("gemm", p, 100.0) for p in tuned]
        self.files["torch_gemm.csv"] += [theirs("gemm", p, "torch.matmul", t) for p, t in zip(tuned, (102, 105, 104))]
        # Attention: per cudnn point, three SDPA backends; the best is sdpa:flash at 990 (0.99).
        att = []
        for pas, t in (("fwd", 1000.0), ("bwd", 2500.0)):
            p = attention("cudnn", pas)
            self.files.setdefault("attention.csv", []).append(ours("attention", p, t, **{"pass": pas}))
            att += [theirs("attention", p, "sdpa:cudnn", t * 1.1), theirs("attention", p, "sdpa:flash", t * 0.99),
                    theirs("attention", p, "sdpa:efficient", t * 1.5)]
        # The flash kernel's forward: 1600 us against cuDNN's 1000 (0.625), 2.06e13 flop -> 12.9 TFLOP/s.
        self.files["attention.csv"].append(ours("attention", attention("flash", "fwd"), 1600.0,
                                                flops="2.0615843e13", tflops="12.88490"))
        self.files["attention.csv"].append(ours("attention", attention("flash", "fwd", seq=1024), 900.0))  # s < 4096
        self.files["torch_attention.csv"] = att
        # Copies: ce and sm engines; the 4K copies (latency) are far slower than torch's and not counted.
        p2p, tp2p = [], []
        for direction in ("d2d", "h2d", "d2h"):
            for size, (t_ce, t_sm, t_torch) in {"4K": (10.0, 12.0, 5.0), "1M": (50.0, 60.0, 49.0),
                                                 "1G": (1000.0, 1010.0, 980.0)}.items():
                for engine, t in (("ce", t_ce), ("sm", t_sm)):
                    p = copy(engine, direction, size)
                    p2p.append(ours("p2p", p, t, size_bytes=SIZES[size], wrong="0"))
                    tp2p.append(theirs("p2p", p, "Tensor.copy_", t_torch))
        self.files["p2p_copy.csv"], self.files["torch_p2p.csv"] = p2p, tp2p
        coll, tcoll = [], []
        for name, key in (("allreduce", "allreduce/fp32/sum"), ("broadcast", "broadcast/fp32/r0")):
            for size, t, t_torch in (("8", 6.0, 15.0), ("1M", 9.0, 20.0)):
                p = f"collectives/nccl/{key}/n1/oop/{size}/hot"
                coll.append(ours("collectives", p, t, collective=name, nranks="1",
                                 size_bytes=str(8 if size == "8" else 1 << 20), wrong="0"))
                tcoll.append(theirs("collectives", p, f"torch.distributed.{name}", t_torch))
        self.files["collectives.csv"], self.files["torch_collectives.csv"] = coll, tcoll
        # Harness: 5 processes; 8192^3 at 1000 us +-0.4%; 1024^3 at 50 us with a 10% spread (< 100 us: not counted).
        for i, (big, small) in enumerate(zip((1000, 1002, 998, 1004, 1000), (50, 55, 50, 50, 52)), start=1):
            self.files[f"harness/repeat-{i}.csv"] = [ours("gemm", gemm("bf16", 8192, 8192, 8192), float(big)),
                                                     ours("gemm", gemm("bf16", 1024, 1024, 1024), float(small))]
        # gpu_check_plan.py runs cold and hot as two processes, one file each.
        self.files["harness/cold_hot-cold.csv"] = [ours("gemm", gemm("bf16", 1024, 1024, 1024, regime="cold"), 14.0)]
        self.files["harness/cold_hot-hot.csv"] = [ours("gemm", gemm("bf16", 1024, 1024, 1024, regime="hot"), 10.0)]
        self.json = {"harness/sanitizer.json": {"runs": [
            {"tool": "memcheck", "target": "flash fwd d64,128,256 causal 0,1 ragged", "rc": 0, "errors": 0,
             "seconds": 40.0, "status": "ok"},
            {"tool": "racecheck", "target": "flash bwd d128", "rc": 0, "errors": 0, "seconds": 80.0, "status": "ok"},
            {"tool": "memcheck", "target": "rotated GEMM 1023x517x129", "rc": 0, "errors": 0, "seconds": 9.5,
             "status": "ok"}]},
            "harness/suites.json": {"suites": [{"suite": "calibration", "seconds": 1234.4, "rc": 0,
                                                "benches": {"bench_gemm": 600.0}},
                                               {"suite": "quick", "seconds": 95.0, "rc": 0, "benches": {}}]}}

    def save(self):
        shutil.rmtree(self.path, ignore_errors=True)
        os.makedirs(self.path)
        for name, rows in self.files.items():
            write_csv(os.path.join(self.path, name), rows)
        for name, doc in self.json.items():
            with open(os.path.join(self.path, name), "w") as f:
                json.dump(doc, f)

    def row(self, name, point, torch_op=None):
        return next(r for r in self.files[name] if r["point"] == point and (torch_op is None or r["torch_op"] == torch_op))

    def targets(self):
        self.save()
        return {t["id"]: t for t in ratios.evaluate_targets(self.path)}


class TargetsTestBase(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp()
        self.r = Results(os.path.join(self.tmp, "h100"))

    def tearDown(self):
        shutil.rmtree(self.tmp)


class MetTest(TargetsTestBase):
    def test_every_target_met_with_its_values(self):
        t = self.r.targets()
        self.assertEqual(list(t), [x.id for x in ratios.ratio_targets.TARGETS])
        verdicts = {k: v["verdict"] for k, v in t.items()}
        recorded = {"collectives_latency_floor", "suite_durations"}
        self.assertEqual({k for k, v in verdicts.items() if v != "met"}, recorded, t)
        self.assertEqual({verdicts[k] for k in recorded}, {"recorded"})
        self.assertAlmostEqual(t["gemm_bf16_heuristic"]["value"], 0.99)
        self.assertEqual(t["gemm_bf16_heuristic"]["points"], 3)
        self.assertIn("min 0.990 at gemm/cublaslt/bf16/TN/m4096/n4096/k4096/b1/cold; 0 of 3 below 0.98",
                      t["gemm_bf16_heuristic"]["measured"])
        self.assertAlmostEqual(t["gemm_autotuned"]["value"], 1.04)  # median of 1.02, 1.05, 1.04
        self.assertAlmostEqual(t["gemm_bf16_8192_peak"]["value"], SQ / 1300.0 / 1e6 / 989.0)
        self.assertIn("H100 SXM datasheet", t["gemm_bf16_8192_peak"]["why"])
        self.assertAlmostEqual(t["gemm_fp8_8192"]["value"], 0.99)
        for pas in ("fwd", "bwd"):  # the best backend (sdpa:flash, 0.99x ours' time), not sdpa:cudnn's 1.1
            self.assertAlmostEqual(t[f"attention_cudnn_{pas}"]["value"], 0.99)
            self.assertIn("best SDPA backend there: sdpa:flash", t[f"attention_cudnn_{pas}"]["measured"])
        flash = t["attention_flash_vs_cudnn"]
        self.assertAlmostEqual(flash["value"], 1000.0 / 1600.0)
        self.assertEqual(flash["points"], 1)  # the s=1024 row is not in the target's set
        self.assertIn("flash 12.9 TFLOP/s", flash["measured"])
        self.assertIn("registers/occupancy: not recorded", flash["measured"])
        for d in ("copy_d2d", "copy_h2d_pinned", "copy_d2h_pinned"):  # 1M: 49/50, 1G: 980/1000 (ce); 4K not counted
            self.assertAlmostEqual(t[d]["value"], 0.98)
            self.assertEqual(t[d]["points"], 2)
            self.assertIn("(ours: the ce engine)", t[d]["measured"])
            self.assertIn("sizes counted: ≥ 1 MiB", t[d]["why"])
        floor = t["collectives_latency_floor"]
        self.assertEqual(floor["measured"], "allreduce oop 8 B: ours 6 µs, PyTorch 15 µs (ours_vs_torch 2.50); "
                                            "broadcast oop 8 B: ours 6 µs, PyTorch 15 µs (ours_vs_torch 2.50)")
        self.assertEqual((t["collectives_wrong_zero"]["value"], t["collectives_wrong_zero"]["points"]), (0, 4))
        spread = t["harness_repeat_spread"]
        self.assertAlmostEqual(spread["value"], (1004 - 998) / 1000)
        self.assertEqual(spread["points"], 1)
        self.assertIn("1 below 100 µs not counted", spread["why"])
        self.assertAlmostEqual(t["harness_cold_slower"]["value"], 1.4)
        self.assertEqual((t["harness_telemetry"]["value"], t["harness_telemetry"]["points"]), (1.0, 48))
        self.assertEqual((t["sanitizer_clean"]["value"], t["sanitizer_clean"]["points"]), (0, 3))
        self.assertEqual(t["suite_durations"]["measured"], "calibration 1234 s; quick 95 s")

    def test_write_keeps_its_return_and_adds_targets_json_and_section(self):
        self.r.save()
        rows, notes = ratios.write(self.r.path, stream=None)
        with open(os.path.join(self.r.path, "ratios.csv"), newline="") as f:
            self.assertEqual(len(rows), len(list(csv.DictReader(f))))
        self.assertEqual(notes, [])
        with open(os.path.join(self.r.path, "targets.json"), encoding="utf-8") as f:
            doc = json.load(f)
        self.assertNotIn("issue", doc)
        self.assertEqual(doc["targets"][0]["id"], "gemm_bf16_heuristic")
        self.assertEqual(doc["targets"][0]["verdict"], "met")
        with open(os.path.join(self.r.path, "ratios.md"), encoding="utf-8") as f:
            md = f.read()
        self.assertIn("## Targets\n", md)
        self.assertIn("| Copies: D2D ≥ 95% of the torch device copy | min over sizes ≥ 1 MiB of torch time / ours "
                      "≥ 0.95 | min 0.980 at 1 MiB (ours: the ce engine); 0 of 2 below 0.95 | 2 | met: sizes counted",
                      md)
        self.assertIn("## Summary", md)
        self.assertIn("## gemm", md)
        self.assertEqual(ratios.targets_markdown(self.r.path), ratios.targets_section(doc["targets"]))
        p = subprocess.run([sys.executable, os.path.join(HERE, "ratios.py"), self.r.path], capture_output=True,
                           text=True, timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("## Targets\n", p.stdout)


class SummaryTest(TargetsTestBase):
    def test_groups_by_dtype_and_variant(self):
        self.assertEqual(ratios.dtype_variant("gemm", gemm("bf16", 64, 64, 64, "/autotune4")),
                         ("bf16", "cublaslt TN autotune4 cold"))
        self.assertEqual(ratios.dtype_variant("gemm", gemm("fp16", 64, 64, 64)), ("fp16", "cublaslt TN heuristic cold"))
        self.assertEqual(ratios.dtype_variant("attention", attention("cudnn", "bwd", causal=1)),
                         ("bf16", "cudnn bwd BSHD causal1 cold"))
        self.assertEqual(ratios.dtype_variant("p2p", copy("sm", "h2d", "1G")), ("-", "copy sm h2d pinned hot"))
        self.assertEqual(ratios.dtype_variant("collectives", "collectives/nccl/broadcast/fp32/r0/n8/ip/1M/hot/graph"),
                         ("fp32", "nccl broadcast n8 ip hot graph"))
        self.r.save()
        rows, _ = ratios.join(self.r.path)
        groups = ratios.summary(rows)
        heuristic = groups[("gemm", "torch.matmul", "bf16", "cublaslt TN heuristic cold")]
        tuned = groups[("gemm", "torch.matmul", "bf16", "cublaslt TN autotune4 cold")]
        self.assertEqual((heuristic[0], tuned[0]), (3, 3))  # not averaged together
        self.assertAlmostEqual(tuned[2], 1.02)
        self.assertAlmostEqual(heuristic[2], 0.99)
        self.assertEqual(groups[("gemm", "torch.matmul", "fp16", "cublaslt TN heuristic cold")][0], 3)
        self.assertEqual(groups[("attention", "sdpa:flash", "bf16", "cudnn fwd BSHD causal0 cold")][0], 1)
        self.assertIn("| gemm | torch.matmul | bf16 | cublaslt TN autotune4 cold | 3 | 1.037 | 1.020 | 1.050 |",
                      ratios.markdown(rows, []))


class MissedTest(TargetsTestBase):
    def test_gemm_one_shape_below_and_autotune_median(self):
        self.r.row("torch_gemm.csv", gemm("fp16", 4096, 14336, 4096))["time_us_median"] = 475.0  # 0.95
        for p, t in zip((gemm("bf16", *s, extra="/autotune4") for s in ((4096, 14336, 4096), (4096, 4096, 4096))),
                        (101.0, 102.0)):
            self.r.row("torch_gemm.csv", p)["time_us_median"] = t  # median 1.02
        self.r.row("gemm_bf16.csv", gemm("bf16", 8192, 8192, 8192))["time_us_median"] = 1500.0  # 733 TFLOP/s
        self.r.row("torch_gemm.csv", gemm("bf16", 8192, 8192, 8192))["time_us_median"] = 1575.0  # still 1.05
        self.r.row("torch_gemm.csv", gemm("fp8_e4m3", 8192, 8192, 8192))["time_us_median"] = 679.0  # 0.97
        t = self.r.targets()
        self.assertEqual(t["gemm_fp16_heuristic"]["verdict"], "missed")
        self.assertAlmostEqual(t["gemm_fp16_heuristic"]["value"], 0.95)
        self.assertIn("1 of 3 below 0.98", t["gemm_fp16_heuristic"]["measured"])
        self.assertEqual(t["gemm_autotuned"]["verdict"], "missed")
        self.assertAlmostEqual(t["gemm_autotuned"]["value"], 1.02)
        self.assertEqual(t["gemm_bf16_8192_peak"]["verdict"], "missed")
        self.assertAlmostEqual(t["gemm_bf16_8192_peak"]["value"], SQ / 1500.0 / 1e6 / 989.0)
        self.assertEqual(t["gemm_fp8_8192"]["verdict"], "missed")
        self.assertEqual(t["gemm_bf16_heuristic"]["verdict"], "met")

    def test_attention_against_the_best_backend(self):
        # sdpa:efficient becomes the fastest backend of the bwd point: 2400 / 2500 = 0.96.
        self.r.row("torch_attention.csv", attention("cudnn", "bwd"), "sdpa:efficient")["time_us_median"] = 2400.0
        self.r.row("attention.csv", attention("flash", "fwd"))["time_us_median"] = 2500.0  # 0.4 of cuDNN
        t = self.r.targets()
        self.assertEqual(t["attention_cudnn_bwd"]["verdict"], "missed")
        self.assertAlmostEqual(t["attention_cudnn_bwd"]["value"], 0.96)
        self.assertIn("sdpa:efficient", t["attention_cudnn_bwd"]["measured"])
        self.assertEqual(t["attention_cudnn_fwd"]["verdict"], "met")
        self.assertEqual(t["attention_flash_vs_cudnn"]["verdict"], "missed")
        self.assertAlmostEqual(t["attention_flash_vs_cudnn"]["value"], 0.4)

    def test_copies_collectives_and_harness(self):
        for engine in ("ce", "sm"):
            self.r.row("torch_p2p.csv", copy(engine, "h2d", "1G"))["time_us_median"] = 900.0  # 0.9
        bad = self.r.row("collectives.csv", "collectives/nccl/broadcast/fp32/r0/n1/oop/1M/hot")
        bad.update(status="error", verified="fail", wrong="3")
        self.r.files["harness/repeat-3.csv"][0]["time_us_median"] = 1020.0  # 2.2% spread
        self.r.files["harness/cold_hot-hot.csv"][0]["time_us_median"] = 15.0
        self.r.files["gemm_fp16.csv"][0]["power_w"] = ""
        self.r.json["harness/sanitizer.json"]["runs"][1].update(errors=2, rc=1)
        t = self.r.targets()
        self.assertEqual((t["copy_h2d_pinned"]["verdict"], t["copy_d2h_pinned"]["verdict"]), ("missed", "met"))
        self.assertAlmostEqual(t["copy_h2d_pinned"]["value"], 0.9)
        self.assertIn("at 1 GiB", t["copy_h2d_pinned"]["measured"])
        w = t["collectives_wrong_zero"]
        self.assertEqual((w["verdict"], w["value"], w["points"]), ("missed", 1, 4))
        self.assertIn("broadcast/fp32/r0/n1/oop/1M/hot: status error, verified fail, wrong 3", w["why"])
        s = t["harness_repeat_spread"]
        self.assertEqual(s["verdict"], "missed")
        self.assertAlmostEqual(s["value"], (1020 - 1000) / 1002)
        self.assertEqual(t["harness_cold_slower"]["verdict"], "missed")
        self.assertAlmostEqual(t["harness_cold_slower"]["value"], 14.0 / 15.0)
        tel = t["harness_telemetry"]
        self.assertEqual((tel["verdict"], tel["points"]), ("missed", 47))  # the failed collective is not ok
        self.assertAlmostEqual(tel["value"], 46 / 47)
        self.assertIn("gemm_fp16.csv (1)", tel["why"])
        san = t["sanitizer_clean"]
        self.assertEqual((san["verdict"], san["value"]), ("missed", 1))
        self.assertIn("racecheck flash bwd d128: errors 2, rc 1", san["why"])


class AbsentTest(TargetsTestBase):
    def test_empty_folder_names_every_missing_file(self):
        os.makedirs(self.r.path)
        t = {x["id"]: x for x in ratios.evaluate_targets(self.r.path)}
        self.assertEqual({x["verdict"] for x in t.values()}, {"not measured"})
        self.assertIn("gemm_bf16.csv", t["gemm_bf16_heuristic"]["why"])
        self.assertEqual(t["harness_repeat_spread"]["why"], "harness/repeat-1.csv absent")
        self.assertEqual(t["sanitizer_clean"]["why"], "harness/sanitizer.json absent")

    def test_baselines_absent_or_skipped(self):
        del self.r.files["torch_gemm.csv"]
        del self.r.files["harness/repeat-4.csv"]
        del self.r.json["harness/suites.json"]
        t = self.r.targets()
        self.assertEqual(t["gemm_bf16_heuristic"]["verdict"], "not measured")
        self.assertIn("3 points without a torch.matmul row (torch_gemm.csv absent", t["gemm_bf16_heuristic"]["why"])
        self.assertEqual(t["gemm_bf16_8192_peak"]["verdict"], "met")  # needs no baseline
        self.assertEqual(t["harness_repeat_spread"]["why"], "harness/repeat-4.csv absent")
        self.assertEqual(t["suite_durations"]["verdict"], "not measured")
        self.r = Results(self.r.path)
        fp8 = gemm("fp8_e4m3", 8192, 8192, 8192)
        self.r.files["torch_gemm.csv"][-4] = theirs("gemm", fp8, "torch._scaled_mm", 0, "skipped", "no fp8 here")
        t = self.r.targets()
        self.assertEqual(t["gemm_fp8_8192"]["verdict"], "not measured")
        self.assertIn("1 torch._scaled_mm rows skipped (e.g. " + fp8 + ": no fp8 here)", t["gemm_fp8_8192"]["why"])

    def test_incomplete_set(self):
        # 8192^3 fp16 skipped on our side; one bf16 shape without a torch row; the racecheck run absent.
        self.r.row("gemm_fp16.csv", gemm("fp16", 8192, 8192, 8192)).update(status="skipped", status_detail="no memory")
        self.r.files["torch_gemm.csv"].remove(self.r.row("torch_gemm.csv", gemm("bf16", 4096, 14336, 4096)))
        del self.r.json["harness/sanitizer.json"]["runs"][1]
        self.r.row("attention.csv", attention("cudnn", "fwd")).update(status="error", status_detail="cudnn error")
        t = self.r.targets()
        fp16 = t["gemm_fp16_heuristic"]
        self.assertEqual((fp16["verdict"], fp16["points"]), ("incomplete", 2))
        self.assertIn("1 gpucal rows not ok (e.g. " + gemm("fp16", 8192, 8192, 8192) + ": skipped no memory)",
                      fp16["why"])
        self.assertIn("8192³ not measured", fp16["why"])
        bf16 = t["gemm_bf16_heuristic"]
        self.assertEqual((bf16["verdict"], bf16["points"]), ("incomplete", 2))
        self.assertIn("1 points without a torch.matmul row", bf16["why"])
        self.assertEqual(t["sanitizer_clean"]["verdict"], "incomplete")
        self.assertIn("no racecheck run", t["sanitizer_clean"]["why"])
        self.assertEqual(t["attention_cudnn_fwd"]["verdict"], "not measured")
        self.assertEqual(t["attention_flash_vs_cudnn"]["verdict"], "not measured")
        self.assertIn("no ok cudnn row of the same shape", t["attention_flash_vs_cudnn"]["why"])


class HarnessFormsTest(TargetsTestBase):
    def test_one_cold_hot_file_a_bare_sanitizer_list_and_a_truncated_run(self):
        rows = self.r.files.pop("harness/cold_hot-cold.csv") + self.r.files.pop("harness/cold_hot-hot.csv")
        self.r.files["harness/cold_hot.csv"] = rows
        runs = self.r.json["harness/sanitizer.json"]["runs"]
        runs[0].update(rc=None, errors=None, status="truncated")
        self.r.json["harness/sanitizer.json"] = runs
        t = self.r.targets()
        self.assertAlmostEqual(t["harness_cold_slower"]["value"], 1.4)
        self.assertEqual((t["sanitizer_clean"]["verdict"], t["sanitizer_clean"]["value"]), ("missed", 1))
        self.assertIn("errors None, rc None, truncated", t["sanitizer_clean"]["why"])

    def test_hot_file_absent(self):
        del self.r.files["harness/cold_hot-hot.csv"]
        t = self.r.targets()["harness_cold_slower"]
        self.assertEqual((t["verdict"], t["why"]), ("not measured", "harness/cold_hot-hot.csv absent"))


class PeakTest(TargetsTestBase):
    def peak(self, device, **cols):
        row = self.r.row("gemm_bf16.csv", gemm("bf16", 8192, 8192, 8192))
        row.update(device=device, **cols)
        return self.r.targets()["gemm_bf16_8192_peak"]

    def test_peak_by_device(self):
        tflops = SQ / 1300.0 / 1e6
        h200 = self.peak("NVIDIA H200")
        self.assertAlmostEqual(h200["value"], tflops / 989.0)
        self.assertIn("H100 SXM's tensor cores", h200["why"])
        pcie = self.peak("NVIDIA H100 PCIe")
        self.assertAlmostEqual(pcie["value"], tflops / 756.0)
        self.assertEqual(pcie["verdict"], "met")
        nvl = self.peak("NVIDIA H100 NVL", peak_tflops="835", peak_source="table:H100 NVL")
        self.assertAlmostEqual(nvl["value"], tflops / 835.0)
        self.assertIn("the row's peak_tflops (table:H100 NVL)", nvl["why"])
        self.r.json["gemm_bf16.json"] = {"bench": "gemm", "device": {"name": "NVIDIA H100 PCIe"}}
        sidecar = self.peak("")  # no device column: the CSV's sidecar names it
        self.assertAlmostEqual(sidecar["value"], tflops / 756.0)
        self.assertIn("NVIDIA H100 PCIe: H100 PCIe datasheet", sidecar["why"])
        del self.r.json["gemm_bf16.json"]
        unknown = self.peak("Some GPU", peak_tflops="", peak_source="unknown")
        self.assertEqual(unknown["verdict"], "not measured")
        self.assertIn("no peak known for Some GPU", unknown["why"])


if __name__ == "__main__":
    unittest.main(argv=[sys.argv[0]] + sys.argv[1:], verbosity=2)
