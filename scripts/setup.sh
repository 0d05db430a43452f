#!/usr/bin/env bash
# Set up vlui on this machine: system packages (fonts for every locale), uv, and the locked Python environment in
# .venv. Idempotent: a second run checks what is there and skips it. Debian/Ubuntu; see README "Supported platforms".
#
#   bash scripts/setup.sh            # VLUI_PYTHON=python3.12 to choose the interpreter (3.10-3.12)
#   bash scripts/setup.sh --tests    # also what the test suite needs (scripts/test.sh runs this)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

UV_VERSION=0.13.9
SYSTEM_PACKAGES=(fonts-noto-core fonts-noto-cjk fontconfig)
# the tests run the emulator builder's sqlite3 transcript against a local sqlite3, the viewer's page in Chromium, and
# the ADB client tests with Debian's adb (29) besides adbutils' bundled adb (36)
TEST_PACKAGES=(sqlite3 chromium adb)
PYTHON=${VLUI_PYTHON:-python3}

step() { printf '\033[1;34m[setup]\033[0m %s\n' "$*"; }
die() { printf '\033[1;31m[setup] error:\033[0m %s\n' "$*" >&2; exit 1; }

for arg in "$@"; do
    case "$arg" in
        --tests) SYSTEM_PACKAGES+=("${TEST_PACKAGES[@]}") ;;
        *) die "unknown option $arg (usage: bash scripts/setup.sh [--tests])" ;;
    esac
done

as_root() {
    if [ "$(id -u)" -eq 0 ]; then "$@"
    elif command -v sudo >/dev/null; then sudo "$@"
    else die "need root to run: $* (install sudo or run as root)"; fi
}

apt_install() {
    command -v apt-get >/dev/null || die "cannot install $* here (no apt-get): install them with your package manager"
    step "installing system packages: $*"
    if [ -z "$(find /var/lib/apt/lists -maxdepth 1 -name '*Packages*' -mmin -1440 2>/dev/null | head -1)" ]; then
        as_root apt-get update -q
    fi
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "$@"
}

# 1. System packages ---------------------------------------------------------------------------------------------
missing=()
for pkg in "${SYSTEM_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
if [ ${#missing[@]} -gt 0 ]; then apt_install "${missing[@]}"; else step "system packages present: ${SYSTEM_PACKAGES[*]}"; fi

# 2. Python ------------------------------------------------------------------------------------------------------
command -v "$PYTHON" >/dev/null || die "$PYTHON not found: install Python 3.10-3.12 (or set VLUI_PYTHON)"
"$PYTHON" - <<'PY' || die "vlui needs Python 3.10-3.12 (found $("$PYTHON" --version 2>&1)); set VLUI_PYTHON"
import sys
sys.exit(0 if (3, 10) <= sys.version_info[:2] <= (3, 12) else 1)
PY
if ! "$PYTHON" -c "import ensurepip, venv" 2>/dev/null; then
    apt_install "python3-venv"
fi

# 3. uv, pinned, in its own small environment (.tools/), so no system Python is modified -------------------------
UV=.tools/bin/uv
if [ ! -x "$UV" ] || [ "$("$UV" --version | cut -d' ' -f2)" != "$UV_VERSION" ]; then
    step "installing uv $UV_VERSION into .tools/"
    "$PYTHON" -m venv .tools
    .tools/bin/python -m pip install -q --disable-pip-version-check "uv==$UV_VERSION"
fi

# 4. The locked environment --------------------------------------------------------------------------------------
# --compile-bytecode: the packages' .pyc files are written once here (about a minute the first time, a second after).
# Without them every process compiles what it imports anew wherever Python may not write them
# (PYTHONDONTWRITEBYTECODE, a read-only environment): importing torch and Lightning takes twice as long, in every job,
# worker and test.
step "syncing .venv with uv.lock (first run downloads PyTorch and friends: a few minutes)"
UV_PYTHON_DOWNLOADS=never "$UV" sync --frozen --compile-bytecode --python "$PYTHON"

step "ready: $(.venv/bin/python --version), vlui in .venv (activate with: source .venv/bin/activate)"
