"""``torch.optim`` optimizers and ``torch.optim.lr_scheduler`` schedulers as pt_original/ builds them, plus variants.

Each step case builds parameters (``w``, ``b``: ``nn.Parameter`` inputs) and the optimizer in ``setup``, and a helper
``run()`` that takes 3 steps with fixed gradients (``w.grad = g * (i + 1)``, ``g`` an input) and returns the
parameters after every step, and the lr of each param group (``optimizer.param_groups[i]['lr']``) where a scheduler
steps too. The scripts' forms: train_resnet ``Adam(params, lr, weight_decay=)``; imagenet ``SGD(params, lr,
momentum=, weight_decay=)`` + ``StepLR(opt, step_size=30, gamma=0.1)``; mnist/mnist_rnn/siamese ``Adadelta(params,
lr=)`` + ``StepLR(opt, step_size=1, gamma=)``; dcgan ``Adam(params, lr=, betas=(0.5, 0.999))``; vae/super_resolution/
mnist_forward_forward ``Adam(params, lr=)``; ddp examples ``SGD(params, lr=)``; time_sequence_prediction
``LBFGS(params, lr=0.8)`` on a float64 model with ``step(closure)``.
"""
from app.tools.conformance.spec import Known
from app.tools.conformance.spec import C, T

# parameters and fixed gradients: w (3, 4), b (4,)
_P = dict(w=T(3, 4, param=True), b=T(4, param=True), g=T(3, 4, grad=False), h=T(4, grad=False))
_P64 = dict(w=T(3, 4, dtype="float64", param=True), b=T(4, dtype="float64", param=True),
            g=T(3, 4, dtype="float64", grad=False), h=T(4, dtype="float64", grad=False))


def _steps(ctor: str, sched: str = "", n: int = 3, lrs: bool = False, skip_b: bool = False) -> str:
    """Setup text: ``opt = ctor`` (and ``sched = sched``), and ``run()`` taking ``n`` steps (module docstring).
    ``skip_b``: ``b.grad`` stays None from the 2nd step on (PyTorch then leaves ``b`` and its state alone)."""
    b_grad = "        b.grad = h * (i + 1) if i == 0 else None\n" if skip_b else "        b.grad = h * (i + 1)\n"
    out = "out.append(w.detach().clone()); out.append(b.detach().clone())"
    if lrs:
        out += "; out.append([group['lr'] for group in opt.param_groups])"
    return (f"opt = {ctor}\n" + (f"sched = {sched}\n" if sched else "") +
            "def run():\n"
            "    out = []\n"
            f"    for i in range({n}):\n"
            "        opt.zero_grad()\n"
            "        w.grad = g * (i + 1)\n"
            f"{b_grad}"
            "        opt.step()\n" + ("        sched.step()\n" if sched else "") +
            f"        {out}\n"
            "    return out\n")


def _step_case(ctor: str, sig: str, sched: str = "", inputs=None, **kw):
    return C("run()", _steps(ctor, sched, **kw), sig=sig, graph=False, grad=False, **(inputs or _P))


_LBFGS = """lin = init(nn.Linear(4, 2){cast})
opt = optim.LBFGS(lin.parameters(), lr=0.8{opts})
criterion = nn.MSELoss()
def closure():
    opt.zero_grad()
    loss = criterion(lin(x), y)
    loss.backward()
    return loss
def run():
    out = []
    for i in range(2):
        loss = opt.step(closure)
        out.append(float(loss)); out.append(lin.weight.detach().clone()); out.append(lin.bias.detach().clone())
    return out
"""

_STATE = """opt = {ctor}
for i in range(2):
    opt.zero_grad()
    w.grad = g * (i + 1)
    b.grad = h * (i + 1)
    opt.step()
sd = opt.state_dict()
"""

CASES = [
    # ---- the scripts' constructors, 3 steps each
    _step_case("optim.SGD([w, b], lr=1e-3)", "torch.optim.SGD(1;lr)"),
    _step_case("optim.SGD([w, b], 0.1, momentum=0.9, weight_decay=1e-4)", "torch.optim.SGD(2;momentum,weight_decay)"),
    _step_case("optim.Adam([w, b], 1e-3, weight_decay=1e-5)", "torch.optim.Adam(2;weight_decay)"),
    _step_case("optim.Adam([w, b], lr=1e-3)", "torch.optim.Adam(1;lr)"),
    _step_case("optim.Adam([w, b], lr=0.0002, betas=(0.5, 0.999))", "torch.optim.Adam(1;betas,lr)"),
    _step_case("optim.Adadelta([w, b], lr=1.0)", "torch.optim.Adadelta(1;lr)"),
    # ---- variants: larger steps (the update, not the parameter, dominates), other options and optimizers
    _step_case("optim.SGD([w, b], lr=0.1, momentum=0.9)", "torch.optim.SGD(1;lr,momentum)"),
    _step_case("optim.SGD([w, b], lr=0.1, momentum=0.9, nesterov=True, weight_decay=0.01)",
               "torch.optim.SGD(1;lr,momentum,nesterov,weight_decay)"),
    _step_case("optim.SGD([w, b], lr=0.1, momentum=0.9, dampening=0.5)", "torch.optim.SGD(1;dampening,lr,momentum)"),
    _step_case("optim.SGD([w, b], lr=0.1, maximize=True)", "torch.optim.SGD(1;lr,maximize)"),
    _step_case("optim.Adam([w, b], lr=0.1)", "torch.optim.Adam(1;lr)"),
    _step_case("optim.Adam([w, b], lr=0.1, weight_decay=0.1, amsgrad=True)",
               "torch.optim.Adam(1;amsgrad,lr,weight_decay)"),
    _step_case("optim.Adam([w, b], lr=0.1, eps=1e-3)", "torch.optim.Adam(1;eps,lr)"),
    _step_case("optim.AdamW([w, b], lr=0.1, weight_decay=0.1)", "torch.optim.AdamW(1;lr,weight_decay)"),
    _step_case("optim.AdamW([w, b], lr=1e-3)", "torch.optim.AdamW(1;lr)"),
    _step_case("optim.Adadelta([w, b], lr=1.0, rho=0.5, weight_decay=0.1)",
               "torch.optim.Adadelta(1;lr,rho,weight_decay)"),
    _step_case("optim.RMSprop([w, b], lr=0.01)", "torch.optim.RMSprop(1;lr)"),
    _step_case("optim.RMSprop([w, b], lr=0.01, momentum=0.9, alpha=0.9, weight_decay=0.1)",
               "torch.optim.RMSprop(1;alpha,lr,momentum,weight_decay)"),
    _step_case("optim.Adagrad([w, b], lr=0.1)", "torch.optim.Adagrad(1;lr)"),
    # param groups with their own lr
    _step_case("optim.SGD([{'params': [w]}, {'params': [b], 'lr': 0.01}], lr=0.1, momentum=0.9)",
               "torch.optim.SGD(1;lr,momentum)", lrs=True),
    _step_case("optim.Adam([{'params': [w], 'weight_decay': 0.1}, {'params': [b]}], lr=0.1)",
               "torch.optim.Adam(1;lr)", lrs=True),
    # a parameter without a gradient is left alone (momentum, weight decay, state)
    _step_case("optim.Adam([w, b], lr=0.1, weight_decay=0.1)", "torch.optim.Adam(1;lr,weight_decay)", skip_b=True),
    _step_case("optim.SGD([w, b], lr=0.1, momentum=0.9, weight_decay=0.1)",
               "torch.optim.SGD(1;lr,momentum,weight_decay)", skip_b=True),
    # float64 parameters (time_sequence_prediction's seq.double())
    _step_case("optim.SGD([w, b], lr=0.1, momentum=0.9)", "torch.optim.SGD(1;lr,momentum)", inputs=_P64),
    _step_case("optim.Adam([w, b], lr=0.1)", "torch.optim.Adam(1;lr)", inputs=_P64),
    # ---- LBFGS with a closure (time_sequence_prediction: float64, lr=0.8)
    C("run()", _LBFGS.format(cast=".double()", opts=""), sig="torch.optim.LBFGS(1;lr)", graph=False, grad=False,
      x=T(8, 4, dtype="float64", grad=False), y=T(8, 2, dtype="float64", grad=False)),
    # float32: a few inner iterations (near convergence, 20 of them amplify float32 rounding to 1.5e-4 either way)
    C("run()", _LBFGS.format(cast="", opts=", max_iter=3"), sig="torch.optim.LBFGS(1;lr,max_iter)", graph=False,
      grad=False,
      x=T(8, 4, grad=False), y=T(8, 2, grad=False)),
    # ---- lr schedulers, stepped after each optimizer step; lrs read from param_groups
    _step_case("optim.Adadelta([w, b], lr=1.0)", "torch.optim.lr_scheduler.StepLR(1;gamma,step_size)",
               sched="optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.7)", lrs=True),
    _step_case("optim.SGD([w, b], 0.1, momentum=0.9, weight_decay=1e-4)",
               "torch.optim.lr_scheduler.StepLR(1;gamma,step_size)",
               sched="optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.1)", lrs=True, n=5),
    _step_case("optim.SGD([w, b], lr=0.1)", "torch.optim.lr_scheduler.MultiStepLR(1;gamma,milestones)",
               sched="optim.lr_scheduler.MultiStepLR(opt, milestones=[1, 3], gamma=0.5)", lrs=True, n=4),
    _step_case("optim.Adam([w, b], lr=0.1)", "torch.optim.lr_scheduler.CosineAnnealingLR(1;T_max)",
               sched="optim.lr_scheduler.CosineAnnealingLR(opt, T_max=4)", lrs=True, n=5),
    _step_case("optim.SGD([w, b], lr=0.1)", "torch.optim.lr_scheduler.ExponentialLR(1;gamma)",
               sched="optim.lr_scheduler.ExponentialLR(opt, gamma=0.9)", lrs=True),
    _step_case("optim.SGD([w, b], lr=0.1)", "torch.optim.lr_scheduler.LambdaLR(2)",
               sched="optim.lr_scheduler.LambdaLR(opt, lambda e: 1.0 / (e + 1))", lrs=True),
    _step_case("optim.SGD([w, b], lr=0.1, momentum=0.9)", "torch.optim.lr_scheduler.OneCycleLR(1;max_lr,total_steps)",
               sched="optim.lr_scheduler.OneCycleLR(opt, max_lr=0.5, total_steps=10)", lrs=True),
    C("run()", "opt = optim.SGD([w], lr=0.1)\n"
               "sched = optim.lr_scheduler.ReduceLROnPlateau(opt, mode='min', factor=0.5, patience=1)\n"
               "def run():\n"
               "    out = []\n"
               "    for loss in [1.0, 0.9, 0.95, 0.95, 0.95, 0.8, 0.85, 0.85]:\n"
               "        sched.step(loss)\n"
               "        out.append(opt.param_groups[0]['lr'])\n"
               "    return out\n",
      sig="torch.optim.lr_scheduler.ReduceLROnPlateau(1;factor,mode,patience)", graph=False, grad=False,
      w=T(3, param=True)),
    C("[sched.get_last_lr(), sorted(k for k in sched.state_dict())]",
      "opt = optim.SGD([w], lr=0.1)\nsched = optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.7)\n"
      "for _ in range(2):\n    opt.step()\n    sched.step()\n",
      sig="torch.optim.lr_scheduler.LRScheduler.state_dict(0)", graph=False, grad=False, w=T(3, param=True)),
    C("[sched2.state_dict()['last_epoch'], sched2.state_dict()['base_lrs'], sched2.state_dict()['_last_lr'], "
      "sched2.state_dict()['step_size'], sched2.state_dict()['gamma'], opt2.param_groups[0]['lr']]",
      "opt = optim.SGD([w], lr=0.1)\nsched = optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.7)\n"
      "for _ in range(2):\n    opt.step()\n    sched.step()\n"
      "opt2 = optim.SGD([w], lr=0.1)\nsched2 = optim.lr_scheduler.StepLR(opt2, step_size=1, gamma=0.7)\n"
      "sched2.load_state_dict(sched.state_dict())\nsched2.step()\n",
      sig="torch.optim.lr_scheduler.LRScheduler.load_state_dict(1)", graph=False, grad=False, w=T(3, param=True)),
    # ---- zero_grad, state_dict structure and values, load_state_dict
    C("(opt.zero_grad(), w.grad)[1]", "opt = optim.SGD([w], lr=0.1)\nw.grad = g\n",
      sig="torch.optim.Optimizer.zero_grad(0)", graph=False, grad=False, w=T(3, param=True), g=T(3, grad=False)),
    C("(opt.zero_grad(set_to_none=False), w.grad)[1]", "opt = optim.Adam([w], lr=0.1)\nw.grad = g\n",
      sig="torch.optim.Optimizer.zero_grad(0;set_to_none)", graph=False, grad=False, w=T(3, param=True),
      g=T(3, grad=False)),
    C("[sorted(sd), sorted(sd['state']), sorted(sd['state'][0]), sd['state'][0]['step'], sd['state'][0]['exp_avg'], "
      "sd['state'][1]['exp_avg_sq'], sorted(k for k in sd['param_groups'][0] if k != 'decoupled_weight_decay'), "
      "sd['param_groups'][0]['params'], sd['param_groups'][0]['lr'], sd['param_groups'][0]['betas']]",
      _STATE.format(ctor="optim.Adam([w, b], lr=0.1)"), sig="torch.optim.Optimizer.state_dict(0)",
      graph=False, grad=False, **_P),
    C("[sorted(sd), sorted(sd['state']), sorted(sd['state'][0]), sd['state'][0]['momentum_buffer'], "
      "sd['param_groups'][0]['params'], sd['param_groups'][0]['lr'], sd['param_groups'][0]['momentum']]",
      _STATE.format(ctor="optim.SGD([w, b], lr=0.1, momentum=0.9)"), sig="torch.optim.Optimizer.state_dict(0)",
      graph=False, grad=False, **_P),
    C("[sorted(sd), len(sd['state']), sorted(sd['param_groups'][0])]",
      "opt = optim.Adadelta([w, b], lr=1.0)\nsd = opt.state_dict()\n",
      sig="torch.optim.Optimizer.state_dict(0)", graph=False, grad=False, **_P),
    C("run()", _STATE.format(ctor="optim.Adam([w, b], lr=0.1)") +
      "w2 = nn.Parameter(w.detach().clone())\nb2 = nn.Parameter(b.detach().clone())\n"
      "opt2 = optim.Adam([w2, b2], lr=0.5)\nopt2.load_state_dict(sd)\n"
      "def run():\n"
      "    opt2.zero_grad()\n    w2.grad = g * 3\n    b2.grad = h * 3\n    opt2.step()\n"
      "    return [w2, b2, opt2.param_groups[0]['lr'], opt2.state_dict()['state'][1]['step']]\n",
      sig="torch.optim.Optimizer.load_state_dict(1)", graph=False, grad=False, **_P),
    # ---- PyTorch's argument checks
    C("optim.SGD([w], lr=-0.1)", graph=False, grad=False, w=T(3, param=True)),
    C("optim.SGD([w], lr=0.1, nesterov=True)", graph=False, grad=False, w=T(3, param=True)),
    C("optim.Adam([w], lr=0.1, betas=(1.5, 0.999))", graph=False, grad=False, w=T(3, param=True)),
    C("optim.Adam([w], lr=0.1, eps=-1.0)", graph=False, grad=False, w=T(3, param=True)),
    C("optim.Adam([], lr=0.1)", graph=False, grad=False),
    C("optim.SGD(w, lr=0.1)", graph=False, grad=False, w=T(3, param=True)),
]

KNOWN = [
    Known("99a814171c99", "torch.optim.Optimizer.state_dict", ("pynative",),
          "Adadelta (also Adagrad, RMSprop, ...) state_dict() keeps MindTorch's layout (top-level 'accum', "
          "'accum_update'; groups without foreach/capturable/differentiable): patches/optim_state.py converts Adam, "
          "AdamW and SGD only; MindSpore's Adadelta keeps no step count to write PyTorch's per-parameter 'step'. "
          "The scripts using Adadelta (mnist, mnist_rnn, siamese_network) save only the model's state_dict"),
]
