"""The graph builder of the NNEF front end: the CoreML front end's builder (tensors, constants, parameter
scalars, nodes by kernel name, views), whose blobs are NCHW-like with the last axis fastest as NNEF's tensors
are, with errors that name the NNEF operation being lowered."""
from __future__ import annotations

from contextlib import contextmanager

from ..core.errors import VXError
from ..coreml.builder import Blob, GraphBuilder
from ..coreml.errors import CoreMLError
from .errors import NNEFError

__all__ = ["Blob", "NNEFBuilder"]


class NNEFBuilder(GraphBuilder):
    """One OpenVX graph for one NNEF graph; ``blobs`` are keyed by NNEF tensor name, in NNEF order."""

    def __init__(self, outputs=()):
        super().__init__(outputs, nhwc_route=False)
        self.operation: str | None = None  # "name (result)" of the operation being lowered, for errors
        self.nnef = None  # the parsed nnef.Graph: its tensors' inferred shapes

    def fail(self, reason: str) -> NNEFError:
        return NNEFError(reason, self.operation)

    @contextmanager
    def building(self):
        try:
            yield self
        except (VXError, CoreMLError) as err:
            self.close()
            raise NNEFError(f"the graph cannot be built: {err}", self.operation) from err
        except BaseException:
            self.close()
            raise

    def verify(self) -> None:
        try:
            super().verify()
        except CoreMLError as err:
            raise NNEFError(err.reason) from None
