#!/usr/bin/env python3
"""scripts/affected_tests.py and scripts/ci_timing.py on known inputs.

affected_tests.py: every end-to-end and report test that ctest knows is reachable from some path,
every rule names only tests that exist, and the answers for representative changes are the
expected ones. ci_timing.py: a synthetic build/ci-timing folder gives the known totals, counts,
cache hits and slowest test; bad folders exit 3 with the file named. Test files: each keeps its
helpers in a namespace of its own (the unity batches of the test programs).
Usage: test_ci_scripts.py --source ROOT
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path
from types import ModuleType

SOURCE = Path()


def load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, SOURCE / "scripts" / f"{name}.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def script_tests() -> set[str]:
    """The non-GoogleTest tests that tests/CMakeLists.txt declares (add_test(NAME ...))."""
    names = set()
    for cmake in (SOURCE / "tests").rglob("CMakeLists.txt"):
        for line in cmake.read_text().splitlines():
            line = line.strip()
            if line.startswith("add_test(NAME ") and "${" not in line.split()[1]:
                names.add(line.split()[1])
    return names


class AffectedTests(unittest.TestCase):
    def setUp(self) -> None:
        self.m = load("affected_tests")

    def test_known_answers(self) -> None:
        cases = {
            "README.md": [],
            "docs/measurements.md": [],
            "reports/plot.py": sorted(self.m.REPORT_TESTS),
            "tests/e2e/test_compare.py": ["e2e_compare"],
            "tests/e2e/test_slurm.py": ["e2e_slurm"],
            "tests/fixtures/bad_results/x.json": ["e2e_bad_results"],
            "tests/unit/test_gate_rule.cpp": [],
            "src/compare/gate_rule.cpp": ["e2e_bad_results", "e2e_cli", "e2e_compare", "e2e_fleet"],
            "bench/copy_family.cpp": ["e2e_cli"],
            "ci/slurm/pathbench.sbatch": ["e2e_compare", "e2e_slurm"],
            "ci/kubernetes/job.yaml": ["e2e_compare", "e2e_deploy_artifacts"],
            "scripts/reference/fio_storage.sh": ["e2e_cli", "e2e_fio_reference"],
            "tests/e2e/test_fio_reference.py": ["e2e_fio_reference"],
            "something/new.txt": ["e2e_cli"],  # unforeseen: the binary's smoke test
        }
        for path, expected in cases.items():
            self.assertEqual(sorted(set(self.m.tests_for(path))), expected, path)

    def test_rules_name_existing_tests(self) -> None:
        known = script_tests()
        self.assertIn("e2e_cli", known)
        for pattern, tests in self.m.RULES:
            for t in tests:
                if "{" in t:
                    continue
                self.assertIn(t, known, f"rule {pattern!r} names {t}, which tests/CMakeLists.txt does not declare")
        for e2e in sorted(SOURCE.glob("tests/e2e/test_*.py")):
            name = "e2e_" + e2e.stem.removeprefix("test_")
            self.assertIn(name, known, f"{e2e.name} is not the script of a test called {name}")

    def test_every_script_test_is_reachable(self) -> None:
        reachable = set()
        probes = [str(p.relative_to(SOURCE)) for p in SOURCE.rglob("*")
                  if p.is_file() and ".git" not in p.parts and "build" not in p.parts and ".deps" not in p.parts]
        for path in probes:
            reachable.update(self.m.tests_for(path))
        gpu_only = {"e2e_gpu_run", "e2e_gpu_faults"}  # skip without a device; reachable through their scripts
        for name in script_tests() - {n for n in script_tests() if n.endswith("_inputs")}:
            self.assertIn(name, reachable | gpu_only, f"no changed path would run {name} in --fast")

    def test_regex_output(self) -> None:
        out = subprocess.run([sys.executable, SOURCE / "scripts" / "affected_tests.py", "README.md",
                              "tests/e2e/test_fleet.py"], capture_output=True, text=True)
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertEqual(out.stdout.strip(), "^(e2e_fleet)$")
        out = subprocess.run([sys.executable, SOURCE / "scripts" / "affected_tests.py", "docs/x.md"],
                             capture_output=True, text=True)
        self.assertEqual((out.returncode, out.stdout), (0, ""))
        out = subprocess.run([sys.executable, SOURCE / "scripts" / "affected_tests.py", "--bogus"],
                             capture_output=True, text=True)
        self.assertEqual(out.returncode, 3)


JUNIT = """<?xml version="1.0" encoding="UTF-8"?>
<testsuite name="x" tests="4">
  <testcase name="Suite.One" classname="Suite.One" time="0.5" status="run"/>
  <testcase name="Suite.Two" classname="Suite.Two" time="1.5" status="fail"><failure message="x"/></testcase>
  <testcase name="e2e_cli" classname="e2e_cli" time="30.25" status="run"/>
  <testcase name="e2e_gpu_run" classname="e2e_gpu_run" time="0.1" status="notrun"><skipped message="77"/></testcase>
</testsuite>
"""


class CiTiming(unittest.TestCase):
    def run_script(self, *args: str | Path) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, SOURCE / "scripts" / "ci_timing.py", *args],
                              capture_output=True, text=True)

    def test_table_from_a_known_folder(self) -> None:
        with tempfile.TemporaryDirectory() as d:
            folder = Path(d)
            (folder / "stages.tsv").write_text("release-build\t90\t0\nrelease-tests\t30\t1\n")
            (folder / "release-tests.junit.xml").write_text(JUNIT)
            (folder / "release-tests.tests.json").write_text(json.dumps({"tests": [
                {"name": "Suite.One", "properties": [{"name": "LABELS", "value": ["unit"]}]},
                {"name": "Suite.Two", "properties": [{"name": "LABELS", "value": ["unit"]}]},
                {"name": "e2e_cli", "properties": [{"name": "LABELS", "value": ["e2e"]}]}]}))
            (folder / "release-build.ccache-before").write_text("direct_cache_hit\t10\ncache_miss\t5\n")
            (folder / "release-build.ccache-after").write_text(
                "direct_cache_hit\t110\npreprocessed_cache_hit\t3\ncache_miss\t7\n")
            out = self.run_script(folder, "--slowest", "2")
            self.assertEqual(out.returncode, 0, out.stderr)
            text = out.stdout
            self.assertIn("| release-build | 1 min 30 s | 75 % |  | 103 / 2 |", text)
            self.assertIn("| release-tests (exit 1) | 30.0 s | 25 % | 4 (2 / 1 / 1) |  |", text)
            self.assertIn("| **total** | **2 min 0 s** |", text)
            self.assertIn("| unit (GoogleTest cases) | 2 | 2.0 s |", text)
            self.assertIn("| e2e | 1 | 30.2 s |", text)
            slowest = text.split("Slowest 2:")[1]
            self.assertLess(slowest.index("e2e_cli"), slowest.index("Suite.Two"))
            self.assertNotIn("Suite.One", slowest)
            # A fresh machine: ccache installed by the build itself (nothing before it), and a
            # machine without ccache at all (nothing after either).
            (folder / "release-build.ccache-before").write_text("")
            self.assertIn("| release-build | 1 min 30 s | 75 % |  | 113 / 7 |",
                          self.run_script(folder).stdout)
            (folder / "release-build.ccache-after").write_text("")
            self.assertIn("| release-build | 1 min 30 s | 75 % |  |  |",
                          self.run_script(folder).stdout)

    def test_two_runs_become_two_labelled_sections(self) -> None:
        with tempfile.TemporaryDirectory() as d:
            cold, warm = Path(d) / "cold", Path(d) / "warm"
            for folder, seconds in ((cold, 600), (warm, 60)):
                folder.mkdir()
                (folder / "stages.tsv").write_text(f"release-build\t{seconds}\t0\n")
            out = self.run_script(cold, warm, "--label", "Cold cache", "--label", "Warm cache",
                                  "--title", "CI time")
            self.assertEqual(out.returncode, 0, out.stderr)
            text = out.stdout
            self.assertTrue(text.startswith("# CI time\n"))
            self.assertLess(text.index("## Cold cache"), text.index("| release-build | 10 min 0 s |"))
            self.assertLess(text.index("| release-build | 10 min 0 s |"), text.index("## Warm cache"))
            self.assertLess(text.index("## Warm cache"), text.index("| release-build | 1 min 0 s |"))
            out = self.run_script(cold, warm, "--label", "only one")
            self.assertEqual(out.returncode, 3)
            self.assertIn("--label", out.stderr)

    def test_bad_folders_exit_3_naming_the_file(self) -> None:
        with tempfile.TemporaryDirectory() as d:
            folder = Path(d)
            out = self.run_script(folder)
            self.assertEqual(out.returncode, 3)
            self.assertIn("stages.tsv", out.stderr)
            (folder / "stages.tsv").write_text("release-build\tninety\t0\n")
            out = self.run_script(folder)
            self.assertEqual(out.returncode, 3)
            self.assertIn("stages.tsv:1", out.stderr)
            (folder / "stages.tsv").write_text("release-tests\t9\t0\n")
            (folder / "release-tests.junit.xml").write_text("<testsuite")
            out = self.run_script(folder)
            self.assertEqual(out.returncode, 3)
            self.assertIn("release-tests.junit.xml", out.stderr)
            self.assertNotIn("Traceback", out.stderr)


class TestFileNamespaces(unittest.TestCase):
    """The test programs compile in unity batches (PATHBENCH_UNITY_BUILD): a test file's helpers
    live in pathbench::<file stem>, or two files' make_spec would meet in one batch, and only when
    the batches happened to put them together."""

    def test_every_test_file_has_a_namespace_of_its_own(self) -> None:
        files = sorted((SOURCE / "tests").glob("unit/test_*.cpp"))
        files += sorted((SOURCE / "tests").glob("gpu/test_*.cpp"))
        self.assertGreater(len(files), 50)
        for path in files:
            lines = path.read_text().splitlines()
            with self.subTest(file=str(path.relative_to(SOURCE))):
                self.assertTrue(f"namespace pathbench::{path.stem} {{" in lines,
                                f"no line 'namespace pathbench::{path.stem} {{'")
                shared = [
                    i + 1
                    for i, line in enumerate(lines[:-1])
                    if line == "namespace pathbench {" and lines[i + 1] == "namespace {"
                ]
                self.assertEqual(shared, [], "an unnamed namespace directly in pathbench (line "
                                 f"{shared}): use namespace pathbench::{path.stem}")


def main() -> int:
    global SOURCE
    parser = argparse.ArgumentParser()
    parser.add_argument("--source", type=Path, required=True)
    args, rest = parser.parse_known_args()
    SOURCE = args.source.resolve()
    result = unittest.main(argv=[sys.argv[0], *rest], exit=False).result
    return 0 if result.wasSuccessful() else 1


if __name__ == "__main__":
    sys.exit(main())
