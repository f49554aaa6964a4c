"""Writing the chosen realizations into a model, each node replaced where it stands by
:func:`ortpool.forms.emit.emit`'s nodes; ortpool's op brings its opset import (and declares its
outputs and sets aside a subgraph output's declared sizes, as ``ortpool rewrite`` does); each
standard-op form is recorded in the model's metadata (:mod:`ortpool.model.fixmarks`) for
``validate``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import onnx

from ortpool import optypes
from ortpool.errors import OrtpoolError
from ortpool.forms import emit
from ortpool.forms.plan import Plan
from ortpool.kernels.shapes import output_shape
from ortpool.model import branch_outputs, fixmarks, splice
from ortpool.model.inference import learn_types
from ortpool.model.scopes import model_scopes, text, written
from ortpool.model.site import Site
from ortpool.rewrite import op_outputs, retarget


def apply(source: onnx.ModelProto, sites: Sequence[Site],
          plans: Mapping[int, Plan]) -> tuple[onnx.ModelProto, list[str]]:
    """A copy of ``source`` with ``plans`` (site number -> plan) written in; notes."""
    model = onnx.ModelProto()
    model.CopyFrom(source)
    scopes = {scope.key: scope for scope in model_scopes(model)}
    namer = retarget.Namer(retarget.all_names(model))
    # The copy's scopes hold the same nodes at the same positions as the source's.
    targets = []
    for site in sites:
        plan = plans.get(site.number)
        if plan is None or not plan.changes_node or not site.judgeable:
            continue
        scope = scopes[site.scope.key]
        position = splice.position_of(site.scope.nodes, site.node)
        targets.append((scope, scope.nodes[position], site, plan))
    forms = []
    for scope, node, site, plan in targets:
        if not node.name and not plan.ortpool:  # validate finds a form by its node's name
            node.name = namer.fresh(f"ortpool_fix/node/{written(node.output[0])}")
        made = emit.emit(plan, site, node, tuple(node.input), tuple(node.output), namer)
        splice.replace(scope.nodes, node, made)
        if plan.ortpool:
            splice.add_import(scope.imports, optypes.DOMAIN, optypes.DOMAIN_VERSION)
        else:
            inserted = tuple(text(n.name) for n in made
                             if n.doc_string.startswith(fixmarks.MARK))
            forms.append(fixmarks.FixedNode(text(node.name), plan.name, site.key, inserted,
                                            site.attributes, site.inputs, site.outputs,
                                            scope.location))
    fixmarks.record(model, forms)
    if any(plan.ortpool for _, _, _, plan in targets):  # onnxruntime types none of their outputs
        op_outputs.declare(model, learn_types(source))
    notes = []
    if moved := branch_outputs.set_aside(model):
        notes.append(f"subgraph outputs {', '.join(map(repr, moved))} are written by an ortpool "
                     "op: their declared static sizes are kept in their metadata and their dims "
                     "made symbolic (as 'ortpool rewrite' does)")
    misfits = _misfits(sites, plans)
    resized = {name: real for name, (_, _, real, changed) in misfits.items()
               if changed and name not in moved}
    branch_outputs.redeclare(model, resized)
    for name, (node, declared, real, changed) in misfits.items():
        misfit = (f"subgraph output {name!r} declares {list(declared)}, but node {node!r} "
                  f"computes {list(real)} there (the spec's size); onnxruntime refuses to run the "
                  "branch when its result does not fit the declaration, the original model's too")
        if name in resized:
            notes.append(f"{misfit}: the fixed node computes {list(real)}, now declared (the old "
                         "declaration kept in the output's metadata; a runtime that keeps the "
                         "size of its own shape inference over a declaration, as onnxruntime "
                         "1.21 does, still refuses the branch)")
        elif not changed:
            notes.append(f"{misfit}: kept as declared (the node is unchanged)")
    return model, notes


def _misfits(sites: Sequence[Site], plans: Mapping[int, Plan]
             ) -> dict[str, tuple[str, tuple[int, ...], tuple[int, ...], bool]]:
    """Subgraph outputs a pooling node writes declared with another static shape than the spec's:
    name -> (node, declared, the spec's, whether the fix changes the node)."""
    found = {}
    for site in sites:
        holder = site.scope.holder if site.scope is not None else None
        # a function body declares no shapes: its outputs are names (a FunctionProto's)
        if not site.judgeable or site.in_main_graph or not isinstance(holder, onnx.GraphProto) \
                or not site.node.output:
            continue
        if site.x_dims is None or any(d is None for d in site.x_dims):
            continue
        declared = {v.name: branch_outputs.static_dims(v) for v in holder.output}
        y = site.node.output[0]
        if declared.get(y) is None:
            continue
        try:
            real = output_shape(site.op, site.version, site.x_dims, site.attributes,
                                unpool_shape=site.output_shape, rois_shape=site.rois_dims)
        except OrtpoolError:
            continue
        if tuple(real) != declared[y]:
            plan = plans.get(site.number)
            found[y] = (site.name, declared[y], tuple(real),
                        plan is not None and plan.changes_node)
    return found
