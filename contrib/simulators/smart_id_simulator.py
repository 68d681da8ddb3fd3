#!/usr/bin/env python3
"""Smart-ID RP API v2 and v3 simulator on loopback HTTPS, for asicfs tests and the demo.

v3 (signing: notification and device-link/QR flows, RSASSA-PSS) is smart_id_v3.py, under
/smart-id-rp/v3/ and /v3/, with the demo's scan endpoint POST /mock/device-link; the v2 part:

Serves, under /smart-id-rp/v2/ (the DEMO layout) and /v2/ (the LIVE one):
  POST certificatechoice/{etsi|document}/...   POST signature/{etsi|document}/...
  POST authentication/{etsi|document}/...      GET  session/{sessionID}[?timeoutMs=N]
with the checks SK's v2 documentation describes (SK-EID/smart-id-documentation, tag api-v2):
relying-party UUID (401) and name (<= 32 bytes, else 400), required members and hash length (400), certificate level
and capabilities (403), unknown person or document (404), idempotent retries (an identical body
within 15 s gets the same sessionID; a different nonce makes it a new request), long polls clamped
to [1000, 120000] ms, sessions gone (404) 5 minutes after they complete, the first interaction the
account's app supports reported as interactionFlowUsed, and on OK an RSA PKCS#1 v1.5 signature over
DigestInfo(hash) made with the key of a certificate the test PKI issued (QUALIFIED, RSA-2048,
registered "good" with its OCSP responder). The accounts are SK's demo accounts plus test-only ones
for what the demo cannot show; contrib/simulators/README.md lists them.

Usage: smart_id_simulator.py --pki DIR [--port 0] [--folder DIR] [--confirm-after 0.5]
                             [--relying-party-uuid UUID]... [--relying-party-name NAME]
                             [--scheme-name smart-id-demo] [--device-link-base URL] [--qr-max-age 1.5]
                             [--log FILE] [--exit-with-parent]
       smart_id_simulator.py scan --port N --cert PEM --document PNOEE-... LINK   (the phone scans a QR)
Prints "PORT n" and "CERT path" (the TLS certificate clients pin) once listening.
Test and demo use only: nothing here is a real identity or the real service.
"""
import argparse
import base64
import hashlib
import json
import os
import re
import sys
import threading
import time
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import simcommon  # noqa: E402
import smart_id_v3  # noqa: E402

DEMO_UUID = "00000000-0000-4000-8000-000000000000"
HASH_LENGTHS = {"SHA256": 32, "SHA384": 48, "SHA512": 64}
LEVELS = ("ADVANCED", "QUALIFIED", "QSCD")
TEXT_FIELDS = {"displayTextAndPIN": "displayText60", "verificationCodeChoice": "displayText60",
               "confirmationMessage": "displayText200", "confirmationMessageAndVerificationCodeChoice": "displayText200"}
TEXT_LIMITS = {"displayText60": 60, "displayText200": 200}
ALL_INTERACTIONS = tuple(TEXT_FIELDS)
IDEMPOTENCY_SECONDS = 15
KEEP_COMPLETED_SECONDS = 300
CERTIFICATE_SERIAL_BASE = 0x51D000  # this simulator's range in the test CA's index.txt


class Account:
    """One Smart-ID account. `outcome` is "OK", an endResult, an HTTP status (int) or a misbehaviour
    of the test-only accounts; `at` is the session kind where a failing endResult happens."""

    def __init__(self, code, outcome="OK", countries=("EE",), suffix="MOCK-Q", at="signature",
                 interactions=ALL_INTERACTIONS, label=None):
        self.code, self.outcome, self.countries, self.at = code, outcome, countries, at
        self.interactions = interactions
        self.label = label or (outcome if isinstance(outcome, str) else "HTTP%d" % outcome)
        self.documents = {country: "PNO%s-%s-%s" % (country, code, suffix) for country in countries}


# SK's demo accounts (test_accounts.adoc, 2025-05-08; EE and LT share the codes, LV from the spec's
# example). The demo's notes do not say at which step a failing account fails; here every one but
# USER_REFUSED_CERT_CHOICE lets the certificate choice succeed and fails the signature.
DEMO_ACCOUNTS = [
    Account("30303039914", countries=("EE", "LT"), label="OK"),
    Account("030303-10012", countries=("LV",), label="OK"),
    Account("30303039816", countries=("EE",), label="OK"),
    Account("39901012239", countries=("LT",), label="OK"),
    Account("61101012257", countries=("EE",), label="UNDER18"),
    Account("30403039917", "USER_REFUSED"),
    Account("30403039928", "USER_REFUSED_DISPLAYTEXTANDPIN"),
    Account("30403039939", "USER_REFUSED_VC_CHOICE"),
    Account("30403039946", "USER_REFUSED_CONFIRMATIONMESSAGE"),
    Account("30403039950", "USER_REFUSED_CONFIRMATIONMESSAGE_WITH_VC_CHOICE"),
    Account("30403039961", "USER_REFUSED_CERT_CHOICE", at="certificatechoice"),
    Account("30403039972", "WRONG_VC"),
    Account("30403039983", "TIMEOUT"),
]

# Test-only accounts (EE personal codes 500010100NN with valid check digits, born 2000-01-01).
TEST_ACCOUNTS = [
    Account("50001010017", "DOCUMENT_UNUSABLE", suffix="TEST-Q"),
    # An old app that knows only the code-choice screen: asicfs's interactions are all unsupported.
    Account("50001010028", "REQUIRED_INTERACTION_NOT_SUPPORTED_BY_APP", suffix="TEST-Q",
            interactions=("verificationCodeChoice",), label="VC_ONLY_APP"),
    # An app without the confirmation screen: a confirmation request falls back to the PIN screen.
    Account("50001010039", "OK", suffix="TEST-Q", interactions=("displayTextAndPIN",), label="PIN_ONLY_APP"),
    Account("50001010040", 471, suffix="TEST-NQ"),  # only a Smart-ID Basic account
    Account("50001010050", 472, suffix="TEST-Q"),
    Account("50001010061", 480, suffix="TEST-Q"),
    Account("50001010072", 580, suffix="TEST-Q"),
    Account("50001010083", 400, suffix="TEST-Q"),
    Account("50001010094", 403, suffix="TEST-Q"),
    Account("50001010170", 500, suffix="TEST-Q"),
    # Deliberate protocol violations, so a client's own checks can be tested:
    Account("50001010104", "ADVANCED_CERTIFICATE", suffix="TEST-Q", at="certificatechoice"),  # level ADVANCED though QUALIFIED was asked
    Account("50001010115", "HANG", suffix="TEST-Q"),  # the signature session stays RUNNING for ever
    Account("50001010126", "MALFORMED_JSON", suffix="TEST-Q", at="certificatechoice"),
    Account("50001010137", "MISSING_FIELDS", suffix="TEST-Q", at="certificatechoice"),  # OK without result.documentNumber
    Account("50001010148", "ACCOUNT_UNUSABLE", suffix="TEST-Q"),  # a v3 endResult a v2 client does not know
    Account("50001010159", "WRONG_ALGORITHM", suffix="TEST-Q"),  # says sha512WithRSAEncryption for a SHA256 hash
    Account("50001010167", "BAD_SIGNATURE", suffix="TEST-Q"),  # a signature value that does not verify
    Account("50001010181", "SESSION_LOST", suffix="TEST-Q"),  # the signature session answers 404
    # v3 end results with no demo account:
    Account("50001010202", "PROTOCOL_FAILURE", suffix="TEST-Q"),
    Account("50001010213", "SERVER_ERROR", suffix="TEST-Q"),
    Account("50001010224", "EXPECTED_LINKED_SESSION", suffix="TEST-Q"),
]

MISBEHAVIOURS = {"ADVANCED_CERTIFICATE", "HANG", "MALFORMED_JSON", "MISSING_FIELDS", "WRONG_ALGORITHM",
                 "BAD_SIGNATURE", "SESSION_LOST"}


class Directory:
    """Finds accounts by ETSI identifier or document number and makes their certificates on first use."""

    def __init__(self, pki, folder):
        self.pki, self.folder = pki, folder
        self.by_identifier, self.by_document, self.serials = {}, {}, {}
        self.identities, self.lock = {}, threading.Lock()
        for index, account in enumerate(DEMO_ACCOUNTS + TEST_ACCOUNTS):
            for country_index, (country, document) in enumerate(sorted(account.documents.items())):
                self.by_identifier["PNO%s-%s" % (country, account.code)] = (account, country)
                self.by_document[document] = (account, country)
                self.serials[document] = CERTIFICATE_SERIAL_BASE + index * 4 + country_index

    def find(self, reference):
        """(account, country) for "etsi/PNOEE-…" or "document/PNOEE-…-MOCK-Q", else None."""
        kind, _, value = reference.partition("/")
        return (self.by_identifier if kind == "etsi" else self.by_document).get(value)

    def identity(self, account, country):
        """The account's signing identity (RSA-2048, issued by the test PKI, OCSP "good")."""
        document = account.documents[country]
        with self.lock:
            if document not in self.identities:
                subject = "/C=%s/SN=TESTNUMBER/GN=%s/serialNumber=PNO%s-%s/CN=TESTNUMBER,%s" % (
                    country, account.label, country, account.code, account.label)
                self.identities[document] = simcommon.Identity(
                    self.pki, self.folder, "sid-" + document, subject, "rsa", self.serials[document])
            return self.identities[document]


class Session:
    def __init__(self, kind, account, country, ready_at, request):
        self.kind, self.account, self.country, self.request = kind, account, country, request
        self.ready_at = ready_at  # None: never completes
        self.status = None  # the COMPLETE answer, made once when first read after ready_at


class Service:
    def __init__(self, directory, uuids, name, confirm_after, log):
        self.directory, self.uuids, self.name = directory, uuids, name
        self.confirm_after, self.log_path = confirm_after, log
        self.sessions, self.recent = {}, {}
        self.lock = threading.Lock()

    def log(self, entry):
        if self.log_path:
            with self.lock, open(self.log_path, "a") as out:
                out.write(json.dumps(entry, sort_keys=True) + "\n")

    # -- session-creating requests ------------------------------------------------------------

    def create(self, kind, reference, body):
        """(status, answer) for POST {kind}/{reference}."""
        problem = self.check_common(body)
        if problem:
            return problem
        if kind != "certificatechoice":
            problem = self.check_signing_members(body)
            if problem:
                return problem
        if not re.fullmatch(r"(etsi/(PNO|IDC|PAS)[A-Z]{2}-[^/]+|document/[A-Za-z0-9-]+)", reference):
            return 400, error_body(400, "malformed object reference %r" % reference)
        found = self.directory.find(reference)
        if not found:
            return 404, error_body(404, "no such person or account")
        account, country = found
        if isinstance(account.outcome, int):
            return account.outcome, error_body(account.outcome, "account refuses (test account)")
        key = json.dumps([kind, reference, body], sort_keys=True)
        now = time.monotonic()
        with self.lock:
            previous = self.recent.get(key)
            if previous and now - previous[1] <= IDEMPOTENCY_SECONDS:
                return 200, {"sessionID": previous[0]}
            delay = 0.0 if kind == "certificatechoice" and account.at != "certificatechoice" else self.confirm_after
            never = account.outcome == "HANG" and kind != "certificatechoice"
            session_id = simcommon.new_session_id()
            self.sessions[session_id] = Session(kind, account, country, None if never else now + delay, body)
            self.recent[key] = (session_id, now)
        return 200, {"sessionID": session_id}

    def check_common(self, body):
        if body is None:
            return 400, error_body(400, "the body is not a JSON object")
        uuid, name = body.get("relyingPartyUUID"), body.get("relyingPartyName")
        if not isinstance(uuid, str) or not isinstance(name, str):
            return 400, error_body(400, "relyingPartyUUID and relyingPartyName are required")
        if len(name.encode("utf-8")) > 32:
            return 400, error_body(400, "relyingPartyName is longer than 32 bytes")
        if uuid.lower() not in self.uuids or name.lower() != self.name.lower():
            return 401, error_body(401, "relying party not authorised")
        level = body.get("certificateLevel", "QUALIFIED")
        if level not in LEVELS:
            return 400, error_body(400, "certificateLevel must be one of %s" % ", ".join(LEVELS))
        nonce = body.get("nonce")
        if nonce is not None and not (isinstance(nonce, str) and 1 <= len(nonce) <= 30):
            return 400, error_body(400, "nonce must be 1 to 30 characters")
        if "capabilities" in body and not isinstance(body["capabilities"], list):
            return 400, error_body(400, "capabilities must be an array")
        if "requestProperties" in body and not isinstance(body["requestProperties"], dict):
            return 400, error_body(400, "requestProperties must be an object")
        # The DEMO relying party may not use Smart-ID Basic accounts nor any capability.
        if level == "ADVANCED" or body.get("capabilities"):
            return 403, error_body(403, "the relying party has no permission for this")
        return None

    def check_signing_members(self, body):
        hash_type, hash_text = body.get("hashType"), body.get("hash")
        if hash_type not in HASH_LENGTHS:
            return 400, error_body(400, "hashType must be SHA256, SHA384 or SHA512")
        try:
            digest = base64.b64decode(hash_text, validate=True) if isinstance(hash_text, str) else None
        except ValueError:
            digest = None
        if digest is None or len(digest) != HASH_LENGTHS[hash_type]:
            return 400, error_body(400, "hash must be the Base64 of a %s digest" % hash_type)
        interactions = body.get("allowedInteractionsOrder")
        if not isinstance(interactions, list) or not interactions:
            return 400, error_body(400, "allowedInteractionsOrder must be a non-empty array")
        for interaction in interactions:
            kind = interaction.get("type") if isinstance(interaction, dict) else None
            field = TEXT_FIELDS.get(kind) if isinstance(kind, str) else None
            if field is None:
                return 400, error_body(400, "unknown interaction %r" % (interaction,))
            other = "displayText200" if field == "displayText60" else "displayText60"
            text = interaction.get(field)
            if not isinstance(text, str) or not text or len(text) > TEXT_LIMITS[field] or other in interaction:
                return 400, error_body(400, "%s needs %s of 1 to %d characters and no %s"
                                       % (interaction["type"], field, TEXT_LIMITS[field], other))
        return None

    # -- session status -------------------------------------------------------------------------

    def status(self, session_id, query):
        """(status, answer or raw bytes) for GET session/{id}: waits up to timeoutMs for the end."""
        values = urllib.parse.parse_qs(query).get("timeoutMs")
        if values:
            if not re.fullmatch(r"[0-9]{1,9}", values[0]):
                return 400, error_body(400, "timeoutMs must be a whole number of milliseconds")
            wait = min(max(int(values[0]), 1000), 120000) / 1000
        else:
            wait = (1000 + 120000) / 2 / 1000
        with self.lock:
            session = self.sessions.get(session_id)
        now = time.monotonic()
        if session is None or (session.ready_at is not None and now - session.ready_at > KEEP_COMPLETED_SECONDS):
            return 404, error_body(404, "no such session")
        if session.ready_at is None or session.ready_at > now:
            time.sleep(wait if session.ready_at is None else min(wait, session.ready_at - now))
        if session.ready_at is None or session.ready_at > time.monotonic():
            return 200, {"state": "RUNNING"}
        return simcommon.settle(session, self.complete, self.lock)

    def complete(self, session):
        account, kind = session.account, session.kind
        failing_here = account.at == kind or (account.at == "signature" and kind == "authentication")
        outcome = account.outcome if failing_here else "OK"
        if outcome == "SESSION_LOST":
            return 404, error_body(404, "no such session")
        if outcome == "MALFORMED_JSON":
            return 200, b'{"state": "COMPLETE", "result": {"endResult": "OK", '
        if outcome not in ("OK", "HANG") and outcome not in MISBEHAVIOURS:
            return 200, {"state": "COMPLETE", "result": {"endResult": outcome}}
        identity = self.directory.identity(account, session.country)
        level = "ADVANCED" if outcome == "ADVANCED_CERTIFICATE" else "QUALIFIED"
        answer = {"state": "COMPLETE",
                  "result": {"endResult": "OK", "documentNumber": account.documents[session.country]},
                  "cert": {"value": identity.certificate_base64, "certificateLevel": level}}
        if outcome == "MISSING_FIELDS":
            del answer["result"]["documentNumber"]
        if kind == "certificatechoice":
            return 200, answer
        request = session.request
        supported = [i for i in request["allowedInteractionsOrder"] if i["type"] in account.interactions]
        if not supported:
            return 200, {"state": "COMPLETE", "result": {"endResult": "REQUIRED_INTERACTION_NOT_SUPPORTED_BY_APP"}}
        hash_name = request["hashType"].lower()
        signed_with = "sha512" if outcome == "WRONG_ALGORITHM" else hash_name
        digest = base64.b64decode(request["hash"])
        value = identity.sign_digest(digest, hash_name)
        if outcome == "BAD_SIGNATURE":
            value = bytes([value[0] ^ 1]) + value[1:]
        answer["signature"] = {"value": base64.b64encode(value).decode(), "algorithm": signed_with + "WithRSAEncryption"}
        answer["interactionFlowUsed"] = supported[0]["type"]
        ignored = [name for name in request.get("requestProperties", {}) if name != "shareMdClientIpAddress"]
        if ignored:
            answer["ignoredProperties"] = ignored
        return 200, answer


def verification_code(digest):
    check = hashlib.sha256(digest).digest()
    return "%04d" % (int.from_bytes(check[-2:], "big") % 10000)


def error_body(status, message):
    titles = {400: "Bad Request", 401: "Unauthorized", 403: "Forbidden", 404: "Not Found", 471: "No Suitable Account",
              472: "Person Should View App", 480: "Client Too Old", 500: "Internal Server Error", 580: "System Under Maintenance"}
    return {"timestamp": simcommon.now_text(), "status": status, "error": titles.get(status, "Error"),
            "message": message, "traceId": simcommon.trace_id()}


def make_handler(service, v3):
    class Handler(simcommon.JSONHandler):
        def route_v3(self):
            path, _, query = self.path.partition("?")
            for base in ("/smart-id-rp/v3/", "/v3/"):
                if path.startswith(base):
                    return path[len(base):], query
            return None

        def v3_post(self, body):
            if self.path == "/mock/device-link":
                status, answer, entry = v3.scan(body)
            else:
                status, answer, entry = v3.post(self.route_v3()[0], body)
            entry.update({"api": "v3", "method": "POST", "path": self.path.partition("?")[0], "status": status})
            self.reply(status, answer, entry)

        def route(self):
            """(rest of the path after the API base, query) or None."""
            path, _, query = self.path.partition("?")
            for base in ("/smart-id-rp/v2/", "/v2/"):
                if path.startswith(base):
                    return path[len(base):], query
            return None

        def do_POST(self):
            routed = self.route()
            body = self.read_json()
            if self.path == "/mock/device-link" or self.route_v3():
                return self.v3_post(body)
            match = re.fullmatch(r"(certificatechoice|signature|authentication)/(.+)", routed[0]) if routed else None
            if not match:
                return self.reply(404, error_body(404, "no such endpoint"), {"method": "POST", "path": self.path})
            kind, reference = match.groups()
            status, answer = service.create(kind, reference, body)
            entry = {"method": "POST", "kind": kind, "reference": reference, "status": status}
            if isinstance(body, dict) and isinstance(body.get("hash"), str) and status == 200:
                entry["verificationCode"] = verification_code(base64.b64decode(body["hash"]))
                entry["interactions"] = [i.get("type") for i in body.get("allowedInteractionsOrder", [])]
            self.reply(status, answer, entry)

        def do_GET(self):
            routed_v3 = self.route_v3()
            match = re.fullmatch(r"session/([^/]+)", routed_v3[0]) if routed_v3 else None
            if match:
                status, answer = v3.status(match.group(1), routed_v3[1])
                entry = {"api": "v3", "method": "GET", "kind": "session", "status": status}
                if isinstance(answer, dict):
                    entry["state"] = answer.get("state")
                    entry["endResult"] = answer.get("result", {}).get("endResult")
                    entry["flowType"] = answer.get("signature", {}).get("flowType")
                return self.reply(status, answer, entry)
            routed = self.route()
            match = re.fullmatch(r"session/([^/]+)", routed[0]) if routed else None
            if not match:
                return self.reply(404, error_body(404, "no such endpoint"), {"method": "GET", "path": self.path})
            status, answer = service.status(match.group(1), routed[1])
            entry = {"method": "GET", "kind": "session", "status": status}
            if isinstance(answer, dict):
                entry["state"] = answer.get("state")
                entry["endResult"] = answer.get("result", {}).get("endResult")
                entry["interactionFlowUsed"] = answer.get("interactionFlowUsed")
            self.reply(status, answer, entry)

        def reply(self, status, answer, entry):
            entry["time"] = time.time()
            service.log(entry)
            if isinstance(answer, bytes):  # a deliberately broken answer
                self.send_response(status)
                self.send_header("Content-Type", "application/json;charset=UTF-8")
                self.send_header("Content-Length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)
            else:
                self.answer(status, answer)

    return Handler


def main():
    parser = argparse.ArgumentParser(description="Smart-ID RP API v2 simulator (test use only)")
    parser.add_argument("--pki", required=True, help="test PKI folder made by contrib/testpki/mkpki.sh")
    parser.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (0: any free one)")
    parser.add_argument("--folder", help="where keys, certificates and the TLS certificate go (default PKI/smart-id)")
    parser.add_argument("--confirm-after", type=float, default=0.5,
                        help="seconds the simulated user takes to answer a signature (default 0.5)")
    parser.add_argument("--relying-party-uuid", action="append",
                        help="a UUID allowed in (repeatable; default the DEMO one, %s)" % DEMO_UUID)
    parser.add_argument("--relying-party-name", default="DEMO", help="the relying party's name (default DEMO)")
    parser.add_argument("--scheme-name", default="smart-id-demo", help="v3 schemeName in authCodes (default smart-id-demo)")
    parser.add_argument("--device-link-base", default="https://smart-id.com/device-link",
                        help="v3 deviceLinkBase returned with device-link sessions")
    parser.add_argument("--qr-max-age", type=float, default=1.5,
                        help="how far a scanned QR's elapsedSeconds may be from the session's age (default 1.5 s)")
    parser.add_argument("--no-pkcs1", action="store_true", help="v3: refuse PKCS#1 v1.5 (API 3.1 behaviour)")
    parser.add_argument("--log", help="append one JSON line per request to this file (no bodies)")
    parser.add_argument("--exit-with-parent", action="store_true", help="quit when the starting process dies")
    args = parser.parse_args()
    folder = args.folder or os.path.join(args.pki, "smart-id")
    os.makedirs(folder, exist_ok=True)
    uuids = {u.lower() for u in (args.relying_party_uuid or [DEMO_UUID])}
    service = Service(Directory(os.path.abspath(args.pki), folder), uuids, args.relying_party_name,
                      args.confirm_after, args.log)
    v3 = smart_id_v3.ServiceV3(service, args.scheme_name, args.device_link_base, args.qr_max_age, not args.no_pkcs1)
    simcommon.serve(make_handler(service, v3), folder, args.port, args.exit_with_parent)


def scan():
    """`scan`: what the demo's "mock" endpoint is for: the phone of --document scans LINK."""
    import ssl
    import urllib.request
    parser = argparse.ArgumentParser(prog="smart_id_simulator.py scan")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--cert", required=True, help="the simulator's tls.pem")
    parser.add_argument("--document", required=True)
    parser.add_argument("link")
    args = parser.parse_args(sys.argv[2:])
    body = json.dumps({"documentNumber": args.document, "deviceLink": args.link, "flowType": "QR"}).encode()
    request = urllib.request.Request("https://127.0.0.1:%d/mock/device-link" % args.port, body,
                                     {"Content-Type": "application/json"})
    try:
        urllib.request.urlopen(request, context=ssl.create_default_context(cafile=args.cert))
    except urllib.error.HTTPError as error:
        sys.exit("scan refused: HTTP %d %s" % (error.code, json.loads(error.read()).get("detail")))
    print("scanned")


if __name__ == "__main__":
    scan() if sys.argv[1:2] == ["scan"] else main()
