"""``openvx-nn run``: whole datasets through a model, in one process or on Dask workers."""
from .command import RunError, run
from .models import Model, ModelError, register_loader, resolve
from .progress import Pending, Progress

__all__ = ["Model", "ModelError", "Pending", "Progress", "RunError", "register_loader", "resolve", "run"]
