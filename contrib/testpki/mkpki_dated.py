#!/usr/bin/python3
"""Makes a test PKI like mkpki.sh's, with the validity of every certificate chosen.

  mkpki_dated.py DIR CA-NOT-BEFORE SIGNER-NOT-BEFORE [OCSP-URL]

Trust-list scenarios need times that fall before, between and after the moments of a signature:
the signer certificate issued at SIGNER-NOT-BEFORE (long before its time-stamp, which the loopback
TSA makes now), the CAs, the OCSP responder and the TSA valid from CA-NOT-BEFORE (ISO 8601 UTC,
e.g. 2024-01-02T03:04:05Z). mkpki.sh cannot backdate (openssl x509 -days starts now), so this uses
Python's cryptography (Debian's python3-cryptography).

Made, in mkpki.sh's file layout so that tsa_ocsp_server.py serves it unchanged (/tsa, /ocsp):
  root          "TEST of asicfs Root CA 2025" (self-signed)
  issuing       "TEST of ESTEID-LIKE 2025", issued by root: the signer's CA
  signer        nonRepudiation, qcStatements QcCompliance + QcSSCD, one policy, AIA OCSP-URL;
                signer.p12 (passphrase test1234, with issuing.pem)
  ocsp          OCSP responder (OCSPSigning, ocsp-nocheck), issued by root as SK's were
  tsa           TSA (critical timeStamping), issued by root; pki.cnf holds its openssl ts section
  lotl-signer, tl-signer   self-signed RSA signers of test lists (mktrustlist.py)
  index.txt (the signer good), chain.pem (issuing then root), tsaserial
CAs, responder and TSA are valid 4000 days from CA-NOT-BEFORE, the signer 1000 days.
Every key is generated on the spot; nothing here is a real identity.
"""
import datetime
import os
import subprocess
import sys

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID, ObjectIdentifier

QC_STATEMENTS = ObjectIdentifier("1.3.6.1.5.5.7.1.3")
SIGNER_POLICY = "1.3.6.1.4.1.51361.1.1.1"


def parse_time(text):
    return datetime.datetime.strptime(text, "%Y-%m-%dT%H:%M:%SZ")


def name(*parts):
    return x509.Name([x509.NameAttribute(oid, value) for oid, value in parts])


def der_oid(dotted):
    """DER of an OBJECT IDENTIFIER (for the hand-built qcStatements value)."""
    numbers = [int(n) for n in dotted.split(".")]
    body = bytes([40 * numbers[0] + numbers[1]])
    for number in numbers[2:]:
        chunk = [number & 0x7F]
        number >>= 7
        while number:
            chunk.insert(0, 0x80 | (number & 0x7F))
            number >>= 7
        body += bytes(chunk)
    return bytes([0x06, len(body)]) + body


def qc_statements(*oids):
    """qcStatements: a SEQUENCE of QCStatement SEQUENCEs holding just the statement id."""
    statements = b"".join(bytes([0x30, len(der_oid(o))]) + der_oid(o) for o in oids)
    return bytes([0x30, len(statements)]) + statements


class Maker:
    def __init__(self, folder):
        self.folder = folder

    def path(self, file):
        return os.path.join(self.folder, file)

    def save_key(self, label, key):
        with open(self.path(label + ".key"), "wb") as f:
            f.write(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                      serialization.NoEncryption()))

    def certificate(self, label, key, subject, issuer_name, issuer_key, serial, start, days, extensions,
                    issuer_certificate=None):
        builder = (x509.CertificateBuilder().subject_name(subject).issuer_name(issuer_name)
                   .public_key(key.public_key()).serial_number(serial)
                   .not_valid_before(start).not_valid_after(start + datetime.timedelta(days=days)))
        builder = builder.add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
        if issuer_certificate is not None:
            builder = builder.add_extension(
                x509.AuthorityKeyIdentifier.from_issuer_public_key(issuer_certificate.public_key()), critical=False)
        for extension, critical in extensions:
            builder = builder.add_extension(extension, critical=critical)
        certificate = builder.sign(issuer_key, hashes.SHA256() if not isinstance(issuer_key, ec.EllipticCurvePrivateKey)
                                   or issuer_key.curve.key_size < 384 else hashes.SHA384())
        self.save_key(label, key)
        with open(self.path(label + ".pem"), "wb") as f:
            f.write(certificate.public_bytes(serialization.Encoding.PEM))
        return certificate


def usage(**bits):
    names = ["digital_signature", "content_commitment", "key_encipherment", "data_encipherment", "key_agreement",
             "key_cert_sign", "crl_sign", "encipher_only", "decipher_only"]
    return x509.KeyUsage(**{n: bits.get(n, False) for n in names})


def main(folder, ca_start, signer_start, ocsp_url):
    os.makedirs(folder, exist_ok=True)
    make = Maker(folder)
    ca_days, signer_days = 4000, 1000
    country, org = (NameOID.COUNTRY_NAME, "EE"), (NameOID.ORGANIZATION_NAME, "asicfs test")

    root_key = ec.generate_private_key(ec.SECP384R1())
    root_name = name(country, org, (NameOID.COMMON_NAME, "TEST of asicfs Root CA 2025"))
    ca = [(x509.BasicConstraints(ca=True, path_length=None), True), (usage(key_cert_sign=True, crl_sign=True), True)]
    root = make.certificate("root", root_key, root_name, root_name, root_key, 1, ca_start, ca_days, ca)

    issuing_key = ec.generate_private_key(ec.SECP384R1())
    issuing_name = name(country, org, (NameOID.COMMON_NAME, "TEST of ESTEID-LIKE 2025"))
    issuing = make.certificate("issuing", issuing_key, issuing_name, root_name, root_key, 2, ca_start, ca_days,
                               [(x509.BasicConstraints(ca=True, path_length=0), True),
                                (usage(key_cert_sign=True, crl_sign=True), True)], root)

    signer_key = ec.generate_private_key(ec.SECP384R1())
    signer_name = name((NameOID.COUNTRY_NAME, "EE"), (NameOID.SURNAME, "JÕEORG"), (NameOID.GIVEN_NAME, "JAAK-KRISTJAN"),
                       (NameOID.SERIAL_NUMBER, "PNOEE-38001085718"),
                       (NameOID.COMMON_NAME, "JÕEORG,JAAK-KRISTJAN,38001085718"))
    signer_extensions = [
        (x509.BasicConstraints(ca=False, path_length=None), True),
        (usage(content_commitment=True), True),
        (x509.CertificatePolicies([x509.PolicyInformation(ObjectIdentifier(SIGNER_POLICY), None)]), False),
        (x509.UnrecognizedExtension(QC_STATEMENTS, qc_statements("0.4.0.1862.1.1", "0.4.0.1862.1.4")), False),
    ]
    if ocsp_url:
        signer_extensions.append((x509.AuthorityInformationAccess([x509.AccessDescription(
            x509.oid.AuthorityInformationAccessOID.OCSP, x509.UniformResourceIdentifier(ocsp_url))]), False))
    signer = make.certificate("signer", signer_key, signer_name, issuing_name, issuing_key, 4096, signer_start,
                              signer_days, signer_extensions, issuing)

    ocsp_key = ec.generate_private_key(ec.SECP256R1())
    make.certificate("ocsp", ocsp_key, name(country, org, (NameOID.COMMON_NAME, "TEST of asicfs OCSP RESPONDER 2025")),
                     root_name, root_key, 8192, ca_start, ca_days,
                     [(x509.BasicConstraints(ca=False, path_length=None), True), (usage(digital_signature=True), True),
                      (x509.ExtendedKeyUsage([ExtendedKeyUsageOID.OCSP_SIGNING]), True), (x509.OCSPNoCheck(), False)],
                     root)
    tsa_key = ec.generate_private_key(ec.SECP256R1())
    make.certificate("tsa", tsa_key, name(country, org, (NameOID.COMMON_NAME, "TEST of asicfs TSA 2025")),
                     root_name, root_key, 12288, ca_start, ca_days,
                     [(x509.BasicConstraints(ca=False, path_length=None), True),
                      (usage(digital_signature=True, content_commitment=True), True),
                      (x509.ExtendedKeyUsage([ExtendedKeyUsageOID.TIME_STAMPING]), True)], root)
    for label in ("lotl-signer", "tl-signer"):
        key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        subject = name((NameOID.COUNTRY_NAME, "EE"), (NameOID.COMMON_NAME, "TEST of asicfs " + label))
        make.certificate(label, key, subject, subject, key, 20000 + len(label), ca_start, ca_days, [])

    with open(make.path("chain.pem"), "wb") as f:
        f.write(issuing.public_bytes(serialization.Encoding.PEM) + root.public_bytes(serialization.Encoding.PEM))
    with open(make.path("tsaserial"), "w") as f:
        f.write("01\n")
    with open(make.path("pki.cnf"), "w") as f:
        f.write("[ tsa ]\ndefault_tsa = tsa_config1\n[ tsa_config1 ]\ndir = .\nserial = ./tsaserial\n"
                "crypto_device = builtin\nsigner_cert = ./tsa.pem\ncerts = ./tsa.pem\nsigner_key = ./tsa.key\n"
                "signer_digest = sha256\ndefault_policy = 1.2.3.4.1\ndigests = sha256, sha384, sha512\n"
                "accuracy = secs:1\nordering = yes\ntsa_name = no\ness_cert_id_chain = no\ness_cert_id_alg = sha256\n")
    # openssl-ca database for `openssl ocsp -index`: the signer is good.
    expiry = signer.not_valid_after.strftime("%y%m%d%H%M%SZ")
    with open(make.path("index.txt"), "w") as f:
        f.write("V\t%s\t\t%X\tunknown\t/CN=signer\n" % (expiry, signer.serial_number))
    subprocess.run(["openssl", "pkcs12", "-export", "-inkey", make.path("signer.key"), "-in", make.path("signer.pem"),
                    "-certfile", make.path("issuing.pem"), "-passout", "pass:test1234", "-name", "signer",
                    "-out", make.path("signer.p12")], check=True, capture_output=True)


if __name__ == "__main__":
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    main(sys.argv[1], parse_time(sys.argv[2]), parse_time(sys.argv[3]), sys.argv[4] if len(sys.argv) > 4 else None)
