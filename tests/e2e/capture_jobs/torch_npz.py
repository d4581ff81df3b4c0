"""A PyTorch DataLoader over NPZ files read with np.load: the real job `trainio capture` tests trace.

python3 torch_npz.py make DIR   writes the dataset (not traced)
python3 torch_npz.py run DIR    trains: 2 workers, batch 4, shuffled, 2 epochs, 5 ms compute a batch
"""
import os
import sys
import time

import numpy as np

FILES, RECORD = 32, 65536
BATCH, WORKERS, EPOCHS, COMPUTE = 4, 2, 2, 0.005


def make(folder):
    os.makedirs(folder, exist_ok=True)
    rng = np.random.default_rng(1)
    for i in range(FILES):
        x = rng.integers(0, 255, size=(256, RECORD // 256, 1), dtype=np.uint8)
        np.savez(os.path.join(folder, f"img_{i:02d}_of_{FILES}.npz"), x=x, y=np.zeros(1, dtype=np.uint8))


def run(folder):
    import torch
    from torch.utils.data import DataLoader, Dataset

    class Npz(Dataset):
        def __init__(self):
            self.files = sorted(os.path.join(folder, f) for f in os.listdir(folder))

        def __len__(self):
            return len(self.files)

        def __getitem__(self, i):
            return torch.from_numpy(np.load(self.files[i])["x"])

    loader = DataLoader(Npz(), batch_size=BATCH, shuffle=True, num_workers=WORKERS, prefetch_factor=2)
    for _epoch in range(EPOCHS):
        for _batch in loader:
            time.sleep(COMPUTE)

if __name__ == "__main__":
    {"make": make, "run": run}[sys.argv[1]](sys.argv[2])
