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
Inputs are read by the rules of the C++ reader (lib/pathbench_result_file.py). Outputs are written atomically;
a directory, FIFO or device where a PNG should go is refused, never replaced.
--describe FILE.json also writes what each figure holds (axes, titles, labels, legends; for tests).
Prints the files written, one per line, on stdout. Exit codes: 0 done, 3 bad input or usage (the
message names the file and the JSON pointer), 1 an unexpected error.

Also used as a module by html.py: load_result(), load_compare(), build_plots(), render().
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
import functools  # noqa: E402
import importlib.util  # noqa: E402
import io  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402
import re  # noqa: E402
from collections import Counter, OrderedDict  # noqa: E402
from dataclasses import dataclass, field  # noqa: E402
from typing import TYPE_CHECKING, Any, Callable, Iterable, Sequence, TypeGuard  # noqa: E402

if TYPE_CHECKING:
    import matplotlib
    import matplotlib.colors as mcolors
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure
    from matplotlib.lines import Line2D
    from matplotlib.ticker import FixedLocator, FuncFormatter, LogLocator, NullFormatter


import pathbench_result_file as rf  # noqa: E402  (reports/lib, put on sys.path above)


def _load_matplotlib() -> None:
    """matplotlib (Agg backend) is imported on first use: bad input is rejected without paying for it."""
    global matplotlib, mcolors, Figure, Line2D, FixedLocator, FuncFormatter, LogLocator, NullFormatter
    if "Figure" in globals():
        return
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.colors as mcolors
    from matplotlib.figure import Figure
    from matplotlib.lines import Line2D
    from matplotlib.ticker import FixedLocator, FuncFormatter, LogLocator, NullFormatter

RESULT_SCHEMA = "pathbench.result/v1"
COMPARE_SCHEMA = "pathbench.compare/v1"
PROG = "plot.py"

DPI = 110
MAX_COMPARE_ROWS = 60
# compare.png's x axis: linear up to this span (in %), symmetric-log beyond with the linear part
# ±linthresh (the largest threshold, within these bounds), and bars clipped beyond COMPARE_CLIP %.
COMPARE_LINEAR_SPAN = 25.0
COMPARE_MIN_LINTHRESH = 5.0
COMPARE_MAX_LINTHRESH = 20.0
COMPARE_CLIP = 1000.0
# A result may hold any finite number (the C++ reader accepts 1e308), but a plot cannot: axis
# limits and error bars computed from such values overflow to infinity. Cases with values beyond
# this are left out of the plots, and each figure's footnote counts them.
PLOT_LIMIT = 1e100
MAX_PLOT_BYTES = 1 << 60

# One colour per host memory kind, the same in every plot.
KIND_COLORS: dict[str, str] = {
    "pinned": "#1f77b4",
    "registered-4k": "#2ca02c",
    "registered-thp": "#17becf",
    "registered-hugetlb": "#9467bd",
    "pageable-4k": "#d62728",
    "pageable-thp": "#ff7f0e",
    "device": "#444444",
}
PAGE_COLORS: dict[str, str] = {"4k": "#d62728", "thp": "#ff7f0e", "hugetlb": "#9467bd", "locked": "#7f7f7f"}
EXTRA_COLORS = ["#8c564b", "#e377c2", "#bcbd22", "#7f7f7f", "#aec7e8", "#ffbb78", "#98df8a", "#c5b0d5"]
# How several results are told apart. Each cycle is short enough to read, and their lengths are
# chosen so that no two of the first 12 results share a combination: line style (4) x marker (5)
# where both mark the result, line style (4) x marker fill (3) where the marker is the series'
# (result i: style i % 4, marker i % 5, fill (i // 4) % 3).
RESULT_STYLES = ["-", "--", ":", "-."]
RESULT_MARKERS = ["o", "s", "^", "D", "v"]
RESULT_FILLS = ["full", "none", "left"]
RESULT_COLORS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
                 "#bcbd22", "#17becf"]


def result_style(i: int) -> str:
    return RESULT_STYLES[i % len(RESULT_STYLES)]


def result_marker(i: int) -> str:
    return RESULT_MARKERS[i % len(RESULT_MARKERS)]


def result_fill(i: int) -> str:
    return RESULT_FILLS[(i // len(RESULT_STYLES)) % len(RESULT_FILLS)]


def result_color(i: int) -> str:
    return RESULT_COLORS[i % len(RESULT_COLORS)]
KIND_MARKERS: dict[str, str] = {
    "pinned": "o", "registered-4k": "s", "registered-thp": "^", "registered-hugetlb": "D",
    "pageable-4k": "v", "pageable-thp": "P", "device": "o",
}
KIND_ORDER = ["pinned", "registered-4k", "registered-thp", "registered-hugetlb", "pageable-4k", "pageable-thp"]
PAGE_ORDER = ["4k", "thp", "hugetlb"]

VERDICT_COLORS: dict[str, str] = {
    "regression": "#d62728",
    "failed": "#7b0000",
    "missing": "#8c564b",
    "noise": "#f0a30a",
    "pass": "#4c78a8",
    "improvement": "#2ca02c",
    "new": "#17becf",
    "skipped": "#9e9e9e",
    "across": "#9467bd",
    "insufficient": "#8c564b",
    "flaky": "#bcbd22",
    "unstable": "#b0b0b0",
}
# Worst first.
VERDICT_RANK: dict[str, int] = {
    "failed": 0, "regression": 1, "missing": 2, "insufficient": 2, "flaky": 3, "noise": 3,
    "unstable": 4, "across": 4, "new": 5, "pass": 6, "improvement": 7, "skipped": 8,
}


# --------------------------------------------------------------------------------------------
# Input

# A result is read by the rules of the C++ reader (lib/pathbench_result_file.py); what it accepts, the plots
# draw or say why they cannot.
if TYPE_CHECKING:
    from result_file import InputError, Result as LoadedResult
else:
    InputError = rf.InputError
    LoadedResult = rf.Result


def load_result(path: Path | str) -> LoadedResult:
    """Reads a pathbench.result/v1 file; InputError where the C++ reader would refuse it."""
    result: LoadedResult = rf.load_result(path)
    return result


@dataclass
class LoadedCompare:
    path: Path
    data: dict[str, Any]

    @property
    def cases(self) -> list[dict[str, Any]]:
        return self.data.get("cases") or []


def _is_number(v: Any) -> TypeGuard[int | float]:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _expect(path: Path, pointer: str, cond: bool, message: str) -> None:
    if not cond:
        raise InputError(path, pointer, message)


def load_compare(path: Path | str) -> LoadedCompare:
    """Reads and checks a pathbench.compare/v1 file; unknown fields are ignored."""
    path = Path(path)
    data = rf.read_json(path)
    _expect(path, "", isinstance(data, dict), "expected a JSON object")
    _expect(path, "/schema", data.get("schema") == COMPARE_SCHEMA,
            f"expected {COMPARE_SCHEMA!r}, found {rf.text_of(data.get('schema'))[:80]!r}")
    _expect(path, "/cases", isinstance(data.get("cases"), list), "expected an array")
    for key in ("baseline", "result", "summary"):
        if data.get(key) is not None:
            _expect(path, f"/{key}", isinstance(data[key], dict), "expected an object")
    for key in ("changes", "noise", "not_gateable", "floors"):
        if data.get(key) is not None:
            _expect(path, f"/{key}", isinstance(data[key], list), "expected an array")
    for key in ("alpha", "default_threshold"):
        if key in data:
            _expect(path, f"/{key}", data[key] is None or _is_number(data[key]), "expected a number or null")
    for i, case in enumerate(data["cases"]):
        p = f"/cases/{i}"
        _expect(path, p, isinstance(case, dict), "expected an object")
        _expect(path, f"{p}/id", isinstance(case.get("id"), str) and case["id"] != "", "expected a non-empty string")
        _expect(path, f"{p}/verdict", isinstance(case.get("verdict"), str), "expected a string")
        metrics = case.get("metrics")
        if metrics is None:
            continue
        _expect(path, f"{p}/metrics", isinstance(metrics, list), "expected an array")
        for j, m in enumerate(metrics):
            mp = f"{p}/metrics/{j}"
            _expect(path, mp, isinstance(m, dict), "expected an object")
            _expect(path, f"{mp}/name", isinstance(m.get("name"), str), "expected a string")
            for key in ("baseline_median", "result_median", "change_pct", "threshold_pct", "p_value", "ratio",
                        "n_baseline", "n_result"):
                if key in m:
                    _expect(path, f"{mp}/{key}", m[key] is None or _is_number(m[key]), "expected a number or null")
    floors = data.get("floors")
    if floors is not None:
        _expect(path, "/floors", isinstance(floors, list), "expected an array")
        for i, f in enumerate(floors):
            _expect(path, f"/floors/{i}", isinstance(f, dict), "expected an object")
            for key in ("measured_gb_per_s", "floor_gb_per_s", "link_raw_gb_per_s", "fraction"):
                if key in f:
                    _expect(path, f"/floors/{i}/{key}", f[key] is None or _is_number(f[key]), "expected a number or null")
    return LoadedCompare(path, data)


# --------------------------------------------------------------------------------------------
# Formatting helpers


def format_bytes(n: float) -> str:
    """Binary units: 4 B, 64 KiB, 1.5 MiB, 1 GiB."""
    n = float(n)
    for unit, scale in (("TiB", 1 << 40), ("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if abs(n) >= scale:
            v = n / scale
            return f"{v:.0f} {unit}" if v == int(v) else f"{v:.3g} {unit}"
    return f"{n:.0f} B" if n == int(n) else f"{n:.3g} B"


def format_number(v: float) -> str:
    if v == 0:
        return "0"
    a = abs(v)
    if a >= 1000:
        return f"{v:,.0f}"
    if a >= 100:
        return f"{v:.0f}"
    if a >= 10:
        return f"{v:.1f}"
    if a >= 0.01:
        return f"{v:.3g}"
    return f"{v:.2e}"


def format_value(value: float | None, unit: str) -> str:
    """A metric value in a readable unit (seconds scaled to ms/µs/ns)."""
    if value is None or not isinstance(value, (int, float)) or not math.isfinite(value):
        return "n/a"
    if unit == "s" or unit.startswith("s/"):
        suffix = unit[1:]
        for scale, name in ((1.0, "s"), (1e-3, "ms"), (1e-6, "µs"), (1e-9, "ns")):
            if abs(value) >= scale or scale == 1e-9:
                return f"{format_number(value / scale)} {name}{suffix}"
    return f"{format_number(value)} {unit}".strip()


def short_case_id(case_id: str) -> str:
    """copy/measure=bandwidth/direction=h2d/host_memory=pinned/host_node=local/bytes=268435456
    -> copy bandwidth h2d pinned local 256 MiB"""
    parts = case_id.split("/")
    out = [parts[0]]
    for part in parts[1:]:
        key, sep, value = part.partition("=")
        if not sep:
            out.append(part)
        elif key == "bytes" and value.isdigit():
            out.append(format_bytes(int(value)))
        elif key in ("cpu_node", "mem_node"):
            out.append(f"{key.split('_')[0]}{value}")
        else:
            out.append(value)
    return " ".join(out)


# Fallback for results written before the context carried gpus[].pcie.raw_gbps_per_direction:
# the same table as src/inventory/link_rates.hpp (GT/s, data bits per transferred bit), which is
# the one source of truth; tests/unit/test_plot_link_rates.py holds the two to the same values.
PCIE_GENERATIONS = {
    1: (2.5, 8 / 10), 2: (5.0, 8 / 10),
    3: (8.0, 128 / 130), 4: (16.0, 128 / 130), 5: (32.0, 128 / 130),
    6: (64.0, 242 / 256), 7: (128.0, 242 / 256),  # FLIT mode: 242 of 256 flit bytes are data
}


def pcie_raw_gb_per_s(gen: Any, width: Any) -> float | None:
    """Raw PCIe bandwidth per direction (after line encoding), GB/s: GT/s x lanes x encoding / 8."""
    if not (_is_number(gen) and _is_number(width)) or gen not in PCIE_GENERATIONS or not 0 < width <= 32:
        return None
    gt_per_s, encoding = PCIE_GENERATIONS[int(gen)]
    return gt_per_s * float(width) * encoding / 8.0


def gpu_pcie_raw_gb_per_s(gpu: dict[str, Any]) -> float | None:
    """The raw rate of the GPU's current link: the context's own figure (pathbench computes it from
    its link table), else the table above for results that lack it."""
    pcie = gpu.get("pcie")
    rates = pcie.get("raw_gbps_per_direction") if isinstance(pcie, dict) else None
    if isinstance(rates, dict) and "current" in rates:
        current = rates["current"]
        return float(current) if _finite(current) and current > 0 else None
    return pcie_raw_gb_per_s(gpu.get("pcie_gen_current"), gpu.get("pcie_width_current"))


def mpl_text(s: Any) -> str:
    """Text from the inputs, safe for matplotlib (a '$' would start mathtext)."""
    return rf.printable(str(s)).replace("$", r"\$")


DIRECTION_ORDER = {"h2d": 0, "d2h": 1, "d2d": 2, "bidir": 3}


def _finite(v: Any) -> TypeGuard[int | float]:
    return _is_number(v) and math.isfinite(v)


# --------------------------------------------------------------------------------------------
# Data extraction


@dataclass
class Point:
    x: float
    median: float
    p10: float | None
    p90: float | None
    extra: dict[str, float] = field(default_factory=dict)


def _stats(case: dict[str, Any], metric: str) -> dict[str, Any] | None:
    m = (case.get("metrics") or {}).get(metric)
    if not isinstance(m, dict) or not isinstance(m.get("stats"), dict):
        return None
    s = m["stats"]
    return s if _finite(s.get("median")) else None


def _point(case: dict[str, Any], metric: str, x: float, scale: float = 1.0) -> Point | None:
    s = _stats(case, metric)
    if s is None:
        return None
    lo = s.get("p10")
    hi = s.get("p90")
    return Point(x, s["median"] * scale, lo * scale if _finite(lo) else None, hi * scale if _finite(hi) else None)


def _params(case: dict[str, Any]) -> dict[str, Any]:
    p = case.get("params")
    return p if isinstance(p, dict) else {}


def _bytes(case: dict[str, Any]) -> int | None:
    b = _params(case).get("bytes")
    return int(b) if _is_number(b) and 0 < b <= MAX_PLOT_BYTES else None


def _not_drawable(case: dict[str, Any]) -> str:
    """Why the case's numbers cannot go on an axis (see PLOT_LIMIT), or "" when they can."""
    for m in (case.get("metrics") or {}).values():
        stats = m.get("stats") if isinstance(m, dict) else None
        if not isinstance(stats, dict):
            continue
        for key in ("median", "p10", "p90"):
            v = stats.get(key)
            if _is_number(v) and not abs(v) <= PLOT_LIMIT:
                return f"values beyond ±{PLOT_LIMIT:g} cannot be drawn"
    b = _params(case).get("bytes")
    if _is_number(b) and not 0 <= b <= MAX_PLOT_BYTES:
        return f"a transfer size outside 0 .. {format_bytes(MAX_PLOT_BYTES)} cannot be drawn"
    return ""


def _select(results: Sequence[LoadedResult], pred: Callable[[dict[str, Any]], bool]) \
        -> tuple[list[tuple[LoadedResult, dict[str, Any]]], list[dict[str, Any]]]:
    """(ok cases matching, skipped/failed cases matching)."""
    ok: list[tuple[LoadedResult, dict[str, Any]]] = []
    other: list[dict[str, Any]] = []
    for r in results:
        for case in r.cases:
            try:
                match = pred(case)
            except (KeyError, TypeError, ValueError):
                match = False
            if not match:
                continue
            if case.get("status") != "ok":
                other.append(case)
            elif why := _not_drawable(case):
                other.append(dict(case, status="ok but not drawn", reason=why))
            else:
                ok.append((r, case))
    return ok, other


def _not_ok_summary(cases: Iterable[dict[str, Any]], max_lines: int = 3) -> list[str]:
    """'skipped (50): reason' lines, grouped by status and reason, failed first."""
    groups: Counter[tuple[str, str]] = Counter()
    for c in cases:
        reason = str(c.get("reason") or "").strip()
        reason = reason.splitlines()[0] if reason else "no reason given"
        groups[(str(c.get("status")), reason)] += 1
    ordered = sorted(groups.items(), key=lambda kv: (kv[0][0] != "failed", -kv[1]))
    lines = []
    for (status, reason), count in ordered[:max_lines]:
        if len(reason) > 110:
            reason = reason[:107] + "…"
        lines.append(f"not plotted: {status} ({count}): {reason}")
    if len(ordered) > max_lines:
        lines.append(f"… and {sum(n for _, n in ordered[max_lines:])} more cases not plotted")
    return lines


def _why_not(cases: Sequence[dict[str, Any]]) -> str:
    """' (9 skipped: reason; 1 failed: reason)' for a note on stderr; empty when there are none."""
    groups: Counter[tuple[str, str]] = Counter()
    for c in cases:
        reason = str(c.get("reason") or "").strip()
        groups[(str(c.get("status")), reason.splitlines()[0] if reason else "no reason given")] += 1
    if not groups:
        return ""
    return " (" + "; ".join(f"{n} {status}: {reason}" for (status, reason), n in groups.most_common(3)) \
        + ("; …" if len(groups) > 3 else "") + ")"


def _color_for(key: str, table: dict[str, str], used: dict[str, str]) -> str:
    if key in table:
        return table[key]
    if key not in used:
        used[key] = EXTRA_COLORS[len(used) % len(EXTRA_COLORS)]
    return used[key]


def _kind_sort_key(kind: str) -> tuple[int, str]:
    return (KIND_ORDER.index(kind) if kind in KIND_ORDER else len(KIND_ORDER), kind)


def _page_sort_key(page: str) -> tuple[int, str]:
    return (PAGE_ORDER.index(page) if page in PAGE_ORDER else len(PAGE_ORDER), page)


# --------------------------------------------------------------------------------------------
# Figure helpers


def _title_suffix(results: Sequence[LoadedResult]) -> str:
    types = list(OrderedDict.fromkeys(mpl_text(r.node_type) for r in results))
    if len(types) == 1:
        text = types[0]
    elif len(types) == 2:
        text = f"{types[0]}  vs  {types[1]}"
    else:
        text = f"{len(types)} node types"
    incomplete = [r for r in results if not r.complete]
    if incomplete:
        # A partial run must never look like a whole one: say so where every reader looks.
        text += ("  —  INCOMPLETE run" if len(results) == 1 else
                 "  —  INCOMPLETE: " + ", ".join(f"[{r.index + 1}]" for r in incomplete))
    return text


INCOMPLETE_PREFIX = "INCOMPLETE run"


def _incomplete_notes(results: Sequence[LoadedResult]) -> list[str]:
    """Footnote lines for results of runs that did not finish (drawn in red by _finish)."""
    notes = []
    for r in results:
        if not r.complete:
            which = f" [{r.index + 1}]" if len(results) > 1 else ""
            notes.append(f"{INCOMPLETE_PREFIX}{which}: {r.incomplete_reason}; only the cases that finished "
                         f"({len(r.cases)}) are shown, the cases it had not reached are missing")
    return notes


def _new_figure(width: float, height: float) -> Figure:
    _load_matplotlib()
    fig = Figure(figsize=(width, height), dpi=DPI)
    fig.set_layout_engine("constrained")
    return fig


def _finish(fig: Figure, entries: Sequence[tuple[Any, str]], footnote: Sequence[str]) -> None:
    """One legend under the plot: `entries` (handle or None, label), then the footnote lines in grey."""
    if not entries and not footnote:
        return
    blank = Line2D([], [], linestyle="none")
    handles = [h if h is not None else blank for h, _ in entries] + [blank] * len(footnote)
    labels = [mpl_text(label) for _, label in entries] + [mpl_text(line) for line in footnote]
    with_handles = any(h is not None for h, _ in entries)
    w, h = fig.get_size_inches()
    fig.set_size_inches(w, h + 0.2 * len(handles) + 0.15)
    legend = fig.legend(handles, labels, loc="outside lower center", frameon=False, fontsize=8.5,
                        handlelength=2.8 if with_handles else 0, handletextpad=0.6 if with_handles else 0,
                        labelspacing=0.3)
    for text in legend.get_texts()[len(entries):]:
        text.set_color("#c00000" if text.get_text().startswith(INCOMPLETE_PREFIX) else "#555555")
        text.set_fontsize(8)


def _size_axis(ax: Axes, sizes: Sequence[float]) -> None:
    """log2 x axis with binary-unit tick labels at powers of two."""
    lo = math.floor(math.log2(min(sizes)))
    hi = math.ceil(math.log2(max(sizes)))
    if hi - lo < 2:
        lo -= 1
        hi += 1
    # Every power of two while that is few ticks, else every 4x (a 4^k sweep's own sizes), 32x, 1024x.
    step = next(s for s, most in ((1, 9), (2, 16), (5, 16), (10, 99)) if (hi - lo) // s + 1 <= most)
    first = math.ceil(lo / step) * step
    exps = list(range(first, hi + 1, step))
    ax.set_xscale("log", base=2)
    ax.xaxis.set_major_locator(FixedLocator([2.0 ** e for e in exps]))
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _pos: format_bytes(v)))
    ax.xaxis.set_minor_locator(FixedLocator([2.0 ** e for e in range(lo, hi + 1)]))
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_xlim(2.0 ** (math.log2(min(sizes)) - 0.4), 2.0 ** (math.log2(max(sizes)) + 0.4))
    if len(exps) > 8:
        for label in ax.get_xticklabels():
            label.set_rotation(30)
            label.set_horizontalalignment("right")


def _log_value_axis(ax: Axes) -> None:
    """log y axis labelled 1, 2, 5, 10, 20, ... (plain numbers, not powers of ten)."""
    ax.set_yscale("log")
    lo, hi = ax.get_ylim()
    subs = (1.0, 2.0, 5.0) if hi / max(lo, 1e-300) < 1e4 else (1.0,)
    ax.yaxis.set_major_locator(LogLocator(base=10, subs=subs))
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _pos: f"{v:g}"))
    ax.yaxis.set_minor_formatter(NullFormatter())


def _errorbar(ax: Axes, pts: list[Point], **kw: Any) -> Any:
    pts = sorted(pts, key=lambda p: p.x)
    xs = [p.x for p in pts]
    ys = [p.median for p in pts]
    lo = [max(0.0, p.median - p.p10) if p.p10 is not None else 0.0 for p in pts]
    hi = [max(0.0, p.p90 - p.median) if p.p90 is not None else 0.0 for p in pts]
    kw.setdefault("markersize", 5)
    kw.setdefault("linewidth", 1.6)
    return ax.errorbar(xs, ys, yerr=[lo, hi], capsize=3, elinewidth=1, **kw)


@dataclass
class Bar:
    category: str
    series: str
    median: float
    p10: float | None = None
    p90: float | None = None
    text: str = ""


def _grouped_bars(ax: Axes, bars: list[Bar], categories: list[str], series: list[str],
                  colors: dict[str, str], horizontal_labels: bool = True) -> list[tuple[Any, str]]:
    """Bars grouped by category; within a category only the series present are drawn, centred.
    Returns the legend entries (handle, series) in series order."""
    width = 0.8 / max(1, max(sum(1 for b in bars if b.category == c) for c in categories))
    by_cat: dict[str, list[Bar]] = {c: [] for c in categories}
    for b in bars:
        by_cat[b.category].append(b)
    top = max((b.p90 if b.p90 is not None else b.median) for b in bars)
    handles: dict[str, Any] = {}
    for ci, cat in enumerate(categories):
        group = sorted(by_cat[cat], key=lambda b: series.index(b.series))
        n = len(group)
        for k, b in enumerate(group):
            x = ci + (k - (n - 1) / 2) * width
            lo = max(0.0, b.median - b.p10) if b.p10 is not None else 0.0
            hi = max(0.0, b.p90 - b.median) if b.p90 is not None else 0.0
            bar = ax.bar(x, b.median, width=width * 0.92, color=colors[b.series], edgecolor="white",
                         yerr=[[lo], [hi]], capsize=3, error_kw={"elinewidth": 1, "ecolor": "#333333"})
            handles.setdefault(b.series, bar.patches[0])
            text = b.text or format_number(b.median)
            ax.text(x, b.median + hi + top * 0.015, text, ha="center", va="bottom", fontsize=8,
                    rotation=0 if (horizontal_labels and width >= 0.2) else 90)
    ax.set_xticks(range(len(categories)))
    ax.set_xticklabels([mpl_text(c) for c in categories])
    ax.set_xlim(-0.6, len(categories) - 0.4)
    ax.set_ylim(0, top * (1.22 if horizontal_labels and width >= 0.2 else 1.45))
    ax.grid(axis="y", alpha=0.3)
    ax.set_axisbelow(True)
    return [(handles[s], s) for s in series if s in handles]


# --------------------------------------------------------------------------------------------
# The plots


@dataclass
class PlotOutput:
    name: str
    title: str
    figure: Figure | None = None
    note: str = ""


def _result_entries(results: Sequence[LoadedResult], styled: bool, own_markers: bool = True) -> list[tuple[Any, str]]:
    """Legend entries naming the result files (only when there are several). own_markers: the
    plot marks results by marker too (else the marker is the series' and the entry shows a circle
    with the result's fill)."""
    if len(results) < 2:
        return []
    names = result_names(results)
    return [(Line2D([0], [0], color="#333333", linestyle=result_style(r.index),
                    marker=result_marker(r.index) if own_markers else "o",
                    fillstyle=result_fill(r.index), markersize=6)
             if styled else None, f"[{r.index + 1}] {names[r.index]}") for r in results]


def _solid_proxy(handle: Any) -> Any:
    """A legend proxy: an errorbar series' colour and marker on a plain solid line."""
    if not hasattr(handle, "lines"):
        return handle
    line = handle.lines[0]
    return Line2D([0], [0], color=line.get_color(), marker=line.get_marker(), linestyle="-",
                  markerfacecolor=line.get_markerfacecolor(), markersize=line.get_markersize(),
                  linewidth=line.get_linewidth())


def plot_bandwidth(results: Sequence[LoadedResult], direction: str) -> PlotOutput:
    name = f"bandwidth_{direction}.png"
    title = f"{direction.upper()} copy bandwidth vs transfer size"

    def pred(c: dict[str, Any]) -> bool:
        p = _params(c)
        # gpus=all cases (copies to every GPU at once) are a sum over GPUs, not a point of the sweep.
        return (c.get("family") == "copy" and p.get("measure") == "bandwidth" and p.get("direction") == direction
                and p.get("gpus", "one") != "all")

    ok, other = _select(results, pred)
    series: dict[tuple[int, str, str], list[Point]] = OrderedDict()
    for r, case in ok:
        b = _bytes(case)
        pt = _point(case, "bandwidth", b) if b else None
        if pt is None:
            continue
        p = _params(case)
        kind = str(p.get("host_memory") or "device")
        series.setdefault((r.index, kind, str(p.get("host_node") or "")), []).append(pt)
    if not series:
        why = _why_not(other)
        return PlotOutput(name, title, None, f"no ok copy bandwidth cases with direction={direction}{why}")

    has_remote = any(node == "remote" for (_, _, node) in series)
    multi = len(results) > 1
    fig = _new_figure(10, 6.2)
    ax = fig.add_subplot()
    used: dict[str, str] = {}
    all_x: list[float] = []
    for (ri, kind, node), pts in sorted(series.items(), key=lambda kv: (_kind_sort_key(kv[0][1]), kv[0][2], kv[0][0])):
        color = _color_for(kind, KIND_COLORS, used)
        label = kind if direction != "d2d" else "device memory"
        if has_remote:
            label += f" · {node or 'n/a'} node"
        remote = node == "remote"
        kw: dict[str, Any] = {
            "color": color,
            "marker": KIND_MARKERS.get(kind, "o"),
            "linestyle": result_style(ri) if multi else ("--" if remote else "-"),
            "markerfacecolor": "white" if remote else color,
            "fillstyle": result_fill(ri) if multi else "full",
            "markersize": 7.5 if kind == "pinned" else 5.5,
            "linewidth": 3.0 if kind == "pinned" else 1.6,
            "zorder": 3 if kind == "pinned" else 4,
        }
        _errorbar(ax, pts, label=mpl_text(label) if (not multi or ri == min(k[0] for k in series if k[1:] == (kind, node)))
                  else None, **kw)
        all_x.extend(p.x for p in pts)
        if len(pts) <= 2 and len(series) <= 4:  # sparse: say the value
            for pt in pts:
                ax.annotate(f"{format_number(pt.median)} GB/s", (pt.x, pt.median), textcoords="offset points",
                            xytext=(8, 6), fontsize=8.5, color=color)
    _size_axis(ax, all_x)
    ymax = max(max((p.p90 if p.p90 is not None else p.median) for p in pts) for pts in series.values())
    top = ymax
    ax.set_xlabel("transfer size (bytes, log2 scale)")
    ax.set_ylabel("bandwidth (GB/s, GB = 10⁹ B), median; bars p10–p90")
    ax.grid(True, which="major", alpha=0.3)
    ax.grid(True, which="minor", axis="x", alpha=0.1)
    ax.set_title(f"{title}\n{_title_suffix(results)}", fontsize=12)

    if direction in ("h2d", "d2h"):
        links: OrderedDict[tuple[int, int], float] = OrderedDict()
        for r in results:
            gpus = r.context.get("gpus")
            # The C++ reader does not type the context beyond its times: take what is usable.
            for gpu in gpus if isinstance(gpus, list) else []:
                if not isinstance(gpu, dict):
                    continue
                raw = gpu_pcie_raw_gb_per_s(gpu)
                gen, width = gpu.get("pcie_gen_current"), gpu.get("pcie_width_current")
                if raw and _is_number(gen) and _is_number(width):
                    links[(int(gen), int(width))] = raw
        for (gen, width), raw in links.items():
            if raw < ymax * 4:
                ax.axhline(raw, color="#888888", linestyle=(0, (4, 3)), linewidth=1,
                           label=f"PCIe Gen{gen} x{width} raw ≈ {raw:.1f} GB/s")
                top = max(top, raw)
    ax.set_ylim(0, top * 1.12)
    handles, labels = ax.get_legend_handles_labels()
    if multi:  # line styles tell the results apart (legend below): show each kind with a neutral solid line
        handles = [_solid_proxy(h) for h in handles]
    order = sorted(range(len(labels)), key=lambda k: labels[k].startswith("PCIe"))
    where: dict[str, Any] = {"loc": "best"} if len(labels) <= 7 else {"loc": "upper left", "bbox_to_anchor": (1.01, 1.0)}
    ax.legend([handles[k] for k in order], [labels[k] for k in order], fontsize=9, framealpha=0.9,
              title="host memory" if direction != "d2d" else None, title_fontsize=9, **where)
    _finish(fig, _result_entries(results, styled=True, own_markers=False),
            _not_ok_summary(other) + _incomplete_notes(results))
    return PlotOutput(name, title, fig)


def plot_latency(results: Sequence[LoadedResult]) -> PlotOutput:
    name = "latency.png"
    title = "Copy latency: time per copy and round trip"

    def pred(c: dict[str, Any]) -> bool:
        return c.get("family") == "copy" and _params(c).get("measure") == "latency"

    ok, other = _select(results, pred)
    metrics = (("time_per_copy", "time per copy inside a latched block"),
               ("round_trip_time", "round trip: issue to completion seen by the host"))
    data: dict[str, dict[tuple[int, str, str, str], list[Point]]] = {m: OrderedDict() for m, _ in metrics}
    for r, case in ok:
        b = _bytes(case)
        if not b:
            continue
        p = _params(case)
        key = (r.index, str(p.get("direction") or "?"), str(p.get("host_memory") or "device"), str(p.get("host_node") or ""))
        for m, _ in metrics:
            pt = _point(case, m, b, scale=1e6)
            if pt is not None:
                data[m].setdefault(key, []).append(pt)
    if not any(data.values()):
        why = _why_not(other)
        return PlotOutput(name, title, None, f"no ok copy latency cases{why}")

    multi = len(results) > 1
    keys = list(OrderedDict.fromkeys(k for m, _ in metrics for k in data[m]))
    has_remote = any(k[3] == "remote" for k in keys)
    sizes = sorted({pt.x for m, _ in metrics for pts in data[m].values() for pt in pts})
    used: dict[str, str] = {}

    def series_label(k: tuple[int, str, str, str], with_result: bool) -> str:
        s = f"{k[1].upper()} · {k[2]}"
        if has_remote:
            s += f" · {k[3] or 'n/a'}"
        if with_result and multi:
            s += f" · [{k[0] + 1}]"
        return s

    footnote = _not_ok_summary(other) + _incomplete_notes(results)
    if len(sizes) == 1:
        # One transfer size: a line plot would be a column of dots; draw grouped bars instead.
        keys.sort(key=lambda k: (DIRECTION_ORDER.get(k[1], 9), k[1], _kind_sort_key(k[2]), k[3], k[0]))
        cats = [series_label(k, True) for k in keys]
        fig = _new_figure(10, 2.2 + 0.55 * len(keys))
        ax = fig.add_subplot()
        h = 0.38
        mcolors = {"time_per_copy": "#4c78a8", "round_trip_time": "#f58518"}
        for j, (m, desc) in enumerate(metrics):
            for i, k in enumerate(keys):
                pts = data[m].get(k)
                if not pts:
                    continue
                pt = pts[0]
                y = i + (j - 0.5) * h
                lo = max(0.0, pt.median - pt.p10) if pt.p10 is not None else 0.0
                hi = max(0.0, pt.p90 - pt.median) if pt.p90 is not None else 0.0
                ax.barh(y, pt.median, height=h * 0.9, color=mcolors[m], xerr=[[lo], [hi]], capsize=3,
                        error_kw={"elinewidth": 1, "ecolor": "#333333"}, label=desc if i == 0 or not any(
                            data[m].get(kk) for kk in keys[:i]) else None)
                ax.text(pt.median + hi, y, f"  {format_number(pt.median)} µs", va="center", fontsize=8.5)
        ax.set_yticks(range(len(keys)))
        ax.set_yticklabels([mpl_text(c) for c in cats])
        ax.invert_yaxis()
        xmax = max(max((pt.p90 or pt.median) for pts in data[m].values() for pt in pts) for m, _ in metrics if data[m])
        ax.set_xlim(0, xmax * 1.18)
        ax.set_xlabel(f"time (µs), median; bars p10–p90 — transfer size {format_bytes(sizes[0])}")
        ax.set_ylabel("direction · host memory")
        ax.grid(axis="x", alpha=0.3)
        ax.set_axisbelow(True)
        ax.set_title(f"{title} ({format_bytes(sizes[0])} copies)\n{_title_suffix(results)}", fontsize=12)
        handles, hlabels = ax.get_legend_handles_labels()
        _finish(fig, list(zip(handles, hlabels)) + _result_entries(results, styled=False), footnote)
        return PlotOutput(name, title, fig)

    fig = _new_figure(13, 6.2)
    axes = fig.subplots(1, 2, sharey=True)
    for ax, (m, desc) in zip(axes, metrics):
        for k in sorted(data[m], key=lambda k: (DIRECTION_ORDER.get(k[1], 9), k[1], _kind_sort_key(k[2]), k[3], k[0])):
            color = _color_for(k[2], KIND_COLORS, used)
            remote = k[3] == "remote"
            _errorbar(ax, data[m][k], color=color,
                      marker=result_marker(k[0]) if multi else ("o" if k[1] == "h2d" else "s"),
                      fillstyle=result_fill(k[0]) if multi else "full",
                      linestyle=(result_style(k[0]) if multi else
                                 ("-" if k[1] == "h2d" else "--")),
                      markerfacecolor="white" if remote else color,
                      label=mpl_text(series_label(k, False)) if (not multi or k[0] == min(
                          kk[0] for kk in data[m] if kk[1:] == k[1:])) else None)
        _size_axis(ax, sizes)
        _log_value_axis(ax)
        ax.set_xlabel("transfer size (bytes, log2 scale)")
        ax.set_title(desc, fontsize=10)
        ax.grid(True, which="major", alpha=0.3)
    axes[0].set_ylabel("time (µs, log scale), median; bars p10–p90")
    handles, labels = axes[0].get_legend_handles_labels()
    for h, label in zip(*axes[1].get_legend_handles_labels()):
        if label not in labels:
            handles.append(h)
            labels.append(label)
    axes[1].legend(handles, labels, loc="upper left", bbox_to_anchor=(1.02, 1.0), fontsize=8.5, framealpha=0.9,
                   title="direction · host memory", title_fontsize=9)
    fig.suptitle(f"{title} vs transfer size\n{_title_suffix(results)}", fontsize=12)
    _finish(fig, _result_entries(results, styled=True), footnote)
    return PlotOutput(name, title, fig)


def plot_pin_cost(results: Sequence[LoadedResult]) -> PlotOutput:
    name = "pin_cost.png"
    title = "Cost of pinning host memory (cudaMallocHost / cudaHostRegister)"

    def pred(c: dict[str, Any]) -> bool:
        return c.get("family") == "copy" and _params(c).get("measure") == "alloc_cost"

    ok, other = _select(results, pred)
    bars: list[Bar] = []
    multi = len(results) > 1
    has_remote = any(_params(c).get("host_node") == "remote" for _, c in ok)
    for r, case in ok:
        b = _bytes(case)
        pt = _point(case, "seconds_per_gib", b or 0, scale=1e3)
        if pt is None:
            continue
        p = _params(case)
        cat = str(p.get("host_memory") or "?")
        api = "cudaMallocHost" if cat == "pinned" else "cudaHostRegister" if cat.startswith("registered") else ""
        if api:
            cat += f"\n({api})"
        if has_remote:
            cat += f"\n{p.get('host_node') or 'n/a'} node"
        if multi:
            cat += f"\n[{r.index + 1}]"
        bars.append(Bar(cat, format_bytes(b) if b else "size n/a", pt.median, pt.p10, pt.p90))
    if not bars:
        why = _why_not(other)
        return PlotOutput(name, title, None, f"no ok alloc_cost cases{why}")

    def cat_key(c: str) -> tuple[Any, ...]:
        parts = c.split("\n")
        return (_kind_sort_key(parts[0]),) + tuple(parts[1:])

    categories = sorted(OrderedDict.fromkeys(b.category for b in bars), key=cat_key)
    sizes = sorted(OrderedDict.fromkeys(b.series for b in bars), key=_parse_size_label)
    blues = matplotlib.colormaps["Blues"]
    colors = {s: mcolors.to_hex(blues(0.65 if len(sizes) == 1 else 0.4 + 0.5 * i / (len(sizes) - 1)))
              for i, s in enumerate(sizes)}
    fig = _new_figure(max(8.0, 1.6 + 1.5 * len(categories)), 6.0)
    ax = fig.add_subplot()
    entries = _grouped_bars(ax, bars, categories, sizes, colors)
    ax.set_ylabel("cost (ms per GiB), median; bars p10–p90")
    ax.set_xlabel("host memory kind")
    ax.set_title(f"{title}\n{_title_suffix(results)}", fontsize=12)
    ax.legend(*zip(*[(h, mpl_text(s)) for h, s in entries]), title="buffer size", fontsize=9, title_fontsize=9, loc="upper right", framealpha=0.9)
    _finish(fig, _result_entries(results, styled=False), _not_ok_summary(other) + _incomplete_notes(results))
    return PlotOutput(name, title, fig)


def _parse_size_label(s: str) -> float:
    m = re.match(r"([\d.]+) (B|KiB|MiB|GiB|TiB)$", s)
    if not m:
        return float("inf")
    return float(m.group(1)) * {"B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30, "TiB": 1 << 40}[m.group(2)]


def plot_host_memory(results: Sequence[LoadedResult]) -> PlotOutput:
    name = "host_memory.png"
    title = "Host memory: memcpy bandwidth and page cost"

    def pred(c: dict[str, Any]) -> bool:
        return c.get("family") == "host_memory"

    ok, other = _select(results, pred)
    multi = len(results) > 1
    memcpy: list[Bar] = []
    cost: list[Bar] = []
    memcpy_sizes = {(_bytes(c) or 0) for _, c in ok if _params(c).get("measure") == "memcpy"}
    cost_sizes = {(_params(c).get("measure"), _bytes(c) or 0) for _, c in ok if _params(c).get("measure") != "memcpy"}
    cost_size_per_measure = Counter(m for m, _ in cost_sizes)
    for r, case in ok:
        p = _params(case)
        measure = p.get("measure")
        page = str(p.get("page") or "")
        tag = f" [{r.index + 1}]" if multi else ""
        if measure == "memcpy":
            pt = _point(case, "bandwidth", 0)
            if pt is None:
                continue
            cat = f"CPU node {p.get('cpu_node', '?')}\n→ mem node {p.get('mem_node', '?')}"
            if len(memcpy_sizes) > 1:
                cat += f"\n{format_bytes(_bytes(case) or 0)}"
            memcpy.append(Bar(cat, (page or "?") + tag, pt.median, pt.p10, pt.p90))
        elif measure in ("first_touch", "mlock"):
            pt = _point(case, "seconds_per_gib", 0, scale=1e3)
            if pt is None:
                continue
            cat = "first touch" if measure == "first_touch" else "mlock"
            if cost_size_per_measure[measure] > 1:
                cat += f"\n{format_bytes(_bytes(case) or 0)}"
            text = format_number(pt.median)
            per_page = next((k for k in (case.get("metrics") or {}) if k.startswith("time_per_page")), None)
            s = _stats(case, per_page) if per_page else None
            if s is not None:
                text += f"\n{format_value(s['median'], 's')}/page"
            cost.append(Bar(cat, (page or ("4k" if measure == "mlock" else "?")) + tag, pt.median, pt.p10, pt.p90,
                            text))
    if not memcpy and not cost:
        why = _why_not(other)
        return PlotOutput(name, title, None, f"no ok host_memory cases{why}")

    def series_order(bars: list[Bar]) -> list[str]:
        def key(s: str) -> tuple[Any, ...]:
            page, _, tag = s.partition(" [")
            return (tag, _page_sort_key(page))
        return sorted(OrderedDict.fromkeys(b.series for b in bars), key=key)

    def colors_for(series: list[str]) -> dict[str, str]:
        out = {}
        used: dict[str, str] = {}
        for s in series:
            page, _, tag = s.partition(" [")
            base = _color_for(page, PAGE_COLORS, used)
            out[s] = base
        if multi:  # distinguish results by lightness
            for s in series:
                idx = int(s.rsplit("[", 1)[1].rstrip("]")) - 1 if "[" in s else 0
                rgb = mcolors.to_rgb(out[s])
                f = 0.45 * (idx % 3) / 2
                out[s] = mcolors.to_hex((rgb[0] + (1 - rgb[0]) * f, rgb[1] + (1 - rgb[1]) * f, rgb[2] + (1 - rgb[2]) * f))
        return out

    panels = [(bars, kind) for bars, kind in ((memcpy, "memcpy"), (cost, "cost")) if bars]
    ncat = [len(OrderedDict.fromkeys(b.category for b in bars)) for bars, _ in panels]
    fig = _new_figure(max(9.0, 2.5 + 1.6 * sum(ncat)), 6.0)
    axes = fig.subplots(1, len(panels), width_ratios=[max(2, n) for n in ncat], squeeze=False)[0]
    for ax, (bars, kind) in zip(axes, panels):
        cats = list(OrderedDict.fromkeys(b.category for b in bars))
        series = series_order(bars)
        entries = _grouped_bars(ax, bars, cats, series, colors_for(series))
        if kind == "memcpy":
            ax.set_ylabel("memcpy bandwidth (GB/s), median; bars p10–p90")
            ax.set_xlabel("measuring thread's CPU node → buffer memory node")
            ax.set_title("memcpy bandwidth", fontsize=10)
        else:
            ax.set_ylabel("cost (ms per GiB), median; bars p10–p90")
            ax.set_xlabel("operation")
            ax.set_title("first-touch fault cost and mlock cost", fontsize=10)
        ax.legend(*zip(*[(h, mpl_text(s)) for h, s in entries]), title="page size", fontsize=9, title_fontsize=9, loc="upper right", framealpha=0.9)
    fig.suptitle(f"{title}\n{_title_suffix(results)}", fontsize=12)
    _finish(fig, _result_entries(results, styled=False), _not_ok_summary(other) + _incomplete_notes(results))
    return PlotOutput(name, title, fig)


def _plottable(v: Any) -> TypeGuard[int | float]:
    return _finite(v) and abs(v) <= PLOT_LIMIT


def headline_metric(case: dict[str, Any]) -> dict[str, Any] | None:
    """The metric a compare row is shown by: the first one whose verdict decided the case, else the first."""
    metrics = [m for m in (case.get("metrics") or []) if isinstance(m, dict)]
    if not metrics:
        return None
    verdict = case.get("verdict")
    for m in metrics:
        if m.get("verdict") == verdict and _finite(m.get("change_pct")):
            return m
    for m in metrics:
        if _finite(m.get("change_pct")):
            return m
    return metrics[0]


def badness(case: dict[str, Any]) -> float:
    """How far the headline moved in the bad direction, in percent (larger is worse)."""
    m = headline_metric(case)
    if m is None or not _finite(m.get("change_pct")):
        return 0.0
    change = float(m["change_pct"])
    return -change if m.get("better", "higher") == "higher" else change


def compare_sort_key(case: dict[str, Any]) -> tuple[int, float, str]:
    return (VERDICT_RANK.get(str(case.get("verdict")), 5), -badness(case), str(case.get("id")))


def plot_compare(compare: LoadedCompare, results: Sequence[LoadedResult] = ()) -> PlotOutput:
    name = "compare.png"
    data = compare.data
    mode = str(data.get("mode") or "gate")
    title = "Change of the headline metric: result vs baseline" + (" (across node types)" if mode == "across" else "")
    rows: list[tuple[dict[str, Any], dict[str, Any]]] = []
    not_plotted: Counter[str] = Counter()
    for case in data.get("cases") or []:
        m = headline_metric(case)
        if m is None or not _plottable(m.get("change_pct")):
            not_plotted[str(case.get("verdict"))] += 1
            continue
        rows.append((case, m))
    if not rows:
        return PlotOutput(name, title, None, "the comparison holds no case with a change to plot"
                          + (f" ({', '.join(f'{n} {v}' for v, n in not_plotted.items())})" if not_plotted else ""))
    rows.sort(key=lambda cm: compare_sort_key(cm[0]))
    hidden = rows[MAX_COMPARE_ROWS:]
    rows = rows[:MAX_COMPARE_ROWS]
    footnote: list[str] = []
    if hidden:
        footnote.append(f"… and {len(hidden)} more rows not shown ("
                        + ", ".join(f"{n} {v}" for v, n in Counter(str(c.get('verdict')) for c, _ in hidden).items())
                        + ")")
    if not_plotted:
        footnote.append("no change to plot: " + ", ".join(f"{n} {v}" for v, n in sorted(not_plotted.items())))
    base = data.get("baseline") or {}
    res = data.get("result") or {}
    incomparable = data.get("incomparable")
    if isinstance(incomparable, list) and incomparable:
        footnote.append("incomparable: " + "; ".join(str(d) for d in incomparable))
    footnote.append(f"baseline: {base.get('node_type', '?')} · {base.get('hostname', '?')} · "
                    f"{base.get('start_time', '?')}   result: {res.get('node_type', '?')} · "
                    f"{res.get('hostname', '?')} · {res.get('start_time', '?')}")
    alpha = data.get("alpha")
    any_p = any(_finite(m.get("p_value")) for _, m in rows)
    explain = []
    if any_p:
        explain.append("p: two-sample test p-value" + (f" (significant below alpha = {alpha:g})" if _finite(alpha) else ""))

    fig = _new_figure(12, 2.0 + 0.32 * len(rows))
    ax = fig.add_subplot()
    changes = [float(m["change_pct"]) for _, m in rows]
    thresholds = [float(m["threshold_pct"]) if _plottable(m.get("threshold_pct")) else None for _, m in rows]
    default_t = data.get("default_threshold")
    # Readable for small changes: beyond ±COMPARE_LINEAR_SPAN the axis is symmetric-log (linear
    # within ±linthresh, where the noise bands are), and beyond ±COMPARE_CLIP % the bars are clipped
    # at the edge with their value written out; a -100 % next to a few +3 % no longer squashes them.
    span = max([abs(c) for c in changes] + [t for t in thresholds if t is not None] + [1.0])
    symlog = span > COMPARE_LINEAR_SPAN
    clip = COMPARE_CLIP if span > COMPARE_CLIP else None
    any_clipped = False
    labels = []
    band_labelled = False
    verdicts_seen: list[str] = []
    for i, ((case, m), change, t) in enumerate(zip(rows, changes, thresholds)):
        verdict = str(case.get("verdict"))
        color = VERDICT_COLORS.get(verdict, "#7f7f7f")
        if t is None and _plottable(default_t) and mode != "across":
            t = float(default_t) * 100.0
        if t is not None and t > 0:
            ax.fill_betweenx([i - 0.48, i + 0.48], -t, t, color="#bbbbbb", alpha=0.35, linewidth=0,
                             label="noise band ±threshold" if not band_labelled else None)
            band_labelled = True
        drawn = change if clip is None else max(-clip, min(clip, change))
        clipped = drawn != change
        any_clipped = any_clipped or clipped
        ax.barh(i, drawn, height=0.62, color=color, label=mpl_text(verdict) if verdict not in verdicts_seen else None,
                hatch="///" if clipped else None, edgecolor="white" if clipped else None)
        if verdict not in verdicts_seen:
            verdicts_seen.append(verdict)
        p = m.get("p_value")
        note = f"{change:+.1f} %" + (" (clipped)" if clipped else "")
        if mode == "across" and _finite(m.get("ratio")):
            note += f"  ×{float(m['ratio']):.3g}"
        if _finite(p):
            note += f"  p={p:.2g}"
        elif any_p or mode != "across":
            note += "  p=n/a"
        ax.text(drawn, i, f"  {note}  ", va="center",
                ha="left" if change >= 0 else "right", fontsize=8, fontweight="bold" if clipped else None)
        arrow = "↑" if m.get("better", "higher") == "higher" else "↓"
        labels.append(mpl_text(f"{short_case_id(str(case.get('id')))} · {m.get('metric_label') or m.get('name')} ({arrow} better)"))
    ax.axvline(0, color="#333333", linewidth=0.8)
    ax.set_yticks(range(len(rows)))
    ax.set_yticklabels(labels, fontsize=8.5)
    ax.set_ylim(len(rows) - 0.5, -0.5)
    if symlog:
        lin = min(COMPARE_MAX_LINTHRESH, max(COMPARE_MIN_LINTHRESH, max((t or 0) for t in thresholds)))
        edge = clip if clip is not None else span
        ax.set_xscale("symlog", linthresh=lin, linscale=1.5)
        ax.set_xlim(-edge * 12, edge * 12)
        # Two ticks inside the linear part, then decades far enough apart not to collide.
        steps = [lin / 2, lin] + [10.0 ** k for k in range(1, 5) if 10.0 ** k >= 3 * lin and 10.0 ** k <= edge * 2]
        ticks = [0.0] + [sign * v for v in steps for sign in (-1, 1)]
        ax.xaxis.set_major_locator(FixedLocator(sorted(ticks)))
        ax.xaxis.set_minor_locator(FixedLocator([]))
        for label in ax.get_xticklabels():
            label.set_fontsize(8)
        explain.append(f"x axis linear within ±{lin:g} %, logarithmic beyond")
    else:
        ax.set_xlim(-span * 1.6, span * 1.6)
    if any_clipped:
        explain.append(f"hatched: changes beyond ±{clip:g} % clipped at the axis edge (value written beside)")
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _p: f"{v:+g} %" if v else "0"))
    ax.set_xlabel("change of the median vs baseline (%), (result − baseline) / baseline")
    ax.grid(axis="x", alpha=0.3)
    ax.set_axisbelow(True)
    node = res.get("node_type") or (results[0].node_type if results else "?")
    if mode == "across" and base.get("node_type") and base.get("node_type") != node:
        node = f"{base.get('node_type')}  →  {node}"
    ax.set_title(mpl_text(f"{title}, worst first\n{node}"), fontsize=12)
    handles, hlabels = ax.get_legend_handles_labels()
    order = sorted(range(len(hlabels)), key=lambda k: VERDICT_RANK.get(hlabels[k], 20))
    ax.legend([handles[k] for k in order], [hlabels[k] for k in order], loc="upper left", bbox_to_anchor=(1.01, 1.0),
              fontsize=8.5, title="verdict", title_fontsize=9, framealpha=0.9)
    if band_labelled:
        explain.append("shaded: the noise band ±threshold of each metric")
    footnote += explain  # a line each: joined, they run off the figure
    _finish(fig, [], footnote + _incomplete_notes(results))
    return PlotOutput(name, title, fig)


# --------------------------------------------------------------------------------------------
# Serving: per-request latency distributions (family `serving`; metrics that carry a
# "distribution", read by the rules of stats/operation_distribution.cpp)

SERVING_STRATEGY_ORDER = ["preallocated_pinned", "pinned_pool", "pinned_pool_chunked", "pageable", "pin_per_request"]
# As in the copy plots where the memory is of the same kind: pinned blue, pageable red, registered
# (pinned for one request) green; the pools orange and purple.
STRATEGY_COLORS: dict[str, str] = {
    "preallocated_pinned": "#1f77b4",
    "pinned_pool": "#ff7f0e",
    "pinned_pool_chunked": "#9467bd",
    "pageable": "#d62728",
    "pin_per_request": "#2ca02c",
}
STRATEGY_MARKERS: dict[str, str] = {
    "preallocated_pinned": "o", "pinned_pool": "s", "pinned_pool_chunked": "D", "pageable": "v", "pin_per_request": "^",
}
ARRIVAL_ORDER = {"back_to_back": 0, "poisson": 1, "bursts": 2}
# Parameters that make a variant of a strategy (one line each) rather than a condition (one panel
# each); `requests` says how many were measured, not what: it groups nothing.
STRATEGY_VARIANT_PARAMS = ("strategy", "chunk_bytes", "pool_slots")
COUNT_PARAMS = ("requests",)
SERVING_LATENCY_METRICS = (("h2d_latency", "H2D copy: arrival → copy complete"),
                           ("request_latency", "whole request: arrival → done"))
HOL_COLORS = {"same_direction": ["#d62728", "#8c1a1a", "#ff9896", "#e377c2"],
              "opposite_direction": ["#1f77b4", "#0b3d6b", "#6baed6", "#17becf"]}
# The no-background reference line of each result (dotted, loosely dotted, dash-dotted).
REFERENCE_STYLES = [":", (0, (1, 4)), "-.", (0, (3, 3, 1, 3, 1, 3))]
MAX_SERVING_CONDITIONS = 10
MAX_POOL_ROWS = 40
# The pinned_pool_chunked slot size and the pool's slot count when the case does not set them
# (bench/serving.cpp, kDefaultChunk and pool_slots).
DEFAULT_CHUNK_BYTES = 256 << 10
DEFAULT_POOL_SLOTS = 8


@dataclass
class Distribution:
    """One metric's per-operation distribution, as the result holds it (seconds)."""
    operations: int
    values: dict[str, float]  # p50, p90, p99, p99.9, max and mean, over every operation
    per_repetition: dict[str, list[float]]
    edges: list[float]  # the non-empty buckets' upper edges, increasing
    counts: list[int]
    overflow: int
    maximum: float  # the histogram's exact max


def distribution(case: dict[str, Any], metric: str) -> Distribution | None:
    """The metric's distribution; None where the metric has none (a result from before they existed,
    or a metric that times no single operation). The result was checked when it was read."""
    m = (case.get("metrics") or {}).get(metric)
    d = m.get("distribution") if isinstance(m, dict) else None
    if not isinstance(d, dict):
        return None
    h = d["histogram"]
    return Distribution(
        operations=int(d["operations"]),
        values={k: float(d[k]) for k in (*rf.DISTRIBUTION_STATISTICS, "mean")},
        per_repetition={k: [float(x) for x in d["per_repetition"][k]] for k in rf.DISTRIBUTION_STATISTICS},
        edges=[float(e) for e, _ in h["buckets"]],
        counts=[int(c) for _, c in h["buckets"]],
        overflow=int(h["overflow"]),
        maximum=float(h["max"]),
    )


def _distribution_not_drawable(case: dict[str, Any]) -> str:
    """Why a case's latency distributions cannot go on an axis, or "" when they can."""
    for metric, _ in SERVING_LATENCY_METRICS:
        d = distribution(case, metric)
        if d is None:
            continue
        values = [*d.values.values(), d.maximum, *(v for vs in d.per_repetition.values() for v in vs)]
        if d.edges:
            values.append(d.edges[-1])
        if any(not v <= PLOT_LIMIT for v in values):
            return f"{metric}: values beyond {PLOT_LIMIT:g} s cannot be drawn"
    return ""


def serving_cases(results: Sequence[LoadedResult]) -> bool:
    """Whether any result holds a serving case (the serving plots and sections appear only then)."""
    return any(c.get("family") == "serving" for r in results for c in r.cases)


def _serving_param(case: dict[str, Any], key: str, default: Any = None) -> Any:
    return _params(case).get(key, default)


def _has_background(case: dict[str, Any]) -> bool:
    return _serving_param(case, "background", "none") != "none"


def _strategy_sort_key(strategy: str) -> tuple[int, str]:
    order = SERVING_STRATEGY_ORDER
    return (order.index(strategy) if strategy in order else len(order), strategy)


def _param_text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, sort_keys=True)


def _condition_key(case: dict[str, Any], leave_out: Sequence[str] = ()) -> tuple[tuple[str, str], ...]:
    skip = set(STRATEGY_VARIANT_PARAMS) | set(COUNT_PARAMS) | set(leave_out)
    return tuple(sorted((k, _param_text(v)) for k, v in _params(case).items() if k not in skip))


def _size_text(v: Any) -> str:
    return format_bytes(v) if _is_number(v) and 0 <= v <= MAX_PLOT_BYTES else _param_text(v)


def _count_text(v: Any) -> str:
    if isinstance(v, int) and not isinstance(v, bool):
        return f"{v:,}"
    return format_number(v) if _finite(v) else _param_text(v)


def serving_condition_label(params: dict[str, Any], leave_out: Sequence[str] = ()) -> str:
    """What a panel's cases ran under, in words: "64 KiB requests · Poisson 20,000/s · 4 submitters"."""
    p = {k: v for k, v in params.items()
         if k not in set(STRATEGY_VARIANT_PARAMS) | set(COUNT_PARAMS) | set(leave_out)}
    parts = []
    if "request_bytes" in p:
        parts.append(f"{_size_text(p.pop('request_bytes'))} requests")
    arrival = p.pop("arrival", "back_to_back")
    rate = p.pop("rate_per_s", None)
    burst = p.pop("burst_size", None)
    if arrival == "back_to_back":
        parts.append("back to back")
    elif arrival == "poisson":
        parts.append(f"Poisson {_count_text(rate)}/s" if rate is not None else "Poisson")
    elif arrival == "bursts":
        parts.append(f"bursts of {_count_text(burst if burst is not None else 8)}"
                     + (f" at {_count_text(rate)}/s" if rate is not None else ""))
    else:
        parts.append(f"arrival {_param_text(arrival)}")
    if rate is not None and arrival not in ("poisson", "bursts"):
        parts.append(f"rate_per_s={_param_text(rate)}")
    if burst is not None and arrival != "bursts":
        parts.append(f"burst_size={_param_text(burst)}")
    if "submitters" in p:
        n = p.pop("submitters")
        parts.append(f"{_count_text(n)} submitter{'' if n == 1 else 's'}")
    if "kernel_us" in p:
        parts.append(f"{_count_text(p.pop('kernel_us'))} µs step")
    if "response_bytes" in p:
        rb = p.pop("response_bytes")
        parts.append("no response" if rb == 0 else f"{_size_text(rb)} responses")
    background = p.pop("background", None)
    if background is not None and background != "none":
        parts.append(f"behind {_size_text(p.pop('bulk_bytes', 64 << 20))} bulk, {_param_text(background).replace('_', ' ')}")
    p.pop("bulk_bytes", None)
    if "bulk_chunk_bytes" in p:
        parts.append(f"{_size_text(p.pop('bulk_chunk_bytes'))} bulk chunks")
    if "request_priority" in p:
        parts.append(f"{_param_text(p.pop('request_priority'))} priority")
    parts += [f"{k}={_param_text(v)}" for k, v in sorted(p.items())]
    return " · ".join(parts)


def strategy_label(params: dict[str, Any]) -> str:
    """The line's name: the strategy and what makes its variant (chunk size, slot count)."""
    s = _param_text(params.get("strategy", "?"))
    if "chunk_bytes" in params:
        s += f" ({_size_text(params['chunk_bytes'])} chunks)"
    if "pool_slots" in params:
        s += f" · {_count_text(params['pool_slots'])} slots"
    return s


def _condition_sort_key(params: dict[str, Any]) -> tuple[Any, ...]:
    rb = params.get("request_bytes")
    return (str(params.get("background", "none")) != "none",
            ARRIVAL_ORDER.get(str(params.get("arrival", "back_to_back")), 9),
            rb if _finite(rb) else math.inf,
            json.dumps({k: v for k, v in params.items() if k not in COUNT_PARAMS}, sort_keys=True))


def result_names(results: Sequence[LoadedResult]) -> dict[int, str]:
    """Each result's file name (with as many parent folders as tell two of them apart) and host:
    what a legend names a result by (the start time says nothing to a reader)."""
    names: dict[int, str] = {}
    for depth in range(1, 6):
        names = {r.index: "/".join(r.path.parts[-depth:]) for r in results}
        if len(set(names.values())) == len(names):
            break
    else:
        names = {r.index: str(r.path) for r in results}
    return {r.index: f"{names[r.index]} ({r.hostname})" for r in results}


def _serving_result_entries(results: Sequence[LoadedResult], marker: bool = False) -> list[tuple[Any, str]]:
    """Legend entries for several results: line style (or marker) and file name."""
    if len(results) < 2:
        return []
    names = result_names(results)
    return [(Line2D([0], [0], color="#333333", linestyle="none" if marker else result_style(r.index),
                    marker=result_marker(r.index) if marker else "o", fillstyle=result_fill(r.index),
                    markersize=6),
             f"[{r.index + 1}] {names[r.index]}") for r in results]


def _lighten(color: str, fraction: float) -> str:
    rgb = mcolors.to_rgb(color)
    return mcolors.to_hex(tuple(c + (1 - c) * fraction for c in rgb))


def _nines(q: float, operations: int) -> float:
    """Where quantile q goes on a "nines" axis: -log10(1 - q), so 90 % is 1, 99 % 2, 99.9 % 3; the
    max (q = 1) at log10(operations), where 1 - q is one operation's share."""
    top = math.log10(max(operations, 1))
    if q >= 1.0:
        return top
    return min(top, -math.log10(1.0 - q))


def _percentile_curve(d: Distribution) -> tuple[list[float], list[float]]:
    """The histogram as latency (seconds) against the nines of the fraction of operations at or
    below it: each bucket a step at its upper edge (clamped to the exact max), over the quantiles
    it holds. Values <= 0 (a log axis has no room for them) are left out."""
    total = sum(d.counts) + d.overflow
    xs: list[float] = []
    ys: list[float] = []
    seen = 0
    for edge, count in zip(d.edges, d.counts):
        y = min(edge, d.maximum)
        x0 = _nines(seen / total, total)
        seen += count
        x1 = _nines(seen / total, total)
        if y > 0:
            xs += [x0, x1]
            ys += [y, y]
    if d.overflow and d.maximum > 0:
        xs += [_nines(seen / total, total), _nines(1.0, total)]
        ys += [d.maximum, d.maximum]
    return xs, ys


NINES_TICKS = [(0.0, "0"), (math.log10(2), "50"), (1.0, "90"), (2.0, "99"), (3.0, "99.9"), (4.0, "99.99"),
               (5.0, "99.999"), (6.0, "99.9999"), (7.0, "99.99999")]


def _nines_axis(ax: Axes, top: float) -> None:
    ticks = [(x, label) for x, label in NINES_TICKS if x <= top + 1e-9]
    ax.set_xticks([x for x, _ in ticks])
    ax.set_xticklabels([label for _, label in ticks])
    ax.set_xlim(-0.05, top + 0.12)


def _us_axis(ax: Axes, lo: float, hi: float) -> None:
    """A log y axis of microseconds from lo to hi (both > 0), labelled 1, 2, 5, 10, ... µs."""
    lo, hi = lo * 0.85, hi * 1.2
    if hi / lo < 3:  # a narrow range: widen it so that a labelled tick falls inside
        mid = math.sqrt(lo * hi)
        lo, hi = mid / 1.8, mid * 1.8
    ax.set_yscale("log")
    ax.set_ylim(lo, hi)
    _log_value_axis(ax)
    ax.set_ylim(lo, hi)


def _series_colors(keys: Sequence[tuple[str, ...]], strategy_of: Callable[[tuple[str, ...]], str]) \
        -> dict[tuple[str, ...], tuple[str, str]]:
    """(colour, marker) per line variant: the strategy's; a strategy's second, third … variant in
    lighter shades and other markers, so that no two lines look alike."""
    out: dict[tuple[str, ...], tuple[str, str]] = {}
    per_strategy: Counter[str] = Counter()
    used: dict[str, str] = {}
    for key in keys:
        strategy = strategy_of(key)
        k = per_strategy[strategy]
        per_strategy[strategy] += 1
        base = _color_for(strategy, STRATEGY_COLORS, used)
        marker = STRATEGY_MARKERS.get(strategy, "o")
        if k:
            marker = RESULT_MARKERS[(RESULT_MARKERS.index(marker) + k if marker in RESULT_MARKERS else k)
                                    % len(RESULT_MARKERS)]
        out[key] = (_lighten(base, min(0.6, 0.3 * k)) if k else base, marker)
    return out


def plot_serving_latency(results: Sequence[LoadedResult]) -> PlotOutput:
    name = "serving_latency.png"
    title = "Serving: per-request latency percentiles by strategy"

    def pred(c: dict[str, Any]) -> bool:
        return c.get("family") == "serving" and not _has_background(c)

    ok, other = _select(results, pred)
    drawable: list[tuple[LoadedResult, dict[str, Any]]] = []
    for r, case in ok:
        why = _distribution_not_drawable(case)
        if not why and not any(distribution(case, m) for m, _ in SERVING_LATENCY_METRICS):
            why = "no per-operation distribution (h2d_latency, request_latency) to draw"
        if why:
            other.append(dict(case, status="ok but not drawn", reason=why))
        else:
            drawable.append((r, case))
    if not drawable:
        return PlotOutput(name, title, None, f"no ok serving cases without a background{_why_not(other)}")

    groups: OrderedDict[tuple[tuple[str, str], ...], list[tuple[LoadedResult, dict[str, Any]]]] = OrderedDict()
    for r, case in sorted(drawable, key=lambda rc: _condition_sort_key(_params(rc[1]))):
        groups.setdefault(_condition_key(case), []).append((r, case))
    footnote: list[str] = []
    if len(groups) > MAX_SERVING_CONDITIONS:
        hidden = list(groups)[MAX_SERVING_CONDITIONS:]
        footnote.append(f"… and {len(hidden)} more conditions not shown ("
                        + "; ".join(serving_condition_label(_params(groups[k][0][1])) for k in hidden[:3])
                        + ("; …" if len(hidden) > 3 else "") + "): see the HTML report's table")
        groups = OrderedDict(list(groups.items())[:MAX_SERVING_CONDITIONS])
    metrics = [(m, desc) for m, desc in SERVING_LATENCY_METRICS
               if any(distribution(c, m) for cases in groups.values() for _, c in cases)]
    multi = len(results) > 1

    fig = _new_figure(6.0 * len(metrics) + 3.2, 1.0 + 3.6 * len(groups))
    rows = fig.subfigures(len(groups), 1, squeeze=False)[:, 0]
    for row, (key, cases) in zip(rows, groups.items()):
        axes = row.subplots(1, len(metrics), squeeze=False)[0]
        row.suptitle(mpl_text(serving_condition_label(_params(cases[0][1]))), fontsize=11, fontweight="bold")
        variant_of = {id(c): tuple(_param_text(_params(c).get(k, "")) for k in STRATEGY_VARIANT_PARAMS)
                      for _, c in cases}
        variants = sorted(OrderedDict.fromkeys(variant_of[id(c)] for _, c in cases),
                          key=lambda v: (_strategy_sort_key(v[0]), v[1:]))
        styles = _series_colors(variants, lambda v: v[0])
        labels = {variant_of[id(c)]: strategy_label(_params(c)) for _, c in cases}
        top = 0.0
        lo, hi = math.inf, 0.0
        for ax, (metric, desc) in zip(axes, metrics):
            zeros: list[str] = []
            for r, case in sorted(cases, key=lambda rc: (variants.index(variant_of[id(rc[1])]), rc[0].index)):
                d = distribution(case, metric)
                if d is None:
                    continue
                if d.maximum <= 0:  # every operation took 0 s (as the clock saw it): no room on a log axis
                    zeros.append(labels[variant_of[id(case)]] + (f" [{r.index + 1}]" if multi else ""))
                    continue
                color, marker = styles[variant_of[id(case)]]
                style = result_style(r.index) if multi else "-"
                xs, ys = _percentile_curve(d)
                if xs:
                    ax.plot(xs, [y * 1e6 for y in ys], color=color, linestyle=style, linewidth=1.5, alpha=0.9,
                            zorder=3)
                points = [(_nines(q, d.operations), d.values[k]) for k, q in rf.DISTRIBUTION_QUANTILES.items()]
                points = [(x, v) for x, v in points if v > 0]
                ax.plot([x for x, _ in points], [v * 1e6 for _, v in points], linestyle="none", marker=marker,
                        color=color, markersize=6, markeredgecolor="white" if not multi else color,
                        fillstyle=result_fill(r.index) if multi else "full", markeredgewidth=0.8, zorder=4)
                top = max(top, _nines(1.0, d.operations))
                # The y range: from the body (p50 and the curve's start) to the max.
                positive = [y for y in ys if y > 0] + [v for _, v in points]
                if positive:
                    lo = min(lo, min(min(positive), d.values["p50"] if d.values["p50"] > 0 else math.inf))
                    hi = max(hi, max(positive))
            if zeros:
                ax.text(0.5, 0.5, mpl_text("every request took 0 s (nothing to draw on a log axis):\n"
                                           + ", ".join(zeros)), transform=ax.transAxes, ha="center", va="center",
                        fontsize=8.5, color="#555555")
            ax.set_title(desc, fontsize=10)
            ax.grid(True, which="major", alpha=0.3)
            ax.set_xlabel("percentile (%), spaced by nines; each line ends at its max")
        for ax in axes:
            _nines_axis(ax, max(top, 3.0))
            if hi > 0 and lo < math.inf:
                _us_axis(ax, lo * 1e6, hi * 1e6)
        axes[0].set_ylabel("latency (µs, log scale)")
        handles = [Line2D([0], [0], color=styles[v][0], marker=styles[v][1], markeredgecolor="white",
                          linestyle="-", linewidth=1.5, markersize=6) for v in variants]
        axes[-1].legend(handles, [mpl_text(labels[v]) for v in variants], loc="upper left",
                        bbox_to_anchor=(1.02, 1.0), fontsize=8.5, title="strategy", title_fontsize=9,
                        framealpha=0.9)
    fig.suptitle(f"{title}\n{_title_suffix(results)}", fontsize=12)
    footnote.append("lines: the histogram (buckets under 1 % wide); markers: the exact p50, p90, p99, p99.9 and max "
                    "over every request of every repetition")
    _finish(fig, _serving_result_entries(results),
            footnote + _not_ok_summary(other) + _incomplete_notes(results))
    return PlotOutput(name, title, fig)


def _chunk_bytes(case: dict[str, Any]) -> float | None:
    """The size of the background's copies: bulk_chunk_bytes, else one copy of bulk_bytes
    (default 64 MiB, bench/serving.cpp)."""
    v = _serving_param(case, "bulk_chunk_bytes", _serving_param(case, "bulk_bytes", 64 << 20))
    return float(v) if _is_number(v) and 0 < v <= MAX_PLOT_BYTES else None


def _reference_key(params: dict[str, Any]) -> tuple[str, str, str]:
    return (_param_text(params.get("strategy")), _param_text(params.get("request_bytes")),
            _param_text(params.get("request_priority", "normal")))


def _no_background_references(r: LoadedResult) -> dict[tuple[str, str, str], Distribution]:
    """Per (strategy, request size, priority), the H2D distribution of the same requests without a
    background in this result, where it has them: one submitter back to back, no step or response."""
    out: dict[tuple[str, str, str], Distribution] = {}
    for c in r.cases:
        q = _params(c)
        if (c.get("family") == "serving" and c.get("status") == "ok" and not _has_background(c)
                and q.get("arrival", "back_to_back") == "back_to_back" and q.get("submitters", 1) == 1
                and not q.get("kernel_us") and not q.get("response_bytes")
                and _reference_key(q) not in out and not _distribution_not_drawable(c)):
            d = distribution(c, "h2d_latency")
            if d is not None:
                out[_reference_key(q)] = d
    return out


def plot_serving_head_of_line(results: Sequence[LoadedResult]) -> PlotOutput:
    name = "serving_head_of_line.png"
    title = "Serving: a request behind a bulk copy (head-of-line blocking)"

    def pred(c: dict[str, Any]) -> bool:
        return c.get("family") == "serving" and _has_background(c)

    ok, other = _select(results, pred)
    series: OrderedDict[tuple[Any, ...], list[tuple[float, Distribution]]] = OrderedDict()
    labels: dict[tuple[Any, ...], str] = {}
    refs: dict[tuple[Any, ...], Distribution] = {}
    leave_out = ("background", "request_priority", "bulk_chunk_bytes")
    references = {r.index: _no_background_references(r) for r in results}
    extras = {_condition_key(c, leave_out) + (("strategy", _param_text(_params(c).get("strategy"))),)
              for _, c in ok}
    for r, case in ok:
        d = distribution(case, "h2d_latency")
        x = _chunk_bytes(case)
        why = _distribution_not_drawable(case) or ("" if d is not None else "no h2d_latency distribution to draw")
        if not why and x is None:
            why = "no usable bulk_chunk_bytes or bulk_bytes to place it by"
        if why:
            other.append(dict(case, status="ok but not drawn", reason=why))
            continue
        assert d is not None and x is not None
        p = _params(case)
        extra = _condition_key(case, leave_out) + (("strategy", _param_text(p.get("strategy"))),)
        background = _param_text(p.get("background"))
        priority = _param_text(p.get("request_priority", "normal"))
        key = (background, sorted(extras).index(extra), priority != "normal", priority, r.index)
        series.setdefault(key, []).append((x, d))
        label = f"{background.replace('_', ' ')} · {priority} priority"
        if len(extras) > 1:
            label += " · " + strategy_label(p) + " · " + serving_condition_label(p, leave_out)
        labels[key] = label
        ref = references[r.index].get(_reference_key(p))
        if ref is not None:
            refs.setdefault((extra, r.index), ref)
    if not series:
        return PlotOutput(name, title, None, f"no ok serving cases with a background{_why_not(other)}")

    multi = len(results) > 1
    fig = _new_figure(13.0, 6.4)
    # Not sharey: clearing a figure whose log axes share limits warns; both get the same limits below.
    axes = fig.subplots(1, 2)
    xs_all = [x for pts in series.values() for x, _ in pts]
    lo, hi = math.inf, 0.0
    shade_of: dict[tuple[str, int], int] = {}
    for key in sorted(series):
        shade_of.setdefault((key[0], key[1]), len([k for k in shade_of if k[0] == key[0]]))
    annotated: set[tuple[str, float]] = set()
    for ax, stat in zip(axes, ("p50", "p99")):
        for key in sorted(series):
            background, extra_i, high, _priority, ri = key
            palette = HOL_COLORS.get(background, EXTRA_COLORS)
            color = palette[shade_of[(background, extra_i)] % len(palette)]
            # High priority a little to the right: where priority changes nothing (copies are not
            # reordered by it) the two lines would hide each other.
            dodge = 2 ** 0.09 if high else 1.0
            pts = [Point(x * dodge, d.values[stat] * 1e6, min(d.per_repetition[stat]) * 1e6,
                         max(d.per_repetition[stat]) * 1e6)
                   for x, d in sorted(series[key], key=lambda xd: xd[0])]
            pts = [pt for pt in pts if pt.median > 0]
            if not pts:
                continue
            marker = result_marker(ri) if multi else ("o" if background == "same_direction" else "s")
            _errorbar(ax, pts, color=color, marker=marker, linestyle="--" if high else "-",
                      fillstyle=result_fill(ri) if multi else "full",
                      markerfacecolor="white" if high else color, markersize=5.5 if high else 7, linewidth=1.8,
                      label=mpl_text(labels[key]) if ri == min(k[4] for k in series if k[:4] == key[:4]) else None)
            lo = min(lo, min(pt.p10 or pt.median for pt in pts), min(pt.median for pt in pts))
            hi = max(hi, max(pt.p90 or pt.median for pt in pts))
            if len(series) <= 8 and not multi:  # the values, where they stay legible
                right = max(xs_all)
                for pt in pts:
                    if (background, pt.x / dodge) in annotated:
                        continue
                    annotated.add((background, pt.x / dodge))
                    last = pt.x / dodge >= right
                    ax.annotate(f"{format_number(pt.median)} µs", (pt.x, pt.median), textcoords="offset points",
                                xytext=(-9 if last else 9, -13 if background == "same_direction" else 7),
                                ha="right" if last else "left", fontsize=8, color=color)
        annotated.clear()
        for (extra, ri), ref in refs.items():
            v = ref.values[stat] * 1e6
            if v > 0:
                ax.axhline(v, color="#777777", linestyle=REFERENCE_STYLES[ri % len(REFERENCE_STYLES)], linewidth=1.2,
                           label=mpl_text(f"no background (the same requests alone){' [' + str(ri + 1) + ']' if multi else ''}"))
                if not multi:
                    ax.annotate(f"alone: {format_number(v)} µs", (0.01, v), xycoords=("axes fraction", "data"),
                                textcoords="offset points", xytext=(0, -11), fontsize=7.5, color="#555555")
                lo, hi = min(lo, v), max(hi, v)
        _size_axis(ax, xs_all)
        ax.set_xlabel("the bulk transfer's copy size (bulk_chunk_bytes, log2 scale)")
        ax.set_title(f"H2D latency {stat} (µs); bars: range over the repetitions", fontsize=10)
        ax.grid(True, which="major", alpha=0.3)
    # What a request waits for behind a copy in its direction: at most one chunk at the link rate.
    links = OrderedDict()
    for r in results:
        gpus = r.context.get("gpus")
        for gpu in gpus if isinstance(gpus, list) else []:
            if isinstance(gpu, dict):
                raw = gpu_pcie_raw_gb_per_s(gpu)
                if raw:
                    links[(gpu.get("pcie_gen_current"), gpu.get("pcie_width_current"))] = raw
    if links and any(k[0] == "same_direction" for k in series):
        (gen, width), raw = next(iter(links.items()))
        sizes = sorted(set(xs_all))
        for ax in axes:
            ax.plot(sizes, [s / (raw * 1e9) * 1e6 for s in sizes], color="#999999", linestyle=(0, (5, 3)),
                    linewidth=1.0, zorder=1,
                    label=mpl_text(f"one chunk's transfer at the PCIe Gen{gen} x{width} raw rate ({raw:.1f} GB/s)"))
        lo = min(lo, min(sizes) / (raw * 1e9) * 1e6)
        hi = max(hi, max(sizes) / (raw * 1e9) * 1e6)
    for ax in axes:
        if hi > 0 and lo < math.inf:
            _us_axis(ax, lo, hi)
    axes[0].set_ylabel("H2D latency of the request (µs, log scale)")
    handles, hlabels = axes[0].get_legend_handles_labels()
    if multi:
        handles = [_solid_proxy(h) for h in handles]
    axes[0].legend(handles, hlabels, loc="upper left", fontsize=8, framealpha=0.9,
                   title="background · request priority", title_fontsize=8.5)
    fig.suptitle(f"{title}\n{_title_suffix(results)}", fontsize=12)
    footnote = ["same direction: the request queues behind the bulk copy in flight and waits for up to one chunk; "
                "opposite direction: another copy engine, no wait"]
    _finish(fig, _serving_result_entries(results, marker=True),
            footnote + _not_ok_summary(other) + _incomplete_notes(results))
    return PlotOutput(name, title, fig)


def _pool_bound(case: dict[str, Any]) -> float | None:
    """The pool's bound on pinned bytes: from its pool_bound check when it says, else from the
    parameters (slots x slot size, bench/serving.cu)."""
    for check in case.get("checks") or []:
        if isinstance(check, dict) and check.get("name") == "pool_bound":
            m = re.search(r"bound of (\d+)", str(check.get("detail") or ""))
            if m and len(m.group(1)) < 30:
                return float(m.group(1))
    p = _params(case)
    slots = p.get("pool_slots", DEFAULT_POOL_SLOTS)
    request = p.get("request_bytes")
    if not (_finite(slots) and _finite(request)):
        return None
    slot = min(p.get("chunk_bytes", DEFAULT_CHUNK_BYTES), request) if p.get("strategy") == "pinned_pool_chunked" \
        else request
    return float(slots) * float(slot) if _finite(slot) else None


@dataclass
class PoolRow:
    label: str
    fallbacks: Point | None  # copies per repetition
    copies: float | None  # copies issued per repetition (median)
    high_water: Point | None  # KiB
    bound: float | None  # KiB
    waits: str


def plot_serving_pool(results: Sequence[LoadedResult]) -> PlotOutput:
    name = "serving_pool.png"
    title = "Serving: the pinned staging pool — pageable fallbacks and high-water"

    def pred(c: dict[str, Any]) -> bool:
        metrics = c.get("metrics") or {}
        return c.get("family") == "serving" and ("pageable_fallbacks" in metrics or "pool_high_water" in metrics
                                                 or str(_params(c).get("strategy", "")).startswith("pinned_pool"))

    ok, other = _select(results, pred)
    rows: list[PoolRow] = []
    multi = len(results) > 1
    for r, case in sorted(ok, key=lambda rc: (_condition_sort_key(_params(rc[1])),
                                              _strategy_sort_key(str(_params(rc[1]).get("strategy"))), rc[0].index)):
        p = _params(case)
        fallbacks = _point(case, "pageable_fallbacks", 0)
        high = _point(case, "pool_high_water", 0, scale=1 / 1024)
        if fallbacks is None and high is None:
            other.append(dict(case, status="ok but not drawn",
                              reason="no pool metrics (pageable_fallbacks, pool_high_water)"))
            continue
        copies = _stats(case, "copies_issued")
        waits = _stats(case, "pool_waits")
        wait_time = _stats(case, "pool_wait_time")
        wait_text = ""
        if waits is not None and waits["median"] > 0:
            wait_text = f"{format_number(waits['median'])} waits"
            if wait_time is not None:
                wait_text += f", {format_value(wait_time['median'], 's')}"
        bound = _pool_bound(case)
        rows.append(PoolRow(strategy_label(p) + "\n" + serving_condition_label(p) + (f" [{r.index + 1}]" if multi else ""),
                            fallbacks, copies["median"] if copies is not None and copies["median"] > 0 else None,
                            high, bound / 1024 if bound is not None else None, wait_text))
    if not rows:
        return PlotOutput(name, title, None, f"no ok serving cases of a pool strategy{_why_not(other)}")
    footnote: list[str] = []
    if len(rows) > MAX_POOL_ROWS:
        footnote.append(f"… and {len(rows) - MAX_POOL_ROWS} more pool cases not shown")
        rows = rows[:MAX_POOL_ROWS]
    # Fallbacks as a share of the copies issued where every row says how many were issued.
    as_share = all(row.copies is not None for row in rows if row.fallbacks is not None)

    def share(v: float | None, row: PoolRow) -> float | None:
        if v is None:
            return None
        return 100 * v / row.copies if as_share and row.copies else v

    # High-water as a share of the pool's bound where every row knows its bound: the bounds of
    # different strategies and sizes differ a hundredfold.
    of_bound = all(row.bound for row in rows if row.high_water is not None)

    def fill(v: float | None, row: PoolRow) -> float | None:
        if v is None:
            return None
        return 100 * v / row.bound if of_bound and row.bound else v

    fig = _new_figure(13.0, 1.9 + 0.62 * len(rows))
    axes = fig.subplots(1, 2, sharey=True)
    fb_top = max([share(row.fallbacks.p90 if row.fallbacks.p90 is not None else row.fallbacks.median, row) or 0.0
                  for row in rows if row.fallbacks is not None] + [0.0])
    hw_top = 100.0 if of_bound else max(
        [row.high_water.p90 if row.high_water.p90 is not None else row.high_water.median
         for row in rows if row.high_water is not None] + [row.bound for row in rows if row.bound is not None] + [0.0])
    for y, row in enumerate(rows):
        if row.fallbacks is not None:
            fb = row.fallbacks
            median = share(fb.median, row) or 0.0
            lo = max(0.0, median - (share(fb.p10, row) or median))
            hi = max(0.0, (share(fb.p90, row) or median) - median)
            axes[0].barh(y, median, height=0.6, color="#d62728" if median > 0 else "#bbbbbb",
                         xerr=[[lo], [hi]], capsize=3, error_kw={"elinewidth": 1, "ecolor": "#333333"})
            text = f"{median:.2g} %  ({format_number(fb.median)} of {format_number(row.copies or 0)})" if as_share \
                else format_number(fb.median)
            if row.waits:
                text += f"; {row.waits}"
            axes[0].text(median + hi + (fb_top or 1.0) * 0.02, y, mpl_text(text), va="center", fontsize=8)
        if row.high_water is not None:
            hw = row.high_water
            median = fill(hw.median, row) or 0.0
            lo = max(0.0, median - (fill(hw.p10, row) or median))
            hi = max(0.0, (fill(hw.p90, row) or median) - median)
            at_bound = row.bound is not None and hw.median >= row.bound
            axes[1].barh(y, median, height=0.6, color="#ff7f0e" if at_bound else "#1f77b4",
                         xerr=[[lo], [hi]], capsize=3, error_kw={"elinewidth": 1, "ecolor": "#333333"})
            text = format_bytes(hw.median * 1024) + (f" of {format_bytes(row.bound * 1024)}" if row.bound else "")
            end = max(median + hi, 100.0 if of_bound else (row.bound or 0.0))
            axes[1].text(end + hw_top * 0.02, y, text, va="center", fontsize=8)
        if row.bound is not None:
            b = 100.0 if of_bound else row.bound
            axes[1].plot([b, b], [y - 0.4, y + 0.4], color="#222222", linewidth=2.2, zorder=4)
    axes[0].set_yticks(range(len(rows)))
    axes[0].set_yticklabels([mpl_text(row.label) for row in rows], fontsize=8)
    axes[0].set_ylim(len(rows) - 0.5, -0.5)
    axes[0].set_xlim(0, fb_top * 2.2 if fb_top > 0 else 1.0)
    axes[1].set_xlim(0, hw_top * 1.45 if hw_top > 0 else 1.0)
    axes[0].set_xlabel(("% of the copies issued" if as_share else "copies per repetition") + "; median, bars p10–p90")
    axes[1].set_xlabel(("% of the pool's bound (black tick)" if of_bound else "KiB; black tick: the pool's bound")
                       + "; orange: reached it")
    axes[0].set_title("pageable fallbacks (no free pinned slot)", fontsize=10)
    axes[1].set_title("high-water: pinned bytes in use at most", fontsize=10)
    for ax in axes:
        ax.grid(axis="x", alpha=0.3)
        ax.set_axisbelow(True)
    fig.suptitle(f"{title}\n{_title_suffix(results)}", fontsize=12)
    names = result_names(results)
    _finish(fig, [(None, f"[{r.index + 1}] {names[r.index]}") for r in results] if multi else [],
            footnote + _not_ok_summary(other) + _incomplete_notes(results))
    return PlotOutput(name, title, fig)


# --------------------------------------------------------------------------------------------
# The other families: overlap, small_copies, unified_memory, peer; serving percentiles per case;
# the Gantt charts of the traces a result names (CaseResult.timeline, drawn by timeline.py)


@dataclass
class Value:
    """One bar: a median with p10/p90 (or another low/high), in the plot's unit."""
    median: float
    lo: float | None = None
    hi: float | None = None
    text: str = ""
    hatch: str | None = None


def _value(case: dict[str, Any], metric: str, scale: float = 1.0) -> Value | None:
    s = _stats(case, metric)
    if s is None:
        return None
    lo, hi = s.get("p10"), s.get("p90")
    return Value(s["median"] * scale, lo * scale if _finite(lo) else None, hi * scale if _finite(hi) else None)


def _series_bars(ax: Axes, categories: Sequence[str], series: Sequence[str], values: dict[tuple[str, str], Value],
                 colors: dict[str, str], *, log: bool = False, fmt: Callable[[float], str] = format_number,
                 label_size: float = 7.5) -> dict[tuple[str, str], float]:
    """Grouped vertical bars (a group per category, a bar per series present); returns each bar's x.
    A log axis starts below the smallest bar; values are written above the bars."""
    xs: dict[tuple[str, str], float] = {}
    present = [[s for s in series if (c, s) in values] for c in categories]
    width = 0.8 / max(1, max((len(p) for p in present), default=1))
    drawn = [v for v in values.values()]
    top = max(max(v.hi if v.hi is not None else v.median, v.median) for v in drawn)
    positive = [v.median for v in drawn if v.median > 0]
    bottom = min(positive) / 3 if (log and positive) else 0.0
    labelled: set[str] = set()
    for ci, (cat, ser) in enumerate(zip(categories, present)):
        for k, s in enumerate(ser):
            v = values[(cat, s)]
            x = ci + (k - (len(ser) - 1) / 2) * width
            xs[(cat, s)] = x
            height = v.median - bottom if v.median > bottom else 0.0
            lo = max(0.0, v.median - v.lo) if v.lo is not None else 0.0
            hi = max(0.0, v.hi - v.median) if v.hi is not None else 0.0
            ax.bar(x, height, bottom=bottom, width=width * 0.9, color=colors[s], edgecolor="white",
                   hatch=v.hatch, label=mpl_text(s) if s not in labelled else None,
                   yerr=[[min(lo, max(0.0, v.median - bottom))], [hi]] if (lo or hi) else None, capsize=2.5,
                   error_kw={"elinewidth": 0.9, "ecolor": "#333333"})
            labelled.add(s)
            ax.annotate(v.text or fmt(v.median), (x, v.median + hi if not log else (v.median + hi)),
                        textcoords="offset points", xytext=(0, 3), ha="center", va="bottom",
                        fontsize=label_size, rotation=90 if width < 0.2 else 0)
    ax.set_xticks(range(len(categories)))
    ax.set_xticklabels([mpl_text(c) for c in categories], fontsize=8.5)
    ax.set_xlim(-0.6, len(categories) - 0.4)
    if log:
        ax.set_yscale("log")
        ax.set_ylim(bottom, top * (6.0 if width < 0.2 else 3.0))
        ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _pos: f"{v:g}"))
    else:
        ax.set_ylim(0, top * (1.35 if width < 0.2 else 1.18) if top > 0 else 1.0)
    ax.grid(axis="y", alpha=0.3)
    ax.set_axisbelow(True)
    return xs


def _result_series(results: Sequence[LoadedResult]) -> tuple[dict[int, str], dict[str, str]]:
    """Series names ("[2] b.json (host)") and colours for plots whose bars are told apart by result."""
    names = result_names(results)
    series = {r.index: (f"[{r.index + 1}] {names[r.index]}" if len(results) > 1 else names[r.index]) for r in results}
    if len(results) == 1:
        return series, {s: "#4c78a8" for s in series.values()}
    return series, {s: result_color(i) for i, s in series.items()}


def _condition_text(params: dict[str, Any], keys: Sequence[str]) -> str:
    parts = []
    for k in keys:
        v = params.get(k)
        if v is None:
            continue
        if k in ("bytes", "stride") and _is_number(v):
            parts.append(f"{k} {format_bytes(v)}")
        else:
            parts.append(f"{k} {v}")
    return ", ".join(parts)


OVERLAP_VARIANT_ORDER = ["pinned_event_wait", "pinned_device_sync", "pinned_same_stream", "pageable_separate_stream"]
OVERLAP_VARIANT_LABELS = {
    "pinned_event_wait": "pinned\nevent wait",
    "pinned_device_sync": "pinned\ndevice sync",
    "pinned_same_stream": "pinned\nsame stream",
    "pageable_separate_stream": "pageable\nseparate stream",
}


def _ordered(value: str, order: Sequence[str]) -> tuple[int, str]:
    return (order.index(value) if value in order else len(order), value)


def _ideal_seconds(case: dict[str, Any]) -> float | None:
    """The ideal iteration the overlap family divides by, max(copy alone, kernel alone): per sample
    time_per_iteration / ratio_to_ideal, the median of those."""
    metrics = case.get("metrics") or {}
    t = (metrics.get("time_per_iteration") or {}).get("samples")
    r = (metrics.get("ratio_to_ideal") or {}).get("samples")
    if not isinstance(t, list) or not isinstance(r, list) or len(t) != len(r):
        return None
    ideals = sorted(a / b for a, b in zip(t, r) if _plottable(a) and _plottable(b) and b > 0)
    if not ideals:
        return None
    n = len(ideals)
    return ideals[n // 2] if n % 2 else (ideals[n // 2 - 1] + ideals[n // 2]) / 2


def _contributing(results: Sequence[LoadedResult], drawn: Sequence[tuple[LoadedResult, dict[str, Any]]]) \
        -> list[LoadedResult]:
    """The results that have a case in the figure: titles, legends and "[n]" marks name only those
    (a family's plot from five files of which one has that family is that file's plot)."""
    indexes = {r.index for r, _ in drawn}
    return [r for r in results if r.index in indexes]


def plot_overlap(results: Sequence[LoadedResult]) -> PlotOutput:
    name = "overlap.png"
    title = "Overlap: time per iteration against the ideal, and the share of the copy under a kernel"
    ok, other = _select(results, lambda c: c.get("family") == "overlap")
    ok = [(r, c) for r, c in ok if _stats(c, "time_per_iteration") is not None]
    if not ok:
        return PlotOutput(name, title, None, f"no ok overlap cases{_why_not(other)}")
    results = _contributing(results, ok)
    conditions = list(OrderedDict.fromkeys(_condition_text(_params(c), ("bytes", "kernel_us", "iterations"))
                                           for _, c in ok))

    def category(c: dict[str, Any]) -> str:
        p = _params(c)
        label = OVERLAP_VARIANT_LABELS.get(str(p.get("variant")), str(p.get("variant")))
        if len(conditions) > 1:
            label += "\n" + _condition_text(p, ("bytes", "kernel_us", "iterations"))
        return label

    cases = sorted(ok, key=lambda rc: (conditions.index(_condition_text(_params(rc[1]), ("bytes", "kernel_us", "iterations"))),
                                       _ordered(str(_params(rc[1]).get("variant")), OVERLAP_VARIANT_ORDER), rc[0].index))
    categories = list(OrderedDict.fromkeys(category(c) for _, c in cases))
    names, colors = _result_series(results)
    times: dict[tuple[str, str], Value] = {}
    fractions: dict[tuple[str, str], Value] = {}
    ideals: dict[tuple[str, str], float] = {}
    kernels: dict[tuple[str, str], float] = {}
    for r, c in cases:
        key = (category(c), names[r.index])
        v = _value(c, "time_per_iteration", 1e3)
        if v is not None:
            times[key] = v
        f = _value(c, "overlap_fraction")
        if f is not None:
            f.text = f"{f.median:.2f}"
            fractions[key] = f
        ideal = _ideal_seconds(c)
        if ideal is not None:
            ideals[key] = ideal * 1e3
        k = _params(c).get("kernel_us")
        if _is_number(k) and 0 < k <= PLOT_LIMIT:
            kernels[key] = k / 1e3
    series = [names[r.index] for r in results if any(k[1] == names[r.index] for k in times)]
    fig = _new_figure(max(11.0, 3.0 + 2.4 * len(categories)), 5.8)
    left, right = fig.subplots(1, 2, width_ratios=[3, 2])
    xs = _series_bars(left, categories, series, times, colors, fmt=lambda v: f"{format_number(v)} ms")
    width = 0.8 / max(1, len(series)) * 0.9
    ideal_done = kernel_done = False
    for key, x in xs.items():
        if key in ideals:
            left.hlines(ideals[key], x - width / 2, x + width / 2, colors="#111111", linewidth=2.2, zorder=5,
                        label="ideal: max(copy alone, kernel alone)" if not ideal_done else None)
            ideal_done = True
        if key in kernels:
            left.hlines(kernels[key], x - width / 2, x + width / 2, colors="#111111", linestyles=(0, (1, 1.5)),
                        linewidth=1.4, zorder=5, label="kernel alone (kernel_us)" if not kernel_done else None)
            kernel_done = True
    top = max([v.hi or v.median for v in times.values()] + list(ideals.values()) + [0.0])
    left.set_ylim(0, top * 1.2)
    left.set_ylabel("time per iteration (ms), median; bars p10–p90")
    left.set_title("time per iteration vs ideal (lower is better)", fontsize=10)
    left.legend(fontsize=8, loc="upper left", framealpha=0.9)
    if fractions:
        _series_bars(right, categories, series, fractions, colors, fmt=lambda v: f"{v:.2f}")
        right.set_ylim(0, 1.18)
    else:
        right.text(0.5, 0.5, "no overlap_fraction metric", transform=right.transAxes, ha="center", va="center")
    right.set_ylabel("overlap fraction (share of the copy time under a kernel)")
    right.set_title("overlap fraction, CUPTI timeline (higher is better)", fontsize=10)
    if len(categories) > 4:
        for ax in (left, right):
            for label in ax.get_xticklabels():
                label.set_rotation(20)
                label.set_horizontalalignment("right")
    cond = conditions[0] if len(conditions) == 1 else f"{len(conditions)} conditions"
    fig.suptitle(mpl_text(f"{title}\n{cond} — {_title_suffix(results)}"), fontsize=11)
    footnote = ["event wait / device sync: the copy on its own stream, the kernel waiting on an event / the host "
                "synchronising the device; same stream: copy and kernel on one stream",
                "ideal per sample = time_per_iteration / ratio_to_ideal (the family's max(copy alone, kernel "
                "alone)); a ratio near 1 means the copy hides under the kernel"]
    entries: list[tuple[Any, str]] = []
    if len(results) > 1:
        entries = [(Line2D([0], [0], color=colors[s], linewidth=8), s) for s in series]
    _finish(fig, entries, footnote + _not_ok_summary(other) + _incomplete_notes(results))
    return PlotOutput(name, title, fig)


SMALL_METHOD_ORDER = ["individual", "coalesced", "batched", "graph", "gather_kernel"]
SMALL_METHOD_COLORS = {"individual": "#d62728", "coalesced": "#ff7f0e", "batched": "#1f77b4", "graph": "#9467bd",
                       "gather_kernel": "#2ca02c"}


def plot_small_copies(results: Sequence[LoadedResult]) -> PlotOutput:
    name = "small_copies.png"
    title = "Small copies: N pieces of S bytes per batch, by method"
    ok, other = _select(results, lambda c: c.get("family") == "small_copies")
    ok = [(r, c) for r, c in ok if _stats(c, "time_per_batch") is not None]
    if not ok:
        return PlotOutput(name, title, None, f"no ok small_copies cases{_why_not(other)}")
    results = _contributing(results, ok)
    multi = len(results) > 1
    names = result_names(results)

    def condition(c: dict[str, Any]) -> tuple[str, float, float]:
        p = _params(c)
        count, size = p.get("count"), p.get("bytes")
        text = (f"{str(p.get('direction', 'h2d')).upper()}\n{count} × "
                f"{format_bytes(size) if _is_number(size) else size}")
        return (text, str(p.get("direction", "h2d")) != "h2d", -(count if _is_number(count) else 0))

    conds = sorted(OrderedDict.fromkeys(condition(c) for _, c in ok), key=lambda t: (t[1], t[2]))
    categories = [t[0] for t in conds]
    methods = sorted(OrderedDict.fromkeys(str(_params(c).get("method")) for _, c in ok),
                     key=lambda m: _ordered(m, SMALL_METHOD_ORDER))
    used: dict[str, str] = {}

    def series_of(r: LoadedResult, c: dict[str, Any]) -> str:
        m = str(_params(c).get("method"))
        return f"{m} [{r.index + 1}]" if multi else m

    series = [f"{m} [{r.index + 1}]" if multi else m for m in methods for r in (results if multi else results[:1])]
    colors: dict[str, str] = {}
    for m in methods:
        base = _color_for(m, SMALL_METHOD_COLORS, used)
        for r in results:
            colors[f"{m} [{r.index + 1}]" if multi else m] = _lighten(base, min(0.6, 0.25 * r.index)) if multi else base
    panels = (("time_per_batch", 1e6, "time per batch (µs, log), median; bars p10–p90", "time per batch (lower is better)"),
              ("api_calls_per_batch", 1.0, "CUDA API calls per batch (log)", "API calls per batch"),
              ("issue_cpu_time", 1e6, "CPU time issuing a batch (µs, log)", "CPU time spent issuing (lower is better)"))
    values = {m: {} for m, *_ in panels}  # type: dict[str, dict[tuple[str, str], Value]]
    for r, c in ok:
        for metric, scale, *_ in panels:
            v = _value(c, metric, scale)
            if v is not None and v.median > 0:
                if metric == "api_calls_per_batch":
                    v.text = f"{v.median:g}"
                values[metric][(condition(c)[0], series_of(r, c))] = v
    present = [p for p in panels if values[p[0]]]
    series = [s for s in series if any(k[1] == s for vals in values.values() for k in vals)]
    fig = _new_figure(max(11.0, 2.0 + 0.5 * len(categories) * len(series)), 3.2 * len(present) + 1.0)
    axes = fig.subplots(len(present), 1, squeeze=False)[:, 0]
    for ax, (metric, _scale, ylabel, desc) in zip(axes, present):
        _series_bars(ax, categories, series, values[metric], colors, log=True,
                     fmt=(lambda v: f"{v:g}") if metric == "api_calls_per_batch" else format_number)
        ax.set_ylabel(mpl_text(ylabel), fontsize=8.5)
        ax.set_title(desc, fontsize=10)
    axes[0].legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8.5, title="method", title_fontsize=9,
                   framealpha=0.9)
    fig.suptitle(mpl_text(f"{title}\n{_title_suffix(results)}"), fontsize=11)
    footnote = ["coalesced: packing on the host + one copy (pack_time, copy_time in the HTML tables); gather_kernel: "
                "one kernel reading mapped pinned memory"]
    if multi:
        footnote += [f"[{r.index + 1}] {names[r.index]}" for r in results]
    _finish(fig, [], footnote + _not_ok_summary(other) + _incomplete_notes(results))
    return PlotOutput(name, title, fig)


UM_METHOD_ORDER = ["fault", "prefetch", "advise_preferred_gpu", "advise_accessed_by", "gpu_to_cpu"]


def um_counts(case: dict[str, Any]) -> dict[str, Any] | None:
    """The um_counters check's value ({gpu_fault_groups: [...], bytes_h2d: [...], ..., complete}), if any."""
    for ch in case.get("checks") or []:
        if isinstance(ch, dict) and ch.get("name") == "um_counters" and isinstance(ch.get("value"), dict):
            return ch["value"]
    return None


def _median_list(values: Any) -> Value | None:
    nums = sorted(v for v in values if _plottable(v)) if isinstance(values, list) else []
    if not nums:
        return None
    n = len(nums)
    med = nums[n // 2] if n % 2 else (nums[n // 2 - 1] + nums[n // 2]) / 2
    return Value(med, nums[0], nums[-1])


def plot_unified_memory(results: Sequence[LoadedResult]) -> PlotOutput:
    name = "unified_memory.png"
    title = "Unified memory: fault-driven migration vs prefetch vs advice"
    ok, other = _select(results, lambda c: c.get("family") == "unified_memory")
    ok = [(r, c) for r, c in ok if _stats(c, "time") is not None]
    if not ok:
        return PlotOutput(name, title, None, f"no ok unified_memory cases{_why_not(other)}")
    results = _contributing(results, ok)
    sizes = {_params(c).get("bytes") for _, c in ok}

    def category(c: dict[str, Any]) -> str:
        p = _params(c)
        label = str(p.get("method")).replace("advise_", "advise\n")
        if _is_number(p.get("stride")):
            label += f"\nstride {format_bytes(p['stride'])}"
        if len(sizes) > 1 and _is_number(p.get("bytes")):
            label += f"\n{format_bytes(p['bytes'])}"
        return label

    def sort_key(rc: tuple[LoadedResult, dict[str, Any]]) -> tuple[Any, ...]:
        p = _params(rc[1])
        return (_ordered(str(p.get("method")), UM_METHOD_ORDER), p.get("stride") if _is_number(p.get("stride")) else 0,
                p.get("bytes") if _is_number(p.get("bytes")) else 0, rc[0].index)

    ok.sort(key=sort_key)
    categories = list(OrderedDict.fromkeys(category(c) for _, c in ok))
    names, colors = _result_series(results)
    panels: list[tuple[str, str, dict[tuple[str, str], Value], bool]] = [
        ("time", "time per pass (ms, log), median; bars p10–p90", {}, True),
        ("time_per_mib", "time per MiB migrated (µs/MiB, log)", {}, True),
        ("gpu_fault_groups", "fault groups per sample (median; min–max)", {}, False),
        ("migrated", "MiB migrated per sample (median; min–max)", {}, False),
    ]
    incomplete = 0
    for r, c in ok:
        key = (category(c), names[r.index])
        counts = um_counts(c)
        lossy = isinstance(counts, dict) and counts.get("complete") is False
        incomplete += 1 if lossy else 0
        hatch = "///" if lossy else None
        for metric, _label, vals, _log in panels:
            v: Value | None
            if metric == "time":
                v = _value(c, "time", 1e3)
            elif metric == "time_per_mib":
                v = _value(c, "time_per_mib", 1e6)
            elif counts is None:
                v = None
            elif metric == "gpu_fault_groups":
                v = _median_list(counts.get("gpu_fault_groups"))
                if v is not None:
                    v.text = f"{v.median:g}"
            else:
                h2d, d2h = counts.get("bytes_h2d"), counts.get("bytes_d2h")
                both = [a + b for a, b in zip(h2d, d2h) if _plottable(a) and _plottable(b)] \
                    if isinstance(h2d, list) and isinstance(d2h, list) else []
                v = _median_list([x / (1 << 20) for x in both])
            if v is None or (_log and v.median <= 0):
                continue
            v.hatch = hatch if metric in ("gpu_fault_groups", "migrated") else None
            vals[key] = v
    present = [p for p in panels if p[2]]
    series = [names[r.index] for r in results if any(k[1] == names[r.index] for p in present for k in p[2])]
    fig = _new_figure(max(12.0, 2.0 + 1.1 * len(categories) * max(1, len(series))), 7.6)
    axes = fig.subplots(2, 2).flatten()
    for ax, (metric, label, vals, log) in zip(axes, panels):
        if not vals:
            ax.text(0.5, 0.5, "no counts in these results (um_counters)", transform=ax.transAxes, ha="center",
                    va="center", color="#555555")
            ax.set_axis_off()
            continue
        _series_bars(ax, categories, series, vals, colors, log=log, label_size=7)
        ax.set_ylabel(mpl_text(label), fontsize=8)
        ax.set_title({"time": "time per pass (lower is better)", "time_per_mib": "time per MiB migrated (lower is better)",
                      "gpu_fault_groups": "GPU page-fault groups (CUPTI um_counters)",
                      "migrated": "bytes migrated, H2D + D2H (CUPTI um_counters)"}[metric], fontsize=10)
        for t in ax.get_xticklabels():
            t.set_fontsize(7.5)
    if len(series) > 1:
        axes[0].legend(fontsize=8, loc="upper left", framealpha=0.9)
    sizes_text = ", ".join(format_bytes(s) for s in sorted(s for s in sizes if _is_number(s)))
    fig.suptitle(mpl_text(f"{title}\nmanaged buffer {sizes_text} — {_title_suffix(results)}"), fontsize=11)
    footnote = []
    if incomplete:
        footnote.append(f"hatched: counts INCOMPLETE in {incomplete} case(s) (CUPTI lost records, um_counters "
                        "complete = false): lower bounds")
    _finish(fig, [], footnote + _not_ok_summary(other) + _incomplete_notes(results))
    return PlotOutput(name, title, fig)


PEER_METHOD_ORDER = ["peer_access", "sm_read", "no_peer_access", "two_hop"]
PEER_METHOD_COLORS = {"peer_access": "#1f77b4", "sm_read": "#2ca02c", "no_peer_access": "#d62728", "two_hop": "#ff7f0e"}
MAX_PEER_GPUS = 16


def _pair(case: dict[str, Any]) -> tuple[int, int] | None:
    m = re.fullmatch(r"(\d{1,4})-(\d{1,4})", str(_params(case).get("pair", "")))
    return (int(m.group(1)), int(m.group(2))) if m else None


def plot_peer_bandwidth(results: Sequence[LoadedResult]) -> PlotOutput:
    name = "peer_bandwidth.png"
    title = "Peer copies: bandwidth per GPU pair (source → destination), by method"
    ok, other = _select(results, lambda c: c.get("family") == "peer" and _params(c).get("measure", "bandwidth") == "bandwidth")
    ok = [(r, c) for r, c in ok if _pair(c) is not None and _stats(c, "bandwidth") is not None]
    if not ok:
        return PlotOutput(name, title, None, f"no ok peer bandwidth cases with a GPU pair{_why_not(other)}")
    results = _contributing(results, ok)
    multi = len(results) > 1
    names = result_names(results)
    # Per (result, direction, method): the largest size measured (where a link reaches its rate).
    panels: OrderedDict[tuple[int, str, str], dict[tuple[int, int], float]] = OrderedDict()
    largest: dict[tuple[int, str, str], float] = {}
    for r, c in ok:
        p = _params(c)
        key = (r.index, str(p.get("direction", "uni")), str(p.get("method")))
        b = _bytes(c) or 0
        largest[key] = max(largest.get(key, 0), b)
    gpus = sorted({g for _, c in ok for g in _pair(c) or ()})[:MAX_PEER_GPUS]
    links: dict[tuple[int, int], str] = {}
    for r, c in ok:
        p = _params(c)
        key = (r.index, str(p.get("direction", "uni")), str(p.get("method")))
        pair = _pair(c)
        if (_bytes(c) or 0) != largest[key] or pair is None or pair[0] not in gpus or pair[1] not in gpus:
            continue
        panels.setdefault(key, {})[pair] = _stats(c, "bandwidth")["median"]  # type: ignore[index]
        links[pair] = str(p.get("link", ""))
    keys = sorted(panels, key=lambda k: (k[0], k[1] != "uni", _ordered(k[2], PEER_METHOD_ORDER)))
    cols = min(4, len(keys))
    nrows = math.ceil(len(keys) / cols)
    n = len(gpus)
    cell = max(0.3, min(0.8, 2.6 / n))
    fig = _new_figure(cols * (n * cell + 1.1) + 1.4, nrows * (n * cell + 1.1) + 1.2)
    axes = fig.subplots(nrows, cols, squeeze=False).flatten()
    vmax = max(v for p in panels.values() for v in p.values())
    norm = mcolors.LogNorm(vmin=max(vmax / 1000, min(v for p in panels.values() for v in p.values() if v > 0)),
                           vmax=vmax) if vmax > 0 else None
    cmap = matplotlib.colormaps["viridis"]
    image = None
    for ax, key in zip(axes, keys):
        grid = [[math.nan] * n for _ in range(n)]
        for (s, d), v in panels[key].items():
            grid[gpus.index(s)][gpus.index(d)] = v if v > 0 else math.nan
        image = ax.imshow(grid, cmap=cmap, norm=norm, aspect="equal")
        for i in range(n):
            for j in range(n):
                v = grid[i][j]
                if i == j:
                    text, color = "—", "#999999"
                elif math.isnan(v):
                    text, color = "n/a", "#999999"
                else:
                    text = f"{v:.3g}"
                    color = "white" if norm is None or norm(v) < 0.6 else "black"
                ax.text(j, i, text, ha="center", va="center", fontsize=8 if n <= 6 else 6.5 if n <= 10 else 5,
                        color=color)
        ax.set_xticks(range(n))
        ax.set_yticks(range(n))
        ax.set_xticklabels([f"GPU {g}" for g in gpus], fontsize=7.5)
        ax.set_yticklabels([f"GPU {g}" for g in gpus], fontsize=7.5)
        ax.set_xlabel("destination", fontsize=8)
        ax.set_ylabel("source", fontsize=8)
        ri, direction, method = key
        size = format_bytes(largest[key])
        ax.set_title(mpl_text(f"{method} · {direction} · {size}" + (f"\n[{ri + 1}] {names[ri]}" if multi else "")),
                     fontsize=9)
    for ax in axes[len(keys):]:
        ax.set_axis_off()
    if image is not None:
        bar = fig.colorbar(image, ax=list(axes[:len(keys)]), shrink=0.8, pad=0.02)
        bar.set_label("bandwidth (GB/s, median, log colour scale)", fontsize=8.5)
        bar.ax.yaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
        bar.ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _pos: f"{v:g}"))
        bar.ax.yaxis.set_minor_formatter(NullFormatter())
    fig.suptitle(mpl_text(f"{title}\n{_title_suffix(results)}"), fontsize=11)
    link_text = "; ".join(f"{s}→{d} {links[(s, d)]}" for s, d in sorted(links) if links[(s, d)])
    footnote = ["each panel at the largest transfer size measured for that method; bi: both directions' bytes over "
                "the block time; n/a: not measured (skipped, e.g. no peer access on that pair)"]
    if link_text:
        footnote.append("links: " + (link_text if len(link_text) < 160 else link_text[:157] + "…"))
    _finish(fig, [], footnote + _not_ok_summary(other) + _incomplete_notes(results))
    return PlotOutput(name, title, fig)


def plot_peer_latency(results: Sequence[LoadedResult]) -> PlotOutput:
    name = "peer_latency.png"
    title = "Peer copies: latency of small copies by method and link"
    ok, other = _select(results, lambda c: c.get("family") == "peer" and _params(c).get("measure") == "latency")
    ok = [(r, c) for r, c in ok if _bytes(c)]
    if not ok:
        return PlotOutput(name, title, None, f"no ok peer latency cases{_why_not(other)}")
    results = _contributing(results, ok)
    multi = len(results) > 1
    metrics = (("time_per_copy", "time per copy inside a latched block"),
               ("round_trip_time", "round trip: issue to completion seen by the host"))
    # (metric, result, method, link) -> bytes -> medians over the pairs
    acc: dict[tuple[str, int, str, str], dict[float, list[float]]] = {}
    for r, c in ok:
        p = _params(c)
        for m, _ in metrics:
            s = _stats(c, m)
            if s is not None:
                acc.setdefault((m, r.index, str(p.get("method")), str(p.get("link", ""))), {}) \
                    .setdefault(float(_bytes(c) or 0), []).append(s["median"] * 1e6)
    fig = _new_figure(13, 6.0)
    axes = fig.subplots(1, 2, sharey=True)
    link_styles = {l: RESULT_STYLES[i % len(RESULT_STYLES)]
                   for i, l in enumerate(sorted({k[3] for k in acc}))}
    used: dict[str, str] = {}
    sizes: list[float] = []
    for ax, (m, desc) in zip(axes, metrics):
        for key in sorted((k for k in acc if k[0] == m), key=lambda k: (_ordered(k[2], PEER_METHOD_ORDER), k[3], k[1])):
            _, ri, method, link = key
            pts = [Point(b, sorted(v)[len(v) // 2], min(v), max(v)) for b, v in sorted(acc[key].items())]
            sizes += [p.x for p in pts]
            label = f"{method} · {link or 'link n/a'}" + (f" · [{ri + 1}]" if multi else "")
            _errorbar(ax, pts, color=_color_for(method, PEER_METHOD_COLORS, used),
                      linestyle=result_style(ri) if multi else link_styles[link],
                      marker=result_marker(ri) if multi else "o", fillstyle=result_fill(ri) if multi else "full",
                      label=mpl_text(label))
        ax.set_title(desc, fontsize=10)
        ax.grid(True, which="major", alpha=0.3)
        ax.set_xlabel("transfer size (bytes, log2 scale)")
    for ax in axes:
        if sizes:
            _size_axis(ax, sizes)
        _log_value_axis(ax)
    axes[0].set_ylabel("time (µs, log scale): median over the pairs of that link; bars min–max")
    handles, labels = axes[0].get_legend_handles_labels()
    axes[1].legend(handles, labels, loc="upper left", bbox_to_anchor=(1.02, 1.0), fontsize=8, framealpha=0.9,
                   title="method · link", title_fontsize=9)
    fig.suptitle(mpl_text(f"{title}\n{_title_suffix(results)}"), fontsize=11)
    _finish(fig, _result_entries(results, styled=True), _not_ok_summary(other) + _incomplete_notes(results))
    return PlotOutput(name, title, fig)


MAX_PERCENTILE_ROWS = 60
PERCENTILE_COLORS = {"p50": "#1f77b4", "p90": "#2ca02c", "p99": "#ff7f0e", "p99.9": "#d62728", "max": "#444444"}
PERCENTILE_MARKERS = {"p50": "o", "p90": "s", "p99": "D", "p99.9": "^", "max": "x"}


def plot_serving_percentiles(results: Sequence[LoadedResult]) -> PlotOutput:
    name = "serving_percentiles.png"
    title = "Serving: latency percentiles per case"
    ok, other = _select(results, lambda c: c.get("family") == "serving")
    rows = [(r, c) for r, c in ok if any(distribution(c, m) is not None for m, _ in SERVING_LATENCY_METRICS)]
    if not rows:
        return PlotOutput(name, title, None, f"no ok serving cases with per-request distributions{_why_not(other)}")
    results = _contributing(results, rows)
    multi = len(results) > 1
    rows.sort(key=lambda rc: (_condition_sort_key(_params(rc[1])), _strategy_sort_key(str(_params(rc[1]).get("strategy"))),
                              rc[0].index))
    hidden = rows[MAX_PERCENTILE_ROWS:]
    rows = rows[:MAX_PERCENTILE_ROWS]
    fig = _new_figure(16, 1.6 + 0.3 * len(rows))
    axes = fig.subplots(1, len(SERVING_LATENCY_METRICS), sharey=True, squeeze=False)[0]
    # What every row has in common goes into the title; a row says what tells it apart.
    parts = [serving_condition_label(_params(c)).split(" · ") for _, c in rows]
    common = [x for x in parts[0] if all(x in p for p in parts[1:])] if len(rows) > 1 else []
    labels = [mpl_text(" · ".join([strategy_label(_params(c))] + [x for x in p if x not in common])
                       + (f" [{r.index + 1}]" if multi else "")) for (r, c), p in zip(rows, parts)]
    labels = [t if len(t) <= 140 else t[:139] + "…" for t in labels]
    lo, hi = math.inf, 0.0
    for ax, (metric, desc) in zip(axes, SERVING_LATENCY_METRICS):
        for i, (r, c) in enumerate(rows):
            d = distribution(c, metric)
            if d is None:
                continue
            vals = [(k, d.values[k] * 1e6) for k in rf.DISTRIBUTION_STATISTICS if d.values.get(k, 0) > 0]
            if not vals:
                continue
            ax.plot([v for _, v in vals], [i] * len(vals), color="#bbbbbb", linewidth=1, zorder=1)
            for k, v in vals:
                ax.plot([v], [i], linestyle="none", marker=PERCENTILE_MARKERS[k], color=PERCENTILE_COLORS[k],
                        markersize=5.5, zorder=3, label=k if i == 0 else None)
            lo, hi = min(lo, min(v for _, v in vals)), max(hi, max(v for _, v in vals))
        ax.set_title(desc, fontsize=10)
        ax.set_xlabel("latency (µs, log scale)")
        ax.grid(True, axis="x", which="major", alpha=0.3)
    for ax in axes:
        if hi > 0 and lo < math.inf:
            ax.set_xscale("log")
            ax.set_xlim(lo / 1.6, hi * 1.6)
            ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _p: f"{v:g}"))
    axes[0].set_yticks(range(len(rows)))
    axes[0].set_yticklabels(labels, fontsize=7)
    axes[0].set_ylim(len(rows) - 0.5, -0.5)
    handles = [Line2D([0], [0], linestyle="none", marker=PERCENTILE_MARKERS[k], color=PERCENTILE_COLORS[k])
               for k in rf.DISTRIBUTION_STATISTICS]
    axes[-1].legend(handles, list(rf.DISTRIBUTION_STATISTICS), loc="upper left", bbox_to_anchor=(1.02, 1.0),
                    fontsize=8.5, title="statistic", title_fontsize=9)
    fig.suptitle(mpl_text(f"{title}" + (f" ({' · '.join(common)})" if common else "")
                          + f"\n{_title_suffix(results)}"), fontsize=11)
    footnote = ["exact p50, p90, p99, p99.9 and max over every request of every repetition"]
    if hidden:
        footnote.append(f"… and {len(hidden)} more cases not shown (the HTML table lists every case)")
    _finish(fig, _result_entries(results, styled=False), footnote + _not_ok_summary(other) + _incomplete_notes(results))
    return PlotOutput(name, title, fig)


# Traces a result names (`timeline` of a case: a Chrome trace, overlap always, others with
# `run --timeline`), drawn as Gantt charts with timeline.py.

MAX_GANTT_PER_RESULT = 40


def _load_timeline_module() -> Any:
    name = "pathbench_report_timeline"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, _HERE / "timeline.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up here
    spec.loader.exec_module(module)
    return module


@dataclass
class TraceRef:
    result: LoadedResult
    case: dict[str, Any]
    recorded: str          # the path as the result records it
    path: Path | None      # where it was found, None when nowhere
    png_name: str          # the Gantt chart's file name in the output directory


def resolve_trace(result: LoadedResult, recorded: str) -> Path | None:
    """Where a case's trace is: the recorded path (relative to the current directory, as pathbench
    wrote it, or to the result's folder), else beside the result in <result>.timelines/ or its
    folder by file name (a result copied with its traces)."""
    p = Path(recorded)
    candidates = [p] if p.is_absolute() else [p, result.path.parent / p]
    candidates += [result.path.with_name(result.path.name + ".timelines") / p.name, result.path.parent / p.name]
    for c in candidates:
        try:
            if c.is_file():
                return c
        except OSError:
            continue
    return None


def _safe_name(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9.-]", "_", text)[:150]


def trace_refs(results: Sequence[LoadedResult]) -> list[TraceRef]:
    refs = []
    for r in results:
        n = 0
        for c in r.cases:
            recorded = c.get("timeline")
            if not isinstance(recorded, str) or not recorded:
                continue
            n += 1
            if n > MAX_GANTT_PER_RESULT:
                continue
            stem = Path(recorded).name.removesuffix(".json").removesuffix(".trace")
            prefix = f"r{r.index + 1}_" if len(results) > 1 else ""
            refs.append(TraceRef(r, c, recorded, resolve_trace(r, recorded), f"gantt_{prefix}{_safe_name(stem)}.png"))
    return refs


def plot_gantt(ref: TraceRef) -> PlotOutput:
    title = f"Timeline of {ref.case.get('id')}"
    if ref.path is None:
        return PlotOutput(ref.png_name, title, None, f"trace {rf.printable(ref.recorded)} not found (looked beside "
                          f"{rf.printable(str(ref.result.path))} and in its .timelines folder)")
    timeline = _load_timeline_module()
    try:
        chart = timeline.chart_of(ref.path, str(ref.case.get("id")))
    except InputError as e:
        return PlotOutput(ref.png_name, title, None, f"trace cannot be drawn: {rf.printable(str(e))}")
    return PlotOutput(ref.png_name, title, timeline.draw(chart))


# The family each plot draws (html.py leaves out the notes of plots whose family no result has).
PLOT_FAMILIES = {"bandwidth_h2d.png": "copy", "bandwidth_d2h.png": "copy", "bandwidth_d2d.png": "copy",
                 "latency.png": "copy", "pin_cost.png": "copy", "host_memory.png": "host_memory",
                 "overlap.png": "overlap", "small_copies.png": "small_copies", "unified_memory.png": "unified_memory",
                 "peer_bandwidth.png": "peer", "peer_latency.png": "peer"}
FAMILY_PLOTS = ("overlap.png", "small_copies.png", "unified_memory.png", "peer_bandwidth.png", "peer_latency.png")


def _describe_axes(ax: Axes) -> dict[str, Any]:
    legend = ax.get_legend()
    return {"title": ax.get_title(), "xlabel": ax.get_xlabel(), "ylabel": ax.get_ylabel(),
            "xscale": ax.get_xscale(), "yscale": ax.get_yscale(),
            "lines": len(ax.get_lines()), "patches": len(ax.patches), "images": len(ax.images),
            "collections": len(ax.collections),
            "xticklabels": [t.get_text() for t in ax.get_xticklabels()],
            "yticklabels": [t.get_text() for t in ax.get_yticklabels()],
            "texts": [t.get_text() for t in ax.texts],
            "legend": [t.get_text() for t in legend.get_texts()] if legend is not None else []}


def _handle_style(h: Any) -> list[Any] | None:
    """[linestyle, marker, fillstyle, colour] of a legend handle drawn as a line, else None."""
    if hasattr(h, "lines") and h.lines:  # an errorbar container
        h = h.lines[0]
    if not isinstance(h, Line2D):
        return None
    return [str(h.get_linestyle()), str(h.get_marker()), str(h.get_fillstyle()), mcolors.to_hex(h.get_color())]


def describe(plot: PlotOutput) -> dict[str, Any]:
    """What a figure holds, for --describe: its axes (titles, labels, scales, how many lines, bars
    and images, tick labels, texts, legends) and the figure's own title and legends."""
    out: dict[str, Any] = {"name": plot.name, "title": plot.title, "drawn": plot.figure is not None, "note": plot.note}
    fig = plot.figure
    if fig is None:
        return out
    axes = [ax for ax in fig.get_axes() if ax.get_label() != "<colorbar>"]
    suptitle = getattr(fig, "_suptitle", None)
    sub_titles = [getattr(sf, "_suptitle", None) for sf in getattr(fig, "subfigs", [])]
    out.update({"suptitle": suptitle.get_text() if suptitle is not None else "",
                "subfigure_titles": [t.get_text() for t in sub_titles if t is not None],
                "axes": [_describe_axes(ax) for ax in axes],
                "legends": [t.get_text() for lg in fig.legends for t in lg.get_texts()],
                "legend_styles": [_handle_style(h) for lg in fig.legends for h in lg.legend_handles]})
    return out


SERVING_PLOTS = ("serving_latency.png", "serving_head_of_line.png", "serving_pool.png",
                 "serving_percentiles.png")


# What matplotlib raises for values it cannot lay out or draw. The inputs are checked and
# bounded (PLOT_LIMIT), so these mean a value combination nobody foresaw: that one figure is left
# out with a note rather than losing the others or printing a traceback.
DRAW_ERRORS = (ValueError, ArithmeticError, RuntimeError)


def _safely(name: str, title: str, make: Callable[[], PlotOutput]) -> PlotOutput:
    try:
        return make()
    except DRAW_ERRORS as e:
        return PlotOutput(name, title, None, f"cannot be drawn from these values ({type(e).__name__}: {e})")


def build_plots(results: Sequence[LoadedResult], compare: LoadedCompare | None = None) -> list[PlotOutput]:
    """Every plot, in report order; figure is None (with a note) where the inputs hold no data for it."""
    _load_matplotlib()
    for i, r in enumerate(results):
        r.index = i
    out = [_safely(f"bandwidth_{d}.png", f"{d.upper()} copy bandwidth", functools.partial(plot_bandwidth, results, d))
           for d in ("h2d", "d2h", "d2d")]
    out += [_safely("latency.png", "Copy latency", lambda: plot_latency(results)),
            _safely("pin_cost.png", "Cost of pinning host memory", lambda: plot_pin_cost(results)),
            _safely("host_memory.png", "Host memory", lambda: plot_host_memory(results))]
    if serving_cases(results):  # only then: a copy sweep gets no notes about serving plots
        out += [_safely("serving_latency.png", "Serving latency percentiles", lambda: plot_serving_latency(results)),
                _safely("serving_head_of_line.png", "Serving head-of-line blocking",
                        lambda: plot_serving_head_of_line(results)),
                _safely("serving_pool.png", "Serving pinned pool", lambda: plot_serving_pool(results)),
                _safely("serving_percentiles.png", "Serving percentiles per case",
                        lambda: plot_serving_percentiles(results))]
    families = {c.get("family") for r in results for c in r.cases}
    # A family's plot only when some result has that family: a copy sweep gets no notes about them.
    for fam, plots in (("overlap", (("overlap.png", "Overlap", plot_overlap),)),
                       ("small_copies", (("small_copies.png", "Small copies", plot_small_copies),)),
                       ("unified_memory", (("unified_memory.png", "Unified memory", plot_unified_memory),)),
                       ("peer", (("peer_bandwidth.png", "Peer bandwidth", plot_peer_bandwidth),
                                 ("peer_latency.png", "Peer latency", plot_peer_latency)))):
        if fam in families:
            out += [_safely(name, title, functools.partial(make, results)) for name, title, make in plots]
    out += [_safely(ref.png_name, f"Timeline of {ref.case.get('id')}", functools.partial(plot_gantt, ref))
            for ref in trace_refs(results)]
    if compare is not None:
        out.append(_safely("compare.png", "Change of the headline metric", lambda: plot_compare(compare, results)))
    return out


def png_bytes(fig: Figure) -> bytes:
    _load_matplotlib()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=DPI, facecolor="white")
    return buf.getvalue()


def render(plot: PlotOutput) -> bytes | None:
    """The PNG of a plot, or None with plot.note saying why (drawing happens here, in savefig)."""
    if plot.figure is None:
        return None
    try:
        return png_bytes(plot.figure)
    except DRAW_ERRORS as e:
        plot.figure = None
        plot.note = f"cannot be drawn from these values ({type(e).__name__}: {e})"
        return None


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
