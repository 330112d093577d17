"""A fake ipc child for tests/unit/test_ipc_family.cpp: speaks (or breaks) pathbench's ipc
protocol (src/core/ipc_channel.hpp) on the descriptor given by --fd, as MODE says.

usage: fake_ipc_child.py MODE --fd N
MODE: serve (valid hello, valid sample replies), crash_on_sample (SIGSEGV at the first sample),
hang_on_sample, garbage_on_sample, oversized_on_sample, error_on_sample (an error message, then
serves), ignore_exit (never exits by itself), bad_hello (a hello without the protocol version).
"""
import json
import os
import signal
import socket
import struct
import sys
import time

HELLO, IPC_HANDLE, DESCRIPTOR, COMMAND, RESULT, ERROR = 1, 2, 3, 4, 5, 6


def message(kind, payload):
    return b"PB" + bytes([1, kind]) + struct.pack("<I", len(payload)) + payload


def main():
    mode = sys.argv[1]
    fd = int(sys.argv[sys.argv.index("--fd") + 1])
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET, fileno=fd)
    hello = {"pid": os.getpid()} if mode == "bad_hello" else {"protocol": 1, "pid": os.getpid()}
    sock.send(message(HELLO, json.dumps(hello).encode()))
    if mode == "ignore_exit":
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    errored = False
    while True:
        record = sock.recv(70000)
        if not record:
            return 1
        kind, length = record[3], struct.unpack("<I", record[4:8])[0]
        if kind != COMMAND:
            continue
        command = json.loads(record[8:8 + length])
        if command["op"] == "exit":
            if mode == "ignore_exit":
                time.sleep(1000)
            return 0
        if command["op"] != "sample":
            sock.send(message(RESULT, b'{"ready":true}'))
            continue
        if mode == "crash_on_sample":
            os.kill(os.getpid(), signal.SIGSEGV)
        if mode == "hang_on_sample":
            time.sleep(1000)
        if mode == "garbage_on_sample":
            sock.send(b"this is not a pathbench message")
            continue
        if mode == "oversized_on_sample":
            sock.send(b"PB" + bytes([1, RESULT]) + struct.pack("<I", 1 << 30))
            continue
        if mode == "error_on_sample" and not errored:
            errored = True
            sock.send(message(ERROR, b"cudaIpcOpenMemHandle: invalid handle"))
            continue
        reply = {"open_time": 0.001, "close_time": 0.0005, "access_seconds": 0.002,
                 "accesses": command["accesses"], "verified": "fake: nothing verified"}
        sock.send(message(RESULT, json.dumps(reply).encode()))


if __name__ == "__main__":
    sys.exit(main())
