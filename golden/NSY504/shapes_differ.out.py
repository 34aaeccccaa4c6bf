# golden: --unsafe-fixes
import torch


def encode_prompts(prompts, tokenizers, text_encoders, max_length: int):
    embeddings = []
    for prompt, tokenizer, encoder in zip(prompts, tokenizers, text_encoders):
        text_input_ids = tokenizer(prompt, max_length=max_length, truncation=True).input_ids
        untruncated_ids = tokenizer(prompt, padding="longest").input_ids
        if untruncated_ids.shape[-1] >= text_input_ids.shape[-1] and not (
            text_input_ids.shape == untruncated_ids.shape
            and (text_input_ids == untruncated_ids).all()
        ):
            print("truncated")
        embeddings.append(encoder(text_input_ids))
        if torch.equal(encoder(text_input_ids), embeddings[0]):
            print("same as the first")
    return embeddings
