# golden: --unsafe-fixes
import torch
from torch.utils.tensorboard import SummaryWriter

writer = SummaryWriter()
weights = torch.randn(4)
writer.add_scalar("init/norm", weights.norm().item(), 0)
