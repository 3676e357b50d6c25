"""The (API, signature) pairs of the inventory (``tests/fixtures/conformance/inventory.json``) that the namespace
groups do not cover, each in the exact form pt_original/ or torchvision's model definitions call it.

* Tensor protocol uses: ``bool(loss)``, ``f"{loss:.4f}"``, ``len(t)``, ``loss.backward()``, ``x.is_cuda`` /
  ``x.is_xpu`` (dcgan), ``x.view(b, 1, 28, 28)`` (vae).
* Module construction as the scripts write it: ``nn.Sequential`` with 7, 9, 13, 14, 19, 29 positional modules and
  ``nn.Sequential(*layers)``; subclasses calling ``super().__init__`` of ``nn.Module``, ``nn.Linear`` (5 positional:
  mnist_forward_forward) and ``nn.Sequential`` (torchvision's ``ConvNormActivation``); activations built with
  ``**params`` (torchvision ``ops/misc.py``); ``model(x, future=n)`` (time_sequence_prediction).
* torchvision's building blocks (``Conv2dNormActivation`` in each keyword form the models use, ``SqueezeExcitation``,
  ``StochasticDepth``), ``WeightsEnum.verify``, ``resnet18()``, ``utils.save_image`` (read back as pixels).
* Datasets and loaders: ``DataLoader`` keyword sets, ``len(loader)`` / ``iter(loader)``, ``MNIST(download=True)``
  on staged IDX files, ``CIFAR10`` on a staged two-batch pickle set (the class's md5 table set to the staged files'
  for the construction, restored after), ``ImageFolder`` on staged PNGs, ``FakeData(image_size=, transform=)``,
  ``LSUN`` (needs ``lmdb``, installed on neither side: the golden is the import error).
* ``torch.distributed`` in a one-process world (gloo, ``tcp://`` on a free port; MindSpore's mccl here):
  ``init_process_group``, ``get_rank``/``get_world_size``/``get_backend``, ``all_reduce``,
  ``DistributedSampler`` (+ ``set_epoch``), ``DistributedDataParallel`` forward, ``destroy_process_group``. One case
  holds all of it: MindSpore's backend initializes once per process (``patches/distributed.py``), and a replay worker
  runs many cases; so the other ``init_process_group`` forms (``(backend=)`` with env://, ``(backend=, rank=,
  world_size=)``) stay uncovered, as do ``mp.spawn(fn, args=, nprocs=)`` (children start through run.py, seconds
  each, from the replay worker as ``__main__``) and ``DistributedDataParallel(m, device_ids=[i])`` (CPU PyTorch
  refuses device_ids for a CPU module; run.py's cuda is the process's device, which accepts it).
* Device-selection calls that CPU PyTorch refuses (``torch.cuda.set_device``, ``torch.accelerator.set_device_idx``,
  ``nn.parallel.data_parallel(m, x, range(1))``): the golden is the error.

Everything is eager (``graph=False``) except module forwards, whose compiled form run.py uses too.
"""
from app.tools.conformance.cases.vision import _IDX, _TV
from app.tools.conformance.spec import Known
from app.tools.conformance.spec import C, T, api_of, used_signatures


def _E(expr, setup="", **kw):
    """An eager case without gradient (data, Python-object results)."""
    kw.setdefault("graph", False)
    kw.setdefault("grad", False)
    if "sig" not in kw:
        inputs = {k for k, v in kw.items() if isinstance(v, T)}
        try:
            api_of(expr, inputs, setup)
        except ValueError:  # ``list(DataLoader(...))``: the first torch call in ``expr``
            kw["sig"] = used_signatures(expr, "", inputs)[0]
    return C(expr, setup, **kw)


def _seq(n):
    """``nn.Sequential`` of ``n`` positional modules on 4 features: Linear, Tanh, Identity repeating."""
    cycle = ("nn.Linear(4, 4)", "nn.Tanh()", "nn.Identity()")
    return "m = init(nn.Sequential(" + ", ".join(cycle[i % 3] for i in range(n)) + "))\n"


# a dcgan-style generator (13 modules) and discriminator (14 modules) on small shapes
_DCGAN_G = ("m = init(nn.Sequential(nn.ConvTranspose2d(4, 8, 2, 1, 0, bias=False), nn.BatchNorm2d(8), nn.ReLU(True), "
            "nn.ConvTranspose2d(8, 6, 4, 2, 1, bias=False), nn.BatchNorm2d(6), nn.ReLU(True), "
            "nn.ConvTranspose2d(6, 4, 4, 2, 1, bias=False), nn.BatchNorm2d(4), nn.ReLU(True), "
            "nn.ConvTranspose2d(4, 3, 4, 2, 1, bias=False), nn.BatchNorm2d(3), nn.ReLU(True), nn.Tanh()))\nm.eval()\n")
_DCGAN_D = ("m = init(nn.Sequential(nn.Conv2d(3, 4, 4, 2, 1, bias=False), nn.LeakyReLU(0.2, inplace=True), "
            "nn.Conv2d(4, 8, 4, 2, 1, bias=False), nn.BatchNorm2d(8), nn.LeakyReLU(0.2, inplace=True), "
            "nn.Conv2d(8, 8, 3, 1, 1, bias=False), nn.BatchNorm2d(8), nn.LeakyReLU(0.2, inplace=True), "
            "nn.Conv2d(8, 8, 3, 1, 1, bias=False), nn.BatchNorm2d(8), nn.LeakyReLU(0.2, inplace=True), "
            "nn.Conv2d(8, 1, 2, 1, 0, bias=False), nn.Flatten(), nn.Sigmoid()))\nm.eval()\n")
# vgg-style features (29 modules: 8 conv+bn+relu triples on 2 channels, 3 max-pools, 2 identities)
_VGG29 = ("m = init(nn.Sequential(" + ", ".join(
    ["nn.Conv2d(2, 2, 3, padding=1), nn.BatchNorm2d(2), nn.ReLU(inplace=True)"] * 8
    + ["nn.MaxPool2d(kernel_size=2, stride=2)"] * 3 + ["nn.Identity()"] * 2) + "))\nm.eval()\n")

_ACT = "kw = {kw}\nm = nn.{name}(**kw)\n"

# Conv2dNormActivation in the keyword forms of mobilenetv2/v3 and efficientnet
_CNA = _TV + "from functools import partial\nm = init(torchvision.ops.Conv2dNormActivation({args}))\nm.{mode}()\n"
_CNA_FORMS = [
    "4, 8, kernel_size=3, stride=1, dilation=2, groups=4, norm_layer=nn.BatchNorm2d, activation_layer=nn.Hardswish",
    "4, 4, kernel_size=3, stride=2, groups=4, norm_layer=partial(nn.BatchNorm2d, eps=1e-3, momentum=0.01), "
    "activation_layer=nn.SiLU",
    "4, 4, stride=1, groups=4, norm_layer=nn.BatchNorm2d, activation_layer=nn.ReLU6",
    "4, 6, kernel_size=1, norm_layer=nn.BatchNorm2d, activation_layer=None",
    "3, 6, kernel_size=3, stride=2, norm_layer=partial(nn.BatchNorm2d, eps=1e-3, momentum=0.01), "
    "activation_layer=nn.SiLU",
    "3, 6, stride=2, norm_layer=nn.BatchNorm2d, activation_layer=nn.ReLU6",
]

_TDS = "ds = torch.utils.data.TensorDataset(x, y)\n"
_D = dict(x=T(10, 3, grad=False), y=T(10, dtype="int64", low=0, high=5))

# CIFAR-10's python pickles (data uint8 N x 3072, labels list; batches.meta label_names) for 4 + 3 images, in
# root/cifar-10-batches-py; CIFAR10's md5 table is set to the staged files' for the construction and restored
_CIFAR = _TV + """import os, pickle, tempfile, hashlib
root = tempfile.mkdtemp(prefix='conformance_cifar_')
folder = os.path.join(root, 'cifar-10-batches-py')
os.makedirs(folder)
rs = np.random.RandomState(4)
def put(name, obj):
    with open(os.path.join(folder, name), 'wb') as f:
        pickle.dump(obj, f)
    with open(os.path.join(folder, name), 'rb') as f:
        return [name, hashlib.md5(f.read()).hexdigest()]
train_list = [put('data_batch_1', {'data': rs.randint(0, 256, (2, 3072)).astype(np.uint8), 'labels': [3, 1]}),
              put('data_batch_2', {'data': rs.randint(0, 256, (2, 3072)).astype(np.uint8), 'labels': [0, 9]})]
test_list = [put('test_batch', {'data': rs.randint(0, 256, (3, 3072)).astype(np.uint8), 'labels': [5, 2, 7]})]
meta_md5 = put('batches.meta', {'label_names': ['c%d' % i for i in range(10)]})[1]
cls = torchvision.datasets.CIFAR10
saved = (cls.train_list, cls.test_list, cls.meta)
cls.train_list, cls.test_list = train_list, test_list
cls.meta = dict(cls.meta, md5=meta_md5)
try:
BUILD
finally:
    cls.train_list, cls.test_list, cls.meta = saved
"""
_TF32 = ("torchvision.transforms.Compose([torchvision.transforms.Resize(8), torchvision.transforms.ToTensor(), "
         "torchvision.transforms.Normalize((0.5, 0.5, 0.5), (0.5, 0.5, 0.5))])")

# an image folder: root/<class>/<n>.png, two classes, RGB 6x5 images
_FOLDER = _TV + """import os, tempfile
from PIL import Image
root = tempfile.mkdtemp(prefix='conformance_folder_')
rs = np.random.RandomState(5)
for cls_name, n in (('cat', 2), ('dog', 3)):
    os.makedirs(os.path.join(root, cls_name))
    for i in range(n):
        Image.fromarray(rs.randint(0, 256, (6, 5, 3)).astype(np.uint8)).save(os.path.join(root, cls_name, '%d.png' % i))
"""

# save_image to a temporary PNG, read back as pixels
_SAVE = _TV + "import os, tempfile\nfrom PIL import Image\npath = os.path.join(tempfile.mkdtemp(prefix='conformance_img_'), 'x.png')\n"

# the one-process world (module docstring); environment variables restored, the group destroyed
_DIST = """import os, socket
from torch.nn.parallel import DistributedDataParallel as DDP
s = socket.socket()
s.bind(('127.0.0.1', 0))
port = s.getsockname()[1]
s.close()
def run():
    torch.distributed.init_process_group(backend='gloo', init_method='tcp://127.0.0.1:%d' % port, rank=0, world_size=1)
    try:
        out = [torch.distributed.is_initialized(), torch.distributed.get_rank(), torch.distributed.get_world_size(),
               torch.distributed.get_backend()]
        t = x.clone()
        work = torch.distributed.all_reduce(t, torch.distributed.ReduceOp.SUM, async_op=False)
        out += [t, work is None]
        ds = torch.utils.data.TensorDataset(x)
        sampler = torch.utils.data.DistributedSampler(ds)
        out.append(list(sampler))
        sampler.set_epoch(3)
        out.append(list(sampler))
        sampler = torch.utils.data.DistributedSampler(ds, shuffle=False, drop_last=True)
        out.append(list(sampler))
        model = init(nn.Linear(3, 2))
        ddp = torch.nn.parallel.DistributedDataParallel(model)
        out += [ddp(x), type(ddp.module).__name__, sorted(ddp.state_dict())]
    finally:
        torch.distributed.destroy_process_group()
    out.append(torch.distributed.is_initialized())
    return out
"""


CASES = [
    # ---- Tensor protocol: bool(), format(), len(), backward(), device flags, view with 4 sizes
    _E("bool(a)", a=T(1)),
    _E("bool(a)", a=T()),
    _E("bool(a)", a=T(1, dtype="int64", low=0, high=2)),
    _E("bool(a)", a=T(3)),  # more than one value: RuntimeError
    _E("format(a, '.4f')", a=T()),
    _E("format(a, '.4f')", a=T(dtype="int64")),
    _E("format(a, '.4f')", a=T(2)),  # not 0-d: TypeError
    _E("format(a, '')", a=T(2)),
    _E("len(a)", a=T(4, 3)),
    _E("len(a)", a=T(0, 2)),
    _E("len(a)", a=T()),  # 0-d: TypeError
    _E("len(a)", a=T(5, param=True)),
    # backward() after a module call, as the scripts do (the eager bridge records from a module call; run.py's
    # rewritten step sites open it for module-free code, which exec'd setup code is not)
    _E("[x.grad, m.weight.grad, m.bias.grad]", "x = x.detach().requires_grad_(True)\nm = init(nn.Linear(3, 2))\n"
       "loss = (m(x) ** 2).mean()\nloss.backward()\n", sig="torch.Tensor.backward(0)", x=T(4, 3)),
    _E("[m.weight.grad, m.bias.grad]", "m = init(nn.Linear(3, 2))\nloss = F.mse_loss(m(x), y)\nloss.backward()\n"
       "loss = F.mse_loss(m(x), y)\nloss.backward()\n", sig="torch.Tensor.backward(0)", x=T(4, 3), y=T(4, 2)),
    _E("y.backward()", "m = init(nn.Linear(3, 2))\ny = m(x)\n", sig="torch.Tensor.backward(0)",
       x=T(3)),  # not a scalar: RuntimeError
    _E("a.is_cuda", a=T(2)),
    _E("a.is_cuda", a=T(2, param=True)),
    _E("a.is_xpu", a=T(2)),
    _E("(a.is_cuda or a.is_xpu) and 2 > 1", a=T(2, 3), sig="torch.Tensor.is_xpu.__get__(0)"),
    C("a.view(2, 1, 3, 4)", a=T(6, 4)),
    C("a.view(2, 1, 2, -1)", a=T(4, 3, 2)),
    C("a.view(5, 1, 2, 2)", a=T(6, 4)),  # wrong size: RuntimeError
    C("a.view(2, 1, 3, 4)", a=T(6, 4, dtype="int64"), grad=False),
    # ---- torch functions
    C("torch.spmm(a, b)", a=T(3, 4), b=T(4, 2)),
    C("torch.spmm(a, b)", a=T(3, 4), b=T(3, 2)),  # shape mismatch raises
    _E("[torch.jit.is_scripting(), torch.jit.is_tracing()]", sig="torch.jit.is_scripting(0)"),
    _E("torch.jit.is_tracing()"),
    _E("r", "r = torch.fx.wrap('conformance_fn')\n", sig="torch.fx.wrap(1)"),
    _E("torch.fx.wrap('conformance_fn')"),
    # ---- device selection that CPU PyTorch refuses (the scripts call it after checking for GPUs)
    _E("torch.cuda.set_device(0)"),
    _E("torch.accelerator.set_device_idx(0)"),
    _E("nn.parallel.data_parallel(m, x, range(1))", "m = init(nn.Linear(3, 2))\n", x=T(2, 3)),
    # ---- activations built with **params (torchvision ops/misc.py), in place and not
    *[C("m(x)", _ACT.format(kw="{}", name=name), x=T(3, 5)) for name in ("ReLU", "ReLU6", "Hardswish", "SiLU")],
    *[_E("m(x)", _ACT.format(kw="{'inplace': True}", name=name), x=T(3, 5)) for name in ("ReLU", "Hardswish")],
    C("m(x)", "kw = {'inplace': False}\nm = nn.Dropout(0.0, **kw)\n", x=T(3, 4)),
    C("m(x)", "kw = {}\nm = nn.Dropout(0.5, **kw)\nm.eval()\n", x=T(3, 4)),
    _E("[list(r.shape), int(((r == 0) | (r == 2 * x)).sum())]",
       "kw = {'inplace': False}\nm = nn.Dropout(0.5, **kw)\nr = m(x)\n", x=T(3, 4, kind="pos"),
       sig="torch.nn.Dropout(1;**)"),
    # ---- nn.Sequential forms
    *[C("m(x)", _seq(n), x=T(2, 4), graph=n == 7) for n in (7, 9, 19)],
    C("m(x)", "layers = [nn.Linear(4, 6), nn.ReLU(), nn.Linear(6, 3)]\nm = init(nn.Sequential(*layers))\n",
      sig="torch.nn.Sequential(0;*)", x=T(2, 4)),
    C("m(x)", "layers = []\nm = init(nn.Sequential(*layers))\n", sig="torch.nn.Sequential(0;*)", x=T(2, 4)),
    C("m(x)", _DCGAN_G, x=T(2, 4, 1, 1)),
    C("m(x)", _DCGAN_D, x=T(2, 3, 16, 16)),
    C("m(x)", _VGG29, x=T(1, 2, 8, 8)),
    # ---- subclasses calling the base constructor
    C("m(x)", "class Layer(nn.Linear):\n"
      "    def __init__(self, in_features, out_features, bias=True, device=None, dtype=None):\n"
      "        super().__init__(in_features, out_features, bias, device, dtype)\n"
      "        self.relu = torch.nn.ReLU()\n"
      "    def forward(self, x):\n"
      "        x_direction = x / (x.norm(2, 1, keepdim=True) + 1e-4)\n"
      "        return self.relu(torch.mm(x_direction, self.weight.T) + self.bias.unsqueeze(0))\n"
      "m = init(Layer(5, 3))\n", sig="torch.nn.Linear.__init__(5)", x=T(4, 5), graph=False),
    _E("[(k, tuple(v.shape), v.dtype) for k, v in m.state_dict().items()]",
       "class Layer(nn.Linear):\n    def __init__(self):\n        super().__init__(3, 2, False, None, torch.float64)\n"
       "m = Layer()\n", sig="torch.nn.Linear.__init__(5)"),
    C("m(x)", "class Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
      "        self.fc = nn.Linear(3, 2)\n    def forward(self, x):\n        return torch.tanh(self.fc(x))\n"
      "m = init(Net())\n", sig="torch.nn.Module.__init__(0)", x=T(4, 3), graph=False),
    _E("[type(m.training).__name__, m.training, list(m._modules), list(m.parameters())]",
       "class Net(nn.Module):\n    def __init__(self):\n        super().__init__()\nm = Net()\n",
       sig="torch.nn.Module.__init__(0)"),
    C("m(x)", "class Pair(nn.Sequential):\n    def __init__(self, a, b):\n        super().__init__(a, b)\n"
      "m = init(Pair(nn.Linear(3, 4), nn.ReLU()))\n", sig="torch.nn.Sequential.__init__(2)", x=T(2, 3), graph=False),
    C("m(x)", "class Triple(nn.Sequential):\n    def __init__(self, c):\n"
      "        super().__init__(nn.Conv2d(c, c, 3, padding=1, bias=False), nn.BatchNorm2d(c), nn.ReLU(inplace=True))\n"
      "m = init(Triple(2))\nm.eval()\n", sig="torch.nn.Sequential.__init__(3)", x=T(1, 2, 5, 5), graph=False),
    C("m(x, future=2)", "class Seq(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
      "        self.cell = nn.LSTMCell(1, 4)\n        self.linear = nn.Linear(4, 1)\n"
      "    def forward(self, input, future=0):\n        outputs = []\n"
      "        h = torch.zeros(input.size(0), 4)\n        c = torch.zeros(input.size(0), 4)\n"
      "        for x in input.split(1, dim=1):\n            h, c = self.cell(x, (h, c))\n"
      "            output = self.linear(h)\n            outputs += [output]\n"
      "        for i in range(future):\n            h, c = self.cell(output, (h, c))\n"
      "            output = self.linear(h)\n            outputs += [output]\n"
      "        return torch.cat(outputs, dim=1)\n"
      "m = init(Seq())\n", sig="torch.nn.Module.__call__(1;future)", x=T(2, 5), graph=False),
    # ---- torchvision building blocks
    *[C("m(x)", _CNA.format(args=args, mode="eval"), x=T(2, int(args[0]), 6, 6), graph=False) for args in _CNA_FORMS],
    C("m(x)", _CNA.format(args=_CNA_FORMS[0], mode="train"), x=T(2, 4, 6, 6), graph=False),
    C("m(x)", _TV + "m = init(torchvision.ops.SqueezeExcitation(8, 2))\n", x=T(2, 8, 3, 3), graph=False),
    C("m(x)", _TV + "m = init(torchvision.ops.SqueezeExcitation(8, 2, activation=nn.SiLU))\n", x=T(2, 8, 3, 3),
      graph=False),
    C("m(x)", _TV + "m = torchvision.ops.StochasticDepth(0.2, 'row')\nm.eval()\n", x=T(4, 3, 2, 2), graph=False),
    C("m(x)", _TV + "m = torchvision.ops.StochasticDepth(0.0, 'row')\n", x=T(4, 3, 2, 2), graph=False),
    _E("[list(r.shape), r.dtype, sorted(set((r[i] == 0).all().item() or bool(torch.allclose(r[i], x[i] / 0.5)) "
       "for i in range(64)))]", _TV + "m = torchvision.ops.StochasticDepth(0.5, 'row')\nr = m(x)\n",
       sig="torchvision.ops.StochasticDepth(2)", x=T(64, 3, kind="pos")),
    _E("m(x)", _TV + "m = torchvision.ops.StochasticDepth(0.2, 'column')\n", x=T(4, 3)),  # bad mode: ValueError
    _E("[str(torchvision.models.EfficientNet_B0_Weights.verify('IMAGENET1K_V1')), "
       "torchvision.models.EfficientNet_B0_Weights.verify(None)]", _TV, sig="torchvision.models.WeightsEnum.verify(1)"),
    _E("torchvision.models.ResNet18_Weights.verify('IMAGENET1K_V9')", _TV,
       sig="torchvision.models.WeightsEnum.verify(1)"),  # unknown name: ValueError
    _E("[(k, tuple(v.shape), v.dtype) for k, v in m.state_dict().items()]", _TV + "m = torchvision.models.resnet18()\n",
       sig="torchvision.models.resnet18(0)"),
    _E("np.array(Image.open(path))", _SAVE + "torchvision.utils.save_image(x, path)\n",
       sig="torchvision.utils.save_image(2)", x=T(4, 1, 6, 6, kind="rand")),
    _E("np.array(Image.open(path))", _SAVE + "torchvision.utils.save_image(x, path, normalize=True)\n",
       sig="torchvision.utils.save_image(2;normalize)", x=T(3, 3, 5, 5)),
    _E("np.array(Image.open(path))", _SAVE + "torchvision.utils.save_image(x.view(6, 1, 4, 4), path, nrow=4)\n",
       sig="torchvision.utils.save_image(2;nrow)", x=T(6, 16, kind="rand")),
    # ---- DataLoader keyword sets (shuffle=False: PyTorch's shuffled order is its generator's), len/iter protocol
    _E("list(torch.utils.data.DataLoader(ds, batch_size=4, shuffle=False, **kw))", _TDS + "kw = {'num_workers': 0}\n",
       **_D),
    _E("list(torch.utils.data.DataLoader(ds, batch_size=3, shuffle=False, num_workers=0, pin_memory=False))",
       _TDS, **_D),
    _E("list(torch.utils.data.DataLoader(ds, batch_size=4, shuffle=False, num_workers=0))", _TDS, **_D),
    _E("list(torch.utils.data.DataLoader(ds, batch_size=6, pin_memory=False, shuffle=False))", _TDS, **_D),
    _E("[len(b), sorted(torch.cat([b[0] for b in batches]).tolist()) == sorted(x.tolist())]",
       _TDS + "torch.manual_seed(0)\nbatches = list(torch.utils.data.DataLoader(ds, batch_size=4, shuffle=True, "
       "num_workers=0))\nb = batches\n", sig="torch.utils.data.DataLoader(1;batch_size,num_workers,shuffle)", **_D),
    _E("[loader.__len__(), len(loader)]", _TDS + "loader = torch.utils.data.DataLoader(ds, batch_size=4)\n",
       sig="torch.utils.data.DataLoader.__len__(0)", **_D),
    _E("[loader.__len__(), len(loader)]", _TDS + "loader = torch.utils.data.DataLoader(ds, batch_size=4, "
       "drop_last=True)\n", sig="torch.utils.data.DataLoader.__len__(0)", **_D),
    _E("[list(loader.__iter__()), [b for b in loader]]", _TDS + "loader = torch.utils.data.DataLoader(ds, batch_size=3)\n",
       sig="torch.utils.data.DataLoader.__iter__(0)", **_D),
    _E("[i, next(it)]", _TDS + "loader = torch.utils.data.DataLoader(ds, batch_size=4)\nit = loader.__iter__()\n"
       "i = next(it)\n", sig="torch.utils.data.DataLoader.__iter__(0)", **_D),
    # ---- datasets
    _E("[ds.__len__(), len(ds), ds[0], ds[999][1]]", _TV + "ds = torchvision.datasets.FakeData(image_size=(3, 6, 6), "
       "transform=torchvision.transforms.ToTensor())\n", sig="torchvision.datasets.FakeData(0;image_size,transform)"),
    _E("[ds.__len__(), ds[1]]", _TV + "ds = torchvision.datasets.FakeData(4, (3, 5, 5), 10, "
       "torchvision.transforms.ToTensor())\n", sig="torchvision.datasets.FakeData.__len__(0)"),
    _E("[len(ds), ds[0], ds[3]]", _IDX + "ds = torchvision.datasets.MNIST(root=root, download=True, "
       "transform=torchvision.transforms.Compose([torchvision.transforms.Resize(8), torchvision.transforms.ToTensor(), "
       "torchvision.transforms.Normalize((0.5,), (0.5,))]))\n",
       sig="torchvision.datasets.MNIST(0;download,root,transform)"),
    _E("[len(ds), type(ds[0][0]).__name__, np.array(ds[1][0]), ds[1][1]]",
       _IDX + "ds = torchvision.datasets.MNIST(root, train=False, download=True)\n",
       sig="torchvision.datasets.MNIST(1;download,train)"),
    _E("[len(ds), ds[2]]", _IDX + "ds = torchvision.datasets.MNIST(root, train=True, download=True, "
       "transform=torchvision.transforms.Compose([torchvision.transforms.ToTensor(), "
       "torchvision.transforms.Normalize((0.1307,), (0.3081,))]))\n",
       sig="torchvision.datasets.MNIST(1;download,train,transform)"),
    _E("[ds.__len__(), len(ds)]", _IDX + "ds = torchvision.datasets.MNIST(root, train=False)\n",
       sig="torchvision.datasets.MNIST.__len__(0)"),
    _E("[len(ds), ds[0], ds[3], ds.classes[:2], ds.targets]",
       _CIFAR.replace("BUILD", "    ds = torchvision.datasets.CIFAR10(root=root, download=True, transform=" + _TF32 + ")"),
       sig="torchvision.datasets.CIFAR10(0;download,root,transform)"),
    _E("[len(tr), len(te), tr[1], te[2], te.targets]",
       _CIFAR.replace("BUILD", "    tr = torchvision.datasets.CIFAR10(root, train=True, "
                     "transform=torchvision.transforms.ToTensor())\n"
                     "    te = torchvision.datasets.CIFAR10(root, train=False, "
                     "transform=torchvision.transforms.ToTensor())"),
       sig="torchvision.datasets.CIFAR10(1;train,transform)"),
    _E("[len(ds), ds.classes, ds.class_to_idx, [os.path.basename(p) for p, _ in ds.samples], ds[0], ds[4][1]]",
       _FOLDER + "ds = torchvision.datasets.ImageFolder(root=root, transform=torchvision.transforms.ToTensor())\n",
       sig="torchvision.datasets.ImageFolder(0;root,transform)"),
    _E("[len(ds), ds.targets, ds[2]]", _FOLDER + "ds = torchvision.datasets.ImageFolder(root, "
       "torchvision.transforms.Compose([torchvision.transforms.Resize(4), torchvision.transforms.ToTensor()]))\n",
       sig="torchvision.datasets.ImageFolder(2)"),
    _E("torchvision.datasets.LSUN(root=root, classes=['bedroom_train'], transform=torchvision.transforms.ToTensor())",
       _TV + "import tempfile\nroot = tempfile.mkdtemp(prefix='conformance_lsun_')\n"),
    _E("torchvision.datasets.LSUN(root=root, classes=['kitchen_x'], transform=None)",
       _TV + "import tempfile\nroot = tempfile.mkdtemp(prefix='conformance_lsun_')\n"),  # bad class: ValueError
    # ---- torch.distributed in a one-process world (module docstring)
    _E("run()", _DIST, sig="torch.distributed.init_process_group(0;backend,init_method,rank,world_size)",
       x=T(5, 3)),
]

KNOWN = [
    Known("37fda1a697c5", "torch.cuda.set_device", ("pynative",),
          "by design: run.py maps the scripts' cuda devices onto the one MindSpore device of the process "
          "(patches/device.py), so set_device(0) selects it and returns None; CPU-only PyTorch raises AttributeError "
          "(no CUDA build). The scripts call it only when they found GPUs"),
]
