"""What the self-tests need to know about the target interpreter; prints one JSON object.
Target interpreter, Python 3.8+; imports torch, never envdoctor."""
import json
import sys


def distribution_version(name):
    """An installed distribution's version without importing it (deepspeed's import takes seconds)."""
    try:
        from importlib.metadata import PackageNotFoundError, version
    except ImportError:
        return None
    try:
        return version(name)
    except PackageNotFoundError:
        return None


def main():
    out = {"python": sys.version.split()[0], "torch": None, "error": None}
    try:
        import torch
    except BaseException as exc:
        out["error"] = "%s: %s" % (type(exc).__name__, exc)
        print(json.dumps(out))
        return 0
    out["torch"] = torch.__version__
    out["cuda_build"] = getattr(torch.version, "cuda", None)
    try:
        out["cuda_available"] = bool(torch.cuda.is_available())
        out["device_count"] = torch.cuda.device_count() if out["cuda_available"] else 0
    except Exception as exc:
        out["cuda_available"] = False
        out["device_count"] = 0
        out["cuda_error"] = "%s: %s" % (type(exc).__name__, exc)
    try:
        import torch.distributed as dist

        out["distributed"] = bool(dist.is_available())
        out["nccl"] = bool(out["distributed"] and dist.is_nccl_available())
        out["gloo"] = bool(out["distributed"] and dist.is_gloo_available())
    except Exception as exc:
        out["distributed"] = out["nccl"] = out["gloo"] = False
        out["distributed_error"] = "%s: %s" % (type(exc).__name__, exc)
    out["compile"] = hasattr(torch, "compile")
    out["deepspeed"] = distribution_version("deepspeed")
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
