# golden: --unsafe-fixes
import torch
import torch.nn.functional as F
from torch.utils.tensorboard import SummaryWriter


def train(model, loader, log_dir):
    writer = SummaryWriter(log_dir)
    for step, (x, y) in enumerate(loader):
        loss = F.mse_loss(model(x), y)
        writer.add_scalar("train/loss", loss.item(), step)
        writer.add_scalars("losses", {"mse": loss.item(), "rmse": loss.sqrt().item()}, step)


class Trainer:
    def __init__(self, log_dir):
        self.writer = SummaryWriter(log_dir)

    def train_step(self, model, x, y, step):
        loss = F.l1_loss(model(x), y)
        self.writer.add_scalar("train/l1", loss.item(), global_step=step)
        return loss
