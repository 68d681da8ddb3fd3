#!/usr/bin/python3
"""CSC API v1 (1.0.4.0) remote-signing simulator on loopback HTTPS, for asicfs tests and the demo.

Serves under /csc/v1/ (all POST with JSON; `info` also answers GET):
  info, auth/login (HTTP Basic), auth/revoke, credentials/list (paged with nextPageToken),
  credentials/info (certificate and chain, certInfo, authInfo), credentials/authorize (PIN for
  explicit credentials; SCAL 2 binds the SAD to the hashes; SAD expiry; multisign),
  signatures/signHash (RSA PKCS#1 v1.5; ECDSA as DER Ecdsa-Sig-Value for ecdsa-with-SHA*, as
  r||s for the BSI plain-ECDSA OIDs).
Callers authenticate with a bearer token from auth/login or, with --client-certificates, with a TLS
client certificate issued by the simulator's own client CA (authType TLS). Errors are HTTP 400
{"error": "invalid_request", "error_description": ...} with Assina's texts, and 401 for a wrong
password or a missing or unknown token. The credentials' certificates come from the test PKI of
contrib/testpki (registered "good" with its OCSP responder); some credentials misbehave on purpose
(contrib/simulators/README.md lists them).

Usage: csc_simulator.py --pki DIR [--port 0] [--folder DIR] [--client-certificates off|optional|required]
                        [--client-passphrase TEXT] [--tls-max 1.2|1.3] [--page-size 10] [--sad-seconds 300]
                        [--sign-delay 0] [--implicit-delay 0.2] [--log FILE] [--exit-with-parent]
Prints "PORT n" and "CERT path" (the TLS certificate clients pin) once listening, on 127.0.0.1 only.
Test and demo use only: nothing here is a real identity or a real service.
"""
import argparse
import base64
import http.server
import json
import os
import secrets
import ssl
import sys
import threading
import time

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, padding, utils

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import simcommon  # noqa: E402

HASHES = {"sha256": (hashes.SHA256, 32), "sha384": (hashes.SHA384, 48), "sha512": (hashes.SHA512, 64)}
HASH_OIDS = {"2.16.840.1.101.3.4.2.1": "sha256", "2.16.840.1.101.3.4.2.2": "sha384", "2.16.840.1.101.3.4.2.3": "sha512"}
RSA_ENCRYPTION = "1.2.840.113549.1.1.1"
RSA_OIDS = {"1.2.840.113549.1.1.11": "sha256", "1.2.840.113549.1.1.12": "sha384", "1.2.840.113549.1.1.13": "sha512"}
ECDSA_OIDS = {"1.2.840.10045.4.3.2": "sha256", "1.2.840.10045.4.3.3": "sha384", "1.2.840.10045.4.3.4": "sha512"}
# BSI TR-03111 ecdsa-plain-SHA*: the value is r||s, not DER.
PLAIN_ECDSA_OIDS = {"0.4.0.127.0.7.1.1.4.1.3": "sha256", "0.4.0.127.0.7.1.1.4.1.4": "sha384",
                    "0.4.0.127.0.7.1.1.4.1.5": "sha512"}
CURVE_OIDS = {"P-256": "1.2.840.10045.3.1.7", "P-384": "1.3.132.0.34"}
SERIAL_BASE = 0xC5C000  # this simulator's range in the test CA's index.txt
PIN_TRIES = 3
METHODS = ["auth/login", "auth/revoke", "credentials/list", "credentials/info", "credentials/authorize",
           "signatures/signHash"]


class Credential:
    """One signing key of a user. `behaviour` makes it misbehave on purpose (see the README)."""

    def __init__(self, ident, key, auth_mode="implicit", scal="1", pin=None, algos=None, multisign=1,
                 behaviour=None, description=""):
        self.id, self.key_type, self.auth_mode, self.scal, self.pin = ident, key, auth_mode, scal, pin
        self.multisign, self.behaviour, self.description = multisign, behaviour, description
        if algos is None:
            algos = list(RSA_OIDS) + [RSA_ENCRYPTION] if key == "rsa" else list(ECDSA_OIDS)
        self.algos = algos
        self.failed_pins = 0
        self.identity = self.other_key = None


# Users: password, the CN of their TLS client certificate, and their credentials.
def make_users():
    return {
        "alice": {"password": "alice-password", "credentials": [
            Credential("alice-rsa", "rsa", description="RSA 2048, implicit, SCAL 1"),
            Credential("alice-ec", "P-384", auth_mode="explicit", scal="2", pin="918273645",
                       description="EC P-384, PIN, SCAL 2"),
            Credential("alice-ec-plain", "P-256", algos=list(PLAIN_ECDSA_OIDS),
                       description="EC P-256, plain ECDSA (r||s) only"),
            Credential("alice-wrong-key", "rsa", behaviour="wrong-key", description="signs with another key"),
            Credential("alice-empty", "rsa", behaviour="empty", description="answers an empty signatures list"),
            Credential("alice-hang", "rsa", behaviour="hang", description="signHash never answers"),
            Credential("alice-expired-sad", "rsa", behaviour="expired-sad", description="its SADs expire at once"),
            Credential("alice-bad-request", "rsa", behaviour="bad-request",
                       description="authorize answers 400 invalid_request"),
        ]},
        "bob": {"password": "bob-password", "credentials": [
            Credential("bob-ec", "P-384", auth_mode="explicit", scal="1", pin="55501234", multisign=2,
                       description="EC P-384, PIN, SCAL 1, multisign 2"),
        ]},
    }


NAMES = {"alice": ("MÄGI", "ALICE-ÕIE", "48001010005"), "bob": ("TAMM", "BOB", "38001010009")}


class Service:
    def __init__(self, users, args):
        self.users, self.args = users, args
        self.credentials = {c.id: (user, c) for user, entry in users.items() for c in entry["credentials"]}
        self.tokens, self.sads = {}, {}
        self.lock = threading.Lock()

    def log(self, entry):
        if self.args.log:
            entry["time"] = time.time()
            with self.lock, open(self.args.log, "a") as out:
                out.write(json.dumps(entry, sort_keys=True) + "\n")

    # -- authentication ----------------------------------------------------------------------

    def caller(self, headers, client_user):
        """(user, how) for a request that needs authorisation, or (None, answer) to refuse it."""
        authorization = headers.get("Authorization", "")
        if authorization.startswith("Bearer "):
            with self.lock:
                entry = self.tokens.get(authorization[7:])
            if entry is None or entry[1] < time.monotonic():
                return None, (401, {"error": "invalid_token", "error_description": "The access token is not valid"})
            return entry[0], "bearer"
        if authorization:
            return None, (401, {"error": "invalid_token", "error_description": "Unsupported authorization scheme"})
        if client_user:
            return client_user, "tls"
        return None, (401, {"error": "invalid_token", "error_description": "Authentication is required"})

    def login(self, headers, body):
        authorization = headers.get("Authorization", "")
        try:
            user, _, password = base64.b64decode(authorization[6:], validate=True).decode().partition(":") \
                if authorization.startswith("Basic ") else ("", "", None)
        except ValueError:
            user, password = "", None
        entry = self.users.get(user)
        if entry is None or password is None or not secrets.compare_digest(entry["password"], password):
            return 401, {"error": "access_denied", "error_description": "Invalid username or password"}, None
        token = secrets.token_urlsafe(24)
        with self.lock:
            self.tokens[token] = (user, time.monotonic() + 3600)
        answer = {"access_token": token, "expires_in": 3600}
        if body.get("rememberMe") is True:
            answer["refresh_token"] = secrets.token_urlsafe(24)
        return 200, answer, user

    def revoke(self, body):
        token = body.get("token")
        if not isinstance(token, str):
            return bad("Missing (or invalid type) string parameter token")
        with self.lock:
            self.tokens.pop(token, None)
        return 204, None

    # -- credentials -------------------------------------------------------------------------

    def list(self, user, how, body):
        if "userID" in body and how == "bearer":
            return bad("userID parameter MUST be null")
        ids = [c.id for c in self.users[user]["credentials"]]
        size = self.args.page_size
        if "maxResults" in body:
            if not isinstance(body["maxResults"], int) or body["maxResults"] < 1:
                return bad("Invalid parameter maxResults")
            size = min(size, body["maxResults"])
        start = 0
        if "pageToken" in body:
            token = body["pageToken"]
            if not (isinstance(token, str) and token.startswith("page-") and token[5:].isdigit()
                    and 0 < int(token[5:]) < len(ids)):
                return bad("Invalid parameter pageToken")
            start = int(token[5:])
        answer = {"credentialIDs": ids[start:start + size]}
        if start + size < len(ids):
            answer["nextPageToken"] = "page-%d" % (start + size)
        return 200, answer

    def credential(self, user, body):
        """(credential, None) or (None, error answer) for the body's credentialID."""
        ident = body.get("credentialID")
        if not isinstance(ident, str):
            return None, bad("Missing (or invalid type) string parameter credentialID")
        found = self.credentials.get(ident)
        if found is None or found[0] != user:
            return None, bad("Invalid parameter credentialID")
        return found[1], None

    def info(self, user, body):
        credential, error = self.credential(user, body)
        if error:
            return error
        which = body.get("certificates", "single")
        if which not in ("none", "single", "chain"):
            return bad("Invalid parameter certificates")
        identity = credential.identity
        chain = [identity.der] + ([self.issuing_der] if which == "chain" else [])
        cert = {"status": "valid", "certificates": [] if which == "none" else [base64.b64encode(d).decode() for d in chain]}
        if body.get("certInfo") is True:
            parsed = x509.load_der_x509_certificate(identity.der)
            cert.update({"issuerDN": parsed.issuer.rfc4514_string(), "subjectDN": parsed.subject.rfc4514_string(),
                         "serialNumber": "%x" % parsed.serial_number,
                         "validFrom": parsed.not_valid_before.strftime("%Y%m%d%H%M%SZ"),
                         "validTo": parsed.not_valid_after.strftime("%Y%m%d%H%M%SZ")})
        key = {"status": "enabled", "algo": credential.algos, "len": 2048 if credential.key_type == "rsa" else
               int(credential.key_type[2:])}
        if credential.key_type in CURVE_OIDS:
            key["curve"] = CURVE_OIDS[credential.key_type]
        answer = {"description": credential.description, "key": key, "cert": cert, "authMode": credential.auth_mode,
                  "SCAL": credential.scal, "multisign": credential.multisign, "lang": "en-US"}
        if credential.auth_mode == "explicit" and body.get("authInfo") is True:
            answer["PIN"] = {"presence": "true", "format": "N", "label": "PIN",
                             "description": "The PIN of the signing key"}
            answer["OTP"] = {"presence": "false"}
        return 200, answer

    def authorize(self, user, body):
        credential, error = self.credential(user, body)
        if error:
            return error
        if credential.behaviour == "bad-request":
            return bad("The credential is suspended by the operator (test)")
        count = body.get("numSignatures")
        if not isinstance(count, int) or isinstance(count, bool) or count < 1:
            return bad("Missing (or invalid type) integer parameter numSignatures")
        if count > credential.multisign:
            return bad("Numbers of signatures is too high")
        bound = None
        if credential.scal == "2":
            digests = decode_hashes(body.get("hash"))
            if isinstance(digests, tuple):
                return digests
            if len(digests) != count:
                return bad("Invalid parameter hash")
            bound = set(digests)
        if credential.auth_mode == "explicit":
            if credential.failed_pins >= PIN_TRIES:
                return bad("PIN locked")
            pin = body.get("PIN")
            if not isinstance(pin, str):
                return bad("Missing (or invalid type) string parameter PIN")
            if not secrets.compare_digest(pin.encode(), credential.pin.encode()):
                credential.failed_pins += 1
                return bad("PIN locked" if credential.failed_pins >= PIN_TRIES else "The PIN is invalid")
            credential.failed_pins = 0
        else:
            time.sleep(self.args.implicit_delay)  # the user approves elsewhere (RSSP-driven)
        lifetime = 0 if credential.behaviour == "expired-sad" else self.args.sad_seconds
        sad = secrets.token_urlsafe(32)
        with self.lock:
            self.sads[sad] = {"credential": credential.id, "hashes": bound, "left": count,
                              "expires": time.monotonic() + lifetime}
        return 200, {"SAD": sad, "expiresIn": lifetime}

    def sign_hash(self, user, body):
        credential, error = self.credential(user, body)
        if error:
            return error
        sad_text = body.get("SAD")
        if not isinstance(sad_text, str):
            return bad("Missing (or invalid type) string parameter SAD")
        digests = decode_hashes(body.get("hash"))
        if isinstance(digests, tuple):
            return digests
        algo = body.get("signAlgo")
        if not isinstance(algo, str):
            return bad("Missing (or invalid type) string parameter signAlgo")
        if algo not in credential.algos:
            return bad("Invalid parameter signAlgo")
        hash_name = (RSA_OIDS.get(algo) or ECDSA_OIDS.get(algo) or PLAIN_ECDSA_OIDS.get(algo))
        if algo == RSA_ENCRYPTION:
            hash_algo = body.get("hashAlgo")
            if not isinstance(hash_algo, str):
                return bad("Missing (or invalid type) string parameter hashAlgo")
            hash_name = HASH_OIDS.get(hash_algo)
            if hash_name is None:
                return bad("Invalid parameter hashAlgo")
        if any(len(d) != HASHES[hash_name][1] for d in digests):
            return bad("Invalid digest value length")
        with self.lock:
            sad = self.sads.get(sad_text)
            if sad is None or sad["credential"] != credential.id:
                return bad("Invalid parameter SAD")
            if sad["expires"] <= time.monotonic():
                del self.sads[sad_text]
                return bad("SAD expired")
            if sad["hashes"] is not None and not set(digests) <= sad["hashes"]:
                return bad("Hash is not authorized by the SAD")
            if len(digests) > sad["left"]:
                return bad("Numbers of signatures is too high")
            sad["left"] -= len(digests)
            if sad["left"] == 0:
                del self.sads[sad_text]
        time.sleep(self.args.sign_delay)
        if credential.behaviour == "hang":
            time.sleep(3600)
        if credential.behaviour == "empty":
            return 200, {"signatures": []}
        key = credential.other_key if credential.behaviour == "wrong-key" else load_key(credential.identity.key)
        values = [sign(key, d, hash_name, algo in PLAIN_ECDSA_OIDS) for d in digests]
        return 200, {"signatures": [base64.b64encode(v).decode() for v in values]}


def bad(description):
    return 400, {"error": "invalid_request", "error_description": description}


def decode_hashes(value):
    """The Base64 hashes of a request, or an error answer (a tuple)."""
    if not isinstance(value, list) or not value or not all(isinstance(v, str) for v in value):
        return bad("Missing (or invalid type) array parameter hash")
    try:
        return [base64.b64decode(v, validate=True) for v in value]
    except ValueError:
        return bad("Invalid Base64 hash string parameter")


def load_key(path):
    with open(path, "rb") as handle:
        return serialization.load_pem_private_key(handle.read(), password=None)


def sign(key, digest, hash_name, plain):
    algorithm = utils.Prehashed(HASHES[hash_name][0]())
    if isinstance(key, ec.EllipticCurvePrivateKey):
        der = key.sign(digest, ec.ECDSA(algorithm))
        if not plain:
            return der
        r, s = utils.decode_dss_signature(der)
        size = (key.curve.key_size + 7) // 8
        return r.to_bytes(size, "big") + s.to_bytes(size, "big")
    return key.sign(digest, padding.PKCS1v15(), algorithm)


# -- keys, certificates and the client CA -------------------------------------------------------

def prepare(service, pki, folder, passphrase):
    """Makes (once, kept in folder) each credential's key and certificate from the test PKI, a key
    for the wrong-key credential, the client CA and the client identities."""
    # A person's credentials share one subject: the OCSP responder's index must allow that.
    attributes = os.path.join(pki, "index.txt.attr")
    if not os.path.exists(attributes):
        with open(attributes, "w") as out:
            out.write("unique_subject = no\n")
    index = 0
    for user, entry in service.users.items():
        surname, given, code = NAMES[user]
        for credential in entry["credentials"]:
            subject = "/C=EE/SN=%s/GN=%s/serialNumber=PNOEE-%s/CN=%s,%s,%s" % (surname, given, code, surname, given, code)
            key = "rsa" if credential.key_type == "rsa" else credential.key_type
            credential.identity = simcommon.Identity(pki, folder, "csc-" + credential.id, subject, key, SERIAL_BASE + index)
            index += 1
            if credential.behaviour == "wrong-key":
                other = os.path.join(folder, "csc-%s-other.key" % credential.id)
                if not os.path.exists(other):
                    simcommon.openssl("genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048", "-out", other)
                credential.other_key = load_key(other)
    service.issuing_der = simcommon.openssl("x509", "-in", os.path.join(pki, "issuing.pem"), "-outform", "DER")
    ca_key, ca = os.path.join(folder, "client-ca.key"), os.path.join(folder, "client-ca.pem")
    if not os.path.exists(ca):
        simcommon.openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                          "-keyout", ca_key, "-out", ca, "-days", "30", "-subj", "/O=asicfs test/CN=TEST of CSC client CA",
                          "-addext", "basicConstraints=critical,CA:true", "-addext", "keyUsage=critical,keyCertSign")
    for user in service.users:
        client_identity(folder, user, passphrase, (ca, ca_key))
    # Not issued by the client CA: the service refuses it.
    client_identity(folder, "stranger", passphrase, None)
    return ca


def client_identity(folder, name, passphrase, issuer):
    """`<name>-client.p12`: a TLS client key and certificate (CN=name), protected by passphrase."""
    p12 = os.path.join(folder, name + "-client.p12")
    if os.path.exists(p12):
        return
    key, cert = os.path.join(folder, name + "-client.key"), os.path.join(folder, name + "-client.pem")
    simcommon.openssl("genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", key)
    extensions = ["-addext", "extendedKeyUsage=clientAuth", "-addext", "keyUsage=critical,digitalSignature"]
    if issuer:
        csr = simcommon.openssl("req", "-new", "-key", key, "-subj", "/O=asicfs test/CN=" + name)
        extfile = os.path.join(folder, "client-ext.cnf")
        with open(extfile, "w") as out:
            out.write("extendedKeyUsage=clientAuth\nkeyUsage=critical,digitalSignature\n")
        simcommon.openssl("x509", "-req", "-CA", issuer[0], "-CAkey", issuer[1], "-set_serial",
                          str(secrets.randbits(40)), "-days", "30", "-extfile", extfile, "-out", cert, data=csr)
        chain = ["-certfile", issuer[0]]
    else:
        simcommon.openssl("req", "-x509", "-key", key, "-subj", "/O=asicfs test/CN=" + name, "-days", "30",
                          "-out", cert, *extensions)
        chain = []
    # The passphrase goes in on stdin, never on a command line.
    simcommon.openssl("pkcs12", "-export", "-inkey", key, "-in", cert, *chain, "-name", name,
                      "-passout", "stdin", "-out", p12, data=(passphrase + "\n").encode())


# -- HTTP ---------------------------------------------------------------------------------------

class Server(http.server.ThreadingHTTPServer):
    """HTTPS with the TLS handshake in each connection's own thread (a stalled client cannot hold
    up the others)."""
    daemon_threads = True

    def __init__(self, handler, context, service):
        super().__init__(("127.0.0.1", service.args.port), handler)
        self.context, self.service = context, service

    def finish_request(self, request, client_address):
        try:
            request.settimeout(30)
            tls = self.context.wrap_socket(request, server_side=True)
        except (ssl.SSLError, OSError) as error:
            self.service.log({"event": "tls-handshake-failed", "reason": str(error)[:200]})
            return
        try:
            tls.settimeout(None)
            self.RequestHandlerClass(tls, client_address, self)
        finally:
            tls.close()


def make_handler(service):
    class Handler(simcommon.JSONHandler):
        def client_user(self):
            """The user whose TLS client certificate this connection presented (CN), or None."""
            peer = self.connection.getpeercert() if hasattr(self.connection, "getpeercert") else None
            for entry in (peer or {}).get("subject", ()):
                for name, value in entry:
                    if name == "commonName" and value in service.users:
                        return value
            return None

        def do_GET(self):
            if self.path.partition("?")[0] == "/csc/v1/info":
                return self.reply("info", None, 200, self.info_answer())
            self.reply(self.path, None, 404, {"error": "invalid_request", "error_description": "Unknown method"})

        def info_answer(self):
            auth = ["basic"] + (["TLS"] if service.args.client_certificates != "off" else [])
            return {"specs": "1.0.4.0", "name": "asicfs CSC simulator", "logo": "", "region": "EE", "lang": "en-US",
                    "description": "A loopback remote signing service for tests (not a real service)",
                    "authType": auth, "methods": METHODS}

        def do_POST(self):
            path = self.path.partition("?")[0]
            method = path[len("/csc/v1/"):] if path.startswith("/csc/v1/") else None
            body = self.read_json()
            if method == "info":
                return self.reply(method, None, 200, self.info_answer())
            if method not in METHODS:
                return self.reply(path, None, 404, {"error": "invalid_request", "error_description": "Unknown method"})
            if body is None:
                return self.reply(method, None, *bad("The request body is not a JSON object"))
            client = self.client_user()
            if method == "auth/login":
                status, answer, user = service.login(self.headers, body)
                return self.reply(method, {"user": user, "how": "basic", "client": client}, status, answer)
            user, how = service.caller(self.headers, client)
            if user is None:
                return self.reply(method, {"how": "none", "client": client}, *how)
            entry = {"user": user, "how": how, "client": client, "credential": body.get("credentialID")}
            if method == "auth/revoke":
                return self.reply(method, entry, *service.revoke(body))
            if method == "credentials/list":
                entry["pageToken"] = body.get("pageToken")
                return self.reply(method, entry, *service.list(user, how, body))
            handler = {"credentials/info": service.info, "credentials/authorize": service.authorize,
                       "signatures/signHash": service.sign_hash}[method]
            if method == "credentials/authorize":
                entry["hashes"] = len(body.get("hash") or [])
            self.reply(method, entry, *handler(user, body))

        def reply(self, method, entry, status, answer):
            record = dict(entry or {})
            record.update({"method": method, "status": status})
            if isinstance(answer, dict) and "error_description" in answer:
                record["error"] = answer["error_description"]
            service.log(record)
            if answer is None:
                self.send_response(status)
                self.send_header("Content-Length", "0")
                self.end_headers()
            else:
                self.answer(status, answer)

    return Handler


def main():
    parser = argparse.ArgumentParser(description="CSC API v1 remote signing simulator (test use only)")
    parser.add_argument("--pki", required=True, help="test PKI folder made by contrib/testpki/mkpki.sh")
    parser.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (0: any free one)")
    parser.add_argument("--folder", help="keys, certificates, client identities and tls.pem (default PKI/csc)")
    parser.add_argument("--client-certificates", choices=("off", "optional", "required"), default="off",
                        help="ask for a TLS client certificate from the simulator's client CA (authType TLS)")
    parser.add_argument("--client-passphrase", default="client-secret", help="passphrase of the *-client.p12 files")
    parser.add_argument("--tls-max", choices=("1.2", "1.3"), default="1.3", help="highest TLS version offered")
    parser.add_argument("--page-size", type=int, default=10, help="most credential IDs per credentials/list page")
    parser.add_argument("--sad-seconds", type=int, default=300, help="lifetime of a SAD (expiresIn)")
    parser.add_argument("--sign-delay", type=float, default=0, help="seconds signHash waits before answering")
    parser.add_argument("--implicit-delay", type=float, default=0.2,
                        help="seconds an implicit credential's authorize takes (the user approving elsewhere)")
    parser.add_argument("--log", help="append one JSON line per request (method, user, how, status; no secrets)")
    parser.add_argument("--exit-with-parent", action="store_true", help="quit when the starting process dies")
    args = parser.parse_args()
    folder = args.folder or os.path.join(args.pki, "csc")
    os.makedirs(folder, exist_ok=True)
    service = Service(make_users(), args)
    client_ca = prepare(service, os.path.abspath(args.pki), folder, args.client_passphrase)

    cert, key = simcommon.make_tls_certificate(folder)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    if args.tls_max == "1.2":
        context.maximum_version = ssl.TLSVersion.TLSv1_2
    if args.client_certificates != "off":
        context.load_verify_locations(client_ca)
        context.verify_mode = ssl.CERT_REQUIRED if args.client_certificates == "required" else ssl.CERT_OPTIONAL
    server = Server(make_handler(service), context, service)
    simcommon.announce_and_serve(server, cert, args.exit_with_parent)


if __name__ == "__main__":
    main()
