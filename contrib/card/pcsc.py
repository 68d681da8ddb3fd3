"""Minimal PC/SC client over libpcsclite (ctypes), for selftest.sh: raw APDUs with no
automatic 61xx/6Cxx handling (unlike opensc-tool), and a PACE session over a real reader.

  /usr/bin/python3 pcsc.py READER-INDEX APDU-HEX...     prints "SW DATA" per APDU
  /usr/bin/python3 pcsc.py READER-INDEX --pace CAN APDU-HEX...
        runs PACE-GM (P-256, AES-256) with the CAN, then sends the APDUs secure-messaging
        wrapped and prints the unwrapped "SW DATA" per APDU"""

import ctypes
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

DWORD = ctypes.c_ulong          # pcsc-lite on Linux: DWORD is unsigned long
LONG = ctypes.c_long
SCARD_SCOPE_SYSTEM, SCARD_SHARE_SHARED, SCARD_RESET_CARD = 2, 2, 1
SCARD_PROTOCOL_T0, SCARD_PROTOCOL_T1 = 1, 2


class IoRequest(ctypes.Structure):
    _fields_ = [("dwProtocol", DWORD), ("cbPciLength", DWORD)]


lib = ctypes.CDLL("libpcsclite.so.1")


def check(rv, what):
    rv &= 0xFFFFFFFF
    if rv:
        raise OSError(f"{what} failed: 0x{rv:08X}")


class Card:
    def __init__(self, index):
        self.ctx = LONG()
        check(lib.SCardEstablishContext(DWORD(SCARD_SCOPE_SYSTEM), None, None, ctypes.byref(self.ctx)),
              "SCardEstablishContext")
        n = DWORD()
        check(lib.SCardListReaders(self.ctx, None, None, ctypes.byref(n)), "SCardListReaders")
        buf = ctypes.create_string_buffer(n.value)
        check(lib.SCardListReaders(self.ctx, None, buf, ctypes.byref(n)), "SCardListReaders")
        readers = [r for r in buf.raw[:n.value].split(b"\0") if r]
        self.reader = readers[index]
        self.handle, proto = LONG(), DWORD()
        check(lib.SCardConnect(self.ctx, self.reader, DWORD(SCARD_SHARE_SHARED),
                               DWORD(SCARD_PROTOCOL_T0 | SCARD_PROTOCOL_T1),
                               ctypes.byref(self.handle), ctypes.byref(proto)), "SCardConnect")
        self.pci = IoRequest(proto.value, ctypes.sizeof(IoRequest))

    def transmit(self, apdu):
        out = ctypes.create_string_buffer(258)
        n = DWORD(258)
        check(lib.SCardTransmit(self.handle, ctypes.byref(self.pci), bytes(apdu), DWORD(len(apdu)),
                                None, out, ctypes.byref(n)), "SCardTransmit")
        return out.raw[:n.value]

    def close(self):
        lib.SCardDisconnect(self.handle, DWORD(SCARD_RESET_CARD))   # next user: fresh card
        lib.SCardReleaseContext(self.ctx)


def main(argv):
    card = Card(int(argv[0]))
    send = card.transmit
    rest = argv[1:]
    if rest and rest[0] == "--pace":
        import pace
        from iso7816 import Apdu
        try:
            sm = pace.PaceTerminal(rest[1].encode()).run(card.transmit)
        except pace.CardError as e:
            print(f"PACE FAILED {e.sw:04X}")
            card.close()
            return
        print("PACE OK")
        rest = rest[2:]

        def send(raw):
            return sm.unwrap_response(card.transmit(sm.wrap_command(Apdu.parse(raw))))
    for hx in rest:
        try:
            r = send(bytes.fromhex(hx))
        except OSError as e:
            print(f"ERROR {e}")
            break
        print(r[-2:].hex().upper() if len(r) >= 2 else "EMPTY", r[:-2].hex().upper())
    card.close()


if __name__ == "__main__":
    main(sys.argv[1:])
