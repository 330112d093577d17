#!/usr/bin/env python3
"""End-to-end: every file of the bad-result corpus (tests/fixtures/bad_results/) through the real
pathbench binary and through every report script that reads results, which must all reach the
verdict tests/fixtures/bad_results/expected.json gives.

    python3 tests/e2e/test_bad_results.py --pathbench BINARY --python build/venv/bin/python --source . \
        [unittest args]

--python is the interpreter with reports/requirements.txt (the report scripts run under it); this
file needs only the standard library.

A refused file: `pathbench export --prometheus - FILE` and `pathbench compare FILE FILE` exit 3 with
"pathbench: error: FILE: POINTER: ..."; table.py, plot.py, html.py and spread.py exit 3 with
"FILE: POINTER:" on stderr (the C++ pointer, or the Python reader's more precise one where
expected.json names it), no traceback, nothing on stdout and nothing at the output path; each
within 5 s. timeline.py, which reads Chrome traces with the same JSON reader, is given the files
that are no valid JSON and must refuse them the same way. spread.py reads baselines: a document
with the result schema is refused at /schema. The corpus's distribution and histogram defects
are refused by the reports in the binary's own words, and so is one broken bucket edge in the
serving fixture (tests/fixtures/serving). An accepted file: export exits 0, compare exits 0,
1 or 2, the reports write their output; an incomplete run says so (table line, HTML banner, plot
note). Also: inputs that are a FIFO, a directory or a device; outputs that are a directory, FIFO
or regular file where a directory belongs (refused, left as they were); atomic replacement; usage
errors exit 3.
"""
from __future__ import annotations

import argparse
import concurrent.futures
import functools
import importlib.util
import json
import os
import re
import resource
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time
import unittest
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

PATHBENCH: Path = Path()
PYTHON: str = "python3"
SOURCE: Path = Path(".")

EXIT_OK = 0
EXIT_BAD_INPUT = 3
MAX_JSON_DEPTH = 64
# "Each file must be handled within 5 s": a refusal never waits on anything.
BAD_INPUT_SECONDS = 5.0
# Drawing plots of an accepted file takes longer on a loaded two-core machine.
ACCEPTED_SECONDS = 180.0
REPORTS = ("table", "plot", "html", "spread")
# The acceptance audit's limit for every report: within 5 s and 1 GiB of address space.
AUDIT_MEMORY = 1 << 30
# The size caps of reports/lib/pathbench_result_file.py and reports/timeline.py (checked before
# reading), as the README states them.
MAX_INPUT_BYTES = 256 << 20
MAX_TRACE_BYTES = 64 << 20

MPL_CONFIG = tempfile.TemporaryDirectory(prefix="pathbench-mpl-")
WORK: Path = Path()


@dataclass
class Run:
    args: list[str]
    returncode: int
    stdout: str
    stderr: str
    seconds: float
    timed_out: bool = False

    def describe(self) -> str:
        return (f"$ {' '.join(self.args)}\nexit {self.returncode} after {self.seconds:.2f} s"
                f"{' (timed out)' if self.timed_out else ''}\n--- stdout\n{self.stdout[-2000:]}"
                f"\n--- stderr\n{self.stderr[-3000:]}")


def run(args: list[str | Path | bytes], timeout: float, memory_limit: int | None = None) -> Run:
    """`args` run to completion (or `timeout`); memory_limit: its address space (RLIMIT_AS), as
    the acceptance audit runs every report (prlimit --as=1GiB)."""
    env = dict(os.environ, MPLBACKEND="Agg", PYTHONDONTWRITEBYTECODE="1", MPLCONFIGDIR=MPL_CONFIG.name)
    env.pop("PATHBENCH_TRACEBACK", None)
    # bytes: an argument that is no UTF-8, passed as it is.
    argv = [os.fsdecode(a) if isinstance(a, bytes) else str(a) for a in args]

    def limit() -> None:
        if memory_limit is not None:
            resource.setrlimit(resource.RLIMIT_AS, (memory_limit, memory_limit))

    start = time.monotonic()
    try:
        proc = subprocess.run(argv, capture_output=True, timeout=timeout, env=env, stdin=subprocess.DEVNULL,
                              preexec_fn=limit if memory_limit is not None else None)
    except subprocess.TimeoutExpired as e:
        out = (e.stdout or b"").decode("utf-8", "replace")
        err = (e.stderr or b"").decode("utf-8", "replace")
        return Run(argv, -1, out, err, time.monotonic() - start, timed_out=True)
    return Run(argv, proc.returncode, proc.stdout.decode("utf-8", "replace"), proc.stderr.decode("utf-8", "replace"),
               time.monotonic() - start)


def script(name: str) -> Path:
    return SOURCE / "reports" / f"{name}.py"


def corpus_dir() -> Path:
    return SOURCE / "tests" / "fixtures" / "bad_results"


def report_command(tool: str, path: Path, out: Path) -> list[str | Path]:
    """The command line of one report script reading `path`; `out` is its output (a folder for plot.py,
    a file for html.py and timeline.py, unused by the scripts that print)."""
    if tool == "plot":
        return [PYTHON, script("plot"), path, "--out", out]
    if tool in ("html", "timeline"):
        return [PYTHON, script(tool), path, "--out", out]
    return [PYTHON, script(tool), path]


# Every run the tests look at, started once, two at a time, in setUpModule.
EXPECTED: dict[str, dict[str, Any]] = {}
RUNS: dict[tuple[str, str], Run] = {}
OUTPUTS: dict[tuple[str, str], Path] = {}


def output_for(tool: str, name: str) -> Path:
    stem = name.removesuffix(".json")
    return WORK / tool / (stem if tool == "plot" else f"{stem}.{'html' if tool == 'html' else 'png'}")


def tools_for(entry: dict[str, Any]) -> list[str]:
    tools = ["export", "compare", *REPORTS]
    if not entry["valid"] and entry["level"] == "json":
        tools.append("timeline")
    return tools


def command_for(tool: str, path: Path, out: Path) -> list[str | Path]:
    if tool == "export":
        return [PATHBENCH, "export", "--prometheus", "-", path]
    if tool == "compare":
        return [PATHBENCH, "compare", path, path]
    return report_command(tool, path, out)


def setUpModule() -> None:  # noqa: N802 (unittest's name)
    global WORK
    EXPECTED.update(json.loads((corpus_dir() / "expected.json").read_text(encoding="utf-8")))
    WORK = Path(tempfile.mkdtemp(prefix="pathbench-bad-results-"))
    for tool in ("plot", "html", "timeline"):
        (WORK / tool).mkdir()
    jobs: dict[tuple[str, str], Callable[[], Run]] = {}
    for name, entry in EXPECTED.items():
        path = corpus_dir() / name
        for tool in tools_for(entry):
            out = output_for(tool, name)
            OUTPUTS[(name, tool)] = out
            limit = ACCEPTED_SECONDS if entry["valid"] else BAD_INPUT_SECONDS + 5
            jobs[(name, tool)] = functools.partial(run, command_for(tool, path, out), limit)
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        futures = {key: pool.submit(job) for key, job in jobs.items()}
        for key, future in futures.items():
            RUNS[key] = future.result()


def tearDownModule() -> None:  # noqa: N802
    if WORK != Path() and not os.environ.get("PATHBENCH_KEEP_TEST_OUTPUT"):
        shutil.rmtree(WORK, ignore_errors=True)


def expected_pointer(entry: dict[str, Any], tool: str) -> str:
    if tool in ("export", "compare"):
        return entry["pointer"]
    # The reports read through the binary (reports/lib/pathbench_reader.py), so they name its
    # pointer; "python_pointer" is where the former Python reader named a lone surrogate.
    pointer = entry["pointer"]
    # spread.py reads baselines: valid JSON is refused at its schema (a result is no baseline)
    # unless the document is not even an object.
    if tool == "spread" and entry["level"] == "result" and pointer != "/":
        return "/schema"
    return pointer


class CorpusTest(unittest.TestCase):
    def test_corpus_is_generated_and_complete(self) -> None:
        proc = run([sys.executable, corpus_dir() / "generate.py", "--check"], 60)
        self.assertEqual(proc.returncode, 0, proc.describe())
        files = {p.name for p in corpus_dir().iterdir() if p.suffix == ".json" and p.name != "expected.json"}
        self.assertEqual(files, set(EXPECTED), "every corpus file has an expected verdict")
        self.assertGreaterEqual(sum(1 for e in EXPECTED.values() if not e["valid"]), 40)
        self.assertIn("bom_valid.json", EXPECTED)
        self.assertTrue(EXPECTED["bom_valid.json"]["valid"])


class RefusedTest(unittest.TestCase):
    """Every refused file: exit 3, the file and the JSON pointer named, no traceback, no output."""

    def check(self, tool: str) -> None:
        for name, entry in sorted(EXPECTED.items()):
            if entry["valid"] or (name, tool) not in RUNS:
                continue
            r = RUNS[(name, tool)]
            path = corpus_dir() / name
            pointer = expected_pointer(entry, tool)
            with self.subTest(file=name, tool=tool):
                self.assertFalse(r.timed_out, r.describe())
                self.assertLess(r.seconds, BAD_INPUT_SECONDS, r.describe())
                self.assertEqual(r.returncode, EXIT_BAD_INPUT, r.describe())
                self.assertNotIn("Traceback", r.stderr, r.describe())
                self.assertNotIn("internal error", r.stderr, r.describe())
                prog = "pathbench" if tool in ("export", "compare") else f"{tool}.py"
                self.assertIn(f"{prog}: error: {path}: {pointer}: ", r.stderr, r.describe())
                if tool == "export":
                    self.assertIn(entry["says"], r.stderr, r.describe())
                if tool in ("export", "table", "spread", "plot", "html", "timeline"):
                    self.assertEqual(r.stdout, "", r.describe())
                out = OUTPUTS[(name, tool)]
                self.assertFalse(out.exists(), f"{out} was written for a refused input")
        if tool in ("plot", "html", "timeline"):
            # Only the accepted files' outputs: no temporary file, nothing for a refused input.
            wanted = {output_for(tool, n).name for n, e in EXPECTED.items() if e["valid"] and (n, tool) in RUNS}
            self.assertEqual({p.name for p in (WORK / tool).iterdir()}, wanted, f"{tool}.py left files behind")

    def test_export(self) -> None:
        self.check("export")

    def test_compare(self) -> None:
        self.check("compare")

    def test_table(self) -> None:
        self.check("table")

    def test_plot(self) -> None:
        self.check("plot")

    def test_html(self) -> None:
        self.check("html")

    def test_spread(self) -> None:
        self.check("spread")

    def test_timeline_reads_json_as_the_others_do(self) -> None:
        self.check("timeline")

    def test_cpp_and_python_agree(self) -> None:
        """The verdicts of the C++ reader and of the Python reader, side by side: the same file
        refused or accepted by both, at the same pointer (or, for a lone surrogate, the whole
        document in C++ and the string holding it in Python)."""
        for name, entry in sorted(EXPECTED.items()):
            cpp, py = RUNS[(name, "export")], RUNS[(name, "table")]
            with self.subTest(file=name):
                self.assertEqual(cpp.returncode == EXIT_BAD_INPUT, py.returncode == EXIT_BAD_INPUT,
                                 f"C++ and Python disagree:\n{cpp.describe()}\n{py.describe()}")
                if entry["valid"]:
                    continue
                cpp_at = re.search(rf"{re.escape(str(corpus_dir() / name))}: (/\S*): ", cpp.stderr)
                py_at = re.search(rf"{re.escape(str(corpus_dir() / name))}: (/\S*): ", py.stderr)
                self.assertIsNotNone(cpp_at, cpp.describe())
                self.assertIsNotNone(py_at, py.describe())
                assert cpp_at is not None and py_at is not None
                # The reports read through the binary: the same pointer everywhere, a lone
                # surrogate's ("python_pointer" was the former Python reader's) included.
                self.assertEqual(cpp_at.group(1), py_at.group(1))


class AcceptedTest(unittest.TestCase):
    """The valid files (a BOM, 1e308 samples, odd strings, 64 levels, interrupted runs): accepted
    by every reader; an incomplete run is shown as such."""

    def valid(self) -> list[str]:
        return sorted(n for n, e in EXPECTED.items() if e["valid"])

    def incomplete(self, name: str) -> bool:
        doc = json.loads((corpus_dir() / name).read_bytes().removeprefix(b"\xef\xbb\xbf"))
        return doc.get("complete", doc["context"]["end_time"] != "") is False

    def test_binary_accepts(self) -> None:
        for name in self.valid():
            with self.subTest(file=name):
                export, compare = RUNS[(name, "export")], RUNS[(name, "compare")]
                self.assertEqual(export.returncode, EXIT_OK, export.describe())
                self.assertIn("pathbench_", export.stdout)
                self.assertIn(compare.returncode, (0, 1, 2), compare.describe())
                self.assertNotIn("error:", compare.stderr, compare.describe())

    def test_reports_accept(self) -> None:
        for name in self.valid():
            incomplete = self.incomplete(name)
            with self.subTest(file=name, tool="table"):
                r = RUNS[(name, "table")]
                self.assertEqual(r.returncode, EXIT_OK, r.describe())
                self.assertIn("| case | status | metric |", r.stdout)
                self.assertEqual("**Incomplete run**" in r.stdout, incomplete, r.stdout)
                self.assertNotIn("\x00", r.stdout)
            with self.subTest(file=name, tool="plot"):
                r = RUNS[(name, "plot")]
                self.assertEqual(r.returncode, EXIT_OK, r.describe())
                self.assertNotIn("Traceback", r.stderr)
                out = OUTPUTS[(name, "plot")]
                self.assertEqual([Path(line).name for line in r.stdout.splitlines()], ["bandwidth_h2d.png"],
                                 r.describe())
                self.assertEqual(sorted(p.name for p in out.iterdir()), ["bandwidth_h2d.png"], "no temp files left")
                self.assertEqual((out / "bandwidth_h2d.png").read_bytes()[:8], b"\x89PNG\r\n\x1a\n")
                self.assertEqual("incomplete run" in r.stderr, incomplete, r.describe())
            with self.subTest(file=name, tool="html"):
                r = RUNS[(name, "html")]
                self.assertEqual(r.returncode, EXIT_OK, r.describe())
                page = OUTPUTS[(name, "html")].read_text(encoding="utf-8")
                self.assertTrue(page.startswith("<!DOCTYPE html>"))
                self.assertTrue(page.rstrip().endswith("</html>"))
                self.assertEqual('<div class="incomplete"' in page, incomplete)
                self.assertEqual("<title>INCOMPLETE " in page, incomplete)
                self.assertNotIn("\x00", page)
                self.assertIn("data:image/png;base64,", page)
            with self.subTest(file=name, tool="spread"):
                # spread.py reads baselines; it gets past the JSON (the BOM too) to the schema.
                r = RUNS[(name, "spread")]
                self.assertEqual(r.returncode, EXIT_BAD_INPUT, r.describe())
                self.assertIn(f"{corpus_dir() / name}: /schema: ", r.stderr)
                self.assertIn("not a baseline", r.stderr)

    def test_huge_values_are_left_out_of_the_plots_not_crashed_on(self) -> None:
        r = RUNS[("huge_values_valid.json", "table")]
        self.assertIn("1e+308 GB/s", r.stdout)
        r = RUNS[("huge_values_valid.json", "html")]
        self.assertEqual(r.returncode, EXIT_OK, r.describe())
        self.assertNotIn("Traceback", r.stderr + RUNS[("huge_values_valid.json", "plot")].stderr)


def generator() -> Any:
    """tests/fixtures/bad_results/generate.py as a module: the corpus's valid result and its stats."""
    spec = importlib.util.spec_from_file_location("bad_results_generate", corpus_dir() / "generate.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


class BaselineTest(unittest.TestCase):
    """spread.py reads baselines by the C++ reader's rules: one the binary promoted (with a BOM
    added) is accepted; one the binary refuses is refused at the same pointer."""

    def setUp(self) -> None:
        self._tmp = tempfile.TemporaryDirectory(prefix="pathbench-baseline-")
        self.tmp = Path(self._tmp.name)

    def tearDown(self) -> None:
        self._tmp.cleanup()

    def promoted(self) -> tuple[Path, Path]:
        gen = generator()
        files = []
        for k in range(3):
            doc = gen.base()
            doc["context"]["start_time"] = f"2026-11-29T14:0{k}:11Z"
            for case in doc["cases"]:
                for m in case["metrics"].values():
                    m["samples"] = [v * (1 + 0.01 * k + 0.001 * i) for i, v in enumerate(m["samples"] * 2)][:5]
                    m["stats"] = gen.stats_of(m["samples"])
            path = self.tmp / f"run{k}.json"
            path.write_bytes(gen.dump(doc))
            files.append(path)
        r = run([PATHBENCH, "baseline", "promote", *files, "--dir", self.tmp / "baselines", "--allow-noisy"], 60)
        self.assertEqual(r.returncode, EXIT_OK, r.describe())
        (baseline,) = (self.tmp / "baselines").glob("*.json")
        return baseline, files[0]

    def test_a_promoted_baseline_with_a_bom(self) -> None:
        baseline, _ = self.promoted()
        bom = self.tmp / "bom-baseline.json"
        bom.write_bytes(b"\xef\xbb\xbf" + baseline.read_bytes())
        r = run([PYTHON, script("spread"), bom, "--all-metrics"], ACCEPTED_SECONDS)
        self.assertEqual(r.returncode, EXIT_OK, r.describe())
        self.assertIn(", 3 runs", r.stdout)
        self.assertEqual(len([line for line in r.stdout.splitlines() if line.startswith("| copy/")]), 4, r.stdout)

    def test_a_baseline_the_binary_refuses(self) -> None:
        baseline, result = self.promoted()
        doc = json.loads(baseline.read_text(encoding="utf-8"))
        first = doc["cases"][0]["metrics"]["bandwidth"]
        broken = {
            "no_runs.json": (dict(doc, runs=[]), "/runs"),
            "failed_case.json": (dict(doc, cases=[dict(doc["cases"][0], status="failed")]), "/cases/0/status"),
            "sample_string.json": (dict(doc, cases=[dict(doc["cases"][0], metrics={
                "bandwidth": dict(first, runs=[dict(first["runs"][0], samples=["1"])] + first["runs"][1:])})]),
                "/cases/0/metrics/bandwidth/runs/0/samples/0"),
            "runs_mismatch.json": (dict(doc, cases=[dict(doc["cases"][0], metrics={
                "bandwidth": dict(first, runs=first["runs"][:2])})]), "/cases/0/metrics/bandwidth/runs"),
        }
        for name, (content, pointer) in broken.items():
            path = self.tmp / name
            path.write_text(json.dumps(content), encoding="utf-8")
            with self.subTest(file=name):
                cpp = run([PATHBENCH, "compare", path, result], BAD_INPUT_SECONDS + 5)
                self.assertEqual(cpp.returncode, EXIT_BAD_INPUT, cpp.describe())
                self.assertIn(f"pathbench: error: {path}: {pointer}: ", cpp.stderr)
                py = run([PYTHON, script("spread"), path], BAD_INPUT_SECONDS + 5)
                self.assertEqual(py.returncode, EXIT_BAD_INPUT, py.describe())
                self.assertIn(f"spread.py: error: {path}: {pointer}: ", py.stderr)
                self.assertEqual(py.stdout, "")


    def test_gate_blocks_are_checked_as_in_a_result(self) -> None:
        """A baseline's per-case gate by the scenario's and the result's rule (threshold_pct and
        metrics only, percentages in (0, 1000]): issue 10's audit found spread.py accepting every
        malformed one (G3; the C++ side is fixed on its own)."""
        baseline, _ = self.promoted()
        doc = json.loads(baseline.read_text(encoding="utf-8"))
        gates = {
            "threshold_str": ({"threshold_pct": "x"}, "/threshold_pct"),
            "threshold_null": ({"threshold_pct": None}, "/threshold_pct"),
            "threshold_neg": ({"threshold_pct": -1}, "/threshold_pct"),
            "threshold_zero": ({"threshold_pct": 0}, "/threshold_pct"),
            "threshold_over": ({"threshold_pct": 1000.5}, "/threshold_pct"),
            "metrics_str": ({"metrics": "x"}, "/metrics"),
            "metrics_num": ({"metrics": 5}, "/metrics"),
            "metrics_array": ({"metrics": [1, 2]}, "/metrics"),
            "metric_str": ({"metrics": {"bandwidth": "x"}}, "/metrics/bandwidth"),
            "metric_neg": ({"metrics": {"bandwidth": -3}}, "/metrics/bandwidth"),
            "unknown_key": ({"zzz": 1}, "/zzz"),
        }
        for name, (gate, pointer) in gates.items():
            broken = json.loads(json.dumps(doc))
            for case in broken["cases"]:
                case["gate"] = gate
            path = self.tmp / f"gate_{name}.json"
            path.write_text(json.dumps(broken), encoding="utf-8")
            with self.subTest(gate=name):
                py = run([PYTHON, script("spread"), path], BAD_INPUT_SECONDS + 5)
                self.assertEqual(py.returncode, EXIT_BAD_INPUT, py.describe())
                self.assertIn(f"spread.py: error: {path}: /cases/0/gate{pointer}: ", py.stderr, py.describe())
                self.assertEqual(py.stdout, "")
        good = json.loads(json.dumps(doc))
        for case in good["cases"]:
            case["gate"] = {"threshold_pct": 12.5, "metrics": {"bandwidth": 1000}}
        path = self.tmp / "gate_good.json"
        path.write_text(json.dumps(good), encoding="utf-8")
        py = run([PYTHON, script("spread"), path], ACCEPTED_SECONDS)
        self.assertEqual(py.returncode, EXIT_OK, py.describe())
        self.assertIn("| 1000 % |", py.stdout)

    def test_run_environments_are_checked(self) -> None:
        # compare reads each run's environment for noise; spread.py refuses a malformed one there too.
        baseline, result = self.promoted()
        doc = json.loads(baseline.read_text(encoding="utf-8"))
        doc["runs"][1]["context"]["environment"] = {"start": 5}
        path = self.tmp / "run_environment.json"
        path.write_text(json.dumps(doc), encoding="utf-8")
        cpp = run([PATHBENCH, "compare", path, result], BAD_INPUT_SECONDS + 5)
        self.assertEqual(cpp.returncode, EXIT_BAD_INPUT, cpp.describe())
        self.assertIn(f"pathbench: error: {path}: /runs/1/context/environment: ", cpp.stderr, cpp.describe())
        py = run([PYTHON, script("spread"), path], BAD_INPUT_SECONDS + 5)
        self.assertEqual(py.returncode, EXIT_BAD_INPUT, py.describe())
        # Read through the binary: compare's pointer, the field named in its message.
        self.assertIn(f"spread.py: error: {path}: /runs/1/context/environment: environment JSON "
                      "/context/environment/start: ", py.stderr, py.describe())


class DistributionTest(unittest.TestCase):
    """A metric's per-operation distribution (and its histogram) is refused by every report as the
    binary refuses it: the same pointer and the same words; in a full serving result too."""

    def setUp(self) -> None:
        self._tmp = tempfile.TemporaryDirectory(prefix="pathbench-distribution-")
        self.tmp = Path(self._tmp.name)

    def tearDown(self) -> None:
        self._tmp.cleanup()

    def test_the_corpus_refusals_read_as_the_binary_words_them(self) -> None:
        names = sorted(n for n, e in EXPECTED.items()
                       if not e["valid"] and n.startswith(("distribution_", "histogram_")))
        self.assertGreaterEqual(len(names), 8)
        for name in names:
            path = corpus_dir() / name
            cpp = RUNS[(name, "export")].stderr.strip().removeprefix("pathbench: error: ")
            self.assertIn(EXPECTED[name]["pointer"], cpp)
            for tool in ("table", "plot", "html"):
                with self.subTest(file=name, tool=tool):
                    py = RUNS[(name, tool)].stderr.strip().removeprefix(f"{tool}.py: error: ")
                    self.assertTrue(py.startswith(f"{path}: "), py)
                    self.assertEqual(py, cpp)

    def test_a_serving_result_with_one_broken_histogram(self) -> None:
        """The serving fixture (27 cases, about 10 000 histogram buckets) with one edge off the grid in
        its last case: refused at that edge, within the time a refusal may take, nothing written."""
        doc = json.loads((SOURCE / "tests" / "fixtures" / "serving" / "h200-serving.json").read_text(encoding="utf-8"))
        last = len(doc["cases"]) - 1
        buckets = doc["cases"][last]["metrics"]["request_latency"]["distribution"]["histogram"]["buckets"]
        buckets[5][0] = buckets[5][0] * (1 + 2 ** -40)
        path = self.tmp / "serving.json"
        path.write_text(json.dumps(doc), encoding="utf-8")
        pointer = f"/cases/{last}/metrics/request_latency/distribution/histogram/buckets/5/0"
        cpp = run([PATHBENCH, "export", "--prometheus", "-", path], BAD_INPUT_SECONDS + 5)
        self.assertEqual(cpp.returncode, EXIT_BAD_INPUT, cpp.describe())
        self.assertIn(f"{path}: {pointer}: ", cpp.stderr)
        self.assertIn("is not a bucket edge", cpp.stderr)
        for tool in ("table", "plot", "html"):
            with self.subTest(tool=tool):
                out = self.tmp / (tool if tool == "plot" else f"{tool}.html")
                r = run(report_command(tool, path, out), BAD_INPUT_SECONDS + 5)
                self.assertEqual(r.returncode, EXIT_BAD_INPUT, r.describe())
                self.assertLess(r.seconds, BAD_INPUT_SECONDS, r.describe())
                self.assertEqual(r.stderr.strip().removeprefix(f"{tool}.py: error: "),
                                 cpp.stderr.strip().removeprefix("pathbench: error: "))
                self.assertNotIn("Traceback", r.stderr)
                self.assertEqual(r.stdout, "")
                self.assertFalse(out.exists(), f"{out} written for a refused input")


class SpecialFilesTest(unittest.TestCase):
    def setUp(self) -> None:
        self._tmp = tempfile.TemporaryDirectory(prefix="pathbench-special-")
        self.tmp = Path(self._tmp.name)
        self.good = corpus_dir() / "bom_valid.json"

    def tearDown(self) -> None:
        self._tmp.cleanup()

    def fifo(self, name: str) -> Path:
        path = self.tmp / name
        os.mkfifo(path)
        return path

    def assert_refused(self, r: Run, names: Path | str) -> None:
        self.assertFalse(r.timed_out, r.describe())
        self.assertLess(r.seconds, BAD_INPUT_SECONDS, r.describe())
        self.assertEqual(r.returncode, EXIT_BAD_INPUT, r.describe())
        self.assertIn(str(names), r.stderr, r.describe())
        self.assertNotIn("Traceback", r.stderr, r.describe())

    def test_inputs_that_are_no_regular_file(self) -> None:
        directory = self.tmp / "a_directory.json"
        directory.mkdir()
        inputs = {"fifo": self.fifo("a_fifo.json"), "directory": directory, "device": Path("/dev/zero"),
                  "missing": self.tmp / "missing.json"}
        for what, path in inputs.items():
            commands: dict[str, list[str | Path]] = {
                "export": [PATHBENCH, "export", "--prometheus", "-", path],
                **{tool: report_command(tool, path, self.tmp / f"out-{tool}-{what}")
                   for tool in (*REPORTS, "timeline")},
            }
            for tool, command in commands.items():
                with self.subTest(input=what, tool=tool):
                    r = run(command, BAD_INPUT_SECONDS + 5)
                    self.assert_refused(r, path)
                    self.assertFalse((self.tmp / f"out-{tool}-{what}").exists())

    def test_outputs_that_are_no_regular_file_are_left_alone(self) -> None:
        out_dir = self.tmp / "page.html"
        out_dir.mkdir()
        r = run([PYTHON, script("html"), self.good, "--out", out_dir], BAD_INPUT_SECONDS + 5)
        self.assert_refused(r, out_dir)
        self.assertTrue(out_dir.is_dir())
        self.assertEqual(list(out_dir.iterdir()), [])

        fifo = self.fifo("page-fifo.html")
        r = run([PYTHON, script("html"), self.good, "--out", fifo], BAD_INPUT_SECONDS + 5)
        self.assert_refused(r, fifo)
        self.assertTrue(stat.S_ISFIFO(os.lstat(fifo).st_mode))

        trace = SOURCE / "tests" / "fixtures" / "timelines" / "overlap_event_wait.trace.json"
        fifo_png = self.fifo("chart.png")
        r = run([PYTHON, script("timeline"), trace, "--out", fifo_png], BAD_INPUT_SECONDS + 5)
        self.assert_refused(r, fifo_png)
        self.assertTrue(stat.S_ISFIFO(os.lstat(fifo_png).st_mode))

        a_file = self.tmp / "plots"
        a_file.write_text("keep me\n")
        r = run([PYTHON, script("plot"), self.good, "--out", a_file], BAD_INPUT_SECONDS + 5)
        self.assert_refused(r, a_file)
        self.assertEqual(a_file.read_text(), "keep me\n")

        r = run([PYTHON, script("plot"), self.good, "--out", "/dev/null"], BAD_INPUT_SECONDS + 5)
        self.assert_refused(r, "/dev/null")
        self.assertTrue(stat.S_ISCHR(os.stat("/dev/null").st_mode))

        # One plot's target is a directory: refused before any PNG is written.
        plots = self.tmp / "plots-dir"
        (plots / "bandwidth_h2d.png").mkdir(parents=True)
        r = run([PYTHON, script("plot"), SOURCE / "tests" / "fixtures" / "results" / "h200-default.json",
                 "--out", plots], ACCEPTED_SECONDS)
        self.assertEqual(r.returncode, EXIT_BAD_INPUT, r.describe())
        self.assertIn(str(plots / "bandwidth_h2d.png"), r.stderr)
        self.assertEqual(sorted(p.name for p in plots.iterdir()), ["bandwidth_h2d.png"])
        self.assertTrue((plots / "bandwidth_h2d.png").is_dir())

    def test_outputs_are_replaced_atomically(self) -> None:
        out = self.tmp / "report" / "page.html"
        out.parent.mkdir()
        out.write_text("old\n")
        before = os.stat(out).st_ino
        link = self.tmp / "link.html"
        link.symlink_to(out)
        r = run([PYTHON, script("html"), self.good, "--out", link], ACCEPTED_SECONDS)
        self.assertEqual(r.returncode, EXIT_OK, r.describe())
        # The link is followed (as the C++ writer does) and stays a link; the target is a new file.
        self.assertTrue(link.is_symlink())
        self.assertTrue(out.read_text(encoding="utf-8").startswith("<!DOCTYPE html>"))
        self.assertNotEqual(os.stat(out).st_ino, before, "written in place, not renamed over")
        self.assertEqual(oct(os.stat(out).st_mode & 0o777), oct(0o644))
        self.assertEqual(sorted(p.name for p in out.parent.iterdir()), ["page.html"], "temporary files left")

    def test_usage_errors_exit_3(self) -> None:
        for tool in (*REPORTS, "timeline"):
            with self.subTest(tool=tool):
                r = run([PYTHON, script(tool)], BAD_INPUT_SECONDS + 5)
                self.assertEqual(r.returncode, EXIT_BAD_INPUT, r.describe())
                self.assertIn("usage:", r.stderr)
                r = run([PYTHON, script(tool), "--no-such-option", self.good], BAD_INPUT_SECONDS + 5)
                self.assertEqual(r.returncode, EXIT_BAD_INPUT, r.describe())
                r = run([PYTHON, script(tool), "--help"], BAD_INPUT_SECONDS + 5)
                self.assertEqual(r.returncode, EXIT_OK, r.describe())
        for tool in ("table", "spread"):
            with self.subTest(tool=tool, option="--filter"):
                r = run([PYTHON, script(tool), self.good, "--filter", "("], BAD_INPUT_SECONDS + 5)
                self.assertEqual(r.returncode, EXIT_BAD_INPUT, r.describe())
                self.assertIn("--filter: not a valid regular expression", r.stderr)
                self.assertNotIn("Traceback", r.stderr)


def run_environment() -> dict[str, Any]:
    """A context.environment as pathbench run writes it (inventory/environment.cpp,
    run_environment_json): two samples, the CPU share between them."""
    sample = {
        "time": "2026-11-29T14:02:11Z",
        "cpu": {"user": 1000, "nice": 0, "system": 200, "idle": 9000, "iowait": 10, "irq": 0, "softirq": 5,
                "steal": 0},
        "loadavg": [0.5, 0.4, 0.3], "cpu_governors": ["performance"],
        "gpus": [{"index": 0, "pci_bus_id": "0000:17:00.0", "source": "nvml", "clock_sm_mhz": 1980,
                  "clock_mem_mhz": 3201, "temperature_c": 31, "power_w": 74.5, "power_limit_w": 700.0,
                  "clock_event_reasons": ["gpu_idle"], "clock_event_reasons_mask": 1,
                  "processes": [{"pid": 4242, "name": "pathbench", "used_memory_bytes": 1 << 29, "self": True}],
                  "pcie_replay_counter": 0, "aer_correctable": 0, "aer_nonfatal": 0, "aer_fatal": 0}],
    }
    end = json.loads(json.dumps(sample))
    end["time"] = "2026-11-29T14:02:49Z"
    return {"start": sample, "end": end, "cpu_share": {"steal_pct": 0.0, "iowait_pct": 0.1, "busy_pct": 11.6},
            "other_gpu_processes": False}


class EnvironmentTest(unittest.TestCase):
    """context.environment (the run's noise samples) by the rules compare and baseline promote
    read it with: a malformed one is refused by the reports too (issue 10: they accepted it), the
    C++ message's inner pointer being the one the reports name; a valid or absent one is accepted."""

    def setUp(self) -> None:
        self._tmp = tempfile.TemporaryDirectory(prefix="pathbench-environment-")
        self.tmp = Path(self._tmp.name)
        self.gen = generator()

    def tearDown(self) -> None:
        self._tmp.cleanup()

    def write(self, name: str, environment: Any) -> Path:
        doc = self.gen.base()
        doc["context"]["environment"] = environment
        path = self.tmp / name
        path.write_bytes(self.gen.dump(doc))
        return path

    def test_malformed_environments_are_refused_as_compare_refuses_them(self) -> None:
        env = run_environment()

        def edited(change: Callable[[dict[str, Any]], None]) -> dict[str, Any]:
            e = json.loads(json.dumps(env))
            change(e)
            return e

        at = "/context/environment"
        cases: dict[str, tuple[Any, str]] = {
            "string": ("x", at),
            "array": ([1], at),
            "start_number": ({"start": 5}, f"{at}/start"),
            "end_string": (edited(lambda e: e.update(end="y")), f"{at}/end"),
            "time_number": (edited(lambda e: e["start"].update(time=5)), f"{at}/start/time"),
            "cpu_not_object": (edited(lambda e: e["start"].update(cpu=[1])), f"{at}/start/cpu"),
            "cpu_negative": (edited(lambda e: e["end"]["cpu"].update(user=-1)), f"{at}/end/cpu/user"),
            "cpu_fraction": (edited(lambda e: e["start"]["cpu"].update(steal=1.5)), f"{at}/start/cpu/steal"),
            "loadavg_two": (edited(lambda e: e["start"].update(loadavg=[1, 2])), f"{at}/start/loadavg"),
            "governor_number": (edited(lambda e: e["start"].update(cpu_governors=[5])),
                                f"{at}/start/cpu_governors/0"),
            "gpus_object": (edited(lambda e: e["start"].update(gpus={})), f"{at}/start/gpus"),
            "gpu_index_string": (edited(lambda e: e["start"]["gpus"][0].update(index="0")),
                                 f"{at}/start/gpus/0/index"),
            "gpu_power_string": (edited(lambda e: e["end"]["gpus"][0].update(power_w="74")),
                                 f"{at}/end/gpus/0/power_w"),
            "reason_number": (edited(lambda e: e["start"]["gpus"][0].update(clock_event_reasons=[1])),
                              f"{at}/start/gpus/0/clock_event_reasons/0"),
            "process_pid_string": (edited(lambda e: e["start"]["gpus"][0]["processes"][0].update(pid="1")),
                                   f"{at}/start/gpus/0/processes/0/pid"),
            "process_self_number": (edited(lambda e: e["start"]["gpus"][0]["processes"][0].update(self=1)),
                                    f"{at}/start/gpus/0/processes/0/self"),
            "cpu_share_number": (edited(lambda e: e.update(cpu_share=5)), f"{at}/cpu_share"),
            "steal_string": (edited(lambda e: e["cpu_share"].update(steal_pct="x")), f"{at}/cpu_share/steal_pct"),
        }
        for name, (environment, pointer) in cases.items():
            path = self.write(f"{name}.json", environment)
            with self.subTest(case=name):
                cpp = run([PATHBENCH, "compare", path, path], BAD_INPUT_SECONDS + 5)
                self.assertEqual(cpp.returncode, EXIT_BAD_INPUT, cpp.describe())
                self.assertIn(f"pathbench: error: {path}: /context/environment: environment JSON {pointer}: ",
                              cpp.stderr, cpp.describe())
                for tool in ("table", "html"):
                    out = self.tmp / f"{name}.html"
                    py = run(report_command(tool, path, out), BAD_INPUT_SECONDS + 5)
                    self.assertEqual(py.returncode, EXIT_BAD_INPUT, py.describe())
                    # The reports read through the binary: its pointer and words, as compare's.
                    self.assertIn(f"{tool}.py: error: {path}: /context/environment: environment JSON {pointer}: ",
                                  py.stderr, py.describe())
                    self.assertNotIn("Traceback", py.stderr)
                    self.assertFalse(out.exists())

    def test_valid_environments_are_accepted(self) -> None:
        env = run_environment()
        partial = {"start": {"time": "2026-11-29T14:02:11Z", "cpu": None, "loadavg": None, "gpus": []}, "end": None,
                   "cpu_share": {"steal_pct": None, "iowait_pct": None, "busy_pct": None}, "other_gpu_processes": None}
        for name, environment in (("full", env), ("partial", partial), ("null", None), ("empty", {})):
            path = self.write(f"{name}.json", environment)
            with self.subTest(case=name):
                cpp = run([PATHBENCH, "compare", path, path], BAD_INPUT_SECONDS + 5)
                self.assertIn(cpp.returncode, (0, 1, 2), cpp.describe())
                self.assertNotIn("error:", cpp.stderr, cpp.describe())
                py = run(report_command("table", path, self.tmp), ACCEPTED_SECONDS)
                self.assertEqual(py.returncode, EXIT_OK, py.describe())

    def test_a_nul_after_the_document_stays_refused(self) -> None:
        path = self.tmp / "nul_after.json"
        path.write_bytes(self.gen.dump(self.gen.base()) + b"\0{{{ garbage \"unterminated")
        py = run(report_command("table", path, self.tmp), BAD_INPUT_SECONDS + 5)
        self.assertEqual(py.returncode, EXIT_BAD_INPUT, py.describe())
        # The binary's words (reports/lib/pathbench_reader.py): "not valid JSON (byte N): ...".
        self.assertIn(f"table.py: error: {path}: /: not valid JSON", py.stderr, py.describe())


class LargeInputTest(unittest.TestCase):
    """Inputs whose size is the point (issue 10, audit G4): refused before they are read, or read
    in linear time and memory; each within 5 s and the audit's 1 GiB of address space. The big
    files are sparse or made here, in a temporary folder."""

    def setUp(self) -> None:
        self._tmp = tempfile.TemporaryDirectory(prefix="pathbench-large-")
        self.tmp = Path(self._tmp.name)
        self.gen = generator()

    def tearDown(self) -> None:
        self._tmp.cleanup()

    def assert_refused(self, r: Run, path: Path, pointer: str, says: str) -> None:
        self.assertFalse(r.timed_out, r.describe())
        self.assertLess(r.seconds, BAD_INPUT_SECONDS, r.describe())
        self.assertEqual(r.returncode, EXIT_BAD_INPUT, r.describe())
        self.assertIn(f"error: {path}: {pointer}: ", r.stderr, r.describe())
        self.assertIn(says, r.stderr, r.describe())
        for crash in ("Traceback", "internal error", "MemoryError"):
            self.assertNotIn(crash, r.stderr, r.describe())
        self.assertEqual(r.stdout, "", r.describe())

    def padded(self, name: str, size: int, doc: bytes) -> Path:
        """`doc` followed by `size` bytes in all, the rest a hole: what a file of spaces or NULs
        costs to read without costing the disk."""
        path = self.tmp / name
        with path.open("wb") as f:
            f.write(doc)
            f.truncate(size)
        return path

    def test_a_result_over_the_cap_is_refused_before_it_is_read(self) -> None:
        # A valid result, truncated (no final brace), then 640 MiB: the audit's file, sparse.
        doc = self.gen.dump(self.gen.base()).rstrip()[:-1]
        path = self.padded("huge_truncated.json", 640 << 20, doc)
        for tool in ("table", "plot", "html"):
            with self.subTest(tool=tool):
                r = run(report_command(tool, path, self.tmp / f"out-{tool}"), BAD_INPUT_SECONDS + 5, AUDIT_MEMORY)
                self.assert_refused(r, path, "/", f"more than the {MAX_INPUT_BYTES}")
                self.assertFalse((self.tmp / f"out-{tool}").exists())
        path = self.padded("just_over.json", MAX_INPUT_BYTES + 1, doc)
        r = run(report_command("table", path, self.tmp), BAD_INPUT_SECONDS + 5, AUDIT_MEMORY)
        self.assert_refused(r, path, "/", f"{MAX_INPUT_BYTES + 1} bytes, more than the {MAX_INPUT_BYTES}")

    def test_a_trace_over_the_cap_is_refused_before_it_is_read(self) -> None:
        trace = (SOURCE / "tests" / "fixtures" / "timelines" / "overlap_event_wait.trace.json").read_bytes()
        path = self.padded("huge.trace.json", MAX_TRACE_BYTES + 1, trace)
        out = self.tmp / "huge.png"
        r = run(report_command("timeline", path, out), BAD_INPUT_SECONDS + 5, AUDIT_MEMORY)
        self.assert_refused(r, path, "/", f"more than the {MAX_TRACE_BYTES}")
        self.assertFalse(out.exists())

    def test_a_truncated_result_padded_with_spaces_under_the_cap(self) -> None:
        # Read, and refused where the document breaks off; the spaces are not scanned one by one.
        doc = self.gen.dump(self.gen.base()).rstrip()[:-1]
        path = self.tmp / "padded.json"
        path.write_bytes(doc + b" " * (48 << 20))
        r = run(report_command("table", path, self.tmp), BAD_INPUT_SECONDS + 5, AUDIT_MEMORY)
        self.assert_refused(r, path, "/", "not valid JSON")

    def test_a_20_mib_case_id(self) -> None:
        """A valid 21 MB result whose case id is 20 MiB: read with memory linear in it (the depth
        check's regular expression used to take ~50 bytes a character: a gigabyte). With trailing
        garbage, the same string goes through the depth scan of a refused document."""
        doc = self.gen.base()
        doc["cases"][0]["id"] = "copy/" + "x" * (20 << 20)
        doc["cases"][1]["id"] = "copy/" + "\\n" * (1 << 20)  # escapes, scanned as one string
        path = self.tmp / "long_id.json"
        path.write_bytes(self.gen.dump(doc))
        r = run(report_command("table", path, self.tmp), ACCEPTED_SECONDS, AUDIT_MEMORY)
        self.assertEqual(r.returncode, EXIT_OK, r.describe())
        self.assertIn("| copy/xxxx", r.stdout)
        broken = self.tmp / "long_id_then_garbage.json"
        broken.write_bytes(path.read_bytes() + b"{[")
        r = run(report_command("table", broken, self.tmp), BAD_INPUT_SECONDS + 5, AUDIT_MEMORY)
        self.assert_refused(r, broken, "/", "not valid JSON")

    def test_nesting_a_million_levels_deep(self) -> None:
        # json.loads stops at ~1000 levels (RecursionError); the pointer is where C++ names it.
        for name, text in (("deep_open.json", "[" * 1_000_000), ("deep_closed.json", "[" * 500_000 + "]" * 500_000),
                           ("deep_in_string.json", '["' + "[" * 1_000_000 + '"' + "]" * 100 + "]")):
            path = self.tmp / name
            path.write_text(text)
            with self.subTest(file=name):
                r = run(report_command("table", path, self.tmp), BAD_INPUT_SECONDS + 5, AUDIT_MEMORY)
                if name == "deep_in_string.json":
                    # Brackets in a string do not nest; the hundred closers are what is wrong.
                    self.assert_refused(r, path, "/", "not valid JSON")
                else:
                    self.assert_refused(r, path, "/0" * MAX_JSON_DEPTH, "nesting deeper than 64 levels")


class FilterTest(unittest.TestCase):
    """--filter of table.py and spread.py as pathbench's (issue 10, audit G8: they used Python's
    re): RE2 syntax, refused where pathbench refuses with the same message, matched in linear
    time. The filter is read before the file, so spread.py is given any file here."""

    REFUSED = {
        "unclosed paren": "(", "unclosed class": "[a-", "lookahead": "(?=copy)", "lookbehind": "(?<=x)y",
        "backreference": r"(a)\1", "nested repeat 1000^3": "((a{1000}){1000}){1000}", "repeat beyond 1000": "a{1001}",
        "100 KB of (": "(" * 100_000, "program over 32 MiB": "\\pL{1000}" * 10, "bad escape": r"\p{Nope}",
        "possessive": "a++", "dangling backslash": "abc\\", "nul in pattern": "a\\x00(",
    }
    # Valid RE2 (pathbench list accepts them, then finds no case), each a hang or a refusal for re.
    ACCEPTED = {"nested quantifiers": "^([^!]+)+!$", "a big program": ".{1000}" * 100,
                "100 KB alternation": "|".join(["abcdefgh"] * 11_000)}

    def pathbench_says(self, pattern: str | bytes) -> str:
        r = run([PATHBENCH, "list", SOURCE / "scenarios" / "default.json", "--filter", pattern], BAD_INPUT_SECONDS + 5)
        self.assertEqual(r.returncode, EXIT_BAD_INPUT, r.describe())
        match = re.search(r"pathbench: error: --filter: (.*)", r.stderr)
        self.assertIsNotNone(match, r.describe())
        assert match is not None
        return match.group(1)

    def assert_refused_like_pathbench(self, pattern: str | bytes) -> None:
        cpp = self.pathbench_says(pattern)
        good = corpus_dir() / "bom_valid.json"
        for tool in ("table", "spread"):
            r = run([PYTHON, script(tool), good, "--filter", pattern], BAD_INPUT_SECONDS + 5)
            self.assertFalse(r.timed_out, r.describe())
            self.assertLess(r.seconds, BAD_INPUT_SECONDS, r.describe())
            self.assertEqual(r.returncode, EXIT_BAD_INPUT, r.describe())
            self.assertEqual(r.stdout, "", r.describe())
            self.assertNotIn("Traceback", r.stderr, r.describe())
            match = re.search(rf"{tool}\.py: error: --filter: (.*)", r.stderr)
            self.assertIsNotNone(match, r.describe())
            assert match is not None
            # The same refusal and RE2 error ("invalid perl operator"); what RE2 quotes after it may
            # differ between RE2 releases (the system's and the google-re2 wheel's).
            self.assertEqual(match.group(1).split(": ")[:2], cpp.split(": ")[:2], r.describe())
            self.assertLess(len(r.stderr), 1000, "a long pattern makes no long message")

    def test_what_pathbench_refuses_is_refused(self) -> None:
        for name, pattern in self.REFUSED.items():
            with self.subTest(pattern=name):
                self.assert_refused_like_pathbench(pattern)
        with self.subTest(pattern="invalid UTF-8"):
            self.assert_refused_like_pathbench(b"\xff\xfe")

    def test_what_pathbench_accepts_runs_in_linear_time(self) -> None:
        result = SOURCE / "tests" / "fixtures" / "results" / "h200-default.json"
        for name, pattern in self.ACCEPTED.items():
            with self.subTest(pattern=name):
                self.assertIn("no case matches", self.pathbench_says(pattern))
                r = run([PYTHON, script("table"), result, "--filter", pattern], BAD_INPUT_SECONDS + 5)
                self.assertFalse(r.timed_out, r.describe())
                self.assertEqual(r.returncode, EXIT_OK, r.describe())
                self.assertFalse([line for line in r.stdout.splitlines() if line.startswith("| copy/")], r.stdout)

    def test_a_filter_selects_by_partial_match(self) -> None:
        result = SOURCE / "tests" / "fixtures" / "results" / "h200-default.json"
        ids = [c["id"] for c in json.loads(result.read_text(encoding="utf-8"))["cases"]]
        for pattern, wanted in (("measure=latency", [i for i in ids if "measure=latency" in i]),
                                ("^host_memory/", [i for i in ids if i.startswith("host_memory/")]),
                                (r"bytes=4$", [i for i in ids if i.endswith("bytes=4")]),
                                ("", ids)):
            with self.subTest(pattern=pattern):
                r = run([PYTHON, script("table"), result, "--filter", pattern, "--skipped"], ACCEPTED_SECONDS)
                self.assertEqual(r.returncode, EXIT_OK, r.describe())
                shown = {line.split(" | ")[0].removeprefix("| ") for line in r.stdout.splitlines()
                         if line.startswith("| ") and not line.startswith("| case |")}
                self.assertEqual(shown, set(wanted), r.stdout)
                self.assertTrue(wanted)


# Runs under --python: write_atomically stalled after its data is on disk, so that a stop signal
# arrives while the temporary file exists. argv: reports/lib, the target.
STALLED_WRITE = r"""
import os, sys, time
sys.path.insert(0, sys.argv[1])
import pathbench_result_file as rf
from pathlib import Path
real_fsync = os.fsync
def stalled_fsync(fd):
    real_fsync(fd)
    print("writing", flush=True)
    time.sleep(60)
os.fsync = stalled_fsync
rf.run_main("stalled", lambda: rf.write_atomically(Path(sys.argv[2]), b"x" * 4096) or 0)
"""


def temporary_files(folder: Path) -> list[str]:
    """What an atomic write leaves while it runs: ".NAME.tmp-HOST-PID.XXXXXX" (the C++ writer's
    naming, reports/lib the same), or the older reports' ".NAME.XXXXXXXX.tmp"."""
    return sorted(p.name for p in folder.iterdir() if p.name.startswith(".") and ".tmp" in p.name)


class StopSignalTest(unittest.TestCase):
    """A report stopped by SIGINT, SIGTERM or SIGHUP leaves no temporary file; what a killed one
    (SIGKILL) left is removed by the next write of the same output (issue 10, audit G6: plot.py
    killed by timeout left .host_memory.png.478er4y8.tmp, and the next run kept it)."""

    def setUp(self) -> None:
        self._tmp = tempfile.TemporaryDirectory(prefix="pathbench-signals-")
        self.tmp = Path(self._tmp.name)

    def tearDown(self) -> None:
        self._tmp.cleanup()

    def test_a_stop_signal_during_a_write_removes_the_temporary_file(self) -> None:
        for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            folder = self.tmp / signum.name
            folder.mkdir()
            target = folder / "out.png"
            with self.subTest(signal=signum.name):
                proc = subprocess.Popen([PYTHON, "-c", STALLED_WRITE, SOURCE / "reports" / "lib", target],
                                        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                try:
                    self.assertEqual(proc.stdout.readline().strip() if proc.stdout else "", "writing")
                    (tmp,) = temporary_files(folder)
                    self.assertRegex(tmp, rf"^\.out\.png\.tmp-.+-{proc.pid}\.[A-Za-z0-9]{{6}}$")
                    proc.send_signal(signum)
                    _, err = proc.communicate(timeout=30)
                finally:
                    proc.kill()
                    proc.wait()
                self.assertEqual(proc.returncode, 128 + signum, err)
                self.assertIn(f"stalled: stopped by {signum.name}", err)
                self.assertNotIn("Traceback", err)
                self.assertEqual(sorted(p.name for p in folder.iterdir()), [], "temporary file left")

    def test_a_report_stopped_by_sigterm_leaves_nothing_half_written(self) -> None:
        # plot.py writes six PNGs: stopped as the first appears, in the middle of the writes or of
        # the drawing, it leaves whole PNGs only.
        out = self.tmp / "plots"
        env = dict(os.environ, MPLBACKEND="Agg", MPLCONFIGDIR=MPL_CONFIG.name)
        proc = subprocess.Popen([PYTHON, script("plot"), SOURCE / "tests" / "fixtures" / "results" / "h200-default.json",
                                 "--out", out], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        try:
            deadline = time.monotonic() + ACCEPTED_SECONDS
            while proc.poll() is None and time.monotonic() < deadline and not (out.is_dir() and any(out.iterdir())):
                time.sleep(0.005)
            proc.send_signal(signal.SIGTERM)
            _, err = proc.communicate(timeout=60)
        finally:
            proc.kill()
            proc.wait()
        if proc.returncode != 0:  # 0: it finished before the signal came
            self.assertEqual(proc.returncode, 128 + signal.SIGTERM, err)
            self.assertIn("plot.py: stopped by SIGTERM", err)
        self.assertNotIn("Traceback", err)
        self.assertEqual(temporary_files(out) if out.exists() else [], [])
        for png in out.glob("*.png") if out.exists() else []:
            self.assertEqual(png.read_bytes()[:8], b"\x89PNG\r\n\x1a\n", png)

    def test_stale_temporary_files_of_the_output_are_removed_on_the_next_write(self) -> None:
        gone = subprocess.Popen(["true"])
        gone.wait()
        host = os.uname().nodename.replace("/", "_") or "host"
        names = {
            "dead": f".chart.png.tmp-{host}-{gone.pid}.abc123",
            "old_legacy": ".chart.png.478er4y8.tmp",
            "live": f".chart.png.tmp-{host}-{os.getpid()}.abc123",
            "other_host": f".chart.png.tmp-elsewhere-{gone.pid}.abc123",
            "fresh_legacy": ".chart.png.9xk2m1qa.tmp",
            "other_output": f".other.png.tmp-{host}-{gone.pid}.abc123",
        }
        for name in names.values():
            (self.tmp / name).write_bytes(b"half a PNG")
        hour_ago = time.time() - 3600
        os.utime(self.tmp / names["old_legacy"], (hour_ago, hour_ago))
        trace = SOURCE / "tests" / "fixtures" / "timelines" / "overlap_event_wait.trace.json"
        r = run([PYTHON, script("timeline"), trace, "--out", self.tmp / "chart.png"], ACCEPTED_SECONDS)
        self.assertEqual(r.returncode, EXIT_OK, r.describe())
        kept = {names[k] for k in ("live", "other_host", "fresh_legacy", "other_output")}
        self.assertEqual(sorted(p.name for p in self.tmp.iterdir()), sorted(kept | {"chart.png"}))


def main() -> int:
    global PATHBENCH, PYTHON, SOURCE
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pathbench", required=True, type=Path, help="the pathbench binary")
    parser.add_argument("--python", required=True, help="interpreter with reports/requirements.txt installed")
    parser.add_argument("--source", required=True, type=Path, help="the repository root")
    args, rest = parser.parse_known_args()
    PATHBENCH = args.pathbench.resolve()
    if not os.access(PATHBENCH, os.X_OK):
        print(f"{Path(sys.argv[0]).name}: {PATHBENCH} is not an executable", file=sys.stderr)
        return 2
    # The scripts read pathbench's files through this binary (reports/lib/pathbench_reader.py).
    os.environ["PATHBENCH"] = str(PATHBENCH)
    PYTHON = args.python
    SOURCE = args.source.resolve()
    start = time.monotonic()
    program = unittest.main(argv=[sys.argv[0], *rest], exit=False, verbosity=2)
    print(f"{Path(sys.argv[0]).name}: {time.monotonic() - start:.1f} s", file=sys.stderr)
    return 0 if program.result.wasSuccessful() else 1


if __name__ == "__main__":
    sys.exit(main())
