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
