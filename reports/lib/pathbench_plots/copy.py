"""The copy family's plots: bandwidth_<direction>.png (bandwidth against transfer size per host
memory kind), latency.png (time per copy and round trip) and pin_cost.png (cudaMallocHost /
cudaHostRegister cost per GiB).
"""
from __future__ import annotations

import re
from collections import OrderedDict
from typing import Any, Sequence

from . import mpl
from .common import (DIRECTION_ORDER, KIND_COLORS, KIND_MARKERS, LoadedResult, Point, _bytes, _color_for, _is_number,
                     _kind_sort_key, _not_ok_summary, _params, _point, _select, _why_not, format_bytes, format_number,
                     gpu_pcie_raw_gb_per_s, mpl_text, result_fill, result_marker, result_style)
from .figure import (Bar, PlotOutput, _errorbar, _finish, _grouped_bars, _incomplete_notes, _log_value_axis,
                     _new_figure, _result_entries, _size_axis, _solid_proxy, _title_suffix)


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
    blues = mpl.matplotlib.colormaps["Blues"]
    colors = {s: mpl.mcolors.to_hex(blues(0.65 if len(sizes) == 1 else 0.4 + 0.5 * i / (len(sizes) - 1)))
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
