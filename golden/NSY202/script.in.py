import torch

model = torch.nn.Linear(4, 1)
data = [torch.randn(8, 4) for _ in range(3)]
outputs = []
for x in data:
    outputs.append(model(x).mean().item())
print(outputs)
