"""The command-line tools' behaviour on good and bad input: exit codes, messages, no traceback."""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from nnlayout.tests.helpers import tool_process
from nnlayout.transforms.default_pipeline import DefaultPipelinePass

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


def test_list_passes_spells_each_pass_with_its_defaults() -> None:
    """Each line is a pipeline element giving every option its default value."""
    from nnlayout.tools.driver import parse_pipeline
    from nnlayout.transforms import get_all_passes

    listed = opt("--list-passes")
    assert listed.returncode == 0, listed.stderr
    passes = listed.stdout.split("\n\n")[1]  # after the heading, before the targets
    lines = [line for line in passes.splitlines() if not line.startswith(" ")]
    assert "select-dispatch{target=host padding=true remarks=false activation_format=auto}" in lines
    assert len(lines) == len(get_all_passes())
    for line in lines:
        (parsed,) = parse_pipeline(line, get_all_passes()).passes
        assert parsed == get_all_passes()[parsed.name]()()


DEFAULTS_PLUGIN = """
import sys
from dataclasses import dataclass, field
from xdsl.passes import ModulePass
from nnlayout.transforms import register_pass


@register_pass
@dataclass(frozen=True)
class Defaults(ModulePass):
    name = 'defaults'
    label: str = 'a b'
    word: str = 'true'
    number: str = '12'
    quoted: str = 'say "hi" \\\\ bye'
    scale: float = 0.5
    limit: int | None = None
    sizes: tuple[int, ...] = (1, 2)
    words: tuple[str, ...] = ()
    doubled: float = field(default=0.0, init=False)  # derived: not an option

    def __post_init__(self):
        object.__setattr__(self, 'doubled', 2 * self.scale)

    def apply(self, ctx, op):
        print(repr(self), file=sys.stderr)
"""


@pytest.mark.slow  # plugin loading: one subprocess each (full tier)
def test_list_passes_spells_a_plugin_pass_s_defaults_so_that_they_parse(tmp_path: Path) -> None:
    """Strings that are not one plain word are quoted and None is the bare option name, so
    that each line is a pipeline (`defaults{label=a b word=true ... limit=None}` would be
    none). So are tuples (`sizes=(1, 2)`), and a field outside __init__ is not an option."""
    path = tmp_path / "plugin.py"
    path.write_text(DEFAULTS_PLUGIN)
    listed = opt("--load", str(path), "--list-passes")
    (line,) = [line for line in listed.stdout.splitlines() if line.startswith("defaults")]
    result = opt(str(EXAMPLE), "--load", str(path), "-p", line, "-o", str(tmp_path / "o.mlir"))
    assert result.returncode == 0, (line, result.stderr)
    assert result.stderr == (
        "Defaults(label='a b', word='true', number='12', "
        "quoted='say \"hi\" \\\\ bye', scale=0.5, limit=None, "
        "sizes=(1, 2), words=(), doubled=1.0)\n"
    )


@pytest.mark.parametrize(
    ("plugin", "message"),
    [
        (None, "error: cannot load '{path}': no such file or directory"),
        ("raise RuntimeError('boom')\n", "error: loading '{path}' failed: RuntimeError: boom"),
        ("raise SystemExit(0)\n", "error: loading '{path}' failed: it called sys.exit(0)"),
        (
            "import sys\nsys.exit('bye')\n",
            "error: loading '{path}' failed: it called sys.exit('bye')",
        ),
        (
            "from dataclasses import dataclass\nfrom xdsl.passes import ModulePass\n"
            "from nnlayout.transforms import register_pass\n\n\n@register_pass\n"
            "@dataclass(frozen=True)\nclass Clash(ModulePass):\n    name = 'cse'\n\n"
            "    def apply(self, ctx, op):\n        pass\n",
            "error: loading '{path}' failed: ValueError: a pass named 'cse' is already registered",
        ),
        (
            "from dataclasses import dataclass\nfrom xdsl.passes import ModulePass\n"
            "from nnlayout.transforms import register_pass\n\n\n@register_pass\n"
            "@dataclass(frozen=True)\nclass Spaced(ModulePass):\n    name = 'my pass.v2'\n\n"
            "    def apply(self, ctx, op):\n        pass\n",
            "error: loading '{path}' failed: ValueError: pass name 'my pass.v2' cannot be written in "
            "a pipeline: use letters, digits, '-' and '_'",
        ),
        (
            "from nnlayout.transforms import register_pass\n\n\n@register_pass\n"
            "class NotAPass:\n    name = 'not-a-pass'\n",
            "error: loading '{path}' failed: TypeError: NotAPass is not an xdsl.passes.ModulePass "
            "subclass",
        ),
        (
            "from nnlayout.ir.module import read_module\nread_module('/absent.mlir')\n",
            "error: loading '{path}' failed: UserError: cannot read '/absent.mlir': no such file or "
            "directory",
        ),
        (
            "from xdsl.passes import ModulePass\nfrom nnlayout.transforms import register_pass\n\n\n"
            "@register_pass\nclass Options(ModulePass):\n    name = 'options'\n\n"
            "    def __init__(self, k: int = 1):\n        self.k = k\n\n"
            "    def apply(self, ctx, op):\n        pass\n",
            "error: loading '{path}' failed: TypeError: Options takes k in its __init__, not as "
            "dataclass fields: make it a @dataclass(frozen=True) with its options as fields",
        ),
        (
            "from xdsl.passes import ModulePass\nfrom nnlayout.transforms import register_pass\n\n\n"
            "class Base(ModulePass):\n    def __init__(self, k: int = 1, *rest):\n"
            "        self.k = k\n\n\n@register_pass\nclass Inherited(Base):\n"
            "    name = 'inherited'\n\n    def apply(self, ctx, op):\n        pass\n",
            "error: loading '{path}' failed: TypeError: Inherited takes k in its __init__, not as "
            "dataclass fields: make it a @dataclass(frozen=True) with its options as fields",
        ),
    ],
    ids=[
        "missing",
        "raises",
        "exits-0",
        "exits-with-a-message",
        "name-taken",
        "name-unspellable",
        "not-a-module-pass",
        "user-error",
        "options-not-fields",
        "inherited-options",
    ],
)
@pytest.mark.slow  # plugin loading: one subprocess each (full tier)
def test_a_plugin_that_cannot_load_is_one_error(
    tmp_path: Path, plugin: str | None, message: str
) -> None:
    path = tmp_path / "plugin.py"
    if plugin is not None:
        path.write_text(plugin)
    result = opt(str(EXAMPLE), "--load", str(path), "-p", "cse")
    assert result.returncode == 1
    assert result.stderr == message.format(path=path) + "\n"


@pytest.mark.slow  # plugin loading: one subprocess each (full tier)
def test_a_plugin_with_postponed_annotations_loads(tmp_path: Path) -> None:
    """`from __future__ import annotations` (as this package writes its own passes): the
    plugin's module is in sys.modules, where dataclasses resolve string annotations (else
    its @dataclass fails: "'NoneType' object has no attribute '__dict__'")."""
    path = tmp_path / "plugin.py"
    path.write_text(
        "from __future__ import annotations\n\nimport sys\n"
        "from dataclasses import dataclass\nfrom typing import ClassVar\n\n"
        "from xdsl.passes import ModulePass\n\n"
        "from nnlayout.transforms import register_pass\n\n\n@register_pass\n"
        "@dataclass(frozen=True)\nclass Postponed(ModulePass):\n"
        "    name = 'postponed'\n    seen: ClassVar[int] = 0\n"
        "    k: int | None = None\n\n    def apply(self, ctx, op):\n"
        "        print(repr(self), file=sys.stderr)\n"
    )
    result = opt(
        str(EXAMPLE), "--load", str(path), "-p", "postponed{k=3}", "-o", str(tmp_path / "o.mlir")
    )
    assert (result.returncode, result.stderr) == (0, "Postponed(k=3)\n")


@pytest.mark.parametrize(
    ("plugin", "pipeline"),
    [
        (
            "class Counting(ModulePass):\n    name = 'counting'\n\n"
            "    def __init__(self):\n        self.seen = 0\n\n"
            "    def apply(self, ctx, op):\n        pass\n",
            "counting",
        ),
        (
            "@dataclass(frozen=True)\nclass Base(ModulePass):\n    name = 'base'\n    k: int = 1\n\n"
            "    def apply(self, ctx, op):\n        assert self.k == 9\n\n\n@register_pass\n"
            "class Forwarding(Base):\n    name = 'forwarding'\n\n"
            "    def __init__(self, *args, **kwargs):\n        super().__init__(*args, **kwargs)\n",
            "forwarding{k=9}",
        ),
    ],
    ids=["no-options", "forwarding"],
)
@pytest.mark.slow  # plugin loading: one subprocess each (full tier)
def test_a_plugin_pass_with_an_init_of_its_own_loads_where_options_are_fields(
    tmp_path: Path, plugin: str, pipeline: str
) -> None:
    path = tmp_path / "plugin.py"
    path.write_text(
        "from dataclasses import dataclass\nfrom xdsl.passes import ModulePass\n"
        "from nnlayout.transforms import register_pass\n\n\n"
        + ("" if plugin.startswith("@dataclass") else "@register_pass\n")
        + plugin
    )
    result = opt(str(EXAMPLE), "--load", str(path), "-p", pipeline)
    assert result.returncode == 0, result.stderr


@pytest.mark.slow  # plugin loading: one subprocess each (full tier)
def test_a_plugin_pass_that_fails_is_blamed_on_the_plugin(tmp_path: Path) -> None:
    """A pass from --load that raises is reported at the plugin's line: the message said
    "this is a bug in nnlayout" about the user's own code."""
    path = tmp_path / "plugin.py"
    path.write_text(
        "from dataclasses import dataclass\nfrom xdsl.passes import ModulePass\n"
        "from nnlayout.transforms import register_pass\n\n\n@register_pass\n"
        "@dataclass(frozen=True)\nclass Broken(ModulePass):\n"
        "    name = 'broken'\n\n    def apply(self, ctx, op):\n"
        "        raise KeyError('oops')\n"
    )
    result = opt(str(EXAMPLE), "--load", str(path), "-p", "broken")
    assert result.returncode == 1
    assert result.stderr == (
        f"{path}:12: error: KeyError: 'oops'\n"
        f"note: raised by code loaded with --load; rerun with --traceback to see the calls\n"
    )


FLOAT_OPTION_PLUGIN = """
import sys
from dataclasses import dataclass
from xdsl.passes import ModulePass
from nnlayout.transforms import register_pass


@register_pass
@dataclass(frozen=True)
class Scale(ModulePass):
    name = 'scale'
    factor: float = 1.0

    def apply(self, ctx, op):
        print(f"factor={self.factor!r}", file=sys.stderr)
"""


@pytest.mark.parametrize(
    ("option", "stderr"),
    [
        ("factor=2", "factor=2.0\n"),
        ("factor=-3", "factor=-3.0\n"),
        ("factor=2e3", "factor=2000.0\n"),
        ("factor=0.5", "factor=0.5\n"),
        ("factor=.5", "factor=0.5\n"),
        ("factor=-.25e1", "factor=-2.5\n"),
        ("factor=abc", "error: option 'factor' of pass 'scale' takes a number, got 'abc'\n"),
    ],
)
def test_a_float_pass_option_takes_any_number(tmp_path: Path, option: str, stderr: str) -> None:
    """As MLIR's: `factor=2` is 2.0; xDSL refused it ("Incompatible types: given (2,),
    expected <class 'float'>"), and a word the same way."""
    path = tmp_path / "plugin.py"
    path.write_text(FLOAT_OPTION_PLUGIN)
    result = opt(
        str(EXAMPLE),
        "--load",
        str(path),
        "-p",
        f"scale{{{option}}}",
        "-o",
        str(tmp_path / "out.mlir"),
    )
    assert result.stderr == stderr
    assert result.returncode == (1 if "error" in stderr else 0)


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


@pytest.mark.slow  # plugin loading: one subprocess each (full tier)
def test_a_plugin_named_twice_is_loaded_once(tmp_path: Path) -> None:
    """`--load p.py --load ./p.py` (a lit substitution and the test both naming it): the
    second run of the file failed, "a pass named 'fold-relu-of-relu' is already registered"."""
    plugin = ROOT / "examples" / "fold_relu_of_relu.py"
    result = opt(
        str(EXAMPLE),
        "--load",
        str(plugin),
        "--load",
        os.path.relpath(plugin),
        "-p",
        "fold-relu-of-relu",
    )
    assert result.returncode == 0, result.stderr


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


# 20 output channels: padded to 32 in NCHW16c, so padding decides the kernel.
STEM = (
    "func.func @stem(%x: tensor<1x3x32x32xf32>, %w: tensor<20x3x3x3xf32>, "
    "%b: tensor<20xf32>) -> tensor<1x20x30x30xf32> {\n"
    "  %y = nn.conv2d %x, %w, %b strides [1, 1] pads [0, 0, 0, 0] dilations [1, 1] groups 1"
    " : (tensor<1x3x32x32xf32>, tensor<20x3x3x3xf32>, tensor<20xf32>) -> "
    "tensor<1x20x30x30xf32>\n"
    "  func.return %y : tensor<1x20x30x30xf32>\n}\n"
)


@pytest.mark.parametrize(
    ("value", "kernel"),
    [
        ("1", "conv2d_ref"),
        ("True", "conv2d_ref"),
        ("ON", "conv2d_ref"),
        (" yes ", "conv2d_ref"),
        ("0", "conv2d_nchwc"),
        ("Off", "conv2d_nchwc"),
        ("false", "conv2d_nchwc"),
        ("", "conv2d_nchwc"),
        ("maybe", None),
        ("11", None),
    ],
)
def test_disable_padding_variable_is_a_yes_or_a_no(
    value: str,
    kernel: str | None,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """In any case, spaced or not; anything else is an error naming the variable (True, on,
    " 1" are yeses: none is ignored, leaving padding on)."""
    from nnlayout.tools import opt as opt_tool
    from nnlayout.tools.driver import run_tool

    (tmp_path / "stem.mlir").write_text(STEM)
    monkeypatch.setenv("NNLAYOUT_DISABLE_PADDING", value)
    status = run_tool(
        opt_tool.main, [str(tmp_path / "stem.mlir"), "-p", "select-dispatch{target=avx512}"]
    )
    out, err = capsys.readouterr()
    if kernel is None:
        assert status == 1
        assert err == (
            f"error: select-dispatch: NNLAYOUT_DISABLE_PADDING={value!r}: expected "
            "1, true, yes or on (padding off) or 0, false, no, off or empty (padding "
            "on)\n"
        )
    else:
        assert status == 0, err
        assert f'#nn.kernel<"{kernel}"' in out


def test_disable_padding_variable_sets_what_the_pipeline_leaves_unset(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The tools' pipeline parsing turns padding off in each pass with a padding option that
    the spec does not set (a composite such as default-pipeline included); a pass the spec
    gives `padding=true` keeps it, and passes without the option are left as they are."""
    from nnlayout.tools.driver import parse_pipeline
    from nnlayout.transforms import get_all_passes

    spec = "select-dispatch{target=avx2},fuse-post-ops{padding=true},default-pipeline,canonicalize"
    passes = get_all_passes()
    monkeypatch.setenv("NNLAYOUT_DISABLE_PADDING", "1")
    disabled = parse_pipeline(spec, passes).passes
    assert [getattr(p, "padding", None) for p in disabled] == [False, True, False, None]
    assert disabled[0] == passes["select-dispatch"]()(target="avx2", padding=False)
    assert disabled[3] == passes["canonicalize"]()()
    steps = disabled[2].passes()  # type: ignore[attr-defined]
    # default-pipeline's select-dispatch records padding=false; its fuse-post-ops and
    # fuse-matmul-post-ops read that record (their own options stay unset).
    assert [s.padding for s in steps if hasattr(s, "padding")] == [False, None, None]
    monkeypatch.setenv("NNLAYOUT_DISABLE_PADDING", "0")
    assert [getattr(p, "padding", None) for p in parse_pipeline(spec, passes).passes] == [
        True,
        True,
        True,
        None,
    ]


@pytest.mark.parametrize(
    ("spec", "label"),
    [
        ("default-pipeline{target=avx2}", "default-pipeline (select-dispatch)"),
        ("canonicalize,select-dispatch", "select-dispatch"),
    ],
)
def test_bad_disable_padding_value_is_named_by_the_pass_it_would_set(
    spec: str, label: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Named by the step that would take padding=false; a pipeline with no padding option
    left unset does not read the variable."""
    from nnlayout.diagnostics import UserError
    from nnlayout.tools.driver import parse_pipeline
    from nnlayout.transforms import get_all_passes

    monkeypatch.setenv("NNLAYOUT_DISABLE_PADDING", "maybe")
    with pytest.raises(UserError) as raised:
        parse_pipeline(spec, get_all_passes())
    assert raised.value.message == (
        f"{label}: NNLAYOUT_DISABLE_PADDING='maybe': expected 1, true, yes or on (padding off) "
        "or 0, false, no, off or empty (padding on)"
    )
    assert parse_pipeline("canonicalize,select-dispatch{padding=true}", get_all_passes())
    assert parse_pipeline("fuse-post-ops", get_all_passes())  # it reads the module's record


def test_disable_padding_variable_reaches_run_and_translate(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """nnlayout-run and nnlayout-translate parse their pipelines as nnlayout-opt does."""
    from nnlayout.tools import run as run_tool_module
    from nnlayout.tools import translate as translate_tool
    from nnlayout.tools.driver import run_tool

    (tmp_path / "stem.mlir").write_text(STEM)
    monkeypatch.setenv("NNLAYOUT_DISABLE_PADDING", "1")
    args = [str(tmp_path / "stem.mlir"), "-p", "default-pipeline{target=avx512}"]
    args.append("--print-ir-after=select-dispatch")
    for main, more in (
        (run_tool_module.main, ["--random-inputs", "0", "--output-dir", str(tmp_path / "out")]),
        (translate_tool.main, ["-o", str(tmp_path / "stem.py")]),
    ):
        assert run_tool(main, args + more) == 0
        dumped = capsys.readouterr().err
        assert '#nn.kernel<"conv2d_ref"' in dumped and "conv2d_nchwc" not in dumped


_BREAKING_PLUGIN = """
from dataclasses import dataclass
from xdsl.dialects import func
from xdsl.passes import ModulePass
from nnlayout.transforms import register_pass


@register_pass
@dataclass(frozen=True)
class DropReturn(ModulePass):
    '''Leaves a function without its terminator: IR that does not verify.'''
    name = "drop-return"

    def apply(self, ctx, op):
        for ret in list(op.walk()):
            if isinstance(ret, func.ReturnOp):
                ret.detach()
                ret.erase()
"""


def _dumps(stderr: str) -> list[tuple[str, str]]:
    """(title, IR) of each `// -----// IR Dump TITLE //----- //` section of `stderr`."""
    parts = re.split(r"^// -----// IR Dump (.*) //----- //\n", stderr, flags=re.MULTILINE)
    return list(zip(parts[1::2], parts[2::2], strict=True))


def test_print_ir_leaves_stdout_alone_and_dumps_parse_back() -> None:
    pipeline = "select-dispatch{target=avx2},insert-layouts,bufferize"
    plain = opt(str(EXAMPLE), "-p", pipeline)
    dumped = opt(str(EXAMPLE), "-p", pipeline, "--print-ir-before-all", "--print-ir-after-all")
    assert dumped.returncode == 0, dumped.stderr
    assert dumped.stdout == plain.stdout
    dumps = _dumps(dumped.stderr)
    assert [title for title, _ in dumps] == [
        "Before select-dispatch",
        "After select-dispatch",
        "Before insert-layouts",
        "After insert-layouts",
        "Before bufferize",
        "After bufferize",
    ]
    assert dumps[0][1].strip() == opt(str(EXAMPLE)).stdout.strip()  # the input, parsed
    assert dumps[-1][1].strip() == plain.stdout.strip()
    for _, ir in dumps:
        assert opt("-", stdin=ir).returncode == 0


def test_print_ir_after_a_step_of_the_default_pipeline_or_all_of_it() -> None:
    step = opt(
        str(EXAMPLE),
        "-p",
        "default-pipeline{target=avx2}",
        "--print-ir-after",
        "bufferize,plan-memory",
        "-o",
        "/dev/null",
    )
    assert [title for title, _ in _dumps(step.stderr)] == [
        "After default-pipeline (bufferize)",
        "After default-pipeline (plan-memory)",
    ]
    whole = opt(
        str(EXAMPLE),
        "-p",
        "default-pipeline{target=avx2}",
        "--print-ir-after",
        "default-pipeline",
        "-o",
        "/dev/null",
    )
    titles = [title for title, _ in _dumps(whole.stderr)]
    assert titles[0] == "After default-pipeline (fuse-activations)"
    assert titles[-1] == "After default-pipeline (plan-memory)"
    assert len(titles) == len(DefaultPipelinePass().passes())


def test_print_ir_after_failure_shows_the_ir_the_pass_left(tmp_path: Path) -> None:
    plugin = tmp_path / "drop_return.py"
    plugin.write_text(_BREAKING_PLUGIN)
    result = opt(
        str(EXAMPLE), "--load", str(plugin), "-p", "cse,drop-return", "--print-ir-after-failure"
    )
    assert result.returncode == 1
    ((title, ir),) = _dumps(result.stderr)
    assert title == "After drop-return Failed"
    assert "nn.softmax" in ir and "func.return" not in ir
    assert "error: IR after pass 'drop-return' does not verify" in ir  # the error follows
    quiet = opt(str(EXAMPLE), "--load", str(plugin), "-p", "cse,drop-return")
    assert _dumps(quiet.stderr) == [] and quiet.returncode == 1


def test_time_passes_reports_every_stage_once_per_run() -> None:
    text = EXAMPLE.read_text()
    result = opt(
        "-",
        "--split-input-file",
        "-p",
        "select-dispatch{target=avx2},cse",
        "--time-passes",
        "-o",
        "/dev/null",
        stdin=f"{text}\n// -----\n{text}",
    )
    assert result.returncode == 0, result.stderr
    rows = re.findall(r"^ +([0-9.]+) \( *([0-9.]+)%\)  (.+)$", result.stderr, re.MULTILINE)
    assert [name for _, _, name in rows] == [
        "parse",
        "verify",
        "select-dispatch",
        "cse",
        "output",
        "Total",
    ]
    seconds = [float(s) for s, _, _ in rows]
    assert sum(seconds[:-1]) == pytest.approx(seconds[-1], abs=1e-3)
    assert rows[-1][1] == "100.0"


def test_time_passes_reports_also_when_diagnostics_do_not_match() -> None:
    unmet = GOOD.replace("{}", "  // expected-error @+1 {{never}}\n")
    result = opt("-", "--verify-diagnostics", "-p", "cse", "--time-passes", stdin=unmet)
    assert result.returncode == 1
    assert "... Execution time report ..." in result.stderr
    assert result.stderr.rstrip().endswith("expected error not produced: {{never}}")
