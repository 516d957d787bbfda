#!/usr/bin/env python3
"""JFR execution samples -> a self-contained SVG flame graph (and the collapsed stacks next to it).

Usage: bench/tools/jfr-flame.py RECORDING.jfr OUT.svg [--title T] [--thread-filter SUBSTRING]

Reads `jfr print --events jdk.ExecutionSample --stack-depth 128` (the JDK's own jfr tool), so nothing to install.
Frames are "Class.method"; the width of a box is its share of the samples. Hovering shows the share.
"""
import html
import re
import subprocess
import sys
from collections import defaultdict

FRAME = re.compile(r"^\s+([\w$.<>\[\]/]+)\(.*\)\s+line:")


def samples(path, thread_filter):
    out = subprocess.run(["jfr", "print", "--events", "jdk.ExecutionSample", "--stack-depth", "128", path],
                         check=True, capture_output=True, text=True).stdout
    stacks = defaultdict(int)
    frames, thread, in_stack = [], "", False
    for line in out.splitlines():
        s = line.strip()
        if s.startswith("jdk.ExecutionSample"):
            frames, thread, in_stack = [], "", False
        elif s.startswith("sampledThread"):
            thread = s
        elif s.startswith("stackTrace = ["):
            in_stack = True
        elif in_stack and s == "]":
            in_stack = False
            if frames and (not thread_filter or thread_filter in thread):
                stacks[";".join(reversed(frames))] += 1
        elif in_stack:
            m = FRAME.match(line)
            if m:
                frames.append(m.group(1))
    return stacks


def tree(stacks):
    root = {"n": 0, "c": {}}
    for stack, count in stacks.items():
        node = root
        node["n"] += count
        for frame in stack.split(";"):
            node = node["c"].setdefault(frame, {"n": 0, "c": {}})
            node["n"] += count
    return root


def render(root, title, width=1200, row=16):
    total = max(root["n"], 1)
    boxes = []

    def walk(node, name, x, depth):
        w = node["n"] / total * width
        if w < 0.3:
            return
        boxes.append((x, depth, w, name, node["n"]))
        cx = x
        for child_name, child in sorted(node["c"].items(), key=lambda kv: -kv[1]["n"]):
            walk(child, child_name, cx, depth + 1)
            cx += child["n"] / total * width

    walk(root, "all", 0, 0)
    depth = max(b[1] for b in boxes) + 1
    height = depth * row + 40
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" font-family="monospace" '
           f'font-size="11"><rect width="100%" height="100%" fill="white"/>',
           f'<text x="4" y="16" font-size="14" font-family="sans-serif">{html.escape(title)} '
           f'({total} samples; width = share of CPU samples, callers below callees on top)</text>']
    for x, d, w, name, n in boxes:
        y = height - (d + 1) * row
        hue = 10 + (hash(name) % 40)
        share = n * 100.0 / total
        label = name if len(name) * 6.5 < w else name[: max(0, int(w / 6.5) - 2)] + ".." if w > 20 else ""
        out.append(f'<g><title>{html.escape(name)} — {n} samples ({share:.1f}%)</title>'
                   f'<rect x="{x:.1f}" y="{y}" width="{max(w - 0.5, 0.3):.1f}" height="{row - 1}" '
                   f'fill="hsl({hue},85%,60%)"/>'
                   f'<text x="{x + 2:.1f}" y="{y + row - 4}">{html.escape(label)}</text></g>')
    out.append("</svg>")
    return "\n".join(out)


def main():
    args = sys.argv[1:]
    if len(args) < 2:
        sys.exit(__doc__)
    title = args[args.index("--title") + 1] if "--title" in args else args[0]
    thread_filter = args[args.index("--thread-filter") + 1] if "--thread-filter" in args else ""
    stacks = samples(args[0], thread_filter)
    if not stacks:
        sys.exit("no execution samples in " + args[0])
    with open(args[1], "w") as f:
        f.write(render(tree(stacks), title))
    with open(re.sub(r"\.svg$", "", args[1]) + ".collapsed.txt", "w") as f:
        for stack, n in sorted(stacks.items(), key=lambda kv: -kv[1]):
            f.write(f"{stack} {n}\n")
    # The hottest leaf frames, for the hot-spot lines of docs/performance.md.
    leaves = defaultdict(int)
    for stack, n in stacks.items():
        leaves[stack.split(";")[-1]] += n
    total = sum(stacks.values())
    for frame, n in sorted(leaves.items(), key=lambda kv: -kv[1])[:15]:
        print(f"{n * 100.0 / total:5.1f}%  {frame}")


if __name__ == "__main__":
    main()
