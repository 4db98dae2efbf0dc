import { test } from "node:test";
import * as assert from "node:assert/strict";
import { paginate, PaginationError } from "../../workspace/src/paginate";
import type { Page, PageSource } from "../../workspace/src/types";
import { assertPaginationError, deferred, drain, flush, ScriptedSource, withTimeout } from "./helpers";

interface Row {
  id: number;
  v: string;
}

// ---- duplicates -----------------------------------------------------------

test("key: skips items whose key was seen on an earlier page", async () => {
  const src = new ScriptedSource<number>({
    "": { items: [1, 2, 3], nextCursor: "b" },
    b: { items: [3, 4, 1], nextCursor: "c" },
    c: { items: [5, 2], nextCursor: null },
  });
  const r = await drain(paginate(src, { key: (n) => n }));
  assert.strictEqual(r.error, undefined);
  assert.deepStrictEqual(r.items, [1, 2, 3, 4, 5]);
});

test("key: the first occurrence of a duplicated key wins", async () => {
  const src = new ScriptedSource<Row>({
    "": { items: [{ id: 1, v: "old-1" }, { id: 2, v: "old-2" }], nextCursor: "b" },
    b: { items: [{ id: 2, v: "new-2" }, { id: 3, v: "new-3" }], nextCursor: null },
  });
  const r = await drain(paginate(src, { key: (row) => row.id }));
  assert.strictEqual(r.error, undefined);
  assert.deepStrictEqual(
    r.items.map((row) => row.v),
    ["old-1", "old-2", "new-3"],
  );
});

test("key: skips duplicates within a single page", async () => {
  const src = new ScriptedSource<Row>({
    "": { items: [{ id: 7, v: "a" }, { id: 7, v: "b" }, { id: 8, v: "c" }, { id: 7, v: "d" }], nextCursor: null },
  });
  const r = await drain(paginate(src, { key: (row) => row.id }));
  assert.deepStrictEqual(
    r.items.map((row) => row.v),
    ["a", "c"],
  );
});

// ---- cursor loops -----------------------------------------------------------

test("cursor loop: a page returning the cursor that fetched it is rejected", async () => {
  const src = new ScriptedSource<string>({
    "": { items: ["p1"], nextCursor: "a" },
    a: { items: ["p2"], nextCursor: "a" },
  });
  const r = await drain(paginate(src));
  assertPaginationError(PaginationError, r.error, "CURSOR_LOOP", 2);
  assert.deepStrictEqual(src.cursors, [null, "a"]);
});

test("cursor loop: a cycle spanning several pages is rejected", async () => {
  const src = new ScriptedSource<string>({
    "": { items: ["p1"], nextCursor: "a" },
    a: { items: ["p2"], nextCursor: "b" },
    b: { items: ["p3"], nextCursor: "c" },
    c: { items: ["p4"], nextCursor: "a" },
  });
  const r = await drain(paginate(src));
  assertPaginationError(PaginationError, r.error, "CURSOR_LOOP", 4);
  assert.deepStrictEqual(r.items, ["p1", "p2", "p3"]);
  assert.deepStrictEqual(src.cursors, [null, "a", "b", "c"]);
});

// ---- malformed pages --------------------------------------------------------

test("malformed: items that are not an array are rejected, naming the page", async () => {
  const src = new ScriptedSource<string>({
    "": { items: ["x"], nextCursor: "b" },
    b: { items: "yz", nextCursor: null },
  });
  const r = await drain(paginate(src));
  assertPaginationError(PaginationError, r.error, "MALFORMED_PAGE", 2);
});

test("malformed: a missing nextCursor is rejected, not taken as the end", async () => {
  const src = new ScriptedSource<number>({
    "": { items: [1], nextCursor: "b" },
    b: { items: [2] },
  });
  const r = await drain(paginate(src));
  assertPaginationError(PaginationError, r.error, "MALFORMED_PAGE", 2);
});

test("malformed: a nextCursor that is neither a string nor null is rejected", async () => {
  const src = new ScriptedSource<number>({
    "": { items: [1], nextCursor: "b" },
    b: { items: [2], nextCursor: "c" },
    c: { items: [3], nextCursor: 4 },
  });
  const r = await drain(paginate(src));
  assertPaginationError(PaginationError, r.error, "MALFORMED_PAGE", 3);
});

test("malformed: an empty-string nextCursor is rejected", async () => {
  const src = new ScriptedSource<number>({
    "": { items: [1], nextCursor: "b" },
    b: { items: [2], nextCursor: "" },
  });
  const r = await drain(paginate(src));
  assertPaginationError(PaginationError, r.error, "MALFORMED_PAGE", 2);
});

test("malformed: a page that is not an object is rejected as page 1", async () => {
  const src = new ScriptedSource<number>({ "": null });
  const r = await drain(paginate(src));
  assertPaginationError(PaginationError, r.error, "MALFORMED_PAGE", 1);
});

test("a page is checked before any of its items is yielded", async () => {
  const src = new ScriptedSource<number>({
    "": { items: [1, 2], nextCursor: "b" },
    b: { items: [3, 4], nextCursor: 99 },
  });
  const r = await drain(paginate(src));
  assert.ok(r.error instanceof PaginationError, `expected a PaginationError, got ${String(r.error)}`);
  assert.deepStrictEqual(r.items, [1, 2]);
});

// ---- cancellation -------------------------------------------------------------

test("abort: the signal is passed to every fetchPage call", async () => {
  const controller = new AbortController();
  const src = new ScriptedSource<number>({
    "": { items: [1], nextCursor: "b" },
    b: { items: [], nextCursor: "c" },
    c: { items: [2], nextCursor: null },
  });
  const r = await drain(paginate(src, { signal: controller.signal }));
  assert.deepStrictEqual(r.items, [1, 2]);
  assert.strictEqual(src.calls.length, 3);
  for (const call of src.calls) assert.strictEqual(call.signal, controller.signal);
});

test("abort: an already-aborted signal rejects with its reason and fetches nothing", async () => {
  const controller = new AbortController();
  const reason = new Error("user left the page");
  controller.abort(reason);
  const src = new ScriptedSource<number>({ "": { items: [1], nextCursor: null } });
  const r = await drain(paginate(src, { signal: controller.signal }));
  assert.strictEqual(r.error, reason);
  assert.deepStrictEqual(r.items, []);
  assert.strictEqual(src.calls.length, 0);
});

test("abort: rejects at once while a fetch is pending, even if the source ignores the signal", async () => {
  const controller = new AbortController();
  const reason = { cancelled: true };
  const pending = deferred<Page<number>>();
  const calls: Array<string | null> = [];
  const src: PageSource<number> = {
    fetchPage(cursor) {
      calls.push(cursor);
      return cursor === null ? Promise.resolve({ items: [1], nextCursor: "b" }) : pending.promise;
    },
  };
  const it = paginate(src, { signal: controller.signal });
  assert.deepStrictEqual(await withTimeout(it.next()), { value: 1, done: false });
  const second = withTimeout(it.next(), 1000);
  await flush();
  assert.deepStrictEqual(calls, [null, "b"]);
  controller.abort(reason);
  await assert.rejects(second, (err: unknown) => err === reason);
});

test("abort: rejects with the signal's reason, not the source's own abort error", async () => {
  const controller = new AbortController();
  const reason = new Error("shutdown");
  const src: PageSource<number> = {
    fetchPage(cursor, signal) {
      if (cursor === null) return Promise.resolve({ items: [1], nextCursor: "b" });
      return new Promise<Page<number>>((_, reject) => {
        signal?.addEventListener("abort", () => reject(new Error("request cancelled by source")), { once: true });
      });
    },
  };
  const it = paginate(src, { signal: controller.signal });
  await withTimeout(it.next());
  const second = withTimeout(it.next(), 1000);
  await flush();
  controller.abort(reason);
  await assert.rejects(second, (err: unknown) => err === reason);
});

test("abort: between next() calls stops the iteration with the reason", async () => {
  const controller = new AbortController();
  const reason = new Error("stop");
  const src = new ScriptedSource<number>({
    "": { items: [1, 2, 3], nextCursor: "b" },
    b: { items: [4], nextCursor: null },
  });
  const it = paginate(src, { signal: controller.signal });
  assert.deepStrictEqual(await withTimeout(it.next()), { value: 1, done: false });
  controller.abort(reason);
  const r = await drain(it);
  assert.strictEqual(r.error, reason);
  assert.deepStrictEqual(r.items, []);
  assert.strictEqual(src.calls.length, 1);
});

test("abort: without a reason the iteration rejects with an AbortError", async () => {
  const controller = new AbortController();
  const src = new ScriptedSource<number>({
    "": { items: [1], nextCursor: "b" },
    b: { items: [2], nextCursor: null },
  });
  const it = paginate(src, { signal: controller.signal });
  await withTimeout(it.next());
  controller.abort();
  const r = await drain(it);
  assert.strictEqual(r.error, controller.signal.reason);
  assert.strictEqual((r.error as Error).name, "AbortError");
});
