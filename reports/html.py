#!/usr/bin/env python3
"""Build one self-contained HTML page from a pathbench result (and optionally a comparison).

    html.py RESULT [RESULT...] [--compare COMPARE_JSON] --out FILE.html

The page has no external resources: the plots (from plot.py, used as a module) are embedded as
data: URIs and the CSS is inline, so the file can be attached to a ticket or a CI artifact as is.
Sections: header (node type, host, time), context (every field; GPUs as a sub-table), summary
(ok/skipped/failed), plots, cases (id, status, headline median, p10-p90, cv, n, reason) and, with
--compare, the verdicts (worst first) and the bandwidth floors. A result with `serving` cases also
gets "Serving / tail latency": the serving plots and, per case, p50/p90/p99/p99.9/max of the H2D
copy and of the whole request (µs), the throughput and the pinned pool's fallbacks and high-water.
A run that did not finish (`"complete": false`, or an older file without an end time) gets a
banner at the top: its cases are the finished ones only.
Several results: one page for all of them; a "Results" table names each file ([1], [2] … as in the
plots' legends), the summary, serving tables and context are per file, and the cases table has a
column per file. "Timelines": every case that names a trace (`timeline`: overlap always, other
families with `run --timeline`) gets a link to the trace file (relative to the page, so keep them
side by side; the trace is looked up as plot.py does: as recorded, beside the result, in
<result>.timelines/) and its Gantt chart (timeline.py), embedded; a trace that is missing or
unreadable is listed with the reason.
Inputs are read by the rules of the C++ reader (lib/pathbench_result_file.py); the page is written atomically,
and a directory, FIFO or device at FILE.html is refused, never replaced.
Exit codes: 0 written, 3 bad input or usage (the message names the file and the JSON pointer),
1 an unexpected error.
"""
from __future__ import annotations

import sys
from pathlib import Path

# This file is named html.py: with its directory on sys.path, `import html` would import this
# file instead of the standard library's package. Drop the directory before importing anything.
_HERE = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != _HERE]

import argparse  # noqa: E402
import base64  # noqa: E402
import datetime  # noqa: E402
import html  # noqa: E402
import importlib.util  # noqa: E402
import os  # noqa: E402
import urllib.parse  # noqa: E402
import warnings  # noqa: E402
from collections import Counter, OrderedDict  # noqa: E402
from types import ModuleType  # noqa: E402
from typing import Any, Iterable, Sequence  # noqa: E402

PROG = "html.py"


def _load_plot_module() -> ModuleType:
    spec = importlib.util.spec_from_file_location("pathbench_report_plot", _HERE / "plot.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up here
    spec.loader.exec_module(module)
    return module


plot = _load_plot_module()
rf = plot.rf  # the one result_file module plot.py loaded: its InputError is the one raised

CSS = """
:root { --fg: #1d2330; --muted: #5f6b7a; --line: #d9dee5; --head: #f3f5f8; --ok: #2ca02c; --skip: #8a8f98;
        --fail: #c62828; --warn: #b26a00; }
* { box-sizing: border-box; }
body { font: 14px/1.45 -apple-system, "Segoe UI", "DejaVu Sans", Helvetica, Arial, sans-serif; color: var(--fg);
       margin: 0; background: #fff; }
main { max-width: 1240px; margin: 0 auto; padding: 16px 24px 48px; }
header.top { background: #1d2330; color: #fff; padding: 18px 24px; }
header.top .inner { max-width: 1240px; margin: 0 auto; }
header.top h1 { margin: 0 0 4px; font-size: 22px; font-weight: 600; }
header.top .node { font-size: 17px; color: #cfe3ff; }
header.top .meta { color: #b8c2d0; font-size: 13px; margin-top: 4px; }
nav { position: sticky; top: 0; background: #fff; border-bottom: 1px solid var(--line); padding: 6px 24px;
      z-index: 2; }
nav a { margin-right: 16px; color: #2a5db0; text-decoration: none; font-size: 13px; }
h2 { font-size: 18px; margin: 28px 0 10px; padding-bottom: 4px; border-bottom: 2px solid var(--line); }
h3 { font-size: 15px; margin: 18px 0 8px; }
table { border-collapse: collapse; width: 100%; margin: 6px 0 14px; font-size: 13px; }
th, td { border: 1px solid var(--line); padding: 4px 8px; text-align: left; vertical-align: top; }
th { background: var(--head); font-weight: 600; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
td.id { font-family: "DejaVu Sans Mono", Menlo, Consolas, monospace; font-size: 12px; min-width: 250px; }
.scroll { overflow-x: auto; }
td.reason { min-width: 180px; }
td.case { min-width: 230px; }
td.headline { min-width: 170px; }
table.kv > tbody > tr > th { width: 220px; white-space: nowrap; }
table.sub { margin: 0; font-size: 12px; width: auto; }
table.sub th, table.sub td { padding: 2px 6px; }
.muted { color: var(--muted); }
.small { font-size: 12px; }
.badge { display: inline-block; padding: 1px 8px; border-radius: 10px; color: #fff; font-size: 12px;
         font-weight: 600; white-space: nowrap; }
.status-ok { background: var(--ok); } .status-skipped { background: var(--skip); }
.status-failed { background: var(--fail); }
tr.row-failed td { background: #fff3f3; } tr.row-skipped td { color: var(--muted); }
.cards { display: flex; flex-wrap: wrap; gap: 12px; margin: 8px 0 12px; }
.card { border: 1px solid var(--line); border-radius: 8px; padding: 8px 16px; min-width: 120px; }
.card .n { font-size: 26px; font-weight: 700; } .card .l { color: var(--muted); font-size: 12px; }
.card.ok .n { color: var(--ok); } .card.skipped .n { color: var(--skip); } .card.failed .n { color: var(--fail); }
.callout { border-left: 4px solid var(--warn); background: #fff8e6; padding: 8px 12px; margin: 8px 0; }
.callout.bad { border-color: var(--fail); background: #fff3f3; }
.callout.good { border-color: var(--ok); background: #f1faf1; }
.incomplete { border: 2px solid var(--fail); background: #fff3f3; color: #7b0000; padding: 10px 14px;
              margin: 14px 0; font-size: 15px; }
figure { margin: 14px 0 24px; }
figure img { max-width: 100%; height: auto; border: 1px solid var(--line); }
figcaption { color: var(--muted); font-size: 12px; margin-top: 4px; }
ul.notes { color: var(--muted); font-size: 13px; }
.secondary { color: var(--muted); font-size: 12px; }
tr.group th { background: #e8edf5; font-size: 12px; }
td.sep, th.sep { border-left: 2px solid #b8c2d0; }
.rep { display: block; color: var(--muted); font-size: 11px; }
footer { color: var(--muted); font-size: 12px; margin-top: 36px; border-top: 1px solid var(--line); padding-top: 8px; }
"""

STATUS_ORDER = ("ok", "skipped", "failed")


def esc(value: Any) -> str:
    return html.escape(rf.printable(str(value)), quote=True)


def esc_id(case_id: Any) -> str:
    """A case id, escaped, with line-break opportunities after each '/'."""
    return esc(case_id).replace("/", "/<wbr>")


# --------------------------------------------------------------------------------------------
# Value rendering


def _int_ranges(values: Sequence[int]) -> str:
    """[0,1,2,3,8,9] -> '0–3, 8–9'."""
    vals = sorted(set(values))
    parts: list[str] = []
    start = prev = vals[0]
    for v in vals[1:] + [None]:  # type: ignore[list-item]
        if v is not None and v == prev + 1:
            prev = v
            continue
        parts.append(f"{start}" if start == prev else f"{start}–{prev}")
        if v is not None:
            start = prev = v
    return ", ".join(parts)


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def render_value(key: str, value: Any) -> str:
    """HTML for one context value (already escaped)."""
    if value is None:
        return '<span class="muted">—</span>'
    if isinstance(value, bool):
        return "yes" if value else "no"
    if _is_int(value):
        if key.endswith("_bytes"):
            if value >= (1 << 64) - 1:
                return f"unlimited <span class=\"muted\">({value})</span>"
            return f"{value:,} <span class=\"muted\">({esc(plot.format_bytes(value))})</span>"
        if key in ("cuda_runtime_version", "cuda_driver_version") and value >= 1000:
            return f"{value // 1000}.{(value % 1000) // 10} <span class=\"muted\">({value})</span>"
        if key.endswith("_mhz"):
            return f"{value} MHz"
        return esc(value)
    if isinstance(value, float):
        return esc(f"{value:g}")
    if isinstance(value, str):
        return esc(value) if value != "" else '<span class="muted">(empty)</span>'
    if isinstance(value, list):
        if not value:
            return '<span class="muted">none</span>'
        if all(_is_int(v) for v in value):
            return f"{esc(_int_ranges(value))} <span class=\"muted\">({len(value)})</span>"
        if all(isinstance(v, dict) for v in value):
            return render_table_of_dicts(value)
        if all(isinstance(v, str) for v in value):
            return "<br>".join(esc(v) for v in value)
        return esc(", ".join(str(v) for v in value))
    if isinstance(value, dict):
        if not value:
            return '<span class="muted">none</span>'
        rows = "".join(f"<tr><th>{esc(k)}</th><td>{render_value(str(k), v)}</td></tr>" for k, v in value.items())
        return f'<table class="sub kv"><tbody>{rows}</tbody></table>'
    return esc(value)


def render_table_of_dicts(items: Sequence[dict[str, Any]]) -> str:
    """A sub-table, one row per item; wide records (GPUs) are transposed: one column per item."""
    keys = list(OrderedDict.fromkeys(k for item in items for k in item))
    if len(keys) > 6:
        label = "index" if "index" in keys else None
        head = "".join(f"<th>{esc(label)} {render_value(label, item.get(label))}</th>" if label else "<th></th>"
                       for item in items)
        body = "".join(f"<tr><th>{esc(k)}</th>" + "".join(f"<td>{render_value(k, item.get(k))}</td>" for item in items)
                       + "</tr>" for k in keys if k != label)
        return f'<table class="sub kv"><thead><tr><th></th>{head}</tr></thead><tbody>{body}</tbody></table>'
    head = "".join(f"<th>{esc(k)}</th>" for k in keys)
    body = "".join("<tr>" + "".join(f"<td>{render_value(k, item.get(k))}</td>" for k in keys) + "</tr>"
                   for item in items)
    return f'<table class="sub"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'


def badge(status: str) -> str:
    return f'<span class="badge status-{esc(status)}">{esc(status)}</span>'


def verdict_badge(verdict: str) -> str:
    color = plot.VERDICT_COLORS.get(verdict, "#7f7f7f")
    return f'<span class="badge" style="background:{color}">{esc(verdict)}</span>'


def floor_badge(verdict: str) -> str:
    color = {"pass": "#2ca02c", "below_floor": "#d62728", "nvlink_at_pcie_speed": "#d62728",
             "link_degraded": "#b26a00"}.get(verdict, "#7f7f7f")
    return f'<span class="badge" style="background:{color}">{esc(verdict)}</span>'


def fmt_num(v: Any, digits: str = ".4g") -> str:
    if not plot._finite(v):
        return '<span class="muted">n/a</span>'
    return esc(format(v, digits))


# --------------------------------------------------------------------------------------------
# Sections


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
    names = plot.result_names(results)
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


def _href(target: Path, page: Path) -> str:
    """A link from the page to a local file: relative (no file: URL), percent-encoded."""
    try:
        rel = os.path.relpath(target.resolve(), page.resolve().parent)
    except ValueError:  # another drive (Windows): no relative path exists
        rel = str(target.resolve())
    return urllib.parse.quote(Path(rel).as_posix())


def section_timelines(results: Sequence[Any], gantts: dict[str, Any], page: Path) -> str:
    """Every case that names a trace: a link to the trace and its Gantt chart."""
    refs = plot.trace_refs(results)
    if not refs:
        return ""
    parts = ['<section id="timelines"><h2>Timelines</h2>',
             '<p class="muted small">Each case that recorded a CUPTI timeline: the Chrome trace (opens in '
             "Perfetto UI or chrome://tracing) and its Gantt chart (reports/timeline.py): a row per stream, copies "
             "and kernels coloured by kind. Links are relative to this page.</p>"]
    for ref in refs:
        owner = f" <span class=\"muted small\">{esc(file_label(ref.result, results))}</span>" if len(results) > 1 else ""
        parts.append(f'<h3 class="trace">{esc_id(ref.case.get("id"))}{owner}</h3>')
        if ref.path is None:
            parts.append(f'<p class="callout">Trace <code>{esc(ref.recorded)}</code> not found (looked as recorded, '
                         f"beside {esc(ref.result.path.name)} and in its .timelines folder).</p>")
            continue
        parts.append(f'<p class="small">trace: <a class="trace" href="{esc(_href(ref.path, page))}">'
                     f"{esc(ref.path.name)}</a></p>")
        p = gantts.get(ref.png_name)
        if p is not None:
            parts += _figures([p])
    parts.append("</section>")
    return "".join(parts)


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
            f'<div class="card"><div class="n" style="color:{plot.VERDICT_COLORS.get(str(k), "#555")}">'
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


def _figures(plots: Sequence[Any]) -> list[str]:
    """Each drawable plot as a <figure> with the PNG embedded, then a list of those not drawn and why."""
    parts = []
    notes = []
    for p in plots:
        if p.figure is None:
            notes.append(f"<li><b>{esc(p.name)}</b> not drawn: {esc(p.note)}</li>")
            continue
        png = plot.render(p)
        if png is None:
            notes.append(f"<li><b>{esc(p.name)}</b> not drawn: {esc(p.note)}</li>")
            continue
        data = base64.b64encode(png).decode("ascii")
        parts.append(f'<figure id="plot-{esc(p.name.removesuffix(".png"))}">'
                     f'<img src="data:image/png;base64,{data}" alt="{esc(p.title)}">'
                     f"<figcaption>{esc(p.title)} ({esc(p.name)})</figcaption></figure>")
    if notes:
        parts.append(f'<ul class="notes">{"".join(notes)}</ul>')
    return parts


def section_plots(plots: Sequence[Any], results: Sequence[Any]) -> str:
    families = {c.get("family") for r in results for c in r.cases}
    if families == {"serving"} and all(p.figure is None for p in plots):
        # Nothing but serving cases: a note per copy plot would only say so six times.
        return ('<section id="plots"><h2>Plots</h2><p class="muted">The result holds serving cases only: their '
                'plots are under <a href="#serving">Serving / tail latency</a>.</p></section>')
    # A plot of a family no result has says nothing worth a line (an overlap run needs no note per copy plot).
    plots = [p for p in plots if p.figure is not None or plot.PLOT_FAMILIES.get(p.name) in families
             or p.name not in plot.PLOT_FAMILIES]
    return "".join(['<section id="plots"><h2>Plots</h2>', *_figures(plots), "</section>"])


# --------------------------------------------------------------------------------------------
# Serving / tail latency

SERVING_COLUMNS = 14


def _us(v: float) -> str:
    return esc(plot.format_number(v * 1e6))


def _serving_latency_cells(case: dict[str, Any], metric: str) -> str:
    """The cells of one latency metric: p50 .. max and mean in µs (p99 with its range over the
    repetitions, what a p99 gate judges), and the number of operations."""
    d = plot.distribution(case, metric)
    if d is None:
        m = (case.get("metrics") or {}).get(metric)
        stats = m.get("stats") if isinstance(m, dict) else None
        median = (f"; median of the repetitions {esc(plot.format_value(stats['median'], 's'))}"
                  if isinstance(stats, dict) and plot._finite(stats.get("median")) and stats.get("n") else "")
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
    s = plot._stats(case, metric)
    return float(s["median"]) if s is not None and s.get("n") else None


def _serving_pool_cells(case: dict[str, Any]) -> str:
    """Throughput, pageable fallbacks (share of the copies issued) and the pool's high-water."""
    cells = []
    tp = _median_of(case, "throughput")
    cells.append(f'<td class="num sep">{esc(plot.format_number(tp)) if tp is not None else "—"}</td>')
    fallbacks = _median_of(case, "pageable_fallbacks")
    copies = _median_of(case, "copies_issued")
    if fallbacks is None:
        cells.append('<td class="num muted">—</td>')
    else:
        share = (f' <span class="muted">({100 * fallbacks / copies:.2g} %)</span>' if copies else "")
        cells.append(f'<td class="num">{esc(plot.format_number(fallbacks))}{share}</td>')
    high = _median_of(case, "pool_high_water")
    if high is None:
        cells.append('<td class="num muted">—</td>')
    else:
        bound = plot._pool_bound(case)
        of = f' <span class="muted">of {esc(plot.format_bytes(bound))}</span>' if bound else ""
        cells.append(f'<td class="num">{esc(plot.format_bytes(high))}{of}</td>')
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
    metrics = [m for m, _ in plot.SERVING_LATENCY_METRICS]
    labels = {"h2d_latency": "H2D", "request_latency": "request"}
    for c in cases:
        if c.get("scenario") != scenario:
            scenario = c.get("scenario")
            rows.append(f'<tr class="group"><th colspan="{SERVING_COLUMNS}">{esc(scenario)}</th></tr>')
        status = str(c.get("status"))
        params = plot._params(c)
        # The case in words (its id is in the Cases table, and here in the tooltip).
        ident = (f'<td class="case"{{span}} title="{esc(c["id"])}"><b>{esc(plot.strategy_label(params))}</b>'
                 f'<div class="small">{esc(plot.serving_condition_label(params))}</div></td>'
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
    if not plot._finite(stats.get("median")) or stats.get("n") == 0:
        return badge(status)
    cell = f"{esc(name)}: <b>{esc(plot.format_value(stats['median'], str(m.get('unit') or '')))}</b>"
    if plot._finite(stats.get("p10")) and plot._finite(stats.get("p90")):
        unit = str(m.get("unit") or "")
        cell += (f'<div class="secondary">{esc(plot.format_value(stats["p10"], unit))} – '
                 f'{esc(plot.format_value(stats["p90"], unit))}</div>')
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
            if plot._finite(stats.get("median")):
                median = f"{esc(name)}: <b>{esc(plot.format_value(stats['median'], unit))}</b>"
            if plot._finite(stats.get("p10")) and plot._finite(stats.get("p90")):
                p1090 = esc(f"{plot.format_value(stats['p10'], unit)} – {plot.format_value(stats['p90'], unit)}")
            if plot._finite(stats.get("cv")):
                cv = esc(f"{100 * stats['cv']:.2f} %")
            if stats.get("n") is not None:
                n = esc(stats["n"])
            others = []
            for oname, om in list((c.get("metrics") or {}).items())[1:]:
                ostats = om.get("stats") or {} if isinstance(om, dict) else {}
                if plot._finite(ostats.get("median")) and ostats.get("n") != 0:
                    others.append(f"{oname} {plot.format_value(ostats['median'], str(om.get('unit') or ''))}")
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
             f"{fmt_num((data.get('default_threshold') or 0) * 100 if plot._finite(data.get('default_threshold')) else None, 'g')} %"
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
    for case in sorted(compare.cases, key=plot.compare_sort_key):
        verdict = str(case.get("verdict"))
        m = plot.headline_metric(case) or {}
        unit = str(m.get("unit") or "")
        better = m.get("better")
        # "h2d_latency (p99)" when the gate judged a statistic of the distribution.
        metric = esc(m.get("metric_label") or m.get("name") or "")
        if better:
            metric += f' <span class="muted" title="{esc(better)} is better">{"↑" if better == "higher" else "↓"}</span>'
        change = m.get("change_pct")
        change_html = esc(f"{change:+.2f} %") if plot._finite(change) else '<span class="muted">n/a</span>'
        if plot._finite(change) and verdict in ("regression", "improvement"):
            change_html = f'<b style="color:{plot.VERDICT_COLORS[verdict]}">{change_html}</b>'
        extra = (fmt_num(m.get("ratio"), ".4g") if across else
                 (esc(f"±{m['threshold_pct']:g} %") if plot._finite(m.get("threshold_pct")) else '<span class="muted">n/a</span>'))
        nb, nr = m.get("n_baseline"), m.get("n_result")
        reason = str(case.get("reason") or m.get("reason") or "")
        others = [om for om in case.get("metrics") or [] if isinstance(om, dict) and om is not m]
        if others:
            reason_extra = "; ".join(
                f"{om.get('metric_label') or om.get('name')} {om.get('verdict', '')} "
                + (f"{om['change_pct']:+.1f} %" if plot._finite(om.get("change_pct")) else "") for om in others)
            reason_html = esc(reason) + f'<div class="secondary">{esc(reason_extra)}</div>'
        else:
            reason_html = esc(reason)
        label = str(m.get("label") or "") if m else ""
        label_html = f'<div class="small">{esc(label)}</div>' if label and label != verdict else ""
        rows.append(f'<tr><td class="id">{esc_id(case.get("id"))}</td><td>{verdict_badge(verdict)}{label_html}</td>'
                    f"<td>{metric}</td>"
                    f'<td class="num">{esc(plot.format_value(m.get("baseline_median"), unit)) if m else ""}</td>'
                    f'<td class="num">{esc(plot.format_value(m.get("result_median"), unit)) if m else ""}</td>'
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
        frac_html = esc(f"{100 * frac:.1f} %") if plot._finite(frac) and frac is not None else "n/a"
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


def build_page(results: Sequence[Any] | Any, compare: Any | None, out: Path = Path("report.html")) -> str:
    if not isinstance(results, (list, tuple)):
        results = [results]
    for i, r in enumerate(results):
        r.index = i
    result = results[0]
    several = len(results) > 1
    plots = plot.build_plots(results, compare)
    gantt_names = {ref.png_name for ref in plot.trace_refs(results)}
    gantts = {p.name: p for p in plots if p.name in gantt_names}
    serving_plots = [p for p in plots if p.name in plot.SERVING_PLOTS]
    plots = [p for p in plots if p.name not in plot.SERVING_PLOTS and p.name not in gantt_names]
    serving = section_serving(results, serving_plots)
    timelines = section_timelines(results, gantts, out)
    # Order: what a reader looks for first (summary, verdicts) before the long tables.
    nav = ['<a href="#summary">summary</a>']
    if several:
        header = section_header_several(results)
        nav.insert(0, '<a href="#results">results</a>')
    else:
        header = section_header(result)
    body = [header, "", "<main>", "".join(section_incomplete(r) for r in results)]
    if several:
        body.append(section_results(results))
    body.append(section_summary(result, compare, results))
    if compare is not None:
        nav += ['<a href="#verdicts">verdicts</a>', '<a href="#floors">floors</a>']
        body += [section_verdicts(compare, _compared_result(results, compare)), section_floors(compare)]
    nav += ['<a href="#plots">plots</a>']
    if serving:
        nav.append('<a href="#serving">serving</a>')
    if timelines:
        nav.append('<a href="#timelines">timelines</a>')
    nav += ['<a href="#cases">cases</a>', '<a href="#context">context</a>']
    body += [section_plots(plots, results), serving, timelines,
             section_cases_several(results) if several else section_cases(result),
             section_context_several(results) if several else section_context(result)]
    body[1] = f'<nav>{"".join(nav)}</nav>'

    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    sources = ", ".join(esc(r.path) for r in results) + (f" and {esc(compare.path)}" if compare is not None else "")
    body.append(f"<footer>Generated by reports/html.py at {now} from {sources}.</footer></main>")
    with warnings.catch_warnings():  # clearing a log axis resets its limits to (0, 1): matplotlib warns
        warnings.simplefilter("ignore", UserWarning)
        for p in plots + serving_plots + list(gantts.values()):
            if p.figure is not None:
                p.figure.clear()
    if several:
        names = plot.result_names(results)
        title = f"pathbench — {len(results)} results — " + ", ".join(names[r.index] for r in results)
    else:
        title = f"pathbench — {result.node_type} — {result.hostname} — {result.start_time}"
    if not all(r.complete for r in results):
        title = "INCOMPLETE " + title
    return ("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
            f"<title>{esc(title)}</title>\n<style>{CSS}</style>\n</head>\n<body>\n"
            + "\n".join(body) + "\n</body>\n</html>\n")


def section_header_several(results: Sequence[Any]) -> str:
    types = list(OrderedDict.fromkeys(r.node_type for r in results))
    names = plot.result_names(results)
    return (f'<header class="top"><div class="inner"><h1>pathbench report: {len(results)} results</h1>'
            f'<div class="node">{esc("  vs  ".join(types) if len(types) <= 3 else f"{len(types)} node types")}</div>'
            f'<div class="meta">{esc(" · ".join(f"[{r.index + 1}] {names[r.index]}" for r in results))}</div>'
            "</div></header>")


def main(argv: Iterable[str] | None = None) -> int:
    parser = rf.UsageParser(prog=PROG, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("results", nargs="+", type=Path, metavar="RESULT",
                        help="pathbench.result/v1 JSON file(s): several go on one page, named by file")
    parser.add_argument("--compare", type=Path, metavar="COMPARE_JSON",
                        help="a pathbench.compare/v1 file: adds the verdicts and floors tables and compare.png")
    parser.add_argument("--out", type=Path, required=True, metavar="FILE.html", help="the HTML file to write")
    args = parser.parse_args(list(argv) if argv is not None else None)
    results = [plot.load_result(p) for p in args.results]
    compare = plot.load_compare(args.compare) if args.compare else None
    # Before the plots are drawn: a directory or FIFO at the output is refused at once.
    rf.check_output_file(args.out)
    page = build_page(results, compare, args.out)
    rf.write_atomically(args.out, page.encode("utf-8"))
    print(args.out)
    return 0


if __name__ == "__main__":
    rf.run_main(PROG, main)
