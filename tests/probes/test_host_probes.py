"""System, network, library and toolkit probes over a fake /sys, /proc and PATH in tmp_path."""

from __future__ import annotations

import stat
import struct

from envdoctor.cpulist import format_cpulist, parse_cpulist
from envdoctor.probes import cuda_libs, fatbin, network, system, toolkit
from envdoctor.probes.base import ProbeContext
from envdoctor.processes import run_command
from envdoctor.redact import relevant_env, scrub_identity, scrub_secrets
from envdoctor.snapshot import Unavailable


def write(root, rel, text):
    p = root / rel.lstrip("/")
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text)
    return p


def test_system_probe_on_a_fake_tree(tmp_path):
    write(tmp_path, "/etc/os-release", 'NAME="Ubuntu"\nPRETTY_NAME="Ubuntu 22.04.4 LTS"\n')
    write(tmp_path, "/proc/cpuinfo", "model name\t: Intel(R) Xeon(R) Platinum 8480+\nphysical id\t: 0\n"
                                      "model name\t: Intel(R) Xeon(R) Platinum 8480+\nphysical id\t: 1\n")
    write(tmp_path, "/sys/devices/system/node/node0/cpulist", "0-55,112-167\n")
    write(tmp_path, "/sys/devices/system/node/node0/meminfo", "Node 0 MemTotal:       1056000000 kB\n")
    write(tmp_path, "/sys/devices/system/node/node1/cpulist", "56-111,168-223\n")
    (tmp_path / "sys/devices/system/node/node1/meminfo").mkdir()  # unreadable: a directory
    write(tmp_path, "/proc/cmdline", "BOOT_IMAGE=/vmlinuz ro iommu=pt\n")
    write(tmp_path, "/.dockerenv", "")
    write(tmp_path, "/dev/nvidia0", "")
    write(tmp_path, "/dev/nvidiactl", "")
    host = system.probe(ProbeContext(root=tmp_path, env={})).sections["host"]
    assert host.distro == "Ubuntu 22.04.4 LTS"
    assert host.cpu.model == "Intel(R) Xeon(R) Platinum 8480+" and host.cpu.sockets == 2
    assert [n.cpus for n in host.numa_nodes] == ["0-55,112-167", "56-111,168-223"]
    assert host.numa_nodes[0].memory_bytes == 1056000000 * 1024
    assert isinstance(host.numa_nodes[1].memory_bytes, Unavailable)
    assert host.iommu == "passthrough"
    assert host.container == "docker" and host.container_gpu_access is True
    assert host.wsl is False


def test_wsl_and_kubernetes_detection(tmp_path):
    write(tmp_path, "/proc/sys/kernel/osrelease", "5.15.153.1-microsoft-standard-WSL2\n")
    host = system.probe(ProbeContext(root=tmp_path, env={"KUBERNETES_SERVICE_HOST": "10.0.0.1"})).sections["host"]
    assert host.wsl is True and host.container == "kubernetes" and host.container_gpu_access is False


def test_acs_control_parsing():
    config = bytearray(4096)
    # extended capability list: AER (0x0001) at 0x100 -> ACS (0x000D) at 0x148 with ctrl = SrcValid|ReqRedir
    config[0x100:0x104] = struct.pack("<I", 0x0001 | (1 << 16) | (0x148 << 20))
    config[0x148:0x14C] = struct.pack("<I", 0x000D | (1 << 16))
    config[0x14E:0x150] = struct.pack("<H", 0b101)
    assert system._acs_control(bytes(config)) == 0b101
    assert system._acs_control(bytes(4096)) is None


def test_network_probe(tmp_path):
    write(tmp_path, "/sys/class/net/eth0/type", "1\n")
    write(tmp_path, "/sys/class/net/eth0/operstate", "up\n")
    write(tmp_path, "/sys/class/net/eth0/speed", "100000\n")
    write(tmp_path, "/sys/class/net/eth0/device/vendor", "0x15b3\n")
    write(tmp_path, "/sys/class/net/docker0/type", "1\n")
    (tmp_path / "sys/class/net/docker0/bridge").mkdir(parents=True)
    write(tmp_path, "/sys/class/net/ib0/type", "32\n")
    write(tmp_path, "/sys/class/net/ib0/speed", "-1\n")
    write(tmp_path, "/sys/class/infiniband/mlx5_0/ports/1/state", "4: ACTIVE\n")
    write(tmp_path, "/sys/class/infiniband/mlx5_0/ports/1/link_layer", "InfiniBand\n")
    write(tmp_path, "/proc/modules", "nvidia_peermem 16384 0 - Live 0x0\nnvidia 123 1 - Live 0x0\n")
    write(tmp_path, "/sys/bus/pci/devices/0000:05:00.0/vendor", "0x10de\n")
    write(tmp_path, "/sys/bus/pci/devices/0000:05:00.0/class", "0x068000\n")
    write(tmp_path, "/proc/4242/comm", "nv-fabricmanage\n")  # comm is cut to 15 chars
    out = network.probe(ProbeContext(root=tmp_path, env={"PATH": ""})).sections
    kinds = {i.name: i.kind for i in out["network"].interfaces}
    assert kinds == {"docker0": "bridge", "eth0": "ethernet", "ib0": "infiniband"}
    speeds = {i.name: i.speed_mbps for i in out["network"].interfaces}
    assert speeds["eth0"] == 100000 and isinstance(speeds["ib0"], Unavailable)
    rdma = out["network"].rdma_devices[0]
    assert (rdma.name, rdma.state, rdma.link_layer) == ("mlx5_0", "ACTIVE", "InfiniBand")
    assert out["network"].peermem_loaded is True
    fm = out["fabric_manager"]
    assert fm.nvswitch_present is True and fm.running is True and isinstance(fm.version, Unavailable)


def test_ldconfig_parsing_and_versions():
    text = ("1450 libs found in cache `/etc/ld.so.cache'\n"
            "\tlibcudnn.so.8 (libc6,x86-64) => /usr/lib/x86_64-linux-gnu/libcudnn.so.8\n"
            "\tlibnccl.so.2 (libc6,x86-64) => /usr/lib/x86_64-linux-gnu/libnccl.so.2\n")
    paths = cuda_libs.parse_ldconfig(text)
    assert paths == ["/usr/lib/x86_64-linux-gnu/libcudnn.so.8", "/usr/lib/x86_64-linux-gnu/libnccl.so.2"]
    assert cuda_libs.version_from_name("libcudnn.so.9.1.0") == "9.1.0"
    assert cuda_libs.version_from_name("libcudnn.so") is None


def test_library_copies_on_ld_library_path(tmp_path):
    lib = tmp_path / "cuda" / "lib64"
    lib.mkdir(parents=True)
    (lib / "libcudnn.so.8.6.0").write_text("")
    (lib / "libcudnn.so.8").symlink_to("libcudnn.so.8.6.0")
    (lib / "libaio.so.1").write_text("")
    out = cuda_libs.probe(ProbeContext(env={"LD_LIBRARY_PATH": str(lib), "PATH": ""})).sections
    versions = [c.version for c in out["libraries"].cudnn]
    assert "8.6.0" in versions and len(versions) == len(set(c.path for c in out["libraries"].cudnn))
    assert cuda_libs.probe(ProbeContext(env={"LD_LIBRARY_PATH": str(lib), "PATH": ""})).shared["libaio"] is True


def test_toolkit_probe_with_fake_nvcc(tmp_path):
    bindir = tmp_path / "cuda-12.4" / "bin"
    bindir.mkdir(parents=True)
    nvcc = bindir / "nvcc"
    nvcc.write_text("#!/bin/sh\necho 'Cuda compilation tools, release 12.4, V12.4.131'\n")
    nvcc.chmod(nvcc.stat().st_mode | stat.S_IEXEC)
    out = toolkit.probe(ProbeContext(env={"PATH": str(bindir)}, root=tmp_path / "empty")).sections
    tk = out["cuda_toolkit"]
    assert tk.nvcc_version == "12.4" and tk.cuda_home == str(tmp_path / "cuda-12.4")
    assert isinstance(out["build_tools"].ninja, Unavailable)


def _elf_with_fatbin(entries):
    """A minimal 64-bit little-endian ELF whose .nv_fatbin holds one fatbin with the given entries."""
    body = b""
    for kind, sm in entries:
        payload = b"\0" * 32
        header = struct.pack("<HHIIIIIII", kind, 0x0101, 64, len(payload), 0, len(payload), 0, 0, sm)
        header += b"\0" * (64 - len(header))
        body += header + payload
    fat = struct.pack("<IHHQ", fatbin.FATBIN_MAGIC, 1, 16, len(body)) + body
    shstr = b"\0.shstrtab\0.nv_fatbin\0"
    data_off = 64
    shstr_off = data_off + len(fat)
    sh_off = shstr_off + len(shstr)
    sh_off += (-sh_off) % 8

    def sh(name, off, size):
        return struct.pack("<IIQQQQIIQQ", name, 1, 0, 0, off, size, 0, 0, 1, 0)

    sections = sh(0, 0, 0) + sh(1, shstr_off, len(shstr)) + sh(11, data_off, len(fat))
    ident = b"\x7fELF" + bytes([2, 1, 1]) + b"\0" * 9
    header = ident + struct.pack("<HHIQQQIHHHHHH", 3, 62, 1, 0, 0, sh_off, 0, 64, 0, 0, 64, 3, 1)
    blob = header + fat + shstr
    return blob + b"\0" * (sh_off - len(blob)) + sections


def test_fatbin_reader_finds_sass_and_ptx(tmp_path):
    so = tmp_path / "flash_attn_cuda.so"
    so.write_bytes(_elf_with_fatbin([(2, 80), (2, 90), (1, 90)]))
    assert fatbin.archs_in_file(str(so)) == ["sm_80", "compute_90", "sm_90"]


def test_fatbin_reader_on_non_cuda_files(tmp_path):
    plain = tmp_path / "plain.so"
    plain.write_bytes(b"\x7fELF" + b"\0" * 200)
    assert fatbin.archs_in_file(str(plain)) == []
    text = tmp_path / "x.so"
    text.write_text("not an elf")
    assert fatbin.archs_in_file(str(text)) == []


def test_cpulists_round_trip():
    assert parse_cpulist("0-3,8,10-11") == [0, 1, 2, 3, 8, 10, 11]
    assert format_cpulist([11, 0, 1, 2, 3, 8, 10]) == "0-3,8,10-11"


def test_run_command_never_raises():
    assert run_command(["/nonexistent/binary"], 1).error == "not found"
    res = run_command(["sleep", "5"], 0.3)
    assert res.error.startswith("timed out") and res.seconds < 3


def test_environment_is_filtered_and_secrets_removed():
    env = relevant_env({"NCCL_DEBUG": "INFO", "HF_TOKEN": "hf_" + "a" * 30, "NCCL_IB_AUTH_TOKEN": "s3cret",
                        "PIP_INDEX_URL": "https://bob:hunter2@pypi.corp.example/simple", "HOME": "/home/bob",
                        "CUDA_VISIBLE_DEVICES": "0,1"})
    assert env == {"NCCL_DEBUG": "INFO", "NCCL_IB_AUTH_TOKEN": "<redacted>", "CUDA_VISIBLE_DEVICES": "0,1",
                   "PIP_INDEX_URL": "https://<redacted>@pypi.corp.example/simple"}
    assert "ghp_" not in scrub_secrets("token ghp_" + "x" * 36)
    assert scrub_identity("alice@gpu-7 /home/alice/x 10.1.2.3", ["gpu-7"], ["alice"]) == \
        "<user>@<host> /home/<user>/x <ip>"
