"""collect_env (torch's, every era) and vLLM's: each stated fact on its field, the unstated unknown."""

from __future__ import annotations

from tests.text.helpers import line_of, read

A100 = "collect_env_a100_vllm4066.txt"
ROCM = "collect_env_rocm_pt44106.txt"
MACOS = "collect_env_macos_pt121067.txt"
WSL = "collect_env_wsl_vllm8255.txt"
BANNERS = "vllm_env_banners_vllm24063.txt"
TOPOLOGY = "vllm_env_topology_vllm19607.txt"


def test_cuda_build_on_an_a100() -> None:
    facts = read(A100)
    doc = facts.doc
    assert [(s.kind, s.start, s.end) for s in facts.sections] == [("collect_env", 2, 30)]
    assert doc["torch"] == {"version": "1.12.1+cu113", "importable": True, "cuda": "11.3", "cuda_available": True}
    assert doc["host"] == {"os": "linux", "distro": "Ubuntu 18.04.6 LTS", "arch": "x86_64", "glibc": "2.27",
                           "kernel": "3.10.0-1160.90.1.el7.x86_64"}
    assert doc["python"] == {"version": "3.10.14", "pointer_bits": 64, "implementation": "CPython"}
    assert "python.implementation" in facts.derived  # "[GCC 7.5.0]": CPython names its compiler
    assert doc["cuda_toolkit"] == {"nvcc_version": "11.3"}  # "CUDA runtime version" is nvcc's
    assert doc["driver"] == {"version": "525.105.17"}
    assert doc["gpus"] == [{"index": 0, "name": "NVIDIA A100-SXM4-80GB", "compute_capability": "8.0"}]
    assert "gpus.0.compute_capability" in facts.derived  # from the name: said so
    # the main libcudnn copies only, not its sub-libraries
    assert doc["libraries"]["cudnn"] == [
        {"version": "8.2.0", "path": "/usr/lib/x86_64-linux-gnu/libcudnn.so.8.2.0"},
        {"version": "8.9.7", "path": "/usr/local/cuda-11.3/targets/x86_64-linux/lib/libcudnn.so.8.9.7"}]
    assert "absent" not in doc  # nothing here is stated as not existing
    assert facts.evidence["driver.version"] == ("Nvidia driver version: 525.105.17",
                                                line_of(A100, "Nvidia driver version"))
    assert facts.evidence["torch.cuda"][1] == line_of(A100, "CUDA used to build PyTorch")


def test_rocm_build_na_is_rocm_and_could_not_collect_is_unknown() -> None:
    doc = read(ROCM).doc
    assert doc["torch"]["hip"] == "3.7.20315-077bcfa0"
    assert doc["torch"]["cuda"] is None
    assert doc["absent"] == {"torch.cuda": "unavailable: ROCm build ('CUDA used to build PyTorch: N/A')"}
    assert "driver" not in doc  # "Nvidia driver version: Could not collect": unknown, not absent
    assert "gpus" not in doc  # "Device 66a1" is no NVIDIA GPU list
    assert "cuda_toolkit" not in doc  # "CUDA runtime version: N/A"
    assert doc["python"]["version"] == "3.6"
    assert doc["python"]["packages"] == {"numpy": "1.18.5", "torch": "1.7.0a0+a9603c7",
                                         "torchvision": "0.8.0a0+a4736ea"}
    assert doc["python"]["conda_packages"] == {"blas": "1.0"}
    assert set(doc["partial"]) == {"python.packages", "python.conda_packages"}  # collect_env filters its lists


def test_cpu_build_on_macos_and_no_cuda_is_unknown() -> None:
    facts = read(MACOS)
    doc = facts.doc
    assert [(s.kind, s.start, s.end) for s in facts.sections] == [("collect_env", 1, 34)]
    assert doc["torch"] == {"version": "2.2.2", "importable": True, "cuda": None, "cuda_available": False}
    assert doc["absent"] == {"torch.cuda": "unavailable: CPU build ('CUDA used to build PyTorch: None')"}
    assert doc["host"] == {"os": "darwin", "arch": "x86_64", "cpu": {"model": "Intel(R) Core(TM) i9-9880H CPU @ 2.30GHz"}}
    for unknown in ("driver", "gpus", "cuda_toolkit", "libraries"):  # "No CUDA": not collected
        assert unknown not in doc
    assert doc["python"]["packages"]["torch"] == "2.2.2"
    assert "conda_packages" not in doc["python"]  # "[conda] Could not collect"


def test_wsl_warning_before_the_keys_and_cuda_init_error() -> None:
    facts = read(WSL)
    doc = facts.doc
    assert [(s.kind, s.start, s.end) for s in facts.sections] == [("collect_env", 1, 26)]
    assert doc["torch"]["cuda_init_error"].startswith("Unexpected error from cudaGetDeviceCount()")
    assert doc["torch"]["cuda_available"] is False
    assert doc["host"]["wsl"] is True and doc["host"]["kernel"] == "5.15.153.1-microsoft-standard-WSL2"
    assert [g["index"] for g in doc["gpus"]] == list(range(6))
    assert {g["name"] for g in doc["gpus"]} == {"NVIDIA RTX 4000 Ada Generation"}
    assert doc["python"]["env_kind"] == "conda" and "python.env_kind" in facts.derived
    assert "driver" not in doc


def test_vllm_banner_layout() -> None:
    facts = read(BANNERS)
    doc = facts.doc
    assert [(s.kind, s.start, s.end) for s in facts.sections] == [("vllm_env", 2, 34)]
    assert doc["host"]["distro"] == "Ubuntu 22.04.5 LTS" and doc["host"]["glibc"] == "2.35"
    assert doc["torch"] == {"version": "2.6.0+cpu", "importable": True, "cuda_available": False}
    assert "absent" not in doc  # "CUDA used to build PyTorch : Could not collect" is unknown
    assert doc["driver"] == {"version": "570.124.06"}
    assert doc["gpus"] == [{"index": 0, "name": "NVIDIA GeForce RTX 3090", "compute_capability": "8.6"}]


def test_vllm_version_and_topology() -> None:
    facts = read(TOPOLOGY)
    assert [(s.kind, s.start, s.end) for s in facts.sections] == [("vllm_env", 1, 20)]
    assert facts.doc["python"]["packages"] == {"vllm": "0.8.5.post1"}
    assert facts.doc["extensions"] == [{"name": "vllm", "version": "0.8.5.post1"}]
    assert "python.packages" in facts.doc["partial"]


def test_library_line_forms_and_env_lines() -> None:
    paste = "\n".join([
        "PyTorch version: 2.1.0+cu121",
        "Is debug build: False",
        "CUDA used to build PyTorch: 12.1",
        "",
        "Versions of relevant libraries:",
        "[pip3] torch==2.1.0+cu121",
        "[pip] numpy (1.14.0)",
        "[pip3] triton                    2.1.0",
        "[pip3] flash-attn==2.5.8",
        "[conda] pytorch                   2.1.0           py3.10_cuda12.1_cudnn8.9.2_0    pytorch",
        "vLLM Version: 0.4.2",
        "NCCL_CUMEM_ENABLE=0",
        "HF_TOKEN=hf_abcdefghijklmnopqrstuvwxyz123456",
        "",
        "Thanks for any help!",
    ])
    facts = read(paste)
    doc = facts.doc
    assert doc["python"]["packages"] == {"torch": "2.1.0+cu121", "numpy": "1.14.0", "triton": "2.1.0",
                                         "flash-attn": "2.5.8", "vllm": "0.4.2"}
    assert doc["python"]["conda_packages"] == {"pytorch": "2.1.0"}
    assert {e["name"] for e in doc["extensions"]} == {"flash-attn", "vllm"}
    assert doc["env"]["NCCL_CUMEM_ENABLE"] == "0"
    assert doc["env"]["HF_TOKEN"] == "<redacted>"  # never a token in the doc
    assert "hf_abcdefghij" not in repr(facts.evidence)
    assert [(s.kind, s.start, s.end) for s in facts.sections] == [("vllm_env", 1, 13)]


def test_hand_copied_report_reads_as_the_corpus_case_does() -> None:
    """pytorch#37212: a colon dropped, full-width colons, "Os:", "Version of relevant libraries". The corpus case
    rebuilt from the same comment (tests/corpus/cases/pt37212-p100-driver410.json, dev) states the same facts."""
    import json
    from pathlib import Path

    facts = read("collect_env_handtyped_pt37212.txt")
    assert [(s.kind, s.start, s.end) for s in facts.sections] == [("collect_env", 1, 25)]
    case = json.loads((Path(__file__).resolve().parents[1] / "corpus" / "cases" / "pt37212-p100-driver410.json")
                      .read_text(encoding="utf-8"))["snapshot"]
    doc = facts.doc
    for section in ("driver", "gpus", "torch", "cuda_toolkit", "libraries"):
        assert doc[section] == case[section], section
    assert doc["python"]["version"] == case["python"]["version"]
    assert doc["python"]["packages"] == case["python"]["packages"]
    assert doc["host"]["distro"] == case["host"]["distro"]
    assert "arch" not in doc["host"]  # the case assumed it; this report does not state it


def test_old_era_yes_no_values_and_conda_lines() -> None:
    facts = read("collect_env_old_pt33469.txt")
    doc = facts.doc
    assert [(s.kind, s.start, s.end) for s in facts.sections] == [("collect_env", 1, 27)]
    assert doc["torch"] == {"version": "1.4.0", "importable": True, "cuda": "10.0", "cuda_available": False}
    assert "cuda_toolkit" not in doc  # "CUDA runtime version: Could not collect"
    assert doc["python"]["conda_packages"]["pytorch"] == "1.4.0"
    assert doc["python"]["conda_packages"]["mkl-fft"] == "1.0.15"  # keyed as package lists key names
    assert [g["name"] for g in doc["gpus"]] == ["TITAN Xp", "TITAN Xp"]


def test_cpu_block_forms() -> None:
    lscpu = read("PyTorch version: 2.1.0\n\nCPU:\nArchitecture:                    x86_64\nCPU(s):                          64\n"
                 "Model name:                      AMD EPYC 7742 64-Core Processor\nCore(s) per socket:              32\n"
                 "Socket(s):                       2\n\nVersions of relevant libraries:\n[pip3] torch==2.1.0\n")
    assert lscpu.doc["host"]["cpu"] == {"logical_cpus": 64, "model": "AMD EPYC 7742 64-Core Processor",
                                        "sockets": 2, "physical_cores": 64}
    wmic = read("PyTorch version: 1.13.1\n\nCPU:\nArchitecture=9\nCurrentClockSpeed=3600\n"
                "Name=AMD Ryzen 9 5900X 12-Core Processor\n\nVersions of relevant libraries:\n")
    assert wmic.doc["host"]["cpu"] == {"model": "AMD Ryzen 9 5900X 12-Core Processor"}


def test_interpreter_kinds_from_sys_version() -> None:
    pypy = read("PyTorch version: N/A\nPython version: 3.9.16 (feeb267ead3e, Dec 29 2022, 14:23:06) "
                "[PyPy 7.3.11 with GCC 10.2.1 20210130] (64-bit runtime)\n")
    assert pypy.doc["python"]["implementation"] == "PyPy" and "torch" not in pypy.doc  # "N/A": unknown
    threaded = read("PyTorch version: 2.6.0\nPython version: 3.13.1 experimental free-threading build "
                    "(main, Dec 4 2024) [GCC 11.2.0] (64-bit runtime)\n")
    assert threaded.doc["python"]["free_threaded"] is True and threaded.doc["python"]["version"] == "3.13.1"
    old = read("PyTorch version: 1.0.0\nPython version: 3.6\n")
    assert "implementation" not in old.doc["python"]  # no sys.version: not stated


def _case(name: str) -> dict:
    import json
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "corpus" / "cases" / f"{name}.json"
    return json.loads(path.read_text(encoding="utf-8"))["snapshot"]


def test_rocm_report_reads_as_its_corpus_case() -> None:
    """pytorch#44106 (dev): the case rebuilt by hand from the same sample output."""
    case, doc = _case("pt44106-rocm-healthy"), read(ROCM).doc
    assert doc["torch"] == case["torch"] and doc["absent"] == case["absent"]
    assert doc["python"]["packages"] == case["python"]["packages"]
    assert {k: doc["host"][k] for k in case["host"]} == case["host"]


def test_wsl_report_reads_as_its_corpus_case() -> None:
    """vllm#8255 (dev): the kept excerpt here stops at GPU 5; the case's GPUs 0-5 match, capabilities included."""
    case, doc = _case("vllm8255-wsl-4000ada-cuda-init-oom"), read(WSL).doc
    assert doc["torch"] == case["torch"] and doc["host"] == case["host"]
    assert doc["gpus"] == case["gpus"][:6] and doc["cuda_toolkit"] == case["cuda_toolkit"]
    assert doc["python"]["env_kind"] == case["python"]["env_kind"]
