#!/usr/bin/env python3
"""Prints the SHA-256 of what archive time-stamp N of a XAdES signature covers, computed
independently of asicfs (lxml's C14N, the libdigidocpp rule of EN 319 132-1 5.5.2): for each
ds:Reference in SignedInfo order the canonical SignedProperties or the data file's bytes, then
C14N of SignedInfo, SignatureValue and KeyInfo, then C14N of every UnsignedSignatureProperties
child before archive time-stamp N (all of them when N is the count: a new one).

usage: archive_timestamp_input.py CONTAINER SIGNATURE-FILE N
"""
import hashlib
import sys
import urllib.parse
import zipfile

from lxml import etree

NS = {"ds": "http://www.w3.org/2000/09/xmldsig#", "xades": "http://uri.etsi.org/01903/v1.3.2#"}
ATS = "{http://uri.etsi.org/01903/v1.4.1#}ArchiveTimeStamp"
SIGNED_PROPERTIES = "http://uri.etsi.org/01903#SignedProperties"


def c14n(element):
    # Canonical XML 1.0; for these documents (no xml:id, xml:base) the same bytes as 1.1.
    return etree.tostring(element, method="c14n")


def main(container, signature_file, wanted):
    archive = zipfile.ZipFile(container)
    parser = etree.XMLParser(resolve_entities=False, no_network=True)
    root = etree.fromstring(archive.read(signature_file), parser)
    signature = root if root.tag == "{%s}Signature" % NS["ds"] else root.find("ds:Signature", NS)
    digest = hashlib.sha256()
    for reference in signature.find("ds:SignedInfo", NS).findall("ds:Reference", NS):
        uri = reference.get("URI")
        if reference.get("Type") == SIGNED_PROPERTIES:
            digest.update(c14n(signature.xpath(".//*[@Id=$id]", id=uri[1:])[0]))
        else:
            digest.update(archive.read(urllib.parse.unquote(uri.lstrip("/"))))
    for name in ("ds:SignedInfo", "ds:SignatureValue", "ds:KeyInfo"):
        digest.update(c14n(signature.find(name, NS)))
    seen = 0
    for child in signature.find(".//xades:UnsignedSignatureProperties", NS):
        if not isinstance(child.tag, str):
            continue
        if child.tag == ATS:
            if seen == wanted:
                break
            seen += 1
        digest.update(c14n(child))
    print(digest.hexdigest())


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]))
