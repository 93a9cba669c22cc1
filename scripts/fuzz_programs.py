"""Differential fuzzing of the compiler: thousands of random valid `nn` programs
(`tests/random_programs.py`), each run unoptimised and after
`default-pipeline{target=T padding=P}` for every target and padding setting.

    python -m nnlayout.scripts.fuzz_programs --count 2000 --seed 1 --save-dir fails/

(It needs the test extra: the generator lives with the tests and also serves hypothesis.)

Program i of seed S is drawn from `numpy.random.default_rng([S, i])`, so any one program can be
regenerated alone (`--first i --count 1`); odd-numbered programs get a NaN, an Inf and a -Inf
in their input. Each variant runs in the interpreter; with `--generated` also as the generated
module (`nnlayout-translate`), twice, the second time on other inputs with NaN and infinities
where the first had none and none where it had some: the run that generated code does many
times, on kernels bound to the same arena views. Each mismatch (or error) prints the program index
and the reason; `--save-dir` also writes the program's text to `DIR/S-i.mlir`. The last line
is the summary, `N programs, M mismatches`; the exit status is 1 when M > 0.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np

from nnlayout.tests.random_programs import NumpyChoices, check_program, random_program
from nnlayout.tools.driver import description


def program(seed: int, index: int) -> str:
    """The text of program `index` of `seed`."""
    return random_program(NumpyChoices(np.random.default_rng([seed, index])))


def check(seed: int, index: int, generated: bool) -> tuple[int, str, str | None]:
    """(index, program text, None or why it failed)."""
    text = program(seed, index)
    try:
        check_program(text, seed=index, nan_and_inf=index % 2 == 1, generated=generated)
    except Exception as error:  # noqa: BLE001 - every failure is a finding, reported
        return index, text, f"{type(error).__name__}: {' '.join(str(error).split())[:500]}"
    return index, text, None


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=description(__doc__))
    parser.add_argument("--count", type=int, default=2000, help="programs to check")
    parser.add_argument("--seed", type=int, default=0, help="seed of the whole run")
    parser.add_argument("--first", type=int, default=0, help="index of the first program")
    parser.add_argument("--jobs", type=int, default=None, help="worker processes")
    parser.add_argument("--save-dir", type=Path, help="write failing programs here")
    parser.add_argument(
        "--generated",
        action="store_true",
        help="also run each variant's generated module, twice (about 2.4x the time)",
    )
    args = parser.parse_args(argv)
    if args.save_dir is not None:
        args.save_dir.mkdir(parents=True, exist_ok=True)
    start, mismatches = time.perf_counter(), 0
    indices = range(args.first, args.first + args.count)
    with ProcessPoolExecutor(args.jobs) as pool:
        for index, text, failure in pool.map(
            check, [args.seed] * len(indices), indices, [args.generated] * len(indices), chunksize=4
        ):
            if failure is None:
                continue
            mismatches += 1
            print(
                f"program {index} (--seed {args.seed} --first {index} --count 1): {failure}",
                flush=True,
            )
            if args.save_dir is not None:
                (args.save_dir / f"{args.seed}-{index}.mlir").write_text(text)
    print(f"{args.count} programs, {mismatches} mismatches ({time.perf_counter() - start:.0f} s)")
    return 1 if mismatches else 0


if __name__ == "__main__":
    sys.exit(main())
