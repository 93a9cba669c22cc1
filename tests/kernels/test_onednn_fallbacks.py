"""oneDNN kernels that must not run as they were named: a kernel named in the IR for layouts
or types it cannot read, or whose primitive would turn NaN into a number, is refused where
it is bound or runs the reference (numpy) kernel on such calls; a program loaded where
oneDNN has only its reference code for an op (fewer CPU features) runs numpy instead."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from nnlayout.diagnostics import DiagnosticError
from nnlayout.dialects.kernel_attr import kernel_of
from nnlayout.kernels.onednn.executor import SlowImplementationWarning
from nnlayout.lowering.to_numpy import run_generated, translate
from nnlayout.runtime.interpreter import Interpreter
from nnlayout.tests.helpers import (
    DEFAULT_PIPELINE,
    assert_same,
    compile_module,
    parse,
    random_inputs,
)
from nnlayout.tests.kernels.test_onednn_kernels import check, deconv_with_weight_argument

pytestmark = pytest.mark.onednn


def test_an_operand_already_in_a_layout_onednn_cannot_express_runs_elsewhere() -> None:
    """Hand-written IR whose relu reads an NCHW4c2c value: dispatch asked oneDNN about nchw
    data only, chose relu_onednn, and running it was an internal error ("layout 'NCHW4c2c'
    has no oneDNN format (data)")."""
    module = parse("""
func.func @f(%x: tensor<1x5x3x3xf32>) -> tensor<1x5x3x3xf32> {
  %a = layout.reorder %x : tensor<1x5x3x3xf32> -> tensor<1x5x3x3xf32, #layout.layout<"NCHW4c2c">>
  %b = nn.relu %a : tensor<1x5x3x3xf32, #layout.layout<"NCHW4c2c">>
  %c = layout.reorder %b : tensor<1x5x3x3xf32, #layout.layout<"NCHW4c2c">> -> tensor<1x5x3x3xf32>
  func.return %c : tensor<1x5x3x3xf32>
}""")
    inputs = random_inputs(module)
    compiled = compile_module(module, "onednn", True, DEFAULT_PIPELINE)
    relu = next(op for op in compiled.walk() if op.name == "nn.relu")
    assert kernel_of(relu).kernel_name.data != "relu_onednn"
    assert_same(Interpreter(module).run(inputs), Interpreter(compiled).run(inputs))
    assert_same(Interpreter(module).run(inputs), run_generated(compiled, inputs))


@pytest.mark.parametrize(
    ("op", "wrong"),
    [
        (
            'nn.add %x, %z {kernel = #nn.kernel<"add_onednn", operands = ["NCHW8c", "NHWC"], '
            'results = ["NCHW8c"]>} : (T, T) -> T',
            "operand 1 is NHWC but operand 0 is NCHW8c",
        ),
        (
            'nn.add %x, %z {kernel = #nn.kernel<"add_onednn", operands = ["NCHW8c", "NCHW8c"], '
            'results = ["NHWC"]>} : (T, T) -> T',
            "result 0 is NHWC but operand 0 is NCHW8c",
        ),
        (
            'nn.concat %x, %z axis 1 {kernel = #nn.kernel<"concat_onednn", operands = ["NHWC", '
            '""], results = ["NHWC"]>} : (T, T) -> tensor<1x32x4x4xf32>',
            "operand 1 is plain but operand 0 is NHWC",
        ),
        (
            "nn.max_pool2d %x kernel [1, 1] strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1] "
            '{kernel = #nn.kernel<"max_pool2d_onednn", operands = ["NCHW8c"], results = ["NHWC"]>} '
            ": T -> T",
            "result 0 is NHWC but operand 0 is NCHW8c",
        ),
    ],
)
@pytest.mark.parametrize("backend", ["interpreter", "generated"])
def test_a_star_kernel_listed_with_two_layouts_is_refused_where_it_is_bound(
    op: str, wrong: str, backend: str
) -> None:
    """oneDNN's `"*"` primitives read every data operand, and write the result, in operand
    0's format. An #nn.kernel listing other layouts (insert-layouts reorders to them) ran:
    wrong numbers for the add (an NHWC operand read as NCHW8c)."""
    result = "tensor<1x32x4x4xf32>" if "concat" in op else "T"
    text = f"""
func.func @f(%x: T, %z: T) -> {result} {{
  %y = {op}
  func.return %y : {result}
}}""".replace("T", "tensor<1x16x4x4xf32>")
    module = parse(text)
    inputs = random_inputs(module)
    if backend == "interpreter":
        compiled = compile_module(module, "onednn", True, "insert-layouts")
        with pytest.raises(DiagnosticError, match=re.escape(wrong)):
            Interpreter(compiled).run(inputs)
    else:
        compiled = compile_module(module, "onednn", True, "insert-layouts,bufferize,plan-memory")
        with pytest.raises(DiagnosticError, match=re.escape(wrong)):
            run_generated(compiled, inputs)


@pytest.mark.parametrize(
    ("arguments", "op", "wrong"),
    [
        # "CN" is neither the transposed matrix ("IO") nor the inner product's format: b was
        # read plain through swapped strides
        (
            "%a: tensor<32x48xf32>, %b: tensor<5x48xf32>, %c: tensor<5xf32>",
            'nn.gemm %a, %b, %c trans_b alpha 1.0 beta 1.0 {kernel = #nn.kernel<"gemm_onednn", '
            'operands = ["", "CN", ""], results = [""]>} : (tensor<32x48xf32>, tensor<5x48xf32>, '
            "tensor<5xf32>) -> tensor<32x5xf32>",
            "operand 1 is CN; the kernel takes it plain or ",
        ),
        # the primitive packs plain weights and writes the input's format
        (
            "%x: tensor<1x16x5x5xf32>, %w: tensor<16x8x3x3xf32>",
            "nn.conv_transpose2d %x, %w strides [2, 2] pads [0, 0, 0, 0] output_padding [1, 1] "
            'dilations [1, 1] groups 2 {kernel = #nn.kernel<"conv_transpose2d_onednn", operands = '
            '["NCHW8c", "OIHW8i8o"], results = ["NCHW8c"]>} : (tensor<1x16x5x5xf32>, '
            "tensor<16x8x3x3xf32>) -> tensor<1x16x12x12xf32>",
            "operand 1 is OIHW8i8o; the kernel takes it plain",
        ),
        (
            "%x: tensor<1x16x5x5xf32>, %w: tensor<16x8x3x3xf32>",
            "nn.conv_transpose2d %x, %w strides [2, 2] pads [0, 0, 0, 0] output_padding [1, 1] "
            'dilations [1, 1] groups 2 {kernel = #nn.kernel<"conv_transpose2d_onednn", operands = '
            '["", ""], results = ["NCHW8c"]>} : (tensor<1x16x5x5xf32>, '
            "tensor<16x8x3x3xf32>) -> tensor<1x16x12x12xf32>",
            "result 0 is NCHW8c; the kernel takes it plain",
        ),
        # what dispatch refuses for the result's sake: alpha, a broadcast first operand of a
        # sub (oneDNN broadcasts its second source only), a ceil_mode overhang counted in the
        # divisor (all wrong numbers)
        (
            "%a: tensor<4x8xf32>, %b: tensor<8x6xf32>, %c: tensor<6xf32>",
            'nn.gemm %a, %b, %c alpha 2.0 beta 3.0 {kernel = #nn.kernel<"gemm_onednn", operands = '
            '["", "", ""], results = [""]>} : (tensor<4x8xf32>, tensor<8x6xf32>, tensor<6xf32>) -> '
            "tensor<4x6xf32>",
            "alpha 2.0 (oneDNN's matmul here computes alpha = 1 only)",
        ),
        (
            "%s: tensor<1x16x1x1xf32>, %x: tensor<1x16x4x4xf32>",
            'nn.sub %s, %x {kernel = #nn.kernel<"sub_onednn", operands = ["*", "*"], results = '
            '["*"]>} : (tensor<1x16x1x1xf32>, tensor<1x16x4x4xf32>) -> tensor<1x16x4x4xf32>',
            "operand 0 broadcasts, and oneDNN broadcasts only its second source",
        ),
        (
            "%x: tensor<1x8x6x6xf32>",
            "nn.avg_pool2d %x kernel [3, 3] strides [2, 2] pads [1, 1, 1, 1] dilations [1, 1] "
            'ceil_mode count_include_pad {kernel = #nn.kernel<"avg_pool2d_onednn", operands = ["*"], '
            'results = ["*"]>} : tensor<1x8x6x6xf32> -> tensor<1x8x4x4xf32>',
            "ceil_mode overhang with count_include_pad",
        ),
        # an internal error: no oneDNN format, or buffers of another size than the primitive's
        (
            "%x: tensor<1x16x4x4xf32>, %z: tensor<1x16x4x4xf32>",
            'nn.add %x, %z {kernel = #nn.kernel<"add_onednn", operands = ["NCHW4c", "NCHW4c"], '
            'results = ["NCHW4c"]>} : (tensor<1x16x4x4xf32>, tensor<1x16x4x4xf32>) -> '
            "tensor<1x16x4x4xf32>",
            "layout 'NCHW4c' has no oneDNN format (data)",
        ),
        (
            "%x: tensor<1x10x4x4xf32>, %s: tensor<10xf32>",
            'nn.batch_norm %x, %s, %s, %s, %s epsilon 1.0e-05 {kernel = #nn.kernel<"batch_norm_onednn", '
            'operands = ["NCHW8c", "C8c", "C8c", "C8c", "C8c"], results = ["NCHW8c"], in_place = 0>} : '
            "(tensor<1x10x4x4xf32>, tensor<10xf32>, tensor<10xf32>, tensor<10xf32>, tensor<10xf32>) "
            "-> tensor<1x10x4x4xf32>",
            "operand 1 takes 64 bytes in layout 'C8c'; oneDNN's bnorm",
        ),
    ],
)
@pytest.mark.parametrize("backend", ["interpreter", "generated"])
def test_a_kernel_named_for_types_it_cannot_read_is_refused_where_it_is_bound(
    arguments: str, op: str, wrong: str, backend: str
) -> None:
    result = op.rsplit("-> ", 1)[1]
    module = parse(f"""
func.func @f({arguments}) -> {result} {{
  %y = {op}
  func.return %y : {result}
}}""")
    inputs = random_inputs(module)
    if backend == "interpreter":
        compiled = compile_module(module, "onednn", True, "insert-layouts")
        with pytest.raises(DiagnosticError, match=re.escape(wrong)):
            Interpreter(compiled).run(inputs)
    else:  # refused by nnlayout-translate or at load, at the op of the module translated
        compiled = compile_module(module, "onednn", True, "insert-layouts,bufferize,plan-memory")
        with pytest.raises(DiagnosticError, match=re.escape(wrong)):
            run_generated(compiled, inputs)


def test_a_sigmoid_post_op_onednn_runs_without_nan_runs_the_reference_instead() -> None:
    """Dispatch refuses oneDNN's gemm convolutions with a sigmoid post-op (it drops NaN), but
    the formats of a program compiled elsewhere, or named by hand as here (plain, where
    oneDNN picks gemm), may get them at load: NaN became numbers."""
    module = parse("""
func.func @f(%x: tensor<1x3x8x8xf32>, %w: tensor<8x3x3x3xf32>, %b: tensor<8xf32>) -> tensor<1x8x8x8xf32> {
  %y = nn.fused_conv2d %x, %w, %b strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 activation "sigmoid" {kernel = #nn.kernel<"fused_conv2d_onednn", operands = ["", "", ""], results = [""]>} : (tensor<1x3x8x8xf32>, tensor<8x3x3x3xf32>, tensor<8xf32>) -> tensor<1x8x8x8xf32>
  func.return %y : tensor<1x8x8x8xf32>
}""")
    inputs = random_inputs(module)
    inputs[0][0, 1, 3, 3] = np.nan
    reference = module.clone()
    for op in reference.walk():
        op.attributes.pop("kernel", None)
    expected = Interpreter(reference).run(inputs)
    assert np.isnan(expected[0]).any()
    with pytest.warns(SlowImplementationWarning, match="its sigmoid post-op drops NaN"):
        assert_same(expected, Interpreter(module).run(inputs))


@pytest.mark.parametrize(
    ("activation", "attributes"),
    [("nn.relu", ""), ("nn.clip", "min 0.5 max 6.0 "), ("nn.leaky_relu", "alpha 0.0 ")],
)
@pytest.mark.parametrize("special", [None, np.nan, np.inf, -np.inf])
def test_max_and_min_activations_run_in_onednn_on_finite_inputs_only(
    activation: str, attributes: str, special: float | None
) -> None:
    """oneDNN's relu and clip turn NaN into a bound (leaky_relu with alpha 0 is its relu,
    which also maps -inf to 0 * -inf): they are oneDNN kernels that run the numpy kernel on
    a call whose input is not finite. The activation reads a max pooling (so it is not
    fused into the convolution), on 5 channels: nChw8c with padding lanes on
    onednn-nchw8c."""
    module = parse(f"""
func.func @f(%x: tensor<2x5x6x6xf32>, %w: tensor<5x5x3x3xf32>) -> tensor<2x5x5x5xf32> {{
  %c = nn.conv2d %x, %w strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 : (tensor<2x5x6x6xf32>, tensor<5x5x3x3xf32>) -> tensor<2x5x6x6xf32>
  %p = nn.max_pool2d %c kernel [2, 2] strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1] : tensor<2x5x6x6xf32> -> tensor<2x5x5x5xf32>
  %r = {activation} %p {attributes}: tensor<2x5x5x5xf32>
  func.return %r : tensor<2x5x5x5xf32>
}}""")
    inputs = random_inputs(module)
    if special is not None:
        inputs[0][1, 4, 2, 3] = special
    expected = Interpreter(module).run(inputs)
    for target in ("onednn", "onednn-nchw8c"):
        compiled = check(module, inputs, onednn_ops=3, target=target)
        kernel = kernel_of(next(op for op in compiled.walk() if op.name == activation))
        assert kernel.kernel_name.data == activation[3:] + "_onednn"
        assert_same(
            expected, run_generated(compile_module(module, target, True, DEFAULT_PIPELINE), inputs)
        )


def test_a_program_loaded_on_a_cpu_with_fewer_features_runs_no_onednn_reference_code(
    tmp_path: Path,
) -> None:
    """Loaded where oneDNN may use SSE4.1 only (ONEDNN_MAX_CPU_ISA, as on an older CPU), the
    transposed convolution compiled for AVX2's nChw8c gets conv:any+ref:any, about 100 times
    slower than numpy: nnlayout's reference kernel runs it, with one warning that says so."""
    module = parse(deconv_with_weight_argument(8, 2))
    planned = compile_module(module, "onednn-nchw8c", True, DEFAULT_PIPELINE)
    translate(planned, tmp_path / "model.py")
    inputs = random_inputs(module)
    np.save(tmp_path / "expected.npy", Interpreter(module).run(inputs)[0])
    np.savez(tmp_path / "inputs.npz", *inputs)
    script = (
        "import numpy as np, model\n"
        "from nnlayout.kernels.onednn import primitives\n"
        "inputs = np.load('inputs.npz')\n"
        "(y,) = model.run(*(inputs[k] for k in sorted(inputs.files)))\n"
        "np.testing.assert_allclose(y, np.load('expected.npy'), rtol=1e-5, atol=1e-5)\n"
        "print(sorted(c.pd.implementation for c in primitives._CACHE.values()))\n"
        "from nnlayout.reports.census import library_implementation\n"
        "(op,) = [op for op in model.PROGRAM.function.walk() if op.name == 'nn.compute'"
        " and op.inner.name == 'nn.conv_transpose2d']\n"
        "print(library_implementation(op))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={**os.environ, "ONEDNN_MAX_CPU_ISA": "SSE41"},
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout == "['conv:any+ref:any']\nnumpy (oneDNN: conv:any+ref:any)\n"
    assert (
        result.stderr.count(
            "SlowImplementationWarning: nn.conv_transpose2d: oneDNN offers "
            "only conv:any+ref:any here"
        )
        == 1
    )


POOLED_CONV = """
func.func @f(%x: tensor<1x64x16x16xf32>) -> tensor<1x64x8x8xf32> {
  %w = nn.constant dense<0.01> : tensor<64x64x3x3xf32>
  %c = nn.conv2d %x, %w strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 : (tensor<1x64x16x16xf32>, tensor<64x64x3x3xf32>) -> tensor<1x64x16x16xf32>
  %r = nn.relu %c : tensor<1x64x16x16xf32>
  %p = nn.max_pool2d %r kernel [3, 3] strides [2, 2] pads [1, 1, 1, 1] dilations [1, 1] : tensor<1x64x16x16xf32> -> tensor<1x64x8x8xf32>
  func.return %p : tensor<1x64x8x8xf32>
}"""


@pytest.mark.onednn_avx512
@pytest.mark.parametrize("backend", ["interpreter", "generated"])
def test_pooling_compiled_for_avx512_runs_where_onednn_has_no_fast_code_for_it(
    tmp_path: Path, backend: str
) -> None:
    """Loaded with oneDNN on AVX2, the max pooling compiled for nChw16c has only ref:any: it
    runs in numpy with a warning, like a convolution. Checking at binding whether oneDNN
    has fast code for the op's layout refused it ("oneDNN chose ref:any for nChw16c data")."""
    module = parse(POOLED_CONV)
    planned = compile_module(module, "onednn-nchw16c", True, DEFAULT_PIPELINE)
    (tmp_path / "planned.mlir").write_text(str(planned))
    inputs = random_inputs(module)
    np.save(tmp_path / "x.npy", inputs[0])
    np.save(tmp_path / "expected.npy", Interpreter(module).run(inputs)[0])
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "nnlayout.tools.run",
            "planned.mlir",
            "--input",
            "x.npy",
            "--output-dir",
            "out",
            "--backend",
            backend,
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={**os.environ, "ONEDNN_MAX_CPU_ISA": "AVX2"},
    )
    assert result.returncode == 0, result.stderr
    assert "nn.max_pool2d: oneDNN offers only ref:any here" in result.stderr
    np.testing.assert_allclose(
        np.load(tmp_path / "out" / "result0.npy"),
        np.load(tmp_path / "expected.npy"),
        rtol=1e-5,
        atol=1e-5,
    )
