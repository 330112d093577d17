"""Which plots a set of results gets, in report order (like bench/families.cpp for the
benchmarks): each family's plots only when some result has that family.
"""
from __future__ import annotations

import functools
from typing import Sequence

from . import mpl
from .common import LoadedCompare, LoadedResult
from .compare import plot_compare
from .copy import plot_bandwidth, plot_latency, plot_pin_cost
from .figure import PlotOutput, _safely
from .gantt import plot_gantt, trace_refs
from .host_memory import plot_host_memory
from .overlap import plot_overlap
from .peer import plot_peer_bandwidth, plot_peer_latency
from .serving import serving_cases
from .serving_head_of_line import plot_serving_head_of_line
from .serving_latency import plot_serving_latency, plot_serving_percentiles
from .serving_pool import plot_serving_pool
from .small_copies import plot_small_copies
from .unified_memory import plot_unified_memory


# The family each plot draws (html.py leaves out the notes of plots whose family no result has).
PLOT_FAMILIES = {"bandwidth_h2d.png": "copy", "bandwidth_d2h.png": "copy", "bandwidth_d2d.png": "copy",
                 "latency.png": "copy", "pin_cost.png": "copy", "host_memory.png": "host_memory",
                 "overlap.png": "overlap", "small_copies.png": "small_copies", "unified_memory.png": "unified_memory",
                 "peer_bandwidth.png": "peer", "peer_latency.png": "peer"}
FAMILY_PLOTS = ("overlap.png", "small_copies.png", "unified_memory.png", "peer_bandwidth.png", "peer_latency.png")
# html.py shows these in its serving section rather than among the other plots.
SERVING_PLOTS = ("serving_latency.png", "serving_head_of_line.png", "serving_pool.png",
                 "serving_percentiles.png")


def build_plots(results: Sequence[LoadedResult], compare: LoadedCompare | None = None) -> list[PlotOutput]:
    """Every plot, in report order; figure is None (with a note) where the inputs hold no data for it."""
    mpl.load()
    for i, r in enumerate(results):
        r.index = i
    out = [_safely(f"bandwidth_{d}.png", f"{d.upper()} copy bandwidth", functools.partial(plot_bandwidth, results, d))
           for d in ("h2d", "d2h", "d2d")]
    out += [_safely("latency.png", "Copy latency", lambda: plot_latency(results)),
            _safely("pin_cost.png", "Cost of pinning host memory", lambda: plot_pin_cost(results)),
            _safely("host_memory.png", "Host memory", lambda: plot_host_memory(results))]
    if serving_cases(results):  # only then: a copy sweep gets no notes about serving plots
        out += [_safely("serving_latency.png", "Serving latency percentiles", lambda: plot_serving_latency(results)),
                _safely("serving_head_of_line.png", "Serving head-of-line blocking",
                        lambda: plot_serving_head_of_line(results)),
                _safely("serving_pool.png", "Serving pinned pool", lambda: plot_serving_pool(results)),
                _safely("serving_percentiles.png", "Serving percentiles per case",
                        lambda: plot_serving_percentiles(results))]
    families = {c.get("family") for r in results for c in r.cases}
    # A family's plot only when some result has that family: a copy sweep gets no notes about them.
    for fam, plots in (("overlap", (("overlap.png", "Overlap", plot_overlap),)),
                       ("small_copies", (("small_copies.png", "Small copies", plot_small_copies),)),
                       ("unified_memory", (("unified_memory.png", "Unified memory", plot_unified_memory),)),
                       ("peer", (("peer_bandwidth.png", "Peer bandwidth", plot_peer_bandwidth),
                                 ("peer_latency.png", "Peer latency", plot_peer_latency)))):
        if fam in families:
            out += [_safely(name, title, functools.partial(make, results)) for name, title, make in plots]
    out += [_safely(ref.png_name, f"Timeline of {ref.case.get('id')}", functools.partial(plot_gantt, ref))
            for ref in trace_refs(results)]
    if compare is not None:
        out.append(_safely("compare.png", "Change of the headline metric", lambda: plot_compare(compare, results)))
    return out
