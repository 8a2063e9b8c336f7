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
    validator = jsonschema.Draft202012Validator(schema)
    validator.check_schema(schema)
    errors = sorted(validator.iter_errors(report), key=lambda error: list(error.absolute_path))
    for error in errors:
        where = "/".join(str(part) for part in error.absolute_path) or "(top)"
        print(f"{where}: {error.message}")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
