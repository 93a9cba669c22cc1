"""The command-line tools' behaviour on good and bad input: exit codes, messages, no traceback;
pipeline syntax, --verify-diagnostics and --split-input-file, outputs and their weights files
(never written over an input). `opt`, `EXAMPLE` and `GOOD` serve the other test_cli_* files."""

import subprocess
import sys
from pathlib import Path

import pytest

from nnlayout.tests.helpers import tool_process

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "small_cnn.mlir"


def opt(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    """nnlayout-opt on `args`: in this process, but as a process where a plugin is loaded
    (its passes would stay registered here) and in the first test (tool_process)."""
    if "--load" not in args:
        return tool_process("nnlayout-opt", args, stdin)
    return subprocess.run(
        [sys.executable, "-m", "nnlayout.tools.opt", *args],
        capture_output=True,
        text=True,
        input=stdin,
    )


def test_example_round_trips() -> None:
    first = subprocess.run(
        [sys.executable, "-m", "nnlayout.tools.opt", str(EXAMPLE)], capture_output=True, text=True
    )
    assert first.returncode == 0, first.stderr
    second = opt("-", stdin=first.stdout)
    assert second.returncode == 0, second.stderr
    assert second.stdout == first.stdout


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("random words {{ ]]", "error: Operation random is not registered"),
        (
            "func.func @f(%x: tensor<2xf32>) -> tensor<2xf32> {\n"
            "  %0 = nn.frobnicate %x : tensor<2xf32>\n  func.return %0 : tensor<2xf32>\n}",
            "<stdin>:2:8: error: Operation nn.frobnicate is not registered",
        ),
        (
            "func.func @f(%x: tensor<1x3x8x8xf32>, %w: tensor<4x4x3x3xf32>) -> tensor<1x4x6x6xf32> {\n"
            "  %0 = nn.conv2d %x, %w strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1] groups 1"
            " : (tensor<1x3x8x8xf32>, tensor<4x4x3x3xf32>) -> tensor<1x4x6x6xf32>\n"
            "  func.return %0 : tensor<1x4x6x6xf32>\n}",
            "<stdin>:2:3: error: nn.conv2d: input has 3 channels but weight expects 4 (groups=1)",
        ),
    ],
    ids=["random-text", "unknown-op", "conv-channel-mismatch"],
)
def test_bad_input_is_one_clean_error(text: str, message: str) -> None:
    result = opt("-", stdin=text)
    assert result.returncode == 1
    assert message in result.stderr
    assert "Traceback" not in result.stderr
    assert result.stdout == ""


def test_a_pipeline_may_space_its_passes() -> None:
    """As in MLIR's pipeline syntax; a comma inside a quoted option does not split."""
    spaced = opt(str(EXAMPLE), "-p", "select-dispatch{target=avx2} , insert-layouts")
    assert spaced.returncode == 0, spaced.stderr
    assert (
        spaced.stdout
        == opt(str(EXAMPLE), "-p", "select-dispatch{target=avx2},insert-layouts").stdout
    )
    quoted = opt(str(EXAMPLE), "-p", 'plan-memory{svg="no,such/dir.svg"}')
    assert quoted.returncode == 1
    assert "error: plan-memory: only bufferized functions" in quoted.stderr
    inside = opt(str(EXAMPLE), "-p", "select-dispatch { target=avx2 } ,insert-layouts{ }")
    assert inside.returncode == 0, inside.stderr
    assert inside.stdout == spaced.stdout


@pytest.mark.parametrize(
    ("spec", "where"), [("cse,", 5), ("cse , ", 6), (",cse", 1), (",", 1), ("cse, ,dce", 5)]
)
def test_a_pipeline_with_a_comma_too_many_is_refused(spec: str, where: int) -> None:
    result = opt(str(EXAMPLE), "-p", spec)
    assert result.returncode == 1
    assert result.stderr == (
        f"error: bad pass pipeline '{spec}': Expected pass name here (at character {where})\n"
    )


def test_a_bare_bool_option_is_true_as_in_mlir() -> None:
    bare = opt(str(EXAMPLE), "-p", "select-dispatch{target=avx2 remarks},insert-layouts")
    assert bare.returncode == 0, bare.stderr
    assert (
        bare.stdout
        == opt(
            str(EXAMPLE), "-p", "select-dispatch{target=avx2 remarks=true},insert-layouts"
        ).stdout
    )
    assert "remark:" in bare.stderr


def test_spaces_around_an_option_equals_get_a_hint_and_the_users_text() -> None:
    """The message quoted the pipeline as respelled inside and a column in that respelling
    (character 25 of 'default-pipeline{target = avx2}')."""
    spec = "default-pipeline{ target = avx2 }"
    result = opt(str(EXAMPLE), "-p", spec)
    assert result.returncode == 1
    assert result.stderr == (
        f"error: bad pass pipeline '{spec}': Expected argument name "
        "here (options are name=value, without spaces around '=')\n"
    )


@pytest.mark.parametrize("names", ["", ",", "cse,,dce", "cse,"])
def test_print_ir_needs_pass_names(names: str) -> None:
    """An empty name is an error (else nothing would be printed, silently)."""
    result = opt(str(EXAMPLE), "-p", "cse", f"--print-ir-after={names}")
    assert result.returncode == 1
    assert result.stderr == (
        "error: --print-ir-after takes pass names separated by commas; one is empty\n"
    )


GOOD = "func.func @f(%x: tensor<2xf32>) -> tensor<2xf32> {\n{}  func.return %x : tensor<2xf32>\n}\n"


@pytest.mark.parametrize(
    ("annotation", "problem"),
    [
        (
            "  // expected-error @+1 {{never}}\n",
            "<stdin>:3: expected error not produced: {{never}}",
        ),
        (
            "  // expected-remark @+1 {{never}}\n",
            "<stdin>:3: expected remark not produced: {{never}}",
        ),
        (
            "  // expected-warning @+1 {{never}}\n",
            "<stdin>:3: expected warning not produced: {{never}}",
        ),
    ],
    ids=["error", "remark", "warning"],
)
def test_verify_diagnostics_fails_on_an_unmet_expectation(annotation: str, problem: str) -> None:
    result = opt("--verify-diagnostics", "-", stdin=GOOD.replace("{}", annotation))
    assert result.returncode == 1
    assert result.stderr.startswith("error: diagnostics did not match:\n" + problem)


def save_conv_model(path: Path) -> None:
    """A Conv whose weight (216 elements) goes to the weights file on import."""
    import numpy as np
    from onnx import TensorProto, helper, numpy_helper, save

    weight = numpy_helper.from_array(np.ones((8, 3, 3, 3), np.float32), "w")
    graph = helper.make_graph(
        [helper.make_node("Conv", ["x", "w"], ["y"], pads=[1, 1, 1, 1])],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [weight],
    )
    save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)


def test_an_output_in_another_folder_still_finds_its_weights(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """nn.weights is relative to the IR file; -o elsewhere rewrites it for the new place.
    The tools run in this process (in tmp_path), but for the one writing to /dev/stdout, which
    only a process of its own has as its output."""
    import numpy as np

    save_conv_model(tmp_path / "m.onnx")
    monkeypatch.chdir(tmp_path)
    names = {"import_onnx": "nnlayout-import", "opt": "nnlayout-opt", "run": "nnlayout-run"}

    def tool(name: str, *args: str) -> subprocess.CompletedProcess[str]:
        done = tool_process(names[name], args)
        assert done.returncode == 0, done.stderr
        return done

    tool("import_onnx", "m.onnx", "-o", "m.mlir")
    (tmp_path / "build").mkdir()
    tool("opt", "m.mlir", "-p", "default-pipeline", "-o", "build/planned.mlir")
    assert 'nn.weights = "../m.npz"' in (tmp_path / "build" / "planned.mlir").read_text()
    printed = subprocess.run(
        [sys.executable, "-m", "nnlayout.tools.opt", "m.mlir", "-o", "/dev/stdout"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert printed.returncode == 0, printed.stderr
    assert 'nn.weights = "m.npz"' in printed.stdout
    tool("opt", "m.mlir", "--verify-diagnostics", "-o", "build/checked.mlir")
    assert 'nn.weights = "../m.npz"' in (tmp_path / "build" / "checked.mlir").read_text()
    for ir, out in (("m.mlir", "a"), ("build/planned.mlir", "b")):
        tool("run", ir, "--random-inputs", "0", "--output-dir", out)
    np.testing.assert_allclose(
        np.load(tmp_path / "b" / "result0.npy"),
        np.load(tmp_path / "a" / "result0.npy"),
        rtol=1e-5,
        atol=1e-5,
    )


def test_split_input_file_splits_at_marker_lines_and_reports_every_chunk() -> None:
    """A `// -----` banner with more dashes does not split; each failing chunk is reported,
    in order, with its own line (as mlir-opt does)."""
    bad = (
        "func.func @f(%x: tensor<2xf32>) -> tensor<2xf32> {\n"
        "  %0 = nn.frobnicate %x : tensor<2xf32>\n  func.return %0 : tensor<2xf32>\n}\n"
    )
    good = GOOD.replace("{}", "")
    result = opt(
        "--split-input-file",
        "-",
        stdin="// ------------ helpers\n" + bad + "// -----\n" + good + "// -----\n" + bad,
    )
    assert result.returncode == 1
    assert [line for line in result.stderr.splitlines() if "error" in line] == [
        "<stdin>:3:8: error: Operation nn.frobnicate is not registered",
        "<stdin>:12:8: error: Operation nn.frobnicate is not registered",
    ]
    assert result.stdout.count("func.func @f") == 1  # the chunk that compiled


@pytest.mark.parametrize("args", [["--list-passes"], [str(EXAMPLE), "-p", "default-pipeline"]])
def test_a_reader_that_goes_away_is_no_internal_error(args: list[str]) -> None:
    """`nnlayout-opt --list-passes | head -3`: the closed pipe stops the tool quietly, not as
    "internal error: BrokenPipeError ... this is a bug in nnlayout"."""
    process = subprocess.Popen(
        [sys.executable, "-m", "nnlayout.tools.opt", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None and process.stderr is not None
    process.stdout.close()  # before the tool writes: its write meets a closed pipe
    stderr = process.stderr.read()
    process.wait()
    assert stderr == ""
    assert process.returncode == 1


def test_import_refuses_a_negative_inline_limit(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "nnlayout.tools.import_onnx", "m.onnx", "--inline-limit", "-5"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert result.returncode == 2  # a usage error, as argparse reports them
    assert result.stderr.endswith(
        "error: argument --inline-limit: expected a non-negative integer, got '-5'\n"
    )


def test_a_tool_prints_a_warning_as_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    """As where oneDNN does not load: `warning: ...`, not Python's file:line and source."""
    import warnings

    from nnlayout.tools.driver import run_tool

    def main(args: list[str]) -> int:
        warnings.warn(
            "oneDNN is not available (test); using the numpy kernels", RuntimeWarning, stacklevel=1
        )
        return 0

    assert run_tool(main, []) == 0
    assert capsys.readouterr().err == (
        "warning: oneDNN is not available (test); using the numpy kernels\n"
    )


def test_verify_diagnostics_names_the_file_of_an_explicit_location() -> None:
    """An error located by loc("other.mlir":7:3) is in another file: no annotation here
    matches it, and it is reported there (not as line 7 of the input)."""
    text = (
        "func.func @f(%x: tensor<1x3x8x8xf32>, %w: tensor<4x4x3x3xf32>) -> "
        "tensor<1x4x6x6xf32> {\n"
        "  // expected-error @+1 {{input has 3 channels}}\n"
        "  %0 = nn.conv2d %x, %w strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1] groups 1"
        " : (tensor<1x3x8x8xf32>, tensor<4x4x3x3xf32>) -> tensor<1x4x6x6xf32>"
        ' loc("other.mlir":7:3)\n'
        "  func.return %0 : tensor<1x4x6x6xf32>\n}\n"
    )
    result = opt("--verify-diagnostics", "-", stdin=text)
    assert result.returncode == 1
    assert "other.mlir:7:3: unexpected error: nn.conv2d: input has 3 channels" in result.stderr
    assert "<stdin>:3: expected error not produced" in result.stderr


WEIGHTED = (
    'builtin.module attributes {nn.weights = "w.npz"} {\n'
    "  func.func @f() -> tensor<2xf32> {\n"
    '    %0 = nn.constant external "w" : tensor<2xf32>\n'
    "    func.return %0 : tensor<2xf32>\n  }\n}\n"
)


@pytest.mark.parametrize("output", ["w.npz", "./sub/../w.npz"])
def test_opt_refuses_to_overwrite_its_weights(tmp_path: Path, output: str) -> None:
    """As nnlayout-translate: -o naming the module's weights file (nn.weights) replaced the
    weights with IR, exit 0."""
    (tmp_path / "sub").mkdir()
    (tmp_path / "m.mlir").write_text(WEIGHTED)
    (tmp_path / "w.npz").write_bytes(b"weights")
    result = subprocess.run(
        [sys.executable, "-m", "nnlayout.tools.opt", "m.mlir", "-o", output],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert result.returncode == 1
    assert result.stderr == (
        f"error: '{output}' would overwrite an input; choose another -o name\n"
    )
    assert (tmp_path / "w.npz").read_bytes() == b"weights"
    assert (tmp_path / "m.mlir").read_text() == WEIGHTED


def test_opt_may_rewrite_its_input_in_place(tmp_path: Path) -> None:
    """As mlir-opt: the input is read whole before -o is written."""
    (tmp_path / "m.mlir").write_text(
        "func.func @f(%x: tensor<2xf32>) -> tensor<2xf32> {\n"
        "  %y = nn.relu %x : tensor<2xf32>\n  func.return %y : tensor<2xf32>\n}\n"
    )
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "nnlayout.tools.opt",
            "m.mlir",
            "-o",
            "m.mlir",
            "-p",
            "select-dispatch{target=ref}",
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stderr
    assert '#nn.kernel<"' in (tmp_path / "m.mlir").read_text()


def test_opt_refuses_to_overwrite_the_weights_of_a_chunk_that_failed(tmp_path: Path) -> None:
    """The chunks that compiled are written to -o; it must not be a failed chunk's weights."""
    bad = WEIGHTED.replace("@f() -> tensor<2xf32>", "@f() -> tensor<3xf32>")
    (tmp_path / "m.mlir").write_text(bad + "// -----\n" + GOOD.replace("{}", ""))
    (tmp_path / "w.npz").write_bytes(b"weights")
    result = subprocess.run(
        [sys.executable, "-m", "nnlayout.tools.opt", "m.mlir", "--split-input-file", "-o", "w.npz"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert result.returncode == 1
    assert result.stderr == "error: 'w.npz' would overwrite an input; choose another -o name\n"
    assert (tmp_path / "w.npz").read_bytes() == b"weights"


@pytest.mark.parametrize(
    ("output", "message"),
    [
        ("m.onnx", "error: 'm.onnx' would overwrite an input; choose another -o name"),
        (
            "m.npz",
            "error: -o 'm.npz' is also the weights file (OUT.npz beside OUT.mlir); give -o "
            "a .mlir name",
        ),
    ],
    ids=["the-model", "its-own-weights"],
)
def test_import_refuses_an_output_over_its_input_or_weights(
    tmp_path: Path, output: str, message: str
) -> None:
    """-o m.onnx replaced the model with IR; -o m.npz wrote the weights, then the IR over them."""
    save_conv_model(tmp_path / "m.onnx")
    model = (tmp_path / "m.onnx").read_bytes()
    result = subprocess.run(
        [sys.executable, "-m", "nnlayout.tools.import_onnx", "m.onnx", "-o", output],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert result.returncode == 1
    assert result.stderr == message + "\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.onnx"]
    assert (tmp_path / "m.onnx").read_bytes() == model
