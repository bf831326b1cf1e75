/** Hit counts and the rates the measurements report from them. */
export interface Counter {
  hits: number;
  count: number;
}

export interface Rate {
  rate: number;
  count: number;
}

export const counter = (): Counter => ({ hits: 0, count: 0 });

export function tally(target: Counter, hit: boolean): void {
  target.count += 1;
  if (hit) target.hits += 1;
}

export const rateOf = (counted: Counter): Rate => ({ rate: counted.count === 0 ? 0 : counted.hits / counted.count, count: counted.count });
