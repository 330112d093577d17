#!/usr/bin/env python3
"""Print a pathbench baseline's between-run spread per gated metric as a Markdown table: how far
each metric's run medians wander on an unchanged node, against the threshold that gates it.
Use it to choose a scenario's gate block (a threshold below the spread is "not gateable").

    python3 reports/spread.py ci/baselines/NODE.json [--all-metrics] [--filter REGEX]
"""
from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any

SCHEMA = "pathbench.baseline/v1"
DEFAULT_THRESHOLD_PCT = 5.0


def threshold_for(gate: Any, metric: str) -> float:
    if not isinstance(gate, dict):
        return DEFAULT_THRESHOLD_PCT
    metrics = gate.get("metrics")
    if isinstance(metrics, dict) and isinstance(metrics.get(metric), (int, float)):
        return float(metrics[metric])
    if isinstance(gate.get("threshold_pct"), (int, float)):
        return float(gate["threshold_pct"])
    return DEFAULT_THRESHOLD_PCT


def gated(case: dict[str, Any]) -> list[str]:
    names = list(case["metrics"])[:1]
    gate = case.get("gate")
    if isinstance(gate, dict) and isinstance(gate.get("metrics"), dict):
        names += [m for m in gate["metrics"] if m not in names]
    return names


def rows(baseline: dict[str, Any], pattern: re.Pattern[str] | None,
         all_metrics: bool) -> list[list[str]]:
    out: list[list[str]] = []
    for case in baseline["cases"]:
        if case["status"] != "ok" or (pattern and not pattern.search(case["id"])):
            continue
        names = list(case["metrics"]) if all_metrics else gated(case)
        for name in names:
            metric = case["metrics"].get(name)
            if not isinstance(metric, dict):
                continue
            between = metric["between_run"]
            spread = between.get("spread_pct")
            threshold = threshold_for(case.get("gate"), name)
            if spread is None:
                verdict = "unknown (fewer than 3 runs)"
            elif spread > threshold:
                verdict = "**not gateable**"
            else:
                verdict = f"gateable (x{threshold / spread:.1f})" if spread > 0 else "gateable"
            out.append([case["id"], name, metric["timing_class"],
                        f"{between['center']:.4g} {metric['unit']}",
                        "n/a" if spread is None else f"{spread:.2f} %",
                        f"{threshold:g} %", verdict])
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("baseline", type=Path, help="a pathbench.baseline/v1 file")
    parser.add_argument("--filter", help="only cases whose id matches this regular expression")
    parser.add_argument("--all-metrics", action="store_true",
                        help="every metric, not only the gated ones")
    args = parser.parse_args(argv)
    try:
        pattern = re.compile(args.filter) if args.filter else None
    except re.error as e:
        print(f"spread.py: --filter: not a valid regular expression: {e}", file=sys.stderr)
        return 3
    try:
        baseline = json.loads(args.baseline.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        print(f"spread.py: {args.baseline}: {e}", file=sys.stderr)
        return 3
    if not isinstance(baseline, dict) or baseline.get("schema") != SCHEMA:
        print(f"spread.py: {args.baseline}: /schema: expected {SCHEMA!r} "
              "(make one with: pathbench baseline promote RESULT...)", file=sys.stderr)
        return 3
    try:
        table = rows(baseline, pattern, args.all_metrics)
        runs = len(baseline["runs"])
        node_type = baseline["node_type"]
    except (KeyError, TypeError, AttributeError) as e:
        print(f"spread.py: {args.baseline}: not a valid baseline (missing or mistyped {e})",
              file=sys.stderr)
        return 3
    print(f"Between-run spread of {node_type}, {runs} runs (spread: the larger of 1.4826 x MAD "
          "and the standard deviation of the run medians, relative to their median)\n")
    print("| case | metric | timed by | median of run medians | spread | threshold | |")
    print("|---|---|---|---|---|---|---|")
    for row in table:
        print("| " + " | ".join(row) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
