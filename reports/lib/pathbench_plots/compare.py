"""compare.png (with --compare): per-case change of the headline metric, worst first
(symmetric-log beyond ±25 %, clipped beyond ±1000 %); the verdict colours and order html.py shares.
"""
from __future__ import annotations

from collections import Counter
from typing import Any, Sequence

from . import mpl
from .common import LoadedCompare, LoadedResult, _finite, _plottable, mpl_text, short_case_id
from .figure import PlotOutput, _finish, _incomplete_notes, _new_figure


MAX_COMPARE_ROWS = 60
# compare.png's x axis: linear up to this span (in %), symmetric-log beyond with the linear part
# ±linthresh (the largest threshold, within these bounds), and bars clipped beyond COMPARE_CLIP %.
COMPARE_LINEAR_SPAN = 25.0
COMPARE_MIN_LINTHRESH = 5.0
COMPARE_MAX_LINTHRESH = 20.0
COMPARE_CLIP = 1000.0


VERDICT_COLORS: dict[str, str] = {
    "regression": "#d62728",
    "failed": "#7b0000",
    "missing": "#8c564b",
    "noise": "#f0a30a",
    "pass": "#4c78a8",
    "improvement": "#2ca02c",
    "new": "#17becf",
    "skipped": "#9e9e9e",
    "across": "#9467bd",
    "insufficient": "#8c564b",
    "flaky": "#bcbd22",
    "unstable": "#b0b0b0",
}
# Worst first.
VERDICT_RANK: dict[str, int] = {
    "failed": 0, "regression": 1, "missing": 2, "insufficient": 2, "flaky": 3, "noise": 3,
    "unstable": 4, "across": 4, "new": 5, "pass": 6, "improvement": 7, "skipped": 8,
}


def headline_metric(case: dict[str, Any]) -> dict[str, Any] | None:
    """The metric a compare row is shown by: the first one whose verdict decided the case, else the first."""
    metrics = [m for m in (case.get("metrics") or []) if isinstance(m, dict)]
    if not metrics:
        return None
    verdict = case.get("verdict")
    for m in metrics:
        if m.get("verdict") == verdict and _finite(m.get("change_pct")):
            return m
    for m in metrics:
        if _finite(m.get("change_pct")):
            return m
    return metrics[0]


def badness(case: dict[str, Any]) -> float:
    """How far the headline moved in the bad direction, in percent (larger is worse)."""
    m = headline_metric(case)
    if m is None or not _finite(m.get("change_pct")):
        return 0.0
    change = float(m["change_pct"])
    return -change if m.get("better", "higher") == "higher" else change


def compare_sort_key(case: dict[str, Any]) -> tuple[int, float, str]:
    return (VERDICT_RANK.get(str(case.get("verdict")), 5), -badness(case), str(case.get("id")))


def plot_compare(compare: LoadedCompare, results: Sequence[LoadedResult] = ()) -> PlotOutput:
    name = "compare.png"
    data = compare.data
    mode = str(data.get("mode") or "gate")
    title = "Change of the headline metric: result vs baseline" + (" (across node types)" if mode == "across" else "")
    rows: list[tuple[dict[str, Any], dict[str, Any]]] = []
    not_plotted: Counter[str] = Counter()
    for case in data.get("cases") or []:
        m = headline_metric(case)
        if m is None or not _plottable(m.get("change_pct")):
            not_plotted[str(case.get("verdict"))] += 1
            continue
        rows.append((case, m))
    if not rows:
        return PlotOutput(name, title, None, "the comparison holds no case with a change to plot"
                          + (f" ({', '.join(f'{n} {v}' for v, n in not_plotted.items())})" if not_plotted else ""))
    rows.sort(key=lambda cm: compare_sort_key(cm[0]))
    hidden = rows[MAX_COMPARE_ROWS:]
    rows = rows[:MAX_COMPARE_ROWS]
    footnote: list[str] = []
    if hidden:
        footnote.append(f"… and {len(hidden)} more rows not shown ("
                        + ", ".join(f"{n} {v}" for v, n in Counter(str(c.get('verdict')) for c, _ in hidden).items())
                        + ")")
    if not_plotted:
        footnote.append("no change to plot: " + ", ".join(f"{n} {v}" for v, n in sorted(not_plotted.items())))
    base = data.get("baseline") or {}
    res = data.get("result") or {}
    incomparable = data.get("incomparable")
    if isinstance(incomparable, list) and incomparable:
        footnote.append("incomparable: " + "; ".join(str(d) for d in incomparable))
    footnote.append(f"baseline: {base.get('node_type', '?')} · {base.get('hostname', '?')} · "
                    f"{base.get('start_time', '?')}   result: {res.get('node_type', '?')} · "
                    f"{res.get('hostname', '?')} · {res.get('start_time', '?')}")
    alpha = data.get("alpha")
    any_p = any(_finite(m.get("p_value")) for _, m in rows)
    explain = []
    if any_p:
        explain.append("p: two-sample test p-value" + (f" (significant below alpha = {alpha:g})" if _finite(alpha) else ""))

    fig = _new_figure(12, 2.0 + 0.32 * len(rows))
    ax = fig.add_subplot()
    changes = [float(m["change_pct"]) for _, m in rows]
    thresholds = [float(m["threshold_pct"]) if _plottable(m.get("threshold_pct")) else None for _, m in rows]
    default_t = data.get("default_threshold")
    # Readable for small changes: beyond ±COMPARE_LINEAR_SPAN the axis is symmetric-log (linear
    # within ±linthresh, where the noise bands are), and beyond ±COMPARE_CLIP % the bars are clipped
    # at the edge with their value written out; a -100 % next to a few +3 % no longer squashes them.
    span = max([abs(c) for c in changes] + [t for t in thresholds if t is not None] + [1.0])
    symlog = span > COMPARE_LINEAR_SPAN
    clip = COMPARE_CLIP if span > COMPARE_CLIP else None
    any_clipped = False
    labels = []
    band_labelled = False
    verdicts_seen: list[str] = []
    for i, ((case, m), change, t) in enumerate(zip(rows, changes, thresholds)):
        verdict = str(case.get("verdict"))
        color = VERDICT_COLORS.get(verdict, "#7f7f7f")
        if t is None and _plottable(default_t) and mode != "across":
            t = float(default_t) * 100.0
        if t is not None and t > 0:
            ax.fill_betweenx([i - 0.48, i + 0.48], -t, t, color="#bbbbbb", alpha=0.35, linewidth=0,
                             label="noise band ±threshold" if not band_labelled else None)
            band_labelled = True
        drawn = change if clip is None else max(-clip, min(clip, change))
        clipped = drawn != change
        any_clipped = any_clipped or clipped
        ax.barh(i, drawn, height=0.62, color=color, label=mpl_text(verdict) if verdict not in verdicts_seen else None,
                hatch="///" if clipped else None, edgecolor="white" if clipped else None)
        if verdict not in verdicts_seen:
            verdicts_seen.append(verdict)
        p = m.get("p_value")
        note = f"{change:+.1f} %" + (" (clipped)" if clipped else "")
        if mode == "across" and _finite(m.get("ratio")):
            note += f"  ×{float(m['ratio']):.3g}"
        if _finite(p):
            note += f"  p={p:.2g}"
        elif any_p or mode != "across":
            note += "  p=n/a"
        ax.text(drawn, i, f"  {note}  ", va="center",
                ha="left" if change >= 0 else "right", fontsize=8, fontweight="bold" if clipped else None)
        arrow = "↑" if m.get("better", "higher") == "higher" else "↓"
        labels.append(mpl_text(f"{short_case_id(str(case.get('id')))} · {m.get('metric_label') or m.get('name')} ({arrow} better)"))
    ax.axvline(0, color="#333333", linewidth=0.8)
    ax.set_yticks(range(len(rows)))
    ax.set_yticklabels(labels, fontsize=8.5)
    ax.set_ylim(len(rows) - 0.5, -0.5)
    if symlog:
        lin = min(COMPARE_MAX_LINTHRESH, max(COMPARE_MIN_LINTHRESH, max((t or 0) for t in thresholds)))
        edge = clip if clip is not None else span
        ax.set_xscale("symlog", linthresh=lin, linscale=1.5)
        ax.set_xlim(-edge * 12, edge * 12)
        # Two ticks inside the linear part, then decades far enough apart not to collide.
        steps = [lin / 2, lin] + [10.0 ** k for k in range(1, 5) if 10.0 ** k >= 3 * lin and 10.0 ** k <= edge * 2]
        ticks = [0.0] + [sign * v for v in steps for sign in (-1, 1)]
        ax.xaxis.set_major_locator(mpl.FixedLocator(sorted(ticks)))
        ax.xaxis.set_minor_locator(mpl.FixedLocator([]))
        for label in ax.get_xticklabels():
            label.set_fontsize(8)
        explain.append(f"x axis linear within ±{lin:g} %, logarithmic beyond")
    else:
        ax.set_xlim(-span * 1.6, span * 1.6)
    if any_clipped:
        explain.append(f"hatched: changes beyond ±{clip:g} % clipped at the axis edge (value written beside)")
    ax.xaxis.set_major_formatter(mpl.FuncFormatter(lambda v, _p: f"{v:+g} %" if v else "0"))
    ax.set_xlabel("change of the median vs baseline (%), (result − baseline) / baseline")
    ax.grid(axis="x", alpha=0.3)
    ax.set_axisbelow(True)
    node = res.get("node_type") or (results[0].node_type if results else "?")
    if mode == "across" and base.get("node_type") and base.get("node_type") != node:
        node = f"{base.get('node_type')}  →  {node}"
    ax.set_title(mpl_text(f"{title}, worst first\n{node}"), fontsize=12)
    handles, hlabels = ax.get_legend_handles_labels()
    order = sorted(range(len(hlabels)), key=lambda k: VERDICT_RANK.get(hlabels[k], 20))
    ax.legend([handles[k] for k in order], [hlabels[k] for k in order], loc="upper left", bbox_to_anchor=(1.01, 1.0),
              fontsize=8.5, title="verdict", title_fontsize=9, framealpha=0.9)
    if band_labelled:
        explain.append("shaded: the noise band ±threshold of each metric")
    footnote += explain  # a line each: joined, they run off the figure
    _finish(fig, [], footnote + _incomplete_notes(results))
    return PlotOutput(name, title, fig)
