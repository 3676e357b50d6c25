"""Data parallel: ``run.py --nproc-per-node N`` (torchrun-style) and ``mp.spawn`` scripts on MindSpore's cluster.

Multi-process tests run 2 workers on CPU over loopback, each launch bounded by a timeout and checked for leftover
processes (every process of a launch carries a unique environment tag); they take ~20-40 s each on a 2-core machine
and are marked ``slow``. References: gradients are checked against the mean of the ranks' local gradients computed
by hand (numpy, float64, closed-form backprop of the fixture's MLP); the 2-worker run against a 1-worker run with the
doubled batch; sampler shards against PyTorch's ``randperm`` (values recorded from torch 2.13).
"""
import json
import os
import signal
import socket
import subprocess
import time
import uuid

import numpy as np
import pytest

from adapter.distributed import free_port

from support import ROOT, start_py

FIXTURES = os.path.join(ROOT, "tests", "fixtures", "ddp")
TRAIN = os.path.join(FIXTURES, "train_ddp.py")
SPAWN = os.path.join(FIXTURES, "spawn_ddp.py")
LAUNCH_TIMEOUT = 240  # seconds per launch (typically 20-40)


# -- helpers ----------------------------------------------------------------------------------------------------

def _tagged_pids(tag):
    """PIDs of live processes whose environment carries ``ADAPTER_TEST_TAG=tag``."""
    found = []
    needle = f"ADAPTER_TEST_TAG={tag}".encode()
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/environ", "rb") as f:
                if needle in f.read().split(b"\0"):
                    with open(f"/proc/{pid}/stat") as s:
                        if s.read().split(")")[-1].split()[0] != "Z":  # zombies are not running
                            found.append(int(pid))
        except OSError:
            continue
    return found


def launch(args, timeout=LAUNCH_TIMEOUT):
    """Run ``run.py ARGS`` in its own session; kill the whole session on timeout; assert nothing is left behind.
    Returns (CompletedProcess-like, wall seconds, end time)."""
    tag = uuid.uuid4().hex
    start = time.time()
    proc = start_py(*args, env=dict(ADAPTER_TEST_TAG=tag),
                    unset=("MS_ROLE", "RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT", "LOCAL_RANK"),
                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        _kill_tagged(tag)
        pytest.fail(f"run.py {' '.join(args)} did not finish in {timeout} s:\n{err[-3000:]}")
    end = time.time()
    deadline = time.time() + 10  # a scheduler finalizes a few seconds after its workers
    while _tagged_pids(tag) and time.time() < deadline:
        time.sleep(0.5)
    left = _tagged_pids(tag)
    _kill_tagged(tag)
    assert not left, f"processes left behind by run.py: {left}"
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err), end - start, end


def _kill_tagged(tag):
    for pid in _tagged_pids(tag):
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


def ranks(out_dir, n):
    result = []
    for r in range(n):
        with open(os.path.join(out_dir, f"rank{r}.json")) as f:
            result.append(json.load(f))
    return result


def mlp_grads(weights, x, y):
    """Closed-form gradients of MSELoss(fc2(tanh(fc1(x))), y) (mean over all elements), float64."""
    w1, b1 = np.array(weights["fc1.weight"], np.float64), np.array(weights["fc1.bias"], np.float64)
    w2, b2 = np.array(weights["fc2.weight"], np.float64), np.array(weights["fc2.bias"], np.float64)
    x, y = np.array(x, np.float64), np.array(y, np.float64)
    h = np.tanh(x @ w1.T + b1)
    out = h @ w2.T + b2
    d_out = 2.0 * (out - y) / out.size
    d_pre = (d_out @ w2) * (1.0 - h * h)
    return {"fc1.weight": d_pre.T @ x, "fc1.bias": d_pre.sum(0), "fc2.weight": d_out.T @ h, "fc2.bias": d_out.sum(0)}


def max_rel(a, b):
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    return float(np.abs(a - b).max() / max(np.abs(b).max(), 1e-12))


# -- fast, in-process -------------------------------------------------------------------------------------------

# torch 2.13: torch.randperm(n, generator=torch.Generator().manual_seed(seed)).tolist()
TORCH_RANDPERM = {
    (10, 0): [4, 1, 7, 5, 3, 9, 0, 8, 6, 2],
    (64, 7): [47, 14, 15, 18, 0, 40, 63, 9, 60, 55, 62, 46, 56, 28, 26, 23, 58, 61, 25, 52, 5, 38, 39, 50, 19, 54, 22,
              16, 34, 32, 7, 10, 44, 59, 33, 31, 8, 36, 49, 21, 13, 43, 24, 37, 12, 51, 35, 17, 42, 29, 45, 53, 6, 4, 3,
              2, 1, 11, 57, 30, 27, 20, 48, 41],
    (13, 123456789): [12, 5, 1, 10, 3, 4, 11, 0, 9, 8, 2, 7, 6],
}


def test_sampler_permutation_is_pytorchs():
    from patches.distributed_sampler import torch_randperm
    for (n, seed), expected in TORCH_RANDPERM.items():
        assert torch_randperm(n, seed) == expected


def test_distributed_sampler_shards_as_pytorch():
    from torch.utils.data.distributed import DistributedSampler
    data = list(range(10))
    # torch 2.13, set_epoch(2): values recorded from torch.utils.data.DistributedSampler
    s = DistributedSampler(data, num_replicas=3, rank=1, shuffle=True, seed=5)
    s.set_epoch(2)
    assert list(s) == [0, 1, 6, 5] and len(s) == 4
    s = DistributedSampler(data, num_replicas=3, rank=2, shuffle=True, seed=5, drop_last=True)
    s.set_epoch(2)
    assert list(s) == [3, 7, 8] and len(s) == 3
    s = DistributedSampler(data, num_replicas=4, rank=3, shuffle=False)
    assert list(s) == [3, 7, 1]
    # shards: disjoint, covering (padding repeats the first indices), reshuffled per epoch
    for drop_last in (False, True):
        shards = [list(DistributedSampler(data, num_replicas=3, rank=r, seed=1, drop_last=drop_last))
                  for r in range(3)]
        flat = sum(shards, [])
        assert len({len(s) for s in shards}) == 1
        if drop_last:
            assert len(set(flat)) == len(flat) == 9
        else:
            assert set(flat) == set(data) and len(flat) == 12
    s = DistributedSampler(data, num_replicas=2, rank=0, seed=1)
    first = list(s)
    s.set_epoch(1)
    assert list(s) != first


def test_sampler_without_process_group_says_so():
    from torch.utils.data.distributed import DistributedSampler
    with pytest.raises(RuntimeError, match="test_distributed.py:[0-9]+: Default process group has not been init"):
        DistributedSampler(list(range(4)))


def test_init_process_group_without_launcher_names_the_missing_variable(monkeypatch):
    import torch.distributed as dist
    for name in ("MS_ROLE", "MASTER_ADDR", "MASTER_PORT", "WORLD_SIZE", "RANK"):
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(ValueError, match=r"test_distributed.py:[0-9]+: .*environment variable MASTER_ADDR expected"
                                         r".*--nproc-per-node"):
        dist.init_process_group(backend="nccl", init_method="env://")
    with pytest.raises(ValueError, match="Invalid backend: 'fancy'"):
        dist.init_process_group(backend="fancy")
    with pytest.raises(NotImplementedError, match="file://"):
        dist.init_process_group(backend="gloo", init_method="file:///tmp/x", world_size=1, rank=0)
    assert "MS_ROLE" not in os.environ and not dist.is_initialized()


@pytest.mark.skipif(not hasattr(os, "SCHED_BATCH"), reason="Linux only")
def test_init_process_group_joins_with_mindspores_threads_unable_to_preempt(monkeypatch):
    """MindSpore's init() runs inside adapter/distributed/cluster.py unpreempted_join (its TCP connection race);
    here with MindSpore's init() replaced by a recorder: the policy it ran under, and the policy after."""
    import torch.distributed as dist
    from patches import distributed as patch
    seen = []
    monkeypatch.setattr(patch, "_original_init", lambda **kw: seen.append(os.sched_getscheduler(0)))
    monkeypatch.setattr(patch.launch, "join_cluster", lambda *a: None)
    monkeypatch.setattr(patch, "is_initialized", lambda: False)
    monkeypatch.setattr(patch, "_state", dict(patch._state))
    monkeypatch.delenv("ADAPTER_JOIN_BATCH", raising=False)
    dist.init_process_group(backend="gloo")
    assert seen == [os.SCHED_BATCH] and os.sched_getscheduler(0) == os.SCHED_OTHER


def test_worker_command_drops_the_launch_options():
    from adapter.distributed import strip_options
    assert strip_options(["--nproc-per-node", "2", "--mode", "pynative", "--master-port=1234", "--nnodes", "1",
                          "--node_rank", "0", "--master-addr", "h", "--explain"]) == ["--mode", "pynative",
                                                                                     "--explain"]


@pytest.mark.slow
def test_port_already_in_use_is_a_clear_error(tmp_path):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen(1)
        port = s.getsockname()[1]
        proc, seconds, _ = launch(["--nproc-per-node", "2", "--master-port", str(port), "--original", TRAIN,
                                   "--out", str(tmp_path)], timeout=60)
    assert proc.returncode == 1
    assert f"port {port} on 127.0.0.1 is already in use" in proc.stderr and "--master-port" in proc.stderr
    assert seconds < 10  # before any worker starts


# -- 2 workers vs 1 worker --------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def two_workers(tmp_path_factory):
    out = tmp_path_factory.mktemp("ddp2")
    proc, seconds, _ = launch(["--nproc-per-node", "2", "--master-port", str(free_port()), "--original", TRAIN,
                               "--out", str(out), "--batch-size", "8"])
    assert proc.returncode == 0, proc.stderr[-4000:]
    return proc, ranks(out, 2), out


@pytest.fixture(scope="module")
def one_worker(tmp_path_factory):
    out = tmp_path_factory.mktemp("ddp1")
    proc, _, _ = launch(["--nproc-per-node", "1", "--master-port", str(free_port()), "--original", TRAIN,
                         "--out", str(out), "--batch-size", "16"])
    assert proc.returncode == 0, proc.stderr[-4000:]
    return ranks(out, 1)[0]


@pytest.mark.slow
def test_weights_start_from_rank0_and_stay_identical(two_workers):
    _, (r0, r1), _ = two_workers
    for name in r0["init_local"]:
        assert max_rel(r0["init_local"][name], r1["init_local"][name]) > 0.1  # different seeds per rank
        assert np.array_equal(r0["after_wrap"][name], r0["init_local"][name])  # DDP broadcast rank 0's
        assert np.array_equal(r1["after_wrap"][name], r0["init_local"][name])
        assert np.array_equal(r0["after_plain"][name], r1["after_plain"][name])  # 8 steps, then 4 accumulated
        assert np.array_equal(r0["final"][name], r1["final"][name])
    assert r0["losses"] != r1["losses"]  # the ranks did see different data
    assert r0["eval_loss"] == r1["eval_loss"]  # a no_grad evaluation of the same weights


@pytest.mark.slow
def test_averaged_gradient_is_the_mean_of_the_local_gradients(two_workers):
    _, (r0, r1), _ = two_workers
    # step 1: the eager bridge (a site's first call); step 3: the compiled step, fused with SGD
    for k, step in enumerate((1, 3)):
        a, b = r0["records"][k], r1["records"][k]
        assert a["step"] == b["step"] == step and a["before"] == b["before"]
        local0, local1 = mlp_grads(a["before"], a["x"], a["y"]), mlp_grads(b["before"], b["x"], b["y"])
        for name in local0:
            assert max_rel(local0[name], local1[name]) > 0.05  # the local gradients do differ
            mean = (local0[name] + local1[name]) / 2
            assert max_rel(a["grad"][name], mean) < 1e-5, (step, name)
            assert np.array_equal(a["grad"][name], b["grad"][name])
    # no_sync(): the first micro-step accumulates locally; the synchronized one averages the accumulated sum
    a, b = r0["accum_record"], r1["accum_record"]
    assert a["before"] == b["before"] and len(a["x"]) == 2
    for name in a["grad"]:
        local = [sum(mlp_grads(rec["before"], rec["x"][i], rec["y"][i])[name] / 2 for i in range(2))
                 for rec in (a, b)]
        assert max_rel(a["grad"][name], (local[0] + local[1]) / 2) < 1e-5, name
        assert np.array_equal(a["grad"][name], b["grad"][name])


@pytest.mark.slow
def test_two_workers_match_one_worker_with_the_doubled_batch(two_workers, one_worker):
    _, (r0, r1), _ = two_workers
    two = (np.array(r0["losses"]) + np.array(r1["losses"])) / 2
    one = np.array(one_worker["losses"])
    assert len(two) == len(one) == 8
    assert abs(two[0] - one[0]) / abs(one[0]) <= 1e-5
    assert np.abs(two - one).max() / np.abs(one).max() < 1e-4  # all 8 steps (compiled after the first)
    accum_two = (np.array(r0["accum_losses"]) + np.array(r1["accum_losses"])) / 2
    assert np.abs(accum_two - np.array(one_worker["accum_losses"])).max() < 1e-4
    for name in r0["final"]:
        assert max_rel(r0["after_plain"][name], one_worker["after_plain"][name]) < 1e-4
        assert max_rel(r0["final"][name], one_worker["final"][name]) < 1e-4
    assert abs(r0["eval_loss"] - one_worker["eval_loss"]) < 1e-5


@pytest.mark.slow
def test_sampler_gives_disjoint_shards_in_pytorchs_order(two_workers):
    from patches.distributed_sampler import torch_randperm
    _, (r0, r1), _ = two_workers
    for epoch in range(2):
        shard0, shard1 = r0["indices"][epoch], r1["indices"][epoch]
        assert not set(shard0) & set(shard1) and sorted(shard0 + shard1) == list(range(64))
        perm = torch_randperm(64, 7 + epoch)
        assert shard0 == perm[0::2] and shard1 == perm[1::2]
    assert r0["indices"][0] != r0["indices"][1]  # set_epoch reshuffled


@pytest.mark.slow
def test_collectives_env_printing_and_saving(two_workers):
    import torch
    proc, (r0, r1), out = two_workers
    for r, rec in enumerate((r0, r1)):
        c = rec["collectives"]
        assert c["sum"] == [3.0, 30.0] and c["avg"] == [1.5, 15.0]
        assert c["max"] == [2.0, 20.0] and c["min"] == [1.0, 10.0]
        assert c["int_sum"] == [7] and c["int_avg"] == [3]
        assert c["all_gather"] == [[1.0, 10.0], [2.0, 20.0]]
        assert c["broadcast"] == [6.0, -1.0]  # from rank 1
        assert rec["env"]["RANK"] == str(r) and rec["env"]["LOCAL_RANK"] == str(r)
        assert rec["env"]["WORLD_SIZE"] == "2" and rec["env"]["LOCAL_WORLD_SIZE"] == "2"
        assert rec["env"]["MASTER_ADDR"] == "127.0.0.1" and rec["env"]["MASTER_PORT"].isdigit()
        # get_backend(): PyTorch's name of the backend given (patches/distributed.py), not MindSpore's "mccl"
        assert rec["backend"] == "gloo" and rec["is_initialized"] and not rec["is_initialized_after_destroy"]
    assert proc.stdout.count("RANK0-ONLY") == 1
    assert proc.stdout.count("hello from rank 0 of 2") == 1 and proc.stdout.count("hello from rank 1 of 2") == 1
    keys = ["module.fc1.weight", "module.fc1.bias", "module.fc2.weight", "module.fc2.bias"]
    assert r0["state_dict_keys"] == keys
    saved = torch.load(str(out / "ckpt.pth"))
    assert list(saved.keys()) == keys
    assert np.array_equal(saved["module.fc2.weight"].numpy(), np.array(r0["final"]["fc2.weight"], np.float32))


@pytest.mark.slow
def test_mp_spawn_script_trains_like_the_launched_one(two_workers, tmp_path):
    """pytorch/examples imagenet style: mp.spawn + init_process_group(tcp://...); eager bridge (--mode pynative)."""
    _, (r0, _), _ = two_workers
    proc, _, _ = launch(["--mode", "pynative", "--original", SPAWN, "--out", str(tmp_path),
                         "--dist-url", f"tcp://127.0.0.1:{free_port()}"])
    assert proc.returncode == 0, proc.stderr[-4000:]
    assert proc.stdout.count("MAIN-DONE") == 1
    s0, s1 = ranks(tmp_path, 2)
    assert s0["name"] == "__mp_main__" and (s0["rank"], s1["rank"], s0["world"]) == (0, 1, 2)
    for name in s0["after_plain"]:
        assert np.array_equal(s0["after_plain"][name], s1["after_plain"][name])
        assert max_rel(s0["after_plain"][name], r0["after_plain"][name]) < 1e-5  # eager == compiled run
    assert max(abs(a - b) for a, b in zip(s0["losses"], r0["losses"])) < 1e-5


# -- failures ---------------------------------------------------------------------------------------------------

@pytest.mark.slow
@pytest.mark.parametrize("how", ["raise", "kill", "raise-exit-crash"])
def test_a_dying_worker_stops_the_others(tmp_path, how):
    """raise-exit-crash: the script raises, then its process is killed by SIGSEGV while exiting (as MindSpore's
    exit-time teardown is now and then, docs/exit_crash/README.md): the script's error is still what is reported."""
    proc, _, end = launch(["--nproc-per-node", "2", "--master-port", str(free_port()), "--original", TRAIN,
                           "--out", str(tmp_path), "--die-rank", "1", "--die-step", "3", "--die-how", how])
    assert proc.returncode == 1
    died = float((tmp_path / "died_at").read_text())
    assert end - died < 30, f"run.py took {end - died:.1f} s to stop after the worker died"
    assert not (tmp_path / "rank0.json").exists()  # rank 0 was stopped, not left to finish
    last = [l for l in proc.stderr.splitlines() if l.startswith("run.py: worker rank 1")]
    assert last, proc.stderr[-3000:]
    if how.startswith("raise"):
        with open(TRAIN) as f:
            line = next(i for i, text in enumerate(f, 1) if 'raise RuntimeError(f"deliberate failure' in text)
        assert f"failed at tests/fixtures/ddp/train_ddp.py:{line}: RuntimeError: deliberate failure on rank 1" \
            in last[-1]
    else:
        assert "was killed by SIGKILL" in last[-1]
    assert ("(then killed by SIGSEGV while exiting)" in last[-1]) == (how == "raise-exit-crash")
    assert "stopped the other workers (rank 0)" in last[-1]


@pytest.mark.slow
def test_a_worker_killed_while_exiting_after_finishing_counts_as_finished(tmp_path):
    """MindSpore 2.5's exit-time cluster teardown is now and then killed by SIGSEGV after the script finished
    (docs/exit_crash/README.md); simulated here by an atexit handler of rank 0 that sends itself SIGSEGV."""
    proc, _, _ = launch(["--nproc-per-node", "2", "--master-port", str(free_port()), "--original", TRAIN,
                         "--out", str(tmp_path), "--die-rank", "0", "--die-how", "exit-crash"])
    assert proc.returncode == 0, proc.stderr[-3000:]
    warning = [l for l in proc.stderr.splitlines() if l.startswith("run.py: warning: worker rank 0")]
    assert len(warning) == 1 and "finished the script, then was killed by SIGSEGV while exiting" in warning[0]
    assert "docs/exit_crash/README.md" in warning[0]
    r0, r1 = ranks(tmp_path, 2)
    assert r0["final"] == r1["final"]


def test_the_exit_code_recorded_before_a_signal_decides(tmp_path):
    from adapter.distributed import exit_code_before_signal, record_exit
    path = str(tmp_path / "exit_code")
    assert exit_code_before_signal(-11, path) is None  # killed before the script ended: nothing recorded
    record_exit(None, 0)  # not a child of the launcher: nothing to do
    record_exit(path, 0)
    assert exit_code_before_signal(-11, path) == 0 and exit_code_before_signal(-6, path) == 0
    assert exit_code_before_signal(0, path) is None and exit_code_before_signal(None, path) is None  # not killed
    record_exit(path, 1)  # the script failed, then the process was killed while exiting
    assert exit_code_before_signal(-11, path) == 1


@pytest.mark.slow
def test_a_failing_spawned_process_stops_the_others(tmp_path):
    proc, _, _ = launch(["--original", SPAWN, "--out", str(tmp_path), "--dist-url",
                         f"tcp://127.0.0.1:{free_port()}", "--fail-rank", "1"])
    assert proc.returncode == 1
    assert "Process 1 terminated with the following error" in proc.stderr
    with open(SPAWN) as f:
        line = next(i for i, text in enumerate(f, 1) if "deliberate failure in main_worker" in text)
    assert f"spawn_ddp.py:{line}: ValueError: deliberate failure in main_worker 1" in proc.stderr
    assert "MAIN-DONE" not in proc.stdout and not (tmp_path / "rank0.json").exists()


def test_get_default_backend_for_device_as_pytorch():
    """PyTorch 2.13 (recorded): cpu -> gloo, cuda:1 -> nccl, xpu -> xccl, mps -> gloo; meta -> ValueError. ddp/example.py
    passes the result to init_process_group (which maps each onto the device's MindSpore backend)."""
    import torch
    import torch.distributed as dist
    got = [dist.get_default_backend_for_device(d) for d in ("cpu", torch.device("cuda:1"), "xpu", "mps")]
    assert got == ["gloo", "nccl", "xccl", "gloo"]
    with pytest.raises(ValueError, match="Default backend not registered for device : meta"):
        dist.get_default_backend_for_device("meta")
