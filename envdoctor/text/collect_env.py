"""`python -m torch.utils.collect_env` output, of every era (1.0's "[pip] numpy (1.14.0)" to 2.x's CPU block), and
vLLM's `collect_env`, which extends it (its extra keys: envdoctor/text/vllm_env.py).

What each line states (the corpus cases read them the same way, tests/corpus/cases):

    PyTorch version: 2.1.0+cu121        torch.version, torch.importable true (collect_env imported it)
    CUDA used to build PyTorch: 12.1    torch.cuda; "None" is a CPU build (absent torch.cuda); "N/A" with a ROCm
                                        version is a ROCm build, else unknown
    ROCM used to build PyTorch: 5.7.x   torch.hip
    OS: Ubuntu 22.04.4 LTS (x86_64)     host.distro, host.arch, host.os
    Libc version: glibc-2.35            host.glibc
    Python version: 3.10.12 ... (64-bit runtime)    python.version, python.pointer_bits
    Python platform: Linux-5.15.0-x86_64-with-glibc2.35    host.kernel (host.wsl when it is a WSL kernel)
    Is CUDA available: True             torch.cuda_available
    CUDA runtime version: 12.1.105      cuda_toolkit.nvcc_version (collect_env reads `nvcc --version`)
    GPU models and configuration:       gpus[i].name from "GPU i: NAME" (nvidia-smi -L); a MIG device under it:
                                        gpus[i].mig_enabled
    Nvidia driver version: 535.183.01   driver.version
    cuDNN version: ... libcudnn.so.8.9.0    libraries.cudnn (the system copies collect_env finds)
    CPU: ... Model name: ...            host.cpu.model, logical_cpus, sockets, physical_cores
    [pip3] torch==2.1.0+cu121           python.packages (partial: collect_env lists only torch's packages)
    [conda] pytorch 2.1.0 ...           python.conda_packages (partial)

"N/A", "Could not collect", "No CUDA" and an empty value are unknown, never absent.
"""

from __future__ import annotations

import re
from typing import Optional

from envdoctor.text import vllm_env
from envdoctor.text.facts import Statements, major_minor_text, not_read
from envdoctor.text.lines import SectionReader, extension_of_package, python_version

KIND = "collect_env"
PIP_WHY = "collect_env lists only the packages that match its filter (torch, numpy, nvidia-*, ...)"
CONDA_WHY = "collect_env lists only the conda packages that match its filter"

# Where a collect_env report starts: its banner, or its first key (a paste often leaves the banner out).
_OPENS = re.compile(r"^\s*(Collecting environment information|PyTorch version(\s*:|\s+\d)|CUDA used to build PyTorch\s*:"
                    r"|vLLM Version\s*:)")
# vLLM's format frames groups of keys in banners: "=====", "   System Info", "=====".
_BANNER = re.compile(r"^\s*={10,}\s*$")
_TITLE = re.compile(r"^\s*[A-Z][A-Za-z0-9 /&()-]{2,40}\s*$")
_KEY = re.compile(r"^\s*([A-Za-z][A-Za-z0-9_ ()/.+-]{0,60}?)\s*:(?:\s+(.*)|\s*)$")
_WMIC = re.compile(r"^\s*([A-Za-z][A-Za-z0-9]*)=(.*)$")
_BARE_VERSION = re.compile(r"^\s*(PyTorch version)\s+(\d\S*)\s*$")  # a hand-copied report dropped the colon
_ALIASES = {"version of relevant libraries": "versions of relevant libraries"}
_STOP = re.compile(r"^\s*(Traceback \(most recent call last\)|File \"|```|</?details|<summary)")
_EXCEPTION = re.compile(r"^[A-Za-z_][\w.]*(Error|Exception|Warning|Interrupt|Exit)$")
_GPU_LINE = re.compile(r"^\s*GPU (\d{1,4}): (.+?)\s*(?:\(UUID: [^)]*\))?\s*$")
_MIG_LINE = re.compile(r"^\s*MIG \S+\s+Device\s+\d+")
_PATH_LINE = re.compile(r"^\s*(/|[A-Za-z]:\\)")
_LIB_LINE = re.compile(r"^\s*\[(pip\d?|conda)\]\s+(.*)$")
_ARCH = r"x86_64|aarch64|arm64|ppc64le|s390x|AMD64|i686|armv7l"
_OS = re.compile(rf"^(.*?)\s*\(({_ARCH})\)\s*$")
_PLATFORM = re.compile(rf"^Linux-(.+?)-({_ARCH})(?:-with(?:-glibc([\d.]+))?.*)?$")
_CUDNN_SO = re.compile(r"libcudnn\.so\.(\d+(?:\.\d+)*)\s*$")
_CUDNN_DLL = re.compile(r"cudnn64_(\d+)\.dll\s*$", re.I)
_CUDA_INIT = re.compile(r"UserWarning: CUDA initialization: (.+?)(?:\s*\(Triggered internally at [^)]*\))?\.?\s*$")
MAX_STRAYS, MAX_STRAYS_BEFORE_KEYS = 1, 4
_PKG = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)(?:\[[^\]]*\])?\s*(?:==\s*|\(\s*|\s+)([^\s()]+)\)?")

# The keys collect_env (torch's and vLLM's) prints; after its library list only these keep a section open.
KNOWN = frozenset((
    "pytorch version", "is debug build", "cuda used to build pytorch", "rocm used to build pytorch", "os",
    "gcc version", "clang version", "cmake version", "libc version", "python version", "python platform",
    "is cuda available", "cuda runtime version", "cuda_module_loading set to", "gpu models and configuration",
    "nvidia driver version", "cudnn version", "hip runtime version", "miopen runtime version",
    "is xnnpack available", "versions of relevant libraries", "cpu", "is xpu available", "xpu used to build pytorch",
    "intel gpu driver version", "intel gpu models onboard", "intel gpu models detected", "caching allocator config",
    "nccl version", "gpu topology", "pip version", "conda version",
)) | vllm_env.KEYS


# The titles of vLLM's banner groups: a banner line followed by one of them opens a vLLM report.
VLLM_TITLES = frozenset(("System Info", "PyTorch Info", "Python Environment", "CUDA / GPU Info", "CPU Info",
                         "Versions of relevant libraries", "vLLM Info", "Environment Variables"))


def opens(line: str) -> bool:
    return bool(_OPENS.match(line))


def opens_banner(line: str) -> bool:
    """A "=====" line: it opens a vLLM report if a group title follows (else the section closes as none)."""
    return bool(_BANNER.match(line))


def _norm(key: str) -> str:
    return " ".join(key.lower().split())


class CollectEnv(SectionReader):
    kind = KIND

    def __init__(self, facts: Statements, start: int) -> None:
        super().__init__(facts, start)
        self.state = "main"  # main | cpu | libs | topology | flags
        self.last_key = ""
        self.blanks = 0
        self.after_libs = False
        self.rocm = False
        self.cuda_na: Optional[tuple] = None  # ("N/A" line, number): a ROCm build if a ROCm version follows
        self.strays = 0
        self.tentative = False  # opened at a banner: a vLLM group title must follow

    def first(self, line: str, no: int) -> CollectEnv:
        """Take the opening line (a banner or title line, or the first key)."""
        if line.lstrip().startswith("vLLM"):
            self.kind_is_vllm()
        if not self.feed(line, no):
            self.end = no
        return self

    # --- which lines belong ------------------------------------------------------------------------------------
    def feed(self, line: str, no: int) -> bool:
        if self.tentative:
            if no == self.start:
                return True
            self.tentative = False
            if line.strip() not in VLLM_TITLES:
                return False
            self.kind_is_vllm()
            self.end = no
            return True
        if not line.strip():
            self.blanks += 1
            if self.state == "cpu":
                self.state = "main"
            return self.blanks <= 2
        if _STOP.match(line):
            return False
        blanks, self.blanks = self.blanks, 0
        if self._continues(line, no, blanks):
            self.end = no
            self.strays = 0
            return True
        return self._stray(line, no)

    def _stray(self, line: str, no: int) -> bool:
        """A line collect_env did not print in this place: a warning before the first key, a value wrapped onto
        the next line. Up to MAX_STRAYS of them in a row stay inside the section (without moving its end)."""
        init = _CUDA_INIT.search(line)
        if init:
            self.facts.state("torch.cuda_init_error", init.group(1).strip(), line, no)
        self.strays += 1
        limit = MAX_STRAYS_BEFORE_KEYS if not self.last_key else MAX_STRAYS
        return self.strays <= limit and not self.after_libs

    def _continues(self, line: str, no: int, blanks: int) -> bool:
        if self.state == "cpu" and not blanks:
            self._cpu(line, no)
            return True
        if self.state == "libs":
            lib = _LIB_LINE.match(line)
            if lib:
                self._library(lib.group(1), lib.group(2), line, no)
                return True
            self.state, self.after_libs = "main", True
        if self.state == "topology" and (line[:1] in " \t" or re.match(r"^(GPU\d|NIC\d|mlx|Legend|NIC Legend)", line)):
            return True
        if self.state == "flags" and line[:1] in " \t":
            return True
        if _BANNER.match(line):
            self.kind_is_vllm()
            return True
        if self.last_key == "gpu models and configuration" and _GPU_LINE.match(line):
            self._gpu(_GPU_LINE.match(line), line, no)
            return True
        if self.last_key == "gpu models and configuration" and _MIG_LINE.match(line):
            self._mig(line, no)
            return True
        if self.last_key == "cudnn version" and _PATH_LINE.match(line):
            self._cudnn_path(line.strip(), line, no)
            return True
        if vllm_env.env_line(self, line, no):
            return True
        m = _KEY.match(line) or _BARE_VERSION.match(line)
        if m:
            key = _ALIASES.get(_norm(m.group(1)), _norm(m.group(1)))
            if key in KNOWN or (not self.after_libs and m.group(2) and self._plausible(m.group(1))):
                self.state = "main"
                self.last_key = key
                self._key(key, (m.group(2) or "").strip(), line, no)
                return True
            return False
        if _TITLE.match(line) and self.kind == vllm_env.KIND:
            return True  # a banner's title line
        return False

    @staticmethod
    def _plausible(key: str) -> bool:
        """A key of a newer collect_env than this reader knows (not an exception name or a log prefix)."""
        key = key.strip()
        return (len(key.split()) <= 7 and not _EXCEPTION.match(key) and "." not in key
                and not re.search(r"\d{2}", key) and key[:1].isupper())

    def close(self):
        return super().close() if self.last_key else None  # a banner alone states nothing

    def kind_is_vllm(self) -> None:
        self.kind = vllm_env.KIND

    # --- what each key states -------------------------------------------------------------------------------
    def _key(self, key: str, value: str, line: str, no: int) -> None:
        f = self.facts
        if key in vllm_env.KEYS:
            self.kind_is_vllm()
            self.state = vllm_env.key(f, key, value, line, no) or "main"
            return
        if key == "cpu":
            self.state = "cpu"
            if value:
                self._cpu(line, no)
            return
        if key == "versions of relevant libraries":
            self.state = "libs"
            return
        if key == "gpu topology":
            self.state = "topology"
            return
        if key == "gpu models and configuration":
            gpu = _GPU_LINE.match(value)
            if gpu:
                self._gpu(gpu, line, no)
            return
        if not value or not_read(value) and key not in ("cuda used to build pytorch",):
            return
        handler = _HANDLERS.get(key)
        if handler:
            handler(self, value, line, no)

    def _torch_version(self, value: str, line: str, no: int) -> None:
        if not_read(value):
            return
        self.facts.state("torch.version", value.split()[0], line, no)
        self.facts.state("torch.importable", True, line, no)

    def _cuda_built(self, value: str, line: str, no: int) -> None:
        f = self.facts
        if value.strip().lower() == "none":
            f.absent("torch.cuda", "CPU build ('CUDA used to build PyTorch: None')", line, no)
            f.state("torch.cuda", None, line, no)
        elif value.strip().upper() == "N/A":
            self.cuda_na = (line, no)
        elif not not_read(value):
            mm = major_minor_text(value)
            if mm:
                f.state("torch.cuda", mm, line, no)

    def _rocm_built(self, value: str, line: str, no: int) -> None:
        if not_read(value):
            return
        self.rocm = True
        self.facts.state("torch.hip", value.split()[0], line, no)
        if self.cuda_na:
            na_line, na_no = self.cuda_na
            self.facts.absent("torch.cuda", "ROCm build ('CUDA used to build PyTorch: N/A')", na_line, na_no)
            self.facts.state("torch.cuda", None, na_line, na_no)

    def _os(self, value: str, line: str, no: int) -> None:
        f = self.facts
        m = _OS.match(value)
        name, arch = (m.group(1), m.group(2)) if m else (value, None)
        low = name.lower()
        if "windows" in low:
            f.state("host.os", "windows", line, no)
        elif "mac" in low or "os x" in low or "darwin" in low:
            f.state("host.os", "darwin", line, no)
        else:
            f.state("host.os", "linux", line, no)
            f.state("host.distro", name, line, no)
        if arch:
            f.state("host.arch", arch, line, no)

    def _libc(self, value: str, line: str, no: int) -> None:
        m = re.match(r"glibc-(\d+\.\d+)", value)
        if m:
            self.facts.state("host.glibc", m.group(1), line, no)

    def _platform(self, value: str, line: str, no: int) -> None:
        f = self.facts
        m = _PLATFORM.match(value)
        if m:
            f.state("host.os", "linux", line, no)
            f.state("host.kernel", m.group(1), line, no)
            f.state("host.arch", m.group(2), line, no)
            if m.group(3):
                f.state("host.glibc", major_minor_text(m.group(3)), line, no)
            if "microsoft" in m.group(1).lower():
                f.state("host.wsl", True, line, no)
        elif value.startswith("Windows-"):
            f.state("host.os", "windows", line, no)
        elif value.startswith("macOS-") or value.startswith("Darwin-"):
            f.state("host.os", "darwin", line, no)

    def _python(self, value: str, line: str, no: int) -> None:
        python_version(self.facts, value, line, no)
        if re.search(r"\| packaged by (Anaconda|conda-forge)", value):
            self.facts.state("python.env_kind", "conda", line, no)
            self.facts.derived["python.env_kind"] = "the interpreter was built by conda ('packaged by ...')"

    def _cuda_available(self, value: str, line: str, no: int) -> None:
        v = value.strip().lower()
        if v in ("true", "yes", "false", "no"):
            self.facts.state("torch.cuda_available", v in ("true", "yes"), line, no)

    def _nvcc(self, value: str, line: str, no: int) -> None:
        mm = major_minor_text(value)
        if mm:
            self.facts.state("cuda_toolkit.nvcc_version", mm, line, no)

    def _driver(self, value: str, line: str, no: int) -> None:
        m = re.match(r"^(\d+\.\d+(?:\.\d+)?)", value)
        if m:
            self.facts.state("driver.version", m.group(1), line, no)

    def _cudnn(self, value: str, line: str, no: int) -> None:
        if value.lower().startswith("probably one of"):
            return
        if _PATH_LINE.match(value):
            self._cudnn_path(value, line, no)
        elif re.match(r"^\d+(\.\d+)*$", value):
            self._cudnn_copy({"version": value}, line, no)

    def _cudnn_path(self, path: str, line: str, no: int) -> None:
        m = _CUDNN_SO.search(path) or _CUDNN_DLL.search(path)
        if m:
            self._cudnn_copy({"version": m.group(1), "path": path}, line, no)

    def _cudnn_copy(self, copy: dict, line: str, no: int) -> None:
        libs = self.facts.doc.setdefault("libraries", {}).setdefault("cudnn", [])
        if copy not in libs and len(libs) < 64:
            libs.append(copy)
            self.facts.evidence.setdefault(f"libraries.cudnn.{len(libs) - 1}", (line.strip(), no))

    def _gpu(self, m: re.Match[str], line: str, no: int) -> None:
        if self.rocm:
            return  # a ROCm build names AMD devices, not the NVIDIA driver's list
        name = m.group(2).strip()
        if not_read(name):
            return
        index = int(m.group(1))
        self.facts.state(f"gpus.{index}.name", name, line, no)
        self._mig_of = index

    def _mig(self, line: str, no: int) -> None:
        index = getattr(self, "_mig_of", None)
        if index is not None:
            self.facts.state(f"gpus.{index}.mig_enabled", True, line, no)

    def _cpu(self, line: str, no: int) -> None:
        f = self.facts
        m = _KEY.match(line) or _WMIC.match(line)  # lscpu "Key: value"; older Windows "Name=..." (wmic)
        if not m:
            if "host.cpu.model" not in f.evidence and line.strip():
                f.state("host.cpu.model", line.strip(), line, no)  # macOS: the model alone
            return
        key, value = _norm(m.group(1)), (m.group(2) or "").strip()
        if key in ("model name", "name") and value:
            f.state("host.cpu.model", value, line, no)
        elif key == "cpu(s)" and _count(value):
            f.state("host.cpu.logical_cpus", int(value), line, no)
        elif key == "socket(s)" and _count(value):
            f.state("host.cpu.sockets", int(value), line, no)
            per = getattr(self, "_cores_per_socket", None)
            if per:
                f.state("host.cpu.physical_cores", per * int(value), line, no)
        elif key == "core(s) per socket" and _count(value):
            self._cores_per_socket = int(value)

    def _library(self, tool: str, rest: str, line: str, no: int) -> None:
        if not_read(rest):
            return
        m = _PKG.match(rest.strip())
        if not m:
            return
        name, version = m.group(1), m.group(2)
        if not version[:1].isdigit():
            return  # "torch @ file:///...": no version stated
        f = self.facts
        if tool == "conda":
            f.package("python.conda_packages", name, version, line, no)
            f.partial("python.conda_packages", CONDA_WHY)
        else:
            f.package("python.packages", name, version, line, no)
            f.partial("python.packages", PIP_WHY)
            extension_of_package(f, name, version, line, no)


def _count(value: str) -> bool:
    return value.isdigit() and len(value) <= 6


_HANDLERS = {
    "pytorch version": CollectEnv._torch_version,
    "cuda used to build pytorch": CollectEnv._cuda_built,
    "rocm used to build pytorch": CollectEnv._rocm_built,
    "os": CollectEnv._os,
    "libc version": CollectEnv._libc,
    "python platform": CollectEnv._platform,
    "python version": CollectEnv._python,
    "is cuda available": CollectEnv._cuda_available,
    "cuda runtime version": CollectEnv._nvcc,
    "nvidia driver version": CollectEnv._driver,
    "cudnn version": CollectEnv._cudnn,
}
