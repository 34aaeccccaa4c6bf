# golden: --unsafe-fixes --all-paths
import torch


class Encoder:
    def __init__(self, tokenizers, encoders):
        self.tokenizers = tokenizers
        self.encoders = encoders

    def encode(self, prompt, device):
        embeds = []
        for tokenizer, encoder in zip(self.tokenizers, self.encoders):
            ids = tokenizer(prompt, truncation=True, return_tensors="pt").input_ids
            full = tokenizer(prompt, padding="longest", return_tensors="pt").input_ids
            # both are CPU tensors here: nothing to wait for
            if full.shape[-1] >= ids.shape[-1] and not torch.equal(ids, full):
                print("the prompt was cut")
            ids = ids.to(device)
            embeds.append(encoder(ids))
        return embeds

    def moved_first(self, prompt, device):
        ids = self.tokenizers[0](prompt, return_tensors="pt").input_ids
        ids = ids.to(device)
        full = self.tokenizers[0](prompt, return_tensors="pt").input_ids.to(device)
        # `ids` was moved before the comparison: a device read, still reported
        if torch.equal(ids, full):
            return None
        return ids

    def moved_in_loop(self, prompt, device, rounds):
        ids = self.tokenizers[0](prompt, return_tensors="pt").input_ids
        full = self.tokenizers[0](prompt, return_tensors="pt").input_ids
        for _ in range(rounds):
            # on the second pass `ids` is the moved tensor: still reported
            if torch.equal(ids, full):
                print("same")
            ids = ids.to(device)
        return ids
