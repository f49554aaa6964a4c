"""``session_options()`` and ``InferenceSession``: onnxruntime with ortpool's ops, errors raised."""

from __future__ import annotations

import contextlib
import functools
import os
import re
import threading
from collections.abc import Mapping, Sequence
from typing import Any

import onnx

try:
    import onnxruntime as ort
except ModuleNotFoundError as err:  # no build installed: say which to install, in one line
    if err.name != "onnxruntime":
        raise
    from ortpool.ort.runtime import INSTALL_HINT

    raise ModuleNotFoundError(INSTALL_HINT, name="onnxruntime") from None

from ortpool import optypes
from ortpool.attributes import attribute_values, normalize
from ortpool.errors import OrtpoolError, shown
from ortpool.model import branch_outputs, external_locations
from ortpool.modelfile import problem
from ortpool.ort import failures, runtime_spec
from ortpool.ort._extensions import get_library_path
from ortpool.ort.nodes import iter_nodes, iter_ortpool_nodes, load_structure
from ortpool.ort.register import register
from ortpool.ort.runtime import EXTERNAL_FOLDER_KEY, create
from ortpool.ort.runtime_spec import Provider, RuntimeSpec, run_arrays

#: Marks options that hold the custom-op library already: loaded twice into one SessionOptions,
#: session creation fails ("Conflicting with a registered kernel").
_LIBRARY_MARK = "ortpool.custom_ops_library"
#: onnxruntime's switch for its intra-op workers spinning between parallel sections.
SPINNING = "session.intra_op.allow_spinning"


def _config(options: ort.SessionOptions, key: str) -> str | None:
    try:
        return options.get_session_config_entry(key)
    except RuntimeError:  # onnxruntime's answer for a key that is not set
        return None


def session_options(base: ort.SessionOptions | None = None) -> ort.SessionOptions:
    """SessionOptions with the ortpool ops registered (``base`` updated and returned).

    Unless ``base`` sets it, intra-op workers do not spin (``session.intra_op.allow_spinning=0``):
    a Python op runs on the calling thread while the previous node's workers would spin on the
    other cores (ResNet stem with ortpool's MaxPool on 2 cores: 5.18 -> 4.92 ms per run).
    """
    if base is not None and not isinstance(base, ort.SessionOptions):
        raise TypeError(f"base={shown(base)} must be an onnxruntime.SessionOptions or None, not "
                        f"{type(base).__name__}")
    register()
    options = base if base is not None else ort.SessionOptions()
    if base is None and runtime_spec.pool_threads() is not None:  # every session on the one pool
        options.use_per_session_threads = False
    if _config(options, _LIBRARY_MARK) is None:
        options.register_custom_ops_library(get_library_path())
        options.add_session_config_entry(_LIBRARY_MARK, "1")
        if _config(options, SPINNING) is None:
            options.add_session_config_entry(SPINNING, "0")
    return options


def check_node(node: onnx.NodeProto) -> None:
    """An ortpool node must name a known op type and carry every attribute of its version, each
    of its declared kind and legal."""
    name = node.name or f"<unnamed {node.op_type}>"
    try:
        op_type = optypes.parse(node.op_type)
    except ValueError as err:
        raise OrtpoolError(str(err), node=name) from None
    spec = op_type.spec
    where = {"node": name, "op": spec.op, "version": spec.version}
    declared = {a.name: a for a in node.attribute}
    for attr_name, attr_spec in spec.attrs.items():
        attr = declared.get(attr_name)
        want = onnx.AttributeProto.INT if attr_spec.kind == "int" else onnx.AttributeProto.STRING
        if attr is None:
            raise OrtpoolError(f"attribute {attr_name!r} is missing; an ortpool node carries every "
                               f"attribute of its version ({', '.join(spec.attrs)})", **where)
        if attr.type != want:
            kind = "an int" if want == onnx.AttributeProto.INT else "a string"
            raise OrtpoolError(f"attribute {attr_name!r} must be {kind} in the ortpool encoding, "
                               f"got {onnx.AttributeProto.AttributeType.Name(attr.type)}", **where)
    try:
        normalize(spec, attribute_values(node.attribute))
    except OrtpoolError as err:
        raise err.located(**where) from None
    expected = (op_type.n_inputs, op_type.n_outputs)
    if (len(node.input), len(node.output)) != expected:
        raise OrtpoolError(f"{node.op_type} takes {expected[0]} inputs and {expected[1]} outputs, "
                           f"the node has {len(node.input)} and {len(node.output)}", **where)


def _structure(model: Any) -> onnx.ModelProto:
    """The model's structure (weights not loaded), its ortpool nodes checked (:func:`check_node`);
    what is no ONNX model is one line naming it."""
    quoted = shown(model)
    if not isinstance(model, (str, os.PathLike, bytes, onnx.ModelProto)):
        raise TypeError(f"model={quoted} must be a path, the model's bytes or an onnx.ModelProto, "
                        f"not {type(model).__name__}")
    what = "model" if isinstance(model, onnx.ModelProto) else f"model={quoted}"
    try:
        proto = load_structure(model)
    except OSError as err:
        raise OrtpoolError(f"{what}: {err.strerror or err}") from None
    except Exception as err:  # protobuf's DecodeError, and whatever onnx raises for a bad file
        raise OrtpoolError(f"{what} is not an ONNX model: {type(err).__name__}: {err}") from None
    reason = problem(proto)
    if reason is not None:
        raise OrtpoolError(f"{what} is not an ONNX model: {reason}")
    for node in iter_ortpool_nodes(proto):
        check_node(node)
    return proto


def check_model(model: str | os.PathLike | bytes | onnx.ModelProto) -> None:
    """Raise an :class:`OrtpoolError` for anything in ``model`` that would end the process in a
    plain ``onnxruntime.InferenceSession`` with :func:`session_options` (:class:`InferenceSession`
    checks and mends the same): onnxruntime-extensions reads a Python op's attributes before
    ortpool does (invalid UTF-8 there ends the process), and a subgraph output an ortpool op
    writes, of declared static shape, is allocated ahead (any other shape ends the process).
    """
    proto = _structure(model)
    pending = branch_outputs.pending(proto)
    if pending:
        raise OrtpoolError(f"subgraph output {pending[0].name!r} is written by an ortpool op and "
                           "declares the static shape "
                           f"{[d.dim_value for d in pending[0].type.tensor_type.shape.dim]}: "
                           "onnxruntime allocates it ahead, and an op output of another shape (a "
                           "wrong declaration, a failed op) ends a plain session's process; run "
                           "the model through ortpool.InferenceSession, or 'ortpool rewrite' it "
                           "(that makes those dims symbolic)")


#: Held by the run of a session in ORT_PARALLEL mode (see InferenceSession.__init__).
_PARALLEL_RUNS = threading.Lock()


_HALF_REFUSED = re.compile(
    r"Type '(tensor\((?:b?float16)\))' of (?:input|output) parameter \((.*?)\) of operator "
    r"\((\w+)\) in node \((.*?)\) is invalid"
)


def _half_precision_refusal(message: str) -> OrtpoolError | None:
    """onnxruntime's type error for a float16/bfloat16 tensor wired into an ortpool op, restated
    (a Python op cannot carry those types; the rewriter's Casts can)."""
    match = _HALF_REFUSED.search(message)
    if match is None:
        return None
    tensor_type, tensor, op_type_name, node = match.groups()
    try:
        op_type = optypes.parse(op_type_name)
    except ValueError:
        return None
    spec = op_type.spec
    return OrtpoolError(f"{op_type_name} cannot take {tensor_type} for {tensor!r}: it carries only "
                        f"{', '.join(op_type.dtypes)}; a Python op cannot take "
                        "float16 or bfloat16, so wrap it in Cast to float32 and back (ortpool "
                        "rewrite does this)",
                        node=node or "<unnamed>", op=spec.op, version=spec.version)


def _providers(providers: Sequence[str | tuple[str, dict]],
               options: Sequence[dict] | None) -> tuple[Provider, ...]:
    """onnxruntime's ``providers=`` (names, or (name, options) pairs) and ``provider_options=``
    as providers; anything else a TypeError naming the item."""
    if isinstance(providers, (str, bytes)) or not isinstance(providers, Sequence):
        raise TypeError(f"providers={providers!r} must be a list of provider names or (name, "
                        "{options}) pairs")
    found = []
    for i, item in enumerate(providers):
        if isinstance(item, str):
            name, given = item, {}
        elif isinstance(item, (tuple, list)) and len(item) == 2 and isinstance(item[0], str) \
                and isinstance(item[1], Mapping):
            name, given = item
        else:
            raise TypeError(f"providers[{i}]={item!r} must be a provider name or a (name, "
                            "{options}) pair")
        if options is not None and i < len(options):
            given = {**given, **options[i]}
        found.append(Provider(name, tuple((str(k), str(v)) for k, v in given.items())))
    return tuple(found)


def _source(model: str | os.PathLike | bytes | onnx.ModelProto, proto: onnx.ModelProto,
            options: ort.SessionOptions) -> str | bytes:
    """What onnxruntime is handed: the model, or a copy with the fixed shapes of branch outputs
    that ortpool nodes write set aside (:mod:`ortpool.model.branch_outputs`)."""
    if branch_outputs.pending(proto):
        if proto is model:
            proto = onnx.ModelProto()
            proto.CopyFrom(model)
        branch_outputs.set_aside(proto)
        if not isinstance(model, onnx.ModelProto | bytes) and external_locations(proto):
            folder = os.path.dirname(os.path.abspath(os.fspath(model)))
            options.add_session_config_entry(EXTERNAL_FOLDER_KEY, folder)
        return proto.SerializeToString()
    if isinstance(model, onnx.ModelProto):
        return model.SerializeToString()
    if isinstance(model, bytes):
        return model
    return os.fspath(model)


class InferenceSession:
    """A thin wrapper over ``onnxruntime.InferenceSession`` with ortpool's ops registered:
    ``run`` raises an error inside an ortpool op after the run as an :class:`OrtpoolError` naming
    the node, the op type and version and the value, and takes and gives bfloat16 as ml_dtypes
    arrays (onnxruntime's own ``run`` does neither); the rest is the wrapped session's."""

    def __init__(self, model: str | os.PathLike | bytes | onnx.ModelProto,
                 sess_options: ort.SessionOptions | None = None,
                 providers: Sequence[str | tuple[str, dict]] | None = None, *,
                 runtime: RuntimeSpec | None = None, **kwargs: Any) -> None:
        """``providers`` as onnxruntime takes them (names, or (name, options) pairs; default
        CPU), or ``runtime``: a whole :class:`~ortpool.ort.runtime_spec.RuntimeSpec` (its
        session options too, unless ``sess_options`` is given)."""
        if sess_options is not None and not isinstance(sess_options, ort.SessionOptions):
            raise TypeError(f"sess_options={sess_options!r} must be an onnxruntime.SessionOptions "
                            f"or None, not {type(sess_options).__name__}")
        if runtime is None:
            listed = _providers(providers or [], kwargs.pop("provider_options", None))
            runtime = RuntimeSpec(listed) if listed else RuntimeSpec()
        elif sess_options is None:
            sess_options = runtime.session_options()
        self.runtime = runtime
        proto = _structure(model)
        self._nodes: dict[str, list[onnx.NodeProto]] = {}
        for node in iter_ortpool_nodes(proto):
            self._nodes.setdefault(node.op_type, []).append(node)
        self._foreign = {f"{node.domain}::{node.op_type}"
                         for node in iter_nodes(proto)
                         if node.domain not in ("", "ai.onnx", optypes.DOMAIN)}
        given_options = sess_options is not None
        options = session_options(sess_options)
        # With ORT_PARALLEL the nodes run on onnxruntime's inter-op threads, which every run
        # shares: one such run at a time in the process lets a failure be traced to its run.
        parallel = options.execution_mode == ort.ExecutionMode.ORT_PARALLEL
        self._serial = _PARALLEL_RUNS if parallel else contextlib.nullcontext()
        source = _source(model, proto, options)
        try:
            self._session = create(source, options, **runtime.provider_arguments(), **kwargs)
        except Exception as err:
            if given_options and "Conflicting with a registered kernel" in str(err):
                # the onnxruntime-extensions idiom, sess_options.register_custom_ops_library(
                # get_library_path()), done before: the library's kernels twice in one session
                raise OrtpoolError(
                    "sess_options already holds onnxruntime-extensions' custom-op library "
                    "(register_custom_ops_library(get_library_path())), which ortpool loads "
                    "itself: onnxruntime refuses its kernels twice (\"Conflicting with a "
                    "registered kernel\"); pass SessionOptions without it") from None
            half = _half_precision_refusal(str(err))
            if half is None:
                raise
            raise half from err
        #: inputs of tensor type: a None fed there reaches an ortpool op as an empty value, and
        #: onnxruntime-extensions then ends the process (std::runtime_error, uncaught); read
        #: from the proto (onnxruntime's get_inputs() fails on a name that is not UTF-8)
        self._tensor_inputs = {value.name for value in proto.graph.input
                               if value.type.WhichOneof("value") == "tensor_type"}
        # bfloat16 in or out (or an output of no declared type, which may be: a captured
        # tensor): through OrtValues (onnxruntime's run takes and gives none), else
        # onnxruntime's run as it is (a run of a small model is some 10 us: 3 more show)
        bfloat16 = any(value.type.tensor_type.elem_type in (onnx.TensorProto.BFLOAT16,
                                                            onnx.TensorProto.UNDEFINED)
                       for value in (*proto.graph.input, *proto.graph.output))
        self._run = functools.partial(run_arrays, self._session) if bfloat16 else self._session.run

    @property
    def session(self) -> ort.InferenceSession:
        """The wrapped onnxruntime session."""
        return self._session

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(self._session, name)

    def run(self, output_names: Sequence[str] | None, input_feed: Mapping[str, Any],
            run_options: ort.RunOptions | None = None) -> list[Any]:
        if isinstance(input_feed, Mapping):
            for name, value in input_feed.items():
                if value is None and name in self._tensor_inputs:
                    raise TypeError(f"input_feed[{name!r}] is None; input {name!r} is a tensor: "
                                    "feed it an array")
        with self._serial, failures.run_scope(self._caused_here) as scope:
            try:
                outputs = self._run(output_names, input_feed, run_options)
            except Exception as err:
                mine = scope.claim()
                if mine:
                    raise self._error(mine[0]) from err
                raise
            mine = scope.claim()
        if mine:
            raise self._error(mine[0])
        return outputs

    def _caused_here(self, failure: failures.OpFailure) -> bool:
        """Whether a node of this model could have raised ``failure`` (recorded on an inter-op
        thread, with ``execution_mode=ORT_PARALLEL``)."""
        return failure.op_type in self._foreign or bool(self._candidates(failure))

    def _candidates(self, failure: failures.OpFailure) -> list[str]:
        """The ortpool nodes of the failure's op type whose attributes (as strings, as
        onnxruntime-extensions hands them over) are the call's."""
        called = {k: str(v) for k, v in failure.attributes.items()}
        return [node.name or "<unnamed>"
                for node in self._nodes.get(failure.op_type, [])
                if {k: str(v) for k, v in attribute_values(node.attribute).items()} == called]

    def _error(self, failure: failures.OpFailure) -> OrtpoolError:
        candidates = self._candidates(failure)
        node = " or ".join(candidates) if candidates else None
        try:
            op_type = optypes.parse(failure.op_type)
            op, version = op_type.spec.op, op_type.spec.version
        except ValueError:
            op, version = failure.op_type, None
        err = failure.error
        detail = err.detail if isinstance(err, OrtpoolError) else f"{type(err).__name__}: {err}"
        shapes = ", ".join(str(list(s)) for s in failure.input_shapes)
        return OrtpoolError(f"{detail} [op type {failure.op_type}, input shapes {shapes}]",
                            node=node, op=op, version=version)
