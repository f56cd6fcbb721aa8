"""nvidia-smi (table, -q) and ds_report."""

from __future__ import annotations

from tests.text.helpers import line_of, read

P4 = "nvidia_smi_p4_wyoming20.txt"
TITAN = "nvidia_smi_titanxp_nvgpu15.txt"
QUERY = "nvidia_smi_q_gtx1650_nvct169.txt"
DS_OPS = "ds_report_ops_dsexamples147.txt"
DS_FULL = "ds_report_full_green_ai.txt"
DS_WARN = "ds_report_warnings_ds7235.txt"
MIB = 1024 * 1024


def test_nvidia_smi_table() -> None:
    facts = read(P4)
    assert [(s.kind, s.start, s.end) for s in facts.sections] == [("nvidia_smi", 3, 15)]
    assert facts.doc["driver"] == {"version": "550.135", "source": "nvidia-smi", "cuda_driver_version": "12.4"}
    assert facts.doc["gpus"] == [{"index": 0, "name": "Tesla P4", "persistence_mode": False,
                                  "pci_bus_id": "00000000:86:00.0", "memory_bytes": 8192 * MIB,
                                  "compute_capability": "6.1"}]
    assert facts.evidence["gpus.0.name"][1] == line_of(P4, "Tesla P4")


def test_nvidia_smi_older_table() -> None:
    facts = read(TITAN)
    assert facts.doc["driver"]["version"] == "450.57"
    assert facts.doc["gpus"][0]["name"] == "TITAN Xp" and facts.doc["gpus"][0]["persistence_mode"] is True
    assert facts.doc["gpus"][0]["memory_bytes"] == 12196 * MIB
    assert "mig_enabled" not in facts.doc["gpus"][0]  # N/A: unknown


def test_nvidia_smi_mig_and_failure() -> None:
    mig = read("| NVIDIA-SMI 535.54.03   Driver Version: 535.54.03   CUDA Version: 12.2 |\n"
               "|   0  NVIDIA A100-SXM4-40GB  On  | 00000000:07:00.0 Off |   0 |\n"
               "| N/A   34C  P0   61W / 400W |  0MiB / 40960MiB |  0%  Default |\n"
               "|                               |                      |              Enabled |\n")
    assert mig.doc["gpus"][0]["mig_enabled"] is True and mig.doc["gpus"][0]["ecc_uncorrected"] == 0
    failed = read("NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. "
                  "Make sure that the latest NVIDIA driver is installed and running.\n")
    assert failed.doc["driver"] is None
    assert failed.doc["absent"]["driver"].startswith("unavailable: nvidia-smi could not communicate")


def test_nvidia_smi_query() -> None:
    facts = read(QUERY)
    assert [s.kind for s in facts.sections] == ["nvidia_smi_q"]
    assert facts.doc["driver"] == {"version": "510.68.02", "source": "nvidia-smi", "cuda_driver_version": "11.6"}
    assert facts.doc["gpus"] == [{"index": 0, "pci_bus_id": "00000000:82:00.0", "name": "NVIDIA GeForce GTX 1650",
                                  "persistence_mode": False, "uuid": "GPU-7878ba12-9b30-8f49-3da8-7930824af120",
                                  "compute_capability": "7.5"}]


def test_ds_report_op_table() -> None:
    facts = read(DS_OPS)
    assert [(s.kind, s.start, s.end) for s in facts.sections] == [("ds_report", 2, 23)]
    ds = facts.doc["deepspeed"]
    assert ds["installed_ops"]["cpu_adam"] is False and ds["compatible_ops"]["cpu_adam"] is True
    assert len(ds["installed_ops"]) == 11
    assert "torch" not in facts.doc and "version" not in ds  # the op table states neither


def test_ds_report_general_info() -> None:
    facts = read(DS_FULL)
    doc = facts.doc
    assert doc["torch"]["version"] == "1.8.1+cu111" and doc["torch"]["cuda"] == "11.1"
    assert doc["torch"]["cuda_available"] is False  # "No CUDA runtime is found"
    assert doc["cuda_toolkit"] == {"cuda_home": "/trinity/shared/opt/cuda-11.1", "nvcc_version": "11.1"}
    assert doc["deepspeed"]["version"] == "0.5.4" and doc["deepspeed"]["importable"] is True
    assert doc["deepspeed"]["torch_info"] == {"version": "1.9", "cuda_version": "10.2"}
    assert all(doc["deepspeed"]["installed_ops"].values())
    assert doc["deepspeed"]["install_path"].endswith("site-packages/deepspeed")


def test_ds_report_warnings_stay_inside() -> None:
    facts = read(DS_WARN)
    assert [(s.kind, s.start, s.end) for s in facts.sections] == [("ds_report", 2, 22)]
    assert facts.doc["deepspeed"]["compatible_ops"]["async_io"] is False
    assert facts.doc["deepspeed"]["compatible_ops"]["evoformer_attn"] is False


def test_ds_report_shm_and_cpu_build() -> None:
    facts = read("DeepSpeed general environment info:\n"
                 "torch version .................... 2.2.0\n"
                 "torch cuda version ............... None\n"
                 "torch hip version ................ None\n"
                 "shared memory (/dev/shm) size .... 0.06 GB\n")
    assert facts.doc["torch"]["cuda"] is None
    assert facts.doc["absent"]["torch.cuda"].startswith("unavailable: CPU build")
    assert facts.doc["host"]["shm_bytes"] == int(0.06 * 1024 ** 3) and "host.shm_bytes" in facts.derived


def test_capability_from_the_name_only_where_the_table_knows_it() -> None:
    from envdoctor.text.gpu_names import capability_of

    assert capability_of("NVIDIA RTX 4000 Ada Generation") == "8.9"
    assert capability_of("Quadro RTX 4000") == "7.5" and capability_of("NVIDIA RTX A4000") == "8.6"
    assert capability_of("NVIDIA GeForce RTX 5090 D") == "12.0" and capability_of("NVIDIA B200") == "10.0"
    assert capability_of("NVIDIA GeForce RTX 4090 ...") is None  # cut by nvidia-smi: could be another model
    assert capability_of("Device 66a1") is None and capability_of("NVIDIA Future GPU") is None
    facts = read("PyTorch version: 2.9.0\nGPU models and configuration: GPU 0: NVIDIA Future GPU\n")
    assert facts.doc["gpus"] == [{"index": 0, "name": "NVIDIA Future GPU"}] and facts.derived == {}


def test_nvidia_smi_several_gpus_and_a_cut_table() -> None:
    facts = read("nvidia_smi_a800_dexbotic41.txt")
    assert [(s.kind, s.start, s.end) for s in facts.sections] == [("nvidia_smi", 4, 15)]
    gpus = facts.doc["gpus"]
    assert [(g["index"], g["pci_bus_id"]) for g in gpus] == [(0, "00000000:27:00.0"), (1, "00000000:2A:00.0")]
    assert gpus[0]["mig_enabled"] is False and "mig_enabled" not in gpus[1]  # GPU 1's third row is cut off
    assert gpus[0]["ecc_uncorrected"] == 0 and gpus[1]["memory_bytes"] == 81920 * MIB
    assert facts.doc["partial"]["gpus"].startswith("the pasted nvidia-smi table is cut short")
    assert "partial" not in read(P4).doc and "partial" not in read(TITAN).doc  # whole tables


def test_nvidia_smi_query_mig_mode() -> None:
    facts = read("nvidia_smi_q_a100_cudalibsamples104.txt")
    gpu = facts.doc["gpus"][0]
    assert gpu["mig_enabled"] is False and gpu["persistence_mode"] is True and gpu["name"] == "NVIDIA A100-SXM4-80GB"
    assert facts.doc["driver"]["cuda_driver_version"] == "11.4"
