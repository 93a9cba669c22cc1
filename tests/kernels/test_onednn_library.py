"""Which oneDNN library loads (kernels/onednn/library.py): the wheel's by default, the user's
with NNLAYOUT_ONEDNN_LIBRARY; a user's library that is missing, does not load or is not
oneDNN v3.2 or later is one clean error naming the variable, never the numpy kernels."""

from __future__ import annotations

import _ctypes
import ctypes
import functools
import os
import subprocess
import sys
from pathlib import Path

import pytest

from nnlayout.diagnostics import UserError
from nnlayout.kernels.onednn import binding as b
from nnlayout.kernels.onednn import library
from nnlayout.kernels.onednn.library import LIBRARY_VARIABLE, Version, _VersionStruct

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "small_cnn.mlir"


def fresh_load(monkeypatch: pytest.MonkeyPatch, path: object) -> object:
    """What the binding's first load gives with NNLAYOUT_ONEDNN_LIBRARY=`path`."""
    monkeypatch.setenv(LIBRARY_VARIABLE, str(path))
    return b._load.__wrapped__()


@pytest.mark.parametrize(
    ("name", "expected"),
    [("missing.so.3", "no such file"), (".", "is a directory")],
)
def test_a_missing_library_is_named(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, name: str, expected: str
) -> None:
    path = tmp_path / name
    error = fresh_load(monkeypatch, path)
    assert isinstance(error, UserError)
    assert error.message.startswith(f"{LIBRARY_VARIABLE}={path}: {expected}")


@pytest.mark.parametrize(
    "given",
    ["~nosuchuser-nnlayout/libdnnl.so.3", "/tmp/" + "x" * 300 + "/libdnnl.so.3"],
)
def test_a_path_the_file_system_cannot_resolve_is_named(
    monkeypatch: pytest.MonkeyPatch, given: str
) -> None:
    """An unknown ~user or a name too long: the same one-line error, no internal error."""
    error = fresh_load(monkeypatch, given)
    assert isinstance(error, UserError)
    assert error.message.startswith(f"{LIBRARY_VARIABLE}={given}: cannot be read (")
    assert "\n" not in error.message


def test_the_value_is_taken_as_it_is(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """A file name may end in a space: the value is not stripped."""
    path = tmp_path / "libdnnl.so.3 "
    path.write_text("not a shared library\n")
    error = fresh_load(monkeypatch, path)
    assert isinstance(error, UserError)
    assert f"{LIBRARY_VARIABLE}={path}: cannot load it:" in error.message


def test_on_another_machine_the_variable_is_an_error(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Not x86-64: the user's library is not ignored with a warning, it is the UserError;
    without the variable, the wheel's library is unavailable (a DnnlError, a warning)."""
    monkeypatch.setattr(b.platform, "machine", lambda: "aarch64")
    error = fresh_load(monkeypatch, tmp_path / "libdnnl.so.3")
    assert isinstance(error, UserError)
    assert error.message.startswith(f"{LIBRARY_VARIABLE}={tmp_path / 'libdnnl.so.3'}: ")
    assert "aarch64" in error.message
    monkeypatch.delenv(LIBRARY_VARIABLE)
    assert isinstance(b._load.__wrapped__(), b.DnnlError)


def test_a_file_that_does_not_load_is_named(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    path = tmp_path / "libdnnl.so.3"
    path.write_text("not a shared library\n")
    error = fresh_load(monkeypatch, path)
    assert isinstance(error, UserError)
    assert f"{LIBRARY_VARIABLE}={path}: cannot load it:" in error.message
    assert "LD_LIBRARY_PATH" in error.message


def test_a_library_that_is_not_onednn_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    error = fresh_load(monkeypatch, _ctypes.__file__)  # loads, has no dnnl_version
    assert isinstance(error, UserError)
    assert error.message == (
        f"{LIBRARY_VARIABLE}={_ctypes.__file__}: it is not oneDNN v3 (it has no dnnl_version)"
    )


class FakeLibrary:
    """A library whose dnnl_version says `found`; dnnl_engine_get_count gives `devices`."""

    def __init__(self, found: _VersionStruct, devices: int = 1):
        def dnnl_version() -> object:
            return ctypes.pointer(found)

        def dnnl_engine_get_count(kind: int) -> int:
            return devices

        self.dnnl_version = dnnl_version
        self.dnnl_engine_get_count = dnnl_engine_get_count


@pytest.mark.parametrize(
    ("found", "devices", "why"),
    [
        ((2, 7, 3, 2), 1, "it is oneDNN v2.7.3 (OpenMP); nnlayout needs oneDNN v3.2 or a later v3"),
        ((3, 1, 0, 4), 1, "it is oneDNN v3.1.0 (TBB); nnlayout needs oneDNN v3.2 or a later v3"),
        ((4, 0, 0, 2), 1, "it is oneDNN v4.0.0 (OpenMP); nnlayout needs oneDNN v3.2 or a later v3"),
        ((3, 13, 2, 512), 0, "it is oneDNN v3.13.2 (SYCL), which finds no SYCL CPU device"),
        ((3, 2, 0, 2), 0, None),  # the count matters to a SYCL build only
        ((3, 13, 2, 512), 1, None),
        ((3, 5, 0, 4), 1, None),
    ],
)
def test_versions_and_runtimes(
    found: tuple[int, int, int, int], devices: int, why: str | None
) -> None:
    major, minor, patch, runtime = found
    fake = FakeLibrary(_VersionStruct(major, minor, patch, None, runtime, 0), devices)
    version, refusal = library.refusal(fake)  # type: ignore[arg-type]
    assert version == Version(major, minor, patch, runtime)
    if why is None:
        assert refusal is None
    else:
        assert refusal is not None and refusal.startswith(why)
    assert version.openmp == (runtime == library.RUNTIME_OMP)
    assert version.asynchronous == (runtime == library.RUNTIME_SYCL)


@pytest.mark.onednn
def test_the_wheels_library_named_by_the_variable_loads(monkeypatch: pytest.MonkeyPatch) -> None:
    """The variable naming the wheel's own file loads it: v3.2 on OpenMP."""
    loaded = fresh_load(monkeypatch, library.wheel_path())
    assert isinstance(loaded, ctypes.CDLL)
    found = library.version(loaded)
    assert found is not None and (found.major, found.minor) == library.OLDEST and found.openmp


def test_available_raises_the_users_error(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No warning and numpy kernels for the user's own library: the error, every time."""
    monkeypatch.setenv(LIBRARY_VARIABLE, str(tmp_path / "missing.so.3"))
    monkeypatch.setattr(b, "_load", functools.cache(b._load.__wrapped__))
    for _ in range(2):
        with pytest.raises(UserError, match="missing.so.3: no such file"):
            b.available()
        with pytest.raises(UserError, match="missing.so.3: no such file"):
            b.lib()


def test_the_tools_report_it_as_one_error(tmp_path: Path) -> None:
    """A process asked for the onednn target with a wrong variable: exit 1, one line."""
    path = tmp_path / "missing.so.3"
    done = subprocess.run(
        [sys.executable, "-m", "nnlayout.tools.opt", str(EXAMPLE), "-p", "default-pipeline"],
        capture_output=True,
        text=True,
        env={**os.environ, LIBRARY_VARIABLE: str(path)},
    )
    assert done.returncode == 1, done.stderr
    assert done.stdout == ""
    assert done.stderr.splitlines() == [
        f"error: {LIBRARY_VARIABLE}={path}: no such file (it names a libdnnl.so.3)"
    ]
