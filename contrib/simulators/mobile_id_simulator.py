#!/usr/bin/env python3
"""A local simulator of SK's Mobile-ID REST service (MID-REST), faithful to the protocol notes in
spec/mobile-id.md: the same routes, fields, error texts, long polling and demo test numbers, with
signing certificates issued by the test PKI of contrib/testpki (so OCSP answers "good" for them).

    mobile_id_simulator.py --pki DIR [--port 0] [--exit-with-parent] [--folder DIR]
                           [--confirm-after 2] [--user-timeout 10] [--rp-uuid U] [--rp-name N]
                           [--request-log FILE] [--session-ttl 300]
                           [--min-poll-ms 1000] [--max-poll-ms 60000] [--default-poll-ms 10000]

Prints "PORT n" and "CERT path" (the self-signed TLS certificate clients must pin) once listening.
The base URL is https://127.0.0.1:PORT/mid-api (the routes also answer without the /mid-api prefix).
Test and demo use only; nothing here is a real identity or a real service. Standard library and
the openssl command only.
"""
import argparse
import base64
import binascii
import json
import os
import re
import sys
import threading
import time
import urllib.parse

sys.dont_write_bytecode = True  # no __pycache__ beside the sources
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import simcommon  # noqa: E402

DEMO_UUID = "00000000-0000-0000-0000-000000000000"
DEMO_NAME = "DEMO"
HASH_LENGTHS = {"SHA256": 32, "SHA384": 48, "SHA512": 64}
OPENSSL_HASH = {"SHA256": "sha256", "SHA384": "sha384", "SHA512": "sha512"}
LANGUAGES = {"EST", "ENG", "RUS", "LIT"}
UUID_FORM = re.compile(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")
PHONE_FORM = re.compile(r"^\+\d{8,30}$")
CODE_FORM = re.compile(r"^\d{11}$")
# Serial numbers of the simulator's certificates: clear of mkpki.sh's (4096-12288) and of other simulators'.
SERIAL_BASE = 0x4D4944000

# The demo numbers of spec §11: phone, personal code, outcome, country, surname, given name, key.
# Outcomes other than NOT_MID_CLIENT still have a certificate (as on the demo service), so that a
# signing reaches the session and meets its end result there.
DEMO_PEOPLE = [
    ("+37200000766", "60001019906", "OK", "EE", "O'CONNEŽ-ŠUSLIK TESTNUMBER", "MARY ÄNN", "P-256"),
    ("+37200000566", "60001018800", "OK", "EE", "TESTNUMBER", "OK", "P-256"),
    ("+37268000769", "60001017869", "OK", "EE", "TESTNUMBER", "EID2016", "P-256"),
    ("+37269930366", "51307149560", "OK", "EE", "TESTNUMBER", "EIDQ2021E", "P-256"),
    ("+37200001566", "39901019992", "OK", "EE", "TESTNUMBER", "RSA", "rsa"),
    ("+37200001466", "45001019980", "OK", "EE", "TESTNUMBER", "OVER21", "P-256"),
    ("+37200001366", "61001019985", "OK", "EE", "TESTNUMBER", "UNDER18", "P-256"),
    ("+37060000666", "50001018865", "OK", "LT", "TESTNUMBER", "LITHUANIAN", "P-384"),
    ("+37200000266", "60001019939", "NOT_MID_CLIENT", "EE", "", "", ""),
    ("+37200000366", "60001019928", "NOT_MID_CLIENT", "EE", "", "", ""),
    ("+37207110066", "60001019947", "DELIVERY_ERROR", "EE", "TESTNUMBER", "DELIVERY", "P-256"),
    ("+37201100266", "60001019950", "USER_CANCELLED", "EE", "TESTNUMBER", "CANCEL", "P-256"),
    ("+37200000666", "60001019961", "SIGNATURE_HASH_MISMATCH", "EE", "TESTNUMBER", "MISMATCH", "P-256"),
    ("+37201200266", "60001019972", "SIM_ERROR", "EE", "TESTNUMBER", "SIMERROR", "P-256"),
    ("+37213100266", "60001019983", "PHONE_ABSENT", "EE", "TESTNUMBER", "ABSENT", "P-256"),
    ("+37066000266", "50001018908", "TIMEOUT", "EE", "TESTNUMBER", "TIMEOUT", "P-256"),
    ("+37266000266", "50001018908", "TIMEOUT", "EE", "TESTNUMBER", "TIMEOUT", "P-256"),
    # Test-only numbers (no such behaviour on the real service): they exercise a client's handling
    # of a broken service. Each has a good certificate, so a signing reaches the broken step.
    ("+37200009901", "38001019015", "HANG", "EE", "TESTNUMBER", "HANG", "P-256"),
    ("+37200009902", "38001019026", "MALFORMED", "EE", "TESTNUMBER", "MALFORMED", "P-256"),
    ("+37200009903", "38001019037", "HTTP500", "EE", "TESTNUMBER", "ERROR500", "P-256"),
    ("+37200009904", "38001019048", "RUNNING_FOREVER", "EE", "TESTNUMBER", "RUNNING", "P-256"),
    ("+37200009905", "38001019059", "WRONG_SIGNATURE", "EE", "TESTNUMBER", "WRONGSIG", "P-256"),
    ("+37200009906", "38001019067", "WRONG_ALGORITHM", "EE", "TESTNUMBER", "WRONGALG", "P-256"),
]


class Person:
    def __init__(self, index, phone, code, outcome, country, surname, given, key_type):
        self.index, self.phone, self.code, self.outcome = index, phone, code, outcome
        self.country, self.surname, self.given, self.key_type = country, surname, given, key_type
        self._identity = None

    @property
    def has_certificate(self):
        return self.outcome != "NOT_MID_CLIENT"

    def identity(self, sim):
        """The person's certificate and key, made (and registered good for OCSP) on first use."""
        with sim.identity_lock:
            if self._identity is None:
                subject = "/C=%s/SN=%s/GN=%s/serialNumber=PNO%s-%s/CN=%s,%s,%s" % (
                    self.country, self.surname, self.given, self.country, self.code, self.surname, self.given, self.code)
                self._identity = simcommon.Identity(sim.pki, sim.folder, "mid-" + self.phone[1:], subject,
                                                    self.key_type, SERIAL_BASE + self.index)
            return self._identity


class Session:
    """One signing or authentication session: it completes by itself `delay` seconds after it
    started (None: never), the time the simulated user takes to read the code and enter the PIN."""

    def __init__(self, kind, person, outcome, hash_bytes, hash_type, delay):
        self.kind, self.person, self.outcome = kind, person, outcome
        self.hash, self.hash_type = hash_bytes, hash_type
        self.created = time.monotonic()
        self.complete_at = None if delay is None else self.created + delay
        self.condition = threading.Condition()
        self.poll_generation = 0
        self.answer = None  # the COMPLETE answer, made once (ECDSA values are randomised)

    def is_complete(self):
        return self.complete_at is not None and time.monotonic() >= self.complete_at


class Simulator:
    def __init__(self, options):
        self.pki = os.path.abspath(options.pki)
        # Beside the PKI by default: the identities are registered in its index.txt once, and reused.
        self.folder = os.path.abspath(options.folder or os.path.join(self.pki, "mobile-id"))
        os.makedirs(self.folder, exist_ok=True)
        self.confirm_after = options.confirm_after
        self.user_timeout = options.user_timeout
        self.session_ttl = options.session_ttl
        self.min_poll_ms, self.max_poll_ms = options.min_poll_ms, options.max_poll_ms
        self.default_poll_ms = options.default_poll_ms
        self.relying_parties = {(DEMO_UUID, DEMO_NAME.lower())}
        if options.rp_uuid or options.rp_name:
            self.relying_parties.add((options.rp_uuid or DEMO_UUID, (options.rp_name or DEMO_NAME).lower()))
        self.people = {}
        for index, row in enumerate(DEMO_PEOPLE):
            person = Person(index, *row)
            self.people[(person.phone, person.code)] = person
        self.identity_lock = threading.Lock()
        self.sessions = {}
        self.sessions_lock = threading.Lock()
        self.log_path = options.request_log
        self.log_lock = threading.Lock()

    def person(self, phone, code):
        return self.people.get((phone, code))

    def log(self, entry):
        if not self.log_path:
            return
        entry = dict(entry, time=time.time())
        with self.log_lock, open(self.log_path, "a", encoding="utf-8") as log:
            log.write(json.dumps(entry, ensure_ascii=False) + "\n")

    def start_session(self, kind, person, hash_bytes, hash_type):
        outcome = person.outcome if person else "NOT_MID_CLIENT"
        delay = {"TIMEOUT": self.user_timeout, "RUNNING_FOREVER": None}.get(outcome, self.confirm_after)
        session = Session(kind, person, outcome, hash_bytes, hash_type, delay)
        session_id = simcommon.new_session_id()
        with self.sessions_lock:
            now = time.monotonic()
            for old in [key for key, value in self.sessions.items() if now - value.created > self.session_ttl]:
                del self.sessions[old]
            self.sessions[session_id] = session
        return session_id

    def find_session(self, kind, session_id):
        with self.sessions_lock:
            session = self.sessions.get(session_id)
            if session is None or session.kind != kind:
                return None
            if time.monotonic() - session.created > self.session_ttl:
                del self.sessions[session_id]
                return None
            return session

    def complete_answer(self, session):
        """The COMPLETE answer of a session that has ended (made once)."""
        if session.answer is not None:
            return session.answer
        outcome = session.outcome
        if outcome not in ("OK", "WRONG_SIGNATURE", "WRONG_ALGORITHM", "MALFORMED"):
            session.answer = {"state": "COMPLETE", "result": outcome}
            return session.answer
        identity = session.person.identity(self)
        digest = session.hash
        if outcome == "WRONG_SIGNATURE":
            digest = bytes([digest[0] ^ 0xFF]) + digest[1:]  # a value over another hash: it cannot verify
        value = identity.sign_digest(digest, OPENSSL_HASH[session.hash_type])
        key = "RSA" if identity.is_rsa else "EC"
        if outcome == "WRONG_ALGORITHM":
            key = "EC" if identity.is_rsa else "RSA"
        algorithm = "%sWith%sEncryption" % (session.hash_type, key)
        answer = {"state": "COMPLETE", "result": "OK",
                  "signature": {"value": base64.b64encode(value).decode(), "algorithm": algorithm}}
        if session.kind == "authentication":
            answer["cert"] = identity.certificate_base64
        session.answer = answer
        return answer


SIM = None  # the one Simulator, set by main()


def stamp(body):
    return dict(body, time=simcommon.now_text(), traceId=simcommon.trace_id())


class MobileIDHandler(simcommon.JSONHandler):
    server_version = "MID-REST-simulator/1"

    POST_ROUTES = ("/certificate", "/signature", "/authentication")

    def do_POST(self):
        self.route("POST")

    def do_GET(self):
        self.route("GET")

    def do_OPTIONS(self):
        path = self.route_path()
        allowed = self.allowed_methods(path)
        if allowed is None:
            return self.error(404, "Not Found")
        self.send_response(200)
        self.send_header("Allow", allowed)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_HEAD(self):
        self.send_response(405)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def refuse_method(self):
        self.log_request_line(self.command)
        self.close_connection = True  # its body, if any, is not read
        self.error(405, "Method Not Allowed")

    do_PUT = do_DELETE = do_PATCH = refuse_method

    # MARK: routing

    def route_path(self):
        path = urllib.parse.urlsplit(self.path).path
        if path.startswith("/mid-api/") or path == "/mid-api":
            path = path[len("/mid-api"):]
        return path

    @staticmethod
    def session_route(path):
        """("signature" or "authentication", session id or "") for a status path, else None."""
        match = re.match(r"^/(signature|authentication)/session(?:/([^/]*))?/?$", path)
        return (match.group(1), match.group(2) or "") if match else None

    def allowed_methods(self, path):
        if path in self.POST_ROUTES:
            return "POST, OPTIONS"
        if path == "/version" or self.session_route(path):
            return "GET, OPTIONS"
        return None

    def route(self, method):
        path = self.route_path()
        allowed = self.allowed_methods(path)
        if allowed is None:
            self.log_request_line(method)
            return self.error(404, "Not Found")
        if method not in allowed:
            self.log_request_line(method)
            if method == "POST":
                self.read_body()  # drain it, so the connection stays usable
            return self.error(405, "Method Not Allowed")
        if path == "/version":
            self.log_request_line(method)
            return self.text(200, "Version: 5.2.1. Built: 01.01.2025 00:00")
        if method == "GET":
            kind, session_id = self.session_route(path)
            return self.session_status(kind, session_id)
        body = self.read_body()
        SIM.log({"method": "POST", "path": path, **({key: body.get(key) for key in (
            "relyingPartyName", "phoneNumber", "nationalIdentityNumber", "hash", "hashType", "language",
            "displayText", "displayTextFormat") if key in body} if isinstance(body, dict) else {})})
        if not isinstance(body, dict):
            return self.error(400, "Malformed JSON request")
        if path == "/certificate":
            return self.certificate(body)
        return self.start(path[1:], body)

    def log_request_line(self, method):
        SIM.log({"method": method, "path": self.route_path()})

    # MARK: answers

    def ok(self, body):
        self.answer(200, stamp(body))

    def error(self, status, text):
        self.answer(status, stamp({"error": text}))

    def text(self, status, text):
        data = text.encode()
        self.send_response(status)
        self.send_header("Content-Type", "text/plain;charset=UTF-8")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def raw(self, status, data):
        self.send_response(status)
        self.send_header("Content-Type", "application/json;charset=UTF-8")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def read_body(self):
        """The JSON object sent, None when the body is no JSON object."""
        return self.read_json()

    # MARK: checks shared by the POST routes

    def check_fields(self, body, fields, missing_text):
        """400 for the first required member that is absent, null, empty or not a string."""
        for field in fields:
            value = body.get(field)
            if not isinstance(value, str) or value == "":
                self.error(400, missing_text % field)
                return False
        return True

    def check_party_and_person(self, body):
        if not UUID_FORM.match(body["relyingPartyUUID"]):
            self.error(400, "relyingPartyUUID must be a valid UUID")
            return False
        if len(body["relyingPartyName"]) > 100:
            self.error(400, "relyingPartyName must be at most 100 characters")
            return False
        if not PHONE_FORM.match(body["phoneNumber"]):
            self.error(400, "phoneNumber must contain of + and numbers(8-30)")
            return False
        if not CODE_FORM.match(body["nationalIdentityNumber"]):
            self.error(400, "nationalIdentityNumber must contain of 11 digits")
            return False
        return True

    def authorised(self, body):
        # The UUID is case-sensitive (lower case only), the name is not.
        if (body["relyingPartyUUID"], body["relyingPartyName"].lower()) not in SIM.relying_parties:
            self.error(401, "Failed to authorize user")
            return False
        return True

    # MARK: POST /certificate

    def certificate(self, body):
        fields = ("relyingPartyUUID", "relyingPartyName", "phoneNumber", "nationalIdentityNumber")
        if not (self.check_fields(body, fields, "%s cannot be null.") and self.check_party_and_person(body)
                and self.authorised(body)):
            return
        person = SIM.person(body["phoneNumber"], body["nationalIdentityNumber"])
        if person is None or not person.has_certificate:
            return self.ok({"result": "NOT_FOUND", "cert": ""})
        self.ok({"result": "OK", "cert": person.identity(SIM).certificate_base64})

    # MARK: POST /signature and /authentication

    def start(self, kind, body):
        fields = ("relyingPartyUUID", "relyingPartyName", "phoneNumber", "nationalIdentityNumber", "hash",
                  "hashType", "language")
        if not (self.check_fields(body, fields, "Required %s is missing.") and self.check_party_and_person(body)):
            return
        hash_type = body["hashType"]
        if hash_type not in HASH_LENGTHS:
            return self.error(400, "hashType must be one of SHA256, SHA384, SHA512")
        try:
            hash_bytes = base64.b64decode(body["hash"], validate=True)
        except (binascii.Error, ValueError):
            return self.error(400, "Hash must be Base64 encoded")
        if len(hash_bytes) != HASH_LENGTHS[hash_type]:
            return self.error(400, "The length of the hash must match the type of hash")
        if body["language"] not in LANGUAGES:
            return self.error(400, "language must be one of EST, ENG, RUS, LIT")
        text_format = body.get("displayTextFormat", "GSM-7")
        if text_format not in ("GSM-7", "UCS-2"):
            return self.error(400, "displayTextFormat must be GSM-7 or UCS-2")
        text = body.get("displayText")
        if text is not None and not isinstance(text, str):
            return self.error(400, "displayText must be a string")
        # The real service's answer to an over-long text is not documented; the simulator refuses it
        # so that a client that overflows the SIM's 100 bytes is noticed.
        limit = 100 if text_format == "GSM-7" else 50
        if text is not None and len(text) > limit:
            return self.error(400, "displayText must not be longer than %d characters in %s" % (limit, text_format))
        if not self.authorised(body):
            return
        person = SIM.person(body["phoneNumber"], body["nationalIdentityNumber"])
        if person is not None and person.outcome == "HTTP500":
            return self.error(500, "Internal error")
        session_id = SIM.start_session(kind, person, hash_bytes, hash_type)
        self.ok({"sessionID": session_id})

    # MARK: GET /{kind}/session/{id}?timeoutMs=N

    def session_status(self, kind, session_id):
        query = urllib.parse.parse_qs(urllib.parse.urlsplit(self.path).query)
        SIM.log({"method": "GET", "path": "/%s/session/%s" % (kind, session_id),
                 "timeoutMs": query.get("timeoutMs", [None])[0]})
        if not session_id:
            return self.error(400, "Required sessionId is missing")
        try:
            wait_ms = int(query["timeoutMs"][0]) if "timeoutMs" in query else SIM.default_poll_ms
        except ValueError:
            return self.error(400, "timeoutMs must be a number")
        wait_ms = min(max(wait_ms, SIM.min_poll_ms), SIM.max_poll_ms)
        session = SIM.find_session(kind, session_id)
        if session is None:
            return self.error(404, "SessionID not found")
        if session.outcome == "HANG":
            # Never answers (until the session would be forgotten): the client's own timeout must end it.
            threading.Event().wait(SIM.session_ttl)
            self.close_connection = True
            return
        if self.wait_for_completion(session, wait_ms / 1000.0):
            if session.outcome == "MALFORMED":
                return self.raw(200, b'{"state": "COMPLETE", "result": "OK", "signature": {"value": "AAAA')
            return self.ok(SIM.complete_answer(session))
        self.ok({"state": "RUNNING"})

    @staticmethod
    def wait_for_completion(session, seconds):
        """True once the session is complete; False when the wait expires or a newer poll of the
        same session arrives (only one poll per session is served; the earlier one gets RUNNING)."""
        with session.condition:
            session.poll_generation += 1
            mine = session.poll_generation
            session.condition.notify_all()
            deadline = time.monotonic() + seconds
            while True:
                if session.is_complete():
                    return True
                now = time.monotonic()
                if session.poll_generation != mine or now >= deadline:
                    return False
                until = deadline if session.complete_at is None else min(deadline, session.complete_at)
                session.condition.wait(max(0.0, until - now))


def main():
    global SIM
    parser = argparse.ArgumentParser(description="Mobile-ID (MID-REST) simulator for tests and demos")
    parser.add_argument("--pki", required=True, help="test PKI folder made by contrib/testpki/mkpki.sh")
    parser.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (0: any free one)")
    parser.add_argument("--exit-with-parent", action="store_true", help="quit when the parent process dies")
    parser.add_argument("--folder", help="where the TLS certificate and the demo identities are kept (default PKI/mobile-id)")
    parser.add_argument("--confirm-after", type=float, default=2.0,
                        help="seconds the simulated user takes before a session ends (default 2)")
    parser.add_argument("--user-timeout", type=float, default=10.0,
                        help="seconds before a TIMEOUT number's session ends with TIMEOUT (default 10)")
    parser.add_argument("--rp-uuid", help="a relying-party UUID to accept besides the demo one")
    parser.add_argument("--rp-name", help="a relying-party name to accept besides DEMO")
    parser.add_argument("--request-log", help="append each request as a JSON line to this file")
    parser.add_argument("--session-ttl", type=float, default=300.0,
                        help="seconds after which a session is forgotten (404; default 300)")
    parser.add_argument("--min-poll-ms", type=int, default=1000, help="smallest timeoutMs honoured (default 1000)")
    parser.add_argument("--max-poll-ms", type=int, default=60000, help="largest timeoutMs honoured (default 60000)")
    parser.add_argument("--default-poll-ms", type=int, default=10000, help="timeoutMs when none is given (default 10000)")
    options = parser.parse_args()
    if not os.path.exists(os.path.join(options.pki, "issuing.pem")):
        parser.error("%s holds no test PKI (issuing.pem); make one with contrib/testpki/mkpki.sh" % options.pki)
    SIM = Simulator(options)
    simcommon.serve(MobileIDHandler, SIM.folder, options.port, options.exit_with_parent)


if __name__ == "__main__":
    main()
