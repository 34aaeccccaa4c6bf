"""Graph breaks in Hugging Face model code, before and after nosync-fix (issue 16).

    pip install -e ".[bench]"              # pins transformers==4.52.4
    python benchmarks/model_breaks.py      # all rows, aot_eager, prints the table
    python benchmarks/model_breaks.py --models t5,bart --json out.json
    python benchmarks/model_breaks.py --backend inductor   # latency under inductor

Offline: every model is built from a small config with random weights (no download).

1. The installed ``transformers`` package is copied, whole, to a temporary folder and
   ``nosync-fix --unsafe-fixes --exit-zero`` rewrites the copy (wall time, changed files
   and findings are recorded).
2. Every row runs two arms, each in its own process: "before" (the installed package) and
   "after" (the copy first on ``sys.path``). The before arm builds the model with a fixed
   seed, overwrites every parameter from a seeded generator and saves its ``state_dict``;
   the after arm loads it with ``strict=True``. Both arms then, on the same inputs:
   ``torch._dynamo.explain`` (graphs, breaks, reasons with file:line), an eager forward,
   a ``torch.compile`` forward through a backend that counts the graphs it is handed, and
   ``--calls`` more compiled calls on the fixed and on varied inputs of the same shape
   with nothing reset in between (every compilation after the first call is a recompile).
3. Timing: both arms stay alive and the parent asks them in turn for a few compiled calls
   each (``torch.set_num_threads(1)``), so both see the same noise; the table shows the
   medians. Times are for this CPU only.
4. The parent compares the before and after outputs bit for bit (``torch.equal`` on
   every tensor), eager with eager and compiled with compiled.

Exit status 1 when any after arm fails or any output differs. A row whose arm fails is
shown as FAILED with its one-line error; the other rows still run.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import platform
import queue
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
PROTOCOL = "@@bench "  # prefix of the lines an arm writes to the parent

# GraphMend (arXiv 2509.16248, CGO artifact RESULTS.md): breaks before -> after, small configs.
GRAPHMEND = {"t5": (3, 0), "bart": (3, 0), "biogpt": (2, 0), "phi3-longrope": (5, 0),
             "longformer-padded": (5, 3)}
# GraphMend's Longformer baseline of 5 counts the padding warning of `_pad_to_window_size`,
# which only a sequence that is not a multiple of the window reaches: our padded row.
GRAPHMEND_TOTAL = (89, 19, 21)  # breaks before, after, over 21 rows (78% removed)


# --------------------------------------------------------------------------------------
# Rows: small configs built offline.
# --------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Row:
    name: str
    model_class: str
    config_class: str
    config: dict[str, Any]
    inputs: str = "decoder_only"  # key into INPUTS
    dtype: str = "float32"
    seq_len: int = 16
    note: str = ""  # why the row is here
    default: bool = True  # run without --models


_TINY = {"vocab_size": 100, "pad_token_id": 1, "bos_token_id": 0, "eos_token_id": 2}
_ENC_DEC = {**_TINY, "d_model": 32, "encoder_layers": 2, "decoder_layers": 2,
            "encoder_attention_heads": 4, "decoder_attention_heads": 4, "encoder_ffn_dim": 64,
            "decoder_ffn_dim": 64, "max_position_embeddings": 64, "decoder_start_token_id": 2}
_DECODER = {**_TINY, "hidden_size": 32, "num_hidden_layers": 2, "num_attention_heads": 4,
            "intermediate_size": 64, "max_position_embeddings": 64}
_LONGROPE = {**_DECODER, "num_key_value_heads": 4, "max_position_embeddings": 64,
             "rope_scaling": {"type": "longrope", "short_factor": [1.0, 1.1, 1.2, 1.3],
                              "long_factor": [2.0, 2.5, 3.0, 3.5]}}

ROWS: list[Row] = [
    Row("t5", "T5ForConditionalGeneration", "T5Config",
        {**_TINY, "pad_token_id": 0, "d_model": 32, "d_kv": 8, "d_ff": 64, "num_layers": 2,
         "num_decoder_layers": 2, "num_heads": 4, "decoder_start_token_id": 0},
        inputs="encoder_decoder", note="logger.warning_once in forward"),
    Row("bart", "BartForConditionalGeneration", "BartConfig", _ENC_DEC, "encoder_decoder",
        note="logger.warning_once in the decoder"),
    Row("bart-fp16", "BartForConditionalGeneration", "BartConfig", _ENC_DEC, "encoder_decoder",
        dtype="float16", note="fp16 clamp guard (isinf/isnan) on the host"),
    Row("biogpt", "BioGptForCausalLM", "BioGptConfig", _DECODER,
        note="logger call in forward"),
    Row("phi3-longrope", "Phi3ForCausalLM", "Phi3Config",
        {**_LONGROPE, "original_max_position_embeddings": 32},
        note="longrope: seq 16 <= original 32, short branch of `if seq_len > ...`"),
    Row("phi3-longrope-long", "Phi3ForCausalLM", "Phi3Config",
        {**_LONGROPE, "original_max_position_embeddings": 8},
        note="longrope: seq 16 > original 8, long branch of `if seq_len > ...`"),
    Row("longformer", "LongformerModel", "LongformerConfig",
        {**_DECODER, "attention_window": 4, "max_position_embeddings": 66},
        inputs="encoder", note="is_global_attn = ....any().item()"),
    Row("longformer-padded", "LongformerModel", "LongformerConfig",
        {**_DECODER, "attention_window": 4, "max_position_embeddings": 66},
        inputs="encoder", seq_len=14,
        note="seq 14 is padded to the window 4: `_pad_to_window_size`'s warning too"),
    Row("whisper", "WhisperForConditionalGeneration", "WhisperConfig",
        {**_ENC_DEC, "num_mel_bins": 16, "max_source_positions": 32, "max_target_positions": 32,
         "decoder_start_token_id": 0, "suppress_tokens": None,
         "begin_suppress_tokens": None}, inputs="speech"),
    Row("mbart", "MBartForConditionalGeneration", "MBartConfig", _ENC_DEC, "encoder_decoder"),
    Row("pegasus", "PegasusForConditionalGeneration", "PegasusConfig", _ENC_DEC,
        "encoder_decoder"),
    Row("marian", "MarianMTModel", "MarianConfig", _ENC_DEC, "encoder_decoder"),
    Row("blenderbot", "BlenderbotForConditionalGeneration", "BlenderbotConfig", _ENC_DEC,
        "encoder_decoder"),
    Row("m2m100", "M2M100ForConditionalGeneration", "M2M100Config", _ENC_DEC,
        "encoder_decoder"),
    Row("prophetnet", "ProphetNetForConditionalGeneration", "ProphetNetConfig",
        {**_TINY, "hidden_size": 32, "encoder_ffn_dim": 64, "decoder_ffn_dim": 64,
         "num_encoder_layers": 2, "num_decoder_layers": 2, "num_encoder_attention_heads": 4,
         "num_decoder_attention_heads": 4, "max_position_embeddings": 64, "ngram": 2,
         "num_buckets": 8, "relative_max_distance": 16, "decoder_start_token_id": 0},
        "encoder_decoder", default=False,
        note="torch.compile fails on torch 2.13 (as_strided view mutation), with or without "
             "nosync-fix: --models prophetnet"),
    Row("gpt2", "GPT2LMHeadModel", "GPT2Config",
        {**_TINY, "n_embd": 32, "n_layer": 2, "n_head": 4, "n_positions": 64},
        note="control"),
    Row("llama", "LlamaForCausalLM", "LlamaConfig", {**_DECODER, "num_key_value_heads": 2},
        note="control"),
    Row("opt", "OPTForCausalLM", "OPTConfig",
        {**_DECODER, "ffn_dim": 64, "word_embed_proj_dim": 32}, note="control"),
    Row("bert", "BertModel", "BertConfig", _DECODER, "encoder", note="control"),
    Row("llama-seqcls-embeds", "LlamaForSequenceClassification", "LlamaConfig",
        {**_DECODER, "num_key_value_heads": 2, "num_labels": 3}, "embeds",
        note="warning_once(f\"{self.__class__.__name__} will not detect padding ...\")"),
]
ROWS_BY_NAME = {row.name: row for row in ROWS}


def _ids(gen: Any, shape: tuple[int, ...]) -> Any:
    import torch

    return torch.randint(3, 100, shape, generator=gen)


def _mask(batch: int, seq: int) -> Any:
    """All ones but the last three positions of the second sequence (padding)."""
    import torch

    mask = torch.ones(batch, seq, dtype=torch.long)
    mask[1, -3:] = 0
    return mask


def _decoder_only_inputs(row: Row, seed: int) -> dict[str, Any]:
    import torch

    gen = torch.Generator().manual_seed(seed)
    return {"input_ids": _ids(gen, (2, row.seq_len)), "attention_mask": _mask(2, row.seq_len)}


def _embeds_inputs(row: Row, seed: int) -> dict[str, Any]:
    """Embeddings in place of ids (a sequence classifier then cannot find the padding)."""
    import torch

    gen = torch.Generator().manual_seed(seed)
    embeds = torch.randn(2, row.seq_len, row.config["hidden_size"], generator=gen)
    return {"inputs_embeds": embeds.to(getattr(torch, row.dtype)),
            "attention_mask": _mask(2, row.seq_len)}


def _encoder_decoder_inputs(row: Row, seed: int) -> dict[str, Any]:
    import torch

    gen = torch.Generator().manual_seed(seed)
    return {"input_ids": _ids(gen, (2, row.seq_len)), "attention_mask": _mask(2, row.seq_len),
            "decoder_input_ids": _ids(gen, (2, 8))}


def _speech_inputs(row: Row, seed: int) -> dict[str, Any]:
    import torch

    gen = torch.Generator().manual_seed(seed)
    frames = 2 * row.config["max_source_positions"]
    features = torch.randn(2, row.config["num_mel_bins"], frames, generator=gen)
    return {"input_features": features.to(getattr(torch, row.dtype)),
            "decoder_input_ids": _ids(gen, (2, 8))}


INPUTS: dict[str, Callable[[Row, int], dict[str, Any]]] = {
    "decoder_only": _decoder_only_inputs,
    "encoder": _decoder_only_inputs,
    "encoder_decoder": _encoder_decoder_inputs,
    "speech": _speech_inputs,
    "embeds": _embeds_inputs,
}


# --------------------------------------------------------------------------------------
# Helpers shared by parent and arms (no torch at import time).
# --------------------------------------------------------------------------------------

def short_path(filename: str) -> str:
    """``.../site-packages/transformers/models/t5/modeling_t5.py`` -> ``models/t5/modeling_t5.py``.

    The before and after arms run different copies of the package; shortening to the path
    inside it makes their locations comparable.
    """
    parts = Path(filename).parts
    if "transformers" in parts:
        index = len(parts) - 1 - parts[::-1].index("transformers")
        return "/".join(parts[index + 1:])
    if "site-packages" in parts:
        return "/".join(parts[parts.index("site-packages") + 1:])
    return filename


def median_ms(seconds: list[float]) -> float | None:
    return statistics.median(seconds) * 1e3 if seconds else None


def percent_removed(before: int, after: int) -> float | None:
    return None if before == 0 else 100.0 * (before - after) / before


def one_line(text: str, limit: int = 160) -> str:
    """The last non-empty line of an error, cut to ``limit`` characters."""
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    line = lines[-1] if lines else "no output"
    return line if len(line) <= limit else line[:limit - 1] + "…"


def compare_outputs(before: list[tuple[str, Any]], after: list[tuple[str, Any]]) -> str | None:
    """None when both lists hold the same names and bit-identical tensors; else what differs."""
    import torch

    if [name for name, _ in before] != [name for name, _ in after]:
        return f"different outputs: {len(before)} vs {len(after)} tensors"
    for (name, a), (_, b) in zip(before, after, strict=True):
        if a.dtype != b.dtype or a.shape != b.shape:
            return f"{name}: {a.dtype}{list(a.shape)} vs {b.dtype}{list(b.shape)}"
        if not torch.equal(a, b):
            # NaN != NaN under torch.equal; count both-NaN positions as equal.
            if a.is_floating_point() and torch.equal(a.nan_to_num(0.5), b.nan_to_num(0.5)) \
                    and torch.equal(a.isnan(), b.isnan()):
                continue
            return f"{name}: max |diff| {(a.double() - b.double()).abs().max().item():.3g}"
    return None


# --------------------------------------------------------------------------------------
# One arm, in its own process.
# --------------------------------------------------------------------------------------

def _flatten(value: Any, prefix: str = "out") -> Iterator[tuple[str, Any]]:
    import torch

    if isinstance(value, torch.Tensor):
        yield prefix, value.detach()
    elif hasattr(value, "to_legacy_cache"):  # a transformers Cache object
        yield from _flatten(value.to_legacy_cache(), prefix)
    elif isinstance(value, dict):  # ModelOutput is an OrderedDict
        for key, item in value.items():
            yield from _flatten(item, f"{prefix}.{key}")
    elif isinstance(value, (tuple, list)):
        for index, item in enumerate(value):
            yield from _flatten(item, f"{prefix}[{index}]")


def _init_deterministically(model: Any, seed: int) -> None:
    """Overwrite every parameter from one seeded generator (no uninitialised memory)."""
    import torch

    gen = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, param in model.named_parameters():
            noise = torch.randn(param.shape, generator=gen, dtype=torch.float32)
            if name.endswith("weight") and param.dim() == 1:  # norm scales
                value = 1.0 + 0.1 * noise
            else:
                value = 0.1 * noise
            param.copy_(value.to(param.dtype))


class _Protocol:
    """The arm's line channel to the parent: the real stdout, kept apart from prints."""

    def __init__(self) -> None:
        self.out = os.fdopen(os.dup(1), "w", buffering=1)
        os.dup2(2, 1)  # anything the model prints goes to stderr

    def send(self, kind: str, payload: Any = None) -> None:
        self.out.write(f"{PROTOCOL}{kind} {json.dumps(payload)}\n")


def run_arm(args: argparse.Namespace) -> int:
    channel = _Protocol()
    try:
        return _arm(args, channel)
    except BaseException as error:  # noqa: B036 - report everything to the parent
        traceback.print_exc()
        # BackendCompilerFailed and friends wrap the real error; its first line says it.
        inner = getattr(error, "inner_exception", None) or error
        lines = [line for line in str(inner).splitlines() if line.strip()]
        message = one_line(lines[0]) if lines else ""
        channel.send("ERROR", f"{type(inner).__name__}: {message}")
        return 1


def _arm(args: argparse.Namespace, channel: _Protocol) -> int:
    if args.arm == "after":
        sys.path.insert(0, args.copy)
    import torch
    import torch._dynamo
    import transformers

    package = Path(transformers.__file__).resolve()
    if args.arm == "after":
        assert package.is_relative_to(Path(args.copy).resolve()), (
            f"after arm imported {package}, not the rewritten copy in {args.copy}")
    torch.set_num_threads(1)
    row = ROWS_BY_NAME[args.model]
    work = Path(args.workdir)
    dtype = getattr(torch, row.dtype)

    torch.manual_seed(0)
    config = getattr(transformers, row.config_class)(**row.config)
    model = getattr(transformers, row.model_class)(config).eval()
    state_file = work / f"{row.name}.state.pt"
    if args.arm == "before":
        _init_deterministically(model, seed=0)
        model = model.to(dtype)
        torch.save(model.state_dict(), state_file)
        channel.send("STATE_SAVED")
    else:
        model = model.to(dtype)
        model.load_state_dict(torch.load(state_file), strict=True)

    make_inputs = INPUTS[row.inputs]
    fixed = make_inputs(row, 0)
    varied = [make_inputs(row, seed) for seed in (1, 2, 3)]
    result: dict[str, Any] = {"arm": args.arm, "transformers": str(package.parent),
                              "backend": args.backend}

    # The compiled run gets a model in the state explain found (lazily built buffers, such
    # as long RoPE's, are made by the first call), so that both count the same first call.
    fresh = copy.deepcopy(model)
    with torch.no_grad():
        result["explain"] = explain_breaks(model, fixed)
        eager = list(_flatten(model(**fixed)))
        result["compile"], entry, compiled = compiled_run(
            fresh, fixed, varied, args.backend, args.calls)
        compiled_model = entry.function
    torch.save({"eager": eager, "compiled": compiled}, work / f"{row.name}.{args.arm}.outputs.pt")

    # Timing: the parent asks for a batch of calls at a time, alternating between the arms.
    channel.send("READY", result)
    timings: list[float] = []
    with torch.no_grad():
        for line in sys.stdin:
            command, _, count = line.partition(" ")
            if command != "time":
                break
            for _ in range(int(count)):
                start = time.perf_counter()
                compiled_model(**fixed)
                timings.append(time.perf_counter() - start)
            channel.send("TIMED", len(timings))
    result["timings_s"] = timings
    result["compile"]["graphs_after_timing"] = entry.backend.graphs
    channel.send("DONE", result)
    return 0


def explain_breaks(model: Any, inputs: dict[str, Any]) -> dict[str, Any]:
    """Graphs, breaks and their reasons by ``torch._dynamo.explain`` (GraphMend's count:
    every break dynamo met, a site met twice counted twice)."""
    import torch._dynamo

    torch._dynamo.reset()
    explanation = torch._dynamo.explain(model)(**inputs)
    return {
        "graphs": explanation.graph_count,
        "breaks": explanation.graph_break_count,
        "reasons": [_reason(r.reason, r.user_stack) for r in explanation.break_reasons],
    }


def compiled_run(model: Any, inputs: dict[str, Any], varied: list[dict[str, Any]],
                 backend: str, calls: int) -> tuple[dict[str, Any], Any, list[Any]]:
    """The first compiled call, observed by nosync-verify's own counter (so both tools
    count the same function's breaks the same way), then ``calls`` more on fixed and
    varied inputs with nothing reset or flushed in between: the recompiles."""
    import time

    import torch._dynamo
    from torch._dynamo.utils import counters

    from nosync_fix.verify.breaks import compile_and_observe

    torch._dynamo.reset()
    entry = compile_and_observe(model, (), inputs, "", backend, time.perf_counter)
    if entry.breaks.error is not None:
        raise RuntimeError(entry.breaks.error)
    graph_breaks = sum(counters["graph_break"].values())
    compiled = list(_flatten(entry.function(**inputs)))
    first_call = entry.backend.graphs
    for call in range(calls):
        entry.function(**(inputs if call % 2 == 0 else varied[call // 2 % len(varied)]))
    return {
        "graphs_first_call": first_call,
        "breaks": graph_breaks,
        "verifier_graphs": entry.breaks.graph_count,
        "verifier_breaks": entry.breaks.graph_breaks,
        "verifier_lower_bound": entry.breaks.lower_bound,
        "break_reasons": dict(counters["graph_break"]),
        "recompiles": entry.backend.graphs - first_call,
        "repeated_calls": calls,
        "unique_graphs": counters["stats"]["unique_graphs"],
    }, entry, compiled


def _reason(reason: str, user_stack: list[Any]) -> dict[str, Any]:
    frame = user_stack[-1] if user_stack else None
    return {
        "reason": reason.strip().splitlines()[0] if reason.strip() else "",
        "file": short_path(frame.filename) if frame else "?",
        "line": frame.lineno if frame else 0,
        "code": (frame.line or "").strip() if frame else "",
        "function": frame.name if frame else "",
    }


# --------------------------------------------------------------------------------------
# Parent: copy, fix, run arms, compare, print.
# --------------------------------------------------------------------------------------

class ArmFailed(RuntimeError):
    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


class Arm:
    """A running arm process and the lines it sends."""

    def __init__(self, name: str, kind: str, args: argparse.Namespace, work: Path,
                 copy: Path) -> None:
        self.name, self.kind, self.timeout = name, kind, args.arm_timeout
        self.stderr_path = work / f"{name}.{kind}.stderr"
        command = [sys.executable, __file__, "--arm", kind, "--model", name,
                   "--workdir", str(work), "--copy", str(copy), "--backend", args.backend,
                   "--calls", str(args.calls)]
        env = {**os.environ, "PYTHONHASHSEED": "0", "TOKENIZERS_PARALLELISM": "false",
               "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "OMP_NUM_THREADS": "1"}
        with open(self.stderr_path, "w") as stderr:
            self.process = subprocess.Popen(command, stdin=subprocess.PIPE,
                                            stdout=subprocess.PIPE, stderr=stderr, text=True,
                                            env=env, cwd=work)
        self.lines: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            if line.startswith(PROTOCOL):
                self.lines.put(line[len(PROTOCOL):])
        self.lines.put(None)

    def expect(self, kind: str) -> Any:
        """The payload of the next message, which must be ``kind``; RuntimeError otherwise."""
        try:
            line = self.lines.get(timeout=self.timeout)
        except queue.Empty:
            self.kill()
            raise ArmFailed(self.kind, f"timed out after {self.timeout} s") from None
        if line is None:
            self.process.wait()
            raise ArmFailed(self.kind, f"died (exit {self.process.returncode}): "
                            f"{one_line(self.stderr_path.read_text(errors='replace'))}")
        got, _, payload = line.rstrip("\n").partition(" ")
        if got == "ERROR":
            raise ArmFailed(self.kind, json.loads(payload))
        if got != kind:
            raise ArmFailed(self.kind, f"sent {got}, expected {kind}")
        return json.loads(payload)

    def send(self, text: str) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(text + "\n")
        self.process.stdin.flush()

    def finish(self) -> dict[str, Any]:
        self.send("quit")
        result = self.expect("DONE")
        self.process.wait(timeout=60)
        return result

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()


def run_row(row: Row, args: argparse.Namespace, work: Path, copy: Path) -> dict[str, Any]:
    """Both arms of one row; the row's data, with ``error`` set when an arm failed."""
    import torch

    data: dict[str, Any] = {"model": row.name, "class": row.model_class, "dtype": row.dtype,
                            "note": row.note, "config": row.config}
    arms: dict[str, Arm] = {}
    started = time.perf_counter()
    try:
        arms["before"] = Arm(row.name, "before", args, work, copy)
        arms["before"].expect("STATE_SAVED")
        arms["after"] = Arm(row.name, "after", args, work, copy)  # imports while before works
        for kind in ("before", "after"):
            data[kind] = arms[kind].expect("READY")
        for round_ in range(args.rounds):  # interleaved, alternating who goes first
            order = ("before", "after") if round_ % 2 == 0 else ("after", "before")
            for kind in order:
                arms[kind].send(f"time {args.calls_per_round}")
                arms[kind].expect("TIMED")
        for kind in ("before", "after"):
            data[kind] = arms[kind].finish()
    except ArmFailed as error:
        data["failed_arm"] = error.kind
        data["error"] = one_line(str(error))
        return data
    finally:
        for arm in arms.values():
            arm.kill()
        data["wall_s"] = round(time.perf_counter() - started, 1)

    outputs = {kind: torch.load(work / f"{row.name}.{kind}.outputs.pt") for kind in arms}
    for mode in ("eager", "compiled"):
        diff = compare_outputs(outputs["before"][mode], outputs["after"][mode])
        data[f"{mode}_identical"] = diff is None
        data[f"{mode}_diff"] = diff
    data["tensors_compared"] = len(outputs["before"]["eager"])
    return data


def copy_and_fix(work: Path, reuse: Path | None) -> tuple[Path, dict[str, Any]]:
    """Copy the installed transformers, run nosync-fix on the copy; (copy's parent, summary)."""
    import transformers

    installed = Path(transformers.__file__).resolve().parent
    if reuse is not None:
        return reuse, {"reused_copy": str(reuse)}
    copy_root = work / "site"
    copy = copy_root / "transformers"
    shutil.copytree(installed, copy, ignore=shutil.ignore_patterns("__pycache__"))
    command = [sys.executable, "-m", "nosync_fix", "--unsafe-fixes", "--exit-zero",
               "--show-fixes", "--no-cache", "--no-color", str(copy)]
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, cwd=work)
    wall = time.perf_counter() - started
    (work / "nosync-fix.log").write_text(done.stdout + done.stderr)
    changed = sorted(str(path.relative_to(copy)) for path in copy.rglob("*.py")
                     if path.read_bytes() != (installed / path.relative_to(copy)).read_bytes())
    lines = done.stdout.splitlines()
    remaining = Counter(m[1] for m in map(re.compile(r"^\S+:\d+:\d+: (NSY\d+)").match, lines)
                        if m)
    fixed = Counter()
    for line in lines:
        match = re.match(r"^\s+(\d+) × (NSY\d+)", line)
        if match:
            fixed[match[2]] += int(match[1])
    summary_line = next((line for line in reversed(lines)
                         if line.startswith(("Found", "All checks"))), "")
    return copy_root, {
        "command": " ".join(["nosync-fix", *command[3:-1], "<copy>"]),
        "exit_code": done.returncode,
        "wall_s": round(wall, 1),
        "python_files": sum(1 for _ in copy.rglob("*.py")),
        "changed_files": changed,
        "findings_remaining": dict(remaining),
        "fixed": dict(fixed),
        "summary": summary_line,
        "errors": [line for line in done.stderr.splitlines() if line.startswith("error")][:20],
    }


# --------------------------------------------------------------------------------------
# The table.
# --------------------------------------------------------------------------------------

def _top_reason(arm: dict[str, Any] | None) -> str:
    if not arm or not arm["explain"]["reasons"]:
        return "-"
    reasons = arm["explain"]["reasons"]
    first = reasons[0]
    text = re.sub(r"\s+", " ", first["reason"])[:60]
    more = f" (+{len(reasons) - 1})" if len(reasons) > 1 else ""
    return f"{text} @ {first['file'].split('/')[-1]}:{first['line']}{more}"


def _pair(before: Any, after: Any, fmt: str = "{}") -> str:
    def text(value: Any) -> str:
        return "-" if value is None else fmt.format(value)
    return f"{text(before)} / {text(after)}"


def _yes(value: bool | None) -> str:
    return "-" if value is None else ("yes" if value else "**NO**")


def table(rows: list[dict[str, Any]], calls: int) -> list[str]:
    header = ["model", "breaks before (explain)", "breaks after", "graphs before/after",
              f"recompiles over {calls} calls before/after", "eager bit-identical",
              "compiled bit-identical", "latency before/after (ms, median)",
              "where the breaks are (before; top reason @ file:line)",
              "GraphMend breaks before → after"]
    lines = [
        "| " + " | ".join(header) + " |",
        "| --- | ---: | ---: | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for data in rows:
        graphmend = GRAPHMEND.get(data["model"])
        theirs = f"{graphmend[0]} → {graphmend[1]}" if graphmend else ""
        name = data["model"] + (f" ({data['dtype']})" if data["dtype"] != "float32" else "")
        if "error" in data:
            before = data.get("before")
            lines.append(f"| {name} | {before['explain']['breaks'] if before else '-'} | - | - | - "
                         f"| - | - | - | FAILED ({data['failed_arm']} arm): "
                         f"{data['error'].replace('|', '/')} | {theirs} |")
            continue
        b, a = data["before"], data["after"]
        lines.append(
            f"| {name} | {b['explain']['breaks']} | {a['explain']['breaks']} "
            f"| {_pair(b['explain']['graphs'], a['explain']['graphs'])} "
            f"| {_pair(b['compile']['recompiles'], a['compile']['recompiles'])} "
            f"| {_yes(data['eager_identical'])} | {_yes(data['compiled_identical'])} "
            f"| {_pair(median_ms(b['timings_s']), median_ms(a['timings_s']), '{:.2f}')} "
            f"| {_top_reason(b).replace('|', '/')} | {theirs} |")
    done = [d for d in rows if "error" not in d]
    before = sum(d["before"]["explain"]["breaks"] for d in done)
    after = sum(d["after"]["explain"]["breaks"] for d in done)
    removed = percent_removed(before, after)
    lines.append("")
    lines.append(f"Total over {len(done)} rows measured ({len(rows) - len(done)} failed): "
                 f"breaks {before} → {after}, "
                 f"{'n/a' if removed is None else f'{removed:.1f}%'} removed. "
                 f"GraphMend (published, its {GRAPHMEND_TOTAL[2]} rows): "
                 f"{GRAPHMEND_TOTAL[0]} → {GRAPHMEND_TOTAL[1]}, "
                 f"{percent_removed(*GRAPHMEND_TOTAL[:2]):.1f}% removed.")
    return lines


def disagreements(rows: list[dict[str, Any]]) -> list[str]:
    """Arms where ``torch._dynamo.explain`` and nosync-verify's counter saw a different
    number of graphs on the first call (each break splits one graph in two, so both
    counts of breaks follow from them)."""
    lines = []
    for data in rows:
        for kind in ("before", "after"):
            arm = data.get(kind)
            if not arm or arm["compile"].get("verifier_graphs") is None:
                continue
            explained, verified = arm["explain"]["graphs"], arm["compile"]["verifier_graphs"]
            if explained != verified:
                lines.append(f"Counts disagree: {data['model']} ({kind}): explain {explained} "
                             f"graphs, nosync-verify {verified}")
    return lines


def _verifier_count(compiled: dict[str, Any]) -> str:
    count = compiled.get("verifier_breaks")
    if count is None:
        return "?"
    return f">= {count}" if compiled.get("verifier_lower_bound") else str(count)


def break_sites(rows: list[dict[str, Any]]) -> list[str]:
    """Every break reason of every arm, with file:line and the code line."""
    lines: list[str] = []
    for data in rows:
        for kind in ("before", "after"):
            arm = data.get(kind)
            if not arm or not arm["explain"]["reasons"]:
                continue
            compiled = arm["compile"]
            lines.append(f"- {data['model']} ({kind}): explain {arm['explain']['breaks']} breaks, "
                         f"{arm['explain']['graphs']} graphs; compile run "
                         f"{compiled['breaks']} breaks, {compiled['graphs_first_call']} graphs; "
                         f"nosync-verify {compiled.get('verifier_graphs', '?')} graphs, "
                         f"{_verifier_count(compiled)} distinct break sites")
            sites = Counter((r["file"], r["line"], r["function"], r["code"], r["reason"][:140])
                            for r in arm["explain"]["reasons"])
            for (file, line, function, code, reason), count in sites.items():
                times = f" (×{count})" if count > 1 else ""
                lines.append(f"  - `{file}:{line}` in {function}: `{code}` — {reason}{times}")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models", help="comma-separated rows (default: all): "
                        + ",".join(ROWS_BY_NAME))
    parser.add_argument("--backend", default="aot_eager",
                        help="torch.compile backend for the compiled runs and the latency "
                             "(default aot_eager; inductor adds ~30 s of cold compile per arm)")
    parser.add_argument("--calls", type=int, default=24,
                        help="repeated compiled calls counted for recompiles (default 24)")
    parser.add_argument("--rounds", type=int, default=20, help="interleaved timing rounds")
    parser.add_argument("--calls-per-round", type=int, default=5,
                        help="timed calls per arm per round")
    parser.add_argument("--json", type=Path, help="write all data here")
    parser.add_argument("--keep", type=Path,
                        help="work in this folder and keep it (copy, logs, outputs)")
    parser.add_argument("--reuse-copy", type=Path,
                        help="a folder holding an already rewritten transformers/ (skip the fix)")
    parser.add_argument("--arm-timeout", type=float, default=600,
                        help="seconds an arm may stay silent")
    # Internal: the arm processes.
    parser.add_argument("--arm", choices=("before", "after"), help=argparse.SUPPRESS)
    parser.add_argument("--model", help=argparse.SUPPRESS)
    parser.add_argument("--workdir", help=argparse.SUPPRESS)
    parser.add_argument("--copy", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.arm:
        return run_arm(args)
    if args.calls < 20:
        parser.error("--calls must be at least 20")
    names = args.models.split(",") if args.models else [row.name for row in ROWS if row.default]
    unknown = [name for name in names if name not in ROWS_BY_NAME]
    if unknown:
        parser.error(f"unknown rows {unknown}; known: {', '.join(ROWS_BY_NAME)}")

    started = time.perf_counter()
    cpu_started = _children_cpu()
    if args.keep:
        args.keep.mkdir(parents=True, exist_ok=True)
        work = args.keep.resolve()
    else:
        work = Path(tempfile.mkdtemp(prefix="model_breaks_"))
    try:
        return _run(args, names, work, started, cpu_started)
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)


def _children_cpu() -> float:
    times = os.times()
    return times.children_user + times.children_system + times.user + times.system


def _run(args: argparse.Namespace, names: list[str], work: Path, started: float,
         cpu_started: float) -> int:
    import torch
    import transformers

    print(f"torch {torch.__version__}, transformers {transformers.__version__}, "
          f"backend {args.backend}, CPU: {platform.processor() or platform.machine()}, "
          f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}", flush=True)
    copy, fix = copy_and_fix(work, args.reuse_copy.resolve() if args.reuse_copy else None)
    if "wall_s" in fix:
        print(f"nosync-fix on the copy: {fix['wall_s']} s, {len(fix['changed_files'])} of "
              f"{fix['python_files']} files changed; {fix['summary']}", flush=True)
    rows = []
    for name in names:
        data = run_row(ROWS_BY_NAME[name], args, work, copy)
        rows.append(data)
        status = f"FAILED: {data['error']}" if "error" in data else (
            f"breaks {data['before']['explain']['breaks']} -> "
            f"{data['after']['explain']['breaks']}")
        print(f"  {name}: {status} ({data['wall_s']} s)", flush=True)

    wall = time.perf_counter() - started
    cpu = _children_cpu() - cpu_started
    print()
    print("\n".join(table(rows, args.calls)))
    print()
    print(f"Latency: compiled forward ({args.backend}), median of "
          f"{args.rounds * args.calls_per_round} calls per arm in {args.rounds} interleaved "
          f"rounds, 1 thread, on this CPU only. Run: {wall:.0f} s wall, {cpu:.0f} s CPU "
          f"(all processes), load average now {os.getloadavg()[0]:.1f}.")
    sites = break_sites(rows)
    if sites:
        print("\nBreak sites (torch._dynamo.explain):")
        print("\n".join(sites))

    for line in disagreements(rows):
        print(line)

    bad = [d["model"] for d in rows
           if ("error" in d and d.get("failed_arm") == "after")
           or d.get("eager_identical") is False or d.get("compiled_identical") is False]
    if args.json:
        args.json.write_text(json.dumps({
            "torch": torch.__version__, "transformers": transformers.__version__,
            "python": platform.python_version(), "backend": args.backend,
            "cpu_count": os.cpu_count(), "wall_s": round(wall, 1), "cpu_s": round(cpu, 1),
            "fix": fix, "rows": rows, "graphmend": GRAPHMEND, "failing": bad,
        }, indent=1, default=str))
    if bad:
        print(f"\nFailing rows (after arm failed or outputs differ): {', '.join(bad)}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
