#!/bin/sh
# The man page renders, and man(1) has nothing to say about it: no warning of groff or of the man macros.
set -eu
page=$1
warnings=$(MANWIDTH=80 man --warnings -E UTF-8 -l "$page" 2>&1 >/dev/null)
if [ -n "$warnings" ]; then
    printf 'man -l %s warns:\n%s\n' "$page" "$warnings"
    exit 1
fi
rendered=$(MANWIDTH=80 man -E UTF-8 -l "$page" 2>/dev/null)
for section in NAME SYNOPSIS DESCRIPTION OPTIONS "EXIT STATUS" EXAMPLES; do
    printf '%s\n' "$rendered" | grep -q "^$section" || { echo "section $section is missing"; exit 1; }
done
echo "man page renders without warnings"
