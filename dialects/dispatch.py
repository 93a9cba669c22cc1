"""The attributes `select-dispatch` writes on the module it dispatches: the target it chose
kernels for and whether it let them pad channels to whole blocks,

    builtin.module attributes {nnlayout.target = "avx512", nnlayout.padding = true} {

so that the passes after it that choose kernels too (`fuse-post-ops`) read these decisions
from the IR instead of being told them again, and a saved module says what it was compiled
for. Named as `plan-memory`'s figures are (`nnlayout.arena_bytes`, `dialects/plan.py`).
"""

from __future__ import annotations

from xdsl.dialects.builtin import IntegerAttr, ModuleOp, StringAttr, i1
from xdsl.ir import Attribute

from nnlayout.diagnostics import DiagnosticError

TARGET_ATTR = "nnlayout.target"
PADDING_ATTR = "nnlayout.padding"


def record_dispatch(module: ModuleOp, target: str, padding: bool) -> None:
    """Records on `module` the target (by the name the pipeline gave it) and the padding
    choice its kernels were selected with."""
    module.attributes[TARGET_ATTR] = StringAttr(target)
    module.attributes[PADDING_ATTR] = IntegerAttr.from_bool(padding)


def recorded_target(module: ModuleOp) -> str | None:
    """The target `module` was dispatched for; None if it records none."""
    attribute = module.attributes.get(TARGET_ATTR)
    if attribute is None:
        return None
    if not isinstance(attribute, StringAttr):
        raise DiagnosticError(module, _wrong_kind(TARGET_ATTR, "a string", attribute))
    return attribute.data


def recorded_padding(module: ModuleOp) -> bool | None:
    """Whether `module`'s kernels were selected with channel padding allowed; None if it
    records nothing."""
    attribute = module.attributes.get(PADDING_ATTR)
    if attribute is None:
        return None
    if not (isinstance(attribute, IntegerAttr) and attribute.type == i1):
        raise DiagnosticError(module, _wrong_kind(PADDING_ATTR, "true or false", attribute))
    return bool(attribute.value.data)


def _wrong_kind(name: str, expected: str, attribute: Attribute) -> str:
    return f"module attribute {name} must be {expected}, got {attribute}"
