//
// This is only a SKELETON file for the 'Digit Sum' exercise.
//

export const digitSum = (n) => {
  throw new Error('Remove this statement and implement this function');
};

export const digitRoot = (n) => {
  throw new Error('Remove this statement and implement this function');
};
