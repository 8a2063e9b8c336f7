#!/usr/bin/env bash
# Builds the libFuzzer harnesses of tests/fuzz/ with clang (-fsanitize=fuzzer,address,undefined) and runs each for a
# few seconds from the seed corpus in tests/fuzz/corpus/<name>/ (which it never writes: new inputs go to a scratch
# copy). Exit 0 when no harness found a crash, a leak or a sanitizer error; otherwise the input that did it is
# printed (add it to the corpus as a regression once fixed).
#   run.sh SOURCE_ROOT WORK_DIR [SECONDS_EACH]
set -euo pipefail
root=$1
work=$2
seconds=${3:-10}
flags=(-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined -g -O1 -D_GNU_SOURCE -std=gnu11
       -DHANGDOC_VERSION=\"fuzz\" -DHANGDOC_COMMIT=\"\"
       -I"$root/base" -I"$root/model" -I"$root/probe" -I"$root/analysis" -I"$root/render" -I"$root/record"
       -I/usr/include/"$(gcc -print-multiarch 2>/dev/null || echo x86_64-linux-gnu)")
# harness: the sources of the project it needs
declare -A sources=(
    [procfs]="base/util.c probe/procfs.c probe/maps.c probe/fds.c probe/memory.c probe/facilities.c model/snapshot.c"
    [text]="analysis/buffer.c base/json_writer.c"
    [catalogue]="base/util.c analysis/catalogue.c model/snapshot.c"
    [waits]="base/util.c probe/syscalls.c probe/locks.c probe/memory.c probe/facilities.c probe/procfs.c
             model/snapshot.c"
    [elf]="base/util.c probe/elf_memory.c probe/memory.c probe/facilities.c model/snapshot.c"
    [sock_diag]="base/util.c probe/fds.c probe/memory.c probe/facilities.c probe/procfs.c model/snapshot.c"
    [python]="probe/python_decode.c probe/python_offsets.c"
    [symbols]="base/util.c probe/symbols.c probe/rust_demangle.c probe/files.c model/snapshot.c"
    [rust_demangle]="probe/rust_demangle.c"
    [core]="base/util.c probe/core_file.c probe/files.c probe/syscalls.c probe/locks.c probe/memory.c probe/facilities.c
            probe/procfs.c model/snapshot.c"
    [snapshot]="base/util.c base/int_map.c base/json_writer.c model/snapshot.c record/fields.c record/record_read.c
                $(cd "$root" && echo analysis/*.c analysis/rules/*.c render/*.c)"
    [python_walk]="base/util.c probe/python.c probe/python_decode.c probe/python_memory.c probe/python_offsets.c
                   probe/python_symbols.c probe/elf_objects.c probe/memory.c probe/facilities.c base/int_map.c
                   probe/procfs.c probe/syscalls.c probe/files.c model/snapshot.c probe/clock.c analysis/gil.c"
)
mkdir -p "$work"

# fuzz_one NAME: builds the harness, runs it, and says what it found; its output is printed whole at its end, so
# that two harnesses at once do not mix their lines. Exit 1 when it found a problem.
fuzz_one() {
    local name=$1 files=() file
    for file in ${sources[$name]}; do files+=("$root/$file"); done
    {
        clang "${flags[@]}" "$root/tests/fuzz/fuzz_$name.c" "${files[@]}" -o "$work/fuzz_$name" -lelf -ldl -ljson-c -lz -lm || {
            echo "fuzz: $name did not build"
            return 1
        }
        rm -rf "$work/corpus_$name" "$work/crashes_$name"
        mkdir -p "$work/corpus_$name" "$work/crashes_$name"
        if ! (cd "$work" && ASAN_OPTIONS=detect_leaks=1 "./fuzz_$name" -max_total_time="$seconds" -rss_limit_mb=2048 \
                -artifact_prefix="crashes_$name/" "corpus_$name" "$root/tests/fuzz/corpus/$name" >"fuzz_$name.log" 2>&1); then
            echo "fuzz: $name found a problem:"
            tail -40 "$work/fuzz_$name.log"
            ls "$work/crashes_$name"
            return 1
        fi
        echo "fuzz: $name: $(grep -o 'Done [0-9]* runs in [0-9]* second(s)' "$work/fuzz_$name.log" | tail -1), nothing found"
    } >"$work/result_$name.txt" 2>&1
}

# Two harnesses at a time (a test of its own, beside the unit tests only: the scenario tests run alone).
status=0
names=(${HANGDOC_FUZZ_ONLY:-procfs text catalogue waits elf sock_diag python symbols python_walk rust_demangle snapshot core})
for ((i = 0; i < ${#names[@]}; i += 2)); do
    pids=()
    for name in "${names[@]:i:2}"; do
        fuzz_one "$name" &
        pids+=($!)
    done
    for ((j = 0; j < ${#pids[@]}; j++)); do
        wait "${pids[j]}" || status=1
        cat "$work/result_${names[i + j]}.txt"
    done
done
exit $status
