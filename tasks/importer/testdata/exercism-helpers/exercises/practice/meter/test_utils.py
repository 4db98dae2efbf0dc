import io


class MockFile(io.BytesIO):
    """A file that records how often it is read, and returns at most chunk
    bytes a read."""

    def __init__(self, data, chunk=None):
        super().__init__(data)
        self.reads = 0
        self.chunk = chunk

    def read(self, size=-1):
        self.reads += 1
        if self.chunk is not None and (size is None or size < 0 or size > self.chunk):
            size = self.chunk
        return super().read(size)
