"""SigV4 verification for the strict S3 test server (strict_s3.py): header-based signatures as AWS
checks them, from the request exactly as it arrived. The canonical URI is made from the path
as received (percent-decoded, then encoded again as SigV4 wants, never normalised): a client
that signs one path and sends another (a library removing "./" or "../") fails here as it would
on AWS."""
import base64
import datetime
import hashlib
import hmac
import re
import urllib.parse

UNSIGNED = "UNSIGNED-PAYLOAD"
MAX_SKEW = datetime.timedelta(minutes=15)
_AUTH = re.compile(r"AWS4-HMAC-SHA256 Credential=([^,\s]+),\s*SignedHeaders=([^,\s]+),\s*Signature=([0-9a-f]{64})$")
_SAFE = "-_.~"


class AuthError(Exception):
    """An answer AWS gives to a request it will not authenticate: status, code, message, extra
    elements of the error document."""

    def __init__(self, status, code, message, **extra):
        super().__init__(message)
        self.status, self.code, self.message, self.extra = status, code, message, extra


def uri_encode(text, keep_slash):
    return urllib.parse.quote(text, safe=_SAFE + ("/" if keep_slash else ""))


def decoded_path(raw_path):
    """The path of the request line, percent-decoded as S3 decodes it ('+' stays '+')."""
    return urllib.parse.unquote(raw_path.split("?", 1)[0], errors="strict")


def query_pairs(raw_query):
    """The query's name/value pairs, percent-decoded ('+' stays '+', as S3 takes it)."""
    pairs = []
    for item in raw_query.split("&") if raw_query else []:
        name, _, value = item.partition("=")
        pairs.append((urllib.parse.unquote(name), urllib.parse.unquote(value)))
    return pairs


def canonical_request(method, path, pairs, headers, signed, payload_hash):
    query = "&".join(f"{n}={v}" for n, v in sorted((uri_encode(n, False), uri_encode(v, False)) for n, v in pairs))
    lines = []
    for name in signed:
        values = headers.get_all(name) or []
        lines.append(f"{name}:{','.join(' '.join(v.split()) for v in values)}\n")
    return "\n".join([method, uri_encode(path, True), query, "".join(lines), ";".join(signed), payload_hash])


def _hmac(key, text):
    return hmac.new(key, text.encode(), hashlib.sha256).digest()


def signing_key(secret, day, region):
    return _hmac(_hmac(_hmac(_hmac(("AWS4" + secret).encode(), day), region), "s3"), "aws4_request")


def verify(method, raw_path, raw_query, headers, keys, region, now=None):
    """Checks the request's signature; returns the access key. `headers` is the request's
    http.client.HTTPMessage; `keys` maps access keys to secrets. Raises AuthError as AWS answers."""
    auth = headers.get("Authorization")
    if auth is None:
        raise AuthError(403, "AccessDenied", "Anonymous access is forbidden for this operation")
    m = _AUTH.match(auth.strip())
    if not m:
        raise AuthError(400, "AuthorizationHeaderMalformed", "The authorization header is malformed")
    credential, signed_text, signature = m.groups()
    parts = credential.split("/")
    if len(parts) != 5 or parts[3] != "s3" or parts[4] != "aws4_request":
        raise AuthError(400, "AuthorizationHeaderMalformed", f"The credential is malformed: {credential}")
    access_key, day, scope_region = parts[0], parts[1], parts[2]
    if access_key not in keys:
        raise AuthError(403, "InvalidAccessKeyId", "The AWS Access Key Id you provided does not exist in our records.",
                        AWSAccessKeyId=access_key)
    if scope_region != region:
        raise AuthError(400, "AuthorizationHeaderMalformed",
                        f"the region '{scope_region}' is wrong; expecting '{region}'", Region=region)
    amz_date = headers.get("x-amz-date")
    try:
        when = datetime.datetime.strptime(amz_date or "", "%Y%m%dT%H%M%SZ").replace(tzinfo=datetime.timezone.utc)
    except ValueError:
        raise AuthError(403, "AccessDenied", "AWS authentication requires a valid Date or x-amz-date header")
    now = now or datetime.datetime.now(datetime.timezone.utc)
    if abs(now - when) > MAX_SKEW:
        raise AuthError(403, "RequestTimeTooSkewed", "The difference between the request time and the current time is "
                        "too large.", RequestTime=amz_date, ServerTime=now.strftime("%Y%m%dT%H%M%SZ"))
    if day != amz_date[:8]:
        raise AuthError(403, "SignatureDoesNotMatch", "The credential's date is not the day of x-amz-date")
    signed = signed_text.split(";")
    if signed != sorted(signed) or any(n != n.lower() for n in signed):
        raise AuthError(400, "AuthorizationHeaderMalformed", "SignedHeaders must be lower-case and sorted")
    for required in ("host", "x-amz-content-sha256", "x-amz-date"):
        if required not in signed:
            raise AuthError(403, "AccessDenied", f"the header '{required}' must be signed")
    for name in signed:
        if headers.get(name) is None:
            raise AuthError(403, "AccessDenied", f"the signed header '{name}' is not in the request")
    unsigned = sorted({n.lower() for n in headers.keys() if n.lower().startswith("x-amz-")} - set(signed))
    if unsigned:
        raise AuthError(403, "AccessDenied", "There were headers present in the request which were not signed",
                        HeadersNotSigned=", ".join(unsigned))
    payload_hash = headers.get("x-amz-content-sha256")
    if payload_hash != UNSIGNED and not re.fullmatch(r"[0-9a-f]{64}", payload_hash):
        raise AuthError(400, "InvalidArgument", "x-amz-content-sha256 must be UNSIGNED-PAYLOAD or a SHA-256 in hex")
    canonical = canonical_request(method, decoded_path(raw_path), query_pairs(raw_query), headers, signed, payload_hash)
    scope = f"{day}/{region}/s3/aws4_request"
    to_sign = "\n".join(["AWS4-HMAC-SHA256", amz_date, scope, hashlib.sha256(canonical.encode()).hexdigest()])
    expected = hmac.new(signing_key(keys[access_key], day, region), to_sign.encode(), hashlib.sha256).hexdigest()
    if not hmac.compare_digest(expected, signature):
        raise AuthError(403, "SignatureDoesNotMatch", "The request signature we calculated does not match the signature "
                        "you provided. Check your key and signing method.", AWSAccessKeyId=access_key,
                        StringToSign=to_sign, CanonicalRequest=canonical)
    return access_key


def check_payload(headers, body):
    """A signed payload's hash must be the body's (AWS: XAmzContentSHA256Mismatch); a Content-MD5
    must be the body's (BadDigest)."""
    claimed = headers.get("x-amz-content-sha256")
    if claimed and claimed != UNSIGNED and hashlib.sha256(body).hexdigest() != claimed:
        raise AuthError(400, "XAmzContentSHA256Mismatch", "The provided 'x-amz-content-sha256' header does not match "
                        "what was computed.")
    md5 = headers.get("Content-MD5")
    if md5 is not None:
        if base64.b64encode(hashlib.md5(body).digest()).decode() != md5.strip():
            raise AuthError(400, "BadDigest", "The Content-MD5 you specified did not match what we received.")
