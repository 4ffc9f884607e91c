"""NNAPI EMBEDDING_LOOKUP, HASHTABLE_LOOKUP and LSH_PROJECTION as OpenVX kernels."""
from __future__ import annotations

import numpy as np

from ...core.enums import Status
from ...kernels.frontend import gather, lsh
from .common import F32, I32, U8, Args, NNAPIKernel, dtype_in, nnapi_kernel, rank_in, require

ANY = (F32, I32, U8)


def _infer_embedding(args: Args):
    (k,) = rank_in(args, "lookups", (1,))
    dtype_in(args, "lookups", (I32,))
    values = tuple(args["values"].shape)
    require(len(values) >= 2, "values", f"values has shape {list(values)}, expected at least 2 dimensions")
    return {"output": ((k,) + values[1:], dtype_in(args, "values", ANY))}


def _run_embedding(args: Args) -> None:
    """out[i] = values[lookups[i]] (an index out of range fails the node)."""
    gather.embedding_lookup(args["values"], args["lookups"], args["output"])


nnapi_kernel(NNAPIKernel("embedding_lookup", 7, ("lookups", "values"), ("output",), _infer_embedding,
                         _run_embedding))


def _infer_hashtable(args: Args):
    (k,) = rank_in(args, "lookups", (1,))
    (n,) = rank_in(args, "keys", (1,))
    dtype_in(args, "lookups", (I32,))
    dtype_in(args, "keys", (I32,))
    values = tuple(args["values"].shape)
    require(len(values) >= 1 and values[0] == n, "values", f"values has shape {list(values)}, expected [{n}, ...]")
    return {"output": ((k,) + values[1:], dtype_in(args, "values", ANY)), "hits": ((k,), U8)}


def _run_hashtable(args: Args) -> None:
    """out[i] = values[j] where keys[j] == lookups[i], hits[i] = 1; a miss gives zeros and hits[i] = 0."""
    gather.hashtable_lookup(args["lookups"], args["keys"], args["values"], args["output"], args["hits"])


nnapi_kernel(NNAPIKernel("hashtable_lookup", 10, ("lookups", "keys", "values"), ("output", "hits"),
                         _infer_hashtable, _run_hashtable))

SPARSE, DENSE = 1, 2


def _infer_lsh(args: Args):
    n_hash, n_seed = rank_in(args, "hash", (2,))
    dtype_in(args, "hash", (F32,))
    shape = tuple(args["input"].shape)
    require(len(shape) >= 1, "input", "input must have at least one dimension")
    kind = args["type"]
    require(kind in (SPARSE, DENSE), "type", f"projection type {kind} is not SPARSE (1) or DENSE (2)",
            Status.VX_ERROR_INVALID_VALUE)
    require(kind == DENSE or n_seed <= 32, "hash", f"{n_seed} seeds per hash function: sparse allows at most 32")
    weight = args.get("weight")
    if weight is not None:
        dtype_in(args, "weight", (F32,))
        require(tuple(weight.shape) == (shape[0],), "weight",
                f"weight has shape {list(weight.shape)}, expected [{shape[0]}]")
    return {"output": ((n_hash,) if kind == SPARSE else (n_hash * n_seed,), I32)}


def _run_lsh(args: Args) -> None:
    """Sign bits of weighted sums of hashed input rows, packed (sparse) or one per element (dense)."""
    weight = args.get("weight")
    lsh.lsh_projection(np.asarray(args["hash"]), args["input"], weight, args["output"], args["type"] == SPARSE)


nnapi_kernel(NNAPIKernel("lsh_projection", 15, ("hash", "input", "weight?"), ("output",), _infer_lsh, _run_lsh,
                         ints=("type",)))
