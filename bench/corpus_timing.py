"""``run.py`` that also writes the time of every optimizer step's end to a JSON file (for ``bench/corpus_bench.py``).

    .venv/bin/python bench/corpus_timing.py TIMES.json [run.py options] --original SCRIPT [args...]

Listens to ``adapter/events.py``'s "step_end" (emitted for eager updates and for updates fused into a compiled step);
the list is written when the process exits, also when the script fails.
"""
import atexit
import json
import os
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def main():
    out = sys.argv[1]
    sys.path.insert(0, ROOT)
    from adapter import events
    from app import launcher
    times = []
    events.subscribe("step_end", lambda optimizer: times.append(time.perf_counter()))

    def write():
        with open(out, "w") as f:
            json.dump(times, f)

    atexit.register(write)
    sys.argv = [os.path.join(ROOT, "run.py")] + sys.argv[2:]
    code = launcher.main(sys.argv[1:])
    write()
    sys.exit(code)


if __name__ == "__main__":
    main()
