"""verify-memory-plan on planned programs: it accepts the plans plan-memory makes and catches
corrupted ones (a shifted offset, a view leaving the arena or used after the arena is freed,
an arena size it does not allocate, in place where the kernel does not allow it), following
views that cse merged."""

from __future__ import annotations

import re

import pytest
from xdsl.dialects import arith, func, memref
from xdsl.dialects.builtin import IndexType, IntegerAttr, StringAttr, i64
from xdsl.ir import Attribute

from nnlayout.diagnostics import DiagnosticError
from nnlayout.dialects.compute import ComputeOp
from nnlayout.dialects.kernel_attr import kernel_of
from nnlayout.examples.make_models import build
from nnlayout.frontends.onnx import import_model
from nnlayout.ir.context import make_context
from nnlayout.runtime import plan_check
from nnlayout.runtime.interpreter import Interpreter
from nnlayout.runtime.plan_check import verify_function
from nnlayout.tests import helpers as semantics
from nnlayout.tests.transforms.test_plan_memory import IN_PLACE, compile_text, the_function, views
from nnlayout.tools.driver import parse_pipeline, run_pipeline
from nnlayout.transforms import get_all_passes


# ------------------------------------------------------------------ the verifier
def planned(target: str = "avx2") -> func.FuncOp:
    return the_function(compile_text(IN_PLACE, f"default-pipeline{{target={target}}}"))


def move(view: memref.ViewOp, offset: int) -> None:
    constant = arith.ConstantOp(IntegerAttr(offset, IndexType()))
    constant.result.name_hint = "moved"
    view.parent_block().insert_op_before(constant, view)
    view.operands[1] = constant.result


def test_verifier_accepts_the_plans() -> None:
    assert verify_function(planned()) == 6


def test_verifier_catches_a_shifted_offset() -> None:
    function = planned()
    by_name = views(function)
    offset = by_name["r0"].byte_shift.owner.value.value.data
    move(by_name["r0"], offset + 2048 if offset < 2048 else offset - 2048)
    with pytest.raises(DiagnosticError, match="overlaps .* while both are live"):
        verify_function(function)


def test_verifier_catches_a_view_leaving_the_arena() -> None:
    function = planned()
    move(views(function)["e"], 2 * 2048 - 64)
    with pytest.raises(DiagnosticError, match="leaves the arena of 4096 bytes"):
        verify_function(function)


def test_verifier_refuses_a_view_used_after_its_arena_is_deallocated() -> None:
    """The arena freed after its first view's first use (the plan itself never frees it:
    freed before the return, it would be fine)."""
    function = planned()
    first = views(function)["r0"]
    block = function.body.block
    block.insert_op_before(memref.DeallocOp.get(first.source), block.last_op)
    assert verify_function(function) == 6
    late = block.last_op.prev_op
    late.detach()
    block.insert_op_after(late, next(use.operation for use in first.result.uses))
    with pytest.raises(DiagnosticError, match="'%r0' .* is used after its arena is deallocated"):
        verify_function(function)


@pytest.mark.parametrize("stated", [IntegerAttr(2 * 2048 - 64, i64), StringAttr("4096")])
def test_verifier_refuses_an_arena_bytes_figure_the_arena_does_not_allocate(
    stated: Attribute,
) -> None:
    function = planned()
    assert function.attributes["nnlayout.arena_bytes"] == IntegerAttr(2 * 2048, i64)
    function.attributes["nnlayout.arena_bytes"] = stated
    with pytest.raises(
        DiagnosticError,
        match=re.escape(
            f"'nnlayout.arena_bytes' is {stated}, but the function's arena allocates 4096 bytes"
        ),
    ):
        verify_function(function)


@pytest.mark.parametrize("name", ["densenet121", "mobilenet_v2", "unet"])  # cse merges views
def test_verifier_follows_the_values_of_a_view_that_cse_merged(name: str) -> None:
    """cse merges identical views of buffers planned at one offset into one SSA value; each
    buffer's value still has its own live range (from the write that starts it), so the
    plan stays verifiable."""
    module = import_model(build(name, small=True), inline_limit=1 << 30).module
    inputs = semantics.random_inputs(module)
    expected = Interpreter(module).run(inputs)
    run_pipeline(
        parse_pipeline("default-pipeline{target=avx2},cse", get_all_passes()),
        make_context(),
        module,
    )
    function = the_function(module)
    block = function.body.block
    position = {op: index for index, op in enumerate(block.ops)}
    merged = [
        view
        for view in function.walk()
        if isinstance(view, memref.ViewOp)
        and len(plan_check._live_ranges(view, block, position)) > 1
    ]
    assert merged, "cse merged no views: the case tests nothing"
    assert verify_function(function) > 0
    semantics.assert_same(expected, Interpreter(module).run(inputs))


def test_verifier_refuses_in_place_the_kernel_does_not_allow() -> None:
    """conv2d_ref writing over its input: same bytes, but the kernel never allowed it."""
    function = planned()
    by_name = views(function)
    move(by_name["c1"], by_name["r0"].byte_shift.owner.value.value.data)
    conv = next(
        op
        for op in function.walk()
        if isinstance(op, ComputeOp) and op.outs[0] is by_name["c1"].result
    )
    assert kernel_of(conv.inner).kernel_name.data == "conv2d_ref"
    with pytest.raises(DiagnosticError, match="'%c1' .* overlaps '%r0'"):
        verify_function(function)
