import { add, symbolName, depth, kindOf } from "../../workspace/src/describe";

const sum: number = add(1, 2);
const name: string = symbolName(Symbol("x"));
const levels: number = depth([]);
const kind: string = kindOf(sum);
export const all = [sum, name, levels, kind];
