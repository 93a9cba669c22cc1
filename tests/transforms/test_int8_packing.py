"""fold-constants' kernel-packed constants (dialects/packing.py): oneDNN's int8 weights carry
the bytes they take packed, compensation included; the plan counts them; the kernel refuses a
claim that is not its format's size; results are those of the same program without the
claims, bit for bit, on every target, padding on and off, interpreter and generated module."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from xdsl.dialects.builtin import ModuleOp

from nnlayout.diagnostics import DiagnosticError, UserError
from nnlayout.dialects import nn
from nnlayout.dialects.kernel_attr import kernel_of
from nnlayout.dialects.packing import PACKED_ATTR, Packed, defining_op, packed_of
from nnlayout.dialects.plan import (
    COMPENSATION_BYTES,
    CONSTANT_BYTES,
    PACKED_BYTES,
    PACKED_PLAIN_BYTES,
    RELEASED_BYTES,
)
from nnlayout.kernels.onednn import binding as b
from nnlayout.kernels.onednn.binding import runs_vnni
from nnlayout.kernels.onednn.quantized_kernels import prepare_qconv
from nnlayout.lowering.to_numpy import run_generated
from nnlayout.runtime.interpreter import Interpreter
from nnlayout.transforms.fold_constants import record_packing
from tests.helpers import DEFAULT_PIPELINE, compile_module, everywhere, parse, tiered

ONEDNN_INT8 = pytest.mark.skipif(not runs_vnni(), reason="oneDNN has no VNNI/AMX int8 code here")


def qconv(x_type: str, x_zp: int, groups: int, channels: int = 16, add: bool = False) -> str:
    """A qconv2d (3x3, pads 1, per-channel weight scales) of 1 x channels x 6 x 6 `x_type`
    data, groups `groups`, 32 outputs (channels for depthwise), with a qadd of its result
    to itself after it where `add` (fuse-post-ops makes an nn.qconv2d_add of it)."""
    out = channels if groups == channels else 32
    w = (out, channels // groups, 3, 3)
    rng = np.random.default_rng(groups + abs(x_zp))
    weights = json.dumps(rng.integers(-128, 128, w).tolist())
    bias = json.dumps(rng.integers(-500, 500, out).tolist())
    scales = ", ".join(f"{s:.4f}" for s in rng.uniform(0.001, 0.01, out))
    t = f"tensor<1x{channels}x6x6x{x_type}>"
    y = f"tensor<1x{out}x6x6xui8>"
    wt = f"tensor<{'x'.join(map(str, w))}xi8>"
    added = (
        f"  %a = nn.qadd %y, %y {{a_scale = dense<0.5> : tensor<f32>, a_zero_point = "
        f"dense<3> : tensor<ui8>, b_scale = dense<0.5> : tensor<f32>, b_zero_point = "
        f"dense<3> : tensor<ui8>, y_scale = dense<0.75> : tensor<f32>, y_zero_point = "
        f"dense<5> : tensor<ui8>}} : ({y}, {y}) -> {y}\n"
        if add
        else ""
    )
    return (
        f"func.func @f(%x: {t}) -> {y} {{\n"
        f"  %w = nn.constant dense<{weights}> : {wt}\n"
        f"  %b = nn.constant dense<{bias}> : tensor<{out}xi32>\n"
        f"  %y = nn.qconv2d %x, %w, %b strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] "
        f"groups {groups} {{w_scale = dense<[{scales}]> : tensor<{out}xf32>, w_zero_point = "
        f"dense<0> : tensor<{out}xi8>, x_scale = dense<0.05> : tensor<f32>, x_zero_point = "
        f"dense<{x_zp}> : tensor<{x_type}>, y_scale = dense<0.5> : tensor<f32>, y_zero_point = "
        f"dense<3> : tensor<ui8>}} : ({t}, {wt}, tensor<{out}xi32>) -> {y}\n"
        f"{added}  func.return {'%a' if add else '%y'} : {y}\n}}\n"
    )


CASES = {
    "u8 zero point 10": ("ui8", 10, 1),
    "u8 zero point 0": ("ui8", 0, 1),
    "s8": ("i8", -4, 1),
    "grouped": ("ui8", 7, 2),
    "depthwise": ("ui8", 7, 16),
}


def _inputs(module: ModuleOp, x_type: str) -> list[np.ndarray]:
    rng = np.random.default_rng(1)
    low, high, dtype = (0, 256, np.uint8) if x_type == "ui8" else (-128, 128, np.int8)
    return [rng.integers(low, high, (1, 16, 6, 6)).astype(dtype)]


def _claims(module: ModuleOp) -> list[tuple[Packed, int]]:
    """Each packed claim in `module` and the plain bytes of the constant making it."""
    return [
        (claim, int(np.prod(op.results[0].type.get_shape())))  # type: ignore[attr-defined]
        for op in module.walk()
        if (claim := packed_of(op)) is not None
    ]


def _without_claims(module: ModuleOp) -> ModuleOp:
    plain = module.clone()
    for op in plain.walk():
        op.attributes.pop(PACKED_ATTR, None)
    return plain


@pytest.mark.parametrize(
    ("case", "add"),
    tiered(
        [(case, add) for case in CASES for add in (False, True)],
        [("u8 zero point 10", False), ("s8", True)],
    ),
)
def test_packed_weights_keep_results_everywhere(case: str, add: bool) -> None:
    """On every target, padding on and off, interpreter and generated module: the results
    are those of the same program without its packing claims (the kernel packing at load,
    as before), bit for bit; where oneDNN's int8 convolution runs, its weights carry a
    claim, compensation counted where its attributes need one, and the plan counts it."""
    x_type, x_zp, groups = CASES[case]
    module = parse(qconv(x_type, x_zp, groups, add=add))
    inputs = _inputs(module, x_type)
    packed_somewhere = False
    for target, padding, compiled, got in everywhere(module, inputs):
        plain = _without_claims(compiled)
        for want in (Interpreter(plain).run(inputs), run_generated(plain, inputs)):
            for expected, actual in zip(want, got, strict=True):
                np.testing.assert_array_equal(actual, expected, err_msg=f"{target} {padding}")
        kernels = {k.kernel_name.data for op in compiled.walk() if (k := kernel_of(op))}
        claims = _claims(compiled)
        if not kernels & {"qconv2d_onednn", "qconv2d_add_onednn"}:
            assert not claims, target
            continue
        packed_somewhere = True
        ((claim, plain_bytes),) = claims
        out = 16 if groups == 16 else 32
        weights = out * (16 // groups) * 9  # s8, a multiple of oneDNN's blocks: none padded
        assert plain_bytes == weights
        needs = x_type == "i8" or x_zp != 0  # s8s8 or the source zero point's compensation
        compensation = 3 * 4 * out if needs else 0  # packed_sizes: 3 int32 per output channel
        packed = weights + compensation
        assert (claim.bytes, claim.compensation) == (packed, compensation), (target, claim)
        function = next(op for op in compiled.walk() if op.name == "func.func")
        figures = {k: v.value.data for k, v in function.attributes.items() if hasattr(v, "value")}
        assert figures[PACKED_BYTES] == packed
        assert figures[COMPENSATION_BYTES] == compensation
        bias = 4 * out  # held as the kernel's prescaled f32 copy
        if figures[PACKED_PLAIN_BYTES]:  # read on every run: held plain too
            assert figures[PACKED_PLAIN_BYTES] == weights and not figures[RELEASED_BYTES]
            assert figures[CONSTANT_BYTES] == weights + packed + 2 * bias
        else:  # freed at load (tests/lowering/test_released_constants.py)
            assert figures[RELEASED_BYTES] == weights + bias
            assert figures[CONSTANT_BYTES] == packed + bias
    assert packed_somewhere or not runs_vnni()


QMATMUL = """
func.func @f(%a: tensor<4x64xui8>) -> tensor<4x32xui8> {{
{weights}
  %c = nn.constant dense<{bias}> : tensor<32xi32>
  %y = nn.qmatmul %a, %m, %c {{a_scale = dense<0.05> : tensor<f32>, a_zero_point = dense<5> : tensor<ui8>, b_scale = dense<[{scales}]> : tensor<32xf32>, b_zero_point = dense<0> : tensor<32xi8>, y_scale = dense<0.5> : tensor<f32>, y_zero_point = dense<3> : tensor<ui8>}} : (tensor<4x64xui8>, tensor<64x32xi8>, tensor<32xi32>) -> tensor<4x32xui8>
  func.return %y : tensor<4x32xui8>
}}
"""


@pytest.mark.parametrize("transposed", [False, True], ids=["constant", "transposed"])
def test_qmatmul_weights_packed_everywhere(transposed: bool) -> None:
    """nn.qmatmul's b, a constant or a constant expression (a Gemm's transposed weights):
    claimed where oneDNN's int8 matmul runs, results unchanged."""
    rng = np.random.default_rng(5)
    b = rng.integers(-128, 128, (64, 32))
    weights = (
        f"  %t = nn.constant dense<{json.dumps(b.T.tolist())}> : tensor<32x64xi8>\n"
        "  %m = nn.transpose %t perm [1, 0] : tensor<32x64xi8> -> tensor<64x32xi8>"
        if transposed
        else f"  %m = nn.constant dense<{json.dumps(b.tolist())}> : tensor<64x32xi8>"
    )
    module = parse(
        QMATMUL.format(
            weights=weights,
            bias=json.dumps(rng.integers(-500, 500, 32).tolist()),
            scales=", ".join(f"{v:.4f}" for v in rng.uniform(0.001, 0.01, 32)),
        )
    )
    inputs = [rng.integers(0, 256, (4, 64)).astype(np.uint8)]
    packed_somewhere = False
    for target, padding, compiled, got in everywhere(module, inputs):
        plain = _without_claims(compiled)
        np.testing.assert_array_equal(got[0], Interpreter(plain).run(inputs)[0])
        kernels = {k.kernel_name.data for op in compiled.walk() if (k := kernel_of(op))}
        claims = _claims(compiled)
        assert bool(claims) == ("qmatmul_onednn" in kernels), (target, padding)
        if claims:
            packed_somewhere = True
            ((claim, plain_bytes),) = claims
            assert claim.kernel == "qmatmul_onednn" and plain_bytes == 64 * 32
            # oneDNN's blocked int8 matmul weights pad N = 32 to 64, and a's zero point adds
            # compensation: 3 int32 per padded column (packed_sizes)
            padded, compensation = 64 * 64, 3 * 4 * 64
            assert (claim.bytes, claim.compensation) == (padded + compensation, compensation)
            function = next(op for op in compiled.walk() if op.name == "func.func")
            figures = {
                k: v.value.data for k, v in function.attributes.items() if hasattr(v, "value")
            }
            # the plain weights are held too (read on every run), nothing freed; the bias
            # twice (plain and the kernel's prescaled f32 copy)
            assert figures[PACKED_PLAIN_BYTES] == plain_bytes and figures[RELEASED_BYTES] == 0
            assert figures[CONSTANT_BYTES] == plain_bytes + claim.bytes + 2 * 4 * 32
    assert packed_somewhere or not runs_vnni()


@ONEDNN_INT8
def test_claim_is_the_size_of_the_packed_weights() -> None:
    """The claim is the bytes oneDNN's reorder writes (dnnl_memory_desc_get_size of the
    primitive's weights descriptor, compensation included), as the kernel packs them."""
    module = compile_module(parse(qconv("ui8", 10, 1)), "host", True, DEFAULT_PIPELINE)
    conv = next(op for op in module.walk() if isinstance(op, nn.QConv2dOp))
    claim = packed_of(defining_op(conv.w))  # type: ignore[arg-type]
    bound = prepare_qconv(conv)
    weights = np.zeros((32, 16, 3, 3), np.int8)
    bound.kernel.pack(weights, np.zeros(32, np.int32))
    assert claim is not None and claim.bytes == bound.kernel.arrays[b.DNNL_ARG_WEIGHTS].nbytes
    assert claim.compensation == claim.bytes - 32 * 16 * 9
    # the source zero point's int32 per output channel, sized 3 times by oneDNN (packed_sizes)
    assert claim.compensation == 3 * 4 * 32


@ONEDNN_INT8
@pytest.mark.parametrize("edit", ["bytes = {n}", 'kernel = "qconv2d_add_onednn"'])
def test_wrong_claim_refused_with_location(edit: str) -> None:
    """A hand-edited claim (another size, another kernel) is refused when the kernel is
    bound, located at the op reading the constant, by the interpreter and generated code."""
    module = compile_module(parse(qconv("ui8", 10, 1)), "host", True, DEFAULT_PIPELINE)
    ((claim, _),) = _claims(module)
    text = str(module)
    if "{n}" in edit:
        wrong = text.replace(f"bytes = {claim.bytes}", edit.format(n=claim.bytes - 1))
    else:
        wrong = text.replace('kernel = "qconv2d_onednn", bytes', edit + ", bytes")
    assert wrong != text
    hostile = parse(wrong)
    inputs = _inputs(hostile, "ui8")
    for run in (Interpreter(hostile).run, lambda i: run_generated(hostile, i)):
        with pytest.raises(DiagnosticError, match="packs it into"):
            run(inputs)


def test_malformed_claim_is_located() -> None:
    module = parse(qconv("ui8", 10, 1))
    constant = next(op for op in module.walk() if isinstance(op, nn.ConstantOp))
    constant.attributes[PACKED_ATTR] = constant.attributes.get("nothing", None) or (
        Packed("k", 1, 2).attribute()
    )
    with pytest.raises(DiagnosticError, match="compensation <= bytes"):
        packed_of(constant)


def test_claim_no_reader_makes_is_refused_by_the_plan() -> None:
    """A claim on weights that the reference kernel reads (hand-edited): plan-memory refuses
    it, located at the constant, rather than count bytes no kernel packs."""
    module = compile_module(parse(qconv("ui8", 10, 1)), "ref", True)
    constant = next(op for op in module.walk() if isinstance(op, nn.ConstantOp))
    constant.attributes[PACKED_ATTR] = Packed("qconv2d_onednn", 5000, 384).attribute()
    expected = r"<test>:2:3: error: plan-memory: packed for qconv2d_onednn .* of qconv2d_ref"
    with pytest.raises(UserError, match=expected):
        compile_module(module, "ref", True, "bufferize,plan-memory")


DISPATCHED_QCONV = """\
func.func @f(%x: tensor<1x16x6x6xui8>) -> tensor<1x32x6x6xui8> {
  %w = nn.constant dense<3> : tensor<32x16x3x3xi8>
  %b = nn.constant dense<7> : tensor<32xi32>
  %x_1 = layout.reorder %x : tensor<1x16x6x6xui8> -> tensor<1x16x6x6xui8, #layout.layout<"NHWC">>
  %y = nn.qconv2d %x_1, %w, %b strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 \
{kernel = #nn.kernel<"KERNEL", operands = ["NHWC", "", ""], results = ["NHWC"]>, \
w_scale = dense<5.000000e-01> : tensor<32xf32>, w_zero_point = dense<0> : tensor<32xi8>, \
x_scale = dense<5.000000e-01> : tensor<f32>, x_zero_point = dense<10> : tensor<ui8>, \
y_scale = dense<2.000000e+00> : tensor<f32>, y_zero_point = dense<10> : tensor<ui8>} : \
(tensor<1x16x6x6xui8, #layout.layout<"NHWC">>, tensor<32x16x3x3xi8>, tensor<32xi32>) \
-> tensor<1x32x6x6xui8, #layout.layout<"NHWC">>
  %y_1 = layout.reorder %y : tensor<1x32x6x6xui8, #layout.layout<"NHWC">> -> tensor<1x32x6x6xui8>
  func.return %y_1 : tensor<1x32x6x6xui8>
}
"""


def test_a_kernel_of_another_op_makes_no_claim() -> None:
    """A qconv2d hand-edited to the matmul's kernel: fold-constants records no claim (the
    kernel refuses it, located, when it is bound), rather than fail inside the kernel."""
    module = parse(DISPATCHED_QCONV.replace("KERNEL", "qmatmul_onednn"))
    record_packing(module)
    assert _claims(module) == []


@pytest.mark.parametrize("isa", ["AVX2", ""])
def test_no_claim_where_onednn_has_no_fast_kernel_here(tmp_path: Path, isa: str) -> None:
    """IR dispatched to qconv2d_onednn on a machine (here: ONEDNN_MAX_CPU_ISA=AVX2) where
    oneDNN has no exact fast int8 convolution: fold-constants leaves the weights plain and
    says so (a remark)."""
    source = tmp_path / "q.mlir"
    source.write_text(DISPATCHED_QCONV.replace("KERNEL", "qconv2d_onednn"))
    done = subprocess.run(
        [sys.executable, "-m", "nnlayout.tools.opt", str(source), "-p", "fold-constants"]
        + ["--remarks"],
        capture_output=True,
        text=True,
        env={**os.environ, "ONEDNN_MAX_CPU_ISA": isa},
    )
    assert done.returncode == 0, done.stderr
    packed = isa == "" and runs_vnni()
    assert (PACKED_ATTR in done.stdout) == packed, done.stdout
    remark = "weights stay plain: qconv2d_onednn packs none for this op here"
    assert (remark in done.stderr) == (not packed), done.stderr


QMATMUL_ZERO_POINTS = """\
func.func @f(%s: tensor<1x3xui8>) -> tensor<1x2xi8> {
  %m = nn.constant dense<3> : tensor<3x2xi8>
  %c = nn.constant dense<7> : tensor<2xi32>
  %mm = nn.qmatmul %s, %m, %c {kernel = #nn.kernel<"qmatmul_onednn", operands = \
["", "", ""], results = [""]>, a_scale = dense<1.0> : tensor<f32>, a_zero_point = \
dense<0> : tensor<ui8>, b_scale = dense<[0.5, 0.25]> : tensor<2xf32>, b_zero_point = \
dense<[0, ZP]> : tensor<2xi8>, y_scale = dense<1.0> : tensor<f32>, y_zero_point = \
dense<0> : tensor<i8>} : (tensor<1x3xui8>, tensor<3x2xi8>, tensor<2xi32>) -> tensor<1x2xi8>
  func.return %mm : tensor<1x2xi8>
}
"""


@pytest.mark.parametrize("zero_point", [5, 0])
def test_no_claim_for_an_op_the_kernel_refuses(zero_point: int) -> None:
    """A qmatmul whose per-axis b zero points are not all 0 (qmatmul_onednn refuses it):
    no claim; with zero points 0 the same op is claimed where oneDNN runs int8 fast."""
    module = parse(QMATMUL_ZERO_POINTS.replace("ZP", str(zero_point)))
    record_packing(module)
    assert bool(_claims(module)) == (zero_point == 0 and runs_vnni())


def _claim_on(module: ModuleOp, index: int, claim: Packed) -> None:
    """Puts `claim` on the constant the qconv2d in `module` reads as operand `index`."""
    conv = next(op for op in module.walk() if isinstance(op, nn.QConv2dOp))
    constant = defining_op(conv.operands[index])
    assert constant is not None
    constant.attributes[PACKED_ATTR] = claim.attribute()


@ONEDNN_INT8
@pytest.mark.parametrize(
    ("index", "expected"), [(2, "operand 2, and qconv2d_onednn does not pack it"), (1, "into")]
)
def test_claim_on_an_operand_the_kernel_does_not_pack_is_refused_by_the_plan(
    index: int, expected: str
) -> None:
    """A claim on the bias (operand 2, which the kernel reads plain), or on the weights in
    another size, with the reader's kernel named: refused by plan-memory, not counted."""
    module = compile_module(parse(qconv("ui8", 10, 1)), "host", True)
    _claim_on(module, index, Packed("qconv2d_onednn", 99999999, 0))
    with pytest.raises(UserError, match=f"plan-memory: packed for qconv2d_onednn .*{expected}"):
        compile_module(module, "host", True, "bufferize,plan-memory")


@ONEDNN_INT8
def test_claim_on_an_operand_the_kernel_does_not_pack_is_refused_when_bound() -> None:
    """The same claim on the bias put after planning: the kernel refuses it when bound."""
    module = compile_module(parse(qconv("ui8", 10, 1)), "host", True, DEFAULT_PIPELINE)
    _claim_on(module, 2, Packed("qconv2d_onednn", 99999999, 0))
    inputs = _inputs(module, "ui8")
    for run in (Interpreter(module).run, lambda i: run_generated(module, i)):
        with pytest.raises(DiagnosticError, match="operand 2 .* does not pack it"):
            run(inputs)


@ONEDNN_INT8
def test_constant_bytes_are_what_the_loaded_program_holds() -> None:
    """The interpreter holds after a run each constant's array (the claimed weights' plain
    one too), the kernel's packed copy and its prescaled bias: `nnlayout.constant_bytes`,
    what a generated module holds (the packed copy and the bias's), and
    `nnlayout.released_bytes`, the plain arrays a generated module frees at load."""
    module = compile_module(parse(qconv("ui8", 10, 1)), "host", True, DEFAULT_PIPELINE)
    interpreter = Interpreter(module)
    interpreter.run(_inputs(module, "ui8"))
    plain = sum(np.asarray(a).nbytes for a in interpreter._constants.values())
    packed = sum(
        bound.prepared.kernel.arrays[arg].nbytes
        for bound in interpreter._bound.values()
        if hasattr(getattr(bound, "prepared", None), "kernel")
        for arg in (b.DNNL_ARG_WEIGHTS, b.DNNL_ARG_BIAS)
    )
    function = next(op for op in module.walk() if op.name == "func.func")
    figures = {
        name: function.attributes[name].value.data for name in (CONSTANT_BYTES, RELEASED_BYTES)
    }  # type: ignore[attr-defined]
    assert packed > 0 and figures[RELEASED_BYTES] == plain
    assert figures[CONSTANT_BYTES] + figures[RELEASED_BYTES] == plain + packed
