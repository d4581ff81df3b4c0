"""A plain sequential reader of TFRecord shards (length, masked CRC, data, masked CRC), as a
TensorFlow input job reads them: a real job `trainio capture` tests trace.

python3 tfrecord_reader.py make DIR   writes the shards (not traced)
python3 tfrecord_reader.py run DIR    reads every record of every shard in order, 1 epoch, 1 ms a record
"""
import os
import struct
import sys
import time

SHARDS, RECORDS, RECORD = 4, 32, 16384
EPOCHS, COMPUTE = 1, 0.001


def _table():
    table = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        table.append(c)
    return table


TABLE = _table()


def masked_crc(data):
    crc = 0xFFFFFFFF
    for b in data:
        crc = TABLE[(crc ^ b) & 0xFF] ^ (crc >> 8)
    crc ^= 0xFFFFFFFF
    return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def make(folder):
    os.makedirs(folder, exist_ok=True)
    payload = bytes(range(256)) * (RECORD // 256)
    data_crc = masked_crc(payload)  # every record holds the same bytes: one CRC to compute
    for s in range(SHARDS):
        with open(os.path.join(folder, f"part_{s}_of_{SHARDS}.tfrecord"), "wb") as f:
            for _ in range(RECORDS):
                length = struct.pack("<Q", len(payload))
                f.write(length + struct.pack("<I", masked_crc(length)) + payload + struct.pack("<I", data_crc))


def run(folder):
    for _ in range(EPOCHS):
        for name in sorted(os.listdir(folder)):
            with open(os.path.join(folder, name), "rb") as f:
                while True:
                    head = f.read(12)
                    if len(head) < 12:
                        break
                    (length,) = struct.unpack("<Q", head[:8])
                    f.read(length)
                    f.read(4)
                    time.sleep(COMPUTE)


if __name__ == "__main__":
    {"make": make, "run": run}[sys.argv[1]](sys.argv[2])
