"""`envdoctor selftest gpu`: on each GPU a matmul per dtype checked against a float64 reference, TFLOP/s,
and peer access between every pair (capability, and a copy that must arrive intact).

`--device cpu` runs the same matmul checks on the CPU (fp32, bf16): the tests use it to cover this code
on machines without a GPU. Target interpreter, Python 3.8+; imports torch, never envdoctor.
"""
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _common import error_text, exit_now, rel_diff, sync, worker_main

# Normwise relative error of C = A @ B against float64, inputs drawn from N(0, 1) and rounded to the dtype
# first (so only the product's own error counts). fp32 accumulates in fp32; tf32 rounds inputs to a
# 10-bit mantissa; bf16/fp16 outputs are rounded to 8/11 bits.
TOLERANCE = {"float32": 5e-5, "tf32": 5e-3, "bfloat16": 2e-2, "float16": 5e-3}
REF_ROWS = 256  # rows checked against float64 (the full product is timed)


def add_arguments(p):
    p.add_argument("--device", default="cuda", choices=["cuda", "cpu"])
    p.add_argument("--n", type=int, default=0, help="matrix size (default 8192 on CUDA, 512 on CPU)")
    p.add_argument("--iters", type=int, default=0)
    p.add_argument("--stress", type=float, default=0.0, help="seconds of matmul burn after the checks (0: none)")
    p.add_argument("--memory-share", type=float, default=0.5, help="share of free memory the pattern test covers")


def dtypes_for(torch, device):
    if device.type == "cpu":
        return ["float32", "bfloat16"]
    major, _ = torch.cuda.get_device_capability(device)
    out = ["float32"]
    if major >= 8:
        out.append("tf32")
    if torch.cuda.is_bf16_supported() and major >= 8:
        out.append("bfloat16")
    out.append("float16")
    return out


def matmul_check(torch, device, name, n, iters):
    dtype = torch.float32 if name in ("float32", "tf32") else getattr(torch, name)
    if device.type == "cuda":
        torch.backends.cuda.matmul.allow_tf32 = name == "tf32"
    gen = torch.Generator().manual_seed(7)
    a = torch.randn(n, n, generator=gen).to(dtype).to(device)
    b = torch.randn(n, n, generator=gen).to(dtype).to(device)
    c = a @ b  # warm-up, and the result that is checked
    sync(torch, device)
    ref = a[:REF_ROWS].double() @ b.double()
    err = rel_diff(torch, c[:REF_ROWS], ref)
    t0 = time.perf_counter()
    for _ in range(iters):
        c = a @ b
    sync(torch, device)
    seconds = (time.perf_counter() - t0) / iters
    finite = bool(torch.isfinite(c).all())
    if device.type == "cuda":
        torch.backends.cuda.matmul.allow_tf32 = False
    return {"n": n, "rel_err": err, "tolerance": TOLERANCE[name], "ok": err <= TOLERANCE[name] and finite,
            "tflops": 2.0 * n ** 3 / seconds / 1e12, "seconds": seconds}


def peer_checks(torch, count):
    pairs = {}
    for i in range(count):
        for j in range(count):
            if i == j:
                continue
            entry = {"can_access_peer": bool(torch.cuda.can_device_access_peer(i, j))}
            src = torch.arange(1 << 20, dtype=torch.float32, device=torch.device("cuda", i))
            dst = src.to(torch.device("cuda", j))
            torch.cuda.synchronize(i)
            torch.cuda.synchronize(j)
            entry["copy_ok"] = bool(torch.equal(dst.cpu(), src.cpu()))
            pairs["%d->%d" % (i, j)] = entry
    return pairs


# 32-bit words each written over the whole buffer, then read back (all ones, all zeros, alternating bits);
# "address" writes each word's own index, so a word that landed elsewhere shows too.
PATTERNS = (("ones", -1), ("zeros", 0), ("0x55", 0x55555555), ("0xaa", -0x55555556), ("address", None))
CHUNK_WORDS = 64 << 20  # 256 MiB of int32 per tensor
CPU_TEST_BYTES = 64 << 20


def memory_test(torch, device, share):
    """Write each pattern over a share of free memory, then read it all back: mismatched words per pattern."""
    if device.type == "cuda":
        free, _total = torch.cuda.mem_get_info(device)
        want = int(free * share)
    else:
        want = CPU_TEST_BYTES
    words = max(1, want // 4)
    chunks = []
    try:
        while words > 0:
            n = min(words, CHUNK_WORDS)
            chunks.append(torch.empty(n, dtype=torch.int32, device=device))
            words -= n
    except RuntimeError:  # the allocator could not hand out the whole share: test what it gave
        if device.type == "cuda":
            torch.cuda.empty_cache()
    tested = sum(c.numel() for c in chunks) * 4
    mismatches = {}
    t0 = time.perf_counter()
    for name, value in PATTERNS:
        for c in chunks:
            if value is None:
                torch.arange(c.numel(), dtype=torch.int32, device=device, out=c)
            else:
                c.fill_(value)
        bad = 0
        for c in chunks:
            if value is None:
                bad += int((c != torch.arange(c.numel(), dtype=torch.int32, device=device)).sum())
            else:
                bad += int((c != value).sum())
        mismatches[name] = bad
    sync(torch, device)
    seconds = time.perf_counter() - t0
    del chunks
    if device.type == "cuda":
        torch.cuda.empty_cache()
    return {"bytes": tested, "share": share, "mismatches": mismatches, "ok": not any(mismatches.values()) and tested > 0,
            "seconds": seconds}


def burn_dtype(torch, device):
    if device.type == "cpu":
        return "float32"
    major, _ = torch.cuda.get_device_capability(device)
    if major >= 8 and torch.cuda.is_bf16_supported():
        return "bfloat16"
    return "float16" if major >= 7 else "float32"


def burn(torch, devices, seconds, n, progress):
    """Matmuls on every device at once for `seconds`; each product is compared with the first one."""
    state = []
    for dev in devices:
        name = burn_dtype(torch, dev)
        dtype = getattr(torch, name)
        gen = torch.Generator().manual_seed(11)
        a = torch.randn(n, n, generator=gen).to(dtype).to(dev)
        b = torch.randn(n, n, generator=gen).to(dtype).to(dev)
        first = a @ b
        state.append({"dev": dev, "dtype": name, "a": a, "b": b, "first": first, "iters": 0, "max_dev": 0.0,
                      "bitwise": True})
    for st in state:
        sync(torch, st["dev"])
    t0 = time.perf_counter()
    deadline = t0 + seconds
    rounds = 0
    while True:
        for st in state:
            if st["dev"].type == "cuda":
                torch.cuda.set_device(st["dev"])
            c = st["a"] @ st["b"]
            st["iters"] += 1
            if st["iters"] % 32 == 0:  # a product that differs from the first: the GPU computed wrong
                if not torch.equal(c, st["first"]):
                    st["bitwise"] = False
                    st["max_dev"] = max(st["max_dev"], rel_diff(torch, c.float(), st["first"].float()))
        rounds += 1
        if rounds % 8 == 0:
            for st in state:
                sync(torch, st["dev"])
            now = time.perf_counter()
            if now >= deadline:
                break
    elapsed = time.perf_counter() - t0
    out = []
    for st in state:
        tflops = 2.0 * n ** 3 * st["iters"] / elapsed / 1e12
        progress("%s burn %-8s %8.1f TFLOP/s over %.0f s" % (st["dev"], st["dtype"], tflops, elapsed))
        out.append({"device": str(st["dev"]), "dtype": st["dtype"], "n": n, "iterations": st["iters"],
                    "seconds": elapsed, "tflops": tflops, "bitwise_equal": st["bitwise"], "max_rel_dev": st["max_dev"],
                    "ok": st["max_dev"] <= 1e-3})
    return out


def stress(torch, devices, args, result, progress, problems):
    """`--stress SECONDS`: the memory pattern test on each device, then the burn on all of them at once."""
    memory = []
    for dev in devices:
        try:
            m = memory_test(torch, dev, args.memory_share)
        except Exception as exc:
            m = {"ok": False, "error": error_text(exc, 4)}
        m["device"] = str(dev)
        memory.append(m)
        if not m["ok"]:
            problems.append("%s memory test: %s" % (dev, m.get("error") or "mismatched words %s" % m["mismatches"]))
        else:
            progress("%s memory %.1f GiB x %d patterns intact" % (dev, m["bytes"] / 2.0 ** 30, len(PATTERNS)))
    n = args.n or (8192 if devices[0].type == "cuda" else 256)
    try:
        burned = burn(torch, devices, args.stress, n, progress)
    except Exception as exc:
        burned = []
        problems.append("burn: %s" % error_text(exc, 4))
    for b in burned:
        if not b["ok"]:
            problems.append("%s burn: products differ from the first by %.3g" % (b["device"], b["max_rel_dev"]))
    result["stress"] = {"seconds": args.stress, "memory": memory, "burn": burned}


def run(torch, args, result, progress):
    devices = []
    if args.device == "cpu":
        devices = [torch.device("cpu")]
    elif not torch.cuda.is_available():
        result.update(skipped=True, ok=True, error="CUDA is not available to torch %s (build: %s)" % (
            torch.__version__, getattr(torch.version, "cuda", None) or "CPU-only"))
        return
    else:
        devices = [torch.device("cuda", i) for i in range(torch.cuda.device_count())]
    n = args.n or (8192 if args.device == "cuda" else 512)
    iters = args.iters or (20 if args.device == "cuda" else 3)
    gpus = []
    problems = []
    for dev in devices:
        entry = {"device": str(dev)}
        if dev.type == "cuda":
            torch.cuda.set_device(dev)
            entry["name"] = torch.cuda.get_device_name(dev)
            entry["capability"] = "%d.%d" % torch.cuda.get_device_capability(dev)
        entry["matmul"] = {}
        for name in dtypes_for(torch, dev):
            try:
                m = matmul_check(torch, dev, name, n, iters)
            except Exception as exc:
                m = {"ok": False, "error": error_text(exc, 4)}
            entry["matmul"][name] = m
            if not m["ok"]:
                problems.append("%s %s: %s" % (dev, name, m.get("error") or "relative error %.3g > %.0e" % (
                    m["rel_err"], m["tolerance"])))
            else:
                progress("%s %-8s %8.1f TFLOP/s  rel err %.1e" % (dev, name, m["tflops"], m["rel_err"]))
        gpus.append(entry)
    result["devices"] = gpus
    if args.device == "cuda" and len(devices) > 1:
        result["peers"] = peer_checks(torch, len(devices))
        for pair, e in result["peers"].items():
            if not e["copy_ok"]:
                problems.append("copy %s arrived corrupted" % pair)
    if args.stress > 0:
        stress(torch, devices, args, result, progress, problems)
    result["ok"] = not problems
    result["error"] = "; ".join(problems) or None


def main(argv=None):
    return worker_main(add_arguments, run, argv, {"skipped": False})


if __name__ == "__main__":
    exit_now(main())
