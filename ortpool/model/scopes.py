"""Every place a node can live in a model, with the opset imports that govern it.

A *scope* is one node list: the main graph, a subgraph of any node's GRAPH/GRAPHS attribute at any
depth, or a model-local function's body (and its subgraphs); graphs are governed by the model's
opset imports, a function by its own. A scope's ``key`` is a path of positions (``("graph", node
index, attribute name, graph index, ...)``), so types learned on a copy of the model
(:mod:`ortpool.model.inference`) match the scope they belong to.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Mapping
from typing import Any, TypeVar

import onnx
from onnx import AttributeProto

from ortpool import versions
from ortpool.errors import OrtpoolError

#: The main graph's ``Scope.location`` (a subgraph's and a function's name their place).
MAIN_GRAPH = "main graph"
#: Domain strings that mean the standard ai.onnx operator set.
AI_ONNX = ("", "ai.onnx")

ScopeKey = tuple[Any, ...]
T = TypeVar("T")


@dataclasses.dataclass(eq=False)
class Scope:
    """One node list and what governs it."""

    key: ScopeKey
    location: str  # for humans: "main graph", "function local.block > If 'i1'.then_branch", ...
    nodes: Any  # the repeated NodeProto field, edited in place
    imports: Any  # the opset imports of the model or function that governs it
    parent: Scope | None
    function: onnx.FunctionProto | None = None
    holder: Any = None  # the GraphProto or FunctionProto whose node list ``nodes`` is

    @property
    def opset(self) -> int | None:
        return ai_onnx_opset(self.imports)

    @property
    def owner_key(self) -> ScopeKey:
        """The key of the main graph or function body this scope belongs to."""
        return self.key[:2] if self.key[0] == "function" else self.key[:1]


def ai_onnx_opset(imports: Any) -> int | None:
    """The ``ai.onnx`` opset in ``imports``, or None."""
    # imported more than once: the highest (onnx.proto: nodes "bind against the operator ...
    # with the HIGHEST version in the referenced operator sets")
    return max((int(e.version) for e in imports if e.domain in AI_ONNX), default=None)


def text(value: str | bytes) -> str:
    """A name field as text: protobuf hands bytes that are not UTF-8 over as bytes; they become
    lone surrogates (``surrogateescape``), which reports escape and which give the bytes back."""
    return value.decode("utf-8", "surrogateescape") if isinstance(value, bytes) else value


def written(value: str | bytes) -> str:
    """A name for a new field of a model (UTF-8 only): ``value``'s bytes that are not UTF-8
    written as escapes."""
    raw = value if isinstance(value, bytes) else value.encode("utf-8", "surrogateescape")
    return raw.decode("utf-8", "backslashreplace")


def is_standard(node: onnx.NodeProto) -> bool:
    return node.domain in AI_ONNX


def is_pool(node: onnx.NodeProto) -> bool:
    """A standard pooling node (any operator ortpool implements)."""
    return is_standard(node) and node.op_type in versions.OPERATORS


def subgraphs(node: onnx.NodeProto) -> Iterator[tuple[str, int | None, onnx.GraphProto]]:
    """``(attribute name, index in a GRAPHS list or None, graph)`` for each graph the node has."""
    for attr in node.attribute:
        if attr.type == AttributeProto.GRAPH:
            yield attr.name, None, attr.g
        elif attr.type == AttributeProto.GRAPHS:
            for i, graph in enumerate(attr.graphs):
                yield attr.name, i, graph


def walk(nodes: Any) -> Iterator[onnx.NodeProto]:
    """Every node of ``nodes``, each followed by those of its subgraphs at any depth."""
    for node in nodes:
        yield node
        for _, _, sub in subgraphs(node):
            yield from walk(sub.node)


def all_nodes(model: onnx.ModelProto) -> Iterator[onnx.NodeProto]:
    """Every node: main graph, then local functions, each with its subgraphs (:func:`walk`)."""
    yield from walk(model.graph.node)
    for function in model.functions:
        yield from walk(function.node)


def inline_functions(model: onnx.ModelProto) -> onnx.ModelProto:
    """The model with its local functions inlined (itself when it has none)."""
    # onnx cannot inline a function that calls itself, directly or through others: an
    # OrtpoolError naming the cycle
    if not model.functions:
        return model
    import onnx.inliner

    try:
        return onnx.inliner.inline_local_functions(model)
    except onnx.checker.ValidationError as err:
        raise OrtpoolError(f"the model's local functions cannot be inlined: {err}") from None


def shadowing_function(model: onnx.ModelProto) -> onnx.FunctionProto | None:
    """A local function of the ai.onnx domain named like one of its operators: onnx's inliner
    runs the function for such a node, onnxruntime the operator."""
    return next((f for f in model.functions if f.domain in AI_ONNX and onnx.defs.has(f.name)),
                None)


def node_label(node: onnx.NodeProto) -> str:
    return f"{node.op_type} {node.name!r}" if node.name else f"{node.op_type} (unnamed)"


def function_label(function: onnx.FunctionProto) -> str:
    name = f"{function.domain}.{function.name}" if function.domain else function.name
    return f"{name}:{function.overload}" if function.overload else name


def graph_scopes(graph: onnx.GraphProto, key: ScopeKey, location: str, imports: Any,
                 parent: Scope | None,
                 function: onnx.FunctionProto | None = None) -> Iterator[Scope]:
    """``graph``'s own scope, then every subgraph's, depth first, in node order."""
    return _below(Scope(key, location, graph.node, imports, parent, function, graph))


def _below(scope: Scope) -> Iterator[Scope]:
    yield scope
    for index, node in enumerate(scope.nodes):
        for attr_name, position, sub in subgraphs(node):
            suffix = attr_name if position is None else f"{attr_name}[{position}]"
            yield from _below(Scope((*scope.key, index, attr_name, position),
                                    f"{scope.location} > {node_label(node)}.{suffix}", sub.node,
                                    scope.imports, scope, scope.function, sub))


def model_scopes(model: onnx.ModelProto) -> list[Scope]:
    """Every scope of ``model``: the main graph and its subgraphs, then each local function."""
    scopes = list(graph_scopes(model.graph, ("graph",), MAIN_GRAPH, model.opset_import, None))
    for index, f in enumerate(model.functions):
        scopes += _below(Scope(("function", index), f"function {function_label(f)}", f.node,
                               f.opset_import, None, f, f))
    return scopes


def function_index(model: onnx.ModelProto) -> Mapping[tuple[str, str, str], int]:
    """``(domain, name, overload) -> position`` of every model-local function."""
    return {(f.domain, f.name, f.overload): i for i, f in enumerate(model.functions)}


def called_function(node: onnx.NodeProto,
                    functions: Mapping[tuple[str, str, str], int]) -> int | None:
    """The position of the local function ``node`` calls, if it calls one."""
    return functions.get((node.domain, node.op_type, node.overload))


def calls_below(model: onnx.ModelProto, scopes: list[Scope], start: Mapping[int, T]
                ) -> dict[int, T]:
    """``start`` (local functions by position, each with a value) and every local function their
    bodies call, at any depth of calls, each with the value of the function of ``start`` it was
    reached from."""
    index, found = function_index(model), dict(start)
    pending = list(found)
    while pending:
        caller = pending.pop()
        for scope in scopes:
            for node in scope.nodes if scope.key[:2] == ("function", caller) else ():
                position = called_function(node, index)
                if position is not None and position not in found:
                    found[position] = found[caller]
                    pending.append(position)
    return found
