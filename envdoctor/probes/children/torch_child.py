"""Probe torch from inside the target interpreter; prints one JSON object. Stdlib only, Python 3.8+."""
import json
import os
import sys
import warnings

LIBS = {"cudnn": "libcudnn", "nccl": "libnccl", "cublas": "libcublas", "cudart": "libcudart"}


def _installed():
    try:
        from importlib import metadata
    except ImportError:  # pragma: no cover - Python < 3.8
        return None
    try:
        return metadata.version("torch")
    except Exception:
        return None


def _guard(out, key, fn):
    try:
        out[key] = fn()
    except Exception as exc:
        out.setdefault("errors", {})[key] = "%s: %s" % (type(exc).__name__, exc)
        out[key] = None


def _mapped():
    found = {}
    try:
        with open("/proc/self/maps") as fh:
            for line in fh:
                parts = line.split(None, 5)
                if len(parts) < 6:
                    continue
                path = parts[5].strip()
                name = path.rsplit("/", 1)[-1]
                for key, prefix in LIBS.items():
                    if name.startswith(prefix + ".") or name.startswith(prefix + "-") or name == prefix + ".so":
                        if key == "cublas" and name.startswith("libcublasLt"):
                            continue
                        found.setdefault(key, path)
    except OSError:
        return None
    return found


def _emit(obj):
    print(json.dumps(obj, default=str))
    sys.stdout.flush()


def _ecosystem_before():
    """First line: what metadata and files say (requirements, nvidia wheels, torch's origin), before the import."""
    try:
        import torch_ecosystem
        facts, dists = torch_ecosystem.before_import()
    except Exception as exc:
        facts, dists = {"errors": {"ecosystem": "%s: %s" % (type(exc).__name__, exc)}}, {}
    _emit({"ecosystem": facts})
    return facts, dists


def _write_all(fd, data):
    while data:
        data = data[os.write(fd, data):]


def _read_all(fd):
    with os.fdopen(fd, "rb") as fh:
        return fh.read()


def _deepspeed(torch_ok):
    """Second line: DeepSpeed's version and build record (out even if its import then crashes). Returns
    whether to import it: installed, and torch imports (DeepSpeed imports torch itself)."""
    import deepspeed_child

    ds = deepspeed_child.describe(try_import_it=False)
    if ds.get("installed") and not torch_ok:
        ds["importable"] = False
        ds["error"] = "torch does not import, so DeepSpeed cannot"
    _emit({"deepspeed": ds})
    return bool(ds.get("installed") and torch_ok)


def _deepspeed_import_start():
    """Import DeepSpeed in a copy of this process made right after `import torch` (before CUDA is touched),
    beside torch's own checks. None where there is no fork or it fails: `_deepspeed_import_finish` then
    imports it here."""
    if not hasattr(os, "fork"):
        return None
    import deepspeed_child

    try:
        read_end, write_end = os.pipe()
    except OSError:
        return None
    try:
        pid = os.fork()
    except OSError:  # a pids limit, no memory: import it here instead
        os.close(read_end)
        os.close(write_end)
        return None
    if pid == 0:  # the copy: its stdout is not ours to write
        try:
            os.close(read_end)
            os.dup2(os.open(os.devnull, os.O_WRONLY), 1)
            _write_all(write_end, json.dumps(deepspeed_child.try_import(), default=str).encode())
        finally:
            os._exit(0)
    os.close(write_end)
    return pid, read_end


def _deepspeed_import_finish(started):
    """The `deepspeed_import` line: from the copy, or from an import here."""
    if started is None:
        import deepspeed_child
        _emit({"deepspeed_import": deepspeed_child.try_import()})
        return
    pid, read_end = started
    raw, status = _read_all(read_end), os.waitpid(pid, 0)[1]
    try:
        result = json.loads(raw.decode())
    except ValueError:
        result = {"importable": False, "error": "import deepspeed crashed: " + _how_it_ended(status)}
    _emit({"deepspeed_import": result})


def _how_it_ended(status):
    if os.WIFSIGNALED(status):
        import signal
        try:
            return "killed by %s" % signal.Signals(os.WTERMSIG(status)).name
        except ValueError:
            return "killed by signal %d" % os.WTERMSIG(status)
    return "exited with status %d" % os.WEXITSTATUS(status)


def main():
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    dist_version = _installed()
    out = {"installed": dist_version is not None, "dist_version": dist_version}
    facts, dists = _ecosystem_before()
    if dist_version is None:
        # An importable torch without metadata (a source build on sys.path) still counts.
        try:
            import importlib.util
            if importlib.util.find_spec("torch") is None:
                print(json.dumps(out))
                _deepspeed(torch_ok=False)
                return
            out["installed"] = True  # no metadata, but on sys.path: a source build or a copied tree
        except Exception:
            print(json.dumps(out))
            return
    sys.stdout.flush()
    try:
        import torch
    except BaseException as exc:
        out["importable"] = False
        out["error"] = "%s: %s" % (type(exc).__name__, exc)
        try:
            import torch_ecosystem
            out["missing_files"] = torch_ecosystem.broken_files(dists)
        except Exception:
            pass
        print(json.dumps(out))
        sys.stdout.flush()
        _deepspeed(torch_ok=False)
        return
    out["importable"] = True
    out["installed"] = True
    import_deepspeed = _deepspeed(torch_ok=True)
    started = _deepspeed_import_start() if import_deepspeed else None
    out["version"] = str(torch.__version__)
    out["path"] = getattr(torch, "__file__", None)
    out["cuda"] = getattr(torch.version, "cuda", None)
    out["hip"] = getattr(torch.version, "hip", None)
    caught = []
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        _guard(out, "cuda_available", lambda: bool(torch.cuda.is_available()))
        _guard(out, "device_count", lambda: int(torch.cuda.device_count()))
        caught = [str(x.message) for x in w]
    cuda_msgs = [m for m in caught if "CUDA" in m or "driver" in m or "GPU" in m]
    out["cuda_init_error"] = cuda_msgs[0] if cuda_msgs else None
    _guard(out, "arch_list", lambda: list(torch.cuda.get_arch_list()))

    def cudnn():
        v = torch.backends.cudnn.version() if torch.backends.cudnn.is_available() else None
        return str(v) if v is not None else None

    _guard(out, "cudnn", cudnn)

    def nccl():
        if not out.get("cuda"):
            return None
        v = torch.cuda.nccl.version()
        return ".".join(str(x) for x in v) if isinstance(v, tuple) else str(v)

    _guard(out, "nccl", nccl)

    def backends():
        import torch.distributed as dist
        if not dist.is_available():
            return {}
        res = {}
        for name in ("nccl", "gloo", "mpi", "ucc", "xccl"):
            fn = getattr(dist, "is_%s_available" % name, None)
            if fn is not None:
                try:
                    res[name] = bool(fn())
                except Exception:
                    res[name] = False
        return res

    _guard(out, "distributed_backends", backends)
    if out.get("cuda_available"):
        def init():
            torch.cuda.init()
            torch.zeros(1, device="cuda")
            return True
        _guard(out, "cuda_init", init)
    out["loaded_libraries"] = _mapped()
    try:
        import torch_ecosystem
        out.update(torch_ecosystem.after_import(torch, dists))
    except Exception as exc:
        out.setdefault("errors", {})["ecosystem"] = "%s: %s" % (type(exc).__name__, exc)
    _emit(out)
    if import_deepspeed:  # before the companions: one of those crashing must not cost DeepSpeed's answer
        _deepspeed_import_finish(started)
    try:
        import torch_ecosystem
        torch_ecosystem.import_all(torch, facts, _emit)
    except Exception:
        pass


if __name__ == "__main__":
    main()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)  # skip torch's interpreter teardown (about 0.3 s): the answer is already out
