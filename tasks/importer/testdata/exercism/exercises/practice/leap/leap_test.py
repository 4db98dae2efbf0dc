# Written for evalctl's importer tests, in the shape of an Exercism test.
import unittest

from leap import (
    leap_year,
)


class LeapTest(unittest.TestCase):
    def test_year_not_divisible_by_4_is_common(self):
        self.assertIs(leap_year(2015), False)

    def test_year_divisible_by_4_not_by_100_is_leap(self):
        self.assertIs(leap_year(1996), True)

    def test_year_divisible_by_100_not_by_400_is_common(self):
        self.assertIs(leap_year(2100), False)

    def test_year_divisible_by_400_is_leap(self):
        self.assertIs(leap_year(2000), True)

    def test_year_divisible_by_2_not_by_4_is_common(self):
        self.assertIs(leap_year(1970), False)
