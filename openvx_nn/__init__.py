"""openvx-nn: the Khronos OpenVX 1.3 Neural Network extension as a shared library and a Python package.

C programs link ``libopenvx.so`` (next to this file) and include ``<VX/vx.h>``;
Python programs reach the same C API through :mod:`openvx_nn.vx`.
"""
__version__ = "0.1.0"
