#!/usr/bin/env python3
"""A delaying, lossy TCP link between a rig and its group's broker, for `rig bench group
--link lossy` and the group tests (this machine's kernel has no netem).

Every chunk read from one end is delivered to the other DELAY ± JITTER ms later (uniform),
in order; with probability LOSS a chunk is held back one retransmission timeout (RTO ms)
more, as TCP shows a lost segment: it and everything behind it arrive late, together.
Both directions are delayed, so a round trip takes twice the delay.

    lossy_link.py --target HOST:PORT [--listen HOST:PORT] [--delay-ms 20] [--jitter-ms 5]
                  [--loss 0.01] [--rto-ms 200] [--seed N]

Prints "listening HOST:PORT" once bound (port 0: one the kernel picks). Commands on
stdin, one a line, each answered "ok COMMAND" on stdout once done:

  cut    black-hole the link (Wi-Fi out of range): nothing is delivered either way and
         connections stay open; a new connection is accepted but carries nothing. What was
         sent meanwhile is delivered when the link is back (TCP retransmits it), unless the
         other end gave up on the connection first (its close is passed on then).
  drop   close every connection at once (both ends see it) and refuse new ones (accepted
         and closed) until `heal`.
  heal   the link is back.
  stats  prints "stats chunks=N held=N connections=N delay_ms_p50=X delay_ms_p99=X delay_ms_max=X"
         (the delay each chunk really had, from read to written, cuts included).

The end of stdin closes everything, prints the stats line and exits.
"""
import argparse
import collections
import random
import socket
import sys
import threading
import time

lock = threading.Lock()
out_lock = threading.Lock()
delays = []  # seconds each chunk spent in the link
counts = {"chunks": 0, "held": 0, "connections": 0}


def say(line):
    with out_lock:
        sys.stdout.write(line + "\n")
        sys.stdout.flush()


def address(text):
    host, _, port = text.rpartition(":")
    return host or "127.0.0.1", int(port)


class Link:
    """One end-to-end state: open, cut (black hole) or dropped, for every connection."""

    def __init__(self):
        self.state = "open"
        self.changed = threading.Condition(lock)
        self.connections = set()

    def set(self, state):
        with lock:
            self.state = state
            doomed = list(self.connections) if state == "dropped" else []
            self.changed.notify_all()
        for connection in doomed:
            connection.close()


class Direction:
    """One way of one connection: chunks in order, each with the time it is due."""

    def __init__(self, connection, source, sink, rng, options):
        self.connection = connection
        self.source = source
        self.sink = sink
        self.rng = rng
        self.options = options
        self.queue = collections.deque()  # (due, read_at, bytes or None for the end)
        self.last_due = 0.0

    def read(self):
        while True:
            try:
                data = self.source.recv(65536)
            except OSError:
                data = b""
            now = time.monotonic()
            delay = self.options.delay_ms + self.rng.uniform(-self.options.jitter_ms, self.options.jitter_ms)
            held = bool(data) and self.rng.random() < self.options.loss
            if held:
                delay += self.options.rto_ms
            # In order: a chunk never overtakes one held before it.
            due = max(self.last_due, now + max(delay, 0) / 1000)
            self.last_due = due
            with lock:
                if data:
                    counts["chunks"] += 1
                    counts["held"] += int(held)
                self.queue.append((due, now, data))
                self.connection.link.changed.notify_all()
            if not data:
                return

    def write(self):
        link = self.connection.link
        while True:
            with lock:
                while True:
                    if self.connection.closed:
                        return
                    if self.queue and link.state == "open":
                        wait = self.queue[0][0] - time.monotonic()
                        if wait <= 0:
                            break
                        link.changed.wait(wait)
                    else:
                        link.changed.wait()
                _, read_at, data = self.queue.popleft()
            if not data:
                # The other end closed: pass it on (after everything it sent).
                self.connection.close()
                return
            try:
                self.sink.sendall(data)
            except OSError:
                self.connection.close()
                return
            with lock:
                delays.append(time.monotonic() - read_at)


class Connection:
    def __init__(self, link, client, target, rng, options):
        self.link = link
        self.client = client
        self.target = target
        self.rng = rng
        self.options = options
        self.server = None
        self.closed = False
        with lock:
            link.connections.add(self)
            counts["connections"] += 1
        threading.Thread(target=self.run, daemon=True).start()

    def run(self):
        # In a black hole the connection to the broker is not even opened: it is made once
        # the link is back (what the client sent meanwhile waits in its direction's queue).
        with lock:
            while self.link.state == "cut" and not self.closed:
                self.link.changed.wait()
            if self.closed or self.link.state == "dropped":
                refused = True
            else:
                refused = False
        if refused:
            self.close()
            return
        try:
            self.server = socket.create_connection(self.target)
            self.server.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        except OSError:
            self.close()
            return
        for source, sink in ((self.client, self.server), (self.server, self.client)):
            direction = Direction(self, source, sink, random.Random(self.rng.random()), self.options)
            threading.Thread(target=direction.read, daemon=True).start()
            threading.Thread(target=direction.write, daemon=True).start()

    def close(self):
        with lock:
            if self.closed:
                return
            self.closed = True
            self.link.connections.discard(self)
            self.link.changed.notify_all()
        for s in (self.client, self.server):
            if s is None:
                continue
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            try:
                s.close()
            except OSError:
                pass


def stats_line():
    with lock:
        d = sorted(delays)
        c = dict(counts)

    def pct(fraction):
        if not d:
            return 0.0
        return d[min(len(d) - 1, max(0, int(len(d) * fraction + 0.999999) - 1))] * 1000

    return (
        f"stats chunks={c['chunks']} held={c['held']} connections={c['connections']} "
        f"delay_ms_p50={pct(0.5):.3f} delay_ms_p99={pct(0.99):.3f} delay_ms_max={(d[-1] * 1000 if d else 0):.3f}"
    )


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--target", required=True, help="HOST:PORT of the broker")
    parser.add_argument("--listen", default="127.0.0.1:0", help="HOST:PORT to listen on (port 0: any)")
    parser.add_argument("--delay-ms", type=float, default=20)
    parser.add_argument("--jitter-ms", type=float, default=5)
    parser.add_argument("--loss", type=float, default=0.01, help="share of chunks held back one RTO")
    parser.add_argument("--rto-ms", type=float, default=200)
    parser.add_argument("--seed", type=int, default=None)
    options = parser.parse_args()
    target = address(options.target)
    rng = random.Random(options.seed)
    link = Link()

    listener = socket.socket()
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(address(options.listen))
    listener.listen(64)
    host, port = listener.getsockname()[:2]

    def accept():
        while True:
            try:
                client, _ = listener.accept()
            except OSError:
                return
            client.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            if link.state == "dropped":
                client.close()
                continue
            Connection(link, client, target, random.Random(rng.random()), options)

    threading.Thread(target=accept, daemon=True).start()
    say(f"listening {host}:{port}")
    for line in sys.stdin:
        command = line.strip()
        if command == "cut":
            link.set("cut")
        elif command == "drop":
            link.set("dropped")
        elif command == "heal":
            link.set("open")
        elif command == "stats":
            say(stats_line())
            continue
        elif not command:
            continue
        else:
            say(f"error unknown command {command!r}; valid: cut, drop, heal, stats")
            continue
        say(f"ok {command}")
    say(stats_line())
    link.set("dropped")


if __name__ == "__main__":
    main()
