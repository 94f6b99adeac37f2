#!/usr/bin/env python3
"""Draws the ours/NIO ratios of a benchmark table as a PNG bar chart.

Two bars per workload: the ratio of the wall-clock medians and the ratio of the loop thread's CPU
time (steadier on a loaded machine). M1 has one, the ratio of malloc bytes per pending promise.

Usage: chart.py results/latest.md results/latest.png
"""
import re
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def number(text):
    try:
        return float(text)
    except ValueError:
        return None


def read_rows(path):
    """Returns (header lines, [(id, title, wall ratio, CPU ratio)]) from the bench's Markdown."""
    header, rows = [], []
    with open(path, encoding="utf-8") as file:
        for line in file:
            if line.startswith(("- Date:", "- Machine:", "- Toolchain:", "- Load average")):
                header.append(line[2:].strip())
            cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
            if len(cells) < 8 or not re.fullmatch(r"[WM]\d\w*(@NIO)?", cells[0]):
                continue
            rows.append((cells[0], cells[1], number(cells[5]), number(cells[7])))
    return header, rows


def main():
    source, target = sys.argv[1], sys.argv[2]
    header, rows = read_rows(source)
    figure, axes = plt.subplots(figsize=(11, 0.55 * len(rows) + 2.4))
    height = 0.38
    labels = []
    for index, (row_id, title, wall, cpu) in enumerate(rows):
        labels.append(f"{row_id} {title}" + ("" if wall else " (not available)"))
        for offset, ratio, colour_fast, colour_slow, name in (
            (-height / 2, wall, "#2a9d4b", "#c0392b", "wall"),
            (height / 2, cpu, "#8fd19e", "#f1a9a0", "loop CPU"),
        ):
            if ratio is None:
                continue
            axes.barh(index + offset, ratio, height=height, color=colour_fast if ratio < 1 else colour_slow)
            name = "malloc bytes" if row_id == "M1" else name
            axes.text(ratio, index + offset, f" {ratio:.2f} {name}", va="center", fontsize=7)
        if wall is None:
            axes.text(1.0, index, " n/a", va="center", fontsize=8)
    axes.set_yticks(list(range(len(rows))), labels, fontsize=8)
    axes.invert_yaxis()
    axes.axvline(1.0, color="black", linewidth=1)
    axes.set_xscale("log")
    values = [value for _, _, wall, cpu in rows for value in (wall, cpu) if value]
    if values:
        # Room on the right for the label of the longest bar.
        axes.set_xlim(min(min(values), 1.0) / 1.5, max(max(values), 1.0) * 2.4)
    axes.set_xlabel("ours / SwiftNIO per unit, log scale, below 1 = ours better\n"
                    "dark: wall-clock median; light: loop-thread CPU; M1: malloc bytes", fontsize=9)
    axes.set_title("Tomorrowland (on EventLoop; @NIO rows: on NIO's loop) vs SwiftNIO\n" + "\n".join(header), fontsize=8)
    figure.tight_layout()
    figure.savefig(target, dpi=110)
    print(f"wrote {target}")


if __name__ == "__main__":
    main()
