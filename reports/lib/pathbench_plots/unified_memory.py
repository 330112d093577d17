"""unified_memory.png: time, time per MiB, GPU fault groups and bytes migrated (um_counters) per
method (family `unified_memory`).
"""
from __future__ import annotations

from collections import OrderedDict
from typing import Any, Sequence

from .common import (LoadedResult, Value, _contributing, _is_number, _not_ok_summary, _ordered, _params, _plottable,
                     _result_series, _select, _stats, _value, _why_not, format_bytes, mpl_text)
from .figure import PlotOutput, _finish, _incomplete_notes, _new_figure, _series_bars, _title_suffix


UM_METHOD_ORDER = ["fault", "prefetch", "advise_preferred_gpu", "advise_accessed_by", "gpu_to_cpu"]


def um_counts(case: dict[str, Any]) -> dict[str, Any] | None:
    """The um_counters check's value ({gpu_fault_groups: [...], bytes_h2d: [...], ..., complete}), if any."""
    for ch in case.get("checks") or []:
        if isinstance(ch, dict) and ch.get("name") == "um_counters" and isinstance(ch.get("value"), dict):
            return ch["value"]
    return None


def _median_list(values: Any) -> Value | None:
    nums = sorted(v for v in values if _plottable(v)) if isinstance(values, list) else []
    if not nums:
        return None
    n = len(nums)
    med = nums[n // 2] if n % 2 else (nums[n // 2 - 1] + nums[n // 2]) / 2
    return Value(med, nums[0], nums[-1])


def plot_unified_memory(results: Sequence[LoadedResult]) -> PlotOutput:
    name = "unified_memory.png"
    title = "Unified memory: fault-driven migration vs prefetch vs advice"
    ok, other = _select(results, lambda c: c.get("family") == "unified_memory")
    ok = [(r, c) for r, c in ok if _stats(c, "time") is not None]
    if not ok:
        return PlotOutput(name, title, None, f"no ok unified_memory cases{_why_not(other)}")
    results = _contributing(results, ok)
    sizes = {_params(c).get("bytes") for _, c in ok}

    def category(c: dict[str, Any]) -> str:
        p = _params(c)
        label = str(p.get("method")).replace("advise_", "advise\n")
        if _is_number(p.get("stride")):
            label += f"\nstride {format_bytes(p['stride'])}"
        if len(sizes) > 1 and _is_number(p.get("bytes")):
            label += f"\n{format_bytes(p['bytes'])}"
        return label

    def sort_key(rc: tuple[LoadedResult, dict[str, Any]]) -> tuple[Any, ...]:
        p = _params(rc[1])
        return (_ordered(str(p.get("method")), UM_METHOD_ORDER), p.get("stride") if _is_number(p.get("stride")) else 0,
                p.get("bytes") if _is_number(p.get("bytes")) else 0, rc[0].index)

    ok.sort(key=sort_key)
    categories = list(OrderedDict.fromkeys(category(c) for _, c in ok))
    names, colors = _result_series(results)
    panels: list[tuple[str, str, dict[tuple[str, str], Value], bool]] = [
        ("time", "time per pass (ms, log), median; bars p10–p90", {}, True),
        ("time_per_mib", "time per MiB migrated (µs/MiB, log)", {}, True),
        ("gpu_fault_groups", "fault groups per sample (median; min–max)", {}, False),
        ("migrated", "MiB migrated per sample (median; min–max)", {}, False),
    ]
    incomplete = 0
    for r, c in ok:
        key = (category(c), names[r.index])
        counts = um_counts(c)
        lossy = isinstance(counts, dict) and counts.get("complete") is False
        incomplete += 1 if lossy else 0
        hatch = "///" if lossy else None
        for metric, _label, vals, _log in panels:
            v: Value | None
            if metric == "time":
                v = _value(c, "time", 1e3)
            elif metric == "time_per_mib":
                v = _value(c, "time_per_mib", 1e6)
            elif counts is None:
                v = None
            elif metric == "gpu_fault_groups":
                v = _median_list(counts.get("gpu_fault_groups"))
                if v is not None:
                    v.text = f"{v.median:g}"
            else:
                # GPU-to-GPU cases (a pair) count bytes_d2d besides H2D and D2H.
                columns = [counts.get(k) for k in ("bytes_h2d", "bytes_d2h", "bytes_d2d") if k in counts]
                total = [sum(row) for row in zip(*columns) if all(_plottable(x) for x in row)] \
                    if len(columns) >= 2 and all(isinstance(c, list) for c in columns) else []
                v = _median_list([x / (1 << 20) for x in total])
            if v is None or (_log and v.median <= 0):
                continue
            v.hatch = hatch if metric in ("gpu_fault_groups", "migrated") else None
            vals[key] = v
    present = [p for p in panels if p[2]]
    series = [names[r.index] for r in results if any(k[1] == names[r.index] for p in present for k in p[2])]
    fig = _new_figure(max(12.0, 2.0 + 1.1 * len(categories) * max(1, len(series))), 7.6)
    axes = fig.subplots(2, 2).flatten()
    for ax, (metric, label, vals, log) in zip(axes, panels):
        if not vals:
            ax.text(0.5, 0.5, "no counts in these results (um_counters)", transform=ax.transAxes, ha="center",
                    va="center", color="#555555")
            ax.set_axis_off()
            continue
        _series_bars(ax, categories, series, vals, colors, log=log, label_size=7)
        ax.set_ylabel(mpl_text(label), fontsize=8)
        ax.set_title({"time": "time per pass (lower is better)", "time_per_mib": "time per MiB migrated (lower is better)",
                      "gpu_fault_groups": "GPU page-fault groups (CUPTI um_counters)",
                      "migrated": "bytes migrated, H2D + D2H (+ D2D between GPUs; CUPTI um_counters)"}[metric], fontsize=10)
        for t in ax.get_xticklabels():
            t.set_fontsize(7.5)
    if len(series) > 1:
        axes[0].legend(fontsize=8, loc="upper left", framealpha=0.9)
    sizes_text = ", ".join(format_bytes(s) for s in sorted(s for s in sizes if _is_number(s)))
    fig.suptitle(mpl_text(f"{title}\nmanaged buffer {sizes_text} — {_title_suffix(results)}"), fontsize=11)
    footnote = []
    if incomplete:
        footnote.append(f"hatched: counts INCOMPLETE in {incomplete} case(s) (CUPTI lost records, um_counters "
                        "complete = false): lower bounds")
    _finish(fig, [], footnote + _not_ok_summary(other) + _incomplete_notes(results))
    return PlotOutput(name, title, fig)
