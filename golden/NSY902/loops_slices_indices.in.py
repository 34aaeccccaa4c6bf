import torch


def decode_step(logits: torch.Tensor, lengths: torch.Tensor, vocab):
    for _ in range(2):
        for position in range(lengths.max().item()):
            pass
        head = logits[: lengths.min().item()]
        window = logits[int(lengths[0]) : int(lengths[1])]
        best = logits[logits.argmax().item()]
        word = vocab[logits.argmax().item()]
    return head, window, best, word
