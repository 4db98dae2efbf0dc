// Minimal ambient declarations for the parts of Node.js 18 that this project
// uses. The sandbox has no @types/node, so these stand in for it.
// Project configuration: do not edit.

interface NodeTimer {
  ref(): this;
  unref(): this;
  hasRef(): boolean;
}
declare function setTimeout(callback: (...args: any[]) => void, ms?: number, ...args: any[]): NodeTimer;
declare function clearTimeout(timer: NodeTimer | undefined): void;
declare function setImmediate(callback: (...args: any[]) => void, ...args: any[]): unknown;
declare function queueMicrotask(callback: () => void): void;

declare var console: {
  log(...data: unknown[]): void;
  warn(...data: unknown[]): void;
  error(...data: unknown[]): void;
};

declare class DOMException extends Error {
  constructor(message?: string, name?: string);
  readonly code: number;
}

interface AbortListenerOptions {
  once?: boolean;
}
declare class AbortSignal {
  private constructor();
  /** True once the controller has aborted. */
  readonly aborted: boolean;
  /** The value given to abort(); a DOMException named "AbortError" when none was given. */
  readonly reason: any;
  onabort: ((event: unknown) => void) | null;
  /** Throws `reason` if the signal has been aborted. */
  throwIfAborted(): void;
  addEventListener(type: "abort", listener: (event: unknown) => void, options?: AbortListenerOptions): void;
  removeEventListener(type: "abort", listener: (event: unknown) => void): void;
  static abort(reason?: any): AbortSignal;
  static timeout(ms: number): AbortSignal;
}
declare class AbortController {
  constructor();
  readonly signal: AbortSignal;
  abort(reason?: any): void;
}

declare module "node:test" {
  interface TestContext {
    readonly name: string;
    diagnostic(message: string): void;
  }
  interface TestOptions {
    timeout?: number;
    skip?: boolean | string;
    todo?: boolean | string;
    only?: boolean;
  }
  type TestFn = (t: TestContext) => void | Promise<void>;
  function test(name: string, fn: TestFn): Promise<void>;
  function test(name: string, options: TestOptions, fn: TestFn): Promise<void>;
  export { test, TestContext, TestOptions, TestFn };
}

declare module "node:assert/strict" {
  /** A class, a RegExp, a validation function or an object whose properties must match. */
  type ErrorCheck = RegExp | (new (...args: any[]) => unknown) | ((error: any) => boolean) | object;
  function ok(value: unknown, message?: string): void;
  function equal(actual: unknown, expected: unknown, message?: string): void;
  function notEqual(actual: unknown, expected: unknown, message?: string): void;
  function strictEqual(actual: unknown, expected: unknown, message?: string): void;
  function notStrictEqual(actual: unknown, expected: unknown, message?: string): void;
  function deepEqual(actual: unknown, expected: unknown, message?: string): void;
  function deepStrictEqual(actual: unknown, expected: unknown, message?: string): void;
  function notDeepStrictEqual(actual: unknown, expected: unknown, message?: string): void;
  function match(value: string, pattern: RegExp, message?: string): void;
  function throws(block: () => unknown, error?: ErrorCheck, message?: string): void;
  function doesNotThrow(block: () => unknown, message?: string): void;
  function rejects(block: Promise<unknown> | (() => Promise<unknown>), error?: ErrorCheck, message?: string): Promise<void>;
  function doesNotReject(block: Promise<unknown> | (() => Promise<unknown>), message?: string): Promise<void>;
  function fail(message?: string): never;
  export {
    ErrorCheck, ok, equal, notEqual, strictEqual, notStrictEqual, deepEqual, deepStrictEqual,
    notDeepStrictEqual, match, throws, doesNotThrow, rejects, doesNotReject, fail,
  };
}
