# golden: --unsafe-fixes
import torch
import wandb
from torch.utils.tensorboard import SummaryWriter
from tqdm import tqdm


def train(model, loader, optimizer):
    writer = SummaryWriter()
    bar = tqdm(loader)
    for step, x in enumerate(bar):
        lr = optimizer.param_groups[0]["lr"]
        writer.add_scalar("lr", lr, step)
        bar.set_postfix(step=step, lr=lr)
        wandb.log({"lr": lr})
