"""pathbench's storage variants as fio_storage.sh names and orders them: a case's staging memory
and reader, "MEMORY/READER", shared by the script's per-setting line and its summary."""
from __future__ import annotations

from typing import Any

STAGING_MEMORIES = ["pinned", "registered-4k", "registered-thp", "registered-hugetlb"]
READERS = ["threads", "aio"]


def variant(case: dict[str, Any]) -> str:
    """A case's "MEMORY/READER" (pinned and threads where its params leave them out)."""
    params = case.get("params") or {}
    return f"{params.get('staging_memory', 'pinned')}/{params.get('reader', 'threads')}"


def rank(name: str) -> tuple[int, str, int, str]:
    """Sort key: staging memory in STAGING_MEMORIES' order, then reader in READERS' (others
    after, by name)."""
    memory, reader = name.split("/")
    return (STAGING_MEMORIES.index(memory) if memory in STAGING_MEMORIES
            else len(STAGING_MEMORIES), memory,
            READERS.index(reader) if reader in READERS else len(READERS), reader)


def slot_page_runs(case: dict[str, Any]) -> int | None:
    """The median over a case's staging slots of the runs of physically contiguous pages each
    lies in (its direct_io check's slot_page_runs_median), or None where the case has none (not
    run as root, or no such check)."""
    for check in case.get("checks") or []:
        if isinstance(check, dict) and check.get("name") == "direct_io":
            runs = (check.get("value") or {}).get("slot_page_runs_median")
            return runs if isinstance(runs, int) and not isinstance(runs, bool) else None
    return None


def with_runs(name: str, figure: str, runs: int | None) -> str:
    """"MEMORY/READER FIGURE", with " [N runs per slot]" where the slots lay in more than one
    run: a read into such a slot gathers a segment per run, which a disk of few segments per
    request splits."""
    return f"{name} {figure}" + (f" [{runs} runs per slot]" if runs is not None and runs > 1
                                 else "")
