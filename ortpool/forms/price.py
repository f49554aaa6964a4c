"""What guarding a model's max-like nodes against NaN and -inf costs, measured on the model.

Ruling 20: in the finite domain ``validate`` reports the nodes that differ only on non-finite
inputs with the price of what ``ortpool fix --nonfinite`` would write (fix's own choice), timed
against the original as ``ortpool bench MODEL FIXED`` times them (interleaved, with a control)
at the model's level, within :data:`BUDGET`; the rounds' spread says how sure the figure is.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Mapping, Sequence

import numpy as np
import onnx

from ortpool.check.cases import FeedSet, expect, full_shape, proof_sets
from ortpool.forms import lift
from ortpool.forms.apply import apply
from ortpool.forms.choose import choose
from ortpool.forms.emit import Unwritable
from ortpool.forms.plan import Plan, candidates
from ortpool.forms.prove import isolated_model
from ortpool.model.scopes import ai_onnx_opset
from ortpool.model.site import Site, find_sites
from ortpool.model.timing import Ratio, Stats, interleaved
from ortpool.ort import DEFAULT_LEVEL, ISOLATED_LEVEL, RuntimeSpec
from ortpool.ort.opening import open_session
from ortpool.ort.runtime_spec import runner
from ortpool.ort.timed import CONTROL, FIXED, ORIGINAL
from ortpool.report.bench import fmt_time
from ortpool.report.outcomes import Attempt, Outcome

#: Seconds of timing (the sessions' creation apart) a model's price may take: its rounds are
#: as many as fit, from 3 to 12.
BUDGET = 0.3
ROUNDS = (3, 12)
#: Seconds of back-to-back runs per sample: long enough for the timer.
SAMPLE = 0.002


@dataclasses.dataclass
class GuardPrice:
    """The guard's price on one model: the nodes guarded, the forms, the time per run."""

    nodes: list[str]
    forms: dict[str, str]  # node -> the form the engine proved (or why none)
    level: str  # the graph optimization level the models were timed at
    ratio: float | None = None  # guarded / original, median of the per-round ratios
    spread: float | None = None  # half the interquartile range of those ratios
    control: float | None = None  # original / original: the noise at the time
    original: float | None = None  # seconds per run, median
    guarded: float | None = None
    rounds: int = 0
    error: str = ""  # why nothing was measured

    def text(self, verbose: bool = False) -> str:
        """One line for the report: plain words, the figures behind them with ``verbose``."""
        names = ", ".join(repr(n) for n in self.nodes)
        if self.error or self.ratio is None:
            return f"guarding {names} could not be measured: {self.error}"
        forms = ", ".join(sorted(set(self.forms.values())))
        line = (f"guarding {names} against NaN and -inf makes a run take {self.ratio:.2f} times "
                f"as long ({fmt_time(self.original)} -> {fmt_time(self.guarded)})")
        if verbose:
            line += (f"; forms {forms}; +-{self.spread:.2f} over {self.rounds} interleaved "
                     f"rounds, the original against itself {self.control:.2f}; level "
                     f"{self.level}, whole runs as 'ortpool bench MODEL FIXED' times them")
        return line


def guard_forms(model: onnx.ModelProto, sites: Sequence[Site], runtime: RuntimeSpec,
                proven: Mapping[str, Sequence[FeedSet]] | None = None
                ) -> tuple[onnx.ModelProto | None, dict[str, str]]:
    """``model`` with each main-graph ``site`` in the first form proven exact on its non-finite
    built cases (``proven``: node -> those validate ran, the spec's outputs in them), and node ->
    form (or why none); None where a node has no standard form."""
    plans, forms = {}, {}
    for site in sites:
        shape = full_shape(site)
        built = list((proven or {}).get(site.name) or (
            proof_sets(site, [shape], nonfinite=True) if shape else []))
        plans_of_site = [(n, p) for n, p in candidates(site) if isinstance(p, Plan)]
        # the spec's answers cost more than every proof below (46 sets of a MaxRoiPool): they
        # are computed once some guard can be written at this opset (none can below opset 9)
        guards = [p for _, p in plans_of_site if p.nan_guard]
        writable = built and any(_writable(p, site, built[0].arrays) for p in guards)
        sets = expect(site, built) if writable else []
        # the node differs on NaN and -inf alone: only a guarded form can be exact there, so
        # the unguarded ones are passed over (as fix would find them not exact, at a cost), and
        # so is ortpool's op, which would be proven at the price of a custom-op session only
        # to be reported as "no standard-op form" below
        unguarded = [Attempt(name, Outcome.NOT_APPLICABLE, "guards nothing")
                     for name, plan in plans_of_site if plan.nan_guard is None]
        choice = choose(site, sets, runtime, unguarded) if sets else None
        if choice is None or choice.plan is None or choice.plan.ortpool:
            forms[site.name] = "no standard-op form (ortpool's op would guard it)"
            return None, forms
        plans[site.number] = choice.plan
        forms[site.name] = choice.plan.name
    fixed, _ = apply(model, list(sites), plans)
    return fixed, forms


def _writable(plan: Plan, site: Site, example: Sequence[np.ndarray]) -> bool:
    try:
        isolated_model(plan, site, example)
    except Unwritable:
        return False
    return True


def _lifted_forms(model: onnx.ModelProto, sites: Sequence[Site], runtime: RuntimeSpec,
                  forms: dict[str, str], proven: Mapping[str, Sequence[FeedSet]]
                  ) -> tuple[onnx.ModelProto | None, dict[str, str]]:
    """:func:`guard_forms` on ``model`` lifted, as ``ortpool fix`` lifts it, to the first opset
    where each site has a standard form; (None, ``forms``) where none does."""
    opset = ai_onnx_opset(model.opset_import)
    elems = {s.name: s.elem for s in sites if s.elem}
    for target in lift.TARGETS:
        pinned: dict[str, int] = {}
        if opset is None or target <= opset or lift.blocked(model, target, elems, pinned):
            continue
        copy, _ = lift.lifted(model, target, pinned)
        found, _ = find_sites(copy, pinned=pinned)
        sized = {s.name: s for s in sites}
        mine = [s.at(sized[s.name].x_dims) for s in found if s.name in sized and s.judgeable]
        # the spec's outputs in ``proven`` are those of the version validate judged
        same = {s.name: proven[s.name] for s in mine
                if s.name in proven and s.version == sized[s.name].version}
        fixed, lifted_forms = guard_forms(copy, mine, runtime, same)
        if fixed is not None:
            return fixed, {k: f"{v}+opset-lift" for k, v in lifted_forms.items()}
    return None, forms


def guard_price(model: onnx.ModelProto, sites: Sequence[Site], feeds: Mapping[str, np.ndarray],
                runtime: RuntimeSpec, budget: float = BUDGET,
                proven: Mapping[str, Sequence[FeedSet]] | None = None) -> GuardPrice:
    """The price of guarding ``sites`` (main-graph, sized) on ``feeds`` at the level the model
    runs at (``runtime``'s, or ``all`` where it is validate's isolating ``disable``);
    ``proven``: :func:`guard_forms`'."""
    level = DEFAULT_LEVEL if runtime.level == ISOLATED_LEVEL else runtime.level
    timed = runtime.with_level(level)
    found = GuardPrice([s.name for s in sites], {}, level)
    try:
        fixed, found.forms = guard_forms(model, sites, timed, proven)
        if fixed is None:  # as fix does: at a higher opset where every node keeps its meaning
            fixed, found.forms = _lifted_forms(model, sites, timed, found.forms, proven or {})
    except Exception as err:  # a form the runtime refuses: the report says why, validation goes on
        found.error = f"no guard could be written: {str(err).splitlines()[0][:200]}"
        return found
    if fixed is None:
        found.error = "; ".join(f"{k}: {v}" for k, v in found.forms.items())
        return found
    try:
        times, ratios, found.rounds = _timed(model, fixed, feeds, timed, budget)
    except Exception as err:  # onnxruntime's own error types, or a variant that cannot run
        found.error = f"the models could not be timed: {str(err).splitlines()[0][:200]}"
        return found
    found.ratio, found.spread = ratios[FIXED].median, ratios[FIXED].spread
    found.control = ratios[CONTROL].median
    found.original, found.guarded = times[ORIGINAL].median, times[FIXED].median
    return found


def _timed(model: onnx.ModelProto, fixed: onnx.ModelProto, feeds: Mapping[str, np.ndarray],
           runtime: RuntimeSpec, budget: float) -> tuple[dict[str, Stats], dict[str, Ratio], int]:
    """The two models timed in one session each (a real model's session costs tenths of a
    second), interleaved with the original's as the control, as many rounds as ``budget``
    seconds of runs hold."""
    sessions = {ORIGINAL: open_session(runtime, model), FIXED: open_session(runtime, fixed)}
    calls = {name: runner(s, None, feeds) for name, s in sessions.items()}
    start = time.perf_counter()
    for call in calls.values():
        call()  # a first run allocates: not timed
    once = max((time.perf_counter() - start) / 2, SAMPLE)
    rounds = int(min(max(budget / (3 * once), ROUNDS[0]), ROUNDS[1]))
    variants = {ORIGINAL: calls[ORIGINAL], FIXED: calls[FIXED], CONTROL: calls[ORIGINAL]}
    times = interleaved(variants, rounds, SAMPLE, warmup=1, warmup_time=0.0)
    ratios = {name: Ratio.of(times[name], times[ORIGINAL]) for name in (CONTROL, FIXED)}
    return times, ratios, rounds
