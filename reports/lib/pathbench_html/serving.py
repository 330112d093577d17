"""Serving / tail latency: the serving plots and, per case, p50/p90/p99/p99.9/max of the H2D copy
and of the whole request (µs), the throughput and the pinned pool's fallbacks and high-water.
"""
from __future__ import annotations

from typing import Any, Sequence

import pathbench_result_file as rf
from pathbench_plots.common import _finite, _params, _stats, format_bytes, format_number, format_value
from pathbench_plots.serving import SERVING_LATENCY_METRICS, distribution, serving_condition_label, strategy_label
from pathbench_plots.serving_pool import _pool_bound
from .figures import _figures
from .overview import file_label
from .page import badge, esc


SERVING_COLUMNS = 14


def _us(v: float) -> str:
    return esc(format_number(v * 1e6))


def _serving_latency_cells(case: dict[str, Any], metric: str) -> str:
    """The cells of one latency metric: p50 .. max and mean in µs (p99 with its range over the
    repetitions, what a p99 gate judges), and the number of operations."""
    d = distribution(case, metric)
    if d is None:
        m = (case.get("metrics") or {}).get(metric)
        stats = m.get("stats") if isinstance(m, dict) else None
        median = (f"; median of the repetitions {esc(format_value(stats['median'], 's'))}"
                  if isinstance(stats, dict) and _finite(stats.get("median")) and stats.get("n") else "")
        return (f'<td colspan="7" class="muted small sep">no per-operation distribution{median}</td>')
    cells = []
    for k in rf.DISTRIBUTION_STATISTICS:
        text = _us(d.values[k])
        if k == "p99":
            reps = d.per_repetition[k]
            text += (f'<span class="rep" title="p99 of each repetition: lowest – highest">'
                     f"{_us(min(reps))} – {_us(max(reps))}</span>")
        cells.append(f'<td class="num{" sep" if k == "p50" else ""}">{text}</td>')
    cells.append(f'<td class="num">{_us(d.values["mean"])}</td>')
    cells.append(f'<td class="num">{esc(f"{d.operations:,}")}</td>')
    return "".join(cells)


def _median_of(case: dict[str, Any], metric: str) -> float | None:
    s = _stats(case, metric)
    return float(s["median"]) if s is not None and s.get("n") else None


def _serving_pool_cells(case: dict[str, Any]) -> str:
    """Throughput, pageable fallbacks (share of the copies issued) and the pool's high-water."""
    cells = []
    tp = _median_of(case, "throughput")
    cells.append(f'<td class="num sep">{esc(format_number(tp)) if tp is not None else "—"}</td>')
    fallbacks = _median_of(case, "pageable_fallbacks")
    copies = _median_of(case, "copies_issued")
    if fallbacks is None:
        cells.append('<td class="num muted">—</td>')
    else:
        share = (f' <span class="muted">({100 * fallbacks / copies:.2g} %)</span>' if copies else "")
        cells.append(f'<td class="num">{esc(format_number(fallbacks))}{share}</td>')
    high = _median_of(case, "pool_high_water")
    if high is None:
        cells.append('<td class="num muted">—</td>')
    else:
        bound = _pool_bound(case)
        of = f' <span class="muted">of {esc(format_bytes(bound))}</span>' if bound else ""
        cells.append(f'<td class="num">{esc(format_bytes(high))}{of}</td>')
    return "".join(cells)


def section_serving(results: Sequence[Any], plots: Sequence[Any]) -> str:
    """The serving cases: their plots, and per case the latency percentiles of each request's H2D
    copy and of the whole request, the throughput and what the pool did (a table per result).
    Empty without serving cases."""
    with_serving = [r for r in results if any(c.get("family") == "serving" for c in r.cases)]
    if not with_serving:
        return ""
    parts = ['<section id="serving"><h2>Serving / tail latency</h2>',
             '<p class="muted small">Per-request latency over every request of every repetition (exact '
             "percentiles; the plots draw the histogram). <i>H2D</i>: from the request's arrival to its input "
             "copy's completion; <i>request</i>: to the end of the whole request (step and response). Under p99, "
             "in grey: the lowest and highest p99 of the repetitions, what a gate on p99 judges. "
             "Throughput is requests per second (median of the repetitions); fallbacks are the pool's copies "
             "that found no free pinned slot and went pageable, per repetition (share of the copies issued); "
             "high-water the most pinned bytes the pool had in use, of its bound.</p>"]
    parts += _figures(plots)
    for result in with_serving:
        if len(results) > 1:
            parts.append(f"<h3>{esc(file_label(result, results))}</h3>")
        parts.append(_serving_table([c for c in result.cases if c.get("family") == "serving"]))
    parts.append("</section>")
    return "".join(parts)


def _serving_table(cases: Sequence[dict[str, Any]]) -> str:
    parts: list[str] = []
    head = ('<tr><th>case</th><th>status</th><th>latency</th>'
            + "".join(f'<th class="num{" sep" if k == "p50" else ""}">{esc(k)}<br>(µs)</th>'
                      for k in rf.DISTRIBUTION_STATISTICS)
            + '<th class="num">mean<br>(µs)</th><th class="num">requests</th>'
            '<th class="num sep">throughput<br>(req/s)</th><th class="num">pageable<br>fallbacks</th>'
            '<th class="num">pool<br>high-water</th></tr>')
    rows = []
    scenario = None
    metrics = [m for m, _ in SERVING_LATENCY_METRICS]
    labels = {"h2d_latency": "H2D", "request_latency": "request"}
    for c in cases:
        if c.get("scenario") != scenario:
            scenario = c.get("scenario")
            rows.append(f'<tr class="group"><th colspan="{SERVING_COLUMNS}">{esc(scenario)}</th></tr>')
        status = str(c.get("status"))
        params = _params(c)
        # The case in words (its id is in the Cases table, and here in the tooltip).
        ident = (f'<td class="case"{{span}} title="{esc(c["id"])}"><b>{esc(strategy_label(params))}</b>'
                 f'<div class="small">{esc(serving_condition_label(params))}</div></td>'
                 f"<td{{span}}>{badge(status)}</td>")
        present = [m for m in metrics if m in (c.get("metrics") or {})]
        if status != "ok" or not present:
            reason = esc(c.get("reason") or ("no latency metrics" if status == "ok" else ""))
            rows.append(f'<tr class="row-{esc(status)}">{ident.format(span="")}'
                        f'<td colspan="{SERVING_COLUMNS - 2}" class="small">{reason}</td></tr>')
            continue
        span = f' rowspan="{len(present)}"' if len(present) > 1 else ""
        for i, m in enumerate(present):
            first = ident.format(span=span) if i == 0 else ""
            pool = _serving_pool_cells(c).replace("<td ", f"<td{span} ") if i == 0 else ""
            rows.append(f'<tr class="row-ok">{first}<td>{esc(labels.get(m, m))}</td>'
                        f"{_serving_latency_cells(c, m)}{pool}</tr>")
    parts.append(f'<div class="scroll"><table class="serving"><thead>{head}</thead>'
                 f'<tbody>{"".join(rows)}</tbody></table></div>')
    return "".join(parts)
