const check = (n) => {
  if (!Number.isInteger(n) || n < 0) {
    throw new RangeError('n must be a non-negative integer');
  }
};

export const digitSum = (n) => {
  check(n);
  let sum = 0;
  while (n > 0) {
    sum += n % 10;
    n = Math.floor(n / 10);
  }
  return sum;
};

export const digitRoot = (n) => {
  check(n);
  while (n >= 10) {
    n = digitSum(n);
  }
  return n;
};
