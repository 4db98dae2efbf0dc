// Frozen consumer: uses mapPool exactly as CONTRACT.md publishes it.
// Type-checked (never run) against the candidate's src/pool.ts.
import { mapPool } from "../../workspace/src/pool";

interface User {
  id: number;
  name: string;
}

const ids: readonly number[] = [1, 2, 3];

// items accepts a readonly array; fn gets (item, index); R is inferred.
const users: Promise<User[]> = mapPool(ids, 2, async (id, index) => ({ id, name: `user-${index}` }));

// The result element type follows fn's resolved type.
const lengths: Promise<number[]> = mapPool(["a", "bb"] as const, 1, async (s: string) => s.length);

async function names(): Promise<string[]> {
  const all = await users;
  return all.map((u) => u.name);
}

// @ts-expect-error: the result is number[], not string[]
const wrong: Promise<string[]> = mapPool([1, 2], 2, async (n: number) => n * 2);

// @ts-expect-error: fn receives the item type, number has no toUpperCase
const wrongItem = mapPool([1, 2], 2, async (n) => n.toUpperCase());

// @ts-expect-error: limit is a number
const wrongLimit = mapPool([1, 2], "2", async (n: number) => n);

export { users, lengths, names, wrong, wrongItem, wrongLimit };
