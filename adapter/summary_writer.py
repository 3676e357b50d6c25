"""``torch.utils.tensorboard.SummaryWriter`` for MindTorch, written on the ``tensorboard`` package (issue 31 §5).

MindTorch 0.4.0 has no ``torch.utils.tensorboard``; ``patches/tensorboard.py`` installs this writer there. The event
files are TensorBoard's own: records go through ``tensorboard.summary.writer.event_file_writer.EventFileWriter``
(TFRecord framing, CRC, the ``brain.Event:2`` header, the file name
``events.out.tfevents.<time>.<host>.<pid>.<n><suffix>``) and the payloads are ``tensorboard.compat.proto`` /
``tensorboard.plugins.*`` protobufs. What each ``add_*`` writes (tag, step, value, plugin) is PyTorch 2.13's, as read
back by TensorBoard's ``EventAccumulator`` (tests/test_tensorboard.py compares against a run of real PyTorch).

Accepted values: MindTorch tensors (any device, ``requires_grad`` or not: detached and copied to the host),
``numpy`` arrays and scalars, Python numbers. bfloat16 tensors are widened to float32 (PyTorch narrows them to
float16 first; float32 holds every bfloat16 exactly, so a value differs from PyTorch's by at most float16 rounding).

Not available (they raise ``NotImplementedError`` naming the caller's ``file:line``): ``add_embedding``,
``add_video``, ``add_audio``, ``add_pr_curve``, ``add_pr_curve_raw``, ``add_mesh``, ``add_custom_scalars*``,
``add_onnx_graph``, ``add_image_with_boxes``. ``add_graph`` warns once and writes nothing: tracing a MindTorch model
into TensorBoard's graph format is not implemented, and a missing graph tab changes no training result.
"""
from __future__ import annotations

import atexit
import io
import os
import socket
import time
import weakref
from datetime import datetime
from typing import Dict, Optional

import numpy as np

from adapter.userframe import user_location, warn_user

# TensorBoard's default histogram edges ("tensorflow" bins; tensorboard/plugins/histogram and TensorFlow's
# core/lib/histogram/histogram.cc): 0, and +-1e-12 * 1.1**k for every k with 1e-12 * 1.1**k < 1e20, each value the
# previous one times 1.1 (repeated float64 products, so the edges are bit-identical to PyTorch's and TensorFlow's).
_TF_EDGE_START, _TF_EDGE_RATIO, _TF_EDGE_STOP = 1e-12, 1.1, 1e20
_TF_EDGES: Optional[np.ndarray] = None


def tensorflow_bins() -> np.ndarray:
    """TensorBoard's default histogram bucket edges, float64, ascending (length 2*K+1, K = 774 positive edges)."""
    global _TF_EDGES
    if _TF_EDGES is None:
        positive = []
        edge = _TF_EDGE_START
        while edge < _TF_EDGE_STOP:
            positive.append(edge)
            edge *= _TF_EDGE_RATIO
        pos = np.array(positive, dtype=np.float64)
        _TF_EDGES = np.concatenate([-pos[::-1], [0.0], pos])
    return _TF_EDGES


def _where() -> str:
    where = user_location(2)
    return f"{where}: " if where else ""


def to_numpy(value) -> np.ndarray:
    """``value`` as a numpy array: a numpy array as it is; a Python/numpy scalar as a 1-element array; a tensor
    (MindTorch's, MindSpore's) detached and copied to the host, bfloat16 widened to float32.

    Raises:
        TypeError: for anything else, naming the caller's ``file:line``.
    """
    if isinstance(value, np.ndarray):
        return value
    if np.isscalar(value):
        return np.array([value])
    if hasattr(value, "detach") and hasattr(value, "numpy"):
        tensor = value.detach()
        if "bfloat16" in str(getattr(tensor, "dtype", "")):
            tensor = tensor.float()
        if hasattr(tensor, "cpu"):
            tensor = tensor.cpu()
        return np.asarray(tensor.numpy())
    if hasattr(value, "asnumpy"):  # a mindspore.Tensor
        return np.asarray(value.asnumpy())
    raise TypeError(f"{_where()}SummaryWriter got a {type(value).__name__}; pass a torch tensor, a numpy array or a "
                    "Python number.")


def _scalar_float(value) -> float:
    array = to_numpy(value).squeeze()
    if array.ndim != 0:
        raise AssertionError(f"{_where()}a scalar summary needs one element; got {array.size} elements in "
                             f"{array.ndim} dimensions. Pass loss.item() or a one-element tensor.")
    return float(array)


# --- summaries (tensorboard.compat.proto.summary_pb2.Summary) -------------------------------------------------------

def scalar_summary(tag: str, value, new_style: bool = False, double_precision: bool = False):
    """A ``Summary`` with one scalar: ``simple_value`` (float32 on disk), or with ``new_style`` a ``scalars``-plugin
    tensor (``DT_FLOAT``, or ``DT_DOUBLE`` with ``double_precision``), as PyTorch's ``add_scalar``."""
    from tensorboard.compat.proto.summary_pb2 import Summary, SummaryMetadata
    from tensorboard.compat.proto.tensor_pb2 import TensorProto
    number = _scalar_float(value)
    if not new_style:
        return Summary(value=[Summary.Value(tag=tag, simple_value=number)])
    if double_precision:
        proto = TensorProto(dtype="DT_DOUBLE", double_val=[number])
    else:
        proto = TensorProto(dtype="DT_FLOAT", float_val=[number])
    meta = SummaryMetadata(plugin_data=SummaryMetadata.PluginData(plugin_name="scalars"))
    return Summary(value=[Summary.Value(tag=tag, metadata=meta, tensor=proto)])


def histogram_proto(values: np.ndarray, bins, max_bins: Optional[int] = None):
    """A ``HistogramProto`` of ``values`` (float64, any shape), as TensorBoard stores one: min, max, count, sum, sum
    of squares, and buckets given by their right edges. ``bins`` is anything ``numpy.histogram`` takes (an int, a
    rule name, or edges). Buckets past the last non-empty one are dropped, and so are those before the first
    non-empty one except the one just before it (or, when the first bucket is non-empty, an empty bucket whose right
    edge is the lowest edge), so that the lowest edge is shown. ``max_bins``: adjacent buckets are summed in groups
    of ``len(buckets) // max_bins`` when there are more than ``max_bins``.

    Raises:
        ValueError: ``values`` is empty, or no value falls within the edges.
    """
    from tensorboard.compat.proto.summary_pb2 import HistogramProto
    flat = np.asarray(values, dtype=np.float64).reshape(-1)
    if flat.size == 0:
        raise ValueError(f"{_where()}add_histogram got no values (an empty tensor).")
    counts, edges = np.histogram(flat, bins=bins)
    if max_bins is not None and len(counts) > max_bins:
        group = len(counts) // max_bins
        groups = -(-len(counts) // group)
        padded = np.zeros(groups * group, dtype=counts.dtype)
        padded[:len(counts)] = counts
        counts = padded.reshape(groups, group).sum(axis=1)
        edges = np.append(edges[:-1][::group], edges[-1])
    filled = np.flatnonzero(counts)
    if filled.size == 0:
        raise ValueError(f"{_where()}add_histogram: no value lies within the histogram's edges "
                         f"[{edges[0]}, {edges[-1]}] (values out of range, or NaN).")
    first, last = int(filled[0]), int(filled[-1])
    if first == 0:
        kept_counts = np.concatenate([[0], counts[:last + 1]])
    else:
        kept_counts = counts[first - 1:last + 1]
    kept_edges = edges[first:last + 2]
    return HistogramProto(min=flat.min(), max=flat.max(), num=flat.size, sum=flat.sum(),
                          sum_squares=float(np.dot(flat, flat)), bucket_limit=kept_edges.tolist(),
                          bucket=kept_counts.tolist())


def _grid(images: np.ndarray, columns: int = 8) -> np.ndarray:
    """N images (N, C, H, W), C 1 or 3, tiled row-major on a (3, rows*H, min(N, columns)*W) canvas of zeros; one
    channel is repeated to three (PyTorch's ``add_images`` layout)."""
    if images.shape[1] == 1:
        images = np.repeat(images, 3, axis=1)
    if images.ndim != 4 or images.shape[1] != 3:
        raise AssertionError(f"{_where()}add_images needs 1 or 3 channels; got shape {images.shape}.")
    n, _, height, width = images.shape
    cols = min(n, columns)
    rows = -(-n // cols)
    canvas = np.zeros((3, rows * height, cols * width), dtype=images.dtype)
    for index in range(n):
        r, c = divmod(index, cols)
        canvas[:, r * height:(r + 1) * height, c * width:(c + 1) * width] = images[index]
    return canvas


def to_hwc(array: np.ndarray, dataformats: str) -> np.ndarray:
    """``array`` laid out as ``dataformats`` (letters N, C, H, W; e.g. ``"CHW"``, ``"HWC"``, ``"HW"``, ``"NCHW"``)
    as an (H, W, C) image: a batch is tiled on a grid (8 columns), one channel or none becomes three gray ones."""
    fmt = dataformats.upper()
    if len(set(fmt)) != len(fmt):
        raise AssertionError(f"{_where()}dataformats {dataformats!r} names a dimension twice.")
    if array.ndim != len(fmt):
        raise AssertionError(f"{_where()}the image has {array.ndim} dimensions {tuple(array.shape)}, dataformats "
                             f"{dataformats!r} has {len(fmt)}; pass dataformats= matching the tensor.")
    if len(fmt) == 4:
        return _grid(array.transpose([fmt.index(c) for c in "NCHW"])).transpose(1, 2, 0)
    if len(fmt) == 3:
        hwc = array.transpose([fmt.index(c) for c in "HWC"])
        return np.repeat(hwc, 3, axis=2) if hwc.shape[2] == 1 else hwc
    if len(fmt) == 2:
        hw = array.transpose([fmt.index(c) for c in "HW"])
        return np.repeat(hw[:, :, None], 3, axis=2)
    raise AssertionError(f"{_where()}dataformats {dataformats!r}: use 2 to 4 of the letters N, C, H, W.")


def image_summary(tag: str, image, dataformats: str, rescale: float = 1):
    """A ``Summary`` with one PNG image. Pixels: uint8 as they are; any other dtype read as [0, 1], times 255 in
    float32, clipped to [0, 255] and truncated to uint8 (PyTorch's rule). ``colorspace`` is the channel count;
    ``height``/``width`` the array's, the PNG resized by ``rescale`` (Lanczos) when it is not 1."""
    from PIL import Image
    from tensorboard.compat.proto.summary_pb2 import Summary
    hwc = to_hwc(to_numpy(image), dataformats)
    factor = 1 if hwc.dtype == np.uint8 else 255
    pixels = np.clip(hwc.astype(np.float32) * factor, 0, 255).astype(np.uint8)
    height, width, channels = pixels.shape
    picture = Image.fromarray(pixels)
    if rescale != 1:
        picture = picture.resize((int(width * rescale), int(height * rescale)), Image.Resampling.LANCZOS)
    buffer = io.BytesIO()
    picture.save(buffer, format="PNG")
    encoded = Summary.Image(height=height, width=width, colorspace=channels, encoded_image_string=buffer.getvalue())
    return Summary(value=[Summary.Value(tag=tag, image=encoded)])


def text_summary(tag: str, text: str):
    """A ``Summary`` for TensorBoard's text plugin: tag ``<tag>/text_summary``, a 1-element ``DT_STRING`` tensor."""
    from tensorboard.compat.proto.summary_pb2 import Summary, SummaryMetadata
    from tensorboard.compat.proto.tensor_pb2 import TensorProto
    from tensorboard.compat.proto.tensor_shape_pb2 import TensorShapeProto
    from tensorboard.plugins.text.plugin_data_pb2 import TextPluginData
    meta = SummaryMetadata(plugin_data=SummaryMetadata.PluginData(
        plugin_name="text", content=TextPluginData(version=0).SerializeToString()))
    proto = TensorProto(dtype="DT_STRING", string_val=[text.encode("utf-8")],
                        tensor_shape=TensorShapeProto(dim=[TensorShapeProto.Dim(size=1)]))
    return Summary(value=[Summary.Value(tag=f"{tag}/text_summary", metadata=meta, tensor=proto)])


def _hparam_value(name: str, value):
    """(field, value, data type) of one hyperparameter: numbers (bool included, as PyTorch: ``bool`` is an ``int``)
    as ``number_value`` / FLOAT64, strings as ``string_value`` / STRING, a one-element tensor as its number."""
    if isinstance(value, (bool, int, float, np.number)):
        return "number_value", float(value), "DATA_TYPE_FLOAT64"
    if isinstance(value, str):
        return "string_value", value, "DATA_TYPE_STRING"
    if hasattr(value, "detach") or isinstance(value, np.ndarray):
        return "number_value", float(to_numpy(value).reshape(-1)[0]), "DATA_TYPE_FLOAT64"
    raise ValueError(f"{_where()}add_hparams: hparam {name!r} is a {type(value).__name__}; a value must be an int, "
                     "float, str, bool or torch.Tensor.")


def hparams_summaries(hparam_dict: dict, metric_dict: dict, domains: Optional[dict] = None):
    """The three ``Summary`` records of TensorBoard's hparams plugin (experiment, session start with the values,
    session end with STATUS_SUCCESS), in that order. ``None`` values are left out. ``domains``: for a name of
    ``hparam_dict``, the list of values it can take (each of the value's type).

    Raises:
        TypeError: a dict argument is not a dict, or a domain is not a list of the value's type.
        ValueError: a value is of another type.
    """
    from google.protobuf import struct_pb2
    from tensorboard.compat.proto.summary_pb2 import Summary, SummaryMetadata
    from tensorboard.plugins.hparams import api_pb2, metadata, plugin_data_pb2
    if not isinstance(hparam_dict, dict) or not isinstance(metric_dict, dict):
        raise TypeError(f"{_where()}add_hparams: hparam_dict and metric_dict must be dicts.")
    domains = domains or {}
    if not isinstance(domains, dict):
        raise TypeError(f"{_where()}add_hparams: hparam_domain_discrete must be a dict.")
    for name, choices in domains.items():
        if name not in hparam_dict or not isinstance(choices, list) or \
                not all(isinstance(c, type(hparam_dict[name])) for c in choices):
            raise TypeError(f"{_where()}add_hparams: hparam_domain_discrete[{name!r}] must be a list of values of "
                            f"the type of hparam_dict[{name!r}].")
    start = plugin_data_pb2.SessionStartInfo()
    infos = []
    for name, value in hparam_dict.items():
        if value is None:
            continue
        field, converted, kind = _hparam_value(name, value)
        setattr(start.hparams[name], field, converted)
        domain = None
        if name in domains and not hasattr(value, "detach"):
            domain = struct_pb2.ListValue(values=[struct_pb2.Value(**{field: c}) for c in domains[name]])
        infos.append(api_pb2.HParamInfo(name=name, type=api_pb2.DataType.Value(kind), domain_discrete=domain))
    experiment = api_pb2.Experiment(hparam_infos=infos,
                                    metric_infos=[api_pb2.MetricInfo(name=api_pb2.MetricName(tag=k))
                                                  for k in metric_dict])
    end = plugin_data_pb2.SessionEndInfo(status=api_pb2.Status.Value("STATUS_SUCCESS"))

    def record(tag, **content):
        data = plugin_data_pb2.HParamsPluginData(version=metadata.PLUGIN_DATA_VERSION, **content)
        meta = SummaryMetadata(plugin_data=SummaryMetadata.PluginData(plugin_name=metadata.PLUGIN_NAME,
                                                                      content=data.SerializeToString()))
        return Summary(value=[Summary.Value(tag=tag, metadata=meta)])
    return (record(metadata.EXPERIMENT_TAG, experiment=experiment),
            record(metadata.SESSION_START_INFO_TAG, session_start_info=start),
            record(metadata.SESSION_END_INFO_TAG, session_end_info=end))


def figure_chw(figure, close: bool = True) -> np.ndarray:
    """A matplotlib figure rendered by the Agg backend as a (3, H, W) uint8 RGB array (alpha dropped)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    canvas = FigureCanvasAgg(figure)
    canvas.draw()
    width, height = canvas.get_width_height()
    rgba = np.frombuffer(canvas.buffer_rgba(), dtype=np.uint8).reshape(height, width, 4)
    if close:
        import matplotlib.pyplot as plt
        plt.close(figure)
    return np.ascontiguousarray(rgba[:, :, :3].transpose(2, 0, 1))


# --- torch.utils.tensorboard.summary: the record builders under PyTorch's names and signatures ---------------------
# (scripts import ``hparams`` to write the hparams records into their own run: writer.file_writer.add_summary(...))

def scalar(name, tensor, collections=None, new_style=False, double_precision=False):
    """PyTorch's ``summary.scalar``: :func:`scalar_summary` (``collections`` is ignored, as in PyTorch)."""
    return scalar_summary(name, tensor, new_style, double_precision)


def histogram(name, values, bins, max_bins=None):
    """PyTorch's ``summary.histogram``: a ``Summary`` with :func:`histogram_proto` of ``values``."""
    from tensorboard.compat.proto.summary_pb2 import Summary
    return Summary(value=[Summary.Value(tag=name, histo=histogram_proto(to_numpy(values), bins, max_bins))])


def image(tag, tensor, rescale=1, dataformats="NCHW"):
    """PyTorch's ``summary.image``: :func:`image_summary` (default layout ``NCHW``, as PyTorch's)."""
    return image_summary(tag, tensor, dataformats, rescale)


def text(tag, text):
    """PyTorch's ``summary.text``: :func:`text_summary`."""
    return text_summary(tag, text)


def hparams(hparam_dict=None, metric_dict=None, hparam_domain_discrete=None):
    """PyTorch's ``summary.hparams``: the (experiment, session start, session end) records,
    :func:`hparams_summaries`."""
    return hparams_summaries(hparam_dict, metric_dict, hparam_domain_discrete)


SUMMARY_NAMES = ("scalar", "histogram", "image", "text", "hparams")


# --- writers ------------------------------------------------------------------------------------------------------

def default_log_dir(comment: str = "") -> str:
    """``runs/<Mon><DD>_<HH>-<MM>-<SS>_<hostname><comment>`` in local time, PyTorch's default ``log_dir``."""
    stamp = datetime.now().strftime("%b%d_%H-%M-%S")
    return os.path.join("runs", f"{stamp}_{socket.gethostname()}{comment}")


class FileWriter:
    """One event file in ``log_dir`` (created with the folder on construction; TensorBoard's ``EventFileWriter``
    queues up to ``max_queue`` events and flushes every ``flush_secs`` seconds from its own thread)."""

    def __init__(self, log_dir, max_queue: int = 10, flush_secs: float = 120, filename_suffix: str = ""):
        from tensorboard.summary.writer.event_file_writer import EventFileWriter
        self.event_writer = EventFileWriter(str(log_dir), max_queue, flush_secs, filename_suffix)

    def get_logdir(self) -> str:
        return self.event_writer.get_logdir()

    def add_event(self, event, step=None, walltime=None) -> None:
        """Writes ``event`` stamped with ``walltime`` (seconds since the epoch; now by default) and, when given,
        ``step`` (converted with ``int``)."""
        event.wall_time = time.time() if walltime is None else walltime
        if step is not None:
            event.step = int(step)
        self.event_writer.add_event(event)

    def add_summary(self, summary, global_step=None, walltime=None) -> None:
        from tensorboard.compat.proto.event_pb2 import Event
        self.add_event(Event(summary=summary), global_step, walltime)

    def flush(self) -> None:
        self.event_writer.flush()

    def close(self) -> None:
        self.event_writer.close()

    def reopen(self) -> None:
        self.event_writer.reopen()


_OPEN: "weakref.WeakSet[SummaryWriter]" = weakref.WeakSet()


@atexit.register
def flush_open_writers() -> None:
    """At interpreter exit, flush every writer not closed: the events still queued reach the file (PyTorch's writer
    drops them, measured: 5 ``add_scalar`` calls without ``close()`` read back as 0 events with PyTorch 2.13)."""
    for writer in list(_OPEN):
        try:
            writer.flush()
        except Exception:  # exit-time: a writer whose folder vanished must not mask the script's own exit status
            pass


def _unsupported(name: str):
    def method(self, *args, **kwargs):
        raise NotImplementedError(
            f"{_where()}SummaryWriter.{name} is not available under run.py (MindTorch on MindSpore); the scalars, "
            "histograms, images, text and hparams this writer logs are. Remove the call or guard it.")
    method.__name__ = name
    method.__doc__ = f"Not available: raises ``NotImplementedError`` naming the caller's ``file:line``."
    return method


class SummaryWriter:
    """PyTorch's ``torch.utils.tensorboard.SummaryWriter``: writes TensorBoard event files in ``log_dir``.

    Args:
        log_dir: the folder (created); default ``runs/<Mon><DD>_<HH>-<MM>-<SS>_<hostname><comment>``.
        comment: appended to the default ``log_dir`` (ignored when ``log_dir`` is given, as PyTorch).
        purge_step: when given, the first records are a file-version event and a ``SessionLog.START`` at this step,
            which makes TensorBoard hide the earlier run's events at or after it (a resumed run).
        max_queue: events held before a write; flush_secs: seconds between background flushes.
        filename_suffix: appended to every event file name.

    Steps are ints (``global_step`` ``None`` leaves the record's step 0); ``walltime`` is seconds since the epoch.

    Raises (from the ``add_*`` calls, each naming the script's ``file:line``): ``AssertionError`` for a shape that does
    not fit (a scalar of several elements, an image whose rank differs from ``dataformats``; PyTorch's type),
    ``ValueError`` for an empty histogram or an hparam of another type, ``TypeError`` for a value that is no tensor,
    array or number, ``NotImplementedError`` for the calls listed in the module docstring.
    """

    def __init__(self, log_dir=None, comment: str = "", purge_step=None, max_queue: int = 10,
                 flush_secs: float = 120, filename_suffix: str = ""):
        self.log_dir = log_dir if log_dir else default_log_dir(comment)
        self.purge_step = purge_step
        self.max_queue = max_queue
        self.flush_secs = flush_secs
        self.filename_suffix = filename_suffix
        self.file_writer: Optional[FileWriter] = None
        self.all_writers: Optional[Dict[str, FileWriter]] = None
        self.default_bins = tensorflow_bins().tolist()
        self._get_file_writer()
        _OPEN.add(self)

    def _get_file_writer(self) -> FileWriter:
        """The writer of ``log_dir``'s own event file, opened anew (a new file) after :meth:`close`."""
        if self.file_writer is None or self.all_writers is None:
            writer = FileWriter(self.log_dir, self.max_queue, self.flush_secs, self.filename_suffix)
            self.file_writer = writer
            self.all_writers = {writer.get_logdir(): writer}
            if self.purge_step is not None:
                from tensorboard.compat.proto.event_pb2 import Event, SessionLog
                writer.add_event(Event(step=self.purge_step, file_version="brain.Event:2"))
                writer.add_event(Event(step=self.purge_step, session_log=SessionLog(status=SessionLog.START)))
                self.purge_step = None
        return self.file_writer

    def get_logdir(self) -> str:
        return self.log_dir

    def add_scalar(self, tag, scalar_value, global_step=None, walltime=None, new_style=False,
                   double_precision=False) -> None:
        """One scalar (a number, or a one-element tensor or array) under ``tag``."""
        self._get_file_writer().add_summary(scalar_summary(tag, scalar_value, new_style, double_precision),
                                            global_step, walltime)

    def add_scalars(self, main_tag, tag_scalar_dict, global_step=None, walltime=None) -> None:
        """Several scalars on one chart: each ``tag`` goes, under the tag ``main_tag``, to its own event file in
        ``<log_dir>/<main_tag with / as _>_<tag>`` (a run of its own for TensorBoard), all with one wall time."""
        walltime = time.time() if walltime is None else walltime
        base = self._get_file_writer().get_logdir()
        for tag, value in tag_scalar_dict.items():
            folder = f"{base}/{main_tag.replace('/', '_')}_{tag}"
            writer = self.all_writers.get(folder)
            if writer is None:
                writer = FileWriter(folder, self.max_queue, self.flush_secs, self.filename_suffix)
                self.all_writers[folder] = writer
            writer.add_summary(scalar_summary(main_tag, value), global_step, walltime)

    def add_histogram(self, tag, values, global_step=None, bins="tensorflow", walltime=None, max_bins=None) -> None:
        """A histogram of ``values`` (any shape). ``bins``: ``"tensorflow"`` (TensorBoard's default exponential
        edges, :func:`tensorflow_bins`) or anything ``numpy.histogram`` takes."""
        if isinstance(bins, str) and bins == "tensorflow":
            bins = self.default_bins
        from tensorboard.compat.proto.summary_pb2 import Summary
        hist = histogram_proto(to_numpy(values), bins, max_bins)
        self._get_file_writer().add_summary(Summary(value=[Summary.Value(tag=tag, histo=hist)]),
                                            global_step, walltime)

    def add_histogram_raw(self, tag, min, max, num, sum, sum_squares, bucket_limits, bucket_counts,
                          global_step=None, walltime=None) -> None:
        """A histogram given by its statistics and buckets (``bucket_limits``: right edges, as many as
        ``bucket_counts``)."""
        from tensorboard.compat.proto.summary_pb2 import HistogramProto, Summary
        if len(bucket_limits) != len(bucket_counts):
            raise ValueError(f"{_where()}add_histogram_raw: bucket_limits and bucket_counts differ in length.")
        hist = HistogramProto(min=min, max=max, num=num, sum=sum, sum_squares=sum_squares,
                              bucket_limit=list(bucket_limits), bucket=list(bucket_counts))
        self._get_file_writer().add_summary(Summary(value=[Summary.Value(tag=tag, histo=hist)]),
                                            global_step, walltime)

    def add_image(self, tag, img_tensor, global_step=None, walltime=None, dataformats="CHW") -> None:
        """One image: ``dataformats`` ``"CHW"`` (default), ``"HWC"``, ``"HW"``...; C is 1, 3 or 4; uint8 in
        [0, 255] or floats in [0, 1] (clipped)."""
        self._get_file_writer().add_summary(image_summary(tag, img_tensor, dataformats), global_step, walltime)

    def add_images(self, tag, img_tensor, global_step=None, walltime=None, dataformats="NCHW") -> None:
        """A batch of images tiled on one grid of 8 columns (``dataformats`` with N, default ``"NCHW"``)."""
        self._get_file_writer().add_summary(image_summary(tag, img_tensor, dataformats), global_step, walltime)

    def add_figure(self, tag, figure, global_step=None, close=True, walltime=None) -> None:
        """A matplotlib figure (or a list of them, tiled as :meth:`add_images`) rendered to an RGB image."""
        if isinstance(figure, list):
            self.add_image(tag, np.stack([figure_chw(f, close) for f in figure]), global_step, walltime, "NCHW")
        else:
            self.add_image(tag, figure_chw(figure, close), global_step, walltime, "CHW")

    def add_text(self, tag, text_string, global_step=None, walltime=None) -> None:
        """Text (markdown) for TensorBoard's text tab, under the tag ``<tag>/text_summary``."""
        self._get_file_writer().add_summary(text_summary(tag, text_string), global_step, walltime)

    def add_hparams(self, hparam_dict, metric_dict, hparam_domain_discrete=None, run_name=None,
                    global_step=None) -> None:
        """Hyperparameters and their metrics for TensorBoard's HParams tab, written to ``<log_dir>/<run_name>``
        (default: ``str(time.time())``) with each metric also as a scalar there."""
        if type(hparam_dict) is not dict or type(metric_dict) is not dict:
            raise TypeError(f"{_where()}add_hparams: hparam_dict and metric_dict must be dicts.")
        records = hparams_summaries(hparam_dict, metric_dict, hparam_domain_discrete)
        folder = os.path.join(self._get_file_writer().get_logdir(), run_name or str(time.time()))
        with SummaryWriter(log_dir=folder) as run:
            for summary in records:
                run.file_writer.add_summary(summary, global_step)
            for name, value in metric_dict.items():
                run.add_scalar(name, value, global_step)

    def add_graph(self, model, input_to_model=None, verbose=False, use_strict_trace=True) -> None:
        """Not available: warns once per calling line and writes nothing (no trace of a MindTorch model into
        TensorBoard's graph format)."""
        warn_user("SummaryWriter.add_graph writes nothing under run.py: the model graph cannot be traced into "
                  "TensorBoard's format on MindSpore. Scalars, histograms, images, text and hparams are logged.")

    add_embedding = _unsupported("add_embedding")
    add_video = _unsupported("add_video")
    add_audio = _unsupported("add_audio")
    add_pr_curve = _unsupported("add_pr_curve")
    add_pr_curve_raw = _unsupported("add_pr_curve_raw")
    add_mesh = _unsupported("add_mesh")
    add_custom_scalars = _unsupported("add_custom_scalars")
    add_custom_scalars_multilinechart = _unsupported("add_custom_scalars_multilinechart")
    add_custom_scalars_marginchart = _unsupported("add_custom_scalars_marginchart")
    add_onnx_graph = _unsupported("add_onnx_graph")
    add_image_with_boxes = _unsupported("add_image_with_boxes")

    def flush(self) -> None:
        """Writes every pending event of every event file of this writer to disk."""
        for writer in (self.all_writers or {}).values():
            writer.flush()

    def close(self) -> None:
        """Flushes and closes every event file; a later ``add_*`` opens a new file. A second close does nothing."""
        if self.all_writers is None:
            return
        for writer in self.all_writers.values():
            writer.flush()
            writer.close()
        self.file_writer = self.all_writers = None

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc_value, traceback):
        self.close()
