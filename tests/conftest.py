"""Shared pytest configuration: the test tiers (the `slow` marker, `--runslow`) and the
`onednn`, `onednn_avx512` and `iree` markers.

Tiers (docs/testing.md): a plain `pytest` runs the default tier and leaves out the tests
marked `slow` (random-program fuzzing, iree-opt validity, exhaustive target x padding sweeps
of which a representative subset stays in the default tier) and checks each model against
onnxruntime on two (target, padding) pairs (`helpers.swept`); `pytest --runslow` runs
everything, every pair, as `bash scripts/test.sh` (CI) does. An explicit `-m` expression decides alone
(`pytest -m slow` runs only the slow tier).

A test marked `onednn` needs the oneDNN library to load here (the onednn-cpu-gomp wheel);
`onednn_avx512` also needs oneDNN's avx512_core code (not where ONEDNN_MAX_CPU_ISA caps it);
`iree` needs `iree-opt` (the `mlir` extra: pip install -e '.[test,mlir]'). Elsewhere such
tests are skipped with the reason, rather than each module spelling the check.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from nnlayout.kernels.onednn.binding import available, runs_avx512_core
from nnlayout.tests import helpers

RUNSLOW = "--runslow"


def iree_opt() -> str | None:
    """The `iree-opt` of this environment (the mlir extra's iree-base-compiler), else on PATH."""
    here = shutil.which("iree-opt", path=str(Path(sys.executable).parent))
    return here or shutil.which("iree-opt")


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        RUNSLOW,
        action="store_true",
        help="also run the tests marked slow: the full tier, as scripts/test.sh (CI) does",
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "onednn: needs the oneDNN library to load here")
    config.addinivalue_line("markers", "onednn_avx512: needs oneDNN's avx512_core code here")
    config.addinivalue_line("markers", "iree: needs iree-opt (the mlir extra)")
    helpers.FULL_SWEEPS = bool(config.getoption(RUNSLOW))


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Leaves out the slow tier unless --runslow or an explicit -m asks for it."""
    if config.getoption(RUNSLOW) or config.option.markexpr:
        return
    slow = [item for item in items if item.get_closest_marker("slow") is not None]
    if slow:
        config.hook.pytest_deselected(items=slow)
        kept = set(map(id, slow))
        items[:] = [item for item in items if id(item) not in kept]
        config.stash[_LEFT_OUT] = len(slow)


_LEFT_OUT = pytest.StashKey[int]()


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    left_out = terminalreporter.config.stash.get(_LEFT_OUT, 0)
    if left_out:
        terminalreporter.write_line(
            f"{left_out} slow tests left out (the default tier); pytest --runslow runs them too, "
            "bash scripts/test.sh runs the full tier with ruff and lit"
        )


def pytest_runtest_setup(item: pytest.Item) -> None:
    if item.get_closest_marker("onednn") is not None and not available():
        pytest.skip("oneDNN (the onednn-cpu-gomp wheel) does not load on this machine")
    if item.get_closest_marker("onednn_avx512") is not None and not (
        available() and runs_avx512_core()
    ):
        pytest.skip("needs oneDNN's avx512_core code (nChw16c formats are its ref:any below)")
    if item.get_closest_marker("iree") is not None and iree_opt() is None:
        pytest.skip("needs iree-opt: pip install -e '.[mlir]' (iree-base-compiler)")
