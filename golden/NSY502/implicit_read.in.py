import math

import torch


def rescale(weights):
    # No `.item()` in sight: math.sqrt reads the tensor with __float__. The pre-filter
    # once skipped such a file (a read it did not see).
    for w in weights:
        norm = torch.linalg.vector_norm(w)
        bound = 1 / math.sqrt(norm)
        w.uniform_(-bound, bound)
