"""Writing a report's outputs: atomically (a temporary file beside the target, renamed over it), never
over something that is not a regular file, and with nothing half-written left behind when a stop
signal (SIGINT, SIGTERM, SIGHUP) ends the script. The temporary files are named as the C++ writer
names its own (core/atomic_file.cpp), so each recognises the other's leftovers.
"""
from __future__ import annotations

import errno
import os
import re
import secrets
import signal
import stat
import time
from pathlib import Path
from types import FrameType

from report_errors import DiskFull, InputError


def _describe_file_type(mode: int) -> str:
    for test, name in ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return name
    return "not a regular file"


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
