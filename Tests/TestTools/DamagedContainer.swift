import Foundation

/// ASiC-E containers whose one data file is damaged in a known way, written by Python's zipfile
/// (an independent writer) and then changed in place, for the tests of every read path.
public enum DamagedContainer {
    public enum Damage: String, Sendable {
        /// Bytes overwritten in the middle of a deflate stream so that inflating it fails there.
        case corruptStream = "corrupt-stream"
        /// Bytes changed inside stored deflate blocks (compression level 0): the stream inflates
        /// without complaint to the right length, only the CRC-32 tells the bytes are wrong.
        case wrongBytes = "wrong-bytes"
        /// Bytes changed in an entry stored without compression.
        case wrongStoredBytes = "wrong-stored-bytes"
        /// Nothing changed: the same container, intact (for comparison).
        case none
    }

    /// Writes the container with one data file `name` of `size` text-like bytes, damaged as
    /// asked. Returns the offset (in the uncompressed data) from which the bytes are damaged
    /// (for `corruptStream`: from which inflating fails).
    @discardableResult
    public static func make(at path: String, damage: Damage, size: Int = 6 << 20, name: String = "big.txt") throws -> Int {
        let result = try Shell.python(script, [path, damage.rawValue, String(size), name])
        guard result.status == 0, let offset = Int(result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)) else {
            throw DamageError(description: "making a damaged container failed: \(result.stderr)")
        }
        return offset
    }

    /// Overwrites 32 bytes in the middle of the deflated entry `name` of an existing container
    /// (a signed one, say) where that makes inflating fail part-way.
    public static func corruptStream(of name: String, in path: String) throws {
        let result = try Shell.python("""
            import sys, zipfile, zlib, struct
            path, name = sys.argv[1], sys.argv[2]
            info = zipfile.ZipFile(path).getinfo(name)
            blob = bytearray(open(path, 'rb').read())
            n, m = struct.unpack('<HH', blob[info.header_offset + 26:info.header_offset + 30])
            start = info.header_offset + 30 + n + m
            for at in range(start + info.compress_size // 2, start + info.compress_size - 64, 997):
                changed = bytearray(blob)
                changed[at:at + 32] = bytes([0xFF] * 32)
                try:
                    zlib.decompressobj(-15).decompress(bytes(changed[start:start + info.compress_size]))
                except zlib.error:
                    open(path, 'wb').write(changed)
                    break
            else:
                sys.exit('no corrupting position')
            """, [path, name])
        guard result.status == 0 else { throw DamageError(description: "damaging \(name) failed: \(result.stderr)") }
    }

    public struct DamageError: Error, CustomStringConvertible {
        public let description: String
    }

    private static let script = """
        import sys, zipfile, zlib, random, struct
        path, damage, size, name = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
        rng = random.Random(7)
        words = [b'signature', b'container', b'digital', b'document', b'Tallinn', b'2026', b'OCSP', b'data']
        parts, total = [], 0
        while total < size:
            w = rng.choice(words) + (b'\\n' if rng.random() < 0.1 else b' ')
            parts.append(w); total += len(w)
        data = b''.join(parts)[:size]
        level = 0 if damage == 'wrong-bytes' else 6
        method = zipfile.ZIP_STORED if damage == 'wrong-stored-bytes' else zipfile.ZIP_DEFLATED
        manifest = ('<?xml version="1.0" encoding="UTF-8" standalone="no" ?>\\n'
                    '<manifest:manifest xmlns:manifest="urn:oasis:names:tc:opendocument:xmlns:manifest:1.0" manifest:version="1.2">\\n'
                    ' <manifest:file-entry manifest:full-path="/" manifest:media-type="application/vnd.etsi.asic-e+zip"/>\\n'
                    ' <manifest:file-entry manifest:full-path="%s" manifest:media-type="text/plain"/>\\n'
                    '</manifest:manifest>\\n') % name
        with zipfile.ZipFile(path, 'w') as z:
            z.writestr(zipfile.ZipInfo('mimetype'), 'application/vnd.etsi.asic-e+zip', compress_type=zipfile.ZIP_STORED)
            z.writestr('META-INF/manifest.xml', manifest, compress_type=zipfile.ZIP_DEFLATED)
            z.writestr(name, data, compress_type=method, compresslevel=level)
        with zipfile.ZipFile(path) as z:
            info = z.getinfo(name)
        blob = bytearray(open(path, 'rb').read())
        start = info.header_offset + 30 + struct.unpack('<HH', blob[info.header_offset + 26:info.header_offset + 30])[0] \\
            + struct.unpack('<HH', blob[info.header_offset + 26:info.header_offset + 30])[1]
        stream = bytes(blob[start:start + info.compress_size])
        def inflate(s):
            return zlib.decompressobj(-15).decompress(s)
        if damage == 'none':
            print(size); raise SystemExit(0)
        if damage == 'wrong-stored-bytes':
            at = len(stream) // 2
            changed = bytearray(stream)
            for i in range(32): changed[at + i] ^= 0x5A
            first = at
        elif damage == 'wrong-bytes':
            # In the middle of a stored block (5-byte header, then up to 65535 bytes).
            at = len(stream) // 2
            changed = bytearray(stream)
            for i in range(32): changed[at + i] ^= 0x5A
            out = inflate(bytes(changed))
            assert len(out) == size and out != data
            first = next(i for i in range(size) if out[i] != data[i])
        else:
            for at in range(len(stream) // 2, len(stream) - 64, 997):
                changed = bytearray(stream)
                changed[at:at + 32] = bytes([0xFF] * 32)
                d = zlib.decompressobj(-15)
                try:
                    out = d.decompress(bytes(changed))
                except zlib.error:
                    break
            else:
                raise SystemExit('no corrupting position found')
            # How far inflating gets before it fails (fed byte by byte from the damage on, so
            # that every byte zlib produces before it gives up is counted).
            d = zlib.decompressobj(-15)
            produced = len(d.decompress(bytes(changed[:at])))
            for i in range(at, len(changed)):
                try:
                    produced += len(d.decompress(bytes(changed[i:i + 1])))
                except zlib.error:
                    break
            first = produced
        blob[start:start + info.compress_size] = changed
        open(path, 'wb').write(blob)
        print(first)
        """
}
