#!/usr/bin/env python3
"""Makes a test list of trusted lists and a trusted list that trust a test PKI made by mkpki.sh.

  mktl.py PKI-DIR LOTL-TEMPLATE TL-TEMPLATE OUT-DIR [TL-URL]

The templates are the Estonian test lists (tl-mp-test-EE.xml and EE_T.xml from open-eid/test-TL),
so the structure is one that libdigidocpp and asicfs read. The trusted list keeps one service
provider with three services, their certificates replaced by the test PKI's issuing CA
(CA/QC), OCSP responder (Certstatus/OCSP/QC) and TSA (TSA/QTST); the list of lists keeps the
pointer to it, now naming the test PKI's tl-signer and TL-URL (default ending in EE_T.xml, the
name under which both tools look for it beside the LOTL or in their cache). Both are signed
again with xmlsec1 (enveloped XAdES, as the originals): the TL by tl-signer, the LOTL by
lotl-signer. Needs lxml and xmlsec1. Writes OUT-DIR/tl-mp-test-EE.xml and OUT-DIR/EE_T.xml.
"""
import base64
import datetime
import hashlib
import os
import subprocess
import sys
import tempfile

from lxml import etree

TSL = "http://uri.etsi.org/02231/v2#"
DS = "http://www.w3.org/2000/09/xmldsig#"
XADES = "http://uri.etsi.org/01903/v1.3.2#"
NS = {"t": TSL, "ds": DS, "xades": XADES}
KEEP = {  # service name in the template -> (test PKI certificate, new name)
    "TEST of ESTEID2018": ("issuing.pem", "TEST of ESTEID-LIKE 2025"),
    "TEST of SK OCSP RESPONDER 2020": ("ocsp.pem", "TEST of asicfs OCSP RESPONDER 2025"),
    "DEMO SK TIMESTAMPING AUTHORITY 2020": ("tsa.pem", "TEST of asicfs TSA 2025"),
}


def der(pem_path):
    return subprocess.run(["openssl", "x509", "-in", pem_path, "-outform", "DER"], check=True, capture_output=True).stdout


def now():
    return datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0)


def stamp(value):
    return value.strftime("%Y-%m-%dT%H:%M:%SZ")


def refresh_scheme(root, sequence):
    info = root.find("t:SchemeInformation", NS)
    info.find("t:TSLSequenceNumber", NS).text = str(sequence)
    info.find("t:ListIssueDateTime", NS).text = stamp(now())
    info.find("t:NextUpdate/t:dateTime", NS).text = stamp(now() + datetime.timedelta(days=365))


def sign(root, signer_pem, signer_key, out_path):
    """Turns the template's ds:Signature into an xmlsec1 template for `signer`, then signs."""
    signature = root.find("ds:Signature", NS)
    cert = der(signer_pem)
    for value in signature.iter("{%s}DigestValue" % DS, "{%s}SignatureValue" % DS):
        value.text = ""
    signature.find("ds:KeyInfo/ds:X509Data/ds:X509Certificate", NS).text = base64.b64encode(cert).decode()
    properties = signature.find(".//xades:SignedSignatureProperties", NS)
    properties.find("xades:SigningTime", NS).text = stamp(now())
    cert_ref = properties.find(".//xades:Cert", NS)
    cert_ref.find("xades:CertDigest/ds:DigestValue", NS).text = base64.b64encode(hashlib.sha256(cert).digest()).decode()
    serial = cert_ref.find("xades:IssuerSerialV2", NS)
    if serial is not None:
        cert_ref.remove(serial)
    with tempfile.NamedTemporaryFile("wb", suffix=".xml", delete=False) as template:
        template.write(etree.tostring(root, xml_declaration=True, encoding="UTF-8", standalone=False))
    try:
        subprocess.run(["xmlsec1", "--sign", "--id-attr:Id", "TrustServiceStatusList", "--id-attr:Id", "SignedProperties",
                        "--privkey-pem", signer_key + "," + signer_pem, "--output", out_path, template.name],
                       check=True, capture_output=True)
    finally:
        os.unlink(template.name)


def main(pki, lotl_template, tl_template, out, tl_url):
    parser = etree.XMLParser(resolve_entities=False, no_network=True, remove_blank_text=False)
    tl = etree.parse(tl_template, parser).getroot()
    providers = tl.find("t:TrustServiceProviderList", NS)
    first = providers.find("t:TrustServiceProvider", NS)
    for provider in list(providers):
        if provider is not first:
            providers.remove(provider)
    services = first.find("t:TSPServices", NS)
    for service in list(services):
        information = service.find("t:ServiceInformation", NS)
        name = information.find("t:ServiceName/t:Name", NS).text
        match = next((key for key in KEEP if name.startswith(key)), None)
        if match is None:
            services.remove(service)
            continue
        cert_file, new_name = KEEP[match]
        information.find("t:ServiceName/t:Name", NS).text = new_name
        for history in service.findall("t:ServiceHistory", NS):
            service.remove(history)
        identity = information.find("t:ServiceDigitalIdentity", NS)
        for digital in list(identity):
            identity.remove(digital)
        digital = etree.SubElement(identity, "{%s}DigitalId" % TSL)
        etree.SubElement(digital, "{%s}X509Certificate" % TSL).text = base64.b64encode(der(os.path.join(pki, cert_file))).decode()
    if len(services) != len(KEEP):
        sys.exit("the template does not have the services %s" % ", ".join(KEEP))
    refresh_scheme(tl, 1000)
    sign(tl, os.path.join(pki, "tl-signer.pem"), os.path.join(pki, "tl-signer.key"), os.path.join(out, "EE_T.xml"))

    lotl = etree.parse(lotl_template, parser).getroot()
    pointers = lotl.find("t:SchemeInformation/t:PointersToOtherTSL", NS)
    for pointer in list(pointers):
        location = pointer.find("t:TSLLocation", NS).text
        if not location.endswith("/EE_T.xml"):
            pointers.remove(pointer)
            continue
        pointer.find("t:TSLLocation", NS).text = tl_url
        identities = pointer.find("t:ServiceDigitalIdentities", NS)
        for identity in list(identities)[1:]:
            identities.remove(identity)
        digital = identities.find("t:ServiceDigitalIdentity/t:DigitalId", NS)
        for child in list(digital):
            digital.remove(child)
        etree.SubElement(digital, "{%s}X509Certificate" % TSL).text = \
            base64.b64encode(der(os.path.join(pki, "tl-signer.pem"))).decode()
    if len(pointers) != 1:
        sys.exit("the LOTL template has no pointer to EE_T.xml")
    refresh_scheme(lotl, 1000)
    sign(lotl, os.path.join(pki, "lotl-signer.pem"), os.path.join(pki, "lotl-signer.key"),
         os.path.join(out, "tl-mp-test-EE.xml"))


if __name__ == "__main__":
    if len(sys.argv) < 5:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4],
         sys.argv[5] if len(sys.argv) > 5 else "https://asicfs.invalid/test-TL/EE_T.xml")
