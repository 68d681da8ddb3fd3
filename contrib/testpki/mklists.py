#!/usr/bin/env python3
"""Makes, from nothing, a test list of trusted lists and the trusted list it points to, for a PKI made by mkpki.sh.

  mklists.py PKI-DIR OUT-DIR [--tl-url URL] [--ca-qualifier NAME]

OUT-DIR/tl-mp-test-EE.xml is the list of lists (type EUlistofthelists, territory EE), signed by
lotl-signer; it points to OUT-DIR/EE_T.xml (type EUgeneric, territory EE_T; TL-URL, default
https://asicfs.invalid/test-TL/EE_T.xml), signed by tl-signer. The trusted list has one provider
with three granted services: the issuing CA (CA/QC, qualifiers QCWithQSCD and QCStatement for
nonRepudiation certificates, for e-signatures), the OCSP responder (Certstatus/OCSP/QC) and the
TSA (TSA/QTST). --ca-qualifier QCNoQSCD (or another SvcInfoExt name) replaces QCWithQSCD: the
shape of a CA whose keys are not on a qualified device.

Both lists are enveloped-signed with xmlsec1 (RSA-SHA256, with XAdES SignedProperties naming the
signer by digest), as trusted lists are. Needs only python3, openssl and xmlsec1.
"""
import argparse
import base64
import datetime
import hashlib
import os
import subprocess
import tempfile
from xml.sax.saxutils import escape

TSL = "http://uri.etsi.org/02231/v2#"
SVC = "http://uri.etsi.org/TrstSvc/Svctype/"
EXT = "http://uri.etsi.org/TrstSvc/TrustedList/SvcInfoExt/"
TSLTYPE = "http://uri.etsi.org/TrstSvc/TrustedList/TSLType/"
GRANTED = "http://uri.etsi.org/TrstSvc/TrustedList/Svcstatus/granted"


def der(pem_path):
    return subprocess.run(["openssl", "x509", "-in", pem_path, "-outform", "DER"], check=True, capture_output=True).stdout


def b64(data):
    return base64.b64encode(data).decode()


def stamp(value):
    return value.strftime("%Y-%m-%dT%H:%M:%SZ")


NOW = datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0)


def scheme_information(tsl_type, territory, pointers=""):
    return f"""<SchemeInformation>
<TSLVersionIdentifier>5</TSLVersionIdentifier>
<TSLSequenceNumber>1</TSLSequenceNumber>
<TSLType>{TSLTYPE}{tsl_type}</TSLType>
<SchemeOperatorName><Name xml:lang="en">asicfs test scheme operator</Name></SchemeOperatorName>
<SchemeName><Name xml:lang="en">{territory}: test list made by asicfs contrib/testpki/mklists.py</Name></SchemeName>
<SchemeTerritory>{territory}</SchemeTerritory>
<HistoricalInformationPeriod>65535</HistoricalInformationPeriod>{pointers}
<ListIssueDateTime>{stamp(NOW)}</ListIssueDateTime>
<NextUpdate><dateTime>{stamp(NOW + datetime.timedelta(days=365))}</dateTime></NextUpdate>
</SchemeInformation>"""


def pointer(tl_url, tl_signer):
    return f"""
<PointersToOtherTSL><OtherTSLPointer>
<ServiceDigitalIdentities><ServiceDigitalIdentity><DigitalId><X509Certificate>{b64(tl_signer)}</X509Certificate></DigitalId></ServiceDigitalIdentity></ServiceDigitalIdentities>
<TSLLocation>{escape(tl_url)}</TSLLocation>
<AdditionalInformation>
<OtherInformation><TSLType>{TSLTYPE}EUgeneric</TSLType></OtherInformation>
<OtherInformation><SchemeTerritory>EE_T</SchemeTerritory></OtherInformation>
<OtherInformation><tslx:MimeType xmlns:tslx="http://uri.etsi.org/02231/v2/additionaltypes#">application/vnd.etsi.tsl+xml</tslx:MimeType></OtherInformation>
</AdditionalInformation>
</OtherTSLPointer></PointersToOtherTSL>"""


def service(kind, name, cert, extensions=""):
    return f"""<TSPService><ServiceInformation>
<ServiceTypeIdentifier>{SVC}{kind}</ServiceTypeIdentifier>
<ServiceName><Name xml:lang="en">{escape(name)}</Name></ServiceName>
<ServiceDigitalIdentity><DigitalId><X509Certificate>{b64(cert)}</X509Certificate></DigitalId></ServiceDigitalIdentity>
<ServiceStatus>{GRANTED}</ServiceStatus>
<StatusStartingTime>2016-07-01T00:00:00Z</StatusStartingTime>{extensions}
</ServiceInformation></TSPService>"""


def ca_extensions(device_qualifier):
    def element(qualifier, bits, assertion):
        usage = "".join(f'<ecc:KeyUsage><ecc:KeyUsageBit name="{bit}">true</ecc:KeyUsageBit></ecc:KeyUsage>' for bit in bits)
        return (f'<ecc:QualificationElement><ecc:Qualifiers><ecc:Qualifier uri="{EXT}{qualifier}"/></ecc:Qualifiers>'
                f'<ecc:CriteriaList assert="{assertion}">{usage}</ecc:CriteriaList></ecc:QualificationElement>')
    ecc = "http://uri.etsi.org/TrstSvc/SvcInfoExt/eSigDir-1999-93-EC-TrustedList/#"
    return f"""
<ServiceInformationExtensions>
<Extension Critical="true"><ecc:Qualifications xmlns:ecc="{ecc}">{element(device_qualifier, ["digitalSignature", "nonRepudiation"], "atLeastOne")}{element("QCStatement", ["nonRepudiation"], "all")}</ecc:Qualifications></Extension>
<Extension Critical="true"><AdditionalServiceInformation><URI xml:lang="en">{EXT}ForeSignatures</URI></AdditionalServiceInformation></Extension>
</ServiceInformationExtensions>"""


def signature_template(list_id, signer):
    """An xmlsec1 template: the list by Id with the enveloped transform, and XAdES SignedProperties."""
    ds = "http://www.w3.org/2000/09/xmldsig#"
    sha256 = "http://www.w3.org/2001/04/xmlenc#sha256"
    return f"""<ds:Signature xmlns:ds="{ds}" Id="S-{list_id}"><ds:SignedInfo>
<ds:CanonicalizationMethod Algorithm="http://www.w3.org/2001/10/xml-exc-c14n#"/>
<ds:SignatureMethod Algorithm="http://www.w3.org/2001/04/xmldsig-more#rsa-sha256"/>
<ds:Reference URI="#{list_id}"><ds:Transforms><ds:Transform Algorithm="{ds}enveloped-signature"/><ds:Transform Algorithm="http://www.w3.org/2001/10/xml-exc-c14n#"/></ds:Transforms><ds:DigestMethod Algorithm="{sha256}"/><ds:DigestValue/></ds:Reference>
<ds:Reference Type="http://uri.etsi.org/01903#SignedProperties" URI="#SP-{list_id}"><ds:Transforms><ds:Transform Algorithm="http://www.w3.org/2001/10/xml-exc-c14n#"/></ds:Transforms><ds:DigestMethod Algorithm="{sha256}"/><ds:DigestValue/></ds:Reference>
</ds:SignedInfo><ds:SignatureValue/>
<ds:KeyInfo><ds:X509Data><ds:X509Certificate>{b64(signer)}</ds:X509Certificate></ds:X509Data></ds:KeyInfo>
<ds:Object><xades:QualifyingProperties xmlns:xades="http://uri.etsi.org/01903/v1.3.2#" Target="#S-{list_id}"><xades:SignedProperties Id="SP-{list_id}"><xades:SignedSignatureProperties>
<xades:SigningTime>{stamp(NOW)}</xades:SigningTime>
<xades:SigningCertificateV2><xades:Cert><xades:CertDigest><ds:DigestMethod Algorithm="{sha256}"/><ds:DigestValue>{b64(hashlib.sha256(signer).digest())}</ds:DigestValue></xades:CertDigest></xades:Cert></xades:SigningCertificateV2>
</xades:SignedSignatureProperties></xades:SignedProperties></xades:QualifyingProperties></ds:Object>
</ds:Signature>"""


def write_signed(list_id, body, pki, signer_name, out_path):
    signer_pem = os.path.join(pki, signer_name + ".pem")
    document = (f'<?xml version="1.0" encoding="UTF-8"?>\n<TrustServiceStatusList xmlns="{TSL}" Id="{list_id}" '
                f'TSLTag="http://uri.etsi.org/19612/TSLTag">\n{body}\n{signature_template(list_id, der(signer_pem))}</TrustServiceStatusList>\n')
    with tempfile.NamedTemporaryFile("w", suffix=".xml", delete=False, encoding="utf-8") as template:
        template.write(document)
    try:
        subprocess.run(["xmlsec1", "--sign", "--id-attr:Id", "TrustServiceStatusList", "--id-attr:Id", "SignedProperties",
                        "--privkey-pem", os.path.join(pki, signer_name + ".key") + "," + signer_pem,
                        "--output", out_path, template.name], check=True, capture_output=True)
    finally:
        os.unlink(template.name)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("pki")
    parser.add_argument("out")
    parser.add_argument("--tl-url", default="https://asicfs.invalid/test-TL/EE_T.xml")
    parser.add_argument("--ca-qualifier", default="QCWithQSCD")
    arguments = parser.parse_args()
    pki = arguments.pki
    os.makedirs(arguments.out, exist_ok=True)

    services = (service("CA/QC", "TEST of ESTEID-LIKE 2025", der(os.path.join(pki, "issuing.pem")), ca_extensions(arguments.ca_qualifier))
                + service("Certstatus/OCSP/QC", "TEST of asicfs OCSP RESPONDER 2025", der(os.path.join(pki, "ocsp.pem")))
                + service("TSA/QTST", "TEST of asicfs TSA 2025", der(os.path.join(pki, "tsa.pem"))))
    provider = f"""<TrustServiceProviderList><TrustServiceProvider>
<TSPInformation><TSPName><Name xml:lang="en">asicfs test provider</Name></TSPName></TSPInformation>
<TSPServices>{services}</TSPServices>
</TrustServiceProvider></TrustServiceProviderList>"""
    write_signed("TEST-EE", scheme_information("EUgeneric", "EE_T") + provider, pki, "tl-signer",
                 os.path.join(arguments.out, "EE_T.xml"))
    write_signed("TEST-LOTL", scheme_information("EUlistofthelists", "EE", pointer(arguments.tl_url, der(os.path.join(pki, "tl-signer.pem")))),
                 pki, "lotl-signer", os.path.join(arguments.out, "tl-mp-test-EE.xml"))


if __name__ == "__main__":
    main()
