import logging

import torch
from torch.utils.tensorboard import SummaryWriter

logger = logging.getLogger(__name__)


def evaluate(model, loader, device):
    writer = SummaryWriter()
    preds, labels = [], []
    on_device = torch.zeros(len(loader), device=device)
    for step, (inputs, targets) in enumerate(loader):
        logits = model(inputs).detach()
        preds.append(logits.cpu())
        labels.extend(targets.tolist())
        print(logits.tolist())
        logger.info("logits %s", logits.cpu())
        writer.add_scalar("max", logits.max().cpu(), step)
        sizes = torch.split(logits, targets.tolist())
        moved = logits.to(device)
        on_device[step] = logits.sum()
    final = logits.cpu()
    return preds, labels, sizes, moved, final


def drop_path_rates(drop_path_rate: float, depths: list):
    total = sum(depths)
    stages = [x.tolist() for x in torch.linspace(0, drop_path_rate, total, device="cpu").split(depths)]
    rates = [x.item() for x in torch.linspace(0, drop_path_rate, total)]
    table = torch.arange(10)
    for row in range(3):
        values = table.tolist()
    return stages, rates, values
