"""The conformance grid through ``ortpool fix``: every case the installed runtime gets wrong,
fixed, and the fixed model checked once more against ortpool's kernels on the case's own input.

Each case of :mod:`ortpool.check.grid` is judged as ``ortpool conformance`` judges it; a
case that does not agree (differs, differs in RULINGS cells, refused, no kernel) becomes its
one-node model, is fixed with the case's input as the model's
input (NaN cases with ``nonfinite``), and the fixed model's outputs are compared with the
kernels' outside the fixer's own proof: values exactly (averages within the tolerance), Indices
exactly.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Callable, Sequence

import numpy as np
import onnx

from ortpool import kernels
from ortpool.check import grid
from ortpool.check.compare import compare_values
from ortpool.fix.fixer import Options, fix_model
from ortpool.model.singlenode import alone_model, feed_dict
from ortpool.ort.opening import open_session
from ortpool.ort.runtime_spec import RuntimeSpec, run_arrays
from ortpool.report import fixes as report_mod
from ortpool.report import record as results
from ortpool.report.outcomes import Realization
from ortpool.tolerances import node_tolerance

AGREEING = (results.AGREE, results.TIES)


@dataclasses.dataclass
class GridOutcome:
    """One grid case: the runtime's status, what fix chose (``realization`` None: the runtime
    agrees, nothing was fixed), whether the check agrees."""

    case: grid.Case
    status: str
    realization: Realization | None
    form: str | None
    checked: bool
    detail: str = ""

    @property
    def agrees(self) -> bool:
        """The runtime agrees with the kernels on the case: nothing to fix."""
        return self.realization is None


def check_fixed(
    fixed: onnx.ModelProto, case: grid.Case, feeds: Sequence[np.ndarray], runtime: RuntimeSpec
) -> str:
    """The fixed model's outputs on ``feeds`` against the kernels': "" or the difference."""
    site = case.site(feeds)
    want = list(kernels.run_op(site.op, site.version, feeds, site.attributes, site.n_outputs))
    session = open_session(runtime, fixed)
    names = [i.name for i in session.get_inputs()]
    got = run_arrays(session, None, dict(zip(names, feeds, strict=True)))
    tol = node_tolerance(case.op, case.version, case.dtype, feeds[0], want[0], case.attributes)
    y = np.asarray(got[0])
    comp = compare_values("Y", case.dtype, y, want[0], tol)
    if comp.shapes_differ or comp.differing or comp.inaccurate:
        wrong = comp.differing + comp.inaccurate
        return f"Y: {wrong} cells differ, shapes {comp.builtin_shape}/{comp.ortpool_shape}"
    if len(want) > 1 and not np.array_equal(np.asarray(got[1]), want[1]):
        return "Indices differ"
    return ""


def fix_grid(
    cases: Sequence[grid.Case],
    seed: int = 0,
    runtime: RuntimeSpec | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> list[GridOutcome]:
    """Fix and check every case the runtime does not agree on (agreeing cases are listed with
    no realization)."""
    runtime = runtime or RuntimeSpec()
    found = []
    for number, case in enumerate(cases):
        if progress and number % 50 == 0:
            progress(number, len(cases))
        feeds = grid.case_inputs(case, seed)
        status = grid.judge_case(case, seed, RuntimeSpec(level="disable"))[1].status
        if status in AGREEING:
            found.append(GridOutcome(case, status, None, None, True))
            continue
        model = alone_model(case.site(feeds), feeds)
        fix_options = Options(
            runtime=runtime, nonfinite=case.data == "nan", inputs=[feed_dict(feeds)], seed=seed
        )
        fixed, report = fix_model(model, fix_options)
        node = report.nodes[0]
        detail = node.reason if node.realization == report_mod.UNPROVEN else ""
        checked = False
        if node.realization != report_mod.UNPROVEN:
            try:
                detail = check_fixed(fixed, case, feeds, runtime)
            except Exception as err:  # the check's own session: report, do not stop the sweep
                detail = f"the fixed model could not be run: {str(err)[:200]}"
            checked = not detail
        found.append(GridOutcome(case, status, node.realization, node.form, checked, detail))
    return found


def summary(outcomes: Sequence[GridOutcome]) -> list[str]:
    """Counts per realization and form, per op version; then every case not proven."""
    fixed = [o for o in outcomes if not o.agrees]
    lines = [
        f"{len(outcomes)} grid cases; onnxruntime agrees on {len(outcomes) - len(fixed)}; "
        f"fixed {len(fixed)}: "
        + ", ".join(f"{k} {v}" for k, v in Counter(o.realization for o in fixed).items()),
    ]
    forms = Counter(o.form for o in fixed if o.realization == report_mod.FORM)
    lines.append("  standard forms: " + ", ".join(f"{k} {v}" for k, v in sorted(forms.items())))
    per_key: dict[str, Counter] = {}
    for o in fixed:
        key = f"{o.case.op}-{o.case.version}"
        label = o.form if o.realization == report_mod.FORM else o.realization
        per_key.setdefault(key, Counter())[label] += 1
    for key, counter in per_key.items():
        lines.append(f"  {key:<15} " + ", ".join(f"{k} {v}" for k, v in counter.most_common()))
    ops = [o for o in fixed if o.realization == report_mod.ORTPOOL]
    by_type = Counter(o.case.dtype for o in ops)
    indices = sum(o.case.indices for o in ops if o.case.dtype != "double")
    lines.append(
        "  ortpool's op by element type: "
        + ", ".join(f"{k} {v}" for k, v in by_type.most_common())
        + f"; of the other types, with Indices in use: {indices}"
    )
    bad = [o for o in fixed if not o.checked]
    lines.append(
        f"unproven or failing the independent check: {len(bad)}; checked against the kernels: "
        f"{sum(o.checked for o in fixed)}"
    )
    for o in bad[:20]:
        lines.append(f"  case {o.case.id} {o.case.describe()}: {o.realization}: {o.detail}")
    return lines


__all__ = ["GridOutcome", "check_fixed", "fix_grid", "summary"]
