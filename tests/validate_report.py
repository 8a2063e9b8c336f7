#!/usr/bin/python3
"""Validates a hangdoc --json document against the committed JSON Schema (draft 2020-12).

Usage: validate_report.py SCHEMA REPORT. Exit 0 when valid; otherwise every error, one per line, and exit 1.
Run with Debian's /usr/bin/python3, which python3-jsonschema installs into.
"""
import json
import sys

import jsonschema


def main() -> int:
    schema_path, report_path = sys.argv[1], sys.argv[2]
    with open(schema_path, encoding="utf-8") as schema_file:
        schema = json.load(schema_file)
    with open(report_path, encoding="utf-8") as report_file:
        report = json.load(report_file)
    # python3-jsonschema 3.2 (Debian 11, Ubuntu 22.04) knows drafts up to 7: the schema's $defs are then only
    # JSON pointers, and the 2020-12 keywords it does not know are not checked, the rest is
    draft = getattr(jsonschema, "Draft202012Validator", None)
    if draft is None:
        # its resolver cannot join "#/$defs/..." to the schema's urn: $id; without the $id they resolve locally
        draft = jsonschema.Draft7Validator
        schema = {key: value for key, value in schema.items() if key not in ("$id", "$schema")}
    validator = draft(schema)
    validator.check_schema(schema)
    errors = sorted(validator.iter_errors(report), key=lambda error: list(error.absolute_path))
    for error in errors:
        where = "/".join(str(part) for part in error.absolute_path) or "(top)"
        print(f"{where}: {error.message}")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
