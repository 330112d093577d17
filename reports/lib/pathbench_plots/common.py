"""What every family's plots read: the inputs, the shared colours and result styles, number
formatting, the PCIe link-rate fallback table, label escaping and the selection of a family's cases.

Nothing here imports matplotlib (html.py uses these helpers for its tables).
"""
from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable, Sequence, TypeGuard

import pathbench_result_file as rf


RESULT_SCHEMA = "pathbench.result/v1"
COMPARE_SCHEMA = "pathbench.compare/v1"


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


# --------------------------------------------------------------------------------------------
# Input


# A result is read by pathbench itself (lib/pathbench_result_file.py runs `pathbench export
# --json-lines`); what it accepts, the plots draw or say why they cannot.
if TYPE_CHECKING:
    from pathbench_result_file import InputError, Result as LoadedResult
else:
    InputError = rf.InputError
    LoadedResult = rf.Result


def load_result(path: Path | str) -> LoadedResult:
    """Reads a pathbench.result/v1 file; InputError where pathbench refuses it."""
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


def _plottable(v: Any) -> TypeGuard[int | float]:
    return _finite(v) and abs(v) <= PLOT_LIMIT


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


# --------------------------------------------------------------------------------------------
# One value per bar of the per-method plots (overlap, small_copies, unified_memory, peer,
# serving percentiles)


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


def _ordered(value: str, order: Sequence[str]) -> tuple[int, str]:
    return (order.index(value) if value in order else len(order), value)


def _contributing(results: Sequence[LoadedResult], drawn: Sequence[tuple[LoadedResult, dict[str, Any]]]) \
        -> list[LoadedResult]:
    """The results that have a case in the figure: titles, legends and "[n]" marks name only those
    (a family's plot from five files of which one has that family is that file's plot)."""
    indexes = {r.index for r, _ in drawn}
    return [r for r in results if r.index in indexes]
