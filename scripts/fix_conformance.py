#!/usr/bin/env python
"""The conformance grid through ``ortpool fix``: every case the installed onnxruntime does not
agree on, fixed, with the fixed model checked against ortpool's kernels on the case's input.

Run: ``python scripts/fix_conformance.py [--ops MaxPool] [--versions 12,22] [--dtypes float]
[--ranks 1,2,3]``; prints counts per realization and form, per op version, and every case not
proven (see :mod:`ortpool.fix.grid`).
"""

from __future__ import annotations

import argparse
import sys
import time

from ortpool.fix.grid import fix_grid, summary
from ortpool.validate import grid


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ops")
    parser.add_argument("--versions")
    parser.add_argument("--dtypes")
    parser.add_argument("--ranks", default="1,2,3")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    cases = grid.cases(
        args.ops.split(",") if args.ops else None,
        [int(v) for v in args.versions.split(",")] if args.versions else None,
        args.dtypes.split(",") if args.dtypes else None,
        [int(r) for r in args.ranks.split(",")],
    )
    start = time.perf_counter()
    outcomes = fix_grid(cases, seed=args.seed)
    print("\n".join(summary(outcomes)))
    print(f"{time.perf_counter() - start:.1f} s")
    return 1 if any(not o.checked for o in outcomes) else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
