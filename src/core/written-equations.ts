/**
 * The calculations a reply writes down, such as `12 + 5 = 17` or `3 × 4 = 12`, each checked by
 * computing its left side (`calculate-expression.ts`). This is what a judge can check in a
 * worked solution without knowing the problem: it catches a wrong sum or a wrong table fact, not
 * a number copied wrongly from the question (`12 + 6 = 18` is a true equation either way).
 *
 * A calculation is two or more numbers joined by `+ - − * / × ÷ x`, then `=`, then a number;
 * chains such as `12 + 5 = 17, 17 - 3 = 14` are two calculations. A bare `x = 5` is not one, and
 * neither is one that starts after a minus sign: without its sign it would read as a false one.
 */
import { calculateExpression } from './calculate-expression.js';

export interface WrittenEquation {
  /** The calculation as written, e.g. `12 + 5 = 17`. */
  text: string;
  /** The number written after `=`. */
  stated: number;
  /** What the left side computes to. */
  computed: number;
  correct: boolean;
}

const number = String.raw`\d+(?:\.\d+)?`;
const operator = String.raw`[-+*/×÷x]`;
const equationPattern = new RegExp(String.raw`(?<![\d.-])(${number}(?:\s*${operator}\s*${number})+)\s*=\s*(-?${number})`, 'g');
/** Results are compared after rounding, so `10 / 3 = 3.33` counts as written to two places. */
function sameValue(stated: number, computed: number): boolean {
  if (stated === computed) return true;
  const places = (String(stated).split('.')[1] ?? '').length;
  return places > 0 && Math.abs(computed - stated) <= 0.5 * 10 ** -places + 1e-9;
}

export function writtenEquations(text: string): WrittenEquation[] {
  const equations: WrittenEquation[] = [];
  for (const match of text.replaceAll('−', '-').matchAll(equationPattern)) {
    const computed = calculateExpression(match[1] as string);
    if (!computed.ok) continue;
    const stated = Number(match[2]);
    equations.push({ text: match[0], stated, computed: computed.value, correct: sameValue(stated, computed.value) });
  }
  return equations;
}
