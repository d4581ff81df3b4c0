# Debian packages trainio needs, and a function that installs the missing ones.
# Sourced by scripts/demo.sh and scripts/test.sh.

TRAINIO_BUILD_PACKAGES=(
  build-essential cmake ninja-build pkg-config git
  libopenmpi-dev openmpi-bin libhdf5-openmpi-dev
  libyaml-cpp-dev libcli11-dev libspdlog-dev libfmt-dev nlohmann-json3-dev
  liburing-dev zlib1g-dev libzstd-dev libjpeg-dev libpng-dev libcurl4-openssl-dev libssl-dev
)
# Tests also check files with the real Python libraries (PyTorch for checkpoints) and trace
# system calls; the GlusterFS integration test runs a loopback volume (tests/integration/glusterfs.sh)
# and the Slurm one a one-node cluster (tests/integration/slurm.sh); chromium renders the HTML reports
# (tests/e2e/test_html.py); the S3 test runs s3rver from npm on loopback and reads back with boto3
# (tests/integration/s3.sh): Node.js and npm come from Debian (nodejs npm) unless the machine has
# them already (another build of Node.js, whose npm Debian's package would conflict with).
TRAINIO_NODE_PACKAGES=(nodejs npm)
# clang builds the ASan+UBSan, TSan and libFuzzer copies (tests/sanitize/run.sh); llvm symbolizes.
TRAINIO_SANITIZER_PACKAGES=(clang libclang-rt-dev llvm)
TRAINIO_TEST_PACKAGES=(catch2 python3-numpy python3-h5py python3-pil python3-pandas python3-torch python3-jsonschema python3-yaml strace
                       glusterfs-server glusterfs-client slurmd slurmctld slurm-client chromium
                       python3-boto3 openssl
                       "${TRAINIO_SANITIZER_PACKAGES[@]}")

# install_missing PACKAGE...: installs what dpkg does not list as installed (as root), or explains.
install_missing() {
  local missing=()
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  if ! command -v apt-get >/dev/null 2>&1; then
    echo "trainio: these packages are missing and this is not a Debian system: ${missing[*]}" >&2
    echo "  install their equivalents (see docs/building.md), then run this script again" >&2
    return 1
  fi
  if [ "$(id -u)" -ne 0 ]; then
    echo "trainio: these Debian packages are missing: ${missing[*]}" >&2
    echo "  install them as root:  sudo apt-get install -y --no-install-recommends ${missing[*]}" >&2
    return 1
  fi
  echo "trainio: installing ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q >/dev/null
  apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null
}

# MPI launches on a single machine. Root needs OpenMPI's explicit permission.
mpi_env_for_root() {
  if [ "$(id -u)" -eq 0 ]; then
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  fi
}

# build_trainio [extra cmake args...]: configures and builds build/ (Release, Ninja).
# TRAINIO_UNITY_BUILD=ON compiles a few files to a unit (CI: a clean build in half the time);
# unset, every file is compiled alone, as an edit-and-rebuild loop wants.
build_trainio() {
  local root
  root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
  cmake -S "$root" -B "$root/build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_UNITY_BUILD="${TRAINIO_UNITY_BUILD:-OFF}" "$@" >/dev/null
  cmake --build "$root/build" -j "$(nproc)"
}
