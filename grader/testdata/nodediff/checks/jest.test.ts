// The same corpus through the image's Jest layer, as imported Exercism
// tests run.
import { describe, test, expect } from "/opt/evalctl/jest";
import * as h from "../workspace/src/honest";

describe("jest layer", () => {
  const failed = new Error("Failed callback");
  const fast = h.promisify<string>((x, cb) => setTimeout(() => cb(null, String(x)), 0));
  const bad = h.promisify<string>((_x, cb) => setTimeout(() => cb(failed), 2));

  test("resolves in order", () => expect(h.all([fast("a"), fast("b")])).resolves.toEqual(["a", "b"]));
  test("rejects with the array of errors", () => expect(h.any([bad(1), bad(2)])).rejects.toEqual([failed, failed]));
  test("the error is the test's own", () => expect(h.all([fast("a"), bad(1)])).rejects.toBe(failed));
  test("an exception with attributes", () => {
    const acct = new h.Account("b");
    expect(() => acct.withdraw(1)).toThrow(h.BalanceError);
    expect(() => acct.withdraw(1)).toThrow("needs 1 more");
  });
  test("toEqual on a ledger", () => {
    const ledger = new h.Ledger({ users: [{ name: "A", balance: 0, owes: {} }, { name: "B", balance: 0, owes: {} }] });
    expect(ledger.iou("A", "B", 3)).toEqual({ users: [{ name: "A", balance: 3, owes: {} }, { name: "B", balance: -3, owes: { A: 3 } }] });
  });
  test("methods of the value under test", () => {
    expect(h.counts(["x"]).get("x")!.toString()).toBe("1");
    expect(h.take(h.fib(), 3)).toStrictEqual([0, 1, 1]);
  });
  test("an honest bug", () => expect(h.lengthOf([])).toBe(0));
});
