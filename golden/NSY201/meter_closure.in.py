# golden: --unsafe-fixes
import torch.nn.functional as F

from utils import AverageMeter, ProgressMeter

losses_global = AverageMeter()


def validate(model, loader):
    losses = AverageMeter()
    top1 = AverageMeter()

    def run_validate(loader):
        for images, target in loader:
            output = model(images)
            loss = F.cross_entropy(output, target)
            acc1 = (output.argmax(1) == target).float().mean() * 100
            losses.update(loss.item(), images.size(0))
            top1.update(acc1.item(), images.size(0))

    progress = ProgressMeter(len(loader), [losses])
    run_validate(loader)
    progress.display_summary()
    print(f"Acc@1 {top1.avg:.3f}")


def train(model, loader):
    for images, target in loader:
        loss = F.cross_entropy(model(images), target)
        losses_global.update(loss.item(), images.size(0))
