#!/usr/bin/env python3
"""vendor-responder.py: serve a vendor MAD class from a umadfs channel.

usage: vendor-responder.py PORT_DIR [--class 0x32] [--oui 0x1405]
                           [--name responder] [--text STRING]

  PORT_DIR   a port directory of a umadfs mount, e.g. /run/umadfs/mlx5_0/ports/1
  --class    vendor class, 0x30-0x4f (default 0x32, OpenIB's ping class)
  --oui      the class's OUI (default 0x1405, OpenIB's)
  --name     the channel to make under PORT_DIR/agents/ (default responder)
  --text     the answer's data (default: the CA's node_desc)

Makes the private channel PORT_DIR/agents/NAME, registers it for Get
requests of the class (`class=... methods=get oui=...` written to its
`register` file) and answers every Get it receives with a GetResp whose
data is the text: the received line with method=getresp and data=
written back to the channel's `send` (its address keys name the
requester).  With the defaults this is an `ibping -S`: `ibping <LID>`
from any node prints "Pong from <node description>".  Prints "ready" when
registered and one line per 100 answers; Ctrl-C (SIGINT) or SIGTERM
removes the channel and exits 0.  Root only.  Python 3 stdlib only.
"""

import argparse
import os
import select
import signal
import sys

VENDOR_DATA_BYTES = 216     # vendor classes 0x30-0x4f: data at MAD byte 40


class Stop(Exception):
    pass


def stop(signum, frame):
    raise Stop()


def main(argv):
    ap = argparse.ArgumentParser(
        description="answer Gets of a vendor MAD class on a umadfs port",
        usage="%(prog)s PORT_DIR [--class 0x32] [--oui 0x1405] [--name N] [--text S]")
    ap.add_argument("port_dir")
    ap.add_argument("--class", dest="mclass", default="0x32")
    ap.add_argument("--oui", default="0x1405")
    ap.add_argument("--name", default="responder")
    ap.add_argument("--text")
    a = ap.parse_args(argv[1:])
    mclass, oui = int(a.mclass, 0), int(a.oui, 0)
    if a.text is None:
        with open(os.path.join(a.port_dir, "..", "..", "node_desc")) as f:
            a.text = f.read().rstrip("\n")
    data = a.text.encode()[:VENDOR_DATA_BYTES].hex()

    chan = os.path.join(a.port_dir, "agents", a.name)
    signal.signal(signal.SIGINT, stop)
    signal.signal(signal.SIGTERM, stop)
    os.mkdir(chan)
    answered = 0
    recv_fd = send_fd = None
    try:
        with open(os.path.join(chan, "register"), "w") as f:
            f.write("class=0x%02x methods=get oui=0x%06x\n" % (mclass, oui))
        recv_fd = os.open(os.path.join(chan, "recv"), os.O_RDONLY | os.O_NONBLOCK)
        send_fd = os.open(os.path.join(chan, "send"), os.O_WRONLY)
        poller = select.poll()
        poller.register(recv_fd, select.POLLIN)
        print("ready: %s class 0x%02x oui 0x%06x" % (chan, mclass, oui), flush=True)
        buf = b""
        while True:
            poller.poll()
            try:
                buf += os.read(recv_fd, 1 << 20)
            except BlockingIOError:
                continue
            *lines, buf = buf.split(b"\n")
            out = []
            for ln in lines:
                toks = ln.decode().split(" ")
                keys = dict(t.split("=", 1) for t in toks)
                if keys.get("method") != "get" or "error" in keys:
                    continue
                # Same line back, as a GetResp with our data; mad= goes
                # (data= and the header keys rebuild the MAD), len= too.
                toks = ["method=getresp" if t == "method=get" else t
                        for t in toks if not t.startswith(("mad=", "len="))]
                out.append(" ".join(toks) + " data=" + data + "\n")
            if out:
                os.write(send_fd, "".join(out).encode())
                before, answered = answered, answered + len(out)
                if answered // 100 != before // 100:
                    print("answered %d" % answered, flush=True)
    except Stop:
        pass
    finally:
        for fd in (recv_fd, send_fd):
            if fd is not None:
                os.close(fd)
        os.rmdir(chan)
    print("answered %d, channel removed" % answered, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
