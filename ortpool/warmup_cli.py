"""``ortpool warmup``: compile the numba kernels into numba's on-disk cache ahead of time."""

from __future__ import annotations

import argparse
import sys
from collections import Counter

from ortpool.kernels import backend
from ortpool.kernels.warmup import DTYPES, KERNELS, planned, warm_up
from ortpool.options.files import names

HELP = "compile the numba kernels ahead of time (e.g. in a container build), so no run pays it"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--dtypes", default=",".join(DTYPES), metavar="T[,T]",
        help="element types to compile for, comma-separated ONNX names (float is float32, "
        "double float64; numpy's spellings float32, float64 are read too; default: every one "
        f"ortpool's ops take, {','.join(DTYPES)}; float16/bfloat16 are computed in float)")
    parser.add_argument(
        "--kernels", default=",".join(KERNELS), metavar="K[,K]",
        help="kernels to compile, comma-separated, named as the report names them (default: "
        f"every one: {', '.join(KERNELS)})")


def run(args: argparse.Namespace) -> int:
    dtypes, kernels = names(args.dtypes), names(args.kernels)
    if backend() != "numba":
        warm_up(dtypes, kernels)  # checks the names all the same
        print("numpy kernels in use (numba not installed, or ORTPOOL_KERNELS=numpy): "
              "nothing to compile")
        return 0
    todo = planned(dtypes, kernels)
    per_type = Counter(dtype for _, dtype in todo)
    # What is about to happen, on stderr: a cold compile takes seconds per kernel.
    print(
        f"warming up {len(todo)} kernel(s) ({', '.join(f'{t} {n}' for t, n in per_type.items())}); "
        "a first compile takes 10-20 s per window kernel, a cached one loads at once",
        file=sys.stderr, flush=True)

    def done(kernel: str, dtype: str, seconds: float) -> None:
        print(f"{kernel:30s} {dtype:6s} {seconds:7.2f} s", flush=True)

    found = warm_up(dtypes, kernels, on_done=done)
    total = sum(s for _, _, s in found)
    print(f"{len(found)} kernel(s) ready in {total:.1f} s; later processes load the cached code")
    return 0
