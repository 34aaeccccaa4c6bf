import torch
import torch.nn.functional as F


def loss_function(recon_x, x, mu, logvar):
    bce = F.binary_cross_entropy(recon_x, x, reduction="sum")
    kld = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp())
    return bce + kld


def helper_of_unknown_type(x):
    if x is None:
        return 0
    return x.sum()


def evaluate(model, loader):
    test_loss = 0
    other = 0
    with torch.no_grad():
        for data in loader:
            recon, mu, logvar = model(data)
            test_loss += loss_function(recon, data, mu, logvar).detach().double()
            other += helper_of_unknown_type(data).item()
        test_loss = (
            test_loss.item() if isinstance(test_loss, torch.Tensor) else test_loss
        )
    test_loss /= len(loader.dataset)
    print("====> Test set loss: {:.4f}".format(test_loss), other)
