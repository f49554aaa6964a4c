"""Every parameter of the Python API refuses a bad value in one line naming it (issue 34): each
call of :data:`tests.api.refusals.CASES` in turn in one child process with a time limit (a hang
or a crash fails; nothing the call starts may outlive it), its exception an ``OrtpoolError`` or
a ``TypeError`` with the whole message expected, raised clean (nothing chained from inside
ortpool, onnx or multiprocessing). docs/api.md shows the same table."""

from __future__ import annotations

import inspect
import json

import ortpool
from tests.api.refusals import CASES, run
from tests.support import ROOT, run_child

#: the public callables and the parameters the table must cover for each
CALLABLES = {
    "ortpool.validate(": ortpool.validate,
    "ortpool.fix(": ortpool.fix,
    "ortpool.fix.fix_file(": ortpool.fix.fix_file,
    "ortpool.bench(": ortpool.bench,
    "ortpool.conformance(": ortpool.conformance,
    "ortpool.rewrite(": ortpool.rewrite.rewrite,
    "ortpool.restore(": ortpool.restore,
    "ortpool.rewrite.rewrite_file(": ortpool.rewrite.rewrite_file,
    "ortpool.rewrite.restore_file(": ortpool.rewrite.restore_file,
    "ortpool.check_model(": ortpool.check_model,
    "ortpool.InferenceSession(": ortpool.InferenceSession,
    "ortpool.session_options(": ortpool.session_options,
}


def test_each_bad_argument_is_refused_in_one_line_naming_it(tmp_path):
    assert run  # the child's entry point, run by name below
    done = run_child("tests.api.refusals", "run", [c for c, _ in CASES], str(tmp_path),
                     timeout=120)
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)
    for (call, expected), (text, clean) in zip(CASES, found, strict=True):
        kind, _, message = text.partition(": ")
        assert kind in ("OrtpoolError", "TypeError"), (call, text)
        assert any(name in message for name in _parameters(call)), (call, text)
        assert "\n" not in text and clean, (call, text)
        if expected.endswith(" ..."):  # figures of this machine follow
            assert text.startswith(expected[:-4]), (call, text)
        else:
            assert text == expected, (call, text)
    assert not list(tmp_path.iterdir())  # nothing written, nothing started


def test_the_table_covers_every_parameter_of_every_public_call():
    """Each parameter of each public call appears in at least one refused call (by keyword,
    or for the leading positional ones by position), so a new parameter needs its row."""
    for prefix, function in CALLABLES.items():
        calls = [call for call, _ in CASES if call.startswith(prefix)]
        assert calls, prefix
        parameters = [p for p in inspect.signature(function).parameters.values()
                      if p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL)]
        for position, parameter in enumerate(parameters):
            by_keyword = any(f"{parameter.name}=" in call for call in calls)
            by_position = any(_positionals(call, prefix) > position for call in calls)
            if parameter.name in ("source_dir", "kwargs") or (
                prefix == "ortpool.InferenceSession(" and parameter.name == "runtime"
            ):
                continue  # a proto's folder (any path); the internal description of a runtime
            assert by_keyword or by_position, (prefix, parameter.name)
    assert (ROOT / "docs" / "api.md").read_text().count("| `ortpool.") >= len(CASES)


def _parameters(call: str) -> list[str]:
    """The parameters ``call`` gives a value: its keywords and its positional ones' names."""
    import ast

    node = ast.parse(call, mode="eval").body
    names = list(inspect.signature(CALLABLES[call[: call.index("(") + 1]]).parameters)
    return [k.arg or "" for k in node.keywords] + names[: len(node.args)]


def _positionals(call: str, prefix: str) -> int:
    """How many positional arguments ``call`` passes (its arguments as Python parses them)."""
    import ast

    node = ast.parse(call, mode="eval").body
    return len(node.args) if isinstance(node, ast.Call) else 0
