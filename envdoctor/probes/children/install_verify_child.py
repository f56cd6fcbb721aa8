"""Check a fresh torch install from inside the target interpreter; prints one JSON object.

argv[1]: JSON {"torch": "2.9.1+cu128", "cuda": "12.8" or null, "gpus": true, "packages": {"name": "version"},
"deepspeed": true}. With "deepspeed": `import deepspeed` and its `ds_report` (env_report.main, output kept) run.
Reports torch's arch list and each device's compute capability; whether the arch list serves the GPUs is
decided by the parent (envdoctor.compat.serving_kernel), not here.
Stdlib only besides the torch under test, Python 3.8+.
"""
import io
import json
import os
import sys
import sysconfig
from contextlib import redirect_stderr, redirect_stdout


def main():
    want = json.loads(sys.argv[1])
    problems = []
    out = {"problems": problems}
    from importlib import metadata

    for name, version in sorted((want.get("packages") or {}).items()):
        try:
            got = metadata.version(name)
        except Exception:
            got = None
        if got != version:
            problems.append("%s: installed %s, planned %s" % (name, got, version))
    try:
        import torch
    except BaseException as exc:
        problems.append("import torch failed: %s: %s" % (type(exc).__name__, exc))
        print(json.dumps(out))
        return
    out["version"] = str(torch.__version__)
    out["cuda"] = getattr(torch.version, "cuda", None)
    if want.get("torch") and out["version"] != want["torch"] and out["version"].split("+")[0] != want["torch"]:
        problems.append("torch.__version__ is %s, planned %s" % (out["version"], want["torch"]))
    if want.get("torch") and (want.get("cuda") or None) != (out["cuda"] or None):  # no new torch: its CUDA stays
        problems.append("torch.version.cuda is %s, planned %s" % (out["cuda"], want.get("cuda")))
    if want.get("gpus"):
        try:
            out["arch_list"] = [str(a) for a in torch.cuda.get_arch_list()]
        except Exception as exc:
            out["arch_list"] = []
            problems.append("torch.cuda.get_arch_list() failed: %s" % exc)
        try:
            if not torch.cuda.is_available():
                problems.append("torch.cuda.is_available() is False")
            else:
                x = torch.ones(4, device="cuda") * 2
                if float(x.sum().item()) != 8.0:
                    problems.append("a tiny CUDA op gave a wrong result")
        except Exception as exc:
            problems.append("a tiny CUDA op failed: %s: %s" % (type(exc).__name__, exc))
        try:
            out["device_capabilities"] = ["%d.%d" % tuple(torch.cuda.get_device_capability(i))
                                          for i in range(torch.cuda.device_count())]
        except Exception as exc:
            problems.append("reading the devices' compute capabilities failed: %s: %s" % (type(exc).__name__, exc))
    if want.get("deepspeed"):
        check_deepspeed(out, problems)
    print(json.dumps(out))


def check_deepspeed(out, problems):
    try:
        import deepspeed
    except BaseException as exc:
        problems.append("import deepspeed failed: %s: %s" % (type(exc).__name__, str(exc)[:300]))
        return
    out["deepspeed"] = str(getattr(deepspeed, "__version__", "?"))
    script = os.path.join(sysconfig.get_path("scripts") or "", "ds_report")
    if not os.path.isfile(script):
        problems.append("deepspeed has no ds_report script in %s" % os.path.dirname(script))
    from deepspeed import env_report

    buf = io.StringIO()
    try:
        with redirect_stdout(buf), redirect_stderr(buf):
            env_report.main()
    except BaseException as exc:
        problems.append("ds_report failed: %s: %s" % (type(exc).__name__, str(exc)[:300]))
    out["ds_report_lines"] = len(buf.getvalue().splitlines())


if __name__ == "__main__":
    main()
