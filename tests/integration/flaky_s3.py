#!/usr/bin/env python3
"""A stand-in S3 endpoint that answers the first two tries of every key with 503 SlowDown, and
the third with 200: for testing retries. Usage: flaky_s3.py PORT_FILE (writes the port it took)."""
import http.server
import sys

tries = {}


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def answer(self):
        length = int(self.headers.get("Content-Length", 0))
        self.rfile.read(length)
        tries[self.path] = tries.get(self.path, 0) + 1
        if tries[self.path] <= 2:
            body = b"<?xml version=\"1.0\"?><Error><Code>SlowDown</Code><Message>Please reduce your request rate.</Message></Error>"
            self.send_response(503)
        else:
            body = b""
            self.send_response(200)
            self.send_header("ETag", '"0123456789abcdef0123456789abcdef"')
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_PUT = answer
    do_GET = answer


server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
with open(sys.argv[1], "w") as f:
    f.write(str(server.server_address[1]))
server.serve_forever()
