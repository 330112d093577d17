"""The sections of reports/html.py's page, a module each.

    page.py      the inline CSS and what every section uses (escaping, values, badges, numbers)
    overview.py  header, incomplete-run banner, results table, summary, context
    figures.py   the plots (embedded PNGs) and the timelines (trace links and Gantt charts)
    serving.py   serving / tail latency: the serving plots and the per-case percentile tables
    cases.py     the cases table
    compare.py   with --compare: changes, verdicts and floors

html.py assembles them into the page; the plots come from pathbench_plots.
"""
