"""farmhash ``Fingerprint64`` (farmhashna ``Hash64``): the hash Android's and
TensorFlow Lite's LSH_PROJECTION apply to (seed, input row) keys.  Plain
Python integers, masked to 64 bits, little-endian loads."""
from __future__ import annotations

import struct

_M = (1 << 64) - 1
K0, K1, K2 = 0xC3A5C85C97CB3127, 0xB492B66FBE98F273, 0x9AE16A3B2F90404F


def _u64(s: bytes, i: int) -> int:
    return struct.unpack_from("<Q", s, i)[0]


def _u32(s: bytes, i: int) -> int:
    return struct.unpack_from("<I", s, i)[0]


def _rotate(v: int, r: int) -> int:
    return v if r == 0 else ((v >> r) | (v << (64 - r))) & _M


def _shift_mix(v: int) -> int:
    return v ^ (v >> 47)


def _mix16(u: int, v: int, mul: int) -> int:
    a = ((u ^ v) * mul) & _M
    a ^= a >> 47
    b = ((v ^ a) * mul) & _M
    b ^= b >> 47
    return (b * mul) & _M


def _short(s: bytes, n: int) -> int:
    """Keys of 0 to 16 bytes."""
    if n >= 8:
        mul = K2 + n * 2
        a = (_u64(s, 0) + K2) & _M
        b = _u64(s, n - 8)
        return _mix16((_rotate(b, 37) * mul + a) & _M, ((_rotate(a, 25) + b) * mul) & _M, mul)
    if n >= 4:
        return _mix16(n + (_u32(s, 0) << 3), _u32(s, n - 4), K2 + n * 2)
    if n > 0:
        y = s[0] + (s[n >> 1] << 8)
        z = n + (s[n - 1] << 2)
        return (_shift_mix(((y * K2) ^ (z * K0)) & _M) * K2) & _M
    return K2


def _medium(s: bytes, n: int) -> int:
    """Keys of 17 to 64 bytes."""
    mul = K2 + n * 2
    a = (_u64(s, 0) * (K1 if n <= 32 else K2)) & _M
    b = _u64(s, 8)
    c = (_u64(s, n - 8) * mul) & _M
    d = (_u64(s, n - 16) * K2) & _M
    y = (_rotate((a + b) & _M, 43) + _rotate(c, 30) + d) & _M
    z = _mix16(y, (a + _rotate((b + K2) & _M, 18) + c) & _M, mul)
    if n <= 32:
        return z
    e = (_u64(s, 16) * mul) & _M
    f = _u64(s, 24)
    g = ((y + _u64(s, n - 32)) * mul) & _M
    h = ((z + _u64(s, n - 24)) * mul) & _M
    return _mix16((_rotate((e + f) & _M, 43) + _rotate(g, 30) + h) & _M, (e + _rotate((f + a) & _M, 18) + g) & _M,
                  mul)


def _weak32(s: bytes, i: int, a: int, b: int) -> tuple[int, int]:
    w, x, y, z = (_u64(s, i + 8 * k) for k in range(4))
    a = (a + w) & _M
    b = _rotate((b + a + z) & _M, 21)
    c = a
    a = (a + x + y) & _M
    b = (b + _rotate(a, 44)) & _M
    return (a + z) & _M, (b + c) & _M


def _round(s: bytes, i: int, x, y, z, v, w, mul: int, last: bool):
    nine = 9 if last else 1
    x = (_rotate((x + y + v[0] + _u64(s, i + 8)) & _M, 37) * mul) & _M
    y = (_rotate((y + v[1] + _u64(s, i + 48)) & _M, 42) * mul) & _M
    x ^= (w[1] * nine) & _M
    y = (y + v[0] * nine + _u64(s, i + 40)) & _M
    z = (_rotate((z + w[0]) & _M, 33) * mul) & _M
    v = _weak32(s, i, (v[1] * mul) & _M, (x + w[0]) & _M)
    w = _weak32(s, i + 32, (z + w[1]) & _M, (y + _u64(s, i + 16)) & _M)
    return z, y, x, v, w  # x and z swap


def fingerprint64(s: bytes) -> int:
    """farmhash Fingerprint64 of ``s`` (unsigned)."""
    n = len(s)
    if n <= 16:
        return _short(s, n)
    if n <= 64:
        return _medium(s, n)
    seed = 81
    y = (seed * K1 + 113) & _M
    z = (_shift_mix((y * K2 + 113) & _M) * K2) & _M
    x = (seed * K2 + _u64(s, 0)) & _M
    v = w = (0, 0)
    end = ((n - 1) // 64) * 64
    for i in range(0, end, 64):
        x, y, z, v, w = _round(s, i, x, y, z, v, w, K1, False)
    mul = K1 + ((z & 0xFF) << 1)
    w = ((w[0] + ((n - 1) & 63)) & _M, w[1])
    v = ((v[0] + w[0]) & _M, v[1])
    w = ((w[0] + v[0]) & _M, w[1])
    x, y, z, v, w = _round(s, end + ((n - 1) & 63) - 63, x, y, z, v, w, mul, True)
    return _mix16((_mix16(v[0], w[0], mul) + _shift_mix(y) * K0 + z) & _M, (_mix16(v[1], w[1], mul) + x) & _M, mul)
