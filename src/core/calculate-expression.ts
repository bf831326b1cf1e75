/**
 * Arithmetic of untrusted text, parsed here rather than handed to `eval` or `Function`: the
 * `calculate` tool's argument (a model's tool call) and the working a reply writes down
 * (`written-equations.ts`). Grammar (recursive descent, usual precedence):
 *
 *   expression := term (('+' | '-') term)*
 *   term       := factor (('*' | '/' | '%') factor)*
 *   factor     := ('+' | '-') factor | number | '(' expression ')'
 *
 * `×`, `÷` and `x` between numbers are read as `*` and `/`, as models write them. A bad
 * expression, a division by zero or a result that is not finite is returned as an error value,
 * not thrown: the model reads it as the tool's result and can try again.
 */

export type CalculateResult = { ok: true; value: number } | { ok: false; error: string };

/** Longer input is refused before parsing, so a pathological call costs nothing. */
export const maximumExpressionLength = 200;
const maximumDepth = 32;

class ParseFailure extends Error {}

export function calculateExpression(input: string): CalculateResult {
  if (input.length > maximumExpressionLength) return { ok: false, error: `expression longer than ${maximumExpressionLength} characters` };
  const text = input.replaceAll('×', '*').replaceAll('÷', '/').replace(/(?<=[\d)\s])x(?=[\s\d(])/g, '*').replaceAll(',', '');
  let position = 0;
  let depth = 0;

  const skip = () => {
    while (position < text.length && /\s/.test(text[position] as string)) position += 1;
  };
  const peek = () => {
    skip();
    return text[position];
  };

  function number(): number {
    skip();
    const match = /^\d+(?:\.\d+)?|^\.\d+/.exec(text.slice(position));
    if (match === null) throw new ParseFailure(position >= text.length ? 'unexpected end of expression' : `unexpected '${text[position]}' at ${position + 1}`);
    position += match[0].length;
    return Number(match[0]);
  }

  function factor(): number {
    const next = peek();
    if (next === '+' || next === '-') {
      position += 1;
      depth += 1;
      if (depth > maximumDepth) throw new ParseFailure('expression nested too deeply');
      const value = factor();
      depth -= 1;
      return next === '-' ? -value : value;
    }
    if (next === '(') {
      position += 1;
      depth += 1;
      if (depth > maximumDepth) throw new ParseFailure('expression nested too deeply');
      const value = expression();
      depth -= 1;
      if (peek() !== ')') throw new ParseFailure(`missing ')' at ${position + 1}`);
      position += 1;
      return value;
    }
    return number();
  }

  function term(): number {
    let value = factor();
    for (let next = peek(); next === '*' || next === '/' || next === '%'; next = peek()) {
      position += 1;
      const right = factor();
      if ((next === '/' || next === '%') && right === 0) throw new ParseFailure('division by zero');
      value = next === '*' ? value * right : next === '/' ? value / right : value % right;
    }
    return value;
  }

  function expression(): number {
    let value = term();
    for (let next = peek(); next === '+' || next === '-'; next = peek()) {
      position += 1;
      const right = term();
      value = next === '+' ? value + right : value - right;
    }
    return value;
  }

  try {
    const value = expression();
    if (peek() !== undefined) return { ok: false, error: `unexpected '${text[position]}' at ${position + 1}` };
    if (!Number.isFinite(value)) return { ok: false, error: 'the result is not a finite number' };
    // Binary floating point: 0.1 + 0.2 should read 0.3.
    return { ok: true, value: Number(value.toPrecision(12)) };
  } catch (error) {
    if (error instanceof ParseFailure) return { ok: false, error: error.message };
    throw error;
  }
}
