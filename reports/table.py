#!/usr/bin/env python3
"""Print a pathbench result as a Markdown table (for notes, tickets and docs/measurements.md)."""
from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any

SCHEMA = "pathbench.result/v1"


def format_value(value: float, unit: str) -> str:
    if unit == "s" or unit.startswith("s/"):
        suffix = unit[1:]
        for scale, name in ((1.0, "s"), (1e-3, "ms"), (1e-6, "us"), (1e-9, "ns")):
            if abs(value) >= scale or scale == 1e-9:
                return f"{value / scale:.4g} {name}{suffix}"
    return f"{value:.4g} {unit}"


def rows(result: dict[str, Any], pattern: re.Pattern[str] | None) -> list[list[str]]:
    out: list[list[str]] = []
    for case in result["cases"]:
        if pattern and not pattern.search(case["id"]):
            continue
        if case["status"] != "ok" or not case["metrics"]:
            out.append([case["id"], case["status"], "", "", "", "", case.get("reason", "")])
            continue
        for name, metric in case["metrics"].items():
            stats = metric["stats"]
            out.append([
                case["id"], case["status"], name,
                format_value(stats["median"], metric["unit"]),
                f"{format_value(stats['p10'], metric['unit'])} .. {format_value(stats['p90'], metric['unit'])}",
                f"{100 * stats['cv']:.2f} %", str(stats["n"]),
            ])
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("result", type=Path, help="a pathbench.result/v1 JSON file")
    parser.add_argument("--filter", help="only cases whose id matches this regular expression")
    parser.add_argument("--skipped", action="store_true", help="also list skipped cases")
    args = parser.parse_args(argv)
    try:
        result = json.loads(args.result.read_text())
    except (OSError, json.JSONDecodeError) as e:
        print(f"table.py: {args.result}: {e}", file=sys.stderr)
        return 3
    if result.get("schema") != SCHEMA:
        print(f"table.py: {args.result}: /schema: expected {SCHEMA!r}", file=sys.stderr)
        return 3
    context = result["context"]
    print(f"Node type: {context['node_type']} — host {context['hostname']}, "
          f"driver {context.get('driver_version') or 'n/a'}, {context['start_time']}\n")
    print("| case | status | metric | median | p10 .. p90 | cv | n |")
    print("|---|---|---|---|---|---|---|")
    pattern = re.compile(args.filter) if args.filter else None
    for row in rows(result, pattern):
        if row[1] == "skipped" and not args.skipped:
            continue
        if row[1] != "ok":
            print(f"| {row[0]} | {row[1]} | | | | | {row[6]} |")
        else:
            print("| " + " | ".join(row) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
