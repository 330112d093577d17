#!/usr/bin/env python3
"""Print a pathbench result as a Markdown table (for notes, tickets and docs/measurements.md).

    table.py RESULT [--filter REGEX] [--skipped]

Needs only the standard library (--filter: the google-re2 package, RE2 as pathbench uses). An incomplete run (interrupted or killed: `"complete": false`)
is said so above the table. Exit codes: 0 printed, 3 bad input or usage (the message names the
file and the JSON pointer of the field).
"""
from __future__ import annotations

import sys
from pathlib import Path

# The report directory holds html.py, which would shadow the standard library's `html` package:
# keep this directory off sys.path; the shared module lives in reports/lib.
_HERE = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != _HERE]
sys.path.insert(0, str(_HERE / "lib"))  # the shared reader, importable by name

import argparse  # noqa: E402
import math  # noqa: E402
from typing import Any, Callable  # noqa: E402


import pathbench_result_file as rf  # noqa: E402  (reports/lib, put on sys.path above)

PROG = "table.py"


def format_value(value: float, unit: str) -> str:
    if not math.isfinite(value):
        return f"{value} {unit}"
    if unit == "s" or unit.startswith("s/"):
        suffix = unit[1:]
        for scale, name in ((1.0, "s"), (1e-3, "ms"), (1e-6, "us"), (1e-9, "ns")):
            if abs(value) >= scale or scale == 1e-9:
                return f"{value / scale:.4g} {name}{suffix}"
    return f"{value:.4g} {unit}"


def cell(text: Any) -> str:
    """Text for one Markdown table cell: a '|' or a line break would split the row."""
    return rf.printable(" ".join(str(text).split())).replace("|", "\\|")


def rows(result: Any, keep: Callable[[str], bool] | None) -> list[list[str]]:
    out: list[list[str]] = []
    for case in result.cases:
        if keep and not keep(case["id"]):
            continue
        if case["status"] != "ok" or not case["metrics"]:
            out.append([case["id"], case["status"], "", "", "", "", case["reason"]])
            continue
        for name, metric in case["metrics"].items():
            stats = metric["stats"]
            unit = metric["unit"]
            out.append([
                case["id"], case["status"], name,
                format_value(stats["median"], unit),
                f"{format_value(stats['p10'], unit)} .. {format_value(stats['p90'], unit)}",
                f"{100 * stats['cv']:.2f} %", str(stats["n"]),
            ])
    return out


def main(argv: list[str] | None = None) -> int:
    parser = rf.UsageParser(prog=PROG, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("result", type=Path, help="a pathbench.result/v1 JSON file")
    parser.add_argument("--filter", metavar="REGEX",
                        help="only cases whose id this regular expression matches anywhere, in RE2 syntax "
                             "as pathbench's --filter (needs the google-re2 package)")
    parser.add_argument("--skipped", action="store_true", help="also list skipped cases")
    args = parser.parse_args(argv)
    keep = rf.case_filter(args.filter)
    result = rf.load_result(args.result)
    context = result.context
    print(f"Node type: {cell(result.node_type)} — host {cell(result.hostname)}, "
          f"driver {cell(rf.text_of(context.get('driver_version')) or 'n/a')}, {cell(result.start_time)}\n")
    if not result.complete:
        # Never let a partial run pass for a whole one: the missing cases are not in the table.
        print(f"**Incomplete run**: {cell(result.incomplete_reason)}. Only the cases that finished "
              f"({len(result.cases)}) are listed; the cases the run had not reached are missing.\n")
    print("| case | status | metric | median | p10 .. p90 | cv | n |")
    print("|---|---|---|---|---|---|---|")
    for row in rows(result, keep):
        if row[1] == "skipped" and not args.skipped:
            continue
        row = [cell(c) for c in row]
        if row[1] != "ok":
            print(f"| {row[0]} | {row[1]} | | | | | {row[6]} |")
        else:
            print("| " + " | ".join(row) + " |")
    return 0


if __name__ == "__main__":
    rf.run_main(PROG, main)
