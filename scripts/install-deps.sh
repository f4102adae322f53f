#!/usr/bin/env bash
# Installs the Debian 12 packages toroid needs to build and test, skipping those already
# present (so it is quick on a prepared machine). Needs root (or sudo) only when
# something is missing.
set -euo pipefail

packages=(
  g++ clang libclang-rt-14-dev cmake ninja-build pkg-config
  libfmt-dev nlohmann-json3-dev libcli11-dev libpng-dev libturbojpeg0-dev libjpeg62-turbo-dev libwebp-dev libgtest-dev libssl-dev libdlpack-dev
  python3 python3-numpy python3-torch python3-torchvision python3-opencv python3-pil
  python3-dask python3-distributed python3-tqdm python3-matplotlib
  python3-venv python3-pip python3-setuptools python3-wheel
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "installing: ${missing[*]}"
sudo_cmd=()
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "toroid: error: need root (or sudo) to install: ${missing[*]}" >&2; exit 2; }
  sudo_cmd=(sudo)
fi
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -qq
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
