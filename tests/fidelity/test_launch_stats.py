#!/usr/bin/env python3
"""The launch-level statistics of tests/perf (launch_stats.py, compare_osu_table.py,
compare_stream_table.py) on synthetic and recorded launch figures, and the comparison scripts
skipping cleanly without OSU or stream.c. The launch figures of the allreduce case are the
states recorded on the 2-core development VM (1 MiB allreduce: gpucal 180-225 or 420-505 us,
OSU 227-258 or 506-521 us per launch)."""
import os
import subprocess
import sys
import tempfile
import unittest

PERF = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "perf")
sys.path.insert(0, PERF)
import launch_stats  # noqa: E402

GPUCAL_FAST = [180, 195, 205, 225, 190, 210]
GPUCAL_SLOW = [420, 505, 460, 470]
OSU_FAST = [227, 240, 258, 245]
OSU_SLOW = [506, 521, 510, 515, 512, 518]


class LaunchStats(unittest.TestCase):
    def test_one_state_is_one_mode(self):
        s = launch_stats.summary([200, 202, 199, 205, 201, 198, 203, 240])  # one slow launch of 8
        self.assertEqual(len(s["modes"]), 1)
        self.assertNotIn("bimodal", launch_stats.describe(s))

    def test_two_states_are_both_named(self):
        s = launch_stats.summary(GPUCAL_FAST + GPUCAL_SLOW)
        (fast, fast_share), (slow, slow_share) = s["modes"]
        self.assertEqual((fast, slow), (200.0, 465.0))
        self.assertAlmostEqual(fast_share, 0.6)
        self.assertAlmostEqual(slow_share, 0.4)
        self.assertIn("bimodal: 200 us (60%) and 465 us (40%)", launch_stats.describe(s))

    def test_state_matched_ratio_does_not_depend_on_the_mix(self):
        # gpucal hit the fast state in 6 of 10 launches, OSU in 4 of 10: the medians compare
        # a fast gpucal with a slow OSU, the state-matched ratio fast with fast.
        c = launch_stats.compare(GPUCAL_FAST + GPUCAL_SLOW, OSU_FAST + OSU_SLOW)
        self.assertAlmostEqual(c["state_ratio"], 200.0 / 242.5)
        self.assertLess(c["median_ratio"], 0.5)
        swapped = launch_stats.compare(GPUCAL_FAST[:2] + GPUCAL_SLOW * 2, OSU_FAST * 2 + OSU_SLOW[:2])
        self.assertAlmostEqual(swapped["state_ratio"], 187.5 / 242.5)
        self.assertGreater(swapped["median_ratio"], 1.5)

    def test_quantile_is_linear_interpolation(self):
        self.assertEqual(launch_stats.quantile([1, 2, 3, 4, 5], 0.1), 1.4)


def write(path, text):
    with open(path, "w") as f:
        f.write(text)


class Tables(unittest.TestCase):
    def test_osu_table_on_recorded_launch_states(self):
        work = tempfile.mkdtemp()
        header = ("schema_version,bench,point,status,time_us_mean,size_bytes\n")
        for i, (ours, theirs) in enumerate(zip(GPUCAL_FAST + GPUCAL_SLOW, OSU_FAST + OSU_SLOW)):
            r, l = i // 2 + 1, i % 2 + 1
            write(os.path.join(work, f"gpucal_allreduce_1048576_{r}_{l}.csv"),
                  header + f"2,collectives,p,ok,{ours},1048576\n")
            write(os.path.join(work, f"osu_allreduce_1048576_{r}_{l}.txt"),
                  f"# OSU MPI Allreduce Latency Test\n# Size       Avg Latency(us)\n1048576 {theirs}\n")
        out = subprocess.run([sys.executable, os.path.join(PERF, "compare_osu_table.py"), work, "avg"],
                             capture_output=True, text=True)
        self.assertEqual(out.returncode, 1, out.stdout)  # 0.825 state-matched: the target is missed
        self.assertIn("  1048576     217.50     508.00   0.428   0.825", out.stdout)
        self.assertIn("gpucal: 217.5 us (p10 189, p90 473.5, 10 launches); bimodal: 200 us (60%) and 465 us (40%)",
                      out.stdout)
        self.assertIn("other: 508 us (p10 238.7, p90 518.3, 10 launches); bimodal: 242.5 us (40%) and 513.5 us (60%)",
                      out.stdout)
        self.assertIn("allreduce: state-matched ratio, median over sizes 0.825", out.stdout)

    def test_stream_table(self):
        work = tempfile.mkdtemp()
        for l, (avg, mn) in enumerate([(0.0100, 0.0090), (0.0102, 0.0091), (0.0200, 0.0180), (0.0101, 0.0092)], 1):
            for variant in ("base", "v4"):
                write(os.path.join(work, f"stream_{variant}_1_{l}.txt"),
                      f"Function    Best Rate MB/s  Avg time     Min time     Max time\n"
                      f"Copy:       20000.0  {avg:.6f}  {mn:.6f}  {avg * 1.2:.6f}\n"
                      f"Triad:      20000.0  {avg * 1.5:.6f}  {mn * 1.5:.6f}  {avg * 2:.6f}\n")
            write(os.path.join(work, f"bench_1_{l}.csv"),
                  "kernel,status,time_us_median,time_us_min,suspect\n"
                  f"copy,ok,{avg * 1e6 * 0.98},{mn * 1e6},{'two states' if l == 3 else ''}\n"
                  f"triad,ok,{avg * 1.5e6},{mn * 1.5e6},\n")
            write(os.path.join(work, f"bench_1_{l}.samples.csv"), "point,sample,time_us,repetition\np,0,1,0\n")
        out = subprocess.run([sys.executable, os.path.join(PERF, "compare_stream_table.py"), work],
                             capture_output=True, text=True)
        self.assertEqual(out.returncode, 0, out.stdout + out.stderr)
        self.assertIn("our median vs STREAM's average: ratio of medians 0.980, state-matched 0.980", out.stdout)
        self.assertIn("best vs best (baseline ISA): ratio of medians 1.000, state-matched 1.000", out.stdout)
        self.assertIn("bench_memory rows flagged suspect (preempted): 1 of 4; first: two states", out.stdout)

    def test_scripts_skip_without_their_reference_tools(self):
        empty = tempfile.mkdtemp()
        osu = subprocess.run(["bash", os.path.join(PERF, "compare_osu.sh"), "--skip-gemm", "--build", empty,
                              "--work", empty], capture_output=True, text=True)
        self.assertEqual(osu.returncode, 77, osu.stdout + osu.stderr)
        self.assertIn("OSU comparison skipped: no OSU folder", osu.stdout)
        missing = subprocess.run(["bash", os.path.join(PERF, "compare_osu.sh"), "--osu", empty, "--skip-gemm",
                                  "--build", empty, "--work", empty], capture_output=True, text=True)
        self.assertEqual(missing.returncode, 77)
        self.assertIn("osu_allreduce not found under", missing.stdout)
        stream = subprocess.run(["bash", os.path.join(PERF, "compare_stream.sh"), os.path.join(empty, "stream.c"),
                                 empty], capture_output=True, text=True)
        self.assertEqual(stream.returncode, 77)
        self.assertIn("skipped: no stream.c at", stream.stdout)


if __name__ == "__main__":
    unittest.main()
