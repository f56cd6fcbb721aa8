"""ComfyUI and webui startup logs: their fact lines among other lines."""

from __future__ import annotations

from tests.text.helpers import line_of, read

COMFY = "comfyui_log_5278.txt"
WEBUI = "webui_launch_16501.txt"


def test_comfyui_system_information_and_log() -> None:
    facts = read(COMFY)
    doc = facts.doc
    assert [(s.kind, s.start, s.end) for s in facts.sections] == [("startup_log", 5, 22)]
    assert doc["torch"] == {"version": "2.4.1+cu124", "importable": True, "cuda_available": True}
    assert doc["gpus"] == [{"index": 0, "name": "NVIDIA GeForce RTX 2060", "memory_bytes": 12884443136,
                           "compute_capability": "7.5"}]
    assert doc["host"] == {"os": "windows", "arch": "AMD64"}
    assert doc["python"] == {"version": "3.11.9", "pointer_bits": 64, "implementation": "CPython"}
    assert facts.conflicts == []  # "Total VRAM 12288 MB" is the rounded byte count, not a second statement
    assert facts.evidence["torch.version"][1] == line_of(COMFY, "PyTorch Version")


def test_comfyui_console_lines() -> None:
    facts = read("Total VRAM 24564 MB, total RAM 32694 MB\npytorch version: 2.3.1+cu121\n"
                 "Set vram state to: NORMAL_VRAM\nDevice: cuda:0 NVIDIA GeForce RTX 4090 : native\n")
    assert facts.doc["gpus"] == [{"index": 0, "name": "NVIDIA GeForce RTX 4090", "memory_bytes": 24564 * 1024 * 1024,
                                  "compute_capability": "8.9"}]
    assert facts.doc["torch"]["version"] == "2.3.1+cu121"


def test_comfyui_amd_device_adds_no_gpu() -> None:
    facts = read("pytorch version: 2.4.0+rocm6.1\nDevice: cuda:0 AMD Radeon RX 7900 XTX : native\n")
    assert "gpus" not in facts.doc and facts.doc["torch"]["cuda_available"] is True


def test_webui_launch() -> None:
    facts = read(WEBUI)
    assert [(s.kind, s.start, s.end) for s in facts.sections] == [("startup_log", 1, 2)]
    assert facts.doc["python"] == {"version": "3.12.6", "pointer_bits": 64, "implementation": "CPython"}
    assert facts.doc["host"] == {"os": "windows", "arch": "AMD64"}
    assert facts.doc["webui"] == {"version": "v1.10.1"}
    assert "torch" not in facts.doc  # it failed to install torch: nothing about torch is stated


def test_webui_footer_and_xformers_build() -> None:
    facts = read("version: v1.7.0  •  python: 3.10.11  •  torch: 2.2.2+cu121  •  xformers: 0.0.23.post1  •  gradio: 3.41.2\n"
                 "WARNING[XFORMERS]: xFormers can't load C++/CUDA extensions. xFormers was built for:\n"
                 "    PyTorch 2.1.2+cu121 with CUDA 1201 (you have 2.2.2+cu121)\n")
    doc = facts.doc
    assert doc["torch"]["version"] == "2.2.2+cu121"
    assert doc["python"]["packages"] == {"xformers": "0.0.23.post1"}
    assert doc["extensions"] == [{"name": "xformers", "version": "0.0.23.post1", "torch_version": "2.1.2+cu121",
                                  "cuda_version": "12.1"}]
