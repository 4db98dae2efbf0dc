// @ts-nocheck
export const n: number = "not a number";
