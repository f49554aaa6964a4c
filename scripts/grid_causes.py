"""The conformance grid on one runtime, with each failing case's causes and their bases.

    python scripts/grid_causes.py RUNTIME [--out DIR] [--keep] [--again]

RUNTIME is ``onnxruntime`` (the CPU provider, optimizations off), ``openvino``, ``tract`` or
``reference``. Prints one line of totals (cases, agree, differ split by basis, refused, no
kernel, crashed, timed out, the judging time and the time naming the causes) and the cause totals
with the (op, version)s they show in; writes ``DIR/RUNTIME.json`` (each case's status, causes,
bases and message) and ``DIR/RUNTIME.matrix.txt`` (the conformance matrix as the report shows it).

``--keep`` also pickles each case's site and judgement (with the runtime's outputs)
to ``DIR/RUNTIME.pkl``; ``--again`` names the causes anew from that pickle without running the
runtime (a recogniser changed: seconds instead of minutes). ``--nan`` runs the grid's NaN cases
alone (outside the finite domain the grid is by default: ruling 20), as ``RUNTIME-nan``.
"""

from __future__ import annotations

import argparse
import collections
import json
import pickle
import sys
import time
from pathlib import Path
from typing import Any

from ortpool import runtimes
from ortpool.check import causes, grid
from ortpool.check import status as st
from ortpool.conformance.run import select_cases
from ortpool.ort.runtime_spec import RuntimeSpec
from ortpool.report import record
from ortpool.report.matrix import CaseResult, cause_totals, render
from ortpool.runtimes.base import Worker

#: statuses whose cases have a difference to explain (and so a basis)
EXPLAINED = (st.DIFFER, st.INACCURATE, st.RULINGS, st.ORTPOOL_REJECTED)
#: statuses that are the runtime's failures, each named by a cause
FAILURES = (st.ORT_REJECTED, st.NO_KERNEL, st.CRASHED, st.TIMED_OUT)


def judged(name: str, cases: list[grid.Case]) -> list[tuple[grid.Case, Any, Any]]:
    """(case, site, judgement) for every case, on runtime ``name``."""
    out = []
    if name == "onnxruntime":
        spec = RuntimeSpec(level="disable")
        for case in cases:
            out.append((case, *grid.judge_case(case, 0, spec)))
        return out
    with Worker(runtimes.get(name), 30) as worker:
        for case in cases:
            out.append((case, *grid.judge_case(case, 0, worker)))  # type: ignore[arg-type]
    return out


def summary(name: str, found: list[CaseResult], secs: float) -> dict[str, Any]:
    """The grid's figures: statuses, the failing cases by basis, the causes."""
    statuses = collections.Counter(r.node.status for r in found)
    bases: collections.Counter = collections.Counter()
    codes: collections.Counter = collections.Counter()
    for r in found:
        if r.node.status in EXPLAINED + FAILURES:
            basis = causes.verdict_basis(r.node.causes)
            bases[f"{r.node.status}: {basis.label if basis else 'no basis'}"] += 1
            codes.update(c.code for c in r.node.causes)
    return {"runtime": name, "cases": len(found), "seconds": round(secs, 1),
            "statuses": dict(statuses), "bases": dict(sorted(bases.items())),
            "causes": dict(codes.most_common())}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runtime", choices=["onnxruntime", *runtimes.names()])
    parser.add_argument("--out", default="/tmp/grids-causes")
    parser.add_argument("--keep", action="store_true")
    parser.add_argument("--again", action="store_true")
    parser.add_argument("--nan", action="store_true",
                        help="the grid's NaN cases (outside the finite domain, ruling 20) alone")
    args = parser.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    name = f"{args.runtime}-nan" if args.nan else args.runtime
    kept = out / f"{name}.pkl"
    started = time.perf_counter()
    if args.again:
        with open(kept, "rb") as f:
            triples = pickle.load(f)
    else:
        cases = (select_cases(nonfinite=True) if args.nan else select_cases())
        if args.nan:
            cases = [c for c in cases if c.data == "nan"]
        triples = judged(args.runtime, cases)
    secs = time.perf_counter() - started
    found = []
    named_at = time.perf_counter()
    for case, site, judgement in triples:
        node = record.node_record(site, judgement)
        found.append(CaseResult(case, node))
    naming = time.perf_counter() - named_at
    if args.keep and not args.again:
        with open(kept, "wb") as f:
            pickle.dump(triples, f)
    figures = summary(name, found, secs)
    figures["naming_seconds"] = round(naming, 1)
    print(json.dumps(figures))
    for code, (count, where) in sorted(cause_totals(found).items(), key=lambda kv: -kv[1][0]):
        print(f"  {code:<28} {count:>5}  {', '.join(where)}")
    rows = [{**r.case.describe(), "status": r.node.status, "message": r.node.message[:400],
             "causes": [c.to_dict() for c in r.node.causes]} for r in found]
    (out / f"{name}.matrix.txt").write_text("\n".join(render(found, f"{name}: {len(found)} "
                                                              "cases")) + "\n")
    (out / f"{name}.json").write_text(json.dumps({"summary": figures, "cases": rows},
                                                         default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
