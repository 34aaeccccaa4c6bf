# golden: --unsafe-fixes
# Messages fit the code (issue 20, item 4): a metric logged under `if batch_idx % N == 0:`
# reads the device "whenever it runs (every N steps)", not "on every step".
import lightning as L
import torch.nn.functional as F


class Regressor(L.LightningModule):
    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = F.mse_loss(self(x), y)
        self.log("train/loss", loss.item())
        if batch_idx % 50 == 0:
            self.log("train/loss_50", loss.item())
        return loss
