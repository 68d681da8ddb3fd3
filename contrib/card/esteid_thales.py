"""Thales EstEID card (2025), spec §4. File system:
  MF 3F00 (the PKCS#15 application, AID A000000063504B43532D3135 "cPKCS-15", selects it)
    DF ADF1  EF 3411 auth certificate      DF ADF2  EF 3421 signing certificate
    DF DFDD  personal data EF 5001..500F
PINs 81/82/83 padded with 00 to 12 bytes. The DF 2F "PIN changed" flag of GET DATA comes from
the state file (`changed`; true for a new state file, i.e. an activated card). While a PIN's
flag is false its key refuses to work (PSO:CDS / INTERNAL AUTHENTICATE answer 69 85) until the
PIN is changed or reset, which is what web-eid and DigiDoc4 guard against. The PUK cannot be
changed: CHANGE REFERENCE DATA for 83 answers 69 85 (conditions of use not satisfied).
Key agreement (spec §3.3): MSE:SET B8 with only the key reference 84 01 01 (the authentication
key), then PSO:DECIPHER 80 86 with 00 || point after PIN1 (81), which answers the X coordinate."""

import os

from cardbase import DF, EF, Pin, EstEIDApplet, resolve, split_path, ecdsa_raw, ecdh_x, personal_records, fcp_ef, fcp_df
from iso7816 import (CardError, parse_tlv, SW_CONDITIONS_NOT_SATISFIED, SW_FILE_NOT_FOUND,
                     SW_NO_CURRENT_EF, SW_REF_DATA_NOT_FOUND, SW_SECURITY_NOT_SATISFIED,
                     SW_WRONG_DATA, SW_WRONG_LENGTH, SW_WRONG_P1P2, SW_WRONG_P1P2_OFFSET)

ATR = bytes.fromhex("3BFF9600008031FE438031B85365494464B085051012233F1D")
AID_PKCS15 = bytes.fromhex("A000000063504B43532D3135")
MF_FID = b"\x3f\x00"
SIGN_KEY_REF, AUTH_KEY_REF = 0x05, 0x01


class ThalesCard(EstEIDApplet):
    name = "thales"
    atr = ATR

    def __init__(self, store, sign_cert, sign_key, auth_cert, auth_key, personal, card_access=b""):
        self.sign_key, self.auth_key = sign_key, auth_key
        self.pins = {0x81: Pin(store, "pin1", 0x81, 4, 0x00),
                     0x82: Pin(store, "pin2", 0x82, 5, 0x00),
                     0x83: Pin(store, "puk", 0x83, 8, 0x00)}
        self.mf = DF(MF_FID, aid=AID_PKCS15, app="pkcs15")
        if card_access:
            self.mf.add(EF(b"\x01\x1c", card_access))
        self.mf.add(DF(b"\xad\xf1", [EF(b"\x34\x11", auth_cert)]))
        self.mf.add(DF(b"\xad\xf2", [EF(b"\x34\x21", sign_cert)]))
        pd = self.mf.add(DF(b"\xdf\xdd"))
        for fid, data in personal_records(personal).items():
            pd.add(EF(fid, data))
        self.reset()

    def reset(self):
        self.cur_df, self.cur_ef = self.mf, None
        self.verified = set()
        self.se = None           # (key reference, algorithm byte) from MSE:SET
        self.decipher_key = None # key reference from MSE:SET B8
        self.hash = None         # from PSO:HASH

    def select(self, a):
        if a.p2 not in (0x00, 0x04, 0x0C):
            raise CardError(SW_WRONG_P1P2)
        if a.p1 == 0x04:
            if a.data != AID_PKCS15:
                raise CardError(SW_FILE_NOT_FOUND)
            node = self.mf
        elif a.p1 == 0x00:
            node = self.mf if not a.data or a.data == MF_FID else resolve(self.cur_df, split_path(a.data))
        elif a.p1 in (0x01, 0x02):
            fids = split_path(a.data)
            if len(fids) != 1:
                raise CardError(SW_WRONG_LENGTH)
            node = self.mf if fids[0] == MF_FID else self.cur_df.children.get(fids[0])
            if node is None or (a.p1 == 0x01) != isinstance(node, DF):
                raise CardError(SW_FILE_NOT_FOUND)
        elif a.p1 in (0x08, 0x09):
            fids = split_path(a.data)
            start = self.mf if a.p1 == 0x08 else self.cur_df
            if fids[0] == MF_FID:
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
        if isinstance(node, DF):
            return fcp_df(node)
        # Thales: size in tag 81, after the other tags.
        return fcp_ef(node.fid, len(node.data), size_tag=0x81, extra=bytes.fromhex("8A0105"))

    def read_binary(self, a):
        if a.p1 & 0x80:
            raise CardError(SW_WRONG_P1P2)
        if self.cur_ef is None:
            raise CardError(SW_NO_CURRENT_EF)
        off = (a.p1 << 8) | a.p2
        data = self.cur_ef.data
        if off >= len(data):
            raise CardError(SW_WRONG_P1P2_OFFSET)
        le = a.le if a.le is not None else 256
        return data[off:off + le]

    def get_data(self, a):
        # 00 CB 00 FF 05 A0 03 83 01 <ref> [00]
        if (a.p1, a.p2) != (0x00, 0xFF):
            raise CardError(SW_WRONG_P1P2)
        if len(a.data) != 5 or a.data[:4] != bytes.fromhex("A0038301"):
            raise CardError(SW_REF_DATA_NOT_FOUND)
        pin = self.pins.get(a.data[4])
        if pin is None:
            raise CardError(SW_REF_DATA_NOT_FOUND)
        changed = 1 if pin.changed else 0
        body = bytes([0x83, 0x01, pin.ref, 0xDF, 0x21, 0x01, pin.tries, 0xDF, 0x2F, 0x01, changed])
        return bytes([0xA0, len(body)]) + body

    def _pin(self, ref):
        pin = self.pins.get(ref)
        if pin is None:
            raise CardError(SW_REF_DATA_NOT_FOUND)
        return pin

    def change(self, a):
        if a.p1 != 0x00:
            raise CardError(SW_WRONG_P1P2)
        pin = self._pin(a.p2)
        if a.p2 == 0x83:
            raise CardError(SW_CONDITIONS_NOT_SATISFIED)   # the PUK cannot be changed
        if len(a.data) != 24:
            raise CardError(SW_WRONG_LENGTH)
        self.verified.discard(a.p2)
        pin.check(a.data[:12])
        new = pin.valid_new(a.data[12:])
        if new is None or a.data[12:] == a.data[:12]:
            raise CardError(SW_WRONG_DATA)
        pin.set(new, changed=True)
        return b""

    def reset_retry(self, a):
        # 00 2C 00 <ref> 18 <PUK 00-padded 12> <new PIN 00-padded 12>
        if a.p1 != 0x00 or a.p2 not in (0x81, 0x82):
            raise CardError(SW_WRONG_P1P2)
        pin = self._pin(a.p2)
        if len(a.data) != 24:
            raise CardError(SW_WRONG_LENGTH)
        self.pins[0x83].check(a.data[:12])
        new = pin.valid_new(a.data[12:])
        if new is None:
            raise CardError(SW_WRONG_DATA)
        pin.set(new, changed=True)
        self.verified.discard(a.p2)
        return b""

    def mse(self, a):
        if a.p1 != 0x41 or a.p2 not in (0xB6, 0xA4, 0xB8):
            raise CardError(SW_WRONG_P1P2)
        objs = dict(parse_tlv(a.data))
        if a.p2 == 0xB8:                                 # confidentiality: the auth key only
            if objs.get(0x84) != bytes([AUTH_KEY_REF]):
                raise CardError(SW_REF_DATA_NOT_FOUND)
            if 0x80 in objs:
                raise CardError(SW_WRONG_DATA)
            self.decipher_key = AUTH_KEY_REF
            return b""
        alg, key = objs.get(0x80), objs.get(0x84)
        if key not in (bytes([SIGN_KEY_REF]), bytes([AUTH_KEY_REF])):
            raise CardError(SW_REF_DATA_NOT_FOUND)
        if alg is None or len(alg) != 1 or alg[0] not in (0x34, 0x40, 0x44, 0x54, 0x64):
            raise CardError(SW_WRONG_DATA)
        self.se = (key[0], alg[0])
        self.hash = None
        return b""

    def _sign(self, digest):
        if self.se is None:
            raise CardError(SW_CONDITIONS_NOT_SATISFIED)
        key_ref = self.se[0]
        pin_ref = 0x82 if key_ref == SIGN_KEY_REF else 0x81
        if pin_ref not in self.verified:
            raise CardError(SW_SECURITY_NOT_SATISFIED)
        if not self.pins[pin_ref].changed:
            raise CardError(SW_CONDITIONS_NOT_SATISFIED)   # initial PIN must be changed first
        if key_ref == SIGN_KEY_REF:
            self.verified.discard(0x82)                    # one VERIFY, one signature
        return ecdsa_raw(self.sign_key if key_ref == SIGN_KEY_REF else self.auth_key, digest)

    def pso(self, a):
        if (a.p1, a.p2) == (0x80, 0x86):                 # PSO: DECIPHER, key agreement
            if self.decipher_key != AUTH_KEY_REF:
                raise CardError(SW_CONDITIONS_NOT_SATISFIED)
            if 0x81 not in self.verified:
                raise CardError(SW_SECURITY_NOT_SATISFIED)
            if not self.pins[0x81].changed:
                raise CardError(SW_CONDITIONS_NOT_SATISFIED)
            return ecdh_x(self.auth_key, a.data)
        if (a.p1, a.p2) == (0x90, 0xA0):                 # PSO: HASH, data 90 L <hash>
            objs = dict(parse_tlv(a.data))
            h = objs.get(0x90)
            if h is None or not 20 <= len(h) <= 64:
                raise CardError(SW_WRONG_DATA)
            self.hash = h
            return b""
        if (a.p1, a.p2) == (0x9E, 0x9A):                 # PSO: CDS over the stored hash
            if a.data:
                raise CardError(SW_WRONG_LENGTH)
            if self.hash is None:
                raise CardError(SW_CONDITIONS_NOT_SATISFIED)
            h, self.hash = self.hash, None
            return self._sign(h)
        raise CardError(SW_WRONG_P1P2)

    def internal_authenticate(self, a):
        if self.se is None or self.se[0] != AUTH_KEY_REF:
            raise CardError(SW_CONDITIONS_NOT_SATISFIED)
        if not a.data:
            raise CardError(SW_WRONG_LENGTH)
        return self._sign(a.data)

    def get_challenge(self, a):
        if a.le is None:
            raise CardError(SW_WRONG_LENGTH)
        return os.urandom(min(a.le, 16))
