"""Smart-ID RP API v3 (signing) for smart_id_simulator.py: the routes under /smart-id-rp/v3/ and /v3/,
and the demo's automated-testing "scan" endpoint /mock/device-link, per the RP API 3.2.3 documentation
(SK-EID/smart-id-documentation: overview_of_api_endpoints, notification_based_flows, device_link_flows,
authcode, interactions, signature_protocols; RP-API_V3.yml; autosigner.yml).

Flows: certificate choice by notification (etsi/PNO…) or by device link (anonymous: RUNNING until the
link is "scanned"), the synchronous signature/certificate/{doc}, notification signing (the service makes
the 4-digit code and returns it) and linked signing after a device-link certificate choice. Device links
are checked bit for bit: the authCode (HMAC-SHA256 under the session secret) and elapsedSeconds, which
must be the current one (within --qr-max-age seconds of the time since the session was created).
Signatures are RSASSA-PSS (MGF1 with the same hash, salt = hash length) or PKCS#1 v1.5 when asked.
Errors are RFC 9457 problem JSON. Test and demo use only.
"""
import base64
import hashlib
import hmac
import json
import re
import secrets
import threading
import time
import urllib.parse

import simcommon  # the folder is on sys.path: smart_id_simulator.py imports this module

PSS_HASHES = {"SHA-256": ("sha256", 32), "SHA-384": ("sha384", 48), "SHA-512": ("sha512", 64),
              "SHA3-256": ("sha3-256", 32), "SHA3-384": ("sha3-384", 48), "SHA3-512": ("sha3-512", 64)}
PKCS1 = {"sha256WithRSAEncryption": ("sha256", 32), "sha384WithRSAEncryption": ("sha384", 48),
         "sha512WithRSAEncryption": ("sha512", 64)}
TEXTS = {"displayTextAndPIN": ("displayText60", 60), "confirmationMessage": ("displayText200", 200),
         "confirmationMessageAndVerificationCodeChoice": ("displayText200", 200)}
# v2's per-screen refusals are one v3 result naming the screen.
REFUSED_SCREENS = {"USER_REFUSED_DISPLAYTEXTANDPIN": "displayTextAndPIN",
                   "USER_REFUSED_VC_CHOICE": "confirmationMessageAndVerificationCodeChoice",
                   "USER_REFUSED_CONFIRMATIONMESSAGE": "confirmationMessage",
                   "USER_REFUSED_CONFIRMATIONMESSAGE_WITH_VC_CHOICE": "confirmationMessageAndVerificationCodeChoice"}
IDEMPOTENCY_SECONDS = 15
SESSION_SECONDS = 300


def problem(status, detail):
    titles = {400: "Bad Request", 401: "Unauthorized", 403: "Forbidden", 404: "Not Found", 471: "No Suitable Account",
              472: "Person Should View App", 480: "Client Too Old", 500: "Internal Server Error",
              580: "System Under Maintenance"}
    return {"type": "about:blank", "title": titles.get(status, "Error"), "status": status, "detail": detail}


def auth_code(secret, scheme, rp_name, unprotected_link, protocol="", digest="", interactions=""):
    """Base64URL (no padding) of HMAC-SHA256(decoded secret, the eight fields joined with |); for QR
    links the callback URL field is empty, and asicfs is no broker."""
    payload = "|".join([scheme, protocol, digest, base64.b64encode(rp_name.encode()).decode(), "", interactions,
                        "", unprotected_link])
    mac = hmac.new(base64.b64decode(secret), payload.encode(), hashlib.sha256).digest()
    return base64.urlsafe_b64encode(mac).rstrip(b"=").decode()


class Session:
    def __init__(self, kind, account, country, body, ready_at):
        self.kind, self.account, self.country, self.body = kind, account, country, body
        self.ready_at = ready_at  # None: waits for a scan (device link) or never ends (HANG)
        self.created = time.monotonic()
        self.token = self.secret = None
        self.flow = "Notification"
        self.linked_used = False
        self.status = None


class ServiceV3:
    def __init__(self, v2, scheme_name, link_base, qr_max_age, allow_pkcs1=True):
        self.v2, self.directory = v2, v2.directory
        self.scheme_name, self.link_base, self.qr_max_age = scheme_name, link_base, qr_max_age
        self.allow_pkcs1 = allow_pkcs1
        self.sessions, self.recent, self.lock = {}, {}, threading.Lock()

    # -- requests -------------------------------------------------------------------------------

    def post(self, path, body):
        """(status, answer, log entry) for POST {path} under the v3 base."""
        routes = [
            (r"signature/certificate-choice/notification/(etsi/[^/]+)", self.certificate_choice_notification),
            (r"signature/certificate-choice/device-link/anonymous()", self.certificate_choice_device_link),
            (r"signature/certificate/(document/[^/]+)", self.certificate),
            (r"signature/notification/(document/[^/]+)", self.signature_notification),
            (r"signature/notification/linked/([^/]+)", self.signature_linked),
            (r"signature/device-link/((?:document|etsi)/[^/]+)", self.signature_device_link),
        ]
        for pattern, handler in routes:
            match = re.fullmatch(pattern, path)
            if match:
                error = self.v2.check_common(body)
                if error:
                    return error[0], problem(error[0], error[1]["message"]), {"route": pattern}
                return handler(match.group(1), body)
        return 404, problem(404, "no such endpoint"), {}

    def account_for(self, reference):
        found = self.directory.find(reference)
        if not found:
            return None, (404, problem(404, "no such person or account"))
        account, _ = found
        if isinstance(account.outcome, int):
            status = 404 if account.outcome in (471, 472) else account.outcome
            return None, (status, problem(status, "account refuses (test account)"))
        return found, None

    def new_session(self, kind, found, body, ready_at, idempotency_key=None):
        now = time.monotonic()
        with self.lock:
            if idempotency_key:
                previous = self.recent.get(idempotency_key)
                if previous and now - previous[1] <= IDEMPOTENCY_SECONDS:
                    return self.sessions[previous[0]], previous[0]
            session_id = str(__import__("uuid").uuid4())
            account, country = found if found else (None, None)
            session = Session(kind, account, country, body, ready_at)
            self.sessions[session_id] = session
            if idempotency_key:
                self.recent[idempotency_key] = (session_id, now)
        return session, session_id

    def certificate_choice_notification(self, reference, body):
        found, error = self.account_for(reference)
        if error:
            return error[0], error[1], {"kind": "certificate-choice"}
        account = found[0]
        delay = self.v2.confirm_after if account.at == "certificatechoice" else 0.0
        key = json.dumps(["cc", reference, body], sort_keys=True)
        _, session_id = self.new_session("certificate-choice", found, body, time.monotonic() + delay, key)
        return 200, {"sessionID": session_id}, {"kind": "certificate-choice", "flow": "notification"}

    def certificate_choice_device_link(self, _, body):
        session, session_id = self.new_session("certificate-choice", None, body, None)
        session.token = secrets.token_urlsafe(24).replace("-", "a").replace("_", "b")
        session.secret = base64.b64encode(secrets.token_bytes(32)).decode()
        session.flow = "QR"
        return 200, {"sessionID": session_id, "sessionToken": session.token, "sessionSecret": session.secret,
                     "deviceLinkBase": self.link_base}, \
            {"kind": "certificate-choice", "flow": "device-link", "sessionToken": session.token,
             # Logged (this is a test tool) so that tests can check the client never shows it.
             "sessionSecret": session.secret}

    def certificate(self, reference, body):
        found, error = self.account_for(reference)
        if error:
            return error[0], error[1], {"kind": "certificate"}
        identity = self.directory.identity(*found)
        return 200, {"state": "OK", "cert": {"value": identity.certificate_base64, "certificateLevel": "QUALIFIED"}}, \
            {"kind": "certificate"}

    def check_signing(self, body, allow_vc_choice):
        if body.get("signatureProtocol") != "RAW_DIGEST_SIGNATURE":
            return "signatureProtocol must be RAW_DIGEST_SIGNATURE"
        parameters = body.get("signatureProtocolParameters")
        if not isinstance(parameters, dict):
            return "signatureProtocolParameters is required"
        digest, algorithm = parameters.get("digest"), parameters.get("signatureAlgorithm")
        if algorithm == "rsassa-pss":
            hash_name = (parameters.get("signatureAlgorithmParameters") or {}).get("hashAlgorithm")
            if hash_name not in PSS_HASHES:
                return "signatureAlgorithmParameters.hashAlgorithm must be one of " + ", ".join(PSS_HASHES)
            length = PSS_HASHES[hash_name][1]
        elif algorithm in PKCS1 and self.allow_pkcs1:
            length = PKCS1[algorithm][1]
        else:
            return "signatureAlgorithm %r is not supported" % (algorithm,)
        if not isinstance(digest, str) or not 44 <= len(digest) <= 88:
            return "digest must be 44 to 88 Base64 characters"
        try:
            raw = base64.b64decode(digest, validate=True)
        except ValueError:
            return "digest is not Base64"
        if len(raw) != length:
            return "digest has %d bytes, the hash algorithm makes %d" % (len(raw), length)
        encoded = body.get("interactions")
        try:
            interactions = json.loads(base64.b64decode(encoded, validate=True)) if isinstance(encoded, str) else None
        except ValueError:
            interactions = None
        if not isinstance(interactions, list) or not interactions:
            return "interactions must be the Base64 of a non-empty JSON array"
        seen = set()
        for interaction in interactions:
            kind = interaction.get("type") if isinstance(interaction, dict) else None
            if kind not in TEXTS or kind in seen:
                return "interaction %r is unknown or listed twice" % (kind,)
            if kind == "confirmationMessageAndVerificationCodeChoice" and not allow_vc_choice:
                return "confirmationMessageAndVerificationCodeChoice is not allowed in this flow"
            seen.add(kind)
            field, limit = TEXTS[kind]
            other = "displayText200" if field == "displayText60" else "displayText60"
            text = interaction.get(field)
            if not isinstance(text, str) or not text or len(text) > limit or other in interaction:
                return "%s needs %s of 1 to %d characters and no %s" % (kind, field, limit, other)
        return None

    def signature_notification(self, reference, body):
        why = self.check_signing(body, allow_vc_choice=True)
        if why:
            return 400, problem(400, why), {"kind": "signature"}
        found, error = self.account_for(reference)
        if error:
            return error[0], error[1], {"kind": "signature"}
        never = found[0].outcome == "HANG"
        key = json.dumps(["sig", reference, body], sort_keys=True)
        session, session_id = self.new_session("signature", found, body,
                                               None if never else time.monotonic() + self.v2.confirm_after, key)
        if not hasattr(session, "vc"):
            # Random, as the service's: not derived from the digest (v2's rule), and logged beside it.
            session.vc = "%04d" % secrets.randbelow(10000)
        digest = base64.b64decode(body["signatureProtocolParameters"]["digest"])
        return 200, {"sessionID": session_id, "vc": {"type": "numeric4", "value": session.vc}}, \
            {"kind": "signature", "flow": "notification", "vc": session.vc,
             "hash_vc": "%04d" % (int.from_bytes(hashlib.sha256(digest).digest()[-2:], "big") % 10000)}

    def signature_device_link(self, reference, body):
        """A QR signing without a certificate first (asicfs does not use it: XAdES needs the certificate)."""
        why = self.check_signing(body, allow_vc_choice=False)
        if why:
            return 400, problem(400, why), {"kind": "signature"}
        found, error = self.account_for(reference)
        if error:
            return error[0], error[1], {"kind": "signature"}
        session, session_id = self.new_session("signature", found, body, None)
        session.token = secrets.token_urlsafe(24).replace("-", "a").replace("_", "b")
        session.secret = base64.b64encode(secrets.token_bytes(32)).decode()
        session.flow = "QR"
        return 200, {"sessionID": session_id, "sessionToken": session.token, "sessionSecret": session.secret,
                     "deviceLinkBase": self.link_base}, {"kind": "signature", "flow": "device-link",
                                                         "sessionToken": session.token, "sessionSecret": session.secret}

    def signature_linked(self, document, body):
        why = self.check_signing(body, allow_vc_choice=False)
        if why:
            return 400, problem(400, why), {"kind": "signature"}
        found, error = self.account_for("document/" + document)
        if error:
            return error[0], error[1], {"kind": "signature"}
        with self.lock:
            linked = self.sessions.get(body.get("linkedSessionID") or "")
            usable = (linked is not None and linked.kind == "certificate-choice" and linked.token is not None
                      and linked.account is found[0] and not linked.linked_used and linked.ready_at is not None)
            if usable:
                linked.linked_used = True
        if not usable:
            return 400, problem(400, "linkedSessionID is not a completed, unused device-link certificate choice "
                                     "of this account"), {"kind": "signature", "flow": "linked"}
        session, session_id = self.new_session("signature", found, body, time.monotonic() + self.v2.confirm_after)
        session.flow = linked.flow
        return 200, {"sessionID": session_id}, {"kind": "signature", "flow": "linked"}

    def scan(self, body):
        """POST /mock/device-link: the phone scanned (or opened) deviceLink as documentNumber's account."""
        if not isinstance(body, dict) or not isinstance(body.get("deviceLink"), str) \
                or not isinstance(body.get("documentNumber"), str):
            return 400, problem(400, "documentNumber and deviceLink are required"), {"kind": "scan"}
        link = body["deviceLink"]
        unprotected, _, code = link.partition("&authCode=")
        base, _, query = unprotected.partition("?")
        fields = query.split("&")
        names = [field.partition("=")[0] for field in fields]
        values = {field.partition("=")[0]: field.partition("=")[2] for field in fields}
        expected = ["deviceLinkType", "elapsedSeconds", "sessionToken", "sessionType", "version", "lang"]
        with self.lock:
            session = next((s for s in self.sessions.values() if s.token and s.token == values.get("sessionToken")), None)
        entry = {"kind": "scan"}
        if session is None or base != self.link_base or names != expected or values["deviceLinkType"] != "QR" \
                or values["version"] != "1.0" or values["sessionType"] != ("cert" if session.kind == "certificate-choice" else "sign") \
                or not re.fullmatch(r"[a-z]{3}", values["lang"]) or not re.fullmatch(r"0|[1-9][0-9]*", values["elapsedSeconds"]):
            return 400, problem(400, "Bad request: not a device link of a running session"), entry
        protocol = digest = interactions = ""
        if session.kind == "signature":
            protocol = session.body["signatureProtocol"]
            digest = session.body["signatureProtocolParameters"]["digest"]
            interactions = session.body["interactions"]
        wanted = auth_code(session.secret, self.scheme_name, session.body["relyingPartyName"], unprotected,
                           protocol, digest, interactions)
        if not hmac.compare_digest(wanted, code):
            entry["problem"] = "authCode"
            return 400, problem(400, "Bad request: the authCode does not match"), entry
        age = time.monotonic() - session.created
        if abs(age - int(values["elapsedSeconds"])) > self.qr_max_age:
            entry["problem"] = "stale"
            return 400, problem(400, "Bad request: elapsedSeconds %s is not current (%.1f s)" % (
                values["elapsedSeconds"], age)), entry
        entry["elapsedSeconds"] = int(values["elapsedSeconds"])
        if body.get("validateOnly"):
            return 200, {}, entry
        found = self.directory.find("document/" + body["documentNumber"])
        if not found:
            return 400, problem(400, "Bad request: no such documentNumber"), entry
        if session.account is not None and found[0] is not session.account:
            return 400, problem(400, "Bad request: the session is for another account"), entry
        with self.lock:
            if session.ready_at is not None:
                return 400, problem(400, "Bad request: the session was already scanned"), entry
            session.account, session.country = found
            session.ready_at = time.monotonic() + (self.v2.confirm_after if found[0].at == "certificatechoice" else 0)
        return 200, {}, entry

    # -- session status -------------------------------------------------------------------------

    def status(self, session_id, query):
        values = urllib.parse.parse_qs(query).get("timeoutMs")
        if values:
            if not re.fullmatch(r"[0-9]{1,9}", values[0]) or not 1000 <= int(values[0]) <= 120000:
                return 400, problem(400, "timeoutMs must be 1000 to 120000")
            wait = int(values[0]) / 1000
        else:
            wait = 60.5
        with self.lock:
            session = self.sessions.get(session_id)
        now = time.monotonic()
        if session is None or now - session.created > SESSION_SECONDS:
            return 404, problem(404, "no such session")
        end = now + wait
        while (session.ready_at is None or session.ready_at > time.monotonic()) and time.monotonic() < end:
            time.sleep(0.05 if session.ready_at is None else min(0.05, max(0, session.ready_at - time.monotonic())))
        if session.ready_at is None or session.ready_at > time.monotonic():
            return 200, {"state": "RUNNING"}
        return simcommon.settle(session, self.complete, self.lock)

    def complete(self, session):
        account, kind = session.account, session.kind
        failing_here = account.at == ("certificatechoice" if kind == "certificate-choice" else "signature")
        outcome = account.outcome if failing_here else "OK"
        document = account.documents[session.country]
        if outcome == "SESSION_LOST":
            return 404, problem(404, "no such session")
        if outcome == "MALFORMED_JSON":
            return 200, b'{"state": "COMPLETE", "result": {"endResult": "OK", '
        if outcome in REFUSED_SCREENS:
            return 200, {"state": "COMPLETE", "result": {"endResult": "USER_REFUSED_INTERACTION",
                                                          "details": {"interaction": REFUSED_SCREENS[outcome]}}}
        if outcome not in ("OK", "HANG", "ADVANCED_CERTIFICATE", "MISSING_FIELDS", "WRONG_ALGORITHM", "BAD_SIGNATURE"):
            return 200, {"state": "COMPLETE", "result": {"endResult": outcome}}
        identity = self.directory.identity(account, session.country)
        answer = {"state": "COMPLETE", "result": {"endResult": "OK", "documentNumber": document},
                  "cert": {"value": identity.certificate_base64,
                           "certificateLevel": "ADVANCED" if outcome == "ADVANCED_CERTIFICATE" else "QUALIFIED"},
                  "signature": {"flowType": session.flow}}
        if outcome == "MISSING_FIELDS":
            del answer["result"]["documentNumber"]
        if kind == "certificate-choice":
            return 200, answer
        body = session.body
        interactions = json.loads(base64.b64decode(body["interactions"]))
        supported = [i for i in interactions if i["type"] in account.interactions]
        if not supported:
            return 200, {"state": "COMPLETE", "result": {"endResult": "REQUIRED_INTERACTION_NOT_SUPPORTED_BY_APP"}}
        parameters = body["signatureProtocolParameters"]
        digest = base64.b64decode(parameters["digest"])
        algorithm = parameters["signatureAlgorithm"]
        signature = {"flowType": session.flow, "signatureAlgorithm": algorithm}
        if algorithm == "rsassa-pss":
            hash_name = parameters["signatureAlgorithmParameters"]["hashAlgorithm"]
            openssl_name, length = PSS_HASHES[hash_name]
            value = identity.sign_digest_pss(digest, openssl_name)
            said = "SHA-512" if outcome == "WRONG_ALGORITHM" else hash_name
            signature["signatureAlgorithmParameters"] = {
                "hashAlgorithm": said, "maskGenAlgorithm": {"algorithm": "id-mgf1", "parameters": {"hashAlgorithm": said}},
                "saltLength": length, "trailerField": "0xbc"}
        else:
            value = identity.sign_digest(digest, PKCS1[algorithm][0])
            if outcome == "WRONG_ALGORITHM":
                signature["signatureAlgorithm"] = "sha512WithRSAEncryption"
        if outcome == "BAD_SIGNATURE":
            value = bytes([value[0] ^ 1]) + value[1:]
        signature["value"] = base64.b64encode(value).decode()
        answer["signature"] = signature
        answer["signatureProtocol"] = "RAW_DIGEST_SIGNATURE"
        answer["interactionTypeUsed"] = supported[0]["type"]
        return 200, answer
