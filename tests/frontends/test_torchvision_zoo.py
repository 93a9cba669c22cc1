"""benchmarks/torchvision_zoo without torch: its --help, the one line it prints when torch is
needed and absent, and its table on exports already in the cache (small stand-ins written
with onnx.helper under the names of torchvision's models)."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from onnx import helper

from nnlayout.benchmarks import torchvision_zoo
from nnlayout.tests.helpers import onnx_model


def without(monkeypatch: pytest.MonkeyPatch, *names: str) -> None:
    """Makes `names` look uninstalled to importlib.util.find_spec."""
    found = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util,
        "find_spec",
        lambda name, *rest: None if name in names else found(name, *rest),
    )


def test_help_names_every_option() -> None:
    """The script runs as users run it (python -m) and documents its options."""
    done = subprocess.run(
        [sys.executable, "-m", "nnlayout.benchmarks.torchvision_zoo", "--help"],
        capture_output=True,
        text=True,
        env=dict(os.environ),
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    for option in ("--models", "--exporters", "--targets", "--check-targets", "--repeats"):
        assert option in done.stdout
    assert "--cache-dir" in done.stdout and "--markdown" in done.stdout
    assert "batch-norm running statistics" in " ".join(done.stdout.split())


def test_without_torch_it_says_so_in_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    without(monkeypatch, "torch", "torchvision", "onnxscript")
    with pytest.raises(SystemExit) as exit_:
        torchvision_zoo.main(["--models", "resnet18", "--cache-dir", str(tmp_path)])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err
    assert "exporting resnet18 needs torch, torchvision, onnxscript, which are not installed" in err
    assert "pip install -e '.[models]'" in err


def test_unknown_target_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        torchvision_zoo.main(["--check-targets", "ref,gpu"])
    assert exit_.value.code == 2
    assert "unknown target: gpu" in capsys.readouterr().err


def small_cnn(scale: float = 1.0) -> bytes:
    """Conv (5 channels, not a multiple of the block) -> Relu -> GlobalAveragePool -> Flatten;
    its weights times `scale` (0: the output is the bias's, whatever the input)."""
    rng = np.random.default_rng(0)
    nodes = [
        helper.make_node("Conv", ["input", "w", "b"], ["c"], kernel_shape=[3, 3], pads=[1] * 4),
        helper.make_node("Relu", ["c"], ["r"]),
        helper.make_node("GlobalAveragePool", ["r"], ["g"]),
        helper.make_node("Flatten", ["g"], ["output"]),
    ]
    weights = {
        "w": (scale * rng.standard_normal((5, 3, 3, 3))).astype(np.float32),
        "b": rng.standard_normal(5).astype(np.float32),
    }
    return onnx_model(nodes, {"input": [1, 3, 8, 8]}, ["output"], weights).SerializeToString()


def unsupported() -> bytes:
    node = helper.make_node("Unheard", ["input"], ["output"], domain="com.example")
    model = onnx_model([node], {"input": [1, 3, 4, 4]}, ["output"])
    model.opset_import.append(helper.make_opsetid("com.example", 1))
    return model.SerializeToString()


def test_the_table_from_cached_exports(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """A cached export is imported, checked on two targets and timed; one the importer
    refuses shows its refusal; one whose export failed shows the recorded reason; every
    configuration's difference is listed on stderr, and onnxruntime's own spread (unoptimised
    against optimised) in its column. None of this needs torch."""
    without(monkeypatch, "torch", "torchvision", "onnxscript")
    (tmp_path / "resnet18-classic.onnx").write_bytes(small_cnn())
    (tmp_path / "resnet18-dynamo.onnx").write_bytes(unsupported())
    (tmp_path / "alexnet-classic.error").write_text("export failed: RuntimeError: no\n(1 s)\n")
    argv = ["--models", "resnet18,alexnet", "--exporters", "classic,dynamo"]
    argv += ["--cache-dir", str(tmp_path), "--targets", "avx2", "--check-targets", "ref"]
    (tmp_path / "alexnet-dynamo.error").write_text("timeout: more than 300 s\n")
    argv += ["--repeats", "2", "--child"]  # in this process, whatever its thread count
    assert torchvision_zoo.main(argv) == 0
    captured = capsys.readouterr()
    out = captured.out
    rows = {tuple(line.split()[:2]): line for line in out.splitlines()[3:] if line}
    for where in ("ref padding=on", "ref padding=off", "avx2 padding=on"):  # each one, on stderr
        assert f"    {where}: " in captured.err, captured.err
    assert set(rows) == {
        ("resnet18", "classic"),
        ("resnet18", "dynamo"),
        ("alexnet", "classic"),
        ("alexnet", "dynamo"),
    }
    cells = rows["resnet18", "classic"].split()
    assert cells[2] == "yes" and float(cells[4]) <= 1e-4, out
    assert cells[-1] == "padding=on" or cells[-1] == "padding=off", out
    assert 0.0 <= float(cells[-3]) <= 1e-4, out  # onnxruntime's own spread, before "worst at"
    assert (
        "no: node #0 (Unheard) producing 'output': unsupported operator"
        in (rows["resnet18", "dynamo"])
    )
    assert "no: export failed: RuntimeError: no" in rows["alexnet", "classic"]
    assert "no: timeout" in rows["alexnet", "dynamo"]


def test_an_output_that_ignores_its_input_is_vacuous(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """A model whose output is the same for two inputs (zero weights, as ViT's fresh head) shows
    "vacuous" instead of a difference, which would be 0 and prove nothing."""
    without(monkeypatch, "torch", "torchvision", "onnxscript")
    (tmp_path / "vit_b_16-classic.onnx").write_bytes(small_cnn(scale=0.0))
    (tmp_path / "resnet18-classic.onnx").write_bytes(small_cnn())
    argv = ["--models", "vit_b_16,resnet18", "--exporters", "classic", "--cache-dir"]
    argv += [str(tmp_path), "--targets", "ref", "--repeats", "1", "--child"]
    assert torchvision_zoo.main(argv) == 0
    captured = capsys.readouterr()
    rows = {line.split()[0]: line.split() for line in captured.out.splitlines()[3:] if line}
    assert rows["vit_b_16"][4] == "vacuous", captured.out
    assert rows["resnet18"][4] != "vacuous" and float(rows["resnet18"][4]) <= 1e-4, captured.out
    assert "vacuous: the output does not depend on the input" in captured.err


def test_exact_compares_everyone_with_float64(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """--exact: every configuration, onnxruntime and onnxruntime unoptimised are also compared
    with the float64 evaluation of the model (three columns, and each on stderr); "n/a" where
    it cannot be computed."""
    without(monkeypatch, "torch", "torchvision", "onnxscript")
    (tmp_path / "resnet18-classic.onnx").write_bytes(small_cnn())
    argv = ["--models", "resnet18", "--exporters", "classic", "--cache-dir", str(tmp_path)]
    argv += ["--targets", "ref", "--check-targets", "avx2", "--repeats", "1", "--exact", "--child"]
    assert torchvision_zoo.main(argv) == 0
    captured = capsys.readouterr()
    header = captured.out.splitlines()[1]
    assert " ".join(header.split()).endswith(" ".join(torchvision_zoo.EXACT_COLUMNS)), header
    cells = captured.out.splitlines()[3].split()
    ours, ort, plain = (float(c) for c in cells[-3:])
    for figure in (ours, ort, plain):  # float32 rounding of one small convolution
        assert 0.0 < figure < 1e-6, captured.out
    for where in ("avx2 padding=on", "avx2 padding=off", "ref padding=on"):
        assert f"    {where}: " in captured.err and "(float64: " in captured.err, captured.err
    assert "against float64: onnxruntime" in captured.err

    def fails(*args: object) -> None:
        raise NotImplementedError("no such operator")

    monkeypatch.setattr(torchvision_zoo, "float64_outputs", fails)
    assert torchvision_zoo.main(argv) == 0
    captured = capsys.readouterr()
    assert captured.out.splitlines()[3].split()[-3:] == ["n/a"] * 3, captured.out
    assert "float64 reference of resnet18-classic.onnx: n/a (no such operator)" in captured.err
