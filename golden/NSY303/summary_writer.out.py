# golden: --unsafe-fixes
import torch
import torch.nn.functional as F
from torch.utils.tensorboard import SummaryWriter
from nosync_fix.runtime import deferred_call, item


def train(model, loader, log_dir):
    writer = SummaryWriter(log_dir)
    for step, (x, y) in enumerate(loader):
        loss = F.mse_loss(model(x), y)
        deferred_call(writer.add_scalar, "train/loss", item(loss), step)
        deferred_call(
            writer.add_scalars,
            "losses",
            {"mse": item(loss), "rmse": item(loss.sqrt())},
            step,
        )


class Trainer:
    def __init__(self, log_dir):
        self.writer = SummaryWriter(log_dir)

    def train_step(self, model, x, y, step):
        loss = F.l1_loss(model(x), y)
        deferred_call(self.writer.add_scalar, "train/l1", item(loss), global_step=step)
        return loss
