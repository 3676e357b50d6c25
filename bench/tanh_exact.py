"""Is a more exact float32 tanh worth its cost? (issue 35's ``tanh`` entry; nothing is patched by this script)

MindSpore's CPU ``Tanh`` kernel (2.10 and 2.5-dev) is within 3 ulp of the exact tanh for ``|x| < 2.5`` but not
beyond: 18 ulp at 2.5-3, 250 ulp at 3.5-4, 1688 ulp (1.0e-4 absolute) at 4.5-5.5, back under 4 ulp past 8. Just
below ``|x| = 5`` it returns 1.0000098 (> 1), and from 5 on exactly 1.0 (PyTorch's float32 tanh reaches 1.0 near 9.0),
so PyTorch's backward ``1 - t^2`` is negative (-2e-5) just below 5 and 0 from 5 on (PyTorch: 1.8e-4 at 5, 2.5e-5
at 6, 3.3e-6 at 7).

Candidate: the kernel below ``|x| < 2.5`` and ``sign(x) (1 - 2 / (exp(2|x|) + 1))`` from there (no cancellation:
``2 / (e^2|x| + 1)`` is small and accurate, ``1 - small`` rounds once), the gradient PyTorch's ``1 - t^2`` of that
``t`` (attached with stop_gradient). Prints, for ``ops.tanh`` and the candidate: the max error against float64 in
ulp and absolute, the gradient's max absolute error against ``1 - t^2`` of the correctly rounded ``t`` (PyTorch's
own), and the time of a (256, 4096) float32 forward and forward+backward, PyNative and ``mindspore.jit``, with the
candidate / kernel ratio.

    .venv/bin/python bench/tanh_exact.py
"""
import time

import numpy as np


def main() -> None:
    import mindspore as ms
    ms.set_context(mode=ms.PYNATIVE_MODE, device_target="CPU")
    sg = ms.ops.stop_gradient

    def exact(a):
        ax = ms.ops.abs(a)
        far = ms.ops.sign(a) * (1 - 2 / (ms.ops.exp(2 * ax) + 1))
        t = sg(ms.ops.select(ax < 2.5, ms.ops.tanh(a), far))
        return t + (a - sg(a)) * sg(1 - t * t)

    x = np.linspace(-12, 12, 400001).astype(np.float32)
    want = np.tanh(x.astype(np.float64))
    want32 = want.astype(np.float32)
    want_grad = (1 - want32 * want32).astype(np.float64)  # PyTorch's backward of its (correctly rounded) t
    def total(f):
        def loss(a):
            return f(a).sum()
        return loss

    for name, f in (("ops.tanh", ms.ops.tanh), ("candidate", exact)):
        t = f(ms.Tensor(x)).asnumpy().astype(np.float64)
        err = np.abs(t - want)
        ulp = err / np.spacing(np.abs(want32))
        g = ms.grad(total(f))(ms.Tensor(x)).asnumpy().astype(np.float64)
        print(f"{name:10s} value: max {ulp.max():7.1f} ulp, {err.max():.2e} abs (at x={x[np.argmax(ulp)]:.3f}), "
              f"max |t| {np.abs(t).max():.7f}; gradient vs 1 - t^2 of the rounded t: max abs "
              f"{np.abs(g - want_grad).max():.2e}")
    big = ms.Tensor(np.random.default_rng(0).normal(scale=3.0, size=(256, 4096)).astype(np.float32))
    times = {}
    for name, f in (("ops.tanh", ms.ops.tanh), ("candidate", exact)):
        for mode in ("pynative", "jit"):
            for what, g in (("forward", f), ("fwd+bwd", ms.grad(total(f)))):
                run = ms.jit(g) if mode == "jit" else g
                run(big).asnumpy()
                t0 = time.perf_counter()
                for _ in range(30):
                    r = run(big)
                r.asnumpy()
                times[(name, mode, what)] = (time.perf_counter() - t0) / 30
    for mode in ("pynative", "jit"):
        for what in ("forward", "fwd+bwd"):
            a, b = times[("ops.tanh", mode, what)], times[("candidate", mode, what)]
            print(f"{mode:8s} {what:8s}: ops.tanh {a * 1e3:7.2f} ms, candidate {b * 1e3:7.2f} ms, ratio {b / a:5.1f}x")


if __name__ == "__main__":
    main()
