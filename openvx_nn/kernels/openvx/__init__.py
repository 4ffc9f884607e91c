"""The OpenVX kernels: the NN extension's layers and the OpenVX 1.2 tensor operations, with OpenVX semantics
(Qm.n, U8 and S8 formats, rounding and overflow policies, the exact results of ``docs/fixed-point.md``).
Heavy sums go to the engine (``kernels.engine``); a new OpenVX kernel goes here."""
