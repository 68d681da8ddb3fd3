"""What both emulated cards share: the persistent PIN state, a tiny file system, key
operations and the personal-data record layout."""

import json
import os
import tempfile

from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, utils

from iso7816 import (CardError, tlv, SW_AUTH_BLOCKED, SW_WRONG_DATA, SW_FILE_NOT_FOUND, SW_WRONG_LENGTH, SW_WRONG_P1P2,
                      SW_CLA_NOT_SUPPORTED, SW_INS_NOT_SUPPORTED)

# Defaults written into a new --state file. Real cards come with random envelopes; these are
# the values that Estonian test cards and most emulators use.
DEFAULT_PINS = {"pin1": "1234", "pin2": "12345", "puk": "17258403"}
MAX_TRIES = 3


class PinStore:
    """PINs, retry counters and the Thales "PIN changed" flags, kept in a JSON file that is
    rewritten (atomically) after every change, so a restarted emulator = the same card."""

    def __init__(self, path):
        self.path = path
        if path and os.path.exists(path):
            with open(path) as f:
                self.data = json.load(f)
        else:
            self.data = {"pins": {name: {"value": v, "tries": MAX_TRIES, "max": MAX_TRIES, "changed": True}
                                  for name, v in DEFAULT_PINS.items()}}
            self.save()

    def __getitem__(self, name):
        return self.data["pins"][name]

    def save(self):
        if not self.path:
            return
        d = os.path.dirname(os.path.abspath(self.path))
        fd, tmp = tempfile.mkstemp(dir=d, prefix=".state.")
        with os.fdopen(fd, "w") as f:
            json.dump(self.data, f, indent=1, sort_keys=True)
        os.replace(tmp, self.path)


class Pin:
    """One secret: reference, minimum length, padding byte (FF for IDEMIA, 00 for Thales).
    The card compares the *whole* 12-byte padded block, as the real cards do: a client that
    pads with the wrong byte gets 63 Cx."""

    BLOCK = 12

    def __init__(self, store, name, ref, min_len, pad):
        self.store, self.name, self.ref, self.min_len, self.pad = store, name, ref, min_len, pad

    @property
    def rec(self):
        return self.store[self.name]

    @property
    def tries(self):
        return self.rec["tries"]

    @property
    def max(self):
        return self.rec.get("max", MAX_TRIES)

    @property
    def changed(self):
        return self.rec.get("changed", True)

    def block(self, value=None):
        v = (self.rec["value"] if value is None else value).encode()
        return v + bytes([self.pad]) * (self.BLOCK - len(v))

    def check(self, block):
        """Compares a padded block. Right: counter back to max. Wrong: one try less; raises
        63 Cx (x = tries left) or, when already at 0, 69 83."""
        if len(block) != self.BLOCK:
            raise CardError(SW_WRONG_LENGTH)
        if self.tries == 0:
            raise CardError(SW_AUTH_BLOCKED)
        if block == self.block():
            if self.tries != self.max:
                self.rec["tries"] = self.max
                self.store.save()
            return
        self.rec["tries"] = self.tries - 1
        self.store.save()
        raise CardError(0x63C0 | self.tries)

    def valid_new(self, block):
        """The new value of a padded block if it is digits of an allowed length followed only
        by padding; else None."""
        if len(block) != self.BLOCK:
            return None
        n = len(block)
        while n and block[n - 1] == self.pad:
            n -= 1
        v = block[:n]
        if not (self.min_len <= len(v) <= self.BLOCK) or not all(0x30 <= c <= 0x39 for c in v):
            return None
        return v.decode()

    def set(self, value, changed=True):
        self.rec["value"] = value
        self.rec["tries"] = self.max
        self.rec["changed"] = changed
        self.store.save()


class EstEIDApplet:
    """What both cards share: the dispatch of commands to their handlers, and VERIFY (no data
    asks for the status, 90 00 when verified, else 63 Cx or 69 83; a PIN block is checked
    whole). Subclasses give the handlers, `_pin(ref)` and `verified`."""

    def process(self, a):
        if a.cla != 0x00:
            raise CardError(SW_CLA_NOT_SUPPORTED)
        handler = {0xA4: self.select, 0xB0: self.read_binary, 0xCB: self.get_data, 0x20: self.verify,
                   0x24: self.change, 0x2C: self.reset_retry, 0x22: self.mse, 0x2A: self.pso,
                   0x88: self.internal_authenticate, 0x84: self.get_challenge}.get(a.ins)
        if handler is None:
            raise CardError(SW_INS_NOT_SUPPORTED)
        return handler(a)

    def verify(self, a):
        if a.p1 != 0x00:
            raise CardError(SW_WRONG_P1P2)
        pin = self._pin(a.p2)
        if not a.data:
            if pin.tries == 0:
                raise CardError(SW_AUTH_BLOCKED)
            if a.p2 in self.verified:
                return b""
            raise CardError(0x63C0 | pin.tries)
        self.verified.discard(a.p2)
        pin.check(a.data)
        self.verified.add(a.p2)
        return b""


class EF:
    def __init__(self, fid, data):
        self.fid, self.data, self.parent = fid, bytes(data), None


class DF:
    def __init__(self, fid, children=(), aid=None, app=None):
        self.fid, self.aid, self.app, self.parent = fid, aid, app, None
        self.children = {}
        for c in children:
            self.add(c)

    def add(self, node):
        node.parent = self
        self.children[node.fid] = node
        return node

    def application(self):
        """The application a DF belongs to: its own tag or the nearest ancestor's."""
        n = self
        while n is not None:
            if n.app:
                return n.app
            n = n.parent
        return None


def resolve(start, fids):
    """Walks a list of 2-byte FIDs from `start`; every element but the last must be a DF."""
    node = start
    for i, fid in enumerate(fids):
        if not isinstance(node, DF) or fid not in node.children:
            raise CardError(SW_FILE_NOT_FOUND)
        node = node.children[fid]
    return node


def split_path(data):
    if len(data) % 2 or not data:
        raise CardError(0x6A87 if data else 0x6A80)
    return [bytes(data[i:i + 2]) for i in range(0, len(data), 2)]


# ---- keys ------------------------------------------------------------------------------------
def load_cert_der(path):
    with open(path, "rb") as f:
        raw = f.read()
    if b"-----BEGIN" in raw:
        from cryptography import x509
        return x509.load_pem_x509_certificate(raw).public_bytes(serialization.Encoding.DER)
    return raw


def load_key(path):
    with open(path, "rb") as f:
        raw = f.read()
    if b"-----BEGIN" in raw:
        return serialization.load_pem_private_key(raw, password=None)
    return serialization.load_der_private_key(raw, password=None)


def ecdsa_raw(key, digest):
    """ECDSA over an already-hashed value, returned as r || s (fixed-width, big-endian) as the
    cards do. The digest is fitted to the curve's size the way ECDSA itself would (FIPS 186-5
    6.4: leftmost bits; a shorter value is the same integer left-padded with zeros), so any
    hash length works and P-384 gets exactly what the card receives."""
    size = (key.curve.key_size + 7) // 8
    d = bytes(digest)
    d = d[:size] if len(d) > size else b"\x00" * (size - len(d)) + d
    algo = {32: hashes.SHA256(), 48: hashes.SHA384()}.get(size)
    if algo is None:
        raise ValueError("only P-256 and P-384 keys are supported")
    der = key.sign(d, ec.ECDSA(utils.Prehashed(algo)))
    r, s = utils.decode_dss_signature(der)
    return r.to_bytes(size, "big") + s.to_bytes(size, "big")


def ecdh_x(key, data):
    """PSO:DECIPHER for key agreement (spec §3.2/§3.3): `data` is the padding-indicator byte 00
    and the other party's uncompressed point on the key's curve; the answer is the shared
    secret's X coordinate at full field length, as DigiDoc's clients use it as Z. Anything else
    is wrong data (6A 80), as a card answers a point it cannot use."""
    size = (key.curve.key_size + 7) // 8
    if len(data) != 2 + 2 * size or data[0] != 0x00 or data[1] != 0x04:
        raise CardError(SW_WRONG_DATA)
    try:
        peer = ec.EllipticCurvePublicKey.from_encoded_point(key.curve, bytes(data[1:]))
    except ValueError:
        raise CardError(SW_WRONG_DATA)
    return key.exchange(ec.ECDH(), peer)


# ---- personal data file (EF 5001..500F) -------------------------------------------------------
PERSONAL_FIELDS = ["surname", "given_names", "sex", "citizenship", "birth", "personal_code",
                   "document_number", "expiry", "issuance", "permit_type",
                   "notes1", "notes2", "notes3", "notes4", "notes5"]


def personal_records(values):
    """EF contents for 5001..500F: UTF-8 text; an empty field is a single 00 byte, as the
    real cards store it (DigiDoc4 treats a lone 00 as empty)."""
    out = {}
    for i, name in enumerate(PERSONAL_FIELDS, start=1):
        v = (values.get(name) or "").encode("utf-8")
        out[bytes([0x50, i])] = v if v else b"\x00"
    return out


def fcp_ef(fid, size, size_tag=0x80, extra=b""):
    """FCP template for a transparent EF. IDEMIA puts the size in tag 80 first; Thales in tag
    81 after the other tags (`size_tag` and `extra` select that)."""
    size_do = tlv(size_tag, size.to_bytes(2, "big"))
    body = tlv(0x82, b"\x01") + tlv(0x83, fid) + extra
    body = size_do + body if size_tag == 0x80 else body + size_do
    return tlv(0x62, body)


def fcp_df(df):
    body = tlv(0x82, b"\x38") + tlv(0x83, df.fid)
    if df.aid:
        body += tlv(0x84, df.aid)
    return tlv(0x62, body)
