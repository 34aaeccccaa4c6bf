# golden: --unsafe-fixes
import torch


def pick_frames(dataset, per_task):
    # `.to_numpy()` of a pyarrow or pandas column is a numpy array: its `.tolist()` reads
    # no device, and `.detach()` would fail on it.
    task_arr = dataset.hf_dataset.data.column("task_index").to_numpy()
    selected = []
    for t in sorted(set(task_arr.tolist())):
        frames = (task_arr == t).nonzero()[0][:per_task]
        selected.extend(frames.tolist())  # negative: numpy
    return selected


def pick_rows(model, batches):
    selected = []
    for batch in batches:
        labels = model(batch).argmax(-1)
        rows = (labels == 3).nonzero()[:, 0]
        selected.extend(rows.tolist())  # positive: a tensor
        copied = labels.numpy()
        selected.extend(copied.tolist())  # edge: already a numpy copy
    return selected
