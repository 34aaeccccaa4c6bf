# golden: --unsafe-fixes
import torch


def reinforce(policy, episodes, gamma: float):
    advantage = 0.0
    losses = []
    for obs, ret in episodes:
        log_prob = torch.log_softmax(policy(obs), dim=-1)[0]
        value = policy(obs).sum()
        advantage = gamma * ret - value.item()
        losses.append(-log_prob * advantage)
    print("last advantage", advantage)
    return torch.stack(losses).sum()


def unbound_before(policy, episodes):
    losses = []
    for obs, ret in episodes:
        log_prob = torch.log_softmax(policy(obs), dim=-1)[0]
        value = policy(obs).sum()
        adv = ret - value.item()
        losses.append(-log_prob * adv)
    print(adv)
    return losses


def every_step(policy, episodes, log):
    for obs, ret in episodes:
        log_prob = torch.log_softmax(policy(obs), dim=-1)[0]
        adv = ret - policy(obs).sum().item()
        loss = -log_prob * adv
        log(adv)
        loss.backward()
