import sys

import torch


def train(model, data, optimizer):
    for step, batch in enumerate(data):
        loss = model(batch).mean()
        loss.backward()
        optimizer.step()
        print("loss", loss.item(), sep=": ")
        print(step, -loss.item(), round(loss.item(), 3), end=" | ", flush=True)
        print("grad norm", float(torch.linalg.vector_norm(batch)), file=sys.stderr)
        print(batch.sum(dim=0).tolist())
