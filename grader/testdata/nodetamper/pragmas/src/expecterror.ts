/* @ts-expect-error */
export const n: number = "not a number";
