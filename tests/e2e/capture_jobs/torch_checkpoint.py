"""A training job that saves checkpoints with torch.save: the real job `trainio capture` tests trace.

python3 torch_checkpoint.py make DIR   nothing to make (the job reads no dataset)
python3 torch_checkpoint.py run DIR    6 saves of a two-layer model's state dict (6 MiB: weights of
                                       1024 x 1024 and 512 x 1024 fp32, and their biases) into DIR,
                                       as DLIO saves (torch.save into a file opened by Python), 100 ms
                                       of training before each
"""
import os
import sys
import time

SAVES, COMPUTE = 6, 0.1


def run(folder):
    import torch

    model = torch.nn.Sequential(torch.nn.Linear(1024, 1024), torch.nn.ReLU(), torch.nn.Linear(1024, 512))
    os.makedirs(folder, exist_ok=True)
    for step in range(SAVES):
        time.sleep(COMPUTE)
        with open(os.path.join(folder, f"step{step}.pt"), "wb") as f:
            torch.save(model.state_dict(), f)


if __name__ == "__main__":
    if sys.argv[1] == "run":
        run(sys.argv[2])
