# Regression (whisper's segmenting loop): tokens made by torch.tensor from a list are a CPU
# tensor; an annotated binding of it, and a test of a length, read no device.
import torch


def segments(results, begin: int, record):
    for result in results:
        tokens = torch.tensor(result.tokens)
        flags: torch.Tensor = tokens.ge(begin)
        stamps = tokens[flags.nonzero().flatten()]
        if len(stamps) > 0 and stamps[-1].item() != begin:  # negative: a CPU tensor, a length
            record(stamps)
        if flags[-1]:  # negative: an annotated binding of a CPU tensor
            record(flags)


def device_segments(model, batches, begin: int, record):
    for batch in batches:
        tokens: torch.Tensor = model(batch).argmax(-1)
        if len(tokens) > 0 and tokens[-1].item() != begin:  # positive: the model's output
            record(tokens)
        flags: torch.Tensor = torch.tensor([begin, begin + 1]).to(tokens.device)
        if flags[-1]:  # edge: annotated, but moved to the model's device
            record(flags)
