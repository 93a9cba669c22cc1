"""select-dispatch{activation-format=...} on `host` (transforms/activation_format.py): the
rule's decision on small models built as torch's exporters write the patterns it reads
(squeezenet's fire module, regnet_x's 16-channel groups, mobilenet's depthwise convolution,
inception's 1x7 convolution, densenet's concat of a pooled block input, and its block's concats
nested into a chain), and the same results
in either format, on every target, padding on and off."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import helper
from xdsl.dialects.builtin import ModuleOp
from xdsl.utils.exceptions import PassFailedException

from nnlayout.dialects.dispatch import recorded_target
from nnlayout.frontends.onnx.importer import import_to_files
from nnlayout.kernels.targets import host_blocked_target
from nnlayout.lowering.to_numpy import run_generated
from nnlayout.runtime.interpreter import Interpreter
from nnlayout.transforms.activation_format import blocked_reason
from nnlayout.transforms.remarks import collecting
from tests.helpers import (
    PRE_DISPATCH,
    assert_close,
    check_against_onnxruntime,
    compile_module,
    onnx_model,
    onnxruntime_outputs,
    random_inputs,
)

RNG = np.random.default_rng(0)


def weight(shape: tuple[int, ...]) -> np.ndarray:
    return (RNG.standard_normal(shape) * 0.2).astype(np.float32)


Part = tuple[list[onnx.NodeProto], dict[str, np.ndarray]]


def conv(
    name: str, source: str, cin: int, cout: int, kernel: tuple[int, int] = (1, 1), groups: int = 1
) -> Part:
    """A Conv node with its weight and bias initializers, padded to keep the size; and a Relu."""
    pads = [kernel[0] // 2, kernel[1] // 2, kernel[0] // 2, kernel[1] // 2]
    nodes = [
        helper.make_node(
            "Conv",
            [source, f"{name}.w", f"{name}.b"],
            [f"{name}.c"],
            kernel_shape=list(kernel),
            pads=pads,
            group=groups,
        ),
        helper.make_node("Relu", [f"{name}.c"], [name]),
    ]
    weights = {
        f"{name}.w": weight((cout, cin // groups, *kernel)),
        f"{name}.b": weight((cout,)),
    }
    return nodes, weights


def model(
    parts: list[Part], output: str, extra: tuple[onnx.NodeProto, ...] | list = (), batch: int = 1
) -> onnx.ModelProto:
    nodes, weights = [], {}
    for part_nodes, part_weights in parts:
        nodes += part_nodes
        weights |= part_weights
    return onnx_model([*nodes, *extra], {"x": [batch, 32, 12, 12]}, [output], weights)


def fire(
    expand3: tuple[int, int] = (3, 3), groups: int = 1, expands: int = 32, batch: int = 1
) -> onnx.ModelProto:
    """squeezenet's fire module: squeeze 1x1, two expands, their relus concatenated."""
    return model(
        [
            conv("s", "x", 32, 16),
            conv("e1", "s", 16, expands),
            conv("e3", "s", 16, expands, expand3, groups),
        ],
        "y",
        [helper.make_node("Concat", ["e1", "e3"], ["y"], axis=1)],
        batch,
    )


def grouped(width: int) -> onnx.ModelProto:
    """regnet_x's bottleneck: 1x1, 3x3 with groups of `width` channels, 1x1."""
    return model(
        [
            conv("a", "x", 32, 64),
            conv("b", "a", 64, 64, (3, 3), 64 // width),
            conv("c", "b", 64, 32),
        ],
        "c",
    )


def pooled_concat() -> onnx.ModelProto:
    """densenet's dense layer: the block input (a pooling's output) joined to a new conv's."""
    pool = helper.make_node("MaxPool", ["x"], ["p"], kernel_shape=[3, 3], pads=[1, 1, 1, 1])
    concat = helper.make_node("Concat", ["p", "n"], ["y"], axis=1)
    return model([([pool], {}), conv("n", "p", 32, 32, (3, 3))], "y", [concat])


def dense_block(growth: int = 16) -> onnx.ModelProto:
    """densenet's block as torchvision exports it: every layer reads the flat concat of the
    pooled block input and all the features before it (nest-concats makes them a chain)."""
    pool = helper.make_node("MaxPool", ["x"], ["p"], kernel_shape=[3, 3], pads=[1, 1, 1, 1])
    first = helper.make_node("Concat", ["p", "n1"], ["c1"], axis=1)
    second = helper.make_node("Concat", ["p", "n1", "n2"], ["y"], axis=1)
    return model(
        [([pool], {}), conv("n1", "p", 32, growth, (3, 3)), ([first], {})]
        + [conv("n2", "c1", 32 + growth, growth, (3, 3))],
        "y",
        [second],
    )


CASES = {
    "fire": (fire(), "a channel concat of convolution outputs goes in place"),
    "regnet_x groups of 16": (grouped(16), "a grouped convolution of 16 channels a group"),
    "regnet_y groups of 8": (grouped(8), None),
    "depthwise": (grouped(1), None),
    "non-square expand": (fire((1, 7)), None),
    "pooled concat": (pooled_concat(), None),
    "dense block": (dense_block(), "a chain of channel concats"),
    "dense block of 8-channel growth": (dense_block(8), None),
    # The concat goes in place only in whole 16-channel blocks of one image.
    "fire of 8-channel expands": (fire(expands=8), None),
    "fire at batch 2": (fire(batch=2), None),
}


def imported(onnx_model: onnx.ModelProto, folder: Path) -> tuple[ModuleOp, str]:
    path = folder / "model.onnx"
    path.write_bytes(onnx_model.SerializeToString())
    return import_to_files(path), str(path.with_suffix(".mlir"))


@pytest.mark.parametrize("case", CASES)
def test_the_rule_decides_as_measured(case: str, tmp_path: Path) -> None:
    onnx_model_, reason = CASES[case]
    module, _ = imported(onnx_model_, tmp_path)
    before = compile_module(module, "host", True, PRE_DISPATCH)
    found = blocked_reason(before)
    assert (found is None) == (reason is None), found
    if reason is not None:
        assert found is not None and found[1].startswith(reason)
    blocked, _ = host_blocked_target()
    with collecting() as remarks:
        dispatched = compile_module(module, "host", True, PRE_DISPATCH + ",select-dispatch")
    chosen = blocked if reason is not None and blocked is not None else "host"
    assert recorded_target(dispatched) == chosen
    said = [r for r in remarks if "activation format" in r.message]
    assert len(said) == (chosen != "host")


@pytest.mark.parametrize("case", ["fire", "regnet_x groups of 16", "dense block"])
def test_either_format_gives_onnxruntime_results(case: str, tmp_path: Path) -> None:
    """auto (the rule's nChw16c here), nhwc and nchw16c forced, padding on and off, through
    the interpreter and the generated module; and every target against onnxruntime."""
    onnx_model_ = CASES[case][0]
    module, source = imported(onnx_model_, tmp_path)
    inputs = random_inputs(module)
    (want,) = onnxruntime_outputs(onnx_model_, inputs)
    formats = ["auto", "nhwc"] + (["nchw16c"] if host_blocked_target()[0] else [])
    for activation_format in formats:
        for padding in (True, False):
            spec = "default-pipeline{{target={target} padding={padding} activation-format=%s}}"
            compiled = compile_module(module, "host", padding, spec % activation_format)
            for got in (
                Interpreter(compiled, source_path=source).run(inputs),
                run_generated(compiled, inputs, source_path=source),
            ):
                assert_close(want, got[0])
    other = tmp_path / "onnxruntime"
    other.mkdir()
    check_against_onnxruntime(onnx_model_, other)


def test_where_host_has_no_fast_nchw16c_auto_keeps_it_and_forcing_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On AVX2 (or without oneDNN) auto changes nothing, and nchw16c is a pass error saying
    why, not a slow program."""
    import nnlayout.transforms.activation_format as activation_format

    why = "host runs nChw16c convolutions fast only with the avx512_core code"
    monkeypatch.setattr(activation_format, "host_blocked_target", lambda: (None, why))
    module, _ = imported(fire(), tmp_path)
    assert activation_format.dispatch_target(module, "host", "auto") == ("host", None)
    with pytest.raises(PassFailedException, match=f"activation-format=nchw16c: {why}"):
        activation_format.dispatch_target(module, "host", "nchw16c")
    with pytest.raises(PassFailedException, match="expected one of auto, nhwc, nchw16c"):
        activation_format.dispatch_target(module, "host", "nchw8c")
    assert activation_format.dispatch_target(module, "avx512", "nchw16c") == ("avx512", None)


def test_later_passes_given_target_host_accept_the_blocked_target_host_chose(
    tmp_path: Path,
) -> None:
    """auto records `onednn-nchw16c` for the fire module; a pipeline that spells
    `target=host` on every pass (as users write them) still runs, and a target that is
    neither is refused as before."""
    blocked, _ = host_blocked_target()
    if blocked is None:
        pytest.skip("host has no fast nChw16c here")
    module, _ = imported(fire(), tmp_path)
    spelled = PRE_DISPATCH + ",select-dispatch{{target=host}},fuse-post-ops{{target=host}}"
    dispatched = compile_module(module, "host", True, spelled)
    assert recorded_target(dispatched) == blocked
    with pytest.raises(Exception, match="but the module was dispatched with"):
        compile_module(
            module, "host", True, PRE_DISPATCH + ",select-dispatch,fuse-post-ops{{target=avx2}}"
        )


def test_a_flat_dense_block_is_not_counted(tmp_path: Path) -> None:
    """The block's concats as exported (each joining the pooled block input, copied again
    into every later concat) are no reason for nChw16c; nested by nest-concats they are."""
    module, _ = imported(dense_block(), tmp_path)
    flat = PRE_DISPATCH.removesuffix(",nest-concats")
    assert blocked_reason(compile_module(module, "host", True, flat)) is None
    assert blocked_reason(compile_module(module, "host", True, PRE_DISPATCH)) is not None
