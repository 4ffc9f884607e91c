"""``Error``: the base of every exception the library raises on purpose.

A caller that wants to tell "the library refused this" from a bug catches ``openvx_nn.Error``. Beneath it:
``VXError`` (a ``vx_status``, with the public subclasses in ``openvx_nn.api.errors``), ``NNAPIError``,
``CoreMLError`` and the runner's errors. This module imports nothing, so every layer can derive from it."""
from __future__ import annotations


class Error(Exception):
    """Something the library refused or could not do; the message names the object and the problem."""
