"""serving_pool.png: the pinned pool's pageable fallbacks and high-water per case."""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Sequence

from .common import (LoadedResult, Point, _finite, _not_ok_summary, _params, _point, _select, _stats, _why_not,
                     format_bytes, format_number, format_value, mpl_text, result_names)
from .figure import PlotOutput, _finish, _incomplete_notes, _new_figure, _title_suffix
from .serving import (DEFAULT_CHUNK_BYTES, DEFAULT_POOL_SLOTS, MAX_POOL_ROWS, _condition_sort_key, _strategy_sort_key,
                      serving_condition_label, strategy_label)


def _pool_bound(case: dict[str, Any]) -> float | None:
    """The pool's bound on pinned bytes: from its pool_bound check when it says, else from the
    parameters (slots x slot size, bench/serving.cu)."""
    for check in case.get("checks") or []:
        if isinstance(check, dict) and check.get("name") == "pool_bound":
            m = re.search(r"bound of (\d+)", str(check.get("detail") or ""))
            if m and len(m.group(1)) < 30:
                return float(m.group(1))
    p = _params(case)
    slots = p.get("pool_slots", DEFAULT_POOL_SLOTS)
    request = p.get("request_bytes")
    if not (_finite(slots) and _finite(request)):
        return None
    slot = min(p.get("chunk_bytes", DEFAULT_CHUNK_BYTES), request) if p.get("strategy") == "pinned_pool_chunked" \
        else request
    return float(slots) * float(slot) if _finite(slot) else None


@dataclass
class PoolRow:
    label: str
    fallbacks: Point | None  # copies per repetition
    copies: float | None  # copies issued per repetition (median)
    high_water: Point | None  # KiB
    bound: float | None  # KiB
    waits: str


def plot_serving_pool(results: Sequence[LoadedResult]) -> PlotOutput:
    name = "serving_pool.png"
    title = "Serving: the pinned staging pool — pageable fallbacks and high-water"

    def pred(c: dict[str, Any]) -> bool:
        metrics = c.get("metrics") or {}
        return c.get("family") == "serving" and ("pageable_fallbacks" in metrics or "pool_high_water" in metrics
                                                 or str(_params(c).get("strategy", "")).startswith("pinned_pool"))

    ok, other = _select(results, pred)
    rows: list[PoolRow] = []
    multi = len(results) > 1
    for r, case in sorted(ok, key=lambda rc: (_condition_sort_key(_params(rc[1])),
                                              _strategy_sort_key(str(_params(rc[1]).get("strategy"))), rc[0].index)):
        p = _params(case)
        fallbacks = _point(case, "pageable_fallbacks", 0)
        high = _point(case, "pool_high_water", 0, scale=1 / 1024)
        if fallbacks is None and high is None:
            other.append(dict(case, status="ok but not drawn",
                              reason="no pool metrics (pageable_fallbacks, pool_high_water)"))
            continue
        copies = _stats(case, "copies_issued")
        waits = _stats(case, "pool_waits")
        wait_time = _stats(case, "pool_wait_time")
        wait_text = ""
        if waits is not None and waits["median"] > 0:
            wait_text = f"{format_number(waits['median'])} waits"
            if wait_time is not None:
                wait_text += f", {format_value(wait_time['median'], 's')}"
        bound = _pool_bound(case)
        rows.append(PoolRow(strategy_label(p) + "\n" + serving_condition_label(p) + (f" [{r.index + 1}]" if multi else ""),
                            fallbacks, copies["median"] if copies is not None and copies["median"] > 0 else None,
                            high, bound / 1024 if bound is not None else None, wait_text))
    if not rows:
        return PlotOutput(name, title, None, f"no ok serving cases of a pool strategy{_why_not(other)}")
    footnote: list[str] = []
    if len(rows) > MAX_POOL_ROWS:
        footnote.append(f"… and {len(rows) - MAX_POOL_ROWS} more pool cases not shown")
        rows = rows[:MAX_POOL_ROWS]
    # Fallbacks as a share of the copies issued where every row says how many were issued.
    as_share = all(row.copies is not None for row in rows if row.fallbacks is not None)

    def share(v: float | None, row: PoolRow) -> float | None:
        if v is None:
            return None
        return 100 * v / row.copies if as_share and row.copies else v

    # High-water as a share of the pool's bound where every row knows its bound: the bounds of
    # different strategies and sizes differ a hundredfold.
    of_bound = all(row.bound for row in rows if row.high_water is not None)

    def fill(v: float | None, row: PoolRow) -> float | None:
        if v is None:
            return None
        return 100 * v / row.bound if of_bound and row.bound else v

    fig = _new_figure(13.0, 1.9 + 0.62 * len(rows))
    axes = fig.subplots(1, 2, sharey=True)
    fb_top = max([share(row.fallbacks.p90 if row.fallbacks.p90 is not None else row.fallbacks.median, row) or 0.0
                  for row in rows if row.fallbacks is not None] + [0.0])
    hw_top = 100.0 if of_bound else max(
        [row.high_water.p90 if row.high_water.p90 is not None else row.high_water.median
         for row in rows if row.high_water is not None] + [row.bound for row in rows if row.bound is not None] + [0.0])
    for y, row in enumerate(rows):
        if row.fallbacks is not None:
            fb = row.fallbacks
            median = share(fb.median, row) or 0.0
            lo = max(0.0, median - (share(fb.p10, row) or median))
            hi = max(0.0, (share(fb.p90, row) or median) - median)
            axes[0].barh(y, median, height=0.6, color="#d62728" if median > 0 else "#bbbbbb",
                         xerr=[[lo], [hi]], capsize=3, error_kw={"elinewidth": 1, "ecolor": "#333333"})
            text = f"{median:.2g} %  ({format_number(fb.median)} of {format_number(row.copies or 0)})" if as_share \
                else format_number(fb.median)
            if row.waits:
                text += f"; {row.waits}"
            axes[0].text(median + hi + (fb_top or 1.0) * 0.02, y, mpl_text(text), va="center", fontsize=8)
        if row.high_water is not None:
            hw = row.high_water
            median = fill(hw.median, row) or 0.0
            lo = max(0.0, median - (fill(hw.p10, row) or median))
            hi = max(0.0, (fill(hw.p90, row) or median) - median)
            at_bound = row.bound is not None and hw.median >= row.bound
            axes[1].barh(y, median, height=0.6, color="#ff7f0e" if at_bound else "#1f77b4",
                         xerr=[[lo], [hi]], capsize=3, error_kw={"elinewidth": 1, "ecolor": "#333333"})
            text = format_bytes(hw.median * 1024) + (f" of {format_bytes(row.bound * 1024)}" if row.bound else "")
            end = max(median + hi, 100.0 if of_bound else (row.bound or 0.0))
            axes[1].text(end + hw_top * 0.02, y, text, va="center", fontsize=8)
        if row.bound is not None:
            b = 100.0 if of_bound else row.bound
            axes[1].plot([b, b], [y - 0.4, y + 0.4], color="#222222", linewidth=2.2, zorder=4)
    axes[0].set_yticks(range(len(rows)))
    axes[0].set_yticklabels([mpl_text(row.label) for row in rows], fontsize=8)
    axes[0].set_ylim(len(rows) - 0.5, -0.5)
    axes[0].set_xlim(0, fb_top * 2.2 if fb_top > 0 else 1.0)
    axes[1].set_xlim(0, hw_top * 1.45 if hw_top > 0 else 1.0)
    axes[0].set_xlabel(("% of the copies issued" if as_share else "copies per repetition") + "; median, bars p10–p90")
    axes[1].set_xlabel(("% of the pool's bound (black tick)" if of_bound else "KiB; black tick: the pool's bound")
                       + "; orange: reached it")
    axes[0].set_title("pageable fallbacks (no free pinned slot)", fontsize=10)
    axes[1].set_title("high-water: pinned bytes in use at most", fontsize=10)
    for ax in axes:
        ax.grid(axis="x", alpha=0.3)
        ax.set_axisbelow(True)
    fig.suptitle(f"{title}\n{_title_suffix(results)}", fontsize=12)
    names = result_names(results)
    _finish(fig, [(None, f"[{r.index + 1}] {names[r.index]}") for r in results] if multi else [],
            footnote + _not_ok_summary(other) + _incomplete_notes(results))
    return PlotOutput(name, title, fig)
