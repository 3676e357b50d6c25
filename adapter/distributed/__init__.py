"""Data parallel, launcher side: ``run.py --nproc-per-node N`` (torchrun's options) on MindSpore's dynamic cluster.

What ``python run.py --nproc-per-node 2 --original train_ddp.py ARGS`` does (``torchrun --nproc-per-node 2
train_ddp.py ARGS``), on the node with ``--node-rank`` R of ``--nnodes`` M:

1. on node 0, checks that ``--master-addr:--master-port`` can be listened on (a clear message when it cannot) and
   starts MindSpore's scheduler there: a small Python process with ``MS_ROLE=MS_SCHED`` that runs
   ``mindspore.communication.init()`` — what ``msrun`` starts (``mindspore/parallel/cluster/process_entity``);
2. starts N workers, each ``python run.py [the same options] --original train_ddp.py ARGS`` with the environment
   ``msrun`` gives its workers (``MS_ROLE=MS_WORKER``, ``MS_WORKER_NUM``, ``MS_SCHED_HOST``, ``MS_SCHED_PORT``,
   ``MS_NODE_ID``, ``RANK_ID``, ``RANK_SIZE``, ``DEVICE_ID`` = local rank) plus torchrun's (``RANK``, ``LOCAL_RANK``,
   ``WORLD_SIZE``, ``LOCAL_WORLD_SIZE``, ``GROUP_RANK``, ``MASTER_ADDR``, ``MASTER_PORT``); global rank =
   R * N + local rank. ``init_process_group`` in the script then calls ``mindspore.communication.init()``, which
   joins the cluster with the device's collective backend (mccl on CPU, NCCL on GPU, HCCL on Ascend);
3. watches the workers: when one exits with an error or a signal, the others (their whole process groups) and the
   scheduler are stopped at once, and run.py exits 1 naming the rank and its error (the script's file:line);
   when all succeed, exits 0. Worker stdout is passed through; stderr too, line by line. No process outlives
   run.py: workers and the scheduler die with it even on ``kill -9`` (``PR_SET_PDEATHSIG``). A worker killed by
   a signal *while exiting*, after its script ended, is judged by the script's exit code: MindSpore 2.5's
   exit-time cluster teardown crashes now and then (SIGSEGV in ``TCPClient::Finalize``, under Python's atexit;
   ``docs/exit_crash/README.md``). Exit code 0: finished, with a warning; otherwise the script's own error is
   reported. The worker records the code in the file named by ``ADAPTER_EXIT_FILE`` (:func:`record_exit`) before
   the interpreter exits.

Why not ``msrun`` itself: it starts ``python`` from PATH rather than this interpreter, polls its workers in a busy
loop (a whole core on this 2-core machine), sets no torchrun variables and reports a failure by grepping logs. The
processes and environment are the same, so ``msrun --worker_num=N --local_worker_num=N --master_port=P --join=True
run.py --original train_ddp.py`` also works: a worker started by msrun gets the torchrun variables from msrun's
(:func:`worker_setup`).

Also here: :func:`join_cluster` (``init_process_group`` in a process no launcher started: ``mp.spawn`` children,
``env://`` with hand-set variables — rank 0 starts the scheduler, as PyTorch's rank 0 hosts the TCPStore) and the
``mp.spawn`` machinery (:func:`spawn`, used by ``patches/spawn.py``).

The package (issue 16 split the former 818-line ``adapter/distributed.py``; its names stay importable from here):

* ``cluster.py``: MindSpore's cluster: the scheduler, ports, a worker joining (``worker_setup``, ``join_cluster``)
  and the scheduler ``mp.spawn`` starts ahead;
* ``torchrun.py``: the torchrun-style launcher (``launch``, the workers' environment, watching them) and the
  child-process helpers both launchers use (stopping a process group, the exit code a child records);
* ``mp_spawn.py``: ``torch.multiprocessing.spawn`` (``spawn`` in the parent, ``run_spawned`` in a child).

Layering: ``cluster`` <- ``torchrun`` <- ``mp_spawn``; none imports this ``__init__``'s names or ``app.launcher``.
"""
from __future__ import annotations

from adapter.distributed.cluster import (  # noqa: F401
    PRESTART_ENV, ROOT, SCHEDULER_PID_ENV, SCHEDULER_REQUEST_ENV, _WORKER_ENV, _own_scheduler, die_with_parent,
    free_port, join_cluster, nudged_join, port_problem, prestart_scheduler, resolve, start_scheduler,
    unpreempted_join, wait_for_scheduler, worker_setup)
from adapter.distributed.torchrun import (  # noqa: F401
    DEFAULT_PORT, EXIT_CRASH_DOC, EXIT_FILE_ENV, RUN_PY, STOP_GRACE_S, add_arguments, exit_code_before_signal,
    exit_crash_warning, launch, record_exit, strip_options, worker_env)
from adapter.distributed.mp_spawn import (  # noqa: F401
    SPAWN_ENV, SpawnContext, process_label, run_spawned, spawn, spawned_children)
