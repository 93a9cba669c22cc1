"""The one verification every caller uses: xDSL's verifier, then the checks xDSL leaves
out (tensor encodings in function signatures, symbols defined twice, values used before
their definition), each error located at its op."""

from __future__ import annotations

import re
import sys

from xdsl.dialects import func
from xdsl.dialects.builtin import (
    ModuleOp,
    StringAttr,
    TensorType,
)
from xdsl.ir import Block, Operation
from xdsl.utils.exceptions import VerifyException

from nnlayout.diagnostics import UserError, error_at, first_message, location_of
from nnlayout.dialects.layout import verify_encoding
from nnlayout.dialects.verify_once import verify_signatures_once

# xDSL's dialects whose ops planned IR repeats (a memref.view per buffer, an arith.constant
# per offset): imported on first use (ir/context.py), their generic checks then made to run
# once per signature as the nn ops' are.
_REPEATED_DIALECTS = (("xdsl.dialects.memref", "MemRef"), ("xdsl.dialects.arith", "Arith"))

_REDEFINITION = re.compile(r'Redefinition of symbol "(.*)"', re.S)


def verify_module(module: ModuleOp, text: str | None = None) -> None:
    """Verifies `module`; on failure raises a UserError located at the innermost failing op."""
    for module_name, dialect in _REPEATED_DIALECTS:
        if (loaded := sys.modules.get(module_name)) is not None:
            verify_signatures_once(getattr(loaded, dialect).operations)
    try:
        module.verify()
    except VerifyException:
        for op in module.walk(region_first=True):
            try:
                op.verify(verify_nested_ops=False)
            except VerifyException as error:
                raise _redefinition(op, error, text) or error_at(
                    op, first_message(error), text
                ) from None
        raise
    _check_signatures(module, text)
    _check_defined_before_use(module, text)


def _check_signatures(module: ModuleOp, text: str | None) -> None:
    """The tensor encodings of each function's arguments and results are ours and fit their
    tensors' ranks. xDSL checks none there: with `tensor<2x3xf32, #layout.layout<"NCHW">>`
    a pass or the runner reading it would fail later, with no location."""
    for op in module.walk():
        if not isinstance(op, func.FuncOp):
            continue
        signature = op.function_type
        names = [arg.name_hint for arg in op.args] if op.body.blocks else []
        for kind, types in (("argument", signature.inputs), ("result", signature.outputs)):
            for index, value_type in enumerate(types.data):
                if not isinstance(value_type, TensorType):
                    continue
                what = f"@{op.sym_name.data}: {kind} {index + 1}"
                if kind == "argument" and index < len(names) and names[index]:
                    what += f" (%{names[index]})"
                try:
                    verify_encoding(value_type, what)
                except VerifyException as error:
                    raise error_at(op, str(error), text) from None


def _redefinition(table: Operation, error: VerifyException, text: str | None) -> UserError | None:
    """xDSL blames a symbol defined twice on the symbol table (often the implicit module,
    which has no location); this error is at the second definition, naming the first."""
    found = _REDEFINITION.fullmatch(str(error))
    if found is None or not table.regions or not table.regions[0].blocks:
        return None
    first = None
    for op in table.regions[0].blocks[0].ops:
        name = op.get_attr_or_prop("sym_name")
        if isinstance(name, StringAttr) and name.data == found.group(1):
            if first is not None:
                where = location_of(first)
                also = f" (first defined at {where})" if where is not None else ""
                return error_at(op, f"redefinition of symbol @{name.data}{also}", text)
            first = op
    return None


def _check_defined_before_use(module: ModuleOp, text: str | None) -> None:
    """Within a block, every operand made by an op of that block is made by an earlier op
    (xDSL does not check dominance: `%1 = nn.relu %1` parses and verifies). Blocks are
    checked in the order of their ops' walk, each before the blocks nested in it; the ops seen
    are kept by `id` (hashing an xDSL op or value calls Python code: a large model's verify
    spent a tenth of its time here)."""
    pending = [block for region in reversed(module.regions) for block in reversed(region.blocks)]
    while pending:
        block = pending.pop()
        seen: set[int] = set()
        nested: list[Block] = []
        for op in block.ops:
            for index, operand in enumerate(op.operands):
                owner = operand.owner
                if isinstance(owner, Operation) and id(owner) not in seen and owner.parent is block:
                    raise error_at(
                        op,
                        f"operand {index} of {op.name} is used before it is "
                        "defined (by this op or a later one)",
                        text,
                    )
            seen.add(id(op))
            for region in op.regions:
                nested.extend(region.blocks)
        pending.extend(reversed(nested))
