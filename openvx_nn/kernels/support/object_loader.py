"""A loader of our own for cached machine code: an ELF64 x86-64 relocatable object copied into pages of its own,
relocated and protected, without LLVM.

numba hands a cached library's object file to LLVM's MCJIT, whose object reader and linker (RuntimeDyld) bring
about 6 MiB of ``libllvmlite.so`` into memory the first time they run. The objects LLVM writes for numba's
x86-64 JIT use the large code model: absolute 64-bit relocations against their own sections and against names
found elsewhere (numba's runtime functions, which numba adds to LLVM's symbol table, and the process's:
``memset``, ``log10``, CPython's). What this loader does not know (another architecture, another relocation,
a name it cannot find) it declines, and the caller takes LLVM's way. Unwind tables are not loaded: nothing
unwinds through numba's code.
"""
from __future__ import annotations

import ctypes
import functools
import mmap
import struct
from collections.abc import Callable

_SHF_WRITE, _SHF_ALLOC, _SHF_EXECINSTR = 0x1, 0x2, 0x4
_SHT_NOBITS, _SHT_RELA, _SHT_SYMTAB = 8, 4, 2
_SHN_UNDEF, _SHN_ABS, _SHN_COMMON = 0, 0xFFF1, 0xFFF2
_R_64, _R_PC32, _R_PLT32, _R_32, _R_32S, _R_PC64 = 1, 2, 4, 10, 11, 24
_EM_X86_64, _ET_REL = 62, 1
_EXECUTABLE, _READ_ONLY, _WRITABLE = 0, 1, 2
"""The three groups of pages an object gets, in this order."""


@functools.cache
def _libc():
    """The C library's ``mmap``, ``mprotect`` and ``munmap``; None where there are none (not a POSIX system)."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.mmap.restype = ctypes.c_void_p
        libc.mmap.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int,
                              ctypes.c_long)
        libc.mprotect.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int)
        libc.munmap.argtypes = (ctypes.c_void_p, ctypes.c_size_t)
        (mmap.PROT_EXEC, mmap.MAP_PRIVATE, mmap.MAP_ANONYMOUS)  # noqa: B018 - present on this system?
    except (OSError, TypeError, AttributeError):
        return None
    return libc


def load(code: bytes, resolve: Callable[[str], int]) -> dict[str, int] | None:
    """``code``, an ELF64 x86-64 relocatable object, placed in pages of its own and relocated: the addresses of
    the global names it defines. ``resolve`` gives the address of a name it leaves undefined (0: unknown).
    None if this loader cannot load it (nothing is left mapped then)."""
    libc = _libc()
    if libc is None:
        return None
    try:
        layout = _read(bytes(code))
    except (IndexError, ValueError, struct.error, UnicodeDecodeError):
        return None
    return None if layout is None else _place(libc, resolve, *layout)


def defined_names(code: bytes) -> set[str] | None:
    """The global and weak names an ELF64 little-endian object defines, whatever its machine (None: not such an
    object, or a damaged one)."""
    code = bytes(code)
    if code[:6] != b"\x7fELF\x02\x01":
        return None
    try:
        return {name for name, binding, index, _, _ in _symbols(code, _sections(code))
                if name and binding in (1, 2) and index != _SHN_UNDEF}  # STB_GLOBAL, STB_WEAK
    except (IndexError, ValueError, struct.error, UnicodeDecodeError):
        return None


def _sections(code: bytes) -> list[tuple]:
    """The section headers: (name, type, flags, address, offset, size, link, info, alignment, entry size)."""
    table, = struct.unpack_from("<Q", code, 0x28)
    entry_size, count = struct.unpack_from("<HH", code, 0x3A)
    return [struct.unpack_from("<IIQQQQIIQQ", code, table + k * entry_size) for k in range(count)]


def _text(code: bytes, offset: int) -> str:
    return code[offset:code.index(b"\0", offset)].decode()


def _symbols(code: bytes, sections: list[tuple]) -> list[tuple[str, int, int, int, int]]:
    """The symbol table: (name, binding, section index, value, size) per symbol."""
    symbols = []
    for _, kind, _, _, offset, size, link, _, _, _ in sections:
        if kind == _SHT_SYMTAB:
            strings = sections[link][4]
            for at in range(offset, offset + size, 24):
                name_at, info, _, index, value, symbol_size = struct.unpack_from("<IBBHQQ", code, at)
                symbols.append((_text(code, strings + name_at) if name_at else "", info >> 4, index, value,
                                symbol_size))
    return symbols


def _read(code: bytes):
    """The object's sections to load and where each goes, its symbols and its relocations; None if it is not an
    x86-64 relocatable ELF64 object."""
    if code[:6] != b"\x7fELF\x02\x01" or struct.unpack_from("<HH", code, 16) != (_ET_REL, _EM_X86_64):
        return None
    sections = _sections(code)
    names = sections[struct.unpack_from("<H", code, 0x3E)[0]][4]
    placed = {}  # section index: (group, offset in the group)
    ends = [0, 0, 0]  # bytes used in each group so far
    for k, (name_at, _, flags, _, _, size, _, _, align, _) in enumerate(sections):
        if not flags & _SHF_ALLOC or _text(code, names + name_at).startswith(".eh_frame"):
            continue
        group = _EXECUTABLE if flags & _SHF_EXECINSTR else _WRITABLE if flags & _SHF_WRITE else _READ_ONLY
        placed[k] = (group, _round(ends[group], max(align, 1)))
        ends[group] = placed[k][1] + size
    symbols = []  # (name, binding, section index, value or offset in the writable group)
    for name, binding, index, value, size in _symbols(code, sections):
        if index == _SHN_COMMON:  # a global to allocate (numba's environment pointers): value = alignment
            start = _round(ends[_WRITABLE], max(value, 1))
            ends[_WRITABLE], value = start + size, start
        symbols.append((name, binding, index, value))
    relocations = []  # (section index, offset in it, symbol, type, addend)
    for _, kind, _, _, offset, size, _, target, _, _ in sections:
        if kind == _SHT_RELA and target in placed:
            for at in range(offset, offset + size, 24):
                where, info, addend = struct.unpack_from("<QQq", code, at)
                relocations.append((target, where, info >> 32, info & 0xFFFFFFFF, addend))
    return code, sections, placed, ends, symbols, relocations


def _round(value: int, step: int) -> int:
    return -(-value // step) * step


def _place(libc, resolve, code, sections, placed, ends, symbols, relocations):
    sizes = [_round(end, mmap.PAGESIZE) for end in ends]
    total = sum(sizes)
    if total == 0:
        return None
    base = libc.mmap(None, total, mmap.PROT_READ | mmap.PROT_WRITE, mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS, -1, 0)
    if base is None or base == ctypes.c_void_p(-1).value:
        return None
    try:
        defined = _relocated(libc, resolve, base, sizes, code, sections, placed, symbols, relocations)
    except (IndexError, ValueError, struct.error):
        defined = None
    if defined is None:
        libc.munmap(base, total)
    return defined


def _relocated(libc, resolve, base, sizes, code, sections, placed, symbols, relocations):
    starts = [base, base + sizes[0], base + sizes[0] + sizes[1]]
    image = bytearray(sum(sizes))  # copied into the pages at once, relocated
    for k, (group, offset) in placed.items():
        _, kind, _, _, file_at, size, *_ = sections[k]
        if kind != _SHT_NOBITS:
            at = starts[group] - base + offset
            image[at:at + size] = code[file_at:file_at + size]
    addresses: list[int | None] = []
    for name, _, index, value in symbols:
        if index == _SHN_UNDEF:
            address = resolve(name) if name else 0
            if name and not address:
                return None  # found nowhere
        elif index == _SHN_COMMON:
            address = starts[_WRITABLE] + value
        elif index == _SHN_ABS:
            address = value
        elif index in placed:
            group, offset = placed[index]
            address = starts[group] + offset + value
        else:
            address = None  # in a section not loaded (the unwind tables'): no relocation may use it
        addresses.append(address)
    for target, where, symbol, kind, addend in relocations:
        group, offset = placed[target]
        place = starts[group] + offset + where
        at = place - base
        if addresses[symbol] is None:
            return None
        value = addresses[symbol] + addend
        if kind == _R_64:
            struct.pack_into("<Q", image, at, value & 0xFFFFFFFFFFFFFFFF)
        elif kind == _R_PC64:
            struct.pack_into("<q", image, at, value - place)
        elif kind in (_R_PC32, _R_PLT32) and -2**31 <= value - place < 2**31:
            struct.pack_into("<i", image, at, value - place)
        elif kind == _R_32 and 0 <= value < 2**32:
            struct.pack_into("<I", image, at, value)
        elif kind == _R_32S and -2**31 <= value < 2**31:
            struct.pack_into("<i", image, at, value)
        else:
            return None  # a relocation this loader does not make, or out of its range
    ctypes.memmove(base, bytes(image), len(image))
    protections = (mmap.PROT_READ | mmap.PROT_EXEC, mmap.PROT_READ, mmap.PROT_READ | mmap.PROT_WRITE)
    for start, size, protection in zip(starts, sizes, protections):
        if size and libc.mprotect(start, size, protection) != 0:
            return None
    return {name: address for (name, binding, index, _), address in zip(symbols, addresses)
            if name and binding in (1, 2) and index != _SHN_UNDEF and address is not None}  # global, weak
