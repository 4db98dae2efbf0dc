import { test } from "node:test";
import * as assert from "node:assert/strict";
import { Pool, PoolClosedError } from "../src/pool";

test("run returns the task's result", async () => {
  const pool = new Pool(2);
  assert.strictEqual(await pool.run(async () => 42), 42);
});

test("close on an idle pool resolves", async () => {
  const pool = new Pool(1);
  await pool.close();
  assert.strictEqual(pool.closed, true);
});

test("run after close is refused", async () => {
  const pool = new Pool(1);
  await pool.close();
  await assert.rejects(pool.run(async () => 1), PoolClosedError);
});
