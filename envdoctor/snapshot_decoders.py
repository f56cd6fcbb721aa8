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
_c10 = frozenset(['index', 'name', 'compute_capability', 'uuid', 'pci_bus_id', 'memory_bytes', 'numa_node', 'cpu_affinity', 'pcie', 'nvlink', 'mig_enabled', 'persistence_mode', 'ecc_uncorrected', 'retired_pages_pending'])
_c11 = frozenset(['conda', 'other', 'system', 'uv', 'venv'])
_c12 = frozenset(['version', 'implementation', 'executable', 'env_kind', 'externally_managed', 'packages', 'python_headers', 'free_threaded', 'pointer_bits', 'interrupted_fix'])
_c13 = {bool}
_c14 = {str, _NONE}
_c15 = frozenset(['cwd', 'editable', 'other', 'pythonpath', 'site-packages', 'user-site'])
_c16 = frozenset(['file', 'kind', 'outside_site_packages', 'site_packages', 'dist_location'])
_c17 = frozenset(['version', 'works', 'error'])
_c18 = frozenset(['version', 'requires_torch', 'importable', 'error', 'nms_op', 'warnings', 'build_version'])
_c19 = frozenset(['required', 'installed'])
_c20 = frozenset(['path', 'file_version', 'dist', 'dist_version'])
_c21 = frozenset(['importable', 'error', 'version', 'cuda', 'hip', 'cudnn', 'nccl', 'arch_list', 'cuda_available', 'device_count', 'distributed_backends', 'loaded_libraries', 'cuda_init_error', 'path', 'origin', 'cwd_torch', 'cxx11_abi', 'numpy', 'companions', 'nvidia_wheels', 'mapped_cuda_libraries', 'missing_files'])
_c22 = frozenset(['failed', 'ok', 'skipped', 'timeout'])
_c23 = frozenset(['name', 'status', 'seconds', 'error'])
_c24 = {bool, _NONE}
_c25 = frozenset(['links', 'p2p'])
_c26 = frozenset(['nvcc_version', 'cuda_home', 'nvcc_path'])
_c27 = frozenset(['version', 'path'])
_c28 = frozenset(['cudnn', 'nccl', 'cudart', 'cublas'])
_c29 = frozenset(['version', 'importable', 'error', 'torch_info', 'ops_error'])
_c30 = frozenset(['bridge', 'ethernet', 'infiniband', 'loopback', 'other', 'virtual'])
_c31 = frozenset(['name', 'up', 'kind', 'speed_mbps', 'addresses'])
_c32 = frozenset(['name', 'state', 'link_layer'])
_c33 = frozenset(['interfaces', 'rdma_devices', 'peermem_loaded'])
_c34 = frozenset(['nvswitch_present', 'running', 'version'])
_c35 = frozenset(['build record', 'requires-dist', 'wheel version'])
_c36 = frozenset(['name', 'version', 'arch_list', 'torch_version', 'cuda_version', 'torch_version_source', 'requires_torch', 'cxx11_abi', 'importable', 'import_error'])
_c37 = frozenset(['ninja', 'cc', 'cxx', 'libaio'])
_c38 = frozenset(['package', 'requirement', 'installed'])
_c39 = frozenset(['created', 'host', 'driver', 'gpus', 'python', 'torch', 'probes', 'topology', 'cuda_toolkit', 'libraries', 'deepspeed', 'env', 'network', 'fabric_manager', 'extensions', 'build_tools', 'requirement_conflicts'])


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
    if len(d) + miss != 14:
        ex = {k: w for k, w in d.items() if k not in _c10}
    else:
        ex = {}
    o = _new(_s.Gpu)
    o.__dict__ = {'extra': ex, 'index': f0, 'name': f1, 'compute_capability': f2, 'uuid': f3, 'pci_bus_id': f4, 'memory_bytes': f5, 'numa_node': f6, 'cpu_affinity': f7, 'pcie': f8, 'nvlink': f9, 'mig_enabled': f10, 'persistence_mode': f11, 'ecc_uncorrected': f12, 'retired_pages_pending': f13}
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
    if isinstance(v, str) and v in _c11:
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
            m12 = {}
            for k10, x11 in v.items():
                if isinstance(x11, str):
                    x11 = x11
                elif x11 is None:
                    raise _Refused(pre + 'packages' + '.' + k10)
                else:
                    raise _Refused(pre + 'packages' + '.' + k10)
                m12[k10] = x11
            f5 = m12
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
    v = g('interrupted_fix')
    if isinstance(v, str):
        f9 = v
    elif v is None:
        if 'interrupted_fix' in d:
            w = ab.get(pre + 'interrupted_fix') if ab else None
            f9 = _NOT_REPORTED if w is None else _marker(w)
        else:
            miss += 1
            f9 = _null(ab, pre + 'interrupted_fix', _s.NOT_RECORDED) if ab else _s.NOT_RECORDED
    else:
        raise _Refused(pre + 'interrupted_fix')
    if len(d) + miss != 10:
        ex = {k: w for k, w in d.items() if k not in _c12}
    else:
        ex = {}
    o = _new(_s.PythonEnv)
    o.__dict__ = {'extra': ex, 'version': f0, 'implementation': f1, 'executable': f2, 'env_kind': f3, 'externally_managed': f4, 'packages': f5, 'python_headers': f6, 'free_threaded': f7, 'pointer_bits': f8, 'interrupted_fix': f9}
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
    if isinstance(v, str) and v in _c15:
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
            l25 = []
            for i23, x24 in enumerate(v):
                if isinstance(x24, str):
                    x24 = x24
                elif x24 is None:
                    raise _Refused(pre + 'site_packages' + '.' + str(i23))
                else:
                    raise _Refused(pre + 'site_packages' + '.' + str(i23))
                l25.append(x24)
            f3 = l25
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
        ex = {k: w for k, w in d.items() if k not in _c16}
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
        ex = {k: w for k, w in d.items() if k not in _c17}
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
            l31 = []
            for i29, x30 in enumerate(v):
                if isinstance(x30, str):
                    x30 = x30
                elif x30 is None:
                    raise _Refused(pre + 'warnings' + '.' + str(i29))
                else:
                    raise _Refused(pre + 'warnings' + '.' + str(i29))
                l31.append(x30)
            f5 = l31
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
        ex = {k: w for k, w in d.items() if k not in _c18}
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
        ex = {k: w for k, w in d.items() if k not in _c19}
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
        ex = {k: w for k, w in d.items() if k not in _c20}
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
            l15 = []
            for i13, x14 in enumerate(v):
                if isinstance(x14, str):
                    x14 = x14
                elif x14 is None:
                    raise _Refused(pre + 'arch_list' + '.' + str(i13))
                else:
                    raise _Refused(pre + 'arch_list' + '.' + str(i13))
                l15.append(x14)
            f7 = l15
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
        if set(map(type, v.values())) <= _c13:
            f10 = dict(v)
        else:
            m18 = {}
            for k16, x17 in v.items():
                if (x17 is True or x17 is False):
                    x17 = x17
                elif x17 is None:
                    raise _Refused(pre + 'distributed_backends' + '.' + k16)
                else:
                    raise _Refused(pre + 'distributed_backends' + '.' + k16)
                m18[k16] = x17
            f10 = m18
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
        if set(map(type, v.values())) <= _c14:
            f11 = dict(v)
            if ab and None in v.values():
                for k19, w in v.items():
                    if w is None:
                        f11[k19] = _null(ab, pre + 'loaded_libraries' + '.' + k19, None)
        else:
            m22 = {}
            for k20, x21 in v.items():
                if isinstance(x21, str):
                    x21 = x21
                elif x21 is None:
                    w = ab.get(pre + 'loaded_libraries' + '.' + k20) if ab else None
                    x21 = None if w is None else _marker(w)
                else:
                    raise _Refused(pre + 'loaded_libraries' + '.' + k20)
                m22[k20] = x21
            f11 = m22
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
        m28 = {}
        for k26, x27 in v.items():
            if isinstance(x27, dict):
                x27 = _dec_Companion(x27, ab, pre + 'companions' + '.' + k26 + '.')
            elif x27 is None:
                raise _Refused(pre + 'companions' + '.' + k26)
            else:
                raise _Refused(pre + 'companions' + '.' + k26)
            m28[k26] = x27
        f18 = m28
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
        m34 = {}
        for k32, x33 in v.items():
            if isinstance(x33, dict):
                x33 = _dec_NvidiaWheel(x33, ab, pre + 'nvidia_wheels' + '.' + k32 + '.')
            elif x33 is None:
                raise _Refused(pre + 'nvidia_wheels' + '.' + k32)
            else:
                raise _Refused(pre + 'nvidia_wheels' + '.' + k32)
            m34[k32] = x33
        f19 = m34
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
        l37 = []
        for i35, x36 in enumerate(v):
            if isinstance(x36, dict):
                x36 = _dec_MappedLibrary(x36, ab, pre + 'mapped_cuda_libraries' + '.' + str(i35) + '.')
            elif x36 is None:
                raise _Refused(pre + 'mapped_cuda_libraries' + '.' + str(i35))
            else:
                raise _Refused(pre + 'mapped_cuda_libraries' + '.' + str(i35))
            l37.append(x36)
        f20 = l37
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
            l40 = []
            for i38, x39 in enumerate(v):
                if isinstance(x39, str):
                    x39 = x39
                elif x39 is None:
                    raise _Refused(pre + 'missing_files' + '.' + str(i38))
                else:
                    raise _Refused(pre + 'missing_files' + '.' + str(i38))
                l40.append(x39)
            f21 = l40
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
        ex = {k: w for k, w in d.items() if k not in _c21}
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
    if isinstance(v, str) and v in _c22:
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
        ex = {k: w for k, w in d.items() if k not in _c23}
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
        l46 = []
        for i44, x45 in enumerate(v):
            if isinstance(x45, list):
                if set(map(type, x45)) <= _c4:
                    x45 = x45[:]
                else:
                    l49 = []
                    for i47, x48 in enumerate(x45):
                        if isinstance(x48, str):
                            x48 = x48
                        elif x48 is None:
                            raise _Refused(pre + 'links' + '.' + str(i44) + '.' + str(i47))
                        else:
                            raise _Refused(pre + 'links' + '.' + str(i44) + '.' + str(i47))
                        l49.append(x48)
                    x45 = l49
            elif x45 is None:
                raise _Refused(pre + 'links' + '.' + str(i44))
            else:
                raise _Refused(pre + 'links' + '.' + str(i44))
            l46.append(x45)
        f0 = l46
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
        l52 = []
        for i50, x51 in enumerate(v):
            if isinstance(x51, list):
                if set(map(type, x51)) <= _c24:
                    x51 = x51[:]
                    if ab and None in x51:
                        for k53, w in enumerate(x51):
                            if w is None:
                                x51[k53] = _null(ab, pre + 'p2p' + '.' + str(i50) + '.' + str(k53), None)
                else:
                    l56 = []
                    for i54, x55 in enumerate(x51):
                        if (x55 is True or x55 is False):
                            x55 = x55
                        elif x55 is None:
                            w = ab.get(pre + 'p2p' + '.' + str(i50) + '.' + str(i54)) if ab else None
                            x55 = None if w is None else _marker(w)
                        else:
                            raise _Refused(pre + 'p2p' + '.' + str(i50) + '.' + str(i54))
                        l56.append(x55)
                    x51 = l56
            elif x51 is None:
                raise _Refused(pre + 'p2p' + '.' + str(i50))
            else:
                raise _Refused(pre + 'p2p' + '.' + str(i50))
            l52.append(x51)
        f1 = l52
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
        ex = {k: w for k, w in d.items() if k not in _c25}
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
        ex = {k: w for k, w in d.items() if k not in _c26}
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
        ex = {k: w for k, w in d.items() if k not in _c27}
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
        l59 = []
        for i57, x58 in enumerate(v):
            if isinstance(x58, dict):
                x58 = _dec_LibCopy(x58, ab, pre + 'cudnn' + '.' + str(i57) + '.')
            elif x58 is None:
                raise _Refused(pre + 'cudnn' + '.' + str(i57))
            else:
                raise _Refused(pre + 'cudnn' + '.' + str(i57))
            l59.append(x58)
        f0 = l59
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
        l62 = []
        for i60, x61 in enumerate(v):
            if isinstance(x61, dict):
                x61 = _dec_LibCopy(x61, ab, pre + 'nccl' + '.' + str(i60) + '.')
            elif x61 is None:
                raise _Refused(pre + 'nccl' + '.' + str(i60))
            else:
                raise _Refused(pre + 'nccl' + '.' + str(i60))
            l62.append(x61)
        f1 = l62
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
        l65 = []
        for i63, x64 in enumerate(v):
            if isinstance(x64, dict):
                x64 = _dec_LibCopy(x64, ab, pre + 'cudart' + '.' + str(i63) + '.')
            elif x64 is None:
                raise _Refused(pre + 'cudart' + '.' + str(i63))
            else:
                raise _Refused(pre + 'cudart' + '.' + str(i63))
            l65.append(x64)
        f2 = l65
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
        l68 = []
        for i66, x67 in enumerate(v):
            if isinstance(x67, dict):
                x67 = _dec_LibCopy(x67, ab, pre + 'cublas' + '.' + str(i66) + '.')
            elif x67 is None:
                raise _Refused(pre + 'cublas' + '.' + str(i66))
            else:
                raise _Refused(pre + 'cublas' + '.' + str(i66))
            l68.append(x67)
        f3 = l68
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
        ex = {k: w for k, w in d.items() if k not in _c28}
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
        m71 = {}
        for k69, x70 in v.items():
            x70 = x70 if x70 is not None else _null(ab, pre + 'torch_info' + '.' + k69, _NOT_REPORTED)
            m71[k69] = x70
        f3 = m71
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
    if len(d) + miss != 5:
        ex = {k: w for k, w in d.items() if k not in _c29}
    else:
        ex = {}
    o = _new(_s.DeepSpeed)
    o.__dict__ = {'extra': ex, 'version': f0, 'importable': f1, 'error': f2, 'torch_info': f3, 'ops_error': f4}
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
    if isinstance(v, str) and v in _c30:
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
            l80 = []
            for i78, x79 in enumerate(v):
                if isinstance(x79, str):
                    x79 = x79
                elif x79 is None:
                    raise _Refused(pre + 'addresses' + '.' + str(i78))
                else:
                    raise _Refused(pre + 'addresses' + '.' + str(i78))
                l80.append(x79)
            f4 = l80
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
        ex = {k: w for k, w in d.items() if k not in _c31}
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
        ex = {k: w for k, w in d.items() if k not in _c32}
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
        l77 = []
        for i75, x76 in enumerate(v):
            if isinstance(x76, dict):
                x76 = _dec_Interface(x76, ab, pre + 'interfaces' + '.' + str(i75) + '.')
            elif x76 is None:
                raise _Refused(pre + 'interfaces' + '.' + str(i75))
            else:
                raise _Refused(pre + 'interfaces' + '.' + str(i75))
            l77.append(x76)
        f0 = l77
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
        l83 = []
        for i81, x82 in enumerate(v):
            if isinstance(x82, dict):
                x82 = _dec_RdmaDevice(x82, ab, pre + 'rdma_devices' + '.' + str(i81) + '.')
            elif x82 is None:
                raise _Refused(pre + 'rdma_devices' + '.' + str(i81))
            else:
                raise _Refused(pre + 'rdma_devices' + '.' + str(i81))
            l83.append(x82)
        f1 = l83
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
        ex = {k: w for k, w in d.items() if k not in _c33}
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
        ex = {k: w for k, w in d.items() if k not in _c34}
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
            l89 = []
            for i87, x88 in enumerate(v):
                if isinstance(x88, str):
                    x88 = x88
                elif x88 is None:
                    raise _Refused(pre + 'arch_list' + '.' + str(i87))
                else:
                    raise _Refused(pre + 'arch_list' + '.' + str(i87))
                l89.append(x88)
            f2 = l89
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
    if isinstance(v, str) and v in _c35:
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
        ex = {k: w for k, w in d.items() if k not in _c36}
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
        ex = {k: w for k, w in d.items() if k not in _c37}
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
        ex = {k: w for k, w in d.items() if k not in _c38}
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
        l43 = []
        for i41, x42 in enumerate(v):
            if isinstance(x42, dict):
                x42 = _dec_ProbeRecord(x42, ab, pre + 'probes' + '.' + str(i41) + '.')
            elif x42 is None:
                raise _Refused(pre + 'probes' + '.' + str(i41))
            else:
                raise _Refused(pre + 'probes' + '.' + str(i41))
            l43.append(x42)
        f6 = l43
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
            m74 = {}
            for k72, x73 in v.items():
                if isinstance(x73, str):
                    x73 = x73
                elif x73 is None:
                    raise _Refused(pre + 'env' + '.' + k72)
                else:
                    raise _Refused(pre + 'env' + '.' + k72)
                m74[k72] = x73
            f11 = m74
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
        l86 = []
        for i84, x85 in enumerate(v):
            if isinstance(x85, dict):
                x85 = _dec_Extension(x85, ab, pre + 'extensions' + '.' + str(i84) + '.')
            elif x85 is None:
                raise _Refused(pre + 'extensions' + '.' + str(i84))
            else:
                raise _Refused(pre + 'extensions' + '.' + str(i84))
            l86.append(x85)
        f14 = l86
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
        l92 = []
        for i90, x91 in enumerate(v):
            if isinstance(x91, dict):
                x91 = _dec_RequirementConflict(x91, ab, pre + 'requirement_conflicts' + '.' + str(i90) + '.')
            elif x91 is None:
                raise _Refused(pre + 'requirement_conflicts' + '.' + str(i90))
            else:
                raise _Refused(pre + 'requirement_conflicts' + '.' + str(i90))
            l92.append(x91)
        f16 = l92
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
        ex = {k: w for k, w in d.items() if k not in _c39}
    else:
        ex = {}
    o = _new(_s.Snapshot)
    o.__dict__ = {'extra': ex, 'created': f0, 'host': f1, 'driver': f2, 'gpus': f3, 'python': f4, 'torch': f5, 'probes': f6, 'topology': f7, 'cuda_toolkit': f8, 'libraries': f9, 'deepspeed': f10, 'env': f11, 'network': f12, 'fabric_manager': f13, 'extensions': f14, 'build_tools': f15, 'requirement_conflicts': f16}
    return o
