#!/usr/bin/env bash
# The walls between the rooms (ARCHITECTURE.md), checked on the build as configured:
#   1. no source includes a header by a path that climbs ("../"): a room's headers are reached only through the
#      include directories meson gives it;
#   2. supervise/ reaches probe/ through probe.h alone;
#   3. with the very flags the build compiles analysis/, render/, merge/ and record/ with (compile_commands.json), a
#      header of probe/ cannot be found, while the model's can: the same file that includes snapshot.h compiles
#      and one that also includes procfs.h does not;
#   4. boundary-check, every object of analysis, render, merge and record linked against the model alone, was
#      built.
#   rooms.sh SOURCE_ROOT BUILD_DIR
set -uo pipefail
root=$1
build=$2
failed=0
fail() {
    echo "rooms: $*"
    failed=1
}

climbing=$(cd "$root" && grep -rn --include='*.c' --include='*.h' '#include "\.\./' \
    cmd probe base model analysis render merge record supervise tests)
[ -z "$climbing" ] || fail "includes that climb out of their room:"$'\n'"$climbing"

probe_headers=$(cd "$root/probe" && ls -- *.h)
for header in $probe_headers; do
    [ "$header" = probe.h ] && continue
    found=$(cd "$root" && grep -n "#include \"$header\"" supervise/*.c supervise/*.h 2>/dev/null)
    [ -z "$found" ] || fail "supervise/ includes probe/$header, not only probe.h: $found"
done

# compile_with SOURCE_FILE TEXT: compiles TEXT with the flags the build uses for SOURCE_FILE (its -I and -D)
compile_with() {
    local file=$1 text=$2
    python3 - "$build/compile_commands.json" "$file" "$text" <<'EOF'
import json, shlex, subprocess, sys
commands, wanted, text = sys.argv[1], sys.argv[2], sys.argv[3]
entry = next((e for e in json.load(open(commands)) if e["file"].endswith(wanted)), None)
if entry is None:
    print(f"rooms: {wanted} is not in {commands}")
    sys.exit(2)
words = shlex.split(entry["command"])
flags = [w for w in words if w.startswith(("-I", "-D", "-std="))]
result = subprocess.run([words[0], "-fsyntax-only", "-x", "c", "-"] + flags, input=text.encode(),
                        cwd=entry["directory"], capture_output=True)
sys.stderr.write(result.stderr.decode())
sys.exit(0 if result.returncode == 0 else 1)
EOF
}

for file in analysis/rules/idle.c render/render_text.c merge/merge.c record/record_read.c; do
    compile_with "$file" $'#include "snapshot.h"\n' 2>/dev/null ||
        fail "$file: the model's header does not compile with its flags"
    errors=$(compile_with "$file" $'#include "snapshot.h"\n#include "procfs.h"\n' 2>&1) &&
        fail "$file: a header of probe/ (procfs.h) is reachable from its room"
    [ -n "$errors" ] && ! grep -q 'procfs.h' <<<"$errors" && fail "$file: failed for another reason: $errors"
done

[ -x "$build/boundary-check" ] || fail "boundary-check (analysis, render and merge against the model alone) was not built"

[ "$failed" -eq 0 ] && echo "rooms: every wall holds"
exit "$failed"
