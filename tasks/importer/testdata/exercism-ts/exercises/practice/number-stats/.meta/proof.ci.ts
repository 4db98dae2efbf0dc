export interface Summary {
  min: number
  max: number
  mean: number
  median: number
}

export function summarise(values: number[]): Summary {
  if (values.length === 0) {
    throw new Error('no values')
  }
  const sorted = [...values].sort((a, b) => a - b)
  const mid = Math.floor(sorted.length / 2)
  let total = 0
  for (const v of sorted) {
    total += v
  }
  const median = sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2
  return { min: sorted[0], max: sorted[sorted.length - 1], mean: total / sorted.length, median }
}

export async function summariseLater(values: number[]): Promise<Summary> {
  return summarise(values)
}
