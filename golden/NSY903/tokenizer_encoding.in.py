# A tokenizer's encoding is a mapping of CPU tensors: storing a moved tensor under a key
# copies nothing into it (llm-foundry's hf_generate.py). `encode` gives a tensor, a buffer.
import torch


def generate(tokenizer, model, batches):
    for batch in batches:
        encoded = tokenizer(batch, return_tensors="pt", padding=True)
        for key, value in encoded.items():
            encoded[key] = value.to(model.device)
        model.generate(**encoded)


def fill_encoded_ids(tokenizer, prompts):
    for prompt in prompts:
        ids = tokenizer.encode(prompt, return_tensors="pt")
        scores = torch.randn(ids.shape[-1], device="cuda")
        ids[0, 0] = scores.argmax()
        print(ids)


def fill_batch_encoding(tokenizer, prompts):
    for prompt in prompts:
        encoded = tokenizer(prompt, return_tensors="pt")
        scores = torch.randn(3, device="cuda")
        encoded["best"] = scores.argmax()
        print(encoded)
