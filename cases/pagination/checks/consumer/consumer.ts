// Frozen consumer: uses the pagination API exactly as CONTRACT.md publishes
// it. Type-checked (never run) against the candidate's sources.
import { paginate, PaginationError } from "../../workspace/src/paginate";
import type { Page, PageSource, PaginateOptions } from "../../workspace/src/types";
import { collectAll, JsonPageSource } from "../../workspace/src/client";

interface User {
  id: string;
  name: string;
}

class UserSource implements PageSource<User> {
  async fetchPage(cursor: string | null, signal?: AbortSignal): Promise<Page<User>> {
    if (signal?.aborted) throw signal.reason;
    return cursor === null ? { items: [{ id: "u1", name: "Ada" }], nextCursor: "2" } : { items: [], nextCursor: null };
  }
}

const controller = new AbortController();
const options: PaginateOptions<User> = { signal: controller.signal, key: (u) => u.id };

// paginate returns an AsyncGenerator of the source's item type.
const users: AsyncGenerator<User, void, undefined> = paginate(new UserSource(), options);
const plain: AsyncGenerator<User, void, undefined> = paginate(new UserSource());

async function names(): Promise<string[]> {
  const out: string[] = [];
  for await (const u of paginate(new UserSource(), { key: (u) => u.id, signal: controller.signal })) {
    out.push(u.name);
  }
  return out;
}

// A plain object literal is a source too; T is inferred from it.
const numbers: AsyncGenerator<number, void, undefined> = paginate({
  fetchPage: async (cursor: string | null) => ({ items: [1, 2], nextCursor: cursor === null ? "b" : null }),
});

function explain(err: unknown): string {
  if (err instanceof PaginationError) {
    const page: number = err.page;
    const code: "MALFORMED_PAGE" | "CURSOR_LOOP" = err.code;
    const asError: Error = err;
    return `${asError.name} ${code} on page ${page}: ${err.message}`;
  }
  return "not a pagination error";
}

const all: Promise<User[]> = collectAll(new UserSource(), { signal: controller.signal });
const allPlain: Promise<User[]> = collectAll(new UserSource());
const api: PageSource<User> = new JsonPageSource<User>(async (url: string, signal?: AbortSignal) => {
  if (signal?.aborted) throw signal.reason;
  return { url };
}, "https://api.example.com/users");

// @ts-expect-error: key receives the item type (User has no "email")
const badKey = paginate(new UserSource(), { key: (u) => u.email });

// @ts-expect-error: the item type follows the source
const badItems: AsyncGenerator<number, void, undefined> = paginate(new UserSource());

export { users, plain, names, numbers, explain, all, allPlain, api, badKey, badItems };
