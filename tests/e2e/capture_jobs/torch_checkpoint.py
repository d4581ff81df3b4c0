"""A job that saves checkpoints with torch.save between compute phases: a real job `trainio
capture` tests trace.

python3 torch_checkpoint.py make DIR   creates the checkpoint folder (not traced)
python3 torch_checkpoint.py run DIR    4 saves of a ~4 MiB model, 0.2 s of compute before each
"""
import os
import sys
import time

SAVES, COMPUTE = 4, 0.2


def make(folder):
    os.makedirs(folder, exist_ok=True)


def run(folder):
    import torch

    model = torch.nn.Sequential(torch.nn.Linear(512, 1024), torch.nn.Linear(1024, 512))
    for step in range(SAVES):
        time.sleep(COMPUTE)
        with open(os.path.join(folder, f"model_step{step}.pt"), "wb") as f:  # as DLIO saves
            torch.save(model.state_dict(), f)


if __name__ == "__main__":
    {"make": make, "run": run}[sys.argv[1]](sys.argv[2])
