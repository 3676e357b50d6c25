"""The user's output holds the script's output and ours, not MindSpore's or MindTorch's log lines (unless
run.py --verbose); one --explain block per process (issue 13)."""
import os
import re

import pytest

from adapter.distributed import free_port
from patches.log_noise import MS_LOG_LINE

from support import ROOT, run_py

FIXTURES = os.path.join(ROOT, "tests", "fixtures", "output")


def run(*args, env=None):
    proc = run_py(*args, env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc.stdout, proc.stderr


def test_mindtorch_no_op_warnings_hidden_and_others_named_once_with_the_users_line():
    script = os.path.join(FIXTURES, "library_warnings.py")
    out, err = run("--original", script)
    assert out == "2 done\n"
    assert "[MindTorch WARNING]" not in err, err  # torch.jit.unused, pin_memory: they change nothing computed
    assert err.splitlines() == ["run.py: tests/fixtures/output/library_warnings.py:16: MindTorch: "
                                "nn.init.xavier_uniform is now deprecated in favor of nn.init.xavier_uniform_."], err
    _, err = run("--verbose", "--original", script)
    assert "[MindTorch WARNING]: Currently, torch.jit.unused is not effectived." in err
    assert "[MindTorch WARNING]: Don't support pin_memory now." in err
    assert "[MindTorch WARNING]: is_sparse is always False in Tensor." in err


@pytest.fixture(scope="module")
def spawn_run():
    """imagenet --multiprocessing-distributed in small: mp.spawn, a child that joins a cluster and trains."""
    return run("--explain", "--original", os.path.join(FIXTURES, "spawn_train.py"), str(free_port()))


def test_a_cluster_child_prints_no_mindspore_log_lines_at_exit(spawn_run):
    out, err = spawn_run
    logs = [line for line in (out + err).splitlines() if re.match(MS_LOG_LINE, line)]
    assert logs == [], logs  # were: [INFO] PS(...) [.../tcp_client.cc:318] Start] Event base dispatch success!
    assert '{"losses": [' in out


def test_one_explain_block_per_process_with_mp_spawn(spawn_run):
    _, err = spawn_run
    headers = [line for line in err.splitlines() if line.startswith("run.py --explain")]
    assert headers == ["run.py --explain (mp.spawn process 0):"], err  # the parent ran no step: no block
    assert "spawn_train.py:23: backward() of loss — compiled (graph mode, fused" in err


def test_mindspore_stack_dump_on_a_changed_graph_structure_is_not_printed():
    """MindSpore's PyNative runs `traceback.print_stack()` (py::exec) when a recorded graph changes structure,
    whatever the log level: ~30 lines of stack without a header. Hidden; shown with --verbose."""
    script = os.path.join(FIXTURES, "dynamic_structure.py")
    out, err = run("--mode", "pynative", "--original", script)
    assert out == "ok\n"
    assert '  File "' not in err, err
    _, err = run("--verbose", "--mode", "pynative", "--original", script)
    assert 'File "<string>", line 4, in <module>' in err  # MindSpore's exec'd print_stack, shown on request


def test_print_stack_of_everyone_else_is_untouched(capsys):
    import traceback
    from patches import log_noise
    log_noise.apply()  # conftest installs the patches already; idempotent
    namespace = {}
    exec(compile("def call():\n    exec('import traceback\\ntraceback.print_stack()', {})\n",
                 os.path.join(os.sep, "x", "mindspore", "fake.py"), "exec"), namespace)
    namespace["call"]()
    assert capsys.readouterr().err == ""  # MindSpore's exec'd call: nothing
    traceback.print_stack()
    assert "test_print_stack_of_everyone_else_is_untouched" in capsys.readouterr().err
