"""An in-place op on a tensor that needs a gradient, in an eager (PyNative) step: PyTorch's gradient on
mindspore-dev 2.5; on MindSpore >= 2.10, where the gradient through it is lost (zeros; not fixed yet), a warning at
the user's file:line (patches/inplace_autograd.py, LOST_GRADIENT), never silence."""
import os

import numpy as np

from _runpy import run_json

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIXTURE = os.path.join(ROOT, "tests", "fixtures", "inplace_in_forward.py")


def test_inplace_add_in_forward_gives_pytorchs_gradient_or_says_at_its_line_that_it_cannot():
    from adapter import backend_compat
    got, err = run_json("--mode", "pynative", "--original", FIXTURE)
    assert max(abs(v) for v in got["out_of_place"]) > 0.1
    if backend_compat.wrapper_rebinds():  # mindspore-dev 2.5: exact
        np.testing.assert_allclose(got["inplace"], got["out_of_place"], rtol=1e-6)
        assert "needs a gradient" not in err
    else:  # MindSpore >= 2.10: the loss of the gradient is said at the script's line
        assert "inplace_in_forward.py:18: UserWarning: in-place op on a tensor that needs a gradient" in err, err
