"""`envdoctor selftest backward`: one non-scalar backward of a per-sample loss vector against the loop.

A tiny multimodal model built here (no downloads): a ViT-style image encoder (patch embedding, pre-LN
transformer blocks) and a GPT-style text decoder (causal self-attention, cross-attention to the image
tokens, MLP), a few million parameters. On a synthetic batch of image-text pairs it computes a per-sample
loss vector `losses` (B,) and weights `w` (B,), then compares
  (a) the loop:    forward once, then `(w[i] * losses[i]).backward(retain_graph=True)` for every i;
  (b) non-scalar:  forward once, then `torch.autograd.backward(losses, grad_tensors=w)`;
gradients must agree per tensor (normwise relative difference), and both times and peak memories are
reported. With DeepSpeed installed and usable, the step also goes through a DeepSpeed engine, whose
`backward` takes a scalar (the weighted sum `(w * losses).sum()`), and its gradients are compared too.
Target interpreter, Python 3.8+; imports torch, never envdoctor.
"""
import math
import os
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _common import error_text, exit_now, median, rel_diff, sync, worker_main

TOLERANCE = {"float32": 1e-5, "bfloat16": 2e-2}


def add_arguments(p):
    p.add_argument("--device", default="auto", help="auto (cuda when available), cuda or cpu")
    p.add_argument("--batch", type=int, default=8)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--dtypes", default="auto", help="comma list of float32,bfloat16 (auto: bfloat16 too on CUDA)")
    p.add_argument("--deepspeed", default="auto", choices=["auto", "off"])
    p.add_argument("--dim", type=int, default=256)
    p.add_argument("--layers", type=int, default=2)


SHAPE = {"vocab": 1024, "image": 32, "patch": 8, "seq": 24}  # a sample: a 32x32 image and 25 tokens


def build_model(torch, dim, layers, vocab=SHAPE["vocab"], image=SHAPE["image"], patch=SHAPE["patch"], seq=SHAPE["seq"],
                heads=4):
    nn = torch.nn
    F = torch.nn.functional

    class Attention(nn.Module):
        def __init__(self, causal):
            super().__init__()
            self.q = nn.Linear(dim, dim)
            self.kv = nn.Linear(dim, 2 * dim)
            self.proj = nn.Linear(dim, dim)
            self.causal = causal

        def forward(self, x, ctx=None):
            ctx = x if ctx is None else ctx
            b, t, _ = x.shape
            s = ctx.shape[1]
            q = self.q(x).view(b, t, heads, dim // heads).transpose(1, 2)
            k, v = self.kv(ctx).view(b, s, 2, heads, dim // heads).permute(2, 0, 3, 1, 4)
            att = (q @ k.transpose(-2, -1)) / math.sqrt(dim // heads)
            if self.causal:
                mask = torch.ones(t, s, dtype=torch.bool, device=x.device).triu(1)
                att = att.masked_fill(mask, float("-inf"))
            y = att.softmax(-1) @ v
            return self.proj(y.transpose(1, 2).reshape(b, t, dim))

    class Mlp(nn.Sequential):
        def __init__(self):
            super().__init__(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))

    class EncoderBlock(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln1, self.attn, self.ln2, self.mlp = nn.LayerNorm(dim), Attention(False), nn.LayerNorm(dim), Mlp()

        def forward(self, x):
            x = x + self.attn(self.ln1(x))
            return x + self.mlp(self.ln2(x))

    class DecoderBlock(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln1, self.self_attn = nn.LayerNorm(dim), Attention(True)
            self.ln2, self.cross = nn.LayerNorm(dim), Attention(False)
            self.ln3, self.mlp = nn.LayerNorm(dim), Mlp()

        def forward(self, x, img):
            x = x + self.self_attn(self.ln1(x))
            x = x + self.cross(self.ln2(x), img)
            return x + self.mlp(self.ln3(x))

    class ImageText(nn.Module):
        """ViT-style encoder + GPT-style decoder with cross-attention; forward returns per-sample losses."""

        def __init__(self):
            super().__init__()
            n_patches = (image // patch) ** 2
            self.patch = nn.Conv2d(3, dim, patch, stride=patch)
            self.img_pos = nn.Parameter(torch.randn(1, n_patches, dim) * 0.02)
            self.encoder = nn.ModuleList([EncoderBlock() for _ in range(layers)])
            self.img_ln = nn.LayerNorm(dim)
            self.tok = nn.Embedding(vocab, dim)
            self.txt_pos = nn.Parameter(torch.randn(1, seq, dim) * 0.02)
            self.decoder = nn.ModuleList([DecoderBlock() for _ in range(layers)])
            self.ln_f = nn.LayerNorm(dim)
            self.head = nn.Linear(dim, vocab, bias=False)

        def forward(self, images, tokens):
            img = self.patch(images).flatten(2).transpose(1, 2) + self.img_pos
            for blk in self.encoder:
                img = blk(img)
            img = self.img_ln(img)
            inp, target = tokens[:, :-1], tokens[:, 1:]
            x = self.tok(inp) + self.txt_pos[:, : inp.shape[1]]
            for blk in self.decoder:
                x = blk(x, img)
            logits = self.head(self.ln_f(x)).float()
            per_token = F.cross_entropy(logits.reshape(-1, vocab), target.reshape(-1), reduction="none")
            return per_token.view(tokens.shape[0], -1).mean(1)  # (B,): one loss per image-text pair

    return ImageText()


class PeakMemory(object):
    """Peak memory of a phase above its start: CUDA's allocator counters, or on CPU the process RSS
    sampled every millisecond. RSS follows live tensors only when freed memory goes back to the OS, so on
    CPU the memory rounds run apart from the timed ones, with glibc's mmap threshold lowered (mallopt)."""

    def __init__(self, torch, device):
        self.torch, self.device = torch, device
        self.method = "cuda.max_memory_allocated" if device.type == "cuda" else _rss_method()

    def __enter__(self):
        if self.device.type == "cuda":
            self.torch.cuda.synchronize(self.device)
            self.torch.cuda.reset_peak_memory_stats(self.device)
            self.base = self.torch.cuda.memory_allocated(self.device)
        else:
            self.base = self.peak = _rss()
            self.stop = threading.Event()
            self.thread = threading.Thread(target=self._sample, daemon=True)
            self.thread.start()
        return self

    def _sample(self):
        while not self.stop.wait(0.001):
            self.peak = max(self.peak, _rss())

    def __exit__(self, *exc):
        if self.device.type == "cuda":
            self.torch.cuda.synchronize(self.device)
            self.bytes = self.torch.cuda.max_memory_allocated(self.device) - self.base
        else:
            self.stop.set()
            self.thread.join()
            self.peak = max(self.peak, _rss())
            self.bytes = max(0, self.peak - self.base)
        return False


def _rss_method():
    if not os.path.exists("/proc/self/statm"):
        return "unavailable"
    return "rss_delta (/proc/self/statm sampled every 1 ms%s)" % ("" if _LIBC else "; approximate: allocator keeps freed memory")


def _load_libc():
    try:
        import ctypes

        libc = ctypes.CDLL("libc.so.6")
        libc.mallopt, libc.malloc_trim  # noqa: B018 - glibc only
        return libc
    except (OSError, AttributeError):
        return None


_LIBC = _load_libc()
M_MMAP_THRESHOLD = -3


def release_memory_to_os(threshold):
    """Allocations above `threshold` bytes get their own mapping, returned to the OS when freed."""
    if _LIBC is not None:
        _LIBC.mallopt(M_MMAP_THRESHOLD, threshold)
        _LIBC.malloc_trim(0)


def _rss():
    try:
        with open("/proc/self/statm") as fh:
            return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


def grads_of(model):
    return {n: (p.grad.detach().clone() if p.grad is not None else None) for n, p in model.named_parameters()}


def compare(torch, got, ref):
    """Per-tensor normwise relative difference; the worst tensor and its value."""
    worst_name, worst = None, 0.0
    for name, g in ref.items():
        o = got.get(name)
        if g is None or o is None:
            if (g is None) != (o is None):
                return name, float("inf")
            continue
        d = rel_diff(torch, o, g)
        if d > worst or worst_name is None:
            worst_name, worst = name, d
    return worst_name, worst


def run_phase(torch, model, batch, w, device, mode, autocast_dtype):
    images, tokens = batch
    model.zero_grad(set_to_none=True)
    ctx = torch.autocast(device_type=device.type, dtype=autocast_dtype) if autocast_dtype is not None else _Null()
    with PeakMemory(torch, device) as mem:
        sync(torch, device)
        t0 = time.perf_counter()
        with ctx:
            losses = model(images, tokens)
        if mode == "loop":
            for i in range(losses.shape[0]):
                (w[i] * losses[i]).backward(retain_graph=i < losses.shape[0] - 1)
        else:
            torch.autograd.backward(losses, grad_tensors=w)
        sync(torch, device)
        seconds = time.perf_counter() - t0
    return seconds, mem.bytes, mem.method, losses.detach()


class _Null(object):
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def compare_modes(torch, model, batch, w, device, dtype_name, repeats, progress):
    autocast_dtype = None if dtype_name == "float32" else getattr(torch, dtype_name)
    times = {"loop": [], "batched": []}
    mem = {"loop": 0, "batched": 0}
    method = None
    grads = {}
    for rep in range(repeats + 1):  # the first round warms up and is not timed
        for mode in ("loop", "batched"):
            seconds, peak, method, _ = run_phase(torch, model, batch, w, device, mode, autocast_dtype)
            if rep:
                times[mode].append(seconds)
                mem[mode] = max(mem[mode], peak)
            grads[mode] = grads_of(model)
    if device.type == "cpu":  # memory rounds apart from the timed ones (see PeakMemory)
        for mode in ("loop", "batched"):
            release_memory_to_os(64 << 10)
            _, mem[mode], method, _ = run_phase(torch, model, batch, w, device, mode, autocast_dtype)
        release_memory_to_os(32 << 20)
    name, worst = compare(torch, grads["batched"], grads["loop"])
    looped, batched = median(times["loop"]), median(times["batched"])
    out = {
        "dtype": dtype_name,
        "looped_seconds": looped,
        "batched_seconds": batched,
        "speedup": looped / batched if batched > 0 else None,
        "max_rel_grad_diff": worst,
        "worst_tensor": name,
        "tolerance": TOLERANCE[dtype_name],
        "grads_match": worst <= TOLERANCE[dtype_name],
        "looped_peak_bytes": mem["loop"],
        "batched_peak_bytes": mem["batched"],
        "memory_method": method,
    }
    progress("%s: loop %.3fs, non-scalar %.3fs (x%.2f), max rel grad diff %.2e (tolerance %.0e)" % (
        dtype_name, looped, batched, out["speedup"] or 0, worst, TOLERANCE[dtype_name]))
    return out, grads["batched"]


def deepspeed_check(torch, model_factory, batch, w, device, ref_grads, progress):
    """The same step through a DeepSpeed engine: engine.backward takes a scalar, so the weighted sum."""
    try:
        import deepspeed
    except BaseException as exc:  # said once, in the result: no progress line for a step that does not run
        return {"status": "skipped", "reason": "deepspeed does not import: %s: %s" % (type(exc).__name__, exc)}
    progress("deepspeed: engine step with the weighted-sum scalar loss")
    info = {"version": getattr(deepspeed, "__version__", None)}
    try:
        import socket

        import torch.distributed as dist

        if not dist.is_initialized():
            with socket.socket() as s:
                s.bind(("127.0.0.1", 0))
                port = s.getsockname()[1]
            for k, v in (("RANK", "0"), ("LOCAL_RANK", "0"), ("WORLD_SIZE", "1"), ("LOCAL_WORLD_SIZE", "1"),
                         ("MASTER_ADDR", "127.0.0.1"), ("MASTER_PORT", str(port))):
                os.environ.setdefault(k, v)
            deepspeed.init_distributed(dist_backend="nccl" if device.type == "cuda" else "gloo")
        model = model_factory().to(device)
        config = {"train_micro_batch_size_per_gpu": int(w.shape[0]), "gradient_accumulation_steps": 1,
                  "zero_optimization": {"stage": 0}}
        t0 = time.perf_counter()
        optimizer = torch.optim.SGD(model.parameters(), lr=0.0)  # engine.backward needs an optimizer
        engine, _, _, _ = deepspeed.initialize(model=model, optimizer=optimizer, config=config)
        info["init_seconds"] = time.perf_counter() - t0
        images, tokens = batch
        losses = engine(images, tokens)
        try:  # DeepSpeed >= 0.18.3 asserts a scalar loss; record what this version does with a vector
            engine.backward(losses.clone())
            info["nonscalar_engine_backward"] = "accepted"
        except BaseException as exc:
            info["nonscalar_engine_backward"] = "rejected: %s: %s" % (type(exc).__name__, str(exc).splitlines()[0][:200])
            engine.module.zero_grad(set_to_none=True)
            losses = engine(images, tokens)
        engine.module.zero_grad(set_to_none=True)
        losses = engine(images, tokens)
        sync(torch, device)
        t0 = time.perf_counter()
        engine.backward((w * losses).sum())
        sync(torch, device)
        info["backward_seconds"] = time.perf_counter() - t0
        name, worst = compare(torch, grads_of(engine.module), ref_grads)
        info.update(status="passed" if worst <= TOLERANCE["float32"] else "failed", max_rel_grad_diff=worst,
                    worst_tensor=name)
        return info
    except BaseException as exc:
        info.update(status="failed", error=error_text(exc, 6))
        return info


def run(torch, args, result, progress):
    if args.device == "auto":
        device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    else:
        device = torch.device(args.device)
    dtypes = args.dtypes.split(",") if args.dtypes != "auto" else (
        ["float32", "bfloat16"] if device.type == "cuda" and torch.cuda.is_bf16_supported() else ["float32"])
    for d in dtypes:
        if d not in TOLERANCE:
            raise ValueError("unknown dtype %r (float32 or bfloat16)" % d)
    if device.type == "cuda":
        torch.backends.cuda.matmul.allow_tf32 = False  # fp32 means fp32: tf32 would blur the 1e-5 comparison
        torch.backends.cudnn.allow_tf32 = False

    def factory():
        torch.manual_seed(0)
        return build_model(torch, args.dim, args.layers)

    model = factory().to(device)
    gen = torch.Generator().manual_seed(1)
    images = torch.randn(args.batch, 3, SHAPE["image"], SHAPE["image"], generator=gen).to(device)
    tokens = torch.randint(0, SHAPE["vocab"], (args.batch, SHAPE["seq"] + 1), generator=gen).to(device)
    w = (torch.rand(args.batch, generator=gen) + 0.5).to(device)
    result.update(device=str(device), batch=args.batch, parameters=sum(p.numel() for p in model.parameters()))
    progress("model: %.2fM parameters on %s, batch %d" % (result["parameters"] / 1e6, device, args.batch))
    runs = {}
    ref = None
    for d in dtypes:
        runs[d], grads = compare_modes(torch, model, (images, tokens), w, device, d, args.repeats, progress)
        if d == "float32":
            ref = grads
    result["runs"] = runs
    if args.deepspeed == "off":
        result["deepspeed"] = {"status": "skipped", "reason": "--deepspeed off"}
    elif ref is None:
        result["deepspeed"] = {"status": "skipped", "reason": "needs the float32 run"}
    else:
        result["deepspeed"] = deepspeed_check(torch, factory, (images, tokens), w, device, ref, progress)
    failures = [d for d, r in runs.items() if not r["grads_match"]]
    if result["deepspeed"].get("status") == "failed":
        failures.append("deepspeed")
    result["ok"] = not failures
    if failures:
        result["error"] = "; ".join(
            "%s: gradients differ by %.3g (tolerance %.0e) in %s" % (d, runs[d]["max_rel_grad_diff"], runs[d]["tolerance"],
                                                                 runs[d]["worst_tensor"]) if d in runs
            else "deepspeed: %s" % (result["deepspeed"].get("error") or "gradients differ by %.3g" %
                                    result["deepspeed"].get("max_rel_grad_diff", float("nan")))
            for d in failures)


def main(argv=None):
    return worker_main(add_arguments, run, argv)


if __name__ == "__main__":
    exit_now(main())
