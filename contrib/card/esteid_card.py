#!/usr/bin/python3
"""Virtual Estonian ID card for pcscd's vpcd reader (one card per process). See README.md.

  esteid_card.py --port N [--host 127.0.0.1] --kind idemia|thales [--t0]
                 [--contactless --can DIGITS]
                 --sign-cert PEM --sign-key PEM --auth-cert PEM --auth-key PEM
                 [--surname S --given-names G --personal-code C --document-number D
                  --expiry "DD MM YYYY" --sex X --citizenship X --birth "DD MM YYYY PLC"
                  --issuance X --permit-type X --note LINE (up to 5)]
                 --state FILE [--pull-on INS_HEX[,N]] [--log FILE]

Exits when vpcd closes the connection or on SIGTERM/SIGINT; exiting = card removed."""

import argparse
import os
import signal
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from cryptography import x509
from cryptography.x509.oid import NameOID

import vpcd
from cardbase import PinStore, load_cert_der, load_key
from contactless import ContactlessFrontend
from esteid_idemia import IdemiaCard
from esteid_thales import ThalesCard
from iso7816 import Apdu, CardError, sw_bytes
import pace


def personal_defaults(cert_der):
    """Fills the personal-data file from the signing certificate when not given: names and
    code from the subject, expiry from notAfter, sex and birth date from the personal code."""
    cert = x509.load_der_x509_certificate(cert_der)
    subj = cert.subject

    def attr(oid):
        v = subj.get_attributes_for_oid(oid)
        return v[0].value if v else ""

    code = attr(NameOID.SERIAL_NUMBER)
    code = code.split("-", 1)[1] if "-" in code else code
    out = {"surname": attr(NameOID.SURNAME), "given_names": attr(NameOID.GIVEN_NAME),
           "personal_code": code, "citizenship": "EST", "document_number": "AB0123456",
           "expiry": cert.not_valid_after.strftime("%d %m %Y")}
    if len(code) == 11 and code.isdigit() and code[0] in "123456":
        century = {"1": 1800, "2": 1800, "3": 1900, "4": 1900, "5": 2000, "6": 2000}[code[0]]
        out["sex"] = "M" if int(code[0]) % 2 else "N"
        out["birth"] = f"{code[5:7]} {code[3:5]} {century + int(code[1:3])} EST"
    return out


def main(argv=None):
    p = argparse.ArgumentParser(description="Virtual Estonian ID card for vpcd (pcscd).")
    p.add_argument("--port", type=int, required=True, help="vpcd reader port (reader 00 00 = CHANNELID)")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--kind", choices=["idemia", "thales"], default="idemia")
    p.add_argument("--t0", action="store_true", help="answer like a T=0 card (61xx / 6Cxx)")
    p.add_argument("--contactless", action="store_true", help="NFC card: PACE with the CAN, then SM")
    p.add_argument("--can", help="card access number for --contactless")
    for name in ("sign-cert", "sign-key", "auth-cert", "auth-key"):
        p.add_argument("--" + name, required=True)
    for name in ("surname", "given-names", "personal-code", "document-number", "expiry", "sex",
                 "citizenship", "birth", "issuance", "permit-type"):
        p.add_argument("--" + name)
    p.add_argument("--note", action="append", default=[], help="notes line (500B..500F), repeatable")
    p.add_argument("--state", required=True, help="JSON file with PINs and counters (created if missing)")
    p.add_argument("--pull-on", help="INS_HEX[,N]: close the connection on the N-th (default 1st) such command")
    p.add_argument("--log", help="append one line per APDU (headers and status words only)")
    p.add_argument("--atr", help="answer to reset (hex) instead of the card's own: another card, to clients")
    args = p.parse_args(argv)
    if args.contactless and not (args.can and args.can.isdigit()):
        p.error("--contactless needs --can DIGITS")

    logf = open(args.log, "a", buffering=1) if args.log else None

    def log(line):
        if logf:
            logf.write(line + "\n")

    pull_on = None
    if args.pull_on:
        ins, _, n = args.pull_on.partition(",")
        pull_on = (int(ins, 16), int(n or "1"))

    sign_cert = load_cert_der(args.sign_cert)
    personal = personal_defaults(sign_cert)
    for key in ("surname", "given_names", "personal_code", "document_number", "expiry", "sex",
                "citizenship", "birth", "issuance", "permit_type"):
        v = getattr(args, key)
        if v is not None:
            personal[key] = v
    for i, line in enumerate(args.note[:5], start=1):
        personal[f"notes{i}"] = line

    store = PinStore(args.state)
    cls = IdemiaCard if args.kind == "idemia" else ThalesCard
    card = cls(store, sign_cert, load_key(args.sign_key), load_cert_der(args.auth_cert),
               load_key(args.auth_key), personal,
               card_access=pace.cardaccess() if args.contactless else b"")

    if args.contactless:
        front = ContactlessFrontend(card, args.can, log)
        atr, handle, card_reset = front.atr, front.handle, front.reset
    else:
        def handle(raw):
            try:
                return card.process(Apdu.parse(raw)) + b"\x90\x00"
            except CardError as e:
                return sw_bytes(e.sw)
        atr, card_reset = card.atr, card.reset

    if args.atr:
        atr = bytes.fromhex(args.atr)

    if args.t0:
        t0 = vpcd.T0Transport(handle)
        handle = t0.handle

        def on_reset():
            t0.reset()
            card_reset()
    else:
        on_reset = card_reset

    def stop(signum, frame):
        raise SystemExit(0)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    sock = vpcd.connect(args.host, args.port)
    log(f"# {args.kind}{' contactless' if args.contactless else ''}{' T=0' if args.t0 else ''} "
        f"card inserted, ATR {atr.hex().upper()}")
    try:
        vpcd.serve(sock, atr, handle, on_reset, log, pull_on)
    finally:
        try:
            sock.close()
        except OSError:
            pass
        log("# card removed")


if __name__ == "__main__":
    main()
