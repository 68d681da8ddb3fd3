"""PACE (ICAO 9303-11 §4.4, BSI TR-03110) with ECDH generic mapping, and the AES secure
messaging that follows it (ICAO 9303-11 §9.8). Card side for the emulator, terminal side
for the tests. Hash, key length and curve are parameters so that the ICAO worked example
(brainpoolP256r1, AES-128, SHA-1 KDF) can be checked with the same code that the card runs
with the Estonian parameters (P-256, AES-256, SHA-256 KDF)."""

import hashlib
import os

from cryptography.hazmat.primitives import cmac
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

import ec
from iso7816 import (Apdu, CardError, iso_pad, iso_unpad, parse_tlv, sw_bytes, tlv,
                     SW_SM_DATA_OBJECTS_INCORRECT, SW_SM_DATA_OBJECTS_MISSING)


def oid_bytes(dotted):
    """DER content bytes of an OBJECT IDENTIFIER (no tag/length)."""
    arcs = [int(x) for x in dotted.split(".")]
    out = bytes([40 * arcs[0] + arcs[1]])
    for a in arcs[2:]:
        chunk = [a & 0x7F]
        a >>= 7
        while a:
            chunk.append(0x80 | (a & 0x7F))
            a >>= 7
        out += bytes(reversed(chunk))
    return out


class Suite:
    """A PACE cipher suite: the OID's cipher/key length and KDF hash (TR-03110-3 A.2.3)."""

    def __init__(self, oid, key_len, hash_name):
        self.oid = oid
        self.oid_der = oid_bytes(oid)
        self.key_len = key_len
        self.hash_name = hash_name

    def kdf(self, secret, counter):
        """KDF(K, c) = H(K || c)[:key_len], c a 32-bit big-endian counter: 1 = enc, 2 = MAC,
        3 = password key Kπ."""
        return hashlib.new(self.hash_name, bytes(secret) + counter.to_bytes(4, "big")).digest()[:self.key_len]


# id-PACE-ECDH-GM-AES-CBC-CMAC-256 (what IDEMIA cards announce; SHA-256 KDF, AES-256).
GM_AES_256 = Suite("0.4.0.127.0.7.2.2.4.2.4", 32, "sha256")
# id-PACE-ECDH-GM-AES-CBC-CMAC-128 (the ICAO worked example; SHA-1 KDF, AES-128).
GM_AES_128 = Suite("0.4.0.127.0.7.2.2.4.2.2", 16, "sha1")
SUITES = {s.oid_der: s for s in (GM_AES_256, GM_AES_128)}


def aes_cbc(key, iv, data, encrypt=True):
    c = Cipher(algorithms.AES(key), modes.CBC(iv))
    op = c.encryptor() if encrypt else c.decryptor()
    return op.update(bytes(data)) + op.finalize()


def aes_ecb(key, block):
    op = Cipher(algorithms.AES(key), modes.ECB()).encryptor()
    return op.update(bytes(block)) + op.finalize()


def aes_cmac(key, data):
    c = cmac.CMAC(algorithms.AES(key))
    c.update(bytes(data))
    return c.finalize()


def auth_token(suite, ks_mac, point_bytes):
    """T = first 8 bytes of CMAC(KSmac, 7F49 L {06 OID, 86 <other side's ephemeral point>})."""
    body = tlv(0x06, suite.oid_der) + tlv(0x86, point_bytes)
    return aes_cmac(ks_mac, tlv(0x7F49, body))[:8]


def cardaccess(suite=GM_AES_256, parameter_id=12):
    """EF.CardAccess content: SecurityInfos SET OF { PACEInfo SEQUENCE { OID, version 2, parameterId } }."""
    pace_info = tlv(0x30, tlv(0x06, suite.oid_der) + tlv(0x02, b"\x02") + tlv(0x02, bytes([parameter_id])))
    return tlv(0x31, pace_info)


def _ga_data(apdu):
    """The content of the 7C dynamic authentication data template of a GENERAL AUTHENTICATE."""
    objs = parse_tlv(apdu.data)
    if len(objs) != 1 or objs[0][0] != 0x7C:
        raise CardError(0x6A80)
    return dict(parse_tlv(objs[0][1]))


class PaceCard:
    """The card's half of PACE-GM. Feed it MSE:SET AT and the four GENERAL AUTHENTICATE
    commands; after the last one `session` holds the secure-messaging keys. Test hooks:
    `fixed_nonce`, `fixed_keys` (mapping and ephemeral private keys) make a run deterministic."""

    def __init__(self, password, curve=ec.P256, suite=GM_AES_256, parameter_id=12):
        self.password = bytes(password)
        self.curve, self.suite, self.parameter_id = curve, suite, parameter_id
        self.fixed_nonce = None
        self.fixed_keys = None
        self.reset()

    def reset(self):
        self.step = 0            # 0 = no MSE yet, 1 = MSE done, 2..4 = GA steps done
        self.session = None
        self.failed = False

    def mse_set_at(self, apdu):
        objs = dict(parse_tlv(apdu.data))
        if objs.get(0x80) not in SUITES or SUITES[objs[0x80]] is not self.suite:
            raise CardError(0x6A80)                      # protocol not supported
        if objs.get(0x83) != b"\x02":                      # only the CAN (password ref 2)
            raise CardError(0x6A80)
        if 0x84 in objs and objs[0x84] != bytes([self.parameter_id]):
            raise CardError(0x6A80)
        self.reset()
        self.step = 1
        return b""

    def general_authenticate(self, apdu):
        chained = bool(apdu.cla & 0x10)
        d = _ga_data(apdu)
        C = self.curve
        try:
            if self.step == 1 and not d and chained:
                # Step 1: encrypted nonce z = E(Kπ, s), Kπ = KDF(CAN, 3), AES-CBC with IV 0.
                self.s = self.fixed_nonce or os.urandom(16)
                k_pi = self.suite.kdf(self.password, 3)
                z = aes_cbc(k_pi, b"\x00" * 16, self.s)
                self.step = 2
                return tlv(0x7C, tlv(0x80, z))
            if self.step == 2 and 0x81 in d and chained:
                # Step 2 (GM): exchange mapping keys; H = a * PK_map(terminal); G' = s*G + H.
                pk_t = C.decode(d[0x81])
                a = self.fixed_keys[0] if self.fixed_keys else C.random_scalar()
                H = C.mul(a, pk_t)
                self.G_mapped = C.add(C.mul(int.from_bytes(self.s, "big"), C.G), H)
                self.H = H
                self.step = 3
                return tlv(0x7C, tlv(0x82, C.encode(C.mul(a, C.G))))
            if self.step == 3 and 0x83 in d and chained:
                # Step 3: ephemeral ECDH on G'; K = x(b * PK_eph(terminal)).
                self.pk_t_eph = d[0x83]
                pt = C.decode(self.pk_t_eph)
                b = self.fixed_keys[1] if self.fixed_keys else C.random_scalar()
                self.pk_c_eph = C.encode(C.mul(b, self.G_mapped))
                if self.pk_c_eph == self.pk_t_eph:
                    raise CardError(0x6A80)
                shared = C.mul(b, pt)
                if shared is None:
                    raise CardError(0x6A80)
                self.K = shared[0].to_bytes(C.size, "big")
                self.ks_enc = self.suite.kdf(self.K, 1)
                self.ks_mac = self.suite.kdf(self.K, 2)
                self.step = 4
                return tlv(0x7C, tlv(0x84, self.pk_c_eph))
            if self.step == 4 and 0x85 in d and not chained:
                # Step 4: mutual authentication. The terminal's token is over OUR ephemeral key.
                expected = auth_token(self.suite, self.ks_mac, self.pk_c_eph)
                if d[0x85] != expected:
                    self.reset()
                    self.failed = True
                    raise CardError(0x6300)              # wrong CAN: authentication failed
                token = auth_token(self.suite, self.ks_mac, self.pk_t_eph)
                self.session = SecureMessaging(self.ks_enc, self.ks_mac)
                self.step = 5
                return tlv(0x7C, tlv(0x86, token))
        except ValueError:                               # a point that is not on the curve
            self.reset()
            raise CardError(0x6A80)
        self.reset()
        raise CardError(0x6985)                          # out of sequence


class PaceTerminal:
    """The terminal's half, used by the tests (and usable as a reference for the Swift client).
    `run(transmit)` drives the card through `transmit(apdu_bytes) -> response_bytes`."""

    def __init__(self, password, curve=ec.P256, suite=GM_AES_256, parameter_id=12):
        self.password = bytes(password)
        self.curve, self.suite, self.parameter_id = curve, suite, parameter_id
        self.fixed_keys = None

    def run(self, transmit):
        C, S = self.curve, self.suite

        def ga(cla, data):
            r = transmit(bytes([cla, 0x86, 0, 0, len(data)]) + data + b"\x00")
            sw = int.from_bytes(r[-2:], "big")
            if sw != 0x9000:
                raise CardError(sw)
            return dict(parse_tlv(parse_tlv(r[:-2])[0][1]))

        mse = tlv(0x80, S.oid_der) + tlv(0x83, b"\x02") + tlv(0x84, bytes([self.parameter_id]))
        r = transmit(bytes([0, 0x22, 0xC1, 0xA4, len(mse)]) + mse)
        if r[-2:] != b"\x90\x00":
            raise CardError(int.from_bytes(r[-2:], "big"))
        z = ga(0x10, tlv(0x7C, b""))[0x80]
        self.s = aes_cbc(S.kdf(self.password, 3), b"\x00" * 16, z, encrypt=False)
        x1 = self.fixed_keys[0] if self.fixed_keys else C.random_scalar()
        pk_c_map = C.decode(ga(0x10, tlv(0x7C, tlv(0x81, C.encode(C.mul(x1, C.G)))))[0x82])
        G_mapped = C.add(C.mul(int.from_bytes(self.s, "big"), C.G), C.mul(x1, pk_c_map))
        x2 = self.fixed_keys[1] if self.fixed_keys else C.random_scalar()
        pk_t_eph = C.encode(C.mul(x2, G_mapped))
        pk_c_eph = ga(0x10, tlv(0x7C, tlv(0x83, pk_t_eph)))[0x84]
        K = C.mul(x2, C.decode(pk_c_eph))[0].to_bytes(C.size, "big")
        ks_enc, ks_mac = S.kdf(K, 1), S.kdf(K, 2)
        t_card = ga(0x00, tlv(0x7C, tlv(0x85, auth_token(S, ks_mac, pk_c_eph))))[0x86]
        if t_card != auth_token(S, ks_mac, pk_t_eph):
            raise CardError(0x6300)
        return SecureMessaging(ks_enc, ks_mac)


class SecureMessaging:
    """AES secure messaging (ICAO 9303-11 §9.8.6 / BSI TR-03110-3 F): 16-byte SSC incremented
    before each command and each response, IV = E(KSenc, SSC), ISO padding, CMAC-AES
    truncated to 8 bytes over SSC || padded header || DO87/85 || DO97 (command) or
    SSC || DO87/85 || DO99 (response)."""

    BLOCK = 16

    def __init__(self, ks_enc, ks_mac, ssc=0):
        self.ks_enc, self.ks_mac, self.ssc = ks_enc, ks_mac, ssc

    def _ssc(self):
        return self.ssc.to_bytes(self.BLOCK, "big")

    def _iv(self):
        return aes_ecb(self.ks_enc, self._ssc())

    def _mac(self, data):
        return aes_cmac(self.ks_mac, iso_pad(self._ssc() + data, self.BLOCK))[:8]

    def _enc(self, data):
        return aes_cbc(self.ks_enc, self._iv(), iso_pad(data, self.BLOCK))

    def _dec(self, data):
        if not data or len(data) % self.BLOCK:
            raise CardError(SW_SM_DATA_OBJECTS_INCORRECT)
        return iso_unpad(aes_cbc(self.ks_enc, self._iv(), data, encrypt=False))

    # -- terminal side ----------------------------------------------------------------------
    def wrap_command(self, apdu):
        self.ssc += 1
        cla = apdu.cla | 0x0C
        header = bytes([cla, apdu.ins, apdu.p1, apdu.p2])
        dos = b""
        if apdu.data:
            cipher = self._enc(apdu.data)
            dos += tlv(0x85, cipher) if apdu.ins & 1 else tlv(0x87, b"\x01" + cipher)
        if apdu.le is not None:
            dos += tlv(0x97, bytes([apdu.le & 0xFF]))
        mac = self._mac(iso_pad(header, self.BLOCK) + dos)
        body = dos + tlv(0x8E, mac)
        return header + bytes([len(body)]) + body + b"\x00"

    def unwrap_response(self, resp):
        self.ssc += 1
        objs = parse_tlv(resp[:-2])
        d = dict(objs)
        if 0x8E not in d or 0x99 not in d:
            raise CardError(SW_SM_DATA_OBJECTS_MISSING)
        covered = b"".join(tlv(t, v) for t, v in objs if t in (0x85, 0x87, 0x99))
        if self._mac(covered) != d[0x8E]:
            raise CardError(SW_SM_DATA_OBJECTS_INCORRECT)
        data = b""
        if 0x87 in d:
            data = self._dec(d[0x87][1:])
        elif 0x85 in d:
            data = self._dec(d[0x85])
        return data + d[0x99]

    # -- card side --------------------------------------------------------------------------
    def unwrap_command(self, raw):
        """Checks and decrypts a protected command; returns the plain Apdu. Raises
        CardError(6987/6988) on missing or wrong SM objects (the caller ends the session)."""
        apdu = Apdu.parse(raw)
        if apdu.cla & 0x0C != 0x0C:
            raise CardError(SW_SM_DATA_OBJECTS_MISSING)
        self.ssc += 1
        objs = parse_tlv(apdu.data)
        d = dict(objs)
        if 0x8E not in d:
            raise CardError(SW_SM_DATA_OBJECTS_MISSING)
        header = bytes([apdu.cla, apdu.ins, apdu.p1, apdu.p2])
        covered = b"".join(tlv(t, v) for t, v in objs if t in (0x85, 0x87, 0x97))
        if self._mac(iso_pad(header, self.BLOCK) + covered) != d[0x8E]:
            raise CardError(SW_SM_DATA_OBJECTS_INCORRECT)
        data = b""
        if 0x87 in d:
            if not d[0x87] or d[0x87][0] != 0x01:
                raise CardError(SW_SM_DATA_OBJECTS_INCORRECT)
            data = self._dec(d[0x87][1:])
        elif 0x85 in d:
            data = self._dec(d[0x85])
        le = None
        if 0x97 in d:
            le = (d[0x97][0] if d[0x97] else 0) or 256
        return Apdu(apdu.cla & ~0x0C & 0xFF, apdu.ins, apdu.p1, apdu.p2, data, le, bool(data))

    def wrap_response(self, ins, data, sw):
        """Protects a response: DO87 (even INS) or DO85 (odd INS) with the encrypted data,
        DO99 with the status word, DO8E with the MAC; outer status word 90 00."""
        self.ssc += 1
        dos = b""
        if data:
            cipher = self._enc(data)
            dos += tlv(0x85, cipher) if ins & 1 else tlv(0x87, b"\x01" + cipher)
        dos += tlv(0x99, sw_bytes(sw))
        return dos + tlv(0x8E, self._mac(dos)) + b"\x90\x00"
