# golden: --unsafe-fixes
import torch
import torch.nn.functional as F

from utils import SmoothedValue, StepMeter


class AverageMeter:
    def __init__(self, name):
        self.name = name
        self.sum = 0
        self.count = 0

    def update(self, val, n=1):
        self.sum += val * n
        self.count += n


def train(model, loader, optimizer, stats, pbar):
    losses = AverageMeter("Loss")
    steps = StepMeter()
    smooth = SmoothedValue()
    for images, target in loader:
        output = model(images)
        loss = F.cross_entropy(output, target)
        acc1 = (output.argmax(1) == target).float().mean() * 100
        losses.update(loss.item(), images.size(0))
        steps.update(loss.detach())
        smooth.update(loss.item())
        stats.update(acc1.item())
        pbar.update(int((target > 0).sum()))
        losses.update(output[0, 0].item())
    print(losses.sum / losses.count)


def not_meters(model, loader, parameter, stats):
    for x in loader:
        loss = model(x).sum()
        parameter.update(loss.item())
        stats.update(loss.item())
