import Foundation

/// An independent CDOC 1.1 writer and reader in Python (`cryptography` + ElementTree), written
/// from the format notes, not from asicfs: files asicfs writes must open in it, and files it
/// writes must open in asicfs. `python3 PEER write OUT CERT.pem… -- FILE…`, `python3 PEER read CDOC KEY.pem DIR`.
public enum CDOC1Peer {
    /// Writes the script into `folder` and returns its path.
    public static func install(in folder: URL) throws -> String {
        let path = folder.appendingPathComponent("cdoc1_peer.py").path
        try Data(script.utf8).write(to: URL(fileURLWithPath: path))
        return path
    }

    static let script = #"""
# An independent CDOC 1.1 writer and reader (spec cdoc.md §1), written with Python's
# cryptography and ElementTree only: asicfs's files must open here and its files must open in asicfs.
import base64, os, sys, xml.etree.ElementTree as ET
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, padding, rsa
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.concatkdf import ConcatKDFHash
from cryptography.hazmat.primitives.keywrap import aes_key_wrap, aes_key_unwrap

ENC = "http://www.w3.org/2001/04/xmlenc#"
DS = "http://www.w3.org/2000/09/xmldsig#"
XENC11 = "http://www.w3.org/2009/xmlenc11#"
DSIG11 = "http://www.w3.org/2009/xmldsig11#"
CURVES = {"secp256r1": ("urn:oid:1.2.840.10045.3.1.7", hashes.SHA256()), "secp384r1": ("urn:oid:1.3.132.0.34", hashes.SHA384())}
FORMAT = b"ENCDOC-XML|1.1"

def b64(data): return base64.b64encode(data).decode()

def write(out, certs, files):
    fmk = os.urandom(32)
    if len(files) == 1:
        payload, mime, filename = open(files[0], "rb").read(), "application/octet-stream", os.path.basename(files[0])
    else:
        parts = ['<SignedDoc xmlns="http://www.sk.ee/DigiDoc/v1.3.0#" format="DIGIDOC-XML" version="1.3">']
        for i, f in enumerate(files):
            data = open(f, "rb").read()
            parts.append('<DataFile ContentType="EMBEDDED_BASE64" Filename="%s" Id="D%d" MimeType="application/octet-stream" Size="%d">%s</DataFile>'
                         % (os.path.basename(f), i, len(data), b64(data)))
        parts.append("</SignedDoc>")
        payload, mime, filename = "".join(parts).encode(), "http://www.sk.ee/DigiDoc/v1.3.0/digidoc.xsd", "tmp.ddoc"
    iv = os.urandom(12)
    sealed = iv + AESGCM(fmk).encrypt(iv, payload, None)
    keys = []
    for path in certs:
        cert = x509.load_pem_x509_certificate(open(path, "rb").read())
        der = cert.public_bytes(serialization.Encoding.DER)
        cn = cert.subject.get_attributes_for_oid(x509.NameOID.COMMON_NAME)[0].value
        key = cert.public_key()
        certxml = '<ds:X509Data><ds:X509Certificate>%s</ds:X509Certificate></ds:X509Data>' % b64(der)
        if isinstance(key, rsa.RSAPublicKey):
            keys.append('<denc:EncryptedKey Recipient="%s"><denc:EncryptionMethod Algorithm="%srsa-1_5"/><ds:KeyInfo>%s</ds:KeyInfo>'
                        '<denc:CipherData><denc:CipherValue>%s</denc:CipherValue></denc:CipherData></denc:EncryptedKey>'
                        % (cn, ENC, certxml, b64(key.encrypt(fmk, padding.PKCS1v15()))))
        else:
            uri, digest = CURVES[key.curve.name]
            eph = ec.generate_private_key(key.curve)
            point = eph.public_key().public_bytes(serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint)
            z = eph.exchange(ec.ECDH(), key)
            kek = ConcatKDFHash(digest, 32, FORMAT + point + der).derive(z)
            keys.append('<denc:EncryptedKey Recipient="%s"><denc:EncryptionMethod Algorithm="%skw-aes256"/><ds:KeyInfo>'
                        '<denc:AgreementMethod Algorithm="%sECDH-ES"><xenc11:KeyDerivationMethod Algorithm="%sConcatKDF">'
                        '<xenc11:ConcatKDFParams AlgorithmID="00%s" PartyUInfo="00%s" PartyVInfo="00%s">'
                        '<ds:DigestMethod Algorithm="%ssha%d"/></xenc11:ConcatKDFParams></xenc11:KeyDerivationMethod>'
                        '<denc:OriginatorKeyInfo><ds:KeyValue><dsig11:ECKeyValue><dsig11:NamedCurve URI="%s"/>'
                        '<dsig11:PublicKey>%s</dsig11:PublicKey></dsig11:ECKeyValue></ds:KeyValue></denc:OriginatorKeyInfo>'
                        '<denc:RecipientKeyInfo>%s</denc:RecipientKeyInfo></denc:AgreementMethod></ds:KeyInfo>'
                        '<denc:CipherData><denc:CipherValue>%s</denc:CipherValue></denc:CipherData></denc:EncryptedKey>'
                        % (cn, ENC, XENC11, XENC11, FORMAT.hex(), point.hex(), der.hex(), ENC, digest.digest_size * 8, uri,
                           b64(point), certxml, b64(aes_key_wrap(kek, fmk))))
    props = ['<denc:EncryptionProperty Name="DocumentFormat">ENCDOC-XML|1.1</denc:EncryptionProperty>',
             '<denc:EncryptionProperty Name="Filename">%s</denc:EncryptionProperty>' % filename]
    for i, f in enumerate(files):
        props.append('<denc:EncryptionProperty Name="orig_file">%s|%d|application/octet-stream|D%d</denc:EncryptionProperty>'
                     % (os.path.basename(f), os.path.getsize(f), i))
    text = ('<?xml version="1.0" encoding="UTF-8"?><denc:EncryptedData xmlns:denc="%s" xmlns:ds="%s" xmlns:xenc11="%s" '
            'xmlns:dsig11="%s" MimeType="%s"><denc:EncryptionMethod Algorithm="%saes256-gcm"/><ds:KeyInfo>%s</ds:KeyInfo>'
            '<denc:CipherData><denc:CipherValue>%s</denc:CipherValue></denc:CipherData><denc:EncryptionProperties>%s'
            '</denc:EncryptionProperties></denc:EncryptedData>'
            % (ENC, DS, XENC11, DSIG11, mime, XENC11, "".join(keys), b64(sealed), "".join(props)))
    open(out, "w").write(text)

def read(path, keyfile, outdir):
    key = serialization.load_pem_private_key(open(keyfile, "rb").read(), None)
    mine = key.public_key().public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
    root = ET.parse(path).getroot()
    q = lambda ns, name: "{%s}%s" % (ns, name)
    fmk = None
    for ek in root.find(q(DS, "KeyInfo")).findall(q(ENC, "EncryptedKey")):
        cert_el = ek.find(".//" + q(DS, "X509Certificate"))
        cert = x509.load_der_x509_certificate(base64.b64decode("".join(cert_el.text.split())))
        spki = cert.public_key().public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
        if spki != mine: continue
        wrapped = base64.b64decode("".join(ek.find(q(ENC, "CipherData")).find(q(ENC, "CipherValue")).text.split()))
        agreement = ek.find(".//" + q(ENC, "AgreementMethod"))
        if agreement is None:
            fmk = key.decrypt(wrapped, padding.PKCS1v15())
        else:
            params = agreement.find(".//" + q(XENC11, "ConcatKDFParams"))
            algid, partyu, partyv = (bytes.fromhex(params.get(n))[1:] for n in ("AlgorithmID", "PartyUInfo", "PartyVInfo"))
            digest = {"sha256": hashes.SHA256(), "sha384": hashes.SHA384(), "sha512": hashes.SHA512()}[
                params.find(q(DS, "DigestMethod")).get("Algorithm").split("#")[1]]
            point = base64.b64decode("".join(agreement.find(".//" + q(DSIG11, "PublicKey")).text.split()))
            sender = ec.EllipticCurvePublicKey.from_encoded_point(key.curve, point)
            kek = ConcatKDFHash(digest, 32, algid + partyu + partyv).derive(key.exchange(ec.ECDH(), sender))
            fmk = aes_key_unwrap(kek, wrapped)
    if fmk is None: sys.exit("no recipient matches the key")
    payload = base64.b64decode("".join(root.find(q(ENC, "CipherData")).find(q(ENC, "CipherValue")).text.split()))
    plain = AESGCM(fmk).decrypt(payload[:12], payload[12:], None)
    props = {p.get("Name"): p.text for p in root.iter(q(ENC, "EncryptionProperty"))}
    if root.get("MimeType", "").startswith("http://www.sk.ee/DigiDoc"):
        for df in ET.fromstring(plain).iter("{http://www.sk.ee/DigiDoc/v1.3.0#}DataFile"):
            open(os.path.join(outdir, df.get("Filename")), "wb").write(base64.b64decode("".join(df.text.split())))
    else:
        open(os.path.join(outdir, props["Filename"]), "wb").write(plain)

if __name__ == "__main__":
    if sys.argv[1] == "write":
        out, rest = sys.argv[2], sys.argv[3:]
        split = rest.index("--")
        write(out, rest[:split], rest[split + 1:])
    else:
        read(sys.argv[2], sys.argv[3], sys.argv[4])
"""#
}

/// Keys and self-signed certificates for encryption tests, made with the openssl command line.
public struct CDOCTestKey {
    public enum Kind: String, CaseIterable, Sendable { case rsa = "RSA", p256 = "P-256", p384 = "P-384" }
    public let kind: Kind
    /// PEM private key (PKCS#8, unencrypted) and PEM certificate.
    public let keyPath: String
    public let certificatePath: String

    public static func make(_ kind: Kind, in folder: URL, name: String) throws -> CDOCTestKey {
        let key = folder.appendingPathComponent("\(name).key").path
        let certificate = folder.appendingPathComponent("\(name).pem").path
        let algorithm: [String] = switch kind {
        case .rsa: ["-newkey", "rsa:2048", "-addext", "keyUsage=critical,digitalSignature,keyEncipherment"]
        case .p256: ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-addext", "keyUsage=critical,digitalSignature,keyAgreement"]
        case .p384: ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-384", "-addext", "keyUsage=critical,digitalSignature,keyAgreement"]
        }
        let made = try Shell.run("/usr/bin/openssl", ["req", "-x509"] + algorithm + ["-nodes", "-keyout", key, "-out", certificate,
                                                     "-subj", "/CN=\(name)/O=asicfs tests", "-days", "30"])
        guard made.status == 0 else { throw ShellError("openssl req failed: \(made.stderr)") }
        return CDOCTestKey(kind: kind, keyPath: key, certificatePath: certificate)
    }

    /// A second certificate for the same key (a re-issued one), named `name`.
    public func reissued(name: String, in folder: URL) throws -> CDOCTestKey {
        let certificate = folder.appendingPathComponent("\(name).pem").path
        let made = try Shell.run("/usr/bin/openssl", ["req", "-x509", "-key", keyPath, "-out", certificate,
                                                     "-subj", "/CN=\(name)/O=asicfs tests", "-days", "30"])
        guard made.status == 0 else { throw ShellError("openssl req failed: \(made.stderr)") }
        return CDOCTestKey(kind: kind, keyPath: keyPath, certificatePath: certificate)
    }

    /// The key and certificate as a PKCS#12 file with `passphrase`.
    public func pkcs12(at path: String, passphrase: String) throws {
        let made = try Shell.run("/usr/bin/openssl", ["pkcs12", "-export", "-inkey", keyPath, "-in", certificatePath, "-out", path,
                                                     "-passout", "pass:\(passphrase)"])
        guard made.status == 0 else { throw ShellError("openssl pkcs12 failed: \(made.stderr)") }
    }
}
