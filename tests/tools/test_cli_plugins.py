"""nnlayout-opt's pass listing and plugins: --list-passes spells each pass (a plugin's too)
as a pipeline element with its defaults, and a plugin loaded with --load (postponed
annotations, an __init__ of its own, float options, named twice) loads once, or is one error
blamed on the plugin when it cannot load or its pass fails."""

import os
from pathlib import Path

import pytest

from nnlayout.tests.tools.test_cli import EXAMPLE, ROOT, opt


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
