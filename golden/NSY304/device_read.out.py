# golden: --select NSY301,NSY304
import torch
from nosync_fix.runtime import call_in_graph, deferred_print, fmt, item


@torch.compile(backend="aot_eager")
def step(x):
    loss = (x * 2).sum()
    deferred_print(fmt("loss {:.4f}", item(loss)))  # NSY301's
    call_in_graph(__name__, "print", "step done")
    return loss
