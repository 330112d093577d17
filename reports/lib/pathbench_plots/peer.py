"""The peer family's plots: peer_bandwidth.png (a source x destination GPU heatmap per method and
direction) and peer_latency.png (time per copy and round trip per method and link).
"""
from __future__ import annotations

import math
import re
from collections import OrderedDict
from typing import Any, Sequence

from . import mpl
from .common import (RESULT_STYLES, LoadedResult, Point, _bytes, _color_for, _contributing, _not_ok_summary, _ordered,
                     _params, _select, _stats, _why_not, format_bytes, mpl_text, result_fill, result_marker,
                     result_names, result_style)
from .figure import (PlotOutput, _errorbar, _finish, _incomplete_notes, _log_value_axis, _new_figure, _result_entries,
                     _size_axis, _title_suffix)


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
    norm = mpl.mcolors.LogNorm(vmin=max(vmax / 1000, min(v for p in panels.values() for v in p.values() if v > 0)),
                           vmax=vmax) if vmax > 0 else None
    cmap = mpl.matplotlib.colormaps["viridis"]
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
        bar.ax.yaxis.set_major_locator(mpl.LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
        bar.ax.yaxis.set_major_formatter(mpl.FuncFormatter(lambda v, _pos: f"{v:g}"))
        bar.ax.yaxis.set_minor_formatter(mpl.NullFormatter())
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
