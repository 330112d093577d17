#!/usr/bin/env python3
"""A case that breaks the GPU fails alone: the rest of the run still measures (H200 acceptance).

    python3 tests/e2e/test_gpu_faults.py --pathbench build/pathbench --source . [unittest args]

With PATHBENCH_FAULT_INJECTION=1 the binary has a testing family whose cases fault on purpose: a
kernel that stores to an address no allocation owns (a sticky error: the CUDA context of the
process is unusable from then on) and an allocation twice the GPU's memory (an ordinary,
non-sticky error). A run of real copy cases around them must record each fault as that case's
failure with the reason, and every other case ok — the cases after a sticky fault run in a fresh
process that continues the same result. Exits 77 (CTest SKIP_RETURN_CODE) without a GPU.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

import harness

PATHBENCH: Path = Path("pathbench")
SOURCE: Path = Path(".")
EXIT_SKIP = 77
EXIT_CASE_FAILED = 1


def copy(name: str, size: str) -> dict[str, object]:
    return {"name": name, "family": "copy", "repetitions": 3, "min_time": 0.01,
            "axes": {"measure": ["bandwidth"], "direction": ["h2d"], "host_memory": ["pinned"],
                     "bytes": [size]}}


def fault(name: str, kind: str, tag: int) -> dict[str, object]:
    return {"name": name, "family": "fault_injection", "repetitions": 3, "min_time": 0.01,
            "axes": {"fault": [kind], "tag": [tag]}}


SCENARIO = {
    "schema": "pathbench.scenario/v1",
    "description": "e2e: real copies around cases that fault on purpose",
    "scenarios": [copy("copy-first", "4MiB"), fault("kernel-ok", "none", 1),
                  fault("poison", "illegal_address", 2), copy("copy-after-poison", "8MiB"),
                  fault("oom", "out_of_memory", 3), copy("copy-after-oom", "16MiB"),
                  fault("poison-again", "illegal_address", 4), fault("kernel-last", "none", 5)],
}


class GpuFaults(unittest.TestCase):
    def test_a_poisoned_case_fails_alone(self) -> None:
        with tempfile.TemporaryDirectory(prefix="pathbench_gpu_faults_") as tmp:
            scenario = Path(tmp) / "faults.json"
            scenario.write_text(json.dumps(SCENARIO))
            out = Path(tmp) / "faults-result.json"
            env = dict(os.environ, PATHBENCH_FAULT_INJECTION="1")
            proc = subprocess.run([str(PATHBENCH), "run", str(scenario), "--out", str(out)],
                                  capture_output=True, text=True, timeout=300, env=env)
            print(proc.stderr[-3000:], file=sys.stderr)
            self.assertEqual(proc.returncode, EXIT_CASE_FAILED, proc.stdout + proc.stderr)
            self.assertIn("continue in a fresh process", proc.stderr)
            doc = json.loads(out.read_text())
            self.assertIs(doc["complete"], True, "the fresh process finished the same result")
            by_scenario = {c["scenario"]: c for c in doc["cases"]}
            self.assertEqual(len(doc["cases"]), len(SCENARIO["scenarios"]), "each case once")
            for name in ("poison", "poison-again"):
                self.assertEqual(by_scenario[name]["status"], "failed")
                self.assertIn("cudaErrorIllegalAddress", by_scenario[name]["reason"])
                self.assertIn("CUDA context unusable", by_scenario[name]["reason"])
            self.assertEqual(by_scenario["oom"]["status"], "failed")
            self.assertIn("cudaErrorMemoryAllocation", by_scenario["oom"]["reason"])
            self.assertNotIn("CUDA context unusable", by_scenario["oom"]["reason"])
            for name in ("copy-first", "kernel-ok", "copy-after-poison", "copy-after-oom",
                         "kernel-last"):
                self.assertEqual(by_scenario[name]["status"], "ok",
                                 f"{name}: {by_scenario[name]['reason']}")
                for metric in by_scenario[name]["metrics"].values():
                    self.assertEqual(len(metric["samples"]), 3)
            self.assertFalse((Path(tmp) / f".{out.name}.journal").exists())


def main() -> int:
    global PATHBENCH, SOURCE
    PATHBENCH, SOURCE, rest = harness.parse_binary_args((__doc__ or "").splitlines()[0])
    probe = subprocess.run([str(PATHBENCH), "inventory"], capture_output=True, text=True,
                           timeout=120)
    inventory = json.loads(probe.stdout) if probe.returncode == 0 else {}
    if inventory.get("cuda_unavailable_reason") or not inventory.get("gpus"):
        print("SKIPPED: no GPU: " + (inventory.get("cuda_unavailable_reason")
                                     or "the inventory lists no GPU"))
        return EXIT_SKIP
    return harness.run_unittests(rest)


if __name__ == "__main__":
    sys.exit(main())
