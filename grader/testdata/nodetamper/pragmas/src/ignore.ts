// @ts-ignore
export const n: number = "not a number";
