# golden: --unsafe-fixes
import torch
import torch.nn.functional as F
from torch.utils.tensorboard import SummaryWriter


class Recorder:
    """Not a SummaryWriter: what it does with a tensor is its own affair."""

    def add_scalar(self, tag, value, step):
        self.last = value


def train(model, loader, log_dir):
    writer = SummaryWriter(log_dir)
    recorder = Recorder()
    for step, (x, y) in enumerate(loader):
        loss = F.mse_loss(model(x), y)
        # positive: tensors handed as they are, which the writer reads at once
        writer.add_scalar("train/loss", loss, step)
        writer.add_scalar("train/mean", torch.mean(y), global_step=step)
        writer.add_scalar(tag="train/sum", scalar_value=y.sum(), global_step=step)
        # edge: a handed tensor beside a read; a tensor as the step is left as it is
        writer.add_scalars("losses", {"mse": loss, "rmse": loss.sqrt().item()}, step)
        writer.add_scalar("train/loss_at", 1.0, loss.detach().argmax())
        # negative: host values, values of unknown kind, another class's method
        writer.add_scalar("constant", torch.tensor(1.0), step)
        writer.add_scalar("output", model(x), step)
        writer.add_scalar("float", 0.5, step)
        recorder.add_scalar("train/loss", loss, step)
        loss.backward()
