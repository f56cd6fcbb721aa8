"""Decoders of the snapshot's JSON, one per section class: GENERATED from envdoctor/snapshot.py by
`python -m envdoctor.snapshot_codec --write` (envdoctor/snapshot_codec.py writes them). Do not edit.

`decode(body, absent)` checks every value the schema describes and builds the model in one pass; it raises
`Invalid` at the first value the schema refuses.
"""

# ruff: noqa: E501
from __future__ import annotations

import functools
import re
from typing import Any, Dict

from envdoctor import snapshot as _s

_M = object()
_NOT_REPORTED = _s.NOT_REPORTED
_new = object.__new__
_NONE = type(None)
# Markers are immutable: one per reason text serves every snapshot of a fleet.
_marker = functools.lru_cache(maxsize=8192)(_s._marker)


class Invalid(ValueError):
    """The path of the first value the schema refuses (`gpus.1.compute_capability`)."""


class _Refused(Exception):
    pass


def _isint(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _isnum(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _null(ab: Dict[str, str], path: str, default: Any) -> Any:
    why = ab.get(path)
    return default if why is None else _marker(why)


def decode(body: Dict[str, Any], absent: Dict[str, str]) -> _s.Snapshot:
    """The Snapshot of a document's body (every key but `schema`, `partial` and `absent`, whose values are strings)."""
    try:
        return _dec_Snapshot(body, absent, "")
    except _Refused as exc:
        raise Invalid(str(exc.args[0]).rstrip(".") or "(top level)") from None


_c0 = frozenset(['darwin', 'linux', 'other', 'windows'])
_c1 = frozenset(['apptainer', 'docker', 'kubernetes', 'lxc', 'none', 'other', 'podman'])
_c2 = frozenset(['model', 'physical_cores', 'logical_cpus', 'sockets'])
_c3 = frozenset(['id', 'cpus', 'memory_bytes'])
_c4 = {str}
_c5 = frozenset(['os', 'arch', 'hostname', 'kernel', 'distro', 'glibc', 'container', 'wsl', 'cpu', 'memory_bytes', 'shm_bytes', 'numa_nodes', 'iommu', 'acs_enabled_bridges', 'container_gpu_access', 'gpu_device_nodes', 'process_cpus'])
_c6 = frozenset(['version', 'cuda_driver_version', 'source'])
_c7 = re.compile('^[0-9]+\\.[0-9]+$').search
_c8 = frozenset(['gen', 'max_gen', 'width', 'max_width'])
_c9 = frozenset(['links_active', 'version'])
_c10 = frozenset(['code', 'text'])
_c11 = frozenset(['dmesg', 'kmsg'])
_c12 = frozenset(['link', 'crc_flit', 'crc_data', 'replay', 'recovery'])
_c13 = {int}
_c14 = frozenset(['correctable', 'uncorrectable', 'pending', 'failed', 'histogram'])
_c15 = frozenset(['default', 'exclusive_process', 'exclusive_thread', 'prohibited'])
_c16 = frozenset(['throttle_reasons', 'xids', 'xid_source', 'nvlink_errors', 'row_remap', 'power_limit_w', 'power_default_w', 'temperature_c', 'slowdown_temperature_c', 'compute_mode', 'app_clock_mhz', 'default_app_clock_mhz', 'max_clock_mhz'])
_c17 = frozenset(['index', 'name', 'compute_capability', 'uuid', 'pci_bus_id', 'memory_bytes', 'numa_node', 'cpu_affinity', 'pcie', 'nvlink', 'mig_enabled', 'persistence_mode', 'ecc_uncorrected', 'retired_pages_pending', 'health'])
_c18 = frozenset(['conda', 'other', 'system', 'uv', 'venv'])
_c19 = frozenset(['version', 'implementation', 'executable', 'env_kind', 'externally_managed', 'packages', 'python_headers', 'free_threaded', 'pointer_bits', 'build_errors', 'interrupted_fix'])
_c20 = {bool}
_c21 = {str, _NONE}
_c22 = frozenset(['cwd', 'editable', 'other', 'pythonpath', 'site-packages', 'user-site'])
_c23 = frozenset(['file', 'kind', 'outside_site_packages', 'site_packages', 'dist_location'])
_c24 = frozenset(['version', 'works', 'error'])
_c25 = frozenset(['version', 'requires_torch', 'importable', 'error', 'nms_op', 'warnings', 'build_version'])
_c26 = frozenset(['required', 'installed'])
_c27 = frozenset(['path', 'file_version', 'dist', 'dist_version'])
_c28 = frozenset(['importable', 'error', 'version', 'cuda', 'hip', 'cudnn', 'nccl', 'arch_list', 'cuda_available', 'device_count', 'distributed_backends', 'loaded_libraries', 'cuda_init_error', 'path', 'origin', 'cwd_torch', 'cxx11_abi', 'numpy', 'companions', 'nvidia_wheels', 'mapped_cuda_libraries', 'missing_files'])
_c29 = frozenset(['failed', 'ok', 'skipped', 'timeout'])
_c30 = frozenset(['name', 'status', 'seconds', 'error'])
_c31 = {bool, _NONE}
_c32 = frozenset(['links', 'p2p'])
_c33 = frozenset(['nvcc_version', 'cuda_home', 'nvcc_path'])
_c34 = frozenset(['version', 'path'])
_c35 = frozenset(['cudnn', 'nccl', 'cudart', 'cublas'])
_c36 = frozenset(['version', 'importable', 'error', 'torch_info', 'ops_error', 'ops'])
_c37 = frozenset(['bridge', 'ethernet', 'infiniband', 'loopback', 'other', 'virtual'])
_c38 = frozenset(['name', 'up', 'kind', 'speed_mbps', 'addresses'])
_c39 = frozenset(['name', 'state', 'link_layer'])
_c40 = frozenset(['interfaces', 'rdma_devices', 'peermem_loaded'])
_c41 = frozenset(['nvswitch_present', 'running', 'version'])
_c42 = frozenset(['build record', 'requires-dist', 'wheel version'])
_c43 = frozenset(['name', 'version', 'arch_list', 'torch_version', 'cuda_version', 'torch_version_source', 'requires_torch', 'cxx11_abi', 'importable', 'import_error'])
_c44 = frozenset(['ninja', 'cc', 'cxx', 'libaio'])
_c45 = frozenset(['package', 'requirement', 'installed'])
_c46 = frozenset(['created', 'host', 'driver', 'gpus', 'python', 'torch', 'probes', 'topology', 'cuda_toolkit', 'libraries', 'deepspeed', 'env', 'network', 'fabric_manager', 'extensions', 'build_tools', 'requirement_conflicts'])


def _dec_Cpu(d: Dict[str, Any], ab: Dict[str, str], pre: str) -> _s.Cpu:
    g = d.get
    miss = 0
    v = g('model')
    if isinstance(v, str):
        f0 = v
    elif v is None:
        if 'model' in d:
            w = ab.get(pre + 'model') if ab else None
            f0 = _NOT_REPORTED if w is None else _marker(w)
        else:
            miss += 1
            f0 = _null(ab, pre + 'model', _s.NOT_PROBED) if ab else _s.NOT_PROBED
    else:
        raise _Refused(pre + 'model')
    v = g('physical_cores')
    if type(v) is int:
        f1 = v
    elif v is None:
        if 'physical_cores' in d:
            w = ab.get(pre + 'physical_cores') if ab else None
            f1 = _NOT_REPORTED if w is None else _marker(w)
        else:
            miss += 1
            f1 = _null(ab, pre + 'physical_cores', _s.NOT_PROBED) if ab else _s.NOT_PROBED
    elif _isint(v):
        f1 = v
    else:
        raise _Refused(pre + 'physical_cores')
    v = g('logical_cpus')
    if type(v) is int:
        f2 = v
    elif v is None:
        if 'logical_cpus' in d:
            w = ab.get(pre + 'logical_cpus') if ab else None
            f2 = _NOT_REPORTED if w is None else _marker(w)
        else:
            miss += 1
            f2 = _null(ab, pre + 'logical_cpus', _s.NOT_PROBED) if ab else _s.NOT_PROBED
    elif _isint(v):
        f2 = v
    else:
        raise _Refused(pre + 'logical_cpus')
    v = g('sockets')
    if type(v) is int:
        f3 = v
    elif v is None:
        if 'sockets' in d:
            w = ab.get(pre + 'sockets') if ab else None
            f3 = _NOT_REPORTED if w is None else _marker(w)
        else:
            miss += 1
            f3 = _null(ab, pre + 'sockets', _s.NOT_PROBED) if ab else _s.NOT_PROBED
    elif _isint(v):
        f3 = v
    else:
        raise _Refused(pre + 'sockets')
    if len(d) + miss != 4:
        ex = {k: w for k, w in d.items() if k not in _c2}
    else:
        ex = {}
    o = _new(_s.Cpu)
    o.__dict__ = {'extra': ex, 'model': f0, 'physical_cores': f1, 'logical_cpus': f2, 'sockets': f3}
    return o


def _dec_NumaNode(d: Dict[str, Any], ab: Dict[str, str], pre: str) -> _s.NumaNode:
    g = d.get
    miss = 0
    v = g('id')
    if type(v) is int:
        f0 = v
    elif v is None:
        if 'id' in d:
            raise _Refused(pre + 'id')
        else:
            raise _Refused(pre + 'id')
    elif _isint(v):
        f0 = v
    else:
        raise _Refused(pre + 'id')
    v = g('cpus')
    if isinstance(v, str):
        f1 = v
    elif v is None:
        if 'cpus' in d:
            w = ab.get(pre + 'cpus') if ab else None
            f1 = _NOT_REPORTED if w is None else _marker(w)
        else:
            miss += 1
            f1 = _null(ab, pre + 'cpus', _s.NOT_PROBED) if ab else _s.NOT_PROBED
    else:
        raise _Refused(pre + 'cpus')
    v = g('memory_bytes')
    if type(v) is int:
        f2 = v
    elif v is None:
        if 'memory_bytes' in d:
            w = ab.get(pre + 'memory_bytes') if ab else None
            f2 = _NOT_REPORTED if w is None else _marker(w)
        else:
            miss += 1
            f2 = _null(ab, pre + 'memory_bytes', _s.NOT_PROBED) if ab else _s.NOT_PROBED
    elif _isint(v):
        f2 = v
    else:
        raise _Refused(pre + 'memory_bytes')
    if len(d) + miss != 3:
        ex = {k: w for k, w in d.items() if k not in _c3}
    else:
        ex = {}
    o = _new(_s.NumaNode)
    o.__dict__ = {'extra': ex, 'id': f0, 'cpus': f1, 'memory_bytes': f2}
    return o


def _dec_Host(d: Dict[str, Any], ab: Dict[str, str], pre: str) -> _s.Host:
    g = d.get
    miss = 0
    v = g('os')
    if isinstance(v, str) and v in _c0:
        f0 = v
    elif v is None:
        if 'os' in d:
            raise _Refused(pre + 'os')
        else:
            raise _Refused(pre + 'os')
    else:
        raise _Refused(pre + 'os')
    v = g('arch')
    if isinstance(v, str):
        f1 = v
    elif v is None:
        if 'arch' in d:
            raise _Refused(pre + 'arch')
        else:
            raise _Refused(pre + 'arch')
    else:
        raise _Refused(pre + 'arch')
    v = g('hostname')
    if isinstance(v, str):
        f2 = v
    elif v is None:
        if 'hostname' in d:
            w = ab.get(pre + 'hostname') if ab else None
            f2 = _NOT_REPORTED if w is None else _marker(w)
        else:
            miss += 1
            f2 = _null(ab, pre + 'hostname', _s.NOT_PROBED) if ab else _s.NOT_PROBED
    else:
        raise _Refused(pre + 'hostname')
    v = g('kernel')
    if isinstance(v, str):
        f3 = v
    elif v is None:
        if 'kernel' in d:
            w = ab.get(pre + 'kernel') if ab else None
            f3 = _NOT_REPORTED if w is None else _marker(w)
        else:
            miss += 1
            f3 = _null(ab, pre + 'kernel', _s.NOT_PROBED) if ab else _s.NOT_PROBED
    else:
        raise _Refused(pre + 'kernel')
    v = g('distro')
    if isinstance(v, str):
        f4 = v
    elif v is None:
        if 'distro' in d:
            w = ab.get(pre + 'distro') if ab else None
            f4 = _NOT_REPORTED if w is None else _marker(w)
        else:
            miss += 1
            f4 = _null(ab, pre + 'distro', _s.NOT_PROBED) if ab else _s.NOT_PROBED
    else:
        raise _Refused(pre + 'distro')
    v = g('glibc')
    if isinstance(v, str):
        f5 = v
    elif v is None:
        if 'glibc' in d:
            w = ab.get(pre + 'glibc') if ab else None
            f5 = _NOT_REPORTED if w is None else _marker(w)
        else:
            miss += 1
            f5 = _null(ab, pre + 'glibc', _s.NOT_PROBED) if ab else _s.NOT_PROBED
    else:
        raise _Refused(pre + 'glibc')
    v = g('container')
    if isinstance(v, str) and v in _c1:
        f6 = v
    elif v is None:
        if 'container' in d:
            w = ab.get(pre + 'container') if ab else None
            f6 = _NOT_REPORTED if w is None else _marker(w)
        else:
            miss += 1
            f6 = _null(ab, pre + 'container', _s.NOT_PROBED) if ab else _s.NOT_PROBED
    else:
        raise _Refused(pre + 'container')
    v = g('wsl')
    if (v is True or v is False):
        f7 = v
    elif v is None:
        if 'wsl' in d:
            w = ab.get(pre + 'wsl') if ab else None
            f7 = _NOT_REPORTED if w is None else _marker(w)
        else:
            miss += 1
            f7 = _null(ab, pre + 'wsl', _s.NOT_PROBED) if ab else _s.NOT_PROBED
    else:
        raise _Refused(pre + 'wsl')
    v = g('cpu')
    if isinstance(v, dict):
        f8 = _dec_Cpu(v, ab, pre + 'cpu.')
    elif v is None:
        if 'cpu' in d:
            w = ab.get(pre + 'cpu') if ab else None
            f8 = _NOT_REPORTED if w is None else _marker(w)
        else:
            miss += 1
            f8 = _null(ab, pre + 'cpu', _s.NOT_PROBED) if ab else _s.NOT_PROBED
    else:
        raise _Refused(pre + 'cpu')
    v = g('memory_bytes')
    if type(v) is int:
        f9 = v
    elif v is None:
        if 'memory_bytes' in d:
            w = ab.get(pre + 'memory_bytes') if ab else None
            f9 = _NOT_REPORTED if w is None else _marker(w)
        else:
            miss += 1
            f9 = _null(ab, pre + 'memory_bytes', _s.NOT_PROBED) if ab else _s.NOT_PROBED
    elif _isint(v):
        f9 = v
    else:
        raise _Refused(pre + 'memory_bytes')
    v = g('shm_bytes')
    if type(v) is int:
        f10 = v
    elif v is None:
        if 'shm_bytes' in d:
            w = ab.get(pre + 'shm_bytes') if ab else None
            f10 = _NOT_REPORTED if w is None else _marker(w)
        else:
            miss += 1
            f10 = _null(ab, pre + 'shm_bytes', _s.NOT_PROBED) if ab else _s.NOT_PROBED
    elif _isint(v):
        f10 = v
    else:
        raise _Refused(pre + 'shm_bytes')
    v = g('numa_nodes')
    if isinstance(v, list):
        l3 = []
        for i1, x2 in enumerate(v):
            if isinstance(x2, dict):
                x2 = _dec_NumaNode(x2, ab, pre + 'numa_nodes' + '.' + str(i1) + '.')
            elif x2 is None:
                raise _Refused(pre + 'numa_nodes' + '.' + str(i1))
            else:
                raise _Refused(pre + 'numa_nodes' + '.' + str(i1))
            l3.append(x2)
        f11 = l3
    elif v is None:
        if 'numa_nodes' in d:
            w = ab.get(pre + 'numa_nodes') if ab else None
            f11 = _NOT_REPORTED if w is None else _marker(w)
        else:
            miss += 1
            f11 = _null(ab, pre + 'numa_nodes', _s.NOT_PROBED) if ab else _s.NOT_PROBED
    else:
        raise _Refused(pre + 'numa_nodes')
    v = g('iommu')
    if isinstance(v, str):
        f12 = v
    elif v is None:
        if 'iommu' in d:
            w = ab.get(pre + 'iommu') if ab else None
            f12 = _NOT_REPORTED if w is None else _marker(w)
        else:
            miss += 1
            f12 = _null(ab, pre + 'iommu', _s.NOT_PROBED) if ab else _s.NOT_PROBED
    else:
        raise _Refused(pre + 'iommu')
    v = g('acs_enabled_bridges')
    if type(v) is int:
        f13 = v
    elif v is None:
        if 'acs_enabled_bridges' in d:
            w = ab.get(pre + 'acs_enabled_bridges') if ab else None
            f13 = _NOT_REPORTED if w is None else _marker(w)
        else:
            miss += 1
            f13 = _null(ab, pre + 'acs_enabled_bridges', _s.NOT_PROBED) if ab else _s.NOT_PROBED
    elif _isint(v):
        f13 = v
    else:
        raise _Refused(pre + 'acs_enabled_bridges')
    v = g('container_gpu_access')
    if (v is True or v is False):
        f14 = v
    elif v is None:
        if 'container_gpu_access' in d:
            w = ab.get(pre + 'container_gpu_access') if ab else None
            f14 = _NOT_REPORTED if w is None else _marker(w)
        else:
            miss += 1
            f14 = _null(ab, pre + 'container_gpu_access', _s.NOT_PROBED) if ab else _s.NOT_PROBED
    else:
        raise _Refused(pre + 'container_gpu_access')
    v = g('gpu_device_nodes')
    if isinstance(v, list):
        if set(map(type, v)) <= _c4:
            f15 = v[:]
        else:
            l6 = []
            for i4, x5 in enumerate(v):
                if isinstance(x5, str):
                    x5 = x5
                elif x5 is None:
                    raise _Refused(pre + 'gpu_device_nodes' + '.' + str(i4))
                else:
                    raise _Refused(pre + 'gpu_device_nodes' + '.' + str(i4))
                l6.append(x5)
            f15 = l6
    elif v is None:
        if 'gpu_device_nodes' in d:
            w = ab.get(pre + 'gpu_device_nodes') if ab else None
            f15 = _NOT_REPORTED if w is None else _marker(w)
        else:
            miss += 1
            f15 = _null(ab, pre + 'gpu_device_nodes', _s.NOT_PROBED) if ab else _s.NOT_PROBED
    else:
        raise _Refused(pre + 'gpu_device_nodes')
    v = g('process_cpus')
    if isinstance(v, str):
        f16 = v
    elif v is None:
        if 'process_cpus' in d:
            w = ab.get(pre + 'process_cpus') if ab else None
            f16 = _NOT_REPORTED if w is None else _marker(w)
        else:
            miss += 1
            f16 = _null(ab, pre + 'process_cpus', _s.NOT_PROBED) if ab else _s.NOT_PROBED
    else:
        raise _Refused(pre + 'process_cpus')
    if len(d) + miss != 17:
        ex = {k: w for k, w in d.items() if k not in _c5}
    else:
        ex = {}
    o = _new(_s.Host)
    o.__dict__ = {'extra': ex, 'os': f0, 'arch': f1, 'hostname': f2, 'kernel': f3, 'distro': f4, 'glibc': f5, 'container': f6, 'wsl': f7, 'cpu': f8, 'memory_bytes': f9, 'shm_bytes': f10, 'numa_nodes': f11, 'iommu': f12, 'acs_enabled_bridges': f13, 'container_gpu_access': f14, 'gpu_device_nodes': f15, 'process_cpus': f16}
    return o


def _dec_Driver(d: Dict[str, Any], ab: Dict[str, str], pre: str) -> _s.Driver:
    g = d.get
    miss = 0
    v = g('version')
    if isinstance(v, str):
        f0 = v
    elif v is None:
        if 'version' in d:
            raise _Refused(pre + 'version')
        else:
            raise _Refused(pre + 'version')
    else:
        raise _Refused(pre + 'version')
    v = g('cuda_driver_version')
    if isinstance(v, str):
        f1 = v
    elif v is None:
        if 'cuda_driver_version' in d:
            w = ab.get(pre + 'cuda_driver_version') if ab else None
            f1 = _NOT_REPORTED if w is None else _marker(w)
        else:
            miss += 1
            f1 = _null(ab, pre + 'cuda_driver_version', _s.NOT_PROBED) if ab else _s.NOT_PROBED
    else:
        raise _Refused(pre + 'cuda_driver_version')
    v = g('source')
    if isinstance(v, str):
        f2 = v
    elif v is None:
        if 'source' in d:
            w = ab.get(pre + 'source') if ab else None
            f2 = _NOT_REPORTED if w is None else _marker(w)
        else:
            miss += 1
            f2 = _null(ab, pre + 'source', _s.NOT_PROBED) if ab else _s.NOT_PROBED
    else:
        raise _Refused(pre + 'source')
    if len(d) + miss != 3:
        ex = {k: w for k, w in d.items() if k not in _c6}
    else:
        ex = {}
    o = _new(_s.Driver)
    o.__dict__ = {'extra': ex, 'version': f0, 'cuda_driver_version': f1, 'source': f2}
    return o


def _dec_Pcie(d: Dict[str, Any], ab: Dict[str, str], pre: str) -> _s.Pcie:
    g = d.get
    miss = 0
    v = g('gen')
    if type(v) is int:
        f0 = v
    elif v is None:
        if 'gen' in d:
            w = ab.get(pre + 'gen') if ab else None
            f0 = _NOT_REPORTED if w is None else _marker(w)
        else:
            miss += 1
            f0 = _null(ab, pre + 'gen', _s.NOT_PROBED) if ab else _s.NOT_PROBED
    elif _isint(v):
        f0 = v
    else:
        raise _Refused(pre + 'gen')
    v = g('max_gen')
    if type(v) is int:
        f1 = v
    elif v is None:
        if 'max_gen' in d:
            w = ab.get(pre + 'max_gen') if ab else None
            f1 = _NOT_REPORTED if w is None else _marker(w)
        else:
            miss += 1
            f1 = _null(ab, pre + 'max_gen', _s.NOT_PROBED) if ab else _s.NOT_PROBED
    elif _isint(v):
        f1 = v
    else:
        raise _Refused(pre + 'max_gen')
    v = g('width')
    if type(v) is int:
        f2 = v
    elif v is None:
        if 'width' in d:
            w = ab.get(pre + 'width') if ab else None
            f2 = _NOT_REPORTED if w is None else _marker(w)
        else:
            miss += 1
            f2 = _null(ab, pre + 'width', _s.NOT_PROBED) if ab else _s.NOT_PROBED
    elif _isint(v):
        f2 = v
    else:
        raise _Refused(pre + 'width')
    v = g('max_width')
    if type(v) is int:
        f3 = v
    elif v is None:
        if 'max_width' in d:
            w = ab.get(pre + 'max_width') if ab else None
            f3 = _NOT_REPORTED if w is None else _marker(w)
        else:
            miss += 1
            f3 = _null(ab, pre + 'max_width', _s.NOT_PROBED) if ab else _s.NOT_PROBED
    elif _isint(v):
        f3 = v
    else:
        raise _Refused(pre + 'max_width')
    if len(d) + miss != 4:
        ex = {k: w for k, w in d.items() if k not in _c8}
    else:
        ex = {}
    o = _new(_s.Pcie)
    o.__dict__ = {'extra': ex, 'gen': f0, 'max_gen': f1, 'width': f2, 'max_width': f3}
    return o


def _dec_NvLink(d: Dict[str, Any], ab: Dict[str, str], pre: str) -> _s.NvLink:
    g = d.get
    miss = 0
    v = g('links_active')
    if type(v) is int:
        f0 = v
    elif v is None:
        if 'links_active' in d:
            w = ab.get(pre + 'links_active') if ab else None
            f0 = _NOT_REPORTED if w is None else _marker(w)
        else:
            miss += 1
            f0 = _null(ab, pre + 'links_active', _s.NOT_PROBED) if ab else _s.NOT_PROBED
    elif _isint(v):
        f0 = v
    else:
        raise _Refused(pre + 'links_active')
    v = g('version')
    if type(v) is int:
        f1 = v
    elif v is None:
        if 'version' in d:
            w = ab.get(pre + 'version') if ab else None
            f1 = _NOT_REPORTED if w is None else _marker(w)
        else:
            miss += 1
            f1 = _null(ab, pre + 'version', _s.NOT_PROBED) if ab else _s.NOT_PROBED
    elif _isint(v):
        f1 = v
    else:
        raise _Refused(pre + 'version')
    if len(d) + miss != 2:
        ex = {k: w for k, w in d.items() if k not in _c9}
    else:
        ex = {}
    o = _new(_s.NvLink)
    o.__dict__ = {'extra': ex, 'links_active': f0, 'version': f1}
    return o


def _dec_Xid(d: Dict[str, Any], ab: Dict[str, str], pre: str) -> _s.Xid:
    g = d.get
    miss = 0
    v = g('code')
    if type(v) is int:
        f0 = v
    elif v is None:
        if 'code' in d:
            raise _Refused(pre + 'code')
        else:
            raise _Refused(pre + 'code')
    elif _isint(v):
        f0 = v
    else:
        raise _Refused(pre + 'code')
    v = g('text')
    if isinstance(v, str):
        f1 = v
    elif v is None:
        if 'text' in d:
            w = ab.get(pre + 'text') if ab else None
            f1 = _NOT_REPORTED if w is None else _marker(w)
        else:
            miss += 1
            f1 = _null(ab, pre + 'text', _s.NOT_PROBED) if ab else _s.NOT_PROBED
    else:
        raise _Refused(pre + 'text')
    if len(d) + miss != 2:
        ex = {k: w for k, w in d.items() if k not in _c10}
    else:
        ex = {}
    o = _new(_s.Xid)
    o.__dict__ = {'extra': ex, 'code': f0, 'text': f1}
    return o


def _dec_NvLinkErrors(d: Dict[str, Any], ab: Dict[str, str], pre: str) -> _s.NvLinkErrors:
    g = d.get
    miss = 0
    v = g('link')
    if type(v) is int:
        f0 = v
    elif v is None:
        if 'link' in d:
            raise _Refused(pre + 'link')
        else:
            raise _Refused(pre + 'link')
    elif _isint(v):
        f0 = v
    else:
        raise _Refused(pre + 'link')
    v = g('crc_flit')
    if type(v) is int:
        f1 = v
    elif v is None:
        if 'crc_flit' in d:
            w = ab.get(pre + 'crc_flit') if ab else None
            f1 = _NOT_REPORTED if w is None else _marker(w)
        else:
            miss += 1
            f1 = _null(ab, pre + 'crc_flit', _s.NOT_PROBED) if ab else _s.NOT_PROBED
    elif _isint(v):
        f1 = v
    else:
        raise _Refused(pre + 'crc_flit')
    v = g('crc_data')
    if type(v) is int:
        f2 = v
    elif v is None:
        if 'crc_data' in d:
            w = ab.get(pre + 'crc_data') if ab else None
            f2 = _NOT_REPORTED if w is None else _marker(w)
        else:
            miss += 1
            f2 = _null(ab, pre + 'crc_data', _s.NOT_PROBED) if ab else _s.NOT_PROBED
    elif _isint(v):
        f2 = v
    else:
        raise _Refused(pre + 'crc_data')
    v = g('replay')
    if type(v) is int:
        f3 = v
    elif v is None:
        if 'replay' in d:
            w = ab.get(pre + 'replay') if ab else None
            f3 = _NOT_REPORTED if w is None else _marker(w)
        else:
            miss += 1
            f3 = _null(ab, pre + 'replay', _s.NOT_PROBED) if ab else _s.NOT_PROBED
    elif _isint(v):
        f3 = v
    else:
        raise _Refused(pre + 'replay')
    v = g('recovery')
    if type(v) is int:
        f4 = v
    elif v is None:
        if 'recovery' in d:
            w = ab.get(pre + 'recovery') if ab else None
            f4 = _NOT_REPORTED if w is None else _marker(w)
        else:
            miss += 1
            f4 = _null(ab, pre + 'recovery', _s.NOT_PROBED) if ab else _s.NOT_PROBED
    elif _isint(v):
        f4 = v
    else:
        raise _Refused(pre + 'recovery')
    if len(d) + miss != 5:
        ex = {k: w for k, w in d.items() if k not in _c12}
    else:
        ex = {}
    o = _new(_s.NvLinkErrors)
    o.__dict__ = {'extra': ex, 'link': f0, 'crc_flit': f1, 'crc_data': f2, 'replay': f3, 'recovery': f4}
    return o


def _dec_RowRemap(d: Dict[str, Any], ab: Dict[str, str], pre: str) -> _s.RowRemap:
    g = d.get
    miss = 0
    v = g('correctable')
    if type(v) is int:
        f0 = v
    elif v is None:
        if 'correctable' in d:
            w = ab.get(pre + 'correctable') if ab else None
            f0 = _NOT_REPORTED if w is None else _marker(w)
        else:
            miss += 1
            f0 = _null(ab, pre + 'correctable', _s.NOT_PROBED) if ab else _s.NOT_PROBED
    elif _isint(v):
        f0 = v
    else:
        raise _Refused(pre + 'correctable')
    v = g('uncorrectable')
    if type(v) is int:
        f1 = v
    elif v is None:
        if 'uncorrectable' in d:
            w = ab.get(pre + 'uncorrectable') if ab else None
            f1 = _NOT_REPORTED if w is None else _marker(w)
        else:
            miss += 1
            f1 = _null(ab, pre + 'uncorrectable', _s.NOT_PROBED) if ab else _s.NOT_PROBED
    elif _isint(v):
        f1 = v
    else:
        raise _Refused(pre + 'uncorrectable')
    v = g('pending')
    if (v is True or v is False):
        f2 = v
    elif v is None:
        if 'pending' in d:
            w = ab.get(pre + 'pending') if ab else None
            f2 = _NOT_REPORTED if w is None else _marker(w)
        else:
            miss += 1
            f2 = _null(ab, pre + 'pending', _s.NOT_PROBED) if ab else _s.NOT_PROBED
    else:
        raise _Refused(pre + 'pending')
    v = g('failed')
    if (v is True or v is False):
        f3 = v
    elif v is None:
        if 'failed' in d:
            w = ab.get(pre + 'failed') if ab else None
            f3 = _NOT_REPORTED if w is None else _marker(w)
        else:
            miss += 1
            f3 = _null(ab, pre + 'failed', _s.NOT_PROBED) if ab else _s.NOT_PROBED
    else:
        raise _Refused(pre + 'failed')
    v = g('histogram')
    if isinstance(v, dict):
        if set(map(type, v.values())) <= _c13:
            f4 = dict(v)
        else:
            m21 = {}
            for k19, x20 in v.items():
                if type(x20) is int:
                    x20 = x20
                elif x20 is None:
                    raise _Refused(pre + 'histogram' + '.' + k19)
                elif _isint(x20):
                    x20 = x20
                else:
                    raise _Refused(pre + 'histogram' + '.' + k19)
                m21[k19] = x20
            f4 = m21
    elif v is None:
        if 'histogram' in d:
            w = ab.get(pre + 'histogram') if ab else None
            f4 = _NOT_REPORTED if w is None else _marker(w)
        else:
            miss += 1
            f4 = _null(ab, pre + 'histogram', _s.NOT_PROBED) if ab else _s.NOT_PROBED
    else:
        raise _Refused(pre + 'histogram')
    if len(d) + miss != 5:
        ex = {k: w for k, w in d.items() if k not in _c14}
    else:
        ex = {}
    o = _new(_s.RowRemap)
    o.__dict__ = {'extra': ex, 'correctable': f0, 'uncorrectable': f1, 'pending': f2, 'failed': f3, 'histogram': f4}
    return o


def _dec_GpuHealth(d: Dict[str, Any], ab: Dict[str, str], pre: str) -> _s.GpuHealth:
    g = d.get
    miss = 0
    v = g('throttle_reasons')
    if isinstance(v, list):
        if set(map(type, v)) <= _c4:
            f0 = v[:]
        else:
            l12 = []
            for i10, x11 in enumerate(v):
                if isinstance(x11, str):
                    x11 = x11
                elif x11 is None:
                    raise _Refused(pre + 'throttle_reasons' + '.' + str(i10))
                else:
                    raise _Refused(pre + 'throttle_reasons' + '.' + str(i10))
                l12.append(x11)
            f0 = l12
    elif v is None:
        if 'throttle_reasons' in d:
            w = ab.get(pre + 'throttle_reasons') if ab else None
            f0 = _NOT_REPORTED if w is None else _marker(w)
        else:
            miss += 1
            f0 = _null(ab, pre + 'throttle_reasons', _s.NOT_PROBED) if ab else _s.NOT_PROBED
    else:
        raise _Refused(pre + 'throttle_reasons')
    v = g('xids')
    if isinstance(v, list):
        l15 = []
        for i13, x14 in enumerate(v):
            if isinstance(x14, dict):
                x14 = _dec_Xid(x14, ab, pre + 'xids' + '.' + str(i13) + '.')
            elif x14 is None:
                raise _Refused(pre + 'xids' + '.' + str(i13))
            else:
                raise _Refused(pre + 'xids' + '.' + str(i13))
            l15.append(x14)
        f1 = l15
    elif v is None:
        if 'xids' in d:
            w = ab.get(pre + 'xids') if ab else None
            f1 = _NOT_REPORTED if w is None else _marker(w)
        else:
            miss += 1
            f1 = _null(ab, pre + 'xids', _s.NOT_PROBED) if ab else _s.NOT_PROBED
    else:
        raise _Refused(pre + 'xids')
    v = g('xid_source')
    if isinstance(v, str) and v in _c11:
        f2 = v
    elif v is None:
        if 'xid_source' in d:
            w = ab.get(pre + 'xid_source') if ab else None
            f2 = _NOT_REPORTED if w is None else _marker(w)
        else:
            miss += 1
            f2 = _null(ab, pre + 'xid_source', _s.NOT_PROBED) if ab else _s.NOT_PROBED
    else:
        raise _Refused(pre + 'xid_source')
    v = g('nvlink_errors')
    if isinstance(v, list):
        l18 = []
        for i16, x17 in enumerate(v):
            if isinstance(x17, dict):
                x17 = _dec_NvLinkErrors(x17, ab, pre + 'nvlink_errors' + '.' + str(i16) + '.')
            elif x17 is None:
                raise _Refused(pre + 'nvlink_errors' + '.' + str(i16))
            else:
                raise _Refused(pre + 'nvlink_errors' + '.' + str(i16))
            l18.append(x17)
        f3 = l18
    elif v is None:
        if 'nvlink_errors' in d:
            w = ab.get(pre + 'nvlink_errors') if ab else None
            f3 = _NOT_REPORTED if w is None else _marker(w)
        else:
            miss += 1
            f3 = _null(ab, pre + 'nvlink_errors', _s.NOT_PROBED) if ab else _s.NOT_PROBED
    else:
        raise _Refused(pre + 'nvlink_errors')
    v = g('row_remap')
    if isinstance(v, dict):
        f4 = _dec_RowRemap(v, ab, pre + 'row_remap.')
    elif v is None:
        if 'row_remap' in d:
            w = ab.get(pre + 'row_remap') if ab else None
            f4 = _NOT_REPORTED if w is None else _marker(w)
        else:
            miss += 1
            f4 = _null(ab, pre + 'row_remap', _s.NOT_PROBED) if ab else _s.NOT_PROBED
    else:
        raise _Refused(pre + 'row_remap')
    v = g('power_limit_w')
    if (type(v) is float or type(v) is int):
        f5 = v
    elif v is None:
        if 'power_limit_w' in d:
            w = ab.get(pre + 'power_limit_w') if ab else None
            f5 = _NOT_REPORTED if w is None else _marker(w)
        else:
            miss += 1
            f5 = _null(ab, pre + 'power_limit_w', _s.NOT_PROBED) if ab else _s.NOT_PROBED
    elif _isnum(v):
        f5 = v
    else:
        raise _Refused(pre + 'power_limit_w')
    v = g('power_default_w')
    if (type(v) is float or type(v) is int):
        f6 = v
    elif v is None:
        if 'power_default_w' in d:
            w = ab.get(pre + 'power_default_w') if ab else None
            f6 = _NOT_REPORTED if w is None else _marker(w)
        else:
            miss += 1
            f6 = _null(ab, pre + 'power_default_w', _s.NOT_PROBED) if ab else _s.NOT_PROBED
    elif _isnum(v):
        f6 = v
    else:
        raise _Refused(pre + 'power_default_w')
    v = g('temperature_c')
    if type(v) is int:
        f7 = v
    elif v is None:
        if 'temperature_c' in d:
            w = ab.get(pre + 'temperature_c') if ab else None
            f7 = _NOT_REPORTED if w is None else _marker(w)
        else:
            miss += 1
            f7 = _null(ab, pre + 'temperature_c', _s.NOT_PROBED) if ab else _s.NOT_PROBED
    elif _isint(v):
        f7 = v
    else:
        raise _Refused(pre + 'temperature_c')
    v = g('slowdown_temperature_c')
    if type(v) is int:
        f8 = v
    elif v is None:
        if 'slowdown_temperature_c' in d:
            w = ab.get(pre + 'slowdown_temperature_c') if ab else None
            f8 = _NOT_REPORTED if w is None else _marker(w)
        else:
            miss += 1
            f8 = _null(ab, pre + 'slowdown_temperature_c', _s.NOT_PROBED) if ab else _s.NOT_PROBED
    elif _isint(v):
        f8 = v
    else:
        raise _Refused(pre + 'slowdown_temperature_c')
    v = g('compute_mode')
    if isinstance(v, str) and v in _c15:
        f9 = v
    elif v is None:
        if 'compute_mode' in d:
            w = ab.get(pre + 'compute_mode') if ab else None
            f9 = _NOT_REPORTED if w is None else _marker(w)
        else:
            miss += 1
            f9 = _null(ab, pre + 'compute_mode', _s.NOT_PROBED) if ab else _s.NOT_PROBED
    else:
        raise _Refused(pre + 'compute_mode')
    v = g('app_clock_mhz')
    if type(v) is int:
        f10 = v
    elif v is None:
        if 'app_clock_mhz' in d:
            w = ab.get(pre + 'app_clock_mhz') if ab else None
            f10 = _NOT_REPORTED if w is None else _marker(w)
        else:
            miss += 1
            f10 = _null(ab, pre + 'app_clock_mhz', _s.NOT_PROBED) if ab else _s.NOT_PROBED
    elif _isint(v):
        f10 = v
    else:
        raise _Refused(pre + 'app_clock_mhz')
    v = g('default_app_clock_mhz')
    if type(v) is int:
        f11 = v
    elif v is None:
        if 'default_app_clock_mhz' in d:
            w = ab.get(pre + 'default_app_clock_mhz') if ab else None
            f11 = _NOT_REPORTED if w is None else _marker(w)
        else:
            miss += 1
            f11 = _null(ab, pre + 'default_app_clock_mhz', _s.NOT_PROBED) if ab else _s.NOT_PROBED
    elif _isint(v):
        f11 = v
    else:
        raise _Refused(pre + 'default_app_clock_mhz')
    v = g('max_clock_mhz')
    if type(v) is int:
        f12 = v
    elif v is None:
        if 'max_clock_mhz' in d:
            w = ab.get(pre + 'max_clock_mhz') if ab else None
            f12 = _NOT_REPORTED if w is None else _marker(w)
        else:
            miss += 1
            f12 = _null(ab, pre + 'max_clock_mhz', _s.NOT_PROBED) if ab else _s.NOT_PROBED
    elif _isint(v):
        f12 = v
    else:
        raise _Refused(pre + 'max_clock_mhz')
    if len(d) + miss != 13:
        ex = {k: w for k, w in d.items() if k not in _c16}
    else:
        ex = {}
    o = _new(_s.GpuHealth)
    o.__dict__ = {'extra': ex, 'throttle_reasons': f0, 'xids': f1, 'xid_source': f2, 'nvlink_errors': f3, 'row_remap': f4, 'power_limit_w': f5, 'power_default_w': f6, 'temperature_c': f7, 'slowdown_temperature_c': f8, 'compute_mode': f9, 'app_clock_mhz': f10, 'default_app_clock_mhz': f11, 'max_clock_mhz': f12}
    return o


def _dec_Gpu(d: Dict[str, Any], ab: Dict[str, str], pre: str) -> _s.Gpu:
    g = d.get
    miss = 0
    v = g('index')
    if type(v) is int:
        f0 = v
    elif v is None:
        if 'index' in d:
            raise _Refused(pre + 'index')
        else:
            raise _Refused(pre + 'index')
    elif _isint(v):
        f0 = v
    else:
        raise _Refused(pre + 'index')
    v = g('name')
    if isinstance(v, str):
        f1 = v
    elif v is None:
        if 'name' in d:
            w = ab.get(pre + 'name') if ab else None
            f1 = _NOT_REPORTED if w is None else _marker(w)
        else:
            raise _Refused(pre + 'name')
    else:
        raise _Refused(pre + 'name')
    v = g('compute_capability')
    if isinstance(v, str) and _c7(v) is not None:
        f2 = v
    elif v is None:
        if 'compute_capability' in d:
            w = ab.get(pre + 'compute_capability') if ab else None
            f2 = _NOT_REPORTED if w is None else _marker(w)
        else:
            raise _Refused(pre + 'compute_capability')
    else:
        raise _Refused(pre + 'compute_capability')
    v = g('uuid')
    if isinstance(v, str):
        f3 = v
    elif v is None:
        if 'uuid' in d:
            w = ab.get(pre + 'uuid') if ab else None
            f3 = _NOT_REPORTED if w is None else _marker(w)
        else:
            miss += 1
            f3 = _null(ab, pre + 'uuid', _s.NOT_PROBED) if ab else _s.NOT_PROBED
    else:
        raise _Refused(pre + 'uuid')
    v = g('pci_bus_id')
    if isinstance(v, str):
        f4 = v
    elif v is None:
        if 'pci_bus_id' in d:
            w = ab.get(pre + 'pci_bus_id') if ab else None
            f4 = _NOT_REPORTED if w is None else _marker(w)
        else:
            miss += 1
            f4 = _null(ab, pre + 'pci_bus_id', _s.NOT_PROBED) if ab else _s.NOT_PROBED
    else:
        raise _Refused(pre + 'pci_bus_id')
    v = g('memory_bytes')
    if type(v) is int:
        f5 = v
    elif v is None:
        if 'memory_bytes' in d:
            w = ab.get(pre + 'memory_bytes') if ab else None
            f5 = _NOT_REPORTED if w is None else _marker(w)
        else:
            miss += 1
            f5 = _null(ab, pre + 'memory_bytes', _s.NOT_PROBED) if ab else _s.NOT_PROBED
    elif _isint(v):
        f5 = v
    else:
        raise _Refused(pre + 'memory_bytes')
    v = g('numa_node')
    if type(v) is int:
        f6 = v
    elif v is None:
        if 'numa_node' in d:
            w = ab.get(pre + 'numa_node') if ab else None
            f6 = _NOT_REPORTED if w is None else _marker(w)
        else:
            miss += 1
            f6 = _null(ab, pre + 'numa_node', _s.NOT_PROBED) if ab else _s.NOT_PROBED
    elif _isint(v):
        f6 = v
    else:
        raise _Refused(pre + 'numa_node')
    v = g('cpu_affinity')
    if isinstance(v, str):
        f7 = v
    elif v is None:
        if 'cpu_affinity' in d:
            w = ab.get(pre + 'cpu_affinity') if ab else None
            f7 = _NOT_REPORTED if w is None else _marker(w)
        else:
            miss += 1
            f7 = _null(ab, pre + 'cpu_affinity', _s.NOT_PROBED) if ab else _s.NOT_PROBED
    else:
        raise _Refused(pre + 'cpu_affinity')
    v = g('pcie')
    if isinstance(v, dict):
        f8 = _dec_Pcie(v, ab, pre + 'pcie.')
    elif v is None:
        if 'pcie' in d:
            w = ab.get(pre + 'pcie') if ab else None
            f8 = _NOT_REPORTED if w is None else _marker(w)
        else:
            miss += 1
            f8 = _null(ab, pre + 'pcie', _s.NOT_PROBED) if ab else _s.NOT_PROBED
    else:
        raise _Refused(pre + 'pcie')
    v = g('nvlink')
    if isinstance(v, dict):
        f9 = _dec_NvLink(v, ab, pre + 'nvlink.')
    elif v is None:
        if 'nvlink' in d:
            w = ab.get(pre + 'nvlink') if ab else None
            f9 = _NOT_REPORTED if w is None else _marker(w)
        else:
            miss += 1
            f9 = _null(ab, pre + 'nvlink', _s.NOT_PROBED) if ab else _s.NOT_PROBED
    else:
        raise _Refused(pre + 'nvlink')
    v = g('mig_enabled')
    if (v is True or v is False):
        f10 = v
    elif v is None:
        if 'mig_enabled' in d:
            w = ab.get(pre + 'mig_enabled') if ab else None
            f10 = _NOT_REPORTED if w is None else _marker(w)
        else:
            miss += 1
            f10 = _null(ab, pre + 'mig_enabled', _s.NOT_PROBED) if ab else _s.NOT_PROBED
    else:
        raise _Refused(pre + 'mig_enabled')
    v = g('persistence_mode')
    if (v is True or v is False):
        f11 = v
    elif v is None:
        if 'persistence_mode' in d:
            w = ab.get(pre + 'persistence_mode') if ab else None
            f11 = _NOT_REPORTED if w is None else _marker(w)
        else:
            miss += 1
            f11 = _null(ab, pre + 'persistence_mode', _s.NOT_PROBED) if ab else _s.NOT_PROBED
    else:
        raise _Refused(pre + 'persistence_mode')
    v = g('ecc_uncorrected')
    if type(v) is int:
        f12 = v
    elif v is None:
        if 'ecc_uncorrected' in d:
            w = ab.get(pre + 'ecc_uncorrected') if ab else None
            f12 = _NOT_REPORTED if w is None else _marker(w)
        else:
            miss += 1
            f12 = _null(ab, pre + 'ecc_uncorrected', _s.NOT_PROBED) if ab else _s.NOT_PROBED
    elif _isint(v):
        f12 = v
    else:
        raise _Refused(pre + 'ecc_uncorrected')
    v = g('retired_pages_pending')
    if (v is True or v is False):
        f13 = v
    elif v is None:
        if 'retired_pages_pending' in d:
            w = ab.get(pre + 'retired_pages_pending') if ab else None
            f13 = _NOT_REPORTED if w is None else _marker(w)
        else:
            miss += 1
            f13 = _null(ab, pre + 'retired_pages_pending', _s.NOT_PROBED) if ab else _s.NOT_PROBED
    else:
        raise _Refused(pre + 'retired_pages_pending')
    v = g('health')
    if isinstance(v, dict):
        f14 = _dec_GpuHealth(v, ab, pre + 'health.')
    elif v is None:
        if 'health' in d:
            w = ab.get(pre + 'health') if ab else None
            f14 = _NOT_REPORTED if w is None else _marker(w)
        else:
            miss += 1
            f14 = _null(ab, pre + 'health', _s.NOT_RECORDED) if ab else _s.NOT_RECORDED
    else:
        raise _Refused(pre + 'health')
    if len(d) + miss != 15:
        ex = {k: w for k, w in d.items() if k not in _c17}
    else:
        ex = {}
    o = _new(_s.Gpu)
    o.__dict__ = {'extra': ex, 'index': f0, 'name': f1, 'compute_capability': f2, 'uuid': f3, 'pci_bus_id': f4, 'memory_bytes': f5, 'numa_node': f6, 'cpu_affinity': f7, 'pcie': f8, 'nvlink': f9, 'mig_enabled': f10, 'persistence_mode': f11, 'ecc_uncorrected': f12, 'retired_pages_pending': f13, 'health': f14}
    return o


def _dec_PythonEnv(d: Dict[str, Any], ab: Dict[str, str], pre: str) -> _s.PythonEnv:
    g = d.get
    miss = 0
    v = g('version')
    if isinstance(v, str):
        f0 = v
    elif v is None:
        if 'version' in d:
            raise _Refused(pre + 'version')
        else:
            raise _Refused(pre + 'version')
    else:
        raise _Refused(pre + 'version')
    v = g('implementation')
    if isinstance(v, str):
        f1 = v
    elif v is None:
        if 'implementation' in d:
            w = ab.get(pre + 'implementation') if ab else None
            f1 = _NOT_REPORTED if w is None else _marker(w)
        else:
            miss += 1
            f1 = _null(ab, pre + 'implementation', _s.NOT_PROBED) if ab else _s.NOT_PROBED
    else:
        raise _Refused(pre + 'implementation')
    v = g('executable')
    if isinstance(v, str):
        f2 = v
    elif v is None:
        if 'executable' in d:
            w = ab.get(pre + 'executable') if ab else None
            f2 = _NOT_REPORTED if w is None else _marker(w)
        else:
            miss += 1
            f2 = _null(ab, pre + 'executable', _s.NOT_PROBED) if ab else _s.NOT_PROBED
    else:
        raise _Refused(pre + 'executable')
    v = g('env_kind')
    if isinstance(v, str) and v in _c18:
        f3 = v
    elif v is None:
        if 'env_kind' in d:
            w = ab.get(pre + 'env_kind') if ab else None
            f3 = _NOT_REPORTED if w is None else _marker(w)
        else:
            miss += 1
            f3 = _null(ab, pre + 'env_kind', _s.NOT_PROBED) if ab else _s.NOT_PROBED
    else:
        raise _Refused(pre + 'env_kind')
    v = g('externally_managed')
    if (v is True or v is False):
        f4 = v
    elif v is None:
        if 'externally_managed' in d:
            w = ab.get(pre + 'externally_managed') if ab else None
            f4 = _NOT_REPORTED if w is None else _marker(w)
        else:
            miss += 1
            f4 = _null(ab, pre + 'externally_managed', _s.NOT_PROBED) if ab else _s.NOT_PROBED
    else:
        raise _Refused(pre + 'externally_managed')
    v = g('packages')
    if isinstance(v, dict):
        if set(map(type, v.values())) <= _c4:
            f5 = dict(v)
        else:
            m24 = {}
            for k22, x23 in v.items():
                if isinstance(x23, str):
                    x23 = x23
                elif x23 is None:
                    raise _Refused(pre + 'packages' + '.' + k22)
                else:
                    raise _Refused(pre + 'packages' + '.' + k22)
                m24[k22] = x23
            f5 = m24
    elif v is None:
        if 'packages' in d:
            w = ab.get(pre + 'packages') if ab else None
            f5 = _NOT_REPORTED if w is None else _marker(w)
        else:
            miss += 1
            f5 = _null(ab, pre + 'packages', _s.NOT_PROBED) if ab else _s.NOT_PROBED
    else:
        raise _Refused(pre + 'packages')
    v = g('python_headers')
    if (v is True or v is False):
        f6 = v
    elif v is None:
        if 'python_headers' in d:
            w = ab.get(pre + 'python_headers') if ab else None
            f6 = _NOT_REPORTED if w is None else _marker(w)
        else:
            miss += 1
            f6 = _null(ab, pre + 'python_headers', _s.NOT_PROBED) if ab else _s.NOT_PROBED
    else:
        raise _Refused(pre + 'python_headers')
    v = g('free_threaded')
    if (v is True or v is False):
        f7 = v
    elif v is None:
        if 'free_threaded' in d:
            w = ab.get(pre + 'free_threaded') if ab else None
            f7 = _NOT_REPORTED if w is None else _marker(w)
        else:
            miss += 1
            f7 = _null(ab, pre + 'free_threaded', _s.NOT_RECORDED) if ab else _s.NOT_RECORDED
    else:
        raise _Refused(pre + 'free_threaded')
    v = g('pointer_bits')
    if type(v) is int:
        f8 = v
    elif v is None:
        if 'pointer_bits' in d:
            w = ab.get(pre + 'pointer_bits') if ab else None
            f8 = _NOT_REPORTED if w is None else _marker(w)
        else:
            miss += 1
            f8 = _null(ab, pre + 'pointer_bits', _s.NOT_RECORDED) if ab else _s.NOT_RECORDED
    elif _isint(v):
        f8 = v
    else:
        raise _Refused(pre + 'pointer_bits')
    v = g('build_errors')
    if isinstance(v, dict):
        if set(map(type, v.values())) <= _c4:
            f9 = dict(v)
        else:
            m27 = {}
            for k25, x26 in v.items():
                if isinstance(x26, str):
                    x26 = x26
                elif x26 is None:
                    raise _Refused(pre + 'build_errors' + '.' + k25)
                else:
                    raise _Refused(pre + 'build_errors' + '.' + k25)
                m27[k25] = x26
            f9 = m27
    elif v is None:
        if 'build_errors' in d:
            w = ab.get(pre + 'build_errors') if ab else None
            f9 = _NOT_REPORTED if w is None else _marker(w)
        else:
            miss += 1
            f9 = _null(ab, pre + 'build_errors', _s.NOT_RECORDED) if ab else _s.NOT_RECORDED
    else:
        raise _Refused(pre + 'build_errors')
    v = g('interrupted_fix')
    if isinstance(v, str):
        f10 = v
    elif v is None:
        if 'interrupted_fix' in d:
            w = ab.get(pre + 'interrupted_fix') if ab else None
            f10 = _NOT_REPORTED if w is None else _marker(w)
        else:
            miss += 1
            f10 = _null(ab, pre + 'interrupted_fix', _s.NOT_RECORDED) if ab else _s.NOT_RECORDED
    else:
        raise _Refused(pre + 'interrupted_fix')
    if len(d) + miss != 11:
        ex = {k: w for k, w in d.items() if k not in _c19}
    else:
        ex = {}
    o = _new(_s.PythonEnv)
    o.__dict__ = {'extra': ex, 'version': f0, 'implementation': f1, 'executable': f2, 'env_kind': f3, 'externally_managed': f4, 'packages': f5, 'python_headers': f6, 'free_threaded': f7, 'pointer_bits': f8, 'build_errors': f9, 'interrupted_fix': f10}
    return o


def _dec_TorchOrigin(d: Dict[str, Any], ab: Dict[str, str], pre: str) -> _s.TorchOrigin:
    g = d.get
    miss = 0
    v = g('file')
    if isinstance(v, str):
        f0 = v
    elif v is None:
        if 'file' in d:
            w = ab.get(pre + 'file') if ab else None
            f0 = _NOT_REPORTED if w is None else _marker(w)
        else:
            miss += 1
            f0 = _null(ab, pre + 'file', _s.NOT_PROBED) if ab else _s.NOT_PROBED
    else:
        raise _Refused(pre + 'file')
    v = g('kind')
    if isinstance(v, str) and v in _c22:
        f1 = v
    elif v is None:
        if 'kind' in d:
            w = ab.get(pre + 'kind') if ab else None
            f1 = _NOT_REPORTED if w is None else _marker(w)
        else:
            miss += 1
            f1 = _null(ab, pre + 'kind', _s.NOT_PROBED) if ab else _s.NOT_PROBED
    else:
        raise _Refused(pre + 'kind')
    v = g('outside_site_packages')
    if (v is True or v is False):
        f2 = v
    elif v is None:
        if 'outside_site_packages' in d:
            w = ab.get(pre + 'outside_site_packages') if ab else None
            f2 = _NOT_REPORTED if w is None else _marker(w)
        else:
            miss += 1
            f2 = _null(ab, pre + 'outside_site_packages', _s.NOT_PROBED) if ab else _s.NOT_PROBED
    else:
        raise _Refused(pre + 'outside_site_packages')
    v = g('site_packages')
    if isinstance(v, list):
        if set(map(type, v)) <= _c4:
            f3 = v[:]
        else:
            l40 = []
            for i38, x39 in enumerate(v):
                if isinstance(x39, str):
                    x39 = x39
                elif x39 is None:
                    raise _Refused(pre + 'site_packages' + '.' + str(i38))
                else:
                    raise _Refused(pre + 'site_packages' + '.' + str(i38))
                l40.append(x39)
            f3 = l40
    elif v is None:
        if 'site_packages' in d:
            w = ab.get(pre + 'site_packages') if ab else None
            f3 = _NOT_REPORTED if w is None else _marker(w)
        else:
            miss += 1
            f3 = _null(ab, pre + 'site_packages', _s.NOT_PROBED) if ab else _s.NOT_PROBED
    else:
        raise _Refused(pre + 'site_packages')
    v = g('dist_location')
    if isinstance(v, str):
        f4 = v
    elif v is None:
        if 'dist_location' in d:
            w = ab.get(pre + 'dist_location') if ab else None
            f4 = _NOT_REPORTED if w is None else _marker(w)
        else:
            miss += 1
            f4 = _null(ab, pre + 'dist_location', _s.NOT_PROBED) if ab else _s.NOT_PROBED
    else:
        raise _Refused(pre + 'dist_location')
    if len(d) + miss != 5:
        ex = {k: w for k, w in d.items() if k not in _c23}
    else:
        ex = {}
    o = _new(_s.TorchOrigin)
    o.__dict__ = {'extra': ex, 'file': f0, 'kind': f1, 'outside_site_packages': f2, 'site_packages': f3, 'dist_location': f4}
    return o


def _dec_NumpyBridge(d: Dict[str, Any], ab: Dict[str, str], pre: str) -> _s.NumpyBridge:
    g = d.get
    miss = 0
    v = g('version')
    if isinstance(v, str):
        f0 = v
    elif v is None:
        if 'version' in d:
            w = ab.get(pre + 'version') if ab else None
            f0 = _NOT_REPORTED if w is None else _marker(w)
        else:
            miss += 1
            f0 = _null(ab, pre + 'version', _s.NOT_PROBED) if ab else _s.NOT_PROBED
    else:
        raise _Refused(pre + 'version')
    v = g('works')
    if (v is True or v is False):
        f1 = v
    elif v is None:
        if 'works' in d:
            w = ab.get(pre + 'works') if ab else None
            f1 = _NOT_REPORTED if w is None else _marker(w)
        else:
            miss += 1
            f1 = _null(ab, pre + 'works', _s.NOT_PROBED) if ab else _s.NOT_PROBED
    else:
        raise _Refused(pre + 'works')
    v = g('error')
    if isinstance(v, str):
        f2 = v
    elif v is None:
        if 'error' in d:
            w = ab.get(pre + 'error') if ab else None
            f2 = None if w is None else _marker(w)
        else:
            miss += 1
            f2 = _null(ab, pre + 'error', None) if ab else None
    else:
        raise _Refused(pre + 'error')
    if len(d) + miss != 3:
        ex = {k: w for k, w in d.items() if k not in _c24}
    else:
        ex = {}
    o = _new(_s.NumpyBridge)
    o.__dict__ = {'extra': ex, 'version': f0, 'works': f1, 'error': f2}
    return o


def _dec_Companion(d: Dict[str, Any], ab: Dict[str, str], pre: str) -> _s.Companion:
    g = d.get
    miss = 0
    v = g('version')
    if isinstance(v, str):
        f0 = v
    elif v is None:
        if 'version' in d:
            w = ab.get(pre + 'version') if ab else None
            f0 = _NOT_REPORTED if w is None else _marker(w)
        else:
            miss += 1
            f0 = _null(ab, pre + 'version', _s.NOT_PROBED) if ab else _s.NOT_PROBED
    else:
        raise _Refused(pre + 'version')
    v = g('requires_torch')
    if isinstance(v, str):
        f1 = v
    elif v is None:
        if 'requires_torch' in d:
            w = ab.get(pre + 'requires_torch') if ab else None
            f1 = _NOT_REPORTED if w is None else _marker(w)
        else:
            miss += 1
            f1 = _null(ab, pre + 'requires_torch', _s.NOT_PROBED) if ab else _s.NOT_PROBED
    else:
        raise _Refused(pre + 'requires_torch')
    v = g('importable')
    if (v is True or v is False):
        f2 = v
    elif v is None:
        if 'importable' in d:
            w = ab.get(pre + 'importable') if ab else None
            f2 = _NOT_REPORTED if w is None else _marker(w)
        else:
            miss += 1
            f2 = _null(ab, pre + 'importable', _s.NOT_PROBED) if ab else _s.NOT_PROBED
    else:
        raise _Refused(pre + 'importable')
    v = g('error')
    if isinstance(v, str):
        f3 = v
    elif v is None:
        if 'error' in d:
            w = ab.get(pre + 'error') if ab else None
            f3 = None if w is None else _marker(w)
        else:
            miss += 1
            f3 = _null(ab, pre + 'error', None) if ab else None
    else:
        raise _Refused(pre + 'error')
    v = g('nms_op')
    if (v is True or v is False):
        f4 = v
    elif v is None:
        if 'nms_op' in d:
            w = ab.get(pre + 'nms_op') if ab else None
            f4 = _NOT_REPORTED if w is None else _marker(w)
        else:
            miss += 1
            f4 = _null(ab, pre + 'nms_op', _s.NOT_PROBED) if ab else _s.NOT_PROBED
    else:
        raise _Refused(pre + 'nms_op')
    v = g('warnings')
    if isinstance(v, list):
        if set(map(type, v)) <= _c4:
            f5 = v[:]
        else:
            l46 = []
            for i44, x45 in enumerate(v):
                if isinstance(x45, str):
                    x45 = x45
                elif x45 is None:
                    raise _Refused(pre + 'warnings' + '.' + str(i44))
                else:
                    raise _Refused(pre + 'warnings' + '.' + str(i44))
                l46.append(x45)
            f5 = l46
    elif v is None:
        if 'warnings' in d:
            w = ab.get(pre + 'warnings') if ab else None
            f5 = _NOT_REPORTED if w is None else _marker(w)
        else:
            miss += 1
            f5 = _null(ab, pre + 'warnings', _s.NOT_PROBED) if ab else _s.NOT_PROBED
    else:
        raise _Refused(pre + 'warnings')
    v = g('build_version')
    if isinstance(v, str):
        f6 = v
    elif v is None:
        if 'build_version' in d:
            w = ab.get(pre + 'build_version') if ab else None
            f6 = _NOT_REPORTED if w is None else _marker(w)
        else:
            miss += 1
            f6 = _null(ab, pre + 'build_version', _s.NOT_RECORDED) if ab else _s.NOT_RECORDED
    else:
        raise _Refused(pre + 'build_version')
    if len(d) + miss != 7:
        ex = {k: w for k, w in d.items() if k not in _c25}
    else:
        ex = {}
    o = _new(_s.Companion)
    o.__dict__ = {'extra': ex, 'version': f0, 'requires_torch': f1, 'importable': f2, 'error': f3, 'nms_op': f4, 'warnings': f5, 'build_version': f6}
    return o


def _dec_NvidiaWheel(d: Dict[str, Any], ab: Dict[str, str], pre: str) -> _s.NvidiaWheel:
    g = d.get
    miss = 0
    v = g('required')
    if isinstance(v, str):
        f0 = v
    elif v is None:
        if 'required' in d:
            w = ab.get(pre + 'required') if ab else None
            f0 = _NOT_REPORTED if w is None else _marker(w)
        else:
            miss += 1
            f0 = _null(ab, pre + 'required', _s.NOT_PROBED) if ab else _s.NOT_PROBED
    else:
        raise _Refused(pre + 'required')
    v = g('installed')
    if isinstance(v, str):
        f1 = v
    elif v is None:
        if 'installed' in d:
            w = ab.get(pre + 'installed') if ab else None
            f1 = _NOT_REPORTED if w is None else _marker(w)
        else:
            miss += 1
            f1 = _null(ab, pre + 'installed', _s.NOT_PROBED) if ab else _s.NOT_PROBED
    else:
        raise _Refused(pre + 'installed')
    if len(d) + miss != 2:
        ex = {k: w for k, w in d.items() if k not in _c26}
    else:
        ex = {}
    o = _new(_s.NvidiaWheel)
    o.__dict__ = {'extra': ex, 'required': f0, 'installed': f1}
    return o


def _dec_MappedLibrary(d: Dict[str, Any], ab: Dict[str, str], pre: str) -> _s.MappedLibrary:
    g = d.get
    miss = 0
    v = g('path')
    if isinstance(v, str):
        f0 = v
    elif v is None:
        if 'path' in d:
            raise _Refused(pre + 'path')
        else:
            raise _Refused(pre + 'path')
    else:
        raise _Refused(pre + 'path')
    v = g('file_version')
    if isinstance(v, str):
        f1 = v
    elif v is None:
        if 'file_version' in d:
            w = ab.get(pre + 'file_version') if ab else None
            f1 = _NOT_REPORTED if w is None else _marker(w)
        else:
            miss += 1
            f1 = _null(ab, pre + 'file_version', _s.NOT_PROBED) if ab else _s.NOT_PROBED
    else:
        raise _Refused(pre + 'file_version')
    v = g('dist')
    if isinstance(v, str):
        f2 = v
    elif v is None:
        if 'dist' in d:
            w = ab.get(pre + 'dist') if ab else None
            f2 = _NOT_REPORTED if w is None else _marker(w)
        else:
            miss += 1
            f2 = _null(ab, pre + 'dist', _s.NOT_PROBED) if ab else _s.NOT_PROBED
    else:
        raise _Refused(pre + 'dist')
    v = g('dist_version')
    if isinstance(v, str):
        f3 = v
    elif v is None:
        if 'dist_version' in d:
            w = ab.get(pre + 'dist_version') if ab else None
            f3 = _NOT_REPORTED if w is None else _marker(w)
        else:
            miss += 1
            f3 = _null(ab, pre + 'dist_version', _s.NOT_PROBED) if ab else _s.NOT_PROBED
    else:
        raise _Refused(pre + 'dist_version')
    if len(d) + miss != 4:
        ex = {k: w for k, w in d.items() if k not in _c27}
    else:
        ex = {}
    o = _new(_s.MappedLibrary)
    o.__dict__ = {'extra': ex, 'path': f0, 'file_version': f1, 'dist': f2, 'dist_version': f3}
    return o


def _dec_Torch(d: Dict[str, Any], ab: Dict[str, str], pre: str) -> _s.Torch:
    g = d.get
    miss = 0
    v = g('importable')
    if (v is True or v is False):
        f0 = v
    elif v is None:
        if 'importable' in d:
            raise _Refused(pre + 'importable')
        else:
            raise _Refused(pre + 'importable')
    else:
        raise _Refused(pre + 'importable')
    v = g('error')
    if isinstance(v, str):
        f1 = v
    elif v is None:
        if 'error' in d:
            w = ab.get(pre + 'error') if ab else None
            f1 = None if w is None else _marker(w)
        else:
            miss += 1
            f1 = _null(ab, pre + 'error', None) if ab else None
    else:
        raise _Refused(pre + 'error')
    v = g('version')
    if isinstance(v, str):
        f2 = v
    elif v is None:
        if 'version' in d:
            w = ab.get(pre + 'version') if ab else None
            f2 = _NOT_REPORTED if w is None else _marker(w)
        else:
            miss += 1
            f2 = _null(ab, pre + 'version', _s.NOT_PROBED) if ab else _s.NOT_PROBED
    else:
        raise _Refused(pre + 'version')
    v = g('cuda')
    if isinstance(v, str):
        f3 = v
    elif v is None:
        if 'cuda' in d:
            w = ab.get(pre + 'cuda') if ab else None
            f3 = _NOT_REPORTED if w is None else _marker(w)
        else:
            miss += 1
            f3 = _null(ab, pre + 'cuda', _s.NOT_PROBED) if ab else _s.NOT_PROBED
    else:
        raise _Refused(pre + 'cuda')
    v = g('hip')
    if isinstance(v, str):
        f4 = v
    elif v is None:
        if 'hip' in d:
            w = ab.get(pre + 'hip') if ab else None
            f4 = _NOT_REPORTED if w is None else _marker(w)
        else:
            miss += 1
            f4 = _null(ab, pre + 'hip', _s.NOT_PROBED) if ab else _s.NOT_PROBED
    else:
        raise _Refused(pre + 'hip')
    v = g('cudnn')
    if isinstance(v, str):
        f5 = v
    elif v is None:
        if 'cudnn' in d:
            w = ab.get(pre + 'cudnn') if ab else None
            f5 = _NOT_REPORTED if w is None else _marker(w)
        else:
            miss += 1
            f5 = _null(ab, pre + 'cudnn', _s.NOT_PROBED) if ab else _s.NOT_PROBED
    else:
        raise _Refused(pre + 'cudnn')
    v = g('nccl')
    if isinstance(v, str):
        f6 = v
    elif v is None:
        if 'nccl' in d:
            w = ab.get(pre + 'nccl') if ab else None
            f6 = _NOT_REPORTED if w is None else _marker(w)
        else:
            miss += 1
            f6 = _null(ab, pre + 'nccl', _s.NOT_PROBED) if ab else _s.NOT_PROBED
    else:
        raise _Refused(pre + 'nccl')
    v = g('arch_list')
    if isinstance(v, list):
        if set(map(type, v)) <= _c4:
            f7 = v[:]
        else:
            l30 = []
            for i28, x29 in enumerate(v):
                if isinstance(x29, str):
                    x29 = x29
                elif x29 is None:
                    raise _Refused(pre + 'arch_list' + '.' + str(i28))
                else:
                    raise _Refused(pre + 'arch_list' + '.' + str(i28))
                l30.append(x29)
            f7 = l30
    elif v is None:
        if 'arch_list' in d:
            w = ab.get(pre + 'arch_list') if ab else None
            f7 = _NOT_REPORTED if w is None else _marker(w)
        else:
            miss += 1
            f7 = _null(ab, pre + 'arch_list', _s.NOT_PROBED) if ab else _s.NOT_PROBED
    else:
        raise _Refused(pre + 'arch_list')
    v = g('cuda_available')
    if (v is True or v is False):
        f8 = v
    elif v is None:
        if 'cuda_available' in d:
            w = ab.get(pre + 'cuda_available') if ab else None
            f8 = _NOT_REPORTED if w is None else _marker(w)
        else:
            miss += 1
            f8 = _null(ab, pre + 'cuda_available', _s.NOT_PROBED) if ab else _s.NOT_PROBED
    else:
        raise _Refused(pre + 'cuda_available')
    v = g('device_count')
    if type(v) is int:
        f9 = v
    elif v is None:
        if 'device_count' in d:
            w = ab.get(pre + 'device_count') if ab else None
            f9 = _NOT_REPORTED if w is None else _marker(w)
        else:
            miss += 1
            f9 = _null(ab, pre + 'device_count', _s.NOT_PROBED) if ab else _s.NOT_PROBED
    elif _isint(v):
        f9 = v
    else:
        raise _Refused(pre + 'device_count')
    v = g('distributed_backends')
    if isinstance(v, dict):
        if set(map(type, v.values())) <= _c20:
            f10 = dict(v)
        else:
            m33 = {}
            for k31, x32 in v.items():
                if (x32 is True or x32 is False):
                    x32 = x32
                elif x32 is None:
                    raise _Refused(pre + 'distributed_backends' + '.' + k31)
                else:
                    raise _Refused(pre + 'distributed_backends' + '.' + k31)
                m33[k31] = x32
            f10 = m33
    elif v is None:
        if 'distributed_backends' in d:
            w = ab.get(pre + 'distributed_backends') if ab else None
            f10 = _NOT_REPORTED if w is None else _marker(w)
        else:
            miss += 1
            f10 = _null(ab, pre + 'distributed_backends', _s.NOT_PROBED) if ab else _s.NOT_PROBED
    else:
        raise _Refused(pre + 'distributed_backends')
    v = g('loaded_libraries')
    if isinstance(v, dict):
        if set(map(type, v.values())) <= _c21:
            f11 = dict(v)
            if ab and None in v.values():
                for k34, w in v.items():
                    if w is None:
                        f11[k34] = _null(ab, pre + 'loaded_libraries' + '.' + k34, None)
        else:
            m37 = {}
            for k35, x36 in v.items():
                if isinstance(x36, str):
                    x36 = x36
                elif x36 is None:
                    w = ab.get(pre + 'loaded_libraries' + '.' + k35) if ab else None
                    x36 = None if w is None else _marker(w)
                else:
                    raise _Refused(pre + 'loaded_libraries' + '.' + k35)
                m37[k35] = x36
            f11 = m37
    elif v is None:
        if 'loaded_libraries' in d:
            w = ab.get(pre + 'loaded_libraries') if ab else None
            f11 = _NOT_REPORTED if w is None else _marker(w)
        else:
            miss += 1
            f11 = _null(ab, pre + 'loaded_libraries', _s.NOT_PROBED) if ab else _s.NOT_PROBED
    else:
        raise _Refused(pre + 'loaded_libraries')
    v = g('cuda_init_error')
    if isinstance(v, str):
        f12 = v
    elif v is None:
        if 'cuda_init_error' in d:
            w = ab.get(pre + 'cuda_init_error') if ab else None
            f12 = None if w is None else _marker(w)
        else:
            miss += 1
            f12 = _null(ab, pre + 'cuda_init_error', None) if ab else None
    else:
        raise _Refused(pre + 'cuda_init_error')
    v = g('path')
    if isinstance(v, str):
        f13 = v
    elif v is None:
        if 'path' in d:
            w = ab.get(pre + 'path') if ab else None
            f13 = _NOT_REPORTED if w is None else _marker(w)
        else:
            miss += 1
            f13 = _null(ab, pre + 'path', _s.NOT_PROBED) if ab else _s.NOT_PROBED
    else:
        raise _Refused(pre + 'path')
    v = g('origin')
    if isinstance(v, dict):
        f14 = _dec_TorchOrigin(v, ab, pre + 'origin.')
    elif v is None:
        if 'origin' in d:
            w = ab.get(pre + 'origin') if ab else None
            f14 = _NOT_REPORTED if w is None else _marker(w)
        else:
            miss += 1
            f14 = _null(ab, pre + 'origin', _s.NOT_RECORDED) if ab else _s.NOT_RECORDED
    else:
        raise _Refused(pre + 'origin')
    v = g('cwd_torch')
    if isinstance(v, str):
        f15 = v
    elif v is None:
        if 'cwd_torch' in d:
            w = ab.get(pre + 'cwd_torch') if ab else None
            f15 = _NOT_REPORTED if w is None else _marker(w)
        else:
            miss += 1
            f15 = _null(ab, pre + 'cwd_torch', _s.NOT_RECORDED) if ab else _s.NOT_RECORDED
    else:
        raise _Refused(pre + 'cwd_torch')
    v = g('cxx11_abi')
    if (v is True or v is False):
        f16 = v
    elif v is None:
        if 'cxx11_abi' in d:
            w = ab.get(pre + 'cxx11_abi') if ab else None
            f16 = _NOT_REPORTED if w is None else _marker(w)
        else:
            miss += 1
            f16 = _null(ab, pre + 'cxx11_abi', _s.NOT_RECORDED) if ab else _s.NOT_RECORDED
    else:
        raise _Refused(pre + 'cxx11_abi')
    v = g('numpy')
    if isinstance(v, dict):
        f17 = _dec_NumpyBridge(v, ab, pre + 'numpy.')
    elif v is None:
        if 'numpy' in d:
            w = ab.get(pre + 'numpy') if ab else None
            f17 = _NOT_REPORTED if w is None else _marker(w)
        else:
            miss += 1
            f17 = _null(ab, pre + 'numpy', _s.NOT_RECORDED) if ab else _s.NOT_RECORDED
    else:
        raise _Refused(pre + 'numpy')
    v = g('companions')
    if isinstance(v, dict):
        m43 = {}
        for k41, x42 in v.items():
            if isinstance(x42, dict):
                x42 = _dec_Companion(x42, ab, pre + 'companions' + '.' + k41 + '.')
            elif x42 is None:
                raise _Refused(pre + 'companions' + '.' + k41)
            else:
                raise _Refused(pre + 'companions' + '.' + k41)
            m43[k41] = x42
        f18 = m43
    elif v is None:
        if 'companions' in d:
            w = ab.get(pre + 'companions') if ab else None
            f18 = _NOT_REPORTED if w is None else _marker(w)
        else:
            miss += 1
            f18 = _null(ab, pre + 'companions', _s.NOT_RECORDED) if ab else _s.NOT_RECORDED
    else:
        raise _Refused(pre + 'companions')
    v = g('nvidia_wheels')
    if isinstance(v, dict):
        m49 = {}
        for k47, x48 in v.items():
            if isinstance(x48, dict):
                x48 = _dec_NvidiaWheel(x48, ab, pre + 'nvidia_wheels' + '.' + k47 + '.')
            elif x48 is None:
                raise _Refused(pre + 'nvidia_wheels' + '.' + k47)
            else:
                raise _Refused(pre + 'nvidia_wheels' + '.' + k47)
            m49[k47] = x48
        f19 = m49
    elif v is None:
        if 'nvidia_wheels' in d:
            w = ab.get(pre + 'nvidia_wheels') if ab else None
            f19 = _NOT_REPORTED if w is None else _marker(w)
        else:
            miss += 1
            f19 = _null(ab, pre + 'nvidia_wheels', _s.NOT_RECORDED) if ab else _s.NOT_RECORDED
    else:
        raise _Refused(pre + 'nvidia_wheels')
    v = g('mapped_cuda_libraries')
    if isinstance(v, list):
        l52 = []
        for i50, x51 in enumerate(v):
            if isinstance(x51, dict):
                x51 = _dec_MappedLibrary(x51, ab, pre + 'mapped_cuda_libraries' + '.' + str(i50) + '.')
            elif x51 is None:
                raise _Refused(pre + 'mapped_cuda_libraries' + '.' + str(i50))
            else:
                raise _Refused(pre + 'mapped_cuda_libraries' + '.' + str(i50))
            l52.append(x51)
        f20 = l52
    elif v is None:
        if 'mapped_cuda_libraries' in d:
            w = ab.get(pre + 'mapped_cuda_libraries') if ab else None
            f20 = _NOT_REPORTED if w is None else _marker(w)
        else:
            miss += 1
            f20 = _null(ab, pre + 'mapped_cuda_libraries', _s.NOT_RECORDED) if ab else _s.NOT_RECORDED
    else:
        raise _Refused(pre + 'mapped_cuda_libraries')
    v = g('missing_files')
    if isinstance(v, list):
        if set(map(type, v)) <= _c4:
            f21 = v[:]
        else:
            l55 = []
            for i53, x54 in enumerate(v):
                if isinstance(x54, str):
                    x54 = x54
                elif x54 is None:
                    raise _Refused(pre + 'missing_files' + '.' + str(i53))
                else:
                    raise _Refused(pre + 'missing_files' + '.' + str(i53))
                l55.append(x54)
            f21 = l55
    elif v is None:
        if 'missing_files' in d:
            w = ab.get(pre + 'missing_files') if ab else None
            f21 = _NOT_REPORTED if w is None else _marker(w)
        else:
            miss += 1
            f21 = _null(ab, pre + 'missing_files', _s.NOT_RECORDED) if ab else _s.NOT_RECORDED
    else:
        raise _Refused(pre + 'missing_files')
    if len(d) + miss != 22:
        ex = {k: w for k, w in d.items() if k not in _c28}
    else:
        ex = {}
    o = _new(_s.Torch)
    o.__dict__ = {'extra': ex, 'importable': f0, 'error': f1, 'version': f2, 'cuda': f3, 'hip': f4, 'cudnn': f5, 'nccl': f6, 'arch_list': f7, 'cuda_available': f8, 'device_count': f9, 'distributed_backends': f10, 'loaded_libraries': f11, 'cuda_init_error': f12, 'path': f13, 'origin': f14, 'cwd_torch': f15, 'cxx11_abi': f16, 'numpy': f17, 'companions': f18, 'nvidia_wheels': f19, 'mapped_cuda_libraries': f20, 'missing_files': f21}
    return o


def _dec_ProbeRecord(d: Dict[str, Any], ab: Dict[str, str], pre: str) -> _s.ProbeRecord:
    g = d.get
    miss = 0
    v = g('name')
    if isinstance(v, str):
        f0 = v
    elif v is None:
        if 'name' in d:
            raise _Refused(pre + 'name')
        else:
            raise _Refused(pre + 'name')
    else:
        raise _Refused(pre + 'name')
    v = g('status')
    if isinstance(v, str) and v in _c29:
        f1 = v
    elif v is None:
        if 'status' in d:
            raise _Refused(pre + 'status')
        else:
            raise _Refused(pre + 'status')
    else:
        raise _Refused(pre + 'status')
    v = g('seconds')
    if (type(v) is float or type(v) is int):
        f2 = v
    elif v is None:
        if 'seconds' in d:
            w = ab.get(pre + 'seconds') if ab else None
            f2 = None if w is None else _marker(w)
        else:
            miss += 1
            f2 = _null(ab, pre + 'seconds', None) if ab else None
    elif _isnum(v):
        f2 = v
    else:
        raise _Refused(pre + 'seconds')
    v = g('error')
    if isinstance(v, str):
        f3 = v
    elif v is None:
        if 'error' in d:
            w = ab.get(pre + 'error') if ab else None
            f3 = None if w is None else _marker(w)
        else:
            miss += 1
            f3 = _null(ab, pre + 'error', None) if ab else None
    else:
        raise _Refused(pre + 'error')
    if len(d) + miss != 4:
        ex = {k: w for k, w in d.items() if k not in _c30}
    else:
        ex = {}
    o = _new(_s.ProbeRecord)
    o.__dict__ = {'extra': ex, 'name': f0, 'status': f1, 'seconds': f2, 'error': f3}
    return o


def _dec_Topology(d: Dict[str, Any], ab: Dict[str, str], pre: str) -> _s.Topology:
    g = d.get
    miss = 0
    v = g('links')
    if isinstance(v, list):
        l61 = []
        for i59, x60 in enumerate(v):
            if isinstance(x60, list):
                if set(map(type, x60)) <= _c4:
                    x60 = x60[:]
                else:
                    l64 = []
                    for i62, x63 in enumerate(x60):
                        if isinstance(x63, str):
                            x63 = x63
                        elif x63 is None:
                            raise _Refused(pre + 'links' + '.' + str(i59) + '.' + str(i62))
                        else:
                            raise _Refused(pre + 'links' + '.' + str(i59) + '.' + str(i62))
                        l64.append(x63)
                    x60 = l64
            elif x60 is None:
                raise _Refused(pre + 'links' + '.' + str(i59))
            else:
                raise _Refused(pre + 'links' + '.' + str(i59))
            l61.append(x60)
        f0 = l61
    elif v is None:
        if 'links' in d:
            raise _Refused(pre + 'links')
        else:
            miss += 1
            f0 = _null(ab, pre + 'links', list()) if ab else list()
    else:
        raise _Refused(pre + 'links')
    v = g('p2p')
    if isinstance(v, list):
        l67 = []
        for i65, x66 in enumerate(v):
            if isinstance(x66, list):
                if set(map(type, x66)) <= _c31:
                    x66 = x66[:]
                    if ab and None in x66:
                        for k68, w in enumerate(x66):
                            if w is None:
                                x66[k68] = _null(ab, pre + 'p2p' + '.' + str(i65) + '.' + str(k68), None)
                else:
                    l71 = []
                    for i69, x70 in enumerate(x66):
                        if (x70 is True or x70 is False):
                            x70 = x70
                        elif x70 is None:
                            w = ab.get(pre + 'p2p' + '.' + str(i65) + '.' + str(i69)) if ab else None
                            x70 = None if w is None else _marker(w)
                        else:
                            raise _Refused(pre + 'p2p' + '.' + str(i65) + '.' + str(i69))
                        l71.append(x70)
                    x66 = l71
            elif x66 is None:
                raise _Refused(pre + 'p2p' + '.' + str(i65))
            else:
                raise _Refused(pre + 'p2p' + '.' + str(i65))
            l67.append(x66)
        f1 = l67
    elif v is None:
        if 'p2p' in d:
            w = ab.get(pre + 'p2p') if ab else None
            f1 = _NOT_REPORTED if w is None else _marker(w)
        else:
            miss += 1
            f1 = _null(ab, pre + 'p2p', _s.NOT_PROBED) if ab else _s.NOT_PROBED
    else:
        raise _Refused(pre + 'p2p')
    if len(d) + miss != 2:
        ex = {k: w for k, w in d.items() if k not in _c32}
    else:
        ex = {}
    o = _new(_s.Topology)
    o.__dict__ = {'extra': ex, 'links': f0, 'p2p': f1}
    return o


def _dec_CudaToolkit(d: Dict[str, Any], ab: Dict[str, str], pre: str) -> _s.CudaToolkit:
    g = d.get
    miss = 0
    v = g('nvcc_version')
    if isinstance(v, str):
        f0 = v
    elif v is None:
        if 'nvcc_version' in d:
            w = ab.get(pre + 'nvcc_version') if ab else None
            f0 = _NOT_REPORTED if w is None else _marker(w)
        else:
            miss += 1
            f0 = _null(ab, pre + 'nvcc_version', _s.NOT_PROBED) if ab else _s.NOT_PROBED
    else:
        raise _Refused(pre + 'nvcc_version')
    v = g('cuda_home')
    if isinstance(v, str):
        f1 = v
    elif v is None:
        if 'cuda_home' in d:
            w = ab.get(pre + 'cuda_home') if ab else None
            f1 = _NOT_REPORTED if w is None else _marker(w)
        else:
            miss += 1
            f1 = _null(ab, pre + 'cuda_home', _s.NOT_PROBED) if ab else _s.NOT_PROBED
    else:
        raise _Refused(pre + 'cuda_home')
    v = g('nvcc_path')
    if isinstance(v, str):
        f2 = v
    elif v is None:
        if 'nvcc_path' in d:
            w = ab.get(pre + 'nvcc_path') if ab else None
            f2 = _NOT_REPORTED if w is None else _marker(w)
        else:
            miss += 1
            f2 = _null(ab, pre + 'nvcc_path', _s.NOT_PROBED) if ab else _s.NOT_PROBED
    else:
        raise _Refused(pre + 'nvcc_path')
    if len(d) + miss != 3:
        ex = {k: w for k, w in d.items() if k not in _c33}
    else:
        ex = {}
    o = _new(_s.CudaToolkit)
    o.__dict__ = {'extra': ex, 'nvcc_version': f0, 'cuda_home': f1, 'nvcc_path': f2}
    return o


def _dec_LibCopy(d: Dict[str, Any], ab: Dict[str, str], pre: str) -> _s.LibCopy:
    g = d.get
    miss = 0
    v = g('version')
    if isinstance(v, str):
        f0 = v
    elif v is None:
        if 'version' in d:
            w = ab.get(pre + 'version') if ab else None
            f0 = _NOT_REPORTED if w is None else _marker(w)
        else:
            miss += 1
            f0 = _null(ab, pre + 'version', _s.NOT_PROBED) if ab else _s.NOT_PROBED
    else:
        raise _Refused(pre + 'version')
    v = g('path')
    if isinstance(v, str):
        f1 = v
    elif v is None:
        if 'path' in d:
            w = ab.get(pre + 'path') if ab else None
            f1 = _NOT_REPORTED if w is None else _marker(w)
        else:
            miss += 1
            f1 = _null(ab, pre + 'path', _s.NOT_PROBED) if ab else _s.NOT_PROBED
    else:
        raise _Refused(pre + 'path')
    if len(d) + miss != 2:
        ex = {k: w for k, w in d.items() if k not in _c34}
    else:
        ex = {}
    o = _new(_s.LibCopy)
    o.__dict__ = {'extra': ex, 'version': f0, 'path': f1}
    return o


def _dec_Libraries(d: Dict[str, Any], ab: Dict[str, str], pre: str) -> _s.Libraries:
    g = d.get
    miss = 0
    v = g('cudnn')
    if isinstance(v, list):
        l74 = []
        for i72, x73 in enumerate(v):
            if isinstance(x73, dict):
                x73 = _dec_LibCopy(x73, ab, pre + 'cudnn' + '.' + str(i72) + '.')
            elif x73 is None:
                raise _Refused(pre + 'cudnn' + '.' + str(i72))
            else:
                raise _Refused(pre + 'cudnn' + '.' + str(i72))
            l74.append(x73)
        f0 = l74
    elif v is None:
        if 'cudnn' in d:
            w = ab.get(pre + 'cudnn') if ab else None
            f0 = _NOT_REPORTED if w is None else _marker(w)
        else:
            miss += 1
            f0 = _null(ab, pre + 'cudnn', _s.NOT_PROBED) if ab else _s.NOT_PROBED
    else:
        raise _Refused(pre + 'cudnn')
    v = g('nccl')
    if isinstance(v, list):
        l77 = []
        for i75, x76 in enumerate(v):
            if isinstance(x76, dict):
                x76 = _dec_LibCopy(x76, ab, pre + 'nccl' + '.' + str(i75) + '.')
            elif x76 is None:
                raise _Refused(pre + 'nccl' + '.' + str(i75))
            else:
                raise _Refused(pre + 'nccl' + '.' + str(i75))
            l77.append(x76)
        f1 = l77
    elif v is None:
        if 'nccl' in d:
            w = ab.get(pre + 'nccl') if ab else None
            f1 = _NOT_REPORTED if w is None else _marker(w)
        else:
            miss += 1
            f1 = _null(ab, pre + 'nccl', _s.NOT_PROBED) if ab else _s.NOT_PROBED
    else:
        raise _Refused(pre + 'nccl')
    v = g('cudart')
    if isinstance(v, list):
        l80 = []
        for i78, x79 in enumerate(v):
            if isinstance(x79, dict):
                x79 = _dec_LibCopy(x79, ab, pre + 'cudart' + '.' + str(i78) + '.')
            elif x79 is None:
                raise _Refused(pre + 'cudart' + '.' + str(i78))
            else:
                raise _Refused(pre + 'cudart' + '.' + str(i78))
            l80.append(x79)
        f2 = l80
    elif v is None:
        if 'cudart' in d:
            w = ab.get(pre + 'cudart') if ab else None
            f2 = _NOT_REPORTED if w is None else _marker(w)
        else:
            miss += 1
            f2 = _null(ab, pre + 'cudart', _s.NOT_PROBED) if ab else _s.NOT_PROBED
    else:
        raise _Refused(pre + 'cudart')
    v = g('cublas')
    if isinstance(v, list):
        l83 = []
        for i81, x82 in enumerate(v):
            if isinstance(x82, dict):
                x82 = _dec_LibCopy(x82, ab, pre + 'cublas' + '.' + str(i81) + '.')
            elif x82 is None:
                raise _Refused(pre + 'cublas' + '.' + str(i81))
            else:
                raise _Refused(pre + 'cublas' + '.' + str(i81))
            l83.append(x82)
        f3 = l83
    elif v is None:
        if 'cublas' in d:
            w = ab.get(pre + 'cublas') if ab else None
            f3 = _NOT_REPORTED if w is None else _marker(w)
        else:
            miss += 1
            f3 = _null(ab, pre + 'cublas', _s.NOT_PROBED) if ab else _s.NOT_PROBED
    else:
        raise _Refused(pre + 'cublas')
    if len(d) + miss != 4:
        ex = {k: w for k, w in d.items() if k not in _c35}
    else:
        ex = {}
    o = _new(_s.Libraries)
    o.__dict__ = {'extra': ex, 'cudnn': f0, 'nccl': f1, 'cudart': f2, 'cublas': f3}
    return o


def _dec_DeepSpeed(d: Dict[str, Any], ab: Dict[str, str], pre: str) -> _s.DeepSpeed:
    g = d.get
    miss = 0
    v = g('version')
    if isinstance(v, str):
        f0 = v
    elif v is None:
        if 'version' in d:
            w = ab.get(pre + 'version') if ab else None
            f0 = _NOT_REPORTED if w is None else _marker(w)
        else:
            miss += 1
            f0 = _null(ab, pre + 'version', _s.NOT_PROBED) if ab else _s.NOT_PROBED
    else:
        raise _Refused(pre + 'version')
    v = g('importable')
    if (v is True or v is False):
        f1 = v
    elif v is None:
        if 'importable' in d:
            w = ab.get(pre + 'importable') if ab else None
            f1 = _NOT_REPORTED if w is None else _marker(w)
        else:
            miss += 1
            f1 = _null(ab, pre + 'importable', _s.NOT_PROBED) if ab else _s.NOT_PROBED
    else:
        raise _Refused(pre + 'importable')
    v = g('error')
    if isinstance(v, str):
        f2 = v
    elif v is None:
        if 'error' in d:
            w = ab.get(pre + 'error') if ab else None
            f2 = None if w is None else _marker(w)
        else:
            miss += 1
            f2 = _null(ab, pre + 'error', None) if ab else None
    else:
        raise _Refused(pre + 'error')
    v = g('torch_info')
    if isinstance(v, dict):
        m86 = {}
        for k84, x85 in v.items():
            x85 = x85 if x85 is not None else _null(ab, pre + 'torch_info' + '.' + k84, _NOT_REPORTED)
            m86[k84] = x85
        f3 = m86
    elif v is None:
        if 'torch_info' in d:
            w = ab.get(pre + 'torch_info') if ab else None
            f3 = _NOT_REPORTED if w is None else _marker(w)
        else:
            miss += 1
            f3 = _null(ab, pre + 'torch_info', _s.NOT_PROBED) if ab else _s.NOT_PROBED
    else:
        raise _Refused(pre + 'torch_info')
    v = g('ops_error')
    if isinstance(v, str):
        f4 = v
    elif v is None:
        if 'ops_error' in d:
            w = ab.get(pre + 'ops_error') if ab else None
            f4 = _NOT_REPORTED if w is None else _marker(w)
        else:
            miss += 1
            f4 = _null(ab, pre + 'ops_error', _s.NOT_RECORDED) if ab else _s.NOT_RECORDED
    else:
        raise _Refused(pre + 'ops_error')
    v = g('ops')
    if isinstance(v, dict):
        m89 = {}
        for k87, x88 in v.items():
            x88 = x88 if x88 is not None else _null(ab, pre + 'ops' + '.' + k87, _NOT_REPORTED)
            m89[k87] = x88
        f5 = m89
    elif v is None:
        if 'ops' in d:
            w = ab.get(pre + 'ops') if ab else None
            f5 = _NOT_REPORTED if w is None else _marker(w)
        else:
            miss += 1
            f5 = _null(ab, pre + 'ops', _s.NOT_RECORDED) if ab else _s.NOT_RECORDED
    else:
        raise _Refused(pre + 'ops')
    if len(d) + miss != 6:
        ex = {k: w for k, w in d.items() if k not in _c36}
    else:
        ex = {}
    o = _new(_s.DeepSpeed)
    o.__dict__ = {'extra': ex, 'version': f0, 'importable': f1, 'error': f2, 'torch_info': f3, 'ops_error': f4, 'ops': f5}
    return o


def _dec_Interface(d: Dict[str, Any], ab: Dict[str, str], pre: str) -> _s.Interface:
    g = d.get
    miss = 0
    v = g('name')
    if isinstance(v, str):
        f0 = v
    elif v is None:
        if 'name' in d:
            raise _Refused(pre + 'name')
        else:
            raise _Refused(pre + 'name')
    else:
        raise _Refused(pre + 'name')
    v = g('up')
    if (v is True or v is False):
        f1 = v
    elif v is None:
        if 'up' in d:
            w = ab.get(pre + 'up') if ab else None
            f1 = _NOT_REPORTED if w is None else _marker(w)
        else:
            miss += 1
            f1 = _null(ab, pre + 'up', _s.NOT_PROBED) if ab else _s.NOT_PROBED
    else:
        raise _Refused(pre + 'up')
    v = g('kind')
    if isinstance(v, str) and v in _c37:
        f2 = v
    elif v is None:
        if 'kind' in d:
            w = ab.get(pre + 'kind') if ab else None
            f2 = _NOT_REPORTED if w is None else _marker(w)
        else:
            miss += 1
            f2 = _null(ab, pre + 'kind', _s.NOT_PROBED) if ab else _s.NOT_PROBED
    else:
        raise _Refused(pre + 'kind')
    v = g('speed_mbps')
    if type(v) is int:
        f3 = v
    elif v is None:
        if 'speed_mbps' in d:
            w = ab.get(pre + 'speed_mbps') if ab else None
            f3 = _NOT_REPORTED if w is None else _marker(w)
        else:
            miss += 1
            f3 = _null(ab, pre + 'speed_mbps', _s.NOT_PROBED) if ab else _s.NOT_PROBED
    elif _isint(v):
        f3 = v
    else:
        raise _Refused(pre + 'speed_mbps')
    v = g('addresses')
    if isinstance(v, list):
        if set(map(type, v)) <= _c4:
            f4 = v[:]
        else:
            l98 = []
            for i96, x97 in enumerate(v):
                if isinstance(x97, str):
                    x97 = x97
                elif x97 is None:
                    raise _Refused(pre + 'addresses' + '.' + str(i96))
                else:
                    raise _Refused(pre + 'addresses' + '.' + str(i96))
                l98.append(x97)
            f4 = l98
    elif v is None:
        if 'addresses' in d:
            w = ab.get(pre + 'addresses') if ab else None
            f4 = _NOT_REPORTED if w is None else _marker(w)
        else:
            miss += 1
            f4 = _null(ab, pre + 'addresses', _s.NOT_PROBED) if ab else _s.NOT_PROBED
    else:
        raise _Refused(pre + 'addresses')
    if len(d) + miss != 5:
        ex = {k: w for k, w in d.items() if k not in _c38}
    else:
        ex = {}
    o = _new(_s.Interface)
    o.__dict__ = {'extra': ex, 'name': f0, 'up': f1, 'kind': f2, 'speed_mbps': f3, 'addresses': f4}
    return o


def _dec_RdmaDevice(d: Dict[str, Any], ab: Dict[str, str], pre: str) -> _s.RdmaDevice:
    g = d.get
    miss = 0
    v = g('name')
    if isinstance(v, str):
        f0 = v
    elif v is None:
        if 'name' in d:
            raise _Refused(pre + 'name')
        else:
            miss += 1
            f0 = _null(ab, pre + 'name', '') if ab else ''
    else:
        raise _Refused(pre + 'name')
    v = g('state')
    if isinstance(v, str):
        f1 = v
    elif v is None:
        if 'state' in d:
            w = ab.get(pre + 'state') if ab else None
            f1 = _NOT_REPORTED if w is None else _marker(w)
        else:
            miss += 1
            f1 = _null(ab, pre + 'state', _s.NOT_PROBED) if ab else _s.NOT_PROBED
    else:
        raise _Refused(pre + 'state')
    v = g('link_layer')
    if isinstance(v, str):
        f2 = v
    elif v is None:
        if 'link_layer' in d:
            w = ab.get(pre + 'link_layer') if ab else None
            f2 = _NOT_REPORTED if w is None else _marker(w)
        else:
            miss += 1
            f2 = _null(ab, pre + 'link_layer', _s.NOT_PROBED) if ab else _s.NOT_PROBED
    else:
        raise _Refused(pre + 'link_layer')
    if len(d) + miss != 3:
        ex = {k: w for k, w in d.items() if k not in _c39}
    else:
        ex = {}
    o = _new(_s.RdmaDevice)
    o.__dict__ = {'extra': ex, 'name': f0, 'state': f1, 'link_layer': f2}
    return o


def _dec_Network(d: Dict[str, Any], ab: Dict[str, str], pre: str) -> _s.Network:
    g = d.get
    miss = 0
    v = g('interfaces')
    if isinstance(v, list):
        l95 = []
        for i93, x94 in enumerate(v):
            if isinstance(x94, dict):
                x94 = _dec_Interface(x94, ab, pre + 'interfaces' + '.' + str(i93) + '.')
            elif x94 is None:
                raise _Refused(pre + 'interfaces' + '.' + str(i93))
            else:
                raise _Refused(pre + 'interfaces' + '.' + str(i93))
            l95.append(x94)
        f0 = l95
    elif v is None:
        if 'interfaces' in d:
            w = ab.get(pre + 'interfaces') if ab else None
            f0 = _NOT_REPORTED if w is None else _marker(w)
        else:
            miss += 1
            f0 = _null(ab, pre + 'interfaces', _s.NOT_PROBED) if ab else _s.NOT_PROBED
    else:
        raise _Refused(pre + 'interfaces')
    v = g('rdma_devices')
    if isinstance(v, list):
        l101 = []
        for i99, x100 in enumerate(v):
            if isinstance(x100, dict):
                x100 = _dec_RdmaDevice(x100, ab, pre + 'rdma_devices' + '.' + str(i99) + '.')
            elif x100 is None:
                raise _Refused(pre + 'rdma_devices' + '.' + str(i99))
            else:
                raise _Refused(pre + 'rdma_devices' + '.' + str(i99))
            l101.append(x100)
        f1 = l101
    elif v is None:
        if 'rdma_devices' in d:
            w = ab.get(pre + 'rdma_devices') if ab else None
            f1 = _NOT_REPORTED if w is None else _marker(w)
        else:
            miss += 1
            f1 = _null(ab, pre + 'rdma_devices', _s.NOT_PROBED) if ab else _s.NOT_PROBED
    else:
        raise _Refused(pre + 'rdma_devices')
    v = g('peermem_loaded')
    if (v is True or v is False):
        f2 = v
    elif v is None:
        if 'peermem_loaded' in d:
            w = ab.get(pre + 'peermem_loaded') if ab else None
            f2 = _NOT_REPORTED if w is None else _marker(w)
        else:
            miss += 1
            f2 = _null(ab, pre + 'peermem_loaded', _s.NOT_PROBED) if ab else _s.NOT_PROBED
    else:
        raise _Refused(pre + 'peermem_loaded')
    if len(d) + miss != 3:
        ex = {k: w for k, w in d.items() if k not in _c40}
    else:
        ex = {}
    o = _new(_s.Network)
    o.__dict__ = {'extra': ex, 'interfaces': f0, 'rdma_devices': f1, 'peermem_loaded': f2}
    return o


def _dec_FabricManager(d: Dict[str, Any], ab: Dict[str, str], pre: str) -> _s.FabricManager:
    g = d.get
    miss = 0
    v = g('nvswitch_present')
    if (v is True or v is False):
        f0 = v
    elif v is None:
        if 'nvswitch_present' in d:
            w = ab.get(pre + 'nvswitch_present') if ab else None
            f0 = _NOT_REPORTED if w is None else _marker(w)
        else:
            miss += 1
            f0 = _null(ab, pre + 'nvswitch_present', _s.NOT_PROBED) if ab else _s.NOT_PROBED
    else:
        raise _Refused(pre + 'nvswitch_present')
    v = g('running')
    if (v is True or v is False):
        f1 = v
    elif v is None:
        if 'running' in d:
            w = ab.get(pre + 'running') if ab else None
            f1 = _NOT_REPORTED if w is None else _marker(w)
        else:
            miss += 1
            f1 = _null(ab, pre + 'running', _s.NOT_PROBED) if ab else _s.NOT_PROBED
    else:
        raise _Refused(pre + 'running')
    v = g('version')
    if isinstance(v, str):
        f2 = v
    elif v is None:
        if 'version' in d:
            w = ab.get(pre + 'version') if ab else None
            f2 = _NOT_REPORTED if w is None else _marker(w)
        else:
            miss += 1
            f2 = _null(ab, pre + 'version', _s.NOT_PROBED) if ab else _s.NOT_PROBED
    else:
        raise _Refused(pre + 'version')
    if len(d) + miss != 3:
        ex = {k: w for k, w in d.items() if k not in _c41}
    else:
        ex = {}
    o = _new(_s.FabricManager)
    o.__dict__ = {'extra': ex, 'nvswitch_present': f0, 'running': f1, 'version': f2}
    return o


def _dec_Extension(d: Dict[str, Any], ab: Dict[str, str], pre: str) -> _s.Extension:
    g = d.get
    miss = 0
    v = g('name')
    if isinstance(v, str):
        f0 = v
    elif v is None:
        if 'name' in d:
            raise _Refused(pre + 'name')
        else:
            raise _Refused(pre + 'name')
    else:
        raise _Refused(pre + 'name')
    v = g('version')
    if isinstance(v, str):
        f1 = v
    elif v is None:
        if 'version' in d:
            w = ab.get(pre + 'version') if ab else None
            f1 = _NOT_REPORTED if w is None else _marker(w)
        else:
            miss += 1
            f1 = _null(ab, pre + 'version', _s.NOT_PROBED) if ab else _s.NOT_PROBED
    else:
        raise _Refused(pre + 'version')
    v = g('arch_list')
    if isinstance(v, list):
        if set(map(type, v)) <= _c4:
            f2 = v[:]
        else:
            l107 = []
            for i105, x106 in enumerate(v):
                if isinstance(x106, str):
                    x106 = x106
                elif x106 is None:
                    raise _Refused(pre + 'arch_list' + '.' + str(i105))
                else:
                    raise _Refused(pre + 'arch_list' + '.' + str(i105))
                l107.append(x106)
            f2 = l107
    elif v is None:
        if 'arch_list' in d:
            w = ab.get(pre + 'arch_list') if ab else None
            f2 = _NOT_REPORTED if w is None else _marker(w)
        else:
            miss += 1
            f2 = _null(ab, pre + 'arch_list', _s.NOT_PROBED) if ab else _s.NOT_PROBED
    else:
        raise _Refused(pre + 'arch_list')
    v = g('torch_version')
    if isinstance(v, str):
        f3 = v
    elif v is None:
        if 'torch_version' in d:
            w = ab.get(pre + 'torch_version') if ab else None
            f3 = _NOT_REPORTED if w is None else _marker(w)
        else:
            miss += 1
            f3 = _null(ab, pre + 'torch_version', _s.NOT_PROBED) if ab else _s.NOT_PROBED
    else:
        raise _Refused(pre + 'torch_version')
    v = g('cuda_version')
    if isinstance(v, str):
        f4 = v
    elif v is None:
        if 'cuda_version' in d:
            w = ab.get(pre + 'cuda_version') if ab else None
            f4 = _NOT_REPORTED if w is None else _marker(w)
        else:
            miss += 1
            f4 = _null(ab, pre + 'cuda_version', _s.NOT_PROBED) if ab else _s.NOT_PROBED
    else:
        raise _Refused(pre + 'cuda_version')
    v = g('torch_version_source')
    if isinstance(v, str) and v in _c42:
        f5 = v
    elif v is None:
        if 'torch_version_source' in d:
            w = ab.get(pre + 'torch_version_source') if ab else None
            f5 = _NOT_REPORTED if w is None else _marker(w)
        else:
            miss += 1
            f5 = _null(ab, pre + 'torch_version_source', _s.NOT_RECORDED) if ab else _s.NOT_RECORDED
    else:
        raise _Refused(pre + 'torch_version_source')
    v = g('requires_torch')
    if isinstance(v, str):
        f6 = v
    elif v is None:
        if 'requires_torch' in d:
            w = ab.get(pre + 'requires_torch') if ab else None
            f6 = _NOT_REPORTED if w is None else _marker(w)
        else:
            miss += 1
            f6 = _null(ab, pre + 'requires_torch', _s.NOT_RECORDED) if ab else _s.NOT_RECORDED
    else:
        raise _Refused(pre + 'requires_torch')
    v = g('cxx11_abi')
    if (v is True or v is False):
        f7 = v
    elif v is None:
        if 'cxx11_abi' in d:
            w = ab.get(pre + 'cxx11_abi') if ab else None
            f7 = _NOT_REPORTED if w is None else _marker(w)
        else:
            miss += 1
            f7 = _null(ab, pre + 'cxx11_abi', _s.NOT_RECORDED) if ab else _s.NOT_RECORDED
    else:
        raise _Refused(pre + 'cxx11_abi')
    v = g('importable')
    if (v is True or v is False):
        f8 = v
    elif v is None:
        if 'importable' in d:
            w = ab.get(pre + 'importable') if ab else None
            f8 = _NOT_REPORTED if w is None else _marker(w)
        else:
            miss += 1
            f8 = _null(ab, pre + 'importable', _s.NOT_RECORDED) if ab else _s.NOT_RECORDED
    else:
        raise _Refused(pre + 'importable')
    v = g('import_error')
    if isinstance(v, str):
        f9 = v
    elif v is None:
        if 'import_error' in d:
            w = ab.get(pre + 'import_error') if ab else None
            f9 = None if w is None else _marker(w)
        else:
            miss += 1
            f9 = _null(ab, pre + 'import_error', _s.NOT_RECORDED) if ab else _s.NOT_RECORDED
    else:
        raise _Refused(pre + 'import_error')
    if len(d) + miss != 10:
        ex = {k: w for k, w in d.items() if k not in _c43}
    else:
        ex = {}
    o = _new(_s.Extension)
    o.__dict__ = {'extra': ex, 'name': f0, 'version': f1, 'arch_list': f2, 'torch_version': f3, 'cuda_version': f4, 'torch_version_source': f5, 'requires_torch': f6, 'cxx11_abi': f7, 'importable': f8, 'import_error': f9}
    return o


def _dec_BuildTools(d: Dict[str, Any], ab: Dict[str, str], pre: str) -> _s.BuildTools:
    g = d.get
    miss = 0
    v = g('ninja')
    if isinstance(v, str):
        f0 = v
    elif v is None:
        if 'ninja' in d:
            w = ab.get(pre + 'ninja') if ab else None
            f0 = _NOT_REPORTED if w is None else _marker(w)
        else:
            miss += 1
            f0 = _null(ab, pre + 'ninja', _s.NOT_PROBED) if ab else _s.NOT_PROBED
    else:
        raise _Refused(pre + 'ninja')
    v = g('cc')
    if isinstance(v, str):
        f1 = v
    elif v is None:
        if 'cc' in d:
            w = ab.get(pre + 'cc') if ab else None
            f1 = _NOT_REPORTED if w is None else _marker(w)
        else:
            miss += 1
            f1 = _null(ab, pre + 'cc', _s.NOT_PROBED) if ab else _s.NOT_PROBED
    else:
        raise _Refused(pre + 'cc')
    v = g('cxx')
    if isinstance(v, str):
        f2 = v
    elif v is None:
        if 'cxx' in d:
            w = ab.get(pre + 'cxx') if ab else None
            f2 = _NOT_REPORTED if w is None else _marker(w)
        else:
            miss += 1
            f2 = _null(ab, pre + 'cxx', _s.NOT_PROBED) if ab else _s.NOT_PROBED
    else:
        raise _Refused(pre + 'cxx')
    v = g('libaio')
    if (v is True or v is False):
        f3 = v
    elif v is None:
        if 'libaio' in d:
            w = ab.get(pre + 'libaio') if ab else None
            f3 = _NOT_REPORTED if w is None else _marker(w)
        else:
            miss += 1
            f3 = _null(ab, pre + 'libaio', _s.NOT_PROBED) if ab else _s.NOT_PROBED
    else:
        raise _Refused(pre + 'libaio')
    if len(d) + miss != 4:
        ex = {k: w for k, w in d.items() if k not in _c44}
    else:
        ex = {}
    o = _new(_s.BuildTools)
    o.__dict__ = {'extra': ex, 'ninja': f0, 'cc': f1, 'cxx': f2, 'libaio': f3}
    return o


def _dec_RequirementConflict(d: Dict[str, Any], ab: Dict[str, str], pre: str) -> _s.RequirementConflict:
    g = d.get
    miss = 0
    v = g('package')
    if isinstance(v, str):
        f0 = v
    elif v is None:
        if 'package' in d:
            raise _Refused(pre + 'package')
        else:
            raise _Refused(pre + 'package')
    else:
        raise _Refused(pre + 'package')
    v = g('requirement')
    if isinstance(v, str):
        f1 = v
    elif v is None:
        if 'requirement' in d:
            raise _Refused(pre + 'requirement')
        else:
            raise _Refused(pre + 'requirement')
    else:
        raise _Refused(pre + 'requirement')
    v = g('installed')
    if isinstance(v, str):
        f2 = v
    elif v is None:
        if 'installed' in d:
            w = ab.get(pre + 'installed') if ab else None
            f2 = _NOT_REPORTED if w is None else _marker(w)
        else:
            miss += 1
            f2 = _null(ab, pre + 'installed', _s.NOT_PROBED) if ab else _s.NOT_PROBED
    else:
        raise _Refused(pre + 'installed')
    if len(d) + miss != 3:
        ex = {k: w for k, w in d.items() if k not in _c45}
    else:
        ex = {}
    o = _new(_s.RequirementConflict)
    o.__dict__ = {'extra': ex, 'package': f0, 'requirement': f1, 'installed': f2}
    return o


def _dec_Snapshot(d: Dict[str, Any], ab: Dict[str, str], pre: str) -> _s.Snapshot:
    g = d.get
    miss = 0
    v = g('created')
    if isinstance(v, str):
        f0 = v
    elif v is None:
        if 'created' in d:
            raise _Refused(pre + 'created')
        else:
            raise _Refused(pre + 'created')
    else:
        raise _Refused(pre + 'created')
    v = g('host')
    if isinstance(v, dict):
        f1 = _dec_Host(v, ab, pre + 'host.')
    elif v is None:
        if 'host' in d:
            raise _Refused(pre + 'host')
        else:
            raise _Refused(pre + 'host')
    else:
        raise _Refused(pre + 'host')
    v = g('driver')
    if isinstance(v, dict):
        f2 = _dec_Driver(v, ab, pre + 'driver.')
    elif v is None:
        if 'driver' in d:
            w = ab.get(pre + 'driver') if ab else None
            f2 = _NOT_REPORTED if w is None else _marker(w)
        else:
            raise _Refused(pre + 'driver')
    else:
        raise _Refused(pre + 'driver')
    v = g('gpus')
    if isinstance(v, list):
        l9 = []
        for i7, x8 in enumerate(v):
            if isinstance(x8, dict):
                x8 = _dec_Gpu(x8, ab, pre + 'gpus' + '.' + str(i7) + '.')
            elif x8 is None:
                raise _Refused(pre + 'gpus' + '.' + str(i7))
            else:
                raise _Refused(pre + 'gpus' + '.' + str(i7))
            l9.append(x8)
        f3 = l9
    elif v is None:
        if 'gpus' in d:
            w = ab.get(pre + 'gpus') if ab else None
            f3 = _NOT_REPORTED if w is None else _marker(w)
        else:
            raise _Refused(pre + 'gpus')
    else:
        raise _Refused(pre + 'gpus')
    v = g('python')
    if isinstance(v, dict):
        f4 = _dec_PythonEnv(v, ab, pre + 'python.')
    elif v is None:
        if 'python' in d:
            raise _Refused(pre + 'python')
        else:
            raise _Refused(pre + 'python')
    else:
        raise _Refused(pre + 'python')
    v = g('torch')
    if isinstance(v, dict):
        f5 = _dec_Torch(v, ab, pre + 'torch.')
    elif v is None:
        if 'torch' in d:
            w = ab.get(pre + 'torch') if ab else None
            f5 = _NOT_REPORTED if w is None else _marker(w)
        else:
            raise _Refused(pre + 'torch')
    else:
        raise _Refused(pre + 'torch')
    v = g('probes')
    if isinstance(v, list):
        l58 = []
        for i56, x57 in enumerate(v):
            if isinstance(x57, dict):
                x57 = _dec_ProbeRecord(x57, ab, pre + 'probes' + '.' + str(i56) + '.')
            elif x57 is None:
                raise _Refused(pre + 'probes' + '.' + str(i56))
            else:
                raise _Refused(pre + 'probes' + '.' + str(i56))
            l58.append(x57)
        f6 = l58
    elif v is None:
        if 'probes' in d:
            raise _Refused(pre + 'probes')
        else:
            raise _Refused(pre + 'probes')
    else:
        raise _Refused(pre + 'probes')
    v = g('topology')
    if isinstance(v, dict):
        f7 = _dec_Topology(v, ab, pre + 'topology.')
    elif v is None:
        if 'topology' in d:
            w = ab.get(pre + 'topology') if ab else None
            f7 = _NOT_REPORTED if w is None else _marker(w)
        else:
            miss += 1
            f7 = _null(ab, pre + 'topology', _s.NOT_PROBED) if ab else _s.NOT_PROBED
    else:
        raise _Refused(pre + 'topology')
    v = g('cuda_toolkit')
    if isinstance(v, dict):
        f8 = _dec_CudaToolkit(v, ab, pre + 'cuda_toolkit.')
    elif v is None:
        if 'cuda_toolkit' in d:
            w = ab.get(pre + 'cuda_toolkit') if ab else None
            f8 = _NOT_REPORTED if w is None else _marker(w)
        else:
            miss += 1
            f8 = _null(ab, pre + 'cuda_toolkit', _s.NOT_PROBED) if ab else _s.NOT_PROBED
    else:
        raise _Refused(pre + 'cuda_toolkit')
    v = g('libraries')
    if isinstance(v, dict):
        f9 = _dec_Libraries(v, ab, pre + 'libraries.')
    elif v is None:
        if 'libraries' in d:
            w = ab.get(pre + 'libraries') if ab else None
            f9 = _NOT_REPORTED if w is None else _marker(w)
        else:
            miss += 1
            f9 = _null(ab, pre + 'libraries', _s.NOT_PROBED) if ab else _s.NOT_PROBED
    else:
        raise _Refused(pre + 'libraries')
    v = g('deepspeed')
    if isinstance(v, dict):
        f10 = _dec_DeepSpeed(v, ab, pre + 'deepspeed.')
    elif v is None:
        if 'deepspeed' in d:
            w = ab.get(pre + 'deepspeed') if ab else None
            f10 = _NOT_REPORTED if w is None else _marker(w)
        else:
            miss += 1
            f10 = _null(ab, pre + 'deepspeed', _s.NOT_PROBED) if ab else _s.NOT_PROBED
    else:
        raise _Refused(pre + 'deepspeed')
    v = g('env')
    if isinstance(v, dict):
        if set(map(type, v.values())) <= _c4:
            f11 = dict(v)
        else:
            m92 = {}
            for k90, x91 in v.items():
                if isinstance(x91, str):
                    x91 = x91
                elif x91 is None:
                    raise _Refused(pre + 'env' + '.' + k90)
                else:
                    raise _Refused(pre + 'env' + '.' + k90)
                m92[k90] = x91
            f11 = m92
    elif v is None:
        if 'env' in d:
            w = ab.get(pre + 'env') if ab else None
            f11 = _NOT_REPORTED if w is None else _marker(w)
        else:
            miss += 1
            f11 = _null(ab, pre + 'env', _s.NOT_PROBED) if ab else _s.NOT_PROBED
    else:
        raise _Refused(pre + 'env')
    v = g('network')
    if isinstance(v, dict):
        f12 = _dec_Network(v, ab, pre + 'network.')
    elif v is None:
        if 'network' in d:
            w = ab.get(pre + 'network') if ab else None
            f12 = _NOT_REPORTED if w is None else _marker(w)
        else:
            miss += 1
            f12 = _null(ab, pre + 'network', _s.NOT_PROBED) if ab else _s.NOT_PROBED
    else:
        raise _Refused(pre + 'network')
    v = g('fabric_manager')
    if isinstance(v, dict):
        f13 = _dec_FabricManager(v, ab, pre + 'fabric_manager.')
    elif v is None:
        if 'fabric_manager' in d:
            w = ab.get(pre + 'fabric_manager') if ab else None
            f13 = _NOT_REPORTED if w is None else _marker(w)
        else:
            miss += 1
            f13 = _null(ab, pre + 'fabric_manager', _s.NOT_PROBED) if ab else _s.NOT_PROBED
    else:
        raise _Refused(pre + 'fabric_manager')
    v = g('extensions')
    if isinstance(v, list):
        l104 = []
        for i102, x103 in enumerate(v):
            if isinstance(x103, dict):
                x103 = _dec_Extension(x103, ab, pre + 'extensions' + '.' + str(i102) + '.')
            elif x103 is None:
                raise _Refused(pre + 'extensions' + '.' + str(i102))
            else:
                raise _Refused(pre + 'extensions' + '.' + str(i102))
            l104.append(x103)
        f14 = l104
    elif v is None:
        if 'extensions' in d:
            w = ab.get(pre + 'extensions') if ab else None
            f14 = _NOT_REPORTED if w is None else _marker(w)
        else:
            miss += 1
            f14 = _null(ab, pre + 'extensions', _s.NOT_PROBED) if ab else _s.NOT_PROBED
    else:
        raise _Refused(pre + 'extensions')
    v = g('build_tools')
    if isinstance(v, dict):
        f15 = _dec_BuildTools(v, ab, pre + 'build_tools.')
    elif v is None:
        if 'build_tools' in d:
            w = ab.get(pre + 'build_tools') if ab else None
            f15 = _NOT_REPORTED if w is None else _marker(w)
        else:
            miss += 1
            f15 = _null(ab, pre + 'build_tools', _s.NOT_PROBED) if ab else _s.NOT_PROBED
    else:
        raise _Refused(pre + 'build_tools')
    v = g('requirement_conflicts')
    if isinstance(v, list):
        l110 = []
        for i108, x109 in enumerate(v):
            if isinstance(x109, dict):
                x109 = _dec_RequirementConflict(x109, ab, pre + 'requirement_conflicts' + '.' + str(i108) + '.')
            elif x109 is None:
                raise _Refused(pre + 'requirement_conflicts' + '.' + str(i108))
            else:
                raise _Refused(pre + 'requirement_conflicts' + '.' + str(i108))
            l110.append(x109)
        f16 = l110
    elif v is None:
        if 'requirement_conflicts' in d:
            w = ab.get(pre + 'requirement_conflicts') if ab else None
            f16 = _NOT_REPORTED if w is None else _marker(w)
        else:
            miss += 1
            f16 = _null(ab, pre + 'requirement_conflicts', _s.NOT_RECORDED) if ab else _s.NOT_RECORDED
    else:
        raise _Refused(pre + 'requirement_conflicts')
    if len(d) + miss != 17:
        ex = {k: w for k, w in d.items() if k not in _c46}
    else:
        ex = {}
    o = _new(_s.Snapshot)
    o.__dict__ = {'extra': ex, 'created': f0, 'host': f1, 'driver': f2, 'gpus': f3, 'python': f4, 'torch': f5, 'probes': f6, 'topology': f7, 'cuda_toolkit': f8, 'libraries': f9, 'deepspeed': f10, 'env': f11, 'network': f12, 'fabric_manager': f13, 'extensions': f14, 'build_tools': f15, 'requirement_conflicts': f16}
    return o
