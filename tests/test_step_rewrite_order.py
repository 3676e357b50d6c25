"""A step site whose optimizer is created between the region's statements (adapter/step_rewrite.py): the site call
ran before the optimizer's assignment (``UnboundLocalError: local variable 'opt' referenced before assignment``, in
a five-line script that PyTorch runs). Such a step is not fused; the script's ``opt.step()`` stays its own call."""
import ast

from support import run_py


SOURCE = (
    "def main():\n"
    "    lin = torch.nn.Linear(3, 2)\n"
    "    opt = torch.optim.SGD(lin.parameters(), lr=0.1)\n"
    "    lin(torch.ones(1, 3)).sum().backward()\n"
    "    opt.step()\n")


def test_optimizer_made_after_the_region_is_not_passed_to_the_site():
    from adapter.step_rewrite import rewrite
    tree, (site,) = rewrite(SOURCE, "t.py")
    body = [ast.unparse(s) for s in tree.body[0].body]
    assert body == ["(lin,) = __adapter_step__(0, {'torch': torch})",
                    "opt = torch.optim.SGD(lin.parameters(), lr=0.1)",
                    "opt.step()"]
    assert site.optimizer_line is None


def test_the_script_runs_and_steps_as_pytorch(tmp_path):
    """Weights set to known values; one SGD step of sum(lin(ones)) with lr 0.1: weight - 0.1, bias - 0.1 (closed
    form, as PyTorch gives)."""
    script = tmp_path / "one_step.py"
    script.write_text(
        "import torch\n"
        "def main():\n"
        "    lin = torch.nn.Linear(3, 2)\n"
        "    with torch.no_grad():\n"
        "        lin.weight.fill_(1.0)\n"
        "        lin.bias.fill_(0.5)\n"
        "    opt = torch.optim.SGD(lin.parameters(), lr=0.1)\n"
        "    lin(torch.ones(1, 3)).sum().backward()\n"
        "    opt.step()\n"
        "    print(lin.weight.tolist(), lin.bias.tolist())\n"
        "main()\n")
    proc = run_py("--original", script, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.split("\n")[0] == "[[0.8999999761581421, 0.8999999761581421, 0.8999999761581421], " \
                                         "[0.8999999761581421, 0.8999999761581421, 0.8999999761581421]] " \
                                         "[0.4000000059604645, 0.4000000059604645]"
