#!/usr/bin/env python3
"""A stranger without the token tries to starve STOP by holding the server's connections:

    serve_flood.py PORT TOKEN SECONDS

For SECONDS, from 127.0.0.2 and 127.0.0.3 (a stranger's addresses; the server listens on
127.0.0.1), without the token:
  idle         64 sockets that connect and say nothing, reopened as soon as the server
               closes one;
  slow-header  16 sockets that send a request head a byte every 0.3 s;
  slow-body    16 sockets that send a whole head (no token) announcing a 100 KB body and
               then a byte every 0.3 s.
Meanwhile, from 127.0.0.1 with the token, a fresh connection every 0.25 s alternately
sends POST /api/stop and GET /api/status (2 s to answer each), and twice a long move is
started and stopped, which must end short of its target.

Prints "FIGURE name value unit" lines and one "PASS flood: …" or "FAIL flood: …" line;
exit 0 when every STOP and status was answered in time and both moves were stopped.
Everything is on loopback, bounded in count (at most 15000 connections opened) and time.
"""
import json
import socket
import sys
import threading
import time

PORT, TOKEN, SECONDS = int(sys.argv[1]), sys.argv[2], float(sys.argv[3])
STRANGERS = ("127.0.0.2", "127.0.0.3")
stop_flood = threading.Event()
opened = [0]
opened_lock = threading.Lock()
MAX_OPENED = 15000


def stranger_socket(n):
    with opened_lock:
        if opened[0] >= MAX_OPENED:
            return None
        opened[0] += 1
    s = socket.socket()
    s.bind((STRANGERS[n % len(STRANGERS)], 0))
    s.settimeout(1)
    try:
        s.connect(("127.0.0.1", PORT))
    except OSError:
        s.close()
        return None
    return s


def closed_by_server(s):
    """Whether the server closed `s` (reads nothing more), without blocking long."""
    try:
        s.settimeout(0.05)
        return s.recv(4096) == b""
    except socket.timeout:
        return False
    except OSError:
        return True


def idle(n):
    sockets = []
    while not stop_flood.is_set():
        sockets = [s for s in sockets if not (closed_by_server(s) and s.close() is None)]
        while len(sockets) < 4 and not stop_flood.is_set():
            s = stranger_socket(n)
            if s is None:
                time.sleep(0.05)
                break
            sockets.append(s)
    for s in sockets:
        s.close()


def trickle(n, prefix, then):
    """Sends `prefix` whole, then `then` a byte every 0.3 s, on a fresh socket each time
    the server closes the last."""
    while not stop_flood.is_set():
        s = stranger_socket(n)
        if s is None:
            time.sleep(0.05)
            continue
        try:
            s.sendall(prefix)
            for byte in then:
                if stop_flood.wait(0.3):
                    break
                s.sendall(bytes([byte]))
        except OSError:
            pass
        s.close()


def request(method, path, body=None, timeout=2.0):
    """One request with the token on a fresh connection from 127.0.0.1: (status, json, seconds)."""
    began = time.monotonic()
    head = f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{PORT}\r\nAuthorization: Bearer {TOKEN}\r\nConnection: close\r\n"
    data = b""
    if body is not None:
        data = json.dumps(body).encode()
        head += f"Content-Type: application/json\r\nContent-Length: {len(data)}\r\n"
    try:
        with socket.create_connection(("127.0.0.1", PORT), timeout=timeout) as s:
            s.settimeout(max(0.05, timeout - (time.monotonic() - began)))
            s.sendall(head.encode() + b"\r\n" + data)
            reply = b""
            while True:
                chunk = s.recv(65536)
                if not chunk:
                    break
                reply += chunk
    except OSError as error:
        return 0, str(error), time.monotonic() - began
    text = reply.decode(errors="replace")
    status = int(text.split(" ", 2)[1]) if text.startswith("HTTP/1.1 ") else 0
    body_text = text.split("\r\n\r\n", 1)[1] if "\r\n\r\n" in text else ""
    try:
        parsed = json.loads(body_text)
    except ValueError:
        parsed = body_text
    return status, parsed, time.monotonic() - began


def main():
    threads = [threading.Thread(target=idle, args=(n,), daemon=True) for n in range(16)]
    head = f"GET /api/status HTTP/1.1\r\nHost: 127.0.0.1:{PORT}\r\nX-Slow: {'a' * 400}\r\n\r\n".encode()
    threads += [threading.Thread(target=trickle, args=(n, b"", head), daemon=True) for n in range(16)]
    body_head = (f"POST /api/goto HTTP/1.1\r\nHost: 127.0.0.1:{PORT}\r\nContent-Type: application/json\r\n"
                 f"Content-Length: 100000\r\n\r\n").encode()
    threads += [threading.Thread(target=trickle, args=(n, body_head, b" " * 1000), daemon=True) for n in range(16)]
    for t in threads:
        t.start()
    ramp = time.monotonic() + 10
    while opened[0] < 100 and time.monotonic() < ramp:
        time.sleep(0.02)
    failures = []
    worst = {"stop": 0.0, "status": 0.0}
    tries = {"stop": 0, "status": 0}
    moves_stopped = 0
    end = time.monotonic() + SECONDS
    n = 0
    while time.monotonic() < end:
        n += 1
        if n in (4, 20):
            # A long move, then STOP: it must end short of its target.
            status, s, _ = request("GET", "/api/status")
            target = 80.0 if status == 200 and s["pose"]["pan"] < 0 else -80.0
            status, s, _ = request("POST", "/api/goto", {"pose": {"pan": target}})
            if status != 202:
                failures.append(f"goto: {status} {s}")
                continue
            deadline = time.monotonic() + 5
            while time.monotonic() < deadline:
                status, s, _ = request("GET", "/api/status")
                if status == 200 and s["state"] == "moving":
                    break
            status, s, seconds = request("POST", "/api/stop", {})
            tries["stop"] += 1
            worst["stop"] = max(worst["stop"], seconds)
            if status != 202:
                failures.append(f"STOP during a move: {status} {s}")
                continue
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline:
                status, s, _ = request("GET", "/api/status")
                if status == 200 and s["state"] == "idle":
                    if abs(s["pose"]["pan"] - target) > 5:
                        moves_stopped += 1
                    break
            continue
        kind = "stop" if n % 2 else "status"
        status, s, seconds = request("POST", "/api/stop", {}) if kind == "stop" else request("GET", "/api/status")
        tries[kind] += 1
        worst[kind] = max(worst[kind], seconds)
        if status != (202 if kind == "stop" else 200):
            failures.append(f"{kind}: {status} {str(s)[:120]} after {seconds:.2f} s")
        time.sleep(0.25)
    stop_flood.set()
    for t in threads:
        t.join(timeout=5)
    print(f"FIGURE flood_connections_opened {opened[0]:.3f} connections", flush=True)
    print(f"FIGURE flood_stop_worst_answer {worst['stop']:.3f} s", flush=True)
    print(f"FIGURE flood_status_worst_answer {worst['status']:.3f} s", flush=True)
    ok = not failures and moves_stopped == 2 and opened[0] > 100
    summary = (f"{tries['stop']} STOPs and {tries['status']} statuses with the token during {SECONDS:.0f} s of a flood of "
               f"{opened[0]} stranger connections (idle, slow head, slow body): {len(failures)} failed; "
               f"{moves_stopped} of 2 long moves stopped short")
    print(("PASS flood: " if ok else "FAIL flood: ") + summary + ("; " + "; ".join(failures[:5]) if failures else ""), flush=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
