"""Where the first compiled step's compile time goes, ours vs native MindSpore, in one invocation.

For each architecture (batch 32, 3x32x32, Adam), runs as separate processes, alternating (--repeat N times each):
  native: bench/native_resnet.py (TrainOneStepCell, compiled in its first step)
  ours:   run.py --no-compile-cache on bench/train_step.py (its second step is the first compiled call)
  ours with each ``--variant NAME=ENV=VALUE[,ENV=VALUE]`` (e.g. ``nocache=ADAPTER_DISABLE_PATCHES=...``); a NAME
        starting with ``native`` runs native's script with that environment instead
  before: with ``--before-root DIR``, ours from another checkout (e.g. ``git worktree add /tmp/before main``)
Each child runs with MindSpore's compile profiler on (``mindspore._extends.parse.compile_config.COMPILE_PROFILE``)
and with ``_CellGraphExecutor.compile`` timed (wall and process CPU seconds: CPU time moves less with the load of
this shared machine; also the compiling thread's own CPU seconds, and the other threads' CPU seconds during the
compile by thread name, from ``/proc/self/task``). With ``--ir``, the graphs are saved (``MS_DEV_SAVE_GRAPHS=1``,
which costs compile time itself: sizes only, do not compare times of an --ir run) and the number of function graphs
and nodes after type inference (01_type_inference IR) is reported, by the file that defines them (--ir-top).

Prints, per run, the largest compile's total, type_inference, optimize and task_emit (the profiler's seconds),
the compile's wall/CPU seconds, and the medians' ratio ours/native; writes JSON (--out).

    .venv/bin/python bench/compile_phases.py [--arch resnet18] [--repeat 2] [--ir] [--variant ...] [--out F]
"""
import argparse
import collections
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import stack  # noqa: E402  (bench/stack.py: the interpreter of the MINDSPORE= stack)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "bench"))  # run as a script or imported
from results import summarize  # noqa: E402
PY = stack.python()
MARK = "COMPILE_PHASES_JSON "
TOP_PHASES = ("type_inference", "optimize", "task_emit")


# -- child: run a script with the profiler on ------------------------------------------------------------------
def _thread_cpu() -> dict:
    """{native thread id: (name, user + system CPU s)} of this process's threads (Linux ``/proc/self/task``)."""
    tick = os.sysconf("SC_CLK_TCK")
    out = {}
    for tid in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{tid}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        name = stat[stat.index("(") + 1:stat.rindex(")")]
        fields = stat[stat.rindex(")") + 2:].split()
        out[int(tid)] = (re.sub(r"[0-9_]+$", "", name) or name, (int(fields[11]) + int(fields[12])) / tick)
    return out


def _child(target, argv):
    import resource
    import runpy
    import threading
    import time

    root = os.getcwd()  # the checkout being timed: ROOT, or --before-root's (the parent runs the child there)
    if root not in sys.path:
        sys.path.insert(0, root)  # its adapter/, not this file's (a 'before' run timed this checkout's code)
    from adapter import backend
    backend.internal("compile_config").COMPILE_PROFILE = "1"
    executor_class = backend.internal("CellGraphExecutor")
    compiles = []
    original = executor_class.compile

    def compile(self, obj, *args, **kwargs):  # noqa: A001
        threads = _thread_cpu()
        wall, cpu, own = time.perf_counter(), time.process_time(), time.thread_time()
        try:
            return original(self, obj, *args, **kwargs)
        finally:
            record = {"cell": type(obj).__name__, "wall_s": time.perf_counter() - wall,
                      "cpu_s": time.process_time() - cpu, "thread_cpu_s": time.thread_time() - own}
            after = _thread_cpu()
            busy = collections.Counter()  # CPU s of the other threads during the compile, by thread name
            for tid, (name, secs) in after.items():
                if tid != threading.get_native_id():
                    busy[name] += secs - threads.get(tid, (name, 0.0))[1]
            record["other_threads_cpu_s"] = {k: round(v, 3) for k, v in busy.most_common() if v >= 0.005}
            compiles.append(record)
    executor_class.compile = compile

    def report():
        usage = resource.getrusage(resource.RUSAGE_SELF)
        sys.stderr.write(MARK + json.dumps({"compiles": compiles, "cpu_total_s": usage.ru_utime + usage.ru_stime})
                         + "\n")
        sys.stderr.flush()
    import atexit
    atexit.register(report)
    sys.argv = [target] + argv
    sys.path[0] = os.path.dirname(os.path.abspath(target))
    runpy.run_path(target, run_name="__main__")


# -- parent -----------------------------------------------------------------------------------------------------
def _profiles(stdout: str) -> list:
    """[{phase path: seconds}] per compile, from the profiler's text (``TotalTime = x, [n]`` then indented
    ``[name]: seconds`` lines)."""
    out, cur, stack = [], None, []
    for line in stdout.splitlines():
        m = re.match(r"^TotalTime = ([0-9.e+-]+)", line)
        if m:
            cur = {"total": float(m.group(1))}
            out.append(cur)
            stack = []
            continue
        m = re.match(r"^(\s*)\[(.+?)\]: ([0-9.e+-]+)", line)
        if m and cur is not None:
            depth = len(m.group(1)) // 4
            stack = stack[:depth] + [m.group(2)]
            key = "/".join(stack)
            cur[key] = cur.get(key, 0.0) + float(m.group(3))
    return out


def _short(path: str) -> str:
    path = re.sub(r".*site-packages/", "", path)
    path = re.sub(r"^" + re.escape(ROOT) + "/", "", path)
    return re.sub(r".*/mindtorch_adapter_steps/.*", "<generated step>", path)


def _ir_sizes(folder: str, top: int) -> dict:
    """Function graphs and nodes after type inference, of the largest graph saved under ``folder``."""
    files = [os.path.join(d, f) for d, _, fs in os.walk(folder) for f in fs
             if re.match(r"01_type_inference_\d+\.ir$", f)]
    best = None
    for fn in files:
        fgs, nodes = collections.Counter(), collections.Counter()
        cur, pending = None, False
        with open(fn, errors="replace") as f:
            for line in f:
                if line.startswith("subgraph instance:"):
                    pending = True
                    continue
                if pending:
                    m = re.match(r"# In file (\S+?):\d+", line)
                    if m or line.startswith("subgraph @"):
                        cur = _short(m.group(1)) if m else "<no file>"
                        fgs[cur] += 1
                        pending = False
                    continue
                if cur and re.match(r"^\s+%\d+\(", line):
                    nodes[cur] += 1
        size = {"func_graphs": sum(fgs.values()), "nodes": sum(nodes.values()),
                "by_file": {k: {"nodes": v, "func_graphs": fgs[k]} for k, v in nodes.most_common(top)}}
        if best is None or size["nodes"] > best["nodes"]:
            best = size
    return best or {}


def _run(cmd, env, ir: bool, top: int, root: str = ROOT):
    env = dict(env)
    folder = None
    if ir:
        folder = tempfile.mkdtemp(prefix="compile_ir_")
        env.update(MS_DEV_SAVE_GRAPHS="1", MS_DEV_SAVE_GRAPHS_PATH=folder)
    try:
        proc = subprocess.run([PY, os.path.abspath(__file__), "--child", *cmd], cwd=root, capture_output=True,
                              text=True, env=env, timeout=3600)
        marks = [ln for ln in proc.stderr.splitlines() if ln.startswith(MARK)]
        if proc.returncode != 0 or not marks:
            return {"error": (proc.stderr.strip().splitlines() or [f"exit {proc.returncode}"])[-1]}
        result = json.loads(marks[-1][len(MARK):])
        last = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")]
        script = json.loads(last[-1]) if last else {}
        profiles = _profiles(proc.stdout)
        big = max(range(len(profiles)), key=lambda i: profiles[i]["total"]) if profiles else None
        out = {"losses": script.get("losses"), "step_s": script.get("step_s"),
               "compiles": result["compiles"], "profiles": profiles}
        if big is not None:
            prof = profiles[big]
            out["main"] = {"total": prof["total"], **{p: prof.get(p, 0.0) for p in TOP_PHASES}}
            wall = sorted(result["compiles"], key=lambda c: -c["wall_s"])
            if wall:
                out["main"].update(compile_wall_s=wall[0]["wall_s"], compile_cpu_s=wall[0]["cpu_s"],
                                   compile_thread_cpu_s=wall[0].get("thread_cpu_s", float("nan")))
                out["other_threads_cpu_s"] = wall[0].get("other_threads_cpu_s", {})
        if folder:
            out["ir"] = _ir_sizes(folder, top)
        return out
    finally:
        if folder:
            shutil.rmtree(folder, ignore_errors=True)


def main():
    if len(sys.argv) > 2 and sys.argv[1] == "--child":
        return _child(sys.argv[2], sys.argv[3:])
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--arch", nargs="+", default=["resnet18"], choices=["resnet18", "resnet50"])
    p.add_argument("--repeat", type=int, default=2)
    p.add_argument("--steps", type=int, default=2, help="steps per run (ours: 2 = reference step + compiled)")
    p.add_argument("--ir", action="store_true", help="also count function graphs and nodes (separate runs)")
    p.add_argument("--ir-top", type=int, default=12)
    p.add_argument("--variant", action="append", default=[],
                   help="NAME=ENV=VALUE[,ENV=VALUE]: run ours also with this environment (e.g. the 'before')")
    p.add_argument("--before-root", help="another checkout of this repository: its run.py is run as 'before'")
    p.add_argument("--no-native", action="store_true")
    p.add_argument("--out", default=os.path.join(ROOT, "bench", "compile_phases_results.json"))
    args = p.parse_args()
    base_env = dict(os.environ, GLOG_v="4")
    ours_flags = []
    if "--no-compile-cache" in subprocess.run([PY, "run.py", "--help"], cwd=ROOT, capture_output=True,
                                              text=True).stdout:
        ours_flags = ["--no-compile-cache"]
    runs = {} if args.no_native else {"native": ("native", {})}  # name: (command, environment)
    if args.before_root:
        runs["before"] = ("ours", {"_root": os.path.abspath(args.before_root)})
    runs["ours"] = ("ours", {})
    for spec in args.variant:  # a NAME starting with "native" runs native's script with that environment
        name, _, assignments = spec.partition("=")
        runs[name] = ("native" if name.startswith("native") else "ours",
                      dict(a.split("=", 1) for a in assignments.split(",") if a))
    results = {}
    for arch in args.arch:
        common = ["--arch", arch, "--steps", str(args.steps)]
        cmds = {"native": [os.path.join("bench", "native_resnet.py"), *common],
                "ours": ["run.py", *ours_flags, "--original", os.path.join("bench", "train_step.py"), *common]}
        r = {name: [] for name in runs}
        for _ in range(args.repeat):  # interleaved: the machine's load drifts
            for name, (kind, extra) in runs.items():
                env = dict(base_env, **extra)
                r[name].append(_run(cmds[kind], env, False, args.ir_top, env.pop("_root", ROOT)))
        if args.ir:
            for name, (kind, extra) in runs.items():
                env = dict(base_env, **extra)
                r[name + "_ir"] = [_run(cmds[kind], env, True, args.ir_top, env.pop("_root", ROOT))]
        summary = {}
        for name in runs:
            ok = [x["main"] for x in r[name] if "main" in x]
            if ok:
                summary[name] = {k: statistics.median(m[k] for m in ok) for k in ok[0]}
            ir = r.get(name + "_ir", [{}])[0].get("ir")
            if ir:
                summary.setdefault(name, {}).update(func_graphs=ir["func_graphs"], nodes=ir["nodes"])
        ratios = {}
        for name in summary:
            if name != "native" and "native" in summary:
                ratios[f"{name}/native"] = {k: summary[name][k] / summary["native"][k]
                                            for k in summary[name] if summary["native"].get(k)}
        if "before" in summary and "ours" in summary:
            ratios["ours/before"] = {k: summary["ours"][k] / summary["before"][k]
                                     for k in summary["ours"] if summary["before"].get(k)}
        results[arch] = {"runs": r, "median": summary, "ratios": ratios}
        print(f"\n{arch}: largest compile, median of {args.repeat} (profiler s; compile wall/cpu s)")
        cols = ["total", *TOP_PHASES, "compile_wall_s", "compile_cpu_s", "compile_thread_cpu_s", "func_graphs",
                "nodes"]
        print("  " + f"{'run':12s}" + "".join(f"{c:>16s}" for c in cols))
        for name, s in summary.items():
            print("  " + f"{name:12s}" + "".join(f"{s.get(c, float('nan')):16.2f}" for c in cols))
        for name, rt in ratios.items():
            print("  " + f"{name:12s}" + "".join(f"{rt.get(c, float('nan')):16.2f}" for c in cols))
        for name in runs:  # the other threads' CPU s during the largest compile (first run), by thread name
            busy = r[name][0].get("other_threads_cpu_s") if r[name] else None
            if busy:
                print(f"  {name}: other threads' CPU s during the compile: {busy}")
        for name in runs:
            for x in r[name]:
                if "error" in x:
                    print(f"  {name}: error: {x['error']}")
        losses = {name: r[name][0].get("losses") for name in runs if runs[name][0] != "native" and r[name]}
        if len({json.dumps(v) for v in losses.values()}) > 1:
            print("  LOSSES DIFFER between ours variants:", losses)
        elif losses:
            print("  ours variants' losses identical:", next(iter(losses.values())))
    with open(args.out, "w") as f:
        json.dump(results, f, indent=1)
    summarize(args.out)  # bench/results.py: the compact summary git keeps (the raw file is ignored)
    print(f"\nwritten to {args.out}")


if __name__ == "__main__":
    sys.exit(main())
