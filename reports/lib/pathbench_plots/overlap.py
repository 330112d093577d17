"""overlap.png: time per iteration against the ideal (max(copy alone, kernel alone)) and the
overlap fraction, per variant (family `overlap`).
"""
from __future__ import annotations

from collections import OrderedDict
from typing import Any, Sequence

from . import mpl
from .common import (PLOT_LIMIT, LoadedResult, Value, _condition_text, _contributing, _is_number, _not_ok_summary,
                     _ordered, _params, _plottable, _result_series, _select, _stats, _value, _why_not, format_number,
                     mpl_text)
from .figure import PlotOutput, _finish, _incomplete_notes, _new_figure, _series_bars, _title_suffix


OVERLAP_VARIANT_ORDER = ["pinned_event_wait", "pinned_device_sync", "pinned_same_stream", "pageable_separate_stream"]
OVERLAP_VARIANT_LABELS = {
    "pinned_event_wait": "pinned\nevent wait",
    "pinned_device_sync": "pinned\ndevice sync",
    "pinned_same_stream": "pinned\nsame stream",
    "pageable_separate_stream": "pageable\nseparate stream",
}


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
        entries = [(mpl.Line2D([0], [0], color=colors[s], linewidth=8), s) for s in series]
    _finish(fig, entries, footnote + _not_ok_summary(other) + _incomplete_notes(results))
    return PlotOutput(name, title, fig)
