#!/usr/bin/env python3
"""Writes a large synthetic pathbench.result/v1 file for the host-side scale benchmark
(docs/measurements.md, "Host-side scale: compare and export of large results").

    python3 tests/scale/make_large_result.py --cases 1000000 --out /tmp/big.json

The cases are the real H200 run's (tests/fixtures/results/h200-default.json) repeated: case i is
template i mod 31 with an extra param "index" (and "/index=i" in its id, so ids stay unique) and
its samples and statistics scaled by a factor near 1 (the statistics stay consistent: every one of
them scales linearly, n and cv not at all). The file is written as pathbench writes results (indent 2)
and streamed, so the generator's memory stays small whatever --cases is. About 2.9 kB per case:
1M cases is about 2.9 GB. Standard library only.
"""
from __future__ import annotations

import argparse
import copy
import json
import random
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
TEMPLATE = HERE.parent / "fixtures" / "results" / "h200-default.json"


def indented(value: object, level: int) -> str:
    """json.dumps(indent=2) of `value` as it appears `level` levels deep in the document."""
    text = json.dumps(value, indent=2, ensure_ascii=False)
    return text.replace("\n", "\n" + "  " * level)


SCALED_STATS = ("median", "min", "max", "mean", "p10", "p90", "stddev")


class CaseTemplate:
    """One template case as text with holes for the id, the index and the scaled numbers, so
    that writing a case is string joining (json.dumps of every case is several times slower)."""

    def __init__(self, template: dict) -> None:
        self.id = template["id"]
        case = copy.deepcopy(template)
        case["id"] = "@@ID@@"
        case["params"]["index"] = "@@INDEX@@"
        self.values: list[float] = []

        def hole(value: float) -> str:
            self.values.append(value)
            return f"@@V{len(self.values) - 1}@@"

        for metric in case["metrics"].values():
            metric["samples"] = [hole(v) for v in metric["samples"]]
            for key in SCALED_STATS:
                metric["stats"][key] = hole(metric["stats"][key])
        self.pieces = re.split(r'"@@(\w+)@@"', indented(case, 2))

    def render(self, index: int, factor: float) -> str:
        out = []
        for k, piece in enumerate(self.pieces):
            if k % 2 == 0:
                out.append(piece)
            elif piece == "ID":
                out.append(json.dumps(f"{self.id}/index={index}", ensure_ascii=False))
            elif piece == "INDEX":
                out.append(str(index))
            else:
                out.append(repr(self.values[int(piece[1:])] * factor))
        return "".join(out)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", type=int, required=True, help="number of cases")
    parser.add_argument("--out", type=Path, required=True, help="file to write")
    parser.add_argument("--template", type=Path, default=TEMPLATE, help="result to repeat")
    parser.add_argument("--seed", type=int, default=1, help="seed of the sample scaling")
    args = parser.parse_args()
    if args.cases < 1:
        parser.error("--cases must be at least 1")
    doc = json.loads(args.template.read_text())
    templates = [CaseTemplate(t) for t in doc["cases"]]
    rng = random.Random(args.seed)
    with open(args.out, "w", encoding="utf-8") as out:
        out.write("{\n")
        for key, value in doc.items():
            if key == "cases":
                continue
            out.write(f"  {json.dumps(key)}: {indented(value, 1)},\n")
        out.write('  "cases": [\n')
        for i in range(args.cases):
            case = templates[i % len(templates)].render(i, rng.uniform(0.98, 1.02))
            out.write("    " + case + (",\n" if i + 1 < args.cases else "\n"))
        out.write("  ]\n}\n")
    size = args.out.stat().st_size
    print(f"{args.out}: {args.cases} cases, {size} bytes ({size / args.cases:.0f} per case)",
          file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
