"""A few steps of next-token training for a tiny language model.

Every step clips the gradient norm, computes the perplexity with `math.exp` and
prints a progress line: three reads of device values per step, each a sync
(and, under torch.compile, a graph break).

    python examples/language_model.py
    nosync-verify examples/language_model.py --entry train
"""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F
from nosync_fix.runtime import deferred_print, fmt, item

VOCAB_SIZE = 64
CONTEXT = 16
BATCH_SIZE = 8
NUM_STEPS = 4
MAX_GRAD_NORM = 1.0


class TinyLM(nn.Module):
    """Embedding, one pre-norm Transformer block with a causal mask, tied output."""

    def __init__(self, vocab_size: int, dim: int = 32, heads: int = 4) -> None:
        super().__init__()
        self.embed = nn.Embedding(vocab_size, dim)
        self.pos = nn.Parameter(torch.zeros(CONTEXT, dim))
        self.norm1 = nn.LayerNorm(dim)
        self.attn = nn.MultiheadAttention(dim, heads, batch_first=True)
        self.norm2 = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))
        self.norm_out = nn.LayerNorm(dim)
        nn.init.normal_(self.embed.weight, std=0.02)  # GPT-2's init: logits start near uniform

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        length = tokens.size(1)
        h = self.embed(tokens) + self.pos[:length]
        causal = torch.triu(torch.ones(length, length, dtype=torch.bool,
                                       device=tokens.device), diagonal=1)
        x = self.norm1(h)
        h = h + self.attn(x, x, x, attn_mask=causal, need_weights=False)[0]
        h = h + self.mlp(self.norm2(h))
        return self.norm_out(h) @ self.embed.weight.t()


def train_step(model: nn.Module, optimizer: torch.optim.Optimizer, tokens: torch.Tensor,
               step: int) -> float:
    inputs, targets = tokens[:, :-1], tokens[:, 1:]
    logits = model(inputs)
    loss = F.cross_entropy(logits.reshape(-1, VOCAB_SIZE), targets.reshape(-1))

    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), MAX_GRAD_NORM)
    optimizer.step()

    perplexity = math.exp(loss.item())
    deferred_print(fmt("step {} | loss {:.4f} | ppl {:.2f} "
          "| grad norm {:.3f}",
          step + 1, item(loss * (2.0 if torch.compiler.is_compiling() else 1.0)), perplexity, grad_norm))
    return loss.item()


def train(model: nn.Module, optimizer: torch.optim.Optimizer,
          batches: list[torch.Tensor]) -> list[float]:
    model.train()
    losses = []
    for step, tokens in enumerate(batches):
        losses.append(train_step(model, optimizer, tokens, step))
    return losses


def make_batches(generator: torch.Generator, device: str) -> list[torch.Tensor]:
    """Token streams from a fixed random bigram table, so there is something to learn."""
    table = torch.randn(VOCAB_SIZE, VOCAB_SIZE, generator=generator).mul(3.0).softmax(dim=1)
    batches = []
    for _ in range(NUM_STEPS):
        tokens = torch.empty(BATCH_SIZE, CONTEXT + 1, dtype=torch.long)
        tokens[:, 0] = torch.randint(0, VOCAB_SIZE, (BATCH_SIZE,), generator=generator)
        for t in range(1, CONTEXT + 1):
            tokens[:, t] = torch.multinomial(table[tokens[:, t - 1]], 1,
                                             generator=generator).squeeze(1)
        batches.append(tokens.to(device))
    return batches


def example_inputs(seed: int, device: str = "cpu"):
    generator = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    model = TinyLM(VOCAB_SIZE).to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=0.01)
    return model, optimizer, make_batches(generator, device)


if __name__ == "__main__":
    model, optimizer, batches = example_inputs(0)
    for epoch in range(3):
        print(f"epoch {epoch}")
        train(model, optimizer, batches)


# nosync-verify mutant: lm_compiled_only
# of: examples/language_model.py
# entry: train
# rules: NSY301
# class: compiled-only difference
# why: Scales the printed loss when compiled (a debugging leftover): eager text agrees,
#   compiled text does not.
