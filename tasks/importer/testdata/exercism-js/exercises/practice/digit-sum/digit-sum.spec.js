import { digitSum, digitRoot } from './digit-sum';

describe('digitSum', () => {
  test('zero', () => {
    expect(digitSum(0)).toBe(0);
  });

  xtest('one digit', () => {
    expect(digitSum(7)).toBe(7);
  });

  xtest('several digits', () => {
    expect(digitSum(1203)).toBe(6);
    expect(digitSum(99)).not.toBe(9);
  });

  xtest('a list of numbers', () => {
    expect([10, 11, 19].map(digitSum)).toEqual([1, 2, 10]);
  });

  xtest('negative numbers are refused', () => {
    expect(() => digitSum(-1)).toThrow(RangeError);
    expect(() => digitSum(-1)).toThrow('n must be a non-negative integer');
  });

  xtest('fractions are refused', () => {
    expect(() => digitSum(1.5)).toThrow(/non-negative integer/);
  });
});

describe('digitRoot', () => {
  xtest('one digit is its own root', () => {
    expect(digitRoot(5)).toBe(5);
  });

  xtest('repeats until one digit is left', () => {
    expect(digitRoot(999)).toBe(9);
    expect(digitRoot(10)).toBe(1);
  });

  xtest('is always less than ten', () => {
    expect(digitRoot(987654321)).toBeLessThan(10);
  });
});
