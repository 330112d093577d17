"""serving_head_of_line.png: a request's H2D p50 and p99 behind a bulk copy, against the bulk
copy size.
"""
from __future__ import annotations

import math
from collections import OrderedDict
from typing import Any, Sequence

from .common import (EXTRA_COLORS, MAX_PLOT_BYTES, LoadedResult, Point, _is_number, _not_ok_summary, _params, _select,
                     _why_not, format_number, gpu_pcie_raw_gb_per_s, mpl_text, result_fill, result_marker)
from .figure import (PlotOutput, _errorbar, _finish, _incomplete_notes, _new_figure, _size_axis, _solid_proxy,
                     _title_suffix)
from .serving import (HOL_COLORS, REFERENCE_STYLES, Distribution, _condition_key, _distribution_not_drawable,
                      _has_background, _param_text, _serving_param, _serving_result_entries, _us_axis, distribution,
                      serving_condition_label, strategy_label)


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
