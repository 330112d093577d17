"""Serving: per-request latency distributions (family `serving`; metrics that carry a
"distribution", read by the rules of stats/operation_distribution.cpp). What the serving plots
share: the strategies' colours and order, the distributions, the panel and line labels (html.py's
serving tables use them too) and the "nines" axis.
"""
from __future__ import annotations

import json
import math
from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Sequence

if TYPE_CHECKING:
    from matplotlib.axes import Axes

import pathbench_result_file as rf

from . import mpl
from .common import (MAX_PLOT_BYTES, PLOT_LIMIT, RESULT_MARKERS, LoadedResult, _color_for, _finite, _is_number, _params,
                     format_bytes, format_number, result_fill, result_marker, result_names, result_style)
from .figure import _lighten, _log_value_axis


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


def _serving_result_entries(results: Sequence[LoadedResult], marker: bool = False) -> list[tuple[Any, str]]:
    """Legend entries for several results: line style (or marker) and file name."""
    if len(results) < 2:
        return []
    names = result_names(results)
    return [(mpl.Line2D([0], [0], color="#333333", linestyle="none" if marker else result_style(r.index),
                    marker=result_marker(r.index) if marker else "o", fillstyle=result_fill(r.index),
                    markersize=6),
             f"[{r.index + 1}] {names[r.index]}") for r in results]


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
