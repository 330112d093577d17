"""What every report script shares: pathbench's files as pathbench reads them, outputs written
atomically, and bad input turned into exit code 3 instead of a traceback.

The reader is the pathbench binary (pathbench_reader.py: `pathbench export --json-lines`): a file
it refuses is refused here in its words (file, JSON pointer, message), and a file it accepts comes
back as the document it read, with what it derives (a result's completeness, a baseline's
between-run spreads). The reports never judge a file by their own idea of the format. The binary is
$PATHBENCH, else `pathbench` on PATH, else build/release/pathbench of this repository; without one
a report exits 3 naming what to build (scripts/setup.sh release --target pathbench).

The rest lives beside this module, one job each: report_errors.py (InputError, printable text),
report_output.py (atomic writes, stop signals), report_cli.py (usage errors, --filter, run_main),
histogram_grid.py (the histogram bucket grid, for the serving fixture's generator). They are
re-exported here: the scripts import this module only.

Not a script: the report scripts put reports/lib on sys.path and import it by name; it lives
there because the report directory itself must stay off sys.path (html.py would shadow the
standard library's `html`).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from histogram_grid import HistogramGrid, number_text  # noqa: F401  (re-exported)
from pathbench_reader import BINARY_ENV, BUILD_HINT, binary, read_document  # noqa: F401
from report_cli import CASE_FILTER_MAX_MEM_BYTES, UsageParser, case_filter, run_main  # noqa: F401
from report_errors import (EXIT_BAD_INPUT, EXIT_FAILURE, EXIT_INCOMPLETE, EXIT_OK, DiskFull,  # noqa: F401
                           InputError, ReaderFailed, printable, text_of)
from report_output import (STOP_SIGNALS, check_output_dir, check_output_file,  # noqa: F401
                           install_stop_signals, remove_stale_temporary_files, write_atomically)

RESULT_SCHEMA = "pathbench.result/v1"
COMPARE_SCHEMA = "pathbench.compare/v1"
BASELINE_SCHEMA = "pathbench.baseline/v1"

# The largest result, baseline or compare file a report reads, refused by the binary before it
# reads it (export --max-bytes). Python holds a parsed result in about five times its size (a dict
# per case, metric and stats block, a float object per sample), so a 256 MiB file takes about
# 1.5 GiB; a sweep of 100 000 cases with a dozen samples per metric is about 200 MB. A bigger input
# is a mistake, and reading it would only exhaust memory.
MAX_INPUT_BYTES = 256 << 20
# The baseline's between-run spread needs this many runs (compare/baseline.hpp, kMinRunsForSpread);
# only spread.py's wording uses it, the spread itself comes from the binary.
MIN_RUNS_FOR_SPREAD = 3

# A per-operation metric's statistics and their quantiles (stats/operation_distribution.hpp,
# kDistributionStatistics): names of the file format, which the plots and pages label and order
# their columns by; pathbench checks that a file holds exactly these. What a gate entry's
# "statistic" may name: "median" (the samples) or one of them.
DISTRIBUTION_STATISTICS = ("p50", "p90", "p99", "p99.9", "max")
DISTRIBUTION_QUANTILES = {"p50": 0.50, "p90": 0.90, "p99": 0.99, "p99.9": 0.999, "max": 1.0}
GATE_STATISTICS = ("median", *DISTRIBUTION_STATISTICS)
GATE_STATISTIC_NAMES = ", ".join(GATE_STATISTICS)


def read_json(path: Path | str, max_bytes: int = MAX_INPUT_BYTES) -> Any:
    """Any JSON file of at most max_bytes (a compare file, a Chrome trace), by pathbench's strict JSON
    reader (a key twice in one object, nesting deeper than 64 levels, NaN, a number beyond double's
    range, a NUL, anything not UTF-8 are refused; a UTF-8 BOM is accepted); its schema unchecked."""
    return read_document(path, "json", max_bytes)["document"]


def is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


# --------------------------------------------------------------------------------------------
# pathbench.result/v1


@dataclass
class Result:
    """A pathbench.result/v1 document as pathbench read it (the cases its journal adds included)."""

    path: Path
    data: dict[str, Any]
    index: int = 0
    # pathbench's reading: False for a run that was interrupted or killed (its cases are the
    # finished ones only), or, in a file older than the field, one without an end time.
    complete: bool = True
    incomplete_reason: str = ""

    @property
    def context(self) -> dict[str, Any]:
        return self.data["context"]

    @property
    def cases(self) -> list[dict[str, Any]]:
        return self.data["cases"]

    @property
    def node_type(self) -> str:
        return text_of(self.context.get("node_type")) or "unknown node type"

    @property
    def hostname(self) -> str:
        return text_of(self.context.get("hostname")) or "?"

    @property
    def start_time(self) -> str:
        return self.context["start_time"] or "?"

    @property
    def label(self) -> str:
        return f"{self.node_type} · {self.hostname} · {self.start_time}"


def load_result(path: Path | str) -> Result:
    """Reads a pathbench.result/v1 file; InputError (file, JSON pointer, what) where pathbench
    refuses it."""
    path = Path(path)
    line = read_document(path, "result", MAX_INPUT_BYTES)
    data = line["document"]
    reason = line["incomplete_reason"]
    if not reason:
        no_end = data["context"].get("end_time") == ""
        reason = "the run did not finish (no end time)" if no_end else "the run did not finish"
    return Result(path, data, complete=bool(line["complete"]), incomplete_reason=reason)


# --------------------------------------------------------------------------------------------
# pathbench.baseline/v1


def gate_entry(gate: Any, metric: str) -> tuple[str, float | None]:
    """What a gate block (checked by pathbench) says about `metric`: the statistic judged ("median"
    unless the entry names one) and the threshold (the entry's, else the block's; None: the
    default)."""
    if not isinstance(gate, dict):
        return "median", None
    threshold = gate.get("threshold_pct") if is_number(gate.get("threshold_pct")) else None
    metrics = gate.get("metrics")
    e = metrics.get(metric) if isinstance(metrics, dict) else None
    if is_number(e):
        return "median", float(e)
    if isinstance(e, dict):
        statistic = e.get("statistic") if isinstance(e.get("statistic"), str) else "median"
        own = e.get("threshold_pct")
        return statistic, float(own) if is_number(own) else threshold
    return "median", threshold


@dataclass
class BaselineMetric:
    name: str
    unit: str
    better: str
    timing_class: str
    # pathbench's between-run statistics (compare/baseline.cpp, between_run_of): the median of the
    # run medians, and the larger of 1.4826 x MAD and the standard deviation of the run medians
    # relative to it; spread_pct None below MIN_RUNS_FOR_SPREAD runs.
    center: float
    spread_pct: float | None
    # The same per distribution statistic, from each run's per-repetition values (what a gate on
    # that statistic judges); None where a run of the baseline has none.
    statistics: dict[str, dict[str, Any] | None] = field(default_factory=dict)

    def statistic_view(self, statistic: str) -> BaselineMetric | None:
        """The metric as a gate on `statistic` sees it (compare/baseline.hpp statistic_view):
        itself for "median", else that statistic's between-run view; None without one."""
        if statistic == "median":
            return self
        view = self.statistics.get(statistic)
        if view is None:
            return None
        return BaselineMetric(self.name, self.unit, self.better, self.timing_class, view["center"],
                              view["spread_pct"])


@dataclass
class BaselineCase:
    id: str
    status: str
    timing_method: str
    gate: Any
    metrics: list[BaselineMetric]


@dataclass
class Baseline:
    path: Path
    node_type: str
    runs: int
    cases: list[BaselineCase]


def load_baseline(path: Path | str) -> Baseline:
    """A pathbench.baseline/v1 file; InputError (file, JSON pointer, what) where pathbench refuses
    it, and for a result file (one run has no between-run spread)."""
    path = Path(path)
    line = read_document(path, "baseline", MAX_INPUT_BYTES)
    doc, between = line["document"], line["between_run"]
    cases = []
    for c in doc["cases"]:
        spreads = between.get(c["id"], {})
        metrics = [BaselineMetric(name, m["unit"] or "", m["better"], m["timing_class"],
                                  spreads[name]["center"], spreads[name]["spread_pct"],
                                  spreads[name]["statistics"])
                   for name, m in c["metrics"].items()]
        cases.append(BaselineCase(c["id"], c["status"], c["timing_method"] or "", c["gate"], metrics))
    return Baseline(path, doc["node_type"] or "", len(doc["runs"]), cases)
