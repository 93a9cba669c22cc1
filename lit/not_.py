"""`not CMD...` for lit tests: succeeds when CMD fails *cleanly* (exit 1, no traceback).

Unlike LLVM's `not`, it also fails when CMD printed a Python traceback, so every negative lit
test checks that bad input never crashes a tool.
"""

import subprocess
import sys


def main() -> int:
    completed = subprocess.run(sys.argv[1:], capture_output=True, text=True)
    sys.stdout.write(completed.stdout)
    sys.stderr.write(completed.stderr)
    if "Traceback (most recent call last)" in completed.stderr:
        print("not: the command printed a Python traceback", file=sys.stderr)
        return 1
    return 0 if completed.returncode != 0 else 1


if __name__ == "__main__":
    sys.exit(main())
