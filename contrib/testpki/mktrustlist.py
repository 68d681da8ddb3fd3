#!/usr/bin/python3
"""Writes a test trusted list (ETSI TS 119 612) described in JSON and signs it with xmlsec1.

  mktrustlist.py SPEC.json OUT.xml

Built from the description alone (no template): a list of lists when it has pointers, a
national list when it has providers, or both. The signature is enveloped XAdES as real lists
carry it (exclusive c14n, RSA-SHA256, a reference to the whole list and one to the
SignedProperties, the signer's certificate in KeyInfo). Standard library and xmlsec1 only.

SPEC (times ISO 8601 UTC, certificates PEM file paths):
  {"territory": "EE_T", "sequence": 22, "type": TSLType URI, "operator": "...", "schemeName": "..." (optional),
   "issued": time, "nextUpdate": time, "signer": {"certificate": pem, "key": pem},
   "pointers": [{"location": URL, "signers": [pem...], "territory": "EE_T",
                 "mimeType": "application/vnd.etsi.tsl+xml", "type": TSLType URI}],
   "providers": [{"name": "...", "services": [{"name": "...", "certificates": [pem...],
      "history": [{"type": Svctype URI, "status": Svcstatus URI, "start": time,
                   "qualifications": [{"qualifiers": [URI...], "assert": "all",
                                       "keyUsages": [{"nonRepudiation": true}],
                                       "policySets": [["0.4.0.194112.1.2"]]}],
                   "additionalInformation": [URI...]}]}]}]}
A service's history is newest first: the first entry becomes ServiceInformation (its current
status), the rest ServiceHistoryInstance elements.

Other scripts build a description and call write(spec, out_path) (mklists.py does).
"""
import base64
import hashlib
import json
import os
import subprocess
import sys
import tempfile
from xml.sax.saxutils import escape, quoteattr

TSL = "http://uri.etsi.org/02231/v2#"
DS = "http://www.w3.org/2000/09/xmldsig#"
XADES = "http://uri.etsi.org/01903/v1.3.2#"
ECC = "http://uri.etsi.org/TrstSvc/SvcInfoExt/eSigDir-1999-93-EC-TrustedList/#"
ADDITIONAL = "http://uri.etsi.org/02231/v2/additionaltypes#"
EXC_C14N = "http://www.w3.org/2001/10/xml-exc-c14n#"
SHA256 = "http://www.w3.org/2001/04/xmlenc#sha256"


def der(pem_path):
    return subprocess.run(["openssl", "x509", "-in", pem_path, "-outform", "DER"], check=True,
                          capture_output=True).stdout


def b64(data):
    return base64.b64encode(data).decode()


def element(tag, text):
    return "<%s>%s</%s>" % (tag, escape(str(text)), tag.split()[0])


def digital_identities(pems, wrapper):
    ids = "".join("<DigitalId>%s</DigitalId>" % element("X509Certificate", b64(der(p))) for p in pems)
    return "<%s>%s</%s>" % (wrapper, ids, wrapper)


def qualification(spec):
    usages = "".join("<ecc:KeyUsage>%s</ecc:KeyUsage>" % "".join(
        "<ecc:KeyUsageBit name=%s>%s</ecc:KeyUsageBit>" % (quoteattr(bit), "true" if on else "false")
        for bit, on in usage.items()) for usage in spec.get("keyUsages", []))
    policies = "".join("<ecc:PolicySet>%s</ecc:PolicySet>" % "".join(
        "<ecc:PolicyIdentifier><xades:Identifier Qualifier=\"OIDAsURN\">urn:oid:%s</xades:Identifier>"
        "</ecc:PolicyIdentifier>" % escape(oid) for oid in policy_set) for policy_set in spec.get("policySets", []))
    qualifiers = "".join("<ecc:Qualifier uri=%s/>" % quoteattr(uri) for uri in spec["qualifiers"])
    return ("<ecc:QualificationElement><ecc:Qualifiers>%s</ecc:Qualifiers><ecc:CriteriaList assert=%s>%s%s"
            "</ecc:CriteriaList></ecc:QualificationElement>" % (qualifiers, quoteattr(spec.get("assert", "all")),
                                                                usages, policies))


def period(entry, tag, service_name, identities):
    parts = []
    if entry.get("qualifications"):
        parts.append("<Extension Critical=\"true\"><ecc:Qualifications>%s</ecc:Qualifications></Extension>"
                     % "".join(qualification(q) for q in entry["qualifications"]))
    # What the service is for, e.g. .../SvcInfoExt/ForeSignatures.
    parts += ["<Extension Critical=\"true\"><AdditionalServiceInformation>%s</AdditionalServiceInformation></Extension>"
              % element("URI xml:lang=\"en\"", uri) for uri in entry.get("additionalInformation", [])]
    extensions = "<ServiceInformationExtensions>%s</ServiceInformationExtensions>" % "".join(parts) if parts else ""
    return "<%s>%s%s%s%s%s%s</%s>" % (
        tag, element("ServiceTypeIdentifier", entry["type"]),
        "<ServiceName>%s</ServiceName>" % element("Name xml:lang=\"en\"", service_name), identities,
        element("ServiceStatus", entry["status"]), element("StatusStartingTime", entry["start"]), extensions, tag)


def service(spec):
    identities = digital_identities(spec["certificates"], "ServiceDigitalIdentity")
    history = spec["history"]
    current = period(history[0], "ServiceInformation", spec["name"], identities)
    older = "".join(period(entry, "ServiceHistoryInstance", spec["name"], identities) for entry in history[1:])
    return "<TSPService>%s%s</TSPService>" % (current, "<ServiceHistory>%s</ServiceHistory>" % older if older else "")


def provider(spec):
    return ("<TrustServiceProvider><TSPInformation><TSPName>%s</TSPName></TSPInformation><TSPServices>%s"
            "</TSPServices></TrustServiceProvider>" % (element("Name xml:lang=\"en\"", spec["name"]),
                                                       "".join(service(s) for s in spec["services"])))


def pointer(spec):
    information = "".join(
        "<OtherInformation>%s</OtherInformation>" % part for part in [
            element("TSLType", spec["type"]) if spec.get("type") else "",
            element("SchemeTerritory", spec["territory"]) if spec.get("territory") else "",
            element("tslx:MimeType", spec["mimeType"]) if spec.get("mimeType") else ""] if part)
    identities = "".join(digital_identities([pem], "ServiceDigitalIdentity") for pem in spec["signers"])
    return ("<OtherTSLPointer><ServiceDigitalIdentities>%s</ServiceDigitalIdentities>%s"
            "<AdditionalInformation>%s</AdditionalInformation></OtherTSLPointer>"
            % (identities, element("TSLLocation", spec["location"]), information))


def signature(spec):
    """An xmlsec1 template: the values are empty until xmlsec1 --sign fills them."""
    certificate = der(spec["signer"]["certificate"])
    return (
        "<ds:Signature Id=\"list-signature\"><ds:SignedInfo>"
        "<ds:CanonicalizationMethod Algorithm=\"%(c14n)s\"/>"
        "<ds:SignatureMethod Algorithm=\"http://www.w3.org/2001/04/xmldsig-more#rsa-sha256\"/>"
        "<ds:Reference Id=\"list-reference\" URI=\"\"><ds:Transforms>"
        "<ds:Transform Algorithm=\"http://www.w3.org/2000/09/xmldsig#enveloped-signature\"/>"
        "<ds:Transform Algorithm=\"%(c14n)s\"/></ds:Transforms>"
        "<ds:DigestMethod Algorithm=\"%(sha)s\"/><ds:DigestValue></ds:DigestValue></ds:Reference>"
        "<ds:Reference URI=\"#list-signed-properties\" Type=\"http://uri.etsi.org/01903#SignedProperties\">"
        "<ds:Transforms><ds:Transform Algorithm=\"%(c14n)s\"/></ds:Transforms>"
        "<ds:DigestMethod Algorithm=\"%(sha)s\"/><ds:DigestValue></ds:DigestValue></ds:Reference>"
        "</ds:SignedInfo><ds:SignatureValue></ds:SignatureValue>"
        "<ds:KeyInfo><ds:X509Data><ds:X509Certificate>%(cert)s</ds:X509Certificate></ds:X509Data></ds:KeyInfo>"
        "<ds:Object><xades:QualifyingProperties Target=\"#list-signature\">"
        "<xades:SignedProperties Id=\"list-signed-properties\"><xades:SignedSignatureProperties>"
        "<xades:SigningTime>%(time)s</xades:SigningTime><xades:SigningCertificate><xades:Cert><xades:CertDigest>"
        "<ds:DigestMethod Algorithm=\"%(sha)s\"/><ds:DigestValue>%(digest)s</ds:DigestValue></xades:CertDigest>"
        "</xades:Cert></xades:SigningCertificate></xades:SignedSignatureProperties></xades:SignedProperties>"
        "</xades:QualifyingProperties></ds:Object></ds:Signature>"
        % {"c14n": EXC_C14N, "sha": SHA256, "cert": b64(certificate), "time": escape(spec["issued"]),
           "digest": b64(hashlib.sha256(certificate).digest())})


def document(spec):
    pointers = "".join(pointer(p) for p in spec.get("pointers", []))
    providers = "".join(provider(p) for p in spec.get("providers", []))
    scheme = "".join([
        element("TSLVersionIdentifier", 5), element("TSLSequenceNumber", spec["sequence"]),
        element("TSLType", spec["type"]),
        "<SchemeOperatorName>%s</SchemeOperatorName>" % element("Name xml:lang=\"en\"", spec["operator"]),
        "<SchemeName>%s</SchemeName>" % element("Name xml:lang=\"en\"", spec["schemeName"]) if spec.get("schemeName") else "",
        element("SchemeTerritory", spec["territory"]),
        "<PointersToOtherTSL>%s</PointersToOtherTSL>" % pointers if pointers else "",
        element("ListIssueDateTime", spec["issued"]),
        "<NextUpdate>%s</NextUpdate>" % element("dateTime", spec["nextUpdate"])])
    return ("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
            "<TrustServiceStatusList xmlns=\"%s\" xmlns:ds=\"%s\" xmlns:xades=\"%s\" xmlns:ecc=\"%s\" xmlns:tslx=\"%s\" "
            "Id=\"test-list\" TSLTag=\"http://uri.etsi.org/19612/TSLTag\">\n<SchemeInformation>%s</SchemeInformation>\n"
            "%s\n%s</TrustServiceStatusList>\n"
            % (TSL, DS, XADES, ECC, ADDITIONAL, scheme,
               "<TrustServiceProviderList>%s</TrustServiceProviderList>" % providers if providers else "",
               signature(spec)))


def write(spec, out_path):
    """Writes the list `spec` describes to out_path, signed with its signer's key."""
    with tempfile.NamedTemporaryFile("w", suffix=".xml", delete=False, encoding="utf-8") as template:
        template.write(document(spec))
    try:
        signer = spec["signer"]
        subprocess.run(["xmlsec1", "--sign", "--id-attr:Id", "SignedProperties", "--privkey-pem",
                        signer["key"] + "," + signer["certificate"], "--output", out_path, template.name],
                       check=True, capture_output=True)
    except subprocess.CalledProcessError as error:
        sys.exit("xmlsec1 could not sign the list: " + error.stderr.decode(errors="replace"))
    finally:
        os.unlink(template.name)


def main(spec_path, out_path):
    with open(spec_path) as f:
        write(json.load(f), out_path)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
