/**
 * An incremental JSON recognizer, one character at a time: it says whether the text so far can
 * still become a JSON value (`push` returns false at the first character that cannot), and when
 * the top-level value is complete. Constrained decoding asks it, for every candidate token, whether
 * the token's text keeps the output valid, so it is a small pushdown automaton whose state is
 * cheap to copy (`clone`), not a parser that builds values.
 */

type Mode =
  | 'value' // a value must start (whitespace allowed)
  | 'key-or-end' // just after `{`: a key or `}`
  | 'key' // after `,` in an object: a key
  | 'colon'
  | 'value-or-end' // just after `[`: a value or `]`
  | 'after-value' // `,` or the container's close, or the end at the top level
  | 'string'
  | 'escape'
  | 'unicode'
  | 'number'
  | 'literal'
  | 'done';

type NumberPhase = 'minus' | 'zero' | 'integer' | 'dot' | 'fraction' | 'e' | 'exponent-sign' | 'exponent';

/** JSON's whitespace between tokens. */
export const whitespace: ReadonlySet<string> = new Set([' ', '\t', '\n', '\r']);
const digit = (character: string) => character >= '0' && character <= '9';
const hex = (character: string) => digit(character) || (character >= 'a' && character <= 'f') || (character >= 'A' && character <= 'F');
const numberEnds = new Set<NumberPhase>(['zero', 'integer', 'fraction', 'exponent']);
const maximumNumberPartDigits = 20;
const maximumExponentDigits = 2;

export class JsonPrefix {
  private mode: Mode = 'value';
  /** `{` or `[` of each open container. */
  private stack: string[] = [];
  private stringIsKey = false;
  private unicodeLeft = 0;
  private numberPhase: NumberPhase = 'integer';
  /** Digits of the current number's phase (integer, fraction or exponent part). */
  private phaseDigits = 0;
  private literalLeft = '';

  /** @param objectOnly the top-level value must be an object. */
  constructor(private readonly objectOnly: boolean) {}

  clone(): JsonPrefix {
    const copy = new JsonPrefix(this.objectOnly);
    copy.mode = this.mode;
    copy.stack = [...this.stack];
    copy.stringIsKey = this.stringIsKey;
    copy.unicodeLeft = this.unicodeLeft;
    copy.numberPhase = this.numberPhase;
    copy.phaseDigits = this.phaseDigits;
    copy.literalLeft = this.literalLeft;
    return copy;
  }

  /** The top-level value is complete. */
  get complete(): boolean {
    return this.mode === 'done' || (this.mode === 'number' && this.stack.length === 0 && numberEnds.has(this.numberPhase));
  }

  /** Feeds every character of `text`; false (and the state is then unusable) at the first one that cannot follow. */
  pushText(text: string): boolean {
    for (const character of text) if (!this.push(character)) return false;
    return true;
  }

  push(character: string): boolean {
    switch (this.mode) {
      case 'done':
        return whitespace.has(character);
      case 'string':
        if (character === '"') return this.endValue(this.stringIsKey ? 'colon' : null);
        if (character === '\\') this.mode = 'escape';
        // Control characters must be escaped inside strings.
        return character >= ' ';
      case 'escape':
        if (character === 'u') {
          this.mode = 'unicode';
          this.unicodeLeft = 4;
          return true;
        }
        this.mode = 'string';
        return '"\\/bfnrt'.includes(character);
      case 'unicode':
        if (!hex(character)) return false;
        this.unicodeLeft -= 1;
        if (this.unicodeLeft === 0) this.mode = 'string';
        return true;
      case 'number':
        return this.pushNumber(character);
      case 'literal':
        if (character !== this.literalLeft[0]) return false;
        this.literalLeft = this.literalLeft.slice(1);
        return this.literalLeft === '' ? this.endValue(null) : true;
      case 'colon':
        if (whitespace.has(character)) return true;
        if (character !== ':') return false;
        this.mode = 'value';
        return true;
      case 'key-or-end':
        if (character === '}') return this.close('{');
        return this.startKey(character);
      case 'key':
        return this.startKey(character);
      case 'value-or-end':
        if (character === ']') return this.close('[');
        return this.startValue(character);
      case 'value':
        return this.startValue(character);
      case 'after-value':
        if (whitespace.has(character)) return true;
        if (character === ',' && this.stack.length > 0) {
          this.mode = this.stack.at(-1) === '{' ? 'key' : 'value';
          return true;
        }
        if (character === '}' || character === ']') return this.close(character === '}' ? '{' : '[');
        return false;
    }
  }

  private startKey(character: string): boolean {
    if (whitespace.has(character)) return true;
    if (character !== '"') return false;
    this.mode = 'string';
    this.stringIsKey = true;
    return true;
  }

  private startValue(character: string): boolean {
    if (whitespace.has(character)) return true;
    if (this.objectOnly && this.stack.length === 0 && character !== '{') return false;
    if (character === '{' || character === '[') {
      this.stack.push(character);
      this.mode = character === '{' ? 'key-or-end' : 'value-or-end';
      return true;
    }
    if (character === '"') {
      this.mode = 'string';
      this.stringIsKey = false;
      return true;
    }
    const literal = ['true', 'false', 'null'].find((word) => word[0] === character);
    if (literal !== undefined) {
      this.mode = 'literal';
      this.literalLeft = literal.slice(1);
      return true;
    }
    if (character === '-' || digit(character)) {
      this.mode = 'number';
      this.numberPhase = character === '-' ? 'minus' : character === '0' ? 'zero' : 'integer';
      this.phaseDigits = character === '-' ? 0 : 1;
      return true;
    }
    return false;
  }

  private pushNumber(character: string): boolean {
    const phase = this.numberPhase;
    const next = ((): NumberPhase | null => {
      if (digit(character)) {
        if (phase === 'minus') return character === '0' ? 'zero' : 'integer';
        if (phase === 'zero') return null;
        if (phase === 'dot') return 'fraction';
        if (phase === 'e' || phase === 'exponent-sign') return 'exponent';
        return phase;
      }
      if (character === '.' && (phase === 'zero' || phase === 'integer')) return 'dot';
      if ((character === 'e' || character === 'E') && (phase === 'zero' || phase === 'integer' || phase === 'fraction')) return 'e';
      if ((character === '+' || character === '-') && phase === 'e') return 'exponent-sign';
      return null;
    })();
    if (next !== null) {
      this.phaseDigits = next === phase ? this.phaseDigits + 1 : digit(character) ? 1 : 0;
      // A number must stay finite once parsed: `1e999` or 400 nines parse to Infinity, which JSON
      // writes back as null (a tool call's `input` then loses the value). Bounded parts keep every
      // number below 1e120 and a sampled reply from spending its budget on one number.
      if (this.phaseDigits > (next === 'exponent' ? maximumExponentDigits : maximumNumberPartDigits)) return false;
      this.numberPhase = next;
      return true;
    }
    // The number ends here, and the character belongs to what follows it.
    if (!numberEnds.has(phase) || !this.endValue(null)) return false;
    return this.push(character);
  }

  /** A value (or, with `then`, a key) just ended. */
  private endValue(then: Mode | null): boolean {
    if (then !== null) {
      this.mode = then;
      return true;
    }
    this.mode = this.stack.length === 0 ? 'done' : 'after-value';
    return true;
  }

  private close(opener: string): boolean {
    if (this.stack.at(-1) !== opener) return false;
    this.stack.pop();
    return this.endValue(null);
  }
}
