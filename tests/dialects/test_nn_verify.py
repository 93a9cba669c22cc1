"""Builders and verifiers reject bad ops with the documented messages, and nnlayout-opt turns
every kind of bad input into one short located error (exit status 1, no traceback)."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from xdsl.dialects.builtin import (
    DenseIntOrFPElementsAttr,
    FloatAttr,
    MemRefType,
    TensorType,
    f16,
    f32,
    i16,
)
from xdsl.ir import Attribute, SSAValue
from xdsl.utils.exceptions import VerifyException
from xdsl.utils.test_value import create_ssa_value

from nnlayout.dialects import nn
from nnlayout.dialects.layout import LayoutAttr, ReorderOp, StorageAttr
from nnlayout.tests.helpers import run_in_process
from nnlayout.tools.driver import run_tool
from nnlayout.tools.opt import main


def v(*shape: int, element: Attribute = f32, encoding: Attribute | None = None) -> SSAValue:
    if encoding is None:
        return create_ssa_value(TensorType(element, shape))
    return create_ssa_value(TensorType(element, shape, encoding))


X = (1, 3, 8, 8)

# (builder, the start of the message it raises)
BUILDER_ERRORS: dict[str, tuple[Callable[[], object], str]] = {
    "conv-weight-rank": (
        lambda: nn.Conv2dOp(v(*X), v(4, 3, 3)),
        "nn.conv2d: weight must have rank 4, got 3 ([4, 3, 3])",
    ),
    "conv-input-rank": (
        lambda: nn.Conv2dOp(v(3, 8, 8), v(4, 3, 3, 3)),
        "nn.conv2d: input must have rank 4, got 3 ([3, 8, 8])",
    ),
    "conv-strides-length": (
        lambda: nn.Conv2dOp(v(*X), v(4, 3, 3, 3), strides=(1,)),
        "nn.conv2d: strides needs 2 values, got [1]",
    ),
    "conv-zero-stride": (
        lambda: nn.Conv2dOp(v(*X), v(4, 3, 3, 3), strides=(1, 0)),
        "nn.conv2d: strides must be positive, got [1, 0]",
    ),
    "conv-negative-pads": (
        lambda: nn.Conv2dOp(v(*X), v(4, 3, 3, 3), pads=(-1, 0, 0, 0)),
        "nn.conv2d: pads must be non-negative, got [-1, 0, 0, 0]",
    ),
    "conv-zero-dilation": (
        lambda: nn.Conv2dOp(v(*X), v(4, 3, 3, 3), dilations=(0, 1)),
        "nn.conv2d: dilations must be positive, got [0, 1]",
    ),
    "conv-zero-groups": (
        lambda: nn.Conv2dOp(v(*X), v(4, 3, 3, 3), groups=0),
        "nn.conv2d: groups must be positive, got 0",
    ),
    "conv-groups": (
        lambda: nn.Conv2dOp(v(*X), v(4, 1, 3, 3), groups=2),
        "nn.conv2d: input has 3 channels, not divisible by groups=2",
    ),
    "conv-channels": (
        lambda: nn.Conv2dOp(v(*X), v(4, 4, 3, 3)),
        "nn.conv2d: input has 3 channels but weight expects 4 (groups=1)",
    ),
    "conv-output-groups": (
        lambda: nn.Conv2dOp(v(1, 4, 8, 8), v(3, 2, 3, 3), groups=2),
        "nn.conv2d: weight has 3 output channels, not divisible by groups=2",
    ),
    "conv-bias": (
        lambda: nn.Conv2dOp(v(*X), v(4, 3, 3, 3), v(3)),
        "nn.conv2d: bias must have shape [4], got [3]",
    ),
    "conv-window": (
        lambda: nn.Conv2dOp(v(*X), v(4, 3, 9, 3)),
        "nn.conv2d: window of extent 9 (kernel 9, dilation 1) does not fit the "
        "padded height size 8",
    ),
    "convt-output-padding-length": (
        lambda: nn.ConvTranspose2dOp(v(*X), v(3, 2, 3, 3), output_padding=(0,)),
        "nn.conv_transpose2d: output_padding needs 2 values, got [0]",
    ),
    "convt-negative-output-padding": (
        lambda: nn.ConvTranspose2dOp(v(*X), v(3, 2, 3, 3), output_padding=(0, -1)),
        "nn.conv_transpose2d: output_padding must be non-negative, got [0, -1]",
    ),
    "convt-output-padding": (
        lambda: nn.ConvTranspose2dOp(v(*X), v(3, 2, 3, 3), strides=(2, 2), output_padding=(2, 0)),
        "nn.conv_transpose2d: output_padding [2, 0] must be smaller than the stride or the "
        "dilation on each axis",
    ),
    "convt-zero-groups": (
        lambda: nn.ConvTranspose2dOp(v(*X), v(3, 2, 3, 3), groups=0),
        "nn.conv_transpose2d: groups must be positive, got 0",
    ),
    "convt-channels": (
        lambda: nn.ConvTranspose2dOp(v(*X), v(4, 2, 3, 3)),
        "nn.conv_transpose2d: input has 3 channels but weight expects 4",
    ),
    "convt-groups": (
        lambda: nn.ConvTranspose2dOp(v(*X), v(3, 2, 3, 3), groups=2),
        "nn.conv_transpose2d: input has 3 channels, not divisible by groups=2",
    ),
    "convt-bias": (
        lambda: nn.ConvTranspose2dOp(v(*X), v(3, 2, 3, 3), v(3)),
        "nn.conv_transpose2d: bias must have shape [2], got [3]",
    ),
    "convt-no-output": (
        lambda: nn.ConvTranspose2dOp(v(1, 3, 1, 1), v(3, 2, 1, 1), pads=(0, 1, 0, 0)),
        "nn.conv_transpose2d: pads [0, 1, 0, 0] leave no output along spatial axis 1",
    ),
    "matmul-rank": (lambda: nn.MatmulOp(v(), v(3)), "nn.matmul: operands must have rank >= 1"),
    "matmul-k": (
        lambda: nn.MatmulOp(v(2, 3), v(4, 2)),
        "nn.matmul: contraction sizes differ: lhs [2, 3] has K=3, rhs [4, 2] has K=4",
    ),
    "matmul-batch": (
        lambda: nn.MatmulOp(v(2, 2, 3), v(3, 3, 4)),
        "nn.matmul: shapes [2], [3] do not broadcast",
    ),
    "gemm-rank": (lambda: nn.GemmOp(v(3), v(3, 4)), "nn.gemm: a must have rank 2, got 1 ([3])"),
    "gemm-k": (
        lambda: nn.GemmOp(v(2, 3), v(2, 4), trans_a=True, trans_b=True),
        "nn.gemm: contraction sizes differ: a gives K=2, b gives K=4 (trans_a=1, trans_b=1)",
    ),
    "gemm-c": (
        lambda: nn.GemmOp(v(1, 3), v(3, 4), v(2, 1)),
        "nn.gemm: c of shape [2, 1] does not broadcast to the result [1, 4]",
    ),
    "add-broadcast": (
        lambda: nn.AddOp(v(2, 3), v(3, 2)),
        "nn.add: shapes [2, 3], [3, 2] do not broadcast (dimension 0 of the "
        "broadcast result has sizes [2, 3])",
    ),
    "sum-empty": (lambda: nn.SumOp([]), "nn.sum: needs at least one input"),
    "clip-bounds": (
        lambda: nn.ClipOp(v(4), min=1.0, max=-1.0),
        "nn.clip: min 1.0 is greater than max -1.0",
    ),
    "batch-norm-rank": (
        lambda: nn.BatchNormOp(v(3), v(3), v(3), v(3), v(3)),
        "nn.batch_norm: input must have rank >= 2, got [3]",
    ),
    "batch-norm-params": (
        lambda: nn.BatchNormOp(v(*X), v(3), v(4), v(3), v(3)),
        "nn.batch_norm: bias must have shape [3] (the input's channels), got [4]",
    ),
    "batch-norm-epsilon": (
        lambda: nn.BatchNormOp(v(*X), v(3), v(3), v(3), v(3), epsilon=-1.0),
        "nn.batch_norm: epsilon must be non-negative, got -1.0",
    ),
    "pool-kernel-length": (
        lambda: nn.MaxPool2dOp(v(*X), kernel=(2,)),
        "nn.max_pool2d: kernel needs 2 values, got [2]",
    ),
    "pool-zero-kernel": (
        lambda: nn.AvgPool2dOp(v(*X), kernel=(2, 0)),
        "nn.avg_pool2d: kernel must be positive, got [2, 0]",
    ),
    "pool-pads": (
        lambda: nn.MaxPool2dOp(v(*X), kernel=(2, 2), pads=(2, 0, 0, 0)),
        "nn.max_pool2d: pads [2, 0, 0, 0] must be smaller than the window extent 2 "
        "(kernel 2, dilation 1) along spatial axis 0",
    ),
    "pool-rank": (
        lambda: nn.MaxPool2dOp(v(3, 8, 8), kernel=(2, 2)),
        "nn.max_pool2d: input must have rank 4, got 3 ([3, 8, 8])",
    ),
    "global-pool-rank": (
        lambda: nn.GlobalAvgPoolOp(v(2, 3)),
        "nn.global_avg_pool: input must have rank >= 3 (N, C, spatial...), got [2, 3]",
    ),
    "concat-empty": (lambda: nn.ConcatOp([], 0), "nn.concat: needs at least one input"),
    "concat-rank": (
        lambda: nn.ConcatOp([v(2, 3), v(2, 3, 1)], 0),
        "nn.concat: input 1 has rank 3 ([2, 3, 1]), but input 0 has rank 2 ([2, 3])",
    ),
    "concat-shape": (
        lambda: nn.ConcatOp([v(2, 3), v(2, 4)], 0),
        "nn.concat: input 1 has shape [2, 4], which differs from input 0 [2, 3] "
        "outside the concatenation axis 0",
    ),
    "concat-axis": (
        lambda: nn.ConcatOp([v(2, 3)], -3),
        "nn.concat: axis -3 is out of range for rank 2 (expected -2 <= axis < 2)",
    ),
    "softmax-axis": (
        lambda: nn.SoftmaxOp(v(2, 3), 2),
        "nn.softmax: axis 2 is out of range for rank 2 (expected -2 <= axis < 2)",
    ),
    "flatten-axis": (
        lambda: nn.FlattenOp(v(2, 3), 3),
        "nn.flatten: axis 3 is out of range for rank 2 (expected -2 <= axis < 3)",
    ),
    "flatten-negative-axis": (
        lambda: nn.FlattenOp(v(2, 3), -3),
        "nn.flatten: axis -3 is out of range for rank 2",
    ),
    "reshape-count": (
        lambda: nn.ReshapeOp(v(2, 3), (4, 2)),
        "nn.reshape: cannot reshape [2, 3] (6 elements) to [4, 2] (8 elements)",
    ),
    "transpose-perm": (
        lambda: nn.TransposeOp(v(2, 3, 4), (0, 2)),
        "nn.transpose: perm [0, 2] is not a permutation of 0..2",
    ),
    "prelu-widens-input": (
        lambda: nn.PReluOp(v(1, 4, 1, 1), v(4, 3, 3)),
        "nn.prelu: slope of shape [4, 3, 3] does not broadcast to the input's shape "
        "[1, 4, 1, 1] (PRelu broadcasts the slope only)",
    ),
    "max-no-broadcast": (
        lambda: nn.MaxOp(v(2, 3), v(4, 3)),
        "nn.max: shapes [2, 3], [4, 3] do not broadcast",
    ),
    # A pattern written for bufferized IR, given a memref: a bare AssertionError before.
    "add-memref": (
        lambda: nn.AddOp(create_ssa_value(MemRefType(f32, (2, 3))), v(2, 3)),
        "nn ops take tensors; got a value of type memref<2x3xf32>",
    ),
    "conv-memref": (
        lambda: nn.Conv2dOp(v(*X), create_ssa_value(MemRefType(f32, (4, 3, 3, 3)))),
        "nn ops take tensors; got a value of type memref<4x3x3x3xf32>",
    ),
}


@pytest.mark.parametrize("case", BUILDER_ERRORS.values(), ids=BUILDER_ERRORS.keys())
def test_builder_errors(case: tuple[Callable[[], object], str]) -> None:
    build, message = case
    with pytest.raises(VerifyException) as caught:
        build()
    assert str(caught.value).startswith(message)


def verify_message(op: nn.NNOp | ReorderOp) -> str:
    with pytest.raises(VerifyException) as caught:
        op.verify()
    return str(caught.value)


def test_verifier_checks_types() -> None:
    """Ops built with a wrong result type (as a parser would) fail verification."""
    conv = nn.Conv2dOp.create(
        operands=[v(*X), v(4, 3, 3, 3)],
        result_types=[TensorType(f32, (1, 4, 8, 8))],
        properties=nn.Conv2dOp(v(*X), v(4, 3, 3, 3)).properties,
    )
    assert (
        "nn.conv2d: result shape [1, 4, 8, 8] does not match the inferred shape "
        "[1, 4, 6, 6]" in verify_message(conv)
    )
    mixed = nn.AddOp.create(
        operands=[v(2), v(2, element=f16)], result_types=[TensorType(f32, (2,))]
    )
    assert "nn.add: operand 1 has element type f16, expected f32 like operand 0" in verify_message(
        mixed
    )
    integer = nn.NegOp.create(operands=[v(2, element=i16)], result_types=[TensorType(i16, (2,))])
    assert (
        "nn.neg: operand 0 has element type i16; nn ops compute on bf16, f16, f32 or f64"
        in verify_message(integer)
    )
    dynamic = nn.ReluOp.create(operands=[v(-1, 2)], result_types=[TensorType(f32, (-1, 2))])
    assert "nn.relu: operand 0 has a dynamic dimension" in verify_message(dynamic)
    empty = nn.ReluOp.create(operands=[v(0, 2)], result_types=[TensorType(f32, (0, 2))])
    assert "nn.relu: operand 0 has a zero-size dimension" in verify_message(empty)


def test_verifier_checks_encodings() -> None:
    bad_layout = v(2, 3, encoding=LayoutAttr("NCHW"))
    assert (
        "nn.relu: operand 0: layout 'NCHW' has 4 axes but the tensor has rank 2"
        in verify_message(nn.ReluOp.create(operands=[bad_layout], result_types=[bad_layout.type]))
    )
    csr = v(2, 3, 4, encoding=StorageAttr("csr"))
    reorder = ReorderOp(v(2, 3, 4), csr.type)  # type: ignore[arg-type]
    assert "layout.reorder: result: CSR storage needs a 2-D tensor, got rank 3" in verify_message(
        reorder
    )
    assert "layout.reorder: logical shape changes from [2, 3] to [3, 2]" in verify_message(
        ReorderOp(v(2, 3), TensorType(f32, (3, 2)))
    )
    assert "layout.reorder: element type changes from f32 to f16" in verify_message(
        ReorderOp(v(2, 3), TensorType(f16, (2, 3)))
    )


def test_constant_verifier() -> None:
    result_type = TensorType(f32, (2,))
    assert (
        'nn.constant: needs exactly one of an inline dense<...> value or external "name"'
        in verify_message(nn.ConstantOp(result_type))
    )
    value = DenseIntOrFPElementsAttr.from_list(TensorType(f32, (3,)), [1.0, 2.0, 3.0])
    assert (
        "nn.constant: value of type tensor<3xf32> does not match the result type "
        "tensor<2xf32>" in verify_message(nn.ConstantOp(result_type, value=value))
    )


def test_constant_from_array_keeps_the_shape() -> None:
    """A 0-d array is a rank-0 constant (it was tensor<1xf32>: np.ascontiguousarray makes
    a 0-d array 1-d), so `x * scalar` keeps x's rank; a transposed array keeps its values."""
    scalar = nn.ConstantOp.from_array(np.array(2.5))
    assert scalar.output.type == TensorType(f32, ())
    assert scalar.inline_array().shape == ()
    assert nn.MulOp(v(), scalar.output).output.type == TensorType(f32, ())
    transposed = np.arange(6.0).reshape(3, 2).T
    np.testing.assert_array_equal(nn.ConstantOp.from_array(transposed).inline_array(), transposed)


# ----------------------------------------------------------------- the CLI
CONV = (
    "func.func @f(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {\n"
    "  %0 = nn.conv2d %x, %w strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1] groups 1"
    " : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<RESULTxf32>\n"
    "  func.return\n}\n"
)


# (input, the text the error points at (its first occurrence), the message)
CLI_ERRORS = {
    "random-text": ("random words {{ ]]", "random", "Operation random is not registered"),
    "unknown-op": (
        "func.func @f(%x: tensor<2xf32>) {\n  %0 = nn.frobnicate %x : tensor<2xf32>\n"
        "  func.return\n}\n",
        "nn.frobnicate",
        "Operation nn.frobnicate is not registered",
    ),
    "conv-shape-mismatch": (
        CONV.replace("RESULT", "1x4x8x8"),
        "%0",
        "nn.conv2d: result shape [1, 4, 8, 8] does not match the inferred shape [1, 4, 6, 6]",
    ),
    "bad-layout": (
        'func.func @f(%x: tensor<1x3x8x8xf32, #layout.layout<"NCHW16x">>) {\n  func.return\n}\n',
        '"NCHW16x"',
        "layout 'NCHW16x': block '16x' splits axis 'X', which the layout does not have",
    ),
    "bad-storage": (
        "func.func @f(%x: tensor<4x4xf32>) {\n  %0 = layout.reorder %x : "
        'tensor<4x4xf32> -> tensor<4x4xf32, #layout.storage<"coo">>\n'
        "  func.return\n}\n",
        '"coo"',
        "unknown storage 'coo'; expected one of dense, csr",
    ),
    "verifier-after-parse": (
        "func.func @f(%x: tensor<2x3xf32>) {\n"
        "  %0 = nn.softmax %x axis 2 : tensor<2x3xf32>\n  func.return\n}\n",
        "%0",
        "nn.softmax: axis 2 is out of range for rank 2 (expected -2 <= axis < 2)",
    ),
    "layout-not-a-string": (
        "func.func @f(%x: tensor<2x3xf32, #layout.layout<NC>>) {\n  func.return\n}\n",
        "NC>",
        'string literal expected for the layout, e.g. "NCHW16c"',
    ),
    "not-a-tensor": (
        'func.func @f(%x: memref<4xf32>) {\n  %0 = "nn.relu"(%x) : '
        "(memref<4xf32>) -> memref<4xf32>\n  func.return\n}\n",
        "%0",
        "operand 'input' at position 0 does not verify: memref<4xf32> should be "
        "of base attribute tensor",
    ),
    "integer-overflow": (
        CONV.replace("[1, 1] pads", "[99999999999999999999, 1] pads"),
        "%0",
        "an integer does not fit its type (argument out of range)",
    ),
    "constant-literal-shape": (
        "func.func @f() {\n  %0 = nn.constant dense<[1.0, 2.0]> : "
        "tensor<3xf32>\n  func.return\n}\n",
        "dense",
        "Shape mismatch in dense literal. Expected [3] shape from the type, but got [2] shape.",
    ),
    "undefined-value": (
        "func.func @f(%x: tensor<2xf32>) {\n  %0 = nn.relu %x : tensor<2xf32>\n"
        "  %1 = nn.add %0, %y : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>\n"
        "  func.return\n}\n",
        "%1",
        "values used but not defined: [%y]",
    ),
    "bad-constant": (
        "func.func @f() {\n  %0 = nn.constant 1.0 : f32\n  func.return\n}\n",
        "1.0",
        'nn.constant: expected dense<...> : tensor<...> or external "name"',
    ),
}


@pytest.mark.parametrize("case", CLI_ERRORS.values(), ids=CLI_ERRORS.keys())
def test_cli_bad_input(
    case: tuple[str, str, str],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    text, culprit, message = case
    line = next(i for i, content in enumerate(text.splitlines(), 1) if culprit in content)
    column = text.splitlines()[line - 1].index(culprit) + 1
    monkeypatch.chdir(tmp_path)
    Path("bad.mlir").write_text(text)
    status, out, err = run_in_process("nnlayout-opt", ["bad.mlir"], capsys, monkeypatch)
    assert status == 1
    assert out == ""
    # One diagnostic: file:line:col and the message, the source line, a caret at the column.
    assert err.splitlines() == [
        f"bad.mlir:{line}:{column}: error: {message}",
        text.splitlines()[line - 1],
        " " * (column - 1) + "^",
    ]


def test_cli_unclosed_region(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    Path("open.mlir").write_text("func.func @f() {\n  func.return\n")
    status, out, err = run_in_process("nnlayout-opt", ["open.mlir"], capsys, monkeypatch)
    assert (status, out) == (1, "")
    assert err == (
        "open.mlir:3:1: error: expected '}' to close the region (or a block label such as ^bb1:)\n"
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["-p", "no-such-pass"], "error: unknown pass 'no-such-pass'; available passes: "),
        (
            ["-p", "select-dispach"],
            "error: unknown pass 'select-dispach' (did you mean "
            "'select-dispatch'?); available passes: ",
        ),
        (["-p", "cse{bogus=1}"], "error: pass 'cse' has no option 'bogus'; its options: none"),
        (
            ["-p", "select-dispatch{target=avx2 target=ref}"],
            "error: option 'target' of pass 'select-dispatch' is given twice",
        ),
        (
            ["-p", "plan-memory{report=1}"],
            "error: option 'report' of pass 'plan-memory' takes true or false, got '1'",
        ),
        (
            ["-p", "select-dispatch{target}"],
            "error: option 'target' of pass 'select-dispatch' takes a word or a quoted string, "
            "got no value",
        ),
        (
            ["-p", "cse{"],
            "error: bad pass pipeline 'cse{': Expected argument name here (at character 5)",
        ),
        (["missing.mlir"], "error: cannot read 'missing.mlir': "),
        (["."], "error: cannot read '.': "),
        (
            ["latin1.mlir"],
            "error: cannot read 'latin1.mlir': not UTF-8 text (byte 0xe9 at offset 6)",
        ),
    ],
    ids=[
        "unknown-pass",
        "misspelled-pass",
        "unknown-option",
        "option-twice",
        "option-type",
        "option-without-value",
        "bad-pipeline",
        "missing-file",
        "directory",
        "not-utf8",
    ],
)
def test_cli_bad_invocation(
    args: list[str],
    message: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(tmp_path)
    Path("ok.mlir").write_text("func.func @f() {\n  func.return\n}\n")
    Path("latin1.mlir").write_bytes(
        "// caf\xe9\nfunc.func @f() {\n  func.return\n}\n".encode("latin-1")
    )
    if args[0] == "-p":
        args = [*args, "ok.mlir"]
    status, out, err = run_in_process("nnlayout-opt", args, capsys, monkeypatch)
    assert status == 1
    assert out == ""
    assert err.startswith(message)
    assert len(err.splitlines()) == 1
    assert "Traceback" not in err


def test_cli_through_the_interpreter(tmp_path: Path) -> None:
    """The real entry point: exit status 1, the located message, nothing on stdout."""
    path = tmp_path / "conv.mlir"
    path.write_text(CONV.replace("RESULT", "1x4x8x8"))
    result = subprocess.run(
        [sys.executable, "-m", "nnlayout.tools.opt", str(path)],
        capture_output=True,
        text=True,
        env={"PATH": "/usr/bin:/bin"},
    )
    assert result.returncode == 1
    assert result.stdout == ""
    assert result.stderr.startswith(f"{path}:2:3: error: nn.conv2d: result shape")
    assert "Traceback" not in result.stderr


def test_traceback_on_request(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """--traceback lets the exception through, for debugging nnlayout itself."""
    monkeypatch.chdir(tmp_path)
    Path("bad.mlir").write_text(CONV.replace("RESULT", "1x4x8x8"))
    with pytest.raises(Exception, match="result shape"):
        run_tool(main, ["bad.mlir", "--traceback"])


def test_kernel_attr_wants_a_list_of_layouts() -> None:
    """A layout string where the list of them goes was iterated letter by letter: "layout
    '8': unexpected '8' at position 0"."""
    from nnlayout.dialects.kernel_attr import KernelAttr

    with pytest.raises(
        TypeError,
        match=r"operand_layouts must be a sequence of layout "
        r"strings, one per operand, e.g. \['NCHW8c'\]",
    ):
        KernelAttr("relu_mine", "NCHW8c", ["NCHW8c"])  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="result_layouts must be"):
        KernelAttr("relu_mine", ["*"], "*")  # type: ignore[arg-type]
    assert KernelAttr("relu_mine", ["NCHW8c"], ["NCHW8c"]).operands == ("NCHW8c",)


def test_fill_border_builder_names_a_buffer_that_is_not_a_memref() -> None:
    """It was a bare AssertionError."""
    from nnlayout.dialects.layout import FillBorderOp

    with pytest.raises(
        VerifyException,
        match=r"layout.fill_border: the buffer must be a "
        r"memref, got tensor<1x2x6x6xf32>",
    ):
        FillBorderOp(v(1, 2, 6, 6), (2, 3), (1, 1, 1, 1), 0.0)
    op = FillBorderOp(create_ssa_value(MemRefType(f32, (1, 2, 6, 6))), (2, 3), (1, 1, 1, 1), 0.0)
    op.verify()


def test_activations_check_their_attributes() -> None:
    """Gelu's builder rejects an approximation ONNX does not define; the verifiers reject
    non-finite parameters; a fused convolution's activation is verified as that op."""
    with pytest.raises(VerifyException, match='nn.gelu: approximate "erf" is not one of'):
        nn.GeluOp(v(2, 3), "erf")
    assert nn.GeluOp(v(2, 3), "tanh").uses_tanh and not nn.GeluOp(v(2, 3)).uses_tanh
    for op in (
        nn.HardSigmoidOp(v(2, 3), alpha=float("nan")),
        nn.EluOp(v(2, 3), alpha=float("inf")),
        nn.SeluOp(v(2, 3), gamma=float("-inf")),
    ):
        assert "must be finite" in verify_message(op)
    for op in (nn.HardSwishOp(v(2, 3)), nn.PowOp(v(2, 3), 2.0), nn.SwishOp(v(2, 3))):
        op.verify()
    conv = nn.Conv2dOp(v(*X), v(4, 3, 3, 3))
    hard = nn.HardSigmoidOp(conv.output, alpha=0.25, beta=0.5)
    fused = nn.FusedConv2dOp(conv, v(4), activation=hard)
    fused.verify()
    activation = fused.activation_op()
    assert isinstance(activation, nn.HardSigmoidOp) and activation.alpha.value.data == 0.25
    fused.properties["alpha"] = FloatAttr(float("nan"), f32)
    assert "activation nn.hardsigmoid: alpha must be finite" in verify_message(fused)
