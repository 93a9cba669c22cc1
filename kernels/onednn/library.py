"""Which oneDNN library the binding loads, and what it is: its version and threading runtime.

By default: `libdnnl.so.3` of the PyPI wheel `onednn-cpu-gomp==2023.2.0` (oneDNN v3.2, CPU,
OpenMP), found through the distribution's file list (the wheel is not a Python package).

NNLAYOUT_ONEDNN_LIBRARY=/path/to/libdnnl.so.3 loads that file instead, so that users can bring
their own oneDNN: any v3 build from v3.2 on (the C API nnlayout calls, and the enum values it
copies, are those of v3.2; later v3 releases kept them, docs/benchmarks.md "A newer oneDNN").
The dynamic loader must find the library's own dependencies (e.g. the PyPI `onednn` wheel's
libtbb, libsycl, libsvml: `LD_LIBRARY_PATH` set to its `lib` folder before Python starts). A
file that is missing, does not load, or is not oneDNN v3.2 or later is a `UserError` naming the
variable, not a warning and a fall back to the numpy kernels: the user asked for that library.

The threading runtime decides how nnlayout sets thread counts. OpenMP (the default wheel):
OMP_NUM_THREADS, and `binding.serially` runs small primitives on one thread. TBB, or SYCL on
the CPU (the PyPI `onednn` wheels, whose CPU code runs on TBB threads): the thread count is
the process's CPU affinity (`taskset`, `os.sched_setaffinity` before the library loads) and
every primitive runs on all of them. A SYCL build needs a SYCL CPU device (an OpenCL CPU
runtime and Unified Runtime's OpenCL adapter); without one it is refused here, and its
primitives run asynchronously, so the binding waits for each one.
"""

from __future__ import annotations

import ctypes
import importlib.metadata
import os
from collections.abc import Iterator
from contextlib import contextmanager
from ctypes import POINTER, c_char_p, c_int, c_size_t, c_uint
from dataclasses import dataclass
from pathlib import Path

from nnlayout.diagnostics import UserError

LIBRARY_VARIABLE = "NNLAYOUT_ONEDNN_LIBRARY"
OLDEST = (3, 2)  # the C API and enum values the binding uses
# DNNL_RUNTIME_* (dnnl_config.h); dnnl_cpu (dnnl_engine_kind_t)
RUNTIME_NAMES = {1: "sequential", 2: "OpenMP", 4: "TBB", 8: "threadpool", 512: "SYCL"}
RUNTIME_OMP = 2
RUNTIME_SYCL = 512
_CPU_ENGINE = 1


class DnnlError(RuntimeError):
    """A oneDNN call failed, or the library is not available."""


class _VersionStruct(ctypes.Structure):
    """dnnl_version_t."""

    _fields_ = [
        ("major", c_int),
        ("minor", c_int),
        ("patch", c_int),
        ("hash", c_char_p),
        ("cpu_runtime", c_uint),
        ("gpu_runtime", c_uint),
    ]


@dataclass(frozen=True)
class Version:
    """The loaded library's version and CPU threading runtime (a DNNL_RUNTIME_* value)."""

    major: int
    minor: int
    patch: int
    cpu_runtime: int

    @property
    def openmp(self) -> bool:
        """Whether its threads are OpenMP's (whose count nnlayout sets per primitive)."""
        return self.cpu_runtime == RUNTIME_OMP

    @property
    def asynchronous(self) -> bool:
        """Whether a primitive may still run when its execute call returns (a SYCL queue)."""
        return self.cpu_runtime == RUNTIME_SYCL

    def __str__(self) -> str:
        runtime = RUNTIME_NAMES.get(self.cpu_runtime, f"runtime {self.cpu_runtime:#x}")
        return f"oneDNN v{self.major}.{self.minor}.{self.patch} ({runtime})"


def chosen_path() -> Path | None:
    """The file NNLAYOUT_ONEDNN_LIBRARY names, checked to exist; None where it is not set.
    The value is taken as it is (a file name may end in a space); any path the file system
    cannot resolve (an unknown `~user`, a name too long) is the same UserError."""
    given = os.environ.get(LIBRARY_VARIABLE, "")
    if not given:
        return None
    try:
        path = Path(given).expanduser()
        if path.is_file():
            return path
        what = "is a directory" if path.is_dir() else "no such file"
    except (OSError, RuntimeError) as error:
        what = f"cannot be read ({error.strerror if isinstance(error, OSError) else error})"
    raise UserError(f"{LIBRARY_VARIABLE}={given}: {what} (it names a libdnnl.so.3)")


def wheel_path() -> str:
    """libdnnl.so.3 of the installed `onednn-cpu-gomp` distribution."""
    try:
        files = importlib.metadata.distribution("onednn-cpu-gomp").files or []
    except importlib.metadata.PackageNotFoundError:
        raise DnnlError("the PyPI wheel onednn-cpu-gomp==2023.2.0 is not installed") from None
    for file in files:
        if file.name == "libdnnl.so.3":
            return str(file.locate())
    raise DnnlError("the onednn-cpu-gomp distribution lists no libdnnl.so.3")


# Set in the environment while libgomp loads, unless the user chose a wait (binding's doc).
OPENMP_WAIT_DEFAULT = ("GOMP_SPINCOUNT", "1000")


@contextmanager
def openmp_wait_default() -> Iterator[None]:
    """OPENMP_WAIT_DEFAULT in the environment while libgomp loads (it reads it then), unless
    the user chose a wait policy or spin count (see binding's module doc)."""
    if "OMP_WAIT_POLICY" in os.environ or "GOMP_SPINCOUNT" in os.environ:
        yield
        return
    name, value = OPENMP_WAIT_DEFAULT
    os.environ[name] = value
    try:
        yield
    finally:
        del os.environ[name]


def version(lib: ctypes.CDLL) -> Version | None:
    """What dnnl_version() says, or None where the library has no such function."""
    function = getattr(lib, "dnnl_version", None)
    if function is None:
        return None
    function.argtypes = ()
    function.restype = POINTER(_VersionStruct)
    found = function().contents
    return Version(found.major, found.minor, found.patch, found.cpu_runtime)


def refusal(lib: ctypes.CDLL) -> tuple[Version | None, str | None]:
    """The library's version, and why nnlayout cannot use it (None when it can)."""
    found = version(lib)
    if found is None:
        return None, "it is not oneDNN v3 (it has no dnnl_version)"
    if found.major != OLDEST[0] or found.minor < OLDEST[1]:
        return found, f"it is {found}; nnlayout needs oneDNN v3.{OLDEST[1]} or a later v3"
    if found.asynchronous:
        count = lib.dnnl_engine_get_count
        count.argtypes, count.restype = (c_int,), c_size_t
        if count(_CPU_ENGINE) == 0:
            return found, (
                f"it is {found}, which finds no SYCL CPU device (it needs an OpenCL CPU "
                "runtime and Unified Runtime's OpenCL adapter)"
            )
    return found, None


def open_library() -> tuple[ctypes.CDLL, Version]:
    """The library (the user's, else the wheel's) and its version. Raises DnnlError where the
    wheel's cannot load, UserError where the user's cannot (see the module doc)."""
    chosen = chosen_path()
    path = str(chosen) if chosen is not None else wheel_path()
    try:
        with openmp_wait_default():
            lib = ctypes.CDLL(path)
    except OSError as error:
        if chosen is None:
            raise DnnlError(f"cannot load libdnnl.so.3: {error}") from None
        raise UserError(
            f"{LIBRARY_VARIABLE}={path}: cannot load it: {error} (its own dependencies must be "
            "on LD_LIBRARY_PATH)"
        ) from None
    found, why = refusal(lib)
    if why is not None:
        if chosen is None:
            raise DnnlError(f"{path}: {why}")
        raise UserError(f"{LIBRARY_VARIABLE}={path}: {why}")
    assert found is not None
    return lib, found
