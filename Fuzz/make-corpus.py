#!/usr/bin/env python3
"""Writes the seed corpora of the fuzzers: OUT/zip, OUT/manifest, OUT/signature and OUT/cdoc1
(OUT defaults to Fuzz/corpus, which is not tracked: Fuzz/run.sh writes it before each run).

Seeds are small (each under 64 KiB) valid and deliberately broken ASiC containers, manifests and
signature documents, all made here: the shapes of the reference implementation's test corpus
(subfolders, '..' and '.' names, an empty full-path, ASiC-S variants, XML bombs) are written
by this script, not copied. The one real signature, Fuzz/seeds/asicfs-lt-signatures0.xml, was
made by asicfs with the project's test PKI; the signature seeds are it and variants of it.

    python3 Fuzz/make-corpus.py [OUT]
"""
import io
import os
import re
import shutil
import struct
import sys
import warnings
import zlib
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
SEEDS = os.path.join(HERE, "seeds")
LIMIT = 64 << 10

ASICE = "application/vnd.etsi.asic-e+zip"
ASICS = "application/vnd.etsi.asic-s+zip"
NS = "urn:oasis:names:tc:opendocument:xmlns:manifest:1.0"


def manifest(files, root_type=ASICE, prefix="manifest"):
    p = prefix + ":" if prefix else ""
    xmlns = f'xmlns:{prefix}="{NS}"' if prefix else f'xmlns="{NS}"'
    lines = ['<?xml version="1.0" encoding="UTF-8" standalone="no" ?>',
             f'<{p}manifest {xmlns} {p}version="1.2">']
    if root_type is not None:
        lines.append(f'  <{p}file-entry {p}full-path="/" {p}media-type="{root_type}"/>')
    for name, mt in files:
        lines.append(f'  <{p}file-entry {p}full-path="{name}" {p}media-type="{mt}"/>')
    lines.append(f"</{p}manifest>")
    return ("\n".join(lines) + "\n").encode()


def info(name, compress=zipfile.ZIP_DEFLATED):
    zi = zipfile.ZipInfo(name, date_time=(2024, 5, 17, 12, 30, 0))
    zi.compress_type = compress
    zi.external_attr = 0o644 << 16
    return zi


def container(entries, mimetype=ASICE, stream=False, force_zip64=False, comment=b""):
    """entries: list of (name, bytes, compress). mimetype first, stored."""
    raw = io.BytesIO()
    target = NonSeekable(raw) if stream else raw
    with zipfile.ZipFile(target, "w") as z:
        if mimetype is not None:
            z.writestr(info("mimetype", zipfile.ZIP_STORED), mimetype)
        for name, data, compress in entries:
            if force_zip64:
                with z.open(info(name, compress), "w", force_zip64=True) as f:
                    f.write(data)
            else:
                z.writestr(info(name, compress), data)
        z.comment = comment
    return raw.getvalue()


class NonSeekable(io.RawIOBase):
    """Makes zipfile write data descriptors (general-purpose flag bit 3), as streaming writers do."""

    def __init__(self, sink):
        self.sink = sink

    def writable(self):
        return True

    def write(self, b):
        return self.sink.write(b)

    def seekable(self):
        return False

    def tell(self):
        raise io.UnsupportedOperation

    def flush(self):
        pass


def deflate(data, flush_every=0, flush_mode=zlib.Z_BLOCK):
    """Raw deflate. With flush_every, ends a deflate block every that many input bytes: zlib
    otherwise makes one block of very repetitive data, and the seek index only records
    checkpoints at block boundaries (Z_BLOCK leaves them at odd bit offsets, Z_FULL_FLUSH aligned)."""
    c = zlib.compressobj(6, zlib.DEFLATED, -15)
    if not flush_every:
        return c.compress(data) + c.flush()
    out = bytearray()
    for i in range(0, len(data), flush_every):
        out += c.compress(data[i:i + flush_every]) + c.flush(flush_mode)
    return bytes(out + c.flush())


def raw_zip(entries, zip64=True, descriptor=False):
    """A hand-made ZIP, for what Python's zipfile does not write: ZIP64 central directory fields
    (saturated 32-bit values plus the 0x0001 extra), the ZIP64 end record and locator, and
    deflate streams with forced block boundaries. entries: (name, data, method[, body])."""
    out, central = bytearray(), bytearray()
    sat = 0xFFFFFFFF
    for name, data, method, *given in entries:
        n = name.encode()
        crc = zlib.crc32(data)
        if given:
            body = given[0]
        elif method == zipfile.ZIP_DEFLATED:
            body = deflate(data)
        else:
            body = data
        flags = 0x0800 | (0x0008 if descriptor else 0)
        offset = len(out)
        if zip64:
            local_extra = struct.pack("<HHQQ", 1, 16, len(data), len(body))
            sizes = (sat, sat)
        else:
            local_extra = b""
            sizes = (len(body), len(data))
        lcrc, lsizes = (0, (0, 0) if not zip64 else sizes) if descriptor else (crc, sizes)
        out += struct.pack("<IHHHHHIIIHH", 0x04034B50, 45, flags, method, 0x6000, 0x58B1, lcrc,
                           lsizes[0], lsizes[1], len(n), len(local_extra)) + n + local_extra + body
        if descriptor:
            out += struct.pack("<IIQQ", 0x08074B50, crc, len(body), len(data)) if zip64 else \
                struct.pack("<IIII", 0x08074B50, crc, len(body), len(data))
        if zip64:
            extra = struct.pack("<HHQQQ", 1, 24, len(data), len(body), offset)
            csizes, coff = (sat, sat), sat
        else:
            extra, csizes, coff = b"", (len(body), len(data)), offset
        central += struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 0x031E, 45, flags, method, 0x6000, 0x58B1,
                               crc, csizes[0], csizes[1], len(n), len(extra), 0, 0, 0, 0o644 << 16, coff) + n + extra
    cd_offset, cd_size, count = len(out), len(central), len(entries)
    out += central
    if zip64:
        z64 = len(out)
        out += struct.pack("<IQHHIIQQQQ", 0x06064B50, 44, 0x031E, 45, 0, 0, count, count, cd_size, cd_offset)
        out += struct.pack("<IIQI", 0x07064B50, 0, z64, 1)
        out += struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, 0xFFFF, 0xFFFF, sat, sat, 0)
    else:
        out += struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, count, count, cd_size, cd_offset, 0)
    return bytes(out)


def raw_container(zip64=True, descriptor=False, mimetype_method=zipfile.ZIP_STORED):
    return raw_zip([("mimetype", ASICE.encode(), mimetype_method),
                    ("META-INF/manifest.xml", manifest([("test.txt", "text/plain"), ("b.bin", "application/octet-stream")]),
                     zipfile.ZIP_DEFLATED),
                    ("test.txt", TEXT, zipfile.ZIP_DEFLATED),
                    ("b.bin", bytes(range(256)) * 4, zipfile.ZIP_STORED)], zip64=zip64, descriptor=descriptor)


D = zipfile.ZIP_DEFLATED
S = zipfile.ZIP_STORED
TEXT = b"Hello, ASiC!\n"


def simple(name="test.txt", data=TEXT, compress=D, mt="text/plain", **kw):
    return container([("META-INF/manifest.xml", manifest([(name, mt)]), D), (name, data, compress)], **kw)


def patch(data, offset, fmt, value):
    b = bytearray(data)
    struct.pack_into(fmt, b, offset, value)
    return bytes(b)


def find_all(data, sig):
    out, i = [], data.find(sig)
    while i >= 0:
        out.append(i)
        i = data.find(sig, i + 1)
    return out


def central_of(data, name):
    for off in find_all(data, b"PK\x01\x02"):
        n = struct.unpack_from("<H", data, off + 28)[0]
        if data[off + 46:off + 46 + n] == name.encode():
            return off
    raise KeyError(name)


def local_of(data, name):
    for off in find_all(data, b"PK\x03\x04"):
        n = struct.unpack_from("<H", data, off + 26)[0]
        if data[off + 30:off + 30 + n] == name.encode():
            return off
    raise KeyError(name)


def zip_seeds():
    seeds = {}
    seeds["py-valid-deflated.asice"] = simple()
    seeds["py-valid-stored.asice"] = simple(compress=S)
    seeds["py-valid-empty-file.asice"] = simple(data=b"")
    seeds["py-valid-subfolder.asice"] = simple(name="folder/sub/test.txt")
    seeds["py-valid-unicode.asice"] = simple(name="öäüõ.txt")
    seeds["py-valid-many.asice"] = container(
        [("META-INF/manifest.xml", manifest([(f"f{i}.txt", "text/plain") for i in range(8)]), D)]
        + [(f"f{i}.txt", bytes([65 + i]) * (i * 37), D if i % 2 else S) for i in range(8)])
    seeds["py-valid-folder-entry.asice"] = container(
        [("META-INF/manifest.xml", manifest([("dir/a.txt", "text/plain")]), D),
         ("dir/", b"", S), ("dir/a.txt", TEXT, D)])
    seeds["py-valid-signed.asice"] = container(
        [("META-INF/manifest.xml", manifest([("test.txt", "text/plain")]), D), ("test.txt", TEXT, D),
         ("META-INF/signatures0.xml", b'<?xml version="1.0"?><asic:XAdESSignatures xmlns:asic="http://uri.etsi.org/02918/v1.2.1#"/>', D)])
    # 3 MiB of compressible data: the seek index records checkpoints every 1 MiB.
    block = b"".join(b"line %04d of a repeating block of text\n" % i for i in range(100))
    big = (block * ((3 << 20) // len(block) + 1))[: 3 << 20]
    seeds["py-valid-3mib-deflated.asice"] = simple(name="big.txt", data=big)
    # The same with a deflate block every 96 KiB (3 MiB: two or three checkpoints, so random reads
    # restart from a checkpoint: inflatePrime at an odd bit offset plus the saved window).
    for mode, tag in ((zlib.Z_BLOCK, "blocks"), (zlib.Z_FULL_FLUSH, "full-flush")):
        seeds[f"raw-3mib-{tag}.asice"] = raw_zip(
            [("mimetype", ASICE.encode(), S), ("META-INF/manifest.xml", manifest([("big.txt", "text/plain")]), D),
             ("big.txt", big, D, deflate(big, 96 << 10, mode))], zip64=False)
    seeds["py-valid-zeros-deflated.asice"] = simple(name="zeros.bin", data=bytes(2 << 20), mt="application/octet-stream")
    seeds["py-data-descriptor.asice"] = simple(stream=True)
    seeds["py-data-descriptor-stored.asice"] = simple(compress=S, stream=True)
    seeds["py-zip64.asice"] = simple(force_zip64=True)
    seeds["py-zip64-stored.asice"] = simple(compress=S, force_zip64=True)
    seeds["raw-zip64.asice"] = raw_container()
    seeds["raw-zip64-descriptor.asice"] = raw_container(descriptor=True)
    seeds["raw-plain-descriptor.asice"] = raw_container(zip64=False, descriptor=True)
    seeds["py-comment.asice"] = simple(comment=b"a ZIP comment PK\x05\x06 with a fake signature")
    seeds["py-asics-timestamp.asics"] = container(
        [("test.txt", TEXT, S), ("META-INF/timestamp.tst", b"\x30\x82\x00\x10" + bytes(16), D)], mimetype=ASICS)
    seeds["py-asics-p7s.asics"] = container(
        [("doc.pdf", b"%PDF-1.4\n%%EOF\n", D), ("META-INF/signature.p7s", b"\x30\x80" + bytes(30), S)], mimetype=ASICS)

    # Broken on purpose.
    good = simple()
    seeds["bad-empty.asice"] = b""
    seeds["bad-eocd-only.zip"] = b"PK\x05\x06" + bytes(18)
    seeds["bad-truncated-half.asice"] = good[: len(good) // 2]
    seeds["bad-truncated-tail.asice"] = good[:-5]
    seeds["bad-no-mimetype.asice"] = container(
        [("META-INF/manifest.xml", manifest([("test.txt", "text/plain")]), D), ("test.txt", TEXT, D)], mimetype=None)
    seeds["odd-mimetype-deflated.asice"] = container(
        [("mimetype", ASICE.encode(), D), ("META-INF/manifest.xml", manifest([("test.txt", "text/plain")]), D),
         ("test.txt", TEXT, D)], mimetype=None)
    seeds["bad-wrong-mimetype.asice"] = simple(mimetype="application/zip")
    seeds["odd-mimetype-bom.asice"] = simple(mimetype="\ufeff" + ASICE + "\n")
    seeds["bad-no-manifest.asice"] = container([("test.txt", TEXT, D)])
    seeds["bad-manifest-missing-file.asice"] = container(
        [("META-INF/manifest.xml", manifest([("test.txt", "text/plain"), ("gone.txt", "text/plain")]), D),
         ("test.txt", TEXT, D)])
    seeds["bad-unlisted-file.asice"] = container(
        [("META-INF/manifest.xml", manifest([]), D), ("test.txt", TEXT, D)])
    seeds["bad-manifest-doctype.asice"] = container(
        [("META-INF/manifest.xml", b'<!DOCTYPE m [<!ENTITY a "b">]>' + manifest([("test.txt", "text/plain")]), D),
         ("test.txt", TEXT, D)])
    seeds["bad-traversal.asice"] = simple(name="../evil.txt")
    seeds["bad-absolute.asice"] = simple(name="/etc/evil.txt")
    seeds["bad-backslash.asice"] = simple(name="dir\\evil.txt")
    seeds["bad-duplicate.asice"] = container(
        [("META-INF/manifest.xml", manifest([("test.txt", "text/plain")]), D), ("test.txt", TEXT, D),
         ("test.txt", TEXT, S)])
    seeds["bad-two-files.asics"] = container([("a.txt", TEXT, S), ("b.txt", TEXT, S),
                                              ("META-INF/timestamp.tst", b"x", S)], mimetype=ASICS)

    off = central_of(good, "test.txt")
    seeds["bad-crc.asice"] = patch(patch(good, off + 16, "<I", 0xDEADBEEF),
                                   local_of(good, "test.txt") + 14, "<I", 0xDEADBEEF)
    seeds["bad-size-too-small.asice"] = patch(good, off + 24, "<I", 3)          # zip bomb style lie
    seeds["bad-size-too-large.asice"] = patch(good, off + 24, "<I", 1 << 20)
    seeds["bad-size-huge.asice"] = patch(good, off + 24, "<I", 0xFFFFFFFE)
    seeds["bad-method-bzip2.asice"] = patch(good, off + 10, "<H", 12)
    seeds["bad-encrypted.asice"] = patch(good, off + 8, "<H", 1)
    seeds["bad-offset-past-end.asice"] = patch(good, off + 42, "<I", 0x7FFFFFF0)
    seeds["bad-offset-overlap.asice"] = patch(good, off + 42, "<I", local_of(good, "META-INF/manifest.xml"))
    lo = local_of(good, "test.txt")
    seeds["bad-local-name-differs.asice"] = good[:lo + 30] + b"TEST" + good[lo + 34:]
    seeds["bad-local-method-differs.asice"] = patch(good, local_of(good, "test.txt") + 8, "<H", 0)
    stored = simple(compress=S)
    soff = central_of(stored, "test.txt")
    seeds["bad-stored-sizes-differ.asice"] = patch(stored, soff + 24, "<I", len(TEXT) + 8)
    eocd = good.rfind(b"PK\x05\x06")
    seeds["bad-eocd-count-lie.asice"] = patch(patch(good, eocd + 8, "<H", 900), eocd + 10, "<H", 900)
    seeds["bad-eocd-cd-offset.asice"] = patch(good, eocd + 16, "<I", len(good) + 100)
    seeds["bad-multivolume.asice"] = patch(good, eocd + 4, "<H", 1)
    z64 = raw_container()
    loc = z64.rfind(b"PK\x06\x07")
    z64e = z64.rfind(b"PK\x06\x06")
    seeds["bad-zip64-locator-offset.asice"] = patch(z64, loc + 8, "<Q", 0xFFFFFFFF00)
    seeds["bad-zip64-end-signature.asice"] = patch(z64, z64e, "<I", 0x06064B51)
    seeds["bad-zip64-entry-count.asice"] = patch(z64, z64e + 32, "<Q", 1 << 40)
    seeds["bad-zip64-cd-offset.asice"] = patch(z64, z64e + 48, "<Q", 1 << 33)
    zc = central_of(z64, "test.txt")
    seeds["bad-zip64-extra-short.asice"] = patch(z64, zc + 46 + len("test.txt") + 2, "<H", 8)
    seeds["bad-zip64-size-lie.asice"] = patch(z64, zc + 46 + len("test.txt") + 4, "<Q", 1 << 32)
    # Deflate data that inflates to more than declared (a small zip bomb) and garbage deflate data.
    bomb = simple(name="bomb.bin", data=bytes(60000), mt="application/octet-stream")
    boff = central_of(bomb, "bomb.bin")
    seeds["bad-bomb-undeclared.asice"] = patch(bomb, boff + 24, "<I", 1000)
    body = lo + 30 + len("test.txt")
    seeds["bad-deflate-garbage.asice"] = good[:body] + bytes([0xFF] * 4) + good[body + 4:]
    return seeds


def manifest_seeds():
    seeds = {}
    seeds["valid-basic.xml"] = manifest([("test.txt", "text/plain")])
    seeds["valid-empty.xml"] = manifest([])
    seeds["valid-asics.xml"] = manifest([("doc.pdf", "application/pdf")], root_type=ASICS)
    seeds["bad-unprefixed-attributes.xml"] = manifest([("test.txt", "text/plain")], prefix=None)
    seeds["valid-default-ns.xml"] = manifest([("test.txt", "text/plain")]).replace(b"<manifest:manifest", b"<manifest").replace(
        b"</manifest:manifest>", b"</manifest>").replace(b"<manifest:file-entry", b"<file-entry").replace(
        b"xmlns:manifest=", b"xmlns=\"%s\" xmlns:manifest=" % NS.encode())
    seeds["valid-other-prefix.xml"] = manifest([("a b.txt", "text/plain")], prefix="m")
    seeds["valid-many.xml"] = manifest([(f"dir{i % 3}/file{i}.bin", "application/octet-stream") for i in range(40)])
    seeds["valid-dir-entry.xml"] = manifest([("folder/", ""), ("folder/x.txt", "text/plain")])
    seeds["valid-unicode.xml"] = manifest([("öäüõ.txt", "text/plain"), ("&amp;&lt;&#x20AC;.txt", "text/plain")])
    seeds["valid-comments-cdata.xml"] = (
        f'<?xml version="1.0"?>\n<!-- c --><manifest:manifest xmlns:manifest="{NS}">'
        f'<manifest:file-entry manifest:full-path="/" manifest:media-type="{ASICE}"><![CDATA[x]]></manifest:file-entry>'
        f'<?pi data?><other xmlns="urn:x"/><manifest:file-entry manifest:full-path="t" manifest:media-type="a/b"/>'
        f"</manifest:manifest>").encode()
    seeds["valid-no-decl.xml"] = manifest([("t.txt", "text/plain")]).split(b"\n", 1)[1]
    seeds["bad-no-root-entry.xml"] = manifest([("t.txt", "text/plain")], root_type=None)
    seeds["bad-two-root-entries.xml"] = manifest([("/", ASICE)])
    seeds["bad-duplicate.xml"] = manifest([("t.txt", "text/plain"), ("t.txt", "text/plain")])
    seeds["bad-no-media-type.xml"] = manifest([("t.txt", "x")]).replace(b' manifest:media-type="x"', b"")
    seeds["bad-no-full-path.xml"] = manifest([("t.txt", "x")]).replace(b' manifest:full-path="t.txt"', b"")
    seeds["bad-empty-full-path.xml"] = manifest([("", "text/plain")])
    seeds["bad-wrong-namespace.xml"] = manifest([("t.txt", "text/plain")]).replace(b"opendocument", b"opendokument")
    seeds["bad-wrong-root.xml"] = f'<?xml version="1.0"?><x:files xmlns:x="{NS}"/>'.encode()
    seeds["bad-empty.xml"] = b""
    seeds["bad-not-xml.xml"] = b"PK\x03\x04 this is not xml"
    seeds["bad-utf16.xml"] = manifest([("t.txt", "text/plain")]).decode().replace("UTF-8", "UTF-16").encode("utf-16")
    seeds["valid-latin1-decl.xml"] = manifest([("t\xe4.txt", "text/plain")]).decode().replace("UTF-8", "ISO-8859-1").encode("latin-1")
    seeds["bad-doctype.xml"] = b'<?xml version="1.0"?>\n<!DOCTYPE manifest>\n' + manifest([]).split(b"\n", 1)[1]
    seeds["bad-xxe.xml"] = (b'<?xml version="1.0"?>\n<!DOCTYPE m [<!ENTITY x SYSTEM "file:///etc/passwd">]>\n'
                            + manifest([("&x;", "text/plain")]).split(b"\n", 1)[1])
    seeds["bad-xxe-dtd.xml"] = (b'<?xml version="1.0"?>\n<!DOCTYPE m SYSTEM "xxe-sentinel-dtd.dtd">\n'
                                + manifest([]).split(b"\n", 1)[1])
    seeds["bad-entity-no-doctype.xml"] = manifest([("&undefined;", "text/plain")])
    seeds["bad-unclosed.xml"] = manifest([("t.txt", "text/plain")]).replace(b"</manifest:manifest>", b"")
    seeds["bad-deep-nesting.xml"] = (f'<manifest:manifest xmlns:manifest="{NS}">'.encode()
                                     + b"<a>" * 300 + b"</a>" * 300 + b"</manifest:manifest>")
    full = manifest([("test.txt", "text/plain"), ("other.bin", "application/octet-stream")])
    for n in (1, 10, 45, 100, 160, 250, len(full) - 3):
        seeds[f"truncated-{n}.xml"] = full[:n]
    return seeds


def reference_shapes():
    """The container shapes of the reference implementation's test corpus, written here."""
    token = b"\x30\x82\x07\xd8\x06\x09\x2a\x86\x48\x86\xf7\x0d\x01\x07\x02" + bytes(range(256)) * 2  # a CMS SignedData start
    ddoc = (b'<?xml version="1.0" encoding="UTF-8"?>\n<SignedDoc format="DIGIDOC-XML" version="1.3" '
            b'xmlns="http://www.sk.ee/DigiDoc/v1.3.0#">\n<DataFile ContentType="EMBEDDED_BASE64" Filename="test1.txt" '
            b'Id="D0" MimeType="file" Size="5">MTIzNAo=\n</DataFile>\n</SignedDoc>\n')
    payload = b"1234\n"
    zips = {}
    zips["shape-subfolder.asice"] = simple(name="folder/test1.txt", data=payload, compress=S)
    zips["shape-dot-dot.asice"] = simple(name="folder/../test1.txt", data=payload, compress=S)
    zips["shape-dot.asice"] = simple(name=".", data=payload, compress=S)
    zips["shape-empty-full-path.asice"] = container(
        [("META-INF/manifest.xml", manifest([("", "text/plain")]), S), ("empty.txt", payload, S)])
    zips["shape-signed.asice"] = container(
        [("META-INF/manifest.xml", manifest([("test.txt", "text/plain")]), D), ("test.txt", payload, S),
         ("META-INF/signatures0.xml", signature_seeds()["asicfs-lt-signatures0.xml"], D)])
    zips["shape-file-media-type.asice"] = container(
        [("META-INF/manifest.xml", manifest([("test1.txt", "file")]), D), ("test1.txt", payload, D),
         ("META-INF/signatures0.xml", signature_seeds()["variant-time-mark.xml"], D)])
    zips["shape-timestamp.asics"] = container([("test1.txt", payload, S), ("META-INF/timestamp.tst", token, D)], mimetype=ASICS)
    zips["shape-timestamp-meta.asics"] = container(
        [("test1.txt", payload, S), ("META-INF/", b"", S),
         ("META-INF/manifest.xml", manifest([("test1.txt", "application/octet-stream")], root_type=ASICS), D),
         ("META-INF/timestamp.tst", token, D)], mimetype=ASICS)
    zips["shape-timestamp-ddoc.asics"] = container([("ddoc_for_testing.ddoc", ddoc, S), ("META-INF/timestamp.tst", token, D)],
                                                   mimetype=ASICS)
    zips["shape-timestamp-empty.asics"] = container(
        [("emptyFile.ddoc", b"", S), ("META-INF/", b"", S),
         ("META-INF/manifest.xml", manifest([("emptyFile.ddoc", "application/octet-stream")]), D),
         ("META-INF/timestamp.tst", token, D)], mimetype=ASICS)
    zips["shape-asice-mimetype.asics"] = container(
        [("test1.txt", payload, S), ("META-INF/", b"", S), ("META-INF/timestamp.tst", token, D)])
    zips["shape-subfolder.asics"] = container([("folder/test1.txt", payload, S), ("META-INF/timestamp.tst", b"timestamp", S)],
                                              mimetype=ASICS)
    return zips


def bomb(name, root, use):
    lines = ['<?xml version="1.0" encoding="UTF-8"?>', f"<!DOCTYPE {root} [", f' <!ENTITY {name}0 "lol">']
    lines += [f' <!ENTITY {name}{level} "' + f"&{name}{level - 1};" * 10 + '">' for level in range(1, 10)]
    lines += ["]>", use(f"&{name}9;")]
    return ("\n".join(lines) + "\n").encode()


def xml_bombs():
    return {
        "xml-bomb-attr.xml": bomb("ent", "manifest:manifest", lambda ref: (
            f'<manifest:manifest xmlns:manifest="{NS}"><manifest:file-entry manifest:full-path="/" manifest:media-type="{ASICE}"/>'
            f'<manifest:file-entry manifest:full-path="test.txt" manifest:media-type="text/plain" x="{ref}"/></manifest:manifest>')),
        "xml-bomb-cont.xml": bomb("lol", "lolz", lambda ref: f"<lolz>{ref}</lolz>"),
    }


def signature_seeds():
    """asicfs's LT signature, and variants of it in the shapes the reference's corpus has."""
    with open(os.path.join(SEEDS, "asicfs-lt-signatures0.xml"), "rb") as f:
        lt = f.read()
    text = lt.decode()
    seeds = {"asicfs-lt-signatures0.xml": lt}
    # Key substitution: in KeyInfo another certificate (the issuing CA's, from CertificateValues)
    # than the one whose key made the signature value.
    certificate = re.search(r"<ds:X509Certificate>([^<]+)</ds:X509Certificate>", text).group(1)
    other = re.search(r"<xades:EncapsulatedX509Certificate[^>]*>([^<]+)<", text).group(1)
    seeds["variant-key-substituted.xml"] = text.replace(certificate, other, 1).encode()
    # A BDOC time-mark (EPES): a signature policy, no signature time-stamp.
    policy = ('<xades:SignaturePolicyIdentifier><xades:SignaturePolicyId><xades:SigPolicyId><xades:Identifier Qualifier="OIDAsURN">'
              "urn:oid:1.3.6.1.4.1.10015.1000.3.2.1</xades:Identifier></xades:SigPolicyId><xades:SigPolicyHash>"
              '<ds:DigestMethod Algorithm="http://www.w3.org/2001/04/xmlenc#sha256"></ds:DigestMethod>'
              "<ds:DigestValue>7pudpH4eXlguSZY2e/pNbKzGsq+fu//woYL1SZFws1A=</ds:DigestValue></xades:SigPolicyHash>"
              "<xades:SigPolicyQualifiers><xades:SigPolicyQualifier><xades:SPURI>https://www.sk.ee/repository/bdoc-spec21.pdf"
              "</xades:SPURI></xades:SigPolicyQualifier></xades:SigPolicyQualifiers></xades:SignaturePolicyId></xades:SignaturePolicyIdentifier>")
    time_mark = text.replace("</xades:SignedSignatureProperties>", policy + "</xades:SignedSignatureProperties>", 1)
    time_mark = re.sub(r"<xades:SignatureTimeStamp .*?</xades:SignatureTimeStamp>", "", time_mark, count=1)
    seeds["variant-time-mark.xml"] = time_mark.encode()
    # LTA: an archive time-stamp after the validation data.
    stamp = re.search(r"<xades:EncapsulatedTimeStamp>([^<]+)</xades:EncapsulatedTimeStamp>", text).group(1)
    archive = ('<xadesv141:ArchiveTimeStamp xmlns:xadesv141="http://uri.etsi.org/01903/v1.4.1#" Id="S0-A0">'
               '<ds:CanonicalizationMethod Algorithm="http://www.w3.org/2006/12/xml-c14n11"></ds:CanonicalizationMethod>'
               f"<xades:EncapsulatedTimeStamp>{stamp}</xades:EncapsulatedTimeStamp></xadesv141:ArchiveTimeStamp>")
    seeds["variant-lta.xml"] = text.replace("</xades:UnsignedSignatureProperties>", archive + "</xades:UnsignedSignatureProperties>", 1).encode()
    # Two signatures in one document, and one with no unsigned properties (BES).
    signature = re.search(r"<ds:Signature .*</ds:Signature>", text, re.S).group(0)
    seeds["variant-two.xml"] = text.replace(signature, signature + signature.replace('Id="S0', 'Id="S1').replace("#S0", "#S1"), 1).encode()
    seeds["variant-bes.xml"] = re.sub(r"<xades:UnsignedProperties>.*</xades:UnsignedProperties>", "", text, count=1, flags=re.S).encode()
    return seeds


def cdoc1_seeds():
    """CDOC 1.x documents (the payload random bytes: the reader decodes, it does not decrypt)
    and DDOCs, with the payload's base64 in the shapes writers use and that XML allows."""
    import base64
    import random
    rng = random.Random(33)
    enc, ds = "http://www.w3.org/2001/04/xmlenc#", "http://www.w3.org/2000/09/xmldsig#"

    def lines(data, width):
        text = base64.b64encode(data).decode()
        return "\n".join(text[i:i + width] for i in range(0, len(text), width)) if width else text

    def cdoc(payload_text, fmt="ENCDOC-XML|1.1", mime="application/octet-stream"):
        cert = base64.b64encode(bytes(rng.randrange(256) for _ in range(120))).decode()
        return ('<?xml version="1.0" encoding="UTF-8"?>\n'
                f'<denc:EncryptedData xmlns:denc="{enc}" MimeType="{mime}"><denc:EncryptionMethod Algorithm="{enc}aes256-gcm"/>'
                f'<ds:KeyInfo xmlns:ds="{ds}"><denc:EncryptedKey Recipient="R"><denc:EncryptionMethod Algorithm="{enc}rsa-1_5"/>'
                f'<ds:KeyInfo><ds:X509Data><ds:X509Certificate>{cert}</ds:X509Certificate></ds:X509Data></ds:KeyInfo>'
                '<denc:CipherData><denc:CipherValue>AAEC</denc:CipherValue></denc:CipherData></denc:EncryptedKey></ds:KeyInfo>'
                f'<denc:CipherData><denc:CipherValue>{payload_text}</denc:CipherValue></denc:CipherData>'
                f'<denc:EncryptionProperties><denc:EncryptionProperty Name="DocumentFormat">{fmt}</denc:EncryptionProperty>'
                '<denc:EncryptionProperty Name="Filename">x.bin</denc:EncryptionProperty></denc:EncryptionProperties>'
                '</denc:EncryptedData>\n').encode()

    payload = bytes(rng.randrange(256) for _ in range(3000))
    seeds = {
        "cdoc-lines64.xml": cdoc(lines(payload, 64)),
        "cdoc-lines76-crlf.xml": cdoc(lines(payload, 76).replace("\n", "\r\n")),
        "cdoc-one-line.xml": cdoc(lines(payload, 0)),
        "cdoc-padding.xml": cdoc(lines(payload[:3001], 64)),
        "cdoc-reference.xml": cdoc("&#65;" + lines(payload, 64)[1:]),
        "cdoc-comment-cdata.xml": cdoc(lines(payload, 64)[:100] + "<!-- c -->" + "<![CDATA[" + lines(payload, 64)[100:200] + "]]>" + lines(payload, 64)[200:]),
        "cdoc-bad-byte.xml": cdoc(lines(payload, 64)[:500] + "*" + lines(payload, 64)[500:]),
        "cdoc-entity.xml": cdoc("&x;" + lines(payload, 64)),
        "cdoc-empty.xml": cdoc(""),
        "cdoc-truncated.xml": cdoc(lines(payload, 64))[:2000],
    }
    ns = "http://www.sk.ee/DigiDoc/v1.3.0#"
    files = [("a.txt", b"first file\n"), ("p\u00e4ev.bin", bytes(rng.randrange(256) for _ in range(2000))), ("empty", b"")]
    entries = "".join(f'<DataFile ContentType="EMBEDDED_BASE64" Filename="{name}" Id="D{i}">{lines(data, 64)}</DataFile>\n'
                      for i, (name, data) in enumerate(files))
    head = f'<?xml version="1.0" encoding="UTF-8"?>\n<SignedDoc xmlns="{ns}" format="DIGIDOC-XML" version="1.3">\n'
    seeds["ddoc-three.xml"] = (head + entries + "</SignedDoc>\n").encode()
    seeds["ddoc-no-name.xml"] = (head + '<DataFile Id="D0">eA==</DataFile></SignedDoc>').encode()
    seeds["ddoc-reference.xml"] = (head + '<DataFile Filename="r">&#101;A==</DataFile></SignedDoc>').encode()
    seeds["ddoc-twice.xml"] = (head + '<DataFile Filename="t">eA==</DataFile><DataFile Filename="t">eA==</DataFile></SignedDoc>').encode()
    return seeds


def write_seeds(directory, seeds):
    shutil.rmtree(directory, ignore_errors=True)   # no seed of an older version stays behind
    os.makedirs(directory)
    for name, data in sorted(seeds.items()):
        assert len(data) <= LIMIT, f"{name} is {len(data)} bytes"
        with open(os.path.join(directory, name), "wb") as f:
            f.write(data)


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "corpus")
    warnings.filterwarnings("ignore", "Duplicate name")  # bad-duplicate.asice is meant to have one
    zips = zip_seeds()
    zips.update(reference_shapes())
    manifests = manifest_seeds()
    manifests.update(xml_bombs())
    # The manifests inside the shaped containers are manifest seeds too.
    for name, data in reference_shapes().items():
        with zipfile.ZipFile(io.BytesIO(data)) as z:
            if "META-INF/manifest.xml" in z.namelist():
                manifests[os.path.splitext(name)[0] + ".xml"] = z.read("META-INF/manifest.xml")
    signatures = signature_seeds()
    cdoc1 = cdoc1_seeds()
    write_seeds(os.path.join(out, "cdoc1"), cdoc1)
    write_seeds(os.path.join(out, "zip"), zips)
    write_seeds(os.path.join(out, "manifest"), manifests)
    write_seeds(os.path.join(out, "signature"), signatures)
    print(f"{len(zips)} zip, {len(manifests)} manifest, {len(signatures)} signature and {len(cdoc1)} cdoc1 seeds in {out}")


if __name__ == "__main__":
    main()
