"""With --compare: what changed between the baseline and the result, the verdicts (worst first)
and the bandwidth floors.
"""
from __future__ import annotations

from typing import Any, Sequence

from pathbench_plots.common import _finite, format_value
from pathbench_plots.compare import VERDICT_COLORS, compare_sort_key, headline_metric
from .page import esc, esc_id, floor_badge, fmt_num, verdict_badge


def _identity_row(label: str, ident: dict[str, Any]) -> str:
    cells = "".join(f"<td>{esc(ident.get(k) if ident.get(k) is not None else '')}</td>"
                    for k in ("file", "node_type", "hostname", "start_time", "topology_fingerprint"))
    return f"<tr><th>{esc(label)}</th>{cells}</tr>"


def section_changes(data: dict[str, Any]) -> str:
    """What changed in the node's context (first, as in every compare output), noise, and the
    metrics this node type cannot gate."""
    parts: list[str] = []
    changes = [c for c in data.get("changes") or [] if isinstance(c, dict)]
    if changes:
        parts.append('<div class="callout"><b>What changed since the baseline</b><ul>'
                     + "".join(f"<li>{esc(c.get('text') or c.get('field'))}</li>" for c in changes)
                     + "</ul></div>")
    elif "changes" in data:
        parts.append('<div class="callout good">What changed since the baseline: nothing in the '
                     "node's context.</div>")
    noise = [str(n) for n in data.get("noise") or []]
    if noise:
        judged = bool(data.get("allow_noisy"))
        parts.append(f'<div class="callout {"" if judged else "bad"}"><b>Taken under noise</b>'
                     + (" (judged anyway: --allow-noisy)" if judged else
                        " — incomparable (exit 2) unless --allow-noisy")
                     + "<ul>" + "".join(f"<li>{esc(n)}</li>" for n in noise) + "</ul></div>")
    unstable = [u for u in data.get("not_gateable") or [] if isinstance(u, dict)]
    if unstable:
        rows = "".join(
            f'<tr><td class="id">{esc_id(u.get("id"))}</td><td>{esc(u.get("metric_label") or u.get("metric"))}</td>'
            f'<td>{esc(u.get("timing_class"))}</td><td class="num">{fmt_num(u.get("spread_pct"), ".3g")} %</td>'
            f'<td class="num">{fmt_num(u.get("threshold_pct"), "g")} %</td>'
            f'<td class="num">{esc(u.get("n_runs"))}</td></tr>' for u in unstable)
        parts.append("<h3>Not gateable on this node type</h3><p class=\"small\">The baseline's run medians "
                     "spread wider than the threshold: reported, never failing.</p>"
                     "<table class=\"small\"><thead><tr><th>id</th><th>metric</th><th>timed by</th>"
                     "<th class=\"num\">between-run spread</th><th class=\"num\">threshold</th>"
                     f"<th class=\"num\">runs</th></tr></thead><tbody>{rows}</tbody></table>")
    return "".join(parts)


def section_verdicts(compare: Any, result: Any) -> str:
    data = compare.data
    mode = str(data.get("mode") or "gate")
    base = data.get("baseline") or {}
    res = data.get("result") or {}
    parts = ['<section id="verdicts"><h2>Comparison verdicts</h2>',
             f'<p class="small">{esc(compare.path.name)} · mode <b>{esc(mode)}</b> · alpha '
             f"{fmt_num(data.get('alpha'), 'g')} · default threshold "
             f"{fmt_num((data.get('default_threshold') or 0) * 100 if _finite(data.get('default_threshold')) else None, 'g')} %"
             "</p>",
             '<table class="small"><thead><tr><th></th><th>file</th><th>node type</th><th>host</th><th>start time</th>'
             "<th>topology fingerprint</th></tr></thead><tbody>",
             _identity_row("baseline", base) if base else "", _identity_row("result", res) if res else "",
             "</tbody></table>"]
    parts.append(section_changes(data))
    incomparable = data.get("incomparable")
    if isinstance(incomparable, list) and incomparable:
        parts.append('<div class="callout bad"><b>Incomparable</b>: the results cannot be gated against each other'
                     "<ul>" + "".join(f"<li>{esc(d)}</li>" for d in incomparable) + "</ul></div>")
    elif isinstance(incomparable, str) and incomparable:
        parts.append(f'<div class="callout bad"><b>Incomparable</b>: {esc(incomparable)}</div>')
    ctx = result.context
    if res and (res.get("start_time") != ctx.get("start_time") or res.get("hostname") != ctx.get("hostname")):
        parts.append(f'<div class="callout">The comparison\'s result ({esc(res.get("hostname"))}, '
                     f'{esc(res.get("start_time"))}) is not the result this page shows ({esc(ctx.get("hostname"))}, '
                     f'{esc(ctx.get("start_time"))}).</div>')
    across = mode == "across"
    head = ("<tr><th>id</th><th>verdict</th><th>metric</th><th class=\"num\">baseline<br>median</th>"
            "<th class=\"num\">result<br>median</th><th class=\"num\">change</th>"
            + ("<th class=\"num\">ratio</th>" if across else "<th class=\"num\">thresh&shy;old</th>")
            + "<th class=\"num\">p</th><th class=\"num\">n<br>base/res</th><th>reason</th></tr>")
    rows = []
    for case in sorted(compare.cases, key=compare_sort_key):
        verdict = str(case.get("verdict"))
        m = headline_metric(case) or {}
        unit = str(m.get("unit") or "")
        better = m.get("better")
        # "h2d_latency (p99)" when the gate judged a statistic of the distribution.
        metric = esc(m.get("metric_label") or m.get("name") or "")
        if better:
            metric += f' <span class="muted" title="{esc(better)} is better">{"↑" if better == "higher" else "↓"}</span>'
        change = m.get("change_pct")
        change_html = esc(f"{change:+.2f} %") if _finite(change) else '<span class="muted">n/a</span>'
        if _finite(change) and verdict in ("regression", "improvement"):
            change_html = f'<b style="color:{VERDICT_COLORS[verdict]}">{change_html}</b>'
        extra = (fmt_num(m.get("ratio"), ".4g") if across else
                 (esc(f"±{m['threshold_pct']:g} %") if _finite(m.get("threshold_pct")) else '<span class="muted">n/a</span>'))
        nb, nr = m.get("n_baseline"), m.get("n_result")
        reason = str(case.get("reason") or m.get("reason") or "")
        others = [om for om in case.get("metrics") or [] if isinstance(om, dict) and om is not m]
        if others:
            reason_extra = "; ".join(
                f"{om.get('metric_label') or om.get('name')} {om.get('verdict', '')} "
                + (f"{om['change_pct']:+.1f} %" if _finite(om.get("change_pct")) else "") for om in others)
            reason_html = esc(reason) + f'<div class="secondary">{esc(reason_extra)}</div>'
        else:
            reason_html = esc(reason)
        label = str(m.get("label") or "") if m else ""
        label_html = f'<div class="small">{esc(label)}</div>' if label and label != verdict else ""
        rows.append(f'<tr><td class="id">{esc_id(case.get("id"))}</td><td>{verdict_badge(verdict)}{label_html}</td>'
                    f"<td>{metric}</td>"
                    f'<td class="num">{esc(format_value(m.get("baseline_median"), unit)) if m else ""}</td>'
                    f'<td class="num">{esc(format_value(m.get("result_median"), unit)) if m else ""}</td>'
                    f'<td class="num">{change_html if m else ""}</td><td class="num">{extra if m else ""}</td>'
                    f'<td class="num">{fmt_num(m.get("p_value"), ".2g") if m else ""}</td>'
                    f'<td class="num">{esc(nb if nb is not None else "–")}/{esc(nr if nr is not None else "–")}</td>'
                    f'<td class="small reason">{reason_html}</td></tr>')
    parts.append('<p class="muted small">Worst first. change = (result − baseline) / baseline of the median; '
                 "whether that is bad depends on the metric's direction (↑ higher is better, ↓ lower is better). "
                 "p: p-value of the two-sample test; n: samples in baseline/result.</p>")
    parts.append(f'<div class="scroll"><table><thead>{head}</thead><tbody>{"".join(rows)}</tbody></table></div></section>')
    return "".join(parts)


def section_floors(compare: Any) -> str:
    floors = [f for f in compare.data.get("floors") or [] if isinstance(f, dict)]
    parts = ['<section id="floors"><h2>Bandwidth floors</h2>']
    if not floors:
        parts.append('<p class="muted">The comparison holds no floor checks.</p></section>')
        return "".join(parts)
    rows = []
    order = {"nvlink_at_pcie_speed": 0, "below_floor": 0, "link_degraded": 1, "unknown_link": 2, "pass": 3}
    for f in sorted(floors, key=lambda f: (order.get(str(f.get("verdict")), 2), str(f.get("id")))):
        frac = f.get("fraction")
        frac_html = esc(f"{100 * frac:.1f} %") if _finite(frac) and frac is not None else "n/a"
        rows.append(f'<tr><td class="id">{esc_id(f.get("id") or "")}</td><td class="num">{esc(f.get("gpu", ""))}</td>'
                    f'<td>{floor_badge(str(f.get("verdict")))}</td>'
                    f'<td class="num">{fmt_num(f.get("measured_gb_per_s"), ".4g")}</td>'
                    f'<td class="num">{fmt_num(f.get("floor_gb_per_s"), ".4g")}</td>'
                    f'<td class="num">{fmt_num(f.get("link_raw_gb_per_s"), ".4g")}</td>'
                    f'<td class="num">{frac_html}</td>'
                    f'<td class="small">{esc(f.get("detail") or "")}</td></tr>')
    parts.append('<table><thead><tr><th>id</th><th class="num">GPU</th><th>verdict</th>'
                 '<th class="num">measured (GB/s)</th><th class="num">floor (GB/s)</th>'
                 '<th class="num">link raw (GB/s)</th><th class="num">of raw</th><th>detail</th></tr></thead>'
                 f'<tbody>{"".join(rows)}</tbody></table></section>')
    return "".join(parts)


def _compared_result(results: Sequence[Any], compare: Any) -> Any:
    """The result a comparison is about (its hostname and start time), else the first."""
    res = compare.data.get("result") or {}
    for r in results:
        if res.get("start_time") == r.context.get("start_time") and res.get("hostname") == r.context.get("hostname"):
            return r
    return results[0]
