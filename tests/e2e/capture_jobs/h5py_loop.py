"""An h5py loop over the samples of HDF5 files, in order: a real job `trainio capture` tests trace.

python3 h5py_loop.py make DIR   writes the dataset (not traced)
python3 h5py_loop.py run DIR    reads every sample of every file, 2 epochs, 2 ms compute a sample
"""
import os
import sys
import time

import numpy as np

FILES, SAMPLES, SHAPE = 4, 16, (64, 256)
EPOCHS, COMPUTE = 2, 0.002


def make(folder):
    import h5py

    os.makedirs(folder, exist_ok=True)
    rng = np.random.default_rng(3)
    for i in range(FILES):
        with h5py.File(os.path.join(folder, f"img_{i}_of_{FILES}.h5"), "w") as f:
            f.create_dataset("records", data=rng.integers(0, 255, size=(SAMPLES,) + SHAPE, dtype=np.uint8))


def run(folder):
    import h5py

    files = sorted(os.path.join(folder, f) for f in os.listdir(folder))
    handles = [h5py.File(path, "r") for path in files]
    for _ in range(EPOCHS):
        for f in handles:
            records = f["records"]
            for i in range(records.shape[0]):
                _sample = records[i]
                time.sleep(COMPUTE)
    for f in handles:
        f.close()


if __name__ == "__main__":
    {"make": make, "run": run}[sys.argv[1]](sys.argv[2])
