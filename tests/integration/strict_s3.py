#!/usr/bin/env python3
"""A strict S3 test server: what a careful real endpoint checks, on loopback, from Python's
standard library only. It verifies SigV4 signatures with the secret (strict_s3_auth.py), refuses
what AWS refuses or a stricter server would (unsigned or unknown x-amz-* headers, a form
Content-Type on an S3 request, chunked bodies, a missing Content-Length, a range past the end,
parts out of order, too small or numbered past 10,000), answers with AWS's XML error documents
(strict_s3_store.py keeps the objects, in a folder), and injects AWS's bad days on demand
(strict_s3_faults.py).

    strict_s3.py --directory D --port-file F --access-key K --secret S --bucket B [--region R]
                 [--port P] [--also-port P ...] [--tls CERT KEY]

--also-port serves the same objects on more ports: several endpoints of one store, as a
multi-endpoint S3 service has (each request's record says which port took it).

Control requests, unsigned, under /__strict__/ (no bucket can have that name):
  POST /__strict__/faults    add fault rules (JSON)    DELETE: remove them    GET: rules, counts
  GET  /__strict__/log       the S3 requests answered  DELETE: forget them
  GET  /__strict__/uploads   the multipart uploads in progress
  GET  /__strict__/object?bucket=B&key=K   an object's size, ETag and Content-Type
Path-style addressing only (http://host/bucket/key)."""
import argparse
import http.server
import json
import os
import socket
import ssl
import struct
import sys
import threading
import time
import urllib.parse
import uuid
from xml.sax.saxutils import escape

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from strict_s3_auth import AuthError, check_payload, decoded_path, query_pairs, verify  # noqa: E402
from strict_s3_faults import Faults  # noqa: E402
from strict_s3_store import S3Error, Store, http_date  # noqa: E402

# x-amz-* request headers S3 knows besides x-amz-meta-*, x-amz-checksum-* and
# x-amz-server-side-encryption*: any other is refused, so a misspelt header does not pass here.
KNOWN_AMZ = {"x-amz-date", "x-amz-content-sha256", "x-amz-security-token", "x-amz-acl", "x-amz-storage-class",
             "x-amz-expected-bucket-owner", "x-amz-request-payer", "x-amz-sdk-checksum-algorithm", "x-amz-tagging",
             "x-amz-decoded-content-length", "x-amz-copy-source", "x-amz-copy-source-range",
             "x-amz-website-redirect-location", "x-amz-object-ownership", "x-amz-bucket-object-lock-enabled"}
FORM = "application/x-www-form-urlencoded"
XML_TYPES = {"application/xml", "text/xml"}


def operation(method, key, query):
    """The S3 operation a path-style request names, or None."""
    if key is None:
        return {("HEAD", False): "HeadBucket", ("GET", True): "ListMultipartUploads", ("GET", False): "ListObjectsV2",
                ("PUT", False): "CreateBucket"}.get((method, "uploads" in query))
    for m, name, op in (("POST", "uploads", "CreateMultipartUpload"), ("POST", "uploadId", "CompleteMultipartUpload"),
                        ("PUT", "uploadId", "UploadPart"), ("DELETE", "uploadId", "AbortMultipartUpload")):
        if method == m and name in query:
            return op
    return {"GET": "GetObject", "HEAD": "HeadObject", "PUT": "PutObject", "DELETE": "DeleteObject"}.get(method)


def check_headers(op, method, headers):
    """What a strict endpoint refuses before doing anything (400 InvalidArgument)."""
    content_type = (headers.get("Content-Type") or "").split(";")[0].strip().lower()
    if content_type == FORM:
        raise S3Error(400, "InvalidArgument", f"Content-Type {FORM} is an HTML form's, not an S3 request's (a client "
                      "library's default for a POST: S3 would keep it as the object's type)",
                      ArgumentName="Content-Type", ArgumentValue=content_type)
    if op == "CompleteMultipartUpload" and content_type and content_type not in XML_TYPES:
        raise S3Error(400, "InvalidArgument", "CompleteMultipartUpload's body is XML", ArgumentName="Content-Type",
                      ArgumentValue=content_type)
    for name in headers.keys():
        n = name.lower()
        if n.startswith("x-amz-") and n not in KNOWN_AMZ and not n.startswith(
                ("x-amz-meta-", "x-amz-checksum-", "x-amz-server-side-encryption")):
            raise S3Error(400, "InvalidArgument", f"Unknown header {name}", ArgumentName=name)
    if headers.get("Range") is not None and method not in ("GET", "HEAD"):
        raise S3Error(400, "InvalidArgument", "Range is for GET and HEAD", ArgumentName="Range")
    expect = headers.get("Expect")
    if expect is not None and expect.lower() != "100-continue":
        raise S3Error(417, "ExpectationFailed", f"Expect: {expect} is not supported")


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "StrictS3"
    sys_version = ""
    disable_nagle_algorithm = True

    def log_message(self, *args):
        pass

    def do_any(self):
        raw_path, _, raw_query = self.path.partition("?")
        if raw_path.startswith("/__strict__/"):
            return self.control(raw_path[len("/__strict__/"):], raw_query)
        self.request_id = uuid.uuid4().hex[:16].upper()
        # A request without a body can be answered before it is read; one with a body only after.
        self.body_read = not self.headers.get("Transfer-Encoding") and int(self.headers.get("Content-Length") or 0) == 0
        record = {"method": self.command, "target": self.path, "content_type": self.headers.get("Content-Type"),
                  "range": self.headers.get("Range"), "op": None, "key": None, "port": self.server.server_address[1]}
        self.record = record
        try:
            try:
                path = decoded_path(raw_path)
            except UnicodeDecodeError:
                raise S3Error(400, "InvalidURI", "Couldn't parse the specified URI.")
            bucket, slash, key = path[1:].partition("/")
            key = key if slash else None
            query = dict(query_pairs(raw_query))
            op = operation(self.command, key, query)
            record.update(op=op, bucket=bucket, key=key)
            verify(self.command, raw_path, raw_query, self.headers, self.server.keys, self.server.region)
            check_headers(op, self.command, self.headers)
            if op is None:
                raise S3Error(405, "MethodNotAllowed", "The specified method is not allowed against this resource.")
            rule = self.server.faults.pick(op, key)
            record["fault"] = rule.fault if rule else None
            body = self.read_body(rule)
            check_payload(self.headers, body)
            if rule and rule.fault == "delay":
                time.sleep(rule.seconds)
            if rule and rule.fault in ("slow_down", "throttle"):
                raise S3Error(503, "SlowDown", "Please reduce your request rate.", retry_after=rule.retry_after)
            if rule and rule.fault == "internal_error":
                raise S3Error(500, "InternalError", "We encountered an internal error. Please try again.")
            if rule and rule.fault == "late_error":
                record["status"] = 200
                return self.error(S3Error(200, "InternalError", "We encountered an internal error. Please try again."))
            if rule and rule.fault == "no_such_upload":
                raise S3Error(404, "NoSuchUpload", "The specified upload does not exist.", UploadId=query.get("uploadId"))
            status, headers, data = self.server.store.perform(op, bucket, key, query, self.headers, body)
            if rule and rule.fault == "lose_answer":
                record["status"] = "lost"
                return self.drop(reset=False)
            if rule and rule.fault == "reset" and self.command in ("GET", "HEAD"):
                record["status"] = "reset"
                cut = rule.after_bytes if rule.after_bytes is not None else len(data) // 2
                self.answer(status, headers, data, cut=cut)
                return self.drop(reset=True)
            record["status"] = status
            self.answer(status, headers, data)
        except (AuthError, S3Error) as e:
            record["status"], record["code"] = e.status, e.code
            self.error(e)
        except ConnectionResetError:
            record.setdefault("status", "reset")
        finally:
            self.log_request_once()

    do_GET = do_PUT = do_POST = do_DELETE = do_HEAD = do_any

    def read_body(self, rule):
        if self.headers.get("Transfer-Encoding"):
            raise S3Error(501, "NotImplemented", "A header you provided implies functionality that is not implemented",
                          Header="Transfer-Encoding")
        length = self.headers.get("Content-Length")
        if length is None:
            if self.command in ("PUT", "POST"):
                raise S3Error(411, "MissingContentLength", "You must provide the Content-Length HTTP header.")
            self.body_read = True
            return b""
        length = int(length)
        if rule and rule.fault == "reset" and self.command in ("PUT", "POST"):
            self.rfile.read(min(length, rule.after_bytes if rule.after_bytes is not None else length // 2))
            self.drop(reset=True)
            raise ConnectionResetError("reset mid-body on purpose")
        body = self.rfile.read(length)
        self.body_read = True
        return body

    def log_request_once(self):
        """Logs the request before its answer leaves: a client that reads the log right after the
        answer must find the request there."""
        if getattr(self, "record", None) is not None:
            self.server.remember(self.record)
            self.record = None

    def answer(self, status, headers, data, cut=None):
        self.log_request_once()
        self.send_response(status)
        for name, value in headers.items():
            self.send_header(name, value)
        if "Content-Length" not in headers and status != 204:
            self.send_header("Content-Length", str(len(data)))
        self.send_header("x-amz-request-id", self.request_id)
        if not self.body_read:
            # The request's body was not read: the connection cannot carry another request.
            self.send_header("Connection", "close")
            self.close_connection = True
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data if cut is None else data[:cut])

    def error(self, e):
        extra = {k: v for k, v in e.extra.items() if k != "retry_after"}
        text = "".join(f"<{k}>{escape(str(v))}</{k}>" for k, v in extra.items())
        doc = (f'<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>{e.code}</Code><Message>{escape(e.message)}'
               f"</Message>{text}<RequestId>{self.request_id}</RequestId><HostId>strict-s3</HostId></Error>").encode()
        headers = {"Content-Type": "application/xml", "Date": http_date()}
        if "retry_after" in e.extra:
            headers["Retry-After"] = str(e.extra["retry_after"])
        # A HEAD's error has no body: the status says it all.
        headers["Content-Length"] = "0" if self.command == "HEAD" else str(len(doc))
        self.answer(e.status, headers, b"" if self.command == "HEAD" else doc)

    def drop(self, reset):
        """Closes the connection without (the rest of) an answer: a reset (RST), or a close."""
        self.close_connection = True
        try:
            self.wfile.flush()
            if reset:
                self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            else:
                self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    def control(self, what, raw_query):
        self.record = None
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        status, out = 200, None
        try:
            if what == "faults" and self.command == "POST":
                self.server.faults.add(json.loads(body))
                out = self.server.faults.describe()
            elif what == "faults" and self.command == "DELETE":
                self.server.faults.clear()
                out = []
            elif what == "faults":
                out = self.server.faults.describe()
            elif what == "log" and self.command == "DELETE":
                with self.server.log_lock:
                    self.server.log.clear()
                out = []
            elif what == "log":
                with self.server.log_lock:
                    out = list(self.server.log)
            elif what == "uploads":
                out = self.server.store.open_uploads()
            elif what == "object":
                q = dict(urllib.parse.parse_qsl(raw_query))
                out = self.server.store.object_meta(q.get("bucket"), q.get("key"))
                status = 200 if out is not None else 404
            else:
                status, out = 404, {"error": f"no control request '{what}'"}
        except (ValueError, TypeError) as e:
            status, out = 400, {"error": str(e)}
        data = json.dumps(out).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


class Server(http.server.ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 256

    def __init__(self, address, keys, region, store):
        super().__init__(address, Handler)
        self.keys, self.region, self.store = keys, region, store
        self.faults = Faults()
        self.log, self.log_lock = [], threading.Lock()

    def remember(self, record):
        with self.log_lock:
            self.log.append(record)
            del self.log[:-20000]


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--directory", required=True)
    p.add_argument("--port-file", required=True, help="where to write the port taken")
    p.add_argument("--port", type=int, default=0)
    p.add_argument("--access-key", required=True)
    p.add_argument("--secret", required=True)
    p.add_argument("--bucket", action="append", default=[])
    p.add_argument("--region", default="us-east-1")
    p.add_argument("--also-port", type=int, action="append", default=[], help="serve the same objects here too")
    p.add_argument("--tls", nargs=2, metavar=("CERT", "KEY"), help="serve https with this certificate")
    a = p.parse_args()
    server = Server(("127.0.0.1", a.port), {a.access_key: a.secret}, a.region, Store(a.directory, a.bucket))
    for port in a.also_port:
        other = Server(("127.0.0.1", port), server.keys, a.region, server.store)
        other.faults, other.log, other.log_lock = server.faults, server.log, server.log_lock
        threading.Thread(target=other.serve_forever, daemon=True).start()
    if a.tls:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(*a.tls)
        server.socket = context.wrap_socket(server.socket, server_side=True)
    with open(a.port_file + ".tmp", "w") as f:
        f.write(str(server.server_address[1]))
    os.replace(a.port_file + ".tmp", a.port_file)
    server.serve_forever()


if __name__ == "__main__":
    main()
