#!/usr/bin/env python3
"""Where a `scripts/test.sh` run spent its time: a Markdown table per stage and per test.

scripts/test.sh writes build/ci-timing/ as it goes: stages.tsv (stage, seconds, exit status),
<stage>.junit.xml (ctest's per-test times), <stage>.tests.json (ctest --show-only=json-v1, for
the labels), <stage>.ccache-before/-after (ccache --print-stats around each build) and
fuzz.status (scripts/fuzz.sh's one line per harness). This script turns them into the table
that docs/ci-timing.md holds; scripts/test.sh renders it into build/ci-timing/ci-timing.md after
every run, and `--out docs/ci-timing.md --title ...` keeps the committed copy current.

Usage: scripts/ci_timing.py [DIR...] [--label TEXT...] [--out FILE] [--title TEXT] [--slowest N]
  Several DIRs (a cold-cache and a warm-cache run, say) become one page with a section each,
  headed by its --label (given once per DIR, in order).
Exit 0; 3 when a DIR holds no stages.tsv or a file in it cannot be read.
"""
from __future__ import annotations

import argparse
import json
import sys
import xml.etree.ElementTree as ET
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


class BadInput(Exception):
    pass


@dataclass
class TestTime:
    name: str
    seconds: float
    status: str  # passed, failed, skipped
    labels: list[str] = field(default_factory=list)


@dataclass
class Stage:
    name: str
    seconds: float
    status: int
    tests: list[TestTime] = field(default_factory=list)
    ccache: dict[str, int] = field(default_factory=dict)  # hits, misses of this stage's build


def read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise BadInput(f"{path}: cannot read: {e}") from e


def read_stages(folder: Path) -> list[Stage]:
    path = folder / "stages.tsv"
    if not path.is_file():
        raise BadInput(f"{path}: no such file (run scripts/test.sh first)")
    stages = []
    for n, line in enumerate(read_text(path).splitlines(), 1):
        parts = line.split("\t")
        try:
            stages.append(Stage(parts[0], float(parts[1]), int(parts[2])))
        except (IndexError, ValueError) as e:
            raise BadInput(f"{path}:{n}: expected 'stage<TAB>seconds<TAB>status', found {line!r}") from e
    return stages


def read_labels(path: Path) -> dict[str, list[str]]:
    if not path.is_file():
        return {}
    try:
        doc = json.loads(read_text(path))
        labels = {}
        for test in doc.get("tests", []):
            for prop in test.get("properties", []):
                if prop.get("name") == "LABELS":
                    labels[test["name"]] = list(prop.get("value", []))
        return labels
    except (json.JSONDecodeError, KeyError, TypeError, AttributeError) as e:
        raise BadInput(f"{path}: not ctest --show-only=json-v1 output: {e}") from e


def read_tests(junit: Path, labels: dict[str, list[str]]) -> list[TestTime]:
    try:
        root = ET.fromstring(read_text(junit))
    except ET.ParseError as e:
        raise BadInput(f"{junit}: not JUnit XML: {e}") from e
    tests = []
    for case in root.iter("testcase"):
        status = case.get("status", "run")
        if case.find("skipped") is not None or status == "notrun":
            outcome = "skipped"
        elif case.find("failure") is not None or status == "fail":
            outcome = "failed"
        else:
            outcome = "passed"
        name = case.get("name", "?")
        tests.append(TestTime(name, float(case.get("time", "0") or 0), outcome, labels.get(name, [])))
    return tests


def read_ccache(folder: Path, stage: str) -> dict[str, int]:
    def stats(path: Path) -> dict[str, int]:
        out = {}
        for line in read_text(path).splitlines():
            key, _, value = line.partition("\t")
            if value.strip().isdigit():
                out[key] = int(value)
        return out

    before, after = folder / f"{stage}.ccache-before", folder / f"{stage}.ccache-after"
    if not (before.is_file() and after.is_file()):
        return {}
    b, a = stats(before), stats(after)
    if not a:  # no ccache after the build either: nothing to count
        return {}
    delta = {k: a.get(k, 0) - b.get(k, 0) for k in a}
    hits = delta.get("direct_cache_hit", 0) + delta.get("preprocessed_cache_hit", 0)
    return {"hits": hits, "misses": delta.get("cache_miss", 0)}


def kind_of(test: TestTime) -> str:
    """The test's group: a label set, with the GoogleTest cases (Suite.Name) apart."""
    labels = sorted(test.labels) or ["(no label)"]
    return "+".join(labels) + (" (GoogleTest cases)" if "." in test.name else "")


def minutes(seconds: float) -> str:
    return f"{int(seconds // 60)} min {seconds % 60:.0f} s" if seconds >= 60 else f"{seconds:.1f} s"


def render(stages: list[Stage], folder: Path, heading: str, slowest: int) -> str:
    total = sum(s.seconds for s in stages)
    sub = "#" * (heading.count("#", 0, heading.index(" ")) + 1)
    lines = [heading, "",
             "| stage | wall time | share | tests (passed / failed / skipped) | compiler cache (hits / misses) |",
             "|---|---:|---:|---|---|"]
    for s in stages:
        counts = ""
        if s.tests:
            c = defaultdict(int)
            for t in s.tests:
                c[t.status] += 1
            counts = f"{len(s.tests)} ({c['passed']} / {c['failed']} / {c['skipped']})"
        cache = f"{s.ccache['hits']} / {s.ccache['misses']}" if s.ccache else ""
        mark = "" if s.status == 0 else f" (exit {s.status})"
        lines.append(f"| {s.name}{mark} | {minutes(s.seconds)} | {100 * s.seconds / total:.0f} % | {counts} | {cache} |")
    lines.append(f"| **total** | **{minutes(total)}** | | | |")
    for s in stages:
        if not s.tests:
            continue
        lines += ["", f"{sub} {s.name}: where the test time goes", "",
                  "| tests | count | summed time |", "|---|---:|---:|"]
        groups: dict[str, list[TestTime]] = defaultdict(list)
        for t in s.tests:
            groups[kind_of(t)].append(t)
        for kind, ts in sorted(groups.items(), key=lambda kv: -sum(t.seconds for t in kv[1])):
            lines.append(f"| {kind} | {len(ts)} | {sum(t.seconds for t in ts):.1f} s |")
        lines += ["", f"Slowest {slowest}:", "", "| test | time | outcome |", "|---|---:|---|"]
        for t in sorted(s.tests, key=lambda t: -t.seconds)[:slowest]:
            lines.append(f"| `{t.name}` | {t.seconds:.1f} s | {t.status} |")
    fuzz = folder / "fuzz.status"
    if fuzz.is_file():
        lines += ["", f"{sub} fuzz: per harness", "", "```", *read_text(fuzz).splitlines(), "```"]
    return "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(prog="ci_timing.py", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("folders", nargs="*", type=Path, default=[ROOT / "build" / "ci-timing"],
                        help="what scripts/test.sh wrote (default build/ci-timing)")
    parser.add_argument("--label", action="append", default=[], help="a section heading per folder, in order")
    parser.add_argument("--out", type=Path, help="write the table here (default: stdout)")
    parser.add_argument("--title", default="Where the test run's time goes", help="the page's heading")
    parser.add_argument("--slowest", type=int, default=15, help="how many of the slowest tests to list per stage")
    try:
        args = parser.parse_args()
    except SystemExit as e:
        return 3 if e.code not in (0, None) else 0
    if args.label and len(args.label) != len(args.folders):
        print(f"ci_timing.py: {len(args.label)} --label for {len(args.folders)} folders", file=sys.stderr)
        return 3
    parts = [f"# {args.title}", "",
             "Written by `scripts/ci_timing.py` from the `build/ci-timing/` folder that `scripts/test.sh` fills; "
             "the test times are ctest's, per test process (two run at a time on two cores).", ""]
    try:
        for i, folder in enumerate(args.folders):
            stages = read_stages(folder)
            for s in stages:
                junit = folder / f"{s.name}.junit.xml"
                if junit.is_file():
                    s.tests = read_tests(junit, read_labels(folder / f"{s.name}.tests.json"))
                s.ccache = read_ccache(folder, s.name)
            heading = f"## {args.label[i]}" if args.label else "## Stages"
            parts.append(render(stages, folder, heading, max(args.slowest, 0)))
    except BadInput as e:
        print(f"ci_timing.py: {e}", file=sys.stderr)
        return 3
    text = "\n".join(parts)
    if args.out:
        try:
            tmp = args.out.with_name(args.out.name + ".tmp")
            tmp.write_text(text, encoding="utf-8")
            tmp.replace(args.out)
        except OSError as e:
            print(f"ci_timing.py: {args.out}: cannot write: {e}", file=sys.stderr)
            return 3
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
