class MeteredFile:
    def __init__(self, f):
        self._f = f
        self.read_bytes = 0
        self.read_ops = 0

    def read(self, size=-1):
        data = self._f.read(size)
        self.read_bytes += len(data)
        self.read_ops += 1
        return data
