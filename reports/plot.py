#!/usr/bin/env python3
"""Plot pathbench results (pathbench.result/v1) and comparisons (pathbench.compare/v1) as PNG files.

    plot.py RESULT... --out DIR [--compare COMPARE_JSON]

Writes, for whatever the results contain (a plot without data is skipped with a note on stderr):
  bandwidth_h2d.png, bandwidth_d2h.png, bandwidth_d2d.png   copy bandwidth vs transfer size
  latency.png      time per copy and round trip time of the latency cases
  pin_cost.png     cudaMallocHost / cudaHostRegister cost per GiB
  host_memory.png  host memcpy bandwidth per (CPU node, memory node, page) and first-touch/mlock cost
  serving_latency.png       per-request latency (H2D copy, whole request) against the percentile on a
                            "nines" axis, one line per strategy, a panel per request size and arrival mode
  serving_head_of_line.png  a request's H2D p50 and p99 behind a bulk copy, against the bulk copy size
  serving_pool.png          the pinned pool's pageable fallbacks and high-water per case
  serving_percentiles.png   p50 … max of every serving case, a row each
                            (the serving plots only for results with serving cases)
  overlap.png          time per iteration against the ideal (max(copy alone, kernel alone)) and
                       the overlap fraction, per variant
  small_copies.png     time per batch, API calls per batch and issuing CPU time per method
  unified_memory.png   time, time per MiB, GPU fault groups and bytes migrated (um_counters) per method
  peer_bandwidth.png   a source x destination GPU heatmap per method and direction
  peer_latency.png     time per copy and round trip per method and link
                       (each family's plots only for results with that family)
  gantt_<case>.png     the Chrome trace a case names (`timeline`), drawn by timeline.py; looked up
                       as recorded, beside the result and in <result>.timelines/
  compare.png      (with --compare) per-case change of the headline metric, worst first
                   (symmetric-log beyond ±25 %, clipped beyond ±1000 %)
Several results: legends name the files ("[2] b.json (host)"); line style x marker (or marker
fill) tell them apart, unique for up to 12.
Only `ok` cases are plotted; skipped and failed cases are counted in each figure's footnote, and
so are ok cases whose values are beyond ±1e100 (valid, but no axis can hold them). A run that did
not finish (`"complete": false`) says INCOMPLETE in every title and footnote.
Inputs are read by pathbench itself (`pathbench export --json-lines`, lib/pathbench_reader.py). Outputs are written atomically;
a directory, FIFO or device where a PNG should go is refused, never replaced.
--describe FILE.json also writes what each figure holds (axes, titles, labels, legends; for tests).
Prints the files written, one per line, on stdout. Exit codes: 0 done, 3 bad input or usage (the
message names the file and the JSON pointer), 1 an unexpected error.

The code: lib/pathbench_plots/, a module per family's plots as in bench/ (layout in its __init__.py);
html.py uses it too. load_result(), load_compare(), build_plots() and render() stay importable from here.
"""
from __future__ import annotations

import sys
from pathlib import Path

# The report directory holds html.py, which would shadow the standard library's `html` package
# (pyparsing, imported by matplotlib, needs html.entities): keep this directory off sys.path.
_HERE = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != _HERE]
sys.path.insert(0, str(_HERE / "lib"))  # the shared reader and the plots package, importable by name

import argparse  # noqa: E402
import json  # noqa: E402
from typing import Sequence  # noqa: E402

import pathbench_result_file as rf  # noqa: E402  (reports/lib, put on sys.path above)
from pathbench_plots.common import load_compare, load_result  # noqa: E402
from pathbench_plots.families import build_plots  # noqa: E402
from pathbench_plots.figure import PlotOutput, describe, render  # noqa: E402

PROG = "plot.py"


def write_plots(plots: Sequence[PlotOutput], out_dir: Path) -> list[Path]:
    """Writes each drawable plot atomically; refuses (InputError) before writing anything when a
    target is something other than a regular file."""
    rf.check_output_dir(out_dir)
    for p in plots:
        if p.figure is not None:
            rf.check_output_file(out_dir / p.name)
    written = []
    for p in plots:
        data = render(p)
        if data is None:
            continue
        path = out_dir / p.name
        rf.write_atomically(path, data)
        written.append(path)
    return written


# --------------------------------------------------------------------------------------------
# Command line


def main(argv: list[str] | None = None) -> int:
    parser = rf.UsageParser(prog=PROG, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("results", nargs="+", type=Path, metavar="RESULT", help="pathbench.result/v1 JSON file(s)")
    parser.add_argument("--out", type=Path, required=True, metavar="DIR", help="directory for the PNG files")
    parser.add_argument("--compare", type=Path, metavar="COMPARE_JSON",
                        help="a pathbench.compare/v1 file (from `pathbench compare --json`): adds compare.png")
    parser.add_argument("--describe", type=Path, metavar="FILE.json",
                        help="also write what each figure holds as JSON (per plot: drawn or why not; per axes: title, "
                        "labels, scales, how many lines, bars and images, tick labels, texts, legend entries)")
    args = parser.parse_args(argv)
    results = [load_result(p) for p in args.results]
    compare = load_compare(args.compare) if args.compare else None
    # Before drawing: a file or FIFO where the directory should be is refused at once.
    rf.check_output_dir(args.out)
    if args.describe is not None:
        rf.check_output_file(args.describe)
    plots = build_plots(results, compare)
    written = write_plots(plots, args.out)
    if args.describe is not None:
        doc = {"results": [str(r.path) for r in results], "plots": [describe(p) for p in plots]}
        rf.write_atomically(args.describe, (json.dumps(doc, indent=1, ensure_ascii=False) + "\n").encode("utf-8"))
    for p in plots:
        if p.figure is None:
            print(f"{PROG}: note: {p.name} skipped: {rf.printable(p.note)}", file=sys.stderr)
    for r in results:
        if not r.complete:
            print(f"{PROG}: note: {r.path}: incomplete run ({rf.printable(r.incomplete_reason)}): the plots show "
                  "its finished cases only and say INCOMPLETE", file=sys.stderr)
    if not written:
        print(f"{PROG}: note: nothing to plot", file=sys.stderr)
    for path in written:
        print(path)
    return 0


if __name__ == "__main__":
    rf.run_main(PROG, main)
