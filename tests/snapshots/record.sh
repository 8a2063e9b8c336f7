#!/usr/bin/env bash
# Records the snapshots of tests/snapshots/ from the live scenarios that name one (record_as() in
# tests/test_scenarios.c): each as <name>.snapshot, with the pids its fixture reported as <name>.pids. Run it after
# a change to what the probe reads or to the snapshot format (record/record.h), and commit what it wrote; the
# `recorded` tests then check the analysis and the JSON report on them without starting a process.
# What would tie a recording to the machine it was made on is replaced: the checkout's path by /src/hangdoc, the
# host's name, boot id and kernel release by neutral ones.
#   bash tests/snapshots/record.sh [BUILD_DIR]     (a configured build, default build/)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build}
HANGDOC_RECORD_DIR="$root/tests/snapshots" meson test -C "$build" scenarios --test-args='--filter=scenarios/*' \
    --print-errorlogs
python3 - "$root" "$root"/tests/snapshots/*.snapshot <<'PYTHON'
import re, sys
root, paths = sys.argv[1], sys.argv[2:]
for path in paths:
    text = open(path, encoding="utf-8").read()
    text = text.replace(root + "/", "/src/hangdoc/")
    text = re.sub(r'"host":"[^"]*"', '"host":"recorded"', text, count=1)
    text = re.sub(r'"boot_id":"[^"]*"', '"boot_id":"00000000-0000-0000-0000-000000000000"', text, count=1)
    text = re.sub(r'"kernel":"[^"]*"', '"kernel":"6.1.0-recorded"', text, count=1)
    open(path, "w", encoding="utf-8").write(text)
PYTHON
ls -l "$root/tests/snapshots"/*.snapshot
