"""The generic (IRDL) part of an op's verification, run once per distinct signature.

xDSL verifies an op defined with IRDL in two parts: its definition's generic checks
(`OpDef.verify`: operand and result counts and type constraints, variadic segment sizes,
region block counts and entry-argument types, successors, property and attribute
constraints, then the traits) and the op's own `verify_`. The generic part, traits aside, is
a function of the op's *signature* alone: its operand types, result types, properties,
attributes, each region's block count and entry-argument types, and its successor count,
read by pure constraints. A large model repeats a few signatures thousands of times (a
50,000-op chain has four nn ops of one tensor type), and the generic part cost most of the
verify after the pipeline.

`verify_signatures_once(ops)` makes the generic part of these op classes remember the
signatures that passed: an op of a remembered signature runs only its traits (which may read
where the op is: `IsTerminator`, `HasParent`) and then, as always, its own `verify_`; any
other runs the whole generic check. So what fails verification is unchanged, and the error
message too (the first op of a signature gets the full check). Not remembered: ops holding a
dense elements or resource attribute (weights: hashing them costs as much as checking, and
remembering them would keep them alive), and signatures past `LIMIT` (memory stays bounded).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable

from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, DenseResourceAttr
from xdsl.ir import Operation
from xdsl.irdl import IRDLOperation, OpDef

LIMIT = 4096  # signatures remembered per op class
_UNREMEMBERED = (DenseIntOrFPElementsAttr, DenseResourceAttr)


def signature(op: Operation) -> Hashable | None:
    """What the generic checks of `op` read (module doc); None when it is not to be
    remembered."""
    for attribute in (*op.properties.values(), *op.attributes.values()):
        if isinstance(attribute, _UNREMEMBERED):
            return None
    return (
        tuple(operand.type for operand in op.operands),
        tuple(result.type for result in op.results),
        tuple(op.properties.items()),
        tuple(op.attributes.items()),
        tuple((len(r.blocks), r.first_block and r.first_block.arg_types) for r in op.regions),
        len(op.successors),
    )


def _remembering(op_def: OpDef) -> Callable[[Operation], None]:
    generic = op_def.verify
    passed: set[Hashable] = set()

    def verify(op: Operation) -> None:
        key = signature(op)
        try:
            known = key is not None and key in passed
        except TypeError:  # an attribute that cannot be hashed: check it every time
            key, known = None, False
        if not known:
            generic(op)
            if key is not None and len(passed) < LIMIT:
                passed.add(key)
            return
        for trait in op_def.traits:
            trait.verify(op)

    return verify


def verify_signatures_once(ops: Iterable[type[IRDLOperation]]) -> None:
    """Makes the generic verification of each class in `ops` run once per signature (module
    doc). The op's definition is changed in place; a class done already is left alone."""
    for op in ops:
        op_def = op.get_irdl_definition()
        if "verify" not in vars(op_def):  # the closure xDSL's verify_ calls reads it there
            op_def.verify = _remembering(op_def)  # type: ignore[method-assign]
