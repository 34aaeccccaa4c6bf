# A score summed from tensors a helper of the file makes on the CPU (minGPT's adder
# project: `results = []`, `results.append(...)`, `rt = torch.tensor(results)`, `return
# rt.sum()`) waits for no device when it is printed or tested; the loss, a device value,
# does.
import torch


def evaluate(results):
    correct = []
    for result in results:
        correct.append(result == "ok")
    rt = torch.tensor(correct, dtype=torch.float)
    return rt.sum()


def train(model, loader, results):
    top_score = 0
    for x in loader:
        loss = torch.relu(model(x)).mean()
        score = evaluate(results) + evaluate(results)
        if score > top_score:
            top_score = score
            print(f"new top score {score}")
        print(f"loss {loss:.4f}")
