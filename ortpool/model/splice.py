"""Editing a model where it stands (``rewrite``, ``restore``, ``fix``): a node replaced in its
scope by the nodes that compute it, or removed, every other node keeping its place, and the opset
import of the graph or function holding them.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import onnx

from ortpool.model.scopes import ScopeKey


def position_of(nodes: Any, node: onnx.NodeProto) -> int:
    """Where ``node`` (this very proto, not an equal one) stands in ``nodes``."""
    for index, candidate in enumerate(nodes):
        if candidate is node:
            return index
    raise LookupError(f"node {node.name!r} is not in its scope")


def replace(nodes: Any, node: onnx.NodeProto, made: Sequence[onnx.NodeProto]) -> None:
    """``node`` replaced in ``nodes`` (a scope's repeated field) by ``made``, where it stood."""
    position = position_of(nodes, node)
    del nodes[position]
    for offset, new in enumerate(made):
        nodes.insert(position + offset, new)


def remove(nodes: Any, node: onnx.NodeProto) -> None:
    """``node`` (this very proto) taken out of ``nodes``."""
    del nodes[position_of(nodes, node)]


def owners(model: onnx.ModelProto) -> Iterator[tuple[ScopeKey, Any]]:
    """The main graph and every local function, with their opset imports (keyed as
    :attr:`~ortpool.model.scopes.Scope.owner_key`)."""
    yield ("graph",), model.opset_import
    for index, function in enumerate(model.functions):
        yield ("function", index), function.opset_import


def add_import(imports: Any, domain: str, version: int) -> None:
    """``domain`` at ``version`` added to ``imports`` unless imported already."""
    if not any(entry.domain == domain for entry in imports):
        imports.add(domain=domain, version=version)


def drop_import(imports: Any, domain: str) -> None:
    """Every import of ``domain`` taken out of ``imports``."""
    keep = [entry for entry in imports if entry.domain != domain]
    if len(keep) != len(imports):
        del imports[:]
        imports.extend(keep)
