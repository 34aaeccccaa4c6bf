# golden: --unsafe-fixes
from collections import OrderedDict

import torch.nn.functional as F

from timm.utils import AverageMeter


def train_one_epoch(model, loader, log_interval, _logger):
    losses_m = AverageMeter()
    top1_m = AverageMeter()
    shown_m = AverageMeter()
    for batch_idx, (images, target) in enumerate(loader):
        output = model(images)
        loss = F.cross_entropy(output, target)
        acc1 = (output.argmax(1) == target).float().mean() * 100
        losses_m.update(loss.item(), images.size(0))
        top1_m.update(acc1.item(), images.size(0))
        shown_m.update(loss.item(), images.size(0))
        if batch_idx % log_interval == 0:
            _logger.info(f"Loss: {shown_m.val:#.3g} ({shown_m.avg:#.3g}) Acc@1: {top1_m.avg:>7.3f}")
    return OrderedDict([("loss", losses_m.avg), ("top1", top1_m.avg)])


def evaluate(model, loader, meter):
    for images, target in loader:
        meter.update(F.cross_entropy(model(images), target).item())
