import unittest

from meter import MeteredFile
from test_utils import MockFile


class MeterTest(unittest.TestCase):
    def test_counts_bytes(self):
        f = MeteredFile(MockFile(b"hello world"))
        self.assertEqual(f.read(), b"hello world")
        self.assertEqual(f.read_bytes, 11)

    def test_counts_reads(self):
        mock = MockFile(b"abcdef", chunk=2)
        f = MeteredFile(mock)
        while f.read(4):
            pass
        self.assertEqual(f.read_ops, 4)
        self.assertEqual(mock.reads, 4)
        self.assertEqual(f.read_bytes, 6)

    def test_empty_file(self):
        f = MeteredFile(MockFile(b""))
        self.assertEqual(f.read(), b"")
        self.assertEqual((f.read_bytes, f.read_ops), (0, 1))
