#!/usr/bin/env python
"""The conformance grid through ``ortpool fix``: every case the installed onnxruntime does not
agree on, fixed, with the fixed model checked against ortpool's kernels on the case's input.

Run: ``python scripts/fix_conformance.py [--ops MaxPool] [--versions 12,22] [--dtypes float]
[--ranks 1,2,3]``; prints counts per realization and form, per op version, and every case not
proven (see scripts/fix_grid.py). ``--bundled`` fixes the bundled models instead
(``models/`` and ``models/fix/``; fix-nan with ``nonfinite``) and prints their
nodes per realization and form. Exit 1 when anything is unproven.
"""

from __future__ import annotations

import argparse
import sys
import time

from fix_grid import fix_grid, summary  # beside this script

from ortpool.check import grid


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ops")
    parser.add_argument("--versions")
    parser.add_argument("--dtypes")
    parser.add_argument("--ranks", default="1,2,3")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--bundled", action="store_true", help="the bundled models instead")
    args = parser.parse_args(argv)
    if args.bundled:
        return bundled()
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


def bundled() -> int:
    from collections import Counter

    from ortpool.fix import fix_with_report
    from ortpool.report.outcomes import Realization
    from ortpool.validate.validator import bundled_models_dir

    folder = bundled_models_dir()
    start = time.perf_counter()
    realizations: Counter[Realization] = Counter()
    named: Counter[str] = Counter()
    unproven = []
    paths = [*sorted(folder.glob("*.onnx")), *sorted((folder / "fix").glob("*.onnx"))]
    for path in paths:
        _, report = fix_with_report(path)  # NaN and -inf proven (the default)
        for node in report.nodes:
            realizations[node.realization] += 1
            if node.realization is Realization.FORM:
                named[node.form] += 1
            if node.realization is Realization.ORTPOOL:
                named[f"ortpool op: {node.key} {node.elem}"] += 1
            if node.realization is Realization.UNPROVEN:
                unproven.append(f"  {path.name}: {node.describe()}")
    total = sum(realizations.values())
    print(f"{len(paths)} bundled models, {total} pooling nodes: "
          + ", ".join(f"{k} {v}" for k, v in realizations.items()))
    for name, count in sorted(named.items()):
        print(f"  {name}: {count}")
    print(f"unproven: {len(unproven)}")
    print("\n".join(unproven))
    print(f"{time.perf_counter() - start:.1f} s")
    return 1 if unproven else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
