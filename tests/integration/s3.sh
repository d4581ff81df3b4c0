#!/usr/bin/env bash
# trainio's S3 client against one S3 server on loopback, started and stopped by this test, by PID.
#
#   s3.sh TRAINIO UNIT_TESTS SERVER [SCRATCH_PARENT]
#
# SERVER is one of
#   s3rver  the lenient Node.js server (npm, installed on first use into the build's test-tools);
#           it checks the access key but not the signature, answers AbortMultipartUpload 405,
#           and removes "./" and "../" from keys itself
#   strict  tests/integration/strict_s3.py: verifies SigV4 signatures with the secret, refuses
#           unexpected headers and content types, answers as AWS does (416 for a range past the
#           end, NoSuchUpload once an upload is completed, 10,000 parts at most) and injects
#           faults on demand (lost answers, 503 SlowDown, 500, resets mid-body, throttling)
#   moto    moto_server, where the machine has one (skipped, exit 77, where it does not)
#
# Runs the unit tests tagged [.s3] (tests/unit/storage/test_s3_*.cpp; those tagged [.s3-faults]
# too against the strict server), reads what they uploaded back with an independent client
# (boto3) and compares the bytes, then runs trainio on S3 datasets (tests/integration/
# s3_runs.py: numpy parses the generated objects). TRAINIO_S3_MODELS tells the tests what the
# server checks, so a test of a check skips where the server does not make it.
set -euo pipefail

unit_tests=$(realpath "$2")
server=$3
source "$(dirname "$0")/common.sh" "$1" "${4:-}"
here=$(cd "$(dirname "$0")" && pwd)
$python -c "import boto3" 2>/dev/null || fail "python3-boto3 is missing (scripts/lib/deps.sh installs it)"

case $server in
  s3rver)
    command -v node >/dev/null || fail "node is missing: install nodejs and npm (scripts/lib/deps.sh does)"
    tools=$(dirname "$unit_tests")/../test-tools
    s3rver="$tools/node_modules/.bin/s3rver"
    if [ ! -x "$s3rver" ]; then
      command -v npm >/dev/null || fail "npm is missing: install npm (scripts/lib/deps.sh does)"
      mkdir -p "$tools"
      npm install --silent --no-audit --no-fund --prefix "$tools" s3rver@3.7.1 >/dev/null ||
        fail "could not install s3rver from the npm registry into $tools"
    fi
    access_key=S3RVER
    models=access_keys,tls ;;
  strict)
    access_key=TRAINIOSTRICTKEY
    models=access_keys,signatures,abort,list_uploads,faults,content_type,literal_keys,tls ;;
  moto)
    command -v moto_server >/dev/null && moto_server --help >/dev/null 2>&1 || skip "no moto_server on this machine"
    access_key=TRAINIOMOTOKEY
    models=abort,list_uploads,content_type ;;
  *) fail "unknown S3 server '$server': s3rver, strict or moto" ;;
esac
# The secret is checked by the strict server, and never printed by trainio (s3_runs.py looks).
secret="never-shown-$(od -An -N12 -tx1 /dev/urandom | tr -d ' \n')"
bucket=trainio-test

d=$(mktemp -d "${parent}/trainio-s3-$server.XXXXXX")
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
listening() { (exec 3<>/dev/tcp/127.0.0.1/"$1") 2>/dev/null; }
wait_for() {  # PORT LOG
  for _ in $(seq 150); do listening "$1" && return 0; sleep 0.1; done
  cat "$2" >&2
  fail "the $server server did not start on port $1"
}
mkdir -p "$d/data" "$d/tls" "$d/cross"
# A certificate of the test's own, which the system does not trust, for the https endpoint.
openssl req -x509 -newkey rsa:2048 -nodes -keyout "$d/key.pem" -out "$d/cert.pem" -days 2 -subj "/CN=127.0.0.1" \
  -addext "subjectAltName=IP:127.0.0.1" 2>/dev/null || fail "openssl could not make a test certificate"
port=$(free_port)
tls_port=
case $server in
  s3rver)
    "$s3rver" -d "$d/data" -a 127.0.0.1 -p "$port" --configure-bucket $bucket --silent > "$d/server.log" 2>&1 &
    pids+=($!)
    tls_port=$(free_port)
    "$s3rver" -d "$d/tls" -a 127.0.0.1 -p "$tls_port" --key "$d/key.pem" --cert "$d/cert.pem" \
      --configure-bucket $bucket --silent > "$d/server-tls.log" 2>&1 &
    pids+=($!) ;;
  strict)
    # A second port on the same objects: two endpoints of one store.
    port2=$(free_port)
    "$python" "$here/strict_s3.py" --directory "$d/data" --port "$port" --also-port "$port2" --port-file "$d/port" \
      --access-key $access_key --secret "$secret" --bucket $bucket > "$d/server.log" 2>&1 &
    pids+=($!)
    export TRAINIO_S3_ENDPOINT2="http://127.0.0.1:$port2"
    tls_port=$(free_port)
    "$python" "$here/strict_s3.py" --directory "$d/tls" --port "$tls_port" --port-file "$d/tls-port" \
      --access-key $access_key --secret "$secret" --bucket $bucket --tls "$d/cert.pem" "$d/key.pem" \
      > "$d/server-tls.log" 2>&1 &
    pids+=($!)
    export TRAINIO_S3_CONTROL="http://127.0.0.1:$port/__strict__" ;;
  moto)
    moto_server -H 127.0.0.1 -p "$port" > "$d/server.log" 2>&1 &
    pids+=($!) ;;
esac
wait_for "$port" "$d/server.log"
[ -z "$tls_port" ] || wait_for "$tls_port" "$d/server-tls.log"
if [ "$server" = moto ]; then  # moto starts with no bucket
  $python - "http://127.0.0.1:$port" $bucket <<'PY' || fail "could not create the bucket on moto_server"
import sys, boto3
from botocore.config import Config
boto3.client("s3", endpoint_url=sys.argv[1], aws_access_key_id="k", aws_secret_access_key="s", region_name="us-east-1",
             config=Config(s3={"addressing_style": "path"})).create_bucket(Bucket=sys.argv[2])
PY
fi

export TRAINIO_S3_SERVER=$server TRAINIO_S3_MODELS=$models
export TRAINIO_S3_ENDPOINT="http://127.0.0.1:$port" TRAINIO_S3_BUCKET=$bucket TRAINIO_S3_CROSSCHECK="$d/cross"
export TRAINIO_S3_ACCESS_KEY=$access_key TRAINIO_S3_SECRET_KEY=$secret
if [ -n "$tls_port" ]; then
  export TRAINIO_S3_TLS_ENDPOINT="https://127.0.0.1:$tls_port" TRAINIO_S3_TLS_CA="$d/cert.pem"
fi
tags="[.s3]"
[ "$server" = strict ] && tags="[.s3],[.s3-faults]"
"$unit_tests" "$tags" || fail "the S3 client tests failed against $server (above)"

# What trainio uploaded, read back by boto3: the same bytes.
$python - "$d/cross" <<'PY' || fail "boto3 read back other bytes than trainio uploaded"
import glob, os, sys
import boto3
from botocore.config import Config
folder = sys.argv[1]
s3 = boto3.client("s3", endpoint_url=os.environ["TRAINIO_S3_ENDPOINT"], region_name="us-east-1",
                  aws_access_key_id=os.environ["TRAINIO_S3_ACCESS_KEY"],
                  aws_secret_access_key=os.environ["TRAINIO_S3_SECRET_KEY"], config=Config(s3={"addressing_style": "path"}))
checked = 0
for key_file in glob.glob(folder + "/*.key"):
    key = open(key_file, encoding="utf-8").read()
    expected = open(key_file[:-4], "rb").read()
    body = s3.get_object(Bucket=os.environ["TRAINIO_S3_BUCKET"], Key=key)["Body"].read()
    assert body == expected, f"{key!r}: {len(body)} bytes differ from the {len(expected)} uploaded"
    checked += 1
assert checked > 0, "the tests left nothing to cross-check"
print(f"boto3 read back {checked} object(s) trainio uploaded, byte for byte")
PY
# trainio runs on S3 datasets: generation, reads, resumption, two ranks, errors, secrets.
TRAINIO="$trainio" TRAINIO_S3RVER="${s3rver:-}" TRAINIO_SOURCE="$(cd "$here/../.." && pwd)" TRAINIO_TEST_TMP="$d/runs" \
  $python -W ignore::ResourceWarning -m unittest discover -s "$here" -p "s3_*runs.py" ||
  fail "trainio runs on S3 against $server failed (above)"
echo "PASS: S3 client and trainio runs against $server"
