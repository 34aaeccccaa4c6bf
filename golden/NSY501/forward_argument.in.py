# golden: --unsafe-fixes
import torch


class TemperatureScaling(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.log_temperature = torch.nn.Parameter(torch.tensor(0.5))

    def forward(self, logits):
        temperature = self.log_temperature.exp().item()
        return logits / temperature
