"""serving_latency.png (per-request latency against the percentile on a "nines" axis, one line
per strategy, a panel per request size and arrival mode) and serving_percentiles.png (p50 … max of
every serving case, a row each).
"""
from __future__ import annotations

import math
from collections import OrderedDict
from typing import Any, Sequence

import pathbench_result_file as rf

from . import mpl
from .common import (LoadedResult, _contributing, _not_ok_summary, _params, _select, _why_not, mpl_text, result_fill,
                     result_style)
from .figure import PlotOutput, _finish, _incomplete_notes, _new_figure, _result_entries, _title_suffix
from .serving import (MAX_SERVING_CONDITIONS, SERVING_LATENCY_METRICS, STRATEGY_VARIANT_PARAMS, _condition_key,
                      _condition_sort_key, _distribution_not_drawable, _has_background, _nines, _nines_axis,
                      _param_text, _percentile_curve, _series_colors, _serving_result_entries, _strategy_sort_key,
                      _us_axis, distribution, serving_condition_label, strategy_label)


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
        handles = [mpl.Line2D([0], [0], color=styles[v][0], marker=styles[v][1], markeredgecolor="white",
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
            ax.xaxis.set_major_formatter(mpl.FuncFormatter(lambda v, _p: f"{v:g}"))
    axes[0].set_yticks(range(len(rows)))
    axes[0].set_yticklabels(labels, fontsize=7)
    axes[0].set_ylim(len(rows) - 0.5, -0.5)
    handles = [mpl.Line2D([0], [0], linestyle="none", marker=PERCENTILE_MARKERS[k], color=PERCENTILE_COLORS[k])
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
