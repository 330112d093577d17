"""The cases table: id, status, headline median, p10-p90, cv, n and reason (a column per file
when there are several results).
"""
from __future__ import annotations

from collections import OrderedDict
from typing import Any, Sequence

from pathbench_plots.common import _finite, format_value
from .overview import file_label
from .page import badge, esc, esc_id


def _headline(case: dict[str, Any]) -> tuple[str, dict[str, Any]] | None:
    metrics = case.get("metrics") or {}
    for name, m in metrics.items():
        if isinstance(m, dict):
            return str(name), m
    return None


def _headline_cell(c: dict[str, Any]) -> str:
    head = _headline(c)
    status = str(c.get("status"))
    if status != "ok" or head is None:
        return f'{badge(status)} <span class="small muted">{esc(c.get("reason") or "")}</span>'
    name, m = head
    stats = m.get("stats") or {}
    if not _finite(stats.get("median")) or stats.get("n") == 0:
        return badge(status)
    cell = f"{esc(name)}: <b>{esc(format_value(stats['median'], str(m.get('unit') or '')))}</b>"
    if _finite(stats.get("p10")) and _finite(stats.get("p90")):
        unit = str(m.get("unit") or "")
        cell += (f'<div class="secondary">{esc(format_value(stats["p10"], unit))} – '
                 f'{esc(format_value(stats["p90"], unit))}</div>')
    return cell


def section_cases_several(results: Sequence[Any]) -> str:
    """One row per case id (in the order the files give them), a column per file."""
    ids: OrderedDict[str, None] = OrderedDict()
    by_file: list[dict[str, dict[str, Any]]] = []
    for r in results:
        cases = {}
        for c in r.cases:
            ids.setdefault(c["id"], None)
            cases[c["id"]] = c
        by_file.append(cases)
    head = "".join(f"<th>{esc(file_label(r, results))}</th>" for r in results)
    rows = []
    for cid in ids:
        cells = "".join(f'<td class="headline">{_headline_cell(f[cid])}</td>' if cid in f
                        else '<td class="muted small">not in this file</td>' for f in by_file)
        rows.append(f'<tr><td class="id">{esc_id(cid)}</td>{cells}</tr>')
    return ('<section id="cases"><h2>Cases</h2>'
            '<p class="muted small">Headline metric (the first one) median with p10–p90 per file.</p>'
            f'<div class="scroll"><table><thead><tr><th>id</th>{head}</tr></thead>'
            f"<tbody>{''.join(rows)}</tbody></table></div></section>")


def section_cases(result: Any) -> str:
    rows = []
    for c in result.cases:
        status = str(c.get("status"))
        head = _headline(c)
        median = p1090 = cv = n = ""
        secondary = ""
        if head is not None:
            name, m = head
            unit = str(m.get("unit") or "")
            stats = m.get("stats") or {}
            if stats.get("n") == 0:
                stats = {"n": 0}  # no samples: the writer's zeros are no measurement
            if _finite(stats.get("median")):
                median = f"{esc(name)}: <b>{esc(format_value(stats['median'], unit))}</b>"
            if _finite(stats.get("p10")) and _finite(stats.get("p90")):
                p1090 = esc(f"{format_value(stats['p10'], unit)} – {format_value(stats['p90'], unit)}")
            if _finite(stats.get("cv")):
                cv = esc(f"{100 * stats['cv']:.2f} %")
            if stats.get("n") is not None:
                n = esc(stats["n"])
            others = []
            for oname, om in list((c.get("metrics") or {}).items())[1:]:
                ostats = om.get("stats") or {} if isinstance(om, dict) else {}
                if _finite(ostats.get("median")) and ostats.get("n") != 0:
                    others.append(f"{oname} {format_value(ostats['median'], str(om.get('unit') or ''))}")
            if others:
                secondary = f'<div class="secondary">{esc("; ".join(others))}</div>'
        reason = str(c.get("reason") or "")
        failed_checks = [ch for ch in c.get("checks") or [] if isinstance(ch, dict) and ch.get("passed") is False]
        reason_html = esc(reason)
        if failed_checks:
            reason_html += "<ul class=\"small\">" + "".join(
                f"<li>check <b>{esc(ch.get('name'))}</b> failed: {esc(ch.get('detail') or '')}</li>"
                for ch in failed_checks) + "</ul>"
        timing = c.get("timing_method")
        rows.append(f'<tr class="row-{esc(status)}"><td class="id">{esc_id(c["id"])}</td><td>{badge(status)}</td>'
                    f'<td class="headline">{median}{secondary}</td>'
                    f"<td class=\"num\">{p1090}</td><td class=\"num\">{cv}</td>"
                    f'<td class="num">{n}</td><td class="small">{esc(timing) if timing else ""}</td>'
                    f'<td class="small">{reason_html}</td></tr>')
    return ('<section id="cases"><h2>Cases</h2>'
            '<p class="muted small">Headline metric (the first one) median with p10–p90, coefficient of variation '
            "and number of samples; other metrics' medians below it in grey.</p>"
            '<div class="scroll"><table><thead><tr><th>id</th><th>status</th><th>headline median</th>'
            '<th class="num">p10 – p90</th>'
            '<th class="num">cv</th><th class="num">n</th><th>timing</th><th>reason</th></tr></thead>'
            f"<tbody>{''.join(rows)}</tbody></table></div></section>")
