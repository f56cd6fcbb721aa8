"""One rank of `envdoctor selftest allreduce`, started by torch.distributed.run (torchrun).

Each rank: (1) all-reduces rank-dependent values at every message size and checks the exact result,
(2) measures bus bandwidth per size as nccl-tests defines it, (3) runs one DDP step on a tiny model and
checks the gradients are identical on every rank and equal to the mean of the local gradients.
Every rank writes OUT/rank<R>.json; metrics are reduced (max time over ranks), so all ranks agree.
Target interpreter, Python 3.8+; imports torch, never envdoctor.
"""
import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _common import Fault, Progress, error_text, exit_now, join_group, rel_diff, sync, watch_parent, write_json

GB = 1e9


def parse_args(argv):
    p = argparse.ArgumentParser()
    p.add_argument("--out", required=True)
    p.add_argument("--backend", required=True, choices=["nccl", "gloo"])
    p.add_argument("--sizes", required=True, help="comma-separated message sizes in bytes")
    p.add_argument("--iters", type=int, default=0, help="timed iterations per size (0: from --seconds-per-size)")
    p.add_argument("--warmup", type=int, default=2)
    p.add_argument("--seconds-per-size", type=float, default=0.25)
    p.add_argument("--max-iters", type=int, default=200)
    p.add_argument("--pg-timeout", type=float, default=60.0)
    p.add_argument("--no-ddp", action="store_true")
    return p.parse_args(argv)


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

    # (1) exact results
    def check_exact(self, nbytes):
        torch = self.torch
        n = max(1, nbytes // 4)
        pattern = (torch.arange(n, device=self.device, dtype=torch.int64) % 13 + 1).to(torch.float32)
        x = pattern * float(self.rank + 1)
        self.tick()
        self.dist.all_reduce(x, op=self.dist.ReduceOp.SUM)
        expected = pattern * float(self.world * (self.world + 1) // 2)
        ok = bool(torch.equal(x, expected))
        bad = None if ok else int((x != expected).nonzero()[0].item())
        return ok, bad

    def check_ops(self):
        """Other reductions and dtypes, once: MAX in float32, SUM in int64 (and bfloat16 with NCCL)."""
        torch, dist, w, r = self.torch, self.dist, self.world, self.rank
        problems = []
        x = torch.full((1024,), float(r + 1), device=self.device)
        dist.all_reduce(x, op=dist.ReduceOp.MAX)
        if not bool((x == float(w)).all()):
            problems.append("MAX float32 gave %s, expected %s" % (x[0].item(), float(w)))
        y = torch.full((1024,), r + 1, dtype=torch.int64, device=self.device)
        dist.all_reduce(y)
        if not bool((y == w * (w + 1) // 2).all()):
            problems.append("SUM int64 gave %s, expected %s" % (y[0].item(), w * (w + 1) // 2))
        if self.args.backend == "nccl":
            z = torch.full((1024,), 1.0, dtype=torch.bfloat16, device=self.device)
            dist.all_reduce(z)
            if not bool((z.float() == float(w)).all()) and w <= 256:
                problems.append("SUM bfloat16 gave %s, expected %s" % (z[0].item(), float(w)))
        return problems

    # (2) bandwidth, nccl-tests style: algbw = bytes / time, busbw = algbw * 2(n-1)/n
    def bandwidth(self, nbytes):
        torch, dist = self.torch, self.dist
        buf = torch.zeros(max(1, nbytes // 4), dtype=torch.float32, device=self.device)
        sync(torch, self.device)
        t0 = time.perf_counter()
        for _ in range(max(1, self.args.warmup)):
            self.tick()
            dist.all_reduce(buf)
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
            dist.all_reduce(buf)
        sync(torch, self.device)
        elapsed = self.max_over_ranks((time.perf_counter() - t0) / iters)
        algbw = nbytes / elapsed / GB
        busbw = algbw * 2.0 * (self.world - 1) / self.world
        return {"iters": iters, "seconds": elapsed, "algbw_gbps": algbw, "busbw_gbps": busbw}

    # (3) one DDP step
    def ddp_step(self):
        torch, dist = self.torch, self.dist
        from torch.nn.parallel import DistributedDataParallel as DDP

        def make():
            torch.manual_seed(1234)
            return torch.nn.Sequential(
                torch.nn.Linear(32, 64), torch.nn.Tanh(), torch.nn.Linear(64, 64), torch.nn.Tanh(), torch.nn.Linear(64, 8)
            ).to(self.device)

        gen = torch.Generator().manual_seed(100 + self.rank)
        x = torch.randn(16, 32, generator=gen).to(self.device)
        y = torch.randn(16, 8, generator=gen).to(self.device)
        local = make()
        torch.nn.functional.mse_loss(local(x), y).backward()
        expected = torch.cat([p.grad.reshape(-1) for p in local.parameters()])
        dist.all_reduce(expected)
        expected /= self.world

        model = make()
        ddp = DDP(model, device_ids=[self.local_rank] if self.device.type == "cuda" else None)
        opt = torch.optim.SGD(ddp.parameters(), lr=0.1)
        self.tick()
        torch.nn.functional.mse_loss(ddp(x), y).backward()
        grads = torch.cat([p.grad.reshape(-1) for p in model.parameters()])
        gathered = [torch.empty_like(grads) for _ in range(self.world)]
        dist.all_gather(gathered, grads)
        identical = all(bool(torch.equal(g, gathered[0])) for g in gathered)
        diff = rel_diff(torch, grads, expected)
        opt.step()
        params = torch.cat([p.detach().reshape(-1) for p in model.parameters()])
        gathered_p = [torch.empty_like(params) for _ in range(self.world)]
        dist.all_gather(gathered_p, params)
        params_identical = all(bool(torch.equal(q, gathered_p[0])) for q in gathered_p)
        return {
            "grads_identical": identical,
            "params_identical_after_step": params_identical,
            "max_rel_grad_diff": self.max_over_ranks(diff),
            "parameters": int(grads.numel()),
        }


def main(argv=None):
    args = parse_args(argv)
    watch_parent()
    rank_id = os.environ.get("RANK", "0")
    out_path = os.path.join(args.out, "rank%s.json" % rank_id)
    result = {"rank": int(rank_id), "ok": False, "errors": [], "sizes": {}}
    try:
        import torch
        import torch.distributed as dist

        r = join_group(torch, dist, args, Rank(torch, dist, args), result)
        sizes = [int(s) for s in args.sizes.split(",") if s]
        errors = result["errors"]
        errors.extend(r.check_ops())
        for nbytes in sizes:
            ok, bad = r.check_exact(nbytes)
            if not ok:
                errors.append("all_reduce of %d bytes gave a wrong sum (first wrong element %d)" % (nbytes, bad))
            m = r.bandwidth(nbytes)
            m["correct"] = ok
            result["sizes"][str(nbytes)] = m
            r.progress("%10d B  %4d iters  busbw %8.3f GB/s  %s" % (nbytes, m["iters"], m["busbw_gbps"], "ok" if ok else "WRONG"))
        if not args.no_ddp:
            ddp = r.ddp_step()
            result["ddp"] = ddp
            if not ddp["grads_identical"]:
                errors.append("DDP gradients differ between ranks")
            if not ddp["params_identical_after_step"]:
                errors.append("parameters differ between ranks after an optimizer step")
            if ddp["max_rel_grad_diff"] > 1e-5:
                errors.append("DDP gradients differ from the mean of the local gradients by %.3g (relative)"
                              % ddp["max_rel_grad_diff"])
            r.progress("DDP step: gradients %s on every rank" % ("identical" if ddp["grads_identical"] else "DIFFERENT"))
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
