#!/usr/bin/env python3
"""Where one unit of a workload's instructions go, from two callgrind profiles of different length.

Usage: callgrind-split.py SHORT.out LONG.out EXTRA_UNITS [TOP]

Each function's exclusive Ir in LONG minus that in SHORT, divided by EXTRA_UNITS (the units LONG ran
beyond SHORT), so that start-up, the warm-up iteration and exit cancel out as in callgrind.sh.
Prints the total per unit, its split into the parts Benchmarks/README.md's floor table uses, and
the TOP functions (default 15) with their part.
"""

import re
import subprocess
import sys
from collections import defaultdict

LINE = re.compile(r"^\s*([\d,]+) \(\s*[\d.]+%\)\s+(.*?):(.*?)(?: \[(.*)\])?$")


def swift_module(function):
    """The module a mangled Swift symbol belongs to ("$s12Tomorrowland7Promise..." -> "Tomorrowland")."""
    match = re.match(r"^\$s(\d+)", function)
    if not match:
        return None
    length = int(match.group(1))
    start = match.end()
    return function[start:start + length]


# (part, test on (source file, function, object)), first match wins.
PARTS = [
    ("glibc malloc/free", lambda f, fn, o: "malloc/" in f or fn in ("malloc", "free", "_int_malloc", "_int_free")),
    ("Swift runtime", lambda f, fn, o: "libswiftCore" in o or fn.startswith("swift_") or fn.startswith("bool swift::")
     or fn.startswith("swift::")),
    ("Tomorrowland (core)", lambda f, fn, o: swift_module(fn) == "Tomorrowland"),
    ("benchmark's own code", lambda f, fn, o: swift_module(fn) == "TomorrowlandBench"),
    ("Tomorrowland's loops", lambda f, fn, o: (swift_module(fn) or "").startswith("Tomorrowland")),
    ("other Swift (stdlib, NIO)", lambda f, fn, o: swift_module(fn) is not None),
    ("other (libc, kernel calls)", lambda f, fn, o: True),
]


def profile(path):
    """Exclusive Ir per (file, function, object) of one callgrind output, via callgrind_annotate."""
    text = subprocess.run(
        ["callgrind_annotate", "--threshold=100", "--inclusive=no", path],
        check=True, capture_output=True, text=True).stdout
    costs = defaultdict(int)
    for line in text.splitlines():
        match = LINE.match(line)
        if not match or match.group(2) == "PROGRAM TOTALS":
            continue
        ir, source, function, obj = match.groups()
        # Recursion levels ("swift_release'2") are the same function.
        function = re.sub(r"'\d+$", "", function)
        costs[(source, function, obj or "")] += int(ir.replace(",", ""))
    return costs


def part_of(key):
    source, function, obj = key
    return next(name for name, test in PARTS if test(source, function, obj))


def demangled(symbols):
    """Readable names for Swift symbols (swift demangle --simplified), the rest unchanged."""
    try:
        out = subprocess.run(["swift", "demangle", "--simplified", "--compact"], input="\n".join(symbols),
                             check=True, capture_output=True, text=True).stdout.splitlines()
        return out if len(out) == len(symbols) else symbols
    except (OSError, subprocess.CalledProcessError):
        return symbols


def main():
    short, long, units = profile(sys.argv[1]), profile(sys.argv[2]), float(sys.argv[3])
    top = int(sys.argv[4]) if len(sys.argv) > 4 else 15
    delta = {key: (long.get(key, 0) - short.get(key, 0)) / units for key in set(short) | set(long)}
    total = sum(delta.values())
    parts = defaultdict(float)
    for key, value in delta.items():
        parts[part_of(key)] += value
    print(f"total: {total:,.1f} Ir per unit")
    for name, _ in PARTS:
        print(f"  {name:<28} {parts[name]:>8,.1f}  ({100 * parts[name] / total:4.1f}%)")
    ranked = sorted(delta.items(), key=lambda item: -item[1])[:top]
    names = demangled([key[1] for key, _ in ranked])
    print(f"top {top} functions (exclusive Ir per unit):")
    for (key, value), name in zip(ranked, names):
        print(f"  {value:>8,.1f}  {part_of(key):<28} {name[:110]}")


if __name__ == "__main__":
    main()
