"""The benchmark scripts' shared start-up: pinning the OpenMP/BLAS thread counts and checking
the requested model names.

oneDNN (and OpenBLAS under numpy) fix their thread counts when they load, so a script pins
them either in its own process before anything loads them (`pin_threads`) or runs itself
again in a child process with them set (`run_with_threads`). Imports nothing that loads them.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from collections.abc import Collection, Sequence

THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


def pin_threads(threads: int = 1) -> None:
    """Sets this process's OpenMP/OpenBLAS/MKL thread counts; call it before numpy,
    onnxruntime or oneDNN load."""
    for variable in THREAD_VARIABLES:
        os.environ[variable] = str(threads)


def thread_environment(threads: int) -> dict[str, str]:
    """This process's environment with `threads` OpenMP/OpenBLAS/MKL threads, for a child
    process (oneDNN fixes its OpenMP thread count when it loads)."""
    environment = dict(os.environ, **dict.fromkeys(THREAD_VARIABLES, str(threads)))
    environment.setdefault("OPENBLAS_THREAD_TIMEOUT", "4")  # OpenBLAS's shortest spin
    return environment


def run_with_threads(
    module: str, argv: Sequence[str], threads: int, *, check: bool = False
) -> subprocess.CompletedProcess[bytes]:
    """`python -m module *argv` in a child process with `threads` OpenMP/OpenBLAS/MKL
    threads."""
    command = [sys.executable, "-m", module, *argv]
    return subprocess.run(command, env=thread_environment(threads), check=check)


def check_names(
    parser: argparse.ArgumentParser, names: Sequence[str], known: Collection[str]
) -> None:
    """Exits through `parser.error` (status 2, a usage line) naming the requested models that
    are not in `known`, and the ones that are."""
    unknown = [n for n in names if n not in known]
    if unknown:
        parser.error(f"unknown model(s) {', '.join(unknown)}; choose from {', '.join(known)}")
