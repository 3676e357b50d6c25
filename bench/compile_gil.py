"""Does MindSpore's graph compile release the GIL? (Could it run in a thread beside the eager reference step?)

Compiles native ResNet18's TrainOneStepCell (bench/native_resnet.py, batch 32, Adam) in a thread while the main thread
spins a pure-Python loop; prints the loop's rate during the compile as a fraction of its rate alone (before and
after). 1.0 would mean the compile runs without the GIL; a small fraction means it holds it.

    .venv/bin/python bench/compile_gil.py

Measured 2026-11-25 (2 cores, loaded machine): 0.17 of the alone rate during a 12.7 s compile. The compile holds
the GIL most of the time (MindSpore's parser and resolver are Python, called back during type inference), so a
compile thread would mostly take turns with the eager step rather than overlap it. It is also unsafe here: the
compiled step compiles under GRAPH_MODE set with ``mindspore.set_context`` (process-global, adapter/graph_semantics.py
``graph_mode``) and swaps MindTorch functions and classes' attributes for the duration (``graph_semantics``), both of
which an eager step running at the same time would see.
"""
import sys, time, threading, os
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import numpy as np, mindspore as ms
from mindspore import nn
import native_resnet as nr
ms.set_context(mode=ms.GRAPH_MODE); ms.set_device("CPU")
net = nr.ResNet(nr.BasicBlock, [2, 2, 2, 2])
opt = nn.Adam(net.trainable_params(), 1e-3)
train = nn.TrainOneStepCell(nn.WithLossCell(net, nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")), opt)
x = ms.Tensor(np.zeros((32, 3, 32, 32), np.float32)); y = ms.Tensor(np.zeros(32, np.int32))
def spin(seconds):
    n = 0; t = time.perf_counter(); c = time.process_time()
    while time.perf_counter() - t < seconds:
        for _ in range(1000): pass
        n += 1
    return n
base = spin(3.0)
done = {}
def compile_():
    t = time.perf_counter(); train.compile(x, y); done["t"] = time.perf_counter() - t
th = threading.Thread(target=compile_); th.start()
t0 = time.perf_counter(); n = 0
while th.is_alive():
    for _ in range(1000): pass
    n += 1
during = time.perf_counter() - t0
after = spin(3.0)
print(f"spin rate alone {base/3:.0f}/s before, {after/3:.0f}/s after; during compile ({done['t']:.1f} s): {n/during:.0f}/s "
      f"= {n/during/((base+after)/6):.2f} of alone")
# the same compile alone (no spinning thread), for its slowdown
net2 = nr.ResNet(nr.BasicBlock, [2, 2, 2, 2]); opt2 = nn.Adam(net2.trainable_params(), 1e-3)
train2 = nn.TrainOneStepCell(nn.WithLossCell(net2, nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")), opt2)
t = time.perf_counter(); train2.compile(x, y); print(f"compile alone {time.perf_counter()-t:.1f} s (second compile of same structure)")
