"""Helpers shared by the core tests: one-node ortpool models, the backend cases, example counts.

Kept apart from conftest.py so test modules import it by name (``from tests import support``).
"""

from __future__ import annotations

import collections
import fcntl
import functools
import os
import pickle
import subprocess
import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import onnx
from onnx import TensorProto, helper

from ortpool import optypes, versions
from ortpool.attributes import full_attributes, normalize
from ortpool.ort import runtime

#: The repository's root: a child process that imports ``tests.support`` needs it on its path.
ROOT = Path(__file__).resolve().parents[2]

#: The IR version ortpool stamps: every supported onnxruntime reads it (onnx 1.23 would write 14).
IR_VERSION = runtime.IR_VERSION

#: (op, version, path) -> number of property-test examples checked against the reference.
EXAMPLES: collections.Counter[tuple[str, int, str]] = collections.Counter()

#: (op, case name, version, is its own version, is the pinned deviation) of each passing run.
BACKEND_RUNS: list[tuple[str, str, int, bool, bool]] = []

#: The child run of tests/project/test_lowest_runtime.py: versions, counts, seconds, build_seconds.
LOWEST_RUN: dict[str, Any] = {}


#: What each of the run's two numba warm-up children compiles (tests/conftest.py), in order:
#: (element types, kernels named as :data:`ortpool.kernels.warmup.KERNELS`). Each kernel and
#: type in one child only, about the same CPU in each (two cores, the compiled kernels' tests
#: wait for both), and each float type's MaxPool in one child and its AveragePool in the other:
#: every test process then loads max and sum loops that two processes compiled, the case that
#: once ran one variant's machine code for both (tests/kernels/test_numba_cache.py).
WARMUP_CHILDREN: tuple[tuple[tuple[tuple[str, ...], tuple[str, ...]], ...], ...] = (
    (
        # float's LpPool runs double's AveragePool loops: compiled here, with both.
        (("float", "double"), ("AveragePool", "LpPool", "MaxRoiPool")),
        (("float",), ("GlobalAveragePool/GlobalLpPool",)),
        (("double",), ("MaxPool with Indices",)),
    ),
    (
        (("float", "double"), ("MaxPool", "MaxUnpool")),
        # int8 and uint8 run on float's max loops: compiled here, before them.
        (("float", "int8", "uint8"), ("MaxPool with Indices",)),
        (("int8", "uint8"), ("MaxPool",)),
        (("double",), ("GlobalAveragePool/GlobalLpPool",)),
    ),
)


def count_example(op: str, version: int, path: str) -> None:
    """Record one property example of ``op``-``version`` checked via ``path`` (numpy/session)."""
    EXAMPLES[(op, version, path)] += 1


def elem_type(dtype: np.dtype) -> int:
    return helper.np_dtype_to_tensor_dtype(np.dtype(dtype))


def ortpool_model(
    op: str,
    version: int,
    attrs: Mapping[str, Any],
    x_dtype: np.dtype,
    *,
    n_inputs: int = 1,
    n_outputs: int = 1,
    node_name: str = "pool",
) -> onnx.ModelProto:
    """A one-node model running ``op``-``version`` as its ortpool op type.

    The node is retargeted by hand the way the rewriter does it: the op type from
    :func:`optypes.for_node`, every attribute of the version in the ortpool encoding. Inputs are
    named as the schema does (X; I, output_shape for MaxUnpool; rois for MaxRoiPool); outputs Y
    (and Indices). Shapes are left open.
    """
    opv = versions.get(op, version)
    op_type = optypes.for_node(op, version, n_inputs, n_outputs)
    encoded = full_attributes(opv, normalize(opv, dict(attrs)))
    inputs = list(opv.input_names[:n_inputs])
    outputs = ["Y", "Indices"][:n_outputs]
    node = helper.make_node(
        op_type.name, inputs, outputs, domain=optypes.DOMAIN, name=node_name, **encoded
    )
    # Inputs of X's type (MaxRoiPool's rois) take it; the others are int64 (MaxUnpool's I).
    input_dtypes = [x_dtype if typed else np.int64 for typed in opv.typed_inputs[:n_inputs]]
    return one_node_model(node, input_dtypes, [x_dtype, np.int64][:n_outputs])


def one_node_model(
    node: onnx.NodeProto,
    input_dtypes: Sequence[Any],
    output_dtypes: Sequence[Any],
    opset: int = 22,
) -> onnx.ModelProto:
    """Wrap ``node`` in a graph whose inputs/outputs are the node's, with open shapes, at
    ``opset`` of the standard domain."""
    graph = helper.make_graph(
        [node],
        "g",
        [helper.make_tensor_value_info(n, elem_type(t), None)
         for n, t in zip(node.input, input_dtypes, strict=True)],
        [helper.make_tensor_value_info(n, elem_type(t), None)
         for n, t in zip(node.output, output_dtypes, strict=True)],
    )
    domains = {node.domain or ""}
    opsets = [helper.make_opsetid("", opset)]
    opsets += [helper.make_opsetid(d, 1) for d in sorted(domains - {""})]
    model = helper.make_model(graph, opset_imports=opsets)
    model.ir_version = IR_VERSION
    return model


def raw_ortpool_node(
    op_type: str, attributes: Mapping[str, Any], n_inputs: int = 1, n_outputs: int = 1,
    name: str = "bad",
) -> onnx.NodeProto:
    """A hand-written ortpool node with exactly the attributes given (no checks, no defaults)."""
    inputs = ["X", "I", "output_shape"][:n_inputs]
    outputs = ["Y", "Indices"][:n_outputs]
    return helper.make_node(op_type, inputs, outputs, domain=optypes.DOMAIN, name=name,
                            **attributes)


#: Test-only data computed once per checkout and reused by every process of a run (the
#: pytest-xdist workers, the lowest release's child run): not in git.
CACHE = Path(__file__).resolve().parent.parent / ".cache"


@functools.cache
def pooling_backend_cases() -> tuple[Any, ...]:
    """Every case of the onnx backend node tests of a pooling operator.

    onnx makes them by running every operator's case generators (its reference pooling loops in
    Python): 12-14 s of CPU, paid at collection by every process that collects the tests. The
    first process computes them under a lock and stores them for this onnx and numpy; the others
    load them in milliseconds.
    """
    CACHE.mkdir(exist_ok=True)
    path = CACHE / f"backend-cases-onnx{onnx.__version__}-numpy{np.__version__}.pickle"
    with open(path.with_suffix(".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        if path.is_file():
            try:
                return pickle.loads(path.read_bytes())
            except Exception:  # a file from an interrupted or older run: compute it again
                pass
        cases = _collect_pooling_backend_cases()
        part = path.with_suffix(".part")
        part.write_bytes(pickle.dumps(cases))
        os.replace(part, path)
        return cases


def _collect_pooling_backend_cases() -> tuple[Any, ...]:
    import onnx.backend.test.case.node as node_cases

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cases = node_cases.collect_testcases(None)
    return tuple(
        c for c in cases
        if c.kind == "node" and c.model.graph.node[0].op_type in versions.OPERATORS
    )


def session_inputs(model: onnx.ModelProto, arrays: Sequence[np.ndarray]) -> dict[str, Any]:
    return {vi.name: a for vi, a in zip(model.graph.input, arrays, strict=True)}


def tensor_dtype(value_info: onnx.ValueInfoProto) -> np.dtype:
    return np.dtype(helper.tensor_dtype_to_np_dtype(value_info.type.tensor_type.elem_type))


def onnx_attrs(node: onnx.NodeProto) -> dict[str, Any]:
    out = {}
    for attr in node.attribute:
        value = helper.get_attribute_value(attr)
        out[attr.name] = value.decode() if isinstance(value, bytes) else value
    return out


TensorProto = TensorProto  # re-exported for tests building typed graphs


#: The environment of a user's shell for child processes: importing onnxruntime puts
#: PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION in os.environ, and protobuf's pure-Python parser words
#: its errors differently.
CHILD_ENV = {k: v for k, v in os.environ.items() if k != "PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION"}


def run_cli(
    *args: str, cwd: Path, env: Mapping[str, str] | None = None, timeout: float = 120
) -> subprocess.CompletedProcess:
    """``python -m ortpool ARGS`` in a child process of its own (a hang fails after ``timeout``,
    raising :class:`subprocess.TimeoutExpired` as ``subprocess.run`` does); the child is forked
    from a server that imported ortpool once (:mod:`tests.support.cli_server`)."""
    return _cli_server().run(list(args), cwd, dict(CHILD_ENV if env is None else env), timeout)


def run_child(
    module: str, function: str, *args: Any, timeout: float, env: Mapping[str, str] | None = None
) -> subprocess.CompletedProcess:
    """``module.function(*args)`` (JSON arguments) in a child process of its own, forked from
    the same server as :func:`run_cli`; its exit status, stdout and stderr."""
    return _cli_server().run(
        [], ROOT, dict(os.environ if env is None else env), timeout, (module, function, list(args))
    )


@functools.cache
def _cli_server():
    from tests.support.cli_server import CliServer

    return CliServer(CHILD_ENV)


def commands_in_child(
    cases: Sequence[Sequence[str]],
    *,
    cwd: Path | None = None,
    timeout: float = 120,
    env: Mapping[str, str] | None = None,
) -> list[tuple[int, str]]:
    """Each ``ortpool ARGV`` of ``cases`` in turn, in one child process with a time limit (a
    hang fails the caller; a child per case would cost about 0.2 s of CPU each): per case the
    exit code and stderr (stdout discarded)."""
    import json

    done = run_child(
        "tests.support", "_commands", [list(c) for c in cases], str(cwd or ROOT),
        timeout=timeout, env=env,
    )
    if done.returncode != 0:
        raise AssertionError(f"the child failed ({done.returncode}): {done.stderr}")
    return [(code, text) for code, text in json.loads(done.stdout)]


def _commands(cases: list[list[str]], cwd: str) -> None:
    """In the child of :func:`commands_in_child`: prints one JSON list of (code, stderr)."""
    import contextlib
    import io
    import json

    from ortpool import cli

    os.chdir(cwd)
    found = []
    for argv in cases:
        err = io.StringIO()
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            try:
                code = cli.main(argv)
            except SystemExit as stop:  # argparse's usage errors
                code = stop.code
        found.append((code, err.getvalue()))
    print(json.dumps(found))


def processes_marked(marker: str, wait: float = 10.0) -> list[int]:
    """The processes whose environment holds ``marker`` (a string a test put in the environment
    of a command it started, so every process started on the command's behalf carries it),
    after up to ``wait`` seconds for them to end."""
    import time

    def marked() -> list[int]:
        found = []
        for entry in os.listdir("/proc"):
            if entry.isdigit():
                try:
                    environ = Path("/proc", entry, "environ").read_bytes()
                except OSError:  # gone, or not ours
                    continue
                if marker.encode() in environ:
                    found.append(int(entry))
        return found

    deadline = time.monotonic() + wait
    while (found := marked()) and time.monotonic() < deadline:
        time.sleep(0.1)
    return found


def unwrap(text: str) -> str:
    """A ``fix`` or ``rewrite`` report as its logical lines: ``ortpool.report.terminal.wrapped``
    continues a long line six columns deeper than its own indent, a depth no nested line takes
    (a node's lines sit four deeper), so such a line is joined back to the one it continues."""
    out: list[str] = []
    depths: list[int] = []
    for line in text.splitlines():
        depth = len(line) - len(line.lstrip(" "))
        if out and line.strip() and depth == depths[-1] + 6:
            out[-1] += " " + line.strip()
            continue
        out.append(line)
        depths.append(depth)
    return "\n".join(out) + ("\n" if text.endswith("\n") else "")
