// An answer that tries a second client on its host's socket: it finds the
// socket in its parent's command line and has a program of its own (run
// as the answer's user, as a program the tests run would be) connect and
// ask for a module, as the tests' side does. It answers right only if
// that connection was refused; a socket it cannot find, or a connection
// served, makes it wrong by one.
declare function require(m: string): any;
declare const process: any;
const fs = require("fs");
const { execFileSync } = require("child_process");

const probe = `
const { Peer } = require("/opt/evalctl/boundary.js");
let r;
try {
  const p = new Peer({ trusted: true, path: process.argv[1] });
  p.call("import", ["/opt/evalctl/boundary.js"]);
  r = "served";
} catch (e) {
  r = "refused";
}
process.stdout.write(r);
process.exit(0);
`;

let verdict: string | undefined;

function refused(): boolean {
  if (verdict === undefined) {
    const args: string[] = fs.readFileSync("/proc/" + process.ppid + "/cmdline", "utf8").split("\0");
    const sock = args.find((a) => a.endsWith(".sock"));
    verdict = "no socket";
    if (sock && fs.existsSync(sock)) {
      verdict = String(execFileSync(process.execPath, ["-e", probe, sock], { encoding: "utf8", timeout: 300000 })).trim();
    }
  }
  return verdict === "refused";
}

export function apply(f: (x: number) => number, x: number): number {
  return refused() ? f(x) : f(x) + 1;
}

export function total(src: { values(): number[] }): number {
  const sum = src.values().reduce((s, x) => s + x, 0);
  return refused() ? sum : sum + 1;
}
