"""A report script's command line: usage errors exit 3 like every pathbench command, --filter is RE2 as
pathbench's, and run_main turns bad input into exit 3 and a full disk into exit 2, never a
traceback.
"""
from __future__ import annotations

import argparse
import os
import sys
from typing import Callable, NoReturn

from report_errors import (EXIT_BAD_INPUT, EXIT_FAILURE, EXIT_INCOMPLETE, DiskFull, InputError, ReaderFailed, printable,
                           short)
from report_output import install_stop_signals


class UsageParser(argparse.ArgumentParser):
    """argparse, but a usage error exits 3 like every pathbench command (DESIGN.md: exit codes)."""

    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        self.exit(EXIT_BAD_INPUT, f"{self.prog}: error: {message}\n")


# RE2 may use at most this much memory for one filter, as pathbench's --filter
# (scenario/case_filter.hpp, kCaseFilterMaxMemBytes).
CASE_FILTER_MAX_MEM_BYTES = 32 << 20
# RE2's messages quote the pattern; a 100 KB pattern must not make a 100 KB message.
_MAX_QUOTED_ERROR = 200


def case_filter(pattern: str | None, option: str = "--filter") -> Callable[[str], bool] | None:
    """`--filter REGEX` as pathbench reads it (scenario/case_filter.cpp): RE2 syntax (no
    backreferences, no lookaround, no possessive repeats), matched anywhere in the id in time
    linear in the id, so no pattern can hang a report; at most 32 MiB to compile. Returns a
    predicate on case ids, or None (every case) for no or an empty pattern; InputError
    "--filter: what" for a pattern pathbench refuses. The google-re2 package is imported only
    here: without --filter the scripts that need only the standard library still do."""
    if not pattern:
        return None
    try:
        pattern.encode("utf-8")
    except UnicodeEncodeError:
        # A command-line argument that is no UTF-8 arrives with its bytes as lone surrogates.
        raise InputError.option(option, "not a valid regular expression (RE2 syntax): invalid UTF-8") from None
    try:
        import re2  # type: ignore[import-not-found]  # google-re2, reports/requirements.txt
    except ImportError:
        raise InputError.option(option, "needs the google-re2 package, the RE2 engine pathbench uses "
                                        "(pip install -r reports/requirements.txt)") from None
    options = re2.Options()
    options.max_mem = CASE_FILTER_MAX_MEM_BYTES
    options.log_errors = False  # the error goes into the message, not to stderr as well
    try:
        regex = re2.compile(pattern, options)
    except Exception as e:  # noqa: BLE001 - re2.error, and whatever the binding raises for a pattern
        detail = e.args[0] if isinstance(e, re2.error) and e.args else e
        text = detail.decode("utf-8", "replace") if isinstance(detail, bytes) else str(detail)
        text = printable(short(text, _MAX_QUOTED_ERROR))
        if "pattern too large" in text:
            raise InputError.option(option, f"the regular expression needs more than "
                                            f"{CASE_FILTER_MAX_MEM_BYTES >> 20} MiB to compile: {text}") from None
        raise InputError.option(option, f"not a valid regular expression (RE2 syntax): {text}") from None
    return lambda case_id: regex.search(case_id) is not None


def run_main(prog: str, main: Callable[[], int]) -> NoReturn:
    """Runs a script's main: bad input or usage (InputError) exits 3 with its message, a full disk
    2 (the output is incomplete), an unexpected error 1 with a one-line message
    (PATHBENCH_TRACEBACK=1 shows the traceback); never a traceback for what a user typed or fed in."""
    install_stop_signals(prog)
    try:
        code = main()
        sys.stdout.flush()
    except InputError as e:
        print(f"{prog}: error: {e}", file=sys.stderr)
        code = EXIT_BAD_INPUT
    except ReaderFailed as e:
        print(f"{prog}: error: {e}", file=sys.stderr)
        code = EXIT_FAILURE
    except DiskFull as e:
        print(f"{prog}: error: {e}; the output is incomplete", file=sys.stderr)
        code = EXIT_INCOMPLETE
    except BrokenPipeError:
        # The reader of stdout went away (`table.py ... | head`): nothing left to say to anyone.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        code = EXIT_FAILURE
    except KeyboardInterrupt:
        print(f"{prog}: interrupted", file=sys.stderr)
        code = 130
    except Exception as e:  # noqa: BLE001 - the last line of defence against a traceback
        if os.environ.get("PATHBENCH_TRACEBACK"):
            raise
        print(f"{prog}: internal error (a bug in the report; PATHBENCH_TRACEBACK=1 shows where): "
              f"{type(e).__name__}: {e}", file=sys.stderr)
        code = EXIT_FAILURE
    sys.exit(code)
