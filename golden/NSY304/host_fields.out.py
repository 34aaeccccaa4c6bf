# golden: --unsafe-fixes
import logging

import torch
from nosync_fix.runtime import call_in_graph

logger = logging.getLogger(__name__)


class Padder(torch.nn.Module):
    def __init__(self, config):
        super().__init__()
        self.config = config

    def forward(self, input_ids: torch.Tensor, scale: torch.Tensor, name):
        window = (
            self.config.attention_window
            if isinstance(self.config.attention_window, int)
            else max(self.config.attention_window)
        )
        batch_size, seq_len = input_ids.shape[:2]
        padding = (window - seq_len % window) % window
        width = 6
        if padding > 0:
            # fixed, unsafely: fields of host numbers and strings
            call_in_graph(
                __name__, "logger.warning_once",
                f"Input ids are automatically padded to a multiple of {window}"
            )
            call_in_graph(
                __name__,
                "logger.warning_once",
                f"padded {seq_len} by {padding} to {seq_len + padding}",
            )
            call_in_graph(
                __name__,
                "print",
                f"{type(self).__name__}: {len(input_ids)} rows, {padding:>{width}}",
            )
            call_in_graph(
                __name__, "logger.warning_once", "window " f"{window}" " tokens"
            )
            call_in_graph(
                __name__, "logger.warning_once",
                f"{self.__class__.__name__} pads {self.__class__.__qualname__}"
                f" for a {name.__class__.__name__}"
            )
            # left alone: a tensor, a shape, a value that may be a tensor
            logger.warning_once(f"scale {scale}")
            logger.warning_once(f"shape {input_ids.shape}")
            print(f"size {input_ids.size()}")
            logger.warning_once(f"name {name}")
            logger.warning_once(f"state {self.__dict__}")
            # NSY302's: a read of the device
            logger.warning_once(f"scale {scale.item():.3f}")
        return input_ids * scale
