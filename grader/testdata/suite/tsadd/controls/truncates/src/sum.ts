export function sum(xs: number[]): number {
  let total = 0;
  for (const x of xs) total += Math.trunc(x);
  return total;
}

export function name(): string {
  return "tsadd";
}
