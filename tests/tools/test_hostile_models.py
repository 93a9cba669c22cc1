"""Hostile models: ONNX names made of quotes, newlines, unicode, MLIR punctuation and Python
code go through the command-line tools (nnlayout-import -> nnlayout-opt -> nnlayout-run) and
compute the right answer; nothing from a model or an input file is ever evaluated as code or
unpickled. (External data escaping the model's folder, pickled .npy inputs and lying .npy
headers are refused: see `test_bad_files.py`.)"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnxruntime
import pytest
from onnx import TensorProto, helper, numpy_helper

pytestmark = pytest.mark.slow  # hostile models through real processes (full tier)

ROOT = Path(__file__).resolve().parents[2]
CODE = "__import__('os').system('touch PWNED')"
HOSTILE = [
    'x"quote',
    "new\nline",
    "ünïcødé→名前",
    "%percent",
    "@at",
    "{braces}}",
    'back\\slash"',
    CODE,
    "'; import os; os.system('touch PWNED'); '",
    "0digit",
    'loc("here":1:2)',
    '#layout.layout<"NCHW8c">',
    "// -----",
    "\\x00\\u0041",
]


def tool(module: str, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", f"nnlayout.tools.{module}", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
    )


def hostile_model() -> tuple[bytes, dict[str, np.ndarray]]:
    """A conv -> relu -> (add a constant, per hostile name) -> sigmoid model; every value,
    node and initializer is named after a hostile string. Returns it and its inputs."""
    rng = np.random.default_rng(3)
    x_name, weight_name = HOSTILE[0], HOSTILE[1]
    initializers = {weight_name: rng.standard_normal((5, 3, 3, 3)).astype(np.float32)}
    nodes = [
        helper.make_node(
            "Conv", [x_name, weight_name], [HOSTILE[2]], name=HOSTILE[3], pads=[1, 1, 1, 1]
        ),
        helper.make_node("Relu", [HOSTILE[2]], [HOSTILE[4]], name=CODE),
    ]
    current = HOSTILE[4]
    for index, name in enumerate(HOSTILE[5:]):
        constant = f"{name} const{index}"
        initializers[constant] = rng.standard_normal(
            (1, 5, 1, 1) if index % 2 else (1, 5, 6, 6)
        ).astype(np.float32)
        nodes.append(
            helper.make_node("Add", [current, constant], [f"{name}/{index}"], name=f"{name} node")
        )
        current = f"{name}/{index}"
    output = f"{CODE} out\n"
    nodes.append(helper.make_node("Sigmoid", [current], [output], name="\\"))
    graph = helper.make_graph(
        nodes,
        CODE,
        [helper.make_tensor_value_info(x_name, TensorProto.FLOAT, [2, 3, 6, 6])],
        [helper.make_tensor_value_info(output, TensorProto.FLOAT, None)],
        [numpy_helper.from_array(v, n) for n, v in initializers.items()],
    )
    model = helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", 17)], producer_name=CODE, doc_string=CODE
    )
    return model.SerializeToString(), {x_name: rng.standard_normal((2, 3, 6, 6)).astype(np.float32)}


def test_hostile_names_import_print_parse_and_run(tmp_path: Path) -> None:
    data, feeds = hostile_model()
    (tmp_path / "m.onnx").write_bytes(data)
    (expected,) = onnxruntime.InferenceSession(data, providers=["CPUExecutionProvider"]).run(
        None, feeds
    )
    np.save(tmp_path / "x.npy", next(iter(feeds.values())))

    imported = tool("import_onnx", "m.onnx", "-o", "m.mlir", cwd=tmp_path)
    assert imported.returncode == 0, imported.stderr
    assert (tmp_path / "m.npz").is_file()  # the weight went to the archive, under a safe key
    compiled = tool(
        "opt", "m.mlir", "-p", "default-pipeline{target=avx512}", "-o", "c.mlir", cwd=tmp_path
    )
    assert compiled.returncode == 0, compiled.stderr
    reprinted = tool("opt", "c.mlir", cwd=tmp_path)  # the printed IR parses back as printed
    assert reprinted.returncode == 0, reprinted.stderr
    assert reprinted.stdout == (tmp_path / "c.mlir").read_text(encoding="utf-8")
    for mlir in ("m.mlir", "c.mlir"):
        ran = tool("run", mlir, "--input", "x.npy", "--output-dir", f"out-{mlir}", cwd=tmp_path)
        assert ran.returncode == 0, ran.stderr
        np.testing.assert_allclose(
            np.load(tmp_path / f"out-{mlir}" / "result0.npy", allow_pickle=False),
            expected,
            rtol=1e-5,
            atol=1e-5,
        )
    assert not (tmp_path / "PWNED").exists() and not (ROOT / "PWNED").exists()


def test_hostile_error_messages_stay_one_line(tmp_path: Path) -> None:
    """A node with a hostile name that nnlayout refuses: the message names it on one line
    (newlines in names are not echoed raw) and runs nothing."""
    node = helper.make_node("Conv", ["x", "w"], ["y"], name=f"{CODE}\nsecond line")
    graph = helper.make_graph(
        [node],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 5, 4, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(np.ones((2, 3, 1, 1), np.float32), "w")],
    )
    (tmp_path / "m.onnx").write_bytes(
        helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString()
    )
    result = tool("import_onnx", "m.onnx", "-o", "m.mlir", cwd=tmp_path)
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert not (tmp_path / "PWNED").exists() and not (tmp_path / "m.mlir").exists()


# ----------------------------------------------------- nothing is evaluated as code
def source_files() -> list[Path]:
    """nnlayout's own Python files (not its tests, which write pickles on purpose)."""
    skip = {".venv", "tests", "lit", "__pycache__", "build"}
    return [p for p in ROOT.rglob("*.py") if not skip & set(p.relative_to(ROOT).parts)]


def calls(path: Path) -> list[tuple[str, ast.Call]]:
    """(dotted name of the callee, call) for every call in the file."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Call):
            found.append((ast.unparse(node.func), node))
    return found


def test_no_eval_exec_or_pickle_in_the_sources() -> None:
    offenders = []
    for path in source_files():
        for name, call in calls(path):
            where = f"{path.relative_to(ROOT)}:{call.lineno}: {name}"
            if name in (
                "eval",
                "exec",
                "compile",
                "pickle.load",
                "pickle.loads",
                "__import__",
                "os.system",
            ):
                offenders.append(where)
            keywords = {k.arg: k.value for k in call.keywords}
            if name in ("np.load", "numpy.load"):
                pickle = keywords.get("allow_pickle")
                if not (isinstance(pickle, ast.Constant) and pickle.value is False):
                    offenders.append(f"{where} without allow_pickle=False")
            if "allow_pickle" in keywords and not (
                isinstance(keywords["allow_pickle"], ast.Constant)
                and keywords["allow_pickle"].value is False
            ):
                offenders.append(f"{where} with allow_pickle not False")
    assert not offenders, offenders
    assert len(source_files()) > 20  # the scan saw the package


def test_the_scan_catches_an_unsafe_load(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The scan above can fail: a file with np.load without allow_pickle is an offender."""
    bad = tmp_path / "bad.py"
    bad.write_text("import numpy as np\nnp.load('x.npy')\neval('1')\n")
    names = [name for name, _ in calls(bad)]
    assert names == ["np.load", "eval"]
    monkeypatch.setattr(sys.modules[__name__], "source_files", lambda: [bad] * 21)
    monkeypatch.setattr(sys.modules[__name__], "ROOT", tmp_path)
    with pytest.raises(AssertionError, match="without allow_pickle=False"):
        test_no_eval_exec_or_pickle_in_the_sources()
