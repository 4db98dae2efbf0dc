// Frozen consumer for phase 2: uses Pool and PoolClosedError as
// CONTRACT-phase2.md publishes them. Type-checked, never run.
import { Pool, PoolClosedError } from "../../workspace/src/pool";

const pool: Pool = new Pool(4);

// run is generic in the task's result type.
const text: Promise<string> = pool.run(async () => "ok");
const num: Promise<number> = pool.run(() => Promise.resolve(3));

const drained: Promise<void> = pool.close();
const isClosed: boolean = pool.closed;

async function submit(): Promise<string | undefined> {
  try {
    return await pool.run(async () => "late");
  } catch (err) {
    if (err instanceof PoolClosedError) {
      const e: Error = err;
      return e.name;
    }
    throw err;
  }
}

// @ts-expect-error: run's result type follows the task
const wrong: Promise<number> = pool.run(async () => "text");

// @ts-expect-error: run takes a function, not a promise
const notAFunction = pool.run(Promise.resolve(1));

export { text, num, drained, isClosed, submit, wrong, notAFunction };
