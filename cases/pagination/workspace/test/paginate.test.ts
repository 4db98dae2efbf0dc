import { test } from "node:test";
import * as assert from "node:assert/strict";
import { paginate } from "../src/paginate";
import { collectAll, JsonPageSource } from "../src/client";
import type { Page, PageSource } from "../src/types";

function source<T>(pages: Record<string, Page<T>>): PageSource<T> {
  return {
    async fetchPage(cursor) {
      return pages[cursor ?? "first"];
    },
  };
}

const twoPages = source({
  first: { items: [1, 2], nextCursor: "p2" },
  p2: { items: [3], nextCursor: null },
});

test("iterates over the items of every page in order", async () => {
  const seen: number[] = [];
  for await (const n of paginate(twoPages)) seen.push(n);
  assert.deepStrictEqual(seen, [1, 2, 3]);
});

test("collectAll returns every item", async () => {
  assert.deepStrictEqual(await collectAll(twoPages), [1, 2, 3]);
});

test("JsonPageSource requests the base URL, then the cursor URL", async () => {
  const urls: string[] = [];
  const api = new JsonPageSource<string>(async (url) => {
    urls.push(url);
    return url.includes("cursor=") ? { data: ["b"], next_cursor: null } : { data: ["a"], next_cursor: "c1" };
  }, "https://api.example.com/v1/widgets");
  assert.deepStrictEqual(await collectAll(api), ["a", "b"]);
  assert.deepStrictEqual(urls, ["https://api.example.com/v1/widgets", "https://api.example.com/v1/widgets?cursor=c1"]);
});
