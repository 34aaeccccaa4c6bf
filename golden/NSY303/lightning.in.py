# golden: --unsafe-fixes
import lightning as L
import torch
import torch.nn.functional as F


class Classifier(L.LightningModule):
    def training_step(self, batch, batch_idx):
        x, y = batch
        logits = self(x)
        loss = F.cross_entropy(logits, y)
        acc = (logits.argmax(dim=1) == y).float().mean()
        self.log("train/loss", loss.item(), prog_bar=True)
        self.log("train/acc", value=float(acc))
        self.log_dict({"loss": loss.item(), "lr": 0.1})
        self.log("train/loss_pct", loss.item() * 100)
        return loss
