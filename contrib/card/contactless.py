"""The card as seen through a contactless (NFC) reader: a PC/SC part 3 contactless ATR, only
the PACE preamble allowed before PACE, and AES secure messaging after it (spec §6)."""

import ec
import pace
from iso7816 import Apdu, CardError, sw_bytes, SW_SECURITY_NOT_SATISFIED, SW_SM_DATA_OBJECTS_INCORRECT

EF_CARDACCESS = b"\x01\x1c"


def contactless_atr(historical):
    """PC/SC part 3 (3.1.3.2.3.2) ATR for an ISO 14443-4 card: 3B 8n 80 01 <ATS historical
    bytes> TCK, TCK = XOR of T0..last historical byte."""
    body = bytes([0x8 << 4 | len(historical), 0x80, 0x01]) + historical
    tck = 0
    for b in body:
        tck ^= b
    return b"\x3b" + body + bytes([tck])


def historical_bytes(atr):
    """The historical bytes of a contact ATR (walks T0/TDi to skip the interface bytes)."""
    k = atr[1] & 0x0F
    i, y = 1, atr[1] >> 4
    while True:
        i += bin(y).count("1")
        if not y & 0x8:
            break
        y = atr[i] >> 4
    return atr[i + 1:i + 1 + k]


class ContactlessFrontend:
    def __init__(self, card, can, log):
        self.card, self.log = card, log
        self.card_access = pace.cardaccess(pace.GM_AES_256, 12)
        self.pace = pace.PaceCard(can.encode(), ec.P256, pace.GM_AES_256, 12)
        # The contact ATR's historical bytes (IDEMIA: 00 12 23 3F 53 65 49 44 0F 90 00, "..#?SeID..")
        self.atr = contactless_atr(historical_bytes(card.atr))
        self.reset()

    def reset(self):
        self.card.reset()
        self.pace.reset()
        self.sm = None
        self.ca_selected = False

    def handle(self, raw):
        if self.sm is not None:
            return self._protected(raw)
        try:
            return self._pre_pace(Apdu.parse(raw))
        except CardError as e:
            return sw_bytes(e.sw)

    def _end_session(self):
        """Back to the pre-PACE state (what a card does after an SM error)."""
        self.sm = None
        self.pace.reset()
        self.card.reset()
        self.ca_selected = False

    def _protected(self, raw):
        if len(raw) < 4 or raw[0] & 0x0C != 0x0C:
            self.log("# plain APDU during secure messaging: session ended")
            self._end_session()
            return sw_bytes(SW_SM_DATA_OBJECTS_INCORRECT)
        try:
            a = self.sm.unwrap_command(raw)
        except CardError as e:
            self.log(f"# secure messaging error {e.sw:04X}: session ended")
            self._end_session()
            return sw_bytes(e.sw)
        self.log(">> " + a.header())
        try:
            data, sw = self.card.process(a), 0x9000
        except CardError as e:
            data, sw = b"", e.sw
        self.log(f"<< {sw >> 8:02X} {sw & 0xFF:02X}" + (f" ({len(data)} bytes)" if data else ""))
        return self.sm.wrap_response(a.ins, data, sw)

    def _pre_pace(self, a):
        if a.cla == 0x00 and a.ins == 0xA4:
            if (a.p1, a.p2, a.data) == (0x02, 0x0C, EF_CARDACCESS):
                self.ca_selected = True
                return b"\x90\x00"
            mf = a.p1 in (0x00, 0x01, 0x08, 0x09) and a.data in (b"", b"\x3f\x00")
            if a.p1 == 0x04 or mf:
                self.ca_selected = False
                data = self.card.select(a)
                return data + b"\x90\x00"
        elif a.cla == 0x00 and a.ins == 0xB0 and self.ca_selected:
            off = (a.p1 << 8) | a.p2
            if a.p1 & 0x80 or off >= len(self.card_access):
                raise CardError(0x6B00)
            return self.card_access[off:off + (a.le or 256)] + b"\x90\x00"
        elif a.cla == 0x00 and (a.ins, a.p1, a.p2) == (0x22, 0xC1, 0xA4):
            return self.pace.mse_set_at(a) + b"\x90\x00"
        elif a.cla in (0x00, 0x10) and a.ins == 0x86:
            data = self.pace.general_authenticate(a)
            if self.pace.session is not None:
                self.sm = self.pace.session
                self.log("# PACE established, secure messaging on")
            return data + b"\x90\x00"
        raise CardError(SW_SECURITY_NOT_SATISFIED)
