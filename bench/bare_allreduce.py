"""A bare torch.distributed all-reduce loop, the baseline for envdoctor's figures (run under torchrun).

For each SIZE:ITERS pair: a zero float32 buffer, 2 warm-up all-reduces, a barrier, ITERS timed all-reduces;
rank 0 prints one JSON object {size: busbw GB/s} (busbw = size / time * 2(n-1)/n, as nccl-tests).
"""
import json
import os
import sys
import time

import torch
import torch.distributed as dist


def main() -> None:
    pairs = [tuple(int(x) for x in p.split(":")) for p in sys.argv[1].split(",")]
    dist.init_process_group("gloo")
    world = dist.get_world_size()
    out = {}
    for size, iters in pairs:
        buf = torch.zeros(size // 4, dtype=torch.float32)
        for _ in range(2):
            dist.all_reduce(buf)
        dist.barrier()
        t0 = time.perf_counter()
        for _ in range(iters):
            dist.all_reduce(buf)
        elapsed = (time.perf_counter() - t0) / iters
        out[str(size)] = size / elapsed / 1e9 * 2 * (world - 1) / world
    if dist.get_rank() == 0:
        with open(os.environ["BARE_OUT"], "w") as fh:
            json.dump(out, fh)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
