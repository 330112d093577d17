"""The errors every report script shares, and how it shows text from its inputs.

InputError (bad input or usage: exit 3, as every pathbench command) names the file and the JSON
pointer; the reader (pathbench_reader.py) builds it from the binary's own refusal, so a report says
what `pathbench` says, word for word.
"""
from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

EXIT_OK = 0
EXIT_FAILURE = 1
EXIT_INCOMPLETE = 2
EXIT_BAD_INPUT = 3


class InputError(Exception):
    """Bad input or usage: names the file and the JSON pointer ("/" for the whole document)."""

    def __init__(self, path: Path | str, pointer: str | None, message: str) -> None:
        self.path = str(path)
        self.pointer = pointer
        self.message = message
        where = "" if pointer is None else f" {pointer or '/'}:"
        super().__init__(f"{self.path}:{where} {message}")

    @classmethod
    def option(cls, name: str, message: str) -> InputError:
        """A bad command-line option value: "--name: what" (no file, no JSON pointer)."""
        return cls(name, None, message)


class DiskFull(Exception):
    """The file system is full (ENOSPC) or the quota used up (EDQUOT) while writing an output: the
    output is incomplete (exit 2, as the C++ commands say it), not bad input."""


def short(text: str, limit: int = 40) -> str:
    return text if len(text) <= limit else text[:limit - 1] + "…"


_CONTROL_RE = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


def printable(text: str) -> str:
    """Text with control characters (an escaped NUL is valid JSON) shown as U+FFFD: a terminal,
    a Markdown table or an HTML page must not receive them raw."""
    return _CONTROL_RE.sub("\ufffd", text)


def text_of(v: Any) -> str:
    """A context value shown as text: the C++ reader does not type context fields beyond
    scenario_files and the times, so a report must not assume a string there."""
    if v is None:
        return ""
    return v if isinstance(v, str) else json.dumps(v, ensure_ascii=False)


class ReaderFailed(Exception):
    """The pathbench binary failed to read a file in a way that is no refusal of it (it crashed, or
    is too old for `export --json-lines`): exit 1 with one line, not a traceback."""
