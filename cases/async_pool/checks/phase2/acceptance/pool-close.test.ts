import { test } from "node:test";
import * as assert from "node:assert/strict";
import { Pool, PoolClosedError } from "../../../workspace/src/pool";
import { Controlled, flush, watch, withTimeout } from "../../acceptance/helpers";

/** Submits n controlled tasks (task i calls c.fn(i, i)) and watches their run() promises. */
function submit<R>(pool: Pool, c: Controlled<R>, from: number, to: number) {
  const runs = [];
  for (let i = from; i < to; i++) runs.push(watch(pool.run(() => c.fn(i, i))));
  return runs;
}

test("run resolves with the task's value", async () => {
  const pool = new Pool(2);
  const c = new Controlled<string>();
  const [w] = submit(pool, c, 0, 1);
  await flush();
  c.resolve(0, "done");
  await flush();
  assert.strictEqual(w.state, "fulfilled");
  assert.strictEqual(w.value, "done");
});

test("runs at most limit tasks at once", async () => {
  const pool = new Pool(2);
  const c = new Controlled<number>();
  submit(pool, c, 0, 5);
  await flush();
  assert.deepStrictEqual(c.started, [0, 1]);
  for (const i of [1, 0, 2, 3, 4]) {
    c.resolve(i, i);
    await flush();
    assert.ok(c.active <= 2, `${c.active} tasks running`);
  }
  assert.strictEqual(c.maxActive, 2);
  assert.deepStrictEqual(c.started, [0, 1, 2, 3, 4]);
});

test("starts queued tasks in FIFO order as slots free up", async () => {
  const pool = new Pool(1);
  const c = new Controlled<number>();
  submit(pool, c, 0, 4);
  await flush();
  assert.deepStrictEqual(c.started, [0]);
  c.resolve(0, 0);
  await flush();
  assert.deepStrictEqual(c.started, [0, 1]);
  c.resolve(1, 1);
  await flush();
  c.resolve(2, 2);
  await flush();
  assert.deepStrictEqual(c.started, [0, 1, 2, 3]);
});

test("run rejects with the task's original rejection object", async () => {
  const pool = new Pool(2);
  const c = new Controlled<number>();
  const reason = { code: "E_TIMEOUT" };
  const [w] = submit(pool, c, 0, 1);
  await flush();
  c.reject(0, reason);
  await flush();
  assert.strictEqual(w.state, "rejected");
  assert.strictEqual(w.reason, reason);
});

test("a failed task does not stop queued tasks", async () => {
  const pool = new Pool(1);
  const c = new Controlled<number>();
  const [first, second] = submit(pool, c, 0, 2);
  await flush();
  c.reject(0, new Error("first failed"));
  await flush();
  assert.strictEqual(first.state, "rejected");
  assert.deepStrictEqual(c.started, [0, 1]);
  c.resolve(1, 7);
  await flush();
  assert.strictEqual(second.state, "fulfilled");
  assert.strictEqual(second.value, 7);
  assert.strictEqual(await withTimeout(pool.run(async () => 8)), 8);
});

test("run turns a synchronous throw into a rejection", async () => {
  const pool = new Pool(1);
  const boom = new Error("sync boom");
  let pending: Promise<number> | undefined;
  assert.doesNotThrow(() => {
    pending = pool.run((): Promise<number> => {
      throw boom;
    });
  });
  const w = watch(pending as Promise<number>);
  await flush();
  assert.strictEqual(w.state, "rejected");
  assert.strictEqual(w.reason, boom);
  // The slot was released: the next task still runs.
  assert.strictEqual(await withTimeout(pool.run(async () => "next")), "next");
});

test("run after close rejects with PoolClosedError and never calls the task", async () => {
  const pool = new Pool(1);
  const c = new Controlled<number>();
  submit(pool, c, 0, 1);
  await flush();
  const closing = watch(pool.close());
  let called = false;
  let refused: Promise<number> | undefined;
  assert.doesNotThrow(() => {
    refused = pool.run(async () => {
      called = true;
      return 1;
    });
  });
  const w = watch(refused as Promise<number>);
  await flush();
  assert.strictEqual(w.state, "rejected");
  assert.ok(w.reason instanceof PoolClosedError, `expected PoolClosedError, got ${String(w.reason)}`);
  c.resolve(0, 0);
  await flush();
  assert.strictEqual(called, false);
  assert.strictEqual(closing.state, "fulfilled");
});

test("PoolClosedError is an Error named PoolClosedError", async () => {
  const pool = new Pool(3);
  await withTimeout(pool.close());
  const err = await pool.run(async () => 1).then(
    () => undefined,
    (e: unknown) => e,
  );
  assert.ok(err instanceof PoolClosedError);
  assert.ok(err instanceof Error);
  assert.strictEqual((err as Error).name, "PoolClosedError");
});

test("closed is false before close and true right after", () => {
  const pool = new Pool(1);
  assert.strictEqual(pool.closed, false);
  const closing = pool.close();
  assert.strictEqual(pool.closed, true);
  closing.catch(() => undefined);
});

test("close waits for running tasks to settle", async () => {
  const pool = new Pool(2);
  const c = new Controlled<number>();
  submit(pool, c, 0, 2);
  await flush();
  const closing = watch(pool.close());
  await flush();
  assert.strictEqual(closing.state, "pending");
  c.resolve(0, 0);
  await flush();
  assert.strictEqual(closing.state, "pending", "close resolved while a task was still running");
  c.resolve(1, 1);
  await flush();
  assert.strictEqual(closing.state, "fulfilled");
});

test("close lets queued tasks run and waits for them", async () => {
  const pool = new Pool(1);
  const c = new Controlled<number>();
  const runs = submit(pool, c, 0, 3);
  await flush();
  const closing = watch(pool.close());
  c.resolve(0, 0);
  await flush();
  assert.deepStrictEqual(c.started, [0, 1], "a queued task did not start after close()");
  assert.strictEqual(closing.state, "pending");
  c.resolve(1, 1);
  await flush();
  c.resolve(2, 2);
  await flush();
  assert.deepStrictEqual(
    runs.map((r) => r.value),
    [0, 1, 2],
  );
  assert.strictEqual(closing.state, "fulfilled");
});

test("close resolves even when a task rejects", async () => {
  const pool = new Pool(2);
  const c = new Controlled<number>();
  submit(pool, c, 0, 2);
  await flush();
  const closing = watch(pool.close());
  c.reject(0, new Error("task failed"));
  c.resolve(1, 1);
  await flush();
  await flush();
  assert.strictEqual(closing.state, "fulfilled", `close() ended as ${closing.state}: ${String(closing.reason)}`);
});

test("close on an idle pool resolves with undefined", async () => {
  const pool = new Pool(2);
  assert.strictEqual(await withTimeout(pool.run(async () => 1)), 1);
  const closing = watch(pool.close());
  await flush();
  assert.strictEqual(closing.state, "fulfilled");
  assert.strictEqual(closing.value, undefined);
});

test("close can be called twice and both promises resolve after the drain", async () => {
  const pool = new Pool(1);
  const c = new Controlled<number>();
  submit(pool, c, 0, 1);
  await flush();
  const first = watch(pool.close());
  let second: Promise<void> | undefined;
  assert.doesNotThrow(() => {
    second = pool.close();
  });
  const w2 = watch(second as Promise<void>);
  await flush();
  assert.strictEqual(first.state, "pending");
  assert.strictEqual(w2.state, "pending");
  c.resolve(0, 0);
  await flush();
  assert.strictEqual(first.state, "fulfilled");
  assert.strictEqual(w2.state, "fulfilled");
});

test("constructor throws a RangeError for an invalid limit", () => {
  for (const limit of [0, -2, 2.5, NaN, Infinity]) {
    assert.throws(() => new Pool(limit), RangeError, `new Pool(${limit}) did not throw a RangeError`);
  }
});
