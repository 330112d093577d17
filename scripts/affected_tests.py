#!/usr/bin/env python3
"""Which ctest tests a change touches, for `scripts/test.sh --fast`.

Prints a ctest -R regex (anchored test names) of the end-to-end and report tests that the changed
files can affect, or nothing when only the unit tests apply (documentation, say). The unit tests
always run in --fast; the full suite (`scripts/test.sh`, CI) stays the gate.

Usage: scripts/affected_tests.py [--since REF] [--list] [FILE...]
  FILE...      the changed paths (relative to the repository root); without them, git is asked:
               the working tree's changes against REF (default HEAD) and untracked files, or,
               when the tree is clean, the files of the last commit
  --list       one test name a line instead of the regex
Exit 0; 3 for bad usage or a REF git does not know.
"""
from __future__ import annotations

import argparse
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

REPORT_TESTS = ("e2e_reports", "e2e_timeline_report", "e2e_bad_results", "plot_link_rates",
                "report_family_fixtures_generated", "serving_fixture_generated")
BINARY_SMOKE = ("e2e_cli",)

# (path regex, tests). Every rule that matches adds its tests; a path no rule matches adds the
# binary's smoke test, so an unforeseen file still exercises the real binary once.
RULES: tuple[tuple[str, tuple[str, ...]], ...] = (
    (r"^(README\.md|docs/|issues/|\.clang-format$|LICENSE)", ()),
    (r"^reports/", REPORT_TESTS),
    (r"^tests/requirements\.txt$", (*REPORT_TESTS, "mann_whitney_scipy_reference", "e2e_deploy_artifacts")),
    (r"^tests/fixtures/serving/", ("serving_fixture_generated", "e2e_reports", "e2e_bad_results")),
    (r"^tests/fixtures/report_families/", ("report_family_fixtures_generated", "e2e_reports")),
    (r"^tests/fixtures/bad_results/", ("e2e_bad_results",)),
    (r"^tests/fixtures/timelines/", ("timeline_fixtures_check", "e2e_timeline_report")),
    (r"^tests/fixtures/mann_whitney/", ("mann_whitney_scipy_reference",)),
    (r"^tests/fixtures/fleet/", ("e2e_fleet",)),
    (r"^tests/fixtures/(results|baselines?)/", ("e2e_compare", "e2e_reports", "e2e_bad_results")),
    (r"^tests/fixtures/", ()),  # the unit tests read the rest
    (r"^tests/unit/test_ci_scripts\.py$", ("ci_scripts",)),
    (r"^tests/unit/test_plot_link_rates\.py$", ("plot_link_rates",)),
    (r"^tests/unit/", ()),
    (r"^tests/(fuzz|gpu|scale)/", ()),  # sanitizer stage, GPU machine, benchmarks
    (r"^tests/helpers/", ()),  # programs the unit tests start (latency_fuse)
    (r"^tests/e2e/harness\.py$", ("e2e_cli", "e2e_compare", "e2e_prometheus", "e2e_fleet",
                                  "e2e_bad_input_audit", "e2e_run_interruption")),
    (r"^tests/e2e/test_(\w+)\.py$", ("e2e_{0}",)),
    (r"^tests/CMakeLists\.txt$", BINARY_SMOKE),
    (r"^src/compare/|^src/cli/(compare|fleet)_command", ("e2e_compare", "e2e_fleet", "e2e_bad_results")),
    (r"^src/export/|^src/cli/export_command", ("e2e_prometheus", *REPORT_TESTS)),
    # The report scripts read every file through `pathbench export --json-lines`.
    (r"^src/(result|core|stats)/|^src/compare/run_noise", ("e2e_compare", "e2e_bad_input_audit", *REPORT_TESTS)),
    (r"^src/scenario/", ("e2e_bad_input_audit",)),
    (r"^src/cli/", ("e2e_bad_input_audit", "e2e_run_interruption")),
    (r"^src/timeline/", ("e2e_timeline_report",)),
    (r"^(src|bench)/", BINARY_SMOKE),
    (r"^scenarios/", (*BINARY_SMOKE, "e2e_bad_input_audit")),
    (r"^ci/slurm/", ("e2e_slurm",)),
    (r"^ci/(kubernetes|docker|examples)/", ("e2e_deploy_artifacts",)),
    (r"^ci/", ("e2e_compare",)),
    (r"^scripts/(affected_tests|ci_timing)\.py$", ("ci_scripts",)),
    (r"^scripts/(test|setup|fuzz)\.sh$", ()),
    (r"^scripts/reference/fio_storage\.sh$", ("e2e_fio_reference",)),
    (r"^scripts/", BINARY_SMOKE),
)


def tests_for(path: str) -> list[str]:
    found: list[str] = []
    matched = False
    for pattern, tests in RULES:
        m = re.search(pattern, path)
        if m:
            matched = True
            found += [t.format(*m.groups()) for t in tests]
            if not tests:
                break  # an explicit "unit tests only" rule ends the search for this path
    return found if matched else list(BINARY_SMOKE)


def git(*args: str) -> list[str]:
    out = subprocess.run(["git", "-C", str(ROOT), *args], capture_output=True, text=True)
    if out.returncode != 0:
        print(f"affected_tests.py: git {' '.join(args)}: {out.stderr.strip()}", file=sys.stderr)
        sys.exit(3)
    return [line for line in out.stdout.splitlines() if line]


def changed_files(since: str) -> list[str]:
    files = git("diff", "--name-only", since) + git("ls-files", "--others", "--exclude-standard")
    if not files and since == "HEAD":
        files = git("diff-tree", "--no-commit-id", "--name-only", "-r", "HEAD")
    return sorted(set(files))


def main() -> int:
    parser = argparse.ArgumentParser(prog="affected_tests.py", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--since", default="HEAD", help="compare the working tree with this git ref")
    parser.add_argument("--list", action="store_true", help="one test name a line")
    parser.add_argument("files", nargs="*", help="changed paths (default: asked of git)")
    try:
        args = parser.parse_args()
    except SystemExit as e:
        return 3 if e.code not in (0, None) else 0
    files = args.files or changed_files(args.since)
    tests = sorted({t for f in files for t in tests_for(f)})
    if args.list:
        print("\n".join(tests))
    elif tests:
        print("^(" + "|".join(re.escape(t) for t in tests) + ")$")
    return 0


if __name__ == "__main__":
    sys.exit(main())
