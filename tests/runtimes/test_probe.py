"""scripts/runtime_probe.py on the reference evaluator (always installed): it runs, says what
each case gave against the spec, and keeps the evaluator's known deviations visible."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "runtime_probe.py"


def test_the_probe_reports_the_reference_evaluators_deviations(capsys, monkeypatch) -> None:
    spec = importlib.util.spec_from_file_location("runtime_probe", SCRIPT)
    assert spec is not None and spec.loader is not None
    probe = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "runtime_probe", probe)  # its dataclass looks itself up
    spec.loader.exec_module(probe)
    assert probe.main(["--runtime", "reference", "--json", "--timeout", "20"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert list(report["runtimes"]) == ["reference"]
    verdicts = {row["case"]: row["reference"]["verdict"] for row in report["cases"]}
    assert verdicts["MaxPool-12 k=2 s=2 auto_pad=SAME_LOWER on [1..7]"] == "differs"
    assert (
        verdicts["AveragePool-1 k=3 pads=1,1 on [1..7] (count_include_pad does not exist at 1)"]
        == "differs"
    )
    assert verdicts["MaxPool-22 k=2 s=3 pads=1,1 ceil_mode=1 on [1..7]"] == "same"
    assert verdicts["GlobalLpPool-2 p=2 on [1..7]"] == "no-kernel"
    assert len(verdicts) == len(probe.CASES)
