#!/usr/bin/env python3
"""RFC 3161 time-stamp and OCSP responder on loopback, for asicfs tests and the demo.

Serves a PKI made by mkpki.sh (run from its folder or give --pki):
  POST /tsa       application/timestamp-query -> application/timestamp-reply (openssl ts -reply)
  POST /ocsp      application/ocsp-request    -> application/ocsp-response   (EC responder)
  POST /ocsp-rsa  the same, signed by the RSA responder (for peers that only verify RSA)
  POST /ocsp-tm   the same, signed by the time-mark responder (its certificate names the BDOC
                  time-mark policy); every responder echoes the request's nonce, as a TM one must
  POST /ocsp-tm-test  the same, by the responder with SK's test time-mark policy
Every OCSP answer is made fresh from index.txt (a revocation shows at once). Binds 127.0.0.1 only;
prints "PORT n" once listening (--port 0 picks a free port). The PKI folder is read per request,
so the server may start before mkpki.sh fills it (that is how a test learns the port to put in
the signer's AIA). --exit-with-parent stops it when the process that started it dies, so a
crashed test leaves no server behind. Standard library only.
"""
import argparse
import http.server
import os
import subprocess
import sys
import tempfile
import threading
import time

TSA_LOCK = threading.Lock()  # openssl ts -reply shares one serial file


class Handler(http.server.BaseHTTPRequestHandler):
    pki = "."

    def log_message(self, *args):
        pass

    def _reply(self, status, body=b"", content_type="text/plain"):
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self):
        length = int(self.headers.get("Content-Length", "0"))
        if length <= 0 or length > 1 << 20:
            return self._reply(400, b"bad length\n")
        request = self.rfile.read(length)
        with tempfile.TemporaryDirectory() as tmp:
            q, r = os.path.join(tmp, "q"), os.path.join(tmp, "r")
            with open(q, "wb") as f:
                f.write(request)
            if self.path == "/tsa":
                command = ["openssl", "ts", "-reply", "-config", "pki.cnf", "-section", "tsa_config1",
                           "-queryfile", q, "-out", r]
                content_type = "application/timestamp-reply"
                lock = TSA_LOCK
            elif self.path in ("/ocsp", "/ocsp-rsa", "/ocsp-tm", "/ocsp-tm-test"):
                signer = self.path[1:]
                command = ["openssl", "ocsp", "-index", "index.txt", "-CA", "issuing.pem",
                           "-rsigner", signer + ".pem", "-rkey", signer + ".key", "-ndays", "1",
                           "-reqin", q, "-respout", r]
                content_type = "application/ocsp-response"
                lock = threading.Lock()
            else:
                return self._reply(404, b"no such service\n")
            with lock:
                done = subprocess.run(command, cwd=self.pki, capture_output=True)
            if done.returncode != 0 or not os.path.exists(r):
                return self._reply(400, done.stderr[-500:])
            with open(r, "rb") as f:
                self._reply(200, f.read(), content_type)


def watch_parent(parent):
    while os.getppid() == parent:
        time.sleep(0.5)
    os._exit(0)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--pki", default=".")
    parser.add_argument("--exit-with-parent", action="store_true")
    args = parser.parse_args()
    if args.exit_with_parent:
        threading.Thread(target=watch_parent, args=(os.getppid(),), daemon=True).start()
    Handler.pki = os.path.abspath(args.pki)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    print(f"PORT {server.server_address[1]}", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    sys.exit(main())
