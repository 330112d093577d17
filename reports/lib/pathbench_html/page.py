"""What every section of the page uses: the inline CSS, HTML escaping, value rendering (context
fields, tables of objects), status and verdict badges and number formatting.
"""
from __future__ import annotations

import html
from collections import OrderedDict
from typing import Any, Sequence

import pathbench_result_file as rf
from pathbench_plots.common import _finite, format_bytes
from pathbench_plots.compare import VERDICT_COLORS


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
            return f"{value:,} <span class=\"muted\">({esc(format_bytes(value))})</span>"
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
    color = VERDICT_COLORS.get(verdict, "#7f7f7f")
    return f'<span class="badge" style="background:{color}">{esc(verdict)}</span>'


def floor_badge(verdict: str) -> str:
    color = {"pass": "#2ca02c", "below_floor": "#d62728", "nvlink_at_pcie_speed": "#d62728",
             "link_degraded": "#b26a00"}.get(verdict, "#7f7f7f")
    return f'<span class="badge" style="background:{color}">{esc(verdict)}</span>'


def fmt_num(v: Any, digits: str = ".4g") -> str:
    if not _finite(v):
        return '<span class="muted">n/a</span>'
    return esc(format(v, digits))
