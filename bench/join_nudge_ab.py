"""MindSpore's cluster join alone (``mindspore.communication.init()`` of 2 CPU workers and a scheduler that already
listens, as ``init_process_group`` arranges), with and without one of ``adapter/distributed/cluster.py``'s measures
around it (``--variable``: ``ADAPTER_JOIN_NUDGE``, ``nudged_join``; ``ADAPTER_JOIN_BATCH``, ``unpreempted_join``;
the other one stays on), interleaved pair by pair; counts each join's lost connection races from MindSpore's log.

    .venv/bin/python bench/join_nudge_ab.py [--pairs 5] [--variable ADAPTER_JOIN_NUDGE] [--out bench/join_nudge_ab.json]

Per join: each worker's ``init()`` seconds and the number of lost races (``GLOG_v=1`` log lines ``Connection from
to  is successfully created`` with empty addresses: the connecting thread then waits ~2.5 s more; see
docs/distributed.md). Compare the two sides at equal race counts: the races are MindSpore's and random.
"""
from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "bench"))
import machine  # noqa: E402

WORKER = ("import os, sys, time\n"
          "sys.path.insert(0, {root!r})\n"
          "import mindspore as ms\n"
          "ms.set_device('CPU')\n"
          "from mindspore.communication import init\n"
          "from adapter.distributed.cluster import nudged_join, unpreempted_join\n"
          "t = time.time()\n"
          "if os.environ['MS_ROLE'] == 'MS_WORKER':\n"
          "    with nudged_join('mccl'), unpreempted_join():\n"
          "        init()\n"
          "else:\n"
          "    init()\n"
          "print('INIT_S', time.time() - t, flush=True)\n")
RACE = "Connection from  to  is successfully created"


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def join_once(on: bool, work: str, timeout: float, variable: str = "ADAPTER_JOIN_NUDGE") -> dict:
    port = _port()
    env = dict(os.environ, MS_WORKER_NUM="2", MS_SCHED_HOST="127.0.0.1", MS_SCHED_PORT=str(port),
               MS_TOPO_TIMEOUT="60", GLOG_v="1", MS_RETRY_INTERVAL_LOWER="1", MS_RETRY_INTERVAL_UPPER="1",
               **{variable: "1" if on else "0"})
    code = WORKER.format(root=ROOT)
    logs = [os.path.join(work, f"{name}.log") for name in ("sched", "w0", "w1")]
    procs = [subprocess.Popen([sys.executable, "-c", code], env=dict(env, MS_ROLE="MS_SCHED"),
                              stdout=open(logs[0], "w"), stderr=subprocess.STDOUT)]
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            break
        except OSError:
            time.sleep(0.05)
    for rank in (0, 1):
        procs.append(subprocess.Popen([sys.executable, "-c", code],
                                      env=dict(env, MS_ROLE="MS_WORKER", MS_NODE_ID=str(rank)),
                                      stdout=open(logs[rank + 1], "w"), stderr=subprocess.STDOUT))
    for p in procs:
        try:
            p.wait(timeout=max(1.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
    out = {variable: int(on), "init_s": [], "races": []}
    for log in logs[1:]:
        text = open(log, errors="replace").read()
        out["races"].append(text.count(RACE))
        times = [float(line.split()[1]) for line in text.splitlines() if line.startswith("INIT_S ")]
        out["init_s"].append(round(times[0], 2) if times else None)
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--pairs", type=int, default=5)
    p.add_argument("--timeout", type=float, default=90)
    p.add_argument("--variable", default="ADAPTER_JOIN_NUDGE", choices=["ADAPTER_JOIN_NUDGE", "ADAPTER_JOIN_BATCH"])
    p.add_argument("--out", default=os.path.join(ROOT, "bench", "join_nudge_ab.json"))
    args = p.parse_args()
    joins = []
    with tempfile.TemporaryDirectory() as work:
        for i in range(args.pairs):
            for on in (True, False):
                j = join_once(on, work, args.timeout, args.variable)
                j["load_avg_1m"] = round(os.getloadavg()[0], 2)
                joins.append(j)
                print(f"pair {i + 1} {args.variable}={int(on)}: init {j['init_s']} s, lost races {j['races']}",
                      flush=True)
    with open(args.out, "w") as f:
        json.dump({"date": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()), "machine": machine.describe(),
                   "joins": joins}, f, indent=1)
    print("wrote", args.out)


if __name__ == "__main__":
    main()
