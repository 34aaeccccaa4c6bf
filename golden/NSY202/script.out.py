import torch

model = torch.nn.Linear(4, 1)
data = [torch.randn(8, 4) for _ in range(3)]
outputs = []
for x in data:
    outputs.append(model(x).mean().detach())
if len({(v.dtype, v.device) for v in outputs}) == 1:
    outputs = torch.cat([v.reshape(1) for v in outputs]).tolist()
else:
    outputs = [v.item() for v in outputs]
print(outputs)
