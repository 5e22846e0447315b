#!/usr/bin/env python3
"""The PyTorch baselines' plans, tested without torch or a GPU (standard library only): which
gpucal rows torch_gemm.py, torch_collectives.py and torch_memory.py measure, in which order,
which they skip and why, and that every row is written exactly once, measured or skipped
`time budget spent` (torch_common.run_jobs with a budget that runs out part way).

  test_torch_baselines_host.py [TestCaseName ...]
Environment (optional; ctest sets them): GPUCAL_BENCH_COLLECTIVES, GPUCAL_BENCH_MEMORY (this
build's executables) for the tests on their real point keys.
"""
import csv
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import torch_collectives  # noqa: E402
import torch_common  # noqa: E402
import torch_gemm  # noqa: E402
import torch_memory  # noqa: E402

MPI_ENV = {**os.environ, "OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}


class FakeBudget:
    """Expires after `checks` calls of expired()."""

    def __init__(self, checks):
        self.left = checks

    def expired(self):
        self.left -= 1
        return self.left < 0


def run_plan(jobs, budget):
    """run_jobs with a measurement that records its keys: (written rows, measured keys, counts)."""
    written, measured = [], []

    def measure(key):
        measured.append(key)
        return {"status": "ok", "time_us_median": 1.0}

    counts = torch_common.run_jobs(jobs, measure, lambda r, res: written.append((r["point"], res)), budget,
                                   log=lambda _: None)
    return written, measured, counts


def gemm_row(dtype, m, n, k, variant=""):
    out = "bf16" if dtype == "fp8_e4m3" else dtype
    point = torch_gemm.gemm_point(dtype, "TN", m, n, k).replace("/cold", variant + "/cold")
    return {"point": point, "dtype": dtype, "out_dtype": out, "layout": "TN", "m": str(m), "n": str(n), "k": str(k),
            "batch": "1", "regime": "cold"}


def gemm_rows():
    """As .ci/gpu-check feeds torch_gemm.py: per dtype file the set's shapes (4096^3 and
    8192^3 among them, in the set's order) and the squares appended again, then the bf16
    autotuned rows."""
    shapes = [(2048, 12288, 4096), (4096, 4096, 4096), (4096, 16384, 4096), (8192, 8192, 8192), (16384, 4096, 16384)]
    squares = [(4096, 4096, 4096), (8192, 8192, 8192)]
    rows = [gemm_row(d, *s) for d in ("bf16", "fp16", "fp8_e4m3") for s in shapes + squares]
    return rows + [gemm_row("bf16", *s, variant="/autotune4") for s in shapes + squares]


class RunJobsTest(unittest.TestCase):
    def test_every_row_once_and_the_budget_tail_skipped(self):
        rows = [{"point": f"p{i}", "k": i // 2} for i in range(10)]  # pairs share a measurement
        jobs = torch_common.group_jobs(rows, lambda r: (r["k"], {"status": "skipped", "detail": "known"})
                                       if r["k"] == 4 else (r["k"], None))
        self.assertEqual([len(j.rows) for j in jobs], [2, 2, 2, 2, 1, 1])  # known results: a job per row
        written, measured, (n_measured, n_spent) = run_plan(jobs, FakeBudget(2))
        self.assertEqual([p for p, _ in written], [f"p{i}" for i in range(10)])
        self.assertEqual(measured, [0, 1])
        self.assertEqual((n_measured, n_spent), (2, 4))
        status = {p: (res["status"], res.get("detail", "")) for p, res in written}
        for p in ("p0", "p1", "p2", "p3"):
            self.assertEqual(status[p], ("ok", ""))
        for p in ("p4", "p5", "p6", "p7"):
            self.assertEqual(status[p], ("skipped", torch_common.BUDGET_SPENT))
        for p in ("p8", "p9"):  # known before measuring: the reason stays, budget or not
            self.assertEqual(status[p], ("skipped", "known"))

    def test_interleave_keeps_each_group_in_order(self):
        items = ["a1", "a2", "a3", "b1", "c1", "c2"]
        self.assertEqual(torch_common.interleave(items, lambda s: s[0]), ["a1", "b1", "c1", "a2", "c2", "a3"])
        self.assertEqual(torch_common.interleave([], len), [])

    def test_max_time_per_point_flag(self):
        ap = torch_common.base_args("x")
        self.assertEqual(ap.parse_args(["--out", "o.csv"]).max_time_per_point, None)
        self.assertEqual(ap.parse_args(["--out", "o.csv", "--max-time-per-point", "0.1"]).max_time_per_point, 0.1)
        for bad in ("-1", "nan", "x"):
            with self.assertRaises(SystemExit) as e, open(os.devnull, "w") as null:
                sys.stderr, saved = null, sys.stderr
                try:
                    ap.parse_args(["--out", "o.csv", "--max-time-per-point", bad])
                finally:
                    sys.stderr = saved
            self.assertEqual(e.exception.code, 2, bad)
        for name in ("torch_gemm.py", "torch_collectives.py", "torch_memory.py"):
            p = subprocess.run([sys.executable, os.path.join(HERE, name), "--help"], capture_output=True, text=True)
            self.assertEqual(p.returncode, 0, f"{name}: {p.stderr}")
            for flag in ("--points-from", "--time-budget", "--max-time-per-point"):
                self.assertIn(flag, p.stdout, name)


class GemmPlanTest(unittest.TestCase):
    def test_squares_of_every_dtype_first_then_interleaved(self):
        rows = gemm_rows()
        jobs = torch_gemm.plan_jobs(rows)
        keys = [j.key for j in jobs]
        self.assertEqual(len(keys), len(set(keys)))
        self.assertEqual(len(jobs), 3 * 5)  # squares listed twice are one shape
        head = [(k[0], k[3]) for k in keys[:6]]
        self.assertEqual(sorted(head), sorted((d, s) for d in ("bf16", "fp16", "fp8_e4m3") for s in (4096, 8192)))
        self.assertTrue(all(torch_gemm.is_square(k) for k in keys[:6]))
        self.assertFalse(any(torch_gemm.is_square(k) for k in keys[6:]))
        self.assertEqual([k[0] for k in keys[6:]], ["bf16", "fp16", "fp8_e4m3"] * 3)
        self.assertEqual([k[3:6] for k in keys[6:9]], [(2048, 12288, 4096)] * 3)
        # Every distinct point exactly once; the autotuned row rides on bf16's measurement.
        points = [r["point"] for j in jobs for r in j.rows]
        self.assertEqual(sorted(points), sorted({r["point"] for r in rows}))
        bf16_8192 = next(j for j in jobs if j.key[0] == "bf16" and j.key[3:6] == (8192, 8192, 8192))
        self.assertEqual(sorted(r["point"] for r in bf16_8192.rows),
                         sorted([gemm_row("bf16", 8192, 8192, 8192)["point"],
                                 gemm_row("bf16", 8192, 8192, 8192, "/autotune4")["point"]]))

    def test_a_budget_cut_loses_a_uniform_tail(self):
        rows = gemm_rows()
        written, measured, (n_measured, n_spent) = run_plan(torch_gemm.plan_jobs(rows), FakeBudget(9))
        self.assertEqual(n_measured, 9)
        self.assertEqual(sorted(p for p, _ in written), sorted({r["point"] for r in rows}))
        self.assertTrue(all(torch_gemm.is_square(k) for k in measured[:6]))
        self.assertEqual(sorted(k[0] for k in measured[6:]), ["bf16", "fp16", "fp8_e4m3"])
        spent = [p for p, res in written if res.get("detail") == torch_common.BUDGET_SPENT]
        self.assertEqual(len(spent), n_spent)
        self.assertEqual(len(spent) + sum(res["status"] == "ok" for _, res in written), len(written))
        self.assertEqual(n_spent, 6 + 2)  # 2 shapes x 3 dtypes, and bf16's 2 autotuned twins


def collective_row(collective, size, in_place, dtype="fp32", op="sum", nranks=1, graph=0):
    op = op if collective in ("allreduce", "reduce_scatter", "reduce") else ""
    root = "/r0" if collective in ("broadcast", "reduce") else ""
    place = "ip" if in_place else "oop"
    point = f"collectives/nccl/{collective}/{dtype}{'/' + op if op else ''}{root}/n{nranks}/{place}/{size}/hot"
    return {"point": point, "collective": collective, "dtype": dtype, "op": op, "in_place": str(int(in_place)),
            "root": "0" if root else "", "nranks": str(nranks), "size_bytes": str(size), "regime": "hot",
            "graph": str(graph), "status": "ok", "bench": "collectives"}


class CollectivesTest(unittest.TestCase):
    def test_in_place_and_out_of_place_per_collective(self):
        for c in ("allreduce", "broadcast", "reduce"):
            key, result = torch_collectives.classify(collective_row(c, 1 << 20, True))
            self.assertIsNone(result, c)
            self.assertTrue(key[5], c)
            oop = collective_row(c, 1 << 20, False)
            key, result = torch_collectives.classify(oop)
            self.assertEqual(result["status"], "skipped", c)
            self.assertIn("in place only", result["detail"])
            self.assertIn(oop["point"].replace("/oop/", "/ip/"), result["detail"])
        for c in ("allgather", "reduce_scatter", "alltoall"):
            for in_place in (False, True):
                key, result = torch_collectives.classify(collective_row(c, 1 << 20, in_place))
                self.assertIsNone(result, (c, in_place))
                self.assertEqual(key[5], in_place, c)
        # In and out of place are two measurements, never shared.
        a = torch_collectives.classify(collective_row("allgather", 4096, True))[0]
        b = torch_collectives.classify(collective_row("allgather", 4096, False))[0]
        self.assertNotEqual(a, b)

    def test_rows_torch_cannot_repeat_are_skipped_with_the_reason(self):
        cases = {"two ranks": (collective_row("allreduce", 4096, True, nranks=2), "one rank"),
                 "graph": (collective_row("allreduce", 4096, True, graph=8), "CUDA-graph"),
                 "fp8": (collective_row("allreduce", 4096, True, dtype="fp8_e4m3"), "fp8_e4m3"),
                 "prod": (collective_row("allreduce", 4096, True, op="prod"), "'prod'")}
        for name, (row, reason) in cases.items():
            _, result = torch_collectives.classify(row)
            self.assertEqual(result["status"], "skipped", name)
            self.assertIn(reason, result["detail"], name)
        self.assertIsNone(torch_collectives.classify(collective_row("allreduce", 4096, True, op="max"))[1])

    @unittest.skipUnless(os.environ.get("GPUCAL_BENCH_COLLECTIVES"), "GPUCAL_BENCH_COLLECTIVES not set")
    def test_on_bench_collectives_rows(self):
        """The plan's collectives (in and out of place) from a real run: the columns and keys
        classify() reads, one torch row per ok row, oop allreduce/broadcast on the ip twin."""
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, "c.csv")
            p = subprocess.run([os.environ["GPUCAL_BENCH_COLLECTIVES"], "--backend", "host", "--collective",
                                "allreduce,allgather,reduce_scatter,broadcast", "--sizes", "8:1M:x16", "--in-place",
                                "0,1", "--quiet", "--max-time-per-point", "0.01", "--warmup-time", "0", "--out", out],
                               capture_output=True, text=True, env=MPI_ENV, timeout=120)
            self.assertEqual(p.returncode, 0, p.stderr)
            rows = torch_common.ok_rows([out], "collectives")
        self.assertGreaterEqual(len(rows), 30)
        written, measured, _ = run_plan(torch_collectives.plan_jobs(rows), FakeBudget(10 ** 6))
        self.assertEqual(sorted(p for p, _ in written), sorted(r["point"] for r in rows))
        by_point = dict(written)
        for r in rows:
            res = by_point[r["point"]]
            in_place = "/ip/" in r["point"]
            self.assertEqual(in_place, r["in_place"] == "1", r["point"])
            if r["collective"] in ("allreduce", "broadcast") and not in_place:
                self.assertEqual(res["status"], "skipped", r["point"])
                self.assertEqual(by_point[r["point"].replace("/oop/", "/ip/")]["status"], "ok")
            else:
                self.assertEqual(res["status"], "ok", r["point"])
        self.assertEqual(len(measured), sum(by_point[r["point"]]["status"] == "ok" for r in rows))
        self.assertTrue(any(k[5] for k in measured) and not all(k[5] for k in measured))


def memory_rows(keys):
    return [{"bench": "memory", "point": k, "status": "ok"} for k in keys]


class MemoryTest(unittest.TestCase):
    def test_point_keys_read_back(self):
        for name in ("quick", "llm"):
            for key, kernel, dtype, shape in torch_memory.points(name):
                self.assertEqual(torch_memory.parse_point(key), ("gpucal", kernel, dtype, shape, "hot"), key)
        for bad in ("memory/gpucal/copy/fp32/4Q/hot", "memory/gpucal/nope/fp32/4K/hot", "memory/gpucal/copy/fp32/hot",
                    "memory/gpucal/layernorm_fwd/fp32/r4/hot", "memory/gpucal/copy/fp32/4096/hot", "gemm/x/y/z/w/v"):
            self.assertIsNone(torch_memory.parse_point(bad), bad)  # 4096 is written 4K: not a key

    def test_points_from_selection(self):
        llm = [p[0] for p in torch_memory.points("llm")]
        extra = ["memory/cudnn/layernorm_fwd/bf16/r4096/c4096/hot", "memory/gpucal/copy/fp32/4K/cold",
                 "memory/host/copy/fp32/4K/hot", "memory/gpucal/bogus/fp32/4K/hot", llm[0]]  # llm[0] again
        rows = memory_rows(llm + extra)
        jobs = torch_memory.plan_jobs(rows)
        measured = [j for j in jobs if j.result is None]
        self.assertEqual(len(measured), 306)
        self.assertEqual({r["point"] for j in measured for r in j.rows},
                         set(p[0] for p in torch_memory.torch_points("llm")) | {extra[0]})
        skipped = {j.rows[0]["point"]: j.result["detail"] for j in jobs if j.result is not None}
        self.assertEqual(len(skipped), 3 + 3)  # fma_chain x 3 dtypes, cold, host, bogus
        self.assertTrue(all("fma_chain" in why for p, why in skipped.items() if "/fma_chain/" in p))
        self.assertIn("regime cold", skipped[extra[1]])
        self.assertIn("impl host", skipped[extra[2]])
        self.assertIn("point key this script can read", skipped[extra[3]])
        # cuDNN's layernorm shares the PyTorch measurement of gpucal's.
        ln = next(j for j in measured if extra[0] in [r["point"] for r in j.rows])
        self.assertEqual(len(ln.rows), 2)
        # Every row once; the first measurements cover every (kernel, dtype) before any repeats.
        written, keys, _ = run_plan(jobs, FakeBudget(34))
        self.assertEqual(sorted(p for p, _ in written), sorted(set(llm + extra)))
        self.assertEqual(len({k[:2] for k in keys}), 34)  # 17 kernels x 2 dtypes, one shape each
        spent = [p for p, res in written if res.get("detail") == torch_common.BUDGET_SPENT]
        self.assertEqual(len(spent), 306 - 34)
        # cuDNN's layernorm (the first layernorm_fwd bf16 shape) is written with its gpucal twin's measurement.
        self.assertEqual(dict(written)[extra[0]]["status"], "ok")

    @unittest.skipUnless(os.environ.get("GPUCAL_BENCH_MEMORY"), "GPUCAL_BENCH_MEMORY not set")
    def test_the_plans_bench_memory_command_lists_these_points(self):
        """The exact flags .ci/gpu-check gives bench_memory, with --list: its keys are the
        ones --points-from measures (every one but fma_chain's)."""
        p = subprocess.run([os.environ["GPUCAL_BENCH_MEMORY"], "--backend", "cuda", "--quiet", "--warmup-time", "0.02",
                            "--max-time-per-point", "0.1", "--set", "llm", "--impl", "gpucal", "--out",
                            os.path.join(tempfile.gettempdir(), "unused.csv"), "--list"],
                           capture_output=True, text=True, timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr)
        keys = [line.split()[0] for line in p.stdout.splitlines() if line and not line.startswith("#")]
        self.assertEqual(keys, [k for k, *_ in torch_memory.points("llm")])
        jobs = torch_memory.plan_jobs(memory_rows(keys))
        self.assertEqual(sorted(r["point"] for j in jobs if j.result is None for r in j.rows),
                         sorted(k for k, *_ in torch_memory.torch_points("llm")))


if __name__ == "__main__":
    unittest.main(verbosity=2)
