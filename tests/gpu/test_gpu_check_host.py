#!/usr/bin/env python3
"""Host-side tests of .ci/gpu-check (standard library only; no GPU, no torch): argument
handling and exit codes, the plan's time budgets, the skip rule (also through a real ctest
run of a hand-written test tree), the ratio maker on synthetic results of several benches,
the baselines' point keys and operand layouts, and gpu-check's step runner (its call deadline,
a signal mid-step, the export after every step, the sanitizer and suite steps) with stand-in
commands (part 4's chain on the host: test_step_chain_host.py).

  test_gpu_check_host.py [TestCaseName ...]
Environment: GPUCAL_BENCH_GEMM (bench_gemm of this build) for the point-key test.
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
import gpu_check_plan as plan  # noqa: E402
import ratios  # noqa: E402
import skip_rule  # noqa: E402
import torch_common  # noqa: E402
import torch_gemm  # noqa: E402

GPU_CHECK = os.path.join(HERE, "gpu_check.py")


def run(*args, env=None):
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, timeout=120, env=env)


class CliTest(unittest.TestCase):
    def test_help_exits_zero_and_documents_exit_codes(self):
        p = run(GPU_CHECK, "--help")
        self.assertEqual(p.returncode, 0, p.stderr)
        for text in ("--part 1|2|3|4|all", "--bundle", "--ratios-only", "--dry-run", "3 no NVIDIA GPU", "SKIP(hardware)",
                     "Part 3", "compute-sanitizer", "Part 4", "gpucal predict --measure-step", "predicted / PyTorch",
                     "--time-limit", "SIGTERM"):
            self.assertIn(text, p.stdout)

    def test_bad_arguments_are_one_line_and_exit_2(self):
        for args in ([], ["--part", "5"], ["--part", "1", "--skip", "nope"], ["--part", "2", "--only", "ctest_gpu"],
                     ["--bundle", "a", "--build-dir", "b", "--part", "1"], ["--ratios-only", "/no/such/dir"],
                     ["--part", "1", "--time-limit", "20"], ["--part", "1", "--time-limit", "x"]):
            p = run(GPU_CHECK, *args)
            self.assertEqual(p.returncode, 2, f"{args}: {p.stderr}")
            self.assertEqual(len(p.stderr.strip().splitlines()), 1, f"{args}: {p.stderr}")
            self.assertTrue(p.stderr.startswith("gpu-check: "), p.stderr)

    def test_dry_run_lists_every_step_of_the_part(self):
        for part in ("1", "2", "3", "4"):
            p = run(GPU_CHECK, "--dry-run", "--part", part)
            self.assertEqual(p.returncode, 0, p.stderr)
            for s in plan.steps_of(part):
                self.assertIn(s.name, p.stdout)
                if s.argv:
                    self.assertIn(" ".join(s.argv[2:] if s.kind == "sanitizer" else
                                           s.argv[1:] if s.kind == "suite" else s.argv), p.stdout)
            self.assertIn(f"the plan's total for the part: {plan.total_budget(part)} s; "
                          f"at most {plan.part_limit(part)} s)", p.stdout)
        p = run(GPU_CHECK, "--dry-run", "--part", "1", "--only", "ctest_gpu")
        self.assertIn("1 steps, budgets 130 s", p.stdout)
        p = run(GPU_CHECK, "--dry-run", "--part", "4", "--only", "step_predict")
        self.assertIn("1 steps, budgets 15 s (the plan's total for the part: 235 s; at most 540 s)", p.stdout)
        p = run(GPU_CHECK, "--dry-run", "--part", "1")
        extras = [line for line in p.stdout.splitlines() if "(extra: on seconds left unused)" in line]
        self.assertEqual([line.split()[4] for line in extras], ["gemm_fp16", "gemm_fp8_e4m3", "torch_gemm"])

    @unittest.skipIf(shutil.which("nvidia-smi"), "this machine has nvidia-smi: the no-GPU exit is not testable here")
    def test_no_gpu_exits_3_with_a_clear_line(self):
        p = run(GPU_CHECK, "--part", "1")
        self.assertEqual(p.returncode, 3, p.stderr)
        self.assertIn("no NVIDIA GPU on this machine", p.stderr)
        self.assertIn("nothing measured", p.stderr)
        self.assertEqual(len(p.stderr.strip().splitlines()), 1)


def flag_values(argv, flags):
    """{flag: value} of the flags in argv that take a value."""
    return {f: argv[argv.index(f) + 1] for f in flags if f in argv}


MODEL_FLAGS = ("--model", "--model-config", "--tp", "--pp", "--dp", "--cp", "--ep", "--seq", "--micro-batch",
               "--global-batch", "--grad-dtype", "--zero", "--layers", "--scale", "--dtype")


class PlanTest(unittest.TestCase):
    def test_each_part_fits_one_device_call(self):
        for part in plan.PARTS:
            self.assertLessEqual(plan.total_budget(part), plan.part_limit(part))
            self.assertLessEqual(plan.part_limit(part), plan.PART_LIMIT_S)
        self.assertLessEqual(plan.PART_LIMIT_S + plan.EXPORT_RESERVE_S, plan.CALL_LIMIT_S - 20)  # unpacking
        self.assertEqual(plan.CALL_LIMIT_S, 600)

    def test_part1_runs_the_most_valuable_steps_first_in_eight_minutes(self):
        steps = plan.steps_of(1)
        self.assertEqual(plan.FIRST_CALL_S, 8 * 60)
        self.assertEqual(plan.total_budget(1), plan.FIRST_CALL_S)
        names = [s.name for s in steps]
        self.assertEqual(names, ["facts", "ldd", "ctest_gpu", "suite_smoke", "gemm_shapes", "gemm_bf16",
                                 "torch_gemm_bf16", "attention", "torch_attention", "p2p_copy", "torch_p2p",
                                 "collectives", "torch_collectives", "gemm_fp16", "gemm_fp8_e4m3", "torch_gemm"])
        # Extras come after every counted step: they only use seconds the others left.
        first_extra = next(i for i, s in enumerate(steps) if s.extra)
        self.assertTrue(all(s.extra for s in steps[first_extra:]))
        self.assertEqual(steps[names.index("suite_smoke")].argv[:5], ["smoke", "{bin:gpucal}", "run", "--suite", "smoke"])
        attention = steps[names.index("attention")].argv
        self.assertEqual(flag_values(attention, ["--impl", "--pass"]), {"--impl": "cudnn,flash", "--pass": "fwd,bwd"})
        # Each baseline writes its own CSV: a later part's baseline never overwrites an earlier one's.
        outs = [s.argv[s.argv.index("--out") + 1] for s in plan.STEPS if s.kind == "torch"]
        self.assertEqual(len(outs), len(set(outs)), outs)

    def test_part3_checks_the_harness(self):
        steps = {s.name: s for s in plan.steps_of(3)}
        for tool in ("memcheck", "racecheck"):
            flash, gemm = steps[f"{tool}_flash"].argv, steps[f"{tool}_gemm"].argv
            self.assertEqual(flash[:2], [tool, "flash"])
            self.assertEqual(flag_values(flash, ["--impl", "--head-dim", "--causal", "--pass", "--seq", "--seq-kv"]),
                             {"--impl": "flash", "--head-dim": "64,128,256", "--causal": "0,1", "--pass": "fwd,bwd",
                              "--seq": "77,200", "--seq-kv": "131"})
            self.assertIn("--rotate", gemm)
            self.assertEqual(flag_values(gemm, ["--m", "--n", "--k"]), {"--m": "127,1000", "--n": "65", "--k": "33,257"})
            self.assertEqual(flash[flash.index("--out") + 1], f"{{out}}/harness/{tool}-flash.csv")
        repeats = [s for s in plan.steps_of(3) if s.name.startswith("repeat_")]
        self.assertEqual(len(repeats), 5)
        self.assertEqual(len({tuple(a for a in s.argv if "repeat-" not in a) for s in repeats}), 1)  # the same points
        self.assertEqual([s.argv[s.argv.index("--out") + 1] for s in repeats],
                         [f"{{out}}/harness/repeat-{i}.csv" for i in range(1, 6)])
        for regime in ("cold", "hot"):
            argv = steps[f"gemm_{regime}"].argv
            self.assertEqual(flag_values(argv, ["--m", "--n", "--k", "--dtype", "--regime"]),
                             {"--m": "1024", "--n": "1024", "--k": "1024", "--dtype": "bf16", "--regime": regime})
        self.assertEqual(plan.steps_of(3)[-1].argv[:4], ["nightly", "{bin:gpucal}", "run", "--suite"])

    def test_part4_runs_the_prediction_chain_with_one_set_of_model_flags(self):
        steps = plan.steps_of(4)
        self.assertEqual([s.name for s in steps], ["facts", "ldd", "step_gemm", "step_attention", "step_memory",
                                                   "step_bench", "torch_step", "step_predict"])
        programs = {s.name: s.argv for s in steps if s.argv}
        want_model = flag_values(plan.STEP_MODEL, MODEL_FLAGS)
        self.assertEqual(want_model, {"--model": "llama3-8b", "--seq": "1024", "--micro-batch": "1", "--layers": "1",
                                      "--scale": "1", "--dtype": "bf16"})
        for name, argv in programs.items():
            if name == "torch_step":
                continue  # it reads the model from bench_step's sidecar
            self.assertEqual(flag_values(argv, MODEL_FLAGS), want_model, name)
            for flag in MODEL_FLAGS:
                self.assertLessEqual(argv.count(flag), 1, f"{name}: {flag} twice")
            self.assertEqual(len([a for a in argv if a == "--max-time-per-point"]), int(name != "step_predict"))
        # The predict inputs and the step land where gpucal predict reads them.
        outs = {name: argv[argv.index("--out" if "--out" in argv else "--output") + 1] for name, argv in programs.items()}
        self.assertEqual(outs, {"step_gemm": "{out}/step/gemm.csv", "step_attention": "{out}/step/attention.csv",
                                "step_memory": "{out}/step/memory.csv", "step_bench": "{out}/step/step.csv",
                                "torch_step": "{out}/step/torch_step.csv", "step_predict": "{out}/step/predict.json"})
        self.assertEqual(programs["step_predict"][:3], ["{bin:gpucal}", "predict", plan.STEP_DIR])
        self.assertIn("--measure-step", programs["step_predict"])
        self.assertEqual(programs["torch_step"][programs["torch_step"].index("--points-from") + 1], "{out}/step/step.csv")
        for name, binary in (("step_gemm", "bench_gemm"), ("step_attention", "bench_attention"),
                             ("step_memory", "bench_memory"), ("step_bench", "bench_step")):
            self.assertEqual(programs[name][0], f"{{bin:{binary}}}")
            self.assertEqual(flag_values(programs[name], ["--backend"]), {"--backend": "cuda"})
        for s in steps:
            self.assertEqual(s.part, 4)
            self.assertGreater(s.budget_s, 0)

    def test_every_reference_run_has_its_baseline_after_it(self):
        for part in (1, 2):
            steps = plan.steps_of(part)
            names = [s.name for s in steps]
            bench_csvs = {s.name: s.argv[s.argv.index("--out") + 1] for s in steps
                          if s.kind == "bench"}
            for name, out_csv in bench_csvs.items():
                torch_steps = [s for s in steps if s.kind == "torch" and out_csv in s.argv]
                self.assertEqual(len(torch_steps), 1, f"{name}: {out_csv} feeds no baseline")
                self.assertGreater(names.index(torch_steps[0].name), names.index(name))

    def test_baselines_stop_themselves_inside_their_budget(self):
        for s in plan.STEPS:
            if s.kind == "torch":
                self.assertIn("{time_budget}", s.argv)
                self.assertIn("--out", s.argv)

    def test_every_part_checks_the_machine_first(self):
        for part in plan.PARTS:
            self.assertEqual([s.kind for s in plan.steps_of(part)][:2], ["facts", "ldd"])
        self.assertEqual([s.name for s in plan.steps_of(1) if s.kind == "ctest"], ["ctest_gpu"])


class SkipRuleTest(unittest.TestCase):
    def test_classification(self):
        self.assertEqual(skip_rule.classify("run", "", "OK")[0], skip_rule.PASSED)
        v, reason = skip_rule.classify("notrun", "SKIP_RETURN_CODE=77", "...\nSKIP(hardware): needs 2 GPUs, this machine has 1\n")
        self.assertEqual((v, reason), (skip_rule.HARDWARE_SKIP, "needs 2 GPUs, this machine has 1"))
        v, reason = skip_rule.classify("notrun", "SKIP_RETURN_CODE=77", "SKIP: no cuda device here\n")
        self.assertEqual(v, skip_rule.FAILED)
        self.assertIn("without a hardware reason", reason)
        self.assertIn("no cuda device here", reason)
        self.assertEqual(skip_rule.classify("notrun", "SKIP_RETURN_CODE=77", "")[0], skip_rule.FAILED)
        v, reason = skip_rule.classify("fail", "", "x\nFAIL: 3 rows, expected 4\ntrailer\n")
        self.assertEqual((v, reason), (skip_rule.FAILED, "failed: FAIL: 3 rows, expected 4"))
        self.assertEqual(skip_rule.classify("notrun", "Disabled", "")[0], skip_rule.FAILED)

    @unittest.skipUnless(shutil.which("ctest"), "ctest not on PATH")
    def test_a_real_ctest_run(self):
        tests = {  # name: (shell, expected verdict)
            "ok": ("echo fine", skip_rule.PASSED),
            "needs_two": ("echo 'SKIP(hardware): needs 2 GPUs, this machine has 1'; exit 77", skip_rule.HARDWARE_SKIP),
            "no_device": ("echo 'SKIP: no cuda device here'; exit 77", skip_rule.FAILED),
            "broken": ("echo 'FAIL: wrong'; exit 1", skip_rule.FAILED),
        }
        with tempfile.TemporaryDirectory() as d:
            with open(os.path.join(d, "CTestTestfile.cmake"), "w") as f:
                for name, (sh, _) in tests.items():
                    f.write(f'add_test({name} sh -c "{sh}")\n')
                    f.write(f"set_tests_properties({name} PROPERTIES LABELS gpu SKIP_RETURN_CODE 77)\n")
                f.write("add_test(host_only true)\nset_tests_properties(host_only PROPERTIES LABELS host)\n")
            junit = os.path.join(d, "j.xml")
            subprocess.run(["ctest", "--test-dir", d, "-L", "gpu", "--output-junit", junit], capture_output=True)
            verdicts, failures = skip_rule.judge(junit)
        got = {v["name"]: v["verdict"] for v in verdicts}
        self.assertEqual(got, {n: want for n, (_, want) in tests.items()})
        self.assertEqual(failures, 2)


def write_csv(path, rows):
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)


def gpucal_row(bench, point, t, status="ok"):
    return {"schema_version": "1", "bench": bench, "point": point, "status": status, "time_us_median": t,
            "time_us_p10": t * 0.98, "time_us_p90": t * 1.02, "verified": "ok"}


def torch_row(bench, point, op, t, status="ok"):
    return {"bench": bench, "point": point, "torch_op": op, "status": status, "detail": "",
            "time_us_median": t if status == "ok" else "", "time_us_p10": t * 0.9 if status == "ok" else "",
            "time_us_p90": t * 1.1 if status == "ok" else "", "samples": 10}


class RatiosTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp()
        g = "gemm/cublaslt/bf16/TN/m4096/n4096/k4096/b1"
        write_csv(os.path.join(self.dir, "gemm_bf16.csv"), [
            gpucal_row("gemm", g + "/cold", 200.0), gpucal_row("gemm", g + "/autotune4/cold", 160.0),
            gpucal_row("gemm", "gemm/cublaslt/bf16/TN/m1/n1/k1/b1/cold", 5.0, status="skipped")])
        write_csv(os.path.join(self.dir, "torch_gemm.csv"), [
            torch_row("gemm", g + "/cold", "torch.matmul", 170.0),
            torch_row("gemm", g + "/autotune4/cold", "torch.matmul", 170.0),
            torch_row("gemm", "gemm/cublaslt/bf16/TN/m1/n1/k1/b1/cold", "torch.matmul", 4.0),  # ours skipped
            torch_row("gemm", "gemm/typo/cold", "torch.matmul", 4.0),                         # no such point
            torch_row("gemm", g + "/cold", "torch._scaled_mm", 0, status="skipped")])
        # Any bench joins the same way: a memory bench and its baseline (tests/gpu/torch_memory.py).
        write_csv(os.path.join(self.dir, "memory.csv"), [gpucal_row("memory", "memory/cuda/triad/1G/hot", 300.0)])
        write_csv(os.path.join(self.dir, "torch_memory.csv"), [
            torch_row("memory", "memory/cuda/triad/1G/hot", "a + s * b", 330.0)])
        write_csv(os.path.join(self.dir, "gemm_bf16.samples.csv"), [{"point": g, "time_us": 1.0}])

    def tearDown(self):
        shutil.rmtree(self.dir)

    def test_join_on_bench_and_point(self):
        rows, notes = ratios.join(self.dir)
        got = {(r["bench"], r["point"], r["torch_op"]): r["ours_vs_torch"] for r in rows}
        g = "gemm/cublaslt/bf16/TN/m4096/n4096/k4096/b1"
        self.assertEqual(set(got), {("gemm", g + "/cold", "torch.matmul"), ("gemm", g + "/autotune4/cold", "torch.matmul"),
                                    ("memory", "memory/cuda/triad/1G/hot", "a + s * b")})
        self.assertAlmostEqual(got[("gemm", g + "/cold", "torch.matmul")], 0.85)
        self.assertAlmostEqual(got[("gemm", g + "/autotune4/cold", "torch.matmul")], 1.0625)
        self.assertAlmostEqual(got[("memory", "memory/cuda/triad/1G/hot", "a + s * b")], 1.1)
        self.assertTrue(any("2 torch rows have no ok gpucal row" in n for n in notes), notes)
        self.assertTrue(any("1 torch rows were skipped" in n for n in notes), notes)
        spread = {r["point"]: r["spread"] for r in rows}
        self.assertEqual(spread[g + "/cold"], "apart")          # 196..204 vs 153..187
        self.assertEqual(spread[g + "/autotune4/cold"], "overlap")  # 156.8..163.2 vs 153..187

    def test_files_and_table(self):
        p = run(os.path.join(HERE, "ratios.py"), self.dir)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("| gemm | torch.matmul | bf16 | cublaslt TN heuristic cold | 1 | 0.850 |", p.stdout)
        self.assertIn("| gemm | torch.matmul | bf16 | cublaslt TN autotune4 cold | 1 | 1.062 |", p.stdout)
        self.assertIn("| memory | a + s * b | - | cuda triad hot | 1 | 1.100 |", p.stdout)
        with open(os.path.join(self.dir, "ratios.csv"), newline="") as f:
            self.assertEqual(len(list(csv.DictReader(f))), 3)
        self.assertIn("## memory", open(os.path.join(self.dir, "ratios.md")).read())
        self.assertEqual(run(os.path.join(HERE, "ratios.py"), "/no/such/dir").returncode, 2)
        p = run(GPU_CHECK, "--ratios-only", self.dir)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("geomean", p.stdout)


    def test_step_prediction_joins_predict_json_bench_step_and_pytorch(self):
        step_dir = os.path.join(self.dir, "step")
        os.makedirs(step_dir)
        point = "step/cuda/llama3-8b/tp1/pp1/dp1/cp1/seq1024/mb1/bf16/cold"
        write_csv(os.path.join(step_dir, "step.csv"), [gpucal_row("step", point, 25000.0)])
        write_csv(os.path.join(step_dir, "torch_step.csv"), [torch_row("step", point, "torch eager step", 27500.0)])
        with open(os.path.join(step_dir, "predict.json"), "w") as f:
            json.dump({"measured_step": {"point": point, "time_s_median": 0.025, "p10_s": 0.0249, "p90_s": 0.0252,
                                         "predicted_s": 0.024, "roles_skipped": "", "samples": 40}}, f)
        # The step's baseline joins like any other, inside its subfolder.
        rows, _ = ratios.join(self.dir)
        got = {(r["bench"], r["point"]): r["ours_vs_torch"] for r in rows}
        self.assertAlmostEqual(got[("step", point)], 1.1)
        self.assertEqual(len(rows), 4)
        (e,) = ratios.step_predictions(self.dir)
        self.assertEqual((e["folder"], e["point"], e["torch_op"]), ("step", point, "torch eager step"))
        self.assertAlmostEqual(e["predicted_over_measured"], 0.96)
        self.assertAlmostEqual(e["predicted_over_torch"], 24000.0 / 27500.0)
        self.assertEqual(e["target_measured"], "met (1 ± 0.05)")
        self.assertEqual(e["target_torch"], "missed (1 ± 0.1)")
        p = run(GPU_CHECK, "--ratios-only", self.dir)
        self.assertEqual(p.returncode, 0, p.stderr)
        with open(os.path.join(self.dir, "ratios.md")) as f:
            md = f.read()
        for text in ("## step prediction", f"| step | {point} | 24 | 25 (24.9-25.2) | 27.5 (24.75-30.25) | 0.960 met",
                     "| 0.873 missed (1 ± 0.1) |",
                     "| step | torch eager step | bf16 | cuda llama3-8b cold | 1 | 1.100 |"):
            self.assertIn(text, md)
            self.assertIn(text, p.stdout)
        # No PyTorch row: the prediction is still reported, predicted / PyTorch is not measured.
        os.remove(os.path.join(step_dir, "torch_step.csv"))
        (e,) = ratios.step_predictions(self.dir)
        self.assertIsNone(e["predicted_over_torch"])
        self.assertEqual(e["target_torch"], "not measured")
        self.assertIn("| not measured | 0.960 met (1 ± 0.05) | - not measured |",
                      ratios.prediction_markdown([e]))


class BaselinesTest(unittest.TestCase):
    def test_help_without_torch(self):
        for name in ("torch_gemm.py", "torch_attention.py", "torch_p2p.py", "torch_collectives.py", "torch_step.py"):
            p = run(os.path.join(HERE, name), "--help")
            self.assertEqual(p.returncode, 0, f"{name}: {p.stderr}")
            self.assertIn("--points-from", p.stdout)

    def test_statistics(self):
        s = torch_common.summarize([5.0, 1.0, 3.0, 2.0, 4.0])
        self.assertEqual((s["time_us_median"], s["samples"]), (3.0, 5))
        self.assertAlmostEqual(s["time_us_p10"], 1.4)
        self.assertAlmostEqual(s["time_us_p90"], 4.6)

    def test_operands_give_gpucal_column_major_product(self):
        class Fake:  # shape bookkeeping of a tensor
            def __init__(self, shape):
                self.shape = tuple(shape)

            def transpose(self, i, j):
                s = list(self.shape)
                s[i], s[j] = s[j], s[i]
                return Fake(s)

        m, n, k = 3, 5, 7
        for layout in ("NN", "NT", "TN", "TT"):
            lhs, rhs = torch_gemm.operands(None, Fake, m, n, k, 1, layout)
            # D^T[n, m] = op(B)^T [n, k] @ op(A)^T [k, m]
            self.assertEqual((lhs.shape, rhs.shape), ((n, k), (k, m)), layout)
        lhs, rhs = torch_gemm.operands(None, Fake, m, n, k, 4, "TN")
        self.assertEqual((lhs.shape, rhs.shape), ((4, n, k), (4, k, m)))

    @unittest.skipUnless(os.environ.get("GPUCAL_BENCH_GEMM"), "GPUCAL_BENCH_GEMM not set")
    def test_point_keys_are_gpucals(self):
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, "g.csv")
            p = subprocess.run([os.environ["GPUCAL_BENCH_GEMM"], "--backend", "host", "--m", "64", "--n", "32", "--k",
                                "16", "--layout", "TN", "--dtype", "fp32", "--out", out, "--quiet",
                                "--max-time-per-point", "0.01", "--warmup-time", "0"], capture_output=True, text=True)
            self.assertEqual(p.returncode, 0, p.stderr)
            with open(out, newline="") as f:
                point = next(csv.DictReader(f))["point"]
            meta = json.load(open(out[:-4] + ".json"))
        self.assertEqual(point, torch_gemm.gemm_point("fp32", "TN", 64, 32, 16, impl="openblas"))
        self.assertTrue(any(l["name"].startswith("libopenblas") for l in meta["loaded_libraries"]))


if __name__ == "__main__":
    unittest.main(verbosity=2)
