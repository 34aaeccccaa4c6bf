"""Silent host reads: does every line that reads the device on a hot path get a finding?

    python benchmarks/silent_reads.py --mirror /work/.mirror            # examples + public
    python benchmarks/silent_reads.py --mirror /work/.mirror --only mnist --verbose
    python benchmarks/silent_reads.py --examples-only

Each script runs once, to its end, under the host-read counter of
:mod:`nosync_fix.verify.syncs` (eager, on the CPU, where every read of a tensor is
counted: the reads that would be syncs on an accelerator), with the read's site taken as
the innermost line of the script's own files on the stack. The same files are then checked
statically with the default settings (every rule, NSY906 included). A line *reads on a hot
path* when the counter saw a read there and the analysis calls the line hot; it is
*covered* when a finding starts in the statement that holds the line (for a compound
statement, its header: a finding on an ``if`` covers its test, not its body). The script
prints, per program and in total, the lines reading on hot paths, those with a finding,
and the silent ones with their code and the kinds of read seen; exit status 1 when any
line is silent.

A line without a finding is **not a device read**, and counted as such (its own category,
listed line by line as ``host`` or ``library`` and totalled, never dropped), only when
the analysis proves it: every tensor it reads was made on the host (``torch.zeros(n)``
without a device, ``.cpu()``, what is cut or iterated from those, and values returned
through a local helper, e.g. a dict of such tensors; see ``_exempt`` and
``nosync_fix.rules._host.certainly_on_host``), or the reads happen only inside torch
library code the line calls (an LBFGS step). On the CPU such reads are counted, but an
accelerator would not wait for them. A condition is never proven this way.

The public scripts are not part of this repository: each is read from a local mirror of
its repository (``--mirror``: folders ``owner+name/repo``, bare git repositories, as the
session's fetch tool leaves them) at a pinned commit, copied into a temporary folder and
patched there (the recipes below): synthetic data instead of downloads, fewer steps and
smaller models, stub modules for packages the dev environment lacks (torchvision's
datasets and transforms, matplotlib, gymnasium). The patches change what is loaded and how
long it runs, never the training code whose reads are counted.
"""

from __future__ import annotations

import argparse
import json
import linecache
import os
import re
import runpy
import subprocess
import sys
import tempfile
import textwrap
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

#: The commits measured (the mirrors' heads on 2026-12-04).
COMMITS = {
    "pytorch/examples": "77f55b912142e11fcfdf5b530231fb9c52f181e8",
    "karpathy/nanoGPT": "3adf61e154c3fe3fca428ad6bc3818b27a3b8291",
    "karpathy/minGPT": "37baab71b9abea1b76ab957409a1cc2fbfba8a26",
}


@dataclass
class Program:
    """One script to run: where its files come from, how to patch and start it."""

    name: str
    #: "owner/name" of the mirrored repository, or "" for this repository's examples/.
    repo: str
    #: The files to copy, relative to the repository root; the first one is run.
    files: tuple[str, ...]
    argv: tuple[str, ...] = ()
    #: (file, old text, new text): each old text must occur in the file.
    patches: tuple[tuple[str, str, str], ...] = ()
    #: Python run in the temporary folder before the script (synthetic data files).
    setup: str = ""
    #: Stub packages to put on the path ("torchvision", "matplotlib", "gymnasium").
    stubs: tuple[str, ...] = ()
    timeout: int = 300


# -- stub modules for packages the dev environment lacks -------------------------------------

_STUBS: dict[str, dict[str, str]] = {
    "torchvision": {
        "__init__.py": "from . import datasets, models, transforms, utils  # noqa: F401\n",
        "models.py": textwrap.dedent("""\
            from torch import nn


            class _TinyResNet(nn.Module):
                # The children resnet18 has, with one small block for the four stages.
                def __init__(self, num_classes=1000):
                    super().__init__()
                    self.conv1 = nn.Conv2d(3, 64, 7, stride=2, padding=3, bias=False)
                    self.bn1 = nn.BatchNorm2d(64)
                    self.relu = nn.ReLU()
                    self.layer4 = nn.Conv2d(64, 512, 3, stride=2, padding=1)
                    self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
                    self.fc = nn.Linear(512, num_classes)

                def forward(self, x):
                    x = self.avgpool(self.layer4(self.relu(self.bn1(self.conv1(x)))))
                    return self.fc(x.flatten(1))


            def resnet18(weights=None, **kwargs):
                return _TinyResNet(**kwargs)
            """),
        "utils.py": textwrap.dedent("""\
            def save_image(*args, **kwargs):
                pass


            def make_grid(tensor, *args, **kwargs):
                return tensor
            """),
        "transforms.py": textwrap.dedent("""\
            import torch


            class Compose:
                def __init__(self, transforms):
                    self.transforms = transforms

                def __call__(self, x):
                    for t in self.transforms:
                        x = t(x)
                    return x


            class ToTensor:
                def __call__(self, x):
                    return x


            class Normalize:
                def __init__(self, mean, std):
                    self.mean = torch.tensor(mean).view(-1, 1, 1)
                    self.std = torch.tensor(std).view(-1, 1, 1)

                def __call__(self, x):
                    return (x - self.mean) / self.std


            class Lambda:
                def __init__(self, fn):
                    self.fn = fn

                def __call__(self, x):
                    return self.fn(x)


            class _Identity:
                def __init__(self, *args, **kwargs):
                    self.args = args

                def __call__(self, x):
                    return x


            class Resize(_Identity):
                pass


            class CenterCrop(_Identity):
                pass


            class RandomCrop(_Identity):
                pass


            class RandomHorizontalFlip(_Identity):
                pass


            class Grayscale(_Identity):
                pass
            """),
        "datasets.py": textwrap.dedent("""\
            import os

            import torch
            from torch.utils.data import Dataset

            SAMPLES = int(os.environ.get("SILENT_READS_SAMPLES", "256"))


            class _Synthetic(Dataset):
                shape = (3, 64, 64)
                classes = 10

                def __init__(self, root=None, train=True, download=False, transform=None,
                             target_transform=None, **kwargs):
                    n = SAMPLES if train else SAMPLES // 4
                    size = _size_of(transform)
                    shape = (self.shape[0], size, size) if size else self.shape
                    g = torch.Generator().manual_seed(0 if train else 1)
                    self.data = (torch.rand((n, *shape[1:]) if shape[0] == 1 else (n, *shape),
                                            generator=g) * 255).to(torch.uint8)
                    self.targets = torch.randint(0, self.classes, (n,), generator=g)
                    self._labels = self.targets.tolist()  # no read per item
                    self.shape = shape
                    self.transform = transform
                    self.target_transform = target_transform

                def __len__(self):
                    return len(self.data)

                def __getitem__(self, index):
                    x = self.data[index].float().div(255).view(self.shape)
                    y = self._labels[index]
                    if self.transform is not None:
                        x = self.transform(x)
                    if self.target_transform is not None:
                        y = self.target_transform(y)
                    return x, y


            def _size_of(transform):
                for t in getattr(transform, "transforms", [transform]):
                    if type(t).__name__ in ("Resize", "CenterCrop") and t.args:
                        size = t.args[0]
                        return size if isinstance(size, int) else size[0]
                return None


            class MNIST(_Synthetic):
                shape = (1, 28, 28)


            class FashionMNIST(MNIST):
                pass


            class CIFAR10(_Synthetic):
                shape = (3, 32, 32)


            class ImageFolder(_Synthetic):
                pass


            class LSUN(_Synthetic):
                pass


            class FakeData(_Synthetic):
                def __init__(self, size=None, image_size=(3, 224, 224), num_classes=10,
                             transform=None, **kwargs):
                    self.shape = tuple(image_size)
                    super().__init__(transform=transform)
            """),
    },
    "matplotlib": {
        "__init__.py": "def use(*args, **kwargs):\n    pass\n",
        "pyplot.py": "def __getattr__(name):\n    return lambda *args, **kwargs: None\n",
    },
    "gymnasium": {
        "__init__.py": textwrap.dedent("""\
            import numpy as np


            class _Spec:
                reward_threshold = 475.0


            class _CartPole:
                spec = _Spec()

                def __init__(self):
                    self.rng = np.random.default_rng(0)
                    self.t = 0

                def reset(self, seed=None):
                    if seed is not None:
                        self.rng = np.random.default_rng(seed)
                    self.t = 0
                    return self.rng.normal(size=4).astype(np.float32) * 0.05, {}

                def step(self, action):
                    self.t += 1
                    state = self.rng.normal(size=4).astype(np.float32) * 0.05
                    return state, 1.0, self.t >= 12, False, {}

                def render(self):
                    pass


            def make(name, render_mode=None, **kwargs):
                return _CartPole()
            """),
    },
}

_MNIST_ARGS = ("--epochs", "1", "--batch-size", "32", "--test-batch-size", "32",
               "--log-interval", "2")


def _programs() -> list[Program]:
    repo = "pytorch/examples"
    return [
        Program("mnist", repo, ("mnist/main.py",), _MNIST_ARGS, stubs=("torchvision",)),
        Program("mnist_rnn", repo, ("mnist_rnn/main.py",), _MNIST_ARGS, stubs=("torchvision",)),
        Program("siamese_network", repo, ("siamese_network/main.py",), _MNIST_ARGS,
                stubs=("torchvision",)),
        Program("vae", repo, ("vae/main.py",),
                ("--epochs", "1", "--batch-size", "32", "--log-interval", "2"),
                setup="import os; os.makedirs('results', exist_ok=True)",
                stubs=("torchvision",)),
        Program("mnist_forward_forward", repo, ("mnist_forward_forward/main.py",),
                ("--epochs", "3", "--train_size", "64", "--test_size", "32",
                 "--log-interval", "1"),
                stubs=("torchvision",)),
        Program("dcgan", repo, ("dcgan/main.py",),
                ("--dataset", "fake", "--niter", "1", "--batchSize", "16", "--imageSize", "64",
                 "--ngf", "8", "--ndf", "8", "--workers", "0", "--outf", "out"),
                setup="import os; os.makedirs('out', exist_ok=True)",
                stubs=("torchvision",)),
        Program("word_language_model", repo,
                ("word_language_model/main.py", "word_language_model/data.py",
                 "word_language_model/model.py"),
                ("--data", "synthetic", "--epochs", "1", "--emsize", "16", "--nhid", "16",
                 "--bptt", "8", "--batch_size", "4", "--log-interval", "4",
                 "--save", "model.pt"),
                setup=textwrap.dedent("""\
                    import os, random
                    random.seed(0)
                    os.makedirs('synthetic', exist_ok=True)
                    words = [f'w{i}' for i in range(50)]
                    for name, n in (('train', 60), ('valid', 12), ('test', 12)):
                        with open(f'synthetic/{name}.txt', 'w') as f:
                            for _ in range(n):
                                f.write(' '.join(random.choices(words, k=8)) + '\\n')
                    """)),
        Program("regression", repo, ("regression/main.py",),
                patches=(("regression/main.py", "for batch_idx in count(1):",
                          "for batch_idx in range(1, 201):"),)),
        Program("time_sequence_prediction", repo,
                ("time_sequence_prediction/train.py",
                 "time_sequence_prediction/generate_sine_wave.py"),
                ("--steps", "2"),
                patches=(("time_sequence_prediction/generate_sine_wave.py", "L = 1000", "L = 60"),
                         ("time_sequence_prediction/train.py", "torch.load('traindata.pt')",
                          "torch.load('traindata.pt', weights_only=False)"),
                         ("time_sequence_prediction/generate_sine_wave.py", "N = 100", "N = 8"),
                         ("time_sequence_prediction/train.py", "future = 1000", "future = 10")),
                setup="import runpy; runpy.run_path('generate_sine_wave.py')",
                stubs=("matplotlib",)),
        Program("reinforce", repo, ("reinforcement_learning/reinforce.py",),
                patches=(("reinforcement_learning/reinforce.py", "for i_episode in count(1):",
                          "for i_episode in range(1, 4):"),),
                stubs=("gymnasium",)),
        Program("actor_critic", repo, ("reinforcement_learning/actor_critic.py",),
                patches=(("reinforcement_learning/actor_critic.py", "for i_episode in count(1):",
                          "for i_episode in range(1, 4):"),),
                stubs=("gymnasium",)),
        Program("ddp_single_gpu", repo,
                ("distributed/ddp-tutorial-series/single_gpu.py",
                 "distributed/ddp-tutorial-series/datautils.py"),
                ("2", "1", "--batch_size", "32"),
                patches=(("distributed/ddp-tutorial-series/single_gpu.py", "device = 0  #",
                          "device = 'cpu'  #"),
                         ("distributed/ddp-tutorial-series/single_gpu.py",
                          "MyTrainDataset(2048)", "MyTrainDataset(128)"))),
        Program("nanogpt", "karpathy/nanoGPT", ("train.py", "model.py", "configurator.py"),
                ("--dataset=synthetic", "--device=cpu", "--compile=False", "--dtype=float32",
                 "--n_layer=2", "--n_head=2", "--n_embd=32", "--block_size=32",
                 "--batch_size=4", "--max_iters=6", "--eval_interval=3", "--eval_iters=2",
                 "--log_interval=1", "--gradient_accumulation_steps=2",
                 "--always_save_checkpoint=False", "--out_dir=out", "--warmup_iters=2",
                 "--lr_decay_iters=6"),
                setup=textwrap.dedent("""\
                    import os, pickle
                    import numpy as np
                    os.makedirs('data/synthetic', exist_ok=True)
                    rng = np.random.default_rng(0)
                    for name in ('train', 'val'):
                        rng.integers(0, 65, 4096).astype(np.uint16).tofile(
                            f'data/synthetic/{name}.bin')
                    with open('data/synthetic/meta.pkl', 'wb') as f:
                        pickle.dump({'vocab_size': 65}, f)
                    """)),
        Program("mingpt_chargpt", "karpathy/minGPT",
                ("projects/chargpt/chargpt.py", "mingpt/__init__.py", "mingpt/model.py",
                 "mingpt/trainer.py", "mingpt/utils.py", "mingpt/bpe.py"),
                ("--model.model_type=None", "--model.n_layer=2", "--model.n_head=2",
                 "--model.n_embd=32", "--data.block_size=32", "--trainer.max_iters=12",
                 "--trainer.batch_size=4", "--trainer.num_workers=0", "--trainer.device=cpu",
                 "--system.work_dir=out"),
                patches=(("projects/chargpt/chargpt.py", "if trainer.iter_num % 500 == 0:",
                          "if trainer.iter_num % 10 == 0:"),
                         ("projects/chargpt/chargpt.py", "model.generate(x, 500,",
                          "model.generate(x, 5,")),
                setup=textwrap.dedent("""\
                    import random
                    random.seed(0)
                    with open('input.txt', 'w') as f:
                        f.write(''.join(random.choices('O God, abcdefgh!\\n', k=4000)))
                    """)),
    ]


def _examples() -> list[Program]:
    return [Program(f"examples/{p.stem}", "", (p.name,))
            for p in sorted((ROOT / "examples").glob("*.py"))]


# -- preparing a program ---------------------------------------------------------------------


def _git_show(mirror: Path, repo: str, commit: str, path: str) -> str:
    git_dir = mirror / repo.replace("/", "+") / "repo"
    return subprocess.run(["git", "--git-dir", str(git_dir), "show", f"{commit}:{path}"],
                          check=True, capture_output=True, text=True).stdout


def prepare(program: Program, mirror: Path | None, folder: Path) -> list[Path]:
    """Copy and patch the program's files into ``folder``; return the measured files."""
    common = os.path.commonpath([os.path.dirname(f) or "." for f in program.files]) \
        if program.repo else ""
    files = []
    for name in program.files:
        if program.repo:
            assert mirror is not None, "--mirror is needed for the public scripts"
            text = _git_show(mirror, program.repo, COMMITS[program.repo], name)
            for file, old, new in program.patches:
                if file == name:
                    if old not in text:
                        raise SystemExit(f"{program.name}: patch target not found in {name}: "
                                         f"{old!r}")
                    text = text.replace(old, new)
            relative = os.path.relpath(name, common) if common not in ("", ".") else name
        else:
            text = (ROOT / "examples" / name).read_text(encoding="utf-8")
            relative = name
        target = folder / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
        files.append(target)
    stubs = folder / "_stubs"
    for stub in program.stubs:
        for name, text in _STUBS[stub].items():
            path = stubs / stub / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
    return files


# -- running under the counter (in a child process) ------------------------------------------


#: Library code whose own reads are told apart from the line's (last match wins: the
#: outermost library frame names the origin).
_LIBRARY_PARTS = (("torch/utils/data/", "loader"), ("torch/optim/", "torch.optim"),
                  ("torch/distributions/", "torch.distributions"),
                  ("torch/nn/utils/", "torch.nn.utils"))


#: A line that names the CPU as a device: `"cpu"`, `'cpu'`, `.cpu()` (not `real_cpu`).
_NAMES_CPU = re.compile(r"""["']cpu["']|\.cpu\(""")


def run_one(folder: Path, main: Path, argv: list[str], measured: list[str], out: Path) -> None:
    """Run ``main`` as ``__main__`` in ``folder``, counting reads per (file, line)."""
    import torch  # noqa: F401  (imported before the counter starts)

    from nosync_fix.verify import syncs

    files = {os.path.realpath(f) for f in measured}

    class Reads(syncs._Reads):
        def _line(self):  # type: ignore[no-untyped-def]
            # Reads made by torch.utils.data (a sampler's CPU random numbers, collation)
            # are host-side loading, not hot-path reads: kept apart as "loader". Reads made
            # inside other library code the line calls (an LBFGS step, a distribution's
            # argument checks) are marked with that library.
            frame = sys._getframe(2)
            origin = ""
            while frame is not None:
                name = os.path.realpath(frame.f_code.co_filename)
                if name in files:
                    return (name, frame.f_lineno, origin)
                posix = name.replace("\\", "/")
                for part, label in _LIBRARY_PARTS:
                    if part in posix:
                        origin = label
                frame = frame.f_back
            return ("", 0, "")

        def function_read(self, func, args, kwargs):  # type: ignore[no-untyped-def]
            # `x.to(device)` with the run's patched `device = 'cpu'` is a host-to-device
            # copy on an accelerator, not a read: only a line that names the CPU itself
            # (`.to("cpu")`, `.cpu()`) counts as a copy to the host.
            kind = super().function_read(func, args, kwargs)
            if kind == "to host" and getattr(func, "__name__", "") == "to":
                name, line, _ = self._line()
                if name and not _NAMES_CPU.search(linecache.getline(name, line)):
                    return None
            return kind

    os.chdir(folder)
    sys.path[:0] = [str(main.parent), str(folder), str(folder / "_stubs")]
    sys.argv = [str(main), *argv]
    reads = Reads(str(main), count_cpu=True)
    error = None
    with syncs._FunctionLayer(reads), syncs._DispatchLayer(reads):
        try:
            runpy.run_path(str(main), run_name="__main__")
        except SystemExit as stop:
            if stop.code not in (None, 0):
                error = f"SystemExit({stop.code})"
        except Exception as failure:  # recorded: the counts up to it still count
            error = f"{type(failure).__name__}: {failure}"
    sites: dict[str, dict[str, dict[str, int]]] = defaultdict(lambda: defaultdict(dict))
    loader = 0
    for ((name, line, origin), kind), count in reads.count.by_site.items():
        if origin == "loader":
            loader += count
        elif name:
            sites[name][str(line)][f"{kind} in {origin}" if origin else kind] = count
    out.write_text(json.dumps({"error": error, "sites": sites, "loader": loader}),
                   encoding="utf-8")


# -- the static side -------------------------------------------------------------------------


@dataclass
class Line:
    file: str
    line: int
    code: str
    kinds: dict[str, int]
    covered: bool
    codes: list[str] = field(default_factory=list)
    #: Why a line without a finding needs none ("" when it does).
    exempt: str = ""
    #: Per finding covering the line, its fix: "safe", "unsafe" or "none" (issue 18 item 4).
    fixes: list[str] = field(default_factory=list)


#: A line the analysis calls cold but that read this often in one run is listed apart.
COLD_BUT_REPEATED = 3


def static_lines(path: Path, read_lines: dict[int, dict[str, int]],
                 cold: list[Line], ignore: tuple[str, ...] = ()) -> list[Line]:
    """The lines of ``read_lines`` on a hot path, each with the findings that cover it;
    ``cold`` receives the lines the analysis calls cold that read repeatedly."""
    import libcst as cst

    from nosync_fix.analysis import ModuleAnalysis
    from nosync_fix.config import Settings
    from nosync_fix.engine import process_source

    text = path.read_text(encoding="utf-8")
    result = process_source(text, path.name, Settings(ignore=ignore), fix=False,
                            with_edits=False)
    assert result.error is None, result.error
    wrapper = cst.MetadataWrapper(cst.parse_module(text))
    analysis = ModuleAnalysis(wrapper)
    units: list[tuple[int, int, cst.CSTNode]] = []
    starts: dict[int, list[cst.CSTNode]] = defaultdict(list)
    for node in analysis.md.walk_order:
        unit = None
        if isinstance(node, cst.BaseSmallStatement):
            unit = node
        elif isinstance(node, (cst.If, cst.While)):
            unit = node.test
        elif isinstance(node, cst.For):
            unit = node.iter
        elif isinstance(node, cst.With):
            unit = node.items[0]
        if unit is not None:
            line, _, end_line, _ = analysis.md.position(unit)
            units.append((line, end_line, unit))
        if isinstance(node, (cst.Call, cst.FormattedStringExpression, cst.Subscript,
                             cst.Comparison, cst.BooleanOperation)):
            starts[analysis.md.position(node)[0]].append(node)
    source_lines = text.splitlines()
    out = []
    for line, kinds in sorted(read_lines.items()):
        holding = [u for u in units if u[0] <= line <= u[1]]
        if not holding:
            continue
        first, last, unit = min(holding, key=lambda u: u[1] - u[0])
        hot = analysis.is_hot(unit) or any(analysis.is_hot(n) for n in starts.get(line, ()))
        if not hot:
            if sum(kinds.values()) >= COLD_BUT_REPEATED:
                cold.append(Line(str(path), line, source_lines[line - 1].strip(), kinds,
                                 False))
            continue
        # A finding covers the line when it starts in the statement holding the line (an
        # `if` reported as a whole covers its test, not the statements of its body).
        covering = [f for f in result.findings if first <= f.line <= last]
        codes = [f.code for f in covering]
        fixes = [f.fix.applicability.value if f.fix is not None else "none" for f in covering]
        nodes = [n for k in range(first, last + 1) for n in starts.get(k, ())]
        exempt = "" if codes else _exempt(analysis, nodes)
        if not codes and not exempt and set(kinds) == {"index"} and _iterates_host_tensor(
                analysis, nodes):
            exempt = "indexes with elements of a tensor made on the host (no sync)"
        if not codes and not exempt and all(" in " in kind for kind in kinds):
            exempt = "library: only reads inside " + ", ".join(
                sorted({kind.split(" in ")[1] for kind in kinds}))
        out.append(Line(str(path), line, source_lines[line - 1].strip(), kinds, bool(codes),
                        codes, exempt, fixes))
    return out


def _exempt(analysis, nodes) -> str:  # type: ignore[no-untyped-def]
    """Why the reads of a line are no syncs, when the analysis can prove it: every read
    there is of a tensor made on the host, which the CPU run counts but an accelerator
    would not wait for. The reads looked at: the receivers of ``.item()`` and its
    relatives (``torch.tensor(list)[i].item()``) and the values formatted into text
    (``f"{losses['val']:.4f}"`` with ``losses`` a dict of CPU tensors returned by a helper
    of the script: :func:`nosync_fix.rules._host.certainly_on_host` follows the helper's
    returns), also when summed (``score = train_score + test_score``: ``host_only``, as
    NSY301 and NSY906 judge a formatted value); values of host kind beside them
    (``f"step {step}"``) read nothing. A condition is not proven this way: its other
    operands may be device tensors."""
    import libcst as cst

    from nosync_fix.analysis import Kind
    from nosync_fix.analysis.base import call_name
    from nosync_fix.rules._host import certainly_on_host, host_only

    receivers = [n.func.value for n in nodes if isinstance(n, cst.Call) and isinstance(
        n.func, cst.Attribute) and call_name(n) in ("item", "tolist", "numpy", "cpu")]
    formatted = [n.expression for n in nodes if isinstance(n, cst.FormattedStringExpression)
                 and analysis.kind(n.expression) is not Kind.HOST]
    if any(isinstance(n, (cst.Comparison, cst.BooleanOperation)) for n in nodes):
        return ""
    if (receivers or formatted) and all(
            certainly_on_host(analysis, r) for r in receivers) and all(
            certainly_on_host(analysis, f) or host_only(analysis, f) for f in formatted):
        return "reads a tensor made on the host (not a sync on an accelerator)"
    return ""


_HOST_RANDOM = frozenset({"torch.randint", "torch.randperm", "torch.rand", "torch.randn"})


def _iterates_host_tensor(analysis, nodes) -> bool:  # type: ignore[no-untyped-def]
    """Whether the line iterates a tensor made on the host (``for i in ix`` with
    ``ix = torch.randint(...)``): its elements' ``__index__`` reads are no syncs."""
    import libcst as cst

    from nosync_fix.rules._host import certainly_on_host
    from nosync_fix.rules._scalars import single_binding_value

    def on_host(expr) -> bool:  # type: ignore[no-untyped-def]
        if certainly_on_host(analysis, expr):
            return True
        value = single_binding_value(analysis, expr) if isinstance(expr, cst.Name) else expr
        # torch.randint(...) and its relatives without a device: the default (CPU) device
        return isinstance(value, cst.Call) and bool(
            analysis.md.qualified_names(value.func) & _HOST_RANDOM) and not any(
            a.keyword is not None and a.keyword.value == "device" for a in value.args)

    for node in nodes:
        for ancestor in [node, *analysis.md.ancestors(node)]:
            loop = getattr(ancestor, "for_in", ancestor)  # a comprehension's `for`
            if isinstance(loop, (cst.CompFor, cst.For)) and on_host(loop.iter):
                return True
            if isinstance(ancestor, cst.BaseStatement):
                break
    return False


# -- driver ----------------------------------------------------------------------------------


def measure(program: Program, mirror: Path | None, verbose: bool,
            ignore: tuple[str, ...] = ()) -> dict:
    with tempfile.TemporaryDirectory(prefix=f"silent-{program.name.replace('/', '-')}-") as tmp:
        folder = Path(tmp)
        files = prepare(program, mirror, folder)
        if program.setup:
            subprocess.run([sys.executable, "-c", program.setup], cwd=folder, check=True,
                           env={**os.environ, "PYTHONPATH": str(folder / "_stubs")})
        out = folder / "_sites.json"
        command = [sys.executable, __file__, "--run-one", str(folder), str(files[0]),
                   str(out), *[str(f) for f in files], "--", *program.argv]
        env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "CUDA_VISIBLE_DEVICES": "",
               "OMP_NUM_THREADS": "1", "PYTHONHASHSEED": "0"}
        try:
            done = subprocess.run(command, capture_output=True, text=True,
                                  timeout=program.timeout, env=env)
        except subprocess.TimeoutExpired:
            return {"name": program.name, "error": f"timed out after {program.timeout} s",
                    "lines": []}
        if not out.exists():
            return {"name": program.name, "error": done.stderr.strip().splitlines()[-1:],
                    "lines": []}
        data = json.loads(out.read_text(encoding="utf-8"))
        if verbose and (data["error"] or done.returncode):
            print(done.stdout[-2000:], done.stderr[-3000:], sep="\n")
        lines: list[Line] = []
        cold: list[Line] = []
        for path in files:
            sites = data["sites"].get(os.path.realpath(path), {})
            read_lines = {int(k): v for k, v in sites.items()}
            cold_here: list[Line] = []
            for item in static_lines(path, read_lines, cold_here, ignore):
                item.file = str(path.relative_to(folder))
                lines.append(item)
            for item in cold_here:
                item.file = str(path.relative_to(folder))
                cold.append(item)
        return {"name": program.name, "error": data["error"],
                "commit": COMMITS.get(program.repo, "")[:12], "loader_reads": data["loader"],
                "lines": [item.__dict__ for item in lines],
                "cold_repeated": [item.__dict__ for item in cold]}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mirror", type=Path, help="folder of mirrored repositories")
    parser.add_argument("--only", action="append", default=[], help="programs to run")
    parser.add_argument("--examples-only", action="store_true")
    parser.add_argument("--json", type=Path, help="write the results here")
    parser.add_argument("--verbose", action="store_true")
    parser.add_argument("--ignore", default="", help="rules to leave out of the static check "
                        "(NSY906: the coverage without the fallback)")
    args = parser.parse_args()
    programs = _examples() + ([] if args.examples_only else _programs())
    if args.only:
        programs = [p for p in programs if any(o in p.name for o in args.only)]
    results = []
    total = Counter()
    for program in programs:
        ignore = tuple(c for c in args.ignore.split(",") if c)
        result = measure(program, args.mirror, args.verbose, ignore)
        results.append(result)
        lines = result["lines"]
        covered = sum(1 for item in lines if item["covered"] or item["exempt"])
        total["lines"] += len(lines)
        total["covered"] += covered
        total["host"] += sum(1 for item in lines if item["exempt"] and not item["covered"]
                             and not item["exempt"].startswith("library"))
        total["library"] += sum(1 for item in lines if item["exempt"] and not item["covered"]
                                and item["exempt"].startswith("library"))
        total["programs"] += 1
        error = f"  [stopped: {result['error']}]" if result.get("error") else ""
        print(f"{program.name:32} {covered:3}/{len(lines):<3} hot lines reading have a "
              f"finding{error}")
        for item in lines:
            if item["exempt"]:
                label = "library" if item["exempt"].startswith("library") else "host   "
                print(f"    {label} {item['file']}:{item['line']}  {item['code'][:60]}  "
                      f"({item['exempt']})")
            elif not item["covered"]:
                kinds = ", ".join(f"{k}×{n}" for k, n in sorted(item["kinds"].items()))
                print(f"    SILENT {item['file']}:{item['line']}  {item['code'][:70]}  "
                      f"({kinds})")
            elif args.verbose:
                print(f"    ok     {item['file']}:{item['line']}  {item['code'][:60]}  "
                      f"{','.join(sorted(set(item['codes'])))}")
        for item in result.get("cold_repeated", []):
            kinds = ", ".join(f"{k}×{n}" for k, n in sorted(item["kinds"].items()))
            print(f"    cold   {item['file']}:{item['line']}  {item['code'][:70]}  ({kinds}; "
                  "the analysis calls the line cold)")
        total["cold"] += len(result.get("cold_repeated", []))
    share = total["covered"] / total["lines"] if total["lines"] else 1.0
    print(f"\n{total['programs']} programs: {total['covered']}/{total['lines']} hot lines "
          f"that read the device have a finding or need none ({share:.1%}): "
          f"{total['covered'] - total['host'] - total['library']} "
          f"with a finding; not a device read: {total['host']} proven host-only (read only "
          f"tensors made on the host), {total['library']} read only inside torch library "
          f"code; {total['lines'] - total['covered']} silent; "
          f"{total['cold']} more lines read {COLD_BUT_REPEATED}+ times where the analysis "
          "sees no hot path")
    if args.json:
        args.json.write_text(json.dumps(results, indent=1), encoding="utf-8")
    return 0 if total["covered"] == total["lines"] else 1


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--run-one":
        folder, main_file, out = (Path(a) for a in sys.argv[2:5])
        rest = sys.argv[5:]
        split = rest.index("--")
        run_one(folder, main_file, rest[split + 1:], rest[:split], out)
        sys.exit(0)
    sys.exit(main())
