"""The objects and multipart uploads of the strict S3 test server (strict_s3.py), in a folder, and
the S3 operations on them as AWS answers them (errors as S3Error with AWS's codes)."""
import datetime
import hashlib
import os
import re
import threading
import urllib.parse
import uuid
import xml.etree.ElementTree as ET
from xml.sax.saxutils import escape

MIN_PART = 5 << 20       # every part but the last
MAX_PARTS = 10_000
MAX_PUT = 5 << 30        # one PutObject
NS = "http://s3.amazonaws.com/doc/2006-03-01/"


class S3Error(Exception):
    def __init__(self, status, code, message, **extra):
        super().__init__(message)
        self.status, self.code, self.message, self.extra = status, code, message, extra


def now_text():
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.000Z")


def http_date():
    return datetime.datetime.now(datetime.timezone.utc).strftime("%a, %d %b %Y %H:%M:%S GMT")


def xml(root, children):
    """A small XML answer: children are (name, text) pairs, or (name, list of pairs) for nesting."""
    def render(items):
        return "".join(f"<{n}>{render(v) if isinstance(v, list) else escape(str(v))}</{n}>" for n, v in items)
    return f'<?xml version="1.0" encoding="UTF-8"?>\n<{root} xmlns="{NS}">{render(children)}</{root}>'.encode()


def parse_range(text, size):
    """(first, last) of a single Range "bytes=a-b", "bytes=a-" or "bytes=-n"; None when the header
    is absent or not one range (S3 then answers the whole object). Past the end: InvalidRange."""
    m = re.fullmatch(r"bytes=(\d*)-(\d*)", (text or "").strip())
    if not m or (m.group(1) == "" and m.group(2) == ""):
        return None
    if m.group(1) == "":
        n = int(m.group(2))
        if n == 0 or size == 0:
            raise S3Error(416, "InvalidRange", "The requested range is not satisfiable", RangeRequested=text,
                          ActualObjectSize=size)
        return max(0, size - n), size - 1
    first = int(m.group(1))
    last = int(m.group(2)) if m.group(2) else size - 1
    if last < first:
        return None
    if first >= size:
        raise S3Error(416, "InvalidRange", "The requested range is not satisfiable", RangeRequested=text,
                      ActualObjectSize=size)
    return first, min(last, size - 1)


class Store:
    def __init__(self, folder, buckets):
        self.folder = folder
        os.makedirs(os.path.join(folder, "objects"), exist_ok=True)  # objects; a PUT's bytes before they are one
        os.makedirs(os.path.join(folder, "parts"), exist_ok=True)
        self.lock = threading.Lock()
        self.objects = {b: {} for b in buckets}  # bucket -> key -> meta
        self.uploads = {}                        # upload id -> meta

    def _file(self, *names):
        return os.path.join(self.folder, *names)

    def _write(self, path, body):
        with open(path + ".tmp", "wb") as f:
            f.write(body)
        os.replace(path + ".tmp", path)

    def _bucket(self, bucket):
        if bucket not in self.objects:
            raise S3Error(404, "NoSuchBucket", "The specified bucket does not exist", BucketName=bucket)
        return self.objects[bucket]

    def _object(self, bucket, key):
        meta = self._bucket(bucket).get(key)
        if meta is None:
            raise S3Error(404, "NoSuchKey", "The specified key does not exist.", Key=key)
        return meta

    def _upload(self, query, bucket, key):
        u = self.uploads.get(query.get("uploadId"))
        if u is None or u["bucket"] != bucket or u["key"] != key:
            raise S3Error(404, "NoSuchUpload", "The specified upload does not exist. The upload ID may be invalid, or "
                          "the upload may have been aborted or completed.", UploadId=query.get("uploadId"))
        return u

    def open_uploads(self):
        with self.lock:
            return [{"bucket": u["bucket"], "key": u["key"], "upload_id": i, "parts": sorted(u["parts"])}
                    for i, u in self.uploads.items()]

    def object_meta(self, bucket, key):
        with self.lock:
            m = self.objects.get(bucket, {}).get(key)
            return None if m is None else {k: v for k, v in m.items() if k != "path"}

    def perform(self, op, bucket, key, query, headers, body):
        """Returns (status, headers, body) of a successful answer. Each operation takes the lock
        for what it looks up or changes, not while it moves bytes."""
        return getattr(self, "op_" + op)(bucket, key, query, headers, body)

    def _object_headers(self, meta):
        return {"ETag": meta["etag"], "Content-Type": meta["content_type"], "Last-Modified": meta["modified"],
                "Accept-Ranges": "bytes"}

    def op_HeadBucket(self, bucket, key, query, headers, body):
        with self.lock:
            self._bucket(bucket)
        return 200, {}, b""

    def op_CreateBucket(self, bucket, key, query, headers, body):
        with self.lock:
            if bucket in self.objects:
                raise S3Error(409, "BucketAlreadyOwnedByYou", "Your previous request to create the named bucket "
                              "succeeded and you already own it.", BucketName=bucket)
            self.objects[bucket] = {}
        return 200, {"Location": "/" + bucket}, b""

    def op_ListObjectsV2(self, bucket, key, query, headers, body):
        prefix, limit = query.get("prefix", ""), int(query.get("max-keys", 1000))
        after = query.get("continuation-token") or query.get("start-after") or ""
        with self.lock:
            found = {k: m for k, m in self._bucket(bucket).items() if k.startswith(prefix) and k > after}
        keys = sorted(found)
        page, more = keys[:limit], len(keys) > limit
        url = query.get("encoding-type") == "url"
        enc = (lambda k: urllib.parse.quote(k, safe="/")) if url else (lambda k: k)
        items = [("Name", bucket), ("Prefix", enc(prefix)), ("KeyCount", len(page)), ("MaxKeys", limit),
                 ("IsTruncated", "true" if more else "false")] + ([("EncodingType", "url")] if url else [])
        for k in page:
            m = found[k]
            items.append(("Contents", [("Key", enc(k)), ("LastModified", m["iso"]), ("ETag", m["etag"]),
                                       ("Size", m["size"]), ("StorageClass", "STANDARD")]))
        if more:
            items.append(("NextContinuationToken", page[-1]))
        return 200, {"Content-Type": "application/xml"}, xml("ListBucketResult", items)

    def op_ListMultipartUploads(self, bucket, key, query, headers, body):
        prefix = query.get("prefix", "")
        url = query.get("encoding-type") == "url"
        enc = (lambda k: urllib.parse.quote(k, safe="/")) if url else (lambda k: k)
        items = [("Bucket", bucket), ("Prefix", enc(prefix)), ("IsTruncated", "false")]
        with self.lock:
            self._bucket(bucket)
            uploads = sorted(((u["key"], u["iso"], i) for i, u in self.uploads.items()
                              if u["bucket"] == bucket and u["key"].startswith(prefix)))
        items += [("Upload", [("Key", enc(k)), ("UploadId", i), ("Initiated", iso), ("StorageClass", "STANDARD")])
                  for k, iso, i in uploads]
        return 200, {"Content-Type": "application/xml"}, xml("ListMultipartUploadsResult", items)

    def _install(self, bucket, key, path, size, etag, content_type):
        """Makes the file at `path` the object's bytes (under the lock)."""
        final = self._file("objects", hashlib.sha256(f"{bucket}\0{key}".encode()).hexdigest())
        os.replace(path, final)
        self._bucket(bucket)[key] = {"path": final, "size": size, "etag": etag, "content_type": content_type,
                                     "modified": http_date(), "iso": now_text()}

    def op_PutObject(self, bucket, key, query, headers, body):
        if len(body) > MAX_PUT:
            raise S3Error(400, "EntityTooLarge", "Your proposed upload exceeds the maximum allowed object size.")
        tmp = self._file("objects", "put-" + uuid.uuid4().hex)
        self._write(tmp, body)
        etag = f'"{hashlib.md5(body).hexdigest()}"'
        with self.lock:
            try:
                self._install(bucket, key, tmp, len(body), etag, headers.get("Content-Type") or "binary/octet-stream")
            except S3Error:
                os.remove(tmp)
                raise
        return 200, {"ETag": etag}, b""

    def op_GetObject(self, bucket, key, query, headers, body, head=False):
        with self.lock:
            meta = dict(self._object(bucket, key))
            f = None if head else open(meta["path"], "rb")  # the bytes of now, whatever replaces them
        out = self._object_headers(meta)
        try:
            r = parse_range(headers.get("Range"), meta["size"])
            first, last = r if r else (0, meta["size"] - 1)
            n = last - first + 1
            data = b""
            if f and n > 0:
                f.seek(first)
                data = f.read(n)
        finally:
            if f:
                f.close()
        if r:
            out["Content-Range"] = f"bytes {first}-{last}/{meta['size']}"
        out["Content-Length"] = str(n)
        return (206 if r else 200), out, data

    def op_HeadObject(self, bucket, key, query, headers, body):
        return self.op_GetObject(bucket, key, query, headers, body, head=True)

    def op_DeleteObject(self, bucket, key, query, headers, body):
        with self.lock:
            meta = self._bucket(bucket).pop(key, None)
            if meta:
                os.remove(meta["path"])
        return 204, {}, b""

    def op_CreateMultipartUpload(self, bucket, key, query, headers, body):
        upload = uuid.uuid4().hex + uuid.uuid4().hex
        with self.lock:
            self._bucket(bucket)
            self.uploads[upload] = {"bucket": bucket, "key": key, "parts": {}, "iso": now_text(),
                                    "content_type": headers.get("Content-Type") or "binary/octet-stream"}
        return 200, {"Content-Type": "application/xml"}, xml(
            "InitiateMultipartUploadResult", [("Bucket", bucket), ("Key", key), ("UploadId", upload)])

    def op_UploadPart(self, bucket, key, query, headers, body):
        try:
            number = int(query.get("partNumber", ""))
        except ValueError:
            number = 0
        if not 1 <= number <= MAX_PARTS:
            raise S3Error(400, "InvalidArgument", "Part number must be an integer between 1 and 10000, inclusive",
                          ArgumentName="partNumber", ArgumentValue=query.get("partNumber"))
        with self.lock:
            self._upload(query, bucket, key)
        path = self._file("parts", f"{query['uploadId']}.{number}.{uuid.uuid4().hex}")
        self._write(path, body)
        md5 = hashlib.md5(body)
        etag = f'"{md5.hexdigest()}"'
        with self.lock:
            try:
                u = self._upload(query, bucket, key)  # aborted meanwhile: NoSuchUpload, as S3 may answer
            except S3Error:
                os.remove(path)
                raise
            old = u["parts"].get(number)
            u["parts"][number] = {"etag": etag, "size": len(body), "md5": md5.digest(), "path": path}
        if old:
            os.remove(old["path"])
        return 200, {"ETag": etag}, b""

    def op_CompleteMultipartUpload(self, bucket, key, query, headers, body):
        try:
            root = ET.fromstring(body)
            listed = [(int(p.findtext("{*}PartNumber") or p.findtext("PartNumber")),
                       (p.findtext("{*}ETag") or p.findtext("ETag") or "").strip()) for p in root.iter()
                      if p.tag.split("}")[-1] == "Part"]
        except (ET.ParseError, TypeError, ValueError):
            listed = None
        with self.lock:
            u = self._upload(query, bucket, key)
            if not listed:
                raise S3Error(400, "MalformedXML", "The XML you provided was not well-formed or did not validate "
                              "against our published schema.")
            numbers = [n for n, _ in listed]
            if numbers != sorted(set(numbers)):
                raise S3Error(400, "InvalidPartOrder", "The list of parts was not in ascending order. Parts must be "
                              "ordered by part number.", UploadId=query["uploadId"])
            for i, (n, etag) in enumerate(listed):
                part = u["parts"].get(n)
                if part is None or part["etag"].strip('"') != etag.strip('"'):
                    raise S3Error(400, "InvalidPart", "One or more of the specified parts could not be found. The part "
                                  "may not have been uploaded, or the specified entity tag may not match the part's "
                                  "entity tag.", PartNumber=n, ETag=etag)
                if i + 1 < len(listed) and part["size"] < MIN_PART:
                    raise S3Error(400, "EntityTooSmall", "Your proposed upload is smaller than the minimum allowed "
                                  "size", PartNumber=n, ProposedSize=part["size"], MinSizeAllowed=MIN_PART)
            del self.uploads[query["uploadId"]]  # a retry from here on finds NoSuchUpload, as on AWS
        parts = [u["parts"][n] for n in numbers]
        etag = f'"{hashlib.md5(b"".join(p["md5"] for p in parts)).hexdigest()}-{len(parts)}"'
        path = self._file("objects", "complete-" + uuid.uuid4().hex)
        with open(path, "wb") as out:
            for p in parts:
                with open(p["path"], "rb") as f:
                    out.write(f.read())
        with self.lock:
            self._install(bucket, key, path, sum(p["size"] for p in parts), etag, u["content_type"])
        self._remove_parts(u)
        return 200, {"Content-Type": "application/xml"}, xml(
            "CompleteMultipartUploadResult", [("Location", f"/{bucket}/{key}"), ("Bucket", bucket), ("Key", key),
                                              ("ETag", etag)])

    def _remove_parts(self, upload):
        for p in upload["parts"].values():
            try:
                os.remove(p["path"])
            except FileNotFoundError:
                pass

    def op_AbortMultipartUpload(self, bucket, key, query, headers, body):
        with self.lock:
            u = self._upload(query, bucket, key)
            del self.uploads[query["uploadId"]]
        self._remove_parts(u)
        return 204, {}, b""
