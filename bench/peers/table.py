"""bench/push's table: one line per tool, N and scenario, from its tab-separated results
(tool, N, scenario, round, wall seconds, operator CPU seconds, bytes sent per machine)."""

import statistics
import sys
from collections import defaultdict

runs = defaultdict(list)
for row in open(sys.argv[1]):
    tool, n, scenario, _round, wall, cpu, sent = row.rstrip("\n").split("\t")
    runs[(tool, int(n), scenario)].append((float(wall), float(cpu), int(sent)))

tools = ["ssh", "mesh", "pyinfra", "ansible"]
peers = [t for t in ("pyinfra", "ansible") if any(k[0] == t for k in runs)]


def median(key, i=0):
    return statistics.median(r[i] for r in runs[key]) if key in runs else None


head = ["tool", "N", "scenario", "wall", "spread", "CPU", "sent/machine", "x floor"]
head += [f"x {p}" for p in peers]
print("| " + " | ".join(head) + " |")
print("|" + "---|" * len(head))
for (tool, n, scenario) in sorted(runs, key=lambda k: (k[1], tools.index(k[0]), k[2])):
    key = (tool, n, scenario)
    walls = [r[0] for r in runs[key]]
    wall = statistics.median(walls)
    floor = median(("ssh", n, "ssh-curve"))
    cells = [
        tool,
        str(n),
        scenario,
        f"{wall:.2f} s",
        f"{min(walls):.2f}-{max(walls):.2f}",
        f"{median(key, 1):.2f} s",
        f"{median(key, 2) / 1024:.1f} KiB",
        f"{wall / floor:.2f}" if floor else "",
    ]
    for p in peers:
        other = median((p, n, scenario))
        cells.append(f"{wall / other:.2f}" if other and tool not in ("ssh", p) else "")
    print("| " + " | ".join(cells) + " |")
