"""Writing the chosen realizations into a model.

Each node is replaced, where it stands, by the nodes :func:`ortpool.fix.emit.emit` writes for
its plan (the node itself for ``unchanged``); every other node, value, initializer, name and
doc string stays. A node realized as ortpool's op brings the ``ortpool`` opset import to the
graph or function that holds it, and a subgraph output it writes gets its declared sizes set
aside as ``ortpool rewrite`` does (:mod:`ortpool.model.branch_outputs`). Each node written as a
standard-op form is recorded with its form and inserted nodes in the model's metadata
(:mod:`ortpool.model.fixmarks`), for ``validate``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import onnx

from ortpool import optypes
from ortpool.fix import emit
from ortpool.fix.forms import Plan
from ortpool.fix.sites import Site
from ortpool.model import branch_outputs, fixmarks, splice
from ortpool.model.scopes import model_scopes
from ortpool.rewrite import retarget


def apply(
    source: onnx.ModelProto, sites: Sequence[Site], plans: Mapping[int, Plan]
) -> tuple[onnx.ModelProto, list[str]]:
    """A copy of ``source`` with ``plans`` (site number -> plan) written in; notes."""
    model = onnx.ModelProto()
    model.CopyFrom(source)
    scopes = {scope.key: scope for scope in model_scopes(model)}
    namer = retarget.Namer(retarget.all_names(model))
    # The copy's scopes hold the same nodes at the same positions as the source's.
    targets = []
    for site in sites:
        plan = plans.get(site.number)
        if plan is None or not plan.changes_node or site.facts is None:
            continue
        scope = scopes[site.scope.key]
        position = splice.position_of(site.scope.nodes, site.node)
        targets.append((scope, scope.nodes[position], site, plan))
    forms = []
    for scope, node, site, plan in targets:
        assert site.facts is not None
        made = emit.emit(plan, site.facts, node, emit.Io.of(node), namer)
        splice.replace(scope.nodes, node, made)
        if plan.ortpool:
            splice.add_import(scope.imports, optypes.DOMAIN, optypes.DOMAIN_VERSION)
        elif node.name:  # an unnamed node cannot be found again by name
            inserted = tuple(n.name for n in made if n.doc_string.startswith(fixmarks.MARK))
            op = f"{site.facts.op}-{site.facts.version}"
            forms.append(fixmarks.FixedNode(node.name, plan.name, op, inserted))
    fixmarks.record(model, forms)
    notes = []
    moved = branch_outputs.set_aside(model)
    if moved:
        notes.append(
            f"subgraph outputs {', '.join(map(repr, moved))} are written by an ortpool op: "
            "their declared static sizes are kept in their metadata and their dims made symbolic "
            "(as 'ortpool rewrite' does)"
        )
    return model, notes
