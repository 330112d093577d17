#!/usr/bin/env python3
"""End-to-end test of `pathbench export RESULT --prometheus FILE` against the real consumers.

    python3 tests/e2e/test_prometheus.py --pathbench build/pathbench --source . [unittest args]

Runs a tiny host-only scenario (plus one small copy case, skipped without a GPU), exports the
result, and checks the file the way production reads it; the same for the serving fixture
(tests/fixtures/serving/h200-serving.json: per-operation distributions, exported as histograms
and percentile gauges, and the pinned-pool metrics):
  (a) `promtool check metrics` (Debian package `prometheus`) must accept it without a complaint;
  (b) a real `prometheus-node-exporter` (Debian package of that name), started here as a child
      process with only the textfile collector, on a free loopback port, must serve every
      pathbench series with the value the result JSON holds, and report
      node_textfile_scrape_error 0.
Both tools are required: when one is missing the test FAILS and says how to install it
(scripts/setup.sh installs both). Standard library only.
"""
from __future__ import annotations

import json
import math
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import unittest
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import harness

# Set by main() from --pathbench / --source.
PATHBENCH: Path = Path("pathbench")
SOURCE: Path = Path(".")

EXIT_OK = 0
EXIT_FAILURE = 1
EXIT_BAD_INPUT = 3
SCENARIO_SCHEMA = "pathbench.scenario/v1"
SCRAPE_DEADLINE_S = 10.0
NODE_EXPORTER_CANDIDATES = ("/usr/bin/prometheus-node-exporter", "prometheus-node-exporter",
                            "node_exporter")

# Result unit -> (metric-name suffix, factor to the base unit); mirrors src/export/prometheus.cpp.
UNITS: dict[str, tuple[str, float]] = {
    "GB/s": ("bytes_per_second", 1e9),
    "s": ("seconds", 1.0),
    "s/GiB": ("seconds_per_byte", 1.0 / 2**30),
}

Labels = dict[str, str]
Sample = tuple[str, Labels, float]

SAMPLE_RE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)(?:\s+\S+)?$')
LABEL_RE = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"\s*,?')


def run_pb(*args: str | os.PathLike[str], timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(PATHBENCH), *map(str, args)], capture_output=True, text=True,
                          timeout=timeout, check=False)


def describe(proc: subprocess.CompletedProcess[str]) -> str:
    return (f"command: {' '.join(map(str, proc.args))}\nexit: {proc.returncode}\n"
            f"stdout:\n{proc.stdout}\nstderr:\n{proc.stderr}")


def unescape(value: str) -> str:
    return re.sub(r'\\(.)', lambda m: "\n" if m.group(1) == "n" else m.group(1), value)


def parse_exposition(text: str) -> list[Sample]:
    """Sample lines of a text exposition; labels with empty values dropped (Prometheus treats
    them as absent, and node_exporter may or may not write them)."""
    samples: list[Sample] = []
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        m = SAMPLE_RE.match(line)
        if m is None:
            raise ValueError(f"not a sample line: {line!r}")
        labels = {k: unescape(v) for k, v in LABEL_RE.findall(m.group(2) or "")}
        samples.append((m.group(1), {k: v for k, v in labels.items() if v}, float(m.group(3))))
    return samples


def find(samples: list[Sample], name: str, labels: Labels) -> list[float]:
    want = {k: v for k, v in labels.items() if v}
    return [v for n, lab, v in samples if n == name and lab == want]


def label_text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def expected_series(result: dict[str, Any]) -> list[Sample]:
    """Every value series the export must contain for this result: medians in base units."""
    context = result["context"]
    run_labels = {"gpu": label_text(context.get("device")), "node_type": context["node_type"]}
    out: list[Sample] = []
    for case in result["cases"]:
        if case["status"] != "ok":
            continue
        labels = {k: label_text(v) for k, v in case["params"].items()} | run_labels
        for metric, m in case["metrics"].items():
            suffix, factor = UNITS[m["unit"]]
            stem = "cost" if metric == "seconds_per_gib" else metric
            name = f"pathbench_{case['family']}_{stem}_{suffix}"
            out.append((name, labels, m["stats"]["median"] * factor))
    return out


def free_loopback_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def node_exporter_binary() -> str | None:
    for candidate in NODE_EXPORTER_CANDIDATES:
        found = shutil.which(candidate)
        if found:
            return found
    return None


def promtool_check(test: unittest.TestCase, text: str) -> None:
    """`promtool check metrics` accepts `text` without a complaint (lint findings included)."""
    promtool = shutil.which("promtool")
    if promtool is None:
        test.fail("promtool not found on PATH: install it with `apt-get install -y "
                  "prometheus` (Debian/Ubuntu; scripts/setup.sh installs it for the tests)")
    proc = subprocess.run([promtool, "check", "metrics"], input=text,
                          capture_output=True, text=True, timeout=60, check=False)
    print(f"\npromtool check metrics: exit {proc.returncode}, output "
          f"{(proc.stdout + proc.stderr).strip()!r}", file=sys.stderr)
    test.assertEqual(proc.returncode, 0, describe(proc))
    # Lint findings (naming, units) are printed even where the exit code is 0 in some
    # promtool versions: the file must have none.
    test.assertEqual((proc.stdout + proc.stderr).strip(), "", describe(proc))


def scrape(test: unittest.TestCase, port: int, proc: subprocess.Popen[bytes], log_path: Path) -> str:
    # Loopback only: bypass any http_proxy the environment sets.
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    url = f"http://127.0.0.1:{port}/metrics"
    deadline = time.monotonic() + SCRAPE_DEADLINE_S
    last_error = ""
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            test.fail(f"node_exporter exited with {proc.returncode}:\n{log_path.read_text()}")
        try:
            with opener.open(url, timeout=2) as response:
                body = response.read().decode("utf-8")
            if "node_textfile_scrape_error" in body:
                return body
            last_error = "no node_textfile_scrape_error in the response"
        except (urllib.error.URLError, ConnectionError, OSError) as e:
            last_error = str(e)
        time.sleep(0.2)
    test.fail(f"no scrape from {url} within {SCRAPE_DEADLINE_S} s ({last_error});\n"
              f"node_exporter log:\n{log_path.read_text()}")


def node_exporter_samples(test: unittest.TestCase, prom_path: Path, root: Path) -> list[Sample]:
    """Serves `prom_path` through a real node_exporter (textfile collector only) and returns
    what it serves, after checking that it took the file without an error."""
    binary = node_exporter_binary()
    if binary is None:
        test.fail("prometheus-node-exporter not found (looked for "
                  f"{', '.join(NODE_EXPORTER_CANDIDATES)}): install it with `apt-get install "
                  "-y prometheus-node-exporter` (scripts/setup.sh installs it for the tests)")
    textfile_dir = root / "textfile"
    textfile_dir.mkdir()
    shutil.copy(prom_path, textfile_dir / "pathbench.prom")
    port = free_loopback_port()
    log_path = root / "node_exporter.log"
    with open(log_path, "w") as log:
        proc = subprocess.Popen(
            [binary, f"--collector.textfile.directory={textfile_dir}",
             f"--web.listen-address=127.0.0.1:{port}", "--collector.disable-defaults",
             "--collector.textfile"],
            stdout=log, stderr=subprocess.STDOUT)
    try:
        body = scrape(test, port, proc, log_path)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=5)
    samples = parse_exposition(body)
    log_text = log_path.read_text()
    test.assertEqual(find(samples, "node_textfile_scrape_error", {}), [0.0],
                     f"node_exporter log:\n{log_text}")
    # A duplicate series or inconsistent family is dropped at gather time with an error in
    # the log while node_textfile_scrape_error stays 0: the log must be clean too.
    test.assertNotIn("level=error", log_text)
    pathbench = [s for s in samples if s[0].startswith("pathbench_")]
    print(f"\nnode_exporter on 127.0.0.1:{port} served {len(pathbench)} pathbench series, "
          "node_textfile_scrape_error 0", file=sys.stderr)
    return samples


class PrometheusExport(unittest.TestCase):
    tmp: tempfile.TemporaryDirectory[str]
    root: Path
    result_path: Path
    prom_path: Path
    run_proc: subprocess.CompletedProcess[str]
    export_proc: subprocess.CompletedProcess[str]
    result: dict[str, Any]
    text: str

    @classmethod
    def setUpClass(cls) -> None:
        cls.tmp = tempfile.TemporaryDirectory(prefix="pathbench_prom_")
        cls.root = Path(cls.tmp.name)
        scenario = {
            "schema": SCENARIO_SCHEMA,
            "scenarios": [
                {"name": "memcpy", "family": "host_memory", "repetitions": 5, "min_time": 0.01,
                 "axes": {"measure": ["memcpy"], "page": ["4k"], "bytes": ["1MiB"]}},
                {"name": "first-touch", "family": "host_memory", "repetitions": 5,
                 "min_time": 0.01,
                 "axes": {"measure": ["first_touch"], "page": ["4k"], "bytes": ["16MiB"]}},
                # Skipped on a machine without a GPU: exercises the status-only path there.
                {"name": "copy", "family": "copy", "repetitions": 5, "min_time": 0.01,
                 "axes": {"measure": ["bandwidth"], "direction": ["h2d"],
                          "host_memory": ["pinned"], "host_node": ["local"],
                          "bytes": ["64KiB"]}},
            ],
        }
        scenario_path = cls.root / "tiny.json"
        scenario_path.write_text(json.dumps(scenario, indent=2))
        cls.result_path = cls.root / "result.json"
        cls.prom_path = cls.root / "export" / "pathbench.prom"
        cls.run_proc = run_pb("run", scenario_path, "--out", cls.result_path)
        cls.result = (json.loads(cls.result_path.read_text())
                      if cls.result_path.is_file() else {})
        cls.export_proc = run_pb("export", cls.result_path, "--prometheus", cls.prom_path)
        cls.text = cls.prom_path.read_text() if cls.prom_path.is_file() else ""

    @classmethod
    def tearDownClass(cls) -> None:
        cls.tmp.cleanup()

    def setUp(self) -> None:
        # A failed case (say, the copy case on a broken GPU) still yields a result to export.
        self.assertIn(self.run_proc.returncode, (EXIT_OK, EXIT_FAILURE), describe(self.run_proc))
        self.assertTrue(self.result, f"no result written\n{describe(self.run_proc)}")
        self.assertEqual(self.export_proc.returncode, EXIT_OK, describe(self.export_proc))

    def test_host_cases_ran(self) -> None:
        host = [c for c in self.result["cases"] if c["family"] == "host_memory"]
        self.assertEqual(len(host), 2)
        for case in host:
            self.assertEqual(case["status"], "ok", case)

    def test_export_output(self) -> None:
        self.assertIn(str(self.prom_path), self.export_proc.stdout)
        self.assertTrue(self.text.endswith("\n"))
        self.assertEqual(sorted(p.name for p in self.prom_path.parent.iterdir()),
                         ["pathbench.prom"], "no temporary file left beside the export")

    def test_stdout_export_is_identical(self) -> None:
        proc = run_pb("export", self.result_path, "--prometheus", "-")
        self.assertEqual(proc.returncode, EXIT_OK, describe(proc))
        self.assertEqual(proc.stdout, self.text)

    def test_promtool_check_metrics(self) -> None:
        promtool_check(self, self.text)

    def test_file_holds_every_value(self) -> None:
        self.check_values(parse_exposition(self.text), "the .prom file")

    def test_status_for_every_case_and_no_values_for_others(self) -> None:
        samples = parse_exposition(self.text)
        context = self.result["context"]
        statuses = [s for s in samples if s[0] == "pathbench_case_status"]
        self.assertEqual(len(statuses), len(self.result["cases"]))
        for case in self.result["cases"]:
            labels = {"id": case["id"], "family": case["family"], "status": case["status"],
                      "gpu": label_text(context.get("device")), "node_type": context["node_type"]}
            self.assertEqual(find(samples, "pathbench_case_status", labels), [1.0], case["id"])
            if case["status"] == "ok":
                continue
            params = {k: label_text(v) for k, v in case["params"].items()}
            for name, labels_, _ in samples:
                if name.startswith(f"pathbench_{case['family']}_"):
                    self.assertFalse(params.items() <= labels_.items(),
                                     f"{case['status']} case {case['id']} has a series {name}")

    def test_info_and_timestamps(self) -> None:
        samples = parse_exposition(self.text)
        context = self.result["context"]
        info = [lab for name, lab, v in samples if name == "pathbench_info" and v == 1.0]
        self.assertEqual(len(info), 1)
        for key in ("tool_version", "git_sha", "node_type", "topology_fingerprint", "hostname",
                    "kernel"):
            self.assertEqual(info[0].get(key, ""), label_text(context.get(key)), key)
        end = [v for name, _, v in samples if name == "pathbench_result_end_timestamp_seconds"]
        self.assertEqual(len(end), 1)
        self.assertLess(abs(end[0] - time.time()), 3600, "end time is about now")

    def test_node_exporter_serves_the_file(self) -> None:
        samples = node_exporter_samples(self, self.prom_path, self.root)
        pathbench = [s for s in samples if s[0].startswith("pathbench_")]
        self.assertEqual(len(pathbench), len(parse_exposition(self.text)))
        self.check_values(samples, "node_exporter's /metrics")

    def check_values(self, samples: list[Sample], where: str) -> None:
        expected = expected_series(self.result)
        self.assertGreaterEqual(len(expected), 4, "memcpy: 2 metrics, first_touch: 2 metrics")
        for name, labels, value in expected:
            found = find(samples, name, labels)
            self.assertEqual(len(found), 1, f"{where}: {name}{labels}: {found}")
            self.assertTrue(math.isclose(found[0], value, rel_tol=1e-12),
                            f"{where}: {name}{labels} = {found[0]}, result says {value}")


# The fixed bucket bounds of every exported histogram (src/export/prometheus.cpp), then +Inf.
LATENCY_BOUNDS = (1e-6, 2e-6, 5e-6, 1e-5, 2e-5, 5e-5, 1e-4, 2e-4, 5e-4, 1e-3, 2e-3, 5e-3, 1e-2,
                  2e-2, 5e-2, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0)
STATISTICS = ("p50", "p90", "p99", "p99.9", "max")
# The serving family's pinned-pool metrics: exported name; the value is the samples' median.
SERVING_POOL_NAMES = {
    "pool_high_water": "pathbench_serving_pinned_pool_high_water_bytes",
    "pool_waits": "pathbench_serving_pinned_pool_waits",
    "pool_wait_time": "pathbench_serving_pinned_pool_wait_seconds",
    "pageable_fallbacks": "pathbench_serving_pageable_fallbacks",
}
# The serving fixture's other gauges: metric -> exported name (generic rule: unit spelled out).
SERVING_GAUGES = {
    "throughput": "pathbench_serving_throughput_requests_per_second",
    "copies_issued": "pathbench_serving_copies_issued_copies",
}


def cumulative_at(histogram: dict[str, Any], le: float) -> int:
    """Operations <= le, from the result's buckets: a bucket counts when its upper edge is <= le,
    and every operation counts at an le >= the maximum (LatencyHistogram::cumulative_buckets)."""
    if le >= histogram["max"]:
        return int(histogram["count"])
    return sum(int(n) for edge, n in histogram["buckets"] if edge <= le)


class PrometheusDistributionExport(unittest.TestCase):
    """The serving fixture: per-operation metrics as histograms and percentile gauges."""
    tmp: tempfile.TemporaryDirectory[str]
    root: Path
    fixture: Path
    prom_path: Path
    export_proc: subprocess.CompletedProcess[str]
    result: dict[str, Any]
    text: str

    @classmethod
    def setUpClass(cls) -> None:
        cls.tmp = tempfile.TemporaryDirectory(prefix="pathbench_prom_dist_")
        cls.root = Path(cls.tmp.name)
        cls.fixture = SOURCE / "tests" / "fixtures" / "serving" / "h200-serving.json"
        cls.result = json.loads(cls.fixture.read_text(encoding="utf-8"))
        cls.prom_path = cls.root / "serving.prom"
        cls.export_proc = run_pb("export", cls.fixture, "--prometheus", cls.prom_path)
        cls.text = cls.prom_path.read_text() if cls.prom_path.is_file() else ""

    @classmethod
    def tearDownClass(cls) -> None:
        cls.tmp.cleanup()

    def setUp(self) -> None:
        self.assertEqual(self.export_proc.returncode, EXIT_OK, describe(self.export_proc))

    def case_labels(self, case: dict[str, Any]) -> Labels:
        # The fixture's context has one GPU and no "device": its index is the gpu label.
        context = self.result["context"]
        return ({k: label_text(v) for k, v in case["params"].items()}
                | {"gpu": label_text(context["gpus"][0]["index"]), "node_type": context["node_type"]})

    def distribution_metrics(self) -> list[tuple[dict[str, Any], str, dict[str, Any]]]:
        out = [(case, name, m) for case in self.result["cases"]
               for name, m in case["metrics"].items() if "distribution" in m]
        serving = [c for c in self.result["cases"] if c["family"] == "serving" and c["status"] == "ok"]
        self.assertGreater(len(serving), 1)
        self.assertEqual(len(out), 2 * len(serving), "h2d_latency and request_latency per case")
        return out

    def test_promtool_check_metrics(self) -> None:
        promtool_check(self, self.text)

    def test_histogram_and_percentile_families_are_typed(self) -> None:
        for metric in ("h2d_latency", "request_latency"):
            family = f"pathbench_serving_{metric}_seconds"
            self.assertIn(f"\n# TYPE {family} histogram\n", self.text)
            self.assertIn(f"\n# TYPE {family[:-len('_seconds')]}_percentile_seconds gauge\n",
                          self.text)
            # The plain median gauge would reuse the histogram's name: it is not written.
            self.assertNotRegex(self.text, rf"(?m)^{family}[{{ ]")
        for name in list(SERVING_POOL_NAMES.values()) + list(SERVING_GAUGES.values()):
            self.assertIn(f"\n# TYPE {name} gauge\n", self.text)

    def test_file_holds_every_value(self) -> None:
        self.check_values(parse_exposition(self.text), "the .prom file")

    def test_node_exporter_serves_the_file(self) -> None:
        samples = node_exporter_samples(self, self.prom_path, self.root)
        pathbench = [s for s in samples if s[0].startswith("pathbench_")]
        self.assertEqual(len(pathbench), len(parse_exposition(self.text)))
        self.check_values(samples, "node_exporter's /metrics")

    def check_values(self, samples: list[Sample], where: str) -> None:
        for case, metric, m in self.distribution_metrics():
            labels = self.case_labels(case)
            distribution = m["distribution"]
            histogram = distribution["histogram"]
            family = f"pathbench_serving_{metric}_seconds"
            buckets = sorted((float(lab["le"]), v) for n, lab, v in samples
                             if n == family + "_bucket"
                             and {k: x for k, x in lab.items() if k != "le"} == labels)
            self.assertEqual([le for le, _ in buckets], [*LATENCY_BOUNDS, math.inf],
                             f"{where}: {family}_bucket bounds of {case['id']}")
            for le, count in buckets:
                self.assertEqual(count, cumulative_at(histogram, le) if le != math.inf
                                 else histogram["count"], f"{where}: {family}_bucket{{le={le}}}")
            self.assertEqual([c for _, c in buckets], sorted(c for _, c in buckets),
                             "cumulative counts never decrease")
            self.assertLess(0, buckets[-2][1], "the latencies lie inside the bounds")
            self.assertEqual(find(samples, family + "_count", labels), [float(histogram["count"])],
                             where)
            self.assertEqual(histogram["count"], distribution["operations"])
            total = find(samples, family + "_sum", labels)
            self.assertEqual(len(total), 1, f"{where}: {family}_sum {labels}")
            self.assertTrue(math.isclose(total[0], histogram["sum"], rel_tol=1e-12), where)
            percentile = f"pathbench_serving_{metric}_percentile_seconds"
            for statistic in STATISTICS:
                found = find(samples, percentile, labels | {"statistic": statistic})
                self.assertEqual(len(found), 1, f"{where}: {percentile} {statistic} {labels}")
                self.assertTrue(math.isclose(found[0], distribution[statistic], rel_tol=1e-12),
                                f"{where}: {percentile}{{statistic={statistic}}} = {found[0]}, "
                                f"result says {distribution[statistic]}")
        pooled = 0
        for case in self.result["cases"]:
            labels = self.case_labels(case)
            for metric, m in case["metrics"].items():
                name = SERVING_POOL_NAMES.get(metric) or SERVING_GAUGES.get(metric)
                if name is None:
                    continue
                pooled += metric in SERVING_POOL_NAMES
                found = find(samples, name, labels)
                self.assertEqual(len(found), 1, f"{where}: {name}{labels}: {found}")
                self.assertTrue(math.isclose(found[0], m["stats"]["median"], rel_tol=1e-12),
                                f"{where}: {name}{labels} = {found[0]}, result says "
                                f"{m['stats']['median']}")
        pool_cases = sum(1 for c in self.result["cases"] if "pageable_fallbacks" in c["metrics"])
        self.assertGreater(pool_cases, 0)
        self.assertEqual(pooled, 4 * pool_cases, "each pooled case has the four pool metrics")


class ExportBadInput(unittest.TestCase):
    tmp: tempfile.TemporaryDirectory[str]
    root: Path

    def setUp(self) -> None:
        self.tmp = tempfile.TemporaryDirectory(prefix="pathbench_prom_bad_")
        self.root = Path(self.tmp.name)

    def tearDown(self) -> None:
        self.tmp.cleanup()

    def test_missing_result(self) -> None:
        missing = self.root / "nope.json"
        proc = run_pb("export", missing, "--prometheus", self.root / "x.prom")
        self.assertEqual(proc.returncode, EXIT_BAD_INPUT, describe(proc))
        self.assertIn(str(missing), proc.stderr)
        self.assertFalse((self.root / "x.prom").exists())

    def test_not_json(self) -> None:
        bad = self.root / "bad.json"
        bad.write_text("{ not json")
        proc = run_pb("export", bad, "--prometheus", self.root / "x.prom")
        self.assertEqual(proc.returncode, EXIT_BAD_INPUT, describe(proc))
        self.assertIn(str(bad), proc.stderr)

    def test_not_a_result(self) -> None:
        bad = self.root / "scenario.json"
        bad.write_text(json.dumps({"schema": SCENARIO_SCHEMA, "scenarios": []}))
        proc = run_pb("export", bad, "--prometheus", self.root / "x.prom")
        self.assertEqual(proc.returncode, EXIT_BAD_INPUT, describe(proc))
        self.assertIn(str(bad), proc.stderr)

    def test_unwritable_output(self) -> None:
        fixtures = SOURCE / "tests" / "fixtures" / "results"
        results = sorted(fixtures.glob("*.json")) if fixtures.is_dir() else []
        good = next((p for p in results if run_pb("export", p, "--prometheus", "-").returncode
                     == EXIT_OK), None)
        if good is None:  # no usable fixture: make one
            good = self.root / "r.json"
            scenario = self.root / "s.json"
            scenario.write_text(json.dumps({"schema": SCENARIO_SCHEMA, "scenarios": [
                {"name": "m", "family": "host_memory", "repetitions": 1, "min_time": 0.001,
                 "axes": {"measure": ["memcpy"], "page": ["4k"], "bytes": ["4KiB"]}}]}))
            self.assertEqual(run_pb("run", scenario, "--out", good).returncode, EXIT_OK)
        blocker = self.root / "a_file"
        blocker.write_text("")
        out = blocker / "x.prom"  # a path under a regular file can never be created
        proc = run_pb("export", good, "--prometheus", out)
        self.assertEqual(proc.returncode, EXIT_BAD_INPUT, describe(proc))
        self.assertIn(str(out), proc.stderr)
        self.assertIn("cannot write", proc.stderr)

    def test_missing_prometheus_option_is_usage_error(self) -> None:
        proc = run_pb("export", self.root / "r.json")
        self.assertEqual(proc.returncode, EXIT_BAD_INPUT, describe(proc))


def main() -> int:
    global PATHBENCH, SOURCE
    PATHBENCH, SOURCE, rest = harness.parse_binary_args(__doc__.splitlines()[0])
    return harness.run_unittests(rest)


if __name__ == "__main__":
    sys.exit(main())
