"""host_memory.png: host memcpy bandwidth per (CPU node, memory node, page) and the first-touch
and mlock cost (family `host_memory`).
"""
from __future__ import annotations

from collections import Counter, OrderedDict
from typing import Any, Sequence

from . import mpl
from .common import (PAGE_COLORS, LoadedResult, _bytes, _color_for, _not_ok_summary, _page_sort_key, _params, _point,
                     _select, _stats, _why_not, format_bytes, format_number, format_value, mpl_text)
from .figure import (Bar, PlotOutput, _finish, _grouped_bars, _incomplete_notes, _new_figure, _result_entries,
                     _title_suffix)


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
                rgb = mpl.mcolors.to_rgb(out[s])
                f = 0.45 * (idx % 3) / 2
                out[s] = mpl.mcolors.to_hex((rgb[0] + (1 - rgb[0]) * f, rgb[1] + (1 - rgb[1]) * f, rgb[2] + (1 - rgb[2]) * f))
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
