"""fold-batch-norm and the constant expressions it leaves: results of the unoptimised program
(interpreter) against the folded one through the interpreter and the generated module, on every
target; what is not folded; and that folded weights are computed once, at load."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from xdsl.dialects import func, memref
from xdsl.dialects.builtin import ModuleOp, bf16
from xdsl.ir import Operation
from xdsl.rewriter import InsertPoint, Rewriter

from nnlayout.diagnostics import DiagnosticError
from nnlayout.dialects import nn
from nnlayout.dialects.compute import ComputeOp
from nnlayout.dialects.constant_expressions import is_constant_expression
from nnlayout.dialects.kernel_attr import kernel_of
from nnlayout.dialects.layout import FillBorderOp
from nnlayout.dialects.nn.base import bf16_dtype
from nnlayout.examples.make_models import build
from nnlayout.frontends.onnx import import_model
from nnlayout.ir.context import make_context
from nnlayout.ir.parser import parse_module
from nnlayout.kernels.onednn.binding import available as onednn_available
from nnlayout.kernels.reference import REFERENCE_KERNELS
from nnlayout.lowering.to_numpy import import_generated, run_generated, translate
from nnlayout.runtime.binding import evaluate_constants
from nnlayout.runtime.interpreter import Interpreter
from nnlayout.tests.helpers import (
    DEFAULT_PIPELINE,
    assert_same,
    compile_module,
    random_inputs,
)
from nnlayout.transforms.fold_batch_norm import fold_parameters
from nnlayout.transforms.plan_memory import plan_function

TARGETS = ["ref", "avx2", *(["onednn"] if onednn_available() else [])]
FOLD = "fold-batch-norm"
BUFFERIZED = (
    "fold-batch-norm,select-dispatch{{target={target} padding={padding}}},"
    "insert-layouts,propagate-layouts,fold-constants,bufferize"
)


def literal(array: np.ndarray) -> str:
    return json.dumps(array.round(4).tolist())


def conv_bn(
    *,
    groups: int = 1,
    bias: bool = True,
    external: bool = False,
    second_use: bool = False,
    channels: tuple[int, int] = (6, 10),
) -> tuple[str, dict[str, np.ndarray]]:
    """conv -> batch_norm -> relu on [1, C, 9, 9] (the weights external or inline), and the
    parameter arrays; with `second_use`, the conv's result is also returned."""
    cin, cout = channels
    rng = np.random.default_rng(groups * 10 + bias)
    arrays = {
        "w": rng.standard_normal((cout, cin // groups, 3, 3)).astype(np.float32),
        "scale": rng.standard_normal(cout).astype(np.float32),
        "beta": rng.standard_normal(cout).astype(np.float32),
        "mean": rng.standard_normal(cout).astype(np.float32),
        "var": (rng.random(cout) + 0.1).astype(np.float32),
    }
    if bias:
        arrays["b"] = rng.standard_normal(cout).astype(np.float32)
    arrays = {k: v.round(4) for k, v in arrays.items()}

    def constant(name: str) -> str:
        value = arrays[name]
        shape = "x".join(map(str, value.shape))
        body = f'external "{name}"' if external else f"dense<{literal(value)}>"
        return f"  %{name} = nn.constant {body} : tensor<{shape}xf32>"

    x, y, v = f"tensor<1x{cin}x9x9xf32>", f"tensor<1x{cout}x9x9xf32>", f"tensor<{cout}xf32>"
    w = f"tensor<{cout}x{cin // groups}x3x3xf32>"
    conv_bias, bias_type = (", %b", f", {v}") if bias else ("", "")
    results, result_types = ("%r, %c", f"{y}, {y}") if second_use else ("%r", y)
    body = "\n".join(
        [
            *(constant(name) for name in arrays),
            f"  %c = nn.conv2d %x, %w{conv_bias} strides [1, 1] pads [1, 1, 1, 1] dilations "
            f"[1, 1] groups {groups} : ({x}, {w}{bias_type}) -> {y}",
            f"  %n = nn.batch_norm %c, %scale, %beta, %mean, %var epsilon 1.0e-03 : "
            f"({y}, {v}, {v}, {v}, {v}) -> {y}",
            f"  %r = nn.relu %n : {y}",
            f"  func.return {results} : {result_types}",
        ]
    )
    function = f"func.func @f(%x: {x}) -> ({result_types}) {{\n{body}\n}}"
    if external:
        function = f'builtin.module attributes {{nn.weights = "w.npz"}} {{\n{function}\n}}'
    return function, arrays


def parse(text: str, name: str = "<test>") -> ModuleOp:
    return parse_module(make_context(), text, name)


def ops_named(module: ModuleOp, name: str) -> list[Operation]:
    return [op for op in module.walk() if op.name == name]


@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize(("groups", "channels"), [(1, (6, 10)), (2, (6, 10)), (6, (6, 6))])
def test_folds_and_keeps_results(groups: int, channels: tuple[int, int], bias: bool) -> None:
    module = parse(conv_bn(groups=groups, bias=bias, channels=channels)[0])
    folded = compile_module(module, "", False, FOLD)
    assert not ops_named(folded, "nn.batch_norm")
    (conv,) = ops_named(folded, "nn.conv2d")
    assert isinstance(conv, nn.Conv2dOp) and conv.groups.value.data == groups
    assert conv.output.name_hint == "c" and conv.bias is not None
    assert is_constant_expression(conv.weight.owner)  # type: ignore[arg-type]
    assert is_constant_expression(conv.bias.owner)  # type: ignore[arg-type]
    inputs = random_inputs(module)
    inputs[0][0, 0, 4, 4] = np.nan  # NaN still reaches the result
    expected = Interpreter(module).run(inputs)
    assert np.isnan(expected[0]).any()
    assert_same(expected, Interpreter(folded).run(inputs))


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("bias", [True, False])
def test_default_pipeline_and_generated_module(target: str, bias: bool) -> None:
    module = parse(conv_bn(bias=bias)[0])
    inputs = random_inputs(module, seed=1)
    expected = Interpreter(module).run(inputs)
    planned = compile_module(module, target, True, DEFAULT_PIPELINE)
    assert not ops_named(planned, "nn.batch_norm")
    # The folding arithmetic is evaluated at load: no kernel, no buffer, no nn.compute.
    computed = {op.inner.name for op in planned.walk() if isinstance(op, ComputeOp)}
    assert not computed & {"nn.mul", "nn.div", "nn.sqrt", "nn.sub", "nn.reshape"}
    assert all(kernel_of(op) is None for op in planned.walk() if is_constant_expression(op))
    assert_same(expected, Interpreter(planned).run(inputs))
    assert_same(expected, run_generated(planned, inputs))


def test_constant_expressions_take_no_time_or_memory() -> None:
    module = parse(conv_bn()[0])
    bufferized = compile_module(module, "avx2", True, BUFFERIZED)
    (function,) = bufferized.ops
    assert isinstance(function, func.FuncOp)
    ops = list(function.body.block.ops)
    timed = [
        op for op in ops if isinstance(op, ComputeOp | memref.CopyOp | FillBorderOp | func.ReturnOp)
    ]
    assert plan_function(function)[0].steps == len(timed)
    # One buffer per nn.compute (input reorder, conv, relu, output reorder), none for the
    # constant expressions.
    allocations = [op for op in ops if isinstance(op, memref.AllocOp)]
    assert len(allocations) == sum(isinstance(op, ComputeOp) for op in ops) == 4


@pytest.mark.parametrize("target", TARGETS)
def test_external_weights(target: str, tmp_path: Path) -> None:
    text, arrays = conv_bn(external=True)
    np.savez(tmp_path / "w.npz", **arrays)
    source = tmp_path / "model.mlir"
    source.write_text(text)
    module = parse(text, str(source))
    inputs = random_inputs(module, seed=2)
    expected = Interpreter(module, source_path=str(source)).run(inputs)
    planned = compile_module(module, target, True, DEFAULT_PIPELINE)
    assert not ops_named(planned, "nn.batch_norm")
    assert_same(expected, Interpreter(planned, source_path=str(source)).run(inputs))
    assert_same(expected, run_generated(planned, inputs, source_path=str(source)))


def test_missing_external_weight_is_located(tmp_path: Path) -> None:
    text, arrays = conv_bn(external=True)
    del arrays["var"]
    np.savez(tmp_path / "w.npz", **arrays)
    source = tmp_path / "model.mlir"
    source.write_text(text)
    planned = compile_module(parse(text, str(source)), "avx2", True, DEFAULT_PIPELINE)
    with pytest.raises(DiagnosticError, match='"var" is not in the weights file') as error:
        Interpreter(planned, source_path=str(source)).run(random_inputs(planned))
    assert isinstance(error.value.op, nn.ConstantOp)


@pytest.mark.parametrize("case", ["not_after_conv", "conv_used_twice"])
def test_left_alone(case: str) -> None:
    if case == "conv_used_twice":
        text = conv_bn(second_use=True)[0]
    else:  # the batch norm reads the relu of the convolution
        text = (
            conv_bn()[0]
            .replace("batch_norm %c,", "batch_norm %q,")
            .replace("  %n = ", "  %q = nn.relu %c : tensor<1x10x9x9xf32>\n  %n = ")
        )
    module = parse(text)
    folded = compile_module(module, "", False, FOLD)
    assert str(folded) == str(module)
    planned = compile_module(module, "avx2", True, DEFAULT_PIPELINE)
    assert len(ops_named(planned, "nn.batch_norm")) == 1
    inputs = random_inputs(module, seed=3)
    assert_same(Interpreter(module).run(inputs), run_generated(planned, inputs))


def test_folded_weights_are_computed_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The generated module (and the interpreter) compute W * s and (b - mean) * s + beta when
    loaded, not on each run."""
    multiplied: list[Operation] = []
    multiply = REFERENCE_KERNELS[nn.MulOp]

    def counting(op: Operation, operands: list[np.ndarray]) -> np.ndarray:
        multiplied.append(op)
        return multiply(op, operands)

    monkeypatch.setitem(REFERENCE_KERNELS, nn.MulOp, counting)
    module = parse(conv_bn()[0])
    planned = compile_module(module, "avx2", True, DEFAULT_PIPELINE)
    inputs = random_inputs(module)
    generated = import_generated(translate(planned, tmp_path / "model.py").code)
    assert len(multiplied) == 2  # the weight and the bias, at import
    code = (tmp_path / "model.py").read_text()
    assert "PROGRAM.constants[" in code and "nn.mul" not in code
    first = generated.run(*inputs)
    for _ in range(3):
        assert_same(first, generated.run(*inputs))
    assert len(multiplied) == 2
    interpreter = Interpreter(planned)
    for _ in range(3):
        assert_same(first, interpreter.run(inputs))
    assert len(multiplied) == 4


def test_small_resnet_has_no_batch_norm_left() -> None:
    module = import_model(build("resnet50", small=True)).module
    assert ops_named(module, "nn.batch_norm")
    planned = compile_module(module, "avx2", True, DEFAULT_PIPELINE)
    assert not ops_named(planned, "nn.batch_norm")


def test_a_bf16_norm_folds_in_f32_and_rounds_once() -> None:
    """A bf16 batch norm (after convert-to-bf16) gets its folded weight and bias computed in
    f32 from its (exactly widened) parameters and rounded to bf16 once, as its kernels compute:
    not s, its square root and each product rounded to 8 bits on the way."""
    rng = np.random.default_rng(7)
    channels = 64
    vectors = [
        rng.standard_normal(channels).astype(np.float32),  # scale
        rng.standard_normal(channels).astype(np.float32),  # shift
        rng.standard_normal(channels).astype(np.float32),  # mean
        rng.uniform(0.1, 3.0, channels).astype(np.float32),  # variance
    ]
    module = parse(
        f"""
func.func @f(%x: tensor<1x{channels}x2x2xbf16>) -> tensor<1x{channels}x2x2xbf16> {{
{
            "".join(
                f'''  %c{i} = nn.constant dense<{json.dumps(v.tolist())}> : tensor<{channels}xf32>
  %v{i} = nn.cast %c{i} : tensor<{channels}xf32> -> tensor<{channels}xbf16>
'''
                for i, v in enumerate(vectors)
            )
        }  %n = nn.batch_norm %x, %v0, %v1, %v2, %v3 epsilon 1.0e-03 : (tensor<1x{
            channels
        }x2x2xbf16>, tensor<{channels}xbf16>, tensor<{channels}xbf16>, tensor<{
            channels
        }xbf16>, tensor<{channels}xbf16>) -> tensor<1x{channels}x2x2xbf16>
  func.return %n : tensor<1x{channels}x2x2xbf16>
}}"""
    )
    (norm,) = ops_named(module, "nn.batch_norm")
    assert isinstance(norm, nn.BatchNormOp)
    folded, weight, bias = fold_parameters(norm, None, None)
    Rewriter.insert_op(folded, InsertPoint.before(norm))
    assert {nn.tensor_type(v).element_type for v in (weight, bias)} == {bf16}
    got = evaluate_constants([weight.owner, bias.owner], dict)  # type: ignore[list-item]
    scale, shift, mean, var = (v.astype(bf16_dtype()).astype(np.float32) for v in vectors)
    factor = scale / np.sqrt(var + np.float32(1e-3))
    want = [factor.reshape(channels, 1, 1, 1), (np.float32(0) - mean) * factor + shift]
    for g, w in zip(got, want, strict=True):
        assert g.dtype == bf16_dtype()
        assert np.array_equal(
            np.asarray(g).astype(np.float32), w.astype(bf16_dtype()).astype(np.float32)
        )
