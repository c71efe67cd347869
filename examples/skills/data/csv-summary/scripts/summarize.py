#!/usr/bin/env python3
"""Print a CSV file's row count and per-column statistics."""
import csv
import sys


def main(path: str) -> None:
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    print(f"rows: {len(rows)}")
    if not rows:
        return
    for column in rows[0].keys():
        values = [r[column] for r in rows if r[column] != ""]
        try:
            numbers = [float(v) for v in values]
            print(f"{column}: number, min {min(numbers)}, max {max(numbers)}")
        except ValueError:
            print(f"{column}: text, {len(set(values))} distinct")


if __name__ == "__main__":
    main(sys.argv[1])
