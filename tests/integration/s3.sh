#!/usr/bin/env bash
# trainio's S3 client against a real S3 server on loopback: s3rver (npm, installed on first use
# into the build's test-tools folder), started and stopped by this test, by PID.
#
#   s3.sh TRAINIO UNIT_TESTS [SCRATCH_PARENT]
#
# Runs the unit tests tagged [s3] (tests/unit/storage/test_s3_client.cpp) against it and a
# stand-in endpoint that answers 503 (flaky_s3.py), reads what trainio uploaded back with an
# independent client (boto3) and compares the bytes, then runs trainio on S3 datasets
# (tests/integration/s3_runs.py: numpy parses the generated objects). What s3rver does not model: SigV4 signature
# checks (it accepts any signature for a known access key; trainio's signer is checked against
# AWS's published examples instead), AbortMultipartUpload (405), multipart ETags, throttling, and real S3's latency.
set -euo pipefail

unit_tests=$(realpath "$2")
source "$(dirname "$0")/common.sh" "$1" "${3:-}"
here=$(cd "$(dirname "$0")" && pwd)

command -v node >/dev/null || fail "node is missing: install nodejs and npm (scripts/lib/deps.sh does)"
tools=$(dirname "$unit_tests")/../test-tools
s3rver="$tools/node_modules/.bin/s3rver"
if [ ! -x "$s3rver" ]; then
  command -v npm >/dev/null || fail "npm is missing: install npm (scripts/lib/deps.sh does)"
  mkdir -p "$tools"
  npm install --silent --no-audit --no-fund --prefix "$tools" s3rver@3.7.1 >/dev/null ||
    fail "could not install s3rver from the npm registry into $tools"
fi
$python -c "import boto3" 2>/dev/null || fail "python3-boto3 is missing (scripts/lib/deps.sh installs it)"

d=$(mktemp -d "${parent}/trainio-s3.XXXXXX")
pids=()
cleanup() {
  local rc=$?
  set +e
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
  rm -rf "$d"
  exit $rc
}
trap cleanup EXIT

free_port() { $python -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
port=$(free_port)
mkdir -p "$d/data" "$d/tls" "$d/cross"
"$s3rver" -d "$d/data" -a 127.0.0.1 -p "$port" --configure-bucket trainio-test --silent > "$d/s3rver.log" 2>&1 &
pids+=($!)
# The same server over TLS, with a certificate of its own that the system does not trust.
openssl req -x509 -newkey rsa:2048 -nodes -keyout "$d/key.pem" -out "$d/cert.pem" -days 2 -subj "/CN=127.0.0.1" \
  -addext "subjectAltName=IP:127.0.0.1" 2>/dev/null || fail "openssl could not make a test certificate"
tls_port=$(free_port)
"$s3rver" -d "$d/tls" -a 127.0.0.1 -p "$tls_port" --key "$d/key.pem" --cert "$d/cert.pem" \
  --configure-bucket trainio-test --silent > "$d/s3rver-tls.log" 2>&1 &
pids+=($!)
$python "$here/flaky_s3.py" "$d/flaky.port" &
pids+=($!)
for _ in $(seq 100); do
  (exec 3<>/dev/tcp/127.0.0.1/"$port") 2>/dev/null && (exec 3<>/dev/tcp/127.0.0.1/"$tls_port") 2>/dev/null &&
    [ -s "$d/flaky.port" ] && break
  sleep 0.1
done
(exec 3<>/dev/tcp/127.0.0.1/"$port") 2>/dev/null || { cat "$d/s3rver.log"; fail "s3rver did not start on port $port"; }

export TRAINIO_S3_ENDPOINT="http://127.0.0.1:$port" TRAINIO_S3_BUCKET=trainio-test TRAINIO_S3_CROSSCHECK="$d/cross"
export TRAINIO_S3_FLAKY_ENDPOINT="http://127.0.0.1:$(cat "$d/flaky.port")"
export TRAINIO_S3_TLS_ENDPOINT="https://127.0.0.1:$tls_port" TRAINIO_S3_TLS_CA="$d/cert.pem"
"$unit_tests" "[s3]" || fail "the S3 client tests failed (above)"

# What trainio uploaded, read back by boto3: the same bytes. (s3rver gives a multipart object a
# plain MD5 ETag, so the ETag cannot tell how it was uploaded.)
$python - "$d/cross" "$TRAINIO_S3_ENDPOINT" <<'PY' || fail "boto3 read back other bytes than trainio uploaded"
import glob, sys
import boto3
from botocore.config import Config
folder, endpoint = sys.argv[1], sys.argv[2]
s3 = boto3.client("s3", endpoint_url=endpoint, aws_access_key_id="S3RVER", aws_secret_access_key="S3RVER",
                  region_name="us-east-1", config=Config(s3={"addressing_style": "path"}))
checked = 0
for key_file in glob.glob(folder + "/*.key"):
    key = open(key_file).read()
    expected = open(key_file[:-4], "rb").read()
    got = s3.get_object(Bucket="trainio-test", Key=key)
    body = got["Body"].read()
    assert body == expected, f"{key}: {len(body)} bytes differ from the {len(expected)} uploaded"
    checked += 1
assert checked > 0, "the tests left nothing to cross-check"
print(f"boto3 read back {checked} object(s) trainio uploaded, byte for byte")
PY
# trainio runs on S3 datasets: generation, reads, resumption, two ranks, errors, secrets.
TRAINIO="$trainio" TRAINIO_S3RVER="$s3rver" TRAINIO_SOURCE="$(cd "$here/../.." && pwd)" TRAINIO_TEST_TMP="$d/runs" \
  $python -W ignore::ResourceWarning -m unittest discover -s "$here" -p s3_runs.py ||
  fail "trainio runs on S3 failed (above)"
echo "PASS: S3 client and trainio runs against s3rver"
