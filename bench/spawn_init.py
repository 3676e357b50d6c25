"""mp.spawn + init_process_group(tcp://, world size 1), timed: what imagenet/main.py --multiprocessing-distributed does
before it builds its model. Prints one JSON line from the child: {"child_start_s": parent's spawn call -> fn(0)
starts, "init_s": init_process_group's duration}. Usage: run.py --original spawn_init.py PORT
"""
import json
import sys
import time

import torch.distributed as dist
import torch.multiprocessing as mp


def fn(index, t0, port):
    t1 = time.time()
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", world_size=1, rank=0)
    t2 = time.time()
    print(json.dumps({"child_start_s": t1 - t0, "init_s": t2 - t1}), flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    mp.spawn(fn, args=(time.time(), int(sys.argv[1])), nprocs=1)
