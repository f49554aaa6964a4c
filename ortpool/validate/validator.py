"""``validate_model``: one model, per pooling node in isolation and end to end.

1. Inputs: resolved by :func:`ortpool.model.inputs.resolve` (``--shape``, ``--inputs``, seeded
   generation; every open dim named with its size).
2. The model runs once in onnxruntime's built-in kernels with every pooling node's inputs as
   extra outputs: those are the node's real inputs. (If onnxruntime cannot run the model, e.g. it
   has no kernel for one node, the inputs are captured from the ortpool-rewritten run instead.)
3. Each node runs alone in both implementations on exactly its captured inputs
   (:func:`ortpool.validate.isolate.run_node`), optionally also in the onnx reference evaluator.
4. End to end: the ortpool-rewritten model runs on the same inputs at the same optimisation
   level and every graph output is compared with the built-in run's (:mod:`.endtoend`).
"""

from __future__ import annotations

import dataclasses
import importlib.resources
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import numpy as np
import onnx

from ortpool import modelfile
from ortpool.attributes import empty_auto_pad_note
from ortpool.errors import OrtpoolError
from ortpool.model import capture
from ortpool.model import inputs as model_inputs
from ortpool.model.singlenode import NodeSpec, attribute_dict, builtin_model, feed_dict
from ortpool.ort import ortrun
from ortpool.ort.opening import open_session
from ortpool.ort.runtime_spec import DEFAULT_LEVEL, ISOLATED_LEVEL, RuntimeSpec
from ortpool.validate import endtoend, isolate, results
from ortpool.validate import reference as reference_mod

Progress = Callable[[int, int, str], None]


@dataclasses.dataclass
class ValidateOptions(isolate.Options):
    seed: int = 0
    shapes: Mapping[str, Sequence[int]] = dataclasses.field(default_factory=dict)
    inputs_path: str | None = None
    #: the shapes and arrays as one spec (the command line's); None: made of the two above
    inputs: model_inputs.InputSpec | None = None
    reference: bool = False
    reference_timeout: float = reference_mod.DEFAULT_TIMEOUT


def load_model(path: str | Path) -> onnx.ModelProto:
    """Load an ONNX model with its weights; anything unreadable is an OrtpoolError (exit 2) with
    the reason."""
    return modelfile.read(path, load_external_data=True)


def _rewrite(model: onnx.ModelProto) -> tuple[onnx.ModelProto | None, str]:
    try:
        from ortpool.rewrite import rewrite
    except ImportError as err:
        return None, f"the ortpool rewriter is not available ({err})"
    try:
        return rewrite(model), ""
    except (OrtpoolError, ValueError) as err:
        return None, f"ortpool could not rewrite the model: {err}"


def _ortpool_runner(runtime: RuntimeSpec):
    """The rewritten model's run, on the built-in run's runtime and optimisation level:
    otherwise only one side's convolutions are fused and blocked (NCHWc), and that alone moves a
    deep network's outputs by float noise that no pooling node caused."""

    def run(model: onnx.ModelProto, feeds: Mapping[str, np.ndarray]) -> list[np.ndarray]:
        session = open_session(runtime, model)
        return [np.asarray(a) for a in session.run(None, dict(feeds))]

    return run


def validate_model(
    source: str | Path | onnx.ModelProto,
    options: ValidateOptions | None = None,
    progress: Progress | None = None,
    strict_shapes: bool = True,
    label: str | None = None,
) -> results.ModelResult:
    """Validate one model; node-level problems are results, only an unusable model raises."""
    options = options or ValidateOptions()
    if isinstance(source, onnx.ModelProto):
        model, label = source, label or source.graph.name or "<model>"
    else:
        model, label = load_model(source), label or str(source)
    result = results.ModelResult(path=label)
    try:
        result.opset = capture.governing_opset(model)
    except ValueError as err:
        raise OrtpoolError(f"{label}: {err}") from None

    spec = options.inputs or model_inputs.InputSpec.make(options.shapes, options.inputs_path)
    if not strict_shapes:  # several models: each --shape/--inputs name applies where it exists
        spec = spec.only(v.name for v in model_inputs.graph_inputs(model))
    try:
        resolved = model_inputs.resolve(model, spec, options.seed)
    except OrtpoolError as err:
        raise OrtpoolError(f"{label}: {err}") from None
    feeds = resolved.feeds
    result.input_source = resolved.source
    result.inputs = resolved.shapes
    result.open_dims = resolved.dims
    result.shape_hint = resolved.shape_hint()

    main_names = {n.name for n in model.graph.node}
    inlined = capture.inline_functions(model)
    nodes = capture.pooling_nodes(inlined)
    for i, pooling in enumerate(nodes):
        if (
            pooling.location == "main graph"
            and pooling.node.name not in main_names
            and model.functions
        ):
            nodes[i] = dataclasses.replace(pooling, location="local function (inlined)")
    if not nodes:
        result.notes.append("the model has no standard pooling node")
    for pooling in nodes:
        note = empty_auto_pad_note(pooling.node, pooling.name)
        if note is not None:
            result.notes.append(note)

    placed: dict[str, str] = {}

    def builtin_run(m: onnx.ModelProto, f: Mapping[str, np.ndarray]) -> list[np.ndarray]:
        outputs, where = ortrun.run_placed(m, f, options.runtime)
        placed.update(where)
        return outputs

    captured: dict[str, np.ndarray] | None = None
    builtin_outputs: list[np.ndarray] | None = None
    builtin_error = ""
    builtin_failure: ortrun.OrtFailure | None = None
    try:
        captured, builtin_outputs = capture.capture(inlined, feeds, nodes, builtin_run)
        capture_source = "onnxruntime built-in run"
    except ortrun.OrtFailure as err:
        builtin_failure = err
        builtin_error = f"onnxruntime could not run the model: {err}"
        result.notes.append(builtin_error)

    rewritten, rewrite_error = _rewrite(model)
    ortpool_outputs: list[np.ndarray] | None = None
    ortpool_error = rewrite_error
    if rewritten is not None:
        run_ours = _ortpool_runner(options.runtime)
        try:
            if captured is None:
                captured, ortpool_outputs = capture.capture(
                    capture.inline_functions(rewritten), feeds, nodes, run_ours
                )
                capture_source = "ortpool-rewritten run (onnxruntime could not run the model)"
            else:
                ortpool_outputs = run_ours(rewritten, feeds)
        except Exception as err:
            ortpool_error = f"the ortpool-rewritten model failed: {err}"
    if captured is None:
        reason = builtin_error or "onnxruntime could not run the model"
        if ortpool_error:
            reason += f"; {ortpool_error}"
        if nodes and builtin_failure is not None and builtin_failure.kind == ortrun.RUN_FAILED:
            # A model that loads but fails to run is most often failing at the sizes chosen (a
            # Resize, a Concat of two branches that need others): which sizes, how to set them.
            raise resolved.cannot_run(label, str(builtin_failure))
        if nodes:
            raise OrtpoolError(f"{label}: {reason}")
    elif nodes:
        result.notes.append(f"node inputs captured from the {capture_source}")

    worker = reference_mod.ReferenceWorker(options.reference_timeout) if options.reference else None
    try:
        for i, pooling in enumerate(nodes):
            if progress:
                progress(i, len(nodes), pooling.name)
            result.nodes.append(_node(pooling, result.opset, captured or {}, options, worker))
        if progress:
            progress(len(nodes), len(nodes), "")
    finally:
        if worker is not None:
            worker.close()

    for node in result.nodes:
        # Where the node ran in the whole model's built-in run (its inputs were captured there).
        if placed:
            node.executed_in_model = placed.get(node.name)
            node.asked_provider = options.runtime.first
    if builtin_outputs is not None and ortpool_outputs is not None:
        other_level = ISOLATED_LEVEL if options.runtime.level != ISOLATED_LEVEL else DEFAULT_LEVEL
        result.end_to_end = "compared"
        result.outputs = endtoend.compare_outputs(
            [o.name for o in model.graph.output],
            builtin_outputs,
            ortpool_outputs,
            options.atol,
            options.rtol,
            endtoend.note_allowance(result.nodes),
        )
        endtoend.measure_noise(
            result.outputs,
            builtin_outputs,
            lambda: ortrun.run_builtin(inlined, feeds, options.runtime.with_level(other_level)),
        )
        if any(o.failing for o in result.outputs) and not any(
            n.failing or n.status in (results.RULINGS, results.NOT_ISOLATED) for n in result.nodes
        ):
            result.notes.append(
                "graph outputs differ although every isolated pooling node agrees: the difference "
                "arises outside the pooling nodes' own results (e.g. onnxruntime's float16 "
                "fallback computes a node in float32 and removes the Cast round trip after it, "
                "skipping the rounding the graph asks for)"
            )
    elif (
        builtin_failure is not None
        and builtin_failure.kind != ortrun.NO_KERNEL
        and ortpool_outputs is not None
    ):
        # The rewritten model differs from the original in its pooling nodes only: if it runs
        # where onnxruntime fails (a missing kernel aside, reported per node), the pools are why.
        result.run_differs = True
        result.end_to_end = f"only the ortpool-rewritten model runs; {builtin_error}"
    else:
        result.end_to_end = "not compared: " + "; ".join(
            r for r in (builtin_error, ortpool_error) if r
        )
    return result


def _node(
    pooling: capture.PoolingNode,
    opset: int,
    captured: Mapping[str, np.ndarray],
    options: ValidateOptions,
    worker: reference_mod.ReferenceWorker | None,
) -> results.NodeResult:
    node = pooling.node
    attrs = attribute_dict(node.attribute)
    spec = NodeSpec(
        node.op_type, opset, attrs, len(pooling.inputs), len([o for o in node.output if o])
    )
    try:
        spec_version = spec.spec.version
    except ValueError as err:
        return _unrunnable(pooling, opset, attrs, results.BOTH_REJECTED, str(err))
    if not pooling.isolatable:
        return _unrunnable(
            pooling,
            opset,
            attrs,
            results.NOT_ISOLATED,
            f"inside a {pooling.location}: its input changes per iteration/branch; covered by "
            "the end-to-end comparison only",
            spec_version,
        )
    missing = [name for name in pooling.inputs if name not in captured]
    if missing:
        return _unrunnable(
            pooling,
            opset,
            attrs,
            results.NOT_ISOLATED,
            f"input {missing[0]!r} could not be captured",
            spec_version,
        )
    feeds = [captured[name] for name in pooling.inputs]
    result = isolate.run_node(pooling.name, spec, feeds, options, pooling.location)
    if worker is not None and result.ortpool_outputs is not None:
        status, payload, seconds = worker.run(
            builtin_model(spec, feeds).SerializeToString(), feed_dict(feeds)
        )
        if status == "ok":
            result.reference = reference_mod.judge(
                spec.op,
                feeds,
                payload,
                result.ortpool_outputs,
                result.nan_cells,
                result.tolerance,
                ceil_mode=bool(attrs.get("ceil_mode")),
            )
        else:
            result.reference = results.ReferenceResult(
                status,
                str(payload),
                defects=reference_mod.error_defects(spec.op, len(feeds), str(payload)),
            )
        result.reference.seconds = round(seconds, 3)
    return result


def _unrunnable(
    pooling: capture.PoolingNode,
    opset: int,
    attrs: dict,
    status: str,
    message: str,
    spec_version: int = 0,
) -> results.NodeResult:
    return results.NodeResult(
        name=pooling.name,
        op=pooling.node.op_type,
        spec_version=spec_version,
        opset=opset,
        dtype="?",
        attributes=attrs,
        input_shapes=[],
        status=status,
        location=pooling.location,
        message=message,
    )


def bundled_models_dir() -> Path:
    """ortpool/models/: the models shipped as package data, wherever the package is installed.

    In the repository they are the top-level models/, mapped to the package ``ortpool.models``
    (pyproject.toml), so the editable installation finds them there and a wheel in ortpool/.
    """
    try:
        folder = importlib.resources.files("ortpool.models")
    except ModuleNotFoundError:  # an installation made without them, or an editable one made
        # before pyproject.toml mapped models/ (its finder knows only the packages of its day)
        raise OrtpoolError(
            "no bundled models: the package ortpool.models is not installed (in a checkout of "
            "the repository, rerun `pip install -e .`), or name the models to validate"
        ) from None
    if not isinstance(folder, Path):  # a zipped installation: onnxruntime needs real files
        raise OrtpoolError(
            f"the bundled models are not files on disk ({folder}): name the models to validate"
        )
    return folder


def bundled_models() -> list[Path]:
    folder = bundled_models_dir()
    found = sorted(folder.glob("*.onnx")) if folder.is_dir() else []
    if not found:
        raise OrtpoolError(
            f"no bundled models: {folder} holds no .onnx file (run scripts/make_models.py in a "
            "checkout of the repository, or name the models to validate)"
        )
    return found
