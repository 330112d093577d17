"""gantt_<case>.png: the Chrome trace a case names (`timeline`: overlap always, other families
with `run --timeline`), drawn as a Gantt chart by reports/timeline.py; looked up as recorded, beside
the result and in <result>.timelines/.
"""
from __future__ import annotations

import importlib.util
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

import pathbench_result_file as rf

from .common import InputError, LoadedResult
from .figure import PlotOutput

# reports/, where timeline.py is (this file is reports/lib/pathbench_plots/gantt.py).
_REPORTS = Path(__file__).resolve().parents[2]


# Traces a result names (`timeline` of a case: a Chrome trace, overlap always, others with
# `run --timeline`), drawn as Gantt charts with timeline.py.

MAX_GANTT_PER_RESULT = 40


def _load_timeline_module() -> Any:
    name = "pathbench_report_timeline"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, _REPORTS / "timeline.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up here
    spec.loader.exec_module(module)
    return module


@dataclass
class TraceRef:
    result: LoadedResult
    case: dict[str, Any]
    recorded: str          # the path as the result records it
    path: Path | None      # where it was found, None when nowhere
    png_name: str          # the Gantt chart's file name in the output directory


def resolve_trace(result: LoadedResult, recorded: str) -> Path | None:
    """Where a case's trace is: the recorded path (relative to the current directory, as pathbench
    wrote it, or to the result's folder), else beside the result in <result>.timelines/ or its
    folder by file name (a result copied with its traces)."""
    p = Path(recorded)
    candidates = [p] if p.is_absolute() else [p, result.path.parent / p]
    candidates += [result.path.with_name(result.path.name + ".timelines") / p.name, result.path.parent / p.name]
    for c in candidates:
        try:
            if c.is_file():
                return c
        except OSError:
            continue
    return None


def _safe_name(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9.-]", "_", text)[:150]


def trace_refs(results: Sequence[LoadedResult]) -> list[TraceRef]:
    refs = []
    for r in results:
        n = 0
        for c in r.cases:
            recorded = c.get("timeline")
            if not isinstance(recorded, str) or not recorded:
                continue
            n += 1
            if n > MAX_GANTT_PER_RESULT:
                continue
            stem = Path(recorded).name.removesuffix(".json").removesuffix(".trace")
            prefix = f"r{r.index + 1}_" if len(results) > 1 else ""
            refs.append(TraceRef(r, c, recorded, resolve_trace(r, recorded), f"gantt_{prefix}{_safe_name(stem)}.png"))
    return refs


def plot_gantt(ref: TraceRef) -> PlotOutput:
    title = f"Timeline of {ref.case.get('id')}"
    if ref.path is None:
        return PlotOutput(ref.png_name, title, None, f"trace {rf.printable(ref.recorded)} not found (looked beside "
                          f"{rf.printable(str(ref.result.path))} and in its .timelines folder)")
    timeline = _load_timeline_module()
    try:
        chart = timeline.chart_of(ref.path, str(ref.case.get("id")))
    except InputError as e:
        return PlotOutput(ref.png_name, title, None, f"trace cannot be drawn: {rf.printable(str(e))}")
    return PlotOutput(ref.png_name, title, timeline.draw(chart))
