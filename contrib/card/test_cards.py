"""In-process tests of the emulated cards' behaviour (no pcscd needed):
  cd contrib/card && /usr/bin/python3 -m unittest -v test_cards"""

import datetime
import json
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec as cec, utils
from cryptography.x509.oid import NameOID

import vpcd
from cardbase import PinStore
from contactless import ContactlessFrontend
from esteid_card import personal_defaults
from esteid_idemia import IdemiaCard
from esteid_thales import ThalesCard
from iso7816 import Apdu, CardError, sw_bytes
import pace

H = bytes.fromhex
MAIN = H("00A4040C10A000000077010800070000FE00000100")
QSCD = H("00A4040C10") + b"QSCD Application"
AWP = H("00A4040C0DE828BD080FF2504F5420415750")


def make_cert(key, cn="TEST,PERSON,38001085718"):
    name = x509.Name([x509.NameAttribute(NameOID.SURNAME, "TEST"),
                      x509.NameAttribute(NameOID.GIVEN_NAME, "PERSON"),
                      x509.NameAttribute(NameOID.SERIAL_NUMBER, "PNOEE-38001085718"),
                      x509.NameAttribute(NameOID.COMMON_NAME, cn)])
    now = datetime.datetime(2025, 1, 1)
    return (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(7).not_valid_before(now).not_valid_after(now + datetime.timedelta(days=1000))
            .sign(key, hashes.SHA384()).public_bytes(serialization.Encoding.DER))


SIGN_KEY = cec.generate_private_key(cec.SECP384R1())
AUTH_KEY = cec.generate_private_key(cec.SECP384R1())
SIGN_CERT, AUTH_CERT = make_cert(SIGN_KEY), make_cert(AUTH_KEY)


def verify_raw(key, digest48, sig):
    r, s = int.from_bytes(sig[:48], "big"), int.from_bytes(sig[48:], "big")
    key.public_key().verify(utils.encode_dss_signature(r, s), digest48,
                            cec.ECDSA(utils.Prehashed(hashes.SHA384())))


def ephemeral_point(curve=None):
    """A sender's ephemeral key and its uncompressed point, as a CDOC sender makes them."""
    key = cec.generate_private_key(curve or cec.SECP384R1())
    return key, key.public_key().public_bytes(serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint)


def decipher(point):
    """PSO:DECIPHER for key agreement: 00 2A 80 86 62 00 <point> 00 (spec §3.2, §3.3)."""
    return H("002A8086") + bytes([len(point) + 1]) + b"\x00" + point + b"\x00"


class Base(unittest.TestCase):
    kind = IdemiaCard

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.state = os.path.join(self.tmp.name, "state.json")
        self.card = self.make()

    def make(self, **kw):
        store = PinStore(self.state)
        return self.kind(store, SIGN_CERT, SIGN_KEY, AUTH_CERT, AUTH_KEY,
                         personal_defaults(SIGN_CERT), **kw)

    def tearDown(self):
        self.tmp.cleanup()

    def tx(self, apdu, card=None):
        try:
            return (card or self.card).process(Apdu.parse(apdu)) + b"\x90\x00"
        except CardError as e:
            return sw_bytes(e.sw)

    def ok(self, apdu):
        r = self.tx(apdu)
        self.assertEqual(r[-2:], b"\x90\x00", f"{apdu.hex()} -> {r.hex()}")
        return r[:-2]

    def sw(self, apdu):
        return self.tx(apdu)[-2:].hex().upper()


def read_state(path):
    with open(path) as fh:
        return json.load(fh)


def pin_ff(p):
    return p.encode() + b"\xff" * (12 - len(p))


def pin_00(p):
    return p.encode() + b"\x00" * (12 - len(p))


class Idemia(Base):
    def read_file(self):
        fci = self.ok(H("00A4090404ADF1340100"))
        self.assertEqual(fci[:4], H("62") + bytes([len(fci) - 2]) + H("80 02")[:2])
        size = int.from_bytes(fci[4:6], "big")
        out = b""
        while len(out) < size:
            chunk = self.ok(bytes([0, 0xB0, len(out) >> 8, len(out) & 0xFF, 0]))
            self.assertLessEqual(len(chunk), 0xC0)
            out += chunk
        return out

    def test_certificate_read_in_c0_chunks(self):
        self.ok(MAIN)
        self.assertEqual(self.read_file(), AUTH_CERT)
        self.ok(H("00A40804063F00ADF2341F"))            # 08 path from MF with leading 3F00
        self.assertEqual(len(self.ok(H("00B0000010"))), 0x10)   # smaller Le honoured
        self.ok(H("00A4090C06") + H("3F00ADF2341F"))
        self.assertEqual(self.sw(bytes([0, 0xB0, 0x10, 0, 0])), "6B00")

    def test_select_by_fid_and_personal_data(self):
        self.ok(MAIN)
        self.ok(H("00A4010C025000"))
        self.ok(H("00A4020C025006"))
        self.assertEqual(self.ok(H("00B0000000")), b"38001085718")
        self.ok(H("00A4020C02500A"))
        self.assertEqual(self.ok(H("00B0000000")), b"\x00")     # empty field = one 00 byte
        self.ok(H("00A4000C"))
        self.ok(H("00A4020C02D003"))
        self.assertEqual(self.ok(H("00B000000B")), H("0409") + b"AB0123456")
        self.assertEqual(self.sw(H("00A4020C025099")), "6A82")

    def test_get_data_needs_matching_application(self):
        gd = lambda r: H("00CB3FFF0A4D087006BF81") + bytes([r]) + H("02A08000")
        self.ok(MAIN)
        self.assertEqual(self.ok(gd(1))[13], 3)
        self.assertEqual(self.sw(gd(5)), "6A88")
        self.ok(QSCD)
        self.assertEqual(self.sw(gd(1)), "6A88")
        self.assertEqual(self.ok(gd(5)), H("701EBF81051AA0189A01039B0103A1108C06F30000734300"
                                            "9C06F30000734300"))

    def test_verify_counters_and_block(self):
        self.ok(MAIN)
        self.assertEqual(self.sw(H("0020000100")[:4]), "63C3")                 # query, Lc absent
        self.assertEqual(self.sw(H("002000010C") + pin_00("1234")), "63C2")    # wrong padding
        self.assertEqual(self.sw(H("002000010C") + pin_ff("1235")), "63C1")
        self.ok(H("002000010C") + pin_ff("1234"))                               # resets counter
        self.assertEqual(read_state(self.state)["pins"]["pin1"]["tries"], 3)
        for left in "210":
            self.assertEqual(self.sw(H("002000010C") + pin_ff("9999")), "63C" + left)
        self.assertEqual(self.sw(H("002000010C") + pin_ff("1234")), "6983")
        self.assertEqual(self.sw(H("00200001")), "6983")
        # A "re-inserted" card keeps the counter.
        self.card = self.make()
        self.ok(MAIN)
        self.assertEqual(self.sw(H("002000010C") + pin_ff("1234")), "6983")
        # Unblock with the PUK (works without power cycle), P1 02 = new value only.
        self.assertEqual(self.sw(H("002C02010C") + pin_ff("4321")), "6982")
        self.ok(H("002000020C") + pin_ff("17258403"))
        self.ok(H("002C02010C") + pin_ff("4321"))
        self.ok(H("002000010C") + pin_ff("4321"))

    def test_sign_once_per_verify(self):
        digest = os.urandom(48)
        pso = H("002A9E9A30") + digest + b"\x00"
        self.ok(QSCD)
        self.ok(H("002241B6068001548401 9F".replace(" ", "")))
        self.assertEqual(self.sw(pso), "6982")                                   # no PIN2
        self.ok(H("002000850C") + pin_ff("12345"))
        verify_raw(SIGN_KEY, digest, self.ok(pso))
        self.assertEqual(self.sw(pso), "6982")                                   # second PSO
        self.ok(H("002000850C") + pin_ff("12345"))
        self.ok(MAIN)                                                            # another app
        self.ok(QSCD)
        self.ok(H("002241B609800 4FF15080084019F".replace(" ", "")))
        self.assertEqual(self.sw(pso), "6982")                                   # dropped by SELECT
        self.ok(H("002000850C") + pin_ff("12345"))
        self.ok(H("002241B609800 4FF15080084019F".replace(" ", "")))
        verify_raw(SIGN_KEY, digest, self.ok(pso))

    def test_pin2_only_in_qscd(self):
        self.ok(MAIN)
        self.assertEqual(self.sw(H("002000850C") + pin_ff("12345")), "6A88")

    def test_change_and_puk_change(self):
        self.ok(QSCD)
        self.assertEqual(self.sw(H("0024008518") + pin_ff("12345") + pin_ff("123")), "6A80")
        self.assertEqual(self.sw(H("0024008518") + pin_ff("11111") + pin_ff("54321")), "63C2")
        self.ok(H("0024008518") + pin_ff("12345") + pin_ff("54321"))
        self.ok(H("002000850C") + pin_ff("54321"))
        self.ok(MAIN)
        self.ok(H("0024000218") + pin_ff("17258403") + pin_ff("87654321"))
        self.ok(H("002000020C") + pin_ff("87654321"))

    def test_key_agreement_with_the_authentication_key(self):
        sender, point = ephemeral_point()
        self.ok(AWP)
        self.assertEqual(self.sw(decipher(point)), "6985")              # no MSE:SET yet
        self.ok(H("002241B80980 04FF300400 840181".replace(" ", "")))
        self.assertEqual(self.sw(decipher(point)), "6982")              # PIN1 not verified
        self.ok(H("002000010C") + pin_ff("1234"))
        z = self.ok(decipher(point))
        self.assertEqual(len(z), 48)
        self.assertEqual(z, sender.exchange(cec.ECDH(), AUTH_KEY.public_key()))
        self.assertEqual(z, AUTH_KEY.exchange(cec.ECDH(), sender.public_key()))
        # PIN1 is global: a second agreement needs no second VERIFY.
        other, point2 = ephemeral_point()
        self.assertEqual(self.ok(decipher(point2)), other.exchange(cec.ECDH(), AUTH_KEY.public_key()))
        # Wrong curve, no padding-indicator byte, a point off the curve: wrong data.
        _, p256 = ephemeral_point(cec.SECP256R1())
        self.assertEqual(self.sw(decipher(p256)), "6A80")
        self.assertEqual(self.sw(H("002A808661") + point + b"\x00"), "6A80")
        self.assertEqual(self.sw(decipher(point[:-1] + bytes([point[-1] ^ 1]))), "6A80")
        # Only the authentication key (81) with FF 30 04 00 sets up decipher.
        self.assertEqual(self.sw(H("002241B809800 4FF300400 84019F".replace(" ", ""))), "6A88")
        self.assertEqual(self.sw(H("002241B8098004FF150800840181")), "6A80")
        # Selecting another application drops the security environment.
        self.ok(QSCD)
        self.assertEqual(self.sw(decipher(point)), "6985")

    def test_internal_authenticate(self):
        digest = os.urandom(48)
        self.ok(AWP)
        self.ok(H("002241A406800104840181"))
        self.assertEqual(self.sw(H("0088000030") + digest + b"\x00"), "6982")
        self.ok(H("002000010C") + pin_ff("1234"))
        verify_raw(AUTH_KEY, digest, self.ok(H("0088000030") + digest + b"\x00"))


class T0(Idemia):
    def setUp(self):
        super().setUp()
        self.t0 = vpcd.T0Transport(lambda raw: Base.tx(self, raw))

    def test_t0_get_response_and_6c(self):
        t = self.t0.handle
        self.assertEqual(t(MAIN), H("9000"))
        r = t(H("00A4090404ADF1340100"))
        self.assertEqual(r[0], 0x61)
        fci = t(H("00C00000") + bytes([r[1]]))
        self.assertEqual(fci[-2:], H("9000"))
        self.assertEqual(t(H("00B0000000")), H("6CC0"))
        chunk = t(H("00B00000C0"))
        self.assertEqual(len(chunk), 0xC2)
        self.assertEqual(chunk[-2:], H("9000"))
        # PSO after 6C is not run twice (one PIN2 verification, one signature).
        digest = os.urandom(48)
        t(QSCD)
        t(H("002241B6068001548401") + b"\x9f")
        t(H("002000850C") + pin_ff("12345"))
        r = t(H("002A9E9A30") + digest + b"\x00")
        self.assertEqual(r, H("6160"))
        self.assertEqual(t(H("00C0000010"))[-2:], H("6150"))
        rest = t(H("00C0000050"))
        self.assertEqual(rest[-2:], H("9000"))


class Thales(Base):
    kind = ThalesCard

    def test_files_and_fci_tag_81(self):
        self.ok(H("00A4040C0CA000000063504B43532D3135"))
        fci = self.ok(H("00A4080404ADF2342100"))
        i = fci.index(0x81, 2)
        self.assertTrue(fci.endswith(H("8102") + len(SIGN_CERT).to_bytes(2, "big")), fci.hex())
        self.assertNotIn(H("8002"), fci)
        out = b""
        while len(out) < len(SIGN_CERT):
            out += self.ok(bytes([0, 0xB0, len(out) >> 8, len(out) & 0xFF, 0]))
        self.assertEqual(out, SIGN_CERT)
        self.ok(H("00A4080C02DFDD"))
        self.ok(H("00A4020C025001"))
        self.assertEqual(self.ok(H("00B0000000")), b"TEST")

    def test_sign_and_counters(self):
        gd = H("00CB00FF05A0038301")
        self.assertEqual(self.ok(gd + H("82")), H("A00B830182DF210103DF2F0101"))
        self.assertEqual(self.sw(H("002000820C") + pin_ff("12345")), "63C2")   # FF padding is wrong
        self.ok(H("002000820C") + pin_00("12345"))
        self.ok(H("002241B606800154840105"))
        digest = os.urandom(48)
        self.ok(H("002A90A032") + H("9030") + digest)
        verify_raw(SIGN_KEY, digest, self.ok(H("002A9E9A00")))
        self.ok(H("002A90A032") + H("9030") + digest)
        self.assertEqual(self.sw(H("002A9E9A00")), "6982")

    def test_key_agreement_with_the_authentication_key(self):
        sender, point = ephemeral_point()
        self.ok(H("00A4040C0CA000000063504B43532D3135"))
        self.assertEqual(self.sw(decipher(point)), "6985")
        self.assertEqual(self.sw(H("002241B803840105")), "6A88")        # the signing key cannot
        self.assertEqual(self.sw(H("002241B806800154840101")), "6A80")  # no algorithm reference
        self.ok(H("002241B803840101"))
        self.assertEqual(self.sw(decipher(point)), "6982")
        self.ok(H("002000810C") + pin_00("1234"))
        self.assertEqual(self.ok(decipher(point)), sender.exchange(cec.ECDH(), AUTH_KEY.public_key()))
        self.assertEqual(self.sw(decipher(point[1:])), "6A80")

    def test_key_agreement_needs_a_changed_pin1(self):
        st = read_state(self.state)
        st["pins"]["pin1"]["changed"] = False
        with open(self.state, "w") as fh:
            json.dump(st, fh)
        self.card = self.make()
        _, point = ephemeral_point()
        self.ok(H("002241B803840101"))
        self.ok(H("002000810C") + pin_00("1234"))
        self.assertEqual(self.sw(decipher(point)), "6985")

    def test_unblock_and_puk_unchangeable(self):
        for _ in range(3):
            self.tx(H("002000810C") + pin_00("0000"))
        self.assertEqual(self.sw(H("002000810C") + pin_00("1234")), "6983")
        self.ok(H("002C008118") + pin_00("17258403") + pin_00("2468"))
        self.ok(H("002000810C") + pin_00("2468"))
        self.assertEqual(self.sw(H("0024008318") + pin_00("17258403") + pin_00("12345678")), "6985")

    def test_unchanged_pin_blocks_key(self):
        st = read_state(self.state)
        st["pins"]["pin2"]["changed"] = False
        with open(self.state, "w") as fh:
            json.dump(st, fh)
        self.card = self.make()
        self.assertEqual(self.ok(H("00CB00FF05A003830182"))[-1], 0)
        self.ok(H("002000820C") + pin_00("12345"))
        self.ok(H("002241B606800154840105"))
        self.ok(H("002A90A032") + H("9030") + os.urandom(48))
        self.assertEqual(self.sw(H("002A9E9A00")), "6985")
        self.ok(H("0024008218") + pin_00("12345") + pin_00("23456"))
        self.assertEqual(self.ok(H("00CB00FF05A003830182"))[-1], 1)


class Contactless(Base):
    def setUp(self):
        super().setUp()
        self.logs = []
        self.card = self.make(card_access=pace.cardaccess())
        self.front = ContactlessFrontend(self.card, "123456", self.logs.append)

    def test_atr(self):
        atr = self.front.atr
        self.assertEqual(atr, H("3B8B8001 0012233F536549440F9000 A0"))
        self.assertNotEqual(atr, self.card.atr)
        x = 0
        for b in atr[1:]:
            x ^= b
        self.assertEqual(x, 0)                               # TCK makes the XOR of T0..TCK zero

    def test_pre_pace_restrictions_and_full_session(self):
        f = self.front.handle
        self.assertEqual(f(H("00A4020C02011C")), H("9000"))
        self.assertEqual(f(H("00B0000000")), pace.cardaccess() + H("9000"))
        self.assertEqual(f(MAIN), H("9000"))
        self.assertEqual(f(H("00B0000000")), H("6982"))
        self.assertEqual(f(H("00A4090C04ADF1340100")[:-1]), H("6982"))
        self.assertEqual(f(H("002000010C") + pin_ff("1234")), H("6982"))
        with self.assertRaises(CardError) as cm:
            pace.PaceTerminal(b"654321").run(f)
        self.assertEqual(cm.exception.sw, 0x6300)
        sm = pace.PaceTerminal(b"123456").run(f)

        def st(apdu):
            return sm.unwrap_response(f(sm.wrap_command(Apdu.parse(apdu))))

        self.assertEqual(st(QSCD), H("9000"))
        self.assertEqual(st(H("002241B6068001548401") + b"\x9f"), H("9000"))
        self.assertEqual(st(H("002000850C") + pin_ff("12345")), H("9000"))
        digest = os.urandom(48)
        r = st(H("002A9E9A30") + digest + b"\x00")
        verify_raw(SIGN_KEY, digest, r[:-2])
        gd = st(H("00CB3FFF0A4D087006BF810502A08000"))              # odd INS: DO85 in the response
        self.assertEqual(gd[-2:], H("9000"))
        self.assertEqual(st(H("00A4080404ADF1340100"))[:3], H("620B80"))
        self.assertEqual(len(st(H("00B0000000"))), 0xC2)
        self.assertEqual(st(H("00A4020C025099")), H("6A82"))       # error SW inside DO99
        # A plain APDU ends the session.
        self.assertEqual(f(H("00A4000C")), H("6988"))
        self.assertEqual(f(H("00B0000000")), H("6982"))


if __name__ == "__main__":
    unittest.main()
