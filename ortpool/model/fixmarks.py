"""What ``ortpool fix`` marks in the models it writes, and those marks read back.

Every node a form inserts is named ``ortpool_fix/<role>/<node>`` with a doc string starting with
:data:`MARK`; the model's ``metadata_props`` :data:`KEY` maps node names to ``{"form", "op",
"attributes", "inputs", "outputs", "nodes"}`` (:func:`record`). ``validate`` judges each form as
it stands against that spec: the record says what to judge, never the verdict. A record the model
no longer matches is dropped with a note (:func:`read`).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterable

import onnx

from ortpool.model.scopes import model_scopes, text

#: The doc string prefix of every node fix inserts.
MARK = "ortpool-fix:"
#: The metadata_props key of fix's record.
KEY = "ortpool.fix"


@dataclasses.dataclass(frozen=True)
class FixedNode:
    """One node fix wrote as a standard-op form."""

    name: str
    form: str  # the form's name, as fix's report gives it ("nan-guard", "explicit-pads", ...)
    op: str  # the node's operator and spec version, "MaxPool-12"
    nodes: tuple[str, ...]  # the names of the nodes the form inserted
    attributes: dict = dataclasses.field(default_factory=dict)  # the node's, as written
    inputs: tuple[str, ...] = ()  # the node's inputs and outputs: the form's bounds
    outputs: tuple[str, ...] = ()


def _entry(name: str, value: object) -> FixedNode | None:
    if not isinstance(value, dict):
        return None
    form, op, nodes = value.get("form"), value.get("op"), value.get("nodes")
    attributes, inputs, outputs = value.get("attributes"), value.get("inputs"), value.get("outputs")
    names = (nodes, inputs, outputs)
    if not (isinstance(form, str) and isinstance(op, str) and isinstance(attributes, dict)
            and all(isinstance(v, list) and all(isinstance(n, str) for n in v) for v in names)
            and inputs and outputs):
        return None
    return FixedNode(name, form, op, tuple(nodes), attributes, tuple(inputs), tuple(outputs))


def _recorded(model: onnx.ModelProto) -> tuple[dict[str, object], str]:
    """The raw record (node name -> entry) and why it cannot be read, if so."""
    text = next((p.value for p in model.metadata_props if p.key == KEY), None)
    if text is None:
        return {}, ""
    try:
        found = json.loads(text)
    except ValueError as err:
        return {}, f"metadata {KEY!r} is not JSON ({err})"
    except RecursionError:  # a forged record nested past Python's stack
        return {}, f"metadata {KEY!r} is JSON nested too deep to be fix's record"
    if not isinstance(found, dict):
        return {}, f"metadata {KEY!r} is not a JSON object of node names"
    return found, ""


def record(model: onnx.ModelProto, fixed: Iterable[FixedNode]) -> None:
    """Write ``fixed`` into ``model``'s record, beside what an earlier fix recorded."""
    entries, _ = _recorded(model)
    entries.update((f.name, {k: v for k, v in dataclasses.asdict(f).items() if k != "name"})
                   for f in fixed)
    kept = [p for p in model.metadata_props if p.key != KEY]
    del model.metadata_props[:]
    model.metadata_props.extend(kept)
    if entries:
        model.metadata_props.add(key=KEY, value=json.dumps(entries, sort_keys=True))


def read(model: onnx.ModelProto) -> tuple[dict[str, FixedNode], list[str]]:
    """The fixed nodes whose form is in ``model`` as fix wrote it (name -> node), and a note for
    each record that is not (its nodes are then the model's own)."""
    entries, problem = _recorded(model)
    notes = [f"{problem}: fix's record ignored"] if problem else []
    if not entries:
        return {}, notes
    nodes: dict[str, onnx.NodeProto] = {}
    counts: dict[str, int] = {}
    values: set[str] = set()  # every tensor a graph or function takes or a node writes
    for scope in model_scopes(model):
        holder = scope.holder
        if isinstance(holder, onnx.GraphProto):
            values.update(text(v.name) for v in (*holder.input, *holder.initializer))
        elif holder is not None:
            values.update(text(v) for v in holder.input)
        for node in scope.nodes:
            nodes.setdefault(text(node.name), node)
            counts[text(node.name)] = counts.get(text(node.name), 0) + 1
            values.update(text(v) for v in node.output)
    found: dict[str, FixedNode] = {}
    for name, value in entries.items():
        fixed = _entry(name, value)
        if fixed is None:
            notes.append(f"fix's record of node {name!r} is not one fix writes: ignored")
            continue
        # a name several nodes bear (a subgraph's node named as one of the main graph's) does
        # not say which of them the record means: none is taken for fixed
        shared = [n for n in (name, *fixed.nodes) if counts.get(n, 0) > 1]
        if shared:
            notes.append(f"fix's record of node {name!r} (form {fixed.form}) names node "
                         f"{shared[0]!r}, which {counts[shared[0]]} nodes of the model bear: its "
                         "nodes are validated as they stand")
            continue
        missing = [n for n in (name, *fixed.nodes) if n not in nodes]
        unmarked = [n for n in fixed.nodes if n in nodes
                    and not nodes[n].doc_string.startswith(MARK)]
        # bounds no tensor of the model has (a forged record) would leave its nodes unjudged
        gone = [t for t in (*fixed.inputs, *fixed.outputs) if t not in values]
        if missing or unmarked or gone:
            what = (f"node {missing[0]!r} is gone" if missing
                    else f"node {unmarked[0]!r} is no longer marked {MARK!r}" if unmarked
                    else f"tensor {gone[0]!r} is gone")
            notes.append(f"fix's record of node {name!r} (form {fixed.form}) no longer matches the "
                         f"model ({what}, edited after fixing?): its nodes are validated as they "
                         "stand")
            continue
        found[name] = fixed
    return found, notes
