"""`envdoctor selftest compile`: torch.compile of a small model matches eager, forward and backward.

Reports the compile time (first compiled call minus an eager call) and the steady-state times. A missing
C/C++ compiler, Triton or Python headers is classified (`error_kind`) so envdoctor can say what to install.
Target interpreter, Python 3.8+; imports torch, never envdoctor.
"""
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _common import error_text, exit_now, median, rel_diff, sync, worker_main

TOLERANCE = 1e-4  # normwise relative, fp32: Inductor fuses and reorders reductions


def add_arguments(p):
    p.add_argument("--device", default="auto")
    p.add_argument("--backend", default="inductor")
    p.add_argument("--repeats", type=int, default=5)


def classify(text):
    """What kind of toolchain problem an exception's text shows (None: not a toolchain problem)."""
    low = text.lower()
    if "triton" in low and ("no module named" in low or "cannot find" in low or "not installed" in low
                            or "missing" in low or "tritonmissing" in low or "requires triton" in low):
        return "triton_missing"
    if "python.h" in low:
        return "python_headers_missing"
    for needle in ("invalidcxxcompiler", "no working c++ compiler", "c++ compiler", "cxx compiler", "cc1plus",
                   "failed to find c compiler", "no such file or directory: 'g++'", "no such file or directory: 'gcc'",
                   "no such file or directory: 'cc'", "no such file or directory: 'clang", "compiler not found",
                   "cppcompileerror", "c compiler"):
        if needle in low:
            return "c_compiler_missing"
    return None


def _cache_hits(torch):
    """Inductor's on-disk FX graph cache hits: a warm cache makes the compile time look small."""
    try:
        from torch._dynamo.utils import counters

        return int(counters["inductor"]["fxgraph_cache_hit"])
    except Exception:
        return None


def build(torch):
    nn = torch.nn

    class Small(nn.Module):
        def __init__(self):
            super().__init__()
            self.inp = nn.Linear(64, 128)
            self.norm = nn.LayerNorm(128)
            self.mlp = nn.Sequential(nn.Linear(128, 256), nn.GELU(), nn.Linear(256, 128))
            self.out = nn.Linear(128, 16)

        def forward(self, x):
            h = self.norm(self.inp(x))
            h = h + self.mlp(h)
            return self.out(torch.tanh(h)).softmax(-1)

    torch.manual_seed(0)
    return Small()


def run(torch, args, result, progress):
    if not hasattr(torch, "compile"):
        result.update(skipped=True, error="torch %s has no torch.compile (needs 2.0 or newer)" % torch.__version__)
        return
    device = torch.device("cuda" if args.device == "auto" and torch.cuda.is_available() else
                          ("cpu" if args.device == "auto" else args.device))
    if device.type == "cuda":
        torch.backends.cuda.matmul.allow_tf32 = False
    result["device"] = str(device)
    result["backend"] = args.backend
    model = build(torch).to(device)
    x = torch.randn(32, 64, generator=torch.Generator().manual_seed(1)).to(device)

    def step(fn):
        model.zero_grad(set_to_none=True)
        out = fn(x)
        out.pow(2).sum().backward()
        return out.detach(), [p.grad.detach().clone() for p in model.parameters()]

    sync(torch, device)
    t0 = time.perf_counter()
    ref_out, ref_grads = step(model)
    sync(torch, device)
    eager_first = time.perf_counter() - t0
    compiled = torch.compile(model, backend=args.backend)
    progress("compiling (%s on %s)" % (args.backend, device))
    t0 = time.perf_counter()
    try:
        out, grads = step(compiled)
        sync(torch, device)
    except Exception as exc:
        text = error_text(exc, 20)
        result.update(error=text, error_kind=classify(text) or "compile_error")
        return
    compile_seconds = time.perf_counter() - t0 - eager_first
    out_diff = rel_diff(torch, out, ref_out)
    grad_diff = max(rel_diff(torch, g, r) for g, r in zip(grads, ref_grads))
    times = {"eager": [], "compiled": []}
    for _ in range(args.repeats):
        for name, fn in (("eager", model), ("compiled", compiled)):
            sync(torch, device)
            t0 = time.perf_counter()
            step(fn)
            sync(torch, device)
            times[name].append(time.perf_counter() - t0)
    result.update(
        compile_seconds=max(0.0, compile_seconds),
        cache_hits=_cache_hits(torch),
        eager_step_seconds=median(times["eager"]),
        compiled_step_seconds=median(times["compiled"]),
        max_rel_out_diff=out_diff,
        max_rel_grad_diff=grad_diff,
        tolerance=TOLERANCE,
    )
    progress("compiled in %.1fs; outputs differ by %.2e, gradients by %.2e" % (compile_seconds, out_diff, grad_diff))
    if out_diff > TOLERANCE or grad_diff > TOLERANCE:
        result["error"] = "compiled model differs from eager: output %.3g, gradients %.3g (tolerance %.0e)" % (
            out_diff, grad_diff, TOLERANCE)
        result["error_kind"] = "mismatch"
    else:
        result["ok"] = True


def on_error(exc, result):
    text = error_text(exc, 20)
    result.update(error=text, error_kind=classify(text) or "error")


def main(argv=None):
    return worker_main(add_arguments, run, argv, {"error_kind": None}, on_error)


if __name__ == "__main__":
    exit_now(main())
