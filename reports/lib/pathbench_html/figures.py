"""The plots section (each PNG embedded as a data: URI, then the plots not drawn and why) and the
timelines section (a link to each trace and its Gantt chart).
"""
from __future__ import annotations

import base64
import os
import urllib.parse
from pathlib import Path
from typing import Any, Sequence

from pathbench_plots.families import PLOT_FAMILIES
from pathbench_plots.figure import render
from pathbench_plots.gantt import trace_refs
from .overview import file_label
from .page import esc, esc_id


def _href(target: Path, page: Path) -> str:
    """A link from the page to a local file: relative (no file: URL), percent-encoded."""
    try:
        rel = os.path.relpath(target.resolve(), page.resolve().parent)
    except ValueError:  # another drive (Windows): no relative path exists
        rel = str(target.resolve())
    return urllib.parse.quote(Path(rel).as_posix())


def section_timelines(results: Sequence[Any], gantts: dict[str, Any], page: Path) -> str:
    """Every case that names a trace: a link to the trace and its Gantt chart."""
    refs = trace_refs(results)
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


def _figures(plots: Sequence[Any]) -> list[str]:
    """Each drawable plot as a <figure> with the PNG embedded, then a list of those not drawn and why."""
    parts = []
    notes = []
    for p in plots:
        if p.figure is None:
            notes.append(f"<li><b>{esc(p.name)}</b> not drawn: {esc(p.note)}</li>")
            continue
        png = render(p)
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
    plots = [p for p in plots if p.figure is not None or PLOT_FAMILIES.get(p.name) in families
             or p.name not in PLOT_FAMILIES]
    return "".join(['<section id="plots"><h2>Plots</h2>', *_figures(plots), "</section>"])
