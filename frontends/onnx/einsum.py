"""The ONNX Einsum converter: the equations attention blocks and torch's exporters write,
decomposed into nn.transpose, nn.reshape and one nn.matmul.

Two operands with exactly one contracted index ("bhid,bhjd->bhij", "bhij,bhjd->bhid",
"...ij,...jk->...ik", "bnd,md->bnm"): indices in both operands and the output are batch
dims (an ellipsis is batch dims too, broadcast as matmul broadcasts them), indices of one
operand and the output are its free dims. Each operand is transposed to [batch, free,
contracted] (the right one to [batch, contracted, free]), its free dims merged into one, the
product taken, its free dims split again and the result transposed to the output's order;
identities are left out. One operand: a permutation (a transpose). Anything else (sums over
an index, repeated indices, no or several contracted indices, three operands) is refused
with the equation named.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import onnx
from xdsl.ir import SSAValue

from nnlayout.dialects import nn
from nnlayout.frontends.onnx.state import ImportState

# Indices standing for an ellipsis' dims, right-aligned (ONNX's indices are letters: digits
# cannot clash with them).
_ELLIPSIS = "0123456789"


def _terms(state: ImportState, node: onnx.NodeProto, equation: str) -> tuple[list[str], str]:
    """The operands' index strings and the output's, ellipses as placeholder indices (the
    output implicit in an equation without "->": its indices that appear once, sorted)."""
    text = equation.replace(" ", "")
    inputs, arrow, output = text.partition("->")
    terms = inputs.split(",")
    if len(terms) != len(node.input):
        raise _refused(state, equation, f"{len(terms)} terms for {len(node.input)} operands")
    expanded = [
        _expand(state, equation, term, len(nn.shape_of(state.operand(node, i))))
        for i, term in enumerate(terms)
    ]
    width = max(sum(c in _ELLIPSIS for c in t) for t in expanded)
    if arrow:
        return expanded, _expand(state, equation, output, None, width)
    letters = "".join(expanded)
    named = sorted(c for c in set(letters) if c not in _ELLIPSIS and letters.count(c) == 1)
    return expanded, _ELLIPSIS[len(_ELLIPSIS) - width :] + "".join(named)


def _expand(state: ImportState, equation: str, term: str, rank: int | None, width: int = 0) -> str:
    """`term` with its ellipsis as placeholders, right-aligned across operands (the last
    placeholder is the ellipsis' last dim); an operand's term must name its rank."""
    head, ellipsis, tail = term.partition("...")
    if rank is not None:
        width = rank - len(head) - len(tail)
        if width < 0 or width > len(_ELLIPSIS) or (width and not ellipsis):
            raise _refused(state, equation, f"term '{term}' for an operand of rank {rank}")
    dots = _ELLIPSIS[len(_ELLIPSIS) - width :] if ellipsis else ""
    if len(set(head + tail)) != len(head + tail):
        raise _refused(state, equation, f"repeated index in '{term}' (a diagonal)")
    return head + dots + tail


def _refused(state: ImportState, equation: str, why: str) -> Exception:
    return state.fail(
        f"Einsum equation '{equation}': {why}; nnlayout imports a permutation of one "
        "operand or a product of two with one contracted index (batch and free indices "
        "besides)"
    )


def _transposed(state: ImportState, x: SSAValue, have: str, want: str) -> SSAValue:
    if have == want:
        return x
    perm = [have.index(c) for c in want]
    return state.emit(state.build(lambda: nn.TransposeOp(x, perm)))


def einsum(state: ImportState, node: onnx.NodeProto, attrs: dict) -> None:
    equation = attrs.get("equation", b"")
    equation = equation.decode() if isinstance(equation, bytes) else str(equation)
    terms, output = _terms(state, node, equation)
    if len(terms) > 2:
        raise _refused(state, equation, f"{len(terms)} operands")
    if missing := sorted(set("".join(terms)) - set(output) - _shared(terms)):
        shown = ", ".join(c for c in missing if c not in _ELLIPSIS)
        raise _refused(state, equation, f"sums over '{shown}'")
    if len(terms) == 1:
        x = state.operand(node, 0)
        state.output(node, _transposed(state, x, terms[0], output))
        return
    state.output(node, _product(state, node, equation, terms, output))


def _shared(terms: Sequence[str]) -> set[str]:
    return set(terms[0]) & set(terms[1]) if len(terms) == 2 else set()


def _product(
    state: ImportState, node: onnx.NodeProto, equation: str, terms: Sequence[str], output: str
) -> SSAValue:
    """The product of two operands with one contracted index, as one nn.matmul."""
    left, right = terms
    contracted = [c for c in left if c in right and c not in output]
    if len(contracted) != 1:
        raise _refused(
            state,
            equation,
            "no contracted index" if not contracted else f"{len(contracted)} contracted indices",
        )
    k = contracted[0]
    batch = "".join(c for c in output if c in left and c in right)
    free_left = "".join(c for c in output if c in left and c not in right)
    free_right = "".join(c for c in output if c in right and c not in left)
    a, b = state.operand(node, 0), state.operand(node, 1)
    a_sizes = dict(zip(left, nn.shape_of(a), strict=True))
    b_sizes = dict(zip(right, nn.shape_of(b), strict=True))
    a_batch, b_batch = _present(batch, left), _present(batch, right)
    a = _transposed(state, a, left, a_batch + free_left + k)
    b = _transposed(state, b, right, b_batch + k + free_right)
    rows = math.prod(a_sizes[c] for c in free_left)
    columns = math.prod(b_sizes[c] for c in free_right)
    a = state.reshaped(a, [*(a_sizes[c] for c in a_batch), rows, a_sizes[k]])
    b = state.reshaped(b, [*(b_sizes[c] for c in b_batch), b_sizes[k], columns])
    product = state.emit(state.build(lambda: nn.MatmulOp(a, b)))
    batch_dims = list(nn.shape_of(product)[:-2])
    split = [*batch_dims, *(a_sizes[c] for c in free_left), *(b_sizes[c] for c in free_right)]
    return _transposed(
        state, state.reshaped(product, split), batch + free_left + free_right, output
    )


def _present(batch: str, term: str) -> str:
    """The batch indices `term` has (an ellipsis may be shorter in one operand: matmul
    broadcasts the missing leading dims)."""
    return "".join(c for c in batch if c in term)
