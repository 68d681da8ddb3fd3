"""Independent check of an asicfs-signed container with pyasice (PyPI) plus our own digest checks.

pyasice verifies the SignatureValue, the time-stamp and the OCSP response but not the
references (see the platform notes), so this script also recomputes every data-file digest
(percent-decoded URIs), the SignedProperties digest and the signing-certificate digest.
Usage: pyasice_check.py CONTAINER   (prints one line per check, exits non-zero on any failure)
"""
import base64
import hashlib
import sys
import urllib.parse
import zipfile

from lxml import etree
from pyasice import Container

DS = "http://www.w3.org/2000/09/xmldsig#"
XADES = "http://uri.etsi.org/01903/v1.3.2#"
NS = {"ds": DS, "xades": XADES}


def check(path):
    container = Container.open(path)
    names = list(container.data_file_names)
    print("pyasice opened:", ", ".join(names))
    container.verify_signatures()
    count = 0
    for signature in container.iter_signatures():
        signature.verify_ts_response()
        signature.verify_ocsp_response()
        count += 1
    print("pyasice verified signatures, time-stamps and OCSP:", count)

    with zipfile.ZipFile(path) as archive:
        for entry in archive.namelist():
            if not (entry.startswith("META-INF/") and "signatures" in entry):
                continue
            root = etree.fromstring(archive.read(entry))
            for signature in root.findall("ds:Signature", NS):
                for reference in signature.findall("ds:SignedInfo/ds:Reference", NS):
                    uri = reference.get("URI")
                    expected = base64.b64decode(reference.findtext("ds:DigestValue", namespaces=NS))
                    if reference.get("Type") == "http://uri.etsi.org/01903#SignedProperties":
                        target = signature.find(".//xades:SignedProperties[@Id='%s']" % uri[1:], NS)
                        actual = hashlib.sha256(etree.tostring(target, method="c14n")).digest()
                        label = "SignedProperties"
                    else:
                        name = urllib.parse.unquote(uri)
                        actual = hashlib.sha256(archive.read(name)).digest()
                        label = name
                    if actual != expected:
                        raise SystemExit("digest mismatch: %s" % label)
                    print("digest ok:", label)
                cert = base64.b64decode(signature.findtext(".//ds:X509Certificate", namespaces=NS))
                cert_digest = base64.b64decode(signature.findtext(
                    ".//xades:SigningCertificate/xades:Cert/xades:CertDigest/ds:DigestValue", namespaces=NS))
                if hashlib.sha256(cert).digest() != cert_digest:
                    raise SystemExit("signing certificate digest mismatch")
                print("digest ok: signing certificate")
    print("ALL OK")


if __name__ == "__main__":
    check(sys.argv[1])
