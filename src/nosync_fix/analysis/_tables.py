"""Hand-kept facts about PyTorch, numpy and Python that the analysis relies on.

The generated tables in ``_torch_api`` say what torch's schemas say; this file
holds what no schema says: which calls read a device value back to the host,
which consume random numbers, which names conventionally hold configuration.
"""

from __future__ import annotations

from ._torch_api import (
    NN_FUNCTIONAL,
    NN_MODULE_CLASSES,
    TENSOR_METHODS_RETURNING_HOST,
    TORCH_HOST_FUNCTIONS,
    TORCH_TENSOR_FUNCTIONS,
)

__all__ = [
    "NN_FUNCTIONAL",
    "NN_MODULE_CLASSES",
    "TORCH_HOST_FUNCTIONS",
    "TORCH_TENSOR_FUNCTIONS",
]

#: Tensor attributes that are host values (metadata; reading them never syncs).
TENSOR_HOST_ATTRIBUTES = frozenset({
    "shape", "dtype", "device", "ndim", "is_cuda", "is_cpu", "is_mps", "is_xpu", "is_meta",
    "requires_grad", "layout", "is_leaf", "names", "itemsize", "nbytes", "is_sparse",
    "is_quantized", "is_mkldnn", "is_nested", "grad_fn", "output_nr", "_version", "is_sparse_csr",
    "is_complex", "is_floating_point",
})

#: Tensor attributes that are tensors themselves.
TENSOR_TENSOR_ATTRIBUTES = frozenset({"T", "mT", "H", "mH", "grad", "data", "real", "imag"})

#: Tensor methods that return host values (on top of what the schemas say).
TENSOR_HOST_METHODS = frozenset(TENSOR_METHODS_RETURNING_HOST) | frozenset({
    "tolist", "numpy", "data_ptr", "ndimension", "nelement", "untyped_storage", "storage",
    "register_hook", "register_post_accumulate_grad_hook", "backward", "__len__", "__bool__",
    "__float__", "__int__", "__index__", "__format__", "dim_order", "has_names",
    "is_shared", "is_pinned", "share_memory_", "get_device", "element_size",
})

#: Methods that read a device value into a Python object: each one is a sync.
SCALAR_READ_METHODS = frozenset({"item"})
HOST_TRANSFER_METHODS = frozenset({"tolist", "numpy", "cpu"})
#: Every method call that reads (or copies) a tensor to the host.
READ_METHODS = SCALAR_READ_METHODS | HOST_TRANSFER_METHODS

#: Builtins that read a tensor into a Python scalar when given one.
SCALAR_READ_BUILTINS = frozenset({"float", "int", "bool", "complex"})

#: Methods whose use on a name shows that the name holds a tensor.
STRONG_TENSOR_EVIDENCE = frozenset({
    "backward", "detach", "detach_", "requires_grad_", "retain_grad", "register_hook",
})
#: ``torch.<name>`` functions whose first argument must be a tensor (never a list, a
#: number or an array): passing a name to one of them shows the name holds a tensor.
TENSOR_ONLY_FUNCTIONS = frozenset({
    "sigmoid", "softmax", "log_softmax", "relu", "tanh", "exp", "log", "abs", "sqrt",
    "mean", "sum", "max", "min", "argmax", "argmin", "isnan", "isinf", "isfinite", "clamp",
    "matmul", "mm", "bmm", "topk", "sort", "argsort", "flatten", "squeeze", "unsqueeze",
    "transpose", "permute", "reshape", "equal", "allclose", "masked_select", "nonzero",
    "any", "all", "zeros_like", "ones_like", "empty_like", "rand_like", "randn_like",
    "full_like", "clone", "detach", "count_nonzero", "cumsum", "norm", "std", "var",
    "logsumexp", "amax", "amin", "square", "neg", "sign", "round", "floor", "ceil",
})
#: ``torch.nn.functional`` functions (besides ``*_loss``) whose first two arguments are tensors.
FUNCTIONAL_TWO_TENSORS = frozenset({
    "cross_entropy", "binary_cross_entropy", "binary_cross_entropy_with_logits", "kl_div",
    "cosine_similarity", "pairwise_distance", "linear", "bilinear", "embedding", "conv1d",
    "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d",
})
#: Methods that run a backward pass of the tensor they are given (``accelerator.backward(
#: loss)``, Lightning's ``self.manual_backward(loss)``) or called on (``loss.backward()``).
BACKWARD_METHODS = frozenset({"backward", "manual_backward"})
#: Builtins that make text of their first argument (of a tensor: its values are read).
TEXT_BUILTINS = frozenset({"str", "repr", "format"})
#: Builtins that compare (``max``, ``min``: each comparison tested for truth), test
#: (``any``, ``all``: each element of what they iterate) or count (``range``:
#: ``n.__index__()``) their arguments on the host.
COMPARING_BUILTINS = frozenset({"max", "min", "range", "any", "all"})
#: Methods that tensors and modules share: evidence only when the result is used.
WEAK_TENSOR_EVIDENCE = frozenset({"to", "cuda", "cpu"})
#: Methods only nn.Module (or optimizers) have: counter-evidence for a tensor.
MODULE_ONLY_METHODS = frozenset({
    "parameters", "named_parameters", "buffers", "named_buffers", "children",
    "named_children", "modules", "named_modules", "state_dict", "load_state_dict", "train",
    "eval", "zero_grad", "apply", "register_forward_hook", "register_forward_pre_hook",
    "register_full_backward_hook", "add_module", "register_module", "register_buffer",
    "register_parameter", "forward", "step",
})
#: Module methods that return the module itself.
MODULE_RETURNING_SELF = frozenset({
    "to", "cuda", "cpu", "train", "eval", "float", "half", "double", "bfloat16",
    "requires_grad_", "apply", "share_memory", "to_empty", "xpu", "mps", "type",
})

#: ``torch`` functions that draw random numbers.
TORCH_RNG_FUNCTIONS = frozenset({
    "rand", "rand_like", "randn", "randn_like", "randint", "randint_like", "randperm",
    "normal", "bernoulli", "multinomial", "poisson", "dropout", "alpha_dropout",
    "feature_alpha_dropout", "feature_dropout", "native_dropout", "rrelu", "rrelu_",
    "dropout_", "alpha_dropout_", "feature_dropout_", "feature_alpha_dropout_",
    "binomial", "_standard_gamma", "_sample_dirichlet",
})
#: ``torch.nn.functional`` functions that draw random numbers.
FUNCTIONAL_RNG = frozenset({
    "dropout", "dropout1d", "dropout2d", "dropout3d", "alpha_dropout", "feature_alpha_dropout",
    "gumbel_softmax", "rrelu", "rrelu_", "fractional_max_pool2d", "fractional_max_pool3d",
    "fractional_max_pool2d_with_indices", "fractional_max_pool3d_with_indices",
})
#: Module classes whose forward draws random numbers.
RNG_MODULE_CLASSES = frozenset({
    "Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout", "FeatureAlphaDropout",
    "RReLU",
})
#: Tensor methods that draw random numbers (all in place).
TENSOR_RNG_METHODS = frozenset({
    "uniform_", "normal_", "bernoulli_", "bernoulli", "random_", "exponential_", "geometric_",
    "cauchy_", "log_normal_", "multinomial",
})

#: Python modules whose functions are pure host computations.
PURE_HOST_MODULES = frozenset({"math", "cmath", "operator", "statistics"})
#: Python modules whose values are host values (not tensors).
HOST_MODULES = PURE_HOST_MODULES | frozenset({
    "time", "os", "sys", "json", "re", "datetime", "random", "pathlib", "argparse",
    "logging", "itertools", "functools", "collections", "string", "shutil", "glob",
    "copy", "pickle", "csv", "subprocess", "warnings", "typing", "dataclasses", "enum",
    "decimal", "fractions", "socket", "platform", "uuid", "hashlib", "yaml", "tqdm",
})
#: Libraries whose arrays and scalars have ``.item()`` / ``.tolist()`` too.
ARRAY_LIBRARIES = frozenset({
    "numpy", "pandas", "scipy", "sklearn", "jax", "jaxlib", "cupy", "tensorflow", "mxnet",
    "numba", "xarray", "polars", "pyarrow",
})
#: Other frameworks with device arrays: beside one, torch imported only for TensorBoard's
#: writer does not make a module torch code (``analysis.tensors``).
OTHER_FRAMEWORKS = frozenset({"jax", "flax", "tensorflow", "mxnet"})
#: Libraries whose presence implies a torch code base.
TORCH_LIBRARIES = frozenset({
    "torch", "torchvision", "torchaudio", "torchtext", "lightning", "pytorch_lightning",
    "timm", "transformers", "accelerate", "torchmetrics", "torchtune", "detectron2",
    "fairseq", "deepspeed", "apex",
})

#: Builtins whose result is a host value whatever their argument, without reading it
#: (``bool``/``int``/``float``/``str`` read a tensor they are given).
HOST_RESULT_BUILTINS = frozenset({"len", "isinstance", "issubclass", "hasattr", "callable",
                                  "id", "type"})
#: Builtins whose results are host values whatever their arguments.
HOST_BUILTINS = frozenset({
    "len", "int", "float", "bool", "str", "repr", "format", "isinstance", "issubclass",
    "hasattr", "id", "hash", "type", "print", "range", "enumerate", "zip", "ord", "chr",
    "hex", "oct", "bin", "callable", "open", "input", "divmod", "all", "any", "ascii",
    "reversed", "iter", "vars", "dir", "globals", "locals", "complex",
})
#: Builtins that return containers.
CONTAINER_BUILTINS = frozenset({"list", "tuple", "dict", "set", "frozenset", "sorted"})
#: Builtins that return a tensor when one of their arguments is a tensor.
TENSOR_PRESERVING_BUILTINS = frozenset({"abs", "round", "min", "max", "pow"})
#: Builtins without side effects.
PURE_BUILTINS = HOST_BUILTINS - {"print", "open", "input", "globals", "locals", "vars", "iter"}

#: Receivers that conventionally hold configuration: ``args.lr``, ``cfg.train.steps``.
#: (``opt`` and ``params`` are left out: they name optimizers and parameter lists as often.)
CONFIG_NAMES = frozenset({
    "args", "cfg", "config", "conf", "configs", "hparams", "hp", "options", "settings",
    "flags", "FLAGS", "hyperparams", "hyper_params", "training_args", "train_args",
    "model_args", "data_args", "cli_args", "arguments",
})

#: Function names that run once per step: hot paths whatever their loops.
STEP_FUNCTION_SUFFIX = "_step"
#: Function names that never run on a hot path (host-side set-up and loader code).
COLD_FUNCTION_NAMES = frozenset({"__init__", "__post_init__", "__new__", "setup", "prepare_data"})

#: Methods of Dataset/Sampler classes: run in loader workers on the host.
DATASET_METHODS = frozenset({"__getitem__", "__len__", "__iter__", "__getitems__"})
#: What the name of a collator class holds (a DataLoader's ``collate_fn`` object, Hugging
#: Face's ``DataCollator*``, torchtitan's ``MultiModalCollator``): all of its methods are
#: host-side loader code, like the collate functions.
COLLATOR = "Collator"
#: Base classes that make a class host-side loader code.
DATASET_BASES = frozenset({
    "torch.utils.data.Dataset", "torch.utils.data.IterableDataset",
    "torch.utils.data.dataset.Dataset", "torch.utils.data.dataset.IterableDataset",
    "torch.utils.data.Sampler", "torch.utils.data.sampler.Sampler",
    "torch.utils.data.BatchSampler", "torch.utils.data.DistributedSampler",
})
#: Base classes that make a class an nn.Module.
MODULE_BASES = frozenset({
    "torch.nn.Module", "torch.nn.modules.module.Module", "lightning.LightningModule",
    "lightning.pytorch.LightningModule", "pytorch_lightning.LightningModule",
    "pytorch_lightning.core.LightningModule", "lightning.pytorch.core.LightningModule",
    "torch.nn.Sequential", "torch.nn.ModuleList", "torch.nn.ModuleDict",
})
#: Annotations that name a tensor type.
TENSOR_ANNOTATIONS = frozenset({
    "torch.Tensor", "torch.FloatTensor", "torch.LongTensor", "torch.BoolTensor",
    "torch.DoubleTensor", "torch.HalfTensor", "torch.IntTensor", "torch.ByteTensor",
    "torch.cuda.FloatTensor", "torch.cuda.LongTensor", "torch.nn.Parameter",
    "torch.nn.parameter.Parameter",
})
#: torch namespaces whose functions return tensors.
TORCH_TENSOR_NAMESPACES = (
    "torch.nn.functional.", "torch.linalg.", "torch.fft.", "torch.special.", "torch.nn.init.",
    "torch.masked.", "torch.sparse.", "torch.nested.",
)
#: Functions in those namespaces that return host values: the gain (a float) and fans (ints)
#: that weight initialisation computes (``fan_in, _ = init._calculate_fan_in_and_fan_out(w)``
#: then ``bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0``).
TORCH_NAMESPACE_HOST_FUNCTIONS = frozenset({
    "torch.nn.init.calculate_gain", "torch.nn.init._calculate_fan_in_and_fan_out",
    "torch.nn.init._calculate_correct_fan",
})
#: torch names that are (or make) tensors.
TORCH_TENSOR_CLASSES = frozenset({
    "torch.Tensor", "torch.FloatTensor", "torch.LongTensor", "torch.BoolTensor",
    "torch.DoubleTensor", "torch.HalfTensor", "torch.IntTensor", "torch.ByteTensor",
    "torch.nn.Parameter", "torch.nn.parameter.Parameter", "torch.nn.Buffer",
    "torch.nn.utils.clip_grad_norm_", "torch.nn.utils.clip_grad.clip_grad_norm_",
    "torch.nn.utils.clip_grad_norm", "torch.nn.utils.get_total_norm",
    "torch.nn.utils.parameters_to_vector", "torch.autograd.grad",
})
#: Wrappers that return the module they are given.
MODULE_WRAPPERS = frozenset({
    "torch.nn.parallel.DistributedDataParallel", "torch.nn.DataParallel",
    "torch.nn.parallel.DataParallel", "torch.compile",
    "torch.distributed.fsdp.FullyShardedDataParallel",
})
#: Tensor methods that return metadata (host values).
METADATA_METHODS = frozenset({
    "size", "dim", "numel", "nelement", "ndimension", "stride", "element_size",
    "is_contiguous", "is_floating_point", "is_complex", "get_device", "data_ptr",
    "storage_offset",
})

#: The standard logger's level methods (and the ``logging`` functions of the same names).
LOGGING_METHODS = frozenset({
    "debug", "info", "warning", "error", "critical", "fatal", "exception", "log",
})

#: TensorBoard's ``SummaryWriter`` methods that take numbers; handed a tensor, they read
#: it at once (``make_np``: a copy to the host).
SCALAR_WRITER_METHODS = frozenset({"add_scalar", "add_scalars"})

#: Python and numpy functions of one number, and the torch function that does the same
#: (``math.exp(t)`` reads a tensor ``t`` with ``__float__``).
HOST_MATH_FUNCTIONS = {
    "exp": "exp", "log": "log", "log2": "log2", "log10": "log10", "log1p": "log1p",
    "expm1": "expm1", "sqrt": "sqrt", "sin": "sin", "cos": "cos", "tan": "tan", "tanh": "tanh",
    "atan": "atan", "arctan": "atan", "fabs": "abs", "abs": "abs", "erf": "erf",
    "erfc": "erfc", "lgamma": "lgamma", "exp2": "exp2", "sinh": "sinh", "cosh": "cosh",
}
HOST_MATH_LIBRARIES = ("math", "numpy")


def is_test_file_name(filename: str) -> bool:
    """pytest's test files (``test_*.py``, ``*_test.py``) and ``conftest.py``: test code,
    where even a model's ``training_step`` runs to check behaviour, not to train."""
    name = filename.replace("\\", "/").rsplit("/", 1)[-1]
    return name == "conftest.py" or (name.endswith(".py") and (
        name.startswith("test_") or name.endswith("_test.py")))


#: Methods that register a callback for a named event (minGPT's ``Trainer.set_callback``).
CALLBACK_REGISTRATIONS = frozenset({"set_callback", "add_callback", "register_callback"})


def is_per_batch_event(event: str) -> bool:
    """``on_batch_end``, ``on_train_batch_start``, ``on_step_end``, ``on_iteration``: an
    event a trainer fires once per step (``on_epoch_end``, ``on_train_end`` are not)."""
    words = event.lower().replace("-", "_").split("_")
    return "epoch" not in words and any(
        w in ("batch", "step", "iter", "iteration", "iters") for w in words)


def is_cold_function_name(name: str) -> bool:
    """Set-up, loader and test functions, which never run on a hot path.

    ``test_*`` functions are tests (pytest's convention): their reads and asserts are
    what the test checks, and turning an ``assert`` into ``torch._assert_async`` would
    weaken it. ``test_step`` (Lightning's hook) is a step, and hot.
    """
    if name in COLD_FUNCTION_NAMES or "collate" in name or name == "worker_init_fn":
        return True
    return name.startswith("test_") and not name.endswith(STEP_FUNCTION_SUFFIX)


# -- dtypes ------------------------------------------------------------------------------------

#: Methods whose result has the dtype family of their receiver.
SAME_DTYPE_FAMILY_METHODS = frozenset({
    "detach", "clone", "abs", "neg", "max", "min", "amax", "amin", "squeeze", "unsqueeze",
    "view", "reshape", "flatten", "contiguous", "cpu", "cuda", "t", "transpose", "permute",
    "median", "mode", "cummax", "cummin", "flip", "roll", "relu", "clamp", "clip", "sort",
    "topk", "kthvalue", "nan_to_num", "square",
})
#: Methods (and ``torch`` functions of the same names) whose result is boolean.
BOOL_METHODS = frozenset({
    "eq", "ne", "lt", "le", "gt", "ge", "isnan", "isinf", "isfinite", "any", "all",
    "logical_and", "logical_or", "logical_not", "logical_xor", "bool", "isclose",
    "isneginf", "isposinf", "signbit",
})
#: torch's dtypes, as they are spelled (``t.to(torch.long)`` keeps ``t``'s device).
TORCH_DTYPES = frozenset(f"torch.{name}" for name in (
    "float", "float32", "double", "float64", "half", "float16", "bfloat16", "long", "int64",
    "int", "int32", "short", "int16", "int8", "uint8", "bool", "complex64", "complex128",
    "cfloat", "cdouble", "float8_e4m3fn", "float8_e5m2",
))
#: torch factories that copy their data (``torch.Tensor(metrics)``, the legacy typed
#: constructors): a CPU tensor made from anything but a tensor, whose device they keep.
DATA_FACTORIES = frozenset({
    "torch.tensor", "torch.as_tensor", "torch.Tensor", "torch.FloatTensor",
    "torch.DoubleTensor", "torch.HalfTensor", "torch.BFloat16Tensor", "torch.LongTensor",
    "torch.IntTensor", "torch.ShortTensor", "torch.CharTensor", "torch.ByteTensor",
    "torch.BoolTensor",
})
#: torch factories that make a CPU tensor without ``device=`` (or with ``device="cpu"``);
#: the random ones draw from the CPU generator (a ``generator=`` of another device is an
#: error without ``device=``).
CPU_FACTORIES = frozenset({
    "torch.zeros", "torch.ones", "torch.empty", "torch.full", "torch.arange",
    "torch.linspace", "torch.logspace", "torch.eye", "torch.from_numpy", "torch.rand",
    "torch.randn", "torch.randint", "torch.randperm",
}) | DATA_FACTORIES
#: Methods whose result stays where the receiver is (besides SAME_DEVICE_METHODS).
KEEPS_DEVICE_METHODS = frozenset({
    "sum", "mean", "max", "min", "amax", "amin", "any", "all", "abs", "prod", "norm", "eq",
    "ne", "gt", "lt", "ge", "le", "isnan", "isinf", "isfinite", "numel", "argmax", "argmin",
    "logical_not", "bool", "nonzero", "std", "var", "count_nonzero",
})
#: Methods of a Hugging Face tokenizer (or processor) that make tensors when called with
#: ``return_tensors="pt"``: CPU tensors.
TOKENIZER_METHODS = frozenset({"encode", "encode_plus", "batch_encode_plus", "__call__",
                               "apply_chat_template", "pad"})
#: Methods whose result lives where their receiver does.
SAME_DEVICE_METHODS = frozenset({
    "split", "unbind", "chunk", "view", "reshape", "flatten", "float", "double", "long",
    "int", "half", "detach", "clone", "contiguous", "squeeze", "unsqueeze", "t", "round",
})
#: torch functions of one tensor whose result lives where it does (the tensor methods of
#: the same names, and elementwise functions): ``torch.sigmoid(t)``, ``torch.sum(t, 0)``.
KEEPS_DEVICE_FUNCTIONS = frozenset(
    f"torch.{name}" for name in KEEPS_DEVICE_METHODS | SAME_DEVICE_METHODS | {
        "sigmoid", "exp", "log", "tanh", "sqrt", "softmax", "log_softmax", "relu"}
) | frozenset({"torch.nn.functional.softmax", "torch.nn.functional.log_softmax",
               "torch.nn.functional.sigmoid", "torch.nn.functional.relu"})
