class MeteredFile:
    def __init__(self, f):
        pass

    def read(self, size=-1):
        pass
