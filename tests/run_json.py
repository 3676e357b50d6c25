"""``run.py`` in a subprocess for end-to-end tests whose fixture prints its result as JSON on its last stdout line."""
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run(*args, timeout=600):
    """``run.py *args`` from the project root; asserts exit 0 (stderr's tail in the message). Returns
    ``(last stdout line parsed as JSON, stderr)``."""
    proc = subprocess.run([sys.executable, os.path.join(ROOT, "run.py"), *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=timeout)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1]), proc.stderr
