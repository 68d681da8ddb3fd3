#!/usr/bin/python3
"""An independent CDOC2 writer and reader for asicfs's tests, written from the format's
specification (envelope, FlatBuffers header, HKDF key schedule, ChaCha20-Poly1305 over a
zlib-compressed tar) with Python's own tarfile/zlib and Debian's python3-cryptography. It shares
no code with asicfs: its FlatBuffers builder works back to front, its reader looks fields up in
the vtables generically.

  cdoc2.py encrypt OUT FILE... [--ec PUB.pem LABEL] [--rsa PUB.pem LABEL] [--secret HEX LABEL]
           [--password PW LABEL] [--iterations N] [--keyserver PUB.pem] [--keyshares] [--evil KIND] [--labels2024]
           [--bomb MIB] [--trailing] [--header-iterations N]
  cdoc2.py decrypt IN OUTDIR (--key PRIV.pem | --secret HEX | --password PW)
"""
import io, os, struct, sys, tarfile, zlib
from cryptography.hazmat.primitives import hashes, hmac, serialization
from cryptography.hazmat.primitives.asymmetric import ec, padding, rsa
from cryptography.hazmat.primitives.ciphers.aead import ChaCha20Poly1305
from cryptography.hazmat.primitives.kdf.hkdf import HKDFExpand
from cryptography.hazmat.primitives.kdf.pbkdf2 import PBKDF2HMAC

LABELS = {"salt": b"CDOC20salt", "kek": b"CDOC20kek", "premaster": b"CDOC20kekpremaster",
          "hmac": b"CDOC20hmac", "cek": b"CDOC20cek", "payload": b"CDOC20payload"}
HEADER_ITERATIONS = None  # --header-iterations: claim another count than the one used
CURVES = {1: ec.SECP384R1(), 2: ec.SECP256R1(), 3: ec.SECP521R1()}


def extract(salt, ikm):
    h = hmac.HMAC(salt, hashes.SHA256()); h.update(ikm); return h.finalize()


def expand(prk, info, n=32):
    return HKDFExpand(hashes.SHA256(), n, info).derive(prk)


def mac(key, data):
    h = hmac.HMAC(key, hashes.SHA256()); h.update(data); return h.finalize()


def xor(a, b):
    return bytes(x ^ y for x, y in zip(a, b))


# ---- FlatBuffers, back to front ------------------------------------------------------------
class Builder:
    def __init__(self):
        self.buf = bytearray()          # the tail of the buffer; a handle = len(buf) after writing

    def prepend(self, data):
        self.buf[0:0] = data

    def align(self, size, extra=0):
        while (len(self.buf) + extra) % size:
            self.prepend(b"\0")

    def vector(self, data, string=False):
        data = bytes(data)
        body = data + (b"\0" if string else b"")
        self.align(4, len(body))
        self.prepend(body)
        self.prepend(struct.pack("<I", len(data)))
        return len(self.buf)

    def table_vector(self, handles):
        self.align(4, 4 * len(handles))
        for handle in reversed(handles):
            self.align(4)
            self.prepend(struct.pack("<I", len(self.buf) + 4 - handle))
        self.prepend(struct.pack("<I", len(handles)))
        return len(self.buf)

    def table(self, fields):
        """fields: {id: ('u8'|'i32'|'off', value)}"""
        start = len(self.buf)
        where = {}
        for fid, (kind, value) in sorted(fields.items(), reverse=True):
            if kind == "u8":
                self.prepend(struct.pack("<B", value)); where[fid] = len(self.buf)
        self.align(4)
        for fid, (kind, value) in sorted(fields.items(), reverse=True):
            if kind == "i32":
                self.prepend(struct.pack("<i", value)); where[fid] = len(self.buf)
            elif kind == "off":
                self.prepend(struct.pack("<I", len(self.buf) + 4 - value)); where[fid] = len(self.buf)
        self.prepend(b"\0\0\0\0")
        table = len(self.buf)
        count = max(fields) + 1 if fields else 0
        offsets = [table - where[i] if i in where else 0 for i in range(count)]
        vtable = struct.pack("<HH", 4 + 2 * count, table - start) + b"".join(struct.pack("<H", o) for o in offsets)
        self.prepend(vtable)
        soffset = len(self.buf) - table
        at = len(self.buf) - table
        self.buf[at:at + 4] = struct.pack("<i", soffset)
        return table

    def finish(self, root):
        self.align(4, 4)
        self.prepend(struct.pack("<I", len(self.buf) + 4 - root))
        return bytes(self.buf)


class Table:
    def __init__(self, buf, pos):
        self.buf, self.pos = buf, pos
        self.vt = pos - struct.unpack_from("<i", buf, pos)[0]
        self.vtsize = struct.unpack_from("<H", buf, self.vt)[0]

    def off(self, fid):
        slot = 4 + 2 * fid
        if slot >= self.vtsize:
            return None
        o = struct.unpack_from("<H", self.buf, self.vt + slot)[0]
        return self.pos + o if o else None

    def u8(self, fid, default=0):
        o = self.off(fid); return self.buf[o] if o is not None else default

    def i32(self, fid, default=0):
        o = self.off(fid); return struct.unpack_from("<i", self.buf, o)[0] if o is not None else default

    def target(self, fid):
        o = self.off(fid)
        return None if o is None else o + struct.unpack_from("<I", self.buf, o)[0]

    def bytes(self, fid):
        t = self.target(fid)
        if t is None:
            return None
        n = struct.unpack_from("<I", self.buf, t)[0]
        return bytes(self.buf[t + 4:t + 4 + n])

    def table(self, fid):
        t = self.target(fid); return None if t is None else Table(self.buf, t)

    def tables(self, fid):
        t = self.target(fid)
        n = struct.unpack_from("<I", self.buf, t)[0]
        out = []
        for i in range(n):
            e = t + 4 + 4 * i
            out.append(Table(self.buf, e + struct.unpack_from("<I", self.buf, e)[0]))
        return out


# ---- writing -------------------------------------------------------------------------------
def raw_public(key):
    if isinstance(key, ec.EllipticCurvePublicKey):
        return key.public_bytes(serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint)
    return key.public_bytes(serialization.Encoding.DER, serialization.PublicFormat.PKCS1)


def curve_number(key):
    return {"secp384r1": 1, "secp256r1": 2, "secp521r1": 3}[key.curve.name]


def libcdoc_header(name, size, kind=b"0"):
    """A pre-POSIX header as libcdoc writes it: name, size, checksum and type only; no magic."""
    h = bytearray(512)
    h[0:min(100, len(name))] = name[:100]
    h[124:136] = b"%011o\0" % size
    h[156:157] = kind
    h[148:156] = b" " * 8
    h[148:156] = b"%06o\0 " % sum(h)
    return bytes(h)


def make_libcdoc_tar(files):
    out = bytearray()
    for path in files:
        data = open(path, "rb").read()
        name = os.path.basename(path).encode()
        if len(name) >= 100 or any(c < 0x20 or c >= 0x80 for c in name):
            body = b" path=" + name + b"\n"
            n = len(body) + 1
            while len(str(n)) + len(body) != n:
                n += 1
            record = str(n).encode() + body
            out += libcdoc_header(b"././@PaxHeader", len(record), b"x") + record + bytes(-len(record) % 512)
        out += libcdoc_header(name, len(data)) + data + bytes(-len(data) % 512)
    return bytes(out + bytes(1024))


def make_tar(files, evil):
    if evil == "libcdoc":
        return make_libcdoc_tar(files)
    out = io.BytesIO()
    globals_ = {"comment": "a global header"} if evil == "global" else None
    with tarfile.open(fileobj=out, mode="w", format=tarfile.PAX_FORMAT, pax_headers=globals_) as tar:
        for path in files:
            data = open(path, "rb").read()
            info = tarfile.TarInfo(os.path.basename(path)); info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
        if evil == "symlink":
            info = tarfile.TarInfo("link"); info.type = tarfile.SYMTYPE; info.linkname = "/etc/passwd"; tar.addfile(info)
        elif evil == "dir":
            info = tarfile.TarInfo("folder"); info.type = tarfile.DIRTYPE; tar.addfile(info)
        elif evil == "dotdot":
            info = tarfile.TarInfo("../escaped.txt"); info.size = 3; tar.addfile(info, io.BytesIO(b"bad"))
        elif evil == "control":
            info = tarfile.TarInfo("bad\x1b[31mname"); info.size = 3; tar.addfile(info, io.BytesIO(b"bad"))
        elif evil == "dup":
            data = open(files[0], "rb").read()
            info = tarfile.TarInfo(os.path.basename(files[0])); info.size = len(data); tar.addfile(info, io.BytesIO(data))
        elif evil == "many":
            for i in range(1001):
                info = tarfile.TarInfo("f%04d" % i); info.size = 1; tar.addfile(info, io.BytesIO(b"x"))
    return out.getvalue()


def bomb_stream(mib):
    """zlib of a tar holding one file of `mib` MiB of zeros, made without holding it in memory."""
    size = mib << 20
    info = tarfile.TarInfo("zeros.bin"); info.size = size
    header = info.tobuf(format=tarfile.USTAR_FORMAT)
    z = zlib.compressobj(9)
    out = [z.compress(header)]
    chunk = bytes(1 << 20)
    for _ in range(mib):
        out.append(z.compress(chunk))
    out.append(z.compress(bytes(1024)))
    out.append(z.flush())
    return b"".join(out)


def encrypt(out, files, recipients, iterations, evil, labels2024, bomb, trailing):
    global LABELS
    if labels2024:
        LABELS = {k: v.replace(b"CDOC20", b"CDOC2") for k, v in LABELS.items()}
    fmk = extract(LABELS["salt"], os.urandom(64))
    b = Builder()
    records = []
    for kind, arg, label in recipients:
        if kind == "ec":
            pub = serialization.load_pem_public_key(open(arg, "rb").read())
            eph = ec.generate_private_key(pub.curve)
            z = eph.exchange(ec.ECDH(), pub)
            rk, sk = raw_public(pub), raw_public(eph.public_key())
            kek = expand(extract(LABELS["premaster"], z), LABELS["kek"] + b"XOR" + rk + sk)
            capsule = b.table({0: ("u8", curve_number(pub)), 1: ("off", b.vector(rk)), 2: ("off", b.vector(sk))})
            ctype = 1
        elif kind == "rsa":
            pub = serialization.load_pem_public_key(open(arg, "rb").read())
            kek = os.urandom(32)
            enc = pub.encrypt(kek, padding.OAEP(mgf=padding.MGF1(hashes.SHA256()), algorithm=hashes.SHA256(), label=None))
            capsule = b.table({0: ("off", b.vector(raw_public(pub))), 1: ("off", b.vector(enc))})
            ctype = 2
        elif kind == "secret":
            salt = os.urandom(32)
            kek = expand(extract(salt, bytes.fromhex(arg)), LABELS["kek"] + b"XOR" + label.encode())
            capsule = b.table({0: ("off", b.vector(salt))})
            ctype = 4
        elif kind == "password":
            salt, pwsalt = os.urandom(32), os.urandom(32)
            ikm = PBKDF2HMAC(hashes.SHA256(), 32, pwsalt, iterations).derive(arg.encode())
            kek = expand(extract(salt, ikm), LABELS["kek"] + b"XOR" + label.encode())
            capsule = b.table({0: ("off", b.vector(salt)), 1: ("off", b.vector(pwsalt)), 2: ("u8", 1), 3: ("i32", HEADER_ITERATIONS or iterations)})
            ctype = 5
        elif kind == "keyserver":
            pub = serialization.load_pem_public_key(open(arg, "rb").read())
            details = b.table({0: ("u8", curve_number(pub)), 1: ("off", b.vector(raw_public(pub)))})
            capsule = b.table({0: ("u8", 1), 1: ("off", details), 2: ("off", b.vector(b"00000000-0000-0000-0000-000000000000", True)),
                               3: ("off", b.vector(b"KC0123456789abcdef01", True))})
            kek = os.urandom(32)
            ctype = 3
        elif kind == "keyshares":
            share = b.table({0: ("off", b.vector(b"https://shares.example", True)), 1: ("off", b.vector(b"ss0123", True))})
            capsule = b.table({0: ("off", b.table_vector([share])), 1: ("off", b.vector(os.urandom(32))), 2: ("u8", 1),
                               3: ("u8", 1), 4: ("off", b.vector(b"etsi/PNOEE-30303039914", True))})
            kek = os.urandom(32)
            ctype = 6
        fmk_enc = b.vector(xor(fmk, kek))
        lab = b.vector(label.encode(), True)
        records.append(b.table({0: ("u8", ctype), 1: ("off", capsule), 2: ("off", lab), 3: ("off", fmk_enc), 4: ("u8", 1)}))
    root = b.table({0: ("off", b.table_vector(records)), 1: ("u8", 1)})
    header = b.finish(root)
    hhk = expand(fmk, LABELS["hmac"])
    hmac_value = mac(hhk, header)
    cek = expand(fmk, LABELS["cek"])
    if bomb:
        plain = bomb_stream(bomb)
    else:
        tar = make_tar(files, evil)
        if trailing:
            tar += b"garbage after the end"
        plain = zlib.compress(tar)
    nonce = os.urandom(12)
    sealed = ChaCha20Poly1305(cek).encrypt(nonce, plain, LABELS["payload"] + header + hmac_value)
    with open(out, "wb") as f:
        f.write(b"CDOC\x02" + struct.pack(">I", len(header)) + header + hmac_value + nonce + sealed)


# ---- reading -------------------------------------------------------------------------------
def decrypt(path, outdir, key=None, secret=None, password=None):
    data = open(path, "rb").read()
    assert data[:5] == b"CDOC\x02", "not CDOC2"
    n = struct.unpack(">I", data[5:9])[0]
    header, hmac_value, payload = data[9:9 + n], data[9 + n:41 + n], data[41 + n:]
    root = Table(header, struct.unpack_from("<I", header, 0)[0])
    assert root.u8(1) == 1
    fmk = None
    for rec in root.tables(0):
        ctype, cap, label, enc = rec.u8(0), rec.table(1), rec.bytes(2), rec.bytes(3)
        if ctype == 1 and key is not None and isinstance(key, ec.EllipticCurvePrivateKey):
            rk, sk = cap.bytes(1), cap.bytes(2)
            if rk != raw_public(key.public_key()):
                continue
            sender = ec.EllipticCurvePublicKey.from_encoded_point(CURVES[cap.u8(0)], sk)
            z = key.exchange(ec.ECDH(), sender)
            kek = expand(extract(LABELS["premaster"], z), LABELS["kek"] + b"XOR" + rk + sk)
        elif ctype == 2 and key is not None and isinstance(key, rsa.RSAPrivateKey):
            if cap.bytes(0) != raw_public(key.public_key()):
                continue
            kek = key.decrypt(cap.bytes(1), padding.OAEP(mgf=padding.MGF1(hashes.SHA256()), algorithm=hashes.SHA256(), label=None))
        elif ctype == 4 and secret is not None:
            kek = expand(extract(cap.bytes(0), secret), LABELS["kek"] + b"XOR" + label)
        elif ctype == 5 and password is not None:
            ikm = PBKDF2HMAC(hashes.SHA256(), 32, cap.bytes(1), cap.i32(3)).derive(password.encode())
            kek = expand(extract(cap.bytes(0), ikm), LABELS["kek"] + b"XOR" + label)
        else:
            continue
        fmk = xor(enc, kek)
        break
    if fmk is None:
        sys.exit("no recipient fits")
    if mac(expand(fmk, LABELS["hmac"]), header) != hmac_value:
        sys.exit("header MAC mismatch")
    plain = ChaCha20Poly1305(expand(fmk, LABELS["cek"])).decrypt(payload[:12], payload[12:], LABELS["payload"] + header + hmac_value)
    tar = zlib.decompress(plain)
    os.makedirs(outdir, exist_ok=True)
    with tarfile.open(fileobj=io.BytesIO(tar)) as archive:
        for member in archive.getmembers():
            assert member.isfile() and "/" not in member.name, member.name
            with open(os.path.join(outdir, member.name), "wb") as f:
                f.write(archive.extractfile(member).read())
            print(member.name)


def main(argv):
    if argv[0] == "encrypt":
        out, rest = argv[1], argv[2:]
        files, recipients, iterations, evil, labels2024, bomb, trailing = [], [], 600000, None, False, 0, False
        i = 0
        while i < len(rest):
            a = rest[i]
            if a in ("--ec", "--rsa", "--secret", "--password"):
                recipients.append((a[2:], rest[i + 1], rest[i + 2])); i += 3
            elif a == "--keyserver":
                recipients.append(("keyserver", rest[i + 1], "data:,v=1&type=ID-card&cn=SERVER%2CKEY&serial_number=PNOEE-1")); i += 2
            elif a == "--keyshares":
                recipients.append(("keyshares", None, "data:,v=1&type=auth&sn=etsi/PNOEE-30303039914")); i += 1
            elif a == "--iterations":
                iterations = int(rest[i + 1]); i += 2
            elif a == "--header-iterations":
                global HEADER_ITERATIONS
                HEADER_ITERATIONS = int(rest[i + 1]); i += 2
            elif a == "--evil":
                evil = rest[i + 1]; i += 2
            elif a == "--bomb":
                bomb = int(rest[i + 1]); i += 2
            elif a == "--labels2024":
                labels2024 = True; i += 1
            elif a == "--trailing":
                trailing = True; i += 1
            else:
                files.append(a); i += 1
        encrypt(out, files, recipients, iterations, evil, labels2024, bomb, trailing)
    elif argv[0] == "decrypt":
        path, outdir, kind, value = argv[1], argv[2], argv[3], argv[4]
        if kind == "--key":
            decrypt(path, outdir, key=serialization.load_pem_private_key(open(value, "rb").read(), None))
        elif kind == "--secret":
            decrypt(path, outdir, secret=bytes.fromhex(value))
        else:
            decrypt(path, outdir, password=value)


if __name__ == "__main__":
    main(sys.argv[1:])
