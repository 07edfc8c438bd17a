#!/usr/bin/env bash
# Installs what is missing, builds, and plans a bundled example snapshot with
# the bundled rule files: no cluster needed. Builds the binary alone (no
# tests, benchmarks or fuzz targets).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh --binary
bash scripts/build.sh binary
snapshot=${1:-examples/snapshots/quorum-lost.json}
echo "\$ ruleplane plan $snapshot"
build/release/ruleplane plan "$snapshot"
