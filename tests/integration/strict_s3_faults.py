"""AWS's bad days on demand, for the strict S3 test server (strict_s3.py). A test posts rules to
/__strict__/faults (JSON, one rule or a list); each rule picks requests by S3 operation and key
and does one of:

  lose_answer     the operation is done, then the connection closes without an answer (the
                  answer lost on the way back: the client cannot know it succeeded)
  slow_down       503 SlowDown with Retry-After: retry_after seconds; nothing done
  internal_error  500 InternalError; nothing done
  late_error      200 whose body is an InternalError document, as S3 may answer a
                  CompleteMultipartUpload that failed late; nothing done
  no_such_upload  404 NoSuchUpload; nothing done
  reset           the connection is reset mid-body: a GET's answer after `after_bytes` bytes of
                  its body (default: half), or a request's body after `after_bytes` were read
  throttle        at most `rate` requests a second (bursts of `burst`); the others get 503
                  SlowDown with Retry-After
  delay           the answer waits `seconds`

Keys of a rule: op ("*" or GetObject, HeadObject, PutObject, DeleteObject, CreateMultipartUpload,
UploadPart, CompleteMultipartUpload, AbortMultipartUpload, HeadBucket, ListObjectsV2,
ListMultipartUploads), key (a substring of the key; "" for all), fault, times (-1: every
matching request; default 1), skip (matching requests let through first; default 0), per_key
(times and skip count each key apart), and the fault's own settings above."""
import threading
import time

OPS = {"*", "GetObject", "HeadObject", "PutObject", "DeleteObject", "CreateMultipartUpload", "UploadPart",
       "CompleteMultipartUpload", "AbortMultipartUpload", "HeadBucket", "ListObjectsV2", "ListMultipartUploads",
       "CreateBucket", "ListBuckets"}
FAULTS = {"lose_answer", "slow_down", "internal_error", "late_error", "no_such_upload", "reset", "throttle", "delay"}
SETTINGS = {"op", "key", "fault", "times", "skip", "per_key", "retry_after", "after_bytes", "rate", "burst", "seconds"}


class Rule:
    def __init__(self, spec):
        unknown = set(spec) - SETTINGS
        if unknown:
            raise ValueError(f"unknown rule settings {sorted(unknown)}; known: {sorted(SETTINGS)}")
        self.op, self.key, self.fault = spec.get("op", "*"), spec.get("key", ""), spec.get("fault")
        if self.op not in OPS:
            raise ValueError(f"unknown op '{self.op}'; known: {sorted(OPS)}")
        if self.fault not in FAULTS:
            raise ValueError(f"unknown fault '{self.fault}'; known: {sorted(FAULTS)}")
        self.times = int(spec.get("times", -1 if self.fault == "throttle" else 1))
        self.skip = int(spec.get("skip", 0))
        self.per_key = bool(spec.get("per_key", False))
        self.retry_after = spec.get("retry_after", 1)
        self.after_bytes = spec.get("after_bytes")
        self.rate, self.burst = float(spec.get("rate", 10)), float(spec.get("burst", 1))
        self.seconds = float(spec.get("seconds", 1))
        self.seen, self.applied = {}, 0
        self.tokens, self.refilled = self.burst, time.monotonic()

    def describe(self):
        return {"op": self.op, "key": self.key, "fault": self.fault, "times": self.times, "skip": self.skip,
                "per_key": self.per_key, "applied": self.applied}

    def take(self, op, key):
        """Whether this rule's fault applies to this request (and counts it if so)."""
        if self.op not in ("*", op) or self.key not in (key or ""):
            return False
        if self.fault == "throttle":
            now = time.monotonic()
            self.tokens = min(self.burst, self.tokens + (now - self.refilled) * self.rate)
            self.refilled = now
            if self.tokens >= 1:
                self.tokens -= 1
                return False
            self.applied += 1
            return True
        counter = key if self.per_key else ""
        n = self.seen.get(counter, 0)
        self.seen[counter] = n + 1
        if n < self.skip or (self.times >= 0 and n >= self.skip + self.times):
            return False
        self.applied += 1
        return True


class Faults:
    def __init__(self):
        self.lock = threading.Lock()
        self.rules = []

    def add(self, specs):
        rules = [Rule(s) for s in (specs if isinstance(specs, list) else [specs])]
        with self.lock:
            self.rules.extend(rules)

    def clear(self):
        with self.lock:
            self.rules = []

    def describe(self):
        with self.lock:
            return [r.describe() for r in self.rules]

    def pick(self, op, key):
        """The first rule whose fault applies to this request, or None."""
        with self.lock:
            for rule in self.rules:
                if rule.take(op, key):
                    return rule
        return None
