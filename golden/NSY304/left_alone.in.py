import torch
from nosync_fix.runtime import call_in_graph


def print(*args):  # shadows the builtin
    pass


class Block(torch.nn.Module):
    def forward(self, x):
        print("not the builtin")
        if not torch.compiler.is_compiling():
            __builtins__["print"]("guarded")
        call_in_graph(__name__, "print", "already rewritten")
        return x
