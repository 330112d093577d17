"""The plots of reports/plot.py (and of html.py's page), shaped like bench/: a module per family.

    copy.py                 bandwidth_<direction>.png, latency.png, pin_cost.png
    host_memory.py          host_memory.png
    serving.py              what the serving plots share (distributions, labels, the "nines" axis)
    serving_latency.py      serving_latency.png, serving_percentiles.png
    serving_head_of_line.py serving_head_of_line.png
    serving_pool.py         serving_pool.png
    overlap.py              overlap.png
    small_copies.py         small_copies.png
    unified_memory.py       unified_memory.png
    peer.py                 peer_bandwidth.png, peer_latency.png
    compare.py              compare.png (--compare)
    gantt.py                gantt_<case>.png (the traces a result names, drawn by reports/timeline.py)
    families.py             which plots a set of results gets, in report order (build_plots)

Shared: common.py (inputs, colours and result styles, number formatting, the PCIe link-rate
fallback table, label escaping, case selection; no matplotlib) and figure.py (figure setup, axes,
legends, PlotOutput, --describe, PNG rendering); mpl.py imports matplotlib on first use.

reports/lib must be on sys.path (the scripts put it there), reports/ itself must not: html.py would
shadow the standard library's `html`.
"""
