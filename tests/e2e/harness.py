"""What the end-to-end scripts that drive the pathbench binary share: the command line ctest
gives them (--pathbench BINARY --source REPO, the rest for unittest) and the unittest run."""
from __future__ import annotations

import argparse
import os
import sys
import time
import unittest
from pathlib import Path


def parse_binary_args(description: str) -> tuple[Path, Path, list[str]]:
    """(pathbench binary, repository root, arguments left for unittest); exits 2 when the binary
    is not an executable."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--pathbench", required=True, type=Path, help="the pathbench binary")
    parser.add_argument("--source", required=True, type=Path, help="the repository root")
    args, rest = parser.parse_known_args()
    pathbench = args.pathbench.resolve()
    if not os.access(pathbench, os.X_OK):
        print(f"{Path(sys.argv[0]).name}: {pathbench} is not an executable", file=sys.stderr)
        sys.exit(2)
    return pathbench, args.source.resolve(), rest


def run_unittests(rest: list[str]) -> int:
    """Runs the calling script's test cases; 0 when all passed, else 1; prints the wall time."""
    start = time.monotonic()
    program = unittest.main(module="__main__", argv=[sys.argv[0], *rest], exit=False, verbosity=2)
    print(f"{Path(sys.argv[0]).name}: {time.monotonic() - start:.1f} s", file=sys.stderr)
    return 0 if program.result.wasSuccessful() else 1
