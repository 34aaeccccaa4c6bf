# golden: --unsafe-fixes
# Regression (issue 20, every SDXL-family pipeline's encode_prompt): the ids come from a
# tokenizer with return_tensors="pt", CPU tensors: torch.equal waits for no device, so
# there is no finding. Ids moved to the device with .to(device) still get one.
import torch


def encode_prompt(tokenizers, text_encoders, prompt, device):
    embeds = []
    for tokenizer, text_encoder in zip(tokenizers, text_encoders):
        text_inputs = tokenizer(prompt, padding="max_length", max_length=77,
                                truncation=True, return_tensors="pt")
        text_input_ids = text_inputs.input_ids
        untruncated_ids = tokenizer(prompt, padding="longest", return_tensors="pt").input_ids
        if untruncated_ids.shape[-1] >= text_input_ids.shape[-1] and not torch.equal(
            text_input_ids, untruncated_ids
        ):
            print("truncated")
        on_device = tokenizer(prompt, return_tensors="pt").input_ids.to(device)
        reference = text_input_ids.to(device)
        same = 1.0 * torch.equal(on_device, reference)
        embeds.append(text_encoder(on_device) * same)
    return embeds
