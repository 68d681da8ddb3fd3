"""The link to vsmartcard's vpcd reader driver (inside pcscd), plus the T=0 transport rules.

vpcd protocol: TCP, the card connects to the reader's port. Every frame is a 2-byte
big-endian length and a payload. A 1-byte payload is a control code (0 power off, 1 power
on, 2 reset, 4 get ATR: answered with one frame holding the ATR); a longer one is a command
APDU, answered with one frame holding the response APDU (data + SW)."""

import socket
import sys
import time

from iso7816 import Apdu, CardError, sw_bytes

# Linux: without TCP_QUICKACK the delayed ACK costs ~40 ms per APDU through vpcd.
TCP_QUICKACK = getattr(socket, "TCP_QUICKACK", 12)


class T0Transport:
    """T=0 behaviour on top of a T=1-style handler: response data of a command that sent data
    (or had no Le) is announced with 61 xx and fetched with GET RESPONSE; a case-2 command
    whose Le differs from what is available gets 6C xx, and the resent command (Le = xx) is
    answered from the kept response without running the command twice (so a PSO resent
    after 6C does not use up a second PIN verification)."""

    def __init__(self, inner):
        self.inner = inner
        self.reset()

    def reset(self):
        self.pending, self.pending_sw, self.kept = b"", b"", None

    def handle(self, raw):
        try:
            a = Apdu.parse(raw)
        except CardError:
            return self.inner(raw)
        if a.ins == 0xC0 and a.cla == 0x00:
            if not self.pending:
                return sw_bytes(0x6985)
            le = a.le or 256
            if le > len(self.pending):
                return bytes([0x6C, len(self.pending) & 0xFF])
            out, self.pending = self.pending[:le], self.pending[le:]
            if self.pending:
                return out + bytes([0x61, min(len(self.pending), 256) & 0xFF])
            return out + self.pending_sw
        self.pending = b""
        kept, self.kept = self.kept, None
        if kept and a.le is not None and raw[:-1] == kept[0] and a.le == len(kept[1]):
            return kept[1] + kept[2]
        resp = self.inner(raw)
        data, sw = resp[:-2], resp[-2:]
        if not data:
            return resp
        if a.data or a.lc_present or a.le is None:
            self.pending, self.pending_sw = data, sw
            return bytes([0x61, len(data) & 0xFF])
        if a.le == len(data):
            return resp
        self.kept = (raw[:-1], data, sw)
        return bytes([0x6C, len(data) & 0xFF])


def connect(host, port, timeout=10.0):
    deadline = time.monotonic() + timeout
    while True:
        try:
            s = socket.create_connection((host, port), timeout=2)
            s.settimeout(None)
            s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            return s
        except OSError:
            if time.monotonic() >= deadline:
                raise
            time.sleep(0.1)


def _recv_exact(s, n):
    buf = b""
    while len(buf) < n:
        s.setsockopt(socket.IPPROTO_TCP, TCP_QUICKACK, 1)
        chunk = s.recv(n - len(buf))
        if not chunk:
            return None
        buf += chunk
    return buf


def _send(s, payload):
    s.sendall(len(payload).to_bytes(2, "big") + payload)


def serve(sock, atr, handle, on_reset, log, pull_on=None):
    """Answers vpcd until it closes the socket. `pull_on` = (ins, n): on the n-th command with
    that INS, close without answering (the card is pulled out mid-command)."""
    seen = 0
    while True:
        hdr = _recv_exact(sock, 2)
        if hdr is None:
            log("# reader closed the connection")
            return
        payload = _recv_exact(sock, int.from_bytes(hdr, "big"))
        if payload is None:
            return
        if len(payload) == 1:
            code = payload[0]
            if code == 4:
                _send(sock, atr)
            elif code in (0, 1, 2):
                log("# " + {0: "power off", 1: "power on", 2: "reset"}[code])
                on_reset()
            continue
        if pull_on and len(payload) >= 2 and payload[1] == pull_on[0]:
            seen += 1
            if seen == pull_on[1]:
                log(f"# card pulled on INS {pull_on[0]:02X} #{seen}")
                sock.close()
                sys.exit(0)
        try:
            log("> " + Apdu.parse(payload).header())
        except CardError:
            log("> (malformed) " + payload[:4].hex())
        resp = handle(payload)
        log(f"< {resp[-2]:02X} {resp[-1]:02X}" + (f" ({len(resp) - 2} bytes)" if len(resp) > 2 else ""))
        _send(sock, resp)
