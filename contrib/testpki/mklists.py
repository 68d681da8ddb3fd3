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

The lists are described here and written and signed by mktrustlist.py (enveloped XAdES with
xmlsec1). Needs only python3, openssl and xmlsec1.
"""
import argparse
import datetime
import os

import mktrustlist

TSLTYPE = "http://uri.etsi.org/TrstSvc/TrustedList/TSLType/"
SVC = "http://uri.etsi.org/TrstSvc/Svctype/"
EXT = "http://uri.etsi.org/TrstSvc/TrustedList/SvcInfoExt/"
GRANTED = "http://uri.etsi.org/TrstSvc/TrustedList/Svcstatus/granted"


def stamp(value):
    return value.strftime("%Y-%m-%dT%H:%M:%SZ")


NOW = datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0)


def scheme(tsl_type, territory, signer):
    """What both lists share: issued now, valid for a year, signed by `signer` (key and certificate)."""
    return {"territory": territory, "sequence": 1, "type": TSLTYPE + tsl_type,
            "operator": "asicfs test scheme operator",
            "schemeName": territory + ": test list made by asicfs contrib/testpki/mklists.py",
            "issued": stamp(NOW), "nextUpdate": stamp(NOW + datetime.timedelta(days=365)),
            "signer": {"certificate": signer + ".pem", "key": signer + ".key"}}


def service(kind, name, certificate, **extensions):
    granted = dict({"type": SVC + kind, "status": GRANTED, "start": "2016-07-01T00:00:00Z"}, **extensions)
    return {"name": name, "certificates": [certificate], "history": [granted]}


def ca_extensions(device_qualifier):
    """The CA's qualifiers: `device_qualifier` for signing keys, QCStatement for nonRepudiation ones; for e-signatures."""
    return {"qualifications": [
                {"qualifiers": [EXT + device_qualifier], "assert": "atLeastOne",
                 "keyUsages": [{"digitalSignature": True}, {"nonRepudiation": True}]},
                {"qualifiers": [EXT + "QCStatement"], "assert": "all", "keyUsages": [{"nonRepudiation": True}]}],
            "additionalInformation": [EXT + "ForeSignatures"]}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("pki")
    parser.add_argument("out")
    parser.add_argument("--tl-url", default="https://asicfs.invalid/test-TL/EE_T.xml")
    parser.add_argument("--ca-qualifier", default="QCWithQSCD")
    arguments = parser.parse_args()
    pki = arguments.pki
    os.makedirs(arguments.out, exist_ok=True)

    tl = scheme("EUgeneric", "EE_T", os.path.join(pki, "tl-signer"))
    tl["providers"] = [{"name": "asicfs test provider", "services": [
        service("CA/QC", "TEST of ESTEID-LIKE 2025", os.path.join(pki, "issuing.pem"), **ca_extensions(arguments.ca_qualifier)),
        service("Certstatus/OCSP/QC", "TEST of asicfs OCSP RESPONDER 2025", os.path.join(pki, "ocsp.pem")),
        service("TSA/QTST", "TEST of asicfs TSA 2025", os.path.join(pki, "tsa.pem"))]}]
    mktrustlist.write(tl, os.path.join(arguments.out, "EE_T.xml"))

    lotl = scheme("EUlistofthelists", "EE", os.path.join(pki, "lotl-signer"))
    lotl["pointers"] = [{"location": arguments.tl_url, "signers": [os.path.join(pki, "tl-signer.pem")],
                         "type": TSLTYPE + "EUgeneric", "territory": "EE_T", "mimeType": "application/vnd.etsi.tsl+xml"}]
    mktrustlist.write(lotl, os.path.join(arguments.out, "tl-mp-test-EE.xml"))


if __name__ == "__main__":
    main()
