"""Shared parts of the asicfs signing-service simulators (Mobile-ID, Smart-ID): an HTTPS server on
127.0.0.1 with its own self-signed certificate (the one clients must pin), demo identities whose
certificates the test PKI of contrib/testpki issues (and whose OCSP status it answers "good"), raw
signing with their keys, and JSON helpers. Standard library plus the openssl command only.

Test and demo use only; nothing here is a real identity or a real service.
"""
import base64
import datetime
import http.server
import json
import os
import secrets
import ssl
import subprocess
import sys
import tempfile
import threading
import uuid


def openssl(*args, data=None):
    result = subprocess.run(["openssl", *args], input=data, capture_output=True)
    if result.returncode != 0:
        raise RuntimeError("openssl %s failed: %s" % (args[0], result.stderr.decode(errors="replace")))
    return result.stdout


def make_tls_certificate(folder):
    """A self-signed P-256 server certificate for 127.0.0.1/localhost: (cert path, key path)."""
    cert, key = os.path.join(folder, "tls.pem"), os.path.join(folder, "tls.key")
    if not os.path.exists(cert):
        openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                "-keyout", key, "-out", cert, "-days", "30", "-subj", "/CN=localhost",
                "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost")
    return cert, key


class Identity:
    """A demo person with a signing certificate issued by the test PKI's issuing CA."""

    def __init__(self, pki, folder, name, subject, key_type, serial):
        self.name = name
        self.key = os.path.join(folder, name + ".key")
        self.pem = os.path.join(folder, name + ".pem")
        if not os.path.exists(self.pem):
            if key_type == "rsa":
                openssl("genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048", "-out", self.key)
            else:
                openssl("genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:" + key_type, "-out", self.key)
            csr = openssl("req", "-new", "-config", os.path.join(pki, "pki.cnf"), "-key", self.key,
                          "-subj", subject, "-utf8")
            with tempfile.NamedTemporaryFile(suffix=".csr") as request:
                request.write(csr)
                request.flush()
                openssl("x509", "-req", "-in", request.name, "-CA", os.path.join(pki, "issuing.pem"),
                        "-CAkey", os.path.join(pki, "issuing.key"), "-set_serial", str(serial), "-days", "365",
                        "-extfile", os.path.join(pki, "pki.cnf"), "-extensions", "signer_ext", "-out", self.pem)
            register_good(pki, self.pem, serial)
        self.der = openssl("x509", "-in", self.pem, "-outform", "DER")
        self.is_rsa = key_type == "rsa"

    @property
    def certificate_base64(self):
        return base64.b64encode(self.der).decode()

    def sign_digest(self, digest, hash_name):
        """The raw signature a card or phone returns: RSA PKCS#1 v1.5 over DigestInfo(digest), or
        ECDSA as r||s padded to the curve size (never DER)."""
        if self.is_rsa:
            return openssl("pkeyutl", "-sign", "-inkey", self.key, "-pkeyopt", "digest:" + hash_name,
                           "-pkeyopt", "rsa_padding_mode:pkcs1", data=digest)
        der = openssl("pkeyutl", "-sign", "-inkey", self.key, data=digest)
        return ecdsa_der_to_raw(der, self.field_bytes())

    def sign_digest_pss(self, digest, hash_name):
        """RSASSA-PSS over the digest as Smart-ID v3 makes it: MGF1 with the same hash, salt = hash length."""
        return openssl("pkeyutl", "-sign", "-inkey", self.key, "-pkeyopt", "digest:" + hash_name,
                       "-pkeyopt", "rsa_padding_mode:pss", "-pkeyopt", "rsa_pss_saltlen:digest",
                       "-pkeyopt", "rsa_mgf1_md:" + hash_name, data=digest)

    def field_bytes(self):
        text = openssl("pkey", "-in", self.key, "-noout", "-text").decode()
        return 32 if "prime256v1" in text or "P-256" in text else (48 if "secp384r1" in text or "P-384" in text else 66)


def ecdsa_der_to_raw(der, size):
    # SEQUENCE { INTEGER r, INTEGER s }
    def read_int(data, offset):
        assert data[offset] == 0x02
        length = data[offset + 1]
        value = data[offset + 2:offset + 2 + length]
        return int.from_bytes(value, "big"), offset + 2 + length
    offset = 2 if der[1] < 0x80 else 3
    r, offset = read_int(der, offset)
    s, _ = read_int(der, offset)
    return r.to_bytes(size, "big") + s.to_bytes(size, "big")


def register_good(pki, pem, serial):
    """Adds the certificate to the test CA's index.txt as valid, so the OCSP responder says good."""
    end = openssl("x509", "-in", pem, "-noout", "-enddate").decode().strip().split("=", 1)[1]
    expiry = datetime.datetime.strptime(end, "%b %d %H:%M:%S %Y %Z").strftime("%y%m%d%H%M%SZ")
    subject = openssl("x509", "-in", pem, "-noout", "-subject", "-nameopt", "compat,utf8").decode().strip()
    subject = subject.split("=", 1)[1] if subject.startswith("subject=") else subject
    with open(os.path.join(pki, "index.txt"), "a") as index:
        index.write("V\t%s\t\t%X\tunknown\t%s\n" % (expiry, serial, subject))


def now_text():
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S")


def trace_id():
    return secrets.token_hex(8)


def new_session_id():
    return str(uuid.uuid4())


class JSONHandler(http.server.BaseHTTPRequestHandler):
    """Reads JSON bodies and writes JSON answers; subclasses implement do_GET/do_POST."""
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def read_json(self):
        length = int(self.headers.get("Content-Length", "0"))
        raw = self.rfile.read(length) if length else b""
        try:
            value = json.loads(raw.decode("utf-8")) if raw else None
        except (UnicodeDecodeError, ValueError):
            return None
        return value if isinstance(value, dict) else None

    def answer(self, status, body):
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json;charset=UTF-8")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def refuse_method(self):
        self.answer(405, {"error": "Method Not Allowed", "time": now_text(), "traceId": trace_id()})

    do_PUT = do_DELETE = do_PATCH = refuse_method


def settle(session, complete, lock):
    """The session's end result, made once: `complete` runs outside the lock (the first use of an
    account makes its key and certificate), and the first result stored wins."""
    if session.status is None:
        result = complete(session)
        with lock:
            if session.status is None:
                session.status = result
    return session.status


def serve(handler_class, folder, port, exit_with_parent=False):
    """Serves HTTPS on 127.0.0.1:port (0 = any free port) with the folder's self-signed certificate;
    prints "PORT n" and "CERT path" once listening."""
    cert, key = make_tls_certificate(folder)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", port), handler_class)
    server.daemon_threads = True
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    announce_and_serve(server, cert, exit_with_parent)
    sys.exit(0)


def announce_and_serve(server, cert, exit_with_parent):
    """Prints PORT and CERT for the test harness and serves until interrupted; with
    exit_with_parent, quits when the process that started it is gone."""
    if exit_with_parent:
        parent = os.getppid()

        def watch():
            import time
            while os.getppid() == parent:
                time.sleep(0.5)
            os._exit(0)
        threading.Thread(target=watch, daemon=True).start()
    print("PORT %d" % server.server_address[1], flush=True)
    print("CERT %s" % cert, flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
