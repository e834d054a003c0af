"""bench/push's table: one line per tool, N and scenario, from its tab-separated results
(tool, N, scenario, round, wall seconds, operator CPU seconds, bytes sent per machine).

Beside each ratio to the floor stands its spread: the ratio taken round by round (each run
against the floor measured in the same round, so the host's load falls on both alike), min-max.
Then each of the performance targets against the floor, said met or missed only when every round
agrees; a target between the lowest and the highest round's ratio sits inside the noise and is
said so, since another run could fall either way."""

import statistics
import sys
from collections import defaultdict

runs = defaultdict(list)
by_round = {}
for row in open(sys.argv[1]):
    tool, n, scenario, rnd, wall, cpu, sent = row.rstrip("\n").split("\t")
    runs[(tool, int(n), scenario)].append((float(wall), float(cpu), int(sent)))
    by_round[(tool, int(n), scenario, rnd)] = float(wall)

tools = ["ssh", "mesh", "pyinfra", "ansible"]
peers = [t for t in ("pyinfra", "ansible") if any(k[0] == t for k in runs)]
# (scenario, the most it may be as a ratio to the floor): the performance targets, at every N
TARGETS = [("no-op", 0.8), ("change", 1.0), ("cold", 2.0)]


def median(key, i=0):
    return statistics.median(r[i] for r in runs[key]) if key in runs else None


def round_ratios(tool, n, scenario, other=("ssh", "ssh-curve")):
    """The ratio to `other` (the floor unless named) in each round both were measured."""
    out = []
    for (t, m, s, rnd), wall in by_round.items():
        if (t, m, s) == (tool, n, scenario):
            base = by_round.get((other[0], n, other[1], rnd))
            if base:
                out.append(wall / base)
    return sorted(out)


def spread(ratios):
    return f"{ratios[0]:.2f}-{ratios[-1]:.2f}" if ratios else ""


head = ["tool", "N", "scenario", "wall", "spread", "CPU", "sent/machine", "x floor", "x floor spread"]
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
        spread(round_ratios(tool, n, scenario)),
    ]
    for p in peers:
        other = median((p, n, scenario))
        if other and tool not in ("ssh", p):
            cells.append(f"{wall / other:.2f} ({spread(round_ratios(tool, n, scenario, (p, scenario)))})")
        else:
            cells.append("")
    print("| " + " | ".join(cells) + " |")

print()
print("| target | N | median | rounds | verdict |")
print("|---|---|---|---|---|")
for scenario, most in TARGETS:
    for n in sorted({k[1] for k in runs if k[:1] == ("mesh",) and k[2] == scenario}):
        ratios = round_ratios("mesh", n, scenario)
        floor = median(("ssh", n, "ssh-curve"))
        if not ratios or not floor:
            continue
        med = median(("mesh", n, scenario)) / floor
        if ratios[-1] <= most:
            verdict = "met in every round"
        elif ratios[0] > most:
            verdict = "missed in every round"
        else:
            verdict = f"inside the noise: {'met' if med <= most else 'missed'} at the median only"
        print(f"| {scenario} at most {most}x the floor | {n} | {med:.2f}x | {spread(ratios)} | {verdict} |")
