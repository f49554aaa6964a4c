"""What ``ortpool fix`` marks in the models it writes, and those marks read back.

Every node a form inserts is named ``ortpool_fix/<role>/<node>`` with a doc string starting with
:data:`MARK`; the model's ``metadata_props`` :data:`KEY` maps node names to ``{"form", "op",
"attributes", "inputs", "outputs", "nodes"}`` (:func:`record`); a node outside the main graph is
keyed ``<scope> > <name>`` and its entry names its ``scope`` (names are unique per graph only).
``validate`` judges each form as it stands against that spec: the record says what to judge,
never the verdict. A record the model no longer matches is dropped with a note (:func:`read`).
"""

from __future__ import annotations

import dataclasses
import json
from collections import Counter
from collections.abc import Iterable

import onnx

from ortpool.model.scopes import MAIN_GRAPH, model_scopes, text

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
    scope: str = MAIN_GRAPH  # the node list it stands in (``Scope.location``)

    @property
    def key(self) -> str:
        """Its key in the record: a subgraph or a function may reuse a main graph's name."""
        return self.name if self.scope == MAIN_GRAPH else f"{self.scope} > {self.name}"

    @property
    def in_function(self) -> bool:
        """In a local function's body (``validate`` judges its inlined copies, NAME__<k>)."""
        return self.scope.startswith("function ")


def _entry(key: str, value: object) -> FixedNode | None:
    if not isinstance(value, dict):
        return None
    form, op, nodes = value.get("form"), value.get("op"), value.get("nodes")
    attributes, inputs, outputs = value.get("attributes"), value.get("inputs"), value.get("outputs")
    scope = value.get("scope", MAIN_GRAPH)
    names = (nodes, inputs, outputs)
    if not (isinstance(form, str) and isinstance(op, str) and isinstance(attributes, dict)
            and all(isinstance(v, list) and all(isinstance(n, str) for n in v) for v in names)
            and inputs and outputs and isinstance(scope, str)):
        return None
    found = FixedNode(key if scope == MAIN_GRAPH else key.removeprefix(f"{scope} > "), form, op,
                      tuple(nodes), attributes, tuple(inputs), tuple(outputs), scope)
    return found if found.key == key else None


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


def record(model: onnx.ModelProto, fixed: Iterable[FixedNode], earlier: bool = True) -> None:
    """Write ``fixed`` into ``model``'s record, beside what an earlier fix recorded (``earlier``
    False: in its place)."""
    entries = _recorded(model)[0] if earlier else {}
    entries.update((f.key, {k: v for k, v in dataclasses.asdict(f).items()
                            if k != "name" and (k, v) != ("scope", MAIN_GRAPH)}) for f in fixed)
    kept = [p for p in model.metadata_props if p.key != KEY]
    del model.metadata_props[:]
    model.metadata_props.extend(kept)
    if entries:
        model.metadata_props.add(key=KEY, value=json.dumps(entries, sort_keys=True))


def read(model: onnx.ModelProto) -> tuple[dict[str, FixedNode], list[str]]:
    """The fixed nodes whose form is in ``model`` as fix wrote it (record key -> node), and a note
    for each record that is not (its nodes are then the model's own)."""
    entries, problem = _recorded(model)
    notes = [f"{problem}: fix's record ignored"] if problem else []
    if not entries:
        return {}, notes
    nodes: dict[tuple[str, str], onnx.NodeProto] = {}  # (scope, name) -> node
    # names are counted per graph; the functions' together, since validate finds a body's
    # nodes by name in their inlined copies
    counts: Counter[tuple[str, str]] = Counter()
    values: set[str] = set()  # every tensor a graph or function takes or a node writes
    for scope in model_scopes(model):
        holder = scope.holder
        if isinstance(holder, onnx.GraphProto):
            values.update(text(v.name) for v in (*holder.input, *holder.initializer))
        elif holder is not None:
            values.update(text(v) for v in holder.input)
        for node in scope.nodes:
            nodes.setdefault((scope.location, text(node.name)), node)
            counts["function" if scope.function else scope.location, text(node.name)] += 1
            values.update(text(v) for v in node.output)
    found: dict[str, FixedNode] = {}
    for key, value in entries.items():
        fixed = _entry(key, value)
        if fixed is None:
            notes.append(f"fix's record of node {key!r} is not one fix writes: ignored")
            continue
        name, scope = fixed.name, fixed.scope
        # a name several nodes of its scope bear does not say which of them the record means:
        # none is taken for fixed
        bucket = "function" if fixed.in_function else scope
        shared = [n for n in (name, *fixed.nodes) if counts[bucket, n] > 1]
        if shared:
            where = "the model's functions" if fixed.in_function else f"the {scope}"
            notes.append(f"fix's record of node {key!r} (form {fixed.form}) names node "
                         f"{shared[0]!r}, which {counts[bucket, shared[0]]} nodes of {where} "
                         "bear: its nodes are validated as they stand")
            continue
        missing = [n for n in (name, *fixed.nodes) if (scope, n) not in nodes]
        unmarked = [n for n in fixed.nodes if (scope, n) in nodes
                    and not nodes[scope, n].doc_string.startswith(MARK)]
        # bounds no tensor of the model has (a forged record) would leave its nodes unjudged
        gone = [t for t in (*fixed.inputs, *fixed.outputs) if t not in values]
        if missing or unmarked or gone:
            what = (f"node {missing[0]!r} is gone" if missing
                    else f"node {unmarked[0]!r} is no longer marked {MARK!r}" if unmarked
                    else f"tensor {gone[0]!r} is gone")
            notes.append(f"fix's record of node {key!r} (form {fixed.form}) no longer matches the "
                         f"model ({what}, edited after fixing?): its nodes are validated as they "
                         "stand")
            continue
        found[key] = fixed
    return found, notes
