import Foundation
import TestTools

/// A loopback HTTP(S) server that misbehaves on request, for the HTTPClient tests:
///   /status/N      answers HTTP N          /hang        accepts and never answers
///   /big/N         N bytes, with a length  /stream/N    N bytes, no length (ends at close)
///   /echo          JSON of what it got     /text        "hello", text/plain
///   /ocsp-unauthorized  an OCSPResponse with status unauthorized
/// `--tls CERT KEY` serves HTTPS.
enum TestHTTPServer {
    static let script = #"""
        import http.server, json, os, ssl, sys, threading, time

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def send(self, code, body, content_type="text/plain", length=True):
                self.send_response(code)
                self.send_header("Content-Type", content_type)
                if length:
                    self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self):
                self.route(b"")

            def do_POST(self):
                self.route(self.rfile.read(int(self.headers.get("Content-Length", "0"))))

            def route(self, body):
                parts = self.path.strip("/").split("/")
                if parts[0] == "status":
                    self.send(int(parts[1]), b"status body\n")
                elif parts[0] == "hang":
                    time.sleep(60)
                elif parts[0] == "big":
                    self.send(200, b"x" * int(parts[1]), "application/octet-stream")
                elif parts[0] == "stream":
                    self.send(200, b"y" * int(parts[1]), "application/octet-stream", length=False)
                elif parts[0] == "echo":
                    seen = {"method": self.command, "contentType": self.headers.get("Content-Type"),
                            "accept": self.headers.get("Accept"), "userAgent": self.headers.get("User-Agent"),
                            "expect": self.headers.get("Expect"), "extra": self.headers.get("X-Extra"),
                            "body": body.hex()}
                    self.send(200, json.dumps(seen).encode(), "application/json; charset=utf-8")
                elif parts[0] == "text":
                    self.send(200, b"hello", "text/plain")
                elif parts[0] == "ocsp-unauthorized":
                    self.send(200, bytes([0x30, 0x03, 0x0A, 0x01, 0x06]), "application/ocsp-response")
                else:
                    self.send(404, b"no such thing\n")

        def watch_parent(parent):
            while os.getppid() == parent:
                time.sleep(0.5)
            os._exit(0)

        threading.Thread(target=watch_parent, args=(os.getppid(),), daemon=True).start()
        http.server.ThreadingHTTPServer.daemon_threads = True
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        if len(sys.argv) == 4 and sys.argv[1] == "--tls":
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            context.load_cert_chain(sys.argv[2], sys.argv[3])
            server.socket = context.wrap_socket(server.socket, server_side=True)
        print("PORT %d" % server.server_address[1], flush=True)
        server.serve_forever()
        """#

    /// Writes the script into `folder` and starts it (HTTPS when `tls` names a certificate and key).
    static func start(in folder: String, tls: (certificate: String, key: String)? = nil) throws -> LoopbackProcess {
        let path = folder + "/test_http_server.py"
        try script.write(toFile: path, atomically: true, encoding: .utf8)
        let arguments = tls.map { ["--tls", $0.certificate, $0.key] } ?? []
        return try LoopbackProcess.start("/usr/bin/python3", [path] + arguments)
    }
}

/// A fresh temporary folder, removed by `remove()`.
struct TemporaryFolder {
    let path: String

    init(_ label: String) throws {
        path = NSTemporaryDirectory() + "asicfs-\(label)-\(getpid())-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    func remove() { try? FileManager.default.removeItem(atPath: path) }
}
