"""The page's overview sections: header, incomplete-run banner, the results table (several
files), summary (with the comparison's counts) and the context.
"""
from __future__ import annotations

from collections import Counter, OrderedDict
from typing import Any, Sequence

import pathbench_result_file as rf
from pathbench_plots.common import result_names
from pathbench_plots.compare import VERDICT_COLORS
from .page import STATUS_ORDER, esc, render_value


def section_header(result: Any) -> str:
    ctx = result.context
    files = ", ".join(str(f.get("path")) for f in ctx.get("scenario_files") or [] if isinstance(f, dict))
    end = ctx.get("end_time") or ("not finished" if not result.complete else "?")
    meta = [f"host <b>{esc(result.hostname)}</b>",
            f"{esc(result.start_time)} → {esc(end)}",
            f"pathbench {esc(ctx.get('tool_version') or '?')} ({esc(ctx.get('git_sha') or '?')})"]
    if files:
        meta.append(f"scenarios: {esc(files)}")
    if ctx.get("driver_version"):
        meta.append(f"driver {esc(rf.text_of(ctx['driver_version']))}")
    return (f'<header class="top"><div class="inner"><h1>pathbench report</h1>'
            f'<div class="node">{esc(result.node_type)}</div>'
            f'<div class="meta">{" · ".join(meta)}</div></div></header>')


def section_incomplete(result: Any) -> str:
    """A banner above everything for a run that did not finish: its cases are only the ones that
    did, and a reader must not take the page for a whole run."""
    if result.complete:
        return ""
    return (f'<div class="incomplete" id="incomplete"><b>Incomplete run</b>: {esc(result.incomplete_reason)}. '
            f"This page shows the cases that finished ({len(result.cases)}); the cases the run had not reached "
            "are missing, and no conclusion about them can be drawn from it.</div>")


def section_context_several(results: Sequence[Any]) -> str:
    keys: OrderedDict[str, None] = OrderedDict()
    for r in results:
        for k in r.context:
            keys.setdefault(k, None)
    head = "".join(f"<th>{esc(file_label(r, results))}</th>" for r in results)
    rows = []
    for key in keys:
        cells = "".join(f"<td>{render_value(key, r.context[key])}</td>" if key in r.context
                        else '<td class="muted">—</td>' for r in results)
        rows.append(f"<tr><th>{esc(key)}</th>{cells}</tr>")
    return ('<section id="context"><h2>Context</h2>'
            '<p class="muted small">Every field of <code>context</code> in each file.</p>'
            f'<div class="scroll"><table class="kv"><thead><tr><th></th>{head}</tr></thead>'
            f'<tbody>{"".join(rows)}</tbody></table></div></section>')


def file_label(result: Any, results: Sequence[Any]) -> str:
    """How the page names a result: "[2] b.json (host)", as the plots' legends do."""
    names = result_names(results)
    return f"[{result.index + 1}] {names[result.index]}" if len(results) > 1 else names[result.index]


def section_results(results: Sequence[Any]) -> str:
    rows = []
    for r in results:
        counts = Counter(str(c.get("status")) for c in r.cases)
        end = r.context.get("end_time") or "not finished"
        rows.append(f'<tr><td class="num">[{r.index + 1}]</td><td><code>{esc(r.path)}</code></td>'
                    f"<td>{esc(r.node_type)}</td><td>{esc(r.hostname)}</td>"
                    f"<td>{esc(r.start_time)} → {esc(end)}</td><td class=\"num\">{len(r.cases)}</td>"
                    + "".join(f'<td class="num">{counts.get(st, 0)}</td>' for st in STATUS_ORDER)
                    + f"<td>{'yes' if r.complete else '<b>INCOMPLETE</b>'}</td></tr>")
    return ('<section id="results"><h2>Results</h2>'
            '<p class="muted small">The files on this page; plots and tables name them by number.</p>'
            '<table><thead><tr><th class="num">#</th><th>file</th><th>node type</th><th>host</th><th>run</th>'
            '<th class="num">cases</th>' + "".join(f'<th class="num">{st}</th>' for st in STATUS_ORDER)
            + f"<th>complete</th></tr></thead><tbody>{''.join(rows)}</tbody></table></section>")


def section_context(result: Any) -> str:
    ctx = result.context
    rows = []
    for key, value in ctx.items():
        if key == "warnings" and value and isinstance(value, list):
            cell = "<ul>" + "".join(f"<li>{esc(w)}</li>" for w in value) + "</ul>"
        else:
            cell = render_value(key, value)
        rows.append(f"<tr><th>{esc(key)}</th><td>{cell}</td></tr>")
    return ('<section id="context"><h2>Context</h2>'
            f'<p class="muted small">Every field of <code>context</code> in {esc(result.path.name)}.</p>'
            f'<table class="kv"><tbody>{"".join(rows)}</tbody></table></section>')


def section_summary(result: Any, compare: Any | None, results: Sequence[Any] = ()) -> str:
    if len(results) > 1:
        parts = ['<section id="summary"><h2>Summary</h2>']
        for r in results:
            parts.append(f'<h3 id="summary-{r.index + 1}">{esc(file_label(r, results))}</h3>')
            parts.append(_summary_body(r))
        parts.append(_compare_summary(compare) if compare is not None else "")
        parts.append("</section>")
        return "".join(parts)
    return ('<section id="summary"><h2>Summary</h2>' + _summary_body(result)
            + (_compare_summary(compare) if compare is not None else "") + "</section>")


def _summary_body(result: Any) -> str:
    cases = result.cases
    counts = Counter(str(c.get("status")) for c in cases)
    cards = "".join(f'<div class="card {s}"><div class="n">{counts.get(s, 0)}</div><div class="l">{s}</div></div>'
                    for s in STATUS_ORDER)
    cards = f'<div class="card"><div class="n">{len(cases)}</div><div class="l">cases</div></div>' + cards
    fams: OrderedDict[str, Counter[str]] = OrderedDict()
    for c in cases:
        fams.setdefault(str(c.get("family") or c["id"].split("/")[0]), Counter())[str(c.get("status"))] += 1
    fam_rows = "".join(f"<tr><td>{esc(f)}</td>" + "".join(f'<td class="num">{n.get(s, 0)}</td>' for s in STATUS_ORDER)
                       + "</tr>" for f, n in fams.items())
    parts = [f'<div class="cards">{cards}</div>']
    failed = [c for c in cases if c.get("status") == "failed"]
    if failed:
        items = "".join(f"<li><code>{esc(c['id'])}</code>: {esc(c.get('reason') or 'no reason given')}</li>"
                        for c in failed)
        parts.append(f'<div class="callout bad"><b>{len(failed)} case(s) failed</b><ul>{items}</ul></div>')
    no_cuda = result.context.get("cuda_unavailable_reason")
    if no_cuda:
        parts.append(f'<div class="callout"><b>No usable GPU</b>: {esc(rf.text_of(no_cuda))}</div>')
    warnings = result.context.get("warnings")
    if warnings and isinstance(warnings, list):
        parts.append('<div class="callout"><b>Warnings</b><ul>' + "".join(f"<li>{esc(w)}</li>" for w in warnings)
                     + "</ul></div>")
    if cases:
        parts.append('<table style="width:auto"><thead><tr><th>family</th>'
                     + "".join(f'<th class="num">{s}</th>' for s in STATUS_ORDER)
                     + f"</tr></thead><tbody>{fam_rows}</tbody></table>")
    return "".join(parts)


def _compare_summary(compare: Any) -> str:
    parts = []
    if compare is not None:
        summary = compare.data.get("summary") or {}
        if not summary:
            summary = Counter(str(c.get("verdict")) for c in compare.cases)
        vcards = "".join(
            f'<div class="card"><div class="n" style="color:{VERDICT_COLORS.get(str(k), "#555")}">'
            f'{esc(v)}</div><div class="l">{esc(k)}</div></div>' for k, v in summary.items())
        exit_code = compare.data.get("exit_code")
        cls = "good" if exit_code == 0 else "bad"
        parts.append(f'<h3>Comparison</h3><div class="cards">{vcards}</div>')
        if exit_code is not None:
            parts.append(f'<div class="callout {cls}">pathbench compare exit code <b>{esc(exit_code)}</b>'
                         f' ({esc(_exit_meaning(exit_code))}); see <a href="#verdicts">verdicts</a>.</div>')
    return "".join(parts)


def _exit_meaning(code: Any) -> str:
    return {0: "pass", 1: "a regression or a failed case", 2: "incomplete or incomparable",
            3: "bad input or usage"}.get(code, "unknown")


def section_header_several(results: Sequence[Any]) -> str:
    types = list(OrderedDict.fromkeys(r.node_type for r in results))
    names = result_names(results)
    return (f'<header class="top"><div class="inner"><h1>pathbench report: {len(results)} results</h1>'
            f'<div class="node">{esc("  vs  ".join(types) if len(types) <= 3 else f"{len(types)} node types")}</div>'
            f'<div class="meta">{esc(" · ".join(f"[{r.index + 1}] {names[r.index]}" for r in results))}</div>'
            "</div></header>")
