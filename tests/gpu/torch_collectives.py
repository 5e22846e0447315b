#!/usr/bin/env python3
"""PyTorch baseline for bench_collectives at one rank: torch.distributed with the NCCL
backend (world size 1) on the sizes, dtypes, ops and buffer placements of gpucal rows, back
to back as gpucal's hot regime times them. At one rank a collective moves (almost) nothing:
these rows are the latency floor of each stack, ours (ncclAllReduce... on our stream) and
PyTorch's (ProcessGroupNCCL's stream, events and bookkeeping).

  torch_collectives.py --out torch_collectives.csv --points-from collectives.csv [--quick]
                       [--time-budget S] [--max-time-per-point S]

Each gpucal row (status ok) gets one torch row with its `point`, measured with the same
placement (`in_place`, the point's ip/oop): at one rank NCCL copies send to receive buffer
out of place and does nothing in place, so the two are different work. In place, as
bench_collectives: allreduce, broadcast, reduce on one buffer; allgather's input is block
`rank` of its output (all_gather_into_tensor(y, y.narrow(0, rank * count, count)));
reduce_scatter's output is block `rank` of its input; alltoall sends and receives in one
buffer. Out of place: allgather, reduce_scatter, alltoall into a second buffer; PyTorch has
all_reduce, broadcast and reduce in place only, so their out-of-place rows are `skipped`
and compared on the in-place row of the same size (classify()). Rows of more than one rank,
of CUDA-graph timing, or of a dtype or reduction torch.distributed lacks are skipped with
the reason. Without --points-from: allreduce fp32 sum in place at 8 B, 1 MiB and 256 MiB.
"""
import os
import socket
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from torch_common import (BUDGET_SPENT, Budget, RowWriter, Timer, base_args, group_jobs, interleave,  # noqa: E402
                          ok_rows, run_jobs, unique_points, write_sidecar)

OPS = {"allreduce": "all_reduce", "allgather": "all_gather_into_tensor", "reduce_scatter": "reduce_scatter_tensor",
       "broadcast": "broadcast", "reduce": "reduce", "alltoall": "all_to_all_single"}
IN_PLACE_ONLY = ("allreduce", "broadcast", "reduce")  # torch.distributed writes into its input
DTYPES = ("fp32", "fp16", "bf16", "fp64", "int32")
REDUCTIONS = ("sum", "max", "min", "avg")
ELEMENT_BYTES = {"fp32": 4, "fp16": 2, "bf16": 2, "fp64": 8, "int32": 4}


def default_rows():
    return [{"point": f"torch-default/allreduce/fp32/sum/n1/ip/{s}/hot", "collective": "allreduce", "dtype": "fp32",
             "op": "sum", "in_place": "1", "size_bytes": str(s), "nranks": "1", "regime": "hot"}
            for s in (8, 1 << 20, 256 << 20)]


def is_in_place(r):
    return str(r.get("in_place", "0")).strip().lower() in ("1", "true")


def skipped(collective, why):
    return {"torch_op": f"torch.distributed.{OPS.get(collective, collective)}", "status": "skipped", "detail": why}


def classify(r):
    """(measurement key, None) for a row PyTorch can repeat, or (key, skipped result) with
    the reason it cannot. key: (collective, dtype, op, size_bytes, regime, in_place, root)."""
    c, dtype, op = r["collective"], r["dtype"], r.get("op") or ""
    in_place = is_in_place(r)
    key = (c, dtype, op, int(r["size_bytes"]), r.get("regime") or "hot", in_place, int(r.get("root") or 0))
    if c not in OPS:
        return key, skipped(c, f"torch.distributed has no {c}")
    if str(r.get("nranks", "1")) != "1":
        return key, skipped(c, f"the baseline runs at one rank; this row has {r.get('nranks')}")
    if str(r.get("graph") or "0") not in ("0", "false"):
        return key, skipped(c, "CUDA-graph replay; the baseline times eager calls")
    if dtype not in DTYPES:
        return key, skipped(c, f"no torch.distributed {c} of {dtype}")
    if op and op not in REDUCTIONS:
        return key, skipped(c, f"no torch.distributed reduction '{op}'")
    if not in_place and c in IN_PLACE_ONLY:
        twin = r["point"].replace("/oop/", "/ip/")
        return key, skipped(c, f"torch.distributed.{OPS[c]} works in place only: compared on the in-place row {twin}")
    return key, None


def plan_jobs(rows):
    """Jobs in measurement order: one per point (classify()), interleaved across collectives
    and placements so that a run cut by its budget loses the largest sizes of each."""
    return interleave(group_jobs(unique_points(rows), classify), lambda job: (job.key[0], job.key[5]))


def operands(torch, collective, in_place, size_bytes, dtype, world=1, rank=0, device="cuda"):
    """(input, output) of one call, laid out as bench_collectives lays out its buffers for
    the row: size_bytes is its total (allgather: output, reduce_scatter: input), each rank's
    block size_bytes / world."""
    t = getattr(torch, {"fp32": "float32", "fp16": "float16", "bf16": "bfloat16", "fp64": "float64",
                        "int32": "int32"}[dtype])
    total = size_bytes // ELEMENT_BYTES[dtype]
    block = total // world
    buf = torch.ones(total, dtype=t, device=device)
    if collective == "allgather":
        return (buf.narrow(0, rank * block, block) if in_place else torch.ones(block, dtype=t, device=device)), buf
    if collective == "reduce_scatter":
        return buf, (buf.narrow(0, rank * block, block) if in_place else torch.empty(block, dtype=t, device=device))
    if in_place or collective in IN_PLACE_ONLY:
        return buf, buf
    return buf, torch.empty_like(buf)  # alltoall out of place


def main(argv=None):
    a = base_args(__doc__.split("\n")[1]).parse_args(argv)
    budget = Budget(a.time_budget)  # the import and NCCL's start count
    import torch  # noqa: PLC0415
    import torch.distributed as dist  # noqa: PLC0415

    jobs = plan_jobs(ok_rows(a.points_from, "collectives") if a.points_from else default_rows())
    torch.cuda.set_device(0)
    dist.init_process_group("nccl", init_method=f"tcp://127.0.0.1:{free_port()}", rank=0, world_size=1,
                            device_id=torch.device("cuda", 0))
    timer = Timer(torch, a.quick, max_time_s=a.max_time_per_point)
    out = RowWriter(a.out, ["collective", "dtype", "op", "in_place", "size_bytes", "regime"])

    def write(r, result):
        c, dtype, op, size, regime, in_place, _ = classify(r)[0]
        out.write({"bench": "collectives", "point": r["point"], "collective": c, "dtype": dtype, "op": op,
                   "in_place": int(in_place), "size_bytes": size, "regime": regime, **result})

    try:
        measured, spent = run_jobs(jobs, lambda key: measure(torch, dist, timer, *key), write, budget)
    finally:
        out.close()
        write_sidecar(a.out, "collectives", torch, {"process_group": "nccl, world size 1",
                                                    "nccl_version": ".".join(map(str, torch.cuda.nccl.version())),
                                                    "max_time_per_point_s": timer.max_time_s})
        dist.destroy_process_group()
    print(f"torch_collectives: {out.rows} rows, {measured} measured, {spent} skipped ({BUDGET_SPENT}) -> {a.out}")
    return 0


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def measure(torch, dist, timer, collective, dtype, op, size, regime, in_place, root):
    name = f"torch.distributed.{OPS[collective]}"
    red = {"sum": dist.ReduceOp.SUM, "max": dist.ReduceOp.MAX, "min": dist.ReduceOp.MIN,
           "avg": dist.ReduceOp.AVG}[op or "sum"]
    try:
        x, y = operands(torch, collective, in_place, size, dtype, dist.get_world_size(), dist.get_rank())
        calls = {
            "allreduce": lambda: dist.all_reduce(x, op=red),
            "allgather": lambda: dist.all_gather_into_tensor(y, x),
            "reduce_scatter": lambda: dist.reduce_scatter_tensor(y, x, op=red),
            "broadcast": lambda: dist.broadcast(x, src=root),
            "reduce": lambda: dist.reduce(x, dst=root, op=red),
            "alltoall": lambda: dist.all_to_all_single(y, x),
        }
        stats = timer.measure(calls[collective], regime)
        return {"torch_op": name, "status": "ok", "detail": "in place" if in_place else "out of place", **stats}
    except (RuntimeError, ValueError) as e:
        return {"torch_op": name, "status": "skipped", "detail": str(e).splitlines()[0][:200]}


if __name__ == "__main__":
    sys.exit(main())
