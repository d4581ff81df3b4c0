"""A PyTorch DataLoader over JPEG files decoded with PIL: a real job `trainio capture` tests trace.

python3 torch_jpeg.py make DIR   writes the dataset (not traced)
python3 torch_jpeg.py run DIR    trains: 3 workers, batch 4, shuffled, 1 epoch, 10 ms compute a batch
"""
import os
import sys
import time

import numpy as np

FILES, SIDE = 48, 160
BATCH, WORKERS, EPOCHS, COMPUTE = 4, 3, 1, 0.010


def make(folder):
    from PIL import Image

    os.makedirs(folder, exist_ok=True)
    rng = np.random.default_rng(2)
    for i in range(FILES):
        pixels = rng.integers(0, 255, size=(SIDE, SIDE), dtype=np.uint8)
        Image.fromarray(pixels, mode="L").save(os.path.join(folder, f"img_{i:02d}_of_{FILES}.jpeg"), quality=75)


def run(folder):
    import torch
    from PIL import Image
    from torch.utils.data import DataLoader, Dataset

    class Jpeg(Dataset):
        def __init__(self):
            self.files = sorted(os.path.join(folder, f) for f in os.listdir(folder))

        def __len__(self):
            return len(self.files)

        def __getitem__(self, i):
            with Image.open(self.files[i]) as image:
                return torch.from_numpy(np.asarray(image.convert("L")).copy())

    loader = DataLoader(Jpeg(), batch_size=BATCH, shuffle=True, num_workers=WORKERS, prefetch_factor=2)
    for _ in range(EPOCHS):
        for _batch in loader:
            time.sleep(COMPUTE)


if __name__ == "__main__":
    {"make": make, "run": run}[sys.argv[1]](sys.argv[2])
