"""IDEMIA Cosmo 8 "EstEID 2018" card (ID1 profile), as seen by DigiDoc4, web-eid, the RIA
mobile apps and OpenSC's esteid2018 driver. Byte facts: /work/shared/spec/esteid-card.md §3.

File system (FIDs):
  MF 3F00  = main IAS-ECC application (AID A000000077010800070000FE00000100)
    EF D003   document number as 04 L <text> (OpenSC reads it as the token serial)
    EF 011C   EF.CardAccess (PACEInfo; read over NFC before PACE)
    DF 5000   personal data, EF 5001..500F
    DF ADF1   AWP application (AID E828BD080FF2504F5420415750): EF 3401 auth certificate
    DF ADF2   QSCD application ("QSCD Application"): EF 341F signing certificate
Security model (see README "What is modelled"):
  PIN1 (01) and PUK (02) are global, PIN2 (85) is local to the QSCD application. SELECT by AID of
  another application drops PIN2's verification and the security environment; path/FID selects
  do not (OpenSC verifies PIN2 at 3F00/ADF2, then selects 3F00 again before MSE + PSO).
  One PIN2 VERIFY allows one PSO:CDS. Key agreement with the authentication key (spec §3.2): MSE:SET
  B8 with algorithm FF 30 04 00 and key 81, then PSO:DECIPHER 80 86 with 00 || point, after PIN1;
  PIN1 stays verified (it is global), so several agreements follow one VERIFY."""

import os

from cardbase import (DF, EF, Pin, EstEIDApplet, resolve, split_path, ecdsa_raw, ecdh_x, personal_records, fcp_ef, fcp_df)
from iso7816 import (CardError, parse_tlv, tlv, SW_CONDITIONS_NOT_SATISFIED, SW_FILE_NOT_FOUND,
                     SW_NO_CURRENT_EF, SW_REF_DATA_NOT_FOUND, SW_SECURITY_NOT_SATISFIED,
                     SW_WRONG_DATA, SW_WRONG_LENGTH, SW_WRONG_P1P2, SW_WRONG_P1P2_OFFSET)

ATR = bytes.fromhex("3BDB960080B1FE451F830012233F536549440F9000F1")
AID_MAIN = bytes.fromhex("A000000077010800070000FE00000100")
AID_AWP = bytes.fromhex("E828BD080FF2504F5420415750")
AID_QSCD = b"QSCD Application"
MF_FID = b"\x3f\x00"
READ_MAX = 0xC0          # READ BINARY never returns more than this, even for Le 00 (= 256)


class IdemiaCard(EstEIDApplet):
    name = "idemia"
    atr = ATR

    def __init__(self, store, sign_cert, sign_key, auth_cert, auth_key, personal, card_access=b""):
        self.sign_key, self.auth_key = sign_key, auth_key
        self.pins = {0x01: Pin(store, "pin1", 0x01, 4, 0xFF),
                     0x02: Pin(store, "puk", 0x02, 8, 0xFF),
                     0x85: Pin(store, "pin2", 0x85, 5, 0xFF)}
        docnr = (personal.get("document_number") or "").encode()
        self.mf = DF(MF_FID, aid=AID_MAIN, app="main")
        self.mf.add(EF(b"\xd0\x03", tlv(0x04, docnr)))
        if card_access:
            self.mf.add(EF(b"\x01\x1c", card_access))
        pd = self.mf.add(DF(b"\x50\x00"))
        for fid, data in personal_records(personal).items():
            pd.add(EF(fid, data))
        self.mf.add(DF(b"\xad\xf1", [EF(b"\x34\x01", auth_cert)], aid=AID_AWP, app="awp"))
        self.mf.add(DF(b"\xad\xf2", [EF(b"\x34\x1f", sign_cert)], aid=AID_QSCD, app="qscd"))
        self.apps = {AID_MAIN: self.mf, AID_AWP: self.mf.children[b"\xad\xf1"],
                     AID_QSCD: self.mf.children[b"\xad\xf2"]}
        self.reset()

    # -- power-up state -------------------------------------------------------------------------
    def reset(self):
        self.cur_df, self.cur_ef = self.mf, None
        self.verified = set()
        self.se = {}             # template (B6/A4/B8) -> key reference set by MSE

    def app(self):
        return self.cur_df.application()

    # -- SELECT ---------------------------------------------------------------------------------
    def select(self, a):
        if a.p2 not in (0x00, 0x04, 0x0C):
            raise CardError(SW_WRONG_P1P2)
        if a.p1 == 0x04:
            df = self.apps.get(a.data)
            if df is None:
                raise CardError(SW_FILE_NOT_FOUND)
            if df.application() != self.app():
                # Another application: its local PIN (PIN2) and the SE are no longer valid.
                self.verified.discard(0x85)
                self.se = {}
            node = df
        elif a.p1 == 0x00:
            if not a.data or a.data == MF_FID:
                node = self.mf
            else:
                node = resolve(self.cur_df, split_path(a.data))
        elif a.p1 in (0x01, 0x02):
            fids = split_path(a.data)
            if len(fids) != 1:
                raise CardError(SW_WRONG_LENGTH)
            if fids[0] == MF_FID:
                node = self.mf
            else:
                node = self.cur_df.children.get(fids[0])
                if node is None and self.cur_df.parent is not None:
                    node = self.cur_df.parent.children.get(fids[0])      # a sibling DF/EF
                if node is None:
                    raise CardError(SW_FILE_NOT_FOUND)
            if (a.p1 == 0x01) != isinstance(node, DF):
                raise CardError(SW_FILE_NOT_FOUND)
        elif a.p1 in (0x08, 0x09):
            fids = split_path(a.data)
            start = self.mf if a.p1 == 0x08 else self.cur_df
            if fids[0] == MF_FID:                     # [D] sends 09 with a leading 3F00
                start, fids = self.mf, fids[1:]
            node = resolve(start, fids) if fids else self.mf
        else:
            raise CardError(SW_WRONG_P1P2)
        if isinstance(node, DF):
            self.cur_df, self.cur_ef = node, None
        else:
            self.cur_df, self.cur_ef = node.parent, node
        if a.p2 == 0x0C:
            return b""
        return fcp_df(node) if isinstance(node, DF) else fcp_ef(node.fid, len(node.data))

    # -- READ BINARY ----------------------------------------------------------------------------
    def read_binary(self, a):
        if a.p1 & 0x80:
            raise CardError(SW_WRONG_P1P2)            # no short-FID reads on this card
        if self.cur_ef is None:
            raise CardError(SW_NO_CURRENT_EF)
        off = (a.p1 << 8) | a.p2
        data = self.cur_ef.data
        if off >= len(data):
            raise CardError(SW_WRONG_P1P2_OFFSET)
        le = a.le if a.le is not None else 256
        return data[off:off + min(le, READ_MAX)]

    # -- GET DATA: PIN retry counters ----------------------------------------------------------
    def get_data(self, a):
        if (a.p1, a.p2) != (0x3F, 0xFF):
            raise CardError(SW_WRONG_P1P2)
        d = a.data
        if len(d) != 10 or d[:6] != bytes.fromhex("4D087006BF81") or d[7:] != bytes.fromhex("02A080"):
            raise CardError(SW_REF_DATA_NOT_FOUND)
        ref = d[6]
        want = {0x01: "main", 0x02: "main", 0x05: "qscd"}.get(ref)
        if want is None or self.app() != want:
            raise CardError(SW_REF_DATA_NOT_FOUND)     # PIN2 only in QSCD, PIN1/PUK only in main
        pin = self.pins[0x85 if ref == 0x05 else ref]
        # Same layout as the card in web-eid's mock script (OpenSC reads byte 13 = remaining).
        return (bytes.fromhex("70 1E BF 81") + bytes([ref]) + bytes.fromhex("1A A0 18 9A 01") + bytes([pin.max])
                + bytes.fromhex("9B 01") + bytes([pin.tries])
                + bytes.fromhex("A1 10 8C 06 F3 00 00 73 43 00 9C 06 F3 00 00 73 43 00"))

    # -- PINs -------------------------------------------------------------------------------------
    def _pin(self, ref):
        pin = self.pins.get(ref)
        if pin is None or (ref == 0x85 and self.app() != "qscd"):
            raise CardError(SW_REF_DATA_NOT_FOUND)
        return pin

    def change(self, a):
        if a.p1 != 0x00:
            raise CardError(SW_WRONG_P1P2)
        pin = self._pin(a.p2)
        if len(a.data) != 24:
            raise CardError(SW_WRONG_LENGTH)
        self.verified.discard(a.p2)
        pin.check(a.data[:12])
        new = pin.valid_new(a.data[12:])
        if new is None or a.data[12:] == a.data[:12]:
            raise CardError(SW_WRONG_DATA)            # invalid new PIN, or old == new
        pin.set(new)
        return b""

    def reset_retry(self, a):
        if a.p1 != 0x02 or a.p2 not in (0x01, 0x85):
            raise CardError(SW_WRONG_P1P2)            # IDEMIA: P1 02 = new value only
        pin = self._pin(a.p2)
        if 0x02 not in self.verified:
            raise CardError(SW_SECURITY_NOT_SATISFIED)  # VERIFY PUK first
        if len(a.data) != 12:
            raise CardError(SW_WRONG_LENGTH)
        new = pin.valid_new(a.data)
        if new is None:
            raise CardError(SW_WRONG_DATA)
        pin.set(new)                                   # also works when not blocked
        self.verified.discard(a.p2)
        return b""

    # -- MSE / PSO / INTERNAL AUTHENTICATE ----------------------------------------------------
    def mse(self, a):
        if a.p1 != 0x41 or a.p2 not in (0xB6, 0xA4, 0xB8):
            raise CardError(SW_WRONG_P1P2)
        objs = dict(parse_tlv(a.data))
        alg, key = objs.get(0x80), objs.get(0x84)
        ok = {0xB6: ({b"\x54", bytes.fromhex("FF150800")}, b"\x9f"),
              0xA4: ({b"\x04", bytes.fromhex("FF200800")}, b"\x81"),
              0xB8: ({bytes.fromhex("FF300400")}, b"\x81")}[a.p2]
        if key != ok[1]:
            raise CardError(SW_REF_DATA_NOT_FOUND)
        if alg not in ok[0]:
            raise CardError(SW_WRONG_DATA)
        self.se[a.p2] = key[0]
        return b""

    def pso(self, a):
        if (a.p1, a.p2) == (0x80, 0x86):
            return self.decipher(a)
        if (a.p1, a.p2) != (0x9E, 0x9A):
            raise CardError(SW_WRONG_P1P2)
        if self.se.get(0xB6) != 0x9F:
            raise CardError(SW_CONDITIONS_NOT_SATISFIED)
        if 0x85 not in self.verified:
            raise CardError(SW_SECURITY_NOT_SATISFIED)
        if len(a.data) != 48:
            raise CardError(SW_WRONG_LENGTH)
        self.verified.discard(0x85)                    # one VERIFY, one signature
        return ecdsa_raw(self.sign_key, a.data)

    def decipher(self, a):
        if self.se.get(0xB8) != 0x81:
            raise CardError(SW_CONDITIONS_NOT_SATISFIED)
        if 0x01 not in self.verified:
            raise CardError(SW_SECURITY_NOT_SATISFIED)
        return ecdh_x(self.auth_key, a.data)

    def internal_authenticate(self, a):
        if (a.p1, a.p2) != (0x00, 0x00):
            raise CardError(SW_WRONG_P1P2)
        if self.se.get(0xA4) != 0x81:
            raise CardError(SW_CONDITIONS_NOT_SATISFIED)
        if 0x01 not in self.verified:
            raise CardError(SW_SECURITY_NOT_SATISFIED)
        if len(a.data) != 48:
            raise CardError(SW_WRONG_LENGTH)
        return ecdsa_raw(self.auth_key, a.data)

    def get_challenge(self, a):
        if a.le is None:
            raise CardError(SW_WRONG_LENGTH)
        return os.urandom(min(a.le, 16))
