#!/usr/bin/env python3
"""textbench.py: row 6 of the benchmark, `madbench text` in Python.

usage: textbench.py [-n N] [-b LINES] [-t S] [-w S] PORT_DIR

Directed-route Get(NodeInfo) hop 0 written to PORT_DIR/send, up to LINES
lines per write() while fewer than N are in flight; answers read from
PORT_DIR/recv (non-blocking, 64 KiB reads; poll() when a read finds
nothing), the tid= of every line struck off the set of requests in
flight, as a script would.  Warm-up -w seconds,
then counts -t seconds; prints the line madbench prints.
"""

import argparse
import os
import select
import sys
import time


def main(argv):
    ap = argparse.ArgumentParser()
    ap.add_argument("-n", type=int, default=32)
    ap.add_argument("-b", type=int, default=32)
    ap.add_argument("-t", type=float, default=2.0)
    ap.add_argument("-w", type=float, default=0.3)
    ap.add_argument("port_dir")
    a = ap.parse_args(argv[1:])
    sfd = os.open(os.path.join(a.port_dir, "send"), os.O_WRONLY)
    rfd = os.open(os.path.join(a.port_dir, "recv"), os.O_RDONLY | os.O_NONBLOCK)
    poller = select.poll()
    poller.register(rfd, select.POLLIN)
    pending = set()
    tid = 1
    answers = errors = 0
    rest = b""
    t0 = time.monotonic() + a.w
    end = t0 + a.t
    counting = False
    more = True
    while more or pending:
        room = a.n - len(pending)
        if more and room >= min(a.b, a.n):
            # TIDs are kept as the hex text recv shows them.
            tids = [b"%x" % t for t in range(tid, tid + room)]
            tid += room
            pending.update(tids)
            os.write(sfd, b"".join(b"dr=0 method=get attr=NodeInfo tid=0x%s\n"
                                   % t for t in tids))
            continue
        # Read first, poll() only when there is nothing: each poll() of a
        # FUSE file is a round trip to the daemon too.
        try:
            chunk = os.read(rfd, 65536)
        except BlockingIOError:
            if not poller.poll(5000):
                raise SystemExit("textbench: no answer in 5 s")
            continue
        # Whole lines only; the tid= that starts each one is looked up.
        lines = (rest + chunk).split(b"\n")
        rest = lines.pop()
        pending.difference_update([ln[6:ln.find(b" ", 6)] for ln in lines])
        n = len(lines)
        e = chunk.count(b" error=")
        now = time.monotonic()
        if counting:
            answers += n
            errors += e
        elif now >= t0:
            counting, t0 = True, now
        if more and now >= end:
            more = False
            t1 = now
    dt = t1 - t0
    print("mode=python outstanding=%d batch=%d answers=%d errors=%d "
          "seconds=%.3f rate=%.1f" % (a.n, a.b, answers, errors, dt,
                                      answers / dt if dt > 0 else 0.0))
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
