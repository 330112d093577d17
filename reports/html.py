#!/usr/bin/env python3
"""Build one self-contained HTML page from a pathbench result (and optionally a comparison).

    html.py RESULT [RESULT...] [--compare COMPARE_JSON] --out FILE.html

The page has no external resources: the plots (drawn as plot.py draws them) are embedded as
data: URIs and the CSS is inline, so the file can be attached to a ticket or a CI artifact as is.
Sections: header (node type, host, time), context (every field; GPUs as a sub-table), summary
(ok/skipped/failed), plots, cases (id, status, headline median, p10-p90, cv, n, reason) and, with
--compare, the verdicts (worst first) and the bandwidth floors. A result with `serving` cases also
gets "Serving / tail latency": the serving plots and, per case, p50/p90/p99/p99.9/max of the H2D
copy and of the whole request (µs), the throughput and the pinned pool's fallbacks and high-water.
A run that did not finish (`"complete": false`, or an older file without an end time) gets a
banner at the top: its cases are the finished ones only.
Several results: one page for all of them; a "Results" table names each file ([1], [2] … as in the
plots' legends), the summary, serving tables and context are per file, and the cases table has a
column per file. "Timelines": every case that names a trace (`timeline`: overlap always, other
families with `run --timeline`) gets a link to the trace file (relative to the page, so keep them
side by side; the trace is looked up as plot.py does: as recorded, beside the result, in
<result>.timelines/) and its Gantt chart (timeline.py), embedded; a trace that is missing or
unreadable is listed with the reason.
Inputs are read by pathbench itself (`pathbench export --json-lines`, lib/pathbench_reader.py); the page is written atomically,
and a directory, FIFO or device at FILE.html is refused, never replaced.
Exit codes: 0 written, 3 bad input or usage (the message names the file and the JSON pointer),
1 an unexpected error.
The code: lib/pathbench_html/, a module per section (the plots from lib/pathbench_plots/).
"""
from __future__ import annotations

import sys
from pathlib import Path

# This file is named html.py: with its directory on sys.path, `import html` would import this
# file instead of the standard library's package. Drop the directory before importing anything;
# reports/lib (the shared reader and the report packages) is importable by name instead.
_HERE = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != _HERE]
sys.path.insert(0, str(_HERE / "lib"))

import argparse  # noqa: E402
import datetime  # noqa: E402
import warnings  # noqa: E402
from typing import Any, Iterable, Sequence  # noqa: E402

import pathbench_result_file as rf  # noqa: E402  (reports/lib, put on sys.path above)
from pathbench_html.cases import section_cases, section_cases_several  # noqa: E402
from pathbench_html.compare import _compared_result, section_floors, section_verdicts  # noqa: E402
from pathbench_html.figures import section_plots, section_timelines  # noqa: E402
from pathbench_html.overview import (section_context, section_context_several, section_header,  # noqa: E402
                                     section_header_several, section_incomplete, section_results, section_summary)
from pathbench_html.page import CSS, esc  # noqa: E402
from pathbench_html.serving import section_serving  # noqa: E402
from pathbench_plots.common import load_compare, load_result, result_names  # noqa: E402
from pathbench_plots.families import SERVING_PLOTS, build_plots  # noqa: E402
from pathbench_plots.gantt import trace_refs  # noqa: E402

PROG = "html.py"


def build_page(results: Sequence[Any] | Any, compare: Any | None, out: Path = Path("report.html")) -> str:
    if not isinstance(results, (list, tuple)):
        results = [results]
    for i, r in enumerate(results):
        r.index = i
    result = results[0]
    several = len(results) > 1
    plots = build_plots(results, compare)
    gantt_names = {ref.png_name for ref in trace_refs(results)}
    gantts = {p.name: p for p in plots if p.name in gantt_names}
    serving_plots = [p for p in plots if p.name in SERVING_PLOTS]
    plots = [p for p in plots if p.name not in SERVING_PLOTS and p.name not in gantt_names]
    serving = section_serving(results, serving_plots)
    timelines = section_timelines(results, gantts, out)
    # Order: what a reader looks for first (summary, verdicts) before the long tables.
    nav = ['<a href="#summary">summary</a>']
    if several:
        header = section_header_several(results)
        nav.insert(0, '<a href="#results">results</a>')
    else:
        header = section_header(result)
    body = [header, "", "<main>", "".join(section_incomplete(r) for r in results)]
    if several:
        body.append(section_results(results))
    body.append(section_summary(result, compare, results))
    if compare is not None:
        nav += ['<a href="#verdicts">verdicts</a>', '<a href="#floors">floors</a>']
        body += [section_verdicts(compare, _compared_result(results, compare)), section_floors(compare)]
    nav += ['<a href="#plots">plots</a>']
    if serving:
        nav.append('<a href="#serving">serving</a>')
    if timelines:
        nav.append('<a href="#timelines">timelines</a>')
    nav += ['<a href="#cases">cases</a>', '<a href="#context">context</a>']
    body += [section_plots(plots, results), serving, timelines,
             section_cases_several(results) if several else section_cases(result),
             section_context_several(results) if several else section_context(result)]
    body[1] = f'<nav>{"".join(nav)}</nav>'

    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    sources = ", ".join(esc(r.path) for r in results) + (f" and {esc(compare.path)}" if compare is not None else "")
    body.append(f"<footer>Generated by reports/html.py at {now} from {sources}.</footer></main>")
    with warnings.catch_warnings():  # clearing a log axis resets its limits to (0, 1): matplotlib warns
        warnings.simplefilter("ignore", UserWarning)
        for p in plots + serving_plots + list(gantts.values()):
            if p.figure is not None:
                p.figure.clear()
    if several:
        names = result_names(results)
        title = f"pathbench — {len(results)} results — " + ", ".join(names[r.index] for r in results)
    else:
        title = f"pathbench — {result.node_type} — {result.hostname} — {result.start_time}"
    if not all(r.complete for r in results):
        title = "INCOMPLETE " + title
    return ("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
            f"<title>{esc(title)}</title>\n<style>{CSS}</style>\n</head>\n<body>\n"
            + "\n".join(body) + "\n</body>\n</html>\n")


def main(argv: Iterable[str] | None = None) -> int:
    parser = rf.UsageParser(prog=PROG, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("results", nargs="+", type=Path, metavar="RESULT",
                        help="pathbench.result/v1 JSON file(s): several go on one page, named by file")
    parser.add_argument("--compare", type=Path, metavar="COMPARE_JSON",
                        help="a pathbench.compare/v1 file: adds the verdicts and floors tables and compare.png")
    parser.add_argument("--out", type=Path, required=True, metavar="FILE.html", help="the HTML file to write")
    args = parser.parse_args(list(argv) if argv is not None else None)
    results = [load_result(p) for p in args.results]
    compare = load_compare(args.compare) if args.compare else None
    # Before the plots are drawn: a directory or FIFO at the output is refused at once.
    rf.check_output_file(args.out)
    page = build_page(results, compare, args.out)
    rf.write_atomically(args.out, page.encode("utf-8"))
    print(args.out)
    return 0


if __name__ == "__main__":
    rf.run_main(PROG, main)
