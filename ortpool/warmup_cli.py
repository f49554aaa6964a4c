"""``ortpool warmup``: compile the numba kernels into numba's on-disk cache ahead of time."""

from __future__ import annotations

import argparse

from ortpool.kernels import backend
from ortpool.kernels.warmup import KERNELS, warm_up

HELP = "compile the numba kernels ahead of time (e.g. in a container build), so no run pays it"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--dtypes", default="float32,float64,int8,uint8",
        help="element types to compile for, comma-separated (default: every one ortpool's ops "
        "take; float16/bfloat16 are computed in float32)",
    )
    parser.add_argument(
        "--kernels", default=",".join(KERNELS),
        help="kernels to compile, comma-separated, named as the report names them (default: "
        f"every one: {', '.join(KERNELS)})",
    )


def _names(text: str) -> list[str]:
    """A comma-separated option's names, blanks around them and empty ones dropped."""
    return [name.strip() for name in text.split(",") if name.strip()]


def run(args: argparse.Namespace) -> int:
    done = warm_up(_names(args.dtypes), _names(args.kernels))
    if backend() != "numba":
        print("numpy kernels in use (numba not installed, or ORTPOOL_KERNELS=numpy): "
              "nothing to compile")
        return 0
    for kernel, dtype, seconds in done:
        print(f"{kernel:22s} {dtype:8s} {seconds:7.2f} s")
    print(f"total {sum(s for _, _, s in done):.1f} s; later processes load the cached code")
    return 0
