#!/usr/bin/env python3
"""PyTorch baseline for bench_p2p's copy pattern: Tensor.copy_ of the same sizes, device to
device, host to device and device to host (pinned or pageable host memory, as the gpucal
row says), in the same regime.

  torch_p2p.py --out torch_p2p.csv --points-from p2p_copy.csv [--quick] [--time-budget S]

Each gpucal copy row (status ok; d2d, h2d, d2h; either engine) gets one torch row with its
`point`; rows of the same direction, memory and size share one measurement. Without
--points-from: d2d, h2d and d2h (pinned) at 64 MiB and 1 GiB.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from torch_common import Budget, RowWriter, Timer, base_args, ok_rows, write_sidecar  # noqa: E402


def default_rows():
    rows = []
    for direction in ("d2d", "h2d", "d2h"):
        memory = "device" if direction == "d2d" else "pinned"
        for size in (64 << 20, 1 << 30):
            rows.append({"point": f"torch-default/{direction}/{memory}/{size}", "pattern": "copy",
                         "direction": direction, "memory": memory, "size_bytes": str(size), "regime": "hot"})
    return rows


def main(argv=None):
    a = base_args(__doc__.split("\n")[1]).parse_args(argv)
    import torch  # noqa: PLC0415

    rows = ok_rows(a.points_from, "p2p") if a.points_from else default_rows()
    rows = [r for r in rows if r.get("pattern") == "copy" and r.get("direction") in ("d2d", "h2d", "d2h")]
    timer, budget = Timer(torch, a.quick, max_time_s=a.max_time_per_point), Budget(a.time_budget)
    out = RowWriter(a.out, ["direction", "memory", "size_bytes", "regime", "bandwidth_gbps"])
    done = {}
    for r in rows:
        key = (r["direction"], r["memory"], int(r["size_bytes"]), r.get("regime", "hot"))
        if key not in done:
            if budget.expired():
                print(f"time budget spent: {r['point']} and later points not measured")
                break
            done[key] = measure(torch, timer, *key)
        result = dict(done[key])
        if result.get("time_us_median"):
            result["bandwidth_gbps"] = key[2] / result["time_us_median"] / 1e3
        out.write({"bench": "p2p", "point": r["point"], "direction": key[0], "memory": key[1], "size_bytes": key[2],
                   "regime": key[3], **result})
    out.close()
    write_sidecar(a.out, "p2p", torch, {"bandwidth": "size_bytes / time (bytes moved once, as torch users count)"})
    print(f"torch_p2p: {out.rows} rows, {len(done)} copies measured -> {a.out}")
    return 0


def measure(torch, timer, direction, memory, size, regime):
    try:
        pinned = memory == "pinned"
        on_host = torch.empty(size, dtype=torch.uint8, pin_memory=pinned) if direction != "d2d" else None
        src = torch.empty(size, dtype=torch.uint8, device="cuda") if direction != "h2d" else on_host
        dst = torch.empty(size, dtype=torch.uint8, device="cuda") if direction != "d2h" else on_host
        if direction == "h2d":
            src.fill_(7)
        else:
            src.random_(0, 256)

        def fn():
            dst.copy_(src, non_blocking=pinned or direction == "d2d")

        stats = timer.measure(fn, regime)
        return {"torch_op": "Tensor.copy_", "status": "ok", "detail": "", **stats}
    except RuntimeError as e:
        return {"torch_op": "Tensor.copy_", "status": "skipped", "detail": str(e).splitlines()[0][:200]}
    finally:
        torch.cuda.empty_cache()


if __name__ == "__main__":
    sys.exit(main())
