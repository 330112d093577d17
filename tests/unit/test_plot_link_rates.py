"""reports/plot.py's PCIe rates (reports/lib/pathbench_plots/common.py) against the C++ table they
fall back for.

src/inventory/link_rates.hpp is the one source of link physics; plot.py reads the rate from the
result's context (gpus[].pcie.raw_gbps_per_direction) and keeps a copy of the table only for
results written before that field. This test reads the C++ table out of its source and holds the
copy to it, so the two cannot drift apart again (they once disagreed on Gen6).

Usage: test_plot_link_rates.py --source REPO_ROOT
"""
from __future__ import annotations

import argparse
import importlib.util
import math
import re
import sys
from pathlib import Path


def load_plot(root: Path):
    sys.path.insert(0, str(root / "reports" / "lib"))  # common.py imports the shared reader by name
    spec = importlib.util.spec_from_file_location("pathbench_plot",
                                                  root / "reports" / "lib" / "pathbench_plots" / "common.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


def cpp_table(root: Path) -> dict[int, tuple[float, float]]:
    text = (root / "src" / "inventory" / "link_rates.hpp").read_text()
    constants = {name: int(num) / int(den) for name, num, den in
                 re.findall(r"inline constexpr double (\w+) = (\d+)\.0 / (\d+)\.0;", text)}
    rows = re.findall(r"\{(\d), ([\d.]+), (\w+), \"", text)
    assert constants and rows, "link_rates.hpp's table not found"
    return {int(gen): (float(gt), constants[enc]) for gen, gt, enc in rows}


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--source", type=Path, required=True)
    root = parser.parse_args().source
    plot = load_plot(root)
    failures: list[str] = []

    def check(cond: bool, what: str) -> None:
        print(("ok   " if cond else "FAIL ") + what)
        if not cond:
            failures.append(what)

    table = cpp_table(root)
    check(sorted(table) == list(range(1, 8)), f"C++ table has Gen1..Gen7: {sorted(table)}")
    check(plot.PCIE_GENERATIONS == table, "plot.py's fallback table is link_rates.hpp's")
    for gen, (gt, enc) in table.items():
        for width in (1, 4, 8, 16, 32):
            want = gt * width * enc / 8
            got = plot.pcie_raw_gb_per_s(gen, width)
            check(got is not None and math.isclose(got, want, rel_tol=1e-12),
                  f"Gen{gen} x{width}: {got} == {want}")
    check(math.isclose(plot.pcie_raw_gb_per_s(3, 16), 15.754, abs_tol=1e-3), "Gen3 x16 = 15.75 GB/s")
    check(math.isclose(plot.pcie_raw_gb_per_s(5, 16), 63.015, abs_tol=1e-3), "Gen5 x16 = 63.0 GB/s")
    check(plot.pcie_raw_gb_per_s(6, 16) == 121.0, "Gen6 x16 = 121 GB/s (FLIT 242/256)")
    for gen, width in ((0, 16), (8, 16), (5, 0), (5, 33), ("5", 16), (True, 16)):
        check(plot.pcie_raw_gb_per_s(gen, width) is None, f"no rate for gen {gen!r} x{width!r}")

    # The context's figure wins; the table only serves results without it.
    gpu = {"pcie_gen_current": 5, "pcie_width_current": 16,
           "pcie": {"raw_gbps_per_direction": {"current": 50.5, "max": 63.0}}}
    check(plot.gpu_pcie_raw_gb_per_s(gpu) == 50.5, "context's raw_gbps_per_direction.current is used")
    gpu["pcie"]["raw_gbps_per_direction"]["current"] = None
    check(plot.gpu_pcie_raw_gb_per_s(gpu) is None, "a null current rate is no rate, not the table's")
    del gpu["pcie"]
    check(math.isclose(plot.gpu_pcie_raw_gb_per_s(gpu), 63.015, abs_tol=1e-3),
          "without the field, the table")
    gpu["pcie"] = "garbage"
    check(math.isclose(plot.gpu_pcie_raw_gb_per_s(gpu), 63.015, abs_tol=1e-3),
          "a malformed field falls back to the table")

    print(f"{len(failures)} failed" if failures else "all passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
