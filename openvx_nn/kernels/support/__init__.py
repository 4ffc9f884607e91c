"""What every kernel family uses: compiling kernels with numba (``jit``) and filling the cache ahead of
time (``warm``, ``signatures.txt``), loop views and overlap protection (``layout``), and the exact
fixed-point steps of ``docs/fixed-point.md`` (``fixed_point``). Nothing here computes a layer."""
