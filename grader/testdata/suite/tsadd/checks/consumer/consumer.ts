import { sum, name } from "../../workspace/src/sum";

const total: number = sum([1, 2]);
const label: string = name();
export const both = `${label}:${total}`;
