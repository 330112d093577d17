"""The one reader of pathbench's files: the pathbench binary.

Every result, baseline and other JSON input of the report scripts is read by
`pathbench export --json-lines --as KIND --max-bytes N -- FILE`, with the reader pathbench itself
uses for it (src/result/result.cpp, src/compare/baseline_file.cpp, src/core/json_reader.cpp), and
comes back as one JSON line: {"path", "schema", "document": the document as read, and the values
derived from it}. A file the binary refuses is refused here in its words: exit 3 and
InputError(file, JSON pointer, message), built from the error object it writes on stderr. The
Python side holds no copy of the format's rules.

Which binary (the first that exists):
  1. $PATHBENCH (BINARY_ENV), when set: it must be an executable file;
  2. `pathbench` on PATH;
  3. build/release/pathbench of this repository (beside reports/).
With none, a report exits 3 with one line naming what to build (BUILD_HINT).
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

from report_errors import InputError, ReaderFailed, short

BINARY_ENV = "PATHBENCH"
BUILD_HINT = "scripts/setup.sh release --target pathbench"
_REPOSITORY_BUILD = Path(__file__).resolve().parents[2] / "build" / "release" / "pathbench"


def _executable(path: str | Path) -> bool:
    return os.path.isfile(path) and os.access(path, os.X_OK)


def binary() -> str:
    """The pathbench binary the reports read with; InputError (exit 3) naming what to build."""
    given = os.environ.get(BINARY_ENV)
    if given:
        if _executable(given):
            return given
        raise InputError(BINARY_ENV, None, f"{given} is not an executable pathbench binary; build one with: "
                                           f"{BUILD_HINT}")
    found = shutil.which("pathbench")
    if found:
        return found
    if _executable(_REPOSITORY_BUILD):
        return str(_REPOSITORY_BUILD)
    raise InputError("pathbench", None, f"not found (${BINARY_ENV} is not set, none is on PATH, none at "
                                        f"{_REPOSITORY_BUILD}); the reports read pathbench's files with it: "
                                        f"build it with: {BUILD_HINT}")


def _refusal(stderr: bytes) -> dict[str, Any] | None:
    """The error object `export --json-lines` writes on stderr for a refused file."""
    for line in reversed(stderr.splitlines()):
        if line.startswith(b'{"error":'):
            try:
                error = json.loads(line)["error"]
            except (ValueError, KeyError, TypeError):
                return None
            if isinstance(error, dict) and all(isinstance(error.get(k), str) for k in ("pointer", "message")):
                return error
    return None


def read_document(path: Path | str, kind: str, max_bytes: int) -> dict[str, Any]:
    """The export line of one file, read by pathbench as `kind` (auto, result, baseline, json) and
    refused above max_bytes; InputError (file, pointer, message) where pathbench refuses it."""
    path = Path(path)
    argv: list[str | bytes] = [binary(), "export", "--json-lines", "--as", kind, "--max-bytes", str(max_bytes),
                               "--", os.fsencode(path)]
    try:
        proc = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, check=False)
    except OSError as e:
        raise ReaderFailed(f"cannot run {argv[0]!s}: {e.strerror or e}") from None
    if proc.returncode == 0 and proc.stdout.count(b"\n") == 1:
        out, proc.stdout = proc.stdout, b""
        try:
            line: dict[str, Any] = json.loads(out)
        except MemoryError:
            raise InputError(path, "", f"cannot read: {len(out)} bytes of JSON need more memory than this "
                                       "process may use") from None
        return line
    error = _refusal(proc.stderr)
    if proc.returncode == 3 and error is not None:
        raise InputError(path, error["pointer"], error["message"])
    said = proc.stderr.decode("utf-8", "replace").strip().splitlines()
    raise ReaderFailed(f"{argv[0]!s} export --json-lines {path} failed (exit {proc.returncode}): "
                       f"{short(said[-1], 300) if said else 'no message'}; is it older than the reports? "
                       f"build it again with: {BUILD_HINT}")
