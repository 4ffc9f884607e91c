"""The integer correlation engine under convolution, deconvolution, fully connected and matrix multiply.

``correlation`` plans a call once (which route, which blocking) and runs it: the SIMD route (``simd``:
implicit GEMM on the register-blocked micro-kernels of ``microkernel``, one per instruction set chosen in
``isa``, with ``block_transpose`` for layout changes and ``workers``/``atomics`` to share one call between
threads) or the float64 BLAS route (``im2col``, ``blas_product``). Every route is bit-exact.
A new route or instruction set goes here; layer semantics (formats, policies) do not.
"""
