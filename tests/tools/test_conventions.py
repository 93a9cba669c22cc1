"""The tools follow mlir-opt's conventions: pipelines anchored on `builtin.module(...)` and
`--pass-pipeline=`, `--verify-diagnostics` failing on any diagnostic nobody expected,
`--list-passes` describing each pass, its options and the targets, and every `--help` whole."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from nnlayout.diagnostics import UserError
from nnlayout.examples import make_models
from nnlayout.tests.helpers import tool_process
from nnlayout.tools.driver import parse_pipeline
from nnlayout.transforms import get_all_passes

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "small_cnn.mlir"


def opt(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    """nnlayout-opt on `args`: in this process (`tool_process`), but as a process of its own
    where it lists passes (a fresh process's: tests register their own in this one)."""
    if "--list-passes" not in args:
        return tool_process("nnlayout-opt", args, stdin)
    return subprocess.run(
        [sys.executable, "-m", "nnlayout.tools.opt", *args],
        capture_output=True,
        text=True,
        input=stdin,
    )


@pytest.mark.parametrize(
    "spec",
    [
        "builtin.module(select-dispatch{target=avx2 padding=false},insert-layouts)",
        " builtin.module ( select-dispatch{target=avx2 padding=false}, insert-layouts ) ",
        "any(select-dispatch{target=avx2 padding=false},insert-layouts)",
    ],
)
def test_a_pipeline_anchored_on_the_module_is_the_same_pipeline(spec: str) -> None:
    plain = parse_pipeline(
        "select-dispatch{target=avx2 padding=false},insert-layouts", get_all_passes()
    )
    assert parse_pipeline(spec, get_all_passes()).passes == plain.passes


def test_a_quoted_parenthesis_does_not_close_the_anchor() -> None:
    (one,) = parse_pipeline('builtin.module(plan-memory{svg="a).svg"})', get_all_passes()).passes
    assert one.svg == "a).svg"  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        (
            "builtin.module(func.func(cse),dce)",
            "a pipeline nested on 'func.func' is not supported; nnlayout's passes run on the "
            "whole module",
        ),
        ("func.func(cse)", "a pipeline nested on 'func.func' is not supported"),
        ("builtin.module(cse", "the '(' after 'builtin.module' must close at the end"),
        ("builtin.module(cse),dce", "the '(' after 'builtin.module' must close at the end"),
    ],
)
def test_a_pipeline_nested_on_another_op_is_refused_clearly(spec: str, message: str) -> None:
    with pytest.raises(UserError, match="bad pass pipeline") as raised:
        parse_pipeline(spec, get_all_passes())
    assert message in raised.value.message


def test_pass_pipeline_option_as_mlir_opt_spells_it() -> None:
    plain = opt(str(EXAMPLE), "-p", "select-dispatch{target=avx2},insert-layouts")
    anchored = opt(
        str(EXAMPLE), "--pass-pipeline=builtin.module(select-dispatch{target=avx2},insert-layouts)"
    )
    assert plain.returncode == anchored.returncode == 0, anchored.stderr
    assert anchored.stdout == plain.stdout and "#nn.kernel<" in plain.stdout


UNEXPECTED_REMARK = """func.func @f(%x: tensor<1x8x8x8xf32>) -> tensor<1x8x8x8xf32> {
  %w = nn.constant dense<0.1> : tensor<8x8x3x3xf32>
  {annotation}%c = nn.conv2d %x, %w strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 : (tensor<1x8x8x8xf32>, tensor<8x8x3x3xf32>) -> tensor<1x8x8x8xf32>
  func.return %c : tensor<1x8x8x8xf32>
}
"""
LAYOUTS = "select-dispatch{target=avx2},insert-layouts,propagate-layouts"


def test_verify_diagnostics_fails_on_an_unexpected_remark_and_lists_it() -> None:
    """mlir-opt fails on a remark nobody expected; so does nnlayout-opt, naming where."""
    text = UNEXPECTED_REMARK.replace("{annotation}", "")
    result = opt("-", "--verify-diagnostics", "-p", LAYOUTS, stdin=text)
    assert result.returncode == 1
    assert result.stderr == (
        "error: diagnostics did not match:\n<stdin>:3:3: unexpected remark: [propagate-layouts] "
        "nn.conv2d: operand 0 reordered from plain to NCHW8c: conv2d_nchwc needs NCHW8c\n"
    )
    expected = "// expected-remark @+1 {{reordered from plain to NCHW8c}}\n  "
    annotated = UNEXPECTED_REMARK.replace("{annotation}", expected)
    passing = opt("-", "--verify-diagnostics", "-p", LAYOUTS, stdin=annotated)
    assert passing.returncode == 0, passing.stderr


def test_verify_diagnostics_matches_each_annotation_once() -> None:
    """Two annotations need two diagnostics: one remark does not meet both."""
    twice = "// expected-remark @+2 {{reordered}}\n  // expected-remark @+1 {{reordered}}\n  "
    result = opt(
        "-",
        "--verify-diagnostics",
        "-p",
        LAYOUTS,
        stdin=UNEXPECTED_REMARK.replace("{annotation}", twice),
    )
    assert result.returncode == 1
    assert result.stderr == (
        "error: diagnostics did not match:\n"
        "<stdin>:5: expected remark not produced: {{reordered}}\n"
    )


_REGISTERED = (
    "from nnlayout.transforms import get_all_passes; from nnlayout.kernels.targets import TARGETS;"
    "print(*get_all_passes()); print(*TARGETS)"
)


def test_list_passes_describes_each_pass_its_options_and_the_targets() -> None:
    """Under each pass: its one-line summary, then each option with its type and default;
    then every target a `target` option takes (the registered ones, and host)."""

    listed = opt("--list-passes")
    assert listed.returncode == 0, listed.stderr
    heading, passes, targets = listed.stdout.rstrip("\n").split("\n\n")
    blocks: dict[str, list[str]] = {}
    for line in passes.splitlines():
        if line.startswith("    "):
            blocks[list(blocks)[-1]].append(line.strip())
        else:
            blocks[line] = []
    # The passes and targets of a fresh process (tests register their own in this one).
    fresh = subprocess.run(
        [sys.executable, "-c", _REGISTERED],
        capture_output=True,
        text=True,
    )
    registered_passes, registered_targets = fresh.stdout.splitlines()
    assert {head.split("{")[0] for head in blocks} == set(registered_passes.split()), fresh.stderr
    for head, body in blocks.items():
        assert body and body[0].endswith(".") and body[0][0].isupper(), head
        assert "(no description)" not in body[0] and not body[0].startswith(head), head
        assert len(body[0]) < 200, head  # one sentence, not a paragraph
    assert blocks[
        "select-dispatch{target=host padding=true remarks=false activation_format=auto}"
    ] == [
        "Choose every op's kernel.",
        "target: str = host",
        "padding: bool = true",
        "remarks: bool = false",
        "activation_format: str = auto",
    ]
    assert blocks["fuse-post-ops{target padding nnan=false remarks=false}"][1:3] == [
        "target: str | None = unset",
        "padding: bool | None = unset",
    ]
    assert targets.startswith(
        "Targets (the target option of convert-to-bf16, default-pipeline, fuse-matmul-post-ops, "
        "fuse-post-ops,"
    )
    names = [line.split()[0] for line in targets.splitlines()[1:]]
    assert names == ["host", *registered_targets.split()]


def test_list_passes_says_when_a_plugin_pass_has_no_description(tmp_path: Path) -> None:
    plugin = tmp_path / "plugin.py"
    plugin.write_text(
        "from dataclasses import dataclass\n"
        "from xdsl.passes import ModulePass\n"
        "from nnlayout.transforms import register_pass\n\n"
        "@register_pass\n@dataclass(frozen=True)\nclass Mine(ModulePass):\n"
        "    name = 'mine'\n    limit: int = 3\n\n    def apply(self, ctx, op):\n        pass\n"
    )
    listed = opt("--load", str(plugin), "--list-passes")
    assert listed.returncode == 0, listed.stderr
    assert "\nmine{limit=3}\n    (no description)\n    limit: int = 3\n" in listed.stdout


def test_make_models_writes_into_the_current_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Never into the package's examples/models/ (site-packages, from a wheel); it says where.
    Its entry runs in this process, in tmp_path (lit's import tests run it as a process)."""
    package_copy = ROOT / "examples" / "models" / "unet_small.onnx"
    before = package_copy.stat().st_mtime_ns if package_copy.exists() else None
    monkeypatch.chdir(tmp_path)
    assert make_models.main(["--small", "unet"]) == 0
    assert capsys.readouterr().out == "wrote unet_small.onnx\n"
    assert [path.name for path in tmp_path.iterdir()] == ["unet_small.onnx"]
    after = package_copy.stat().st_mtime_ns if package_copy.exists() else None
    assert after == before
    assert make_models.main(["--small", "unet", "--out", "m"]) == 0
    assert capsys.readouterr().out == "wrote m/unet_small.onnx\n"
