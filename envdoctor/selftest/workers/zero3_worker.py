"""`envdoctor selftest zero3`: a few DeepSpeed ZeRO-3 steps with optimizer and parameters offloaded, against
plain torch Adam.

Launched with one rank through `torch.distributed.run`. On a GPU machine DeepSpeed's CUDA accelerator is used;
without one, DeepSpeed's CPU accelerator (`DS_ACCELERATOR=cpu`, set by envdoctor). The model is the backward
test's image-text model. Runs, each from the same initial weights on the same batches:
  reference   torch.optim.Adam, no DeepSpeed;
  zero3       ZeRO-3, torch Adam inside the engine, nothing offloaded (the step time without offload);
  offload_cpu ZeRO-3, offload_optimizer and offload_param to cpu (DeepSpeedCPUAdam: the cpu_adam op);
  offload_nvme the same to NVMe swap files (the async_io op and libaio), when asked or possible.
Each offloaded run's losses and final parameters must match the reference within TOLERANCE. The op builds
are timed (cold: built into an empty TORCH_EXTENSIONS_DIR; warm: loaded from it). A ZeRO-3 estimate of the
largest model that fits this machine with offload comes from DeepSpeed's own estimator.
Target interpreter, Python 3.8+; imports torch and deepspeed, never envdoctor.
"""
import argparse
import glob
import os
import re
import shutil
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _common import Progress, error_text, exit_now, median, rel_diff, sync, watch_parent, write_json
from backward_worker import SHAPE, build_model

# Against torch Adam, fp32 everywhere: each step's loss (relative), and the whole model's update (final - initial
# parameters, normwise relative). Adam's step g / (sqrt(v) + eps) turns last-bit gradient differences (ZeRO-3
# reduces gradients through flat buffers) into visible ones for elements whose gradient is near eps: measured
# here 3e-3 after 1 step and 5.5e-3 after 6 (losses 2e-6 and 1.4e-5). A wrong update (a step skipped, another
# learning rate or bias correction) is off by 5e-2 or more.
TOLERANCE = {"loss": 1e-4, "update": 2e-2}
BUILDING_NOTE = "zero3_worker.building"  # zero3.py reads this name
LIBAIO_HEADER_DIRS = ("/usr/include", "/usr/local/include", "/usr/include/x86_64-linux-gnu", "/usr/include/aarch64-linux-gnu")


def parse_args(argv):
    p = argparse.ArgumentParser()
    p.add_argument("--out", required=True)
    p.add_argument("--progress", default=None)
    p.add_argument("--steps", type=int, default=4)
    p.add_argument("--batch", type=int, default=4)
    p.add_argument("--dim", type=int, default=256)
    p.add_argument("--layers", type=int, default=2)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--nvme", default=None, help="directory for NVMe swap files")
    p.add_argument("--nvme-auto", default=None, help="a local directory to try NVMe offload in when libaio is present")
    p.add_argument("--pg-timeout", type=float, default=120.0)
    return p.parse_args(argv)


def batches(torch, n, batch, device):
    gen = torch.Generator().manual_seed(1)
    out = []
    for _ in range(n):
        images = torch.randn(batch, 3, SHAPE["image"], SHAPE["image"], generator=gen).to(device)
        tokens = torch.randint(0, SHAPE["vocab"], (batch, SHAPE["seq"] + 1), generator=gen).to(device)
        out.append((images, tokens))
    return out


def run_reference(torch, factory, data, lr, device):
    model = factory().to(device)
    opt = torch.optim.Adam(model.parameters(), lr=lr, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0)
    losses, times = [], []
    for images, tokens in data:
        sync(torch, device)
        t0 = time.perf_counter()
        opt.zero_grad(set_to_none=True)
        loss = model(images, tokens).mean()
        loss.backward()
        opt.step()
        sync(torch, device)
        times.append(time.perf_counter() - t0)
        losses.append(float(loss))
    params = {n: p.detach().float().cpu().clone() for n, p in model.named_parameters()}
    return {"losses": losses, "step_seconds": median(times[1:] or times)}, params


def ds_config(batch, lr, offload, nvme_path=None, largest_numel=0):
    zero = {"stage": 3, "stage3_param_persistence_threshold": 0, "contiguous_gradients": True,
            "overlap_comm": False, "reduce_bucket_size": 1 << 22, "stage3_prefetch_bucket_size": 1 << 22}
    adam = {"lr": lr, "betas": [0.9, 0.999], "eps": 1e-8, "weight_decay": 0.0}
    if offload == "cpu":
        zero["offload_optimizer"] = {"device": "cpu", "pin_memory": True}
        zero["offload_param"] = {"device": "cpu", "pin_memory": True}
    elif offload == "nvme":
        # buffers just large enough for the largest parameter: the defaults pin gigabytes
        size = max(1 << 20, 1 << (int(largest_numel) - 1).bit_length())
        zero["offload_optimizer"] = {"device": "nvme", "nvme_path": nvme_path, "pin_memory": True, "buffer_count": 4}
        zero["offload_param"] = {"device": "nvme", "nvme_path": nvme_path, "pin_memory": True, "buffer_count": 5,
                                 "buffer_size": size, "max_in_cpu": 0}
    else:
        adam["torch_adam"] = True  # no op to build: the step time of ZeRO-3 itself
    config = {"train_micro_batch_size_per_gpu": batch, "gradient_accumulation_steps": 1,
              "optimizer": {"type": "Adam", "params": adam}, "zero_optimization": zero,
              "steps_per_print": 1 << 30, "wall_clock_breakdown": False}
    if offload == "nvme":
        config["aio"] = {"block_size": 1 << 20, "queue_depth": 8, "intra_op_parallelism": 1,
                         "single_submit": False, "overlap_events": True}
    return config


def run_engine(torch, deepspeed, factory, data, lr, device, offload, nvme_path=None):
    model = factory()
    largest = max(p.numel() for p in model.parameters())
    config = ds_config(len(data[0][1]), lr, offload, nvme_path, largest)
    engine, _, _, _ = deepspeed.initialize(model=model, model_parameters=model.parameters(), config=config)
    losses, times = [], []
    for images, tokens in data:
        sync(torch, device)
        t0 = time.perf_counter()
        loss = engine(images, tokens).mean()
        engine.backward(loss)
        engine.step()
        sync(torch, device)
        times.append(time.perf_counter() - t0)
        losses.append(float(loss))
    names = [n for n, _ in engine.module.named_parameters()]
    plist = [p for _, p in engine.module.named_parameters()]
    with deepspeed.zero.GatheredParameters(plist, modifier_rank=None):
        params = {n: p.detach().float().cpu().clone() for n, p in zip(names, plist)}
    out = {"offload": offload or "none", "losses": losses, "step_seconds": median(times[1:] or times),
           "optimizer": type(engine.optimizer.optimizer).__name__ if hasattr(engine.optimizer, "optimizer") else None}
    if nvme_path:
        out["swap_bytes"] = swap_bytes(nvme_path)  # before destroy(), which may remove them
    engine.destroy()
    return out, params


def compare(torch, run, params, ref, ref_params, init):
    """Losses: relative difference per step. Parameters: the update each run made (final - initial), whole
    model, normwise relative to the reference's update; the worst single tensor is reported too."""
    loss_diff = max(abs(a - b) / max(abs(b), 1e-12) for a, b in zip(run["losses"], ref["losses"]))
    names = [n for n in sorted(ref_params) if n in params]
    if len(names) != len(ref_params):
        raise RuntimeError("the engine's parameters differ from the model's: %s" % sorted(set(ref_params) - set(names)))
    worst_name, worst = None, 0.0
    for n in names:
        d = rel_diff(torch, params[n] - init[n], ref_params[n] - init[n])
        if worst_name is None or d > worst:
            worst_name, worst = n, d
    flat = rel_diff(torch, torch.cat([(params[n] - init[n]).flatten() for n in names]),
                    torch.cat([(ref_params[n] - init[n]).flatten() for n in names]))
    run.update(max_rel_loss_diff=loss_diff, rel_update_diff=flat, worst_tensor_update_diff=worst, worst_tensor=worst_name,
               matches=loss_diff <= TOLERANCE["loss"] and flat <= TOLERANCE["update"])
    return run


def build_directory(name):
    """Where torch's JIT builds op `name` (TORCH_EXTENSIONS_DIR, else its per-Python/CUDA default); it builds
    there anyway, so creating it here changes nothing."""
    from torch.utils.cpp_extension import _get_build_directory

    try:
        return _get_build_directory(name, verbose=False)
    except Exception:
        return None


def load_op(builder, progress, building_note=None):
    """Build or load one op; how long it took and whether the build cache held it. While it builds,
    `building_note` names torch's build lock, so that envdoctor can remove it if the run is stopped mid-build
    (torch waits forever on a lock an interrupted build left)."""
    name = builder.NAME
    info = {"name": name, "builder": type(builder).__name__}
    where = build_directory(name)
    info["extensions_dir"] = os.path.dirname(where) if where else None
    lock = os.path.join(where, "lock") if where else None
    if lock and os.path.exists(lock):
        info["lock_found"] = lock
        progress("op %s: waiting for %s: another build holds it, or an interrupted build left it (then remove it)"
                 % (name, lock))
    elif lock and building_note:
        with open(building_note, "w") as fh:
            fh.write(lock)
    try:
        import importlib

        importlib.import_module(builder.absolute_name())
        info["cache"] = "prebuilt"  # installed with DS_BUILD_OPS=1
    except ImportError:
        built = bool(where) and bool(glob.glob(os.path.join(where, "*.so")))
        info["cache"] = "warm" if built else "cold"
    progress("op %s: %s" % (name, {"cold": "building (the first build takes minutes)", "warm": "loading from the build cache",
                                   "prebuilt": "prebuilt"}[info["cache"]]))
    t0 = time.perf_counter()
    builder.load(verbose=False)
    info["seconds"] = time.perf_counter() - t0
    if building_note and os.path.exists(building_note):
        os.remove(building_note)
    progress("op %s: %s in %.1fs" % (name, "built" if info["cache"] == "cold" else "loaded", info["seconds"]))
    return info


def libaio_headers():
    dirs = list(LIBAIO_HEADER_DIRS)
    for var in ("CPATH", "C_INCLUDE_PATH", "CPLUS_INCLUDE_PATH"):
        dirs += [d for d in os.environ.get(var, "").split(":") if d]
    dirs += re.findall(r"-I\s*(\S+)", os.environ.get("CFLAGS", ""))
    for d in dirs:
        if os.path.isfile(os.path.join(d, "libaio.h")):
            return os.path.join(d, "libaio.h")
    return None


class NvmeUnavailable(Exception):
    pass


def nvme_plan(args, accel):
    """Whether the NVMe run can happen: a directory (asked for, or a local disk envdoctor found), an async_io op
    for this accelerator, libaio's headers, and DeepSpeed's own check that io_submit links."""
    nvme = {"requested": bool(args.nvme), "libaio_header": libaio_headers(), "directory": args.nvme or args.nvme_auto}
    aio_builder = accel.create_op_builder("AsyncIOBuilder")
    verdict = "failed" if args.nvme else "skipped"
    if not nvme["directory"]:
        nvme.update(status="skipped", reason="no writable local disk for swap files (--nvme PATH names one)")
    elif aio_builder is None:
        nvme.update(status=verdict, cause="async_io_unsupported",
                    reason="DeepSpeed's %s accelerator has no async_io op" % accel.device_name())
    elif not nvme["libaio_header"]:
        nvme.update(status=verdict, cause="libaio_missing",
                    reason="libaio headers not found (no libaio.h in %s)" % ", ".join(LIBAIO_HEADER_DIRS[:2]))
    elif not aio_builder.is_compatible(verbose=True):
        nvme.update(status=verdict, cause="libaio_missing", reason="DeepSpeed's async_io op is not compatible: %s"
                    % (aio_builder.error_log or "io_submit from libaio does not link"))
    else:
        nvme["status"] = "planned"
    return nvme


def aio_bandwidth(torch, aio_op, directory, nbytes, aio):
    """Write then read one swap-sized file with DeepSpeed's own aio handle, as the swapper does."""
    handle = aio_op.aio_handle(aio["block_size"], aio["queue_depth"], aio["single_submit"], aio["overlap_events"],
                               aio["intra_op_parallelism"])
    n = max(1 << 24, min(int(nbytes), 1 << 28)) // 4
    buf = torch.arange(n, dtype=torch.float32)
    back = torch.zeros_like(buf)
    path = os.path.join(directory, "envdoctor-bandwidth.swp")
    try:
        t0 = time.perf_counter()
        handle.pwrite(buf, path, False, False)
        t1 = time.perf_counter()
        handle.pread(back, path, False, False)
        t2 = time.perf_counter()
    finally:
        if os.path.exists(path):
            os.remove(path)
    if not torch.equal(buf, back):
        raise RuntimeError("the swap file read back differs from what was written to %s" % directory)
    size = n * 4
    return {"bytes": size, "write_gbps": size / (t1 - t0) / 1e9, "read_gbps": size / (t2 - t1) / 1e9}


def swap_bytes(directory):
    total = 0
    for root, _, files in os.walk(directory):
        for f in files:
            try:
                total += os.path.getsize(os.path.join(root, f))
            except OSError:
                pass
    return total


def host_memory_bytes():
    try:
        with open("/proc/meminfo") as fh:
            info = dict(line.split(":", 1) for line in fh)
        return int(info["MemAvailable"].split()[0]) * 1024, int(info["MemTotal"].split()[0]) * 1024
    except (OSError, KeyError, ValueError):
        return None, None


def gpt_shape(total):
    """The largest layer of a GPT-shaped model of `total` parameters: depth = hidden / 128 (GPT-3's ratio),
    total = 12 * depth * hidden^2, the largest layer the bigger of a 4h x h MLP matrix and a 50k x h embedding."""
    hidden = (total * 128 / 12.0) ** (1.0 / 3)
    return int(max(4 * hidden * hidden, 50257 * hidden))


def fit_estimate(torch, device):
    """The largest model whose ZeRO-3 model states fit with offload_param + offload_optimizer to cpu, from
    DeepSpeed's estimator (stage3.estimate_zero3_model_states_mem_needs) and this machine's memory."""
    from deepspeed.runtime.zero.stage3 import estimate_zero3_model_states_mem_needs

    available, total = host_memory_bytes()
    gpu = torch.cuda.get_device_properties(device).total_memory if device.type == "cuda" else None
    out = {"estimator": "deepspeed.runtime.zero.stage3.estimate_zero3_model_states_mem_needs",
           "host_available_bytes": available, "host_total_bytes": total, "gpu_bytes": gpu,
           "assumptions": "1 GPU, zero_init, additional_buffer_factor 1.5, GPT-shaped model (largest layer: "
                          "max(4h^2, 50257h), depth h/128); model states only, not activations"}
    if not available:
        out["error"] = "host memory unknown (/proc/meminfo unreadable)"
        return out

    def fits(p):
        cpu_mem, gpu_mem, _ = estimate_zero3_model_states_mem_needs(p, gpt_shape(p), 1, 1, True, True, True, 1.5)
        return cpu_mem <= available and (gpu is None or gpu_mem <= gpu)

    lo, hi = 0, 1
    while fits(hi) and hi < 1 << 50:
        lo, hi = hi, hi * 2
    while hi - lo > max(1, lo // 1000):
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if fits(mid) else (lo, mid)
    cpu_mem, gpu_mem, _ = estimate_zero3_model_states_mem_needs(lo, gpt_shape(lo), 1, 1, True, True, True, 1.5)
    cpu_next, _, _ = estimate_zero3_model_states_mem_needs(hi, gpt_shape(hi), 1, 1, True, True, True, 1.5)
    out.update(max_params=lo, cpu_bytes=cpu_mem, gpu_bytes_needed=gpu_mem, largest_layer_params=gpt_shape(lo),
               limited_by="host memory" if cpu_next > available else "GPU memory")
    return out


def main(argv=None):
    args = parse_args(argv)
    watch_parent()
    rank = int(os.environ.get("RANK", "0"))
    echo = Progress(args.progress, enabled=bool(args.progress) and rank == 0)
    started = time.monotonic()

    def progress(text):
        echo("[%5.1fs] %s" % (time.monotonic() - started, text))

    result = {"ok": False, "error": None, "tolerance": TOLERANCE, "steps": args.steps, "ops": [], "runs": {}}
    building = os.path.join(os.path.dirname(os.path.abspath(args.out)), BUILDING_NOTE)
    stage = "import"
    try:
        import datetime

        import torch

        result["python"] = "%d.%d" % sys.version_info[:2]
        result["torch"] = torch.__version__
        result["torch_cuda"] = torch.version.cuda
        import deepspeed
        from deepspeed.accelerator import get_accelerator

        result["deepspeed"] = deepspeed.__version__
        accel = get_accelerator()
        result["accelerator"] = name = accel.device_name()  # "cuda", or "cpu" with DS_ACCELERATOR=cpu
        device = torch.device("cuda", int(os.environ.get("LOCAL_RANK", "0"))) if name == "cuda" else torch.device("cpu")
        if device.type == "cuda":
            torch.cuda.set_device(device)
            torch.backends.cuda.matmul.allow_tf32 = False
            torch.backends.cudnn.allow_tf32 = False
        result["device"] = str(device)
        stage = "nvme"
        nvme = result["nvme"] = nvme_plan(args, accel)
        nvme_possible = nvme["status"] == "planned"
        if args.nvme and not nvme_possible:  # asked for and impossible: fail now, not after the other runs
            raise NvmeUnavailable(nvme["reason"])
        stage = "op_build"
        shm = accel.create_op_builder("ShareMemCommBuilder")  # the CPU accelerator's collectives, built at init
        if shm is not None and deepspeed.ops.__compatible_ops__.get(shm.NAME, False):
            result["ops"].append(load_op(shm, progress, building))
        stage = "init"
        deepspeed.init_distributed(dist_backend=accel.communication_backend_name(),
                                   timeout=datetime.timedelta(seconds=args.pg_timeout))

        def factory():
            torch.manual_seed(0)
            return build_model(torch, args.dim, args.layers)

        result["parameters"] = sum(p.numel() for p in factory().parameters())
        result["batch"] = args.batch
        data = batches(torch, args.steps, args.batch, device)
        progress("model: %.2fM parameters, %d steps of batch %d on %s (DeepSpeed %s, %s accelerator)" % (
            result["parameters"] / 1e6, args.steps, args.batch, device, deepspeed.__version__, accel.device_name()))
        result["fit"] = fit_estimate(torch, device)

        init = {n: p.detach().float().clone() for n, p in factory().named_parameters()}
        stage = "reference"
        ref, ref_params = run_reference(torch, factory, data, args.lr, device)
        result["runs"]["reference"] = ref
        progress("torch Adam: %.3fs/step" % ref["step_seconds"])
        stage = "zero3"
        run, params = run_engine(torch, deepspeed, factory, data, args.lr, device, None)
        result["runs"]["zero3"] = compare(torch, run, params, ref, ref_params, init)
        progress("ZeRO-3, no offload: %.3fs/step" % run["step_seconds"])

        stage = "op_build"
        result["ops"].append(load_op(accel.create_op_builder("CPUAdamBuilder"), progress, building))
        stage = "offload_cpu"
        run, params = run_engine(torch, deepspeed, factory, data, args.lr, device, "cpu")
        result["runs"]["offload_cpu"] = compare(torch, run, params, ref, ref_params, init)
        progress("ZeRO-3, offload to cpu: %.3fs/step, losses within %.1e (tolerance %.0e), update within %.1e "
                 "(tolerance %.0e)" % (
            run["step_seconds"], run["max_rel_loss_diff"], TOLERANCE["loss"], run["rel_update_diff"], TOLERANCE["update"]))

        if nvme_possible:
            aio_builder = accel.create_op_builder("AsyncIOBuilder")
            swap = os.path.join(nvme["directory"], "envdoctor-zero3-%d" % os.getpid())
            os.makedirs(swap, exist_ok=True)
            nvme["path"] = swap
            try:
                stage = "op_build"
                pin = accel.create_op_builder("PinMemoryBuilder")  # async_io links against it: built first, timed apart
                if pin is not None and pin.NAME != "deepspeed_not_implemented":
                    result["ops"].append(load_op(pin, progress, building))
                result["ops"].append(load_op(aio_builder, progress, building))
                stage = "offload_nvme"
                ds_aio = ds_config(args.batch, args.lr, "nvme")["aio"]
                run, params = run_engine(torch, deepspeed, factory, data, args.lr, device, "nvme", swap)
                result["runs"]["offload_nvme"] = compare(torch, run, params, ref, ref_params, init)
                nvme["swap_bytes"] = run.pop("swap_bytes", 0)
                nvme.update(aio_bandwidth(torch, aio_builder.load(verbose=False), swap, nvme["swap_bytes"], ds_aio))
                nvme["status"] = "passed"
                progress("ZeRO-3, offload to NVMe (%s): %.3fs/step; swap files write %.2f GB/s, read %.2f GB/s" % (
                    nvme["directory"], run["step_seconds"], nvme["write_gbps"], nvme["read_gbps"]))
            finally:
                shutil.rmtree(swap, ignore_errors=True)
        stage = "verdict"
        bad = [k for k, r in result["runs"].items() if k != "reference" and not r.get("matches")]
        errors = ["%s: losses differ from torch Adam's by %.3g (tolerance %.0e), the parameter update by %.3g "
                  "(tolerance %.0e)" % (k, result["runs"][k]["max_rel_loss_diff"], TOLERANCE["loss"],
                                        result["runs"][k]["rel_update_diff"], TOLERANCE["update"]) for k in bad]
        result["ok"] = not errors
        result["error"] = "; ".join(errors) or None
    except NvmeUnavailable as exc:
        result["stage"] = stage
        result["error"] = "NVMe offload (--nvme %s) cannot run: %s" % (args.nvme, exc)
    except BaseException as exc:
        result["stage"] = stage
        result["error"] = error_text(exc)
        result["exception"] = type(exc).__name__
        result["exception_message"] = str(exc)[:20000]  # a failed build's message holds the compiler's output
    write_json(args.out, result)
    return 0 if result["ok"] else 1


if __name__ == "__main__":
    exit_now(main())
