import torch
import torch.nn.functional as F
import wandb
from accelerate import Accelerator


def train(model, loader):
    accelerator = Accelerator(log_with="wandb")
    run = wandb.init(project="demo")
    for step, (x, y) in enumerate(loader):
        loss = F.cross_entropy(model(x), y)
        wandb.log({"loss": loss.item()}, step=step)
        run.log({"loss": loss.item()})
        accelerator.log({"train_loss": loss.item()}, step=step)
