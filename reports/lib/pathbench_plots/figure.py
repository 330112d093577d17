"""The shared drawing helpers: figure setup, titles and footnotes, size and value axes, error bars
and grouped bars, legend entries for several results, PlotOutput, --describe and rendering to PNG.
"""
from __future__ import annotations

import io
import math
from collections import OrderedDict
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Sequence

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

from . import mpl
from .common import (LoadedResult, Point, Value, format_bytes, format_number, mpl_text, result_fill, result_marker,
                     result_names, result_style)


DPI = 110


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
    mpl.load()
    fig = mpl.Figure(figsize=(width, height), dpi=DPI)
    fig.set_layout_engine("constrained")
    return fig


def _finish(fig: Figure, entries: Sequence[tuple[Any, str]], footnote: Sequence[str]) -> None:
    """One legend under the plot: `entries` (handle or None, label), then the footnote lines in grey."""
    if not entries and not footnote:
        return
    blank = mpl.Line2D([], [], linestyle="none")
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
    ax.xaxis.set_major_locator(mpl.FixedLocator([2.0 ** e for e in exps]))
    ax.xaxis.set_major_formatter(mpl.FuncFormatter(lambda v, _pos: format_bytes(v)))
    ax.xaxis.set_minor_locator(mpl.FixedLocator([2.0 ** e for e in range(lo, hi + 1)]))
    ax.xaxis.set_minor_formatter(mpl.NullFormatter())
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
    ax.yaxis.set_major_locator(mpl.LogLocator(base=10, subs=subs))
    ax.yaxis.set_major_formatter(mpl.FuncFormatter(lambda v, _pos: f"{v:g}"))
    ax.yaxis.set_minor_formatter(mpl.NullFormatter())


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
    return [(mpl.Line2D([0], [0], color="#333333", linestyle=result_style(r.index),
                    marker=result_marker(r.index) if own_markers else "o",
                    fillstyle=result_fill(r.index), markersize=6)
             if styled else None, f"[{r.index + 1}] {names[r.index]}") for r in results]


def _solid_proxy(handle: Any) -> Any:
    """A legend proxy: an errorbar series' colour and marker on a plain solid line."""
    if not hasattr(handle, "lines"):
        return handle
    line = handle.lines[0]
    return mpl.Line2D([0], [0], color=line.get_color(), marker=line.get_marker(), linestyle="-",
                  markerfacecolor=line.get_markerfacecolor(), markersize=line.get_markersize(),
                  linewidth=line.get_linewidth())


def _lighten(color: str, fraction: float) -> str:
    rgb = mpl.mcolors.to_rgb(color)
    return mpl.mcolors.to_hex(tuple(c + (1 - c) * fraction for c in rgb))


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
        ax.yaxis.set_major_formatter(mpl.FuncFormatter(lambda v, _pos: f"{v:g}"))
    else:
        ax.set_ylim(0, top * (1.35 if width < 0.2 else 1.18) if top > 0 else 1.0)
    ax.grid(axis="y", alpha=0.3)
    ax.set_axisbelow(True)
    return xs


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
    if not isinstance(h, mpl.Line2D):
        return None
    return [str(h.get_linestyle()), str(h.get_marker()), str(h.get_fillstyle()), mpl.mcolors.to_hex(h.get_color())]


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


# What matplotlib raises for values it cannot lay out or draw. The inputs are checked and
# bounded (PLOT_LIMIT), so these mean a value combination nobody foresaw: that one figure is left
# out with a note rather than losing the others or printing a traceback.
DRAW_ERRORS = (ValueError, ArithmeticError, RuntimeError)


def _safely(name: str, title: str, make: Callable[[], PlotOutput]) -> PlotOutput:
    try:
        return make()
    except DRAW_ERRORS as e:
        return PlotOutput(name, title, None, f"cannot be drawn from these values ({type(e).__name__}: {e})")


def png_bytes(fig: Figure) -> bytes:
    mpl.load()
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
