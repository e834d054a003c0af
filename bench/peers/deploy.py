"""bench/push's workload through pyinfra: a directory, a 2 KB file from a template, keys merged
into a shared JSON file, and a reload of Docker's daemon only when one of them moved."""

import os

from pyinfra.operations import files, server, systemd

LINE = os.environ["BENCH_LINE"]
TEMPLATE = os.environ["BENCH_TEMPLATE"]
# pyinfra has no operation that merges keys into a JSON file: a script on the machine does it,
# writing only when a key moves and saying so, which the reload reads.
MERGE = (
    "python3 -c 'import json, os, sys; p = \"/etc/pyinfra-bench.json\"; "
    "d = json.load(open(p)) if os.path.exists(p) else {}; "
    "w = dict(d, bench=dict(d.get(\"bench\", {}), line=sys.argv[1], enabled=True)); "
    "w == d or (json.dump(w, open(p, \"w\"), indent=2), print(\"moved\"))' "
)

files.directory(name="directory", path="/srv/pyinfra/bench/data", mode="755")
conf = files.template(
    name="2 KB file",
    src=TEMPLATE,
    dest="/srv/pyinfra/bench/data/bench.conf",
    mode="644",
    line=LINE,
)
keys = server.shell(name="keys merged", commands=[MERGE + "'" + LINE.replace("'", "") + "'"])
systemd.service(
    name="reload when moved",
    service="docker.service",
    reloaded=True,
    _if=conf.did_change,
)
