"""Shared pytest configuration: the `onednn` and `onednn_avx512` markers.

A test marked `onednn` needs the oneDNN library to load here (the onednn-cpu-gomp wheel);
`onednn_avx512` also needs oneDNN's avx512_core code (not where ONEDNN_MAX_CPU_ISA caps it).
Elsewhere such tests are skipped with the reason, rather than each module spelling the check.
"""

from __future__ import annotations

import pytest

from nnlayout.kernels.onednn.binding import available, runs_avx512_core


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "onednn: needs the oneDNN library to load here")
    config.addinivalue_line("markers", "onednn_avx512: needs oneDNN's avx512_core code here")


def pytest_runtest_setup(item: pytest.Item) -> None:
    if item.get_closest_marker("onednn") is not None and not available():
        pytest.skip("oneDNN (the onednn-cpu-gomp wheel) does not load on this machine")
    if item.get_closest_marker("onednn_avx512") is not None and not (
        available() and runs_avx512_core()
    ):
        pytest.skip("needs oneDNN's avx512_core code (nChw16c formats are its ref:any below)")
