"""An independent TFRecord reader for the tests, written from TensorFlow's format description
(not from trainio's code): record framing, masked CRC-32C of length and data, and the
tf.train.Example protobuf."""
import struct


def _crc32c_table():
    table = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        table.append(c)
    return table


_TABLE = _crc32c_table()


def crc32c(data):
    crc = 0xFFFFFFFF
    for b in data:
        crc = _TABLE[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


def masked_crc(data):
    crc = crc32c(data)
    return ((((crc >> 15) | (crc << 17)) & 0xFFFFFFFF) + 0xA282EAD8) & 0xFFFFFFFF


def _varint(buf, pos):
    result, shift = 0, 0
    while True:
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if not b & 0x80:
            return result, pos
        shift += 7


def _fields(buf):
    """Yields (field number, wire type, value) of a serialized protobuf message."""
    pos = 0
    while pos < len(buf):
        key, pos = _varint(buf, pos)
        number, wire = key >> 3, key & 7
        if wire == 2:
            length, pos = _varint(buf, pos)
            yield number, wire, buf[pos:pos + length]
            pos += length
        elif wire == 0:
            value, pos = _varint(buf, pos)
            yield number, wire, value
        else:
            raise ValueError(f"unexpected wire type {wire}")


def parse_example(data):
    """{feature name: ('bytes', [values]) | ('int64', [values]) | ('float', [values])}"""
    features = {}
    for number, _, body in _fields(data):
        assert number == 1, "Example has only field 1 (features)"
        for n2, _, entry in _fields(body):
            assert n2 == 1, "Features has only field 1 (the feature map)"
            key, value = None, None
            for n3, _, part in _fields(entry):
                if n3 == 1:
                    key = part.decode()
                elif n3 == 2:
                    value = part
            for kind, _, lst in _fields(value):
                if kind == 1:
                    features[key] = ("bytes", [v for _, _, v in _fields(lst)])
                elif kind == 3:
                    values = []
                    for _, wire, v in _fields(lst):
                        if wire == 2:  # packed
                            pos = 0
                            while pos < len(v):
                                x, pos = _varint(v, pos)
                                values.append(x)
                        else:
                            values.append(v)
                    features[key] = ("int64", values)
                elif kind == 2:
                    features[key] = ("float", list(lst))
    return features


def read_records(path):
    """Yields (offset, record length on disk, data) and checks both CRCs of every record."""
    with open(path, "rb") as f:
        blob = f.read()
    pos = 0
    while pos < len(blob):
        header = blob[pos:pos + 12]
        if len(header) < 12:
            raise ValueError(f"record at {pos} is cut short")
        (length,) = struct.unpack("<Q", header[:8])
        (len_crc,) = struct.unpack("<I", header[8:12])
        if masked_crc(header[:8]) != len_crc:
            raise ValueError(f"bad length CRC at {pos}")
        data = blob[pos + 12:pos + 12 + length]
        (data_crc,) = struct.unpack("<I", blob[pos + 12 + length:pos + 16 + length])
        if masked_crc(data) != data_crc:
            raise ValueError(f"bad data CRC at {pos}")
        yield pos, 16 + length, data
        pos += 16 + length
