#!/usr/bin/env python3
"""Draw a pathbench timeline (the Chrome trace-event JSON that src/timeline's chrome_trace writes)
as a Gantt chart PNG.

    timeline.py TRACE.json --out PNG [--title T]

Rows, top to bottom: NVTX ranges of the `pathbench` domain (one row per nesting level: scenario,
case, repetition), host synchronisations, unified-memory counter records (ticks), then one row
per GPU stream ("GPU 0 · stream 13"). Copies are coloured by direction (HtoD, DtoH, DtoD, other),
kernels and memsets by kind; the x axis is milliseconds since the first record. The figure notes
how many records CUPTI dropped (the timeline is then incomplete).

Input: {"traceEvents": [...], "otherData": {...}} (or a bare event array); "X" events need name,
ts, dur (microseconds, within ±1e15: 31 years), pid, tid; "M" events name processes ("GPU 0",
"host") and threads ("stream 13"). The JSON is read by the same rules as results (result_file.py:
a UTF-8 BOM is skipped; NaN, lone surrogates, nesting beyond 64 levels are refused), and a trace
over 64 MiB (about 280 000 events; pathbench's traces hold one sample each, far fewer) is refused
before it is read: parsed, it would take about ten times that in memory. The PNG is
written atomically; a directory, FIFO or device there is refused, never replaced.
Prints the PNG's path on stdout. Exit codes: 0 done, 3 unreadable or unusable input, or usage (the
message names the file and the event's JSON pointer), 1 an unexpected error.
"""
from __future__ import annotations

import sys
from pathlib import Path

# The report directory holds html.py, which would shadow the standard library's `html` package
# (pyparsing, imported by matplotlib, needs html.entities): keep this directory off sys.path.
_HERE = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != _HERE]
sys.path.insert(0, str(_HERE / "lib"))  # the shared reader, importable by name

import argparse  # noqa: E402
import io  # noqa: E402
import math  # noqa: E402
from dataclasses import dataclass, field  # noqa: E402
from typing import Any  # noqa: E402


import pathbench_result_file as rf  # noqa: E402  (reports/lib, put on sys.path above)

PROG = "timeline.py"
DPI = 110
# Times are microseconds since the first record; beyond 31 years they are no trace this tool
# wrote, and the axis arithmetic would overflow.
MAX_US = 1e15
# The largest trace read (checked before reading): a parsed event takes about ten times its text
# (two dicts, its strings and numbers), so 64 MiB take ~560 MB, and drawing 280 000 bars already
# takes most of a minute.
MAX_TRACE_BYTES = 64 << 20

GPU_CATEGORIES = ("copy", "kernel", "memset")
# One colour per kind of bar, the same in every chart.
KIND_COLORS: dict[str, str] = {
    "HtoD": "#1f77b4",
    "DtoH": "#ff7f0e",
    "DtoD": "#2ca02c",
    "other copy": "#9467bd",
    "kernel": "#d62728",
    "memset": "#8c564b",
    "NVTX range": "#bcbd22",
    "synchronization": "#17becf",
    "unified memory": "#e377c2",
}
KIND_ORDER = list(KIND_COLORS)


InputError = rf.InputError


@dataclass
class Bar:
    start_ms: float
    width_ms: float
    kind: str
    label: str


@dataclass
class Row:
    label: str
    bars: list[Bar] = field(default_factory=list)
    ticks: list[float] = field(default_factory=list)  # instants (unified-memory records)


@dataclass
class Chart:
    title: str
    rows: list[Row]
    end_ms: float
    dropped_records: int
    unavailable_reason: str
    events: int


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) and abs(v) <= MAX_US


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def load_trace(path: Path) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The validated event list and otherData of a Chrome trace file."""
    doc = rf.read_json(path, MAX_TRACE_BYTES)
    other: dict[str, Any] = {}
    if isinstance(doc, list):
        events = doc
    elif isinstance(doc, dict):
        if "traceEvents" not in doc:
            raise InputError(path, "/traceEvents", "missing (not a Chrome trace)")
        events = doc["traceEvents"]
        if not isinstance(events, list):
            raise InputError(path, "/traceEvents", "expected an array")
        other_raw = doc.get("otherData", {})
        if not isinstance(other_raw, dict):
            raise InputError(path, "/otherData", "expected an object")
        other = other_raw
    else:
        raise InputError(path, "", "expected an object with traceEvents or an array of events")
    base = "/traceEvents" if isinstance(doc, dict) else ""
    for i, e in enumerate(events):
        where = f"{base}/{i}"
        if not isinstance(e, dict):
            raise InputError(path, where, "expected an object")
        if not isinstance(e.get("ph"), str):
            raise InputError(path, f"{where}/ph", "expected a string")
        if not isinstance(e.get("name"), str):
            raise InputError(path, f"{where}/name", "expected a string")
        if e["ph"] == "M":
            continue
        if not _is_number(e.get("ts")):
            raise InputError(path, f"{where}/ts", f"expected a number within ±{MAX_US:g} (microseconds)")
        for key in ("pid", "tid"):
            if key in e and not _is_int(e[key]):
                raise InputError(path, f"{where}/{key}", "expected an integer")
        if e["ph"] == "X" and (not _is_number(e.get("dur")) or e["dur"] < 0):
            raise InputError(path, f"{where}/dur", f"expected a non-negative number up to {MAX_US:g} (microseconds)")
        if "args" in e and not isinstance(e["args"], dict):
            raise InputError(path, f"{where}/args", "expected an object")
    return events, other


def _copy_kind(e: dict[str, Any]) -> str:
    kind = e.get("args", {}).get("copy_kind")
    if not isinstance(kind, str) or not kind:
        kind = e["name"].split(" ", 1)[0]
    return kind if kind in ("HtoD", "DtoH", "DtoD") else "other copy"


def _bar_kind(e: dict[str, Any]) -> str:
    cat = e.get("cat", "")
    if cat == "copy":
        return _copy_kind(e)
    return "kernel" if cat == "kernel" else "memset"


def _nvtx_levels(ranges: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """Ranges split into nesting levels: a range inside an open one goes one level down."""
    levels: list[list[dict[str, Any]]] = []
    open_ends: list[float] = []  # end time of the open range at each depth
    for e in sorted(ranges, key=lambda r: (r["ts"], -r["dur"])):
        while open_ends and open_ends[-1] <= e["ts"]:
            open_ends.pop()
        depth = len(open_ends)
        open_ends.append(e["ts"] + e["dur"])
        while len(levels) <= depth:
            levels.append([])
        levels[depth].append(e)
    return levels


def build_chart(events: list[dict[str, Any]], other: dict[str, Any], title: str | None,
                source: Path) -> Chart:
    process_names: dict[int, str] = {}
    thread_names: dict[tuple[int, int], str] = {}
    for e in events:
        if e["ph"] != "M" or not isinstance(e.get("args"), dict):
            continue
        name = e["args"].get("name")
        if not isinstance(name, str) or not _is_int(e.get("pid")):
            continue
        if e["name"] == "process_name":
            process_names[e["pid"]] = name
        elif e["name"] == "thread_name" and _is_int(e.get("tid")):
            thread_names[(e["pid"], e["tid"])] = name

    timed = [e for e in events if e["ph"] != "M"]
    gpu = [e for e in timed if e["ph"] == "X" and e.get("cat") in GPU_CATEGORIES]
    nvtx = [e for e in timed if e["ph"] == "X" and e.get("cat") == "nvtx"]
    sync = [e for e in timed if e["ph"] == "X" and e.get("cat") == "sync"]
    um = [e for e in timed if e.get("cat") == "um" and e["ph"] in ("C", "i", "I", "X")]
    if not (gpu or nvtx or sync or um):
        reason = other.get("unavailable_reason") if isinstance(other.get("unavailable_reason"), str) else ""
        why = f" (timeline unavailable: {reason})" if reason else ""
        raise InputError(source, "/traceEvents", f"no copy, kernel, memset, NVTX, sync or unified-memory events to draw{why}")

    def ms(us: float) -> float:
        return us / 1000.0

    rows: list[Row] = []
    levels = _nvtx_levels(nvtx)
    for depth, level in enumerate(levels):
        row = Row("NVTX" if len(levels) == 1 else f"NVTX level {depth + 1}")
        row.bars = [Bar(ms(e["ts"]), ms(e["dur"]), "NVTX range", e["name"]) for e in level]
        rows.append(row)
    if sync:
        rows.append(Row("host sync", [Bar(ms(e["ts"]), ms(e["dur"]), "synchronization", e["name"])
                                      for e in sync]))
    if um:
        rows.append(Row("unified memory", ticks=[ms(e["ts"]) for e in um]))

    streams: dict[tuple[int, int], Row] = {}
    for e in sorted(gpu, key=lambda x: (x.get("pid", 0), x.get("tid", 0), x["ts"])):
        key = (e.get("pid", 0), e.get("tid", 0))
        if key not in streams:
            process = process_names.get(key[0], f"GPU {key[0]}")
            thread = thread_names.get(key, f"stream {key[1]}")
            streams[key] = Row(f"{process} \u00b7 {thread}")
        streams[key].bars.append(Bar(ms(e["ts"]), ms(e["dur"]), _bar_kind(e), e["name"]))
    rows.extend(streams[k] for k in sorted(streams))

    end_ms = max([b.start_ms + b.width_ms for r in rows for b in r.bars] +
                 [t for r in rows for t in r.ticks] + [0.0])
    other_title = other.get("title") if isinstance(other.get("title"), str) else ""
    dropped = other.get("dropped_records", 0)
    reason = other.get("unavailable_reason", "")
    return Chart(title=title or other_title or source.name, rows=rows, end_ms=end_ms,
                 dropped_records=dropped if _is_int(dropped) else 0,
                 unavailable_reason=reason if isinstance(reason, str) else "",
                 events=len(timed))


def _darker(color: str, factor: float = 0.6) -> str:
    r, g, b = (int(color[i:i + 2], 16) for i in (1, 3, 5))
    return "#" + "".join(f"{int(c * factor):02x}" for c in (r, g, b))


def _shorten(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: max(1, limit - 1)] + "\u2026"


def draw(chart: Chart) -> Any:
    """The Gantt chart as a matplotlib Figure (Agg), not yet saved: plot.py and html.py draw the
    traces a result names with it."""
    import matplotlib
    matplotlib.use("Agg")
    from matplotlib.figure import Figure
    from matplotlib.patches import Patch

    n = len(chart.rows)
    width_in = 12.0
    height_in = max(4.0, 1.6 + 0.55 * n)
    fig = Figure(figsize=(width_in, height_in), dpi=DPI)
    ax = fig.add_subplot(1, 1, 1)
    span = chart.end_ms if chart.end_ms > 0 else 1.0
    # Bars narrower than this (in ms) get no label; a label fits ~1 character per 0.9% of the axis.
    label_min = span * 0.06
    used: set[str] = set()
    height = 0.7
    for i, row in enumerate(chart.rows):
        y = n - 1 - i  # first row at the top
        by_kind: dict[str, list[tuple[float, float]]] = {}
        for b in row.bars:
            by_kind.setdefault(b.kind, []).append((b.start_ms, b.width_ms))
        for kind, spans in by_kind.items():
            color = KIND_COLORS.get(kind, "#7f7f7f")
            # A darker edge keeps microsecond bars visible at millisecond scale and separates
            # back-to-back bars of one kind.
            ax.broken_barh(spans, (y - height / 2, height), facecolors=color,
                           edgecolors=_darker(color), linewidth=0.6)
            used.add(kind)
        for b in row.bars:
            if b.width_ms >= label_min:
                chars = int(b.width_ms / span * 110)
                ax.text(b.start_ms + b.width_ms / 2, y, _shorten(b.label, chars), ha="center",
                        va="center", fontsize=7, color="white" if b.kind != "NVTX range" else "black",
                        clip_on=True)
        if row.ticks:
            ax.vlines(row.ticks, y - height / 2, y + height / 2, colors=KIND_COLORS["unified memory"],
                      linewidth=1.0)
            used.add("unified memory")
    ax.set_yticks(range(n))
    ax.set_yticklabels([r.label for r in reversed(chart.rows)], fontsize=8)
    ax.set_ylim(-0.7, n - 0.3)
    ax.set_xlim(0, span * 1.02)
    ax.set_xlabel("time since the first record (ms)")
    ax.grid(axis="x", color="#dddddd", linewidth=0.6)
    ax.set_axisbelow(True)
    handles = [Patch(facecolor=KIND_COLORS[k], label=k) for k in KIND_ORDER if k in used]
    # Under the x label: ~0.5 inch below the axes, whose height is the figure's less ~1.4 inch.
    ax.legend(handles=handles, loc="upper center", bbox_to_anchor=(0.5, -0.5 / (height_in - 1.4)),
              ncol=min(len(handles), 5), fontsize=8, frameon=False)
    ax.set_title(chart.title, fontsize=11)
    note = f"{chart.events} events"
    color = "#555555"
    if chart.dropped_records:
        note += f"; CUPTI dropped {chart.dropped_records} records: the timeline is incomplete"
        color = "#c00000"
    fig.text(0.01, 0.01, note, fontsize=7, color=color)
    fig.tight_layout(rect=(0, 0.03, 1, 1))
    return fig


def chart_of(path: Path, title: str | None = None) -> Chart:
    """The chart of one trace file; InputError for a file timeline.py would refuse."""
    events, other = load_trace(path)
    return build_chart(events, other, title, path)


def render(chart: Chart, out: Path) -> None:
    fig = draw(chart)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=DPI, facecolor="white")
    # Written next to the target and renamed: a reader never sees half a PNG.
    rf.write_atomically(out, buf.getvalue())


def main(argv: list[str] | None = None) -> int:
    parser = rf.UsageParser(prog=PROG, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("trace", type=Path, metavar="TRACE.json", help="Chrome trace written by pathbench")
    parser.add_argument("--out", type=Path, required=True, metavar="PNG", help="the PNG file to write")
    parser.add_argument("--title", help="figure title (default: the trace's otherData.title)")
    args = parser.parse_args(argv)
    events, other = load_trace(args.trace)
    chart = build_chart(events, other, args.title, args.trace)
    rf.check_output_file(args.out)  # before drawing: a directory or FIFO there is refused at once
    render(chart, args.out)
    print(args.out)
    return 0


if __name__ == "__main__":
    rf.run_main(PROG, main)
