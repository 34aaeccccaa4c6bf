# golden: --unsafe-fixes
# Regression (a batch-inference script, a chunked video pipeline): `.cpu()`, `.to("cpu")`
# and `.numpy()` copies of whole outputs are reported, not collected on the device: kept
# there until the loop ends they would hold the whole loop's outputs in device memory,
# where the original freed each step's device copy. 0-dim copies are still collected.
import torch
import torch.nn.functional as F
from nosync_fix.runtime import to_host


@torch.inference_mode()
def predict(net, batches, k):
    scores = []
    picks = []
    for images in batches:
        logits = net(images).softmax(-1)
        logits, idx = logits.topk(k)
        picks.append(idx.cpu().numpy())
        scores.append(logits.float().cpu().numpy())
    return scores, picks


def render(decoder, chunks, denoise):
    frames = []
    states = []
    for chunk in chunks:
        state = denoise(chunk)
        frames.append(decoder(state).detach().cpu())
        states.append(state.detach().to("cpu"))
    return torch.cat(frames, dim=2), states


def classes(net, batches):
    preds = []
    for images in batches:
        preds.append(torch.argmax(net(images), dim=1).cpu())
    return preds


# Positive: 0-dim tensors (a loss, a full reduction) are small; collected on the device.
def losses(net, batches):
    per_step = []
    peaks = []
    unknown = []
    for images, labels in batches:
        loss = F.cross_entropy(net(images), labels)
        per_step.append(loss.detach())
        peaks.append(torch.amax(net(images)).detach())
        # Edge: `.amax()` of a value not known to be a tensor is not known to be 0-dim.
        unknown.append(net(images).amax().to("cpu").numpy())
    per_step = to_host(per_step, "cpu")
    peaks = to_host(peaks, "numpy")
    return per_step, peaks, unknown


# Edge: the list is also read in the loop; the finding still says why a device copy of
# the whole tensor is wrong, not "collect the tensors".
def chunked(decoder, chunks):
    frames = []
    for chunk in chunks:
        frames.append(decoder(chunk).cpu())
        if len(frames) > 1 and frames[-2] is None:
            break
    return frames
