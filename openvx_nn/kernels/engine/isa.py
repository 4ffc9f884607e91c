"""Which integer instruction set the sums of products use, how wide the float vectors are, and how many threads
run them.

Chosen once at import from the CPU's features (``/proc/cpuinfo`` flags, cross-checked with the
features LLVM sees): ``avx512_vnni``, else ``avx_vnni``, else ``avx2``, else ``generic`` (the
float64 BLAS and int64 loop routes of ``correlation.py``). ``OPENVX_NN_ISA`` forces one of these
names; a path the CPU cannot run is refused (ValueError naming the variable) instead of being
compiled into instructions that would fault. Unforced, a layer with few output channels takes ``avx_vnni``
where the fastest path is ``avx512_vnni`` (``for_layer``). ``OPENVX_NN_THREADS`` sets the engine's thread count
(default: the CPU count). The float32 micro-kernels use vectors of 16 lanes where the CPU has AVX-512F
(``float_lanes``; the same check) and no narrower path is forced, else of 8; ``split_wide_fma`` says whether a
512-bit multiply-add costs two 256-bit ones (Zen 4), where blocks of 8-lane vectors that pad fewer lanes win.

AMX (``amx``) is a capability beside these names, not one of them: the 8-bit layers of an ``avx512_vnni`` CPU
that also has AMX-INT8 tiles run their sums on tiles (``amx_microkernel``). Off when ``OPENVX_NN_ISA`` forces
any path or ``OPENVX_NN_AMX=0``; Linux's permission for tile data is asked for the first time a plan wants
AMX (never at import), and a refusal leaves the VNNI kernels in force.
"""
from __future__ import annotations

import os
from functools import cache

ISAS = ("avx512_vnni", "avx_vnni", "avx2", "generic")
ENV_ISA = "OPENVX_NN_ISA"
ENV_THREADS = "OPENVX_NN_THREADS"
ENV_AMX = "OPENVX_NN_AMX"
ENV_SPLIT_FMA = "OPENVX_NN_SPLIT_FMA"
# LLVM feature names each path needs (checked against llvmlite's view of the host).
_LLVM_NEEDS = {"avx512_vnni": ("avx512f", "avx512bw", "avx512vnni"), "avx_vnni": ("avx2", "avxvnni"),
               "avx2": ("avx2",), "generic": ()}
_CPUINFO_NEEDS = {"avx512_vnni": ("avx512f", "avx512bw", "avx512_vnni"), "avx_vnni": ("avx2", "avx_vnni"),
                  "avx2": ("avx2",), "generic": ()}


def _cpuinfo_flags() -> set[str]:
    try:
        with open("/proc/cpuinfo", encoding="ascii", errors="replace") as f:
            for line in f:
                if line.startswith("flags"):
                    return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()


def _llvm_features() -> set[str]:
    try:
        import llvmlite.binding as ll
        return {name for name, on in ll.get_host_cpu_features().items() if on}
    except Exception:  # noqa: BLE001 - no feature list (some platforms): trust /proc/cpuinfo alone
        return set()


@cache
def available() -> tuple[str, ...]:
    """The paths this CPU runs, fastest first (``generic`` always)."""
    flags, llvm = _cpuinfo_flags(), _llvm_features()
    found = []
    for isa in ISAS:
        in_cpuinfo = all(f in flags for f in _CPUINFO_NEEDS[isa]) if flags else not _CPUINFO_NEEDS[isa]
        in_llvm = all(f in llvm for f in _LLVM_NEEDS[isa]) if llvm else in_cpuinfo
        if isa == "generic" or (in_cpuinfo and in_llvm):
            found.append(isa)
    return tuple(found)


def check(isa: str) -> str:
    """``isa`` when this CPU runs it, else ValueError."""
    if isa not in ISAS:
        raise ValueError(f"instruction set {isa!r} is not one of {ISAS}")
    if isa not in available():
        raise ValueError(f"instruction set {isa!r} is not supported by this CPU (it has {available()})")
    return isa


def _forced() -> str:
    """``OPENVX_NN_ISA``'s value ('' when unset)."""
    return os.environ.get(ENV_ISA, "").strip()


@cache
def selected() -> str:
    """The path in force: ``OPENVX_NN_ISA`` when set (ValueError if this CPU cannot run it), else the fastest."""
    forced = _forced()
    if forced:
        try:
            return check(forced)
        except ValueError as err:
            raise ValueError(f"{ENV_ISA}={forced}: {err}") from None
    return available()[0]


def amx_on_cpu() -> bool:
    """Whether the CPU has AMX-INT8 tiles beside AVX-512 VNNI (``/proc/cpuinfo`` and LLVM): the AMX micro-kernel
    compiles here, whether or not a process uses it (:func:`amx`)."""
    flags, llvm = _cpuinfo_flags(), _llvm_features()
    return ({"amx_tile", "amx_int8"} <= flags and (not llvm or {"amx-tile", "amx-int8"} <= llvm)
            and "avx512_vnni" in available())


def _request_tile_data() -> bool:
    """Linux's permission for this process to use AMX tile data (``arch_prctl(ARCH_REQ_XCOMP_PERM,
    XFEATURE_XTILEDATA)``); without it the first tile instruction is a fault."""
    import ctypes
    import sys
    if not sys.platform.startswith("linux"):
        return False
    try:
        return ctypes.CDLL(None, use_errno=True).syscall(158, 0x1023, 18) == 0
    except (OSError, AttributeError):
        return False


@cache
def amx() -> bool:
    """Whether the 8-bit sums run on AMX tiles: the CPU (``/proc/cpuinfo`` and LLVM) has AMX-INT8 and the VNNI
    path is in force unforced, ``OPENVX_NN_AMX`` is not ``0``, and Linux grants tile data (asked here, once)."""
    if os.environ.get(ENV_AMX, "").strip() == "0" or _forced():
        return False
    return amx_on_cpu() and selected() == "avx512_vnni" and _request_tile_data()


NARROW_CHANNELS = 8
"""Output channels up to which a layer runs on ``avx_vnni`` rather than ``avx512_vnni`` (both on the CPU, neither
forced): 8 channels fill a 256-bit vector and only half of a 512-bit one. Before the 512-bit tiles of one and two
vectors (``tiles.TILES``), layers of up to 32 channels went to 256 bits; on those tiles, one thread, Q7.8 3x3
layers of 16 and 32 channels took 0.80-0.85x and 0.67x the time they took on 256 bits (32x32x3->16 12.6 -> 10.1 us,
16x16x16->32 13.5 -> 9.1 us), and NNAPI's uint8 MobileNet v1 0.25 (layers of 8 to 256 channels) ran as fast either
way. The results are the same exact sums either way."""


def for_layer(isa: str | None, k_out: int) -> str:
    """The instruction set of a layer of ``k_out`` output channels: ``isa`` when given (checked), else
    :func:`selected`, except that an unforced ``avx512_vnni`` gives way to ``avx_vnni`` up to
    :data:`NARROW_CHANNELS` channels."""
    if isa is not None:
        return check(isa)
    chosen = selected()
    if (chosen == "avx512_vnni" and 0 < k_out <= NARROW_CHANNELS and "avx_vnni" in available()
            and not _forced()):
        return "avx_vnni"
    return chosen


@cache
def float_lanes() -> int:
    """Lanes of the float32 micro-kernels' vectors: 16 where both ``/proc/cpuinfo`` and LLVM see AVX-512F (its 32
    registers hold tiles twice as wide, and a CPU with 512-bit FMA units does twice the work an instruction), else
    8 (AVX2's; LLVM splits a 16-lane vector in two without AVX-512, correct but no faster). ``OPENVX_NN_ISA``
    forcing a path narrower than ``avx512_vnni`` gives 8 too, so one machine runs both widths' routes."""
    forced = _forced()
    if forced and selected() != "avx512_vnni":
        return 8
    flags, llvm = _cpuinfo_flags(), _llvm_features()
    return 16 if "avx512f" in flags and (not llvm or "avx512f" in llvm) else 8


@cache
def split_wide_fma() -> bool:
    """Whether the CPU runs a 512-bit multiply-add as two 256-bit halves (AMD Zen 4: family 25 with AVX-512), so
    that 8-lane vectors do as many multiply-adds a cycle as 16-lane ones; ``OPENVX_NN_SPLIT_FMA`` (0 or 1) says so
    instead."""
    forced = os.environ.get(ENV_SPLIT_FMA, "").strip()
    if forced in ("0", "1"):
        return forced == "1"
    vendor = family = ""
    try:
        with open("/proc/cpuinfo", encoding="ascii", errors="replace") as f:
            for line in f:
                key, _, value = line.partition(":")
                if key.strip() == "vendor_id":
                    vendor = value.strip()
                elif key.strip() == "cpu family":
                    family = value.strip()
                if vendor and family:
                    break
    except OSError:
        return False
    return vendor == "AuthenticAMD" and family == "25" and "avx512f" in _cpuinfo_flags()


@cache
def threads() -> int:
    """The engine's thread count: ``OPENVX_NN_THREADS`` (a positive integer), else the CPU count."""
    value = os.environ.get(ENV_THREADS, "").strip()
    if value:
        if not value.isdigit() or int(value) < 1:
            raise ValueError(f"{ENV_THREADS}={value!r}: expected a positive integer")
        return int(value)
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not on Linux
        return max(1, os.cpu_count() or 1)
