"""small_copies.png: time per batch, API calls per batch and issuing CPU time per method (family
`small_copies`).
"""
from __future__ import annotations

from collections import OrderedDict
from typing import Any, Sequence

from .common import (LoadedResult, _color_for, _contributing, _is_number, _not_ok_summary, _ordered, _params, _select,
                     _stats, _value, _why_not, format_bytes, format_number, mpl_text, result_names)
from .figure import PlotOutput, _finish, _incomplete_notes, _lighten, _new_figure, _series_bars, _title_suffix


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
