# golden: --unsafe-fixes --select NSY101,NSY103,NSY301,NSY502
import math

import torch
from torch import nn
from torch.nn import init


def init_biases(model: nn.Module) -> None:
    # Fans and gains are Python numbers: nothing here reads the device.
    for module in model.modules():
        if isinstance(module, nn.Linear) and module.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(module.weight)
            bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
            init.uniform_(module.bias, -bound, bound)
            fan = nn.init._calculate_correct_fan(module.weight, "fan_in")
            gain = torch.nn.init.calculate_gain("leaky_relu", 0.2)
            if gain * fan > 1:
                print(f"scale {gain / math.sqrt(fan):.3f}")


def rescale(model: nn.Module) -> None:
    # What the other functions of torch.nn.init return is a tensor: still a device test.
    for module in model.modules():
        weight = init.orthogonal_(module.weight)
        scale = 0.5 if weight.abs().max() > 1 else 1.0
        module.weight.data.mul_(scale)
