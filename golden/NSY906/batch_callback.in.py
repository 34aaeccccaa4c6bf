import torch


def main(trainer, record):
    def batch_end(trainer):
        record(trainer.loss.item())  # positive: run by the trainer once per batch

    def epoch_end(trainer):
        record(trainer.loss.item())  # negative: once per epoch

    def step_start(trainer):
        record(trainer.loss.item())  # edge: registered with add_callback for a step event

    def unregistered(trainer):
        record(trainer.loss.item())  # negative: never registered

    trainer.set_callback("on_batch_end", batch_end)
    trainer.set_callback("on_epoch_end", epoch_end)
    trainer.add_callback("on_train_step_start", step_start)
    trainer.run()
    return torch.zeros(1)
