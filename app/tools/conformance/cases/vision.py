"""``torchvision`` as pt_original/ uses it: transforms on PIL images (built from numpy uint8 arrays in the setup) and
on tensors, datasets (``FakeData``; ``MNIST``/``FashionMNIST`` from tiny IDX files staged in a temporary folder),
and the models ResNet18, VGG11-BN, MobileNetV2, MobileNetV3-small, EfficientNet-B0 (``weights=None``,
``num_classes=10``).

The scripts' forms: train_resnet ``Compose([RandomCrop(32, padding=4), RandomHorizontalFlip(0.5), ToTensor(),
Normalize(mean, std)])`` and ``Compose([Pad(2), Grayscale(num_output_channels=3), ToTensor(), Normalize(...)])``;
mnist/mnist_rnn ``Normalize((0.1307,), (0.3081,))``; dcgan ``Resize(n)``, ``CenterCrop(n)``, ``Normalize((0.5, 0.5,
0.5), (0.5, 0.5, 0.5))``; imagenet ``RandomResizedCrop(224)``, ``RandomHorizontalFlip()``, ``Resize(256)``,
``CenterCrop(224)``, ``Normalize(mean=, std=)``, ``FakeData(n, (3, 224, 224), 1000, ToTensor())``;
mnist_forward_forward ``Lambda(lambda x: torch.flatten(x))``; siamese ``resnet18(weights=None)``.

Random transforms compare dtype and shape only (``values=False``) unless their draw is fixed (p=1 flips, a crop of
the full size). Models get deterministic weights from numpy in the setup (``load``: conv/linear weights
N(0, 2/fan_in), norm weights 1 + N(0, 0.01), other floats N(0, 0.01), running_var U[0.5, 1.5)) so that activations stay O(1) through the depth;
their gradient is the input's (the parameters' would not fit the golden files).
"""
from app.tools.conformance.spec import Known
from app.tools.conformance.spec import C, T

_TV = "import torchvision\nfrom PIL import Image\n"
_RGB = _TV + "img = Image.fromarray(np.random.RandomState(0).randint(0, 256, (10, 12, 3)).astype(np.uint8))\n"
_RGB32 = _TV + "img = Image.fromarray(np.random.RandomState(3).randint(0, 256, (32, 32, 3)).astype(np.uint8))\n"
_GRAY = _TV + "img = Image.fromarray(np.random.RandomState(1).randint(0, 256, (28, 28)).astype(np.uint8))\n"


def _V(expr, setup, **kw):
    kw.setdefault("graph", False)
    kw.setdefault("grad", False)
    return C(expr, setup, **kw)


def _tf(ctor, image=_RGB, **kw):
    """``tf = ctor`` applied to the setup's image: ``tf(img)``."""
    return _V("tf(img)", image + f"tf = {ctor}\n", **kw)


# IDX files (LeCun's format: big-endian magic 0x0803 images / 0x0801 labels, then the dimensions) for 6 training
# and 4 test images of 28x28, in root/<Name>/raw/ as torchvision expects them unpacked
_IDX = _TV + """import os, tempfile
root = tempfile.mkdtemp(prefix='conformance_mnist_')
rs = np.random.RandomState(2)
for name in ('MNIST', 'FashionMNIST'):
    raw = os.path.join(root, name, 'raw')
    os.makedirs(raw)
    for prefix, n in (('train', 6), ('t10k', 4)):
        with open(os.path.join(raw, prefix + '-images-idx3-ubyte'), 'wb') as f:
            f.write(np.array([0x803, n, 28, 28], '>i4').tobytes() + rs.randint(0, 256, (n, 28, 28)).astype(np.uint8).tobytes())
        with open(os.path.join(raw, prefix + '-labels-idx1-ubyte'), 'wb') as f:
            f.write(np.array([0x801, n], '>i4').tobytes() + rs.randint(0, 10, n).astype(np.uint8).tobytes())
"""

# deterministic model weights (module docstring)
_LOAD = _TV + """def load(m):
    rs = np.random.RandomState(0)
    new = {}
    for k, v in m.state_dict().items():
        shape = tuple(v.shape)
        if v.dtype != torch.float32:
            new[k] = v
            continue
        if k.endswith('running_var'):
            a = rs.uniform(0.5, 1.5, shape)
        elif k.endswith('weight') and len(shape) > 1:
            a = rs.standard_normal(shape) * (2.0 / np.prod(shape[1:])) ** 0.5
        elif k.endswith('weight'):
            a = 1.0 + rs.standard_normal(shape) * 0.1
        else:
            a = rs.standard_normal(shape) * 0.1
        new[k] = torch.tensor(a.astype(np.float32))
    m.load_state_dict(new)
    for mod in m.modules():
        if type(mod).__name__ in ('Dropout', 'StochasticDepth'):
            mod.p = 0.0
    return m
"""


_CLASSES = {"resnet18": "ResNet", "vgg11_bn": "VGG", "mobilenet_v2": "MobileNetV2",
            "mobilenet_v3_small": "MobileNetV3", "efficientnet_b0": "EfficientNet"}


def _model(ctor, mode, n=1, size=32, **kw):
    """``m(x)`` for the model ``ctor`` with :data:`_LOAD`'s weights, in ``mode`` (eval/train)."""
    cls = _CLASSES[ctor.split("(")[0].rsplit(".", 1)[1]]
    kw.setdefault("graph", False)
    return C("m(x)", _LOAD + f"m = load({ctor})\nm.{mode}()\n", x=T(n, 3, size, size),
             sig=f"torchvision.models.{cls}.__call__(1)", **kw)


CASES = [
    # ---- transforms on PIL images
    _tf("torchvision.transforms.ToTensor()"),
    _tf("torchvision.transforms.ToTensor()", _GRAY),
    _tf("torchvision.transforms.Resize(6)"),
    _tf("torchvision.transforms.Resize(16)"),
    _tf("torchvision.transforms.Resize((5, 7))"),
    _tf("torchvision.transforms.CenterCrop(6)"),
    _tf("torchvision.transforms.CenterCrop(14)"),
    _tf("torchvision.transforms.Pad(2)", _GRAY),
    _tf("torchvision.transforms.Pad(2, fill=7)"),
    _tf("torchvision.transforms.Grayscale(num_output_channels=3)", _GRAY),
    _tf("torchvision.transforms.Grayscale(num_output_channels=3)"),
    _tf("torchvision.transforms.Grayscale()"),
    _tf("torchvision.transforms.RandomHorizontalFlip(1.0)"),
    _tf("torchvision.transforms.RandomHorizontalFlip(0.0)"),
    _tf("torchvision.transforms.RandomCrop((10, 12))"),
    # random draws: the type, mode and size of the result (the draw is the global generator's)
    _V("[type(r).__name__, r.size, r.mode]", _RGB32 + "torch.manual_seed(0)\n"
       "r = torchvision.transforms.RandomCrop(32, padding=4)(img)\n",
       sig="torchvision.transforms.RandomCrop(1;padding)"),
    _V("[type(r).__name__, r.size, r.mode]", _RGB + "torch.manual_seed(0)\n"
       "r = torchvision.transforms.RandomHorizontalFlip(0.5)(img)\n",
       sig="torchvision.transforms.RandomHorizontalFlip(1)"),
    _V("[type(r).__name__, r.size, r.mode]", _RGB + "torch.manual_seed(0)\n"
       "r = torchvision.transforms.RandomHorizontalFlip()(img)\n", sig="torchvision.transforms.RandomHorizontalFlip(0)"),
    _V("[type(r).__name__, r.size, r.mode]", _RGB + "torch.manual_seed(0)\n"
       "r = torchvision.transforms.RandomResizedCrop(8)(img)\n", sig="torchvision.transforms.RandomResizedCrop(1)"),
    # ---- pipelines: the scripts' Compose chains on PIL images
    _tf("torchvision.transforms.Compose([torchvision.transforms.ToTensor(), "
        "torchvision.transforms.Normalize((0.4914, 0.4822, 0.4465), (0.2470, 0.2435, 0.2616))])"),
    _tf("torchvision.transforms.Compose([torchvision.transforms.Pad(2), "
        "torchvision.transforms.Grayscale(num_output_channels=3), torchvision.transforms.ToTensor(), "
        "torchvision.transforms.Normalize((0.2860,), (0.3530,))])", _GRAY),
    _tf("torchvision.transforms.Compose([torchvision.transforms.ToTensor(), "
        "torchvision.transforms.Normalize((0.1307,), (0.3081,))])", _GRAY),
    _tf("torchvision.transforms.Compose([torchvision.transforms.Resize(8), torchvision.transforms.CenterCrop(8), "
        "torchvision.transforms.ToTensor(), torchvision.transforms.Normalize((0.5, 0.5, 0.5), (0.5, 0.5, 0.5))])"),
    _tf("torchvision.transforms.Compose([torchvision.transforms.Resize(12), torchvision.transforms.CenterCrop(10), "
        "torchvision.transforms.ToTensor(), torchvision.transforms.Normalize(mean=[0.485, 0.456, 0.406], "
        "std=[0.229, 0.224, 0.225])])"),
    _tf("torchvision.transforms.Compose([torchvision.transforms.CenterCrop(8), torchvision.transforms.Resize(4), "
        "torchvision.transforms.ToTensor()])"),
    _tf("torchvision.transforms.Compose([torchvision.transforms.ToTensor(), "
        "torchvision.transforms.Normalize((0.1307,), (0.3081,)), torchvision.transforms.Lambda(lambda x: "
        "torch.flatten(x))])", _GRAY),
    _V("[type(r).__name__, r.dtype, list(r.shape)]", _RGB32 + "torch.manual_seed(0)\n"
       "r = torchvision.transforms.Compose([torchvision.transforms.RandomCrop(32, padding=4), "
       "torchvision.transforms.RandomHorizontalFlip(0.5), torchvision.transforms.ToTensor(), "
       "torchvision.transforms.Normalize((0.4914, 0.4822, 0.4465), (0.2470, 0.2435, 0.2616))])(img)\n",
       sig="torchvision.transforms.Compose(1)"),
    # ---- transforms on tensors
    _V("tf(x)", _TV + "tf = torchvision.transforms.Normalize((0.5, 0.5, 0.5), (0.5, 0.5, 0.5))\n", x=T(3, 4, 5)),
    _V("tf(x)", _TV + "tf = torchvision.transforms.Normalize(mean=[0.485, 0.456, 0.406], std=[0.229, 0.224, 0.225])\n",
       x=T(2, 3, 4, 5)),
    _V("tf(x)", _TV + "tf = torchvision.transforms.Normalize((0.1307,), (0.3081,))\n", x=T(1, 6, 6)),
    _V("tf(x)", _TV + "tf = torchvision.transforms.Normalize((0.5,), (0.0,))\n", x=T(1, 6, 6)),  # std 0 raises
    _V("tf(x)", _TV + "tf = torchvision.transforms.CenterCrop(4)\n", x=T(3, 6, 7)),
    _V("tf(x)", _TV + "tf = torchvision.transforms.Pad(2)\n", x=T(1, 4, 4)),
    _V("tf(x)", _TV + "tf = torchvision.transforms.RandomHorizontalFlip(1.0)\n", x=T(3, 4, 5)),
    _V("tf(x)", _TV + "tf = torchvision.transforms.Grayscale(num_output_channels=3)\n", x=T(3, 4, 5, kind="rand")),
    _V("tf(x)", _TV + "tf = torchvision.transforms.Resize((4, 6), antialias=True)\n", x=T(3, 8, 12, kind="rand")),
    # ---- datasets
    _V("[len(ds), ds[0], ds[3], ds.classes[:3] if hasattr(ds, 'classes') else None]",
       _TV + "ds = torchvision.datasets.FakeData(5, (3, 8, 8), 10, torchvision.transforms.ToTensor())\n",
       sig="torchvision.datasets.FakeData(4)"),
    _V("[type(ds[1][0]).__name__, ds[1][0].size, ds[1][1]]",
       _TV + "ds = torchvision.datasets.FakeData(size=4, image_size=(3, 6, 5), num_classes=3)\n",
       sig="torchvision.datasets.FakeData(0;image_size,num_classes,size)"),
    _V("ds[9]", _TV + "ds = torchvision.datasets.FakeData(5, (3, 8, 8), 10, torchvision.transforms.ToTensor())\n",
       sig="torchvision.datasets.FakeData(4)"),
    _V("[len(ds), ds[0], ds[5], ds.targets]", _IDX + "ds = torchvision.datasets.MNIST(root, train=True, "
       "transform=torchvision.transforms.Compose([torchvision.transforms.ToTensor(), "
       "torchvision.transforms.Normalize((0.1307,), (0.3081,))]))\n",
       sig="torchvision.datasets.MNIST(1;train,transform)"),
    _V("[len(ds), type(ds[0][0]).__name__, ds[0][0].size, ds[0][1], np.array(ds[2][0])]",
       _IDX + "ds = torchvision.datasets.MNIST(root, train=False)\n", sig="torchvision.datasets.MNIST(1;train)"),
    _V("[len(ds), ds[1], ds.classes]", _IDX + "ds = torchvision.datasets.FashionMNIST(root, train=True, "
       "transform=torchvision.transforms.Compose([torchvision.transforms.Pad(2), "
       "torchvision.transforms.Grayscale(num_output_channels=3), torchvision.transforms.ToTensor(), "
       "torchvision.transforms.Normalize((0.2860,), (0.3530,))]))\n",
       sig="torchvision.datasets.FashionMNIST(1;train,transform)"),
    _V("[len(batches), batches[0]]", _IDX + "ds = torchvision.datasets.FashionMNIST(root, train=False, "
       "transform=torchvision.transforms.ToTensor())\n"
       "batches = list(torch.utils.data.DataLoader(ds, batch_size=3, shuffle=False))\n",
       sig="torchvision.datasets.FashionMNIST(1;train,transform)"),
    # ---- models: state_dict keys and shapes, parameter count
    _V("[(k, tuple(v.shape), v.dtype) for k, v in m.state_dict().items()]",
       _TV + "m = torchvision.models.resnet18(weights=None, num_classes=10)\n",
       sig="torchvision.models.resnet18(0;num_classes,weights)"),
    _V("[len(m.state_dict()), sum(p.numel() for p in m.parameters()), m.fc.out_features]",
       _TV + "m = torchvision.models.resnet18(weights=None)\n", sig="torchvision.models.resnet18(0;weights)"),
    _V("[(k, tuple(v.shape), v.dtype) for k, v in m.state_dict().items()]",
       _TV + "m = torchvision.models.mobilenet_v2(weights=None, num_classes=10)\n",
       sig="torchvision.models.mobilenet_v2(0;num_classes,weights)"),
    _V("[(k, tuple(v.shape), v.dtype) for k, v in m.state_dict().items()]",
       _TV + "m = torchvision.models.mobilenet_v3_small(weights=None, num_classes=10)\n",
       sig="torchvision.models.mobilenet_v3_small(0;num_classes,weights)"),
    _V("[(k, tuple(v.shape), v.dtype) for k, v in m.state_dict().items()]",
       _TV + "m = torchvision.models.efficientnet_b0(weights=None, num_classes=10)\n",
       sig="torchvision.models.efficientnet_b0(0;num_classes,weights)"),
    _V("[(k, tuple(v.shape), v.dtype) for k, v in m.state_dict().items()]",
       _TV + "m = torchvision.models.vgg11_bn(weights=None, num_classes=10)\n",
       sig="torchvision.models.vgg11_bn(0;num_classes,weights)"),
    # ---- models: forward in eval and train mode (gradient: the input's)
    _model("torchvision.models.resnet18(weights=None, num_classes=10)", "eval", graph=True),
    _model("torchvision.models.resnet18(weights=None, num_classes=10)", "train", n=4, size=64, grad=False),
    _model("torchvision.models.mobilenet_v2(weights=None, num_classes=10)", "eval"),
    _model("torchvision.models.mobilenet_v3_small(weights=None, num_classes=10)", "eval"),
    _model("torchvision.models.mobilenet_v3_small(weights=None, num_classes=10)", "train", n=4, size=64, grad=False),
    _model("torchvision.models.efficientnet_b0(weights=None, num_classes=10)", "eval"),
    _model("torchvision.models.vgg11_bn(weights=None, num_classes=10)", "eval"),
]

_F32 = ("float32 rounding order over a deep network, not one op: the difference is PyTorch's own float32 error "
        "(float32 vs float64 under torch 2.13: {}); every op of the model passes alone")
KNOWN = [
    Known("55512628c9b0", "torchvision.transforms.Resize.__call__", ("pynative",),
          "Resize on a tensor (antialias=True, torchvision 0.28's default for tensors) raises NotImplementedError: "
          "MindTorch's interpolate has no antialiased bilinear (PyTorch's _upsample_bilinear2d_aa); the scripts "
          "resize PIL images (passes)"),
    Known("9fe205639276", "torchvision.models.ResNet.__call__", ("pynative", "graph"),
          _F32.format("input gradient max rel 1.3e-5; here 2 of 3072 values at 1.6e-5"), rounding=True),
    Known("18b3ea02cf09", "torchvision.models.MobileNetV2.__call__", ("pynative",),
          _F32.format("output max rel 1.5e-5, 1 value over the tolerance; here 2 of 10 at 1.9e-5"), rounding=True),
    Known("6b2f1ffb696b", "torchvision.models.ResNet.__call__", ("pynative",),
          _F32.format("train-mode output max rel 5.7e-5 at batch 4, 64x64; here 8.3e-5"), rounding=True),
    Known("ef33eab80238", "torchvision.models.MobileNetV3.__call__", ("pynative",),
          _F32.format("train-mode output max rel 1.5e-5 at batch 4, 64x64; here 3.0e-5"), rounding=True),
]
