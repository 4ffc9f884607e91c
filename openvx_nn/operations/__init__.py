"""Kernel descriptions (name, enum, signature, validator, executor) of every
kernel the library provides; importing this package registers them."""
from . import tensor_ops  # noqa: F401
