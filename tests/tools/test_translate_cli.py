"""`nnlayout-translate` from the command line, and generated code from hostile models.

No string of a model reaches the generated code unescaped: a function name holding quotes,
a newline, `\"\"\"` and `__import__('os')`, an external constant and a weights file named
likewise, SSA names that are dunders, keywords, the generated module's own names or not
Python identifiers at all. The generated file must parse, contain only the statements and
calls code generation writes, and compute the interpreter's results without running anything
else (no file appears).
"""

from __future__ import annotations

import ast
import contextlib
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest

from nnlayout.diagnostics import UserError
from nnlayout.ir.context import make_context
from nnlayout.ir.parser import parse_module
from nnlayout.lowering.to_numpy import import_generated, translate
from nnlayout.runtime.interpreter import Interpreter
from nnlayout.tests.helpers import tool_process
from nnlayout.tools.driver import parse_pipeline, run_pipeline
from nnlayout.transforms import get_all_passes

ROOT = Path(__file__).resolve().parents[2]
EVIL = "'''\"\"\"\n__import__('os').system('touch PWNED')#"
EVIL_MLIR = "'''\\\"\\\"\\\"\\n__import__('os').system('touch PWNED')#"  # the same, escaped
WEIGHTS_FILE = "w\"'\n.npz"
HOSTILE = f"""
builtin.module attributes {{nn.weights = "w\\"'\\n.npz"}} {{
  func.func @"{EVIL_MLIR}\\C3\\B1\\E2\\80\\A8"(%__import__: tensor<1x3x8x8xf32>) -> tensor<1x4x8x8xf32> {{
    %class = nn.constant external "{EVIL_MLIR}" : tensor<4x3x3x3xf32>
    %a.b-c$ = nn.conv2d %__import__, %class strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x8x8xf32>
    %__builtins__ = nn.sigmoid %a.b-c$ : tensor<1x4x8x8xf32>
    %ARENA = nn.relu %__builtins__ : tensor<1x4x8x8xf32>
    %run = nn.max_pool2d %ARENA kernel [3, 3] strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] : tensor<1x4x8x8xf32> -> tensor<1x4x8x8xf32>
    %v0 = nn.neg %run : tensor<1x4x8x8xf32>
    func.return %v0 : tensor<1x4x8x8xf32>
  }}
}}
"""
# Every call the generated code may make (K[i] calls are checked apart).
ALLOWED_CALLS = {
    "Program.load",
    "aligned_empty",
    "np.ndarray",
    "PROGRAM.arguments",
    "np.errstate",
    "fill_border",
    "np.array",
    "PROGRAM.on",
    "PROGRAM.release_constants",
}


def write_hostile(folder: Path) -> Path:
    with (
        zipfile.ZipFile(folder / WEIGHTS_FILE, "w") as archive,
        archive.open(f"{EVIL}.npy", "w") as member,
    ):
        weights = np.random.default_rng(0).standard_normal((4, 3, 3, 3)).astype(np.float32)
        np.lib.format.write_array(member, weights, allow_pickle=False)
    source = folder / "hostile.mlir"
    source.write_text(HOSTILE, encoding="utf-8")
    return source


@pytest.mark.parametrize("target", ["ref", "avx2"])
def test_hostile_names_stay_data(
    target: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # where a `touch PWNED` would land
    source = write_hostile(tmp_path)
    ctx = make_context()
    module = parse_module(ctx, source.read_text(encoding="utf-8"), str(source))
    x = np.random.default_rng(1).standard_normal((1, 3, 8, 8)).astype(np.float32)
    expected = Interpreter(module, source_path=str(source)).run([x])
    run_pipeline(
        parse_pipeline(f"default-pipeline{{target={target}}}", get_all_passes()), ctx, module
    )
    translation = translate(module, tmp_path / "model.py", source_path=str(source))

    code = translation.code.read_text(encoding="utf-8")
    tree = ast.parse(code)
    assert all(
        isinstance(
            s, ast.Expr | ast.Import | ast.ImportFrom | ast.Assign | ast.Delete | ast.FunctionDef
        )
        for s in tree.body
    )
    assert [s.name for s in tree.body if isinstance(s, ast.FunctionDef)] == ["run"]
    # Kernels bound to their buffers at import: names whose only definition is PROGRAM.on(...).
    steps = {
        ast.unparse(s.targets[0])
        for s in tree.body
        if isinstance(s, ast.Assign)
        and isinstance(s.value, ast.Call)
        and ast.unparse(s.value.func) == "PROGRAM.on"
    }
    assert steps
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            callee = ast.unparse(node.func)
            assert (
                callee in ALLOWED_CALLS
                or callee in steps
                or (isinstance(node.func, ast.Subscript) and ast.unparse(node.func.value) == "K")
            ), callee
        if isinstance(node, ast.Name) and node.id in steps:  # bound once, never rebound
            assert (
                isinstance(node.ctx, ast.Load)
                or sum(
                    ast.unparse(s.targets[0]) == node.id
                    for s in tree.body
                    if isinstance(s, ast.Assign)
                )
                == 1
            ), node.id
        if isinstance(node, ast.Name | ast.arg):
            name = node.id if isinstance(node, ast.Name) else node.arg
            assert name.isascii() and (name == "__file__" or not name.startswith("__")), name
    entry = next(
        s.value
        for s in tree.body
        if isinstance(s, ast.Assign) and ast.unparse(s.targets[0]) == "ENTRY"
    )
    assert ast.literal_eval(entry) == f"{EVIL}\u00f1\u2028"

    generated = import_generated(translation.code)
    results = generated.run(x)
    with pytest.raises(UserError, match=r"argument 1 \(%__import__\): expected shape"):
        generated.run(x[..., :7])
    np.testing.assert_allclose(results[0], expected[0], rtol=1e-5, atol=1e-5)
    assert {p.name for p in tmp_path.iterdir()} - {"__pycache__"} == {
        "hostile.mlir",
        WEIGHTS_FILE,
        "model.py",
        "model.planned.mlir",
        "model.weights.npz",
    }


def tool(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", f"nnlayout.tools.{args[0]}", *args[1:]],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
    )


def in_process(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """What `tool` gives, from the tool's entry run in this process in `cwd`
    (`tool_process`): for the tests of messages and exit statuses, which need no process
    of their own (`test_cli_translates_and_runs` starts real ones)."""
    with contextlib.chdir(cwd):
        return tool_process(f"nnlayout-{args[0]}", args[1:])


def test_cli_translates_and_runs(tmp_path: Path) -> None:
    small = ROOT / "examples" / "small_cnn.mlir"
    done = tool(
        "translate",
        str(small),
        "-p",
        "default-pipeline{target=avx2}",
        "--to",
        "numpy",
        "-o",
        "net.py",
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    assert {"net.py", "net.planned.mlir"} <= {p.name for p in tmp_path.iterdir()}
    summaries = []
    for backend in ("interpreter", "generated"):
        done = tool(
            "run",
            str(small),
            "-p",
            "default-pipeline{target=avx2}",
            "--random-inputs",
            "3",
            "--output-dir",
            backend,
            "--backend",
            backend,
            cwd=tmp_path,
        )
        assert done.returncode == 0, done.stderr
        summaries.append(done.stdout)
    assert summaries[0] == summaries[1]


def test_cli_refuses_unplanned_input(tmp_path: Path) -> None:
    done = in_process(
        "translate", str(ROOT / "examples" / "small_cnn.mlir"), "-o", "net.py", cwd=tmp_path
    )
    assert done.returncode == 1
    assert "@net is not planned" in done.stderr and "default-pipeline" in done.stderr
    assert "Traceback" not in done.stderr and not (tmp_path / "net.py").exists()


def test_cli_reports_unwritable_output_and_overwriting_the_input(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("")
    small = str(ROOT / "examples" / "small_cnn.mlir")
    done = in_process(
        "translate", small, "-p", "default-pipeline", "-o", "file/net.py", cwd=tmp_path
    )
    assert done.returncode == 1
    assert done.stderr == "error: the directory of -o 'file/net.py', 'file', is not a directory\n"
    done = in_process("translate", small, "-o", "missing/net.py", cwd=tmp_path)
    assert done.returncode == 1
    assert done.stderr == (
        "error: the directory of -o 'missing/net.py', 'missing', does not exist\n"
    )
    planned = in_process(
        "opt", small, "-p", "default-pipeline", "-o", "net.planned.mlir", cwd=tmp_path
    )
    assert planned.returncode == 0, planned.stderr
    done = in_process("translate", "net.planned.mlir", "-o", "net.py", cwd=tmp_path)
    assert done.returncode == 1
    assert "'net.planned.mlir' would overwrite an input" in done.stderr


@pytest.mark.parametrize("output", ["-", "net.txt"])
def test_cli_wants_a_python_file_name(tmp_path: Path, output: str) -> None:
    """Files go beside the module (NAME.planned.mlir, ...): `-o -` wrote ones named `-`."""
    done = in_process(
        "translate",
        str(ROOT / "examples" / "small_cnn.mlir"),
        "-p",
        "default-pipeline",
        "-o",
        output,
        cwd=tmp_path,
    )
    assert done.returncode == 1
    assert done.stderr == (
        f"error: -o names the Python module to write, NAME.py "
        f"(NAME.planned.mlir and NAME.weights.npz go beside it), not "
        f"'{output}'\n"
    )
    assert not list(tmp_path.iterdir())
