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
Every series that belongs to a GPU carries dcgm-exporter's labels (gpu, UUID, pci_bus_id,
modelName, Hostname), host series (host_memory) Hostname and no GPU labels, and no metric name
holds a GPU index. The same checks run on the export of every fixture result
(tests/fixtures/results, tests/fixtures/serving and tests/fixtures/prometheus, the last a two-GPU
node with a gpus=all copy case), and two per-GPU files of one node are served side by side.
The dashboard (ci/grafana/pathbench-dashboard.json) and the alert rules
(ci/prometheus/pathbench-alerts.yml) are checked against what the exporter writes for those
fixtures: every metric and label name they use exists in the exports, every PromQL expression
parses (promtool check rules), and `promtool test rules` runs the rules' unit tests
(ci/prometheus/pathbench-alerts.test.yml: the alerts fire on bad series and on no others).
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
    "ratio": ("ratio", 1.0),
}
# dcgm-exporter's labels of a GPU's series (but `device`: see README, Exports), and the run's.
GPU_LABELS = ("gpu", "UUID", "pci_bus_id", "modelName")
HOST_ONLY_FAMILIES = {"host_memory"}
PER_GPU_METRIC_RE = re.compile(r"^(.+)_gpu(\d+)((?:_.*)?)$")
GPU_IN_NAME_RE = re.compile(r"_gpu\d")

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


def parse_exposition(text: str, keep_empty: bool = False) -> list[Sample]:
    """Sample lines of a text exposition; labels with empty values dropped (Prometheus treats
    them as absent, and node_exporter may or may not write them) unless `keep_empty`."""
    samples: list[Sample] = []
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        m = SAMPLE_RE.match(line)
        if m is None:
            raise ValueError(f"not a sample line: {line!r}")
        labels = {k: unescape(v) for k, v in LABEL_RE.findall(m.group(2) or "")}
        samples.append((m.group(1), {k: v for k, v in labels.items() if v or keep_empty},
                        float(m.group(3))))
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


def dcgm_pci_bus_id(text: str) -> str:
    """NVML's (dcgm-exporter's) spelling of a bus id: 8-digit domain, upper-case hex."""
    m = re.fullmatch(r"([0-9a-fA-F]{1,8}):([0-9a-fA-F]{2}):([0-9a-fA-F]{2})\.([0-9a-fA-F])", text)
    if m is None:
        return text
    return f"{m.group(1).zfill(8)}:{m.group(2)}:{m.group(3)}.{m.group(4)}".upper()


def run_device(context: dict[str, Any]) -> str:
    """The run's CUDA device: context "device", else the only GPU's index, else none."""
    if context.get("device") is not None:
        return label_text(context["device"])
    gpus = context.get("gpus") or []
    return label_text(gpus[0].get("index")) if len(gpus) == 1 else ""


def gpu_labels(context: dict[str, Any], index: str) -> Labels:
    """dcgm-exporter's labels of GPU `index` (a CUDA index; "" = the run's device)."""
    index = index or run_device(context)
    for g in context.get("gpus") or []:
        if label_text(g.get("index")) == index and index:
            return {"gpu": index, "UUID": label_text(g.get("uuid")),
                    "pci_bus_id": dcgm_pci_bus_id(label_text(g.get("pci_bus_id"))),
                    "modelName": label_text(g.get("name"))}
    return {"gpu": index}


def run_labels(context: dict[str, Any]) -> Labels:
    """The labels of every series: the host, its type, the run's device."""
    return {"Hostname": label_text(context.get("hostname")),
            "node_type": label_text(context.get("node_type")), "run_gpu": run_device(context)}


def case_gpu(case: dict[str, Any]) -> str:
    """The GPU a case ran on: its "device" param, a peer pair's source, else the run's."""
    params = case["params"]
    if isinstance(params.get("device"), int):
        return str(params["device"])
    pair = params.get("pair")
    if case["family"] == "peer" and isinstance(pair, str) and re.fullmatch(r"\d+-.*", pair):
        return pair.split("-")[0]
    return ""


# Labels the exporter writes itself (and dcgm-exporter's `device`): a param so named is
# exported as param_<name>.
RESERVED_LABELS = {"gpu", "UUID", "pci_bus_id", "modelName", "Hostname", "device", "node_type",
                   "run_gpu", "le", "percentile", "statistic"}


def param_labels(case: dict[str, Any]) -> Labels:
    return {(f"param_{k}" if k in RESERVED_LABELS else k): label_text(v)
            for k, v in case["params"].items()}


def metric_name(family: str, metric: str, unit: str) -> str:
    suffix, _ = UNITS[unit]
    stem = "cost" if metric == "seconds_per_gib" else metric
    name = f"pathbench_{family}_{stem}"
    return name if name.endswith("_" + suffix) else f"{name}_{suffix}"


def expected_series(result: dict[str, Any]) -> list[tuple[str, Labels, float, bool]]:
    """Every value series the export must contain for this result: medians in base units, and
    whether the series belongs to a GPU (else it is a host-level series: no GPU labels)."""
    context = result["context"]
    out: list[tuple[str, Labels, float, bool]] = []
    for case in result["cases"]:
        if case["status"] != "ok":
            continue
        params = param_labels(case)
        per_gpu = {m.group(1) + m.group(3): m.group(2) for metric in case["metrics"]
                   if (m := PER_GPU_METRIC_RE.match(metric))}
        for metric, m in case["metrics"].items():
            _, factor = UNITS[m["unit"]]
            per = PER_GPU_METRIC_RE.match(metric)
            if per:  # one name for every GPU, the GPU as labels
                name = metric_name(case["family"], per.group(1) + per.group(3), m["unit"])
                labels = params | gpu_labels(context, per.group(2)) | run_labels(context)
                gpu_series = True
            elif case["family"] in HOST_ONLY_FAMILIES or per_gpu:
                stem = f"aggregate_{metric}" if metric in per_gpu else metric
                name = metric_name(case["family"], stem, m["unit"])
                labels = params | run_labels(context)
                gpu_series = False
            else:
                name = metric_name(case["family"], metric, m["unit"])
                labels = params | gpu_labels(context, case_gpu(case)) | run_labels(context)
                gpu_series = True
            out.append((name, labels, m["stats"]["median"] * factor, gpu_series))
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


# promtool's one lint finding on dcgm-exporter's spelling of the GPU model label (its lint wants
# snake_case label names; dcgm-exporter, whose labels pathbench copies for PromQL joins, writes
# modelName, and so does its own output fail this lint).
CAMEL_CASE_FINDING = "label names should be written in 'snake_case' not 'camelCase'"


def run_promtool_check(test: unittest.TestCase, text: str) -> subprocess.CompletedProcess[str]:
    promtool = shutil.which("promtool")
    if promtool is None:
        test.fail("promtool not found on PATH: install it with `apt-get install -y "
                  "prometheus` (Debian/Ubuntu; scripts/setup.sh installs it for the tests)")
    return subprocess.run([promtool, "check", "metrics"], input=text,
                          capture_output=True, text=True, timeout=60, check=False)


def promtool_check(test: unittest.TestCase, text: str) -> None:
    """`promtool check metrics` accepts `text` without a complaint (lint findings included),
    but for the camelCase finding on dcgm-exporter's label modelName: the same text with that
    one label spelled model_name must draw no finding at all, and the text as written exactly
    that finding for exactly the families that carry modelName."""
    snake = re.sub(r'(?m)([{,])modelName="', r'\1model_name="', text)
    proc = run_promtool_check(test, snake)
    print(f"\npromtool check metrics (modelName as model_name): exit {proc.returncode}, output "
          f"{(proc.stdout + proc.stderr).strip()!r}", file=sys.stderr)
    test.assertEqual(proc.returncode, 0, describe(proc))
    # Lint findings (naming, units) are printed even where the exit code is 0 in some
    # promtool versions: the file must have none.
    test.assertEqual((proc.stdout + proc.stderr).strip(), "", describe(proc))
    with_model = set()
    families = {}
    for line in text.splitlines():
        m = re.match(r"# TYPE (\S+) ", line)
        if m:
            current = m.group(1)
            continue
        if line and not line.startswith("#"):
            families.setdefault(current, False)
            if re.search(r'[{,]modelName="', line):
                with_model.add(current)
    proc = run_promtool_check(test, text)
    findings = set((proc.stdout + proc.stderr).strip().splitlines())
    print(f"promtool check metrics: exit {proc.returncode}, {len(findings)} distinct findings "
          f"{sorted(findings)[:3]!r}{' ...' if len(findings) > 3 else ''}", file=sys.stderr)
    test.assertEqual(findings, {f"{family} {CAMEL_CASE_FINDING}" for family in with_model},
                     describe(proc))
    test.assertEqual(proc.returncode, 3 if with_model else 0, describe(proc))


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


def node_exporter_samples(test: unittest.TestCase, prom_path: Path, root: Path,
                          others: tuple[Path, ...] = ()) -> list[Sample]:
    """Serves `prom_path` (and `others`, side by side in the same directory) through a real
    node_exporter (textfile collector only) and returns what it serves, after checking that it
    took the files without an error."""
    binary = node_exporter_binary()
    if binary is None:
        test.fail("prometheus-node-exporter not found (looked for "
                  f"{', '.join(NODE_EXPORTER_CANDIDATES)}): install it with `apt-get install "
                  "-y prometheus-node-exporter` (scripts/setup.sh installs it for the tests)")
    textfile_dir = root / "textfile"
    textfile_dir.mkdir()
    shutil.copy(prom_path, textfile_dir / "pathbench.prom")
    for i, other in enumerate(others):
        shutil.copy(other, textfile_dir / f"pathbench-{i + 1}.prom")
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
            labels = ({"id": case["id"], "family": case["family"], "status": case["status"]}
                      | gpu_labels(context, "") | run_labels(context))
            self.assertEqual(find(samples, "pathbench_case_status", labels), [1.0], case["id"])
            if case["status"] == "ok":
                continue
            params = param_labels(case)
            for name, labels_, _ in samples:
                if name.startswith(f"pathbench_{case['family']}_"):
                    self.assertFalse(params.items() <= labels_.items(),
                                     f"{case['status']} case {case['id']} has a series {name}")

    def test_info_and_timestamps(self) -> None:
        samples = parse_exposition(self.text)
        context = self.result["context"]
        info = [lab for name, lab, v in samples if name == "pathbench_info" and v == 1.0]
        self.assertEqual(len(info), 1)
        for key, label in (("tool_version", "tool_version"), ("git_sha", "git_sha"),
                           ("node_type", "node_type"),
                           ("topology_fingerprint", "topology_fingerprint"),
                           ("hostname", "Hostname"), ("kernel", "kernel")):
            self.assertEqual(info[0].get(label, ""), label_text(context.get(key)), key)
        self.assertEqual({k: v for k, v in info[0].items() if k in GPU_LABELS},
                         {k: v for k, v in gpu_labels(context, "").items() if v})
        end = [v for name, _, v in samples if name == "pathbench_result_end_timestamp_seconds"]
        self.assertEqual(len(end), 1)
        self.assertLess(abs(end[0] - time.time()), 3600, "end time is about now")

    def test_node_exporter_serves_the_file(self) -> None:
        samples = node_exporter_samples(self, self.prom_path, self.root)
        pathbench = [s for s in samples if s[0].startswith("pathbench_")]
        self.assertEqual(len(pathbench), len(parse_exposition(self.text)))
        self.check_values(samples, "node_exporter's /metrics")

    def check_values(self, samples: list[Sample], where: str) -> None:
        check_values(self, self.result, samples, where, at_least=4,
                     why="memcpy: 2 metrics, first_touch: 2 metrics")


def check_values(test: unittest.TestCase, result: dict[str, Any], samples: list[Sample],
                 where: str, at_least: int, why: str = "") -> None:
    """Every value series of `result` is in `samples` once, with the result's median."""
    expected = expected_series(result)
    test.assertGreaterEqual(len(expected), at_least, why)
    for name, labels, value, _ in expected:
        found = find(samples, name, labels)
        test.assertEqual(len(found), 1, f"{where}: {name}{labels}: {found}")
        test.assertTrue(math.isclose(found[0], value, rel_tol=1e-12),
                        f"{where}: {name}{labels} = {found[0]}, result says {value}")


# The fixed bucket bounds of every exported histogram (src/export/prometheus.cpp), then +Inf.
LATENCY_BOUNDS = (1e-6, 2e-6, 5e-6, 1e-5, 2e-5, 5e-5, 1e-4, 2e-4, 5e-4, 1e-3, 2e-3, 5e-3, 1e-2,
                  2e-2, 5e-2, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0)
PERCENTILES = ("p50", "p90", "p99", "p99.9", "max")
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
        self.assertEqual(len(context["gpus"]), 1)
        self.assertNotIn("device", context)
        return (param_labels(case)
                | gpu_labels(context, label_text(context["gpus"][0]["index"]))
                | run_labels(context))

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
            for p in PERCENTILES:
                found = find(samples, percentile, labels | {"percentile": p})
                self.assertEqual(len(found), 1, f"{where}: {percentile} {p} {labels}")
                self.assertTrue(math.isclose(found[0], distribution[p], rel_tol=1e-12),
                                f"{where}: {percentile}{{percentile={p}}} = {found[0]}, "
                                f"result says {distribution[p]}")
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


FIXTURE_DIRS = (("tests", "fixtures", "results"), ("tests", "fixtures", "serving"),
                ("tests", "fixtures", "prometheus"))
DASHBOARD = ("ci", "grafana", "pathbench-dashboard.json")
ALERTS = ("ci", "prometheus", "pathbench-alerts.yml")
ALERTS_TEST = ("ci", "prometheus", "pathbench-alerts.test.yml")
TWO_GPU_FIXTURE = ("tests", "fixtures", "prometheus", "h200x2-all-gpus.json")
RUN_SERIES = ("pathbench_info", "pathbench_case_status", "pathbench_result_start_timestamp_seconds",
              "pathbench_result_end_timestamp_seconds", "pathbench_result_complete")
# PromQL words that are not metric names.
PROMQL_WORDS = {"by", "without", "on", "ignoring", "group_left", "group_right", "offset", "bool",
                "and", "or", "unless", "sum", "avg", "min", "max", "count", "quantile", "topk",
                "bottomk", "stddev", "stdvar", "count_values", "histogram_quantile", "time",
                "avg_over_time", "max_over_time", "min_over_time", "rate", "increase", "abs",
                "label_values", "le", "inf", "nan"}


def promtool_binary(test: unittest.TestCase) -> str:
    promtool = shutil.which("promtool")
    if promtool is None:
        test.fail("promtool not found on PATH: install it with `apt-get install -y "
                  "prometheus` (Debian/Ubuntu; scripts/setup.sh installs it for the tests)")
    return promtool


def selectors(expr: str) -> list[tuple[str, list[str]]]:
    """Metric selectors of a PromQL expression: (metric name, label names matched)."""
    out = []
    for m in re.finditer(r'\b([a-zA-Z_:][a-zA-Z0-9_:]*)\s*(\{([^}]*)\})?', expr):
        name = m.group(1)
        if name.lower() in PROMQL_WORDS or name.startswith("$"):
            continue
        start = m.start()
        if start > 0 and expr[start - 1] in "$.":  # a Grafana variable, a template field
            continue
        if re.match(r"\s*\(", expr[m.end():]) and m.group(2) is None:
            continue  # a function
        if m.group(2) is None and not name.startswith("pathbench_"):
            continue  # a label name inside by (...) / on (...)
        labels = re.findall(r'([a-zA-Z_][a-zA-Z0-9_]*)\s*(?:=~|!~|!=|=)', m.group(3) or "")
        out.append((name, labels))
    return out


class PrometheusFixtureExports(unittest.TestCase):
    """Every fixture result exported: promtool-clean, dcgm-exporter's labels on every GPU series,
    no GPU index in a name; the dashboard and the alert rules use only what the exports hold."""
    tmp: tempfile.TemporaryDirectory[str]
    root: Path
    exports: dict[str, tuple[dict[str, Any], str, Path]]  # fixture -> result, text, .prom

    @classmethod
    def setUpClass(cls) -> None:
        cls.tmp = tempfile.TemporaryDirectory(prefix="pathbench_prom_fixtures_")
        cls.root = Path(cls.tmp.name)
        cls.exports = {}
        cls.failures: list[str] = []
        for parts in FIXTURE_DIRS:
            for fixture in sorted(SOURCE.joinpath(*parts).glob("*.json")):
                out = cls.root / f"{fixture.parent.name}-{fixture.stem}.prom"
                proc = run_pb("export", fixture, "--prometheus", out)
                if proc.returncode != EXIT_OK or not out.is_file():
                    cls.failures.append(describe(proc))
                    continue
                cls.exports[f"{fixture.parent.name}/{fixture.name}"] = (
                    json.loads(fixture.read_text(encoding="utf-8")), out.read_text(), out)

    @classmethod
    def tearDownClass(cls) -> None:
        cls.tmp.cleanup()

    def setUp(self) -> None:
        self.assertEqual(self.failures, [])
        self.assertGreaterEqual(len(self.exports), 5, sorted(self.exports))
        self.assertIn("prometheus/h200x2-all-gpus.json", self.exports)

    def exported_names(self) -> dict[str, set[str]]:
        """Every sample name the exports hold -> the label names it carries (non-empty)."""
        names: dict[str, set[str]] = {}
        for _, text, _ in self.exports.values():
            for name, labels, _ in parse_exposition(text):
                names.setdefault(name, set()).update(labels)
        return names

    def test_two_gpu_fixture_is_generated(self) -> None:
        generator = SOURCE / "tests" / "fixtures" / "prometheus" / "generate.py"
        proc = subprocess.run([sys.executable, str(generator), "--check"], capture_output=True,
                              text=True, timeout=60, check=False)
        self.assertEqual(proc.returncode, 0, describe(proc))

    def test_promtool_check_metrics_on_every_fixture(self) -> None:
        for fixture, (_, text, _) in self.exports.items():
            with self.subTest(fixture=fixture):
                promtool_check(self, text)

    def test_no_metric_name_holds_a_gpu_index(self) -> None:
        for fixture, (result, text, _) in self.exports.items():
            with self.subTest(fixture=fixture):
                names = {n for n, _, _ in parse_exposition(text)}
                names |= set(re.findall(r"(?m)^# (?:HELP|TYPE) (\S+)", text))
                self.assertEqual([n for n in names if GPU_IN_NAME_RE.search(n)], [])
        # ... though the two-GPU fixture has per-GPU metrics, and exports each as its GPU's.
        result, text, _ = self.exports["prometheus/h200x2-all-gpus.json"]
        per_gpu = [(c, m) for c in result["cases"] for m in c["metrics"]
                   if PER_GPU_METRIC_RE.match(m)]
        self.assertEqual(len(per_gpu), 2)
        samples = parse_exposition(text)
        for case, metric in per_gpu:
            index = PER_GPU_METRIC_RE.match(metric).group(2)
            found = [lab for n, lab, _ in samples
                     if n == "pathbench_copy_bandwidth_bytes_per_second"
                     and lab.get("gpus") == "all" and lab.get("gpu") == index]
            self.assertEqual(len(found), 1, f"{metric}: {found}")
            self.assertEqual(found[0]["UUID"], result["context"]["gpus"][int(index)]["uuid"])
        aggregate = [lab for n, lab, _ in samples
                     if n == "pathbench_copy_aggregate_bandwidth_bytes_per_second"]
        self.assertEqual(len(aggregate), 1)
        self.assertFalse(set(GPU_LABELS) & set(aggregate[0]), aggregate)

    def test_every_value_series_with_the_results_median(self) -> None:
        for fixture, (result, text, _) in self.exports.items():
            if fixture.startswith("serving/"):
                continue  # PrometheusDistributionExport checks it (other names, histograms)
            with self.subTest(fixture=fixture):
                check_values(self, result, parse_exposition(text), fixture, at_least=5)

    def test_every_gpu_series_has_dcgm_exporter_labels(self) -> None:
        for fixture, (result, text, _) in self.exports.items():
            with self.subTest(fixture=fixture):
                context = result["context"]
                gpus = {label_text(g["index"]): g for g in context.get("gpus") or []}
                # Host-level values: every host family metric, and in a case with per-GPU
                # metrics the others (the sum, renamed aggregate_*, and the slowest GPU's time).
                host_values = 0
                for case in result["cases"]:
                    if case["status"] != "ok":
                        continue
                    per_gpu = any(PER_GPU_METRIC_RE.match(m) for m in case["metrics"])
                    host_values += sum(
                        1 for m in case["metrics"]
                        if case["family"] in HOST_ONLY_FAMILIES
                        or (per_gpu and not PER_GPU_METRIC_RE.match(m)))
                host_series = 0
                for name, labels, _ in parse_exposition(text, keep_empty=True):
                    where = f"{fixture}: {name}{labels}"
                    self.assertEqual(labels.get("Hostname"), context["hostname"], where)
                    for old in ("hostname", "gpu_uuid", "gpu_pci_bus_id", "gpu_name",
                                "statistic"):
                        self.assertNotIn(old, labels, where)
                    gpu = {k: labels.get(k, "") for k in GPU_LABELS}
                    if not gpus:  # a machine without a GPU: no GPU labels anywhere
                        self.assertEqual(set(gpu.values()), {""}, where)
                        continue
                    if not any(gpu.values()):
                        # A host series: named as the result says, with the run's device.
                        host_series += 1
                        self.assertTrue(name.startswith("pathbench_host_memory_")
                                        or labels.get("gpus") == "all", where)
                        self.assertIn("run_gpu", labels, where)
                        self.assertEqual(labels["run_gpu"], run_device(context), where)
                        continue
                    for k, v in gpu.items():
                        self.assertTrue(v, f"{where}: {k} empty")
                    g = gpus.get(gpu["gpu"])
                    self.assertIsNotNone(g, where)
                    self.assertEqual(gpu["UUID"], g["uuid"], where)
                    self.assertEqual(gpu["modelName"], g["name"], where)
                    self.assertEqual(gpu["pci_bus_id"], dcgm_pci_bus_id(g["pci_bus_id"]), where)
                    self.assertRegex(gpu["pci_bus_id"], r"^[0-9A-F]{8}:[0-9A-F]{2}:[0-9A-F]{2}\.[0-7]$")
                if gpus:  # as many host series as the result has host-level values
                    self.assertEqual(host_series, host_values)

    def test_run_series_belong_to_the_runs_gpu(self) -> None:
        result, text, _ = self.exports["prometheus/h200x2-all-gpus.json"]
        context = result["context"]
        want = gpu_labels(context, "") | run_labels(context)
        self.assertEqual(want["UUID"], context["gpus"][context["device"]]["uuid"])
        samples = parse_exposition(text)
        for name in RUN_SERIES:
            found = [lab for n, lab, _ in samples if n == name]
            self.assertTrue(found, name)
            for labels in found:
                self.assertLessEqual(want.items(), labels.items(), name)
        failed = [c for c in result["cases"] if c["status"] == "failed"]
        self.assertEqual(len(failed), 1)
        self.assertEqual(find(samples, "pathbench_case_status",
                              {"id": failed[0]["id"], "family": "copy", "status": "failed"} | want),
                         [1.0])

    def test_per_gpu_files_side_by_side_in_node_exporter(self) -> None:
        """pathbench run --device 0 and --device 1 on one node: two files, no duplicate series
        (host series differ by run_gpu, GPU series by the GPU's labels)."""
        result, _, _ = self.exports["prometheus/h200x2-all-gpus.json"]
        paths = []
        for device in (0, 1):
            doc = json.loads(json.dumps(result))
            doc["context"]["device"] = device
            src = self.root / f"device{device}.json"
            src.write_text(json.dumps(doc))
            out = self.root / f"device{device}.prom"
            proc = run_pb("export", src, "--prometheus", out)
            self.assertEqual(proc.returncode, EXIT_OK, describe(proc))
            paths.append(out)
        node_root = self.root / "side-by-side"
        node_root.mkdir()
        samples = node_exporter_samples(self, paths[0], node_root, (paths[1],))
        pathbench = [s for s in samples if s[0].startswith("pathbench_")]
        self.assertEqual(len(pathbench),
                         sum(len(parse_exposition(p.read_text())) for p in paths))
        host = [lab for n, lab, _ in pathbench if n.startswith("pathbench_host_memory_")]
        self.assertEqual(sorted(lab["run_gpu"] for lab in host), ["0", "1"])

    def test_node_exporter_serves_the_two_gpu_fixture(self) -> None:
        result, text, path = self.exports["prometheus/h200x2-all-gpus.json"]
        node_root = self.root / "two-gpu"
        node_root.mkdir()
        samples = node_exporter_samples(self, path, node_root)
        pathbench = [s for s in samples if s[0].startswith("pathbench_")]
        self.assertEqual(len(pathbench), len(parse_exposition(text)))
        check_values(self, result, samples, "node_exporter's /metrics", at_least=10)

    def test_dashboard(self) -> None:
        path = SOURCE.joinpath(*DASHBOARD)
        dashboard = json.loads(path.read_text(encoding="utf-8"))
        self.assertGreaterEqual(dashboard["schemaVersion"], 36)
        variables = {v["name"]: v for v in dashboard["templating"]["list"]}
        self.assertEqual(variables["datasource"]["type"], "datasource")
        self.assertEqual(variables["datasource"]["query"], "prometheus")
        for name in ("Hostname", "gpu"):
            self.assertEqual(variables[name]["type"], "query", name)
        ds = {"type": "prometheus", "uid": "${datasource}"}
        exported = self.exported_names()
        exprs: list[tuple[str, str]] = []  # (where, PromQL)
        for name, v in variables.items():
            if v["type"] == "query":
                self.assertEqual(v["datasource"], ds, name)
                query = v["query"]["query"] if isinstance(v["query"], dict) else v["query"]
                m = re.fullmatch(r"label_values\((.*),\s*(\w+)\)", query)
                self.assertIsNotNone(m, query)
                self.assertIn(m.group(2), exported[m.group(1).split("{")[0]], query)
                exprs.append((f"variable {name}", m.group(1)))
        panels = []
        for p in dashboard["panels"]:
            panels.append(p)
            panels.extend(p.get("panels", []))
        graphs = [p for p in panels if p["type"] != "row"]
        self.assertGreaterEqual(len(graphs), 10)
        titles = " ".join(p["title"] for p in graphs)
        for words in ("H2D bandwidth", "D2H bandwidth", "latency percentiles",
                      "Host memory bandwidth", "overlap fraction"):
            self.assertIn(words.lower(), titles.lower())
        for p in graphs:
            self.assertIn(p["type"], ("timeseries", "stat", "table"), p["title"])
            self.assertEqual(p["datasource"], ds, p["title"])
            self.assertTrue(p["targets"], p["title"])
            for t in p["targets"]:
                self.assertEqual(t["datasource"], ds, p["title"])
                exprs.append((p["title"], t["expr"]))
                # A legend names only labels of the series it draws.
                used = {label for metric, _ in selectors(t["expr"])
                        for label in exported.get(metric, set())}
                for label in re.findall(r"\{\{\s*(\w+)\s*\}\}", t.get("legendFormat", "")):
                    self.assertIn(label, used, f"{p['title']}: legend {label}")
        self.check_promql(exprs, exported, "dashboard")

    def check_promql(self, exprs: list[tuple[str, str]], exported: dict[str, set[str]],
                     what: str) -> None:
        """Every metric an expression selects is one the exporter writes, with the labels it
        matches on; every expression parses (promtool check rules on a recording rule each)."""
        self.assertTrue(exprs)
        for where, expr in exprs:
            found = selectors(expr)
            self.assertTrue(any(n.startswith("pathbench_") for n, _ in found), f"{where}: {expr}")
            for name, labels in found:
                self.assertIn(name, exported, f"{what} {where}: {name} is not exported")
                for label in labels:
                    if label == "__name__":
                        continue
                    self.assertIn(label, exported[name], f"{what} {where}: {name}{{{label}}}")
        rules = self.root / f"{what}-exprs.yml"
        lines = ["groups:", "  - name: exprs", "    rules:"]
        for i, (_, expr) in enumerate(exprs):
            # Grafana's variables as a PromQL parser sees regexes.
            expr = expr.replace("$Hostname", ".*").replace("$gpu", ".*")
            lines += [f"      - record: pathbench:{what}_expr_{i}", f"        expr: {json.dumps(expr)}"]
        rules.write_text("\n".join(lines) + "\n")
        proc = subprocess.run([promtool_binary(self), "check", "rules", str(rules)],
                              capture_output=True, text=True, timeout=60, check=False)
        self.assertEqual(proc.returncode, 0, describe(proc))
        self.assertIn(f"SUCCESS: {len(exprs)} rules found", proc.stdout, describe(proc))

    def test_alert_rules(self) -> None:
        rules = SOURCE.joinpath(*ALERTS)
        proc = subprocess.run([promtool_binary(self), "check", "rules", str(rules)],
                              capture_output=True, text=True, timeout=60, check=False)
        print(f"\npromtool check rules: exit {proc.returncode}, output "
              f"{(proc.stdout + proc.stderr).strip()!r}", file=sys.stderr)
        self.assertEqual(proc.returncode, 0, describe(proc))
        self.assertRegex(proc.stdout, r"SUCCESS: \d+ rules found")
        text = rules.read_text(encoding="utf-8")
        alerts = re.findall(r"(?m)^\s*- alert: (\w+)$", text)
        self.assertGreaterEqual(len(alerts), 6)
        exprs = [(f"alert {name}", expr) for name, expr in zip(
            alerts, re.findall(r"(?ms)^\s*expr: \|\n(.*?)^\s*for:", text))]
        self.assertEqual(len(exprs), len(alerts))
        exported = self.exported_names()
        self.check_promql(exprs, exported, "alerts")
        # Grouping labels and the labels the annotations print exist on the exports.
        every_label = set().union(*exported.values())
        for group in re.findall(r"\b(?:on|by)\s*\(([^)]*)\)", text):
            for label in filter(None, (x.strip() for x in group.split(","))):
                self.assertIn(label, every_label, f"on/by ({group})")
        for label in re.findall(r"\$labels\.(\w+)", text):
            self.assertIn(label, every_label, f"$labels.{label}")

    def test_alert_rules_unit_tests(self) -> None:
        test_file = SOURCE.joinpath(*ALERTS_TEST)
        proc = subprocess.run([promtool_binary(self), "test", "rules", str(test_file)],
                              capture_output=True, text=True, timeout=120, check=False)
        print(f"\npromtool test rules: exit {proc.returncode}, output "
              f"{(proc.stdout + proc.stderr).strip()!r}", file=sys.stderr)
        self.assertEqual(proc.returncode, 0, describe(proc))
        self.assertIn("SUCCESS", proc.stdout)
        # The tests' input series are shaped like real exports: exported names and labels.
        exported = self.exported_names()
        text = test_file.read_text(encoding="utf-8")
        series = re.findall(r"(?m)^\s*- series: '([a-zA-Z_:][a-zA-Z0-9_:]*)\{([^}]*)\}'", text)
        self.assertGreaterEqual(len(series), 10)
        for name, labels in series:
            self.assertIn(name, exported, name)
            for label in re.findall(r'(\w+)="', labels):
                self.assertIn(label, exported[name], f"{name}{{{label}}}")
        self.assertGreaterEqual(text.count("exp_alerts: []"), 4, "tests that alerts stay quiet")


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
