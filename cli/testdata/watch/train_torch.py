"""A small PyTorch training loop for gpuwizard watch's end-to-end tests.

It trains an MLP on random data, with DataLoader workers when asked, on the
device given (cpu by default), for a number of steps or seconds, and prints
"training on DEVICE" once torch is imported and the model is on its device.
"""
import argparse
import time

import torch
from torch.utils.data import DataLoader, TensorDataset

p = argparse.ArgumentParser()
p.add_argument("--device", default="cpu")
p.add_argument("--steps", type=int, default=0, help="stop after N steps (0: no limit)")
p.add_argument("--seconds", type=float, default=60, help="stop after S seconds")
p.add_argument("--workers", type=int, default=0, help="DataLoader worker processes")
a = p.parse_args()

torch.manual_seed(0)
device = torch.device(a.device)
model = torch.nn.Sequential(torch.nn.Linear(64, 256), torch.nn.ReLU(), torch.nn.Linear(256, 10)).to(device)
opt = torch.optim.SGD(model.parameters(), lr=0.01)
data = TensorDataset(torch.randn(4096, 64), torch.randint(0, 10, (4096,)))
loader = DataLoader(data, batch_size=128, shuffle=True, num_workers=a.workers, persistent_workers=a.workers > 0)
print("training on", next(model.parameters()).device, flush=True)
start, step = time.time(), 0
while True:
    for x, y in loader:
        x, y = x.to(device), y.to(device)
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        step += 1
        if step % 500 == 0:
            print("step", step, "loss", round(loss.item(), 4), flush=True)
        if (a.steps and step >= a.steps) or time.time() - start > a.seconds:
            print("done after", step, "steps", flush=True)
            raise SystemExit(0)
