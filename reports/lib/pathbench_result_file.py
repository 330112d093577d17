"""What every report script shares: reading pathbench's JSON files by the rules of the C++ reader,
writing outputs atomically, and turning bad input into exit code 3 instead of a traceback.

The C++ reader (src/result/result.cpp, ResultReader; src/compare/baseline.cpp, BaselineReader)
is the reference for what a valid file is: a file it refuses is refused here, with the same JSON
pointer, and a file it accepts is accepted here. The reports never judge a file by their own,
looser or stricter, idea of the format.

Not a script: the report scripts put reports/lib on sys.path and import it by name; it lives
there because the report directory itself must stay off sys.path (html.py would shadow the
standard library's `html`).
"""
from __future__ import annotations

import argparse
import decimal
import errno
import json
import math
import os
import re
import secrets
import signal
import stat
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import Any, Callable, NoReturn, Sequence

RESULT_SCHEMA = "pathbench.result/v1"
COMPARE_SCHEMA = "pathbench.compare/v1"
BASELINE_SCHEMA = "pathbench.baseline/v1"

EXIT_OK = 0
EXIT_FAILURE = 1
EXIT_INCOMPLETE = 2
EXIT_BAD_INPUT = 3

# The C++ reader refuses deeper documents (core/json_text.hpp, kMaxJsonDepth).
MAX_JSON_DEPTH = 64
# The largest result, baseline or compare file a report reads, checked before reading. Python holds
# a parsed result in about five times its size (a dict per case, metric and stats block, a float
# object per sample), so a 256 MiB file takes about 1.5 GiB; a sweep of 100 000 cases with a dozen
# samples per metric is about 200 MB. A bigger input is a mistake, and reading it would only
# exhaust memory.
MAX_INPUT_BYTES = 256 << 20
UTF8_BOM = b"\xef\xbb\xbf"
# The baseline's between-run spread needs this many runs (compare/baseline.hpp, kMinRunsForSpread).
MIN_RUNS_FOR_SPREAD = 3


class InputError(Exception):
    """Bad input or usage: names the file and the JSON pointer ("/" for the whole document)."""

    def __init__(self, path: Path | str, pointer: str | None, message: str) -> None:
        self.path = str(path)
        self.pointer = pointer
        self.message = message
        where = "" if pointer is None else f" {pointer or '/'}:"
        super().__init__(f"{self.path}:{where} {message}")

    @classmethod
    def option(cls, name: str, message: str) -> InputError:
        """A bad command-line option value: "--name: what" (no file, no JSON pointer)."""
        return cls(name, None, message)


class DiskFull(Exception):
    """The file system is full (ENOSPC) or the quota used up (EDQUOT) while writing an output: the
    output is incomplete (exit 2, as the C++ commands say it), not bad input."""


def pointer_token(key: str) -> str:
    """One JSON pointer token (RFC 6901)."""
    return key.replace("~", "~0").replace("/", "~1")


# --------------------------------------------------------------------------------------------
# Reading JSON text as nlohmann::json does


class _NumberOverflow(Exception):
    def __init__(self, token: str) -> None:
        super().__init__(token)
        self.token = token


class _Constant(Exception):
    def __init__(self, token: str) -> None:
        super().__init__(token)
        self.token = token


def _parse_float(token: str) -> float:
    value = float(token)
    # nlohmann refuses a number beyond double's range ("number overflow"); float() would give inf.
    if math.isinf(value):
        raise _NumberOverflow(token)
    return value


_INT64_MIN = -(1 << 63)
_UINT64_MAX = (1 << 64) - 1


def _parse_int(token: str) -> int | float:
    # nlohmann holds an integer beyond int64/uint64 as a double, so a count field refuses it; the
    # length check also keeps int() away from Python's limit on huge digit strings.
    if len(token) <= 21:
        value = int(token)
        if _INT64_MIN <= value <= _UINT64_MAX:
            return value
    return _parse_float(token)


def _parse_constant(token: str) -> NoReturn:
    # json.loads accepts NaN, Infinity and -Infinity; JSON (and the C++ reader) does not.
    raise _Constant(token)


# A JSON string, or the unterminated rest of the text. Possessive (Python 3.11+), so that matching
# a 20 MiB string keeps no backtracking state per character: "(?:[^"\\]|\\.)*" took ~50 bytes a
# character (a gigabyte for a 20 MiB case id). Linear in time and constant in memory.
_STRING = r'"[^"\\]*+(?:\\.[^"\\]*+)*+(?:"|\\?\Z)'
# Everything but the brackets, strings skipped whole: what is left of a text is its brackets.
_NOT_BRACKETS_RE = re.compile(_STRING + r'|[^\[\]{}"]++', re.S)
_TOKEN_RE = re.compile(_STRING + r'|[\[\]{}:,]|[^\s\[\]{}:,"]++', re.S)


def too_deep(text: str, end: int | None = None) -> bool:
    """Whether arrays and objects nest deeper than MAX_JSON_DEPTH in text[:end], counted on the
    text (brackets inside strings do not count): for a text json.loads could not read, which the
    C++ reader, checking the depth as it parses, may refuse for its depth first. Linear in time;
    holds at most a copy of the text."""
    end = _before_trailing_space(text, len(text) if end is None else end)
    if text.count("[", 0, end) + text.count("{", 0, end) <= MAX_JSON_DEPTH:
        return False  # too few brackets, in strings or not
    depth = 0
    for c in _NOT_BRACKETS_RE.sub("", text[:end]):
        if c in "[{":
            depth += 1
            if depth > MAX_JSON_DEPTH:
                return True
        elif depth > 0:
            depth -= 1
    return False


def _before_trailing_space(text: str, end: int, block: int = 1 << 16) -> int:
    """An end at most `end` with only white space after it (in steps of `block`): a truncated file
    padded with hundreds of megabytes of spaces is not scanned space by space."""
    while end > 0 and text[max(0, end - block):end].isspace():
        end = max(0, end - block)
    return end


def _too_deep_at(text: str) -> str:
    """The JSON pointer where a container opens one level too deep: where the C++ reader, which
    checks the depth as it parses, names the error. Only called for a text nested too deep."""
    frames: list[list[Any]] = []  # [is_object, the member's key, the element's index]
    expect_key = False
    for m in _TOKEN_RE.finditer(text):
        token = m.group()
        if token in ("[", "{"):
            if len(frames) >= MAX_JSON_DEPTH:
                return _frames_pointer(frames)
            frames.append([token == "{", "", 0])
            expect_key = token == "{"
        elif token in ("]", "}"):
            if frames:
                frames.pop()
            expect_key = False
        elif token == ",":
            if frames and frames[-1][0]:
                expect_key = True
            elif frames:
                frames[-1][2] += 1
        elif token == ":":
            expect_key = False
        elif expect_key and frames and token.startswith('"'):
            try:
                frames[-1][1] = json.loads(token)
            except ValueError:
                frames[-1][1] = token[1:-1]
    return ""


def _frames_pointer(frames: list[list[Any]]) -> str:
    return "".join("/" + (pointer_token(f[1]) if f[0] else str(f[2])) for f in frames)


def _describe_file_type(mode: int) -> str:
    for test, name in ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return name
    return "not a regular file"


def read_bytes(path: Path, max_bytes: int = MAX_INPUT_BYTES) -> bytearray:
    """The file's bytes; InputError for anything but a readable regular file of at most max_bytes."""
    try:
        # O_NONBLOCK: opening a FIFO must not wait for a writer (it is refused right after).
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as e:
        raise InputError(path, "", f"cannot read: {e.strerror or e}") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise InputError(path, "", f"cannot read: it is {_describe_file_type(st.st_mode)}, not a regular file; "
                                       "the reports read regular files only")
        if st.st_size > max_bytes:
            raise InputError(path, "", f"cannot read: {st.st_size} bytes, more than the {max_bytes} "
                                       f"({max_bytes >> 20} MiB) an input may have")
        # One buffer of the size fstat gave (and one byte to see growth), filled in place: joining
        # chunks would hold the file twice.
        buf = bytearray(st.st_size + 1)
        total = 0
        while True:
            if total == len(buf):
                if total > max_bytes:
                    raise InputError(path, "", f"cannot read: grew beyond {max_bytes} bytes while being read")
                buf.extend(bytes(min(len(buf), max_bytes + 1 - total)))
            with memoryview(buf) as view:
                n = os.readv(fd, [view[total:]])
            if n == 0:
                break
            total += n
        del buf[total:]
        return buf
    except OSError as e:
        raise InputError(path, "", f"cannot read: {e.strerror or e}") from None
    finally:
        os.close(fd)


class _DuplicateKey(dict[str, Any]):
    """An object in which a key appeared twice; `key` is the repeated one."""

    key: str = ""


def _object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj = dict(pairs)
    if len(obj) == len(pairs):
        return obj
    # The C++ reader refuses a repeated key (JSON readers differ in which value they keep);
    # json.loads would keep the last one silently. Marked here, named by _check_values.
    seen: set[str] = set()
    marked = _DuplicateKey(pairs)
    for key, _ in pairs:
        if key in seen:
            marked.key = key
            break
        seen.add(key)
    return marked


def _check_values(path: Path, value: Any, at: str = "", depth: int = 1) -> None:
    """What json.loads lets through and the C++ reader refuses, in document order: a key that
    appears twice in one object, a lone UTF-16 surrogate (an unpaired \\ud800 escape), which
    cannot be printed or written as UTF-8, and nesting deeper than 64 levels. Recursive, but never
    deeper than 65 levels: a container deeper than that is refused before its contents are seen."""
    if isinstance(value, str):
        _check_text(path, value, at)
        return
    if depth > MAX_JSON_DEPTH:
        raise InputError(path, at, _TOO_DEEP)
    if isinstance(value, dict):
        if isinstance(value, _DuplicateKey):
            where = f"{at}/{pointer_token(value.key)}".encode("utf-8", "backslashreplace").decode("utf-8")
            raise InputError(path, where, f"duplicate key {_dump(value.key)}: JSON readers differ in which one "
                                          "they keep, so the document is refused")
        for key, item in value.items():
            where = f"{at}/{pointer_token(key)}"
            _check_text(path, key, where, is_key=True)
            if isinstance(item, (str, dict, list)):
                _check_values(path, item, where, depth + 1)
    elif isinstance(value, list):
        for i, item in enumerate(value):
            if isinstance(item, (str, dict, list)):
                _check_values(path, item, f"{at}/{i}", depth + 1)


def _check_text(path: Path, text: str, at: str, is_key: bool = False) -> None:
    if text.isascii():
        return
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as e:
        code = ord(text[e.start])
        what = "the key" if is_key else "the string"
        # The pointer may hold the surrogate itself (a key): written as \udc00, it can be printed.
        where = at.encode("utf-8", "backslashreplace").decode("utf-8")
        raise InputError(path, where, f"not valid JSON: {what} holds a lone UTF-16 surrogate \\u{code:04x} "
                                      "(an unpaired \\u escape), which is no Unicode character") from None


_TOO_DEEP = f"nesting deeper than {MAX_JSON_DEPTH} levels; a pathbench document is never that deep"


def decode_json_text(path: Path, data: bytes | bytearray) -> str:
    """The text of a JSON file's bytes: a UTF-8 BOM is skipped (as nlohmann does); anything but
    UTF-8 is refused."""
    offset = len(UTF8_BOM) if data[:len(UTF8_BOM)] == UTF8_BOM else 0
    try:
        # A view, not a slice: skipping the BOM must not copy the file.
        with memoryview(data) as view:
            return str(view[offset:], "utf-8")
    except UnicodeDecodeError as e:
        raise InputError(path, "", f"cannot read: not UTF-8 text (byte {e.start + offset}: {e.reason}); "
                                   "JSON is UTF-8") from None
    except MemoryError:
        raise _too_big(path, len(data)) from None


def _too_big(path: Path, size: int) -> InputError:
    return InputError(path, "", f"cannot read: {size} bytes of JSON need more memory than this process may use")


def parse_json_text(path: Path, text: str) -> Any:
    """A JSON document from the text of `path`, by the rules of the C++ reader
    (core/json_reader.cpp): NaN/Infinity, numbers beyond double's range, lone surrogates, a key
    twice in one object and nesting deeper than 64 levels are refused.

    json.loads reads the text first (in C, linear; nesting beyond ~1000 levels stops it with a
    RecursionError, not a crash); the nesting is checked on the parsed document. Where the
    document is refused, the C++ reader, which checks the depth as it parses, would name a too
    deep container first: the text is scanned for one then, and only then."""
    try:
        doc = json.loads(text, parse_float=_parse_float, parse_int=_parse_int, parse_constant=_parse_constant,
                         object_pairs_hook=_object)
    except json.JSONDecodeError as e:
        # The C++ reader stops at the same place: nesting beyond it it never sees.
        _refuse_if_too_deep(path, text, e.pos + 1)
        where = "an empty file" if not text or text.isspace() else f"line {e.lineno} column {e.colno}"
        raise InputError(path, "", f"not JSON ({where}): {e.msg}") from None
    except _NumberOverflow as e:
        _refuse_if_too_deep(path, text)
        raise InputError(path, "", f"not valid JSON: number overflow parsing {_short(e.token)} "
                                   "(beyond the range of a double)") from None
    except _Constant as e:
        _refuse_if_too_deep(path, text)
        raise InputError(path, "", f"not valid JSON: {e.token} is not a JSON value "
                                   "(JSON has no NaN or infinity)") from None
    except RecursionError:
        _refuse_if_too_deep(path, text)
        raise InputError(path, "", "nesting too deep") from None
    except MemoryError:
        raise _too_big(path, len(text)) from None
    try:
        _check_values(path, doc)
    except InputError:
        _refuse_if_too_deep(path, text)
        raise
    return doc


def _refuse_if_too_deep(path: Path, text: str, end: int | None = None) -> None:
    if too_deep(text, end):
        raise InputError(path, _too_deep_at(text), _TOO_DEEP) from None


def parse_json(path: Path, data: bytes | bytearray) -> Any:
    """A JSON document from the bytes of `path` (decode_json_text, then parse_json_text)."""
    return parse_json_text(path, decode_json_text(path, data))


def read_json(path: Path | str, max_bytes: int = MAX_INPUT_BYTES) -> Any:
    """A JSON file of at most max_bytes (checked before reading), by the rules of parse_json."""
    path = Path(path)
    data = read_bytes(path, max_bytes)
    text = decode_json_text(path, data)
    del data  # the bytes go before parsing: the text and the document are all that is held
    return parse_json_text(path, text)


def _short(text: str, limit: int = 40) -> str:
    return text if len(text) <= limit else text[:limit - 1] + "…"


# --------------------------------------------------------------------------------------------
# Validating a pathbench.result/v1 document: ResultReader's rules, in its order


def describe_type(v: Any) -> str:
    """nlohmann's type names, as the C++ messages say them."""
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "boolean"
    if isinstance(v, int):
        return "integer"
    if isinstance(v, float):
        return "number"
    if isinstance(v, str):
        return "string"
    if isinstance(v, list):
        return "array"
    if isinstance(v, dict):
        return "object"
    return type(v).__name__


def is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def is_finite(v: Any) -> bool:
    return is_number(v) and math.isfinite(v)


def _dump(v: Any) -> str:
    return _short(json.dumps(v, ensure_ascii=False), 80)


class _Reader:
    def __init__(self, path: Path) -> None:
        self.path = path

    def fail(self, at: str, message: str) -> NoReturn:
        raise InputError(self.path, at, message)

    def object(self, v: Any, at: str) -> dict[str, Any]:
        if not isinstance(v, dict):
            self.fail(at, f"expected an object, found {describe_type(v)}")
        return v

    def array(self, v: Any, at: str) -> list[Any]:
        if not isinstance(v, list):
            self.fail(at, f"expected an array, found {describe_type(v)}")
        return v

    def field(self, obj: dict[str, Any], at: str, key: str) -> Any:
        if key not in obj:
            self.fail(f"{at}/{pointer_token(key)}", "missing required field")
        return obj[key]

    def string(self, v: Any, at: str) -> str:
        if not isinstance(v, str):
            self.fail(at, f"expected a string, found {describe_type(v)}")
        return v

    def number(self, v: Any, at: str) -> float:
        if not is_number(v):
            self.fail(at, f"expected a number, found {describe_type(v)}")
        if not math.isfinite(v):
            self.fail(at, f"expected a finite number, found {v}")
        return v

    def count(self, v: Any, at: str) -> int:
        if not (isinstance(v, int) and not isinstance(v, bool) and 0 <= v <= _UINT64_MAX):
            self.fail(at, "expected a non-negative integer, found " + (_dump(v) if is_number(v) else describe_type(v)))
        return v

    def boolean(self, v: Any, at: str) -> bool:
        if not isinstance(v, bool):
            self.fail(at, f"expected true or false, found {describe_type(v)}")
        return v

    def string_field(self, obj: dict[str, Any], at: str, key: str) -> str:
        return self.string(self.field(obj, at, key), f"{at}/{pointer_token(key)}")

    def result(self, doc: Any) -> None:
        self.object(doc, "")
        schema = self.field(doc, "", "schema")
        if schema != RESULT_SCHEMA:
            found = _dump(schema) if isinstance(schema, str) else describe_type(schema)
            self.fail("/schema", f'expected "{RESULT_SCHEMA}", found {found}')
        self.context(self.field(doc, "", "context"), "/context")
        if "complete" in doc:
            self.boolean(doc["complete"], "/complete")
        if "incomplete_reason" in doc:
            self.string(doc["incomplete_reason"], "/incomplete_reason")
        cases = self.array(self.field(doc, "", "cases"), "/cases")
        seen: dict[str, int] = {}
        for i, case in enumerate(cases):
            at = f"/cases/{i}"
            self.case(case, at)
            # Comparison and the exports key cases by id: two cases with one id cannot be told apart.
            first = seen.setdefault(case["id"], i)
            if first != i:
                self.fail(f"{at}/id", f"duplicate case id {_dump(case['id'])} (also /cases/{first}/id)")

    def context(self, v: Any, at: str) -> None:
        self.object(v, at)
        files_at = f"{at}/scenario_files"
        files = self.array(self.field(v, at, "scenario_files"), files_at)
        for i, f in enumerate(files):
            self.object(f, f"{files_at}/{i}")
            self.string_field(f, f"{files_at}/{i}", "path")
            self.string_field(f, f"{files_at}/{i}", "sha256")
        self.string_field(v, at, "start_time")
        self.string_field(v, at, "end_time")
        # The run's identity, as the C++ reader: a number where a name belongs is refused.
        for key in ("tool_version", "git_sha", "hostname", "node_type", "topology_fingerprint",
                    "cpu_model"):
            if key in v:
                self.string(v[key], f"{at}/{key}")
        if v.get("environment") is not None:
            self.environment(v["environment"], f"{at}/environment")

    # context.environment, as compare and baseline promote read it (inventory/noise.cpp,
    # noise_reasons; inventory/environment.cpp, environment_sample_from_json): a missing or null
    # field is no value; one of the wrong type is refused where the C++ reader names it.

    def environment(self, v: Any, at: str) -> None:
        self.object(v, at)
        for key in ("start", "end"):
            if v.get(key) is not None:
                self.environment_sample(v[key], f"{at}/{key}")
        share = v.get("cpu_share")
        if share is not None:
            self.object(share, f"{at}/cpu_share")
            steal = share.get("steal_pct")
            if steal is not None and not is_number(steal):
                self.fail(f"{at}/cpu_share/steal_pct", f"expected a number, found {describe_type(steal)}")

    def _env_fields(self, obj: dict[str, Any], at: str, kinds: dict[str, str]) -> None:
        """Each present, non-null field of `obj` named in `kinds` by its type: "string", "boolean",
        "number", "int" (int32), "unsigned" (uint32) or "uint64"."""
        limits = {"int": (-(1 << 31), (1 << 31) - 1), "unsigned": (0, (1 << 32) - 1), "uint64": (0, _UINT64_MAX)}
        for key, kind in kinds.items():
            value = obj.get(key)
            if value is None:
                continue
            where = f"{at}/{key}"
            if kind == "string":
                self.string(value, where)
            elif kind == "boolean":
                self.boolean(value, where)
            elif kind == "number":
                if not is_number(value):
                    self.fail(where, f"expected a number, found {describe_type(value)}")
            else:
                # An integer: nlohmann would turn 3.7 into 3 and -1 into 2^64-1 without a word.
                if not (isinstance(value, int) and not isinstance(value, bool)):
                    self.fail(where, "expected an integer, found " + (_dump(value) if is_number(value)
                                                                      else describe_type(value)))
                low, high = limits[kind]
                if not low <= value <= high:
                    self.fail(where, f"expected an integer in [{low}, {high}], found {value}")

    def _env_array(self, obj: dict[str, Any], at: str, key: str) -> list[Any]:
        value = obj.get(key)
        return [] if value is None else self.array(value, f"{at}/{key}")

    def environment_sample(self, v: Any, at: str) -> None:
        self.object(v, at)
        self._env_fields(v, at, {"time": "string"})
        if v.get("cpu") is not None:
            cpu = self.object(v["cpu"], f"{at}/cpu")
            self._env_fields(cpu, f"{at}/cpu", dict.fromkeys(
                ("user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal"), "uint64"))
        if v.get("loadavg") is not None:
            loadavg = self.array(v["loadavg"], f"{at}/loadavg")
            if len(loadavg) != 3 or not all(is_number(x) for x in loadavg):
                self.fail(f"{at}/loadavg", f"expected three numbers, found {_dump(loadavg)}")
        for i, governor in enumerate(self._env_array(v, at, "cpu_governors")):
            self.string(governor, f"{at}/cpu_governors/{i}")
        for i, gpu in enumerate(self._env_array(v, at, "gpus")):
            self.environment_gpu(gpu, f"{at}/gpus/{i}")

    def environment_gpu(self, v: Any, at: str) -> None:
        self.object(v, at)
        self._env_fields(v, at, {"index": "int", "pci_bus_id": "string", "source": "string",
                                 "clock_sm_mhz": "int", "clock_mem_mhz": "int", "temperature_c": "int",
                                 "power_w": "number", "power_limit_w": "number"})
        for i, reason in enumerate(self._env_array(v, at, "clock_event_reasons")):
            self.string(reason, f"{at}/clock_event_reasons/{i}")
        self._env_fields(v, at, {"clock_event_reasons_mask": "uint64"})
        for i, process in enumerate(self._env_array(v, at, "processes")):
            pat = f"{at}/processes/{i}"
            self.object(process, pat)
            self._env_fields(process, pat, {"pid": "unsigned", "name": "string", "used_memory_bytes": "uint64",
                                            "self": "boolean"})
        self._env_fields(v, at, dict.fromkeys(
            ("pcie_replay_counter", "aer_correctable", "aer_nonfatal", "aer_fatal"), "uint64"))

    def case(self, v: Any, at: str) -> None:
        self.object(v, at)
        for key in ("id", "scenario", "family"):
            self.string_field(v, at, key)
        self.object(self.field(v, at, "params"), f"{at}/params")
        status = self.string_field(v, at, "status")
        if status not in ("ok", "skipped", "failed"):
            self.fail(f"{at}/status", f'expected one of "ok", "skipped", "failed", found {_dump(status)}')
        self.string_field(v, at, "reason")
        timing = self.field(v, at, "timing_method")
        if timing is not None:
            method = self.string(timing, f"{at}/timing_method")
            if method not in ("cuda_events_latched", "host_steady_clock"):
                self.fail(f"{at}/timing_method",
                          f'expected "cuda_events_latched", "host_steady_clock" or null, found {_dump(method)}')
        self.count(self.field(v, at, "operations_per_sample"), f"{at}/operations_per_sample")
        self.count(self.field(v, at, "bytes_per_sample"), f"{at}/bytes_per_sample")
        self.number(self.field(v, at, "elapsed_seconds"), f"{at}/elapsed_seconds")
        if "timeline" in v and not isinstance(v["timeline"], str):
            self.fail(f"{at}/timeline", f"expected a string, found {_dump(v['timeline'])}")
        gate = v.get("gate")
        if gate is not None:
            self.gate(gate, f"{at}/gate")
        metrics_at = f"{at}/metrics"
        metrics = self.object(self.field(v, at, "metrics"), metrics_at)
        for name, metric in metrics.items():
            self.metric(metric, f"{metrics_at}/{pointer_token(name)}")
        checks = self.array(self.field(v, at, "checks"), f"{at}/checks")
        for i, check in enumerate(checks):
            cat = f"{at}/checks/{i}"
            self.object(check, cat)
            self.string_field(check, cat, "name")
            self.boolean(self.field(check, cat, "passed"), f"{cat}/passed")
            self.string_field(check, cat, "detail")
        # A case that measured has samples: zero would pass every comparison without evidence.
        if status == "ok":
            for name, metric in metrics.items():
                if not metric["samples"]:
                    self.fail(f"{metrics_at}/{pointer_token(name)}/samples",
                              'an "ok" case with no samples: nothing was measured (a case that did not '
                              'measure says so with status "failed" or "skipped")')

    def gate(self, v: Any, at: str) -> None:
        self.object(v, at)

        def percent(value: Any, where: str) -> None:
            pct = self.number(value, where)
            if not (pct > 0) or pct > 1000:
                self.fail(where, f"expected a percentage in (0, 1000], found {_dump(value)}")

        def boolean(value: Any, where: str) -> None:
            if not isinstance(value, bool):
                self.fail(where, f"expected true or false, found {_dump(value)}")

        def entry(value: Any, where: str) -> None:
            # A metric's entry: a percentage, or {"statistic": ..., "threshold_pct": ..., "fixed": ...}
            # (result/gate_block.cpp).
            if is_number(value):
                percent(value, where)
                return
            if not isinstance(value, dict):
                self.fail(where, 'expected a percentage in (0, 1000] or an object {"statistic": ..., '
                                 f'"threshold_pct": ...}}, found {_dump(value)}')
            if not value:
                self.fail(where, f"an empty object: give statistic (one of {GATE_STATISTIC_NAMES}), "
                                 "threshold_pct, or both")
            for key, x in value.items():
                field_at = f"{where}/{pointer_token(key)}"
                if key == "threshold_pct":
                    percent(x, field_at)
                elif key == "statistic":
                    if not isinstance(x, str) or x not in GATE_STATISTICS:
                        self.fail(field_at, f"expected one of {GATE_STATISTIC_NAMES}, found {_dump(x)}")
                elif key == "fixed":
                    boolean(x, field_at)
                else:
                    self.fail(field_at, "unknown field (known fields: statistic, threshold_pct, fixed)")

        for key, value in v.items():
            where = f"{at}/{pointer_token(key)}"
            if key == "threshold_pct":
                percent(value, where)
            elif key == "fixed":
                boolean(value, where)
            elif key == "metrics":
                for name, e in self.object(value, where).items():
                    entry(e, f"{where}/{pointer_token(name)}")
            else:
                self.fail(where, "unknown field (known fields: threshold_pct, fixed, metrics)")

    def metric(self, v: Any, at: str) -> None:
        self.object(v, at)
        self.string_field(v, at, "unit")
        better = self.string_field(v, at, "better")
        if better not in ("higher", "lower"):
            self.fail(f"{at}/better", f'expected "higher" or "lower", found {_dump(better)}')
        samples = self.array(self.field(v, at, "samples"), f"{at}/samples")
        for i, s in enumerate(samples):
            self.number(s, f"{at}/samples/{i}")
        stats_at = f"{at}/stats"
        stats = self.object(self.field(v, at, "stats"), stats_at)
        n = self.count(self.field(stats, stats_at, "n"), f"{stats_at}/n")
        for key in ("median", "min", "max", "mean", "p10", "p90", "stddev", "cv"):
            self.number(self.field(stats, stats_at, key), f"{stats_at}/{key}")
        if n != len(samples):
            self.fail(f"{stats_at}/n", f"is {n} but the metric has {len(samples)} samples")
        if "distribution" in v:
            dist_at = f"{at}/distribution"
            repetitions = _DistributionReader(self.path, dist_at).distribution(v["distribution"])
            if repetitions != len(samples):
                self.fail(f"{dist_at}/per_repetition",
                          f"holds {repetitions} repetitions but the metric has {len(samples)} samples")


# --------------------------------------------------------------------------------------------
# A metric's per-operation distribution (stats/operation_distribution.cpp, distribution_from_json)
# and its histogram (stats/latency_histogram.cpp, LatencyHistogram::from_json): the same checks,
# in the same order, at the same pointers, in the same words.

# The statistics a distribution holds, in order (kDistributionStatistics).
DISTRIBUTION_STATISTICS = ("p50", "p90", "p99", "p99.9", "max")
DISTRIBUTION_QUANTILES = {"p50": 0.50, "p90": 0.90, "p99": 0.99, "p99.9": 0.999, "max": 1.0}
HISTOGRAM_SCHEMA = "pathbench.histogram/v1"
_HISTOGRAM_FIELDS = ("schema", "lowest", "highest", "significant_digits", "count", "min", "max", "sum",
                     "overflow", "buckets")
_HISTOGRAM_MAX_RANGE_RATIO = 2.0 ** 63


def number_text(value: float) -> str:
    """A double as std::to_chars writes it: the shortest digits that read back as the same value,
    in fixed or in scientific notation, whichever is shorter (fixed on a tie)."""
    value = float(value)
    if not math.isfinite(value):
        return "inf" if value > 0 else "-inf" if value < 0 else "nan"
    sign, digits, exponent = decimal.Decimal(repr(value)).as_tuple()
    assert isinstance(exponent, int)
    text = "".join(map(str, digits)).lstrip("0") or "0"
    exponent += len("".join(map(str, digits))) - len(text) if text != "0" else 0
    stripped = text.rstrip("0")
    exponent += len(text) - len(stripped) if stripped else 0
    text = stripped or "0"
    if text == "0":
        return "-0" if sign else "0"
    point = len(text) + exponent  # the decimal point after this many digits
    if point <= 0:
        fixed = "0." + "0" * -point + text
    elif point >= len(text):
        # A whole number in fixed notation is written exactly (2^64: 18446744073709551616).
        fixed = str(abs(int(value)))
    else:
        fixed = text[:point] + "." + text[point:]
    e = point - 1
    scientific = text[0] + ("." + text[1:] if len(text) > 1 else "") + f"e{'-' if e < 0 else '+'}{abs(e):02d}"
    return ("-" if sign else "") + (fixed if len(fixed) <= len(scientific) else scientific)


def _compact(value: Any) -> str:
    """A JSON value as nlohmann's dump() writes it (no spaces), cut short."""
    return _short(json.dumps(value, ensure_ascii=False, separators=(",", ":")), 80)


def _value_text(value: Any) -> str:
    """A JSON value as the histogram reader quotes it: compact, ASCII, at most 60 characters."""
    text = json.dumps(value, ensure_ascii=True, separators=(",", ":"))
    return text if len(text) <= 60 else text[:60] + "..."


class HistogramGrid:
    """The bucket edges of a pathbench.histogram/v1 configuration, computed as the C++ histogram
    computes them (so that an edge it wrote is recognised bit for bit): bucket 0 is [0, lowest],
    bucket i >= 1 is (edge(i - 1), edge(i)], S = 2^bits sub-buckets per octave, the last edge is
    `highest`; a value above it is in the overflow, index `size`."""

    def __init__(self, lowest: float, highest: float, significant_digits: int) -> None:
        self.lowest = lowest
        self.highest = highest
        self.significant_digits = significant_digits
        self.bits = {1: 4, 2: 7, 3: 10}[significant_digits]
        self.size = self._raw_index(highest) + 1

    def _raw_edge(self, index: int) -> float:
        if index == 0:
            return self.lowest
        octave = (index - 1) >> self.bits
        sub_bucket = (index - 1) & ((1 << self.bits) - 1)
        multiplier = math.ldexp(float((1 << self.bits) + sub_bucket + 1), octave - self.bits)
        return self.lowest * multiplier

    def _raw_index(self, above_lowest: float) -> int:
        scaled = above_lowest / self.lowest
        index = 1
        if scaled > 1:
            fraction, exponent = math.frexp(scaled)
            position = math.ldexp(2 * fraction - 1, self.bits)
            index = max(((exponent - 1) << self.bits) + math.ceil(position), 1)
        # The division rounds, so `scaled` may sit one bucket off; the edges as computed decide.
        while index > 1 and above_lowest <= self._raw_edge(index - 1):
            index -= 1
        while above_lowest > self._raw_edge(index):
            index += 1
        return index

    def upper_edge(self, index: int) -> float:
        return self.highest if index + 1 == self.size else self._raw_edge(index)

    def index(self, seconds: float) -> int:
        """The bucket of a duration >= 0; `size` for the overflow."""
        if seconds <= self.lowest:
            return 0
        if seconds > self.highest:
            return self.size
        return self._raw_index(seconds)

    def exact_index(self, edge: float) -> int:
        """The bucket whose upper edge is exactly `edge`, or -1 (then index() and upper_edge()
        decide the slow way). The fast path of the bucket check: for an edge on the grid it
        computes what index() gives, without its searching, in one edge computation."""
        lowest = self.lowest
        if not lowest < edge < self.highest:
            if edge == self.highest:
                return self.size - 1
            return 0 if edge == lowest else -1
        fraction, exponent = math.frexp(edge / lowest)
        bits = self.bits
        index = ((exponent - 1) << bits) + math.ceil(math.ldexp(2 * fraction - 1, bits))
        # The division rounds: an edge's quotient may land just above its whole position, one
        # bucket too far. An edge equal to edge(i) is in bucket i (the edges strictly increase).
        for candidate in (index, index - 1):
            if 1 <= candidate < self.size - 1:
                octave = (candidate - 1) >> bits
                sub_bucket = (candidate - 1) & ((1 << bits) - 1)
                if lowest * math.ldexp(float((1 << bits) + sub_bucket + 1), octave - bits) == edge:
                    return candidate
        return -1

    def text(self) -> str:
        return (f"lowest {number_text(self.lowest)} s, highest {number_text(self.highest)} s, "
                f"{self.significant_digits} significant digits")


class _DistributionReader:
    """Reads one metric's "distribution"; every failure names the field's pointer below `where`."""

    def __init__(self, path: Path, where: str) -> None:
        self.path = path
        self.where = where

    def fail(self, field: str, message: str) -> NoReturn:
        raise InputError(self.path, self.where + field, message)

    def member(self, obj: dict[str, Any], field: str, key: str) -> Any:
        if key not in obj:
            self.fail(field, f'missing field "{key}"')
        return obj[key]

    def finite_non_negative(self, v: Any, field: str) -> float:
        if not is_number(v):
            self.fail(field, f"expected a number, found {_compact(v)}")
        if not math.isfinite(v) or v < 0:
            self.fail(field, f"expected a finite number >= 0, found {_compact(v)}")
        return float(v)

    def distribution(self, j: Any) -> int:
        """Checks the distribution; returns its number of repetitions."""
        if not isinstance(j, dict):
            self.fail("", f"expected an object, found {_compact(j)}")
        for key in j:
            if key not in ("operations", "mean", "per_repetition", "histogram") and key not in DISTRIBUTION_QUANTILES:
                self.fail(f"/{pointer_token(key)}", "unknown field")
        ops = self.member(j, "", "operations")
        if not (isinstance(ops, int) and not isinstance(ops, bool) and 1 <= ops <= _UINT64_MAX):
            self.fail("/operations", f"expected an integer >= 1, found {_compact(ops)}")
        self.finite_non_negative(self.member(j, "", "mean"), "/mean")
        previous = 0.0
        for k, key in enumerate(DISTRIBUTION_STATISTICS):
            value = self.finite_non_negative(self.member(j, "", key), f"/{key}")
            if k > 0 and value < previous:
                self.fail(f"/{key}", f"is below {DISTRIBUTION_STATISTICS[k - 1]}: percentiles are ordered")
            previous = value
        per = self.member(j, "", "per_repetition")
        if not isinstance(per, dict):
            self.fail("/per_repetition", "expected an object")
        for key in per:
            if key not in DISTRIBUTION_QUANTILES:
                self.fail(f"/per_repetition/{pointer_token(key)}",
                          f"unknown statistic (one of {', '.join(DISTRIBUTION_STATISTICS)})")
        repetitions = 0
        for k, key in enumerate(DISTRIBUTION_STATISTICS):
            at = f"/per_repetition/{key}"
            values = self.member(per, "/per_repetition", key)
            if not isinstance(values, list) or not values:
                self.fail(at, "expected a non-empty array, one value per repetition")
            for r, value in enumerate(values):
                self.finite_non_negative(value, f"{at}/{r}")
            if k == 0:
                repetitions = len(values)
            elif len(values) != repetitions:
                self.fail(at, f"has {len(values)} values but p50 has {repetitions}")
        count = self.histogram(self.member(j, "", "histogram"))
        if count != ops:
            self.fail("/operations", f"is {ops} but the histogram counts {count}")
        return repetitions

    # LatencyHistogram::from_json

    def hnumber(self, v: Any, field: str) -> float:
        if not is_number(v):
            self.fail(field, f"must be a number, not {_value_text(v)}")
        if not math.isfinite(v):
            self.fail(field, "must be a finite number")
        return float(v)

    def hcount(self, v: Any, field: str) -> int:
        if not (isinstance(v, int) and not isinstance(v, bool)):
            self.fail(field, f"must be a non-negative integer, not {_value_text(v)}")
        if v < 0:
            self.fail(field, f"must not be negative, not {_value_text(v)}")
        return v

    def histogram(self, j: Any) -> int:
        """Checks the histogram; returns its count."""
        where = "/histogram"
        if not isinstance(j, dict):
            self.fail(where, f"must be a JSON object, not {_value_text(j)}")
        # The C++ reader sees the object with its keys sorted (nlohmann::json): the first unknown
        # key in that order is the one named.
        for key in sorted(j):
            if key not in _HISTOGRAM_FIELDS:
                self.fail(where, f"unknown field {_value_text(key)} in {HISTOGRAM_SCHEMA}")

        def field(key: str) -> Any:
            if key not in j:
                self.fail(f"{where}/{key}", "is missing")
            return j[key]

        schema = field("schema")
        if schema != HISTOGRAM_SCHEMA:
            self.fail(f"{where}/schema", f'must be "{HISTOGRAM_SCHEMA}", not {_value_text(schema)}')
        lowest = self.hnumber(field("lowest"), f"{where}/lowest")
        highest = self.hnumber(field("highest"), f"{where}/highest")
        digits = self.hcount(field("significant_digits"), f"{where}/significant_digits")
        if not 1 <= digits <= 3:
            self.fail(f"{where}/significant_digits", f"must be 1, 2 or 3, not {digits}")
        if not lowest > 0:
            self.fail(f"{where}/lowest", f"must be a finite number of seconds > 0, not {number_text(lowest)}")
        if not highest > lowest:
            self.fail(f"{where}/highest", f"must be a finite number of seconds greater than lowest "
                                          f"({number_text(lowest)}), not {number_text(highest)}")
        if highest / lowest > _HISTOGRAM_MAX_RANGE_RATIO:
            self.fail(f"{where}/highest", f"may be at most 2^63 times lowest ({number_text(lowest)}), "
                                          f"not {number_text(highest)}")
        grid = HistogramGrid(lowest, highest, digits)
        count = self.hcount(field("count"), f"{where}/count")
        overflow = self.hcount(field("overflow"), f"{where}/overflow")

        def seconds(key: str) -> float:
            value = self.hnumber(field(key), f"{where}/{key}")
            if value < 0:
                self.fail(f"{where}/{key}", f"must be >= 0 seconds, not {number_text(value)}")
            return value

        low, high = seconds("min"), seconds("max")
        total_seconds = seconds("sum")
        buckets = field("buckets")
        if not isinstance(buckets, list):
            self.fail(f"{where}/buckets", f"must be an array of [upper_edge_seconds, count] pairs, not "
                                          f"{_value_text(buckets)}")
        total = overflow
        first: int | None = None
        last = -1
        exact_index = grid.exact_index
        for k, pair in enumerate(buckets):
            # The fast path (a float edge exactly on the grid, after the last, and a count > 0)
            # reaches the verdict the checks below reach, in a third of their time: a file of
            # 256 MiB of buckets is read in seconds.
            if type(pair) is list and len(pair) == 2:
                edge, n = pair
                if type(edge) is float and type(n) is int and 0 < n <= _UINT64_MAX - total:
                    index = exact_index(edge)
                    if index > last:
                        total += n
                        if first is None:
                            first = index
                        last = index
                        continue
            at = f"{where}/buckets/{k}"
            if not isinstance(pair, list) or len(pair) != 2:
                self.fail(at, f"must be a pair [upper_edge_seconds, count], not {_value_text(pair)}")
            edge = self.hnumber(pair[0], f"{at}/0")
            index = grid.index(edge) if edge >= 0 else grid.size  # a miss if negative
            if index == grid.size or grid.upper_edge(index) != edge:
                self.fail(f"{at}/0", f"{number_text(edge)} is not a bucket edge of a histogram of {grid.text()}")
            if last >= 0 and index <= last:
                self.fail(f"{at}/0", f"the edges must increase, but {number_text(edge)} follows "
                                     f"{number_text(grid.upper_edge(last))}")
            n = self.hcount(pair[1], f"{at}/1")
            if n == 0:
                self.fail(f"{at}/1", "must be > 0: only non-empty buckets are listed")
            if n > _UINT64_MAX - total:
                self.fail(f"{at}/1", "the counts add up to more than 2^64 - 1")
            total += n
            if first is None:
                first = index
            last = index
        if total != count:
            self.fail(f"{where}/count", f"is {count}, but the buckets and overflow hold {total} samples")
        if count == 0:
            for key, value in (("min", low), ("max", high), ("sum", total_seconds)):
                if value != 0:
                    self.fail(f"{where}/{key}", "must be 0 in a histogram of no samples")
        else:
            if low > high:
                self.fail(f"{where}/min", f"{number_text(low)} is greater than max {number_text(high)}")
            # The extremes are exact, so they must lie in the outermost non-empty buckets.
            lowest_used = first if first is not None else grid.size
            highest_used = grid.size if overflow > 0 else last
            assert highest_used >= 0  # count > 0 and no overflow: the buckets hold the samples
            if grid.index(low) != lowest_used:
                self.fail(f"{where}/min", f"{number_text(low)} does not lie in the lowest non-empty bucket "
                                          "(or overflow)")
            if grid.index(high) != highest_used:
                self.fail(f"{where}/max", f"{number_text(high)} does not lie in the highest non-empty bucket "
                                          "(or overflow)")
            if total_seconds < high:
                self.fail(f"{where}/sum", f"{number_text(total_seconds)} is less than max {number_text(high)}, "
                                          "but samples are never negative")
        return count


@dataclass
class Result:
    """A pathbench.result/v1 document that the C++ reader would accept."""

    path: Path
    data: dict[str, Any]
    index: int = 0

    @property
    def context(self) -> dict[str, Any]:
        return self.data["context"]

    @property
    def cases(self) -> list[dict[str, Any]]:
        return self.data["cases"]

    @property
    def complete(self) -> bool:
        """False for a run that was interrupted or killed: its cases are the finished ones only.
        Files written before the field existed: a run that finished has an end time."""
        if "complete" in self.data:
            return bool(self.data["complete"])
        return self.context["end_time"] != ""

    @property
    def incomplete_reason(self) -> str:
        reason = self.data.get("incomplete_reason") or ""
        if reason:
            return reason
        if self.context["end_time"] == "":
            return "the run did not finish (no end time)"
        return "the run did not finish"

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


_CONTROL_RE = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


def printable(text: str) -> str:
    """Text with control characters (an escaped NUL is valid JSON) shown as U+FFFD: a terminal,
    a Markdown table or an HTML page must not receive them raw."""
    return _CONTROL_RE.sub("\ufffd", text)


def text_of(v: Any) -> str:
    """A context value shown as text: the C++ reader does not type context fields beyond
    scenario_files and the times, so a report must not assume a string there."""
    if v is None:
        return ""
    return v if isinstance(v, str) else json.dumps(v, ensure_ascii=False)


def validate_result(path: Path | str, doc: Any) -> Result:
    path = Path(path)
    _Reader(path).result(doc)
    return Result(path, doc)


def load_result(path: Path | str) -> Result:
    """Reads a pathbench.result/v1 file; InputError (file, JSON pointer, what) where the C++
    reader would refuse it."""
    path = Path(path)
    return validate_result(path, read_json(path))


# --------------------------------------------------------------------------------------------
# pathbench.baseline/v1 (BaselineReader's rules)


# A per-operation metric's statistics (stats/operation_distribution.hpp), and what a gate entry's
# "statistic" may name: "median" (the samples) or one of them.
DISTRIBUTION_STATISTICS = ("p50", "p90", "p99", "p99.9", "max")
GATE_STATISTICS = ("median", *DISTRIBUTION_STATISTICS)
GATE_STATISTIC_NAMES = ", ".join(GATE_STATISTICS)


def gate_entry(gate: Any, metric: str) -> tuple[str, float | None]:
    """What a checked gate block says about `metric`: the statistic judged ("median" unless the
    entry names one) and the threshold (the entry's, else the block's; None: the default)."""
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
    run_medians: list[float]
    # Per distribution statistic, each run's median of its per-repetition values (what a gate on
    # that statistic judges); empty when a run of the baseline has no per_repetition.
    statistic_run_medians: dict[str, list[float]] = field(default_factory=dict)

    def statistic_view(self, statistic: str) -> BaselineMetric | None:
        """The metric as a gate on `statistic` sees it (compare/baseline.hpp statistic_view):
        itself for "median", else the runs' medians of that statistic; None without them."""
        if statistic == "median":
            return self
        medians = self.statistic_run_medians.get(statistic)
        if medians is None:
            return None
        return BaselineMetric(self.name, self.unit, self.better, self.timing_class, medians)

    @property
    def center(self) -> float:
        return median_of(self.run_medians)

    @property
    def spread_pct(self) -> float | None:
        """The between-run spread as the C++ baseline computes it (baseline.cpp, between_run_of):
        the larger of 1.4826 x MAD and the standard deviation of the run medians, relative to
        their median; None below MIN_RUNS_FOR_SPREAD runs."""
        medians = self.run_medians
        if len(medians) < MIN_RUNS_FOR_SPREAD:
            return None
        center = median_of(medians)
        mad = 1.4826 * median_of([abs(x - center) for x in medians])
        mean = math.fsum(medians) / len(medians)
        sd = math.sqrt(math.fsum((x - mean) ** 2 for x in medians) / (len(medians) - 1))
        spread = max(mad, sd)
        return spread / abs(center) * 100 if center != 0 else 0.0


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


def median_of(values: Sequence[float]) -> float:
    if not values:
        return 0.0
    v = sorted(values)
    mid = len(v) // 2
    return v[mid] if len(v) % 2 == 1 else (v[mid - 1] + v[mid]) / 2


class _BaselineReader(_Reader):
    def field(self, obj: Any, at: str, key: str) -> Any:
        if not isinstance(obj, dict):
            self.fail(at, "expected an object")
        if key not in obj:
            self.fail(f"{at}/{pointer_token(key)}", "missing")
        return obj[key]

    def text(self, obj: Any, at: str, key: str) -> str:
        v = self.field(obj, at, key)
        if v is None:
            return ""
        if not isinstance(v, str):
            self.fail(f"{at}/{pointer_token(key)}", "expected a string")
        return v

    def bnumber(self, v: Any, at: str) -> float:
        if not is_number(v):
            self.fail(at, "expected a number")
        if not math.isfinite(v):
            self.fail(at, "not a finite number")
        return float(v)

    def barray(self, obj: Any, at: str, key: str) -> list[Any]:
        v = self.field(obj, at, key)
        if not isinstance(v, list):
            self.fail(f"{at}/{pointer_token(key)}", "expected an array")
        return v

    def per_repetition(self, v: Any, at: str, repetitions: int) -> dict[str, list[float]]:
        """A run's {"p50": [...], ..., "max": [...]} (baseline_file.cpp): every statistic, nothing
        else, one finite value >= 0 per repetition."""
        if not isinstance(v, dict):
            self.fail(at, "expected an object of statistic: per-repetition values")
        for key in v:
            if key not in DISTRIBUTION_STATISTICS:
                self.fail(f"{at}/{pointer_token(key)}",
                          f"unknown statistic (one of {', '.join(DISTRIBUTION_STATISTICS)})")
        out: dict[str, list[float]] = {}
        for key in DISTRIBUTION_STATISTICS:
            sat = f"{at}/{key}"
            if key not in v:
                self.fail(sat, "missing")
            values = v[key]
            if not isinstance(values, list):
                self.fail(sat, "expected an array")
            if len(values) != repetitions:
                self.fail(sat, f"{len(values)} values, but the run has {repetitions} samples (one value per "
                               "repetition)")
            out[key] = []
            for i, x in enumerate(values):
                number = self.bnumber(x, f"{sat}/{i}")
                if number < 0:
                    self.fail(f"{sat}/{i}", "a duration below 0")
                out[key].append(number)
        return out

    def baseline(self, doc: Any) -> Baseline:
        if not isinstance(doc, dict):
            self.fail("", "expected a JSON object")
        schema = self.text(doc, "", "schema")
        if schema != BASELINE_SCHEMA:
            self.fail("/schema", f'"{schema}" is not {BASELINE_SCHEMA}')
        node_type = self.text(doc, "", "node_type")
        self.text(doc, "", "topology_fingerprint")
        self.text(doc, "", "created")
        runs = self.barray(doc, "", "runs")
        if not runs:
            self.fail("/runs", "a baseline holds at least one run")
        for i, r in enumerate(runs):
            at = f"/runs/{i}"
            for key in ("file", "hostname", "start_time", "end_time", "git_sha"):
                self.text(r, at, key)
            context = self.field(r, at, "context")
            if not isinstance(context, dict):
                self.fail(f"{at}/context", "expected an object")
            # compare reads each run's environment for noise (compare.cpp, noise_of).
            if context.get("environment") is not None:
                self.environment(context["environment"], f"{at}/context/environment")
        if not isinstance(self.field(doc, "", "context"), dict):
            self.fail("/context", "expected an object")
        cases: list[BaselineCase] = []
        ids: set[str] = set()
        for k, c in enumerate(self.barray(doc, "", "cases")):
            at = f"/cases/{k}"
            cid = self.text(c, at, "id")
            if not cid:
                self.fail(f"{at}/id", "empty case id")
            if cid in ids:
                self.fail(f"{at}/id", f"case {cid} appears twice")
            ids.add(cid)
            self.text(c, at, "scenario")
            self.text(c, at, "family")
            self.field(c, at, "params")
            timing = self.text(c, at, "timing_method")
            status = self.text(c, at, "status")
            if status not in ("ok", "skipped"):
                self.fail(f"{at}/status", 'expected "ok" or "skipped"')
            self.text(c, at, "reason")
            gate = self.field(c, at, "gate")
            if gate is not None and not isinstance(gate, dict):
                self.fail(f"{at}/gate", "expected an object or null")
            if gate is not None:
                # The scenario's and the result's rule: threshold_pct and metrics only, each a
                # percentage in (0, 1000]. A gate spread.py cannot read is no gate to compare with.
                self.gate(gate, f"{at}/gate")
            metrics = self.field(c, at, "metrics")
            if not isinstance(metrics, dict):
                self.fail(f"{at}/metrics", "expected an object")
            out: list[BaselineMetric] = []
            for name, m in metrics.items():
                mat = f"{at}/metrics/{pointer_token(name)}"
                unit = self.text(m, mat, "unit")
                better = self.text(m, mat, "better")
                if better not in ("higher", "lower"):
                    self.fail(f"{mat}/better", 'expected "higher" or "lower"')
                cls = self.text(m, mat, "timing_class")
                if cls not in ("device", "host"):
                    self.fail(f"{mat}/timing_class", 'expected "device" or "host"')
                mruns = self.barray(m, mat, "runs")
                if len(mruns) != len(runs):
                    self.fail(f"{mat}/runs", f"{len(mruns)} runs, but the baseline has {len(runs)}")
                medians: list[float] = []
                per_statistic: dict[str, list[float]] = {k: [] for k in DISTRIBUTION_STATISTICS}
                every_run_has_them = True
                for r, run in enumerate(mruns):
                    rat = f"{mat}/runs/{r}"
                    medians.append(self.bnumber(self.field(run, rat, "median"), f"{rat}/median"))
                    samples = self.barray(run, rat, "samples")
                    for s, value in enumerate(samples):
                        self.bnumber(value, f"{rat}/samples/{s}")
                    if not samples:
                        self.fail(f"{rat}/samples", "no samples")
                    if isinstance(run, dict) and "per_repetition" in run:
                        values = self.per_repetition(run["per_repetition"], f"{rat}/per_repetition",
                                                     len(samples))
                        for k in DISTRIBUTION_STATISTICS:
                            per_statistic[k].append(median_of(values[k]))
                    else:
                        every_run_has_them = False
                out.append(BaselineMetric(name, unit, better, cls, medians,
                                          per_statistic if every_run_has_them and mruns else {}))
            cases.append(BaselineCase(cid, status, timing, gate, out))
        return Baseline(Path(self.path), node_type, len(runs), cases)


def load_baseline(path: Path | str) -> Baseline:
    """A pathbench.baseline/v1 file; InputError (file, JSON pointer, what) where the C++ reader
    would refuse it, and for a result file (one run has no between-run spread)."""
    path = Path(path)
    doc = read_json(path)
    if isinstance(doc, dict) and doc.get("schema") == RESULT_SCHEMA:
        raise InputError(path, "/schema", f'"{RESULT_SCHEMA}" is a result, not a baseline: the spread takes at '
                                          f"least {MIN_RUNS_FOR_SPREAD} runs (make a baseline with: pathbench "
                                          "baseline promote RESULT...)")
    return _BaselineReader(path).baseline(doc)


# --------------------------------------------------------------------------------------------
# Writing outputs


def _final_target(path: Path) -> Path:
    # Like the C++ writer: a link is followed and its target written, the link itself kept.
    return Path(os.path.realpath(path))


def check_output_file(path: Path) -> Path:
    """The file to write for `path` (links followed); InputError when something other than a
    regular file is there: a directory, FIFO or device is never replaced (nor opened)."""
    target = _final_target(path)
    try:
        st = os.stat(target)
    except FileNotFoundError:
        return target
    except OSError as e:
        raise InputError(path, "", f"cannot write: {e.strerror or e}") from None
    if not stat.S_ISREG(st.st_mode):
        raise InputError(path, "", f"cannot write: it is {_describe_file_type(st.st_mode)}, not a regular file; "
                                   "the reports write regular files only and never replace anything else")
    return target


def check_output_dir(path: Path) -> None:
    """InputError when `path` exists and is not a directory (it is created on write)."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return
    except OSError as e:
        raise InputError(path, "", f"cannot write there: {e.strerror or e}") from None
    if not stat.S_ISDIR(st.st_mode):
        raise InputError(path, "", f"cannot write there: it is {_describe_file_type(st.st_mode)}, not a directory")


# The temporary file of each write in progress, for the stop-signal handler (install_stop_signals).
_PENDING_TEMPS: set[str] = set()
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
# What older report versions named their temporary files: ".NAME.<8 characters>.tmp" (tempfile).
_LEGACY_TEMP_RE = re.compile(r"\.[a-z0-9_]{8}\.tmp")
# A temporary file of that kind exists for milliseconds (the data is written from memory): one
# older than this belongs to a writer that was killed.
_LEGACY_TEMP_STALE_SECONDS = 60.0


def _host_name() -> str:
    return os.uname().nodename.replace("/", "_") or "host"


def _temporary_prefix(target: Path) -> str:
    """".NAME.tmp-HOST-": the C++ writer's naming (core/atomic_file.cpp), so that each recognises
    the other's leftovers and a listing shows at once whose write did not finish."""
    return f".{target.name}.tmp-{_host_name()}-"


def remove_stale_temporary_files(target: Path) -> int:
    """Removes what killed writes of `target` left beside it: ".NAME.tmp-HOST-PID.XXXXXX" of this
    host whose process is gone (another host's writer on a shared folder, or a live one here, is
    left alone), and the older reports' ".NAME.XXXXXXXX.tmp" once it is a minute old. Returns how
    many were removed; never fails."""
    prefix = _temporary_prefix(target)
    legacy = f".{target.name}"
    removed = 0
    try:
        entries = list(os.scandir(target.parent))
    except OSError:
        return 0
    for entry in entries:
        name = entry.name
        try:
            if name.startswith(prefix):
                pid_text, dot, rest = name[len(prefix):].partition(".")
                if not (dot and len(rest) == 6 and pid_text.isdigit() and pid_text.isascii()) or int(pid_text) <= 0:
                    continue
                if _process_exists(int(pid_text)):
                    continue
            elif name.startswith(legacy) and _LEGACY_TEMP_RE.fullmatch(name, len(legacy)):
                if time.time() - entry.stat(follow_symlinks=False).st_mtime < _LEGACY_TEMP_STALE_SECONDS:
                    continue
            else:
                continue
            if not entry.is_file(follow_symlinks=False):
                continue
            os.unlink(entry.path)
            removed += 1
        except OSError:
            continue
    return removed


def _process_exists(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError):
        return True  # someone else's process, or no pid at all: not provably gone, so left alone
    return True


def _create_temporary(parent: Path, prefix: str) -> tuple[int, str]:
    """An exclusive new file "<prefix><pid>.XXXXXX" in `parent` (mkstemp's six characters, as the
    C++ writer's mkstemp makes them)."""
    alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
    for _ in range(100):
        name = prefix + f"{os.getpid()}." + "".join(secrets.choice(alphabet) for _ in range(6))
        path = os.path.join(parent, name)
        try:
            return os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600), path
        except FileExistsError:
            continue
    raise FileExistsError(errno.EEXIST, "no unused temporary file name", os.path.join(parent, prefix))


def write_atomically(path: Path, data: bytes) -> None:
    """Writes `data` to a temporary file beside the target and renames it over the target, so a
    reader never sees half a file. The temporary file is removed on any failure, and on SIGINT,
    SIGTERM or SIGHUP once install_stop_signals ran (run_main does); what a killed write (SIGKILL)
    left is removed by the next write of the same target. Every report writes through here."""
    target = check_output_file(path)
    parent = target.parent
    try:
        parent.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise InputError(path, "", f"cannot write: {e.strerror or e}") from None
    remove_stale_temporary_files(target)
    # No stop signal between creating the temporary file and recording it: the handler must know
    # every temporary file there is.
    blocked = _block_stop_signals()
    try:
        fd, tmp = _create_temporary(parent, _temporary_prefix(target))
        _PENDING_TEMPS.add(tmp)
    except OSError as e:
        raise InputError(path, "", f"cannot write: {e.strerror or e}") from None
    finally:
        _unblock_stop_signals(blocked)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fchmod(f.fileno(), 0o644)
            os.fsync(f.fileno())
        os.replace(tmp, target)
    except BaseException as e:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        if isinstance(e, OSError) and e.errno in (errno.ENOSPC, errno.EDQUOT):
            raise DiskFull(f"{path}: cannot write: {e.strerror or e}") from None
        if isinstance(e, OSError):
            raise InputError(path, "", f"cannot write: {e.strerror or e}") from None
        raise
    finally:
        _PENDING_TEMPS.discard(tmp)


def _block_stop_signals() -> bool:
    try:
        signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)
    except (OSError, ValueError):
        return False
    return True


def _unblock_stop_signals(blocked: bool) -> None:
    if blocked:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, STOP_SIGNALS)


_STOP_PROG = ["report"]  # the script's name, for the handler's one line


def _on_stop_signal(signum: int, _frame: FrameType | None) -> None:
    """Removes the temporary file of the write in progress and exits 128 + the signal at once.
    Not an exception: one raised here while Python runs a weakref callback or a finaliser (which
    matplotlib's drawing does all the time) is printed and dropped, and the report ran on. A
    report has nothing else to save: its outputs appear by rename, whole, or not at all."""
    for tmp in list(_PENDING_TEMPS):
        try:
            os.unlink(tmp)
        except OSError:
            pass
    name = signal.Signals(signum).name
    try:
        os.write(2, f"{_STOP_PROG[0]}: stopped by {name}; nothing half-written is left\n".encode())
    except OSError:
        pass
    os._exit(128 + signum)


def install_stop_signals(prog: str) -> None:
    """SIGINT, SIGTERM and SIGHUP stop the script through _on_stop_signal (instead of killing it
    where it stands, temporary file and all). Only the main thread can install handlers; elsewhere
    a no-op."""
    _STOP_PROG[0] = prog
    try:
        for signum in STOP_SIGNALS:
            # A signal ignored by whoever started us (nohup: SIGHUP) stays ignored.
            if signal.getsignal(signum) is not signal.SIG_IGN:
                signal.signal(signum, _on_stop_signal)
    except ValueError:
        pass


# --------------------------------------------------------------------------------------------
# Command line


class UsageParser(argparse.ArgumentParser):
    """argparse, but a usage error exits 3 like every pathbench command (DESIGN.md: exit codes)."""

    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        self.exit(EXIT_BAD_INPUT, f"{self.prog}: error: {message}\n")


# RE2 may use at most this much memory for one filter, as pathbench's --filter
# (scenario/case_filter.hpp, kCaseFilterMaxMemBytes).
CASE_FILTER_MAX_MEM_BYTES = 32 << 20
# RE2's messages quote the pattern; a 100 KB pattern must not make a 100 KB message.
_MAX_QUOTED_ERROR = 200


def case_filter(pattern: str | None, option: str = "--filter") -> Callable[[str], bool] | None:
    """`--filter REGEX` as pathbench reads it (scenario/case_filter.cpp): RE2 syntax (no
    backreferences, no lookaround, no possessive repeats), matched anywhere in the id in time
    linear in the id, so no pattern can hang a report; at most 32 MiB to compile. Returns a
    predicate on case ids, or None (every case) for no or an empty pattern; InputError
    "--filter: what" for a pattern pathbench refuses. The google-re2 package is imported only
    here: without --filter the scripts that need only the standard library still do."""
    if not pattern:
        return None
    try:
        pattern.encode("utf-8")
    except UnicodeEncodeError:
        # A command-line argument that is no UTF-8 arrives with its bytes as lone surrogates.
        raise InputError.option(option, "not a valid regular expression (RE2 syntax): invalid UTF-8") from None
    try:
        import re2  # type: ignore[import-not-found]  # google-re2, reports/requirements.txt
    except ImportError:
        raise InputError.option(option, "needs the google-re2 package, the RE2 engine pathbench uses "
                                        "(pip install -r reports/requirements.txt)") from None
    options = re2.Options()
    options.max_mem = CASE_FILTER_MAX_MEM_BYTES
    options.log_errors = False  # the error goes into the message, not to stderr as well
    try:
        regex = re2.compile(pattern, options)
    except Exception as e:  # noqa: BLE001 - re2.error, and whatever the binding raises for a pattern
        detail = e.args[0] if isinstance(e, re2.error) and e.args else e
        text = detail.decode("utf-8", "replace") if isinstance(detail, bytes) else str(detail)
        text = printable(_short(text, _MAX_QUOTED_ERROR))
        if "pattern too large" in text:
            raise InputError.option(option, f"the regular expression needs more than "
                                            f"{CASE_FILTER_MAX_MEM_BYTES >> 20} MiB to compile: {text}") from None
        raise InputError.option(option, f"not a valid regular expression (RE2 syntax): {text}") from None
    return lambda case_id: regex.search(case_id) is not None


def run_main(prog: str, main: Callable[[], int]) -> NoReturn:
    """Runs a script's main: bad input or usage (InputError) exits 3 with its message, a full disk
    2 (the output is incomplete), an unexpected error 1 with a one-line message
    (PATHBENCH_TRACEBACK=1 shows the traceback); never a traceback for what a user typed or fed in."""
    install_stop_signals(prog)
    try:
        code = main()
        sys.stdout.flush()
    except InputError as e:
        print(f"{prog}: error: {e}", file=sys.stderr)
        code = EXIT_BAD_INPUT
    except DiskFull as e:
        print(f"{prog}: error: {e}; the output is incomplete", file=sys.stderr)
        code = EXIT_INCOMPLETE
    except BrokenPipeError:
        # The reader of stdout went away (`table.py ... | head`): nothing left to say to anyone.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        code = EXIT_FAILURE
    except KeyboardInterrupt:
        print(f"{prog}: interrupted", file=sys.stderr)
        code = 130
    except Exception as e:  # noqa: BLE001 - the last line of defence against a traceback
        if os.environ.get("PATHBENCH_TRACEBACK"):
            raise
        print(f"{prog}: internal error (a bug in the report; PATHBENCH_TRACEBACK=1 shows where): "
              f"{type(e).__name__}: {e}", file=sys.stderr)
        code = EXIT_FAILURE
    sys.exit(code)
