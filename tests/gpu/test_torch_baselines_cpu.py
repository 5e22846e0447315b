#!/usr/bin/env python3
"""torch_gemm.py and torch_memory.py run end to end on the CPU (--device cpu: the plumbing,
host clock) with whatever torch this Python has, on gpucal CSVs written here: every gpucal
point gets exactly one row, measured or skipped with its reason, in measurement order; a
budget spent before the first point leaves every row `skipped`, `time budget spent`; and
torch_collectives.py's buffers are laid out as bench_collectives lays out in- and
out-of-place ones (views checked at 4 ranks). Exit 77 (ctest: skipped) where this Python has
no torch.
"""
import csv
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import torch_common  # noqa: E402

torch = torch_common.import_torch_or_skip()
import torch_collectives  # noqa: E402
import torch_gemm  # noqa: E402
import torch_memory  # noqa: E402

GPUCAL_COLUMNS = ["schema_version", "bench", "point", "status", "time_us_median", "dtype", "out_dtype", "layout", "m",
                  "n", "k", "batch", "regime"]


def write_gpucal_csv(path, rows):
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=GPUCAL_COLUMNS, extrasaction="ignore")
        w.writeheader()
        for r in rows:
            w.writerow({"schema_version": 1, "time_us_median": 1.0, **r})


def read(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def run(script, *args):
    return subprocess.run([sys.executable, os.path.join(HERE, script), *args], capture_output=True, text=True,
                          timeout=300)


def gemm(dtype, m, n, k, variant="", status="ok"):
    return {"bench": "gemm", "status": status, "dtype": dtype, "out_dtype": dtype, "layout": "TN", "m": m, "n": n,
            "k": k, "batch": 1, "regime": "cold",
            "point": torch_gemm.gemm_point(dtype, "TN", m, n, k).replace("/cold", variant + "/cold")}


class GemmCpuTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp()
        self.fp32 = os.path.join(self.dir, "gemm_fp32.csv")
        self.bf16 = os.path.join(self.dir, "gemm_bf16.csv")
        write_gpucal_csv(self.fp32, [gemm("fp32", 64, 96, 32), gemm("fp32", 128, 64, 64), gemm("fp32", 128, 64, 64),
                                     gemm("fp32", 32, 32, 32, status="skipped")])
        write_gpucal_csv(self.bf16, [gemm("bf16", 64, 96, 32), gemm("bf16", 64, 96, 32, "/autotune4"),
                                     gemm("fp8_e5m2", 64, 64, 64)])
        self.points = {gemm("fp32", 64, 96, 32)["point"], gemm("fp32", 128, 64, 64)["point"],
                       gemm("bf16", 64, 96, 32)["point"], gemm("bf16", 64, 96, 32, "/autotune4")["point"],
                       gemm("fp8_e5m2", 64, 64, 64)["point"]}

    def test_every_point_once_in_measurement_order(self):
        out = os.path.join(self.dir, "torch_gemm.csv")
        p = run("torch_gemm.py", "--device", "cpu", "--out", out, "--points-from", self.fp32, self.bf16,
                "--max-time-per-point", "0.01")
        self.assertEqual(p.returncode, 0, p.stderr)
        rows = read(out)
        self.assertEqual(sorted(r["point"] for r in rows), sorted(self.points))
        status = {r["point"]: (r["status"], r["detail"]) for r in rows}
        self.assertEqual(status[gemm("fp8_e5m2", 64, 64, 64)["point"]], ("skipped", "no torch dtype for fp8_e5m2"))
        ok = [r for r in rows if r["status"] == "ok"]
        self.assertEqual(len(ok), 4)
        for r in ok:
            self.assertGreater(float(r["time_us_median"]), 0)
            self.assertGreaterEqual(int(r["samples"]), 5)
            self.assertGreater(float(r["tflops"]), 0)
        # Interleaved across dtypes (fp32, bf16, fp8_e5m2, then fp32's second shape); the
        # autotuned row right after its heuristic twin, with the same measurement.
        self.assertEqual([r["dtype"] for r in rows], ["fp32", "bf16", "bf16", "fp8_e5m2", "fp32"])
        self.assertEqual(rows[1]["time_us_median"], rows[2]["time_us_median"])
        with open(out[:-4] + ".json") as f:
            self.assertIn("torch", f.read())

    def test_a_spent_budget_skips_every_row(self):
        out = os.path.join(self.dir, "torch_gemm.csv")
        p = run("torch_gemm.py", "--device", "cpu", "--out", out, "--points-from", self.fp32, self.bf16,
                "--time-budget", "0.001")  # spent by `import torch`: the budget starts before it
        self.assertEqual(p.returncode, 0, p.stderr)
        rows = read(out)
        self.assertEqual(sorted(r["point"] for r in rows), sorted(self.points))
        for r in rows:
            if r["dtype"] != "fp8_e5m2":
                self.assertEqual((r["status"], r["detail"], r["time_us_median"]),
                                 ("skipped", torch_common.BUDGET_SPENT, ""), r["point"])
        self.assertIn("time budget spent", p.stdout)


class MemoryCpuTest(unittest.TestCase):
    def test_points_from_on_the_cpu(self):
        measured = ["memory/gpucal/copy/fp32/64K/hot", "memory/gpucal/triad/bf16/64K/hot",
                    "memory/gpucal/layernorm_fwd/fp32/r64/c256/hot", "memory/cudnn/layernorm_fwd/fp32/r64/c256/hot",
                    "memory/gpucal/layernorm_bwd/bf16/r64/c256/hot", "memory/gpucal/softmax_bwd/fp32/r64/c256/hot",
                    "memory/gpucal/gelu_bwd/fp32/r64/c256/hot", "memory/gpucal/swiglu_bwd/fp32/r64/c256/hot",
                    "memory/gpucal/dropout_residual_add/fp32/r64/c256/hot",
                    "memory/gpucal/cross_entropy_fwd/fp32/r64/c1000/hot",
                    "memory/gpucal/cross_entropy_bwd/bf16/r64/c1000/hot"]
        not_measured = {"memory/gpucal/fma_chain/fp32/n1M/hot": "no PyTorch counterpart",
                        "memory/gpucal/copy/fp32/64K/cold": "regime cold", "memory/host/copy/fp32/64K/hot": "impl host"}
        with tempfile.TemporaryDirectory() as d:
            src, out = os.path.join(d, "memory.csv"), os.path.join(d, "torch_memory.csv")
            rows = [{"bench": "memory", "point": p, "status": "ok"} for p in measured + list(not_measured)]
            rows += [{"bench": "memory", "point": "memory/gpucal/add/fp32/64K/hot", "status": "skipped"},
                     {"bench": "memory", "point": measured[0], "status": "ok"}]
            write_gpucal_csv(src, rows)
            p = run("torch_memory.py", "--device", "cpu", "--out", out, "--points-from", src,
                    "--max-time-per-point", "0.01")
            self.assertEqual(p.returncode, 0, p.stderr)
            got = read(out)
        self.assertEqual(sorted(r["point"] for r in got), sorted(measured + list(not_measured)))
        by_point = {r["point"]: r for r in got}
        for point in measured:
            self.assertEqual(by_point[point]["status"], "ok", by_point[point])
            self.assertGreater(float(by_point[point]["time_us_median"]), 0)
        for point, why in not_measured.items():
            self.assertEqual(by_point[point]["status"], "skipped")
            self.assertIn(why, by_point[point]["detail"])
        twins = [by_point[p] for p in measured if "/layernorm_fwd/" in p]
        self.assertEqual(twins[0]["time_us_median"], twins[1]["time_us_median"])
        self.assertEqual({r["kernel"] for r in got if r["point"] in measured},
                         {torch_memory.parse_point(p)[1] for p in measured})


class CollectiveBuffersTest(unittest.TestCase):
    def test_layouts(self):
        world, rank, size = 4, 2, 4096 * 4  # 4096 fp32 in all, 1024 per rank

        def operands(collective, in_place, dtype="fp32"):
            return torch_collectives.operands(torch, collective, in_place, size, dtype, world, rank, "cpu")

        def offset(view, base):  # elements from base's start; view must be a view of base
            self.assertIs(view._base, base)
            return (view.data_ptr() - base.data_ptr()) // base.element_size()

        def separate(x, y):
            return x._base is None and y._base is None and x.data_ptr() != y.data_ptr()

        x, y = operands("allgather", True)  # the input is block `rank` of the output
        self.assertEqual((x.numel(), y.numel(), offset(x, y)), (1024, 4096, rank * 1024))
        x, y = operands("allgather", False)
        self.assertEqual((x.numel(), y.numel(), separate(x, y)), (1024, 4096, True))
        x, y = operands("reduce_scatter", True)  # the output is block `rank` of the input
        self.assertEqual((x.numel(), y.numel(), offset(y, x)), (4096, 1024, rank * 1024))
        x, y = operands("reduce_scatter", False)
        self.assertEqual((x.numel(), y.numel(), separate(x, y)), (4096, 1024, True))
        for c in ("allreduce", "broadcast", "reduce"):
            x, y = operands(c, True, "bf16")
            self.assertIs(x, y)
            self.assertEqual((x.numel(), x.dtype), (8192, torch.bfloat16))
        x, y = operands("alltoall", True)
        self.assertIs(x, y)
        x, y = operands("alltoall", False)
        self.assertEqual((x.numel(), y.numel(), separate(x, y)), (4096, 4096, True))
        self.assertTrue(bool((x == 1).all()))  # inputs are ones, not zeros


if __name__ == "__main__":
    unittest.main(verbosity=2)
