"""One rank of `envdoctor selftest collectives`, started by torch.distributed.run (torchrun).

For each collective (all_reduce, all_gather, reduce_scatter, alltoall, broadcast, sendrecv) and each message size:
(1) the collective on a rank-dependent integer pattern (float32, every value and every partial sum below 2**24,
so exact whatever the reduction order) and every element of the result compared with the one it must be;
(2) algbw and busbw as nccl-tests defines them (doc/PERFORMANCE.md). The size S is the buffer nccl-tests' size
column counts: all_reduce S in and out; all_gather S out (S/n in per rank); reduce_scatter S in (S/n out);
alltoall S in and S out per rank (S/n to each peer); broadcast S from rank 0; sendrecv S to the next rank while S
arrives from the previous one. algbw = S / time; busbw = algbw x BUSBW_FACTOR. Timings are the max over ranks, so
every rank (and every node) reports the same figures. Every rank writes OUT/rank<R>.json.
Target interpreter, Python 3.8+; imports torch, never envdoctor.
"""
import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _common import Fault, Progress, error_text, exit_now, join_group, sync, watch_parent, write_json

GB = 1e9
COLLECTIVES = ("all_reduce", "all_gather", "reduce_scatter", "alltoall", "broadcast", "sendrecv")
CHUNKED = ("all_gather", "reduce_scatter", "alltoall")  # S is n chunks of S/n
# nccl-tests' busbw = algbw x factor(n); envdoctor/selftest/collectives.py holds the same table (a test compares them)
BUSBW_FACTOR = {
    "all_reduce": lambda n: 2.0 * (n - 1) / n,
    "all_gather": lambda n: (n - 1) / float(n),
    "reduce_scatter": lambda n: (n - 1) / float(n),
    "alltoall": lambda n: (n - 1) / float(n),
    "broadcast": lambda n: 1.0,
    "sendrecv": lambda n: 1.0,
}
# testing hook: "COLLECTIVE:RANK:ELEMENT" makes that rank see a wrong value at that element of that collective's
# result (at every size that has the element), so the exact check must catch it
CORRUPT_ENV = "ENVDOCTOR_SELFTEST_CORRUPT"
PERIOD = 251  # the pattern: (i % PERIOD) + 1 + 256 * (rank % 64), below 2**24 summed over 256 ranks


def parse_args(argv):
    p = argparse.ArgumentParser()
    p.add_argument("--out", required=True)
    p.add_argument("--backend", required=True, choices=["nccl", "gloo"])
    p.add_argument("--sizes", required=True, help="comma-separated message sizes in bytes")
    p.add_argument("--collectives", default=",".join(COLLECTIVES))
    p.add_argument("--iters", type=int, default=0, help="timed iterations per size (0: from --seconds-per-size)")
    p.add_argument("--warmup", type=int, default=2)
    p.add_argument("--seconds-per-size", type=float, default=0.25)
    p.add_argument("--max-iters", type=int, default=200)
    p.add_argument("--pg-timeout", type=float, default=60.0)
    return p.parse_args(argv)


def element_count(name, nbytes, world):
    """float32 elements of the buffer S counts: at least one, a multiple of the ranks for the chunked collectives."""
    count = max(1, nbytes // 4)
    if name in CHUNKED:
        count = max(1, count // world) * world
    return count


def pattern(torch, rank, index):
    """The value rank `rank` puts at each position of `index` (an int64 tensor): exact in float32."""
    return (index % PERIOD + 1 + 256 * (rank % 64)).to(torch.float32)


def rank_sum(torch, world, index):
    """sum over ranks of pattern(rank, index), computed exactly in int64."""
    offsets = 256 * sum(r % 64 for r in range(world))
    return (world * (index % PERIOD + 1) + offsets).to(torch.float32)


def inputs(torch, name, rank, world, count, device):
    """The send buffer(s) rank `rank` fills for the exact check."""
    if name == "all_gather":
        c = count // world
        return pattern(torch, rank, torch.arange(c, device=device, dtype=torch.int64))
    if name == "broadcast" and rank != 0:
        return torch.full((count,), -1.0, device=device)
    return pattern(torch, rank, torch.arange(count, device=device, dtype=torch.int64))


def expected(torch, name, rank, world, count, device):
    """Every element of the result rank `rank` must end with."""
    idx = torch.arange(count, device=device, dtype=torch.int64)
    if name == "all_reduce":
        return rank_sum(torch, world, idx)
    if name == "all_gather":  # out[s*c + j] = pattern(s, j)
        c = count // world
        return torch.cat([pattern(torch, s, idx[:c]) for s in range(world)])
    if name == "reduce_scatter":  # out[j] = sum_s pattern(s, r*c + j)
        c = count // world
        return rank_sum(torch, world, idx[rank * c:(rank + 1) * c])
    if name == "alltoall":  # out[s*c + j] = in_s[r*c + j] = pattern(s, r*c + j)
        c = count // world
        mine = idx[rank * c:(rank + 1) * c]
        return torch.cat([pattern(torch, s, mine) for s in range(world)])
    if name == "broadcast":
        return pattern(torch, 0, idx)
    if name == "sendrecv":  # from the previous rank
        return pattern(torch, (rank - 1) % world, idx)
    raise ValueError("unknown collective %r" % name)


def compare(torch, got, want):
    """None when every element is equal, else (first wrong index, its value, the expected value, how many wrong)."""
    if got.shape == want.shape and bool(torch.equal(got, want)):
        return None
    if got.shape != want.shape:
        return (-1, None, None, max(got.numel(), want.numel()))
    wrong = (got != want).nonzero()
    first = int(wrong[0].item())
    return (first, float(got[first].item()), float(want[first].item()), int(wrong.shape[0]))


class Collective(object):
    """One collective at one size: its buffers and one call of it (`run()`), as the bare loop would call it."""

    def __init__(self, torch, dist, name, rank, world, count, device, send=None):
        self.dist, self.name, self.rank, self.world = dist, name, rank, world
        c = count // world
        if send is None:
            send = torch.zeros(c if name == "all_gather" else count, dtype=torch.float32, device=device)
        self.send = send
        if name in ("all_reduce", "broadcast"):
            self.recv = send  # in place
        elif name == "reduce_scatter":
            self.recv = torch.zeros(c, dtype=torch.float32, device=device)
        else:
            self.recv = torch.zeros(count, dtype=torch.float32, device=device)
        if name == "sendrecv":
            P2POp = dist.P2POp
            self.ops = [P2POp(dist.isend, self.send, (rank + 1) % world), P2POp(dist.irecv, self.recv, (rank - 1) % world)]

    def run(self):
        dist, name = self.dist, self.name
        if name == "all_reduce":
            dist.all_reduce(self.send)
        elif name == "all_gather":
            dist.all_gather_into_tensor(self.recv, self.send)
        elif name == "reduce_scatter":
            dist.reduce_scatter_tensor(self.recv, self.send)
        elif name == "alltoall":
            dist.all_to_all_single(self.recv, self.send)
        elif name == "broadcast":
            dist.broadcast(self.send, src=0)
        else:
            for req in dist.batch_isend_irecv(self.ops):
                req.wait()


class Rank(object):
    def __init__(self, torch, dist, args):
        self.torch = torch
        self.dist = dist
        self.args = args
        self.rank = int(os.environ["RANK"])
        self.world = int(os.environ["WORLD_SIZE"])
        self.local_rank = int(os.environ.get("LOCAL_RANK", "0"))
        if args.backend == "nccl":
            torch.cuda.set_device(self.local_rank)
            self.device = torch.device("cuda", self.local_rank)
        else:
            self.device = torch.device("cpu")
        self.fault = Fault.from_env()
        self.corrupt = parse_corrupt(os.environ.get(CORRUPT_ENV, ""))
        self.iteration = 0
        self.progress = Progress(os.path.join(args.out, "progress.log"), enabled=self.rank == 0)

    def tick(self):
        self.fault.point(self.rank, self.iteration)
        self.iteration += 1

    def max_over_ranks(self, value):
        t = self.torch.tensor([float(value)], dtype=self.torch.float64, device=self.device)
        self.dist.all_reduce(t, op=self.dist.ReduceOp.MAX)
        return float(t.item())

    def all_true(self, flag):
        t = self.torch.tensor([0 if flag else 1], dtype=self.torch.int32, device=self.device)
        self.dist.all_reduce(t, op=self.dist.ReduceOp.SUM)
        return int(t.item()) == 0

    # (1) exact results, every element
    def check_exact(self, name, count):
        torch = self.torch
        op = Collective(torch, self.dist, name, self.rank, self.world, count, self.device,
                        send=inputs(torch, name, self.rank, self.world, count, self.device))
        self.tick()
        op.run()
        sync(torch, self.device)
        got = op.recv
        if self.corrupt and self.corrupt[0] == name and self.corrupt[1] == self.rank and self.corrupt[2] < got.numel():
            got = got.clone()
            got[self.corrupt[2]] += 1.0
        return compare(torch, got, expected(torch, name, self.rank, self.world, count, self.device))

    # (2) bandwidth, nccl-tests style
    def bandwidth(self, name, count):
        torch, dist = self.torch, self.dist
        op = Collective(torch, dist, name, self.rank, self.world, count, self.device)
        sync(torch, self.device)
        t0 = time.perf_counter()
        for _ in range(max(1, self.args.warmup)):
            self.tick()
            op.run()
        sync(torch, self.device)
        per_iter = self.max_over_ranks((time.perf_counter() - t0) / max(1, self.args.warmup))
        iters = self.args.iters
        if iters <= 0:
            iters = int(min(self.args.max_iters, max(3, self.args.seconds_per_size / max(per_iter, 1e-9))))
        dist.barrier()
        sync(torch, self.device)
        t0 = time.perf_counter()
        for _ in range(iters):
            self.tick()
            op.run()
        sync(torch, self.device)
        elapsed = self.max_over_ranks((time.perf_counter() - t0) / iters)
        nbytes = count * 4
        algbw = nbytes / elapsed / GB
        busbw = algbw * BUSBW_FACTOR[name](self.world)
        return {"bytes": nbytes, "iters": iters, "seconds": elapsed, "algbw_gbps": algbw, "busbw_gbps": busbw}


def parse_corrupt(spec):
    if not spec:
        return None
    name, rank, element = (spec.split(":") + ["0", "0"])[:3]
    if name not in COLLECTIVES:
        raise ValueError("%s must be COLLECTIVE:RANK:ELEMENT, not %r" % (CORRUPT_ENV, spec))
    return name, int(rank), int(element)


def wrong_text(name, nbytes, bad):
    first, got, want, n = bad
    if first < 0:
        return "%s of %d bytes: the result has the wrong shape" % (name, nbytes)
    return ("%s of %d bytes gave a wrong result: element %d is %g, expected %g (%d element(s) wrong)"
            % (name, nbytes, first, got, want, n))


def main(argv=None):
    args = parse_args(argv)
    watch_parent()
    rank_id = os.environ.get("RANK", "0")
    out_path = os.path.join(args.out, "rank%s.json" % rank_id)
    result = {"rank": int(rank_id), "ok": False, "errors": [], "collectives": {}}
    try:
        import torch
        import torch.distributed as dist

        r = join_group(torch, dist, args, Rank(torch, dist, args), result)
        sizes = [int(s) for s in args.sizes.split(",") if s]
        names = [n for n in args.collectives.split(",") if n]
        errors = result["errors"]
        for name in names:
            entry = result["collectives"].setdefault(name, {"sizes": {}})
            if name == "sendrecv" and r.world < 2:
                entry["skipped"] = "sendrecv needs 2 ranks"
                r.progress("%-14s skipped: needs 2 ranks" % name)
                continue
            for nbytes in sizes:
                count = element_count(name, nbytes, r.world)
                bad = r.check_exact(name, count)
                if bad is not None:
                    errors.append(wrong_text(name, nbytes, bad))
                m = r.bandwidth(name, count)
                m["correct"] = bad is None
                entry["sizes"][str(nbytes)] = m
                r.progress("%-14s %10d B %5d iters  algbw %8.3f  busbw %8.3f GB/s  %s"
                           % (name, nbytes, m["iters"], m["algbw_gbps"], m["busbw_gbps"], "ok" if bad is None else "WRONG"))
        # every rank learns whether any rank saw a problem, so all report the same verdict
        result["all_ranks_ok"] = r.all_true(not errors)
        result["ok"] = not errors and result["all_ranks_ok"]
        dist.destroy_process_group()
    except BaseException as exc:  # the verdict must reach envdoctor whatever happened
        result["errors"].append(error_text(exc))
        write_json(out_path, result)
        sys.stderr.write(error_text(exc) + "\n")
        return 1
    write_json(out_path, result)
    return 0 if result["ok"] else 1


if __name__ == "__main__":
    exit_now(main())
