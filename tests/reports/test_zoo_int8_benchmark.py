"""benchmarks/zoo_int8.py: the models it compares (Softmax outputs dropped, ResNet-18 left out
with a line saying why where torch is missing), how it measures agreement, and a small run
end to end with its table."""

from __future__ import annotations

import argparse
import importlib.util
from pathlib import Path

import numpy as np
import pytest

from nnlayout.benchmarks import zoo_int8
from nnlayout.benchmarks.zoo_int8 import steps_apart, top1_agreement, without_softmax
from nnlayout.examples.make_models import build
from nnlayout.kernels.onednn.binding import available as onednn_available
from nnlayout.kernels.onednn.common import bf16_refusal


def test_softmax_output_dropped_logits_kept() -> None:
    model = without_softmax(build("resnet50", small=True))
    assert [o.name for o in model.graph.output] == ["/fc/Gemm_output_0"]
    assert all(n.op_type != "Softmax" for n in model.graph.node)
    unet = build("unet", small=True)  # no Softmax: unchanged
    assert without_softmax(unet) == unet


def test_steps_and_top1() -> None:
    want = [np.array([[0.0, 0.5, 1.0]], np.float32), np.array([[1.0, 2.0]], np.float32)]
    got = [np.array([[0.5, 0.5, 0.0]], np.float32), np.array([[1.0, 2.1]], np.float32)]
    assert steps_apart(want, got, [0.5, 0.0]) == pytest.approx(2.0)  # 1.0 / 0.5; 0.1 absolute
    assert top1_agreement(want[0], got[0]) == (0, 1)
    masks = np.zeros((1, 2, 2, 2), np.float32)
    masks[0, 1, 0, 0] = 1.0
    assert top1_agreement(masks, np.zeros_like(masks)) == (3, 4)  # per pixel


def test_resnet18_left_out_without_torch(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(zoo_int8, "missing_packages", lambda: ["torch", "torchvision"])
    args = argparse.Namespace(small=False, dir=tmp_path, cache_dir=tmp_path)
    reason = zoo_int8.float_model("resnet18", args)
    assert isinstance(reason, str) and "torch" in reason
    monkeypatch.setenv("OMP_NUM_THREADS", "1")  # in this process, no subprocess
    assert zoo_int8.main(["resnet18", "--inputs", "1", "--repeats", "1"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("resnet18: left out: needs torch, torchvision")


def test_output_steps_read_scales_of_constant_nodes() -> None:
    """torch's exporter writes a DequantizeLinear's scale as a Constant node."""
    from onnx import TensorProto, helper, numpy_helper

    nodes = [
        helper.make_node("Constant", [], ["s"], value=numpy_helper.from_array(np.float32(0.25))),
        helper.make_node("Constant", [], ["z"], value=numpy_helper.from_array(np.uint8(3))),
        helper.make_node("DequantizeLinear", ["q", "s", "z"], ["y"]),
    ]
    graph = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("q", TensorProto.UINT8, [2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])],
    )
    assert zoo_int8.output_steps(helper.make_model(graph)) == [0.25]


@pytest.mark.parametrize("quantizer", ["torch-fx", "torch-eager", "torch-pt2e"])
def test_torch_quantizers_need_torch(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], quantizer: str
) -> None:
    monkeypatch.setattr(zoo_int8, "missing_packages", lambda: ["torch"])
    with pytest.raises(SystemExit) as exit_info:
        zoo_int8.main(["--quantizer", quantizer])
    assert exit_info.value.code == 2
    assert f"--quantizer {quantizer} needs torch" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        zoo_int8.main(["--quantizer", quantizer, "unet"])  # not a torchvision model
    assert "unknown model(s) unet" in capsys.readouterr().err


def test_torch_pt2e_needs_torchao(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(zoo_int8, "missing_packages", lambda: [])
    found = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name: None if name == "torchao" else found(name)
    )
    with pytest.raises(SystemExit) as exit_info:
        zoo_int8.main(["--quantizer", "torch-pt2e", "resnet18"])
    assert exit_info.value.code == 2
    assert "--quantizer torch-pt2e needs torchao" in capsys.readouterr().err


def test_torch_eager_takes_the_models_torchvision_can_quantize(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """squeezenet1_1 has no quantizable variant in torchvision (fx quantizes it)."""
    with pytest.raises(SystemExit) as exit_info:
        zoo_int8.main(["--quantizer", "torch-eager", "squeezenet1_1"])
    assert exit_info.value.code == 2
    assert "unknown model(s) squeezenet1_1" in capsys.readouterr().err


@pytest.mark.slow  # quantizes, compiles twice and times: 5 to 15 s
def test_small_unet_run_prints_its_row(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    argv = ["unet", "--small", "--inputs", "2", "--repeats", "1", "--markdown", "-d", str(tmp_path)]
    assert zoo_int8.main(argv) == 0
    rows = [line for line in capsys.readouterr().out.splitlines() if line.startswith("| unet")]
    assert len(rows) == 2  # the int8 table's row, then the bf16 table's
    cells = [c.strip() for c in rows[0].strip("|").split("|")]
    assert cells[9] == "yes / yes"  # both arenas at their lower bound
    assert float(cells[8]) < 1.0  # int8 arena smaller than the f32 one
    bf16 = [c.strip() for c in rows[1].strip("|").split("|")]
    # bf16 buffers are half the f32 ones where oneDNN computes bf16 (else it stays f32)
    assert float(bf16[6]) == (0.5 if onednn_available() and bf16_refusal() is None else 1.0)


def test_evaluator_steps_converts_old_opsets() -> None:
    """onnx's evaluator has QuantizeLinear/DequantizeLinear from opset 19 only: an opset-17
    QDQ model is converted first; results are measured in the output's steps."""
    from onnx import TensorProto, helper

    scale = helper.make_tensor("s", TensorProto.FLOAT, [], [0.5])
    zero = helper.make_tensor("z", TensorProto.UINT8, [], [3])
    graph = helper.make_graph(
        [
            helper.make_node("QuantizeLinear", ["x", "s", "z"], ["q"]),
            helper.make_node("DequantizeLinear", ["q", "s", "z"], ["y"]),
        ],
        "qdq",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])],
        [scale, zero],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    feed = {"x": np.array([[0.2, 1.0, -1.4, 200.0]], np.float32)}
    exact = np.array([[0.0, 1.0, -1.5, 126.0]], np.float32)  # half to even, saturated at 255
    off = exact + np.array([[0.0, 0.0, 1.0, 0.0]], np.float32)  # two steps on one value
    found = zoo_int8.evaluator_steps(model, feed, {"exact": [exact], "off": [off]})
    assert found == {"exact": 0.0, "off": pytest.approx(2.0)}
