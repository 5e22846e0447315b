#!/usr/bin/env python3
"""PyTorch baseline for bench_collectives at one rank: torch.distributed with the NCCL
backend (world size 1) on the sizes, dtypes and ops of gpucal rows, back to back as
gpucal's hot regime times them. At one rank a collective moves (almost) nothing: these
rows are the latency floor of each stack, ours (ncclAllReduce... on our stream) and
PyTorch's (ProcessGroupNCCL's stream, events and bookkeeping).

  torch_collectives.py --out torch_collectives.csv --points-from collectives.csv [--quick]

Each gpucal row (status ok, nranks 1) gets one torch row with its `point`. Without
--points-from: allreduce fp32 sum at 8 B, 1 MiB and 256 MiB.
"""
import os
import socket
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from torch_common import Budget, RowWriter, Timer, base_args, ok_rows, write_sidecar  # noqa: E402

OPS = {"allreduce": "all_reduce", "allgather": "all_gather_into_tensor", "reduce_scatter": "reduce_scatter_tensor",
       "broadcast": "broadcast", "reduce": "reduce", "alltoall": "all_to_all_single"}


def default_rows():
    return [{"point": f"torch-default/allreduce/fp32/sum/{s}", "collective": "allreduce", "dtype": "fp32", "op": "sum",
             "size_bytes": str(s), "nranks": "1", "regime": "hot"} for s in (8, 1 << 20, 256 << 20)]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main(argv=None):
    a = base_args(__doc__.split("\n")[1]).parse_args(argv)
    import torch  # noqa: PLC0415
    import torch.distributed as dist  # noqa: PLC0415

    rows = ok_rows(a.points_from, "collectives") if a.points_from else default_rows()
    rows = [r for r in rows if r.get("nranks", "1") == "1"]
    torch.cuda.set_device(0)
    dist.init_process_group("nccl", init_method=f"tcp://127.0.0.1:{free_port()}", rank=0, world_size=1,
                            device_id=torch.device("cuda", 0))
    timer, budget = Timer(torch, a.quick), Budget(a.time_budget)
    out = RowWriter(a.out, ["collective", "dtype", "op", "size_bytes", "regime"])
    done = {}
    try:
        for r in rows:
            key = (r["collective"], r["dtype"], r.get("op", ""), int(r["size_bytes"]), r.get("regime", "hot"))
            if key not in done:
                if budget.expired():
                    print(f"time budget spent: {r['point']} and later points not measured")
                    break
                done[key] = measure(torch, dist, timer, *key)
            out.write({"bench": "collectives", "point": r["point"], "collective": key[0], "dtype": key[1],
                       "op": key[2], "size_bytes": key[3], "regime": key[4], **done[key]})
    finally:
        out.close()
        write_sidecar(a.out, "collectives", torch, {"process_group": "nccl, world size 1",
                                                    "nccl_version": ".".join(map(str, torch.cuda.nccl.version()))})
        dist.destroy_process_group()
    print(f"torch_collectives: {out.rows} rows -> {a.out}")
    return 0


def measure(torch, dist, timer, collective, dtype, op, size, regime):
    types = {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16, "fp64": torch.float64,
             "int32": torch.int32}
    name = f"torch.distributed.{OPS.get(collective, collective)}"
    if dtype not in types or collective not in OPS:
        return {"torch_op": name, "status": "skipped", "detail": f"no torch.distributed {collective} of {dtype}"}
    ops = {"sum": dist.ReduceOp.SUM, "max": dist.ReduceOp.MAX, "min": dist.ReduceOp.MIN, "avg": dist.ReduceOp.AVG}
    t = types[dtype]
    count = max(1, size // torch.tensor([], dtype=t).element_size())
    x = torch.ones(count, dtype=t, device="cuda")
    y = torch.empty_like(x)
    red = ops.get(op or "sum", dist.ReduceOp.SUM)
    calls = {
        "allreduce": lambda: dist.all_reduce(x, op=red),
        "allgather": lambda: dist.all_gather_into_tensor(y, x),
        "reduce_scatter": lambda: dist.reduce_scatter_tensor(y, x, op=red),
        "broadcast": lambda: dist.broadcast(x, src=0),
        "reduce": lambda: dist.reduce(x, dst=0, op=red),
        "alltoall": lambda: dist.all_to_all_single(y, x),
    }
    try:
        stats = timer.measure(calls[collective], regime)
        return {"torch_op": name, "status": "ok", "detail": "", **stats}
    except (RuntimeError, ValueError) as e:
        return {"torch_op": name, "status": "skipped", "detail": str(e).splitlines()[0][:200]}


if __name__ == "__main__":
    sys.exit(main())
