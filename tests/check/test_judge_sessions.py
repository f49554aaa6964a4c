"""The engine's sessions (``ortpool.check.judge``): a node judged again on the same model reuses
the session opened for it (validate judges each node on the finite, then the non-finite cases)."""

from __future__ import annotations

import numpy as np

from ortpool.check import judge as judge_mod
from ortpool.check.cases import proof_sets
from ortpool.ort import RuntimeSpec
from tests.support.judging import site_of


def test_a_node_judged_twice_opens_one_session(monkeypatch):
    opened = []
    real = judge_mod.open_session

    def counted(runtime, model, **kwargs):
        opened.append(kwargs.get("level"))
        return real(runtime, model, **kwargs)

    monkeypatch.setattr(judge_mod, "open_session", counted)
    monkeypatch.setattr(judge_mod, "_SESSIONS", type(judge_mod._SESSIONS)())
    x = np.zeros((1, 3, 9, 9), np.float32)
    site = site_of("MaxPool", 12, {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1]}, [x])
    runtime = RuntimeSpec(level="disable")
    finite = judge_mod.judge(site, proof_sets(site, [x.shape]), runtime)
    wider = judge_mod.judge(site, proof_sets(site, [x.shape], nonfinite=True), runtime)
    # onnxruntime's MaxPool pads with the lowest finite value, not -inf: the second differs
    assert (finite.status, finite.sets, wider.status) == ("agree", 5, "differ")
    assert wider.failure.startswith("Y differs in 54 of 243 cells (on lowest, X [1, 3, 9, 9]")
    assert opened == [None]
    # another level, another model: each its own session; the oldest beyond four is let go
    judge_mod.judge(site, proof_sets(site, [x.shape]), RuntimeSpec(level="all"))
    for size in (10, 11, 12):
        y = np.zeros((1, 3, size, size), np.float32)
        judge_mod.judge(site.at(y.shape), proof_sets(site.at(y.shape), [y.shape]), runtime)
    assert len(opened) == 5 and len(judge_mod._SESSIONS) == 4
    judge_mod.judge(site, proof_sets(site, [x.shape]), runtime)
    assert len(opened) == 6
