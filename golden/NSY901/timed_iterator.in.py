import torch


def train_one_epoch(model, loader, optimizer, metric_logger):
    # the iterator may time each step (code nosync-fix cannot see): said so
    for step, (x, y) in enumerate(metric_logger.log_every(loader, 10, "Epoch:")):
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
        optimizer.step()
        torch.cuda.synchronize()
    # a plain data loader, or range: nothing times the step
    for step, (x, y) in enumerate(loader):
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
        torch.cuda.synchronize()
    for step in range(10):
        model(torch.zeros(3)).sum().backward()
        torch.cuda.synchronize()
