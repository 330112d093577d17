#!/usr/bin/env python3
"""Print a pathbench baseline's between-run spread per gated metric as a Markdown table: how far
each metric's run medians wander on an unchanged node, next to the ceiling a gate block (or the
class) sets. The gate derives each threshold from this spread (about 3.2-3.5 x it, more for
heavy-tailed host metrics); a spread above the ceiling is certainly "not gateable". The exact
threshold and the smallest change the gate detects per metric are what `pathbench baseline
promote` and `pathbench baseline update` print.

    python3 reports/spread.py ci/baselines/NODE.json [--all-metrics] [--filter REGEX]

The baseline is read by pathbench itself (`pathbench export --json-lines --as baseline`), which
also gives each metric's spread of the run medians; a result file is refused (one run has no spread). Exit codes: 0 printed, 3 bad input or
usage (the message names the file and the JSON pointer of the field).
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
from typing import Any, Callable  # noqa: E402


import pathbench_result_file as rf  # noqa: E402  (reports/lib, put on sys.path above)

PROG = "spread.py"
# The class ceilings (compare/gate_rule.hpp) where a gate block sets none.
CLASS_CEILING_PCT = {"device": 15.0, "host": 100.0}


def _pct(v: Any) -> bool:
    return rf.is_number(v) and 0 < v <= 1000


def ceiling_for(gate: Any, metric: str, timing_class: str) -> float:
    _, threshold = rf.gate_entry(gate, metric)
    return threshold if threshold is not None and _pct(threshold) else CLASS_CEILING_PCT.get(timing_class, 100.0)


def gated(case: Any) -> list[str]:
    names = [m.name for m in case.metrics][:1]
    gate = case.gate
    if isinstance(gate, dict) and isinstance(gate.get("metrics"), dict):
        names += [m for m in gate["metrics"] if m not in names]
    return names


def rows(baseline: Any, keep: Callable[[str], bool] | None, all_metrics: bool) -> list[list[str]]:
    out: list[list[str]] = []
    for case in baseline.cases:
        if case.status != "ok" or (keep and not keep(case.id)):
            continue
        by_name = {m.name: m for m in case.metrics}
        names = list(by_name) if all_metrics else gated(case)
        for name in names:
            metric = by_name.get(name)
            if metric is None:
                continue
            # A gate on a percentile judges that statistic's per-repetition values: its spread
            # is the one that matters (README "Gating a tail percentile").
            statistic, _ = rf.gate_entry(case.gate, name)
            label = name if statistic == "median" else f"{name} ({statistic})"
            threshold = ceiling_for(case.gate, name, metric.timing_class)
            view = metric.statistic_view(statistic)
            if view is None:
                out.append([case.id, label, metric.timing_class, "n/a", "n/a", f"{threshold:g} %",
                            f"missing (the baseline has no per-repetition {statistic})"])
                continue
            metric = view
            spread = metric.spread_pct
            if spread is None:
                verdict = f"unknown (fewer than {rf.MIN_RUNS_FOR_SPREAD} runs)"
            elif spread > threshold:
                verdict = "**not gateable**"
            else:
                verdict = f"spread {spread / threshold:.0%} of the ceiling"
            out.append([case.id, label, metric.timing_class, f"{metric.center:.4g} {metric.unit}",
                        "n/a" if spread is None else f"{spread:.2f} %", f"{threshold:g} %", verdict])
    return out


def cell(text: str) -> str:
    """Text for one Markdown table cell: a '|' or a line break would split the row."""
    return " ".join(text.split()).replace("|", "\\|")


def main(argv: list[str] | None = None) -> int:
    parser = rf.UsageParser(prog=PROG, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("baseline", type=Path, help="a pathbench.baseline/v1 file")
    parser.add_argument("--filter", metavar="REGEX",
                        help="only cases whose id this regular expression matches anywhere, in RE2 syntax "
                             "as pathbench's --filter (needs the google-re2 package)")
    parser.add_argument("--all-metrics", action="store_true",
                        help="every metric, not only the gated ones")
    args = parser.parse_args(argv)
    keep = rf.case_filter(args.filter)
    baseline = rf.load_baseline(args.baseline)
    table = rows(baseline, keep, args.all_metrics)
    print(f"Between-run spread of {cell(baseline.node_type or 'unknown node type')}, {baseline.runs} runs "
          "(spread: the larger of 1.4826 x MAD and the standard deviation of the run medians, relative to "
          "their median)\n")
    print("| case | metric | timed by | median of run medians | spread | ceiling | |")
    print("|---|---|---|---|---|---|---|")
    for row in table:
        print("| " + " | ".join(cell(c) for c in row) + " |")
    return 0


if __name__ == "__main__":
    rf.run_main(PROG, main)
