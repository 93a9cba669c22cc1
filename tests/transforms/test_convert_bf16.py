"""convert-to-bf16 and default-pipeline{bf16=true}: on every target, padding on and off, the
compiled bf16 program (interpreter on the planned IR, and the generated module) agrees with the
bf16 oracle (the reference kernels on the converted IR: f32 math rounded once per op) to bf16
precision, and with float32 within the stated tolerance; targets without bf16 kernels leave
the program f32 with a remark; bf16 buffers take 2 bytes in the arena."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest
from xdsl.dialects.builtin import BFloat16Type, ModuleOp

from nnlayout.dialects import nn
from nnlayout.dialects.kernel_attr import kernel_of
from nnlayout.frontends.onnx import import_model
from nnlayout.kernels.onednn.binding import available as onednn_available
from nnlayout.kernels.onednn.common import bf16_refusal
from nnlayout.lowering.to_numpy import import_generated, translate
from nnlayout.runtime.binding import relative_difference
from nnlayout.runtime.interpreter import Interpreter, find_entry
from nnlayout.tests.helpers import (
    ALL_TARGETS,
    compile_module,
    parse,
    random_inputs,
    small_cnn,
)
from nnlayout.transforms import remarks

BF16_HERE = onednn_available() and bf16_refusal() is None
# Targets whose kernels compute bf16: `ref` (the oracle), and oneDNN's where the CPU has
# AVX512_BF16; `host` is oneDNN's here.
CONVERTING = {"ref", *(("onednn", "onednn-nchw8c", "onednn-nchw16c", "host") if BF16_HERE else ())}
# bf16 against its oracle (the IR convert-to-bf16 leaves, run by the reference kernels):
# oneDNN sums in another order than numpy, so a result's f32 value may round to the
# neighbouring bf16 (2^-8 relative), and fuse-post-ops makes a convolution add its addend
# before the one rounding, where the oracle rounds the convolution's result, then the sum.
# Measured: 0 (bit-exact) for "mixed" on every target, and for small_cnn on ref; 3.4e-3 for
# small_cnn on oneDNN (its conv + add + relu fused), padding on and off alike.
ORACLE_TOLERANCE = 2.0**-7
# bf16 against float32 on these small models (each op's result rounded to 8 bits); measured:
# 3.9e-3 (small_cnn; 4.2e-3 on oneDNN) and 1.8e-3 (mixed).
F32_TOLERANCE = 1e-2

# conv (3 -> 5 channels, padded to a block) -> sigmoid (sigmoid(0) = 0.5 must not leak through
# padding lanes) -> concat -> average pool -> batch norm (bf16 on oneDNN too: its kernel widens
# the bf16 vectors to oneDNN's f32 ones) -> global average pool.
MIXED = """
func.func @mixed(%x: tensor<1x3x8x8xf32>) -> tensor<1x10x1x1xf32> {
  %w = nn.constant dense<0.25> : tensor<5x3x3x3xf32>
  %c = nn.conv2d %x, %w strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 : (tensor<1x3x8x8xf32>, tensor<5x3x3x3xf32>) -> tensor<1x5x8x8xf32>
  %s = nn.sigmoid %c : tensor<1x5x8x8xf32>
  %k = nn.concat %s, %c axis 1 : (tensor<1x5x8x8xf32>, tensor<1x5x8x8xf32>) -> tensor<1x10x8x8xf32>
  %p = nn.avg_pool2d %k kernel [2, 2] strides [2, 2] pads [0, 0, 0, 0] dilations [1, 1] : tensor<1x10x8x8xf32> -> tensor<1x10x4x4xf32>
  %g = nn.constant dense<1.5> : tensor<10xf32>
  %b = nn.constant dense<0.25> : tensor<10xf32>
  %m = nn.constant dense<0.125> : tensor<10xf32>
  %v = nn.constant dense<2.0> : tensor<10xf32>
  %n = nn.batch_norm %p, %g, %b, %m, %v epsilon 1.0e-05 : (tensor<1x10x4x4xf32>, tensor<10xf32>, tensor<10xf32>, tensor<10xf32>, tensor<10xf32>) -> tensor<1x10x4x4xf32>
  %r = nn.global_avg_pool %n : tensor<1x10x4x4xf32> -> tensor<1x10x1x1xf32>
  func.return %r : tensor<1x10x1x1xf32>
}
"""


# A DenseNet layer: batch norm -> relu -> 1x1 convolution on 24 channels (padded to a block:
# relu(shift - mean * s) != 0 must not leak through padding lanes), concatenated with the
# input, then a batch norm whose scale and shift are function arguments (cast to bf16 at
# run time, widened by its kernel on each call). On oneDNN the first batch norm and relu run
# as one bf16 depthwise convolution (fuse-post-ops), its weight and bias folded in f32.
PREACT = """
func.func @preact(%x: tensor<1x24x8x8xf32>, %g: tensor<40xf32>, %b: tensor<40xf32>) -> tensor<1x40x8x8xf32> {
  %g1 = nn.constant dense<[1.5, -0.75, 2.0, 0.5, 1.25, -1.5, 0.25, 3.0, 1.5, -0.75, 2.0, 0.5, 1.25, -1.5, 0.25, 3.0, 1.5, -0.75, 2.0, 0.5, 1.25, -1.5, 0.25, 3.0]> : tensor<24xf32>
  %b1 = nn.constant dense<-0.25> : tensor<24xf32>
  %m1 = nn.constant dense<0.125> : tensor<24xf32>
  %v1 = nn.constant dense<2.0> : tensor<24xf32>
  %n = nn.batch_norm %x, %g1, %b1, %m1, %v1 epsilon 1.0e-05 : (tensor<1x24x8x8xf32>, tensor<24xf32>, tensor<24xf32>, tensor<24xf32>, tensor<24xf32>) -> tensor<1x24x8x8xf32>
  %r = nn.relu %n : tensor<1x24x8x8xf32>
  %w = nn.constant dense<0.125> : tensor<16x24x1x1xf32>
  %c = nn.conv2d %r, %w strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1] groups 1 : (tensor<1x24x8x8xf32>, tensor<16x24x1x1xf32>) -> tensor<1x16x8x8xf32>
  %k = nn.concat %c, %x axis 1 : (tensor<1x16x8x8xf32>, tensor<1x24x8x8xf32>) -> tensor<1x40x8x8xf32>
  %m2 = nn.constant dense<0.5> : tensor<40xf32>
  %v2 = nn.constant dense<0.75> : tensor<40xf32>
  %n2 = nn.batch_norm %k, %g, %b, %m2, %v2 epsilon 1.0e-05 : (tensor<1x40x8x8xf32>, tensor<40xf32>, tensor<40xf32>, tensor<40xf32>, tensor<40xf32>) -> tensor<1x40x8x8xf32>
  func.return %n2 : tensor<1x40x8x8xf32>
}
"""


def _models() -> dict[str, ModuleOp]:
    small = import_model(small_cnn(), inline_limit=1 << 30).module  # weights inline
    return {"small_cnn": small, "mixed": parse(MIXED), "preact": parse(PREACT)}


def _bf16_values(module: ModuleOp) -> int:
    return sum(
        isinstance(getattr(r.type, "element_type", None), BFloat16Type)
        for op in module.walk()
        for r in op.results
    )


def _converted(module: ModuleOp, target: str) -> ModuleOp:
    return compile_module(
        module, target, True, "fold-batch-norm,convert-to-bf16{{target={target}}}"
    )


@pytest.mark.parametrize("model", ["small_cnn", "mixed", "preact"])
@pytest.mark.parametrize("target", ALL_TARGETS)
def test_bf16_pipeline_agrees_with_its_oracle(model: str, target: str, tmp_path) -> None:
    module = _models()[model]
    inputs = random_inputs(module, seed=3)
    f32 = Interpreter(module).run(inputs)
    oracle = Interpreter(_converted(module, target)).run(inputs)
    converts = target in CONVERTING
    for padding in (True, False):
        pipeline = "default-pipeline{{target={target} padding={padding} bf16=true}}"
        with remarks.collecting() as emitted:
            planned = compile_module(module, target, padding, pipeline)
        notes = [r.message for r in emitted if r.pass_name == "convert-to-bf16"]
        assert (_bf16_values(planned) > 0) == converts, (target, notes)
        if not converts:  # one remark says why, and the program is the f32 one
            assert len(notes) == 1 and notes[0].startswith("nothing runs in bf16"), notes
        interpreted = Interpreter(planned).run(inputs)
        code = translate(planned, tmp_path / f"{model}_{target}_{padding}.py").code
        generated = import_generated(code).run(*inputs)
        for actual in (interpreted, generated):
            assert relative_difference(oracle, actual) <= ORACLE_TOLERANCE, (target, padding)
            assert relative_difference(f32, actual) <= F32_TOLERANCE, (target, padding)
            if not converts:
                assert relative_difference(f32, actual) <= 1e-4


def test_the_oracle_rounds_once_per_op() -> None:
    """A bf16 convolution's reference: f32 math on the bf16 operands, the result rounded to
    nearest even once (not after every partial sum)."""
    module = _converted(parse(MIXED), "ref")
    conv = next(op for op in module.walk() if isinstance(op, nn.Conv2dOp))
    assert isinstance(conv.output.type.element_type, BFloat16Type)
    inputs = random_inputs(parse(MIXED), seed=1)
    f32 = Interpreter(parse(MIXED)).run(inputs)[0]
    bf16 = Interpreter(module).run(inputs)[0]
    assert bf16.dtype == np.float32  # the function's result is cast back
    assert 0 < relative_difference([f32], [bf16]) <= F32_TOLERANCE


@pytest.mark.skipif(not BF16_HERE, reason="no oneDNN bf16 kernels on this machine")
@pytest.mark.parametrize("target", ["onednn", "onednn-nchw16c"])
def test_batch_norms_run_in_bf16_on_onednn(target: str) -> None:
    """DenseNet's pre-activation batch norm and relu become one bf16 depthwise convolution, a
    batch norm without activation oneDNN's bf16 batch norm: nothing stays f32, and the only
    casts run per inference are the function's boundaries (its three arguments, its result),
    none around a batch norm (issue 27: DenseNet-121 was slower in bf16 than in f32)."""
    with remarks.collecting() as emitted:
        planned = compile_module(
            parse(PREACT), target, True, f"default-pipeline{{{{target={target} bf16=true}}}}"
        )
    assert not [r.message for r in emitted if r.pass_name == "convert-to-bf16"]
    ran = [op for op in planned.walk() if kernel_of(op) is not None]
    bf16_ops = {
        (op.name, kernel_of(op).kernel_name.data)  # type: ignore[union-attr]
        for op in ran
        if isinstance(op.results[0].type.element_type, BFloat16Type)  # type: ignore[attr-defined]
    }
    assert bf16_ops >= {
        ("nn.fused_conv2d", "fused_conv2d_onednn"),
        ("nn.batch_norm", "batch_norm_onednn"),
    }, bf16_ops
    depthwise = [op for op in ran if isinstance(op, nn.FusedConv2dOp)]
    assert [(op.groups.value.data, op.activation.data) for op in depthwise] == [(24, "relu")]
    assert len([op for op in ran if isinstance(op, nn.BatchNormOp)]) == 1
    assert len([op for op in ran if isinstance(op, nn.CastOp)]) == 4


@pytest.mark.skipif(not BF16_HERE, reason="no oneDNN bf16 kernels on this machine")
def test_bf16_buffers_take_two_bytes() -> None:
    module = import_model(small_cnn(), inline_limit=1 << 30).module
    arenas = {}
    for bf16 in (False, True):
        pipeline = f"default-pipeline{{{{target=onednn bf16={str(bf16).lower()}}}}}"
        planned = compile_module(module, "onednn", True, pipeline)
        arenas[bf16] = find_entry(planned).attributes["nnlayout.arena_bytes"].value.data
    assert arenas[True] < arenas[False]


def test_bf16_is_refused_on_onednn_capped_below_avx512_bf16(tmp_path) -> None:
    """Under ONEDNN_MAX_CPU_ISA=AVX2 the oneDNN kernels refuse bf16 with the reason, and the
    pipeline leaves the program f32 (and right): never emulated bf16, never a crash."""
    if not onednn_available():
        pytest.skip("oneDNN is not installed")
    source = tmp_path / "mixed.mlir"
    source.write_text(MIXED, encoding="utf-8")
    environment = dict(os.environ, ONEDNN_MAX_CPU_ISA="AVX2", NNLAYOUT_BF16="1")
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "nnlayout.tools.run",
            str(source),
            "-p",
            "default-pipeline{target=onednn remarks=true}",
            "--random-inputs",
            "0",
            "--output-dir",
            str(tmp_path / "out"),
        ],
        env=environment,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert (
        "[convert-to-bf16] nn.conv2d: nothing runs in bf16 on target 'onednn': conv2d_onednn: "
        "the CPU has no AVX512_BF16" in done.stderr
    ), done.stderr


@pytest.mark.parametrize("value", ["1", " Yes ", "on", "0", "", "off", "maybe"])
def test_bf16_variable_sets_what_the_pipeline_leaves_unset(
    value: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """NNLAYOUT_BF16, read as NNLAYOUT_DISABLE_PADDING is: a yes sets bf16=true on each pass
    with a bf16 option the spec leaves unset (default-pipeline), `bf16=false` in the spec
    wins, and anything but a yes or a no is an error naming the variable."""
    from nnlayout.diagnostics import UserError
    from nnlayout.tools.driver import parse_pipeline
    from nnlayout.transforms import get_all_passes

    monkeypatch.setenv("NNLAYOUT_BF16", value)
    spec = "default-pipeline{target=ref},default-pipeline{bf16=false},select-dispatch"
    if value == "maybe":
        with pytest.raises(UserError, match=r"NNLAYOUT_BF16='maybe': expected 1, true, yes or on"):
            parse_pipeline(spec, get_all_passes())
        return
    passes = parse_pipeline(spec, get_all_passes()).passes
    yes = value.strip().lower() in ("1", "yes", "on")
    assert [getattr(p, "bf16", None) for p in passes] == [yes, False, None]


# A dynamically quantized product (onnxruntime's quantize_dynamic): relu (bf16 where the target
# converts), its run-time scale and zero point (f32 in, by their verifiers), the quantized
# matmul_integer, and the dequantizing mul.
DYNAMIC = """
func.func @dynamic(%x: tensor<2x8xf32>) -> tensor<2x4xf32> {
  %r = nn.relu %x : tensor<2x8xf32>
  %s = nn.dynamic_scale %r : tensor<2x8xf32> -> tensor<f32>
  %z = nn.dynamic_zero_point %r : tensor<2x8xf32> -> tensor<ui8>
  %q = nn.dynamic_quantize %r, %s, %z : (tensor<2x8xf32>, tensor<f32>, tensor<ui8>) -> tensor<2x8xui8>
  %w = nn.constant dense<[[1, -2, 3, 4], [5, 6, -7, 8], [9, 10, 11, -12], [13, 14, 15, 16], [-1, 2, 3, 4], [5, -6, 7, 8], [9, 10, -11, 12], [13, 14, 15, -16]]> : tensor<8x4xi8>
  %m = nn.matmul_integer %q, %w zero_point %z : (tensor<2x8xui8>, tensor<8x4xi8>, tensor<ui8>) -> tensor<2x4xi32>
  %f = nn.cast %m : tensor<2x4xi32> -> tensor<2x4xf32>
  %y = nn.mul %f, %s : (tensor<2x4xf32>, tensor<f32>) -> tensor<2x4xf32>
  func.return %y : tensor<2x4xf32>
}
"""


@pytest.mark.parametrize("target", ALL_TARGETS)
def test_bf16_keeps_dynamic_quantization_parameters_f32(target: str, tmp_path) -> None:
    """default-pipeline{bf16=true} on a dynamically quantized product verifies (the dynamic
    ops stay f32, reading the bf16 relu cast back), and runs like the f32 program within bf16's
    rounding (the relu's result rounded, the mul in bf16 on `ref`)."""
    module = parse(DYNAMIC)
    inputs = random_inputs(module, seed=2)
    f32 = Interpreter(module).run(inputs)
    for padding in (True, False):
        pipeline = "default-pipeline{{target={target} padding={padding} bf16=true}}"
        planned = compile_module(module, target, padding, pipeline)
        scales = [op for op in planned.walk() if isinstance(op, nn.DynamicScaleOp)]
        assert scales and all(not _is_bf16_op(op) for op in scales)
        code = translate(planned, tmp_path / f"dyn_{target}_{padding}.py").code
        for actual in (Interpreter(planned).run(inputs), import_generated(code).run(*inputs)):
            assert relative_difference(f32, actual) <= F32_TOLERANCE, (target, padding)


def _is_bf16_op(op) -> bool:  # type: ignore[no-untyped-def]
    return any(
        isinstance(getattr(v.type, "element_type", None), BFloat16Type)
        for v in (*op.operands, *op.results)
    )
