"""A bare torch.distributed loop over the collectives `envdoctor selftest collectives` runs: its baseline (under torchrun).

argv[1]: comma-separated NAME:SIZE:ITERS. For each: float32 zero buffers as nccl-tests sizes them (all_reduce and
broadcast S in place; all_gather S/n in, S out; reduce_scatter S in, S/n out; alltoall S in, S out; sendrecv S to the
next rank, S from the previous), 2 warm-up calls, a barrier, ITERS timed calls; busbw = S / time x nccl-tests' factor.
Rank 0 writes {name: {size: busbw GB/s}} to $BARE_OUT.
"""
import json
import os
import sys
import time

import torch
import torch.distributed as dist

FACTOR = {"all_reduce": lambda n: 2 * (n - 1) / n, "all_gather": lambda n: (n - 1) / n,
          "reduce_scatter": lambda n: (n - 1) / n, "alltoall": lambda n: (n - 1) / n,
          "broadcast": lambda n: 1.0, "sendrecv": lambda n: 1.0}


def one_call(name, size, rank, world):
    count = max(1, size // 4)
    if name in ("all_gather", "reduce_scatter", "alltoall"):
        count = max(1, count // world) * world
    chunk = count // world
    if name == "all_reduce":
        buf = torch.zeros(count)
        return count, lambda: dist.all_reduce(buf)
    if name == "broadcast":
        buf = torch.zeros(count)
        return count, lambda: dist.broadcast(buf, src=0)
    if name == "all_gather":
        inp, out = torch.zeros(chunk), torch.zeros(count)
        return count, lambda: dist.all_gather_into_tensor(out, inp)
    if name == "reduce_scatter":
        inp, out = torch.zeros(count), torch.zeros(chunk)
        return count, lambda: dist.reduce_scatter_tensor(out, inp)
    if name == "alltoall":
        inp, out = torch.zeros(count), torch.zeros(count)
        return count, lambda: dist.all_to_all_single(out, inp)
    send, recv = torch.zeros(count), torch.zeros(count)
    ops = [dist.P2POp(dist.isend, send, (rank + 1) % world), dist.P2POp(dist.irecv, recv, (rank - 1) % world)]

    def sendrecv():
        for req in dist.batch_isend_irecv(ops):
            req.wait()
    return count, sendrecv


def main() -> None:
    triples = [p.split(":") for p in sys.argv[1].split(",")]
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    out = {}
    for name, size, iters in triples:
        size, iters = int(size), int(iters)
        count, call = one_call(name, size, rank, world)
        for _ in range(2):
            call()
        dist.barrier()
        t0 = time.perf_counter()
        for _ in range(iters):
            call()
        elapsed = torch.tensor([(time.perf_counter() - t0) / iters], dtype=torch.float64)
        dist.all_reduce(elapsed, op=dist.ReduceOp.MAX)  # as envdoctor: the slowest rank's time
        out.setdefault(name, {})[str(size)] = count * 4 / float(elapsed) / 1e9 * FACTOR[name](world)
    if rank == 0:
        with open(os.environ["BARE_OUT"], "w") as fh:
            json.dump(out, fh)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
