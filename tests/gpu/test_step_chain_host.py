#!/usr/bin/env python3
"""Part 4 of .ci/gpu-check run on the host: its commands, through gpu-check's own step runner,
with the host backend, a smaller model and short sampling (bench_gemm, bench_attention,
bench_memory, bench_step, gpucal predict --measure-step into <results>/step/), then
torch_step.py's plan checked against that bench_step's sidecar, its refusals of any other step,
its one-line failures, and the step-prediction ratios. Standard-library Python only.

  test_step_chain_host.py [TestCaseName ...]
Environment: GPUCAL_BENCH_GEMM, GPUCAL_BENCH_ATTENTION, GPUCAL_BENCH_MEMORY, GPUCAL_BENCH_STEP,
GPUCAL_GPUCAL (this build's executables; ctest sets them).
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import gpu_check  # noqa: E402
import gpu_check_plan as plan  # noqa: E402
import ratios  # noqa: E402
import torch_step  # noqa: E402
from test_gpu_check_host import run, torch_row, write_csv  # noqa: E402

# The plan's commands with the host backend, the model shrunk (hidden 256, seq 64, fp32:
# seconds on a loaded 2-core VM) and short sampling.
HOST_MODEL = {"--scale": "16", "--seq": "64", "--dtype": "fp32"}
CHAIN_BINARIES = {"bench_gemm": "GPUCAL_BENCH_GEMM", "bench_attention": "GPUCAL_BENCH_ATTENTION",
                  "bench_memory": "GPUCAL_BENCH_MEMORY", "bench_step": "GPUCAL_BENCH_STEP", "gpucal": "GPUCAL_GPUCAL"}


def host_argv(argv):
    """A part-4 command as the host runs it (placeholders kept for gpu-check to expand)."""
    result, i = [], 0
    while i < len(argv):
        a = argv[i]
        if a in HOST_MODEL or a in ("--backend", "--max-time-per-point"):
            value = HOST_MODEL.get(a) or {"--backend": "host", "--max-time-per-point": "0.02"}[a]
            result += [a, value]
            i += 2
            continue
        result.append(a)
        i += 1
    return result


class HostContext(gpu_check.Context):
    """gpu-check's step context with this build's executables (no bundle, no GPU)."""

    def __init__(self, out, work):
        super().__init__(None, None, {"executables": []}, None, out, work, dict(os.environ), print)

    def binary(self, name):
        return os.path.abspath(os.environ[CHAIN_BINARIES[name]])


def run_tool(argv):
    p = subprocess.run(argv, capture_output=True, text=True, timeout=300)
    if p.returncode != 0:
        raise AssertionError(f"{' '.join(argv)}: exit {p.returncode}: {p.stderr.strip()[-400:]}")
    return p


@unittest.skipUnless(all(os.environ.get(v) for v in CHAIN_BINARIES.values()),
                     "GPUCAL_BENCH_* / GPUCAL_GPUCAL not set (run through ctest)")
class StepChainTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        # gpu-check's own runner: it expands the placeholders and makes the step/ folder.
        cls.out, cls.work = tempfile.mkdtemp(), tempfile.mkdtemp()
        ctx = HostContext(cls.out, cls.work)
        cls.results = {}
        for s in plan.steps_of(4):
            if s.kind == "bench":
                status, _, note = gpu_check.RUNNERS[s.kind](ctx, s._replace(argv=host_argv(s.argv)), 120)
                cls.results[s.name] = (status, note)
        cls.step_csv = os.path.join(cls.out, "step", "step.csv")

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.out)
        shutil.rmtree(cls.work)

    def test_gpu_checks_runner_ran_every_program(self):
        self.assertEqual(set(self.results), {"step_gemm", "step_attention", "step_memory", "step_bench", "step_predict"})
        for name, (status, note) in self.results.items():
            self.assertEqual(status, "ok", f"{name}: {note}")
        self.assertRegex(self.results["step_bench"][1], r"^1 rows ok=1$")
        self.assertLessEqual({"attention.csv", "attention.json", "gemm.csv", "gemm.json", "memory.csv", "memory.json",
                              "predict.json", "step.csv", "step.json"}, set(os.listdir(os.path.join(self.out, "step"))))

    def section(self):
        rows, section = torch_step.read_run(self.step_csv)
        self.assertEqual(len(rows), 1)
        return rows[0], section

    def test_predict_compared_the_step_bench_step_ran(self):
        with open(os.path.join(self.out, "step", "predict.json")) as f:
            measured = json.load(f)["measured_step"]
        row, section = self.section()
        self.assertEqual(measured["point"], row["point"])
        self.assertEqual(section["model"]["name"], "llama3-8b/scale16")
        self.assertEqual((section["layout"]["seq"], section["layout"]["layers"], section["layout"]["dtype"]),
                         (64, 1, "fp32"))
        self.assertGreater(measured["predicted_over_measured"], 0)
        # The PyTorch row joins on the step's point; the prediction reads both.
        write_csv(os.path.join(self.out, "step", "torch_step.csv"),
                  [torch_row("step", row["point"], "torch eager step", 2e6 * measured["time_s_median"])])
        try:
            (e,) = ratios.step_predictions(self.out)
        finally:
            os.remove(os.path.join(self.out, "step", "torch_step.csv"))
        self.assertAlmostEqual(e["predicted_over_measured"], measured["predicted_over_measured"])
        self.assertAlmostEqual(e["predicted_over_torch"], measured["predicted_over_measured"] / 2)

    def test_torch_step_runs_exactly_bench_steps_operations(self):
        row, section = self.section()
        d, reason = torch_step.plan_row(row, section, "chain")
        self.assertIsNone(reason)
        self.assertEqual((d.layers, d.hidden, d.heads, d.kv_heads, d.head_dim, d.ffn), (1, 256, 32, 8, 8, 896))
        self.assertEqual((d.vocab, d.vocab_padded, d.tokens, d.micro_batches), (8016, 8064, 64, 1))
        self.assertEqual(torch_step.dense_params(d), section["dense_params"])
        # Every op bench_step ran, no other: each role once, with its shape and calls.
        self.assertEqual(sorted(o["op_role"] for o in torch_step.planned_ops(d)), sorted(row["roles_run"].split("+")))
        self.assertEqual(torch_step.differences(torch_step.planned_ops(d), section, row["roles_run"]), [])

    def test_torch_step_refuses_another_step(self):
        row, section = self.section()
        cases = []
        changed = json.loads(json.dumps(section))
        next(o for o in changed["ops"] if o["op_role"] == "mlp_down_wgrad")["shape"]["k"] += 1
        cases.append((changed, "mlp_down_wgrad"))
        changed = json.loads(json.dumps(section))
        next(o for o in changed["ops"] if o["op_role"] == "attn_bwd")["calls_per_step"] = 2
        cases.append((changed, "attn_bwd"))
        changed = json.loads(json.dumps(section))
        changed["ops"] = [o for o in changed["ops"] if o["op_role"] != "optimizer_step"]
        cases.append((changed, "this script would run optimizer_step"))
        changed = json.loads(json.dumps(section))
        changed["dense_params"] += 1
        cases.append((changed, "parameters here"))
        for changed, text in cases:
            with self.assertRaises(torch_step.StepError) as caught:
                torch_step.plan_row(row, changed, "chain")
            self.assertIn(text, str(caught.exception))
        with self.assertRaises(torch_step.StepError) as caught:
            torch_step.plan_row(dict(row, seq="128"), section, "chain")
        self.assertIn("the row's seq is '128', its sidecar says 64", str(caught.exception))
        for key, value, text in (("tp", 2, "tp = 2"), ("zero", 1, "ZeRO 1")):
            changed = json.loads(json.dumps(section))
            changed["layout"][key] = value
            d, reason = torch_step.plan_row(dict(row, **({key: str(value)} if key == "tp" else {})), changed, "chain")
            self.assertIsNone(d)
            self.assertIn(text, reason)
        changed = json.loads(json.dumps(section))
        changed["model"]["norm"], changed["model"]["gated"] = "layernorm", False
        self.assertEqual(torch_step.plan_row(row, changed, "chain")[1].split("this run has ")[1], "layernorm, a GELU MLP")

    def test_torch_step_fails_in_one_line(self):
        script = os.path.join(HERE, "torch_step.py")
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, "t.csv")
            bad = os.path.join(d, "step.csv")
            shutil.copy(self.step_csv, bad)
            with open(self.step_csv[:-4] + ".json") as f:
                doc = json.load(f)
            next(o for o in doc["model"]["ops"] if o["op_role"] == "qkv_fwd")["shape"]["m"] = 7
            with open(bad[:-4] + ".json", "w") as f:
                json.dump(doc, f)
            cases = [(["--points-from", os.path.join(d, "none.csv")], "no such file"),
                     ([], "--points-from RESULTS/step.csv is needed"),
                     (["--points-from", bad], "the PyTorch step would not be bench_step's")]
            try:
                import torch  # noqa: F401,PLC0415
            except ImportError:  # the plan passes, then torch is missing: still one line, exit 1
                cases.append((["--points-from", self.step_csv], "PyTorch is not importable here"))
            for args, text in cases:
                p = run(script, "--out", out, *args)
                self.assertEqual(p.returncode, 1, f"{args}: {p.stderr}")
                self.assertEqual(len(p.stderr.strip().splitlines()), 1, p.stderr)
                self.assertIn(text, p.stderr)
                self.assertTrue(p.stderr.startswith("torch_step: "), p.stderr)

    def test_more_layers_micro_batches_and_tied_embeddings(self):
        config = {"name": "tiny-tied", "layers": 3, "hidden": 64, "heads": 4, "kv_heads": 2, "ffn": 128,
                  "gated": True, "vocab": 1000, "tied_embeddings": True, "seq": 32}
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "tiny.json")
            with open(path, "w") as f:
                json.dump(config, f)
            step_csv = os.path.join(d, "step.csv")
            run_tool([os.environ["GPUCAL_BENCH_STEP"], "--backend", "host", "--quiet", "--warmup-time", "0",
                      "--max-time-per-point", "0.02", "--model-config", path, "--layers", "2", "--micro-batch", "2",
                      "--global-batch", "4", "--out", step_csv])
            (row,), section = torch_step.read_run(step_csv)
            d_, reason = torch_step.plan_row(row, section, "tiny")
        self.assertIsNone(reason)
        self.assertEqual((d_.layers, d_.batch, d_.micro_batches, d_.tokens, d_.vocab_padded, d_.tied),
                         (2, 2, 2, 64, 1024, True))
        calls = {o["op_role"]: o["calls_per_step"] for o in torch_step.planned_ops(d_)}
        self.assertEqual((calls["qkv_fwd"], calls["logits_wgrad"], calls["residual_bwd"], calls["optimizer_step"]),
                         (4, 2, 8, 1))
        # Tied: one vocabulary table (the logits' weight), two norms per layer and the final one.
        self.assertEqual(torch_step.dense_params(d_), section["dense_params"])
        self.assertEqual(section["dense_params"],
                         2 * (64 * (4 + 2 * 2) * 16 + 64 * 64 + 3 * 64 * 128 + 2 * 64) + 64 + 1024 * 64)


if __name__ == "__main__":
    unittest.main(verbosity=2)
