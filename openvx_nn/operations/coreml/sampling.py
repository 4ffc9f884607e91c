"""CoreML's random layers as one kernel: a tensor of draws from a normal, uniform or Bernoulli distribution, from
the stream ``kernels/frontend/sampling.py`` defines. A seeded node writes the same tensor on every run (the
stream restarts from its seed); seed -1 draws fresh values each run."""
from __future__ import annotations

import math

from ...core.enums import Status, Type
from ...core.validation import Validation
from ...kernels.frontend.sampling import DISTRIBUTIONS, categorical, sample
from .common import ENUM, F32, INT32, declared_output, describe, enum_value, float_input, output, scalar, tensor, values

UNSEEDED = -1


def _validate(v: Validation) -> None:
    v.state["distribution"] = kind = enum_value(v, 0, DISTRIBUTIONS, "distribution")
    params = values(v, 1, F32)
    v.require(len(params) == 2 and all(map(math.isfinite, params)), 1, Status.VX_ERROR_INVALID_VALUE,
              f"params must be two finite values, got {params}")
    a, b = params
    problem = {"normal": b < 0 and f"the standard deviation {b} is negative",
               "uniform": a > b and f"the lower bound {a} is above the upper {b}",
               "bernoulli": not 0 <= a <= 1 and f"the probability {a} is outside 0..1"}[kind]
    v.require(not problem, 1, Status.VX_ERROR_INVALID_VALUE, str(problem))
    v.state["params"] = (a, b)
    declared_output(v, 3)


def _run(p, state) -> None:
    seed = p[2].value
    sample(p[3].array.T, state["distribution"], *state["params"], None if seed == UNSEEDED else seed)


describe(89, "random", (scalar("distribution", ENUM), tensor("params", static=True), scalar("seed", Type.VX_TYPE_INT64),
                        output()), _validate, _run)


def _validate_categorical(v: Validation) -> None:
    x = float_input(v, 0)
    eps, temperature = v.scalar(2), v.scalar(3)
    v.require(math.isfinite(eps) and eps >= 0, 2, Status.VX_ERROR_INVALID_VALUE, f"eps {eps} must be finite, at least 0")
    v.require(math.isfinite(temperature) and temperature > 0, 3, Status.VX_ERROR_INVALID_VALUE,
              f"temperature {temperature} must be finite and above 0")
    dims = declared_output(v, 5)
    v.require(dims[1:] == x.dims[1:], 5, Status.VX_ERROR_INVALID_DIMENSION,
              f"output {list(dims)} must be the input {list(x.dims)} with [samples] in place of its categories")


def _run_categorical(p, state) -> None:
    seed = p[4].value
    categorical(p[0].array.T, p[5].array.T, bool(p[1].value), p[2].value, p[3].value,
                None if seed == UNSEEDED else seed)


describe(90, "categorical", (tensor("input"), scalar("is_logits", INT32), scalar("eps", F32),
                             scalar("temperature", F32), scalar("seed", Type.VX_TYPE_INT64), output()),
         _validate_categorical, _run_categorical)
