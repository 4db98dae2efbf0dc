// Types of /opt/evalctl/jest.js, the Jest-compatible layer imported tests
// load: tsc finds this file when a test imports "/opt/evalctl/jest".
type TestFn = ((done: DoneFn) => void) | (() => unknown);
interface DoneFn {
  (err?: unknown): void;
  fail(err?: unknown): void;
}
interface TestAPI {
  (name: string, fn: TestFn, timeout?: number): void;
  skip: TestAPI;
  only: TestAPI;
}
interface DescribeAPI {
  (name: string, fn: () => void): void;
  skip: DescribeAPI;
  only: DescribeAPI;
}
interface Matchers<R> {
  toBe(expected: unknown): R;
  toEqual(expected: unknown): R;
  toStrictEqual(expected: unknown): R;
  toBeCloseTo(expected: number, digits?: number): R;
  toContain(expected: unknown): R;
  toContainEqual(expected: unknown): R;
  toHaveLength(n: number): R;
  toBeTruthy(): R;
  toBeFalsy(): R;
  toBeNull(): R;
  toBeUndefined(): R;
  toBeDefined(): R;
  toBeNaN(): R;
  toMatch(expected: RegExp | string): R;
  toBeInstanceOf(expected: unknown): R;
  toBeGreaterThan(expected: number | bigint): R;
  toBeGreaterThanOrEqual(expected: number | bigint): R;
  toBeLessThan(expected: number | bigint): R;
  toBeLessThanOrEqual(expected: number | bigint): R;
  toThrow(expected?: unknown): R;
  toThrowError(expected?: unknown): R;
}
interface Expectation extends Matchers<void> {
  not: Matchers<void>;
  resolves: Matchers<Promise<void>> & { not: Matchers<Promise<void>> };
  rejects: Matchers<Promise<void>> & { not: Matchers<Promise<void>> };
}
interface ExpectAPI {
  (received: unknown): Expectation;
  any(ctor: unknown): any;
  anything(): any;
}
export declare const describe: DescribeAPI;
export declare const xdescribe: DescribeAPI;
export declare const test: TestAPI;
export declare const it: TestAPI;
export declare const xtest: TestAPI;
export declare const xit: TestAPI;
export declare const fit: TestAPI;
export declare const expect: ExpectAPI;
export declare function beforeEach(fn: TestFn, timeout?: number): void;
export declare function afterEach(fn: TestFn, timeout?: number): void;
export declare function beforeAll(fn: TestFn, timeout?: number): void;
export declare function afterAll(fn: TestFn, timeout?: number): void;
