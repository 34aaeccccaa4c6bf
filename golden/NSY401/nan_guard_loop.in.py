# golden: --unsafe-fixes
import torch


class Guidance:
    def __init__(self, model, callback=None):
        self.model = model
        self.callback = callback

    def refine(self, latents: torch.Tensor, threshold: float, steps: int):
        loss = self.model(latents).mean()
        done = 0
        while loss.item() > threshold and done < steps:
            latents.requires_grad_(True)
            loss = self.model(latents).mean() * 10
            # the guard stops the loop before the callback sees a NaN loss
            if torch.isnan(loss):
                raise RuntimeError("loss is NaN")
            if self.callback is not None:
                self.callback(latents, loss)
            grad = torch.autograd.grad(loss, [latents])[0]
            latents = (latents - 0.1 * grad).detach()
            done += 1
        return latents, loss
