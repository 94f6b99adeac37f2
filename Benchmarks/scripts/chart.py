#!/usr/bin/env python3
"""Draws the ours/NIO ratio of every workload in a benchmark table as a PNG bar chart.

Usage: chart.py results/latest.md results/latest.png
"""
import re
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def read_rows(path):
    """Returns (header lines, [(id, title, ratio)]) from the Markdown file the bench wrote."""
    header, rows = [], []
    with open(path, encoding="utf-8") as file:
        for line in file:
            if line.startswith("- Date:") or line.startswith("- Machine:") or line.startswith("- Toolchain:"):
                header.append(line[2:].strip())
            cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
            if len(cells) < 6 or not re.fullmatch(r"[WM]\d\w*", cells[0]):
                continue
            try:
                rows.append((cells[0], cells[1], float(cells[5])))
            except ValueError:
                rows.append((cells[0], cells[1] + " (not available)", None))
    return header, rows


def main():
    source, target = sys.argv[1], sys.argv[2]
    header, rows = read_rows(source)
    labels = [f"{row_id} {title}" for row_id, title, _ in rows]
    ratios = [ratio if ratio is not None else 0 for _, _, ratio in rows]
    colours = ["#2a9d4b" if ratio and ratio < 1 else "#c0392b" for ratio in ratios]

    figure, axes = plt.subplots(figsize=(10, 0.45 * len(rows) + 2))
    positions = range(len(rows))
    axes.barh(positions, ratios, color=colours)
    axes.set_yticks(list(positions), labels, fontsize=8)
    axes.invert_yaxis()
    axes.axvline(1.0, color="black", linewidth=1)
    axes.set_xscale("log")
    axes.set_xlabel("time per unit, ours / SwiftNIO (log scale; below 1 = ours faster; M1: bytes)")
    for position, ratio in zip(positions, ratios):
        text = f"{ratio:.2f}" if ratio else "n/a"
        axes.text(ratio if ratio else 1.0, position, f" {text}", va="center", fontsize=8)
    axes.set_title("Tomorrowland on EventLoop vs SwiftNIO\n" + "\n".join(header), fontsize=8)
    figure.tight_layout()
    figure.savefig(target, dpi=110)
    print(f"wrote {target}")


if __name__ == "__main__":
    main()
