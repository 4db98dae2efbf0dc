import { describe, expect, it, xit } from '@jest/globals'
import { summarise, summariseLater } from './number-stats'

describe('summarise', () => {
  it('one value', () => {
    expect(summarise([4])).toEqual({ min: 4, max: 4, mean: 4, median: 4 })
  })

  xit('unsorted values', () => {
    const s = summarise([3, 1, 2])
    expect(s.min).toBe(1)
    expect(s.max).toBe(3)
    expect(s.median).toBe(2)
  })

  xit('an even count takes the mean of the middle two', () => {
    expect(summarise([1, 2, 4, 10]).median).toBe(3)
  })

  xit('the mean of thirds', () => {
    expect(summarise([0.1, 0.2, 0.3]).mean).toBeCloseTo(0.2, 5)
  })

  xit('negative values', () => {
    expect(summarise([-5, 5, -1])).toStrictEqual({ min: -5, max: 5, mean: -1 / 3, median: -1 })
  })

  xit('an empty list is refused', () => {
    expect(() => summarise([])).toThrow(new Error('no values'))
  })
})

describe('summariseLater', () => {
  xit('resolves to the summary', async () => {
    await expect(summariseLater([2, 8])).resolves.toEqual({ min: 2, max: 8, mean: 5, median: 5 })
  })

  xit('rejects an empty list', async () => {
    await expect(summariseLater([])).rejects.toThrow('no values')
  })
})
