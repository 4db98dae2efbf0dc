import { test } from "node:test";
import * as assert from "node:assert/strict";
import { paginate } from "../../workspace/src/paginate";
import { collectAll, JsonPageSource } from "../../workspace/src/client";
import { drain, ScriptedSource, withTimeout } from "../acceptance/helpers";

test("follows cursors in order until nextCursor is null", async () => {
  const src = new ScriptedSource<string>({
    "": { items: ["a", "b"], nextCursor: "p2" },
    p2: { items: ["c"], nextCursor: "p3" },
    p3: { items: ["d"], nextCursor: null },
  });
  const r = await drain(paginate(src));
  assert.strictEqual(r.error, undefined);
  assert.deepStrictEqual(r.items, ["a", "b", "c", "d"]);
  assert.deepStrictEqual(src.cursors, [null, "p2", "p3"]);
});

test("yields duplicates when no key is given", async () => {
  const src = new ScriptedSource<number>({
    "": { items: [1, 1, 2], nextCursor: "b" },
    b: { items: [2, 1], nextCursor: null },
  });
  const r = await drain(paginate(src));
  assert.deepStrictEqual(r.items, [1, 1, 2, 2, 1]);
});

test("continues past an empty page that has a cursor", async () => {
  const src = new ScriptedSource<number>({
    "": { items: [1], nextCursor: "b" },
    b: { items: [], nextCursor: "c" },
    c: { items: [2], nextCursor: null },
  });
  const r = await drain(paginate(src));
  assert.deepStrictEqual(r.items, [1, 2]);
  assert.deepStrictEqual(src.cursors, [null, "b", "c"]);
});

test("fetches the next page only when the consumer asks for more", async () => {
  const src = new ScriptedSource<number>({
    "": { items: [1, 2], nextCursor: "b" },
    b: { items: [3], nextCursor: null },
  });
  const it = paginate(src);
  assert.strictEqual(src.calls.length, 0);
  await withTimeout(it.next());
  await withTimeout(it.next());
  assert.strictEqual(src.calls.length, 1);
  assert.deepStrictEqual(await withTimeout(it.next()), { value: 3, done: false });
  assert.strictEqual(src.calls.length, 2);
});

test("stops fetching when the consumer breaks out early", async () => {
  const src = new ScriptedSource<number>({
    "": { items: [1, 2], nextCursor: "b" },
    b: { items: [3], nextCursor: null },
  });
  const seen: number[] = [];
  for await (const n of paginate(src)) {
    seen.push(n);
    if (n === 2) break;
  }
  assert.deepStrictEqual(seen, [1, 2]);
  assert.strictEqual(src.calls.length, 1);
});

test("a fetchPage failure propagates unchanged", async () => {
  const failure = new Error("HTTP 503");
  const src = {
    calls: 0,
    fetchPage(cursor: string | null) {
      this.calls++;
      return cursor === null
        ? Promise.resolve({ items: [1], nextCursor: "b" })
        : Promise.reject(failure);
    },
  };
  const r = await drain(paginate(src));
  assert.deepStrictEqual(r.items, [1]);
  assert.strictEqual(r.error, failure);
});

test("collectAll gathers the items of every page", async () => {
  const src = new ScriptedSource<string>({
    "": { items: ["x"], nextCursor: "n" },
    n: { items: ["y", "z"], nextCursor: null },
  });
  assert.deepStrictEqual(await withTimeout(collectAll(src)), ["x", "y", "z"]);
});

test("JsonPageSource URL-encodes the cursor and maps the body to a page", async () => {
  const urls: string[] = [];
  const api = new JsonPageSource<number>(async (url) => {
    urls.push(url);
    return { data: [10, 20], next_cursor: "next/=&?" };
  }, "https://api.example.com/items");
  assert.deepStrictEqual(await api.fetchPage(null), { items: [10, 20], nextCursor: "next/=&?" });
  await api.fetchPage("a b/c&d");
  assert.deepStrictEqual(urls, ["https://api.example.com/items", "https://api.example.com/items?cursor=a%20b%2Fc%26d"]);
});

test("JsonPageSource hands the signal to fetchJson", async () => {
  const controller = new AbortController();
  const signals: Array<AbortSignal | undefined> = [];
  const api = new JsonPageSource<number>(async (_url, signal) => {
    signals.push(signal);
    return { data: [], next_cursor: null };
  }, "https://api.example.com/items");
  await api.fetchPage(null, controller.signal);
  assert.strictEqual(signals[0], controller.signal);
});
